/* Hugging Face config.json import: maps the keys of each supported model_type onto ffn_model so
 * that ffn_model_params() reproduces the sum of the checkpoint's parameter tensors exactly. Only
 * keys that change the FFN or a parameter count are read (docs/formats-model.md lists them per
 * type, with the transformers modeling file each rule comes from); every other key of the many an
 * HF config carries is ignored. */
#include "model_io.h"

#include <stdio.h>
#include <string.h>

typedef enum hf_type {
    HF_LLAMA = 0,
    HF_MISTRAL,
    HF_MIXTRAL,
    HF_QWEN2,
    HF_QWEN2_MOE,
    HF_QWEN3,
    HF_QWEN3_MOE,
    HF_DEEPSEEK_V2,
    HF_DEEPSEEK_V3,
    HF_GPT2,
    HF_GPT_NEOX,
    HF_PHI3,
    HF_GEMMA,
    HF_GEMMA2,
    HF_OLMOE,
    HF_GPT_OSS,
} hf_type;

static const char *const hf_types[] = {
    "llama",     "mistral",     "mixtral",     "qwen2",   "qwen2_moe", "qwen3",
    "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt2",    "gpt_neox",  "phi3",
    "gemma",     "gemma2",      "olmoe",       "gpt_oss", NULL};

static int u64(ffn_ydoc *y, yaml_node_t *r, const char *key, bool req, uint64_t lo, uint64_t hi,
               uint64_t *out)
{
    return ffn_y_u64(y, r, key, req, lo, hi, out);
}

/* hidden_act of a gated (LLaMA-style gate/up/down) MLP -> our GLU activation. */
static int gated_act(ffn_ydoc *y, yaml_node_t *v, ffn_act *out)
{
    const char *t = ffn_y_text(v);
    if (!t) return ffn_y_error(y, v, FFN_ESCHEMA, "the activation must be text");
    if (!strcmp(t, "silu") || !strcmp(t, "swish"))
        *out = FFN_ACT_SWIGLU;
    else if (!strcmp(t, "gelu") || !strcmp(t, "gelu_pytorch_tanh") || !strcmp(t, "gelu_new") ||
             !strcmp(t, "gelu_fast"))
        *out = FFN_ACT_GEGLU;
    else if (!strcmp(t, "relu"))
        *out = FFN_ACT_REGLU;
    else
        return ffn_y_error(y, v, FFN_EUNSUPPORTED,
                           "unsupported activation '%s' for a gated MLP (supported: silu, swish, "
                           "gelu, gelu_pytorch_tanh, gelu_new, gelu_fast, relu)",
                           t);
    return 0;
}

/* activation of a plain two-matrix MLP (GPT-2, GPT-NeoX). */
static int plain_act(ffn_ydoc *y, yaml_node_t *v, ffn_act *out)
{
    const char *t = ffn_y_text(v);
    if (!t) return ffn_y_error(y, v, FFN_ESCHEMA, "the activation must be text");
    if (!strcmp(t, "gelu"))
        *out = FFN_ACT_GELU;
    else if (!strcmp(t, "gelu_new") || !strcmp(t, "gelu_pytorch_tanh") || !strcmp(t, "gelu_fast"))
        *out = FFN_ACT_GELU_TANH;
    else if (!strcmp(t, "relu"))
        *out = FFN_ACT_RELU;
    else if (!strcmp(t, "silu") || !strcmp(t, "swish"))
        *out = FFN_ACT_SILU;
    else
        return ffn_y_error(y, v, FFN_EUNSUPPORTED,
                           "unsupported activation '%s' (supported: gelu, gelu_new, "
                           "gelu_pytorch_tanh, gelu_fast, relu, silu)",
                           t);
    return 0;
}

static int act_key(ffn_ydoc *y, yaml_node_t *r, const char *key, const char *dflt, bool gated,
                   ffn_act *out)
{
    yaml_node_t *v = ffn_y_get(y, r, key, NULL);
    if (!v) {
        /* the class default (e.g. LlamaConfig hidden_act="silu") */
        if (!dflt) return ffn_y_error(y, r, FFN_ESCHEMA, "missing key '%s'", key);
        if (!strcmp(dflt, "silu")) *out = gated ? FFN_ACT_SWIGLU : FFN_ACT_SILU;
        if (!strcmp(dflt, "gelu")) *out = gated ? FFN_ACT_GEGLU : FFN_ACT_GELU;
        if (!strcmp(dflt, "gelu_new")) *out = FFN_ACT_GELU_TANH;
        return 0;
    }
    return gated ? gated_act(y, v, out) : plain_act(y, v, out);
}

/* Name for the model: _name_or_path, else the file name (its folder for ".../config.json"). */
static void hf_name(ffn_ydoc *y, yaml_node_t *r, ffn_model *m)
{
    const char *n = ffn_y_text(ffn_y_get(y, r, "_name_or_path", NULL));
    if (n && strlen(n) < sizeof m->checkpoint)
        snprintf(m->checkpoint, sizeof m->checkpoint, "%s", n);
    char buf[512];
    if (!n || !n[0]) {
        snprintf(buf, sizeof buf, "%s", y->path);
        char *dot = strrchr(buf, '.');
        char *slash = strrchr(buf, '/');
        if (dot && (!slash || dot > slash)) *dot = '\0';
        slash = strrchr(buf, '/');
        n = slash ? slash + 1 : buf;
        if (!strcmp(n, "config") && slash) {
            *slash = '\0';
            char *up = strrchr(buf, '/');
            n = up ? up + 1 : buf;
        }
    }
    size_t len = strlen(n);
    if (len >= sizeof m->name) { /* keep the informative tail */
        n += len - (sizeof m->name - 1);
        len = sizeof m->name - 1;
    }
    memcpy(m->name, n, len);
    m->name[len] = '\0';
}

/* Keys every decoder-only HF config of the LLaMA lineage shares. */
static int common(ffn_ydoc *y, yaml_node_t *r, ffn_model *m, bool tied_default,
                  uint64_t head_dim_default)
{
    int rc;
    ffn_attn_cfg *t = &m->attn;
    if ((rc = u64(y, r, "hidden_size", true, 1, FFN_MODEL_MAX_HIDDEN, &m->hidden)) ||
        (rc = u64(y, r, "num_hidden_layers", true, 1, FFN_MAX_LAYERS, &m->layers)) ||
        (rc = u64(y, r, "vocab_size", true, 1, FFN_MODEL_MAX_VOCAB, &m->vocab)) ||
        (rc = u64(y, r, "num_attention_heads", true, 1, FFN_MODEL_MAX_HEADS, &t->n_heads)) ||
        (rc = u64(y, r, "max_position_embeddings", false, 1, FFN_MODEL_MAX_POSITIONS, &m->context)))
        return rc;
    t->n_kv_heads = t->n_heads;
    if ((rc = u64(y, r, "num_key_value_heads", false, 1, t->n_heads, &t->n_kv_heads))) return rc;
    if (t->n_heads % t->n_kv_heads)
        return ffn_y_error(y, ffn_y_get(y, r, "num_key_value_heads", NULL), FFN_ESCHEMA,
                           "'num_key_value_heads' must divide 'num_attention_heads'");
    t->head_dim = head_dim_default ? head_dim_default : m->hidden / t->n_heads;
    if ((rc = u64(y, r, "head_dim", false, 1, FFN_MODEL_MAX_HEAD_DIM, &t->head_dim))) return rc;
    if (!t->head_dim)
        return ffn_y_error(y, r, FFN_ESCHEMA,
                           "missing key 'head_dim' ('num_attention_heads' exceeds 'hidden_size')");
    m->tied_embeddings = tied_default;
    if ((rc = ffn_y_bool(y, r, "tie_word_embeddings", false, &m->tied_embeddings))) return rc;
    m->pos = FFN_POS_ROPE;
    m->norm = FFN_NORM_RMSNORM;
    m->final_norm = true;
    return 0;
}

/* Routed-expert keys of the Qwen-MoE / Mixtral / OLMoE configs. */
static int experts(ffn_ydoc *y, yaml_node_t *r, ffn_model *m, const char *n_key,
                   const char *inter_key, uint64_t n_default, uint64_t k_default)
{
    ffn_moe_cfg *c = &m->moe;
    int rc;
    c->n_experts = n_default;
    c->top_k = k_default;
    if ((rc = u64(y, r, n_key, !n_default, 1, FFN_MODEL_MAX_EXPERTS, &c->n_experts)) ||
        (rc = u64(y, r, "num_experts_per_tok", !k_default, 1, FFN_MODEL_MAX_EXPERTS, &c->top_k)) ||
        (rc = u64(y, r, inter_key, true, 1, FFN_MODEL_MAX_INTERMEDIATE, &c->expert_intermediate)))
        return rc;
    if (c->top_k > c->n_experts)
        return ffn_y_error(y, ffn_y_get(y, r, "num_experts_per_tok", NULL), FFN_ERANGE,
                           "'num_experts_per_tok' = %llu exceeds '%s' = %llu",
                           (unsigned long long)c->top_k, n_key, (unsigned long long)c->n_experts);
    c->layer_freq = 1;
    return ffn_y_bool(y, r, "norm_topk_prob", false, &c->norm_topk);
}

/* Qwen2-MoE / Qwen3-MoE layer pattern (modeling_qwen2_moe.py): layer i is sparse when it is not
 * in mlp_only_layers and (i + 1) % decoder_sparse_step == 0. */
static int qwen_layers(ffn_ydoc *y, yaml_node_t *r, ffn_model *m)
{
    uint64_t step = 1;
    int rc;
    if ((rc = u64(y, r, "decoder_sparse_step", false, 1, FFN_MAX_LAYERS, &step))) return rc;
    m->moe.layer_freq = step;
    for (uint64_t i = 0; i < m->layers; i++)
        m->layer_moe[i] = (i + 1) % step == 0;
    yaml_node_t *v = ffn_y_get(y, r, "mlp_only_layers", NULL);
    if (v) {
        if ((rc = ffn_y_expect_seq(y, v, "mlp_only_layers"))) return rc;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            uint64_t i;
            if ((rc = ffn_y_node_u64(y, yaml_document_get_node(&y->doc, *it), "mlp_only_layers", 0,
                                     m->layers - 1, &i)))
                return rc;
            m->layer_moe[i] = false;
        }
    }
    return 0;
}

/* gpt-oss's layer schedule (configuration_gpt_oss.py): `layer_types` names each layer
 * sliding_attention or full_attention, by default the even-indexed layers sliding; the sliding
 * ones attend to `sliding_window` tokens. */
static int gpt_oss_window(ffn_ydoc *y, yaml_node_t *r, ffn_model *m)
{
    ffn_attn_cfg *t = &m->attn;
    int rc;
    t->window = 128;
    if ((rc = u64(y, r, "sliding_window", false, 1, FFN_MODEL_MAX_POSITIONS, &t->window)))
        return rc;
    t->window_layers = (m->layers + 1) / 2;
    yaml_node_t *v = ffn_y_get(y, r, "layer_types", NULL);
    if (!v) return 0;
    if ((rc = ffn_y_expect_seq(y, v, "layer_types"))) return rc;
    const uint64_t n = (uint64_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n != m->layers)
        return ffn_y_error(y, v, FFN_ESCHEMA, "'layer_types' lists %llu layers, the model has %llu",
                           (unsigned long long)n, (unsigned long long)m->layers);
    t->window_layers = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, *it);
        const char *s = ffn_y_text(e);
        if (s && !strcmp(s, "sliding_attention"))
            t->window_layers++;
        else if (!s || strcmp(s, "full_attention"))
            return ffn_y_error(y, e, FFN_EUNSUPPORTED,
                               "a layer type of 'sliding_attention' or 'full_attention', got '%s'",
                               s ? s : "(not text)");
    }
    if (!t->window_layers) t->window = 0;
    return 0;
}

static int deepseek(ffn_ydoc *y, yaml_node_t *r, ffn_model *m, bool v3)
{
    int rc;
    ffn_attn_cfg *t = &m->attn;
    ffn_moe_cfg *c = &m->moe;
    if ((rc = common(y, r, m, false, 0))) return rc;
    bool bias = false;
    if ((rc = ffn_y_bool(y, r, "attention_bias", false, &bias))) return rc;
    if (bias)
        return ffn_y_error(y, ffn_y_get(y, r, "attention_bias", NULL), FFN_EUNSUPPORTED,
                           "'attention_bias': true is not supported for %s",
                           v3 ? "deepseek_v3" : "deepseek_v2");
    if ((rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                  &m->intermediate)) ||
        (rc = act_key(y, r, "hidden_act", "silu", true, &m->act)) ||
        (rc = u64(y, r, "q_lora_rank", false, 0, FFN_MODEL_MAX_RANK, &t->q_lora_rank)) ||
        (rc = u64(y, r, "kv_lora_rank", true, 1, FFN_MODEL_MAX_RANK, &t->kv_lora_rank)) ||
        (rc = u64(y, r, "qk_nope_head_dim", true, 0, FFN_MODEL_MAX_HEAD_DIM,
                  &t->qk_nope_head_dim)) ||
        (rc = u64(y, r, "qk_rope_head_dim", true, 0, FFN_MODEL_MAX_HEAD_DIM,
                  &t->qk_rope_head_dim)) ||
        (rc = u64(y, r, "v_head_dim", true, 1, FFN_MODEL_MAX_HEAD_DIM, &t->v_head_dim)))
        return rc;
    t->n_kv_heads = t->n_heads;
    t->head_dim = t->qk_nope_head_dim + t->qk_rope_head_dim;
    if (!ffn_y_get(y, r, "n_routed_experts", NULL)) return 0; /* a dense DeepSeek */
    if ((rc = u64(y, r, "n_routed_experts", true, 1, FFN_MODEL_MAX_EXPERTS, &c->n_experts)) ||
        (rc = u64(y, r, "num_experts_per_tok", true, 1, c->n_experts, &c->top_k)) ||
        (rc = u64(y, r, "moe_intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                  &c->expert_intermediate)) ||
        (rc = u64(y, r, "n_shared_experts", false, 0, FFN_MODEL_MAX_SHARED, &c->n_shared)) ||
        (rc = u64(y, r, "first_k_dense_replace", false, 0, m->layers, &c->first_dense_layers)))
        return rc;
    /* The shared experts are one MLP of n_shared * moe_intermediate_size; as n_shared experts of
     * moe_intermediate_size they hold the same (bias-free) weights. */
    c->shared_intermediate = c->n_shared ? c->expert_intermediate : 0;
    c->layer_freq = 1;
    if ((rc = u64(y, r, "moe_layer_freq", false, 1, m->layers, &c->layer_freq)) ||
        (rc = ffn_y_bool(y, r, "norm_topk_prob", false, &c->norm_topk)))
        return rc;
    /* modeling_deepseek.py: layer i is MoE when i >= first_k_dense_replace and
     * i % moe_layer_freq == 0 */
    for (uint64_t i = 0; i < m->layers; i++)
        m->layer_moe[i] = i >= c->first_dense_layers && i % c->layer_freq == 0;
    static const char *const scores[] = {"softmax", "sigmoid", NULL};
    int score = v3 ? FFN_SCORE_SIGMOID : FFN_SCORE_SOFTMAX; /* the config classes' defaults */
    if ((rc = ffn_y_enum(y, r, "scoring_func", false, scores, &score))) return rc;
    c->scoring = (ffn_router_scoring)score;
    char method[64];
    snprintf(method, sizeof method, "%s", v3 ? "noaux_tc" : "greedy");
    if ((rc = ffn_y_str(y, r, "topk_method", false, method, sizeof method))) return rc;
    /* Group-limited routing only where the top-k method uses groups; n_group = 1 is no limit. */
    if (!strcmp(method, "group_limited_greedy") || !strcmp(method, "noaux_tc")) {
        uint64_t ng = 0, tg = 0;
        if ((rc = u64(y, r, "n_group", false, 0, c->n_experts, &ng)) ||
            (rc = u64(y, r, "topk_group", false, 0, ng ? ng : 1, &tg)))
            return rc;
        if (ng > 1) {
            if (c->n_experts % ng || !tg)
                return ffn_y_error(y, ffn_y_get(y, r, "n_group", NULL), FFN_ESCHEMA,
                                   "'n_group' must divide 'n_routed_experts' and needs "
                                   "'topk_group' >= 1");
            c->n_group = ng;
            c->topk_group = tg;
        }
    }
    /* DeepSeek-V3's noaux_tc router adds one learned bias per expert (e_score_correction_bias,
     * DeepSeek-V3 technical report section 2.1.2); it is in the checkpoint and counted. */
    c->router_bias = !strcmp(method, "noaux_tc");
    return 0;
}

int ffn__hf_load(ffn_ydoc *y, yaml_node_t *r, ffn_model *m)
{
    int rc, type = 0;
    if ((rc = ffn_y_expect_map(y, r, "a Hugging Face config"))) return rc;
    yaml_node_t *mt = ffn_y_get(y, r, "model_type", NULL);
    if (!mt)
        return ffn_y_error(y, r, FFN_ESCHEMA,
                           "not a Hugging Face config: missing key 'model_type'");
    const char *tname = ffn_y_text(mt);
    for (type = 0; hf_types[type]; type++)
        if (tname && !strcmp(tname, hf_types[type])) break;
    if (!hf_types[type]) {
        char list[512] = "";
        for (int i = 0; hf_types[i]; i++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", hf_types[i]);
        }
        return ffn_y_error(y, mt, FFN_EUNSUPPORTED, "unsupported model_type '%s' (supported: %s)",
                           tname ? tname : "(not text)", list);
    }
    hf_name(y, r, m);
    snprintf(m->family, sizeof m->family, "%s", hf_types[type]);
    ffn_attn_cfg *t = &m->attn;
    ffn_moe_cfg *c = &m->moe;
    bool b = false;

    switch ((hf_type)type) {
    case HF_GPT2: {
        /* modeling_gpt2.py: wte, wpe (n_positions), per block ln_1, c_attn (d x 3d + 3d), c_proj
         * (d x d + d), ln_2, c_fc (d x n_inner + n_inner), c_proj (n_inner x d + d); ln_f; the LM
         * head is tied to wte. */
        if ((rc = u64(y, r, "n_embd", true, 1, FFN_MODEL_MAX_HIDDEN, &m->hidden)) ||
            (rc = u64(y, r, "n_layer", true, 1, FFN_MAX_LAYERS, &m->layers)) ||
            (rc = u64(y, r, "n_head", true, 1, FFN_MODEL_MAX_HEADS, &t->n_heads)) ||
            (rc = u64(y, r, "vocab_size", true, 1, FFN_MODEL_MAX_VOCAB, &m->vocab)) ||
            (rc = u64(y, r, "n_positions", true, 1, FFN_MODEL_MAX_POSITIONS, &m->max_positions)))
            return rc;
        m->context = m->max_positions;
        if (m->hidden % t->n_heads)
            return ffn_y_error(y, ffn_y_get(y, r, "n_head", NULL), FFN_ESCHEMA,
                               "'n_head' must divide 'n_embd'");
        m->intermediate = 4 * m->hidden;
        if ((rc = u64(y, r, "n_inner", false, 1, FFN_MODEL_MAX_INTERMEDIATE, &m->intermediate)) ||
            (rc = act_key(y, r, "activation_function", "gelu_new", false, &m->act)))
            return rc;
        t->n_kv_heads = t->n_heads;
        t->head_dim = m->hidden / t->n_heads;
        t->qkv_bias = t->out_bias = m->mlp_bias = true;
        m->pos = FFN_POS_LEARNED;
        m->norm = FFN_NORM_LAYERNORM;
        m->norm_bias = m->final_norm = true;
        m->tied_embeddings = true;
        if ((rc = ffn_y_bool(y, r, "tie_word_embeddings", false, &m->tied_embeddings))) return rc;
        break;
    }
    case HF_GPT_NEOX:
        /* modeling_gpt_neox.py: embed_in, per layer input_layernorm and post_attention_layernorm
         * (both present with use_parallel_residual), query_key_value (d x 3d, bias
         * attention_bias), dense (d x d, bias attention_bias), dense_h_to_4h and dense_4h_to_h
         * (always biased); final_layer_norm; embed_out (untied unless tie_word_embeddings, no
         * bias). Rotary embeddings hold no parameters. */
        if ((rc = common(y, r, m, false, 0)) ||
            (rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                      &m->intermediate)) ||
            (rc = act_key(y, r, "hidden_act", "gelu", false, &m->act)))
            return rc;
        t->n_kv_heads = t->n_heads; /* MHA only */
        b = true;
        if ((rc = ffn_y_bool(y, r, "attention_bias", false, &b))) return rc;
        t->qkv_bias = t->out_bias = b;
        m->mlp_bias = true;
        m->norm = FFN_NORM_LAYERNORM;
        m->norm_bias = true;
        m->parallel_block = true;
        if ((rc = ffn_y_bool(y, r, "use_parallel_residual", false, &m->parallel_block))) return rc;
        break;
    case HF_LLAMA:
    case HF_MISTRAL:
    case HF_QWEN2:
    case HF_QWEN3:
    case HF_PHI3:
    case HF_GEMMA:
    case HF_GEMMA2: {
        const bool gemma = type == HF_GEMMA || type == HF_GEMMA2;
        /* GemmaConfig/Gemma2Config default head_dim = 256 and tie_word_embeddings = true */
        if ((rc = common(y, r, m, gemma, gemma ? 256 : 0)) ||
            (rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                      &m->intermediate)))
            return rc;
        if (gemma && ffn_y_get(y, r, "hidden_activation", NULL))
            rc = act_key(y, r, "hidden_activation", NULL, true, &m->act);
        else
            rc = act_key(y, r, "hidden_act", gemma ? "gelu" : "silu", true, &m->act);
        if (rc) return rc;
        if (type == HF_LLAMA || type == HF_QWEN3 || type == HF_GEMMA || type == HF_GEMMA2) {
            /* attention_bias puts a bias on q, k, v and o (LlamaAttention, Qwen3Attention,
             * GemmaAttention) */
            if ((rc = ffn_y_bool(y, r, "attention_bias", false, &b))) return rc;
            t->qkv_bias = t->out_bias = b;
        }
        if (type == HF_LLAMA && (rc = ffn_y_bool(y, r, "mlp_bias", false, &m->mlp_bias))) return rc;
        if (type == HF_QWEN2) t->qkv_bias = true; /* Qwen2Attention: q/k/v biased, o not */
        if (type == HF_QWEN3) t->qk_norm = true;  /* per-head RMSNorm on q and k */
        if (type == HF_GEMMA2) m->sandwich_norm = true;
        break;
    }
    case HF_MIXTRAL:
        if ((rc = common(y, r, m, false, 0)) ||
            (rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                      &m->intermediate)) ||
            (rc = act_key(y, r, "hidden_act", "silu", true, &m->act)) ||
            (rc = experts(y, r, m, "num_local_experts", "intermediate_size", 8, 2)))
            return rc;
        /* softmax over the top-k logits is the renormalised top-k of the full softmax */
        c->norm_topk = true;
        for (uint64_t i = 0; i < m->layers; i++)
            m->layer_moe[i] = true;
        break;
    case HF_OLMOE:
        if ((rc = common(y, r, m, false, 0)) ||
            (rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                      &m->intermediate)) ||
            (rc = act_key(y, r, "hidden_act", "silu", true, &m->act)) ||
            (rc = experts(y, r, m, "num_experts", "intermediate_size", 64, 8)) ||
            (rc = ffn_y_bool(y, r, "attention_bias", false, &b)))
            return rc;
        t->qkv_bias = t->out_bias = b;
        /* OlmoeAttention: q_norm over n_heads*head_dim, k_norm over n_kv_heads*head_dim */
        t->qk_norm = t->qk_norm_full = true;
        for (uint64_t i = 0; i < m->layers; i++)
            m->layer_moe[i] = true;
        break;
    case HF_QWEN2_MOE:
    case HF_QWEN3_MOE:
        if ((rc = common(y, r, m, false, 0)) ||
            (rc = u64(y, r, "intermediate_size", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                      &m->intermediate)) ||
            (rc = act_key(y, r, "hidden_act", "silu", true, &m->act)) ||
            (rc = experts(y, r, m, "num_experts", "moe_intermediate_size", 0, 0)) ||
            (rc = qwen_layers(y, r, m)))
            return rc;
        if (type == HF_QWEN2_MOE) {
            t->qkv_bias = true;
            /* one shared expert of shared_expert_intermediate_size with a d x 1 sigmoid gate */
            uint64_t s = 0;
            if ((rc = u64(y, r, "shared_expert_intermediate_size", false, 0,
                          FFN_MODEL_MAX_INTERMEDIATE, &s)))
                return rc;
            if (s) {
                c->n_shared = 1;
                c->shared_intermediate = s;
                c->shared_gate = true;
            }
        } else {
            if ((rc = ffn_y_bool(y, r, "attention_bias", false, &b))) return rc;
            t->qkv_bias = t->out_bias = b;
            t->qk_norm = true;
        }
        break;
    case HF_DEEPSEEK_V2:
    case HF_DEEPSEEK_V3:
        if ((rc = deepseek(y, r, m, type == HF_DEEPSEEK_V3))) return rc;
        break;
    case HF_GPT_OSS:
        /* modeling_gpt_oss.py (transformers 4.55): per layer input_layernorm; self_attn q, k, v
         * and o with biases (attention_bias, default true) and `sinks`, one logit a head;
         * post_attention_layernorm; mlp.router, experts x d weights and an experts bias;
         * mlp.experts, gate_up_proj (d x 2f) and down_proj (f x d) per expert, each biased. Every
         * layer is MoE; the router's softmax runs over the top-k logits (renormalised top-k);
         * the lm_head is untied. */
        if ((rc = common(y, r, m, false, 0)) ||
            (rc = act_key(y, r, "hidden_act", "silu", true, &m->act)) ||
            (rc = experts(y, r, m, "num_local_experts", "intermediate_size", 128, 4)) ||
            (rc = gpt_oss_window(y, r, m)))
            return rc;
        m->intermediate = c->expert_intermediate;
        /* quantization_config: MXFP4 experts; self_attn, router, embed_tokens and lm_head
         * among modules_to_not_convert */
        m->quantized_experts_only = true;
        b = true;
        if ((rc = ffn_y_bool(y, r, "attention_bias", false, &b))) return rc;
        t->qkv_bias = t->out_bias = b;
        t->sinks = true;
        m->mlp_bias = true;
        c->router_bias = true;
        c->norm_topk = true;
        for (uint64_t i = 0; i < m->layers; i++)
            m->layer_moe[i] = true;
        break;
    }
    return ffn__model_finish(y, r, m);
}
