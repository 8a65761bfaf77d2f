/* Helpers shared by the quantized kernels (internal to ffn_kernels): the strided form of
 * ffn_qweight_quantize that the reference kernels call, the code arithmetic it and the packers
 * share, the shape rules of the quantized kernels, and the packed header that records the
 * format. */
#ifndef FFNROOF_KERNELS_QUANT_INTERNAL_H
#define FFNROOF_KERNELS_QUANT_INTERNAL_H

#include <math.h>

#include "../kern_internal.h"
#include "ffnroof/quant.h"

/* ffn_qweight_quantize on a [K][N] window of a larger matrix: w[k * ldw + n] -> q[k * ldq + n]
 * (scale and zero indexed as there, with N columns). Same codes, same errors. */
int ffn__qweight_quantize_ld(const ffn_qweight_fmt *fmt, size_t K, size_t N, const float *w,
                             size_t ldw, int8_t *q, size_t ldq, float *scale, uint8_t *zero);

/* roundf(r), half away from zero, for |r| < 2^22, as an integer: the truncation t is exact
 * there and so is r - t (Sterbenz), so one comparison each way decides, added as 0 or 1 rather
 * than branched on: the packers quantize random weights, whose fractions go either way at
 * random, and the branches of the form before (f >= 0.5 ? t + 1 : f <= -0.5 ? t - 1 : t, and a
 * float clamp) mispredicted about every other weight (d = 2048, f = 6144 in int8 packed at
 * 7.7 ns a weight on a family 6 model 207 VM, most of a quick calibration's kernel
 * preparation). */
static inline int32_t ffn__qround_i(float r)
{
    const int32_t t = (int32_t)r;
    const float f = r - (float)t;
    return t + (int32_t)(f >= 0.5f) - (int32_t)(f <= -0.5f);
}

/* roundf(r), half away from zero, without the library call a baseline x86-64 build makes of
 * roundf; larger magnitudes and NaN go to roundf. A zero result may carry the other sign than
 * roundf's: every caller converts it to an integer. */
static inline float ffn__qround(float r)
{
    if (!(fabsf(r) < 4194304.0f)) return roundf(r);
    return (float)ffn__qround_i(r);
}

/* quant_ref.c's arithmetic for one code, shared with the packers that quantize a block of panels
 * row by row (qpack.c): r clamped to [lo, hi]; v under the symmetric scale s (0 when s is not
 * positive); v under the asymmetric scale s > 0 and zero point z. */
static inline int8_t ffn__qclamp(float r, float lo, float hi)
{
    return (int8_t)(r < lo ? lo : r > hi ? hi : r);
}

/* The code of the quotient r in [lo, hi] (|lo|, |hi| < 2^21), clamped as an integer. A
 * quotient of 2^22 or more (or NaN: the callers reject NaN first) takes the nearer end. */
static inline int8_t ffn__qcode_of(float r, int32_t lo, int32_t hi)
{
    if (!(fabsf(r) < 4194304.0f)) return (int8_t)(r > 0.0f ? hi : lo);
    const int32_t q = ffn__qround_i(r);
    return (int8_t)(q < lo ? lo : q > hi ? hi : q);
}

static inline int8_t ffn__qcode_sym(float v, float s, int32_t lo, int32_t hi)
{
    return s > 0.0f ? ffn__qcode_of(v / s, lo, hi) : 0;
}

static inline int8_t ffn__qcode_asym(float v, float s, int8_t z)
{
    return ffn__qcode_of(v / s, -(int32_t)z, 15 - (int32_t)z) + z;
}

/* The asymmetric int4 scale of a group whose values span [lo, hi] (0 when they are all equal),
 * and its zero point under that scale s > 0. */
static inline float ffn__qscale_asym(float lo, float hi)
{
    return (float)(((double)hi - (double)lo) / 15.0);
}

static inline int8_t ffn__qzero_asym(float lo, float s)
{
    return ffn__qclamp(ffn__qround(-lo / s), 0.0f, 15.0f);
}

/* The largest K of a W8A8 kernel: 127 * 127 * 2^17 < 2^31, so int32 sums cannot overflow. */
#define FFN__I8_MAX_K ((size_t)1 << 17)

/* 0 when s suits a quantized kernel storing wdt (FFN_DT_INT8: no group, no zero point; INT4:
 * group 32, 64 or 128 dividing d and f) with activations adt (INT8: d, f <= 2^17); else
 * FFN_EINVAL. */
static inline int ffn__qcheck_shape(const ffn_kshape *s, ffn_dtype wdt, ffn_dtype adt)
{
    if (ffn__check_shape(s)) return FFN_EINVAL;
    if (wdt == FFN_DT_INT8) {
        if (s->group || s->zero_point) return FFN_EINVAL;
    } else if (wdt == FFN_DT_INT4) {
        if (s->group != 32 && s->group != 64 && s->group != 128) return FFN_EINVAL;
        if (s->d % s->group || s->f % s->group) return FFN_EINVAL;
    } else {
        return FFN_EINVAL;
    }
    if (adt == FFN_DT_INT8 && (s->d > FFN__I8_MAX_K || s->f > FFN__I8_MAX_K)) return FFN_EINVAL;
    return 0;
}

/* The weight format a quantized kernel applies to each matrix: int8 per output channel, or
 * int4 groups of s->group along K. */
static inline ffn_qweight_fmt ffn__qfmt(const ffn_kshape *s, ffn_dtype wdt)
{
    if (wdt == FFN_DT_INT8) return (ffn_qweight_fmt){.gran = FFN_QG_CHANNEL, .bits = 8};
    return (ffn_qweight_fmt){
        .gran = FFN_QG_GROUP, .bits = 4, .group = s->group, .zero_point = s->zero_point};
}

/* v rounded to bf16 and back (round to nearest even; NaN stays NaN). */
static inline float ffn__bf16_round(float v)
{
    return ffn__bf16_to_f32(ffn__f32_to_bf16(v));
}

/* The packed header of a quantized kernel: the dense header plus the group and zero point. */
static inline void ffn__qwrite_hdr(void *packed, uint32_t id, const ffn_kshape *s)
{
    ffn__write_hdr(packed, id, s);
    const uint32_t g[2] = {s->group, s->zero_point ? 1u : 0u};
    memcpy((unsigned char *)packed + sizeof(ffn__pack_hdr), g, sizeof g);
}

/* ffn__check_forward, and the packed format matches s's group and zero point. */
static inline int ffn__qcheck_forward(const ffn_kernel *k, uint32_t id, const ffn_kshape *s,
                                      const void *packed, size_t T, const float *x, const float *y,
                                      const void *ws, size_t ws_bytes, int threads)
{
    if (ffn__qcheck_shape(s, k->wdtype, k->adtype)) return FFN_EINVAL;
    const int rc = ffn__check_forward(k, id, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc) return rc;
    uint32_t g[2];
    memcpy(g, (const unsigned char *)packed + sizeof(ffn__pack_hdr), sizeof g);
    return g[0] == s->group && g[1] == (s->zero_point ? 1u : 0u) ? 0 : FFN_EINVAL;
}

/* Portable per-token quantization of one row (ffn_ukernels_i8.quant's contract for one row,
 * codes + offset): the scalar path of every table and the reference kernel's. */
static inline void ffn__qact_row(size_t n, const float *src, uint8_t *q, float *scale,
                                 unsigned offset)
{
    float m = 0.0f;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
        const float a = fabsf(src[i]);
        finite = finite && a <= 3.40282347e38f; /* false for NaN too */
        m = a > m ? a : m;
    }
    const float s = finite ? m / 127.0f : __builtin_nanf("");
    for (size_t i = 0; i < n; i++) {
        float r = 0.0f;
        if (finite && s > 0.0f) {
            r = ffn__qround(src[i] / s);
            r = r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r;
        }
        q[i] = (uint8_t)((int)r + (int)offset);
    }
    *scale = s;
}

#endif
