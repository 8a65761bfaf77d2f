/* AVX-VNNI W8A8 microkernel (Alder Lake and later client CPUs, Sapphire Rapids, Zen 5):
 * "q8a8_gemm__avx2vnni_2x32", the AVX2 tile of ukr_avx2_i8.h with one VEX-encoded VPDPBUSD
 * (u8 x s8, 32 products into 8 int32 lanes) per 8 columns, row and k-quad. The activation codes
 * are stored as q + 128 (VPDPBUSD's unsigned operand) and corrected by the column sums. */
#include "ukr_avx2_q.h"

#define I8_STEP(acc, a4, b) acc = _mm256_dpbusd_avx_epi32(acc, a4, b)
#include "ukr_avx2_i8.h"
I8_TILE(i8_gemm, 128)

static void i8_quant(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                     float *scale)
{
    ffn__avx2_quant_rows(128, rows, n, src, lds, q, ldq, scale);
}

const ffn_ukernels_i8 ffn_ukernels_i8_avxvnni = {
    .isa = "avx2",
    .gemm_name = "q8a8_gemm__avx2vnni_2x32",
    .kv = 4,
    .kpad = 4,
    .a_offset = 128,
    .row_tile = 1,
    .panels = 4,
    .mc = 64,
    .stream_rows = 4,
    .stream_g = 4,
    .gemm = i8_gemm,
    .gemv = i8_gemm,
    .quant = i8_quant,
    .act = ffn__avx2_act,
};
