/* libFuzzer target: calibration.json as the plots and reports read it (io/profile_load.c). */
#include "fuzz.h"

#include "ffnroof/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_plot_device dev;
    char date[64];
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc =
        ffn_plot_load_calibration(ffn_fuzz_file(data, size, ".json"), &dev, date, sizeof date, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
