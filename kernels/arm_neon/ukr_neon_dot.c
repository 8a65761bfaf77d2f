/* NEON SDOT W8A8 microkernel (FEAT_DotProd: Cortex-A76/Neoverse N1 and later):
 * "q8a8_gemm__neondot_2x32", 2 rows x 32 columns of int32 (16 accumulator vectors + 8 for the
 * k-quad of B + 2 broadcasts, 26 of the 32 registers), one SDOT (s8 x s8, 16 products into 4
 * int32 lanes) per 4 columns, row and k-quad; the codes stay signed (SDOT takes both operands
 * signed). Runs under qemu in CI; not timed on Arm hardware. */
#include <arm_neon.h>
#include <string.h>

#include "../portable/ukr_q_generic.h"
#include "ukr_neon_q.h"

#define FFN_AI static inline __attribute__((always_inline))

FFN_AI void tile(const int m, size_t kp, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c)
{
    int32x4_t acc[2][8];
    for (int r = 0; r < m; r++)
        for (int j = 0; j < 8; j++)
            acc[r][j] = vdupq_n_s32(0);
    for (size_t kq = 0; kq < kp / 4; kq++) {
        const int8_t *bk = b + kq * 128;
        __builtin_prefetch(bk + 1024);
        int8x16_t bv[8];
        for (int j = 0; j < 8; j++)
            bv[j] = vld1q_s8(bk + 16 * j);
        for (int r = 0; r < m; r++) {
            int32_t q4;
            memcpy(&q4, a + (size_t)r * lda + kq * 4, 4);
            const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(q4));
            for (int j = 0; j < 8; j++)
                acc[r][j] = vdotq_s32(acc[r][j], bv[j], av);
        }
    }
    for (int r = 0; r < m; r++)
        for (int j = 0; j < 8; j++)
            vst1q_s32(c + r * 32 + 4 * j, acc[r][j]);
}

static void i8_gemm(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b, size_t np,
                    const int32_t *bsum, int32_t *cbuf)
{
    (void)bsum;
    for (size_t g = 0; g < np; g++)
        for (size_t r0 = 0; r0 < m; r0 += 2) {
            int32_t *c = cbuf + (g * m + r0) * 32;
            if (m - r0 >= 2)
                tile(2, kp, a + r0 * lda, lda, b + g * kp * 32, c);
            else
                tile(1, kp, a + r0 * lda, lda, b + g * kp * 32, c);
        }
}

const ffn_ukernels_i8 ffn_ukernels_i8_neondot = {
    .isa = "neon",
    .gemm_name = "q8a8_gemm__neondot_2x32",
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
    .act = ffn__neon_act,
};
