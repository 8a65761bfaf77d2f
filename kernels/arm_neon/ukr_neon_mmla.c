/* NEON I8MM W8A8 microkernel (FEAT_I8MM: Neoverse V1/V2/N2, Graviton3/4, Grace, Apple M2 and
 * later): "q8a8_gemm__neoni8mm_4x16", 4 rows x 16 columns of int32 per pass (two passes per
 * 32-column panel). SMMLA multiplies a 2x8 block of activation codes by an 8x2 block of weight
 * codes into a 2x2 int32 block: 32 products per instruction, twice SDOT's 16, so one k-octet
 * of a pass is 16 SMMLA (2 row pairs x 8 column pairs) on 16 accumulators, 8 weight vectors and
 * 2 activation vectors (26 of the 32 registers). The panels are packed with kv = 8: element
 * (k, c) at q[(k / 8) * 256 + c * 8 + k % 8], so 16 consecutive bytes are the 8 k-values of
 * columns c and c + 1, the layout SMMLA reads for its second operand. Both operands are signed
 * (SMMLA is s8 x s8), so the activation codes stay int8. An odd last row pairs with a zero row.
 * Runs under qemu in CI (-cpu max has FEAT_I8MM); not timed on Arm hardware. */
#include <arm_neon.h>

#include "../portable/ukr_q_generic.h"
#include "ukr_neon_q.h"

#define FFN_AI static inline __attribute__((always_inline))

/* mr rows (1..4) of A against 16 columns of one panel (b at the first of them: column pair j
 * of k-octet q at b + q * 256 + j * 16); c: the 16 columns of row 0 in cbuf (row stride 32). */
FFN_AI void tile(const int mr, size_t kp, const int8_t *a, size_t lda, const int8_t *b, int32_t *c)
{
    const int pairs = (mr + 1) / 2;
    int32x4_t acc[2][8];
    for (int p = 0; p < pairs; p++)
        for (int j = 0; j < 8; j++)
            acc[p][j] = vdupq_n_s32(0);
    const int8x8_t zero = vdup_n_s8(0);
    for (size_t q = 0; q < kp / 8; q++) {
        const int8_t *bq = b + q * 256;
        __builtin_prefetch(bq + 2048);
        int8x16_t bv[8];
        for (int j = 0; j < 8; j++)
            bv[j] = vld1q_s8(bq + 16 * j);
        for (int p = 0; p < pairs; p++) {
            const int r0 = 2 * p, r1 = 2 * p + 1;
            const int8x8_t lo = vld1_s8(a + (size_t)r0 * lda + q * 8);
            const int8x8_t hi = r1 < mr ? vld1_s8(a + (size_t)r1 * lda + q * 8) : zero;
            const int8x16_t av = vcombine_s8(lo, hi);
            for (int j = 0; j < 8; j++)
                acc[p][j] = vmmlaq_s32(acc[p][j], av, bv[j]);
        }
    }
    /* acc[p][j] = [r0 c, r0 c+1, r1 c, r1 c+1] for rows 2p, 2p + 1 and columns 2j, 2j + 1 */
    for (int p = 0; p < pairs; p++)
        for (int j = 0; j < 8; j++) {
            vst1_s32(c + (size_t)(2 * p) * 32 + 2 * j, vget_low_s32(acc[p][j]));
            if (2 * p + 1 < mr)
                vst1_s32(c + (size_t)(2 * p + 1) * 32 + 2 * j, vget_high_s32(acc[p][j]));
        }
}

static void i8_gemm(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b, size_t np,
                    const int32_t *bsum, int32_t *cbuf)
{
    (void)bsum;
    const int8_t *as = (const int8_t *)a;
    for (size_t g = 0; g < np; g++) {
        const int8_t *bg = b + g * kp * 32;
        for (size_t r0 = 0; r0 < m; r0 += 4) {
            int32_t *c = cbuf + (g * m + r0) * 32;
            const int8_t *ar = as + r0 * lda;
            for (int h = 0; h < 2; h++) {
                const int8_t *bh = bg + h * 128; /* columns 16h.. start 16h * 8 bytes in */
                switch (m - r0 >= 4 ? 4 : (int)(m - r0)) {
                case 4:
                    tile(4, kp, ar, lda, bh, c + 16 * h);
                    break;
                case 3:
                    tile(3, kp, ar, lda, bh, c + 16 * h);
                    break;
                case 2:
                    tile(2, kp, ar, lda, bh, c + 16 * h);
                    break;
                default:
                    tile(1, kp, ar, lda, bh, c + 16 * h);
                    break;
                }
            }
        }
    }
}

const ffn_ukernels_i8 ffn_ukernels_i8_neoni8mm = {
    .isa = "neon",
    .gemm_name = "q8a8_gemm__neoni8mm_4x16",
    .kv = 8,
    .kpad = 8,
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
