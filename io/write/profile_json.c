/* The JSON pieces the profiler's two files share (io/write/profile_json.h): the notes list, a
 * bench case's layer and a timing, as calibration.json (calib_write.c) and the bench JSON
 * (bench_write.c) write them (docs/formats-bench.md). */
#include <string.h>

#include "ffnroof/json.h"

#include "profile_json.h"

void ffn__json_notes(ffn_json *j, const char *key, const char *a, const char *b)
{
    ffn_json_arr_begin(j, key);
    const char *srcs[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const char *p = srcs[s];
        while (p && *p) {
            const char *e = strstr(p, "; ");
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len) {
                char buf[1024];
                if (len >= sizeof buf) len = sizeof buf - 1;
                memcpy(buf, p, len);
                buf[len] = 0;
                ffn_json_str(j, NULL, buf);
            }
            p = e ? e + 2 : NULL;
        }
    }
    ffn_json_arr_end(j);
}

void ffn__json_case_layer(ffn_json *j, const ffn_bench_case *c)
{
    ffn_json_u64(j, "tokens", c->tokens);
    ffn_json_u64(j, "d", c->shape.d);
    ffn_json_u64(j, "f", c->shape.f);
    ffn_json_str(j, "act", ffn_act_name(c->shape.act));
    if (c->kind == FFN_BENCH_MOE) {
        ffn_json_u64(j, "experts", c->n_experts);
        ffn_json_u64(j, "top_k", c->top_k);
    } else {
        ffn_json_null(j, "experts");
        ffn_json_null(j, "top_k");
    }
    ffn_json_str(j, "dtype", ffn_dtype_name(c->wdtype));
    /* the format the kernel multiplies activations in: fp32, or bf16 / int8 (W8A8) for
     * quantized weights; int4's group size and zero points (null for other dtypes) */
    ffn_json_str(j, "adtype", ffn_dtype_name(c->adtype));
    if (c->wdtype == FFN_DT_INT4) {
        ffn_json_u64(j, "group", c->shape.group);
        ffn_json_bool(j, "zero_point", c->shape.zero_point);
    } else {
        ffn_json_null(j, "group");
        ffn_json_null(j, "zero_point");
    }
}

void ffn__json_time(ffn_json *j, const char *key, const ffn_stats *s, bool extra)
{
    if (!s->n) {
        ffn_json_null(j, key);
        return;
    }
    ffn_json_obj_begin(j, key);
    ffn_json_num(j, "median", s->median);
    ffn_json_num(j, "min", s->min);
    ffn_json_num(j, "p90", s->p90);
    if (extra) {
        ffn_json_num(j, "mean", s->mean);
        ffn_json_num(j, "stdev", s->stdev);
    }
    ffn_json_obj_end(j);
}
