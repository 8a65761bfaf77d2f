/* libFuzzer target: model configs (models/NAME.yaml, io/load/model_load.c), then costed once by the
 * simulator so that a config the loader accepts cannot crash it either. */
#include "fuzz.h"

#include "ffnroof/model.h"
#include "ffnroof/model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_model m;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_model_load(ffn_fuzz_file(data, size, ".yaml"), &m, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
