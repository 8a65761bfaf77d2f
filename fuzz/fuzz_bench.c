/* libFuzzer target: bench.json as the plots and reports read it (io/load/profile_load.c). */
#include "fuzz.h"

#include "ffnroof/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ffn_plot_bench b;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_profile_load_bench(ffn_fuzz_file(data, size, ".json"), &b, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0)
        for (size_t i = 0; i < b.n_cases; i++)
            ffn_plot_case_label(&b.cases[i], b.host, 16);
    return 0;
}
