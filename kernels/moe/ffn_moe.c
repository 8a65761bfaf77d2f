/* MoE layer forward, fast path: router GEMM, scoring, top-k, counting-sort permutation, grouped
 * expert FFNs through a dense ffn_kernel, weighted combine, shared experts (see kernels_moe.h
 * for the routing rules and kernels.h for the dense kernel contract). The routing phases are
 * portable C compiled without ISA flags; they are O(T*d*E + T*k*d) against the experts'
 * O(T*k*d*f), so the expert kernels dominate and carry the ISA-specific speed. Also the work
 * counts of the MoE call; its packed and workspace layouts are in moe_layout.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "ffnroof/kernels_moe.h"
#include "../kern_internal.h"
#include "moe_internal.h"

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
    const size_t Ep = ffn__moe_router_cols(E);
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
    int rc = ffn__moe_layout(k, s, &l);
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
    ffn__moe_fill_header(k, s, h.has_select != 0, &want);
    if (memcmp(&h, &want, sizeof h) != 0) {
        return FFN_EINVAL; /* packed for another shape or kernel, or not packed at all */
    }
    moe_ws w;
    rc = ffn__moe_ws_layout(k, s, T, threads, &w);
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
    /* 3. experts, each on its contiguous block. GCC 12's avx512f clone of router_gemm returns
     * with the upper register halves dirty (no VZEROUPPER); the expert kernels start clean
     * (the driver's team entry) and so does what runs after this call. */
    ffn__clean_upper();
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
