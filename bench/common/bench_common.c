/* The benchmark programs' shared helpers (bench_common.h). */
#define _DEFAULT_SOURCE 1
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ffnroof/calibrate.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"

double bench_median(const double *v, int n)
{
    ffn_stats s;
    return n > 0 && ffn_stats_compute(v, (size_t)n, &s) == 0 ? s.median : 0;
}

double bench_paired_ratio(const double *num, const double *den, int n)
{
    double q[256];
    if (n > 256) n = 256;
    for (int r = 0; r < n; r++)
        q[r] = num[r] / den[r];
    return bench_median(q, n);
}

void *bench_xmalloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

float *bench_rand_array(size_t n, float scale, uint64_t *st)
{
    float *p = bench_xmalloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) {
        *st ^= *st << 13;
        *st ^= *st >> 7;
        *st ^= *st << 17;
        p[i] = scale * (float)((double)(*st >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return p;
}

/* ---- the FMA probe ------------------------------------------------------------------------ */

static ffn_peak_kind fma_kind = FFN_PEAK_FP32_PORTABLE;
static double fma_flops_per_iter = 64.0;

void bench_fma_choose(void)
{
    ffn_isa lv = FFN_ISA_PORTABLE;
    ffn_isa_selected(&lv, NULL);
    const int k = ffn_calibration_roof_kind(FFN_DT_FP32, lv);
    fma_kind =
        k >= 0 && ffn_peak_available((ffn_peak_kind)k) ? (ffn_peak_kind)k : FFN_PEAK_FP32_PORTABLE;
    fma_flops_per_iter = ffn_peak_flops_per_iter(fma_kind);
}

const char *bench_fma_name(void)
{
    return ffn_peak_name(fma_kind);
}

double bench_fma_flops_per_iter(void)
{
    return fma_flops_per_iter;
}

double bench_fma_peak(int nt)
{
    const long iters = BENCH_FMA_PROBE_ITERS;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        const double t0 = ffn_time_now_s();
        (void)bench_fma_probe(nt, iters);
        const double t = ffn_time_now_s() - t0;
        const double flops = (double)nt * (double)iters * fma_flops_per_iter;
        if (flops / t > best) best = flops / t;
    }
    return best;
}

double bench_fma_probe(int nt, long iters)
{
    double sink = 0;
#pragma omp parallel num_threads(nt) reduction(+ : sink)
    sink += ffn_peak_run(fma_kind, (uint64_t)iters);
    return sink;
}

/* ---- the read probe ----------------------------------------------------------------------- */

size_t bench_llc_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? (size_t)l3 : (size_t)32 << 20;
}

#if defined(__x86_64__)
/* XOR of 4 x 64 bytes per iteration into 4 independent zmm accumulators: the loads, not the
 * reduction, set the pace. n is a multiple of 256. */
__attribute__((target("avx512f"))) static uint64_t xor_avx512(const uint64_t *b, size_t n)
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n / 8; i += 32) {
        a0 = _mm512_xor_si512(a0, _mm512_load_si512(b + i));
        a1 = _mm512_xor_si512(a1, _mm512_load_si512(b + i + 8));
        a2 = _mm512_xor_si512(a2, _mm512_load_si512(b + i + 16));
        a3 = _mm512_xor_si512(a3, _mm512_load_si512(b + i + 24));
    }
    a0 = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
    uint64_t o[8];
    _mm512_storeu_si512(o, a0);
    return o[0] ^ o[7];
}
#endif

uint64_t bench_probe_read(const uint64_t *b, size_t n, int nt)
{
    uint64_t total = 0;
#pragma omp parallel num_threads(nt) reduction(^ : total)
    {
        int t = 0, T = 1;
#if defined(_OPENMP)
        t = omp_get_thread_num();
        T = omp_get_num_threads();
#endif
        const size_t chunks = n / 65536, lo = chunks * (size_t)t / (size_t)T,
                     hi = chunks * (size_t)(t + 1) / (size_t)T;
        const uint64_t *p = b + lo * 8192;
        const size_t bytes = (hi - lo) * 65536;
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx512f")) {
            total ^= xor_avx512(p, bytes);
        } else
#endif
        {
            for (size_t i = 0; i < bytes / 8; i++)
                total ^= p[i];
        }
    }
    return total;
}

double bench_read_bw(int nt, size_t *buf_bytes)
{
    size_t n = 4 * bench_llc_bytes();
    if (n < ((size_t)1 << 30)) n = (size_t)1 << 30;
    n = n / 65536 * 65536;
    *buf_bytes = n;
    uint64_t *buf = bench_xmalloc(n);
    const size_t words = n / 8;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < words; i++)
        buf[i] = i * 0x9e3779b97f4a7c15ull;
    double best = 0;
    uint64_t total = 0;
    for (int rep = 0; rep < 5; rep++) {
        const double t0 = ffn_time_now_s();
        total ^= bench_probe_read(buf, n, nt);
        const double t = ffn_time_now_s() - t0;
        if ((double)n / t > best) best = (double)n / t;
    }
    if (total == 42) puts("");
    free(buf);
    return best;
}
