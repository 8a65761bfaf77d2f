/* Readers of the profiler's files for the charts and reports (include/ffnroof/plot.h,
 * docs/formats-bench.md): a calibration.json as a roofline device (its measured peaks and
 * bandwidth levels), a bench JSON as its spec and its cases. */
#include "ffnroof/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"
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
    if (host && host->type == YAML_MAPPING_NODE)
        get_text(&y, host, "name", out->name, sizeof out->name);
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
    if (ffn__plot_device_max(out, false) == 0.0)
        rc = ffn_y_error(&y, root, FFN_ESCHEMA, "no all-threads compute peak in the calibration");
    else if (ffn__plot_device_max(out, true) == 0.0)
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
    bool measured = ffn__plot_calibrated(out->spec_source);
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
