/* A loaded YAML/JSON document with position-aware typed accessors (io/load/ydoc.h). libyaml reads
 * JSON too, which is how Hugging Face config.json files come in. */
#include "ydoc.h"

#include "ffnroof/limits.h"
#include "input.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pos_line(yaml_node_t *n)
{
    return n ? (int)n->start_mark.line + 1 : 0;
}
static int pos_col(yaml_node_t *n)
{
    return n ? (int)n->start_mark.column + 1 : 0;
}

int ffn_y_error(ffn_ydoc *y, yaml_node_t *n, int err, const char *fmt, ...)
{
    if (!y->diag) return err;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffn_diag_set(y->diag, err, y->path, pos_line(n), pos_col(n), "%s", msg);
}

typedef struct key_ref {
    const char *text;
    size_t index; /* position among the mapping's pairs */
    yaml_node_t *node;
} key_ref;

static int by_text_then_index(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Duplicate keys silently shadow each other in libyaml; in a spec file they are a mistake. Each
 * mapping's keys are sorted (n log n: a mapping may hold FFN_MAX_KEYS of them) and the earliest
 * second occurrence is reported. */
static int check_duplicates(ffn_ydoc *y)
{
    size_t most = 0;
    for (yaml_node_t *n = y->doc.nodes.start; n < y->doc.nodes.top; n++)
        if (n->type == YAML_MAPPING_NODE) {
            size_t k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
            if (k > most) most = k;
        }
    if (most < 2) return 0;
    key_ref *keys = malloc(most * sizeof *keys);
    if (!keys) return ffn_y_error(y, NULL, FFN_ENOMEM, "out of memory checking duplicate keys");
    int rc = 0;
    for (yaml_node_t *n = y->doc.nodes.start; n < y->doc.nodes.top && !rc; n++) {
        if (n->type != YAML_MAPPING_NODE) continue;
        size_t cnt = 0;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
            const char *t = ffn_y_text(k);
            if (t)
                keys[cnt++] = (key_ref){
                    .text = t, .index = (size_t)(p - n->data.mapping.pairs.start), .node = k};
        }
        qsort(keys, cnt, sizeof *keys, by_text_then_index);
        const key_ref *dup = NULL;
        for (size_t i = 1; i < cnt; i++)
            if (!strcmp(keys[i - 1].text, keys[i].text) &&
                (i < 2 || strcmp(keys[i - 2].text, keys[i].text)) &&
                (!dup || keys[i].index < dup->index))
                dup = &keys[i];
        if (dup) rc = ffn_y_error(y, dup->node, FFN_ESCHEMA, "duplicate key '%s'", dup->text);
    }
    free(keys);
    return rc;
}

/* A libyaml failure as a diagnostic. The reader (bad UTF-8, control characters, NUL) reports a
 * byte offset, not a mark; the scanner and parser report a mark. */
static int parser_error(ffn_ydoc *y, const yaml_parser_t *p, const ffn_input *in)
{
    if (p->error == YAML_MEMORY_ERROR)
        return ffn_diag_set(y->diag, FFN_ENOMEM, y->path, 0, 0, "out of memory parsing the file");
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR) {
        ffn__input_pos(in, p->problem_offset, &line, &col);
        if (p->problem_value >= 0)
            return ffn_diag_set(y->diag, FFN_EPARSE, y->path, line, col,
                                "syntax error: %s (byte 0x%02X)",
                                p->problem ? p->problem : "cannot read the file",
                                (unsigned)p->problem_value & 0xFFu);
    }
    return ffn_diag_set(y->diag, FFN_EPARSE, y->path, line, col, "syntax error: %s%s%s",
                        p->problem ? p->problem : "invalid YAML", p->context ? " " : "",
                        p->context ? p->context : "");
}

static int event_error(ffn_ydoc *y, const yaml_event_t *e, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int event_error(ffn_ydoc *y, const yaml_event_t *e, int err, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffn_diag_set(y->diag, err, y->path, (int)e->start_mark.line + 1,
                        (int)e->start_mark.column + 1, "%s", msg);
}

/* The first pass, over events: syntax errors anywhere in the file, a second document, and the
 * limits of include/ffnroof/limits.h, checked as the events come so that a file far beyond one
 * costs no more than the events up to it (libyaml's scanner works in time quadratic in the
 * flow nesting, and the duplicate check in the number of keys). */
static int prescan(ffn_ydoc *y, const ffn_input *in)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return ffn_diag_set(y->diag, FFN_ENOMEM, y->path, 0, 0,
                            "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&p, (const unsigned char *)in->data, in->len);
    struct {
        bool map;
        size_t children;
    } stack[FFN_MAX_DEPTH];
    int depth = 0, docs = 0, rc = 0;
    size_t nodes = 0;
    for (bool done = false; !done && !rc;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            rc = parser_error(y, &p, in);
            break;
        }
        switch (e.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = event_error(y, &e, FFN_EPARSE,
                                 "a second YAML document ('---'): a file holds one document");
            break;
        case YAML_SCALAR_EVENT:
        case YAML_ALIAS_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++nodes > FFN_MAX_NODES) {
                rc = event_error(y, &e, FFN_ERANGE, "more than %d values in one file",
                                 FFN_MAX_NODES);
                break;
            }
            if (depth > 0 && stack[depth - 1].map && ++stack[depth - 1].children % 2 == 1 &&
                stack[depth - 1].children / 2 >= FFN_MAX_KEYS) {
                rc = event_error(y, &e, FFN_ERANGE, "more than %d keys in one mapping",
                                 FFN_MAX_KEYS);
                break;
            }
            if (e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT) {
                if (depth == FFN_MAX_DEPTH) {
                    rc = event_error(y, &e, FFN_ERANGE,
                                     "lists and mappings nested deeper than %d levels",
                                     FFN_MAX_DEPTH);
                    break;
                }
                stack[depth].map = e.type == YAML_MAPPING_START_EVENT;
                stack[depth].children = 0;
                depth++;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
    }
    if (!rc && docs == 0)
        rc = ffn_diag_set(y->diag, FFN_ESCHEMA, y->path, 1, 1, "the file is empty");
    yaml_parser_delete(&p);
    return rc;
}

/* Parse in (the whole text) into y, whose path and diag are set. */
static int load_input(ffn_ydoc *y, const ffn_input *in)
{
    int rc = prescan(y, in);
    if (rc) return rc;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return ffn_diag_set(y->diag, FFN_ENOMEM, y->path, 0, 0,
                            "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&parser, (const unsigned char *)in->data, in->len);
    if (!yaml_parser_load(&parser, &y->doc)) {
        rc = parser_error(y, &parser, in);
    } else {
        y->loaded = true;
        if (!yaml_document_get_root_node(&y->doc))
            rc = ffn_diag_set(y->diag, FFN_ESCHEMA, y->path, 1, 1, "the file is empty");
        else
            rc = check_duplicates(y);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int ffn_ydoc_load(ffn_ydoc *y, const char *path, ffn_diag *diag)
{
    memset(y, 0, sizeof *y);
    y->diag = diag;
    snprintf(y->path, sizeof y->path, "%s", path ? path : "");
    ffn_input in;
    int rc = ffn__input_read(path, &in, diag);
    if (rc) return rc;
    rc = load_input(y, &in);
    ffn__input_free(&in);
    return rc;
}

int ffn_ydoc_load_buffer(ffn_ydoc *y, const char *name, const char *data, size_t len,
                         ffn_diag *diag)
{
    memset(y, 0, sizeof *y);
    y->diag = diag;
    snprintf(y->path, sizeof y->path, "%s", name ? name : "");
    if (!data) return ffn_diag_set(diag, FFN_EINVAL, y->path, 0, 0, "no text given");
    if (len > FFN_MAX_INPUT_BYTES)
        return ffn_diag_set(diag, FFN_ERANGE, y->path, 0, 0,
                            "the text is larger than the limit of %u MiB",
                            FFN_MAX_INPUT_BYTES >> 20);
    /* borrowed: load_input only reads it */
    const ffn_input in = {.data = (char *)(uintptr_t)data, .len = len};
    return load_input(y, &in);
}

void ffn_ydoc_release(ffn_ydoc *y)
{
    if (y && y->loaded) yaml_document_delete(&y->doc);
    if (y) y->loaded = false;
}

yaml_node_t *ffn_ydoc_root(ffn_ydoc *y)
{
    return y->loaded ? yaml_document_get_root_node(&y->doc) : NULL;
}

const char *ffn_y_text(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

bool ffn_y_is_null(yaml_node_t *n)
{
    if (!n) return true;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *t = ffn_y_text(n);
    return !t[0] || !strcmp(t, "null") || !strcmp(t, "~") || !strcmp(t, "Null") ||
           !strcmp(t, "NULL");
}

yaml_node_t *ffn_y_get(ffn_ydoc *y, yaml_node_t *map, const char *key, yaml_node_t **key_node)
{
    if (key_node) *key_node = NULL;
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        const char *t = ffn_y_text(k);
        if (t && strcmp(t, key) == 0) {
            if (key_node) *key_node = k;
            yaml_node_t *v = yaml_document_get_node(&y->doc, p->value);
            return ffn_y_is_null(v) ? NULL : v;
        }
    }
    return NULL;
}

int ffn_y_expect_map(ffn_ydoc *y, yaml_node_t *n, const char *what)
{
    if (n && n->type == YAML_MAPPING_NODE) return 0;
    return ffn_y_error(y, n, FFN_ESCHEMA, "%s must be a mapping of keys to values", what);
}

int ffn_y_expect_seq(ffn_ydoc *y, yaml_node_t *n, const char *what)
{
    if (n && n->type == YAML_SEQUENCE_NODE) return 0;
    return ffn_y_error(y, n, FFN_ESCHEMA, "%s must be a list", what);
}

unsigned ffn_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 255;
    unsigned prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] +
                           (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof prev);
    }
    return prev[lb] > 255 ? 255 : prev[lb];
}

int ffn_y_check_keys(ffn_ydoc *y, yaml_node_t *map, const char *const *allowed)
{
    if (!map || map->type != YAML_MAPPING_NODE) return 0;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        const char *t = ffn_y_text(k);
        if (!t) return ffn_y_error(y, k, FFN_ESCHEMA, "keys must be plain names");
        bool ok = false;
        const char *best = NULL;
        unsigned best_d = 255;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, t) == 0) {
                ok = true;
                break;
            }
            unsigned d = ffn_edit_distance(t, *a);
            if (d < best_d) best_d = d, best = *a;
        }
        if (ok) continue;
        size_t len = strlen(t);
        if (best && best_d <= (len > 6 ? 3u : 2u))
            return ffn_y_error(y, k, FFN_ESCHEMA, "unknown key '%s' (did you mean '%s'?)", t, best);
        return ffn_y_error(y, k, FFN_ESCHEMA, "unknown key '%s'", t);
    }
    return 0;
}

static yaml_node_t *need(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, int *rc)
{
    yaml_node_t *v = ffn_y_get(y, map, key, NULL);
    *rc = 0;
    if (!v && required) *rc = ffn_y_error(y, map, FFN_ESCHEMA, "missing key '%s'", key);
    return v;
}

int ffn_y_node_u64(ffn_ydoc *y, yaml_node_t *n, const char *what, uint64_t lo, uint64_t hi,
                   uint64_t *out)
{
    const char *t = ffn_y_text(n);
    if (!t) return ffn_y_error(y, n, FFN_ESCHEMA, "'%s' must be an integer", what);
    const char *p = t;
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p)) {
        if (*p == '-' && isdigit((unsigned char)p[1]))
            return ffn_y_error(y, n, FFN_ERANGE, "'%s' must not be negative (got %s)", what, t);
        return ffn_y_error(y, n, FFN_ESCHEMA, "'%s' must be an integer (got '%s')", what, t);
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    /* JSON writers sometimes print integers as 4096.0 */
    if (*end == '.') {
        char *q = end + 1;
        while (*q == '0')
            q++;
        if (*q == '\0') end = q;
    }
    if (*end != '\0')
        return ffn_y_error(y, n, FFN_ESCHEMA, "'%s' must be an integer (got '%s')", what, t);
    if (errno == ERANGE || v > hi || v < lo)
        return ffn_y_error(y, n, FFN_ERANGE, "'%s' = %s is out of range [%llu, %llu]", what, t,
                           (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint64_t)v;
    return 0;
}

int ffn_y_node_num(ffn_ydoc *y, yaml_node_t *n, const char *what, ffn_unit unit, double lo,
                   double hi, double *out)
{
    const char *t = ffn_y_text(n);
    if (!t) return ffn_y_error(y, n, FFN_ESCHEMA, "'%s' must be a value, not a list or map", what);
    char why[256];
    double v;
    int rc = ffn_units_parse(t, unit, &v, why, sizeof why);
    if (rc) {
        if (!strcmp(t, ".nan") || !strcmp(t, ".NaN") || !strcmp(t, "NaN") || !strcmp(t, "nan"))
            return ffn_y_error(y, n, FFN_ERANGE, "'%s' must be a finite number (got %s)", what, t);
        return ffn_y_error(y, n, rc, "'%s': %s", what, why);
    }
    if (!(v >= lo && v <= hi)) {
        char a[48], b[48];
        ffn_units_format(lo, unit, a, sizeof a);
        ffn_units_format(hi, unit, b, sizeof b);
        return ffn_y_error(y, n, FFN_ERANGE, "'%s' = %s is out of range [%s, %s]", what, t, a, b);
    }
    *out = v;
    return 0;
}

int ffn_y_u64(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, uint64_t lo,
              uint64_t hi, uint64_t *out)
{
    int rc;
    yaml_node_t *v = need(y, map, key, required, &rc);
    if (!v) return rc;
    return ffn_y_node_u64(y, v, key, lo, hi, out);
}

int ffn_y_num(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, ffn_unit unit,
              double lo, double hi, double *out)
{
    int rc;
    yaml_node_t *v = need(y, map, key, required, &rc);
    if (!v) return rc;
    return ffn_y_node_num(y, v, key, unit, lo, hi, out);
}

int ffn_y_bool(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, bool *out)
{
    int rc;
    yaml_node_t *v = need(y, map, key, required, &rc);
    if (!v) return rc;
    const char *t = ffn_y_text(v);
    if (t && (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "yes"))) {
        *out = true;
        return 0;
    }
    if (t && (!strcmp(t, "false") || !strcmp(t, "False") || !strcmp(t, "no"))) {
        *out = false;
        return 0;
    }
    return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' must be true or false (got '%s')", key,
                       t ? t : "a list or map");
}

int ffn_y_str(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, char *buf, size_t n)
{
    int rc;
    yaml_node_t *v = need(y, map, key, required, &rc);
    if (!v) return rc;
    const char *t = ffn_y_text(v);
    if (!t) return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' must be text", key);
    if (strlen(t) >= n)
        return ffn_y_error(y, v, FFN_ERANGE, "'%s' is longer than %zu characters", key, n - 1);
    memcpy(buf, t, strlen(t) + 1);
    return 0;
}

int ffn_y_enum(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required,
               const char *const *names, int *out)
{
    int rc;
    yaml_node_t *v = need(y, map, key, required, &rc);
    if (!v) return rc;
    const char *t = ffn_y_text(v);
    if (t)
        for (int i = 0; names[i]; i++)
            if (ffn_edit_distance(t, names[i]) == 0 && strlen(t) == strlen(names[i])) {
                *out = i;
                return 0;
            }
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    return ffn_y_error(y, v, FFN_ESCHEMA, "'%s' must be one of %s (got '%s')", key, list,
                       t ? t : "a list or map");
}
