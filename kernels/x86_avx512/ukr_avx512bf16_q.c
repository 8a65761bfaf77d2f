/* AVX512-BF16 W4A16 microkernels (kernels/driver/ukernel.h): int4 panels of 32 columns in the
 * FFN_UKR_Q4_OCT nibble order (a 64-byte vector is 16 columns x 8 rows), activations rounded to
 * bf16 by the driver; prefill on pair tiles (symmetric), else over the f32_gemm__avx512_14x32
 * tile.
 *  - q4_gemv__avx512bf16 (symmetric, with the driver's bf16 pairs ap): VPERMW looks each nibble
 *    up in a 32-entry table of the bf16 values of the codes -8..7 (it reads an index's low 5
 *    bits, so the table holds the 16 values twice and the bit above a nibble needs no mask),
 *    after a 16-bit shift by 4, 8 or 12. A word's low half holds rows 8b + i and its high half
 *    rows 8b + 4 + i, so one lookup gives 16 columns of bf16 pairs (rows 8b + i, 8b + 4 + i)
 *    and VDPBF16PS multiplies them by the pair of activations ap broadcasts: 32 products per
 *    instruction, each exact (a bf16 code times a bf16 activation fits fp32), summed per group
 *    and scaled once by the group's bf16 scale (out += s partial), as the fp32 streams do. Per
 *    256 weights 22 vector ALU instructions (6 shifts, 8 VPERMW, 8 VDPBF16PS; the activation
 *    broadcasts are loads) where q4_gemv__avx512's VPERMPS stream takes 48: on Zen 4
 *    (a harness over 32 x 4096 panels, groups of 128) 2-3x its rate with the
 *    weights in L2 and 1.7x from DRAM with two threads. VDPBF16PS flushes denormal inputs
 *    and outputs to zero (DAZ/FTZ): an absolute error below 2^-126 per term, inside the bound
 *    of tests/test_kernels_quant.c. One row (T = 1) reads a panel as one stream in memory
 *    order, prefetching 2 KiB ahead and on into the panel the driver streams next
 *    (ffn_ukr_qpanel.next); four concurrent streams per panel, as q4_gemv__avx512 reads,
 *    measured no faster (bench_kernels --case qdecode, Zen 4). m > 1 rows share
 *    each lookup.
 *  - with zero points (no ap): w' = u s - z s built exactly by one FMA per 16 weights (u, z <=
 *    15 and bf16 s: the products are exact) from the nibble looked up by VPERMPS after a
 *    shift, then fp32 FMAs with the activations (avx512_oct_q.h, shared with the AVX512-FP16
 *    table);
 *  - q4_pdequant + q4_pgemm (prefill, symmetric): the lookups once per row block into the
 *    driver's scratch (unscaled code pairs, 8 KiB a 256-row chunk), then VDPBF16PS on tiles of
 *    up to 14 rows (28 zmm partial sums, the bf16 tile's shape), each group's sums scaled into
 *    the tile in L1 at the group's end. Zen 4 (d = 4096, f = 11008, 2 threads): T =
 *    16, 64 and 512 in 14.4-16.0, 46.7 and 351 ms against 24.4, 84.0 and 683 ms for the
 *    dequantizing fp32 tile, 0.90x, 0.96x and 0.92-0.98x the bf16-weight VDPBF16PS kernel
 *    (BENCHMARKS.md);
 *  - the dequantization for prefill with zero points (avx512_oct_q.h): the exact w' into the
 *    fp32 scratch of the GEMM tile.
 * W4 only: the table's W8 entries are NULL (registry.c builds only the W4A16 kernel on it). */
#include "avx512_oct_q.h"

extern const ffn_ukernels ffn_ukernels_avx512;

enum { NR = 32, G = 6, PF = 2048 };

/* bf16 bits of the code (e & 15) - 8, e < 32. */
static const uint16_t code_bf16[32] = {
    0xc100, 0xc0e0, 0xc0c0, 0xc0a0, 0xc080, 0xc040, 0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000,
    0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0xc100, 0xc0e0, 0xc0c0, 0xc0a0, 0xc080, 0xc040,
    0xc000, 0xbf80, 0x0000, 0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0};

/* Pairs (rows 8b + i, 8b + 4 + i) of the 16 columns of v as bf16, i a constant 0..3. */
#define PAIRS(v, i, tab)                                                                           \
    ((__m512bh)_mm512_permutexvar_epi16((i) ? _mm512_srli_epi16((v), 4 * (i)) : (v), (tab)))

/* One row: the panel as one stream in memory order, PF bytes ahead and on into the next panel,
 * four accumulator chains (rows 8b + 0/2 and 8b + 1/3 of each half) summed at a group's end. */
static void pair_row1(size_t kc, const uint32_t *ap, size_t as, const ffn_ukr_qpanel *w, float *c)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group, bpg = Gs / 8, bytes = kc / 8 * (NR * 4);
    const __m512i tab = _mm512_loadu_si512(code_bf16);
    __m512 o0 = _mm512_setzero_ps(), o1 = o0;
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 p0a = _mm512_setzero_ps(), p0b = p0a, p1a = p0a, p1b = p0a;
        for (size_t b = g * bpg; b < (g + 1) * bpg; b++) {
            const size_t off = b * (NR * 4) + PF;
            const uint8_t *pf = off < bytes ? q + off : w->next ? w->next + (off - bytes) : NULL;
            if (pf) {
                _mm_prefetch((const char *)pf, _MM_HINT_T0);
                _mm_prefetch((const char *)pf + 64, _MM_HINT_T0);
            }
            __m512i v0, v1;
            ffn__oct_load(q, b, &v0, &v1);
            const uint32_t *x4 = ap + b * as * 4;
            __m512bh x_ = (__m512bh)_mm512_set1_epi32((int)x4[0]);
            p0a = _mm512_dpbf16_ps(p0a, PAIRS(v0, 0, tab), x_);
            p1a = _mm512_dpbf16_ps(p1a, PAIRS(v1, 0, tab), x_);
            x_ = (__m512bh)_mm512_set1_epi32((int)x4[1]);
            p0b = _mm512_dpbf16_ps(p0b, PAIRS(v0, 1, tab), x_);
            p1b = _mm512_dpbf16_ps(p1b, PAIRS(v1, 1, tab), x_);
            x_ = (__m512bh)_mm512_set1_epi32((int)x4[2]);
            p0a = _mm512_dpbf16_ps(p0a, PAIRS(v0, 2, tab), x_);
            p1a = _mm512_dpbf16_ps(p1a, PAIRS(v1, 2, tab), x_);
            x_ = (__m512bh)_mm512_set1_epi32((int)x4[3]);
            p0b = _mm512_dpbf16_ps(p0b, PAIRS(v0, 3, tab), x_);
            p1b = _mm512_dpbf16_ps(p1b, PAIRS(v1, 3, tab), x_);
        }
        __m512 s0, s1;
        ffn__avx512_gscales(w->gscale, g, &s0, &s1);
        o0 = _mm512_fmadd_ps(s0, _mm512_add_ps(p0a, p0b), o0);
        o1 = _mm512_fmadd_ps(s1, _mm512_add_ps(p1a, p1b), o1);
    }
    _mm512_storeu_ps(c, o0);
    _mm512_storeu_ps(c + 16, o1);
}

/* m rows: each block's lookups shared by the rows, partial sums per group. */
FFN_AI void pair_body(const int m, size_t kc, const uint32_t *ap, size_t as,
                      const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    const uint8_t *q = w->q;
    const size_t Gs = w->group, bpg = Gs / 8;
    const __m512i tab = _mm512_loadu_si512(code_bf16);
    __m512 o0[G], o1[G], p0[G], p1[G];
    for (int r = 0; r < m; r++)
        o0[r] = o1[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < kc / Gs; g++) {
        for (int r = 0; r < m; r++)
            p0[r] = p1[r] = _mm512_setzero_ps();
        for (size_t b = g * bpg; b < (g + 1) * bpg; b++) {
            __m512i v0, v1;
            ffn__oct_load_ahead(q, b, &v0, &v1);
            const uint32_t *x4 = ap + b * as * 4;
#define ROWS_STEP(i)                                                                               \
    {                                                                                              \
        const __m512bh b0 = PAIRS(v0, i, tab), b1 = PAIRS(v1, i, tab);                             \
        for (int r = 0; r < m; r++) {                                                              \
            const __m512bh x_ = (__m512bh)_mm512_set1_epi32((int)x4[(size_t)r * 4 + (i)]);         \
            p0[r] = _mm512_dpbf16_ps(p0[r], b0, x_);                                               \
            p1[r] = _mm512_dpbf16_ps(p1[r], b1, x_);                                               \
        }                                                                                          \
    }
            ROWS_STEP(0)
            ROWS_STEP(1)
            ROWS_STEP(2)
            ROWS_STEP(3)
#undef ROWS_STEP
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

static void q4_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    (void)asum;
    if (w->zero || !ap) {
        FFN_AVX512_ROWS_1_6(m, ffn__oct_fma_body, kc, a, as, w, c, ldc)
        return;
    }
    if (m == 1) {
        pair_row1(kc, ap, as, w, c);
        return;
    }
    FFN_AVX512_ROWS_1_6(m, pair_body, kc, ap, as, w, c, ldc)
}

/* ---- prefill on bf16 pairs ---------------------------------------------------------------- */

/* The chunk's code pairs, unscaled: the lookups the stream does per row group, done once per
 * row block (the driver's scratch, 128 bytes per 8 rows x 32 columns: 8 KiB for a 256-row
 * chunk, in L1 for every row tile of the block). */
static void q4_pdequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, uint32_t *dst)
{
    const __m512i tab = _mm512_loadu_si512(code_bf16);
    for (size_t b = 0; b < kc / 8; b++) {
        __m512i v0, v1;
        ffn__oct_load(w->q, k0 / 8 + b, &v0, &v1);
        uint32_t *o = dst + b * 4 * NR;
        _mm512_storeu_si512(o, (__m512i)PAIRS(v0, 0, tab));
        _mm512_storeu_si512(o + 16, (__m512i)PAIRS(v1, 0, tab));
        _mm512_storeu_si512(o + NR, (__m512i)PAIRS(v0, 1, tab));
        _mm512_storeu_si512(o + NR + 16, (__m512i)PAIRS(v1, 1, tab));
        _mm512_storeu_si512(o + 2 * NR, (__m512i)PAIRS(v0, 2, tab));
        _mm512_storeu_si512(o + 2 * NR + 16, (__m512i)PAIRS(v1, 2, tab));
        _mm512_storeu_si512(o + 3 * NR, (__m512i)PAIRS(v0, 3, tab));
        _mm512_storeu_si512(o + 3 * NR + 16, (__m512i)PAIRS(v1, 3, tab));
    }
}

enum { MRP = 14 }; /* the fp32 table's mr: 28 zmm partial sums, 2 for B, 1 for A */

/* m rows: each group's products in registers, then scaled into C (in L1) at the group's end. */
FFN_AI void pg_body(const int m, size_t kc, const uint32_t *ap, size_t as, const uint32_t *bp,
                    const uint16_t *gs, size_t Gs, float *c, size_t ldc, bool acc)
{
    if (!acc)
        for (int r = 0; r < m; r++) {
            _mm512_storeu_ps(c + (size_t)r * ldc, _mm512_setzero_ps());
            _mm512_storeu_ps(c + (size_t)r * ldc + 16, _mm512_setzero_ps());
        }
    const size_t bpg = Gs / 8;
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 p0[MRP], p1[MRP];
        for (int r = 0; r < m; r++)
            p0[r] = p1[r] = _mm512_setzero_ps();
        for (size_t b = g * bpg; b < (g + 1) * bpg; b++) {
            const uint32_t *x4 = ap + b * as * 4;
            for (int i = 0; i < 4; i++) {
                const __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp + (b * 4 + (size_t)i) * NR);
                const __m512bh b1 =
                    (__m512bh)_mm512_loadu_si512(bp + (b * 4 + (size_t)i) * NR + 16);
                for (int r = 0; r < m; r++) {
                    const __m512bh x_ =
                        (__m512bh)_mm512_set1_epi32((int)x4[(size_t)r * 4 + (size_t)i]);
                    p0[r] = _mm512_dpbf16_ps(p0[r], b0, x_);
                    p1[r] = _mm512_dpbf16_ps(p1[r], b1, x_);
                }
            }
        }
        __m512 s0, s1;
        ffn__avx512_gscales(gs, g, &s0, &s1);
        for (int r = 0; r < m; r++) {
            float *cr = c + (size_t)r * ldc;
            _mm512_storeu_ps(cr, _mm512_fmadd_ps(s0, p0[r], _mm512_loadu_ps(cr)));
            _mm512_storeu_ps(cr + 16, _mm512_fmadd_ps(s1, p1[r], _mm512_loadu_ps(cr + 16)));
        }
    }
}

static void q4_pgemm(size_t m, size_t kc, const uint32_t *ap, size_t as, const uint32_t *bp,
                     const uint16_t *gs, size_t Gs, float *c, size_t ldc, bool acc)
{
    switch (m) {
#define PG_CASE(M)                                                                                 \
    case M:                                                                                        \
        pg_body(M, kc, ap, as, bp, gs, Gs, c, ldc, acc);                                           \
        break;
        PG_CASE(14)
        PG_CASE(13)
        PG_CASE(12)
        PG_CASE(11)
        PG_CASE(10)
        PG_CASE(9)
        PG_CASE(8)
        PG_CASE(7)
        PG_CASE(6)
        PG_CASE(5)
        PG_CASE(4)
        PG_CASE(3)
        PG_CASE(2)
#undef PG_CASE
    default:
        pg_body(1, kc, ap, as, bp, gs, Gs, c, ldc, acc);
        break;
    }
}

const ffn_ukernels_q ffn_ukernels_q_avx512bf16 = {
    .isa = "avx512bf16",
    .gemv_name = {NULL, "q4_gemv__avx512bf16"},
    .f32 = &ffn_ukernels_avx512,
    .gemv = {NULL, q4_gemv},
    .dequant = {NULL, ffn__oct_q4_dequant},
    .pdequant = q4_pdequant,
    .pgemm = q4_pgemm,
    .stream_rows = 12,
    .stream_g = G,
    .q4_layout = FFN_UKR_Q4_OCT,
    .a_pairs = true,
};
