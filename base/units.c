/* Strict parser and formatter for human units (include/ffnroof/units.h). */
#include "ffnroof/units.h"
#include "ffnroof/error.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *sym;
    double mult;
} prefix;

/* Longest first, so "Ki" is tried before "K". */
static const prefix prefixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
    {"m", 1e-3},
    {"u", 1e-6},
    {"\xc2\xb5", 1e-6},
    {"n", 1e-9},
    {"", 1.0},
};

typedef struct {
    const char *sym;
    ffn_unit kind;
    double mult;
    bool allow_small; /* sub-unit prefixes (m, u, n) make sense */
} base_unit;

static const base_unit units[] = {
    {"B/s", FFN_UNIT_BPS, 1.0, false},     {"Bps", FFN_UNIT_BPS, 1.0, false},
    {"b/s", FFN_UNIT_BPS, 0.125, false},   {"bps", FFN_UNIT_BPS, 0.125, false},
    {"bit/s", FFN_UNIT_BPS, 0.125, false}, {"B", FFN_UNIT_BYTES, 1.0, false},
    {"b", FFN_UNIT_BYTES, 0.125, false},   {"bit", FFN_UNIT_BYTES, 0.125, false},
    {"FLOPS", FFN_UNIT_FLOPS, 1.0, false}, {"FLOP/s", FFN_UNIT_FLOPS, 1.0, false},
    {"OPS", FFN_UNIT_FLOPS, 1.0, false},   {"OP/s", FFN_UNIT_FLOPS, 1.0, false},
    {"FLOP", FFN_UNIT_FLOP, 1.0, false},   {"s", FFN_UNIT_TIME, 1.0, true},
    {"W", FFN_UNIT_POWER, 1.0, false},     {"Hz", FFN_UNIT_FREQ, 1.0, false},
    {"min", FFN_UNIT_TIME, 60.0, false},   {"h", FFN_UNIT_TIME, 3600.0, false},
};

const char *ffn_unit_kind_name(ffn_unit kind)
{
    switch (kind) {
    case FFN_UNIT_NONE:
        return "a plain number";
    case FFN_UNIT_BYTES:
        return "bytes (e.g. '80 GB', '141 GiB')";
    case FFN_UNIT_BPS:
        return "bandwidth (e.g. '3.35 TB/s')";
    case FFN_UNIT_FLOPS:
        return "throughput (e.g. '989.4 TFLOPS')";
    case FFN_UNIT_FLOP:
        return "work (e.g. '2 GFLOP')";
    case FFN_UNIT_TIME:
        return "time (e.g. '2 us')";
    case FFN_UNIT_POWER:
        return "power (e.g. '700 W')";
    case FFN_UNIT_FREQ:
        return "frequency (e.g. '1.98 GHz')";
    default:
        return "?";
    }
}

static int fail(char *why, size_t n, int err, const char *fmt, const char *a)
{
    if (why && n) snprintf(why, n, fmt, a);
    return err;
}

/* Strict decimal number: [+-]digits[.digits][(e|E)[+-]digits]; no hex, inf or nan. */
static const char *scan_number(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    bool digits = false;
    while (isdigit((unsigned char)*p))
        p++, digits = true;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++, digits = true;
    }
    if (!digits) return s;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-') q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q))
                q++;
            p = q;
        }
    }
    return p;
}

/* v (the value of the decimal text num) times a prefix multiplier, exactly: a decimal prefix is
 * folded into the exponent and the text re-read, so "2.039 TB/s" is the double nearest to
 * 2.039e12 (2.039 * 1e12 would be one ulp above it). Binary prefixes and the bit factor are
 * powers of two and multiply exactly. */
static double scaled(const char *num, double v, double mult)
{
    if (mult == 1.0) return v;
    int e10 = 0;
    for (double m = mult; m >= 10.0 && e10 < 30; m /= 10.0)
        e10++;
    for (double m = mult; m < 1.0 && e10 > -30; m *= 10.0)
        e10--;
    double p10 = 1.0;
    for (int k = 0; k < (e10 < 0 ? -e10 : e10); k++)
        p10 *= 10.0;
    if ((e10 >= 0 ? p10 : 1.0 / p10) != mult || e10 == 0) return v * mult; /* binary prefix */
    char buf[96];
    const char *e = strpbrk(num, "eE");
    /* Any exponent beyond +-100000 over- or underflows a double either way; clamping it keeps
     * ex + e10 from overflowing a long (strtol gives LONG_MAX for "e99999999999999999999"). */
    long ex = e ? strtol(e + 1, NULL, 10) : 0;
    if (ex > 100000) ex = 100000;
    if (ex < -100000) ex = -100000;
    snprintf(buf, sizeof buf, "%.*se%ld", (int)(e ? (size_t)(e - num) : strlen(num)), num,
             ex + e10);
    return strtod(buf, NULL);
}

int ffn_units_parse(const char *text, ffn_unit kind, double *out, char *why, size_t why_n)
{
    if (!text || !out) return fail(why, why_n, FFN_EINVAL, "%s", "no value");
    const char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *end = scan_number(s);
    if (end == s) return fail(why, why_n, FFN_EPARSE, "'%s' is not a number", text);
    char numbuf[64];
    size_t len = (size_t)(end - s);
    if (len >= sizeof numbuf) return fail(why, why_n, FFN_EPARSE, "'%s' is too long", text);
    memcpy(numbuf, s, len);
    numbuf[len] = '\0';
    double v = strtod(numbuf, NULL);
    if (!isfinite(v)) return fail(why, why_n, FFN_ERANGE, "'%s' is not a finite number", text);
    const char *u = end;
    while (*u == ' ' || *u == '\t')
        u++;
    char ubuf[32];
    size_t ulen = strlen(u);
    while (ulen && (u[ulen - 1] == ' ' || u[ulen - 1] == '\t'))
        ulen--;
    if (ulen >= sizeof ubuf) return fail(why, why_n, FFN_EPARSE, "unknown unit in '%s'", text);
    memcpy(ubuf, u, ulen);
    ubuf[ulen] = '\0';

    if (ulen == 0) {
        if (kind == FFN_UNIT_NONE) {
            *out = v;
            return 0;
        }
        if (why && why_n)
            snprintf(why, why_n, "'%s' needs a unit: expected %s", text, ffn_unit_kind_name(kind));
        return FFN_ESCHEMA;
    }
    if (kind == FFN_UNIT_NONE)
        return fail(why, why_n, FFN_ESCHEMA, "'%s' must be a plain number without a unit", text);

    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i].sym);
        if (strncmp(ubuf, prefixes[i].sym, pl) != 0) continue;
        const char *rest = ubuf + pl;
        for (size_t j = 0; j < sizeof units / sizeof units[0]; j++) {
            if (strcmp(rest, units[j].sym) != 0) continue;
            bool small = prefixes[i].mult < 1.0;
            if (small && !units[j].allow_small) continue;
            if (units[j].kind != kind) {
                if (why && why_n)
                    snprintf(why, why_n, "'%s' has a unit of %s, expected %s", text,
                             ffn_unit_kind_name(units[j].kind), ffn_unit_kind_name(kind));
                return FFN_ESCHEMA;
            }
            /* The finite check again after scaling: "1e308 kB" is a finite number of kB but
             * not of bytes. */
            const double x = scaled(numbuf, v, prefixes[i].mult) * units[j].mult;
            if (!isfinite(x))
                return fail(why, why_n, FFN_ERANGE, "'%s' is too large to be a finite number",
                            text);
            *out = x;
            return 0;
        }
    }
    if (why && why_n)
        snprintf(why, why_n, "unknown unit '%s' in '%s': expected %s", ubuf, text,
                 ffn_unit_kind_name(kind));
    return FFN_EPARSE;
}

int ffn_units_format(double v, ffn_unit kind, char *buf, size_t n)
{
    static const char *const sym[FFN_UNIT_COUNT] = {"",     "B", "B/s", "FLOP/s",
                                                    "FLOP", "s", "W",   "Hz"};
    if ((unsigned)kind >= FFN_UNIT_COUNT) return snprintf(buf, n, "%g", v);
    if (kind == FFN_UNIT_NONE) return snprintf(buf, n, "%.3g", v);
    if (!isfinite(v)) return snprintf(buf, n, "%g %s", v, sym[kind]);
    static const struct {
        double m;
        const char *p;
    } pre[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},  {1e6, "M"},
               {1e3, "k"},  {1.0, ""},   {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
    double a = fabs(v);
    size_t lo = kind == FFN_UNIT_TIME ? sizeof pre / sizeof pre[0] : 7;
    for (size_t i = 0; i < lo; i++) {
        if (a >= pre[i].m * 0.9995 || i + 1 == lo) {
            if (kind == FFN_UNIT_TIME && pre[i].m > 1.0) continue;
            double x = v / pre[i].m;
            const char *fmt = fabs(x) >= 99.95   ? "%.0f %s%s"
                              : fabs(x) >= 9.995 ? "%.1f %s%s"
                                                 : "%.2f %s%s";
            if (a == 0.0) return snprintf(buf, n, "0 %s", sym[kind]);
            return snprintf(buf, n, fmt, x, pre[i].p, sym[kind]);
        }
    }
    return snprintf(buf, n, "%g %s", v, sym[kind]);
}

const char *ffn_units_str(char *buf, size_t n, double v, ffn_unit kind)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        ffn_units_format(v, kind, buf, n);
    return buf;
}
