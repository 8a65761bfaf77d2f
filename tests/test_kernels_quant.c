/* Criterion tests of the quantized FFN kernels (int8 and int4 weights: kernels/driver/ukernel.h
 * gives their layouts, include/ffnroof/quant.h the formats): every quantized kernel this CPU runs
 * (ffn_kernel_list) against the scalar reference of the same weight and activation format, on
 * shapes with odd d and f, T across the decode/prefill switch and the row tiles, every
 * activation, with and without biases, every group size, with and without zero points; the
 * reference against the formats themselves; W8A8 bit-exact where the data make every scale a
 * power of two; NaN rows; thread counts; bad arguments; dispatch per CPU class; FFNROOF_ISA.
 *
 * Error bounds, derived like tests/test_kernels.c's (Higham's gamma(n) = n u / (1 - n u), u =
 * 2^-24, bounds the error of an n-term fp32 dot product in any order by gamma(n) sum|terms|).
 * The oracle and the kernel multiply the same dequantized weights w' (quant.h's codes times the
 * stored scales: fp32 per channel for int8, bf16 per group for int4) and the same activations
 * (fp32, or x rounded to bf16 for the A16 kernels), so only the summation differs:
 *  - float activations: |dg| <= gamma(d + 4) sum_k |x_k| B_kj + u |b_j|, where B = |w'| (a
 *    kernel may factor the scale out of a column or group: <= 2 more roundings per term), and
 *    with zero points B = |w'| + 30 s (a kernel may sum x u and z sum x apart: |u|, |z| <= 15);
 *    the activation, h and y steps as in test_kernels.c, with uh = 2^-8 for the A16 kernels
 *    (h rounded to bf16: one ulp either side of a rounding tie);
 *  - W8A8: the codes of x are the oracle's exactly (same max, same fp32 division, same
 *    rounding), so the gate/up sums are exact integers; the fp32 rescale adds <= 4 u |g|; h
 *    then differs by dh (as above) and its per-token scale by dsh <= max dh / 127 + u sh, so a
 *    code of h can differ by one only where h / sh lies within (dh + |h| dsh / sh) / sh of a
 *    rounding boundary (those elements add sh |w'| to the bound; the rest add |q_h| dsh |w'|);
 *  - W4A16 summed in fp16 (the AVX512-FP16 table, ukr_avx512fp16_q.c): each lane sums 16 exact
 *    products of a code and an activation scaled by 2^e (max |a 2^e| in [128, 256)) in fp16
 *    before fp32 takes over, adding gamma_16 with u = 2^-11 of sum |a_k| B_kj, and fp16
 *    subnormals (values below 2^-14) err by at most 2^-25 a conversion and an FMA: with
 *    |code| <= 8, 2^-17 a 32-row chunk in scaled units, 2^-29 max |a| s_kj a term once 2^-e <=
 *    max |a| / 128 undoes the scaling (s the group scale); both per matrix, for a and for h.
 * A kernel passes when |y - y_ref| <= 2 dy. A layout or indexing bug moves y by O(|y|), far
 * outside these bounds (the W8A8 flip term covers a few elements of h, not a row). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "ffnroof/kernels.h"
#include "ffnroof/quant.h"
#include "ffnroof/rand.h"

#define MAXK 256

static ffn_rng rng;
static float frand(void) /* uniform in [-1, 1) */
{
    return (float)(ffn_rng_unif(&rng) * 2.0 - 1.0);
}

static bool gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

static float *frand_array(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand() * scale;
    return p;
}

static bool is_quant(const ffn_kernel *k)
{
    return k->wdtype == FFN_DT_INT8 || k->wdtype == FFN_DT_INT4;
}

/* The quantized kernels this CPU runs, the references excluded. */
static size_t quant_kernels(const ffn_kernel **ks)
{
    const ffn_kernel *all[MAXK];
    const size_t n = ffn_kernel_list(all, MAXK);
    size_t m = 0;
    for (size_t i = 0; i < n && i < MAXK; i++)
        if (is_quant(all[i]) && all[i]->isa != FFN_ISA_REF) ks[m++] = all[i];
    return m;
}

static const ffn_kernel *ref_q(ffn_dtype wdt, ffn_dtype adt)
{
    const ffn_kernel *r = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_get_q(FFN_ISA_REF, wdt, adt, &r, &dg), 0, "%s", dg.msg);
    cr_assert_eq(r->wdtype, wdt);
    cr_assert_eq(r->adtype, adt);
    return r;
}

/* ---- one layer's weights, and the dequantized values both sides multiply ------------------ */

typedef struct wset {
    ffn_kshape s;
    float *wg, *wu, *wd, *bg, *bu, *bd;
    ffn_kweights kw;
} wset;

static void wset_init(wset *w, ffn_kshape s, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    ffn_rng_seed(&rng, seed);
    w->s = s;
    const size_t d = s.d, f = s.f;
    const float s1 = 2.0f / sqrtf((float)d), s2 = 1.0f / sqrtf((float)f);
    w->wg = frand_array(d * f, s1);
    w->wu = gated(s.act) ? frand_array(d * f, s1) : NULL;
    w->wd = frand_array(f * d, s2);
    if (s.bias) {
        w->bg = frand_array(f, 0.5f);
        w->bu = gated(s.act) ? frand_array(f, 0.5f) : NULL;
        w->bd = frand_array(d, 0.5f);
    }
    w->kw = (ffn_kweights){w->wg, w->wu, w->wd, w->bg, w->bu, w->bd};
}

static void wset_free(wset *w)
{
    free(w->wg);
    free(w->wu);
    free(w->wd);
    free(w->bg);
    free(w->bu);
    free(w->bd);
}

static float bf16_round(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

/* A [K][N] matrix as the kernels see it: dequantized values, the bound weights B (|w'|, plus
 * 30 s with zero points) and, for int8, the codes and column scales. */
typedef struct dq {
    float *w, *b;
    int8_t *q;
    float *sc;
} dq;

static void dq_init(dq *o, ffn_dtype wdt, const ffn_kshape *s, size_t K, size_t N, const float *w)
{
    const ffn_qweight_fmt fmt =
        wdt == FFN_DT_INT8
            ? (ffn_qweight_fmt){.gran = FFN_QG_CHANNEL, .bits = 8}
            : (ffn_qweight_fmt){
                  .gran = FFN_QG_GROUP, .bits = 4, .group = s->group, .zero_point = s->zero_point};
    const size_t ns = ffn_qweight_nscales(&fmt, K, N);
    cr_assert_gt(ns, 0);
    o->w = malloc(K * N * sizeof *o->w);
    o->b = malloc(K * N * sizeof *o->b);
    o->q = malloc(K * N);
    o->sc = malloc(ns * sizeof *o->sc);
    uint8_t *z = malloc(ns);
    cr_assert(o->w && o->b && o->q && o->sc && z);
    cr_assert_eq(ffn_qweight_quantize(&fmt, K, N, w, o->q, o->sc, z), 0);
    if (wdt == FFN_DT_INT4)
        for (size_t i = 0; i < ns; i++)
            o->sc[i] = bf16_round(o->sc[i]); /* the stored int4 scales are bf16 */
    cr_assert_eq(ffn_qweight_dequantize(&fmt, K, N, o->q, o->sc, z, o->w), 0);
    for (size_t k = 0; k < K; k++)
        for (size_t n = 0; n < N; n++) {
            const size_t i = k * N + n;
            const float sg = wdt == FFN_DT_INT4 ? o->sc[k / s->group * N + n] : 0.0f;
            o->b[i] = fabsf(o->w[i]) + (s->zero_point ? 30.0f * sg : 0.0f);
        }
    free(z);
}

static void dq_free(dq *o)
{
    free(o->w);
    free(o->b);
    free(o->q);
    free(o->sc);
}

typedef struct qset {
    dq g, u, d;
} qset;

static void qset_init(qset *q, ffn_dtype wdt, const wset *w)
{
    memset(q, 0, sizeof *q);
    dq_init(&q->g, wdt, &w->s, w->s.d, w->s.f, w->wg);
    if (w->wu) dq_init(&q->u, wdt, &w->s, w->s.d, w->s.f, w->wu);
    dq_init(&q->d, wdt, &w->s, w->s.f, w->s.d, w->wd);
}

static void qset_free(qset *q)
{
    dq_free(&q->g);
    if (q->u.w) dq_free(&q->u);
    dq_free(&q->d);
}

/* ---- bounds ------------------------------------------------------------------------------- */

static double act_d(ffn_act a, double g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return g < 0 ? 0 : g;
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return 0.5 * g * (1 + erf(g / sqrt(2.0)));
    case FFN_ACT_GELU_TANH:
        return 0.5 * g * (1 + tanh(0.79788456080286535588 * (g + 0.044715 * g * g * g)));
    default:
        return g / (1 + exp(-g));
    }
}

static double gamma_n(size_t n)
{
    const double u = ldexp(1.0, -24);
    return (double)n * u / (1 - (double)n * u);
}

/* The fp16-sum terms of one output column j of a [K][N] int4 matrix (the W4A16 fp16 bullet
 * above): gh sum_k |a_k| B_kj + 2^-29 amax sum_k s_kj, from sa = sum_k |a_k| B_kj. */
static double h16_term(const dq *m, const ffn_kshape *s, size_t K, size_t N, size_t j, double sa,
                       double amax)
{
    const double uh = ldexp(1.0, -11), gh = 16 * uh / (1 - 16 * uh);
    double ss = 0;
    for (size_t k = 0; k < K; k++)
        ss += m->sc[k / s->group * N + j];
    return gh * sa + ldexp(amax, -29) * ss;
}

/* h and its bound dh for token t (g, u from activations a[] of d values, or from the exact
 * integer sums when qx is given; h16: with the fp16-sum terms). */
static void gate_up(const wset *w, const qset *q, const double *a, const int8_t *qx, float sx,
                    bool h16, double *h, double *dh)
{
    double amax = 0;
    for (size_t k = 0; a && k < w->s.d; k++)
        amax = fabs(a[k]) > amax ? fabs(a[k]) : amax;
    const size_t d = w->s.d, f = w->s.f;
    const double u = ldexp(1.0, -24), g1 = gamma_n(d + 4);
    const bool gt = gated(w->s.act);
    for (size_t j = 0; j < f; j++) {
        double g = 0, sg = 0, uu = gt ? 0 : 1, su = 0;
        for (size_t k = 0; k < d; k++) {
            const double av = qx ? (double)qx[k] : a[k];
            g += av * (qx ? (double)q->g.q[k * f + j] : (double)q->g.w[k * f + j]);
            sg += fabs(av) * q->g.b[k * f + j];
            if (gt) {
                uu += av * (qx ? (double)q->u.q[k * f + j] : (double)q->u.w[k * f + j]);
                su += fabs(av) * q->u.b[k * f + j];
            }
        }
        double dg, du = 0;
        if (qx) {
            g *= (double)sx * q->g.sc[j];
            dg = 4 * u * fabs(g);
            if (gt) {
                uu *= (double)sx * q->u.sc[j];
                du = 4 * u * fabs(uu);
            }
        } else {
            dg = g1 * sg;
            du = gt ? g1 * su : 0;
            if (h16) {
                dg += h16_term(&q->g, &w->s, d, f, j, sg, amax);
                du += gt ? h16_term(&q->u, &w->s, d, f, j, su, amax) : 0;
            }
        }
        if (w->bg) {
            g += w->bg[j];
            dg += u * (fabs(g) + fabs(w->bg[j]));
        }
        if (gt && w->bu) {
            uu += w->bu[j];
            du += u * (fabs(uu) + fabs(w->bu[j]));
        }
        const double av = act_d(w->s.act, g);
        const double da = 1.2 * dg + 1e-6 * fabs(av) + ldexp(1.0, -22) * fabs(g) + 1e-37;
        h[j] = av * uu;
        dh[j] = da * (fabs(uu) + du) + fabs(av) * du + 2 * u * fabs(h[j]);
    }
}

/* The bound dy[t][i] for a kernel of activation format adt. */
static void error_bound(const wset *w, const qset *q, ffn_dtype adt, bool h16, size_t T,
                        const float *x, double *dy)
{
    const size_t d = w->s.d, f = w->s.f;
    const double u = ldexp(1.0, -24), uh = adt == FFN_DT_BF16 ? ldexp(1.0, -8) : 0.0;
    const double g2 = gamma_n(f + 4);
    double *a = malloc(d * sizeof *a), *h = malloc(f * sizeof *h), *dh = malloc(f * sizeof *dh);
    double *acc = malloc(d * sizeof *acc);
    float *hf = malloc(f * sizeof *hf);
    int8_t *qa = malloc(d > f ? d : f);
    cr_assert(a && h && dh && acc && hf && qa);
    for (size_t t = 0; t < T; t++) {
        const float *xt = x + t * d;
        for (size_t i = 0; i < d; i++)
            acc[i] = 0;
        if (adt != FFN_DT_INT8) {
            for (size_t k = 0; k < d; k++)
                a[k] = adt == FFN_DT_BF16 ? bf16_round(xt[k]) : xt[k];
            gate_up(w, q, a, NULL, 0, h16, h, dh);
            double hmax = 0;
            for (size_t j = 0; j < f; j++) {
                dh[j] += uh * fabs(h[j]);
                hmax = fabs(h[j]) + dh[j] > hmax ? fabs(h[j]) + dh[j] : hmax;
                for (size_t i = 0; i < d; i++)
                    acc[i] += dh[j] * fabs(q->d.w[j * d + i]) +
                              g2 * (fabs(h[j]) + dh[j]) * q->d.b[j * d + i];
            }
            for (size_t i = 0; h16 && i < d; i++) {
                double sa = 0;
                for (size_t j = 0; j < f; j++)
                    sa += (fabs(h[j]) + dh[j]) * q->d.b[j * d + i];
                acc[i] += h16_term(&q->d, &w->s, f, d, i, sa, hmax);
            }
        } else {
            float sx, sh;
            cr_assert_eq(ffn_qact_quantize(1, d, xt, qa, &sx), 0);
            gate_up(w, q, NULL, qa, sx, false, h, dh);
            double mdh = 0;
            for (size_t j = 0; j < f; j++) {
                hf[j] = (float)h[j];
                dh[j] += u * fabs(h[j]);
                mdh = dh[j] > mdh ? dh[j] : mdh;
            }
            cr_assert_eq(ffn_qact_quantize(1, f, hf, qa, &sh), 0);
            const double dsh = mdh / 127 + u * sh;
            for (size_t j = 0; j < f; j++) {
                bool flip = false;
                if (sh > 0) {
                    const double v = fabs(hf[j] / (double)sh), fr = v - floor(v);
                    const double tol = 1.5 * (dh[j] + fabs(hf[j]) * dsh / sh) / sh + 1e-6;
                    flip = fabs(fr - 0.5) <= tol;
                } else {
                    flip = mdh > 0;
                }
                const double e = (flip ? sh + dsh : 0) + fabs((double)qa[j]) * dsh;
                for (size_t i = 0; i < d; i++)
                    acc[i] += e * fabs(q->d.w[j * d + i]);
            }
        }
        for (size_t i = 0; i < d; i++)
            dy[t * d + i] = acc[i] + 4 * u * fabs(acc[i]) + u * (w->bd ? fabs(w->bd[i]) : 0);
    }
    free(a);
    free(h);
    free(dh);
    free(acc);
    free(hf);
    free(qa);
}

/* ---- running a kernel --------------------------------------------------------------------- */

/* Pack and run k (x and y offset by xo floats from malloc's alignment, the workspace by 3
 * bytes when xo is set). Returns forward's code. */
static int run_k(const ffn_kernel *k, const wset *w, size_t T, const float *x, float *y,
                 int threads)
{
    const size_t pb = k->packed_bytes(&w->s);
    cr_assert_gt(pb, 0, "%s: no packed size for d=%zu f=%zu G=%u", k->name, w->s.d, w->s.f,
                 w->s.group);
    unsigned char *packed = malloc(pb);
    cr_assert_not_null(packed);
    int rc = k->pack(&w->s, &w->kw, packed, pb);
    cr_assert_eq(rc, 0, "%s: pack failed: %d", k->name, rc);
    const size_t wb = k->workspace_bytes(&w->s, T, threads);
    unsigned char *ws = malloc(wb + 8);
    cr_assert_not_null(ws);
    rc = k->forward(&w->s, packed, T, x, y, wb ? ws + 3 : NULL, wb, threads);
    free(ws);
    free(packed);
    return rc;
}

static void compare(const ffn_kernel *k, const wset *w, size_t T, const float *y, const float *yref,
                    const double *dy)
{
    for (size_t i = 0; i < T * w->s.d; i++) {
        if (isnan(yref[i])) {
            cr_assert(isnan(y[i]), "%s: y[%zu] = %g, reference NaN", k->name, i, (double)y[i]);
            continue;
        }
        const double err = fabs((double)y[i] - (double)yref[i]);
        cr_assert(err <= 2 * dy[i] + 1e-30,
                  "%s %s bias=%d G=%u zp=%d T=%zu d=%zu f=%zu: y[%zu] = %.9g ref %.9g err %.3g "
                  "> bound %.3g",
                  k->name, ffn_act_name(w->s.act), (int)w->s.bias, w->s.group, (int)w->s.zero_point,
                  T, w->s.d, w->s.f, i, (double)y[i], (double)yref[i], err, 2 * dy[i]);
    }
}

/* The W4A16 kernel that sums its decode products in fp16 (the bound's last bullet). */
static bool sums_in_fp16(const ffn_kernel *k)
{
    return k->wdtype == FFN_DT_INT4 && (ffn_kernel_requires(k) & FFN_CPU_AVX512_FP16);
}

/* Every kernel of ks storing wdt on one shape and activation, against the reference of each
 * activation format (computed once per format). */
static void check_shape(const ffn_kernel *const *ks, size_t nk, ffn_dtype wdt, size_t T,
                        ffn_kshape s, int threads)
{
    wset w;
    wset_init(&w, s, T * 7919 + s.d * 31 + s.f + (size_t)s.act + s.group);
    float *x = frand_array(T * s.d, 1.0f);
    float *y = malloc((T * s.d + 1) * sizeof *y), *yref = malloc((T * s.d + 1) * sizeof *yref);
    double *dy = malloc((T * s.d + 1) * sizeof *dy), *dy16 = malloc((T * s.d + 1) * sizeof *dy16);
    cr_assert(y && yref && dy && dy16);
    qset q;
    qset_init(&q, wdt, &w);
    static const ffn_dtype adts[] = {FFN_DT_FP32, FFN_DT_BF16, FFN_DT_INT8};
    for (size_t ai = 0; ai < 3; ai++) {
        bool any = false, any16 = false;
        for (size_t ki = 0; ki < nk; ki++)
            if (ks[ki]->wdtype == wdt && ks[ki]->adtype == adts[ai]) {
                any = true;
                any16 |= sums_in_fp16(ks[ki]);
            }
        if (!any) continue;
        cr_assert_eq(run_k(ref_q(wdt, adts[ai]), &w, T, x, yref, 1), 0);
        error_bound(&w, &q, adts[ai], false, T, x, dy);
        if (any16) error_bound(&w, &q, adts[ai], true, T, x, dy16);
        for (size_t ki = 0; ki < nk; ki++) {
            if (ks[ki]->wdtype != wdt || ks[ki]->adtype != adts[ai]) continue;
            for (size_t i = 0; i < T * s.d; i++)
                y[i] = NAN; /* every output must be written */
            cr_assert_eq(run_k(ks[ki], &w, T, x, y, threads), 0, "%s forward failed", ks[ki]->name);
            compare(ks[ki], &w, T, y, yref, sums_in_fp16(ks[ki]) ? dy16 : dy);
        }
    }
    qset_free(&q);
    free(x);
    free(y);
    free(yref);
    free(dy);
    free(dy16);
    wset_free(&w);
}

/* T: 0, across every table's decode/prefill switch (stream_rows 2..14) and past the row tiles
 * (14, 32) and one row block of the portable W8A8 table (64). */
static const size_t Ts[] = {0, 1, 2, 3, 4, 5, 7, 15, 17, 33, 70};

/* FFNROOF_KERNEL_SHAPES=small (.ci/aarch64.sh on the 256- and 512-bit SVE CPUs, the slowest to
 * emulate), and every emulated run (FFNROOF_EMULATED: qemu-x86.sh's TCG is 20-100x slower, and
 * the same kernels run the full set natively): the T that cross a table's switch or tile (0, 1, 4,
 * 5, 17, 33) on shapes of at most 2^14 weights per matrix, which still hold every column and K tail
 * of every panel width. */
static bool small_run(size_t T, size_t d, size_t f)
{
    const char *sel = getenv("FFNROOF_KERNEL_SHAPES");
    if ((!sel || strcmp(sel, "small")) && !getenv("FFNROOF_EMULATED")) return true;
    const bool t_ok = T == 0 || T == 1 || T == 4 || T == 5 || T == 17 || T == 33;
    return t_ok && d * f <= ((size_t)1 << 14);
}

Test(kernels_quant, int8_weights_match_the_reference, .timeout = 1800)
{
    /* odd d and f: every column and K tail of every panel width (8, 12, 16, 32 columns) */
    static const size_t shapes[][2] = {{1, 1},    {15, 31},  {17, 33},  {64, 31}, {33, 65},
                                       {100, 47}, {64, 130}, {130, 64}, {3, 250}};
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    if (nk == 0) cr_skip_test("no quantized ISA kernel on this CPU: only the reference");
    size_t n = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++, n++) {
            const ffn_act act = (ffn_act)(n % FFN_ACT_COUNT);
            const ffn_kshape s = {
                .d = shapes[si][0], .f = shapes[si][1], .act = act, .bias = n % 3 == 1};
            if (small_run(Ts[ti], s.d, s.f)) check_shape(ks, nk, FFN_DT_INT8, Ts[ti], s, 2);
        }
}

/* The W8 one-row stream in both orders (ffn_tuning: memory order, or four streams over the
 * quarters of K), K tails of every residue mod 4. */
Test(kernels_quant, int8_decode_streams_match_the_reference_in_both_orders)
{
    static const size_t shapes[][2] = {{130, 67}, {33, 65}, {64, 130}};
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    if (nk == 0) cr_skip_test("no quantized ISA kernel on this CPU: only the reference");
    for (int t = 0; t < FFN_TUNING_COUNT; t++) {
        ffn_cpu_tuning_set((ffn_tuning)t);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const ffn_kshape s = {.d = shapes[si][0], .f = shapes[si][1], .act = FFN_ACT_SWIGLU};
            check_shape(ks, nk, FFN_DT_INT8, 1, s, 1 + (int)si % 2);
        }
    }
}

Test(kernels_quant, int4_weights_match_the_reference_every_group_size, .timeout = 1800)
{
    /* d and f multiples of G; f / G odd where it can be */
    static const size_t shapes[][3] = {{64, 96, 32},  {96, 32, 32},    {128, 384, 64},
                                       {192, 64, 64}, {128, 384, 128}, {256, 128, 128},
                                       {32, 160, 32}, {128, 128, 128}};
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    if (nk == 0) cr_skip_test("no quantized ISA kernel on this CPU: only the reference");
    size_t n = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++, n++) {
            const ffn_act act = (ffn_act)(n % FFN_ACT_COUNT);
            const ffn_kshape s = {.d = shapes[si][0],
                                  .f = shapes[si][1],
                                  .act = act,
                                  .bias = n % 3 == 1,
                                  .group = (unsigned)shapes[si][2],
                                  .zero_point = n % 2 == 0};
            if (small_run(Ts[ti], s.d, s.f)) check_shape(ks, nk, FFN_DT_INT4, Ts[ti], s, 2);
        }
}

/* The oracle itself: each reference's y is the double-precision FFN of the dequantized weights
 * (and, W8A8, of the dequantized per-token codes) to within the final fp32 rounding. */
Test(kernels_quant, references_compute_the_formats_of_quant_h)
{
    const size_t T = 3, d = 128, f = 192;
    static const struct {
        ffn_dtype w, a;
        unsigned g;
        bool zp;
    } fm[] = {{FFN_DT_INT8, FFN_DT_FP32, 0, false}, {FFN_DT_INT8, FFN_DT_BF16, 0, false},
              {FFN_DT_INT8, FFN_DT_INT8, 0, false}, {FFN_DT_INT4, FFN_DT_FP32, 32, false},
              {FFN_DT_INT4, FFN_DT_BF16, 64, true}, {FFN_DT_INT4, FFN_DT_FP32, 32, true}};
    for (size_t i = 0; i < sizeof fm / sizeof fm[0]; i++) {
        const ffn_kshape s = {.d = d,
                              .f = f,
                              .act = FFN_ACT_SWIGLU,
                              .bias = true,
                              .group = fm[i].g,
                              .zero_point = fm[i].zp};
        wset w;
        wset_init(&w, s, 99 + i);
        qset q;
        qset_init(&q, fm[i].w, &w);
        float *x = frand_array(T * d, 1.0f), y[3 * 128];
        cr_assert_eq(run_k(ref_q(fm[i].w, fm[i].a), &w, T, x, y, 1), 0);
        for (size_t t = 0; t < T; t++) {
            double a[128], h[192], acc[128];
            int8_t qx[192];
            float sx = 1, sh = 1, hf[192];
            if (fm[i].a == FFN_DT_INT8)
                cr_assert_eq(ffn_qact_quantize(1, d, x + t * d, qx, &sx), 0);
            for (size_t k = 0; k < d; k++)
                a[k] = fm[i].a == FFN_DT_INT8   ? (double)qx[k] * sx
                       : fm[i].a == FFN_DT_BF16 ? bf16_round(x[t * d + k])
                                                : x[t * d + k];
            for (size_t j = 0; j < f; j++) {
                double g = w.bg[j], u = w.bu[j];
                for (size_t k = 0; k < d; k++) {
                    /* W8A8 scales the integer sum: the same value as (q s_x)(q_w s_w) summed */
                    const double wg = fm[i].a == FFN_DT_INT8 ? (double)q.g.q[k * f + j] * q.g.sc[j]
                                                             : q.g.w[k * f + j];
                    const double wu = fm[i].a == FFN_DT_INT8 ? (double)q.u.q[k * f + j] * q.u.sc[j]
                                                             : q.u.w[k * f + j];
                    g += a[k] * wg;
                    u += a[k] * wu;
                }
                h[j] = act_d(s.act, g) * u;
                hf[j] = (float)h[j];
            }
            if (fm[i].a == FFN_DT_INT8) cr_assert_eq(ffn_qact_quantize(1, f, hf, qx, &sh), 0);
            for (size_t c = 0; c < d; c++) {
                acc[c] = w.bd[c];
                for (size_t j = 0; j < f; j++) {
                    const double hv = fm[i].a == FFN_DT_INT8   ? (double)qx[j] * sh
                                      : fm[i].a == FFN_DT_BF16 ? bf16_round(hf[j])
                                                               : h[j];
                    const double wv = fm[i].a == FFN_DT_INT8 ? (double)q.d.q[j * d + c] * q.d.sc[c]
                                                             : q.d.w[j * d + c];
                    acc[c] += hv * wv;
                }
                const double e = fabs((double)y[t * d + c] - acc[c]);
                cr_assert_leq(e, 1e-6 * (fabs(acc[c]) + 1e-3),
                              "format %zu t %zu c %zu: %.9g vs %.9g", i, t, c, (double)y[t * d + c],
                              acc[c]);
            }
        }
        free(x);
        qset_free(&q);
        wset_free(&w);
    }
}

/* Power-of-two scales (max |x| = 127/64 per token, max |w| = 127/32 per column) and ReLU: the
 * gate/up sums, h and its codes are exact on both sides, so a W8A8 kernel must match its
 * reference to the last two roundings of y = sum * s_h * s_w. */
Test(kernels_quant, w8a8_is_exact_where_the_scales_are_powers_of_two)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    size_t ran = 0;
    for (int ai = 0; ai < 2; ai++) {
        const ffn_act act = ai ? FFN_ACT_REGLU : FFN_ACT_RELU;
        const size_t T = 37, d = 70, f = 90;
        wset w;
        wset_init(&w, (ffn_kshape){.d = d, .f = f, .act = act}, 7 + (uint64_t)ai);
        float *mats[3] = {w.wg, w.wu, w.wd};
        const size_t Ks[3] = {d, d, f}, Ns[3] = {f, f, d};
        for (int m = 0; m < 3; m++) {
            if (!mats[m]) continue;
            for (size_t i = 0; i < Ks[m] * Ns[m]; i++)
                mats[m][i] = (float)(int)(frand() * 127.0f) / 32.0f;
            for (size_t n = 0; n < Ns[m]; n++) /* each column's max is 127/32 */
                mats[m][(n % Ks[m]) * Ns[m] + n] = (n % 2 ? 127.0f : -127.0f) / 32.0f;
        }
        float *x = malloc(T * d * sizeof *x), *y = malloc(T * d * sizeof *y);
        float *yref = malloc(T * d * sizeof *yref);
        cr_assert(x && y && yref);
        for (size_t t = 0; t < T; t++) {
            for (size_t k = 0; k < d; k++)
                x[t * d + k] = (float)(int)(frand() * 127.0f) / 64.0f;
            x[t * d + t % d] = 127.0f / 64.0f;
        }
        cr_assert_eq(run_k(ref_q(FFN_DT_INT8, FFN_DT_INT8), &w, T, x, yref, 1), 0);
        for (size_t ki = 0; ki < nk; ki++) {
            if (ks[ki]->adtype != FFN_DT_INT8) continue;
            ran++;
            cr_assert_eq(run_k(ks[ki], &w, T, x, y, 2), 0);
            for (size_t i = 0; i < T * d; i++)
                cr_assert_leq(fabsf(y[i] - yref[i]), 3e-7f * fabsf(yref[i]) + 1e-30f,
                              "%s %s: y[%zu] = %.9g, reference %.9g", ks[ki]->name,
                              ffn_act_name(act), i, (double)y[i], (double)yref[i]);
        }
        free(x);
        free(y);
        free(yref);
        wset_free(&w);
    }
    if (ran == 0) cr_skip_test("no W8A8 ISA kernel on this CPU");
}

/* A NaN in a token of x makes that token's y NaN (float kernels: through the products; W8A8:
 * the token has no scale) and leaves the other tokens as they were. */
Test(kernels_quant, a_nan_token_gives_a_nan_row_and_nothing_else)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    static const size_t Tn[] = {1, 3, 20};
    for (size_t ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < 3; ti++) {
            const size_t T = Tn[ti], d = 64, f = 96;
            const ffn_kshape s = {.d = d,
                                  .f = f,
                                  .act = FFN_ACT_SWIGLU,
                                  .group = ks[ki]->wdtype == FFN_DT_INT4 ? 32u : 0u};
            wset w;
            wset_init(&w, s, 5);
            float *x = frand_array(T * d, 1.0f), *y = malloc(T * d * sizeof *y);
            float *y0 = malloc(T * d * sizeof *y0);
            cr_assert(y && y0);
            cr_assert_eq(run_k(ks[ki], &w, T, x, y0, 1), 0);
            const size_t bad = T / 2;
            x[bad * d + 5] = NAN;
            cr_assert_eq(run_k(ks[ki], &w, T, x, y, 1), 0);
            for (size_t t = 0; t < T; t++)
                for (size_t i = 0; i < d; i++) {
                    if (t == bad)
                        cr_assert(isnan(y[t * d + i]), "%s T=%zu: y[%zu][%zu] = %g", ks[ki]->name,
                                  T, t, i, (double)y[t * d + i]);
                    else
                        cr_assert_eq(y[t * d + i], y0[t * d + i], "%s: token %zu changed",
                                     ks[ki]->name, t);
                }
            free(x);
            free(y);
            free(y0);
            wset_free(&w);
        }
}

Test(kernels_quant, results_do_not_depend_on_the_thread_count)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = quant_kernels(ks);
    for (size_t ki = 0; ki < nk; ki++) {
        static const size_t Tn[] = {1, 4, 100};
        for (size_t ti = 0; ti < 3; ti++) {
            const size_t T = Tn[ti], d = 128, f = 320;
            const ffn_kshape s = {.d = d,
                                  .f = f,
                                  .act = FFN_ACT_GEGLU,
                                  .bias = true,
                                  .group = ks[ki]->wdtype == FFN_DT_INT4 ? 64u : 0u,
                                  .zero_point = ks[ki]->wdtype == FFN_DT_INT4};
            wset w;
            wset_init(&w, s, 11);
            float *x = frand_array(T * d, 1.0f), *y1 = malloc(T * d * 4), *y3 = malloc(T * d * 4);
            cr_assert(y1 && y3);
            cr_assert_eq(run_k(ks[ki], &w, T, x, y1, 1), 0);
            cr_assert_eq(run_k(ks[ki], &w, T, x, y3, 3), 0);
            cr_assert_eq(memcmp(y1, y3, T * d * 4), 0, "%s T=%zu: 1 and 3 threads differ",
                         ks[ki]->name, T);
            /* 7 threads: items shrink to single panels and smaller row blocks */
            cr_assert_eq(run_k(ks[ki], &w, T, x, y3, 7), 0);
            cr_assert_eq(memcmp(y1, y3, T * d * 4), 0, "%s T=%zu: 1 and 7 threads differ",
                         ks[ki]->name, T);
            free(x);
            free(y1);
            free(y3);
            wset_free(&w);
        }
    }
}

/* FNV-1a of the bytes kernel k packs for shape s (weights of seed 5); 0 when packing failed. */
static uint64_t packed_hash(const ffn_kernel *k, ffn_kshape s)
{
    wset w;
    wset_init(&w, s, 5);
    uint64_t h = 0;
    const size_t pb = k->packed_bytes(&w.s);
    /* zeroed first: a packer leaves some alignment padding unwritten, which would otherwise
     * hash whatever the allocation held (qemu-x86's CI run) */
    unsigned char *p = pb ? calloc(1, pb) : NULL;
    if (p && k->pack(&w.s, &w.kw, p, pb) == 0) {
        h = 1469598103934665603ull;
        for (size_t i = 0; i < pb; i++)
            h = (h ^ p[i]) * 1099511628211ull;
    }
    free(p);
    wset_free(&w);
    return h;
}

/* The packers split their work over an OpenMP team (qpack.c's panel blocks of 1024 columns,
 * driver_pack.c's 16-row blocks): with d and f of several blocks each, teams of one, two and
 * five threads write the same bytes for every quantized kernel and the best fp32 and bf16 ones. */
Test(kernels_quant, packed_bytes_do_not_depend_on_the_packing_threads)
{
#if !defined(_OPENMP)
    cr_skip_test("built without OpenMP: the packers run on one thread");
#else
    const ffn_kernel *ks[MAXK + 2];
    size_t nk = quant_kernels(ks);
    const ffn_dtype fl[] = {FFN_DT_FP32, FFN_DT_BF16};
    for (size_t i = 0; i < 2; i++)
        if (ffn_kernel_best(fl[i], &ks[nk], NULL) == 0) nk++;
    for (size_t ki = 0; ki < nk; ki++) {
        const bool w4 = ks[ki]->wdtype == FFN_DT_INT4;
        /* 1088 columns: two blocks of 32-column panels down, three of gated ones up */
        const ffn_kshape s = {.d = 1088,
                              .f = 1088,
                              .act = FFN_ACT_SWIGLU,
                              .group = w4 ? 64u : 0u,
                              .zero_point = w4 && ki % 2};
        omp_set_num_threads(1);
        const uint64_t h1 = packed_hash(ks[ki], s);
        cr_assert_neq(h1, 0, "%s: packing failed", ks[ki]->name);
        static const int teams[] = {2, 5};
        for (size_t t = 0; t < 2; t++) {
            omp_set_num_threads(teams[t]);
            cr_expect_eq(packed_hash(ks[ki], s), h1, "%s: 1 and %d threads differ", ks[ki]->name,
                         teams[t]);
        }
    }
#endif
}

/* ---- bad arguments ------------------------------------------------------------------------ */

Test(kernels_quant, entry_points_validate_arguments)
{
    const ffn_kernel *all[MAXK];
    const size_t n = ffn_kernel_list(all, MAXK);
    size_t checked = 0;
    for (size_t ki = 0; ki < n && ki < MAXK; ki++) {
        const ffn_kernel *k = all[ki];
        if (!is_quant(k)) continue;
        checked++;
        const bool w4 = k->wdtype == FFN_DT_INT4;
        wset w;
        wset_init(
            &w,
            (ffn_kshape){
                .d = 64, .f = 96, .act = FFN_ACT_SWIGLU, .bias = true, .group = w4 ? 32u : 0u},
            3);
        /* group sizes: int4 needs 32, 64 or 128 dividing d and f; int8 takes none */
        ffn_kshape bad = w.s;
        if (w4) {
            const unsigned bad_g[] = {0, 16, 48, 256};
            for (size_t i = 0; i < 4; i++) {
                bad.group = bad_g[i];
                cr_assert_eq(k->packed_bytes(&bad), 0, "%s G=%u", k->name, bad_g[i]);
            }
            bad.group = 64; /* divides d = 64, not f = 96 */
            cr_assert_eq(k->packed_bytes(&bad), 0, "%s: G=64 does not divide f=96", k->name);
        } else {
            bad.group = 32;
            cr_assert_eq(k->packed_bytes(&bad), 0, "%s: int8 has no groups", k->name);
            bad = w.s;
            bad.zero_point = true;
            cr_assert_eq(k->packed_bytes(&bad), 0, "%s: int8 has no zero point", k->name);
        }
        if (k->adtype == FFN_DT_INT8) {
            bad = w.s;
            bad.d = ((size_t)1 << 17) + 1;
            cr_assert_eq(k->packed_bytes(&bad), 0, "%s: K > 2^17 could overflow int32", k->name);
        }
        bad = w.s;
        bad.d = 0;
        cr_assert_eq(k->packed_bytes(&bad), 0);
        cr_assert_eq(k->packed_bytes(NULL), 0);
        const size_t pb = k->packed_bytes(&w.s);
        cr_assert_gt(pb, 0, "%s", k->name);
        unsigned char *packed = malloc(pb);
        cr_assert_not_null(packed);
        ffn_kshape g48 = w.s;
        g48.group = 48;
        if (w4) cr_assert_eq(k->pack(&g48, &w.kw, packed, pb), FFN_EINVAL, "%s", k->name);
        cr_assert_eq(k->pack(&bad, &w.kw, packed, pb), FFN_EINVAL, "%s", k->name);
        cr_assert_eq(k->pack(&w.s, NULL, packed, pb), FFN_EINVAL);
        cr_assert_eq(k->pack(&w.s, &w.kw, NULL, pb), FFN_EINVAL);
        cr_assert_eq(k->pack(&w.s, &w.kw, packed, pb - 1), FFN_ENOSPACE, "%s", k->name);
        ffn_kweights nou = w.kw;
        nou.w_up = NULL;
        cr_assert_eq(k->pack(&w.s, &nou, packed, pb), FFN_EINVAL);
        w.wd[7] = NAN; /* a NaN weight has no scale */
        cr_assert_eq(k->pack(&w.s, &w.kw, packed, pb), FFN_EINVAL, "%s packed a NaN", k->name);
        w.wd[7] = 0.25f;
        cr_assert_eq(k->pack(&w.s, &w.kw, packed, pb), 0);

        const size_t T = 6;
        float x[6 * 64], y[6 * 64];
        for (size_t i = 0; i < T * 64; i++)
            x[i] = 0.5f;
        const size_t wb = k->workspace_bytes(&w.s, T, 2);
        cr_assert_gt(wb, 0);
        void *ws = malloc(wb);
        cr_assert_not_null(ws);
        cr_assert_eq(k->forward(&w.s, packed, T, NULL, y, ws, wb, 2), FFN_EINVAL);
        cr_assert_eq(k->forward(&w.s, packed, T, x, NULL, ws, wb, 2), FFN_EINVAL);
        cr_assert_eq(k->forward(&w.s, NULL, T, x, y, ws, wb, 2), FFN_EINVAL);
        cr_assert_eq(k->forward(&w.s, packed, T, x, y, NULL, wb, 2), FFN_EINVAL);
        cr_assert_eq(k->forward(&w.s, packed, T, x, y, ws, wb - 1, 2), FFN_ENOSPACE, "%s", k->name);
        cr_assert_eq(k->forward(NULL, packed, T, x, y, ws, wb, 2), FFN_EINVAL);
        if (w4) {
            ffn_kshape other = w.s;
            other.zero_point = true; /* packed symmetric, run as asymmetric */
            cr_assert_eq(
                k->forward(&other, packed, T, x, y, ws, k->workspace_bytes(&other, T, 2), 2),
                FFN_EINVAL, "%s accepted weights of another format", k->name);
        }
        ffn_kshape other = w.s;
        other.f = 128; /* weights packed for another shape */
        cr_assert_eq(k->forward(&other, packed, T, x, y, ws, k->workspace_bytes(&other, T, 2), 2),
                     FFN_EINVAL, "%s accepted weights of another shape", k->name);
        cr_assert_eq(k->forward(&w.s, packed, 0, NULL, NULL, NULL, 0, 2), 0);
        cr_assert_eq(k->forward(&w.s, packed, T, x, y, ws, wb, 2), 0);
        free(ws);
        free(packed);
        wset_free(&w);
    }
    cr_assert_geq(checked, 5, "the five quantized references are always listed");
}

/* Packed blobs are per kernel: one kernel refuses another's (their layouts differ). */
Test(kernels_quant, weights_packed_by_one_kernel_are_refused_by_another)
{
    const ffn_kernel *a = ref_q(FFN_DT_INT8, FFN_DT_FP32), *b = NULL;
    cr_assert_eq(ffn_kernel_get_q(FFN_ISA_PORTABLE, FFN_DT_INT8, FFN_DT_FP32, &b, NULL), 0);
    wset w;
    wset_init(&w, (ffn_kshape){.d = 32, .f = 48, .act = FFN_ACT_RELU}, 1);
    const size_t pa = a->packed_bytes(&w.s), pbb = b->packed_bytes(&w.s);
    unsigned char *p = malloc(pa > pbb ? pa : pbb);
    cr_assert_eq(a->pack(&w.s, &w.kw, p, pa), 0);
    float x[32] = {0}, y[32];
    const size_t wb = b->workspace_bytes(&w.s, 1, 1);
    void *ws = malloc(wb);
    cr_assert_eq(b->forward(&w.s, p, 1, x, y, ws, wb, 1), FFN_EINVAL);
    free(ws);
    free(p);
    wset_free(&w);
}

/* ---- the work count ----------------------------------------------------------------------- */

Test(kernels_quant, bytes_count_the_format)
{
    const ffn_kernel *k8 = ref_q(FFN_DT_INT8, FFN_DT_FP32), *k4 = ref_q(FFN_DT_INT4, FFN_DT_FP32);
    const ffn_kernel *kf = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &kf, NULL), 0);
    const ffn_kshape s8 = {.d = 4096, .f = 11008, .act = FFN_ACT_SWIGLU};
    ffn_kshape s4 = s8;
    s4.group = 128;
    const double bf = ffn_kernel_bytes(kf, &s8, 1), b8 = ffn_kernel_bytes(k8, &s8, 1);
    const double b4 = ffn_kernel_bytes(k4, &s4, 1);
    /* the weights dominate at T = 1: about 4, 1 + 4/K, 0.5 + 2/G bytes per weight */
    cr_assert(b8 > bf / 4.2 && b8 < bf / 3.8, "int8 %g vs fp32 %g", b8, bf);
    cr_assert(b4 > bf / 8.2 && b4 < bf / 7.4, "int4 %g vs fp32 %g", b4, bf);
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* Whether this binary holds the kernel named name. */
static bool built(const char *name)
{
    const ffn_kernel *ks[MAXK];
    const size_t n = ffn_kernel_table(ks, NULL, MAXK);
    for (size_t i = 0; i < n && i < MAXK; i++)
        if (!strcmp(ks[i]->name, name)) return true;
    return false;
}

/* What a CPU with these features and the default tuning gets (pick_qt: with tuning t). */
static const char *pick_qt(uint64_t features, ffn_tuning t, ffn_isa lv, ffn_dtype w, ffn_dtype a)
{
    const ffn_kernel *k = NULL;
    if (ffn_kernel_for_cpu_q(features, t, lv, w, a, &k, NULL)) return "none";
    return k->name;
}

static const char *pick_q(uint64_t features, ffn_isa lv, ffn_dtype w, ffn_dtype a)
{
    return pick_qt(features, FFN_TUNING_DEFAULT, lv, w, a);
}

Test(kernels_quant, every_cpu_gets_a_quantized_kernel_of_every_format)
{
    static const struct {
        ffn_dtype w, a;
    } fm[] = {{FFN_DT_INT8, FFN_DT_FP32},
              {FFN_DT_INT8, FFN_DT_BF16},
              {FFN_DT_INT8, FFN_DT_INT8},
              {FFN_DT_INT4, FFN_DT_FP32},
              {FFN_DT_INT4, FFN_DT_BF16}};
    ffn_isa top = FFN_ISA_PORTABLE; /* this CPU's highest level */
    cr_assert_eq(ffn_isa_selected(&top, NULL) == 0 || getenv("FFNROOF_ISA"), true);
    for (size_t i = 0; i < 5; i++) {
        const ffn_kernel *k = NULL;
        cr_assert_eq(ffn_kernel_for_features_q(0, FFN_ISA_AMX, fm[i].w, fm[i].a, &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_PORTABLE, "a CPU with no ISA feature runs %s", k->name);
        cr_assert_eq(ffn_kernel_for_features_q(ffn_cpu_features(), top, fm[i].w, fm[i].a, &k, NULL),
                     0, "this CPU runs a kernel of every format");
        cr_assert_eq(ffn_kernel_get_q(FFN_ISA_REF, fm[i].w, fm[i].a, &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_REF);
        cr_assert_eq(ffn_kernel_get_q(FFN_ISA_PORTABLE, fm[i].w, fm[i].a, &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_PORTABLE);
    }
    /* the float-only entry points return the weight-only kernels */
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_PORTABLE, FFN_DT_INT8, &k, NULL), 0);
    cr_assert_eq(k->wdtype, FFN_DT_INT8);
    cr_assert_eq(k->adtype, FFN_DT_FP32);
    cr_assert_eq(ffn_kernel_get(FFN_ISA_PORTABLE, FFN_DT_INT4, &k, NULL), 0);
    cr_assert_eq(k->adtype, FFN_DT_FP32);
    cr_assert_eq(ffn_kernel_best(FFN_DT_INT8, &k, NULL), 0);
    cr_assert_eq(k->wdtype, FFN_DT_INT8);
    /* W8A8 is int8 weights only, and the diagnostic says what was asked */
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_get_q(FFN_ISA_PORTABLE, FFN_DT_INT4, FFN_DT_INT8, &k, &dg),
                 FFN_EUNSUPPORTED);
    cr_assert(strstr(dg.msg, "int4") && strstr(dg.msg, "int8"), "%s", dg.msg);
    cr_assert_eq(ffn_kernel_get_q(FFN_ISA_PORTABLE, FFN_DT_INT8, FFN_DT_COUNT, &k, NULL),
                 FFN_EINVAL);
    cr_assert_eq(ffn_kernel_best_q(FFN_DT_INT8, FFN_DT_INT8, NULL, NULL), FFN_EINVAL);
    /* every quantized row needs what its level needs, and its name says its format and ISA */
    const ffn_kernel *ks[MAXK];
    uint64_t req[MAXK];
    const size_t n = ffn_kernel_table(ks, req, MAXK);
    for (size_t i = 0; i < n && i < MAXK; i++) {
        if (!is_quant(ks[i])) continue;
        const uint64_t need = ffn_isa_requires(ks[i]->isa);
        cr_assert_eq(req[i] & need, need, "%s needs less than its level", ks[i]->name);
        char tag[32];
        snprintf(tag, sizeof tag, "w%da%d_ffn__%s", ks[i]->wdtype == FFN_DT_INT8 ? 8 : 4,
                 ks[i]->adtype == FFN_DT_INT8   ? 8
                 : ks[i]->adtype == FFN_DT_BF16 ? 16
                                                : 32,
                 ffn_isa_name(ks[i]->isa));
        cr_assert(strncmp(ks[i]->name, tag, strlen(tag)) == 0, "%s is not named %s...", ks[i]->name,
                  tag);
    }
}

/* The units each built kernel says its products run on (the peak bench predicts it at): W8A8
 * the int8 dot products, bf16/fp16 weights their own, the AVX512-BF16 W4A16 table bf16 (code
 * pairs on VDPBF16PS) except with zero points (its fp32 FMA path), every other one fp32. */
Test(kernels_quant, kernels_say_which_units_multiply)
{
    const ffn_kernel *ks[MAXK];
    const size_t n = ffn_kernel_table(ks, NULL, MAXK);
    const ffn_kshape sym = {.d = 128, .f = 256, .act = FFN_ACT_SWIGLU, .group = 128};
    ffn_kshape zp = sym;
    zp.zero_point = true;
    bool saw_pairs = false;
    for (size_t i = 0; i < n && i < MAXK; i++) {
        const ffn_kernel *k = ks[i];
        const bool pairs = !strcmp(k->name, "w4a16_ffn__avx512_bf16_14x32");
        saw_pairs |= pairs;
        const ffn_dtype want = k->adtype == FFN_DT_INT8                               ? FFN_DT_INT8
                               : k->wdtype == FFN_DT_BF16 || k->wdtype == FFN_DT_FP16 ? k->wdtype
                               : pairs                                                ? FFN_DT_BF16
                                                                                      : FFN_DT_FP32;
        cr_assert_eq(ffn_kernel_cdtype(k, &sym), want, "%s", k->name);
        cr_assert_eq(ffn_kernel_cdtype(k, &zp), pairs ? FFN_DT_FP32 : want, "%s", k->name);
    }
    cr_assert_eq(ffn_kernel_cdtype(NULL, &sym), FFN_DT_FP32);
    if (!saw_pairs) cr_log_info("no AVX512-BF16 W4A16 kernel in this build: its case not seen");
}

Test(kernels_quant, dispatch_for_cpu_classes)
{
    const uint64_t haswell = FFN_CPU_AVX2;
    const uint64_t adl = haswell | FFN_CPU_AVX_VNNI;
    const uint64_t skx = haswell | FFN_CPU_AVX512;
    const uint64_t clx = skx | FFN_CPU_AVX512_VNNI;
    const uint64_t spr =
        clx | FFN_CPU_AVX512_BF16 | FFN_CPU_AVX512_FP16 | FFN_CPU_AMX_BF16 | FFN_CPU_AMX_INT8;
    const uint64_t a76 = FFN_CPU_NEON | FFN_CPU_ARM_FP16 | FFN_CPU_ARM_DOTPROD;
    const uint64_t n2 = a76 | FFN_CPU_ARM_BF16 | FFN_CPU_ARM_I8MM;
    const ffn_dtype I8 = FFN_DT_INT8, I4 = FFN_DT_INT4;
    if (built("w8a32_ffn__avx2_6x16")) {
        cr_assert_str_eq(pick_q(haswell, FFN_ISA_AMX, I8, FFN_DT_FP32), "w8a32_ffn__avx2_6x16");
        cr_assert_str_eq(pick_q(haswell, FFN_ISA_AMX, I4, FFN_DT_BF16), "w4a16_ffn__avx2_6x16");
        cr_assert_str_eq(pick_q(haswell, FFN_ISA_AMX, I8, I8), "w8a8_ffn__avx2_2x32",
                         "no VNNI: VPMADDUBSW on |x| and sign-moved weights");
        cr_assert_str_eq(pick_q(adl, FFN_ISA_AMX, I8, I8), "w8a8_ffn__avx2vnni_2x32");
        cr_assert_str_eq(pick_q(adl, FFN_ISA_AVX2, I8, I8), "w8a8_ffn__avx2vnni_2x32",
                         "AVX-VNNI is within the avx2 level");
    }
    if (built("w8a32_ffn__avx512_14x32")) {
        cr_assert_str_eq(pick_q(skx, FFN_ISA_AMX, I8, FFN_DT_FP32), "w8a32_ffn__avx512_14x32");
        cr_assert_str_eq(pick_q(skx, FFN_ISA_AMX, I4, FFN_DT_FP32), "w4a32_ffn__avx512_14x32");
        cr_assert_str_eq(pick_q(skx, FFN_ISA_AMX, I8, I8), "w8a8_ffn__avx512_8x32",
                         "Skylake-SP: VPMADDUBSW on zmm");
        cr_assert_str_eq(pick_q(clx, FFN_ISA_AMX, I8, I8), "w8a8_ffn__avx512vnni_8x32");
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AVX512, I8, I8), "w8a8_ffn__avx512vnni_8x32");
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AVX2, I8, I8), built("w8a8_ffn__avx2_2x32")
                                                                ? "w8a8_ffn__avx2_2x32"
                                                                : "w8a8_ffn__portable_1x32");
    }
    if (built("w4a16_ffn__avx512_bf16_14x32")) {
        const uint64_t zen4 = clx | FFN_CPU_AVX512_BF16;
        cr_assert_str_eq(pick_q(zen4, FFN_ISA_AMX, I4, FFN_DT_BF16), "w4a16_ffn__avx512_bf16_14x32",
                         "VDPBF16PS on the nibble lookups");
        const uint64_t spr_nofp16 = spr & ~FFN_CPU_AVX512_FP16;
        cr_assert_str_eq(pick_q(spr_nofp16, FFN_ISA_AMX, I4, FFN_DT_BF16),
                         "w4a16_ffn__avx512_bf16_14x32");
        /* the intel tuning passes VDPBF16PS over for W4A16 (slower there) */
        cr_assert_str_eq(pick_qt(spr_nofp16, FFN_TUNING_INTEL, FFN_ISA_AMX, I4, FFN_DT_BF16),
                         "w4a16_ffn__avx512_14x32");
        cr_assert_str_eq(
            pick_qt(spr_nofp16, FFN_TUNING_INTEL, FFN_ISA_AVX512_BF16, I4, FFN_DT_BF16),
            "w4a16_ffn__avx512_14x32");
        cr_assert_str_eq(pick_qt(spr, FFN_TUNING_INTEL, FFN_ISA_AMX, I8, I8),
                         built("w8a8_ffn__amx_32x32") ? "w8a8_ffn__amx_32x32"
                                                      : "w8a8_ffn__avx512vnni_8x32",
                         "nothing else moves");
        const ffn_kernel *ks[MAXK];
        const size_t n = ffn_kernel_table(ks, NULL, MAXK);
        size_t avoided = 0;
        for (size_t i = 0; i < n && i < MAXK; i++) {
            cr_assert(!ffn_kernel_avoided(ks[i], FFN_TUNING_DEFAULT), "%s", ks[i]->name);
            avoided += ffn_kernel_avoided(ks[i], FFN_TUNING_INTEL);
        }
        cr_assert_eq(avoided, 2u, "the VDPBF16PS W4A16 and bf16 kernels");
        cr_assert_str_eq(pick_q(zen4, FFN_ISA_AVX512, I4, FFN_DT_BF16), "w4a16_ffn__avx512_14x32",
                         "the avx512 level has no VDPBF16PS");
        cr_assert_str_eq(pick_q(zen4, FFN_ISA_AMX, I4, FFN_DT_FP32), "w4a32_ffn__avx512_14x32",
                         "fp32 activations stay on FMAs");
        cr_assert_str_eq(pick_q(zen4, FFN_ISA_AMX, I8, FFN_DT_BF16), "w8a16_ffn__avx512_14x32");
    }
    if (built("w4a16_ffn__avx512_fp16_14x32")) {
        /* VFMADD231PH on the nibble lookups wherever AVX512-FP16 is, at the avx512 level too */
        const char *h16 = "w4a16_ffn__avx512_fp16_14x32";
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AMX, I4, FFN_DT_BF16), h16);
        cr_assert_str_eq(pick_qt(spr, FFN_TUNING_INTEL, FFN_ISA_AMX, I4, FFN_DT_BF16), h16);
        cr_assert_str_eq(pick_qt(spr, FFN_TUNING_INTEL, FFN_ISA_AVX512, I4, FFN_DT_BF16), h16);
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AMX, I4, FFN_DT_FP32), "w4a32_ffn__avx512_14x32",
                         "fp32 activations stay on fp32 FMAs");
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AVX2, I4, FFN_DT_BF16), "w4a16_ffn__avx2_6x16");
    }
    if (built("w8a8_ffn__amx_32x32")) {
        cr_assert_str_eq(pick_q(spr, FFN_ISA_AMX, I8, I8), "w8a8_ffn__amx_32x32");
        cr_assert_str_eq(pick_q(spr & ~FFN_CPU_AMX_INT8, FFN_ISA_AMX, I8, I8),
                         "w8a8_ffn__avx512vnni_8x32", "AMX-BF16 without AMX-INT8");
    }
    if (built("w8a8_ffn__neondot_2x32")) {
        cr_assert_str_eq(pick_q(FFN_CPU_NEON, FFN_ISA_SVE, I8, I8), "w8a8_ffn__portable_1x32",
                         "ARMv8.0 without SDOT");
        cr_assert_str_eq(pick_q(a76, FFN_ISA_SVE, I8, I8), "w8a8_ffn__neondot_2x32");
        cr_assert_str_eq(pick_q(n2, FFN_ISA_NEON, I8, FFN_DT_FP32), "w8a32_ffn__neon_8x12");
    }
    if (built("w8a8_ffn__neoni8mm_4x16")) {
        cr_assert_str_eq(pick_q(n2, FFN_ISA_NEON, I8, I8), "w8a8_ffn__neoni8mm_4x16",
                         "Neoverse N2: SMMLA before SDOT");
        cr_assert_str_eq(pick_q(n2 | FFN_CPU_SVE, FFN_ISA_SVE, I8, I8), "w8a8_ffn__neoni8mm_4x16",
                         "the sve level allows FEAT_I8MM");
        cr_assert_str_eq(pick_q(a76, FFN_ISA_SVE, I8, I8), "w8a8_ffn__neondot_2x32",
                         "SDOT without FEAT_I8MM");
    }
    if (built("w8a8_ffn__sve_8x2vl")) {
        const uint64_t a64fx = FFN_CPU_NEON | FFN_CPU_ARM_FP16 | FFN_CPU_ARM_DOTPROD | FFN_CPU_SVE;
        cr_assert_str_eq(pick_q(a64fx, FFN_ISA_SVE, I8, I8), "w8a8_ffn__sve_8x2vl",
                         "A64FX: SVE without FEAT_I8MM runs SVE SDOT");
        cr_assert_str_eq(pick_q(a64fx, FFN_ISA_NEON, I8, I8), "w8a8_ffn__neondot_2x32",
                         "FFNROOF_ISA=neon keeps SVE out");
    }
    cr_assert_str_eq(pick_q(0, FFN_ISA_AMX, I8, I8), "w8a8_ffn__portable_1x32");
    cr_assert_str_eq(pick_q(spr, FFN_ISA_PORTABLE, I4, FFN_DT_BF16), "w4a16_ffn__portable_6x8");
    cr_assert_str_eq(pick_q(spr, FFN_ISA_REF, I8, I8), "w8a8_ffn__ref");
}

/* Criterion runs every test in its own process, so the once-only choice sees this setenv. */
Test(kernels_quant, ffnroof_isa_portable_runs_the_portable_quantized_kernels)
{
    setenv("FFNROOF_ISA", "portable", 1);
    const ffn_dtype f[][2] = {
        {FFN_DT_INT8, FFN_DT_FP32}, {FFN_DT_INT8, FFN_DT_INT8}, {FFN_DT_INT4, FFN_DT_BF16}};
    for (size_t i = 0; i < 3; i++) {
        const ffn_kernel *k = NULL;
        cr_assert_eq(ffn_kernel_best_q(f[i][0], f[i][1], &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_PORTABLE, "%s", k->name);
    }
}

Test(kernels_quant, ffnroof_isa_avx2_runs_what_an_avx2_host_runs)
{
    if (!ffn_isa_available(FFN_ISA_AVX2) || !built("w8a8_ffn__avx2_2x32"))
        cr_skip_test("this CPU or build has no AVX2 level or no AVX2 quantized kernels");
    setenv("FFNROOF_ISA", "avx2", 1);
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_best_q(FFN_DT_INT8, FFN_DT_INT8, &k, NULL), 0);
    cr_assert_eq(k->isa, FFN_ISA_AVX2, "%s", k->name);
    cr_assert_eq(ffn_kernel_best_q(FFN_DT_INT4, FFN_DT_FP32, &k, NULL), 0);
    cr_assert_eq(k->isa, FFN_ISA_AVX2, "%s", k->name);
}

Test(kernels_quant, ffnroof_isa_ref_runs_the_quantized_oracle)
{
    setenv("FFNROOF_ISA", "ref", 1);
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_best_q(FFN_DT_INT8, FFN_DT_INT8, &k, NULL), 0);
    cr_assert_str_eq(k->name, "w8a8_ffn__ref");
}
