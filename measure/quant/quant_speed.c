/* The speed half of `ffnroof quant` (include/ffnroof/quant_eval.h): which kernel runs a format
 * on this CPU, and its best decode (T = 1) time on the layer's shape, with a check of the
 * kernel's own output against the double-precision reference on the evaluated tokens. */
#include "ffnroof/quant_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/measure.h"

const ffn_kernel *ffn_qspeed_kernel(const ffn_qeval_fmt *fmt)
{
    if (!fmt || (unsigned)fmt->kind >= FFN_QE_COUNT) return NULL;
    const ffn_dtype wdt = fmt->kind == FFN_QE_INT4_GROUP ? FFN_DT_INT4 : FFN_DT_INT8;
    const ffn_dtype adt =
        fmt->kind == FFN_QE_W8A8 || fmt->kind == FFN_QE_W8A8_SMOOTH ? FFN_DT_INT8 : FFN_DT_FP32;
    /* the kernel wing's dispatch, FFNROOF_ISA honoured */
    const ffn_kernel *k = NULL;
    return ffn_kernel_best_q(wdt, adt, &k, NULL) ? NULL : k;
}

static void *alloc64(size_t bytes)
{
    void *p = NULL;
    const size_t n = (bytes + 63) / 64 * 64;
    return posix_memalign(&p, 64, n ? n : 64) ? NULL : p;
}

int ffn_qspeed_time(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w,
                    const ffn_qspeed_opts *o, size_t T, const float *x, const double *y_ref,
                    double *time_s, double *check_rel_l2)
{
    if (!k || !s || !w || !o || o->reps == 0 || !time_s || (T && (!x || !y_ref))) return FFN_EINVAL;
    *time_s = NAN;
    if (check_rel_l2) *check_rel_l2 = NAN;
    const size_t pb = k->packed_bytes(s);
    if (pb == 0) return FFN_EUNSUPPORTED;
    const size_t rows = T > 1 ? T : 1;
    const size_t wsb = k->workspace_bytes(s, rows, o->threads);
    void *packed = alloc64(pb), *ws = alloc64(wsb);
    float *x1 = calloc(s->d, sizeof *x1), *y = malloc(rows * s->d * sizeof *y);
    int rc = packed && ws && x1 && y ? 0 : FFN_ENOMEM;
    if (!rc) {
        rc = k->pack(s, w, packed, pb);
        if (rc == FFN_EINVAL) rc = FFN_EUNSUPPORTED;
    }
    if (!rc) {
        /* the first token (or a fixed row) as the decode input */
        for (size_t i = 0; i < s->d; i++)
            x1[i] = T ? x[i] : (float)((double)(i % 7) - 3.0) / 4.0f;
        rc = k->forward(s, packed, 1, x1, y, ws, wsb, o->threads); /* warm-up */
    }
    double best = INFINITY;
    for (unsigned r = 0; !rc && r < o->reps; r++) {
        const double t0 = ffn_time_now_s();
        rc = k->forward(s, packed, 1, x1, y, ws, wsb, o->threads);
        const double dt = ffn_time_now_s() - t0;
        if (dt < best) best = dt;
    }
    if (!rc) *time_s = best;
    if (!rc && T && check_rel_l2) {
        rc = k->forward(s, packed, T, x, y, ws, wsb, o->threads);
        if (!rc) {
            double ee = 0, rr = 0;
            for (size_t i = 0; i < T * s->d; i++) {
                const double e = (double)y[i] - y_ref[i];
                ee += e * e;
                rr += y_ref[i] * y_ref[i];
            }
            *check_rel_l2 = rr > 0 ? sqrt(ee / rr) : sqrt(ee);
        }
    }
    free(packed);
    free(ws);
    free(x1);
    free(y);
    return rc;
}

int ffn_qspeed_report(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                      const double *y_ref, double alpha, ffn_qeval_report *r, ffn_diag *diag)
{
    ffn_isa isa;
    int rc;
    if ((rc = ffn_isa_selected(&isa, diag))) return rc;
    const ffn_kernel *k32;
    if ((rc = ffn_kernel_best(FFN_DT_FP32, &k32, diag))) return rc;
    snprintf(r->fp32_kernel, sizeof r->fp32_kernel, "%s", k32->name);
    rc = ffn_qspeed_time(k32, s, w, &r->speed_opts, T, x, y_ref, &r->fp32_time_s,
                         &r->fp32_check_rel_l2);
    if (rc)
        return ffn_diag_set(diag, rc, NULL, 0, 0, "the fp32 kernel %s failed: %s", k32->name,
                            ffn_strerror(rc));
    const size_t df = s->d * s->f;
    const bool gated = ffn_act_gated(s->act);
    float *sm = NULL; /* the smoothed layer, made once */
    float *sx = NULL, *sg = NULL, *su = NULL, *sd = NULL, *hd = NULL;
    bool foldable = false;
    for (size_t i = 0; i < r->n_rows && !rc; i++) {
        ffn_qeval_row *row = &r->rows[i];
        const ffn_kernel *k = ffn_qspeed_kernel(&row->fmt);
        if (!k) continue;
        ffn_kshape ks = *s;
        if (row->fmt.kind == FFN_QE_INT4_GROUP) {
            ks.group = row->fmt.group;
            ks.zero_point = row->fmt.zero_point;
        }
        ffn_kweights kw = *w;
        const float *kx = x;
        if (row->fmt.kind == FFN_QE_W8A8_SMOOTH) {
            if (!sm) {
                sm = malloc(((gated ? 3 : 2) * df + T * s->d + s->f) * sizeof *sm);
                if (!sm) {
                    rc = ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                sg = sm, sd = sm + df, su = gated ? sm + 2 * df : NULL;
                sx = sm + (gated ? 3 : 2) * df, hd = sx + T * s->d;
                if (ffn_qeval_smooth(s, w, T, x, alpha, r->speed_opts.threads, sx, sg, su, sd,
                                     hd)) {
                    rc = ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "cannot smooth the layer");
                    break;
                }
                foldable = true;
                for (size_t n = 0; n < s->f; n++)
                    if (hd[n] != 1.0f) foldable = false;
            }
            kw.w_gate = sg, kw.w_up = su, kw.w_down = sd;
            kx = sx;
        }
        double check = NAN;
        /* a kernel cannot divide h by m_h: time it, but check only what it computes */
        const bool check_ok = row->fmt.kind != FFN_QE_W8A8_SMOOTH || foldable;
        const int trc = ffn_qspeed_time(k, &ks, &kw, &r->speed_opts, check_ok ? T : 0, kx, y_ref,
                                        &row->speed.time_s, check_ok ? &check : NULL);
        if (trc == FFN_EUNSUPPORTED) continue; /* the kernel does not pack this shape */
        if (trc) {
            rc = ffn_diag_set(diag, trc, NULL, 0, 0, "kernel %s failed: %s", k->name,
                              ffn_strerror(trc));
            break;
        }
        row->speed.ran = true;
        snprintf(row->speed.kernel, sizeof row->speed.kernel, "%s", k->name);
        row->speed.check_rel_l2 = check;
    }
    free(sm);
    if (rc) return rc;
    /* The fp32 baseline once more at the end (drift of the machine over the run counts against
     * neither side), and rows that ran the same kernel on the same shape (int8-tensor and
     * int8-channel; w8a8 and w8a8-smooth: the time does not depend on the values) share the
     * best of all its calls, so that one kernel never shows two speeds. */
    double again;
    if (ffn_qspeed_time(k32, s, w, &r->speed_opts, 0, NULL, NULL, &again, NULL) == 0 &&
        again < r->fp32_time_s)
        r->fp32_time_s = again;
    for (size_t i = 0; i < r->n_rows; i++) {
        ffn_qeval_row *a = &r->rows[i];
        if (!a->speed.ran) continue;
        for (size_t j = 0; j < r->n_rows; j++) {
            const ffn_qeval_row *b = &r->rows[j];
            if (b->speed.ran && !strcmp(a->speed.kernel, b->speed.kernel) &&
                a->fmt.group == b->fmt.group && a->fmt.zero_point == b->fmt.zero_point &&
                b->speed.time_s < a->speed.time_s)
                a->speed.time_s = b->speed.time_s;
        }
    }
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].speed.ran)
            r->rows[i].speed.speedup = r->fp32_time_s / r->rows[i].speed.time_s;
    return rc;
}
