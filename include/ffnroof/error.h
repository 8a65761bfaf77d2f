/* Error codes and diagnostics shared by every ffnroof library.
 *
 * Functions return 0 on success or a negative FFN_E* code. Loaders and other functions that can
 * point at the culprit also fill a caller-supplied ffn_diag with "file:line:col: message"; the
 * libraries never print and never exit (only cli/ does). */
#ifndef FFNROOF_ERROR_H
#define FFNROOF_ERROR_H

#include <stddef.h>

#define FFN_ERRNO_MAP(X)                                                                           \
    X(INVAL, -1, "invalid argument")                                                               \
    X(NOMEM, -2, "out of memory")                                                                  \
    X(IO, -3, "input/output error")                                                                \
    X(PARSE, -4, "syntax error")                                                                   \
    X(SCHEMA, -5, "invalid input")                                                                 \
    X(RANGE, -6, "value out of range")                                                             \
    X(OVERFLOW, -7, "count overflows")                                                             \
    X(UNSUPPORTED, -8, "not supported")                                                            \
    X(NOTFOUND, -9, "not found")                                                                   \
    X(NOSPACE, -10, "buffer or workspace too small")                                               \
    X(INTERRUPTED, -11, "interrupted")                                                             \
    X(INFEASIBLE, -12, "no feasible answer")

enum {
#define FFN_ERR_ENUM(name, code, text) FFN_E##name = (code),
    FFN_ERRNO_MAP(FFN_ERR_ENUM)
#undef FFN_ERR_ENUM
};

/* Static text for an error code ("invalid argument"); never NULL. */
const char *ffn_strerror(int err);
/* Symbolic name of an error code ("FFN_EINVAL"); never NULL. */
const char *ffn_err_name(int err);

/* Where and why an input was rejected. line and col are 1-based; 0 when they do not apply. */
typedef struct ffn_diag {
    char file[512];
    int line;
    int col;
    char msg[512];
} ffn_diag;

/* Reset to "no diagnostic". d may be NULL (then every ffn_diag_* call is a no-op). */
void ffn_diag_clear(ffn_diag *d);
/* Record a diagnostic; file may be NULL. Always returns err, so that callers can write
 * `return ffn_diag_set(d, FFN_ESCHEMA, path, l, c, "...")`. */
int ffn_diag_set(ffn_diag *d, int err, const char *file, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* Format as "file:line:col: message" (parts that are unknown are left out) into buf.
 * Returns the length that the full text needs, like snprintf. */
int ffn_diag_format(const ffn_diag *d, char *buf, size_t n);

#endif
