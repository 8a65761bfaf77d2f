/* The three charts of `ffnroof plot` built from what the command line names: loaded specs and a
 * model (predictions), calibration.json and bench.json records (measurements), and a grid of
 * batches, prompts and expert-parallel degrees (include/ffnroof/plot.h, "building"). */
#include "ffnroof/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

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

/* "what: model on devices, dtype (today)", or q->title when the user gave one. */
static void title(char *buf, size_t n, const char *what, const ffn_plot_request *q,
                  const char *devices, const char *model)
{
    if (q->title)
        snprintf(buf, n, "%s", q->title);
    else if (model)
        snprintf(buf, n, "%s: %s on %s, %s (%s)", what, model, devices, ffn_dtype_name(q->dtype),
                 q->today ? q->today : "");
    else
        snprintf(buf, n, "%s: %s (%s)", what, devices, q->today ? q->today : "");
}

static int predict(const ffn_plot_request *q, int h, const ffn_run *run, ffn_result *r, ffn_diag *d)
{
    ffn_diag pd;
    ffn_diag_clear(&pd);
    int rc = ffn_predict(q->model, &q->hws[h], run, r, &pd);
    if (rc)
        return ffn_diag_set(d, rc, NULL, 0, 0, "%s on %s: %s", q->model->name, q->hws[h].name,
                            pd.msg);
    return 0;
}

static int device_index(const ffn_roofline_chart *c, const char *name)
{
    for (int i = 0; i < c->n_dev; i++)
        if (!strcmp(c->dev[i].name, name)) return i;
    return -1;
}

static int too_many(ffn_diag *d, const char *what)
{
    return ffn_diag_set(d, FFN_ENOSPACE, NULL, 0, 0, "too many %s", what);
}

/* The bench's cases on device dev: once each, or (levels) once per memory level at the
 * intensity of the bytes that level served. */
static void roofline_cases(const ffn_plot_bench *bf, int dev, bool levels, ffn_roofline_chart *c)
{
    for (size_t k = 0; k < bf->n_cases && c->n_pts < FFN_PLOT_MAX_POINTS; k++) {
        const ffn_plot_case *bc = &bf->cases[k];
        if (levels && bc->n_levels > 0) {
            /* the cache-aware roofline (Ilic et al. 2014, as Intel Advisor draws it) */
            for (int l = 0; l < bc->n_levels && c->n_pts < FFN_PLOT_MAX_POINTS; l++) {
                if (!(bc->level_bytes[l] > 0)) continue;
                ffn_plot_point *p = &c->pts[c->n_pts++];
                ffn__plot_case_point(bc, dev, p);
                char base[sizeof p->label];
                snprintf(base, sizeof base, "%s", p->label);
                snprintf(p->label, sizeof p->label, "%.39s @%s", base, bc->level_names[l]);
                p->intensity = bc->flops / bc->level_bytes[l];
            }
            continue;
        }
        ffn__plot_case_point(bc, dev, &c->pts[c->n_pts++]);
    }
}

int ffn_plot_build_roofline(const ffn_plot_request *q, ffn_roofline_chart *c, ffn_diag *d)
{
    memset(c, 0, sizeof *c);
    char devices[512] = "";
    for (int i = 0; i < q->n_hw; i++) {
        ffn_plot_device_from_hw(&q->hws[i], &c->dev[c->n_dev++]);
        append_name(devices, sizeof devices, q->hws[i].name);
    }
    for (int i = 0; i < q->n_cal; i++) {
        if (c->n_dev >= FFN_PLOT_MAX_DEVICES) return too_many(d, "devices");
        ffn_plot_device_from_calibration(&q->cal[i], &c->dev[c->n_dev]);
        append_name(devices, sizeof devices, c->dev[c->n_dev].name);
        c->n_dev++;
    }
    for (int i = 0; i < q->n_bench; i++) {
        const ffn_plot_bench *bf = &q->bench[i];
        /* the points go on the device of the same name (the spec's, or the host's for a
         * --calibration of the same host), else on the bench's own spec */
        int dev = device_index(c, bf->spec.name);
        if (dev < 0 && bf->host[0]) dev = device_index(c, bf->host);
        if (dev < 0) {
            if (c->n_dev >= FFN_PLOT_MAX_DEVICES) return too_many(d, "devices");
            dev = c->n_dev;
            ffn_plot_device_from_bench(bf, &c->dev[c->n_dev++]);
            append_name(devices, sizeof devices, bf->spec.name);
        }
        roofline_cases(bf, dev, q->levels, c);
    }
    if (q->model) {
        static const uint64_t def_batch[] = {1, 16, 256};
        const uint64_t *batch = q->n_batch ? q->batch : def_batch;
        const size_t nb = q->n_batch ? q->n_batch : 3;
        for (int h = 0; h < q->n_hw; h++) {
            ffn_run run;
            ffn_run_default(&run);
            run.wdtype = run.adtype = q->dtype;
            if (q->n_seq) run.seq = q->seq[0];
            run.phase = FFN_PHASE_PREFILL;
            run.batch = 1;
            ffn_result r;
            int rc = predict(q, h, &run, &r, d);
            if (rc) return rc;
            if (c->n_pts < FFN_PLOT_MAX_POINTS)
                ffn_plot_point_from_result(&r, h, &c->pts[c->n_pts++]);
            for (size_t b = 0; b < nb; b++) {
                run.phase = FFN_PHASE_DECODE;
                run.batch = batch[b];
                if ((rc = predict(q, h, &run, &r, d))) return rc;
                if (c->n_pts < FFN_PLOT_MAX_POINTS)
                    ffn_plot_point_from_result(&r, h, &c->pts[c->n_pts++]);
            }
        }
    }
    title(c->title, sizeof c->title, "Roofline", q, devices, q->model ? q->model->name : NULL);
    return 0;
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

/* The predicted prefill (over prompts) and decode (over batches) curves of device h. */
static int latency_predicted(const ffn_plot_request *q, int h, ffn_latency_chart *c, ffn_diag *d)
{
    uint64_t def_batch[16], def_seq[16];
    size_t nb = 0, ns = 0;
    for (uint64_t b = 1; b <= 1024; b *= 2)
        def_batch[nb++] = b;
    for (uint64_t s = 64; s <= 16384; s *= 2)
        def_seq[ns++] = s;
    const uint64_t *batch = q->n_batch ? q->batch : def_batch;
    const uint64_t *seq = q->n_seq ? q->seq : def_seq;
    if (q->n_batch) nb = q->n_batch;
    if (q->n_seq) ns = q->n_seq;
    const int dev = lat_device(c, q->hws[h].name);
    if (dev < 0) return too_many(d, "devices");
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = run.adtype = q->dtype;
    char lab[80];
    ffn_result r;
    for (size_t i = 0; i < ns + nb; i++) {
        const bool prefill = i < ns;
        run.phase = prefill ? FFN_PHASE_PREFILL : FFN_PHASE_DECODE;
        run.batch = prefill ? 1 : batch[i - ns];
        if (prefill) run.seq = seq[i];
        int rc = predict(q, h, &run, &r, d);
        if (rc) return rc;
        snprintf(lab, sizeof lab, "%.60s %s, predicted", q->hws[h].name,
                 prefill ? "prefill" : "decode");
        ffn__plot_series_add(c, dev, run.phase, false, lab, (double)r.tokens,
                             ffn_plot_layer_latency_s(q->model, &r));
        c->ridge_tokens[dev] = r.ridge_tokens;
    }
    return 0;
}

int ffn_plot_build_latency(const ffn_plot_request *q, ffn_latency_chart *c, ffn_diag *d)
{
    memset(c, 0, sizeof *c);
    char devices[512] = "";
    for (int h = 0; q->model && h < q->n_hw; h++) {
        append_name(devices, sizeof devices, q->hws[h].name);
        int rc = latency_predicted(q, h, c, d);
        if (rc) return rc;
    }
    for (int i = 0; i < q->n_bench; i++) {
        const ffn_plot_bench *bf = &q->bench[i];
        int dev = lat_device(c, bf->spec.name);
        if (dev < 0) return too_many(d, "devices");
        append_name(devices, sizeof devices, bf->spec.name);
        for (size_t k = 0; k < bf->n_cases; k++) {
            const ffn_plot_case *bc = &bf->cases[k];
            char shape[64], lab[80];
            snprintf(shape, sizeof shape, "%s%s d%llu f%llu %s",
                     strcmp(bc->kind, "moe") ? "" : "moe ", ffn_phase_name(bc->phase),
                     (unsigned long long)bc->d, (unsigned long long)bc->f, bc->dtype);
            snprintf(lab, sizeof lab, "%s measured", shape);
            ffn__plot_series_add(c, dev, bc->phase, true, lab, (double)bc->tokens, bc->median_s);
            if (bc->predicted_s > 0) {
                snprintf(lab, sizeof lab, "%s predicted", shape);
                ffn__plot_series_add(c, dev, bc->phase, false, lab, (double)bc->tokens,
                                     bc->predicted_s);
            }
        }
    }
    title(c->title, sizeof c->title, "FFN latency per layer", q, devices,
          q->model ? q->model->name : NULL);
    return 0;
}

int ffn_plot_build_moe(const ffn_plot_request *q, ffn_moe_chart *c, ffn_diag *d)
{
    memset(c, 0, sizeof *c);
    if (!q->model || !q->n_hw)
        return ffn_diag_set(d, FFN_EINVAL, NULL, 0, 0, "moe needs --model and --hw");
    if (!q->model->moe.n_experts)
        return ffn_diag_set(d, FFN_EINVAL, NULL, 0, 0,
                            "model '%s' has no experts: nothing to break down", q->model->name);
    static const uint64_t def_batch[] = {1, 8, 64, 512};
    static const uint64_t def_ep[] = {1, 2, 4, 8};
    static const uint64_t ep_batch[] = {64};
    const uint64_t *batch = q->n_batch ? q->batch : q->by_ep ? ep_batch : def_batch;
    const size_t nb = q->by_ep ? 1 : q->n_batch ? q->n_batch : 4;
    const uint64_t *ep = q->n_ep ? q->ep : def_ep;
    const size_t ne = q->by_ep ? (q->n_ep ? q->n_ep : 4) : 1;
    char devices[512] = "";
    for (int h = 0; h < q->n_hw; h++) {
        append_name(devices, sizeof devices, q->hws[h].name);
        const char *name = q->n_hw > 1 ? q->hws[h].name : "", *sep = q->n_hw > 1 ? " " : "";
        for (size_t b = 0; b < nb; b++)
            for (size_t e = 0; e < ne; e++) {
                if (c->n_bars >= FFN_PLOT_MAX_BARS) return too_many(d, "bars");
                ffn_run run;
                ffn_run_default(&run);
                run.wdtype = run.adtype = q->dtype;
                run.phase = q->phase;
                run.batch = batch[b];
                if (q->n_seq) run.seq = q->seq[0];
                run.ep = q->by_ep ? ep[e] : 1;
                ffn_result r;
                int rc = predict(q, h, &run, &r, d);
                if (rc) return rc;
                char lab[48];
                if (q->by_ep)
                    snprintf(lab, sizeof lab, "%.30s%sEP %llu", name, sep,
                             (unsigned long long)run.ep);
                else
                    snprintf(lab, sizeof lab, "%.30s%sb=%llu", name, sep,
                             (unsigned long long)run.batch);
                ffn_plot_moe_bar_from_result(&r, lab, &c->bars[c->n_bars++]);
            }
    }
    if (q->by_ep)
        snprintf(c->xlabel, sizeof c->xlabel, "expert-parallel degree (%s batch %llu)",
                 ffn_phase_name(q->phase), (unsigned long long)batch[0]);
    else
        snprintf(c->xlabel, sizeof c->xlabel, "%s batch (sequences%s)", ffn_phase_name(q->phase),
                 q->phase == FFN_PHASE_PREFILL ? " of the prompt" : "");
    title(c->title, sizeof c->title, "MoE layer time", q, devices, q->model->name);
    return 0;
}
