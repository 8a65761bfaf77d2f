/* No untested cliff: for every shipped model on GPUs of three vendors' tile sets, the FFN layer's
 * predicted time is walked over 1..8192 tokens, and every step up by more than the smooth growth
 * of one more token (1/T, plus 3%) must have a reason the model can name: a GEMM whose tiles or
 * waves got worse (its useful share of the work paid for fell, or it needs another wave of
 * tiles; on a spec with the tile pipeline, its best configuration's time grew faster than its
 * rows), or, in an MoE layer, more experts touched on the busiest device. A step with none of
 * these fails, and the message says where. The reasons found are counted, so a change that
 * moves a cliff shows up here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"
#include "ffnroof/sim.h"

enum { T_MAX = 8192 };

static const char *why_step(const ffn_hw *hw, const ffn_layer_cost *a, const ffn_layer_cost *b,
                            const ffn_moe_detail *da, const ffn_moe_detail *db)
{
    if (db && da && db->stats.experts_touched_device > da->stats.experts_touched_device + 1e-9)
        return "more experts touched";
    for (int i = 0; i < a->n_ops && i < b->n_ops; i++) {
        const ffn_op *x = &a->ops[i], *y = &b->ops[i];
        if (x->kind != FFN_OP_GEMM || y->kind != FFN_OP_GEMM || strcmp(x->name, y->name)) continue;
        if (hw->eff.pipeline) {
            /* the tile pipeline: its time grew faster than its rows, so the best configuration
             * took another wave, tile or pipeline step */
            const double px =
                ffn_pipeline_compute_s(hw, x->m, x->n, x->k, x->instances, x->compute_dtype);
            const double py =
                ffn_pipeline_compute_s(hw, y->m, y->n, y->k, y->instances, y->compute_dtype);
            if (px > 0 && py > px * ((double)y->m / (double)x->m) * 1.01) return "a tile boundary";
            continue;
        }
        const double ex = ffn_wave_efficiency(hw, x->m, x->n, x->k, x->instances, x->compute_dtype);
        const double ey = ffn_wave_efficiency(hw, y->m, y->n, y->k, y->instances, y->compute_dtype);
        if (ey < ex * 0.99) return "a tile boundary";
        if (ffn_wave_count(hw, y->m, y->n, y->k, y->instances, y->compute_dtype) >
            ffn_wave_count(hw, x->m, x->n, x->k, x->instances, x->compute_dtype))
            return "a wave boundary";
    }
    return NULL;
}

Test(cliffs, every_step_has_a_reason, .timeout = 600)
{
    static const char *const models[] = {
        "bert-base",       "deepseek-v2-lite", "deepseek-v3",     "gpt2",         "gpt3-175b",
        "llama2-13b",      "llama2-70b",       "llama2-7b",       "llama3-70b",   "llama3-8b",
        "llama3.1-405b",   "mistral-7b",       "mixtral-8x22b",   "mixtral-8x7b", "qwen2.5-7b",
        "qwen3-235b-a22b", "qwen3-30b-a3b",    "transformer-base"};
    static const char *const hws[] = {"h100-sxm", "mi300x", "b200"};
    static ffn_model m;
    static ffn_hw hw;
    static ffn_layer_cost prev, cur;
    static ffn_moe_detail dprev, dcur;
    int named[3] = {0}, walks = 0;
    for (size_t a = 0; a < sizeof models / sizeof *models; a++)
        for (size_t b = 0; b < sizeof hws / sizeof *hws; b++) {
            char p[512];
            ffn_diag d;
            snprintf(p, sizeof p, "%s/models/%s.yaml", FFNROOF_SOURCE_DIR, models[a]);
            cr_assert_eq(ffn_model_load(p, &m, &d), 0, "%s: %s", p, d.msg);
            snprintf(p, sizeof p, "%s/hw/%s.yaml", FFNROOF_SOURCE_DIR, hws[b]);
            cr_assert_eq(ffn_hw_load(p, &hw, &d), 0, "%s: %s", p, d.msg);
            ffn_run r;
            ffn_run_default(&r);
            r.phase = FFN_PHASE_DECODE;
            const bool moe = ffn_model_moe_layers(&m) > 0;
            for (int kind = 0; kind < 2; kind++) { /* the dense layer, then the MoE layer */
                if (kind == 0 && m.layers == ffn_model_moe_layers(&m)) continue;
                if (kind == 1 && !moe) continue;
                walks++;
                for (uint64_t T = 1; T <= T_MAX; T++) {
                    int rc = kind == 0 ? ffn_dense_layer(&hw, &r, m.hidden, m.intermediate, m.act,
                                                         m.mlp_bias, T, &cur)
                                       : ffn_moe_layer(&m, &hw, &r, T, &cur, &dcur, &d);
                    cr_assert_eq(rc, 0, "%s on %s, T %llu", models[a], hws[b],
                                 (unsigned long long)T);
                    if (T > 1 &&
                        cur.predicted_s > prev.predicted_s * (1.0 + 1.0 / (double)T + 0.03)) {
                        const char *why =
                            why_step(&hw, &prev, &cur, kind ? &dprev : NULL, kind ? &dcur : NULL);
                        cr_expect_not_null(why,
                                           "%s on %s, %s layer: %llu -> %llu tokens takes %.4g -> "
                                           "%.4g us (x%.3f) and the model cannot say why",
                                           models[a], hws[b], kind ? "MoE" : "dense",
                                           (unsigned long long)(T - 1), (unsigned long long)T,
                                           1e6 * prev.predicted_s, 1e6 * cur.predicted_s,
                                           cur.predicted_s / prev.predicted_s);
                        if (why) named[why[0] == 'm' ? 0 : why[2] == 't' ? 1 : 2]++;
                    }
                    memcpy(&prev, &cur, sizeof cur);
                    memcpy(&dprev, &dcur, sizeof dcur);
                }
            }
        }
    cr_expect_gt(walks, 50);
    cr_log_info("named steps: %d more experts touched, %d tile boundaries, %d wave boundaries",
                named[0], named[1], named[2]);
}
