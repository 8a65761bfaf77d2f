/* Memory per device of a plan's TP x EP layout (include/ffnroof/plan.h, docs/plan.md "Memory
 * per device"): the weight footprint with quantisation scales and zero points, the KV cache
 * (GQA heads split over TP, MLA's latent replicated) and the transient activation peak. Pure: no
 * I/O, no allocation. */
#include <math.h>
#include <string.h>

#include "plan_internal.h"

#include "ffnroof/attention.h"

ffn__attn_shape ffn__plan_attn_shape(const ffn_model *m)
{
    ffn__attn_shape s = {0};
    const ffn_attn_cfg *a = &m->attn;
    s.H = (double)(a->n_heads ? a->n_heads : 1);
    s.Hkv = (double)(a->n_kv_heads ? a->n_kv_heads : a->n_heads ? a->n_heads : 1);
    s.hd = a->head_dim ? (double)a->head_dim : (double)m->hidden / s.H;
    s.mla = a->kv_lora_rank > 0;
    s.lora = (double)a->kv_lora_rank;
    s.rope = (double)a->qk_rope_head_dim;
    s.nope = (double)a->qk_nope_head_dim;
    s.vhd = (double)(a->v_head_dim ? a->v_head_dim : a->qk_nope_head_dim);
    return s;
}

double ffn_plan_kv_bytes_per_token_layer(const ffn_model *m, ffn_dtype kv_dtype, uint64_t tp)
{
    /* the attention core's own count (sim/attention.c): GQA's kv heads split over TP until
     * each device has one, then replicated; MLA's latent and shared rope key */
    ffn_attn_dims d;
    ffn_attn_dims_of(m, NULL, tp, true, kv_dtype, kv_dtype, &d);
    return d.kv_bytes;
}

double ffn__plan_other_elem_bytes(ffn_dtype wdt, unsigned group)
{
    return ffn_dtype_bits(wdt) < 16 ? 2.0 : ffn_dtype_bytes(wdt, group);
}

/* Bytes per FFN weight: gate and up (K = d) and down (K = f) with their scales. */
static double ffn_elem_bytes(ffn_dtype wdt, unsigned group, bool zp, bool gated, uint64_t d,
                             uint64_t f)
{
    const double g = gated ? 2.0 : 1.0;
    return (g * ffn_weight_elem_bytes(wdt, group, zp, d) +
            ffn_weight_elem_bytes(wdt, group, zp, f)) /
           (g + 1.0);
}

/* Parameters of one routed expert (as sim/params.c counts them). */
static double expert_params(const ffn_model *m)
{
    const double g = ffn_act_gated(m->act) ? 2.0 : 1.0, d = (double)m->hidden;
    const double fe = (double)m->moe.expert_intermediate;
    return (g + 1.0) * d * fe + (m->mlp_bias ? g * fe + d : 0.0);
}

/* Transient activation peak of one layer for T tokens on one device (bytes). */
static double activation_peak(const ffn_model *m, const ffn_plan_opts *o, uint64_t tp, uint64_t T,
                              uint64_t seqs)
{
    if (T == 0) return 0;
    ffn_run r;
    ffn_run_default(&r);
    r.wdtype = o->wdtype;
    r.adtype = o->adtype;
    r.tp = tp;
    r.fused = o->fused;
    ffn_act_mem am;
    ffn_activation_memory(m, &r, T, m->layers, &am);
    const ffn__attn_shape s = ffn__plan_attn_shape(m);
    const double ab = ffn_dtype_bytes(o->adtype, 0), Hd = s.H / (double)tp;
    double dqk = s.mla ? s.nope + s.rope : s.hd, dv = s.mla ? s.vhd : s.hd;
    double kvw = s.mla ? Hd * (s.nope + s.vhd) : 2.0 * ceil(s.Hkv / (double)tp) * s.hd;
    /* residual input, Q, K and V, the attention output */
    double attn = (double)T * ab * ((double)m->hidden + Hd * dqk + kvw + Hd * dv);
    /* fp32 logits of the last token of each sequence, vocabulary split over TP */
    double logits = (double)seqs * ceil((double)m->vocab / (double)tp) * 4.0;
    double peak = am.infer_peak_bytes;
    if (attn > peak) peak = attn;
    if (logits > peak) peak = logits;
    return peak;
}

/* Weight bytes per device: attention (but MLA's down-projections, held whole), dense FFNs,
 * shared experts and the embeddings split over the attention's TP degree tp, each routed expert
 * over the experts' TP degree etp and the experts over ep. */
static void footprint(const ffn_model *m, const ffn_params *p, ffn_dtype wdt, unsigned group,
                      bool zero_point, uint64_t tp, uint64_t etp, uint64_t ep, double *ffn_bytes,
                      double *other_bytes)
{
    const double TP = (double)(tp ? tp : 1), ETP = (double)(etp ? etp : 1);
    const double EP = (double)(ep ? ep : 1);
    const bool gated = ffn_act_gated(m->act);
    const uint64_t Lm = ffn_model_moe_layers(m);
    double routed_total = 0, routed_dev = 0;
    if (Lm && m->moe.n_experts) {
        routed_total = (double)Lm * (double)m->moe.n_experts * expert_params(m);
        routed_dev = (double)Lm * ceil((double)m->moe.n_experts / EP) * expert_params(m);
    }
    /* a checkpoint that quantises its routed experts only keeps the rest at 16 bits */
    const bool keep16 = m->quantized_experts_only && ffn_dtype_bits(wdt) < 16;
    const ffn_dtype rdt = keep16 ? FFN_DT_BF16 : wdt;
    const double wb_dense = ffn_elem_bytes(rdt, group, zero_point, gated, m->hidden,
                                           m->intermediate ? m->intermediate : 1);
    const double wb_exp =
        Lm ? ffn_elem_bytes(wdt, group, zero_point, gated, m->hidden,
                            m->moe.expert_intermediate ? m->moe.expert_intermediate : 1)
           : wb_dense;
    /* dense FFNs and shared experts are split over TP and replicated over DP ranks (shared
     * experts at the dense FFN's bytes per weight: the two differ only in the scales' 4 / K) */
    const double dense_dev = ((double)p->ffn - routed_total) / TP;
    *ffn_bytes = dense_dev * wb_dense + routed_dev / ETP * wb_exp;
    const double repl = (double)p->attention_replicated;
    const double attn_dev = ((double)p->attention - repl) / TP + repl;
    const double emb_dev = (double)p->embedding / TP; /* vocabulary-parallel embedding, LM head */
    const double rest = (double)(p->router + p->norm + p->other);
    const double ob = ffn__plan_other_elem_bytes(wdt, group);
    *other_bytes =
        attn_dev * ffn_weight_elem_bytes(rdt, group, zero_point, m->hidden) + (emb_dev + rest) * ob;
}

void ffn_weight_footprint(const ffn_model *m, const ffn_params *p, ffn_dtype wdt, unsigned group,
                          bool zero_point, uint64_t tp, uint64_t ep, double *ffn_bytes,
                          double *other_bytes)
{
    footprint(m, p, wdt, group, zero_point, tp, tp, ep, ffn_bytes, other_bytes);
}

double ffn_plan_reserve_bytes(const ffn_plan_opts *o, const ffn_hw *hw)
{
    if (o->reserve_bytes >= 0) return o->reserve_bytes;
    return hw && hw->kind == FFN_HW_GPU ? FFN_PLAN_GPU_RESERVE : 0.0;
}

int ffn_plan_memory(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                    const ffn_plan_opts *o, const ffn_plan_shape *shape, uint64_t batch,
                    uint64_t context, uint64_t prefill_tokens, ffn_plan_mem *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t tp = shape->tp, dp = shape->dp, ep = shape->ep, pp = shape->pp;
    if (!tp || !dp || !ep || !pp || (tp * dp) % ep) return FFN_EINVAL;
    footprint(m, p, o->wdtype, o->group_size, o->zero_point, tp, ffn_plan_shape_expert_tp(shape),
              ep, &out->ffn_weight_bytes, &out->other_weight_bytes);
    if (pp > 1) {
        /* each stage holds ceil(layers / pp) of the layers; the embedding sits on the first
         * stage and the LM head on the last, so the fullest device holds one of the two */
        const double share = ceil((double)m->layers / (double)pp) / (double)m->layers;
        const double emb = (double)p->embedding / (double)tp *
                           ffn__plan_other_elem_bytes(o->wdtype, o->group_size);
        const double head = m->tied_embeddings ? emb : emb / 2.0;
        out->ffn_weight_bytes *= share;
        out->other_weight_bytes = (out->other_weight_bytes - emb) * share + head;
    }
    out->weight_bytes = out->ffn_weight_bytes + out->other_weight_bytes;
    const uint64_t seqs = ffn__ceil_div(batch, dp);
    const uint64_t layers = ffn__ceil_div(m->layers, pp);
    out->kv_bytes_per_token_layer = ffn_plan_kv_bytes_per_token_layer(m, o->kv_dtype, tp);
    /* the cache is allocated in whole pages of kv_page_tokens tokens */
    const uint64_t page = o->kv_page_tokens > 1 ? o->kv_page_tokens : 1;
    const double cached = (double)(ffn__ceil_div(context, page) * page);
    /* a sliding-window layer caches its window's tokens at most (in whole pages) */
    double lf, lw;
    ffn_attn_layer_split(m, (double)layers, &lf, &lw);
    const double win = m->attn.window
                           ? fmin(cached, (double)(ffn__ceil_div(m->attn.window, page) * page))
                           : cached;
    out->kv_bytes_per_seq = (cached * lf + win * lw) * out->kv_bytes_per_token_layer;
    out->kv_bytes = (double)seqs * out->kv_bytes_per_seq;
    /* decode: one token per sequence of a micro-batch; a prefill-only plan: the prompt (or a
     * chunk) per sequence */
    const uint64_t mseqs =
        ffn__ceil_div(ffn__ceil_div(batch, ffn__plan_micro_batches(pp, batch)), dp);
    uint64_t T = mseqs;
    if (o->phase == FFN_PLAN_PREFILL) {
        uint64_t per = o->chunk && o->chunk < context ? o->chunk : context;
        T = mseqs * per;
    }
    out->activation_bytes = activation_peak(m, o, tp, T, mseqs);
    if (prefill_tokens) {
        double a = activation_peak(m, o, tp, prefill_tokens, o->prefill_batch);
        if (a > out->activation_bytes) out->activation_bytes = a;
    }
    out->total_bytes = out->weight_bytes + out->kv_bytes + out->activation_bytes;
    out->usable_bytes = hw->mem_capacity_bytes * o->mem_utilization - ffn_plan_reserve_bytes(o, hw);
    out->fits = out->total_bytes <= out->usable_bytes;
    return 0;
}
