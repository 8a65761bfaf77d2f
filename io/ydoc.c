/* A loaded YAML/JSON document with position-aware typed accessors (io/ydoc.h). libyaml reads
 * JSON too, which is how Hugging Face config.json files come in. */
#include "ydoc.h"

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

/* Duplicate keys silently shadow each other in libyaml; in a spec file they are a mistake. */
static int check_duplicates(ffn_ydoc *y)
{
    for (yaml_node_t *n = y->doc.nodes.start; n < y->doc.nodes.top; n++) {
        if (n->type != YAML_MAPPING_NODE) continue;
        for (yaml_node_pair_t *a = n->data.mapping.pairs.start; a < n->data.mapping.pairs.top;
             a++) {
            const char *ka = ffn_y_text(yaml_document_get_node(&y->doc, a->key));
            if (!ka) continue;
            for (yaml_node_pair_t *b = a + 1; b < n->data.mapping.pairs.top; b++) {
                yaml_node_t *kbn = yaml_document_get_node(&y->doc, b->key);
                const char *kb = ffn_y_text(kbn);
                if (kb && strcmp(ka, kb) == 0)
                    return ffn_y_error(y, kbn, FFN_ESCHEMA, "duplicate key '%s'", kb);
            }
        }
    }
    return 0;
}

int ffn_ydoc_load(ffn_ydoc *y, const char *path, ffn_diag *diag)
{
    memset(y, 0, sizeof *y);
    y->diag = diag;
    snprintf(y->path, sizeof y->path, "%s", path ? path : "");
    if (!path) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no file given");
    FILE *fp = fopen(path, "rb");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fclose(fp);
        return ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "cannot initialise the YAML parser");
    }
    yaml_parser_set_input_file(&parser, fp);
    int rc = 0;
    if (!yaml_parser_load(&parser, &y->doc)) {
        rc = ffn_diag_set(diag, FFN_EPARSE, path, (int)parser.problem_mark.line + 1,
                          (int)parser.problem_mark.column + 1, "syntax error: %s%s%s",
                          parser.problem ? parser.problem : "invalid YAML",
                          parser.context ? " " : "", parser.context ? parser.context : "");
    } else {
        y->loaded = true;
        if (!yaml_document_get_root_node(&y->doc))
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, 1, 1, "the file is empty");
        else
            rc = check_duplicates(y);
    }
    yaml_parser_delete(&parser);
    fclose(fp);
    return rc;
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
    for (size_t j = 0; j <= lb; j++) prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                          tolower((unsigned char)b[j - 1]));
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
            return ffn_y_error(y, k, FFN_ESCHEMA, "unknown key '%s' (did you mean '%s'?)", t,
                               best);
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
    while (*p == ' ') p++;
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
        while (*q == '0') q++;
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
