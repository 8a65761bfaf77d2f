/* The writers of `ffnroof serve` (io/write/serve_write.c, docs/plan.md "Serving"): every point of
 * every (model, device) pair, flagged frontier and pick, as CSV (a header, then a row a point) or
 * JSON lines; the table is a view (ffnroof/serve_report.h). The caller owns the stream. */
#ifndef FFNROOF_SERVE_WRITE_H
#define FFNROOF_SERVE_WRITE_H

#include <stddef.h>
#include <stdio.h>

#include "ffnroof/serve.h"

/* 0 or FFN_EIO. */
int ffn_serve_write_csv(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np);
int ffn_serve_write_json(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np);

#endif
