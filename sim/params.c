/* Exact parameter accounting of a Transformer (include/ffnroof/model.h): the number of weights
 * and biases in every tensor a Hugging Face checkpoint would hold, summed by category. Pure
 * arithmetic on uint64_t; every product and sum is overflow-checked, so a model that does not
 * fit in 64 bits is rejected with FFN_EOVERFLOW instead of wrapping.
 *
 * Categories (docs/formats-model.md, "Parameter accounting"):
 *   embedding  token table, learned position and token-type tables, an untied LM head
 *   attention  q/k/v/o projections and their biases, decoder cross-attention, MLA latent
 *              projections and their norms, q/k norms
 *   ffn        dense FFNs, every routed expert, shared experts
 *   router     gating weights, per-expert score-correction biases, shared-expert gates
 *   norm       residual-stream norms (per layer, embedding norm, final norm)
 *   other      BERT pooler
 * The inactive part of an MoE layer is (experts - top_k) routed experts; active = total minus
 * that, summed over the MoE layers. */
#include "ffnroof/model.h"

#include <stddef.h>
#include <stdint.h>

/* Overflow-sticky arithmetic: once a step overflows, the result is meaningless and ovf stays
 * set; callers check it once at the end. */
typedef struct acc {
    bool ovf;
} acc;

static uint64_t mul(acc *a, uint64_t x, uint64_t y)
{
    if (x && y > UINT64_MAX / x) {
        a->ovf = true;
        return 0;
    }
    return x * y;
}

static uint64_t add(acc *a, uint64_t x, uint64_t y)
{
    if (y > UINT64_MAX - x) {
        a->ovf = true;
        return 0;
    }
    return x + y;
}

static uint64_t mul3(acc *a, uint64_t x, uint64_t y, uint64_t z)
{
    return mul(a, mul(a, x, y), z);
}

uint64_t ffn_swiglu_intermediate(uint64_t hidden, uint64_t multiple)
{
    if (!multiple || hidden > UINT64_MAX / 8) return 0;
    /* LLaMA: hidden_dim = int(2 * (4d) / 3); multiple_of * ceil(hidden_dim / multiple_of) */
    uint64_t h = 8 * hidden / 3;
    uint64_t n = h / multiple + (h % multiple != 0);
    if (n > UINT64_MAX / multiple) return 0;
    return n * multiple;
}

uint64_t ffn_model_moe_layers(const ffn_model *m)
{
    if (!m || !m->moe.n_experts) return 0;
    uint64_t n = 0, L = m->layers < FFN_MAX_LAYERS ? m->layers : FFN_MAX_LAYERS;
    for (uint64_t i = 0; i < L; i++)
        n += m->layer_moe[i];
    return n;
}

/* One FFN (dense or one expert) of width f: gated forms have gate, up and down projections. */
static uint64_t ffn_block(acc *a, uint64_t d, uint64_t f, ffn_act act, bool bias)
{
    uint64_t n = mul3(a, ffn_act_gated(act) ? 3 : 2, d, f);
    if (bias) n = add(a, n, add(a, mul(a, ffn_act_gated(act) ? 2 : 1, f), d));
    return n;
}

/* Of one attention block, the weights every tensor-parallel rank holds whole: MLA's
 * down-projections to the query and KV latents and their norms. vLLM and SGLang keep them
 * replicated (vLLM's deepseek_v2.py fused_qkv_a_proj with disable_tp, SGLang's
 * fused_qkv_a_proj_with_mqa, a ReplicatedLinear): the latents are narrower than the heads
 * that TP splits. 0 for other attention. */
static uint64_t attn_replicated(acc *a, const ffn_model *m)
{
    const ffn_attn_cfg *t = &m->attn;
    if (!t->kv_lora_rank) return 0;
    const uint64_t d = m->hidden;
    uint64_t n = add(a, mul(a, d, add(a, t->kv_lora_rank, t->qk_rope_head_dim)), t->kv_lora_rank);
    if (t->q_lora_rank) n = add(a, n, add(a, mul(a, d, t->q_lora_rank), t->q_lora_rank));
    return n;
}

/* One attention block (self- or cross-attention) without its residual norm. */
static uint64_t attn_block(acc *a, const ffn_model *m)
{
    const ffn_attn_cfg *t = &m->attn;
    const uint64_t d = m->hidden, h = t->n_heads;
    uint64_t n = 0;
    if (t->kv_lora_rank) {
        /* Multi-head latent attention, DeepSeek-V2 (arXiv:2405.04434) section 2.1 and the
         * HF modeling_deepseek.py tensors q_a_proj, q_a_layernorm, q_b_proj (or q_proj),
         * kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj. */
        const uint64_t qk = add(a, t->qk_nope_head_dim, t->qk_rope_head_dim);
        if (t->q_lora_rank) {
            n = add(a, n, mul(a, d, t->q_lora_rank));
            n = add(a, n, t->q_lora_rank);
            n = add(a, n, mul3(a, t->q_lora_rank, h, qk));
        } else {
            n = add(a, n, mul3(a, d, h, qk));
        }
        n = add(a, n, mul(a, d, add(a, t->kv_lora_rank, t->qk_rope_head_dim)));
        n = add(a, n, t->kv_lora_rank);
        n = add(a, n, mul3(a, t->kv_lora_rank, h, add(a, t->qk_nope_head_dim, t->v_head_dim)));
        n = add(a, n, mul3(a, h, t->v_head_dim, d));
        if (t->out_bias) n = add(a, n, d);
        return n;
    }
    const uint64_t q = mul(a, h, t->head_dim), kv = mul(a, t->n_kv_heads, t->head_dim);
    n = add(a, n, mul(a, d, add(a, q, mul(a, 2, kv))));
    if (t->qkv_bias) n = add(a, n, add(a, q, mul(a, 2, kv)));
    n = add(a, n, mul(a, q, d));
    if (t->out_bias) n = add(a, n, d);
    if (t->qk_norm) n = add(a, n, t->qk_norm_full ? add(a, q, kv) : mul(a, 2, t->head_dim));
    if (t->sinks) n = add(a, n, h); /* gpt-oss: self_attn.sinks, one logit a head */
    return n;
}

int ffn_model_params(const ffn_model *m, ffn_params *out)
{
    if (!m || !out) return FFN_EINVAL;
    *out = (ffn_params){0};
    if (m->layers > FFN_MAX_LAYERS) return FFN_EINVAL;
    acc a = {false};
    ffn_params p = {0};
    const uint64_t d = m->hidden;
    const uint64_t norm1 = m->norm_bias ? mul(&a, 2, d) : d; /* one residual norm */

    /* Embeddings: token table, learned positions, token types, and the LM head if untied. */
    p.embedding = mul(&a, m->vocab, d);
    if (m->pos == FFN_POS_LEARNED) p.embedding = add(&a, p.embedding, mul(&a, m->max_positions, d));
    p.embedding = add(&a, p.embedding, mul(&a, m->type_vocab, d));
    if (!m->tied_embeddings) p.embedding = add(&a, p.embedding, mul(&a, m->vocab, d));

    const uint64_t attn = attn_block(&a, m);
    const uint64_t attn_repl = attn_replicated(&a, m);
    const uint64_t dense = ffn_block(&a, d, m->intermediate, m->act, m->mlp_bias);
    const ffn_moe_cfg *e = &m->moe;
    const uint64_t expert = ffn_block(&a, d, e->expert_intermediate, m->act, m->mlp_bias);
    const uint64_t shared =
        mul(&a, e->n_shared, ffn_block(&a, d, e->shared_intermediate, m->act, m->mlp_bias));
    uint64_t router = mul(&a, d, e->n_experts);
    if (e->router_bias) router = add(&a, router, e->n_experts);
    if (e->shared_gate) router = add(&a, router, d);
    const uint64_t inactive =
        e->n_experts > e->top_k ? mul(&a, e->n_experts - e->top_k, expert) : 0;

    uint64_t moe_layers = 0;
    for (uint64_t i = 0; i < m->layers; i++) {
        /* Decoder layers of an encoder-decoder model also cross-attend to the encoder output,
         * with a norm of their own (Vaswani et al. 2017, figure 1). */
        const bool cross = m->encoder_layers && i >= m->encoder_layers;
        uint64_t norms = 2 + (m->sandwich_norm ? 2 : 0) + (cross ? 1 : 0);
        p.norm = add(&a, p.norm, mul(&a, norms, norm1));
        p.attention = add(&a, p.attention, cross ? mul(&a, 2, attn) : attn);
        p.attention_replicated = add(&a, p.attention_replicated, attn_repl);
        if (e->n_experts && m->layer_moe[i]) {
            moe_layers++;
            p.ffn = add(&a, p.ffn, add(&a, mul(&a, e->n_experts, expert), shared));
            p.router = add(&a, p.router, router);
        } else {
            p.ffn = add(&a, p.ffn, dense);
        }
    }
    if (m->final_norm) p.norm = add(&a, p.norm, norm1);
    if (m->embed_norm) p.norm = add(&a, p.norm, norm1);
    if (m->pooler) p.other = add(&a, mul(&a, d, d), d);

    const uint64_t all_inactive = mul(&a, moe_layers, inactive);
    p.total = add(&a, add(&a, add(&a, p.embedding, p.attention), add(&a, p.ffn, p.router)),
                  add(&a, p.norm, p.other));
    if (a.ovf) return FFN_EOVERFLOW;
    p.ffn_active = p.ffn - all_inactive;
    p.active = p.total - all_inactive;
    p.ffn_share = p.total ? (double)p.ffn / (double)p.total : 0.0;
    *out = p;
    return 0;
}
