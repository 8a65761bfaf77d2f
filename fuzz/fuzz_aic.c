/* libFuzzer target: the op tables of aiconfigurator's layout (io/load/aic_load.c), plain or gzip,
 * and the recognition of one (ffn_aic_is_table). A table that loads keeps the reader's promises:
 * rows of one op, positive finite times, dimensions in [1, 2^40], no more KV heads than heads,
 * known collectives over at least one GPU and positive bytes, kernel indices in range. */
#include "fuzz.h"

#include "ffnroof/aic.h"

#include <math.h>
#include <stdlib.h>

static void check_gemm(const ffn_aic_table *t)
{
    if (t->n_moe || t->n_attn || t->n_comm || !t->pts || !t->pt_kernel) abort();
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
    if (t->n_pts || t->n_attn || t->n_comm || !t->moe) abort();
    for (size_t i = 0; i < t->n_moe; i++) {
        const ffn_aic_moe *m = &t->moe[i];
        if (!(m->time_s > 0) || !isfinite(m->time_s)) abort();
        if (!m->tokens || !m->hidden || !m->inter || !m->topk || m->topk > m->experts) abort();
        if (m->draw == FFN_DRAW_POWER_LAW && !(m->alpha > 0 && isfinite(m->alpha))) abort();
        if (m->kernel >= t->n_kernels) abort();
    }
}

static void check_attn(const ffn_aic_table *t)
{
    if (t->n_pts || t->n_moe || t->n_comm || !t->attn) abort();
    for (size_t i = 0; i < t->n_attn; i++) {
        const ffn_aic_attn *a = &t->attn[i];
        if (!(a->time_s > 0) || !isfinite(a->time_s)) abort();
        if (!a->batch || !a->len || !a->heads || !a->kv_heads || !a->head_dim) abort();
        if (a->kv_heads > a->heads || a->len > (1ull << 40) || a->window > (1ull << 40)) abort();
        if (a->kernel >= t->n_kernels) abort();
    }
}

static void check_comm(const ffn_aic_table *t)
{
    if (t->n_pts || t->n_moe || t->n_attn || !t->comm) abort();
    for (size_t i = 0; i < t->n_comm; i++) {
        const ffn_aic_comm *c = &t->comm[i];
        if (!(c->time_s > 0) || !isfinite(c->time_s)) abort();
        if (c->op >= FFN_COLL_COUNT || !c->gpus || !(c->bytes > 0) || !isfinite(c->bytes)) abort();
        if ((t->op == FFN_AIC_CUSTOM_AR) != (c->op == FFN_COLL_CUSTOM_ALL_REDUCE)) abort();
        if (c->kernel >= t->n_kernels) abort();
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
        if (ffn_aic_rows(&t) == 0 || t.n_kernels > FFN_AIC_MAX_KERNELS) abort();
        if (t.op == FFN_AIC_GEMM)
            check_gemm(&t);
        else if (t.op == FFN_AIC_MOE)
            check_moe(&t);
        else if (t.op == FFN_AIC_PREFILL_ATTN || t.op == FFN_AIC_DECODE_ATTN)
            check_attn(&t);
        else
            check_comm(&t);
    } else if (ffn_aic_rows(&t) || t.pts || t.moe || t.attn || t.comm) {
        abort();
    }
    ffn_aic_free(&t);
    return 0;
}
