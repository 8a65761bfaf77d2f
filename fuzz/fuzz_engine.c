/* libFuzzer target: serving-engine kernel profiles (hw/arch/engines.yaml, io/load/engine_load.c),
 * each input read for every engine. */
#include "fuzz.h"

#include "ffnroof/engine.h"
#include "ffnroof/engine_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = ffn_fuzz_file(data, size, ".yaml");
    for (int e = FFN_ENGINE_VLLM; e < FFN_ENGINE_COUNT; e++) {
        ffn_engine_profile p;
        ffn_diag d;
        ffn_diag_clear(&d);
        int rc = ffn_engine_load(path, (ffn_engine)e, &p, &d);
        ffn_fuzz_check(rc, &d);
    }
    return 0;
}
