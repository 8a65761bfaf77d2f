/* Portable bandwidth kernels (plain C, -O3, the fallback where no ISA-specific kernel applies).
 * Bytes per element as STREAM counts them (explicit loads and stores only, write-allocate not
 * credited): read 4, copy 8, triad 12. The read kernel keeps 32 independent partial sums so the
 * reduction is not the bottleneck (a single running sum is latency bound). Non-temporal variants
 * exist only on x86-64, where SSE2 streaming stores (MOVNTPS) are part of the baseline ISA. */
#include "internal.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

static double read_c(const float *a, size_t n)
{
    float acc[32] = {0};
    for (size_t i = 0; i < n; i += 32)
        for (int j = 0; j < 32; j++)
            acc[j] += a[i + (size_t)j];
    double s = 0;
    for (int j = 0; j < 32; j++)
        s += acc[j];
    return s;
}

static double copy_c(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = a[i];
    return b[n - 1];
}

static double triad_c(float *restrict a, const float *restrict b, const float *restrict c, float s,
                      size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
    return a[n - 1];
}

#if defined(__x86_64__)
static double copy_nt_sse2(float *restrict b, const float *restrict a, size_t n)
{
    for (size_t i = 0; i < n; i += 4)
        _mm_stream_ps(b + i, _mm_load_ps(a + i));
    _mm_sfence();
    return a[n - 1];
}

static double triad_nt_sse2(float *restrict a, const float *restrict b, const float *restrict c,
                            float s, size_t n)
{
    const __m128 vs = _mm_set1_ps(s);
    for (size_t i = 0; i < n; i += 4)
        _mm_stream_ps(a + i, _mm_add_ps(_mm_load_ps(b + i), _mm_mul_ps(vs, _mm_load_ps(c + i))));
    _mm_sfence();
    return b[n - 1];
}
#endif

void ffn__bw_portable_kernels(ffn__bw_kernels *k)
{
    k->read = read_c;
    k->copy = copy_c;
    k->triad = triad_c;
#if defined(__x86_64__)
    k->copy_nt = copy_nt_sse2;
    k->triad_nt = triad_nt_sse2;
#else
    k->copy_nt = NULL;
    k->triad_nt = NULL;
#endif
}
