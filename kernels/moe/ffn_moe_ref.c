/* Scalar reference of the whole MoE layer (kernels_moe.h), the oracle of the MoE tests: it works
 * on the unpacked fp32 weights, one token at a time, accumulating every dot product, the scores
 * and the combine in double, and applies the same routing rules as the fast path (selection key,
 * tie-break to the lower expert index, NaN ranking lowest). It shares nothing with the dense
 * kernels, so a bug there cannot hide in both. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ffnroof/kernels_moe.h"
#include "moe_internal.h"

#define REF_MAX_K ((size_t)64)

static size_t align8(size_t n)
{
    return (n + 7u) / 8u * 8u;
}

typedef struct ref_ws {
    size_t logits, g, u, acc, cursor, taken, total;
} ref_ws;

static int ref_layout(const ffn_moe_shape *s, ref_ws *w)
{
    if (ffn_moe_shape_check(s) != 0) {
        return FFN_EINVAL;
    }
    size_t fmax = s->f > s->f_shared ? s->f : s->f_shared;
    const size_t lim = SIZE_MAX / 64u;
    if (s->n_experts > lim || fmax > lim || s->d > lim) {
        return FFN_EOVERFLOW;
    }
    size_t at = 8; /* slack to align the caller's pointer to 8 */
    w->logits = at;
    at += align8(s->n_experts * sizeof(double));
    w->g = at;
    at += align8(fmax * sizeof(double));
    w->u = at;
    at += align8(fmax * sizeof(double));
    w->acc = at;
    at += align8(s->d * sizeof(double));
    w->cursor = at;
    at += align8(s->n_experts * sizeof(size_t));
    w->taken = at;
    at += align8(s->n_experts);
    w->total = at;
    return 0;
}

size_t ffn_moe_ref_workspace_bytes(const ffn_moe_shape *s)
{
    ref_ws w;
    return ref_layout(s, &w) == 0 ? w.total : 0;
}

static bool gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

/* The activation applied to the gate projection (for gated forms, before the multiply by up). */
static double act_ref(ffn_act a, double v)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return v > 0.0 ? v : (v == v ? 0.0 : v); /* NaN propagates */
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case FFN_ACT_GELU_TANH:
        return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
        return v / (1.0 + exp(-v));
    case FFN_ACT_COUNT:
        break;
    }
    return v;
}

/* acc[c] += scale * FFN(x)[c] for one token, all in double. g, u: [f] scratch. */
static void ffn_token(const ffn_kweights *w, size_t d, size_t f, ffn_act a, bool bias,
                      const float *x, double scale, double *g, double *u, double *acc)
{
    const bool gt = gated(a);
    for (size_t j = 0; j < f; ++j) {
        g[j] = bias ? (double)w->b_gate[j] : 0.0;
        u[j] = (gt && bias) ? (double)w->b_up[j] : 0.0;
    }
    for (size_t i = 0; i < d; ++i) {
        const double xv = (double)x[i];
        const float *wg = w->w_gate + i * f;
        for (size_t j = 0; j < f; ++j) {
            g[j] += xv * (double)wg[j];
        }
        if (gt) {
            const float *wu = w->w_up + i * f;
            for (size_t j = 0; j < f; ++j) {
                u[j] += xv * (double)wu[j];
            }
        }
    }
    for (size_t j = 0; j < f; ++j) {
        g[j] = gt ? act_ref(a, g[j]) * u[j] : act_ref(a, g[j]);
    }
    for (size_t c = 0; c < d; ++c) {
        double sum = bias ? (double)w->b_down[c] : 0.0;
        for (size_t j = 0; j < f; ++j) {
            sum += g[j] * (double)w->w_down[j * d + c];
        }
        acc[c] += scale * sum;
    }
}

static bool key_better(double a, double b)
{
    return a > b || (isnan(b) && !isnan(a));
}

static int weights_ok(const ffn_moe_shape *s, const ffn_kweights *w, size_t f)
{
    if (w == NULL || w->w_gate == NULL || w->w_down == NULL || (gated(s->act) && w->w_up == NULL)) {
        return FFN_EINVAL;
    }
    if (s->bias && (w->b_gate == NULL || w->b_down == NULL || (gated(s->act) && w->b_up == NULL))) {
        return FFN_EINVAL;
    }
    (void)f;
    return 0;
}

int ffn_moe_ref_forward(const ffn_moe_shape *s, const ffn_moe_weights *w, size_t T, const float *x,
                        float *y, ffn_kmoe_routing *route, void *ws, size_t ws_bytes)
{
    ref_ws l;
    int rc = ref_layout(s, &l);
    if (rc != 0) {
        return rc;
    }
    if (w == NULL || w->w_router == NULL || w->experts == NULL || ws == NULL ||
        (T > 0 && (x == NULL || y == NULL)) || ((s->f_shared > 0) != (w->shared != NULL))) {
        return FFN_EINVAL;
    }
    if (route != NULL && (route->expert == NULL || route->weight == NULL || route->offset == NULL ||
                          route->perm == NULL)) {
        return FFN_EINVAL;
    }
    for (size_t e = 0; e < s->n_experts; ++e) {
        if (weights_ok(s, &w->experts[e], s->f) != 0) {
            return FFN_EINVAL;
        }
    }
    if (s->f_shared > 0 && weights_ok(s, w->shared, s->f_shared) != 0) {
        return FFN_EINVAL;
    }
    if (T > SIZE_MAX / s->top_k || T * s->top_k > (size_t)INT32_MAX) {
        return FFN_EOVERFLOW;
    }
    /* The oracle keeps a token's choices on the stack, so it supports k <= REF_MAX_K (every
     * published MoE uses k <= 16); the fast path has no such limit. */
    if (s->top_k > REF_MAX_K) {
        return FFN_EUNSUPPORTED;
    }
    if (ws_bytes < l.total) {
        return FFN_ENOSPACE;
    }
    unsigned char *b = ws;
    b += (8u - (uintptr_t)b % 8u) % 8u;
    b -= 8; /* offsets in l already include the 8 bytes of slack */
    double *logit = (double *)(void *)(b + l.logits);
    double *g = (double *)(void *)(b + l.g);
    double *u = (double *)(void *)(b + l.u);
    double *acc = (double *)(void *)(b + l.acc);
    size_t *cursor = (size_t *)(void *)(b + l.cursor);
    unsigned char *taken = b + l.taken;

    const size_t E = s->n_experts, K = s->top_k, d = s->d;
    const bool sig = s->score == FFN_MOE_SIGMOID;
    const bool has_select = w->b_select != NULL;
    const double scale = s->route_scale == 0.0f ? 1.0 : (double)s->route_scale;
    memset(taken, 0, E);
    for (size_t t = 0; t < T; ++t) {
        const float *xt = x + t * d;
        for (size_t e = 0; e < E; ++e) {
            double sum = 0.0;
            for (size_t i = 0; i < d; ++i) {
                sum += (double)xt[i] * (double)w->w_router[i * E + e];
            }
            logit[e] = sum;
        }
        size_t chosen[REF_MAX_K];
        double wt[REF_MAX_K];
        for (size_t j = 0; j < K; ++j) {
            size_t best = SIZE_MAX;
            double bkey = 0.0;
            for (size_t e = 0; e < E; ++e) {
                if (taken[e]) {
                    continue;
                }
                double key = (sig && has_select)
                                 ? 1.0 / (1.0 + exp(-logit[e])) + (double)w->b_select[e]
                                 : logit[e];
                if (best == SIZE_MAX || key_better(key, bkey)) {
                    best = e;
                    bkey = key;
                }
            }
            taken[best] = 1;
            chosen[j] = best;
        }
        double sum = 0.0, all = 0.0;
        if (sig) {
            for (size_t j = 0; j < K; ++j) {
                wt[j] = 1.0 / (1.0 + exp(-logit[chosen[j]]));
                sum += wt[j];
            }
            all = 1.0;
            if (s->norm_topk) {
                all = sum;
            }
        } else {
            double m = logit[0];
            for (size_t e = 1; e < E; ++e) {
                m = logit[e] > m ? logit[e] : m;
            }
            for (size_t e = 0; e < E; ++e) {
                all += exp(logit[e] - m);
            }
            for (size_t j = 0; j < K; ++j) {
                wt[j] = exp(logit[chosen[j]] - m);
                sum += wt[j];
            }
            if (s->norm_topk) {
                all = sum;
            }
        }
        for (size_t c = 0; c < d; ++c) {
            acc[c] = 0.0;
        }
        if (s->f_shared > 0) {
            ffn_token(w->shared, d, s->f_shared, s->act, s->bias, xt, 1.0, g, u, acc);
        }
        for (size_t j = 0; j < K; ++j) {
            taken[chosen[j]] = 0;
            wt[j] = wt[j] / all * scale;
            ffn_token(&w->experts[chosen[j]], d, s->f, s->act, s->bias, xt, wt[j], g, u, acc);
            if (route != NULL) {
                route->expert[t * K + j] = (int32_t)chosen[j];
                route->weight[t * K + j] = (float)wt[j];
            }
        }
        for (size_t c = 0; c < d; ++c) {
            y[t * d + c] = (float)acc[c];
        }
    }
    if (route != NULL) {
        ffn__moe_permute(T, K, E, route->expert, route->offset, cursor, route->perm, NULL);
    }
    return 0;
}
