/* Fitting the efficiency model (include/ffnroof/fit.h) to measured GEMM or kernel times:
 * Nelder-Mead on the squared log error, in a transformed space that keeps every parameter in
 * its valid range. Deterministic: the same points give the same parameters. */
#include "ffnroof/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ffn_fit_points_split_gemv(const ffn_fit_point *pts, size_t n)
{
    bool one = false, more = false;
    for (size_t i = 0; i < n; i++) {
        one = one || pts[i].m == 1;
        more = more || pts[i].m > 1;
    }
    return one && more;
}

ffn_dtype ffn_fit_point_cdtype(const ffn_hw *hw, const ffn_fit_point *p)
{
    return p->cdtype_set ? p->cdtype : ffn_compute_dtype(hw, p->wdtype, p->adtype);
}

int ffn_fit_point_layer(const ffn_hw *hw, const ffn_fit_point *p, ffn_layer_cost *c)
{
    if (!hw || !p || !c || p->m == 0 || p->k == 0 || (p->f == 0 && p->n == 0)) return FFN_EINVAL;
    memset(c, 0, sizeof *c);
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = p->wdtype;
    run.adtype = p->adtype;
    run.fused = true;
    if (p->f > 0) {
        /* a whole dense FFN layer (kernel runs) */
        ffn_dense_ops(hw, &run, p->k, p->f, p->act, false, p->m, 1, "", c);
    } else {
        ffn_op_gemm(&c->ops[0], hw, "gemm", p->m, p->n, p->k, 1, ffn_dtype_bytes(p->wdtype, 0),
                    ffn_dtype_bytes(p->adtype, 0), ffn_compute_dtype(hw, p->wdtype, p->adtype),
                    0);
        c->n_ops = 1;
    }
    if (p->cdtype_set)
        for (int i = 0; i < c->n_ops; i++)
            if (c->ops[i].kind == FFN_OP_GEMM) {
                c->ops[i].compute_dtype = p->cdtype;
                ffn_op_recost(&c->ops[i], hw);
            }
    ffn_layer_sum(c, hw);
    return 0;
}

double ffn_fit_point_predict(const ffn_hw *hw, const ffn_fit_point *p)
{
    ffn_layer_cost c;
    if (ffn_fit_point_layer(hw, p, &c)) return NAN;
    return c.predicted_s + hw->eff.harness_s * c.n_ops;
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
 * x[5] log(memory_half); then one logit(compute_max) per further compute dtype
 * (FFN_FIT_COMPUTE_BY_DTYPE) and last logit(memory_max_gemv) (FFN_FIT_MEMORY_GEMV). */
#define NP 6
#define NP_MAX (NP + FFN_DT_COUNT + 1)

typedef struct fit_ctx {
    ffn_hw hw;
    const ffn_fit_point *pts;
    size_t n;
    unsigned flags;
    int dim; /* NP, plus one per extra compute dtype with FFN_FIT_COMPUTE_BY_DTYPE, plus one
                with FFN_FIT_MEMORY_GEMV */
    int gemv_ix; /* x index of memory_max_gemv, -1 when not fitted */
    /* FFN_FIT_COMPUTE_BY_DTYPE: the compute dtypes among the points (fp32 first when present);
     * dts[0] is fitted through x[0], dts[j] (j >= 1) through x[NP + j - 1] */
    ffn_dtype dts[FFN_DT_COUNT];
    int n_dts;
} fit_ctx;

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static void apply(fit_ctx *c, const double *x)
{
    ffn_eff *e = &c->hw.eff;
    if (c->n_dts > 0) {
        for (int j = 0; j < c->n_dts; j++)
            e->compute_max_dt[c->dts[j]] = 0.05 + 0.95 * sigmoid(j ? x[NP + j - 1] : x[0]);
        if (c->dts[0] == FFN_DT_FP32) e->compute_max = e->compute_max_dt[FFN_DT_FP32];
    } else {
        e->compute_max = 0.05 + 0.95 * sigmoid(x[0]);
    }
    e->memory_max = 0.05 + 0.95 * sigmoid(x[1]);
    if (c->flags & FFN_FIT_LAUNCH) e->launch_s = exp(x[2]);
    else if (c->flags & FFN_FIT_HARNESS) e->harness_s = exp(x[2]);
    if (c->flags & FFN_FIT_OVERLAP) e->overlap_p = 1.0 + exp(x[3]);
    if (c->flags & FFN_FIT_COMPUTE_RAMP) e->compute_half_flops = exp(x[4]);
    if (c->flags & FFN_FIT_MEMORY_RAMP) e->memory_half_bytes = exp(x[5]);
    if (c->gemv_ix >= 0) e->memory_max_gemv = 0.05 + 0.95 * sigmoid(x[c->gemv_ix]);
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

/* Nelder-Mead (Lagarias et al. 1998 coefficients) in c->dim dimensions. */
static void nelder_mead(fit_ctx *c, double *x0, int iters)
{
    const int NPD = c->dim;
    double simplex[NP_MAX + 1][NP_MAX], f[NP_MAX + 1];
    for (int i = 0; i <= NPD; i++) {
        memcpy(simplex[i], x0, sizeof simplex[i]);
        if (i) simplex[i][i - 1] += 1.0;
        f[i] = objective(c, simplex[i]);
    }
    for (int it = 0; it < iters; it++) {
        /* order */
        for (int i = 0; i <= NPD; i++)
            for (int j = i + 1; j <= NPD; j++)
                if (f[j] < f[i]) {
                    double tf = f[i];
                    f[i] = f[j];
                    f[j] = tf;
                    double tx[NP_MAX];
                    memcpy(tx, simplex[i], sizeof tx);
                    memcpy(simplex[i], simplex[j], sizeof tx);
                    memcpy(simplex[j], tx, sizeof tx);
                }
        if (f[NPD] - f[0] < 1e-12) break;
        double cen[NP_MAX] = {0};
        for (int i = 0; i < NPD; i++)
            for (int d = 0; d < NPD; d++) cen[d] += simplex[i][d] / NPD;
        double xr[NP_MAX] = {0}, xe[NP_MAX] = {0}, xc[NP_MAX] = {0};
        for (int d = 0; d < NPD; d++) xr[d] = cen[d] + (cen[d] - simplex[NPD][d]);
        double fr = objective(c, xr);
        if (fr < f[0]) {
            for (int d = 0; d < NPD; d++) xe[d] = cen[d] + 2.0 * (xr[d] - cen[d]);
            double fe = objective(c, xe);
            if (fe < fr) {
                memcpy(simplex[NPD], xe, sizeof xe);
                f[NPD] = fe;
            } else {
                memcpy(simplex[NPD], xr, sizeof xr);
                f[NPD] = fr;
            }
            continue;
        }
        if (fr < f[NPD - 1]) {
            memcpy(simplex[NPD], xr, sizeof xr);
            f[NPD] = fr;
            continue;
        }
        bool outside = fr < f[NPD];
        for (int d = 0; d < NPD; d++)
            xc[d] = outside ? cen[d] + 0.5 * (xr[d] - cen[d])
                            : cen[d] + 0.5 * (simplex[NPD][d] - cen[d]);
        double fc = objective(c, xc);
        if (fc < (outside ? fr : f[NPD])) {
            memcpy(simplex[NPD], xc, sizeof xc);
            f[NPD] = fc;
            continue;
        }
        for (int i = 1; i <= NPD; i++) {
            for (int d = 0; d < NPD; d++) simplex[i][d] = simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d]);
            f[i] = objective(c, simplex[i]);
        }
    }
    int best = 0;
    for (int i = 1; i <= NPD; i++)
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
    fit_ctx c = {.hw = *hw, .pts = pts, .n = n, .flags = flags, .dim = NP, .gemv_ix = -1};
    if (flags & FFN_FIT_COMPUTE_BY_DTYPE) {
        bool seen[FFN_DT_COUNT] = {false};
        for (size_t i = 0; i < n; i++) seen[ffn_fit_point_cdtype(hw, &pts[i])] = true;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            if (seen[d]) c.dts[c.n_dts++] = (ffn_dtype)d; /* FFN_DT_FP32 is 0: first */
        c.dim = NP + c.n_dts - 1;
    }
    if (flags & FFN_FIT_MEMORY_GEMV) {
        /* both kinds of point, or the two fractions cannot be told apart */
        if (!ffn_fit_points_split_gemv(pts, n)) return FFN_EINVAL;
        c.gemv_ix = c.dim++;
    }
    /* Start: 90% of peak, 85% of bandwidth, 5 us launch, p = 4, ramps at 1 GFLOP / 1 MB. */
    double x[NP_MAX] = {log(0.85 / 0.10), log(0.80 / 0.15), log(5e-6), log(3.0), log(1e9), log(1e6)};
    for (int j = NP; j < NP_MAX; j++) x[j] = x[0];
    if (c.gemv_ix >= 0) x[c.gemv_ix] = x[1];
    if (!(flags & FFN_FIT_LAUNCH)) c.hw.eff.launch_s = hw->eff.launch_s;
    /* Restarts shake the simplex out of shallow minima. */
    for (int r = 0; r < 6; r++) nelder_mead(&c, x, 4000);
    apply(&c, x);
    *out = c.hw.eff;
    return 0;
}
