/* The command line's vocabulary (cli/vocab.h): the options more than one command takes, each
 * once, and what is derived from them (help entries, docs/cli.md's table, the bounds the parsers
 * check). A command that differs from the others says so in the entry's per[] with the reason in
 * its note; docs/cli.md lists those differences beside the entry. */
#define _GNU_SOURCE
#include "vocab.h"

#include <math.h>
#include <string.h>

#include "cli.h"
#include "ffnroof/plan.h"
#include "ffnroof/scenario.h"
#include "ffnroof/sim.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define LISTED "devices, comma-separated"

static const ffn_cli_word words[] = {
    // clang-format off
    /* what is predicted */
    {FFN_O_MODEL, 0, "NAME", FFN_WORD_TEXT,
     "model: a model of models/ by name, a model YAML or a Hugging Face config.json",
     NULL, 0, 0, 0, "predict plan sweep compare bench plot report serve quant",
     {{"plan", "LIST", NULL, "models, comma-separated", 0},
      {"sweep", "LIST", NULL, "models, comma-separated", 0},
      {"serve", "LIST", NULL, "models, comma-separated", 0},
      {"bench", NULL, NULL, "its FFN shapes; a MoE model benches its MoE layer", 0},
      {"quant", NULL, NULL, "its d, f and activation", 0}}},
    {FFN_O_HW, 0, "NAME", FFN_WORD_TEXT,
     "device: a spec of hw/ by name (case and separators do not matter, a unique beginning will "
     "do) or a spec file",
     NULL, 0, 0, 0, "predict plan sweep compare bench plot report serve fit",
     {{"plan", "LIST", NULL, LISTED, 0},
      {"sweep", "LIST", NULL, LISTED, 0},
      {"compare", "LIST", NULL, LISTED, 0},
      {"serve", "LIST", NULL, LISTED, 0},
      {"plot", "LIST", NULL, LISTED, 0},
      {"report", "LIST", NULL, "with --compare: " LISTED, 0},
      {"bench", NULL,
       "the last calibration, results/last-calibration/hw.yaml (`ffnroof calibrate --quick` "
       "first when there is none)",
       "the roofline and the prediction", 0}}},
    {FFN_O_SCENARIO, 0, "FILE", FFN_WORD_TEXT,
     "a scenario (scenarios/NAME.yaml or a file: models, devices, workload, SLOs); flags given "
     "as well override it",
     NULL, 0, 0, 0, "plan sweep compare report serve", {{0}}},
    {FFN_O_ENGINE, 0, "E", FFN_WORD_TEXT,
     "the serving engine whose kernels (quantised GEMMs on NVIDIA devices) and scheduler "
     "defaults apply: vllm, sglang or trtllm, hw/arch/engines.yaml",
     "vllm", 0, 0, 0, "predict plan sweep compare plot report serve fit",
     {{"fit", NULL, NULL,
       "the profile the spec is checked or fitted under; --check of an op table takes the "
       "table's own engine by default", 0}}},
    /* the workload */
    {FFN_O_PROMPT, FFN_O_SEQ, "N", FFN_WORD_COUNT,
     "prompt tokens per request (per sequence of a prefill step); --seq is the same",
     STR(FFN_DEFAULT_PROMPT), 1, 16777216, 0, "predict plan sweep compare bench plot report serve",
     {{"sweep", "GRID", "the scenario's prompt, else " STR(FFN_DEFAULT_PROMPT), NULL, 0},
      {"plot", "LIST", "roofline 1024 with batch 1; latency 64-16384:x2",
       "latency: the prefill curve's lengths", 64},
      {"bench", NULL, NULL, "with --model", 0}}},
    {FFN_O_OUTPUT, 0, "N", FFN_WORD_COUNT,
     "output tokens per request",
     "256", 1, 16777216, 0, "plan serve", {{0}}},
    {FFN_O_BATCH, 0, "LIST", FFN_WORD_COUNT,
     "sequences per step, e.g. 1 or 1,16,64 or 1-256:x2",
     "1", 1, 16777216, 64, "predict sweep compare bench plot report",
     {{"sweep", "GRID", NULL, NULL, 0},
      {"compare", NULL, "1,8,64", "decode batches, side by side", 0},
      {"report", NULL, "1,8,64", "with --compare, as compare", 0},
      {"plot", NULL, "roofline 1,16,256; latency 1-1024:x2; moe 1,8,64,512",
       "moe --by ep: the first is the batch", 0},
      {"bench", NULL, NULL, "with --model", 0}}},
    {FFN_O_PREFILL_BATCH, 0, "N", FFN_WORD_COUNT,
     "sequences per prefill step, for TTFT",
     "1", 1, 1048576, 0, "plan compare report", {{0}}},
    {FFN_O_CHUNK, 0, "C", FFN_WORD_COUNT,
     "chunked prefill: C tokens per sequence per step",
     "off", 1, 16777216, 0, "predict plan sweep", {{0}}},
    {FFN_O_PHASE, 0, "P", FFN_WORD_TEXT,
     "prefill, decode or both",
     "both", 0, 0, 0, "predict plan sweep compare bench plot report",
     {{"plan", NULL, "decode",
       "a fleet is sized against decode; both: prefills interleaved with decode, and "
       "disaggregated pools beside", 0},
      {"bench", NULL, "both with --model; with --shape, prefill when T > 1, else decode",
       "with --shape a label only", 0},
      {"plot", NULL, "decode", "moe: decode or prefill", 0}}},
    /* dtypes */
    {FFN_O_DTYPE, 0, "D", FFN_WORD_TEXT,
     "weights, activations and KV cache: fp32, tf32, bf16, fp16, fp8, int8, int4, or the "
     "block-scaled fp8-block, nvfp4, mxfp4; a format the device has no units for is dequantised",
     "bf16", 0, 0, 0, "predict plan sweep compare bench plot report serve fit",
     {{"sweep", "LIST", NULL, "each D or W/A, e.g. bf16,fp8,int4/bf16", 0},
      {"bench", NULL, "fp32",
       "=the weights of ffnroof's CPU kernels: fp32, bf16, fp16, int8 (a scale per output "
       "channel) or int4 (groups along K)", 0},
      {"fit", NULL, "fp16",
       "=the measured runs' dtype of a CSV; of an op table: only its rows of weight dtype D", 0}}},
    {FFN_O_WDTYPE, 0, "W", FFN_WORD_TEXT,
     "the weights' dtype apart from the activations' (e.g. int4 with --adtype bf16 = W4A16); not "
     "with --dtype",
     "bf16", 0, 0, 0, "predict plan compare report serve", {{0}}},
    {FFN_O_ADTYPE, 0, "A", FFN_WORD_TEXT,
     "the activations' dtype apart from the weights'; not with --dtype",
     "bf16; fp8 and fp4 weights: their own format",
     0, 0, 0, "predict plan compare bench report serve",
     {{"plan", NULL, NULL, "sets the KV cache's too", 0},
      {"serve", NULL, NULL, "sets the KV cache's too", 0},
      {"bench", NULL, "fp32",
       "=int8/int4 weights: the activations the kernel multiplies, fp32, bf16 or int8 (W8A8, "
       "int8 weights only); x and y are fp32 in memory either way", 0}}},
    {FFN_O_KV_DTYPE, 0, "D", FFN_WORD_TEXT,
     "the KV cache's dtype",
     "the activations'", 0, 0, 0, "plan sweep serve",
     {{"sweep", NULL, NULL, "with --step", 0}}},
    {FFN_O_ACT_IO_DTYPE, 0, "D", FFN_WORD_TEXT,
     "quantised activations (int8, fp8, fp8-block, nvfp4, mxfp4): the dtype x, h and y are "
     "stored in between the GEMMs, fp32, bf16 or fp16",
     "bf16", 0, 0, 0, "predict sweep", {{0}}},
    {FFN_O_GROUP_SIZE, FFN_O_GROUP, "G", FFN_WORD_COUNT,
     "int4: weights per 16-bit scale along K; --group is the same",
     "128", 1, 1048576, 0, "predict plan sweep bench serve quant",
     {{"bench", NULL, NULL, "32, 64 or 128, dividing d and f", 0},
      {"quant", "LIST", "those of 32,64,128 that divide d and f",
       "the sizes to compare, of 32, 64 and 128", 3}}},
    {FFN_O_ZERO_POINT, 0, NULL, FFN_WORD_FLAG,
     "int4: a 4-bit zero point per group too",
     "symmetric", 0, 0, 0, "predict sweep bench", {{0}}},
    /* how the FFN runs */
    {FFN_O_FUSED, 0, NULL, FFN_WORD_FLAG,
     "gate+up as one GEMM with the activation in its epilogue",
     "--fused", 0, 0, 0, "predict sweep", {{0}}},
    {FFN_O_UNFUSED, 0, NULL, FFN_WORD_FLAG,
     "gate, up and the activation as kernels of their own, the intermediate through memory",
     "--fused", 0, 0, 0, "predict sweep", {{0}}},
    {FFN_O_WEIGHTS, 0, "W", FFN_WORD_TEXT,
     "where the FFN weights live between calls: cold (read from memory every call), hot (each "
     "layer's in the innermost on-chip level that holds it, as `bench --warm`) or auto (all "
     "layers' weights of a step against the on-chip levels, in part when larger)",
     "cold", 0, 0, 0, "predict plan sweep quant",
     {{"quant", "W", "gauss",
       "=--dist's old spelling (the synthetic weights' distribution), taken with a note", 0}}},
    {FFN_O_ONCHIP, 0, NULL, FFN_WORD_FLAG,
     "charge finite on-chip memory: the tiled-GEMM traffic bound per level and the spill of a "
     "fused intermediate beyond the token tile the innermost level holds",
     "off", 0, 0, 0, "predict plan sweep", {{0}}},
    /* the layout */
    {FFN_O_TP, 0, "N", FFN_WORD_COUNT,
     "tensor-parallel degree (attention and dense FFN)",
     "1", 1, 4096, 0, "predict plan sweep compare report serve",
     {{"plan", "LIST", "1,2,4,8", "the degrees searched", FFN_PLAN_MAX_DEGREES},
      {"serve", "LIST", "1,2,4,8", "the degrees searched", FFN_PLAN_MAX_DEGREES},
      {"sweep", "GRID", NULL, NULL, 0}}},
    {FFN_O_DP, 0, "LIST", FFN_WORD_COUNT,
     "attention data-parallel degree of MoE models: each rank its own sequences, on TP x DP "
     "devices",
     "1-64:x2", 1, 4096, FFN_PLAN_MAX_DEGREES, "plan serve",
     {{"serve", NULL, "1,2,4,8", "at most --max-devices a replica", 0}}},
    {FFN_O_EP, 0, "N", FFN_WORD_COUNT,
     "expert-parallel degree of MoE models, over the same TP x DP devices",
     "1", 1, 4096, 0, "predict plan sweep compare plot report serve",
     {{"plan", "LIST", "1-64:x2", "the degrees searched", FFN_PLAN_MAX_DEGREES},
      {"serve", "LIST", "every device of the stage", "the degrees searched", FFN_PLAN_MAX_DEGREES},
      {"sweep", "GRID", NULL, NULL, 0},
      {"plot", "LIST", "1,2,4,8", "moe --by ep", 64}}},
    {FFN_O_PP, 0, "LIST", FFN_WORD_COUNT,
     "pipeline stages, each TP x DP devices",
     "1, and more where the weights need more than a node",
     1, 4096, FFN_PLAN_MAX_DEGREES, "plan serve",
     {{"serve", NULL, "1", NULL, 0}}},
    {FFN_O_EP_UNEVEN, 0, NULL, FFN_WORD_FLAG,
     "allow EP degrees that do not divide the experts",
     "off", 0, 0, 0, "predict plan sweep", {{0}}},
    {FFN_O_GENERIC_MOE, 0, NULL, FFN_WORD_FLAG,
     "MoE layers as grouped GEMMs at the spec's efficiency, not as the engine's fused MoE "
     "kernels run them",
     "a GPU's as the engine's fused MoE module runs them", 0, 0, 0,
     "predict plan sweep serve", {{0}}},
    {FFN_O_MOE_KERNEL, 0, "NAME", FFN_WORD_TEXT,
     "the engine's fused-MoE kernel family that prices MoE layers, by its name in "
     "hw/arch/engines.yaml (one the engine runs only when asked included, e.g. "
     "flashinfer_cutlass)",
     "the engine's default for the weights' format", 0, 0, 0, "predict plan serve", {{0}}},
    /* MoE routing */
    {FFN_O_ZIPF, 0, "S", FFN_WORD_NUMBER,
     "skewed routing: expert popularity ~ 1/rank^S, 0 uniform",
     "0", 0, 100, 0, "predict plan sweep", {{0}}},
    {FFN_O_ROUTING_ALPHA, 0, "A", FFN_WORD_NUMBER,
     "the routing skew the engine's fused MoE kernels are priced on: the exponent of the "
     "power-law draw of per-expert loads (as NVIDIA aiconfigurator's collector draws them), "
     "0 balanced",
     "the model's routing_alpha (models/*.yaml), else 0", 0, 10, 0, "predict plan sweep serve",
     {{0}}},
    {FFN_O_TRIALS, 0, "N", FFN_WORD_COUNT,
     "Monte-Carlo routing trials",
     "closed forms when uniform, 64 otherwise", 1, 1000000, 0, "predict plan sweep", {{0}}},
    {FFN_O_CAPACITY_FACTOR, 0, "C", FFN_WORD_NUMBER,
     "expert capacity as a multiple of T*k/E; tokens over it are dropped",
     "the model's, else dropless", 0.01, 1000, 0, "predict plan sweep", {{0}}},
    {FFN_O_DEVICES_PER_NODE, 0, "N", FFN_WORD_COUNT,
     "devices per scale-up domain, for the EP all-to-all",
     "the spec's", 1, 4096, 0, "predict plan sweep", {{0}}},
    {FFN_O_SEED, 0, "N", FFN_WORD_COUNT,
     "the seed of the command's random draws",
     "1", 0, 18446744073709551615.0, 0, "predict plan sweep serve quant",
     {{"predict", NULL, NULL, "the routing simulation", 0},
      {"plan", NULL, NULL, "the routing simulation", 0},
      {"sweep", NULL, NULL, "the routing simulation", 0},
      {"serve", NULL, NULL, "the lengths and arrivals", 0},
      {"quant", NULL, NULL, "the synthetic weights and activations", 0}}},
    /* memory, fleet and cost */
    {FFN_O_MEM_UTIL, 0, "F", FFN_WORD_NUMBER,
     "usable fraction of device memory, as vLLM's gpu_memory_utilization",
     "0.9", 0.01, 1, 0, "plan serve", {{0}}},
    {FFN_O_RESERVE, 0, "SIZE", FFN_WORD_TEXT,
     "the runtime's own memory out of it (CUDA context, NCCL, graphs), e.g. 1GiB",
     "0.69 GiB on a GPU, 0 elsewhere", 0, 0, 0, "plan serve", {{0}}},
    {FFN_O_KV_PAGE, 0, "N", FFN_WORD_COUNT,
     "KV cache pages of N tokens",
     "16", 1, 1048576, 0, "plan serve",
     {{"serve", NULL, "the engine's", "hw/arch/engines.yaml", 0}}},
    {FFN_O_MAX_DEVICES, 0, "N", FFN_WORD_COUNT,
     "devices at most",
     "64", 1, 16777216, 0, "plan serve",
     {{"plan", NULL, NULL, "the fleet: every replica the target needs", 0},
      {"serve", NULL, "8", "a replica, the one serve simulates (the layouts of one HGX node)", 0}}},
    {FFN_O_PRICE, 0, "HW=USD", FFN_WORD_TEXT,
     "price per device-hour in US dollars (repeatable)",
     "the dated list price of hw/prices.tsv where it has one",
     0, 0, 0, "plan compare report serve", {{0}}},
    {FFN_O_TTFT, 0, "T", FFN_WORD_TEXT,
     "SLO: time to first token, e.g. 2s, at most 1 h",
     "none", 0, 0, 0, "plan serve",
     {{"serve", NULL, NULL, "with --user-tps: the p90 TTFT of the point picked", 0}}},
    /* measuring */
    {FFN_O_THREADS, 0, "N", FFN_WORD_COUNT,
     "threads",
     "every CPU allowed", 1, 1024, 0, "bench quant calibrate",
     {{"quant", NULL, NULL, "kernels and evaluation", 0},
      {"calibrate", NULL, NULL, "the \"all cores\" count", 0}}},
    {FFN_O_REPS, 0, "N", FFN_WORD_COUNT,
     "timed calls",
     "until stable, at most 4 s a case", 1, 100000, 0, "bench quant",
     {{"quant", NULL, "20", "per kernel, after one warm-up", 0}}},
    {FFN_O_QUICK, 0, NULL, FFN_WORD_FLAG,
     "the short calibration: 10-15 s instead of 1-2 minutes",
     "off", 0, 0, 0, "calibrate report",
     {{"report", NULL, NULL,
       "=this host from scratch, in about a minute: calibrate quickly, bench llama2-7b-shaped "
       "and Mixtral-shaped layers scaled down to run in seconds, compare the full models with "
       "datacenter devices; progress on stderr", 0}}},
    /* output */
    {FFN_O_FORMAT, 0, "F", FFN_WORD_TEXT,
     "table, json or csv",
     "table", 0, 0, 0, "predict plan sweep compare bench serve fit quant calibrate cpu",
     {{"sweep", NULL, "csv", "=csv or json (JSON lines)", 0},
      {"fit", NULL, NULL, "=table or json", 0},
      {"calibrate", NULL, NULL, "=what to print on stdout: table or json (calibration.json)", 0},
      {"cpu", NULL, NULL, "=table or json", 0}}},
    {FFN_O_OUT, 0, "FILE", FFN_WORD_TEXT,
     "write there instead of stdout, atomically (nothing half-written)",
     "stdout", 0, 0, 0, "predict plan sweep compare bench plot report serve fit quant calibrate",
     {{"sweep", NULL, NULL, "rows appear as computed; an interrupted sweep leaves whole rows", 0},
      {"fit", NULL, NULL,
       "the calibrated spec: the device with the fitted efficiency block and its residuals as "
       "'uncertainty:'", 0},
      {"bench", "DIR", "a new folder results/bench-DATE-PID", "=--out-dir's old spelling", 0},
      {"plot", "DIR", ".", "=--out-dir's old spelling", 0},
      {"report", "DIR", "report", "=--out-dir's old spelling", 0},
      {"calibrate", "DIR", "results/last-calibration", "=--out-dir's old spelling", 0}}},
    {FFN_O_OUT_DIR, 0, "DIR", FFN_WORD_TEXT,
     "the folder the command writes its files into (created if missing)",
     NULL, 0, 0, 0, "bench plot report calibrate",
     {{"bench", NULL, "a new folder results/bench-DATE-PID", "bench.json and bench.csv", 0},
      {"plot", NULL, ".", NULL, 0},
      {"report", NULL, "report", "report.md and its charts", 0},
      {"calibrate", NULL, "results/last-calibration", "hw.yaml and calibration.json", 0}}},
    {FFN_O_NO_RENDER, 0, NULL, FFN_WORD_FLAG,
     "charts: write the data and gnuplot scripts, do not run gnuplot",
     "off", 0, 0, 0, "compare plot report",
     {{"compare", NULL, NULL, "with --plots", 0}}},
    // clang-format on
};

const ffn_cli_word *ffn_cli_words(size_t *n)
{
    *n = sizeof words / sizeof words[0];
    return words;
}

const ffn_cli_word *ffn_cli_word_of(int opt)
{
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i].opt == opt || (words[i].alias && words[i].alias == opt)) return &words[i];
    return NULL;
}

/* whether the space-separated list has the word cmd */
static bool listed(const char *list, const char *cmd)
{
    const size_t l = strlen(cmd);
    for (const char *p = list; p && *p;) {
        const char *sp = strchr(p, ' ');
        const size_t n = sp ? (size_t)(sp - p) : strlen(p);
        if (n == l && !strncmp(p, cmd, l)) return true;
        p = sp ? sp + 1 : NULL;
    }
    return false;
}

static const ffn_word_for *per(const ffn_cli_word *w, const char *cmd)
{
    for (size_t i = 0; i < FFN_WORD_MAX_FOR && w->per[i].cmd; i++)
        if (!strcmp(w->per[i].cmd, cmd)) return &w->per[i];
    return NULL;
}

bool ffn_cli_word_takes(const ffn_cli_word *w, const char *cmd)
{
    return w && listed(w->cmds, cmd);
}

const char *ffn_cli_word_arg(const ffn_cli_word *w, const char *cmd)
{
    const ffn_word_for *f = per(w, cmd);
    return f && f->arg ? f->arg : w->arg;
}

const char *ffn_cli_word_default(const ffn_cli_word *w, const char *cmd)
{
    const ffn_word_for *f = per(w, cmd);
    return f && f->dflt ? f->dflt : w->dflt;
}

const char *ffn_cli_word_note(const ffn_cli_word *w, const char *cmd)
{
    const ffn_word_for *f = per(w, cmd);
    return f ? f->note : NULL;
}

/* whether cmd takes a list of w's values */
static bool is_list(const ffn_cli_word *w, const char *cmd)
{
    const char *a = ffn_cli_word_arg(w, cmd);
    return a && (!strcmp(a, "LIST") || !strcmp(a, "GRID"));
}

size_t ffn_cli_word_cap(const ffn_cli_word *w, const char *cmd)
{
    const ffn_word_for *f = per(w, cmd);
    if (f && f->cap) return f->cap;
    const char *a = ffn_cli_word_arg(w, cmd);
    if (a && !strcmp(a, "GRID")) return FFN_SC_MAX_GRID;
    return w->cap ? w->cap : 64;
}

/* "1-4096", "0.01-1", "at most 64 values of 1-16777216" */
static void range_text(const ffn_cli_word *w, const char *cmd, char *buf, size_t n)
{
    char r[64];
    if (w->kind == FFN_WORD_COUNT && w->hi >= 18446744073709551615.0)
        snprintf(r, sizeof r, "any whole number");
    else if (w->kind == FFN_WORD_COUNT)
        snprintf(r, sizeof r, "%.0f-%.0f", w->lo, w->hi);
    else
        snprintf(r, sizeof r, "%g-%g", w->lo, w->hi);
    const char *a = ffn_cli_word_arg(w, cmd);
    if (a && !strcmp(a, "GRID"))
        snprintf(buf, n, "values %s", r);
    else if (is_list(w, cmd))
        snprintf(buf, n, "at most %zu values of %s", ffn_cli_word_cap(w, cmd), r);
    else
        snprintf(buf, n, "%s", r);
}

/* The entry's text after its option: meaning; note (default: D; range). */
static void entry_text(const ffn_cli_word *w, const char *cmd, char *buf, size_t n)
{
    const char *note = ffn_cli_word_note(w, cmd), *d = ffn_cli_word_default(w, cmd);
    char range[96] = "";
    if (w->kind == FFN_WORD_COUNT || w->kind == FFN_WORD_NUMBER)
        range_text(w, cmd, range, sizeof range);
    size_t l =
        note && note[0] == '=' /* a meaning of its own there */
            ? (size_t)snprintf(buf, n, "%s", note + 1)
            : (size_t)snprintf(buf, n, "%s%s%s", w->meaning, note ? "; " : "", note ? note : "");
    if (l >= n) return;
    if (d || range[0])
        snprintf(buf + l, n - l, " (%s%s%s%s)", d ? "default: " : "", d ? d : "",
                 d && range[0] ? "; " : "", range);
}

size_t ffn_cli_word_help(const char *cmd, int opt, char *buf, size_t n)
{
    const ffn_cli_word *w = ffn_cli_word_of(opt);
    if (!w || !n) return 0;
    char head[64], text[1024];
    const char *a = ffn_cli_word_arg(w, cmd);
    snprintf(head, sizeof head, "  --%s%s%s", ffn_cli_opt_name(w->opt), a ? " " : "", a ? a : "");
    entry_text(w, cmd, text, sizeof text);
    /* the text from the command's column (24; 19 in fit and calibrate, 15 in cpu, whose own
     * options are short), wrapped at 80 */
    enum { WIDTH = 80 };
    const size_t COL = !strcmp(cmd, "cpu")                                ? 15
                       : !strcmp(cmd, "fit") || !strcmp(cmd, "calibrate") ? 19
                                                                          : 24;
    size_t len = 0;
    char *const out = buf;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(out + (len < n ? len : n - 1), len < n ? n - len : 1, __VA_ARGS__);      \
        len += k_ > 0 ? (size_t)k_ : 0;                                                            \
    } while (0)
    size_t col = strlen(head);
    PUT("%s", head);
    if (col + 1 > COL - 1) {
        PUT("\n");
        col = 0;
    }
    PUT("%*s", (int)(COL - col), "");
    col = COL;
    const char *p = text;
    while (*p) {
        const char *sp = strchr(p, ' ');
        const size_t wl = sp ? (size_t)(sp - p) : strlen(p);
        if (col > COL && col + 1 + wl > WIDTH) {
            PUT("\n%*s", (int)COL, "");
            col = COL;
        } else if (col > COL) {
            PUT(" ");
            col++;
        }
        PUT("%.*s", (int)wl, p);
        col += wl;
        p += wl;
        while (*p == ' ')
            p++;
    }
    PUT("\n");
#undef PUT
    return len;
}

void ffn_cli_help_words(FILE *fp, const char *cmd, const int *opts)
{
    char buf[2048];
    for (const int *o = opts; *o; o++) {
        ffn_cli_word_help(cmd, *o, buf, sizeof buf);
        fputs(buf, fp);
    }
}

/* Markdown cell text: '|' escaped */
static void cell(FILE *fp, const char *s)
{
    for (; s && *s; s++)
        fputs(*s == '|' ? "\\|" : (char[]){*s, 0}, fp);
}

void ffn_cli_vocab_markdown(FILE *fp)
{
    fputs("| option | value | meaning | default | accepted | commands | where a command differs |\n"
          "|---|---|---|---|---|---|---|\n",
          fp);
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const ffn_cli_word *w = &words[i];
        fprintf(fp, "| `--%s`", ffn_cli_opt_name(w->opt));
        if (w->alias) fprintf(fp, ", `--%s`", ffn_cli_opt_name(w->alias));
        fputs(" | ", fp);
        if (w->arg) fprintf(fp, "%s", w->arg);
        fputs(" | ", fp);
        cell(fp, w->meaning);
        fputs(" | ", fp);
        cell(fp, w->dflt ? w->dflt : "");
        fputs(" | ", fp);
        char range[96] = "";
        if (w->kind == FFN_WORD_COUNT || w->kind == FFN_WORD_NUMBER)
            range_text(w, "", range, sizeof range);
        cell(fp, range);
        fputs(" | ", fp);
        cell(fp, w->cmds);
        fputs(" |", fp);
        for (size_t k = 0; k < FFN_WORD_MAX_FOR && w->per[k].cmd; k++) {
            const ffn_word_for *f = &w->per[k];
            fprintf(fp, "%s**%s**:", k ? "<br>" : " ", f->cmd);
            const char *sep = " ";
            if (f->arg) fprintf(fp, " a %s", f->arg), sep = ", ";
            if (f->dflt) {
                fprintf(fp, "%sdefault ", sep);
                cell(fp, f->dflt);
                sep = ", ";
            }
            if (f->cap && f->cap != w->cap)
                fprintf(fp, "%sat most %zu values", sep, f->cap), sep = ", ";
            if (f->note) {
                fputs(sep, fp);
                if (f->note[0] == '=') fputs("meaning ", fp);
                cell(fp, f->note + (f->note[0] == '='));
            }
        }
        fputs(" |\n", fp);
    }
}

/* The word's bounds as whole numbers (hi past 2^64 - 1 is UINT64_MAX). */
static void bounds(const ffn_cli_word *w, uint64_t *lo, uint64_t *hi)
{
    *lo = (uint64_t)w->lo;
    *hi = w->hi >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)w->hi;
}

void ffn_cli_bind_word(ffn_cli_seen *seen, int opt, void *dst)
{
    const ffn_cli_word *w = ffn_cli_word_of(opt);
    if (!w) return; /* not a word: a bug in the caller */
    uint64_t lo, hi;
    switch (w->kind) {
    case FFN_WORD_COUNT:
        bounds(w, &lo, &hi);
        ffn_cli_bind_u64(seen, opt, lo, hi, dst);
        break;
    case FFN_WORD_NUMBER:
        ffn_cli_bind_double(seen, opt, w->lo, w->hi, dst);
        break;
    case FFN_WORD_FLAG:
        ffn_cli_bind_flag(seen, opt, dst);
        break;
    case FFN_WORD_TEXT:
        ffn_cli_bind_str(seen, opt, dst);
        break;
    }
}

void ffn_cli_bind_word_list(ffn_cli_seen *seen, const char *cmd, int opt, uint64_t *dst,
                            size_t room, size_t *n)
{
    const ffn_cli_word *w = ffn_cli_word_of(opt);
    if (!w) return;
    uint64_t lo, hi;
    bounds(w, &lo, &hi);
    const size_t cap = ffn_cli_word_cap(w, cmd);
    ffn_cli_bind_u64_list(seen, opt, lo, hi, dst, cap < room ? cap : room, n);
}

int ffn_cli_word_list(const char *cmd, int opt, const char *s, uint64_t *out, size_t room,
                      size_t *n)
{
    const ffn_cli_word *w = ffn_cli_word_of(opt);
    uint64_t lo = 1, hi = UINT64_MAX;
    size_t cap = room;
    if (w) {
        bounds(w, &lo, &hi);
        cap = ffn_cli_word_cap(w, cmd);
    }
    char name[48];
    snprintf(name, sizeof name, "--%s", ffn_cli_opt_name(opt));
    return ffn_cli_u64_list(cmd, name, s, lo, hi, out, cap < room ? cap : room, n);
}

void ffn_cli_word_bounds(int opt, uint64_t *lo, uint64_t *hi)
{
    const ffn_cli_word *w = ffn_cli_word_of(opt);
    *lo = 0, *hi = UINT64_MAX;
    if (w) bounds(w, lo, hi);
}

void ffn_cli_bind_routing(ffn_cli_seen *seen, ffn_moe_opts *moe)
{
    ffn_cli_bind_word(seen, FFN_O_ZIPF, &moe->zipf_s);
    ffn_cli_bind_word(seen, FFN_O_ROUTING_ALPHA, &moe->routing_alpha);
    ffn_cli_bind_word(seen, FFN_O_TRIALS, &moe->trials);
    ffn_cli_bind_word(seen, FFN_O_SEED, &moe->seed);
    ffn_cli_bind_word(seen, FFN_O_CAPACITY_FACTOR, &moe->capacity_factor);
    ffn_cli_bind_word(seen, FFN_O_DEVICES_PER_NODE, &moe->devices_per_node);
    ffn_cli_bind_word(seen, FFN_O_EP_UNEVEN, &moe->ep_uneven);
    ffn_cli_bind_flag(seen, FFN_O_GENERIC_MOE, &moe->generic);
}
