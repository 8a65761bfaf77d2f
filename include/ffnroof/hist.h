/* Expert-popularity histograms for MoE routing (`ffnroof predict --histogram FILE`): a text
 * file of non-negative numbers, one weight per expert in expert order, separated by spaces,
 * commas or newlines; '#' starts a comment. */
#ifndef FFNROOF_HIST_H
#define FFNROOF_HIST_H

#include <stddef.h>

#include "ffnroof/error.h"

/* Read up to cap weights into out. Errors (file:line:col in diag): FFN_EIO, FFN_EPARSE (not a
 * number), FFN_ERANGE (negative, non-finite, more than cap values), FFN_ESCHEMA (empty, or all
 * zero). */
int ffn_hist_load(const char *path, double *out, size_t cap, size_t *n, ffn_diag *diag);

#endif
