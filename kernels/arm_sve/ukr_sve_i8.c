/* SVE W8A8 microkernel, vector-length agnostic: "q8a8_gemm__sve_8x2vl", 8 rows x 2 vectors of
 * int32 columns per pass over the 32-column panels (SDOT z.s, part of base SVE: 4 products per
 * 32-bit lane). The panels are the SDOT layout (kv = 4: element (k, c) at
 * q[(k / 4) * 128 + c * 4 + k % 4]), so one vector load at column c holds the k-quad of
 * svcntw() consecutive columns, each in its own lane; each row's 4 activation codes are
 * broadcast to every lane (LD1RW). A pass is 16 SDOT on 16 accumulators for 2 weight loads and
 * 8 broadcasts; a panel is 32 / w columns wide in vectors of w = min(svcntw(), 32) lanes (8, 4,
 * 2 and 1 vectors at 128, 256, 512 and 1024 bits; 2048-bit vectors run half-predicated), so
 * the passes per panel are 4, 2, 1 and, at 1024 bits and up, one single-vector pass. Both
 * operands are signed, the activation codes stay int8. Dispatched after the NEON SMMLA tile
 * (32 products an instruction at any vector length) and before NEON SDOT. Correct under qemu
 * at 128, 256 and 512 bits; not timed on Arm hardware. */
#include <arm_sve.h>
#include <string.h>

#include "../portable/ukr_q_generic.h"
#include "sve_common.h"

#define FFN_AI static inline __attribute__((always_inline))

FFN_AI svint8_t bcast4(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return svreinterpret_s8_s32(svdup_n_s32(v));
}

/* mr rows (1..8) against columns col .. col + w0 - 1 (x) and, with two, the next w1 (y) of one
 * panel; w0, w1 <= the vector's lanes (w1 may be 0 at the panel's end). */
FFN_AI void pass(const int mr, const bool two, size_t kp, const int8_t *a, size_t lda,
                 const int8_t *b, size_t col, size_t w0, size_t w1, int32_t *c)
{
    const svbool_t p8x = svwhilelt_b8_u64(0, w0 * 4), p32x = svwhilelt_b32_u64(0, w0);
    const svbool_t p8y = svwhilelt_b8_u64(0, w1 * 4), p32y = svwhilelt_b32_u64(0, w1);
    svint32_t x0 = svdup_n_s32(0), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0, x7 = x0;
    svint32_t y0 = x0, y1 = x0, y2 = x0, y3 = x0, y4 = x0, y5 = x0, y6 = x0, y7 = x0;
    for (size_t kq = 0; kq < kp / 4; kq++) {
        const int8_t *bk = b + kq * 128 + col * 4;
        const svint8_t b0 = svld1_s8(p8x, bk);
        const svint8_t b1 = two ? svld1_s8(p8y, bk + w0 * 4) : svdup_n_s8(0);
        const int8_t *ak = a + kq * 4;
#define ROW(r)                                                                                     \
    if (mr > r) {                                                                                  \
        const svint8_t ar = bcast4(ak + (size_t)(r)*lda);                                          \
        x##r = svdot_s32(x##r, b0, ar);                                                            \
        if (two) y##r = svdot_s32(y##r, b1, ar);                                                   \
    }
        ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
#undef ROW
    }
#define OUT(r)                                                                                     \
    if (mr > r) {                                                                                  \
        svst1_s32(p32x, c + (size_t)(r)*32 + col, x##r);                                           \
        if (two) svst1_s32(p32y, c + (size_t)(r)*32 + col + w0, y##r);                             \
    }
    OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
#undef OUT
}

/* The panel's 32 columns in passes of two vectors (one at 1024 bits and up); a vector length
 * that does not divide 32 (384 bits: 12 lanes) ends on a predicated pass. */
FFN_AI void panel_rows(const int mr, size_t kp, const int8_t *a, size_t lda, const int8_t *b,
                       int32_t *c)
{
    const size_t vl = svcntw();
    if (vl >= 32) {
        pass(mr, false, kp, a, lda, b, 0, 32, 0, c);
        return;
    }
    for (size_t col = 0; col < 32; col += 2 * vl) {
        const size_t w0 = 32 - col < vl ? 32 - col : vl;
        const size_t rest = 32 - col - w0, w1 = rest < vl ? rest : vl;
        pass(mr, true, kp, a, lda, b, col, w0, w1, c);
    }
}

static void i8_gemm(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b, size_t np,
                    const int32_t *bsum, int32_t *cbuf)
{
    (void)bsum;
    const int8_t *as = (const int8_t *)a;
    for (size_t g = 0; g < np; g++) {
        const int8_t *bg = b + g * kp * 32;
        for (size_t r0 = 0; r0 < m; r0 += 8) {
            int32_t *c = cbuf + (g * m + r0) * 32;
            const int8_t *ar = as + r0 * lda;
            switch (m - r0 >= 8 ? 8 : (int)(m - r0)) {
            case 8:
                panel_rows(8, kp, ar, lda, bg, c);
                break;
            case 7:
                panel_rows(7, kp, ar, lda, bg, c);
                break;
            case 6:
                panel_rows(6, kp, ar, lda, bg, c);
                break;
            case 5:
                panel_rows(5, kp, ar, lda, bg, c);
                break;
            case 4:
                panel_rows(4, kp, ar, lda, bg, c);
                break;
            case 3:
                panel_rows(3, kp, ar, lda, bg, c);
                break;
            case 2:
                panel_rows(2, kp, ar, lda, bg, c);
                break;
            default:
                panel_rows(1, kp, ar, lda, bg, c);
                break;
            }
        }
    }
}

const ffn_ukernels_i8 ffn_ukernels_i8_sve = {
    .isa = "sve",
    .gemm_name = "q8a8_gemm__sve_8x2vl",
    .kv = 4,
    .kpad = 4,
    .a_offset = 0,
    .row_tile = 1,
    .panels = 4,
    .mc = 64,
    .stream_rows = 4,
    .stream_g = 4,
    .gemm = i8_gemm,
    .gemv = i8_gemm,
    .quant = ffn__qg_quant_s8,
    .act = ffn__sve_act,
};
