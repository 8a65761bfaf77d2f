/* Model YAML loading (io/load/model_load.c): every file in models/ loads with its exact published
 * parameter count, the layer pattern of the MoE models is right, and each kind of bad input is
 * one diagnostic at the exact line:col of the culprit with the model left zeroed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/model.h"
#include "ffnroof/model_load.h"

static ffn_model m; /* large (layer_moe[]): static, not on the stack */

static int load(const char *rel, ffn_diag *d)
{
    char path[512];
    snprintf(path, sizeof path, "%s", rel);
    return ffn_model_load(path, &m, d);
}

typedef struct expect {
    const char *file;
    unsigned long long total;
    unsigned long long active;
} expect;

/* Each total is the sum of the checkpoint's parameter tensors; sources:
 * transformer-base: computed from the paper's shape (65M rounded in Table 3; see the file's notes)
 * bert-base 109,482,240, gpt2 124,439,808, llama2-7b 6,738,415,616, llama3-8b 8,030,261,248,
 *   mistral-7b 7,241,732,096, mixtral-8x7b 46,702,792,704, qwen3-30b-a3b 30,532,122,624,
 *   qwen3-235b-a22b 235,093,634,560: keras-hub presets ("params"), keras-team/keras-hub
 *   keras_hub/src/models/<family>/<family>_presets.py
 * llama2-13b 13,015,864,320 and llama2-70b 68,976,648,192: the HF API safetensors.total of
 *   meta-llama/Llama-2-{13,70}b-hf (13,015,866,880 and 68,976,653,312) less the rotary inv_freq
 *   buffers those checkpoints also store (64 values per layer), which are not parameters
 * llama3-70b 70,553,706,496 and llama3.1-405b 405,853,388,800: HF API safetensors.total of
 *   meta-llama/Llama-3.1-70B and -405B
 * qwen2.5-7b 7,615,616,512: keras-hub qwen2.5_math_7b_en (same architecture as Qwen2.5-7B)
 * deepseek-v3 671,026,419,200: the main model (61 layers, without the MTP module), as audited
 *   from the checkpoint headers by several public projects; technical report "671B"
 * deepseek-r1: DeepSeek-V3's architecture (its config.json sets the same shapes), so its count
 * deepseek-v2-lite 15,706,484,224: model card "15.7B", exact count from the config's tensors
 * mixtral-8x22b 140,620,634,112 and gpt3-175b: the tensors the config implies (no exact
 *   published count; GPT-3's paper rounds to 175.0B)
 * gpt-oss-120b 116,829,156,672 and gpt-oss-20b 20,914,757,184: the model card (arXiv:2508.10925,
 *   Table 1: 116.83B and 20.91B total; 5.13B and 3.61B active, which leave out the input embedding)
 * Active counts (MoE): total less (experts - top_k) routed experts per MoE layer. */
static const expect models[] = {
    {"transformer-base", 63082496ull, 63082496ull},
    {"bert-base", 109482240ull, 109482240ull},
    {"gpt2", 124439808ull, 124439808ull},
    {"gpt3-175b", 174604259328ull, 174604259328ull},
    {"llama2-7b", 6738415616ull, 6738415616ull},
    {"llama2-13b", 13015864320ull, 13015864320ull},
    {"llama2-70b", 68976648192ull, 68976648192ull},
    {"llama3-8b", 8030261248ull, 8030261248ull},
    {"llama3-70b", 70553706496ull, 70553706496ull},
    {"llama3.1-70b", 70553706496ull, 70553706496ull},
    {"llama3.1-405b", 405853388800ull, 405853388800ull},
    {"mistral-7b", 7241732096ull, 7241732096ull},
    {"mixtral-8x7b", 46702792704ull, 12879925248ull},
    {"mixtral-8x22b", 140620634112ull, 39152031744ull},
    {"qwen2.5-7b", 7615616512ull, 7615616512ull},
    {"qwen3-30b-a3b", 30532122624ull, 3353032704ull},
    {"qwen3-235b-a22b", 235093634560ull, 22190763520ull},
    {"deepseek-v2-lite", 15706484224ull, 2661150208ull},
    {"deepseek-v3", 671026419200ull, 37552297472ull},
    {"deepseek-r1", 671026419200ull, 37552297472ull},
    {"gpt-oss-120b", 116829156672ull, 5711982912ull},
    {"gpt-oss-20b", 20914757184ull, 4187440704ull},
};

Test(model, every_file_in_models_has_its_exact_total)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/models/%s.yaml", FFNROOF_SOURCE_DIR, models[i].file);
        ffn_diag d;
        int rc = ffn_model_load(path, &m, &d);
        char msg[1200];
        ffn_diag_format(&d, msg, sizeof msg);
        cr_assert_eq(rc, 0, "%s: %s", models[i].file, msg);
        cr_assert_str_eq(m.name, models[i].file);
        ffn_params p;
        cr_assert_eq(ffn_model_params(&m, &p), 0);
        cr_expect_eq(p.total, models[i].total, "%s: total %llu, want %llu", models[i].file,
                     (unsigned long long)p.total, models[i].total);
        cr_expect_eq(p.active, models[i].active, "%s: active %llu, want %llu", models[i].file,
                     (unsigned long long)p.active, models[i].active);
        cr_expect_eq(p.total, p.embedding + p.attention + p.ffn + p.router + p.norm + p.other);
        cr_expect(p.ffn_share > 0.2 && p.ffn_share < 1.0, "%s share %f", models[i].file,
                  p.ffn_share);
        /* every shipped file cites where its numbers come from */
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        char line[1024];
        bool has_source = false;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "source: ", 8) && strlen(line) > 20) has_source = true;
        fclose(f);
        cr_expect(has_source, "%s has no source:", models[i].file);
    }
}

Test(model, moe_layer_patterns)
{
    ffn_diag d;
    char path[512];
    snprintf(path, sizeof path, "%s/models/deepseek-v3.yaml", FFNROOF_SOURCE_DIR);
    cr_assert_eq(ffn_model_load(path, &m, &d), 0);
    cr_assert_eq(ffn_model_moe_layers(&m), 58); /* first_k_dense_replace 3 of 61 */
    cr_assert(!m.layer_moe[0] && !m.layer_moe[2] && m.layer_moe[3] && m.layer_moe[60]);
    cr_assert_eq(m.moe.n_experts, 256);
    cr_assert_eq(m.moe.top_k, 8);
    cr_assert_eq(m.moe.n_shared, 1);
    cr_assert_eq(m.moe.shared_intermediate, 2048);
    cr_assert_eq(m.moe.scoring, FFN_SCORE_SIGMOID);
    cr_assert_eq(m.moe.n_group, 8);
    cr_assert_eq(m.moe.topk_group, 4);
    cr_assert(m.moe.router_bias);
    cr_assert_float_eq(m.moe.routing_alpha, 1.01, 1e-12); /* aiconfigurator's observation */
    cr_assert_eq(m.attn.n_kv_heads, 128);
    cr_assert_eq(m.intermediate, 18432);

    snprintf(path, sizeof path, "%s/models/mixtral-8x7b.yaml", FFNROOF_SOURCE_DIR);
    cr_assert_eq(ffn_model_load(path, &m, &d), 0);
    cr_assert_eq(ffn_model_moe_layers(&m), 32);
    cr_assert_eq(m.act, FFN_ACT_SWIGLU);
    cr_assert_eq(m.moe.routing_alpha, 0.0); /* none stated: balanced */

    snprintf(path, sizeof path, "%s/models/llama2-7b.yaml", FFNROOF_SOURCE_DIR);
    cr_assert_eq(ffn_model_load(path, &m, &d), 0);
    cr_assert_eq(ffn_model_moe_layers(&m), 0);
    cr_assert_eq(m.intermediate, ffn_swiglu_intermediate(m.hidden, 256));
}

Test(model, defaults_of_a_minimal_file)
{
    ffn_diag d;
    cr_assert_eq(load(FFNROOF_TEST_DATA "/models/tiny.yaml", &d), 0);
    cr_assert_str_eq(m.name, "tiny");
    cr_assert_str_eq(m.family, "custom");
    cr_assert_eq(m.attn.n_kv_heads, 4);
    cr_assert_eq(m.attn.head_dim, 16);
    cr_assert_eq(m.pos, FFN_POS_ROPE);
    cr_assert_eq(m.norm, FFN_NORM_RMSNORM);
    cr_assert(m.final_norm && !m.tied_embeddings && !m.mlp_bias && !m.norm_bias);
    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    /* 2 x 100 x 64 embeddings + 2 x (4 x 64^2 + 3 x 64 x 128 + 2 x 64) + 64 */
    cr_assert_eq(p.total, 2u * 100 * 64 + 2u * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64);
}

typedef struct bad {
    const char *file;
    int code;
    int line, col;
    const char *text; /* must appear in the message */
} bad;

static const bad bads[] = {
    {"bad-syntax.yaml", FFN_EPARSE, 3, 7, "syntax error"},
    {"bad-type.yaml", FFN_ESCHEMA, 2, 9, "'hidden' must be an integer"},
    {"bad-missing.yaml", FFN_ESCHEMA, 1, 1, "missing key 'hidden'"},
    {"bad-unknown.yaml", FFN_ESCHEMA, 2, 1, "did you mean 'hidden'"},
    {"bad-zero.yaml", FFN_ERANGE, 3, 9, "'layers' = 0 is out of range"},
    {"bad-negative.yaml", FFN_ERANGE, 4, 8, "'vocab' must not be negative"},
    {"bad-nan.yaml", FFN_ERANGE, 6, 55, "'dropout' must be a finite number"},
    {"bad-absurd.yaml", FFN_ERANGE, 2, 9, "'hidden' = 1000000000000000 is out of range"},
    {"bad-activation.yaml", FFN_ESCHEMA, 7, 15, "'activation' must be one of"},
    {"bad-topk.yaml", FFN_ERANGE, 9, 10, "'top_k' = 9 exceeds 'experts' = 8"},
    {"bad-overflow.yaml", FFN_EOVERFLOW, 4, 9, "overflows 64 bits"},
    {"bad-heads.yaml", FFN_ESCHEMA, 5, 33, "'kv_heads' = 3 must divide"},
    {"bad-learned.yaml", FFN_ESCHEMA, 5, 11, "max_positions"},
    {"bad-dense-layer.yaml", FFN_ERANGE, 7, 72, "'dense_layers' = 7 is out of range"},
    {"bad-routing-alpha.yaml", FFN_ERANGE, 11, 18, "'routing_alpha'"},
};

Test(model, each_bad_input_is_one_diagnostic_at_the_culprit)
{
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/models/%s", FFNROOF_TEST_DATA, bads[i].file);
        ffn_diag d;
        memset(&m, 0x5a, sizeof m);
        int rc = ffn_model_load(path, &m, &d);
        char msg[1200];
        ffn_diag_format(&d, msg, sizeof msg);
        cr_expect_eq(rc, bads[i].code, "%s: rc %d (%s), want %d; %s", bads[i].file, rc,
                     ffn_err_name(rc), bads[i].code, msg);
        cr_expect_eq(d.line, bads[i].line, "%s: line %d; %s", bads[i].file, d.line, msg);
        cr_expect_eq(d.col, bads[i].col, "%s: col %d; %s", bads[i].file, d.col, msg);
        cr_expect(strstr(d.msg, bads[i].text) != NULL, "%s: '%s' lacks '%s'", bads[i].file, d.msg,
                  bads[i].text);
        cr_expect(strstr(msg, bads[i].file) == msg + strlen(FFNROOF_TEST_DATA "/models/"),
                  "the diagnostic starts with the file: %s", msg);
        cr_expect(!strchr(d.msg, '\n'), "one line");
        static const ffn_model zero;
        cr_expect(!memcmp(&m, &zero, sizeof m), "%s: model not zeroed", bads[i].file);
    }
}

Test(model, missing_file)
{
    ffn_diag d;
    int rc = load(FFNROOF_TEST_DATA "/models/no-such-model.yaml", &d);
    cr_assert_eq(rc, FFN_EIO);
    cr_assert(strstr(d.file, "no-such-model.yaml"));
    cr_assert(strstr(d.msg, "cannot open"));
    cr_assert_eq(ffn_model_load(NULL, &m, &d), FFN_EINVAL);
    cr_assert_eq(ffn_model_load("x.yaml", NULL, &d), FFN_EINVAL);
}
