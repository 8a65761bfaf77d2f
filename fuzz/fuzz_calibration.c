/* libFuzzer target: calibration.json as the plots and reports read it (io/load/profile_load.c),
 * then drawn as a roofline (report/plot_profile.c). */
#include "fuzz.h"

#include "ffnroof/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_calib_file cal;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_profile_load_calibration(ffn_fuzz_file(data, size, ".json"), &cal, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        static ffn_plot_device dev;
        ffn_plot_device_from_calibration(&cal, &dev);
    }
    return 0;
}
