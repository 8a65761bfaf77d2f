/* libFuzzer target: safetensors checkpoints (io/load/safetensors.c through ffn_st_open, then every
 * small readable tensor and layer 0 read, as `ffnroof quant --checkpoint` reads them). What the
 * reader accepts must keep its promises: ranges inside the data section, byte counts equal to
 * elements times dtype size. */
#include "fuzz.h"

#include <stdlib.h>

#include "ffnroof/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ffn_st_file st;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc = ffn_st_open(&st, ffn_fuzz_file(data, size, ".safetensors"), &d);
    ffn_fuzz_check(rc, &d);
    if (rc) return 0;
    for (size_t i = 0; i < st.n_tensors; i++) {
        const ffn_st_tensor *t = &st.tensors[i];
        const unsigned bits = ffn_st_dtype_bits(t->dtype);
        if (t->end < t->begin || t->end > st.data_bytes || bits == 0 ||
            t->end - t->begin != t->elements * bits / 8)
            abort(); /* accepted a tensor outside its promises */
        if (t->elements > (1u << 20)) continue;
        float *buf = malloc((size_t)t->elements * sizeof *buf + 1);
        if (!buf) abort();
        ffn_diag_clear(&d);
        rc = ffn_st_read_f32(&st, t, buf, (size_t)t->elements, &d);
        ffn_fuzz_check(rc, &d);
        free(buf);
    }
    ffn_st_ffn ffn;
    ffn_diag_clear(&d);
    rc = ffn_st_read_ffn(&st, 0, &ffn, &d);
    ffn_fuzz_check(rc, &d);
    if (!rc && (ffn.d == 0 || ffn.f == 0 || !ffn.w_gate || !ffn.w_up || !ffn.w_down)) abort();
    ffn_st_ffn_free(&ffn);
    ffn_st_close(&st);
    return 0;
}
