/* The whole-model prediction: the dense and MoE layers of a model for one phase (sim/dense.c,
 * sim/moe.c), the ridge point and activation memory. Equations: docs/model.md. */
#include "ffnroof/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Activation memory (docs/model.md, "Activation memory"). */
void ffn_activation_memory(const ffn_model *m, const ffn_run *run, uint64_t T, uint64_t layers,
                           ffn_act_mem *o)
{
    memset(o, 0, sizeof *o);
    const double ab = ffn_run_act_bytes(run);
    const uint64_t tp = run->tp ? run->tp : 1;
    const bool gated = ffn_act_gated(m->act);
    const double g = gated ? 2.0 : 1.0;
    const double D = (double)m->hidden;
    /* The widest FFN a token passes through: a dense layer's f, or k routed experts plus the
     * shared experts of an MoE layer (each token's expert intermediates coexist). */
    double F = 0;
    if (m->layers > ffn_model_moe_layers(m)) F = (double)m->intermediate;
    if (m->moe.n_experts && ffn_model_moe_layers(m)) {
        double fm = (double)m->moe.top_k * (double)m->moe.expert_intermediate +
                    (double)m->moe.n_shared * (double)m->moe.shared_intermediate;
        if (fm > F) F = fm;
    }
    F /= (double)tp;
    const double Tt = (double)T;
    o->infer_tokens = T;
    o->infer_input_bytes = Tt * D * ab;
    o->infer_output_bytes = Tt * D * ab;
    /* fused: only h is materialised; unfused: the g projection outputs and h coexist while
     * the activation pass runs (no in-place update). */
    o->infer_intermediate_bytes = Tt * F * ab * (run->fused ? 1.0 : g + 1.0);
    double during_act = o->infer_input_bytes + o->infer_intermediate_bytes;
    double during_down = o->infer_input_bytes + Tt * F * ab + o->infer_output_bytes;
    o->infer_peak_bytes = during_act > during_down ? during_act : during_down;

    /* Training, saved for backward (Korthikanti et al. 2022, Sec. 4.1, generalised to gated
     * FFNs): the first linear's input, the activation's input(s), the down projection's input,
     * and a 1-byte dropout mask per output element. With MoC (top-K channels of the gate kept),
     * the [T,f] tensors are stored as K values plus an f-bit channel mask per token. */
    double Ff = F;
    double sparse_bytes_per_tok = Ff * ab;
    if (run->moc_k > 0 && (double)run->moc_k < Ff)
        sparse_bytes_per_tok = (double)run->moc_k * ab + Ff / 8.0;
    o->train_input_bytes = Tt * D * ab;
    o->train_preact_bytes = Tt * (g * sparse_bytes_per_tok);
    o->train_postact_bytes = Tt * sparse_bytes_per_tok;
    o->train_mask_bytes = m->dropout > 0 ? Tt * D : 0;
    o->train_layer_bytes =
        o->train_input_bytes + o->train_preact_bytes + o->train_postact_bytes + o->train_mask_bytes;
    o->train_layer_actrecomp_bytes =
        o->train_input_bytes + o->train_preact_bytes + o->train_mask_bytes;
    o->train_layer_fullrecomp_bytes = o->train_input_bytes;
    o->train_model_bytes = o->train_layer_bytes * (double)layers;
    o->train_model_actrecomp_bytes = o->train_layer_actrecomp_bytes * (double)layers;
    o->train_model_fullrecomp_bytes = o->train_layer_fullrecomp_bytes * (double)layers;
}

/* Cost the dense and MoE layers for T tokens per step. */
static int cost_layers(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, uint64_t T,
                       ffn_result *r, ffn_diag *diag)
{
    r->moe_layers = ffn_model_moe_layers(m);
    r->dense_layers = m->layers - r->moe_layers;
    memset(&r->dense, 0, sizeof r->dense);
    memset(&r->moe, 0, sizeof r->moe);
    if (r->dense_layers) {
        /* Under expert parallelism the rest of the model is data-parallel over the EP group
         * (as in sim/moe.c): each device runs the dense layers on its T/ep tokens. */
        uint64_t ep = r->moe_layers && run->ep > 1 ? run->ep : 1;
        uint64_t Td = (T + ep - 1) / ep;
        int rc = ffn_dense_layer(hw, run, m->hidden, m->intermediate, m->act, m->mlp_bias, Td,
                                 &r->dense);
        if (rc) return rc;
    }
    if (r->moe_layers) {
        int rc = ffn_moe_layer(m, hw, run, T, &r->moe, &r->moe_detail, diag);
        if (rc) return rc;
    }
    return 0;
}

static double compute_minus_memory(const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                                   uint64_t T, ffn_result *scratch)
{
    if (cost_layers(m, hw, run, T, scratch, NULL)) return NAN;
    double c = (double)scratch->dense_layers * scratch->dense.compute_s +
               (double)scratch->moe_layers * scratch->moe.compute_s;
    double mm = (double)scratch->dense_layers * scratch->dense.memory_s +
                (double)scratch->moe_layers * scratch->moe.memory_s;
    return c - mm;
}

/* Smallest token count at which the FFN's ideal compute time reaches its memory time
 * (intensity = peak/bandwidth). Bisection, because MoE weight traffic is not linear in T. */
double ffn_ridge_tokens(const ffn_model *m, const ffn_hw *hw, const ffn_run *run)
{
    ffn_result *s = &(ffn_result){0};
    const uint64_t hi_limit = (uint64_t)1 << 34;
    if (!(compute_minus_memory(m, hw, run, hi_limit, s) >= 0)) return INFINITY;
    if (compute_minus_memory(m, hw, run, 1, s) >= 0) return 1;
    uint64_t lo = 1, hi = hi_limit;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (compute_minus_memory(m, hw, run, mid, s) >= 0)
            hi = mid;
        else
            lo = mid;
    }
    return (double)hi;
}

int ffn_predict(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, ffn_result *out,
                ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!m || !hw || !run) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no model/hw/run");
    if (run->batch == 0) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "batch must be >= 1");
    if (run->phase == FFN_PHASE_PREFILL && run->seq == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "seq must be >= 1 for prefill");
    uint64_t tp = run->tp ? run->tp : 1;
    if (m->layers > ffn_model_moe_layers(m) && m->intermediate % tp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--tp %llu does not divide the intermediate size %llu",
                            (unsigned long long)tp, (unsigned long long)m->intermediate);
    if (hw->mem_bandwidth_bps <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "hw '%s' has no memory bandwidth",
                            hw->name);
    if (tp > 1 && hw->scaleup.bandwidth_bps <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--tp %llu needs an interconnect, and hw '%s' has none",
                            (unsigned long long)tp, hw->name);
    out->run = *run;
    out->compute_dtype = ffn_compute_dtype(hw, run->wdtype, run->adtype);
    out->peak_flops = hw->peak_flops[out->compute_dtype];

    /* Steps: one for decode and unchunked prefill; for chunked prefill, full chunks of
     * `chunk` tokens per sequence plus a shorter last chunk when the prompt does not divide. */
    uint64_t T, full_steps = 1, rem = 0;
    if (run->phase == FFN_PHASE_DECODE) {
        T = run->batch;
    } else {
        uint64_t per_seq = run->seq;
        if (run->chunk && run->chunk < run->seq) {
            per_seq = run->chunk;
            full_steps = run->seq / run->chunk;
            rem = run->seq % run->chunk;
        }
        if (per_seq > UINT64_MAX / run->batch)
            return ffn_diag_set(diag, FFN_EOVERFLOW, NULL, 0, 0, "batch x seq overflows");
        T = run->batch * per_seq;
    }
    out->tokens = T;
    out->steps = full_steps + (rem ? 1 : 0);
    ffn_run rr = *run;
    if (rr.weights_level < 0 || rr.weights_level > hw->n_levels || run->weights != FFN_WEIGHTS_COLD)
        rr.weights_level = 0;
    int rc = cost_layers(m, hw, &rr, T, out, diag);
    if (rc) return rc;
    if (run->weights != FFN_WEIGHTS_COLD) {
        /* Residency (docs/model.md, "On-chip memory"): hot holds one layer's weights against
         * each level (a benchmark repeating one layer), auto all layers' weights of a step
         * (a model whose FFN fits on chip across steps; serving decode over many layers
         * does not, and stays cold). MoE layers count the experts the batch touches. A working
         * set larger than every level keeps the part the largest one holds there (what an
         * ideal replacement keeps of a cyclic sweep: capacity / working set). */
        double wd = out->dense_layers ? out->dense.weight_bytes : 0;
        double wm = out->moe_layers ? out->moe.weight_bytes : 0;
        double ws = run->weights == FFN_WEIGHTS_HOT
                        ? (wd > wm ? wd : wm)
                        : (double)out->dense_layers * wd + (double)out->moe_layers * wm;
        double frac;
        int lv = ffn_level_placing(hw, ws, &frac);
        out->weights_working_set_bytes = ws;
        out->weights_level = lv;
        out->weights_frac = frac;
        out->weights_level_no_bw = lv && !(hw->levels[lv - 1].bandwidth_bps > 0);
        if (lv) {
            rr.weights_level = lv;
            rr.weights_frac = frac;
            rc = cost_layers(m, hw, &rr, T, out, diag);
            if (rc) return rc;
        }
    }
    out->run.weights_level = rr.weights_level;

    const double S = (double)full_steps, Ld = (double)out->dense_layers,
                 Lm = (double)out->moe_layers;
    double cs = S * (Ld * out->dense.compute_s + Lm * out->moe.compute_s);
    double ms = S * (Ld * out->dense.memory_s + Lm * out->moe.memory_s);
    out->flops = S * (Ld * out->dense.flops + Lm * out->moe.flops);
    out->vec_ops = S * (Ld * out->dense.vec_ops + Lm * out->moe.vec_ops);
    out->bytes = S * (Ld * out->dense.bytes + Lm * out->moe.bytes);
    out->weight_bytes = S * (Ld * out->dense.weight_bytes + Lm * out->moe.weight_bytes);
    out->roofline_s = S * (Ld * out->dense.roofline_s + Lm * out->moe.roofline_s);
    out->predicted_s = S * (Ld * out->dense.predicted_s + Lm * out->moe.predicted_s);
    out->comm_s = S * (Ld * out->dense.comm_s + Lm * out->moe.comm_s);
    double moe_s = S * Lm * out->moe.predicted_s;
    out->moe_fused_s = S * Lm * out->moe_detail.fused_s;
    if (rem) {
        /* the last, shorter chunk: batch x rem tokens */
        ffn_result *last = &(ffn_result){0};
        rc = cost_layers(m, hw, &rr, run->batch * rem, last, diag);
        if (rc) return rc;
        cs += Ld * last->dense.compute_s + Lm * last->moe.compute_s;
        ms += Ld * last->dense.memory_s + Lm * last->moe.memory_s;
        out->flops += Ld * last->dense.flops + Lm * last->moe.flops;
        out->vec_ops += Ld * last->dense.vec_ops + Lm * last->moe.vec_ops;
        out->bytes += Ld * last->dense.bytes + Lm * last->moe.bytes;
        out->weight_bytes += Ld * last->dense.weight_bytes + Lm * last->moe.weight_bytes;
        out->roofline_s += Ld * last->dense.roofline_s + Lm * last->moe.roofline_s;
        out->predicted_s += Ld * last->dense.predicted_s + Lm * last->moe.predicted_s;
        out->comm_s += Ld * last->dense.comm_s + Lm * last->moe.comm_s;
        moe_s += Lm * last->moe.predicted_s;
        out->moe_fused_s += Lm * last->moe_detail.fused_s;
    }
    out->intensity = out->bytes > 0 ? out->flops / out->bytes : 0;
    double p10, p90;
    out->unc_default = ffn_hw_unc_range_dt(hw, run->wdtype, &p10, &p90);
    out->predicted_p10_s = out->predicted_s * p10;
    out->predicted_p90_s = out->predicted_s * p90;
    if (out->moe_fused_s > 0) { /* the fused kernels at their family's range */
        out->predicted_p10_s += out->moe_fused_s * (out->moe_detail.fused_p10 - p10);
        out->predicted_p90_s += out->moe_fused_s * (out->moe_detail.fused_p90 - p90);
    }
    out->bound = cs >= ms ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    if (out->comm_s > (cs > ms ? cs : ms)) out->bound = FFN_BOUND_COMM;
    out->ridge_tokens = run->skip_ridge ? NAN : ffn_ridge_tokens(m, hw, &rr);
    if (out->moe_layers && out->predicted_s > 0)
        out->moe_detail.share_of_ffn = moe_s / out->predicted_s;
    /* activations per device: the EP group splits the tokens (data-parallel attention) */
    uint64_t ep = out->moe_layers && run->ep > 1 ? run->ep : 1;
    ffn_activation_memory(m, run, (T + ep - 1) / ep, m->layers, &out->mem);
    return 0;
}
