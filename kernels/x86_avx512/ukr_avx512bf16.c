/* AVX512-BF16 microkernels for the driver's bf16 tile schedule (Cooper Lake, Zen 4/5, and the
 * decode and conversion half of the AMX kernel). Weights are bf16 in VNNI pair panels of 32
 * columns ([K/2][32][2], the layout VDPBF16PS and TDPBF16PS both read).
 *  - bf16_gemm__avx512bf16_14x32: prefill; x and h rounded to bf16, VDPBF16PS on a 14 x 32
 *    register tile (28 zmm accumulators), K in chunks of KCP pairs with the accumulators in the
 *    caller's buffer between chunks;
 *  - gemv (decode): fp32 x times the bf16 pairs widened in registers (even k by a shift, odd k
 *    by a mask), fp32 accumulation, DECODE_G rows per pass over a panel (the first pass from
 *    memory, the others from L2); even and odd k accumulate separately and are added at the end.
 * Where decode stops streaming is this CPU's: the stream's fp32 FMAs run at the FMA rate, the
 * tile's VDPBF16PS at its own, and the two differ by CPU. On an SPR-class VM (d=2048 f=5632
 * and d=4096 f=11008 SwiGLU, weights flushed), where VDPBF16PS has the FMA's flop rate
 * (BENCHMARKS.md: the bf16 tile ran at 0.63x our fp32 prefill there), streaming beat the tile
 * at every T measured up to 64 (by 10-31% at T = 8..64), and 6 rows a pass measured 2-14%
 * faster than 4. On a Zen 5 VM (EPYC 9005), where the probe below measures 2.0x
 * the FMA's flops, the tile beat streaming from T = 2 (0.94 against 1.17 ms at d = 2048; 7.4
 * against 13.9 ms at T = 64) and tied it at T = 1. So the table's stream_rows_fn times both
 * instructions once per process (stream_rows_here, five interleaved rounds, about 1 ms):
 * where VDPBF16PS gives under 1.5x the FMA's flops decode streams up to T = 64, else only the
 * one-row decode streams. */
#include "avx512_common.h"
#include "ukr_bf16t.h"

#include <math.h>
#include <stdatomic.h>
#include <time.h>

/* STREAM_MAX: the tokens decode streams where VDPBF16PS has the FMA's rate (stream_rows_here) */
enum { MR = 14, NR = 32, KCP = 256, DECODE_G = 6, PF_P = 32, STREAM_MAX = 64 };

/* ---- decode ------------------------------------------------------------------------------ */

/* C[m][32] = A[m][kc] (fp32, k-major with stride as) * B (bf16 pairs, 64 values per pair row). */
FFN_AI void shift_body(const int m, size_t kc, const float *A, size_t as, const uint16_t *B,
                       float *C, size_t ldc)
{
    __m512 e0[DECODE_G], e1[DECODE_G], o0[DECODE_G], o1[DECODE_G];
    for (int r = 0; r < m; r++)
        e0[r] = e1[r] = o0[r] = o1[r] = _mm512_setzero_ps();
    const __m512i himask = _mm512_set1_epi32((int)0xffff0000u);
    const size_t np = kc / 2;
    for (size_t p = 0; p < np; p++) {
        /* 128 bytes per pair row: prefetch 4 KiB ahead (prefetches past the panel are harmless) */
        _mm_prefetch((const char *)(B + (p + PF_P) * 64), _MM_HINT_T0);
        _mm_prefetch((const char *)(B + (p + PF_P) * 64) + 64, _MM_HINT_T0);
        const __m512i v0 = _mm512_loadu_si512(B + p * 64), v1 = _mm512_loadu_si512(B + p * 64 + 32);
        const __m512 lo0 = _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16));
        const __m512 hi0 = _mm512_castsi512_ps(_mm512_and_si512(v0, himask));
        const __m512 lo1 = _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16));
        const __m512 hi1 = _mm512_castsi512_ps(_mm512_and_si512(v1, himask));
        for (int r = 0; r < m; r++) {
            const __m512 ae = _mm512_set1_ps(A[2 * p * as + (size_t)r]);
            const __m512 ao = _mm512_set1_ps(A[(2 * p + 1) * as + (size_t)r]);
            e0[r] = _mm512_fmadd_ps(ae, lo0, e0[r]);
            e1[r] = _mm512_fmadd_ps(ae, lo1, e1[r]);
            o0[r] = _mm512_fmadd_ps(ao, hi0, o0[r]);
            o1[r] = _mm512_fmadd_ps(ao, hi1, o1[r]);
        }
    }
    if (kc & 1) { /* the last k has no partner in A (its partner weight is zero padding) */
        const __m512i v0 = _mm512_loadu_si512(B + np * 64),
                      v1 = _mm512_loadu_si512(B + np * 64 + 32);
        const __m512 lo0 = _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16));
        const __m512 lo1 = _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16));
        for (int r = 0; r < m; r++) {
            const __m512 ae = _mm512_set1_ps(A[2 * np * as + (size_t)r]);
            e0[r] = _mm512_fmadd_ps(ae, lo0, e0[r]);
            e1[r] = _mm512_fmadd_ps(ae, lo1, e1[r]);
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(C + (size_t)r * ldc, _mm512_add_ps(e0[r], o0[r]));
        _mm512_storeu_ps(C + (size_t)r * ldc + 16, _mm512_add_ps(e1[r], o1[r]));
    }
}

/* One row: four pair rows' even/odd accumulators, summed in a fixed order, over the pair rows
 * in memory order or as four concurrent streams over the quarters of the panel, as the CPU's
 * tuning says (ffn__decode_split; four streams read 10-15% less per second on Zen 4
 * and 1-2% more on an SPR-class VM with AMX). */
static void shift_m1(size_t kc, const float *A, size_t as, const uint16_t *B, float *C)
{
    __m512 acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = _mm512_setzero_ps();
    const __m512i himask = _mm512_set1_epi32((int)0xffff0000u);
    const size_t np = kc / 2, q = np / 4, np4 = 4 * q; /* as row1 of ukr_avx512.c */
    const ffn__row1_order o = ffn__row1_order_of(q);
    for (size_t p = 0; p < q; p++)
        for (int i = 0; i < 4; i++) {
            const size_t pp = (size_t)i * o.lane + p * o.step;
            _mm_prefetch((const char *)(B + (pp + PF_P) * 64), _MM_HINT_T0);
            _mm_prefetch((const char *)(B + (pp + PF_P) * 64) + 64, _MM_HINT_T0);
            const __m512i v0 = _mm512_loadu_si512(B + pp * 64),
                          v1 = _mm512_loadu_si512(B + pp * 64 + 32);
            const __m512 ae = _mm512_set1_ps(A[2 * pp * as]);
            const __m512 ao = _mm512_set1_ps(A[(2 * pp + 1) * as]);
            acc[i][0] =
                _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[i][0]);
            acc[i][1] =
                _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[i][1]);
            acc[i][2] =
                _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v0, himask)), acc[i][2]);
            acc[i][3] =
                _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v1, himask)), acc[i][3]);
        }
    for (size_t pp = np4; pp < np; pp++) {
        const __m512i v0 = _mm512_loadu_si512(B + pp * 64),
                      v1 = _mm512_loadu_si512(B + pp * 64 + 32);
        const __m512 ae = _mm512_set1_ps(A[2 * pp * as]), ao = _mm512_set1_ps(A[(2 * pp + 1) * as]);
        acc[0][0] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[0][0]);
        acc[0][1] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[0][1]);
        acc[0][2] =
            _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v0, himask)), acc[0][2]);
        acc[0][3] =
            _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v1, himask)), acc[0][3]);
    }
    if (kc & 1) {
        const __m512i v0 = _mm512_loadu_si512(B + np * 64),
                      v1 = _mm512_loadu_si512(B + np * 64 + 32);
        const __m512 ae = _mm512_set1_ps(A[2 * np * as]);
        acc[0][0] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[0][0]);
        acc[0][1] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[0][1]);
    }
    _mm512_storeu_ps(C, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0][0], acc[0][2]),
                                                    _mm512_add_ps(acc[1][0], acc[1][2])),
                                      _mm512_add_ps(_mm512_add_ps(acc[2][0], acc[2][2]),
                                                    _mm512_add_ps(acc[3][0], acc[3][2]))));
    _mm512_storeu_ps(C + 16, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0][1], acc[0][3]),
                                                         _mm512_add_ps(acc[1][1], acc[1][3])),
                                           _mm512_add_ps(_mm512_add_ps(acc[2][1], acc[2][3]),
                                                         _mm512_add_ps(acc[3][1], acc[3][3]))));
}

void ffn__bf16t_gemv(size_t m, size_t kc, const float *a, size_t as, const void *w, float *c,
                     size_t ldc)
{
    const uint16_t *B = w;
    switch (m) {
    case 1:
        shift_m1(kc, a, as, B, c);
        break;
    case 2:
        shift_body(2, kc, a, as, B, c, ldc);
        break;
    case 3:
        shift_body(3, kc, a, as, B, c, ldc);
        break;
    case 4:
        shift_body(4, kc, a, as, B, c, ldc);
        break;
    case 5:
        shift_body(5, kc, a, as, B, c, ldc);
        break;
    default:
        shift_body(6, kc, a, as, B, c, ldc);
        break;
    }
}

/* ---- where decode stops streaming --------------------------------------------------------- */

enum { PROBE_CHAINS = 16, PROBE_ITERS = 4096, PROBE_REPS = 5, PROBE_ROUNDS = 5 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds for PROBE_ITERS x PROBE_CHAINS independent FMAs (dp false) or VDPBF16PSs (dp true) on
 * zmm registers, the fastest of PROBE_REPS runs; *sink keeps the results alive. */
static double chain_seconds(bool dp, float *sink)
{
    double best = INFINITY;
    const __m512 b = _mm512_set1_ps(1e-3f);
    const __m512bh bh = (__m512bh)_mm512_set1_epi32(0x3b803b80); /* bf16 pairs of 2^-8 */
    for (int rep = 0; rep < PROBE_REPS; rep++) {
        __m512 acc[PROBE_CHAINS];
        for (int j = 0; j < PROBE_CHAINS; j++)
            acc[j] = _mm512_set1_ps((float)j);
        const double t0 = now_s();
        if (dp) {
            for (int i = 0; i < PROBE_ITERS; i++) {
#pragma GCC unroll 16 /* acc in registers, not on the stack */
                for (int j = 0; j < PROBE_CHAINS; j++)
                    acc[j] = _mm512_dpbf16_ps(acc[j], bh, bh);
            }
        } else {
            for (int i = 0; i < PROBE_ITERS; i++) {
#pragma GCC unroll 16
                for (int j = 0; j < PROBE_CHAINS; j++)
                    acc[j] = _mm512_fmadd_ps(acc[j], b, b);
            }
        }
        const double t = now_s() - t0;
        __m512 sum = acc[0];
        for (int j = 1; j < PROBE_CHAINS; j++)
            sum = _mm512_add_ps(sum, acc[j]);
        *sink += _mm512_reduce_add_ps(sum);
        if (t < best) best = t;
    }
    return best;
}

static unsigned stream_rows_here(void)
{
    static _Atomic unsigned cached; /* rows + 1 once measured */
    unsigned c = atomic_load_explicit(&cached, memory_order_relaxed);
    if (c) return c - 1;
    const uint64_t need = FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16;
    if ((ffn_cpu_features() & need) != need) /* asked of a CPU that cannot run it */
        return STREAM_MAX;
    float sink = 0;
    chain_seconds(true, &sink); /* warm both units up first */
    /* Rounds of one FMA and one VDPBF16PS measurement each, the fastest of each kept: a busy
     * host (the sanitized suite running two tests at once on two vCPUs) that slowed one
     * instruction's only measurement gave two processes of one CI run opposite answers. */
    double t_fma = INFINITY, t_dp = INFINITY;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        t_fma = fmin(t_fma, chain_seconds(false, &sink));
        t_dp = fmin(t_dp, chain_seconds(true, &sink));
    }
    /* flops per instruction: 32 for a zmm FMA, 64 for a zmm VDPBF16PS */
    const double ratio = t_dp > 0 ? 2.0 * t_fma / t_dp : 1.0;
    const unsigned rows = ratio >= 1.5 && isfinite(sink) ? 1 : STREAM_MAX;
    atomic_store_explicit(&cached, rows + 1, memory_order_relaxed);
    return rows;
}

static __mmask16 mask_n(size_t n) /* the low min(n, 16) bits */
{
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

void ffn__bf16t_narrow(size_t rows, size_t n, const float *src, size_t lds, uint16_t *dst,
                       size_t ldd)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += 16) {
            const __mmask16 k = mask_n(n - i);
            const __m512 v = _mm512_maskz_loadu_ps(k, src + r * lds + i);
            _mm256_mask_storeu_epi16(dst + r * ldd + i, k, (__m256i)_mm512_cvtneps_pbh(v));
        }
}

/* ---- VDPBF16PS prefill ------------------------------------------------------------------- */

/* C[m][32] (+)= A[m][2 np] (bf16, row stride lda elements) * B (np pair rows). */
FFN_AI void dp_body(const int m, size_t np, const uint16_t *A, size_t lda, const uint16_t *B,
                    float *C, bool load_c)
{
    __m512 c0[MR], c1[MR];
    for (int r = 0; r < m; r++) {
        if (load_c) {
            c0[r] = _mm512_loadu_ps(C + (size_t)r * NR);
            c1[r] = _mm512_loadu_ps(C + (size_t)r * NR + 16);
        } else {
            c0[r] = c1[r] = _mm512_setzero_ps();
        }
    }
    for (size_t p = 0; p < np; p++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(B + p * 64);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512(B + p * 64 + 32);
        for (int r = 0; r < m; r++) {
            int32_t pair;
            memcpy(&pair, A + (size_t)r * lda + 2 * p, 4);
            const __m512bh a = (__m512bh)_mm512_set1_epi32(pair);
            c0[r] = _mm512_dpbf16_ps(c0[r], a, b0);
            c1[r] = _mm512_dpbf16_ps(c1[r], a, b1);
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(C + (size_t)r * NR, c0[r]);
        _mm512_storeu_ps(C + (size_t)r * NR + 16, c1[r]);
    }
}

static void dp_tile(size_t m, size_t np, const uint16_t *A, size_t lda, const uint16_t *B, float *C,
                    bool load_c)
{
    switch (m) {
    case 14:
        dp_body(14, np, A, lda, B, C, load_c);
        break;
    case 13:
        dp_body(13, np, A, lda, B, C, load_c);
        break;
    case 12:
        dp_body(12, np, A, lda, B, C, load_c);
        break;
    case 11:
        dp_body(11, np, A, lda, B, C, load_c);
        break;
    case 10:
        dp_body(10, np, A, lda, B, C, load_c);
        break;
    case 9:
        dp_body(9, np, A, lda, B, C, load_c);
        break;
    case 8:
        dp_body(8, np, A, lda, B, C, load_c);
        break;
    case 7:
        dp_body(7, np, A, lda, B, C, load_c);
        break;
    case 6:
        dp_body(6, np, A, lda, B, C, load_c);
        break;
    case 5:
        dp_body(5, np, A, lda, B, C, load_c);
        break;
    case 4:
        dp_body(4, np, A, lda, B, C, load_c);
        break;
    case 3:
        dp_body(3, np, A, lda, B, C, load_c);
        break;
    case 2:
        dp_body(2, np, A, lda, B, C, load_c);
        break;
    default:
        dp_body(1, np, A, lda, B, C, load_c);
        break;
    }
}

/* cbuf[g][m][32] = A[m][kp] * panel g, for g < npan: per panel, K in chunks of KCP pairs (a
 * 32 KiB weight chunk stays in L1 for every 14-row panel of the block). */
static void dp_gemm(size_t kp, const uint16_t *a, size_t lda, size_t m, const uint16_t *b,
                    size_t npan, const uint16_t *bnext, size_t nnext, float *cbuf)
{
    (void)bnext;
    (void)nnext;
    const size_t np = kp / 2;
    for (size_t g = 0; g < npan; g++) {
        const uint16_t *bg = b + g * kp * NR;
        for (size_t pc = 0; pc < np; pc += KCP) {
            const size_t kc = np - pc < KCP ? np - pc : KCP;
            for (size_t i = 0; i < m; i += MR)
                dp_tile(m - i < MR ? m - i : MR, kc, a + i * lda + 2 * pc, lda, bg + pc * 64,
                        cbuf + (g * m + i) * NR, pc > 0);
        }
    }
}

const ffn_ukernels_bf16t ffn_ukernels_avx512bf16 = {
    .isa = "avx512_bf16",
    .gemm_name = "bf16_gemm__avx512bf16_14x32",
    .row_tile = 1,
    .panels = 1,
    .mc = 504,
    .stream_rows = STREAM_MAX,
    .stream_rows_fn = stream_rows_here,
    .stream_g = DECODE_G,
    .begin = NULL,
    .end = NULL,
    .gemm = dp_gemm,
    .gemv = ffn__bf16t_gemv,
    .narrow = ffn__bf16t_narrow,
    .act = ffn__avx512_act,
};
