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
    /* distinct starting values: chains that start equal and are updated alike stay equal, and
     * GCC 12 merged the 16 of them into one (a latency-bound loop counted as 16 instructions) */
    __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(1.0f), a2 = _mm512_set1_ps(2.0f),
           a3 = _mm512_set1_ps(3.0f), a4 = _mm512_set1_ps(4.0f), a5 = _mm512_set1_ps(5.0f),
           a6 = _mm512_set1_ps(6.0f), a7 = _mm512_set1_ps(7.0f), a8 = _mm512_set1_ps(8.0f),
           a9 = _mm512_set1_ps(9.0f), a10 = _mm512_set1_ps(10.0f), a11 = _mm512_set1_ps(11.0f),
           a12 = _mm512_set1_ps(12.0f), a13 = _mm512_set1_ps(13.0f), a14 = _mm512_set1_ps(14.0f),
           a15 = _mm512_set1_ps(15.0f);
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
