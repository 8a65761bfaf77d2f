/* Expert-popularity histogram files (include/ffnroof/hist.h), read whole (io/load/input.h) so that
 * a line of any length is one line: a number is never split and every position is the real
 * one. */
#include "ffnroof/hist.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

int ffn_hist_load(const char *path, double *out, size_t cap, size_t *n, ffn_diag *diag)
{
    *n = 0;
    ffn_input in;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    size_t off;
    if ((rc = ffn__input_text(&in, path, &off, diag))) goto out;
    double sum = 0;
    int lineno = 0;
    char *line;
    while (!rc && ffn__input_line(&in, &off, &line)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *p = line;
        while (*p) {
            while (*p && (isspace((unsigned char)*p) || *p == ','))
                p++;
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
                                  "histogram entry %zu must be a finite number >= 0", *n + 1);
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
    if (!rc && *n == 0)
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, in.len ? lineno : 0, 0,
                          in.len ? "the histogram has no entries (only comments or blanks)"
                                 : "the file is empty: expected one weight per expert");
    if (!rc && !isfinite(sum))
        rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0,
                          "the histogram's entries add up to more than a double holds");
    if (!rc && !(sum > 0))
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 0, 0, "the histogram has no positive entry");
out:
    ffn__input_free(&in);
    if (rc) *n = 0;
    return rc;
}
