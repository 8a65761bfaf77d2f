/* Forgiving names (include/ffnroof/match.h). */
#include "ffnroof/match.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "ffnroof/error.h"

enum { NORM = 64 };

/* lower case, without '-', '_', '.' and ' ' */
static void normalise(const char *s, char *out)
{
    size_t k = 0;
    for (; *s && k < NORM - 1; s++) {
        if (*s == '-' || *s == '_' || *s == '.' || *s == ' ') continue;
        out[k++] = (char)tolower((unsigned char)*s);
    }
    out[k] = '\0';
}

static int casecmp(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 1;
    return *a != *b;
}

size_t ffn_name_distance(const char *a, const char *b)
{
    char x[NORM], y[NORM];
    normalise(a, x);
    normalise(b, y);
    const size_t m = strlen(x), n = strlen(y);
    size_t d[NORM][NORM];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            const size_t cost = x[i - 1] != y[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[m][n];
}

int ffn_name_match(const char *name, const char *const *known, size_t n, size_t *idx,
                   ffn_match_kind *kind)
{
    *kind = FFN_MATCH_NONE;
    if (!name || !*name) return FFN_ENOTFOUND;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, known[i])) {
            *idx = i;
            *kind = FFN_MATCH_EXACT;
            return 0;
        }
    size_t hits = 0, at = 0;
    for (size_t i = 0; i < n; i++)
        if (!casecmp(name, known[i])) hits++, at = i;
    if (hits == 1) {
        *idx = at;
        *kind = FFN_MATCH_CASE;
        return 0;
    }
    char want[NORM], have[NORM];
    normalise(name, want);
    if (!want[0]) return FFN_ENOTFOUND;
    hits = 0;
    for (size_t i = 0; i < n; i++) {
        normalise(known[i], have);
        if (!strcmp(want, have)) hits++, at = i;
    }
    if (hits == 1) {
        *idx = at;
        *kind = FFN_MATCH_SEPARATORS;
        return 0;
    }
    if (hits > 1) return FFN_EINVAL;
    const size_t wl = strlen(want);
    for (size_t i = 0; i < n; i++) {
        normalise(known[i], have);
        if (!strncmp(want, have, wl)) hits++, at = i;
    }
    if (hits == 1) {
        *idx = at;
        *kind = FFN_MATCH_PREFIX;
        return 0;
    }
    return hits > 1 ? FFN_EINVAL : FFN_ENOTFOUND;
}

size_t ffn_name_begun(const char *name, const char *const *known, size_t n, size_t *out, size_t max)
{
    char want[NORM], have[NORM];
    normalise(name ? name : "", want);
    const size_t wl = strlen(want);
    size_t got = 0;
    for (size_t i = 0; i < n && got < max && wl; i++) {
        normalise(known[i], have);
        if (!strncmp(want, have, wl)) out[got++] = i;
    }
    return got;
}

size_t ffn_name_suggest(const char *name, const char *const *known, size_t n, size_t *out,
                        size_t max)
{
    if (!name || !max) return 0;
    char want[NORM];
    normalise(name, want);
    const size_t wl = strlen(want), limit = wl / 3 > 1 ? wl / 3 : 1;
    /* the names it begins, then by distance 1, 2, ... up to the limit */
    size_t got = ffn_name_begun(name, known, n, out, max);
    for (size_t dist = 1; dist <= limit && got < max; dist++)
        for (size_t i = 0; i < n && got < max; i++) {
            bool seen = false;
            for (size_t k = 0; k < got; k++)
                seen |= out[k] == i;
            if (!seen && ffn_name_distance(name, known[i]) == dist) out[got++] = i;
        }
    return got;
}
