/* AArch64 SVE microkernels for the driver's fp32 schedule, with fp32, bf16 and fp16 weights,
 * vector-length agnostic (compiled with -march=armv8.2-a+sve; correct at any VL from 128 to
 * 2048 bits, tested under qemu at 128, 256 and 512).
 *  - f32_gemm__sve_8x3vl: 8 rows x 3 vectors (nr = 3 * VL/32 columns: 12 at 128 bits, 24 at
 *    256, 48 at 512): the table's vl_bytes hook returns svcntb() and the driver cuts the weight
 *    panels that wide. 24 accumulators + 3 for the B row + 2 for A, of the 32 Z registers; the
 *    8 values of A a k step needs are two LD1RQ (a 128-bit quadword replicated into every
 *    segment) and FMLA (indexed) picks lane r of each segment, as the NEON 8x12 tile does;
 *  - gemv (decode, T <= 8): whole panels streamed with a prefetch 2 KiB ahead; one row reads
 *    each panel as four concurrent streams (quarters of K), summed in a fixed order (untimed
 *    on Arm; the x86 one-row streams read either way by the CPU's tuning: time both);
 *  - bf16 weights are widened by LD1H into 32-bit lanes (zero-extended) and a shift by 16, fp16
 *    by FCVT from the low halves of the 32-bit lanes;
 *  - activations: the exp / erfc polynomials of the AVX-512 kernels (x86_avx512/
 *    avx512_common.h cites them), 2^n by FSCALE (overflow to Inf, underflow to 0, like
 *    VSCALEFPS), with a predicated tail instead of a scalar one. FMAX/FMIN keep NaN. */
#include <arm_sve.h>

#include "sve_common.h"

#define FFN_AI static inline __attribute__((always_inline))

enum { MR = 8, NV = 3, PF_STREAM = 2048 };

static size_t vl_bytes(void)
{
    return (size_t)svcntb();
}

/* Row k of a KN panel of nr = 3 vl columns (fp32, bf16 or fp16 bits) as three fp32 vectors. */
FFN_AI void load_row(const int wdt, const void *B, size_t k, size_t vl, svfloat32_t *b0,
                     svfloat32_t *b1, svfloat32_t *b2)
{
    const svbool_t pt = svptrue_b32();
    if (wdt == FFN_UKR_F32) {
        const float *b = (const float *)B + k * NV * vl;
        *b0 = svld1_f32(pt, b);
        *b1 = svld1_f32(pt, b + vl);
        *b2 = svld1_f32(pt, b + 2 * vl);
        return;
    }
    const uint16_t *w = (const uint16_t *)B + k * NV * vl;
    const svuint32_t u0 = svld1uh_u32(pt, w), u1 = svld1uh_u32(pt, w + vl),
                     u2 = svld1uh_u32(pt, w + 2 * vl);
    if (wdt == FFN_UKR_BF16) {
        *b0 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, u0, 16));
        *b1 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, u1, 16));
        *b2 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, u2, 16));
    } else {
        *b0 = svcvt_f32_f16_x(pt, svreinterpret_f16_u32(u0));
        *b1 = svcvt_f32_f16_x(pt, svreinterpret_f16_u32(u1));
        *b2 = svcvt_f32_f16_x(pt, svreinterpret_f16_u32(u2));
    }
}

/* SVE vectors are sizeless (no arrays of them): the 24 accumulators are named c<row><vector>. */
#define ACC_INIT(r)                                                                                \
    svfloat32_t c##r##0 = svdup_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0;                 \
    if (acc && m > r) {                                                                            \
        const float *cr = C + (size_t)(r)*ldc;                                                     \
        c##r##0 = svld1_f32(pt, cr);                                                               \
        c##r##1 = svld1_f32(pt, cr + vl);                                                          \
        c##r##2 = svld1_f32(pt, cr + 2 * vl);                                                      \
    }
#define ACC_FMA(r, av, l)                                                                          \
    if (m > r) {                                                                                   \
        c##r##0 = svmla_lane_f32(c##r##0, b0, av, l);                                              \
        c##r##1 = svmla_lane_f32(c##r##1, b1, av, l);                                              \
        c##r##2 = svmla_lane_f32(c##r##2, b2, av, l);                                              \
    }
#define ACC_STORE(r)                                                                               \
    if (m > r) {                                                                                   \
        float *cr = C + (size_t)(r)*ldc;                                                           \
        svst1_f32(pt, cr, c##r##0);                                                                \
        svst1_f32(pt, cr + vl, c##r##1);                                                           \
        svst1_f32(pt, cr + 2 * vl, c##r##2);                                                       \
    }

/* C[m][nr] (+)= A(m x kc) B[kc][nr]. The A values of a k step come as two quadwords loaded
 * under the predicates of rows 0..3 and 4..7 that exist (no read past the m rows). stream: B is
 * a weight stream (decode), prefetched PF_STREAM bytes ahead; otherwise pf (this row panel's
 * slice of the next chunk) is pulled into L2, 64 bytes a step. */
FFN_AI void body(const int wdt, const int m, size_t kc, const float *A, size_t as, const void *B,
                 float *C, size_t ldc, bool acc, const char *pf, size_t pf_bytes, bool stream)
{
    const size_t vl = svcntw(), rowb = NV * vl * (wdt == FFN_UKR_F32 ? 4 : 2);
    const svbool_t pt = svptrue_b32();
    const svbool_t pa0 = svwhilelt_b32_s32(0, m < 4 ? m : 4);
    const svbool_t pa1 = svwhilelt_b32_s32(0, m > 4 ? m - 4 : 0);
    ACC_INIT(0)
    ACC_INIT(1)
    ACC_INIT(2)
    ACC_INIT(3)
    ACC_INIT(4)
    ACC_INIT(5)
    ACC_INIT(6)
    ACC_INIT(7)
    const char *bs = (const char *)B;
    for (size_t k = 0; k < kc; k++) {
        if (pf && k * 64 < pf_bytes) __builtin_prefetch(pf + k * 64, 0, 2);
        if (stream) __builtin_prefetch(bs + k * rowb + PF_STREAM, 0, 0);
        svfloat32_t b0, b1, b2;
        load_row(wdt, B, k, vl, &b0, &b1, &b2);
        const float *ak = A + k * as;
        const svfloat32_t a0 = svld1rq_f32(pa0, ak);
        ACC_FMA(0, a0, 0)
        ACC_FMA(1, a0, 1)
        ACC_FMA(2, a0, 2)
        ACC_FMA(3, a0, 3)
        if (m > 4) {
            const svfloat32_t a1 = svld1rq_f32(pa1, ak + 4);
            ACC_FMA(4, a1, 0)
            ACC_FMA(5, a1, 1)
            ACC_FMA(6, a1, 2)
            ACC_FMA(7, a1, 3)
        }
    }
    ACC_STORE(0)
    ACC_STORE(1)
    ACC_STORE(2)
    ACC_STORE(3)
    ACC_STORE(4)
    ACC_STORE(5)
    ACC_STORE(6)
    ACC_STORE(7)
}

/* One k step of stream i of row1: s<i><vector> += A[kk] * row kk. */
#define ROW1_STEP(i, kk)                                                                           \
    do {                                                                                           \
        svfloat32_t b0, b1, b2;                                                                    \
        load_row(wdt, B, kk, vl, &b0, &b1, &b2);                                                   \
        const svfloat32_t av = svdup_n_f32(A[(kk)*as]);                                            \
        s##i##0 = svmla_f32_x(pt, s##i##0, b0, av);                                                \
        s##i##1 = svmla_f32_x(pt, s##i##1, b1, av);                                                \
        s##i##2 = svmla_f32_x(pt, s##i##2, b2, av);                                                \
    } while (0)

/* One row over a whole panel: four concurrent streams (quarters of K), 12 accumulators. */
FFN_AI void row1(const int wdt, size_t kc, const float *A, size_t as, const void *B, float *C)
{
    const size_t vl = svcntw(), rowb = NV * vl * (wdt == FFN_UKR_F32 ? 4 : 2);
    const svbool_t pt = svptrue_b32();
    const svfloat32_t zero = svdup_n_f32(0.0f);
    svfloat32_t s00 = zero, s01 = zero, s02 = zero, s10 = zero, s11 = zero, s12 = zero;
    svfloat32_t s20 = zero, s21 = zero, s22 = zero, s30 = zero, s31 = zero, s32 = zero;
    const char *bs = (const char *)B;
    const size_t q = kc / 4;
    for (size_t k = 0; k < q; k++) {
        __builtin_prefetch(bs + k * rowb + PF_STREAM, 0, 0);
        __builtin_prefetch(bs + (q + k) * rowb + PF_STREAM, 0, 0);
        __builtin_prefetch(bs + (2 * q + k) * rowb + PF_STREAM, 0, 0);
        __builtin_prefetch(bs + (3 * q + k) * rowb + PF_STREAM, 0, 0);
        ROW1_STEP(0, k);
        ROW1_STEP(1, q + k);
        ROW1_STEP(2, 2 * q + k);
        ROW1_STEP(3, 3 * q + k);
    }
    for (size_t k = 4 * q; k < kc; k++)
        ROW1_STEP(0, k);
    svst1_f32(pt, C, svadd_f32_x(pt, svadd_f32_x(pt, s00, s10), svadd_f32_x(pt, s20, s30)));
    svst1_f32(pt, C + vl, svadd_f32_x(pt, svadd_f32_x(pt, s01, s11), svadd_f32_x(pt, s21, s31)));
    svst1_f32(pt, C + 2 * vl,
              svadd_f32_x(pt, svadd_f32_x(pt, s02, s12), svadd_f32_x(pt, s22, s32)));
}

#define BODY_CASES(wdt, stream)                                                                    \
    switch (m) {                                                                                   \
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

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pfv, size_t pfb)
{
    const char *pf = pfv;
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

static void widen_bf16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i += svcntw()) {
        const svbool_t pg = svwhilelt_b32_u64(i, n);
        const svuint32_t u = svld1uh_u32(pg, src + i);
        svst1_f32(pg, dst + i, svreinterpret_f32_u32(svlsl_n_u32_x(pg, u, 16)));
    }
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i += svcntw()) {
        const svbool_t pg = svwhilelt_b32_u64(i, n);
        const svuint32_t u = svld1uh_u32(pg, src + i);
        svst1_f32(pg, dst + i, svcvt_f32_f16_x(pg, svreinterpret_f16_u32(u)));
    }
}

/* ---- activations (VL lanes, predicated) -------------------------------------------------- */

FFN_AI svfloat32_t v_exp(svbool_t pg, svfloat32_t x)
{
    x = svmax_n_f32_x(pg, svmin_n_f32_x(pg, x, 89.0f), -104.0f); /* NaN stays NaN */
    const svfloat32_t n = svrintn_f32_x(pg, svmul_n_f32_x(pg, x, 1.44269504088896341f));
    svfloat32_t r = svmls_n_f32_x(pg, x, n, 0.693145751953125f);
    r = svmls_n_f32_x(pg, r, n, 1.428606765330187045e-06f);
    svfloat32_t p = svdup_n_f32(1.0f / 5040.0f);
    p = svmad_n_f32_x(pg, p, r, 1.0f / 720.0f);
    p = svmad_n_f32_x(pg, p, r, 1.0f / 120.0f);
    p = svmad_n_f32_x(pg, p, r, 1.0f / 24.0f);
    p = svmad_n_f32_x(pg, p, r, 1.0f / 6.0f);
    p = svmad_n_f32_x(pg, p, r, 0.5f);
    p = svmad_n_f32_x(pg, p, r, 1.0f);
    p = svmad_n_f32_x(pg, p, r, 1.0f);
    /* FSCALE: p * 2^n with IEEE overflow and underflow (a NaN lane converts to n = 0, p is
     * NaN there already). */
    return svscale_f32_x(pg, p, svcvt_s32_f32_x(pg, n));
}

FFN_AI svfloat32_t v_silu(svbool_t pg, svfloat32_t x)
{
    const svfloat32_t e = v_exp(pg, svneg_f32_x(pg, x));
    return svdiv_f32_x(pg, x, svadd_n_f32_x(pg, e, 1.0f));
}

FFN_AI svfloat32_t v_gelu_tanh(svbool_t pg, svfloat32_t x)
{
    const svfloat32_t x3 = svmul_f32_x(pg, svmul_f32_x(pg, x, x), x);
    const svfloat32_t z =
        svmul_n_f32_x(pg, svmla_n_f32_x(pg, x, x3, 0.044715f), -1.5957691216057308f);
    return svdiv_f32_x(pg, x, svadd_n_f32_x(pg, v_exp(pg, z), 1.0f)); /* -2 sqrt(2/pi) above */
}

FFN_AI svfloat32_t v_gelu(svbool_t pg, svfloat32_t x)
{
    const svfloat32_t one = svdup_n_f32(1.0f);
    const svfloat32_t za = svmul_n_f32_x(pg, svabs_f32_x(pg, x), 0.70710678118654752f);
    /* erfc(10) < 3e-45: beyond, y = 0 exactly (and z stays finite so z*z - zz is no Inf-Inf) */
    const svbool_t small = svcmple_n_f32(pg, za, 10.0f);
    const svfloat32_t z = svmin_n_f32_x(pg, za, 10.0f);
    const svfloat32_t t = svdiv_f32_x(pg, one, svmla_n_f32_x(pg, one, z, 0.5f));
    svfloat32_t p = svdup_n_f32(0.17087277f);
    p = svmad_n_f32_x(pg, p, t, -0.82215223f);
    p = svmad_n_f32_x(pg, p, t, 1.48851587f);
    p = svmad_n_f32_x(pg, p, t, -1.13520398f);
    p = svmad_n_f32_x(pg, p, t, 0.27886807f);
    p = svmad_n_f32_x(pg, p, t, -0.18628806f);
    p = svmad_n_f32_x(pg, p, t, 0.09678418f);
    p = svmad_n_f32_x(pg, p, t, 0.37409196f);
    p = svmad_n_f32_x(pg, p, t, 1.00002368f);
    p = svmad_n_f32_x(pg, p, t, -1.26551223f);
    const svfloat32_t zz = svmul_f32_x(pg, z, z);
    const svfloat32_t zlo = svnmls_f32_x(pg, zz, z, z); /* z*z - zz: z*z = zz + zlo exactly */
    svfloat32_t e = v_exp(pg, svsub_f32_x(pg, p, zz));
    e = svmls_f32_x(pg, e, e, zlo); /* exp(-zz - zlo) ~ exp(-zz)(1 - zlo) */
    const svfloat32_t y = svsel_f32(small, svmul_f32_x(pg, t, e), svdup_n_f32(0.0f));
    const svbool_t pos = svcmpge_n_f32(pg, x, 0.0f);
    const svfloat32_t hy = svmul_n_f32_x(pg, y, 0.5f);
    /* NaN: x * (anything) stays NaN since x itself is NaN */
    return svmul_f32_x(pg, x, svsel_f32(pos, svsub_f32_x(pg, one, hy), hy));
}

FFN_AI svfloat32_t v_act(ffn_act a, svbool_t pg, svfloat32_t g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return svmax_n_f32_x(pg, g, 0.0f); /* FMAX: relu(NaN) = NaN */
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return v_gelu(pg, g);
    case FFN_ACT_GELU_TANH:
        return v_gelu_tanh(pg, g);
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
    default:
        return v_silu(pg, g);
    }
}

void ffn__sve_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                  const float *bg, const float *bu, float *h, size_t ldh)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += svcntw()) {
            const svbool_t pg = svwhilelt_b32_u64(i, n);
            svfloat32_t gv = svld1_f32(pg, g + r * ldc + i);
            if (bg) gv = svadd_f32_x(pg, gv, svld1_f32(pg, bg + i));
            svfloat32_t hv = v_act(a, pg, gv);
            if (u) {
                svfloat32_t uv = svld1_f32(pg, u + r * ldc + i);
                if (bu) uv = svadd_f32_x(pg, uv, svld1_f32(pg, bu + i));
                hv = svmul_f32_x(pg, hv, uv);
            }
            svst1_f32(pg, h + r * ldh + i, hv);
        }
}

const ffn_ukernels ffn_ukernels_sve = {
    .isa = "sve",
    .gemm_name = "f32_gemm__sve_8x3vl",
    .mr = MR,
    .nr = NV,
    .kc = 256,
    .mc = 512,
    .gemm = gemm,
    .gemv = {gemv_f32, gemv_bf16, gemv_f16},
    .stream_rows = {MR, MR, MR},
    .stream_g = MR,
    .widen = {NULL, widen_bf16, widen_f16},
    .act = ffn__sve_act,
    .vl_bytes = vl_bytes,
};
