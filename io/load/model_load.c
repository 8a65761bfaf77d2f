/* ffn_model_load(): a model architecture from our YAML (models/NAME.yaml, docs/formats-model.md)
 * or, when the document has a "model_type" key (or the file is .json), from a Hugging Face
 * config.json via hf_load.c. Every rejection is one "file:line:col: message" naming the key;
 * the model is left zeroed on any error. */
#include "model_io.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ffnroof/model_load.h"

static const char *const top_keys[] = {"name",
                                       "family",
                                       "source",
                                       "notes",
                                       "hidden",
                                       "layers",
                                       "vocab",
                                       "tied_embeddings",
                                       "position",
                                       "max_positions",
                                       "context",
                                       "type_vocab",
                                       "norm",
                                       "norm_bias",
                                       "final_norm",
                                       "embed_norm",
                                       "sandwich_norm",
                                       "pooler",
                                       "parallel_block",
                                       "encoder_layers",
                                       "attention",
                                       "ffn",
                                       "moe",
                                       "quantized",
                                       NULL};
static const char *const quant_names[] = {"all", "experts", NULL};
static const char *const attn_keys[] = {"heads",    "kv_heads", "head_dim",      "qkv_bias",
                                        "out_bias", "qk_norm",  "qk_norm_scope", "mla",
                                        "sinks",    "window",   "window_layers", NULL};
static const char *const mla_keys[] = {"q_lora_rank",      "kv_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim",   NULL};
static const char *const ffn_keys[] = {"activation", "intermediate", "bias", "dropout", NULL};
static const char *const moe_keys[] = {"experts",
                                       "top_k",
                                       "expert_intermediate",
                                       "shared_experts",
                                       "shared_intermediate",
                                       "shared_gate",
                                       "first_dense_layers",
                                       "layer_freq",
                                       "dense_layers",
                                       "scoring",
                                       "norm_topk",
                                       "n_group",
                                       "topk_group",
                                       "router_bias",
                                       "capacity_factor",
                                       "routing_alpha",
                                       NULL};
static const char *const pos_names[] = {"rope", "learned", "sinusoidal", NULL};
static const char *const norm_names[] = {"rmsnorm", "layernorm", NULL};
static const char *const score_names[] = {"softmax", "sigmoid", NULL};
static const char *const scope_names[] = {"head", "full", NULL};
static const char *const act_names[] = {"relu",   "gelu",  "gelu_tanh", "silu",
                                        "swiglu", "geglu", "reglu",     NULL};

/* Optional nested mapping: NULL when absent, an error when present but not a mapping. */
static int sub_map(ffn_ydoc *y, yaml_node_t *map, const char *key, const char *const *allowed,
                   yaml_node_t **out)
{
    *out = ffn_y_get(y, map, key, NULL);
    if (!*out) return 0;
    int rc = ffn_y_expect_map(y, *out, key);
    if (!rc) rc = ffn_y_check_keys(y, *out, allowed);
    return rc;
}

static int load_attention(ffn_ydoc *y, yaml_node_t *root, ffn_model *m)
{
    yaml_node_t *a = ffn_y_get(y, root, "attention", NULL), *mla = NULL, *v;
    int rc;
    if (!a) return ffn_y_error(y, root, FFN_ESCHEMA, "missing key 'attention'");
    if ((rc = ffn_y_expect_map(y, a, "attention")) || (rc = ffn_y_check_keys(y, a, attn_keys)))
        return rc;
    ffn_attn_cfg *t = &m->attn;
    if ((rc = ffn_y_u64(y, a, "heads", true, 1, FFN_MODEL_MAX_HEADS, &t->n_heads))) return rc;
    t->n_kv_heads = t->n_heads;
    if ((rc = ffn_y_u64(y, a, "kv_heads", false, 1, t->n_heads, &t->n_kv_heads))) return rc;
    if (t->n_heads % t->n_kv_heads)
        return ffn_y_error(y, ffn_y_get(y, a, "kv_heads", NULL), FFN_ESCHEMA,
                           "'kv_heads' = %llu must divide 'heads' = %llu",
                           (unsigned long long)t->n_kv_heads, (unsigned long long)t->n_heads);
    v = ffn_y_get(y, a, "head_dim", NULL);
    if (v) {
        if ((rc = ffn_y_node_u64(y, v, "head_dim", 1, FFN_MODEL_MAX_HEAD_DIM, &t->head_dim)))
            return rc;
    } else if (m->hidden % t->n_heads) {
        return ffn_y_error(y, a, FFN_ESCHEMA,
                           "missing key 'head_dim' ('hidden' = %llu is not a multiple of "
                           "'heads' = %llu)",
                           (unsigned long long)m->hidden, (unsigned long long)t->n_heads);
    } else {
        t->head_dim = m->hidden / t->n_heads;
    }
    if ((rc = ffn_y_bool(y, a, "qkv_bias", false, &t->qkv_bias)) ||
        (rc = ffn_y_bool(y, a, "out_bias", false, &t->out_bias)) ||
        (rc = ffn_y_bool(y, a, "qk_norm", false, &t->qk_norm)))
        return rc;
    int scope = 0;
    if ((rc = ffn_y_enum(y, a, "qk_norm_scope", false, scope_names, &scope))) return rc;
    t->qk_norm_full = scope == 1;
    if ((rc = ffn_y_bool(y, a, "sinks", false, &t->sinks)) ||
        (rc = ffn_y_u64(y, a, "window", false, 0, FFN_MODEL_MAX_POSITIONS, &t->window)))
        return rc;
    t->window_layers = t->window ? m->layers : 0;
    if ((rc = ffn_y_u64(y, a, "window_layers", false, 0, m->layers, &t->window_layers))) return rc;
    if (t->window_layers && !t->window)
        return ffn_y_error(y, ffn_y_get(y, a, "window_layers", NULL), FFN_ESCHEMA,
                           "'window_layers' needs a 'window' (the tokens those layers attend to)");
    if ((rc = sub_map(y, a, "mla", mla_keys, &mla))) return rc;
    if (mla) {
        if ((rc =
                 ffn_y_u64(y, mla, "q_lora_rank", false, 0, FFN_MODEL_MAX_RANK, &t->q_lora_rank)) ||
            (rc = ffn_y_u64(y, mla, "kv_lora_rank", true, 1, FFN_MODEL_MAX_RANK,
                            &t->kv_lora_rank)) ||
            (rc = ffn_y_u64(y, mla, "qk_nope_head_dim", true, 0, FFN_MODEL_MAX_HEAD_DIM,
                            &t->qk_nope_head_dim)) ||
            (rc = ffn_y_u64(y, mla, "qk_rope_head_dim", true, 0, FFN_MODEL_MAX_HEAD_DIM,
                            &t->qk_rope_head_dim)) ||
            (rc = ffn_y_u64(y, mla, "v_head_dim", true, 1, FFN_MODEL_MAX_HEAD_DIM, &t->v_head_dim)))
            return rc;
        if (t->qk_nope_head_dim + t->qk_rope_head_dim == 0)
            return ffn_y_error(y, mla, FFN_ERANGE,
                               "'qk_nope_head_dim' + 'qk_rope_head_dim' must be positive");
        /* Every MLA head reads the shared latent; there are no separate KV heads. */
        t->n_kv_heads = t->n_heads;
    }
    return 0;
}

static int load_ffn(ffn_ydoc *y, yaml_node_t *root, ffn_model *m)
{
    yaml_node_t *f = ffn_y_get(y, root, "ffn", NULL);
    int rc, act = 0;
    if (!f) return ffn_y_error(y, root, FFN_ESCHEMA, "missing key 'ffn'");
    if ((rc = ffn_y_expect_map(y, f, "ffn")) || (rc = ffn_y_check_keys(y, f, ffn_keys))) return rc;
    if ((rc = ffn_y_enum(y, f, "activation", true, act_names, &act))) return rc;
    m->act = (ffn_act)act;
    if ((rc = ffn_y_u64(y, f, "intermediate", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                        &m->intermediate)) ||
        (rc = ffn_y_bool(y, f, "bias", false, &m->mlp_bias)))
        return rc;
    /* dropout 1.0 would zero every activation; it is a probability below one */
    return ffn_y_num(y, f, "dropout", false, FFN_UNIT_NONE, 0.0, 0.99, &m->dropout);
}

static int load_moe(ffn_ydoc *y, yaml_node_t *root, ffn_model *m)
{
    yaml_node_t *e = NULL, *v;
    int rc, score = 0;
    if ((rc = sub_map(y, root, "moe", moe_keys, &e)) || !e) return rc;
    ffn_moe_cfg *c = &m->moe;
    if ((rc = ffn_y_u64(y, e, "experts", true, 1, FFN_MODEL_MAX_EXPERTS, &c->n_experts))) return rc;
    v = ffn_y_get(y, e, "top_k", NULL);
    if (!v) return ffn_y_error(y, e, FFN_ESCHEMA, "missing key 'top_k'");
    if ((rc = ffn_y_node_u64(y, v, "top_k", 1, FFN_MODEL_MAX_EXPERTS, &c->top_k))) return rc;
    if (c->top_k > c->n_experts)
        return ffn_y_error(y, v, FFN_ERANGE, "'top_k' = %llu exceeds 'experts' = %llu",
                           (unsigned long long)c->top_k, (unsigned long long)c->n_experts);
    if ((rc = ffn_y_u64(y, e, "expert_intermediate", true, 1, FFN_MODEL_MAX_INTERMEDIATE,
                        &c->expert_intermediate)) ||
        (rc = ffn_y_u64(y, e, "shared_experts", false, 0, FFN_MODEL_MAX_SHARED, &c->n_shared)))
        return rc;
    c->shared_intermediate = c->n_shared ? c->expert_intermediate : 0;
    if ((rc = ffn_y_u64(y, e, "shared_intermediate", false, 1, FFN_MODEL_MAX_INTERMEDIATE,
                        &c->shared_intermediate)) ||
        (rc = ffn_y_bool(y, e, "shared_gate", false, &c->shared_gate)))
        return rc;
    if (!c->n_shared && (ffn_y_get(y, e, "shared_intermediate", NULL) || c->shared_gate))
        return ffn_y_error(y, e, FFN_ESCHEMA,
                           "'shared_intermediate' and 'shared_gate' need 'shared_experts' > 0");
    c->layer_freq = 1;
    if ((rc = ffn_y_u64(y, e, "first_dense_layers", false, 0, m->layers, &c->first_dense_layers)) ||
        (rc = ffn_y_u64(y, e, "layer_freq", false, 1, m->layers, &c->layer_freq)) ||
        (rc = ffn_y_enum(y, e, "scoring", false, score_names, &score)) ||
        (rc = ffn_y_bool(y, e, "norm_topk", false, &c->norm_topk)) ||
        (rc = ffn_y_bool(y, e, "router_bias", false, &c->router_bias)) ||
        (rc = ffn_y_num(y, e, "capacity_factor", false, FFN_UNIT_NONE, 0.0, 1e6,
                        &c->capacity_factor)) ||
        (rc = ffn_y_num(y, e, "routing_alpha", false, FFN_UNIT_NONE, 0.0, 10.0, &c->routing_alpha)))
        return rc;
    c->scoring = (ffn_router_scoring)score;
    if ((rc = ffn_y_u64(y, e, "n_group", false, 0, c->n_experts, &c->n_group))) return rc;
    v = ffn_y_get(y, e, "n_group", NULL);
    if (c->n_group && c->n_experts % c->n_group)
        return ffn_y_error(y, v, FFN_ESCHEMA, "'n_group' = %llu must divide 'experts' = %llu",
                           (unsigned long long)c->n_group, (unsigned long long)c->n_experts);
    if ((rc = ffn_y_u64(y, e, "topk_group", false, c->n_group ? 1 : 0, c->n_group, &c->topk_group)))
        return rc;
    if (c->n_group && !c->topk_group)
        return ffn_y_error(y, e, FFN_ESCHEMA, "missing key 'topk_group' (needed with 'n_group')");
    if (c->n_group && c->top_k > c->topk_group * (c->n_experts / c->n_group))
        return ffn_y_error(y, ffn_y_get(y, e, "topk_group", NULL), FFN_ERANGE,
                           "'top_k' = %llu exceeds the %llu experts of 'topk_group' groups",
                           (unsigned long long)c->top_k,
                           (unsigned long long)(c->topk_group * (c->n_experts / c->n_group)));

    for (uint64_t i = 0; i < m->layers; i++)
        m->layer_moe[i] = i >= c->first_dense_layers && i % c->layer_freq == 0;
    v = ffn_y_get(y, e, "dense_layers", NULL);
    if (v) {
        if ((rc = ffn_y_expect_seq(y, v, "dense_layers"))) return rc;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            uint64_t i;
            yaml_node_t *n = yaml_document_get_node(&y->doc, *it);
            if ((rc = ffn_y_node_u64(y, n, "dense_layers", 0, m->layers - 1, &i))) return rc;
            m->layer_moe[i] = false;
        }
    }
    return 0;
}

static int load_yaml(ffn_ydoc *y, yaml_node_t *root, ffn_model *m)
{
    int rc, pos = 0, norm = 0, quant = 0;
    if ((rc = ffn_y_expect_map(y, root, "a model file")) ||
        (rc = ffn_y_check_keys(y, root, top_keys)))
        return rc;
    if ((rc = ffn_y_str(y, root, "name", true, m->name, sizeof m->name))) return rc;
    snprintf(m->family, sizeof m->family, "custom");
    char source[1024] = "";
    if ((rc = ffn_y_str(y, root, "family", false, m->family, sizeof m->family)) ||
        (rc = ffn_y_str(y, root, "source", false, source, sizeof source)))
        return rc;
    /* the checkpoint a serving engine would load: "org/name" of a huggingface.co source */
    static const char hf[] = "https://huggingface.co/";
    if (!strncmp(source, hf, sizeof hf - 1)) {
        const char *id = source + sizeof hf - 1, *a = strchr(id, '/');
        const char *b = a ? strpbrk(a + 1, "/ ") : NULL;
        size_t n = b ? (size_t)(b - id) : strlen(id);
        if (a && n < sizeof m->checkpoint)
            snprintf(m->checkpoint, sizeof m->checkpoint, "%.*s", (int)n, id);
    }
    yaml_node_t *notes = ffn_y_get(y, root, "notes", NULL);
    if (notes && !ffn_y_text(notes))
        return ffn_y_error(y, notes, FFN_ESCHEMA, "'notes' must be text");
    if ((rc = ffn_y_u64(y, root, "hidden", true, 1, FFN_MODEL_MAX_HIDDEN, &m->hidden)) ||
        (rc = ffn_y_u64(y, root, "layers", true, 1, FFN_MAX_LAYERS, &m->layers)) ||
        (rc = ffn_y_u64(y, root, "vocab", true, 1, FFN_MODEL_MAX_VOCAB, &m->vocab)) ||
        (rc = ffn_y_bool(y, root, "tied_embeddings", false, &m->tied_embeddings)) ||
        (rc = ffn_y_enum(y, root, "position", false, pos_names, &pos)) ||
        (rc = ffn_y_u64(y, root, "max_positions", false, 0, FFN_MODEL_MAX_POSITIONS,
                        &m->max_positions)) ||
        (rc = ffn_y_u64(y, root, "context", false, 1, FFN_MODEL_MAX_POSITIONS, &m->context)) ||
        (rc = ffn_y_u64(y, root, "type_vocab", false, 0, FFN_MODEL_MAX_TYPE_VOCAB,
                        &m->type_vocab)) ||
        (rc = ffn_y_enum(y, root, "norm", false, norm_names, &norm)) ||
        (rc = ffn_y_enum(y, root, "quantized", false, quant_names, &quant)))
        return rc;
    m->quantized_experts_only = quant == 1;
    m->pos = (ffn_pos_kind)pos;
    m->norm = (ffn_norm_kind)norm;
    if (!m->context) m->context = m->max_positions; /* a learned table's rows, or unknown */
    if (m->pos == FFN_POS_LEARNED && !m->max_positions)
        return ffn_y_error(y, ffn_y_get(y, root, "position", NULL), FFN_ESCHEMA,
                           "'position: learned' needs 'max_positions' > 0");
    m->norm_bias = m->norm == FFN_NORM_LAYERNORM; /* LayerNorm has a bias unless told */
    m->final_norm = true;
    if ((rc = ffn_y_bool(y, root, "norm_bias", false, &m->norm_bias)) ||
        (rc = ffn_y_bool(y, root, "final_norm", false, &m->final_norm)) ||
        (rc = ffn_y_bool(y, root, "embed_norm", false, &m->embed_norm)) ||
        (rc = ffn_y_bool(y, root, "sandwich_norm", false, &m->sandwich_norm)) ||
        (rc = ffn_y_bool(y, root, "pooler", false, &m->pooler)) ||
        (rc = ffn_y_bool(y, root, "parallel_block", false, &m->parallel_block)) ||
        (rc = ffn_y_u64(y, root, "encoder_layers", false, 0, m->layers - 1, &m->encoder_layers)))
        return rc;
    if ((rc = load_attention(y, root, m)) || (rc = load_ffn(y, root, m)) ||
        (rc = load_moe(y, root, m)))
        return rc;
    return ffn__model_finish(y, ffn_y_get(y, root, "layers", NULL), m);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

int ffn_model_load(const char *path, ffn_model *m, ffn_diag *diag)
{
    if (!m) return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0, "no model to fill");
    memset(m, 0, sizeof *m);
    ffn_diag_clear(diag);
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (!rc) {
        yaml_node_t *root = ffn_ydoc_root(&y);
        bool hf =
            root && root->type == YAML_MAPPING_NODE && ffn_y_get(&y, root, "model_type", NULL);
        if (hf || ends_with(path, ".json"))
            rc = ffn__hf_load(&y, root, m);
        else
            rc = load_yaml(&y, root, m);
    }
    ffn_ydoc_release(&y);
    if (rc) memset(m, 0, sizeof *m);
    return rc;
}
