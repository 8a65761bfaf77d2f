/* Parameter accounting (sim/params.c) on models built in code, no files: the worked examples of
 * docs/model.md (GPT-2 small, LLaMA-7B's FFN share, the 12 L d^2 rule, SwiGLU's 8d/3 rounding),
 * the MoE active count, and overflow rejection. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/model.h"

static ffn_model m;

/* GPT-2 small (Radford et al. 2019; HF openai-community/gpt2 config.json). */
static void make_gpt2(ffn_model *g)
{
    memset(g, 0, sizeof *g);
    g->hidden = 768;
    g->layers = 12;
    g->vocab = 50257;
    g->intermediate = 3072;
    g->act = FFN_ACT_GELU_TANH;
    g->mlp_bias = true;
    g->tied_embeddings = true;
    g->pos = FFN_POS_LEARNED;
    g->max_positions = 1024;
    g->norm = FFN_NORM_LAYERNORM;
    g->norm_bias = true;
    g->final_norm = true;
    g->attn = (ffn_attn_cfg){
        .n_heads = 12, .n_kv_heads = 12, .head_dim = 64, .qkv_bias = true, .out_bias = true};
}

/* LLaMA-2-7B (HF meta-llama/Llama-2-7b-hf config.json). */
static void make_llama7b(ffn_model *l)
{
    memset(l, 0, sizeof *l);
    l->hidden = 4096;
    l->layers = 32;
    l->vocab = 32000;
    l->intermediate = 11008;
    l->act = FFN_ACT_SWIGLU;
    l->norm = FFN_NORM_RMSNORM;
    l->final_norm = true;
    l->attn = (ffn_attn_cfg){.n_heads = 32, .n_kv_heads = 32, .head_dim = 128};
}

Test(params, gpt2_small_124m_with_85m_in_blocks)
{
    ffn_params p;
    make_gpt2(&m);
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    /* 124,439,808: the count HF's GPT2LMHeadModel reports (keras-hub gpt2_base_en lists the
     * same) */
    cr_assert_eq(p.total, 124439808ull);
    /* Blocks: 12 layers x (12 d^2 + 13 d) = 85,054,464; embeddings (50257 + 1024) x 768. */
    uint64_t blocks = p.attention + p.ffn + p.norm - 2 * 768; /* less the final LayerNorm */
    cr_assert_eq(blocks, 85054464ull);
    cr_assert_eq(p.embedding, (50257ull + 1024) * 768);
    cr_assert_eq(p.active, p.total);
    cr_assert_eq(p.router, 0);
}

Test(params, llama7b_ffn_is_two_thirds)
{
    ffn_params p;
    make_llama7b(&m);
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    cr_assert_eq(p.total, 6738415616ull);
    cr_assert_eq(p.ffn, 32ull * 3 * 4096 * 11008); /* 4,328,521,728 */
    cr_assert_eq(p.ffn, 4328521728ull);
    cr_assert(fabs(p.ffn_share - 2.0 / 3.0) < 0.03, "FFN share %.4f", p.ffn_share);
    cr_assert_eq(p.attention, 32ull * 4 * 4096 * 4096);
    cr_assert_eq(p.embedding, 2ull * 32000 * 4096);
    cr_assert_eq(p.norm, 65ull * 4096);
    cr_assert_eq(p.total, p.embedding + p.attention + p.ffn + p.router + p.norm + p.other);
}

Test(params, twelve_l_d_squared_rule_gpt3)
{
    /* GPT-3 175B (Brown et al. 2020, Table 2.1): d 12288, 96 layers, d_ff = 4d. */
    ffn_params p;
    make_gpt2(&m);
    m.hidden = 12288;
    m.layers = 96;
    m.intermediate = 4 * 12288;
    m.max_positions = 2048;
    m.attn.n_heads = m.attn.n_kv_heads = 96;
    m.attn.head_dim = 128;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    double rule = 12.0 * 96 * 12288.0 * 12288.0;
    double blocks = (double)(p.total - p.embedding);
    cr_assert(fabs(blocks / rule - 1) < 0.01, "blocks %.6g vs 12Ld^2 %.6g", blocks, rule);
    cr_assert(fabs((double)p.total / 175e9 - 1) < 0.01, "total %.6g vs 175B", (double)p.total);
    /* the 4d FFN is two thirds of each block's 12 d^2 */
    cr_assert(fabs((double)p.ffn / (8.0 * 96 * 12288.0 * 12288.0) - 1) < 0.001);
}

Test(params, swiglu_intermediate_rounding)
{
    cr_assert_eq(ffn_swiglu_intermediate(4096, 256), 11008); /* LLaMA-7B */
    cr_assert_eq(ffn_swiglu_intermediate(5120, 256), 13824); /* LLaMA-13B */
    cr_assert_eq(ffn_swiglu_intermediate(4096, 1), 10922);   /* floor(8d/3), no rounding */
    cr_assert_eq(ffn_swiglu_intermediate(3, 4), 8);          /* 8 exactly, already a multiple */
    cr_assert_eq(ffn_swiglu_intermediate(4096, 0), 0);
    cr_assert_eq(ffn_swiglu_intermediate(UINT64_MAX / 2, 256), 0);
}

Test(params, moe_active_excludes_unrouted_experts)
{
    ffn_params p, dense;
    make_llama7b(&m);
    cr_assert_eq(ffn_model_params(&m, &dense), 0);
    m.moe = (ffn_moe_cfg){.n_experts = 8, .top_k = 2, .expert_intermediate = 11008};
    for (int i = 1; i < 32; i += 2)
        m.layer_moe[i] = true; /* every other layer */
    cr_assert_eq(ffn_model_moe_layers(&m), 16);
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    const uint64_t expert = 3ull * 4096 * 11008;
    cr_assert_eq(p.ffn, dense.ffn + 16 * 7 * expert);
    cr_assert_eq(p.router, 16ull * 4096 * 8);
    cr_assert_eq(p.ffn_active, dense.ffn + 16 * expert);
    cr_assert_eq(p.active, p.total - 16 * 6 * expert);
    /* a correction bias per expert and a shared-expert gate land in the router */
    m.moe.router_bias = true;
    m.moe.n_shared = 1;
    m.moe.shared_intermediate = 1024;
    m.moe.shared_gate = true;
    ffn_params q;
    cr_assert_eq(ffn_model_params(&m, &q), 0);
    cr_assert_eq(q.router, p.router + 16 * (8 + 4096));
    cr_assert_eq(q.ffn, p.ffn + 16 * 3ull * 4096 * 1024);
    /* layer_moe is ignored without experts */
    m.moe = (ffn_moe_cfg){0};
    cr_assert_eq(ffn_model_moe_layers(&m), 0);
    cr_assert_eq(ffn_model_params(&m, &q), 0);
    cr_assert_eq(q.total, dense.total);
}

Test(params, overflow_is_rejected_not_wrapped)
{
    ffn_params p;
    make_llama7b(&m);
    m.hidden = 1u << 20;
    m.intermediate = 1u << 24;
    m.layers = FFN_MAX_LAYERS;
    m.moe = (ffn_moe_cfg){.n_experts = 4096, .top_k = 8, .expert_intermediate = 1u << 24};
    for (int i = 0; i < FFN_MAX_LAYERS; i++)
        m.layer_moe[i] = true;
    memset(&p, 0xab, sizeof p);
    cr_assert_eq(ffn_model_params(&m, &p), FFN_EOVERFLOW);
    cr_assert_eq(p.total, 0, "outputs are zeroed on error");
    m.layers = FFN_MAX_LAYERS + 1;
    cr_assert_eq(ffn_model_params(&m, &p), FFN_EINVAL);
    cr_assert_eq(ffn_model_params(NULL, &p), FFN_EINVAL);
}

Test(params, mla_attention_counts)
{
    /* DeepSeek-V3 attention of one layer (arXiv:2412.19437; HF config.json): q_a 7168x1536,
     * q_a_norm 1536, q_b 1536x(128x192), kv_a 7168x576, kv_a_norm 512, kv_b 512x(128x256),
     * o (128x128)x7168 = 187,107,328. */
    ffn_params p;
    make_llama7b(&m);
    m.hidden = 7168;
    m.layers = 1;
    m.attn = (ffn_attn_cfg){.n_heads = 128,
                            .n_kv_heads = 128,
                            .head_dim = 192,
                            .q_lora_rank = 1536,
                            .kv_lora_rank = 512,
                            .qk_nope_head_dim = 128,
                            .qk_rope_head_dim = 64,
                            .v_head_dim = 128};
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    cr_assert_eq(p.attention, 187107328ull);
    /* of it held whole on every TP rank: q_a, q_a_norm, kv_a, kv_a_norm
     * = 7168x1536 + 1536 + 7168x576 + 512 = 15,140,864 */
    cr_assert_eq(p.attention_replicated, 15140864ull);
    /* without the query's low rank only the KV down-projection and its norm */
    m.attn.q_lora_rank = 0;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    cr_assert_eq(p.attention_replicated, 7168ull * 576 + 512);
    /* grouped-query attention splits every projection */
    make_llama7b(&m);
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    cr_assert_eq(p.attention_replicated, 0);
}
