/* `ffnroof report`: a self-contained Markdown report (DIR/report.md + the images, data files and
 * gnuplot scripts beside it) of a device comparison (--compare), of bench results (--bench) or
 * of this host measured from scratch (--quick: calibrate, bench scaled llama2-7b and Mixtral
 * layers, compare the full models with datacenter devices). It states the question, the inputs
 * with their sources, the tables, the charts, the model's assumptions and, for measurements,
 * the validation (measured vs roofline vs predicted). report.md is written last, to a temporary
 * name renamed into place; an existing one is kept unless --force. */
#define _GNU_SOURCE
#include "pictures.h"
#include "vocab.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_prof.h"
#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "ffnroof/compare_report.h"
#include "ffnroof/report_md.h"
#include "ffnroof/units.h"
#include "ffnroof/hw_write.h"

#define CMD "report"

static void usage(FILE *fp)
{
    fputs("usage: ffnroof report [--out DIR] [--force] --compare --model M --hw A,B,... [...]\n"
          "       ffnroof report [--out DIR] [--force] --bench bench.json [--calibration FILE]\n"
          "       ffnroof report [--out DIR] [--force] --quick\n"
          "\n"
          "A self-contained Markdown report: DIR/report.md with its images (PNG; SVG, data and\n"
          "gnuplot scripts beside them), the question, the inputs and their sources, the\n"
          "tables, the charts and the model's assumptions.\n"
          "\n"
          "  --compare             a device comparison; takes the options of `ffnroof compare`\n"
          "                        (--model, --hw, --scenario, --dtype, --batch, --seq, ...)\n"
          "  --bench FILE          validation of a bench run (bench.json of `ffnroof bench`):\n"
          "                        measured vs roofline vs predicted, with errors\n"
          "  --calibration FILE    with --bench: draw the roofline of this calibration.json\n"

          ,
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_QUICK, FFN_O_OUT_DIR, FFN_O_OUT, 0});
    fputs("  --force               overwrite an existing DIR/report.md\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_NO_RENDER, 0});
    fputs("With --compare, the comparison's options, as `ffnroof compare` takes them:\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_MODEL, FFN_O_HW, FFN_O_SCENARIO, FFN_O_ENGINE,
                                     FFN_O_PHASE, FFN_O_DTYPE, FFN_O_WDTYPE, FFN_O_ADTYPE,
                                     FFN_O_BATCH, FFN_O_PROMPT, FFN_O_PREFILL_BATCH, FFN_O_TP,
                                     FFN_O_EP, FFN_O_PRICE, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
          fp);
}

typedef struct rep_opts {
    const char *dir, *bench, *cal;
    bool compare, quick, force, render;
    char command[1024];
} rep_opts;

/* ---- pieces of Markdown (report/report_md.c) and charts --------------------------------- */

static void md_header(FILE *fp, const char *title, const rep_opts *o)
{
    char today[16];
    ffn_cli_today(today, sizeof today);
    ffn_md_header(fp, title, today, o->command);
}

/* Roofline (calibration roofs when given, else the bench's spec) with measured and predicted
 * points, and measured vs predicted latency per shape. */
static int bench_charts(const rep_opts *o, const ffn_plot_bench *b, const ffn_plot_device *cal,
                        FILE *md)
{
    static ffn_roofline_chart rc;
    static ffn_latency_chart lc;
    char today[16];
    ffn_cli_today(today, sizeof today);
    ffn_plot_bench_charts(b, cal, today, &rc, &lc);
    ffn_chart_out co = {.dir = o->dir, .base = "roofline", .render = o->render, .quiet = true};
    int r = ffn_chart_emit(CMD, FFN_CHART_ROOFLINE, &rc, &co);
    if (r) return r;
    ffn_md_bench_chart(md, "roofline", cal != NULL);
    co.base = "latency";
    if ((r = ffn_chart_emit(CMD, FFN_CHART_LATENCY, &lc, &co))) return r;
    ffn_md_bench_chart(md, "latency", false);
    return 0;
}

/* ---- the three kinds of report ------------------------------------------------------------ */

static int finish_report(const rep_opts *o, char *text, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/report.md", o->dir);
    ffn_cli_out out;
    int rc = ffn_cli_out_open(CMD, &out, path);
    if (rc) return rc;
    bool ok = fwrite(text, 1, len, out.fp) == len;
    if ((rc = ffn_cli_out_close(CMD, &out, ok))) return rc;
    fprintf(stderr, "wrote %s\n", path);
    return FFN_EXIT_OK;
}

static int md_compare_section(FILE *fp, const rep_opts *o, const ffn_compare *c, const char *prefix)
{
    fputs("### Tables\n\n", fp);
    ffn_compare_write_markdown(fp, c);
    fputs("\n### Charts\n\n", fp);
    char names[3][64];
    int n = 0;
    int rc = ffn_compare_plots(CMD, c, o->dir, prefix, 0, 0, o->render, names, &n);
    if (rc) return rc;
    for (int i = 0; i < n; i++)
        ffn_md_compare_chart(fp, names[i]);
    return 0;
}

static int report_compare(const rep_opts *o, int argc, char **argv)
{
    static ffn_compare c;
    int rc = ffn_compare_setup(CMD, argc, argv, &c, NULL, NULL, NULL);
    if (rc == -1) return FFN_EXIT_OK;
    if (rc) return rc;
    char *text = NULL;
    size_t len = 0;
    FILE *md = open_memstream(&text, &len);
    if (!md) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    char title[512] = "", devs[400] = "";
    for (size_t i = 0; i < c.n_dev; i++) {
        size_t l = strlen(devs);
        snprintf(devs + l, sizeof devs - l, "%s%s", i ? ", " : "", c.dev[i].hw.name);
    }
    snprintf(title, sizeof title, "FFN comparison: %s on %s", c.model.name, devs);
    md_header(md, title, o);
    fprintf(md,
            "## The question\n\nHow long do the feed-forward layers of **%s** take on %s, in "
            "prefill and in decode; how many FFN tokens per second, and per watt, does each "
            "device give; where does each turn compute-bound; and do the weights fit on one "
            "device?\n\n## Inputs\n\n",
            c.model.name, devs);
    ffn_md_compare_inputs(md, &c);
    fputs("## Results\n\n", md);
    rc = md_compare_section(md, o, &c, "");
    ffn_md_assumptions(md, c.model.moe.n_experts > 0, false);
    fclose(md);
    if (!rc) rc = finish_report(o, text, len);
    free(text);
    return rc;
}

static int report_bench(const rep_opts *o)
{
    static ffn_plot_bench b;
    static ffn_calib_file calf;
    static ffn_plot_device cal;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_profile_load_bench(o->bench, &b, &d)) return ffn_cli_diag(&d);
    if (o->cal && ffn_profile_load_calibration(o->cal, &calf, &d)) return ffn_cli_diag(&d);
    if (o->cal) ffn_plot_device_from_calibration(&calf, &cal);
    char *text = NULL;
    size_t len = 0;
    FILE *md = open_memstream(&text, &len);
    if (!md) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    char title[300];
    snprintf(title, sizeof title, "Validation: ffnroof's FFN kernels on %s",
             b.host[0] ? b.host : b.spec.name);
    md_header(md, title, o);
    fputs("## The question\n\nHow close do ffnroof's FFN kernels come to this host's roofline, and "
          "how well does the simulator predict their time?\n\n",
          md);
    ffn_md_bench_inputs(md, &b, o->bench, o->cal);
    fputs("## Validation: measured vs roofline vs predicted\n\n", md);
    ffn_md_validation(md, &b);
    fputs("## Charts\n\n", md);
    int rc = bench_charts(o, &b, o->cal ? &cal : NULL, md);
    ffn_md_assumptions(md, false, true);
    fclose(md);
    if (!rc) rc = finish_report(o, text, len);
    free(text);
    return rc;
}

/* --quick ------------------------------------------------------------------------------------ */

static int write_file(const char *path, int (*fn)(FILE *, const void *), const void *arg)
{
    ffn_cli_out out;
    int rc = ffn_cli_out_open(CMD, &out, path);
    if (rc) return rc;
    return ffn_cli_out_close(CMD, &out, fn(out.fp, arg) == 0);
}

typedef struct bench_args {
    const ffn_bench_meta *m;
    const ffn_bench_result *r;
    size_t n;
} bench_args;
static int bench_writer(FILE *fp, const void *a)
{
    const bench_args *x = a;
    return ffn_bench_write_json(fp, x->m, x->r, x->n);
}

static int report_quick(const rep_opts *o)
{
    char cal_dir[PATH_MAX], bench_dir[PATH_MAX], hw_path[PATH_MAX + 16], cal_path[PATH_MAX + 32],
        bench_path[PATH_MAX + 16];
    snprintf(cal_dir, sizeof cal_dir, "%s/calibration", o->dir);
    snprintf(bench_dir, sizeof bench_dir, "%s/bench", o->dir);
    int rc;
    if ((rc = ffn_cli_prepare_dir(CMD, cal_dir)) || (rc = ffn_cli_prepare_dir(CMD, bench_dir)))
        return rc;
    snprintf(hw_path, sizeof hw_path, "%s/hw.yaml", cal_dir);
    snprintf(cal_path, sizeof cal_path, "%s/calibration.json", cal_dir);
    snprintf(bench_path, sizeof bench_path, "%s/bench.json", bench_dir);

    double load[3] = {-1, -1, -1};
    ffn_prof_loadavg(load);
    ffn_prof_sigint_install();
    ffn_prof_progress prog;

    /* 1. calibrate quickly (the pipeline of `ffnroof calibrate --quick`) */
    fprintf(stderr, "[1/4] calibrating this host (peaks, bandwidth sweep, kernel fit)\n");
    static ffn_cal_record cr;
    const ffn_cal_opts copt = {.mode = FFN_KCAL_QUICK, .stop = ffn_prof_stop_flag()};
    ffn_cal_step failed = FFN_CAL_STEP_DONE;
    rc = ffn_prof_cal_run(CMD, "calibrate --quick", &copt, load, &cr, &failed);
    if (rc && failed == FFN_CAL_STEP_SPEC)
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "no fp32 peak or no memory bandwidth was measured");
    if (rc)
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "calibration %s",
                            rc == FFN_EINTERRUPTED ? "interrupted" : ffn_strerror(rc));
    if (cr.interrupted)
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "interrupted during the kernel fit");
    if ((rc = ffn_prof_cal_write(CMD, cal_dir, &cr, load, false))) return rc;
    const ffn_calibration *const cal = &cr.cal;
    ffn_hw *const hw = &cr.hw;
    const ffn_kcal_result *const kres = &cr.kcal;
    const int krc = cr.fit_rc;
    ffn_diag d;

    /* 2. bench the scaled layers on the calibrated spec */
    fprintf(stderr, "[2/4] benchmarking llama2-7b-shaped and Mixtral-shaped layers (scaled)\n");
    static ffn_bench_case cases[16];
    static ffn_bench_result res[16];
    size_t n = ffn_bench_quick_cases(cases, 16), n_done = 0;
    ffn_bench_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.case_time_s = 1.5;
    bo.stop = ffn_prof_stop_flag();
    ffn_prof_progress_init(&prog, "bench");
    prog.lo = 0.0;
    prog.hi = 1.0;
    ffn_diag_clear(&d);
    int brc = ffn_bench_run(hw, cases, n, &bo, ffn_prof_progress_case, &prog, res, &n_done, &d);
    ffn_prof_progress_end(&prog);
    if (brc && brc != FFN_EINTERRUPTED)
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "bench failed: %s",
                            d.msg[0] ? d.msg : ffn_strerror(brc));
    if (n_done == 0)
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "interrupted before any case finished");
    ffn_rerun drift[2];
    const size_t n_drift = ffn_bench_rerun(kres, ffn_prof_stop_flag(), drift);
    static ffn_host_info host;
    ffn_host_info_get(&host);
    char date[32];
    snprintf(date, sizeof date, "%s", cal->date);
    ffn_bench_meta bm = ffn_prof_bench_meta(date, o->command, brc, &host, load, hw, hw_path);
    bm.notes = "ffnroof report --quick: scaled layers (llama2-7b d/4, f/4; Mixtral d/8, f/8), "
               "timers only (no PAPI counters)";
    bench_args ba = {&bm, res, n_done};
    if ((rc = write_file(bench_path, bench_writer, &ba))) return rc;

    /* 3. read both back as any user's files would be, and compare the full models */
    fprintf(stderr, "[3/4] predicting llama2-7b and mixtral-8x7b on this host and datacenter "
                    "devices\n");
    static ffn_plot_bench b;
    static ffn_calib_file cfile;
    static ffn_plot_device cdev;
    ffn_diag_clear(&d);
    if (ffn_profile_load_bench(bench_path, &b, &d)) return ffn_cli_diag(&d);
    if (ffn_profile_load_calibration(cal_path, &cfile, &d)) return ffn_cli_diag(&d);
    ffn_plot_device_from_calibration(&cfile, &cdev);
    static ffn_compare cmp[2];
    static const char *const models[] = {"llama2-7b", "mixtral-8x7b"};
    char hwlist[PATH_MAX + 64];
    snprintf(hwlist, sizeof hwlist, "%s,xeon-8480,h100-sxm,mi300x", hw_path);
    for (int i = 0; i < 2; i++) {
        char *av[] = {(char *)CMD, (char *)"--model", (char *)models[i],  (char *)"--hw",
                      hwlist,      (char *)"--batch", (char *)"1,16,128", NULL};
        if ((rc = ffn_compare_setup(CMD, 7, av, &cmp[i], NULL, NULL, NULL))) return rc;
    }

    /* 4. the report */
    fprintf(stderr, "[4/4] writing the report and its charts\n");
    char *text = NULL;
    size_t len = 0;
    FILE *md = open_memstream(&text, &len);
    if (!md) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    char title[300];
    snprintf(title, sizeof title, "ffnroof quick report: %s", host.host);
    md_header(md, title, o);
    ffn_md_quick_host(md, &host, cal, hw, kres, krc != 0, &cdev);
    ffn_md_quick_layers(md, FFN_QUICK_DENSE_D, FFN_QUICK_DENSE_F, FFN_QUICK_MOE_D, FFN_QUICK_MOE_F);
    ffn_md_validation(md, &b);
    ffn_md_quick_drift(md, drift, n_drift);
    fputs("### Charts\n\n", md);
    rep_opts oq = *o;
    if ((rc = bench_charts(&oq, &b, &cdev, md))) goto out;
    for (int i = 0; i < 2; i++) {
        fprintf(md, "## %s on this host and datacenter devices\n\n", cmp[i].model.name);
        ffn_md_compare_inputs(md, &cmp[i]);
        char prefix[80];
        snprintf(prefix, sizeof prefix, "%.60s-", cmp[i].model.name);
        if ((rc = md_compare_section(md, o, &cmp[i], prefix))) goto out;
    }
    ffn_md_assumptions(md, true, true);
out:
    fclose(md);
    if (!rc) rc = finish_report(o, text, len);
    free(text);
    return rc;
}

int ffn_cmd_report(int argc, char **argv)
{
    static rep_opts o;
    memset(&o, 0, sizeof o);
    o.dir = "report";
    o.render = true;
    /* the command line, for the report's header */
    size_t cl = 0;
    cl += (size_t)snprintf(o.command, sizeof o.command, "ffnroof");
    for (int i = 0; i < argc && cl < sizeof o.command; i++)
        cl += (size_t)snprintf(o.command + cl, sizeof o.command - cl, " %s", argv[i]);
    bool compare_opts = false;
    int c;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_flag(&seen, FFN_O_COMPARE, &o.compare);
    ffn_cli_bind_str(&seen, FFN_O_BENCH, &o.bench);
    ffn_cli_bind_str(&seen, FFN_O_CALIBRATION, &o.cal);
    ffn_cli_bind_flag(&seen, FFN_O_QUICK, &o.quick);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &o.dir);
    ffn_cli_bind_str(&seen, FFN_O_OUT_DIR, &o.dir);
    ffn_cli_bind_flag(&seen, FFN_O_FORCE, &o.force);
    /* no-render, then compare's options (parsed again by ffn_compare_setup) */
    static const int handled[] = {FFN_O_NO_RENDER,
                                  FFN_O_MODEL,
                                  FFN_O_HW,
                                  FFN_O_SCENARIO,
                                  FFN_O_ENGINE,
                                  FFN_O_DTYPE,
                                  FFN_O_WDTYPE,
                                  FFN_O_ADTYPE,
                                  FFN_O_BATCH,
                                  FFN_O_PROMPT,
                                  FFN_O_SEQ,
                                  FFN_O_PREFILL_BATCH,
                                  FFN_O_TP,
                                  FFN_O_EP,
                                  FFN_O_PHASE,
                                  FFN_O_PRICE,
                                  0};
    while ((c = ffn_cli_getopt(CMD, argc, argv, handled, &seen, (const int[]){FFN_O_PRICE, 0})) !=
           -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        switch (c) {
        case FFN_O_NO_RENDER:
            o.render = false;
            break;
        case 'h':
            usage(stdout);
            return FFN_EXIT_OK;
        case ':':
            return ffn_cli_usage(CMD, "option '%s' needs a value", argv[optind - 1]);
        case '?':
            return ffn_cli_usage(CMD, "unknown option '%s'", argv[optind - 1]);
        default:
            compare_opts = true; /* parsed again by ffn_compare_setup */
            break;
        }
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    int modes = o.compare + (o.bench != NULL) + o.quick;
    if (modes != 1)
        return ffn_cli_usage(CMD, "say what to report on: exactly one of --compare, --bench FILE "
                                  "or --quick");
    if (compare_opts && !o.compare)
        return ffn_cli_usage(CMD, "--model, --hw and the other comparison options need --compare");
    if (o.cal && !o.bench) return ffn_cli_usage(CMD, "--calibration goes with --bench");
    int rc = ffn_cli_prepare_dir(CMD, o.dir);
    if (rc) return rc;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/report.md", o.dir);
    struct stat st;
    if (!o.force && stat(path, &st) == 0)
        return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "'%s' exists; use --force to overwrite it", path);
    if (o.compare) return report_compare(&o, argc, argv);
    if (o.bench) return report_bench(&o);
    return report_quick(&o);
}
