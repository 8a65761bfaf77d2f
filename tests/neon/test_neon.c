/* Self-checking test of the NEON dense FFN kernels (kernels/arm_neon/), cross-built for AArch64
 * and run under qemu-aarch64 by .ci/neon.sh (Criterion is not available for the cross target).
 * Prints one line per failed check and finally "N passed, N failed"; exits 1 if any failed.
 *
 * Oracle: the scalar reference kernels of kernels/ref/ (double accumulation, y rounded once),
 * through their ffn_kernel descriptors; the fp16-weight NEON kernel is compared with the fp16
 * reference, which computes exactly the FFN of the same fp16-rounded weights and biases, and
 * once more with the fp32 reference under the wider bound that the fp16 rounding implies.
 *
 * Error bound (per output element, computed in double from the same inputs; u = 2^-24):
 *   gate/up   |dg_i| <= e_g,i = (gamma(d+2) + uw) Sg_i + aw (sum_k |x_k| + 1)
 *             Sg_i = |b_i| + sum_k |x_k| |W_ki|, gamma(n) = n u / (1 - n u): a length-d fp32
 *             FMA dot product, the bias add and the (decode) sum of two partial accumulators;
 *   act       |da_i| <= Lip e_g,i + c_act u (|g_i| + e_g,i): Lip = 1 (relu) or 1.13 (the largest
 *             |act'| of gelu, gelu_tanh and silu), c_act = 0 (relu) or 8 (exp/erfc within a
 *             few ulp, one add, one divide);
 *   h         gated: |dh_i| <= |da_i| (|u_i| + e_u,i) + |a_i| e_u,i + u (|a_i| + |da_i|)(|u_i| +
 * e_u,i); y         |dy_j| <= sum_i |Wd_ij| |dh_i| + (gamma(f+2) + uw) Sy_j + aw (sum_i |h_i| + 1)
 *             + u |y_j| (the reference's final rounding) + (d + f) 2^-149 (underflow),
 *             Sy_j = |bd_j| + sum_i |Wd_ij| (|h_i| + |dh_i|).
 * uw = aw = 0 when kernel and oracle use the same weights; uw = 2^-11 (fp16 unit roundoff) and
 * aw = 2^-25 (half the fp16 subnormal spacing) when the fp16 kernel is checked against fp32
 * weights. The largest observed |error| / bound is printed, and one check makes sure the bound
 * does flag a kernel run on weights with one entry changed by 1%.
 *
 * Shapes: the grid is T in {0,1,3,17,64,255}, d in {1,15,17,64,1000},
 * f in {1,31,33,2730}. Its full product (and the reference run in double under qemu's softfloat)
 * does not fit the 2-minute budget, so every value of each axis is covered, combined so that the
 * costly ones meet only small partners (the table `cases` below): T=255 with d,f <= 64 or with
 * d=1000, f=1; d=1000 and f=2730 otherwise with T <= 17 (d=1000 > KC = 256 exercises the
 * K-sliced accumulation of the gate/up projection, f=2730 that of the down projection); T in
 * {2,4,5,8,9} around the decode/prefill switch (T <= 4) and the 8-row panel. Every shape runs all 7
 * activations, both weight dtypes, with biases (and without for a subset), 1 and 2 threads (must be
 * bit-identical), the 2-thread run with x, y, packed weights and workspace misaligned by 4 bytes,
 * and all cores (threads = 0); guard bytes around every buffer. About 40 s under qemu on a 2-core
 * VM. */
#include "ffn_neon.h"
#include "kern_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned n_pass, n_fail;

static bool check(bool ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static bool check(bool ok, const char *fmt, ...)
{
    if (ok) {
        n_pass++;
        return true;
    }
    n_fail++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    return false;
}

/* ---------------------------------------------------------------------------------------------
 * Deterministic inputs */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t splitmix(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in [-a, a). */
static float urand(float a)
{
    return a * (float)((double)(splitmix() >> 11) * 0x1p-52 - 1.0);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        printf("FAIL: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

typedef struct layer {
    ffn_kshape s;
    float *wg, *wu, *wd, *bg, *bu, *bd;
} layer;

static float *fill(size_t n, float a)
{
    float *p = xmalloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = urand(a);
    return p;
}

/* Weights scaled by 1/sqrt(K) so that g, u and y stay O(1) for every shape. */
static layer layer_make(size_t d, size_t f, ffn_act act, bool bias)
{
    layer L = {.s = {.d = d, .f = f, .act = act, .bias = bias}};
    const bool gated = ffn_act_gated(act);
    L.wg = fill(d * f, 2.0f / sqrtf((float)d));
    L.wu = gated ? fill(d * f, 2.0f / sqrtf((float)d)) : NULL;
    L.wd = fill(f * d, 2.0f / sqrtf((float)f));
    L.bg = bias ? fill(f, 0.5f) : NULL;
    L.bu = bias && gated ? fill(f, 0.5f) : NULL;
    L.bd = bias ? fill(d, 0.5f) : NULL;
    return L;
}

static float *dup_f(const float *p, size_t n, bool round16)
{
    if (!p) return NULL;
    float *q = xmalloc(n * sizeof *q);
    for (size_t i = 0; i < n; i++)
        q[i] = round16 ? ffn__f16_to_f32(ffn__f32_to_f16(p[i])) : p[i];
    return q;
}

/* A copy, optionally with every weight and bias rounded to fp16 (what the fp16 kernels use). */
static layer layer_copy(const layer *L, bool round16)
{
    const size_t d = L->s.d, f = L->s.f;
    layer C = {.s = L->s};
    C.wg = dup_f(L->wg, d * f, round16);
    C.wu = dup_f(L->wu, d * f, round16);
    C.wd = dup_f(L->wd, f * d, round16);
    C.bg = dup_f(L->bg, f, round16);
    C.bu = dup_f(L->bu, f, round16);
    C.bd = dup_f(L->bd, d, round16);
    return C;
}

static void layer_free(layer *L)
{
    free(L->wg);
    free(L->wu);
    free(L->wd);
    free(L->bg);
    free(L->bu);
    free(L->bd);
}

static ffn_kweights weights_of(const layer *L)
{
    return (ffn_kweights){L->wg, L->wu, L->wd, L->bg, L->bu, L->bd};
}

/* ---------------------------------------------------------------------------------------------
 * Guarded buffers: `off` bytes before and GUARD bytes after the n usable bytes hold a pattern
 * that must survive every call. */

enum { GUARD = 64, PAT = 0xa5 };

typedef struct gbuf {
    unsigned char *raw;
    size_t n, off;
} gbuf;

static gbuf gbuf_new(size_t n, size_t off)
{
    gbuf b = {xmalloc(off + n + GUARD), n, off};
    memset(b.raw, PAT, off + n + GUARD);
    return b;
}

static void *gbuf_ptr(const gbuf *b)
{
    return b->n ? b->raw + b->off : NULL;
}

static bool gbuf_intact(const gbuf *b)
{
    for (size_t i = 0; i < b->off; i++)
        if (b->raw[i] != PAT) return false;
    for (size_t i = 0; i < GUARD; i++)
        if (b->raw[b->off + b->n + i] != PAT) return false;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Running a kernel */

typedef struct packed {
    gbuf buf;
    int rc;
} packed;

static packed pack_layer(const ffn_kernel *k, const layer *L, size_t misalign)
{
    const ffn_kweights w = weights_of(L);
    packed P = {gbuf_new(k->packed_bytes(&L->s), misalign), 0};
    P.rc = k->pack(&L->s, &w, gbuf_ptr(&P.buf), P.buf.n);
    return P;
}

/* y[T][d] = forward(x) with a guarded workspace of exactly workspace_bytes(); x and y are
 * caller buffers. Guards of packed and workspace are checked here. */
static int forward(const ffn_kernel *k, const layer *L, const packed *P, size_t T, const float *x,
                   float *y, int threads, size_t misalign, const char *what)
{
    gbuf W = gbuf_new(k->workspace_bytes(&L->s, T, threads), misalign);
    const int rc = k->forward(&L->s, gbuf_ptr(&P->buf), T, x, y, gbuf_ptr(&W), W.n, threads);
    check(gbuf_intact(&W), "%s: %s wrote outside its workspace", what, k->name);
    check(gbuf_intact(&P->buf), "%s: %s wrote outside its packed weights", what, k->name);
    free(W.raw);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The oracle's bound */

static const double U32 = 0x1p-24;

static double gam(size_t n)
{
    return (double)n * U32 / (1.0 - (double)n * U32);
}

static double act_d(ffn_act a, double g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return g < 0 ? 0.0 : g;
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return 0.5 * g * erfc(-g * 0.70710678118654752440);
    case FFN_ACT_GELU_TANH:
        return 0.5 * g * (1.0 + tanh(0.79788456080286535588 * (g + 0.044715 * g * g * g)));
    default:
        return g / (1.0 + exp(-g));
    }
}

static bool is_relu(ffn_act a)
{
    return a == FFN_ACT_RELU || a == FFN_ACT_REGLU;
}

/* ey[T][d]: the bound of the header comment for the layer L (its weights as the kernel sees
 * them when uw = aw = 0; fp32 weights that the kernel rounded to fp16 otherwise). */
static void bound(const layer *L, size_t T, const float *x, double uw, double aw, double *ey)
{
    const size_t d = L->s.d, f = L->s.f;
    const bool gated = ffn_act_gated(L->s.act);
    const double lip = is_relu(L->s.act) ? 1.0 : 1.13, cact = is_relu(L->s.act) ? 0.0 : 8.0;
    const double m = 1.0 + uw, gd = gam(d + 2) + uw, gf = gam(f + 2) + uw;
    double *g = xmalloc(f * sizeof *g), *sg = xmalloc(f * sizeof *g);
    double *u = xmalloc(f * sizeof *g), *su = xmalloc(f * sizeof *g);
    double *y = xmalloc(d * sizeof *y), *sy = xmalloc(d * sizeof *y), *dy = xmalloc(d * sizeof *y);
    for (size_t t = 0; t < T; t++) {
        const float *xt = x + t * d;
        double sx = 0;
        for (size_t i = 0; i < f; i++) {
            g[i] = L->bg ? L->bg[i] : 0.0;
            sg[i] = L->bg ? fabs(L->bg[i]) * m : 0.0;
            u[i] = L->bu ? L->bu[i] : 0.0;
            su[i] = L->bu ? fabs(L->bu[i]) * m : 0.0;
        }
        for (size_t k = 0; k < d; k++) {
            const double xk = xt[k], ax = fabs(xk);
            sx += ax;
            const float *wg = L->wg + k * f, *wu = gated ? L->wu + k * f : NULL;
            for (size_t i = 0; i < f; i++) {
                g[i] += xk * wg[i];
                sg[i] += ax * fabs(wg[i]) * m;
            }
            if (gated)
                for (size_t i = 0; i < f; i++) {
                    u[i] += xk * wu[i];
                    su[i] += ax * fabs(wu[i]) * m;
                }
        }
        for (size_t j = 0; j < d; j++) {
            y[j] = L->bd ? L->bd[j] : 0.0;
            sy[j] = L->bd ? fabs(L->bd[j]) * m : 0.0;
            dy[j] = 0.0;
        }
        double sh = 0;
        for (size_t i = 0; i < f; i++) {
            const double eg = gd * sg[i] + aw * (sx + 1.0), eu = gd * su[i] + aw * (sx + 1.0);
            const double a = act_d(L->s.act, g[i]);
            const double da = lip * eg + cact * U32 * (fabs(g[i]) + eg);
            double h = a, dh = da;
            if (gated) {
                h = a * u[i];
                dh = da * (fabs(u[i]) + eu) + fabs(a) * eu +
                     U32 * (fabs(a) + da) * (fabs(u[i]) + eu);
            }
            const double ah = fabs(h) + dh;
            sh += ah;
            const float *wd = L->wd + i * d;
            for (size_t j = 0; j < d; j++) {
                const double w = wd[j], aw_ = fabs(w) * m;
                y[j] += h * w;
                sy[j] += aw_ * ah;
                dy[j] += aw_ * dh;
            }
        }
        for (size_t j = 0; j < d; j++)
            ey[t * d + j] = dy[j] + gf * sy[j] + aw * (sh + 1.0) + U32 * fabs(y[j]) +
                            (double)(d + f) * 0x1p-149;
    }
    free(g);
    free(sg);
    free(u);
    free(su);
    free(y);
    free(sy);
    free(dy);
}

/* Number of elements outside the bound (or whose NaN/Inf class differs); *worst gets the
 * largest |error| / bound over finite elements. */
static size_t compare(const float *y, const float *yref, const double *ey, size_t n, double *worst,
                      size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bool ok;
        if (isnan(yref[i]))
            ok = isnan(y[i]);
        else if (isinf(yref[i]))
            ok = y[i] == yref[i];
        else if (!isfinite(y[i]))
            ok = false;
        else {
            const double e = fabs((double)y[i] - (double)yref[i]);
            ok = !ey || !isfinite(ey[i]) || e <= ey[i];
            if (ey && isfinite(ey[i]) && ey[i] > 0 && e / ey[i] > *worst) *worst = e / ey[i];
        }
        if (!ok && bad++ == 0) *first = i;
    }
    return bad;
}

/* ---------------------------------------------------------------------------------------------
 * The shape grid */

typedef struct dfcase {
    size_t d, f;
    size_t T[6];
    size_t nT;
    bool nobias; /* also run without biases */
} dfcase;

static const dfcase cases[] = {
    {1, 1, {0, 1, 3, 5, 17, 255}, 6, true},
    {15, 31, {1, 4, 5, 8, 64, 255}, 6, true},
    {17, 33, {1, 3, 9, 17, 64, 255}, 6, false},
    {64, 1, {1, 3, 17, 64}, 4, false},
    {1, 2730, {1, 3, 17}, 3, true},
    {64, 64, {2, 17, 255}, 3, false},
    {1000, 31, {1, 3, 17}, 3, false},
    {1000, 2730, {1}, 1, false},
    {15, 2730, {3, 17}, 2, false},
    {1000, 33, {9}, 1, true},
    {1000, 1, {1, 5, 255}, 3, false},
};

static double worst_same[2], worst_cross;

static const ffn_kernel *neon_k(int h)
{
    return h ? &ffn_kernel_f16_neon : &ffn_kernel_f32_neon;
}

static const ffn_kernel *ref_k(int h)
{
    return h ? &ffn_kernel_f16_ref : &ffn_kernel_f32_ref;
}

/* One layer, one weight dtype, every T of the case. */
static void run_case(const layer *L, const layer *Lk, int h, const size_t *Ts, size_t nT,
                     const layer *L32, const packed *P32ref)
{
    const ffn_kernel *k = neon_k(h), *r = ref_k(h);
    const size_t d = L->s.d, f = L->s.f;
    char what[160];
    snprintf(what, sizeof what, "%s d=%zu f=%zu %s%s", k->name, d, f, ffn_act_name(L->s.act),
             L->s.bias ? "+bias" : "");
    packed P = pack_layer(k, L, 0), Pm = pack_layer(k, L, 4), R = pack_layer(r, L, 0);
    if (!check(P.rc == 0 && Pm.rc == 0 && R.rc == 0, "%s: pack rc %d/%d, ref %d", what, P.rc, Pm.rc,
               R.rc))
        goto out;
    for (size_t ti = 0; ti < nT; ti++) {
        const size_t T = Ts[ti], n = T * d;
        char w2[200];
        snprintf(w2, sizeof w2, "%s T=%zu", what, T);
        float *x = fill(n, 2.0f), *xm = xmalloc((n + 1) * sizeof *xm); /* xm + 1: misaligned */
        float *yr = xmalloc((n + 1) * sizeof *yr);
        gbuf Y1 = gbuf_new(n * sizeof(float), 0), Y2 = gbuf_new(n * sizeof(float), 4);
        gbuf Y3 = gbuf_new(n * sizeof(float), 0);
        float *y1 = gbuf_ptr(&Y1), *y2 = gbuf_ptr(&Y2), *y3 = gbuf_ptr(&Y3);
        memcpy(xm + 1, x, n * sizeof *x);
        int rc_r = forward(r, L, &R, T, x, yr, 1, 0, w2);
        int rc1 = forward(k, L, &P, T, x, y1, 1, 0, w2);
        int rc2 = forward(k, L, &Pm, T, xm + 1, y2, 2, 4, w2);
        int rc3 = forward(k, L, &P, T, x, y3, 0, 0, w2); /* threads <= 0: all cores */
        if (check(rc_r == 0 && rc1 == 0 && rc2 == 0 && rc3 == 0,
                  "%s: forward rc ref %d, 1t %d, 2t %d, all %d", w2, rc_r, rc1, rc2, rc3) &&
            T > 0) {
            double *ey = xmalloc(n * sizeof *ey);
            bound(Lk, T, x, 0.0, 0.0, ey);
            size_t first = 0;
            const size_t bad = compare(y1, yr, ey, n, &worst_same[h], &first);
            check(
                bad == 0,
                "%s: %zu of %zu outside the bound, first [%zu][%zu] %.9g vs ref %.9g (bound %.3g)",
                w2, bad, n, first / d, first % d, bad ? y1[first] : 0.0, bad ? yr[first] : 0.0,
                bad ? ey[first] : 0.0);
            check(memcmp(y1, y2, n * sizeof *y1) == 0,
                  "%s: 1 thread (aligned) and 2 threads (misaligned) differ", w2);
            check(memcmp(y1, y3, n * sizeof *y1) == 0, "%s: 1 thread and all cores differ", w2);
            if (h && P32ref) {
                /* fp16 kernel vs the fp32 reference: the fp16 rounding bound. */
                float *y32 = xmalloc((n + 1) * sizeof *y32);
                const int rc = forward(&ffn_kernel_f32_ref, L32, P32ref, T, x, y32, 1, 0, w2);
                bound(L32, T, x, 0x1p-11, 0x1p-25, ey);
                first = 0;
                const size_t bad32 = compare(y1, y32, ey, n, &worst_cross, &first);
                check(rc == 0 && bad32 == 0,
                      "%s: vs fp32 ref: %zu of %zu outside the fp16 bound, first %.9g vs %.9g", w2,
                      bad32, n, bad32 ? y1[first] : 0.0, bad32 ? y32[first] : 0.0);
                free(y32);
            }
            free(ey);
        }
        check(gbuf_intact(&Y1) && gbuf_intact(&Y2) && gbuf_intact(&Y3), "%s: wrote outside y", w2);
        free(x);
        free(xm);
        free(yr);
        free(Y1.raw);
        free(Y2.raw);
        free(Y3.raw);
    }
out:
    free(P.buf.raw);
    free(Pm.buf.raw);
    free(R.buf.raw);
}

static void test_grid(void)
{
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int act = 0; act < FFN_ACT_COUNT; act++)
            for (int nb = 0; nb <= (int)cases[c].nobias; nb++) {
                layer L = layer_make(cases[c].d, cases[c].f, (ffn_act)act, nb == 0);
                layer L16 = layer_copy(&L, true);
                run_case(&L, &L, 0, cases[c].T, cases[c].nT, NULL, NULL);
                /* The cross check against fp32 weights costs one more reference run: only
                 * on the cheaper shapes. */
                const bool cross = cases[c].d * cases[c].f <= 64 * 64;
                packed P32 = {0};
                if (cross) P32 = pack_layer(&ffn_kernel_f32_ref, &L, 0);
                run_case(&L, &L16, 1, cases[c].T, cases[c].nT, cross ? &L : NULL,
                         cross ? &P32 : NULL);
                free(P32.buf.raw);
                layer_free(&L16);
                layer_free(&L);
            }
}

/* The bound is not vacuous: a kernel on weights with one down-projection entry off by 1% of
 * the largest weight must be caught. */
static void test_bound_sensitivity(void)
{
    layer L = layer_make(64, 33, FFN_ACT_SWIGLU, true), Lp = layer_copy(&L, false);
    Lp.wd[5 * 64 + 7] += 0.01f * 2.0f / sqrtf(33.0f);
    const size_t T = 9, n = T * 64;
    float *x = fill(n, 2.0f), *y = xmalloc(n * sizeof *y), *yr = xmalloc(n * sizeof *yr);
    double *ey = xmalloc(n * sizeof *ey);
    packed P = pack_layer(&ffn_kernel_f32_neon, &Lp, 0), R = pack_layer(&ffn_kernel_f32_ref, &L, 0);
    const int rc1 = forward(&ffn_kernel_f32_neon, &Lp, &P, T, x, y, 1, 0, "sensitivity");
    const int rc2 = forward(&ffn_kernel_f32_ref, &L, &R, T, x, yr, 1, 0, "sensitivity");
    bound(&L, T, x, 0.0, 0.0, ey);
    size_t in7 = 0, other = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)y[i] - (double)yr[i]) <= ey[i])) {
            if (i % 64 == 7)
                in7++;
            else
                other++;
        }
    check(rc1 == 0 && rc2 == 0 && in7 > 0 && other == 0,
          "bound sensitivity: a 1%% change of W_down[5][7] flagged %zu of %zu elements of "
          "column 7 (expected > 0) and %zu elsewhere (expected 0)",
          in7, T, other);
    free(x);
    free(y);
    free(yr);
    free(ey);
    free(P.buf.raw);
    free(R.buf.raw);
    layer_free(&L);
    layer_free(&Lp);
}

/* NaN and +-Inf in x and in the weights give the reference's NaN/Inf pattern. */
static void test_special_values(void)
{
    const size_t d = 17, f = 31, Ts[] = {3, 9};
    for (int h = 0; h < 2; h++)
        for (int act = 0; act < FFN_ACT_COUNT; act++)
            for (int wspecial = 0; wspecial < 2; wspecial++) {
                layer L = layer_make(d, f, (ffn_act)act, true);
                if (wspecial) {
                    L.wd[2 * d + 4] = NAN;      /* y column 4 NaN wherever h_2 is used */
                    L.wg[1 * f + 7] = INFINITY; /* g_7 = +-Inf (sign of x_1) */
                }
                layer Lk = layer_copy(&L, h);
                const ffn_kernel *k = neon_k(h), *r = ref_k(h);
                packed P = pack_layer(k, &L, 0), R = pack_layer(r, &L, 0);
                for (size_t ti = 0; ti < 2; ti++) {
                    const size_t T = Ts[ti], n = T * d;
                    float *x = fill(n, 2.0f), *y = xmalloc(n * sizeof *y),
                          *y2 = xmalloc(n * sizeof *y), *yr = xmalloc(n * sizeof *y);
                    double *ey = xmalloc(n * sizeof *ey);
                    if (!wspecial) {
                        x[0 * d + 5] = NAN;
                        x[1 * d + 3] = INFINITY;
                        x[2 * d + 0] = -INFINITY;
                    }
                    char what[128];
                    snprintf(what, sizeof what, "special values (%s) %s %s T=%zu",
                             wspecial ? "weights" : "x", k->name, ffn_act_name((ffn_act)act), T);
                    const int rc1 = forward(k, &L, &P, T, x, y, 1, 0, what);
                    const int rc2 = forward(k, &L, &P, T, x, y2, 2, 0, what);
                    const int rcr = forward(r, &L, &R, T, x, yr, 1, 0, what);
                    bound(&Lk, T, x, 0.0, 0.0, ey);
                    double w = 0;
                    size_t first = 0, nspecial = 0;
                    for (size_t i = 0; i < n; i++)
                        nspecial += !isfinite(yr[i]);
                    const size_t bad = compare(y, yr, ey, n, &w, &first);
                    check(P.rc == 0 && R.rc == 0 && rc1 == 0 && rc2 == 0 && rcr == 0 && bad == 0 &&
                              nspecial > 0,
                          "%s: rc %d/%d, %zu of %zu differ from the reference (first [%zu] "
                          "%g vs %g), %zu non-finite in the reference",
                          what, rc1, rcr, bad, n, first, bad ? y[first] : 0.0,
                          bad ? yr[first] : 0.0, nspecial);
                    check(memcmp(y, y2, n * sizeof *y) == 0, "%s: 1 and 2 threads differ", what);
                    free(x);
                    free(y);
                    free(y2);
                    free(yr);
                    free(ey);
                }
                free(P.buf.raw);
                free(R.buf.raw);
                layer_free(&Lk);
                layer_free(&L);
            }
}

/* Every entry point rejects bad arguments with the documented code and leaves y alone. */
static void test_bad_arguments(void)
{
    for (int h = 0; h < 2; h++) {
        const ffn_kernel *k = neon_k(h), *other = neon_k(!h);
        const char *kn = k->name;
        layer L = layer_make(17, 33, FFN_ACT_SWIGLU, true);
        const ffn_kweights w = weights_of(&L);
        const size_t pb = k->packed_bytes(&L.s), T = 6;
        unsigned char *pk = xmalloc(pb + 8);
        check(k->pack(&L.s, &w, pk, pb) == 0, "%s: pack of a good layer", kn);

        ffn_kshape s0 = L.s;
        s0.d = 0;
        check(k->packed_bytes(&s0) == 0, "%s: packed_bytes(d=0) is 0", kn);
        check(k->workspace_bytes(&s0, 1, 1) == 0, "%s: workspace_bytes(d=0) is 0", kn);
        check(k->packed_bytes(NULL) == 0, "%s: packed_bytes(NULL) is 0", kn);
        check(k->pack(&s0, &w, pk, pb) == FFN_EINVAL, "%s: pack d=0 -> EINVAL", kn);
        s0 = L.s;
        s0.f = 0;
        check(k->pack(&s0, &w, pk, pb) == FFN_EINVAL, "%s: pack f=0 -> EINVAL", kn);
        s0 = L.s;
        s0.act = FFN_ACT_COUNT;
        check(k->pack(&s0, &w, pk, pb) == FFN_EINVAL, "%s: pack bad act -> EINVAL", kn);
        check(k->pack(NULL, &w, pk, pb) == FFN_EINVAL, "%s: pack s=NULL -> EINVAL", kn);
        check(k->pack(&L.s, NULL, pk, pb) == FFN_EINVAL, "%s: pack w=NULL -> EINVAL", kn);
        check(k->pack(&L.s, &w, NULL, pb) == FFN_EINVAL, "%s: pack packed=NULL -> EINVAL", kn);
        check(k->pack(&L.s, &w, pk, pb - 1) == FFN_ENOSPACE, "%s: pack short -> ENOSPACE", kn);
        check(k->pack(&L.s, &w, pk + 1, pb) == FFN_EINVAL, "%s: pack misaligned blob -> EINVAL",
              kn);
        ffn_kweights wb = w;
        wb.w_up = NULL;
        check(k->pack(&L.s, &wb, pk, pb) == FFN_EINVAL, "%s: gated without w_up -> EINVAL", kn);
        wb = w;
        wb.b_down = NULL;
        check(k->pack(&L.s, &wb, pk, pb) == FFN_EINVAL, "%s: bias without b_down -> EINVAL", kn);
        wb = w;
        wb.w_down = NULL;
        check(k->pack(&L.s, &wb, pk, pb) == FFN_EINVAL, "%s: w_down NULL -> EINVAL", kn);
        check(k->pack(&L.s, &w, pk, pb) == 0, "%s: repack", kn);

        const size_t wsb = k->workspace_bytes(&L.s, T, 2);
        unsigned char *ws = xmalloc(wsb);
        float *x = fill(T * 17, 1.0f), *y = xmalloc(T * 17 * sizeof *y);
        for (size_t i = 0; i < T * 17; i++)
            y[i] = 42.0f;
        check(k->forward(&L.s, pk, T, x, y, ws, wsb, 2) == 0, "%s: good forward", kn);
        for (size_t i = 0; i < T * 17; i++)
            y[i] = 42.0f;
        ffn_kshape sd = L.s;
        sd.d = 16;
        check(k->forward(&sd, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL,
              "%s: forward with another shape than packed -> EINVAL", kn);
        sd = L.s;
        sd.act = FFN_ACT_GEGLU;
        check(k->forward(&sd, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL,
              "%s: forward with another act than packed -> EINVAL", kn);
        sd = L.s;
        sd.bias = false;
        check(k->forward(&sd, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL,
              "%s: forward without the packed bias -> EINVAL", kn);
        check(other->forward(&L.s, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL,
              "%s: %s refuses its weights -> EINVAL", kn, other->name);
        check(ffn_kernel_f32_ref.forward(&L.s, pk, T, x, y, ws, wsb, 1) == FFN_EINVAL,
              "%s: the reference refuses its weights -> EINVAL", kn);
        check(k->forward(NULL, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL, "%s: s=NULL", kn);
        check(k->forward(&L.s, NULL, T, x, y, ws, wsb, 2) == FFN_EINVAL, "%s: packed=NULL", kn);
        check(k->forward(&L.s, pk, T, NULL, y, ws, wsb, 2) == FFN_EINVAL, "%s: x=NULL", kn);
        check(k->forward(&L.s, pk, T, x, NULL, ws, wsb, 2) == FFN_EINVAL, "%s: y=NULL", kn);
        check(k->forward(&L.s, pk, T, x, y, NULL, wsb, 2) == FFN_EINVAL, "%s: ws=NULL", kn);
        check(k->forward(&L.s, pk, T, x, y, ws, wsb - 1, 2) == FFN_ENOSPACE,
              "%s: workspace one byte short -> ENOSPACE", kn);
        check(k->forward(&L.s, pk, 1, x, y, ws, k->workspace_bytes(&L.s, 1, 1) - 1, 1) ==
                  FFN_ENOSPACE,
              "%s: decode workspace one byte short -> ENOSPACE", kn);
        check(k->forward(&L.s, pk, 0, NULL, NULL, NULL, 0, 2) == 0,
              "%s: T=0 with no buffers is a no-op", kn);
        bool untouched = true;
        for (size_t i = 0; i < T * 17; i++)
            untouched &= y[i] == 42.0f;
        check(untouched, "%s: rejected calls left y untouched", kn);
        memset(pk, 0, 8); /* a blob whose header was destroyed */
        check(k->forward(&L.s, pk, T, x, y, ws, wsb, 2) == FFN_EINVAL,
              "%s: blob without a valid header -> EINVAL", kn);
        free(pk);
        free(ws);
        free(x);
        free(y);
        layer_free(&L);
    }
}

/* fp16 packing rounds like the reference (nearest even, overflow to Inf). */
static void test_fp16_rounding(void)
{
    /* d=1, f=1, relu, no bias: y = W_down * relu(W_gate x). With x = 1, W_down = 1 and
     * W_gate = v, y is v as the kernel stored it. */
    const float vals[] = {1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-20f,
                          65504.0f,        65519.0f,
                          65520.0f,        3e-8f,
                          0x1p-25f,        1e-3f};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        float wg = vals[i], wd = 1.0f, x = 1.0f, y = 0.0f, yr = 0.0f;
        layer L = {.s = {.d = 1, .f = 1, .act = FFN_ACT_RELU, .bias = false}, .wg = &wg, .wd = &wd};
        packed P = pack_layer(&ffn_kernel_f16_neon, &L, 0),
               R = pack_layer(&ffn_kernel_f16_ref, &L, 0);
        const int rc1 = forward(&ffn_kernel_f16_neon, &L, &P, 1, &x, &y, 1, 0, "fp16 rounding");
        const int rc2 = forward(&ffn_kernel_f16_ref, &L, &R, 1, &x, &yr, 1, 0, "fp16 rounding");
        const float expect = ffn__f16_to_f32(ffn__f32_to_f16(wg));
        check(P.rc == 0 && rc1 == 0 && rc2 == 0 && y == yr && y == expect,
              "fp16 rounding of %.9g: kernel %.9g, reference %.9g, expected %.9g", wg, y, yr,
              expect);
        free(P.buf.raw);
        free(R.buf.raw);
    }
}

/* Dispatch registers both kernels on AArch64 and finds NEON available (HWCAP_ASIMD). */
static void test_dispatch(void)
{
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    check(ffn_isa_available(FFN_ISA_NEON), "dispatch: NEON available");
    check(!ffn_isa_available(FFN_ISA_AVX512), "dispatch: AVX-512 not available on AArch64");
    check(ffn_kernel_get(FFN_ISA_NEON, FFN_DT_FP32, &k, &dg) == 0 && k == &ffn_kernel_f32_neon,
          "dispatch: neon/fp32 is %s", k ? k->name : "(none)");
    k = NULL;
    check(ffn_kernel_get(FFN_ISA_NEON, FFN_DT_FP16, &k, &dg) == 0 && k == &ffn_kernel_f16_neon,
          "dispatch: neon/fp16 is %s", k ? k->name : "(none)");
    check(ffn_kernel_get(FFN_ISA_NEON, FFN_DT_BF16, &k, &dg) == FFN_EUNSUPPORTED,
          "dispatch: no neon/bf16 kernel -> EUNSUPPORTED");
    check(ffn_kernel_get(FFN_ISA_AVX512, FFN_DT_FP32, &k, &dg) == FFN_EUNSUPPORTED,
          "dispatch: avx512 on AArch64 -> EUNSUPPORTED");
    check(ffn_kernel_f32_neon.isa == FFN_ISA_NEON && ffn_kernel_f16_neon.isa == FFN_ISA_NEON &&
              ffn_kernel_f32_neon.wdtype == FFN_DT_FP32 &&
              ffn_kernel_f16_neon.wdtype == FFN_DT_FP16,
          "descriptors: isa and weight dtype");
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const clock_t t0 = clock();
    test_dispatch();
    test_bad_arguments();
    test_fp16_rounding();
    test_special_values();
    test_bound_sensitivity();
    test_grid();
    printf("largest |error|/bound: fp32 %.3g, fp16 vs fp16 ref %.3g, fp16 vs fp32 ref %.3g "
           "(cpu %.1f s)\n",
           worst_same[0], worst_same[1], worst_cross, (double)(clock() - t0) / CLOCKS_PER_SEC);
    printf("%u passed, %u failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
