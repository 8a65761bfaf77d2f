/* How much streaming bandwidth a core keeps while it computes on what it streams: the question
 * behind the quantized decode streams' "within 15% of the read roof". Each thread
 * reads its share of a buffer larger than the LLC one 64-byte line at a time and runs L table
 * lookups on each line (an AVX-512 shift, a VPERMPS and an FMA into one of eight chains: the
 * W4 decode stream's work per 16 weights, so L = 8 is q4_gemv__avx512's work per line and L = 4
 * that of the fp16 stream), under three software-prefetch schemes: none (the hardware
 * prefetchers alone), 2 KiB ahead into L1 (the decode streams' default), and 16 KiB ahead into L2
 * plus 1 KiB into L1. Beside each L it prints the rate of the same loop over an L1-resident
 * 16 KiB buffer (the arithmetic alone), so a row whose compute-only rate is well above the
 * L = 0 stream shows what the overlap of the two costs. x86-64 with AVX-512 only; elsewhere it
 * says so and exits 0.
 *   usage: bench_stream_overlap [--threads N] [--reps N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench_common.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw")))

enum { LINE = 64, SMALL = 16384 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One pass over [p, p + n) with L lookups a line and prefetch scheme pf (0 none, 1 T0 2 KiB,
 * 2 T1 16 KiB + T0 1 KiB); returns a value that depends on every FMA. */
#define PASS(L)                                                                                    \
    AVX512 static float pass_##L(const char *p, size_t n, int pf)                                  \
    {                                                                                              \
        __m512 a[8];                                                                               \
        for (int i = 0; i < 8; i++)                                                                \
            a[i] = _mm512_setzero_ps();                                                            \
        const __m512 lut = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);   \
        const __m512 c = _mm512_set1_ps(1e-9f);                                                    \
        __m512i sum = _mm512_setzero_si512();                                                      \
        for (size_t o = 0; o < n; o += LINE) {                                                     \
            if (pf == 1) _mm_prefetch(p + o + 2048, _MM_HINT_T0);                                  \
            if (pf == 2) {                                                                         \
                _mm_prefetch(p + o + 16384, _MM_HINT_T1);                                          \
                _mm_prefetch(p + o + 1024, _MM_HINT_T0);                                           \
            }                                                                                      \
            const __m512i v = _mm512_load_si512((const void *)(p + o));                            \
            sum = _mm512_add_epi32(sum, v);                                                        \
            for (int l = 0; l < (L); l++) {                                                        \
                const __m512 t = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4 * (l & 7)), lut);    \
                a[l & 7] = _mm512_fmadd_ps(t, c, a[l & 7]);                                        \
            }                                                                                      \
        }                                                                                          \
        __m512 s = _mm512_cvtepi32_ps(sum);                                                        \
        for (int i = 0; i < 8; i++)                                                                \
            s = _mm512_add_ps(s, a[i]);                                                            \
        return _mm512_reduce_add_ps(s);                                                            \
    }
PASS(0)
PASS(1)
PASS(2)
PASS(4)
PASS(8)

typedef float (*pass_fn)(const char *, size_t, int);
static const struct {
    int l;
    pass_fn f;
} passes[] = {{0, pass_0}, {1, pass_1}, {2, pass_2}, {4, pass_4}, {8, pass_8}};
enum { NPASS = sizeof passes / sizeof passes[0] };

static volatile float sink;

/* GB/s of fn over each thread's n bytes at big + t * n, best of reps (all threads together). */
static double stream_rate(pass_fn fn, const char *big, size_t n, int nt, int pf, int reps)
{
    double best = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
#pragma omp parallel num_threads(nt)
        {
#if defined(_OPENMP)
            const int t = omp_get_thread_num();
#else
            const int t = 0;
#endif
            const float v = fn(big + (size_t)t * n, n, pf);
            if (v == 12345.0f) sink = v;
        }
        const double gbs = (double)n * nt / (now() - t0) * 1e-9;
        best = gbs > best ? gbs : best;
    }
    return best;
}

/* The arithmetic alone: the pass over a 16 KiB L1-resident buffer, repeated (one thread). */
static double compute_rate(pass_fn fn, const char *small, int reps)
{
    const int inner = 4096;
    double best = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        for (int i = 0; i < inner; i++)
            sink = fn(small, SMALL, 0);
        const double gbs = (double)SMALL * inner / (now() - t0) * 1e-9;
        best = gbs > best ? gbs : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    int nt = 1, reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_stream_overlap [--threads N] [--reps N]\n");
            return 2;
        }
    }
    if (nt < 1 || nt > 256 || reps < 1 || reps > 1000) {
        fprintf(stderr, "bench_stream_overlap: --threads 1..256, --reps 1..1000\n");
        return 2;
    }
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) {
        printf("bench_stream_overlap: this CPU has no AVX-512 (F and BW): nothing measured\n");
        return 0;
    }
    size_t llc = bench_llc_bytes();
    size_t n = 2 * (llc ? llc : ((size_t)64 << 20)) / (size_t)nt;
    if (n < ((size_t)256 << 20) / (size_t)nt) n = ((size_t)256 << 20) / (size_t)nt;
    n = (n + 65535) / 65536 * 65536;
    char *big = aligned_alloc(4096, n * (size_t)nt + 65536);
    char *small = aligned_alloc(4096, SMALL + 65536);
    if (!big || !small) {
        fprintf(stderr, "bench_stream_overlap: out of memory\n");
        return 1;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n * (size_t)nt + 65536; i += 4096)
        memset(big + i, (int)(i >> 12) & 0xff, 4096);
    memset(small, 3, SMALL + 65536);
    printf("stream %.0f MiB a thread, %d thread(s), best of %d; GB/s\n", (double)n / 1048576.0, nt,
           reps);
    printf("%-9s %14s %10s %12s %18s\n", "lookups", "compute alone", "no prefetch", "T0 2 KiB",
           "T1 16 KiB + T0 1 KiB");
    double base[3] = {0, 0, 0};
    for (int i = 0; i < NPASS; i++) {
        const double c = compute_rate(passes[i].f, small, reps) * nt;
        double s[3];
        for (int pf = 0; pf < 3; pf++) {
            s[pf] = stream_rate(passes[i].f, big, n, nt, pf, reps);
            if (i == 0) base[pf] = s[pf];
        }
        printf("%-9d %14.1f %5.1f (%3.0f%%) %5.1f (%3.0f%%) %11.1f (%3.0f%%)\n", passes[i].l, c,
               s[0], 100 * s[0] / base[0], s[1], 100 * s[1] / base[1], s[2], 100 * s[2] / base[2]);
    }
    printf(
        "(%% of the same scheme's L = 0 stream; compute alone: the pass over 16 KiB in L1, times "
        "the threads)\n");
    free(big);
    free(small);
    return 0;
}
#else
int main(void)
{
    printf("bench_stream_overlap: x86-64 with AVX-512 only: nothing measured\n");
    return 0;
}
#endif
