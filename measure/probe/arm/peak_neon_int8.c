/* Peak int8 dot-product throughput on AArch64 Advanced SIMD, two probes in one file, each
 * compiled only when the compiler has its extension (CMakeLists.txt: -march=armv8.2-a+dotprod
 * and +i8mm) and called only when HWCAP says the CPU has it:
 *  - SDOT v.4s, v.16b, v.16b (FEAT_DotProd, HWCAP_ASIMDDP): 16 s8 x s8 products summed in
 *    groups of 4 into 4 int32 lanes; ops per iteration 16 instr x 16 MAC x 2 =
 *    FFN__INT8_NEON_SDOT_FLOPS_PER_ITER (512);
 *  - SMMLA v.4s, v.16b, v.16b (FEAT_I8MM, HWCAP2_I8MM): a 2x8 by 8x2 s8 matrix product into a
 *    2x2 int32 block, 32 MAC; ops per iteration 16 x 32 x 2 = FFN__INT8_NEON_I8MM_FLOPS_PER_ITER
 *    (1024).
 * (Arm A64 instruction set: SDOT (vector), SMMLA (vector).) 16 independent accumulators cover a
 * latency of 3-4 cycles on up to 4 pipes. The accumulator is an input of every instruction, so
 * nothing is loop-invariant; int32 lanes may wrap, harmless for a throughput test. */
#include "internal.h"

#if defined(__aarch64__) &&                                                                        \
    (defined(FFN_MEASURE_HAVE_NEON_SDOT) || defined(FFN_MEASURE_HAVE_NEON_I8MM))
#include <arm_neon.h>

#define SUM16(a)                                                                                   \
    vaddq_s32(vaddq_s32(vaddq_s32(vaddq_s32(a[0], a[1]), vaddq_s32(a[2], a[3])),                   \
                        vaddq_s32(vaddq_s32(a[4], a[5]), vaddq_s32(a[6], a[7]))),                  \
              vaddq_s32(vaddq_s32(vaddq_s32(a[8], a[9]), vaddq_s32(a[10], a[11])),                 \
                        vaddq_s32(vaddq_s32(a[12], a[13]), vaddq_s32(a[14], a[15]))))

/* the lanes wrap: widen before the horizontal sum (int32 overflow would be undefined) */
static double lanes_sum(int32x4_t s)
{
    return (double)vaddlvq_s32(s);
}
#endif

#if defined(__aarch64__) && defined(FFN_MEASURE_HAVE_NEON_SDOT)
double ffn__peak_int8_neon_sdot(uint64_t iters)
{
    const int8x16_t x = vdupq_n_s8(1), y = vdupq_n_s8(1);
    int32x4_t a[16];
    for (int j = 0; j < 16; j++)
        a[j] = vdupq_n_s32(j);
    for (uint64_t i = 0; i < iters; i++)
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            a[j] = vdotq_s32(a[j], x, y);
    return lanes_sum(SUM16(a));
}
#endif

#if defined(__aarch64__) && defined(FFN_MEASURE_HAVE_NEON_I8MM)
double ffn__peak_int8_neon_i8mm(uint64_t iters)
{
    const int8x16_t x = vdupq_n_s8(1), y = vdupq_n_s8(1);
    int32x4_t a[16];
    for (int j = 0; j < 16; j++)
        a[j] = vdupq_n_s32(j);
    for (uint64_t i = 0; i < iters; i++)
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            a[j] = vmmlaq_s32(a[j], x, y);
    return lanes_sum(SUM16(a));
}
#endif
