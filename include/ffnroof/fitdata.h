/* Loading measured points for the efficiency fit (io/load/fit_csv.c, io/load/fit_kit.c,
 * io/load/aic_load.c; formats in docs/formats.md). */
#ifndef FFNROOF_FITDATA_H
#define FFNROOF_FITDATA_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/aic.h"
#include "ffnroof/error.h"
#include "ffnroof/fit.h"

/* Points of one CSV or GPU-kit file (hand-made data, fitted whole; more is FFN_ERANGE at the
 * line past it). Op tables have no such cap (FFN_AIC_MAX_ROWS): they are fitted on a subsample. */
#define FFN_FIT_MAX_POINTS 4096

int ffn_fit_csv_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts, size_t cap,
                     size_t *n, ffn_diag *diag);

/* The GPU calibration kit's format (io/load/fit_kit.c): 'kind,dtype,m,n,k,time_<unit>', one
 * kernel per line (gemm, silu_mul, copy, read, binary, unary), each with its own dtype. */
int ffn_fit_kit_load(const char *path, ffn_fit_point *pts, size_t cap, size_t *n, ffn_diag *diag);
/* Whether a header line is the kit's. */
bool ffn_fit_kit_header(const char *line);
/* Any fit file into pts[cap]: an op table's GEMM rows (ffn_fit_data_is_table; more than cap
 * rows is FFN_ERANGE), the kit's format by its header, else ffn_fit_csv_load (wdt/adt apply to
 * the older formats only). */
int ffn_fit_data_load(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point *pts,
                      size_t cap, size_t *n, ffn_diag *diag);

/* Whether path is read as an op table (include/ffnroof/aic.h): ffn_aic_is_table, or any gzip
 * file (the other formats are plain text). */
bool ffn_fit_data_is_table(const char *path);

/* Any fit file into heap memory: *pts, *n of them (at most FFN_FIT_MAX_POINTS of a CSV or kit
 * file, any number of an op table's rows). When path is an op table and table is not NULL,
 * *table holds it (ffn_aic_load) and *pts is table->pts (GEMM rows; NULL and *n = 0 for a MoE
 * table); with table NULL a MoE table is FFN_EUNSUPPORTED. Any other file is read as
 * ffn_fit_data_load reads it (table, when given, left zeroed). On error *pts is NULL, *n 0 and
 * diag says why. Release both with ffn_fit_data_free. */
int ffn_fit_data_load_all(const char *path, ffn_dtype wdt, ffn_dtype adt, ffn_fit_point **pts,
                          size_t *n, ffn_aic_table *table, ffn_diag *diag);
/* Free what ffn_fit_data_load_all returned (pts and table may be NULL). */
void ffn_fit_data_free(ffn_fit_point *pts, ffn_aic_table *table);

#endif
