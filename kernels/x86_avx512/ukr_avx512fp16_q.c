/* AVX512-FP16 W4A16 decode stream (kernels/driver/ukernel.h): int4 panels of 32 columns in the
 * FFN_UKR_Q4_OCT nibble order (avx512_oct_q.h), activations rounded to bf16 by the driver and
 * handed over as fp16 pairs (a_pairs_fp16: each row scaled by a power of two that puts its
 * largest |value| in [128, 256), undone at the end); prefill dequantizes into the
 * f32_gemm__avx512_14x32 tile's scratch, as the AVX-512 table does.
 *  - q4_gemv__avx512fp16 (symmetric): VPERMW looks each nibble up in a 32-entry table of the
 *    fp16 values of the codes -8..7 (it reads an index's low 5 bits: the table holds the 16
 *    values twice, so the bit above a nibble needs no mask), after a 16-bit shift by 4, 8 or
 *    12; a word's low half holds rows 8b + i and its high half rows 8b + 4 + i, so one lookup
 *    gives 16 columns of code pairs, and VFMADD231PH multiplies them by the broadcast pair of
 *    activations: 32 products an instruction at about the fp32 FMA's rate (a probe of
 *    eight chains on a family 6 model 207 Xeon: 1.18x an fp32 FMA's time, for
 *    twice its products), where VDPBF16PS takes 4.3x (BENCHMARKS.md).
 *  - Exactness: a bf16 activation has 8 significant bits and a code |u - 8| <= 8 at most 3
 *    (or is -8), so every product is exact in fp16 (11 bits); only the fp16 sums round. Each
 *    lane sums 16 products (4 blocks of 8 rows, in 4 chains that are added at the end), then
 *    the 32 lanes are widened to fp32, each column's two lanes added, scaled by the group's
 *    scale and accumulated in fp32. With |x 2^e| < 256 and |code| <= 8 a lane stays below
 *    16 x 2048 = 32768 < 65504 (no overflow); the fp16 sums add at most gamma_16 (u = 2^-11)
 *    of the sum of |products| of each 32-row chunk, and values below 2^-14 (2^-21 of the
 *    row's largest) lose bits as fp16 subnormals: tests/test_kernels_quant.c bounds both.
 *  - with zero points, or without the driver's pairs: the exact fp32 FMA stream of
 *    avx512_oct_q.h.
 * Measured (family 6 model 207 Xeon VM, d = 4096, f = 11008, groups of 128; against
 * q4_gemv__avx512's VPERMPS stream, BENCHMARKS.md): weights warm in L3 1.27-1.32x
 * (T = 1) and 1.22x (T = 4); from DRAM 1.10-1.14x with one thread and 1.00-1.08x with two,
 * where a core's streaming, not its arithmetic, sets the pace; output within 1.6e-3 (relative
 * L2) of the exact reference, against 2e-7 for the fp32 stream: the fp16 sums' rounding, well
 * under the format's own error (int4: about 0.1) and the bf16 rounding of x and h it already
 * accepts. Prefill runs the same fp32 tile as the AVX-512 table (0.97-1.00x).
 * W4 only: the table's W8 entries are NULL (registry.c builds only the W4A16 kernel on it). */
#include "avx512_oct_q.h"

extern const ffn_ukernels ffn_ukernels_avx512;

/* PF, PF1: the one-row stream's prefetch distances into L2 and L1 (16 KiB and 1 KiB measured
 * 5-8% faster than 2 KiB into L1 with one thread from DRAM) */
enum {
    NR = FFN_OCT_NR,
    G = FFN_OCT_G,
    PF = 16384,
    PF1 = 1024,
    FLUSH = 4 /* blocks per fp16 sum */
};

/* fp16 bits of the code (e & 15) - 8, e < 32. */
static const uint16_t code_fp16[32] = {
    0xc800, 0xc700, 0xc600, 0xc500, 0xc400, 0xc200, 0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000,
    0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0xc800, 0xc700, 0xc600, 0xc500, 0xc400, 0xc200,
    0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700};

/* Code pairs (rows 8b + i, 8b + 4 + i) of the 16 columns of v as fp16, i a constant 0..3. */
#define HCODES(v, i, tab)                                                                          \
    _mm512_castsi512_ph(                                                                           \
        _mm512_permutexvar_epi16((i) ? _mm512_srli_epi16((v), 4 * (i)) : (v), (tab)))

/* The pair of activations of block row i (the driver's fp16 pairs) in every lane. */
FFN_AI __m512h xpair(const uint32_t *x4, size_t i)
{
    return _mm512_castsi512_ph(_mm512_set1_epi32((int)x4[i]));
}

/* The 16 column sums of t (column c in lanes 2c and 2c + 1) in fp32. */
FFN_AI __m512 col_sums(__m512h t)
{
    const __m512 lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(t));
    const __m512 hi =
        _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(t), 1)));
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    return _mm512_add_ps(_mm512_permutex2var_ps(lo, ev, hi), _mm512_permutex2var_ps(lo, od, hi));
}

/* One row: the panel as one stream in memory order, PF bytes ahead and on into the next panel,
 * four fp16 chains a vector (one per block row i: a chain's FMAs are a block apart). */
static void h_row1(size_t kc, const uint32_t *ap, size_t as, float us, const ffn_ukr_qpanel *w,
                   float *c)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group, bpg = Gs / 8, bytes = kc / 8 * (NR * 4);
    const __m512i tab = _mm512_loadu_si512(code_fp16);
    __m512 o0 = _mm512_setzero_ps(), o1 = o0;
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 s0, s1;
        ffn__avx512_gscales(w->gscale, g, &s0, &s1);
        for (size_t b0 = g * bpg; b0 < (g + 1) * bpg; b0 += FLUSH) {
            __m512h h0[4], h1[4];
            for (int i = 0; i < 4; i++)
                h0[i] = h1[i] = _mm512_setzero_ph();
            for (size_t b = b0; b < b0 + FLUSH; b++) {
                const size_t off = b * (NR * 4) + PF;
                const uint8_t *pf = off < bytes ? q + off
                                    : w->next   ? w->next + (off - bytes)
                                                : NULL;
                if (pf) { /* into L2 PF bytes ahead, into L1 the last PF1 of them */
                    _mm_prefetch((const char *)pf, _MM_HINT_T1);
                    _mm_prefetch((const char *)pf + 64, _MM_HINT_T1);
                    _mm_prefetch((const char *)q + b * (NR * 4) + PF1, _MM_HINT_T0);
                    _mm_prefetch((const char *)q + b * (NR * 4) + PF1 + 64, _MM_HINT_T0);
                }
                __m512i v0, v1;
                ffn__oct_load(q, b, &v0, &v1);
                const uint32_t *x4 = ap + b * as * 4;
#define ROW1_STEP(i)                                                                               \
    {                                                                                              \
        const __m512h x_ = xpair(x4, i);                                                           \
        h0[i] = _mm512_fmadd_ph(HCODES(v0, i, tab), x_, h0[i]);                                    \
        h1[i] = _mm512_fmadd_ph(HCODES(v1, i, tab), x_, h1[i]);                                    \
    }
                ROW1_STEP(0)
                ROW1_STEP(1)
                ROW1_STEP(2)
                ROW1_STEP(3)
#undef ROW1_STEP
            }
            const __m512h t0 =
                _mm512_add_ph(_mm512_add_ph(h0[0], h0[1]), _mm512_add_ph(h0[2], h0[3]));
            const __m512h t1 =
                _mm512_add_ph(_mm512_add_ph(h1[0], h1[1]), _mm512_add_ph(h1[2], h1[3]));
            o0 = _mm512_fmadd_ps(s0, col_sums(t0), o0);
            o1 = _mm512_fmadd_ps(s1, col_sums(t1), o1);
        }
    }
    const __m512 u = _mm512_set1_ps(us);
    _mm512_storeu_ps(c, _mm512_mul_ps(o0, u));
    _mm512_storeu_ps(c + 16, _mm512_mul_ps(o1, u));
}

/* m rows: each block's lookups shared by the rows, one fp16 chain a row and vector. */
FFN_AI void h_body(const int m, size_t kc, const uint32_t *ap, size_t as, const float *us,
                   const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group, bpg = Gs / 8;
    const __m512i tab = _mm512_loadu_si512(code_fp16);
    __m512 o0[G], o1[G];
    for (int r = 0; r < m; r++)
        o0[r] = o1[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 s0, s1;
        ffn__avx512_gscales(w->gscale, g, &s0, &s1);
        for (size_t b0 = g * bpg; b0 < (g + 1) * bpg; b0 += FLUSH) {
            __m512h h0[G], h1[G];
            for (int r = 0; r < m; r++)
                h0[r] = h1[r] = _mm512_setzero_ph();
            for (size_t b = b0; b < b0 + FLUSH; b++) {
                __m512i v0, v1;
                ffn__oct_load_ahead(q, b, &v0, &v1);
                const uint32_t *x4 = ap + b * as * 4;
#define ROWS_STEP(i)                                                                               \
    {                                                                                              \
        const __m512h b0_ = HCODES(v0, i, tab), b1_ = HCODES(v1, i, tab);                          \
        for (int r = 0; r < m; r++) {                                                              \
            const __m512h x_ = xpair(x4, (size_t)r * 4 + (i));                                     \
            h0[r] = _mm512_fmadd_ph(b0_, x_, h0[r]);                                               \
            h1[r] = _mm512_fmadd_ph(b1_, x_, h1[r]);                                               \
        }                                                                                          \
    }
                ROWS_STEP(0)
                ROWS_STEP(1)
                ROWS_STEP(2)
                ROWS_STEP(3)
#undef ROWS_STEP
            }
            for (int r = 0; r < m; r++) {
                o0[r] = _mm512_fmadd_ps(s0, col_sums(h0[r]), o0[r]);
                o1[r] = _mm512_fmadd_ps(s1, col_sums(h1[r]), o1[r]);
            }
        }
    }
    for (int r = 0; r < m; r++) {
        const __m512 u = _mm512_set1_ps(us[r]);
        _mm512_storeu_ps(c + (size_t)r * ldc, _mm512_mul_ps(o0[r], u));
        _mm512_storeu_ps(c + (size_t)r * ldc + 16, _mm512_mul_ps(o1[r], u));
    }
}

/* asum: with pairs, the rows' powers of two that undo the pairs' scaling (ukernel.h). */
static void q4_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    if (w->zero || !ap) {
        FFN_AVX512_ROWS_1_6(m, ffn__oct_fma_body, kc, a, as, w, c, ldc)
        return;
    }
    if (m == 1) {
        h_row1(kc, ap, as, asum[0], w, c);
        return;
    }
    FFN_AVX512_ROWS_1_6(m, h_body, kc, ap, as, asum, w, c, ldc)
}

const ffn_ukernels_q ffn_ukernels_q_avx512fp16 = {
    .isa = "avx512fp16",
    .gemv_name = {NULL, "q4_gemv__avx512fp16"},
    .f32 = &ffn_ukernels_avx512,
    .gemv = {NULL, q4_gemv},
    .dequant = {NULL, ffn__oct_q4_dequant},
    .stream_rows = 12,
    .stream_g = G,
    .q4_layout = FFN_UKR_Q4_OCT,
    .a_pairs = true,
    .a_pairs_fp16 = true,
};
