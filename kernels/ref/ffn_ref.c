/* The scalar reference dense FFN kernels: the oracle every ISA kernel is tested against.
 *
 * Portable C compiled without ISA flags. Weights are stored in the kernel's dtype (fp32, bf16 or
 * fp16, rounded to nearest even when packed) in the unpacked row-major layout, so the bf16 and
 * fp16 references compute exactly the FFN of the rounded weights; all arithmetic (projections,
 * activation, down projection) is in double and y is rounded to fp32 once at the end. One
 * thread, whatever `threads` says: an oracle should be simple, not fast.
 *
 * Activations (double), which the vectorised kernels must match, including where they give
 * NaN: relu(g) = g < 0 ? 0 : g (NaN stays NaN); gelu(g) = g/2 (1 + erf(g/sqrt 2));
 * gelu_tanh(g) = g/2 (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))); silu(g) = g / (1 + exp(-g));
 * swiglu = silu(g) u, geglu = gelu(g) u, reglu = relu(g) u. */
#include "../kern_internal.h"

#include <math.h>

enum { ID_F32 = 0x52463332u, ID_BF16 = 0x52423136u, ID_F16 = 0x52463136u };

static size_t wsize(ffn_dtype dt)
{
    return dt == FFN_DT_FP32 ? 4u : 2u;
}

/* Element counts of the packed sections. */
static size_t n_weights(const ffn_kshape *s)
{
    return (ffn__gated(s->act) ? 2u : 1u) * s->d * s->f + s->f * s->d;
}
static size_t n_bias(const ffn_kshape *s)
{
    return s->bias ? (ffn__gated(s->act) ? 2u : 1u) * s->f + s->d : 0u;
}

static size_t packed_bytes_dt(const ffn_kshape *s, ffn_dtype dt)
{
    if (ffn__check_shape(s)) return 0;
    return FFN__PACK_HDR + (n_weights(s) + n_bias(s)) * wsize(dt);
}
static size_t packed_bytes_f32(const ffn_kshape *s)
{
    return packed_bytes_dt(s, FFN_DT_FP32);
}
static size_t packed_bytes_bf16(const ffn_kshape *s)
{
    return packed_bytes_dt(s, FFN_DT_BF16);
}
static size_t packed_bytes_f16(const ffn_kshape *s)
{
    return packed_bytes_dt(s, FFN_DT_FP16);
}

static void store(ffn_dtype dt, unsigned char *dst, const float *src, size_t n)
{
    if (dt == FFN_DT_FP32) {
        memcpy(dst, src, n * 4);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t h = dt == FFN_DT_BF16 ? ffn__f32_to_bf16(src[i]) : ffn__f32_to_f16(src[i]);
        memcpy(dst + 2 * i, &h, 2);
    }
}

/* src[0..n) in dtype dt, widened to double. */
static void load(ffn_dtype dt, double *dst, const unsigned char *src, size_t n)
{
    if (dt == FFN_DT_FP32) {
        for (size_t i = 0; i < n; i++) {
            float v;
            memcpy(&v, src + 4 * i, 4);
            dst[i] = v;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2);
        dst[i] = dt == FFN_DT_BF16 ? ffn__bf16_to_f32(h) : ffn__f16_to_f32(h);
    }
}

static int pack_dt(const ffn_kernel *k, uint32_t id, const ffn_kshape *s, const ffn_kweights *w,
                   void *packed, size_t packed_bytes)
{
    int rc = ffn__check_pack(k, s, w, packed, packed_bytes);
    if (rc) return rc;
    const ffn_dtype dt = k->wdtype;
    const size_t es = wsize(dt), df = s->d * s->f;
    unsigned char *p = (unsigned char *)packed + FFN__PACK_HDR;
    store(dt, p, w->w_gate, df);
    p += df * es;
    if (ffn__gated(s->act)) {
        store(dt, p, w->w_up, df);
        p += df * es;
    }
    store(dt, p, w->w_down, df);
    p += df * es;
    if (s->bias) {
        store(dt, p, w->b_gate, s->f);
        p += s->f * es;
        if (ffn__gated(s->act)) {
            store(dt, p, w->b_up, s->f);
            p += s->f * es;
        }
        store(dt, p, w->b_down, s->d);
    }
    ffn__write_hdr(packed, id, s);
    return 0;
}

static int pack_f32(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)
{
    return pack_dt(&ffn_kernel_f32_ref, ID_F32, s, w, p, n);
}
static int pack_bf16(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)
{
    return pack_dt(&ffn_kernel_bf16_ref, ID_BF16, s, w, p, n);
}
static int pack_f16(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)
{
    return pack_dt(&ffn_kernel_f16_ref, ID_F16, s, w, p, n);
}

static size_t workspace_bytes(const ffn_kshape *s, size_t T, int threads)
{
    (void)threads;
    if (ffn__check_shape(s) || T == 0) return 0;
    const size_t m = s->d > s->f ? s->d : s->f;
    return (3 * s->f + 2 * m) * sizeof(double) + 64;
}

double ffn_act_ref(ffn_act a, double g)
{
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return g < 0 ? 0.0 : g;
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return 0.5 * g * (1.0 + erf(g * 0.70710678118654752440));
    case FFN_ACT_GELU_TANH:
        return 0.5 * g * (1.0 + tanh(0.79788456080286535588 * (g + 0.044715 * g * g * g)));
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
    default:
        return g / (1.0 + exp(-g));
    }
}

static int forward_dt(const ffn_kernel *k, uint32_t id, const ffn_kshape *s, const void *packed,
                      size_t T, const float *x, float *y, void *ws, size_t ws_bytes, int threads)
{
    int rc = ffn__check_forward(k, id, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    const ffn_dtype dt = k->wdtype;
    const size_t d = s->d, f = s->f, es = wsize(dt), m = d > f ? d : f;
    const bool gated = ffn__gated(s->act);
    const unsigned char *wg = (const unsigned char *)packed + FFN__PACK_HDR;
    const unsigned char *wu = gated ? wg + d * f * es : NULL;
    const unsigned char *wd = wg + (gated ? 2 : 1) * d * f * es;
    const unsigned char *bg = wd + d * f * es;
    const unsigned char *bu = gated ? bg + f * es : NULL;
    const unsigned char *bd = bg + (gated ? 2 : 1) * f * es;

    double *g = ffn__align64(ws), *u = g + f, *h = u + f, *row = h + f, *acc = row + m;
    for (size_t t = 0; t < T; t++) {
        const float *xt = x + t * d;
        if (s->bias) {
            load(dt, g, bg, f);
            if (gated) load(dt, u, bu, f);
        } else {
            for (size_t j = 0; j < f; j++)
                g[j] = u[j] = 0.0;
        }
        for (size_t kk = 0; kk < d; kk++) {
            const double xv = xt[kk];
            load(dt, row, wg + kk * f * es, f);
            for (size_t j = 0; j < f; j++)
                g[j] += xv * row[j];
            if (gated) {
                load(dt, row, wu + kk * f * es, f);
                for (size_t j = 0; j < f; j++)
                    u[j] += xv * row[j];
            }
        }
        for (size_t j = 0; j < f; j++)
            h[j] = ffn_act_ref(s->act, g[j]) * (gated ? u[j] : 1.0);
        if (s->bias)
            load(dt, acc, bd, d);
        else
            for (size_t i = 0; i < d; i++)
                acc[i] = 0.0;
        for (size_t j = 0; j < f; j++) {
            load(dt, row, wd + j * d * es, d);
            const double hv = h[j];
            for (size_t i = 0; i < d; i++)
                acc[i] += hv * row[i];
        }
        for (size_t i = 0; i < d; i++)
            y[t * d + i] = (float)acc[i];
    }
    return 0;
}

static int forward_f32(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,
                       void *ws, size_t n, int threads)
{
    return forward_dt(&ffn_kernel_f32_ref, ID_F32, s, p, T, x, y, ws, n, threads);
}
static int forward_bf16(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,
                        void *ws, size_t n, int threads)
{
    return forward_dt(&ffn_kernel_bf16_ref, ID_BF16, s, p, T, x, y, ws, n, threads);
}
static int forward_f16(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,
                       void *ws, size_t n, int threads)
{
    return forward_dt(&ffn_kernel_f16_ref, ID_F16, s, p, T, x, y, ws, n, threads);
}

const ffn_kernel ffn_kernel_f32_ref = {
    "f32_ffn__ref", FFN_ISA_REF, FFN_DT_FP32, packed_bytes_f32, pack_f32, workspace_bytes,
    forward_f32,    0,           0,           FFN_DT_FP32,      NULL};
const ffn_kernel ffn_kernel_bf16_ref = {
    "bf16_ffn__ref", FFN_ISA_REF, FFN_DT_BF16, packed_bytes_bf16, pack_bf16, workspace_bytes,
    forward_bf16,    0,           0,           FFN_DT_FP32,       NULL};
const ffn_kernel ffn_kernel_f16_ref = {
    "f16_ffn__ref", FFN_ISA_REF, FFN_DT_FP16, packed_bytes_f16, pack_f16, workspace_bytes,
    forward_f16,    0,           0,           FFN_DT_FP32,      NULL};
