/* Measurement files for `ffnroof fit` (docs/formats.md): CSV with a header naming the columns
 * m,n,k,time_ms (GEMM [m,k]x[k,n]) or m,d,f,act,time_ms (a fused dense FFN layer). '#' lines
 * are comments. The file is read whole (io/load/input.h): a line of any length is one line. */
#include "ffnroof/fitdata.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

static int parse_u64(const char *s, uint64_t *v)
{
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno || x == 0 || x > (1ull << 32)) return -1;
    *v = x;
    return 0;
}

int ffn_fit_csv_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts, size_t cap,
                     size_t *n, ffn_diag *diag)
{
    *n = 0;
    ffn_input in;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    size_t off;
    rc = ffn__input_text(&in, path, &off, diag);
    int lineno = 0;
    bool header = false, ffn = false;
    char *line;
    while (!rc && ffn__input_line(&in, &off, &line)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\0') continue;
        if (!header) {
            if (!strcmp(line, "m,n,k,time_ms"))
                ffn = false;
            else if (!strcmp(line, "m,d,f,act,time_ms"))
                ffn = true;
            else
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1,
                                  "header must be 'm,n,k,time_ms' or 'm,d,f,act,time_ms'");
            header = true;
            continue;
        }
        if (*n >= cap) {
            rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, 1, "more than %zu points", cap);
            break;
        }
        /* Split at every comma: an empty field is an error, not a column that vanishes. */
        char *fields[6];
        int nf, want = ffn ? 5 : 4;
        if ((rc = ffn__input_fields(line, fields, 6, &nf, path, lineno, diag))) break;
        if (nf != want) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, 1, "expected %d columns, got %d",
                              want, nf);
            break;
        }
        ffn_fit_point *p = &pts[*n];
        memset(p, 0, sizeof *p);
        p->wdtype = wdt;
        p->adtype = adt;
        int col = 1;
        uint64_t a, b, c;
        if (parse_u64(fields[0], &a) || parse_u64(fields[1], &b) || parse_u64(fields[2], &c)) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, col,
                              "m, n/d and k/f must be whole numbers in [1, 2^32]");
            break;
        }
        p->m = a;
        if (ffn) {
            p->k = b;
            p->f = c;
            if (ffn_act_parse(fields[3], &p->act)) {
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno, (int)(fields[3] - line) + 1,
                                  "unknown activation '%s'", fields[3]);
                break;
            }
        } else {
            p->n = b;
            p->k = c;
        }
        char *ts = fields[want - 1], *end;
        errno = 0;
        double ms = strtod(ts, &end);
        if (end == ts || *end || !isfinite(ms) || ms <= 0) {
            rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, (int)(ts - line) + 1,
                              "time_ms must be a positive number");
            break;
        }
        p->time_s = ms * 1e-3;
        (*n)++;
    }
    const bool empty = in.len == 0;
    ffn__input_free(&in);
    if (!rc && !header)
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0,
                          empty ? "the file is empty" : "no header line (only comments or blanks)");
    if (!rc && *n == 0) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "no data points");
    if (rc) *n = 0;
    return rc;
}
