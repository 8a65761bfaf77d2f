/* libFuzzer target: the architecture families file (hw/arch/families.yaml), read by
 * io/load/hw_load.c for a spec that names its family: each input is the families file beside a
 * fixed spec. */
#include "fuzz.h"

#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char spec[] = "name: t\nvendor: v\nkind: gpu\nfamily: hopper\nsource: s\n"
                           "peak: {bf16: 989 TFLOPS, fp8: 1979 TFLOPS, nvfp4: 3958 TFLOPS}\n"
                           "compute_units: 1\nmemory: {capacity: 80 GB, bandwidth: 3 TB/s}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[256], arch[300], fam[320], path[300];
    if (!dir[0]) {
        const char *base = getenv("FFNROOF_FUZZ_DIR");
        snprintf(dir, sizeof dir, "%s/ffnroof-fuzz-fam-%ld", base && *base ? base : "/tmp",
                 (long)getpid());
        snprintf(arch, sizeof arch, "%s/arch", dir);
        snprintf(fam, sizeof fam, "%s/families.yaml", arch);
        snprintf(path, sizeof path, "%s/t.yaml", dir);
        if ((mkdir(dir, 0700) && access(dir, W_OK)) || (mkdir(arch, 0700) && access(arch, W_OK)))
            abort();
        FILE *f = fopen(path, "w");
        if (!f || fputs(spec, f) < 0 || fclose(f)) abort();
    }
    FILE *f = fopen(fam, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) abort();
    static ffn_hw hw;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_hw_load(path, &hw, &d);
    ffn_fuzz_check(rc, &d);
    return 0;
}
