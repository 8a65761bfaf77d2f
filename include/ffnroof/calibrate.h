/* The calibration pipeline (measure/calibrate/pipeline.c): this host's roofs (timer, clock, peaks
 * per dtype, bandwidth sweeps, plateaus: ffn_calibrate_run), the spec they make
 * (ffn_calibration_to_hw, with the bf16 roof the bf16 kernel can use), the peak kind behind each
 * dtype's roof, the efficiency fit to ffnroof's own kernels (ffn_bench_fit_eff) and the record
 * `ffnroof calibrate`, `ffnroof bench` (when it has no spec) and `ffnroof report --quick` write.
 * The steps and their order live here once; the callers parse, print and write files. */
#ifndef FFNROOF_CALIBRATE_H
#define FFNROOF_CALIBRATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/bench.h"
#include "ffnroof/measure.h"

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
