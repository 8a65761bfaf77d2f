/* What the op builders of ffn_sim share (internal). */
#ifndef FFNROOF_SIM_OP_INTERNAL_H
#define FFNROOF_SIM_OP_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "ffnroof/sim.h"

/* An empty communication op named `name` (the caller fills its bytes and time). */
static inline void ffn__op_comm_init(ffn_op *op, const char *name)
{
    memset(op, 0, sizeof *op);
    snprintf(op->name, sizeof op->name, "%s", name);
    op->kind = FFN_OP_COMM;
    op->compute_dtype = FFN_DT_FP32;
    op->instances = 1;
    op->bound = op->predicted_bound = FFN_BOUND_COMM;
}

#endif
