/* Every long option of the ffnroof command line, once: its name and whether it takes a value
 * (cli/cli.h, enum ffn_opt). A command lists the options it takes; ffn_cli_opts builds the
 * getopt_long table from this one. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>

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
    [FFN_O_DTYPE - FFN_O_FIRST] = {"dtype", required_argument},
    [FFN_O_EP - FFN_O_FIRST] = {"ep", required_argument},
    [FFN_O_EP_UNEVEN - FFN_O_FIRST] = {"ep-uneven", no_argument},
    [FFN_O_EVENTS - FFN_O_FIRST] = {"events", required_argument},
    [FFN_O_EXPERTS - FFN_O_FIRST] = {"experts", required_argument},
    [FFN_O_EXPLAIN - FFN_O_FIRST] = {"explain", no_argument},
    [FFN_O_F - FFN_O_FIRST] = {"f", required_argument},
    [FFN_O_FIT - FFN_O_FIRST] = {"fit", required_argument},
    [FFN_O_FORCE - FFN_O_FIRST] = {"force", no_argument},
    [FFN_O_FORMAT - FFN_O_FIRST] = {"format", required_argument},
    [FFN_O_FORMATS - FFN_O_FIRST] = {"formats", required_argument},
    [FFN_O_FUSED - FFN_O_FIRST] = {"fused", no_argument},
    [FFN_O_GATE_UP - FFN_O_FIRST] = {"gate-up", no_argument},
    [FFN_O_GROUP - FFN_O_FIRST] = {"group", required_argument},
    [FFN_O_GROUP_SIZE - FFN_O_FIRST] = {"group-size", required_argument},
    [FFN_O_HISTOGRAM - FFN_O_FIRST] = {"histogram", required_argument},
    [FFN_O_HW - FFN_O_FIRST] = {"hw", required_argument},
    [FFN_O_ISA - FFN_O_FIRST] = {"isa", required_argument},
    [FFN_O_KV_DTYPE - FFN_O_FIRST] = {"kv-dtype", required_argument},
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
    [FFN_O_PREFILL_BATCH - FFN_O_FIRST] = {"prefill-batch", required_argument},
    [FFN_O_PRICE - FFN_O_FIRST] = {"price", required_argument},
    [FFN_O_PROMPT - FFN_O_FIRST] = {"prompt", required_argument},
    [FFN_O_QUICK - FFN_O_FIRST] = {"quick", no_argument},
    [FFN_O_REPS - FFN_O_FIRST] = {"reps", required_argument},
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
    [FFN_O_ZIPF - FFN_O_FIRST] = {"zipf", required_argument},
};

const char *ffn_cli_opt_name(int opt)
{
    if (opt < FFN_O_FIRST || opt >= FFN_O_END) return NULL;
    return options[opt - FFN_O_FIRST].name;
}

const struct option *ffn_cli_opts(const int *accept, struct option *out)
{
    size_t n = 0;
    for (const int *a = accept; *a && n + 2 < FFN_CLI_MAX_OPTS; a++) {
        const char *name = ffn_cli_opt_name(*a);
        if (!name) continue; /* not an option: a bug in the caller's list */
        out[n++] = (struct option){name, options[*a - FFN_O_FIRST].has_arg, NULL, *a};
    }
    out[n++] = (struct option){"help", no_argument, NULL, 'h'};
    out[n] = (struct option){0, 0, 0, 0};
    return out;
}
