/* The writers of `ffnroof plan` (io/plan_write.c, docs/plan.md): one plan per (model, device)
 * pair, ranked per model, written as a table (with every layout on request), as JSON (schema
 * ffnroof.plan/1) or CSV, and the arithmetic behind one plan in a few lines of at most 80
 * columns. The caller owns the stream; nothing here opens files or exits. */
#ifndef FFNROOF_PLAN_WRITE_H
#define FFNROOF_PLAN_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/plan.h"
#include "ffnroof/scenario.h"

/* One model on one device type and its plan (borrowed pointers, all alive while it is used). */
typedef struct ffn_plan_pair {
    const ffn_model *m;
    const ffn_hw *hw;
    size_t hw_index;
    ffn_plan *plan;
    int show; /* the layout shown: best, else closest, else -1 */
    int rank; /* 1-based among this model's pairs */
} ffn_plan_pair;

/* Sort the pairs (each model's together; feasible first, by obj, then by the smallest miss) and
 * number them per model. */
void ffn_plan_pairs_rank(ffn_plan_pair *pairs, size_t np, ffn_objective obj);

/* The scenario's workload, then per model one row per device (its shown layout; every layout
 * with all). */
void ffn_plan_write_table(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                          const ffn_plan_pair *pairs, size_t np, bool all);
/* The arithmetic behind p's shown layout: memory, step, SLO, rate, fleet, power, cost, limit. */
void ffn_plan_explain(FILE *fp, const ffn_plan_pair *p);
/* 0 or FFN_EIO. */
int ffn_plan_write_json(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                        const ffn_plan_pair *pairs, size_t np);
/* One line per layout of every pair; 0 or FFN_EIO. */
int ffn_plan_write_csv(FILE *fp, const ffn_plan_pair *pairs, size_t np);

#endif
