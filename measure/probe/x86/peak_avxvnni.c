/* Peak int8 dot-product throughput with AVX-VNNI VPDPBUSD ymm (the VEX encoding: Alder Lake and
 * later client cores, Sapphire Rapids, Zen 5; compiled with -mavx2 -mavxvnni; called only when
 * CPUID leaf 7 subleaf 1 EAX[4] and the YMM state say it is usable): the int8 roof of a CPU whose
 * int8 path is 256-bit (no AVX512-VNNI, or FFNROOF_ISA=avx2). Each VPDPBUSD ymm multiplies 32
 * u8 x s8 pairs and adds groups of 4 into 8 int32 lanes; 12 independent accumulators (latency 5
 * x 2 ports, with margin) fit the 16 ymm registers with the two inputs. Ops per iteration:
 * 12 instr x 8 lanes x 4 MAC x 2 = FFN__INT8_AVX_VNNI_FLOPS_PER_ITER (768). */
#include <immintrin.h>
#include <stdint.h>

#include "internal.h"

double ffn__peak_int8_avx_vnni(uint64_t iters)
{
    const __m256i x = _mm256_set1_epi8(1), y = _mm256_set1_epi8(1);
    /* distinct starting values: chains that start equal and are updated alike stay equal, and
     * GCC 12 merged the 12 of them into one (a latency-bound loop counted as 12 instructions) */
    __m256i a0 = _mm256_set1_epi32(0), a1 = _mm256_set1_epi32(1), a2 = _mm256_set1_epi32(2),
            a3 = _mm256_set1_epi32(3), a4 = _mm256_set1_epi32(4), a5 = _mm256_set1_epi32(5),
            a6 = _mm256_set1_epi32(6), a7 = _mm256_set1_epi32(7), a8 = _mm256_set1_epi32(8),
            a9 = _mm256_set1_epi32(9), a10 = _mm256_set1_epi32(10), a11 = _mm256_set1_epi32(11);
    for (uint64_t i = 0; i < iters; i++) {
        a0 = _mm256_dpbusd_avx_epi32(a0, x, y);
        a1 = _mm256_dpbusd_avx_epi32(a1, x, y);
        a2 = _mm256_dpbusd_avx_epi32(a2, x, y);
        a3 = _mm256_dpbusd_avx_epi32(a3, x, y);
        a4 = _mm256_dpbusd_avx_epi32(a4, x, y);
        a5 = _mm256_dpbusd_avx_epi32(a5, x, y);
        a6 = _mm256_dpbusd_avx_epi32(a6, x, y);
        a7 = _mm256_dpbusd_avx_epi32(a7, x, y);
        a8 = _mm256_dpbusd_avx_epi32(a8, x, y);
        a9 = _mm256_dpbusd_avx_epi32(a9, x, y);
        a10 = _mm256_dpbusd_avx_epi32(a10, x, y);
        a11 = _mm256_dpbusd_avx_epi32(a11, x, y);
    }
    const __m256i s = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
                         _mm256_add_epi32(a4, a5)),
        _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a6, a7), _mm256_add_epi32(a8, a9)),
                         _mm256_add_epi32(a10, a11)));
    /* the lanes wrap (the accumulators run long): sum them in 64 bits; the result only keeps
     * the loop from being optimised away */
    int32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, s);
    int64_t t = 0;
    for (int i = 0; i < 8; i++)
        t += lanes[i];
    return (double)t;
}
