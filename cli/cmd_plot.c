/* `ffnroof plot roofline|latency|moe`: charts from hardware specs, calibrations, bench results
 * and the simulator's predictions, written as gnuplot data + script and rendered to PNG and SVG
 * when gnuplot is installed (include/ffnroof/plot.h, the templates in plots/, docs/reports.md). */
#define _GNU_SOURCE
#include "pictures.h"

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
        "  latency    FFN time per layer vs tokens per step, prefill and decode, predicted\n"
        "             (--model/--hw) and measured (--bench), ridge point marked\n"
        "  moe        stacked bars of router, dispatch, experts, combine and all-to-all time\n"
        "             per decode batch (--by batch) or per expert-parallel degree (--by ep)\n"
        "\n"
        "Inputs:\n"
        "  --hw LIST             devices: names (hw/NAME.yaml) or spec files, comma-separated\n"
        "  --calibration FILE    a calibration.json of `ffnroof calibrate` (repeatable)\n"
        "  --bench FILE          a bench.json of `ffnroof bench` (repeatable)\n"
        "  --levels              roofline, cache-aware: each bench case once per memory level,\n"
        "                        at the intensity of the bytes that level served (the bench's\n"
        "                        level_bytes), beside each level's roof\n"
        "  --model M             model name or file\n"
        "  --batch LIST          decode batches (default roofline 1,16,256; latency 1-1024:x2;\n"
        "                        moe 1,8,64,512; moe --by ep: the first is the batch)\n"
        "  --seq S|LIST          prompt tokens (default roofline 2048 with batch 1; latency\n"
        "                        64-16384:x2 for the prefill curve)\n"
        "  --ep LIST             moe --by ep: expert-parallel degrees (default 1,2,4,8)\n"
        "  --dtype D             weights and activations (default bf16)\n"
        "Output:\n"
        "  --out DIR             folder for the files (default .; created if missing)\n"
        "  --name BASE           file names BASE.{dat,gp,png,svg} (default: the chart kind)\n"
        "  --size WxH            image size in pixels (default 1200x800)\n"
        "  --title TEXT          chart title (default: what, where, dtype and date)\n"
        "  --no-render           write the data and script only\n"
        "  -h, --help            this help\n"
        "\n"
        "Without gnuplot on the PATH the data and script are still written, with a line saying\n"
        "how to render them. Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
        fp);
}

typedef struct plot_opts {
    const char *hw_list, *model, *out, *name, *title;
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

/* What the charts read: the devices of --hw, the --model, one --bench file at a time, and the
 * device names the title lists. */
typedef struct plot_inputs {
    ffn_hw hws[FFN_PLOT_MAX_DEVICES];
    int n_hw;
    ffn_model model;
    ffn_plot_bench bf;
    char devices[512];
} plot_inputs;

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

static int device_index(ffn_roofline_chart *c, const char *name)
{
    for (int i = 0; i < c->n_dev; i++)
        if (!strcmp(c->dev[i].name, name)) return i;
    return -1;
}

static int predict_one(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, ffn_result *r)
{
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_predict(m, hw, run, r, &d))
        return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s on %s: %s", m->name, hw->name, d.msg);
    return 0;
}

static void default_title(char *buf, size_t n, const char *what, const plot_opts *o,
                          const char *devices, const char *model)
{
    char today[16];
    ffn_cli_today(today, sizeof today);
    if (o->title) {
        snprintf(buf, n, "%s", o->title);
        return;
    }
    if (model)
        snprintf(buf, n, "%s: %s on %s, %s (%s)", what, model, devices, ffn_dtype_name(o->dtype),
                 today);
    else
        snprintf(buf, n, "%s: %s (%s)", what, devices, today);
}

/* Append ", name" to the list in buf (n bytes), truncating quietly: it is a title. */
static void append_name(char *buf, size_t n, const char *name)
{
    size_t l = strlen(buf);
    if (strstr(buf, name) || l + 1 >= n) return;
    const char *parts[2] = {l ? ", " : "", name};
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; *p && l + 1 < n; p++)
            buf[l++] = *p;
    buf[l] = '\0';
}

static int plot_roofline(const plot_opts *o, plot_inputs *in, ffn_chart_out *co)
{
    static ffn_roofline_chart c;
    memset(&c, 0, sizeof c);
    int rc;
    if (o->hw_list && (rc = load_hw_list(o->hw_list, in))) return rc;
    for (int i = 0; i < in->n_hw; i++) {
        ffn_plot_device_from_hw(&in->hws[i], &c.dev[c.n_dev++]);
        append_name(in->devices, sizeof in->devices, in->hws[i].name);
    }
    for (int i = 0; i < o->n_cal; i++) {
        if (c.n_dev >= FFN_PLOT_MAX_DEVICES) return ffn_cli_usage(CMD, "too many devices");
        ffn_diag d;
        ffn_diag_clear(&d);
        if (ffn_plot_load_calibration(o->cal[i], &c.dev[c.n_dev], NULL, 0, &d))
            return ffn_cli_diag(&d);
        append_name(in->devices, sizeof in->devices, c.dev[c.n_dev].name);
        c.n_dev++;
    }
    for (int i = 0; i < o->n_bench; i++) {
        ffn_diag d;
        ffn_diag_clear(&d);
        if (ffn_plot_load_bench(o->bench[i], &in->bf, &d)) return ffn_cli_diag(&d);
        /* the points go on the device of the same name (the spec's, or the host's for a
         * --calibration of the same host), else on the bench's own spec */
        int dev = device_index(&c, in->bf.spec.name);
        if (dev < 0 && in->bf.host[0]) dev = device_index(&c, in->bf.host);
        if (dev < 0) {
            if (c.n_dev >= FFN_PLOT_MAX_DEVICES) return ffn_cli_usage(CMD, "too many devices");
            dev = c.n_dev;
            c.dev[c.n_dev++] = in->bf.spec;
            append_name(in->devices, sizeof in->devices, in->bf.spec.name);
        }
        for (size_t k = 0; k < in->bf.n_cases && c.n_pts < FFN_PLOT_MAX_POINTS; k++) {
            const ffn_plot_case *bc = &in->bf.cases[k];
            if (o->levels && bc->n_levels > 0) {
                /* the cache-aware roofline (Ilic et al. 2014, as Intel Advisor draws it): the
                 * case once per level, at the intensity of the bytes that level served */
                for (int l = 0; l < bc->n_levels && c.n_pts < FFN_PLOT_MAX_POINTS; l++) {
                    if (!(bc->level_bytes[l] > 0)) continue;
                    ffn_plot_point *p = &c.pts[c.n_pts++];
                    char base[40];
                    ffn_plot_case_label(bc, base, sizeof base);
                    p->device = dev;
                    snprintf(p->label, sizeof p->label, "%s @%s", base, bc->level_names[l]);
                    p->intensity = bc->flops / bc->level_bytes[l];
                    p->measured_flops = bc->achieved_flops;
                    p->predicted_flops = bc->predicted_s > 0 ? bc->flops / bc->predicted_s : NAN;
                }
                continue;
            }
            ffn_plot_point *p = &c.pts[c.n_pts++];
            p->device = dev;
            ffn_plot_case_label(bc, p->label, sizeof p->label);
            p->intensity = bc->intensity;
            p->measured_flops = bc->achieved_flops;
            p->predicted_flops = bc->predicted_s > 0 ? bc->flops / bc->predicted_s : NAN;
        }
    }
    if (c.n_dev == 0) return ffn_cli_usage(CMD, "roofline needs --hw, --calibration or --bench");
    if (o->model) {
        if (!in->n_hw) return ffn_cli_usage(CMD, "--model needs --hw: the devices to predict on");
        if ((rc = ffn_cli_load_model(CMD, o->model, &in->model))) return rc;
        static const uint64_t def_batch[] = {1, 16, 256};
        const uint64_t *batch = o->n_batch ? o->batch : def_batch;
        size_t nb = o->n_batch ? o->n_batch : 3;
        for (int h = 0; h < in->n_hw; h++) {
            ffn_run run;
            ffn_run_default(&run);
            run.wdtype = run.adtype = o->dtype;
            run.seq = o->n_seq ? o->seq[0] : 2048;
            run.phase = FFN_PHASE_PREFILL;
            run.batch = 1;
            ffn_result r;
            if ((rc = predict_one(&in->model, &in->hws[h], &run, &r))) return rc;
            if (c.n_pts < FFN_PLOT_MAX_POINTS) ffn_plot_point_from_result(&r, h, &c.pts[c.n_pts++]);
            for (size_t b = 0; b < nb; b++) {
                run.phase = FFN_PHASE_DECODE;
                run.batch = batch[b];
                if ((rc = predict_one(&in->model, &in->hws[h], &run, &r))) return rc;
                if (c.n_pts < FFN_PLOT_MAX_POINTS)
                    ffn_plot_point_from_result(&r, h, &c.pts[c.n_pts++]);
            }
        }
    }
    default_title(c.title, sizeof c.title, "Roofline", o, in->devices,
                  o->model ? in->model.name : NULL);
    return ffn_chart_emit(CMD, FFN_CHART_ROOFLINE, &c, co);
}

/* Add a point to the series (device, phase, measured, label), creating it when needed. */
static void series_add(ffn_latency_chart *c, int dev, ffn_phase ph, bool measured,
                       const char *label, double tokens, double seconds)
{
    ffn_latency_series *s = NULL;
    for (int i = 0; i < c->n_series; i++)
        if (c->s[i].device == dev && c->s[i].phase == ph && c->s[i].measured == measured &&
            !strcmp(c->s[i].label, label))
            s = &c->s[i];
    if (!s) {
        if (c->n_series >= FFN_PLOT_MAX_SERIES) return;
        s = &c->s[c->n_series++];
        memset(s, 0, sizeof *s);
        s->device = dev;
        s->phase = ph;
        s->measured = measured;
        snprintf(s->label, sizeof s->label, "%s", label);
    }
    if (s->n < FFN_PLOT_MAX_SERIES_POINTS) {
        s->tokens[s->n] = tokens;
        s->seconds[s->n] = seconds;
        s->n++;
    }
}

static int lat_device(ffn_latency_chart *c, const char *name)
{
    for (int i = 0; i < c->n_dev; i++)
        if (!strcmp(c->device[i], name)) return i;
    if (c->n_dev >= FFN_PLOT_MAX_DEVICES) return -1;
    snprintf(c->device[c->n_dev], sizeof c->device[0], "%.63s", name);
    c->ridge_tokens[c->n_dev] = NAN;
    return c->n_dev++;
}

static int plot_latency(const plot_opts *o, plot_inputs *in, ffn_chart_out *co)
{
    static ffn_latency_chart c;
    memset(&c, 0, sizeof c);
    int rc;
    if (o->model || o->hw_list) {
        if (!o->model || !o->hw_list)
            return ffn_cli_usage(CMD, "latency predictions need both --model and --hw");
        if ((rc = load_hw_list(o->hw_list, in))) return rc;
        if ((rc = ffn_cli_load_model(CMD, o->model, &in->model))) return rc;
    } else if (!o->n_bench) {
        return ffn_cli_usage(CMD, "latency needs --model and --hw, or --bench");
    }
    uint64_t def_batch[16], def_seq[16];
    size_t nb = 0, ns = 0;
    for (uint64_t b = 1; b <= 1024; b *= 2)
        def_batch[nb++] = b;
    for (uint64_t s = 64; s <= 16384; s *= 2)
        def_seq[ns++] = s;
    const uint64_t *batch = o->n_batch ? o->batch : def_batch;
    const uint64_t *seq = o->n_seq ? o->seq : def_seq;
    if (o->n_batch) nb = o->n_batch;
    if (o->n_seq) ns = o->n_seq;
    for (int h = 0; h < in->n_hw; h++) {
        int dev = lat_device(&c, in->hws[h].name);
        append_name(in->devices, sizeof in->devices, in->hws[h].name);
        ffn_run run;
        ffn_run_default(&run);
        run.wdtype = run.adtype = o->dtype;
        char lab[80];
        ffn_result r;
        for (size_t i = 0; i < ns; i++) {
            run.phase = FFN_PHASE_PREFILL;
            run.batch = 1;
            run.seq = seq[i];
            if ((rc = predict_one(&in->model, &in->hws[h], &run, &r))) return rc;
            snprintf(lab, sizeof lab, "%.60s prefill, predicted", in->hws[h].name);
            series_add(&c, dev, FFN_PHASE_PREFILL, false, lab, (double)r.tokens,
                       ffn_plot_layer_latency_s(&in->model, &r));
            c.ridge_tokens[dev] = r.ridge_tokens;
        }
        for (size_t i = 0; i < nb; i++) {
            run.phase = FFN_PHASE_DECODE;
            run.batch = batch[i];
            if ((rc = predict_one(&in->model, &in->hws[h], &run, &r))) return rc;
            snprintf(lab, sizeof lab, "%.60s decode, predicted", in->hws[h].name);
            series_add(&c, dev, FFN_PHASE_DECODE, false, lab, (double)r.tokens,
                       ffn_plot_layer_latency_s(&in->model, &r));
            c.ridge_tokens[dev] = r.ridge_tokens;
        }
    }
    for (int i = 0; i < o->n_bench; i++) {
        ffn_diag d;
        ffn_diag_clear(&d);
        if (ffn_plot_load_bench(o->bench[i], &in->bf, &d)) return ffn_cli_diag(&d);
        int dev = lat_device(&c, in->bf.spec.name);
        if (dev < 0) return ffn_cli_usage(CMD, "too many devices");
        append_name(in->devices, sizeof in->devices, in->bf.spec.name);
        for (size_t k = 0; k < in->bf.n_cases; k++) {
            const ffn_plot_case *bc = &in->bf.cases[k];
            char shape[64], lab[80];
            snprintf(shape, sizeof shape, "%s%s d%llu f%llu %s",
                     strcmp(bc->kind, "moe") ? "" : "moe ", ffn_phase_name(bc->phase),
                     (unsigned long long)bc->d, (unsigned long long)bc->f, bc->dtype);
            snprintf(lab, sizeof lab, "%s measured", shape);
            series_add(&c, dev, bc->phase, true, lab, (double)bc->tokens, bc->median_s);
            if (bc->predicted_s > 0) {
                snprintf(lab, sizeof lab, "%s predicted", shape);
                series_add(&c, dev, bc->phase, false, lab, (double)bc->tokens, bc->predicted_s);
            }
        }
    }
    default_title(c.title, sizeof c.title, "FFN latency per layer", o, in->devices,
                  o->model ? in->model.name : NULL);
    return ffn_chart_emit(CMD, FFN_CHART_LATENCY, &c, co);
}

static int plot_moe(const plot_opts *o, plot_inputs *in, ffn_chart_out *co)
{
    static ffn_moe_chart c;
    memset(&c, 0, sizeof c);
    int rc;
    if (!o->model || !o->hw_list) return ffn_cli_usage(CMD, "moe needs --model and --hw");
    if ((rc = load_hw_list(o->hw_list, in))) return rc;
    if ((rc = ffn_cli_load_model(CMD, o->model, &in->model))) return rc;
    if (!in->model.moe.n_experts)
        return ffn_cli_usage(CMD, "model '%s' has no experts: nothing to break down",
                             in->model.name);
    static const uint64_t def_batch[] = {1, 8, 64, 512};
    static const uint64_t def_ep[] = {1, 2, 4, 8};
    const uint64_t *batch = o->n_batch ? o->batch : def_batch;
    size_t nb = o->n_batch ? o->n_batch : 4;
    const uint64_t *ep = o->n_ep ? o->ep : def_ep;
    size_t ne = o->n_ep ? o->n_ep : 4;
    static const uint64_t ep_batch[] = {64};
    if (o->by_ep) {
        nb = 1;
        batch = o->n_batch ? o->batch : ep_batch;
    }
    for (int h = 0; h < in->n_hw; h++) {
        append_name(in->devices, sizeof in->devices, in->hws[h].name);
        for (size_t b = 0; b < nb; b++)
            for (size_t e = 0; e < (o->by_ep ? ne : 1); e++) {
                if (c.n_bars >= FFN_PLOT_MAX_BARS) return ffn_cli_usage(CMD, "too many bars");
                ffn_run run;
                ffn_run_default(&run);
                run.wdtype = run.adtype = o->dtype;
                run.phase = o->phase;
                run.batch = batch[b];
                run.seq = o->n_seq ? o->seq[0] : 2048;
                run.ep = o->by_ep ? ep[e] : 1;
                ffn_result r;
                if ((rc = predict_one(&in->model, &in->hws[h], &run, &r))) return rc;
                char lab[48];
                if (o->by_ep)
                    snprintf(lab, sizeof lab, "%.30s%sEP %llu", in->n_hw > 1 ? in->hws[h].name : "",
                             in->n_hw > 1 ? " " : "", (unsigned long long)run.ep);
                else
                    snprintf(lab, sizeof lab, "%.30s%sb=%llu", in->n_hw > 1 ? in->hws[h].name : "",
                             in->n_hw > 1 ? " " : "", (unsigned long long)run.batch);
                ffn_plot_moe_bar_from_result(&r, lab, &c.bars[c.n_bars++]);
            }
    }
    if (o->by_ep)
        snprintf(c.xlabel, sizeof c.xlabel, "expert-parallel degree (%s batch %llu)",
                 ffn_phase_name(o->phase), (unsigned long long)batch[0]);
    else
        snprintf(c.xlabel, sizeof c.xlabel, "%s batch (sequences%s)", ffn_phase_name(o->phase),
                 o->phase == FFN_PHASE_PREFILL ? " of the prompt" : "");
    default_title(c.title, sizeof c.title, "MoE layer time", o, in->devices, in->model.name);
    return ffn_chart_emit(CMD, FFN_CHART_MOE, &c, co);
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
    ffn_cli_bind_u64_list(&seen, FFN_O_BATCH, 1, 1u << 24, o.batch, MAX_GRID, &o.n_batch);
    ffn_cli_bind_u64_list(&seen, FFN_O_SEQ, 1, 1u << 24, o.seq, MAX_GRID, &o.n_seq);
    ffn_cli_bind_u64_list(&seen, FFN_O_EP, 1, 4096, o.ep, MAX_GRID, &o.n_ep);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &o.dtype);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &o.out);
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
    if (k == FFN_CHART_ROOFLINE) return plot_roofline(&o, &in, &co);
    if (k == FFN_CHART_LATENCY) return plot_latency(&o, &in, &co);
    return plot_moe(&o, &in, &co);
}
