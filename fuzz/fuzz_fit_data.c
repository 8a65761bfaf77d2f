/* libFuzzer target: any file `ffnroof fit --data` reads (ffn_fit_data_load): the GPU
 * calibration kit's format (io/load/fit_kit.c) by its header, else the older CSVs
 * (io/load/fit_csv.c). */
#include "fuzz.h"

#include "ffnroof/fitdata.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_fit_point pts[512];
    size_t n = 0;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_fit_data_load(ffn_fuzz_file(data, size, ".csv"), FFN_DT_BF16, FFN_DT_BF16, pts,
                               512, &n, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        if (n == 0 || n > 512) abort();
        for (size_t i = 0; i < n; i++)
            if (!(pts[i].time_s > 0) || !isfinite(pts[i].time_s)) abort();
    } else if (n != 0) {
        abort();
    }
    return 0;
}
