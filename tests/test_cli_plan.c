/* `ffnroof plan` and `ffnroof sweep` end to end, running the built binary: the documented JSON,
 * CSV and table; every shipped scenario; infeasible answers (exit 0); bad input (exit 2, one
 * line naming the problem, file:line:col for scenarios); the sweep's rows equal to `predict`
 * point by point; and an interrupted sweep (SIGINT) leaving only whole rows, exit 130. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../io/load/ydoc.h"
#include "helpers/cli_harness.h"

#define SCEN FFNROOF_SOURCE_DIR "/scenarios/"

static char out_path[256], err_path[256], tmp_path[256];

static void setup(void)
{
    snprintf(out_path, sizeof out_path, "/tmp/ffnroof-plan-%d.out", (int)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/ffnroof-plan-%d.err", (int)getpid());
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ffnroof-plan-%d.yaml", (int)getpid());
}

static void teardown(void)
{
    unlink(out_path);
    unlink(err_path);
    unlink(tmp_path);
}

TestSuite(cli_plan, .init = setup, .fini = teardown, .timeout = 300);

static int run(const char *args)
{
    return cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .out = out_path, .err = err_path},
                   args);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* CSV field separators: commas outside double quotes */
static int count_fields(const char *s)
{
    int n = 0;
    bool q = false;
    for (; *s; s++) {
        if (*s == '"') q = !q;
        n += *s == ',' && !q;
    }
    return n;
}

static yaml_node_t *need(ffn_ydoc *y, yaml_node_t *map, const char *key)
{
    yaml_node_t *v = ffn_y_get(y, map, key, NULL);
    cr_assert_not_null(v, "JSON lacks '%s'", key);
    return v;
}

Test(cli_plan, json_has_the_documented_fields)
{
    int rc = run("plan --scenario " SCEN "chat-8b.yaml --format json");
    cr_assert_eq(rc, 0, "exit %d: %s", rc, cli_slurp(err_path));
    ffn_ydoc y;
    ffn_diag d;
    cr_assert_eq(ffn_ydoc_load(&y, out_path, &d), 0, "JSON does not parse: %s", d.msg);
    yaml_node_t *root = ffn_ydoc_root(&y);
    cr_assert_str_eq(ffn_y_text(need(&y, root, "schema")), "ffnroof.plan/1");
    yaml_node_t *plans = need(&y, root, "plans");
    cr_assert_eq(plans->type, YAML_SEQUENCE_NODE);
    int n = 0;
    for (yaml_node_item_t *it = plans->data.sequence.items.start;
         it < plans->data.sequence.items.top; it++, n++) {
        yaml_node_t *p = yaml_document_get_node(&y.doc, *it);
        static const char *const keys[] = {"hw",
                                           "devices",
                                           "tp",
                                           "ep",
                                           "replicas",
                                           "fits",
                                           "memory_per_device_bytes",
                                           "max_batch",
                                           "step_s",
                                           "tokens_per_s",
                                           "bottleneck",
                                           "step"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            need(&y, p, keys[k]);
        yaml_node_t *step = need(&y, p, "step");
        yaml_node_t *parts = need(&y, step, "parts");
        double sum = 0;
        for (yaml_node_item_t *q = parts->data.sequence.items.start;
             q < parts->data.sequence.items.top; q++) {
            yaml_node_t *part = yaml_document_get_node(&y.doc, *q);
            const char *label = ffn_y_text(need(&y, part, "label"));
            cr_assert(!strcmp(label, "ffn") || !strcmp(label, "other"));
            sum += strtod(ffn_y_text(need(&y, part, "seconds")), NULL);
        }
        double st = strtod(ffn_y_text(need(&y, p, "step_s")), NULL);
        cr_assert_float_eq(sum, st, 1e-9 * st, "parts %g vs step %g", sum, st);
        need(&y, need(&y, step, "ffn"), "ffn"); /* predict's run object */
        if (n == 0) {
            cr_assert_str_eq(ffn_y_text(need(&y, p, "feasible")), "true");
            cr_assert_str_eq(ffn_y_text(need(&y, p, "rank")), "1");
        }
    }
    cr_assert_eq(n, 3); /* one plan per device */
    need(&y, root, "layouts");
    ffn_ydoc_release(&y);
}

Test(cli_plan, every_shipped_scenario_answers)
{
    static const char *const names[] = {"chat-8b",
                                        "prefill-70b-long",
                                        "mixtral-serving",
                                        "deepseek-v3-h200",
                                        "qwen3-30b-a3b-per-watt",
                                        "llama2-70b-wse3-pipeline",
                                        "deepseek-v3-disaggregated"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "plan --scenario " SCEN "%s.yaml --explain", names[i]);
        int rc = run(args);
        cr_assert_eq(rc, 0, "%s: exit %d: %s", names[i], rc, cli_slurp(err_path));
        const char *o = cli_slurp(out_path);
        cr_assert(strstr(o, "explain") && strstr(o, "KV ") && strstr(o, "FFN share"), "%s: %s",
                  names[i], o);
        cr_assert(strstr(o, " 1 ") != NULL, "%s: no ranked plan:\n%s", names[i], o);
        /* the table fits 80 columns */
        for (const char *l = o; *l;) {
            const char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) : strlen(l);
            cr_assert_leq(len, 80, "%s: line too long: %.*s", names[i], (int)len, l);
            l = e ? e + 1 : l + len;
        }
    }
    /* the CPU scenario plans on the committed calibration of the reference host */
    int rc = run("plan --scenario " SCEN "cpu-small.yaml");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_assert(strstr(cli_slurp(out_path), "calibrated-vm") != NULL, "%s", cli_slurp(out_path));
}

Test(cli_plan, csv_one_row_per_layout)
{
    int rc = run("plan --scenario " SCEN "mixtral-serving.yaml --format csv");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    char *o = cli_slurp(out_path);
    int header = 0, rows = 0, chosen = 0;
    for (char *l = strtok(o, "\n"); l; l = strtok(NULL, "\n")) {
        if (!header) {
            header = count_char(l, ',');
            cr_assert(strstr(l, "memory_per_device_bytes") && strstr(l, "bottleneck"));
            continue;
        }
        cr_assert_eq(count_fields(l), header, "%s", l);
        rows++;
        char model[64], hw[64], rank[8];
        int ch = -1, valid = -1, feas = -1;
        const char *q = l;
        cr_assert_eq(sscanf(q, "%63[^,],%63[^,],", model, hw), 2);
        for (int k = 0; k < 2; k++)
            q = strchr(q, ',') + 1;
        rank[0] = '\0';
        if (*q != ',') sscanf(q, "%7[^,]", rank);
        q = strchr(q, ',') + 1;
        cr_assert_eq(sscanf(q, "%d,%d,%d,", &ch, &valid, &feas), 3, "%s", l);
        if (ch == 1) {
            chosen++;
            cr_assert(feas == 1 && rank[0], "%s", l); /* every device has a feasible plan here */
        } else {
            cr_assert_eq(rank[0], '\0', "%s", l);
        }
    }
    /* devices x the shapes of TP 1-8, the default DP 1-64 and EP 1-8 where EP divides the
     * stage's TP x DP devices and a replica needs at most the limit of 128 */
    int shapes = 0;
    for (int tp = 1; tp <= 8; tp *= 2)
        for (int dp = 1; dp <= 64; dp *= 2)
            for (int ep = 1; ep <= 8; ep *= 2)
                shapes += (tp * dp) % ep == 0 && tp * dp <= 128;
    cr_assert_eq(rows, 3 * shapes);
    cr_assert_eq(chosen, 3);
}

Test(cli_plan, infeasible_is_an_answer)
{
    int rc = run("plan --model llama3-70b --hw a100-sxm-80gb,h100-sxm --tpot 1ms");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_assert(strstr(o, "infeasible") && strstr(o, "closest miss"), "%s", o);
    cr_assert(strstr(o, "TPOT at batch 1") != NULL, "%s", o);
    rc = run("plan --model llama3-70b --hw h100-sxm --tpot 1ms --format json");
    cr_assert_eq(rc, 0);
    cr_assert(strstr(cli_slurp(out_path), "\"feasible\": false") != NULL);
}

Test(cli_plan, bad_input_exits_2)
{
    int rc = run("plan --model llama9 --hw h100-sxm");
    cr_assert_eq(rc, 2);
    const char *e = cli_slurp(err_path);
    cr_assert(strstr(e, "ffnroof plan: unknown model 'llama9'; known:") && strstr(e, "llama3-8b"),
              "%s", e);
    cr_assert(strstr(e, "Try 'ffnroof plan --help'.") != NULL, "%s", e);
    cr_assert_eq(count_char(e, '\n'), 2, "the error and the Try line: %s", e);
    /* a name within an edit or two gets a suggestion, one a unique beginning is taken */
    cr_assert_eq(run("plan --model lama3-8b --hw h100-sxm"), 2);
    cr_assert(strstr(cli_slurp(err_path), "did you mean llama3-8b?") != NULL, "%s",
              cli_slurp(err_path));
    cr_assert_eq(run("plan --model Llama-3-8B --hw mi300 --tpot 50ms"), 0, "%s",
                 cli_slurp(err_path));
    cr_assert(strstr(cli_slurp(err_path), "device 'mi300' taken as 'mi300x'") != NULL, "%s",
              cli_slurp(err_path));

    write_file(tmp_path, "name: t\nmodel: llama3-8b\nhw: [h100-sxm, h300]\n");
    char args[512];
    snprintf(args, sizeof args, "plan --scenario %s", tmp_path);
    cr_assert_eq(run(args), 2);
    e = cli_slurp(err_path);
    char want[400];
    snprintf(want, sizeof want, "%s:3:16: unknown device 'h300'; known:", tmp_path);
    cr_assert(strstr(e, want) && strstr(e, "h200"), "%s", e);

    write_file(tmp_path,
               "name: t\nmodel: llama3-8b\nhw: h100-sxm\nslo: {tpot: 50 ms}\nlimts: {}\n");
    cr_assert_eq(run(args), 2);
    snprintf(want, sizeof want, "%s:5:1: unknown key 'limts' (did you mean 'limits'?)", tmp_path);
    cr_assert(strstr(cli_slurp(err_path), want), "%s", cli_slurp(err_path));

    write_file(tmp_path, "name: t\nmodel: llama3-8b\nhw: h100-sxm\nlimits:\n  max_devices: 0\n");
    cr_assert_eq(run(args), 2);
    snprintf(want, sizeof want, "%s:5:16:", tmp_path);
    cr_assert(strstr(cli_slurp(err_path), want) &&
                  strstr(cli_slurp(err_path), "at least one device"),
              "%s", cli_slurp(err_path));

    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm --max-devices 0"), 2);
    cr_assert(strstr(cli_slurp(err_path), "at least one device"));
    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm --tpot 50"), 2);
    cr_assert_eq(run("plan --model llama3-8b"), 2);
    /* gaudi3 has no list price in hw/prices.tsv */
    cr_assert_eq(run("plan --hw gaudi3 --model llama3-8b --objective tokens_per_dollar"), 2);
    cr_assert(strstr(cli_slurp(err_path), "price"));
    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm --bogus"), 2);
    /* a keyword option names its choices (ffn_cli_choice) */
    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm --margin p50"), 2);
    cr_assert(strstr(cli_slurp(err_path), "--margin must be median or p90; got 'p50'"), "%s",
              cli_slurp(err_path));
    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm --margin p90 --format json"), 0);
    cr_assert(strstr(cli_slurp(out_path), "\"margin\": \"p90\""), "%.300s", cli_slurp(out_path));
    cr_assert_eq(run("plot moe --model mixtral-8x7b --hw h100-sxm --by tp"), 2);
    cr_assert(strstr(cli_slurp(err_path), "--by must be batch or ep; got 'tp'"), "%s",
              cli_slurp(err_path));
    cr_assert_eq(run("plan --help"), 0);
    cr_assert(strstr(cli_slurp(out_path), "--scenario"));
    cr_assert_eq(run("sweep --help"), 0);
    cr_assert(strstr(cli_slurp(out_path), "1-4096:x2"));
}

Test(cli_plan, price_gives_tokens_per_dollar)
{
    int rc = run("plan --model llama3-8b --hw h100-sxm,h200 --tpot 30ms --price h100-sxm=2 "
                 "--price h200=3 --objective tokens_per_dollar --format json");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_assert(strstr(cli_slurp(out_path), "\"tokens_per_dollar\": null") == NULL);
}

/* Each sweep row equals the row `predict --format csv` prints for the same point. */
Test(cli_plan, sweep_equals_predict_point_by_point)
{
    int rc = run("sweep --model llama2-7b,mixtral-8x7b --hw h100-sxm --batch 1,16 --seq 128,512 "
                 "--tp 1,2 --dtype bf16,int4/bf16");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    static char sweep[1 << 16];
    snprintf(sweep, sizeof sweep, "%s", cli_slurp(out_path));
    int rows = 0;
    char *save = NULL;
    char *header = strtok_r(sweep, "\n", &save);
    cr_assert(strncmp(header, "model,hw,phase,batch,seq", 24) == 0, "%s", header);
    for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char model[64], hw[64], phase[16], batch[16], seq[16], tok[16], wdt[16], adt[16], tp[8];
        cr_assert_eq(sscanf(l, "%63[^,],%63[^,],%15[^,],%15[^,],", model, hw, phase, batch), 4);
        /* seq is empty for decode rows */
        const char *p = l;
        for (int k = 0; k < 4; k++)
            p = strchr(p, ',') + 1;
        if (*p == ',') {
            seq[0] = '\0';
            p++;
        } else {
            sscanf(p, "%15[^,]", seq);
            p = strchr(p, ',') + 1;
        }
        cr_assert_eq(sscanf(p, "%15[^,],%15[^,],%15[^,],%7[^,],", tok, wdt, adt, tp), 4);
        char args[512];
        snprintf(args, sizeof args,
                 "predict --model %s --hw %s --phase %s --batch %s --seq %s --wdtype %s "
                 "--adtype %s --tp %s --format csv",
                 model, hw, phase, batch, seq[0] ? seq : "128", wdt, adt, tp);
        cr_assert_eq(run(args), 0, "%s: %s", args, cli_slurp(err_path));
        const char *pr = cli_slurp(out_path);
        const char *line2 = strchr(pr, '\n') + 1;
        size_t len = strlen(l);
        cr_assert(strncmp(line2, l, len) == 0 && line2[len] == '\n', "sweep:   %s\npredict: %s", l,
                  line2);
        rows++;
    }
    cr_assert_eq(rows, 2 * 2 * 2 * (2 * 2 + 2)); /* models x dtypes x tp x (prefill + decode) */

    /* JSON lines: one object per line with predict's run fields */
    rc = run(
        "sweep --model mixtral-8x7b --hw h100-sxm --batch 1-64:x4 --phase decode --format json");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    char *o = cli_slurp(out_path);
    cr_assert_eq(count_char(o, '\n'), 4); /* batches 1, 4, 16, 64 */
    cr_assert(
        strncmp(o, "{\"model\":\"mixtral-8x7b\",\"hw\":\"h100-sxm\",\"run\":{\"phase\":\"decode\"",
                60) == 0,
        "%s", o);
}

/* The scenario's weights key reaches every sweep row (the CSV columns weights and weights_from:
 * the residency asked for and the level the weights were read from), and
 * --weights overrides it. bert-base's
 * FFN weights of one layer fit the Xeon's L2. */
Test(cli_plan, sweep_rows_say_where_the_weights_come_from)
{
    write_file(tmp_path, "name: t\nmodel: bert-base\nhw: xeon-8480\nphase: decode\n"
                         "weights: hot\nsweep: {batch: [1, 2], phase: decode}\n");
    char args[512];
    snprintf(args, sizeof args, "sweep --scenario %s", tmp_path);
    cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
    char *o = cli_slurp(out_path);
    cr_assert(strstr(o, ",imbalance,weights,weights_from,vec_ops,"), "%s", o);
    cr_assert_eq(count_char(o, '\n'), 3, "%s", o);
    /* weights and weights_from are the 25th and 26th fields */
    const char *row = strchr(o, '\n') + 1;
    const char *f = row;
    for (int i = 0; i < 24; i++)
        f = strchr(f, ',') + 1;
    cr_assert(strncmp(f, "hot,L2,", 7) == 0, "%s", row);
    snprintf(args, sizeof args, "sweep --scenario %s --weights cold", tmp_path);
    cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
    o = cli_slurp(out_path);
    row = strchr(o, '\n') + 1;
    f = row;
    for (int i = 0; i < 24; i++)
        f = strchr(f, ',') + 1;
    cr_assert(strncmp(f, "cold,memory,", 12) == 0, "%s", row);
}

Test(cli_plan, sweep_bad_grids)
{
    write_file(tmp_path, "name: t\nmodel: llama3-8b\nhw: h100-sxm\nsweep:\n  batch: []\n");
    char args[512];
    snprintf(args, sizeof args, "sweep --scenario %s", tmp_path);
    cr_assert_eq(run(args), 2);
    char want[400];
    snprintf(want, sizeof want, "%s:5:10: 'batch' is an empty grid", tmp_path);
    cr_assert(strstr(cli_slurp(err_path), want), "%s", cli_slurp(err_path));
    cr_assert_eq(run("sweep --model llama3-8b --hw h100-sxm --batch ''"), 2);
    cr_assert(strstr(cli_slurp(err_path), "empty grid"), "%s", cli_slurp(err_path));
    cr_assert_eq(run("sweep --model llama3-8b --hw h100-sxm --batch 8-1"), 2);
    cr_assert_eq(run("sweep --model llama3-8b --hw h100-sxm --batch 1-8:x1"), 2);
    cr_assert_eq(run("sweep --model llama3-8b --hw h999"), 2);
    cr_assert(strstr(cli_slurp(err_path), "unknown device 'h999'; known:"), "%s",
              cli_slurp(err_path));
    /* every point invalid: nothing to sweep */
    cr_assert_eq(run("sweep --model llama3-8b --hw h100-sxm --tp 3"), 2);
    cr_assert(strstr(cli_slurp(err_path), "skipping") && strstr(cli_slurp(err_path), "no point"),
              "%s", cli_slurp(err_path));
    /* some invalid: skipped with a note, the rest written */
    cr_assert_eq(run("sweep --model llama3-8b --hw h100-sxm --tp 1,3 --phase decode"), 0);
    cr_assert_eq(count_char(cli_slurp(out_path), '\n'), 2);
    cr_assert(strstr(cli_slurp(err_path), "1 of 2 points skipped"), "%s", cli_slurp(err_path));
}

Test(cli_plan, sweep_interrupted_keeps_whole_rows)
{
    char *const argv[] = {CLI_BIN,    "sweep",   "--model",    "llama2-7b", "--hw",
                          "h100-sxm", "--batch", "1-16000000", "--phase",   "decode",
                          "--out",    out_path,  NULL};
    pid_t pid = cli_spawn(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .err = err_path}, argv);
    cr_assert_geq(pid, 0);
    /* wait until rows arrive, then interrupt */
    struct stat st;
    for (int i = 0; i < 200; i++) {
        if (stat(out_path, &st) == 0 && st.st_size > 100000) break;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status), "killed by a signal");
    cr_assert_eq(WEXITSTATUS(status), 130, "exit %d: %s", WEXITSTATUS(status), cli_slurp(err_path));
    cr_assert(strstr(cli_slurp(err_path), "interrupted after"), "%s", cli_slurp(err_path));
    FILE *fp = fopen(out_path, "r");
    cr_assert_not_null(fp);
    static char line[4096];
    int header = -1, n = 0;
    long last = 0;
    while (fgets(line, sizeof line, fp)) {
        size_t l = strlen(line);
        cr_assert(l > 0 && line[l - 1] == '\n', "row %d is cut: %s", n, line);
        if (header < 0)
            header = count_char(line, ',');
        else
            cr_assert_eq(count_char(line, ','), header, "%s", line);
        n++;
        if (n > 1) {
            long b = strtol(strchr(strchr(strchr(line, ',') + 1, ',') + 1, ',') + 1, NULL, 10);
            cr_assert_eq(b, last + 1, "rows in order, none lost");
            last = b;
        }
    }
    fclose(fp);
    cr_assert_gt(n, 100);
    cr_assert_lt(n, 16000001);
}

/* plan --emit: the chosen layout as each engine's launch command, the layout in the engine's own
 * flags (DeepSeek-V3 at attention DP 8 with EP 8 on 8 H200s; Llama-3-70B pipelined), the batch
 * and the context; an engine that cannot express a layout says so; an unknown engine is bad
 * usage. */
Test(cli_plan, emit_names_the_layout_in_each_engines_flags)
{
    static const struct {
        const char *engine, *want[4];
    } cases[] = {
        {"vllm",
         {"vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 1", "--data-parallel-size 8",
          "--enable-expert-parallel", "--max-model-len 2560"}},
        {"sglang",
         {"sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8",
          "--dp-size 8 --enable-dp-attention", "--ep-size 8", "--context-length 2560"}},
        {"trtllm",
         {"trtllm-serve deepseek-ai/DeepSeek-V3 --tp_size 8", "--ep_size 8",
          "enable_attention_dp: true", "--max_seq_len 2560"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256];
        snprintf(args, sizeof args,
                 "plan --scenario " SCEN "deepseek-v3-h200.yaml --tp 1 --dp 8 --ep 8 --emit %s "
                 "--format json",
                 cases[i].engine);
        cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
        const char *o = cli_slurp(out_path);
        for (int k = 0; k < 4; k++)
            cr_assert(strstr(o, cases[i].want[k]) != NULL, "%s: no '%s' in %s", cases[i].engine,
                      cases[i].want[k], o);
    }
    cr_assert_eq(run("plan --model llama3-70b --hw h100-sxm --tp 4 --pp 2 --emit vllm"), 0, "%s",
                 cli_slurp(err_path));
    cr_assert(strstr(cli_slurp(out_path), "--pipeline-parallel-size 2") != NULL, "%s",
              cli_slurp(out_path));
    cr_assert_eq(run("plan --model llama3-70b --hw h100-sxm --emit tgi"), 2);
    cr_assert(strstr(cli_slurp(err_path), "--emit must be vllm, sglang or trtllm") != NULL);
}

/* The models come out in the order they were given, not by name. */
Test(cli_plan, models_keep_the_order_given)
{
    cr_assert_eq(run("plan --model llama3-8b,deepseek-v3,llama3-70b --hw h100-sxm --tpot 100ms"), 0,
                 "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    const char *a = strstr(o, "model    llama3-8b"), *b = strstr(o, "model    deepseek-v3"),
               *c = strstr(o, "model    llama3-70b");
    cr_assert(a && b && c && a < b && b < c, "%s", o);
}

/* `sweep --step` prices what `plan` prices: the same decode point (batch 64 at the full context of
 * 1024 + 1024 tokens, TP 4) gives the same step time in both, with the KV cache in the same dtype
 * (--dtype fp8 makes it fp8 in both, --kv-dtype sets it apart), and a batch beyond memory says it
 * does not fit. */
Test(cli_plan, sweep_step_equals_plan_step)
{
    static const char *const dtypes[] = {"", " --dtype fp8", " --dtype fp8 --kv-dtype bf16"};
    double steps[3];
    for (int t = 0; t < 3; t++) {
        char args[400];
        snprintf(args, sizeof args,
                 "plan --model llama3-70b --hw h100-sxm --tp 4 --max-batch 64 --prompt 1024 "
                 "--output 1024 --format json%s",
                 dtypes[t]);
        cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
        const char *pj = cli_slurp(out_path);
        const char *k = strstr(pj, "\"step_s\":");
        cr_assert_not_null(k, "%s", pj);
        const double plan_step = strtod(k + 9, NULL);
        snprintf(args, sizeof args,
                 "sweep --model llama3-70b --hw h100-sxm --tp 4 --batch 64,4096 --seq 2048 "
                 "--phase decode --step%s",
                 dtypes[t]);
        cr_assert_eq(run(args), 0, "%s", cli_slurp(err_path));
        char *o = strdup(cli_slurp(out_path));
        cr_expect(strncmp(o, "model,hw,phase,batch,seq,tp,dp,ep,wdtype,adtype,step_s,step_p10_s,",
                          66) == 0,
                  "%s", o);
        char *row = strchr(o, '\n') + 1, *row2 = strchr(row, '\n') + 1;
        /* step_s is the 11th column, fits the 27th */
        char *f = row;
        for (int i = 0; i < 10; i++)
            f = strchr(f, ',') + 1;
        steps[t] = strtod(f, NULL);
        cr_expect_lt(fabs(steps[t] / plan_step - 1), 1e-5, "%s: sweep %g vs plan %g", dtypes[t],
                     steps[t], plan_step);
        if (t == 0) {
            cr_expect(strstr(row, ",1,0\n") != NULL, "batch 64 fits: %s", row);
            cr_expect(strstr(row2, ",0,0\n") != NULL, "batch 4096 does not: %s", row2);
        }
        free(o);
    }
    cr_expect_neq(steps[1], steps[2], "the KV cache's dtype changes nothing");
}

/* --explain=DEVICE explains the plan on that device, not only the best one. */
Test(cli_plan, explain_a_chosen_device)
{
    cr_assert_eq(run("plan --model llama3-8b --hw h100-sxm,h200 --tpot 30ms --explain=h100-sxm"), 0,
                 "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "explain  llama3-8b on h100-sxm"), "%s",
              cli_slurp(out_path));
    cr_expect_eq(run("plan --model llama3-8b --hw h100-sxm,h200 --explain=b200"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--explain=b200: no such device"), "%s",
              cli_slurp(err_path));
}

/* A device whose spec has a network spreads a replica over nodes (L40S: 8 a node, EFA between
 * them); one without refuses it and says why, in the table as in the JSON. */
Test(cli_plan, a_replica_over_nodes_needs_a_network)
{
    cr_assert_eq(run("plan --model llama3-70b --hw l40s,h100-pcie --tp 8 --pp 2"), 0, "%s",
                 cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, " 1 l40s          TP8/PP2       16 ") != NULL, "%s", o);
    cr_expect(strstr(o, "- h100-pcie     no layout is possible; e.g.\n") != NULL, "%s", o);
    cr_expect(strstr(o, "TP 8 spans more than the 2 devices of a node") != NULL, "%s", o);
    cr_assert_eq(run("plan --model llama3-70b --hw h100-pcie --tp 2 --pp 2 --format json"), 0);
    cr_expect(strstr(cli_slurp(out_path),
                     "h100-pcie has no network across nodes (network: in its spec)") != NULL,
              "%s", cli_slurp(out_path));
}
