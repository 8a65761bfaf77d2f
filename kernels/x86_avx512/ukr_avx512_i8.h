/* The W8A8 row tile of the AVX-512 family as a template over its dot-product step (header-only:
 * included by ukr_avx512_q.c, whose step is VPMADDUBSW on |a| and sign-moved weights for
 * AVX-512 without VNNI, and by ukr_avx512vnni.c, whose step is one VPDPBUSD).
 *
 * With I8_STEP(acc, a4, b) defined by the includer, I8_TILE(name, OFFSET) defines
 *   static void name(int m, size_t kp, const uint8_t *a, size_t lda, const int8_t *b,
 *                    const int32_t *bsum, int32_t *c, size_t ldc)
 * computing c[r][0..31] = sum_k A(r, k) B(k, c) for m <= 8 rows over one panel of 32 columns
 * in k-quad order ([kp/4][32][4] int8), with 2 accumulators per row (columns 0-15 and 16-31).
 * I8_STEP(acc, a4, b) adds to the int32 lanes of acc the 4-byte dot products of the broadcast
 * quad a4 and the 16 column quads of b. OFFSET 128 corrects codes stored as q + 128. */
#ifndef FFNROOF_KERNELS_UKR_AVX512_I8_H
#define FFNROOF_KERNELS_UKR_AVX512_I8_H

#include "avx512_common.h"

#define I8_ROW8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define I8_TILE(name, OFFSET)                                                                      \
    FFN_AI void name##_m(const int m, size_t kp, const uint8_t *a, size_t lda, const int8_t *b,    \
                         const int32_t *bsum, int32_t *c, size_t ldc)                              \
    {                                                                                              \
        __m512i c0[8], c1[8];                                                                      \
        for (int r = 0; r < m; r++)                                                                \
            c0[r] = c1[r] = _mm512_setzero_si512();                                                \
        for (size_t kq = 0; kq < kp / 4; kq++) {                                                   \
            _mm_prefetch((const char *)(b + kq * 128) + 2048, _MM_HINT_T0);                        \
            _mm_prefetch((const char *)(b + kq * 128) + 2048 + 64, _MM_HINT_T0);                   \
            const __m512i b0 = _mm512_loadu_si512(b + kq * 128);                                   \
            const __m512i b1 = _mm512_loadu_si512(b + kq * 128 + 64);                              \
            for (int r = 0; r < m; r++) {                                                          \
                int32_t q4;                                                                        \
                memcpy(&q4, a + (size_t)r * lda + kq * 4, 4);                                      \
                const __m512i av = _mm512_set1_epi32(q4);                                          \
                I8_STEP(c0[r], av, b0);                                                            \
                I8_STEP(c1[r], av, b1);                                                            \
            }                                                                                      \
        }                                                                                          \
        const __m512i o0 = _mm512_slli_epi32(_mm512_loadu_si512(bsum), 7);                         \
        const __m512i o1 = _mm512_slli_epi32(_mm512_loadu_si512(bsum + 16), 7);                    \
        for (int r = 0; r < m; r++) {                                                              \
            _mm512_storeu_si512(c + (size_t)r * ldc,                                               \
                                OFFSET ? _mm512_sub_epi32(c0[r], o0) : c0[r]);                     \
            _mm512_storeu_si512(c + (size_t)r * ldc + 16,                                          \
                                OFFSET ? _mm512_sub_epi32(c1[r], o1) : c1[r]);                     \
        }                                                                                          \
    }                                                                                              \
    /* The full 8-row tile with named accumulators (an array of 16 would be kept in memory). */    \
    static void name##_8(size_t kp, const uint8_t *a, size_t lda, const int8_t *b,                 \
                         const int32_t *bsum, int32_t *c, size_t ldc)                              \
    {                                                                                              \
        I8_ROW8(I8_DECL)                                                                           \
        for (size_t kq = 0; kq < kp / 4; kq++) {                                                   \
            const __m512i b0 = _mm512_loadu_si512(b + kq * 128);                                   \
            const __m512i b1 = _mm512_loadu_si512(b + kq * 128 + 64);                              \
            const uint8_t *ak = a + kq * 4;                                                        \
            I8_ROW8(I8_FMA)                                                                        \
        }                                                                                          \
        const __m512i o0 = _mm512_slli_epi32(_mm512_loadu_si512(bsum), 7);                         \
        const __m512i o1 = _mm512_slli_epi32(_mm512_loadu_si512(bsum + 16), 7);                    \
        I8_ROW8(I8_STORE##OFFSET)                                                                  \
    }                                                                                              \
    static void name(int m, size_t kp, const uint8_t *a, size_t lda, const int8_t *b,              \
                     const int32_t *bsum, int32_t *c, size_t ldc)                                  \
    {                                                                                              \
        switch (m) {                                                                               \
        case 8:                                                                                    \
            name##_8(kp, a, lda, b, bsum, c, ldc);                                                 \
            break;                                                                                 \
        case 7:                                                                                    \
            name##_m(7, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        case 6:                                                                                    \
            name##_m(6, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        case 5:                                                                                    \
            name##_m(5, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        case 4:                                                                                    \
            name##_m(4, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        case 3:                                                                                    \
            name##_m(3, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        case 2:                                                                                    \
            name##_m(2, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        default:                                                                                   \
            name##_m(1, kp, a, lda, b, bsum, c, ldc);                                              \
            break;                                                                                 \
        }                                                                                          \
    }

#define I8_DECL(r) __m512i c##r##_0 = _mm512_setzero_si512(), c##r##_1 = _mm512_setzero_si512();
#define I8_BCAST(r)                                                                                \
    int32_t q4_##r;                                                                                \
    memcpy(&q4_##r, ak + (size_t)(r)*lda, 4);                                                      \
    const __m512i av##r = _mm512_set1_epi32(q4_##r);
#define I8_FMA(r)                                                                                  \
    {                                                                                              \
        I8_BCAST(r)                                                                                \
        I8_STEP(c##r##_0, av##r, b0);                                                              \
        I8_STEP(c##r##_1, av##r, b1);                                                              \
    }
#define I8_STORE128(r)                                                                             \
    _mm512_storeu_si512(c + (size_t)(r)*ldc, _mm512_sub_epi32(c##r##_0, o0));                      \
    _mm512_storeu_si512(c + (size_t)(r)*ldc + 16, _mm512_sub_epi32(c##r##_1, o1));
#define I8_STORE0(r)                                                                               \
    (void)o0;                                                                                      \
    (void)o1;                                                                                      \
    _mm512_storeu_si512(c + (size_t)(r)*ldc, c##r##_0);                                            \
    _mm512_storeu_si512(c + (size_t)(r)*ldc + 16, c##r##_1);

/* cbuf[g][r][32] for m rows and np panels: 8-row tiles, panel by panel (a panel's k-quads are
 * reused by the row tiles of the block while they are in L1/L2). */
#define I8_GEMM(name, tile)                                                                        \
    static void name(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b,           \
                     size_t np, const int32_t *bsum, int32_t *cbuf)                                \
    {                                                                                              \
        for (size_t g = 0; g < np; g++)                                                            \
            for (size_t r0 = 0; r0 < m; r0 += 8) {                                                 \
                const int mr = m - r0 < 8 ? (int)(m - r0) : 8;                                     \
                tile(mr, kp, a + r0 * lda, lda, b + g * kp * 32, bsum + g * 32,                    \
                     cbuf + (g * m + r0) * 32, 32);                                                \
            }                                                                                      \
    }

#endif
