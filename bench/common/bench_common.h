/* What the benchmark programs share: robust figures over interleaved rounds, allocation that
 * ends the program when it fails, seeded random arrays, and the host ceilings a benchmark
 * reports its kernels against (the ISA level's FMA-chain probe and a read-only bandwidth
 * probe), all on OpenMP threads as the kernels are. Benchmarks are programs, not the library:
 * these print and exit. */
#ifndef FFNROOF_BENCH_COMMON_H
#define FFNROOF_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Median of v[0..n) (measure's ffn_stats; v is left as it was, so rounds stay paired; 0 when n
 * is 0 or a value is not finite). */
double bench_median(const double *v, int n);

/* Median over rounds (at most 256) of num[r] / den[r]: the two calls of a round ran a second or two
 * apart, so the ratio of a pair shares the host's load and bandwidth of that moment. */
double bench_paired_ratio(const double *num, const double *den, int n);

/* 64-byte aligned; prints "bench: out of memory" and exits 1 when it cannot. */
void *bench_xmalloc(size_t n);

/* n floats uniform in [-scale, scale) from the xorshift state *st. */
float *bench_rand_array(size_t n, float scale, uint64_t *st);

/* 20 M iterations per FMA-probe call: about 0.1 s, the order of the prefill kernels' own time,
 * so the probe sees the clock the host sustains rather than a short burst (with 4 M iterations,
 * ~10 ms, its rate varied 155-220 GFLOP/s per core between rounds). */
enum { BENCH_FMA_PROBE_ITERS = 20 * 1000 * 1000 };

/* Choose the FMA probe of the ISA the kernels run (FFNROOF_ISA honoured): calibrate's fp32 roof
 * of that level (16 zmm FMA chains at avx512 and above, 12 ymm chains at avx2, 32 plain-C
 * mul+add chains below). Its name and FLOPs per iteration and thread. */
void bench_fma_choose(void);
const char *bench_fma_name(void);
double bench_fma_flops_per_iter(void);
/* FLOP/s of the probe on nt threads, best of 5. */
double bench_fma_peak(int nt);
/* One probe call: iters iterations on each of nt threads. */
double bench_fma_probe(int nt, long iters);

/* The last-level cache (sysconf; 32 MiB when it does not say). */
size_t bench_llc_bytes(void);
/* Read-only pass over n bytes (a multiple of 64 KiB) on nt threads, each a contiguous part. */
uint64_t bench_probe_read(const uint64_t *b, size_t n, int nt);
/* Read-only bandwidth (bytes/s) on nt threads over max(1 GiB, 4 x LLC), best of 5; the buffer
 * size in *buf_bytes. */
double bench_read_bw(int nt, size_t *buf_bytes);

#endif
