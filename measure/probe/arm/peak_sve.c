/* Peak fp32 FMA throughput with SVE FMLA z.s (compiled with -march=armv8.2-a+sve; called only
 * when HWCAP says SVE is there): each instruction does VL/4 fused multiply-adds, so the work per
 * iteration follows the vector length, which only the running CPU knows: 16 instr x VL_bytes / 4
 * lanes x 2 = FFN__FP32_SVE_FLOPS_PER_VL_BYTE (8) x svcntb() FLOPs, which peak.c multiplies in at
 * run time. 16 independent accumulators, as in the NEON probe, cover FMA latency x pipes; SVE
 * vectors are sizeless (no arrays of them), hence named accumulators. The NEON probe measures
 * only 128-bit vectors, which on a 256- or 512-bit SVE core is not the roof of the SVE kernels. */
#include "internal.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_SVE)
#include <arm_sve.h>

#define FMA(acc) (acc) = svmla_f32_x(all, (acc), x, y)

double ffn__peak_fp32_sve(uint64_t iters)
{
    const svbool_t all = svptrue_b32();
    const svfloat32_t x = svdup_n_f32(1.0f), y = svdup_n_f32(1e-7f);
    /* distinct starting values: chains that start equal and are updated alike stay equal, and
     * GCC merges them into one (a latency-bound loop counted as 16 instructions) */
    svfloat32_t a0 = svdup_n_f32(0.0f), a1 = svdup_n_f32(1.0f), a2 = svdup_n_f32(2.0f),
                a3 = svdup_n_f32(3.0f), a4 = svdup_n_f32(4.0f), a5 = svdup_n_f32(5.0f),
                a6 = svdup_n_f32(6.0f), a7 = svdup_n_f32(7.0f), a8 = svdup_n_f32(8.0f),
                a9 = svdup_n_f32(9.0f), a10 = svdup_n_f32(10.0f), a11 = svdup_n_f32(11.0f),
                a12 = svdup_n_f32(12.0f), a13 = svdup_n_f32(13.0f), a14 = svdup_n_f32(14.0f),
                a15 = svdup_n_f32(15.0f);
    for (uint64_t i = 0; i < iters; i++)
        FFN__EACH16(FMA);
    svfloat32_t s =
        svadd_f32_x(all, svadd_f32_x(all, svadd_f32_x(all, a0, a1), svadd_f32_x(all, a2, a3)),
                    svadd_f32_x(all, svadd_f32_x(all, a4, a5), svadd_f32_x(all, a6, a7)));
    s = svadd_f32_x(
        all, s,
        svadd_f32_x(all, svadd_f32_x(all, svadd_f32_x(all, a8, a9), svadd_f32_x(all, a10, a11)),
                    svadd_f32_x(all, svadd_f32_x(all, a12, a13), svadd_f32_x(all, a14, a15))));
    return (double)svaddv_f32(all, s);
}
#endif
