/* Option values, checked strictly (cli/cli.h): whole numbers and numbers in a range, integer
 * lists and ranges, output formats, dtypes, keywords, phases and name lists. Each prints what
 * is wrong and returns FFN_EXIT_USAGE. */
#define _GNU_SOURCE
#include "cli.h"

#include "ffnroof/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ffn_cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                uint64_t *out)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return ffn_cli_usage(cmd, "%s needs a whole number, got '%s'", opt, s ? s : "");
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE)
        return ffn_cli_usage(cmd, "%s needs a whole number, got '%s'", opt, s);
    if (v < lo || v > hi)
        return ffn_cli_usage(cmd, "%s: %s is outside [%llu, %llu]", opt, s, (unsigned long long)lo,
                             (unsigned long long)hi);
    *out = v;
    return 0;
}

int ffn_cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                   double *out)
{
    if (!s || !*s) return ffn_cli_usage(cmd, "%s needs a number", opt);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v))
        return ffn_cli_usage(cmd, "%s needs a finite number, got '%s'", opt, s);
    if (v < lo || v > hi) return ffn_cli_usage(cmd, "%s: %s is outside [%g, %g]", opt, s, lo, hi);
    *out = v;
    return 0;
}

int ffn_cli_format(const char *cmd, const char *s, ffn_format *out, bool allow_csv)
{
    if (!strcmp(s, "table"))
        *out = FFN_FMT_TABLE;
    else if (!strcmp(s, "json"))
        *out = FFN_FMT_JSON;
    else if (!strcmp(s, "csv") && allow_csv)
        *out = FFN_FMT_CSV;
    else
        return ffn_cli_usage(cmd, "--format must be table, json%s; got '%s'",
                             allow_csv ? " or csv" : "", s);
    return 0;
}

int ffn_cli_choice(const char *cmd, const char *opt, const char *s, const char *const *names,
                   int *out)
{
    int n = 0;
    while (names[n])
        n++;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return 0;
        }
    char list[256] = "";
    size_t l = 0;
    for (int i = 0; i < n && l < sizeof list; i++)
        l += (size_t)snprintf(list + l, sizeof list - l, "%s%s",
                              i == 0       ? ""
                              : i == n - 1 ? " or "
                                           : ", ",
                              names[i]);
    return ffn_cli_usage(cmd, "%s must be %s; got '%s'", opt, list, s);
}

int ffn_cli_dtype(const char *cmd, const char *opt, const char *s, ffn_dtype *out)
{
    if (ffn_dtype_parse(s, out))
        return ffn_cli_usage(
            cmd,
            "%s: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, int8, int4, fp8-block, nvfp4, "
            "mxfp4)",
            opt, s);
    return 0;
}

static int parse_u(const char *cmd, const char *opt, const char *s, size_t len, uint64_t *v)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf) return ffn_cli_usage(cmd, "%s: bad list '%s'", opt, s);
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)buf[i]))
            return ffn_cli_usage(cmd, "%s: '%s' is not a whole number", opt, buf);
    errno = 0;
    *v = strtoull(buf, NULL, 10);
    if (errno == ERANGE) return ffn_cli_usage(cmd, "%s: '%s' is too large", opt, buf);
    return 0;
}

int ffn_cli_u64_list(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out, size_t cap, size_t *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *dash = memchr(p, '-', len);
        uint64_t a, b, step = 1;
        bool geometric = false;
        if (!dash) {
            if (parse_u(cmd, opt, p, len, &a)) return FFN_EXIT_USAGE;
            b = a;
        } else {
            if (parse_u(cmd, opt, p, (size_t)(dash - p), &a)) return FFN_EXIT_USAGE;
            const char *rest = dash + 1;
            size_t rlen = len - (size_t)(rest - p);
            const char *colon = memchr(rest, ':', rlen);
            if (parse_u(cmd, opt, rest, colon ? (size_t)(colon - rest) : rlen, &b))
                return FFN_EXIT_USAGE;
            if (colon) {
                const char *st = colon + 1;
                size_t slen = rlen - (size_t)(st - rest);
                if (slen && (*st == 'x' || *st == '*')) geometric = true, st++, slen--;
                if (parse_u(cmd, opt, st, slen, &step)) return FFN_EXIT_USAGE;
                if (step == 0 || (geometric && step < 2))
                    return ffn_cli_usage(cmd, "%s: the step of '%.*s' must be %s", opt, (int)len, p,
                                         geometric ? ">= 2" : ">= 1");
            }
            if (b < a) return ffn_cli_usage(cmd, "%s: empty range '%.*s'", opt, (int)len, p);
        }
        for (uint64_t v = a; v <= b;) {
            if (v < lo || v > hi)
                return ffn_cli_usage(cmd, "%s: %llu is outside [%llu, %llu]", opt,
                                     (unsigned long long)v, (unsigned long long)lo,
                                     (unsigned long long)hi);
            if (*n >= cap) return ffn_cli_usage(cmd, "%s: more than %zu values", opt, cap);
            out[(*n)++] = v;
            uint64_t next = geometric ? v * step : v + step;
            if (next <= v) break; /* overflow */
            v = next;
        }
        if (!comma) break;
        p = comma + 1;
        if (!*p) return ffn_cli_usage(cmd, "%s: trailing comma in '%s'", opt, s);
    }
    if (*n == 0) return ffn_cli_usage(cmd, "%s: empty list", opt);
    return 0;
}

int ffn_cli_phases(const char *cmd, const char *s, unsigned *mask)
{
    if (!strcmp(s, "prefill"))
        *mask = 1u;
    else if (!strcmp(s, "decode"))
        *mask = 2u;
    else if (!strcmp(s, "both"))
        *mask = 3u;
    else
        return ffn_cli_usage(cmd, "--phase must be prefill, decode or both; got '%s'", s);
    return 0;
}

int ffn_cli_refs(const char *cmd, const char *opt, const char *list, ffn_sc_ref *refs, size_t *n)
{
    *n = 0;
    const char *p = list;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == 0 || l >= sizeof refs[0].name)
            return ffn_cli_usage(cmd, "%s: bad list '%s'", opt, list);
        if (*n >= FFN_SC_MAX_REFS)
            return ffn_cli_usage(cmd, "%s: more than %d entries", opt, FFN_SC_MAX_REFS);
        memcpy(refs[*n].name, p, l);
        refs[*n].name[l] = '\0';
        refs[*n].line = refs[*n].col = 0;
        (*n)++;
        if (!c) break;
        p = c + 1;
    }
    if (*n == 0) return ffn_cli_usage(cmd, "%s: empty list", opt);
    return 0;
}
