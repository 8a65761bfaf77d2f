/* The accuracy evaluation behind `ffnroof quant` (measure/quant/quant_eval.c, quant_speed.c): the
 * metrics on hand-computed cases, the reference FFN against hand values and the project's scalar
 * kernel oracle, SmoothQuant's migration leaving the function unchanged, and the orderings the
 * literature predicts, asserted on seeded inputs: per-channel int8 beats per-tensor on
 * heavy-tailed weights, int4 with groups of 32 beats groups of 128, SmoothQuant beats plain
 * W8A8 on outlier activations, and the W8A8 errors shrink when the outliers go. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/quant_eval.h"

static ffn_qeval_fmt F(const char *name)
{
    ffn_qeval_fmt f;
    cr_assert_eq(ffn_qeval_fmt_parse(name, &f), 0, "cannot parse %s", name);
    return f;
}

Test(quant_eval, metrics_are_exact_on_hand_cases)
{
    const double ref[3] = {1, 2, 3}, y[3] = {1, 2, 2};
    ffn_qeval_metrics m;
    ffn_qeval_compare(y, ref, 3, &m);
    cr_expect_float_eq(m.rel_l2, 1.0 / sqrt(14.0), 1e-15);
    cr_expect_eq(m.max_abs, 1.0);
    cr_expect_float_eq(m.cosine, 11.0 / (3.0 * sqrt(14.0)), 1e-15);
    ffn_qeval_compare(ref, ref, 3, &m);
    cr_expect(m.rel_l2 == 0 && m.max_abs == 0 && fabs(m.cosine - 1) < 1e-15);
    const double neg[3] = {-1, -2, -3}, zero[3] = {0, 0, 0};
    ffn_qeval_compare(neg, ref, 3, &m);
    cr_expect_float_eq(m.rel_l2, 2.0, 1e-15);
    cr_expect_float_eq(m.cosine, -1.0, 1e-15);
    cr_expect_eq(m.max_abs, 6.0);
    ffn_qeval_compare(zero, zero, 3, &m);
    cr_expect(m.rel_l2 == 0 && m.cosine == 1, "both zero: no error");
    ffn_qeval_compare(ref, zero, 3, &m);
    cr_expect(isinf(m.rel_l2) && m.cosine == 0, "a zero reference: infinite relative error");
    ffn_qeval_compare(zero, ref, 3, &m);
    cr_expect(m.rel_l2 == 1 && m.cosine == 0);
}

Test(quant_eval, format_names_groups_and_bits)
{
    static const char *const names[] = {"int8-tensor", "int8-channel", "int4-g32", "int4-g64",
                                        "int4-g128",   "int4z-g32",    "w8a8",     "w8a8-smooth"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[32];
        const ffn_qeval_fmt f = F(names[i]);
        ffn_qeval_fmt_name(&f, buf, sizeof buf);
        cr_expect_str_eq(buf, names[i]);
    }
    ffn_qeval_fmt f;
    cr_expect_eq(ffn_qeval_fmt_parse("int4-g16", &f), FFN_EINVAL);
    cr_expect_eq(ffn_qeval_fmt_parse("int4", &f), FFN_EINVAL);
    cr_expect_eq(ffn_qeval_fmt_parse("fp8", &f), FFN_EINVAL);
    cr_expect_eq(ffn_qeval_groups_valid(4096, 11008), 7u, "11008 = 86 * 128");
    cr_expect_eq(ffn_qeval_groups_valid(96, 256), 1u, "96 is divisible by 32 only");
    cr_expect_eq(ffn_qeval_groups_valid(100, 256), 0u);
    const ffn_kshape s = {.d = 96, .f = 256, .act = FFN_ACT_SWIGLU};
    cr_expect_eq(ffn_qeval_fmt_check(&(ffn_qeval_fmt){.kind = FFN_QE_INT4_GROUP, .group = 32}, &s),
                 0);
    cr_expect_eq(ffn_qeval_fmt_check(&(ffn_qeval_fmt){.kind = FFN_QE_INT4_GROUP, .group = 64}, &s),
                 FFN_EINVAL);
    cr_expect_float_eq(
        ffn_qeval_fmt_bits(&(ffn_qeval_fmt){.kind = FFN_QE_INT4_GROUP, .group = 32}, &s), 5.0,
        1e-12);
    cr_expect_float_eq(
        ffn_qeval_fmt_bits(
            &(ffn_qeval_fmt){.kind = FFN_QE_INT4_GROUP, .group = 32, .zero_point = true}, &s),
        5.25, 1e-12);
    /* per channel: gate and up (K = 96) 2 * 256 scales, down (K = 256) 96 scales */
    cr_expect_float_eq(ffn_qeval_fmt_bits(&(ffn_qeval_fmt){.kind = FFN_QE_INT8_CHANNEL}, &s),
                       8.0 + 32.0 * (2 * 256 + 96) / (3.0 * 96 * 256), 1e-12);
}

Test(quant_eval, reference_matches_a_hand_computed_layer)
{
    /* d = 2, f = 2, reglu: h = relu(x Wg) * (x Wu), y = h Wd */
    const float wg[4] = {1, -1, 2, 0.5f}, wu[4] = {0.5f, 1, -1, 2}, wd[4] = {1, 2, 3, 4};
    const float x[2] = {1, 2};
    /* x Wg = [1 + 4, -1 + 1] = [5, 0]; x Wu = [0.5 - 2, 1 + 4] = [-1.5, 5];
     * h = [5 * -1.5, 0 * 5] = [-7.5, 0]; y = [-7.5, -15] */
    const ffn_kshape s = {.d = 2, .f = 2, .act = FFN_ACT_REGLU};
    const ffn_kweights w = {.w_gate = wg, .w_up = wu, .w_down = wd};
    double y[2];
    cr_assert_eq(ffn_qeval_reference(&s, &w, 1, x, 1, y), 0);
    cr_expect_eq(y[0], -7.5);
    cr_expect_eq(y[1], -15.0);
}

/* A seeded layer and tokens. */
typedef struct case_t {
    ffn_kshape s;
    size_t T;
    float *wg, *wu, *wd, *x;
    double *ref;
    ffn_kweights w;
} case_t;

static case_t make(size_t d, size_t f, ffn_act act, size_t T, const ffn_qeval_synth *syn)
{
    case_t c = {.s = {.d = d, .f = f, .act = act}, .T = T};
    c.wg = malloc(d * f * sizeof(float));
    c.wu = malloc(d * f * sizeof(float));
    c.wd = malloc(d * f * sizeof(float));
    c.x = malloc(T * d * sizeof(float));
    c.ref = malloc(T * d * sizeof(double));
    cr_assert_eq(ffn_qeval_synth_weights(syn, &c.s, c.wg, c.wu, c.wd), 0);
    cr_assert_eq(ffn_qeval_synth_acts(syn, T, d, c.x, NULL, NULL), 0);
    c.w = (ffn_kweights){.w_gate = c.wg, .w_up = ffn_act_gated(act) ? c.wu : NULL, .w_down = c.wd};
    cr_assert_eq(ffn_qeval_reference(&c.s, &c.w, T, c.x, 0, c.ref), 0);
    return c;
}

static void drop(case_t *c)
{
    free(c->wg);
    free(c->wu);
    free(c->wd);
    free(c->x);
    free(c->ref);
}

static ffn_qeval_metrics run(const case_t *c, const char *fmt, double alpha)
{
    ffn_qeval_metrics m;
    const ffn_qeval_fmt f = F(fmt);
    cr_assert_eq(ffn_qeval_run(&c->s, &c->w, c->T, c->x, c->ref, &f, alpha, 0, &m, NULL), 0, "%s",
                 fmt);
    return m;
}

Test(quant_eval, reference_matches_the_scalar_kernel_oracle)
{
    const ffn_qeval_synth syn = {.seed = 7, .outlier_frac = 0.02, .outlier_scale = 30};
    static const ffn_act acts[] = {FFN_ACT_SWIGLU, FFN_ACT_GELU, FFN_ACT_RELU, FFN_ACT_GEGLU};
    for (size_t a = 0; a < 4; a++) {
        case_t c = make(64, 96, acts[a], 5, &syn);
        const ffn_kernel *k;
        cr_assert_eq(ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &k, NULL), 0);
        double t, err;
        const ffn_qspeed_opts o = {.threads = 1, .reps = 1};
        cr_assert_eq(ffn_qspeed_time(k, &c.s, &c.w, &o, c.T, c.x, c.ref, &t, &err), 0);
        cr_expect_lt(err, 1e-6, "%s: the eval's reference and the ref kernel differ by %g",
                     ffn_act_name(acts[a]), err);
        cr_expect(t > 0 && isfinite(t));
        drop(&c);
    }
}

Test(quant_eval, seeded_inputs_repeat_and_mark_their_outliers)
{
    const ffn_qeval_synth syn = {.seed = 42, .outlier_frac = 0.01, .outlier_scale = 50};
    enum { T = 64, D = 512 };
    float *a = malloc(T * D * sizeof *a), *b = malloc(T * D * sizeof *b);
    bool ch[D];
    size_t n;
    cr_assert_eq(ffn_qeval_synth_acts(&syn, T, D, a, &n, ch), 0);
    cr_expect_eq(n, 5u, "round(0.01 * 512) channels");
    size_t marked = 0;
    for (int k = 0; k < D; k++)
        marked += ch[k];
    cr_expect_eq(marked, 5u);
    cr_assert_eq(ffn_qeval_synth_acts(&syn, T, D, b, NULL, NULL), 0);
    cr_expect_eq(memcmp(a, b, T * D * sizeof *a), 0, "one seed, one x");
    /* the outlier channels carry about 50x the RMS of the others */
    double so = 0, sn = 0;
    for (int t = 0; t < T; t++)
        for (int k = 0; k < D; k++)
            *(ch[k] ? &so : &sn) += (double)a[t * D + k] * a[t * D + k];
    const double ratio = sqrt(so / (5.0 * T)) / sqrt(sn / ((D - 5.0) * T));
    cr_expect(ratio > 40 && ratio < 60, "outlier RMS ratio %g", ratio);
    ffn_qeval_synth other = syn;
    other.seed = 43;
    cr_assert_eq(ffn_qeval_synth_acts(&other, T, D, b, NULL, NULL), 0);
    cr_expect_neq(memcmp(a, b, T * D * sizeof *a), 0);
    other = syn;
    other.outlier_frac = 1e-9;
    cr_assert_eq(ffn_qeval_synth_acts(&other, T, D, b, &n, NULL), 0);
    cr_expect_eq(n, 1u, "a positive fraction is at least one channel");
    other.outlier_frac = 0;
    cr_assert_eq(ffn_qeval_synth_acts(&other, T, D, b, &n, NULL), 0);
    cr_expect_eq(n, 0u);
    free(a);
    free(b);
}

Test(quant_eval, weights_have_the_asked_spread_and_tails)
{
    enum { D = 256, N = 512 };
    const ffn_kshape s = {.d = D, .f = N, .act = FFN_ACT_GELU};
    float *wg = malloc(D * N * sizeof *wg), *wd = malloc(D * N * sizeof *wd);
    for (int dist = 0; dist < 2; dist++) {
        const ffn_qeval_synth syn = {.seed = 3, .wdist = (ffn_qeval_wdist)dist, .nu = 5};
        cr_assert_eq(ffn_qeval_synth_weights(&syn, &s, wg, NULL, wd), 0);
        double ss = 0, s4 = 0;
        for (int i = 0; i < D * N; i++) {
            ss += (double)wg[i] * wg[i];
            s4 += (double)wg[i] * wg[i] * wg[i] * wg[i];
        }
        const double var = ss / (D * N), kurt = s4 / (D * N) / (var * var);
        cr_expect(fabs(var * D - 1) < 0.05, "%s: variance %g, want 1/%d", dist ? "t" : "gauss", var,
                  D);
        /* kurtosis: 3 for a Gaussian, 3 + 6 / (nu - 4) = 9 for Student-t with nu = 5 */
        if (dist == 0)
            cr_expect(fabs(kurt - 3) < 0.1, "gauss kurtosis %g", kurt);
        else
            cr_expect(kurt > 5, "student-t kurtosis %g", kurt);
    }
    free(wg);
    free(wd);
}

Test(quant_eval, smoothing_keeps_the_function)
{
    /* gated (1/m_h folded into up), relu (folded into gate) and gelu (h divided) */
    static const ffn_act acts[] = {FFN_ACT_SWIGLU, FFN_ACT_RELU, FFN_ACT_GELU};
    const ffn_qeval_synth syn = {.seed = 11, .outlier_frac = 0.02, .outlier_scale = 60};
    for (size_t a = 0; a < 3; a++) {
        case_t c = make(128, 256, acts[a], 16, &syn);
        const size_t df = 128 * 256;
        float *xs = malloc(16 * 128 * sizeof *xs), *g = malloc(df * 4), *u = malloc(df * 4),
              *dn = malloc(df * 4), *hd = malloc(256 * 4);
        cr_assert_eq(ffn_qeval_smooth(&c.s, &c.w, c.T, c.x, 0.5, 0, xs, g, u, dn, hd), 0);
        size_t ones = 0;
        for (int n = 0; n < 256; n++)
            ones += hd[n] == 1.0f;
        cr_expect_eq(ones == 256, acts[a] != FFN_ACT_GELU, "%s: h_div", ffn_act_name(acts[a]));
        /* the smoothed layer's reference (h divided explicitly where needed) is the layer */
        double *y = malloc(16 * 128 * sizeof *y);
        const ffn_kweights ws = {.w_gate = g, .w_up = c.w.w_up ? u : NULL, .w_down = dn};
        cr_assert_eq(ffn_qeval_reference(&c.s, &ws, c.T, xs, 0, y), 0);
        ffn_qeval_metrics m;
        ffn_qeval_compare(y, c.ref, 16 * 128, &m);
        if (acts[a] == FFN_ACT_GELU) {
            /* without the division the output changes: the check can fail */
            cr_expect_gt(m.rel_l2, 1e-3);
        } else {
            cr_expect_lt(m.rel_l2, 1e-5, "%s: smoothing changed the FFN by %g",
                         ffn_act_name(acts[a]), m.rel_l2);
        }
        /* the outlier channels of x' are tamed: max |x'| / median-channel max |x'| << 60 */
        float mx = 0;
        for (int i = 0; i < 16 * 128; i++)
            mx = fmaxf(mx, fabsf(xs[i]));
        float mx0 = 0;
        for (int i = 0; i < 16 * 128; i++)
            mx0 = fmaxf(mx0, fabsf(c.x[i]));
        cr_expect_lt(mx, mx0 / 2, "%s: max |x| %g -> %g", ffn_act_name(acts[a]), mx0, mx);
        free(xs);
        free(g);
        free(u);
        free(dn);
        free(hd);
        free(y);
        drop(&c);
    }
}

Test(quant_eval, per_channel_beats_per_tensor_on_heavy_tailed_weights)
{
    /* Student-t weights (nu = 3): the largest weight of the matrix sets the per-tensor step */
    const ffn_qeval_synth syn = {.seed = 5, .wdist = FFN_QW_STUDENT_T, .nu = 3};
    case_t c = make(256, 512, FFN_ACT_SWIGLU, 32, &syn);
    const ffn_qeval_metrics t = run(&c, "int8-tensor", 0.5), ch = run(&c, "int8-channel", 0.5);
    cr_expect_lt(ch.rel_l2, 0.7 * t.rel_l2, "per channel %g vs per tensor %g", ch.rel_l2, t.rel_l2);
    cr_expect_lt(ch.max_abs, t.max_abs);
    cr_expect_gt(ch.cosine, t.cosine);
    /* nu = 3: the tail makes one scale per matrix several times worse than one per column */
    cr_expect_lt(ch.rel_l2, 0.25 * t.rel_l2);
    drop(&c);
}

Test(quant_eval, int4_groups_of_32_beat_groups_of_128)
{
    const ffn_qeval_synth syn = {.seed = 9, .wdist = FFN_QW_STUDENT_T, .nu = 4};
    case_t c = make(256, 512, FFN_ACT_SWIGLU, 32, &syn);
    const ffn_qeval_metrics g32 = run(&c, "int4-g32", 0.5), g64 = run(&c, "int4-g64", 0.5),
                            g128 = run(&c, "int4-g128", 0.5), i8 = run(&c, "int8-channel", 0.5);
    cr_expect_lt(g32.rel_l2, g64.rel_l2);
    cr_expect_lt(g64.rel_l2, g128.rel_l2);
    cr_expect_lt(g32.rel_l2, 0.9 * g128.rel_l2, "g32 %g vs g128 %g", g32.rel_l2, g128.rel_l2);
    /* 4 bits are about 16x coarser than 8 */
    cr_expect_gt(g32.rel_l2, 4 * i8.rel_l2, "int4 %g vs int8 %g", g32.rel_l2, i8.rel_l2);
    /* a zero point costs nothing on symmetric weights and gives the same order of error */
    const ffn_qeval_metrics z = run(&c, "int4z-g32", 0.5);
    cr_expect_lt(z.rel_l2, 1.5 * g32.rel_l2);
    drop(&c);
}

Test(quant_eval, smoothquant_beats_plain_w8a8_on_outlier_activations)
{
    /* 1% of the channels at 50x: inside the 10-100x LLM.int8() and SmoothQuant report */
    const ffn_qeval_synth syn = {.seed = 1, .outlier_frac = 0.01, .outlier_scale = 50};
    case_t c = make(512, 1024, FFN_ACT_SWIGLU, 32, &syn);
    const ffn_qeval_metrics a8 = run(&c, "w8a8", 0.5), sq = run(&c, "w8a8-smooth", 0.5),
                            w8 = run(&c, "int8-channel", 0.5);
    cr_expect_lt(sq.rel_l2, 0.6 * a8.rel_l2, "smooth %g vs w8a8 %g", sq.rel_l2, a8.rel_l2);
    cr_expect_gt(sq.cosine, a8.cosine);
    /* weight-only int8 does not see the activation outliers at all */
    cr_expect_lt(w8.rel_l2, sq.rel_l2);
    /* alpha = 0 migrates nothing: the same as plain w8a8 up to rounding */
    const ffn_qeval_metrics a0 = run(&c, "w8a8-smooth", 0.0);
    cr_expect(fabs(a0.rel_l2 - a8.rel_l2) < 0.1 * a8.rel_l2, "alpha 0: %g vs %g", a0.rel_l2,
              a8.rel_l2);
    drop(&c);
}

Test(quant_eval, w8a8_errors_shrink_without_outliers)
{
    ffn_qeval_synth syn = {.seed = 2, .outlier_frac = 0.01, .outlier_scale = 50};
    case_t with = make(512, 1024, FFN_ACT_SWIGLU, 32, &syn);
    syn.outlier_frac = 0;
    case_t without = make(512, 1024, FFN_ACT_SWIGLU, 32, &syn);
    const ffn_qeval_metrics a = run(&with, "w8a8", 0.5), b = run(&without, "w8a8", 0.5);
    cr_expect_lt(b.rel_l2, 0.7 * a.rel_l2, "without %g, with %g", b.rel_l2, a.rel_l2);
    /* weight-only int8 does not care; SmoothQuant takes the outliers' cost away (here the
     * outlier channels carry most of the output, and migrated they quantize well) */
    const ffn_qeval_metrics wa = run(&with, "int8-channel", 0.5),
                            wb = run(&without, "int8-channel", 0.5);
    cr_expect(fabs(wa.rel_l2 - wb.rel_l2) < 0.2 * wb.rel_l2, "int8-channel %g vs %g", wa.rel_l2,
              wb.rel_l2);
    const ffn_qeval_metrics sa = run(&with, "w8a8-smooth", 0.5),
                            sb = run(&without, "w8a8-smooth", 0.5);
    cr_expect_lt(sa.rel_l2, 1.5 * sb.rel_l2, "smooth with %g, without %g", sa.rel_l2, sb.rel_l2);
    drop(&with);
    drop(&without);
}

Test(quant_eval, bad_input_is_refused)
{
    const ffn_qeval_synth syn = {.seed = 4};
    case_t c = make(96, 256, FFN_ACT_SWIGLU, 4, &syn);
    ffn_qeval_metrics m;
    const ffn_qeval_fmt g64 = F("int4-g64"), a8s = F("w8a8-smooth");
    cr_expect_eq(ffn_qeval_run(&c.s, &c.w, c.T, c.x, c.ref, &g64, 0.5, 0, &m, NULL), FFN_EINVAL,
                 "64 does not divide d = 96");
    cr_expect_eq(ffn_qeval_run(&c.s, &c.w, c.T, c.x, c.ref, &a8s, 1.5, 0, &m, NULL), FFN_EINVAL);
    c.wg[7] = NAN;
    cr_expect_eq(ffn_qeval_reference(&c.s, &c.w, c.T, c.x, 0, c.ref), FFN_EINVAL);
    ffn_qeval_synth bad = syn;
    bad.outlier_frac = 0.01;
    bad.outlier_scale = 0.5;
    cr_expect_eq(ffn_qeval_synth_acts(&bad, 1, 4, c.x, NULL, NULL), FFN_EINVAL);
    bad = syn;
    bad.wdist = FFN_QW_STUDENT_T;
    bad.nu = 0;
    cr_expect_eq(ffn_qeval_synth_weights(&bad, &c.s, c.wg, c.wu, c.wd), FFN_EINVAL);
    drop(&c);
}

Test(quant_eval, the_speed_kernel_is_the_dispatched_one)
{
    /* fp32 activations for the weight-only rows, int8 for w8a8; NULL (the table says "no
     * kernel") when this build has none for the format */
    static const char *const names[] = {"int8-channel", "int4-g32", "w8a8", "w8a8-smooth"};
    for (size_t i = 0; i < 4; i++) {
        const ffn_qeval_fmt f = F(names[i]);
        const ffn_kernel *k = ffn_qspeed_kernel(&f);
        if (!k) continue;
        cr_expect_eq(k->wdtype, f.kind == FFN_QE_INT4_GROUP ? FFN_DT_INT4 : FFN_DT_INT8);
        cr_expect_eq(k->adtype, f.kind >= FFN_QE_W8A8 ? FFN_DT_INT8 : FFN_DT_FP32);
        cr_expect_neq(k->isa, FFN_ISA_REF);
    }
}
