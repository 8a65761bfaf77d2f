/* libFuzzer target: Hugging Face config.json files (io/load/hf_load.c through ffn_model_load). */
#include "fuzz.h"

#include "ffnroof/model.h"
#include "ffnroof/model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_model m;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_model_load(ffn_fuzz_file(data, size, ".json"), &m, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
