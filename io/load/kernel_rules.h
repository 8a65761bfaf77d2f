/* The kernel rules of a GPU spec's `kernels_by_dtype` and of an engine profile's format
 * (include/ffnroof/hw.h, ffn_kernel_rules; docs/formats-hw.md). */
#ifndef FFNROOF_IO_KERNEL_RULES_H
#define FFNROOF_IO_KERNEL_RULES_H

#include "ffnroof/hw.h"
#include "ydoc.h"

/* Reads the sequence seq (named `what` in messages) into out: each entry a map of `m` and `n`
 * (bounds, optional) and one of `tile: [rows, cols, depth]`, `waves: {rows: [..], cols: [step,
 * max], depth: D}` or `best: true`. Returns 0 or the error's code (ffn_y_error). */
int ffn_y_kernel_rules(ffn_ydoc *y, yaml_node_t *seq, const char *what, ffn_kernel_rules *out);

#endif
