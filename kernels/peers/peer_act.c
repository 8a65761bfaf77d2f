/* The activation pass of the OpenBLAS peer FFN: act(gate + b) (* (up + b)) over the [T][2f]
 * output of the fused gate|up sgemm, in place. OpenBLAS has no activation, so a user calling it
 * writes such a pass; to make the comparison fair it must not be a scalar libm loop. The math
 * is branch-free C over arrays (no libm calls) that GCC vectorises at -O3, and the row function
 * is cloned for AVX-512, AVX2 and baseline x86-64 with an ifunc chosen at load time
 * (target_clones), so the library itself needs no ISA flags.
 *
 * Accuracy (fp32): exp is Cephes expf's range reduction and polynomial (relative error about
 * 2e-7 in [-87.3, 88.3], the argument clamped there); erf is Abramowitz & Stegun 7.1.26
 * (absolute error <= 1.5e-7), used as 1 + erf(z) = q or 2 - q so that gelu of a negative
 * argument does not cancel; tanh-gelu is written as x * sigmoid(2z), its exact equivalent. */
#include <stdint.h>
#include <string.h>

#include "peers_internal.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(FFNROOF_NO_CLONES)
#define ACT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ACT_CLONES
#endif

static inline float exp_ps(float x)
{
    x = x > 88.3f ? 88.3f : x; /* keeps 2^n a normal number (n <= 127) */
    x = x < -87.3f ? -87.3f : x;
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    n = (n == n) ? n : 0.0f; /* NaN: keep the conversion below defined; NaN flows via r */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float silu_ps(float x)
{
    return x / (1.0f + exp_ps(-x));
}

static inline float gelu_tanh_ps(float x)
{
    const float z = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return x / (1.0f + exp_ps(-2.0f * z));
}

static inline float gelu_erf_ps(float x)
{
    const float z = x * 0.70710678118654752f;
    const float az = z < 0.0f ? -z : z;
    const float t = 1.0f / (1.0f + 0.3275911f * az);
    float poly = 1.061405429f;
    poly = poly * t - 1.453152027f;
    poly = poly * t + 1.421413741f;
    poly = poly * t - 0.284496736f;
    poly = poly * t + 0.254829592f;
    const float q = poly * t * exp_ps(-az * az); /* erfc(|z|) */
    return 0.5f * x * (z < 0.0f ? q : 2.0f - q);
}

static inline float relu_ps(float x)
{
    return x < 0.0f ? 0.0f : x; /* NaN stays NaN */
}

ACT_CLONES
static void act_row(ffn_act act, size_t f, float *restrict g, const float *restrict up,
                    const float *restrict bg, const float *restrict bu)
{
    switch (act) {
    case FFN_ACT_RELU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = relu_ps(g[j] + bg[j]);
        }
        break;
    case FFN_ACT_GELU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = gelu_erf_ps(g[j] + bg[j]);
        }
        break;
    case FFN_ACT_GELU_TANH:
        for (size_t j = 0; j < f; ++j) {
            g[j] = gelu_tanh_ps(g[j] + bg[j]);
        }
        break;
    case FFN_ACT_SILU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = silu_ps(g[j] + bg[j]);
        }
        break;
    case FFN_ACT_SWIGLU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = silu_ps(g[j] + bg[j]) * (up[j] + bu[j]);
        }
        break;
    case FFN_ACT_GEGLU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = gelu_erf_ps(g[j] + bg[j]) * (up[j] + bu[j]);
        }
        break;
    case FFN_ACT_REGLU:
        for (size_t j = 0; j < f; ++j) {
            g[j] = relu_ps(g[j] + bg[j]) * (up[j] + bu[j]);
        }
        break;
    case FFN_ACT_COUNT:
        break;
    }
}

void ffn__peer_act_rows(ffn_act act, size_t T, size_t f, size_t ld, float *g, const float *b_gate,
                        const float *b_up)
{
    /* Absent biases read from a zero row, so the loops stay branch-free. The zero row is
     * small and static; longer rows are processed in chunks of it. */
    enum { ZCHUNK = 1024 };
    static const float zeros[ZCHUNK];
    for (size_t t = 0; t < T; ++t) {
        float *row = g + t * ld;
        for (size_t j0 = 0; j0 < f; j0 += ZCHUNK) {
            size_t n = f - j0 < ZCHUNK ? f - j0 : ZCHUNK;
            const float *bg = b_gate != NULL ? b_gate + j0 : zeros;
            const float *bu = b_up != NULL ? b_up + j0 : zeros;
            /* non-gated rows hold only the gate columns: no up pointer past the row */
            float *up = ffn_act_gated(act) ? row + f + j0 : row + j0;
            act_row(act, n, row + j0, up, bg, bu);
        }
    }
}
