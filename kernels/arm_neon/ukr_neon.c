/* AArch64 Advanced SIMD (NEON) microkernels for the driver's fp32 schedule, with fp32, bf16 and
 * fp16 weights. Only base ARMv8.0-A instructions (compiled with -march=armv8-a), so every
 * AArch64 CPU runs them: bf16 is widened by a shift (USHLL #16), fp16 by FCVTL (a conversion
 * ARMv8.0 has; the FP16 *arithmetic* extension is not needed).
 *  - f32_gemm__neon_8x12: 8 rows x 12 columns, 24 accumulator vectors + 3 for the B row + 2 for
 *    the 8 values of A a k step broadcasts (FMLA by element), 29 of the 32 registers: the tile
 *    of BLIS's armv8a sgemm kernel and of the pre-driver NEON kernel this replaces;
 *  - gemv (decode, T <= 8): whole panels streamed with a prefetch 2 KiB ahead; one row reads
 *    each panel as four concurrent streams (quarters of K) with their own accumulators, summed
 *    in a fixed order (untimed on Arm; the x86 one-row streams read either way by the CPU's
 *    tuning: memory order was 20-35% faster on Zen 4, four streams 7-47% on an SPR-class Xeon,
 *    time both first);
 *  - activations: the exp (range reduction, degree-7 polynomial, 2^n from two exponent-bit
 *    factors) and gelu (Numerical Recipes' erfc Chebyshev fit, exp(-z^2) with z^2 split by FMA)
 *    of the AVX2/AVX-512 kernels (x86_avx512/avx512_common.h cites them), on 4 lanes. FMAX and
 *    FMIN return NaN when either operand is NaN, so NaN inputs stay NaN. */
#include <arm_neon.h>
#include <string.h>

#include "../driver/ukernel.h"
#include "../driver/ukr_rows.h"
#include "ukr_neon_q.h"

#define FFN_AI static inline __attribute__((always_inline))

enum { MR = 8, NR = 12, PF_STREAM = 2048 };

/* Row k of a KN panel of NR columns (fp32, bf16 or fp16 bits) as three fp32 vectors. */
FFN_AI void load_row(const int wdt, const void *B, size_t k, float32x4_t *b0, float32x4_t *b1,
                     float32x4_t *b2)
{
    if (wdt == FFN_UKR_F32) {
        const float *b = (const float *)B + k * NR;
        *b0 = vld1q_f32(b);
        *b1 = vld1q_f32(b + 4);
        *b2 = vld1q_f32(b + 8);
        return;
    }
    const uint16_t *w = (const uint16_t *)B + k * NR;
    const uint16x8_t lo = vld1q_u16(w);
    const uint16x4_t hi = vld1_u16(w + 8);
    if (wdt == FFN_UKR_BF16) {
        *b0 = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(lo), 16));
        *b1 = vreinterpretq_f32_u32(vshll_high_n_u16(lo, 16));
        *b2 = vreinterpretq_f32_u32(vshll_n_u16(hi, 16));
    } else {
        const float16x8_t h = vreinterpretq_f16_u16(lo);
        *b0 = vcvt_f32_f16(vget_low_f16(h));
        *b1 = vcvt_high_f32_f16(h);
        *b2 = vcvt_f32_f16(vreinterpret_f16_u16(hi));
    }
}

/* One row over a whole panel: four concurrent streams (quarters of K), 12 accumulators. */
FFN_AI void row1(const int wdt, size_t kc, const float *A, size_t as, const void *B, float *C)
{
    const size_t rowb = wdt == FFN_UKR_F32 ? NR * 4 : NR * 2;
    float32x4_t s0[4], s1[4], s2[4];
    for (int i = 0; i < 4; i++)
        s0[i] = s1[i] = s2[i] = vdupq_n_f32(0.0f);
    const char *bs = (const char *)B;
    const size_t q = kc / 4;
    for (size_t k = 0; k < q; k++)
        for (int i = 0; i < 4; i++) {
            const size_t kk = (size_t)i * q + k;
            __builtin_prefetch(bs + kk * rowb + PF_STREAM, 0, 0);
            float32x4_t b0, b1, b2;
            load_row(wdt, B, kk, &b0, &b1, &b2);
            const float av = A[kk * as];
            s0[i] = vfmaq_n_f32(s0[i], b0, av);
            s1[i] = vfmaq_n_f32(s1[i], b1, av);
            s2[i] = vfmaq_n_f32(s2[i], b2, av);
        }
    for (size_t k = 4 * q; k < kc; k++) {
        float32x4_t b0, b1, b2;
        load_row(wdt, B, k, &b0, &b1, &b2);
        const float av = A[k * as];
        s0[0] = vfmaq_n_f32(s0[0], b0, av);
        s1[0] = vfmaq_n_f32(s1[0], b1, av);
        s2[0] = vfmaq_n_f32(s2[0], b2, av);
    }
    vst1q_f32(C, vaddq_f32(vaddq_f32(s0[0], s0[1]), vaddq_f32(s0[2], s0[3])));
    vst1q_f32(C + 4, vaddq_f32(vaddq_f32(s1[0], s1[1]), vaddq_f32(s1[2], s1[3])));
    vst1q_f32(C + 8, vaddq_f32(vaddq_f32(s2[0], s2[1]), vaddq_f32(s2[2], s2[3])));
}

/* The tile for each row count m = 1..8, its 3m accumulators named (driver/ukr_rows.h says why:
 * with arrays GCC 12 stored all 24 accumulators of the 8-row tile every k step, 24 STP-halves
 * beside 24 FMLA, seen in the aarch64 cross build's code), for the GEMM (fp32 B,
 * acc, the next chunk's slice pf prefetched before the k loop) and for the decode stream's rows
 * 2..8 (weights of the table's dtype widened in registers, prefetched PF_STREAM bytes ahead).
 * Rows 0-3 take their A values as lanes of one vector load when m >= 4, rows 4-7 when m == 8;
 * the other rows broadcast a scalar (A holds only m rows at stride as >= m). */
#define TILE_DECL(r) float32x4_t c##r##0, c##r##1, c##r##2;
#define TILE_LD(r)                                                                                 \
    c##r##0 = vld1q_f32(C + (r)*ldc);                                                              \
    c##r##1 = vld1q_f32(C + (r)*ldc + 4);                                                          \
    c##r##2 = vld1q_f32(C + (r)*ldc + 8);
#define TILE_ZR(r) c##r##0 = c##r##1 = c##r##2 = vdupq_n_f32(0.0f);
#define TILE_FM(r)                                                                                 \
    if ((r) < 4 && M >= 4) {                                                                       \
        c##r##0 = vfmaq_laneq_f32(c##r##0, b0, a0, (r)&3);                                         \
        c##r##1 = vfmaq_laneq_f32(c##r##1, b1, a0, (r)&3);                                         \
        c##r##2 = vfmaq_laneq_f32(c##r##2, b2, a0, (r)&3);                                         \
    } else if ((r) >= 4 && M == 8) {                                                               \
        c##r##0 = vfmaq_laneq_f32(c##r##0, b0, a1, (r)&3);                                         \
        c##r##1 = vfmaq_laneq_f32(c##r##1, b1, a1, (r)&3);                                         \
        c##r##2 = vfmaq_laneq_f32(c##r##2, b2, a1, (r)&3);                                         \
    } else {                                                                                       \
        const float av = ak[r];                                                                    \
        c##r##0 = vfmaq_n_f32(c##r##0, b0, av);                                                    \
        c##r##1 = vfmaq_n_f32(c##r##1, b1, av);                                                    \
        c##r##2 = vfmaq_n_f32(c##r##2, b2, av);                                                    \
    }
#define TILE_ST(r)                                                                                 \
    vst1q_f32(C + (r)*ldc, c##r##0);                                                               \
    vst1q_f32(C + (r)*ldc + 4, c##r##1);                                                           \
    vst1q_f32(C + (r)*ldc + 8, c##r##2);
#define TILE(name, MV, WDT, STREAM, ROWS)                                                          \
    static void name(size_t kc, const float *A, size_t as, const void *B, float *C, size_t ldc,    \
                     bool acc, const char *pf, size_t pf_bytes)                                    \
    {                                                                                              \
        enum { M = MV };                                                                           \
        const size_t rowb = WDT == FFN_UKR_F32 ? NR * 4 : NR * 2;                                  \
        const char *bs = (const char *)B;                                                          \
        FFN_TILE_ACC(ROWS)                                                                         \
        FFN_TILE_PREFETCH()                                                                        \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (STREAM) __builtin_prefetch(bs + k * rowb + PF_STREAM, 0, 0);                       \
            float32x4_t b0, b1, b2;                                                                \
            load_row(WDT, B, k, &b0, &b1, &b2);                                                    \
            const float *ak = A + k * as;                                                          \
            const float32x4_t a0 = M >= 4 ? vld1q_f32(ak) : vdupq_n_f32(0.0f);                     \
            const float32x4_t a1 = M == 8 ? vld1q_f32(ak + 4) : vdupq_n_f32(0.0f);                 \
            (void)a0;                                                                              \
            (void)a1;                                                                              \
            ROWS(TILE_FM)                                                                          \
        }                                                                                          \
        ROWS(TILE_ST)                                                                              \
    }
/* One table of tiles, rows 1..8: name##1 .. name##8. */
#define TILES(name, WDT, STREAM)                                                                   \
    TILE(name##1, 1, WDT, STREAM, FFN_ROWS1)                                                       \
    TILE(name##2, 2, WDT, STREAM, FFN_ROWS2)                                                       \
    TILE(name##3, 3, WDT, STREAM, FFN_ROWS3)                                                       \
    TILE(name##4, 4, WDT, STREAM, FFN_ROWS4)                                                       \
    TILE(name##5, 5, WDT, STREAM, FFN_ROWS5)                                                       \
    TILE(name##6, 6, WDT, STREAM, FFN_ROWS6)                                                       \
    TILE(name##7, 7, WDT, STREAM, FFN_ROWS7)                                                       \
    TILE(name##8, 8, WDT, STREAM, FFN_ROWS8)                                                       \
    static const ffn_tile_fn name[MR] = {name##1, name##2, name##3, name##4,                       \
                                         name##5, name##6, name##7, name##8};
TILES(gemm_tiles, FFN_UKR_F32, false)
TILES(stream_f32, FFN_UKR_F32, true)
TILES(stream_bf16, FFN_UKR_BF16, true)
TILES(stream_f16, FFN_UKR_F16, true)

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pfv, size_t pfb)
{
    gemm_tiles[(m < MR ? m : MR) - 1](kc, a, as, b, c, ldc, acc, pfv, pfb);
}

/* The decode stream: one row as four concurrent streams (row1), 2..8 rows as a tile. */
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
        const uint16x8_t v = vld1q_u16(src + i);
        vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16)));
        vst1q_f32(dst + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(v, 16)));
    }
    for (; i < n; i++) {
        const uint32_t u = (uint32_t)src[i] << 16;
        memcpy(dst + i, &u, 4);
    }
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(src + i));
        vst1q_f32(dst + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(dst + i + 4, vcvt_high_f32_f16(h));
    }
    for (; i < n; i++) {
        const float16x4_t h = vreinterpret_f16_u16(vdup_n_u16(src[i]));
        dst[i] = vgetq_lane_f32(vcvt_f32_f16(h), 0);
    }
}

/* ---- activations (4 lanes) --------------------------------------------------------------- */

FFN_AI float32x4_t v_exp(float32x4_t x)
{
    x = vmaxq_f32(vdupq_n_f32(-104.0f), vminq_f32(vdupq_n_f32(89.0f), x)); /* NaN stays NaN */
    const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693145751953125f));
    r = vfmsq_f32(r, n, vdupq_n_f32(1.428606765330187045e-06f));
    float32x4_t p = vdupq_n_f32(1.0f / 5040.0f);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 720.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    /* 2^n for n in [-151, 129]: two factors 2^(n/2) and 2^(n - n/2), each a normal float built
     * from its exponent bits, so underflow to 0 and overflow to Inf come out right (a NaN lane
     * converts to n = 0: p is NaN there already). */
    const int32x4_t ni = vcvtq_s32_f32(n);
    const int32x4_t h1 = vshrq_n_s32(ni, 1), h2 = vsubq_s32(ni, h1);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(h1, vdupq_n_s32(127)), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(h2, vdupq_n_s32(127)), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

FFN_AI float32x4_t v_silu(float32x4_t x)
{
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), v_exp(vnegq_f32(x))));
}

FFN_AI float32x4_t v_gelu_tanh(float32x4_t x)
{
    const float32x4_t x3 = vmulq_f32(vmulq_f32(x, x), x);
    const float32x4_t z = vmulq_n_f32(vfmaq_n_f32(x, x3, 0.044715f), -1.5957691216057308f);
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), v_exp(z))); /* -2 sqrt(2/pi) above */
}

FFN_AI float32x4_t v_gelu(float32x4_t x)
{
    const float32x4_t one = vdupq_n_f32(1.0f), half = vdupq_n_f32(0.5f);
    const float32x4_t za = vmulq_n_f32(vabsq_f32(x), 0.70710678118654752f);
    /* erfc(10) < 3e-45: beyond, y = 0 exactly (and z stays finite so z*z - zz is no Inf-Inf) */
    const uint32x4_t small = vcleq_f32(za, vdupq_n_f32(10.0f));
    const float32x4_t z = vminq_f32(vdupq_n_f32(10.0f), za);
    const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, half, z));
    float32x4_t p = vdupq_n_f32(0.17087277f);
    p = vfmaq_f32(vdupq_n_f32(-0.82215223f), p, t);
    p = vfmaq_f32(vdupq_n_f32(1.48851587f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-1.13520398f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.27886807f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-0.18628806f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.09678418f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.37409196f), p, t);
    p = vfmaq_f32(vdupq_n_f32(1.00002368f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-1.26551223f), p, t);
    const float32x4_t zz = vmulq_f32(z, z);
    const float32x4_t zlo = vnegq_f32(vfmsq_f32(zz, z, z)); /* z*z = zz + zlo exactly */
    float32x4_t e = v_exp(vsubq_f32(p, zz));
    e = vfmsq_f32(e, e, zlo); /* exp(-zz - zlo) ~ exp(-zz)(1 - zlo) */
    const float32x4_t y =
        vreinterpretq_f32_u32(vandq_u32(small, vreinterpretq_u32_f32(vmulq_f32(t, e))));
    const uint32x4_t pos = vcgeq_f32(x, vdupq_n_f32(0.0f));
    const float32x4_t hy = vmulq_f32(half, y);
    /* NaN: x * (anything) stays NaN since x itself is NaN */
    return vmulq_f32(x, vbslq_f32(pos, vsubq_f32(one, hy), hy));
}

FFN_AI float32x4_t v_act(ffn_act a, float32x4_t g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return vmaxq_f32(vdupq_n_f32(0.0f), g); /* FMAX: relu(NaN) = NaN */
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

/* n (1..4) floats at p, the rest of the vector zero. */
FFN_AI float32x4_t load_n(const float *p, size_t n)
{
    if (n >= 4) return vld1q_f32(p);
    float tmp[4] = {0};
    memcpy(tmp, p, n * 4);
    return vld1q_f32(tmp);
}

FFN_AI void store_n(float *p, float32x4_t v, size_t n)
{
    if (n >= 4) {
        vst1q_f32(p, v);
        return;
    }
    float tmp[4];
    vst1q_f32(tmp, v);
    memcpy(p, tmp, n * 4);
}

void ffn__neon_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                   const float *bg, const float *bu, float *h, size_t ldh)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i += 4) {
            const size_t w = n - i;
            float32x4_t gv = load_n(g + r * ldc + i, w);
            if (bg) gv = vaddq_f32(gv, load_n(bg + i, w));
            float32x4_t hv = v_act(a, gv);
            if (u) {
                float32x4_t uv = load_n(u + r * ldc + i, w);
                if (bu) uv = vaddq_f32(uv, load_n(bu + i, w));
                hv = vmulq_f32(hv, uv);
            }
            store_n(h + r * ldh + i, hv, w);
        }
}

const ffn_ukernels ffn_ukernels_neon = {
    .isa = "neon",
    .gemm_name = "f32_gemm__neon_8x12",
    .mr = MR,
    .nr = NR,
    .kc = 256,
    .mc = 512,
    .gemm = gemm,
    .gemv = {gemv_f32, gemv_bf16, gemv_f16},
    .stream_rows = {MR, MR, MR},
    .stream_g = MR,
    .widen = {NULL, widen_bf16, widen_f16},
    .act = ffn__neon_act,
};
