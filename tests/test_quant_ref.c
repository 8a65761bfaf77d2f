/* Criterion tests of the quantized formats' reference functions (include/ffnroof/quant.h,
 * kernels/quant/quant_ref.c): hand-computed codes and scales for every granularity, rounding
 * ties (half away from zero), clamps, zero tensors/channels/groups/rows (0, never NaN), the
 * zero point, dequantize(quantize(w)) within half a step, SmoothQuant factors, and every
 * invalid format, group size, non-finite input and NULL pointer. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ffnroof/error.h"
#include "ffnroof/quant.h"
#include "ffnroof/rand.h"

static const ffn_qweight_fmt TENSOR = {.gran = FFN_QG_TENSOR, .bits = 8};
static const ffn_qweight_fmt CHANNEL = {.gran = FFN_QG_CHANNEL, .bits = 8};

static ffn_qweight_fmt group_fmt(unsigned g, bool zp)
{
    return (ffn_qweight_fmt){.gran = FFN_QG_GROUP, .bits = 4, .group = g, .zero_point = zp};
}

Test(quant_ref, check_accepts_the_documented_formats_only)
{
    cr_assert_eq(ffn_qweight_check(&TENSOR, 3, 5), 0);
    cr_assert_eq(ffn_qweight_check(&CHANNEL, 1, 1), 0);
    for (unsigned g = 32; g <= 128; g *= 2) {
        const ffn_qweight_fmt f = group_fmt(g, false), z = group_fmt(g, true);
        cr_assert_eq(ffn_qweight_check(&f, 256, 3), 0, "G=%u", g);
        cr_assert_eq(ffn_qweight_check(&z, 256, 3), 0, "G=%u zp", g);
        cr_assert_eq(ffn_qweight_check(&f, g + 1, 3), FFN_EINVAL, "G=%u must divide K", g);
        cr_assert_eq(ffn_qweight_check(&f, g / 2, 3), FFN_EINVAL, "K=%u < G", g / 2);
    }
    const unsigned bad_groups[] = {0, 1, 16, 48, 96, 256};
    for (size_t i = 0; i < sizeof bad_groups / sizeof bad_groups[0]; i++) {
        const ffn_qweight_fmt f = group_fmt(bad_groups[i], false);
        cr_assert_eq(ffn_qweight_check(&f, 768, 4), FFN_EINVAL, "G=%u", bad_groups[i]);
    }
    ffn_qweight_fmt f = TENSOR;
    f.bits = 4;
    cr_assert_eq(ffn_qweight_check(&f, 4, 4), FFN_EINVAL, "int4 per tensor is not a format");
    f = CHANNEL;
    f.zero_point = true;
    cr_assert_eq(ffn_qweight_check(&f, 4, 4), FFN_EINVAL, "int8 has no zero point");
    f = CHANNEL;
    f.group = 32;
    cr_assert_eq(ffn_qweight_check(&f, 64, 4), FFN_EINVAL, "a group on a channel format");
    f = group_fmt(32, false);
    f.bits = 8;
    cr_assert_eq(ffn_qweight_check(&f, 64, 4), FFN_EINVAL, "int8 groups are not a format");
    f.gran = (ffn_qgran)7;
    cr_assert_eq(ffn_qweight_check(&f, 64, 4), FFN_EINVAL, "unknown granularity");
    cr_assert_eq(ffn_qweight_check(NULL, 4, 4), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_check(&TENSOR, 0, 4), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_check(&TENSOR, 4, 0), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_check(&TENSOR, SIZE_MAX / 2, 4), FFN_EINVAL, "K N overflows");
}

Test(quant_ref, nscales_counts_one_scale_per_tensor_column_or_group)
{
    cr_assert_eq(ffn_qweight_nscales(&TENSOR, 7, 9), 1);
    cr_assert_eq(ffn_qweight_nscales(&CHANNEL, 7, 9), 9);
    const ffn_qweight_fmt g64 = group_fmt(64, true);
    cr_assert_eq(ffn_qweight_nscales(&g64, 256, 9), 4 * 9);
    cr_assert_eq(ffn_qweight_nscales(&g64, 100, 9), 0, "invalid: 0");
    cr_assert_eq(ffn_qweight_nscales(NULL, 1, 1), 0);
}

Test(quant_ref, per_tensor_int8_by_hand)
{
    /* max|W| = 254 -> s = 2: w/s = 127, 63.25, -31.75, 0.5 (tie: away from 0), -0.5, 0.2 */
    const float w[6] = {254.0f, 126.5f, -63.5f, 1.0f, -1.0f, 0.4f};
    const int8_t want[6] = {127, 63, -32, 1, -1, 0};
    int8_t q[6];
    float s = -1.0f, back[6];
    cr_assert_eq(ffn_qweight_quantize(&TENSOR, 2, 3, w, q, &s, NULL), 0);
    cr_assert_eq(s, 2.0f);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(q[i], want[i], "q[%d] = %d, want %d", i, q[i], want[i]);
    cr_assert_eq(ffn_qweight_dequantize(&TENSOR, 2, 3, q, &s, NULL, back), 0);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(back[i], (float)want[i] * 2.0f);
    /* The extreme of either sign maps to +-127, never -128. */
    const float neg[2] = {-127.0f, 10.0f};
    cr_assert_eq(ffn_qweight_quantize(&TENSOR, 1, 2, neg, q, &s, NULL), 0);
    cr_assert_eq(q[0], -127);
    cr_assert_eq(q[1], 10);
}

/* The codes round half away from zero at every tie and at its float neighbours (the packers'
 * and the reference's shared rounding, kernels/quant/quant_internal.h, avoids roundf's call):
 * max|W| = 127 makes s = 1, so each code is roundf(w) itself. */
Test(quant_ref, codes_round_like_roundf_at_every_tie_and_beside_it)
{
    enum { N = 6 * 253 + 1 };
    float w[N];
    size_t n = 0;
    for (int k = -126; k <= 126; k++) {
        const float t = (float)k + (k < 0 ? -0.5f : 0.5f);
        const float v[6] = {
            t,        nextafterf(t, 0.0f),          nextafterf(t, t < 0 ? -200.0f : 200.0f),
            (float)k, nextafterf((float)k, 200.0f), nextafterf((float)k, -200.0f)};
        for (int i = 0; i < 6; i++)
            w[n++] = fminf(126.9f, fmaxf(-126.9f, v[i]));
    }
    w[n++] = 127.0f; /* the tensor's max: s = 1 */
    cr_assert_eq(n, (size_t)N);
    int8_t q[N];
    float s = 0.0f;
    cr_assert_eq(ffn_qweight_quantize(&TENSOR, 1, N, w, q, &s, NULL), 0);
    cr_assert_eq(s, 1.0f);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(q[i], (int8_t)roundf(w[i]), "w = %.9g: code %d, roundf %g", (double)w[i], q[i],
                     (double)roundf(w[i]));
}

Test(quant_ref, per_channel_int8_scales_each_column_and_zero_columns_give_zero)
{
    /* K = 3, N = 3: column 0 max 127 (s 1), column 1 all zero, column 2 max 12.7 (s 0.1). */
    const float w[9] = {127.0f, 0.0f, 1.25f, -2.5f, 0.0f, -12.7f, 0.5f, 0.0f, 0.05f};
    int8_t q[9];
    float s[3], back[9];
    cr_assert_eq(ffn_qweight_quantize(&CHANNEL, 3, 3, w, q, s, NULL), 0);
    cr_assert_eq(s[0], 1.0f);
    cr_assert_eq(s[1], 0.0f);
    cr_assert_eq(s[2], 12.7f / 127.0f);
    cr_assert_eq(q[0], 127);
    cr_assert_eq(q[3], -3, "-2.5 rounds away from zero");
    cr_assert_eq(q[6], 1, "0.5 rounds away from zero");
    cr_assert_eq(q[1], 0);
    cr_assert_eq(q[4], 0);
    cr_assert_eq(q[7], 0);
    cr_assert_eq(q[5], -127);
    cr_assert_eq(q[2], (int8_t)roundf(1.25f / s[2]));
    cr_assert_eq(ffn_qweight_dequantize(&CHANNEL, 3, 3, q, s, NULL, back), 0);
    for (int i = 0; i < 9; i++) {
        cr_assert(!isnan(back[i]));
        cr_assert_leq(fabsf(back[i] - w[i]), 0.5f * s[i % 3] * 1.0001f, "element %d", i);
    }
    cr_assert_eq(back[1], 0.0f);
}

Test(quant_ref, int4_symmetric_groups_by_hand)
{
    /* K = 64, N = 2, G = 32: column 0 group 0 has max 7 (s 1) with codes -7..7 and a tie at
     * 2.5 -> 3, -3.5 -> -4; group 1 is all zero; column 1 has max|.| = 14 in both groups
     * (s 2) and one -14 -> -7 (the symmetric format never produces -8 from data). */
    float w[64 * 2] = {0};
    w[0 * 2] = 7.0f;
    w[1 * 2] = 2.5f;
    w[2 * 2] = -3.5f;
    w[3 * 2] = -7.0f;
    w[4 * 2] = 0.49f;
    w[0 * 2 + 1] = 14.0f;
    w[5 * 2 + 1] = 3.0f; /* 1.5 -> 2 */
    w[40 * 2 + 1] = -14.0f;
    w[41 * 2 + 1] = 1.0f; /* 0.5 -> 1 */
    const ffn_qweight_fmt f = group_fmt(32, false);
    int8_t q[128];
    float s[4], back[128];
    cr_assert_eq(ffn_qweight_quantize(&f, 64, 2, w, q, s, NULL), 0);
    /* scale index (k / G) * N + n */
    cr_assert_eq(s[0], 1.0f);
    cr_assert_eq(s[1], 2.0f);
    cr_assert_eq(s[2], 0.0f);
    cr_assert_eq(s[3], 2.0f);
    cr_assert_eq(q[0], 7);
    cr_assert_eq(q[2], 3);
    cr_assert_eq(q[4], -4);
    cr_assert_eq(q[6], -7);
    cr_assert_eq(q[8], 0);
    cr_assert_eq(q[1], 7);
    cr_assert_eq(q[11], 2);
    cr_assert_eq(q[81], -7);
    cr_assert_eq(q[83], 1);
    for (int k = 32; k < 64; k++)
        cr_assert_eq(q[k * 2], 0, "zero group");
    cr_assert_eq(ffn_qweight_dequantize(&f, 64, 2, q, s, NULL, back), 0);
    cr_assert_eq(back[4], -4.0f);
    cr_assert_eq(back[81], -14.0f);
    for (int i = 0; i < 128; i++)
        cr_assert(!isnan(back[i]), "element %d", i);
}

Test(quant_ref, int4_zero_point_by_hand)
{
    /* One group of 32 in [-1, 2]: s = 3/15 = 0.2, z = round(1 / 0.2) = 5; w = 2 -> 10 + 5 = 15,
     * w = -1 -> -5 + 5 = 0, w = 0 -> 5, w = 0.3 -> round(1.5) + 5 = 7. A second column all 4.0
     * (max = min: zero scale) quantizes to code 0, zero point 0, and dequantizes to 0. */
    float w[32 * 2];
    for (int k = 0; k < 32; k++) {
        w[k * 2] = 0.0f;
        w[k * 2 + 1] = 4.0f;
    }
    w[0] = 2.0f;
    w[2] = -1.0f;
    w[4] = 0.3f;
    const ffn_qweight_fmt f = group_fmt(32, true);
    int8_t q[64];
    float s[2], back[64];
    uint8_t z[2] = {99, 99};
    cr_assert_eq(ffn_qweight_quantize(&f, 32, 2, w, q, s, z), 0);
    cr_assert_eq(s[0], (float)(3.0 / 15.0));
    cr_assert_eq(z[0], 5);
    cr_assert_eq(q[0], 15);
    cr_assert_eq(q[2], 0);
    cr_assert_eq(q[4], (int8_t)(roundf(0.3f / s[0]) + 5.0f));
    cr_assert_eq(q[6], 5);
    cr_assert_eq(s[1], 0.0f);
    cr_assert_eq(z[1], 0);
    cr_assert_eq(q[1], 0);
    cr_assert_eq(ffn_qweight_dequantize(&f, 32, 2, q, s, z, back), 0);
    cr_assert_eq(back[0], 10.0f * s[0]);
    cr_assert_eq(back[2], -5.0f * s[0]);
    cr_assert_eq(back[6], 0.0f, "zero is exact with a zero point");
    cr_assert_eq(back[1], 0.0f);
    /* A group entirely above zero, 10..41: z = round(-10 / s) clamps to 0, and the top codes
     * (41 / (31/15) = 19.8) clamp to 15. */
    for (int k = 0; k < 32; k++)
        w[k * 2] = 10.0f + (float)k;
    cr_assert_eq(ffn_qweight_quantize(&f, 32, 2, w, q, s, z), 0);
    cr_assert_eq(z[0], 0);
    cr_assert_eq(q[0], 5, "10 / 2.0667 = 4.84");
    cr_assert_eq(q[62], 15);
}

/* Every weight format: per tensor, per channel, int4 groups of 32/64/128 with and without a
 * zero point. Returns how many (8). */
static int all_formats(ffn_qweight_fmt fmts[8])
{
    int nf = 0;
    fmts[nf++] = TENSOR;
    fmts[nf++] = CHANNEL;
    for (unsigned g = 32; g <= 128; g *= 2) {
        fmts[nf++] = group_fmt(g, false);
        fmts[nf++] = group_fmt(g, true);
    }
    return nf;
}

/* The index of (k, n)'s scale under f, for N columns. */
static size_t scale_index(const ffn_qweight_fmt *f, size_t k, size_t n, size_t N)
{
    return f->gran == FFN_QG_TENSOR ? 0 : f->gran == FFN_QG_CHANNEL ? n : k / f->group * N + n;
}

/* dequantize(quantize(w)) is within half a step of w for every format, on random data. */
Test(quant_ref, round_trip_is_within_half_a_step)
{
    enum { K = 256, N = 5 };
    static float w[K * N], back[K * N], s[K * N];
    static int8_t q[K * N];
    static uint8_t z[K * N];
    ffn_rng st;
    ffn_rng_seed(&st, 12345);
    for (int i = 0; i < K * N; i++)
        w[i] = (float)(ffn_rng_unif(&st) * 4.0 - 1.5);
    ffn_qweight_fmt fmts[8];
    const int nf = all_formats(fmts);
    for (int i = 0; i < nf; i++) {
        const ffn_qweight_fmt *f = &fmts[i];
        cr_assert_eq(ffn_qweight_quantize(f, K, N, w, q, s, f->zero_point ? z : NULL), 0);
        cr_assert_eq(ffn_qweight_dequantize(f, K, N, q, s, f->zero_point ? z : NULL, back), 0);
        for (size_t k = 0; k < K; k++)
            for (size_t n = 0; n < N; n++) {
                const size_t si = scale_index(f, k, n, N);
                const float e = fabsf(back[k * N + n] - w[k * N + n]);
                cr_assert_leq(e, 0.5f * s[si] * 1.0001f, "fmt %d (%zu, %zu): %g > s/2 = %g", i, k,
                              n, (double)e, 0.5 * (double)s[si]);
                const int lo = f->bits == 8 ? -127 : f->zero_point ? 0 : -8;
                const int hi = f->bits == 8 ? 127 : f->zero_point ? 15 : 7;
                cr_assert(q[k * N + n] >= lo && q[k * N + n] <= hi);
            }
    }
}

/* Every code is roundf of its quotient, clamped (plus the zero point), for every format on
 * random weights with a heavy tail: the shared code arithmetic (kernels/quant/quant_internal.h)
 * rounds and clamps without branching on the data, and this checks it against libm. Each row
 * of the tail's columns is scaled by up to 2^12, so that groups mix tiny and large values. */
Test(quant_ref, codes_are_roundf_of_the_quotient_on_random_weights)
{
    enum { K = 256, N = 7 };
    static float w[K * N], s[K * N];
    static int8_t q[K * N];
    static uint8_t z[K * N];
    ffn_rng st;
    ffn_rng_seed(&st, 987654321);
    for (int i = 0; i < K * N; i++) {
        const double u = ffn_rng_unif(&st);
        w[i] = (float)((u * 2.0 - 0.9) *
                       (i % N == 3 ? ldexp(1.0, (int)(ffn_rng_next(&st) % 13)) : 1.0));
    }
    ffn_qweight_fmt fmts[8];
    const int nf = all_formats(fmts);
    for (int i = 0; i < nf; i++) {
        const ffn_qweight_fmt *f = &fmts[i];
        cr_assert_eq(ffn_qweight_quantize(f, K, N, w, q, s, f->zero_point ? z : NULL), 0);
        for (size_t k = 0; k < K; k++)
            for (size_t n = 0; n < N; n++) {
                const size_t si = scale_index(f, k, n, N);
                const float sc = s[si], r = w[k * N + n] / sc;
                const float lo = f->bits == 8 ? -127.0f : f->zero_point ? 0.0f : -8.0f;
                const float hi = f->bits == 8 ? 127.0f : f->zero_point ? 15.0f : 7.0f;
                float want = roundf(r) + (f->zero_point ? (float)z[si] : 0.0f);
                want = want < lo ? lo : want > hi ? hi : want;
                cr_assert_eq(q[k * N + n], (int8_t)want,
                             "fmt %d (%zu, %zu): w = %.9g, s = %.9g: %d, roundf %g", i, k, n,
                             (double)w[k * N + n], (double)sc, q[k * N + n], (double)want);
            }
    }
}

Test(quant_ref, zero_tensor_quantizes_and_dequantizes_to_zero)
{
    float w[64 * 3] = {0}, back[64 * 3], s[6];
    int8_t q[64 * 3];
    uint8_t z[6];
    ffn_qweight_fmt fmts[4] = {TENSOR, CHANNEL, group_fmt(32, false), group_fmt(64, true)};
    for (int i = 0; i < 4; i++) {
        memset(back, 0xff, sizeof back); /* NaN bits */
        cr_assert_eq(ffn_qweight_quantize(&fmts[i], 64, 3, w, q, s, z), 0);
        cr_assert_eq(ffn_qweight_dequantize(&fmts[i], 64, 3, q, s, z, back), 0);
        for (int j = 0; j < 64 * 3; j++) {
            cr_assert_eq(q[j], 0);
            cr_assert_eq(back[j], 0.0f, "fmt %d element %d", i, j);
        }
        for (size_t j = 0; j < ffn_qweight_nscales(&fmts[i], 64, 3); j++)
            cr_assert_eq(s[j], 0.0f);
    }
}

Test(quant_ref, quantize_and_dequantize_reject_bad_arguments)
{
    float w[64 * 2] = {1.0f}, s[4], back[128];
    int8_t q[128] = {0};
    uint8_t z[4] = {0};
    const ffn_qweight_fmt g = group_fmt(32, false), gz = group_fmt(32, true);
    cr_assert_eq(ffn_qweight_quantize(NULL, 64, 2, w, q, s, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_quantize(&g, 64, 2, NULL, q, s, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_quantize(&g, 64, 2, w, NULL, s, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_quantize(&g, 64, 2, w, q, NULL, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_quantize(&gz, 64, 2, w, q, s, NULL), FFN_EINVAL, "zero points");
    cr_assert_eq(ffn_qweight_quantize(&g, 48, 2, w, q, s, NULL), FFN_EINVAL, "G ! | K");
    w[7] = NAN;
    cr_assert_eq(ffn_qweight_quantize(&CHANNEL, 64, 2, w, q, s, NULL), FFN_EINVAL);
    w[7] = INFINITY;
    cr_assert_eq(ffn_qweight_quantize(&TENSOR, 64, 2, w, q, s, NULL), FFN_EINVAL);
    w[7] = 0.0f;
    cr_assert_eq(ffn_qweight_quantize(&g, 64, 2, w, q, s, NULL), 0);
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, back), 0);
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, NULL, s, NULL, back), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, NULL, NULL, back), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_qweight_dequantize(&gz, 64, 2, q, s, NULL, back), FFN_EINVAL);
    q[3] = 8; /* not an int4 symmetric code */
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, back), FFN_EINVAL);
    q[3] = -9;
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, back), FFN_EINVAL);
    q[3] = 15;
    cr_assert_eq(ffn_qweight_dequantize(&gz, 64, 2, q, s, z, back), 0, "15 is a zp code");
    z[1] = 16;
    cr_assert_eq(ffn_qweight_dequantize(&gz, 64, 2, q, s, z, back), FFN_EINVAL);
    z[1] = 0;
    q[3] = -1;
    cr_assert_eq(ffn_qweight_dequantize(&gz, 64, 2, q, s, z, back), FFN_EINVAL);
    q[3] = 0;
    s[2] = -1.0f;
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, back), FFN_EINVAL);
    s[2] = NAN;
    cr_assert_eq(ffn_qweight_dequantize(&g, 64, 2, q, s, NULL, back), FFN_EINVAL);
}

Test(quant_ref, per_token_activations_by_hand)
{
    /* Row 0: max 12.7 -> s 0.1; row 1 all zero -> s 0, codes 0; row 2: max 254 -> s 2 with a
     * tie 1.0 / 2 = 0.5 -> 1 and -3 / 2 = -1.5 -> -2. */
    const float x[9] = {12.7f, -6.35f, 0.0f, 0.0f, 0.0f, 0.0f, -254.0f, 1.0f, -3.0f};
    int8_t q[9];
    float s[3];
    cr_assert_eq(ffn_qact_quantize(3, 3, x, q, s), 0);
    cr_assert_eq(s[0], 12.7f / 127.0f);
    cr_assert_eq(q[0], 127);
    cr_assert_eq(q[1], (int8_t)roundf(-6.35f / s[0]));
    cr_assert_eq(s[1], 0.0f);
    cr_assert_eq(q[3], 0);
    cr_assert_eq(q[5], 0);
    cr_assert_eq(s[2], 2.0f);
    cr_assert_eq(q[6], -127);
    cr_assert_eq(q[7], 1);
    cr_assert_eq(q[8], -2);
    cr_assert_eq(ffn_qact_quantize(0, 3, NULL, NULL, NULL), 0, "T = 0 is nothing to do");
    cr_assert_eq(ffn_qact_quantize(1, 0, x, q, s), FFN_EINVAL);
    cr_assert_eq(ffn_qact_quantize(1, 3, NULL, q, s), FFN_EINVAL);
    cr_assert_eq(ffn_qact_quantize(1, 3, x, NULL, s), FFN_EINVAL);
    cr_assert_eq(ffn_qact_quantize(1, 3, x, q, NULL), FFN_EINVAL);
    const float bad[3] = {1.0f, NAN, 2.0f};
    cr_assert_eq(ffn_qact_quantize(1, 3, bad, q, s), FFN_EINVAL);
}

Test(quant_ref, smooth_factors_by_hand)
{
    /* K = 3 channels: x maxima 16, 0 (all zero), 1; W row maxima 4, 2, 0 (all zero).
     * alpha 0.5: m0 = sqrt(16) / sqrt(4) = 2; m1 = 1 (x zero); m2 = 1 (W zero). */
    const float x[6] = {16.0f, 0.0f, -1.0f, -3.0f, 0.0f, 0.5f};
    const float w[6] = {-4.0f, 1.0f, 2.0f, -0.5f, 0.0f, 0.0f};
    float m[3];
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 0.5, m), 0);
    cr_assert_eq(m[0], 2.0f);
    cr_assert_eq(m[1], 1.0f);
    cr_assert_eq(m[2], 1.0f);
    /* alpha 1: m = max|x|; alpha 0: m = 1 / max|W|. */
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 1.0, m), 0);
    cr_assert_eq(m[0], 16.0f);
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 0.0, m), 0);
    cr_assert_eq(m[0], 0.25f);
    /* x' = x / m, W' = m W leave x W unchanged and balance the maxima at alpha 0.5. */
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 0.5, m), 0);
    cr_assert_eq(16.0f / m[0], 4.0f * m[0], "max|x'| = max|W'| = 8");
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 1.5, m), FFN_EINVAL, "alpha > 1");
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, -0.1, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, NAN, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 3, NULL, 2, w, 0.5, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, NULL, 0.5, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 2, w, 0.5, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 0, x, 2, w, 0.5, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(2, 3, x, 0, w, 0.5, m), FFN_EINVAL);
    cr_assert_eq(ffn_smooth_factors(0, 3, NULL, 2, w, 0.5, m), 0, "no tokens: all 1");
    cr_assert_eq(m[0], 1.0f);
    const float xn[6] = {INFINITY, 0, 0, 0, 0, 0};
    cr_assert_eq(ffn_smooth_factors(2, 3, xn, 2, w, 0.5, m), FFN_EINVAL);
    /* A W row of subnormals at alpha 0: 1 / 1e-45 is past fp32; the factor clamps, finite. */
    const float wt[2] = {1e-45f, 0.0f};
    const float x1[1] = {1.0f};
    cr_assert_eq(ffn_smooth_factors(1, 1, x1, 2, wt, 0.0, m), 0);
    cr_assert(isfinite(m[0]) && m[0] > 0.0f);
}
