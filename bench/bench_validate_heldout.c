/* Held-out validation of the simulator's per-op predictions against public measurements that
 * the efficiency model was not fitted to: the MLP operator medians of Vidur's profiling data
 * (microsoft/vidur, data/profiling/compute/{a100,h100}/<model>/mlp.csv), extracted into
 * tests/data/heldout/ (see the README there for the source commits and the column meanings).
 *
 * For every row (one model, tensor-parallel degree and token count) it builds the three ops
 * Vidur times with sim/'s own op constructors, on the matching hw spec, and compares:
 *   mlp_up_proj   = GEMM m=T, n=(gated ? 2 : 1) * f/tp, k=d   (gate+up fused in one GEMM)
 *   mlp_act       = elementwise, reads (gated ? 2 : 1) * T*f/tp, writes T*f/tp elements
 *   mlp_down_proj = GEMM m=T, n=d, k=f/tp
 * all fp16. It prints per GPU and per op the error statistics and the worst rows; --csv dumps
 * every row instead. It changes no parameter: this is a check, not a fit (docs/validation.md).
 *
 * The parsing and prediction functions are also compiled into tests/test_heldout.c, which
 * defines FFN_HELDOUT_NO_MAIN to leave main() out. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/sim.h"
#include "ffnroof/sort.h"
#include "ffnroof/types.h"
#include "ffnroof/hw_load.h"

/* The CSV header the extraction writes; anything else is rejected rather than guessed. */
#define HELDOUT_HEADER                                                                             \
    "model,source_commit,num_tensor_parallel_workers,num_tokens,n_embd,n_expanded_embd,"           \
    "use_gated_mlp,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,"                       \
    "time_stats.mlp_down_proj.median"
#define HELDOUT_NCOLS 10

typedef enum heldout_op { HELDOUT_UP = 0, HELDOUT_ACT, HELDOUT_DOWN, HELDOUT_NOPS } heldout_op;

static const char *const heldout_op_names[HELDOUT_NOPS] = {"mlp_up_proj", "mlp_act",
                                                           "mlp_down_proj"};

/* One extracted Vidur row. Times in seconds (the CSV holds milliseconds). */
typedef struct heldout_row {
    char model[64];
    char commit[16];
    uint64_t tp;     /* num_tensor_parallel_workers */
    uint64_t tokens; /* num_tokens */
    uint64_t d;      /* n_embd */
    uint64_t f;      /* n_expanded_embd, before the tensor-parallel split */
    bool gated;      /* use_gated_mlp: SiLU-and-multiply; else GELU (torch.nn.GELU, erf form) */
    double measured_s[HELDOUT_NOPS];
} heldout_row;

/* Error statistics of a set of signed relative errors (predicted/measured - 1). */
typedef struct heldout_stats {
    size_t n;
    double median_abs, p90_abs, max_abs;
    double median_signed;
    double within10, within35; /* shares in [0, 1] */
} heldout_stats;

/* The functions tests/test_heldout.c also uses (contracts at their definitions). */
int heldout_load(const char *path, heldout_row **rows, size_t *n, ffn_diag *diag);
void heldout_ops(const ffn_hw *hw, const heldout_row *r, ffn_op ops[HELDOUT_NOPS]);
double heldout_rel_err(double predicted, double measured);
void heldout_summarise(const double *err, size_t n, double *work, heldout_stats *s);

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v == 0) return false;
    *out = (uint64_t)v;
    return true;
}

static bool parse_ms(const char *s, double *out_s)
{
    if (!*s) return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v <= 0) return false;
    *out_s = v * 1e-3;
    return true;
}

/* Split line (modified in place) at commas into at most max fields; returns the count, or
 * max + 1 when the line has more fields than that. */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return max + 1;
        fields[n++] = p;
        char *c = strchr(p, ',');
        if (!c) return n;
        *c = '\0';
        p = c + 1;
    }
}

/* Read a held-out CSV. On success *rows (malloc'd, the caller frees) holds *n rows and 0 is
 * returned; on error a negative FFN_E* code, *rows is NULL and diag says file:line:col. */
int heldout_load(const char *path, heldout_row **rows, size_t *n, ffn_diag *diag)
{
    *rows = NULL;
    *n = 0;
    ffn_diag_clear(diag);
    FILE *fp = fopen(path, "r");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open '%s'", path);
    char line[1024];
    int lineno = 0, rc = 0;
    size_t cap = 0;
    heldout_row *v = NULL;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(fp)) {
            rc = ffn_diag_set(diag, FFN_EPARSE, path, lineno, 1, "line too long");
            goto error;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, HELDOUT_HEADER) != 0) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 1, 1, "unexpected header (want '%s')",
                                  HELDOUT_HEADER);
                goto error;
            }
            continue;
        }
        if (len == 0) continue;
        char *fl[HELDOUT_NCOLS + 1];
        int nf = split_csv(line, fl, HELDOUT_NCOLS);
        if (nf != HELDOUT_NCOLS) {
            rc = ffn_diag_set(diag, FFN_EPARSE, path, lineno, 1, "expected %d fields, got %s%d",
                              HELDOUT_NCOLS, nf > HELDOUT_NCOLS ? "more than " : "",
                              nf > HELDOUT_NCOLS ? HELDOUT_NCOLS : nf);
            goto error;
        }
        heldout_row r;
        memset(&r, 0, sizeof r);
        if (!*fl[0] || strlen(fl[0]) >= sizeof r.model || strlen(fl[1]) >= sizeof r.commit) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1, "bad model or commit field");
            goto error;
        }
        snprintf(r.model, sizeof r.model, "%s", fl[0]);
        snprintf(r.commit, sizeof r.commit, "%s", fl[1]);
        uint64_t *ints[4] = {&r.tp, &r.tokens, &r.d, &r.f};
        for (int i = 0; i < 4; i++) {
            if (!parse_u64(fl[2 + i], ints[i])) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 3 + i,
                                  "field %d: '%s' is not a positive integer", 3 + i, fl[2 + i]);
                goto error;
            }
        }
        if (strcmp(fl[6], "True") == 0)
            r.gated = true;
        else if (strcmp(fl[6], "False") == 0)
            r.gated = false;
        else {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 7,
                              "use_gated_mlp: '%s' is not True or False", fl[6]);
            goto error;
        }
        for (int i = 0; i < HELDOUT_NOPS; i++) {
            if (!parse_ms(fl[7 + i], &r.measured_s[i])) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 8 + i,
                                  "%s: '%s' is not a positive time in ms", heldout_op_names[i],
                                  fl[7 + i]);
                goto error;
            }
        }
        if (r.f % r.tp != 0 || r.d % r.tp != 0) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 3,
                              "tensor-parallel degree %llu does not divide the sizes",
                              (unsigned long long)r.tp);
            goto error;
        }
        if (*n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            heldout_row *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                rc = ffn_diag_set(diag, FFN_ENOMEM, path, lineno, 0, "out of memory");
                goto error;
            }
            v = nv;
            cap = ncap;
        }
        v[(*n)++] = r;
    }
    if (ferror(fp)) {
        rc = ffn_diag_set(diag, FFN_EIO, path, lineno, 0, "read error");
        goto error;
    }
    if (lineno == 0) {
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 1, 1, "empty file");
        goto error;
    }
    fclose(fp);
    *rows = v;
    return 0;
error:
    fclose(fp);
    free(v);
    *n = 0;
    return rc;
}

/* The activation Vidur's reference MLP runs: SiluAndMul for gated MLPs, torch.nn.GELU (exact
 * erf form) otherwise (vidur/profiling/mlp/mlp_impl.py). */
static ffn_act heldout_act(const heldout_row *r)
{
    return r->gated ? FFN_ACT_SWIGLU : FFN_ACT_GELU;
}

/* Build the three ops of one row on hw with sim/'s constructors (fp16 weights and
 * activations, one device's shard of a tensor-parallel layer). ops[HELDOUT_NOPS] is filled. */
void heldout_ops(const ffn_hw *hw, const heldout_row *r, ffn_op ops[HELDOUT_NOPS])
{
    const ffn_dtype dt = FFN_DT_FP16;
    const double b = ffn_dtype_bytes(dt, 0);
    const ffn_dtype cdt = ffn_compute_dtype(hw, dt, dt);
    const uint64_t g = r->gated ? 2 : 1;
    const uint64_t fs = r->f / r->tp; /* intermediate columns on this device */
    const double elems = (double)r->tokens * (double)fs;
    ffn_op_gemm(&ops[HELDOUT_UP], hw, "mlp_up_proj", r->tokens, g * fs, r->d, 1, b, b, cdt, 0);
    /* The same accounting as the unfused activation op in sim/ffn.c: the activation (and gate
     * multiply) reads g*[T, f/tp] and writes h [T, f/tp]. */
    ffn_op_elem(&ops[HELDOUT_ACT], hw, "mlp_act", FFN_OP_ELEMWISE, elems,
                elems * ffn_act_flops(heldout_act(r)), ((double)g + 1.0) * elems * b);
    ffn_op_gemm(&ops[HELDOUT_DOWN], hw, "mlp_down_proj", r->tokens, r->d, fs, 1, b, b, cdt, 0);
}

/* Signed relative error of a prediction: predicted/measured - 1. */
double heldout_rel_err(double predicted, double measured)
{
    return predicted / measured - 1.0;
}

/* Summarise n signed errors; work[n] is caller scratch. p90 is the nearest-rank percentile. */
void heldout_summarise(const double *err, size_t n, double *work, heldout_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n == 0) return;
    size_t w10 = 0, w35 = 0;
    for (size_t i = 0; i < n; i++) {
        work[i] = err[i];
    }
    s->median_signed = ffn_median(work, n);
    for (size_t i = 0; i < n; i++) {
        work[i] = fabs(err[i]);
        if (work[i] <= 0.10) w10++;
        if (work[i] <= 0.35) w35++;
    }
    s->median_abs = ffn_median(work, n);
    size_t k = (size_t)ceil(0.9 * (double)n);
    s->p90_abs = work[k ? k - 1 : 0];
    s->max_abs = work[n - 1];
    s->within10 = (double)w10 / (double)n;
    s->within35 = (double)w35 / (double)n;
}

#ifndef FFN_HELDOUT_NO_MAIN

typedef struct gpu_case {
    const char *name;   /* "a100", "h100", "check" */
    char csv[1024];     /* extracted data */
    char hw_path[1024]; /* hw spec */
} gpu_case;

/* One evaluated (row, op). */
typedef struct result {
    const heldout_row *row;
    int op;
    double measured_s, predicted_s, roofline_s, err;
} result;

static int cmp_result_abs_desc(const void *a, const void *b)
{
    double x = fabs(((const result *)a)->err), y = fabs(((const result *)b)->err);
    return (x < y) - (x > y);
}

static void print_stats_line(const char *label, const char *regime, const heldout_stats *s)
{
    if (s->n == 0) return;
    printf("  %-14s %-8s %4zu %8.1f%% %8.1f%% %8.1f%% %+9.1f%% %6.0f%% %6.0f%%\n", label, regime,
           s->n, 100 * s->median_abs, 100 * s->p90_abs, 100 * s->max_abs, 100 * s->median_signed,
           100 * s->within10, 100 * s->within35);
}

/* Stats over the results of one op (op < 0: all ops) within a token range. */
static void stats_for(const result *res, size_t n, int op, uint64_t tmin, uint64_t tmax,
                      double *buf, double *work, heldout_stats *s)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (op >= 0 && res[i].op != op) continue;
        if (res[i].row->tokens < tmin || res[i].row->tokens > tmax) continue;
        buf[k++] = res[i].err;
    }
    heldout_summarise(buf, k, work, s);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_validate_heldout [--root DIR] [--a100-hw PATH] [--h100-hw PATH] "
            "[--csv]\n"
            "  Compares ffnroof's per-op predictions with Vidur's profiled MLP op medians.\n"
            "  --root DIR     repository root holding tests/data/heldout/ and hw/ (default .)\n"
            "  --a100-hw PATH hw spec for the a100 rows (default DIR/hw/a100-sxm-80gb.yaml)\n"
            "  --h100-hw PATH hw spec for the h100 rows (default DIR/hw/h100-sxm.yaml)\n"
            "  --csv          print every (row, op) as CSV instead of the summary\n"
            "  --check CSV HW also compare a file in the same format measured elsewhere\n"
            "                 (data/check/, never fitted to) with its predictions on HW\n"
            "  --no-launch    diagnostic only: subtract the spec's launch_s from every\n"
            "                 prediction (Vidur times GPU kernels, not launches); this is\n"
            "                 not a validated configuration and must not be used to fit one\n"
            "  --onchip       charge the tiled-GEMM traffic bound per on-chip level (predict\n"
            "                 --onchip; docs/model.md \"On-chip memory\"): the issue-15 check\n"
            "                 that it leaves the held-out accuracy no worse\n");
}

int main(int argc, char **argv)
{
    const char *root = ".";
    const char *a100_hw = NULL, *h100_hw = NULL, *check_csv = NULL, *check_hw = NULL;
    bool csv = false, no_launch = false, onchip = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = true;
        else if (strcmp(argv[i], "--no-launch") == 0)
            no_launch = true;
        else if (strcmp(argv[i], "--onchip") == 0)
            onchip = true;
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--a100-hw") == 0 && i + 1 < argc)
            a100_hw = argv[++i];
        else if (strcmp(argv[i], "--h100-hw") == 0 && i + 1 < argc)
            h100_hw = argv[++i];
        else if (strcmp(argv[i], "--check") == 0 && i + 2 < argc) {
            check_csv = argv[++i];
            check_hw = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_validate_heldout: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    gpu_case cases[3] = {{.name = "a100"}, {.name = "h100"}, {.name = "check"}};
    const int ncases = check_csv ? 3 : 2;
    if (check_csv) {
        snprintf(cases[2].csv, sizeof cases[2].csv, "%s", check_csv);
        snprintf(cases[2].hw_path, sizeof cases[2].hw_path, "%s", check_hw);
    }
    for (int c = 0; c < 2; c++) {
        snprintf(cases[c].csv, sizeof cases[c].csv, "%s/tests/data/heldout/vidur-%s-mlp.csv", root,
                 cases[c].name);
        const char *over = c == 0 ? a100_hw : h100_hw;
        if (over)
            snprintf(cases[c].hw_path, sizeof cases[c].hw_path, "%s", over);
        else
            snprintf(cases[c].hw_path, sizeof cases[c].hw_path, "%s/hw/%s.yaml", root,
                     c == 0 ? "a100-sxm-80gb" : "h100-sxm");
    }
    if (csv)
        printf("gpu,hw,model,num_tensor_parallel_workers,num_tokens,op,measured_ms,"
               "predicted_ms,roofline_ms,rel_err\n");
    int status = 0;
    for (int c = 0; c < ncases; c++) {
        ffn_diag diag;
        ffn_hw hw;
        char msg[1200];
        int rc = ffn_hw_load(cases[c].hw_path, &hw, &diag);
        if (rc) {
            ffn_diag_format(&diag, msg, sizeof msg);
            fprintf(stderr, "bench_validate_heldout: %s\n", msg);
            return 2;
        }
        heldout_row *rows = NULL;
        size_t nrows = 0;
        rc = heldout_load(cases[c].csv, &rows, &nrows, &diag);
        if (rc) {
            ffn_diag_format(&diag, msg, sizeof msg);
            fprintf(stderr, "bench_validate_heldout: %s\n", msg);
            return 2;
        }
        size_t nres = nrows * HELDOUT_NOPS;
        result *res = calloc(nres ? nres : 1, sizeof *res);
        double *buf = calloc(nres ? nres : 1, sizeof *buf);
        double *work = calloc(nres ? nres : 1, sizeof *work);
        if (!res || !buf || !work) {
            fprintf(stderr, "bench_validate_heldout: out of memory\n");
            free(res);
            free(buf);
            free(work);
            free(rows);
            return 1;
        }
        for (size_t i = 0; i < nrows; i++) {
            ffn_op ops[HELDOUT_NOPS];
            heldout_ops(&hw, &rows[i], ops);
            for (int o = 0; onchip && o < HELDOUT_NOPS; o++)
                if (ops[o].kind == FFN_OP_GEMM) {
                    ops[o].traffic_bound = true;
                    ffn_op_recost(&ops[o], &hw);
                }
            for (int o = 0; o < HELDOUT_NOPS; o++) {
                result *r = &res[i * HELDOUT_NOPS + (size_t)o];
                r->row = &rows[i];
                r->op = o;
                r->measured_s = rows[i].measured_s[o];
                r->predicted_s = ops[o].predicted_s - (no_launch ? hw.eff.launch_s : 0.0);
                r->roofline_s = ops[o].roofline_s;
                r->err = heldout_rel_err(r->predicted_s, r->measured_s);
                if (!(r->predicted_s > 0) || !isfinite(r->predicted_s)) status = 1;
            }
        }
        if (csv) {
            for (size_t i = 0; i < nres; i++) {
                const result *r = &res[i];
                printf("%s,%s,%s,%llu,%llu,%s,%.6g,%.6g,%.6g,%.4f\n", cases[c].name, hw.name,
                       r->row->model, (unsigned long long)r->row->tp,
                       (unsigned long long)r->row->tokens, heldout_op_names[r->op],
                       r->measured_s * 1e3, r->predicted_s * 1e3, r->roofline_s * 1e3, r->err);
            }
        } else {
            printf("%s: %zu rows from %s, predicted on %s (%s)%s\n", cases[c].name, nrows,
                   cases[c].csv, hw.name, cases[c].hw_path,
                   no_launch ? " [diagnostic: launch_s subtracted]" : "");
            printf("  %-14s %-8s %4s %9s %9s %9s %10s %7s %7s\n", "op", "tokens", "n", "med|err|",
                   "p90|err|", "max|err|", "med err", "<=10%", "<=35%");
            static const struct {
                const char *label;
                uint64_t lo, hi;
            } regimes[] = {{"all", 1, UINT64_MAX}, {"<=128", 1, 128}, {">=384", 384, UINT64_MAX}};
            for (int o = -1; o < HELDOUT_NOPS; o++) {
                for (size_t g = 0; g < sizeof regimes / sizeof regimes[0]; g++) {
                    heldout_stats s;
                    stats_for(res, nres, o, regimes[g].lo, regimes[g].hi, buf, work, &s);
                    print_stats_line(o < 0 ? "all ops" : heldout_op_names[o], regimes[g].label, &s);
                }
            }
            /* The whole FFN of each row (the three ops summed), and how often the measured
             * time falls inside the prediction's p10-p90 range (docs/model.md, "Uncertainty") */
            double p10, p90;
            bool dflt = ffn_hw_unc_range(&hw, &p10, &p90);
            for (size_t g = 0; g < sizeof regimes / sizeof regimes[0]; g++) {
                size_t k = 0, inside = 0, inside_ops = 0, n_ops = 0;
                for (size_t i = 0; i < nrows; i++) {
                    if (rows[i].tokens < regimes[g].lo || rows[i].tokens > regimes[g].hi) continue;
                    double pm = 0, ms = 0;
                    for (int o = 0; o < HELDOUT_NOPS; o++) {
                        const result *r = &res[i * HELDOUT_NOPS + (size_t)o];
                        pm += r->predicted_s;
                        ms += r->measured_s;
                        inside_ops += r->measured_s >= r->predicted_s * p10 &&
                                      r->measured_s <= r->predicted_s * p90;
                        n_ops++;
                    }
                    buf[k++] = heldout_rel_err(pm, ms);
                    inside += ms >= pm * p10 && ms <= pm * p90;
                }
                heldout_stats st;
                heldout_summarise(buf, k, work, &st);
                print_stats_line("ffn (3 ops)", regimes[g].label, &st);
                if (g == 0)
                    printf("  measured inside the predicted p10-p90 range (x%.3g-x%.3g%s): "
                           "%.0f%% of FFNs, %.0f%% of ops\n",
                           p10, p90, dflt ? ", default" : "",
                           k ? 100.0 * (double)inside / (double)k : 0.0,
                           n_ops ? 100.0 * (double)inside_ops / (double)n_ops : 0.0);
            }
            qsort(res, nres, sizeof *res, cmp_result_abs_desc);
            printf("  worst 10 (err = predicted/measured - 1):\n");
            printf("    %-28s %3s %5s %-14s %11s %11s %8s\n", "model", "tp", "T", "op", "measured",
                   "predicted", "err");
            for (size_t i = 0; i < nres && i < 10; i++) {
                const result *r = &res[i];
                printf("    %-28s %3llu %5llu %-14s %8.4f ms %8.4f ms %+7.0f%%\n", r->row->model,
                       (unsigned long long)r->row->tp, (unsigned long long)r->row->tokens,
                       heldout_op_names[r->op], r->measured_s * 1e3, r->predicted_s * 1e3,
                       100 * r->err);
            }
            printf("\n");
        }
        free(res);
        free(buf);
        free(work);
        free(rows);
    }
    return status;
}

#endif /* FFN_HELDOUT_NO_MAIN */
