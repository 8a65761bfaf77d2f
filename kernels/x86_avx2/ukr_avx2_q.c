/* AVX2 + FMA quantized microkernels (kernels/driver/ukernel.h): W8/W4 decode streams and
 * dequantization over the f32_gemm__avx2_6x16 tile (panels of 16 columns), the W8A8 tile for
 * CPUs without VNNI, and the per-token int8 quantization of the AVX2 family.
 *  - q8: 16 codes a k step, sign-extended and converted (VPMOVSXBD, VCVTDQ2PS), one FMA per 8
 *    columns and row, the column scale at the end;
 *  - q4: 8 bytes a k step (low nibbles columns 0-7, high 8-15), converted to fp32 and
 *    dequantized exactly as u s - z s (z = 8 without zero points) by one FMA per 8 weights;
 *  - W8A8 "q8a8_gemm__avx2_2x32": VPMADDUBSW multiplies unsigned by signed bytes and saturates
 *    its int16 pair sums, so it gets |a| and the weights carrying a's sign (VPSIGNB): |a|, |b|
 *    <= 127 keep every pair sum <= 32258 < 2^15; VPMADDWD by ones widens to int32 (the
 *    llama.cpp AVX2 dot-product idiom).
 *  - quant: the codes of quant.h exactly (fp32 division, round half away from zero). */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "../driver/ukr_rows.h"
#include "../quant/quant_internal.h"
#include "ukr_avx2_q.h"

extern const ffn_ukernels ffn_ukernels_avx2;

#define FFN_AI static inline __attribute__((always_inline))

enum { NR = 16, G = 4, PF = 4096 };

FFN_AI void q8_row(const int8_t *q, size_t k, __m256 *b0, __m256 *b1)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + k * NR));
    *b0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
    *b1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
}

/* The 16 nibble values of row k as fp32 (low nibbles: columns 0-7). */
FFN_AI void q4_row(const uint8_t *q, size_t k, __m256 *b0, __m256 *b1)
{
    int64_t v8;
    memcpy(&v8, q + k * 8, 8);
    const __m256i v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(v8));
    *b0 = _mm256_cvtepi32_ps(_mm256_and_si256(v, _mm256_set1_epi32(15)));
    *b1 = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
}

/* Group g's scales s and offsets -z s (z = 8 without zero points), columns 0-7 and 8-15. */
FFN_AI void g_affine(const ffn_ukr_qpanel *w, size_t g, __m256 s[2], __m256 n[2])
{
    const __m256i sv = _mm256_loadu_si256((const __m256i *)(const void *)(w->gscale + g * NR));
    s[0] = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(sv)), 16));
    s[1] = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(sv, 1)), 16));
    __m256 z0 = _mm256_set1_ps(8.0f), z1 = z0;
    if (w->zero) q4_row(w->zero, g, &z0, &z1);
    n[0] = _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), z0), s[0]);
    n[1] = _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), z1), s[1]);
}

/* The streams' rows (1..G), their accumulators named (driver/ukr_rows.h says why: with arrays
 * of accumulators the 2..4-row streams stored every accumulator each k step, seen in the code
 * GCC 12 made). */
#define QT_DECL(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();
#define QT_FM(r)                                                                                   \
    {                                                                                              \
        const __m256 av = _mm256_broadcast_ss(a + k * as + (r));                                   \
        c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                                \
    }
#define QT_ST(r)                                                                                   \
    _mm256_storeu_ps(c + (size_t)(r)*ldc, _mm256_mul_ps(c##r##0, s0));                             \
    _mm256_storeu_ps(c + (size_t)(r)*ldc + 8, _mm256_mul_ps(c##r##1, s1));
/* q8: the column scale at the end (s0, s1); q4: each group's scale and offset on the weights
 * (s0 = s1 = 1 at the end). */
#define Q8_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const int8_t *q = (const int8_t *)w->q;                                                    \
        ROWS(QT_DECL)                                                                              \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (k % 4 == 0) _mm_prefetch((const char *)(q + k * NR) + PF, _MM_HINT_T0);            \
            __m256 b0, b1;                                                                         \
            q8_row(q, k, &b0, &b1);                                                                \
            ROWS(QT_FM)                                                                            \
        }                                                                                          \
        const __m256 s0 = _mm256_loadu_ps(w->scale), s1 = _mm256_loadu_ps(w->scale + 8);           \
        ROWS(QT_ST)                                                                                \
    }
#define Q4_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const uint8_t *q = w->q;                                                                   \
        const size_t Gs = w->group;                                                                \
        ROWS(QT_DECL)                                                                              \
        for (size_t g = 0; g < kc / Gs; g++) {                                                     \
            __m256 s[2], n[2];                                                                     \
            g_affine(w, g, s, n);                                                                  \
            for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {                                       \
                if (k % 8 == 0) _mm_prefetch((const char *)(q + k * 8) + PF, _MM_HINT_T0);         \
                __m256 b0, b1;                                                                     \
                q4_row(q, k, &b0, &b1);                                                            \
                b0 = _mm256_fmadd_ps(b0, s[0], n[0]);                                              \
                b1 = _mm256_fmadd_ps(b1, s[1], n[1]);                                              \
                ROWS(QT_FM)                                                                        \
            }                                                                                      \
        }                                                                                          \
        const __m256 s0 = _mm256_set1_ps(1.0f), s1 = s0;                                           \
        ROWS(QT_ST)                                                                                \
    }
/* One row (T = 1): four k steps a loop with their own accumulators, summed in a fixed order.
 * The tiles above at one row carry one dependent FMA a k step per 8 columns, so the FMA latency
 * (4 cycles on Zen 4) capped them at 16 weights per 4 cycles: on Zen 4 (T = 1 d =
 * 4096 f = 11008, two threads, one process alternating) W8A32 read 18.7 GB/s with them and 24.7
 * with these, W4A32 9.2 and 12.3, W4A16 11.2 and 16.0 (one panel in L1, one thread: W8 11.6
 * and 19.9 Gweights/s, W4 10.7-13.2 and 15.9). */
#define R1_DECL                                                                                    \
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,       \
           a30 = a00, a31 = a00;
#define R1_FM(i, b0, b1)                                                                           \
    {                                                                                              \
        const __m256 av = _mm256_broadcast_ss(a + (k + (i)) * as);                                 \
        a##i##0 = _mm256_fmadd_ps(av, b0, a##i##0);                                                \
        a##i##1 = _mm256_fmadd_ps(av, b1, a##i##1);                                                \
    }
#define R1_Q8(i)                                                                                   \
    {                                                                                              \
        __m256 b0, b1;                                                                             \
        q8_row(q, k + (i), &b0, &b1);                                                              \
        R1_FM(i, b0, b1)                                                                           \
    }
#define R1_Q4(i)                                                                                   \
    {                                                                                              \
        __m256 b0, b1;                                                                             \
        q4_row(q, k + (i), &b0, &b1);                                                              \
        b0 = _mm256_fmadd_ps(b0, s[0], n[0]);                                                      \
        b1 = _mm256_fmadd_ps(b1, s[1], n[1]);                                                      \
        R1_FM(i, b0, b1)                                                                           \
    }
#define R1_SUM(h) _mm256_add_ps(_mm256_add_ps(a0##h, a1##h), _mm256_add_ps(a2##h, a3##h))

static void q8_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,
                    size_t ldc)
{
    (void)ldc;
    const int8_t *q = (const int8_t *)w->q;
    R1_DECL
    size_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        _mm_prefetch((const char *)(q + k * NR) + PF, _MM_HINT_T0);
        R1_Q8(0) R1_Q8(1) R1_Q8(2) R1_Q8(3)
    }
    for (; k < kc; k++) {
        __m256 b0, b1;
        q8_row(q, k, &b0, &b1);
        R1_FM(0, b0, b1)
    }
    _mm256_storeu_ps(c, _mm256_mul_ps(R1_SUM(0), _mm256_loadu_ps(w->scale)));
    _mm256_storeu_ps(c + 8, _mm256_mul_ps(R1_SUM(1), _mm256_loadu_ps(w->scale + 8)));
}

static void q4_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,
                    size_t ldc)
{
    (void)ldc;
    const uint8_t *q = w->q;
    const size_t Gs = w->group; /* a multiple of 4 (32, 64, 128) */
    R1_DECL
    for (size_t g = 0; g < kc / Gs; g++) {
        __m256 s[2], n[2];
        g_affine(w, g, s, n);
        for (size_t k = g * Gs; k < (g + 1) * Gs; k += 4) {
            if (k % 8 == 0) _mm_prefetch((const char *)(q + k * 8) + PF, _MM_HINT_T0);
            R1_Q4(0) R1_Q4(1) R1_Q4(2) R1_Q4(3)
        }
    }
    _mm256_storeu_ps(c, R1_SUM(0));
    _mm256_storeu_ps(c + 8, R1_SUM(1));
}

FFN_QTILES4_ROW1(Q8_TILE, q8_tiles, q8_row1)
FFN_QTILES4_ROW1(Q4_TILE, q4_tiles, q4_row1)
FFN_QGEMV4(q8_gemv, q8_tiles)
FFN_QGEMV4(q4_gemv, q4_tiles)

static void q8_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    const __m256 s0 = _mm256_loadu_ps(w->scale), s1 = _mm256_loadu_ps(w->scale + 8);
    for (size_t k = 0; k < kc; k++) {
        __m256 b0, b1;
        q8_row((const int8_t *)w->q, k0 + k, &b0, &b1);
        _mm256_storeu_ps(dst + k * NR, _mm256_mul_ps(b0, s0));
        _mm256_storeu_ps(dst + k * NR + 8, _mm256_mul_ps(b1, s1));
    }
}

static void q4_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    const size_t Gs = w->group;
    size_t k = 0;
    while (k < kc) {
        const size_t g = (k0 + k) / Gs, end = (g + 1) * Gs - k0 < kc ? (g + 1) * Gs - k0 : kc;
        __m256 s[2], n[2];
        g_affine(w, g, s, n);
        for (; k < end; k++) {
            __m256 b0, b1;
            q4_row(w->q, k0 + k, &b0, &b1);
            _mm256_storeu_ps(dst + k * NR, _mm256_fmadd_ps(b0, s[0], n[0]));
            _mm256_storeu_ps(dst + k * NR + 8, _mm256_fmadd_ps(b1, s[1], n[1]));
        }
    }
}

const ffn_ukernels_q ffn_ukernels_q_avx2 = {
    .isa = "avx2",
    .gemv_name = {"q8_gemv__avx2", "q4_gemv__avx2"},
    .f32 = &ffn_ukernels_avx2,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 6,
    .stream_g = G,
};

/* ---- per-token quantization ---------------------------------------------------------------- */

void ffn__avx2_quant_rows(unsigned offset, size_t rows, size_t n, const float *src, size_t lds,
                          uint8_t *q, size_t ldq, float *scale)
{
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 fmax = _mm256_set1_ps(3.40282347e38f), half = _mm256_set1_ps(0.5f);
    const __m256 one = _mm256_set1_ps(1.0f), sgnm = _mm256_set1_ps(-0.0f);
    const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    for (size_t r = 0; r < rows; r++) {
        const float *x = src + r * lds;
        uint8_t *qr = q + r * ldq;
        __m256 mx = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + i), absm);
            bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, fmax, _CMP_NLE_UQ)); /* > max, or NaN */
            mx = _mm256_max_ps(mx, a);
        }
        float t8[8];
        _mm256_storeu_ps(t8, mx);
        float m = 0.0f;
        bool finite = _mm256_movemask_ps(bad) == 0;
        for (int j = 0; j < 8; j++)
            m = t8[j] > m ? t8[j] : m;
        for (; i < n; i++) {
            const float a = fabsf(x[i]);
            finite = finite && a <= 3.40282347e38f;
            m = a > m ? a : m;
        }
        const float s = finite ? m / 127.0f : __builtin_nanf("");
        scale[r] = s;
        if (!finite || !(s > 0.0f)) {
            memset(qr, (int)offset, n);
            continue;
        }
        const __m256 sv = _mm256_set1_ps(s);
        int32_t c8[8];
        for (i = 0; i + 8 <= n; i += 8) {
            const __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), sv);
            const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 up =
                _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(v, t), absm), half, _CMP_GE_OQ);
            const __m256 sg = _mm256_or_ps(one, _mm256_and_ps(v, sgnm));
            __m256 rv = _mm256_add_ps(t, _mm256_and_ps(up, sg));
            rv = _mm256_min_ps(hi, _mm256_max_ps(lo, rv));
            _mm256_storeu_si256((__m256i *)(void *)c8, _mm256_cvtps_epi32(rv));
            for (int j = 0; j < 8; j++)
                qr[i + (size_t)j] = (uint8_t)(c8[j] + (int)offset);
        }
        for (; i < n; i++) {
            float rr = roundf(x[i] / s);
            rr = rr < -127.0f ? -127.0f : rr > 127.0f ? 127.0f : rr;
            qr[i] = (uint8_t)((int)rr + (int)offset);
        }
    }
}

/* ---- W8A8 without VNNI ------------------------------------------------------------------- */

#define I8_STEP(acc, a4, b)                                                                        \
    acc = _mm256_add_epi32(                                                                        \
        acc, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(a4), _mm256_sign_epi8(b, a4)), \
                               _mm256_set1_epi16(1)))
#include "ukr_avx2_i8.h"
I8_TILE(i8_gemm, 0)

static void i8_quant(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                     float *scale)
{
    ffn__avx2_quant_rows(0, rows, n, src, lds, q, ldq, scale);
}

const ffn_ukernels_i8 ffn_ukernels_i8_avx2 = {
    .isa = "avx2",
    .gemm_name = "q8a8_gemm__avx2_2x32",
    .kv = 4,
    .kpad = 4,
    .a_offset = 0,
    .row_tile = 1,
    .panels = 4,
    .mc = 64,
    .stream_rows = 4,
    .stream_g = 4,
    .gemm = i8_gemm,
    .gemv = i8_gemm,
    .quant = i8_quant,
    .act = ffn__avx2_act,
};
