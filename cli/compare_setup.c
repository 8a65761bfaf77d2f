/* The comparison that `ffnroof compare` and `ffnroof report --compare` share (cli/pictures.h):
 * its options and help, the loading of the model, devices or scenario, the predictions, the
 * table/JSON/CSV choice and the charts. The predictions and the writers are in the library
 * (include/ffnroof/compare.h). */
#define _GNU_SOURCE
#include "pictures.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/compare_report.h"
#include "ffnroof/prices.h"
#include "ffnroof/scenario.h"
#include "vocab.h"

static void usage(FILE *fp, const char *cmd)
{
    fprintf(fp,
            "usage: ffnroof %s --model M --hw A,B,... [options]\n"
            "       ffnroof %s --scenario FILE [options]\n"
            "\n"
            "One model on several devices (GPUs, accelerators, CPUs, calibrated hosts) side by\n"
            "side: FFN latency per layer and for the whole model in prefill and decode, FFN\n"
            "tokens/s and tokens/s per watt of TDP, the ridge point, whether a device's share\n"
            "of the weights fits (and how many devices they need), $/h and the FFN's $ per\n"
            "million tokens where a price is known, and, for MoE models, where a layer's time\n"
            "goes.\n"
            "\n",
            cmd, cmd);
    static const char *const cc = "compare";
    ffn_cli_help_words(fp, cc,
                       (const int[]){FFN_O_MODEL, FFN_O_HW, FFN_O_SCENARIO, FFN_O_ENGINE,
                                     FFN_O_PHASE, FFN_O_DTYPE, FFN_O_WDTYPE, FFN_O_ADTYPE,
                                     FFN_O_BATCH, FFN_O_PROMPT, FFN_O_PREFILL_BATCH, FFN_O_TP,
                                     FFN_O_EP, FFN_O_PRICE, FFN_O_FORMAT, FFN_O_OUT, 0});
    fputs("  --plots DIR           also write latency, roofline (and moe) charts into DIR\n", fp);
    ffn_cli_help_words(fp, cc, (const int[]){FFN_O_NO_RENDER, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Times are per device of the layout (--tp x --ep devices, the FFN split over them as\n"
          "predict splits it); tokens/s count the FFN alone (attention excluded), so they are\n"
          "upper bounds and $/M tokens lower bounds: `ffnroof plan` prices the whole step.\n"
          "Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
          fp);
}

static int load_devices(const char *cmd, ffn_compare *c, const char *list)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    c->n_dev = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!*tok) continue;
        if (c->n_dev >= FFN_CMP_MAX_HW)
            return ffn_cli_usage(cmd, "--hw: at most %d devices", FFN_CMP_MAX_HW);
        ffn_cmp_device *d = &c->dev[c->n_dev];
        int rc = ffn_cli_resolve(cmd, "hw", tok, d->hw_path, sizeof d->hw_path);
        if (rc) return rc;
        if ((rc = ffn_cli_load_hw(cmd, d->hw_path, &d->hw))) return rc;
        c->n_dev++;
    }
    return 0;
}

static int from_scenario(const char *cmd, ffn_compare *c, const char *path, bool want_model,
                         bool want_hw, bool want_batch, bool want_seq, bool want_dtype)
{
    static ffn_scenario sc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_scenario_load(path, &sc, &d)) return ffn_cli_diag(&d);
    snprintf(c->scenario, sizeof c->scenario, "%s", path);
    int rc = 0;
    char dir[PATH_MAX];
    if (want_model) {
        if (sc.n_models == 0) {
            rc = ffn_cli_usage(cmd, "scenario '%s' names no model; give --model", path);
            goto done;
        }
        if (ffn_scenario_resolve(&sc, &sc.models[0], ffn_cli_data_dir("models", dir, sizeof dir),
                                 "model", c->model_path, sizeof c->model_path, &d)) {
            rc = ffn_cli_diag(&d);
            goto done;
        }
        if (sc.n_models > 1)
            fprintf(stderr,
                    "ffnroof %s: note: %s compares one model; the scenario names %zu, the first "
                    "(%s) is compared (--model picks another; plan and sweep take them all)\n",
                    cmd, cmd, sc.n_models, sc.models[0].name);
    }
    if (want_hw) {
        c->n_dev = 0;
        const char *hw_dir = ffn_cli_data_dir("hw", dir, sizeof dir);
        for (size_t i = 0; i < sc.n_hws && c->n_dev < FFN_CMP_MAX_HW; i++) {
            ffn_cmp_device *dv = &c->dev[c->n_dev];
            if (ffn_scenario_resolve(&sc, &sc.hws[i], hw_dir, "device", dv->hw_path,
                                     sizeof dv->hw_path, &d)) {
                rc = ffn_cli_diag(&d);
                goto done;
            }
            if ((rc = ffn_cli_load_hw(cmd, dv->hw_path, &dv->hw))) goto done;
            c->n_dev++;
        }
    }
    if (want_seq && sc.plan.prompt) c->run.seq = sc.plan.prompt;
    if (want_dtype) {
        c->run.wdtype = sc.plan.wdtype;
        c->run.adtype = sc.plan.adtype;
        c->run.group_size = sc.plan.group_size;
        c->run.zero_point = sc.plan.zero_point;
        c->run.act_io_dtype = sc.plan.act_io_dtype;
    }
    if (want_batch && sc.n_batch) {
        c->n_batch = 0;
        for (size_t i = 0; i < sc.n_batch && c->n_batch < FFN_CMP_MAX_BATCH; i++)
            c->batch[c->n_batch++] = sc.batch[i];
    }
done:
    ffn_scenario_release(&sc);
    return rc;
}

/* Each device's price an hour: --price DEVICE=USD, else hw/prices.tsv's dated list price. */
static int set_prices(const char *cmd, ffn_compare *c, const char *const *prices, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(prices[i], '=');
        size_t k = 0;
        if (eq)
            while (k < c->n_dev &&
                   (strlen(c->dev[k].hw.name) != (size_t)(eq - prices[i]) ||
                    strncmp(c->dev[k].hw.name, prices[i], (size_t)(eq - prices[i]))))
                k++;
        if (!eq || k == c->n_dev)
            return ffn_cli_usage(cmd, "--price needs DEVICE=USD for a device of --hw; got '%s'",
                                 prices[i]);
        int rc = ffn_cli_double(cmd, "--price", eq + 1, 1e-6, 1e6, &c->dev[k].usd_per_hour);
        if (rc) return rc;
        snprintf(c->dev[k].price_source, sizeof c->dev[k].price_source, "--price");
    }
    static ffn_price_table table;
    char dir[PATH_MAX], path[PATH_MAX + 16];
    if (!ffn_cli_data_dir("hw", dir, sizeof dir)) return 0;
    snprintf(path, sizeof path, "%s/prices.tsv", dir);
    if (access(path, R_OK) != 0) return 0;
    ffn_diag d;
    if (ffn_prices_load(path, &table, &d)) return ffn_cli_diag(&d);
    for (size_t k = 0; k < c->n_dev; k++) {
        const ffn_price *p =
            c->dev[k].usd_per_hour > 0 ? NULL : ffn_price_find(&table, c->dev[k].hw.name);
        if (!p) continue;
        c->dev[k].usd_per_hour = p->usd_per_hour;
        snprintf(c->dev[k].price_source, sizeof c->dev[k].price_source, "%s, retrieved %s",
                 p->provider, p->retrieved);
    }
    return 0;
}

int ffn_compare_setup(const char *cmd, int argc, char **argv, ffn_compare *c, ffn_format *fmt,
                      const char **out_path, const char **plots_dir)
{
    bool report = strcmp(cmd, "compare") != 0;
    memset(c, 0, sizeof *c);
    ffn_run_default(&c->run);
    c->run.batch = 1;
    c->batch[0] = 1, c->batch[1] = 8, c->batch[2] = 64;
    c->n_batch = 3;
    const char *model = NULL, *hw = NULL, *scenario = NULL, *skip = NULL, *engine = NULL;
    ffn_dtype dt = c->run.wdtype;
    uint64_t batch[FFN_CMP_MAX_BATCH];
    size_t n_batch = 0;
    bool skip_flag;
    int ch, rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_MODEL, &model);
    ffn_cli_bind_str(&seen, FFN_O_HW, &hw);
    ffn_cli_bind_str(&seen, FFN_O_SCENARIO, &scenario);
    ffn_cli_bind_str(&seen, FFN_O_ENGINE, &engine);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &dt);
    ffn_cli_bind_dtype(&seen, FFN_O_WDTYPE, &c->run.wdtype);
    ffn_cli_bind_dtype(&seen, FFN_O_ADTYPE, &c->run.adtype);
    ffn_cli_bind_word_list(&seen, "compare", FFN_O_BATCH, batch, FFN_CMP_MAX_BATCH, &n_batch);
    ffn_cli_bind_word(&seen, FFN_O_SEQ, &c->run.seq);
    ffn_cli_bind_word(&seen, FFN_O_PROMPT, &c->run.seq);
    ffn_cli_bind_word(&seen, FFN_O_PREFILL_BATCH, &c->run.batch);
    ffn_cli_bind_word(&seen, FFN_O_TP, &c->run.tp);
    ffn_cli_bind_word(&seen, FFN_O_EP, &c->run.ep);
    ffn_cli_bind_phases(&seen, FFN_O_PHASE, &c->phases);
    ffn_cli_bind_str(&seen, FFN_O_OUT, out_path ? out_path : &skip);
    ffn_cli_bind_flag(&seen, FFN_O_NO_RENDER, &skip_flag); /* read by the caller */
    if (report) { /* report's own options: it parsed them */
        ffn_cli_bind_flag(&seen, FFN_O_COMPARE, &skip_flag);
        ffn_cli_bind_flag(&seen, FFN_O_FORCE, &skip_flag);
        ffn_cli_bind_flag(&seen, FFN_O_QUICK, &skip_flag);
        ffn_cli_bind_str(&seen, FFN_O_BENCH, &skip);
        ffn_cli_bind_str(&seen, FFN_O_CALIBRATION, &skip);
        ffn_cli_bind_str(&seen, FFN_O_OUT_DIR, &skip);
    }
    static const int handled[] = {FFN_O_FORMAT, FFN_O_PLOTS, FFN_O_PRICE, 0};
    const char *prices[FFN_CMP_MAX_HW];
    size_t n_prices = 0;
    while ((ch = ffn_cli_getopt(cmd, argc, argv, handled, &seen, (const int[]){FFN_O_PRICE, 0})) !=
           -1) {
        if (ch == -2) return FFN_EXIT_USAGE;
        if (ch == FFN_O_PRICE) {
            if (n_prices == FFN_CMP_MAX_HW)
                return ffn_cli_usage(cmd, "--price: at most %d, one per device", FFN_CMP_MAX_HW);
            prices[n_prices++] = optarg;
            continue;
        }
        if (ch == 'h') {
            usage(stdout, cmd);
            return -1;
        }
        if (ch == FFN_O_FORMAT && fmt) {
            if ((rc = ffn_cli_format(cmd, optarg, fmt, true))) return rc;
        } else if (ch == FFN_O_PLOTS && plots_dir) {
            *plots_dir = optarg;
        } else if (ch == FFN_O_FORMAT || ch == FFN_O_PLOTS) {
            return ffn_cli_usage(cmd, "--%s does not apply here", ffn_cli_opt_name(ch));
        } else {
            return ffn_cli_opt_other(cmd, ch, argv, NULL, true);
        }
    }
    if (optind < argc) return ffn_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if ((rc = ffn_cli_run_dtypes(cmd, &seen, dt, &c->run))) return rc;
    const bool dtype_set = ffn_cli_given(&seen, FFN_O_DTYPE) ||
                           ffn_cli_given(&seen, FFN_O_WDTYPE) || ffn_cli_given(&seen, FFN_O_ADTYPE);
    const bool batch_set = ffn_cli_given(&seen, FFN_O_BATCH);
    const bool seq_set = ffn_cli_given(&seen, FFN_O_SEQ) || ffn_cli_given(&seen, FFN_O_PROMPT);
    if (batch_set) {
        memcpy(c->batch, batch, n_batch * sizeof batch[0]);
        c->n_batch = n_batch;
    }
    if ((rc = ffn_cli_engine(cmd, engine))) return rc;
    if (scenario &&
        (rc = from_scenario(cmd, c, scenario, !model, !hw, !batch_set, !seq_set, !dtype_set)))
        return rc;
    if (model) {
        if ((rc = ffn_cli_resolve(cmd, "models", model, c->model_path, sizeof c->model_path)))
            return rc;
    } else if (!c->model_path[0]) {
        return ffn_cli_usage(cmd, "--model is required (e.g. --model llama2-7b)");
    }
    if (hw && (rc = load_devices(cmd, c, hw))) return rc;
    if (c->n_dev == 0)
        return ffn_cli_usage(cmd, "empty comparison: give the devices with --hw A,B,...%s",
                             scenario ? " (the scenario names none)" : "");
    if ((rc = ffn_cli_load_model(cmd, c->model_path, &c->model))) return rc;
    if (c->run.ep > 1 && !c->model.moe.n_experts)
        return ffn_cli_usage(cmd, "--ep %llu: model '%s' has no experts",
                             (unsigned long long)c->run.ep, c->model.name);
    if ((rc = set_prices(cmd, c, prices, n_prices))) return rc;
    if (ffn_model_params(&c->model, &c->params))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "parameter count of '%s' overflows",
                            c->model.name);

    size_t bad = 0;
    ffn_diag dg;
    if (ffn_compare_predict(c, &bad, &dg))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "%s on %s: %s", c->model.name, c->dev[bad].hw.name,
                            dg.msg);
    return 0;
}

int ffn_compare_write(FILE *fp, const ffn_compare *c, ffn_format fmt)
{
    if (fmt == FFN_FMT_JSON) return ffn_compare_write_json(fp, c);
    if (fmt == FFN_FMT_CSV) return ffn_compare_write_csv(fp, c);
    return ffn_compare_write_table(fp, c);
}

int ffn_compare_plots(const char *cmd, const ffn_compare *c, const char *dir, const char *prefix,
                      int width, int height, bool render, char names[][64], int *n_names)
{
    static ffn_latency_chart lc;
    static ffn_roofline_chart rc_chart;
    static ffn_moe_chart mc;
    *n_names = 0;
    char today[16];
    ffn_cli_today(today, sizeof today);
    ffn_compare_charts(c, today, &lc, &rc_chart, &mc);
    ffn_chart_out co = {.dir = dir, .width = width, .height = height, .render = render};
    static const struct {
        ffn_chart_kind kind;
        const char *name;
    } charts[] = {
        {FFN_CHART_LATENCY, "latency"}, {FFN_CHART_ROOFLINE, "roofline"}, {FFN_CHART_MOE, "moe"}};
    const void *data[] = {&lc, &rc_chart, &mc};
    for (int i = 0; i < 3; i++) {
        if (charts[i].kind == FFN_CHART_MOE && !c->model.moe.n_experts) continue;
        char base[64];
        snprintf(base, sizeof base, "%s%s", prefix, charts[i].name);
        co.base = base;
        int rc = ffn_chart_emit(cmd, charts[i].kind, data[i], &co);
        if (rc) return rc;
        snprintf(names[(*n_names)++], 64, "%s", base);
    }
    return 0;
}
