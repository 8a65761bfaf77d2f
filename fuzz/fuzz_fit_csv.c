/* libFuzzer target: measurement CSV files of `ffnroof fit` (io/load/fit_csv.c). */
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
    int rc = ffn_fit_csv_load(ffn_fuzz_file(data, size, ".csv"), FFN_DT_FP16, FFN_DT_FP16, pts, 512,
                              &n, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        if (n == 0 || n > 512) abort();
        for (size_t i = 0; i < n; i++)
            if (pts[i].m == 0 || pts[i].k == 0 || !(pts[i].time_s > 0) || !isfinite(pts[i].time_s))
                abort();
    } else if (n != 0) {
        abort();
    }
    return 0;
}
