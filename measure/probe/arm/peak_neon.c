/* Peak fp32 FMA throughput with aarch64 NEON FMLA .4s (Advanced SIMD is mandatory on aarch64, so
 * no extra flags). 16 independent q-register accumulators cover FMA latency (4 cycles) x up to 4
 * pipes (Neoverse V1/V2, Apple P-cores). Each chain is acc = acc + x * y, the form FMLA computes
 * in place: GCC 12 built the earlier acc = c + acc * m, in a loop over an array, as a stack load,
 * two register moves and a stack store around every FMLA. Named accumulators with distinct
 * starting values (chains that start equal and are updated alike would be merged into one);
 * the increment, 1e-7, keeps them far from overflow for any realistic run.
 * FLOPs per iteration: 16 FMLA x 4 lanes x 2 = FFN__FP32_NEON_FLOPS_PER_ITER (128). */
#include "internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define FMA(acc) (acc) = vfmaq_f32((acc), x, y)

double ffn__peak_fp32_neon(uint64_t iters)
{
    const float32x4_t x = vdupq_n_f32(1.0f), y = vdupq_n_f32(1e-7f);
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(1.0f), a2 = vdupq_n_f32(2.0f),
                a3 = vdupq_n_f32(3.0f), a4 = vdupq_n_f32(4.0f), a5 = vdupq_n_f32(5.0f),
                a6 = vdupq_n_f32(6.0f), a7 = vdupq_n_f32(7.0f), a8 = vdupq_n_f32(8.0f),
                a9 = vdupq_n_f32(9.0f), a10 = vdupq_n_f32(10.0f), a11 = vdupq_n_f32(11.0f),
                a12 = vdupq_n_f32(12.0f), a13 = vdupq_n_f32(13.0f), a14 = vdupq_n_f32(14.0f),
                a15 = vdupq_n_f32(15.0f);
    for (uint64_t i = 0; i < iters; i++)
        FFN__EACH16(FMA);
    const float32x4_t s = vaddq_f32(vaddq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)),
                                              vaddq_f32(vaddq_f32(a4, a5), vaddq_f32(a6, a7))),
                                    vaddq_f32(vaddq_f32(vaddq_f32(a8, a9), vaddq_f32(a10, a11)),
                                              vaddq_f32(vaddq_f32(a12, a13), vaddq_f32(a14, a15))));
    return (double)vaddvq_f32(s);
}
#endif
