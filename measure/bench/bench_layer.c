/* The bench runner's prepared layer (measure/bench/bench_internal.h): random weights (uniform,
 * scaled by 1/sqrt(fan-in)), packed once for ffnroof's kernel; the activation and workspace buffers
 * for a token count; one forward call; the check of the last call against the reference kernel. */
#include "bench_internal.h"
#include "internal.h"

#include "ffnroof/rand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_TOKENS 16

/* ---- small helpers ----------------------------------------------------------------------- */

/* SplitMix64 (include/ffnroof/rand.h): the state advances by a constant and each value is a
 * function of the state alone, so the i-th value after state s is mix(s + (i + 1) * GAMMA) and a
 * fill can be cut into parts that threads compute independently, giving the same values as one
 * thread. */
#define GAMMA FFN_SPLITMIX64_GAMMA

typedef struct fill_job {
    float *p;
    size_t n;
    float a;
    uint64_t base;
} fill_job;

static void fill_part(void *arg, int tid, int nthreads)
{
    const fill_job *j = arg;
    const size_t i0 = j->n * (size_t)tid / (size_t)nthreads;
    const size_t i1 = j->n * (size_t)(tid + 1) / (size_t)nthreads;
    for (size_t i = i0; i < i1; i++) {
        const uint64_t r = ffn_splitmix64_mix(j->base + (uint64_t)(i + 1) * GAMMA);
        j->p[i] = j->a * ((float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f);
    }
}

/* Uniform in [-a, a). Large fills run on every allowed CPU (up to 8): the weights of a
 * d = 2048, f = 6144 layer took 0.12 s on one thread of a family 6 model 207 VM, twice
 * for each such case of a quick calibration. */
#define FILL_PARALLEL_MIN ((size_t)1 << 20)

static void fill(float *p, size_t n, float a, uint64_t *seed)
{
    fill_job j = {.p = p, .n = n, .a = a, .base = *seed};
    int nt = n >= FILL_PARALLEL_MIN ? ffn__allowed_cpus() : 1;
    if (nt > 8) nt = 8;
    if (nt <= 1 || ffn__team_run(nt, fill_part, &j) != 0) fill_part(&j, 0, 1);
    *seed += (uint64_t)n * GAMMA;
}

/* ---- a prepared layer -------------------------------------------------------------------- */

void ffn_blayer_free(ffn_blayer *L)
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

bool ffn_blayer_same(const ffn_blayer *L, const ffn_bench_case *c, const ffn_kernel *k)
{
    return L->packed && L->kind == c->kind && L->shape.d == c->shape.d &&
           L->shape.f == c->shape.f && L->shape.act == c->shape.act &&
           L->shape.bias == c->shape.bias && L->wdtype == c->wdtype && L->kern == k &&
           L->shape.group == c->shape.group && L->shape.zero_point == c->shape.zero_point &&
           (c->kind == FFN_BENCH_DENSE || (L->E == c->n_experts && L->k == c->top_k));
}

int ffn_blayer_prepare(ffn_blayer *L, const ffn_bench_case *c, const ffn_kernel *k, uint64_t seed,
                       ffn_diag *diag)
{
    ffn_blayer_free(L);
    L->kind = c->kind;
    L->shape = c->shape;
    L->wdtype = c->wdtype;
    L->kern = k;
    L->E = c->kind == FFN_BENCH_MOE ? c->n_experts : 1;
    L->k = c->top_k;
    const size_t d = c->shape.d, f = c->shape.f, E = L->E;
    const bool gated = ffn_act_gated(c->shape.act), bias = c->shape.bias;
    const size_t per = (gated ? 3 : 2) * d * f + (bias ? (gated ? 2 : 1) * f + d : 0);
    L->w = ffn__bench_xalloc(E * per * sizeof(float));
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
        L->packed = ffn__bench_xalloc(L->packed_bytes);
        if (!L->packed) goto nomem;
        rc = k->pack(&L->shape, &L->kw[0], L->packed, L->packed_bytes);
    } else {
        L->router = ffn__bench_xalloc(d * E * sizeof(float));
        if (!L->router) goto nomem;
        fill(L->router, d * E, ag, &s);
        L->moe = ffn_bmoe_new(k, &c->shape, E, c->top_k);
        if (!L->moe) goto nomem;
        L->packed_bytes = ffn_bmoe_packed_bytes(L->moe);
        L->packed = ffn__bench_xalloc(L->packed_bytes);
        if (!L->packed) goto nomem;
        rc = ffn_bmoe_pack(L->moe, L->router, L->kw, L->packed, L->packed_bytes);
    }
    if (rc) {
        ffn_blayer_free(L);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "packing the weights for %s failed", k->name);
    }
    return 0;
nomem:
    ffn_blayer_free(L);
    return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0,
                        "out of memory preparing a layer d=%zu f=%zu (x%zu)", d, f, E);
}

/* Buffers for T tokens and `threads` threads. */
int ffn_blayer_buffers(ffn_blayer *L, size_t T, int threads, uint64_t seed, ffn_diag *diag)
{
    const size_t d = L->shape.d;
    size_t need = L->kind == FFN_BENCH_DENSE ? L->kern->workspace_bytes(&L->shape, T, threads)
                                             : ffn_bmoe_ws_bytes(L->moe, T, threads);
    if (T > L->Tmax) {
        free(L->x);
        free(L->y);
        free(L->yref);
        L->x = ffn__bench_xalloc(T * d * sizeof(float));
        L->y = ffn__bench_xalloc(T * d * sizeof(float));
        L->yref = ffn__bench_xalloc(T * d * sizeof(float));
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
        L->ws = ffn__bench_xalloc(need);
        L->ws_bytes = L->ws ? need : 0;
        if (!L->ws) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (workspace)");
    }
    return 0;
}

int ffn_blayer_forward(ffn_blayer *L, size_t T, int threads, double *timing, size_t *tokens)
{
    if (L->kind == FFN_BENCH_DENSE)
        return L->kern->forward(&L->shape, L->packed, T, L->x, L->y, L->ws, L->ws_bytes, threads);
    return ffn_bmoe_forward(L->moe, L->packed, T, L->x, L->y, L->ws, L->ws_bytes, threads, timing,
                            tokens);
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

int ffn_blayer_verify(ffn_blayer *L, size_t T, ffn_bench_result *r, ffn_diag *diag)
{
    const size_t vt = T < VERIFY_TOKENS ? T : VERIFY_TOKENS, d = L->shape.d;
    int rc;
    if (L->kind == FFN_BENCH_DENSE) {
        const ffn_kernel *ref;
        if ((rc = ffn_kernel_get_q(FFN_ISA_REF, L->wdtype, L->kern->adtype, &ref, diag))) return rc;
        size_t pb = ref->packed_bytes(&L->shape), wb = ref->workspace_bytes(&L->shape, vt, 1);
        void *p = ffn__bench_xalloc(pb), *ws = ffn__bench_xalloc(wb);
        if (!p || !ws) {
            free(p);
            free(ws);
            return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (reference)");
        }
        rc = ref->pack(&L->shape, &L->kw[0], p, pb);
        if (!rc) rc = ref->forward(&L->shape, p, vt, L->x, L->yref, ws, wb, 1);
        free(p);
        free(ws);
    } else if (L->wdtype == FFN_DT_INT8 || L->wdtype == FFN_DT_INT4) {
        /* quantized experts: the MoE layer with the format's reference kernel as its experts */
        const ffn_kernel *ref;
        if ((rc = ffn_kernel_get_q(FFN_ISA_REF, L->wdtype, L->kern->adtype, &ref, diag))) return rc;
        rc = ffn_bmoe_kernel_forward(L->moe, ref, L->router, L->kw, vt, L->x, L->yref);
    } else {
        size_t wb = ffn_bmoe_ref_ws_bytes(L->moe);
        void *ws = ffn__bench_xalloc(wb);
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
