/* The scalar reference of the quantized formats (include/ffnroof/quant.h): what every quantized
 * kernel's packing and on-the-fly activation quantization must reproduce, and what `ffnroof
 * quant` measures. Plain C, no ISA flags, no allocation.
 *
 * Arithmetic, fixed so that a vector kernel can reproduce the codes bit for bit:
 *  - symmetric scales are one fp32 division, s = maxabs / 127.0f (int8) or maxabs / 7.0f
 *    (int4), and codes are roundf(v / s) (fp32 division, round half away from zero), clamped;
 *  - the asymmetric int4 scale is s = (float)(((double)max - min) / 15) (the difference in
 *    double so that max - min cannot overflow), z = clamp(roundf(-min / s), 0, 15);
 *  - dequantized values are q * s (or (q - z) * s), one fp32 product of exact operands.
 * A zero scale gives code 0 (and zero point 0), which dequantizes to 0. Weights, activations
 * and scales must be finite (a NaN or Inf has no scale): FFN_EINVAL otherwise, and nothing is
 * written past the point of the check (the whole input is checked first). */
#include "ffnroof/quant.h"

#include <float.h>
#include <math.h>

#include "ffnroof/error.h"
#include "quant_internal.h"

/* Element counts far from size_t overflow (the kernels' own shape limit is 2^36). */
#define MAX_ELEMS ((size_t)1 << 40)

int ffn_qweight_check(const ffn_qweight_fmt *fmt, size_t K, size_t N)
{
    if (!fmt || K == 0 || N == 0 || K > MAX_ELEMS / N) return FFN_EINVAL;
    switch (fmt->gran) {
    case FFN_QG_TENSOR:
    case FFN_QG_CHANNEL:
        return fmt->bits == 8 && fmt->group == 0 && !fmt->zero_point ? 0 : FFN_EINVAL;
    case FFN_QG_GROUP:
        if (fmt->bits != 4) return FFN_EINVAL;
        if (fmt->group != 32 && fmt->group != 64 && fmt->group != 128) return FFN_EINVAL;
        return K % fmt->group == 0 ? 0 : FFN_EINVAL;
    default:
        return FFN_EINVAL;
    }
}

size_t ffn_qweight_nscales(const ffn_qweight_fmt *fmt, size_t K, size_t N)
{
    if (ffn_qweight_check(fmt, K, N)) return 0;
    switch (fmt->gran) {
    case FFN_QG_TENSOR:
        return 1;
    case FFN_QG_CHANNEL:
        return N;
    default:
        return K / fmt->group * N;
    }
}

static bool all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

/* Symmetric: the elements v[i * ldv], i < n, share one scale; codes to q[i * ldq]. */
static void quant_sym(const float *v, size_t n, size_t ldv, size_t ldq, float qmax, int32_t lo,
                      int32_t hi, int8_t *q, float *scale)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++)
        m = fmaxf(m, fabsf(v[i * ldv]));
    const float s = m / qmax;
    for (size_t i = 0; i < n; i++)
        q[i * ldq] = ffn__qcode_sym(v[i * ldv], s, lo, hi);
    *scale = s;
}

/* Asymmetric int4: codes 0..15 with zero point z. */
static void quant_asym(const float *v, size_t n, size_t ldv, size_t ldq, int8_t *q, float *scale,
                       uint8_t *zero)
{
    float lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = fminf(lo, v[i * ldv]);
        hi = fmaxf(hi, v[i * ldv]);
    }
    const float s = ffn__qscale_asym(lo, hi);
    if (!(s > 0.0f)) {
        for (size_t i = 0; i < n; i++)
            q[i * ldq] = 0;
        *scale = 0.0f;
        *zero = 0;
        return;
    }
    const int8_t z = ffn__qzero_asym(lo, s);
    for (size_t i = 0; i < n; i++)
        q[i * ldq] = ffn__qcode_asym(v[i * ldv], s, z);
    *scale = s;
    *zero = (uint8_t)z;
}

int ffn__qweight_quantize_ld(const ffn_qweight_fmt *fmt, size_t K, size_t N, const float *w,
                             size_t ldw, int8_t *q, size_t ldq, float *scale, uint8_t *zero)
{
    if (ffn_qweight_check(fmt, K, N) || !w || !q || !scale || ldw < N || ldq < N) return FFN_EINVAL;
    if (fmt->zero_point && !zero) return FFN_EINVAL;
    for (size_t k = 0; k < K; k++)
        if (!all_finite(w + k * ldw, N)) return FFN_EINVAL;
    switch (fmt->gran) {
    case FFN_QG_TENSOR: {
        float m = 0.0f;
        for (size_t k = 0; k < K; k++)
            for (size_t n = 0; n < N; n++)
                m = fmaxf(m, fabsf(w[k * ldw + n]));
        const float s = m / 127.0f;
        for (size_t k = 0; k < K; k++)
            for (size_t n = 0; n < N; n++)
                q[k * ldq + n] = ffn__qcode_sym(w[k * ldw + n], s, -127, 127);
        *scale = s;
        break;
    }
    case FFN_QG_CHANNEL:
        for (size_t n = 0; n < N; n++)
            quant_sym(w + n, K, ldw, ldq, 127.0f, -127, 127, q + n, scale + n);
        break;
    default: {
        const size_t G = fmt->group;
        for (size_t g = 0; g < K / G; g++)
            for (size_t n = 0; n < N; n++) {
                const float *wg = w + g * G * ldw + n;
                int8_t *qg = q + g * G * ldq + n;
                if (fmt->zero_point)
                    quant_asym(wg, G, ldw, ldq, qg, scale + g * N + n, zero + g * N + n);
                else
                    quant_sym(wg, G, ldw, ldq, 7.0f, -8, 7, qg, scale + g * N + n);
            }
        break;
    }
    }
    return 0;
}

int ffn_qweight_quantize(const ffn_qweight_fmt *fmt, size_t K, size_t N, const float *w, int8_t *q,
                         float *scale, uint8_t *zero)
{
    return ffn__qweight_quantize_ld(fmt, K, N, w, N, q, N, scale, zero);
}

int ffn_qweight_dequantize(const ffn_qweight_fmt *fmt, size_t K, size_t N, const int8_t *q,
                           const float *scale, const uint8_t *zero, float *w)
{
    if (ffn_qweight_check(fmt, K, N) || !q || !scale || !w) return FFN_EINVAL;
    if (fmt->zero_point && !zero) return FFN_EINVAL;
    const size_t ns = ffn_qweight_nscales(fmt, K, N);
    for (size_t i = 0; i < ns; i++)
        if (!isfinite(scale[i]) || scale[i] < 0.0f || (fmt->zero_point && zero[i] > 15))
            return FFN_EINVAL;
    /* Codes outside the format's range were not written by ffn_qweight_quantize. */
    const int lo = fmt->bits == 8 ? -128 : fmt->zero_point ? 0 : -8;
    const int hi = fmt->bits == 8 ? 127 : fmt->zero_point ? 15 : 7;
    for (size_t i = 0; i < K * N; i++)
        if (q[i] < lo || q[i] > hi) return FFN_EINVAL;
    for (size_t k = 0; k < K; k++)
        for (size_t n = 0; n < N; n++) {
            const size_t i = k * N + n;
            const size_t si = fmt->gran == FFN_QG_TENSOR    ? 0
                              : fmt->gran == FFN_QG_CHANNEL ? n
                                                            : k / fmt->group * N + n;
            const int c = fmt->zero_point ? q[i] - (int)zero[si] : q[i];
            w[i] = (float)c * scale[si];
        }
    return 0;
}

int ffn_qact_quantize(size_t T, size_t K, const float *x, int8_t *q, float *scale)
{
    if (K == 0 || (T && (!x || !q || !scale)) || T > MAX_ELEMS / K) return FFN_EINVAL;
    if (!all_finite(x, T * K)) return FFN_EINVAL;
    for (size_t t = 0; t < T; t++)
        quant_sym(x + t * K, K, 1, 1, 127.0f, -127, 127, q + t * K, scale + t);
    return 0;
}

int ffn_smooth_factors(size_t T, size_t K, const float *x, size_t N, const float *w, double alpha,
                       float *m)
{
    if (K == 0 || N == 0 || !w || !m || (T && !x) || !(alpha >= 0.0 && alpha <= 1.0))
        return FFN_EINVAL;
    if (T > MAX_ELEMS / K || K > MAX_ELEMS / N) return FFN_EINVAL;
    if (!all_finite(x, T * K) || !all_finite(w, K * N)) return FFN_EINVAL;
    for (size_t k = 0; k < K; k++) {
        double ax = 0.0, aw = 0.0;
        for (size_t t = 0; t < T; t++)
            ax = fmax(ax, fabs((double)x[t * K + k]));
        for (size_t n = 0; n < N; n++)
            aw = fmax(aw, fabs((double)w[k * N + n]));
        const double v = ax > 0.0 && aw > 0.0 ? pow(ax, alpha) / pow(aw, 1.0 - alpha) : 1.0;
        /* Ratios beyond fp32 (a channel of W near the subnormals) are clamped to it. */
        m[k] = v > 0.0 ? (float)fmin(fmax(v, (double)FLT_MIN), (double)FLT_MAX) : 1.0f;
    }
    return 0;
}
