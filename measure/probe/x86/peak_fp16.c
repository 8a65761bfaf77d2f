/* Peak fp16 FMA throughput with AVX512-FP16 VFMADD231PH (compiled with -mavx512f -mavx512fp16;
 * called only when CPUID leaf 7 EDX[23] and the ZMM state say it is usable). 16 independent zmm
 * accumulators of 32 halves; acc = acc * 0.99 + 0.01 converges to 1 (no overflow, no subnormals).
 * FLOPs per iteration: 16 FMA x 32 lanes x 2 = FFN__FP16_AVX512_FLOPS_PER_ITER (1024). */
#include <immintrin.h>

#include "internal.h"

double ffn__peak_fp16_avx512(uint64_t iters)
{
    const __m512h m = _mm512_castsi512_ph(_mm512_set1_epi16(0x3BEC)); /* 0.99 */
    const __m512h c = _mm512_castsi512_ph(_mm512_set1_epi16(0x211F)); /* 0.01 */
    /* distinct starting values (1.0 plus j ulps): chains that start equal and are updated alike
     * stay equal, and GCC 12 merged the 16 of them into one (a latency-bound loop counted as 16) */
#define START(j) _mm512_castsi512_ph(_mm512_set1_epi16((short)(0x3C00 + (j))))
    __m512h a0 = START(0), a1 = START(1), a2 = START(2), a3 = START(3), a4 = START(4),
            a5 = START(5), a6 = START(6), a7 = START(7), a8 = START(8), a9 = START(9),
            a10 = START(10), a11 = START(11), a12 = START(12), a13 = START(13), a14 = START(14),
            a15 = START(15);
#undef START
    for (uint64_t i = 0; i < iters; i++) {
        a0 = _mm512_fmadd_ph(a0, m, c);
        a1 = _mm512_fmadd_ph(a1, m, c);
        a2 = _mm512_fmadd_ph(a2, m, c);
        a3 = _mm512_fmadd_ph(a3, m, c);
        a4 = _mm512_fmadd_ph(a4, m, c);
        a5 = _mm512_fmadd_ph(a5, m, c);
        a6 = _mm512_fmadd_ph(a6, m, c);
        a7 = _mm512_fmadd_ph(a7, m, c);
        a8 = _mm512_fmadd_ph(a8, m, c);
        a9 = _mm512_fmadd_ph(a9, m, c);
        a10 = _mm512_fmadd_ph(a10, m, c);
        a11 = _mm512_fmadd_ph(a11, m, c);
        a12 = _mm512_fmadd_ph(a12, m, c);
        a13 = _mm512_fmadd_ph(a13, m, c);
        a14 = _mm512_fmadd_ph(a14, m, c);
        a15 = _mm512_fmadd_ph(a15, m, c);
    }
    const __m512h s = _mm512_add_ph(
        _mm512_add_ph(_mm512_add_ph(_mm512_add_ph(a0, a1), _mm512_add_ph(a2, a3)),
                      _mm512_add_ph(_mm512_add_ph(a4, a5), _mm512_add_ph(a6, a7))),
        _mm512_add_ph(_mm512_add_ph(_mm512_add_ph(a8, a9), _mm512_add_ph(a10, a11)),
                      _mm512_add_ph(_mm512_add_ph(a12, a13), _mm512_add_ph(a14, a15))));
    /* widen the low 16 halves to fp32 for the sink */
    const __m512 lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(s));
    return (double)_mm512_reduce_add_ps(lo);
}
