/* The grid syntax scenarios and the command line share (include/ffnroof/scenario.h,
 * docs/formats-scenario.md "Grids"): "1,2,4", "1..64", "1..1024:x2", "256..4096:+256", and the
 * "weights/activations" dtype pair. */
#include "ffnroof/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int num(const char *s, size_t len, uint64_t *v, char *why, size_t wn)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) {
        snprintf(why, wn, "'%.*s' is not a whole number", (int)(len < 40 ? len : 40), s);
        return FFN_EPARSE;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)buf[i])) {
            snprintf(why, wn, "'%s' is not a whole number", buf);
            return FFN_EPARSE;
        }
    errno = 0;
    *v = strtoull(buf, NULL, 10);
    if (errno == ERANGE) {
        snprintf(why, wn, "'%s' is too large", buf);
        return FFN_ERANGE;
    }
    return 0;
}

int ffn_grid_parse(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, size_t cap, size_t *n,
                   char *why, size_t wn)
{
    *n = 0;
    if (!s) s = "";
    const char *p = s;
    while (*p == ' ')
        p++;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && p[len - 1] == ' ')
            len--;
        const char *dash = memchr(p, '-', len);
        uint64_t a, b, step = 1;
        bool geometric = false;
        int rc;
        if (!dash) {
            if ((rc = num(p, len, &a, why, wn))) return rc;
            b = a;
        } else {
            if ((rc = num(p, (size_t)(dash - p), &a, why, wn))) return rc;
            const char *rest = dash + 1;
            size_t rlen = len - (size_t)(rest - p);
            const char *colon = memchr(rest, ':', rlen);
            if ((rc = num(rest, colon ? (size_t)(colon - rest) : rlen, &b, why, wn))) return rc;
            if (colon) {
                const char *st = colon + 1;
                size_t slen = rlen - (size_t)(st - rest);
                if (slen && (*st == 'x' || *st == '*')) geometric = true, st++, slen--;
                if ((rc = num(st, slen, &step, why, wn))) return rc;
                if (step == 0 || (geometric && step < 2)) {
                    snprintf(why, wn, "the step of '%.*s' must be %s", (int)len, p,
                             geometric ? ">= 2" : ">= 1");
                    return FFN_ERANGE;
                }
            }
            if (b < a) {
                snprintf(why, wn, "empty range '%.*s'", (int)len, p);
                return FFN_ERANGE;
            }
        }
        for (uint64_t v = a; v <= b;) {
            if (v < lo || v > hi) {
                snprintf(why, wn, "%llu is outside [%llu, %llu]", (unsigned long long)v,
                         (unsigned long long)lo, (unsigned long long)hi);
                return FFN_ERANGE;
            }
            if (*n >= cap) {
                snprintf(why, wn, "more than %zu values", cap);
                return FFN_ENOSPACE;
            }
            out[(*n)++] = v;
            uint64_t next = geometric ? v * step : v + step;
            if (next <= v || (geometric && next / step != v)) break; /* overflow */
            v = next;
        }
        if (!comma) break;
        p = comma + 1;
        while (*p == ' ')
            p++;
        if (!*p) {
            snprintf(why, wn, "trailing comma in '%s'", s);
            return FFN_EPARSE;
        }
    }
    if (*n == 0) {
        snprintf(why, wn, "empty grid");
        return FFN_ERANGE;
    }
    return 0;
}

int ffn_dtype_pair_parse(const char *s, ffn_dtype *w, ffn_dtype *a)
{
    if (!s) return FFN_EINVAL;
    const char *slash = strchr(s, '/');
    if (!slash) {
        if (ffn_dtype_parse(s, w)) return FFN_EINVAL;
        *a = *w;
        return 0;
    }
    char buf[32];
    size_t l = (size_t)(slash - s);
    if (l == 0 || l >= sizeof buf) return FFN_EINVAL;
    memcpy(buf, s, l);
    buf[l] = '\0';
    if (ffn_dtype_parse(buf, w) || ffn_dtype_parse(slash + 1, a)) return FFN_EINVAL;
    return 0;
}
