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

#endif
