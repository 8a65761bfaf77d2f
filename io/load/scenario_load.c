/* Loader for scenarios (include/ffnroof/scenario.h, format in docs/formats-scenario.md). Every
 * key goes through the position-aware getters of io/load/ydoc.h, so each rejection is one
 * "file:line:col: message" naming the key; unknown keys get a "did you mean" hint. The grid
 * syntax it shares with the command line is in grid_parse.c; the lookup of the models and
 * devices a scenario names in scenario_resolve.c. */
#define _GNU_SOURCE
#include "ffnroof/scenario.h"

#include <stdlib.h>
#include <string.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ydoc.h"

void ffn_scenario_init(ffn_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    ffn_plan_opts_default(&sc->plan);
}

void ffn_scenario_release(ffn_scenario *sc)
{
    free(sc->batch);
    free(sc->seq);
    free(sc->sweep_tp);
    free(sc->sweep_ep);
    ffn_scenario_init(sc);
}

/* ---- grids (the syntax itself: grid_parse.c) ------------------------------------------ */

/* Parse one grid string into a fresh array, growing it up to cap values. */
static int grid_alloc(const char *t, uint64_t lo, uint64_t hi, size_t cap, uint64_t **out,
                      size_t *n, char *why, size_t wn)
{
    size_t room = 1024;
    for (;;) {
        if (room > cap) room = cap;
        uint64_t *a = malloc(room * sizeof *a);
        if (!a) {
            snprintf(why, wn, "out of memory");
            return FFN_ENOMEM;
        }
        int rc = ffn_grid_parse(t, lo, hi, a, room, n, why, wn);
        if (!rc) {
            *out = a;
            return 0;
        }
        free(a);
        *n = 0;
        if (rc != FFN_ENOSPACE || room >= cap) return rc == FFN_ENOSPACE ? FFN_ERANGE : rc;
        room *= 16;
    }
}

/* A grid value: an integer, a grid string, or a list of them. Replaces *out (owned). */
static int load_grid(ffn_ydoc *y, yaml_node_t *map, const char *key, uint64_t lo, uint64_t hi,
                     size_t cap, uint64_t **out, size_t *n)
{
    yaml_node_t *kn = NULL;
    yaml_node_t *v = ffn_y_get(y, map, key, &kn);
    if (!v) {
        if (kn) return ffn_y_error(y, kn, FFN_ERANGE, "'%s' is an empty grid", key);
        return 0;
    }
    free(*out);
    *out = NULL;
    *n = 0;
    char why[160];
    if (v->type == YAML_SCALAR_NODE) {
        int rc = grid_alloc(ffn_y_text(v), lo, hi, cap, out, n, why, sizeof why);
        return rc ? ffn_y_error(y, v, rc, "'%s': %s", key, why) : 0;
    }
    if (v->type != YAML_SEQUENCE_NODE)
        return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' must be a number, a range or a list", key);
    if (v->data.sequence.items.top == v->data.sequence.items.start)
        return ffn_y_error(y, v, FFN_ERANGE, "'%s' is an empty grid", key);
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, *it);
        const char *t = ffn_y_text(e);
        uint64_t *part = NULL;
        size_t got = 0;
        int rc = t ? grid_alloc(t, lo, hi, cap - *n, &part, &got, why, sizeof why) : FFN_ESCHEMA;
        if (!t) snprintf(why, sizeof why, "items must be numbers or ranges");
        uint64_t *grown = rc ? NULL : realloc(*out, (*n + got) * sizeof **out);
        if (!rc && !grown) rc = FFN_ENOMEM, snprintf(why, sizeof why, "out of memory");
        if (rc) {
            free(part);
            free(*out);
            *out = NULL;
            *n = 0;
            return ffn_y_error(y, e, rc, "'%s': %s", key, why);
        }
        memcpy(grown + *n, part, got * sizeof *part);
        free(part);
        *out = grown;
        *n += got;
    }
    return 0;
}

/* A small fixed-capacity grid (layouts). */
static int load_small_grid(ffn_ydoc *y, yaml_node_t *map, const char *key, uint64_t lo, uint64_t hi,
                           uint64_t *dst, size_t cap, size_t *n)
{
    uint64_t *a = NULL;
    size_t cnt = 0;
    int rc = load_grid(y, map, key, lo, hi, cap, &a, &cnt);
    if (rc) return rc;
    if (!a) return 0;
    memcpy(dst, a, cnt * sizeof *a);
    *n = cnt;
    free(a);
    return 0;
}

/* ---- references ---------------------------------------------------------------------------- */

/* A name or a list of names (model, hw). */
static int load_refs(ffn_ydoc *y, yaml_node_t *root, const char *key, bool required,
                     ffn_sc_ref *refs, size_t *n)
{
    yaml_node_t *kn = NULL;
    yaml_node_t *v = ffn_y_get(y, root, key, &kn);
    if (!v) {
        if (required || kn)
            return ffn_y_error(y, kn ? kn : root, FFN_ESCHEMA,
                               kn ? "'%s' is empty: name at least one" : "missing key '%s'", key);
        return 0;
    }
    yaml_node_t *items[FFN_SC_MAX_REFS];
    size_t cnt = 0;
    if (v->type == YAML_SCALAR_NODE) {
        items[cnt++] = v;
    } else if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            if (cnt >= FFN_SC_MAX_REFS)
                return ffn_y_error(y, v, FFN_ERANGE, "'%s' names more than %d entries", key,
                                   FFN_SC_MAX_REFS);
            items[cnt++] = yaml_document_get_node(&y->doc, *it);
        }
        if (cnt == 0)
            return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' is empty: name at least one", key);
    } else {
        return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' must be a name or a list of names", key);
    }
    for (size_t i = 0; i < cnt; i++) {
        const char *t = ffn_y_text(items[i]);
        if (!t || !*t)
            return ffn_y_error(y, items[i], FFN_ESCHEMA, "'%s' entries must be names or paths",
                               key);
        if (strlen(t) >= sizeof refs[i].name)
            return ffn_y_error(y, items[i], FFN_ERANGE, "'%s' entry is too long", key);
        snprintf(refs[i].name, sizeof refs[i].name, "%s", t);
        refs[i].line = (int)items[i]->start_mark.line + 1;
        refs[i].col = (int)items[i]->start_mark.column + 1;
    }
    *n = cnt;
    return 0;
}

static int dtype_key(ffn_ydoc *y, yaml_node_t *map, const char *key, ffn_dtype *out, bool *set)
{
    yaml_node_t *v = ffn_y_get(y, map, key, NULL);
    if (!v) return 0;
    const char *t = ffn_y_text(v);
    if (!t || ffn_dtype_parse(t, out))
        return ffn_y_error(y, v, FFN_ESCHEMA,
                           "'%s': unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, int8, int4)",
                           key, t ? t : "a list or map");
    if (set) *set = true;
    return 0;
}

static int sub_map(ffn_ydoc *y, yaml_node_t *root, const char *key, const char *const *allowed,
                   yaml_node_t **out)
{
    *out = ffn_y_get(y, root, key, NULL);
    if (!*out) return 0;
    int rc = ffn_y_expect_map(y, *out, key);
    if (!rc) rc = ffn_y_check_keys(y, *out, allowed);
    return rc;
}

static int load_plan(ffn_ydoc *y, yaml_node_t *root, ffn_scenario *sc)
{
    ffn_plan_opts *o = &sc->plan;
    int rc = 0;
    static const char *const phases[] = {"decode", "prefill", "both", NULL};
    int ph = (int)o->phase;
    if (!rc) rc = ffn_y_enum(y, root, "phase", false, phases, &ph);
    o->phase = (ffn_plan_phase)ph;
    if (!rc) rc = ffn_y_u64(y, root, "prompt", false, 1, 1u << 24, &o->prompt);
    if (!rc) rc = ffn_y_u64(y, root, "output", false, 1, 1u << 24, &o->output);
    if (!rc) rc = ffn_y_u64(y, root, "prefill_batch", false, 1, 1u << 20, &o->prefill_batch);
    if (!rc) rc = ffn_y_u64(y, root, "chunk", false, 1, 1u << 24, &o->chunk);
    bool dset = false, wset = false, aset = false, kset = false;
    if (!rc) rc = dtype_key(y, root, "dtype", &o->wdtype, &dset);
    if (!rc && dset) o->adtype = o->wdtype;
    if (!rc) rc = dtype_key(y, root, "wdtype", &o->wdtype, &wset);
    if (!rc) rc = dtype_key(y, root, "adtype", &o->adtype, &aset);
    if (!rc && dset && (wset || aset))
        rc = ffn_y_error(y, ffn_y_get(y, root, wset ? "wdtype" : "adtype", NULL), FFN_ESCHEMA,
                         "use either 'dtype' or 'wdtype'/'adtype', not both");
    if (!rc) rc = dtype_key(y, root, "kv_dtype", &o->kv_dtype, &kset);
    if (!rc && !kset) o->kv_dtype = o->adtype;
    uint64_t gs = o->group_size;
    if (!rc) rc = ffn_y_u64(y, root, "group_size", false, 1, 1u << 20, &gs);
    o->group_size = (unsigned)gs;
    if (!rc) rc = ffn_y_bool(y, root, "zero_point", false, &o->zero_point);
    bool ioset = false;
    if (!rc) rc = dtype_key(y, root, "act_io_dtype", &o->act_io_dtype, &ioset);
    if (!rc && ioset && o->act_io_dtype != FFN_DT_FP32 && o->act_io_dtype != FFN_DT_BF16 &&
        o->act_io_dtype != FFN_DT_FP16)
        rc = ffn_y_error(y, ffn_y_get(y, root, "act_io_dtype", NULL), FFN_ESCHEMA,
                         "'act_io_dtype': the activations in memory are fp32, bf16 or fp16, not "
                         "%s",
                         ffn_dtype_name(o->act_io_dtype));
    if (!rc) rc = ffn_y_bool(y, root, "fused", false, &o->fused);
    static const char *const residency[] = {"cold", "hot", "auto", NULL}; /* ffn_weights order */
    int wr = (int)o->weights;
    if (!rc) rc = ffn_y_enum(y, root, "weights", false, residency, &wr);
    o->weights = (ffn_weights)wr;
    if (!rc) rc = ffn_y_bool(y, root, "onchip", false, &o->onchip);
    if (rc) return rc;

    yaml_node_t *m;
    static const char *const slo_keys[] = {"tpot", "ttft", NULL};
    if ((rc = sub_map(y, root, "slo", slo_keys, &m))) return rc;
    if (m) {
        rc = ffn_y_num(y, m, "tpot", false, FFN_UNIT_TIME, 1e-9, 3600, &o->tpot_s);
        if (!rc) rc = ffn_y_num(y, m, "ttft", false, FFN_UNIT_TIME, 1e-9, 3600, &o->ttft_s);
        if (rc) return rc;
        if (o->tpot_s == 0 && ffn_y_get(y, m, "tpot", NULL))
            return ffn_y_error(y, ffn_y_get(y, m, "tpot", NULL), FFN_ERANGE, "'tpot' must be > 0");
        if (o->ttft_s == 0 && ffn_y_get(y, m, "ttft", NULL))
            return ffn_y_error(y, ffn_y_get(y, m, "ttft", NULL), FFN_ERANGE, "'ttft' must be > 0");
    }
    static const char *const target_keys[] = {"tokens_per_s", NULL};
    if ((rc = sub_map(y, root, "target", target_keys, &m))) return rc;
    if (m && (rc = ffn_y_num(y, m, "tokens_per_s", true, FFN_UNIT_NONE, 1e-6, 1e15,
                             &o->target_tokens_per_s)))
        return rc;
    static const char *const limit_keys[] = {"max_devices",        "max_batch",
                                             "memory_utilization", "runtime_reserve",
                                             "kv_page_tokens",     NULL};
    if ((rc = sub_map(y, root, "limits", limit_keys, &m))) return rc;
    if (m) {
        yaml_node_t *md = ffn_y_get(y, m, "max_devices", NULL);
        if (md && ffn_y_text(md) && !strcmp(ffn_y_text(md), "0"))
            return ffn_y_error(y, md, FFN_ERANGE,
                               "'max_devices' is 0: a plan needs at least one device");
        rc = ffn_y_u64(y, m, "max_devices", false, 1, 1u << 24, &o->max_devices);
        if (!rc) rc = ffn_y_u64(y, m, "max_batch", false, 1, 1u << 24, &o->max_batch);
        if (!rc)
            rc = ffn_y_num(y, m, "memory_utilization", false, FFN_UNIT_NONE, 0.01, 1.0,
                           &o->mem_utilization);
        if (!rc)
            rc = ffn_y_num(y, m, "runtime_reserve", false, FFN_UNIT_BYTES, 0, 1e15,
                           &o->reserve_bytes);
        if (!rc) rc = ffn_y_u64(y, m, "kv_page_tokens", false, 1, 1u << 20, &o->kv_page_tokens);
        if (rc) return rc;
    }
    static const char *const layout_keys[] = {"tp", "dp", "ep", "pp", "ep_uneven", NULL};
    if ((rc = sub_map(y, root, "layouts", layout_keys, &m))) return rc;
    if (m) {
        rc = load_small_grid(y, m, "tp", 1, 4096, o->tp, FFN_PLAN_MAX_DEGREES, &o->n_tp);
        if (!rc) rc = load_small_grid(y, m, "dp", 1, 4096, o->dp, FFN_PLAN_MAX_DEGREES, &o->n_dp);
        if (!rc) rc = load_small_grid(y, m, "ep", 1, 4096, o->ep, FFN_PLAN_MAX_DEGREES, &o->n_ep);
        if (!rc) rc = load_small_grid(y, m, "pp", 1, 4096, o->pp, FFN_PLAN_MAX_DEGREES, &o->n_pp);
        if (!rc) rc = ffn_y_bool(y, m, "ep_uneven", false, &o->moe.ep_uneven);
        if (rc) return rc;
    }
    static const char *const moe_keys[] = {
        "zipf", "trials", "seed", "capacity_factor", "devices_per_node", NULL};
    if ((rc = sub_map(y, root, "moe", moe_keys, &m))) return rc;
    if (m) {
        rc = ffn_y_num(y, m, "zipf", false, FFN_UNIT_NONE, 0, 100, &o->moe.zipf_s);
        if (!rc) rc = ffn_y_u64(y, m, "trials", false, 1, 1000000, &o->moe.trials);
        if (!rc) rc = ffn_y_u64(y, m, "seed", false, 0, UINT64_MAX, &o->moe.seed);
        if (!rc)
            rc = ffn_y_num(y, m, "capacity_factor", false, FFN_UNIT_NONE, 0.01, 1000,
                           &o->moe.capacity_factor);
        if (!rc) rc = ffn_y_u64(y, m, "devices_per_node", false, 1, 4096, &o->moe.devices_per_node);
        if (rc) return rc;
    }
    yaml_node_t *ov = ffn_y_get(y, root, "objective", NULL);
    if (ov) {
        const char *t = ffn_y_text(ov);
        if (!t || ffn_objective_parse(t, &o->objective))
            return ffn_y_error(y, ov, FFN_ESCHEMA,
                               "'objective' must be one of devices, tokens_per_device, "
                               "tokens_per_watt, tokens_per_dollar, cost (got '%s')",
                               t ? t : "a list or map");
    }
    /* prices: a mapping device -> USD per device-hour; keys must name a device of 'hw' */
    yaml_node_t *pm = ffn_y_get(y, root, "price_per_hour", NULL);
    if (pm) {
        if ((rc = ffn_y_expect_map(y, pm, "price_per_hour"))) return rc;
        for (yaml_node_pair_t *pp = pm->data.mapping.pairs.start; pp < pm->data.mapping.pairs.top;
             pp++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, pp->key);
            yaml_node_t *v = yaml_document_get_node(&y->doc, pp->value);
            const char *kt = ffn_y_text(k);
            size_t i = 0;
            while (kt && i < sc->n_hws && strcmp(sc->hws[i].name, kt))
                i++;
            if (!kt || i == sc->n_hws)
                return ffn_y_error(y, k, FFN_ESCHEMA,
                                   "price_per_hour: '%s' is not one of the scenario's devices",
                                   kt ? kt : "?");
            if ((rc = ffn_y_node_num(y, v, kt, FFN_UNIT_NONE, 1e-6, 1e6, &sc->price_per_hour[i])))
                return rc;
        }
    }
    return 0;
}

static int load_sweep(ffn_ydoc *y, yaml_node_t *root, ffn_scenario *sc)
{
    static const char *const keys[] = {"phase", "batch", "seq", "tp", "ep", "dtype", NULL};
    yaml_node_t *m;
    int rc = sub_map(y, root, "sweep", keys, &m);
    if (rc || !m) return rc;
    static const char *const phases[] = {"prefill", "decode", "both", NULL};
    int ph = 2;
    if ((rc = ffn_y_enum(y, m, "phase", false, phases, &ph))) return rc;
    sc->sweep_phases = ph == 0   ? FFN_SWEEP_PREFILL
                       : ph == 1 ? FFN_SWEEP_DECODE
                                 : FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE;
    rc = load_grid(y, m, "batch", 1, 1u << 24, FFN_SC_MAX_GRID, &sc->batch, &sc->n_batch);
    if (!rc) rc = load_grid(y, m, "seq", 1, 1u << 24, FFN_SC_MAX_GRID, &sc->seq, &sc->n_seq);
    if (!rc) rc = load_grid(y, m, "tp", 1, 4096, 64, &sc->sweep_tp, &sc->n_sweep_tp);
    if (!rc) rc = load_grid(y, m, "ep", 1, 4096, 64, &sc->sweep_ep, &sc->n_sweep_ep);
    if (rc) return rc;
    yaml_node_t *kn = NULL;
    yaml_node_t *dv = ffn_y_get(y, m, "dtype", &kn);
    if (kn && !dv) return ffn_y_error(y, kn, FFN_ERANGE, "'dtype' is an empty grid");
    if (dv) {
        yaml_node_t *items[FFN_SC_MAX_DTYPES + 1];
        size_t cnt = 0;
        if (dv->type == YAML_SCALAR_NODE) {
            items[cnt++] = dv;
        } else if (dv->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = dv->data.sequence.items.start;
                 it < dv->data.sequence.items.top && cnt <= FFN_SC_MAX_DTYPES; it++)
                items[cnt++] = yaml_document_get_node(&y->doc, *it);
            if (cnt == 0) return ffn_y_error(y, dv, FFN_ERANGE, "'dtype' is an empty grid");
            if (cnt > FFN_SC_MAX_DTYPES)
                return ffn_y_error(y, dv, FFN_ERANGE, "'dtype' has more than %d entries",
                                   FFN_SC_MAX_DTYPES);
        } else {
            return ffn_y_error(y, dv, FFN_ESCHEMA, "'dtype' must be a dtype or a list of them");
        }
        for (size_t i = 0; i < cnt; i++) {
            const char *t = ffn_y_text(items[i]);
            if (!t || ffn_dtype_pair_parse(t, &sc->sweep_wdtype[i], &sc->sweep_adtype[i]))
                return ffn_y_error(y, items[i], FFN_ESCHEMA,
                                   "'dtype': '%s' is not a dtype (bf16) or a pair (int4/bf16)",
                                   t ? t : "a list or map");
        }
        sc->n_sweep_dtype = cnt;
    }
    return 0;
}

int ffn_scenario_sweep_defaults(ffn_scenario *sc)
{
    if (!sc->sweep_phases) sc->sweep_phases = FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE;
    if (!sc->n_batch) {
        if (!(sc->batch = malloc(sizeof *sc->batch))) return FFN_ENOMEM;
        sc->batch[0] = 1, sc->n_batch = 1;
    }
    if (!sc->n_seq) {
        if (!(sc->seq = malloc(sizeof *sc->seq))) return FFN_ENOMEM;
        sc->seq[0] = sc->plan.prompt, sc->n_seq = 1;
    }
    if (!sc->n_sweep_tp) {
        if (!(sc->sweep_tp = malloc(sizeof *sc->sweep_tp))) return FFN_ENOMEM;
        sc->sweep_tp[0] = 1, sc->n_sweep_tp = 1;
    }
    if (!sc->n_sweep_ep) {
        if (!(sc->sweep_ep = malloc(sizeof *sc->sweep_ep))) return FFN_ENOMEM;
        sc->sweep_ep[0] = 1, sc->n_sweep_ep = 1;
    }
    if (!sc->n_sweep_dtype) {
        sc->sweep_wdtype[0] = sc->plan.wdtype;
        sc->sweep_adtype[0] = sc->plan.adtype;
        sc->n_sweep_dtype = 1;
    }
    return 0;
}

/* serve: {engine, concurrency, user_tokens_per_s, spread, lengths, spec_tokens, spec_accept,
 * max_devices} for `ffnroof serve`. */
static int load_serve(ffn_ydoc *y, yaml_node_t *root, ffn_scenario *sc)
{
    static const char *const keys[] = {"engine",      "concurrency", "user_tokens_per_s",
                                       "spread",      "lengths",     "spec_tokens",
                                       "spec_accept", "max_devices", NULL};
    static const char *const lengths[] = {"uniform", "sharegpt", NULL};
    static const char *const engines[] = {"vllm", "sglang", "trtllm", NULL};
    yaml_node_t *m;
    int rc = sub_map(y, root, "serve", keys, &m);
    if (rc || !m) return rc;
    ffn_sc_serve *s = &sc->serve;
    s->set = true;
    int e = -1;
    rc = ffn_y_enum(y, m, "engine", false, engines, &e);
    if (!rc && e >= 0) s->engine = (ffn_engine)(FFN_ENGINE_VLLM + e);
    if (!rc)
        rc = load_small_grid(y, m, "concurrency", 1, 1000000, s->concurrency, FFN_SC_MAX_CONC,
                             &s->n_concurrency);
    if (!rc)
        rc = ffn_y_num(y, m, "user_tokens_per_s", false, FFN_UNIT_NONE, 1e-6, 1e9,
                       &s->user_tokens_per_s);
    if (!rc) rc = ffn_y_num(y, m, "spread", false, FFN_UNIT_NONE, 0.0, 0.99, &s->spread);
    int l = -1;
    if (!rc) rc = ffn_y_enum(y, m, "lengths", false, lengths, &l);
    s->sharegpt_lengths = l == 1;
    if (!rc && s->sharegpt_lengths && s->spread > 0)
        rc = ffn_y_error(y, ffn_y_get(y, m, "lengths", NULL), FFN_ERANGE,
                         "'lengths: sharegpt' draws lengths by its own law: no 'spread' with it");
    uint64_t k = 0;
    if (!rc) rc = ffn_y_u64(y, m, "spec_tokens", false, 1, 16, &k);
    s->spec_tokens = (uint32_t)k;
    s->spec_accept = 1.0;
    if (!rc) rc = ffn_y_num(y, m, "spec_accept", false, FFN_UNIT_NONE, 1.0, 17.0, &s->spec_accept);
    if (!rc && s->spec_accept > (double)s->spec_tokens + 1.0)
        rc = ffn_y_error(y, ffn_y_get(y, m, "spec_accept", NULL), FFN_ERANGE,
                         "'spec_accept' is the tokens a step emits: at most spec_tokens + 1 = %u",
                         s->spec_tokens + 1);
    if (!rc) rc = ffn_y_u64(y, m, "max_devices", false, 1, 4096, &s->max_devices);
    return rc;
}

int ffn_scenario_load(const char *path, ffn_scenario *sc, ffn_diag *diag)
{
    static const char *const allowed[] = {
        "name",     "description",   "model",      "hw",           "phase",     "prompt",
        "output",   "prefill_batch", "chunk",      "dtype",        "wdtype",    "adtype",
        "kv_dtype", "group_size",    "zero_point", "act_io_dtype", "fused",     "slo",
        "target",   "limits",        "layouts",    "moe",          "objective", "price_per_hour",
        "sweep",    "source",        "weights",    "onchip",       "serve",     NULL};
    ffn_scenario_init(sc);
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (!rc) {
        yaml_node_t *root = ffn_ydoc_root(&y);
        snprintf(sc->path, sizeof sc->path, "%s", path);
        rc = ffn_y_expect_map(&y, root, "a scenario");
        if (!rc) rc = ffn_y_check_keys(&y, root, allowed);
        if (!rc) rc = ffn_y_str(&y, root, "name", true, sc->name, sizeof sc->name);
        if (!rc)
            rc = ffn_y_str(&y, root, "description", false, sc->description, sizeof sc->description);
        if (!rc) rc = load_refs(&y, root, "model", true, sc->models, &sc->n_models);
        if (!rc) rc = load_refs(&y, root, "hw", true, sc->hws, &sc->n_hws);
        if (!rc) rc = load_plan(&y, root, sc);
        if (!rc) rc = load_sweep(&y, root, sc);
        if (!rc) rc = load_serve(&y, root, sc);
    }
    ffn_ydoc_release(&y);
    if (rc) {
        ffn_scenario_release(sc);
        return rc;
    }
    return 0;
}
