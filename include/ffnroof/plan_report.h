/* The views of `ffnroof plan` (report/plan_table.c, report/plan_emit.c, docs/plan.md): the table
 * of the ranked plans in 80 columns, the arithmetic behind one plan, and a plan as a serving
 * engine's launch command. o is the options the plans were evaluated with, its objective
 * resolved (ffn_plan_objective). The caller owns the stream; nothing here opens files or
 * exits. */
#ifndef FFNROOF_PLAN_REPORT_H
#define FFNROOF_PLAN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/model.h"
#include "ffnroof/plan.h"
#include "ffnroof/scenario.h"
#include "ffnroof/types.h"

/* The scenario's workload, then per model one row per device (its shown layout; every layout
 * with all). */
void ffn_plan_write_table(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                          const ffn_plan_pair *pairs, size_t np, bool all);
/* The arithmetic behind p's shown layout: memory, step, SLO, rate, fleet, power, cost, limit. */
void ffn_plan_explain(FILE *fp, const ffn_plan_pair *p);
/* Layout L of plan pl (model m) as engine e's launch command into buf (one line), and into note
 * what the command cannot say or the engine does differently ("" when nothing): vLLM `vllm
 * serve`, SGLang `python -m sglang.launch_server`, TensorRT-LLM `trtllm-serve`. 0, FFN_EINVAL
 * (no such engine), or FFN_ENOSPACE when buf is too small. */
int ffn_plan_emit(char *buf, size_t n, char *note, size_t nn, ffn_engine e, const ffn_model *m,
                  const ffn_plan *pl, const ffn_plan_layout *L);

#endif
