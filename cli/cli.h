/* Shared helpers of the ffnroof command line: option values, data-file lookup, errors with exit
 * codes, and output files written atomically. Only cli/ prints or exits. Exit codes: 0 ok,
 * 1 the run failed, 2 bad usage or bad input. */
#ifndef FFN_CLI_H
#define FFN_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h" /* the commands load and write specs, beside ffn_cli_load_hw */
#include "ffnroof/hw_write.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

enum { FFN_EXIT_OK = 0, FFN_EXIT_FAIL = 1, FFN_EXIT_USAGE = 2 };

typedef enum ffn_format { FFN_FMT_TABLE = 0, FFN_FMT_JSON, FFN_FMT_CSV } ffn_format;

typedef struct ffn_cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} ffn_cli_cmd;

/* Subcommands (one cmd_<name>.c each). */
int ffn_cmd_predict(int argc, char **argv);
int ffn_cmd_fit(int argc, char **argv);
int ffn_cmd_plan(int argc, char **argv);
int ffn_cmd_sweep(int argc, char **argv);
int ffn_cmd_calibrate(int argc, char **argv);
int ffn_cmd_bench(int argc, char **argv);
int ffn_cmd_plot(int argc, char **argv);
int ffn_cmd_compare(int argc, char **argv);
int ffn_cmd_report(int argc, char **argv);
int ffn_cmd_cpu(int argc, char **argv);
int ffn_cmd_quant(int argc, char **argv);
int ffn_cmd_serve(int argc, char **argv);
/* `ffnroof cpu`'s report (also `bench --isa list`); exit code. */
int ffn_cli_cpu_report(ffn_format fmt);
/* One line: the ISA level and the kernel per weight dtype (for --version). */
int ffn_cli_kernel_summary(char *buf, size_t n);

/* "ffnroof CMD: message" + a hint to --help on stderr; returns FFN_EXIT_USAGE. */
int ffn_cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print a diagnostic ("file:line:col: message") on stderr; returns FFN_EXIT_USAGE. */
int ffn_cli_diag(const ffn_diag *d);
/* Print "ffnroof CMD: message" on stderr (no hint); returns code. */
int ffn_cli_fail(int code, const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Every long option of the command line, once (cli/options.c: its name and whether it takes a
 * value). A command lists the ones it takes, 0-terminated; --help ('h') comes with every list. */
enum ffn_opt {
    FFN_O_FIRST = 256,
    FFN_O_ACT = FFN_O_FIRST,
    FFN_O_ACT_IO_DTYPE,
    FFN_O_ADTYPE,
    FFN_O_ALL,
    FFN_O_ALPHA,
    FFN_O_BATCH,
    FFN_O_BENCH,
    FFN_O_BY,
    FFN_O_CALIBRATION,
    FFN_O_CAPACITY_FACTOR,
    FFN_O_CHART,
    FFN_O_CHECK,
    FFN_O_CHECKPOINT,
    FFN_O_CHUNK,
    FFN_O_COMPARE,
    FFN_O_CONCURRENCY,
    FFN_O_D,
    FFN_O_DATA,
    FFN_O_DEVICES_PER_NODE,
    FFN_O_DP,
    FFN_O_DTYPE,
    FFN_O_EMIT,
    FFN_O_ENGINE,
    FFN_O_EP,
    FFN_O_EP_UNEVEN,
    FFN_O_EVENTS,
    FFN_O_EXPERTS,
    FFN_O_EXPLAIN,
    FFN_O_F,
    FFN_O_FIT,
    FFN_O_FIT_POINTS,
    FFN_O_FORCE,
    FFN_O_FORMAT,
    FFN_O_FORMATS,
    FFN_O_FUSED,
    FFN_O_GATE_UP,
    FFN_O_GENERIC_MOE,
    FFN_O_MOE_KERNEL,
    FFN_O_GROUP,
    FFN_O_GROUP_SIZE,
    FFN_O_HISTOGRAM,
    FFN_O_HW,
    FFN_O_ISA,
    FFN_O_KERNEL,
    FFN_O_KV_DTYPE,
    FFN_O_KV_PAGE,
    FFN_O_LAYER,
    FFN_O_LEVELS,
    FFN_O_MARGIN,
    FFN_O_MAX_BATCH,
    FFN_O_MAX_BATCHED_TOKENS,
    FFN_O_MAX_DEVICES,
    FFN_O_MAX_POINTS,
    FFN_O_MAX_SEQS,
    FFN_O_MEM_UTIL,
    FFN_O_MOC,
    FFN_O_MODEL,
    FFN_O_NAME,
    FFN_O_NO_PROGRESS,
    FFN_O_NO_RENDER,
    FFN_O_NO_SPEED,
    FFN_O_NU,
    FFN_O_OBJECTIVE,
    FFN_O_OFFLINE,
    FFN_O_ONCHIP,
    FFN_O_OPS,
    FFN_O_OUT,
    FFN_O_OUT_DIR,
    FFN_O_OUTLIERS,
    FFN_O_OUTLIER_SCALE,
    FFN_O_OUTPUT,
    FFN_O_PARETO,
    FFN_O_PEERS,
    FFN_O_PHASE,
    FFN_O_PLOTS,
    FFN_O_POINTS,
    FFN_O_PP,
    FFN_O_PREFILL_BATCH,
    FFN_O_PRICE,
    FFN_O_PROMPT,
    FFN_O_QUICK,
    FFN_O_RATE,
    FFN_O_REPS,
    FFN_O_REQUESTS,
    FFN_O_RESERVE,
    FFN_O_ROWS,
    FFN_O_SCENARIO,
    FFN_O_SEED,
    FFN_O_SEQ,
    FFN_O_SEQ_OVERHEAD,
    FFN_O_FLOP_OVERHEAD,
    FFN_O_SHAPE,
    FFN_O_SIZE,
    FFN_O_SPEC,
    FFN_O_SPREAD,
    FFN_O_LENGTHS,
    FFN_O_STEP,
    FFN_O_STEP_OVERHEAD,
    FFN_O_TARGET,
    FFN_O_TEST_TINY,
    FFN_O_THREADS,
    FFN_O_TITLE,
    FFN_O_TOKENS,
    FFN_O_TP,
    FFN_O_TPOT,
    FFN_O_TRIALS,
    FFN_O_TTFT,
    FFN_O_UNFUSED,
    FFN_O_USER_TPS,
    FFN_O_VERIFY,
    FFN_O_WARM,
    FFN_O_WDTYPE,
    FFN_O_WEIGHTS,
    FFN_O_ZERO_POINT,
    FFN_O_ZIPF,
    FFN_O_ROUTING_ALPHA,
    FFN_O_DIST,
    FFN_O_RESERVE_OUTPUT,
    FFN_O_PREFILL_APART,
    FFN_O_END
};
enum { FFN_CLI_MAX_OPTS = FFN_O_END - FFN_O_FIRST + 2 };
/* The option's name without "--" ("batch"), or NULL for a code that is no option. */
const char *ffn_cli_opt_name(int opt);

/* A value an option stores itself (ffn_cli_bind_*): its kind, where it goes and its limits. */
typedef struct ffn_cli_bound {
    int val;
    enum {
        FFN_BIND_STR,
        FFN_BIND_FLAG,
        FFN_BIND_U64,
        FFN_BIND_U64_LIST,
        FFN_BIND_DOUBLE,
        FFN_BIND_FORMAT,
        FFN_BIND_DTYPE,
        FFN_BIND_PHASES
    } kind;
    void *dst;
    uint64_t lo, hi; /* U64, U64_LIST; FORMAT: hi = 1 allows csv */
    double dlo, dhi; /* DOUBLE */
    size_t cap, *n;  /* U64_LIST */
} ffn_cli_bound;

/* One parse of a command line: the options already given and the bound ones;
 * start each parse with one set to {0}. */
typedef struct ffn_cli_seen {
    struct {
        int val;
        const char *arg;
    } opt[64];
    size_t n;
    bool started; /* ffn_cli_getopt has reset getopt for this parse */
    ffn_cli_bound bind[40];
    size_t nbind;
    struct option table[FFN_CLI_MAX_OPTS]; /* this parse's getopt_long table (ffn_cli_getopt) */
} ffn_cli_seen;
/* Options whose value goes straight into a variable, bound before the loop: ffn_cli_getopt
 * parses and stores a bound option itself (the string as argv holds it; true for a flag; a
 * number, list, format, dtype or phase mask checked as ffn_cli_u64 and the others below check
 * them) and returns only the options the command handles. At most 40 per parse (more are
 * ignored: a bug). */
void ffn_cli_bind_str(ffn_cli_seen *seen, int val, const char **dst);
void ffn_cli_bind_flag(ffn_cli_seen *seen, int val, bool *dst);
void ffn_cli_bind_u64(ffn_cli_seen *seen, int val, uint64_t lo, uint64_t hi, uint64_t *dst);
void ffn_cli_bind_u64_list(ffn_cli_seen *seen, int val, uint64_t lo, uint64_t hi, uint64_t *dst,
                           size_t cap, size_t *n);
void ffn_cli_bind_double(ffn_cli_seen *seen, int val, double lo, double hi, double *dst);
void ffn_cli_bind_format(ffn_cli_seen *seen, int val, bool allow_csv, ffn_format *dst);
void ffn_cli_bind_dtype(ffn_cli_seen *seen, int val, ffn_dtype *dst);
void ffn_cli_bind_phases(ffn_cli_seen *seen, int val, unsigned *dst);
/* The vocabulary's options (cli/vocab.h) bound with its bounds: a count (uint64_t), a number
 * (double), a flag (bool) or a text (const char *) by the word's kind; a list of counts into
 * dst (room values) with cmd's cap. ffn_cli_word_list parses a collected value alike. */
void ffn_cli_bind_word(ffn_cli_seen *seen, int opt, void *dst);
void ffn_cli_bind_word_list(ffn_cli_seen *seen, const char *cmd, int opt, uint64_t *dst,
                            size_t room, size_t *n);
int ffn_cli_word_list(const char *cmd, int opt, const char *s, uint64_t *out, size_t room,
                      size_t *n);
void ffn_cli_word_bounds(int opt, uint64_t *lo, uint64_t *hi);
/* The MoE routing options (--zipf, --routing-alpha, --trials, --seed, --capacity-factor,
 * --devices-per-node, --ep-uneven) bound into moe: one set of names and limits for predict, plan
 * and sweep. */
void ffn_cli_bind_routing(ffn_cli_seen *seen, ffn_moe_opts *moe);
/* For commands that collect first (ffn_cli_collect): store each option bound in binds whose value
 * val holds (val[opt - FFN_O_FIRST]), checked as ffn_cli_getopt checks it. 0 or FFN_EXIT_USAGE
 * (printed). */
int ffn_cli_store_collected(const char *cmd, const ffn_cli_seen *binds, const char *const *val);
/* Whether option opt was given in this parse (after ffn_cli_getopt or ffn_cli_parse). */
bool ffn_cli_given(const ffn_cli_seen *seen, int opt);
/* The step of every command's option loop: getopt_long over the bound options and those in
 * accept (0-terminated, or NULL; the command handles these), short options "h" only, ':' for a
 * missing value, getopt reset on the first call of a parse
 * (seen starts as {0}); an option given twice, or both options of a pair ("--fused" and
 * "--unfused", "--X" and "--no-X"), is refused with a message naming both (repeatable lists the
 * options that may repeat, 0-terminated, or NULL); a bound option is stored and the loop goes on.
 * Returns the option, -1 at the end, or -2 when an option was refused (it printed why; return
 * FFN_EXIT_USAGE). */
int ffn_cli_getopt(const char *cmd, int argc, char **argv, const int *accept, ffn_cli_seen *seen,
                   const int *repeatable);
/* The whole parse of a command whose options are all bound: ffn_cli_getopt to the end, anything
 * it returns through ffn_cli_opt_other, and no argument left over. Returns -1 when the command
 * goes on, else the exit code to return (0 after --help). */
int ffn_cli_parse(const char *cmd, int argc, char **argv, const int *accept, ffn_cli_seen *seen,
                  const int *repeatable, void (*usage)(FILE *), bool quote);
/* What every command does with the other values of the loop: 'h' prints usage on stdout
 * (FFN_EXIT_OK), ':' says the option needs a value ("option '--x' needs a value", or
 * "--x needs a value" with quote false), anything else is an unknown option (FFN_EXIT_USAGE). */
int ffn_cli_opt_other(const char *cmd, int c, char **argv, void (*usage)(FILE *), bool quote);
/* For commands that read every option before acting on any (plan, sweep: a scenario loads
 * first, the flags then override it): option c has its value stored in val[c - FFN_O_FIRST]
 * ("" for a flag) and -1 is returned; 'h', ':' and anything else go to ffn_cli_opt_other, whose
 * exit code is returned. */
int ffn_cli_collect(const char *cmd, int c, char **argv, const char **val, void (*usage)(FILE *));

/* Strict option values: returns 0 or prints the problem and returns FFN_EXIT_USAGE. */
int ffn_cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                uint64_t *out);
int ffn_cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                   double *out);
int ffn_cli_format(const char *cmd, const char *s, ffn_format *out, bool allow_csv);
/* A dtype option (--dtype, --wdtype, --adtype, --kv-dtype): the names ffn_dtype_parse takes. */
int ffn_cli_dtype(const char *cmd, const char *opt, const char *s, ffn_dtype *out);
/* A keyword option: *out = the index of s in names (NULL-terminated), else "OPT must be a, b or
 * c; got 's'" and FFN_EXIT_USAGE. */
int ffn_cli_choice(const char *cmd, const char *opt, const char *s, const char *const *names,
                   int *out);
/* --phase prefill|decode|both as a mask: bit 0 prefill, bit 1 decode (= FFN_SWEEP_*). */
int ffn_cli_phases(const char *cmd, const char *s, unsigned *mask);
/* Integer lists: "1,8,64", ranges "1-1000" (step 1), "16-256:16" (step 16) and geometric
 * "1-4096:x2". At most cap values; returns 0 or FFN_EXIT_USAGE. */
int ffn_cli_u64_list(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out, size_t cap, size_t *n);

/* "a,b,c" -> scenario references without positions (--model / --hw lists of plan and
 * sweep). Returns 0 or prints the problem and returns FFN_EXIT_USAGE. */
struct ffn_sc_ref;
int ffn_cli_refs(const char *cmd, const char *opt, const char *list, struct ffn_sc_ref *refs,
                 size_t *n);

/* Load a scenario's models and devices from the data folders (unknown names list the known
 * ones). Returns 0 or prints the diagnostic and returns FFN_EXIT_USAGE. */
struct ffn_scenario;
/* plan/sweep: load --scenario FILE, or start an empty scenario that the flags fill (then
 * --model and --hw are required); --model and --hw, when given, replace the scenario's lists
 * (--hw drops its prices). Returns 0 or prints the problem, releases sc and returns
 * FFN_EXIT_USAGE. */
int ffn_cli_scenario_start(const char *cmd, const char *scenario, const char *model, const char *hw,
                           struct ffn_scenario *sc);
int ffn_cli_load_scenario_inputs(const char *cmd, struct ffn_scenario *sc, ffn_hw *hws,
                                 ffn_model *models);

/* Data lookup: NAME -> <dir>/<kind>/NAME.yaml, searched in $FFNROOF_DATA_DIR, the source tree
 * this binary was built from, the installed data folder and <exe>/../share/ffnroof. A value with
 * a '/' or ending in .yaml/.yml/.json is a path and is used as is. Returns 0, or prints what is
 * known and returns FFN_EXIT_USAGE. */
int ffn_cli_resolve(const char *cmd, const char *kind, const char *name, char *path, size_t n);
/* The first existing data folder for kind ("hw", "models", ...), or NULL. */
const char *ffn_cli_data_dir(const char *kind, char *buf, size_t n);
int ffn_cli_load_hw(const char *cmd, const char *name, ffn_hw *hw);
/* --engine NAME (vllm, sglang, trtllm; default vllm, the kernels the NVIDIA specs are fitted
 * to): every spec loaded after it by ffn_cli_load_hw or ffn_cli_load_scenario_inputs has that
 * engine's kernel profile (hw/arch/engines.yaml) applied; NULL keeps the default. 0 or
 * FFN_EXIT_USAGE with the message printed. */
int ffn_cli_engine(const char *cmd, const char *name);
/* The engine in force and whether it applies to hw (its profiles describe NVIDIA's kernels: a
 * spec of another vendor is left as it is). */
ffn_engine ffn_cli_engine_in_force(void);
/* Apply the engine in force to an NVIDIA GPU spec (its profile from hw/arch/engines.yaml; the
 * default engine's changes nothing). Returns an exit code. */
int ffn_cli_apply_engine(ffn_hw *hw);
/* --moe-kernel NAME on hw for weights w and activations a: 0 when the engine has a family of
 * that name for them on hw (or NAME is NULL, or hw is no GPU under an engine), else a usage
 * error naming the families it has; with --generic-moe (generic) a usage error. */
int ffn_cli_check_moe_kernel(const char *cmd, const char *name, bool generic, const ffn_hw *hw,
                             ffn_dtype w, ffn_dtype a);
int ffn_cli_load_model(const char *cmd, const char *name, ffn_model *m);
/* Engine e's profile (kernels and scheduler) from hw/arch/engines.yaml. Returns 0 or an exit
 * code with the message printed. */
struct ffn_engine_profile;
int ffn_cli_engine_profile(const char *cmd, ffn_engine e, struct ffn_engine_profile *p);

/* What plan and serve read alike (cli/cli_workload.c). Each returns 0 or an exit code with the
 * message printed. --dtype (weights, activations and KV cache) or --wdtype/--adtype (--adtype
 * also sets the KV cache), then --kv-dtype; any may be NULL. */
struct ffn_plan_opts;
/* plan's and serve's option loop: every option collected into val (ffn_cli_collect), --price
 * (repeatable, at most FFN_SC_MAX_REFS) into prices. -1 to go on, else the exit code. */
int ffn_cli_collect_with_prices(const char *cmd, int argc, char **argv, const int *accept,
                                const char **val, const char **prices, size_t *n_prices,
                                void (*usage)(FILE *));
int ffn_cli_plan_dtypes(const char *cmd, const char *dtype, const char *wdtype, const char *adtype,
                        const char *kv_dtype, struct ffn_plan_opts *o);
/* predict's and compare's dtypes: run->wdtype and run->adtype bound to --wdtype and --adtype,
 * dt to --dtype (both at once refused: exit 2); --dtype sets both, and --wdtype fp8 or a
 * block-scaled format without --adtype gives the activations the same format (W8A8, W4A4).
 * 0 or the exit code. */
int ffn_cli_run_dtypes(const char *cmd, const ffn_cli_seen *seen, ffn_dtype dt, ffn_run *run);
/* A request of `tokens` (prompt + output) no model of the n takes: exit 2, naming the model and
 * its context; 0 when every model's context holds it or is unknown. */
int ffn_cli_check_context(const char *cmd, const ffn_model *models, size_t n, double tokens);
/* An SLO time (--tpot, --ttft): in (0, 1 h], e.g. 50ms or 2s; one message for every command. */
int ffn_cli_slo_time(const char *cmd, const char *opt, const char *s, double *out);
/* --reserve SIZE (bytes, 0 .. 1e15). */
int ffn_cli_reserve(const char *cmd, const char *s, double *out);
/* Every --price DEVICE=USD into the scenario's price of that device. */
int ffn_cli_price_flags(const char *cmd, const char *const *prices, size_t n,
                        struct ffn_scenario *sc);
/* A device without a price takes hw/prices.tsv's list price where it has one (listed[k] the row,
 * else NULL; hws in the scenario's order). */
struct ffn_price;
int ffn_cli_list_prices(struct ffn_scenario *sc, const ffn_hw *hws,
                        const struct ffn_price **listed);

/* mkdir -p dir, then check that it is a writable folder; 0 or FFN_EXIT_USAGE (one line). The
 * folders it creates are remembered: main() takes back the ones still empty when the command
 * fails (ffn_cli_remove_created_dirs), so that a refused run leaves nothing behind. */
int ffn_cli_mkdirs(const char *cmd, const char *dir);
void ffn_cli_remove_created_dirs(void);

/* Output: stdout when path is NULL or "-", else a temporary file in the same folder that
 * ffn_cli_out_close() renames into place only on success (nothing half-written is left). */
typedef struct ffn_cli_out {
    FILE *fp;
    char path[1024];
    char tmp[1040];
    bool is_stdout;
} ffn_cli_out;
int ffn_cli_out_open(const char *cmd, ffn_cli_out *o, const char *path);
/* ok=false discards the temporary file. Returns FFN_EXIT_OK or FFN_EXIT_FAIL. */
int ffn_cli_out_close(const char *cmd, ffn_cli_out *o, bool ok);

#endif
