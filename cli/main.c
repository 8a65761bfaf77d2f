/* The ffnroof executable: a table of subcommands, one cmd_<name>.c each (git style). */
#include "cli.h"
#include "vocab.h"

#include "ffnroof/match.h"

#include <signal.h>
#include <string.h>

#ifndef FFNROOF_VERSION
#define FFNROOF_VERSION "0"
#endif

static const ffn_cli_cmd commands[] = {
    {"predict", "FFN FLOPs, bytes, bound, latency, memory and MoE costs of a model on a device",
     ffn_cmd_predict},
    {"fit", "fit a device's efficiency model to measured GEMM or kernel times", ffn_cmd_fit},
    {"sweep", "predict over a grid of models, devices and sizes (CSV/JSON lines)", ffn_cmd_sweep},
    {"plan", "capacity planning: devices, batch and TP/EP layout under an SLO", ffn_cmd_plan},
    {"serve", "serving steady state: TTFT, TPOT, tokens/s per device and per user", ffn_cmd_serve},
    {"calibrate", "this host's empirical roofline, written as a hw spec with a fitted efficiency",
     ffn_cmd_calibrate},
    {"bench", "real FFN kernels on this host: measured vs roofline vs predicted, with peers",
     ffn_cmd_bench},
    {"compare", "one model on several devices side by side: latency, tokens/s, fit",
     ffn_cmd_compare},
    {"plot", "roofline, latency and MoE charts (gnuplot: PNG, SVG, data, script)", ffn_cmd_plot},
    {"report", "a Markdown report with plots: a comparison, bench results or --quick",
     ffn_cmd_report},
    {"cpu", "this CPU's features, the kernels this binary holds and which one each dtype gets",
     ffn_cmd_cpu},
    {"quant", "accuracy of int8/int4/W8A8 formats on one FFN layer, beside their decode speed-up",
     ffn_cmd_quant},
};

static void usage(FILE *fp)
{
    fprintf(fp, "usage: ffnroof <command> [options]   (ffnroof <command> --help for more)\n\n"
                "ffnroof predicts and measures what the feed-forward networks of Transformers "
                "cost.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "\nData: --hw NAME reads hw/NAME.yaml, --model NAME models/NAME.yaml "
                "(FFNROOF_DATA_DIR overrides where);\nnames are forgiving: case, '-' and '_' "
                "do not matter, and a name's beginning will do where it is unique.\n"
                "ffnroof help CMD prints CMD's help; ffnroof help options the options several\n"
                "commands share, with their defaults and ranges (docs/cli.md).\n");
}

int main(int argc, char **argv)
{
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG, which the writers report as
     * exit 1 and clean up after, instead of the default SIGXFSZ killing us mid-file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return FFN_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc > 2 && !strcmp(argv[2], "options")) {
        /* the options more than one command takes: docs/cli.md's table */
        ffn_cli_vocab_markdown(stdout);
        return FFN_EXIT_OK;
    }
    if (!strcmp(argv[1], "help") && argc > 2) {
        /* ffnroof help CMD: that command's --help */
        char *help_argv[] = {argv[2], (char *)"--help", NULL};
        argc = 3;
        argv[1] = help_argv[0];
        argv[2] = help_argv[1];
        argv[3] = NULL;
    } else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return FFN_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        char dir[4096];
        const char *d = ffn_cli_data_dir("hw", dir, sizeof dir);
        char kern[256];
        ffn_cli_kernel_summary(kern, sizeof kern);
        printf("ffnroof %s\n%s\ndata: %s\n", FFNROOF_VERSION, kern,
               d ? d : "(no hw/ folder found)");
        return FFN_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            const int rc = commands[i].run(argc - 1, argv + 1);
            if (rc != FFN_EXIT_OK) ffn_cli_remove_created_dirs();
            return rc;
        }
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    size_t at, sug[3];
    ffn_match_kind how;
    const size_t nc = sizeof commands / sizeof commands[0];
    if (ffn_name_match(argv[1], names, nc, &at, &how) == 0 && how != FFN_MATCH_PREFIX) {
        const int rc = commands[at].run(argc - 1, argv + 1);
        if (rc != FFN_EXIT_OK) ffn_cli_remove_created_dirs();
        return rc;
    }
    const size_t ns = ffn_name_suggest(argv[1], names, nc, sug, 3);
    fprintf(stderr, "ffnroof: unknown command '%s'", argv[1]);
    for (size_t i = 0; i < ns; i++)
        fprintf(stderr, "%s%s", i ? " or " : "; did you mean ", names[sug[i]]);
    fputs(ns ? "?\n" : "\n", stderr);
    fputs("Try 'ffnroof --help'.\n", stderr);
    return FFN_EXIT_USAGE;
}
