/* `ffnroof plot roofline|latency|moe`: charts from hardware specs, calibrations, bench results
 * and the simulator's predictions, written as gnuplot data + script and rendered to PNG and SVG
 * when gnuplot is installed (include/ffnroof/plot.h, the templates in plots/, docs/reports.md). */
#define _GNU_SOURCE
#include "pictures.h"
#include "vocab.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMD "plot"
#define MAX_FILES 8
#define MAX_GRID 64

static void usage(FILE *fp)
{
    fputs(
        "usage: ffnroof plot roofline [--hw LIST] [--calibration FILE]... [--bench FILE]...\n"
        "                             [--model M [--batch LIST] [--seq S] [--dtype D]]\n"
        "       ffnroof plot latency  --model M --hw LIST [--batch LIST] [--seq LIST]\n"
        "                             [--dtype D] [--bench FILE]...\n"
        "       ffnroof plot latency  --bench FILE...\n"
        "       ffnroof plot moe      --model M --hw LIST [--by batch|ep] [--batch LIST]\n"
        "                             [--ep LIST] [--phase decode|prefill] [--seq S] [--dtype D]\n"
        "\n"
        "Charts as gnuplot data + script, rendered to PNG and SVG when gnuplot is installed.\n"
        "\n"
        "  roofline   log-log FLOP/byte vs FLOP/s: compute ceilings per dtype, bandwidth\n"
        "             ceilings per memory level (read-only, read-write or datasheet peak),\n"
        "             ridge points; measured kernel points (--bench) with the predicted ones\n"
        "             beside them; the model's whole-FFN points (--model); several devices\n"
        "             (5 to 12: one panel each, on the same axes)\n"
        "  latency    FFN time per layer vs tokens per step, prefill and decode, predicted\n"
        "             (--model/--hw) and measured (--bench), ridge point marked\n"
        "  moe        the shares of router, dispatch, experts, combine and all-to-all in\n"
        "             the layer (stacked to 100 percent) over its total time (log axis), per\n"
        "             decode batch (--by batch) or per expert-parallel degree (--by ep)\n"
        "\n"
        "Inputs:\n",
        fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_HW, 0});
    fputs("  --calibration FILE    a calibration.json of `ffnroof calibrate` (repeatable)\n"
          "  --bench FILE          a bench.json of `ffnroof bench` (repeatable)\n"
          "  --levels              roofline, cache-aware: each bench case once per memory level,\n"
          "                        at the intensity of the bytes that level served (the bench's\n"
          "                        level_bytes), beside each level's roof\n",
          fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_MODEL, FFN_O_ENGINE, FFN_O_PHASE, FFN_O_BATCH,
                                     FFN_O_PROMPT, FFN_O_EP, FFN_O_DTYPE, 0});
    fputs("Output:\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_OUT_DIR, FFN_O_OUT, 0});
    fputs("  --name BASE           file names BASE.{dat,gp,png,svg} (default: the chart kind)\n"
          "  --size WxH            image size in pixels (default 1200x800; a roofline of 5+\n"
          "                        devices, one panel each: 400x260 a panel)\n"
          "  --title TEXT          chart title (default: what, where, dtype and date)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_NO_RENDER, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Without gnuplot on the PATH the data and script are still written, with a line saying\n"
          "how to render them. Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
          fp);
}

typedef struct plot_opts {
    const char *hw_list, *model, *out, *name, *title, *engine;
    const char *cal[MAX_FILES], *bench[MAX_FILES];
    int n_cal, n_bench;
    uint64_t batch[MAX_GRID], seq[MAX_GRID], ep[MAX_GRID];
    size_t n_batch, n_seq, n_ep;
    ffn_dtype dtype;
    bool by_ep;
    ffn_phase phase;
    int width, height;
    bool render;
    bool levels; /* roofline: each bench case at each memory level's bytes (cache-aware) */
} plot_opts;

/* What the charts read: the devices of --hw, the --model and the records of the --calibration
 * and --bench files. */
typedef struct plot_inputs {
    ffn_hw hws[FFN_PLOT_MAX_DEVICES];
    int n_hw;
    ffn_model model;
    ffn_calib_file cal[MAX_FILES];
    ffn_plot_bench bench[MAX_FILES];
} plot_inputs;

/* The exit code of a failed load or build: a file's error with its place, else a usage error
 * for too many devices or bars and a chart that does not apply, else a failure. */
static int plot_error(int rc, const ffn_diag *d)
{
    if (d->file[0]) return ffn_cli_diag(d);
    if (rc == FFN_ENOSPACE || rc == FFN_EINVAL) return ffn_cli_usage(CMD, "%s", d->msg);
    return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s", d->msg);
}

/* Split the comma list of --hw into in->hws; returns an exit code. */
static int load_hw_list(const char *list, plot_inputs *in)
{
    in->n_hw = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!*tok) continue;
        if (in->n_hw >= FFN_PLOT_MAX_DEVICES)
            return ffn_cli_usage(CMD, "--hw: at most %d devices", FFN_PLOT_MAX_DEVICES);
        int rc = ffn_cli_load_hw(CMD, tok, &in->hws[in->n_hw]);
        if (rc) return rc;
        in->n_hw++;
    }
    if (in->n_hw == 0) return ffn_cli_usage(CMD, "--hw: empty list");
    return 0;
}

/* Load what the chart kind k needs (checking that it was given), build it and emit it. */
static int plot(int k, const plot_opts *o, plot_inputs *in, ffn_chart_out *co)
{
    int rc;
    if (k == FFN_CHART_ROOFLINE && !o->hw_list && !o->n_cal && !o->n_bench)
        return ffn_cli_usage(CMD, "roofline needs --hw, --calibration or --bench");
    if (k == FFN_CHART_ROOFLINE && o->model && !o->hw_list)
        return ffn_cli_usage(CMD, "--model needs --hw: the devices to predict on");
    if (k == FFN_CHART_LATENCY && (o->model || o->hw_list) && (!o->model || !o->hw_list))
        return ffn_cli_usage(CMD, "latency predictions need both --model and --hw");
    if (k == FFN_CHART_LATENCY && !o->model && !o->n_bench)
        return ffn_cli_usage(CMD, "latency needs --model and --hw, or --bench");
    if (k == FFN_CHART_MOE && (!o->model || !o->hw_list))
        return ffn_cli_usage(CMD, "moe needs --model and --hw");
    if ((rc = ffn_cli_engine(CMD, o->engine))) return rc;
    if (o->hw_list && (rc = load_hw_list(o->hw_list, in))) return rc;
    if (o->model && (rc = ffn_cli_load_model(CMD, o->model, &in->model))) return rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    for (int i = 0; i < o->n_cal; i++)
        if ((rc = ffn_profile_load_calibration(o->cal[i], &in->cal[i], &d)))
            return plot_error(rc, &d);
    for (int i = 0; i < o->n_bench; i++)
        if ((rc = ffn_profile_load_bench(o->bench[i], &in->bench[i], &d)))
            return plot_error(rc, &d);
    char today[16];
    ffn_cli_today(today, sizeof today);
    const ffn_plot_request q = {.hws = in->hws,
                                .n_hw = in->n_hw,
                                .model = o->model ? &in->model : NULL,
                                .cal = in->cal,
                                .bench = in->bench,
                                .n_cal = o->n_cal,
                                .n_bench = o->n_bench,
                                .batch = o->batch,
                                .seq = o->seq,
                                .ep = o->ep,
                                .n_batch = o->n_batch,
                                .n_seq = o->n_seq,
                                .n_ep = o->n_ep,
                                .dtype = o->dtype,
                                .phase = o->phase,
                                .by_ep = o->by_ep,
                                .levels = o->levels,
                                .title = o->title,
                                .today = today};
    static union {
        ffn_roofline_chart roofline;
        ffn_latency_chart latency;
        ffn_moe_chart moe;
    } chart;
    rc = k == FFN_CHART_ROOFLINE  ? ffn_plot_build_roofline(&q, &chart.roofline, &d)
         : k == FFN_CHART_LATENCY ? ffn_plot_build_latency(&q, &chart.latency, &d)
                                  : ffn_plot_build_moe(&q, &chart.moe, &d);
    if (rc) return plot_error(rc, &d);
    return ffn_chart_emit(CMD, (ffn_chart_kind)k, &chart, co);
}

int ffn_cmd_plot(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return FFN_EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-')
        return ffn_cli_usage(CMD, "which chart? roofline, latency or moe");
    const char *kind = argv[1];
    int k;
    if (!strcmp(kind, "roofline"))
        k = FFN_CHART_ROOFLINE;
    else if (!strcmp(kind, "latency"))
        k = FFN_CHART_LATENCY;
    else if (!strcmp(kind, "moe"))
        k = FFN_CHART_MOE;
    else
        return ffn_cli_usage(CMD, "unknown chart '%s' (roofline, latency or moe)", kind);

    static plot_opts o;
    memset(&o, 0, sizeof o);
    o.dtype = FFN_DT_BF16;
    o.phase = FFN_PHASE_DECODE;
    o.out = ".";
    o.render = true;
    int c, rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_HW, &o.hw_list);
    ffn_cli_bind_str(&seen, FFN_O_MODEL, &o.model);
    ffn_cli_bind_str(&seen, FFN_O_ENGINE, &o.engine);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_BATCH, o.batch, MAX_GRID, &o.n_batch);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_SEQ, o.seq, MAX_GRID, &o.n_seq);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_PROMPT, o.seq, MAX_GRID, &o.n_seq);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_EP, o.ep, MAX_GRID, &o.n_ep);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &o.dtype);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &o.out);
    ffn_cli_bind_str(&seen, FFN_O_OUT_DIR, &o.out);
    ffn_cli_bind_str(&seen, FFN_O_TITLE, &o.title);
    ffn_cli_bind_flag(&seen, FFN_O_LEVELS, &o.levels);
    static const int handled[] = {FFN_O_CALIBRATION, FFN_O_BENCH, FFN_O_BY,        FFN_O_PHASE,
                                  FFN_O_NAME,        FFN_O_SIZE,  FFN_O_NO_RENDER, 0};
    argc--, argv++; /* argv[0] is now the chart kind */
    while ((c = ffn_cli_getopt(CMD, argc, argv, handled, &seen,
                               (const int[]){FFN_O_CALIBRATION, FFN_O_BENCH, 0})) != -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        switch (c) {
        case FFN_O_CALIBRATION:
            if (o.n_cal >= MAX_FILES)
                return ffn_cli_usage(CMD, "at most %d --calibration", MAX_FILES);
            o.cal[o.n_cal++] = optarg;
            break;
        case FFN_O_BENCH:
            if (o.n_bench >= MAX_FILES) return ffn_cli_usage(CMD, "at most %d --bench", MAX_FILES);
            o.bench[o.n_bench++] = optarg;
            break;
        case FFN_O_BY: {
            int i;
            if ((rc = ffn_cli_choice(CMD, "--by", optarg,
                                     (const char *const[]){"batch", "ep", NULL}, &i)))
                return rc;
            o.by_ep = i == 1;
            break;
        }
        case FFN_O_PHASE: {
            int i;
            if ((rc = ffn_cli_choice(CMD, "--phase", optarg,
                                     (const char *const[]){"decode", "prefill", NULL}, &i)))
                return rc;
            o.phase = i == 0 ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
            break;
        }
        case FFN_O_NAME:
            if (!*optarg || strchr(optarg, '/') || strchr(optarg, '\'') || strlen(optarg) > 100)
                return ffn_cli_usage(CMD, "--name must be a plain file name, got '%s'", optarg);
            o.name = optarg;
            break;
        case FFN_O_SIZE: {
            unsigned w, h;
            char tail;
            if (sscanf(optarg, "%ux%u%c", &w, &h, &tail) != 2 || w < 200 || h < 150 || w > 8000 ||
                h > 8000)
                return ffn_cli_usage(CMD,
                                     "--size must be WxH in pixels (200x150 .. 8000x8000), got "
                                     "'%s'",
                                     optarg);
            o.width = (int)w;
            o.height = (int)h;
            break;
        }
        case FFN_O_NO_RENDER:
            o.render = false;
            break;
        default:
            return ffn_cli_opt_other(CMD, c, argv, usage, true);
        }
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    if ((k != FFN_CHART_MOE) && (o.n_ep || o.by_ep))
        return ffn_cli_usage(CMD, "--ep and --by belong to the moe chart");
    if (k == FFN_CHART_MOE && (o.n_cal || o.n_bench))
        return ffn_cli_usage(CMD, "the moe chart is predicted only: no --calibration or --bench");
    if (k == FFN_CHART_LATENCY && o.n_cal)
        return ffn_cli_usage(CMD, "--calibration belongs to the roofline chart");
    if ((rc = ffn_cli_prepare_dir(CMD, o.out))) return rc;
    ffn_chart_out co = {.dir = o.out,
                        .base = o.name ? o.name : kind,
                        .width = o.width,
                        .height = o.height,
                        .render = o.render};
    static plot_inputs in;
    memset(&in, 0, sizeof in);
    return plot(k, &o, &in, &co);
}
