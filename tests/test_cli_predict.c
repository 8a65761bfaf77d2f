/* `ffnroof predict` end to end: the documented JSON for every model on every device, the CSV and
 * table forms, and bad input (exit code 2, one line naming the problem, nothing half-written).
 * Runs the built binary. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../io/load/ydoc.h"
#include "ffnroof/sim.h"
#include "skip_clean.h"
#include "helpers/cli_harness.h"

static char out_path[256], err_path[256];

static void setup(void)
{
    snprintf(out_path, sizeof out_path, "/tmp/ffnroof-test-%d.out", (int)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/ffnroof-test-%d.err", (int)getpid());
}

static void teardown(void)
{
    unlink(out_path);
    unlink(err_path);
}

/* Run `ffnroof ARGS`, stdout and stderr to files; returns the exit code. */
static int run(const char *args)
{
    return cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .out = out_path, .err = err_path},
                   args);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* names of data files in FFNROOF_SOURCE_DIR/<dir>, without .yaml */
static size_t list(const char *dir, char names[][64], size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", FFNROOF_SOURCE_DIR, dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml") && l - 5 < 64) {
            memcpy(names[n], e->d_name, l - 5);
            names[n][l - 5] = '\0';
            n++;
        }
    }
    closedir(d);
    return n;
}

static yaml_node_t *need(ffn_ydoc *y, yaml_node_t *map, const char *key, const char *ctx)
{
    yaml_node_t *v = ffn_y_get(y, map, key, NULL);
    cr_assert_not_null(v, "%s: JSON lacks '%s'", ctx, key);
    return v;
}

static double num(ffn_ydoc *y, yaml_node_t *map, const char *key, const char *ctx)
{
    const char *t = ffn_y_text(need(y, map, key, ctx));
    cr_assert_not_null(t, "%s: '%s' is not a number", ctx, key);
    return strtod(t, NULL);
}

TestSuite(cli_predict, .init = setup, .fini = teardown, .timeout = 600);

Test(cli_predict, json_for_every_model_on_every_device)
{
    static char models[64][64], hws[64][64];
    size_t nm = list("models", models, 64), nh = list("hw", hws, 64);
    cr_assert_geq(nm, 18);
    cr_assert_geq(nh, 14);
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < nh; j++) {
            char args[512], ctx[160];
            /* the names are at most 63 characters (list()); the precision says so to the
             * cross compiler, which warned of 4095 */
            snprintf(ctx, sizeof ctx, "%.63s on %.63s", models[i], hws[j]);
            snprintf(args, sizeof args,
                     "predict --model %.63s --hw %.63s --format json --batch 4 --seq 512",
                     models[i], hws[j]);
            int rc = run(args);
            cr_assert_eq(rc, 0, "%s: exit %d: %s", ctx, rc, cli_slurp(err_path));
            ffn_ydoc y;
            ffn_diag d;
            cr_assert_eq(ffn_ydoc_load(&y, out_path, &d), 0, "%s: JSON does not parse: %s", ctx,
                         d.msg);
            yaml_node_t *root = ffn_ydoc_root(&y);
            yaml_node_t *model = need(&y, root, "model", ctx);
            cr_assert_str_eq(ffn_y_text(need(&y, model, "name", ctx)), models[i]);
            cr_assert_gt(num(&y, model, "layers", ctx), 0);
            yaml_node_t *params = need(&y, model, "params", ctx);
            double total = num(&y, params, "total", ctx), ffn = num(&y, params, "ffn", ctx);
            double active = num(&y, params, "active", ctx);
            cr_assert_gt(total, 0);
            cr_assert_gt(ffn, 0);
            cr_assert_leq(ffn, total);
            cr_assert_leq(active, total);
            num(&y, params, "ffn_active", ctx);
            double attn = num(&y, params, "attention", ctx);
            cr_assert_leq(num(&y, params, "attention_replicated", ctx), attn, "%s", ctx);
            num(&y, params, "embedding", ctx);
            double share = num(&y, params, "ffn_share", ctx);
            cr_assert(share > 0 && share < 1, "%s: ffn_share %g", ctx, share);
            yaml_node_t *hw = need(&y, root, "hw", ctx);
            cr_assert_str_eq(ffn_y_text(need(&y, hw, "name", ctx)), hws[j]);
            cr_assert_gt(num(&y, hw, "peak_flops", ctx), 0);
            cr_assert_gt(num(&y, hw, "mem_bandwidth_bps", ctx), 0);
            yaml_node_t *runs = need(&y, root, "runs", ctx);
            cr_assert_eq(runs->type, YAML_SEQUENCE_NODE);
            int n_runs = 0;
            for (yaml_node_item_t *it = runs->data.sequence.items.start;
                 it < runs->data.sequence.items.top; it++, n_runs++) {
                yaml_node_t *r = yaml_document_get_node(&y.doc, *it);
                const char *phase = ffn_y_text(need(&y, r, "phase", ctx));
                cr_assert(!strcmp(phase, "prefill") || !strcmp(phase, "decode"));
                double tokens = num(&y, r, "tokens", ctx);
                cr_assert_eq(tokens, !strcmp(phase, "prefill") ? 4 * 512 : 4, "%s", ctx);
                num(&y, r, "batch", ctx);
                if (!strcmp(phase, "prefill")) cr_assert_eq(num(&y, r, "seq", ctx), 512);
                yaml_node_t *f = need(&y, r, "ffn", ctx);
                double flops = num(&y, f, "flops", ctx), bytes = num(&y, f, "bytes", ctx);
                double wb = num(&y, f, "weight_bytes", ctx);
                cr_assert_gt(flops, 0);
                cr_assert_gt(bytes, wb * 0.999);
                cr_assert_gt(num(&y, f, "intensity", ctx), 0);
                const char *bound = ffn_y_text(need(&y, f, "bound", ctx));
                cr_assert(!strcmp(bound, "compute") || !strcmp(bound, "memory") ||
                          !strcmp(bound, "interconnect"));
                double roof = num(&y, f, "roofline_s", ctx), pred = num(&y, f, "predicted_s", ctx);
                cr_assert_gt(roof, 0);
                cr_assert_geq(pred, roof * 0.999, "%s: predicted %g below roofline %g", ctx, pred,
                              roof);
                yaml_node_t *rk;
                ffn_y_get(&y, f, "ridge_tokens", &rk); /* null when never compute-bound */
                cr_assert_not_null(rk, "%s: JSON lacks ridge_tokens", ctx);
                yaml_node_t *ops = need(&y, f, "ops", ctx);
                cr_assert_eq(ops->type, YAML_SEQUENCE_NODE);
                cr_assert_gt(ops->data.sequence.items.top - ops->data.sequence.items.start, 1);
                yaml_node_t *mem = need(&y, r, "memory", ctx);
                cr_assert_gt(num(&y, mem, "activation_peak_bytes", ctx), 0);
                cr_assert_gt(num(&y, mem, "training_saved_bytes", ctx), 0);
            }
            cr_assert_eq(n_runs, 2);
            ffn_ydoc_release(&y);
        }
}

Test(cli_predict, moe_json_has_breakdown)
{
    cr_assert_eq(run("predict --model mixtral-8x7b --hw h100-sxm --phase decode --batch 16 "
                     "--format json"),
                 0);
    ffn_ydoc y;
    cr_assert_eq(ffn_ydoc_load(&y, out_path, NULL), 0);
    yaml_node_t *runs = need(&y, ffn_ydoc_root(&y), "runs", "moe");
    yaml_node_t *r = yaml_document_get_node(&y.doc, runs->data.sequence.items.start[0]);
    yaml_node_t *moe = need(&y, r, "moe", "moe");
    const char *keys[] = {"experts_touched", "imbalance",  "dropped_fraction",
                          "router_s",        "dispatch_s", "expert_s",
                          "combine_s",       "alltoall_s", "share_of_ffn"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        num(&y, moe, keys[i], "moe");
    double touched = num(&y, moe, "experts_touched", "moe");
    /* 8 (1 - (6/8)^16) = 7.919... */
    cr_assert(touched > 7.91 && touched < 7.93, "%g", touched);
    ffn_ydoc_release(&y);
}

/* A GPU's MoE layers are priced as the engine's fused module runs them, and say which kernels
 * (the engine's first family of the weights' format among its vendor's, ROCm aiter's on AMD
 * GPUs; the model's defaults where the engine has none of the format's class) with their range;
 * --generic-moe keeps the generic grouped GEMMs and says so. */
Test(cli_predict, moe_layers_name_the_engines_fused_kernels)
{
    static const struct {
        const char *args, *kernels, *weights;
    } cases[] = {
        {"--hw h100-sxm", "unquantizedfusedmoe_triton", "bf16"},
        {"--hw h100-sxm --engine sglang --dtype fp8-block", "fused_moe_triton", "fp8-block"},
        {"--hw h200 --engine trtllm --dtype fp8", "moe_torch_flow_cutlass", "fp8"},
        {"--hw b200", "unquantizedfusedmoe_triton", "bf16"}, /* carried, range widened */
        {"--hw mi300x", "aiter_fmoe", "bf16"}, /* ROCm aiter's, fitted to its own tables */
        {"--hw mi300x --engine trtllm", "defaults", "bf16"}, /* no AMD entry */
        {"--hw h100-sxm --generic-moe", NULL, NULL},
        /* one the engine runs only when asked, by its name */
        {"--hw h100-sxm --dtype fp8 --moe-kernel flashinfer_cutlass", "flashinfer_cutlass", "fp8"},
        {"--hw h100-sxm --dtype fp8", "fp8moe_triton", "fp8-block"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd,
                 "predict --model mixtral-8x7b %s --phase decode --batch 16 --format json",
                 cases[i].args);
        cr_assert_eq(run(cmd), 0, "%s: %s", cmd, cli_slurp(err_path));
        if (!cases[i].kernels) {
            cr_expect(strstr(cli_slurp(out_path), "\"fused_kernels\": null") != NULL, "%s: %s", cmd,
                      cli_slurp(out_path));
            continue;
        }
        ffn_ydoc y;
        cr_assert_eq(ffn_ydoc_load(&y, out_path, NULL), 0);
        yaml_node_t *runs = need(&y, ffn_ydoc_root(&y), "runs", cmd);
        yaml_node_t *r = yaml_document_get_node(&y.doc, runs->data.sequence.items.start[0]);
        yaml_node_t *f = need(&y, need(&y, r, "moe", cmd), "fused_kernels", cmd);
        cr_assert_eq(f->type, YAML_MAPPING_NODE, "%s", cmd);
        cr_expect_str_eq((const char *)need(&y, f, "kernels", cmd)->data.scalar.value,
                         cases[i].kernels, "%s", cmd);
        cr_expect_str_eq((const char *)need(&y, f, "weights", cmd)->data.scalar.value,
                         cases[i].weights, "%s", cmd);
        const double lo = num(&y, f, "range_p10", cmd), hi = num(&y, f, "range_p90", cmd);
        cr_expect(lo > 0 && lo < 1 && hi > 1, "%s: %g %g", cmd, lo, hi);
        cr_expect_gt(num(&y, f, "layer_s", cmd), 0, "%s", cmd);
        ffn_ydoc_release(&y);
    }
    cr_assert_eq(run("predict --model mixtral-8x7b --hw h100-sxm --phase decode --batch 16 "
                     "--generic-moe"),
                 0);
    cr_expect(strstr(cli_slurp(out_path), "generic grouped GEMMs (--generic-moe)") != NULL, "%s",
              cli_slurp(out_path));
    /* a family the engine has not: a usage error naming those it has */
    cr_assert_eq(run("predict --model mixtral-8x7b --hw h100-sxm --phase decode --dtype fp8 "
                     "--moe-kernel cutlass"),
                 2);
    cr_expect(strstr(cli_slurp(err_path),
                     "--moe-kernel: vllm has no fused-MoE kernel family 'cutlass' for fp8 weights "
                     "on NVIDIA GPUs") &&
                  strstr(cli_slurp(err_path), "flashinfer_cutlass (fp8)"),
              "%s", cli_slurp(err_path));
    cr_expect_str_eq(cli_slurp(out_path), "", "no partial output");
    cr_assert_eq(run("predict --model mixtral-8x7b --hw h100-sxm --phase decode --generic-moe "
                     "--moe-kernel marlin"),
                 2);
    cr_expect(strstr(cli_slurp(err_path), "--moe-kernel and --generic-moe exclude each other"),
              "%s", cli_slurp(err_path));
    cr_assert_eq(run("predict --model mixtral-8x7b --hw mi300x --phase decode --batch 16 --engine "
                     "trtllm"),
                 0);
    cr_expect(strstr(cli_slurp(out_path), "the model's defaults") != NULL, "%s",
              cli_slurp(out_path));
}

/* A model that states its serving skew (DeepSeek-V3: moe.routing_alpha 1.01) has its fused
 * kernels priced on the power-law draws, says so in the table and the JSON, and
 * --routing-alpha 0 prices the balanced copies instead: another MoE time, the same rest. */
Test(cli_predict, routing_skew_is_named_and_can_be_turned_off)
{
    static char skewed[1 << 16];
    const char *base = "predict --model deepseek-v3 --hw h100-sxm --tp 8 --dtype fp8-block "
                       "--phase decode --batch 512";
    char cmd[256];
    cr_assert_eq(run(base), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "experts' loads a power law of exponent 1.01") != NULL,
              "%s", cli_slurp(out_path));
    snprintf(cmd, sizeof cmd, "%s --format json", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    snprintf(skewed, sizeof skewed, "%s", cli_slurp(out_path));
    cr_expect(strstr(skewed, "\"routing_alpha\": 1.01") != NULL, "%s", skewed);
    snprintf(cmd, sizeof cmd, "%s --format json --routing-alpha 0", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    const char *flat = cli_slurp(out_path);
    cr_expect(strstr(flat, "\"routing_alpha\": 0") != NULL, "%s", flat);
    cr_expect(strcmp(flat, skewed) != 0, "the skew changes the MoE layer's time");
    snprintf(cmd, sizeof cmd, "%s --routing-alpha 0", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "power law") == NULL, "%s", cli_slurp(out_path));
    /* a negative exponent is a usage error */
    snprintf(cmd, sizeof cmd, "%s --routing-alpha -1", base);
    cr_expect_eq(run(cmd), 2);
    cr_expect(strstr(cli_slurp(err_path), "--routing-alpha") != NULL, "%s", cli_slurp(err_path));
}

Test(cli_predict, csv_one_row_per_run)
{
    cr_assert_eq(run("predict --model llama2-7b --hw a100-sxm-80gb --batch 1,8,64 --format csv"),
                 0);
    char *s = cli_slurp(out_path);
    cr_assert_eq(count_lines(s), 1 + 6);
    cr_assert(!strncmp(s, "model,hw,phase,batch", 20));
}

Test(cli_predict, table_fits_80_columns)
{
    cr_assert_eq(run("predict --model deepseek-v3 --hw h200 --ep 8 --ops --batch 64"), 0);
    char *s = cli_slurp(out_path);
    int col = 0;
    for (; *s; s++) {
        col = *s == '\n' ? 0 : col + 1;
        cr_assert_leq(col, 80, "a table line is wider than 80 columns");
    }
}

Test(cli_predict, help_lists_every_flag_with_default)
{
    cr_assert_eq(run("predict --help"), 0);
    char *s = cli_slurp(out_path);
    const char *flags[] = {"--hw",
                           "--model",
                           "--phase",
                           "--batch",
                           "--seq",
                           "--chunk",
                           "--dtype",
                           "--wdtype",
                           "--adtype",
                           "--tp",
                           "--fused",
                           "--unfused",
                           "--format",
                           "--ep",
                           "--zipf",
                           "--histogram",
                           "--trials",
                           "--seed",
                           "--capacity-factor",
                           "--weights",
                           "--onchip",
                           "--group-size",
                           "--zero-point",
                           "--act-io-dtype"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(s, flags[i]), "--help does not mention %s", flags[i]);
}

/* Bad input: exit 2, a single line on stderr containing `want`, nothing on stdout. */
static void bad(const char *args, const char *want)
{
    int rc = run(args);
    char *e = cli_slurp(err_path);
    cr_assert_eq(rc, 2, "'%s': exit %d, stderr: %s", args, rc, e);
    cr_assert(strstr(e, want), "'%s': stderr lacks '%s': %s", args, want, e);
    struct stat st;
    cr_assert_eq(stat(out_path, &st), 0);
    cr_assert_eq(st.st_size, 0, "'%s' wrote to stdout", args);
}

Test(cli_predict, bad_input)
{
    bad("predict --model llama2-7b --hw no-such-gpu", "unknown device 'no-such-gpu'; known:");
    bad("predict --model no-such-model --hw h100-sxm", "known:");
    bad("predict --model /nonexistent.yaml --hw h100-sxm", "/nonexistent.yaml: cannot open");
    bad("predict --model llama2-7b --hw h100-sxm --tp 3", "does not divide");
    bad("predict --model llama2-7b --hw h100-sxm --dtype fp12", "unknown dtype 'fp12'");
    bad("predict --model llama2-7b --hw h100-sxm --batch 0", "--batch");
    bad("predict --model llama2-7b --hw h100-sxm --batch 1,,2", "--batch");
    bad("predict --model llama2-7b --hw h100-sxm --phase train", "--phase");
    bad("predict --model llama2-7b --hw h100-sxm --frobnicate", "unknown option");
    bad("predict --model llama2-7b --hw h100-sxm --ep 2", "has no experts");
    bad("predict --model llama2-7b --hw h100-sxm --weights warm", "is not hot, cold or auto");
    bad("predict --model llama2-7b --hw h100-sxm --act-io-dtype int8", "fp32, bf16 or fp16");
    bad("predict --model mixtral-8x7b --hw h100-sxm --ep 3", "--ep-uneven");
    bad("predict --model mixtral-8x7b --hw h100-sxm --zipf nan", "--zipf");
    bad("predict --model mixtral-8x7b --hw h100-sxm --histogram " FFNROOF_TEST_DATA
        "/hist/short.txt",
        "has 3 entries");
    bad("predict --model mixtral-8x7b --hw h100-sxm --histogram " FFNROOF_TEST_DATA
        "/hist/negative.txt",
        "negative.txt:2:3:");
    bad("predict --model " FFNROOF_TEST_DATA "/hf/bad/unsupported.json --hw h100-sxm",
        "unsupported.json:");
}

Test(cli_predict, failed_run_leaves_no_output_file)
{
    char dst[300];
    snprintf(dst, sizeof dst, "/tmp/ffnroof-test-%d.json", (int)getpid());
    unlink(dst);
    char args[600];
    snprintf(args, sizeof args, "predict --model llama2-7b --hw h100-sxm --tp 3 --out %s", dst);
    cr_assert_eq(run(args), 2);
    struct stat st;
    cr_assert_neq(stat(dst, &st), 0, "a failed run left %s behind", dst);
    snprintf(args, sizeof args, "predict --model llama2-7b --hw h100-sxm --format json --out %s",
             dst);
    cr_assert_eq(run(args), 0);
    cr_assert_eq(stat(dst, &st), 0);
    cr_assert_gt(st.st_size, 100);
    unlink(dst);
}

/* --weights and --onchip: the table says where the weights were placed and each op
 * where its weights come from, still within 80 columns; the JSON carries the same. bert-base
 * (9.44 MB of FFN weights per layer in bf16) fits the Xeon's L2, which has no bandwidth in the
 * spec: capacity only. */
Test(cli_predict, weights_and_onchip_say_where_the_bytes_come_from)
{
    cr_assert_eq(run("predict --model bert-base --hw xeon-8480 --phase decode --weights hot "
                     "--onchip --ops"),
                 0);
    char *s = cli_slurp(out_path);
    cr_assert(strstr(s, "weights    hot: one layer's"), "%s", s);
    cr_assert(strstr(s, "in L2 (no bandwidth: at memory speed)"), "%s", s);
    cr_assert(strstr(s, "weights from L2 (capacity only)"), "%s", s);
    int col = 0;
    for (const char *p = s; *p; p++) {
        col = *p == '\n' ? 0 : col + 1;
        cr_assert_leq(col, 80, "a table line is wider than 80 columns");
    }
    cr_assert_eq(run("predict --model bert-base --hw xeon-8480 --phase decode --weights auto "
                     "--format json"),
                 0);
    s = cli_slurp(out_path);
    cr_assert(strstr(s, "\"weights\": \"auto\""), "%s", s);
    /* 12 layers x 9.44 MB = 113 MB: more than the L2's and the L3's usable 89.6 / 84 MB; the
     * larger, L2, keeps 79% of them (capacity only: charged at memory speed) */
    cr_assert(strstr(s, "\"weights_level\": 1"), "%s", s);
    cr_assert(strstr(s, "\"weights_resident_fraction\": 0.79"), "%s", s);
    cr_assert(strstr(s, "\"weights_level_no_bandwidth\": true"), "%s", s);
    cr_assert_eq(run("predict --model bert-base --hw xeon-8480 --phase decode --weights auto"), 0);
    s = cli_slurp(out_path);
    cr_assert(strstr(s, "79% in L2, the rest from memory"), "%s", s);
    cr_assert(strstr(s, "(L2 has no bandwidth: at memory speed)"), "%s", s);
    col = 0;
    for (const char *p = s; *p; p++) {
        col = *p == '\n' ? 0 : col + 1;
        cr_assert_leq(col, 80, "a table line is wider than 80 columns");
    }
}

/* the n-th comma-separated field (0-based) of the line of text that starts with `head` */
static double csv_field(const char *text, const char *head, int n)
{
    const char *l = strstr(text, head);
    cr_assert_not_null(l, "no line starting %s in:\n%s", head, text);
    for (int i = 0; i < n; i++) {
        l = strchr(l, ',');
        cr_assert_not_null(l);
        l++;
    }
    return strtod(l, NULL);
}

/* The CSV's 14th column, weight_bytes, of the first run. */
static double csv_weight_bytes(const char *s)
{
    const char *row = strchr(s, '\n');
    cr_assert_not_null(row);
    return csv_field(row + 1, "", 13);
}

/* --zero-point adds int4's zero points (0.5 B a group and column: per LLaMA-2-7B layer
 * 0.5 (32 x 22016 + 86 x 4096) = 528,384 B); --act-io-dtype says what a W8A8 layer's x, h and y
 * are stored in (fp32 moves more bytes than the default bf16). */
Test(cli_predict, zero_points_and_act_io_dtype_reach_the_model)
{
    const char *base = "predict --model llama2-7b --hw h100-sxm --phase decode --format csv "
                       "--wdtype int4 --adtype bf16";
    char args[400];
    cr_assert_eq(run(base), 0, "%s", cli_slurp(err_path));
    const double sym = csv_weight_bytes(cli_slurp(out_path));
    snprintf(args, sizeof args, "%s --zero-point", base);
    cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
    const double zp = csv_weight_bytes(cli_slurp(out_path));
    /* the CSV has 7 significant digits: 2.2e9 B to within 1,000 B */
    cr_assert_float_eq(zp - sym, 32 * 528384.0, 1000.0, "%.17g - %.17g", zp, sym);
    const char *w8 = "predict --model llama2-7b --hw h100-sxm --phase prefill --format json "
                     "--wdtype int8 --adtype int8";
    cr_assert_eq(run(w8), 0, "%s", cli_slurp(err_path));
    char *a = strdup(cli_slurp(out_path));
    snprintf(args, sizeof args, "%s --act-io-dtype fp32", w8);
    cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
    cr_assert(strcmp(a, cli_slurp(out_path)) != 0, "--act-io-dtype fp32 changed nothing");
    free(a);
    /* the dequantisation's vector ops, the CSV's vec_ops (27th field): W8A16 decode dequantises
     * every weight once, 32 x (4096 x 22016 + 11008 x 4096) */
    cr_assert_eq(run("predict --model llama2-7b --hw h100-sxm --phase decode --format csv "
                     "--wdtype int8 --adtype bf16"),
                 0);
    const char *row = strchr(cli_slurp(out_path), '\n');
    cr_assert_not_null(row);
    cr_assert_float_eq(csv_field(row + 1, "", 26), 32.0 * (4096.0 * 22016 + 11008.0 * 4096), 1e4);
}

/* The README's simulator examples are what the code prints: under each "### ...`ffnroof
 * predict|plan|serve ...`" heading, the first code block is that command's output, run from the
 * repository root. An example that goes stale
 * fails here. The figures were printed on x86-64; an AArch64 build may fuse a multiply-add the x86
 * one does not and round a last digit the other way, so it skips. */
Test(cli_predict, readme_examples_are_what_the_code_prints, .init = setup, .fini = teardown)
{
#if !defined(__x86_64__)
    skip_clean(teardown, "the README's examples were printed by an x86-64 build");
#endif
    FILE *fp = fopen(FFNROOF_SOURCE_DIR "/README.md", "r");
    cr_assert_not_null(fp);
    static char line[4096], want[1 << 16];
    char args[1024] = "";
    int checked = 0, state = 0; /* 0 look for a heading, 1 for its block, 2 inside it */
    size_t wn = 0;
    while (fgets(line, sizeof line, fp)) {
        if (state == 0 && strncmp(line, "### ", 4) == 0) {
            const char *c = strstr(line, "`ffnroof ");
            if (c &&
                (strncmp(c, "`ffnroof predict ", 17) == 0 ||
                 strncmp(c, "`ffnroof plan ", 14) == 0 || strncmp(c, "`ffnroof serve ", 15) == 0)) {
                const char *end = strchr(c + 1, '`');
                cr_assert_not_null(end, "%s", line);
                snprintf(args, sizeof args, "%.*s", (int)(end - c - 9), c + 9);
                state = 1;
            }
        } else if (state == 1 && strncmp(line, "```", 3) == 0) {
            state = 2;
            wn = 0;
            want[0] = '\0';
        } else if (state == 2 && strncmp(line, "```", 3) == 0) {
            const int rc = cli_run(
                &(cli_opts){
                    .cwd = FFNROOF_SOURCE_DIR, .data_dir = ".", .out = out_path, .err = err_path},
                args);
            cr_assert_eq(rc, 0, "ffnroof %s: %s", args, cli_slurp(err_path));
            cr_expect_str_eq(cli_slurp(out_path), want,
                             "README.md: the example of `ffnroof %s` is not what it prints", args);
            checked++;
            state = 0;
        } else if (state == 2) {
            const size_t n = strlen(line);
            cr_assert_lt(wn + n, sizeof want);
            memcpy(want + wn, line, n + 1);
            wn += n;
        }
    }
    fclose(fp);
    cr_expect_geq(checked, 4, "the README's predict, plan and serve examples (found %d)", checked);
}

/* --engine: the serving engine's kernels change a quantised prediction, not a bf16 one, say so
 * in the table, and an unknown engine is a usage error. */
Test(cli_predict, engine_changes_quantised_predictions_only, .init = setup, .fini = teardown)
{
    static char a[1 << 20], b[1 << 20];
    const char *base = "predict --hw h100-sxm --model llama3-8b --phase decode --batch 8 "
                       "--format csv";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --dtype bf16", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    snprintf(a, sizeof a, "%s", cli_slurp(out_path));
    snprintf(cmd, sizeof cmd, "%s --dtype bf16 --engine trtllm", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    snprintf(b, sizeof b, "%s", cli_slurp(out_path));
    cr_expect_str_eq(a, b, "bf16 runs cuBLAS under every engine");
    snprintf(cmd, sizeof cmd, "%s --dtype fp8", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    snprintf(a, sizeof a, "%s", cli_slurp(out_path));
    snprintf(cmd, sizeof cmd, "%s --dtype fp8 --engine trtllm", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    snprintf(b, sizeof b, "%s", cli_slurp(out_path));
    cr_expect(strcmp(a, b) != 0, "fp8 under TRT-LLM's kernels: %s", b);
    cr_assert_eq(run("predict --hw h100-sxm --model llama3-8b --dtype fp8 --engine sglang"), 0);
    cr_expect(strstr(cli_slurp(out_path), "sglang's kernels") != NULL, "%s", cli_slurp(out_path));
    cr_expect_eq(run("predict --hw h100-sxm --model llama3-8b --engine tgi"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--engine: 'tgi' is not vllm, sglang or trtllm") != NULL,
              "%s", cli_slurp(err_path));
}

/* One idea, two spellings: --prompt and --seq set the same value in every command that takes a
 * prompt length, as do --group-size and --group; both at once is refused, naming both. */
Test(cli_predict, prompt_and_seq_are_one_option, .init = setup, .fini = teardown)
{
    static const char *const pairs[][2] = {
        {"predict --model llama2-7b --hw h100-sxm --phase prefill --seq 512",
         "predict --model llama2-7b --hw h100-sxm --phase prefill --prompt 512"},
        {"plan --model llama3-8b --hw h100-sxm --tp 1 --prompt 2000",
         "plan --model llama3-8b --hw h100-sxm --tp 1 --seq 2000"},
        {"predict --model llama2-7b --hw h100-sxm --dtype int4 --group-size 64",
         "predict --model llama2-7b --hw h100-sxm --dtype int4 --group 64"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cr_assert_eq(run(pairs[i][0]), 0, "%s", cli_slurp(err_path));
        char *a = strdup(cli_slurp(out_path));
        cr_assert_eq(run(pairs[i][1]), 0, "%s", cli_slurp(err_path));
        cr_expect_str_eq(cli_slurp(out_path), a, "%s vs %s", pairs[i][0], pairs[i][1]);
        free(a);
    }
    cr_expect_eq(run("predict --model llama2-7b --hw h100-sxm --seq 512 --prompt 256"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--seq and --prompt both given"), "%s",
              cli_slurp(err_path));
    cr_expect_eq(run("sweep --model llama2-7b --hw h100-sxm --group 64 --group-size 32"), 2);
    cr_expect(strstr(cli_slurp(err_path), "both given"), "%s", cli_slurp(err_path));
}

/* The prompt length has one default in every command that takes one (FFN_DEFAULT_PROMPT): each
 * command's answer without --seq/--prompt is its answer with the default given, and another
 * length changes it. */
Test(cli_predict, the_prompt_default_is_one_value, .init = setup, .fini = teardown)
{
    static const char *const cmds[] = {
        "predict --model llama2-7b --hw h100-sxm --phase prefill",
        "sweep --model llama2-7b --hw h100-sxm --phase prefill --batch 1,4",
        "compare --model llama2-7b --hw h100-sxm,h200 --batch 1",
        "plan --model llama3-8b --hw h100-sxm --tp 1",
        "serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4",
    };
    char args[300];
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        cr_assert_eq(run(cmds[i]), 0, "%s: %s", cmds[i], cli_slurp(err_path));
        char *dflt = strdup(cli_slurp(out_path));
        snprintf(args, sizeof args, "%s --prompt %d", cmds[i], FFN_DEFAULT_PROMPT);
        cr_assert_eq(run(args), 0, "%s: %s", args, cli_slurp(err_path));
        cr_expect_str_eq(cli_slurp(out_path), dflt, "%s: the default is not %d", cmds[i],
                         FFN_DEFAULT_PROMPT);
        snprintf(args, sizeof args, "%s --prompt %d", cmds[i], 2 * FFN_DEFAULT_PROMPT);
        cr_assert_eq(run(args), 0, "%s: %s", args, cli_slurp(err_path));
        cr_expect_str_neq(cli_slurp(out_path), dflt, "%s: --prompt changes nothing", cmds[i]);
        free(dflt);
    }
}

/* compare takes predict's and plan's dtypes apart (--wdtype/--adtype), and its decode time for a
 * point is predict's for the same point. */
Test(cli_predict, compare_takes_the_dtypes_apart_and_agrees_with_predict, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(run("compare --model llama3-70b --hw h100-sxm --wdtype int4 --adtype bf16 "
                     "--batch 64 --format csv"),
                 0, "%s", cli_slurp(err_path));
    const double cmp = csv_field(cli_slurp(out_path), "llama3-70b,h100-sxm,gpu,decode,64,", 9);
    cr_assert_eq(run("predict --model llama3-70b --hw h100-sxm --wdtype int4 --adtype bf16 "
                     "--phase decode --batch 64 --format csv"),
                 0, "%s", cli_slurp(err_path));
    const double pred = csv_field(cli_slurp(out_path), "llama3-70b,h100-sxm,decode,64,", 17);
    cr_expect(cmp > 0 && fabs(cmp / pred - 1) < 1e-5, "compare %g s, predict %g s", cmp, pred);
    cr_assert_eq(run("compare --model llama3-70b --hw h100-sxm --wdtype int4 --adtype bf16"), 0);
    cr_expect(strstr(cli_slurp(out_path), "in int4, activations bf16)") != NULL, "%s",
              cli_slurp(out_path));
    cr_expect_eq(run("compare --model llama3-70b --hw h100-sxm --wdtype int4 --dtype bf16"), 2);
    cr_expect(strstr(cli_slurp(err_path), "either --dtype or --wdtype/--adtype"), "%s",
              cli_slurp(err_path));
}

/* The bound line tells the roofline's call from the prediction's where they differ: at 600 tokens
 * Mixtral-8x22B's expert GEMMs on an MI300X are predicted compute-limited (its bf16 units reach
 * 0.54 of their peak) while the ideal roofline still calls the layer memory-bound; at 512 both
 * say memory. One token more than 512 costs about one token more (the tile pipeline gives the
 * 128 rows an expert gets a tile that fits, where a 128-row tile padded them to 256 and the
 * layer took 72% longer). The generic grouped GEMMs' efficiency model (--generic-moe): the
 * fused module's row tiles of 64 do step from 128 to 129 rows an expert. */
Test(cli_predict, the_bound_says_where_the_prediction_differs, .init = setup, .fini = teardown)
{
    cr_assert_eq(run("predict --model mixtral-8x22b --hw mi300x --phase decode --batch 512 "
                     "--generic-moe"),
                 0);
    cr_expect(!strstr(cli_slurp(out_path), "as predicted"), "%s", cli_slurp(out_path));
    cr_assert_eq(run("predict --model mixtral-8x22b --hw mi300x --phase decode --batch 600 "
                     "--generic-moe"),
                 0);
    cr_expect(
        strstr(cli_slurp(out_path), "memory-bound by the roofline, compute-limited as predicted"),
        "%s", cli_slurp(out_path));
    cr_assert_eq(run("predict --model mixtral-8x22b --hw mi300x --phase decode --batch 512 "
                     "--generic-moe --format csv"),
                 0);
    const double t512 = csv_field(cli_slurp(out_path), "mixtral-8x22b,mi300x,decode,512,", 17);
    cr_assert_eq(run("predict --model mixtral-8x22b --hw mi300x --phase decode --batch 513 "
                     "--generic-moe --format csv"),
                 0);
    const double t513 = csv_field(cli_slurp(out_path), "mixtral-8x22b,mi300x,decode,513,", 17);
    cr_expect(t512 > 0 && t513 / t512 < 1.0 + 1.0 / 512 + 0.03, "512 -> 513 tokens: %g -> %g s",
              t512, t513);
}

/* Weights one device cannot hold get a warning on stderr (the answer on stdout is the same
 * arithmetic); a layout whose share fits gets none. */
Test(cli_predict, weights_beyond_the_device_memory_are_warned_about, .init = setup,
     .fini = teardown)
{
    cr_assert_eq(run("predict --model llama3.1-405b --hw h100-sxm --phase decode"), 0, "%s",
                 cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(err_path),
                     "warning: llama3.1-405b's weights take 811.7 GB a device (bf16, TP 1 x EP 1), "
                     "more than h100-sxm's 85.5 GB") != NULL,
              "%s", cli_slurp(err_path));
    cr_assert_eq(run("predict --model llama3.1-405b --hw h100-sxm --phase decode --tp 8 "
                     "--wdtype fp8"),
                 0, "%s", cli_slurp(err_path));
    cr_expect_str_eq(cli_slurp(err_path), "", "a layout that fits is warned about");
    cr_assert_eq(run("predict --model llama3-8b --hw h100-sxm"), 0);
    cr_expect_str_eq(cli_slurp(err_path), "", "llama3-8b fits one H100");
}

/* compare takes plan's and predict's layout, phase and prices: its point is predict's point on
 * the same TP x EP devices, its $/M tokens the price of those devices over its tokens/s, and
 * --phase keeps the rows of that phase. */
Test(cli_predict, compare_takes_the_layout_phase_and_prices, .init = setup, .fini = teardown)
{
    cr_assert_eq(run("compare --model llama3-70b --hw h100-sxm --tp 4 --batch 64 --phase decode "
                     "--price h100-sxm=2.5 --format csv"),
                 0, "%s", cli_slurp(err_path));
    char *csv = strdup(cli_slurp(out_path));
    cr_expect(strstr(csv, ",prefill,") == NULL, "--phase decode shows prefill rows: %s", csv);
    const double cmp = csv_field(csv, "llama3-70b,h100-sxm,gpu,decode,64,", 9);
    const double tps = csv_field(csv, "llama3-70b,h100-sxm,gpu,decode,64,", 10);
    const double usd = csv_field(csv, "llama3-70b,h100-sxm,gpu,decode,64,", 26);
    free(csv);
    cr_assert_eq(run("predict --model llama3-70b --hw h100-sxm --tp 4 --phase decode --batch 64 "
                     "--format csv"),
                 0, "%s", cli_slurp(err_path));
    const double pred = csv_field(cli_slurp(out_path), "llama3-70b,h100-sxm,decode,64,", 17);
    cr_expect(cmp > 0 && fabs(cmp / pred - 1) < 1e-5, "compare %g s, predict %g s", cmp, pred);
    cr_expect(fabs(usd / (2.5 * 4 / 3600.0 / tps * 1e6) - 1) < 1e-5, "$/Mtok %g at %g tok/s", usd,
              tps);
    /* the table says the layout; a list price stands in without --price */
    cr_assert_eq(run("compare --model llama3-70b --hw h100-sxm --tp 4"), 0, "%s",
                 cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "per device of TP 4 x EP 1 (4 devices)") != NULL, "%s",
              cli_slurp(out_path));
    cr_expect(strstr(cli_slurp(out_path), "h100-sxm $3.90/h, Crusoe") != NULL, "%s",
              cli_slurp(out_path));
    /* bad input */
    cr_expect_eq(run("compare --model llama3-70b --hw h100-sxm --ep 2"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--ep 2: model 'llama3-70b' has no experts") != NULL,
              "%s", cli_slurp(err_path));
    cr_expect_eq(run("compare --model llama3-70b --hw h100-sxm --price h200=3"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--price needs DEVICE=USD for a device of --hw") != NULL,
              "%s", cli_slurp(err_path));
}
