/* libFuzzer target: the op tables of aiconfigurator's layout (io/load/aic_load.c), plain or gzip,
 * and the recognition of one (ffn_aic_is_table). A table that loads keeps the reader's promises:
 * rows of one op, positive finite times, dimensions in [1, 2^40], kernel indices in range. */
#include "fuzz.h"

#include "ffnroof/aic.h"

#include <math.h>
#include <stdlib.h>

static void check_gemm(const ffn_aic_table *t)
{
    if (t->n_moe || !t->pts || !t->pt_kernel) abort();
    for (size_t i = 0; i < t->n_pts; i++) {
        const ffn_fit_point *p = &t->pts[i];
        if (!(p->time_s > 0) || !isfinite(p->time_s)) abort();
        if (!p->m || !p->n || !p->k || p->m > (1ull << 40) || p->n > (1ull << 40) ||
            p->k > (1ull << 40))
            abort();
        if (t->pt_kernel[i] >= t->n_kernels) abort();
    }
}

static void check_moe(const ffn_aic_table *t)
{
    if (t->n_pts || !t->moe) abort();
    for (size_t i = 0; i < t->n_moe; i++) {
        const ffn_aic_moe *m = &t->moe[i];
        if (!(m->time_s > 0) || !isfinite(m->time_s)) abort();
        if (!m->tokens || !m->hidden || !m->inter || !m->topk || m->topk > m->experts) abort();
        if (m->draw == FFN_DRAW_POWER_LAW && !(m->alpha > 0 && isfinite(m->alpha))) abort();
        if (m->kernel >= t->n_kernels) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = ffn_fuzz_file(data, size, ".tsv");
    (void)ffn_aic_is_table(path);
    ffn_aic_table t;
    ffn_diag d;
    ffn_diag_clear(&d);
    const int rc = ffn_aic_load(path, &t, &d);
    ffn_fuzz_check(rc, &d);
    if (rc == 0) {
        if (t.n_pts + t.n_moe == 0 || t.n_kernels > FFN_AIC_MAX_KERNELS) abort();
        if (t.op == FFN_AIC_GEMM)
            check_gemm(&t);
        else
            check_moe(&t);
    } else if (t.n_pts || t.n_moe || t.pts || t.moe) {
        abort();
    }
    ffn_aic_free(&t);
    return 0;
}
