/* Private to io/write/: the JSON pieces calibration.json (calib_write.c) and the bench JSON
 * (bench_write.c) share (docs/formats-bench.md), in their own file (profile_json.c) so that
 * neither writer needs the other. */
#ifndef FFNROOF_IO_PROFILE_JSON_H
#define FFNROOF_IO_PROFILE_JSON_H

#include <stdbool.h>

#include "ffnroof/json.h"
#include "ffnroof/profile.h"

/* A "; "-separated list (a, then b; either may be NULL) as a JSON array of strings. */
void ffn__json_notes(ffn_json *j, const char *key, const char *a, const char *b);
/* A case's layer and its token count: tokens, d, f, act, experts and top_k (null for a dense
 * case), dtype and adtype. */
void ffn__json_case_layer(ffn_json *j, const ffn_bench_case *c);
/* A timing's median, min and p90 (with extra: mean and stdev) as an object; null when nothing
 * was timed. */
void ffn__json_time(ffn_json *j, const char *key, const ffn_stats *s, bool extra);

#endif
