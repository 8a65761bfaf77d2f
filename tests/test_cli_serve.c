/* `ffnroof serve` end to end, running the built binary: the table with its frontier and pick,
 * JSON lines whose fields agree with each other (Little's law, the range around the value), a
 * rate beyond capacity said as unstable (exit 0), the chart's data and script, the engines'
 * schedulers, and bad input (exit 2, one line naming the problem). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/cli_harness.h"

static char out_path[256], err_path[256], dir_path[256];

static void setup(void)
{
    snprintf(out_path, sizeof out_path, "/tmp/ffnroof-serve-%d.out", (int)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/ffnroof-serve-%d.err", (int)getpid());
    snprintf(dir_path, sizeof dir_path, "/tmp/ffnroof-serve-%d.d", (int)getpid());
}

static void teardown(void)
{
    unlink(out_path);
    unlink(err_path);
    cli_rm_rf(dir_path);
}

TestSuite(cli_serve, .init = setup, .fini = teardown, .timeout = 300);

static int run(const char *args)
{
    return cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .out = out_path, .err = err_path},
                   args);
}

static double num_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    cr_assert_not_null(p, "no %s in %s", key, s);
    return strtod(p + strlen(key), NULL);
}

Test(cli_serve, table_has_frontier_pick_and_cost)
{
    cr_assert_eq(run("serve --model llama3-8b --hw h100-sxm,h200 --tp 1,2 --concurrency 1-256:x4 "
                     "--user-tps 50"),
                 0, "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "llama3-8b on h100-sxm, vllm scheduler: 8192 tokens a step"), "%s", o);
    cr_expect(strstr(o, "llama3-8b on h200"), "%s", o);
    cr_expect(strstr(o, "TTFT p50") && strstr(o, "tok/s/device (range)"), "%s", o);
    cr_expect(strstr(o, ">*  TP"), "a pick on the frontier: %s", o);
    cr_expect(strstr(o, "at >= 50 tokens/s per user:"), "%s", o);
    cr_expect(strstr(o, "per M output tokens"), "the shipped prices give a cost: %s", o);
    cr_expect(strstr(o, "cheapest at >= 50 tokens/s per user:"), "%s", o);
}

/* Every JSON line: Little's law holds under a closed loop, the value sits in its range, and the
 * user rate is the inverse of the median TPOT. */
Test(cli_serve, json_lines_agree_with_themselves)
{
    cr_assert_eq(run("serve --model mixtral-8x7b --hw h100-sxm --tp 2 --dp 1,2 --concurrency "
                     "8,64 --format json --spread 0.3"),
                 0, "%s", cli_slurp(err_path));
    char *o = strdup(cli_slurp(out_path));
    int lines = 0;
    for (char *save = NULL, *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        lines++;
        const double C = num_after(l, "\"drive\":");
        const double L = num_after(l, "\"mean_in_system\":");
        const double XW = num_after(l, "\"little_in_system\":");
        cr_expect_lt(fabs(L / C - 1), 1e-6, "%s", l);
        cr_expect_lt(fabs(XW / C - 1), 0.08, "%s", l);
        const double v = num_after(l, "\"tokens_per_s_device\":{\"value\":");
        const double lo = num_after(l, "\"tokens_per_s_device\":{\"value\":") > 0
                              ? num_after(strstr(l, "\"tokens_per_s_device\""), "\"range\":[")
                              : 0;
        cr_expect_leq(lo, v * 1.0001, "%s", l);
        const double tpot = num_after(l, "\"tpot_s\":{\"p50\":");
        cr_expect_lt(fabs(num_after(l, "\"user_tokens_per_s\":{\"value\":") * tpot - 1), 1e-4, "%s",
                     l);
    }
    cr_expect_eq(lines, 4, "2 layouts x 2 concurrencies, all shown with a list of two");
    free(o);
}

Test(cli_serve, a_rate_beyond_capacity_is_an_answer)
{
    cr_assert_eq(run("serve --model llama3-70b --hw h100-sxm --tp 4 --rate 100"), 0, "%s",
                 cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "unstable: the queue grows by"), "%s", o);
}

Test(cli_serve, chart_data_and_script)
{
    char args[512];
    snprintf(args, sizeof args,
             "serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 1-64:x2 --user-tps 40 "
             "--chart %s",
             dir_path);
    cr_assert_eq(cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR,
                                     .out = out_path,
                                     .err = err_path,
                                     .env = "PATH=/nonexistent"},
                         args),
                 0, "%s", cli_slurp(err_path));
    char p[300];
    snprintf(p, sizeof p, "%s/pareto.dat", dir_path);
    const char *dat = cli_slurp(p);
    cr_assert_not_null(dat);
    cr_expect(strstr(dat, "the frontier") && strstr(dat, "the pick") &&
                  strstr(dat, "the interactivity asked for"),
              "%s", dat);
    snprintf(p, sizeof p, "%s/pareto.gp", dir_path);
    const char *gp = cli_slurp(p);
    cr_assert_not_null(gp);
    cr_expect(strstr(gp, "tokens/s per user") && !strstr(gp, "@PLOT@"), "%s", gp);
}

Test(cli_serve, engines_bring_their_schedulers)
{
    cr_assert_eq(run("serve --model llama3-8b --hw b200 --tp 1 --concurrency 4 --engine sglang"), 0,
                 "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "sglang scheduler: 16384 tokens a step, 4096 sequences, "
                                          "pages of 1"),
              "%s", cli_slurp(out_path));
    cr_expect(strstr(cli_slurp(out_path), "DP ranks share the step's tokens"), "%s",
              cli_slurp(out_path));
    cr_assert_eq(run("serve --model llama3-8b --hw a100-sxm-80gb --tp 1 --concurrency 4 "
                     "--max-seqs 64 --step-overhead 2ms"),
                 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "vllm scheduler: 2048 tokens a step, 64 sequences, "
                                          "pages of 16, 2 ms a step overhead"),
              "%s", cli_slurp(out_path));
    cr_expect(strstr(cli_slurp(out_path), "re-entering from its pages still cached"), "%s",
              cli_slurp(out_path));
    /* each engine's admission and prompt scheduling, and the flags that override them */
    cr_assert_eq(
        run("serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4 --engine sglang"), 0,
        "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "0.7 falling to 0.098 of the output held") &&
                  strstr(cli_slurp(out_path), "prompts in steps of their own"),
              "%s", cli_slurp(out_path));
    cr_assert_eq(run("serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4 --engine sglang "
                     "--reserve-output 1 --prefill-apart no"),
                 0, "%s", cli_slurp(err_path));
    cr_expect(
        strstr(cli_slurp(out_path), "a request enters with its prompt and whole output held") &&
            strstr(cli_slurp(out_path), "prompts chunked into the decode steps"),
        "%s", cli_slurp(out_path));
    cr_assert_eq(run("serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4 --engine trtllm "
                     "--reserve-output 0.25"),
                 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "the prompt and 0.25 of the output held"), "%s",
              cli_slurp(out_path));
    /* the serving terms and the ShareGPT-like lengths, said in the header */
    cr_assert_eq(run("serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4 "
                     "--seq-overhead 20us --flop-overhead 0.5 --prompt 200 --output 200 "
                     "--lengths sharegpt"),
                 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "+ 20 us a sequence, GEMMs + 0.5 x their compute time") &&
                  strstr(cli_slurp(out_path), "(drawn as ShareGPT's)"),
              "%s", cli_slurp(out_path));
    cr_assert_eq(run("serve --model llama3-8b --hw h100-sxm --tp 1 --concurrency 4 --prompt 200 "
                     "--output 200 --lengths sharegpt --format json"),
                 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "\"lengths\":\"sharegpt\""), "%s", cli_slurp(out_path));
}

Test(cli_serve, bad_input_is_one_line_and_exit_2)
{
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"serve --model llama3-8b --hw h100-sxm --concurrency 0", "--concurrency"},
        {"serve --model llama3-8b --hw h100-sxm --rate -1", "--rate"},
        {"serve --model llama3-8b --hw h100-sxm --rate 1 --offline", "one of"},
        {"serve --model llama3-8b --hw h100-sxm --spec 1:3", "--spec"},
        {"serve --model llama3-8b --hw h100-sxm --spread 1", "--spread"},
        {"serve --model llama3-8b --hw h100-sxm --step-overhead 3s", "--step-overhead"},
        {"serve --model llama3-8b --hw h100-sxm --reserve-output 1.5", "--reserve-output"},
        {"serve --model llama3-8b --hw h100-sxm --prefill-apart maybe", "--prefill-apart"},
        {"serve --model llama3-8b --hw h100-sxm --flop-overhead -1", "--flop-overhead"},
        {"serve --model llama3-8b --hw h100-sxm --lengths zipf", "--lengths"},
        {"serve --model llama3-8b --hw h100-sxm --lengths sharegpt --spread 0.5", "--spread"},
        {"serve --model llama3-8b --hw h100-sxm --lengths sharegpt --prompt 600 --output 200",
         "give a --prompt below 461"},
        {"serve --model llama3-8b --hw h100-sxm --price h100=2", "--price"},
        {"serve --model nope --hw h100-sxm", "nope"},
        {"serve --model llama3-8b --hw h100-sxm --prompt 8000 --output 500",
         "beyond llama3-8b's context of 8192"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(run(bad[i].args), 2, "%s", bad[i].args);
        const char *e = cli_slurp(err_path);
        cr_expect(strstr(e, bad[i].says), "%s: %s", bad[i].args, e);
        cr_expect(strncmp(e, "ffnroof serve: ", 15) == 0, "%s: %s", bad[i].args, e);
        cr_expect_eq(cli_slurp(out_path)[0], '\0', "nothing on stdout: %s", bad[i].args);
    }
}

/* A request longer than every layout's KV cache: each layout is skipped with the reason. */
Test(cli_serve, what_does_not_fit_says_why)
{
    cr_assert_eq(run("serve --model llama3.1-405b --hw h100-sxm --tp 1,2 --concurrency 4 --prompt "
                     "100000 --output 1000"),
                 0, "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "skipped TP1: a request of up to 101000 tokens does not fit"), "%s", o);
    cr_expect(strstr(o, "skipped TP2:"), "%s", o);
}

/* The shipped scenario answers its question: the cheapest device at 20 tokens/s per user, with
 * the range, and the break-even price of the device without a list price (two concurrencies
 * here, to keep the suite short; the scenario sweeps 1 to 4096). */
Test(cli_serve, shipped_scenario_answers_cheapest_at_20_tokens_per_user)
{
    cr_assert_eq(run("serve --scenario " FFNROOF_SOURCE_DIR
                     "/scenarios/deepseek-r1-20tps.yaml --concurrency 128,256 --tp 1 --dp 8"),
                 0, "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "deepseek-r1 on h200, sglang scheduler"), "%s", o);
    cr_expect(strstr(o, "deepseek-r1 on mi355x"), "%s", o);
    cr_expect(strstr(o, "cheapest at >= 20 tokens/s per user: deepseek-r1 on "), "%s", o);
    cr_expect(strstr(o, "over the range)"), "%s", o);
    cr_expect(strstr(o, "mi355x has no price"), "%s", o);
}

Test(cli_serve, a_bad_serve_block_is_refused_at_its_line)
{
    /* each a scenario's serve block, the line:col of its fault and the word that names it */
    static const struct {
        const char *serve, *at, *says;
    } bad[] = {
        {"  engine: vllm\n  spec_tokens: 1\n  spec_accept: 2.5\n", ":7:", "spec_accept"},
        {"  engine: tgi\n", ":5:", "engine"},
        {"  spread: 0.5\n  lengths: sharegpt\n", ":6:", "spread"},
        {"  lengths: zipf\n", ":5:", "lengths"},
    };
    char path[256], args[400];
    snprintf(path, sizeof path, "/tmp/ffnroof-serve-%d.yaml", (int)getpid());
    snprintf(args, sizeof args, "serve --scenario %s", path);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "name: x\nmodel: llama3-8b\nhw: h100-sxm\nserve:\n%s", bad[i].serve);
        fclose(f);
        cr_expect_eq(run(args), 2, "%s", bad[i].serve);
        const char *e = cli_slurp(err_path);
        cr_expect(strstr(e, bad[i].at) && strstr(e, bad[i].says), "%s: %s", bad[i].serve, e);
    }
    unlink(path);
}

/* --generic-moe prices a Hopper GPU's MoE layers as grouped GEMMs instead of the engine's fused
 * kernels: a MoE model's steps change, a dense model's do not. */
Test(cli_serve, generic_moe_changes_moe_models_only)
{
    static char a[1 << 16];
    static const char *const models[] = {"mixtral-8x7b", "llama3-8b"};
    for (int i = 0; i < 2; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd,
                 "serve --model %s --hw h100-sxm --tp 2 --concurrency 8 --requests 40 --format csv",
                 models[i]);
        cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
        snprintf(a, sizeof a, "%s", cli_slurp(out_path));
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " --generic-moe");
        cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
        if (i == 0)
            cr_expect(strcmp(a, cli_slurp(out_path)) != 0, "%s: no change", models[i]);
        else
            cr_expect_str_eq(a, cli_slurp(out_path), "%s", models[i]);
    }
    /* the table says what prices the MoE layers */
    const char *base = "serve --model mixtral-8x7b --hw h100-sxm --tp 2 --concurrency 8 "
                       "--requests 40";
    cr_assert_eq(run(base), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path),
                     "MoE layers: vllm's fused kernels 'unquantizedfusedmoe_triton'") != NULL,
              "%s", cli_slurp(out_path));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s --generic-moe", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "MoE layers: generic grouped GEMMs") != NULL, "%s",
              cli_slurp(out_path));
    /* --moe-kernel picks the family by name, and an unknown one is refused */
    snprintf(cmd, sizeof cmd, "%s --dtype fp8 --moe-kernel flashinfer_cutlass", base);
    cr_assert_eq(run(cmd), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "MoE layers: vllm's fused kernels 'flashinfer_cutlass' "
                                          "(fp8 weights)") != NULL,
              "%s", cli_slurp(out_path));
    snprintf(cmd, sizeof cmd, "%s --moe-kernel nosuch", base);
    cr_assert_eq(run(cmd), 2);
    cr_expect(strstr(cli_slurp(err_path), "no fused-MoE kernel family 'nosuch'") != NULL, "%s",
              cli_slurp(err_path));
}
