/* Peak int8 dot-product throughput with SVE SDOT z.s, z.b, z.b (compiled with
 * -march=armv8.2-a+sve; called only when HWCAP says SVE is there): each instruction multiplies
 * VL bytes of s8 x s8 pairs and adds groups of 4 into VL/4 int32 lanes, so the work per
 * instruction follows the vector length, which only the running CPU knows: ops per iteration
 * 16 instr x VL_bytes MAC x 2 = FFN__INT8_SVE_SDOT_FLOPS_PER_VL_BYTE (32) x svcntb(), which
 * peak.c multiplies in at run time. SVE vectors are sizeless (no arrays of them), hence 16
 * named accumulators; the accumulator is an input of every SDOT, so nothing is loop-invariant,
 * and the int32 lanes may wrap, harmless for a throughput test. */
#include "internal.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_SVE)
#include <arm_sve.h>

#define DOT(acc) (acc) = svdot_s32((acc), x, y)

double ffn__peak_int8_sve_sdot(uint64_t iters)
{
    const svint8_t x = svdup_n_s8(1), y = svdup_n_s8(1);
    /* distinct starting values: chains that start equal and are updated alike stay equal, and
     * GCC merges them into one (a latency-bound loop counted as 16 instructions) */
    svint32_t a0 = svdup_n_s32(0), a1 = svdup_n_s32(1), a2 = svdup_n_s32(2), a3 = svdup_n_s32(3),
              a4 = svdup_n_s32(4), a5 = svdup_n_s32(5), a6 = svdup_n_s32(6), a7 = svdup_n_s32(7),
              a8 = svdup_n_s32(8), a9 = svdup_n_s32(9), a10 = svdup_n_s32(10),
              a11 = svdup_n_s32(11), a12 = svdup_n_s32(12), a13 = svdup_n_s32(13),
              a14 = svdup_n_s32(14), a15 = svdup_n_s32(15);
    for (uint64_t i = 0; i < iters; i++)
        FFN__EACH16(DOT);
    const svbool_t all = svptrue_b32();
    svint32_t s =
        svadd_s32_x(all, svadd_s32_x(all, svadd_s32_x(all, a0, a1), svadd_s32_x(all, a2, a3)),
                    svadd_s32_x(all, svadd_s32_x(all, a4, a5), svadd_s32_x(all, a6, a7)));
    s = svadd_s32_x(
        all, s,
        svadd_s32_x(all, svadd_s32_x(all, svadd_s32_x(all, a8, a9), svadd_s32_x(all, a10, a11)),
                    svadd_s32_x(all, svadd_s32_x(all, a12, a13), svadd_s32_x(all, a14, a15))));
    /* the lanes wrap: svaddv of int32 lanes returns int64, so the sum cannot overflow */
    return (double)svaddv_s32(all, s);
}
#endif
