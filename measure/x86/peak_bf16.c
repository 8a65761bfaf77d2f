/* Peak bf16 dot-product throughput with AVX512-BF16 VDPBF16PS (compiled with -mavx512f
 * -mavx512bf16; called only when CPUID leaf 7.1 EAX[5] and the ZMM state say it is usable). Each
 * VDPBF16PS zmm multiplies 32 bf16 pairs and adds them pairwise into 16 fp32 lanes. 16 independent
 * accumulators, as for fp32 FMA. The inputs are bf16(0.01), so the accumulators grow by 2e-4 per
 * iteration: no overflow within any realistic run.
 * FLOPs per iteration: 16 instr x 16 lanes x 2 MAC x 2 = FFN__BF16_AVX512_FLOPS_PER_ITER (1024). */
#include <immintrin.h>

#include "internal.h"

double ffn__peak_bf16_avx512(uint64_t iters)
{
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3C23); /* bf16 0.01 */
    const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3C23);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
           a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
    for (uint64_t i = 0; i < iters; i++) {
        a0 = _mm512_dpbf16_ps(a0, x, y);
        a1 = _mm512_dpbf16_ps(a1, x, y);
        a2 = _mm512_dpbf16_ps(a2, x, y);
        a3 = _mm512_dpbf16_ps(a3, x, y);
        a4 = _mm512_dpbf16_ps(a4, x, y);
        a5 = _mm512_dpbf16_ps(a5, x, y);
        a6 = _mm512_dpbf16_ps(a6, x, y);
        a7 = _mm512_dpbf16_ps(a7, x, y);
        a8 = _mm512_dpbf16_ps(a8, x, y);
        a9 = _mm512_dpbf16_ps(a9, x, y);
        a10 = _mm512_dpbf16_ps(a10, x, y);
        a11 = _mm512_dpbf16_ps(a11, x, y);
        a12 = _mm512_dpbf16_ps(a12, x, y);
        a13 = _mm512_dpbf16_ps(a13, x, y);
        a14 = _mm512_dpbf16_ps(a14, x, y);
        a15 = _mm512_dpbf16_ps(a15, x, y);
    }
    const __m512 s = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                      _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                      _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
    return (double)_mm512_reduce_add_ps(s);
}
