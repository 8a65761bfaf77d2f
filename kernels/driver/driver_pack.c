/* The driver's weight packing (driver.h, ukernel.h "Packed weights"): fp32 weights into KN
 * panels of the kernel's dtype (or VNNI pairs for the bf16 tile engines, or quantized panels),
 * biases rounded as the references round them, and the header forward checks. */
#include "drv_internal.h"

#include <string.h>

#include "../quant/quant_internal.h"
#include "qpack.h"

void ffn__drv_get_layout(const ffn__drv *dv, const ffn_kshape *s, ffn__drv_layout *l)
{
    const bool gated = ffn__gated(s->act);
    const size_t es = ffn__drv_wsize(dv->wdt);
    l->nr = dv->t ? 32 : ffn__drv_nr_of(ffn__drv_fu(dv));
    l->nh = gated ? l->nr / 2 : l->nr;
    l->np1 = (s->f + l->nh - 1) / l->nh;
    l->pd = (s->d + l->nr - 1) / l->nr;
    if (dv->t) {
        l->kp1 = ffn__round_up(s->d, 32);
        l->kp2 = ffn__round_up(s->f, 32);
        /* Row strides of x (bf16) and h: an odd number of cache lines, so the 16 rows of an AMX
         * tile load fall into 16 different L1 sets. With a stride of a multiple of 4 KiB (d or f
         * a multiple of 2048, e.g. d = 2048 and 4096 of the LLaMA shapes) all 16 rows hit one
         * 12-way set and every A tile load missed L1: T = 512, d = 2048, f = 5632, one thread,
         * ran at 900-920 GFLOP/s against 1030-1090 at d = 1024 or 2560 before this padding. */
        l->ldx = (l->kp1 / 32) % 2 ? l->kp1 : l->kp1 + 32;
        const size_t hc = ffn__round_up(l->np1 * l->nh, 32);
        l->ldh = (hc > l->kp2 ? hc : l->kp2);
        l->ldh = (l->ldh / 32) % 2 ? l->ldh : l->ldh + 32;
    } else {
        l->kp1 = s->d;
        l->kp2 = s->f;
        l->ldx = s->d;
        l->ldh = l->np1 * l->nh;
    }
    if (dv->q) {
        l->pb1 = ffn__qpanel_bytes(dv->qf, s->d, l->nr, s->group, s->zero_point);
        l->pb2 = ffn__qpanel_bytes(dv->qf, s->f, l->nr, s->group, s->zero_point);
        l->rowb = dv->qf == FFN_UKR_Q8 ? l->nr : l->nr / 2;
    } else {
        l->pb1 = l->kp1 * l->nr * es;
        l->pb2 = l->kp2 * l->nr * es;
        l->rowb = l->nr * es;
    }
    l->off_w1 = FFN__PACK_HDR;
    l->off_w2 = l->off_w1 + ffn__round_up(l->np1 * l->pb1, 64);
    l->off_b1 = l->off_w2 + ffn__round_up(l->pd * l->pb2, 64);
    l->off_b2 = l->off_b1 + (s->bias ? l->np1 * l->nr * 4 : 0);
    l->total = l->off_b2 + (s->bias ? l->pd * l->nr * 4 : 0);
}

int ffn__drv_check_shape(const ffn__drv *dv, const ffn_kshape *s)
{
    if (!dv->q) return ffn__check_shape(s);
    return ffn__qcheck_shape(s, dv->qf == FFN_UKR_Q8 ? FFN_DT_INT8 : FFN_DT_INT4,
                             dv->abf16 ? FFN_DT_BF16 : FFN_DT_FP32);
}

size_t ffn__drv_packed_bytes(const ffn__drv *dv, const ffn_kshape *s)
{
    if (dv && dv->i8) return ffn__drv_i8_packed_bytes(dv, s);
    if (!dv || ffn__drv_check_shape(dv, s)) return 0;
    ffn__drv_layout l;
    ffn__drv_get_layout(dv, s, &l);
    return l.total;
}

/* The value stored for weight v, as the weight dtype's bits (fp32: the float's bits). */
static void put_w(int wdt, unsigned char *dst, size_t i, float v)
{
    if (wdt == FFN_UKR_F32) {
        memcpy(dst + 4 * i, &v, 4);
        return;
    }
    const uint16_t h = wdt == FFN_UKR_BF16 ? ffn__f32_to_bf16(v) : ffn__f32_to_f16(v);
    memcpy(dst + 2 * i, &h, 2);
}

/* fp32 of v rounded to the weight dtype (the biases the references use). */
static float round_w(int wdt, float v)
{
    if (wdt == FFN_UKR_BF16) return ffn__bf16_to_f32(ffn__f32_to_bf16(v));
    if (wdt == FFN_UKR_F16) return ffn__f16_to_f32(ffn__f32_to_f16(v));
    return v;
}

/* The biases (when s has them) after the panels, fp32, in the panels' column order (gate and
 * up halves for a gated up panel), rounded to the weight dtype wdt, zero past f and d. */
static void pack_bias(const ffn__drv_layout *l, const ffn_kshape *s, const ffn_kweights *w,
                      unsigned char *base, int wdt)
{
    if (!s->bias) return;
    const bool gated = ffn__gated(s->act);
    const size_t nr = l->nr, nh = l->nh;
    float *b1 = (float *)(void *)(base + l->off_b1), *b2 = (float *)(void *)(base + l->off_b2);
    for (size_t j = 0; j < l->np1; j++)
        for (size_t c = 0; c < nr; c++) {
            const size_t col = gated ? j * nh + (c % nh) : j * nr + c;
            const float *src = gated && c >= nh ? w->b_up : w->b_gate;
            b1[j * nr + c] = col < s->f ? round_w(wdt, src[col]) : 0.0f;
        }
    for (size_t j = 0; j < l->pd * nr; j++)
        b2[j] = j < s->d ? round_w(wdt, w->b_down[j]) : 0.0f;
}

/* Index of element (k, c) in a panel of nr columns: KN (k-major) or VNNI pairs. */
static size_t pidx(bool vnni, size_t nr, size_t k, size_t c)
{
    return vnni ? (k / 2) * 2 * nr + c * 2 + (k & 1) : k * nr + c;
}

int ffn__drv_pack(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                  const ffn_kweights *w, void *packed, size_t n)
{
    if (dv->i8) return ffn__drv_i8_pack(dv, k, s, w, packed, n);
    if (ffn__drv_check_shape(dv, s)) return FFN_EINVAL;
    int rc = ffn__check_pack(k, s, w, packed, n);
    if (rc) return rc;
    ffn__drv_layout l;
    ffn__drv_get_layout(dv, s, &l);
    if (dv->q) {
        const bool gated = ffn__gated(s->act);
        unsigned char *base = packed;
        const unsigned q4l = dv->q->q4_layout;
        rc = ffn__qpack_float(dv->qf, q4l, s->d, s->f, w->w_gate, gated ? w->w_up : NULL, s->group,
                              s->zero_point, l.nr, base + l.off_w1, l.pb1, l.np1);
        if (!rc)
            rc = ffn__qpack_float(dv->qf, q4l, s->f, s->d, w->w_down, NULL, s->group, s->zero_point,
                                  l.nr, base + l.off_w2, l.pb2, l.pd);
        if (rc) return rc;                      /* a NaN or Inf weight has no scale */
        pack_bias(&l, s, w, base, FFN_UKR_F32); /* fp32 biases beside quantized weights */
        ffn__qwrite_hdr(packed, dv->id, s);
        return 0;
    }
    const size_t d = s->d, f = s->f, nr = l.nr, nh = l.nh, es = ffn__drv_wsize(dv->wdt);
    const bool gated = ffn__gated(s->act), vnni = dv->t != NULL;
    unsigned char *base = packed;
    unsigned char *w1 = base + l.off_w1, *w2 = base + l.off_w2;
    memset(w1, 0, l.off_b1 - l.off_w1); /* padding between and after the panels */
    /* PACK_ROWS rows at a time across every panel, not one panel down all its rows: a panel's
     * walk down K strides by the row length, which at real row lengths (f = 6144 floats) maps
     * the rows onto a few cache sets, so each line came from memory once per panel touching it
     * (d = 2048, f = 6144 for the portable kernel's 8-column panels: 7.7 ns a weight on the
     * SPR-class VM). PACK_ROWS rows of a panel are whole lines of output. */
    enum { PACK_ROWS = 16 };
    /* Row blocks write disjoint bytes: an OpenMP team takes them where the library has one
     * (the same bytes at any thread count). */
    const size_t nk1 = (l.kp1 + PACK_ROWS - 1) / PACK_ROWS,
                 nk2 = (l.kp2 + PACK_ROWS - 1) / PACK_ROWS;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (nk1 > 1)
#endif
    for (size_t b = 0; b < nk1; b++)
        for (size_t j = 0, k0 = b * PACK_ROWS; j < l.np1; j++) {
            unsigned char *pj = w1 + j * l.kp1 * nr * es;
            for (size_t kk = k0; kk < k0 + PACK_ROWS && kk < l.kp1; kk++)
                for (size_t h = 0; h < (gated ? 2u : 1u); h++) { /* gate, then up (gated) */
                    const float *src = h ? w->w_up : w->w_gate;
                    const size_t c0 = j * nh; /* nh = nr when not gated */
                    for (size_t c = 0; c < nh; c++) {
                        const size_t col = c0 + c;
                        const float v = col < f && kk < d ? src[kk * f + col] : 0.0f;
                        put_w(dv->wdt, pj, pidx(vnni, nr, kk, h * nh + c), v);
                    }
                }
        }
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (nk2 > 1)
#endif
    for (size_t b = 0; b < nk2; b++)
        for (size_t j = 0, k0 = b * PACK_ROWS; j < l.pd; j++) {
            unsigned char *pj = w2 + j * l.kp2 * nr * es;
            for (size_t kk = k0; kk < k0 + PACK_ROWS && kk < l.kp2; kk++)
                for (size_t c = 0; c < nr; c++) {
                    const size_t col = j * nr + c;
                    const float v = col < d && kk < f ? w->w_down[kk * d + col] : 0.0f;
                    put_w(dv->wdt, pj, pidx(vnni, nr, kk, c), v);
                }
        }
    pack_bias(&l, s, w, base, dv->wdt);
    ffn__write_hdr(packed, dv->id, s);
    return 0;
}
