/* The views of a device comparison (include/ffnroof/compare_report.h): the table, JSON (schema
 * ffnroof.compare/1), CSV and Markdown forms of `ffnroof compare` and `report --compare`, and
 * the comparison's charts (latency, roofline, MoE) as chart structs of ffnroof/plot.h. */
#include "ffnroof/compare_report.h"

#include <math.h>
#include <string.h>

#include "ffnroof/json.h"
#include "ffnroof/plot.h"
#include "ffnroof/predict_write.h"
#include "ffnroof/units.h"

#define FFN_COMPARE_SCHEMA "ffnroof.compare/1"

static double tokens_of(const ffn_result *r)
{
    return r->run.phase == FFN_PHASE_PREFILL ? (double)r->run.batch * (double)r->run.seq
                                             : (double)r->run.batch;
}

static double tok_s(const ffn_result *r)
{
    return r->predicted_s > 0 ? tokens_of(r) / r->predicted_s : NAN;
}

/* tokens/s per watt of the TDP of every device of the layout */
static double tok_s_w(const ffn_compare *c, const ffn_hw *hw, const ffn_result *r)
{
    return hw->tdp_w > 0 ? tok_s(r) / (hw->tdp_w * (double)ffn_compare_devices(c)) : NAN;
}

/* The FFN's dollars a million tokens on the layout's devices: a lower bound, as tokens/s are
 * upper bounds (NAN without a price). */
static double usd_per_mtok(const ffn_compare *c, const ffn_cmp_device *d, const ffn_result *r)
{
    const double t = tok_s(r);
    if (!(d->usd_per_hour > 0) || !(t > 0)) return NAN;
    return d->usd_per_hour * (double)ffn_compare_devices(c) / 3600.0 / t * 1e6;
}

/* whether phase ph (FFN_PHASE_*) is shown */
static bool shown(const ffn_compare *c, ffn_phase ph)
{
    const unsigned m = c->phases ? c->phases : 3u;
    return ph == FFN_PHASE_PREFILL ? (m & 1u) : (m & 2u);
}

static bool any_price(const ffn_compare *c)
{
    for (size_t i = 0; i < c->n_dev; i++)
        if (c->dev[i].usd_per_hour > 0) return true;
    return false;
}

static const char *g(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (v >= 100)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.3g", v);
    return buf;
}

static void json_point(ffn_json *j, const ffn_compare *c, const ffn_cmp_device *d,
                       const ffn_result *r)
{
    ffn_json_obj_begin(j, NULL);
    ffn_json_step_shape(j, r);
    ffn_json_num(j, "layer_s", ffn_plot_layer_latency_s(&c->model, r));
    ffn_json_num(j, "model_s", r->predicted_s);
    ffn_json_num(j, "model_p10_s", r->predicted_p10_s); /* the range: docs/model.md */
    ffn_json_num(j, "model_p90_s", r->predicted_p90_s);
    ffn_json_bool(j, "range_default", r->unc_default);
    ffn_json_num(j, "roofline_s", r->roofline_s);
    ffn_json_num(j, "tokens_per_s", tok_s(r));
    ffn_json_num(j, "tokens_per_s_per_w", tok_s_w(c, &d->hw, r));
    ffn_json_num(j, "usd_per_mtok", usd_per_mtok(c, d, r));
    ffn_json_num(j, "intensity", r->intensity);
    ffn_json_str(j, "bound", ffn_bound_name(r->bound));
    if (r->moe_layers) {
        const ffn_moe_detail *m = &r->moe_detail;
        ffn_json_obj_begin(j, "moe");
        ffn_json_moe_times(j, m);
        ffn_json_num(j, "experts_touched", m->stats.experts_touched);
        ffn_json_num(j, "share_of_ffn", m->share_of_ffn);
        ffn_json_obj_end(j);
    }
    ffn_json_obj_end(j);
}

/* The warning of a spec whose efficiency fit failed or is poor (ffn_hw_fit_warning), printed
 * beside every prediction made with it; NULL when there is none. */
static const char *fit_warning(const ffn_cmp_device *d, char *buf, size_t n)
{
    return ffn_hw_fit_warning(&d->hw, buf, n) ? buf : NULL;
}

static void print_fit_warnings(FILE *fp, const ffn_compare *c, const char *prefix)
{
    char w[320];
    for (size_t i = 0; i < c->n_dev; i++)
        if (fit_warning(&c->dev[i], w, sizeof w)) fprintf(fp, "%s%s\n", prefix, w);
}

/* One MoE layer's router, dispatch, experts, shared, combine and all-to-all times as text. */
static void moe_parts(const ffn_moe_detail *m, char t[6][32])
{
    const double v[6] = {m->router_s, m->dispatch_s, m->expert_s,
                         m->shared_s, m->combine_s,  m->alltoall_s};
    for (int k = 0; k < 6; k++)
        ffn_units_str(t[k], sizeof t[k], v[k], FFN_UNIT_TIME);
}

int ffn_compare_write_json(FILE *fp, const ffn_compare *c)
{
    ffn_json j;
    ffn_json_doc_begin(&j, fp, FFN_COMPARE_SCHEMA);
    ffn_json_obj_begin(&j, "model");
    ffn_json_str(&j, "name", c->model.name);
    ffn_json_str(&j, "file", c->model_path);
    ffn_json_u64(&j, "layers", c->model.layers);
    ffn_json_u64(&j, "params", c->params.total);
    ffn_json_u64(&j, "active_params", c->params.active);
    if (c->model.moe.n_experts) {
        ffn_json_u64(&j, "experts", c->model.moe.n_experts);
        ffn_json_u64(&j, "top_k", c->model.moe.top_k);
    }
    ffn_json_obj_end(&j);
    ffn_json_obj_begin(&j, "settings");
    ffn_json_str(&j, "wdtype", ffn_dtype_name(c->run.wdtype));
    ffn_json_str(&j, "adtype", ffn_dtype_name(c->run.adtype));
    ffn_json_u64(&j, "seq", c->run.seq);
    ffn_json_u64(&j, "prefill_batch", c->run.batch);
    ffn_json_u64(&j, "tp", c->run.tp ? c->run.tp : 1);
    ffn_json_u64(&j, "ep", c->run.ep ? c->run.ep : 1);
    ffn_json_u64(&j, "devices", ffn_compare_devices(c));
    ffn_json_arr_begin(&j, "decode_batches");
    for (size_t b = 0; b < c->n_batch; b++)
        ffn_json_u64(&j, NULL, c->batch[b]);
    ffn_json_arr_end(&j);
    if (c->scenario[0])
        ffn_json_str(&j, "scenario", c->scenario);
    else
        ffn_json_null(&j, "scenario");
    ffn_json_obj_end(&j);
    ffn_json_arr_begin(&j, "devices");
    for (size_t i = 0; i < c->n_dev; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        ffn_json_obj_begin(&j, NULL);
        ffn_json_str(&j, "name", d->hw.name);
        char fw[320];
        if (fit_warning(d, fw, sizeof fw)) ffn_json_str(&j, "fit_warning", fw);
        ffn_json_str(&j, "kind", ffn_hw_kind_name(d->hw.kind));
        ffn_json_str(&j, "file", d->hw_path);
        ffn_json_str(&j, "source", d->hw.source);
        ffn_json_num(&j, "peak_flops", d->decode[0].peak_flops);
        ffn_json_str(&j, "compute_dtype", ffn_dtype_name(d->decode[0].compute_dtype));
        ffn_json_num(&j, "mem_bandwidth_bps", d->hw.mem_bandwidth_bps);
        ffn_json_num(&j, "mem_capacity_bytes", d->hw.mem_capacity_bytes);
        if (d->hw.tdp_w > 0)
            ffn_json_num(&j, "tdp_w", d->hw.tdp_w);
        else
            ffn_json_null(&j, "tdp_w");
        ffn_json_num(&j, "ridge_tokens", d->decode[0].ridge_tokens);
        ffn_json_num(&j, "weight_bytes", d->weight_bytes);
        ffn_json_num(&j, "weight_bytes_per_device", d->share_bytes);
        ffn_json_bool(&j, "fits", d->fits);
        if (d->usd_per_hour > 0) {
            ffn_json_num(&j, "usd_per_hour", d->usd_per_hour);
            ffn_json_str(&j, "price_source", d->price_source);
        } else {
            ffn_json_null(&j, "usd_per_hour");
        }
        if (d->devices_for_weights)
            ffn_json_u64(&j, "devices_for_weights", d->devices_for_weights);
        else
            ffn_json_null(&j, "devices_for_weights");
        ffn_json_arr_begin(&j, "prefill");
        if (shown(c, FFN_PHASE_PREFILL)) json_point(&j, c, d, &d->prefill[0]);
        ffn_json_arr_end(&j);
        ffn_json_arr_begin(&j, "decode");
        for (size_t b = 0; shown(c, FFN_PHASE_DECODE) && b < c->n_batch; b++)
            json_point(&j, c, d, &d->decode[b]);
        ffn_json_arr_end(&j);
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}

static void csv_row(FILE *fp, const ffn_compare *c, const ffn_cmp_device *d, const ffn_result *r)
{
    bool pre = r->run.phase == FFN_PHASE_PREFILL;
    fprintf(fp, "%s,%s,%s,%s,%llu,", c->model.name, d->hw.name, ffn_hw_kind_name(d->hw.kind),
            ffn_phase_name(r->run.phase), (unsigned long long)r->run.batch);
    if (pre) fprintf(fp, "%llu", (unsigned long long)r->run.seq);
    fprintf(fp, ",%llu,%s", (unsigned long long)r->tokens, ffn_dtype_name(r->run.wdtype));
    ffn_csv_num(fp, ffn_plot_layer_latency_s(&c->model, r), 6);
    ffn_csv_num(fp, r->predicted_s, 6);
    ffn_csv_num(fp, tok_s(r), 6);
    ffn_csv_num(fp, tok_s_w(c, &d->hw, r), 6);
    fprintf(fp, ",%s", ffn_bound_name(r->bound));
    ffn_csv_num(fp, r->ridge_tokens, 6);
    ffn_csv_num(fp, d->weight_bytes, 6);
    fprintf(fp, ",%d,", d->fits ? 1 : 0);
    if (d->devices_for_weights) fprintf(fp, "%llu", (unsigned long long)d->devices_for_weights);
    const ffn_moe_detail *m = &r->moe_detail;
    double v[6] = {m->router_s, m->dispatch_s, m->expert_s,
                   m->shared_s, m->combine_s,  m->alltoall_s};
    for (int k = 0; k < 6; k++)
        ffn_csv_num(fp, r->moe_layers ? v[k] : NAN, 6);
    fprintf(fp, ",%llu,%llu", (unsigned long long)(c->run.tp ? c->run.tp : 1),
            (unsigned long long)(c->run.ep ? c->run.ep : 1));
    ffn_csv_num(fp, d->usd_per_hour > 0 ? d->usd_per_hour : NAN, 6);
    ffn_csv_num(fp, usd_per_mtok(c, d, r), 6);
    fputc('\n', fp);
}

int ffn_compare_write_csv(FILE *fp, const ffn_compare *c)
{
    fputs("model,hw,kind,phase,batch,seq,tokens,wdtype,layer_s,model_s,tokens_per_s,"
          "tokens_per_s_per_w,bound,ridge_tokens,weight_bytes,fits,devices_for_weights,router_s,"
          "dispatch_s,expert_s,shared_s,combine_s,alltoall_s,tp,ep,usd_per_hour,usd_per_mtok\n",
          fp);
    for (size_t i = 0; i < c->n_dev; i++) {
        if (shown(c, FFN_PHASE_PREFILL)) csv_row(fp, c, &c->dev[i], &c->dev[i].prefill[0]);
        for (size_t b = 0; shown(c, FFN_PHASE_DECODE) && b < c->n_batch; b++)
            csv_row(fp, c, &c->dev[i], &c->dev[i].decode[b]);
    }
    return ferror(fp) ? FFN_EIO : 0;
}

static const char *fit_text(char *buf, size_t n, const ffn_cmp_device *d)
{
    if (!d->devices_for_weights)
        snprintf(buf, n, "unknown");
    else if (d->fits)
        snprintf(buf, n, "yes");
    else
        snprintf(buf, n, "no, %llu", (unsigned long long)d->devices_for_weights);
    return buf;
}

int ffn_compare_write_table(FILE *fp, const ffn_compare *c)
{
    char a[32], b[32], e[32], f[32], h[32];
    fprintf(fp, "model   %s: %s G params (%s weights in %s", c->model.name,
            g(a, sizeof a, (double)c->params.total / 1e9),
            ffn_units_str(b, sizeof b, c->dev[0].weight_bytes, FFN_UNIT_BYTES),
            ffn_dtype_name(c->run.wdtype));
    if (c->run.adtype != c->run.wdtype)
        fprintf(fp, ", activations %s", ffn_dtype_name(c->run.adtype));
    fputs(")\n", fp);
    if (shown(c, FFN_PHASE_PREFILL))
        fprintf(fp, "        prefill %llu x %llu tokens", (unsigned long long)c->run.batch,
                (unsigned long long)c->run.seq);
    if (shown(c, FFN_PHASE_DECODE)) {
        fprintf(fp, "%sdecode batches", shown(c, FFN_PHASE_PREFILL) ? "; " : "        ");
        for (size_t i = 0; i < c->n_batch; i++)
            fprintf(fp, "%s%llu", i ? "," : " ", (unsigned long long)c->batch[i]);
    }
    const uint64_t tp = c->run.tp ? c->run.tp : 1, ep = c->run.ep ? c->run.ep : 1;
    if (tp * ep == 1)
        fprintf(fp, "\n        FFN only, one device, no TP/EP; tokens/s are FFN upper bounds\n\n");
    else
        fprintf(fp,
                "\n        FFN only, per device of TP %llu x EP %llu (%llu devices); tokens/s are "
                "FFN upper bounds\n\n",
                (unsigned long long)tp, (unsigned long long)ep,
                (unsigned long long)ffn_compare_devices(c));
    const bool priced = any_price(c);
    fprintf(fp, "%-16s %-4s %11s %11s %6s %8s %9s%s\n", "device", "kind", "peak", "memory BW",
            "TDP", "ridge", "fits (n)", priced ? "     $/h" : "");
    for (size_t i = 0; i < c->n_dev; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        char usd[32] = "";
        if (priced && d->usd_per_hour > 0)
            snprintf(usd, sizeof usd, " %7.2f", d->usd_per_hour);
        else if (priced)
            snprintf(usd, sizeof usd, " %7s", "-");
        fprintf(fp, "%-16.16s %-4.4s %11s %11s %6s %8s %9s%s\n", d->hw.name,
                ffn_hw_kind_name(d->hw.kind),
                ffn_units_str(a, sizeof a, d->decode[0].peak_flops, FFN_UNIT_FLOPS),
                ffn_units_str(b, sizeof b, d->hw.mem_bandwidth_bps, FFN_UNIT_BPS),
                d->hw.tdp_w > 0 ? ffn_units_str(e, sizeof e, d->hw.tdp_w, FFN_UNIT_POWER) : "-",
                g(f, sizeof f, d->decode[0].ridge_tokens), fit_text(h, sizeof h, d), usd);
    }
    fprintf(fp, "\n%-16s %-7s %6s %10s %10s %10s %9s%s %-7s %s\n", "device", "phase", "batch",
            "per layer", "model", "tokens/s", "tok/s/W", priced ? "   $/Mtok" : "", "bound",
            "model p10-p90");
    for (size_t i = 0; i < c->n_dev; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        bool first = true;
        for (size_t p = 0; p <= c->n_batch; p++) {
            const ffn_result *r = p == 0 ? &d->prefill[0] : &d->decode[p - 1];
            if (!shown(c, r->run.phase)) continue;
            char rg[80], fw[320], usd[48] = "", m[32];
            if (priced) snprintf(usd, sizeof usd, " %9s", g(m, sizeof m, usd_per_mtok(c, d, r)));
            fprintf(
                fp, "%-16.16s %-7s %6llu %10s %10s %10s %9s%s %-7s %s%s\n", first ? d->hw.name : "",
                ffn_phase_name(r->run.phase), (unsigned long long)r->run.batch,
                ffn_units_str(a, sizeof a, ffn_plot_layer_latency_s(&c->model, r), FFN_UNIT_TIME),
                ffn_units_str(b, sizeof b, r->predicted_s, FFN_UNIT_TIME), g(e, sizeof e, tok_s(r)),
                g(f, sizeof f, tok_s_w(c, &d->hw, r)), usd, ffn_bound_name(r->bound),
                ffn_range_text(rg, sizeof rg, r->predicted_s, r->predicted_p10_s,
                               r->predicted_p90_s, r->unc_default, true),
                fit_warning(d, fw, sizeof fw) ? "  ! fit" : "");
            first = false;
        }
    }
    fprintf(fp, "model p10-p90: the range of the model time (docs/model.md, \"Uncertainty\"); "
                "* = default\n");
    if (priced) {
        fprintf(fp, "$/Mtok: the FFN's dollars a million tokens on the layout's devices, a lower "
                    "bound (the FFN alone); prices:\n");
        for (size_t i = 0; i < c->n_dev; i++)
            if (c->dev[i].usd_per_hour > 0)
                fprintf(fp, "  %s $%.2f/h, %s\n", c->dev[i].hw.name, c->dev[i].usd_per_hour,
                        c->dev[i].price_source);
    }
    print_fit_warnings(fp, c, "! fit: ");
    if (c->model.moe.n_experts && shown(c, FFN_PHASE_DECODE)) {
        fprintf(fp,
                "\none MoE layer, busiest device (decode):\n%-16s %6s %9s %9s %9s %9s %9s %9s\n",
                "device", "batch", "router", "dispatch", "experts", "shared", "combine", "all2all");
        for (size_t i = 0; i < c->n_dev; i++)
            for (size_t p = 0; p < c->n_batch; p++) {
                char t[6][32];
                moe_parts(&c->dev[i].decode[p].moe_detail, t);
                fprintf(fp, "%-16.16s %6llu %9s %9s %9s %9s %9s %9s\n", p ? "" : c->dev[i].hw.name,
                        (unsigned long long)c->batch[p], t[0], t[1], t[2], t[3], t[4], t[5]);
            }
    }
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_compare_write_markdown(FILE *fp, const ffn_compare *c)
{
    char a[32], b[32], e[32], f[32], h[32];
    fprintf(fp,
            "| device | kind | %s peak | memory bandwidth | memory | TDP | ridge (tokens/step) | "
            "weights fit (devices needed) |\n|---|---|---:|---:|---:|---:|---:|---|\n",
            ffn_dtype_name(c->dev[0].decode[0].compute_dtype));
    for (size_t i = 0; i < c->n_dev; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        char cap[32];
        fprintf(fp, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", d->hw.name,
                ffn_hw_kind_name(d->hw.kind),
                ffn_units_str(a, sizeof a, d->decode[0].peak_flops, FFN_UNIT_FLOPS),
                ffn_units_str(b, sizeof b, d->hw.mem_bandwidth_bps, FFN_UNIT_BPS),
                ffn_units_str(cap, sizeof cap, d->hw.mem_capacity_bytes, FFN_UNIT_BYTES),
                d->hw.tdp_w > 0 ? ffn_units_str(e, sizeof e, d->hw.tdp_w, FFN_UNIT_POWER) : "-",
                g(f, sizeof f, d->decode[0].ridge_tokens), fit_text(h, sizeof h, d));
    }
    fprintf(
        fp,
        "\n| device | phase | batch | tokens/step | FFN per layer | FFN, whole model | "
        "FFN tokens/s | tokens/s per W | bound |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < c->n_dev; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        for (size_t p = 0; p <= c->n_batch; p++) {
            const ffn_result *r = p == 0 ? &d->prefill[0] : &d->decode[p - 1];
            if (!shown(c, r->run.phase)) continue;
            fprintf(
                fp, "| %s | %s | %llu | %llu | %s | %s | %s | %s | %s |\n", d->hw.name,
                ffn_phase_name(r->run.phase), (unsigned long long)r->run.batch,
                (unsigned long long)r->tokens,
                ffn_units_str(a, sizeof a, ffn_plot_layer_latency_s(&c->model, r), FFN_UNIT_TIME),
                ffn_units_str(b, sizeof b, r->predicted_s, FFN_UNIT_TIME), g(e, sizeof e, tok_s(r)),
                g(f, sizeof f, tok_s_w(c, &d->hw, r)), ffn_bound_name(r->bound));
        }
    }
    print_fit_warnings(fp, c, "\n> ");
    if (ffn_compare_devices(c) > 1)
        fprintf(fp, "\nTimes are per device of TP %llu x EP %llu (%llu devices).\n",
                (unsigned long long)(c->run.tp ? c->run.tp : 1),
                (unsigned long long)(c->run.ep ? c->run.ep : 1),
                (unsigned long long)ffn_compare_devices(c));
    if (c->model.moe.n_experts && shown(c, FFN_PHASE_DECODE)) {
        fprintf(fp, "\nOne MoE layer on the busiest device, decode:\n\n| device | batch | router | "
                    "dispatch | routed experts | shared experts | combine | all-to-all |\n"
                    "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < c->n_dev; i++)
            for (size_t p = 0; p < c->n_batch; p++) {
                char t[6][32];
                moe_parts(&c->dev[i].decode[p].moe_detail, t);
                fprintf(fp, "| %s | %llu | %s | %s | %s | %s | %s | %s |\n", c->dev[i].hw.name,
                        (unsigned long long)c->batch[p], t[0], t[1], t[2], t[3], t[4], t[5]);
            }
    }
    return ferror(fp) ? FFN_EIO : 0;
}

void ffn_compare_charts(const ffn_compare *c, const char *today, ffn_latency_chart *lc,
                        ffn_roofline_chart *rc_chart, ffn_moe_chart *mc)
{
    char devices[512] = "";
    for (size_t i = 0; i < c->n_dev; i++) {
        size_t l = strlen(devices);
        snprintf(devices + l, sizeof devices - l, "%s%s", i ? ", " : "", c->dev[i].hw.name);
    }
    const char *dt = ffn_dtype_name(c->run.wdtype);

    /* latency: prefill over a prompt-length sweep, decode over the batches (and a sweep) */
    memset(lc, 0, sizeof *lc);
    snprintf(lc->title, sizeof lc->title, "FFN latency per layer: %.60s on %.100s, %s (%s)",
             c->model.name, devices, dt, today);
    for (size_t i = 0; i < c->n_dev && (int)i < FFN_PLOT_MAX_DEVICES; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        snprintf(lc->device[lc->n_dev], sizeof lc->device[0], "%s", d->hw.name);
        lc->ridge_tokens[lc->n_dev] = d->decode[0].ridge_tokens;
        int dev = lc->n_dev++;
        for (int ph = 0; ph < 2 && lc->n_series < FFN_PLOT_MAX_SERIES; ph++) {
            ffn_latency_series *s = &lc->s[lc->n_series++];
            s->device = dev;
            s->phase = ph ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
            snprintf(s->label, sizeof s->label, "%s %s", d->hw.name, ph ? "decode" : "prefill");
            for (uint64_t t = ph ? 1 : 128; t <= (ph ? 1024u : 32768u) && s->n < 16; t *= 2) {
                ffn_run r = c->run;
                r.phase = s->phase;
                if (ph)
                    r.batch = t;
                else
                    r.batch = 1, r.seq = t;
                ffn_result res;
                ffn_diag dg;
                ffn_diag_clear(&dg);
                if (ffn_predict(&c->model, &d->hw, &r, &res, &dg)) continue;
                s->tokens[s->n] = (double)res.tokens;
                s->seconds[s->n] = ffn_plot_layer_latency_s(&c->model, &res);
                s->n++;
            }
        }
    }

    /* roofline: every device, the model's whole-FFN points on each */
    memset(rc_chart, 0, sizeof *rc_chart);
    snprintf(rc_chart->title, sizeof rc_chart->title, "Roofline: %.60s on %.100s, %s (%s)",
             c->model.name, devices, dt, today);
    for (size_t i = 0; i < c->n_dev && (int)i < FFN_PLOT_MAX_DEVICES; i++) {
        const ffn_cmp_device *d = &c->dev[i];
        ffn_plot_device_from_hw(&d->hw, &rc_chart->dev[rc_chart->n_dev]);
        int dev = rc_chart->n_dev++;
        ffn_plot_point_from_result(&d->prefill[0], dev, &rc_chart->pts[rc_chart->n_pts++]);
        for (size_t b = 0; b < c->n_batch && rc_chart->n_pts < FFN_PLOT_MAX_POINTS; b++)
            ffn_plot_point_from_result(&d->decode[b], dev, &rc_chart->pts[rc_chart->n_pts++]);
    }

    memset(mc, 0, sizeof *mc);
    if (!c->model.moe.n_experts) return;
    snprintf(mc->title, sizeof mc->title, "MoE layer time: %.60s on %.100s, %s (%s)", c->model.name,
             devices, dt, today);
    snprintf(mc->xlabel, sizeof mc->xlabel, "device and decode batch");
    for (size_t i = 0; i < c->n_dev; i++)
        for (size_t b = 0; b < c->n_batch && mc->n_bars < FFN_PLOT_MAX_BARS; b++) {
            char lab[48];
            snprintf(lab, sizeof lab, "%.24s b=%llu", c->dev[i].hw.name,
                     (unsigned long long)c->batch[b]);
            ffn_plot_moe_bar_from_result(&c->dev[i].decode[b], lab, &mc->bars[mc->n_bars++]);
        }
}
