/* One engine step of a serving replica (include/ffnroof/serve.h, docs/plan.md "Serving"): the
 * token-count parts priced once per token count, the attention of the step's sequences, the
 * LM head, speculative drafts and the engine's overhead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#include "ffnroof/attention.h"
#include "ffnroof/serve.h"

void ffn_serve_ctx_free(ffn_serve_ctx *c)
{
    if (!c) return;
    free(c->gemm_s);
    free(c->comm_s);
    free(c->moe_s);
    c->gemm_s = c->comm_s = c->moe_s = NULL;
}

int ffn_serve_ctx_init(ffn_serve_ctx *c, const ffn_model *m, const ffn_hw *hw,
                       const ffn_plan_opts *plan, const ffn_plan_shape *shape, uint64_t max_tokens,
                       ffn_diag *diag)
{
    memset(c, 0, sizeof *c);
    if (!m || !hw || !plan || !shape || !max_tokens)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no model, device, options or tokens");
    const ffn_plan_shape *s = shape;
    if (!s->tp || !s->dp || !s->ep || !s->pp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "tp, dp, ep and pp must be >= 1");
    if ((s->tp * s->dp) % s->ep)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "EP %llu does not divide TP x DP = %llu",
                            (unsigned long long)s->ep, (unsigned long long)(s->tp * s->dp));
    if (s->pp > m->layers)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "%llu pipeline stages for %llu layers: at most one stage a layer",
                            (unsigned long long)s->pp, (unsigned long long)m->layers);
    if (m->attn.n_heads % s->tp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "TP %llu does not divide the %llu heads",
                            (unsigned long long)s->tp, (unsigned long long)m->attn.n_heads);
    if (ffn_model_moe_layers(m) > 0 && m->moe.n_experts % s->ep)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "EP %llu does not divide the %llu experts", (unsigned long long)s->ep,
                            (unsigned long long)m->moe.n_experts);
    if (ffn_model_params(m, &c->params))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "the model's parameters do not count");
    c->m = m;
    c->hw = hw;
    c->plan = *plan;
    c->shape = *shape;
    c->max_tokens = max_tokens;
    c->layers = (double)m->layers;
    c->gemm_s = malloc((max_tokens + 1) * sizeof *c->gemm_s);
    c->comm_s = malloc((max_tokens + 1) * sizeof *c->comm_s);
    c->moe_s = malloc((max_tokens + 1) * sizeof *c->moe_s);
    if (!c->gemm_s || !c->comm_s || !c->moe_s) {
        ffn_serve_ctx_free(c);
        return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (uint64_t t = 0; t <= max_tokens; t++)
        c->gemm_s[t] = c->comm_s[t] = c->moe_s[t] = NAN;
    /* The KV cache: what memory leaves after the weights and the activation peak of the
     * largest step, on the device holding the most; dp ranks hold sequences of their own. */
    ffn_plan_mem mem;
    /* at a context of 4096 tokens, a whole number of pages of every size in use, so that the
     * bytes per token carry no page rounding (the simulator rounds each request itself) */
    const double ctx_probe = 4096.0;
    int rc =
        ffn_plan_memory(m, &c->params, hw, plan, shape, 1, (uint64_t)ctx_probe, max_tokens, &mem);
    if (rc) {
        ffn_serve_ctx_free(c);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "the memory of the layout does not count");
    }
    c->weight_bytes = mem.weight_bytes;
    const double free_b = mem.usable_bytes - mem.weight_bytes - mem.activation_bytes;
    const double per_token = mem.kv_bytes_per_seq / ctx_probe; /* one token, this device */
    c->fits = free_b > 0;
    c->kv_tokens = free_b > 0 && per_token > 0 ? floor(free_b / per_token) * (double)s->dp : 0;
    const double wb = ffn__plan_other_elem_bytes(plan->wdtype, plan->group_size);
    c->lm_head_w_bytes = ceil((double)m->vocab / (double)s->tp) * (double)m->hidden * wb;
    return 0;
}

/* The token-count parts at T tokens in the step: ffn_plan_step_eval's prefill step of one
 * sequence per device and micro-batch (pp x dp sequences of T / (pp dp) tokens: the FFN and
 * the experts see T / pp tokens, each device's projections its share), less its attention
 * core and LM head, which the step prices from the sequences themselves. */
static int gemm_part(ffn_serve_ctx *c, uint64_t T, ffn_diag *diag)
{
    if (!isnan(c->gemm_s[T])) return 0;
    if (T == 0) {
        c->gemm_s[0] = c->comm_s[0] = c->moe_s[0] = 0;
        return 0;
    }
    const uint64_t per = c->shape.pp * c->shape.dp;
    ffn_plan_step st;
    int rc = ffn_plan_step_eval(c->m, c->hw, &c->plan, FFN_PHASE_PREFILL, &c->shape, per,
                                ffn__ceil_div(T, per), &st, diag);
    if (rc) return rc;
    c->comm_s[T] = st.ffn_comm_s + st.attn_comm_s + st.pp_comm_s;
    c->gemm_s[T] = st.ffn_s + st.attn_proj_s + st.elem_s + st.attn_comm_s + st.pp_comm_s;
    c->moe_s[T] = st.ffn.moe_fused_s;
    if (st.ffn.moe_fused_s > 0) {
        c->moe_p10 = st.ffn.moe_detail.fused_p10;
        c->moe_p90 = st.ffn.moe_detail.fused_p90;
    }
    return 0;
}

int ffn_serve_step_eval(ffn_serve_ctx *c, const ffn_serve_opts *o, const ffn_serve_batch *b,
                        ffn_serve_step *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    const double q = 1.0 + (double)o->spec_tokens;
    const uint64_t T = b->decode_seqs * (1 + (uint64_t)o->spec_tokens) + b->prefill_tokens;
    if (T > c->max_tokens)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "a step of %llu tokens is beyond the %llu priced",
                            (unsigned long long)T, (unsigned long long)c->max_tokens);
    int rc = gemm_part(c, T, diag);
    if (rc) return rc;
    out->gemm_s = c->gemm_s[T];
    out->comm_s = c->comm_s[T];
    const ffn_hw *hw = c->hw;
    const ffn_plan_opts *po = &c->plan;
    const uint64_t seqs = b->decode_seqs + b->prefill_seqs;
    /* sequences split over the pipeline's micro-batches and the DP ranks: one device's share of
     * one micro-batch, which every layer runs (docs/plan.md, "Pipeline stages") */
    const double mb = (double)ffn__plan_micro_batches(c->shape.pp, seqs ? seqs : 1);
    const double share = mb * (double)c->shape.dp;
    /* the layers on the whole context and the ones on the model's sliding window, whose
     * sequences attend to the window's tokens at most */
    double lf, lw;
    ffn_attn_layer_split(c->m, c->layers, &lf, &lw);
    ffn_attn_dims dd, pd, dw, pw;
    if (b->decode_seqs) {
        ffn_attn_dims_of(c->m, hw, c->shape.tp, true, po->kv_dtype, po->adtype, &dd);
        dw = dd;
        dw.window = c->m->attn.window;
        uint64_t n = (uint64_t)ceil((double)b->decode_seqs / share);
        out->attn_s += lf * ffn_attn_decode_s(hw, &dd, n, q, b->decode_ctx / share, NULL);
        if (lw > 0)
            out->attn_s += lw * ffn_attn_decode_s(hw, &dw, n, q, b->decode_ctx / share, NULL);
    }
    if (b->prefill_seqs && b->prefill_tokens) {
        ffn_attn_dims_of(c->m, hw, c->shape.tp, false, po->kv_dtype, po->adtype, &pd);
        pw = pd;
        pw.window = c->m->attn.window;
        uint64_t n = (uint64_t)ceil((double)b->prefill_seqs / share);
        const double qt = (double)b->prefill_tokens / share, pairs = b->prefill_pairs / share;
        out->attn_s += lf * ffn_attn_prefill_s(hw, &pd, n, qt, pairs, NULL);
        if (lw > 0) out->attn_s += lw * ffn_attn_prefill_s(hw, &pw, n, qt, pairs, NULL);
        /* MLA: each chunk's earlier prompt tokens up-projected again from the latent cache
         * (docs/plan.md, "The step time"), a GEMM of the step's */
        if (b->prefill_prefix > 0) {
            double up = 0;
            rc = ffn_plan_mla_prefix_s(c->m, hw, po, c->shape.tp,
                                       (uint64_t)ceil(b->prefill_prefix / share), &up);
            if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "MLA prefix cost failed");
            out->gemm_s += (double)c->layers * up;
            out->prefix_s = (double)c->layers * up;
        }
    }
    /* LM head: logits of every sequence that produces a token (every verified position with
     * speculation), vocabulary split over TP */
    if (b->logits) {
        const double n = ceil((double)b->logits * (b->decode_seqs ? q : 1.0) / share);
        const double D = (double)c->m->hidden, Pv = c->lm_head_w_bytes;
        const double Pe = ceil((double)c->m->vocab / (double)c->shape.tp) * D;
        const double ab = ffn_dtype_bytes(po->adtype, 0);
        out->lm_head_s = ffn_coarse_s(hw, 2.0 * n * Pe, Pv + n * Pe / D * 4.0 + n * D * ab,
                                      ffn_compute_dtype(hw, po->wdtype, po->adtype), 1.0);
    }
    /* Speculative decoding: each draft token runs the draft module (one layer of the model, as
     * DeepSeek-V3's MTP module and EAGLE's head are) and the LM head over the decoding
     * sequences. */
    if (o->spec_tokens && b->decode_seqs) {
        rc = gemm_part(c, b->decode_seqs, diag);
        if (rc) return rc;
        const double n = ceil((double)b->decode_seqs / share);
        const double layer =
            c->gemm_s[b->decode_seqs] / c->layers +
            ffn_attn_decode_s(hw, &dd, (uint64_t)n, 1.0, b->decode_ctx / share, NULL);
        const double head = out->lm_head_s / ceil((double)b->logits * q / share) * n;
        out->draft_s = (double)o->spec_tokens * (layer + head);
    }
    /* the host's share: per step and per running sequence of each engine (a DP rank's own) */
    out->overhead_s =
        o->sched.step_overhead_s + o->sched.seq_overhead_s * (double)seqs / (double)c->shape.dp;
    const double k = o->step_scale > 0 ? o->step_scale : 1.0;
    const double km = o->moe_scale > 0 ? o->moe_scale : k;
    /* the time that grows with the step's linear-layer FLOPs beyond the kernels timed alone:
     * each device's share of 2 T (projections + active FFN weights) at the rate of the device's
     * large GEMMs in the compute dtype, times the engine's flop_overhead (docs/plan.md, "The
     * step time") */
    double flop_s = 0;
    if (o->sched.flop_overhead > 0) {
        const ffn_dtype cd = ffn_compute_dtype(hw, po->wdtype, po->adtype);
        const double pk = hw->peak_flops[cd];
        const double F = 2.0 * (double)T * (double)(c->params.attention + c->params.ffn_active) /
                         (double)(c->shape.tp * c->shape.dp * c->shape.pp);
        if (pk > 0) flop_s = o->sched.flop_overhead * F / (pk * ffn_large_gemm_util(&hw->eff, cd));
    }
    out->flop_s = flop_s * k;
    out->gemm_s = (out->gemm_s - c->moe_s[T]) * k + c->moe_s[T] * km + out->flop_s;
    out->comm_s *= k;
    out->attn_s *= k;
    out->lm_head_s *= k;
    out->draft_s *= k;
    out->step_s = out->gemm_s + out->attn_s + out->lm_head_s + out->draft_s + out->overhead_s;
    return 0;
}
