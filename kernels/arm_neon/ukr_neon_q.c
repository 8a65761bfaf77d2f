/* NEON quantized microkernels for float activations at the NEON panel width (12 columns, the
 * f32_gemm__neon_8x12 tile's): decode streams of their own, prefill through the generic
 * dequantization of portable/ukr_q_generic.h and the NEON fp32 tile. ARMv8.0 instructions only.
 *  - W8: a k row's 12 codes sign-extended twice (SXTL) and converted (SCVTF), one FMLA per 4
 *    columns and row; the column scales once at the end;
 *  - W4: a k row's 6 bytes split into nibbles (AND, USHR), put in column order by one TBL,
 *    the zero points subtracted in 16 bits (USUBL), then as W8; each group's partial sums
 *    scaled once (bf16 group scales) into C.
 * The generic kernels these replace compiled, in the aarch64 cross build, to one scalar LDRSB,
 * SCVTF, FMUL and FADD per weight (objdump); here a k row of 12 weights is 8-13
 * vector instructions and one FMLA per 4 columns and row. Nothing here has been timed on Arm
 * hardware (.ci/aarch64.sh runs them under qemu). */
#include <arm_neon.h>
#include <string.h>

#include "../driver/ukr_rows.h"
#include "../portable/ukr_q_generic.h"
#include "ukr_neon_q.h"

extern const ffn_ukernels ffn_ukernels_neon;

enum { NR = 12, HALF = NR / 2, G = 4, PF = 2048 };

#define FFN_AI static inline __attribute__((always_inline))

/* The 12 int8 codes of W8 row k as three fp32 vectors (exact). */
FFN_AI void q8_row(const int8_t *q, size_t k, float32x4_t *b0, float32x4_t *b1, float32x4_t *b2)
{
    const int8_t *p = q + k * NR;
    int32_t t;
    memcpy(&t, p + 8, sizeof t);
    const int16x8_t lo = vmovl_s8(vld1_s8(p));
    const int16x8_t hi = vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(t)));
    *b0 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    *b1 = vcvtq_f32_s32(vmovl_high_s16(lo));
    *b2 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
}

/* The 12 nibbles of W4 row k (6 bytes: low nibbles columns 0..5, high 6..11) in column order
 * in the low 12 bytes. */
FFN_AI uint8x16_t q4_nibbles(const uint8_t *q, size_t k, uint8x16_t order)
{
    uint64_t t = 0;
    memcpy(&t, q + k * HALF, HALF);
    const uint8x8_t v = vcreate_u8(t);
    return vqtbl1q_u8(vcombine_u8(vand_u8(v, vdup_n_u8(15)), vshr_n_u8(v, 4)), order);
}

/* Nibbles u (column order) minus the zero points z as three fp32 vectors (exact). */
FFN_AI void q4_vals(uint8x16_t u, uint8x16_t z, float32x4_t *b0, float32x4_t *b1, float32x4_t *b2)
{
    const int16x8_t lo = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(u), vget_low_u8(z)));
    const int16x8_t hi = vreinterpretq_s16_u16(vsubl_high_u8(u, z));
    *b0 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    *b1 = vcvtq_f32_s32(vmovl_high_s16(lo));
    *b2 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
}

/* Tiles of m = 1..G rows over named accumulators (driver/ukr_rows.h says why). */
#define QN_DECL(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0;
#define QN_ZERO(r) c##r##0 = c##r##1 = c##r##2 = vdupq_n_f32(0.0f);
#define QN_FM(r)                                                                                   \
    {                                                                                              \
        const float x = a[k * as + (r)];                                                           \
        c##r##0 = vfmaq_n_f32(c##r##0, b0, x);                                                     \
        c##r##1 = vfmaq_n_f32(c##r##1, b1, x);                                                     \
        c##r##2 = vfmaq_n_f32(c##r##2, b2, x);                                                     \
    }
#define QN_SCALE_ST(r)                                                                             \
    vst1q_f32(c + (r)*ldc, vmulq_f32(c##r##0, s0));                                                \
    vst1q_f32(c + (r)*ldc + 4, vmulq_f32(c##r##1, s1));                                            \
    vst1q_f32(c + (r)*ldc + 8, vmulq_f32(c##r##2, s2));
#define QN_GROUP_ACC(r)                                                                            \
    vst1q_f32(c + (r)*ldc, vfmaq_f32(vld1q_f32(c + (r)*ldc), c##r##0, s0));                        \
    vst1q_f32(c + (r)*ldc + 4, vfmaq_f32(vld1q_f32(c + (r)*ldc + 4), c##r##1, s1));                \
    vst1q_f32(c + (r)*ldc + 8, vfmaq_f32(vld1q_f32(c + (r)*ldc + 8), c##r##2, s2));
#define QN_ZERO_C(r) memset(c + (r)*ldc, 0, NR * sizeof *c);

#define Q8_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const int8_t *q = (const int8_t *)w->q;                                                    \
        ROWS(QN_DECL)                                                                              \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (k % 4 == 0) __builtin_prefetch(q + k * NR + PF, 0, 0);                             \
            float32x4_t b0, b1, b2;                                                                \
            q8_row(q, k, &b0, &b1, &b2);                                                           \
            ROWS(QN_FM)                                                                            \
        }                                                                                          \
        const float32x4_t s0 = vld1q_f32(w->scale), s1 = vld1q_f32(w->scale + 4);                  \
        const float32x4_t s2 = vld1q_f32(w->scale + 8);                                            \
        ROWS(QN_SCALE_ST)                                                                          \
    }

/* The scales of group g as three fp32 vectors (bf16 widened by a shift). */
FFN_AI void gscales(const uint16_t *gs, size_t g, float32x4_t *s0, float32x4_t *s1, float32x4_t *s2)
{
    const uint16x8_t lo = vld1q_u16(gs + g * NR);
    *s0 = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(lo), 16));
    *s1 = vreinterpretq_f32_u32(vshll_high_n_u16(lo, 16));
    *s2 = vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(gs + g * NR + 8), 16));
}

#define Q4_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        static const uint8_t ord[16] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 0, 0, 0, 0};       \
        const uint8x16_t order = vld1q_u8(ord);                                                    \
        const size_t Gs = w->group;                                                                \
        ROWS(QN_ZERO_C)                                                                            \
        ROWS(QN_DECL)                                                                              \
        uint8x16_t z = vdupq_n_u8(8);                                                              \
        for (size_t g = 0; g < kc / Gs; g++) {                                                     \
            if (w->zero) z = q4_nibbles(w->zero, g, order);                                        \
            ROWS(QN_ZERO)                                                                          \
            for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {                                       \
                if (k % 8 == 0) __builtin_prefetch(w->q + k * HALF + PF, 0, 0);                    \
                float32x4_t b0, b1, b2;                                                            \
                q4_vals(q4_nibbles(w->q, k, order), z, &b0, &b1, &b2);                             \
                ROWS(QN_FM)                                                                        \
            }                                                                                      \
            float32x4_t s0, s1, s2;                                                                \
            gscales(w->gscale, g, &s0, &s1, &s2);                                                  \
            ROWS(QN_GROUP_ACC)                                                                     \
        }                                                                                          \
    }

FFN_QTILES4(Q8_TILE, q8_tiles)
FFN_QTILES4(Q4_TILE, q4_tiles)
FFN_QGEMV4(q8_gemv, q8_tiles)
FFN_QGEMV4(q4_gemv, q4_tiles)

FFN__QG_DEQUANT_ENTRIES(NR)

const ffn_ukernels_q ffn_ukernels_q_neon = {
    .isa = "neon",
    .gemv_name = {"q8_gemv__neon", "q4_gemv__neon"},
    .f32 = &ffn_ukernels_neon,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};
