/* Forgiving names (base/match.c): a device, model, scenario or command name as a person types
 * it, matched against the names there are - exactly, then ignoring case, then ignoring case
 * and the separators '-', '_', '.' and ' ' ("llama-3-70b" is llama3-70b, "DeepSeekV3" is
 * deepseek-v3), then as the one name it begins ("mi300" is mi300x; "h100" is ambiguous between
 * h100-pcie and h100-sxm) - and, when nothing matches, the names within a few edits of it
 * ("predcit": predict). Pure: no I/O. */
#ifndef FFNROOF_MATCH_H
#define FFNROOF_MATCH_H

#include <stddef.h>

typedef enum ffn_match_kind {
    FFN_MATCH_NONE = 0,
    FFN_MATCH_EXACT,
    FFN_MATCH_CASE,       /* equal ignoring case */
    FFN_MATCH_SEPARATORS, /* equal ignoring case and separators */
    FFN_MATCH_PREFIX      /* the one name it begins, ignoring case and separators */
} ffn_match_kind;

/* The name of known[0..n) that `name` stands for: 0 with *idx and *kind set; FFN_EINVAL when
 * it begins more than one (ambiguous: ffn_name_suggest lists them); FFN_ENOTFOUND. */
int ffn_name_match(const char *name, const char *const *known, size_t n, size_t *idx,
                   ffn_match_kind *kind);

/* Up to `max` indices into known[] of the names `name` most likely meant, nearest first: the
 * names it begins (ignoring case and separators), then those within max(1, length / 3) edits
 * (insertions, deletions, substitutions, swaps of neighbours) of it. Returns how many. */
size_t ffn_name_suggest(const char *name, const char *const *known, size_t n, size_t *out,
                        size_t max);

/* Up to `max` indices of the names `name` begins, ignoring case and separators (what an
 * ambiguous name could mean). Returns how many. */
size_t ffn_name_begun(const char *name, const char *const *known, size_t n, size_t *out,
                      size_t max);

/* The edit distance of a and b ignoring case and separators (Damerau-Levenshtein, optimal
 * string alignment); strings longer than 63 characters are cut there. */
size_t ffn_name_distance(const char *a, const char *b);

#endif
