/* Vector activations and the microkernel epilogue shared by the AVX-512 kernels (header-only,
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

/* What a microkernel does with its accumulators once the K loop of a chunk is done. */
enum { EPI_PARTIAL = 0, EPI_ACT, EPI_OUT };
typedef struct epi {
    int kind;          /* EPI_PARTIAL: store raw to C; EPI_ACT: h = act(...) to out; EPI_OUT:
                          + bias, masked store to out (the y tile) */
    ffn_act act;       /* EPI_ACT */
    bool gated;        /* EPI_ACT: columns 0-15 are gate, 16-31 up, and h gets 16 columns */
    bool out_bf16;     /* EPI_ACT: h is stored as bf16 (for the bf16 down projection) */
    const float *bias; /* 32 fp32 biases of this panel (padded with zeros), or NULL */
    void *out;         /* first element of the tile in h or y */
    size_t ldo;        /* row stride of out in elements */
    __mmask16 m0, m1;  /* EPI_OUT: valid columns of the two halves */
    size_t cs;         /* EPI_ACT: column stride of out; 1 = row-major, else h is written into
                          the k-major row panels of the fp32 kernel (column c, row r at
                          c * cs + r) with a scatter */
} epi;

/* Apply e to the accumulators c0[r] (columns 0-15) and c1[r] (columns 16-31), rows r < mr. */
FFN_AI void epi_apply(const int mr, __m512 *c0, __m512 *c1, const epi *e)
{
    const __m512 b0 = e->bias ? _mm512_loadu_ps(e->bias) : _mm512_setzero_ps();
    const __m512 b1 = e->bias ? _mm512_loadu_ps(e->bias + 16) : _mm512_setzero_ps();
    if (e->kind == EPI_OUT) {
        float *o = (float *)e->out;
        for (int r = 0; r < mr; r++) {
            _mm512_mask_storeu_ps(o + (size_t)r * e->ldo, e->m0, _mm512_add_ps(c0[r], b0));
            _mm512_mask_storeu_ps(o + (size_t)r * e->ldo + 16, e->m1, _mm512_add_ps(c1[r], b1));
        }
        return;
    }
    for (int r = 0; r < mr; r++) {
        __m512 h0, h1 = _mm512_setzero_ps();
        if (e->gated) {
            h0 = _mm512_mul_ps(v_act(e->act, _mm512_add_ps(c0[r], b0)), _mm512_add_ps(c1[r], b1));
        } else {
            h0 = v_act(e->act, _mm512_add_ps(c0[r], b0));
            h1 = v_act(e->act, _mm512_add_ps(c1[r], b1));
        }
        if (e->out_bf16) {
            uint16_t *o = (uint16_t *)e->out + (size_t)r * e->ldo;
            if (e->gated)
                _mm256_storeu_si256((__m256i *)o, (__m256i)_mm512_cvtneps_pbh(h0));
            else
                _mm512_storeu_si512(o, (__m512i)_mm512_cvtne2ps_pbh(h1, h0));
        } else if (e->cs > 1) {
            float *o = (float *)e->out + (size_t)r * e->ldo;
            const __m512i idx = _mm512_mullo_epi32(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32((int)e->cs));
            _mm512_i32scatter_ps(o, idx, h0, 4);
            if (!e->gated) _mm512_i32scatter_ps(o + 16 * e->cs, idx, h1, 4);
        } else {
            float *o = (float *)e->out + (size_t)r * e->ldo;
            _mm512_storeu_ps(o, h0);
            if (!e->gated) _mm512_storeu_ps(o + 16, h1);
        }
    }
}

/* The next chunk [*lo, *hi) of n items from a counter shared by the threads (zero before the
 * loop); false once all are taken. Decode splits the weight panels this way rather than in
 * fixed halves: on a shared host one vCPU is often slowed for a while, and with a fixed split
 * the other one then idles at the barrier. Each item is still computed whole by one thread, so
 * y does not depend on who took what. */
static inline bool ffn__grab(size_t *next, size_t n, size_t chunk, size_t *lo, size_t *hi)
{
    const size_t s = __atomic_fetch_add(next, chunk, __ATOMIC_RELAXED);
    if (s >= n) return false;
    *lo = s;
    *hi = n - s < chunk ? n : s + chunk;
    return true;
}

/* Items per grab: about 256 KiB of weights (item_bytes each), at least one. */
static inline size_t ffn__grab_chunk(size_t item_bytes)
{
    const size_t c = ((size_t)256 << 10) / (item_bytes ? item_bytes : 1);
    return c ? c : 1;
}

/* Contiguous share [*lo, *hi) of n items for thread t of nt. */
static inline void ffn__split(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
}

#endif
