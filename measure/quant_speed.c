/* The speed half of `ffnroof quant` (include/ffnroof/quant_eval.h): which kernel runs a format
 * on this CPU, and its best decode (T = 1) time on the layer's shape, with a check of the
 * kernel's own output against the double-precision reference on the evaluated tokens. */
#include "ffnroof/quant_eval.h"

#include <math.h>
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
