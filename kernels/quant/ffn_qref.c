/* The scalar reference quantized FFN kernels: the oracle every quantized ISA kernel is tested
 * against (never dispatched unless FFNROOF_ISA=ref).
 *
 * Weights are quantized by include/ffnroof/quant.h's functions (int8 per output channel, int4
 * groups of s->group along K, symmetric or with zero points) and stored unpacked, row-major
 * [K][N] codes beside their scales. The int4 group scales are stored as bf16 (round to nearest
 * even of quant.h's fp32 scale), as every int4 kernel stores them (kernels/driver/ukernel.h);
 * the int8 column scales stay fp32. A weight's value is w' = code * scale in fp32 (quant.h's
 * dequantization with the stored scale); biases stay fp32. All sums are in double, y is
 * rounded to fp32 once.
 *
 * Activations, by the kernel's adtype:
 *  - fp32: x and h as they are;
 *  - bf16: x rounded to bf16 before the gate/up products, h = bf16(fp32(h)) before the down
 *    product (what W8A16/W4A16 kernels with 16-bit activations multiply);
 *  - int8 (W8A8): x quantized per token (ffn_qact_quantize's codes), the gate/up sums are
 *    exact integer sums times s_x s_w, h = fp32(h) quantized per token again for the down
 *    product. A row of x (or of h) with a NaN or Inf has no scale: that row of y is NaN. */
#include <math.h>

#include "quant_internal.h"

enum {
    ID_W8A32 = 0x52513841u,
    ID_W8A16 = 0x52513842u,
    ID_W8A8 = 0x52513843u,
    ID_W4A32 = 0x52513441u,
    ID_W4A16 = 0x52513442u,
};

/* Byte offsets of one matrix's sections (codes, scales, zero points) from its start. */
typedef struct qmat {
    size_t K, N, scales, zeros, bytes;
} qmat;

static qmat qmat_of(const ffn_kshape *s, ffn_dtype wdt, size_t K, size_t N)
{
    qmat m = {.K = K, .N = N};
    m.scales = ffn__round_up(K * N, 64);
    const size_t ns = wdt == FFN_DT_INT8 ? N : K / s->group * N;
    const size_t sb = ffn__round_up(ns * (wdt == FFN_DT_INT8 ? 4u : 2u), 64);
    m.zeros = m.scales + sb;
    m.bytes = m.zeros + (wdt == FFN_DT_INT4 && s->zero_point ? ffn__round_up(ns, 64) : 0);
    return m;
}

typedef struct qlayout {
    qmat w1, w2; /* gate (and up: a second w1), down */
    size_t off_g, off_u, off_d, off_b, total;
} qlayout;

static void qlayout_of(const ffn_kshape *s, ffn_dtype wdt, qlayout *l)
{
    l->w1 = qmat_of(s, wdt, s->d, s->f);
    l->w2 = qmat_of(s, wdt, s->f, s->d);
    l->off_g = FFN__PACK_HDR;
    l->off_u = l->off_g + l->w1.bytes;
    l->off_d = l->off_u + (ffn__gated(s->act) ? l->w1.bytes : 0);
    l->off_b = l->off_d + l->w2.bytes;
    const size_t nb = s->bias ? (ffn__gated(s->act) ? 2 : 1) * s->f + s->d : 0;
    l->total = l->off_b + nb * 4;
}

static size_t packed_bytes(const ffn_kernel *k, const ffn_kshape *s)
{
    if (ffn__qcheck_shape(s, k->wdtype, k->adtype)) return 0;
    qlayout l;
    qlayout_of(s, k->wdtype, &l);
    return l.total;
}

/* Quantize one [K][N] matrix into its sections at dst. */
static int pack_mat(const ffn_kshape *s, ffn_dtype wdt, const qmat *m, const float *w,
                    unsigned char *dst)
{
    const ffn_qweight_fmt fmt = ffn__qfmt(s, wdt);
    float *sc = (float *)(void *)(dst + m->scales); /* fp32 first, narrowed below for int4 */
    float tmp[64];
    if (wdt == FFN_DT_INT8)
        return ffn_qweight_quantize(&fmt, m->K, m->N, w, (int8_t *)dst, sc, NULL);
    /* int4: the fp32 scales do not fit in the bf16 section; quantize in row bands of one
     * group, 64 columns at a time, through a small fp32 scale buffer. */
    uint16_t *sb = (uint16_t *)(void *)(dst + m->scales);
    uint8_t *zp = fmt.zero_point ? dst + m->zeros : NULL;
    const size_t G = fmt.group;
    for (size_t g = 0; g < m->K / G; g++)
        for (size_t n0 = 0; n0 < m->N; n0 += 64) {
            const size_t nn = m->N - n0 < 64 ? m->N - n0 : 64;
            const int rc = ffn__qweight_quantize_ld(&fmt, G, nn, w + g * G * m->N + n0, m->N,
                                                    (int8_t *)dst + g * G * m->N + n0, m->N, tmp,
                                                    zp ? zp + g * m->N + n0 : NULL);
            if (rc) return rc;
            for (size_t i = 0; i < nn; i++)
                sb[g * m->N + n0 + i] = ffn__f32_to_bf16(tmp[i]);
        }
    return 0;
}

static int pack_q(const ffn_kernel *k, uint32_t id, const ffn_kshape *s, const ffn_kweights *w,
                  void *packed, size_t n)
{
    if (ffn__qcheck_shape(s, k->wdtype, k->adtype)) return FFN_EINVAL;
    int rc = ffn__check_pack(k, s, w, packed, n);
    if (rc) return rc;
    qlayout l;
    qlayout_of(s, k->wdtype, &l);
    unsigned char *p = packed;
    memset(p + FFN__PACK_HDR, 0, l.off_b - FFN__PACK_HDR);
    rc = pack_mat(s, k->wdtype, &l.w1, w->w_gate, p + l.off_g);
    if (!rc && ffn__gated(s->act)) rc = pack_mat(s, k->wdtype, &l.w1, w->w_up, p + l.off_u);
    if (!rc) rc = pack_mat(s, k->wdtype, &l.w2, w->w_down, p + l.off_d);
    if (rc) return rc; /* a NaN or Inf weight */
    if (s->bias) {
        float *b = (float *)(void *)(p + l.off_b);
        memcpy(b, w->b_gate, s->f * 4);
        if (ffn__gated(s->act)) memcpy(b + s->f, w->b_up, s->f * 4);
        memcpy(b + (ffn__gated(s->act) ? 2 : 1) * s->f, w->b_down, s->d * 4);
    }
    ffn__qwrite_hdr(packed, id, s);
    return 0;
}

static size_t workspace_bytes(const ffn_kernel *k, const ffn_kshape *s, size_t T)
{
    if (ffn__qcheck_shape(s, k->wdtype, k->adtype) || T == 0) return 0;
    const size_t m = s->d > s->f ? s->d : s->f;
    /* g, u, h, acc, integer sums, a row of activations (double); h as fp32; codes */
    return 6 * m * sizeof(double) + m * 4 + m + 64;
}

/* The fp32 value of weight (kk, j) of matrix m. */
static float wval(const ffn_kshape *s, ffn_dtype wdt, const qmat *m, const unsigned char *base,
                  size_t kk, size_t j)
{
    const int8_t q = ((const int8_t *)base)[kk * m->N + j];
    if (wdt == FFN_DT_INT8) {
        float sc;
        memcpy(&sc, base + m->scales + 4 * j, 4);
        return (float)q * sc;
    }
    const size_t si = kk / s->group * m->N + j;
    uint16_t sb;
    memcpy(&sb, base + m->scales + 2 * si, 2);
    const int z = s->zero_point ? base[m->zeros + si] : 0;
    return (float)(q - z) * ffn__bf16_to_f32(sb);
}

/* out[j] (+)= sum_k a[k] * W[k][j], j < N, for one matrix: activations as doubles, or (int8)
 * the exact integer sums (exact in the double isum: |sum| < 2^31) times sa * s_w[j]. */
static void matvec(const ffn_kernel *k, const ffn_kshape *s, const qmat *m,
                   const unsigned char *base, const double *a, const uint8_t *qa, float sa,
                   double *isum, double *out)
{
    const size_t K = m->K, N = m->N;
    const int8_t *q = (const int8_t *)base;
    if (k->adtype == FFN_DT_INT8) {
        for (size_t j = 0; j < N; j++)
            isum[j] = 0.0;
        for (size_t kk = 0; kk < K; kk++) {
            const double av = (double)(int8_t)qa[kk];
            for (size_t j = 0; j < N; j++)
                isum[j] += av * (double)q[kk * N + j];
        }
        for (size_t j = 0; j < N; j++) {
            float sw;
            memcpy(&sw, base + m->scales + 4 * j, 4);
            out[j] += isum[j] * (double)sa * (double)sw;
        }
        return;
    }
    for (size_t kk = 0; kk < K; kk++) {
        const double av = a[kk];
        for (size_t j = 0; j < N; j++)
            out[j] += av * (double)wval(s, k->wdtype, m, base, kk, j);
    }
}

/* The activations one product multiplies: a[] (fp32 and bf16), or codes qa[] and scale *sa
 * (int8), from the fp32 row v of n values. */
static void prep(ffn_dtype adt, size_t n, const float *v, double *a, uint8_t *qa, float *sa)
{
    if (adt == FFN_DT_INT8) {
        ffn__qact_row(n, v, qa, sa, 0);
        return;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = adt == FFN_DT_BF16 ? (double)ffn__bf16_round(v[i]) : (double)v[i];
}

static int forward_q(const ffn_kernel *k, uint32_t id, const ffn_kshape *s, const void *packed,
                     size_t T, const float *x, float *y, void *ws, size_t ws_bytes, int threads)
{
    int rc = ffn__qcheck_forward(k, id, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    const size_t d = s->d, f = s->f, m = d > f ? d : f;
    const bool gated = ffn__gated(s->act);
    qlayout l;
    qlayout_of(s, k->wdtype, &l);
    const unsigned char *p = packed;
    const float *bg = s->bias ? (const float *)(const void *)(p + l.off_b) : NULL;
    const float *bu = bg && gated ? bg + f : NULL;
    const float *bd = bg ? bg + (gated ? 2 : 1) * f : NULL;
    double *g = ffn__align64(ws), *u = g + m, *h = u + m, *acc = h + m, *isum = acc + m;
    double *a = isum + m;
    float *hf = (float *)(a + m);
    uint8_t *qa = (uint8_t *)(hf + m);
    for (size_t t = 0; t < T; t++) {
        float sa = 0.0f;
        prep(k->adtype, d, x + t * d, a, qa, &sa);
        for (size_t j = 0; j < f; j++) {
            g[j] = bg ? bg[j] : 0.0;
            u[j] = bu ? bu[j] : 0.0;
        }
        matvec(k, s, &l.w1, p + l.off_g, a, qa, sa, isum, g);
        if (gated) matvec(k, s, &l.w1, p + l.off_u, a, qa, sa, isum, u);
        for (size_t j = 0; j < f; j++) {
            h[j] = ffn_act_ref(s->act, g[j]) * (gated ? u[j] : 1.0);
            hf[j] = (float)h[j];
        }
        if (k->adtype == FFN_DT_FP32)
            memcpy(a, h, f * sizeof *a); /* h stays double, as in ref/ffn_ref.c */
        else
            prep(k->adtype, f, hf, a, qa, &sa);
        for (size_t i = 0; i < d; i++)
            acc[i] = bd ? bd[i] : 0.0;
        matvec(k, s, &l.w2, p + l.off_d, a, qa, sa, isum, acc);
        for (size_t i = 0; i < d; i++)
            y[t * d + i] = (float)acc[i];
    }
    return 0;
}

/* One reference kernel per (weight format, activation format). */
#define QREF(var, kname, wdt, adt, id)                                                             \
    extern const ffn_kernel var;                                                                   \
    static size_t var##_pb(const ffn_kshape *s)                                                    \
    {                                                                                              \
        return packed_bytes(&(var), s);                                                            \
    }                                                                                              \
    static int var##_pack(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)           \
    {                                                                                              \
        return pack_q(&(var), (id), s, w, p, n);                                                   \
    }                                                                                              \
    static size_t var##_ws(const ffn_kshape *s, size_t T, int threads)                             \
    {                                                                                              \
        (void)threads;                                                                             \
        return workspace_bytes(&(var), s, T);                                                      \
    }                                                                                              \
    static int var##_fwd(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,   \
                         void *ws, size_t n, int threads)                                          \
    {                                                                                              \
        return forward_q(&(var), (id), s, p, T, x, y, ws, n, threads);                             \
    }                                                                                              \
    const ffn_kernel var = {.name = (kname),                                                       \
                            .isa = FFN_ISA_REF,                                                    \
                            .wdtype = (wdt),                                                       \
                            .packed_bytes = var##_pb,                                              \
                            .pack = var##_pack,                                                    \
                            .workspace_bytes = var##_ws,                                           \
                            .forward = var##_fwd,                                                  \
                            .adtype = (adt)}

QREF(ffn_kernel_w8a32_ref, "w8a32_ffn__ref", FFN_DT_INT8, FFN_DT_FP32, ID_W8A32);
QREF(ffn_kernel_w8a16_ref, "w8a16_ffn__ref", FFN_DT_INT8, FFN_DT_BF16, ID_W8A16);
QREF(ffn_kernel_w8a8_ref, "w8a8_ffn__ref", FFN_DT_INT8, FFN_DT_INT8, ID_W8A8);
QREF(ffn_kernel_w4a32_ref, "w4a32_ffn__ref", FFN_DT_INT4, FFN_DT_FP32, ID_W4A32);
QREF(ffn_kernel_w4a16_ref, "w4a16_ffn__ref", FFN_DT_INT4, FFN_DT_BF16, ID_W4A16);
