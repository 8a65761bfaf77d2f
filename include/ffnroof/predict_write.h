/* Writers for `ffnroof predict` and `ffnroof sweep` results (io/write/predict_write.c): JSON
 * (stable, documented in docs/formats.md) and CSV (one row per run), and the pieces of a run's
 * JSON other writers embed. They write to a stream the caller owns; the caller decides where it
 * goes (stdout, or a temporary file renamed into place). The terminal table is a view:
 * include/ffnroof/report.h. */
#ifndef FFNROOF_PREDICT_WRITE_H
#define FFNROOF_PREDICT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

#define FFN_PREDICT_SCHEMA "ffnroof.predict/1"

typedef struct ffn_predict_report {
    const ffn_model *model;
    const ffn_params *params;
    const ffn_hw *hw;
    const ffn_result *runs;
    size_t n_runs;
    bool per_op; /* table: show the per-op breakdown of each run */
} ffn_predict_report;

int ffn_write_predict_json(FILE *fp, const ffn_predict_report *r);
/* CSV: the header line, then one line per run (used by predict and sweep alike). */
int ffn_write_predict_csv_header(FILE *fp);
int ffn_write_predict_csv_row(FILE *fp, const ffn_model *m, const ffn_hw *hw,
                              const ffn_result *run);
/* A predicted time's range as the tables print it: "(19.8-23.9 ms, p10-p90)", both ends in the
 * unit t prints in, ", default" added when the range is the stated default; brief:
 * "19.8-23.9 ms" with a "*" for the default. */
const char *ffn_range_text(char *buf, size_t n, double t, double lo, double hi, bool dflt,
                           bool brief);
/* One JSON object for a run (as in runs[] of the predict JSON); `key` as in ffn_json. */
struct ffn_json;
void ffn_json_run(struct ffn_json *j, const char *key, const ffn_result *run);
/* The step's shape inside an open JSON object: "batch", "seq" (null in decode), "tokens". */
void ffn_json_step_shape(struct ffn_json *j, const ffn_result *run);
/* The MoE layer's times inside an open JSON object: "router_s", "dispatch_s", "expert_s",
 * "shared_s", "combine_s", "alltoall_s" (seconds a layer). */
void ffn_json_moe_times(struct ffn_json *j, const ffn_moe_detail *m);

#endif
