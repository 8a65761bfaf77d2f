/* The FFN_UKR_Q4_OCT panels of the AVX-512 family's W4 tables (header-only, included by
 * ukr_avx512bf16_q.c and ukr_avx512fp16_q.c, each compiled with its folder's flags): 32 columns,
 * a 64-byte vector of words is 16 columns x 8 rows (row 8b + i in bits 4i .. 4i + 3); the
 * loads, a row's codes as fp32 (a VPERMPS lookup), the exact-dequantizing FMA stream (zero points,
 * or no pairs from the driver) and the dequantization into the prefill tile's fp32 scratch. */
#ifndef FFNROOF_KERNELS_AVX512_OCT_Q_H
#define FFNROOF_KERNELS_AVX512_OCT_Q_H

#include "avx512_q_common.h"

enum { FFN_OCT_NR = 32, FFN_OCT_PF = 2048, FFN_OCT_G = 6 };

/* Block b's two vectors of words (columns 0-15, 16-31). */
FFN_AI void ffn__oct_load(const uint8_t *q, size_t b, __m512i *v0, __m512i *v1)
{
    const uint8_t *p = q + b * (FFN_OCT_NR * 4);
    *v0 = _mm512_loadu_si512(p);
    *v1 = _mm512_loadu_si512(p + 64);
}

/* The same, after prefetching the block FFN_OCT_PF bytes ahead (the m-row streams). */
FFN_AI void ffn__oct_load_ahead(const uint8_t *q, size_t b, __m512i *v0, __m512i *v1)
{
    const char *p = (const char *)(q + b * (FFN_OCT_NR * 4)) + FFN_OCT_PF;
    _mm_prefetch(p, _MM_HINT_T0);
    _mm_prefetch(p + 64, _MM_HINT_T0);
    ffn__oct_load(q, b, v0, v1);
}

/* The nibbles of row 8b + i (i < 8, any value) of v as fp32 codes u: VPERMPS looks each up in
 * lut (ffn__avx512_u_lut) and reads only an index's low 4 bits, so the bits above need no mask;
 * FFN_OCT_U is the same for a constant i (an immediate shift). */
FFN_AI __m512 ffn__oct_u(__m512i v, unsigned i, __m512 lut)
{
    return _mm512_permutexvar_ps(_mm512_srl_epi32(v, _mm_cvtsi32_si128((int)(4 * i))), lut);
}
#define FFN_OCT_U(v, i, lut)                                                                       \
    _mm512_permutexvar_ps((i) ? _mm512_srli_epi32((v), 4 * (i)) : (v), (lut))

/* Exact w' then fp32 FMAs, any m (zero points, or no pairs from the driver). */
FFN_AI void ffn__oct_fma_body(const int m, size_t kc, const float *a, size_t as,
                              const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    const size_t Gs = w->group;
    const __m512 lut = ffn__avx512_u_lut();
    __m512 o0[FFN_OCT_G], o1[FFN_OCT_G];
    for (int r = 0; r < m; r++)
        o0[r] = o1[r] = _mm512_setzero_ps();
    for (size_t g = 0; g < kc / Gs; g++) {
        __m512 s0, s1, n0, n1;
        ffn__avx512_gsn(w, g, &s0, &s1, &n0, &n1);
        for (size_t b = g * Gs / 8; b < (g + 1) * Gs / 8; b++) {
            __m512i v0, v1;
            ffn__oct_load_ahead(w->q, b, &v0, &v1);
#define FFN_OCT_FMA_STEP(i)                                                                        \
    {                                                                                              \
        const size_t k = b * 8 + (i);                                                              \
        const __m512 b0 = _mm512_fmadd_ps(FFN_OCT_U(v0, i, lut), s0, n0);                          \
        const __m512 b1 = _mm512_fmadd_ps(FFN_OCT_U(v1, i, lut), s1, n1);                          \
        for (int r = 0; r < m; r++) {                                                              \
            const __m512 av = _mm512_set1_ps(a[k * as + (size_t)r]);                               \
            o0[r] = _mm512_fmadd_ps(av, b0, o0[r]);                                                \
            o1[r] = _mm512_fmadd_ps(av, b1, o1[r]);                                                \
        }                                                                                          \
    }
            FFN_OCT_FMA_STEP(0)
            FFN_OCT_FMA_STEP(1)
            FFN_OCT_FMA_STEP(2)
            FFN_OCT_FMA_STEP(3)
            FFN_OCT_FMA_STEP(4)
            FFN_OCT_FMA_STEP(5)
            FFN_OCT_FMA_STEP(6)
            FFN_OCT_FMA_STEP(7)
#undef FFN_OCT_FMA_STEP
        }
    }
    for (int r = 0; r < m; r++) {
        _mm512_storeu_ps(c + (size_t)r * ldc, o0[r]);
        _mm512_storeu_ps(c + (size_t)r * ldc + 16, o1[r]);
    }
}

/* The table's dequant for prefill: dst[k * 32 + c] = w'(k0 + k, c), exact (a code times its
 * bf16 scale, plus -z s). */
static inline void ffn__oct_q4_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    const size_t Gs = w->group;
    const __m512 lut = ffn__avx512_u_lut();
    size_t k = 0;
    while (k < kc) {
        const size_t g = (k0 + k) / Gs, end = (g + 1) * Gs - k0 < kc ? (g + 1) * Gs - k0 : kc;
        __m512 s0, s1, n0, n1;
        ffn__avx512_gsn(w, g, &s0, &s1, &n0, &n1);
        for (; k < end; k++) {
            const size_t kk = k0 + k;
            __m512i v0, v1;
            ffn__oct_load(w->q, kk / 8, &v0, &v1);
            const unsigned i = (unsigned)(kk % 8);
            _mm512_storeu_ps(dst + k * FFN_OCT_NR, _mm512_fmadd_ps(ffn__oct_u(v0, i, lut), s0, n0));
            _mm512_storeu_ps(dst + k * FFN_OCT_NR + 16,
                             _mm512_fmadd_ps(ffn__oct_u(v1, i, lut), s1, n1));
        }
    }
}

#endif
