/* Streaming JSON writer (include/ffnroof/json.h). */
#include "ffnroof/json.h"
#include "ffnroof/error.h"

#include <math.h>

void ffn_json_init(ffn_json *j, FILE *fp, bool pretty)
{
    j->fp = fp;
    j->depth = 0;
    j->pretty = pretty;
    j->err = 0;
    for (int i = 0; i < FFN_JSON_MAX_DEPTH; i++)
        j->need_comma[i] = false;
}

void ffn_json_doc_begin(ffn_json *j, FILE *fp, const char *schema)
{
    ffn_json_init(j, fp, true);
    ffn_json_obj_begin(j, NULL);
    ffn_json_str(j, "schema", schema);
}

static void indent(ffn_json *j)
{
    if (!j->pretty) return;
    fputc('\n', j->fp);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->fp);
}

static void put_string(ffn_json *j, const char *s)
{
    fputc('"', j->fp);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", j->fp);
            break;
        case '\\':
            fputs("\\\\", j->fp);
            break;
        case '\n':
            fputs("\\n", j->fp);
            break;
        case '\r':
            fputs("\\r", j->fp);
            break;
        case '\t':
            fputs("\\t", j->fp);
            break;
        default:
            if (*p < 0x20)
                fprintf(j->fp, "\\u%04x", *p);
            else
                fputc(*p, j->fp);
        }
    }
    fputc('"', j->fp);
}

static void member(ffn_json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->need_comma[j->depth]) fputc(',', j->fp);
        indent(j);
    }
    j->need_comma[j->depth] = true;
    if (key) {
        put_string(j, key);
        fputs(j->pretty ? ": " : ":", j->fp);
    }
}

static void open_(ffn_json *j, const char *key, char c)
{
    member(j, key);
    fputc(c, j->fp);
    if (j->depth + 1 >= FFN_JSON_MAX_DEPTH) {
        j->err = FFN_ERANGE;
        return;
    }
    j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(ffn_json *j, char c)
{
    bool had = j->need_comma[j->depth];
    if (j->depth > 0) j->depth--;
    if (had) indent(j);
    fputc(c, j->fp);
}

void ffn_json_obj_begin(ffn_json *j, const char *key)
{
    open_(j, key, '{');
}
void ffn_json_obj_end(ffn_json *j)
{
    close_(j, '}');
}
void ffn_json_arr_begin(ffn_json *j, const char *key)
{
    open_(j, key, '[');
}
void ffn_json_arr_end(ffn_json *j)
{
    close_(j, ']');
}

void ffn_json_num(ffn_json *j, const char *key, double v)
{
    member(j, key);
    if (!isfinite(v))
        fputs("null", j->fp);
    else if (v == floor(v) && fabs(v) < 9.007199254740992e15)
        fprintf(j->fp, "%.0f", v);
    else
        fprintf(j->fp, "%.17g", v);
}

void ffn_json_u64(ffn_json *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->fp, "%llu", (unsigned long long)v);
}

void ffn_json_str(ffn_json *j, const char *key, const char *s)
{
    member(j, key);
    put_string(j, s);
}

void ffn_json_bool(ffn_json *j, const char *key, bool v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->fp);
}

void ffn_json_null(ffn_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->fp);
}

void ffn_json_num_or_null(ffn_json *j, const char *key, double v)
{
    if (isfinite(v))
        ffn_json_num(j, key, v);
    else
        ffn_json_null(j, key);
}

void ffn_csv_num(FILE *fp, double v, int digits)
{
    if (isfinite(v))
        fprintf(fp, ",%.*g", digits, v);
    else
        fputc(',', fp);
}

int ffn_json_finish(ffn_json *j)
{
    fputc('\n', j->fp);
    if (ferror(j->fp) && !j->err) j->err = FFN_EIO;
    return j->err;
}
