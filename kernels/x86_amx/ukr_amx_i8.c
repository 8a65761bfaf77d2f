/* AMX-INT8 W8A8 microkernel (Sapphire Rapids and later): "q8a8_gemm__amx_32x32", 2 x 2 tiles
 * of 16 x 16 int32 (a 32 x 32 block per panel), TDPBUSD (u8 x s8: 16 x 16 x 64 products per
 * instruction), the bf16 AMX kernel's schedule (ukr_amx.c: K in chunks whose A rows are loaded
 * once per row tile and shared by the group's panels, the next chunk prefetched into L2 spread
 * over the steps, one pass over K for a single row tile). Activation codes are stored as q +
 * 128 (the unsigned operand) and every sum is corrected by 128 x the weight column's sum after
 * the last chunk. The last row tile holds 16 rows where m is an odd multiple of 16 (as in
 * ukr_amx.c). Decode (T <= stream_rows) streams the weights through the VNNI tile
 * instead, which reads each weight byte once without padding T to 16 rows. */
#include "../x86_avx512/avx512_common.h"
#include "../x86_avx512/ukr_avx512_q.h"
#include "amx_tiles.h"

enum { NR = 32, AMX_KC = 512, AMX_G = 8, AMX_MC = 512 };

/* c (rows of 32 int32, row stride 32) -= 128 * bsum. */
static void unoffset(int32_t *c, const int32_t *bsum, int rows)
{
    const __m512i o0 = _mm512_slli_epi32(_mm512_loadu_si512(bsum), 7);
    const __m512i o1 = _mm512_slli_epi32(_mm512_loadu_si512(bsum + 16), 7);
    for (int r = 0; r < rows; r++) {
        _mm512_storeu_si512(c + r * 32, _mm512_sub_epi32(_mm512_loadu_si512(c + r * 32), o0));
        _mm512_storeu_si512(c + r * 32 + 16,
                            _mm512_sub_epi32(_mm512_loadu_si512(c + r * 32 + 16), o1));
    }
}

static void amx_gemm(size_t kp, const uint8_t *A, size_t lda, size_t m, const int8_t *B, size_t np,
                     const int32_t *bsum, int32_t *cbuf)
{
    const size_t nrt = (m + 31) / 32, pstride = kp * NR;
    const size_t kc = nrt == 1 ? kp : AMX_KC; /* one row tile: nothing to share */
    for (size_t k0 = 0; k0 < kp; k0 += kc) {
        const size_t k1 = kp - k0 < kc ? kp : k0 + kc;
        /* prefetch the panels' next chunk into L2 while this one computes */
        const size_t pn = nrt == 1 || k1 >= kp ? 0 : np;
        const size_t pk = kp - k1;
        const size_t cb = (pk < AMX_KC ? pk : AMX_KC) * NR; /* bytes per panel chunk */
        const size_t steps = nrt * np * ((k1 - k0) / 64);
        const size_t pf_step = pn ? ffn__round_up((pn * cb + steps - 1) / steps, 64) : 0;
        size_t pq = 0;
        for (size_t ri = 0; ri < nrt; ri++) {
            const uint8_t *a = A + ri * 32 * lda;
            const bool half = ri * 32 + 16 == m; /* the last tile holds 16 rows */
            for (size_t g = 0; g < np; g++) {
                const int8_t *b = B + g * pstride;
                int32_t *c = cbuf + (g * m + ri * 32) * 32;
                if (k0 == 0) {
                    _tile_zero(0);
                    _tile_zero(1);
                    _tile_zero(2);
                    _tile_zero(3);
                } else {
                    _tile_loadd(0, c, 128);
                    _tile_loadd(1, c + 16, 128);
                    if (!half) {
                        _tile_loadd(2, c + 16 * 32, 128);
                        _tile_loadd(3, c + 16 * 32 + 16, 128);
                    }
                }
                for (size_t kb = k0; kb < k1; kb += 64) {
                    for (size_t o = 0; o < pf_step && pq < pn * cb; o += 64, pq += 64)
                        _mm_prefetch((const char *)(B + (pq / cb) * pstride + k1 * NR) + pq % cb,
                                     _MM_HINT_T1);
                    _tile_loadd(4, a + kb, lda);
                    _tile_loadd(6, b + kb * NR, 128);
                    _tile_loadd(7, b + kb * NR + 64, 128);
                    _tile_dpbusd(0, 4, 6);
                    _tile_dpbusd(1, 4, 7);
                    if (!half) {
                        _tile_loadd(5, a + 16 * lda + kb, lda);
                        _tile_dpbusd(2, 5, 6);
                        _tile_dpbusd(3, 5, 7);
                    }
                }
                _tile_stored(0, c, 128);
                _tile_stored(1, c + 16, 128);
                if (!half) {
                    _tile_stored(2, c + 16 * 32, 128);
                    _tile_stored(3, c + 16 * 32 + 16, 128);
                }
                if (k1 == kp) unoffset(c, bsum + g * 32, half ? 16 : 32);
            }
        }
    }
}

static void amx_quant(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                      float *scale)
{
    ffn__avx512_quant_rows(128, rows, n, src, lds, q, ldq, scale);
}

const ffn_ukernels_i8 ffn_ukernels_i8_amx = {
    .isa = "amx",
    .gemm_name = "q8a8_gemm__amx_32x32",
    .kv = 4,
    .kpad = 64,
    .a_offset = 128,
    .row_tile = 16,
    .panels = AMX_G,
    .mc = AMX_MC,
    .stream_rows = 4,
    .stream_g = 4,
    .begin = ffn__amx_begin,
    .end = ffn__amx_end,
    .gemm = amx_gemm,
    .gemv = ffn__avx512vnni_i8_gemv,
    .quant = amx_quant,
    .act = ffn__avx512_act,
    .scale = ffn__avx512_i8_scale,
};
