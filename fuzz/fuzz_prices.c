/* libFuzzer target: the price table (hw/prices.tsv, io/load/prices_load.c). */
#include "fuzz.h"

#include "ffnroof/prices.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = ffn_fuzz_file(data, size, ".tsv");
    static ffn_price_table t;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_prices_load(path, &t, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
