/* AVX512-VNNI W8A8 microkernels (Cascade Lake, Ice Lake, Sapphire Rapids, Zen 4/5):
 * "q8a8_gemm__avx512vnni_8x32", 8 rows x 32 columns of int32 (16 zmm accumulators), one
 * VPDPBUSD (u8 x s8, 64 products into 16 int32 lanes) per 16 columns, row and k-quad. VPDPBUSD
 * wants its first operand unsigned, so the activation codes are stored as q + 128 and each sum
 * is corrected by 128 x the weight column's sum (packed beside the panel): exact, since the
 * instruction wraps rather than saturates. The same tile with m <= 4 rows is the decode
 * stream. */
#include "avx512_common.h"
#include "ukr_avx512_q.h"

#define I8_STEP(acc, a4, b) acc = _mm512_dpbusd_epi32(acc, a4, b)
#include "ukr_avx512_i8.h"
I8_TILE(i8_tile, 128)
I8_GEMM(i8_gemm, i8_tile)

static void i8_quant(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                     float *scale)
{
    ffn__avx512_quant_rows(128, rows, n, src, lds, q, ldq, scale);
}

void ffn__avx512vnni_i8_gemv(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b,
                             size_t np, const int32_t *bsum, int32_t *cbuf)
{
    i8_gemm(kp, a, lda, m, b, np, bsum, cbuf);
}

const ffn_ukernels_i8 ffn_ukernels_i8_avx512vnni = {
    .isa = "avx512",
    .gemm_name = "q8a8_gemm__avx512vnni_8x32",
    .kv = 4,
    .kpad = 4,
    .a_offset = 128,
    .row_tile = 1,
    .panels = 4,
    .mc = 128,
    .stream_rows = 4,
    .stream_g = 4,
    .gemm = i8_gemm,
    .gemv = i8_gemm,
    .quant = i8_quant,
    .act = ffn__avx512_act,
    .scale = ffn__avx512_i8_scale,
};
