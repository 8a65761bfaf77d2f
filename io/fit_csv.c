/* Measurement files for `ffnroof fit` (docs/formats.md): CSV with a header naming the columns
 * m,n,k,time_ms (GEMM [m,k]x[k,n]) or m,d,f,act,time_ms (a fused dense FFN layer). '#' lines
 * are comments. */
#include "ffnroof/fitdata.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int ffn_fit_csv_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts,
                     size_t cap, size_t *n, ffn_diag *diag)
{
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    char line[1024];
    int lineno = 0, rc = 0;
    bool header = false, ffn = false;
    while (!rc && fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
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
        char *fields[6];
        int nf = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, ",", &save); t && nf < 6; t = strtok_r(NULL, ",", &save))
            fields[nf++] = t;
        int want = ffn ? 5 : 4;
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
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, lineno,
                                  (int)(fields[3] - line) + 1, "unknown activation '%s'",
                                  fields[3]);
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
    fclose(fp);
    if (!rc && !header) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "the file is empty");
    if (!rc && *n == 0) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "no data points");
    if (rc) *n = 0;
    return rc;
}
