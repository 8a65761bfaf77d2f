/* A Transformer architecture as the simulator sees it. Filled by ffn_model_load() from
 * models/NAME.yaml or a Hugging Face config.json (docs/formats.md), and costed by sim/.
 * Counts are uint64_t; loaders reject values whose products would overflow. */
#ifndef FFNROOF_MODEL_H
#define FFNROOF_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/types.h"

#define FFN_MAX_LAYERS 1024

typedef enum ffn_norm_kind { FFN_NORM_RMSNORM = 0, FFN_NORM_LAYERNORM } ffn_norm_kind;
typedef enum ffn_pos_kind { FFN_POS_ROPE = 0, FFN_POS_LEARNED, FFN_POS_SINUSOIDAL } ffn_pos_kind;
typedef enum ffn_router_scoring { FFN_SCORE_SOFTMAX = 0, FFN_SCORE_SIGMOID } ffn_router_scoring;

typedef struct ffn_attn_cfg {
    uint64_t n_heads;
    uint64_t n_kv_heads; /* = n_heads for MHA, < for GQA/MQA */
    uint64_t head_dim;   /* usually hidden / n_heads, but explicit in some configs */
    /* Multi-head latent attention (DeepSeek-V2/V3); all 0 when not MLA. */
    uint64_t q_lora_rank; /* 0 = queries projected directly */
    uint64_t kv_lora_rank;
    uint64_t qk_nope_head_dim;
    uint64_t qk_rope_head_dim;
    uint64_t v_head_dim;
    bool qkv_bias;
    bool out_bias;
    bool qk_norm; /* per-head RMSNorm on q and k (Qwen3, OLMoE) */
    bool sinks;   /* a learned sink logit per head (gpt-oss): heads parameters a layer */
    /* Sliding-window attention: `window_layers` of the layers attend to the last `window`
     * tokens only and cache no more; 0 = every layer attends to the whole context. */
    uint64_t window;
    uint64_t window_layers;
    /* Added by the model loader for exact counts: */
    bool qk_norm_full; /* the q/k norm spans the whole projection (OLMoE: n_heads*head_dim and
                          n_kv_heads*head_dim weights) instead of one head (Qwen3: head_dim) */
} ffn_attn_cfg;

typedef struct ffn_moe_cfg {
    uint64_t n_experts; /* routed experts per MoE layer; 0 = dense model */
    uint64_t top_k;
    uint64_t expert_intermediate; /* intermediate size of one routed expert */
    uint64_t n_shared;            /* shared experts, applied to every token */
    uint64_t shared_intermediate; /* intermediate size of ONE shared expert */
    bool shared_gate;             /* sigmoid gate on the shared expert (Qwen2-MoE): d x 1 */
    ffn_router_scoring scoring;
    bool norm_topk;         /* renormalise the top-k weights */
    uint64_t n_group;       /* group-limited routing (DeepSeek): groups of experts, 0 = off */
    uint64_t topk_group;    /* groups a token may pick from */
    bool router_bias;       /* per-expert score-correction bias (DeepSeek-V3) */
    double capacity_factor; /* 0 = dropless */
    /* The skew of the tokens a layer's experts receive in serving, as the exponent of
     * aiconfigurator's power-law draw of per-expert loads (include/ffnroof/moe_fused.h,
     * ffn_moe_fused_draw); 0 = balanced. It prices the engines' fused MoE kernels
     * (docs/model.md, "Routing skew"). */
    double routing_alpha;
    /* Added by the model loader (informational; layer_moe[] is authoritative): */
    uint64_t first_dense_layers; /* leading layers with a dense FFN */
    uint64_t layer_freq;         /* every layer_freq-th layer is MoE (1 = all) */
} ffn_moe_cfg;

typedef struct ffn_model {
    char name[64];
    char family[32];      /* HF model_type or our family name ("llama", "gpt2", ...) */
    char checkpoint[128]; /* the Hugging Face repository ("org/name") its source names, or
                             _name_or_path of a config.json; "" when unknown */
    uint64_t hidden;
    uint64_t layers; /* decoder (or encoder-only) layers, i.e. FFN layers of the main stack */
    uint64_t vocab;
    uint64_t intermediate; /* dense FFN intermediate size */
    ffn_act act;
    bool mlp_bias;
    bool tied_embeddings;
    ffn_pos_kind pos;
    uint64_t max_positions; /* rows of a learned position table (0 when none) */
    uint64_t context;       /* the longest sequence it takes: a config's max_position_embeddings
                               (or its learned table's rows); 0 = unknown */
    uint64_t type_vocab;    /* token-type embeddings (BERT), 0 when none */
    ffn_norm_kind norm;
    bool norm_bias;
    bool final_norm;
    bool pooler;             /* BERT pooler (d x d + d) */
    bool parallel_block;     /* attention and MLP share one input norm (GPT-J/NeoX style) */
    uint64_t encoder_layers; /* encoder-decoder models: encoder layers of `layers` total */
    ffn_attn_cfg attn;
    ffn_moe_cfg moe;
    /* layer_moe[i] is true when layer i has a routed-expert FFN (derived from first-k-dense,
     * layer frequency and mlp_only_layers by the loader). */
    bool layer_moe[FFN_MAX_LAYERS];
    double dropout; /* hidden dropout probability (training activation memory) */
    /* The weights a narrow weight dtype (narrower than 16 bits) applies to: false, every linear
     * layer; true, the routed experts only, attention and dense FFNs staying 16-bit as the
     * checkpoint ships them (gpt-oss's MXFP4 experts). */
    bool quantized_experts_only;
    /* Added by the model loader for exact counts: */
    bool embed_norm;    /* a norm right after the embeddings (BERT) */
    bool sandwich_norm; /* extra norms after attention and after the FFN (Gemma-2): 4 per layer */
} ffn_model;

/* Parameter accounting. ffn counts every FFN weight of every layer (dense FFNs, all routed
 * experts, shared experts); ffn_active counts those a single token uses. */
typedef struct ffn_params {
    uint64_t total;
    uint64_t embedding;            /* token (+ position, type) embeddings and an untied LM head */
    uint64_t attention;            /* projections, biases, MLA norms */
    uint64_t attention_replicated; /* of attention: MLA's down-projections (q_a, kv_a) and their
                                    * norms, which every tensor-parallel rank holds whole */
    uint64_t ffn;
    uint64_t ffn_active;
    uint64_t router;  /* gating weights (+ correction biases, shared-expert gates) */
    uint64_t norm;    /* all norm weights and biases */
    uint64_t other;   /* pooler etc. */
    uint64_t active;  /* per token: total - inactive routed experts */
    double ffn_share; /* ffn / total */
} ffn_params;

/* Exact parameter counts of m. Returns 0, or FFN_EOVERFLOW. */
int ffn_model_params(const ffn_model *m, ffn_params *out);

/* Number of layers whose FFN is routed (MoE) and dense. */
uint64_t ffn_model_moe_layers(const ffn_model *m);

/* The SwiGLU intermediate size of LLaMA (Touvron et al. 2023; facebookresearch/llama model.py):
 * floor(8*hidden/3) rounded up to a multiple of `multiple` (11008 for hidden 4096, multiple 256).
 * Returns 0 when multiple is 0 or the result would overflow. */
uint64_t ffn_swiglu_intermediate(uint64_t hidden, uint64_t multiple);

#endif
