/* The grid sweep behind `ffnroof sweep` (include/ffnroof/sweep.h): configurations (dtype pair x
 * TP x EP), each probed once and its ridge point computed once, then its points (prefill batch x
 * sequence, then decode batch) through ffn_predict(). Pure: no I/O, no allocation. */
#include "ffnroof/sweep.h"

#include <string.h>

static uint64_t points_per_cfg(const ffn_sweep_grid *g)
{
    uint64_t n = 0;
    if (g->phases & FFN_SWEEP_PREFILL) n += (uint64_t)g->n_batch * g->n_seq;
    if (g->phases & FFN_SWEEP_DECODE) n += g->n_batch;
    return n;
}

uint64_t ffn_sweep_count(const ffn_sweep_grid *g)
{
    return (uint64_t)g->n_dtype * g->n_tp * g->n_ep * points_per_cfg(g);
}

void ffn_sweep_begin(ffn_sweep_iter *it, const ffn_model *m, const ffn_hw *hw,
                     const ffn_sweep_grid *g)
{
    memset(it, 0, sizeof *it);
    it->m = m;
    it->hw = hw;
    it->g = g;
    it->n_cfg = g->n_dtype * g->n_tp * g->n_ep;
    it->n_pt = points_per_cfg(g);
    if (it->n_pt == 0) it->n_cfg = 0;
}

/* Set the run of the point i of the current configuration: prefill points first (batch-major,
 * sequence-minor), then decode points. */
static void set_point(ffn_sweep_iter *it, size_t i)
{
    const ffn_sweep_grid *g = it->g;
    size_t n_pre = (g->phases & FFN_SWEEP_PREFILL) ? g->n_batch * g->n_seq : 0;
    if (i < n_pre) {
        it->run.phase = FFN_PHASE_PREFILL;
        it->run.batch = g->batch[i / g->n_seq];
        it->run.seq = g->seq[i % g->n_seq];
    } else {
        it->run.phase = FFN_PHASE_DECODE;
        it->run.batch = g->batch[i - n_pre];
        it->run.seq = g->n_seq ? g->seq[0] : it->g->base.seq;
    }
}

int ffn_sweep_next(ffn_sweep_iter *it, ffn_result *out, ffn_diag *diag)
{
    const ffn_sweep_grid *g = it->g;
    for (;;) {
        if (it->i_cfg >= it->n_cfg) return 0;
        if (!it->cfg_ready) {
            size_t c = it->i_cfg;
            size_t i_ep = c % g->n_ep, i_tp = (c / g->n_ep) % g->n_tp,
                   i_dt = c / (g->n_ep * g->n_tp);
            it->run = g->base;
            it->run.wdtype = g->wdtype[i_dt];
            it->run.adtype = g->adtype[i_dt];
            it->run.tp = g->tp[i_tp];
            it->run.ep = g->ep[i_ep];
            it->run.skip_ridge = true;
            it->i_pt = 0;
            if (it->run.ep > 1 && !it->m->moe.n_experts) {
                it->skipped += it->n_pt;
                it->i_cfg++;
                return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                                    "EP %llu: model '%s' has no experts",
                                    (unsigned long long)it->run.ep, it->m->name);
            }
            /* Probe the configuration once: tp/ep problems reject all its points. */
            ffn_run probe = it->run;
            probe.phase = FFN_PHASE_DECODE;
            probe.batch = 1;
            int rc = ffn_predict(it->m, it->hw, &probe, out, diag);
            if (rc) {
                it->skipped += it->n_pt;
                it->i_cfg++;
                return rc;
            }
            /* The ridge does not depend on batch, sequence or phase: once per configuration. */
            it->ridge = ffn_ridge_tokens(it->m, it->hw, &it->run);
            it->cfg_ready = true;
        }
        if (it->i_pt >= it->n_pt) {
            it->cfg_ready = false;
            it->i_cfg++;
            continue;
        }
        set_point(it, it->i_pt++);
        if (it->runs_only) {
            out->run = it->run;
            it->done++;
            return 1;
        }
        int rc = ffn_predict(it->m, it->hw, &it->run, out, diag);
        if (rc) {
            it->skipped++;
            return rc;
        }
        out->run.skip_ridge = false;
        out->ridge_tokens = it->ridge;
        it->done++;
        return 1;
    }
}

int ffn_sweep_step_eval(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                        const ffn_plan_opts *po, const ffn_run *run, ffn_sweep_step *out,
                        ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    ffn_plan_opts o = *po;
    o.wdtype = run->wdtype;
    o.adtype = run->adtype;
    o.group_size = run->group_size;
    o.zero_point = run->zero_point;
    o.act_io_dtype = run->act_io_dtype;
    o.fused = run->fused;
    o.chunk = run->chunk;
    o.moe = run->moe;
    o.weights = run->weights;
    o.onchip = run->onchip;
    o.margin = FFN_MARGIN_MEDIAN;
    const bool moe = ffn_model_moe_layers(m) > 0;
    out->shape = (ffn_plan_shape){run->tp, moe ? run->ep : 1, moe ? run->ep : 1, 1};
    int rc = ffn_plan_step_eval(m, hw, &o, run->phase, &out->shape, run->batch, run->seq,
                                &out->step, diag);
    if (rc) return rc;
    /* decode holds `batch` sequences of `seq` cached tokens; prefill adds its activations */
    rc = ffn_plan_memory(m, p, hw, &o, &out->shape, run->batch, run->seq,
                         run->phase == FFN_PHASE_PREFILL ? run->batch * run->seq : 0, &out->mem);
    if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "the memory of the layout does not count");
    const double per = run->phase == FFN_PHASE_PREFILL ? (double)run->seq : 1.0;
    out->tokens_per_s = out->step.step_s > 0 ? (double)run->batch * per / out->step.step_s : 0.0;
    return 0;
}
