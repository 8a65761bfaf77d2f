/* Criterion tests of the dense FFN kernels (include/ffnroof/kernels.h): every kernel this CPU
 * runs (ffn_kernel_list) against the scalar reference of the same weight dtype, every
 * activation, with and without biases; NaN/Inf propagation; unaligned pointers; 1 vs 2
 * threads; argument validation; the work count; dispatch and FFNROOF_ISA.
 *
 * Shapes. The issue asks for T in {0,1,3,17,64,255}, d in {1,15,17,64,1000}, f in
 * {1,31,33,2730}. The full cross product (120 shapes x 7 activations x every kernel, each
 * checked against a double-precision reference) takes minutes under ASan, so `shapes` below
 * lists 13 (T, d, f) triples that use every value at least once, pair the large values with
 * small ones, and add T = 600 (more rows than one cache block of the fp32 kernels: the
 * row-block loop) and T = 4/5 (the last decode and first prefill shape of the bf16 kernels).
 * Each triple runs for every activation; bias alternates with the triple and activation so
 * every activation is checked with and without biases.
 *
 * Error bound (the oracle is the reference kernel, double accumulation, rounded once to fp32,
 * on the same dtype-rounded weights). With u = 2^-24 (fp32 unit roundoff), gamma(n) = n u /
 * (1 - n u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.8: the
 * worst-case error of an n-term fp32 dot product in any summation order is gamma(n) sum|terms|):
 *   gate/up:  |dg| <= (ux + gamma(d)) (sum_k |x_k w_kj| + |b_j|)       (same for u)
 *   act:      |da| <= L |dg| + e_act |act(g)| + 2^-22 |g|   (L = 1.2 bounds |act'| for all
 *             activations; e_act = 1e-6 covers the vector exp/erfc approximations)
 *   h:        |dh| <= |da| (|u| + |du|) + |act(g)| |du| + (u + uh) |h|
 *   y:        |dy| <= sum_j |dh_j| |Wd_ji| + gamma(f) sum_j (|h_j| + |dh_j|) |Wd_ji| + u |y|
 * where ux, uh are the unit roundoffs of the kernel's rounding of x and h before the products:
 * 0 for fp32 (x and h stay fp32), 2^-8 for bf16 (VDPBF16PS/AMX round x and h to bf16), 2^-11
 * for fp16. A kernel passes when |y - y_ref| <= 2 dy (the factor 2 absorbs the second-order
 * terms and the reference's own final rounding). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/kernels.h"
#include "ffnroof/rand.h"

#include "../kernels/driver/drv_sched.h"

#define MAXK 256

static ffn_rng rng;
static float frand(void) /* uniform in [-1, 1) */
{
    return (float)(ffn_rng_unif(&rng) * 2.0 - 1.0);
}

typedef struct wset {
    ffn_kshape s;
    float *wg, *wu, *wd, *bg, *bu, *bd;
    ffn_kweights kw;
} wset;

static bool gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

/* The float-weight kernels of ffn_kernel_list (the int8/int4 ones have their own suite,
 * test_kernels_quant, with the bounds of their formats). */
static size_t float_kernel_list(const ffn_kernel **out, size_t n)
{
    const ffn_kernel *all[MAXK];
    const size_t c = ffn_kernel_list(all, MAXK);
    size_t m = 0;
    for (size_t i = 0; i < c && i < MAXK && m < n; i++)
        if (all[i]->wdtype != FFN_DT_INT8 && all[i]->wdtype != FFN_DT_INT4) out[m++] = all[i];
    return m;
}

static float *frand_array(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand() * scale;
    return p;
}

static void wset_init(wset *w, size_t d, size_t f, ffn_act act, bool bias, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    ffn_rng_seed(&rng, seed);
    w->s = (ffn_kshape){.d = d, .f = f, .act = act, .bias = bias};
    /* Scaled so g and h are O(1): the activations are exercised on both sides of 0. */
    const float s1 = 2.0f / sqrtf((float)d), s2 = 1.0f / sqrtf((float)f);
    w->wg = frand_array(d * f, s1);
    w->wu = gated(act) ? frand_array(d * f, s1) : NULL;
    w->wd = frand_array(f * d, s2);
    if (bias) {
        w->bg = frand_array(f, 0.5f);
        w->bu = gated(act) ? frand_array(f, 0.5f) : NULL;
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

/* Pack and run k; the packed blob, workspace, x and y are placed at the given byte offsets
 * from malloc's alignment. Returns forward's code. */
static int run_off(const ffn_kernel *k, const wset *w, size_t T, const float *x, float *y,
                   int threads, size_t off)
{
    const size_t pb = k->packed_bytes(&w->s);
    cr_assert_gt(pb, 0);
    unsigned char *packed = malloc(pb + 64);
    cr_assert_not_null(packed);
    int rc = k->pack(&w->s, &w->kw, packed + off, pb);
    cr_assert_eq(rc, 0, "%s: pack failed: %d", k->name, rc);
    const size_t wb = k->workspace_bytes(&w->s, T, threads);
    unsigned char *ws = malloc(wb + 64);
    cr_assert_not_null(ws);
    rc = k->forward(&w->s, packed + off, T, x, y, wb ? ws + (off ? 3 : 0) : NULL, wb, threads);
    free(ws);
    free(packed);
    return rc;
}

static const ffn_kernel *ref_for(ffn_dtype dt)
{
    const ffn_kernel *r = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, dt, &r, NULL), 0);
    return r;
}

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

/* The bound dy of the header comment for every y[t][i]. */
static void error_bound(const wset *w, size_t T, const float *x, ffn_dtype dt, double *dy)
{
    const size_t d = w->s.d, f = w->s.f;
    const double u = ldexp(1.0, -24);
    const double ur = dt == FFN_DT_BF16 ? ldexp(1.0, -8) : dt == FFN_DT_FP16 ? ldexp(1.0, -11) : 0;
    const double d1 = ur + gamma_n(d), g2 = gamma_n(f);
    const bool gt = gated(w->s.act);
    double *h = malloc(f * sizeof *h), *dh = malloc(f * sizeof *dh);
    double *acc = malloc(d * sizeof *acc);
    cr_assert(h && dh && acc);
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < f; j++) {
            double g = w->bg ? w->bg[j] : 0, sg = w->bg ? fabs(w->bg[j]) : 0;
            double uu = 1, su = 0;
            if (gt) {
                uu = w->bu ? w->bu[j] : 0;
                su = w->bu ? fabs(w->bu[j]) : 0;
            }
            for (size_t k = 0; k < d; k++) {
                const double xv = x[t * d + k];
                g += xv * w->wg[k * f + j];
                sg += fabs(xv * w->wg[k * f + j]);
                if (gt) {
                    uu += xv * w->wu[k * f + j];
                    su += fabs(xv * w->wu[k * f + j]);
                }
            }
            /* 1.01: the dtype-rounded weights the kernels use differ from these by <= 2^-8. */
            const double dg = 1.01 * d1 * sg, du = gt ? 1.01 * d1 * su : 0;
            const double a = act_d(w->s.act, g);
            const double da = 1.2 * dg + 1e-6 * fabs(a) + ldexp(1.0, -22) * fabs(g) + 1e-37;
            h[j] = a * uu;
            dh[j] = da * (fabs(uu) + du) + fabs(a) * du + (u + ur) * fabs(h[j]);
        }
        for (size_t i = 0; i < d; i++)
            acc[i] = 0;
        for (size_t j = 0; j < f; j++)
            for (size_t i = 0; i < d; i++) {
                const double wv = fabs(w->wd[j * d + i]) * 1.01;
                acc[i] += dh[j] * wv + g2 * (fabs(h[j]) + dh[j]) * wv;
            }
        for (size_t i = 0; i < d; i++)
            dy[t * d + i] = acc[i] + u * (w->bd ? fabs(w->bd[i]) : 0);
    }
    free(h);
    free(dh);
    free(acc);
}

/* Compare y with y_ref: NaN where the reference is NaN, the same Inf where it is Inf, else
 * within 2 dy (dy NULL: only the special values are compared). */
static void compare(const ffn_kernel *k, const wset *w, size_t T, const float *y, const float *yref,
                    const double *dy, const char *what)
{
    const size_t n = T * w->s.d;
    for (size_t i = 0; i < n; i++) {
        const char *an = ffn_act_name(w->s.act);
        if (isnan(yref[i])) {
            cr_assert(isnan(y[i]), "%s %s %s T=%zu d=%zu f=%zu: y[%zu]=%g, reference NaN", k->name,
                      what, an, T, w->s.d, w->s.f, i, (double)y[i]);
        } else if (isinf(yref[i])) {
            cr_assert(y[i] == yref[i], "%s %s %s: y[%zu]=%g, reference %g", k->name, what, an, i,
                      (double)y[i], (double)yref[i]);
        } else if (dy) {
            const double err = fabs((double)y[i] - (double)yref[i]);
            cr_assert(err <= 2 * dy[i] + 1e-30,
                      "%s %s %s bias=%d T=%zu d=%zu f=%zu: y[%zu]=%.9g ref %.9g err %.3g > "
                      "bound %.3g",
                      k->name, what, an, (int)w->s.bias, T, w->s.d, w->s.f, i, (double)y[i],
                      (double)yref[i], err, 2 * dy[i]);
        }
    }
}

static size_t fast_kernels(const ffn_kernel **ks)
{
    const ffn_kernel *all[MAXK];
    const size_t n = float_kernel_list(all, MAXK);
    size_t m = 0;
    for (size_t i = 0; i < n && i < MAXK; i++)
        if (all[i]->isa != FFN_ISA_REF) ks[m++] = all[i];
    return m;
}

/* Every kernel of ks on one shape and activation: the reference and the error bound of each
 * weight dtype are computed once and shared by that dtype's kernels (they dominate the time,
 * ten-fold under qemu, where an SVE CPU runs ten kernels). */
static void check_shape(const ffn_kernel *const *ks, size_t nk, size_t T, size_t d, size_t f,
                        ffn_act act, bool bias, int threads)
{
    wset w;
    wset_init(&w, d, f, act, bias, T * 7919 + d * 31 + f + (size_t)act);
    float *x = frand_array(T * d, 1.0f);
    float *y = malloc((T * d + 1) * sizeof *y), *yref = malloc((T * d + 1) * sizeof *yref);
    double *dy = malloc((T * d + 1) * sizeof *dy);
    cr_assert(y && yref && dy);
    static const ffn_dtype dts[] = {FFN_DT_FP32, FFN_DT_BF16, FFN_DT_FP16};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        bool any = false;
        for (size_t ki = 0; ki < nk; ki++)
            any = any || ks[ki]->wdtype == dts[di];
        if (!any) continue;
        cr_assert_eq(run_off(ref_for(dts[di]), &w, T, x, yref, 1, 0), 0);
        error_bound(&w, T, x, dts[di], dy);
        for (size_t ki = 0; ki < nk; ki++) {
            if (ks[ki]->wdtype != dts[di]) continue;
            for (size_t i = 0; i < T * d; i++)
                y[i] = NAN; /* every output must be written */
            cr_assert_eq(run_off(ks[ki], &w, T, x, y, threads, 0), 0, "%s forward failed",
                         ks[ki]->name);
            compare(ks[ki], &w, T, y, yref, dy, "shape");
        }
    }
    free(x);
    free(y);
    free(yref);
    free(dy);
    wset_free(&w);
}

/* The timeout is a hang guard: under qemu-user an SVE CPU runs ten kernels here, and at 256 and
 * 512-bit vectors it took over 7.5 CPU-minutes (qemu 7.2), past 600 s on an idle core. */
Test(kernels, matches_reference_every_activation_and_shape, .timeout = 1800)
{
    static const size_t shapes[][3] = {
        {1, 1, 1},
        {3, 15, 31},
        {17, 17, 33},
        {64, 64, 31},
        {0, 64, 33},
        {255, 17, 33},
        {1, 1000, 2730},
        {3, 1000, 33},
        {17, 64, 2730},
        {64, 1000, 31},
        {255, 15, 1},
        {600, 17, 33},
        {4, 64, 31},
        {5, 15, 33},
        /* more than two row blocks: the work-sharing counter splits rows and panels */
        {1100, 33, 65},
        /* a last row panel of every height on every GEMM tile (mr 6: 25 and the shapes above; mr
         * 8: 10 to 15 and 25; mr 14: 15 and 25): each tile height has a code path of its own */
        {25, 33, 65},
        {15, 33, 65},
        {10, 33, 65},
        {11, 17, 33},
        {12, 33, 65},
        {13, 17, 33},
        {14, 33, 65},
    };
    const ffn_kernel *ks[MAXK];
    const size_t nk = fast_kernels(ks);
    if (nk == 0) cr_skip_test("no ISA kernel on this CPU: only the reference is present");
    /* FFNROOF_KERNEL_SHAPES=small (set by .ci/aarch64.sh for the 256- and 512-bit SVE CPUs, whose
     * emulation is the slowest): only the shapes of at most 10^6 T*d*f, which still hold every
     * row, column and K tail and the row-block loop; the full set runs natively and on SVE-128. */
    const char *sel = getenv("FFNROOF_KERNEL_SHAPES");
    const bool small = sel && !strcmp(sel, "small");
    if (small) fprintf(stderr, "kernels: FFNROOF_KERNEL_SHAPES=small: shapes up to 1e6 T*d*f\n");
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int a = 0; a < FFN_ACT_COUNT; a++)
            if (!small ||
                (double)shapes[si][0] * (double)shapes[si][1] * (double)shapes[si][2] <= 1e6)
                check_shape(ks, nk, shapes[si][0], shapes[si][1], shapes[si][2], (ffn_act)a,
                            (si + (size_t)a) % 2 == 1, 2);
}

/* The one-row decode streams read a panel in memory order (default tuning) or as four streams
 * over the quarters of K (intel tuning): both orders on every kernel of this CPU, with K tails
 * of every residue mod 4 (the gate/up K is d, the down K is f), one and two threads. */
Test(kernels, decode_streams_match_the_reference_in_both_orders)
{
    static const size_t shapes[][2] = {{1003, 2731}, {64, 31}, {17, 34}, {130, 65}};
    const ffn_kernel *ks[MAXK];
    const size_t nk = fast_kernels(ks);
    if (nk == 0) cr_skip_test("no ISA kernel on this CPU: only the reference is present");
    for (int t = 0; t < FFN_TUNING_COUNT; t++) {
        ffn_cpu_tuning_set((ffn_tuning)t);
        cr_assert_eq(ffn_cpu_tuning(), (ffn_tuning)t);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            check_shape(ks, nk, 1, shapes[si][0], shapes[si][1], FFN_ACT_SWIGLU, si % 2 == 1,
                        1 + (int)si % 2);
    }
}

Test(kernels, reference_dtypes_agree_with_fp32_reference)
{
    /* The bf16/fp16 references differ from the fp32 one only by the weight rounding. */
    wset w;
    wset_init(&w, 33, 47, FFN_ACT_SWIGLU, true, 5);
    const size_t T = 5;
    float *x = frand_array(T * 33, 1.0f), y32[5 * 33], y16[5 * 33];
    cr_assert_eq(run_off(ref_for(FFN_DT_FP32), &w, T, x, y32, 1, 0), 0);
    for (int which = 0; which < 2; which++) {
        const ffn_dtype dt = which ? FFN_DT_FP16 : FFN_DT_BF16;
        cr_assert_eq(run_off(ref_for(dt), &w, T, x, y16, 1, 0), 0);
        double maxdiff = 0, maxabs = 0; /* max |difference| relative to max |y| */
        for (size_t i = 0; i < T * 33; i++) {
            maxdiff = fmax(maxdiff, fabs(y16[i] - y32[i]));
            maxabs = fmax(maxabs, fabs(y32[i]));
        }
        const double maxrel = maxdiff / maxabs;
        cr_assert_gt(maxrel, 0, "%s reference identical to fp32: weights not rounded?",
                     ffn_dtype_name(dt));
        cr_assert_lt(maxrel, which ? 0.004 : 0.03, "%s reference too far from fp32: %g",
                     ffn_dtype_name(dt), maxrel);
    }
    free(x);
    wset_free(&w);
}

Test(kernels, nan_and_inf_propagate_like_the_reference)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = fast_kernels(ks);
    if (nk == 0) cr_skip_test("no ISA kernel on this CPU: only the reference is present");
    const size_t d = 40, f = 37;
    static const size_t Ts[] = {1, 2, 20}; /* the one-row stream, the row stream, prefill */
    for (size_t ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < 3; ti++)
            for (int a = 0; a < FFN_ACT_COUNT; a++) {
                const size_t T = Ts[ti];
                wset w;
                wset_init(&w, d, f, (ffn_act)a, a % 2 == 0, 11 + (uint64_t)a);
                float *x = frand_array(T * d, 1.0f);
                x[0 * d + 3] = NAN;                 /* row 0: a NaN input */
                if (T > 1) x[1 * d + 7] = INFINITY; /* row 1: +Inf */
                if (T > 2) x[2 * d + 9] = -INFINITY;
                w.wd[5 * d + 1] = NAN; /* a NaN weight: column 1 of every row */
                /* weights that are subnormal in fp16 (below 2^-14) and in bf16's low range, and
                 * a signed zero: the widenings must give the reference's values */
                w.wg[2 * d + 4] = 3.0e-6f;
                if (w.wu) w.wu[3 * d + 5] = -7.5e-7f; /* gated activations only */
                w.wg[4 * d + 6] = -0.0f;
                float y[20 * 40], yref[20 * 40];
                cr_assert_eq(run_off(ref_for(ks[ki]->wdtype), &w, T, x, yref, 1, 0), 0);
                cr_assert_eq(run_off(ks[ki], &w, T, x, y, 2, 0), 0);
                compare(ks[ki], &w, T, y, yref, NULL, "nan/inf");
                /* The rows without special inputs stay finite except for column 1. */
                for (size_t t = 3; t < T; t++)
                    for (size_t i = 0; i < d; i++)
                        cr_assert(isfinite(y[t * d + i]) == (i != 1), "%s row %zu col %zu: %g",
                                  ks[ki]->name, t, i, (double)y[t * d + i]);
                free(x);
                wset_free(&w);
            }
}

/* Gate and up weights scaled into fp16's subnormal range (|w| < 2^-14): every kernel's widening,
 * in every stream (T = 1: the one-row stream; 2: the row stream; 20: the tile), must give the
 * reference's values; a widening that mishandles subnormals is off by about 2^-14 per weight,
 * twenty times the weights. bf16 keeps them normal (fp32's exponent range): the control. */
Test(kernels, subnormal_fp16_weights_widen_exactly)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = fast_kernels(ks);
    if (nk == 0) cr_skip_test("no ISA kernel on this CPU: only the reference is present");
    const size_t d = 40, f = 37;
    static const size_t Ts[] = {1, 2, 20};
    for (size_t ti = 0; ti < 3; ti++) {
        const size_t T = Ts[ti];
        wset w;
        wset_init(&w, d, f, FFN_ACT_SWIGLU, false, 101 + T);
        for (size_t i = 0; i < d * f; i++) {
            w.wg[i] *= 1e-5f;
            w.wu[i] *= 1e-5f;
        }
        cr_assert(fabsf(w.wg[0]) < ldexpf(1.0f, -14), "not subnormal in fp16: %g", w.wg[0]);
        float *x = frand_array(T * d, 1.0f), y[20 * 40], yref[20 * 40];
        double dy[20 * 40];
        for (size_t ki = 0; ki < nk; ki++) {
            if (ks[ki]->wdtype != FFN_DT_FP16 && ks[ki]->wdtype != FFN_DT_BF16) continue;
            cr_assert_eq(run_off(ref_for(ks[ki]->wdtype), &w, T, x, yref, 1, 0), 0);
            error_bound(&w, T, x, ks[ki]->wdtype, dy);
            cr_assert_eq(run_off(ks[ki], &w, T, x, y, 2, 0), 0);
            compare(ks[ki], &w, T, y, yref, dy, "subnormal weights");
        }
        free(x);
        wset_free(&w);
    }
}

Test(kernels, unaligned_pointers_and_thread_counts)
{
    const ffn_kernel *ks[MAXK];
    const size_t nk = fast_kernels(ks);
    if (nk == 0) cr_skip_test("no ISA kernel on this CPU: only the reference is present");
    /* {300, 64, 96}: few panels for many rows, so 7 threads split the row blocks */
    const size_t shapes[][3] = {{3, 77, 45}, {37, 130, 70}, {300, 64, 96}};
    for (size_t ki = 0; ki < nk; ki++)
        for (size_t si = 0; si < 3; si++) {
            const size_t T = shapes[si][0], d = shapes[si][1], f = shapes[si][2];
            wset w;
            wset_init(&w, d, f, FFN_ACT_GEGLU, true, 99 + si);
            float *xbuf = frand_array(T * d + 1, 1.0f);
            float *y1 = malloc((T * d + 1) * sizeof *y1), *y2 = malloc((T * d + 1) * sizeof *y2);
            float *y7 = malloc(T * d * sizeof *y7);
            float *yr = malloc(T * d * sizeof *yr);
            double *dy = malloc(T * d * sizeof *dy);
            cr_assert(y1 && y2 && y7 && yr && dy);
            /* x and y one float past malloc's alignment; packed +4 bytes, workspace +3. */
            cr_assert_eq(run_off(ks[ki], &w, T, xbuf + 1, y1 + 1, 1, 4), 0);
            cr_assert_eq(run_off(ks[ki], &w, T, xbuf + 1, y2 + 1, 2, 4), 0);
            cr_assert_eq(run_off(ref_for(ks[ki]->wdtype), &w, T, xbuf + 1, yr, 1, 0), 0);
            error_bound(&w, T, xbuf + 1, ks[ki]->wdtype, dy);
            compare(ks[ki], &w, T, y1 + 1, yr, dy, "1 thread, unaligned");
            compare(ks[ki], &w, T, y2 + 1, yr, dy, "2 threads, unaligned");
            /* Stronger than the bound: our kernels fix the reduction order of every output
             * whatever the thread count, so 1 and 2 threads agree bit for bit. */
            cr_assert_eq(memcmp(y1 + 1, y2 + 1, T * d * sizeof *y1), 0,
                         "%s: 1 and 2 threads differ", ks[ki]->name);
            /* 7 threads: the schedule splits its down GEMM into single panels and smaller row
             * blocks to give every thread items (ffn__drv_items); the sums keep their order. */
            cr_assert_eq(run_off(ks[ki], &w, T, xbuf + 1, y7, 7, 0), 0);
            cr_assert_eq(memcmp(y1 + 1, y7, T * d * sizeof *y1), 0, "%s: 1 and 7 threads differ",
                         ks[ki]->name);
            free(xbuf);
            free(y1);
            free(y2);
            free(y7);
            free(yr);
            free(dy);
            wset_free(&w);
        }
}

/* The fp32 schedule's work items (kernels/driver/drv_sched.h): unchanged where every thread has
 * ITEMS_PER_THREAD of them already, shrunk (grab, then panel group, then down row block) where it
 * would not, never below one panel or 4 row panels, with the row blocks a multiple of mr. */
Test(kernels, work_items_follow_the_thread_count)
{
    size_t grab, dg, dmc;
    /* AVX2 tile (6 x 16), T = 512 d = 2048 f = 5632: np1 = 704, pd = 128; 2 threads as before */
    ffn__drv_items(512, 516, 0, 6, 704, 128, 2, true, &grab, &dg, &dmc);
    cr_assert_eq(grab, GRAB_PANELS);
    cr_assert_eq(dg, DG);
    cr_assert_eq(dmc, 516);
    /* AVX-512 tile (14 x 32) on 96 threads: np1 = 352, pd = 64, one row block of 518 rows */
    ffn__drv_items(512, 518, 0, 14, 352, 64, 96, true, &grab, &dg, &dmc);
    cr_assert_eq(grab, 1, "352 panels for 384 wanted items: one panel a grab");
    cr_assert_eq(dg, 1);
    cr_assert_eq(dmc % 14, 0);
    const size_t blocks = (512 + dmc - 1) / dmc;
    cr_assert_geq(blocks * 64, 96 * ITEMS_PER_THREAD, "down items %zu for 96 threads", blocks * 64);
    cr_assert_geq(dmc, 4 * 14);
    /* the pair schedule keeps its row blocks */
    ffn__drv_items(512, 518, 0, 14, 352, 64, 96, false, &grab, &dg, &dmc);
    cr_assert_eq(dmc, 518);
    /* few rows: never below 4 row panels, never above the row block */
    ffn__drv_items(40, 42, 0, 14, 8, 2, 64, true, &grab, &dg, &dmc);
    cr_assert_eq(dg, 1);
    cr_assert_eq(dmc, 42, "40 rows cannot split into blocks of at least 56");
    ffn__drv_items(200, 204, 0, 6, 8, 2, 64, true, &grab, &dg, &dmc);
    cr_assert_eq(dmc, 24, "200 rows in blocks of 4 row panels of 6, got %zu", dmc);
    /* a table's down row block (the AVX2 one: at most 192 rows) in equal blocks, mr-aligned; not
     * where the rows do not split, nor above mc, nor for the pair schedule */
    ffn__drv_items(512, 516, 192, 6, 704, 128, 2, true, &grab, &dg, &dmc);
    cr_assert_eq(dmc, 174, "512 rows in 3 blocks of at most 192: 174, got %zu", dmc);
    cr_assert_eq(dg, DG);
    ffn__drv_items(512, 516, 192, 6, 704, 128, 2, false, &grab, &dg, &dmc);
    cr_assert_eq(dmc, 516);
    ffn__drv_items(100, 102, 192, 6, 704, 128, 2, true, &grab, &dg, &dmc);
    cr_assert_eq(dmc, 102);

    /* the bf16 tile schedule (AMX-like: row tile 32, groups of 2 panels), down GEMM of d = 2048
     * (64 panels), T = 512 in one block: 2 threads keep it; 56 threads split the rows down to 4
     * row tiles; a grab of 8 panels gives way to whole groups first */
    size_t chunk, bmc;
    ffn__drv_phase_items(512, 512, 32, 64, 2, 2, 2, &chunk, &bmc);
    cr_assert_eq(chunk, 2);
    cr_assert_eq(bmc, 512);
    ffn__drv_phase_items(512, 512, 32, 64, 2, 2, 56, &chunk, &bmc);
    cr_assert_eq(chunk, 2);
    cr_assert_eq(bmc, 128, "4 row tiles of 32, got %zu", bmc);
    ffn__drv_phase_items(512, 512, 32, 352, 2, 8, 56, &chunk, &bmc);
    cr_assert_eq(chunk, 2, "352 panels for 224 wanted items: grabs of one group, got %zu", chunk);
    cr_assert_eq(bmc, 256, "176 groups for 224 wanted items: two row blocks, got %zu", bmc);
}

Test(kernels, entry_points_validate_arguments)
{
    const ffn_kernel *all[MAXK];
    const size_t n = float_kernel_list(all, MAXK);
    cr_assert_geq(n, 3, "the three reference kernels are always listed");
    for (size_t ki = 0; ki < n; ki++) {
        const ffn_kernel *k = all[ki];
        wset w;
        wset_init(&w, 20, 24, FFN_ACT_SWIGLU, true, 3);
        ffn_kshape bad = w.s;
        bad.d = 0;
        cr_assert_eq(k->packed_bytes(&bad), 0);
        cr_assert_eq(k->packed_bytes(NULL), 0);
        const size_t pb = k->packed_bytes(&w.s);
        unsigned char *packed = malloc(pb);
        cr_assert_not_null(packed);
        cr_assert_eq(k->pack(&bad, &w.kw, packed, pb), FFN_EINVAL, "%s", k->name);
        cr_assert_eq(k->pack(&w.s, NULL, packed, pb), FFN_EINVAL);
        cr_assert_eq(k->pack(&w.s, &w.kw, NULL, pb), FFN_EINVAL);
        cr_assert_eq(k->pack(&w.s, &w.kw, packed, pb - 1), FFN_ENOSPACE);
        ffn_kweights nou = w.kw;
        nou.w_up = NULL; /* gated needs w_up */
        cr_assert_eq(k->pack(&w.s, &nou, packed, pb), FFN_EINVAL);
        nou = w.kw;
        nou.b_down = NULL; /* bias shape needs every bias */
        cr_assert_eq(k->pack(&w.s, &nou, packed, pb), FFN_EINVAL);
        cr_assert_eq(k->pack(&w.s, &w.kw, packed, pb), 0);

        const size_t T = 6;
        float x[6 * 20], y[6 * 20];
        for (size_t i = 0; i < T * 20; i++)
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
        cr_assert_eq(k->forward(&bad, packed, T, x, y, ws, wb, 2), FFN_EINVAL);
        cr_assert_eq(k->forward(NULL, packed, T, x, y, ws, wb, 2), FFN_EINVAL);
        ffn_kshape other = w.s;
        other.f = 25; /* weights packed for another shape */
        cr_assert_eq(k->forward(&other, packed, T, x, y, ws, k->workspace_bytes(&other, T, 2), 2),
                     FFN_EINVAL, "%s accepted weights of another shape", k->name);
        other = w.s;
        other.act = FFN_ACT_GEGLU;
        cr_assert_eq(k->forward(&other, packed, T, x, y, ws, wb, 2), FFN_EINVAL);
        /* T = 0 needs no data at all. */
        cr_assert_eq(k->forward(&w.s, packed, 0, NULL, NULL, NULL, 0, 2), 0);
        cr_assert_eq(k->forward(&w.s, packed, T, x, y, ws, wb, 2), 0);
        free(ws);
        free(packed);
        wset_free(&w);
    }
}

Test(kernels, work_count_matches_hand_count)
{
    /* SwiGLU, T=3, d=4, f=5, biases: 2*3*4*5*2 + 3*5*5 + 2*3*5*4 + (3*5*2 + 3*4)
     * = 240 + 75 + 120 + 42 = 477 FLOPs. Bytes fp32: weights (2*4*5 + 5*4)*4 = 240,
     * biases (2*5 + 4)*4 = 56, x 3*4*4 = 48, h 2*3*5*4 = 120, y 48: 512. bf16: 120 + 28 + 216. */
    const ffn_kshape s = {.d = 4, .f = 5, .act = FFN_ACT_SWIGLU, .bias = true};
    cr_assert_float_eq(ffn_kernel_flops(&s, 3), 477.0, 1e-9);
    cr_assert_float_eq(ffn_kernel_bytes(ref_for(FFN_DT_FP32), &s, 3), 512.0, 1e-9);
    cr_assert_float_eq(ffn_kernel_bytes(ref_for(FFN_DT_BF16), &s, 3), 364.0, 1e-9);
    /* ReLU, no bias, T=2, d=3, f=7: 2*2*3*7 + 2*7*1 + 2*2*7*3 = 84 + 14 + 84 = 182. */
    const ffn_kshape r = {.d = 3, .f = 7, .act = FFN_ACT_RELU, .bias = false};
    cr_assert_float_eq(ffn_kernel_flops(&r, 2), 182.0, 1e-9);
    /* bytes: (21 + 21)*4 + 2*3*4 + 2*2*7*4 + 2*3*4 = 168 + 24 + 112 + 24 = 328. */
    cr_assert_float_eq(ffn_kernel_bytes(ref_for(FFN_DT_FP32), &r, 2), 328.0, 1e-9);
    /* Per-activation FLOPs per element of h: gelu 8, gelu_tanh 8, silu 4, geglu 9, reglu 2. */
    const int per[FFN_ACT_COUNT] = {1, 8, 8, 4, 5, 9, 2};
    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        const ffn_kshape q = {.d = 1, .f = 1, .act = (ffn_act)a, .bias = false};
        const double g = gated((ffn_act)a) ? 2 : 1;
        cr_assert_float_eq(ffn_kernel_flops(&q, 1), 2 * g + per[a] + 2, 1e-9, "%s",
                           ffn_act_name((ffn_act)a));
    }
    cr_assert_float_eq(ffn_kernel_flops(&s, 0), 0.0, 1e-12);
}

Test(kernels, dispatch_names_and_availability)
{
    ffn_isa isa;
    cr_assert_eq(ffn_isa_parse("AVX512", &isa), 0);
    cr_assert_eq(isa, FFN_ISA_AVX512);
    cr_assert_eq(ffn_isa_parse("sse2", &isa), FFN_EINVAL);
    cr_assert_str_eq(ffn_isa_name(FFN_ISA_NEON), "neon");
    cr_assert_null(ffn_isa_name(FFN_ISA_COUNT));
    cr_assert(ffn_isa_available(FFN_ISA_REF));
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, &dg), 0);
    cr_assert_eq(k->isa, FFN_ISA_REF);
    for (int i = 0; i < FFN_ISA_COUNT; i++) {
        if (ffn_isa_available((ffn_isa)i)) continue;
        const int rc = ffn_kernel_get((ffn_isa)i, FFN_DT_FP32, &k, &dg);
        cr_assert_eq(rc, FFN_EUNSUPPORTED);
        cr_assert(strstr(dg.msg, ffn_isa_name((ffn_isa)i)) != NULL, "diag: %s", dg.msg);
    }
    /* no kernel stores fp8 (int8/int4 have their own, test_kernels_quant) */
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP8, &k, &dg), FFN_EUNSUPPORTED);
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), 0);
    /* Without an override the best fp32 kernel is that of the best available ISA. */
    if (getenv("FFNROOF_ISA") == NULL) {
        if (ffn_isa_available(FFN_ISA_AVX512)) cr_assert_eq(k->isa, FFN_ISA_AVX512);
        if (ffn_isa_available(FFN_ISA_SVE))
            cr_assert_eq(k->isa, FFN_ISA_SVE);
        else if (ffn_isa_available(FFN_ISA_NEON))
            cr_assert_eq(k->isa, FFN_ISA_NEON);
    }
}

/* Criterion runs every test in its own process, so the once-only choice sees this setenv. */
Test(kernels, ffnroof_isa_override)
{
    setenv("FFNROOF_ISA", "ref", 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_BF16, &k, &dg), 0);
    cr_assert_eq(k->isa, FFN_ISA_REF);
}

Test(kernels, ffnroof_isa_override_absent_isa_is_an_error)
{
    ffn_isa absent = FFN_ISA_COUNT;
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        if (!ffn_isa_available((ffn_isa)i)) absent = (ffn_isa)i;
    if (absent == FFN_ISA_COUNT) cr_skip_test("every ISA is available here");
    setenv("FFNROOF_ISA", ffn_isa_name(absent), 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), FFN_EUNSUPPORTED);
    cr_assert_null(k);
    cr_assert(strstr(dg.msg, "FFNROOF_ISA") != NULL, "diag: %s", dg.msg);
}

Test(kernels, ffnroof_isa_override_garbage_is_an_error)
{
    setenv("FFNROOF_ISA", "mmx", 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), FFN_EINVAL);
    cr_assert(strstr(dg.msg, "mmx") != NULL, "diag: %s", dg.msg);
}

/* FFNROOF_TUNING picks the other CPU class's measured variants, and says so; a name that is
 * not a tuning's is refused where FFNROOF_ISA's errors are (kernels/tuning.c). */
Test(kernels, ffnroof_tuning_override)
{
    setenv("FFNROOF_TUNING", "Intel", 1);
    cr_assert_eq(ffn_cpu_tuning(), FFN_TUNING_INTEL);
    cr_assert_str_eq(ffn_cpu_tuning_source(), "FFNROOF_TUNING");
    ffn_cpu_tuning_set(FFN_TUNING_DEFAULT);
    cr_assert_eq(ffn_cpu_tuning(), FFN_TUNING_DEFAULT, "the override for tests and benchmarks");
    ffn_cpu_tuning_set(FFN_TUNING_COUNT); /* out of range: ignored */
    cr_assert_eq(ffn_cpu_tuning(), FFN_TUNING_DEFAULT);
    ffn_tuning t;
    cr_assert_eq(ffn_tuning_parse("default", &t), 0);
    cr_assert_eq(t, FFN_TUNING_DEFAULT);
    cr_assert_eq(ffn_tuning_parse("amd", &t), FFN_EINVAL);
    cr_assert_eq(ffn_tuning_parse(NULL, &t), FFN_EINVAL);
    cr_assert_str_eq(ffn_tuning_name(FFN_TUNING_INTEL), "intel");
    cr_assert_null(ffn_tuning_name(FFN_TUNING_COUNT));
}

Test(kernels, ffnroof_tuning_garbage_is_an_error)
{
    setenv("FFNROOF_TUNING", "zen9", 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), FFN_EINVAL);
    cr_assert(strstr(dg.msg, "FFNROOF_TUNING") && strstr(dg.msg, "zen9"), "diag: %s", dg.msg);
    cr_assert_eq(ffn_cpu_tuning(),
                 ffn_cpu_tuning_source()[0] == 'C' &&
                         strstr(ffn_cpu_tuning_source(), "GenuineIntel")
                     ? FFN_TUNING_INTEL
                     : FFN_TUNING_DEFAULT,
                 "a bad value leaves the detected tuning (%s)", ffn_cpu_tuning_source());
}

/* ---- the dispatch table (kernels/registry.c) ------------------------------------------- */

static const ffn_dtype kdtypes[] = {FFN_DT_FP32, FFN_DT_BF16, FFN_DT_FP16};

/* The first row (dispatch order) for dt whose features lie within mask, ref rows and the rows
 * this process's tuning passes over excluded. */
static const ffn_kernel *first_row_within(ffn_dtype dt, uint64_t mask)
{
    const ffn_kernel *ks[MAXK];
    uint64_t req[MAXK];
    const size_t n = ffn_kernel_table(ks, req, MAXK);
    for (size_t i = 0; i < n && i < MAXK; i++)
        if (ks[i]->wdtype == dt && ks[i]->isa != FFN_ISA_REF && (req[i] & ~mask) == 0 &&
            !ffn_kernel_avoided(ks[i], ffn_cpu_tuning()))
            return ks[i];
    return NULL;
}

Test(kernels, stream_rows_come_from_the_microkernel_tables)
{
    /* the model serves calls on up to ffn_kernel_stream_rows tokens at the GEMV bandwidth
     * (calibrate writes them into tiles_by_dtype): they must be the driver's own switch */
    const ffn_kernel *ks[MAXK];
    uint64_t req[MAXK];
    const size_t n = ffn_kernel_table(ks, req, MAXK);
    cr_assert_eq(ffn_kernel_stream_rows(NULL), 0u);
    for (size_t i = 0; i < n && i < MAXK; i++) {
        const ffn_kernel *k = ks[i];
        const unsigned sr = ffn_kernel_stream_rows(k);
        if (k->isa == FFN_ISA_REF) {
            cr_expect_eq(sr, 0u, "%s: the reference streams nothing", k->name);
            continue;
        }
        cr_expect_not_null(k->impl, "%s: a driver kernel without its descriptor", k->name);
        if (k->stream_rows)
            cr_expect_eq(sr, k->stream_rows, "%s: the registry says %u, the table %u", k->name,
                         k->stream_rows, sr);
        cr_expect(sr <= 64, "%s: streams %u tokens", k->name, sr);
        /* every float table has a decode stream (the portable W8A8 table has none) */
        if (k->wdtype != FFN_DT_INT8 && k->wdtype != FFN_DT_INT4)
            cr_expect(sr >= 1, "%s: no decode stream", k->name);
    }
}

Test(kernels, workspace_never_shrinks_as_tokens_grow)
{
    /* the MoE layer sizes one workspace for T tokens and runs each expert on <= T of them: a
     * kernel whose decode stream needs more than its tile at a few more rows breaks that */
    const ffn_kernel *ks[MAXK];
    const size_t n = ffn_kernel_list(ks, MAXK);
    const ffn_kshape shapes[] = {{.d = 64, .f = 96, .act = FFN_ACT_SWIGLU},
                                 {.d = 256, .f = 704, .act = FFN_ACT_GELU, .bias = true},
                                 {.d = 128, .f = 256, .act = FFN_ACT_SILU, .group = 32}};
    for (size_t i = 0; i < n && i < MAXK; i++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const ffn_kernel *k = ks[i];
            ffn_kshape s = shapes[si];
            if (k->wdtype != FFN_DT_INT4)
                s.group = 0;
            else if (!s.group)
                continue;
            for (int threads = 1; threads <= 2; threads++) {
                size_t prev = 0;
                for (size_t T = 1; T <= 160; T++) {
                    const size_t wb = k->workspace_bytes(&s, T, threads);
                    cr_expect_geq(wb, prev, "%s d=%zu: %zu bytes at T=%zu, %zu at T=%zu", k->name,
                                  s.d, wb, T, prev, T - 1);
                    prev = wb;
                }
            }
        }
}

Test(kernels, every_row_needs_at_least_what_its_level_needs)
{
    const ffn_kernel *ks[MAXK];
    uint64_t req[MAXK];
    const size_t n = ffn_kernel_table(ks, req, MAXK);
    cr_assert_gt(n, 0);
    bool portable[FFN_DT_COUNT] = {false};
    for (size_t i = 0; i < n && i < MAXK; i++) {
        const uint64_t need = ffn_isa_requires(ks[i]->isa);
        cr_assert_eq(req[i] & need, need, "%s needs less than level %s", ks[i]->name,
                     ffn_isa_name(ks[i]->isa));
        cr_assert_eq(ffn_kernel_requires(ks[i]), req[i]);
        /* the name says the ISA (f32_ffn__avx2_6x16 is an avx2 kernel) */
        const char *isa = ffn_isa_name(ks[i]->isa);
        char tag[32];
        snprintf(tag, sizeof tag, "__%s", isa);
        if (ks[i]->isa != FFN_ISA_AVX512_BF16)
            cr_assert(strstr(ks[i]->name, tag) != NULL, "%s is not named for %s", ks[i]->name, isa);
        if (ks[i]->isa == FFN_ISA_PORTABLE) portable[ks[i]->wdtype] = true;
    }
    /* every CPU gets a real kernel for every weight dtype: the portable one needs nothing */
    for (size_t d = 0; d < 3; d++)
        cr_assert(portable[kdtypes[d]], "no portable kernel for %s", ffn_dtype_name(kdtypes[d]));
}

Test(kernels, dispatch_picks_the_newest_row_this_cpu_runs)
{
    if (getenv("FFNROOF_ISA"))
        cr_skip_test("FFNROOF_ISA is set: the uncapped choice is not tested");
    const uint64_t cpu = ffn_cpu_features();
    char feats[256];
    ffn_cpu_feature_list(cpu, feats, sizeof feats);
    for (size_t d = 0; d < 3; d++) {
        const ffn_kernel *k = NULL;
        ffn_diag dg;
        cr_assert_eq(ffn_kernel_best(kdtypes[d], &k, &dg), 0, "%s", dg.msg);
        cr_assert_eq(k, first_row_within(kdtypes[d], cpu), "cpu [%s]: %s got %s", feats,
                     ffn_dtype_name(kdtypes[d]), k->name);
        cr_assert_neq(k->isa, FFN_ISA_REF, "the oracle is never dispatched by default");
    }
    /* what the kernels issue asks of each CPU class */
    const ffn_kernel *k32, *k16;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k32, NULL), 0);
    cr_assert_eq(ffn_kernel_best(FFN_DT_BF16, &k16, NULL), 0);
    const bool built512 = ffn_isa_built(FFN_ISA_AVX512), built2 = ffn_isa_built(FFN_ISA_AVX2);
    if ((cpu & FFN_CPU_AVX512) && built512) {
        cr_assert_eq(k32->isa, FFN_ISA_AVX512);
        if ((cpu & FFN_CPU_AMX_BF16) && ffn_isa_built(FFN_ISA_AMX))
            cr_assert_eq(k16->isa, FFN_ISA_AMX);
        else if ((cpu & FFN_CPU_AVX512_BF16) && ffn_isa_built(FFN_ISA_AVX512_BF16))
            cr_assert_eq(k16->isa,
                         ffn_cpu_tuning() == FFN_TUNING_INTEL ? FFN_ISA_AVX512
                                                              : FFN_ISA_AVX512_BF16,
                         "Zen 4/5 class gets VDPBF16PS, an Intel one the widening kernel");
        else
            cr_assert_eq(k16->isa, FFN_ISA_AVX512, "AVX-512F without BF16 widens by shift");
    } else if ((cpu & FFN_CPU_AVX2) && built2) {
        cr_assert_eq(k32->isa, FFN_ISA_AVX2);
        cr_assert_eq(k16->isa, FFN_ISA_AVX2);
    } else if (!(cpu & (FFN_CPU_NEON | FFN_CPU_SVE))) {
        cr_assert_eq(k32->isa, FFN_ISA_PORTABLE, "a CPU no ISA folder fits runs the portable one");
        cr_assert_eq(k16->isa, FFN_ISA_PORTABLE);
    }
}

Test(kernels, a_level_caps_dispatch_at_its_features)
{
    const uint64_t cpu = ffn_cpu_features();
    for (int l = 0; l < FFN_ISA_COUNT; l++) {
        const ffn_isa lv = (ffn_isa)l;
        if (!ffn_isa_available(lv)) continue;
        for (size_t d = 0; d < 3; d++) {
            const ffn_kernel *k = NULL;
            ffn_diag dg;
            cr_assert_eq(ffn_kernel_get(lv, kdtypes[d], &k, &dg), 0, "%s: %s", ffn_isa_name(lv),
                         dg.msg);
            if (lv == FFN_ISA_REF) {
                cr_assert_eq(k->isa, FFN_ISA_REF);
                continue;
            }
            cr_assert_eq(k, first_row_within(kdtypes[d], cpu & ffn_isa_allows(lv)), "%s %s: %s",
                         ffn_isa_name(lv), ffn_dtype_name(kdtypes[d]), k->name);
        }
    }
    if (ffn_isa_available(FFN_ISA_AVX2)) {
        const ffn_kernel *k;
        cr_assert_eq(ffn_kernel_get(FFN_ISA_AVX2, FFN_DT_FP32, &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_AVX2, "avx2 level: %s", k->name);
    }
    const ffn_kernel *k;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_PORTABLE, FFN_DT_FP16, &k, NULL), 0);
    cr_assert_eq(k->isa, FFN_ISA_PORTABLE);
}

Test(kernels, ffnroof_isa_avx2_runs_what_an_avx2_host_runs)
{
    if (!ffn_isa_available(FFN_ISA_AVX2)) cr_skip_test("this CPU or build has no AVX2 level");
    setenv("FFNROOF_ISA", "avx2", 1);
    for (size_t d = 0; d < 3; d++) {
        const ffn_kernel *k = NULL;
        ffn_diag dg;
        cr_assert_eq(ffn_kernel_best(kdtypes[d], &k, &dg), 0, "%s", dg.msg);
        cr_assert_eq(k->isa, FFN_ISA_AVX2, "%s", k->name);
    }
    ffn_isa lv;
    cr_assert_eq(ffn_isa_selected(&lv, NULL), 0);
    cr_assert_eq(lv, FFN_ISA_AVX2);
}

Test(kernels, ffnroof_isa_portable_runs_the_portable_kernels)
{
    setenv("FFNROOF_ISA", "portable", 1);
    for (size_t d = 0; d < 3; d++) {
        const ffn_kernel *k = NULL;
        cr_assert_eq(ffn_kernel_best(kdtypes[d], &k, NULL), 0);
        cr_assert_eq(k->isa, FFN_ISA_PORTABLE, "%s", k->name);
    }
}

Test(kernels, an_unusable_level_names_the_usable_ones)
{
    setenv("FFNROOF_ISA", "mmx", 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), FFN_EINVAL);
    cr_assert(strstr(dg.msg, "portable") != NULL, "diag lists the usable names: %s", dg.msg);
    char usable[256];
    ffn_isa_usable_list(usable, sizeof usable);
    cr_assert(strstr(usable, "ref") && strstr(usable, "portable"), "%s", usable);
    cr_assert_eq(ffn_isa_parse("AVX512_BF16", &(ffn_isa){0}), 0);
}

/* Dispatch for CPU classes this host may not be (feature masks as kernels/cpu.c would detect
 * them; ../shared/reference/cpus.md lists each class's ISA features). */
static const char *pick_tuned(uint64_t features, ffn_tuning t, ffn_isa lv, ffn_dtype dt)
{
    const ffn_kernel *k = NULL;
    if (ffn_kernel_for_cpu_q(features, t, lv, dt, FFN_DT_FP32, &k, NULL)) return "none";
    return k->name;
}

/* with the default tuning, whatever this host's is (ffn_kernel_for_features uses its own) */
static const char *pick_at(uint64_t features, ffn_isa lv, ffn_dtype dt)
{
    return pick_tuned(features, FFN_TUNING_DEFAULT, lv, dt);
}

Test(kernels, dispatch_for_cpu_classes_we_do_not_have)
{
    const uint64_t haswell = FFN_CPU_AVX2;
    const uint64_t skx = haswell | FFN_CPU_AVX512 | FFN_CPU_AVX512_VNNI; /* Skylake-SP..Ice Lake */
    const uint64_t zen4 = skx | FFN_CPU_AVX512_BF16;                     /* Zen 4/5, Cooper Lake */
    const uint64_t spr = zen4 | FFN_CPU_AVX512_FP16 | FFN_CPU_AMX_BF16 | FFN_CPU_AMX_INT8;
    /* Each level's own best: the levels are nested on x86, so the highest level allows all. */
    if (ffn_isa_built(FFN_ISA_AVX2)) {
        cr_assert_str_eq(pick_at(haswell, FFN_ISA_AMX, FFN_DT_FP32), "f32_ffn__avx2_6x16");
        cr_assert_str_eq(pick_at(haswell, FFN_ISA_AMX, FFN_DT_BF16), "bf16_ffn__avx2_6x16");
        cr_assert_str_eq(pick_at(haswell, FFN_ISA_AMX, FFN_DT_FP16), "f16_ffn__avx2_6x16");
    }
    if (ffn_isa_built(FFN_ISA_AVX512)) {
        cr_assert_str_eq(pick_at(skx, FFN_ISA_AMX, FFN_DT_FP32), "f32_ffn__avx512_14x32");
        cr_assert_str_eq(pick_at(skx, FFN_ISA_AMX, FFN_DT_BF16), "bf16_ffn__avx512_14x32",
                         "AVX-512F without BF16 widens bf16 by shift");
        cr_assert_str_eq(pick_at(skx, FFN_ISA_AMX, FFN_DT_FP16), "f16_ffn__avx512_14x32");
    }
    if (ffn_isa_built(FFN_ISA_AVX512_BF16)) {
        cr_assert_str_eq(pick_at(zen4, FFN_ISA_AMX, FFN_DT_BF16), "bf16_ffn__avx512bf16_14x32",
                         "Zen 4/5 (AVX512-BF16, no AMX) get the VDPBF16PS path");
        /* an Intel CPU with AVX512-BF16 and no AMX (Cooper Lake), or an SPR capped at the
         * level: VDPBF16PS ran prefill at 0.61-0.64x the widening kernel on the SPR-class
         * Xeon, so the intel tuning passes it over; nothing else moves */
        cr_assert_str_eq(pick_tuned(zen4, FFN_TUNING_INTEL, FFN_ISA_AMX, FFN_DT_BF16),
                         "bf16_ffn__avx512_14x32");
        cr_assert_str_eq(pick_tuned(spr, FFN_TUNING_INTEL, FFN_ISA_AVX512_BF16, FFN_DT_BF16),
                         "bf16_ffn__avx512_14x32");
        cr_assert_str_eq(pick_tuned(zen4, FFN_TUNING_INTEL, FFN_ISA_AMX, FFN_DT_FP32),
                         "f32_ffn__avx512_14x32");
        cr_assert_str_eq(pick_tuned(zen4, FFN_TUNING_INTEL, FFN_ISA_AMX, FFN_DT_FP16),
                         "f16_ffn__avx512_14x32");
        if (ffn_isa_built(FFN_ISA_AMX))
            cr_assert_str_eq(pick_tuned(spr, FFN_TUNING_INTEL, FFN_ISA_AMX, FFN_DT_BF16),
                             "bf16_ffn__amx_32x32");
    }
    if (ffn_isa_built(FFN_ISA_AMX)) {
        cr_assert_str_eq(pick_at(spr, FFN_ISA_AMX, FFN_DT_BF16), "bf16_ffn__amx_32x32");
        cr_assert_str_eq(pick_at(spr, FFN_ISA_AVX512_BF16, FFN_DT_BF16),
                         "bf16_ffn__avx512bf16_14x32");
        cr_assert_str_eq(pick_at(spr, FFN_ISA_AVX2, FFN_DT_BF16), ffn_isa_built(FFN_ISA_AVX2)
                                                                      ? "bf16_ffn__avx2_6x16"
                                                                      : "bf16_ffn__portable_6x8");
    }
    /* the x86-64 baseline, and a CPU whose OS does not save the AVX state: portable */
    cr_assert_str_eq(pick_at(0, FFN_ISA_AMX, FFN_DT_FP32), "f32_ffn__portable_6x8");
    cr_assert_str_eq(pick_at(0, FFN_ISA_SVE, FFN_DT_BF16), "bf16_ffn__portable_6x8");
    cr_assert_str_eq(pick_at(spr, FFN_ISA_PORTABLE, FFN_DT_FP16), "f16_ffn__portable_6x8");
    cr_assert_str_eq(pick_at(spr, FFN_ISA_REF, FFN_DT_FP32), "f32_ffn__ref");
}
