/* Checks the simulator's per-op predictions for one device's shard of an MLP layer against
 * operator times measured outside any fit (data/check/, docs/validation.md): one CSV row per
 * (model, tensor-parallel degree, token count) with the median times of three operators,
 *   mlp_up_proj   = GEMM m=T, n=(gated ? 2 : 1) * f/tp, k=d   (gate+up fused in one GEMM)
 *   mlp_act       = elementwise, reads (gated ? 2 : 1) * T*f/tp, writes T*f/tp elements
 *   mlp_down_proj = GEMM m=T, n=d, k=f/tp
 * all fp16 (the format: data/check/README.md; scripts/gpu_check_convert.py writes it from
 * bench/gpu/torch_ffn_check.py's output). It builds the three ops with sim/'s own constructors
 * on the given hw spec and prints per op the error statistics and the worst rows; --csv dumps
 * every row instead. It changes no parameter: this is a check, not a fit.
 *
 * The parsing and prediction functions are also compiled into tests/test_check_mlp.c, which
 * defines FFN_MLP_CHECK_NO_MAIN to leave main() out. */
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

/* The CSV header scripts/gpu_check_convert.py writes; anything else is rejected rather than
 * guessed. */
#define MLP_CHECK_HEADER                                                                           \
    "model,source_commit,num_tensor_parallel_workers,num_tokens,n_embd,n_expanded_embd,"           \
    "use_gated_mlp,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,"                       \
    "time_stats.mlp_down_proj.median"
#define MLP_CHECK_NCOLS 10

typedef enum mlp_check_op {
    MLP_CHECK_UP = 0,
    MLP_CHECK_ACT,
    MLP_CHECK_DOWN,
    MLP_CHECK_NOPS
} mlp_check_op;

static const char *const mlp_check_op_names[MLP_CHECK_NOPS] = {"mlp_up_proj", "mlp_act",
                                                               "mlp_down_proj"};

/* One measured row. Times in seconds (the CSV holds milliseconds). */
typedef struct mlp_check_row {
    char model[64];
    char commit[16];
    uint64_t tp;     /* num_tensor_parallel_workers */
    uint64_t tokens; /* num_tokens */
    uint64_t d;      /* n_embd */
    uint64_t f;      /* n_expanded_embd, before the tensor-parallel split */
    bool gated;      /* use_gated_mlp: SiLU-and-multiply; else GELU (torch.nn.GELU, erf form) */
    double measured_s[MLP_CHECK_NOPS];
} mlp_check_row;

/* Error statistics of a set of signed relative errors (predicted/measured - 1). */
typedef struct mlp_check_stats {
    size_t n;
    double median_abs, p90_abs, max_abs;
    double median_signed;
    double within10, within35; /* shares in [0, 1] */
} mlp_check_stats;

/* The functions tests/test_mlp_check.c also uses (contracts at their definitions). */
int mlp_check_load(const char *path, mlp_check_row **rows, size_t *n, ffn_diag *diag);
void mlp_check_ops(const ffn_hw *hw, const mlp_check_row *r, ffn_op ops[MLP_CHECK_NOPS]);
double mlp_check_rel_err(double predicted, double measured);
void mlp_check_summarise(const double *err, size_t n, double *work, mlp_check_stats *s);

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

/* Read a check CSV. On success *rows (malloc'd, the caller frees) holds *n rows and 0 is
 * returned; on error a negative FFN_E* code, *rows is NULL and diag says file:line:col. */
int mlp_check_load(const char *path, mlp_check_row **rows, size_t *n, ffn_diag *diag)
{
    *rows = NULL;
    *n = 0;
    ffn_diag_clear(diag);
    FILE *fp = fopen(path, "r");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open '%s'", path);
    char line[1024];
    int lineno = 0, rc = 0;
    size_t cap = 0;
    mlp_check_row *v = NULL;
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
            if (strcmp(line, MLP_CHECK_HEADER) != 0) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 1, 1, "unexpected header (want '%s')",
                                  MLP_CHECK_HEADER);
                goto error;
            }
            continue;
        }
        if (len == 0) continue;
        char *fl[MLP_CHECK_NCOLS + 1];
        int nf = split_csv(line, fl, MLP_CHECK_NCOLS);
        if (nf != MLP_CHECK_NCOLS) {
            rc = ffn_diag_set(diag, FFN_EPARSE, path, lineno, 1, "expected %d fields, got %s%d",
                              MLP_CHECK_NCOLS, nf > MLP_CHECK_NCOLS ? "more than " : "",
                              nf > MLP_CHECK_NCOLS ? MLP_CHECK_NCOLS : nf);
            goto error;
        }
        mlp_check_row r;
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
        for (int i = 0; i < MLP_CHECK_NOPS; i++) {
            if (!parse_ms(fl[7 + i], &r.measured_s[i])) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 8 + i,
                                  "%s: '%s' is not a positive time in ms", mlp_check_op_names[i],
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
            mlp_check_row *nv = realloc(v, ncap * sizeof *nv);
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

/* The activation the model prices for a row: SiLU-and-multiply for gated MLPs, GELU (exact
 * erf form) otherwise. */
static ffn_act mlp_check_act(const mlp_check_row *r)
{
    return r->gated ? FFN_ACT_SWIGLU : FFN_ACT_GELU;
}

/* Build the three ops of one row on hw with sim/'s constructors (fp16 weights and
 * activations, one device's shard of a tensor-parallel layer). ops[MLP_CHECK_NOPS] is filled. */
void mlp_check_ops(const ffn_hw *hw, const mlp_check_row *r, ffn_op ops[MLP_CHECK_NOPS])
{
    const ffn_dtype dt = FFN_DT_FP16;
    const double b = ffn_dtype_bytes(dt, 0);
    const ffn_dtype cdt = ffn_compute_dtype(hw, dt, dt);
    const uint64_t g = r->gated ? 2 : 1;
    const uint64_t fs = r->f / r->tp; /* intermediate columns on this device */
    const double elems = (double)r->tokens * (double)fs;
    ffn_op_gemm(&ops[MLP_CHECK_UP], hw, "mlp_up_proj", r->tokens, g * fs, r->d, 1, b, b, cdt, 0);
    /* The same accounting as the unfused activation op in sim/ffn.c: the activation (and gate
     * multiply) reads g*[T, f/tp] and writes h [T, f/tp]. */
    ffn_op_elem(&ops[MLP_CHECK_ACT], hw, "mlp_act", FFN_OP_ELEMWISE, elems,
                elems * ffn_act_flops(mlp_check_act(r)), ((double)g + 1.0) * elems * b);
    ffn_op_gemm(&ops[MLP_CHECK_DOWN], hw, "mlp_down_proj", r->tokens, r->d, fs, 1, b, b, cdt, 0);
}

/* Signed relative error of a prediction: predicted/measured - 1. */
double mlp_check_rel_err(double predicted, double measured)
{
    return predicted / measured - 1.0;
}

/* Summarise n signed errors; work[n] is caller scratch. p90 is the nearest-rank percentile. */
void mlp_check_summarise(const double *err, size_t n, double *work, mlp_check_stats *s)
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

#ifndef FFN_MLP_CHECK_NO_MAIN

/* One evaluated (row, op). */
typedef struct result {
    const mlp_check_row *row;
    int op;
    double measured_s, predicted_s, roofline_s, err;
} result;

static int cmp_result_abs_desc(const void *a, const void *b)
{
    double x = fabs(((const result *)a)->err), y = fabs(((const result *)b)->err);
    return (x < y) - (x > y);
}

static void print_stats_line(const char *label, const char *regime, const mlp_check_stats *s)
{
    if (s->n == 0) return;
    printf("  %-14s %-8s %4zu %8.1f%% %8.1f%% %8.1f%% %+9.1f%% %6.0f%% %6.0f%%\n", label, regime,
           s->n, 100 * s->median_abs, 100 * s->p90_abs, 100 * s->max_abs, 100 * s->median_signed,
           100 * s->within10, 100 * s->within35);
}

/* Stats over the results of one op (op < 0: all ops) within a token range. */
static void stats_for(const result *res, size_t n, int op, uint64_t tmin, uint64_t tmax,
                      double *buf, double *work, mlp_check_stats *s)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (op >= 0 && res[i].op != op) continue;
        if (res[i].row->tokens < tmin || res[i].row->tokens > tmax) continue;
        buf[k++] = res[i].err;
    }
    mlp_check_summarise(buf, k, work, s);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_check_mlp [--csv] [--onchip] CSV HW\n"
                 "  Compares ffnroof's per-op predictions on the hw spec HW with the MLP operator\n"
                 "  times measured in CSV (data/check/, never fitted to; data/check/README.md).\n"
                 "  --csv          print every (row, op) as CSV instead of the summary\n"
                 "  --onchip       charge the tiled-GEMM traffic bound per on-chip level (predict\n"
                 "                 --onchip; docs/model.md \"On-chip memory\")\n");
}

int main(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0;
    bool csv = false, onchip = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = true;
        else if (strcmp(argv[i], "--onchip") == 0)
            onchip = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && npaths < 2)
            paths[npaths++] = argv[i];
        else {
            fprintf(stderr, "bench_check_mlp: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (npaths != 2) {
        usage(stderr);
        return 2;
    }
    const char *check_csv = paths[0], *check_hw = paths[1];
    if (csv)
        printf("hw,model,num_tensor_parallel_workers,num_tokens,op,measured_ms,"
               "predicted_ms,roofline_ms,rel_err\n");
    int status = 0;
    ffn_diag diag;
    ffn_hw hw;
    char msg[1200];
    int rc = ffn_hw_load(check_hw, &hw, &diag);
    if (rc) {
        ffn_diag_format(&diag, msg, sizeof msg);
        fprintf(stderr, "bench_check_mlp: %s\n", msg);
        return 2;
    }
    mlp_check_row *rows = NULL;
    size_t nrows = 0;
    rc = mlp_check_load(check_csv, &rows, &nrows, &diag);
    if (rc) {
        ffn_diag_format(&diag, msg, sizeof msg);
        fprintf(stderr, "bench_check_mlp: %s\n", msg);
        return 2;
    }
    size_t nres = nrows * MLP_CHECK_NOPS;
    result *res = calloc(nres ? nres : 1, sizeof *res);
    double *buf = calloc(nres ? nres : 1, sizeof *buf);
    double *work = calloc(nres ? nres : 1, sizeof *work);
    if (!res || !buf || !work) {
        fprintf(stderr, "bench_check_mlp: out of memory\n");
        free(res);
        free(buf);
        free(work);
        free(rows);
        return 1;
    }
    for (size_t i = 0; i < nrows; i++) {
        ffn_op ops[MLP_CHECK_NOPS];
        mlp_check_ops(&hw, &rows[i], ops);
        for (int o = 0; onchip && o < MLP_CHECK_NOPS; o++)
            if (ops[o].kind == FFN_OP_GEMM) {
                ops[o].traffic_bound = true;
                ffn_op_recost(&ops[o], &hw);
            }
        for (int o = 0; o < MLP_CHECK_NOPS; o++) {
            result *r = &res[i * MLP_CHECK_NOPS + (size_t)o];
            r->row = &rows[i];
            r->op = o;
            r->measured_s = rows[i].measured_s[o];
            r->predicted_s = ops[o].predicted_s;
            r->roofline_s = ops[o].roofline_s;
            r->err = mlp_check_rel_err(r->predicted_s, r->measured_s);
            if (!(r->predicted_s > 0) || !isfinite(r->predicted_s)) status = 1;
        }
    }
    if (csv) {
        for (size_t i = 0; i < nres; i++) {
            const result *r = &res[i];
            printf("%s,%s,%llu,%llu,%s,%.6g,%.6g,%.6g,%.4f\n", hw.name, r->row->model,
                   (unsigned long long)r->row->tp, (unsigned long long)r->row->tokens,
                   mlp_check_op_names[r->op], r->measured_s * 1e3, r->predicted_s * 1e3,
                   r->roofline_s * 1e3, r->err);
        }
    } else {
        printf("%zu rows from %s, predicted on %s (%s)\n", nrows, check_csv, hw.name, check_hw);
        printf("  %-14s %-8s %4s %9s %9s %9s %10s %7s %7s\n", "op", "tokens", "n", "med|err|",
               "p90|err|", "max|err|", "med err", "<=10%", "<=35%");
        static const struct {
            const char *label;
            uint64_t lo, hi;
        } regimes[] = {{"all", 1, UINT64_MAX}, {"<=128", 1, 128}, {">=384", 384, UINT64_MAX}};
        for (int o = -1; o < MLP_CHECK_NOPS; o++) {
            for (size_t g = 0; g < sizeof regimes / sizeof regimes[0]; g++) {
                mlp_check_stats s;
                stats_for(res, nres, o, regimes[g].lo, regimes[g].hi, buf, work, &s);
                print_stats_line(o < 0 ? "all ops" : mlp_check_op_names[o], regimes[g].label, &s);
            }
        }
        /* The whole FFN of each row (the three ops summed), and how often the measured
         * time falls inside the prediction's p10-p90 range (docs/model.md, "Uncertainty") */
        double p10, p90;
        bool dflt = ffn_hw_unc_range_dt(&hw, FFN_DT_FP16, &p10, &p90);
        for (size_t g = 0; g < sizeof regimes / sizeof regimes[0]; g++) {
            size_t k = 0, inside = 0, inside_ops = 0, n_ops = 0;
            for (size_t i = 0; i < nrows; i++) {
                if (rows[i].tokens < regimes[g].lo || rows[i].tokens > regimes[g].hi) continue;
                double pm = 0, ms = 0;
                for (int o = 0; o < MLP_CHECK_NOPS; o++) {
                    const result *r = &res[i * MLP_CHECK_NOPS + (size_t)o];
                    pm += r->predicted_s;
                    ms += r->measured_s;
                    inside_ops += r->measured_s >= r->predicted_s * p10 &&
                                  r->measured_s <= r->predicted_s * p90;
                    n_ops++;
                }
                buf[k++] = mlp_check_rel_err(pm, ms);
                inside += ms >= pm * p10 && ms <= pm * p90;
            }
            mlp_check_stats st;
            mlp_check_summarise(buf, k, work, &st);
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
                   mlp_check_op_names[r->op], r->measured_s * 1e3, r->predicted_s * 1e3,
                   100 * r->err);
        }
        printf("\n");
    }
    free(res);
    free(buf);
    free(work);
    free(rows);
    return status;
}

#endif /* FFN_MLP_CHECK_NO_MAIN */
