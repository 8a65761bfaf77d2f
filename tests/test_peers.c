/* Criterion suite for the peer FFNs (peers.h): the OpenBLAS and oneDNN FFNs against the scalar
 * reference dense kernel (ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32)) for every activation, with
 * and without biases, over shapes with odd sizes and vector tails, T = 0 and T = 1 (the sgemv
 * path); the argument checks; and the FFN_EUNSUPPORTED answer of a library that was not built
 * (a test that needs a library is skipped, saying so, when it is absent).
 *
 * Tolerances (relative to M = max |y_ref| of the call):
 *  - fp32: two chained fp32 dot products of lengths d and f, each off by at most ~len eps32
 *    times its |terms| sum (Higham's gamma_n), plus the peers' activation approximations
 *    (OpenBLAS pass: exp rel 2e-7, erf abs 1.5e-7; oneDNN's own eltwise): 8 (d + f) eps32 M;
 *  - oneDNN bf16: x, the weights and h are rounded to bf16 (2^-9 relative each), products
 *    carry about 2 * 2^-9 relative error of random sign, so a length-n dot product is off by
 *    about 2^-8 sqrt(n) times its rms term: 4 * 2^-8 sqrt(d + f) M. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/peers/peers_internal.h"
#include "ffnroof/kernels.h"
#include "ffnroof/peers.h"
#include "ffnroof/rand.h"

static ffn_rng rng;
static float frand(float a)
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

typedef struct dense {
    ffn_kshape s;
    ffn_kweights w;
} dense;

static void dense_init(dense *D, size_t d, size_t f, ffn_act act, bool bias, uint64_t seed)
{
    ffn_rng_seed(&rng, seed);
    memset(D, 0, sizeof *D);
    D->s = (ffn_kshape){.d = d, .f = f, .act = act, .bias = bias};
    /* scaled so that pre-activations are O(1): the activations' curved parts get exercised */
    D->w.w_gate = rand_array(d * f, 2.0f / sqrtf((float)d));
    D->w.w_up = is_gated(act) ? rand_array(d * f, 2.0f / sqrtf((float)d)) : NULL;
    D->w.w_down = rand_array(f * d, 1.0f / sqrtf((float)f));
    if (bias) {
        D->w.b_gate = rand_array(f, 0.5f);
        D->w.b_up = is_gated(act) ? rand_array(f, 0.5f) : NULL;
        D->w.b_down = rand_array(d, 0.5f);
    }
}
static void dense_free(dense *D)
{
    free((void *)D->w.w_gate);
    free((void *)D->w.w_up);
    free((void *)D->w.w_down);
    free((void *)D->w.b_gate);
    free((void *)D->w.b_up);
    free((void *)D->w.b_down);
}

/* y_ref = FFN(x) with the scalar reference kernel. */
static void reference(const dense *D, size_t T, const float *x, float *y)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
    size_t pb = k->packed_bytes(&D->s);
    void *packed = aligned_alloc(64, (pb + 63) / 64 * 64);
    cr_assert_eq(k->pack(&D->s, &D->w, packed, pb), 0);
    size_t wb = k->workspace_bytes(&D->s, T, 1);
    void *ws = malloc(wb ? wb : 1);
    cr_assert_eq(k->forward(&D->s, packed, T, x, y, ws, wb, 1), 0);
    free(ws);
    free(packed);
}

/* True when the OpenBLAS peer refuses this CPU because the kernels OpenBLAS chose need
 * instructions it lacks (ffn_peer_openblas.c: a core OPENBLAS_CORETYPE forces, such as this
 * environment's Haswell under qemu64, or the 3DNow! of the K8 kernels qemu64 gets): the peer
 * says so and the tests that would run it skip, with its message. */
static bool openblas_refuses_cpu(ffn_peer_lib lib, char *msg, size_t n)
{
    if (lib != FFN_PEER_OPENBLAS || !ffn_peer_available(lib)) return false;
    const ffn_kshape s = {.d = 4, .f = 4, .act = FFN_ACT_RELU};
    float w[16] = {0};
    const ffn_kweights kw = {.w_gate = w, .w_down = w};
    ffn_peer *p = NULL;
    ffn_diag diag;
    const int rc = ffn_peer_init(lib, FFN_DT_FP32, &s, &kw, 1, 1, &p, &diag);
    ffn_peer_free(p);
    if (rc != FFN_EUNSUPPORTED || !strstr(diag.msg, "which this CPU lacks")) return false;
    if (msg) snprintf(msg, n, "%.255s", diag.msg);
    return true;
}

static void check_peer(ffn_peer_lib lib, ffn_dtype dt, const dense *D, size_t T, int threads)
{
    const size_t d = D->s.d, f = D->s.f;
    ffn_rng_seed(&rng, 1000 + T);
    float *x = rand_array(T * d, 1.0f);
    float *y = rand_array(T * d, 7.0f);
    float *yr = rand_array(T * d, 7.0f);
    reference(D, T, x, yr);
    ffn_peer *p = NULL;
    ffn_diag diag;
    int rc = ffn_peer_init(lib, dt, &D->s, &D->w, T, threads, &p, &diag);
    if (rc == FFN_EUNSUPPORTED && openblas_refuses_cpu(lib, NULL, 0)) cr_skip_test("%s", diag.msg);
    cr_assert_eq(rc, 0, "%s %s init: %d (%s)", ffn_peer_lib_name(lib), ffn_dtype_name(dt), rc,
                 diag.msg);
    cr_assert_neq(ffn_peer_describe(p)[0], '\0');
    for (int rep = 0; rep < 2; rep++) { /* a second call reuses everything init prepared */
        cr_assert_eq(ffn_peer_forward(p, T, x, y), 0);
        double M = 0;
        for (size_t i = 0; i < T * d; i++)
            M = fmax(M, fabs(yr[i]));
        const double n = (double)(d + f);
        const double tol =
            dt == FFN_DT_FP32 ? 8.0 * n * FLT_EPSILON * M : 4.0 * ldexp(1.0, -8) * sqrt(n) * M;
        for (size_t i = 0; i < T * d; i++) {
            double err = fabs((double)y[i] - (double)yr[i]);
            cr_assert(err <= tol + 1e-30,
                      "%s %s (%s) act %s T=%zu d=%zu f=%zu bias=%d: y[%zu] = %.8g, ref %.8g, "
                      "|err| %.3g > %.3g",
                      ffn_peer_lib_name(lib), ffn_dtype_name(dt), ffn_peer_describe(p),
                      ffn_act_name(D->s.act), T, d, f, (int)D->s.bias, i, y[i], yr[i], err, tol);
        }
    }
    ffn_peer_free(p);
    free(x);
    free(y);
    free(yr);
}

typedef struct shape3 {
    size_t T, d, f;
} shape3;
static const shape3 shapes[] = {
    {0, 15, 31}, {1, 64, 33}, {1, 17, 2730}, {3, 1, 1}, {17, 15, 31}, {64, 64, 33}, {5, 100, 257},
};

static void sweep(ffn_peer_lib lib, ffn_dtype dt)
{
    if (!ffn_peer_available(lib))
        cr_skip_test("%s was not found when ffnroof was built", ffn_peer_lib_name(lib));
    for (int a = 0; a < FFN_ACT_COUNT; a++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const bool bias = (i + (size_t)a) % 2 == 1;
            dense D;
            dense_init(&D, shapes[i].d, shapes[i].f, (ffn_act)a, bias, 7 + i);
            check_peer(lib, dt, &D, shapes[i].T, 2);
            dense_free(&D);
        }
}

Test(peers, openblas_fp32_matches_reference)
{
    sweep(FFN_PEER_OPENBLAS, FFN_DT_FP32);
}
Test(peers, onednn_fp32_matches_reference)
{
    sweep(FFN_PEER_ONEDNN, FFN_DT_FP32);
}
Test(peers, onednn_bf16_matches_reference)
{
    /* oneDNN 2.x implements bf16 matmul on avx512_core (F, BW, VL, DQ) and newer only: on an
     * AVX2 or older CPU its primitive descriptor answers dnnl_unimplemented (status 3). */
    if (ffn_peer_available(FFN_PEER_ONEDNN) && !(ffn_cpu_features() & FFN_CPU_AVX512))
        cr_skip_test("oneDNN's bf16 matmul needs AVX-512 (avx512_core), which this CPU lacks");
    sweep(FFN_PEER_ONEDNN, FFN_DT_BF16);
}

Test(peers, one_and_two_threads_agree_with_the_reference)
{
    for (int lib = 0; lib < FFN_PEER_COUNT; lib++) {
        if (!ffn_peer_available((ffn_peer_lib)lib)) continue;
        char why[256];
        if (openblas_refuses_cpu((ffn_peer_lib)lib, why, sizeof why)) {
            fprintf(stderr, "left out: %s\n", why);
            continue;
        }
        dense D;
        dense_init(&D, 96, 200, FFN_ACT_SWIGLU, false, 3);
        check_peer((ffn_peer_lib)lib, FFN_DT_FP32, &D, 33, 1);
        check_peer((ffn_peer_lib)lib, FFN_DT_FP32, &D, 33, 2);
        dense_free(&D);
    }
}

Test(peers, bad_arguments_are_refused)
{
    dense D;
    dense_init(&D, 8, 12, FFN_ACT_SWIGLU, true, 1);
    ffn_peer *p = (ffn_peer *)&D; /* must be reset to NULL on failure */
    ffn_diag diag;
    for (int lib = 0; lib < FFN_PEER_COUNT; lib++) {
        ffn_peer_lib L = (ffn_peer_lib)lib;
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &D.s, &D.w, 4, 1, NULL, &diag), FFN_EINVAL);
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, NULL, &D.w, 4, 1, &p, &diag), FFN_EINVAL);
        cr_assert_null(p);
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &D.s, NULL, 4, 1, &p, &diag), FFN_EINVAL);
        ffn_kshape s0 = D.s;
        s0.d = 0;
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &s0, &D.w, 4, 1, &p, &diag), FFN_EINVAL);
        s0 = D.s;
        s0.f = 0;
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &s0, &D.w, 4, 1, &p, &diag), FFN_EINVAL);
        ffn_kweights w = D.w;
        w.w_up = NULL; /* swiglu needs it */
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &D.s, &w, 4, 1, &p, &diag), FFN_EINVAL);
        cr_assert_neq(diag.msg[0], '\0', "the diagnostic says why");
        w = D.w;
        w.b_down = NULL; /* the shape has biases */
        cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &D.s, &w, 4, 1, &p, &diag), FFN_EINVAL);
        if (!ffn_peer_available(L)) {
            cr_assert_eq(ffn_peer_init(L, FFN_DT_FP32, &D.s, &D.w, 4, 1, &p, &diag),
                         FFN_EUNSUPPORTED);
            cr_assert_str_eq(ffn_peer_lib_version(L), "not built");
            continue;
        }
        /* no peer stores int4 (oneDNN's int8 one has its own suite, test_peers_int8) */
        cr_assert_eq(ffn_peer_init(L, FFN_DT_INT4, &D.s, &D.w, 4, 1, &p, &diag), FFN_EUNSUPPORTED);
        cr_assert_null(p);
        const int rc = ffn_peer_init(L, FFN_DT_FP32, &D.s, &D.w, 4, 1, &p, &diag);
        if (rc == FFN_EUNSUPPORTED && openblas_refuses_cpu(L, NULL, 0)) {
            fprintf(stderr, "%s\n", diag.msg); /* the checks above still ran */
            continue;
        }
        cr_assert_eq(rc, 0, "%s", diag.msg);
        float x[32] = {0}, y[32];
        cr_assert_eq(ffn_peer_forward(p, 3, x, y), FFN_EINVAL, "T differs from init's");
        cr_assert_eq(ffn_peer_forward(p, 4, NULL, y), FFN_EINVAL);
        cr_assert_eq(ffn_peer_forward(p, 4, x, NULL), FFN_EINVAL);
        cr_assert_eq(ffn_peer_forward(NULL, 4, x, y), FFN_EINVAL);
        cr_assert_eq(ffn_peer_forward(p, 4, x, y), 0);
        ffn_peer_free(p);
        p = NULL;
    }
    cr_assert_eq(ffn_peer_init(FFN_PEER_OPENBLAS, FFN_DT_BF16, &D.s, &D.w, 4, 1, &p, &diag),
                 FFN_EUNSUPPORTED, "the OpenBLAS peer is fp32 only");
    cr_assert_eq(ffn_peer_init(FFN_PEER_COUNT, FFN_DT_FP32, &D.s, &D.w, 4, 1, &p, &diag),
                 FFN_EINVAL);
    cr_assert_null(ffn_peer_lib_name(FFN_PEER_COUNT));
    cr_assert_not(ffn_peer_available(FFN_PEER_COUNT));
    ffn_peer_free(NULL);
    dense_free(&D);
}

/* The cores whose kernels need more than a CPU has (OpenBLAS 0.3.21's names): the peer refuses
 * them rather than die of SIGILL in the first sgemm. */
Test(peers, openblas_cores_a_cpu_cannot_run)
{
    const uint64_t haswell = FFN_CPU_AVX2, skx = haswell | FFN_CPU_AVX512,
                   zen4 = skx | FFN_CPU_AVX512_BF16;
    cr_expect_eq(ffn__openblas_core_lacks("Haswell", 0), FFN_CPU_AVX2, "qemu64 forced to Haswell");
    cr_expect_eq(ffn__openblas_core_lacks("Haswell", haswell), 0);
    cr_expect_eq(ffn__openblas_core_lacks("Zen", haswell), 0);
    cr_expect_eq(ffn__openblas_core_lacks("SkylakeX", haswell), FFN_CPU_AVX512);
    cr_expect_eq(ffn__openblas_core_lacks("SkylakeX", skx), 0);
    cr_expect_eq(ffn__openblas_core_lacks("Cooperlake", skx), FFN_CPU_AVX512_BF16);
    cr_expect_eq(ffn__openblas_core_lacks("Cooperlake", zen4), 0, "Zen 4/5 run Cooperlake");
    cr_expect_eq(ffn__openblas_core_lacks("SapphireRapids", haswell),
                 FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16);
    cr_expect_eq(ffn__openblas_core_lacks("Prescott", 0), 0, "SSE3 cores run anywhere x86-64");
    cr_expect_eq(ffn__openblas_core_lacks(NULL, 0), 0);
}
