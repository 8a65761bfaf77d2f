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
    svfloat32_t a0 = svdup_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
                a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0,
                a15 = a0;
    for (uint64_t i = 0; i < iters; i++) {
        FMA(a0);
        FMA(a1);
        FMA(a2);
        FMA(a3);
        FMA(a4);
        FMA(a5);
        FMA(a6);
        FMA(a7);
        FMA(a8);
        FMA(a9);
        FMA(a10);
        FMA(a11);
        FMA(a12);
        FMA(a13);
        FMA(a14);
        FMA(a15);
    }
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
