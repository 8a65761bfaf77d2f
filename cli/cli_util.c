/* Shared helpers of the command line (cli/cli.h). */
#define _GNU_SOURCE
#include "cli.h"

#include "ffnroof/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ffn_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ffnroof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ffnroof %s --help'.\n", cmd);
    va_end(ap);
    return FFN_EXIT_USAGE;
}

int ffn_cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ffnroof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int ffn_cli_diag(const ffn_diag *d)
{
    char buf[1200];
    ffn_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "%s\n", buf);
    return FFN_EXIT_USAGE;
}

/* "unfused" against "fused", "no-render" against "render" */
static bool opposite(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) return opposite(b, a);
    return (la == lb + 2 && !strncmp(a, "un", 2) && !strcmp(a + 2, b)) ||
           (la == lb + 3 && !strncmp(a, "no-", 3) && !strcmp(a + 3, b));
}

int ffn_cli_once(const char *cmd, ffn_cli_seen *seen, int c, const int *repeatable)
{
    if (c == 'h' || c == ':' || c == '?') return 0;
    for (const int *r = repeatable; r && *r; r++)
        if (*r == c) return 0;
    const char *name = ffn_cli_opt_name(c);
    if (!name) return 0;
    for (size_t i = 0; i < seen->n; i++) {
        const char *other = ffn_cli_opt_name(seen->opt[i].val);
        if (seen->opt[i].val == c) {
            if (seen->opt[i].arg && optarg)
                return ffn_cli_usage(cmd,
                                     "--%s given twice ('--%s %s' and '--%s %s'); give it once",
                                     name, name, seen->opt[i].arg, name, optarg);
            return ffn_cli_usage(cmd, "--%s given twice; give it once", name);
        }
        if (other && opposite(name, other))
            return ffn_cli_usage(cmd, "--%s and --%s both given; give one of them", other, name);
    }
    if (seen->n < sizeof seen->opt / sizeof seen->opt[0]) {
        seen->opt[seen->n].val = c;
        seen->opt[seen->n].arg = optarg;
        seen->n++;
    }
    return 0;
}

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
        return ffn_cli_usage(cmd, "%s must be in [%llu, %llu], got %s", opt, (unsigned long long)lo,
                             (unsigned long long)hi, s);
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
    if (v < lo || v > hi)
        return ffn_cli_usage(cmd, "%s must be in [%g, %g], got %s", opt, lo, hi, s);
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

/* Parse and store a bound option's value; 0 or FFN_EXIT_USAGE (printed). */
static int store(const char *cmd, const ffn_cli_bound *b, const char *arg)
{
    char opt[48];
    snprintf(opt, sizeof opt, "--%s", ffn_cli_opt_name(b->val));
    switch (b->kind) {
    case FFN_BIND_STR:
        *(const char **)b->dst = arg;
        return 0;
    case FFN_BIND_FLAG:
        *(bool *)b->dst = true;
        return 0;
    case FFN_BIND_U64:
        return ffn_cli_u64(cmd, opt, arg, b->lo, b->hi, b->dst);
    case FFN_BIND_U64_LIST:
        return ffn_cli_u64_list(cmd, opt, arg, b->lo, b->hi, b->dst, b->cap, b->n);
    case FFN_BIND_DOUBLE:
        return ffn_cli_double(cmd, opt, arg, b->dlo, b->dhi, b->dst);
    case FFN_BIND_FORMAT:
        return ffn_cli_format(cmd, arg, b->dst, b->hi != 0);
    case FFN_BIND_DTYPE:
        return ffn_cli_dtype(cmd, opt, arg, b->dst);
    case FFN_BIND_PHASES:
        return ffn_cli_phases(cmd, arg, b->dst);
    }
    return 0;
}

int ffn_cli_getopt(const char *cmd, int argc, char **argv, const int *accept, ffn_cli_seen *seen,
                   const int *repeatable)
{
    if (!seen->started) {
        optind = 1;
        opterr = 0;
        seen->started = true;
        int all[FFN_CLI_MAX_OPTS];
        size_t n = 0;
        for (size_t i = 0; i < seen->nbind && n + 1 < FFN_CLI_MAX_OPTS; i++)
            all[n++] = seen->bind[i].val;
        for (const int *a = accept; a && *a && n + 1 < FFN_CLI_MAX_OPTS; a++)
            all[n++] = *a;
        all[n] = 0;
        ffn_cli_opts(all, seen->table);
    }
    for (;;) {
        const int c = getopt_long(argc, argv, ":h", seen->table, NULL);
        if (c == -1) return c;
        if (ffn_cli_once(cmd, seen, c, repeatable)) return -2;
        size_t i = 0;
        while (i < seen->nbind && seen->bind[i].val != c)
            i++;
        if (i == seen->nbind) return c;
        if (store(cmd, &seen->bind[i], optarg)) return -2;
    }
}

int ffn_cli_parse(const char *cmd, int argc, char **argv, const int *accept, ffn_cli_seen *seen,
                  const int *repeatable, void (*usage)(FILE *), bool quote)
{
    const int c = ffn_cli_getopt(cmd, argc, argv, accept, seen, repeatable);
    if (c == -2) return FFN_EXIT_USAGE;
    if (c != -1) return ffn_cli_opt_other(cmd, c, argv, usage, quote);
    if (optind < argc) return ffn_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return -1;
}

bool ffn_cli_given(const ffn_cli_seen *seen, int opt)
{
    for (size_t i = 0; i < seen->n; i++)
        if (seen->opt[i].val == opt) return true;
    return false;
}

int ffn_cli_store_collected(const char *cmd, const ffn_cli_seen *binds, const char *const *val)
{
    for (size_t i = 0; i < binds->nbind; i++) {
        const ffn_cli_bound *b = &binds->bind[i];
        const char *v = val[b->val - FFN_O_FIRST];
        int rc;
        if (v && (rc = store(cmd, b, v))) return rc;
    }
    return 0;
}

void ffn_cli_bind_routing(ffn_cli_seen *seen, ffn_moe_opts *moe)
{
    ffn_cli_bind_double(seen, FFN_O_ZIPF, 0, 100, &moe->zipf_s);
    ffn_cli_bind_u64(seen, FFN_O_TRIALS, 1, 1000000, &moe->trials);
    ffn_cli_bind_u64(seen, FFN_O_SEED, 0, UINT64_MAX, &moe->seed);
    ffn_cli_bind_double(seen, FFN_O_CAPACITY_FACTOR, 0.01, 1000, &moe->capacity_factor);
    ffn_cli_bind_u64(seen, FFN_O_DEVICES_PER_NODE, 1, 4096, &moe->devices_per_node);
    ffn_cli_bind_flag(seen, FFN_O_EP_UNEVEN, &moe->ep_uneven);
}

static ffn_cli_bound *bind(ffn_cli_seen *seen, int val, int kind, void *dst)
{
    static ffn_cli_bound spare;
    if (seen->nbind >= sizeof seen->bind / sizeof seen->bind[0]) return &spare;
    ffn_cli_bound *b = &seen->bind[seen->nbind++];
    *b = (ffn_cli_bound){.val = val, .kind = kind, .dst = dst};
    return b;
}

void ffn_cli_bind_str(ffn_cli_seen *seen, int val, const char **dst)
{
    bind(seen, val, FFN_BIND_STR, (void *)dst);
}

void ffn_cli_bind_flag(ffn_cli_seen *seen, int val, bool *dst)
{
    bind(seen, val, FFN_BIND_FLAG, dst);
}

void ffn_cli_bind_u64(ffn_cli_seen *seen, int val, uint64_t lo, uint64_t hi, uint64_t *dst)
{
    ffn_cli_bound *b = bind(seen, val, FFN_BIND_U64, dst);
    b->lo = lo, b->hi = hi;
}

void ffn_cli_bind_u64_list(ffn_cli_seen *seen, int val, uint64_t lo, uint64_t hi, uint64_t *dst,
                           size_t cap, size_t *n)
{
    ffn_cli_bound *b = bind(seen, val, FFN_BIND_U64_LIST, dst);
    b->lo = lo, b->hi = hi, b->cap = cap, b->n = n;
}

void ffn_cli_bind_double(ffn_cli_seen *seen, int val, double lo, double hi, double *dst)
{
    ffn_cli_bound *b = bind(seen, val, FFN_BIND_DOUBLE, dst);
    b->dlo = lo, b->dhi = hi;
}

void ffn_cli_bind_format(ffn_cli_seen *seen, int val, bool allow_csv, ffn_format *dst)
{
    bind(seen, val, FFN_BIND_FORMAT, dst)->hi = allow_csv;
}

void ffn_cli_bind_dtype(ffn_cli_seen *seen, int val, ffn_dtype *dst)
{
    bind(seen, val, FFN_BIND_DTYPE, dst);
}

void ffn_cli_bind_phases(ffn_cli_seen *seen, int val, unsigned *dst)
{
    bind(seen, val, FFN_BIND_PHASES, dst);
}

int ffn_cli_opt_other(const char *cmd, int c, char **argv, void (*usage)(FILE *), bool quote)
{
    if (c == 'h') {
        usage(stdout);
        return FFN_EXIT_OK;
    }
    if (c == ':')
        return ffn_cli_usage(cmd, quote ? "option '%s' needs a value" : "%s needs a value",
                             argv[optind - 1]);
    return ffn_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

int ffn_cli_collect(const char *cmd, int c, char **argv, int lo, int hi, const char **val,
                    void (*usage)(FILE *))
{
    if (c < lo || c >= hi) return ffn_cli_opt_other(cmd, c, argv, usage, true);
    val[c - lo] = optarg ? optarg : "";
    return -1;
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
            cmd, "%s: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, int8, int4)", opt, s);
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

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *ffn_cli_data_dir(const char *kind, char *buf, size_t n)
{
    const char *env = getenv("FFNROOF_DATA_DIR");
    char exe[PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char exe_share[PATH_MAX + 64] = "";
    if (el > 0) {
        exe[el] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(exe_share, sizeof exe_share, "%s/../share/ffnroof", exe);
        }
    }
    /* An installed binary finds the data installed beside it before the source tree it was
     * built from; a binary in a build tree has no ../share/ffnroof and uses the source tree. */
    const char *roots[] = {env, exe_share, FFNROOF_DATA_INSTALL_DIR, FFNROOF_SOURCE_DIR};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        snprintf(buf, n, "%s/%s", roots[i], kind);
        if (is_dir(buf)) return buf;
    }
    return NULL;
}

static bool looks_like_path(const char *s)
{
    size_t l = strlen(s);
    return strchr(s, '/') || (l > 5 && !strcmp(s + l - 5, ".yaml")) ||
           (l > 4 && !strcmp(s + l - 4, ".yml")) || (l > 5 && !strcmp(s + l - 5, ".json"));
}

int ffn_cli_resolve(const char *cmd, const char *kind, const char *name, char *path, size_t n)
{
    if (!name || !*name) return ffn_cli_usage(cmd, "no %s given", kind);
    if (looks_like_path(name)) {
        snprintf(path, n, "%s", name);
        return 0;
    }
    char dir[PATH_MAX];
    if (ffn_cli_data_dir(kind, dir, sizeof dir)) {
        snprintf(path, n, "%s/%s.yaml", dir, name);
        if (is_file(path)) return 0;
        /* list what there is */
        fprintf(stderr, "ffnroof %s: unknown %s '%s'; known:", cmd,
                strcmp(kind, "hw") ? kind : "device", name);
        char names[256][64];
        size_t cnt = ffn_data_names(dir, names, 256);
        for (size_t i = 0; i < cnt; i++)
            fprintf(stderr, " %s", names[i]);
        fprintf(stderr, "\n");
        return FFN_EXIT_USAGE;
    }
    return ffn_cli_usage(
        cmd, "no %s/ data folder found for '%s' (set FFNROOF_DATA_DIR or give a path)", kind, name);
}

int ffn_cli_load_hw(const char *cmd, const char *name, ffn_hw *hw)
{
    char path[PATH_MAX];
    int rc = ffn_cli_resolve(cmd, "hw", name, path, sizeof path);
    if (rc) return rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_hw_load(path, hw, &d)) return ffn_cli_diag(&d);
    return 0;
}

int ffn_cli_load_model(const char *cmd, const char *name, ffn_model *m)
{
    char path[PATH_MAX];
    int rc = ffn_cli_resolve(cmd, "models", name, path, sizeof path);
    if (rc) return rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_model_load(path, m, &d)) return ffn_cli_diag(&d);
    return 0;
}

int ffn_cli_out_open(const char *cmd, ffn_cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->fp = stdout;
        o->is_stdout = true;
        return 0;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    /* Every --out that cannot be written is bad usage (exit 2), found before any work: a
     * directory would otherwise only fail at the final rename (exit 1). */
    if (is_dir(path))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write '%s': is a directory", path);
    o->fp = fopen(o->tmp, "w");
    if (!o->fp)
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

int ffn_cli_out_close(const char *cmd, ffn_cli_out *o, bool ok)
{
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout)) return FFN_EXIT_FAIL;
        return ok ? FFN_EXIT_OK : FFN_EXIT_FAIL;
    }
    if (!o->fp) return FFN_EXIT_FAIL;
    /* an earlier write that failed (EFBIG, ENOSPC) leaves the error flag even when the last
     * flush succeeds */
    const bool stream_ok = !ferror(o->fp) && fflush(o->fp) == 0;
    const int err = errno;
    bool wrote = fclose(o->fp) == 0 && stream_ok;
    const int e = stream_ok ? errno : err;
    o->fp = NULL;
    if (!ok || !wrote) {
        unlink(o->tmp);
        if (!wrote)
            return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot write '%s': %s", o->path,
                                e ? strerror(e) : "write error");
        return FFN_EXIT_FAIL;
    }
    if (rename(o->tmp, o->path) != 0) {
        const int re = errno;
        unlink(o->tmp);
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot create '%s': %s", o->path, strerror(re));
    }
    return FFN_EXIT_OK;
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

int ffn_cli_load_scenario_inputs(const ffn_scenario *sc, ffn_hw *hws, ffn_model *models)
{
    char hwd[PATH_MAX], md[PATH_MAX];
    const char *hw_dir = ffn_cli_data_dir("hw", hwd, sizeof hwd);
    const char *m_dir = ffn_cli_data_dir("models", md, sizeof md);
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_scenario_load_inputs(sc, hw_dir, m_dir, hws, models, &d)) return ffn_cli_diag(&d);
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

int ffn_cli_scenario_start(const char *cmd, const char *scenario, const char *model, const char *hw,
                           ffn_scenario *sc)
{
    if (scenario) {
        ffn_diag d;
        ffn_diag_clear(&d);
        if (ffn_scenario_load(scenario, sc, &d)) return ffn_cli_diag(&d);
    } else {
        ffn_scenario_init(sc);
        if (!model) return ffn_cli_usage(cmd, "give --scenario FILE, or --model and --hw");
        if (!hw)
            return ffn_cli_usage(cmd, "--hw is required without --scenario (e.g. --hw h100-sxm)");
    }
    int rc = 0;
    if (model) rc = ffn_cli_refs(cmd, "--model", model, sc->models, &sc->n_models);
    if (!rc && hw) {
        rc = ffn_cli_refs(cmd, "--hw", hw, sc->hws, &sc->n_hws);
        memset(sc->price_per_hour, 0, sizeof sc->price_per_hour); /* the scenario's devices' */
    }
    if (rc) ffn_scenario_release(sc);
    return rc;
}

/* Folders this process created, newest last, so that a failed run can take back the empty
 * ones. */
static char *created[32];
static size_t n_created;

int ffn_cli_mkdirs(const char *cmd, const char *dir)
{
    char path[PATH_MAX];
    if (!dir || !dir[0] || strlen(dir) >= sizeof path)
        return ffn_cli_usage(cmd, "no output folder given, or a name that is too long");
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        const bool last = *p == '\0';
        if (!last && *p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) == 0) {
            if (n_created < sizeof created / sizeof created[0]) created[n_created++] = strdup(path);
        } else if (errno != EEXIST) {
            return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot create folder '%s': %s", path,
                                strerror(errno));
        }
        if (last) break;
        *p = '/';
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "'%s' is not a folder", dir);
    if (access(path, W_OK | X_OK) != 0)
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write in folder '%s': %s", dir,
                            strerror(errno));
    return 0;
}

void ffn_cli_remove_created_dirs(void)
{
    while (n_created > 0) {
        char *p = created[--n_created];
        if (p) rmdir(p); /* only an empty one goes */
        free(p);
    }
}
