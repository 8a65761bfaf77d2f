/* Criterion suite for the MoE layer forward (kernels_moe.h): the fast path on every dense kernel
 * this CPU runs (ffn_kernel_list) against the double-precision scalar reference
 * ffn_moe_ref_forward: the same tokens routed to the same experts in the same order, the
 * documented tie-break (lower expert index wins), the permutation, outputs within a bound,
 * shared experts, softmax and sigmoid scoring, the work count against a hand count, and the
 * argument checks.
 *
 * Tolerances (outputs, relative to M = max |y_ref| of the call):
 *  - fp32 weights: each output is a sum over <= k+1 expert FFNs of two chained fp32 dot products
 *    of lengths d and f; each carries at most ~(len) eps |terms| of rounding error (Higham's
 *    gamma_n), and with inputs of either sign the |terms| sums exceed M by a small factor, so the
 *    bound is 8 (d + f) eps32 M;
 *  - bf16/fp16 weights (and, in the bf16 prefill path, activations rounded to bf16): each
 *    product carries up to 2 * 2^-9 relative error, random in sign, so a length-n dot product
 *    is off by about 2^-8 sqrt(n) times its rms term; the bound is 4 * 2^-8 sqrt(d + f) M.
 *    Routing or combine bugs move outputs by O(M), far above either bound.
 * Routing: the router is fp32 in the fast path and double in the reference, so a token whose
 * reference selection keys are within 1e-4 of each other (where fp32 rounding could reorder
 * them) is exempt from the exact comparison; the tests assert that such tokens are rare. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/kernels.h"
#include "ffnroof/kernels_moe.h"
#include "ffnroof/rand.h"

/* ---- deterministic data ---- */

static ffn_rng rng;
static float frand(float a) /* uniform in [-a, a) */
{
    return a * (float)(ffn_rng_unif(&rng) * 2.0 - 1.0);
}
static float *rand_array(size_t n, float a)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(a);
    return p;
}

static bool is_gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

/* Owned weights of one MoE layer (and the ffn_kweights views into them). */
typedef struct moe_data {
    ffn_moe_shape s;
    float *router, *bsel;
    ffn_kweights *experts;
    ffn_kweights shared;
    ffn_moe_weights w;
} moe_data;

static void fill_kweights(ffn_kweights *kw, size_t d, size_t f, ffn_act act, bool bias)
{
    const float ag = 1.0f / sqrtf((float)d), ad = 1.0f / sqrtf((float)f);
    memset(kw, 0, sizeof *kw);
    kw->w_gate = rand_array(d * f, ag);
    kw->w_up = is_gated(act) ? rand_array(d * f, ag) : NULL;
    kw->w_down = rand_array(f * d, ad);
    if (bias) {
        kw->b_gate = rand_array(f, 0.1f);
        kw->b_up = is_gated(act) ? rand_array(f, 0.1f) : NULL;
        kw->b_down = rand_array(d, 0.1f);
    }
}
static void free_kweights(ffn_kweights *kw)
{
    free((void *)kw->w_gate);
    free((void *)kw->w_up);
    free((void *)kw->w_down);
    free((void *)kw->b_gate);
    free((void *)kw->b_up);
    free((void *)kw->b_down);
}

static void moe_data_init(moe_data *m, const ffn_moe_shape *s, bool with_select, uint64_t seed)
{
    ffn_rng_seed(&rng, seed);
    memset(m, 0, sizeof *m);
    m->s = *s;
    m->router = rand_array(s->d * s->n_experts, 2.0f / sqrtf((float)s->d));
    m->bsel = with_select ? rand_array(s->n_experts, 0.2f) : NULL;
    m->experts = calloc(s->n_experts, sizeof *m->experts);
    cr_assert_not_null(m->experts);
    for (size_t e = 0; e < s->n_experts; e++)
        fill_kweights(&m->experts[e], s->d, s->f, s->act, s->bias);
    if (s->f_shared) fill_kweights(&m->shared, s->d, s->f_shared, s->act, s->bias);
    m->w.w_router = m->router;
    m->w.b_select = m->bsel;
    m->w.experts = m->experts;
    m->w.shared = s->f_shared ? &m->shared : NULL;
}
static void moe_data_free(moe_data *m)
{
    for (size_t e = 0; e < m->s.n_experts; e++)
        free_kweights(&m->experts[e]);
    if (m->s.f_shared) free_kweights(&m->shared);
    free(m->experts);
    free(m->router);
    free(m->bsel);
}

/* ---- a prepared fast-path layer on one dense kernel ---- */

typedef struct moe_run {
    const ffn_kernel *k;
    void *packed;
    void *ws;
    size_t ws_bytes;
} moe_run;

static void *alloc64(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    cr_assert_not_null(p);
    return p;
}

static void run_prepare(moe_run *r, const ffn_kernel *k, const moe_data *m, size_t T)
{
    r->k = k;
    size_t pb = ffn_moe_packed_bytes(k, &m->s);
    cr_assert_gt(pb, 0);
    r->packed = alloc64(pb);
    cr_assert_eq(ffn_moe_pack(k, &m->s, &m->w, r->packed, pb), 0);
    r->ws_bytes = ffn_moe_workspace_bytes(k, &m->s, T, 2);
    cr_assert_gt(r->ws_bytes, 0);
    r->ws = malloc(r->ws_bytes);
    cr_assert_not_null(r->ws);
}
static void run_free(moe_run *r)
{
    free(r->packed);
    free(r->ws);
}

/* Reference selection keys of token t, as the reference computes them (double). */
static void ref_keys(const moe_data *m, const float *xt, double *key)
{
    const ffn_moe_shape *s = &m->s;
    for (size_t e = 0; e < s->n_experts; e++) {
        double l = 0;
        for (size_t i = 0; i < s->d; i++)
            l += (double)xt[i] * m->router[i * s->n_experts + e];
        key[e] = (s->score == FFN_MOE_SIGMOID && m->bsel) ? 1.0 / (1.0 + exp(-l)) + m->bsel[e] : l;
    }
}

/* Is token t's top-(k+1) well separated (no two of its sorted keys within eps)? */
static bool clear_margin(const moe_data *m, const float *xt)
{
    const size_t E = m->s.n_experts, K = m->s.top_k;
    double key[64], sorted[64];
    cr_assert_leq(E, 64);
    ref_keys(m, xt, key);
    memcpy(sorted, key, E * sizeof(double));
    for (size_t i = 1; i < E; i++) /* insertion sort, descending */
        for (size_t j = i; j > 0 && sorted[j] > sorted[j - 1]; j--) {
            double tmp = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = tmp;
        }
    size_t last = K < E ? K : E - 1;
    for (size_t j = 0; j < last; j++)
        if (sorted[j] - sorted[j + 1] < 1e-4) return false;
    return true;
}

static double bound_for(const ffn_kernel *k, const ffn_moe_shape *s, double M)
{
    const double n = (double)(s->d + (s->f > s->f_shared ? s->f : s->f_shared));
    if (k->wdtype == FFN_DT_FP32) return 8.0 * n * FLT_EPSILON * M + 1e-30;
    return 4.0 * ldexp(1.0, -8) * sqrt(n) * M + 1e-30;
}

/* Run the fast path with kernel k and the reference on T random tokens; check routing,
 * permutation and outputs. Returns the number of tokens exempt from the routing comparison. */
static size_t check_against_ref(const ffn_kernel *k, const moe_data *m, size_t T, uint64_t seed)
{
    const ffn_moe_shape *s = &m->s;
    const size_t d = s->d, K = s->top_k, E = s->n_experts;
    ffn_rng_seed(&rng, seed);
    float *x = rand_array(T * d, 1.0f);
    float *y = rand_array(T * d, 9.0f); /* garbage: the call must overwrite it */
    float *yr = rand_array(T * d, 9.0f);
    int32_t *rex = malloc((T * K + 1) * sizeof(int32_t));
    float *rwt = malloc((T * K + 1) * sizeof(float));
    size_t *roff = malloc((E + 1) * sizeof(size_t));
    int32_t *rperm = malloc((T * K + 1) * sizeof(int32_t));
    ffn_kmoe_routing rr = {rex, rwt, roff, rperm};
    size_t rwsb = ffn_moe_ref_workspace_bytes(s);
    cr_assert_gt(rwsb, 0);
    void *rws = malloc(rwsb);
    cr_assert_eq(ffn_moe_ref_forward(s, &m->w, T, x, yr, &rr, rws, rwsb), 0);

    moe_run r;
    run_prepare(&r, k, m, T);
    ffn_kmoe_stats st;
    memset(&st, 0, sizeof st);
    int rc = ffn_moe_forward(k, s, r.packed, T, x, y, r.ws, r.ws_bytes, 2, &st);
    cr_assert_eq(rc, 0, "%s: ffn_moe_forward -> %d", k->name, rc);

    /* routing */
    size_t exempt = 0;
    bool all_equal = true;
    for (size_t t = 0; t < T; t++) {
        bool same = true;
        for (size_t j = 0; j < K; j++)
            same = same && st.routing.expert[t * K + j] == rex[t * K + j];
        if (!clear_margin(m, x + t * d)) {
            exempt++;
            all_equal = all_equal && same;
            continue;
        }
        cr_assert(same, "%s: token %zu routed differently from the reference", k->name, t);
        for (size_t j = 0; j < K; j++)
            cr_assert_float_eq(st.routing.weight[t * K + j], rwt[t * K + j],
                               1e-5f * (1.0f + fabsf(rwt[t * K + j])), "%s: token %zu weight %zu",
                               k->name, t, j);
    }
    /* the permutation: a stable counting sort by expert, consistent with the choices */
    cr_assert_eq(st.routing.offset[0], 0);
    cr_assert_eq(st.routing.offset[E], T * K);
    char *seen = calloc(T * K + 1, 1);
    for (size_t e = 0; e < E; e++) {
        cr_assert_leq(st.routing.offset[e], st.routing.offset[e + 1]);
        for (size_t p = st.routing.offset[e]; p < st.routing.offset[e + 1]; p++) {
            int32_t slot = st.routing.perm[p];
            cr_assert(slot >= 0 && (size_t)slot < T * K);
            cr_assert_not(seen[slot], "slot %d twice in the permutation", slot);
            seen[slot] = 1;
            cr_assert_eq(st.routing.expert[slot], (int32_t)e);
            if (p > st.routing.offset[e]) cr_assert_lt(st.routing.perm[p - 1], slot);
        }
    }
    free(seen);
    if (all_equal) {
        for (size_t e = 0; e <= E; e++)
            cr_assert_eq(st.routing.offset[e], roff[e]);
        for (size_t p = 0; p < T * K; p++)
            cr_assert_eq(st.routing.perm[p], rperm[p]);
    }
    /* outputs: tokens with identical routing must match the reference within the bound */
    double M = 0;
    for (size_t i = 0; i < T * d; i++)
        M = fmax(M, fabs(yr[i]));
    const double tol = bound_for(k, s, M);
    for (size_t t = 0; t < T; t++) {
        bool same = true;
        for (size_t j = 0; j < K; j++)
            same = same && st.routing.expert[t * K + j] == rex[t * K + j];
        if (!same) continue;
        for (size_t c = 0; c < d; c++) {
            double err = fabs((double)y[t * d + c] - (double)yr[t * d + c]);
            cr_assert(err <= tol, "%s: y[%zu][%zu] = %.8g, reference %.8g (|err| %.3g > %.3g)",
                      k->name, t, c, y[t * d + c], yr[t * d + c], err, tol);
        }
    }
    /* timing hooks: non-negative phases that add up to no more than the total */
    const ffn_moe_timing *tm = &st.timing;
    cr_assert(tm->route_s >= 0 && tm->permute_s >= 0 && tm->experts_s >= 0 && tm->shared_s >= 0 &&
              tm->combine_s >= 0);
    cr_assert_leq(tm->route_s + tm->permute_s + tm->experts_s + tm->shared_s + tm->combine_s,
                  tm->total_s * (1 + 1e-9) + 1e-9);

    run_free(&r);
    free(rws);
    free(x);
    free(y);
    free(yr);
    free(rex);
    free(rwt);
    free(roff);
    free(rperm);
    return exempt;
}

/* The float-weight kernels (the quantized ones have their own suite, test_kernels_quant, and
 * their own error bounds). */
static size_t kernels(const ffn_kernel **list, size_t n)
{
    const ffn_kernel *all[256];
    size_t c = ffn_kernel_list(all, 256), m = 0;
    cr_assert_gt(c, 0, "no dense kernel at all (the reference is always built)");
    for (size_t i = 0; i < c && i < 256 && m < n; i++)
        if (all[i]->wdtype != FFN_DT_INT8 && all[i]->wdtype != FFN_DT_INT4) list[m++] = all[i];
    return m;
}

static void check_all_kernels(const ffn_moe_shape *s, bool with_select, const size_t *Ts, size_t nT)
{
    const ffn_kernel *list[32];
    size_t nk = kernels(list, 32);
    moe_data m;
    moe_data_init(&m, s, with_select, 12345);
    size_t exempt = 0, total = 0;
    for (size_t i = 0; i < nk; i++)
        for (size_t j = 0; j < nT; j++) {
            exempt += check_against_ref(list[i], &m, Ts[j], 777 + j);
            total += Ts[j];
        }
    cr_assert_leq(exempt * 10, total, "%zu of %zu tokens too close to call", exempt, total);
    moe_data_free(&m);
}

static const size_t Ts[] = {0, 1, 3, 17, 64};
#define NT (sizeof Ts / sizeof Ts[0])

Test(kernels_moe, softmax_mixtral_style)
{
    ffn_moe_shape s = {.d = 33,
                       .f = 47,
                       .n_experts = 8,
                       .top_k = 2,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    check_all_kernels(&s, false, Ts, NT);
}

Test(kernels_moe, softmax_without_renormalisation_and_bias)
{
    ffn_moe_shape s = {.d = 17,
                       .f = 31,
                       .n_experts = 6,
                       .top_k = 3,
                       .act = FFN_ACT_GELU,
                       .bias = true,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = false};
    check_all_kernels(&s, false, Ts, NT);
}

Test(kernels_moe, sigmoid_deepseek_style_with_shared_expert)
{
    ffn_moe_shape s = {.d = 40,
                       .f = 24,
                       .n_experts = 16,
                       .top_k = 4,
                       .f_shared = 48,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SIGMOID,
                       .norm_topk = true,
                       .route_scale = 2.5f};
    check_all_kernels(&s, true, Ts, NT);
}

Test(kernels_moe, sigmoid_by_logit_unnormalised)
{
    ffn_moe_shape s = {.d = 15,
                       .f = 33,
                       .n_experts = 5,
                       .top_k = 1,
                       .act = FFN_ACT_RELU,
                       .score = FFN_MOE_SIGMOID,
                       .norm_topk = false};
    check_all_kernels(&s, false, Ts, NT);
}

Test(kernels_moe, top_k_equals_experts_and_one_expert)
{
    ffn_moe_shape s = {.d = 16,
                       .f = 16,
                       .n_experts = 4,
                       .top_k = 4,
                       .act = FFN_ACT_GEGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    check_all_kernels(&s, false, Ts, NT);
    ffn_moe_shape one = {.d = 9,
                         .f = 5,
                         .n_experts = 1,
                         .top_k = 1,
                         .act = FFN_ACT_SILU,
                         .f_shared = 3,
                         .score = FFN_MOE_SOFTMAX};
    check_all_kernels(&one, false, Ts, NT);
}

/* The shared expert is added to every token: the layer minus the same layer without it is the
 * shared FFN alone, which the reference computes for a one-expert, k=1 layer with weight 1. */
Test(kernels_moe, shared_expert_is_added_to_every_token)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
    ffn_moe_shape s = {.d = 12,
                       .f = 20,
                       .n_experts = 4,
                       .top_k = 2,
                       .f_shared = 28,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    moe_data m;
    moe_data_init(&m, &s, false, 99);
    const size_t T = 5, d = s.d;
    ffn_rng_seed(&rng, 5);
    float *x = rand_array(T * d, 1.0f), *y1 = rand_array(T * d, 1), *y0 = rand_array(T * d, 1);
    moe_run r;
    run_prepare(&r, k, &m, T);
    cr_assert_eq(ffn_moe_forward(k, &s, r.packed, T, x, y1, r.ws, r.ws_bytes, 1, NULL), 0);
    run_free(&r);
    ffn_moe_shape s0 = s;
    s0.f_shared = 0;
    ffn_moe_weights w0 = m.w;
    w0.shared = NULL;
    moe_data m0 = m;
    m0.s = s0;
    m0.w = w0;
    run_prepare(&r, k, &m0, T);
    cr_assert_eq(ffn_moe_forward(k, &s0, r.packed, T, x, y0, r.ws, r.ws_bytes, 1, NULL), 0);
    run_free(&r);
    /* the shared FFN alone, via the reference layer with one expert chosen with weight 1 */
    ffn_moe_shape ss = {.d = d,
                        .f = s.f_shared,
                        .n_experts = 1,
                        .top_k = 1,
                        .act = s.act,
                        .score = FFN_MOE_SOFTMAX,
                        .norm_topk = true};
    float zr[12] = {0};
    ffn_moe_weights ws = {.w_router = zr, .experts = &m.shared};
    float *ysh = rand_array(T * d, 1);
    size_t rb = ffn_moe_ref_workspace_bytes(&ss);
    void *rws = malloc(rb);
    cr_assert_eq(ffn_moe_ref_forward(&ss, &ws, T, x, ysh, NULL, rws, rb), 0);
    double M = 0;
    for (size_t i = 0; i < T * d; i++)
        M = fmax(M, fabs(ysh[i]));
    cr_assert_gt(M, 1e-3, "the shared FFN must contribute something measurable");
    for (size_t i = 0; i < T * d; i++)
        cr_assert_float_eq(y1[i] - y0[i], ysh[i], 1e-5 * (M + fabs(y1[i])), "element %zu", i);
    free(rws);
    free(ysh);
    free(x);
    free(y1);
    free(y0);
    moe_data_free(&m);
}

/* Exact ties in the selection key: two experts with identical router columns (so their logits
 * are bitwise equal in any arithmetic) and the boundary of the top k falling between them. */
static void check_tie(ffn_moe_score score)
{
    const ffn_kernel *list[32];
    size_t nk = kernels(list, 32);
    ffn_moe_shape s = {.d = 8,
                       .f = 4,
                       .n_experts = 8,
                       .top_k = 2,
                       .act = FFN_ACT_RELU,
                       .score = score,
                       .norm_topk = true};
    moe_data m;
    moe_data_init(&m, &s, false, 3);
    /* column e = c[e] * base, base > 0, x > 0: logits = c[e] * (x . base). Experts 3 and 6
     * tie for first; 1 and 5 tie for third. */
    const float c[8] = {0.25f, 0.5f, 0.125f, 1.0f, 0.0f, 0.5f, 1.0f, -1.0f};
    for (size_t i = 0; i < s.d; i++)
        for (size_t e = 0; e < 8; e++)
            m.router[i * 8 + e] = c[e] * (0.5f + 0.0625f * (float)i);
    const size_t T = 3;
    float x[3 * 8];
    for (size_t i = 0; i < T * s.d; i++)
        x[i] = 0.25f + 0.03125f * (float)(i % 7);
    for (int variant = 0; variant < 2; variant++) {
        /* variant 0: k=2 -> {3, 6} in that order; variant 1: k=3 -> {3, 6, 1} (1 beats 5) */
        s.top_k = variant == 0 ? 2 : 3;
        m.s = s;
        const int32_t want[3] = {3, 6, 1};
        int32_t rex[9];
        float rwt[9], yr[24], y[24];
        size_t roff[9];
        int32_t rperm[9];
        ffn_kmoe_routing rr = {rex, rwt, roff, rperm};
        size_t rb = ffn_moe_ref_workspace_bytes(&s);
        void *rws = malloc(rb);
        cr_assert_eq(ffn_moe_ref_forward(&s, &m.w, T, x, yr, &rr, rws, rb), 0);
        free(rws);
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < s.top_k; j++)
                cr_assert_eq(rex[t * s.top_k + j], want[j], "reference: token %zu choice %zu", t,
                             j);
        for (size_t i = 0; i < nk; i++) {
            moe_run r;
            run_prepare(&r, list[i], &m, T);
            ffn_kmoe_stats st;
            cr_assert_eq(ffn_moe_forward(list[i], &s, r.packed, T, x, y, r.ws, r.ws_bytes, 1, &st),
                         0);
            for (size_t t = 0; t < T; t++)
                for (size_t j = 0; j < s.top_k; j++)
                    cr_assert_eq(st.routing.expert[t * s.top_k + j], want[j],
                                 "%s: token %zu choice %zu", list[i]->name, t, j);
            /* tied experts get equal weights */
            cr_assert_float_eq(st.routing.weight[0], st.routing.weight[1], 1e-7f);
            run_free(&r);
        }
    }
    moe_data_free(&m);
}

Test(kernels_moe, ties_go_to_the_lower_expert_index_softmax)
{
    check_tie(FFN_MOE_SOFTMAX);
}
Test(kernels_moe, ties_go_to_the_lower_expert_index_sigmoid)
{
    check_tie(FFN_MOE_SIGMOID);
}

/* Softmax weights without renormalisation are the full-softmax probabilities; with it they sum
 * to 1; sigmoid weights with renormalisation and route_scale sum to route_scale. */
Test(kernels_moe, routing_weights_follow_the_scoring_rule)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
    const size_t T = 4;
    for (int mode = 0; mode < 3; mode++) {
        ffn_moe_shape s = {.d = 6,
                           .f = 3,
                           .n_experts = 5,
                           .top_k = 2,
                           .act = FFN_ACT_RELU,
                           .score = mode == 2 ? FFN_MOE_SIGMOID : FFN_MOE_SOFTMAX,
                           .norm_topk = mode != 0,
                           .route_scale = mode == 2 ? 2.5f : 0.0f};
        moe_data m;
        moe_data_init(&m, &s, false, 11 + (uint64_t)mode);
        ffn_rng_seed(&rng, 8);
        float *x = rand_array(T * s.d, 1), *y = rand_array(T * s.d, 1);
        moe_run r;
        run_prepare(&r, k, &m, T);
        ffn_kmoe_stats st;
        cr_assert_eq(ffn_moe_forward(k, &s, r.packed, T, x, y, r.ws, r.ws_bytes, 1, &st), 0);
        for (size_t t = 0; t < T; t++) {
            double l[5], mx = -1e30, all = 0;
            for (size_t e = 0; e < 5; e++) {
                l[e] = 0;
                for (size_t i = 0; i < s.d; i++)
                    l[e] += (double)x[t * s.d + i] * m.router[i * 5 + e];
                mx = fmax(mx, l[e]);
            }
            for (size_t e = 0; e < 5; e++)
                all += exp(l[e] - mx);
            double sum = 0;
            for (size_t j = 0; j < 2; j++) {
                size_t e = (size_t)st.routing.expert[t * 2 + j];
                double w = st.routing.weight[t * 2 + j];
                sum += w;
                if (mode == 0) cr_assert_float_eq(w, exp(l[e] - mx) / all, 1e-6);
            }
            if (mode == 1) cr_assert_float_eq(sum, 1.0, 1e-6);
            if (mode == 2) cr_assert_float_eq(sum, 2.5, 1e-5);
            cr_assert_geq(st.routing.weight[t * 2], st.routing.weight[t * 2 + 1],
                          "choices listed in decreasing score");
        }
        run_free(&r);
        free(x);
        free(y);
        moe_data_free(&m);
    }
}

/* The work count against a hand count: SwiGLU, no bias, fp32, E=4, k=2, T=3, tokens per expert
 * {3, 0, 2, 1}. Dense FFN on n tokens: FLOPs 2*n*d*f*2 (gate+up) + 5*n*f (silu and the
 * multiply) + 2*n*f*d (down); bytes 3*d*f*4 (weights) + 4*n*d (x) + 8*n*f (h) + 4*n*d (y). */
Test(kernels_moe, work_count_matches_a_hand_count)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
    ffn_moe_shape s = {.d = 10,
                       .f = 7,
                       .n_experts = 4,
                       .top_k = 2,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    const size_t tokens[4] = {3, 0, 2, 1};
    const double d = 10, f = 7, T = 3;
    double flops = 2 * T * d * 4, bytes = d * 4 * 4;
    for (int e = 0; e < 4; e++) {
        double n = (double)tokens[e];
        if (n == 0) continue;
        flops += 4 * n * d * f + 5 * n * f + 2 * n * f * d;
        bytes += 3 * d * f * 4 + 4 * n * d + 8 * n * f + 4 * n * d;
    }
    bytes += 2 * T * 2 * d * 4; /* dispatch + combine */
    ffn_moe_work w;
    cr_assert_eq(ffn_moe_count(k, &s, 3, tokens, &w), 0);
    cr_assert_eq(w.active_experts, 3);
    cr_assert_float_eq(w.flops, flops, 1e-9 * flops);
    cr_assert_float_eq(w.bytes, bytes, 1e-9 * bytes);
    cr_assert_float_eq(ffn_moe_flops(k, &s, 3, tokens), flops, 1e-9 * flops);
    cr_assert_float_eq(ffn_moe_bytes(k, &s, 3, tokens), bytes, 1e-9 * bytes);
    cr_assert_float_eq(w.dispatch_bytes, 3 * 2 * 10 * 4.0, 1e-9);
    cr_assert_float_eq(w.router_flops, 2 * 3 * 10 * 4.0, 1e-9);
    /* counts that do not add up to T*k are refused */
    const size_t bad[4] = {3, 3, 0, 0};
    cr_assert_eq(ffn_moe_count(k, &s, 3, bad, &w), 0);
    const size_t bad2[4] = {3, 2, 0, 0};
    cr_assert_eq(ffn_moe_count(k, &s, 3, bad2, &w), FFN_EINVAL);
    const size_t bad3[4] = {4, 1, 1, 0};
    cr_assert_eq(ffn_moe_count(k, &s, 3, bad3, &w), FFN_EINVAL, "an expert gets at most T tokens");
}

Test(kernels_moe, bad_arguments_are_refused)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
    ffn_moe_shape s = {.d = 8,
                       .f = 8,
                       .n_experts = 4,
                       .top_k = 2,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    moe_data m;
    moe_data_init(&m, &s, false, 1);
    const size_t T = 3;
    float x[24] = {0}, y[24];

    ffn_moe_shape b = s;
    cr_assert_eq(ffn_moe_shape_check(&s), 0);
    cr_assert_eq(ffn_moe_shape_check(NULL), FFN_EINVAL);
    b.d = 0;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    cr_assert_eq(ffn_moe_packed_bytes(k, &b), 0);
    b = s, b.f = 0;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    b = s, b.n_experts = 0;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    b = s, b.top_k = 0;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    b = s, b.top_k = 5;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL, "top_k > E");
    cr_assert_eq(ffn_moe_workspace_bytes(k, &b, T, 1), 0);
    b = s, b.act = FFN_ACT_COUNT;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    b = s, b.route_scale = NAN;
    cr_assert_eq(ffn_moe_shape_check(&b), FFN_EINVAL);
    cr_assert_eq(ffn_moe_packed_bytes(NULL, &s), 0);

    size_t pb = ffn_moe_packed_bytes(k, &s);
    unsigned char *packed = alloc64(pb + 64);
    cr_assert_eq(ffn_moe_pack(NULL, &s, &m.w, packed, pb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_pack(k, &s, NULL, packed, pb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_pack(k, &s, &m.w, NULL, pb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_pack(k, &s, &m.w, packed, pb - 1), FFN_ENOSPACE);
    cr_assert_eq(ffn_moe_pack(k, &s, &m.w, packed + 4, pb), FFN_EINVAL, "unaligned packed");
    ffn_moe_weights wbad = m.w;
    wbad.shared = &m.experts[0]; /* a shared expert the shape does not have */
    cr_assert_eq(ffn_moe_pack(k, &s, &wbad, packed, pb), FFN_EINVAL);
    wbad = m.w;
    wbad.w_router = NULL;
    cr_assert_eq(ffn_moe_pack(k, &s, &wbad, packed, pb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_pack(k, &s, &m.w, packed, pb), 0);

    size_t wsb = ffn_moe_workspace_bytes(k, &s, T, 1);
    cr_assert_gt(wsb, 0);
    void *ws = malloc(wsb);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, x, y, ws, wsb - 1, 1, NULL), FFN_ENOSPACE);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, NULL, y, ws, wsb, 1, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, x, NULL, ws, wsb, 1, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, x, y, NULL, wsb, 1, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_forward(k, &s, NULL, T, x, y, ws, wsb, 1, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_forward(NULL, &s, packed, T, x, y, ws, wsb, 1, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_forward(k, NULL, packed, T, x, y, ws, wsb, 1, NULL), FFN_EINVAL);
    /* packed weights of another shape */
    b = s, b.top_k = 1;
    cr_assert_eq(ffn_moe_forward(k, &b, packed, T, x, y, ws, wsb, 1, NULL), FFN_EINVAL);
    /* a workspace for fewer tokens than the call has */
    size_t wsb1 = ffn_moe_workspace_bytes(k, &s, 1, 1);
    cr_assert_lt(wsb1, wsb);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, x, y, ws, wsb1, 1, NULL), FFN_ENOSPACE);
    /* T = 0: nothing is read or written */
    cr_assert_eq(ffn_moe_forward(k, &s, packed, 0, NULL, NULL, ws, wsb, 1, NULL), 0);
    cr_assert_eq(ffn_moe_forward(k, &s, packed, T, x, y, ws, wsb, 1, NULL), 0);

    /* the reference */
    size_t rb = ffn_moe_ref_workspace_bytes(&s);
    void *rws = malloc(rb);
    cr_assert_eq(ffn_moe_ref_forward(&s, &m.w, T, x, y, NULL, rws, rb - 1), FFN_ENOSPACE);
    cr_assert_eq(ffn_moe_ref_forward(&s, NULL, T, x, y, NULL, rws, rb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_ref_forward(&s, &m.w, T, NULL, y, NULL, rws, rb), FFN_EINVAL);
    b = s, b.top_k = 9;
    cr_assert_eq(ffn_moe_ref_forward(&b, &m.w, T, x, y, NULL, rws, rb), FFN_EINVAL);
    ffn_kweights broken = m.experts[1];
    broken.w_up = NULL; /* swiglu needs the up projection */
    ffn_kweights ex[4] = {m.experts[0], broken, m.experts[2], m.experts[3]};
    wbad = m.w;
    wbad.experts = ex;
    cr_assert_eq(ffn_moe_ref_forward(&s, &wbad, T, x, y, NULL, rws, rb), FFN_EINVAL);
    cr_assert_eq(ffn_moe_pack(k, &s, &wbad, packed, pb), FFN_EINVAL, "the dense pack refuses it");
    cr_assert_eq(ffn_moe_ref_forward(&s, &m.w, T, x, y, NULL, rws, rb), 0);
    free(rws);
    free(ws);
    free(packed);
    moe_data_free(&m);
}

/* Quantized experts: every int8/int4 kernel this CPU runs serves as the MoE layer's experts
 * (W8 with fp32 or bf16 activations, W8A8, W4 in groups with and without zero points, a shared
 * expert too), and the layer matches the same layer whose experts are that format's reference
 * kernel: routing is the MoE code's in both, so what is compared is the experts' quantized
 * arithmetic, to within the summation error the dense suite allows (test_kernels_quant). The
 * group and zero point reach every expert's shape, and a layer packed with one group is refused
 * by a forward asked for another. */
Test(kernels_moe, quantized_experts_match_their_reference)
{
    const ffn_kernel *all[256];
    const size_t c = ffn_kernel_list(all, 256);
    size_t tested = 0;
    for (size_t i = 0; i < c && i < 256; i++) {
        const ffn_kernel *k = all[i];
        if ((k->wdtype != FFN_DT_INT8 && k->wdtype != FFN_DT_INT4) || k->isa == FFN_ISA_REF)
            continue;
        const ffn_kernel *ref = NULL;
        cr_assert_eq(ffn_kernel_get_q(FFN_ISA_REF, k->wdtype, k->adtype, &ref, NULL), 0);
        for (int zp = 0; zp < (k->wdtype == FFN_DT_INT4 ? 2 : 1); zp++) {
            ffn_moe_shape s = {.d = 64,
                               .f = 128,
                               .n_experts = 6,
                               .top_k = 2,
                               .f_shared = 64,
                               .act = FFN_ACT_SWIGLU,
                               .bias = zp == 1,
                               .score = FFN_MOE_SOFTMAX,
                               .norm_topk = true,
                               .group = k->wdtype == FFN_DT_INT4 ? 32 : 0,
                               .zero_point = zp == 1};
            moe_data m;
            moe_data_init(&m, &s, false, 4242 + i);
            const size_t T = 19;
            float *x = rand_array(T * s.d, 1.0f);
            float *y = malloc(T * s.d * sizeof *y), *yr = malloc(T * s.d * sizeof *yr);
            cr_assert(y && yr);
            moe_run r, rr;
            run_prepare(&r, k, &m, T);
            run_prepare(&rr, ref, &m, T);
            cr_assert_eq(ffn_moe_forward(k, &s, r.packed, T, x, y, r.ws, r.ws_bytes, 2, NULL), 0,
                         "%s", k->name);
            cr_assert_eq(ffn_moe_forward(ref, &s, rr.packed, T, x, yr, rr.ws, rr.ws_bytes, 1, NULL),
                         0);
            double num = 0, den = 0;
            for (size_t e = 0; e < T * s.d; e++) {
                num += ((double)y[e] - yr[e]) * ((double)y[e] - yr[e]);
                den += (double)yr[e] * yr[e];
            }
            const double tol = k->adtype == FFN_DT_BF16 ? 1e-2 : 1e-5;
            cr_assert(den > 0 && sqrt(num / den) < tol, "%s zp=%d: rel L2 %.3g", k->name, zp,
                      sqrt(num / den));
            if (k->wdtype == FFN_DT_INT4) {
                /* G = 64 divides d, f and f_shared too: only the packed header can tell */
                ffn_moe_shape other = s;
                other.group = 64;
                cr_assert_eq(ffn_moe_shape_check(&other), 0);
                cr_assert_neq(
                    ffn_moe_forward(k, &other, r.packed, T, x, y, r.ws, r.ws_bytes, 1, NULL), 0,
                    "%s: packed with G = 32, run as G = 64", k->name);
            }
            run_free(&r);
            run_free(&rr);
            free(x);
            free(y);
            free(yr);
            moe_data_free(&m);
            tested++;
        }
    }
    if (!tested) cr_skip_test("no quantized ISA kernel on this CPU");
}

/* ---- the upper register state (x86 with AVX) ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* XINUSE (XGETBV with ECX = 1) where the CPU has it: bit 2 is the upper halves of ymm0-15. */
static bool xinuse(uint64_t *v)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & (1u << 2))) return false;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

/* One VEX-256 instruction, in a function GCC compiles for the baseline: a target("avx")
 * function would get the VZEROUPPER GCC puts before its return. Run only where AVX is. */
static void dirty_upper(void)
{
    __asm__ volatile("vpcmpeqd %%ymm1, %%ymm1, %%ymm1" ::: "xmm1");
}

/* Legacy-SSE code (the portable kernel) run with a dirty upper state is slowed on every
 * instruction (4x on a Zen 4 VM, kern_internal.h), and GCC 12 at -O3 leaves the MoE router's
 * avx512f clone without its VZEROUPPER. Called with the state dirty, the portable dense kernel
 * and the MoE layer on it return it clean: the driver cleans it where each thread starts (so
 * the kernel ran clean; nothing in it dirties the state again), and the layer after its router.
 * ReLU, so that no libm call (whose FMA variants are VEX-encoded) runs after the clean-up; the
 * size of the Zen 4 measurement (at d = 64 something on the way cleans the state anyway). */
Test(kernels_moe, portable_kernel_runs_and_returns_with_the_upper_state_clean)
{
    uint64_t v;
    if (!__builtin_cpu_supports("avx") || !xinuse(&v))
        cr_skip_test("this CPU has no AVX or no XGETBV with ECX = 1: no upper state to check");
    const ffn_kernel *k;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_PORTABLE, FFN_DT_FP32, &k, &dg), 0);
    const ffn_moe_shape s = {.d = 512,
                             .f = 1408,
                             .n_experts = 4,
                             .top_k = 2,
                             .act = FFN_ACT_RELU,
                             .score = FFN_MOE_SOFTMAX,
                             .norm_topk = true};
    moe_data m;
    moe_data_init(&m, &s, false, 7);
    float *x = rand_array(s.d, 1.0f), *y = calloc(s.d, sizeof *y);
    cr_assert_not_null(y);

    const ffn_kshape ks = {.d = s.d, .f = s.f, .act = s.act};
    const size_t pb = k->packed_bytes(&ks), wb = k->workspace_bytes(&ks, 1, 1);
    void *packed = alloc64(pb), *ws = alloc64(wb);
    cr_assert_eq(k->pack(&ks, &m.experts[0], packed, pb), 0);
    dirty_upper();
    cr_assert(xinuse(&v) && (v & 4), "the test could not dirty the upper state (XINUSE %#llx)",
              (unsigned long long)v);
    dirty_upper();
    cr_assert_eq(k->forward(&ks, packed, 1, x, y, ws, wb, 1), 0);
    cr_assert(xinuse(&v));
    cr_expect_eq(v & 4, 0, "%s returned with the upper state dirty (XINUSE %#llx)", k->name,
                 (unsigned long long)v);

    moe_run r;
    run_prepare(&r, k, &m, 1);
    dirty_upper();
    cr_assert_eq(ffn_moe_forward(k, &s, r.packed, 1, x, y, r.ws, r.ws_bytes, 1, NULL), 0);
    cr_assert(xinuse(&v));
    cr_expect_eq(v & 4, 0, "the MoE layer returned with the upper state dirty (XINUSE %#llx)",
                 (unsigned long long)v);
    free(packed);
    free(ws);
    free(x);
    free(y);
    run_free(&r);
    moe_data_free(&m);
}
#endif
