/* The attention core of a layer (include/ffnroof/attention.h, docs/model.md "Attention"): the
 * work of a decode or prefill call, costed by the device's fitted attention kernels where its
 * spec has them (hw->attn, fitted by sim/attn_fit.c), else by the coarse roofline. */
#include "ffnroof/attention.h"

#include <math.h>
#include <string.h>

#include "ffnroof/sim.h"

double ffn_coarse_s(const ffn_hw *hw, double flops, double bytes, ffn_dtype cdt, double launches)
{
    double cmax = hw->eff.compute_max > 0 ? hw->eff.compute_max : 1.0;
    double mmax = hw->eff.memory_max > 0 ? hw->eff.memory_max : 1.0;
    double tc = flops / (ffn_peak_flops(hw, cdt) * cmax);
    double tm = bytes / ((hw->mem_bandwidth_bps > 0 ? hw->mem_bandwidth_bps : 1.0) * mmax);
    return (tc > tm ? tc : tm) + launches * hw->eff.launch_s;
}

void ffn_attn_dims_of(const ffn_model *m, const ffn_hw *hw, uint64_t tp, bool decode,
                      ffn_dtype kv_dtype, ffn_dtype adtype, ffn_attn_dims *d)
{
    memset(d, 0, sizeof *d);
    const ffn_attn_cfg *a = &m->attn;
    const double TP = (double)(tp ? tp : 1);
    const double H = (double)(a->n_heads ? a->n_heads : 1);
    const double Hkv = (double)(a->n_kv_heads ? a->n_kv_heads : a->n_heads ? a->n_heads : 1);
    const double hd = a->head_dim ? (double)a->head_dim : (double)m->hidden / H;
    const double kvb = ffn_dtype_bytes(kv_dtype, 0);
    d->heads = H / TP;
    d->mla = a->kv_lora_rank > 0;
    if (d->mla) {
        /* Decode runs in the absorbed form over the latent (DeepSeek-V2, arXiv:2405.04434 sec.
         * 2.1.2-2.1.3): scores over kv_lora + rope, values over kv_lora; prefill expands the
         * latent into per-head keys (nope + rope) and values. */
        const double lora = (double)a->kv_lora_rank, rope = (double)a->qk_rope_head_dim;
        const double nope = (double)a->qk_nope_head_dim;
        const double vhd = (double)(a->v_head_dim ? a->v_head_dim : a->qk_nope_head_dim);
        d->kv_heads = 1;
        d->qk_dim = decode ? lora + rope : nope + rope;
        d->v_dim = decode ? lora : vhd;
        d->kv_bytes = (lora + rope) * kvb; /* the compressed latent + the shared rope key */
    } else {
        /* K and V of the kv heads this device holds: split over TP until each device has
         * one, then replicated. */
        d->kv_heads = ceil(Hkv / TP);
        d->qk_dim = d->v_dim = hd;
        d->kv_bytes = 2.0 * d->kv_heads * hd * kvb;
    }
    d->act_bytes = ffn_dtype_bytes(adtype, 0);
    d->kv_dtype = kv_dtype;
    d->compute_dt = hw ? ffn_compute_dtype(hw, adtype, adtype) : adtype;
}

ffn_attn_kv ffn_attn_kv_class(ffn_dtype kv_dtype)
{
    return ffn_dtype_bytes(kv_dtype, 0) <= 1.0 ? FFN_ATTN_KV8 : FFN_ATTN_KV16;
}

/* The fitted kernel of a phase for a cache dtype: its own class's, else the 16-bit class's; NULL
 * when the spec fitted neither. */
static const ffn_attn_eff *fitted(const ffn_hw *hw, bool decode, ffn_dtype kv_dtype)
{
    const ffn_attn_eff *e = decode ? hw->attn.decode : hw->attn.prefill;
    const ffn_attn_kv kv = ffn_attn_kv_class(kv_dtype);
    if (e[kv].fitted) return &e[kv];
    return e[FFN_ATTN_KV16].fitted ? &e[FFN_ATTN_KV16] : NULL;
}

bool ffn_attn_range(const ffn_hw *hw, bool decode, ffn_dtype kv_dtype, double *p10, double *p90)
{
    const ffn_attn_eff *e = fitted(hw, decode, kv_dtype);
    if (!e) {
        ffn_hw_unc_range(hw, p10, p90);
        return false;
    }
    *p10 = e->p10;
    *p90 = e->p90;
    return true;
}

static double bw_of(const ffn_hw *hw)
{
    return hw->mem_bandwidth_bps > 0 ? hw->mem_bandwidth_bps : 1.0;
}

double ffn_attn_decode_s(const ffn_hw *hw, const ffn_attn_dims *d, uint64_t seqs, double q_per_seq,
                         double ctx_sum, ffn_attn_work *w)
{
    if (q_per_seq < 1) q_per_seq = 1;
    if (d->window > 0 && ctx_sum > (double)seqs * (double)d->window)
        ctx_sum = (double)seqs * (double)d->window;
    /* Each new token attends to its sequence's cached tokens: QK^T and PV are 2 FLOPs per
     * multiply-add; the caches are read once, the queries and outputs once. */
    const double per = d->heads * (d->qk_dim + d->v_dim);
    ffn_attn_work k = {
        .flops = q_per_seq * ctx_sum * 2.0 * per,
        .bytes = ctx_sum * d->kv_bytes + (double)seqs * q_per_seq * per * d->act_bytes,
    };
    if (w) *w = k;
    if (!seqs || !(ctx_sum > 0)) return 0.0;
    const ffn_attn_eff *e = fitted(hw, true, d->kv_dtype);
    if (!e) return ffn_coarse_s(hw, k.flops, k.bytes, d->compute_dt, 1.0);
    /* The fitted kernel (docs/model.md, "Attention"): a fixed cost, a cost per sequence and per
     * (sequence, KV head) work item (the split-KV blocks' set-up and combine), and the roofline
     * of its KV stream and its dot products at the fitted fractions. */
    const double S = (double)seqs;
    const double tc = k.flops / (ffn_peak_flops(hw, d->compute_dt) * e->compute_max);
    const double tm = k.bytes / (bw_of(hw) * e->memory_max);
    return e->launch_s + e->seq_s * S + e->unit_s * S * d->kv_heads + (tc > tm ? tc : tm);
}

double ffn_attn_prefill_s(const ffn_hw *hw, const ffn_attn_dims *d, uint64_t seqs, double q_tokens,
                          double pairs, ffn_attn_work *w)
{
    if (d->window > 0 && pairs > q_tokens * (double)d->window) pairs = q_tokens * (double)d->window;
    /* Causal self-attention, FlashAttention-style (the scores never reach memory): QK^T and PV
     * are one multiply-add per scored pair, head and dimension; the chunk's K, V, Q and output
     * cross memory once. */
    const double per = d->heads * (d->qk_dim + d->v_dim);
    ffn_attn_work k = {
        .flops = 2.0 * pairs * per,
        .bytes = q_tokens * (d->kv_bytes + per * d->act_bytes),
    };
    if (w) *w = k;
    if (!seqs || !(q_tokens > 0)) return 0.0;
    const ffn_attn_eff *e = fitted(hw, false, d->kv_dtype);
    if (!e) return ffn_coarse_s(hw, k.flops, k.bytes, d->compute_dt, 1.0);
    /* The fitted kernel: its memory and compute phases add up (the residuals of a max() grew
     * with the KV heads at mid lengths, where the K/V writes and the tiles' pipeline do not
     * hide each other), plus a fixed cost, one per prompt and one per token. */
    const double tc = k.flops / (ffn_peak_flops(hw, d->compute_dt) * e->compute_max);
    const double tm = k.bytes / (bw_of(hw) * e->memory_max);
    return e->launch_s + e->seq_s * (double)seqs + e->unit_s * q_tokens + tm + tc;
}

void ffn_attn_layer_split(const ffn_model *m, double layers, double *full, double *windowed)
{
    const double w = m->attn.window && m->layers
                         ? layers * (double)m->attn.window_layers / (double)m->layers
                         : 0.0;
    *windowed = w;
    *full = layers - w;
}
