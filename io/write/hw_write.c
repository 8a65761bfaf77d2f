/* Writer for hardware specs: the inverse of io/load/hw_load.c, used by `ffnroof calibrate` to leave
 * a DIR/hw.yaml that loads back. Every number is written in the shortest human unit that parses
 * back (through ffn_units_parse) to exactly the same double, so a write -> load round trip is
 * exact. The file is written next to its destination, loaded back as a check, and only then
 * rename()d into place. The `derived:` list and `efficiency.source` are not part of ffn_hw and
 * are therefore not written. */
#include "ffnroof/hw.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffnroof/units.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/hw_write.h"

typedef struct {
    const char *sym;
    double mult;
} prefix;

static const prefix pre_big[] = {{"", 1.0},
                                 {"k", 1e3},
                                 {"M", 1e6},
                                 {"G", 1e9},
                                 {"T", 1e12},
                                 {"P", 1e15},
                                 {"E", 1e18},
                                 {"Ki", 1024.0},
                                 {"Mi", 1048576.0},
                                 {"Gi", 1073741824.0},
                                 {"Ti", 1099511627776.0},
                                 {"Pi", 1125899906842624.0},
                                 {NULL, 0}};
static const prefix pre_dec[] = {{"", 1.0},   {"k", 1e3},  {"M", 1e6},  {"G", 1e9},
                                 {"T", 1e12}, {"P", 1e15}, {"E", 1e18}, {NULL, 0}};
static const prefix pre_time[] = {{"", 1.0}, {"m", 1e-3}, {"u", 1e-6}, {"n", 1e-9}, {NULL, 0}};

/* Shortest "<number> <prefix><unit>" that ffn_units_parse() reads back as exactly v. The base
 * unit with %.17g always qualifies, so this never fails for a finite v. */
static void exact_quantity(double v, ffn_unit kind, char *buf, size_t n)
{
    const char *sym = "";
    const prefix *pre = pre_dec;
    switch (kind) {
    case FFN_UNIT_BYTES:
        sym = "B", pre = pre_big;
        break;
    case FFN_UNIT_BPS:
        sym = "B/s", pre = pre_big;
        break;
    case FFN_UNIT_FLOPS:
        sym = "FLOPS";
        break;
    case FFN_UNIT_FLOP:
        sym = "FLOP";
        break;
    case FFN_UNIT_TIME:
        sym = "s", pre = pre_time;
        break;
    case FFN_UNIT_POWER:
        sym = "W";
        break;
    case FFN_UNIT_FREQ:
        sym = "Hz";
        break;
    default:
        break;
    }
    char best[64] = "";
    for (const prefix *p = pre; p->sym; p++) {
        double x = v / p->mult;
        for (int prec = 1; prec <= 17; prec++) {
            char cand[64];
            if (kind == FFN_UNIT_NONE)
                snprintf(cand, sizeof cand, "%.*g", prec, x);
            else
                snprintf(cand, sizeof cand, "%.*g %s%s", prec, x, p->sym, sym);
            double back = 0;
            if (ffn_units_parse(cand, kind, &back, NULL, 0) == 0 && back == v) {
                if (!best[0] || strlen(cand) < strlen(best)) memcpy(best, cand, sizeof cand);
                break;
            }
        }
        if (kind == FFN_UNIT_NONE) break;
    }
    if (!best[0])
        snprintf(best, sizeof best, "%.17g%s%s", v, kind == FFN_UNIT_NONE ? "" : " ", sym);
    snprintf(buf, n, "%s", best);
}

/* A YAML double-quoted scalar: always valid, exact for any UTF-8 text. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\x%02x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Multi-line text reads best as a literal block; use one only where it is certain to read back
 * unchanged (no control characters, no leading blank or space, no whitespace-only lines). */
static bool literal_ok(const char *s)
{
    if (!strchr(s, '\n') || s[0] == ' ' || s[0] == '\n') return false;
    const char *line = s;
    for (const unsigned char *p = (const unsigned char *)s;; p++) {
        if (*p == '\n' || *p == '\0') {
            bool blank = true;
            for (const char *q = line; q < (const char *)p; q++)
                if (*q != ' ') blank = false;
            if (blank && (const char *)p > line) return false; /* spaces only */
            if (!*p) break;
            line = (const char *)p + 1;
            continue;
        }
        if (*p < 0x20 || *p == 0x7f) return false;
    }
    return true;
}

static void put_text(FILE *f, const char *key, const char *s)
{
    if (!literal_ok(s)) {
        fprintf(f, "%s: ", key);
        put_quoted(f, s);
        fputc('\n', f);
        return;
    }
    size_t len = strlen(s), nl = 0;
    while (nl < len && s[len - 1 - nl] == '\n')
        nl++;
    /* Chomping: "|-" no final newline, "|" exactly one, "|+" keep them all. */
    fprintf(f, "%s: |%s\n", key, nl == 0 ? "-" : nl == 1 ? "" : "+");
    fputs("  ", f);
    for (const char *p = s; *p; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1] && p[1] != '\n') fputs("  ", f);
    }
    if (nl == 0) fputc('\n', f);
}

static void put_num(FILE *f, const char *indent, const char *key, double v, ffn_unit kind)
{
    char q[64];
    exact_quantity(v, kind, q, sizeof q);
    fprintf(f, "%s%s: %s\n", indent, key, q);
}

static void put_link(FILE *f, const char *key, const ffn_link *l, uint32_t devices_per_node)
{
    fprintf(f, "%s:\n  kind: ", key);
    put_quoted(f, l->kind);
    fputc('\n', f);
    put_num(f, "  ", "bandwidth", l->bandwidth_bps, FFN_UNIT_BPS);
    if (l->latency_s > 0) put_num(f, "  ", "latency", l->latency_s, FFN_UNIT_TIME);
    if (devices_per_node) fprintf(f, "  devices_per_node: %u\n", devices_per_node);
}

/* A tile list as a flow sequence: [[256, 128], [128, 128]]. */
static void put_tiles(FILE *f, const uint32_t (*tiles)[2], int n)
{
    fputc('[', f);
    for (int i = 0; i < n && i < FFN_HW_MAX_TILES; i++)
        fprintf(f, "%s[%u, %u]", i ? ", " : "", tiles[i][0], tiles[i][1]);
    fputc(']', f);
}

static void put_kernel_rule(FILE *f, const ffn_kernel_rule *r)
{
    fputc('{', f);
    if (r->m_max) fprintf(f, "m: %u, ", r->m_max);
    if (r->n_max) fprintf(f, "n: %u, ", r->n_max);
    if (r->kind == FFN_RULE_TILE) {
        fprintf(f, "tile: [%u, %u, %u]}", r->tm, r->tn, r->tk);
    } else if (r->kind == FFN_RULE_WAVES) {
        fputs("waves: {rows: [", f);
        for (int j = 0; j < r->n_rows; j++)
            fprintf(f, "%s%u", j ? ", " : "", r->rows[j]);
        fprintf(f, "], cols: [%u, %u], depth: %u}}", r->col_step, r->col_max, r->tk);
    } else {
        fputs(r->kind == FFN_RULE_WHOLE ? "whole: true}" : "best: true}", f);
    }
}

static bool eff_is_default(const ffn_eff *e)
{
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (e->compute_max_dt[d] > 0 || e->tiles_dt[d].n_tiles > 0 || e->util_gamma[d] > 0 ||
            e->dequant_cost[d] > 0 || e->memory_max_gemv_dt[d] > 0 || e->launch_dt[d] > 0 ||
            e->quant_row_s[d] > 0)
            return false;
    if (e->memory_max_elem > 0 || e->block_s > 0 || e->kstep_s > 0 || e->pipeline) return false;
    for (int i = 0; i < FFN_HW_MAX_LEVELS; i++)
        if (e->level_max[i] > 0) return false;
    return e->compute_max == 1.0 && e->compute_half_flops == 0.0 && e->memory_max == 1.0 &&
           e->memory_half_bytes == 0.0 && e->memory_max_gemv == 0.0 && e->n_tiles == 0 &&
           e->launch_s == 0.0 && e->harness_s == 0.0 && e->overlap_p == 0.0;
}

/* "  key:" and one "    dtype: value" line per dtype with a value, in unit; nothing when none
 * has */
static void put_by_dtype(FILE *f, const char *key, const double *v, const char *const *dt,
                         ffn_unit unit)
{
    bool any = false;
    for (int d = 0; d < FFN_DT_COUNT; d++)
        any = any || v[d] > 0;
    if (!any) return;
    fprintf(f, "  %s:\n", key);
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (v[d] > 0) put_num(f, "    ", dt[d], v[d], unit);
}

/* A block's `source:` text, indented under it. */
static void put_source(FILE *f, const char *indent, const char *s)
{
    fprintf(f, "%ssource: |\n", indent);
    const char *p = s;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%s  %.*s\n", indent, (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

static void put_attention(FILE *f, const ffn_attn_model *a)
{
    static const char *const classes[] = {"kv16", "kv8"};
    bool any = false;
    for (int k = 0; k < FFN_ATTN_KV_COUNT; k++)
        any = any || a->decode[k].fitted || a->prefill[k].fitted;
    if (!any) return;
    fputs("attention:\n", f);
    for (int ph = 0; ph < 2; ph++) {
        const ffn_attn_eff *e = ph == 0 ? a->decode : a->prefill;
        if (!e[0].fitted && !e[1].fitted) continue;
        fprintf(f, "  %s:\n", ph == 0 ? "decode" : "prefill");
        for (int k = 0; k < FFN_ATTN_KV_COUNT; k++) {
            if (!e[k].fitted) continue;
            char q[6][64];
            exact_quantity(e[k].launch_s, FFN_UNIT_TIME, q[0], sizeof q[0]);
            exact_quantity(e[k].seq_s, FFN_UNIT_TIME, q[1], sizeof q[1]);
            exact_quantity(e[k].unit_s, FFN_UNIT_TIME, q[2], sizeof q[2]);
            fprintf(f, "    %s:\n      launch: %s\n      per_seq: %s\n      %s: %s\n", classes[k],
                    q[0], q[1], ph == 0 ? "per_kv_head" : "per_token", q[2]);
            put_num(f, "      ", "memory_max", e[k].memory_max, FFN_UNIT_NONE);
            put_num(f, "      ", "compute_max", e[k].compute_max, FFN_UNIT_NONE);
            put_num(f, "      ", "p10", e[k].p10, FFN_UNIT_NONE);
            put_num(f, "      ", "p90", e[k].p90, FFN_UNIT_NONE);
            put_num(f, "      ", "median_error", e[k].median_abs, FFN_UNIT_NONE);
            fprintf(f, "      points: %u\n", e[k].points);
        }
    }
    put_source(f, "  ", a->source[0] ? a->source : "(not recorded)");
}

static void put_collectives(FILE *f, const ffn_coll_model *c)
{
    static const char *const names[FFN_COLL_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                      "alltoall", "custom_all_reduce"};
    bool any = false;
    for (int op = 0; op < FFN_COLL_COUNT; op++)
        any = any || c->n[op] > 0;
    if (!any) return;
    fputs("collectives:\n", f);
    for (int op = 0; op < FFN_COLL_COUNT; op++) {
        if (c->n[op] <= 0) continue;
        fprintf(f, "  %s:\n", names[op]);
        for (int i = 0; i < c->n[op]; i++) {
            const ffn_coll_fit *e = &c->fit[op][i];
            char lat[64], bw[64], lo[64], hi[64], p10[64], p90[64], med[64];
            exact_quantity(e->latency_s, FFN_UNIT_TIME, lat, sizeof lat);
            exact_quantity(e->bus_bps, FFN_UNIT_BPS, bw, sizeof bw);
            exact_quantity(e->lo_bytes, FFN_UNIT_BYTES, lo, sizeof lo);
            exact_quantity(e->hi_bytes, FFN_UNIT_BYTES, hi, sizeof hi);
            exact_quantity(e->p10, FFN_UNIT_NONE, p10, sizeof p10);
            exact_quantity(e->p90, FFN_UNIT_NONE, p90, sizeof p90);
            exact_quantity(e->median_abs, FFN_UNIT_NONE, med, sizeof med);
            fprintf(f,
                    "    - {gpus: %u, latency: %s, bus_bandwidth: %s, from: %s, to: %s, p10: %s, "
                    "p90: %s, median_error: %s, points: %u}\n",
                    e->gpus, lat, bw, lo, hi, p10, p90, med, e->points);
        }
    }
    if (c->custom_max_bytes > 0)
        put_num(f, "  ", "custom_max", c->custom_max_bytes, FFN_UNIT_BYTES);
    put_source(f, "  ", c->source[0] ? c->source : "(not recorded)");
}

static void write_spec(FILE *f, const ffn_hw *hw)
{
    static const char *const dt[FFN_DT_COUNT] = {"fp32", "tf32", "bf16",      "fp16",  "fp8",
                                                 "int8", "int4", "fp8-block", "nvfp4", "mxfp4"};
    fputs("# Hardware spec written by ffnroof; format: docs/formats-hw.md\n", f);
    fputs("name: ", f);
    put_quoted(f, hw->name);
    fputs("\nvendor: ", f);
    put_quoted(f, hw->vendor);
    fprintf(f, "\nkind: %s\n", ffn_hw_kind_name(hw->kind));
    if (hw->family[0]) {
        fputs("family: ", f);
        put_quoted(f, hw->family);
        fputc('\n', f);
    }
    put_text(f, "source", hw->source);
    fputs("peak:\n", f);
    for (int d = 0; d < FFN_DT_COUNT; d++) /* a format without units of its own has no key */
        if (hw->peak_flops[d] > 0 && ffn_dtype_unit((ffn_dtype)d) == (ffn_dtype)d)
            put_num(f, "  ", dt[d], hw->peak_flops[d], FFN_UNIT_FLOPS);
    fprintf(f, "compute_units: %u\n", hw->compute_units);
    if (hw->clock_hz > 0) put_num(f, "", "clock", hw->clock_hz, FFN_UNIT_FREQ);
    fputs("memory:\n", f);
    put_num(f, "  ", "capacity", hw->mem_capacity_bytes, FFN_UNIT_BYTES);
    put_num(f, "  ", "bandwidth", hw->mem_bandwidth_bps, FFN_UNIT_BPS);
    if (hw->n_levels > 0) {
        fputs("onchip:\n", f);
        for (int i = 0; i < hw->n_levels && i < FFN_HW_MAX_LEVELS; i++) {
            const ffn_mem_level *l = &hw->levels[i];
            char c[64], b[64];
            exact_quantity(l->capacity_bytes, FFN_UNIT_BYTES, c, sizeof c);
            fputs("  - {name: ", f);
            put_quoted(f, l->name);
            fprintf(f, ", capacity: %s", c);
            if (l->bandwidth_bps > 0) {
                exact_quantity(l->bandwidth_bps, FFN_UNIT_BPS, b, sizeof b);
                fprintf(f, ", bandwidth: %s", b);
            }
            if (l->slices > 0) fprintf(f, ", slices: %u", l->slices);
            if (l->scratchpad) fputs(", scratchpad: true", f);
            if (l->no_partial) fputs(", keeps_part: false", f);
            fputs("}\n", f);
        }
    }
    if (hw->scaleup.kind[0])
        put_link(f, "interconnect", &hw->scaleup, hw->devices_per_node ? hw->devices_per_node : 1);
    if (hw->scaleout.kind[0]) put_link(f, "network", &hw->scaleout, 0);
    const ffn_eff *e = &hw->eff;
    if (!eff_is_default(e)) {
        fputs("efficiency:\n", f);
        put_num(f, "  ", "compute_max", e->compute_max, FFN_UNIT_NONE);
        put_by_dtype(f, "compute_max_by_dtype", e->compute_max_dt, dt, FFN_UNIT_NONE);
        put_num(f, "  ", "compute_half", e->compute_half_flops, FFN_UNIT_FLOP);
        put_num(f, "  ", "memory_max", e->memory_max, FFN_UNIT_NONE);
        put_num(f, "  ", "memory_half", e->memory_half_bytes, FFN_UNIT_BYTES);
        if (e->memory_max_gemv > 0)
            put_num(f, "  ", "memory_max_gemv", e->memory_max_gemv, FFN_UNIT_NONE);
        fputs("  tiles: ", f);
        put_tiles(f, e->tiles, e->n_tiles);
        fputc('\n', f);
        bool by_dt = false;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            by_dt = by_dt || e->tiles_dt[d].n_tiles > 0;
        if (by_dt) {
            fputs("  tiles_by_dtype:\n", f);
            for (int d = 0; d < FFN_DT_COUNT; d++) {
                const ffn_tileset *t = &e->tiles_dt[d];
                if (t->n_tiles <= 0) continue;
                fprintf(f, "    %s: {tiles: ", dt[d]);
                put_tiles(f, t->tiles, t->n_tiles);
                if (t->min_rows) fprintf(f, ", min_rows: %u", t->min_rows);
                if (t->gemv_rows) fprintf(f, ", gemv_rows: %u", t->gemv_rows);
                fputs("}\n", f);
            }
        }
        bool util = false;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            util = util || e->util_gamma[d] > 0;
        if (util) {
            fputs("  util_by_dtype:\n", f);
            for (int d = 0; d < FFN_DT_COUNT; d++) {
                if (!(e->util_gamma[d] > 0)) continue;
                char g[64], a[64];
                exact_quantity(e->util_gamma[d], FFN_UNIT_NONE, g, sizeof g);
                exact_quantity(e->util_alpha[d], FFN_UNIT_NONE, a, sizeof a);
                fprintf(f, "    %s: {gamma: %s, alpha: %s}\n", dt[d], g, a);
            }
        }
        if (e->memory_max_elem > 0)
            put_num(f, "  ", "memory_max_elem", e->memory_max_elem, FFN_UNIT_NONE);
        put_by_dtype(f, "dequant_cost", e->dequant_cost, dt, FFN_UNIT_NONE);
        put_by_dtype(f, "memory_max_gemv_by_dtype", e->memory_max_gemv_dt, dt, FFN_UNIT_NONE);
        bool lm = false;
        for (int i = 0; i < hw->n_levels && i < FFN_HW_MAX_LEVELS; i++)
            lm = lm || e->level_max[i] > 0;
        if (lm) {
            fputs("  level_max:\n", f);
            for (int i = 0; i < hw->n_levels && i < FFN_HW_MAX_LEVELS; i++)
                if (e->level_max[i] > 0) {
                    char q[64];
                    exact_quantity(e->level_max[i], FFN_UNIT_NONE, q, sizeof q);
                    fputs("    ", f);
                    put_quoted(f, hw->levels[i].name);
                    fprintf(f, ": %s\n", q);
                }
        }
        put_num(f, "  ", "launch", e->launch_s, FFN_UNIT_TIME);
        put_by_dtype(f, "launch_by_dtype", e->launch_dt, dt, FFN_UNIT_TIME);
        put_by_dtype(f, "quant_row_by_dtype", e->quant_row_s, dt, FFN_UNIT_TIME);
        if (e->block_s > 0) put_num(f, "  ", "block", e->block_s, FFN_UNIT_TIME);
        if (e->kstep_s > 0) put_num(f, "  ", "kstep", e->kstep_s, FFN_UNIT_TIME);
        if (e->pipeline) fputs("  gemm_model: pipeline\n", f);
        if (e->fixup_s > 0) put_num(f, "  ", "fixup", e->fixup_s, FFN_UNIT_TIME);
        bool rules = false;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            rules = rules || e->rules_dt[d].n > 0;
        if (rules) {
            fputs("  kernels_by_dtype:\n", f);
            for (int d = 0; d < FFN_DT_COUNT; d++) {
                const ffn_kernel_rules *rl = &e->rules_dt[d];
                if (rl->n <= 0) continue;
                fprintf(f, "    %s:\n", dt[d]);
                for (int i = 0; i < rl->n; i++) {
                    fputs("      - ", f);
                    put_kernel_rule(f, &rl->r[i]);
                    fputc('\n', f);
                }
            }
        }
        if (e->harness_s > 0) put_num(f, "  ", "harness", e->harness_s, FFN_UNIT_TIME);
        put_num(f, "  ", "overlap", e->overlap_p, FFN_UNIT_NONE);
    }
    put_attention(f, &hw->attn);
    put_collectives(f, &hw->scaleup.coll);
    if (!hw->unc.is_default && hw->unc.p10 > 0 && hw->unc.p90 >= hw->unc.p10) {
        fputs("uncertainty:\n", f);
        put_num(f, "  ", "p10", hw->unc.p10, FFN_UNIT_NONE);
        put_num(f, "  ", "p90", hw->unc.p90, FFN_UNIT_NONE);
        if (hw->unc.points) fprintf(f, "  points: %u\n", hw->unc.points);
        if (hw->unc.median_abs > 0)
            put_num(f, "  ", "median_error", hw->unc.median_abs, FFN_UNIT_NONE);
        if (hw->unc.max_abs > 0) put_num(f, "  ", "max_error", hw->unc.max_abs, FFN_UNIT_NONE);
        bool by = false;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            by = by || hw->unc.dt_p10[d] > 0;
        if (by) {
            fputs("  by_dtype:\n", f);
            for (int d = 0; d < FFN_DT_COUNT; d++) {
                if (!(hw->unc.dt_p10[d] > 0)) continue;
                char a[64], b[64];
                exact_quantity(hw->unc.dt_p10[d], FFN_UNIT_NONE, a, sizeof a);
                exact_quantity(hw->unc.dt_p90[d], FFN_UNIT_NONE, b, sizeof b);
                fprintf(f, "    %s: {p10: %s, p90: %s}\n", dt[d], a, b);
            }
        }
    }
    if (hw->fit.recorded) {
        fputs("fit:\n", f);
        put_num(f, "  ", "median_error", hw->fit.median_error, FFN_UNIT_NONE);
        put_num(f, "  ", "worst_error", hw->fit.worst_error, FFN_UNIT_NONE);
        fprintf(f, "  points: %u\n", hw->fit.points);
        put_num(f, "  ", "held_out_median", hw->fit.held_out_median, FFN_UNIT_NONE);
        if (hw->fit.failed) fputs("  failed: true\n", f);
    }
    if (hw->tdp_w > 0) {
        fputs("power:\n", f);
        put_num(f, "  ", "tdp", hw->tdp_w, FFN_UNIT_POWER);
    }
}

int ffn_hw_write(const ffn_hw *hw, const char *path, ffn_diag *diag)
{
    ffn_diag_clear(diag);
    if (!hw || !path || !path[0])
        return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0, "no hw spec or no path given");
    if (!hw->name[0] || !hw->vendor[0] || !hw->source[0])
        return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0,
                            "cannot write a hw spec without name, vendor and source");

    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory");
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot create a temporary file: %s",
                              strerror(errno));
        free(tmp);
        return rc;
    }
    (void)fchmod(fd, 0644); /* mkstemp makes 0600; a spec is meant to be shared */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    write_spec(f, hw);
    int rc = 0;
    if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    if (fclose(f) != 0 && !rc)
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    if (!rc) {
        /* Refuse to publish a file that would not load: the reader's checks are the contract. */
        ffn_hw *back = malloc(sizeof *back);
        ffn_diag d2;
        if (!back)
            rc = ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory");
        else if ((rc = ffn_hw_load(tmp, back, &d2)) != 0)
            ffn_diag_set(diag, rc, path, 0, 0,
                         "refusing to write a spec that would not load "
                         "back: line %d col %d: %s",
                         d2.line, d2.col, d2.msg);
        free(back);
    }
    if (!rc && rename(tmp, path) != 0)
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot rename into place: %s",
                          strerror(errno));
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}
