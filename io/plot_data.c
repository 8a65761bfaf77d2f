/* The data and gnuplot scripts of ffnroof's charts (include/ffnroof/plot.h): roofline ceilings
 * from hardware specs and calibration files, kernel points from bench results and predictions,
 * and the writers that turn a chart struct into a gnuplot data file (index blocks) plus a script
 * made from a template in plots/. The geometry (where a ceiling starts and ends, axis ranges,
 * label positions) is computed here so that the script stays a plain, restylable gnuplot file.
 * Nothing here runs a process; cli/gnuplot.c renders. */
#include "ffnroof/plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/units.h"
#include "ydoc.h"

const char *ffn_roof_kind_name(ffn_roof_kind k)
{
    switch (k) {
    case FFN_ROOF_COMPUTE:
        return "compute";
    case FFN_ROOF_READ_ONLY:
        return "read-only";
    case FFN_ROOF_READ_WRITE:
        return "read-write";
    default:
        return "datasheet peak";
    }
}

/* ---- filling ---------------------------------------------------------------------------- */

int ffn_plot_device_add(ffn_plot_device *d, const char *name, ffn_roof_kind kind, double value)
{
    if (!(value > 0) || !isfinite(value)) return FFN_EINVAL;
    if (d->n_ceil >= FFN_PLOT_MAX_CEILINGS) return FFN_ENOSPACE;
    ffn_plot_ceiling *c = &d->ceil[d->n_ceil++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->kind = kind;
    c->value = value;
    return 0;
}

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

void ffn_plot_device_from_hw(const ffn_hw *hw, ffn_plot_device *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", hw->name);
    /* calibrate writes the read-only tail rate as main memory bandwidth (measure.h) */
    bool measured = starts_with(hw->source, "measured by ffnroof calibrate");
    snprintf(out->origin, sizeof out->origin, "%s", measured ? "calibrated" : "datasheet");
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        double p = hw->peak_flops[dt];
        if (!(p > 0)) continue;
        /* TF32 and int4 usually repeat another dtype's peak: one ceiling is enough */
        bool dup = false;
        for (int i = 0; i < out->n_ceil; i++)
            if (out->ceil[i].kind == FFN_ROOF_COMPUTE && out->ceil[i].value == p) {
                size_t l = strlen(out->ceil[i].name);
                snprintf(out->ceil[i].name + l, sizeof out->ceil[i].name - l, "/%s",
                         ffn_dtype_name((ffn_dtype)dt));
                dup = true;
            }
        if (!dup) ffn_plot_device_add(out, ffn_dtype_name((ffn_dtype)dt), FFN_ROOF_COMPUTE, p);
    }
    ffn_roof_kind bw_kind = measured ? FFN_ROOF_READ_ONLY : FFN_ROOF_DATASHEET;
    for (int i = 0; i < hw->n_levels; i++)
        if (hw->levels[i].bandwidth_bps > 0)
            ffn_plot_device_add(out, hw->levels[i].name, bw_kind, hw->levels[i].bandwidth_bps);
    const char *mem = hw->kind == FFN_HW_CPU ? "DRAM" : "HBM";
    ffn_plot_device_add(out, measured ? "memory" : mem, bw_kind, hw->mem_bandwidth_bps);
}

double ffn_plot_device_main_bw(const ffn_plot_device *d)
{
    /* the slowest read-only or datasheet roof: the bandwidth a hw spec (and so the simulator)
     * uses; read-write roofs only when there is nothing else */
    double b = 0, rw = 0;
    for (int i = 0; i < d->n_ceil; i++) {
        const ffn_plot_ceiling *c = &d->ceil[i];
        if (c->kind == FFN_ROOF_READ_WRITE) {
            if (rw == 0 || c->value < rw) rw = c->value;
        } else if (c->kind != FFN_ROOF_COMPUTE && (b == 0 || c->value < b)) {
            b = c->value;
        }
    }
    return b > 0 ? b : rw;
}

static double device_max(const ffn_plot_device *d, bool bw)
{
    double m = 0;
    for (int i = 0; i < d->n_ceil; i++)
        if ((d->ceil[i].kind != FFN_ROOF_COMPUTE) == bw && d->ceil[i].value > m)
            m = d->ceil[i].value;
    return m;
}

static double device_min_peak(const ffn_plot_device *d)
{
    double m = 0;
    for (int i = 0; i < d->n_ceil; i++)
        if (d->ceil[i].kind == FFN_ROOF_COMPUTE && (m == 0 || d->ceil[i].value < m))
            m = d->ceil[i].value;
    return m;
}

void ffn_plot_point_from_result(const ffn_result *r, int device, ffn_plot_point *out)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    snprintf(out->label, sizeof out->label, "%s T=%llu %s", ffn_phase_name(r->run.phase),
             (unsigned long long)r->tokens, ffn_dtype_name(r->compute_dtype));
    out->intensity = r->intensity;
    out->measured_flops = NAN;
    out->predicted_flops = r->predicted_s > 0 ? r->flops / r->predicted_s : NAN;
}

double ffn_plot_layer_latency_s(const ffn_model *m, const ffn_result *r)
{
    double div = (double)m->layers * (double)(r->steps ? r->steps : 1);
    return div > 0 ? r->predicted_s / div : NAN;
}

void ffn_plot_moe_bar_from_result(const ffn_result *r, const char *label, ffn_moe_bar *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", label);
    const ffn_moe_detail *d = &r->moe_detail;
    out->router_s = d->router_s;
    out->dispatch_s = d->dispatch_s;
    out->expert_s = d->expert_s;
    out->shared_s = d->shared_s;
    out->combine_s = d->combine_s;
    out->alltoall_s = d->alltoall_s;
}

/* ---- reading the profiler's files ------------------------------------------------------- */

/* "ffnroof.bench/1": the same name and a major version this reader knows. */
static int check_schema(ffn_ydoc *y, yaml_node_t *root, const char *expected, const char *what)
{
    if (ffn_y_expect_map(y, root, "the file")) return FFN_ESCHEMA;
    yaml_node_t *kn = NULL;
    yaml_node_t *v = ffn_y_get(y, root, "schema", &kn);
    const char *t = ffn_y_text(v);
    if (!t)
        return ffn_y_error(y, root, FFN_ESCHEMA, "no 'schema' key: not an ffnroof %s file", what);
    const char *slash = strrchr(expected, '/');
    size_t name_len = (size_t)(slash - expected);
    const char *ts = strrchr(t, '/');
    if (!ts || (size_t)(ts - t) != name_len || strncmp(t, expected, name_len) != 0)
        return ffn_y_error(y, v, FFN_ESCHEMA, "schema '%s' is not %s %s (expected %s)", t,
                           strchr("aeiou", what[0]) ? "an" : "a", what, expected);
    char *end;
    long have = strtol(ts + 1, &end, 10), want = strtol(slash + 1, NULL, 10);
    if (*end || end == ts + 1 || have < 1)
        return ffn_y_error(y, v, FFN_ESCHEMA, "schema '%s': bad version", t);
    if (have > want)
        return ffn_y_error(y, v, FFN_ESCHEMA,
                           "schema '%s' is from a newer ffnroof; this one reads %s", t, expected);
    return 0;
}

/* Items of a sequence node (NULL-safe): *n gets the count. */
static yaml_node_item_t *seq_items(ffn_ydoc *y, yaml_node_t *s, size_t *n)
{
    *n = 0;
    (void)y;
    if (!s || s->type != YAML_SEQUENCE_NODE) return NULL;
    *n = (size_t)(s->data.sequence.items.top - s->data.sequence.items.start);
    return s->data.sequence.items.start;
}

static yaml_node_t *item(ffn_ydoc *y, yaml_node_item_t *it, size_t i)
{
    return yaml_document_get_node(&y->doc, it[i]);
}

/* Text of key (truncated to fit), "" when absent or null. */
static void get_text(ffn_ydoc *y, yaml_node_t *map, const char *key, char *buf, size_t n)
{
    const char *t = ffn_y_text(ffn_y_get(y, map, key, NULL));
    snprintf(buf, n, "%s", t ? t : "");
}

/* A number or NAN when absent/null; FFN_ESCHEMA for text that is not a number. */
static int get_num(ffn_ydoc *y, yaml_node_t *map, const char *key, double *out)
{
    *out = NAN;
    return ffn_y_num(y, map, key, false, FFN_UNIT_NONE, -INFINITY, INFINITY, out);
}

static int get_u64(ffn_ydoc *y, yaml_node_t *map, const char *key, uint64_t *out)
{
    *out = 0;
    return ffn_y_u64(y, map, key, false, 0, UINT64_MAX, out);
}

int ffn_plot_load_calibration(const char *path, ffn_plot_device *out, char *date, size_t date_n,
                              ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (date && date_n) date[0] = '\0';
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (rc) goto done;
    yaml_node_t *root = ffn_ydoc_root(&y);
    if ((rc = check_schema(&y, root, FFN_PLOT_CALIBRATION_SCHEMA, "calibration"))) goto done;
    if (date) get_text(&y, root, "date", date, date_n);
    uint64_t all = 0;
    if ((rc = get_u64(&y, root, "threads", &all))) goto done;
    yaml_node_t *host = ffn_y_get(&y, root, "host", NULL);
    if (host && host->type == YAML_MAPPING_NODE) get_text(&y, host, "name", out->name, sizeof out->name);
    if (!out->name[0]) snprintf(out->name, sizeof out->name, "calibrated host");
    snprintf(out->origin, sizeof out->origin, "calibration.json");

    /* compute: every peak kind measured on all threads */
    size_t n;
    yaml_node_item_t *it = seq_items(&y, ffn_y_get(&y, root, "peaks", NULL), &n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *p = item(&y, it, i);
        if (!p || p->type != YAML_MAPPING_NODE) continue;
        char kind[32];
        uint64_t th = 0;
        double f;
        get_text(&y, p, "kind", kind, sizeof kind);
        if ((rc = get_u64(&y, p, "threads", &th)) || (rc = get_num(&y, p, "flops_per_s", &f)))
            goto done;
        if (th != all || !(f > 0) || !kind[0]) continue;
        for (char *c = kind; *c; c++)
            if (*c == '_') *c = ' ';
        ffn_plot_device_add(out, kind, FFN_ROOF_COMPUTE, f);
    }
    /* bandwidth: the all-threads plateaus of the read-only and a read-write curve */
    yaml_node_t *bw = ffn_y_get(&y, root, "bandwidth", NULL);
    int n_ro = 0; /* read-only plateaus found */
    if (bw && bw->type == YAML_MAPPING_NODE) {
        it = seq_items(&y, ffn_y_get(&y, bw, "levels", NULL), &n);
        const char *rw_kernel = "triad";
        for (int pass = 0; pass < 3; pass++) {
            /* pass 0: read-only; 1: triad; 2: copy when triad had no plateau */
            int found = 0;
            const char *want = pass == 0 ? "read" : pass == 1 ? "triad" : "copy";
            if (pass == 2 && strcmp(rw_kernel, "copy") != 0) break;
            for (size_t i = 0; i < n; i++) {
                yaml_node_t *l = item(&y, it, i);
                if (!l || l->type != YAML_MAPPING_NODE) continue;
                char kernel[16], name[16];
                uint64_t th = 0;
                double b;
                get_text(&y, l, "kernel", kernel, sizeof kernel);
                get_text(&y, l, "name", name, sizeof name);
                if ((rc = get_u64(&y, l, "threads", &th)) ||
                    (rc = get_num(&y, l, "bandwidth_bps", &b)))
                    goto done;
                if (strcmp(kernel, want) != 0 || th != all || !(b > 0)) continue;
                if (ffn_plot_device_add(out, name, pass ? FFN_ROOF_READ_WRITE : FFN_ROOF_READ_ONLY,
                                        b) == 0)
                    found++;
            }
            if (pass == 0) n_ro = found;
            if (pass == 1 && !found) rw_kernel = "copy";
        }
        /* the read-only tail rate is what calibrate puts in hw.yaml as main memory (measure.h):
         * drawn too when no plateau was found or when it differs from the last plateau, so
         * that the ridge points agree with the spec the simulator uses */
        yaml_node_t *tail = ffn_y_get(&y, bw, "tail_read_bps", NULL);
        double t1 = NAN, ta = NAN;
        if (tail && tail->type == YAML_MAPPING_NODE) {
            if ((rc = get_num(&y, tail, "all_threads", &ta)) ||
                (rc = get_num(&y, tail, "one_thread", &t1)))
                goto done;
        }
        double t = ta > 0 ? ta : t1;
        if (t1 > t) t = t1;
        double last = 0;
        for (int i = 0; i < out->n_ceil; i++)
            if (out->ceil[i].kind == FFN_ROOF_READ_ONLY) last = out->ceil[i].value;
        if (t > 0 && (!n_ro || fabs(t / last - 1) > 0.05))
            ffn_plot_device_add(out, n_ro ? "memory (spec)" : "memory", FFN_ROOF_READ_ONLY, t);
    }
    if (device_max(out, false) == 0.0)
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no all-threads compute peak in the calibration");
    else if (device_max(out, true) == 0.0)
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no bandwidth level in the calibration");
done:
    ffn_ydoc_release(&y);
    return rc;
}

static int parse_case(ffn_ydoc *y, yaml_node_t *c, ffn_plot_case *o)
{
    memset(o, 0, sizeof *o);
    int rc;
    uint64_t id = 0, th = 0;
    char phase[16];
    get_text(y, c, "kind", o->kind, sizeof o->kind);
    get_text(y, c, "phase", phase, sizeof phase);
    get_text(y, c, "act", o->act, sizeof o->act);
    get_text(y, c, "dtype", o->dtype, sizeof o->dtype);
    get_text(y, c, "isa", o->isa, sizeof o->isa);
    if (!strcmp(phase, "prefill")) o->phase = FFN_PHASE_PREFILL;
    else if (!strcmp(phase, "decode")) o->phase = FFN_PHASE_DECODE;
    else return ffn_y_error(y, c, FFN_ESCHEMA, "case without a phase (prefill or decode)");
    if ((rc = get_u64(y, c, "id", &id)) || (rc = get_u64(y, c, "batch", &o->batch)) ||
        (rc = get_u64(y, c, "tokens", &o->tokens)) || (rc = get_u64(y, c, "d", &o->d)) ||
        (rc = get_u64(y, c, "f", &o->f)) || (rc = get_u64(y, c, "experts", &o->experts)) ||
        (rc = get_u64(y, c, "top_k", &o->top_k)) || (rc = get_u64(y, c, "threads", &th)))
        return rc;
    o->id = (int)id;
    o->threads = (int)th;
    yaml_node_t *t = ffn_y_get(y, c, "time_s", NULL);
    o->median_s = o->min_s = o->p90_s = NAN;
    if (t && t->type == YAML_MAPPING_NODE) {
        if ((rc = get_num(y, t, "median", &o->median_s)) || (rc = get_num(y, t, "min", &o->min_s)) ||
            (rc = get_num(y, t, "p90", &o->p90_s)))
            return rc;
    }
    if (!(o->median_s > 0))
        return ffn_y_error(y, c, FFN_ESCHEMA, "case %d has no positive time_s.median", o->id);
    if ((rc = get_num(y, c, "flops", &o->flops)) || (rc = get_num(y, c, "bytes", &o->bytes)) ||
        (rc = get_num(y, c, "intensity", &o->intensity)) ||
        (rc = get_num(y, c, "achieved_flops", &o->achieved_flops)) ||
        (rc = get_num(y, c, "roofline_s", &o->roofline_s)) ||
        (rc = get_num(y, c, "predicted_s", &o->predicted_s)) ||
        (rc = get_num(y, c, "prediction_error", &o->prediction_error)) ||
        (rc = get_num(y, c, "efficiency", &o->efficiency)))
        return rc;
    /* derive what the file leaves null but its definition fixes (docs/formats-bench.md) */
    /* the cache-aware roofline's bytes per level, where the file has them */
    get_text(y, c, "level_bytes_source", o->level_bytes_source, sizeof o->level_bytes_source);
    size_t nl = 0;
    yaml_node_t *lb = ffn_y_get(y, c, "level_bytes", NULL);
    yaml_node_item_t *li = lb && lb->type == YAML_SEQUENCE_NODE ? seq_items(y, lb, &nl) : NULL;
    for (size_t i = 0; li && i < nl && o->n_levels <= FFN_HW_MAX_LEVELS; i++) {
        yaml_node_t *e = item(y, li, i);
        if (!e || e->type != YAML_MAPPING_NODE) continue;
        double v = NAN;
        if ((rc = get_num(y, e, "bytes", &v))) return rc;
        get_text(y, e, "level", o->level_names[o->n_levels], sizeof o->level_names[0]);
        o->level_bytes[o->n_levels++] = v;
    }
    if (isnan(o->intensity) && o->bytes > 0) o->intensity = o->flops / o->bytes;
    if (isnan(o->achieved_flops) && o->flops > 0) o->achieved_flops = o->flops / o->median_s;
    if (!(o->flops > 0) || !(o->bytes > 0))
        return ffn_y_error(y, c, FFN_ESCHEMA, "case %d has no positive flops and bytes", o->id);
    return 0;
}

int ffn_plot_load_bench(const char *path, ffn_plot_bench *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (rc) goto done;
    yaml_node_t *root = ffn_ydoc_root(&y);
    if ((rc = check_schema(&y, root, FFN_PLOT_BENCH_SCHEMA, "bench result"))) goto done;
    get_text(&y, root, "date", out->date, sizeof out->date);
    out->complete = true;
    if (ffn_y_get(&y, root, "complete", NULL) &&
        (rc = ffn_y_bool(&y, root, "complete", false, &out->complete)))
        goto done;
    yaml_node_t *host = ffn_y_get(&y, root, "host", NULL);
    if (host && host->type == YAML_MAPPING_NODE) {
        get_text(&y, host, "name", out->host, sizeof out->host);
        get_text(&y, host, "cpu_model", out->cpu_model, sizeof out->cpu_model);
    }
    yaml_node_t *ca = ffn_y_get(&y, root, "counters_available", NULL);
    if (ca && ca->type == YAML_MAPPING_NODE)
        get_text(&y, ca, "source", out->counters_source, sizeof out->counters_source);

    /* the spec as a roofline */
    yaml_node_t *spec = ffn_y_get(&y, root, "spec", NULL);
    if (!spec || spec->type != YAML_MAPPING_NODE) {
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no 'spec' object");
        goto done;
    }
    ffn_plot_device *d = &out->spec;
    get_text(&y, spec, "name", d->name, sizeof d->name);
    if (!d->name[0]) snprintf(d->name, sizeof d->name, "%.63s", out->host[0] ? out->host : "host");
    get_text(&y, spec, "source", out->spec_source, sizeof out->spec_source);
    bool measured = starts_with(out->spec_source, "measured by ffnroof calibrate");
    snprintf(d->origin, sizeof d->origin, "bench spec");
    yaml_node_t *pk = ffn_y_get(&y, spec, "peak_flops", NULL);
    if (pk && pk->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = pk->data.mapping.pairs.start; p < pk->data.mapping.pairs.top;
             p++) {
            const char *k = ffn_y_text(yaml_document_get_node(&y.doc, p->key));
            double v = NAN;
            if (!k) continue;
            if ((rc = get_num(&y, pk, k, &v))) goto done;
            if (v > 0) ffn_plot_device_add(d, k, FFN_ROOF_COMPUTE, v);
        }
    }
    double bwv;
    if ((rc = get_num(&y, spec, "mem_bandwidth_bps", &bwv))) goto done;
    if (bwv > 0)
        ffn_plot_device_add(d, measured ? "memory" : "DRAM",
                            measured ? FFN_ROOF_READ_ONLY : FFN_ROOF_DATASHEET, bwv);
    /* on-chip levels with a bandwidth: the cache-aware roofline's other roofs */
    size_t nlev = 0;
    yaml_node_t *oc = ffn_y_get(&y, spec, "onchip", NULL);
    yaml_node_item_t *oi = oc && oc->type == YAML_SEQUENCE_NODE ? seq_items(&y, oc, &nlev) : NULL;
    for (size_t i = 0; oi && i < nlev; i++) {
        yaml_node_t *e = item(&y, oi, i);
        if (!e || e->type != YAML_MAPPING_NODE) continue;
        char ln[24];
        double lbw = NAN;
        get_text(&y, e, "name", ln, sizeof ln);
        if ((rc = get_num(&y, e, "bandwidth_bps", &lbw))) goto done;
        if (lbw > 0 && ln[0]) ffn_plot_device_add(d, ln, FFN_ROOF_DATASHEET, lbw);
    }

    size_t n;
    yaml_node_t *cases = ffn_y_get(&y, root, "cases", NULL);
    if ((rc = ffn_y_expect_seq(&y, cases ? cases : root, "'cases'"))) goto done;
    yaml_node_item_t *it = seq_items(&y, cases, &n);
    if (n == 0) {
        rc = ffn_y_error(&y, cases, FFN_ESCHEMA, "no cases: nothing was measured");
        goto done;
    }
    if (n > FFN_PLOT_MAX_CASES) {
        rc = ffn_y_error(&y, cases, FFN_ENOSPACE, "%zu cases; at most %d can be read", n,
                         FFN_PLOT_MAX_CASES);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *c = item(&y, it, i);
        if ((rc = ffn_y_expect_map(&y, c, "a case"))) goto done;
        if ((rc = parse_case(&y, c, &out->cases[i]))) goto done;
        out->n_cases++;
    }
done:
    ffn_ydoc_release(&y);
    return rc;
}

void ffn_plot_case_label(const ffn_plot_case *c, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s T=%llu %s", strcmp(c->kind, "moe") ? "" : "moe ",
             ffn_phase_name(c->phase), (unsigned long long)c->tokens, c->dtype);
}

/* ---- writing ---------------------------------------------------------------------------- */

void ffn_plot_log_range(double lo, double hi, double *min_out, double *max_out)
{
    if (!(lo > 0) || !isfinite(lo)) lo = 1;
    if (!(hi > lo) || !isfinite(hi)) hi = lo * 10;
    /* a hair inside so that values exactly on a decade stay on it */
    *min_out = pow(10, floor(log10(lo) + 1e-9));
    *max_out = pow(10, ceil(log10(hi) - 1e-9));
    if (*max_out <= *min_out) *max_out = *min_out * 10;
}

/* Text safe inside a gnuplot double-quoted string (titles, data-file labels). */
static void clean(char *dst, size_t n, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < n; i++) {
        char ch = src[i];
        if (ch == '"') ch = '\'';
        else if (ch == '\\') ch = '/';
        else if ((unsigned char)ch < 0x20) ch = ' ';
        dst[j++] = ch;
    }
    dst[j] = '\0';
}

static const char *fmt_unit(char *buf, size_t n, double v, ffn_unit u)
{
    ffn_units_format(v, u, buf, n);
    return buf;
}

/* Write template with the @KEY@ fields replaced; unknown @...@ text is left alone. */
static int substitute(FILE *out, const char *tmpl, const char *const *keys,
                      const char *const *vals, size_t n_keys)
{
    for (const char *p = tmpl; *p;) {
        if (*p == '@') {
            bool done = false;
            for (size_t k = 0; k < n_keys && !done; k++) {
                size_t l = strlen(keys[k]);
                if (!strncmp(p + 1, keys[k], l) && p[1 + l] == '@') {
                    fputs(vals[k], out);
                    p += l + 2;
                    done = true;
                }
            }
            if (done) continue;
        }
        fputc(*p++, out);
    }
    return ferror(out) ? FFN_EIO : 0;
}

/* Growing text buffer for the generated @SETUP@ and @PLOT@ parts (open_memstream). */
typedef struct membuf {
    char *text;
    size_t len;
    FILE *fp;
} membuf;

static int mb_open(membuf *m)
{
    m->text = NULL;
    m->len = 0;
    m->fp = open_memstream(&m->text, &m->len);
    return m->fp ? 0 : FFN_ENOMEM;
}

static const char *mb_close(membuf *m)
{
    if (m->fp) fclose(m->fp);
    m->fp = NULL;
    return m->text ? m->text : "";
}

static void mb_free(membuf *m)
{
    if (m->fp) fclose(m->fp);
    free(m->text);
    m->text = NULL;
}

/* A plot command built clause by clause: "plot A, \\\n     B". */
typedef struct plotcmd {
    membuf mb;
    int n;
} plotcmd;

static void clause(plotcmd *pc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void clause(plotcmd *pc, const char *fmt, ...)
{
    fputs(pc->n++ ? ", \\\n     " : "plot ", pc->mb.fp);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(pc->mb.fp, fmt, ap);
    va_end(ap);
}

typedef struct ffn_plot_script_parts {
    const char *title, *xrange, *yrange, *xlabel, *setup, *plot;
} script_parts;

static int write_script(FILE *script, const char *tmpl, const ffn_plot_files *f,
                        const script_parts *sp)
{
    char w[16], h[16];
    snprintf(w, sizeof w, "%d", f->width > 0 ? f->width : 1200);
    snprintf(h, sizeof h, "%d", f->height > 0 ? f->height : 800);
    const char *keys[] = {"TITLE", "DATA", "PNG",   "SVG",    "PNGTERM", "WIDTH",
                          "HEIGHT", "XRANGE", "YRANGE", "XLABEL", "SETUP",  "PLOT"};
    const char *vals[] = {sp->title, f->data, f->png, f->svg, f->png_term ? f->png_term : "pngcairo",
                          w, h, sp->xrange ? sp->xrange : "[*:*]", sp->yrange ? sp->yrange : "[*:*]",
                          sp->xlabel ? sp->xlabel : "", sp->setup ? sp->setup : "", sp->plot};
    return substitute(script, tmpl, keys, vals, sizeof keys / sizeof keys[0]);
}

static int finish(FILE *data, FILE *script, ffn_diag *diag, int rc)
{
    if (!rc && (ferror(data) || ferror(script)))
        rc = ffn_diag_set(diag, FFN_EIO, NULL, 0, 0, "cannot write the chart's data or script");
    return rc;
}

int ffn_plot_roofline_write(const ffn_roofline_chart *c, const char *template_text,
                            const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    int n_ceil = 0;
    for (int d = 0; d < c->n_dev; d++) n_ceil += c->dev[d].n_ceil;
    if (c->n_dev <= 0 || n_ceil == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no device ceilings");

    /* axis ranges: every ridge with room on both sides, every point */
    double lo = INFINITY, hi = 0, ylo = INFINITY, yhi = 0;
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        double pmax = device_max(dv, false), pmin = device_min_peak(dv);
        double btop = device_max(dv, true), bmain = ffn_plot_device_main_bw(dv);
        if (pmax > 0 && btop > 0) {
            lo = fmin(lo, pmin / btop / 30);
            hi = fmax(hi, pmax / bmain * 4);
        }
        if (pmax > 0) yhi = fmax(yhi, pmax * 2.5);
        if (btop > 0) yhi = fmax(yhi, btop * 2.5);
    }
    for (size_t i = 0; i < c->n_pts; i++) {
        const ffn_plot_point *p = &c->pts[i];
        if (!(p->intensity > 0)) continue;
        lo = fmin(lo, p->intensity / 3);
        hi = fmax(hi, p->intensity * 3);
        if (p->measured_flops > 0) ylo = fmin(ylo, p->measured_flops / 3);
        if (p->predicted_flops > 0) ylo = fmin(ylo, p->predicted_flops / 3);
    }
    if (!isfinite(lo)) lo = 0.1, hi = 1000;
    double xmin, xmax, ymin, ymax, dummy;
    ffn_plot_log_range(lo, hi, &xmin, &xmax);
    for (int d = 0; d < c->n_dev; d++) {
        double bmain = ffn_plot_device_main_bw(&c->dev[d]);
        double pmin = device_min_peak(&c->dev[d]);
        /* the slowest roof should enter the chart, but not drag it down by many decades */
        if (bmain > 0) ylo = fmin(ylo, fmax(bmain * xmin, pmin / 1e4));
        else if (pmin > 0) ylo = fmin(ylo, pmin / 10);
    }
    ffn_plot_log_range(ylo, yhi, &ymin, &dummy);
    ffn_plot_log_range(ylo, yhi, &dummy, &ymax);

    membuf setup;
    plotcmd pc = {.n = 0};
    int rc = mb_open(&setup);
    if (!rc) rc = mb_open(&pc.mb);
    if (rc) {
        mb_free(&setup);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "out of memory");
    }

    char buf[32], lab[256], name[80];
    int idx = 0;
    bool multi = c->n_dev > 1;
    fprintf(data, "# ffnroof roofline data: x = arithmetic intensity (FLOP/byte), "
                  "y = performance (FLOP/s)\n# chart: %s\n# axes: x [%g:%g], y [%g:%g]\n",
            c->title, xmin, xmax, ymin, ymax);
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        int lt = d + 1;
        clean(name, sizeof name, dv->name);
        fprintf(data, "\n# ==== device %d: %s (%s)\n", d + 1, name, dv->origin);
        double pmax = device_max(dv, false), btop = device_max(dv, true);
        double bmain = ffn_plot_device_main_bw(dv);

        /* compute ceilings: y = peak from where the fastest bandwidth roof meets it */
        bool any = false;
        for (int i = 0; i < dv->n_ceil; i++) {
            const ffn_plot_ceiling *e = &dv->ceil[i];
            if (e->kind != FFN_ROOF_COMPUTE) continue;
            if (!any) fprintf(data, "\n\n# [%d] compute ceilings (x1 y, x2 y per line)\n", idx);
            any = true;
            double x0 = btop > 0 ? e->value / btop : xmin;
            fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", x0, e->value, xmax, e->value);
        }
        if (any) {
            clause(&pc, "datafile index %d with lines lt %d lw 2.5 dt 1 title \"%s compute\"",
                   idx, lt, name);
            idx++;
        }
        /* bandwidth ceilings by kind: y = bw * x up to the highest compute roof */
        static const ffn_roof_kind kinds[] = {FFN_ROOF_READ_ONLY, FFN_ROOF_READ_WRITE,
                                              FFN_ROOF_DATASHEET};
        static const char *const dts[] = {"1", "2", "1"}; /* read-write dashed */
        for (size_t k = 0; k < 3; k++) {
            any = false;
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind != kinds[k]) continue;
                if (!any)
                    fprintf(data, "\n\n# [%d] %s bandwidth ceilings (x y per end)\n", idx,
                            ffn_roof_kind_name(kinds[k]));
                any = true;
                double x1 = pmax > 0 ? pmax / e->value : xmax;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", xmin, e->value * xmin, x1,
                        e->value * x1);
            }
            if (any) {
                clause(&pc, "datafile index %d with lines lt %d lw 2 dt %s title \"%s bandwidth, %s\"",
                       idx, lt, dts[k], name, ffn_roof_kind_name(kinds[k]));
                idx++;
            }
        }
        /* labels: compute at the right end above the line, bandwidth along the diagonal */
        int n_compute = 0, n_bw = 0;
        for (int i = 0; i < dv->n_ceil; i++) {
            if (dv->ceil[i].kind == FFN_ROOF_COMPUTE) n_compute++;
            else n_bw++;
        }
        if (n_compute) {
            fprintf(data, "\n\n# [%d] compute ceiling labels (x y \"text\")\n", idx);
            /* from the highest ceiling down; a label that would sit on its upper neighbour's
             * goes below its own line, and further left when that is taken too */
            int order[FFN_PLOT_MAX_CEILINGS], no = 0;
            for (int i = 0; i < dv->n_ceil; i++)
                if (dv->ceil[i].kind == FFN_ROOF_COMPUTE) order[no++] = i;
            for (int a = 1; a < no; a++)
                for (int b2 = a; b2 > 0 && dv->ceil[order[b2]].value > dv->ceil[order[b2 - 1]].value;
                     b2--) {
                    int t = order[b2];
                    order[b2] = order[b2 - 1];
                    order[b2 - 1] = t;
                }
            double last_y = INFINITY;
            int last_side = 0;
            for (int oi = 0; oi < no; oi++) {
                const ffn_plot_ceiling *e = &dv->ceil[order[oi]];
                double y = e->value * 1.15, x = xmax / 1.25;
                int side = 0;
                if (last_y / y < 1.45) {
                    y = e->value / 1.2;
                    side = 1;
                    if (last_side == 1 || last_y / y < 1.45) x = xmax / 40;
                }
                last_y = y;
                last_side = side;
                char cn[40];
                clean(cn, sizeof cn, e->name);
                char ridge[48] = "";
                if (bmain > 0) /* the ridge against main memory, said once, on its ceiling */
                    snprintf(ridge, sizeof ridge, ", ridge %.3g FLOP/B", e->value / bmain);
                /* no device prefix: the colour and the legend say whose roof it is, and the
                 * right end of the chart has little room */
                snprintf(lab, sizeof lab, "%s %s%s", cn,
                         fmt_unit(buf, sizeof buf, e->value, FFN_UNIT_FLOPS), ridge);
                fprintf(data, "%.6g %.6g \"%s\"\n", x, y, lab);
            }
            clause(&pc, "datafile index %d using 1:2:3 with labels right font \",9\" tc lt %d "
                        "notitle",
                   idx, lt);
            idx++;
        }
        if (n_bw) {
            fprintf(data, "\n\n# [%d] bandwidth ceiling labels (x y \"text\")\n", idx);
            int nbw = 0;
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind == FFN_ROOF_COMPUTE) continue;
                char cn[40];
                clean(cn, sizeof cn, e->name);
                snprintf(lab, sizeof lab, "%.63s%s%s %s, %s", multi ? name : "", multi ? ": " : "",
                         cn, fmt_unit(buf, sizeof buf, e->value, FFN_UNIT_BPS),
                         ffn_roof_kind_name(e->kind));
                /* stagger along the diagonal so that neighbouring roofs do not share a spot */
                double x = xmin * 1.6 * pow(3, nbw++);
                if (pmax > 0 && x > pmax / e->value / 4) x = xmin * 1.6;
                fprintf(data, "%.6g %.6g \"%s\"\n", x, e->value * x * 1.5, lab);
            }
            clause(&pc, "datafile index %d using 1:2:3 with labels left font \",9\" tc lt %d "
                        "notitle",
                   idx, lt);
            idx++;
        }
        /* ridge points: each compute roof against the slowest (main memory) roof */
        if (bmain > 0 && pmax > 0) {
            fprintf(data, "\n\n# [%d] ridge points against %s (x = peak / bandwidth, y = peak)\n",
                    idx, fmt_unit(buf, sizeof buf, bmain, FFN_UNIT_BPS));
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind != FFN_ROOF_COMPUTE) continue;
                fprintf(data, "%.6g %.6g\n", e->value / bmain, e->value);
            }
            clause(&pc, "datafile index %d using 1:2 with points lt %d pt 12 ps 2 title \"%s ridge "
                        "points\"",
                   idx, lt, name);
            idx++;
        }
        /* kernel points of this device */
        size_t nm = 0, np = 0, npair = 0;
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *p = &c->pts[i];
            if (p->device != d || !(p->intensity > 0)) continue;
            nm += p->measured_flops > 0;
            np += p->predicted_flops > 0;
            npair += p->measured_flops > 0 && p->predicted_flops > 0;
        }
        if (nm) {
            fprintf(data, "\n\n# [%d] measured points (intensity FLOP/B, FLOP/s, \"label\")\n", idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->measured_flops > 0)) continue;
                clean(lab, sizeof lab, p->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", p->intensity, p->measured_flops, lab);
            }
            clause(&pc, "datafile index %d using 1:2 with points lt %d pt 7 ps 1.2 title \"%s "
                        "measured\"",
                   idx, lt, name);
            clause(&pc, "datafile index %d using 1:2:3 with labels left offset 0.8,0.3 "
                        "font \",8\" tc lt %d notitle",
                   idx, lt);
            idx++;
        }
        if (np) {
            fprintf(data, "\n\n# [%d] predicted points (intensity FLOP/B, FLOP/s, \"label\")\n",
                    idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->predicted_flops > 0)) continue;
                clean(lab, sizeof lab, p->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", p->intensity, p->predicted_flops, lab);
            }
            clause(&pc, "datafile index %d using 1:2 with points lt %d pt 6 ps 1.4 title \"%s "
                        "predicted\"",
                   idx, lt, name);
            if (!nm) /* predictions alone: label them (otherwise the measured label says it) */
                clause(&pc, "datafile index %d using 1:2:3 with labels left offset 0.8,0.3 "
                            "font \",8\" tc lt %d notitle",
                       idx, lt);
            idx++;
        }
        if (npair) {
            fprintf(data, "\n\n# [%d] measured -> predicted (one pair per line)\n", idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->measured_flops > 0) ||
                    !(p->predicted_flops > 0))
                    continue;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", p->intensity, p->measured_flops,
                        p->intensity, p->predicted_flops);
            }
            clause(&pc, "datafile index %d with lines lt %d lw 0.8 dt 3 notitle", idx, lt);
            idx++;
        }
    }
    fputc('\n', pc.mb.fp);
    char xr[64], yr[64], title[300];
    snprintf(xr, sizeof xr, "[%g:%g]", xmin, xmax);
    snprintf(yr, sizeof yr, "[%g:%g]", ymin, ymax);
    clean(title, sizeof title, c->title);
    script_parts sp = {.title = title, .xrange = xr, .yrange = yr, .setup = mb_close(&setup),
                       .plot = mb_close(&pc.mb)};
    rc = write_script(script, template_text, f, &sp);
    mb_free(&setup);
    mb_free(&pc.mb);
    return finish(data, script, diag, rc);
}

int ffn_plot_latency_write(const ffn_latency_chart *c, const char *template_text,
                           const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    int used = 0;
    for (int s = 0; s < c->n_series; s++)
        for (int i = 0; i < c->s[s].n; i++) {
            double x = c->s[s].tokens[i], y = c->s[s].seconds[i];
            if (!(x > 0) || !(y > 0) || !isfinite(y)) continue;
            used++;
            xlo = fmin(xlo, x), xhi = fmax(xhi, x), ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        }
    if (!used)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no latency points");
    for (int d = 0; d < c->n_dev; d++)
        if (c->ridge_tokens[d] > 0 && isfinite(c->ridge_tokens[d]))
            xlo = fmin(xlo, c->ridge_tokens[d]), xhi = fmax(xhi, c->ridge_tokens[d]);
    double xmin, xmax, ymin, ymax;
    ffn_plot_log_range(xlo / 1.5, xhi * 1.5, &xmin, &xmax);
    ffn_plot_log_range(ylo / 1.5, yhi * 1.5, &ymin, &ymax);

    membuf setup;
    plotcmd pc = {.n = 0};
    int rc = mb_open(&setup);
    if (!rc) rc = mb_open(&pc.mb);
    if (rc) {
        mb_free(&setup);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "out of memory");
    }
    fprintf(data, "# ffnroof FFN latency data: x = tokens per step, y = FFN time per layer (s)\n"
                  "# chart: %s\n# axes: x [%g:%g], y [%g:%g]\n",
            c->title, xmin, xmax, ymin, ymax);
    int idx = 0;
    char lab[160];
    for (int s = 0; s < c->n_series; s++) {
        const ffn_latency_series *se = &c->s[s];
        if (se->n <= 0) continue;
        clean(lab, sizeof lab, se->label);
        fprintf(data, "\n\n# [%d] %s: %s %s (tokens, seconds per layer)\n", idx, lab,
                ffn_phase_name(se->phase), se->measured ? "measured" : "predicted");
        for (int i = 0; i < se->n; i++)
            fprintf(data, "%.6g %.6g\n", se->tokens[i], se->seconds[i]);
        int lt = se->device + 1;
        bool decode = se->phase == FFN_PHASE_DECODE;
        if (se->measured)
            clause(&pc, "datafile index %d with points lt %d pt %d ps 1.4 title \"%s\"", idx, lt,
                   decode ? 9 : 7, lab);
        else
            clause(&pc, "datafile index %d with linespoints lt %d dt %d pt %d ps 0.9 title \"%s\"",
                   idx, lt, decode ? 2 : 1, decode ? 8 : 6, lab);
        idx++;
    }
    for (int d = 0; d < c->n_dev; d++) {
        double r = c->ridge_tokens[d];
        if (!(r > 0) || !isfinite(r)) continue;
        clean(lab, sizeof lab, c->device[d]);
        fprintf(data, "\n\n# [%d] %s: ridge point (tokens per step where the FFN turns "
                      "compute-bound)\n%.6g %.6g\n%.6g %.6g\n",
                idx, lab, r, ymin, r, ymax);
        clause(&pc, "datafile index %d with lines lt %d lw 1.2 dt 4 title \"%s ridge (%.0f tokens)\"",
               idx, d + 1, lab, r);
        idx++;
    }
    fputc('\n', pc.mb.fp);
    char xr[64], yr[64], title[300];
    snprintf(xr, sizeof xr, "[%g:%g]", xmin, xmax);
    snprintf(yr, sizeof yr, "[%g:%g]", ymin, ymax);
    clean(title, sizeof title, c->title);
    script_parts sp = {.title = title, .xrange = xr, .yrange = yr, .setup = mb_close(&setup),
                       .plot = mb_close(&pc.mb)};
    rc = write_script(script, template_text, f, &sp);
    mb_free(&setup);
    mb_free(&pc.mb);
    return finish(data, script, diag, rc);
}

int ffn_plot_moe_write(const ffn_moe_chart *c, const char *template_text, const ffn_plot_files *f,
                       FILE *data, FILE *script, ffn_diag *diag)
{
    if (c->n_bars <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no MoE bars");
    static const char *const parts[] = {"router", "dispatch", "experts",
                                        "shared", "combine",  "alltoall"};
    static const char *const titles[] = {"router",         "dispatch",
                                         "routed experts", "shared experts",
                                         "combine",        "all-to-all (EP)"};
    bool used[6] = {false};
    double top = 0;
    char lab[160];
    fprintf(data, "# ffnroof MoE data: seconds per MoE layer on the busiest device\n# chart: %s\n"
                  "# label router dispatch experts shared combine alltoall\n",
            c->title);
    fprintf(data, "\n\n# [0] one row per bar\n");
    for (int b = 0; b < c->n_bars; b++) {
        const ffn_moe_bar *x = &c->bars[b];
        double v[6] = {x->router_s, x->dispatch_s, x->expert_s, x->shared_s, x->combine_s,
                       x->alltoall_s};
        double sum = 0;
        for (int k = 0; k < 6; k++) {
            if (!(v[k] >= 0) || !isfinite(v[k])) v[k] = 0;
            used[k] |= v[k] > 0;
            sum += v[k];
        }
        top = fmax(top, sum);
        clean(lab, sizeof lab, x->label);
        fprintf(data, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g\n", lab, v[0], v[1], v[2], v[3], v[4],
                v[5]);
    }
    if (!(top > 0))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: every MoE time is 0");
    plotcmd pc = {.n = 0};
    int rc = mb_open(&pc.mb); /* in place: the stream keeps the addresses of text and len */
    if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "out of memory");
    bool first = true;
    for (int k = 0; k < 6; k++) {
        if (!used[k]) continue; /* a part that is zero everywhere would only crowd the legend */
        clause(&pc, "datafile index 0 using %d%s @%s_style title \"%s\"", k + 2,
               first ? ":xtic(1)" : "", parts[k], titles[k]);
        first = false;
    }
    fputc('\n', pc.mb.fp);
    char yr[64], title[300], xl[80];
    snprintf(yr, sizeof yr, "[0:%g]", top * 1.15);
    clean(title, sizeof title, c->title);
    clean(xl, sizeof xl, c->xlabel);
    script_parts sp = {.title = title, .yrange = yr, .xlabel = xl, .plot = mb_close(&pc.mb)};
    rc = write_script(script, template_text, f, &sp);
    mb_free(&pc.mb);
    return finish(data, script, diag, rc);
}
