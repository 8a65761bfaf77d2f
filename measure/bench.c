/* The bench runner (include/ffnroof/bench.h): prepares a layer (random weights, packed once),
 * then times ffnroof's kernel and the peers in interleaved rounds (one call of each per round,
 * so that a drifting memory bandwidth on a shared host hits all of them alike) until the timing
 * of ours is stable, with the weights flushed from the caches before every call; reads the
 * counters around every timed call of ours, checks against the reference kernel on request and
 * costs the same op with the simulator. ffn_bench_fit_eff turns kernel runs at a few
 * calibration shapes into the efficiency parameters of a calibrated spec. */
#define _GNU_SOURCE 1

#include "ffnroof/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/fit.h"
#include "ffnroof/model.h"

#include "bench_moe.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FFN_BENCH_CLFLUSH 1
#endif
#include <sched.h>
#include <unistd.h>

#define MAX_SAMPLES 400
/* Peers keep their own copy of the weights, which we cannot flush line by line: they are
 * evicted by writing a buffer larger than the last-level cache this VM actually has (the
 * read-bandwidth sweep drops to DRAM speed between 64 and 256 MiB here; sysfs claims 480 MiB
 * and is not believed). */
#define EVICT_BYTES ((size_t)256 << 20)
#define VERIFY_TOKENS 16

/* ---- small helpers ----------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [-a, a). */
static void fill(float *p, size_t n, float a, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(seed);
        p[i] = a * ((float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f);
    }
}

static void *xalloc(size_t n)
{
    void *p = NULL;
    if (n == 0) n = 64;
    n = (n + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, n)) return NULL;
    return p;
}

static void flush_lines(const void *p, size_t n)
{
#if defined(FFN_BENCH_CLFLUSH)
    const char *c = p;
    for (size_t i = 0; i < n; i += 64) _mm_clflush(c + i);
    _mm_mfence();
#else
    (void)p;
    (void)n;
#endif
}

/* "All cores": the CPUs this process may run on. */
static int resolve_threads(int t)
{
    if (t > 0) return t;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

ffn_dtype ffn_bench_cdtype(ffn_dtype wdt)
{
    return wdt == FFN_DT_BF16 || wdt == FFN_DT_FP16 ? wdt : FFN_DT_FP32;
}

static int get_kernel(const ffn_bench_case *c, const ffn_bench_opts *o, const ffn_kernel **k,
                      ffn_diag *diag)
{
    if (o && o->isa_set) return ffn_kernel_get(o->isa, c->wdtype, k, diag);
    return ffn_kernel_best(c->wdtype, k, diag);
}

int ffn_bench_case_check(const ffn_bench_case *c, const ffn_bench_opts *o, ffn_diag *diag)
{
    if (!c) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no case");
    if (c->tokens == 0 || c->shape.d == 0 || c->shape.f == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "tokens, d and f must be >= 1");
    if ((unsigned)c->shape.act >= FFN_ACT_COUNT)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "unknown activation");
    if (c->kind == FFN_BENCH_MOE && (c->n_experts == 0 || c->top_k == 0 || c->top_k > c->n_experts))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "MoE top-k %zu is not in [1, %zu]",
                            c->top_k, c->n_experts);
    /* 2^40 bytes of weights is far beyond any host this runs on; refuse before multiplying. */
    double g = ffn_act_gated(c->shape.act) ? 2.0 : 1.0;
    double E = c->kind == FFN_BENCH_MOE ? (double)c->n_experts : 1.0;
    double wbytes = E * (g + 1.0) * (double)c->shape.d * (double)c->shape.f * 4.0;
    if (wbytes > 0x1p40 || (double)c->tokens * (double)c->shape.d > 0x1p36 ||
        (double)c->tokens * (double)c->shape.f * g > 0x1p36)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "shape too large (%.3g bytes of weights)",
                            wbytes);
    const ffn_kernel *k;
    return get_kernel(c, o, &k, diag);
}

/* ---- the simulator's view ---------------------------------------------------------------- */

/* The layer cost of a case on hw, weights from memory. */
static int case_layer(const ffn_hw *hw, const ffn_bench_case *c, ffn_layer_cost *lcp)
{
    ffn_layer_cost lc;
    const ffn_dtype cdt = ffn_bench_cdtype(c->wdtype);
    if (c->kind == FFN_BENCH_DENSE) {
        ffn_fit_point p;
        memset(&p, 0, sizeof p);
        p.m = c->tokens;
        p.k = c->shape.d;
        p.f = c->shape.f;
        p.act = c->shape.act;
        p.wdtype = c->wdtype;
        p.adtype = FFN_DT_FP32;
        p.cdtype_set = true;
        p.cdtype = cdt;
        int rc = ffn_fit_point_layer(hw, &p, &lc);
        if (rc) return rc;
    } else {
        ffn_model mm;
        memset(&mm, 0, sizeof mm);
        snprintf(mm.name, sizeof mm.name, "bench-moe");
        mm.hidden = c->shape.d;
        mm.layers = 1;
        mm.intermediate = c->shape.f;
        mm.act = c->shape.act;
        mm.moe.n_experts = c->n_experts;
        mm.moe.top_k = c->top_k;
        mm.moe.expert_intermediate = c->shape.f;
        mm.moe.scoring = FFN_SCORE_SOFTMAX;
        mm.moe.layer_freq = 1;
        mm.layer_moe[0] = true;
        ffn_run run;
        ffn_run_default(&run);
        run.phase = c->phase;
        run.wdtype = c->wdtype;
        run.adtype = FFN_DT_FP32;
        run.fused = true;
        ffn_moe_detail det;
        int rc = ffn_moe_layer(&mm, hw, &run, c->tokens, &lc, &det, NULL);
        if (rc) return rc;
        /* the expert GEMMs run on the kernels' compute units; the router stays fp32 */
        for (int i = 0; i < lc.n_ops; i++)
            if (lc.ops[i].kind == FFN_OP_GEMM && !strncmp(lc.ops[i].name, "experts_", 8)) {
                lc.ops[i].compute_dtype = cdt;
                ffn_op_recost(&lc.ops[i], hw);
            }
        ffn_layer_sum(&lc, hw);
    }
    *lcp = lc;
    return 0;
}

int ffn_bench_predict_weights(const ffn_hw *hw, const ffn_bench_case *c, ffn_weights weights,
                              double *roofline_s, double *predicted_s, ffn_bound *bound,
                              double *served, int *weights_level)
{
    if (!hw || !c) return FFN_EINVAL;
    ffn_layer_cost lc;
    int rc = case_layer(hw, c, &lc);
    if (rc) return rc;
    /* A benchmark repeats one layer: warm, its weights stay in the innermost level that
     * holds them (the model's `hot`, docs/model.md "On-chip memory"). */
    int lv = weights != FFN_WEIGHTS_COLD ? ffn_level_holding(hw, lc.weight_bytes) : 0;
    if (lv) ffn_layer_place_weights(&lc, hw, lv);
    if (weights_level) *weights_level = lv;
    if (served) {
        memset(served, 0, (FFN_HW_MAX_LEVELS + 1) * sizeof *served);
        for (int i = 0; i < lc.n_ops; i++)
            for (int k = 0; k <= FFN_HW_MAX_LEVELS; k++) served[k] += lc.ops[i].served_bytes[k];
    }
    if (roofline_s) *roofline_s = lc.roofline_s;
    if (predicted_s) *predicted_s = lc.predicted_s;
    if (bound) *bound = lc.compute_s >= lc.memory_s ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    return 0;
}

int ffn_bench_predict(const ffn_hw *hw, const ffn_bench_case *c, double *roofline_s,
                      double *predicted_s, ffn_bound *bound, double *flops, double *bytes)
{
    if (!hw || !c) return FFN_EINVAL;
    ffn_layer_cost lc;
    int rc = case_layer(hw, c, &lc);
    if (rc) return rc;
    if (roofline_s) *roofline_s = lc.roofline_s;
    if (predicted_s) *predicted_s = lc.predicted_s;
    if (bound) *bound = lc.compute_s >= lc.memory_s ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    if (flops) *flops = lc.flops;
    if (bytes) *bytes = lc.bytes;
    return 0;
}

/* ---- a prepared layer -------------------------------------------------------------------- */

typedef struct layer {
    ffn_bench_kind kind;
    ffn_kshape shape;
    size_t E, k;
    ffn_dtype wdtype;
    const ffn_kernel *kern;
    float *w;             /* all unpacked fp32 weights, one block */
    ffn_kweights *kw;     /* [E] (1 for dense) */
    float *router;        /* [d][E] (MoE) */
    void *packed;
    size_t packed_bytes;
    ffn_bmoe *moe;
    float *x, *y, *yref;  /* [Tmax][d] */
    size_t Tmax;
    void *ws;
    size_t ws_bytes;
} layer;

static void layer_free(layer *L)
{
    if (!L) return;
    free(L->w);
    free(L->kw);
    free(L->router);
    free(L->packed);
    free(L->x);
    free(L->y);
    free(L->yref);
    free(L->ws);
    ffn_bmoe_free(L->moe);
    memset(L, 0, sizeof *L);
}

static bool same_layer(const layer *L, const ffn_bench_case *c, const ffn_kernel *k)
{
    return L->packed && L->kind == c->kind && L->shape.d == c->shape.d &&
           L->shape.f == c->shape.f && L->shape.act == c->shape.act &&
           L->shape.bias == c->shape.bias && L->wdtype == c->wdtype && L->kern == k &&
           (c->kind == FFN_BENCH_DENSE || (L->E == c->n_experts && L->k == c->top_k));
}

static int layer_prepare(layer *L, const ffn_bench_case *c, const ffn_kernel *k, uint64_t seed,
                         ffn_diag *diag)
{
    layer_free(L);
    L->kind = c->kind;
    L->shape = c->shape;
    L->wdtype = c->wdtype;
    L->kern = k;
    L->E = c->kind == FFN_BENCH_MOE ? c->n_experts : 1;
    L->k = c->top_k;
    const size_t d = c->shape.d, f = c->shape.f, E = L->E;
    const bool gated = ffn_act_gated(c->shape.act), bias = c->shape.bias;
    const size_t per = (gated ? 3 : 2) * d * f + (bias ? (gated ? 2 : 1) * f + d : 0);
    L->w = xalloc(E * per * sizeof(float));
    L->kw = calloc(E, sizeof *L->kw);
    if (!L->w || !L->kw) goto nomem;
    uint64_t s = seed ? seed : 1;
    const float ag = 1.0f / sqrtf((float)d), ad = 1.0f / sqrtf((float)f);
    for (size_t e = 0; e < E; e++) {
        float *p = L->w + e * per;
        ffn_kweights *w = &L->kw[e];
        w->w_gate = p;
        fill(p, d * f, ag, &s);
        p += d * f;
        if (gated) {
            w->w_up = p;
            fill(p, d * f, ag, &s);
            p += d * f;
        }
        w->w_down = p;
        fill(p, f * d, ad, &s);
        p += f * d;
        if (bias) {
            w->b_gate = p;
            fill(p, f, 0.1f, &s);
            p += f;
            if (gated) {
                w->b_up = p;
                fill(p, f, 0.1f, &s);
                p += f;
            }
            w->b_down = p;
            fill(p, d, 0.1f, &s);
        }
    }
    int rc;
    if (c->kind == FFN_BENCH_DENSE) {
        L->packed_bytes = k->packed_bytes(&L->shape);
        L->packed = xalloc(L->packed_bytes);
        if (!L->packed) goto nomem;
        rc = k->pack(&L->shape, &L->kw[0], L->packed, L->packed_bytes);
    } else {
        L->router = xalloc(d * E * sizeof(float));
        if (!L->router) goto nomem;
        fill(L->router, d * E, ag, &s);
        L->moe = ffn_bmoe_new(k, d, f, E, c->top_k, c->shape.act, bias);
        if (!L->moe) goto nomem;
        L->packed_bytes = ffn_bmoe_packed_bytes(L->moe);
        L->packed = xalloc(L->packed_bytes);
        if (!L->packed) goto nomem;
        rc = ffn_bmoe_pack(L->moe, L->router, L->kw, L->packed, L->packed_bytes);
    }
    if (rc) {
        layer_free(L);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "packing the weights for %s failed", k->name);
    }
    return 0;
nomem:
    layer_free(L);
    return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0,
                        "out of memory preparing a layer d=%zu f=%zu (x%zu)", d, f, E);
}

/* Buffers for T tokens and `threads` threads. */
static int layer_buffers(layer *L, size_t T, int threads, uint64_t seed, ffn_diag *diag)
{
    const size_t d = L->shape.d;
    size_t need = L->kind == FFN_BENCH_DENSE
                      ? L->kern->workspace_bytes(&L->shape, T, threads)
                      : ffn_bmoe_ws_bytes(L->moe, T, threads);
    if (T > L->Tmax) {
        free(L->x);
        free(L->y);
        free(L->yref);
        L->x = xalloc(T * d * sizeof(float));
        L->y = xalloc(T * d * sizeof(float));
        L->yref = xalloc(T * d * sizeof(float));
        L->Tmax = T;
        if (!L->x || !L->y || !L->yref) {
            L->Tmax = 0;
            return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (activations)");
        }
    }
    uint64_t s = (seed ? seed : 1) ^ 0x5eedULL;
    fill(L->x, T * d, 1.0f, &s);
    if (need > L->ws_bytes) {
        free(L->ws);
        L->ws = xalloc(need);
        L->ws_bytes = L->ws ? need : 0;
        if (!L->ws) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (workspace)");
    }
    return 0;
}

static int layer_forward(layer *L, size_t T, int threads, double *timing, size_t *tokens)
{
    if (L->kind == FFN_BENCH_DENSE)
        return L->kern->forward(&L->shape, L->packed, T, L->x, L->y, L->ws, L->ws_bytes, threads);
    return ffn_bmoe_forward(L->moe, L->packed, T, L->x, L->y, L->ws, L->ws_bytes, threads, timing,
                            tokens);
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct round_ctx {
    layer *L;
    size_t T;
    int threads;
    bool cold;
    const ffn_bench_opts *o;
    ffn_bench_result *r;
    ffn_peer *peers[FFN_PEER_COUNT];
    double *peer_t[FFN_PEER_COUNT];
    size_t n_peer_t[FFN_PEER_COUNT];
    double *moe_t[4]; /* route, permute, experts, combine */
    size_t n_moe_t;
    unsigned char *evict;
    long long sde_flops, sde_wbytes, sde_abytes;
    bool recording;
    int err;
} round_ctx;

static void evict_caches(round_ctx *c)
{
    if (!c->evict) return;
    /* writes: dirty lines force every earlier line out of an inclusive or victim LLC */
    for (size_t i = 0; i < EVICT_BYTES; i += 64) c->evict[i] = (unsigned char)(c->evict[i] + 1);
}

static void counters_accumulate(ffn_bench_result *r, const ffn_counter_value *v, size_t n)
{
    for (size_t i = 0; i < n && i < FFN_BENCH_MAX_EVENTS; i++) {
        ffn_counter_value *a = &r->counters[i];
        if (!r->calls) {
            *a = v[i];
            continue;
        }
        if (!a->available) continue;
        if (!v[i].available) {
            a->available = false;
            snprintf(a->reason, sizeof a->reason, "%s", v[i].reason);
            continue;
        }
        a->value += v[i].value;
    }
}

static int one_round(void *vctx, double *out)
{
    round_ctx *c = vctx;
    if (c->o->stop && *c->o->stop) return FFN_EINTERRUPTED;
    layer *L = c->L;
    if (c->cold) flush_lines(L->packed, L->packed_bytes);
    double tm[4] = {0, 0, 0, 0};
    ffn_counter_value vals[FFN_BENCH_MAX_EVENTS];
    ffn_counters *ctr = c->recording ? c->o->counters : NULL;
    if (ctr && ffn_counters_start(ctr)) ctr = NULL;
    double t0 = ffn_time_now_s();
    int rc = layer_forward(L, c->T, c->threads, L->kind == FFN_BENCH_MOE ? tm : NULL, NULL);
    double t1 = ffn_time_now_s();
    /* counted outside the kernel's loops, inside the counted window */
    ffn_sde_add(c->sde_flops, c->sde_wbytes, c->sde_abytes, 1);
    if (ctr) {
        size_t n = ffn_counters_count(ctr);
        if (n > FFN_BENCH_MAX_EVENTS) n = FFN_BENCH_MAX_EVENTS;
        if (ffn_counters_stop(ctr, vals, n) == 0) {
            counters_accumulate(c->r, vals, n);
            c->r->n_counters = n;
            c->r->calls++;
        }
    }
    if (rc) {
        c->err = rc;
        return rc;
    }
    if (c->recording && L->kind == FFN_BENCH_MOE && c->n_moe_t < MAX_SAMPLES) {
        for (int i = 0; i < 4; i++) c->moe_t[i][c->n_moe_t] = tm[i];
        c->n_moe_t++;
    }
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        if (!c->peers[p]) continue;
        if (c->o->stop && *c->o->stop) return FFN_EINTERRUPTED;
        if (c->cold) evict_caches(c);
        double p0 = ffn_time_now_s();
        int prc = ffn_peer_forward(c->peers[p], c->T, L->x, L->yref);
        double p1 = ffn_time_now_s();
        if (prc) {
            snprintf(c->r->peers[p].error, sizeof c->r->peers[p].error,
                     "forward failed (%s)", ffn_strerror(prc));
            ffn_peer_free(c->peers[p]);
            c->peers[p] = NULL;
            continue;
        }
        if (c->recording && c->n_peer_t[p] < MAX_SAMPLES) c->peer_t[p][c->n_peer_t[p]++] = p1 - p0;
    }
    *out = t1 - t0 > 1e-9 ? t1 - t0 : 1e-9;
    return 0;
}

static double median_of(double *v, size_t n)
{
    ffn_stats s;
    if (!n || ffn_stats_compute(v, n, &s)) return NAN;
    return s.median;
}

/* max |y - ref| / max |ref| over the first vt tokens. */
static double rel_err(const float *y, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)y[i] - (double)ref[i]);
        if (!(e <= num)) num = e; /* NaN propagates */
        if (fabs((double)ref[i]) > den) den = fabs((double)ref[i]);
    }
    return den > 0 ? num / den : num;
}

static int verify(layer *L, size_t T, ffn_bench_result *r, ffn_diag *diag)
{
    const size_t vt = T < VERIFY_TOKENS ? T : VERIFY_TOKENS, d = L->shape.d;
    int rc;
    if (L->kind == FFN_BENCH_DENSE) {
        const ffn_kernel *ref;
        if ((rc = ffn_kernel_get(FFN_ISA_REF, L->wdtype, &ref, diag))) return rc;
        size_t pb = ref->packed_bytes(&L->shape), wb = ref->workspace_bytes(&L->shape, vt, 1);
        void *p = xalloc(pb), *ws = xalloc(wb);
        if (!p || !ws) {
            free(p);
            free(ws);
            return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (reference)");
        }
        rc = ref->pack(&L->shape, &L->kw[0], p, pb);
        if (!rc) rc = ref->forward(&L->shape, p, vt, L->x, L->yref, ws, wb, 1);
        free(p);
        free(ws);
    } else {
        size_t wb = ffn_bmoe_ref_ws_bytes(L->moe);
        void *ws = xalloc(wb);
        if (!ws) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (reference)");
        rc = ffn_bmoe_ref_forward(L->moe, L->router, L->kw, vt, L->x, L->yref, ws, wb);
        free(ws);
    }
    if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "the reference kernel failed");
    r->verified = true;
    r->verify_tokens = vt;
    r->max_rel_err = rel_err(L->y, L->yref, vt * d);
    return 0;
}

static int run_case(const ffn_hw *hw, layer *L, const ffn_bench_case *cs, const ffn_bench_opts *o,
                    unsigned char *evict, ffn_bench_result *r, ffn_diag *diag)
{
    memset(r, 0, sizeof *r);
    r->c = *cs;
    snprintf(r->kernel, sizeof r->kernel, "%s", L->kern->name);
    r->isa = L->kern->isa;
    r->threads = resolve_threads(o->threads);
    r->cold = !o->warm;
    r->cdtype = ffn_bench_cdtype(cs->wdtype);
    r->max_rel_err = NAN;
    const size_t T = cs->tokens;
    int rc = layer_buffers(L, T, r->threads, o->seed, diag);
    if (rc) return rc;

    round_ctx c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.T = T;
    c.threads = r->threads;
    c.cold = r->cold;
    c.o = o;
    c.r = r;
    c.evict = evict;
    double *store = calloc((FFN_PEER_COUNT + 4) * MAX_SAMPLES, sizeof(double));
    if (!store) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
    for (int p = 0; p < FFN_PEER_COUNT; p++) c.peer_t[p] = store + (size_t)p * MAX_SAMPLES;
    for (int i = 0; i < 4; i++) c.moe_t[i] = store + (size_t)(FFN_PEER_COUNT + i) * MAX_SAMPLES;

    /* the work of one call */
    const double g = ffn_act_gated(cs->shape.act) ? 2.0 : 1.0;
    const double wb = ffn_dtype_bytes(cs->wdtype, 0);
    const double dd = (double)cs->shape.d, ff = (double)cs->shape.f;
    const double w1 = (g + 1.0) * dd * ff * wb + (cs->shape.bias ? (g * ff + dd) * wb : 0);
    if (L->kind == FFN_BENCH_DENSE) {
        r->flops = ffn_kernel_flops(&L->shape, T);
        r->bytes = ffn_kernel_bytes(L->kern, &L->shape, T);
        r->weight_bytes = w1;
    }

    /* peers, prepared once per token count (not timed) */
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        ffn_bench_peer *bp = &r->peers[p];
        bp->lib = (ffn_peer_lib)p;
        bp->speedup = NAN;
        if (!o->peers[p]) continue;
        bp->ran = true;
        if (L->kind != FFN_BENCH_DENSE) {
            snprintf(bp->error, sizeof bp->error, "the peers run dense layers only");
            continue;
        }
        /* OpenBLAS has fp32 weights only: a bf16 case is compared with its fp32 FFN */
        bp->dtype = p == FFN_PEER_OPENBLAS ? FFN_DT_FP32 : cs->wdtype;
        ffn_diag pd;
        ffn_diag_clear(&pd);
        int prc = ffn_peer_init((ffn_peer_lib)p, bp->dtype, &L->shape, &L->kw[0], T, o->threads,
                                &c.peers[p], &pd);
        if (prc) {
            snprintf(bp->error, sizeof bp->error, "%.180s", pd.msg[0] ? pd.msg : ffn_strerror(prc));
            c.peers[p] = NULL;
            continue;
        }
        snprintf(bp->describe, sizeof bp->describe, "%s", ffn_peer_describe(c.peers[p]));
    }

    if (L->kind == FFN_BENCH_MOE) {
        /* the routing, hence the work, is fixed by x: count it from one call */
        size_t *tok = calloc(L->E, sizeof *tok);
        if (!tok) {
            rc = FFN_ENOMEM;
            goto done;
        }
        rc = layer_forward(L, T, r->threads, NULL, tok);
        if (!rc) rc = ffn_bmoe_count(L->moe, T, tok, &r->flops, &r->bytes, &r->active_experts);
        free(tok);
        if (rc) goto done;
        r->weight_bytes = dd * (double)L->E * 4.0 + (double)r->active_experts * w1;
        r->has_moe = true;
    }
    c.sde_flops = (long long)llround(r->flops);
    c.sde_wbytes = (long long)llround(r->weight_bytes);
    c.sde_abytes = (long long)llround(r->bytes - r->weight_bytes);
    /* warm-up round (also pages in the workspaces and spins up the thread pools) */
    double t;
    c.recording = false;
    rc = one_round(&c, &t);
    if (rc) goto done;
    c.recording = true;

    ffn_repeat_opts ro;
    memset(&ro, 0, sizeof ro);
    if (o->reps) {
        ro.batch = o->reps;
        ro.window = 1;
        ro.min_samples = ro.max_samples = o->reps;
        ro.time_cap_s = 1e9;
    } else {
        ro.batch = 3;
        ro.window = 3;
        ro.rel_spread = 0.03;
        ro.min_samples = 9;
        ro.max_samples = 60;
        ro.time_cap_s = o->case_time_s > 0 ? o->case_time_s : 4.0;
    }
    ffn_repeat_result rr;
    rc = ffn_repeat_until_stable(one_round, &c, &ro, &rr);
    if (rc) goto done;
    r->time = rr.stats;
    r->stable = rr.stable;
    const double med = r->time.median;
    r->achieved_flops = r->flops / med;
    r->achieved_bps = r->bytes / med;
    r->intensity = r->bytes > 0 ? r->flops / r->bytes : NAN;
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        ffn_bench_peer *bp = &r->peers[p];
        if (!c.n_peer_t[p]) continue;
        ffn_stats_compute(c.peer_t[p], c.n_peer_t[p], &bp->time);
        bp->speedup = bp->time.median / med;
    }
    if (r->has_moe) {
        r->route_s = median_of(c.moe_t[0], c.n_moe_t);
        r->permute_s = median_of(c.moe_t[1], c.n_moe_t);
        r->experts_s = median_of(c.moe_t[2], c.n_moe_t);
        r->combine_s = median_of(c.moe_t[3], c.n_moe_t);
    }
    r->roofline_s = r->predicted_s = r->prediction_error = r->efficiency = NAN;
    r->prediction_error_min = NAN;
    r->bound = FFN_BOUND_MEMORY;
    if (hw && hw->mem_bandwidth_bps > 0 && hw->peak_flops[FFN_DT_FP32] > 0) {
        /* warm runs are predicted with the weights where the model says they stay */
        rc = ffn_bench_predict_weights(hw, cs, r->cold ? FFN_WEIGHTS_COLD : FFN_WEIGHTS_HOT,
                                       &r->roofline_s, &r->predicted_s, &r->bound,
                                       r->level_bytes, &r->weights_level);
        r->n_levels = hw->n_levels < FFN_HW_MAX_LEVELS ? hw->n_levels : FFN_HW_MAX_LEVELS;
        for (int i = 0; i < r->n_levels; i++)
            snprintf(r->level_names[i], sizeof r->level_names[i], "%s", hw->levels[i].name);
        r->level_bytes_source = "model";
        if (rc) {
            rc = ffn_diag_set(diag, rc, NULL, 0, 0, "the simulator could not cost this case");
            goto done;
        }
        r->prediction_error = r->predicted_s / med - 1.0;
        r->prediction_error_min = r->predicted_s / r->time.min - 1.0;
        r->efficiency = r->roofline_s / med;
    }
    if (o->verify) {
        /* y of the last timed call is still in L->y (the peers write into yref) */
        rc = layer_forward(L, T, r->threads, NULL, NULL);
        if (!rc) rc = verify(L, T, r, diag);
    }
done:
    if (rc == FFN_EINTERRUPTED)
        ffn_diag_set(diag, rc, NULL, 0, 0, "interrupted");
    else if (rc && (c.err || !diag || !diag->msg[0]))
        ffn_diag_set(diag, rc, NULL, 0, 0, "%s failed on T=%zu (%s)", L->kern->name, T,
                     ffn_strerror(rc));
    for (int p = 0; p < FFN_PEER_COUNT; p++) ffn_peer_free(c.peers[p]);
    free(store);
    return rc;
}

int ffn_bench_run(const ffn_hw *hw, const ffn_bench_case *cases, size_t n,
                  const ffn_bench_opts *o, ffn_bench_progress_fn progress, void *user,
                  ffn_bench_result *res, size_t *n_done, ffn_diag *diag)
{
    if (n_done) *n_done = 0;
    if (!cases || !o || !res || !n_done) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "bad arguments");
    ffn_diag_clear(diag);
    for (size_t i = 0; i < n; i++) {
        int rc = ffn_bench_case_check(&cases[i], o, diag);
        if (rc) return rc;
    }
    ffn_sde_init(); /* FFN_EUNSUPPORTED without PAPI: the counters still count */
    bool any_peer = false;
    for (int p = 0; p < FFN_PEER_COUNT; p++) any_peer = any_peer || o->peers[p];
    unsigned char *evict = NULL;
    if (any_peer && !o->warm) {
        evict = xalloc(EVICT_BYTES);
        if (!evict) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (evict)");
        memset(evict, 1, EVICT_BYTES);
    }
    layer L;
    memset(&L, 0, sizeof L);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (o->stop && *o->stop) {
            rc = FFN_EINTERRUPTED;
            break;
        }
        const ffn_bench_case *c = &cases[i];
        if (progress) {
            char label[160];
            snprintf(label, sizeof label, "%s %s T=%zu d=%zu f=%zu %s", c->kind == FFN_BENCH_MOE ? "moe" : "dense",
                     ffn_phase_name(c->phase), c->tokens, c->shape.d, c->shape.f,
                     ffn_dtype_name(c->wdtype));
            if (progress(user, (double)i / (double)n, label)) {
                rc = FFN_EINTERRUPTED;
                break;
            }
        }
        const ffn_kernel *k;
        if ((rc = get_kernel(c, o, &k, diag))) break;
        if (!same_layer(&L, c, k) && (rc = layer_prepare(&L, c, k, o->seed, diag))) break;
        rc = run_case(hw, &L, c, o, evict, &res[i], diag);
        if (rc) break;
        *n_done = i + 1;
    }
    if (progress && rc == 0) progress(user, 1.0, "done");
    if (rc == FFN_EINTERRUPTED && diag && !diag->msg[0]) ffn_diag_set(diag, rc, NULL, 0, 0, "interrupted");
    layer_free(&L);
    free(evict);
    return rc;
}

/* ---- calibration of the efficiency model ------------------------------------------------- */

void ffn_bench_fit_quality(const ffn_kcal_result *k, ffn_fit_quality *q)
{
    if (!q) return;
    memset(q, 0, sizeof *q);
    q->recorded = true;
    if (!k || k->n_fit == 0) {
        q->failed = true;
        return;
    }
    q->median_error = k->fit_median_abs;
    q->worst_error = k->fit_max_abs;
    q->held_out_median = k->check_median_abs;
    q->points = (uint32_t)k->n_fit;
}

typedef struct kshape_def {
    ffn_phase phase;
    size_t T, d, f;
    bool fit;
    bool moe;
} kshape_def;

/* Shapes chosen apart from the ones the kernels issue benches (d = 2048 / 4096) so that the
 * bench checks the model on shapes it was not fitted to. They span the regimes the kernels
 * go through: decode (T = 1, weights far beyond the caches even without flushing), small
 * batches where the weight stream dominates (T = 4..64), the ridge (T = 128..256) and
 * compute-bound prefill (T = 512, 768), each at small and large d, because the bf16 (AMX)
 * kernel's throughput at a given T changes with d and f and a fit on one end of either axis
 * mispredicts the other. Held-out ("check") cases are predicted only. */
static const kshape_def cal_full[] = {
    {FFN_PHASE_DECODE, 1, 3072, 8192, true, false},
    {FFN_PHASE_PREFILL, 4, 1536, 4096, true, false},
    {FFN_PHASE_PREFILL, 16, 2560, 6912, true, false},
    {FFN_PHASE_PREFILL, 32, 1024, 2816, true, false},
    {FFN_PHASE_PREFILL, 64, 1536, 4096, true, false},
    {FFN_PHASE_PREFILL, 128, 3072, 8192, true, false},
    {FFN_PHASE_PREFILL, 192, 2560, 6912, true, false},
    {FFN_PHASE_PREFILL, 256, 1536, 4096, true, false},
    {FFN_PHASE_PREFILL, 512, 1024, 2816, true, false},
    {FFN_PHASE_PREFILL, 768, 1024, 2816, true, false},
    {FFN_PHASE_PREFILL, 96, 3584, 9728, false, false},
    {FFN_PHASE_DECODE, 1, 2560, 6912, false, false},
    {FFN_PHASE_PREFILL, 8, 3584, 9728, false, false},
    {FFN_PHASE_PREFILL, 32, 1024, 2816, false, true},
};
static const kshape_def cal_tiny[] = {
    {FFN_PHASE_PREFILL, 32, 64, 96, true, false},
    {FFN_PHASE_PREFILL, 8, 96, 128, true, false},
    {FFN_PHASE_DECODE, 1, 128, 192, true, false},
    {FFN_PHASE_PREFILL, 8, 64, 96, false, true},
};
static const kshape_def cal_quick[] = {
    {FFN_PHASE_PREFILL, 256, 1024, 2816, true, false},
    {FFN_PHASE_PREFILL, 32, 1536, 4096, true, false},
    {FFN_PHASE_DECODE, 1, 2048, 6144, true, false},
    {FFN_PHASE_PREFILL, 96, 1280, 3456, false, false},
};

size_t ffn_kcal_cases(ffn_kcal_mode mode, ffn_bench_case *cases, bool *fit, size_t cap)
{
    const kshape_def *defs = mode == FFN_KCAL_TINY ? cal_tiny : mode == FFN_KCAL_QUICK ? cal_quick : cal_full;
    size_t nd = mode == FFN_KCAL_TINY    ? sizeof cal_tiny / sizeof cal_tiny[0]
                : mode == FFN_KCAL_QUICK ? sizeof cal_quick / sizeof cal_quick[0]
                                         : sizeof cal_full / sizeof cal_full[0];
    const ffn_kernel *kb;
    const bool have_bf16 = ffn_kernel_best(FFN_DT_BF16, &kb, NULL) == 0;
    size_t n = 0;
    for (int dt = 0; dt < 2; dt++) {
        if (dt == 1 && !have_bf16) break;
        for (size_t i = 0; i < nd && n < cap; i++) {
            ffn_bench_case *c = &cases[n];
            memset(c, 0, sizeof *c);
            c->kind = defs[i].moe ? FFN_BENCH_MOE : FFN_BENCH_DENSE;
            c->phase = defs[i].phase;
            c->tokens = defs[i].T;
            c->batch = defs[i].phase == FFN_PHASE_DECODE ? defs[i].T : 1;
            c->seq = defs[i].phase == FFN_PHASE_DECODE ? 0 : defs[i].T;
            c->shape.d = defs[i].d;
            c->shape.f = defs[i].f;
            c->shape.act = FFN_ACT_SWIGLU;
            c->n_experts = defs[i].moe ? 4 : 0;
            c->top_k = defs[i].moe ? 2 : 0;
            c->wdtype = dt ? FFN_DT_BF16 : FFN_DT_FP32;
            if (fit) fit[n] = defs[i].fit;
            n++;
        }
    }
    return n;
}

int ffn_bench_fit_eff(ffn_hw *hw, ffn_kcal_mode mode, int threads, const volatile sig_atomic_t *stop,
                      ffn_bench_progress_fn progress, void *user, ffn_kcal_result *out,
                      ffn_diag *diag)
{
    if (!hw || !out) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "bad arguments");
    memset(out, 0, sizeof *out);
    ffn_bench_case cases[FFN_KCAL_MAX];
    bool fit[FFN_KCAL_MAX];
    size_t n = ffn_kcal_cases(mode, cases, fit, FFN_KCAL_MAX);
    const ffn_kernel *k;
    if (ffn_kernel_best(FFN_DT_FP32, &k, diag) == 0) snprintf(out->fp32_kernel, 64, "%s", k->name);
    if (ffn_kernel_best(FFN_DT_BF16, &k, NULL) == 0) snprintf(out->bf16_kernel, 64, "%s", k->name);

    /* The kernels' parallel blocking: each thread takes whole 32-column weight panels over
     * all rows (no row padding: a short row block costs in proportion to its rows), so a tile
     * is 1 row x 32 columns and the units are the threads. */
    /* the reference kernel runs on one thread whatever it is given: its own compute units (and
     * ffn_calibration_to_hw gave it the one-core roof) */
    const ffn_kernel *k32 = NULL;
    const bool ref = ffn_kernel_best(FFN_DT_FP32, &k32, NULL) == 0 && k32->isa == FFN_ISA_REF;
    const int nt = ref ? 1 : resolve_threads(threads);
    hw->compute_units = (uint32_t)nt;
    hw->eff.n_tiles = 1;
    hw->eff.tiles[0][0] = 1;
    hw->eff.tiles[0][1] = 32;
    /* A kernel whose prefill engine pads rows (AMX: T up to a multiple of 32, except the few
     * tokens whose weights it streams) pays for the padded rows: its dtype gets its own tile. */
    memset(hw->eff.tiles_dt, 0, sizeof hw->eff.tiles_dt);
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        const ffn_kernel *kk;
        if (ffn_kernel_best((ffn_dtype)dt, &kk, NULL) || kk->row_tile <= 1) continue;
        ffn_tileset *ts = &hw->eff.tiles_dt[ffn_bench_cdtype((ffn_dtype)dt)];
        ts->n_tiles = 1;
        ts->tiles[0][0] = kk->row_tile;
        ts->tiles[0][1] = 32;
        ts->min_rows = kk->row_tile;
        ts->gemv_rows = kk->stream_rows;
    }

    ffn_bench_opts o;
    memset(&o, 0, sizeof o);
    o.threads = nt;
    o.stop = stop;
    o.case_time_s = mode == FFN_KCAL_FULL ? 1.5 : mode == FFN_KCAL_QUICK ? 1.0 : 0.2;
    o.seed = 1;
    ffn_bench_result *res = calloc(n, sizeof *res);
    if (!res) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
    size_t done = 0;
    int rc = ffn_bench_run(NULL, cases, n, &o, progress, user, res, &done, diag);
    ffn_fit_point pts[FFN_KCAL_MAX];
    size_t np = 0;
    for (size_t i = 0; i < done; i++) {
        out->runs[i].r = res[i];
        out->runs[i].fit = fit[i];
        if (!fit[i] || cases[i].kind != FFN_BENCH_DENSE) continue;
        ffn_fit_point *p = &pts[np++];
        memset(p, 0, sizeof *p);
        p->m = cases[i].tokens;
        p->k = cases[i].shape.d;
        p->f = cases[i].shape.f;
        p->act = cases[i].shape.act;
        p->wdtype = cases[i].wdtype;
        p->adtype = FFN_DT_FP32;
        p->cdtype_set = true;
        p->cdtype = ffn_bench_cdtype(cases[i].wdtype);
        p->time_s = res[i].time.min;
    }
    out->n_runs = done;
    free(res);
    if (rc) return rc;
    if (np == 0) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no kernel runs to fit");
    /* The roofs must bound the kernels' fastest runs (see ffn_kcal_result). */
    for (size_t i = 0; i < done; i++) {
        const ffn_bench_result *r = &out->runs[i].r;
        if (r->c.kind != FFN_BENCH_DENSE || !(r->time.min > 0)) continue;
        const ffn_dtype cdt = ffn_bench_cdtype(r->c.wdtype);
        const double bps = r->bytes / r->time.min, fps = r->flops / r->time.min;
        const double peak = hw->peak_flops[cdt] > 0 ? hw->peak_flops[cdt] : hw->peak_flops[FFN_DT_FP32];
        const bool membound = r->bytes / hw->mem_bandwidth_bps > r->flops / peak;
        if (membound && bps > hw->mem_bandwidth_bps) {
            if (!(out->bw_raised_from > 0)) out->bw_raised_from = hw->mem_bandwidth_bps;
            hw->mem_bandwidth_bps = bps;
        }
        if (fps > peak && hw->peak_flops[cdt] > 0) {
            if (!(out->peak_raised_from[cdt] > 0)) out->peak_raised_from[cdt] = hw->peak_flops[cdt];
            hw->peak_flops[cdt] = fps;
        }
    }
    if (out->bw_raised_from > 0) {
        size_t l = strlen(out->notes);
        snprintf(out->notes + l, sizeof out->notes - l,
                 "%sthe read-bandwidth sweep's tail gave %.2f GB/s but a decode kernel streamed "
                 "its weights at %.2f GB/s: the memory roof is raised to that",
                 l ? "; " : "", out->bw_raised_from / 1e9, hw->mem_bandwidth_bps / 1e9);
    }
    for (int dt = 0; dt < FFN_DT_COUNT; dt++)
        if (out->peak_raised_from[dt] > 0) {
            size_t l = strlen(out->notes);
            snprintf(out->notes + l, sizeof out->notes - l,
                     "%sa %s kernel ran at %.1f GFLOP/s, above the measured peak %.1f: the peak "
                     "is raised to that",
                     l ? "; " : "", ffn_dtype_name((ffn_dtype)dt), hw->peak_flops[dt] / 1e9,
                     out->peak_raised_from[dt] / 1e9);
        }
    hw->eff.launch_s = 0;
    hw->eff.overlap_p = 0;
    /* Decode (one token) streams the weights with nothing else to do and reaches a larger
     * share of the bandwidth than the weight-bound batches: its own fraction when the fit
     * has both kinds of point (not the tiny test set). */
    unsigned flags = FFN_FIT_COMPUTE_BY_DTYPE | FFN_FIT_LAUNCH | FFN_FIT_OVERLAP;
    if (ffn_fit_points_split_gemv(pts, np)) flags |= FFN_FIT_MEMORY_GEMV;
    hw->eff.memory_max_gemv = 0;
    rc = ffn_eff_fit(hw, pts, np, flags, &out->eff);
    if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "the efficiency fit failed");
    /* The launch cost cannot exceed the fastest call the fit saw: a launch the fit drove above
     * it (trading it against the efficiencies) is held at that bound and the rest refitted. */
    double tmin = INFINITY;
    for (size_t i = 0; i < np; i++)
        tmin = fmin(tmin, pts[i].time_s);
    out->launch_bound_s = tmin;
    if (isfinite(tmin) && out->eff.launch_s > tmin) {
        hw->eff.launch_s = tmin;
        rc = ffn_eff_fit(hw, pts, np, flags & ~(unsigned)FFN_FIT_LAUNCH, &out->eff);
        if (rc) return ffn_diag_set(diag, rc, NULL, 0, 0, "the efficiency fit failed");
        out->eff.launch_s = tmin;
        size_t l = strlen(out->notes);
        snprintf(out->notes + l, sizeof out->notes - l,
                 "%sthe fit's launch cost was held at %.3g us, the fastest calibration call",
                 l ? "; " : "", tmin * 1e6);
    }
    /* the spec format's ranges: beyond p = 64 the p-norm is max() within 1.1% */
    if (out->eff.overlap_p > 64) out->eff.overlap_p = 64;
    if (out->eff.launch_s > 1.0) out->eff.launch_s = 1.0;
    hw->eff = out->eff;
    /* predict every run with the fitted spec */
    double fe[FFN_KCAL_MAX], ce[FFN_KCAL_MAX];
    size_t nf = 0, nc = 0;
    for (size_t i = 0; i < out->n_runs; i++) {
        ffn_bench_result *r = &out->runs[i].r;
        if (ffn_bench_predict(hw, &r->c, &r->roofline_s, &r->predicted_s, &r->bound, NULL, NULL))
            continue;
        r->prediction_error = r->predicted_s / r->time.median - 1.0;
        r->prediction_error_min = r->predicted_s / r->time.min - 1.0;
        r->efficiency = r->roofline_s / r->time.median;
        if (out->runs[i].fit)
            fe[nf++] = fabs(r->prediction_error_min);
        else
            ce[nc++] = fabs(r->prediction_error_min);
    }
    ffn_stats s;
    if (nf && !ffn_stats_compute(fe, nf, &s)) {
        out->fit_median_abs = s.median;
        out->fit_max_abs = s.max;
    }
    if (nc && !ffn_stats_compute(ce, nc, &s)) {
        out->check_median_abs = s.median;
        out->check_max_abs = s.max;
    }
    out->n_fit = nf;
    out->n_check = nc;
    return 0;
}
