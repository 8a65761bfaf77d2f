/* The view of `ffnroof serve` (report/serve_table.c, docs/plan.md "Serving"): per model and
 * device the engine's scheduler and the load, the frontier's points (every point with all), the
 * pick at user_tps (and within ttft_s; 0 = none) with its cost, and across devices the cheapest
 * with the break-even price of a device without one. The caller owns the stream. */
#ifndef FFNROOF_SERVE_REPORT_H
#define FFNROOF_SERVE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/serve.h"

void ffn_serve_write_table(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np,
                           bool all, double user_tps, double ttft_s);

#endif
