/* Readers of the profiler's files for the charts and reports (include/ffnroof/profile_file.h,
 * docs/formats-bench.md): a calibration.json as its peaks and bandwidth levels, a bench JSON as
 * its spec and its cases. The rooflines they draw are made in report/plot_model.c. */
#include "ffnroof/profile_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ydoc.h"

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

/* Whether a peak or level counts on the roofline: on all threads, with a positive value. */
static bool usable(uint64_t threads, uint64_t all, double v)
{
    return threads == all && v > 0 && isfinite(v);
}

int ffn_profile_load_calibration(const char *path, ffn_calib_file *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->tail_all_threads_bps = out->tail_one_thread_bps = NAN;
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (rc) goto done;
    yaml_node_t *root = ffn_ydoc_root(&y);
    if ((rc = check_schema(&y, root, FFN_PLOT_CALIBRATION_SCHEMA, "calibration"))) goto done;
    get_text(&y, root, "date", out->date, sizeof out->date);
    if ((rc = get_u64(&y, root, "threads", &out->threads))) goto done;
    const uint64_t all = out->threads;
    yaml_node_t *host = ffn_y_get(&y, root, "host", NULL);
    if (host && host->type == YAML_MAPPING_NODE)
        get_text(&y, host, "name", out->host, sizeof out->host);

    /* compute: every peak kind, on any number of threads */
    bool any_peak = false, any_bw = false;
    size_t n;
    yaml_node_t *peaks = ffn_y_get(&y, root, "peaks", NULL);
    yaml_node_item_t *it = seq_items(&y, peaks, &n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *p = item(&y, it, i);
        if (!p || p->type != YAML_MAPPING_NODE) continue;
        ffn_calib_file_peak e;
        get_text(&y, p, "kind", e.kind, sizeof e.kind);
        if ((rc = get_u64(&y, p, "threads", &e.threads)) ||
            (rc = get_num(&y, p, "flops_per_s", &e.flops_per_s)))
            goto done;
        if (out->n_peaks >= FFN_CALIB_FILE_MAX) {
            rc = ffn_y_error(&y, peaks, FFN_ENOSPACE, "more than %d peaks", FFN_CALIB_FILE_MAX);
            goto done;
        }
        out->peaks[out->n_peaks++] = e;
        if (usable(e.threads, all, e.flops_per_s) && e.kind[0]) any_peak = true;
    }
    /* bandwidth: every kernel's plateaus, and the read-only tail rate */
    yaml_node_t *bw = ffn_y_get(&y, root, "bandwidth", NULL);
    if (bw && bw->type == YAML_MAPPING_NODE) {
        out->has_bandwidth = true;
        yaml_node_t *levels = ffn_y_get(&y, bw, "levels", NULL);
        it = seq_items(&y, levels, &n);
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *l = item(&y, it, i);
            if (!l || l->type != YAML_MAPPING_NODE) continue;
            ffn_calib_file_level e;
            get_text(&y, l, "kernel", e.kernel, sizeof e.kernel);
            get_text(&y, l, "name", e.name, sizeof e.name);
            if ((rc = get_u64(&y, l, "threads", &e.threads)) ||
                (rc = get_num(&y, l, "bandwidth_bps", &e.bandwidth_bps)))
                goto done;
            if (out->n_levels >= FFN_CALIB_FILE_MAX) {
                rc = ffn_y_error(&y, levels, FFN_ENOSPACE, "more than %d bandwidth levels",
                                 FFN_CALIB_FILE_MAX);
                goto done;
            }
            out->levels[out->n_levels++] = e;
            if (usable(e.threads, all, e.bandwidth_bps) &&
                (!strcmp(e.kernel, "read") || !strcmp(e.kernel, "triad") ||
                 !strcmp(e.kernel, "copy")))
                any_bw = true;
        }
        yaml_node_t *tail = ffn_y_get(&y, bw, "tail_read_bps", NULL);
        if (tail && tail->type == YAML_MAPPING_NODE) {
            if ((rc = get_num(&y, tail, "all_threads", &out->tail_all_threads_bps)) ||
                (rc = get_num(&y, tail, "one_thread", &out->tail_one_thread_bps)))
                goto done;
        }
        const double t1 = out->tail_one_thread_bps, ta = out->tail_all_threads_bps;
        if ((t1 > 0 && isfinite(t1)) || (ta > 0 && isfinite(ta))) any_bw = true;
    }
    if (!any_peak)
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no all-threads compute peak in the calibration");
    else if (!any_bw)
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
    if (!strcmp(phase, "prefill"))
        o->phase = FFN_PHASE_PREFILL;
    else if (!strcmp(phase, "decode"))
        o->phase = FFN_PHASE_DECODE;
    else
        return ffn_y_error(y, c, FFN_ESCHEMA, "case without a phase (prefill or decode)");
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
        if ((rc = get_num(y, t, "median", &o->median_s)) ||
            (rc = get_num(y, t, "min", &o->min_s)) || (rc = get_num(y, t, "p90", &o->p90_s)))
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

int ffn_profile_load_bench(const char *path, ffn_plot_bench *out, ffn_diag *diag)
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

    /* the spec: its name, source, positive peaks, memory and on-chip bandwidths */
    yaml_node_t *spec = ffn_y_get(&y, root, "spec", NULL);
    if (!spec || spec->type != YAML_MAPPING_NODE) {
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no 'spec' object");
        goto done;
    }
    ffn_plot_bench_spec *d = &out->spec;
    get_text(&y, spec, "name", d->name, sizeof d->name);
    if (!d->name[0]) snprintf(d->name, sizeof d->name, "%.63s", out->host[0] ? out->host : "host");
    get_text(&y, spec, "source", out->spec_source, sizeof out->spec_source);
    yaml_node_t *pk = ffn_y_get(&y, spec, "peak_flops", NULL);
    if (pk && pk->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = pk->data.mapping.pairs.start; p < pk->data.mapping.pairs.top;
             p++) {
            const char *k = ffn_y_text(yaml_document_get_node(&y.doc, p->key));
            double v = NAN;
            if (!k) continue;
            if ((rc = get_num(&y, pk, k, &v))) goto done;
            if (v > 0 && isfinite(v) && d->n_peaks < FFN_BENCH_SPEC_MAX) {
                snprintf(d->peak_names[d->n_peaks], sizeof d->peak_names[0], "%s", k);
                d->peak_flops[d->n_peaks++] = v;
            }
        }
    }
    if ((rc = get_num(&y, spec, "mem_bandwidth_bps", &d->mem_bandwidth_bps))) goto done;
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
        if (lbw > 0 && isfinite(lbw) && ln[0] && d->n_onchip < FFN_BENCH_SPEC_MAX) {
            snprintf(d->onchip_names[d->n_onchip], sizeof d->onchip_names[0], "%s", ln);
            d->onchip_bps[d->n_onchip++] = lbw;
        }
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
