/* `ffnroof fit` on an attention or communication op table (cli/fit_attn.c): fit the device's
 * attention kernels (hw->attn) or its scale-up collectives (hw->scaleup.coll), or --check them,
 * and print the error per kernel and KV dtype, or per collective and group size. */
#ifndef FFN_CLI_FIT_ATTN_H
#define FFN_CLI_FIT_ATTN_H

#include <stdbool.h>

#include "ffnroof/aic.h"
#include "ffnroof/hw.h"

typedef struct ffn_fit_attn_req {
    const char *data; /* the table's path, as given */
    bool check;       /* report the spec's errors without fitting */
    bool points;      /* list every row's error too */
} ffn_fit_attn_req;

/* Fit (or check) t's rows on hw, updating hw and printing the report on stdout; an exit code. */
int ffn_cli_fit_attn(const ffn_fit_attn_req *req, ffn_hw *hw, const ffn_aic_table *t);

#endif
