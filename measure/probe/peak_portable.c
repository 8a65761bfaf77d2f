/* Portable fp32 peak: 32 independent chains of acc = acc * m + c in plain C, compiled with -O3 so
 * the compiler vectorises it for the baseline ISA of the build (SSE2 on x86-64, NEON on aarch64).
 * It is the roof of "what plain C gets" and the fallback on CPUs with no kernel of their own; it
 * uses separate mul and add (C17 does not contract them into FMA under -std=c17).
 * FLOPs per iteration: 32 x (mul + add) = FFN__FP32_PORTABLE_FLOPS_PER_ITER (64). */
#include "internal.h"

double ffn__peak_fp32_portable(uint64_t iters)
{
    float acc[32];
    for (int j = 0; j < 32; j++)
        acc[j] = 0.1f + 0.01f * (float)j;
    const float m = 0.99999f, c = 1e-5f;
    for (uint64_t i = 0; i < iters; i++)
        for (int j = 0; j < 32; j++)
            acc[j] = acc[j] * m + c;
    double s = 0;
    for (int j = 0; j < 32; j++)
        s += acc[j];
    return s;
}

/* Portable int8 peak: 32 int32 accumulators of int8 x int8 products in plain C at -O3, the roof of
 * an int8 kernel written in C for the baseline ISA (SSE2 on x86-64: widening to int16 and
 * PMULLW; NEON on aarch64). The int8 operands are loop-invariant, so an empty asm statement
 * that may rewrite them makes the compiler reload them each iteration (as a kernel loads its
 * operands) instead of hoisting the products out of the loop. int32 lanes wrap after ~2e9
 * iterations, harmless for a throughput test (unsigned arithmetic, so the wrap is defined). Ops per
 * iteration: 32 x (multiply + add) = FFN__INT8_PORTABLE_FLOPS_PER_ITER (64). */
double ffn__peak_int8_portable(uint64_t iters)
{
    int8_t x[32], y[32];
    uint32_t acc[32];
    for (int j = 0; j < 32; j++) {
        x[j] = (int8_t)(1 + j % 3);
        y[j] = (int8_t)(1 - j % 2);
        acc[j] = (uint32_t)j;
    }
    for (uint64_t i = 0; i < iters; i++) {
#if defined(__GNUC__)
        __asm__ volatile("" : "+m"(x), "+m"(y));
#endif
        for (int j = 0; j < 32; j++)
            acc[j] += (uint32_t)((int32_t)x[j] * (int32_t)y[j]);
    }
    double s = 0;
    for (int j = 0; j < 32; j++)
        s += (double)acc[j];
    return s;
}
