/* A small streaming JSON writer (io/write/jsonw.c): correct escaping, no trailing commas,
 * non-finite numbers written as null. Errors are sticky: check ffn_json_error() once at the end. */
#ifndef FFNROOF_JSON_H
#define FFNROOF_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FFN_JSON_MAX_DEPTH 32

typedef struct ffn_json {
    FILE *fp;
    int depth;
    bool need_comma[FFN_JSON_MAX_DEPTH];
    bool pretty;
    int err;
} ffn_json;

void ffn_json_init(ffn_json *j, FILE *fp, bool pretty);
/* The start of every ffnroof file: a pretty-printed document whose top object opens with
 * "schema": schema (then add the members and ffn_json_obj_end, ffn_json_finish). */
void ffn_json_doc_begin(ffn_json *j, FILE *fp, const char *schema);
/* key is the member name inside an object, NULL inside an array or at the top. */
void ffn_json_obj_begin(ffn_json *j, const char *key);
void ffn_json_obj_end(ffn_json *j);
void ffn_json_arr_begin(ffn_json *j, const char *key);
void ffn_json_arr_end(ffn_json *j);
void ffn_json_num(ffn_json *j, const char *key, double v);
void ffn_json_u64(ffn_json *j, const char *key, uint64_t v);
void ffn_json_str(ffn_json *j, const char *key, const char *s);
void ffn_json_bool(ffn_json *j, const char *key, bool v);
void ffn_json_null(ffn_json *j, const char *key);
/* v, or null where v is not finite (a quantity that was not measured or does not apply). */
void ffn_json_num_or_null(ffn_json *j, const char *key, double v);
/* One CSV cell after a comma: v with `digits` significant digits, empty where v is not finite
 * (the CSV writers' null). */
void ffn_csv_num(FILE *fp, double v, int digits);
/* Ends the document (a newline) and returns 0 or FFN_EIO. */
int ffn_json_finish(ffn_json *j);

#endif
