/* AVX-512 (F/BW/VL/DQ) quantized microkernels for float activations (kernels/driver/ukernel.h:
 * W8 and W4 panels of 32 columns, dequantized in registers), over the f32_gemm__avx512_14x32
 * tile for prefill, and the per-token int8 quantization the W8A8 tables of this CPU family share.
 *  - q8_gemv__avx512: 32 codes a k step, sign-extended (VPMOVSXBD) and converted to fp32, one FMA
 *    per 16 columns and row; the column scale once at the end;
 *  - q4_gemv__avx512 (symmetric): 16 bytes a k step, zero-extended to dwords; VPERMPS looks the
 *    low nibble up in a 16-entry table of the code values -8..7 (it reads only an index's low 4
 *    bits, so no mask is needed) and the high nibble after a shift by 4; each group's partial sum
 *    is scaled once (out += s partial): two FMA and three shuffle-port ops per 32 weights;
 *  - q4 with zero points: w' = u s - z s built exactly by one FMA per 16 weights (u, z <= 15 and
 *    bf16 s: the products are exact), then as q8;
 *  - one row (T = 1): W8 reads each panel with NS = 4 accumulators in the order of the fp32 row
 *    stream (ffn__decode_split: in memory order by default, where four concurrent streams,
 *    quarters of K, read 8-18% less per second on Zen 4; as those four streams with
 *    the intel tuning, 4-15% faster on an SPR-class VM); W4 reads it as NS = 4
 * concurrent streams (quarters of its groups), each with its own accumulators, summed in a fixed
 * order: there memory order, four groups at a time, measured 20% slower (Zen 4, the same run).
 * Software prefetch 4 KiB ahead of each stream. Eight W4 streams measured slower (bench_kernels
 * --case qdecode, SPR-class VM: W4A16 53% of the read probe against 63%). From DRAM W8
 * reaches about 78% and W4 about 63% of the read probe where fp32 reaches 95-98%: with the weights
 * resident in the 300 MiB L3 W4 runs at only ~22 GB/s, so the in-register dequantization (6 uops
 * per 32 weights, 3 on the shuffle port), not memory, sets that pace.
 *  - quant (W8A8): max |x| (and a NaN/Inf check) in one pass, codes in a second: the fp32
 *    division and round-half-away-from-zero of quant.h, exactly (+ the table's offset). */
#include "avx512_q_common.h"
#include "ukr_avx512_q.h"

extern const ffn_ukernels ffn_ukernels_avx512;

enum { NR = 32, G = 6, PF = 4096, NS = 4 };

/* ---- W8 --------------------------------------------------------------------------------- */

FFN_AI void q8_row(const int8_t *q, size_t k, __m512 *b0, __m512 *b1)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(q + k * NR));
    *b0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(v)));
    *b1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(v, 1)));
}

FFN_AI void store_scaled(float *c, __m512 a0, __m512 a1, const float *scale)
{
    _mm512_storeu_ps(c, _mm512_mul_ps(a0, _mm512_loadu_ps(scale)));
    _mm512_storeu_ps(c + 16, _mm512_mul_ps(a1, _mm512_loadu_ps(scale + 16)));
}

static void q8_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c)
{
    const int8_t *q = (const int8_t *)w->q;
    __m512 a0[NS], a1[NS];
    for (int i = 0; i < NS; i++)
        a0[i] = a1[i] = _mm512_setzero_ps();
    _Static_assert(NS == 4, "ffn__row1_order_of orders four accumulators");
    const size_t qn = kc / NS, kn = NS * qn; /* as row1 of ukr_avx512.c */
    const ffn__row1_order o = ffn__row1_order_of(qn);
    for (size_t p = 0; p < qn; p++)
        for (int i = 0; i < NS; i++) {
            const size_t kk = (size_t)i * o.lane + p * o.step;
            if (kk % 2 == 0) _mm_prefetch((const char *)(q + kk * NR) + PF, _MM_HINT_T0);
            __m512 b0, b1;
            q8_row(q, kk, &b0, &b1);
            const __m512 av = _mm512_set1_ps(a[kk * as]);
            a0[i] = _mm512_fmadd_ps(av, b0, a0[i]);
            a1[i] = _mm512_fmadd_ps(av, b1, a1[i]);
        }
    for (size_t k = kn; k < kc; k++) {
        __m512 b0, b1;
        q8_row(q, k, &b0, &b1);
        const __m512 av = _mm512_set1_ps(a[k * as]);
        a0[0] = _mm512_fmadd_ps(av, b0, a0[0]);
        a1[0] = _mm512_fmadd_ps(av, b1, a1[0]);
    }
    for (int h = NS / 2; h > 0; h /= 2) /* a fixed pairwise order */
        for (int i = 0; i < h; i++) {
            a0[i] = _mm512_add_ps(a0[i], a0[i + h]);
            a1[i] = _mm512_add_ps(a1[i], a1[i + h]);
        }
    store_scaled(c, a0[0], a1[0], w->scale);
}

FFN_AI void q8_body(const int m, size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w,
                    float *c, size_t ldc)
{
    const int8_t *q = (const int8_t *)w->q;
    __m512 c0[G], c1[G];
    for (int r = 0; r < m; r++)
        c0[r] = c1[r] = _mm512_setzero_ps();
    for (size_t k = 0; k < kc; k++) {
        if (k % 2 == 0) _mm_prefetch((const char *)(q + k * NR) + PF, _MM_HINT_T0);
        __m512 b0, b1;
        q8_row(q, k, &b0, &b1);
        for (int r = 0; r < m; r++) {
            const __m512 av = _mm512_set1_ps(a[k * as + (size_t)r]);
            c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
        }
    }
    for (int r = 0; r < m; r++)
        store_scaled(c + (size_t)r * ldc, c0[r], c1[r], w->scale);
}

static void q8_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    (void)asum;
    (void)ap;
    if (m == 1) {
        q8_row1(kc, a, as, w, c);
        return;
    }
    FFN_AVX512_ROWS_1_6(m, q8_body, kc, a, as, w, c, ldc)
}

/* ---- W4 --------------------------------------------------------------------------------- */

/* The 32 codes of row k as two dword vectors of bytes (low nibble: columns 0-15). */
FFN_AI __m512i q4_bytes(const uint8_t *q, size_t k)
{
    return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + k * 16)));
}

FFN_AI void q4_vals(__m512i v, __m512 lut, __m512 *b0, __m512 *b1)
{
    *b0 = _mm512_permutexvar_ps(v, lut);
    *b1 = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), lut);
}

static __m512 lut_sym(void)
{
    return _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
}

/* Symmetric, one row: NS streams over as many parts of the groups. */
static void q4_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group, ng = kc / Gs, qg = ng / NS;
    const __m512 lut = lut_sym();
    __m512 o0[NS], o1[NS];
    for (int i = 0; i < NS; i++)
        o0[i] = o1[i] = _mm512_setzero_ps();
    for (size_t gi = 0; gi < qg; gi++) {
        __m512 p0[NS], p1[NS];
        for (int i = 0; i < NS; i++)
            p0[i] = p1[i] = _mm512_setzero_ps();
        for (size_t k = 0; k < Gs; k++)
            for (int i = 0; i < NS; i++) {
                const size_t kk = ((size_t)i * qg + gi) * Gs + k;
                if (kk % 4 == 0) _mm_prefetch((const char *)(q + kk * 16) + PF, _MM_HINT_T0);
                __m512 b0, b1;
                q4_vals(q4_bytes(q, kk), lut, &b0, &b1);
                const __m512 av = _mm512_set1_ps(a[kk * as]);
                p0[i] = _mm512_fmadd_ps(av, b0, p0[i]);
                p1[i] = _mm512_fmadd_ps(av, b1, p1[i]);
            }
        for (int i = 0; i < NS; i++) {
            __m512 s0, s1;
            ffn__avx512_gscales(w->gscale, (size_t)i * qg + gi, &s0, &s1);
            o0[i] = _mm512_fmadd_ps(s0, p0[i], o0[i]);
            o1[i] = _mm512_fmadd_ps(s1, p1[i], o1[i]);
        }
    }
    for (size_t g = NS * qg; g < ng; g++) { /* the groups past the NS parts */
        __m512 p0 = _mm512_setzero_ps(), p1 = _mm512_setzero_ps();
        for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {
            __m512 b0, b1;
            q4_vals(q4_bytes(q, k), lut, &b0, &b1);
            const __m512 av = _mm512_set1_ps(a[k * as]);
            p0 = _mm512_fmadd_ps(av, b0, p0);
            p1 = _mm512_fmadd_ps(av, b1, p1);
        }
        __m512 s0, s1;
        ffn__avx512_gscales(w->gscale, g, &s0, &s1);
        o0[0] = _mm512_fmadd_ps(s0, p0, o0[0]);
        o1[0] = _mm512_fmadd_ps(s1, p1, o1[0]);
    }
    for (int h = NS / 2; h > 0; h /= 2)
        for (int i = 0; i < h; i++) {
            o0[i] = _mm512_add_ps(o0[i], o0[i + h]);
            o1[i] = _mm512_add_ps(o1[i], o1[i + h]);
        }
    _mm512_storeu_ps(c, o0[0]);
    _mm512_storeu_ps(c + 16, o1[0]);
}

/* Symmetric, m rows: partial sums per group, scaled at the group's end. */
FFN_AI void q4_body(const int m, size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w,
                    float *c, size_t ldc)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group;
    const __m512 lut = lut_sym();
    __m512 o0[G], o1[G], p0[G], p1[G];
    for (int r = 0; r < m; r++)
        o0[r] = o1[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < kc / Gs; g++) {
        for (int r = 0; r < m; r++)
            p0[r] = p1[r] = _mm512_setzero_ps();
        for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {
            if (k % 4 == 0) _mm_prefetch((const char *)(q + k * 16) + PF, _MM_HINT_T0);
            __m512 b0, b1;
            q4_vals(q4_bytes(q, k), lut, &b0, &b1);
            for (int r = 0; r < m; r++) {
                const __m512 av = _mm512_set1_ps(a[k * as + (size_t)r]);
                p0[r] = _mm512_fmadd_ps(av, b0, p0[r]);
                p1[r] = _mm512_fmadd_ps(av, b1, p1[r]);
            }
        }
        __m512 s0, s1;
        ffn__avx512_gscales(w->gscale, g, &s0, &s1);
        for (int r = 0; r < m; r++) {
            o0[r] = _mm512_fmadd_ps(s0, p0[r], o0[r]);
            o1[r] = _mm512_fmadd_ps(s1, p1[r], o1[r]);
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(c + (size_t)r * ldc, o0[r]);
        _mm512_storeu_ps(c + (size_t)r * ldc + 16, o1[r]);
    }
}

/* With zero points, any m: w' = u s + (-z s) per group (exact), then plain FMAs. */
FFN_AI void q4z_body(const int m, size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w,
                     float *c, size_t ldc)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group;
    const __m512 lut = ffn__avx512_u_lut();
    __m512 o0[G], o1[G];
    for (int r = 0; r < m; r++)
        o0[r] = o1[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 s0, s1, n0, n1;
        ffn__avx512_gsn(w, g, &s0, &s1, &n0, &n1);
        for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {
            if (k % 4 == 0) _mm_prefetch((const char *)(q + k * 16) + PF, _MM_HINT_T0);
            __m512 b0, b1;
            q4_vals(q4_bytes(q, k), lut, &b0, &b1);
            b0 = _mm512_fmadd_ps(b0, s0, n0);
            b1 = _mm512_fmadd_ps(b1, s1, n1);
            for (int r = 0; r < m; r++) {
                const __m512 av = _mm512_set1_ps(a[k * as + (size_t)r]);
                o0[r] = _mm512_fmadd_ps(av, b0, o0[r]);
                o1[r] = _mm512_fmadd_ps(av, b1, o1[r]);
            }
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(c + (size_t)r * ldc, o0[r]);
        _mm512_storeu_ps(c + (size_t)r * ldc + 16, o1[r]);
    }
}

static void q4_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    (void)asum;
    (void)ap;
    if (w->zero) {
        FFN_AVX512_ROWS_1_6(m, q4z_body, kc, a, as, w, c, ldc)
        return;
    }
    if (m == 1) {
        q4_row1(kc, a, as, w, c);
        return;
    }
    FFN_AVX512_ROWS_1_6(m, q4_body, kc, a, as, w, c, ldc)
}

/* ---- dequantization for the prefill GEMM ------------------------------------------------- */

static void q8_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    const __m512 s0 = _mm512_loadu_ps(w->scale), s1 = _mm512_loadu_ps(w->scale + 16);
    for (size_t k = 0; k < kc; k++) {
        __m512 b0, b1;
        q8_row((const int8_t *)w->q, k0 + k, &b0, &b1);
        _mm512_storeu_ps(dst + k * NR, _mm512_mul_ps(b0, s0));
        _mm512_storeu_ps(dst + k * NR + 16, _mm512_mul_ps(b1, s1));
    }
}

static void q4_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    const size_t Gs = w->group;
    const __m512 lut = ffn__avx512_u_lut();
    size_t k = 0;
    while (k < kc) {
        const size_t g = (k0 + k) / Gs, end = (g + 1) * Gs - k0 < kc ? (g + 1) * Gs - k0 : kc;
        __m512 s0, s1, n0, n1;
        ffn__avx512_gsn(w, g, &s0, &s1, &n0, &n1);
        for (; k < end; k++) {
            __m512 b0, b1;
            q4_vals(q4_bytes(w->q, k0 + k), lut, &b0, &b1);
            _mm512_storeu_ps(dst + k * NR, _mm512_fmadd_ps(b0, s0, n0));
            _mm512_storeu_ps(dst + k * NR + 16, _mm512_fmadd_ps(b1, s1, n1));
        }
    }
}

const ffn_ukernels_q ffn_ukernels_q_avx512 = {
    .isa = "avx512",
    .gemv_name = {"q8_gemv__avx512", "q4_gemv__avx512"},
    .f32 = &ffn_ukernels_avx512,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 12,
    .stream_g = G,
};

/* ---- per-token quantization (W8A8) ------------------------------------------------------- */

static __mmask16 mask_n(size_t n)
{
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

void ffn__avx512_quant_rows(unsigned offset, size_t rows, size_t n, const float *src, size_t lds,
                            uint8_t *q, size_t ldq, float *scale)
{
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    const __m512i off = _mm512_set1_epi32((int)offset);
    for (size_t r = 0; r < rows; r++) {
        const float *x = src + r * lds;
        uint8_t *qr = q + r * ldq;
        __m512 mx = _mm512_setzero_ps();
        __mmask16 bad = 0;
        for (size_t i = 0; i < n; i += 16) {
            const __mmask16 k = mask_n(n - i);
            const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
            bad |= _mm512_mask_fpclass_ps_mask(k, v, 0x99); /* QNaN, +Inf, -Inf, SNaN */
            mx = _mm512_max_ps(mx, _mm512_abs_ps(v));
        }
        const float m = _mm512_reduce_max_ps(mx);
        const float s = bad ? __builtin_nanf("") : m / 127.0f;
        scale[r] = s;
        if (bad || !(s > 0.0f)) {
            memset(qr, (int)offset, n);
            continue;
        }
        const __m512 sv = _mm512_set1_ps(s);
        for (size_t i = 0; i < n; i += 16) {
            const __mmask16 k = mask_n(n - i);
            const __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(k, x + i), sv);
            const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            /* round half away from zero: t + sign(v) where |v - t| >= 1/2 (exact) */
            const __mmask16 up =
                _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, t)), half, _CMP_GE_OQ);
            const __m512 sg = _mm512_or_ps(one, _mm512_and_ps(v, _mm512_set1_ps(-0.0f)));
            __m512 rv = _mm512_mask_add_ps(t, up, t, sg);
            rv = _mm512_min_ps(hi, _mm512_max_ps(lo, rv));
            const __m512i c = _mm512_add_epi32(_mm512_cvtps_epi32(rv), off);
            _mm_mask_storeu_epi8(qr + i, k, _mm512_cvtepi32_epi8(c));
        }
    }
}

/* ---- W8A8 without VNNI (Skylake-SP): VPMADDUBSW on |a| and the weights with a's sign ------
 * |a| <= 127 and |b| <= 127 keep each int16 pair sum <= 2 * 127 * 127 < 2^15 (no saturation;
 * the codes never hold -128). Three ops more per 64 products than VPDPBUSD. */
#define I8_STEP(acc, a4, b)                                                                        \
    {                                                                                              \
        const __mmask64 neg_ = _mm512_movepi8_mask(a4);                                            \
        const __m512i sb_ = _mm512_mask_sub_epi8(b, neg_, _mm512_setzero_si512(), b);              \
        const __m512i p_ = _mm512_maddubs_epi16(_mm512_abs_epi8(a4), sb_);                         \
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p_, _mm512_set1_epi16(1)));                  \
    }
#include "ukr_avx512_i8.h"
I8_TILE(i8_tile, 0)
I8_GEMM(i8_gemm, i8_tile)

/* Two multiplies, no FMA: the driver's C loop's roundings. At the baseline ISA the loop took 7%
 * of a W8A8 AMX prefill (T = 512, d = 2048, f = 5632, two threads, SPR-class VM). */
void ffn__avx512_i8_scale(size_t rows, const int32_t *sum, const float *sa, const float *sw,
                          float *out)
{
    const __m512 w0 = _mm512_loadu_ps(sw), w1 = _mm512_loadu_ps(sw + 16);
    for (size_t r = 0; r < rows; r++) {
        const __m512 a = _mm512_set1_ps(sa[r]);
        const __m512 c0 = _mm512_cvtepi32_ps(_mm512_loadu_si512(sum + r * 32));
        const __m512 c1 = _mm512_cvtepi32_ps(_mm512_loadu_si512(sum + r * 32 + 16));
        _mm512_storeu_ps(out + r * 32, _mm512_mul_ps(_mm512_mul_ps(c0, a), w0));
        _mm512_storeu_ps(out + r * 32 + 16, _mm512_mul_ps(_mm512_mul_ps(c1, a), w1));
    }
}

static void i8_quant(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                     float *scale)
{
    ffn__avx512_quant_rows(0, rows, n, src, lds, q, ldq, scale);
}

const ffn_ukernels_i8 ffn_ukernels_i8_avx512 = {
    .isa = "avx512",
    .gemm_name = "q8a8_gemm__avx512_8x32",
    .kv = 4,
    .kpad = 4,
    .a_offset = 0,
    .row_tile = 1,
    .panels = 4,
    .mc = 128,
    .stream_rows = 4,
    .stream_g = 4,
    .gemm = i8_gemm,
    .gemv = i8_gemm,
    .quant = i8_quant,
    .act = ffn__avx512_act,
    .scale = ffn__avx512_i8_scale,
};
