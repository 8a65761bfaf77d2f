/* Grid sweeps over the analytic model (sim/sweep.c, docs/plan.md): the iterator behind
 * `ffnroof sweep` walks a grid (dtypes x TP x EP x phases x batches x sequences) and hands back
 * one ffn_result per point, exactly as `ffnroof predict` computes it, with the ridge point
 * computed once per configuration. Pure functions: no I/O, no allocation. */
#ifndef FFNROOF_SWEEP_H
#define FFNROOF_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/plan.h"
#include "ffnroof/sim.h"

#define FFN_SWEEP_PREFILL 1u
#define FFN_SWEEP_DECODE 2u

/* A grid for one (model, device) pair. Arrays are borrowed for the iterator's lifetime. */
typedef struct ffn_sweep_grid {
    ffn_run base; /* everything the axes below do not set (chunk, fused, MoE options, ...) */
    unsigned phases;
    const uint64_t *batch;
    size_t n_batch;
    const uint64_t *seq; /* prefill only */
    size_t n_seq;
    const uint64_t *tp;
    size_t n_tp;
    const uint64_t *ep;
    size_t n_ep;
    const ffn_dtype *wdtype; /* pairs (wdtype[i], adtype[i]) */
    const ffn_dtype *adtype;
    size_t n_dtype;
} ffn_sweep_grid;

typedef struct ffn_sweep_iter {
    const ffn_model *m;
    const ffn_hw *hw;
    const ffn_sweep_grid *g;
    size_t i_cfg, n_cfg; /* configurations: dtype x tp x ep */
    size_t i_pt, n_pt;   /* points of the current configuration */
    bool cfg_ready;
    ffn_run run;
    double ridge;
    uint64_t done, skipped;
    bool runs_only; /* set after ffn_sweep_begin: hand back each point's run (out->run) without
                       predicting it (a caller that prices the point itself: sweep --step) */
} ffn_sweep_iter;

/* Points per (model, device) pair: dtypes x TP x EP x (prefill: batch x seq; decode: batch). */
uint64_t ffn_sweep_count(const ffn_sweep_grid *g);

void ffn_sweep_begin(ffn_sweep_iter *it, const ffn_model *m, const ffn_hw *hw,
                     const ffn_sweep_grid *g);
/* Next point: returns 1 with *out filled (as ffn_predict(), ridge included), 0 when the grid
 * is done, or a negative code with diag when a configuration (all its points, counted in
 * it->skipped) or a point was rejected; the iterator has moved past it, so call again. */
int ffn_sweep_next(ffn_sweep_iter *it, ffn_result *out, ffn_diag *diag);

/* The whole step at a sweep point (`ffnroof sweep --step`): what `plan` prices - the FFN, the
 * attention, its all-reduce and the LM head - for the run's phase, batch, sequence (decode: the
 * KV length) and dtypes, on the layout of run.tp x run.ep devices (attention TP tp and DP ep,
 * the experts EP ep, each TP tp, as ffn_predict splits them), with the memory it needs per
 * device and whether it fits; po gives the rest (KV dtype, memory, routing). */
typedef struct ffn_sweep_step {
    ffn_plan_shape shape;
    ffn_plan_step step;
    ffn_plan_mem mem;
    double tokens_per_s; /* decode: sequences / step; prefill: prompt tokens / step */
} ffn_sweep_step;

int ffn_sweep_step_eval(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                        const ffn_plan_opts *po, const ffn_run *run, ffn_sweep_step *out,
                        ffn_diag *diag);

#endif
