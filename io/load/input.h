/* Internal to io/: one input file read whole into memory, within the limits of
 * include/ffnroof/limits.h, so that every loader refuses a directory, a device that never ends
 * or an oversized file the same way before parsing, and reports positions from byte offsets. */
#ifndef FFN_IO_INPUT_H
#define FFN_IO_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/error.h"

typedef struct ffn_input {
    char *data; /* len bytes and a terminating '\0' (owned; ffn__input_free) */
    size_t len;
} ffn_input;

/* Read path whole. Errors with diag: FFN_EIO (cannot open or read, "is a directory"),
 * FFN_ERANGE (more than FFN_MAX_INPUT_BYTES), FFN_ENOMEM. On error *in is empty. */
int ffn__input_read(const char *path, ffn_input *in, ffn_diag *diag);
void ffn__input_free(ffn_input *in);

/* 1-based line and column (in characters: UTF-8 continuation bytes do not count) of the byte
 * at offset. A line ends at '\n', at "\r\n" or at a lone '\r'. */
void ffn__input_pos(const ffn_input *in, size_t offset, int *line, int *col);

/* Text files (CSV, histograms): refuse a NUL byte (FFN_EPARSE at its position) and skip a UTF-8
 * byte-order mark; *start gets the offset of the first byte after it. */
int ffn__input_text(const ffn_input *in, const char *path, size_t *start, ffn_diag *diag);

/* The next line at *off, NUL-terminated in place (its "\n" or "\r\n" replaced), in *line;
 * *off moves past it. Returns false when there is no line left. */
bool ffn__input_line(ffn_input *in, size_t *off, char **line);

/* Split a CSV line in place at every comma: the first cap fields in f[], their count (all of
 * them, also beyond cap) in *nf. An empty field is an error, not a column that vanishes:
 * FFN_ESCHEMA with diag at path:lineno and the field's column. */
int ffn__input_fields(char *line, char **f, int cap, int *nf, const char *path, int lineno,
                      ffn_diag *diag);

#endif
