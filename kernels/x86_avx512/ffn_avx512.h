/* The x86 AVX-512 dense FFN kernels (compiled with the AVX-512 flags in their own object
 * library; dispatch.c registers them only when CPUID and xgetbv say the CPU and OS run them).
 *  - ffn_kernel_f32_avx512 "f32_ffn__avx512_14x32": fp32 weights. Prefill: a 14x32 register
 *    tile (28 zmm accumulators, x broadcast from k-major packed row panels), cache-blocked
 *    (each 256 x 32 weight chunk stays in L1 for all row panels of a block, the next chunk is
 *    prefetched into L2 meanwhile); gate and up columns are interleaved 16+16 in each packed
 *    panel so one microkernel computes both and its epilogue writes h = act(g) u. Decode
 *    (T <= 14) uses the same panels as a weight stream (no K blocking, a software prefetch
 *    ahead; T = 1 reads each panel as four concurrent streams).
 *  - ffn_kernel_bf16_avx512_amx "bf16_ffn__amx_32x32": bf16 weights (needs AMX-BF16); prefill
 *    with AMX tiles (x and h rounded to bf16), decode (T <= 2) streams the bf16 weights,
 *    widened to fp32 with shifts, with fp32 x and fp32 accumulation.
 *  - ffn_kernel_bf16_avx512 "bf16_ffn__avx512bf16_14x32": the same without AMX, streaming up
 *    to T = 64 (6 rows per pass over a panel); prefill with VDPBF16PS on the same layout.
 * Every output element is reduced in an order that does not depend on the thread count, so 1
 * and N threads give bit-identical y. */
#ifndef FFNROOF_KERNELS_FFN_AVX512_H
#define FFNROOF_KERNELS_FFN_AVX512_H

#include "ffnroof/kernels.h"

extern const ffn_kernel ffn_kernel_f32_avx512;
extern const ffn_kernel ffn_kernel_bf16_avx512_amx;
extern const ffn_kernel ffn_kernel_bf16_avx512;

#endif
