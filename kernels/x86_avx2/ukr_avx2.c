/* AVX2 + FMA + F16C microkernels (x86-64-v3: Haswell and later, Zen 1-5, Intel client CPUs
 * since Alder Lake) for the driver's fp32 schedule, with fp32, bf16 and fp16 weights.
 *  - f32_gemm__avx2_6x16: 6 rows x 16 columns, 12 ymm accumulators + 2 for B + 1 broadcast of
 *    the 16 ymm registers (the BLIS Haswell sgemm tile is 6x16 for the same reason);
 *  - gemv (decode, T <= 6): whole panels streamed with a prefetch 4 KiB ahead; one row keeps
 *    four accumulators, summed in a fixed order, over the panel in memory order or as four
 *    streams over the quarters of K, as the CPU's tuning says (ukr_avx512.c's gemv: on the
 *    SPR-class VM four streams were 7-25% faster for AVX2, memory order 20-35% on Zen 4);
 *  - bf16 weights are widened in registers by a zero-extend and a shift by 16 (VPMOVZXWD,
 *    VPSLLD), fp16 weights by VCVTPH2PS (F16C);
 *  - activations: the same exp / erfc polynomials as the AVX-512 kernels (avx512_common.h
 *    cites them), on 8 lanes, 2^n built from the exponent bits. */
#include <immintrin.h>
#include <string.h>

#include "../driver/ukernel.h"
#include "../driver/ukr_rows.h"
#include "ukr_avx2_q.h"

#define FFN_AI static inline __attribute__((always_inline))

enum { MR = 6, NR = 16, PF_ROW1 = 4096, PF_STREAM = 4096 };

FFN_AI void load_row(const int wdt, const void *B, size_t k, __m256 *b0, __m256 *b1)
{
    if (wdt == FFN_UKR_F32) {
        const float *b = (const float *)B + k * NR;
        *b0 = _mm256_loadu_ps(b);
        *b1 = _mm256_loadu_ps(b + 8);
        return;
    }
    const uint16_t *w = (const uint16_t *)B + k * NR;
    const __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)w);
    const __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(w + 8));
    if (wdt == FFN_UKR_BF16) {
        *b0 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(lo), 16));
        *b1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(hi), 16));
    } else {
        *b0 = _mm256_cvtph_ps(lo);
        *b1 = _mm256_cvtph_ps(hi);
    }
}

FFN_AI void row1(const int wdt, size_t kc, const float *A, size_t as, const void *B, float *C)
{
    const size_t rowb = wdt == FFN_UKR_F32 ? NR * 4 : NR * 2;
    __m256 a0[4], a1[4];
    for (int i = 0; i < 4; i++)
        a0[i] = a1[i] = _mm256_setzero_ps();
    const char *bs = (const char *)B;
    const size_t q = kc / 4, k4 = 4 * q;
    const ffn__row1_order o = ffn__row1_order_of(q); /* memory order or four streams */
    for (size_t p = 0; p < q; p++)
        for (int i = 0; i < 4; i++) {
            const size_t kk = (size_t)i * o.lane + p * o.step;
            if ((kk * rowb) % 64 == 0) _mm_prefetch(bs + kk * rowb + PF_ROW1, _MM_HINT_T0);
            __m256 b0, b1;
            load_row(wdt, B, kk, &b0, &b1);
            const __m256 a = _mm256_broadcast_ss(A + kk * as);
            a0[i] = _mm256_fmadd_ps(a, b0, a0[i]);
            a1[i] = _mm256_fmadd_ps(a, b1, a1[i]);
        }
    for (size_t k = k4; k < kc; k++) {
        __m256 b0, b1;
        load_row(wdt, B, k, &b0, &b1);
        const __m256 a = _mm256_broadcast_ss(A + k * as);
        a0[0] = _mm256_fmadd_ps(a, b0, a0[0]);
        a1[0] = _mm256_fmadd_ps(a, b1, a1[0]);
    }
    _mm256_storeu_ps(C, _mm256_add_ps(_mm256_add_ps(a0[0], a0[1]), _mm256_add_ps(a0[2], a0[3])));
    _mm256_storeu_ps(C + 8,
                     _mm256_add_ps(_mm256_add_ps(a1[0], a1[1]), _mm256_add_ps(a1[2], a1[3])));
}

/* The tile for each row count m = 1..6, its 2m accumulators named (driver/ukr_rows.h says why),
 * for the GEMM (fp32 B, acc, the next chunk's slice pf prefetched before the k loop) and for the
 * decode stream's rows 2..6 (weights of the table's dtype widened in registers, prefetched
 * PF_STREAM bytes ahead). With arrays of accumulators the partial GEMM tiles (the last row
 * panel of a block: 4 of 16 rows at T = 16) ran at 42-47 GFLOP/s against 101 for the full tile
 * (Zen 4, one thread, A in L2), and the stream stored every accumulator each k
 * step. With pf tested inside the k loop (one line a step) the AVX2 FFN prefill ran 5-8%
 * slower (T = 512, d = 2048, f = 5632, one and two threads, toggled in one process). */
#define TILE_DECL(r) __m256 c##r##0, c##r##1;
#define TILE_LD(r)                                                                                 \
    c##r##0 = _mm256_loadu_ps(C + (r)*ldc);                                                        \
    c##r##1 = _mm256_loadu_ps(C + (r)*ldc + 8);
#define TILE_ZR(r) c##r##0 = c##r##1 = _mm256_setzero_ps();
#define TILE_FM(r)                                                                                 \
    {                                                                                              \
        const __m256 a = _mm256_broadcast_ss(ak + (r));                                            \
        c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0);                                                 \
        c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1);                                                 \
    }
#define TILE_ST(r)                                                                                 \
    _mm256_storeu_ps(C + (r)*ldc, c##r##0);                                                        \
    _mm256_storeu_ps(C + (r)*ldc + 8, c##r##1);
#define TILE(name, WDT, STREAM, ROWS)                                                              \
    static void name(size_t kc, const float *A, size_t as, const void *B, float *C, size_t ldc,    \
                     bool acc, const char *pf, size_t pf_bytes)                                    \
    {                                                                                              \
        const size_t rowb = WDT == FFN_UKR_F32 ? NR * 4 : NR * 2;                                  \
        const char *bs = (const char *)B;                                                          \
        FFN_TILE_ACC(ROWS)                                                                         \
        FFN_TILE_PREFETCH()                                                                        \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (STREAM && (k * rowb) % 64 == 0)                                                    \
                _mm_prefetch(bs + k * rowb + PF_STREAM, _MM_HINT_T0);                              \
            __m256 b0, b1;                                                                         \
            load_row(WDT, B, k, &b0, &b1);                                                         \
            const float *ak = A + k * as;                                                          \
            ROWS(TILE_FM)                                                                          \
        }                                                                                          \
        ROWS(TILE_ST)                                                                              \
    }
/* One table of tiles, rows 1..6: *name##1 .. *name##6. */
#define TILES(name, WDT, STREAM)                                                                   \
    TILE(name##1, WDT, STREAM, FFN_ROWS1)                                                          \
    TILE(name##2, WDT, STREAM, FFN_ROWS2)                                                          \
    TILE(name##3, WDT, STREAM, FFN_ROWS3)                                                          \
    TILE(name##4, WDT, STREAM, FFN_ROWS4)                                                          \
    TILE(name##5, WDT, STREAM, FFN_ROWS5)                                                          \
    TILE(name##6, WDT, STREAM, FFN_ROWS6)                                                          \
    static const ffn_tile_fn name[MR] = {name##1, name##2, name##3, name##4, name##5, name##6};
TILES(gemm_tiles, FFN_UKR_F32, false)
TILES(stream_f32, FFN_UKR_F32, true)
TILES(stream_bf16, FFN_UKR_BF16, true)
TILES(stream_f16, FFN_UKR_F16, true)

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pfv, size_t pfb)
{
    gemm_tiles[(m < MR ? m : MR) - 1](kc, a, as, b, c, ldc, acc, pfv, pfb);
}

/* The decode stream: one row (row1), 2..6 rows as a tile. */
#define GEMV(fname, wdt, tiles)                                                                    \
    static void fname(size_t m, size_t kc, const float *a, size_t as, const void *b, float *c,     \
                      size_t ldc)                                                                  \
    {                                                                                              \
        if (m == 1)                                                                                \
            row1(wdt, kc, a, as, b, c);                                                            \
        else                                                                                       \
            tiles[(m < MR ? m : MR) - 1](kc, a, as, b, c, ldc, false, NULL, 0);                    \
    }
GEMV(gemv_f32, FFN_UKR_F32, stream_f32)
GEMV(gemv_bf16, FFN_UKR_BF16, stream_bf16)
GEMV(gemv_f16, FFN_UKR_F16, stream_f16)

static void widen_bf16(size_t n, const uint16_t *src, float *dst)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        _mm256_storeu_ps(dst + i,
                         _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16)));
    }
    for (; i < n; i++) {
        const uint32_t u = (uint32_t)src[i] << 16;
        memcpy(dst + i, &u, 4);
    }
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    for (; i < n; i++) {
        uint16_t tmp[8] = {src[i]};
        float out[8];
        _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(void *)tmp)));
        dst[i] = out[0];
    }
}

/* ---- activations (8 lanes) --------------------------------------------------------------- */

FFN_AI __m256 v_exp(__m256 x)
{
    /* min/max return their second operand when one is NaN: keep x second so NaN survives. */
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^n for n in [-151, 129]: two factors 2^(n/2) and 2^(n - n/2), each a normal float
     * built from its exponent bits, so underflow to 0 and overflow to Inf come out right. */
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i h1 = _mm256_srai_epi32(ni, 1), h2 = _mm256_sub_epi32(ni, h1);
    const __m256 s1 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h1, _mm256_set1_epi32(127)), 23));
    const __m256 s2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h2, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

FFN_AI __m256 v_silu(__m256 x)
{
    return _mm256_div_ps(
        x, _mm256_add_ps(_mm256_set1_ps(1.0f), v_exp(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

FFN_AI __m256 v_gelu_tanh(__m256 x)
{
    const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    const __m256 z = _mm256_mul_ps(_mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x),
                                   _mm256_set1_ps(-1.5957691216057308f)); /* -2 sqrt(2/pi) */
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), v_exp(z)));
}

FFN_AI __m256 v_gelu(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 za =
        _mm256_mul_ps(_mm256_and_ps(x, absmask), _mm256_set1_ps(0.70710678118654752f));
    /* erfc(10) < 3e-45: beyond, y = 0 exactly (and z stays finite so z*z - hi is no Inf-Inf) */
    const __m256 small = _mm256_cmp_ps(za, _mm256_set1_ps(10.0f), _CMP_LE_OQ);
    const __m256 z = _mm256_min_ps(_mm256_set1_ps(10.0f), za);
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(half, z, one));
    __m256 p = _mm256_set1_ps(0.17087277f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
    const __m256 zz = _mm256_mul_ps(z, z);
    const __m256 zlo = _mm256_fmsub_ps(z, z, zz); /* z*z = zz + zlo exactly */
    __m256 e = v_exp(_mm256_sub_ps(p, zz));
    e = _mm256_fnmadd_ps(e, zlo, e); /* exp(-zz - zlo) ~ exp(-zz)(1 - zlo) */
    const __m256 y = _mm256_and_ps(small, _mm256_mul_ps(t, e)); /* erfc(z) */
    const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    const __m256 hy = _mm256_mul_ps(half, y);
    /* NaN: x * (anything) stays NaN since x itself is NaN */
    return _mm256_mul_ps(x, _mm256_blendv_ps(hy, _mm256_sub_ps(one, hy), pos));
}

FFN_AI __m256 v_act(ffn_act a, __m256 g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return _mm256_max_ps(_mm256_setzero_ps(), g); /* NaN (second operand) passes */
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return v_gelu(g);
    case FFN_ACT_GELU_TANH:
        return v_gelu_tanh(g);
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
    default:
        return v_silu(g);
    }
}

/* n (1..8) floats at p, the rest of the vector zero. */
FFN_AI __m256 load_n(const float *p, size_t n)
{
    if (n >= 8) return _mm256_loadu_ps(p);
    float tmp[8] = {0};
    memcpy(tmp, p, n * 4);
    return _mm256_loadu_ps(tmp);
}

FFN_AI void store_n(float *p, __m256 v, size_t n)
{
    if (n >= 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    float tmp[8];
    _mm256_storeu_ps(tmp, v);
    memcpy(p, tmp, n * 4);
}

void ffn__avx2_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                   const float *bg, const float *bu, float *h, size_t ldh)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += 8) {
            const size_t w = n - i;
            __m256 gv = load_n(g + r * ldc + i, w);
            if (bg) gv = _mm256_add_ps(gv, load_n(bg + i, w));
            __m256 hv = v_act(a, gv);
            if (u) {
                __m256 uv = load_n(u + r * ldc + i, w);
                if (bu) uv = _mm256_add_ps(uv, load_n(bu + i, w));
                hv = _mm256_mul_ps(hv, uv);
            }
            store_n(h + r * ldh + i, hv, w);
        }
}

const ffn_ukernels ffn_ukernels_avx2 = {
    .isa = "avx2",
    .gemm_name = "f32_gemm__avx2_6x16",
    .mr = MR,
    .nr = NR,
    .kc = 256,
    /* 516 = 86 tiles: T = 512 is one row block (its A chunk, 516 x 256 fp32 = 528 KB, stays in
     * L2), so the weights stream once; 504 split it into two blocks of 258 and read every
     * weight panel twice (SPR-class VM: 80-87% of the FMA peak against 77-83%) */
    .mc = 516,
    /* the down GEMM's row blocks at most 192 rows (T = 512: 3 blocks of 174; a 174 KiB A chunk
     * for its 4 panels): on Zen 4 (1 MiB L2) the 516-row chunk missed L2, and one
     * or two threads ran the down GEMM at 76 / 149 GFLOP/s against 86 / 174 with 192 (96 and
     * 128: the same within the spread), toggled in one process; AVX-512 and portable unchanged */
    .mc_down = 192,
    .gemm = gemm,
    .gemv = {gemv_f32, gemv_bf16, gemv_f16},
    .stream_rows = {MR, MR, MR},
    .stream_g = MR,
    .widen = {NULL, widen_bf16, widen_f16},
    .act = ffn__avx2_act,
};
