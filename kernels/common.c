/* Argument checks, the packed-weight header, the thread count and fp16 conversions shared by
 * every dense FFN kernel (see kern_internal.h). */
#include "kern_internal.h"

#include <math.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

int ffn__check_pack(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w,
                    const void *packed, size_t packed_bytes)
{
    if (ffn__check_shape(s) || !w || !packed) return FFN_EINVAL;
    if (!w->w_gate || !w->w_down) return FFN_EINVAL;
    if (ffn__gated(s->act) != (w->w_up != NULL)) return FFN_EINVAL;
    if (s->bias && (!w->b_gate || !w->b_down || (ffn__gated(s->act) && !w->b_up)))
        return FFN_EINVAL;
    if (packed_bytes < k->packed_bytes(s)) return FFN_ENOSPACE;
    return 0;
}

void ffn__write_hdr(void *packed, uint32_t kernel_id, const ffn_kshape *s)
{
    ffn__pack_hdr h;
    memset(&h, 0, sizeof h);
    h.magic = FFN__PACK_MAGIC;
    h.kernel_id = kernel_id;
    h.d = s->d;
    h.f = s->f;
    h.act = (uint32_t)s->act;
    h.bias = s->bias ? 1u : 0u;
    memcpy(packed, &h, sizeof h);
}

int ffn__check_forward(const ffn_kernel *k, uint32_t kernel_id, const ffn_kshape *s,
                       const void *packed, size_t T, const float *x, const float *y, const void *ws,
                       size_t ws_bytes, int threads)
{
    if (ffn__check_shape(s) || !packed) return FFN_EINVAL;
    ffn__pack_hdr h;
    memcpy(&h, packed, sizeof h);
    if (h.magic != FFN__PACK_MAGIC || h.kernel_id != kernel_id || h.d != s->d || h.f != s->f ||
        h.act != (uint32_t)s->act || h.bias != (s->bias ? 1u : 0u))
        return FFN_EINVAL;
    if (T > ((size_t)1 << 24)) return FFN_EINVAL;
    if (T == 0) return 0;
    if (!x || !y) return FFN_EINVAL;
    size_t need = k->workspace_bytes(s, T, threads);
    if (need && !ws) return FFN_EINVAL;
    if (ws_bytes < need) return FFN_ENOSPACE;
    return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx"))) static void zeroupper(void)
{
    _mm256_zeroupper();
}

void ffn__clean_upper(void)
{
    if (__builtin_cpu_supports("avx"))
        zeroupper(); /* a load and a test once libgcc knows the CPU */
}
#else
void ffn__clean_upper(void) {}
#endif

int ffn__threads(int threads)
{
    if (threads > 0) return threads > 1024 ? 1024 : threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > 1024 ? 1024 : (int)n);
}

uint16_t ffn__f32_to_f16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
    if (a < 0x38800000u) {
        /* Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even. */
        float av;
        memcpy(&av, &a, 4);
        float q = av * 16777216.0f; /* exact: scaling by a power of two */
        float r = nearbyintf(q);    /* default rounding mode: nearest even */
        return (uint16_t)(sign | (uint16_t)r);
    }
    /* Normal: rebias the exponent and round the 23-bit mantissa to 10 bits (nearest even). */
    uint32_t m = a + 0xc8000000u; /* exponent - 112 */
    m += 0xfffu + ((m >> 13) & 1u);
    return (uint16_t)(sign | (uint16_t)(m >> 13));
}

float ffn__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    uint32_t u = sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
    float v;
    memcpy(&v, &u, 4);
    return v;
}
