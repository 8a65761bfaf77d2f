/* The attention core of one layer on one device (sim/attention.c, docs/model.md "Attention"):
 * decode attention of sequences over their KV caches and prefill attention of prompt chunks
 * against their context, from the device's fitted attention efficiencies where its spec has them
 * (hw->attn), else the coarse roofline the rest of the layer uses. Projections, all-reduces and
 * the LM head are not here. Pure functions: no I/O, no allocation. */
#ifndef FFNROOF_ATTENTION_H
#define FFNROOF_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/types.h"

/* The attention of one layer as one device runs it, after the heads are split over TP. */
typedef struct ffn_attn_dims {
    double heads;         /* query heads on this device */
    double kv_heads;      /* KV heads on this device (MLA: 1, the shared latent) */
    double qk_dim;        /* per head: the score dimension (MLA decode: kv_lora + rope) */
    double v_dim;         /* per head: the value dimension (MLA decode: kv_lora) */
    double kv_bytes;      /* KV cache of one token on this device in this layer (bytes) */
    double act_bytes;     /* bytes of one activation element (q, output) */
    bool mla;             /* DeepSeek's multi-head latent attention */
    uint64_t window;      /* sliding window (tokens); 0 = full attention */
    ffn_dtype kv_dtype;   /* the KV cache's dtype */
    ffn_dtype compute_dt; /* the dtype the scores are computed in */
} ffn_attn_dims;

/* The dims of model m's attention on one of tp devices, for decode (MLA absorbed: scores over
 * the latent) or prefill (MLA expanded: per-head keys and values). hw may be NULL when only
 * the shapes are wanted (compute_dt is then adtype itself). */
void ffn_attn_dims_of(const ffn_model *m, const ffn_hw *hw, uint64_t tp, bool decode,
                      ffn_dtype kv_dtype, ffn_dtype adtype, ffn_attn_dims *d);

/* Of `layers` of model m (a pipeline stage's share may be fractional), how many attend to the
 * whole context (*full) and how many to the model's sliding window only (*windowed: m->attn's
 * window_layers in proportion); full + windowed = layers. */
void ffn_attn_layer_split(const ffn_model *m, double layers, double *full, double *windowed);

/* The work of one attention call. */
typedef struct ffn_attn_work {
    double flops; /* QK^T and PV, 2 FLOPs a multiply-add */
    double bytes; /* the KV cache read, the queries read and the outputs written */
} ffn_attn_work;

/* Decode: `seqs` sequences, each with one new token (q_per_seq > 1: speculative verification),
 * attending to ctx_sum cached tokens in all (the sum of their KV lengths; with a window, at most
 * window of each). Seconds per layer: hw->attn's fitted decode kernel of the cache's KV class
 * where the spec has one (the 16-bit class's for an 8-bit cache without its own), else the
 * coarse roofline (docs/model.md, "Attention"). */
double ffn_attn_decode_s(const ffn_hw *hw, const ffn_attn_dims *d, uint64_t seqs, double q_per_seq,
                         double ctx_sum, ffn_attn_work *w);

/* Prefill: `seqs` prompt chunks holding q_tokens new tokens in all, causal against their
 * context; pairs = the query-key pairs they score, sum over the chunks of
 * chunk x (earlier tokens + (chunk + 1) / 2) (a whole prompt of S tokens: S (S + 1) / 2; with a
 * window, at most window a token). Seconds per layer, from the fitted prefill kernel where the
 * spec has one, else the coarse roofline. */
double ffn_attn_prefill_s(const ffn_hw *hw, const ffn_attn_dims *d, uint64_t seqs, double q_tokens,
                          double pairs, ffn_attn_work *w);

/* The KV class of a cache dtype: 8-bit and narrower caches are FFN_ATTN_KV8. */
ffn_attn_kv ffn_attn_kv_class(ffn_dtype kv_dtype);

/* The range of a decode (or prefill) attention prediction on hw with a kv_dtype cache: the fitted
 * kernel's p10 and p90 of measured/predicted where hw->attn has it (returns true), else the
 * spec's range (ffn_hw_unc_range; returns false). */
bool ffn_attn_range(const ffn_hw *hw, bool decode, ffn_dtype kv_dtype, double *p10, double *p90);

/* The coarse cost the non-FFN parts of a step use: the roofline at the device's achievable
 * fractions of peak (efficiency.compute_max, memory_max) plus `launches` kernel launches:
 *   t = max(F / (peak * compute_max), B / (bw * memory_max)) + launches * launch_s. */
double ffn_coarse_s(const ffn_hw *hw, double flops, double bytes, ffn_dtype cdt, double launches);

#endif
