/* The per-token quantization and int32 rescale passes of the oneDNN int8 peer FFN (what a user
 * of oneDNN 2.6 writes around its u8 x s8 matmul, which has no per-token dynamic scales). As
 * peer_act.c: branch-free C over arrays that GCC vectorises at -O3, cloned for AVX-512, AVX2 and
 * baseline x86-64 (target_clones), so that these passes do not make the peer look slow. The codes
 * are include/ffnroof/quant.h's (s = max |x| / 127, round half away from zero of x / s), as
 * ffnroof's kernels compute them, stored + 128 for the unsigned operand. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "peers_internal.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(FFNROOF_NO_CLONES)
#define Q_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define Q_CLONES
#endif

/* max |x| as the bits of a non-negative float (ordered as unsigned integers, so the reduction
 * vectorises without -ffast-math); >= 0x7f800000 when the row holds an Inf or a NaN. */
Q_CLONES
static uint32_t row_max_bits(size_t n, const float *x)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        u &= 0x7fffffffu;
        m = u > m ? u : m;
    }
    return m;
}

Q_CLONES
static void row_codes(size_t n, const float *x, float s, uint8_t *q)
{
    for (size_t i = 0; i < n; i++) {
        const float v = x[i] / s;
        const float t = (float)(int32_t)v; /* |v| <= 127: exact truncation */
        const float r = t + (fabsf(v - t) >= 0.5f ? (v < 0.0f ? -1.0f : 1.0f) : 0.0f);
        const float c = r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r;
        q[i] = (uint8_t)((int32_t)c + 128);
    }
}

void ffn__peer_quant_rows(size_t T, size_t n, const float *x, size_t ldx, uint8_t *q, float *sx)
{
    for (size_t t = 0; t < T; t++) {
        const float *xr = x + t * ldx;
        const uint32_t mb = row_max_bits(n, xr);
        float m;
        memcpy(&m, &mb, 4);
        const float s = m / 127.0f;
        if (mb >= 0x7f800000u || !(s > 0.0f)) {
            /* no scale (an Inf or a NaN: NaN, so the row's y is NaN; an all-zero row: 0) */
            memset(q + t * n, 128, n);
            sx[t] = mb >= 0x7f800000u ? __builtin_nanf("") : 0.0f;
            continue;
        }
        row_codes(n, xr, s, q + t * n);
        sx[t] = s;
    }
}

Q_CLONES
static void rescale_row(size_t n, const int32_t *c, float s, const float *sw, const int32_t *cs,
                        const float *b, float *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(c[i] - 128 * cs[i]) * s * sw[i] + b[i];
}

void ffn__peer_rescale_rows(size_t T, size_t n, const int32_t *c, const float *sx, const float *sw,
                            const int32_t *cs, const float *b, float *out, size_t ldo)
{
    for (size_t t = 0; t < T; t++)
        rescale_row(n, c + t * n, sx[t], sw, cs, b, out + t * ldo);
}
