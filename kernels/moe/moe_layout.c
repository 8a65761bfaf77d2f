/* The MoE call's memory: the shape check, the packed layout (header, router, selection bias,
 * experts, shared FFN) and packing into it, and the workspace layout. Sizes are computed with
 * overflow checks: a product or sum that overflows poisons the total as SIZE_MAX, which every
 * caller refuses. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ffnroof/kernels_moe.h"
#include "moe_internal.h"

static size_t align_up(size_t n)
{
    return (n + MOE_ALIGN - 1) / MOE_ALIGN * MOE_ALIGN;
}

/* a*b, or SIZE_MAX when it overflows (SIZE_MAX then poisons every sum it enters). */
static size_t mul_sz(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a) {
        return SIZE_MAX;
    }
    return a * b;
}

static size_t add_sz(size_t a, size_t b)
{
    if (a > SIZE_MAX - b) {
        return SIZE_MAX;
    }
    return a + b;
}

/* add n bytes at the next aligned offset of *at; returns that offset. */
static size_t carve(size_t *at, size_t n)
{
    size_t off = align_up(*at);
    if (off < *at || *at == SIZE_MAX || n == SIZE_MAX) {
        *at = SIZE_MAX;
        return SIZE_MAX;
    }
    *at = add_sz(off, n);
    return off;
}

int ffn_moe_shape_check(const ffn_moe_shape *s)
{
    if (s == NULL || s->d == 0 || s->f == 0 || s->n_experts == 0 || s->top_k == 0 ||
        s->top_k > s->n_experts || (unsigned)s->act >= (unsigned)FFN_ACT_COUNT ||
        (s->score != FFN_MOE_SOFTMAX && s->score != FFN_MOE_SIGMOID) || !isfinite(s->route_scale)) {
        return FFN_EINVAL;
    }
    /* Indices of token copies are int32 and E is compared in int32 too. */
    if (s->n_experts > (size_t)INT32_MAX) {
        return FFN_EINVAL;
    }
    return 0;
}

/* A routed expert {d, f} or the shared FFN {d, f_shared}: dense float FFNs with the layer's
 * activation, bias and quantization group (the other fields zeroed, not left to the caller's
 * stack). */
static void dense_shape(const ffn_moe_shape *s, size_t f, ffn_kshape *e)
{
    *e = (ffn_kshape){0};
    e->d = s->d;
    e->f = f;
    e->act = s->act;
    e->bias = s->bias;
    e->group = s->group;
    e->zero_point = s->zero_point;
}

void ffn__moe_expert_shape(const ffn_moe_shape *s, ffn_kshape *e)
{
    dense_shape(s, s->f, e);
}

void ffn__moe_shared_shape(const ffn_moe_shape *s, ffn_kshape *e)
{
    dense_shape(s, s->f_shared, e);
}

static bool kernel_ok(const ffn_kernel *k)
{
    return k != NULL && k->packed_bytes != NULL && k->pack != NULL && k->workspace_bytes != NULL &&
           k->forward != NULL;
}

int ffn__moe_layout(const ffn_kernel *k, const ffn_moe_shape *s, moe_layout *l)
{
    if (!kernel_ok(k) || ffn_moe_shape_check(s) != 0) {
        return FFN_EINVAL;
    }
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);
    size_t at = sizeof(moe_header);
    l->router = carve(&at, mul_sz(mul_sz(s->d, ffn__moe_router_cols(s->n_experts)), sizeof(float)));
    l->select = carve(&at, mul_sz(s->n_experts, sizeof(float)));
    l->expert_bytes = k->packed_bytes(&ke);
    if (l->expert_bytes == 0) {
        return FFN_EINVAL;
    }
    l->stride = align_up(l->expert_bytes);
    l->expert = carve(&at, mul_sz(l->stride, s->n_experts));
    l->shared_bytes = 0;
    l->shared = 0;
    if (s->f_shared > 0) {
        l->shared_bytes = k->packed_bytes(&ks);
        if (l->shared_bytes == 0) {
            return FFN_EINVAL;
        }
        l->shared = carve(&at, l->shared_bytes);
    }
    if (at == SIZE_MAX || l->stride < l->expert_bytes) {
        return FFN_EOVERFLOW;
    }
    l->total = at;
    return 0;
}

size_t ffn_moe_packed_bytes(const ffn_kernel *k, const ffn_moe_shape *s)
{
    moe_layout l;
    return ffn__moe_layout(k, s, &l) == 0 ? l.total : 0;
}

void ffn__moe_fill_header(const ffn_kernel *k, const ffn_moe_shape *s, bool has_select,
                          moe_header *h)
{
    memset(h, 0, sizeof *h);
    h->magic = MOE_MAGIC;
    h->d = s->d;
    h->f = s->f;
    h->n_experts = s->n_experts;
    h->top_k = s->top_k;
    h->f_shared = s->f_shared;
    h->act = (uint32_t)s->act;
    h->bias = s->bias;
    h->score = (uint32_t)s->score;
    h->norm_topk = s->norm_topk;
    h->has_select = has_select;
    h->wdtype = (uint32_t)k->wdtype;
    h->isa = (uint32_t)k->isa;
    h->group = s->group;
    h->zero_point = s->zero_point;
    h->route_scale = s->route_scale;
}

int ffn_moe_pack(const ffn_kernel *k, const ffn_moe_shape *s, const ffn_moe_weights *w,
                 void *packed, size_t packed_bytes)
{
    moe_layout l;
    int rc = ffn__moe_layout(k, s, &l);
    if (rc != 0) {
        return rc;
    }
    if (w == NULL || w->w_router == NULL || w->experts == NULL || packed == NULL ||
        ((uintptr_t)packed % MOE_ALIGN) != 0 || ((s->f_shared > 0) != (w->shared != NULL))) {
        return FFN_EINVAL;
    }
    if (packed_bytes < l.total) {
        return FFN_ENOSPACE;
    }
    unsigned char *base = packed;
    moe_header h;
    ffn__moe_fill_header(k, s, w->b_select != NULL, &h);
    memcpy(base, &h, sizeof h);
    /* router [d][E] -> [d][Ep], the padding columns zero */
    const size_t Ep = ffn__moe_router_cols(s->n_experts);
    float *wr = (float *)(void *)(base + l.router);
    for (size_t i = 0; i < s->d; ++i) {
        memcpy(wr + i * Ep, w->w_router + i * s->n_experts, s->n_experts * sizeof(float));
        memset(wr + i * Ep + s->n_experts, 0, (Ep - s->n_experts) * sizeof(float));
    }
    if (w->b_select != NULL) {
        memcpy(base + l.select, w->b_select, s->n_experts * sizeof(float));
    } else {
        memset(base + l.select, 0, s->n_experts * sizeof(float));
    }
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);
    for (size_t e = 0; e < s->n_experts; ++e) {
        rc = k->pack(&ke, &w->experts[e], base + l.expert + e * l.stride, l.expert_bytes);
        if (rc != 0) {
            return rc;
        }
    }
    if (s->f_shared > 0) {
        rc = k->pack(&ks, w->shared, base + l.shared, l.shared_bytes);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int ffn__moe_ws_layout(const ffn_kernel *k, const ffn_moe_shape *s, size_t T, int threads,
                       moe_ws *w)
{
    if (!kernel_ok(k) || ffn_moe_shape_check(s) != 0) {
        return FFN_EINVAL;
    }
    size_t slots = mul_sz(T, s->top_k);
    if (slots > (size_t)INT32_MAX) {
        return FFN_EOVERFLOW;
    }
    size_t E = s->n_experts;
    size_t at = 0;
    w->logits = carve(&at, mul_sz(mul_sz(T, E), sizeof(float)));
    w->expert = carve(&at, mul_sz(slots, sizeof(int32_t)));
    w->weight = carve(&at, mul_sz(slots, sizeof(float)));
    w->offset = carve(&at, mul_sz(add_sz(E, 1), sizeof(size_t)));
    w->cursor = carve(&at, mul_sz(E, sizeof(size_t)));
    w->taken = carve(&at, E);
    w->perm = carve(&at, mul_sz(slots, sizeof(int32_t)));
    w->inv = carve(&at, mul_sz(slots, sizeof(int32_t)));
    w->xperm = carve(&at, mul_sz(mul_sz(slots, s->d), sizeof(float)));
    w->yperm = carve(&at, mul_sz(mul_sz(slots, s->d), sizeof(float)));
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);
    /* No expert receives more than T tokens (a token picks an expert at most once). */
    size_t kb = k->workspace_bytes(&ke, T, threads);
    if (s->f_shared > 0) {
        size_t kbs = k->workspace_bytes(&ks, T, threads);
        kb = kbs > kb ? kbs : kb;
    }
    w->kws_bytes = kb;
    w->kws = carve(&at, kb);
    w->total = add_sz(at, MOE_ALIGN - 1);
    return w->total == SIZE_MAX ? FFN_EOVERFLOW : 0;
}

size_t ffn_moe_workspace_bytes(const ffn_kernel *k, const ffn_moe_shape *s, size_t T, int threads)
{
    moe_ws w;
    return ffn__moe_ws_layout(k, s, T, threads, &w) == 0 ? w.total : 0;
}
