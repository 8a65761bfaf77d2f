/* libFuzzer target: expert-popularity histograms (io/load/hist_load.c). */
#include "fuzz.h"

#include "ffnroof/hist.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static double w[4096];
    size_t n = 0;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_hist_load(ffn_fuzz_file(data, size, ".txt"), w, 4096, &n, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        /* what it accepts is what the header promises */
        if (n == 0 || n > 4096) abort();
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(w[i]) || w[i] < 0) abort();
            sum += w[i];
        }
        if (!(sum > 0) || !isfinite(sum)) abort();
    } else if (n != 0) {
        abort();
    }
    return 0;
}
