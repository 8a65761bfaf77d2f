/* Peak int8 dot-product throughput of AVX2 without VNNI (compiled with -mavx2; called only when
 * the kernel wing's detection says AVX2 and the YMM state are usable): VPMADDUBSW multiplies 32
 * u8 x s8 pairs and adds adjacent products into 16 saturating int16 lanes, VPMADDWD by ones adds
 * those pairs into 8 int32 lanes, VPADDD accumulates them: the sequence int8 dot products take on
 * x86 CPUs without VNNI (llama.cpp's mul_sum_i8_pairs, ggml/src/ggml-cpu/arch/x86/quants.c). 8
 * sequences per iteration into 4 accumulators (only the 1-cycle VPADDD is on an accumulator's
 * chain; more accumulators would not fit the 16 ymm registers beside the temporaries, and GCC
 * would spill them every iteration); the inputs are loop-invariant, so an empty asm statement
 * before each sequence tells the compiler its input changed (without it all eight sequences
 * would be one, hoisted out of the loop). 1 x 1 products: the int16 lanes hold 2, far from
 * saturation; the int32 accumulators wrap after ~5e8 iterations, harmless for a throughput test.
 * Ops per iteration, counted like VPDPBUSD's (one multiply and one add per int8 MAC):
 * 8 sequences x 32 MAC x 2 = FFN__INT8_AVX2_FLOPS_PER_ITER (512). */
#include <immintrin.h>
#include <stdint.h>

#include "internal.h"

#define SEQ(acc)                                                                                   \
    do {                                                                                           \
        __asm__ volatile("" : "+x"(x));                                                            \
        (acc) = _mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones));      \
    } while (0)

double ffn__peak_int8_avx2(uint64_t iters)
{
    __m256i x = _mm256_set1_epi8(1);
    const __m256i y = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (uint64_t i = 0; i < iters; i++) {
        SEQ(a0);
        SEQ(a1);
        SEQ(a2);
        SEQ(a3);
        SEQ(a0);
        SEQ(a1);
        SEQ(a2);
        SEQ(a3);
    }
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
    /* the lanes wrap: sum them in 64 bits; the result only keeps the loop from being dropped */
    int32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, s);
    int64_t t = 0;
    for (int i = 0; i < 8; i++)
        t += lanes[i];
    return (double)t;
}
