/* Disaggregated prefill and decode pools (include/ffnroof/plan.h, docs/plan.md "Disaggregated
 * prefill and decode"): the best layout of each pool, the KV transfer between them, the pools
 * balanced so the prefill pool feeds the decode pool, and the comparison with one aggregated
 * pool. Pure: no I/O, no allocation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"

/* The feasible layout with the most tokens per device, or -1. */
static int most_per_device(const ffn_plan *p)
{
    int best = -1;
    for (size_t i = 0; i < p->n_layouts; i++) {
        const ffn_plan_layout *L = &p->layouts[i];
        /* a layout that only misses the device limit for the target still serves per device */
        if (!L->valid || !L->fits || !L->max_batch || !(L->tokens_per_s_device > 0)) continue;
        if (!L->feasible && L->bottleneck != FFN_BN_DEVICES) continue;
        if (best < 0 || L->tokens_per_s_device > p->layouts[best].tokens_per_s_device)
            best = (int)i;
    }
    return best;
}

int ffn_plan_disagg_combine(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o,
                            const ffn_plan *prefill, const ffn_plan *decode,
                            const ffn_plan *aggregated, ffn_plan_disagg *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->prefill = out->decode = -1;
    out->aggregated_tokens_per_s_device = NAN;
    if (!m || !hw || !o || !prefill || !decode)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no model, device or plans");
    if (prefill->opts.phase != FFN_PLAN_PREFILL || decode->opts.phase != FFN_PLAN_DECODE)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "disaggregated pools need a prefill plan and a decode plan");
    const double O = (double)(o->output ? o->output : 1);
    if (aggregated && aggregated->best >= 0) {
        const ffn_plan_layout *A = &aggregated->layouts[aggregated->best];
        out->aggregated_tokens_per_s_device = A->tokens_per_s_device;
        /* the aggregated pool's time in prefill steps, per the step model of phase both */
        const double B = (double)A->max_batch, pb = (double)aggregated->opts.prefill_batch;
        const double pre = ceil(B / (pb > 0 ? pb : 1)) * A->ttft_s, dec = O * A->step.step_s;
        out->aggregated_prefill_share = pre + dec > 0 ? pre / (pre + dec) : 0;
    }
    out->prefill = most_per_device(prefill);
    out->decode = most_per_device(decode);
    if (out->prefill < 0 || out->decode < 0) {
        snprintf(out->why, sizeof out->why,
                 "no disaggregated plan: the %s pool has no layout "
                 "that meets its SLO and fits",
                 out->prefill < 0 ? "prefill" : "decode");
        return 0;
    }
    const ffn_plan_layout *P = &prefill->layouts[out->prefill];
    const ffn_plan_layout *D = &decode->layouts[out->decode];
    /* the KV of one prompt, all layers and heads: what the decode pool must receive */
    out->kv_bytes = (double)o->prompt * (double)m->layers *
                    ffn_plan_kv_bytes_per_token_layer(m, o->kv_dtype, 1);
    const ffn_link *l = hw->scaleout.bandwidth_bps > 0 ? &hw->scaleout : &hw->scaleup;
    const uint64_t np = P->tp * P->dp * P->pp, nd = D->tp * D->dp * D->pp;
    const double lanes = (double)(np < nd ? np : nd);
    const double bw = l->bandwidth_bps > 0 ? l->bandwidth_bps * lanes : 0;
    /* the prefill batch: the plan's, or the largest whose prefill and KV transfer together
     * meet the TTFT (the transfer grows with the batch) */
    const ffn_plan_shape sh = {P->tp, P->dp, P->ep, P->pp};
    uint64_t b = P->max_batch;
    double step = P->step.step_s;
#define XFER(n) (bw > 0 ? l->latency_s + (double)(n)*out->kv_bytes / bw : INFINITY)
    if (o->ttft_s > 0 && bw > 0 && step + XFER(b) > o->ttft_s) {
        ffn_plan_step st;
        uint64_t lo = 0, hi = b; /* ok(lo) (or lo = 0: none), !ok(hi) */
        while (hi - lo > 1) {
            const uint64_t mid = lo + (hi - lo) / 2;
            int rc = ffn_plan_step_eval(m, hw, &prefill->opts, FFN_PHASE_PREFILL, &sh, mid,
                                        o->prompt, &st, diag);
            if (rc) return rc;
            if (st.step_s + XFER(mid) <= o->ttft_s)
                lo = mid;
            else
                hi = mid;
        }
        if (lo > 0) {
            int rc = ffn_plan_step_eval(m, hw, &prefill->opts, FFN_PHASE_PREFILL, &sh, lo,
                                        o->prompt, &st, diag);
            if (rc) return rc;
            b = lo;
            step = st.step_s;
        }
    }
    out->prefill_batch = b;
    out->prefill_step_s = step;
    out->kv_transfer_s = XFER(b);
#undef XFER
    out->ttft_s = step + out->kv_transfer_s;
    out->tpot_s = D->step.step_s;
    out->decode_tokens_per_s_device = D->tokens_per_s_device;
    out->prefill_requests_per_s_device = (double)b / step / (double)np;
    /* balanced pools: x output tokens/s need x / O prompts/s; per device of both pools
     * 1 / (1 / decode + 1 / (O x prefill)) */
    const double xd = out->decode_tokens_per_s_device;
    const double xp = O * out->prefill_requests_per_s_device;
    out->tokens_per_s_device = xd * xp / (xd + xp);
    out->prefill_share = xd / (xd + xp);
    out->feasible = isfinite(out->kv_transfer_s) && (!(o->ttft_s > 0) || out->ttft_s <= o->ttft_s);
    if (o->target_tokens_per_s > 0) {
        const double T = o->target_tokens_per_s;
        const uint64_t rd = (uint64_t)ceil(T / D->tokens_per_s_replica);
        const uint64_t rp = (uint64_t)ceil(T / O / ((double)b / step));
        out->decode_devices = (rd ? rd : 1) * nd;
        out->prefill_devices = (rp ? rp : 1) * np;
        out->devices = out->decode_devices + out->prefill_devices;
        if (out->devices > o->max_devices) out->feasible = false;
    }
    const double agg = out->aggregated_tokens_per_s_device;
    out->wins = out->feasible && (!isfinite(agg) || out->tokens_per_s_device > agg);
    if (!out->feasible && isfinite(out->kv_transfer_s) && o->ttft_s > 0 && out->ttft_s > o->ttft_s)
        snprintf(out->why, sizeof out->why,
                 "aggregated: the disaggregated TTFT is %.4g ms (prefill %.4g ms + KV transfer "
                 "%.4g ms), over the %.4g ms SLO",
                 1e3 * out->ttft_s, 1e3 * step, 1e3 * out->kv_transfer_s, 1e3 * o->ttft_s);
    else if (!out->feasible)
        snprintf(out->why, sizeof out->why,
                 "aggregated: the pools need %llu devices, over the "
                 "limit of %llu",
                 (unsigned long long)out->devices, (unsigned long long)o->max_devices);
    else if (!isfinite(agg))
        snprintf(out->why, sizeof out->why,
                 "disaggregated: no aggregated layout meets both SLOs; the pools serve %.4g "
                 "tokens/s per device",
                 out->tokens_per_s_device);
    else if (out->wins)
        snprintf(out->why, sizeof out->why,
                 "disaggregated: %.4g vs %.4g tokens/s per device (x%.3g): decode steps no "
                 "longer wait for prefills (%.0f%% of the aggregated pool's time), each pool at "
                 "its own layout and batch",
                 out->tokens_per_s_device, agg, out->tokens_per_s_device / agg,
                 100.0 * out->aggregated_prefill_share);
    else
        snprintf(out->why, sizeof out->why,
                 "aggregated: %.4g vs %.4g tokens/s per device disaggregated (x%.3g): the "
                 "prefills take only %.0f%% of the aggregated pool's time, less than splitting "
                 "the devices costs",
                 agg, out->tokens_per_s_device, agg / out->tokens_per_s_device,
                 100.0 * out->aggregated_prefill_share);
    return 0;
}
