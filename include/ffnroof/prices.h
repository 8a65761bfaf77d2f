/* The price table (io/load/prices_load.c; hw/prices.tsv, docs/formats-hw.md "Prices"): dated,
 * cited on-demand list prices per device-hour that `plan` prices fleets with where no --price
 * is given. */
#ifndef FFNROOF_PRICES_H
#define FFNROOF_PRICES_H

#include <stddef.h>

#include "ffnroof/error.h"

#define FFN_PRICES_MAX 256

typedef struct ffn_price {
    char device[64];     /* a hw spec's name */
    double usd_per_hour; /* per device, > 0 */
    char provider[48];
    char retrieved[11]; /* YYYY-MM-DD */
} ffn_price;

typedef struct ffn_price_table {
    ffn_price rows[FFN_PRICES_MAX];
    size_t n;
} ffn_price_table;

/* Read a price table: '#' comment lines, the header line `device<TAB>usd_per_hour<TAB>provider
 * <TAB>offer<TAB>retrieved[<TAB>...]`, then one row per device with those tab-separated fields
 * (more columns are kept out). Returns 0, or FFN_EIO / FFN_EPARSE / FFN_ESCHEMA with
 * file:line:col in diag: a missing header or field, a price that is not a positive number
 * under 10,000, a date that is not YYYY-MM-DD, a device listed twice, too many rows. */
int ffn_prices_load(const char *path, ffn_price_table *t, ffn_diag *diag);

/* The row of `device`, or NULL. */
const ffn_price *ffn_price_find(const ffn_price_table *t, const char *device);

#endif
