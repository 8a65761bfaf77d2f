/* AVX-512 bandwidth kernels (compiled with -mavx512f; used only when AVX-512F is usable). Full
 * 64-byte vectors so that L1 and L2 bandwidth are measured at the core's load/store width rather
 * than at the baseline SSE2 width. Arrays are 64-byte aligned and n is a multiple of
 * FFN__BW_ALIGN_ELEMS (256 floats).
 *  read:     8 independent zmm sums (add latency 4 x 2 loads per cycle), 4 B/element;
 *  copy:     b = a, 8 B/element;               copy_nt:  same with VMOVNTPS + SFENCE;
 *  triad:    a = b + s*c (one FMA), 12 B/element; triad_nt: same with VMOVNTPS + SFENCE. */
#include <immintrin.h>

#include "internal.h"

static double read_avx512(const float *a, size_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (size_t i = 0; i < n; i += 128) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
        s4 = _mm512_add_ps(s4, _mm512_load_ps(a + i + 64));
        s5 = _mm512_add_ps(s5, _mm512_load_ps(a + i + 80));
        s6 = _mm512_add_ps(s6, _mm512_load_ps(a + i + 96));
        s7 = _mm512_add_ps(s7, _mm512_load_ps(a + i + 112));
    }
    const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
                                   _mm512_add_ps(_mm512_add_ps(s4, s5), _mm512_add_ps(s6, s7)));
    return (double)_mm512_reduce_add_ps(s);
}

static double copy_avx512(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        _mm512_store_ps(b + i, _mm512_load_ps(a + i));
        _mm512_store_ps(b + i + 16, _mm512_load_ps(a + i + 16));
        _mm512_store_ps(b + i + 32, _mm512_load_ps(a + i + 32));
        _mm512_store_ps(b + i + 48, _mm512_load_ps(a + i + 48));
    }
    return b[n - 1];
}

static double copy_nt_avx512(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        _mm512_stream_ps(b + i, _mm512_load_ps(a + i));
        _mm512_stream_ps(b + i + 16, _mm512_load_ps(a + i + 16));
        _mm512_stream_ps(b + i + 32, _mm512_load_ps(a + i + 32));
        _mm512_stream_ps(b + i + 48, _mm512_load_ps(a + i + 48));
    }
    _mm_sfence();
    return a[n - 1];
}

static double triad_avx512(float *restrict a, const float *restrict b, const float *restrict c,
                           float s, size_t n)
{
    const __m512 vs = _mm512_set1_ps(s);
    for (size_t i = 0; i < n; i += 32) {
        _mm512_store_ps(a + i, _mm512_fmadd_ps(vs, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
        _mm512_store_ps(a + i + 16, _mm512_fmadd_ps(vs, _mm512_load_ps(c + i + 16),
                                                    _mm512_load_ps(b + i + 16)));
    }
    return a[n - 1];
}

static double triad_nt_avx512(float *restrict a, const float *restrict b, const float *restrict c,
                              float s, size_t n)
{
    const __m512 vs = _mm512_set1_ps(s);
    for (size_t i = 0; i < n; i += 32) {
        _mm512_stream_ps(a + i, _mm512_fmadd_ps(vs, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
        _mm512_stream_ps(a + i + 16, _mm512_fmadd_ps(vs, _mm512_load_ps(c + i + 16),
                                                     _mm512_load_ps(b + i + 16)));
    }
    _mm_sfence();
    return b[n - 1];
}

void ffn__bw_avx512_kernels(ffn__bw_kernels *k)
{
    k->read = read_avx512;
    k->copy = copy_avx512;
    k->triad = triad_avx512;
    k->copy_nt = copy_nt_avx512;
    k->triad_nt = triad_nt_avx512;
}
