/* The command line's options: every long option once (its name and whether it takes a value;
 * cli/cli.h, enum ffn_opt), and the one parse every command runs over them (getopt_long, an
 * option given twice refused, bound values checked and stored). The values' own parsers are
 * in option_values.c. */
#define _GNU_SOURCE
#include "cli.h"

#include "ffnroof/match.h"

#include <getopt.h>
#include <stdint.h>
#include <string.h>

static const struct {
    const char *name;
    int has_arg;
} options[FFN_O_END - FFN_O_FIRST] = {
    [FFN_O_ACT - FFN_O_FIRST] = {"act", required_argument},
    [FFN_O_ACT_IO_DTYPE - FFN_O_FIRST] = {"act-io-dtype", required_argument},
    [FFN_O_ADTYPE - FFN_O_FIRST] = {"adtype", required_argument},
    [FFN_O_ALL - FFN_O_FIRST] = {"all", no_argument},
    [FFN_O_ALPHA - FFN_O_FIRST] = {"alpha", required_argument},
    [FFN_O_BATCH - FFN_O_FIRST] = {"batch", required_argument},
    [FFN_O_BENCH - FFN_O_FIRST] = {"bench", required_argument},
    [FFN_O_BY - FFN_O_FIRST] = {"by", required_argument},
    [FFN_O_CALIBRATION - FFN_O_FIRST] = {"calibration", required_argument},
    [FFN_O_CAPACITY_FACTOR - FFN_O_FIRST] = {"capacity-factor", required_argument},
    [FFN_O_CHECK - FFN_O_FIRST] = {"check", no_argument},
    [FFN_O_CHECKPOINT - FFN_O_FIRST] = {"checkpoint", required_argument},
    [FFN_O_CHUNK - FFN_O_FIRST] = {"chunk", required_argument},
    [FFN_O_COMPARE - FFN_O_FIRST] = {"compare", no_argument},
    [FFN_O_D - FFN_O_FIRST] = {"d", required_argument},
    [FFN_O_DATA - FFN_O_FIRST] = {"data", required_argument},
    [FFN_O_DEVICES_PER_NODE - FFN_O_FIRST] = {"devices-per-node", required_argument},
    [FFN_O_DP - FFN_O_FIRST] = {"dp", required_argument},
    [FFN_O_DTYPE - FFN_O_FIRST] = {"dtype", required_argument},
    [FFN_O_EMIT - FFN_O_FIRST] = {"emit", required_argument},
    [FFN_O_ENGINE - FFN_O_FIRST] = {"engine", required_argument},
    [FFN_O_EP - FFN_O_FIRST] = {"ep", required_argument},
    [FFN_O_EP_UNEVEN - FFN_O_FIRST] = {"ep-uneven", no_argument},
    [FFN_O_EVENTS - FFN_O_FIRST] = {"events", required_argument},
    [FFN_O_EXPERTS - FFN_O_FIRST] = {"experts", required_argument},
    [FFN_O_EXPLAIN - FFN_O_FIRST] = {"explain", optional_argument},
    [FFN_O_F - FFN_O_FIRST] = {"f", required_argument},
    [FFN_O_FIT - FFN_O_FIRST] = {"fit", required_argument},
    [FFN_O_FIT_POINTS - FFN_O_FIRST] = {"fit-points", required_argument},
    [FFN_O_FORCE - FFN_O_FIRST] = {"force", no_argument},
    [FFN_O_FORMAT - FFN_O_FIRST] = {"format", required_argument},
    [FFN_O_FORMATS - FFN_O_FIRST] = {"formats", required_argument},
    [FFN_O_FUSED - FFN_O_FIRST] = {"fused", no_argument},
    [FFN_O_GATE_UP - FFN_O_FIRST] = {"gate-up", no_argument},
    [FFN_O_GENERIC_MOE - FFN_O_FIRST] = {"generic-moe", no_argument},
    [FFN_O_MOE_KERNEL - FFN_O_FIRST] = {"moe-kernel", required_argument},
    [FFN_O_GROUP - FFN_O_FIRST] = {"group", required_argument},
    [FFN_O_GROUP_SIZE - FFN_O_FIRST] = {"group-size", required_argument},
    [FFN_O_HISTOGRAM - FFN_O_FIRST] = {"histogram", required_argument},
    [FFN_O_HW - FFN_O_FIRST] = {"hw", required_argument},
    [FFN_O_ISA - FFN_O_FIRST] = {"isa", required_argument},
    [FFN_O_KERNEL - FFN_O_FIRST] = {"kernel", required_argument},
    [FFN_O_KV_DTYPE - FFN_O_FIRST] = {"kv-dtype", required_argument},
    [FFN_O_KV_PAGE - FFN_O_FIRST] = {"kv-page", required_argument},
    [FFN_O_LAYER - FFN_O_FIRST] = {"layer", required_argument},
    [FFN_O_LEVELS - FFN_O_FIRST] = {"levels", no_argument},
    [FFN_O_MARGIN - FFN_O_FIRST] = {"margin", required_argument},
    [FFN_O_MAX_BATCH - FFN_O_FIRST] = {"max-batch", required_argument},
    [FFN_O_MAX_DEVICES - FFN_O_FIRST] = {"max-devices", required_argument},
    [FFN_O_MAX_POINTS - FFN_O_FIRST] = {"max-points", required_argument},
    [FFN_O_MEM_UTIL - FFN_O_FIRST] = {"mem-util", required_argument},
    [FFN_O_MOC - FFN_O_FIRST] = {"moc", required_argument},
    [FFN_O_MODEL - FFN_O_FIRST] = {"model", required_argument},
    [FFN_O_NAME - FFN_O_FIRST] = {"name", required_argument},
    [FFN_O_NO_PROGRESS - FFN_O_FIRST] = {"no-progress", no_argument},
    [FFN_O_NO_RENDER - FFN_O_FIRST] = {"no-render", no_argument},
    [FFN_O_NO_SPEED - FFN_O_FIRST] = {"no-speed", no_argument},
    [FFN_O_NU - FFN_O_FIRST] = {"nu", required_argument},
    [FFN_O_OBJECTIVE - FFN_O_FIRST] = {"objective", required_argument},
    [FFN_O_ONCHIP - FFN_O_FIRST] = {"onchip", no_argument},
    [FFN_O_OPS - FFN_O_FIRST] = {"ops", no_argument},
    [FFN_O_OUT - FFN_O_FIRST] = {"out", required_argument},
    [FFN_O_OUTLIER_SCALE - FFN_O_FIRST] = {"outlier-scale", required_argument},
    [FFN_O_OUTLIERS - FFN_O_FIRST] = {"outliers", required_argument},
    [FFN_O_OUTPUT - FFN_O_FIRST] = {"output", required_argument},
    [FFN_O_PEERS - FFN_O_FIRST] = {"peers", required_argument},
    [FFN_O_PHASE - FFN_O_FIRST] = {"phase", required_argument},
    [FFN_O_PLOTS - FFN_O_FIRST] = {"plots", required_argument},
    [FFN_O_POINTS - FFN_O_FIRST] = {"points", no_argument},
    [FFN_O_PP - FFN_O_FIRST] = {"pp", required_argument},
    [FFN_O_PREFILL_BATCH - FFN_O_FIRST] = {"prefill-batch", required_argument},
    [FFN_O_PRICE - FFN_O_FIRST] = {"price", required_argument},
    [FFN_O_PROMPT - FFN_O_FIRST] = {"prompt", required_argument},
    [FFN_O_QUICK - FFN_O_FIRST] = {"quick", no_argument},
    [FFN_O_REPS - FFN_O_FIRST] = {"reps", required_argument},
    [FFN_O_RESERVE - FFN_O_FIRST] = {"reserve", required_argument},
    [FFN_O_ROWS - FFN_O_FIRST] = {"rows", required_argument},
    [FFN_O_SCENARIO - FFN_O_FIRST] = {"scenario", required_argument},
    [FFN_O_SEED - FFN_O_FIRST] = {"seed", required_argument},
    [FFN_O_SEQ - FFN_O_FIRST] = {"seq", required_argument},
    [FFN_O_SHAPE - FFN_O_FIRST] = {"shape", required_argument},
    [FFN_O_SIZE - FFN_O_FIRST] = {"size", required_argument},
    [FFN_O_TARGET - FFN_O_FIRST] = {"target", required_argument},
    [FFN_O_TEST_TINY - FFN_O_FIRST] = {"test-tiny", no_argument},
    [FFN_O_THREADS - FFN_O_FIRST] = {"threads", required_argument},
    [FFN_O_TITLE - FFN_O_FIRST] = {"title", required_argument},
    [FFN_O_TOKENS - FFN_O_FIRST] = {"tokens", required_argument},
    [FFN_O_TP - FFN_O_FIRST] = {"tp", required_argument},
    [FFN_O_TPOT - FFN_O_FIRST] = {"tpot", required_argument},
    [FFN_O_TRIALS - FFN_O_FIRST] = {"trials", required_argument},
    [FFN_O_TTFT - FFN_O_FIRST] = {"ttft", required_argument},
    [FFN_O_UNFUSED - FFN_O_FIRST] = {"unfused", no_argument},
    [FFN_O_VERIFY - FFN_O_FIRST] = {"verify", no_argument},
    [FFN_O_WARM - FFN_O_FIRST] = {"warm", no_argument},
    [FFN_O_WDTYPE - FFN_O_FIRST] = {"wdtype", required_argument},
    [FFN_O_WEIGHTS - FFN_O_FIRST] = {"weights", required_argument},
    [FFN_O_ZERO_POINT - FFN_O_FIRST] = {"zero-point", no_argument},
    [FFN_O_CHART - FFN_O_FIRST] = {"chart", required_argument},
    [FFN_O_CONCURRENCY - FFN_O_FIRST] = {"concurrency", required_argument},
    [FFN_O_MAX_BATCHED_TOKENS - FFN_O_FIRST] = {"max-batched-tokens", required_argument},
    [FFN_O_MAX_SEQS - FFN_O_FIRST] = {"max-seqs", required_argument},
    [FFN_O_OFFLINE - FFN_O_FIRST] = {"offline", no_argument},
    [FFN_O_PARETO - FFN_O_FIRST] = {"pareto", no_argument},
    [FFN_O_RATE - FFN_O_FIRST] = {"rate", required_argument},
    [FFN_O_REQUESTS - FFN_O_FIRST] = {"requests", required_argument},
    [FFN_O_SPEC - FFN_O_FIRST] = {"spec", required_argument},
    [FFN_O_SPREAD - FFN_O_FIRST] = {"spread", required_argument},
    [FFN_O_LENGTHS - FFN_O_FIRST] = {"lengths", required_argument},
    [FFN_O_STEP_OVERHEAD - FFN_O_FIRST] = {"step-overhead", required_argument},
    [FFN_O_USER_TPS - FFN_O_FIRST] = {"user-tps", required_argument},
    [FFN_O_STEP - FFN_O_FIRST] = {"step", no_argument},
    [FFN_O_SEQ_OVERHEAD - FFN_O_FIRST] = {"seq-overhead", required_argument},
    [FFN_O_FLOP_OVERHEAD - FFN_O_FIRST] = {"flop-overhead", required_argument},
    [FFN_O_OUT_DIR - FFN_O_FIRST] = {"out-dir", required_argument},
    [FFN_O_ZIPF - FFN_O_FIRST] = {"zipf", required_argument},
    [FFN_O_ROUTING_ALPHA - FFN_O_FIRST] = {"routing-alpha", required_argument},
    [FFN_O_DIST - FFN_O_FIRST] = {"dist", required_argument},
    [FFN_O_RESERVE_OUTPUT - FFN_O_FIRST] = {"reserve-output", required_argument},
    [FFN_O_PREFILL_APART - FFN_O_FIRST] = {"prefill-apart", required_argument},
};

const char *ffn_cli_opt_name(int opt)
{
    if (opt < FFN_O_FIRST || opt >= FFN_O_END) return NULL;
    return options[opt - FFN_O_FIRST].name;
}

/* The getopt_long table of the options in accept (0-terminated) and --help, into out (room for
 * FFN_CLI_MAX_OPTS entries). */
static void getopt_table(const int *accept, struct option *out)
{
    size_t n = 0;
    for (const int *a = accept; *a && n + 2 < FFN_CLI_MAX_OPTS; a++) {
        const char *name = ffn_cli_opt_name(*a);
        if (!name) continue; /* not an option: a bug in the caller's list */
        out[n++] = (struct option){name, options[*a - FFN_O_FIRST].has_arg, NULL, *a};
    }
    out[n++] = (struct option){"help", no_argument, NULL, 'h'};
    out[n] = (struct option){0, 0, 0, 0};
}

/* "unfused" against "fused", "no-render" against "render"; and two spellings of one idea
 * ("prompt" and "seq", "group-size" and "group"), which set the same value */
static bool opposite(const char *a, const char *b)
{
    static const char *const same[][2] = {
        {"prompt", "seq"}, {"group-size", "group"}, {"out-dir", "out"}, {"dist", "weights"}};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if ((!strcmp(a, same[i][0]) && !strcmp(b, same[i][1])) ||
            (!strcmp(a, same[i][1]) && !strcmp(b, same[i][0])))
            return true;
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) return opposite(b, a);
    return (la == lb + 2 && !strncmp(a, "un", 2) && !strcmp(a + 2, b)) ||
           (la == lb + 3 && !strncmp(a, "no-", 3) && !strcmp(a + 3, b));
}

/* An option given twice, or both options of a pair, is an error that names both: no option
 * silently overrides another. 0, or FFN_EXIT_USAGE (printed). */
static int once(const char *cmd, ffn_cli_seen *seen, int c, const int *repeatable)
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

/* The option of table nearest to what was typed (a few edits away), or NULL. */
static const char *nearest(const struct option *table, const char *typed)
{
    const char *known[FFN_CLI_MAX_OPTS];
    size_t n = 0, idx[1];
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(typed, "="), typed);
    for (; table[n].name && n < FFN_CLI_MAX_OPTS; n++)
        known[n] = table[n].name;
    return ffn_name_suggest(name, known, n, idx, 1) ? known[idx[0]] : NULL;
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
        getopt_table(all, seen->table);
    }
    for (;;) {
        const int before = optind;
        int li = -1;
        const int c = getopt_long(argc, argv, ":h", seen->table, &li);
        if (c == -1) return c;
        if (c >= FFN_O_FIRST && li >= 0 && before < argc && !strncmp(argv[before], "--", 2)) {
            /* getopt_long takes a unique beginning of a name ("--max-batch" for
             * "--max-batched-tokens"): a word of another command's vocabulary would then set
             * something else, so the whole name is required */
            const char *given = argv[before] + 2;
            const size_t len = strcspn(given, "=");
            if (len != strlen(seen->table[li].name)) {
                ffn_cli_usage(cmd, "unknown option '--%.*s'; did you mean --%s?", (int)len, given,
                              seen->table[li].name);
                return -2;
            }
        }
        if (c == '?' && optind > 0 && optind <= argc) {
            const char *given = argv[optind - 1];
            if (!strncmp(given, "--", 2)) {
                const char *near = nearest(seen->table, given + 2);
                if (near) {
                    ffn_cli_usage(cmd, "unknown option '%s'; did you mean --%s?", given, near);
                    return -2;
                }
            }
        }
        if (once(cmd, seen, c, repeatable)) return -2;
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

int ffn_cli_collect(const char *cmd, int c, char **argv, const char **val, void (*usage)(FILE *))
{
    if (c < FFN_O_FIRST || c >= FFN_O_END) return ffn_cli_opt_other(cmd, c, argv, usage, true);
    val[c - FFN_O_FIRST] = optarg ? optarg : "";
    return -1;
}
