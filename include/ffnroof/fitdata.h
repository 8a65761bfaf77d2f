/* Loading measured points for the efficiency fit (io/fit_csv.c; format in docs/formats.md). */
#ifndef FFNROOF_FITDATA_H
#define FFNROOF_FITDATA_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/error.h"
#include "ffnroof/fit.h"

int ffn_fit_csv_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts, size_t cap,
                     size_t *n, ffn_diag *diag);

/* The GPU calibration kit's format (io/fit_kit.c): 'kind,dtype,m,n,k,time_<unit>', one
 * kernel per line (gemm, silu_mul, copy, read, binary, unary), each with its own dtype. */
int ffn_fit_kit_load(const char *path, ffn_fit_point *pts, size_t cap, size_t *n, ffn_diag *diag);
/* Whether a header line is the kit's. */
bool ffn_fit_kit_header(const char *line);
/* Any fit file: the kit's format by its header, else ffn_fit_csv_load (wdt/adt apply to the
 * older formats only). */
int ffn_fit_data_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts,
                      size_t cap, size_t *n, ffn_diag *diag);

#endif
