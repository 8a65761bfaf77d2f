/* libFuzzer target: hardware specs (hw/NAME.yaml, io/load/hw_load.c). */
#include "fuzz.h"

#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_hw hw;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_hw_load(ffn_fuzz_file(data, size, ".yaml"), &hw, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
