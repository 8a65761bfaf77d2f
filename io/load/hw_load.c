/* Loader for hardware specs (hw/NAME.yaml, format in docs/formats-hw.md): reads every key through
 * the position-aware getters of io/load/ydoc.h, so that each rejection is one "file:line:col:
 * message" naming the key, checks units and sane ranges, and fills an ffn_hw in SI base units.
 * Unknown keys are refused at every level with a "did you mean" hint; on any error *hw is left
 * zeroed. */
#include "ffnroof/hw_load.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel_rules.h"
#include "ydoc.h"

_Static_assert(FFN_DT_COUNT == 10, "the keys of peak: in load_peak() follow enum ffn_dtype");

/* The dtype keys of `peak`, `compute_max_by_dtype` and `tiles_by_dtype`, in enum ffn_dtype
 * order. */
static const char *const dtype_keys[] = {"fp32", "tf32",      "bf16",  "fp16",  "fp8", "int8",
                                         "int4", "fp8-block", "nvfp4", "mxfp4", NULL};

/* Sane ranges. They are wide enough for any real device and tight enough to catch unit slips
 * (a bandwidth typed in bits, a capacity typed in GB where TB was meant, ...). */
#define PEAK_LO 1e9   /* 1 GFLOP/s */
#define PEAK_HI 1e18  /* 1 EFLOP/s: a wafer-scale engine (Cerebras WSE-3) reaches 125 PFLOP/s */
#define MEMBW_LO 1e9  /* 1 GB/s */
#define MEMBW_HI 1e17 /* 100 PB/s: an SRAM-first device's memory is its SRAM (WSE-3 21 PB/s) */
#define CAP_LO 1e6    /* 1 MB */
#define CAP_HI 1e14   /* 100 TB */
#define ONCHIP_CAP_LO 1e3
#define ONCHIP_BW_HI 1e17
#define LINK_BW_LO 1e8 /* 100 MB/s */
#define LINK_BW_HI 1e14
#define LAT_LO 1e-9
#define LAT_HI 1.0
#define CLOCK_LO 1e6
#define CLOCK_HI 1e10
#define CU_HI 10000000u
#define DEV_HI 1000000u
#define TDP_LO 1.0
#define TDP_HI 1e5
#define TILE_HI 4096u

/* A number in (0, 1]: a fraction where 0 would mean "never runs". */
static int fraction(ffn_ydoc *y, yaml_node_t *map, const char *key, double *out)
{
    yaml_node_t *v = ffn_y_get(y, map, key, NULL);
    if (!v) return 0;
    double f = 0;
    int rc = ffn_y_node_num(y, v, key, FFN_UNIT_NONE, 0.0, 1.0, &f);
    if (rc) return rc;
    if (f <= 0.0)
        return ffn_y_error(y, v, FFN_ERANGE, "'%s' must be greater than 0 (a fraction in (0, 1])",
                           key);
    *out = f;
    return 0;
}

/* A key of a mapping given without a value ("fp8:" alone, as a file cut short leaves it) is an
 * error, not an absent key. */
static int no_empty_values(ffn_ydoc *y, yaml_node_t *map, const char *what)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (ffn_y_is_null(yaml_document_get_node(&y->doc, p->value))) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
            return ffn_y_error(y, k, FFN_ESCHEMA, "'%s: %s' has no value", what,
                               ffn_y_text(k) ? ffn_y_text(k) : "?");
        }
    return 0;
}

/* Optional mapping value of key: NULL when absent, error when present but not a mapping. */
static int sub_map(ffn_ydoc *y, yaml_node_t *map, const char *key, const char *const *allowed,
                   yaml_node_t **out)
{
    *out = ffn_y_get(y, map, key, NULL);
    if (!*out) return 0;
    int rc = ffn_y_expect_map(y, *out, key);
    if (!rc) rc = ffn_y_check_keys(y, *out, allowed);
    if (!rc) rc = no_empty_values(y, *out, key);
    return rc;
}

static int load_peak(ffn_ydoc *y, yaml_node_t *root, ffn_hw *hw)
{
    yaml_node_t *key = NULL;
    yaml_node_t *m = ffn_y_get(y, root, "peak", &key);
    if (!m) return ffn_y_error(y, key ? key : root, FFN_ESCHEMA, "missing key 'peak'");
    int rc = ffn_y_expect_map(y, m, "peak");
    if (!rc) rc = ffn_y_check_keys(y, m, dtype_keys);
    int n = 0;
    for (int d = 0; !rc && d < FFN_DT_COUNT; d++) {
        const ffn_dtype unit = ffn_dtype_unit((ffn_dtype)d);
        if (unit != (ffn_dtype)d) {
            /* a format without units of its own: it runs at its unit's peak */
            yaml_node_t *k = NULL;
            if (ffn_y_get(y, m, dtype_keys[d], &k))
                rc = ffn_y_error(y, k, FFN_ESCHEMA,
                                 "'peak.%s': %s multiplies on the %s units; give 'peak.%s' only",
                                 dtype_keys[d], dtype_keys[d], dtype_keys[unit], dtype_keys[unit]);
            continue;
        }
        rc = ffn_y_num(y, m, dtype_keys[d], false, FFN_UNIT_FLOPS, PEAK_LO, PEAK_HI,
                       &hw->peak_flops[d]);
        if (hw->peak_flops[d] > 0) n++;
    }
    if (!rc && n == 0)
        rc = ffn_y_error(y, m, FFN_ESCHEMA,
                         "'peak' needs at least one dtype (fp32, tf32, bf16, fp16, fp8, int8, "
                         "int4, nvfp4, mxfp4)");
    for (int d = 0; !rc && d < FFN_DT_COUNT; d++)
        hw->peak_flops[d] = hw->peak_flops[ffn_dtype_unit((ffn_dtype)d)];
    return rc;
}

static int load_memory(ffn_ydoc *y, yaml_node_t *root, ffn_hw *hw)
{
    static const char *const allowed[] = {"capacity", "bandwidth", NULL};
    yaml_node_t *key = NULL;
    yaml_node_t *m = ffn_y_get(y, root, "memory", &key);
    if (!m) return ffn_y_error(y, key ? key : root, FFN_ESCHEMA, "missing key 'memory'");
    int rc = ffn_y_expect_map(y, m, "memory");
    if (!rc) rc = ffn_y_check_keys(y, m, allowed);
    if (!rc)
        rc = ffn_y_num(y, m, "capacity", true, FFN_UNIT_BYTES, CAP_LO, CAP_HI,
                       &hw->mem_capacity_bytes);
    if (!rc)
        rc = ffn_y_num(y, m, "bandwidth", true, FFN_UNIT_BPS, MEMBW_LO, MEMBW_HI,
                       &hw->mem_bandwidth_bps);
    return rc;
}

static int load_onchip(ffn_ydoc *y, yaml_node_t *root, ffn_hw *hw)
{
    static const char *const allowed[] = {"name",       "capacity",   "bandwidth", "slices",
                                          "scratchpad", "keeps_part", NULL};
    yaml_node_t *s = ffn_y_get(y, root, "onchip", NULL);
    if (!s) return 0;
    int rc = ffn_y_expect_seq(y, s, "onchip");
    if (rc) return rc;
    int n = 0;
    for (yaml_node_item_t *it = s->data.sequence.items.start; it < s->data.sequence.items.top;
         it++, n++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, *it);
        if (n >= FFN_HW_MAX_LEVELS)
            return ffn_y_error(y, e, FFN_ERANGE, "'onchip' has more than %d levels",
                               FFN_HW_MAX_LEVELS);
        ffn_mem_level *l = &hw->levels[n];
        rc = ffn_y_expect_map(y, e, "each 'onchip' entry");
        if (!rc) rc = ffn_y_check_keys(y, e, allowed);
        if (!rc) rc = ffn_y_str(y, e, "name", true, l->name, sizeof l->name);
        if (!rc)
            rc = ffn_y_num(y, e, "capacity", true, FFN_UNIT_BYTES, ONCHIP_CAP_LO, CAP_HI,
                           &l->capacity_bytes);
        if (!rc)
            rc = ffn_y_num(y, e, "bandwidth", false, FFN_UNIT_BPS, MEMBW_LO, ONCHIP_BW_HI,
                           &l->bandwidth_bps);
        /* private slices (per SM, per core): what one GEMM tile sees (docs/formats-hw.md) */
        uint64_t sl = 0; /* absent: 0, one shared level */
        if (!rc) rc = ffn_y_u64(y, e, "slices", false, 1, 1u << 24, &sl);
        l->slices = (uint32_t)sl;
        /* kernel-lifetime memory (shared memory, LDS): never holds data across calls */
        if (!rc) rc = ffn_y_bool(y, e, "scratchpad", false, &l->scratchpad);
        /* what it keeps of a working set larger than it (default: capacity / working set) */
        bool keeps = true;
        if (!rc) rc = ffn_y_bool(y, e, "keeps_part", false, &keeps);
        l->no_partial = !keeps;
        if (rc) return rc;
    }
    hw->n_levels = n;
    return 0;
}

/* interconnect: (scale-up, with devices_per_node) or network: (scale-out). */
static int load_link(ffn_ydoc *y, yaml_node_t *root, const char *key, ffn_link *l,
                     uint32_t *devices_per_node)
{
    static const char *const up_keys[] = {"kind", "bandwidth", "latency", "devices_per_node", NULL};
    static const char *const out_keys[] = {"kind", "bandwidth", "latency", NULL};
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, key, devices_per_node ? up_keys : out_keys, &m);
    if (rc || !m) return rc;
    rc = ffn_y_str(y, m, "kind", true, l->kind, sizeof l->kind);
    if (!rc)
        rc = ffn_y_num(y, m, "bandwidth", true, FFN_UNIT_BPS, LINK_BW_LO, LINK_BW_HI,
                       &l->bandwidth_bps);
    if (!rc) rc = ffn_y_num(y, m, "latency", false, FFN_UNIT_TIME, LAT_LO, LAT_HI, &l->latency_s);
    if (!rc && devices_per_node) {
        uint64_t d = 1;
        rc = ffn_y_u64(y, m, "devices_per_node", false, 1, DEV_HI, &d);
        *devices_per_node = (uint32_t)d;
    }
    return rc;
}

static int load_tiles(ffn_ydoc *y, yaml_node_t *eff, uint32_t (*tiles)[2], int *n_tiles)
{
    yaml_node_t *s = ffn_y_get(y, eff, "tiles", NULL);
    if (!s) return 0;
    int rc = ffn_y_expect_seq(y, s, "tiles");
    if (rc) return rc;
    int n = 0;
    for (yaml_node_item_t *it = s->data.sequence.items.start; it < s->data.sequence.items.top;
         it++, n++) {
        yaml_node_t *t = yaml_document_get_node(&y->doc, *it);
        if (n >= FFN_HW_MAX_TILES)
            return ffn_y_error(y, t, FFN_ERANGE, "'tiles' has more than %d entries",
                               FFN_HW_MAX_TILES);
        if (!t || t->type != YAML_SEQUENCE_NODE ||
            t->data.sequence.items.top - t->data.sequence.items.start != 2)
            return ffn_y_error(y, t, FFN_ESCHEMA,
                               "each 'tiles' entry must be a pair [rows, cols], e.g. [128, 128]");
        for (int k = 0; k < 2; k++) {
            yaml_node_t *v = yaml_document_get_node(&y->doc, t->data.sequence.items.start[k]);
            uint64_t x = 0;
            rc = ffn_y_node_u64(y, v, k ? "tiles cols" : "tiles rows", 1, TILE_HI, &x);
            if (rc) return rc;
            tiles[n][k] = (uint32_t)x;
        }
    }
    *n_tiles = n;
    return 0;
}

/* tiles_by_dtype: {bf16: {tiles: [[32, 32]], min_rows: 32, gemv_rows: 2}, ...} */
static int load_tiles_by_dtype(ffn_ydoc *y, yaml_node_t *eff, ffn_eff *e)
{
    static const char *const keys[] = {"tiles", "min_rows", "gemv_rows", NULL};
    yaml_node_t *bd = NULL;
    int rc = sub_map(y, eff, "tiles_by_dtype", dtype_keys, &bd);
    for (int d = 0; !rc && bd && d < FFN_DT_COUNT; d++) {
        yaml_node_t *m = NULL;
        rc = sub_map(y, bd, dtype_keys[d], keys, &m);
        if (rc || !m) continue;
        ffn_tileset *t = &e->tiles_dt[d];
        rc = load_tiles(y, m, t->tiles, &t->n_tiles);
        if (!rc && t->n_tiles == 0)
            rc = ffn_y_error(y, m, FFN_ESCHEMA,
                             "'tiles_by_dtype: %s' needs 'tiles', e.g. {tiles: [[32, 32]]}",
                             dtype_keys[d]);
        uint64_t v = 0;
        if (!rc) rc = ffn_y_u64(y, m, "min_rows", false, 1, TILE_HI, &v);
        t->min_rows = (uint32_t)v;
        v = 0;
        if (!rc) rc = ffn_y_u64(y, m, "gemv_rows", false, 0, TILE_HI, &v);
        t->gemv_rows = (uint32_t)v;
    }
    return rc;
}

/* kernels_by_dtype: {fp8: [{m: 16, n: 1280, tile: [16, 64, 256]}, {tile: [128, 128, 128]}]}: the
 * tile a dtype's kernels pick by shape, the first rule whose bounds hold (docs/formats-hw.md). */
static int load_kernel_rules(ffn_ydoc *y, yaml_node_t *eff, ffn_eff *e)
{
    yaml_node_t *bd = NULL;
    int rc = sub_map(y, eff, "kernels_by_dtype", dtype_keys, &bd);
    for (int d = 0; !rc && bd && d < FFN_DT_COUNT; d++) {
        yaml_node_t *s = ffn_y_get(y, bd, dtype_keys[d], NULL);
        if (s) rc = ffn_y_kernel_rules(y, s, dtype_keys[d], &e->rules_dt[d]);
    }
    return rc;
}

/* util_by_dtype: {fp16: {gamma: 0.85, alpha: 0.12}, ...}: util = gamma - alpha / waves. */
static int load_util_by_dtype(ffn_ydoc *y, yaml_node_t *eff, ffn_eff *e)
{
    static const char *const keys[] = {"gamma", "alpha", NULL};
    yaml_node_t *bd = NULL;
    int rc = sub_map(y, eff, "util_by_dtype", dtype_keys, &bd);
    for (int d = 0; !rc && bd && d < FFN_DT_COUNT; d++) {
        yaml_node_t *m = NULL;
        rc = sub_map(y, bd, dtype_keys[d], keys, &m);
        if (rc || !m) continue;
        yaml_node_t *key = NULL;
        if (!ffn_y_get(y, m, "gamma", &key))
            return ffn_y_error(y, m, FFN_ESCHEMA, "'util_by_dtype: %s' needs 'gamma'",
                               dtype_keys[d]);
        rc = fraction(y, m, "gamma", &e->util_gamma[d]);
        if (!rc) rc = ffn_y_num(y, m, "alpha", false, FFN_UNIT_NONE, 0.0, 1.0, &e->util_alpha[d]);
        if (!rc && e->util_alpha[d] >= e->util_gamma[d])
            rc = ffn_y_error(y, ffn_y_get(y, m, "alpha", NULL), FFN_ERANGE,
                             "'alpha' must be less than 'gamma' (one wave would reach nothing)");
    }
    return rc;
}

/* uncertainty: {p10: 0.93, p90: 1.08, points: 1040, median_error: 0.031, max_error: 0.12,
 * source: ...}. Absent: the stated default, marked as such. */
static int load_uncertainty(ffn_ydoc *y, yaml_node_t *root, ffn_unc *u)
{
    static const char *const keys[] = {"p10",       "p90",    "points",   "median_error",
                                       "max_error", "source", "by_dtype", NULL};
    u->p10 = FFN_UNC_DEFAULT_P10;
    u->p90 = FFN_UNC_DEFAULT_P90;
    u->is_default = true;
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, "uncertainty", keys, &m);
    if (rc || !m) return rc;
    yaml_node_t *k10 = NULL, *k90 = NULL;
    if (!ffn_y_get(y, m, "p10", &k10) || !ffn_y_get(y, m, "p90", &k90))
        return ffn_y_error(y, m, FFN_ESCHEMA, "'uncertainty' needs both 'p10' and 'p90'");
    rc = ffn_y_num(y, m, "p10", true, FFN_UNIT_NONE, 1e-3, 1e3, &u->p10);
    if (!rc) rc = ffn_y_num(y, m, "p90", true, FFN_UNIT_NONE, 1e-3, 1e3, &u->p90);
    if (!rc && u->p90 < u->p10)
        rc = ffn_y_error(y, ffn_y_get(y, m, "p90", NULL), FFN_ERANGE,
                         "'p90' must be at least 'p10'");
    uint64_t pts = 0;
    if (!rc) rc = ffn_y_u64(y, m, "points", false, 0, 100000000, &pts);
    u->points = (uint32_t)pts;
    if (!rc) rc = ffn_y_num(y, m, "median_error", false, FFN_UNIT_NONE, 0.0, 100.0, &u->median_abs);
    if (!rc) rc = ffn_y_num(y, m, "max_error", false, FFN_UNIT_NONE, 0.0, 100.0, &u->max_abs);
    if (!rc) {
        yaml_node_t *src = ffn_y_get(y, m, "source", NULL);
        if (src && !ffn_y_text(src)) rc = ffn_y_error(y, src, FFN_ESCHEMA, "'source' must be text");
    }
    if (!rc) {
        /* by_dtype: {fp8: {p10: 0.8, p90: 1.3}}: a weight dtype's own range */
        static const char *const dkeys[] = {"p10", "p90", NULL};
        yaml_node_t *bd = NULL;
        rc = sub_map(y, m, "by_dtype", dtype_keys, &bd);
        for (int d = 0; !rc && bd && d < FFN_DT_COUNT; d++) {
            yaml_node_t *e = NULL;
            rc = sub_map(y, bd, dtype_keys[d], dkeys, &e);
            if (rc || !e) continue;
            rc = ffn_y_num(y, e, "p10", true, FFN_UNIT_NONE, 1e-3, 1e3, &u->dt_p10[d]);
            if (!rc) rc = ffn_y_num(y, e, "p90", true, FFN_UNIT_NONE, 1e-3, 1e3, &u->dt_p90[d]);
            if (!rc && u->dt_p90[d] < u->dt_p10[d])
                rc = ffn_y_error(y, ffn_y_get(y, e, "p90", NULL), FFN_ERANGE,
                                 "'p90' must be at least 'p10'");
        }
    }
    if (!rc) u->is_default = false;
    return rc;
}

/* The residual keys a fitted block shares: p10 and p90 of measured/predicted, the median error,
 * the points. */
static int load_spread(ffn_ydoc *y, yaml_node_t *m, double *p10, double *p90, double *med,
                       uint32_t *points)
{
    int rc = ffn_y_num(y, m, "p10", true, FFN_UNIT_NONE, 1e-3, 1e3, p10);
    if (!rc) rc = ffn_y_num(y, m, "p90", true, FFN_UNIT_NONE, 1e-3, 1e3, p90);
    if (!rc && *p90 < *p10)
        rc = ffn_y_error(y, ffn_y_get(y, m, "p90", NULL), FFN_ERANGE,
                         "'p90' must be at least 'p10'");
    if (!rc) rc = ffn_y_num(y, m, "median_error", false, FFN_UNIT_NONE, 0.0, 100.0, med);
    uint64_t n = 0;
    if (!rc) rc = ffn_y_u64(y, m, "points", false, 0, 100000000, &n);
    *points = (uint32_t)n;
    return rc;
}

/* attention: {decode: {kv16: {...}, kv8: {...}}, prefill: {...}, source: |}: the fitted
 * attention kernels (docs/formats-hw.md). Absent: the coarse roofline. */
static int load_attention(ffn_ydoc *y, yaml_node_t *root, ffn_attn_model *a)
{
    static const char *const keys[] = {"decode", "prefill", "source", NULL};
    static const char *const classes[] = {"kv16", "kv8", NULL};
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, "attention", keys, &m);
    if (rc || !m) return rc;
    rc = ffn_y_str(y, m, "source", true, a->source, sizeof a->source);
    for (int ph = 0; ph < 2 && !rc; ph++) {
        const bool decode = ph == 0;
        const char *const kkeys[] = {
            "launch",     "per_seq",      decode ? "per_kv_head" : "per_token",
            "memory_max", "compute_max",  "p10",
            "p90",        "median_error", "points",
            NULL};
        yaml_node_t *pm = NULL;
        rc = sub_map(y, m, decode ? "decode" : "prefill", classes, &pm);
        for (int k = 0; k < FFN_ATTN_KV_COUNT && !rc && pm; k++) {
            yaml_node_t *km = NULL;
            rc = sub_map(y, pm, classes[k], kkeys, &km);
            if (rc || !km) continue;
            ffn_attn_eff *e = decode ? &a->decode[k] : &a->prefill[k];
            rc = ffn_y_num(y, km, "launch", true, FFN_UNIT_TIME, 0.0, 1.0, &e->launch_s);
            if (!rc) rc = ffn_y_num(y, km, "per_seq", true, FFN_UNIT_TIME, 0.0, 1.0, &e->seq_s);
            if (!rc) rc = ffn_y_num(y, km, kkeys[2], true, FFN_UNIT_TIME, 0.0, 1.0, &e->unit_s);
            if (!rc) rc = fraction(y, km, "memory_max", &e->memory_max);
            if (!rc) rc = fraction(y, km, "compute_max", &e->compute_max);
            if (!rc && !(e->memory_max > 0 && e->compute_max > 0))
                rc = ffn_y_error(y, km, FFN_ESCHEMA, "'%s' needs 'memory_max' and 'compute_max'",
                                 classes[k]);
            if (!rc) rc = load_spread(y, km, &e->p10, &e->p90, &e->median_abs, &e->points);
            e->fitted = !rc;
        }
    }
    return rc;
}

/* collectives: {all_reduce: [{gpus: 2, latency: 5 us, bus_bandwidth: 300 GB/s, ...}], ...,
 * source: |}: the scale-up link's fitted collectives (docs/formats-hw.md). */
static int load_collectives(ffn_ydoc *y, yaml_node_t *root, ffn_coll_model *c)
{
    static const char *const keys[] = {
        "all_reduce",        "all_gather", "reduce_scatter", "alltoall",
        "custom_all_reduce", "custom_max", "source",         NULL};
    static const char *const ekeys[] = {"gpus", "latency", "bus_bandwidth", "from",   "to",
                                        "p10",  "p90",     "median_error",  "points", NULL};
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, "collectives", keys, &m);
    if (rc || !m) return rc;
    rc = ffn_y_str(y, m, "source", true, c->source, sizeof c->source);
    if (!rc)
        rc = ffn_y_num(y, m, "custom_max", false, FFN_UNIT_BYTES, 0.0, 1e15, &c->custom_max_bytes);
    for (int op = 0; op < FFN_COLL_COUNT && !rc; op++) {
        yaml_node_t *seq = ffn_y_get(y, m, keys[op], NULL);
        if (!seq) continue;
        if ((rc = ffn_y_expect_seq(y, seq, keys[op]))) break;
        for (yaml_node_item_t *it = seq->data.sequence.items.start;
             it < seq->data.sequence.items.top && !rc; it++) {
            yaml_node_t *e = yaml_document_get_node(&y->doc, *it);
            if (c->n[op] >= FFN_COLL_MAX_SIZES) {
                rc = ffn_y_error(y, e, FFN_ERANGE, "more than %d group sizes in '%s'",
                                 FFN_COLL_MAX_SIZES, keys[op]);
                break;
            }
            rc = ffn_y_expect_map(y, e, keys[op]);
            if (!rc) rc = ffn_y_check_keys(y, e, ekeys);
            if (!rc) rc = no_empty_values(y, e, keys[op]);
            if (rc) break;
            ffn_coll_fit *f = &c->fit[op][c->n[op]];
            uint64_t g = 0;
            rc = ffn_y_u64(y, e, "gpus", true, 2, DEV_HI, &g);
            f->gpus = (uint32_t)g;
            if (!rc && c->n[op] > 0 && f->gpus <= c->fit[op][c->n[op] - 1].gpus)
                rc = ffn_y_error(y, ffn_y_get(y, e, "gpus", NULL), FFN_ESCHEMA,
                                 "'gpus' must rise from one entry to the next (%u after %u)",
                                 f->gpus, c->fit[op][c->n[op] - 1].gpus);
            if (!rc)
                rc = ffn_y_num(y, e, "latency", true, FFN_UNIT_TIME, 0.0, LAT_HI, &f->latency_s);
            if (!rc)
                rc = ffn_y_num(y, e, "bus_bandwidth", true, FFN_UNIT_BPS, LINK_BW_LO, LINK_BW_HI,
                               &f->bus_bps);
            if (!rc) rc = ffn_y_num(y, e, "from", false, FFN_UNIT_BYTES, 0.0, 1e15, &f->lo_bytes);
            if (!rc) rc = ffn_y_num(y, e, "to", false, FFN_UNIT_BYTES, 0.0, 1e15, &f->hi_bytes);
            if (!rc) rc = load_spread(y, e, &f->p10, &f->p90, &f->median_abs, &f->points);
            if (!rc) c->n[op]++;
        }
    }
    return rc;
}

/* fit: {median_error: 0.05, worst_error: 0.12, points: 20, held_out_median: 0.08, failed: false}
 * (ffnroof calibrate). Absent: nothing recorded. */
static int load_fit(ffn_ydoc *y, yaml_node_t *root, ffn_fit_quality *q)
{
    static const char *const keys[] = {"median_error",    "worst_error", "points",
                                       "held_out_median", "failed",      NULL};
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, "fit", keys, &m);
    if (rc || !m) return rc;
    q->recorded = true;
    rc = ffn_y_num(y, m, "median_error", false, FFN_UNIT_NONE, 0.0, 1e6, &q->median_error);
    if (!rc) rc = ffn_y_num(y, m, "worst_error", false, FFN_UNIT_NONE, 0.0, 1e6, &q->worst_error);
    if (!rc)
        rc =
            ffn_y_num(y, m, "held_out_median", false, FFN_UNIT_NONE, 0.0, 1e6, &q->held_out_median);
    uint64_t pts = 0;
    if (!rc) rc = ffn_y_u64(y, m, "points", false, 0, 100000000, &pts);
    q->points = (uint32_t)pts;
    if (!rc) rc = ffn_y_bool(y, m, "failed", false, &q->failed);
    return rc;
}

/* dequant_cost: {int8: 2.9, int4: 4.1} (vector ops a weight's dequantisation costs a GEMM;
 * only the integer weight formats have it) and memory_max_gemv_by_dtype: {fp32: 0.7, bf16:
 * 0.36, int8: 0.9, int4: 0.5} (each weight format's decode stream's fraction of the
 * bandwidth), measured (docs/formats-hw.md). */
static int load_dequant(ffn_ydoc *y, yaml_node_t *eff, ffn_eff *e)
{
    static const char *const qkeys[] = {"int8", "int4", NULL};
    static const ffn_dtype qdts[] = {FFN_DT_INT8, FFN_DT_INT4};
    yaml_node_t *m = NULL;
    int rc = sub_map(y, eff, "dequant_cost", qkeys, &m);
    for (int i = 0; !rc && m && i < 2; i++)
        rc = ffn_y_num(y, m, qkeys[i], false, FFN_UNIT_NONE, 1.0, 64.0, &e->dequant_cost[qdts[i]]);
    if (!rc) rc = sub_map(y, eff, "memory_max_gemv_by_dtype", dtype_keys, &m);
    for (int d = 0; !rc && m && d < FFN_DT_COUNT; d++)
        rc = fraction(y, m, dtype_keys[d], &e->memory_max_gemv_dt[d]);
    return rc;
}

/* level_max: {LEVEL: fraction, ...}, keyed by the names of the spec's onchip levels. */
static int load_level_max(ffn_ydoc *y, yaml_node_t *eff, const ffn_hw *hw, ffn_eff *e)
{
    const char *names[FFN_HW_MAX_LEVELS + 1];
    for (int i = 0; i < hw->n_levels; i++)
        names[i] = hw->levels[i].name;
    names[hw->n_levels] = NULL;
    yaml_node_t *key = NULL, *m = ffn_y_get(y, eff, "level_max", &key);
    if (!m) return 0;
    if (hw->n_levels == 0)
        return ffn_y_error(y, key ? key : m, FFN_ESCHEMA,
                           "'level_max' needs the spec's 'onchip' levels; this spec has none");
    yaml_node_t *mm = NULL;
    int rc = sub_map(y, eff, "level_max", names, &mm);
    for (int i = 0; !rc && i < hw->n_levels; i++)
        rc = fraction(y, mm, names[i], &e->level_max[i]);
    return rc;
}

static int load_efficiency(ffn_ydoc *y, yaml_node_t *root, const ffn_hw *hw, ffn_eff *e)
{
    static const char *const allowed[] = {"compute_max",
                                          "compute_max_by_dtype",
                                          "compute_half",
                                          "memory_max",
                                          "memory_half",
                                          "memory_max_gemv",
                                          "tiles",
                                          "tiles_by_dtype",
                                          "launch",
                                          "harness",
                                          "overlap",
                                          "source",
                                          "util_by_dtype",
                                          "memory_max_elem",
                                          "dequant_cost",
                                          "memory_max_gemv_by_dtype",
                                          "level_max",
                                          "launch_by_dtype",
                                          "quant_row_by_dtype",
                                          "block",
                                          "kstep",
                                          "gemm_model",
                                          "fixup",
                                          "kernels_by_dtype",
                                          NULL};
    /* Defaults: the ideal roofline (no ramp, no waves, no launch cost, perfect overlap). */
    e->compute_max = 1.0;
    e->memory_max = 1.0;
    yaml_node_t *m = NULL;
    int rc = sub_map(y, root, "efficiency", allowed, &m);
    if (rc || !m) return rc;
    rc = fraction(y, m, "compute_max", &e->compute_max);
    if (!rc) {
        /* Devices whose dtypes run on different units (AVX-512 fp32 vs AMX bf16) reach
         * different fractions of their peaks. */
        yaml_node_t *bd = NULL;
        rc = sub_map(y, m, "compute_max_by_dtype", dtype_keys, &bd);
        for (int d = 0; !rc && bd && d < FFN_DT_COUNT; d++)
            rc = fraction(y, bd, dtype_keys[d], &e->compute_max_dt[d]);
    }
    if (!rc)
        rc = ffn_y_num(y, m, "compute_half", false, FFN_UNIT_FLOP, 0.0, 1e18,
                       &e->compute_half_flops);
    if (!rc) rc = fraction(y, m, "memory_max", &e->memory_max);
    if (!rc) rc = fraction(y, m, "memory_max_gemv", &e->memory_max_gemv);
    if (!rc)
        rc =
            ffn_y_num(y, m, "memory_half", false, FFN_UNIT_BYTES, 0.0, 1e15, &e->memory_half_bytes);
    if (!rc) rc = fraction(y, m, "memory_max_elem", &e->memory_max_elem);
    if (!rc) rc = load_tiles(y, m, e->tiles, &e->n_tiles);
    if (!rc) rc = load_tiles_by_dtype(y, m, e);
    if (!rc) rc = load_util_by_dtype(y, m, e);
    if (!rc) rc = load_dequant(y, m, e);
    if (!rc) rc = load_level_max(y, m, hw, e);
    if (!rc) rc = ffn_y_num(y, m, "launch", false, FFN_UNIT_TIME, 0.0, 1.0, &e->launch_s);
    if (!rc) rc = ffn_y_num(y, m, "harness", false, FFN_UNIT_TIME, 0.0, 1.0, &e->harness_s);
    if (!rc) rc = ffn_y_num(y, m, "block", false, FFN_UNIT_TIME, 0.0, 1e-2, &e->block_s);
    if (!rc) rc = ffn_y_num(y, m, "kstep", false, FFN_UNIT_TIME, 0.0, 1e-3, &e->kstep_s);
    if (!rc) rc = ffn_y_num(y, m, "fixup", false, FFN_UNIT_TIME, 0.0, 1e-2, &e->fixup_s);
    if (!rc) rc = load_kernel_rules(y, m, e);
    if (!rc) {
        /* gemm_model: waves (the default) or pipeline (docs/model.md, "The tile pipeline") */
        char gm[16] = "";
        rc = ffn_y_str(y, m, "gemm_model", false, gm, sizeof gm);
        if (!rc && gm[0]) {
            if (!strcmp(gm, "pipeline"))
                e->pipeline = true;
            else if (strcmp(gm, "waves"))
                rc = ffn_y_error(y, ffn_y_get(y, m, "gemm_model", NULL), FFN_ESCHEMA,
                                 "unknown gemm_model '%s' (known: waves, pipeline)", gm);
        }
        if (!rc && e->pipeline && e->n_tiles == 0)
            rc = ffn_y_error(y, ffn_y_get(y, m, "gemm_model", NULL), FFN_ESCHEMA,
                             "'gemm_model: pipeline' needs the device's 'tiles'");
    }
    if (!rc) {
        /* launch_by_dtype: {fp8: 6.2 us, ...}: a GEMM's fixed cost per compute dtype */
        yaml_node_t *ld = NULL;
        rc = sub_map(y, m, "launch_by_dtype", dtype_keys, &ld);
        for (int d = 0; !rc && ld && d < FFN_DT_COUNT; d++)
            rc = ffn_y_num(y, ld, dtype_keys[d], false, FFN_UNIT_TIME, 0.0, 1.0, &e->launch_dt[d]);
    }
    if (!rc) {
        /* quant_row_by_dtype: {fp8: 6.4 ns}: quantising one token row of a GEMM's input */
        yaml_node_t *qr = NULL;
        rc = sub_map(y, m, "quant_row_by_dtype", dtype_keys, &qr);
        for (int d = 0; !rc && qr && d < FFN_DT_COUNT; d++)
            rc = ffn_y_num(y, qr, dtype_keys[d], false, FFN_UNIT_TIME, 0.0, 1e-3,
                           &e->quant_row_s[d]);
    }
    if (!rc) {
        yaml_node_t *v = ffn_y_get(y, m, "overlap", NULL);
        if (v) {
            rc = ffn_y_node_num(y, v, "overlap", FFN_UNIT_NONE, 0.0, 64.0, &e->overlap_p);
            /* p-norms below 1 are not norms: time would shrink when one side grows. */
            if (!rc && e->overlap_p > 0.0 && e->overlap_p < 1.0)
                rc = ffn_y_error(y, v, FFN_ERANGE,
                                 "'overlap' must be 0 (max) or a p-norm exponent in [1, 64]");
        }
    }
    if (!rc) {
        /* Kept in the document only (any length), but it must be text. */
        yaml_node_t *src = ffn_y_get(y, m, "source", NULL);
        if (src && !ffn_y_text(src)) rc = ffn_y_error(y, src, FFN_ESCHEMA, "'source' must be text");
    }
    return rc;
}

static int load_derived(ffn_ydoc *y, yaml_node_t *root)
{
    yaml_node_t *s = ffn_y_get(y, root, "derived", NULL);
    if (!s) return 0;
    int rc = ffn_y_expect_seq(y, s, "derived");
    if (rc) return rc;
    for (yaml_node_item_t *it = s->data.sequence.items.start; it < s->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, *it);
        if (!ffn_y_text(e))
            return ffn_y_error(y, e, FFN_ESCHEMA,
                               "each 'derived' entry must be text (quote it if it has a ':')");
    }
    return 0;
}

/* The dtypes family `fam` has matrix units for, from arch/families.yaml in the spec's folder
 * (`FAMILY: {units: [fp32, ...], source: ...}`); *found false when there is no such file (a
 * spec outside hw/: the family is then not checked). */
static int family_units(ffn_ydoc *y, yaml_node_t *famv, const char *fam, bool units[FFN_DT_COUNT],
                        bool *found)
{
    *found = false;
    char path[sizeof y->path + 16];
    const char *slash = strrchr(y->path, '/');
    const int dir = slash ? (int)(slash - y->path) + 1 : 0;
    snprintf(path, sizeof path, "%.*sarch/families.yaml", dir, y->path);
    FILE *probe = fopen(path, "r");
    if (!probe) return 0;
    fclose(probe);
    ffn_diag fd;
    ffn_ydoc f;
    int rc = ffn_ydoc_load(&f, path, &fd);
    yaml_node_t *root = rc ? NULL : ffn_ydoc_root(&f);
    if (!rc) rc = ffn_y_expect_map(&f, root, "a families file");
    yaml_node_t *e = rc ? NULL : ffn_y_get(&f, root, fam, NULL);
    if (!rc && !e) {
        ffn_ydoc_release(&f);
        return ffn_y_error(y, famv, FFN_ESCHEMA, "unknown family '%s' (not in %s)", fam, path);
    }
    yaml_node_t *u = rc ? NULL : ffn_y_get(&f, e, "units", NULL);
    if (!rc && !u) rc = ffn_y_error(&f, e, FFN_ESCHEMA, "family '%s' has no 'units'", fam);
    if (!rc) rc = ffn_y_expect_seq(&f, u, "units");
    for (yaml_node_item_t *it = rc ? NULL : u->data.sequence.items.start;
         !rc && it < u->data.sequence.items.top; it++) {
        const char *t = ffn_y_text(yaml_document_get_node(&f.doc, *it));
        ffn_dtype d;
        if (!t || ffn_dtype_parse(t, &d))
            rc = ffn_y_error(&f, yaml_document_get_node(&f.doc, *it), FFN_ESCHEMA,
                             "'units' lists dtypes (fp32, ..., nvfp4, mxfp4)");
        else
            units[d] = true;
    }
    ffn_ydoc_release(&f);
    if (rc) return ffn_diag_set(y->diag, rc, fd.file, fd.line, fd.col, "%s", fd.msg);
    *found = true;
    return 0;
}

/* `family:` and, where the family is known, no peak for a format it has no units for. */
static int load_family(ffn_ydoc *y, yaml_node_t *root, ffn_hw *hw)
{
    int rc = ffn_y_str(y, root, "family", false, hw->family, sizeof hw->family);
    if (rc || !hw->family[0]) return rc;
    bool units[FFN_DT_COUNT] = {false}, found = false;
    rc = family_units(y, ffn_y_get(y, root, "family", NULL), hw->family, units, &found);
    if (rc || !found) return rc;
    yaml_node_t *peak = ffn_y_get(y, root, "peak", NULL);
    for (int d = 0; d < FFN_DT_COUNT; d++) {
        yaml_node_t *k = NULL;
        if (units[d] || !peak || !ffn_y_get(y, peak, dtype_keys[d], &k)) continue;
        return ffn_y_error(y, k, FFN_ESCHEMA,
                           "'peak.%s': the %s family has no %s units (arch/families.yaml); such "
                           "weights run through a dequantising path: leave the key out",
                           dtype_keys[d], hw->family, dtype_keys[d]);
    }
    return 0;
}

static int load_all(ffn_ydoc *y, ffn_hw *hw)
{
    static const char *const allowed[] = {"name",    "vendor",     "kind",        "family",
                                          "source",  "derived",    "peak",        "compute_units",
                                          "clock",   "memory",     "onchip",      "interconnect",
                                          "network", "efficiency", "power",       "uncertainty",
                                          "fit",     "attention",  "collectives", NULL};
    yaml_node_t *root = ffn_ydoc_root(y);
    int rc = ffn_y_expect_map(y, root, "a hardware spec");
    if (!rc) rc = ffn_y_check_keys(y, root, allowed);
    if (!rc) rc = ffn_y_str(y, root, "name", true, hw->name, sizeof hw->name);
    if (!rc) rc = ffn_y_str(y, root, "vendor", true, hw->vendor, sizeof hw->vendor);
    if (!rc) {
        const char *const kind_names[] = {ffn_hw_kind_name(FFN_HW_GPU),
                                          ffn_hw_kind_name(FFN_HW_CPU),
                                          ffn_hw_kind_name(FFN_HW_ACCEL), NULL};
        int k = 0;
        rc = ffn_y_enum(y, root, "kind", true, kind_names, &k);
        hw->kind = (ffn_hw_kind)k;
    }
    if (!rc) rc = ffn_y_str(y, root, "source", true, hw->source, sizeof hw->source);
    if (!rc) rc = load_derived(y, root);
    if (!rc) rc = load_peak(y, root, hw);
    if (!rc) rc = load_family(y, root, hw);
    if (!rc) {
        uint64_t cu = 0;
        rc = ffn_y_u64(y, root, "compute_units", true, 1, CU_HI, &cu);
        hw->compute_units = (uint32_t)cu;
    }
    if (!rc)
        rc = ffn_y_num(y, root, "clock", false, FFN_UNIT_FREQ, CLOCK_LO, CLOCK_HI, &hw->clock_hz);
    if (!rc) rc = load_memory(y, root, hw);
    if (!rc) rc = load_onchip(y, root, hw);
    hw->devices_per_node = 1;
    if (!rc) rc = load_link(y, root, "interconnect", &hw->scaleup, &hw->devices_per_node);
    if (!rc) rc = load_link(y, root, "network", &hw->scaleout, NULL);
    if (!rc) rc = load_efficiency(y, root, hw, &hw->eff);
    if (!rc) rc = load_attention(y, root, &hw->attn);
    if (!rc) rc = load_collectives(y, root, &hw->scaleup.coll);
    if (!rc) rc = load_uncertainty(y, root, &hw->unc);
    if (!rc) rc = load_fit(y, root, &hw->fit);
    if (!rc) {
        static const char *const power_keys[] = {"tdp", NULL};
        yaml_node_t *p = NULL;
        rc = sub_map(y, root, "power", power_keys, &p);
        if (!rc && p) rc = ffn_y_num(y, p, "tdp", true, FFN_UNIT_POWER, TDP_LO, TDP_HI, &hw->tdp_w);
    }
    return rc;
}

int ffn_hw_load(const char *path, ffn_hw *hw, ffn_diag *diag)
{
    ffn_diag_clear(diag);
    if (!hw) return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0, "no hw struct given");
    memset(hw, 0, sizeof *hw);
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (!rc) rc = load_all(&y, hw);
    ffn_ydoc_release(&y);
    if (rc) memset(hw, 0, sizeof *hw);
    return rc;
}
