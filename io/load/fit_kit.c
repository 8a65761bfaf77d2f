/* Measurement files of the GPU calibration kit (bench/gpu/, docs/formats.md "Fit data"): CSV
 * with the header kind,dtype,m,n,k,time_<unit> and one kernel per line:
 *   gemm      [m,k] x [k,n] in dtype
 *   silu_mul  SiLU(gate) * up over m tokens x n features: reads 2mn, writes mn elements
 *   copy      m x n elements read and written
 *   read      m x n elements read (a reduction)
 *   binary    z = x op y over m x n elements: reads 2mn, writes mn, one FLOP each
 *   unary     y = op(x) over m x n elements: reads mn, writes mn, one FLOP each
 * The time column's name carries its unit: time_s, time_ms, time_us or time_ns. '#' lines are
 * comments, except the directives '#@ harness off' and '#@ harness on': the rows after
 * 'off' were timed without a per-call harness overhead (a timed loop's mean, a published
 * rate), so `ffnroof fit` adds no harness_s to their predictions; the GEMM rows after
 * '#@ best-of-sweep on' are published maxima over shape sweeps (MAMF), which the fit does not
 * fit to but uses to set a dtype class's utilisation (include/ffnroof/fit.h), until
 * '#@ best-of-sweep off'; the rows after '#@ weights hot' were measured with their data warm
 * (one buffer reused call after call: a GEMM's weights, an elementwise kernel's inputs stay in
 * the on-chip level that holds them), predicted as `--weights hot` places weights, until
 * '#@ weights cold'. ffn_fit_data_load() reads this format, hands op tables (gzip or
 * `# op_name:` TSV) to io/load/aic_load.c and the two older formats to ffn_fit_csv_load(). */
#include "ffnroof/fitdata.h"

#include "input.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"gemm",   "silu_mul", "copy", "read",
                                         "binary", "unary",    NULL};
enum { K_GEMM = 0, K_SILU_MUL, K_COPY, K_READ, K_BINARY, K_UNARY };

static int parse_dim(const char *s, uint64_t *v)
{
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno || x == 0 || x > (1ull << 40)) return -1;
    *v = x;
    return 0;
}

/* Whether the first line that is not a comment or blank is a kit header (the whole file is
 * read, so a long comment line stays one line). */
static int kit_format(const char *path, bool *kit, ffn_diag *diag)
{
    ffn_input in;
    *kit = false;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    size_t off = 0;
    rc = ffn__input_text(&in, path, &off, diag);
    char *line;
    while (!rc && ffn__input_line(&in, &off, &line)) {
        if (line[0] == '#' || line[0] == '\0') continue;
        *kit = ffn_fit_kit_header(line);
        break;
    }
    ffn__input_free(&in);
    return rc;
}

bool ffn_fit_kit_header(const char *line)
{
    return !strncmp(line, "kind,", 5);
}

/* time_<unit> -> seconds per unit, 0 when the unit is unknown */
static double time_unit(const char *col)
{
    if (strncmp(col, "time_", 5)) return 0;
    const char *u = col + 5;
    if (!strcmp(u, "s")) return 1.0;
    if (!strcmp(u, "ms")) return 1e-3;
    if (!strcmp(u, "us")) return 1e-6;
    if (!strcmp(u, "ns")) return 1e-9;
    return 0;
}

int ffn_fit_kit_load(const char *path, ffn_fit_point *pts, size_t cap, size_t *n, ffn_diag *diag)
{
    *n = 0;
    ffn_input in;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    size_t off = 0;
    rc = ffn__input_text(&in, path, &off, diag);
    static const char *const want[] = {"kind", "dtype", "m", "n", "k"};
    char *line;
    int lineno = 0;
    bool header = false, no_harness = false, best_of_sweep = false, hot = false;
    double unit = 0;
    while (!rc && ffn__input_line(&in, &off, &line)) {
        lineno++;
        if (!strncmp(line, "#@", 2)) {
            if (!strcmp(line, "#@ harness off"))
                no_harness = true;
            else if (!strcmp(line, "#@ harness on"))
                no_harness = false;
            else if (!strcmp(line, "#@ best-of-sweep on"))
                best_of_sweep = true;
            else if (!strcmp(line, "#@ best-of-sweep off"))
                best_of_sweep = false;
            else if (!strcmp(line, "#@ weights hot"))
                hot = true;
            else if (!strcmp(line, "#@ weights cold"))
                hot = false;
            else {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1,
                                  "unknown directive '%s' ('#@ harness on|off', "
                                  "'#@ best-of-sweep on|off', '#@ weights hot|cold')",
                                  line);
                break;
            }
            continue;
        }
        if (line[0] == '#' || line[0] == '\0') continue;
        /* split at every comma; an empty field is an error */
        char *f[8];
        int nf;
        if ((rc = ffn__input_fields(line, f, 8, &nf, path, lineno, diag))) break;
        if (!header) {
            header = true;
            for (int i = 0; i < 5 && !rc; i++)
                if (i >= nf || strcmp(f[i], want[i]))
                    rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno,
                                      i < nf ? (int)(f[i] - line) + 1 : 1,
                                      "header must be 'kind,dtype,m,n,k,time_<unit>': column "
                                      "%d must be '%s'",
                                      i + 1, want[i]);
            if (rc) break;
            if (nf != 6) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1,
                                  "header must have 6 columns 'kind,dtype,m,n,k,time_<unit>', "
                                  "got %d",
                                  nf);
                break;
            }
            unit = time_unit(f[5]);
            if (unit == 0)
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, (int)(f[5] - line) + 1,
                                  "unknown time column '%s': use time_s, time_ms, time_us or "
                                  "time_ns",
                                  f[5]);
            continue;
        }
        if (nf != 6) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1, "expected 6 columns, got %d", nf);
            break;
        }
        if (*n >= cap) {
            rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, 1, "more than %zu points", cap);
            break;
        }
        int kind = -1;
        for (int i = 0; kind_names[i]; i++)
            if (!strcmp(f[0], kind_names[i])) kind = i;
        if (kind < 0) {
            rc =
                ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1,
                             "unknown kind '%s' (gemm, silu_mul, copy, read, binary, unary)", f[0]);
            break;
        }
        ffn_dtype dt;
        if (ffn_dtype_parse(f[1], &dt)) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, (int)(f[1] - line) + 1,
                              "unknown dtype '%s'", f[1]);
            break;
        }
        uint64_t d[3];
        for (int i = 0; i < 3 && !rc; i++)
            if (parse_dim(f[2 + i], &d[i]))
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, (int)(f[2 + i] - line) + 1,
                                  "'%s' must be a whole number in [1, 2^40], got '%s'", want[2 + i],
                                  f[2 + i]);
        if (rc) break;
        char *end;
        errno = 0;
        double t = strtod(f[5], &end);
        if (end == f[5] || *end || !isfinite(t) || t <= 0) {
            rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, (int)(f[5] - line) + 1,
                              "the time must be a positive number, got '%s'", f[5]);
            break;
        }
        ffn_fit_point *p = &pts[*n];
        memset(p, 0, sizeof *p);
        p->wdtype = p->adtype = dt;
        p->m = d[0];
        p->n = d[1];
        p->k = d[2];
        p->time_s = t * unit;
        p->no_harness = no_harness;
        p->best_of_sweep = best_of_sweep && kind == K_GEMM;
        p->hot = hot;
        const double el = (double)d[0] * (double)d[1], b = ffn_dtype_bytes(dt, 0);
        switch (kind) {
        case K_SILU_MUL:
            p->act = FFN_ACT_SWIGLU;
            p->elem_bytes = 3.0 * el * b;
            p->hot_bytes = 2.0 * el * b;
            p->elem_flops = ffn_act_flops(FFN_ACT_SWIGLU) * el;
            break;
        case K_COPY:
            p->elem_bytes = 2.0 * el * b;
            p->hot_bytes = el * b;
            break;
        case K_READ:
            p->elem_bytes = el * b;
            p->hot_bytes = el * b;
            p->elem_flops = el;
            break;
        case K_BINARY:
            p->elem_bytes = 3.0 * el * b;
            p->hot_bytes = 2.0 * el * b;
            p->elem_flops = el;
            break;
        case K_UNARY:
            p->elem_bytes = 2.0 * el * b;
            p->hot_bytes = el * b;
            p->elem_flops = el;
            break;
        default:
            break;
        }
        (*n)++;
    }
    ffn__input_free(&in);
    if (!rc && !header) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "the file is empty");
    if (!rc && *n == 0) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "no data points");
    if (rc) *n = 0;
    return rc;
}

bool ffn_fit_data_is_table(const char *path)
{
    if (ffn_aic_is_table(path)) return true;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char magic[2] = {0, 0};
    const bool gz = fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    fclose(f);
    return gz;
}

/* An op table's GEMM rows into pts[cap]. */
static int table_points(const char *path, ffn_fit_point *pts, size_t cap, size_t *n, ffn_diag *diag)
{
    ffn_aic_table t;
    int rc = ffn_aic_load(path, &t, diag);
    if (rc) return rc;
    if (t.op != FFN_AIC_GEMM)
        rc = ffn_diag_set(diag, FFN_EUNSUPPORTED, path, 0, 0,
                          "a %s table: its rows are no GEMM fit points", ffn_aic_op_name(t.op));
    else if (t.n_pts > cap)
        rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0, "more than %zu points", cap);
    if (!rc) {
        memcpy(pts, t.pts, t.n_pts * sizeof *pts);
        *n = t.n_pts;
    }
    ffn_aic_free(&t);
    return rc;
}

int ffn_fit_data_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts,
                      size_t cap, size_t *n, ffn_diag *diag)
{
    bool kit;
    *n = 0;
    if (ffn_fit_data_is_table(path)) return table_points(path, pts, cap, n, diag);
    int rc = kit_format(path, &kit, diag);
    if (rc) return rc;
    if (kit) return ffn_fit_kit_load(path, pts, cap, n, diag);
    return ffn_fit_csv_load(path, wdt, adt, pts, cap, n, diag);
}

/* The lines of a text file: a bound on the points it holds. */
static int count_lines(const char *path, size_t *lines, ffn_diag *diag)
{
    ffn_input in;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    size_t c = 1;
    for (const char *p = in.data; (p = memchr(p, '\n', in.len - (size_t)(p - in.data))); p++)
        c++;
    ffn__input_free(&in);
    *lines = c;
    return 0;
}

static int load_table_all(const char *path, ffn_fit_point **pts, size_t *n, ffn_aic_table *table,
                          ffn_diag *diag)
{
    ffn_aic_table own, *t = table ? table : &own;
    int rc = ffn_aic_load(path, t, diag);
    if (rc) return rc;
    if (t->op == FFN_AIC_GEMM) {
        *pts = t->pts;
        *n = t->n_pts;
        if (!table) {
            /* the points move out; the rest of the table goes */
            t->pts = NULL;
            ffn_aic_free(t);
        }
        return 0;
    }
    if (table) return 0;
    const ffn_aic_op op = t->op;
    ffn_aic_free(t);
    return ffn_diag_set(diag, FFN_EUNSUPPORTED, path, 0, 0,
                        "a %s table: its rows are no GEMM fit points", ffn_aic_op_name(op));
}

int ffn_fit_data_load_all(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point **pts,
                          size_t *n, ffn_aic_table *table, ffn_diag *diag)
{
    *pts = NULL;
    *n = 0;
    if (table) memset(table, 0, sizeof *table);
    if (ffn_fit_data_is_table(path)) return load_table_all(path, pts, n, table, diag);
    size_t cap;
    int rc = count_lines(path, &cap, diag);
    if (rc) return rc;
    if (cap > FFN_FIT_MAX_POINTS) cap = FFN_FIT_MAX_POINTS;
    ffn_fit_point *p = malloc(cap * sizeof *p);
    if (!p) return ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory for %zu points", cap);
    if ((rc = ffn_fit_data_load(path, wdt, adt, p, cap, n, diag))) {
        free(p);
        return rc;
    }
    *pts = p;
    return 0;
}

void ffn_fit_data_free(ffn_fit_point *pts, ffn_aic_table *table)
{
    if (!table || pts != table->pts) free(pts);
    ffn_aic_free(table);
}
