/* Scenarios (scenarios/NAME.yaml, docs/formats-scenario.md): a workload checked into a
 * repository - models, devices, phase, prompt and output lengths, dtypes, SLOs, a throughput
 * target, device limits, layouts to consider, prices - and the grid a sweep walks. Loaded by
 * io/load/scenario_load.c with every rejection reported as "file:line:col: message"; consumed by
 * `ffnroof plan` and `ffnroof sweep`. */
#ifndef FFNROOF_SCENARIO_H
#define FFNROOF_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/plan.h"
#include "ffnroof/sweep.h"
#include "ffnroof/types.h"

#define FFN_SC_MAX_REFS 32         /* models, devices */
#define FFN_SC_MAX_DTYPES 8        /* sweep dtype pairs */
#define FFN_SC_MAX_GRID (1u << 24) /* values per sweep axis */

/* A model or device named in a scenario (or on the command line: line 0), with where. */
typedef struct ffn_sc_ref {
    char name[512];
    int line, col;
} ffn_sc_ref;

/* What `ffnroof serve` reads beside the plan's keys (docs/formats-scenario.md, "serve"). */
#define FFN_SC_MAX_CONC 32
typedef struct ffn_sc_serve {
    bool set;          /* the scenario has a serve block */
    ffn_engine engine; /* FFN_ENGINE_NONE: not given */
    uint64_t concurrency[FFN_SC_MAX_CONC];
    size_t n_concurrency;     /* 0: the command's default sweep */
    double user_tokens_per_s; /* the interactivity to pick at; 0 = none */
    double spread;            /* length spread, [0, 1) */
    bool sharegpt_lengths;    /* lengths: sharegpt (ffn_serve_opts.sharegpt_lengths) */
    uint32_t spec_tokens;     /* speculative decoding: draft tokens, 0 = off */
    double spec_accept;       /* tokens a step with them */
    uint64_t max_devices;     /* devices per replica; 0 = the command's default */
} ffn_sc_serve;

typedef struct ffn_scenario {
    char path[512]; /* "" when built from flags */
    char name[64];
    char description[1024];
    ffn_sc_ref models[FFN_SC_MAX_REFS];
    size_t n_models;
    ffn_sc_ref hws[FFN_SC_MAX_REFS];
    size_t n_hws;
    double price_per_hour[FFN_SC_MAX_REFS]; /* per hws[i]; 0 = unknown */
    ffn_plan_opts plan;
    ffn_sc_serve serve;
    /* sweep grid (owned arrays; see ffn_scenario_release) */
    unsigned sweep_phases; /* FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE */
    uint64_t *batch;
    size_t n_batch;
    uint64_t *seq;
    size_t n_seq;
    uint64_t *sweep_tp;
    size_t n_sweep_tp;
    uint64_t *sweep_ep;
    size_t n_sweep_ep;
    ffn_dtype sweep_wdtype[FFN_SC_MAX_DTYPES], sweep_adtype[FFN_SC_MAX_DTYPES];
    size_t n_sweep_dtype;
} ffn_scenario;

/* Defaults of every key (ffn_plan_opts_default() and an empty sweep grid). */
void ffn_scenario_init(ffn_scenario *sc);
/* Load and validate a scenario. On error returns a negative code with diag filled and *sc
 * released (nothing to free). Release a loaded one with ffn_scenario_release(). */
int ffn_scenario_load(const char *path, ffn_scenario *sc, ffn_diag *diag);
/* Free the grid arrays; *sc is then as after ffn_scenario_init(). */
void ffn_scenario_release(ffn_scenario *sc);

/* Fill the sweep axes that are still empty from the plan part: batch 1, seq = prompt, TP 1,
 * EP 1, the plan's dtype pair, both phases. Returns 0 or FFN_ENOMEM. */
int ffn_scenario_sweep_defaults(ffn_scenario *sc);

/* Grid syntax, shared with the command line: comma-separated items, each a value "64", a range
 * "1-1000" (step 1), a stepped range "16-256:16" or a geometric range "1-4096:x2". Values outside
 * [lo, hi] and an empty list are errors. Returns 0, FFN_EPARSE / FFN_ERANGE, or FFN_ENOSPACE
 * when there are more than cap values, with a reason in why. */
int ffn_grid_parse(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, size_t cap, size_t *n,
                   char *why, size_t why_n);
/* A dtype pair "bf16" (both) or "int4/bf16" (weights/activations). Returns 0 or FFN_EINVAL. */
int ffn_dtype_pair_parse(const char *s, ffn_dtype *w, ffn_dtype *a);

/* Where a model or device of the scenario lives. A reference that looks like a path (has a '/',
 * or ends in .yaml/.yml/.json) is used as is when absolute, else relative to the scenario's
 * folder (to the working directory for flags); a missing file is an error that says so. A
 * name is looked up as data_dir/NAME.yaml; an unknown name is an error listing the names
 * data_dir holds. kind is "device" or "model" for messages. Errors carry the reference's
 * position in the scenario. Returns 0 or FFN_ENOTFOUND. */
/* The NAMEs of the NAME.yaml files in a data folder (hw/, models/, scenarios/), sorted, at
 * most cap; returns how many (0 when the folder cannot be read). */
size_t ffn_data_names(const char *dir, char (*names)[64], size_t cap);

int ffn_scenario_resolve(const ffn_scenario *sc, const ffn_sc_ref *ref, const char *data_dir,
                         const char *kind, char *path, size_t n, ffn_diag *diag);

/* Resolve and load every model and device of the scenario into models[n_models] and
 * hws[n_hws] (caller-allocated). hw_dir / models_dir are the data folders for names (may be
 * NULL). Returns 0 or the first error with diag filled (the scenario's position for a name that
 * cannot be found, the data file's own position for a file that does not load). */
struct ffn_hw;
struct ffn_model;
int ffn_scenario_load_inputs(const ffn_scenario *sc, const char *hw_dir, const char *models_dir,
                             struct ffn_hw *hws, struct ffn_model *models, ffn_diag *diag);

#endif
