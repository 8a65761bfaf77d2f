/* Peak fp32 FMA throughput with aarch64 NEON FMLA .4s (Advanced SIMD is mandatory on aarch64, so
 * no extra flags). 16 independent q-register accumulators cover FMA latency (4 cycles) x up to 4
 * pipes (Neoverse V1/V2, Apple P-cores).
 * FLOPs per iteration: 16 FMLA x 4 lanes x 2 = FFN__FP32_NEON_FLOPS_PER_ITER (128). */
#include "internal.h"

#if defined(__aarch64__)
#include <arm_neon.h>

double ffn__peak_fp32_neon(uint64_t iters)
{
    const float32x4_t m = vdupq_n_f32(0.99999f), c = vdupq_n_f32(1e-5f);
    float32x4_t a[16];
    for (int j = 0; j < 16; j++)
        a[j] = vdupq_n_f32(0.1f + 0.01f * (float)j);
    for (uint64_t i = 0; i < iters; i++) {
        /* vfmaq_f32(acc, x, y) = acc + x * y: here c + a * m */
        for (int j = 0; j < 16; j++)
            a[j] = vfmaq_f32(c, a[j], m);
    }
    float32x4_t s = a[0];
    for (int j = 1; j < 16; j++)
        s = vaddq_f32(s, a[j]);
    return (double)vaddvq_f32(s);
}
#endif
