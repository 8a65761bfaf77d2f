/* SVE quantized microkernels for float activations at the SVE panel width (3 vectors: 12, 24,
 * 48 columns at 128, 256, 512-bit vectors, the f32_gemm__sve_8x3vl tile's, read from svcntw()
 * as the driver reads it), vector-length agnostic: decode streams of their own, prefill through
 * the generic dequantization of portable/ukr_q_generic.h and the SVE fp32 tile (W8A8 is
 * ukr_sve_i8.c's).
 *  - W8: each vector of a k row's codes loaded sign-extended into 32-bit lanes (LD1SB) and
 *    converted (SCVTF), one FMLA per vector and row; the column scales once at the end;
 *  - W4: a k row is 1.5 vectors of bytes, low nibbles the first 1.5 vectors of columns, high
 *    nibbles the rest; bytes loaded zero-extended (LD1B), the nibbles masked or shifted, the
 *    middle vector's two halves joined by SPLICE, the zero points subtracted, then as W8; each
 *    group's partial sums scaled once (bf16 group scales) into C.
 * The generic kernels these replace compiled, in the aarch64 cross build with +sve, to scalar
 * code a weight. Correct under qemu at every width; not timed on Arm hardware. */
#include <arm_sve.h>
#include <string.h>

#include "../driver/ukr_rows.h"
#include "../portable/ukr_q_generic.h"
#include "sve_common.h"

extern const ffn_ukernels ffn_ukernels_sve;

enum { G = 4, PF = 2048 };

#define FFN_AI static inline __attribute__((always_inline))

/* The driver's panel width for the SVE table (nr_of in driver.c: 3 vectors, under the cap). */
static size_t nr_sve(void)
{
    const size_t nr = svcntw() * 3;
    return nr > FFN_UKR_MAX_NR ? FFN_UKR_MAX_NR : nr;
}

/* W8 row k (3 L codes, L = svcntw()) as three fp32 vectors (exact). */
FFN_AI void q8_row(const int8_t *q, size_t k, size_t L, svbool_t pt, svfloat32_t *b0,
                   svfloat32_t *b1, svfloat32_t *b2)
{
    const int8_t *p = q + k * 3 * L;
    *b0 = svcvt_f32_s32_x(pt, svld1sb_s32(pt, p));
    *b1 = svcvt_f32_s32_x(pt, svld1sb_s32(pt, p + L));
    *b2 = svcvt_f32_s32_x(pt, svld1sb_s32(pt, p + 2 * L));
}

/* The 3 L nibbles of the W4 row at p (1.5 L bytes: byte j's low nibble is column j, its high
 * nibble column j + 1.5 L) as three vectors of 32-bit lanes; ph: the first L / 2 lanes. */
FFN_AI void q4_nibbles(const uint8_t *p, size_t L, svbool_t pt, svbool_t ph, svuint32_t *u0,
                       svuint32_t *u1, svuint32_t *u2)
{
    *u0 = svand_n_u32_x(pt, svld1ub_u32(pt, p), 15);
    const svuint32_t lo = svand_n_u32_x(pt, svld1ub_u32(ph, p + L), 15); /* columns L..1.5L */
    const svuint32_t hi = svlsr_n_u32_x(pt, svld1ub_u32(ph, p), 4);      /* 1.5L..2L */
    *u1 = svsplice_u32(ph, lo, hi);
    *u2 = svlsr_n_u32_x(pt, svld1ub_u32(pt, p + L / 2), 4);
}

FFN_AI svfloat32_t q4_val(svbool_t pt, svuint32_t u, svuint32_t z)
{
    return svcvt_f32_s32_x(pt, svreinterpret_s32_u32(svsub_u32_x(pt, u, z)));
}

/* Tiles of m = 1..G rows over named accumulators (driver/ukr_rows.h says why). */
#define QS_DECL(r) svfloat32_t c##r##0 = zero, c##r##1 = zero, c##r##2 = zero;
#define QS_ZERO(r) c##r##0 = c##r##1 = c##r##2 = zero;
#define QS_FM(r)                                                                                   \
    {                                                                                              \
        const svfloat32_t x = svdup_n_f32(a[k * as + (r)]);                                        \
        c##r##0 = svmla_f32_x(pt, c##r##0, b0, x);                                                 \
        c##r##1 = svmla_f32_x(pt, c##r##1, b1, x);                                                 \
        c##r##2 = svmla_f32_x(pt, c##r##2, b2, x);                                                 \
    }
#define QS_SCALE_ST(r)                                                                             \
    svst1_f32(pt, c + (r)*ldc, svmul_f32_x(pt, c##r##0, s0));                                      \
    svst1_f32(pt, c + (r)*ldc + L, svmul_f32_x(pt, c##r##1, s1));                                  \
    svst1_f32(pt, c + (r)*ldc + 2 * L, svmul_f32_x(pt, c##r##2, s2));
#define QS_GROUP_ACC(r)                                                                            \
    svst1_f32(pt, c + (r)*ldc, svmla_f32_x(pt, svld1_f32(pt, c + (r)*ldc), c##r##0, s0));          \
    svst1_f32(pt, c + (r)*ldc + L, svmla_f32_x(pt, svld1_f32(pt, c + (r)*ldc + L), c##r##1, s1));  \
    svst1_f32(pt, c + (r)*ldc + 2 * L,                                                             \
              svmla_f32_x(pt, svld1_f32(pt, c + (r)*ldc + 2 * L), c##r##2, s2));
#define QS_ZERO_C(r) memset(c + (r)*ldc, 0, 3 * L * sizeof *c);

#define Q8_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const size_t L = svcntw();                                                                 \
        const svbool_t pt = svptrue_b32();                                                         \
        const svfloat32_t zero = svdup_n_f32(0.0f);                                                \
        const int8_t *q = (const int8_t *)w->q;                                                    \
        ROWS(QS_DECL)                                                                              \
        for (size_t k = 0; k < kc; k++) {                                                          \
            __builtin_prefetch(q + k * 3 * L + PF, 0, 0);                                          \
            svfloat32_t b0, b1, b2;                                                                \
            q8_row(q, k, L, pt, &b0, &b1, &b2);                                                    \
            ROWS(QS_FM)                                                                            \
        }                                                                                          \
        const svfloat32_t s0 = svld1_f32(pt, w->scale), s1 = svld1_f32(pt, w->scale + L);          \
        const svfloat32_t s2 = svld1_f32(pt, w->scale + 2 * L);                                    \
        ROWS(QS_SCALE_ST)                                                                          \
    }

/* The bf16 scales of group g (3 L of them) as three fp32 vectors. */
FFN_AI void gscales(const uint16_t *gs, size_t g, size_t L, svbool_t pt, svfloat32_t *s0,
                    svfloat32_t *s1, svfloat32_t *s2)
{
    const uint16_t *p = gs + g * 3 * L;
    *s0 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, svld1uh_u32(pt, p), 16));
    *s1 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, svld1uh_u32(pt, p + L), 16));
    *s2 = svreinterpret_f32_u32(svlsl_n_u32_x(pt, svld1uh_u32(pt, p + 2 * L), 16));
}

#define Q4_TILE(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const size_t L = svcntw(), half = 3 * L / 2, Gs = w->group;                                \
        const svbool_t pt = svptrue_b32(), ph = svwhilelt_b32_u64(0, L / 2);                       \
        const svfloat32_t zero = svdup_n_f32(0.0f);                                                \
        ROWS(QS_ZERO_C)                                                                            \
        ROWS(QS_DECL)                                                                              \
        svuint32_t z0 = svdup_n_u32(8), z1 = z0, z2 = z0;                                          \
        for (size_t g = 0; g < kc / Gs; g++) {                                                     \
            if (w->zero) q4_nibbles(w->zero + g * half, L, pt, ph, &z0, &z1, &z2);                 \
            ROWS(QS_ZERO)                                                                          \
            for (size_t k = g * Gs; k < (g + 1) * Gs; k++) {                                       \
                if (k % 2 == 0) __builtin_prefetch(w->q + k * half + PF, 0, 0);                    \
                svuint32_t u0, u1, u2;                                                             \
                q4_nibbles(w->q + k * half, L, pt, ph, &u0, &u1, &u2);                             \
                const svfloat32_t b0 = q4_val(pt, u0, z0), b1 = q4_val(pt, u1, z1);                \
                const svfloat32_t b2 = q4_val(pt, u2, z2);                                         \
                ROWS(QS_FM)                                                                        \
            }                                                                                      \
            svfloat32_t s0, s1, s2;                                                                \
            gscales(w->gscale, g, L, pt, &s0, &s1, &s2);                                           \
            ROWS(QS_GROUP_ACC)                                                                     \
        }                                                                                          \
    }

FFN_QTILES4(Q8_TILE, q8_tiles)
FFN_QTILES4(Q4_TILE, q4_tiles)

/* The panel is always 3 vectors (nr_sve() stays under FFN_UKR_MAX_NR: 3 x 64 lanes at the
 * architecture's largest 2048-bit vectors), the width these tiles read. */
FFN_QGEMV4(q8_gemv, q8_tiles)
FFN_QGEMV4(q4_gemv, q4_tiles)
FFN__QG_DEQUANT_ENTRIES(nr_sve())

const ffn_ukernels_q ffn_ukernels_q_sve = {
    .isa = "sve",
    .gemv_name = {"q8_gemv__sve", "q4_gemv__sve"},
    .f32 = &ffn_ukernels_sve,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};
