/* Peak fp32 FMA throughput with AVX-512 (compiled with -mavx512f -mfma; called only when CPUID and
 * XCR0 say AVX-512F is usable). 16 independent zmm accumulators: FMA latency (4 cycles on Intel
 * Skylake-SP..Sapphire Rapids, AMD Zen 4/5) times 2 FMA pipes needs 8 chains; 16 leaves margin and
 * still fits the 32 registers with the two constants. Each chain is acc = acc * m + c with
 * m < 1, which converges (no overflow, no denormals).
 * FLOPs per iteration: 16 FMA x 16 lanes x 2 = FFN__FP32_AVX512_FLOPS_PER_ITER (512). */
#include <immintrin.h>

#include "internal.h"

double ffn__peak_fp32_avx512(uint64_t iters)
{
    const __m512 m = _mm512_set1_ps(0.99999f), c = _mm512_set1_ps(1e-5f);
    __m512 a0 = _mm512_set1_ps(0.10f), a1 = _mm512_set1_ps(0.11f), a2 = _mm512_set1_ps(0.12f),
           a3 = _mm512_set1_ps(0.13f), a4 = _mm512_set1_ps(0.14f), a5 = _mm512_set1_ps(0.15f),
           a6 = _mm512_set1_ps(0.16f), a7 = _mm512_set1_ps(0.17f), a8 = _mm512_set1_ps(0.18f),
           a9 = _mm512_set1_ps(0.19f), a10 = _mm512_set1_ps(0.20f), a11 = _mm512_set1_ps(0.21f),
           a12 = _mm512_set1_ps(0.22f), a13 = _mm512_set1_ps(0.23f), a14 = _mm512_set1_ps(0.24f),
           a15 = _mm512_set1_ps(0.25f);
    for (uint64_t i = 0; i < iters; i++) {
        a0 = _mm512_fmadd_ps(a0, m, c);
        a1 = _mm512_fmadd_ps(a1, m, c);
        a2 = _mm512_fmadd_ps(a2, m, c);
        a3 = _mm512_fmadd_ps(a3, m, c);
        a4 = _mm512_fmadd_ps(a4, m, c);
        a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c);
        a7 = _mm512_fmadd_ps(a7, m, c);
        a8 = _mm512_fmadd_ps(a8, m, c);
        a9 = _mm512_fmadd_ps(a9, m, c);
        a10 = _mm512_fmadd_ps(a10, m, c);
        a11 = _mm512_fmadd_ps(a11, m, c);
        a12 = _mm512_fmadd_ps(a12, m, c);
        a13 = _mm512_fmadd_ps(a13, m, c);
        a14 = _mm512_fmadd_ps(a14, m, c);
        a15 = _mm512_fmadd_ps(a15, m, c);
    }
    const __m512 s = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                      _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                      _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
    return (double)_mm512_reduce_add_ps(s);
}
