/* The profiler's results as plain data: what `ffnroof calibrate` and `ffnroof bench` measure
 * (include/ffnroof/measure.h, bench.h) and the writers in io/ put into calibration.json and the
 * bench JSON/CSV (include/ffnroof/bench_io.h, docs/formats-bench.md). Only types and limits (the
 * profiler's enums and their names are include/ffnroof/names.h's), so that io/ reads and writes
 * them without the kernel, peer, PAPI or measuring headers. */
#ifndef FFNROOF_PROFILE_H
#define FFNROOF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/names.h"
#include "ffnroof/sim.h"
#include "ffnroof/types.h"

/* ---- timers, statistics, the host (measure/) ---------------------------------------------- */

typedef struct ffn_timer_info {
    char source[32];       /* "CLOCK_MONOTONIC_RAW" or the fallback used */
    double res_reported_s; /* clock_getres() */
    double res_measured_s; /* smallest non-zero step seen between back-to-back reads */
    double overhead_s;     /* median cost of one read (back-to-back difference) */
} ffn_timer_info;

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

typedef struct ffn_stats {
    size_t n;
    double min, max;
    double median;
    double p90; /* linear interpolation between order statistics (Hyndman-Fan type 7) */
    double mean;
    double stdev; /* sample standard deviation (n - 1); 0 when n == 1 */
    double mad;   /* median absolute deviation from the median (unscaled) */
} ffn_stats;

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

/* One cache as sysfs describes it (/sys/devices/system/cpu/cpu0/cache/index*), or CPUID where
 * sysfs lists none (ffn_host_info.cache_source): trust it less than a measurement, especially in
 * a VM. */
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
    char cache_source[8]; /* "sysfs", "CPUID" (sysfs lists none), or "" (neither describes any) */
} ffn_host_info;

/* ---- peaks, bandwidth, plateaus, the calibration (measure/) -------------------------------- */

typedef struct ffn_peak_result {
    ffn_peak_kind kind;
    int threads;
    double flops_per_s; /* best sample: the roof */
    double median_flops_per_s;
    uint64_t iters; /* per thread per sample */
    size_t samples;
    bool stable;
} ffn_peak_result;

typedef struct ffn_bw_point {
    ffn_bw_kernel kernel;
    int threads;
    double size_bytes;  /* working set: all arrays of all threads */
    double bytes_per_s; /* best sample (STREAM byte counting) */
    double median_bytes_per_s;
    size_t samples;
} ffn_bw_point;

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

#define FFN_CAL_MAX_POINTS 1024
#define FFN_CAL_MAX_NOTES 2048

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
    double max_bytes; /* the largest working set swept (extended while the read tail fell) */
    /* read-only bandwidth of the sweep's tail (median of the best rates at sizes >= max_bytes/2),
     * [0] one thread, [1] all threads; 0 when not measured. Robust where plateau detection is
     * not (noisy shared hosts); it is DRAM only if the caches are smaller than max_bytes/2. */
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

/* ---- counters (measure/probe/papi.c) -------------------------------------------------------- */

#define FFN_COUNTER_NAME_MAX 128
#define FFN_COUNTER_REASON_MAX 192

/* The default hardware events the probe checks (ffn_papi_default_events, measure_papi.h). */
#define FFN_PAPI_N_DEFAULT 7

typedef struct ffn_counter_value {
    char name[FFN_COUNTER_NAME_MAX];
    bool available; /* false: value is meaningless and must not be shown as a number */
    long long value;
    char reason[FFN_COUNTER_REASON_MAX]; /* why it is unavailable ("" when available) */
} ffn_counter_value;

typedef struct ffn_papi_probe {
    bool built_in;    /* compiled with PAPI */
    bool initialised; /* PAPI_library_init succeeded */
    char version[32]; /* "7.0.0.0" */
    char error[256];  /* why initialisation failed; "" otherwise */
    /* the CPU (perf_event) component */
    bool cpu_component_found;
    bool cpu_component_disabled;
    char cpu_disabled_reason[256]; /* PAPI's disabled_reason, verbatim */
    bool cpu_pmu_exported; /* the kernel exports a CPU PMU (/sys/bus/event_source/devices/cpu*) */
    int num_hw_counters;   /* as PAPI reports it (a VM may report counters it cannot use) */
    bool virtualized;
    char vm_vendor[64];
    /* the SDE component */
    bool sde_component_found;
    bool sde_component_disabled;
    char sde_disabled_reason[256];
    bool sde_works; /* sde:::ffnroof::kernel_calls could be added, started and read */
    /* each default event: available (it was added, started and read) or the reason */
    ffn_counter_value events[FFN_PAPI_N_DEFAULT];
    int n_events_available;
    /* "papi_hw" when at least one hardware event works, else "papi_sde" when SDE works, else
     * "none" */
    char counter_source[16];
} ffn_papi_probe;

/* ---- the bench runner's cases and results (measure/bench/bench_run.c) ---------------------- */

typedef enum ffn_bench_kind { FFN_BENCH_DENSE = 0, FFN_BENCH_MOE } ffn_bench_kind;

/* One case: a layer shape, a weight dtype and a token count. */
typedef struct ffn_bench_case {
    ffn_bench_kind kind;
    ffn_phase phase;
    uint64_t batch, seq;     /* what the tokens stand for (seq 0 for decode) */
    size_t tokens;           /* T of the kernel call, >= 1 */
    ffn_kshape shape;        /* d, f (per expert for MoE), act, bias */
    size_t n_experts, top_k; /* MoE: E >= 1, 1 <= k <= E (softmax scoring, Mixtral) */
    ffn_dtype wdtype;        /* weight dtype (int4: its group and zero point are shape's) */
    /* The format the kernel multiplies activations in (ffn_kernel.adtype): FFN_DT_FP32 (0, every
     * float kernel), or for int8/int4 weights FFN_DT_BF16 and (int8 only) FFN_DT_INT8 (W8A8).
     * x and y stay fp32 either way. */
    ffn_dtype adtype;
    /* The units the kernel's dot products run on (ffn_kernel_cdtype), which the prediction
     * charges the FLOPs at; the bench runner sets it from the kernel it ran. Unset (a case
     * built by hand or read back from a file): ffn_bench_cdtype's rule by weight dtype. */
    bool cdtype_set;
    ffn_dtype cdtype;
} ffn_bench_case;

#define FFN_BENCH_MAX_EVENTS 24

typedef struct ffn_bench_peer {
    bool ran;
    ffn_peer_lib lib;
    char describe[96];
    ffn_dtype dtype;
    ffn_stats time;
    double speedup; /* peer median / our median */
    char error[192];
} ffn_bench_peer;

typedef struct ffn_bench_result {
    ffn_bench_case c;
    char kernel[64];
    ffn_isa isa;
    int threads; /* the thread count passed to the kernel, resolved (>= 1) */
    bool cold;
    ffn_stats time; /* seconds per call */
    bool stable;
    double flops, bytes, weight_bytes; /* one call, the kernels' (= the simulator's) count */
    double achieved_flops, achieved_bps, intensity;
    ffn_bound bound;
    double roofline_s, predicted_s, prediction_error, efficiency;
    /* predicted / min - 1: other processes can only slow a sample down, so on a shared host
     * the fastest sample is the best estimate of the machine's own speed */
    double prediction_error_min;
    ffn_dtype cdtype; /* the compute dtype the prediction used */
    /* counters: totals over `calls` timed calls */
    ffn_counter_value counters[FFN_BENCH_MAX_EVENTS];
    size_t n_counters;
    long long calls;
    /* MoE: medians of the kernel's own phase timers */
    bool has_moe;
    double route_s, permute_s, experts_s, combine_s;
    size_t active_experts;
    ffn_bench_peer peers[FFN_PEER_COUNT];
    bool verified;
    double max_rel_err; /* max |ours - ref| / max |ref| over the tokens checked */
    double verify_bound;
    size_t verify_tokens;
    /* The bytes each memory level served per call, for the cache-aware roofline: from the
     * model's per-level traffic (level_bytes_source "model"; warm runs read the weights from
     * the level that holds them); [i] on-chip level i of the spec, [FFN_SRC_MEMORY] memory.
     * n_levels 0: no spec to cost against. */
    double level_bytes[FFN_HW_MAX_LEVELS + 1];
    char level_names[FFN_HW_MAX_LEVELS][24];
    int n_levels;
    const char *level_bytes_source; /* "model" (no host counters are read for it yet) */
    int weights_level;              /* the model's: 1-based level of the warm weights, 0 memory */
    double weights_frac; /* the part of them it holds (1 all; less beyond every level; 0) */
} ffn_bench_result;

#define FFN_KCAL_MAX 48

typedef struct ffn_kcal_run {
    ffn_bench_result r;
    bool fit; /* used by the fit (else held out: only predicted) */
} ffn_kcal_run;

typedef struct ffn_kcal_result {
    ffn_kcal_run runs[FFN_KCAL_MAX];
    size_t n_runs;
    ffn_eff eff; /* fitted */
    double fit_median_abs, fit_max_abs;
    double launch_bound_s; /* the launch cost's upper bound: the shortest fitted call (median) */
    size_t n_fit;
    double check_median_abs, check_max_abs;
    size_t n_check;
    char fp32_kernel[64], bf16_kernel[64];
    /* A roof must bound what was measured: when a memory-bound kernel run streamed faster than
     * the bandwidth sweep's tail (a noisy shared host), the spec's bandwidth is raised to it;
     * likewise a peak. The values before, 0 when unchanged. */
    double bw_raised_from, peak_raised_from[FFN_DT_COUNT];
    char notes[1536];
} ffn_kcal_result;

/* One calibration kernel run timed again later (the host's drift): what it is, both medians. */
typedef struct ffn_rerun {
    char what[64];
    double before_s, after_s;
} ffn_rerun;

#endif
