/* MoE layer forward, fast path: router GEMM, scoring, top-k, counting-sort permutation, grouped
 * expert FFNs through a dense ffn_kernel, weighted combine, shared experts (see kernels_moe.h
 * for the routing rules and kernels.h for the dense kernel contract). The routing phases are
 * portable C compiled without ISA flags; they are O(T*d*E + T*k*d) against the experts'
 * O(T*k*d*f), so the expert kernels dominate and carry the ISA-specific speed. Also the packed
 * layout, the workspace layout and the work counts of the MoE call. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "ffnroof/kernels_moe.h"
#include "moe_internal.h"

#define MOE_ALIGN ((size_t)64)
#define MOE_MAGIC UINT64_C(0x4646524f4f464d45) /* "EMFOORFF" */

/* Start of the packed weights: enough of the shape to refuse packed weights of another shape. */
typedef struct moe_header {
    uint64_t magic;
    uint64_t d, f, n_experts, top_k, f_shared;
    uint32_t act, bias, score, norm_topk, has_select, wdtype, isa, group, zero_point;
    float route_scale;
} moe_header;

typedef struct moe_layout {
    size_t router, select; /* offsets of the fp32 router [d][Ep] (Ep = E rounded up to 16) and
                              the selection bias [E] */
    size_t expert, stride; /* expert e's packed weights at expert + e*stride */
    size_t expert_bytes;   /* k->packed_bytes of one expert */
    size_t shared, shared_bytes;
    size_t total;
} moe_layout;

/* Columns of the packed router: E rounded up to the router block (RB, below). */
static size_t router_cols(size_t E)
{
    return (E + 15u) / 16u * 16u;
}

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

/* Experts are dense float FFNs: no quantization group (the fields are zeroed, not left to the
 * caller's stack). */
void ffn__moe_expert_shape(const ffn_moe_shape *s, ffn_kshape *e)
{
    *e = (ffn_kshape){0};
    e->d = s->d;
    e->f = s->f;
    e->act = s->act;
    e->bias = s->bias;
    e->group = s->group;
    e->zero_point = s->zero_point;
}

void ffn__moe_shared_shape(const ffn_moe_shape *s, ffn_kshape *e)
{
    *e = (ffn_kshape){0};
    e->d = s->d;
    e->f = s->f_shared;
    e->act = s->act;
    e->bias = s->bias;
    e->group = s->group;
    e->zero_point = s->zero_point;
}

static bool kernel_ok(const ffn_kernel *k)
{
    return k != NULL && k->packed_bytes != NULL && k->pack != NULL && k->workspace_bytes != NULL &&
           k->forward != NULL;
}

static int layout(const ffn_kernel *k, const ffn_moe_shape *s, moe_layout *l)
{
    if (!kernel_ok(k) || ffn_moe_shape_check(s) != 0) {
        return FFN_EINVAL;
    }
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);
    size_t at = sizeof(moe_header);
    l->router = carve(&at, mul_sz(mul_sz(s->d, router_cols(s->n_experts)), sizeof(float)));
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
    return layout(k, s, &l) == 0 ? l.total : 0;
}

static void fill_header(const ffn_kernel *k, const ffn_moe_shape *s, bool has_select, moe_header *h)
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
    int rc = layout(k, s, &l);
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
    fill_header(k, s, w->b_select != NULL, &h);
    memcpy(base, &h, sizeof h);
    /* router [d][E] -> [d][Ep], the padding columns zero */
    const size_t Ep = router_cols(s->n_experts);
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

/* Workspace regions, as offsets from the 64-byte aligned start of the caller's buffer. */
typedef struct moe_ws {
    size_t logits; /* float [T][E] */
    size_t expert; /* int32 [T*k] */
    size_t weight; /* float [T*k] */
    size_t offset; /* size_t [E+1] */
    size_t cursor; /* size_t [E] */
    size_t taken;  /* unsigned char [E] */
    size_t perm;   /* int32 [T*k] */
    size_t inv;    /* int32 [T*k] */
    size_t xperm;  /* float [T*k][d] */
    size_t yperm;  /* float [T*k][d] */
    size_t kws;    /* the dense kernel's workspace */
    size_t kws_bytes;
    size_t total; /* including the alignment slack */
} moe_ws;

static int ws_layout(const ffn_kernel *k, const ffn_moe_shape *s, size_t T, int threads, moe_ws *w)
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
    return ws_layout(k, s, T, threads, &w) == 0 ? w.total : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Is selection key a better than b? Larger wins; NaN ranks below every number, so a NaN
 * logit cannot displace a real one (and an all-NaN row still yields k distinct experts). */
static inline bool key_better(float a, float b)
{
    return a > b || (isnan(b) && !isnan(a));
}

static inline float sigmoidf_(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

/* Experts per router block: the packed router is [d][E rounded up to RB] (zero padding), so
 * the inner loop below has a fixed width of RB floats that the compiler keeps in registers. */
#define RB ((size_t)16)

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
/* No ISA flags on this file: an AVX-512 / AVX2 clone is picked at load time (ifunc). */
#define ROUTER_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ROUTER_CLONES
#endif

/* Router GEMM: logits[t][e] = sum_i x[t][i] * W[i][e] in fp32, i ascending for every (t, e), so
 * experts with identical router columns get bitwise identical logits (exact ties stay ties). */
ROUTER_CLONES
static void router_gemm(const float *restrict x, const float *restrict wr, size_t T, size_t d,
                        size_t E, float *restrict logits)
{
    const size_t Ep = router_cols(E);
    for (size_t t = 0; t < T; ++t) {
        const float *xt = x + t * d;
        for (size_t e0 = 0; e0 < Ep; e0 += RB) {
            float acc[RB];
            for (size_t e = 0; e < RB; ++e) {
                acc[e] = 0.0f;
            }
            for (size_t i = 0; i < d; ++i) {
                const float xv = xt[i];
                const float *wi = wr + i * Ep + e0;
                for (size_t e = 0; e < RB; ++e) {
                    acc[e] += xv * wi[e];
                }
            }
            for (size_t e = 0; e < RB && e0 + e < E; ++e) {
                logits[t * E + e0 + e] = acc[e];
            }
        }
    }
}

/* Scoring and top-k of one token: fills exp[k] (expert ids) and wt[k] (combine weights). */
static void route_token(const ffn_moe_shape *s, const float *row, const float *bsel,
                        bool has_select, unsigned char *taken, int32_t *ex, float *wt)
{
    const size_t E = s->n_experts, K = s->top_k;
    const bool sig = s->score == FFN_MOE_SIGMOID;
    for (size_t j = 0; j < K; ++j) {
        size_t best = SIZE_MAX;
        float bkey = 0.0f;
        for (size_t e = 0; e < E; ++e) {
            if (taken[e]) {
                continue;
            }
            float key = (sig && has_select) ? sigmoidf_(row[e]) + bsel[e] : row[e];
            if (best == SIZE_MAX || key_better(key, bkey)) {
                best = e;
                bkey = key;
            }
        }
        taken[best] = 1;
        ex[j] = (int32_t)best;
    }
    for (size_t j = 0; j < K; ++j) {
        taken[ex[j]] = 0;
    }
    float sum = 0.0f;
    if (sig) {
        for (size_t j = 0; j < K; ++j) {
            wt[j] = sigmoidf_(row[ex[j]]);
            sum += wt[j];
        }
    } else {
        float m = row[0];
        for (size_t e = 1; e < E; ++e) {
            m = row[e] > m ? row[e] : m;
        }
        float all = 0.0f;
        for (size_t e = 0; e < E; ++e) {
            all += expf(row[e] - m);
        }
        for (size_t j = 0; j < K; ++j) {
            wt[j] = expf(row[ex[j]] - m);
            sum += wt[j];
        }
        if (!s->norm_topk) {
            sum = all;
        }
    }
    const float scale = s->route_scale == 0.0f ? 1.0f : s->route_scale;
    const float div = (sig && !s->norm_topk) ? 1.0f : sum;
    for (size_t j = 0; j < K; ++j) {
        wt[j] = wt[j] / div * scale;
    }
}

void ffn__moe_permute(size_t T, size_t K, size_t E, const int32_t *expert, size_t *offset,
                      size_t *cursor, int32_t *perm, int32_t *inv)
{
    for (size_t e = 0; e <= E; ++e) {
        offset[e] = 0;
    }
    for (size_t sl = 0; sl < T * K; ++sl) {
        offset[(size_t)expert[sl] + 1]++;
    }
    for (size_t e = 0; e < E; ++e) {
        offset[e + 1] += offset[e];
        cursor[e] = offset[e];
    }
    /* Slots in increasing order: a stable sort, so each expert's rows keep token order. */
    for (size_t sl = 0; sl < T * K; ++sl) {
        size_t p = cursor[expert[sl]]++;
        perm[p] = (int32_t)sl;
        if (inv != NULL) {
            inv[sl] = (int32_t)p;
        }
    }
}

int ffn_moe_forward(const ffn_kernel *k, const ffn_moe_shape *s, const void *packed, size_t T,
                    const float *x, float *y, void *ws, size_t ws_bytes, int threads,
                    ffn_kmoe_stats *stats)
{
    moe_layout l;
    int rc = layout(k, s, &l);
    if (rc != 0) {
        return rc;
    }
    if (packed == NULL || ((uintptr_t)packed % MOE_ALIGN) != 0 ||
        (T > 0 && (x == NULL || y == NULL)) || ws == NULL) {
        return FFN_EINVAL;
    }
    const unsigned char *pb = packed;
    moe_header h, want;
    memcpy(&h, pb, sizeof h);
    fill_header(k, s, h.has_select != 0, &want);
    if (memcmp(&h, &want, sizeof h) != 0) {
        return FFN_EINVAL; /* packed for another shape or kernel, or not packed at all */
    }
    moe_ws w;
    rc = ws_layout(k, s, T, threads, &w);
    if (rc != 0) {
        return rc;
    }
    if (ws_bytes < w.total) {
        return FFN_ENOSPACE;
    }
    unsigned char *wb = (unsigned char *)ws;
    wb += (MOE_ALIGN - (uintptr_t)wb % MOE_ALIGN) % MOE_ALIGN;
    const size_t E = s->n_experts, K = s->top_k, d = s->d;
    float *logits = (float *)(void *)(wb + w.logits);
    int32_t *expert = (int32_t *)(void *)(wb + w.expert);
    float *weight = (float *)(void *)(wb + w.weight);
    size_t *offset = (size_t *)(void *)(wb + w.offset);
    size_t *cursor = (size_t *)(void *)(wb + w.cursor);
    unsigned char *taken = wb + w.taken;
    int32_t *perm = (int32_t *)(void *)(wb + w.perm);
    int32_t *inv = (int32_t *)(void *)(wb + w.inv);
    float *xperm = (float *)(void *)(wb + w.xperm);
    float *yperm = (float *)(void *)(wb + w.yperm);
    void *kws = wb + w.kws;
    const float *wr = (const float *)(const void *)(pb + l.router);
    const float *bsel = (const float *)(const void *)(pb + l.select);
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);

    const bool timed = stats != NULL;
    double t0 = timed ? now_s() : 0.0;
    double t1 = t0;
    ffn_moe_timing tm = {0};

    /* 1. route */
    router_gemm(x, wr, T, d, E, logits);
    memset(taken, 0, E);
    for (size_t t = 0; t < T; ++t) {
        route_token(s, logits + t * E, bsel, h.has_select != 0, taken, expert + t * K,
                    weight + t * K);
    }
    if (timed) {
        double t2 = now_s();
        tm.route_s = t2 - t1;
        t1 = t2;
    }
    /* 2. permute: counting sort by expert, then gather the token copies. */
    ffn__moe_permute(T, K, E, expert, offset, cursor, perm, inv);
    for (size_t p = 0; p < T * K; ++p) {
        memcpy(xperm + p * d, x + (size_t)perm[p] / K * d, d * sizeof(float));
    }
    if (timed) {
        double t2 = now_s();
        tm.permute_s = t2 - t1;
        t1 = t2;
    }
    /* 3. experts, each on its contiguous block */
    for (size_t e = 0; e < E; ++e) {
        size_t n = offset[e + 1] - offset[e];
        if (n == 0) {
            continue;
        }
        rc = k->forward(&ke, pb + l.expert + e * l.stride, n, xperm + offset[e] * d,
                        yperm + offset[e] * d, kws, w.kws_bytes, threads);
        if (rc != 0) {
            return rc;
        }
    }
    if (timed) {
        double t2 = now_s();
        tm.experts_s = t2 - t1;
        t1 = t2;
    }
    /* 4. shared experts write y; without them y starts at zero */
    if (s->f_shared > 0 && T > 0) {
        rc = k->forward(&ks, pb + l.shared, T, x, y, kws, w.kws_bytes, threads);
        if (rc != 0) {
            return rc;
        }
    } else if (T > 0) {
        memset(y, 0, T * d * sizeof(float));
    }
    if (timed) {
        double t2 = now_s();
        tm.shared_s = t2 - t1;
        t1 = t2;
    }
    /* 5. combine: y[t] += sum_j weight[t][j] * yperm[inv[t*k+j]], j ascending */
    for (size_t t = 0; t < T; ++t) {
        float *yt = y + t * d;
        for (size_t j = 0; j < K; ++j) {
            const float wj = weight[t * K + j];
            const float *src = yperm + (size_t)inv[t * K + j] * d;
            for (size_t c = 0; c < d; ++c) {
                yt[c] += wj * src[c];
            }
        }
    }
    if (timed) {
        double t2 = now_s();
        tm.combine_s = t2 - t1;
        tm.total_s = t2 - t0;
        stats->timing = tm;
        stats->routing.expert = expert;
        stats->routing.weight = weight;
        stats->routing.offset = offset;
        stats->routing.perm = perm;
    }
    return 0;
}

int ffn_moe_count(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                  const size_t *expert_tokens, ffn_moe_work *out)
{
    if (k == NULL || out == NULL || expert_tokens == NULL || ffn_moe_shape_check(s) != 0) {
        return FFN_EINVAL;
    }
    memset(out, 0, sizeof *out);
    const double Td = (double)T, d = (double)s->d, E = (double)s->n_experts;
    out->router_flops = 2.0 * Td * d * E;
    out->router_bytes = d * E * (double)sizeof(float);
    ffn_kshape ke, ks;
    ffn__moe_expert_shape(s, &ke);
    ffn__moe_shared_shape(s, &ks);
    size_t total = 0;
    for (size_t e = 0; e < s->n_experts; ++e) {
        size_t n = expert_tokens[e];
        if (n > T) {
            return FFN_EINVAL; /* a token picks an expert at most once */
        }
        total += n;
        if (n == 0) {
            continue;
        }
        out->active_experts++;
        out->expert_flops += ffn_kernel_flops(&ke, n);
        out->expert_bytes += ffn_kernel_bytes(k, &ke, n);
    }
    if (total != T * s->top_k) {
        return FFN_EINVAL;
    }
    if (s->f_shared > 0 && T > 0) {
        out->shared_flops = ffn_kernel_flops(&ks, T);
        out->shared_bytes = ffn_kernel_bytes(k, &ks, T);
    }
    out->dispatch_bytes = Td * (double)s->top_k * d * (double)sizeof(float);
    out->combine_bytes = out->dispatch_bytes;
    out->flops = out->router_flops + out->expert_flops + out->shared_flops;
    out->bytes = out->router_bytes + out->expert_bytes + out->shared_bytes + out->dispatch_bytes +
                 out->combine_bytes;
    return 0;
}

double ffn_moe_flops(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                     const size_t *expert_tokens)
{
    ffn_moe_work w;
    return ffn_moe_count(k, s, T, expert_tokens, &w) == 0 ? w.flops : 0.0;
}

double ffn_moe_bytes(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                     const size_t *expert_tokens)
{
    ffn_moe_work w;
    return ffn_moe_count(k, s, T, expert_tokens, &w) == 0 ? w.bytes : 0.0;
}
