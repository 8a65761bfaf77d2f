/* Vector activations shared by the AVX-512, AVX512-BF16 and AMX microkernels (header-only,
 * included by files compiled with the AVX-512 flags). The activations follow ref/ffn_ref.c's
 * definitions, including where they give NaN (relu(NaN) = NaN, silu(-Inf) = NaN, ...):
 *  - exp: range reduction by n = round(x log2 e), degree-7 Taylor polynomial on
 *    |r| <= ln2/2 (truncation 5e-9), 2^n by VSCALEFPS (overflow to Inf, underflow to 0);
 *  - silu(x) = x / (1 + exp(-x)); gelu_tanh(x) = x / (1 + exp(-2z)), z = sqrt(2/pi)(x +
 *    0.044715 x^3), which is the tanh form rewritten without the cancellation of 1 + tanh;
 *  - gelu(x) = x (1 - erfc(|x|/sqrt2)/2) for x >= 0 and x erfc(|x|/sqrt2)/2 for x < 0, with
 *    erfc from Numerical Recipes' Chebyshev fit erfcc (fractional error < 1.2e-7 everywhere;
 *    Press et al., Numerical Recipes in C, 2nd ed., section 6.2), exp(-z^2) with z^2 split
 *    into hi + lo by FMA so large |x| keep their relative accuracy.
 * Measured against the double reference in tests/test_kernels.c (bound documented there). */
#ifndef FFNROOF_KERNELS_AVX512_COMMON_H
#define FFNROOF_KERNELS_AVX512_COMMON_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../kern_internal.h"
#include "../driver/ukernel.h"

#define FFN_AI static inline __attribute__((always_inline))

FFN_AI __m512 v_exp(__m512 x)
{
    /* min/max return their second operand when one is NaN: keep x second so NaN survives. */
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

FFN_AI __m512 v_silu(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(x, _mm512_add_ps(one, v_exp(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

FFN_AI __m512 v_gelu_tanh(__m512 x)
{
    const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
    const __m512 z = _mm512_mul_ps(_mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x),
                                   _mm512_set1_ps(-1.5957691216057308f)); /* -2 sqrt(2/pi) */
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), v_exp(z)));
}

FFN_AI __m512 v_gelu(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
    const __m512 za = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
    /* erfc(10) < 3e-45: beyond, y = 0 exactly (and z stays finite so z*z - hi is no Inf-Inf). */
    const __mmask16 small = _mm512_cmp_ps_mask(za, _mm512_set1_ps(10.0f), _CMP_LE_OQ);
    const __m512 z = _mm512_min_ps(_mm512_set1_ps(10.0f), za);
    const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(half, z, one));
    __m512 p = _mm512_set1_ps(0.17087277f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
    const __m512 zz = _mm512_mul_ps(z, z);
    const __m512 zlo = _mm512_fmsub_ps(z, z, zz); /* z*z = zz + zlo exactly */
    __m512 e = v_exp(_mm512_sub_ps(p, zz));
    e = _mm512_fnmadd_ps(e, zlo, e); /* exp(-zz - zlo) ~ exp(-zz)(1 - zlo) */
    const __m512 y = _mm512_maskz_mov_ps(small, _mm512_mul_ps(t, e)); /* erfc(z) */
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    const __m512 hy = _mm512_mul_ps(half, y);
    return _mm512_mul_ps(x, _mm512_mask_blend_ps(pos, hy, _mm512_sub_ps(one, hy)));
}

/* The activation of the gate (the base function of a gated form). */
FFN_AI __m512 v_act(ffn_act a, __m512 g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return _mm512_max_ps(_mm512_setzero_ps(), g); /* NaN (second operand) passes */
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return v_gelu(g);
    case FFN_ACT_GELU_TANH:
        return v_gelu_tanh(g);
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
    default:
        return v_silu(g);
    }
}

/* The AVX-512 activation epilogue (ffn_ukr_act_fn), shared by the AVX-512 microkernel tables
 * (ukr_avx512.c defines it). */
void ffn__avx512_act(ffn_act act, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                     const float *bg, const float *bu, float *h, size_t ldh);

#endif
