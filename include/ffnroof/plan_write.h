/* The writers of `ffnroof plan` (io/write/plan_write.c, docs/plan.md): one plan per (model,
 * device) pair, ranked per model (ffn_plan_pairs_rank, ffnroof/plan.h), as JSON (schema
 * ffnroof.plan/1) or CSV; the table and the explanation are views (ffnroof/plan_report.h). o is
 * the options the plans were evaluated with, its objective resolved (ffn_plan_objective). The
 * caller owns the stream; nothing here opens files or exits. */
#ifndef FFNROOF_PLAN_WRITE_H
#define FFNROOF_PLAN_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/plan.h"
#include "ffnroof/scenario.h"

/* 0 or FFN_EIO. */
int ffn_plan_write_json(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                        const ffn_plan_pair *pairs, size_t np);
/* One line per layout of every pair; 0 or FFN_EIO. */
int ffn_plan_write_csv(FILE *fp, const ffn_plan_pair *pairs, size_t np);

/* `sweep --step` rows: the whole step at one sweep point (ffn_sweep_step_eval), its parts, its
 * range and the memory per device with whether it fits; CSV (header, then rows) or one JSON
 * object a line. Return 0 or FFN_EIO. */
struct ffn_sweep_step;
void ffn_sweep_step_csv_header(FILE *fp);
int ffn_sweep_step_csv_row(FILE *fp, const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                           const struct ffn_sweep_step *s);
int ffn_sweep_step_json(FILE *fp, const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                        const struct ffn_sweep_step *s);

#endif
