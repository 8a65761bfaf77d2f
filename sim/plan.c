/* Capacity planning (include/ffnroof/plan.h, docs/plan.md): memory per device of a TP x EP
 * layout, the step time of a decode or prefill step (the FFN from ffn_predict() plus the rest of
 * the layer at a coarser level), the largest batch under the latency SLO, throughput, devices
 * for a target, efficiency per watt and per dollar, and the bottleneck. Pure: no I/O, no
 * allocation. Memory per device is plan_memory.c's.
 *
 * Layout: a replica is tp x ep devices. Attention is data-parallel over the ep ranks (each
 * holds the attention weights and the KV cache of its ceil(B/ep) sequences, as in DeepSeek-V3's
 * serving, arXiv:2412.19437 sec. 3.4) and tensor-parallel over tp within a rank (Megatron-LM,
 * Shoeybi et al. 2019); routed experts are spread over the ep ranks and split over tp. */
#include "plan_internal.h"

#include "ffnroof/attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const bn_names[FFN_BN_COUNT] = {
    "ffn_compute", "ffn_weights", "kv_cache", "attention", "interconnect", "capacity", "devices"};
static const char *const obj_names[FFN_OBJ_COUNT] = {
    "devices", "tokens_per_device", "tokens_per_watt", "tokens_per_dollar", "cost"};
static const char *const phase_names[] = {"decode", "prefill", "both"};

const char *ffn_bottleneck_name(ffn_bottleneck b)
{
    return (unsigned)b < FFN_BN_COUNT ? bn_names[b] : "none";
}

const char *ffn_objective_name(ffn_objective o)
{
    return (unsigned)o < FFN_OBJ_COUNT ? obj_names[o] : "auto";
}

const char *ffn_plan_phase_name(ffn_plan_phase p)
{
    return (unsigned)p <= FFN_PLAN_BOTH ? phase_names[p] : "?";
}

void ffn_plan_shape_name(const ffn_plan_shape *s, char *b, size_t n)
{
    typedef unsigned long long ull;
    int k = 0;
    if (!n) return;
    b[0] = '\0';
    if (s->tp > 1 || (s->dp <= 1 && s->ep <= 1))
        k += snprintf(b + k, n - (size_t)k, "TP%llu", (ull)s->tp);
    if (s->dp > 1 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, "%sDP%llu", k ? "/" : "", (ull)s->dp);
    if (s->ep > 1 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, "%sEP%llu", k ? "/" : "", (ull)s->ep);
    if (s->pp > 1 && (size_t)k < n) snprintf(b + k, n - (size_t)k, "/PP%llu", (ull)s->pp);
}

int ffn_objective_parse(const char *s, ffn_objective *out)
{
    for (int i = 0; i < FFN_OBJ_COUNT; i++)
        if (s && !strcmp(s, obj_names[i])) {
            *out = (ffn_objective)i;
            return 0;
        }
    return FFN_EINVAL;
}

int ffn_plan_phase_parse(const char *s, ffn_plan_phase *out)
{
    for (int i = 0; i <= FFN_PLAN_BOTH; i++)
        if (s && !strcmp(s, phase_names[i])) {
            *out = (ffn_plan_phase)i;
            return 0;
        }
    return FFN_EINVAL;
}

ffn_objective ffn_plan_objective(const ffn_plan_opts *o)
{
    if (o->objective < FFN_OBJ_COUNT) return o->objective;
    return o->target_tokens_per_s > 0 ? FFN_OBJ_DEVICES : FFN_OBJ_TOKENS_PER_DEVICE;
}

void ffn_plan_opts_default(ffn_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->phase = FFN_PLAN_DECODE;
    o->prompt = FFN_DEFAULT_PROMPT;
    o->output = 256;
    o->prefill_batch = 1;
    o->wdtype = o->adtype = o->kv_dtype = FFN_DT_BF16;
    o->group_size = 128;
    o->act_io_dtype = FFN_DT_BF16; /* ffn_run_default's */
    o->fused = true;
    o->moe.seed = 1;
    o->moe.routing_alpha = -1.0; /* the model's */
    o->max_devices = 64;
    o->max_batch = 4096;
    o->mem_utilization = 0.9;
    o->reserve_bytes = -1.0;
    o->kv_page_tokens = 16;
    static const uint64_t tp[] = {1, 2, 4, 8}, ep[] = {1, 2, 4, 8, 16, 32, 64};
    memcpy(o->tp, tp, sizeof tp);
    o->n_tp = 4;
    memcpy(o->dp, ep, sizeof ep);
    o->n_dp = 7;
    memcpy(o->ep, ep, sizeof ep);
    o->n_ep = 7;
    o->n_pp = 0;                  /* auto */
    o->objective = FFN_OBJ_COUNT; /* auto: devices with a target, else tokens per device */
}

/* One projection [T, k] x [k, n] into *t: a linear layer at the run's formats (ffn_linear_ops:
 * the device's fitted GEMMs, the quantisation of its input included), or with bf16 set `inst`
 * 16-bit products batched in one kernel. */
static int proj_s(const ffn_hw *hw, const ffn_run *r, uint64_t T, uint64_t n, uint64_t k,
                  uint64_t inst, bool bf16, double *t)
{
    if (!n || !k) return 0;
    if (bf16) {
        ffn_op op;
        const double ab = ffn_run_act_bytes(r);
        ffn_op_gemm(&op, hw, "proj", T, n, k, inst, ffn_dtype_bytes(FFN_DT_BF16, 0), ab,
                    ffn_compute_dtype(hw, FFN_DT_BF16, FFN_DT_BF16), 0.0);
        *t += op.predicted_s;
        return 0;
    }
    ffn_layer_cost c;
    int rc = ffn_linear_ops(hw, r, T, n, k, &c);
    if (!rc) *t += c.predicted_s;
    return rc;
}

/* One elementwise kernel of `flops` over `bytes` into *t (ffn_predict_elem_s: the device's launch
 * and elementwise bandwidth). */
static void elem_s(const ffn_hw *hw, double flops, double bytes, double *t)
{
    *t += ffn_predict_elem_s(hw, flops, bytes);
}

/* One layer's attention block beyond its core, T tokens on one device of a TP group of tp, as
 * vLLM's model code runs it (models/llama.py, qwen3.py, deepseek_v2.py; layers/layernorm.py,
 * rotary_embedding.py; attention/backends/mla/common.py):
 * *proj: the projections, each a GEMM of its own shape at the weights' format: the fused QKV
 *   (the KV heads repeated where tp exceeds them) and the output projection; MLA: the fused
 *   down-projection to the query and KV latents (held whole on every rank), the query
 *   up-projection, in decode the two absorbed per-head products W_UK and W_UV (16-bit), in
 *   prefill the KV up-projection kv_b instead, and the output projection;
 * *elem: the elementwise kernels the op tables do not time: the residual add and RMSNorm before
 *   the attention and before the FFN (one fused kernel each, reading and writing x and the
 *   residual; one where the two share the input norm), the rotary embedding of q and k (RoPE
 *   models), Qwen3's per-head q and k norms, MLA's query
 *   and KV latent norms. The KV-cache write is in the attention tables' time (their
 *   collector's forward includes it), the FFN's activation in the FFN's ops. */
static int attn_block_s(const ffn_model *m, const ffn_hw *hw, const ffn_run *r, ffn_phase phase,
                        uint64_t tp, uint64_t T, double *proj, double *elem)
{
    *proj = *elem = 0;
    if (!T) return 0;
    const ffn_attn_cfg *a = &m->attn;
    const double ab = ffn_run_act_bytes(r), Tt = (double)T, D = (double)m->hidden;
    const uint64_t H = a->n_heads ? a->n_heads : 1;
    const uint64_t Hr = (H + tp - 1) / tp; /* query heads a rank */
    int rc = 0;
    /* the two fused residual-add + norm kernels (one where attention and FFN share the input
     * norm, GPT-J and NeoX style) */
    for (int i = 0; i < (m->parallel_block ? 1 : 2); i++)
        elem_s(hw, 4.0 * Tt * D, 4.0 * Tt * D * ab, elem);
    const bool rotary = m->pos == FFN_POS_ROPE; /* learned or sinusoidal positions: none */
    if (a->kv_lora_rank) {
        const uint64_t ql = a->q_lora_rank, kl = a->kv_lora_rank, rope = a->qk_rope_head_dim;
        const uint64_t nope = a->qk_nope_head_dim, vhd = a->v_head_dim ? a->v_head_dim : nope;
        if (ql) {
            rc |= proj_s(hw, r, T, ql + kl + rope, m->hidden, 1, false, proj);
            rc |= proj_s(hw, r, T, Hr * (nope + rope), ql, 1, false, proj);
            elem_s(hw, 4.0 * Tt * (double)ql, 2.0 * Tt * (double)ql * ab, elem);
        } else {
            rc |= proj_s(hw, r, T, Hr * (nope + rope), m->hidden, 1, false, proj);
            rc |= proj_s(hw, r, T, kl + rope, m->hidden, 1, false, proj);
        }
        elem_s(hw, 4.0 * Tt * (double)kl, 2.0 * Tt * (double)kl * ab, elem);
        if (phase == FFN_PHASE_DECODE) {
            rc |= proj_s(hw, r, T, kl, nope, Hr, true, proj);
            rc |= proj_s(hw, r, T, vhd, kl, Hr, true, proj);
        } else {
            rc |= proj_s(hw, r, T, Hr * (nope + vhd), kl, 1, false, proj);
        }
        rc |= proj_s(hw, r, T, m->hidden, Hr * vhd, 1, false, proj);
        const double rb = Tt * (double)(Hr + 1) * (double)rope;
        if (rotary) elem_s(hw, 4.0 * rb, 2.0 * rb * ab, elem);
        return rc;
    }
    const uint64_t Hkv = a->n_kv_heads ? a->n_kv_heads : H;
    const uint64_t hd = a->head_dim ? a->head_dim : m->hidden / H;
    const uint64_t Kr = Hkv >= tp ? (Hkv + tp - 1) / tp : 1; /* KV heads a rank */
    rc |= proj_s(hw, r, T, (Hr + 2 * Kr) * hd, m->hidden, 1, false, proj);
    rc |= proj_s(hw, r, T, m->hidden, Hr * hd, 1, false, proj);
    const double qk = Tt * (double)((Hr + Kr) * hd);
    if (rotary) elem_s(hw, 4.0 * qk, 2.0 * qk * ab, elem);
    if (a->qk_norm) {
        elem_s(hw, 4.0 * Tt * (double)(Hr * hd), 2.0 * Tt * (double)(Hr * hd) * ab, elem);
        elem_s(hw, 4.0 * Tt * (double)(Kr * hd), 2.0 * Tt * (double)(Kr * hd) * ab, elem);
    }
    return rc;
}

/* The run of a plan's step in `phase`: the plan's formats, weights placement and on-chip
 * options over ffn_run_default's; the shape's fields are the caller's. */
static void plan_run(const ffn_plan_opts *o, ffn_phase phase, ffn_run *r)
{
    ffn_run_default(r);
    r->phase = phase;
    r->wdtype = o->wdtype;
    r->adtype = o->adtype;
    r->group_size = o->group_size;
    r->zero_point = o->zero_point;
    r->act_io_dtype = o->act_io_dtype;
    r->weights = o->weights;
    r->onchip = o->onchip;
}

/* The attention projections' weight format: 16-bit where the checkpoint quantises its experts
 * only, else the plan's. */
static ffn_dtype proj_wdtype(const ffn_model *m, const ffn_plan_opts *o)
{
    return m->quantized_experts_only && ffn_dtype_bits(o->wdtype) < 16 ? FFN_DT_BF16 : o->wdtype;
}

int ffn_plan_mla_prefix_s(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o, uint64_t tp,
                          uint64_t tokens, double *s)
{
    *s = 0;
    const ffn_attn_cfg *a = &m->attn;
    if (!a->kv_lora_rank || !tokens || !tp) return 0;
    ffn_run r;
    plan_run(o, FFN_PHASE_PREFILL, &r);
    r.batch = 1;
    r.seq = tokens;
    r.wdtype = proj_wdtype(m, o);
    r.tp = tp;
    const uint64_t H = a->n_heads ? a->n_heads : 1, Hr = (H + tp - 1) / tp;
    const uint64_t nope = a->qk_nope_head_dim, vhd = a->v_head_dim ? a->v_head_dim : nope;
    return proj_s(hw, &r, tokens, Hr * (nope + vhd), a->kv_lora_rank, 1, false, s);
}

int ffn_plan_step_eval(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o,
                       ffn_phase phase, const ffn_plan_shape *shape, uint64_t batch,
                       uint64_t context, ffn_plan_step *st, ffn_diag *diag)
{
    memset(st, 0, sizeof *st);
    const uint64_t tp = shape->tp, dp = shape->dp, ep = shape->ep, pp = shape->pp;
    if (!batch || !context || !tp || !dp || !ep || !pp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "batch, context, tp, dp, ep and pp must be >= 1");
    if ((tp * dp) % ep)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "EP %llu does not divide TP x DP = %llu",
                            (unsigned long long)ep, (unsigned long long)(tp * dp));
    const bool moe = ffn_model_moe_layers(m) > 0;
    const uint64_t mb = ffn__plan_micro_batches(pp, batch);
    const uint64_t bmb = ffn__ceil_div(batch, mb);
    ffn_run r;
    plan_run(o, phase, &r);
    r.batch = bmb;
    r.seq = context;
    r.chunk = phase == FFN_PHASE_PREFILL ? o->chunk : 0;
    /* ffn_predict's TP is the experts' for an MoE model (its dense layers are costed again
     * below at the attention's), the attention's for a dense one */
    r.tp = moe ? ffn_plan_shape_expert_tp(shape) : tp;
    r.ep = moe ? ep : 1;
    r.fused = o->fused;
    /* the activation a kernel of its own, as serving engines run it (vLLM's and SGLang's
     * SiluAndMul after the fused gate/up GEMM) */
    r.act_separate = true;
    r.moe = o->moe;
    r.skip_ridge = true;
    int rc = ffn_predict(m, hw, &r, &st->ffn, diag);
    if (rc) return rc;
    r.weights_level = st->ffn.weights_level; /* the dense re-costing below places them alike */
    r.weights_frac = st->ffn.weights_frac;
    const ffn_result *f = &st->ffn;
    const double S = (double)f->steps, L = (double)m->layers;
    const uint64_t seqs = ffn__ceil_div(bmb, dp);
    const uint64_t per_seq =
        phase == FFN_PHASE_DECODE ? 1 : (r.chunk && r.chunk < context ? r.chunk : context);
    const uint64_t T_step = seqs * per_seq; /* tokens per step on one device (attention) */
    st->phase = phase;
    st->batch = batch;
    st->micro_batches = mb;
    st->seqs_device = seqs;
    st->context = context;
    st->ffn_s = f->predicted_s;
    st->ffn_comm_s = f->comm_s;
    double cs = S * ((double)f->dense_layers * f->dense.compute_s +
                     (double)f->moe_layers * f->moe.compute_s);
    double ms =
        S * ((double)f->dense_layers * f->dense.memory_s + (double)f->moe_layers * f->moe.memory_s);
    if (moe && f->dense_layers && (dp > 1 || ep > 1 || r.tp != tp)) {
        /* The dense FFN layers of an MoE model run like the attention: tensor-parallel over tp,
         * each DP rank on its own tokens (ffn_predict gave them the experts' layout). */
        ffn_layer_cost lc;
        r.tp = tp;
        r.ep = 1;
        rc = ffn_dense_layer(hw, &r, m->hidden, m->intermediate, m->act, m->mlp_bias, T_step, &lc);
        if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "dense layer cost failed");
        double Ld = (double)f->dense_layers;
        st->ffn_s += S * Ld * (lc.predicted_s - f->dense.predicted_s);
        st->ffn_comm_s += S * Ld * (lc.comm_s - f->dense.comm_s);
        cs += S * Ld * (lc.compute_s - f->dense.compute_s);
        ms += S * Ld * (lc.memory_s - f->dense.memory_s);
    }
    st->ffn_bound = cs >= ms ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;

    const double ab = ffn_dtype_bytes(o->adtype, 0);
    const double TP = (double)tp, D = (double)m->hidden, Tq = (double)T_step;
    const double Bs = (double)seqs, ctx = (double)context;
    const ffn_dtype cdt = ffn_compute_dtype(hw, o->wdtype, o->adtype);

    /* The attention block's projections as GEMMs and its elementwise kernels, one layer
     * (attn_block_s; docs/plan.md, "Step time"). */
    double proj = 0, elem = 0;
    {
        ffn_run pr = r;
        pr.wdtype = proj_wdtype(m, o);
        rc = attn_block_s(m, hw, &pr, phase, tp, T_step, &proj, &elem);
        if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "attention projection cost failed");
    }
    st->attn_proj_s = S * L * proj;
    st->elem_s = S * L * elem;

    ffn_attn_dims ad, aw_d;
    ffn_attn_dims_of(m, hw, tp, phase == FFN_PHASE_DECODE, o->kv_dtype, o->adtype, &ad);
    aw_d = ad;
    aw_d.window = m->attn.window;
    double Lf, Lw; /* layers on the whole context, layers on the sliding window */
    ffn_attn_layer_split(m, L, &Lf, &Lw);
    ffn_attn_work aw, ww = {0};
    if (phase == FFN_PHASE_DECODE) {
        /* each sequence's new token attends to `context` cached tokens (a window layer's: its
         * window's at most) */
        st->attn_core_s = Lf * ffn_attn_decode_s(hw, &ad, seqs, 1.0, Bs * ctx, &aw);
        if (Lw > 0) st->attn_core_s += Lw * ffn_attn_decode_s(hw, &aw_d, seqs, 1.0, Bs * ctx, &ww);
        const double wctx = m->attn.window ? fmin(ctx, (double)m->attn.window) : ctx;
        st->kv_read_bytes = (Lf * ctx + Lw * wctx) * Bs * ad.kv_bytes;
    } else {
        /* the whole prompt, causal (S^2 / 2 pairs), over the step's chunks: one launch each */
        st->attn_core_s =
            Lf * ffn_attn_prefill_s(hw, &ad, seqs, Bs * ctx, Bs * ctx * ctx / 2.0, &aw) +
            L * (S - 1.0) * hw->eff.launch_s;
        if (Lw > 0)
            st->attn_core_s +=
                Lw * ffn_attn_prefill_s(hw, &aw_d, seqs, Bs * ctx, Bs * ctx * ctx / 2.0, &ww);
    }
    st->attn_core_flops = Lf * aw.flops + Lw * ww.flops;
    if (tp > 1) {
        /* Megatron: the attention output is summed over the TP ranks with one all-reduce. */
        ffn_op op;
        ffn_op_allreduce(&op, &hw->scaleup, "attn_allreduce", Tq * D * ab, tp);
        st->attn_comm_s = S * L * op.predicted_s;
    }
    /* LM head: logits of the last token of each sequence, vocabulary split over TP. */
    {
        double Pv = ceil((double)m->vocab / TP) * D;
        st->lm_head_s = ffn_coarse_s(hw, 2.0 * Bs * Pv,
                                     Pv * ffn__plan_other_elem_bytes(o->wdtype, o->group_size) +
                                         Bs * Pv / D * 4.0 + Bs * D * ab,
                                     cdt, 1.0);
    }
    if (pp > 1) {
        /* each hop sends the micro-batch's activations (T_step x d per device) to the next
         * stage, over the scale-out network when the replica spans more than a node */
        const uint64_t dpn = hw->devices_per_node ? hw->devices_per_node : 1;
        const ffn_link *l = ffn_plan_shape_devices(shape) > dpn && hw->scaleout.bandwidth_bps > 0
                                ? &hw->scaleout
                                : &hw->scaleup;
        const double bytes = Tq * D * ab;
        const double hop = l->latency_s + bytes / (l->bandwidth_bps > 0 ? l->bandwidth_bps : 1.0);
        st->pp_comm_s = S * (double)(pp - 1) * hop;
        st->pp_bubble = 1.0 - (double)mb / (double)pp;
    }
    st->step_s = st->ffn_s + st->attn_proj_s + st->elem_s + st->attn_core_s + st->attn_comm_s +
                 st->lm_head_s + st->pp_comm_s;
    st->ffn_share = st->step_s > 0 ? st->ffn_s / st->step_s : 0;
    /* The range of the step and, with --margin p90, its pessimistic end as the time to size
     * against: every part scaled by the device's p90 ratio (the attention and LM-head parts use
     * the same efficiency model as the FFN), the engine's fused-MoE kernels (sim/moe.c) by
     * their family's. */
    double p10, p90;
    st->range_default = ffn_hw_unc_range_dt(hw, o->wdtype, &p10, &p90);
    /* what the fused kernels' own range adds to the device's (ffn_predict's range) */
    const double d10 = st->ffn.predicted_p10_s - st->ffn.predicted_s * p10,
                 d90 = st->ffn.predicted_p90_s - st->ffn.predicted_s * p90;
    st->step_p10_s = st->step_s * p10 + d10;
    st->step_p90_s = st->step_s * p90 + d90;
    st->margin_scale = 1.0;
    if (o->margin == FFN_MARGIN_P90) {
        st->margin_scale = st->step_s > 0 ? st->step_p90_s / st->step_s : p90;
        st->ffn_s = st->ffn_s * p90 + d90;
        st->ffn_comm_s *= p90;
        st->attn_proj_s *= p90;
        st->elem_s *= p90;
        st->attn_core_s *= p90;
        st->attn_comm_s *= p90;
        st->lm_head_s *= p90;
        st->pp_comm_s *= p90;
        st->step_s = st->step_p90_s;
    }
    return 0;
}

/* The part of a step that takes longest, as a bottleneck. */
static ffn_bottleneck dominant(const ffn_plan_step *st)
{
    double ffn_local = st->ffn_s - st->ffn_comm_s;
    double comm = st->ffn_comm_s + st->attn_comm_s + st->pp_comm_s;
    double kv = st->phase == FFN_PHASE_DECODE ? st->attn_core_s : 0;
    double attn = st->attn_proj_s + st->elem_s + st->lm_head_s +
                  (st->phase == FFN_PHASE_DECODE ? 0 : st->attn_core_s);
    ffn_bottleneck b = st->ffn_bound == FFN_BOUND_COMPUTE ? FFN_BN_FFN_COMPUTE : FFN_BN_FFN_WEIGHTS;
    double best = ffn_local;
    if (kv > best) best = kv, b = FFN_BN_KV_CACHE;
    if (attn > best) best = attn, b = FFN_BN_ATTENTION;
    if (comm > best) b = FFN_BN_INTERCONNECT;
    return b;
}

static double nan_low(double v)
{
    return isnan(v) ? -INFINITY : v;
}

static double nan_high(double v)
{
    return isnan(v) ? INFINITY : v;
}

bool ffn_plan_better(const ffn_plan_layout *a, const ffn_plan_layout *b, ffn_objective obj)
{
    double x, y;
    switch (obj) {
    case FFN_OBJ_DEVICES:
        if (a->devices != b->devices) return a->devices < b->devices;
        x = a->tokens_per_s_device, y = b->tokens_per_s_device;
        break;
    case FFN_OBJ_TOKENS_PER_WATT:
        x = nan_low(a->tokens_per_s_per_watt), y = nan_low(b->tokens_per_s_per_watt);
        break;
    case FFN_OBJ_TOKENS_PER_DOLLAR:
        x = nan_low(a->tokens_per_dollar), y = nan_low(b->tokens_per_dollar);
        break;
    case FFN_OBJ_COST:
        /* dollars per million of the tokens asked for: with a target every fleet serves the
         * target, so this is the cheapest fleet per hour; a layout without a price loses */
        x = -nan_high(a->usd_per_mtok), y = -nan_high(b->usd_per_mtok);
        break;
    default:
        x = a->tokens_per_s_device, y = b->tokens_per_s_device;
        break;
    }
    if (x != y) return x > y;
    if (a->devices != b->devices) return a->devices < b->devices;
    if (a->tokens_per_s_device != b->tokens_per_s_device)
        return a->tokens_per_s_device > b->tokens_per_s_device;
    /* the simpler layout: fewer devices per replica, then fewer stages, then less DP */
    const uint64_t da = a->tp * a->dp * a->pp, db = b->tp * b->dp * b->pp;
    if (da != db) return da < db;
    if (a->pp != b->pp) return a->pp < b->pp;
    return a->dp < b->dp;
}

/* Why a layout cannot exist at all; "" when it can. The shapes EP does not divide, or that need
 * more devices than the limit for one replica, are not listed at all (ffn_plan_evaluate). */
static void check_layout(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o,
                         const ffn_plan_shape *sh, char *why, size_t n)
{
    why[0] = '\0';
    const uint64_t tp = sh->tp, dp = sh->dp, ep = sh->ep, pp = sh->pp;
    const uint64_t E = m->moe.n_experts, N = tp * dp, etp = ffn_plan_shape_expert_tp(sh);
    const uint64_t dpn = hw->devices_per_node ? hw->devices_per_node : 1;
    const bool link = hw->scaleup.bandwidth_bps > 0 || hw->scaleout.bandwidth_bps > 0;
    typedef unsigned long long ull;
    if (tp > 1 && hw->scaleup.bandwidth_bps <= 0)
        snprintf(why, n, "TP %llu needs an interconnect; %s has none", (ull)tp, hw->name);
    else if (tp > dpn)
        snprintf(why, n, "TP %llu spans more than the %llu devices of a node", (ull)tp, (ull)dpn);
    else if (m->attn.n_heads % tp)
        snprintf(why, n, "TP %llu does not divide the %llu heads", (ull)tp, (ull)m->attn.n_heads);
    else if (m->layers > ffn_model_moe_layers(m) && m->intermediate % tp)
        snprintf(why, n, "TP %llu does not divide the intermediate size %llu", (ull)tp,
                 (ull)m->intermediate);
    else if (pp > m->layers)
        snprintf(why, n, "PP %llu: more stages than the %llu layers", (ull)pp, (ull)m->layers);
    else if (pp > 1 && !link)
        snprintf(why, n, "PP %llu needs an interconnect; %s has none", (ull)pp, hw->name);
    else if (!E && (dp > 1 || ep > 1))
        snprintf(why, n, "%s %llu: a dense model takes replicas, not attention DP or EP",
                 dp > 1 ? "DP" : "EP", (ull)(dp > 1 ? dp : ep));
    else if (ep > 1 && ep > E)
        snprintf(why, n, "EP %llu exceeds the %llu experts", (ull)ep, (ull)E);
    else if (ep > 1 && E % ep && !o->moe.ep_uneven)
        snprintf(why, n, "EP %llu does not divide the %llu experts", (ull)ep, (ull)E);
    else if (E && m->moe.expert_intermediate % etp)
        snprintf(why, n,
                 "the experts' TP %llu (TP x DP / EP) does not divide their intermediate "
                 "size %llu",
                 (ull)etp, (ull)m->moe.expert_intermediate);
    else if ((ep > 1 || dp > 1) && !link)
        snprintf(why, n, "%s %llu needs an interconnect; %s has none", ep > 1 ? "EP" : "DP",
                 (ull)(ep > 1 ? ep : dp), hw->name);
    else if (N * pp > dpn && hw->scaleout.bandwidth_bps <= 0)
        snprintf(why, n,
                 "%llu devices per replica span more than a node of %llu, and %s has no "
                 "network across nodes (network: in its spec)",
                 (ull)(N * pp), (ull)dpn, hw->name);
}

static uint64_t decode_context(const ffn_plan_opts *o)
{
    return o->phase == FFN_PLAN_PREFILL ? o->prompt : o->prompt + o->output;
}

/* Memory check at a batch for this plan's phase. */
static bool fits_at(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                    const ffn_plan_opts *o, const ffn_plan_shape *sh, uint64_t B, ffn_plan_mem *mem)
{
    uint64_t pre = 0;
    if (o->phase == FFN_PLAN_BOTH) {
        uint64_t per = o->chunk && o->chunk < o->prompt ? o->chunk : o->prompt;
        pre = ffn__ceil_div(o->prefill_batch, sh->dp) * per;
    }
    ffn_plan_mem tmp;
    if (!mem) mem = &tmp;
    ffn_plan_memory(m, p, hw, o, sh, B, decode_context(o), pre, mem);
    return mem->fits;
}

static void evaluate_layout(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                            const ffn_plan_opts *o, ffn_plan_layout *L)
{
    static const ffn_diag no_diag;
    ffn_diag d = no_diag;
    const ffn_plan_shape shape = {L->tp, L->dp, L->ep, L->pp}, *sh = &shape;
    const ffn_phase ph = o->phase == FFN_PLAN_PREFILL ? FFN_PHASE_PREFILL : FFN_PHASE_DECODE;
    const uint64_t ctx = decode_context(o);
    const double slo = ph == FFN_PHASE_PREFILL ? o->ttft_s : o->tpot_s;
    const char *slo_name = ph == FFN_PHASE_PREFILL ? "TTFT" : "TPOT";
    L->tokens_per_s_per_watt = L->tokens_per_dollar = L->usd_per_hour = L->usd_per_mtok = NAN;
    L->replicas = 1;
    L->devices = ffn_plan_shape_devices(sh);

    /* 1. memory at batch 1, then the largest batch that fits (memory grows with the batch) */
    L->fits = fits_at(m, p, hw, o, sh, 1, &L->mem);
    if (!L->fits) {
        L->bottleneck = FFN_BN_CAPACITY;
        L->miss = L->mem.total_bytes / L->mem.usable_bytes;
        snprintf(L->why, sizeof L->why, "needs %.4g GB/device at batch 1 (%.4g usable)",
                 L->mem.total_bytes / 1e9, L->mem.usable_bytes / 1e9);
        (void)ffn_plan_step_eval(m, hw, o, ph, sh, 1, ctx, &L->step, &d);
        return;
    }
    uint64_t lo = 1, hi = o->max_batch;
    if (!fits_at(m, p, hw, o, sh, hi, NULL)) {
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (fits_at(m, p, hw, o, sh, mid, NULL))
                lo = mid;
            else
                hi = mid;
        }
        hi = lo;
    }
    L->mem_batch = hi;

    /* 2. the prefill (TTFT) of the serving phases */
    if (o->phase != FFN_PLAN_PREFILL) {
        ffn_plan_step pre;
        if (ffn_plan_step_eval(m, hw, o, FFN_PHASE_PREFILL, sh, o->prefill_batch, o->prompt, &pre,
                               &d)) {
            L->valid = false;
            snprintf(L->why, sizeof L->why, "%.190s", d.msg);
            return;
        }
        L->ttft_s = pre.step_s;
        if (o->ttft_s > 0 && pre.step_s > o->ttft_s) {
            L->bottleneck = dominant(&pre);
            L->miss = pre.step_s / o->ttft_s;
            snprintf(L->why, sizeof L->why, "TTFT of a %llu-sequence prefill is %.4g ms > %.4g ms",
                     (unsigned long long)o->prefill_batch, 1e3 * pre.step_s, 1e3 * o->ttft_s);
            L->step = pre;
            return;
        }
    }

    /* 3. the largest batch meeting the SLO: binary search, the step time grows with the batch */
    ffn_plan_step *st = &L->step;
    if (ffn_plan_step_eval(m, hw, o, ph, sh, 1, ctx, st, &d)) {
        L->valid = false;
        snprintf(L->why, sizeof L->why, "%.190s", d.msg);
        return;
    }
    if (slo > 0 && st->step_s > slo) {
        L->bottleneck = dominant(st);
        L->miss = st->step_s / slo;
        snprintf(L->why, sizeof L->why, "%s at batch 1 is %.4g ms > %.4g ms (%s)", slo_name,
                 1e3 * st->step_s, 1e3 * slo, ffn_bottleneck_name(L->bottleneck));
        return;
    }
    uint64_t B = L->mem_batch;
    if (slo > 0 && B > 1) {
        ffn_plan_step *probe = &(ffn_plan_step){0};
        ffn_plan_step_eval(m, hw, o, ph, sh, B, ctx, probe, &d);
        if (probe->step_s > slo) {
            uint64_t a = 1, b = B; /* step(a) <= slo < step(b) */
            while (b - a > 1) {
                uint64_t mid = a + (b - a) / 2;
                ffn_plan_step_eval(m, hw, o, ph, sh, mid, ctx, probe, &d);
                if (probe->step_s <= slo)
                    a = mid;
                else
                    b = mid;
            }
            B = a;
        }
    }
    L->max_batch = B;
    if (B > 1) ffn_plan_step_eval(m, hw, o, ph, sh, B, ctx, st, &d);
    fits_at(m, p, hw, o, sh, B, &L->mem);
    if (ph == FFN_PHASE_PREFILL) L->ttft_s = st->step_s;
    /* Memory stopped the batch unless the SLO would have stopped it there too. */
    bool mem_bound = B == L->mem_batch && B < o->max_batch;
    if (mem_bound && slo > 0) {
        ffn_plan_step *probe = &(ffn_plan_step){0};
        if (!ffn_plan_step_eval(m, hw, o, ph, sh, B + 1, ctx, probe, &d) && probe->step_s > slo)
            mem_bound = false;
    }
    L->bottleneck = mem_bound ? FFN_BN_CAPACITY : dominant(st);

    /* 4. throughput, replicas for the target, efficiency */
    double tps;
    if (o->phase == FFN_PLAN_PREFILL)
        tps = (double)B * (double)o->prompt / st->step_s;
    else if (o->phase == FFN_PLAN_DECODE)
        tps = (double)B / st->step_s;
    else /* each of the B sequences is prefilled once per O decode steps */
        tps = (double)B * (double)o->output /
              ((double)o->output * st->step_s +
               (double)ffn__ceil_div(B, o->prefill_batch) * L->ttft_s);
    L->tokens_per_s_replica = tps;
    L->tokens_per_s_device = tps / (double)ffn_plan_shape_devices(sh);
    if (o->target_tokens_per_s > 0) {
        double r = ceil(o->target_tokens_per_s / tps);
        L->replicas = r < 1 ? 1 : r > 1e15 ? (uint64_t)1e15 : (uint64_t)r;
    }
    L->devices = L->replicas * ffn_plan_shape_devices(sh);
    L->tokens_per_s_fleet = tps * (double)L->replicas;
    if (hw->tdp_w > 0)
        L->tokens_per_s_per_watt = L->tokens_per_s_fleet / ((double)L->devices * hw->tdp_w);
    if (o->price_per_hour > 0) {
        /* the tokens asked for: a fleet sized for a target serves the target, and its spare
         * capacity earns nothing */
        const double asked =
            o->target_tokens_per_s > 0 && o->target_tokens_per_s < L->tokens_per_s_fleet
                ? o->target_tokens_per_s
                : L->tokens_per_s_fleet;
        L->usd_per_hour = (double)L->devices * o->price_per_hour;
        L->tokens_per_dollar = asked * 3600.0 / L->usd_per_hour;
        L->usd_per_mtok = 1e6 / L->tokens_per_dollar;
    }
    if (L->devices > o->max_devices) {
        L->bottleneck = FFN_BN_DEVICES;
        L->miss = (double)L->devices / (double)o->max_devices;
        snprintf(L->why, sizeof L->why, "the target needs %llu devices, over the limit of %llu",
                 (unsigned long long)L->devices, (unsigned long long)o->max_devices);
        return;
    }
    L->feasible = true;
}

int ffn_plan_evaluate(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o, ffn_plan *out,
                      ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->best = out->closest = -1;
    if (!m || !hw || !o) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no model/hw/options");
    if (o->max_devices == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "the device limit is 0: a plan needs at least one device");
    if (o->n_tp == 0 || o->n_tp > FFN_PLAN_MAX_DEGREES || o->n_ep > FFN_PLAN_MAX_DEGREES ||
        o->n_dp > FFN_PLAN_MAX_DEGREES || o->n_pp > FFN_PLAN_MAX_DEGREES)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no TP degrees to consider");
    if (o->max_batch == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "max_batch must be >= 1");
    if (o->prompt == 0) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "prompt must be >= 1");
    if (o->phase != FFN_PLAN_PREFILL && o->output == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "output must be >= 1 for decode");
    if (!(o->mem_utilization > 0 && o->mem_utilization <= 1))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "memory utilization must be in (0, 1]");
    if (o->prefill_batch == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "prefill_batch must be >= 1");
    if (ffn_model_params(m, &out->params))
        return ffn_diag_set(diag, FFN_EOVERFLOW, NULL, 0, 0, "parameter count overflows");
    out->model = m;
    out->hw = hw;
    out->opts = *o;
    {
        ffn_plan_mem all;
        const ffn_plan_shape one_device = {1, 1, 1, 1};
        if (!ffn_plan_memory(m, &out->params, hw, o, &one_device, 1, 1, 0, &all)) {
            out->weight_bytes_all = all.weight_bytes;
            out->devices_for_weights =
                all.usable_bytes > 0 ? (uint64_t)ceil(all.weight_bytes / all.usable_bytes) : 0;
        }
    }
    out->opts.objective = ffn_plan_objective(o);
    static const uint64_t one = 1;
    const bool moe = m->moe.n_experts > 0;
    const uint64_t *dps = moe && o->n_dp ? o->dp : &one, *eps = moe && o->n_ep ? o->ep : &one;
    const size_t n_dp = moe && o->n_dp ? o->n_dp : 1, n_ep = moe && o->n_ep ? o->n_ep : 1;
    /* pipeline stages: as asked, else one, and where the weights alone need more devices than
     * a node holds (an SRAM-first device), the powers of two up to the stages that spread them
     * over nodes of devices */
    uint64_t auto_pp[FFN_PLAN_MAX_DEGREES] = {1};
    size_t n_auto_pp = 1;
    {
        const uint64_t dpn = hw->devices_per_node ? hw->devices_per_node : 1;
        const uint64_t need = ffn__ceil_div(out->devices_for_weights, dpn);
        for (uint64_t s = 2; need > 1 && n_auto_pp < FFN_PLAN_MAX_DEGREES && s <= m->layers;
             s *= 2) {
            auto_pp[n_auto_pp++] = s;
            if (s >= need) break;
        }
    }
    const uint64_t *pps = o->n_pp ? o->pp : auto_pp;
    const size_t n_pp = o->n_pp ? o->n_pp : n_auto_pp;
    for (size_t a = 0; a < o->n_tp; a++)
        for (size_t b = 0; b < n_dp; b++)
            for (size_t c = 0; c < n_ep; c++)
                for (size_t e = 0; e < n_pp; e++) {
                    const ffn_plan_shape sh = {o->tp[a], dps[b], eps[c], pps[e]};
                    /* shapes that cannot exist by arithmetic, or need more devices than the
                     * limit for one replica, are not listed */
                    if (!sh.tp || !sh.dp || !sh.ep || !sh.pp || (sh.tp * sh.dp) % sh.ep ||
                        ffn_plan_shape_devices(&sh) > o->max_devices)
                        continue;
                    if (out->n_layouts == FFN_PLAN_MAX_LAYOUTS)
                        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                                            "more than %d layouts to consider: give fewer "
                                            "TP, DP, EP or PP degrees",
                                            FFN_PLAN_MAX_LAYOUTS);
                    ffn_plan_layout *L = &out->layouts[out->n_layouts++];
                    L->tp = sh.tp;
                    L->dp = sh.dp;
                    L->ep = sh.ep;
                    L->pp = sh.pp;
                    L->devices = ffn_plan_shape_devices(&sh);
                    L->replicas = 1;
                    L->tokens_per_s_per_watt = L->tokens_per_dollar = L->usd_per_hour =
                        L->usd_per_mtok = NAN;
                    check_layout(m, hw, &out->opts, &sh, L->why, sizeof L->why);
                    if (L->why[0]) continue;
                    L->valid = true;
                    evaluate_layout(m, &out->params, hw, &out->opts, L);
                }
    for (size_t i = 0; i < out->n_layouts; i++) {
        const ffn_plan_layout *L = &out->layouts[i];
        if (L->feasible) {
            if (out->best < 0 || ffn_plan_better(L, &out->layouts[out->best], out->opts.objective))
                out->best = (int)i;
        } else if (L->valid && L->miss > 0) {
            /* a layout that holds the model is closer than one that does not */
            const ffn_plan_layout *c = out->closest >= 0 ? &out->layouts[out->closest] : NULL;
            if (!c || (L->fits && !c->fits) || (L->fits == c->fits && L->miss < c->miss))
                out->closest = (int)i;
        }
    }
    return 0;
}
