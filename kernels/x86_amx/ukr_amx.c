/* AMX-BF16 microkernel for the driver's bf16 tile schedule (Sapphire Rapids and later):
 * "bf16_gemm__amx_32x32", 2 x 2 tiles of 16 x 16 fp32 (a 32 x 32 output block per panel), with
 * the decode stream, bf16 conversion and activation of the AVX512-BF16 table.
 *
 * gemm: C for m rows (a multiple of 16: 32-row tiles, the last one of 16 rows where m is an
 * odd multiple of 16, which runs only its first two C tiles: T <= 16 prefills no longer pay for
 * 16 rows of zeros) and np consecutive weight panels, cbuf [np][m][32] = A [m][kp] (bf16,
 * stride lda) * B ([kp/2][32][2] each, panel stride kp * 32). K is split into AMX_KC
 * chunks; for each, every row tile's A chunk (16 KiB) is loaded once into L1 and used by all np
 * panels, whose chunks (np x 16 KiB) stay in L2 for all row tiles: each weight byte comes from
 * memory once per call (for T up to the row block) and only one operand per step is read from
 * L2. The accumulator tiles go to cbuf and back between chunks (fp32 stored and reloaded: the
 * same sums as one pass over K). Meanwhile the next chunk of the panels (after the last: the
 * first chunk of the nnext panels at bnext) is prefetched into L2, spread evenly over the
 * steps, so the weight stream overlaps the tiles. With one row tile (T <= 32) there is nothing
 * to share: one pass over K, no software prefetch (the panels then form one sequential stream
 * that the hardware prefetcher follows; chunking and prefetching were 0-20% slower there).
 * Measured on an SPR-class VM (one thread, weights flushed, SwiGLU d=4096
 * f=11008): T=128 44 ms and T=512 155 ms against 63-67 and 239 ms for one pass over K per 32x32
 * block. Up to T = 2 the weights stream instead (AMX matches streaming at T = 2 and beats it
 * at T = 4 by 6-17%). */
#include "../x86_avx512/avx512_common.h"
#include "../x86_avx512/ukr_bf16t.h"
#include "amx_tiles.h"

enum { NR = 32, AMX_KC = 256, AMX_G = 8, AMX_MC = 512 };

static void amx_gemm(size_t kp, const uint16_t *A, size_t lda, size_t m, const uint16_t *B,
                     size_t np, const uint16_t *Bnext, size_t nnext, float *cbuf)
{
    const size_t nrt = (m + 31) / 32, sa = lda * 2, pstride = kp * NR, mrows = m;
    const size_t kc = nrt == 1 ? kp : AMX_KC; /* one row tile: nothing to share */
    for (size_t k0 = 0; k0 < kp; k0 += kc) {
        const size_t k1 = kp - k0 < kc ? kp : k0 + kc;
        const uint16_t *pb = k1 < kp ? B + k1 * NR : Bnext;
        const size_t pn = nrt == 1 ? 0 : k1 < kp ? np : (Bnext ? nnext : 0);
        const size_t pk = k1 < kp ? kp - k1 : kp;
        const size_t cb = (pk < AMX_KC ? pk : AMX_KC) * NR * 2; /* bytes per panel chunk */
        const size_t steps = nrt * np * ((k1 - k0) / 32);
        const size_t pf_step = ffn__round_up((pn * cb + steps - 1) / steps, 64);
        size_t pq = 0;
        for (size_t ri = 0; ri < nrt; ri++) {
            const uint16_t *a = A + ri * 32 * lda;
            const bool half = ri * 32 + 16 == m; /* the last tile holds 16 rows */
            for (size_t g = 0; g < np; g++) {
                const uint16_t *b = B + g * pstride;
                float *c = cbuf + (g * mrows + ri * 32) * 32;
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
                for (size_t kb = k0; kb < k1; kb += 32) {
                    for (size_t o = 0; o < pf_step && pq < pn * cb; o += 64, pq += 64)
                        _mm_prefetch((const char *)(pb + (pq / cb) * pstride) + pq % cb,
                                     _MM_HINT_T1);
                    _tile_loadd(4, a + kb, sa);
                    _tile_loadd(6, b + kb * NR, 128);
                    _tile_loadd(7, b + kb * NR + 32, 128);
                    _tile_dpbf16ps(0, 4, 6);
                    _tile_dpbf16ps(1, 4, 7);
                    if (!half) {
                        _tile_loadd(5, a + 16 * lda + kb, sa);
                        _tile_dpbf16ps(2, 5, 6);
                        _tile_dpbf16ps(3, 5, 7);
                    }
                }
                _tile_stored(0, c, 128);
                _tile_stored(1, c + 16, 128);
                if (!half) {
                    _tile_stored(2, c + 16 * 32, 128);
                    _tile_stored(3, c + 16 * 32 + 16, 128);
                }
            }
        }
    }
}

const ffn_ukernels_bf16t ffn_ukernels_amx = {
    .isa = "amx",
    .gemm_name = "bf16_gemm__amx_32x32",
    .row_tile = 16,
    .panels = AMX_G,
    .mc = AMX_MC,
    .stream_rows = 2,
    .stream_g = 6,
    .begin = ffn__amx_begin,
    .end = ffn__amx_end,
    .gemm = amx_gemm,
    .gemv = ffn__bf16t_gemv,
    .narrow = ffn__bf16t_narrow,
    .act = ffn__avx512_act,
};
