/* Loading measured points for the efficiency fit (io/fit_csv.c; format in docs/formats.md). */
#ifndef FFNROOF_FITDATA_H
#define FFNROOF_FITDATA_H

#include <stddef.h>

#include "ffnroof/error.h"
#include "ffnroof/fit.h"

int ffn_fit_csv_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts,
                     size_t cap, size_t *n, ffn_diag *diag);

#endif
