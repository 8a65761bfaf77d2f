/* `ffnroof fit`: fit a device's efficiency model (docs/model.md, "Efficiency") to measured
 * GEMM or FFN-kernel times, print the efficiency block for its hw spec and the error of every
 * point; --check evaluates the spec's current parameters without fitting. An op table of
 * aiconfigurator's layout (docs/formats.md, "Op tables") is fitted on a stratified subsample of
 * its selected rows and checked on all of them, with an error summary per dtype and kernel; its
 * MoE tables are checked against include/ffnroof/moe_fused.h; its attention and communication
 * tables go to cli/fit_attn.c. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ffnroof/aic.h"
#include "ffnroof/fit.h"
#include "ffnroof/fitdata.h"
#include "ffnroof/hw.h"
#include "ffnroof/json.h"
#include "ffnroof/engine.h"
#include "ffnroof/moe_fused.h"
#include "ffnroof/sort.h"
#include "ffnroof/hw_write.h"
#include "fit_attn.h"

#define CMD "fit"
/* --rows ffn: the shapes of an FFN's projections, n and k at least this */
#define FFN_ROWS_MIN 256
#define FIT_POINTS_DEFAULT 4000

static void usage(FILE *fp)
{
    fputs("usage: ffnroof fit --hw NAME|PATH --data FILE [options]\n"
          "\n"
          "Fit the efficiency model of a device to measured times and print the fitted\n"
          "'efficiency:' block with the error of every point (of an op table: a summary per\n"
          "dtype and kernel).\n"
          "\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_HW, 0});
    fputs("  --data FILE      CSV 'm,n,k,time_ms' (GEMMs), 'm,d,f,act,time_ms' (FFN layers),\n"
          "                   the GPU kit's 'kind,dtype,m,n,k,time_<unit>' (bench/gpu/), or an\n"
          "                   op table of aiconfigurator's layout (TSV, plain or .gz: GEMM,\n"
          "                   attention and communication rows are fitted, MoE rows checked\n"
          "                   with --check, each by its engine's fused-MoE kernel family of\n"
          "                   hw/arch/engines.yaml; docs/formats.md)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_DTYPE, 0});
    fputs("  --rows ffn|all   op tables: the FFN shapes only, n and k >= 256 (ffn, default), or\n"
          "                   every row\n"
          "  --kernel NAME    op tables: only the rows of this kernel_source\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_ENGINE, 0});
    fputs("  --fit-points N   op tables: fit on at most N rows, a stratified subsample (dtype x\n"
          "                   decade of m x decade of n*k; the same rows every run) of the\n"
          "                   selected ones (default: 4000); the residuals cover them all\n"
          "  --points         op tables: list every row's error too\n"
          "  --fit LIST       parameters beyond compute_max and memory_max: launch, harness,\n"
          "                   overlap, compute-ramp, memory-ramp, by-dtype (compute_max per\n"
          "                   dtype), util (wave utilisation gamma - alpha/waves per dtype),\n"
          "                   gemv (one-row GEMM bandwidth), elem (elementwise bandwidth),\n"
          "                   level (the fraction of an on-chip level's bandwidth the warm\n"
          "                   points reach: rows after '#@ weights hot', the kit's --warm),\n"
          "                   launch-dt (a GEMM's fixed cost per compute dtype), gemv-dt (the\n"
          "                   one-row bandwidth per weight dtype), quant-row (what quantising\n"
          "                   one token row of a GEMM's input costs per compute dtype), floor\n"
          "                   (the latency floor of GEMMs with few tiles and long reductions),\n"
          "                   pipe (the tile pipeline's cost per tile and per split\n"
          "                   reduction: a spec with gemm_model: pipeline);\n"
          "                   l1 minimises the absolute log errors instead of their squares;\n"
          "                   hold-max keeps the spec's compute_max\n"
          "                   and memory_max (default: launch,overlap).\n"
          "                   'harness' fits the per-call overhead of the harness that measured\n"
          "                   the data (kept out of predictions) instead of the device launch\n"
          "                   cost, which then stays as the spec gives it; not both\n"
          "  --check          do not fit: report the errors of the spec's own parameters\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_OUT, FFN_O_FORMAT, 0});
    fputs("  -h, --help       this help\n"
          "\nExit codes: 0 ok, 1 failed, 2 bad usage or bad input (file:line:col).\n",
          fp);
}

typedef struct fit_args {
    const char *hw_name, *data, *out_path, *fit, *rows, *kernel, *engine;
    ffn_dtype dt;
    bool dt_given, check, points, all_rows;
    unsigned flags;
    uint64_t fit_points;
    ffn_format fmt;
} fit_args;

/* --fit a,b,c: the fitted parameters as FFN_FIT_* flags ("none" for the roofline alone). */
static int fit_flags(const char *list, unsigned *flags)
{
    static const char *const names[] = {
        "launch", "harness", "overlap", "compute-ramp", "memory-ramp", "by-dtype", "util",
        "gemv",   "elem",    "level",   "hold-max",     "launch-dt",   "gemv-dt",  "quant-row",
        "floor",  "pipe",    "l1",      "none",         NULL};
    static const unsigned bits[] = {
        FFN_FIT_LAUNCH,        FFN_FIT_HARNESS,     FFN_FIT_OVERLAP,
        FFN_FIT_COMPUTE_RAMP,  FFN_FIT_MEMORY_RAMP, FFN_FIT_COMPUTE_BY_DTYPE,
        FFN_FIT_WAVE_UTIL,     FFN_FIT_MEMORY_GEMV, FFN_FIT_MEMORY_ELEM,
        FFN_FIT_LEVEL,         FFN_FIT_HOLD_MAX,    FFN_FIT_LAUNCH_BY_DTYPE,
        FFN_FIT_GEMV_BY_DTYPE, FFN_FIT_QUANT_ROW,   FFN_FIT_FLOOR,
        FFN_FIT_PIPE,          FFN_FIT_L1,          0};
    *flags = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i, rc;
        if ((rc = ffn_cli_choice(CMD, "--fit", t, names, &i))) return rc;
        *flags |= bits[i];
    }
    return 0;
}

/* The command line into a; -1 when the command goes on, else the exit code. */
static int parse_args(int argc, char **argv, fit_args *a)
{
    *a = (fit_args){.dt = FFN_DT_FP16,
                    .flags = FFN_FIT_LAUNCH | FFN_FIT_OVERLAP,
                    .fit_points = FIT_POINTS_DEFAULT,
                    .fmt = FFN_FMT_TABLE};
    int rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_HW, &a->hw_name);
    ffn_cli_bind_str(&seen, FFN_O_DATA, &a->data);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &a->dt);
    ffn_cli_bind_str(&seen, FFN_O_FIT, &a->fit);
    ffn_cli_bind_flag(&seen, FFN_O_CHECK, &a->check);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, false, &a->fmt);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &a->out_path);
    ffn_cli_bind_str(&seen, FFN_O_ROWS, &a->rows);
    ffn_cli_bind_str(&seen, FFN_O_KERNEL, &a->kernel);
    ffn_cli_bind_str(&seen, FFN_O_ENGINE, &a->engine);
    ffn_cli_bind_u64(&seen, FFN_O_FIT_POINTS, 1, FFN_AIC_MAX_ROWS, &a->fit_points);
    ffn_cli_bind_flag(&seen, FFN_O_POINTS, &a->points);
    if ((rc = ffn_cli_parse(CMD, argc, argv, NULL, &seen, NULL, usage, true)) >= 0) return rc;
    a->dt_given = ffn_cli_given(&seen, FFN_O_DTYPE);
    if (a->rows) {
        static const char *const names[] = {"ffn", "all", NULL};
        int i;
        if ((rc = ffn_cli_choice(CMD, "--rows", a->rows, names, &i))) return rc;
        a->all_rows = i == 1;
    }
    if (a->fit && (rc = fit_flags(a->fit, &a->flags))) return rc;
    if ((a->flags & FFN_FIT_LAUNCH) && (a->flags & FFN_FIT_HARNESS))
        return ffn_cli_usage(CMD, "--fit: launch and harness are one constant to the data; "
                                  "fit one of them");
    if (!a->hw_name) return ffn_cli_usage(CMD, "--hw is required");
    if (!a->data) return ffn_cli_usage(CMD, "--data is required");
    if (a->out_path && a->check)
        return ffn_cli_usage(CMD, "--out writes a fitted spec; not with --check");
    return -1;
}

/* ---- the efficiency block ------------------------------------------------------------------ */

static void json_eff(ffn_json *j, const ffn_hw *hw)
{
    const ffn_eff *e = &hw->eff;
    ffn_json_obj_begin(j, "efficiency");
    ffn_json_num(j, "compute_max", e->compute_max);
    ffn_json_num(j, "compute_half_flops", e->compute_half_flops);
    ffn_json_num(j, "memory_max", e->memory_max);
    ffn_json_num(j, "memory_half_bytes", e->memory_half_bytes);
    ffn_json_num(j, "launch_s", e->launch_s);
    ffn_json_num(j, "harness_s", e->harness_s);
    ffn_json_num(j, "overlap_p", e->overlap_p);
    ffn_json_num(j, "memory_max_gemv", e->memory_max_gemv);
    ffn_json_num(j, "memory_max_elem", e->memory_max_elem);
    ffn_json_obj_begin(j, "level_max");
    for (int l = 0; l < hw->n_levels; l++)
        if (e->level_max[l] > 0) ffn_json_num(j, hw->levels[l].name, e->level_max[l]);
    ffn_json_obj_end(j);
    ffn_json_obj_begin(j, "util_by_dtype");
    for (int k = 0; k < FFN_DT_COUNT; k++) {
        if (!(e->util_gamma[k] > 0)) continue;
        ffn_json_obj_begin(j, ffn_dtype_name((ffn_dtype)k));
        ffn_json_num(j, "gamma", e->util_gamma[k]);
        ffn_json_num(j, "alpha", e->util_alpha[k]);
        ffn_json_obj_end(j);
    }
    ffn_json_obj_end(j);
    ffn_json_obj_begin(j, "launch_by_dtype");
    for (int k = 0; k < FFN_DT_COUNT; k++)
        if (e->launch_dt[k] > 0) ffn_json_num(j, ffn_dtype_name((ffn_dtype)k), e->launch_dt[k]);
    ffn_json_obj_end(j);
    ffn_json_obj_begin(j, "quant_row_by_dtype");
    for (int k = 0; k < FFN_DT_COUNT; k++)
        if (e->quant_row_s[k] > 0) ffn_json_num(j, ffn_dtype_name((ffn_dtype)k), e->quant_row_s[k]);
    ffn_json_obj_end(j);
    ffn_json_obj_begin(j, "memory_max_gemv_by_dtype");
    for (int k = 0; k < FFN_DT_COUNT; k++)
        if (e->memory_max_gemv_dt[k] > 0)
            ffn_json_num(j, ffn_dtype_name((ffn_dtype)k), e->memory_max_gemv_dt[k]);
    ffn_json_obj_end(j);
    ffn_json_obj_end(j);
    ffn_json_obj_begin(j, "uncertainty");
    ffn_json_num(j, "p10", hw->unc.p10);
    ffn_json_num(j, "p90", hw->unc.p90);
    ffn_json_bool(j, "default", hw->unc.is_default);
    ffn_json_obj_end(j);
}

static void print_eff(const ffn_hw *hw, bool check, size_t n)
{
    const ffn_eff *e = &hw->eff;
    printf("efficiency:\n  compute_max: %.4f\n  compute_half: %.4g FLOP\n  memory_max: %.4f\n"
           "  memory_half: %.4g B\n  launch: %.4g us\n  harness: %.4g us\n  overlap: %.4g\n",
           e->compute_max, e->compute_half_flops, e->memory_max, e->memory_half_bytes,
           e->launch_s * 1e6, e->harness_s * 1e6,
           isfinite(e->overlap_p) && e->overlap_p < 1e6 ? e->overlap_p : 0.0);
    if (e->memory_max_gemv > 0) printf("  memory_max_gemv: %.4f\n", e->memory_max_gemv);
    if (e->memory_max_elem > 0) printf("  memory_max_elem: %.4f\n", e->memory_max_elem);
    for (int l = 0; l < hw->n_levels; l++)
        if (e->level_max[l] > 0)
            printf("  level_max %s: %.4f (of %.4g TB/s)\n", hw->levels[l].name, e->level_max[l],
                   hw->levels[l].bandwidth_bps / 1e12);
    for (int k = 0; k < FFN_DT_COUNT; k++) {
        const char *dn = ffn_dtype_name((ffn_dtype)k);
        if (e->util_gamma[k] > 0)
            printf("  util %s: gamma %.4f, alpha %.4f\n", dn, e->util_gamma[k], e->util_alpha[k]);
        if (e->launch_dt[k] > 0) printf("  launch %s: %.4g us\n", dn, e->launch_dt[k] * 1e6);
        if (e->quant_row_s[k] > 0) printf("  quant_row %s: %.4g ns\n", dn, e->quant_row_s[k] * 1e9);
        if (e->memory_max_gemv_dt[k] > 0)
            printf("  memory_max_gemv %s: %.4f\n", dn, e->memory_max_gemv_dt[k]);
    }
    if (!check)
        printf("uncertainty:\n  p10: %.4f\n  p90: %.4f\n  points: %zu\n", hw->unc.p10, hw->unc.p90,
               n);
}

static void warn_poor(const ffn_fit_summary *s)
{
    if (s->median_abs > 0.10 || s->max_abs > 0.35)
        fprintf(stderr,
                "ffnroof fit: warning: a poor fit (median |error| %.1f%%, max %.1f%%; the model "
                "does not explain these data well)\n",
                100 * s->median_abs, 100 * s->max_abs);
}

/* Fit hw's efficiency to pts and record the residuals over res[n_res] (the same points, or all
 * the rows a subsample was drawn from). 0 or the exit code (printed). */
static int fit_eff(const fit_args *a, ffn_hw *hw, const ffn_fit_point *pts, size_t n,
                   const ffn_fit_point *res, size_t n_res)
{
    ffn_eff e;
    if (ffn_eff_fit(hw, pts, n, a->flags, &e))
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD,
                            "the fit failed (gemv needs one-row and larger GEMMs, elem needs "
                            "elementwise points, util needs GEMMs, level needs warm points whose "
                            "data fits on chip, quant-row needs GEMMs that quantise their input)");
    hw->eff = e;
    if (ffn_fit_uncertainty(hw, res, n_res, &hw->unc))
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "cannot compute the fit's residuals");
    return 0;
}

static int write_spec(const fit_args *a, const ffn_hw *hw)
{
    if (!a->out_path) return 0;
    ffn_diag d;
    ffn_diag_clear(&d);
    return ffn_hw_write(hw, a->out_path, &d) ? ffn_cli_diag(&d) : 0;
}

/* ---- the small formats: every point listed -------------------------------------------------- */

static int json_plain(const fit_args *a, const ffn_hw *hw, const ffn_fit_point *pts, size_t n,
                      const double *err, const ffn_fit_summary *s)
{
    ffn_json j;
    ffn_json_init(&j, stdout, true);
    ffn_json_obj_begin(&j, NULL);
    ffn_json_str(&j, "hw", hw->name);
    ffn_json_bool(&j, "fitted", !a->check);
    json_eff(&j, hw);
    ffn_json_arr_begin(&j, "points");
    for (size_t i = 0; i < n; i++) {
        const ffn_fit_point *p = &pts[i];
        ffn_json_obj_begin(&j, NULL);
        ffn_json_u64(&j, "m", p->m);
        ffn_json_u64(&j, p->f ? "d" : "n", p->f ? p->k : p->n);
        ffn_json_u64(&j, p->f ? "f" : "k", p->f ? p->f : p->k);
        ffn_json_str(&j, "kind", p->f ? "layer" : p->elem_bytes > 0 ? "elem" : "gemm");
        ffn_json_str(&j, "dtype", ffn_dtype_name(p->wdtype));
        ffn_json_bool(&j, "best_of_sweep", p->best_of_sweep);
        ffn_json_bool(&j, "warm", p->hot);
        ffn_json_num(&j, "measured_s", p->time_s);
        ffn_json_num(&j, "predicted_s", p->time_s * (1 + err[i]));
        ffn_json_num(&j, "error", err[i]);
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);
    ffn_json_num(&j, "median_abs_error", s->median_abs);
    ffn_json_num(&j, "max_abs_error", s->max_abs);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j) ? FFN_EXIT_FAIL : FFN_EXIT_OK;
}

static void list_plain(const fit_args *a, const ffn_fit_point *pts, size_t n, const double *err)
{
    printf("\n%10s %8s %8s %8s %12s %12s %8s\n", "m", pts[0].f ? "d" : "n", pts[0].f ? "f" : "k",
           "", "measured", "predicted", "error");
    for (size_t i = 0; i < n; i++) {
        const ffn_fit_point *p = &pts[i];
        printf("%10llu %8llu %8llu %8s %9.4f ms %9.4f ms %+7.1f%%%s\n", (unsigned long long)p->m,
               (unsigned long long)(p->f ? p->k : p->n), (unsigned long long)(p->f ? p->f : p->k),
               p->f                ? ffn_act_name(p->act)
               : p->elem_bytes > 0 ? "elem"
                                   : (p->wdtype != a->dt ? ffn_dtype_name(p->wdtype) : ""),
               p->time_s * 1e3, p->time_s * (1 + err[i]) * 1e3, 100 * err[i],
               p->hot ? "  warm" : "");
    }
}

static int run_plain(const fit_args *a, ffn_hw *hw, const ffn_fit_point *pts, size_t n)
{
    if (a->rows || a->kernel)
        return ffn_cli_usage(CMD, "--rows and --kernel select rows of an op table; %s is none",
                             a->data);
    int rc;
    if (!a->check && (rc = fit_eff(a, hw, pts, n, pts, n))) return rc;
    if ((rc = write_spec(a, hw))) return rc;
    double *err = malloc(n * sizeof *err);
    if (!err) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    ffn_fit_summary s;
    ffn_fit_errors(hw, pts, n, err, &s);
    if (a->fmt == FFN_FMT_JSON) {
        rc = json_plain(a, hw, pts, n, err, &s);
        free(err);
        return rc;
    }
    printf("%s efficiency model for %s on %zu points of %s\n", a->check ? "checked" : "fitted",
           hw->name, n, a->data);
    print_eff(hw, a->check, n);
    list_plain(a, pts, n, err);
    printf("median |error| %.1f%%, mean %.1f%%, max %.1f%%\n", 100 * s.median_abs, 100 * s.mean_abs,
           100 * s.max_abs);
    warn_poor(&s);
    if (a->out_path) printf("wrote %s\n", a->out_path);
    free(err);
    return FFN_EXIT_OK;
}

/* ---- op tables: selection, subsample, summaries --------------------------------------------- */

/* The rows of a table a run looks at, and their errors. dt[i] = wdtype * FFN_DT_COUNT +
 * adtype; err[i] = predicted/measured - 1 (NAN for a row not predicted). */
typedef struct rows {
    size_t n;
    size_t *ix; /* index into the table */
    uint8_t *dt;
    uint16_t *kernel;
    double *err;
    /* MoE rows: each row's range (measured / predicted, its kernel family's) and the family
     * that priced it (-1: the model's defaults); NULL for GEMM rows (the spec's range) */
    double *lo, *hi;
    int8_t *set;
} rows;

static void rows_free(rows *r)
{
    free(r->ix);
    free(r->dt);
    free(r->kernel);
    free(r->err);
    free(r->lo);
    free(r->hi);
    free(r->set);
    memset(r, 0, sizeof *r);
}

static int rows_alloc(rows *r, size_t n)
{
    memset(r, 0, sizeof *r);
    const size_t m = n ? n : 1;
    r->ix = malloc(m * sizeof *r->ix);
    r->dt = malloc(m * sizeof *r->dt);
    r->kernel = malloc(m * sizeof *r->kernel);
    r->err = malloc(m * sizeof *r->err);
    if (r->ix && r->dt && r->kernel && r->err) return 0;
    rows_free(r);
    return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
}

static const char *dt_label(uint8_t code, char *buf, size_t n)
{
    const ffn_dtype w = (ffn_dtype)(code / FFN_DT_COUNT), ad = (ffn_dtype)(code % FFN_DT_COUNT);
    if (w == ad) return ffn_dtype_name(w);
    snprintf(buf, n, "%s/%s", ffn_dtype_name(w), ffn_dtype_name(ad));
    return buf;
}

/* --kernel NAME as a kernel index of t; -1 for every kernel; usage error when t has none. */
static int kernel_filter(const fit_args *a, const ffn_aic_table *t, int *k)
{
    *k = -1;
    if (!a->kernel) return 0;
    for (size_t i = 0; i < t->n_kernels; i++)
        if (!strcmp(t->kernels[i], a->kernel)) {
            *k = (int)i;
            return 0;
        }
    char list[1024] = "";
    for (size_t i = 0, o = 0; i < t->n_kernels && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", t->kernels[i]);
    return ffn_cli_usage(CMD, "--kernel: no kernel '%s' in %s (its kernels: %s)", a->kernel,
                         a->data, list);
}

/* The table's rows that --dtype, --kernel and --rows keep, into r. */
static int select_rows(const fit_args *a, const ffn_aic_table *t, rows *r)
{
    int k, rc;
    if ((rc = kernel_filter(a, t, &k))) return rc;
    const bool gemm = t->op == FFN_AIC_GEMM;
    const size_t n = gemm ? t->n_pts : t->n_moe;
    if ((rc = rows_alloc(r, n))) return rc;
    for (size_t i = 0; i < n; i++) {
        const ffn_dtype w = gemm ? t->pts[i].wdtype : t->moe[i].wdtype;
        const ffn_dtype ad = gemm ? t->pts[i].adtype : t->moe[i].adtype;
        const uint16_t kern = gemm ? t->pt_kernel[i] : t->moe[i].kernel;
        if (a->dt_given && w != a->dt) continue;
        if (k >= 0 && kern != k) continue;
        if (gemm && !a->all_rows && (t->pts[i].n < FFN_ROWS_MIN || t->pts[i].k < FFN_ROWS_MIN))
            continue;
        r->ix[r->n] = i;
        r->dt[r->n] = (uint8_t)(w * FFN_DT_COUNT + ad);
        r->kernel[r->n] = kern;
        r->n++;
    }
    if (r->n) return 0;
    rows_free(r);
    return ffn_cli_usage(CMD, "no row of %s is left by --dtype, --kernel and --rows%s", a->data,
                         gemm && !a->all_rows ? " (ffn: n and k >= 256; --rows all keeps all)"
                                              : "");
}

/* One stratum key and shape for the subsample's sort. */
typedef struct strat {
    uint32_t key;
    uint64_t m, n, k;
    size_t i; /* into the selected points */
} strat;

static int cmp_strat(const void *x, const void *y)
{
    const strat *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->m != b->m) return a->m < b->m ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static unsigned decade(double v)
{
    return v >= 1 ? (unsigned)floor(log10(v)) : 0;
}

/* How many rows each of ns strata (c[s] rows, total t) gives to a sample of cap < t: one each
 * while there is room, the rest in proportion to what is left of each (largest remainders
 * first, ties to the lower stratum). */
static void quotas(const size_t *c, size_t ns, size_t t, size_t cap, size_t *q)
{
    const size_t base = ns <= cap ? 1 : 0, room = cap - base * ns, w_all = t - base * ns;
    size_t used = 0;
    for (size_t s = 0; s < ns; s++) {
        const size_t w = c[s] - base;
        q[s] = base + (w_all ? (size_t)((double)room * (double)w / (double)w_all) : 0);
        if (q[s] > c[s]) q[s] = c[s];
        used += q[s];
    }
    while (used < cap) {
        size_t best = ns;
        double best_rem = -1;
        for (size_t s = 0; s < ns; s++) {
            if (q[s] >= c[s]) continue;
            const double rem =
                (double)room * (double)(c[s] - base) / (double)w_all - (double)(q[s] - base);
            if (rem > best_rem) {
                best_rem = rem;
                best = s;
            }
        }
        if (best == ns) break;
        q[best]++;
        used++;
    }
}

/* A deterministic stratified subsample of pts[n] (dtype x decade of m x decade of n*k) of at most
 * cap points into sub (heap) and *n_sub; evenly spaced within each stratum in shape order. */
static int subsample(const ffn_fit_point *pts, size_t n, size_t cap, ffn_fit_point **sub,
                     size_t *n_sub)
{
    *sub = malloc((n < cap ? n : cap) * sizeof **sub);
    strat *st = n > cap ? malloc(n * sizeof *st) : NULL;
    size_t *c = n > cap ? malloc(2 * n * sizeof *c) : NULL;
    if (!*sub || (n > cap && (!st || !c))) {
        free(*sub);
        free(st);
        free(c);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    }
    if (n <= cap) {
        memcpy(*sub, pts, n * sizeof **sub);
        *n_sub = n;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const ffn_fit_point *p = &pts[i];
        const uint32_t dt = (uint32_t)(p->wdtype * FFN_DT_COUNT + p->adtype);
        st[i] = (strat){.key = (dt * 64 + decade((double)p->m)) * 64 +
                               decade((double)p->n * (double)p->k),
                        .m = p->m,
                        .n = p->n,
                        .k = p->k,
                        .i = i};
    }
    qsort(st, n, sizeof *st, cmp_strat);
    size_t ns = 0, *q = c + n;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || st[i].key != st[i - 1].key) c[ns++] = 0;
        c[ns - 1]++;
    }
    quotas(c, ns, n, cap, q);
    size_t out = 0;
    for (size_t s = 0, start = 0; s < ns; start += c[s], s++)
        for (size_t j = 0; j < q[s]; j++)
            (*sub)[out++] =
                pts[st[start + (size_t)(((double)j + 0.5) * (double)c[s] / (double)q[s])].i];
    *n_sub = out;
    free(st);
    free(c);
    return 0;
}

/* The error summary of one group of rows. */
typedef struct summary {
    char dtype[32];
    char kernel[FFN_AIC_KERNEL_NAME];
    size_t rows, refused;
    double median, p90, max, coverage;
} summary;

/* Summary of the rows of r with dtype code dt (-1: any) and kernel k (-1: any); scratch holds
 * r->n doubles. Coverage: measured/predicted within the range hw gives the row's weight dtype. */
static summary summarize(const ffn_hw *hw, const rows *r, int dt, int k, double *scratch)
{
    summary s = {0};
    size_t m = 0, in = 0;
    for (size_t i = 0; i < r->n; i++) {
        if ((dt >= 0 && r->dt[i] != dt) || (k >= 0 && r->kernel[i] != k)) continue;
        const double e = r->err[i];
        if (!isfinite(e)) {
            s.refused++;
            continue;
        }
        scratch[m++] = fabs(e);
        const double ratio = 1.0 / (1.0 + e);
        double p10, p90;
        if (r->lo) {
            p10 = r->lo[i];
            p90 = r->hi[i];
        } else
            ffn_hw_unc_range_dt(hw, (ffn_dtype)(r->dt[i] / FFN_DT_COUNT), &p10, &p90);
        in += ratio >= p10 && ratio <= p90;
    }
    s.rows = m;
    if (!m) return s;
    s.median = ffn_median(scratch, m);
    s.p90 = ffn_quantile_sorted(scratch, m, 0.9);
    s.max = scratch[m - 1];
    s.coverage = (double)in / (double)m;
    return s;
}

/* The groups a run reports: each dtype, each kernel x dtype when the rows have several kernels,
 * and all rows; into *out (heap), *n_out of them. */
static int summaries(const ffn_hw *hw, const ffn_aic_table *t, const rows *r, summary **out,
                     size_t *n_out)
{
    bool dts[FFN_DT_COUNT * FFN_DT_COUNT] = {false}, kerns[FFN_AIC_MAX_KERNELS] = {false};
    size_t n_k = 0;
    for (size_t i = 0; i < r->n; i++) {
        dts[r->dt[i]] = true;
        n_k += !kerns[r->kernel[i]];
        kerns[r->kernel[i]] = true;
    }
    const size_t most = FFN_DT_COUNT * FFN_DT_COUNT * (1 + FFN_AIC_MAX_KERNELS) + 1;
    summary *s = malloc(most * sizeof *s);
    double *scratch = malloc(r->n * sizeof *scratch);
    if (!s || !scratch) {
        free(s);
        free(scratch);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    }
    size_t n = 0;
    char buf[32];
    for (int k = -1; k < (n_k > 1 ? (int)t->n_kernels : 0); k++)
        for (int d = 0; d < FFN_DT_COUNT * FFN_DT_COUNT; d++) {
            if (!dts[d]) continue;
            summary g = summarize(hw, r, d, k, scratch);
            if (!g.rows && !g.refused) continue;
            snprintf(g.dtype, sizeof g.dtype, "%s", dt_label((uint8_t)d, buf, sizeof buf));
            snprintf(g.kernel, sizeof g.kernel, "%s", k < 0 ? "(all)" : t->kernels[k]);
            s[n++] = g;
        }
    s[n] = summarize(hw, r, -1, -1, scratch);
    snprintf(s[n].dtype, sizeof s[n].dtype, "all");
    snprintf(s[n].kernel, sizeof s[n].kernel, "(all)");
    n++;
    free(scratch);
    *out = s;
    *n_out = n;
    return 0;
}

/* ---- op tables: output ---------------------------------------------------------------------- */

static void json_table_info(ffn_json *j, const fit_args *a, const ffn_aic_table *t, size_t n_sel,
                            size_t n_fit)
{
    ffn_json_obj_begin(j, "table");
    ffn_json_str(j, "path", a->data);
    ffn_json_str(j, "op", t->op == FFN_AIC_GEMM ? "gemm" : "moe");
    ffn_json_str(j, "engine", ffn_engine_name(t->engine));
    ffn_json_str(j, "version", t->version);
    ffn_json_str(j, "device", t->device);
    ffn_json_u64(j, "rows", t->op == FFN_AIC_GEMM ? t->n_pts : t->n_moe);
    ffn_json_u64(j, "rows_selected", n_sel);
    ffn_json_u64(j, "rows_fitted", n_fit);
    ffn_json_str(j, "row_filter", t->op == FFN_AIC_GEMM && !a->all_rows ? "ffn" : "all");
    ffn_json_obj_end(j);
}

/* A table run's JSON object opened on stdout: the device, whether it was fitted, the table. */
static void json_table_begin(ffn_json *j, const fit_args *a, const ffn_hw *hw,
                             const ffn_aic_table *t, size_t n_sel, size_t n_fit, bool fitted)
{
    ffn_json_init(j, stdout, true);
    ffn_json_obj_begin(j, NULL);
    ffn_json_str(j, "hw", hw->name);
    ffn_json_bool(j, "fitted", fitted);
    json_table_info(j, a, t, n_sel, n_fit);
}

static void json_summaries(ffn_json *j, const summary *s, size_t n)
{
    ffn_json_arr_begin(j, "summary");
    for (size_t i = 0; i < n; i++) {
        ffn_json_obj_begin(j, NULL);
        ffn_json_str(j, "dtype", s[i].dtype);
        ffn_json_str(j, "kernel", s[i].kernel);
        ffn_json_u64(j, "rows", s[i].rows);
        if (s[i].refused) ffn_json_u64(j, "rows_not_predicted", s[i].refused);
        ffn_json_num(j, "median_abs_error", s[i].median);
        ffn_json_num(j, "p90_abs_error", s[i].p90);
        ffn_json_num(j, "max_abs_error", s[i].max);
        ffn_json_num(j, "coverage_p10_p90", s[i].coverage);
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
}

static void print_summaries(const ffn_hw *hw, const summary *s, size_t n, bool moe)
{
    double p10, p90;
    ffn_hw_unc_range(hw, &p10, &p90);
    int w = 6;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(s[i].kernel) > w) w = (int)strlen(s[i].kernel);
    printf("\n%-10s %-*s %8s %9s %9s %9s %11s\n", "dtype", w, "kernel", "rows", "median|e|",
           "p90|e|", "max|e|", "in p10-p90");
    for (size_t i = 0; i < n; i++) {
        printf("%-10s %-*s %8zu %8.1f%% %8.1f%% %8.1f%% %10.1f%%", s[i].dtype, w, s[i].kernel,
               s[i].rows, 100 * s[i].median, 100 * s[i].p90, 100 * s[i].max, 100 * s[i].coverage);
        if (s[i].refused) printf("  (%zu rows not predicted)", s[i].refused);
        putchar('\n');
    }
    if (moe)
        printf("|e| = |predicted/measured - 1|; in p10-p90: measured within the range of the "
               "row's kernel family (above) x predicted\n");
    else
        printf("|e| = |predicted/measured - 1|; in p10-p90: measured within [%.3f, %.3f] x "
               "predicted, the spec's range (a dtype's own where the spec has one)\n",
               p10, p90);
}

static void table_header(const fit_args *a, const ffn_hw *hw, const ffn_aic_table *t, size_t n_sel,
                         size_t n_fit)
{
    printf("%s efficiency model for %s on %zu of %zu rows of %s\n", a->check ? "checked" : "fitted",
           hw->name, n_sel, t->op == FFN_AIC_GEMM ? t->n_pts : t->n_moe, a->data);
    printf("  table: %s, %s %s on %s", t->op == FFN_AIC_GEMM ? "gemm" : "moe",
           t->engine != FFN_ENGINE_NONE ? ffn_engine_name(t->engine) : "(no engine named)",
           t->version[0] ? t->version : "(no version)",
           t->device[0] ? t->device : "(no device named)");
    printf("; rows: %s%s%s%s%s\n",
           t->op == FFN_AIC_GEMM && !a->all_rows ? "ffn (n, k >= 256)" : "all",
           a->dt_given ? ", dtype " : "", a->dt_given ? ffn_dtype_name(a->dt) : "",
           a->kernel ? ", kernel " : "", a->kernel ? a->kernel : "");
    if (!a->check)
        printf("  fitted on %zu of them (stratified: dtype x decade of m x decade of n*k)\n",
               n_fit);
    if (hw->engine != FFN_ENGINE_NONE)
        printf("  kernels: %s's profile applied to the spec (hw/arch/engines.yaml)\n",
               ffn_engine_name(hw->engine));
    if (t->op == FFN_AIC_MOE && t->timed == FFN_AIC_TIMED_GEMMS)
        printf("  timed: the grouped GEMMs with their fused activation (# timed: gemms); "
               "predicted alike\n");
}

static void list_gemm(const ffn_aic_table *t, const rows *r, const ffn_fit_point *pts)
{
    char buf[32];
    printf("\n%8s %8s %8s %-10s %-36s %12s %12s %8s\n", "m", "n", "k", "dtype", "kernel",
           "measured", "predicted", "error");
    for (size_t i = 0; i < r->n; i++) {
        const ffn_fit_point *p = &pts[i];
        printf("%8llu %8llu %8llu %-10s %-36s %9.4f ms %9.4f ms %+7.1f%%\n",
               (unsigned long long)p->m, (unsigned long long)p->n, (unsigned long long)p->k,
               dt_label(r->dt[i], buf, sizeof buf), t->kernels[r->kernel[i]], p->time_s * 1e3,
               p->time_s * (1 + r->err[i]) * 1e3, 100 * r->err[i]);
    }
}

static void json_gemm_points(ffn_json *j, const ffn_aic_table *t, const rows *r,
                             const ffn_fit_point *pts)
{
    char buf[32];
    ffn_json_arr_begin(j, "points");
    for (size_t i = 0; i < r->n; i++) {
        const ffn_fit_point *p = &pts[i];
        ffn_json_obj_begin(j, NULL);
        ffn_json_u64(j, "m", p->m);
        ffn_json_u64(j, "n", p->n);
        ffn_json_u64(j, "k", p->k);
        ffn_json_str(j, "dtype", dt_label(r->dt[i], buf, sizeof buf));
        ffn_json_str(j, "kernel", t->kernels[r->kernel[i]]);
        ffn_json_num(j, "measured_s", p->time_s);
        ffn_json_num(j, "predicted_s", p->time_s * (1 + r->err[i]));
        ffn_json_num(j, "error", r->err[i]);
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
}

/* Print a GEMM table's run: efficiency, summaries, the rows with --points. */
static int report_gemm(const fit_args *a, const ffn_hw *hw, const ffn_aic_table *t, const rows *r,
                       const ffn_fit_point *sel, size_t n_fit, const ffn_fit_summary *all)
{
    summary *s;
    size_t ns;
    int rc = summaries(hw, t, r, &s, &ns);
    if (rc) return rc;
    if (a->fmt == FFN_FMT_JSON) {
        ffn_json j;
        json_table_begin(&j, a, hw, t, r->n, n_fit, !a->check);
        json_eff(&j, hw);
        json_summaries(&j, s, ns);
        if (a->points) json_gemm_points(&j, t, r, sel);
        ffn_json_num(&j, "median_abs_error", all->median_abs);
        ffn_json_num(&j, "max_abs_error", all->max_abs);
        ffn_json_obj_end(&j);
        free(s);
        return ffn_json_finish(&j) ? FFN_EXIT_FAIL : FFN_EXIT_OK;
    }
    table_header(a, hw, t, r->n, n_fit);
    print_eff(hw, a->check, r->n);
    if (a->points) list_gemm(t, r, sel);
    print_summaries(hw, s, ns, false);
    warn_poor(all);
    if (a->out_path) printf("wrote %s\n", a->out_path);
    free(s);
    return FFN_EXIT_OK;
}

static int run_gemm_table(const fit_args *a, ffn_hw *hw, ffn_aic_table *t)
{
    ffn_aic_mark_harness(t);
    int rc = 0;
    /* a check predicts with the kernels of the table's own engine, unless --engine says */
    if (a->check && !a->engine && t->engine != FFN_ENGINE_NONE &&
        t->engine != ffn_cli_engine_in_force() &&
        !(rc = ffn_cli_engine(CMD, ffn_engine_name(t->engine))))
        rc = ffn_cli_apply_engine(hw);
    if (rc) return rc;
    rows r;
    rc = select_rows(a, t, &r);
    if (rc) return rc;
    ffn_fit_point *sel = malloc(r.n * sizeof *sel), *sub = NULL;
    size_t n_sub = 0;
    if (!sel) rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    for (size_t i = 0; !rc && i < r.n; i++)
        sel[i] = t->pts[r.ix[i]];
    if (!rc && !a->check) rc = subsample(sel, r.n, (size_t)a->fit_points, &sub, &n_sub);
    if (!rc && !a->check) rc = fit_eff(a, hw, sub, n_sub, sel, r.n);
    if (!rc) rc = write_spec(a, hw);
    if (!rc) {
        ffn_fit_summary all;
        ffn_fit_errors(hw, sel, r.n, r.err, &all);
        rc = report_gemm(a, hw, t, &r, sel, n_sub, &all);
    }
    free(sub);
    free(sel);
    rows_free(&r);
    return rc;
}

/* ---- MoE tables: checked against the fused-MoE predictor ------------------------------------ */

/* Predict the selected MoE rows (r->err: predicted/measured - 1; NAN for a row the predictor
 * refuses) with the engine's fused-MoE kernel families (engines.yaml `moe:`), each row by its
 * kernel's name and weight format, and the range ffn_engine_moe_on gives it (a row no family
 * covers: the model's defaults). A kernel named "...nongated..." (TRT-LLM's) runs experts
 * without a gate. */
static int check_moe(const ffn_hw *hw, const ffn_aic_table *t, const ffn_engine_profile *prof,
                     rows *r)
{
    r->lo = malloc((r->n ? r->n : 1) * sizeof *r->lo);
    r->hi = malloc((r->n ? r->n : 1) * sizeof *r->hi);
    r->set = malloc(r->n ? r->n : 1);
    if (!r->lo || !r->hi || !r->set) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.engine = prof->engine;
    for (size_t i = 0; i < r->n; i++) {
        const ffn_aic_moe *row = &t->moe[r->ix[i]];
        const char *kname = t->kernels[row->kernel];
        const ffn_engine_moe *m =
            ffn_engine_moe_on(prof, hw, kname, row->wdtype, row->adtype, &r->lo[i], &r->hi[i]);
        o.nongated = strstr(kname, "nongated") != NULL;
        o.params = m ? &m->params : NULL;
        r->set[i] = m ? (int8_t)(m - prof->moe) : -1;
        ffn_moe_fused_cost c;
        /* the part of the call the table times (`# timed:`) */
        const double pred =
            ffn_moe_fused_predict(hw, row, &o, &c) ? NAN : ffn_moe_fused_timed_s(&c, t->timed);
        r->err[i] = pred > 0 ? pred / row->time_s - 1.0 : NAN;
    }
    return 0;
}

/* Which kernel family priced each kernel and format of the rows, and its range. */
static void print_moe_sets(const ffn_hw *hw, const ffn_aic_table *t, const ffn_engine_profile *prof,
                           const rows *r)
{
    printf("\nfused-MoE parameters (%s's `moe:` in hw/arch/engines.yaml; range: measured / "
           "predicted, p10-p90):\n",
           ffn_engine_name(prof->engine));
    static bool seen[FFN_AIC_MAX_KERNELS][FFN_DT_COUNT * FFN_DT_COUNT];
    memset(seen, 0, sizeof seen);
    char buf[32];
    int w = 6;
    for (size_t i = 0; i < r->n; i++) {
        const int l = (int)strlen(t->kernels[t->moe[r->ix[i]].kernel]);
        if (l > w) w = l;
    }
    for (size_t i = 0; i < r->n; i++) {
        const ffn_aic_moe *row = &t->moe[r->ix[i]];
        if (seen[row->kernel][r->dt[i]]) continue; /* one line per kernel and dtype pair */
        seen[row->kernel][r->dt[i]] = true;
        printf("  %-10s %-*s  ", dt_label(r->dt[i], buf, sizeof buf), w, t->kernels[row->kernel]);
        if (r->set[i] < 0) {
            printf("the model's defaults (no entry of the engine for %s GPUs, the format or its "
                   "activations' class), the spec's range x0.8/x1.25\n",
                   hw->vendor[0] ? hw->vendor : "this vendor's");
            continue;
        }
        const ffn_engine_moe *m = &prof->moe[r->set[i]];
        char how[96] = "";
        if (m->dtype != row->wdtype)
            snprintf(how, sizeof how, " (its %s entry: none for %s)", ffn_dtype_name(m->dtype),
                     ffn_dtype_name(row->wdtype));
        else if (!strstr(t->kernels[row->kernel], m->kernels))
            snprintf(how, sizeof how, " (the format's default)");
        printf("'%s'%s, range [%.2f, %.2f]%s\n", m->kernels, how, r->lo[i], r->hi[i],
               r->lo[i] != m->p10 || r->hi[i] != m->p90 ? " (widened)" : "");
    }
}

static void moe_dist(const ffn_aic_moe *m, char *buf, size_t n)
{
    if (m->draw == FFN_DRAW_BALANCED)
        snprintf(buf, n, "balanced");
    else
        snprintf(buf, n, "power_law_%g", m->alpha);
}

static void list_moe(const ffn_aic_table *t, const rows *r)
{
    char buf[32], dist[32];
    printf("\n%7s %6s %6s %4s %5s %3s %3s %-15s %-10s %-36s %12s %12s %8s\n", "tokens", "hidden",
           "inter", "topk", "exp", "tp", "ep", "distribution", "dtype", "kernel", "measured",
           "predicted", "error");
    for (size_t i = 0; i < r->n; i++) {
        const ffn_aic_moe *m = &t->moe[r->ix[i]];
        moe_dist(m, dist, sizeof dist);
        printf("%7llu %6llu %6llu %4u %5u %3u %3u %-15s %-10s %-36s %9.4f ms %9.4f ms %+7.1f%%\n",
               (unsigned long long)m->tokens, (unsigned long long)m->hidden,
               (unsigned long long)m->inter, m->topk, m->experts, m->tp, m->ep, dist,
               dt_label(r->dt[i], buf, sizeof buf), t->kernels[r->kernel[i]], m->time_s * 1e3,
               m->time_s * (1 + r->err[i]) * 1e3, 100 * r->err[i]);
    }
}

static void json_moe_points(ffn_json *j, const ffn_aic_table *t, const ffn_engine_profile *prof,
                            const rows *r)
{
    char buf[32], dist[32];
    ffn_json_arr_begin(j, "points");
    for (size_t i = 0; i < r->n; i++) {
        const ffn_aic_moe *m = &t->moe[r->ix[i]];
        moe_dist(m, dist, sizeof dist);
        ffn_json_obj_begin(j, NULL);
        ffn_json_u64(j, "tokens", m->tokens);
        ffn_json_u64(j, "hidden", m->hidden);
        ffn_json_u64(j, "inter", m->inter);
        ffn_json_u64(j, "topk", m->topk);
        ffn_json_u64(j, "experts", m->experts);
        ffn_json_u64(j, "tp", m->tp);
        ffn_json_u64(j, "ep", m->ep);
        ffn_json_str(j, "distribution", dist);
        ffn_json_str(j, "dtype", dt_label(r->dt[i], buf, sizeof buf));
        ffn_json_str(j, "kernel", t->kernels[r->kernel[i]]);
        ffn_json_num(j, "measured_s", m->time_s);
        ffn_json_num_or_null(j, "predicted_s", m->time_s * (1 + r->err[i]));
        ffn_json_num_or_null(j, "error", r->err[i]);
        ffn_json_str(j, "parameters", r->set[i] < 0 ? "defaults" : prof->moe[r->set[i]].kernels);
        ffn_json_num(j, "range_p10", r->lo[i]);
        ffn_json_num(j, "range_p90", r->hi[i]);
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
}

static int report_moe(const fit_args *a, const ffn_hw *hw, const ffn_aic_table *t,
                      const ffn_engine_profile *prof, const rows *r)
{
    summary *s;
    size_t ns;
    int rc = summaries(hw, t, r, &s, &ns);
    if (rc) return rc;
    if (a->fmt == FFN_FMT_JSON) {
        ffn_json j;
        json_table_begin(&j, a, hw, t, r->n, 0, false);
        json_summaries(&j, s, ns);
        ffn_json_str(&j, "moe_parameters", ffn_engine_name(prof->engine));
        if (a->points) json_moe_points(&j, t, prof, r);
        ffn_json_obj_end(&j);
        free(s);
        return ffn_json_finish(&j) ? FFN_EXIT_FAIL : FFN_EXIT_OK;
    }
    table_header(a, hw, t, r->n, 0);
    if (a->points) list_moe(t, r);
    print_moe_sets(hw, t, prof, r);
    print_summaries(hw, s, ns, true);
    free(s);
    return FFN_EXIT_OK;
}

static int run_moe_table(const fit_args *a, const ffn_hw *hw, const ffn_aic_table *t)
{
    if (!a->check)
        return ffn_cli_usage(CMD,
                             "%s is a MoE table: fitting one is not built yet; --check "
                             "compares the spec's predictions with it",
                             a->data);
    /* the table's engine's kernel families, unless --engine names another */
    const ffn_engine e = a->engine                      ? ffn_cli_engine_in_force()
                         : t->engine != FFN_ENGINE_NONE ? t->engine
                                                        : FFN_ENGINE_DEFAULT;
    static ffn_engine_profile prof;
    int rc = ffn_cli_engine_profile(CMD, e, &prof);
    if (rc) return rc;
    rows r;
    rc = select_rows(a, t, &r);
    if (rc) return rc;
    rc = check_moe(hw, t, &prof, &r);
    if (!rc) rc = report_moe(a, hw, t, &prof, &r);
    rows_free(&r);
    return rc;
}

int ffn_cmd_fit(int argc, char **argv)
{
    fit_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    static ffn_hw hw;
    if ((rc = ffn_cli_engine(CMD, a.engine))) return rc;
    if ((rc = ffn_cli_load_hw(CMD, a.hw_name, &hw))) return rc;
    ffn_fit_point *pts;
    size_t n;
    static ffn_aic_table table;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_fit_data_load_all(a.data, a.dt, a.dt, &pts, &n, &table, &d)) return ffn_cli_diag(&d);
    if (table.n_attn || table.n_comm) {
        const ffn_fit_attn_req req = {.data = a.data, .check = a.check, .points = a.points};
        rc = a.fmt == FFN_FMT_JSON
                 ? ffn_cli_usage(CMD, "--format json is not built for %s tables yet",
                                 ffn_aic_op_name(table.op))
                 : ffn_cli_fit_attn(&req, &hw, &table);
        if (!rc) rc = write_spec(&a, &hw);
    } else if (table.n_moe) {
        /* the fused-MoE kernel families are fitted against the spec as it is: an --engine
         * profile's GEMM factors stay off, its `moe:` entries price the rows */
        const ffn_engine given = ffn_cli_engine_in_force();
        if (hw.engine != FFN_ENGINE_NONE && !(rc = ffn_cli_engine(CMD, "vllm")) &&
            !(rc = ffn_cli_load_hw(CMD, a.hw_name, &hw)))
            rc = ffn_cli_engine(CMD, ffn_engine_name(given));
        /* the rows the engine's collector routed through a model's group-limited top-k */
        char md[1024];
        const char *models = ffn_cli_data_dir("models", md, sizeof md);
        if (!rc && models && ffn_aic_route_groups(&table, models, NULL, &d)) rc = ffn_cli_diag(&d);
        if (!rc) rc = run_moe_table(&a, &hw, &table);
    } else if (table.n_pts)
        rc = run_gemm_table(&a, &hw, &table);
    else
        rc = run_plain(&a, &hw, pts, n);
    ffn_fit_data_free(pts, &table);
    return rc;
}
