/* Fitting the efficiency model (include/ffnroof/fit.h) to measured GEMM or kernel times:
 * Nelder-Mead on the squared log error, in a transformed space that keeps every parameter in
 * its valid range. Deterministic: the same points give the same parameters. */
#include "ffnroof/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ffn_fit_point_predict(const ffn_hw *hw, const ffn_fit_point *p)
{
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = p->wdtype;
    run.adtype = p->adtype;
    run.fused = true;
    if (p->f > 0) {
        /* a whole dense FFN layer (kernel runs) */
        ffn_layer_cost c;
        memset(&c, 0, sizeof c);
        ffn_dense_ops(hw, &run, p->k, p->f, p->act, false, p->m, 1, "", &c);
        ffn_layer_sum(&c, hw);
        return c.predicted_s + hw->eff.harness_s * c.n_ops;
    }
    ffn_op op;
    ffn_dtype cdt = ffn_compute_dtype(hw, p->wdtype, p->adtype);
    ffn_op_gemm(&op, hw, "gemm", p->m, p->n, p->k, 1, ffn_dtype_bytes(p->wdtype, 0),
                ffn_dtype_bytes(p->adtype, 0), cdt, 0);
    return op.predicted_s + hw->eff.harness_s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ffn_fit_errors(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, double *err,
                    ffn_fit_summary *s)
{
    memset(s, 0, sizeof *s);
    if (!n) return;
    double *tmp = err; /* caller-supplied n doubles */
    double sum = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        double pred = ffn_fit_point_predict(hw, &pts[i]);
        double e = pred / pts[i].time_s - 1.0;
        tmp[i] = e;
        sum += fabs(e);
        if (fabs(e) > mx) mx = fabs(e);
    }
    /* median of |e| without disturbing the caller's order */
    double sorted[256];
    size_t m = n < 256 ? n : 256;
    for (size_t i = 0; i < m; i++) sorted[i] = fabs(tmp[i]);
    qsort(sorted, m, sizeof sorted[0], cmp_double);
    s->median_abs = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
    s->mean_abs = sum / (double)n;
    s->max_abs = mx;
    s->n = n;
}

/* Parameter vector <-> efficiency: x[0] logit(compute_max), x[1] logit(memory_max),
 * x[2] log(launch_s or harness_s), x[3] log(overlap_p - 1), x[4] log(compute_half),
 * x[5] log(memory_half). */
typedef struct fit_ctx {
    ffn_hw hw;
    const ffn_fit_point *pts;
    size_t n;
    unsigned flags;
} fit_ctx;

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static void apply(fit_ctx *c, const double *x)
{
    ffn_eff *e = &c->hw.eff;
    e->compute_max = 0.05 + 0.95 * sigmoid(x[0]);
    e->memory_max = 0.05 + 0.95 * sigmoid(x[1]);
    if (c->flags & FFN_FIT_LAUNCH) e->launch_s = exp(x[2]);
    else if (c->flags & FFN_FIT_HARNESS) e->harness_s = exp(x[2]);
    if (c->flags & FFN_FIT_OVERLAP) e->overlap_p = 1.0 + exp(x[3]);
    if (c->flags & FFN_FIT_COMPUTE_RAMP) e->compute_half_flops = exp(x[4]);
    if (c->flags & FFN_FIT_MEMORY_RAMP) e->memory_half_bytes = exp(x[5]);
}

static double objective(fit_ctx *c, const double *x)
{
    apply(c, x);
    double s = 0;
    for (size_t i = 0; i < c->n; i++) {
        double pred = ffn_fit_point_predict(&c->hw, &c->pts[i]);
        double l = log(pred / c->pts[i].time_s);
        s += l * l;
    }
    return s;
}

#define NP 6

/* Nelder-Mead (Lagarias et al. 1998 coefficients). */
static void nelder_mead(fit_ctx *c, double *x0, int iters)
{
    double simplex[NP + 1][NP], f[NP + 1];
    for (int i = 0; i <= NP; i++) {
        memcpy(simplex[i], x0, sizeof simplex[i]);
        if (i) simplex[i][i - 1] += 1.0;
        f[i] = objective(c, simplex[i]);
    }
    for (int it = 0; it < iters; it++) {
        /* order */
        for (int i = 0; i <= NP; i++)
            for (int j = i + 1; j <= NP; j++)
                if (f[j] < f[i]) {
                    double tf = f[i];
                    f[i] = f[j];
                    f[j] = tf;
                    double tx[NP];
                    memcpy(tx, simplex[i], sizeof tx);
                    memcpy(simplex[i], simplex[j], sizeof tx);
                    memcpy(simplex[j], tx, sizeof tx);
                }
        if (f[NP] - f[0] < 1e-12) break;
        double cen[NP] = {0};
        for (int i = 0; i < NP; i++)
            for (int d = 0; d < NP; d++) cen[d] += simplex[i][d] / NP;
        double xr[NP], xe[NP], xc[NP];
        for (int d = 0; d < NP; d++) xr[d] = cen[d] + (cen[d] - simplex[NP][d]);
        double fr = objective(c, xr);
        if (fr < f[0]) {
            for (int d = 0; d < NP; d++) xe[d] = cen[d] + 2.0 * (xr[d] - cen[d]);
            double fe = objective(c, xe);
            if (fe < fr) {
                memcpy(simplex[NP], xe, sizeof xe);
                f[NP] = fe;
            } else {
                memcpy(simplex[NP], xr, sizeof xr);
                f[NP] = fr;
            }
            continue;
        }
        if (fr < f[NP - 1]) {
            memcpy(simplex[NP], xr, sizeof xr);
            f[NP] = fr;
            continue;
        }
        bool outside = fr < f[NP];
        for (int d = 0; d < NP; d++)
            xc[d] = outside ? cen[d] + 0.5 * (xr[d] - cen[d])
                            : cen[d] + 0.5 * (simplex[NP][d] - cen[d]);
        double fc = objective(c, xc);
        if (fc < (outside ? fr : f[NP])) {
            memcpy(simplex[NP], xc, sizeof xc);
            f[NP] = fc;
            continue;
        }
        for (int i = 1; i <= NP; i++) {
            for (int d = 0; d < NP; d++) simplex[i][d] = simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d]);
            f[i] = objective(c, simplex[i]);
        }
    }
    int best = 0;
    for (int i = 1; i <= NP; i++)
        if (f[i] < f[best]) best = i;
    memcpy(x0, simplex[best], sizeof simplex[best]);
}

int ffn_eff_fit(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, unsigned flags,
                ffn_eff *out)
{
    if (!hw || !pts || !out || n == 0) return FFN_EINVAL;
    /* launch and harness are one constant to the data: fit one of them */
    if ((flags & FFN_FIT_LAUNCH) && (flags & FFN_FIT_HARNESS)) return FFN_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(pts[i].time_s > 0) || !isfinite(pts[i].time_s) || pts[i].m == 0 || pts[i].k == 0 ||
            (pts[i].n == 0 && pts[i].f == 0))
            return FFN_EINVAL;
    fit_ctx c = {.hw = *hw, .pts = pts, .n = n, .flags = flags};
    /* Start: 90% of peak, 85% of bandwidth, 5 us launch, p = 4, ramps at 1 GFLOP / 1 MB. */
    double x[NP] = {log(0.85 / 0.10), log(0.80 / 0.15), log(5e-6), log(3.0), log(1e9), log(1e6)};
    if (!(flags & FFN_FIT_LAUNCH)) c.hw.eff.launch_s = hw->eff.launch_s;
    /* Restarts shake the simplex out of shallow minima. */
    for (int r = 0; r < 6; r++) nelder_mead(&c, x, 4000);
    apply(&c, x);
    *out = c.hw.eff;
    return 0;
}
