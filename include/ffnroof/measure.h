/* The probes of measure/probe/: timers, robust statistics, CPU feature and cache discovery,
 * peak-compute and bandwidth microbenchmarks and ERT-style plateau detection. The calibration
 * driver that runs them for `ffnroof calibrate` is in ffnroof/calibrate.h; counters (PAPI,
 * software-defined events) are in ffnroof/measure_papi.h; the structs they fill, which io/
 * writes, are in ffnroof/profile.h.
 *
 * Everything here returns 0 or a negative FFN_E* code, never prints and never exits. Times are
 * seconds, sizes bytes, rates FLOP/s or bytes/s (SI base units, doubles). Microbenchmarks pin
 * their worker threads to the CPUs the process is allowed to run on (sched_setaffinity) and
 * leave the calling thread's affinity alone. */
#ifndef FFNROOF_MEASURE_H
#define FFNROOF_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/profile.h"
#include "ffnroof/types.h"

/* ---------------------------------------------------------------------------------------------
 * Timers and the core clock */

/* Seconds from CLOCK_MONOTONIC_RAW (not slewed by NTP); falls back to CLOCK_MONOTONIC where the
 * raw clock is missing. Only differences are meaningful. */
double ffn_time_now_s(void);

/* Probe the time source (takes a few milliseconds). */
int ffn_timer_probe(ffn_timer_info *out);

/* Runs the chain for about budget_s seconds in total (>= 0.01). */
int ffn_clock_estimate(double budget_s, ffn_clock_est *out);

/* ---------------------------------------------------------------------------------------------
 * Robust statistics */

/* Statistics of n >= 1 samples (x is not modified). FFN_EINVAL for n == 0, NULL pointers or a
 * non-finite sample; FFN_ENOMEM when the sorting copy cannot be allocated. */
int ffn_stats_compute(const double *x, size_t n, ffn_stats *out);

/* One timed sample: run the thing once and store its duration (or any positive cost) in *out.
 * Return 0, or a negative code to abort the repetition (that code is passed on). */
typedef int (*ffn_sample_fn)(void *ctx, double *out);

/* "Repeat until stable": samples are taken in batches of `batch`; after each batch its median is
 * appended to a history, and the loop stops when the last `window` batch medians lie within
 * rel_spread of each other ((max - min) / median), or when max_samples or time_cap_s is reached
 * (whichever first; at least min_samples are always taken). Zero fields take the defaults shown;
 * opts == NULL means all defaults. */
typedef struct ffn_repeat_opts {
    size_t warmup;      /* samples run and discarded first (0 = none; NULL opts: 1) */
    size_t batch;       /* samples per batch (default 3) */
    size_t window;      /* batch medians that must agree (default 3) */
    double rel_spread;  /* tolerance (default 0.02) */
    size_t min_samples; /* default batch * window */
    size_t max_samples; /* default 1000 */
    double time_cap_s;  /* wall-clock cap including warm-up (default 2 s) */
    /* Slow samples (0 = off): when the first sample (the last warm-up one, else the first
     * kept) costs more than time_cap_s / min_samples, min_samples becomes
     * max(slow_min_samples, ceil(time_cap_s / cost)): a call of half a second is then timed
     * for the cap, not nine times over it. */
    size_t slow_min_samples;
} ffn_repeat_opts;

typedef struct ffn_repeat_result {
    ffn_stats stats; /* over every kept (non-warm-up) sample */
    bool stable;     /* the spread criterion was met (false: stopped by a cap) */
    double spread;   /* final spread of the last `window` batch medians (0 before there are any) */
    double elapsed_s;
} ffn_repeat_result;

int ffn_repeat_until_stable(ffn_sample_fn fn, void *ctx, const ffn_repeat_opts *opts,
                            ffn_repeat_result *out);

/* ---------------------------------------------------------------------------------------------
 * The CPU */

/* Detected once, then cached (thread-safe). */
const ffn_cpu_caps *ffn_cpu_caps_get(void);

int ffn_host_info_get(ffn_host_info *out);

/* The data caches CPUID describes (measure/probe/cache_cpuid.c): leaf 4, else AMD's 0x8000001D,
 * else AMD's legacy 0x80000005/6; fn answers CPUID(leaf, sub) into r = {eax, ebx, ecx, edx}, so
 * tests decode the registers of CPUs they do not run on. The number written (0: none described). */
typedef void (*ffn_cpuid_fn)(void *user, uint32_t leaf, uint32_t sub, uint32_t r[4]);
int ffn_cpuid_caches(ffn_cpuid_fn fn, void *user, ffn_sysfs_cache *out, int cap);
/* The same on this CPU (0 off x86-64: AArch64 user space cannot read its cache geometry). */
int ffn_cpuid_caches_host(ffn_sysfs_cache *out, int cap);

/* Size of the last-level cache sysfs (or CPUID) reports (largest data/unified cache), 0 if none. */
double ffn_host_llc_bytes(const ffn_host_info *h);

/* ---------------------------------------------------------------------------------------------
 * Peak compute */

/* FLOPs (int8: 2 ops per multiply-accumulate) per thread per loop iteration; for SVE kinds at
 * this CPU's vector length (0 without SVE). */
double ffn_peak_flops_per_iter(ffn_peak_kind k);
/* Built into this binary and supported by this CPU and OS. */
bool ffn_peak_available(ffn_peak_kind k);

/* One thread's share of a peak measurement: the kind's independent chains for iters
 * iterations (ffn_peak_flops_per_iter(k) FLOPs each) on the calling thread, for a caller that
 * times them itself (bench_kernels interleaves them with the kernels it measures). Returns the
 * chains' result (to keep them live), 0 when the kind is not available. */
double ffn_peak_run(ffn_peak_kind k, uint64_t iters);

/* Measure one kind on `threads` pinned threads (1 .. 1024), samples of about sample_s seconds,
 * at most budget_s in total. FFN_EUNSUPPORTED when the kind is not available. */
int ffn_peak_measure(ffn_peak_kind k, int threads, double sample_s, double budget_s,
                     ffn_peak_result *out);

/* ---------------------------------------------------------------------------------------------
 * Memory bandwidth */

bool ffn_bw_kernel_available(ffn_bw_kernel k);

/* Cancellation / progress hook for long sweeps: called (on a worker thread) after each point with
 * the fraction of the sweep done; a non-zero return stops the sweep with FFN_EINTERRUPTED (the
 * points finished so far are kept and counted in *n_out). */
typedef int (*ffn_bw_hook)(void *user, double fraction);

typedef struct ffn_bw_sweep_opts {
    ffn_bw_kernel kernel;
    int threads;           /* 1 .. 1024 */
    double min_bytes;      /* default 16 KiB */
    double max_bytes;      /* default 256 MiB */
    int points_per_octave; /* default 2 */
    double point_s;        /* time spent per point (default 0.05 s; at least 3 samples) */
    double sample_bytes;   /* traffic per timed sample, so small sizes repeat (default 16 MiB) */
    ffn_bw_hook hook;
    void *user;
} ffn_bw_sweep_opts;

/* Sweep working-set sizes geometrically from min_bytes to max_bytes; writes at most cap points
 * (sizes ascending) and their count to *n_out. Each thread owns (and first-touches) its slice. */
int ffn_bw_sweep(const ffn_bw_sweep_opts *opts, ffn_bw_point *pts, size_t cap, size_t *n_out);

/* ---------------------------------------------------------------------------------------------
 * Plateau detection (cache levels from a bandwidth-vs-size curve) */

typedef struct ffn_plateau_opts {
    double bin_rel;  /* cluster width: points within +-bin_rel of the cluster (default 0.05) */
    double drop_rel; /* a new level must be this much below the previous (default 0.15) */
    int smooth;      /* moving-median window in points, odd (default 3; 1 = none) */
    int min_points;  /* points a plateau needs (default 3) */
} ffn_plateau_opts;

/* ERT-style: smooth the curve, cluster consecutive points into +-bin_rel bins, keep clusters of
 * at least min_points as plateaus and accept one as a new level only when it is at least drop_rel
 * below the previous level. size[] must be ascending; n >= 1. Writes up to cap levels. */
int ffn_plateau_detect(const double *size, const double *bw, size_t n, const ffn_plateau_opts *opts,
                       ffn_level *levels, int cap, int *n_levels);

/* Pair each of n_sys cache sizes (sysfs/CPUID, bytes, any order) with the measured boundary
 * (levels[j].capacity_bytes, j < n_levels - 1) nearest to it in log size, each boundary used at
 * most once, closest pairs first and in order of size (no pair crosses one made before it: a
 * larger cache never takes a smaller boundary): match[i] = j, or -1 when none is left. */
int ffn_plateau_match(const ffn_level *levels, int n_levels, const double *sys_bytes, int n_sys,
                      int *match);

#endif
