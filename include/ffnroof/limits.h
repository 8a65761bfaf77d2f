/* Hard limits on input files (docs/formats.md, "Input limits"). Every loader checks them before
 * its parsing could go quadratic or exhaust memory, and a file beyond one is refused with
 * "file:line:col: message" (FFN_ERANGE) instead of being read slowly or partly. */
#ifndef FFNROOF_LIMITS_H
#define FFNROOF_LIMITS_H

/* Bytes in one input file (YAML, JSON, CSV, histogram). */
#define FFN_MAX_INPUT_BYTES (64u << 20)
/* Nesting of YAML/JSON collections (a mapping or list inside another counts one level). */
#define FFN_MAX_DEPTH 64
/* Keys in one YAML/JSON mapping. */
#define FFN_MAX_KEYS 10000
/* Nodes (values, keys, lists, mappings) in one YAML/JSON document. */
#define FFN_MAX_NODES 1000000
/* Points of a sweep grid (models x devices x phases x batches x lengths x TP x EP x dtypes)
 * that `ffnroof sweep` computes unless --max-points raises the limit. */
#define FFN_MAX_SWEEP_POINTS 1000000000ull

#endif
