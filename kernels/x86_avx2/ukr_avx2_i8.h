/* The W8A8 tile of the AVX2 family as a template over its dot-product step (header-only:
 * ukr_avx2_q.c uses VPSIGNB + VPMADDUBSW + VPMADDWD, ukr_avxvnni.c one VPDPBUSD).
 *
 * With I8_STEP(acc, a4, b) defined by the includer, I8_TILE(name, OFFSET) defines
 *   static void name(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b,
 *                    size_t np, const int32_t *bsum, int32_t *cbuf)
 * (ffn_ukernels_i8.gemm): cbuf[g][r][32] for m rows and np panels of 32 columns in k-quad order,
 * two rows at a time with 4 ymm accumulators each (8 of the 16 registers; 4 more hold B).
 * OFFSET 128 corrects codes stored as q + 128 with the column sums. */
#ifndef FFNROOF_KERNELS_UKR_AVX2_I8_H
#define FFNROOF_KERNELS_UKR_AVX2_I8_H

#include <immintrin.h>
#include <string.h>

#define I8_AI static inline __attribute__((always_inline))

#define I8_TILE(name, OFFSET)                                                                      \
    I8_AI void name##_rows(const int m, size_t kp, const uint8_t *a, size_t lda, const int8_t *b,  \
                           const int32_t *bsum, int32_t *c)                                        \
    {                                                                                              \
        __m256i acc[2][4];                                                                         \
        for (int r = 0; r < m; r++)                                                                \
            for (int j = 0; j < 4; j++)                                                            \
                acc[r][j] = _mm256_setzero_si256();                                                \
        for (size_t kq = 0; kq < kp / 4; kq++) {                                                   \
            const int8_t *bk = b + kq * 128;                                                       \
            _mm_prefetch((const char *)bk + 2048, _MM_HINT_T0);                                    \
            _mm_prefetch((const char *)bk + 2048 + 64, _MM_HINT_T0);                               \
            __m256i bv[4];                                                                         \
            for (int j = 0; j < 4; j++)                                                            \
                bv[j] = _mm256_loadu_si256((const __m256i *)(const void *)(bk + 32 * j));          \
            for (int r = 0; r < m; r++) {                                                          \
                int32_t q4;                                                                        \
                memcpy(&q4, a + (size_t)r * lda + kq * 4, 4);                                      \
                const __m256i av = _mm256_set1_epi32(q4);                                          \
                for (int j = 0; j < 4; j++)                                                        \
                    I8_STEP(acc[r][j], av, bv[j]);                                                 \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < m; r++)                                                                \
            for (int j = 0; j < 4; j++) {                                                          \
                __m256i v = acc[r][j];                                                             \
                if (OFFSET) {                                                                      \
                    const __m256i s =                                                              \
                        _mm256_loadu_si256((const __m256i *)(const void *)(bsum + 8 * j));         \
                    v = _mm256_sub_epi32(v, _mm256_slli_epi32(s, 7));                              \
                }                                                                                  \
                _mm256_storeu_si256((__m256i *)(void *)(c + r * 32 + 8 * j), v);                   \
            }                                                                                      \
    }                                                                                              \
    static void name(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b,           \
                     size_t np, const int32_t *bsum, int32_t *cbuf)                                \
    {                                                                                              \
        for (size_t g = 0; g < np; g++)                                                            \
            for (size_t r0 = 0; r0 < m; r0 += 2) {                                                 \
                int32_t *c = cbuf + (g * m + r0) * 32;                                             \
                const int8_t *bg = b + g * kp * 32;                                                \
                if (m - r0 >= 2)                                                                   \
                    name##_rows(2, kp, a + r0 * lda, lda, bg, bsum + g * 32, c);                   \
                else                                                                               \
                    name##_rows(1, kp, a + r0 * lda, lda, bg, bsum + g * 32, c);                   \
            }                                                                                      \
    }

#endif
