/* ffn_measure: the measuring half of ffnroof (timers, robust statistics, CPU feature and cache
 * discovery, peak-compute and bandwidth microbenchmarks, ERT-style plateau detection and the
 * calibration driver behind `ffnroof calibrate`). Counters (PAPI, software-defined events) are
 * in ffnroof/measure_papi.h; the structs it fills, which io/ writes, are in ffnroof/profile.h.
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

/* ---------------------------------------------------------------------------------------------
 * Calibration (`ffnroof calibrate` without the printing and the file writing) */

/* Called at the start of each stage with the fraction of the whole run done so far and a short
 * stage text; return non-zero to stop (the run then returns FFN_EINTERRUPTED with what it has). */
typedef int (*ffn_progress_fn)(void *user, double fraction, const char *stage);

typedef struct ffn_calibrate_opts {
    bool quick;       /* about 15 s instead of about 60 s */
    int threads;      /* "all cores" thread count; 0 = every CPU this process may use */
    double max_bytes; /* largest working set; 0 = min(4 x sysfs LLC, 1 GiB, RAM / 8) */
    ffn_progress_fn progress;
    void *user;
} ffn_calibrate_opts;

/* Whether a peak kind runs under ISA level isa: what it needs (fp32_avx2: avx2, bf16_avx512:
 * avx512_bf16, int8_amx: amx_int8, ...) is within ffn_isa_allows(isa); fp32_portable always. */
bool ffn_peak_allowed_at(ffn_peak_kind k, ffn_isa isa);

/* The peak kind that is the roof of a kernel of level isa for weight dtype dt: AMX tiles for an
 * AMX bf16 kernel, VDPBF16PS for an avx512_bf16 one, the fp32 FMA of the level for a kernel that
 * converts to fp32 (avx512, avx2, portable, ref; NEON and SVE: fp32_neon), -1 when none fits.
 * int8 is the roof of int8 dot products (W8A8, the simulator's int8 peak), the level's best:
 * amx int8_amx, avx512 and avx512_bf16 int8_avx512_vnni, avx2 int8_avx_vnni, neon
 * int8_neon_i8mm, sve int8_sve_sdot, portable and ref int8_portable (a CPU that lacks it falls
 * back along ffn_calibration_roof_fallback); int4 has none (no CPU multiplies int4). */
int ffn_calibration_roof_kind(ffn_dtype dt, ffn_isa isa);
/* The kind to try when k is not available on this CPU (int8: int8_amx -> int8_avx512_vnni ->
 * int8_avx_vnni -> int8_avx2 -> int8_portable, int8_neon_i8mm -> int8_neon_sdot ->
 * int8_portable), -1 at the end of a chain and for every other kind. */
int ffn_calibration_roof_fallback(int k);

/* Run timers, clock, peaks, bandwidth sweeps and plateau detection; fills *out (about 40 KiB,
 * caller-allocated). FFN_EINTERRUPTED when the progress callback asked to stop (out then holds
 * what finished). */
int ffn_calibrate_run(const ffn_calibrate_opts *opts, ffn_calibration *out);

/* The best measured peak for a dtype with `threads_index` 0 (one core) or 1 (all); with use_amx
 * false the AMX kinds are skipped (the FFN kernels use vector units). 0 when none was measured. */
double ffn_calibration_peak(const ffn_calibration *c, ffn_dtype dt, int threads_index,
                            bool use_amx);

/* Turn a calibration into a hardware spec: peaks per dtype (roof_set: the peak of roof_kind[dt],
 * one core only for a reference kernel, which also makes compute_units 1; else the best kind;
 * the better of all cores and one core:
 * on a shared host all threads can come out below one), mem_bandwidth_bps = the better of the
 * one- and all-thread read-only tail rates (tail_read_bps), levels[] = the plateaus of the
 * all-threads read-only curve that end before the tail (max_bytes/4) and are faster than the level
 * after them and than main memory (ffn_calibration_level_ok), kind CPU, compute_units =
 * threads, clock, source "measured by ffnroof calibrate on <host>, <date>"; efficiency
 * parameters neutral (compute_max = memory_max = 1, no ramps, n_tiles 0, launch_s 0,
 * overlap_p 0) for the fitter to refine. FFN_EINVAL when there is no fp32 peak or no read-only
 * tail. */
int ffn_calibration_to_hw(const ffn_calibration *c, bool use_amx, ffn_hw *hw);

/* Append to c->notes what the curves say about themselves and the host: the plateau boundaries
 * against sysfs (nearest size, one thread and all threads, per-core or shared), a read-write or
 * nt rate above the read-only one at DRAM sizes, a level not faster than the one after it.
 * ffn_calibrate_run calls it; exposed for tests on hand-made calibrations. */
void ffn_calibration_review(ffn_calibration *c);

/* Whether level i of the curve (kernel k, threads index t) may be written as a roof: it ends
 * before the tail, has a capacity, is faster than every level after it and not slower than the
 * read-only tail (a larger level faster than a smaller one is a measuring artefact). */
bool ffn_calibration_level_ok(const ffn_calibration *c, ffn_bw_kernel k, int t, int i);

#endif
