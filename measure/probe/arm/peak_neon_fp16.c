/* Peak fp16 FMA throughput with aarch64 NEON FMLA .8h (compiled with -march=armv8.2-a+fp16; called
 * only when AT_HWCAP has ASIMDHP). 16 independent accumulators of 8 halves, each acc = acc + x * y
 * (FMLA's in-place form; see the fp32 probe for what GCC made of the other form) with distinct
 * starting values so that no two chains can be merged; the increment, 0.01, stops changing an
 * accumulator once it reaches 32 (half an fp16 ulp there is 0.0156): no overflow, no subnormals.
 * FLOPs per iteration: 16 FMLA x 8 lanes x 2 = FFN__FP16_NEON_FLOPS_PER_ITER (256). */
#include "internal.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <arm_neon.h>

#define FMA(acc) (acc) = vfmaq_f16((acc), x, y)
#define START(j) vreinterpretq_f16_u16(vdupq_n_u16((uint16_t)(0x3C00 + (j)))) /* 1.0 + j ulps */

double ffn__peak_fp16_neon(uint64_t iters)
{
    const float16x8_t x = vreinterpretq_f16_u16(vdupq_n_u16(0x3C00)); /* 1.0 */
    const float16x8_t y = vreinterpretq_f16_u16(vdupq_n_u16(0x211F)); /* 0.01 */
    float16x8_t a0 = START(0), a1 = START(1), a2 = START(2), a3 = START(3), a4 = START(4),
                a5 = START(5), a6 = START(6), a7 = START(7), a8 = START(8), a9 = START(9),
                a10 = START(10), a11 = START(11), a12 = START(12), a13 = START(13), a14 = START(14),
                a15 = START(15);
    for (uint64_t i = 0; i < iters; i++)
        FFN__EACH16(FMA);
    const float16x8_t s = vaddq_f16(vaddq_f16(vaddq_f16(vaddq_f16(a0, a1), vaddq_f16(a2, a3)),
                                              vaddq_f16(vaddq_f16(a4, a5), vaddq_f16(a6, a7))),
                                    vaddq_f16(vaddq_f16(vaddq_f16(a8, a9), vaddq_f16(a10, a11)),
                                              vaddq_f16(vaddq_f16(a12, a13), vaddq_f16(a14, a15))));
    const float32x4_t lo = vcvt_f32_f16(vget_low_f16(s));
    return (double)vaddvq_f32(lo);
}
#endif
