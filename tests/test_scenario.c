/* Scenario loader (io/load/scenario_load.c): every shipped scenario loads; the grid syntax; bad
 * input is one "file:line:col: message" naming the key (syntax, unknown keys with a suggestion,
 * empty grids, a device limit of 0, unknown dtypes, prices for devices not in the scenario); lookup
 * of models and devices lists the known names or says how to make a missing calibrated spec. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/scenario.h"

static char tmp_path[256];

static void setup(void)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ffnroof-scenario-%d.yaml", (int)getpid());
}

static void teardown(void)
{
    unlink(tmp_path);
}

TestSuite(scenario, .init = setup, .fini = teardown);

static int load_text(const char *text, ffn_scenario *sc, ffn_diag *d)
{
    FILE *fp = fopen(tmp_path, "w");
    cr_assert_not_null(fp);
    fputs(text, fp);
    fclose(fp);
    ffn_diag_clear(d);
    return ffn_scenario_load(tmp_path, sc, d);
}

#define HEAD "name: t\nmodel: llama3-8b\nhw: h100-sxm\n"

Test(scenario, every_shipped_scenario_loads)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/scenarios", FFNROOF_SOURCE_DIR);
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp);
    struct dirent *e;
    int n = 0;
    char hw_dir[600], m_dir[600];
    snprintf(hw_dir, sizeof hw_dir, "%s/hw", FFNROOF_SOURCE_DIR);
    snprintf(m_dir, sizeof m_dir, "%s/models", FFNROOF_SOURCE_DIR);
    while ((e = readdir(dp))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".yaml")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        static ffn_scenario sc;
        ffn_diag d;
        cr_assert_eq(ffn_scenario_load(p, &sc, &d), 0, "%s:%d:%d: %s", d.file, d.line, d.col,
                     d.msg);
        cr_assert_gt(sc.n_models, 0);
        cr_assert_gt(sc.n_hws, 0);
        cr_assert(strlen(sc.description) > 0, "%s has no description", p);
        /* every model and device resolves, except the calibrated host spec, which may not be
         * there yet and then must say how to make it */
        static ffn_model models[FFN_SC_MAX_REFS];
        static ffn_hw hws[FFN_SC_MAX_REFS];
        int rc = ffn_scenario_load_inputs(&sc, hw_dir, m_dir, hws, models, &d);
        if (rc) {
            cr_assert(strstr(d.msg, "ffnroof calibrate") != NULL, "%s: %s", p, d.msg);
            cr_assert_gt(d.line, 0);
        }
        ffn_scenario_release(&sc);
        n++;
    }
    closedir(dp);
    cr_assert_geq(n, 6);
}

Test(scenario, full_example)
{
    static ffn_scenario sc;
    ffn_diag d;
    int rc = load_text("name: x\ndescription: all keys\nmodel: [llama3-8b, ../m/custom.yaml]\n"
                       "hw: [h100-sxm, h200]\nphase: both\nprompt: 4096\noutput: 128\n"
                       "prefill_batch: 4\nchunk: 512\nwdtype: int4\nadtype: bf16\nkv_dtype: fp8\n"
                       "group_size: 64\nzero_point: true\nact_io_dtype: fp32\nfused: false\n"
                       "slo: {tpot: 40 ms, ttft: 2 s}\n"
                       "target: {tokens_per_s: 5000}\n"
                       "limits: {max_devices: 16, max_batch: 512, memory_utilization: 0.85}\n"
                       "layouts: {tp: [1, 2, 4], ep: 1-8:x2, ep_uneven: true}\n"
                       "moe: {zipf: 1.1, trials: 16, seed: 7, capacity_factor: 1.25}\n"
                       "objective: tokens_per_dollar\nprice_per_hour: {h200: 3.5}\n"
                       "sweep: {phase: decode, batch: '1-64:x2', seq: [128, 256-1024:256],\n"
                       "        tp: [1, 2], dtype: [bf16, int4/bf16]}\n",
                       &sc, &d);
    cr_assert_eq(rc, 0, "%d:%d: %s", d.line, d.col, d.msg);
    cr_assert_eq(sc.n_models, 2);
    cr_assert_str_eq(sc.models[1].name, "../m/custom.yaml");
    cr_assert_eq(sc.models[1].line, 3);
    cr_assert_eq(sc.plan.phase, FFN_PLAN_BOTH);
    cr_assert_eq(sc.plan.prompt, 4096);
    cr_assert_eq(sc.plan.wdtype, FFN_DT_INT4);
    cr_assert_eq(sc.plan.kv_dtype, FFN_DT_FP8);
    cr_assert_eq(sc.plan.group_size, 64);
    cr_assert(sc.plan.zero_point);
    cr_assert_eq(sc.plan.act_io_dtype, FFN_DT_FP32);
    cr_assert_not(sc.plan.fused);
    cr_assert_float_eq(sc.plan.tpot_s, 0.040, 1e-15);
    cr_assert_float_eq(sc.plan.ttft_s, 2.0, 1e-15);
    cr_assert_float_eq(sc.plan.target_tokens_per_s, 5000, 1e-9);
    cr_assert_eq(sc.plan.max_devices, 16);
    cr_assert_float_eq(sc.plan.mem_utilization, 0.85, 1e-15);
    cr_assert_eq(sc.plan.n_tp, 3);
    cr_assert_eq(sc.plan.n_ep, 4); /* 1 2 4 8 */
    cr_assert_eq(sc.plan.ep[3], 8);
    cr_assert(sc.plan.moe.ep_uneven);
    cr_assert_eq(sc.plan.moe.trials, 16);
    cr_assert_eq(sc.plan.objective, FFN_OBJ_TOKENS_PER_DOLLAR);
    cr_assert_float_eq(sc.price_per_hour[1], 3.5, 1e-12);
    cr_assert_eq(sc.price_per_hour[0], 0);
    cr_assert_eq(sc.sweep_phases, FFN_SWEEP_DECODE);
    cr_assert_eq(sc.n_batch, 7);
    cr_assert_eq(sc.batch[6], 64);
    cr_assert_eq(sc.n_seq, 5); /* 128, 256, 512, 768, 1024 */
    cr_assert_eq(sc.seq[4], 1024);
    cr_assert_eq(sc.n_sweep_dtype, 2);
    cr_assert_eq(sc.sweep_wdtype[1], FFN_DT_INT4);
    cr_assert_eq(sc.sweep_adtype[1], FFN_DT_BF16);
    ffn_scenario_release(&sc);
    cr_assert_null(sc.batch);
}

Test(scenario, sweep_defaults)
{
    static ffn_scenario sc;
    ffn_diag d;
    cr_assert_eq(load_text(HEAD "prompt: 333\n", &sc, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_scenario_sweep_defaults(&sc), 0);
    cr_assert_eq(sc.n_batch, 1);
    cr_assert_eq(sc.seq[0], 333);
    cr_assert_eq(sc.sweep_phases, FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE);
    cr_assert_eq(sc.n_sweep_dtype, 1);
    ffn_scenario_release(&sc);
}

Test(scenario, grid_syntax)
{
    uint64_t v[64];
    size_t n;
    char why[128];
    cr_assert_eq(ffn_grid_parse("1,8,64", 1, 100, v, 64, &n, why, sizeof why), 0);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[2], 64);
    cr_assert_eq(ffn_grid_parse("1-4096:x2", 1, 1u << 20, v, 64, &n, why, sizeof why), 0);
    cr_assert_eq(n, 13);
    cr_assert_eq(v[12], 4096);
    cr_assert_eq(ffn_grid_parse("16-64:16, 100", 1, 1000, v, 64, &n, why, sizeof why), 0);
    cr_assert_eq(n, 5);
    cr_assert_eq(v[3], 64);
    cr_assert_eq(v[4], 100);
    cr_assert_eq(ffn_grid_parse("1-10", 1, 100, v, 64, &n, why, sizeof why), 0);
    cr_assert_eq(n, 10);
    cr_assert_eq(ffn_grid_parse("", 1, 100, v, 64, &n, why, sizeof why), FFN_ERANGE);
    cr_assert(strstr(why, "empty") != NULL);
    cr_assert_eq(ffn_grid_parse("10-1", 1, 100, v, 64, &n, why, sizeof why), FFN_ERANGE);
    cr_assert_eq(ffn_grid_parse("1-8:x1", 1, 100, v, 64, &n, why, sizeof why), FFN_ERANGE);
    cr_assert_eq(ffn_grid_parse("1-8:0", 1, 100, v, 64, &n, why, sizeof why), FFN_ERANGE);
    cr_assert_eq(ffn_grid_parse("a", 1, 100, v, 64, &n, why, sizeof why), FFN_EPARSE);
    cr_assert_eq(ffn_grid_parse("1,", 1, 100, v, 64, &n, why, sizeof why), FFN_EPARSE);
    cr_assert_eq(ffn_grid_parse("0", 1, 100, v, 64, &n, why, sizeof why), FFN_ERANGE);
    cr_assert_eq(ffn_grid_parse("1-100", 1, 100, v, 64, &n, why, sizeof why), FFN_ENOSPACE);
    cr_assert_eq(ffn_grid_parse("99999999999999999999999", 1, 100, v, 64, &n, why, sizeof why),
                 FFN_ERANGE);
    ffn_dtype w, a;
    cr_assert_eq(ffn_dtype_pair_parse("int4/bf16", &w, &a), 0);
    cr_assert_eq(w, FFN_DT_INT4);
    cr_assert_eq(a, FFN_DT_BF16);
    cr_assert_eq(ffn_dtype_pair_parse("fp8", &w, &a), 0);
    cr_assert_eq(a, FFN_DT_FP8);
    cr_assert_neq(ffn_dtype_pair_parse("fp7", &w, &a), 0);
    cr_assert_neq(ffn_dtype_pair_parse("/bf16", &w, &a), 0);
}

/* Each bad input: the code, the position and a word of the message. */
Test(scenario, bad_input_names_file_line_col)
{
    static const struct {
        const char *text;
        int err, line, col;
        const char *word;
    } cases[] = {
        {"name: t\nmodel: [llama3-8b\nhw: h100-sxm\n", FFN_EPARSE, 3, 3, "syntax"},
        {HEAD "promt: 100\n", FFN_ESCHEMA, 4, 1, "did you mean 'prompt'"},
        {HEAD "slo: {tpot: 50 ms, tft: 1 s}\n", FFN_ESCHEMA, 4, 20, "did you mean 'ttft'"},
        {HEAD "slo: {tpot: 50 furlongs}\n", FFN_EPARSE, 4, 13, "tpot"},
        {HEAD "slo: {tpot: 50}\n", FFN_ESCHEMA, 4, 13, "tpot"},
        {HEAD "limits: {max_devices: 0}\n", FFN_ERANGE, 4, 23, "at least one device"},
        {HEAD "sweep: {batch: []}\n", FFN_ERANGE, 4, 16, "empty grid"},
        {HEAD "sweep: {batch: }\n", FFN_ERANGE, 4, 9, "empty grid"},
        {HEAD "sweep: {batch: '8-1'}\n", FFN_ERANGE, 4, 16, "empty range"},
        {HEAD "sweep: {seq: [1, x]}\n", FFN_EPARSE, 4, 18, "not a whole number"},
        {HEAD "dtype: bf17\n", FFN_ESCHEMA, 4, 8, "unknown dtype"},
        {HEAD "dtype: bf16\nwdtype: int4\n", FFN_ESCHEMA, 5, 9, "not both"},
        {HEAD "phase: train\n", FFN_ESCHEMA, 4, 8, "phase"},
        {HEAD "weights: warm\n", FFN_ESCHEMA, 4, 10, "weights"},
        {HEAD "onchip: maybe\n", FFN_ESCHEMA, 4, 9, "onchip"},
        {HEAD "zero_point: 1\n", FFN_ESCHEMA, 4, 13, "zero_point"},
        {HEAD "act_io_dtype: int8\n", FFN_ESCHEMA, 4, 15, "fp32, bf16 or fp16"},
        {HEAD "objective: speed\n", FFN_ESCHEMA, 4, 12, "objective"},
        {HEAD "price_per_hour: {h300: 2}\n", FFN_ESCHEMA, 4, 18,
         "not one of the scenario's devices"},
        {HEAD "layouts: {tp: [1, 2, 0]}\n", FFN_ERANGE, 4, 22, "outside"},
        {HEAD "prompt: -5\n", FFN_ERANGE, 4, 9, "negative"},
        {"name: t\nhw: h100-sxm\n", FFN_ESCHEMA, 1, 1, "missing key 'model'"},
        {"name: t\nmodel: []\nhw: h100-sxm\n", FFN_ESCHEMA, 2, 8, "empty"},
        {"- a\n- b\n", FFN_ESCHEMA, 1, 1, "mapping"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static ffn_scenario sc;
        ffn_diag d;
        int rc = load_text(cases[i].text, &sc, &d);
        char buf[1200];
        ffn_diag_format(&d, buf, sizeof buf);
        cr_assert_eq(rc, cases[i].err, "case %zu: rc %d: %s", i, rc, buf);
        cr_assert_eq(d.line, cases[i].line, "case %zu: %s", i, buf);
        cr_assert_eq(d.col, cases[i].col, "case %zu: %s", i, buf);
        cr_assert(strstr(d.msg, cases[i].word) != NULL, "case %zu: '%s' lacks '%s'", i, d.msg,
                  cases[i].word);
        cr_assert_str_eq(d.file, tmp_path);
        cr_assert_null(sc.batch, "nothing half-loaded");
    }
}

/* weights and onchip: defaults cold/off; the scenario sets both (the sweep and plan flags then
 * override them in cli/). */
Test(scenario, weight_residency_keys)
{
    static ffn_scenario sc;
    ffn_diag d;
    cr_assert_eq(load_text(HEAD, &sc, &d), 0, "%s", d.msg);
    cr_expect_eq(sc.plan.weights, FFN_WEIGHTS_COLD);
    cr_expect(!sc.plan.onchip);
    ffn_scenario_release(&sc);
    cr_assert_eq(load_text(HEAD "weights: auto\nonchip: true\n", &sc, &d), 0, "%s", d.msg);
    cr_expect_eq(sc.plan.weights, FFN_WEIGHTS_AUTO);
    cr_expect(sc.plan.onchip);
    ffn_scenario_release(&sc);
    cr_assert_eq(load_text(HEAD "weights: hot\n", &sc, &d), 0, "%s", d.msg);
    cr_expect_eq(sc.plan.weights, FFN_WEIGHTS_HOT);
    ffn_scenario_release(&sc);
}

Test(scenario, lookup_lists_known_names)
{
    static ffn_scenario sc;
    ffn_diag d;
    cr_assert_eq(load_text("name: t\nmodel: llama3-8b\nhw: [h100-sxm, h300]\n", &sc, &d), 0);
    char hw_dir[600], path[1024];
    snprintf(hw_dir, sizeof hw_dir, "%s/hw", FFNROOF_SOURCE_DIR);
    cr_assert_eq(ffn_scenario_resolve(&sc, &sc.hws[0], hw_dir, "device", path, sizeof path, &d), 0);
    cr_assert_eq(ffn_scenario_resolve(&sc, &sc.hws[1], hw_dir, "device", path, sizeof path, &d),
                 FFN_ENOTFOUND);
    cr_assert_eq(d.line, 3);
    cr_assert_eq(d.col, 16);
    cr_assert(strstr(d.msg, "unknown device 'h300'") != NULL, "%s", d.msg);
    cr_assert(strstr(d.msg, "h200") != NULL && strstr(d.msg, "mi300x") != NULL, "%s", d.msg);
    /* a path is relative to the scenario's folder and a missing calibrated spec says how */
    ffn_sc_ref ref = {.line = 3, .col = 5};
    snprintf(ref.name, sizeof ref.name, "no-such-dir/hw.yaml");
    cr_assert_eq(ffn_scenario_resolve(&sc, &ref, hw_dir, "device", path, sizeof path, &d),
                 FFN_ENOTFOUND);
    cr_assert(strstr(path, "/tmp/no-such-dir/hw.yaml") != NULL, "%s", path);
    cr_assert(strstr(d.msg, "ffnroof calibrate --out DIR") != NULL, "%s", d.msg);
    ffn_scenario_release(&sc);
}
