/* SVE + FEAT_BF16 microkernels for the driver's bf16 tile schedule (Neoverse V1/V2: Graviton3,
 * Graviton4, Grace), compiled with -march=armv8.2-a+sve+bf16, and the kernel row they make
 * (bf16_ffn__svebf16_8x32, dispatched before the plain SVE bf16 row on CPUs with SVE and BF16).
 * Weights are bf16 in VNNI pair panels of 32 columns ([K/2][32][2]: one 32-bit lane holds the
 * pair of k values of one column, the operand BFDOT reads).
 *  - bf16_gemm__svebf16_8x32: prefill; x and h rounded to bf16 (BFCVT, round to nearest even),
 *    8 rows x 2 vectors of accumulators, the 32 columns of a panel in column blocks of 2 vectors
 *    (VL-agnostic: 4 blocks at 128 bits, 1 at 512, predicated past 32 columns at 1024 and up);
 *    each step loads 4 pairs (8 k) of a row as one LD1RQ quadword and BFDOT (indexed) takes pair
 *    q of it, so A is loaded once per 4 pair steps;
 *  - gemv (decode, T <= 4): fp32 x times the bf16 pairs widened in registers (even k by a shift,
 *    odd k by a mask), fp32 FMA: decode stays at fp32 accuracy and bandwidth-bound;
 *  - activations: the SVE table's (ukr_sve.c).
 * BFDOT rounds its two-product sums with round-to-odd and flushes bf16 denormals (FEAT_BF16
 * without FEAT_EBF16); the test bounds (tests/test_kernels.c: x and h rounded to bf16, fp32
 * accumulation) cover both. */
#include <arm_sve.h>
#include <string.h>

#include "../driver/driver.h"
#include "sve_common.h"

#define FFN_AI static inline __attribute__((always_inline))

enum { MR = 8, NR = 32, G = 4 };

/* ---- prefill: BFDOT --------------------------------------------------------------------- */

/* The macros and the tile body below are runs of macro calls without semicolons, which
 * clang-format cannot lay out stably: the house style is switched off for them. */
// clang-format off
#define DP_INIT(r) svfloat32_t e##r = svdup_n_f32(0.0f), f##r = e##r;
#define DP_LOADA(r)                                                                                \
    const svbfloat16_t q##r =                                                                      \
        m > r ? svld1rq_bf16(pt, (const bfloat16_t *)(const void *)(A + (size_t)(r) * lda + 2 * p)) \
              : svreinterpret_bf16_f32(svdup_n_f32(0.0f));
#define DP_STEP(r, l)                                                                              \
    if (m > r) {                                                                                   \
        e##r = svbfdot_lane_f32(e##r, b0, q##r, l);                                                \
        f##r = svbfdot_lane_f32(f##r, b1, q##r, l);                                                \
    }
#define DP_STEPS(l)                                                                                \
    {                                                                                              \
        const uint32_t *bp = (const uint32_t *)(const void *)(B + (p + l) * 64) + c0;              \
        const svbfloat16_t b0 = svreinterpret_bf16_u32(svld1_u32(p0, bp));                         \
        const svbfloat16_t b1 = svreinterpret_bf16_u32(svld1_u32(p1, bp + cw));                    \
        DP_STEP(0, l) DP_STEP(1, l) DP_STEP(2, l) DP_STEP(3, l)                                    \
        DP_STEP(4, l) DP_STEP(5, l) DP_STEP(6, l) DP_STEP(7, l)                                    \
    }
#define DP_STORE(r)                                                                                \
    if (m > r) {                                                                                   \
        svst1_f32(p0, C + (size_t)(r) * NR + c0, e##r);                                            \
        svst1_f32(p1, C + (size_t)(r) * NR + c0 + cw, f##r);                                       \
    }

/* C[m][32] = A[m][2 np] (bf16, row stride lda) * B (np pair rows of 32 columns), np a multiple
 * of 4 (the driver pads K to 32). */
FFN_AI void dp_body(const int m, size_t np, const uint16_t *A, size_t lda, const uint16_t *B,
                    float *C)
{
    const size_t cw = svcntw();
    const svbool_t pt = svptrue_b16();
    for (size_t c0 = 0; c0 < NR; c0 += 2 * cw) {
        const svbool_t p0 = svwhilelt_b32_u64(c0, NR), p1 = svwhilelt_b32_u64(c0 + cw, NR);
        DP_INIT(0) DP_INIT(1) DP_INIT(2) DP_INIT(3) DP_INIT(4) DP_INIT(5) DP_INIT(6) DP_INIT(7)
        for (size_t p = 0; p < np; p += 4) {
            DP_LOADA(0) DP_LOADA(1) DP_LOADA(2) DP_LOADA(3)
            DP_LOADA(4) DP_LOADA(5) DP_LOADA(6) DP_LOADA(7)
            DP_STEPS(0) DP_STEPS(1) DP_STEPS(2) DP_STEPS(3)
        }
        DP_STORE(0) DP_STORE(1) DP_STORE(2) DP_STORE(3)
        DP_STORE(4) DP_STORE(5) DP_STORE(6) DP_STORE(7)
    }
}

// clang-format on

static void dp_tile(size_t m, size_t np, const uint16_t *A, size_t lda, const uint16_t *B, float *C)
{
    switch (m) {
    case 8:
        dp_body(8, np, A, lda, B, C);
        break;
    case 7:
        dp_body(7, np, A, lda, B, C);
        break;
    case 6:
        dp_body(6, np, A, lda, B, C);
        break;
    case 5:
        dp_body(5, np, A, lda, B, C);
        break;
    case 4:
        dp_body(4, np, A, lda, B, C);
        break;
    case 3:
        dp_body(3, np, A, lda, B, C);
        break;
    case 2:
        dp_body(2, np, A, lda, B, C);
        break;
    default:
        dp_body(1, np, A, lda, B, C);
        break;
    }
}

/* cbuf[g][m][32] = A[m][kp] * panel g, for g < npan. */
static void dp_gemm(size_t kp, const uint16_t *a, size_t lda, size_t m, const uint16_t *b,
                    size_t npan, const uint16_t *bnext, size_t nnext, float *cbuf)
{
    (void)bnext;
    (void)nnext;
    for (size_t g = 0; g < npan; g++)
        for (size_t i = 0; i < m; i += MR)
            dp_tile(m - i < MR ? m - i : MR, kp / 2, a + i * lda, lda, b + g * kp * NR,
                    cbuf + (g * m + i) * NR);
}

/* ---- decode: fp32 x, widened pairs ------------------------------------------------------ */

// clang-format off
#define GV_INIT(r) svfloat32_t e##r = svdup_n_f32(0.0f), o##r = e##r;
#define GV_STEP(r)                                                                                 \
    if (m > r) {                                                                                   \
        e##r = svmla_n_f32_x(pc, e##r, lo, A[2 * p * as + (r)]);                                   \
        if (odd) o##r = svmla_n_f32_x(pc, o##r, hi, A[(2 * p + 1) * as + (r)]);                    \
    }
#define GV_STORE(r)                                                                                \
    if (m > r) svst1_f32(pc, C + (size_t)(r) * ldc + c0, svadd_f32_x(pc, e##r, o##r));

/* C[m][32] = A[m][kc] (fp32, k-major with stride as) * B (pairs); column blocks of one vector. */
FFN_AI void gv_body(const int m, size_t kc, const float *A, size_t as, const uint16_t *B,
                    float *C, size_t ldc)
{
    const size_t cw = svcntw(), np = (kc + 1) / 2;
    for (size_t c0 = 0; c0 < NR; c0 += cw) {
        const svbool_t pc = svwhilelt_b32_u64(c0, NR);
        GV_INIT(0) GV_INIT(1) GV_INIT(2) GV_INIT(3)
        for (size_t p = 0; p < np; p++) {
            __builtin_prefetch(B + (p + 32) * 64 + 2 * c0, 0, 0);
            const svuint32_t v = svld1_u32(pc, (const uint32_t *)(const void *)(B + p * 64) + c0);
            const svfloat32_t lo = svreinterpret_f32_u32(svlsl_n_u32_x(pc, v, 16));
            const svfloat32_t hi = svreinterpret_f32_u32(svand_n_u32_x(pc, v, 0xffff0000u));
            /* the last k of an odd kc has no partner in A (its partner weight is padding) */
            const bool odd = 2 * p + 1 < kc;
            GV_STEP(0) GV_STEP(1) GV_STEP(2) GV_STEP(3)
        }
        GV_STORE(0) GV_STORE(1) GV_STORE(2) GV_STORE(3)
    }
}

// clang-format on

static void gemv(size_t m, size_t kc, const float *a, size_t as, const void *w, float *c,
                 size_t ldc)
{
    const uint16_t *B = w;
    switch (m) {
    case 1:
        gv_body(1, kc, a, as, B, c, ldc);
        break;
    case 2:
        gv_body(2, kc, a, as, B, c, ldc);
        break;
    case 3:
        gv_body(3, kc, a, as, B, c, ldc);
        break;
    default:
        gv_body(4, kc, a, as, B, c, ldc);
        break;
    }
}

/* dst = bf16 (round to nearest even; NaN stays NaN) of src, by BFCVT into the low half of
 * each 32-bit lane and a truncating 16-bit store. */
static void narrow(size_t rows, size_t n, const float *src, size_t lds, uint16_t *dst, size_t ldd)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += svcntw()) {
            const svbool_t pg = svwhilelt_b32_u64(i, n);
            const svbfloat16_t h = svcvt_bf16_f32_x(pg, svld1_f32(pg, src + r * lds + i));
            svst1h_u32(pg, dst + r * ldd + i, svreinterpret_u32_bf16(h));
        }
}

const ffn_ukernels_bf16t ffn_ukernels_svebf16 = {
    .isa = "sve",
    .gemm_name = "bf16_gemm__svebf16_8x32",
    .row_tile = 1,
    .panels = 1,
    .mc = 256,
    .stream_rows = G,
    .stream_g = G,
    .begin = NULL,
    .end = NULL,
    .gemm = dp_gemm,
    .gemv = gemv,
    .narrow = narrow,
    .act = ffn__sve_act,
};

static const ffn__drv drv_svebf16 = {
    .u = NULL, .t = &ffn_ukernels_svebf16, .wdt = FFN_UKR_BF16, .id = 0x53424254u};
FFN__DRIVER_KERNEL(ffn_kernel_bf16_svebf16, "bf16_ffn__svebf16_8x32", FFN_ISA_SVE, FFN_DT_BF16,
                   drv_svebf16, 0, 0);
