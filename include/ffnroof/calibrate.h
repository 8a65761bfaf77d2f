/* The calibrate floor (measure/calibrate/): this host's roofs (timer, clock, peaks per dtype,
 * bandwidth sweeps, plateaus: ffn_calibrate_run, calibrate.c) and their review (cal_review.c),
 * the spec they make (ffn_calibration_to_hw, with the bf16 roof the bf16 kernel can use), the
 * efficiency fit to ffnroof's own kernels (ffn_bench_fit_eff, kernel_fit.c), what `ffnroof report
 * --quick` measures beyond that (quick.c), and the one pipeline (pipeline.c) that orders the steps
 * and fills the record `ffnroof calibrate`, `ffnroof bench` (when it has no spec) and `ffnroof
 * report --quick` write. The steps and their order live here once; the callers parse, print and
 * write files. Never prints, never exits. */
#ifndef FFNROOF_CALIBRATE_H
#define FFNROOF_CALIBRATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/bench.h"
#include "ffnroof/measure.h"

/* ---------------------------------------------------------------------------------------------
 * The roofs (calibrate.c) and their review (cal_review.c): `ffnroof calibrate` without the kernel
 * fit, the printing and the file writing */

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

/* ---------------------------------------------------------------------------------------------
 * Fitting a calibrated spec's efficiency model to kernel runs (kernel_fit.c). */

/* The spec's `fit:` record from a calibration's kernel fit; k NULL: the fit failed. */
void ffn_bench_fit_quality(const ffn_kcal_result *k, ffn_fit_quality *q);

/* How many calibration shapes: the default set (about 40 s on 2 cores), --quick (a few
 * seconds), or tiny shapes for tests (well under a second; the fit means nothing). */
typedef enum ffn_kcal_mode { FFN_KCAL_FULL = 0, FFN_KCAL_QUICK, FFN_KCAL_TINY } ffn_kcal_mode;

/* The calibration shapes as cases, with fit[i] saying which are fit points (the others are held
 * out); returns the count (<= cap). bf16 cases only when a bf16 kernel exists. */
size_t ffn_kcal_cases(ffn_kcal_mode mode, ffn_bench_case *cases, bool *fit, size_t cap);

/* Set hw's tiles and compute units to the kernels' parallel blocking for `threads` threads,
 * run the calibration cases on hw, fit compute_max per dtype, memory_max, launch_s and
 * overlap_p (sim/fit.c, FFN_FIT_COMPUTE_BY_DTYPE) to the fit cases' fastest times (a shared
 * host only ever slows a sample down), store the result in hw->eff and predict every case
 * with it. */
int ffn_bench_fit_eff(ffn_hw *hw, ffn_kcal_mode mode, int threads,
                      const volatile sig_atomic_t *stop, ffn_bench_progress_fn progress, void *user,
                      ffn_kcal_result *out, ffn_diag *diag);

/* ---------------------------------------------------------------------------------------------
 * `ffnroof report --quick` (measure/calibrate/quick.c). */

/* Its layers: shaped like llama2-7b's (d 4096, f 11008, SwiGLU) and Mixtral-8x7B's (d 4096, f
 * 14336, 8 experts, top-2), scaled down by 4 and 8 in d and f so that their fp32 weights (34 MB
 * and 88 MB) still exceed the last-level cache - decode stays memory-bound as in the real model
 * - while every case runs in about a second on 2 cores. */
enum {
    FFN_QUICK_DENSE_D = 1024,
    FFN_QUICK_DENSE_F = 2752,
    FFN_QUICK_MOE_D = 512,
    FFN_QUICK_MOE_F = 1792
};

/* Its cases (decode T = 1 and 16, prefill T = 256; dense fp32 and bf16, MoE fp32; the bf16 ones
 * only when this CPU has a bf16 kernel); returns the count (<= cap). */
size_t ffn_bench_quick_cases(ffn_bench_case *cs, size_t cap);

/* The host's drift: the calibration's largest fp32 decode and its fp32 prefill fit runs of k,
 * timed again now (a shared VM's speed moves by tens of percent in seconds;
 * bench/profiler_grid.sh checks the same around its grid). Returns how many (<= 2) went into
 * out. */
size_t ffn_bench_rerun(const ffn_kcal_result *k, const volatile sig_atomic_t *stop,
                       ffn_rerun out[2]);

/* ---------------------------------------------------------------------------------------------
 * The pipeline (measure/calibrate/pipeline.c) */

/* Whether the bf16 roof is the AMX tiles' peak for a bf16 kernel that requires these CPU
 * features (ffn_kernel_requires): true when they include FFN_CPU_AMX_BF16, false otherwise
 * (the AVX-512 BF16 dot product, or the fp32 FMA of a kernel that converts). */
bool ffn_calibration_bf16_amx(uint64_t kernel_requires);
/* The same rule for the bf16 kernel dispatch picks on this CPU (ffn_kernel_best: FFNROOF_ISA
 * honoured); false when there is none. */
bool ffn_calibration_bf16_amx_here(void);

/* The steps, in the order the pipeline runs them. */
typedef enum ffn_cal_step {
    FFN_CAL_STEP_ROOFS = 0, /* ffn_calibrate_run: timer, clock, peaks, bandwidth, plateaus */
    FFN_CAL_STEP_SPEC,      /* ffn_calibration_to_hw and the peak kinds */
    FFN_CAL_STEP_FIT,       /* ffn_bench_fit_eff: the kernel runs and the efficiency fit */
    FFN_CAL_STEP_DONE
} ffn_cal_step;

/* Progress: begin is called at the start of each step with the part [lo, hi] of the whole run
 * that step covers (the microbenchmarks' share depends on the mode); stage is the roofs'
 * progress callback and kcase the kernel fit's, each reporting fractions of its own step. Any
 * of the three may be NULL. */
typedef struct ffn_cal_progress {
    void (*begin)(void *user, ffn_cal_step step, double lo, double hi);
    ffn_progress_fn stage;
    ffn_bench_progress_fn kcase;
    void *user;
} ffn_cal_progress;

typedef struct ffn_cal_opts {
    ffn_kcal_mode
        mode;    /* FULL (1-2 minutes), QUICK (10-15 s), TINY (tests: figures mean nothing) */
    int threads; /* the "all cores" thread count; 0 = every CPU this process may use */
    const volatile sig_atomic_t *stop; /* non-zero asks the kernel fit to stop; may be NULL */
} ffn_cal_opts;

/* What the pipeline produces (about 100 KiB: caller-allocated, static in the CLI). */
typedef struct ffn_cal_record {
    ffn_calibration cal;  /* the roofs */
    ffn_hw hw;            /* the spec: roofs + fitted efficiency (neutral when the fit failed) */
    ffn_kcal_result kcal; /* the kernel runs and the fit (n_runs 0 when none finished) */
    bool use_amx;         /* the bf16 roof is AMX's (ffn_calibration_bf16_amx_here) */
    /* the peak kind behind each dtype's roof (ffn_peak_name strings, static), NULL when none */
    const char *peak_kind[FFN_DT_COUNT];
    int fit_rc;            /* ffn_bench_fit_eff's code: 0, FFN_EINTERRUPTED or its failure */
    bool interrupted;      /* the kernel fit was stopped (fit_rc FFN_EINTERRUPTED or *stop set) */
    bool complete;         /* roofs and fit finished: the spec is worth writing */
    char fit_warning[320]; /* ffn_hw_fit_warning's sentence, "" when none or interrupted */
    char notes[2048]; /* "; "-separated: a fit failure, the fit's own notes, what callers add */
    ffn_diag diag;    /* the fit's failure, when fit_rc is neither 0 nor FFN_EINTERRUPTED */
} ffn_cal_record;

/* Run the steps in order into *out. Returns 0 when a spec was made (out->complete says whether
 * the fit finished: a failed fit leaves the roofline with neutral efficiency, an interrupted one
 * sets out->interrupted); else the step that failed is *failed (may be NULL) and the code is
 * FFN_EINTERRUPTED (the roofs were stopped), the roofs' error, or FFN_EINVAL (no fp32 peak or no
 * memory bandwidth measured). Never prints. */
int ffn_cal_pipeline_run(const ffn_cal_opts *opts, const ffn_cal_progress *progress,
                         ffn_cal_record *out, ffn_cal_step *failed);

/* The microbenchmarks' share [0, return value] of the whole run's progress in a mode: the
 * kernel fit takes the rest. */
double ffn_cal_roofs_share(ffn_kcal_mode mode);

/* The peak kind behind each dtype's roof: the calibration's roof kind where it set one and the
 * spec has that peak, else the best measured kind of the dtype (AMX kinds only with use_amx). */
void ffn_cal_peak_kinds(const ffn_calibration *c, const ffn_hw *hw, bool use_amx,
                        const char *peak_kind[FFN_DT_COUNT]);

/* Append to r->notes that the load average load1 (the one-minute figure at the start) was above
 * half the spec's compute units (other work was running); nothing otherwise or when unknown. */
void ffn_cal_note_load(ffn_cal_record *r, double load1);

#endif
