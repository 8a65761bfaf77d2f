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
