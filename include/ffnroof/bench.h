/* The bench runner behind `ffnroof bench` and the kernel half of `ffnroof calibrate`: runs
 * ffnroof's FFN kernels (dense and MoE) on a shape, side by side with the library peers, with
 * warm-up, repetition until the timing is stable and robust statistics, weights flushed from
 * the caches before every call (as in a real model, where the other layers evict them), PAPI
 * counters around every timed call (hardware events where the host has them, ffnroof's SDE
 * events always), an optional check against the reference kernel, and the simulator's roofline
 * and predicted time for the same op on a given spec. What calibrate does with such runs (the
 * efficiency fit, `report --quick`'s cases) is in ffnroof/calibrate.h.
 *
 * Like every library here it never prints and never exits; errors are negative FFN_E* codes
 * with a diag. Interruption: set *opts->stop (e.g. from a SIGINT handler); the run stops after
 * the current timed call and returns FFN_EINTERRUPTED with the cases finished so far. */
#ifndef FFNROOF_BENCH_H
#define FFNROOF_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "ffnroof/measure_papi.h"
#include "ffnroof/peers.h"
#include "ffnroof/profile.h"
#include "ffnroof/sim.h"

typedef struct ffn_bench_opts {
    bool isa_set; /* else the best kernel (ffn_kernel_best, FFNROOF_ISA honoured) */
    ffn_isa isa;
    int threads;                    /* <= 0: all cores */
    bool peers[FFN_PEER_COUNT];     /* peers to run beside ours (dense cases only) */
    size_t reps;                    /* exactly this many timed rounds; 0 = until stable */
    double case_time_s;             /* cap per case (all implementations), default 4 s */
    bool verify;                    /* compare with the reference kernel */
    bool warm;                      /* do not flush the weights before each call */
    ffn_counters *counters;         /* counted around every timed call of ours; NULL = none */
    const char *const *event_names; /* names of counters' events, in order */
    size_t n_events;
    const volatile sig_atomic_t *stop;
    uint64_t seed; /* weights and inputs (0 = 1) */
} ffn_bench_opts;

/* Called before each case with the fraction done and a label; non-zero stops the run. */
typedef int (*ffn_bench_progress_fn)(void *user, double fraction, const char *label);

/* Check a case (shape, dtype, kernel availability for opts). 0 or FFN_EINVAL /
 * FFN_EUNSUPPORTED with diag. */
int ffn_bench_case_check(const ffn_bench_case *c, const ffn_bench_opts *o, ffn_diag *diag);

/* Tokens one bench case may have (batch x seq of a prefill). */
#define FFN_BENCH_MAX_TOKENS (1u << 20)

/* The cases `ffnroof bench --model` runs: m's FFN layer (its routed MoE layer when it has
 * one), for each phase in phases (bit 0 prefill: batch x seq tokens; bit 1 decode: batch
 * tokens) and each of the n_batches batches, into out[0..*n) (at most cap), the dtypes, group
 * and zero point from tmpl. notes (nn bytes, may be NULL) say what of m the cases leave out
 * (shared experts, dense layers beside the MoE ones). 0, or FFN_ERANGE for more than
 * FFN_BENCH_MAX_TOKENS tokens (with diag). */
int ffn_bench_model_cases(const ffn_model *m, const ffn_bench_case *tmpl, unsigned phases,
                          const uint64_t *batches, size_t n_batches, uint64_t seq,
                          ffn_bench_case *out, size_t cap, size_t *n, char *notes, size_t nn,
                          ffn_diag *diag);

/* The compute dtype a kernel of weight dtype wdt uses: bf16/fp16 weights multiply in their own
 * dtype (AMX, VDPBF16PS, FMLA.8h) on fp32-stored activations. */
ffn_dtype ffn_bench_cdtype(ffn_dtype wdt);

/* The simulator's view of a case on hw: roofline, predicted time and bound of the same op
 * (fused dense layer, or an MoE layer with uniform routing), activations fp32, compute dtype
 * the case's cdtype where set (the kernel's, ffn_kernel_cdtype), else ffn_bench_cdtype.
 * flops/bytes (may be NULL) receive the simulator's counts. */
int ffn_bench_predict(const ffn_hw *hw, const ffn_bench_case *c, double *roofline_s,
                      double *predicted_s, ffn_bound *bound, double *flops, double *bytes);
/* The same for weights that stay where `weights` says between calls (FFN_WEIGHTS_HOT: warm
 * caches, `bench --warm`; COLD: flushed), also filling the bytes each source served per call
 * (served[FFN_HW_MAX_LEVELS + 1], sim.h), the level holding the weights (1-based, 0 =
 * memory) and the part of them it holds (ffn_level_placing: 1 all, 0 none) where not NULL. */
int ffn_bench_predict_weights(const ffn_hw *hw, const ffn_bench_case *c, ffn_weights weights,
                              double *roofline_s, double *predicted_s, ffn_bound *bound,
                              double *served, int *weights_level, double *weights_frac);

/* Run n cases (cases sharing a layer, i.e. the same kind, shape and dtype one after another,
 * share the packed weights) into res[0..n); *n_done counts the finished ones. hw may be NULL
 * (no roofline or prediction: those fields are NAN). Returns 0, FFN_EINTERRUPTED (stop flag
 * or progress callback), or the first error (with diag). */
int ffn_bench_run(const ffn_hw *hw, const ffn_bench_case *cases, size_t n, const ffn_bench_opts *o,
                  ffn_bench_progress_fn progress, void *user, ffn_bench_result *res, size_t *n_done,
                  ffn_diag *diag);

/* One layer of `tokens` tokens of shape (d, f, act; group and zero point from tmpl, with its
 * dtypes) as a case: decode when phases is 2 (decode only) or unset (0) with one token, else
 * prefill; a decode case stands for a batch of `tokens` sequences, a prefill one for one
 * sequence of `tokens` prompt tokens. n_experts > 0 makes it a MoE layer of n_experts experts,
 * top_k each (the caller checks 1 <= top_k <= n_experts). */
void ffn_bench_shape_case(const ffn_bench_case *tmpl, size_t tokens, size_t d, size_t f,
                          ffn_act act, unsigned phases, size_t n_experts, size_t top_k,
                          ffn_bench_case *out);

/* How well the spec predicted r[0..n): over the cases with a finite prediction error (at most
 * 256 of them), the median and the largest |error| and the index of the worst case. Returns how
 * many cases counted; the summary means something only for two or more. */
size_t ffn_bench_error_summary(const ffn_bench_result *r, size_t n, double *median_abs,
                               double *max_abs, size_t *worst);

/* The default counter set of a bench run, in this order: the hardware events of
 * ffn_papi_default_events, then ffnroof's SDE events (ffn_sde_event_names). Writes at most cap
 * names (static strings) into ev and returns how many. */
#define FFN_BENCH_N_DEFAULT_EVENTS (FFN_PAPI_N_DEFAULT + FFN_SDE_N)
size_t ffn_bench_default_events(const char **ev, size_t cap);
/* The note a run carries about its counters (probe p; events_given: an explicit event list):
 * built without PAPI (timers only), or no hardware counters on this host (and why) for the
 * default set. Writes it into buf (n bytes) and returns true; false (buf "") when none. */
bool ffn_bench_counters_note(const ffn_papi_probe *p, bool events_given, char *buf, size_t n);

#endif
