/* What plan.c (the step and the layouts) and plan_memory.c (memory per device) share; internal to
 * ffn_sim. */
#ifndef FFNROOF_SIM_PLAN_INTERNAL_H
#define FFNROOF_SIM_PLAN_INTERNAL_H

#include "ffnroof/plan.h"

/* Attention shape. Decode with MLA runs in the absorbed form over the latent (DeepSeek-V2,
 * arXiv:2405.04434 sec. 2.1.2-2.1.3): scores over kv_lora + rope, values over kv_lora. */
typedef struct ffn__attn_shape {
    bool mla;
    double H, Hkv, hd;            /* heads, kv heads, head dim */
    double lora, rope, nope, vhd; /* MLA */
} ffn__attn_shape;

ffn__attn_shape ffn__plan_attn_shape(const ffn_model *m);

/* Bytes per weight of the parameters the usual int4/fp8 recipes leave in 16 bits when the
 * projections are narrower (embeddings, LM head, norms, routers); else the weights' own. */
double ffn__plan_other_elem_bytes(ffn_dtype wdt, unsigned group);

static inline uint64_t ffn__ceil_div(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : 0;
}

/* Pipeline micro-batches of a batch over pp stages: as many as there are stages (at most one
 * per sequence), each its share of the sequences (docs/plan.md, "Pipeline stages"). */
static inline uint64_t ffn__plan_micro_batches(uint64_t pp, uint64_t batch)
{
    return pp < batch ? pp : batch ? batch : 1;
}

#endif
