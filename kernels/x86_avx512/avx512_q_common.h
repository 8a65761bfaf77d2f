/* Pieces the float-activation quantized tables of the AVX-512 family share (header-only,
 * included by ukr_avx512_q.c and ukr_avx512bf16_q.c, each compiled with its folder's flags):
 * the bf16 group scales of a 32-column W4 panel as fp32 and its zero-point offsets, and the
 * switch that instantiates a row-count template for m = 1..6 (the decode stream's stream_g). */
#ifndef FFNROOF_KERNELS_AVX512_Q_COMMON_H
#define FFNROOF_KERNELS_AVX512_Q_COMMON_H

#include "avx512_common.h"

/* The 32 bf16 scales of group g (columns 0-15 into s0, 16-31 into s1) as fp32. */
FFN_AI void ffn__avx512_gscales(const uint16_t *gs, size_t g, __m512 *s0, __m512 *s1)
{
    const __m512i v = _mm512_loadu_si512(gs + g * 32);
    const __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);
    *s0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(lo), 16));
    *s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16));
}

/* n = -z s per column of group g, z the 4-bit zero points of the group (zero: [K / G][16]
 * bytes, column c in the low nibble of byte c and column c + 16 in its high one), or z = 8 where
 * zero is NULL (symmetric codes stored as q + 8): w' = u s + n, exact. */
FFN_AI void ffn__avx512_goffsets(const uint8_t *zero, size_t g, __m512 s0, __m512 s1, __m512 *n0,
                                 __m512 *n1)
{
    __m512 z0 = _mm512_set1_ps(8.0f), z1 = z0;
    if (zero) {
        const __m512i v =
            _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(zero + g * 16)));
        z0 = _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(15)));
        z1 = _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4));
    }
    *n0 = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), z0), s0);
    *n1 = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), z1), s1);
}

/* The fp32 values 0..15: a VPERMPS table that turns a nibble (any index's low 4 bits) into
 * its code u. */
FFN_AI __m512 ffn__avx512_u_lut(void)
{
    return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Group g's scales and offsets of a W4 panel (w' = u s + n), as the two functions above. */
FFN_AI void ffn__avx512_gsn(const ffn_ukr_qpanel *w, size_t g, __m512 *s0, __m512 *s1, __m512 *n0,
                            __m512 *n1)
{
    ffn__avx512_gscales(w->gscale, g, s0, s1);
    ffn__avx512_goffsets(w->zero, g, *s0, *s1, n0, n1);
}

/* body(M, ...) with the constant M = m for m = 2..6, and M = 1 otherwise. */
#define FFN_AVX512_ROWS_1_6(m, body, ...)                                                          \
    switch (m) {                                                                                   \
    case 6:                                                                                        \
        body(6, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    case 5:                                                                                        \
        body(5, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    case 4:                                                                                        \
        body(4, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    case 3:                                                                                        \
        body(3, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    case 2:                                                                                        \
        body(2, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    default:                                                                                       \
        body(1, __VA_ARGS__);                                                                      \
        break;                                                                                     \
    }

#endif
