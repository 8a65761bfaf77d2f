/* libFuzzer target: scenarios (scenarios/NAME.yaml, io/load/scenario_load.c), with the sweep
 * defaults filled in as `ffnroof sweep` does. */
#include "fuzz.h"

#include "ffnroof/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ffn_scenario sc;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_scenario_load(ffn_fuzz_file(data, size, ".yaml"), &sc, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        (void)ffn_scenario_sweep_defaults(&sc);
        ffn_scenario_release(&sc);
    }
    return 0;
}
