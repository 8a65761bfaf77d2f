/* AVX-512 (F/BW/VL/DQ + FMA) microkernels for the driver's fp32 schedule: fp32, bf16 and fp16
 * weights (Skylake-SP and later; the bf16 path needs no AVX512-BF16: weights are widened by a
 * zero-extend and a shift, fp16 by VCVTPH2PS).
 *  - f32_gemm__avx512_14x32: 14 rows x 32 columns, 28 zmm accumulators, x broadcast from the
 *    k-major row panel; each call pulls its slice of the next weight chunk into L2.
 *  - gemv (decode, T <= 14): whole panels as a weight stream with a software prefetch ahead;
 *    one row keeps four accumulators (summed in a fixed order) to hide the FMA latency, and
 *    reads each panel in the order the CPU's tuning says (ffn__decode_split): in memory order
 *    (default: on Zen 4, T = 1 d = 4096 f = 11008, one process alternating, it read
 *    10-35% more per second than four streams, fp32, bf16 and fp16, one and two threads) or as
 *    four concurrent streams over the quarters of K (intel: on an SPR-class VM,
 *    the same harness, 4-14% faster than memory order).
 * Distances and tile from an SPR-class VM (one and two threads, d=2048 f=5632 and d=4096
 * f=11008 SwiGLU, weights flushed between calls): the L2 prefetch 8 KiB ahead cut T=4..12 by
 * 7-30% against relying on the hardware prefetcher; streaming above T=14 measured no faster
 * than the cache-blocked GEMM. */
#include "../driver/ukr_rows.h"
#include "avx512_common.h"

enum { MR = 14, NR = 32, PF_STREAM = 8192, PF_ROW1 = 4096 };

/* The two 16-column halves of row k of a KN panel (fp32, bf16 or fp16 bits), as fp32. */
FFN_AI void load_row(const int wdt, const void *B, size_t k, __m512 *b0, __m512 *b1)
{
    if (wdt == FFN_UKR_F32) {
        const float *b = (const float *)B + k * NR;
        *b0 = _mm512_loadu_ps(b);
        *b1 = _mm512_loadu_ps(b + 16);
        return;
    }
    const __m512i v = _mm512_loadu_si512((const uint16_t *)B + k * NR);
    const __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);
    if (wdt == FFN_UKR_BF16) {
        *b0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(lo), 16));
        *b1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16));
    } else {
        *b0 = _mm512_cvtph_ps(lo);
        *b1 = _mm512_cvtph_ps(hi);
    }
}

/* C[m][32] (+)= A[m][kc] * B[kc][32]. stream: B is a weight stream (decode), prefetched
 * PF_STREAM bytes ahead into L2; otherwise pf (this row panel's slice of the next chunk) is
 * pulled into L2, 128 bytes a k step. */
FFN_AI void body(const int wdt, const int m, size_t kc, const float *A, size_t as, const void *B,
                 float *C, size_t ldc, bool acc, const char *pf, size_t pf_bytes, bool stream)
{
    const size_t rowb = wdt == FFN_UKR_F32 ? NR * 4 : NR * 2;
    __m512 c0[MR], c1[MR];
    for (int r = 0; r < m; r++) {
        if (acc) {
            c0[r] = _mm512_loadu_ps(C + (size_t)r * ldc);
            c1[r] = _mm512_loadu_ps(C + (size_t)r * ldc + 16);
        } else {
            c0[r] = c1[r] = _mm512_setzero_ps();
        }
    }
    const char *bs = (const char *)B;
    for (size_t k = 0; k < kc; k++) {
        if (pf && k * 128 < pf_bytes) {
            _mm_prefetch(pf + k * 128, _MM_HINT_T1);
            _mm_prefetch(pf + k * 128 + 64, _MM_HINT_T1);
        }
        if (stream) {
            _mm_prefetch(bs + k * rowb + PF_STREAM, _MM_HINT_T1);
            if (rowb > 64) _mm_prefetch(bs + k * rowb + PF_STREAM + 64, _MM_HINT_T1);
        }
        __m512 b0, b1;
        load_row(wdt, B, k, &b0, &b1);
        for (int r = 0; r < m; r++) {
            const __m512 a = _mm512_set1_ps(A[k * as + (size_t)r]);
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(C + (size_t)r * ldc, c0[r]);
        _mm512_storeu_ps(C + (size_t)r * ldc + 16, c1[r]);
    }
}

/* One row over a whole panel: four accumulators, in memory order or as four streams. */
FFN_AI void row1(const int wdt, size_t kc, const float *A, size_t as, const void *B, float *C)
{
    const size_t rowb = wdt == FFN_UKR_F32 ? NR * 4 : NR * 2;
    __m512 a0[4], a1[4];
    for (int i = 0; i < 4; i++)
        a0[i] = a1[i] = _mm512_setzero_ps();
    const char *bs = (const char *)B;
    const size_t q = kc / 4, k4 = 4 * q;
    const ffn__row1_order o = ffn__row1_order_of(q); /* memory order or four streams */
    for (size_t p = 0; p < q; p++)
        for (int i = 0; i < 4; i++) {
            const size_t kk = (size_t)i * o.lane + p * o.step;
            _mm_prefetch(bs + kk * rowb + PF_ROW1, _MM_HINT_T0);
            if (rowb > 64) _mm_prefetch(bs + kk * rowb + PF_ROW1 + 64, _MM_HINT_T0);
            __m512 b0, b1;
            load_row(wdt, B, kk, &b0, &b1);
            const __m512 a = _mm512_set1_ps(A[kk * as]);
            a0[i] = _mm512_fmadd_ps(a, b0, a0[i]);
            a1[i] = _mm512_fmadd_ps(a, b1, a1[i]);
        }
    for (size_t k = k4; k < kc; k++) {
        __m512 b0, b1;
        load_row(wdt, B, k, &b0, &b1);
        const __m512 a = _mm512_set1_ps(A[k * as]);
        a0[0] = _mm512_fmadd_ps(a, b0, a0[0]);
        a1[0] = _mm512_fmadd_ps(a, b1, a1[0]);
    }
    _mm512_storeu_ps(C, _mm512_add_ps(_mm512_add_ps(a0[0], a0[1]), _mm512_add_ps(a0[2], a0[3])));
    _mm512_storeu_ps(C + 16,
                     _mm512_add_ps(_mm512_add_ps(a1[0], a1[1]), _mm512_add_ps(a1[2], a1[3])));
}

#define BODY_CASES(wdt, stream)                                                                    \
    switch (m) {                                                                                   \
    case 14:                                                                                       \
        body(wdt, 14, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                 \
        break;                                                                                     \
    case 13:                                                                                       \
        body(wdt, 13, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                 \
        break;                                                                                     \
    case 12:                                                                                       \
        body(wdt, 12, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                 \
        break;                                                                                     \
    case 11:                                                                                       \
        body(wdt, 11, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                 \
        break;                                                                                     \
    case 10:                                                                                       \
        body(wdt, 10, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                 \
        break;                                                                                     \
    case 9:                                                                                        \
        body(wdt, 9, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 8:                                                                                        \
        body(wdt, 8, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 7:                                                                                        \
        body(wdt, 7, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 6:                                                                                        \
        body(wdt, 6, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 5:                                                                                        \
        body(wdt, 5, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 4:                                                                                        \
        body(wdt, 4, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 3:                                                                                        \
        body(wdt, 3, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    case 2:                                                                                        \
        body(wdt, 2, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    default:                                                                                       \
        body(wdt, 1, kc, a, as, b, c, ldc, acc, pf, pfb, stream);                                  \
        break;                                                                                     \
    }

/* The full 14-row tile with its 28 accumulators named (driver/ukr_rows.h says why). */
static void gemm14(size_t kc, const float *A, const float *B, float *C, size_t ldc, bool acc,
                   const char *pf, size_t pf_bytes)
{
#define DECL(r) __m512 c##r##_0, c##r##_1;
    FFN_ROWS14(DECL)
#undef DECL
    if (acc) {
#define LD(r)                                                                                      \
    c##r##_0 = _mm512_loadu_ps(C + (r)*ldc);                                                       \
    c##r##_1 = _mm512_loadu_ps(C + (r)*ldc + 16);
        FFN_ROWS14(LD)
#undef LD
    } else {
#define ZR(r) c##r##_0 = c##r##_1 = _mm512_setzero_ps();
        FFN_ROWS14(ZR)
#undef ZR
    }
    for (size_t k = 0; k < kc; k++) {
        if (pf && k * 128 < pf_bytes) {
            _mm_prefetch(pf + k * 128, _MM_HINT_T1);
            _mm_prefetch(pf + k * 128 + 64, _MM_HINT_T1);
        }
        const __m512 b0 = _mm512_loadu_ps(B + k * NR), b1 = _mm512_loadu_ps(B + k * NR + 16);
        const float *ak = A + k * MR;
#define FM(r)                                                                                      \
    {                                                                                              \
        const __m512 a = _mm512_set1_ps(ak[r]);                                                    \
        c##r##_0 = _mm512_fmadd_ps(a, b0, c##r##_0);                                               \
        c##r##_1 = _mm512_fmadd_ps(a, b1, c##r##_1);                                               \
    }
        FFN_ROWS14(FM)
#undef FM
    }
#define ST(r)                                                                                      \
    _mm512_storeu_ps(C + (r)*ldc, c##r##_0);                                                       \
    _mm512_storeu_ps(C + (r)*ldc + 16, c##r##_1);
    FFN_ROWS14(ST)
#undef ST
}

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pfv, size_t pfb)
{
    const char *pf = pfv;
    if (m == MR && as == MR) {
        gemm14(kc, a, b, c, ldc, acc, pf, pfb);
        return;
    }
    BODY_CASES(FFN_UKR_F32, false)
}

#define GEMV(fname, wdt)                                                                           \
    static void fname(size_t m, size_t kc, const float *a, size_t as, const void *b, float *c,     \
                      size_t ldc)                                                                  \
    {                                                                                              \
        if (m == 1) {                                                                              \
            row1(wdt, kc, a, as, b, c);                                                            \
            return;                                                                                \
        }                                                                                          \
        const bool acc = false;                                                                    \
        const char *pf = NULL;                                                                     \
        const size_t pfb = 0;                                                                      \
        BODY_CASES(wdt, true)                                                                      \
    }
GEMV(gemv_f32, FFN_UKR_F32)
GEMV(gemv_bf16, FFN_UKR_BF16)
GEMV(gemv_f16, FFN_UKR_F16)

static __mmask16 mask_n(size_t n) /* the low min(n, 16) bits */
{
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

static void widen_bf16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = mask_n(n - i);
        const __m256i v = _mm256_maskz_loadu_epi16(k, src + i);
        _mm512_mask_storeu_ps(dst + i, k,
                              _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16)));
    }
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = mask_n(n - i);
        _mm512_mask_storeu_ps(dst + i, k, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, src + i)));
    }
}

void ffn__avx512_act(ffn_act act, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                     const float *bg, const float *bu, float *h, size_t ldh)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += 16) {
            const __mmask16 k = mask_n(n - i);
            __m512 gv = _mm512_maskz_loadu_ps(k, g + r * ldc + i);
            if (bg) gv = _mm512_add_ps(gv, _mm512_maskz_loadu_ps(k, bg + i));
            __m512 hv = v_act(act, gv);
            if (u) {
                __m512 uv = _mm512_maskz_loadu_ps(k, u + r * ldc + i);
                if (bu) uv = _mm512_add_ps(uv, _mm512_maskz_loadu_ps(k, bu + i));
                hv = _mm512_mul_ps(hv, uv);
            }
            _mm512_mask_storeu_ps(h + r * ldh + i, k, hv);
        }
}

const ffn_ukernels ffn_ukernels_avx512 = {
    .isa = "avx512",
    .gemm_name = "f32_gemm__avx512_14x32",
    .mr = MR,
    .nr = NR,
    .kc = 256,
    .mc = 518,
    .gemm = gemm,
    .gemv = {gemv_f32, gemv_bf16, gemv_f16},
    .stream_rows = {MR, MR, MR},
    .stream_g = MR,
    .widen = {NULL, widen_bf16, widen_f16},
    .act = ffn__avx512_act,
};
