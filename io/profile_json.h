/* Private to io/: the JSON pieces calibration.json (calib_write.c) and the bench JSON
 * (bench_write.c) share (docs/formats-bench.md). */
#ifndef FFNROOF_IO_PROFILE_JSON_H
#define FFNROOF_IO_PROFILE_JSON_H

#include "ffnroof/json.h"
#include "ffnroof/profile.h"

/* A "; "-separated list (a, then b; either may be NULL) as a JSON array of strings. */
void ffn__json_notes(ffn_json *j, const char *key, const char *a, const char *b);
/* A case's layer and its token count: tokens, d, f, act, experts and top_k (null for a dense
 * case), dtype and adtype. */
void ffn__json_case_layer(ffn_json *j, const ffn_bench_case *c);

#endif
