/* Peak int8 dot-product throughput with AVX512-VNNI VPDPBUSD (compiled with -mavx512f
 * -mavx512vnni; called only when CPUID leaf 7 ECX[11] and the ZMM state say it is usable). Each
 * VPDPBUSD zmm multiplies 64 u8 x s8 pairs and adds groups of 4 into 16 int32 lanes. 16
 * independent accumulators (latency 5 x 2 ports on Intel, with margin). The int32 lanes may wrap
 * after ~5e8 iterations, which is harmless for a throughput test (vector adds wrap by definition).
 * Ops per iteration: 16 instr x 16 lanes x 4 MAC x 2 = FFN__INT8_VNNI_FLOPS_PER_ITER (2048). */
#include <immintrin.h>
#include <stdint.h>

#include "internal.h"

double ffn__peak_int8_vnni(uint64_t iters)
{
    const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    /* distinct starting values: chains that start equal and are updated alike stay equal, and
     * GCC 12 merged the 16 of them into one (a latency-bound loop counted as 16 instructions) */
    __m512i a0 = _mm512_set1_epi32(0), a1 = _mm512_set1_epi32(1), a2 = _mm512_set1_epi32(2),
            a3 = _mm512_set1_epi32(3), a4 = _mm512_set1_epi32(4), a5 = _mm512_set1_epi32(5),
            a6 = _mm512_set1_epi32(6), a7 = _mm512_set1_epi32(7), a8 = _mm512_set1_epi32(8),
            a9 = _mm512_set1_epi32(9), a10 = _mm512_set1_epi32(10), a11 = _mm512_set1_epi32(11),
            a12 = _mm512_set1_epi32(12), a13 = _mm512_set1_epi32(13), a14 = _mm512_set1_epi32(14),
            a15 = _mm512_set1_epi32(15);
    for (uint64_t i = 0; i < iters; i++) {
        a0 = _mm512_dpbusd_epi32(a0, x, y);
        a1 = _mm512_dpbusd_epi32(a1, x, y);
        a2 = _mm512_dpbusd_epi32(a2, x, y);
        a3 = _mm512_dpbusd_epi32(a3, x, y);
        a4 = _mm512_dpbusd_epi32(a4, x, y);
        a5 = _mm512_dpbusd_epi32(a5, x, y);
        a6 = _mm512_dpbusd_epi32(a6, x, y);
        a7 = _mm512_dpbusd_epi32(a7, x, y);
        a8 = _mm512_dpbusd_epi32(a8, x, y);
        a9 = _mm512_dpbusd_epi32(a9, x, y);
        a10 = _mm512_dpbusd_epi32(a10, x, y);
        a11 = _mm512_dpbusd_epi32(a11, x, y);
        a12 = _mm512_dpbusd_epi32(a12, x, y);
        a13 = _mm512_dpbusd_epi32(a13, x, y);
        a14 = _mm512_dpbusd_epi32(a14, x, y);
        a15 = _mm512_dpbusd_epi32(a15, x, y);
    }
    const __m512i s = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                         _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7))),
        _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)),
                         _mm512_add_epi32(_mm512_add_epi32(a12, a13), _mm512_add_epi32(a14, a15))));
    /* The lanes wrap (the accumulators run long); sum them in 64 bits, since the scalar
     * reduction of _mm512_reduce_add_epi32 would be signed int32 overflow. The result only
     * keeps the loop from being optimised away. */
    int32_t lanes[16];
    _mm512_storeu_si512((void *)lanes, s);
    int64_t t = 0;
    for (int i = 0; i < 16; i++)
        t += lanes[i];
    return (double)t;
}
