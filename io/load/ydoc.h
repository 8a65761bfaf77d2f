/* Internal to io/: a loaded YAML (or JSON) document with typed, position-aware accessors.
 * Every accessor that rejects a value fills the diag with "file:line:col: message" pointing at
 * the offending key or value, so that each loader reports errors the same way. */
#ifndef FFN_IO_YDOC_H
#define FFN_IO_YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "ffnroof/error.h"
#include "ffnroof/units.h"

typedef struct ffn_ydoc {
    yaml_document_t doc;
    bool loaded;
    char path[512];
    ffn_diag *diag; /* where accessors report; may be NULL */
} ffn_ydoc;

/* Parse the whole file. Errors: FFN_EIO (cannot open), FFN_EPARSE (syntax, with position),
 * FFN_ESCHEMA (empty document, duplicate key). Release with ffn_ydoc_release() in any case. */
int ffn_ydoc_load(ffn_ydoc *y, const char *path, ffn_diag *diag);
/* The same over len bytes of text in memory (borrowed for the call; need not be
 * NUL-terminated), within FFN_MAX_INPUT_BYTES; name is the file diagnostics name (the
 * safetensors reader passes its JSON header this way). */
int ffn_ydoc_load_buffer(ffn_ydoc *y, const char *name, const char *data, size_t len,
                         ffn_diag *diag);
void ffn_ydoc_release(ffn_ydoc *y);

yaml_node_t *ffn_ydoc_root(ffn_ydoc *y);
/* Value node of key in a mapping, or NULL; *key_node (may be NULL) gets the key node. Values that
 * are YAML/JSON null count as absent. */
yaml_node_t *ffn_y_get(ffn_ydoc *y, yaml_node_t *map, const char *key, yaml_node_t **key_node);
/* Text of a scalar node, or NULL for other kinds. */
const char *ffn_y_text(yaml_node_t *n);
bool ffn_y_is_null(yaml_node_t *n);
/* Report at node n (1-based positions). Returns err. */
int ffn_y_error(ffn_ydoc *y, yaml_node_t *n, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The node must be a mapping / sequence (what names it in the message). */
int ffn_y_expect_map(ffn_ydoc *y, yaml_node_t *n, const char *what);
int ffn_y_expect_seq(ffn_ydoc *y, yaml_node_t *n, const char *what);

/* Unknown keys are an error naming the closest allowed key ("did you mean 'hidden'?").
 * allowed is NULL-terminated. */
int ffn_y_check_keys(ffn_ydoc *y, yaml_node_t *map, const char *const *allowed);

/* Typed getters. A missing optional key leaves *out untouched and returns 0; a missing
 * required key is FFN_ESCHEMA at the map. Ranges are inclusive. */
int ffn_y_u64(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, uint64_t lo,
              uint64_t hi, uint64_t *out);
int ffn_y_num(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, ffn_unit unit,
              double lo, double hi, double *out);
int ffn_y_bool(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, bool *out);
int ffn_y_str(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required, char *buf, size_t n);
/* One of names[0..] (NULL-terminated), case-insensitive; *out gets the index. */
int ffn_y_enum(ffn_ydoc *y, yaml_node_t *map, const char *key, bool required,
               const char *const *names, int *out);
/* Parse a scalar node directly (sequence items). */
int ffn_y_node_u64(ffn_ydoc *y, yaml_node_t *n, const char *what, uint64_t lo, uint64_t hi,
                   uint64_t *out);
int ffn_y_node_num(ffn_ydoc *y, yaml_node_t *n, const char *what, ffn_unit unit, double lo,
                   double hi, double *out);

/* Levenshtein distance (for suggestions), capped at 255. */
unsigned ffn_edit_distance(const char *a, const char *b);

#endif
