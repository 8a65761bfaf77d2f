/* The command line's vocabulary (cli/vocab.c) against every command: the table the parsers bind
 * through is the one walked here. Each command that takes a word prints the word's entry in its
 * help and refuses a value out of the word's range with the same message; each command that
 * does not take it refuses it as unknown; a predicting command's answer without a word is its
 * answer with the word's default given; a misspelled option gets the right suggestion; and
 * docs/cli.md's table is the vocabulary's rendering. Runs the built binary. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "helpers/cli_harness.h"
#include "vocab.h"

static char out_path[256], err_path[256], dir[256];

static void setup(void)
{
    snprintf(out_path, sizeof out_path, "/tmp/ffnroof-vocab-%d.out", (int)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/ffnroof-vocab-%d.err", (int)getpid());
    snprintf(dir, sizeof dir, "/tmp/ffnroof-vocab-%d.d", (int)getpid());
}

static void teardown(void)
{
    unlink(out_path);
    unlink(err_path);
    cli_rm_rf(dir);
}

static int run(const char *args)
{
    return cli_run(&(cli_opts){.data_dir = FFNROOF_SOURCE_DIR, .out = out_path, .err = err_path},
                   args);
}

/* Every command, and a command line of it that runs (its required options, small); the
 * predicting ones answer deterministically. */
static const struct {
    const char *cmd, *base;
    bool same_answer;
} cmds[] = {
    {"predict", "predict --hw h100-sxm --model llama3-8b", true},
    {"plan", "plan --hw h100-sxm --model llama3-8b", true},
    {"sweep", "sweep --hw h100-sxm --model llama3-8b", true},
    {"compare", "compare --hw h100-sxm,h200 --model llama3-8b", true},
    {"serve", "serve --hw h100-sxm --model llama3-8b --concurrency 4", true},
    {"bench", "bench --shape 1,64,128", false},
    {"plot", "plot latency --hw h100-sxm --model llama3-8b --no-render --out-dir DIR", false},
    {"report", "report --compare --hw h100-sxm --model llama3-8b --no-render --force --out-dir DIR",
     false},
    {"fit", "fit --hw a100-sxm-80gb --data " FFNROOF_TEST_DATA "/fit/a100-sxm-80gb-gemm-fp16.csv",
     false},
    {"quant", "quant --d 64 --f 128 --no-speed", false},
    {"calibrate", "calibrate --test-tiny --out-dir DIR", false},
    {"cpu", "cpu", false},
};
#define N_CMDS (sizeof cmds / sizeof cmds[0])

/* cmds[i].base with DIR replaced, then extra */
static void line(size_t i, const char *extra, char *buf, size_t n)
{
    const char *b = cmds[i].base, *d = strstr(b, "DIR");
    if (d)
        snprintf(buf, n, "%.*s%s%s %s", (int)(d - b), b, dir, d + 3, extra);
    else
        snprintf(buf, n, "%s %s", b, extra);
}

/* a value of the word's kind for a command that refuses the option anyway */
static const char *some_value(const ffn_cli_word *w)
{
    return w->kind == FFN_WORD_FLAG ? "" : "1";
}

Test(cli_vocab, every_command_that_takes_a_word_prints_its_entry, .init = setup, .fini = teardown)
{
    size_t n;
    const ffn_cli_word *w = ffn_cli_words(&n);
    char args[512], entry[2048];
    for (size_t c = 0; c < N_CMDS; c++) {
        snprintf(args, sizeof args, "help %s", cmds[c].cmd);
        cr_assert_eq(run(args), 0, "%s", args);
        char *help = strdup(cli_slurp(out_path));
        for (size_t i = 0; i < n; i++) {
            if (!ffn_cli_word_takes(&w[i], cmds[c].cmd)) continue;
            ffn_cli_word_help(cmds[c].cmd, w[i].opt, entry, sizeof entry);
            cr_expect(strstr(help, entry) != NULL, "%s --help lacks the vocabulary's entry:\n%s",
                      cmds[c].cmd, entry);
            for (const char *p = entry; *p;) { /* and it fits 80 columns */
                const size_t l = strcspn(p, "\n");
                cr_expect_leq(l, 80, "%s: a help line of --%s is %zu columns", cmds[c].cmd,
                              ffn_cli_opt_name(w[i].opt), l);
                p += l + (p[l] == '\n');
            }
        }
        free(help);
    }
}

Test(cli_vocab, a_command_that_does_not_take_a_word_refuses_it, .init = setup, .fini = teardown)
{
    size_t n;
    const ffn_cli_word *w = ffn_cli_words(&n);
    char args[512], opt[64];
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < N_CMDS; c++) {
            if (ffn_cli_word_takes(&w[i], cmds[c].cmd)) continue;
            snprintf(opt, sizeof opt, "--%s %s", ffn_cli_opt_name(w[i].opt), some_value(&w[i]));
            line(c, opt, args, sizeof args);
            cr_expect_eq(run(args), 2, "%s", args);
            char want[96];
            snprintf(want, sizeof want, "ffnroof %s: unknown option '--%s'", cmds[c].cmd,
                     ffn_cli_opt_name(w[i].opt));
            const char *err = cli_slurp(err_path);
            cr_expect(!strncmp(err, want, strlen(want)), "%s: %s", args, err);
        }
}

/* Each command the vocabulary lists for a word takes it: given a value it refuses (past a count's
 * range, a name nothing has), it says what is wrong with the value, not that the option is
 * unknown. */
Test(cli_vocab, a_command_that_takes_a_word_accepts_it, .init = setup, .fini = teardown)
{
    char plain[300];
    snprintf(plain, sizeof plain, "%s/plain", dir);
    cr_assert(mkdir(dir, 0755) == 0, "%s", dir);
    FILE *pf = fopen(plain, "w");
    cr_assert_not_null(pf);
    fclose(pf);
    size_t n;
    const ffn_cli_word *w = ffn_cli_words(&n);
    char args[640], opt[320], unknown[96];
    for (size_t i = 0; i < n; i++) {
        if (w[i].kind == FFN_WORD_FLAG) continue; /* a flag alone would run the command */
        const char *name = ffn_cli_opt_name(w[i].opt);
        for (size_t c = 0; c < N_CMDS; c++) {
            if (!ffn_cli_word_takes(&w[i], cmds[c].cmd) || strstr(cmds[c].base, name)) continue;
            /* a text value is a path below a plain file: no name, file or folder, and nothing
             * (--out, --out-dir) can be written there, so every command stops at it */
            if (w[i].kind == FFN_WORD_TEXT)
                snprintf(opt, sizeof opt, "--%s %s/plain/no-such-value", name, dir);
            else
                snprintf(opt, sizeof opt, "--%s -1", name);
            line(c, opt, args, sizeof args);
            run(args);
            snprintf(unknown, sizeof unknown, "unknown option '--%s'", name);
            cr_expect(strstr(cli_slurp(err_path), unknown) == NULL, "%s: %s", args,
                      cli_slurp(err_path));
        }
    }
}

/* Past the word's upper bound every command says the same thing, in one error style. */
Test(cli_vocab, a_value_out_of_range_gets_one_message, .init = setup, .fini = teardown)
{
    size_t n;
    const ffn_cli_word *w = ffn_cli_words(&n);
    char args[512], opt[96], want[256];
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i].kind != FFN_WORD_COUNT && w[i].kind != FFN_WORD_NUMBER) continue;
        if (w[i].hi >= 1e19) continue; /* no whole number above it */
        const char *name = ffn_cli_opt_name(w[i].opt);
        char bad[48];
        if (w[i].kind == FFN_WORD_COUNT) {
            snprintf(bad, sizeof bad, "%.0f", w[i].hi + 1);
            snprintf(want, sizeof want, "--%s: %s is outside [%.0f, %.0f]", name, bad, w[i].lo,
                     w[i].hi);
        } else {
            snprintf(bad, sizeof bad, "%g", w[i].hi * 2 + 1);
            snprintf(want, sizeof want, "--%s: %s is outside [%g, %g]", name, bad, w[i].lo,
                     w[i].hi);
        }
        for (size_t c = 0; c < N_CMDS; c++) {
            if (!ffn_cli_word_takes(&w[i], cmds[c].cmd)) continue;
            snprintf(opt, sizeof opt, "--%s %s", name, bad);
            line(c, opt, args, sizeof args);
            cr_expect_eq(run(args), 2, "%s", args);
            char full[400];
            snprintf(full, sizeof full, "ffnroof %s: %s\nTry 'ffnroof %s --help'.\n", cmds[c].cmd,
                     want, cmds[c].cmd);
            cr_expect_str_eq(cli_slurp(err_path), full, "%s", args);
            cr_expect_str_eq(cli_slurp(out_path), "", "%s wrote to stdout", args);
            checked++;
        }
    }
    cr_expect_gt(checked, 40, "only %d word x command pairs checked", checked);
}

/* A default that is a value (or a list of values) of the word. */
static bool literal(const char *d)
{
    if (!d || !*d) return false;
    for (const char *p = d; *p; p++)
        if (!strchr("0123456789.,", *p)) return false;
    return true;
}

/* A predicting command's answer without the word is its answer with the word's default. */
Test(cli_vocab, a_default_is_the_value_the_word_takes_when_not_given, .init = setup,
     .fini = teardown)
{
    size_t n;
    const ffn_cli_word *w = ffn_cli_words(&n);
    char args[512], opt[128];
    int checked = 0;
    for (size_t c = 0; c < N_CMDS; c++) {
        if (!cmds[c].same_answer) continue;
        line(c, "--format csv", args, sizeof args);
        cr_assert_eq(run(args), 0, "%s: %s", args, cli_slurp(err_path));
        char *without = strdup(cli_slurp(out_path));
        for (size_t i = 0; i < n; i++) {
            const char *d = ffn_cli_word_default(&w[i], cmds[c].cmd);
            if (!ffn_cli_word_takes(&w[i], cmds[c].cmd) || w[i].kind == FFN_WORD_FLAG ||
                !literal(d) || strstr(cmds[c].base, ffn_cli_opt_name(w[i].opt)))
                continue;
            snprintf(opt, sizeof opt, "--format csv --%s %s", ffn_cli_opt_name(w[i].opt), d);
            line(c, opt, args, sizeof args);
            cr_expect_eq(run(args), 0, "%s: %s", args, cli_slurp(err_path));
            cr_expect_str_eq(cli_slurp(out_path), without, "%s: the default is not %s", args, d);
            checked++;
        }
        free(without);
    }
    cr_expect_gt(checked, 25, "only %d defaults checked", checked);
}

Test(cli_vocab, a_misspelled_option_gets_the_right_suggestion, .init = setup, .fini = teardown)
{
    static const char *const cases[][2] = {
        {"predict --hw h100-sxm --model llama3-8b --bach 8", "did you mean --batch?"},
        {"plan --hw h100-sxm --model llama3-8b --promt 512", "did you mean --prompt?"},
        {"serve --hw h100-sxm --model llama3-8b --ouput 64", "did you mean --output?"},
        /* a beginning of another option is not taken for it */
        {"serve --hw h100-sxm --model llama3-8b --max-batch 64",
         "unknown option '--max-batch'; did you mean --max-batched-tokens?"},
        {"predict --hw h100-sxm --model llama3-8b --ba 8", "unknown option '--ba'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run(cases[i][0]), 2, "%s", cases[i][0]);
        cr_expect(strstr(cli_slurp(err_path), cases[i][1]) != NULL, "%s: %s", cases[i][0],
                  cli_slurp(err_path));
        cr_expect(strstr(cli_slurp(err_path), "\nTry 'ffnroof ") != NULL, "%s",
                  cli_slurp(err_path));
    }
}

/* docs/cli.md's vocabulary table is the table the parsers use, rendered. */
Test(cli_vocab, the_docs_table_is_the_vocabulary)
{
    char *md = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&md, &len);
    cr_assert_not_null(fp);
    ffn_cli_vocab_markdown(fp);
    fclose(fp);
    char *doc = cli_slurp(FFNROOF_SOURCE_DIR "/docs/cli.md");
    cr_assert_not_null(doc);
    const char *a = strstr(doc, "<!-- vocabulary -->\n"), *b = strstr(doc, "<!-- /vocabulary -->");
    cr_assert(a && b && b > a, "docs/cli.md has no <!-- vocabulary --> block");
    a += strlen("<!-- vocabulary -->\n");
    cr_expect(strlen(md) == (size_t)(b - a) && !strncmp(a, md, len),
              "docs/cli.md's vocabulary table differs from cli/vocab.c's; put in:\n%s", md);
    free(md);
}

/* `ffnroof help options` prints the same table. */
Test(cli_vocab, help_options_prints_the_vocabulary, .init = setup, .fini = teardown)
{
    cr_assert_eq(run("help options"), 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "| `--prompt`, `--seq` | N |") != NULL, "%s",
              cli_slurp(out_path));
}

/* A time out of an SLO's range gets one message in plan and serve. */
Test(cli_vocab, an_slo_time_out_of_range_gets_one_message, .init = setup, .fini = teardown)
{
    static const char *const cmd[] = {"plan", "serve"};
    for (int i = 0; i < 2; i++) {
        char args[256], want[256];
        snprintf(args, sizeof args, "%s --hw h100-sxm --model llama3-8b --ttft 2h", cmd[i]);
        cr_expect_eq(run(args), 2, "%s", args);
        snprintf(want, sizeof want,
                 "ffnroof %s: --ttft needs a time in (0, 1 h], e.g. 50ms or 2s; got '2h'\n"
                 "Try 'ffnroof %s --help'.\n",
                 cmd[i], cmd[i]);
        cr_expect_str_eq(cli_slurp(err_path), want, "%s", args);
    }
}
