/* Expert-popularity histogram files (include/ffnroof/hist.h). */
#include "ffnroof/hist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ffn_hist_load(const char *path, double *out, size_t cap, size_t *n, ffn_diag *diag)
{
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    char line[4096];
    int lineno = 0, rc = 0;
    double sum = 0;
    while (!rc && fgets(line, sizeof line, fp)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *p = line;
        while (*p) {
            while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
            if (!*p) break;
            int col = (int)(p - line) + 1;
            char *end;
            errno = 0;
            double v = strtod(p, &end);
            if (end == p || (*end && !isspace((unsigned char)*end) && *end != ',')) {
                rc = ffn_diag_set(diag, FFN_EPARSE, path, lineno, col,
                                  "histogram entry is not a number");
                break;
            }
            if (!isfinite(v) || v < 0) {
                rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, col,
                                  "histogram entry %d must be a finite number >= 0", (int)*n + 1);
                break;
            }
            if (*n >= cap) {
                rc = ffn_diag_set(diag, FFN_ERANGE, path, lineno, col,
                                  "more than %zu histogram entries", cap);
                break;
            }
            out[(*n)++] = v;
            sum += v;
            p = end;
        }
    }
    fclose(fp);
    if (!rc && *n == 0) rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "the histogram is empty");
    if (!rc && !(sum > 0))
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "the histogram has no positive entry");
    if (rc) *n = 0;
    return rc;
}
