/* Dense FFN forward on AArch64 Advanced SIMD (NEON), fp32 or fp16 weights, fp32 accumulation:
 * y = act(x W_gate + b_gate) [* (x W_up + b_up)] W_down + b_down (see include/ffnroof/kernels.h).
 *
 * Structure (BLIS-like, kernels/arm_neon/ffn_neon.h has the public descriptors):
 *  - pack: every weight matrix is cut into panels of NR = 12 output columns, each panel stored
 *    k-major ([K][12], zero-padded past the last column) so that the kernels stream it
 *    contiguously; fp16 weights are rounded once here (FCVT, round to nearest even). Biases are
 *    kept as fp32 (holding fp16-rounded values for fp16 weights, as the reference rounds them)
 *    and padded to whole panels.
 *  - prefill (T > DEC_T): x is packed into MR = 8 row panels in the workspace; an 8x12
 *    register-blocked microkernel (24 accumulators, FMLA by element as in BLIS's armv8a sgemm
 *    kernel) runs over KC-deep slices of K so that the B slice (12 x KC, gate and up) stays in L1
 *    while the A panels stream from L2. The gate/up epilogue (bias, activation, gate*up) runs on
 *    the 8x12 tile while it is still in L1 and writes the intermediate h straight into the packed
 *    A-panel layout the down projection reads, so h is written once and read once and never gets
 *    a separate packing pass. The down projection uses the same microkernel, accumulating into y.
 *  - decode (T <= DEC_T): no packing of x; a streaming GEMV kernel walks each weight panel once
 *    with T (1..4) rows of x and enough independent FMA chains to hide latency: this is the
 *    weight-bandwidth-bound regime, so the goal is to touch each weight byte once, in order.
 *  - threads: OpenMP when compiled with it (else one thread). Work is split by output panels
 *    (f panels for gate/up, d panels for down); each output element is reduced in the same order
 *    whatever the split, so results are bit-identical for any thread count.
 *  - the activation epilogue is vectorised (exp by Cody-Waite range reduction and the Cephes
 *    expf polynomial) for silu and gelu_tanh; gelu (erf form) calls libm erfcf per lane, which is
 *    accurate also where 1 + erf(x) cancels. NaN propagates through every activation; +-Inf
 *    follow the same formulas as IEEE arithmetic gives them (e.g. silu(-inf) = -inf/inf = NaN). */
#include "ffn_neon.h"
#include "kern_internal.h"

#include <arm_neon.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum {
    MR = 8,           /* microkernel rows (tokens) */
    NR = 12,          /* microkernel / panel columns */
    KC = 256,         /* K slice: B slice 12 x 256 fp32 = 12 KiB (24 KiB gate+up) fits L1 */
    DEC_T = 4,        /* T <= DEC_T: decode (GEMV) path */
    WS_ALIGN = 64,    /* cache-line alignment of workspace and packed regions */
    MAX_THREADS = 256 /* bound on per-thread scratch */
};

#define AI static inline __attribute__((always_inline))

/* ---------------------------------------------------------------------------------------------
 * Packed layout and its header */

/* kernel_id of the shared packed header (kern_internal.h): "NF32" and "NF16". */
enum { ID_F32 = 0x4e463332u, ID_F16 = 0x4e463136u };

typedef struct layout {
    size_t npf, npd; /* panels over f (gate/up outputs) and over d (down outputs) */
    size_t esz;      /* bytes per weight element: 4 or 2 */
    bool gated;
    size_t off_bg, off_bu, off_bd, off_wg, off_wu, off_wd, total;
} layout;

static bool mul_sz(size_t a, size_t b, size_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static bool add_sz(size_t a, size_t b, size_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

/* Append a region of n bytes rounded up to WS_ALIGN at *off; false on overflow. */
static bool region(size_t *off, size_t n, size_t *start)
{
    size_t r;
    if (!add_sz(n, WS_ALIGN - 1, &r)) return false;
    r -= r % WS_ALIGN;
    *start = *off;
    return add_sz(*off, r, off);
}

/* 0, FFN_EINVAL (bad shape) or FFN_EOVERFLOW (sizes do not fit size_t). */
static int layout_of(const ffn_kshape *s, size_t esz, layout *L)
{
    if (ffn__check_shape(s)) return FFN_EINVAL;
    memset(L, 0, sizeof *L);
    L->npf = s->f / NR + (s->f % NR != 0);
    L->npd = s->d / NR + (s->d % NR != 0);
    L->esz = esz;
    L->gated = ffn__gated(s->act);
    size_t fpad, dpad, wgb, wdb, off = FFN__PACK_HDR;
    if (!mul_sz(L->npf, NR * sizeof(float), &fpad) || !mul_sz(L->npd, NR * sizeof(float), &dpad))
        return FFN_EOVERFLOW;
    if (!mul_sz(L->npf * NR, s->d, &wgb) || !mul_sz(wgb, esz, &wgb)) return FFN_EOVERFLOW;
    if (!mul_sz(L->npd * NR, s->f, &wdb) || !mul_sz(wdb, esz, &wdb)) return FFN_EOVERFLOW;
    bool ok = region(&off, fpad, &L->off_bg) && region(&off, L->gated ? fpad : 0, &L->off_bu) &&
              region(&off, dpad, &L->off_bd) && region(&off, wgb, &L->off_wg) &&
              region(&off, L->gated ? wgb : 0, &L->off_wu) && region(&off, wdb, &L->off_wd);
    if (!ok) return FFN_EOVERFLOW;
    L->total = off;
    return 0;
}

static size_t esz_of(bool h)
{
    return h ? sizeof(float16_t) : sizeof(float);
}

static size_t packed_bytes_impl(const ffn_kshape *s, bool h)
{
    layout L;
    return layout_of(s, esz_of(h), &L) == 0 ? L.total : 0;
}

/* Biases stay fp32 in the blob but, for fp16 weights, hold fp16-rounded values: the whole layer
 * is then exactly the one the fp16 reference kernel computes. */
static void put_bias(unsigned char *dst, const float *b, size_t n, size_t npanels, bool h)
{
    for (size_t i = 0; i < npanels * NR; i++) {
        float v = (b && i < n) ? b[i] : 0.0f;
        if (h) v = (float)(float16_t)v;
        memcpy(dst + i * sizeof v, &v, sizeof v);
    }
}

/* w is [K][N] row-major; panels [N/NR][K][NR] of esz-byte elements. fp16: FCVT, round to
 * nearest even like the reference's conversion; |w| >= 65520 becomes +-Inf, as there. */
static void put_panels(unsigned char *dst, const float *w, size_t K, size_t N, size_t npanels,
                       bool h)
{
    const size_t esz = esz_of(h);
    for (size_t p = 0; p < npanels; p++)
        for (size_t k = 0; k < K; k++)
            for (size_t c = 0; c < NR; c++) {
                const size_t col = p * NR + c;
                const float v = col < N ? w[k * N + col] : 0.0f;
                unsigned char *o = dst + ((p * K + k) * NR + c) * esz;
                if (h) {
                    const float16_t hv = (float16_t)v;
                    memcpy(o, &hv, sizeof hv);
                } else {
                    memcpy(o, &v, sizeof v);
                }
            }
}

static int pack_impl(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w, void *packed,
                     size_t bytes, bool h)
{
    layout L;
    int rc = ffn__check_pack(k, s, w, packed, bytes);
    if (!rc) rc = layout_of(s, esz_of(h), &L);
    if (rc) return rc;
    if ((uintptr_t)packed % sizeof(float)) return FFN_EINVAL;

    unsigned char *pk = packed;
    memset(pk, 0, FFN__PACK_HDR); /* not a valid blob until fully packed */
    put_bias(pk + L.off_bg, s->bias ? w->b_gate : NULL, s->f, L.npf, h);
    if (L.gated) put_bias(pk + L.off_bu, s->bias ? w->b_up : NULL, s->f, L.npf, h);
    put_bias(pk + L.off_bd, s->bias ? w->b_down : NULL, s->d, L.npd, h);
    put_panels(pk + L.off_wg, w->w_gate, s->d, s->f, L.npf, h);
    if (L.gated) put_panels(pk + L.off_wu, w->w_up, s->d, s->f, L.npf, h);
    put_panels(pk + L.off_wd, w->w_down, s->f, s->d, L.npd, h);
    ffn__write_hdr(packed, h ? ID_F16 : ID_F32, s);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Threads and workspace */

/* Threads a call will use: the request (all cores when <= 0), capped by the panels there are to
 * share out. The same function sizes the workspace and runs forward, so they always agree. */
static int threads_for(const layout *L, int threads)
{
#ifdef _OPENMP
    size_t n = (size_t)ffn__threads(threads);
    const size_t panels = L->npf > L->npd ? L->npf : L->npd;
    if (n > MAX_THREADS) n = MAX_THREADS;
    if (n > panels) n = panels;
    return n < 1 ? 1 : (int)n;
#else
    (void)L;
    (void)threads;
    return 1;
#endif
}

typedef struct ws_layout {
    size_t xp, hp, scr, scr_per_thread, total; /* byte offsets from the aligned base */
} ws_layout;

/* Workspace: decode keeps h as T rows of f floats; prefill keeps x and h as MR-row panels plus,
 * per thread, the gate (and up) accumulators of one column panel for all row panels. */
static int ws_layout_of(const ffn_kshape *s, const layout *L, size_t T, int nth, ws_layout *W)
{
    memset(W, 0, sizeof *W);
    if (T == 0) return 0;
    size_t off = 0, n;
    if (T <= DEC_T) {
        if (!mul_sz(T * sizeof(float), s->f, &n) || !region(&off, n, &W->hp)) return FFN_EOVERFLOW;
    } else {
        const size_t mp = T / MR + (T % MR != 0);
        size_t rows;
        if (!mul_sz(mp, MR * sizeof(float), &rows)) return FFN_EOVERFLOW;
        if (!mul_sz(rows, s->d, &n) || !region(&off, n, &W->xp)) return FFN_EOVERFLOW;
        if (!mul_sz(rows, s->f, &n) || !region(&off, n, &W->hp)) return FFN_EOVERFLOW;
        size_t per;
        if (!mul_sz(rows, NR * (L->gated ? 2u : 1u), &per) || !region(&off, per, &n))
            return FFN_EOVERFLOW;
        W->scr = n;
        W->scr_per_thread = off - n;
        if (!mul_sz(W->scr_per_thread, (size_t)nth, &n) || !add_sz(W->scr, n, &off))
            return FFN_EOVERFLOW;
    }
    if (!add_sz(off, WS_ALIGN - 1, &W->total)) return FFN_EOVERFLOW; /* room to align ws */
    return 0;
}

static size_t workspace_bytes_impl(const ffn_kshape *s, size_t T, int threads)
{
    layout L;
    ws_layout W;
    if (layout_of(s, sizeof(float), &L)) return 0;
    if (ws_layout_of(s, &L, T, threads_for(&L, threads), &W)) return 0;
    return W.total;
}

/* ---------------------------------------------------------------------------------------------
 * Activations on 4 lanes */

/* e^x, about 1 ulp: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), the Cephes expf
 * minimax polynomial for e^r, and 2^n applied as two factors so that n down to -150 (denormal
 * results) and up to 128 (overflow to +inf) need no special case. FMIN/FMAX keep NaN. */
AI float32x4_t vexp(float32x4_t x)
{
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.0f)), vdupq_n_f32(89.0f));
    const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    const int32x4_t ni = vcvtq_s32_f32(n); /* NaN lanes give 0: p is already NaN there */
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

/* x / (1 + e^-x): the quotient form stays accurate for large |x|; -inf gives -inf/inf = NaN. */
AI float32x4_t vsilu(float32x4_t x)
{
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), vexp(vnegq_f32(x))));
}

/* 0.5 x (1 + tanh(z)) = x / (1 + e^(-2z)), z = sqrt(2/pi) (x + 0.044715 x^3): the sigmoid form
 * avoids the cancellation of 1 + tanh(z) for negative z. */
AI float32x4_t vgelu_tanh(float32x4_t x)
{
    const float32x4_t x3 = vmulq_f32(vmulq_f32(x, x), x);
    const float32x4_t z = vmulq_n_f32(vfmaq_n_f32(x, x3, 0.044715f), 0.7978845608028654f);
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), vexp(vmulq_n_f32(z, -2.0f))));
}

/* 0.5 x erfc(-x / sqrt 2) = 0.5 x (1 + erf(x / sqrt 2)), exact-form GELU, per lane via libm. */
static float32x4_t vgelu_erf(float32x4_t x)
{
    float t[4];
    vst1q_f32(t, x);
    for (int i = 0; i < 4; i++)
        t[i] = 0.5f * t[i] * erfcf(-t[i] * 0.70710678118654752f);
    return vld1q_f32(t);
}

/* The gate's activation: the gated kinds use the plain one on the gate (swiglu: silu,
 * geglu: gelu (erf form), reglu: relu). */
static ffn_act base_act(ffn_act a)
{
    switch (a) {
    case FFN_ACT_SWIGLU:
        return FFN_ACT_SILU;
    case FFN_ACT_GEGLU:
        return FFN_ACT_GELU;
    case FFN_ACT_REGLU:
        return FFN_ACT_RELU;
    default:
        return a;
    }
}

/* In place on n floats (n a multiple of 4): g = act(g) [* u]. */
static void epilogue(ffn_act a, float *g, const float *u, size_t n)
{
    const ffn_act b = base_act(a);
    for (size_t i = 0; i < n; i += 4) {
        float32x4_t v = vld1q_f32(g + i);
        switch (b) {
        case FFN_ACT_RELU:
            v = vmaxq_f32(v, vdupq_n_f32(0.0f)); /* FMAX: relu(NaN) = NaN */
            break;
        case FFN_ACT_GELU:
            v = vgelu_erf(v);
            break;
        case FFN_ACT_GELU_TANH:
            v = vgelu_tanh(v);
            break;
        default:
            v = vsilu(v);
            break;
        }
        if (u) v = vmulq_f32(v, vld1q_f32(u + i));
        vst1q_f32(g + i, v);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Microkernels */

/* Row k of a weight panel (12 elements) as three fp32 vectors. */
AI void load_b(const void *b, size_t k, const bool h, float32x4_t *b0, float32x4_t *b1,
               float32x4_t *b2)
{
    if (h) {
        const float16_t *p = (const float16_t *)b + k * NR;
        const float16x8_t v = vld1q_f16(p);
        *b0 = vcvt_f32_f16(vget_low_f16(v));
        *b1 = vcvt_high_f32_f16(v);
        *b2 = vcvt_f32_f16(vld1_f16(p + 8));
    } else {
        const float *p = (const float *)b + k * NR;
        *b0 = vld1q_f32(p);
        *b1 = vld1q_f32(p + 4);
        *b2 = vld1q_f32(p + 8);
    }
}

#define UK_ROW(r, av, l)                                                                           \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, l);                                                 \
    c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, l);                                                 \
    c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, l);
#define UK_LOAD(r)                                                                                 \
    float32x4_t c##r##0 = acc ? vld1q_f32(c + r * ldc) : z;                                        \
    float32x4_t c##r##1 = acc ? vld1q_f32(c + r * ldc + 4) : z;                                    \
    float32x4_t c##r##2 = acc ? vld1q_f32(c + r * ldc + 8) : z;
#define UK_BIAS(r)                                                                                 \
    c##r##0 = vaddq_f32(c##r##0, bb0);                                                             \
    c##r##1 = vaddq_f32(c##r##1, bb1);                                                             \
    c##r##2 = vaddq_f32(c##r##2, bb2);
#define UK_STORE(r)                                                                                \
    vst1q_f32(c + r * ldc, c##r##0);                                                               \
    vst1q_f32(c + r * ldc + 4, c##r##1);                                                           \
    vst1q_f32(c + r * ldc + 8, c##r##2);

/* C[8][12] (row stride ldc) = (acc ? C : 0) + A B [+ bias], A a packed [kc][8] panel slice,
 * B a [kc][12] weight panel slice. 24 accumulators + 2 A + 3 B registers of the 32. */
AI void ukernel_impl(size_t kc, const float *a, const void *b, float *c, size_t ldc, bool acc,
                     const float *bias, const bool h)
{
    const float32x4_t z = vdupq_n_f32(0.0f);
    UK_LOAD(0)
    UK_LOAD(1)
    UK_LOAD(2) UK_LOAD(3) UK_LOAD(4) UK_LOAD(5) UK_LOAD(6)
        UK_LOAD(7) for (size_t k = 0; k < kc; k++)
    {
        const float32x4_t a0 = vld1q_f32(a + k * MR);
        const float32x4_t a1 = vld1q_f32(a + k * MR + 4);
        float32x4_t b0, b1, b2;
        load_b(b, k, h, &b0, &b1, &b2);
        UK_ROW(0, a0, 0)
        UK_ROW(1, a0, 1)
        UK_ROW(2, a0, 2) UK_ROW(3, a0, 3) UK_ROW(4, a1, 0) UK_ROW(5, a1, 1) UK_ROW(6, a1, 2)
            UK_ROW(7, a1, 3)
    }
    if (bias) {
        const float32x4_t bb0 = vld1q_f32(bias), bb1 = vld1q_f32(bias + 4),
                          bb2 = vld1q_f32(bias + 8);
        UK_BIAS(0) UK_BIAS(1) UK_BIAS(2) UK_BIAS(3) UK_BIAS(4) UK_BIAS(5) UK_BIAS(6) UK_BIAS(7)
    }
    UK_STORE(0) UK_STORE(1) UK_STORE(2) UK_STORE(3) UK_STORE(4) UK_STORE(5) UK_STORE(6) UK_STORE(7)
}

static void ukernel_f32(size_t kc, const float *a, const void *b, float *c, size_t ldc, bool acc,
                        const float *bias)
{
    ukernel_impl(kc, a, b, c, ldc, acc, bias, false);
}

static void ukernel_f16(size_t kc, const float *a, const void *b, float *c, size_t ldc, bool acc,
                        const float *bias)
{
    ukernel_impl(kc, a, b, c, ldc, acc, bias, true);
}

/* GEMV step for panel row k + l with the lane-l elements of the M row vectors av[]. */
#define GV_STEP(l, s)                                                                              \
    {                                                                                              \
        float32x4_t b0, b1, b2;                                                                    \
        load_b(b, k + l, h, &b0, &b1, &b2);                                                        \
        _Pragma("GCC unroll 4") for (size_t r = 0; r < M; r++)                                     \
        {                                                                                          \
            s[r][0] = vfmaq_laneq_f32(s[r][0], b0, av[r], l);                                      \
            s[r][1] = vfmaq_laneq_f32(s[r][1], b1, av[r], l);                                      \
            s[r][2] = vfmaq_laneq_f32(s[r][2], b2, av[r], l);                                      \
        }                                                                                          \
    }

/* out[M][12] = a[M][K] (row stride lda) times the [K][12] panel b, + bias. Streams the panel
 * once. M >= 2 has 3M >= 6 independent FMA chains; M = 1 alternates two accumulator sets (even
 * and odd k) to get 6 as well. A second set for M >= 2 would not fit the 32 registers next to
 * the 12 panel rows the 4-deep k unroll keeps in flight. */
AI void gemv_impl(const size_t M, size_t K, const float *a, size_t lda, const void *b,
                  const float *bias, float *out, const bool h)
{
    float32x4_t s0[DEC_T][3], s1[DEC_T][3], av[DEC_T];
    _Pragma("GCC unroll 4") for (size_t r = 0; r < M; r++) for (int j = 0; j < 3; j++)
    {
        s0[r][j] = vdupq_n_f32(0.0f);
        s1[r][j] = vdupq_n_f32(0.0f);
    }
    size_t k = 0;
    for (; k + 4 <= K; k += 4) {
        _Pragma("GCC unroll 4") for (size_t r = 0; r < M; r++) av[r] = vld1q_f32(a + r * lda + k);
        if (M == 1) {
            GV_STEP(0, s0) GV_STEP(1, s1) GV_STEP(2, s0) GV_STEP(3, s1)
        } else {
            GV_STEP(0, s0) GV_STEP(1, s0) GV_STEP(2, s0) GV_STEP(3, s0)
        }
    }
    for (; k < K; k++) {
        float32x4_t b0, b1, b2;
        load_b(b, k, h, &b0, &b1, &b2);
        _Pragma("GCC unroll 4") for (size_t r = 0; r < M; r++)
        {
            const float ar = a[r * lda + k];
            s0[r][0] = vfmaq_n_f32(s0[r][0], b0, ar);
            s0[r][1] = vfmaq_n_f32(s0[r][1], b1, ar);
            s0[r][2] = vfmaq_n_f32(s0[r][2], b2, ar);
        }
    }
    _Pragma("GCC unroll 4") for (size_t r = 0; r < M; r++) for (int j = 0; j < 3; j++)
    {
        const float32x4_t sum = M == 1 ? vaddq_f32(s0[r][j], s1[r][j]) : s0[r][j];
        vst1q_f32(out + r * NR + 4 * j, vaddq_f32(sum, vld1q_f32(bias + 4 * j)));
    }
}

#define GEMV_FN(m, hv, name)                                                                       \
    static void name(size_t K, const float *a, size_t lda, const void *b, const float *bias,       \
                     float *out)                                                                   \
    {                                                                                              \
        gemv_impl(m, K, a, lda, b, bias, out, hv);                                                 \
    }
GEMV_FN(1, false, gemv1_f32)
GEMV_FN(2, false, gemv2_f32)
GEMV_FN(3, false, gemv3_f32)
GEMV_FN(4, false, gemv4_f32)
GEMV_FN(1, true, gemv1_f16)
GEMV_FN(2, true, gemv2_f16)
GEMV_FN(3, true, gemv3_f16)
GEMV_FN(4, true, gemv4_f16)

typedef void (*gemv_fn)(size_t, const float *, size_t, const void *, const float *, float *);

static gemv_fn gemv_for(size_t M, bool h)
{
    static const gemv_fn tab[2][DEC_T] = {{gemv1_f32, gemv2_f32, gemv3_f32, gemv4_f32},
                                          {gemv1_f16, gemv2_f16, gemv3_f16, gemv4_f16}};
    return tab[h][M - 1];
}

/* ---------------------------------------------------------------------------------------------
 * Drivers */

typedef struct ctx {
    size_t T, d, f, npf, npd, esz;
    ffn_act act;
    bool gated, h;
    const float *x, *bg, *bu, *bd;
    const unsigned char *wg, *wu, *wd;
    float *y, *xp, *hp, *scr;
    size_t scr_floats; /* per thread */
} ctx;

static void share(size_t n, int tid, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)tid / (size_t)nt;
    *hi = n * (size_t)(tid + 1) / (size_t)nt;
}

static void barrier(void)
{
#ifdef _OPENMP
#pragma omp barrier
#endif
}

static void run_decode(const ctx *c, int tid, int nt)
{
    const gemv_fn gv = gemv_for(c->T, c->h);
    size_t lo, hi;
    float g[DEC_T * NR], u[DEC_T * NR];
    share(c->npf, tid, nt, &lo, &hi);
    for (size_t p = lo; p < hi; p++) {
        const size_t off = p * c->d * NR * c->esz;
        gv(c->d, c->x, c->d, c->wg + off, c->bg + p * NR, g);
        if (c->gated) gv(c->d, c->x, c->d, c->wu + off, c->bu + p * NR, u);
        epilogue(c->act, g, c->gated ? u : NULL, c->T * NR);
        const size_t n = c->f - p * NR < NR ? c->f - p * NR : NR;
        for (size_t r = 0; r < c->T; r++)
            memcpy(c->hp + r * c->f + p * NR, g + r * NR, n * sizeof(float));
    }
    barrier();
    share(c->npd, tid, nt, &lo, &hi);
    for (size_t q = lo; q < hi; q++) {
        gv(c->f, c->hp, c->f, c->wd + q * c->f * NR * c->esz, c->bd + q * NR, g);
        const size_t n = c->d - q * NR < NR ? c->d - q * NR : NR;
        for (size_t r = 0; r < c->T; r++)
            memcpy(c->y + r * c->d + q * NR, g + r * NR, n * sizeof(float));
    }
}

static void run_prefill(const ctx *c, int tid, int nt)
{
    void (*uk)(size_t, const float *, const void *, float *, size_t, bool, const float *) =
        c->h ? ukernel_f16 : ukernel_f32;
    const size_t nmp = c->T / MR + (c->T % MR != 0), d = c->d, f = c->f, T = c->T;
    size_t lo, hi;

    /* x -> [nmp][d][MR] panels, rows past T zero (their h and y rows are never stored). */
    share(nmp, tid, nt, &lo, &hi);
    for (size_t mp = lo; mp < hi; mp++)
        for (size_t r = 0; r < MR; r++) {
            const size_t row = mp * MR + r;
            float *dst = c->xp + mp * MR * d + r;
            if (row < T)
                for (size_t k = 0; k < d; k++)
                    dst[k * MR] = c->x[row * d + k];
            else
                for (size_t k = 0; k < d; k++)
                    dst[k * MR] = 0.0f;
        }
    barrier();

    /* h = act(x Wg + bg) [* (x Wu + bu)], written into [nmp][f][MR] panels. */
    float *G = c->scr + (size_t)tid * c->scr_floats;
    float *U = c->gated ? G + nmp * MR * NR : NULL;
    share(c->npf, tid, nt, &lo, &hi);
    for (size_t p = lo; p < hi; p++) {
        const size_t n = f - p * NR < NR ? f - p * NR : NR;
        for (size_t k0 = 0; k0 < d; k0 += KC) {
            const size_t kc = d - k0 < KC ? d - k0 : KC;
            const size_t boff = (p * d + k0) * NR * c->esz;
            const bool first = k0 == 0, last = k0 + kc == d;
            for (size_t mp = 0; mp < nmp; mp++) {
                const float *a = c->xp + (mp * d + k0) * MR;
                float *gt = G + mp * MR * NR, *ut = c->gated ? U + mp * MR * NR : NULL;
                uk(kc, a, c->wg + boff, gt, NR, !first, first ? c->bg + p * NR : NULL);
                if (c->gated)
                    uk(kc, a, c->wu + boff, ut, NR, !first, first ? c->bu + p * NR : NULL);
                if (!last) continue;
                epilogue(c->act, gt, ut, MR * NR);
                float *hp = c->hp + (mp * f + p * NR) * MR;
                for (size_t j = 0; j < n; j++)
                    for (size_t r = 0; r < MR; r++)
                        hp[j * MR + r] = gt[r * NR + j];
            }
        }
    }
    barrier();

    /* y = h Wd + bd, accumulated into y over KC slices of f. */
    share(c->npd, tid, nt, &lo, &hi);
    for (size_t q = lo; q < hi; q++) {
        const size_t n = d - q * NR < NR ? d - q * NR : NR;
        for (size_t k0 = 0; k0 < f; k0 += KC) {
            const size_t kc = f - k0 < KC ? f - k0 : KC;
            const unsigned char *b = c->wd + (q * f + k0) * NR * c->esz;
            const bool first = k0 == 0;
            const float *bias = first ? c->bd + q * NR : NULL;
            for (size_t mp = 0; mp < nmp; mp++) {
                const float *a = c->hp + (mp * f + k0) * MR;
                const size_t rows = T - mp * MR < MR ? T - mp * MR : MR;
                float *yt = c->y + mp * MR * d + q * NR;
                if (rows == MR && n == NR) {
                    uk(kc, a, b, yt, d, !first, bias);
                    continue;
                }
                float t[MR * NR];
                if (!first)
                    for (size_t r = 0; r < rows; r++)
                        memcpy(t + r * NR, yt + r * d, n * sizeof(float));
                uk(kc, a, b, t, NR, !first, bias);
                for (size_t r = 0; r < rows; r++)
                    memcpy(yt + r * d, t + r * NR, n * sizeof(float));
            }
        }
    }
}

static int forward_impl(const ffn_kernel *k, const ffn_kshape *s, const void *packed, size_t T,
                        const float *x, float *y, void *ws, size_t ws_bytes, int threads, bool h)
{
    int rc = ffn__check_forward(k, h ? ID_F16 : ID_F32, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    layout L;
    rc = layout_of(s, esz_of(h), &L);
    if (rc) return rc;
    if ((uintptr_t)packed % sizeof(float)) return FFN_EINVAL;
    const int nth = threads_for(&L, threads);
    ws_layout W;
    rc = ws_layout_of(s, &L, T, nth, &W);
    if (rc) return rc;
    if (!ws) return FFN_EINVAL;
    if (ws_bytes < W.total) return FFN_ENOSPACE;

    unsigned char *base = ffn__align64(ws);
    const unsigned char *pk = packed;
    const ctx c = {
        .T = T,
        .d = s->d,
        .f = s->f,
        .npf = L.npf,
        .npd = L.npd,
        .esz = L.esz,
        .act = s->act,
        .gated = L.gated,
        .h = h,
        .x = x,
        .bg = (const float *)(pk + L.off_bg),
        .bu = (const float *)(pk + L.off_bu),
        .bd = (const float *)(pk + L.off_bd),
        .wg = pk + L.off_wg,
        .wu = pk + L.off_wu,
        .wd = pk + L.off_wd,
        .y = y,
        .xp = (float *)(base + W.xp),
        .hp = (float *)(base + W.hp),
        .scr = (float *)(base + W.scr),
        .scr_floats = W.scr_per_thread / sizeof(float),
    };
    const bool decode = T <= DEC_T;
#ifdef _OPENMP
    if (nth > 1) {
#pragma omp parallel num_threads(nth)
        {
            const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
            if (decode)
                run_decode(&c, tid, nt);
            else
                run_prefill(&c, tid, nt);
        }
        return 0;
    }
#endif
    if (decode)
        run_decode(&c, 0, 1);
    else
        run_prefill(&c, 0, 1);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Descriptors */

static size_t packed_bytes_f32(const ffn_kshape *s)
{
    return packed_bytes_impl(s, false);
}
static size_t packed_bytes_f16(const ffn_kshape *s)
{
    return packed_bytes_impl(s, true);
}
static int pack_f32(const ffn_kshape *s, const ffn_kweights *w, void *packed, size_t bytes)
{
    return pack_impl(&ffn_kernel_f32_neon, s, w, packed, bytes, false);
}
static int pack_f16(const ffn_kshape *s, const ffn_kweights *w, void *packed, size_t bytes)
{
    return pack_impl(&ffn_kernel_f16_neon, s, w, packed, bytes, true);
}
static int forward_f32(const ffn_kshape *s, const void *packed, size_t T, const float *x, float *y,
                       void *ws, size_t ws_bytes, int threads)
{
    return forward_impl(&ffn_kernel_f32_neon, s, packed, T, x, y, ws, ws_bytes, threads, false);
}
static int forward_f16(const ffn_kshape *s, const void *packed, size_t T, const float *x, float *y,
                       void *ws, size_t ws_bytes, int threads)
{
    return forward_impl(&ffn_kernel_f16_neon, s, packed, T, x, y, ws, ws_bytes, threads, true);
}

const ffn_kernel ffn_kernel_f32_neon = {
    .name = "f32_ffn__neon_8x12",
    .isa = FFN_ISA_NEON,
    .wdtype = FFN_DT_FP32,
    .packed_bytes = packed_bytes_f32,
    .pack = pack_f32,
    .workspace_bytes = workspace_bytes_impl,
    .forward = forward_f32,
};

const ffn_kernel ffn_kernel_f16_neon = {
    .name = "f16w_ffn__neon_8x12",
    .isa = FFN_ISA_NEON,
    .wdtype = FFN_DT_FP16,
    .packed_bytes = packed_bytes_f16,
    .pack = pack_f16,
    .workspace_bytes = workspace_bytes_impl,
    .forward = forward_f16,
};
