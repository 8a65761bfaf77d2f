/* Peak fp16 FMA throughput with aarch64 NEON FMLA .8h (compiled with -march=armv8.2-a+fp16; called
 * only when AT_HWCAP has ASIMDHP). 16 independent accumulators of 8 halves; acc = 0.01 + acc * 0.99
 * converges to 1. FLOPs per iteration: 16 FMLA x 8 lanes x 2 = FFN__FP16_NEON_FLOPS_PER_ITER
 * (256). */
#include "internal.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <arm_neon.h>

double ffn__peak_fp16_neon(uint64_t iters)
{
    const float16x8_t m = vreinterpretq_f16_u16(vdupq_n_u16(0x3BEC)); /* 0.99 */
    const float16x8_t c = vreinterpretq_f16_u16(vdupq_n_u16(0x211F)); /* 0.01 */
    float16x8_t a[16];
    for (int j = 0; j < 16; j++)
        a[j] = vreinterpretq_f16_u16(vdupq_n_u16(0x3C00)); /* 1.0 */
    for (uint64_t i = 0; i < iters; i++)
        for (int j = 0; j < 16; j++)
            a[j] = vfmaq_f16(c, a[j], m);
    float16x8_t s = a[0];
    for (int j = 1; j < 16; j++)
        s = vaddq_f16(s, a[j]);
    const float32x4_t lo = vcvt_f32_f16(vget_low_f16(s));
    return (double)vaddvq_f32(lo);
}
#endif
