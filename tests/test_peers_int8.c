/* Criterion suite for the oneDNN int8 (W8A8) peer FFN (peers.h with FFN_DT_INT8,
 * kernels/peers/ffn_peer_onednn_i8.c) against ffnroof's W8A8 reference kernel (w8a8_ffn__ref):
 * the same formats (int8 weights per output channel, x and h quantized per token), every
 * activation, with and without biases, T = 0, 1 and more, odd sizes; and its refusals.
 *
 * Tolerance: the gate/up integer sums are exact on both sides and their rescale is within a
 * few fp32 ulps, but the peer's activation (peer_act.c's polynomials) differs from the
 * reference's double one by ~1e-7 relative, so a code of h can land on the other side of a
 * rounding boundary; each such flip moves y by s_h |w| (about M / 127 / sqrt(f) for these
 * random weights), and only a few of the f codes of a token are close enough to flip. The
 * bound 0.02 M (M = max |y_ref|) admits a handful of flips per output and fails any
 * systematic error (a wrong scale, a missing column-sum correction, a transposed weight: all
 * O(M)).
 *
 * oneDNN's u8 x s8 products on CPUs without VNNI go through VPMADDUBSW, whose int16 pair sums
 * can saturate (oneDNN, "Nuances of int8 Computations", dev_guide_int8_computations): there
 * the comparison is skipped, saying so. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    float *p = malloc((n ? n : 1) * sizeof *p);
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(a);
    return p;
}

static void skip_unless_usable(void)
{
    if (!ffn_peer_available(FFN_PEER_ONEDNN))
        cr_skip_test("onednn was not found when ffnroof was built");
    const uint64_t vnni = FFN_CPU_AVX512_VNNI | FFN_CPU_AVX_VNNI | FFN_CPU_AMX_INT8;
    if (!(ffn_cpu_features() & vnni))
        cr_skip_test("this CPU has no VNNI: oneDNN's u8s8 products may saturate there");
}

typedef struct layer {
    ffn_kshape s;
    float *wg, *wu, *wd, *bg, *bu, *bd;
    ffn_kweights w;
} layer;

static void layer_init(layer *L, size_t d, size_t f, ffn_act act, bool bias, uint64_t seed)
{
    ffn_rng_seed(&rng, seed);
    memset(L, 0, sizeof *L);
    L->s = (ffn_kshape){.d = d, .f = f, .act = act, .bias = bias};
    const bool g = ffn_act_gated(act);
    L->wg = rand_array(d * f, 2.0f / sqrtf((float)d));
    L->wu = g ? rand_array(d * f, 2.0f / sqrtf((float)d)) : NULL;
    L->wd = rand_array(f * d, 1.0f / sqrtf((float)f));
    if (bias) {
        L->bg = rand_array(f, 0.5f);
        L->bu = g ? rand_array(f, 0.5f) : NULL;
        L->bd = rand_array(d, 0.5f);
    }
    L->w = (ffn_kweights){L->wg, L->wu, L->wd, L->bg, L->bu, L->bd};
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

static void reference(const layer *L, size_t T, const float *x, float *y)
{
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_get_q(FFN_ISA_REF, FFN_DT_INT8, FFN_DT_INT8, &k, NULL), 0);
    const size_t pb = k->packed_bytes(&L->s), wb = k->workspace_bytes(&L->s, T, 1);
    void *p = malloc(pb), *ws = malloc(wb + 1);
    cr_assert(p && ws);
    cr_assert_eq(k->pack(&L->s, &L->w, p, pb), 0);
    cr_assert_eq(k->forward(&L->s, p, T, x, y, ws, wb, 1), 0);
    free(p);
    free(ws);
}

Test(peers_int8, onednn_int8_matches_the_w8a8_reference)
{
    skip_unless_usable();
    static const size_t shapes[][3] = {{0, 15, 31},  {1, 64, 33},  {3, 17, 250},
                                       {17, 15, 31}, {64, 64, 96}, {5, 100, 257}};
    for (int a = 0; a < FFN_ACT_COUNT; a++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const size_t T = shapes[i][0], d = shapes[i][1], f = shapes[i][2];
            layer L;
            layer_init(&L, d, f, (ffn_act)a, (i + (size_t)a) % 2 == 1, 11 + i);
            float *x = rand_array(T * d, 1.0f), *y = rand_array(T * d, 9.0f);
            float *yr = rand_array(T * d, 9.0f);
            reference(&L, T, x, yr);
            ffn_peer *p = NULL;
            ffn_diag dg;
            cr_assert_eq(ffn_peer_init(FFN_PEER_ONEDNN, FFN_DT_INT8, &L.s, &L.w, T, 2, &p, &dg), 0,
                         "%s", dg.msg);
            cr_assert(strstr(ffn_peer_describe(p), "u8s8s32") != NULL, "%s", ffn_peer_describe(p));
            for (int rep = 0; rep < 2; rep++) {
                cr_assert_eq(ffn_peer_forward(p, T, x, y), 0);
                double M = 0;
                for (size_t j = 0; j < T * d; j++)
                    M = fmax(M, fabs(yr[j]));
                for (size_t j = 0; j < T * d; j++)
                    cr_assert_leq(fabs((double)y[j] - yr[j]), 0.02 * M + 1e-30,
                                  "%s T=%zu d=%zu f=%zu: y[%zu] = %.7g, reference %.7g (M %.3g)",
                                  ffn_act_name((ffn_act)a), T, d, f, j, (double)y[j], (double)yr[j],
                                  M);
            }
            ffn_peer_free(p);
            free(x);
            free(y);
            free(yr);
            layer_free(&L);
        }
}

Test(peers_int8, a_weight_with_no_scale_is_refused)
{
    skip_unless_usable();
    layer L;
    layer_init(&L, 32, 48, FFN_ACT_RELU, false, 3);
    L.wd[5] = INFINITY;
    ffn_peer *p = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_peer_init(FFN_PEER_ONEDNN, FFN_DT_INT8, &L.s, &L.w, 4, 1, &p, &dg),
                 FFN_EINVAL);
    cr_assert(strstr(dg.msg, "NaN or Inf") != NULL, "%s", dg.msg);
    layer_free(&L);
}

Test(peers_int8, openblas_has_no_int8_peer)
{
    if (!ffn_peer_available(FFN_PEER_OPENBLAS)) cr_skip_test("openblas was not built");
    layer L;
    layer_init(&L, 32, 48, FFN_ACT_RELU, false, 3);
    ffn_peer *p = NULL;
    cr_assert_eq(ffn_peer_init(FFN_PEER_OPENBLAS, FFN_DT_INT8, &L.s, &L.w, 4, 1, &p, NULL),
                 FFN_EUNSUPPORTED);
    layer_free(&L);
}
