/* AVX2 bandwidth kernels (compiled with -mavx2 -mfma; used only when the CPU runs the avx2 level
 * and FFNROOF_ISA allows it, and AVX-512 is not in use). Full 32-byte vectors so that L1 and L2
 * bandwidth are measured at the core's load/store width on AVX2-only hosts (Zen 1-3, Haswell ..
 * Alder Lake client): the portable C read loop runs at the baseline SSE2 width and would make L1
 * and L2 read alike. Arrays are 64-byte aligned and n is a multiple of FFN__BW_ALIGN_ELEMS.
 *  read:     8 independent ymm sums (add latency 3-4 x 2 loads per cycle), 4 B/element;
 *  copy:     b = a, 8 B/element;               copy_nt:  same with VMOVNTPS + SFENCE;
 *  triad:    a = b + s*c (one FMA), 12 B/element; triad_nt: same with VMOVNTPS + SFENCE. */
#include <immintrin.h>

#include "internal.h"

static double hsum(__m256 v)
{
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return (double)_mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

static double read_avx2(const float *a, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (size_t i = 0; i < n; i += 64) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(a + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(a + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(a + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(a + i + 24));
        s4 = _mm256_add_ps(s4, _mm256_load_ps(a + i + 32));
        s5 = _mm256_add_ps(s5, _mm256_load_ps(a + i + 40));
        s6 = _mm256_add_ps(s6, _mm256_load_ps(a + i + 48));
        s7 = _mm256_add_ps(s7, _mm256_load_ps(a + i + 56));
    }
    return hsum(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                              _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7))));
}

static double copy_avx2(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i += 32) {
        _mm256_store_ps(b + i, _mm256_load_ps(a + i));
        _mm256_store_ps(b + i + 8, _mm256_load_ps(a + i + 8));
        _mm256_store_ps(b + i + 16, _mm256_load_ps(a + i + 16));
        _mm256_store_ps(b + i + 24, _mm256_load_ps(a + i + 24));
    }
    return b[n - 1];
}

static double copy_nt_avx2(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i += 32) {
        _mm256_stream_ps(b + i, _mm256_load_ps(a + i));
        _mm256_stream_ps(b + i + 8, _mm256_load_ps(a + i + 8));
        _mm256_stream_ps(b + i + 16, _mm256_load_ps(a + i + 16));
        _mm256_stream_ps(b + i + 24, _mm256_load_ps(a + i + 24));
    }
    _mm_sfence();
    return a[n - 1];
}

static double triad_avx2(float *restrict a, const float *restrict b, const float *restrict c,
                         float s, size_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    for (size_t i = 0; i < n; i += 16) {
        _mm256_store_ps(a + i, _mm256_fmadd_ps(vs, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
        _mm256_store_ps(a + i + 8,
                        _mm256_fmadd_ps(vs, _mm256_load_ps(c + i + 8), _mm256_load_ps(b + i + 8)));
    }
    return a[n - 1];
}

static double triad_nt_avx2(float *restrict a, const float *restrict b, const float *restrict c,
                            float s, size_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    for (size_t i = 0; i < n; i += 16) {
        _mm256_stream_ps(a + i, _mm256_fmadd_ps(vs, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
        _mm256_stream_ps(a + i + 8,
                         _mm256_fmadd_ps(vs, _mm256_load_ps(c + i + 8), _mm256_load_ps(b + i + 8)));
    }
    _mm_sfence();
    return b[n - 1];
}

void ffn__bw_avx2_kernels(ffn__bw_kernels *k)
{
    k->read = read_avx2;
    k->copy = copy_avx2;
    k->triad = triad_avx2;
    k->copy_nt = copy_nt_avx2;
    k->triad_nt = triad_nt_avx2;
}
