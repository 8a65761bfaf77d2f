/* `ffnroof quant` end to end (cli/cmd_quant.c): the table, JSON and CSV forms, a checkpoint the
 * test writes (tests/st_write.h) read back to the same numbers as the same weights made
 * synthetically, and bad input: exit 2 with the message, nothing written. Runs the built
 * binary. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../io/load/ydoc.h"
#include "ffnroof/quant_eval.h"
#include "st_write.h"
#include "helpers/cli_harness.h"

static char dir[256], out_path[300], err_path[300], st_path[300], file_out[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ffnroof-test-quant-%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    snprintf(st_path, sizeof st_path, "%s/model.safetensors", dir);
    snprintf(file_out, sizeof file_out, "%s/result.json", dir);
}

static void teardown(void)
{
    if (!cli_rm_rf(dir)) cr_log_warn("could not remove %s", dir);
}

TestSuite(cli_quant, .init = setup, .fini = teardown, .timeout = 300);

/* Run `ffnroof quant ARGS`, stdout and stderr to files; returns the exit code. */
static int run(const char *args)
{
    char quant[4096];
    snprintf(quant, sizeof quant, "quant %s", args);
    return cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .out = out_path, .err = err_path},
                   quant);
}

static char *out_text(void)
{
    return cli_slurp(out_path);
}

/* Copy s into dst[n], cut to fit (what snprintf "%s" does, without its truncation warning). */
static void copy_text(char *dst, size_t n, const char *s)
{
    size_t l = strlen(s);
    if (l >= n) l = n - 1;
    memcpy(dst, s, l);
    dst[l] = '\0';
}

static char *err_text(void)
{
    static char e[1 << 16];
    const char *s = cli_slurp(err_path);
    copy_text(e, sizeof e, s ? s : "");
    return e;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The JSON output loaded. */
typedef struct doc {
    ffn_ydoc y;
    yaml_node_t *root, *formats;
} doc;

static void load_json(doc *d, const char *path)
{
    ffn_diag dg;
    cr_assert_eq(ffn_ydoc_load(&d->y, path, &dg), 0, "not JSON: %s", dg.msg);
    d->root = ffn_ydoc_root(&d->y);
    d->formats = ffn_y_get(&d->y, d->root, "formats", NULL);
    cr_assert(d->formats && d->formats->type == YAML_SEQUENCE_NODE);
}

static size_t n_formats(const doc *d)
{
    return (size_t)(d->formats->data.sequence.items.top - d->formats->data.sequence.items.start);
}

static yaml_node_t *format_at(doc *d, size_t i)
{
    return yaml_document_get_node(&d->y.doc, d->formats->data.sequence.items.start[i]);
}

/* A number (or NAN for null/absent) at a dotted path of one level under node. */
static double num(doc *d, yaml_node_t *map, const char *key)
{
    yaml_node_t *v = ffn_y_get(&d->y, map, key, NULL);
    const char *t = ffn_y_text(v);
    return t ? strtod(t, NULL) : NAN;
}

static const char *str(doc *d, yaml_node_t *map, const char *key)
{
    return ffn_y_text(ffn_y_get(&d->y, map, key, NULL));
}

static double rel_of(doc *d, const char *fmt)
{
    for (size_t i = 0; i < n_formats(d); i++) {
        yaml_node_t *f = format_at(d, i);
        if (!strcmp(str(d, f, "format"), fmt)) return num(d, f, "rel_l2");
    }
    cr_assert_fail("no format %s", fmt);
    return NAN;
}

#define SMALL "--d 128 --f 256 --tokens 8"

Test(cli_quant, table_lists_every_default_format)
{
    cr_assert_eq(run(SMALL " --no-speed"), 0, "%s", err_text());
    const char *t = out_text();
    static const char *const rows[] = {"int8-tensor", "int8-channel", "int4-g32",   "int4-g64",
                                       "int4-g128",   "w8a8",         "w8a8-smooth"};
    for (size_t i = 0; i < 7; i++)
        cr_expect(strstr(t, rows[i]) != NULL, "no row %s in:\n%s", rows[i], t);
    cr_expect(strstr(t, "FFN layer d 128, f 256, swiglu; 8 tokens"), "%s", t);
    cr_expect(strstr(t, "1 of 128 channels") && strstr(t, "scaled 20x"), "%s", t);
    cr_expect(strstr(t, "speed") == NULL, "--no-speed leaves the column out:\n%s", t);
    cr_expect_eq(count_lines(t), 5 + 1 + 1 + 7 - 1, "%s", t);
}

Test(cli_quant, json_has_the_schema_metrics_and_speed)
{
    cr_assert_eq(run(SMALL " --reps 2 --threads 1 --format json"), 0, "%s", err_text());
    doc d;
    load_json(&d, out_path);
    cr_expect_str_eq(str(&d, d.root, "schema"), "ffnroof.quant/1");
    yaml_node_t *layer = ffn_y_get(&d.y, d.root, "layer", NULL);
    cr_expect_eq(num(&d, layer, "d"), 128);
    cr_expect_eq(num(&d, layer, "f"), 256);
    cr_expect_str_eq(str(&d, layer, "act"), "swiglu");
    cr_expect_eq(n_formats(&d), 7u);
    for (size_t i = 0; i < n_formats(&d); i++) {
        yaml_node_t *f = format_at(&d, i);
        const double rel = num(&d, f, "rel_l2"), cs = num(&d, f, "cosine");
        cr_expect(rel > 0 && rel < 0.5, "%s: rel_l2 %g", str(&d, f, "format"), rel);
        cr_expect(cs > 0.9 && cs <= 1, "%s: cosine %g", str(&d, f, "format"), cs);
        /* a speed-up is a measurement or null ("no kernel"), never a made-up figure */
        const double su = num(&d, f, "speedup"), ts = num(&d, f, "time_s");
        const char *k = str(&d, f, "kernel");
        cr_expect(isnan(su) == (k == NULL || !strcmp(k, "null")), "%s", str(&d, f, "format"));
        if (!isnan(su)) {
            cr_expect(su > 0 && ts > 0, "%s: speed-up %g, time %g", str(&d, f, "format"), su, ts);
            /* the kernel's own output agrees with the evaluated format */
            const double kr = num(&d, f, "kernel_rel_l2");
            if (!isnan(kr) && strcmp(str(&d, f, "format"), "int8-tensor"))
                cr_expect(fabs(kr - rel) < 0.1 * rel + 1e-4, "%s: kernel %g vs eval %g",
                          str(&d, f, "format"), kr, rel);
        }
    }
    cr_expect_lt(rel_of(&d, "int4-g32"), rel_of(&d, "int4-g128"));
    cr_expect_lt(rel_of(&d, "w8a8-smooth"), rel_of(&d, "w8a8"));
    yaml_node_t *sp = ffn_y_get(&d.y, d.root, "speed", NULL);
    cr_expect_str_eq(str(&d, sp, "measured"), "true");
    cr_expect(str(&d, sp, "fp32_kernel") && strlen(str(&d, sp, "fp32_kernel")) > 0);
    cr_expect_gt(num(&d, sp, "fp32_time_s"), 0);
    cr_expect_lt(num(&d, sp, "fp32_kernel_rel_l2"), 1e-5);
    cr_expect_eq(num(&d, sp, "threads"), 1);
    ffn_ydoc_release(&d.y);
}

Test(cli_quant, csv_has_one_row_per_format)
{
    cr_assert_eq(run(SMALL " --no-speed --format csv --formats int8-channel,int4-g64,w8a8"), 0,
                 "%s", err_text());
    const char *t = out_text();
    cr_expect_eq(count_lines(t), 4, "%s", t);
    cr_expect(!strncmp(t, "d,f,act,tokens,weights,", 23), "%s", t);
    cr_expect(strstr(t, "\n128,256,swiglu,8,gauss,") != NULL, "%s", t);
    cr_expect(strstr(t, ",int4-g64,4.5,") != NULL, "%s", t);
    /* 19 columns on every line */
    for (const char *l = t; *l;) {
        int commas = 0;
        const char *e = strchr(l, '\n');
        for (const char *p = l; p < e; p++)
            commas += *p == ',';
        cr_expect_eq(commas, 18, "%.*s", (int)(e - l), l);
        l = e + 1;
    }
}

Test(cli_quant, seeds_and_options_change_the_inputs)
{
    cr_assert_eq(run(SMALL " --no-speed --format csv --formats w8a8 --seed 1"), 0);
    char a[4096];
    copy_text(a, sizeof a, out_text());
    cr_assert_eq(run(SMALL " --no-speed --format csv --formats w8a8 --seed 1"), 0);
    cr_expect_str_eq(out_text(), a, "one seed, one result");
    cr_assert_eq(run(SMALL " --no-speed --format csv --formats w8a8 --seed 2"), 0);
    cr_expect_str_neq(out_text(), a);
    cr_assert_eq(run(SMALL " --no-speed --formats int4 --group 64 --dist student-t --nu 3 "
                           "--outliers 0.05 --outlier-scale 80 --act geglu"),
                 0, "%s", err_text());
    const char *t = out_text();
    cr_expect(strstr(t, "int4-g64") && !strstr(t, "int4-g32"), "%s", t);
    cr_expect(strstr(t, "Student-t (nu 3)") && strstr(t, "6 of 128 channels") &&
                  strstr(t, "scaled 80x") && strstr(t, "geglu"),
              "%s", t);
    /* --weights, the old spelling of --dist, gives the same layer with a note */
    copy_text(a, sizeof a, t);
    cr_assert_eq(run(SMALL " --no-speed --formats int4 --group 64 --weights student-t --nu 3 "
                           "--outliers 0.05 --outlier-scale 80 --act geglu"),
                 0, "%s", err_text());
    char b[4096];
    copy_text(b, sizeof b, out_text());
    cr_expect_str_eq(b, a, "--weights is not --dist");
    cr_expect(strstr(err_text(), "note: --weights is now --dist") != NULL, "%s", err_text());
    cr_assert_eq(run("--model " FFNROOF_SOURCE_DIR
                     "/tests/data/models/tiny.yaml --tokens 4 --no-speed --formats w8a8"),
                 0, "%s", err_text());
    cr_expect(strstr(out_text(), "d 64, f 128, swiglu"), "%s", out_text());
}

Test(cli_quant, a_checkpoint_gives_the_numbers_of_the_same_weights)
{
    /* the synthetic layer of seed 3, written as layer 2 of an F32 checkpoint, must give the
     * synthetic run's errors exactly (the activations share the seed) */
    const ffn_kshape s = {.d = 64, .f = 128, .act = FFN_ACT_SWIGLU};
    const ffn_qeval_synth syn = {.seed = 3};
    float *wg = malloc(64 * 128 * 4), *wu = malloc(64 * 128 * 4), *wd = malloc(64 * 128 * 4);
    cr_assert_eq(ffn_qeval_synth_weights(&syn, &s, wg, wu, wd), 0);
    st_write_layer(st_path, 2, wg, wu, wd, 64, 128, "F32");
    char args[1000];
    snprintf(args, sizeof args,
             "--checkpoint %s --layer 2 --tokens 8 --seed 3 --no-speed "
             "--format json --out %s",
             st_path, file_out);
    cr_assert_eq(run(args), 0, "%s", err_text());
    cr_expect_eq(strlen(out_text()), 0u, "--out: nothing on stdout");
    doc c, y;
    load_json(&c, file_out);
    yaml_node_t *w = ffn_y_get(&c.y, c.root, "weights", NULL);
    cr_expect_str_eq(str(&c, w, "source"), "checkpoint");
    cr_expect_str_eq(str(&c, w, "dtype"), "F32");
    cr_expect(strstr(str(&c, w, "checkpoint"), "model.layers.2.mlp."));
    cr_assert_eq(run("--d 64 --f 128 --tokens 8 --seed 3 --no-speed --format json"), 0);
    load_json(&y, out_path);
    cr_assert_eq(n_formats(&c), n_formats(&y));
    for (size_t i = 0; i < n_formats(&c); i++)
        cr_expect_eq(num(&c, format_at(&c, i), "rel_l2"), num(&y, format_at(&y, i), "rel_l2"), "%s",
                     str(&c, format_at(&c, i), "format"));
    ffn_ydoc_release(&c.y);
    ffn_ydoc_release(&y.y);
    /* BF16: the weights rounded, the errors close but not equal */
    st_write_layer(st_path, 0, wg, wu, wd, 64, 128, "BF16");
    snprintf(args, sizeof args, "--checkpoint %s --tokens 8 --no-speed", st_path);
    cr_assert_eq(run(args), 0, "%s", err_text());
    cr_expect(strstr(out_text(), "(BF16)") && strstr(out_text(), "model.layers.0.mlp."), "%s",
              out_text());
    free(wg);
    free(wu);
    free(wd);
}

/* exit 2, the message on stderr containing want, nothing on stdout or in --out */
static void bad(const char *args, const char *want)
{
    char a[2048];
    snprintf(a, sizeof a, "%s --out %s", args, file_out);
    unlink(file_out);
    const int code = run(a);
    const char *e = err_text();
    cr_expect_eq(code, 2, "'%s': exit %d (want 2): %s", args, code, e);
    cr_expect(strstr(e, want) != NULL, "'%s': '%s' not in: %s", args, want, e);
    cr_expect(access(file_out, F_OK) != 0, "'%s': wrote --out although it failed", args);
    cr_expect(strstr(e, "AddressSanitizer") == NULL && strstr(e, "runtime error") == NULL, "%s", e);
}

Test(cli_quant, bad_options_exit_2)
{
    bad("--d 96 --f 256 --group 32,64 --no-speed", "valid group sizes: 32");
    bad("--d 96 --f 256 --formats int4-g128 --no-speed",
        "int4 groups of 128 do not divide K of this layer (d 96 for gate and up, f 256 for "
        "down); valid group sizes: 32");
    bad("--d 100 --f 256 --formats int4 --group 32", "valid group sizes: none");
    bad(SMALL " --formats int3", "unknown format 'int3'");
    bad(SMALL " --formats w8a8,w8a8", "'w8a8' given twice");
    bad(SMALL " --group 16", "--group: 16 is not an int4 group size");
    bad(SMALL " --outliers 2", "--outliers");
    bad(SMALL " --outlier-scale 0.5", "--outlier-scale");
    bad(SMALL " --alpha -0.1", "--alpha");
    bad(SMALL " --dist laplace", "not gauss or student-t");
    bad(SMALL " --nu 3", "--nu needs --dist student-t");
    bad(SMALL " --act mish", "unknown activation");
    bad(SMALL " --tokens 0", "--tokens");
    bad("--layer 3", "--layer needs --checkpoint");
    bad("--model " FFNROOF_SOURCE_DIR "/tests/data/models/tiny.yaml --d 64", "--model gives d, f");
    bad("--model nonexistent-model", "nonexistent-model");
    bad(SMALL " --no-speed --reps 3", "not with --no-speed");
    bad(SMALL " --format yaml", "yaml");
    bad(SMALL " stray", "unexpected argument 'stray'");
}

Test(cli_quant, bad_checkpoints_exit_2_naming_file_and_tensor)
{
    char args[600];
    snprintf(args, sizeof args, "--checkpoint %s --no-speed", st_path);
    bad(args, "cannot open"); /* missing */
    st_write_raw(st_path, UINT64_MAX,
                 "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                 "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}",
                 "\0\0\0\0\0\0", 6);
    char want[600];
    snprintf(want, sizeof want,
             "%s: data_offsets [2, 6] overlap those of tensor 'a' [0, 4] "
             "(tensor 'b')",
             st_path);
    bad(args, want);
    st_write_raw(st_path, 4096, "{}", NULL, 0);
    bad(args, "runs past the end of the file");
    st_write_raw(st_path, UINT64_MAX,
                 "{\"w\":{\"dtype\":\"Q4\",\"shape\":[4],\"data_offsets\":[0,4]}}", "\0\0\0\0", 4);
    bad(args, "unknown dtype 'Q4' (the format's are");
    float w[64 * 128] = {0};
    st_write_layer(st_path, 0, w, w, w, 64, 128, "F32");
    snprintf(args, sizeof args, "--checkpoint %s --layer 5 --no-speed", st_path);
    bad(args, "no tensor 'model.layers.5.mlp.gate_proj.weight'");
    bad(args, "the file holds layer 0");
    snprintf(args, sizeof args, "--checkpoint %s --d 64 --no-speed", st_path);
    bad(args, "come from the checkpoint");
    snprintf(args, sizeof args, "--checkpoint %s --act gelu --no-speed", st_path);
    bad(args, "must be swiglu, geglu or reglu");
    snprintf(args, sizeof args, "--checkpoint %s --dist student-t --no-speed", st_path);
    bad(args, "the checkpoint has its own");
    /* a NaN weight */
    w[5] = NAN;
    st_write_layer(st_path, 0, w, w, w, 64, 128, "F32");
    snprintf(args, sizeof args, "--checkpoint %s --no-speed", st_path);
    bad(args, "hold a NaN or an infinity");
    /* a dtype that cannot be read as weights */
    st_write_raw(st_path, UINT64_MAX,
                 "{\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"I8\",\"shape\":[2,2],"
                 "\"data_offsets\":[0,4]},\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"I8\","
                 "\"shape\":[2,2],\"data_offsets\":[4,8]},\"model.layers.0.mlp.down_proj.weight\":"
                 "{\"dtype\":\"I8\",\"shape\":[2,2],\"data_offsets\":[8,12]}}",
                 "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    bad(args, "dtype I8 cannot be read as weights (F32, F16 or BF16 can) (tensor "
              "'model.layers.0.mlp.gate_proj.weight')");
}

Test(cli_quant, help_says_units_and_defaults)
{
    cr_assert_eq(run("--help"), 0);
    const char *t = out_text();
    cr_expect(strstr(t, "--outliers FRAC") && strstr(t, "--outlier-scale S") &&
                  strstr(t, "default 20") && strstr(t, "--checkpoint FILE") &&
                  strstr(t, "default 0.5") && strstr(t, "T = 1"),
              "%s", t);
}

Test(cli_quant, default_groups_are_those_that_fit)
{
    /* d 4, f 8: no group fits; the default list goes on without int4 */
    cr_assert_eq(run("--d 4 --f 8 --tokens 2 --no-speed --format csv"), 0, "%s", err_text());
    cr_expect(!strstr(out_text(), "int4") && strstr(out_text(), "w8a8-smooth"), "%s", out_text());
    cr_expect(strstr(err_text(), "int4 left out"), "%s", err_text());
    bad("--d 4 --f 8 --formats int4 --no-speed", "valid group sizes: none");
    /* d 96: only groups of 32 divide both d and f */
    cr_assert_eq(run("--d 96 --f 256 --tokens 4 --no-speed --format csv"), 0, "%s", err_text());
    const char *t = out_text();
    cr_expect(strstr(t, "int4-g32") && !strstr(t, "int4-g64") && !strstr(t, "int4-g128"), "%s", t);
}

/* w [K][N] as HF's [N][K] F32 bytes, as one st_tensor */
static st_tensor hf(const char *name, const float *w, size_t K, size_t N, void **buf)
{
    size_t b;
    *buf = st_hf_weight(w, K, N, "F32", &b);
    return (st_tensor){name, "F32", 2, {N, K}, *buf, b};
}

Test(cli_quant, a_sharded_checkpoint_reads_through_its_index)
{
    /* gate in shard 1, up and down in shard 2 (a layer may straddle shards) */
    const ffn_kshape s = {.d = 64, .f = 128, .act = FFN_ACT_SWIGLU};
    const ffn_qeval_synth syn = {.seed = 3};
    float *wg = malloc(64 * 128 * 4), *wu = malloc(64 * 128 * 4), *wd = malloc(64 * 128 * 4);
    cr_assert_eq(ffn_qeval_synth_weights(&syn, &s, wg, wu, wd), 0);
    void *b[3];
    char p1[400], p2[400], idx[400];
    snprintf(p1, sizeof p1, "%s/model-00001-of-00002.safetensors", dir);
    snprintf(p2, sizeof p2, "%s/model-00002-of-00002.safetensors", dir);
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", dir);
    const st_tensor t1[] = {hf("model.layers.0.mlp.gate_proj.weight", wg, 64, 128, &b[0])};
    const st_tensor t2[] = {hf("model.layers.0.mlp.up_proj.weight", wu, 64, 128, &b[1]),
                            hf("model.layers.0.mlp.down_proj.weight", wd, 128, 64, &b[2])};
    st_write(p1, t1, 1, true);
    st_write(p2, t2, 2, true);
    FILE *fp = fopen(idx, "w");
    fputs("{\"metadata\": {\"total_size\": 98304}, \"weight_map\": {"
          "\"model.layers.0.mlp.gate_proj.weight\": \"model-00001-of-00002.safetensors\", "
          "\"model.layers.0.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\", "
          "\"model.layers.0.mlp.down_proj.weight\": \"model-00002-of-00002.safetensors\"}}\n",
          fp);
    fclose(fp);
    char args[1000], want[4096];
    snprintf(args, sizeof args, "--checkpoint %s --tokens 8 --seed 3 --no-speed --format csv", idx);
    cr_assert_eq(run(args), 0, "%s", err_text());
    copy_text(want, sizeof want, out_text());
    cr_assert_eq(run("--d 64 --f 128 --tokens 8 --seed 3 --no-speed --format csv"), 0);
    /* the same numbers; only the weights column differs */
    const char *syn_csv = out_text();
    cr_expect_eq(count_lines(want), count_lines(syn_csv));
    cr_expect(strstr(want, ",checkpoint,") != NULL, "%s", want);
    const char *a = strstr(want, "int4-g32"), *c = strstr(syn_csv, "int4-g32");
    cr_assert(a && c);
    cr_expect(!strncmp(a, c, strcspn(c, "\n")), "%.80s vs %.80s", a, c);
    /* broken indexes */
    snprintf(args, sizeof args, "--checkpoint %s --layer 1 --no-speed", idx);
    bad(args, "the weight_map has no 'model.layers.1.mlp.gate_proj.weight'");
    unlink(p2);
    snprintf(args, sizeof args, "--checkpoint %s --no-speed", idx);
    bad(args, "model-00002-of-00002.safetensors: cannot open");
    fp = fopen(idx, "w");
    fputs("{\"weight_map\": {\"model.layers.0.mlp.gate_proj.weight\": \"../x.safetensors\"}}", fp);
    fclose(fp);
    bad(args, "must be a file name beside the index");
    fp = fopen(idx, "w");
    fputs("{\"metadata\": {}}", fp);
    fclose(fp);
    bad(args, "needs 'weight_map'");
    for (int i = 0; i < 3; i++)
        free(b[i]);
    free(wg);
    free(wu);
    free(wd);
}
