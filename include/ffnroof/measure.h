/* ffn_measure: the measuring half of ffnroof (timers, robust statistics, CPU feature and cache
 * discovery, peak-compute and bandwidth microbenchmarks, ERT-style plateau detection and the
 * calibration driver behind `ffnroof calibrate`). Counters (PAPI, software-defined events) are
 * in ffnroof/measure_papi.h.
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
#include "ffnroof/types.h"

/* ---------------------------------------------------------------------------------------------
 * Timers and the core clock */

/* Seconds from CLOCK_MONOTONIC_RAW (not slewed by NTP); falls back to CLOCK_MONOTONIC where the
 * raw clock is missing. Only differences are meaningful. */
double ffn_time_now_s(void);

typedef struct ffn_timer_info {
    char source[32];       /* "CLOCK_MONOTONIC_RAW" or the fallback used */
    double res_reported_s; /* clock_getres() */
    double res_measured_s; /* smallest non-zero step seen between back-to-back reads */
    double overhead_s;     /* median cost of one read (back-to-back difference) */
} ffn_timer_info;

/* Probe the time source (takes a few milliseconds). */
int ffn_timer_probe(ffn_timer_info *out);

/* Core clock estimated from a timed dependent chain of 1-cycle integer adds: the chain runs at one
 * add per cycle whatever the TSC or the nominal frequency says, so adds/second = cycles/second. */
typedef struct ffn_clock_est {
    double hz;         /* best (highest) of the repetitions */
    double median_hz;  /* median of the repetitions */
    double spread_rel; /* (max - min) / median of the repetitions */
    uint64_t adds;     /* adds per repetition */
    int reps;
    char method[128]; /* how the chain was built */
    char time_source[32];
} ffn_clock_est;

/* Runs the chain for about budget_s seconds in total (>= 0.01). */
int ffn_clock_estimate(double budget_s, ffn_clock_est *out);

/* ---------------------------------------------------------------------------------------------
 * Robust statistics */

typedef struct ffn_stats {
    size_t n;
    double min, max;
    double median;
    double p90; /* linear interpolation between order statistics (Hyndman-Fan type 7) */
    double mean;
    double stdev; /* sample standard deviation (n - 1); 0 when n == 1 */
    double mad;   /* median absolute deviation from the median (unscaled) */
} ffn_stats;

/* Statistics of n >= 1 samples (x is not modified). FFN_EINVAL for n == 0, NULL pointers or a
 * non-finite sample; FFN_ENOMEM when the sorting copy cannot be allocated. */
int ffn_stats_compute(const double *x, size_t n, ffn_stats *out);

/* Quantile q in [0,1] of n >= 1 ascending samples (type 7). */
double ffn_stats_quantile_sorted(const double *sorted, size_t n, double q);

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

/* What the CPU implements AND the OS has enabled: ffn_cpu_features() of include/ffnroof/kernels.h
 * (CPUID + XCR0 on x86, HWCAP on aarch64; AMX with Linux's tile permission granted) in the
 * calibration's terms. */
typedef struct ffn_cpu_caps {
    bool x86_64, aarch64;
    bool fma;         /* x86-64-v3: AVX2 + FMA3 + F16C with AVX state enabled */
    bool avx512f;     /* with opmask/ZMM state enabled in XCR0 */
    bool avx512_bf16; /* VDPBF16PS */
    bool avx512_vnni; /* VPDPBUSD */
    bool avx512_fp16; /* VFMADD...PH */
    bool amx_bf16;    /* AMX tile state enabled in XCR0 and TDPBF16PS present */
    bool amx_int8;    /* TDPB[SU]SD */
    bool neon;        /* aarch64 Advanced SIMD */
    bool neon_fp16;   /* aarch64 FP16 vector arithmetic (asimdhp) */
} ffn_cpu_caps;

/* Detected once, then cached (thread-safe). */
const ffn_cpu_caps *ffn_cpu_caps_get(void);

/* One cache as sysfs describes it (/sys/devices/system/cpu/cpu0/cache/index*): trust it less
 * than a measurement, especially in a VM. */
typedef struct ffn_sysfs_cache {
    int level;
    char type[16];     /* "Data", "Instruction", "Unified" */
    double size_bytes; /* one instance */
    int shared_cpus;   /* CPUs sharing one instance (from shared_cpu_list); 0 if unknown */
} ffn_sysfs_cache;

#define FFN_MAX_SYSFS_CACHES 8

typedef struct ffn_host_info {
    char host[128];
    char cpu_model[128]; /* /proc/cpuinfo "model name" (or the CPUID brand string) */
    char cpu_vendor[32];
    int online_cpus;  /* sysconf(_SC_NPROCESSORS_ONLN) */
    int allowed_cpus; /* CPUs in this process's affinity mask */
    double phys_mem_bytes;
    ffn_sysfs_cache caches[FFN_MAX_SYSFS_CACHES];
    int n_caches;
} ffn_host_info;

int ffn_host_info_get(ffn_host_info *out);

/* Size of the last-level cache sysfs reports (largest data/unified cache), 0 if none. */
double ffn_host_llc_bytes(const ffn_host_info *h);

/* ---------------------------------------------------------------------------------------------
 * Peak compute */

typedef enum ffn_peak_kind {
    FFN_PEAK_FP32_PORTABLE = 0, /* fp32 mul+add in C, vectorised by the compiler: always runs */
    FFN_PEAK_FP32_AVX2,         /* VFMADD231PS ymm (x86 without AVX-512) */
    FFN_PEAK_FP32_AVX512,       /* VFMADD231PS zmm */
    FFN_PEAK_BF16_AVX512,       /* VDPBF16PS zmm */
    FFN_PEAK_FP16_AVX512,       /* VFMADD231PH zmm */
    FFN_PEAK_INT8_VNNI,         /* VPDPBUSD zmm */
    FFN_PEAK_BF16_AMX,          /* TDPBF16PS */
    FFN_PEAK_INT8_AMX,          /* TDPBSSD */
    FFN_PEAK_FP32_NEON,         /* FMLA v.4s */
    FFN_PEAK_FP16_NEON,         /* FMLA v.8h */
    FFN_PEAK_INT8_AVX_VNNI,     /* VPDPBUSD ymm (AVX-VNNI, VEX: 256-bit int8 path) */
    FFN_PEAK_INT8_AVX2,         /* VPMADDUBSW + VPMADDWD + VPADDD ymm (AVX2 without VNNI) */
    FFN_PEAK_INT8_NEON_SDOT,    /* SDOT v.4s (FEAT_DotProd) */
    FFN_PEAK_INT8_NEON_I8MM,    /* SMMLA v.4s (FEAT_I8MM) */
    FFN_PEAK_INT8_SVE_SDOT,     /* SDOT z.s (SVE, any vector length) */
    FFN_PEAK_INT8_PORTABLE,     /* int8 x int8 into int32 in C, vectorised by the compiler */
    FFN_PEAK_FP32_SVE,          /* FMLA z.s (SVE, any vector length) */
    FFN_PEAK_COUNT
} ffn_peak_kind;

const char *ffn_peak_name(ffn_peak_kind k);      /* "fp32_avx512", ...; NULL when out of range */
ffn_dtype ffn_peak_dtype(ffn_peak_kind k);       /* the dtype whose peak it measures */
/* FLOPs (int8: 2 ops per multiply-accumulate) per thread per loop iteration; for SVE kinds at
 * this CPU's vector length (0 without SVE). */
double ffn_peak_flops_per_iter(ffn_peak_kind k);
/* Built into this binary and supported by this CPU and OS. */
bool ffn_peak_available(ffn_peak_kind k);

typedef struct ffn_peak_result {
    ffn_peak_kind kind;
    int threads;
    double flops_per_s; /* best sample: the roof */
    double median_flops_per_s;
    uint64_t iters; /* per thread per sample */
    size_t samples;
    bool stable;
} ffn_peak_result;

/* Measure one kind on `threads` pinned threads (1 .. 1024), samples of about sample_s seconds,
 * at most budget_s in total. FFN_EUNSUPPORTED when the kind is not available. */
int ffn_peak_measure(ffn_peak_kind k, int threads, double sample_s, double budget_s,
                     ffn_peak_result *out);

/* ---------------------------------------------------------------------------------------------
 * Memory bandwidth */

typedef enum ffn_bw_kernel {
    FFN_BW_READ = 0, /* s += a[i], 8+ independent accumulators: 4 B/element read */
    FFN_BW_COPY,     /* b[i] = a[i]: 8 B/element (STREAM counting, write-allocate not credited) */
    FFN_BW_TRIAD,    /* a[i] = b[i] + s * c[i]: 12 B/element */
    FFN_BW_COPY_NT,  /* copy with non-temporal stores (no read-for-ownership) */
    FFN_BW_TRIAD_NT, /* triad with non-temporal stores */
    FFN_BW_COUNT
} ffn_bw_kernel;

const char *ffn_bw_kernel_name(ffn_bw_kernel k); /* "read", "copy", "triad", "copy_nt", ... */
const char *ffn_bw_kernel_kind(ffn_bw_kernel k); /* "read-only", "read-write" or "nt" */
bool ffn_bw_kernel_available(ffn_bw_kernel k);

typedef struct ffn_bw_point {
    ffn_bw_kernel kernel;
    int threads;
    double size_bytes;  /* working set: all arrays of all threads */
    double bytes_per_s; /* best sample (STREAM byte counting) */
    double median_bytes_per_s;
    size_t samples;
} ffn_bw_point;

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

typedef struct ffn_level {
    char name[16];        /* "L1", "L2", ..., the last one "DRAM" (ERT naming) */
    double bandwidth_bps; /* median of the plateau's raw points */
    double first_bytes;   /* smallest and largest size on the plateau */
    double last_bytes;
    double capacity_bytes; /* where the curve crosses halfway (in log bandwidth) to the next
                              level, interpolated in log size; 0 for the last level */
    int n_points;
} ffn_level;

#define FFN_MAX_LEVELS 8

/* ERT-style: smooth the curve, cluster consecutive points into +-bin_rel bins, keep clusters of
 * at least min_points as plateaus and accept one as a new level only when it is at least drop_rel
 * below the previous level. size[] must be ascending; n >= 1. Writes up to cap levels. */
int ffn_plateau_detect(const double *size, const double *bw, size_t n, const ffn_plateau_opts *opts,
                       ffn_level *levels, int cap, int *n_levels);

/* Pair each of n_sys cache sizes (sysfs/CPUID, bytes, any order) with the measured boundary
 * (levels[j].capacity_bytes, j < n_levels - 1) nearest to it in log size, each boundary used at
 * most once, closest pairs first: match[i] = j, or -1 when none is left. */
int ffn_plateau_match(const ffn_level *levels, int n_levels, const double *sys_bytes, int n_sys,
                      int *match);

/* ---------------------------------------------------------------------------------------------
 * Calibration (`ffnroof calibrate` without the printing and the file writing) */

#define FFN_CAL_MAX_POINTS 1024
#define FFN_CAL_MAX_NOTES 2048

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

typedef struct ffn_calibration {
    bool quick;
    int threads;   /* the "all cores" thread count used */
    char date[32]; /* UTC, ISO 8601 ("2025-01-31T12:00:00Z") */
    ffn_host_info host;
    ffn_cpu_caps caps;
    ffn_timer_info timer;
    ffn_clock_est clock;
    /* [kind][0] one thread, [kind][1] `threads` threads; flops_per_s == 0 when not measured */
    ffn_peak_result peaks[FFN_PEAK_COUNT][2];
    ffn_bw_point points[FFN_CAL_MAX_POINTS];
    size_t n_points;
    /* levels detected on each curve: [kernel][0 one thread | 1 all threads] */
    ffn_level levels[FFN_BW_COUNT][2][FFN_MAX_LEVELS];
    int n_levels[FFN_BW_COUNT][2];
    double max_bytes; /* the largest working set swept */
    /* read-only bandwidth of the sweep's tail (median of the best rates at sizes >= max_bytes/4),
     * [0] one thread, [1] all threads; 0 when not measured. Robust where plateau detection is
     * not (noisy shared hosts); it is DRAM only if the caches are smaller than max_bytes/4. */
    double tail_read_bps[2];
    char notes[FFN_CAL_MAX_NOTES]; /* "; "-separated remarks (sysfs disagreements, caveats) */
    double elapsed_s;
    /* FFNROOF_ISA: isa_capped when it was set, isa the level it names; the peaks and probes that
     * level does not allow were not run (ffn_calibration_isa_allows) */
    bool isa_capped;
    ffn_isa isa;
    char bw_probe[16]; /* the bandwidth probes' width: "avx512", "avx2" or "portable" */
    /* the peak the kernel path bench uses for each dtype (ffn_kernel_best(dt)->isa:
     * ffn_calibration_roof_kind), -1 for none; roof_set false (a calibration filled by hand):
     * ffn_calibration_to_hw takes the best peak per dtype instead */
    bool roof_set;
    int roof_kind[FFN_DT_COUNT];
    ffn_isa roof_isa[FFN_DT_COUNT];
} ffn_calibration;

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
