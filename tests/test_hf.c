/* Hugging Face config.json import (io/load/hf_load.c): one real config per supported model_type in
 * tests/data/hf/ (provenance in tests/data/hf/SOURCES.md) gives the exact parameter count of
 * its checkpoint, the YAML files in models/ agree with the configs they were written from, and
 * bad configs fail with one diagnostic at the culprit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/model.h"
#include "ffnroof/model_load.h"

static ffn_model m, m2;

typedef struct hf_case {
    const char *file;
    const char *family;
    unsigned long long total;
    unsigned long long moe_layers;
} hf_case;

/* Totals, each the sum of the checkpoint's parameter tensors:
 *  Llama-3.1-8B 8,030,261,248: HF API safetensors.total; keras-hub llama3_8b_en
 *  Mistral-7B 7,241,732,096, Mixtral-8x7B 46,702,792,704, Qwen1.5-MoE-A2.7B 14,315,784,192,
 *   Qwen3-8B 8,190,735,360, Qwen3-30B-A3B 30,532,122,624, Gemma-2B 2,506,172,416,
 *   Gemma-2-2B 2,614,341,888, GPT-2 124,439,808, Phi-3-mini 3,821,079,552: keras-hub presets
 *   (keras-team/keras-hub keras_hub/src/models/<family>/<family>_presets.py, "params")
 *  Qwen2.5-7B 7,615,616,512: model card "7.61B"; keras-hub qwen2.5_math_7b_en (same shape)
 *  Pythia-70M 70,426,624: Pythia paper (arXiv:2304.01373) Table 1 non-embedding 18,915,328
 *   plus the untied embed_in and embed_out (2 x 50304 x 512)
 *  DeepSeek-V2-Lite 15,706,484,224 ("15.7B"), OLMoE-1B-7B-0924 6,919,161,856 ("6.92B" on the
 *   model page): the tensors of the config, which round to the published figures
 *  DeepSeek-V3 671,026,419,200: the main model without the MTP layer (technical report 671B)
 *  gpt-oss-120b 116,829,156,672: the model card (arXiv:2508.10925, Table 1: 116.83B total) */
static const hf_case cases[] = {
    {"llama-llama3.1-8b.json", "llama", 8030261248ull, 0},
    {"mistral-mistral-7b.json", "mistral", 7241732096ull, 0},
    {"mixtral-mixtral-8x7b.json", "mixtral", 46702792704ull, 32},
    {"qwen2-qwen2.5-7b.json", "qwen2", 7615616512ull, 0},
    {"qwen2_moe-qwen1.5-moe-a2.7b.json", "qwen2_moe", 14315784192ull, 24},
    {"qwen3-qwen3-8b.json", "qwen3", 8190735360ull, 0},
    {"qwen3_moe-qwen3-30b-a3b.json", "qwen3_moe", 30532122624ull, 48},
    {"deepseek_v2-deepseek-v2-lite.json", "deepseek_v2", 15706484224ull, 26},
    {"deepseek_v3-deepseek-v3.json", "deepseek_v3", 671026419200ull, 58},
    {"gpt2-gpt2.json", "gpt2", 124439808ull, 0},
    {"gpt_neox-pythia-70m.json", "gpt_neox", 70426624ull, 0},
    {"phi3-phi-3-mini-4k-instruct.json", "phi3", 3821079552ull, 0},
    {"gemma-gemma-2b.json", "gemma", 2506172416ull, 0},
    {"gemma2-gemma-2-2b.json", "gemma2", 2614341888ull, 0},
    {"olmoe-olmoe-1b-7b-0924.json", "olmoe", 6919161856ull, 16},
    {"gpt_oss-gpt-oss-120b.json", "gpt_oss", 116829156672ull, 36},
};

static int load_hf(const char *file, ffn_model *out, ffn_diag *d)
{
    char path[512];
    snprintf(path, sizeof path, "%s/hf/%s", FFNROOF_TEST_DATA, file);
    return ffn_model_load(path, out, d);
}

Test(hf, every_model_type_has_its_exact_total)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ffn_diag d;
        int rc = load_hf(cases[i].file, &m, &d);
        char msg[1200];
        ffn_diag_format(&d, msg, sizeof msg);
        cr_assert_eq(rc, 0, "%s: %s", cases[i].file, msg);
        cr_expect_str_eq(m.family, cases[i].family);
        ffn_params p;
        cr_assert_eq(ffn_model_params(&m, &p), 0);
        cr_expect_eq(p.total, cases[i].total, "%s: total %llu, want %llu", cases[i].file,
                     (unsigned long long)p.total, cases[i].total);
        cr_expect_eq(ffn_model_moe_layers(&m), cases[i].moe_layers, "%s", cases[i].file);
        cr_expect_eq(p.total, p.embedding + p.attention + p.ffn + p.router + p.norm + p.other);
    }
}

Test(hf, every_supported_type_has_a_fixture)
{
    static const char *const types[] = {"llama",       "mistral", "mixtral",   "qwen2",
                                        "qwen2_moe",   "qwen3",   "qwen3_moe", "deepseek_v2",
                                        "deepseek_v3", "gpt2",    "gpt_neox",  "phi3",
                                        "gemma",       "gemma2",  "olmoe",     "gpt_oss"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        bool found = false;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            found |= !strcmp(cases[i].family, types[t]);
        cr_expect(found, "no fixture for %s", types[t]);
    }
}

Test(hf, fields_that_change_counts_are_honoured)
{
    ffn_diag d;
    cr_assert_eq(load_hf("gpt2-gpt2.json", &m, &d), 0);
    cr_expect_eq(m.intermediate, 4 * 768, "n_inner absent = 4 n_embd");
    cr_expect_eq(m.act, FFN_ACT_GELU_TANH);
    cr_expect(m.tied_embeddings && m.attn.qkv_bias && m.mlp_bias && m.norm_bias);
    cr_expect_eq(m.pos, FFN_POS_LEARNED);
    cr_expect_eq(m.max_positions, 1024);

    cr_assert_eq(load_hf("qwen2-qwen2.5-7b.json", &m, &d), 0);
    cr_expect(m.attn.qkv_bias && !m.attn.out_bias);

    cr_assert_eq(load_hf("gemma-gemma-2b.json", &m, &d), 0);
    cr_expect(m.tied_embeddings, "gemma ties embeddings by default");
    cr_expect_eq(m.act, FFN_ACT_GEGLU);
    cr_expect_eq(m.attn.head_dim, 256);
    cr_expect_eq(m.attn.n_kv_heads, 1);

    cr_assert_eq(load_hf("gemma2-gemma-2-2b.json", &m, &d), 0);
    cr_expect(m.sandwich_norm);

    cr_assert_eq(load_hf("gpt_neox-pythia-70m.json", &m, &d), 0);
    cr_expect(!m.tied_embeddings && m.parallel_block && m.attn.qkv_bias && m.mlp_bias);
    cr_expect_eq(m.act, FFN_ACT_GELU);

    cr_assert_eq(load_hf("qwen2_moe-qwen1.5-moe-a2.7b.json", &m, &d), 0);
    cr_expect_eq(m.moe.n_shared, 1);
    cr_expect_eq(m.moe.shared_intermediate, 5632);
    cr_expect(m.moe.shared_gate && !m.moe.norm_topk);
    cr_expect_eq(m.moe.expert_intermediate, 1408);

    cr_assert_eq(load_hf("olmoe-olmoe-1b-7b-0924.json", &m, &d), 0);
    cr_expect(m.attn.qk_norm && m.attn.qk_norm_full);

    /* gpt-oss: biased attention with sinks, biased experts and router, 18 of the 36 layers on a
     * 128-token window (layer_types) */
    cr_assert_eq(load_hf("gpt_oss-gpt-oss-120b.json", &m, &d), 0, "%s", d.msg);
    cr_expect(m.attn.sinks && m.attn.qkv_bias && m.attn.out_bias && m.mlp_bias);
    cr_expect(m.moe.router_bias && m.moe.norm_topk && !m.tied_embeddings);
    cr_expect_eq(m.attn.window, 128);
    cr_expect_eq(m.attn.window_layers, 18);
    cr_expect_eq(m.attn.head_dim, 64);
    cr_expect_eq(m.moe.n_experts, 128);
    cr_expect_eq(m.moe.top_k, 4);

    cr_assert_eq(load_hf("deepseek_v2-deepseek-v2-lite.json", &m, &d), 0);
    cr_expect_eq(m.attn.q_lora_rank, 0, "q_lora_rank null = no query compression");
    cr_expect_eq(m.moe.n_group, 0, "greedy top-k: no group limit");
    cr_expect(!m.moe.router_bias);
    cr_expect(!m.layer_moe[0] && m.layer_moe[1]);

    cr_assert_eq(load_hf("deepseek_v3-deepseek-v3.json", &m, &d), 0);
    cr_expect(m.moe.router_bias && m.moe.norm_topk);
    cr_expect_eq(m.moe.scoring, FFN_SCORE_SIGMOID);
    cr_expect_eq(m.moe.n_group, 8);
    cr_expect_eq(m.moe.topk_group, 4);
}

/* The same architecture through both doors gives the same model. */
Test(hf, yaml_and_hf_agree)
{
    static const struct {
        const char *hf, *yaml;
    } pairs[] = {
        {"qwen2-qwen2.5-7b.json", "qwen2.5-7b"},
        {"qwen3_moe-qwen3-30b-a3b.json", "qwen3-30b-a3b"},
        {"mixtral-mixtral-8x7b.json", "mixtral-8x7b"},
        {"mistral-mistral-7b.json", "mistral-7b"},
        {"deepseek_v2-deepseek-v2-lite.json", "deepseek-v2-lite"},
        {"deepseek_v3-deepseek-v3.json", "deepseek-v3"},
        {"gpt2-gpt2.json", "gpt2"},
        {"llama-llama3.1-8b.json", "llama3-8b"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        ffn_diag d;
        char path[512];
        snprintf(path, sizeof path, "%s/models/%s.yaml", FFNROOF_SOURCE_DIR, pairs[i].yaml);
        cr_assert_eq(load_hf(pairs[i].hf, &m, &d), 0, "%s", pairs[i].hf);
        cr_assert_eq(ffn_model_load(path, &m2, &d), 0, "%s", pairs[i].yaml);
        ffn_params a, b;
        cr_assert_eq(ffn_model_params(&m, &a), 0);
        cr_assert_eq(ffn_model_params(&m2, &b), 0);
        cr_expect_eq(a.total, b.total, "%s", pairs[i].yaml);
        cr_expect_eq(a.active, b.active, "%s", pairs[i].yaml);
        cr_expect_eq(a.ffn, b.ffn, "%s", pairs[i].yaml);
        cr_expect_eq(m.hidden, m2.hidden);
        cr_expect_eq(m.intermediate, m2.intermediate, "%s", pairs[i].yaml);
        cr_expect_eq(m.act, m2.act, "%s", pairs[i].yaml);
        cr_expect_eq(m.moe.n_experts, m2.moe.n_experts);
        cr_expect_eq(m.moe.top_k, m2.moe.top_k);
        cr_expect_eq(m.moe.expert_intermediate, m2.moe.expert_intermediate);
        cr_expect(!memcmp(m.layer_moe, m2.layer_moe, sizeof m.layer_moe), "%s", pairs[i].yaml);
    }
}

Test(hf, qwen_layer_pattern_and_mlp_only_layers)
{
    /* decoder_sparse_step 2: layers 1, 3, 5 sparse; mlp_only_layers [3] makes 3 dense */
    char path[] = "/tmp/ffnroof-test-hf-qwen-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(
        "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 64, \"intermediate_size\": 96,\n"
        " \"moe_intermediate_size\": 32, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,\n"
        " \"head_dim\": 16, \"num_hidden_layers\": 6, \"num_experts\": 4,\n"
        " \"num_experts_per_tok\": 2, \"decoder_sparse_step\": 2, \"mlp_only_layers\": [3],\n"
        " \"vocab_size\": 10}\n",
        f);
    fclose(f);
    ffn_diag d;
    int rc = ffn_model_load(path, &m, &d);
    remove(path);
    cr_assert_eq(rc, 0, "%s", d.msg);
    bool want[6] = {false, true, false, false, false, true};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(m.layer_moe[i], want[i], "layer %d", i);
    cr_expect_eq(ffn_model_moe_layers(&m), 2);
}

typedef struct bad {
    const char *file;
    int code, line, col;
    const char *text;
} bad;

Test(hf, bad_configs)
{
    static const bad bads[] = {
        {"unsupported.json", FFN_EUNSUPPORTED, 4, 17, "unsupported model_type 'bloom'"},
        {"no-model-type.json", FFN_ESCHEMA, 1, 1, "missing key 'model_type'"},
        {"bad-topk.json", FFN_ERANGE, 8, 26, "exceeds 'num_local_experts'"},
        {"bad-act.json", FFN_EUNSUPPORTED, 3, 17, "unsupported activation 'mish'"},
        {"bad-layer-types.json", FFN_EUNSUPPORTED, 7, 58, "'local_attention'"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/hf/bad/%s", FFNROOF_TEST_DATA, bads[i].file);
        ffn_diag d;
        int rc = ffn_model_load(path, &m, &d);
        cr_expect_eq(rc, bads[i].code, "%s: %d %s", bads[i].file, rc, d.msg);
        cr_expect_eq(d.line, bads[i].line, "%s: line %d", bads[i].file, d.line);
        cr_expect_eq(d.col, bads[i].col, "%s: col %d", bads[i].file, d.col);
        cr_expect(strstr(d.msg, bads[i].text), "%s: %s", bads[i].file, d.msg);
        cr_expect_eq(m.hidden, 0, "zeroed on error");
    }
    /* the unsupported-type message lists every supported type */
    ffn_diag d;
    char path[512];
    snprintf(path, sizeof path, "%s/hf/bad/unsupported.json", FFNROOF_TEST_DATA);
    ffn_model_load(path, &m, &d);
    static const char *const types[] = {
        "llama", "mistral",  "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
        "gpt2",  "gpt_neox", "phi3",    "gemma2",    "olmoe",     "gpt_oss"};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        cr_expect(strstr(d.msg, types[t]), "'%s' not listed: %s", types[t], d.msg);
}
