/* Fitting the efficiency model (include/ffnroof/fit.h) to measured GEMM or kernel times:
 * Nelder-Mead on the squared log error, in a transformed space that keeps every parameter in
 * its valid range. Deterministic: the same points give the same parameters. */
#include "ffnroof/fit.h"
#include "ffnroof/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ffn_fit_points_split_gemv(const ffn_hw *hw, const ffn_fit_point *pts, size_t n)
{
    bool one = false, more = false;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].elem_bytes > 0 || pts[i].m == 0) continue; /* not a GEMM or a layer */
        const bool gemv = pts[i].m <= ffn_gemv_rows(hw, ffn_fit_point_cdtype(hw, &pts[i]));
        one = one || gemv;
        more = more || !gemv;
    }
    return one && more;
}

ffn_dtype ffn_fit_point_cdtype(const ffn_hw *hw, const ffn_fit_point *p)
{
    return p->cdtype_set ? p->cdtype : ffn_compute_dtype(hw, p->wdtype, p->adtype);
}

int ffn_fit_point_layer(const ffn_hw *hw, const ffn_fit_point *p, ffn_layer_cost *c)
{
    if (!hw || !p || !c) return FFN_EINVAL;
    memset(c, 0, sizeof *c);
    if (p->elem_bytes > 0) {
        /* one elementwise kernel */
        ffn_op_elem(&c->ops[0], hw, "elem", FFN_OP_ELEMWISE,
                    (double)p->m * (double)(p->n ? p->n : 1), p->elem_flops, p->elem_bytes);
        c->n_ops = 1;
        if (p->hot && p->hot_bytes > 0) {
            /* its inputs, re-read every call, stay where they fit (as a layer's weights) */
            ffn_op *op = &c->ops[0];
            op->weight_bytes = p->hot_bytes < p->elem_bytes ? p->hot_bytes : p->elem_bytes;
            op->weights_level = ffn_level_placing(hw, op->weight_bytes, &op->weights_frac);
            ffn_op_recost(op, hw);
        }
        ffn_layer_sum(c, hw);
        return 0;
    }
    if (p->m == 0 || p->k == 0 || (p->f == 0 && p->n == 0)) return FFN_EINVAL;
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = p->wdtype;
    run.adtype = p->adtype;
    if (p->group) run.group_size = p->group;
    run.zero_point = p->zero_point;
    run.fused = true;
    if (p->f > 0) {
        run.act_io_dtype = FFN_DT_FP32; /* the kernels' x and y */
        /* a whole dense FFN layer (kernel runs) */
        ffn_dense_ops(hw, &run, p->k, p->f, p->act, false, p->m, 1, "", c);
    } else if (p->engine_linear) {
        ffn_linear_ops(hw, &run, p->m, p->n, p->k, c);
    } else {
        ffn_op_gemm(&c->ops[0], hw, "gemm", p->m, p->n, p->k, 1, ffn_dtype_bytes(p->wdtype, 0),
                    ffn_dtype_bytes(p->adtype, 0), ffn_compute_dtype(hw, p->wdtype, p->adtype), 0);
        c->n_ops = 1;
    }
    if (p->cdtype_set)
        for (int i = 0; i < c->n_ops; i++)
            if (c->ops[i].kind == FFN_OP_GEMM) {
                c->ops[i].compute_dtype = p->cdtype;
                ffn_op_recost(&c->ops[i], hw);
            }
    ffn_layer_sum(c, hw);
    if (p->hot) {
        double frac;
        const int lv = ffn_level_placing(hw, c->weight_bytes, &frac);
        if (lv) ffn_layer_place_weights(c, hw, lv, frac);
    }
    return 0;
}

/* What the harness measured for a point whose ops take device_s: the harness's per-call cost
 * added, an eager call's floor applied. */
static double as_measured(const ffn_hw *hw, const ffn_fit_point *p, double device_s, int n_ops)
{
    const double t = device_s + (p->no_harness ? 0.0 : hw->eff.harness_s * n_ops);
    return p->eager_floor_s > t ? p->eager_floor_s : t;
}

double ffn_fit_point_predict(const ffn_hw *hw, const ffn_fit_point *p)
{
    ffn_layer_cost c;
    if (ffn_fit_point_layer(hw, p, &c)) return NAN;
    return as_measured(hw, p, c.predicted_s, c.n_ops);
}

int ffn_fit_dtype_class(ffn_dtype d)
{
    switch (d) {
    case FFN_DT_FP16:
    case FFN_DT_BF16:
        return FFN_DT_BF16;
    case FFN_DT_FP8:
    case FFN_DT_INT8:
        return FFN_DT_FP8;
    default:
        return (int)d;
    }
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
    /* median of |e| without disturbing the caller's order (all points; the first 256 when
     * no memory can be had) */
    double local[256];
    double *sorted = n > 256 ? malloc(n * sizeof *sorted) : NULL;
    size_t m = sorted ? n : (n < 256 ? n : 256);
    if (!sorted) sorted = local;
    for (size_t i = 0; i < m; i++)
        sorted[i] = fabs(tmp[i]);
    s->median_abs = ffn_median(sorted, m);
    if (sorted != local) free(sorted);
    s->mean_abs = sum / (double)n;
    s->max_abs = mx;
    s->n = n;
}

/* Parameter vector <-> efficiency: x[0] logit(compute_max), x[1] logit(memory_max),
 * x[2] log(launch_s or harness_s), x[3] log(overlap_p - 1), x[4] log(compute_half),
 * x[5] log(memory_half); then one logit(compute_max) per further compute dtype
 * (FFN_FIT_COMPUTE_BY_DTYPE) and last logit(memory_max_gemv) (FFN_FIT_MEMORY_GEMV). */
#define NP 6
/* Fractions of a roof (compute_max, memory_max and their variants; not the GPU wave
 * utilisation) are fitted in [EFF_LO, 1]: real kernels reach from well under 1% (a
 * scalar reference kernel against a vector roof) to 100%; a narrower floor would pin such a fit
 * at the bound and leave its error to the other parameters. */
#define EFF_LO 0.005
#define UTIL_MIN_POINTS 8
#define UNC_FLOOR_LO 0.94
#define UNC_FLOOR_HI 1.06
/* points of one weight dtype its own range needs */
#define UNC_DT_MIN_POINTS 200
#define NP_MAX (NP + 6 * FFN_DT_COUNT + 5 + FFN_HW_MAX_LEVELS)

typedef struct fit_ctx {
    ffn_hw hw;
    const ffn_fit_point *pts;
    size_t n;
    unsigned flags;
    int dim;     /* NP, plus one per extra compute dtype with FFN_FIT_COMPUTE_BY_DTYPE, plus one
                    with FFN_FIT_MEMORY_GEMV */
    int gemv_ix; /* x index of memory_max_gemv, -1 when not fitted */
    int elem_ix; /* x index of memory_max_elem, -1 when not fitted */
    /* FFN_FIT_LEVEL: x index of level i's level_max, -1 for a level no warm point uses */
    int level_ix[FFN_HW_MAX_LEVELS];
    /* FFN_FIT_WAVE_UTIL: one (gamma, alpha/gamma) pair per dtype class among the GEMM
     * points, at x[util_ix + 2j] and x[util_ix + 2j + 1]; a class with fewer than
     * UTIL_MIN_POINTS GEMMs takes the alpha/gamma ratio of the class with the most
     * (ratio_of[j]); -1 when not fitted */
    int util_ix;
    int ucls[FFN_DT_COUNT];
    int ratio_of[FFN_DT_COUNT];
    int n_ucls;
    /* FFN_FIT_COMPUTE_BY_DTYPE: the compute dtypes among the points (fp32 first when present);
     * dts[0] is fitted through x[0], dts[j] (j >= 1) through x[NP + j - 1] */
    ffn_dtype dts[FFN_DT_COUNT];
    int n_dts;
    /* FFN_FIT_LAUNCH_BY_DTYPE / FFN_FIT_GEMV_BY_DTYPE: x index of each compute dtype's
     * launch_dt / each weight dtype's memory_max_gemv_dt, -1 when not fitted */
    int ldt_ix[FFN_DT_COUNT];
    int gdt_ix[FFN_DT_COUNT];
    int qrow_ix[FFN_DT_COUNT]; /* FFN_FIT_QUANT_ROW: x index of each compute dtype's quant_row_s */
    int floor_ix; /* FFN_FIT_FLOOR: x index of block_s, kstep_s at the next; -1 when not fitted */
    int pipe_ix;  /* FFN_FIT_PIPE: x index of block_s, fixup_s at the next; -1 when not fitted */
    /* Each one-op point's op, counted once (NULL when no memory could be had): its counts and
     * placement do not depend on the efficiency parameters, so an evaluation only re-costs it
     * (ffn_op_recost), which gives the prediction ffn_fit_point_predict gives, bit for bit;
     * one[i] false for a point of several ops (a whole layer), predicted in full */
    ffn_op *ops;
    bool *one;
} fit_ctx;

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static void apply(fit_ctx *c, const double *x)
{
    ffn_eff *e = &c->hw.eff;
    if (c->util_ix >= 0) {
        /* every dtype of a class gets the class's pair */
        for (int j = 0; j < c->n_ucls; j++) {
            double g = 0.05 + 0.95 * sigmoid(x[c->util_ix + 2 * j]);
            /* the tile pipeline has no alpha: its waves are in its tiles */
            double a =
                e->pipeline ? 0.0 : g * 0.98 * sigmoid(x[c->util_ix + 2 * c->ratio_of[j] + 1]);
            for (int d = 0; d < FFN_DT_COUNT; d++)
                if (ffn_fit_dtype_class((ffn_dtype)d) == c->ucls[j]) {
                    e->util_gamma[d] = g;
                    e->util_alpha[d] = a;
                }
        }
    }
    if (c->n_dts > 0) {
        for (int j = 0; j < c->n_dts; j++)
            e->compute_max_dt[c->dts[j]] =
                EFF_LO + (1.0 - EFF_LO) * sigmoid(j ? x[NP + j - 1] : x[0]);
        if (c->dts[0] == FFN_DT_FP32) e->compute_max = e->compute_max_dt[FFN_DT_FP32];
    } else if (!(c->flags & (FFN_FIT_HOLD_MAX | FFN_FIT_WAVE_UTIL))) {
        /* with wave utilisations every GEMM's compute fraction is its class's: compute_max is
         * left to the vector work (quantisation, elementwise FLOPs), which cannot tell it, and is
         * kept as the spec gives it */
        e->compute_max = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[0]);
    }
    if (!(c->flags & FFN_FIT_HOLD_MAX)) e->memory_max = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[1]);
    if (c->flags & FFN_FIT_LAUNCH)
        e->launch_s = exp(x[2]);
    else if (c->flags & FFN_FIT_HARNESS)
        e->harness_s = exp(x[2]);
    if (c->flags & FFN_FIT_OVERLAP) e->overlap_p = 1.0 + exp(x[3]);
    if (c->flags & FFN_FIT_COMPUTE_RAMP) e->compute_half_flops = exp(x[4]);
    if (c->flags & FFN_FIT_MEMORY_RAMP) e->memory_half_bytes = exp(x[5]);
    if (c->gemv_ix >= 0) e->memory_max_gemv = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[c->gemv_ix]);
    if (c->elem_ix >= 0) e->memory_max_elem = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[c->elem_ix]);
    for (int i = 0; i < FFN_HW_MAX_LEVELS; i++)
        if (c->level_ix[i] >= 0)
            e->level_max[i] = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[c->level_ix[i]]);
    for (int d = 0; d < FFN_DT_COUNT; d++) {
        if (c->ldt_ix[d] >= 0) e->launch_dt[d] = exp(x[c->ldt_ix[d]]);
        if (c->gdt_ix[d] >= 0)
            e->memory_max_gemv_dt[d] = EFF_LO + (1.0 - EFF_LO) * sigmoid(x[c->gdt_ix[d]]);
    }
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (c->qrow_ix[d] >= 0) e->quant_row_s[d] = exp(x[c->qrow_ix[d]]);
    if (c->floor_ix >= 0) {
        e->block_s = exp(x[c->floor_ix]);
        e->kstep_s = exp(x[c->floor_ix + 1]);
    }
    if (c->pipe_ix >= 0) {
        e->block_s = exp(x[c->pipe_ix]);
        e->fixup_s = exp(x[c->pipe_ix + 1]);
    }
}

/* The x indices of the per-dtype launch costs and decode-stream fractions the flags ask for:
 * one per compute dtype among the GEMM points, one per weight dtype among the streaming ones.
 * Returns false when a flag has nothing to fit. */
static bool by_dtype_params(fit_ctx *c, const ffn_hw *hw)
{
    bool any_l = false, any_g = false;
    for (int d = 0; d < FFN_DT_COUNT; d++)
        c->ldt_ix[d] = c->gdt_ix[d] = c->qrow_ix[d] = -1;
    for (size_t i = 0; i < c->n; i++) {
        const ffn_fit_point *p = &c->pts[i];
        if (p->elem_bytes > 0 || p->f > 0) continue;
        const ffn_dtype cdt = ffn_fit_point_cdtype(hw, p);
        if ((c->flags & FFN_FIT_QUANT_ROW) && p->engine_linear &&
            ffn_acts_quantised(hw, p->wdtype, p->adtype) && c->qrow_ix[cdt] < 0)
            c->qrow_ix[cdt] = c->dim++;
        if ((c->flags & FFN_FIT_LAUNCH_BY_DTYPE) && c->ldt_ix[cdt] < 0) {
            c->ldt_ix[cdt] = c->dim++;
            any_l = true;
        }
        if ((c->flags & FFN_FIT_GEMV_BY_DTYPE) && p->m <= ffn_gemv_rows(hw, cdt) &&
            (unsigned)p->wdtype < FFN_DT_COUNT && c->gdt_ix[p->wdtype] < 0) {
            c->gdt_ix[p->wdtype] = c->dim++;
            any_g = true;
        }
    }
    return (any_l || !(c->flags & FFN_FIT_LAUNCH_BY_DTYPE)) &&
           (any_g || !(c->flags & FFN_FIT_GEMV_BY_DTYPE));
}

/* Count each point's op once (fit_ctx.ops); without memory every point is predicted in full. */
static void cache_ops(fit_ctx *c)
{
    c->ops = malloc(c->n * sizeof *c->ops);
    c->one = malloc(c->n * sizeof *c->one);
    if (!c->ops || !c->one) {
        free(c->ops);
        free(c->one);
        c->ops = NULL;
        c->one = NULL;
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        ffn_layer_cost lc;
        c->one[i] = !ffn_fit_point_layer(&c->hw, &c->pts[i], &lc) && lc.n_ops == 1;
        if (c->one[i]) c->ops[i] = lc.ops[0];
    }
}

static double point_predict(fit_ctx *c, size_t i)
{
    const ffn_fit_point *p = &c->pts[i];
    if (!c->ops || !c->one[i]) return ffn_fit_point_predict(&c->hw, p);
    ffn_op *op = &c->ops[i];
    ffn_op_recost(op, &c->hw);
    return as_measured(&c->hw, p, op->predicted_s, 1);
}

static double objective(fit_ctx *c, const double *x)
{
    apply(c, x);
    double s = 0;
    for (size_t i = 0; i < c->n; i++) {
        double pred = point_predict(c, i);
        double l = log(pred / c->pts[i].time_s);
        s += c->flags & FFN_FIT_L1 ? fabs(l) : l * l;
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
            for (int d = 0; d < NPD; d++)
                cen[d] += simplex[i][d] / NPD;
        double xr[NP_MAX] = {0}, xe[NP_MAX] = {0}, xc[NP_MAX] = {0};
        for (int d = 0; d < NPD; d++)
            xr[d] = cen[d] + (cen[d] - simplex[NPD][d]);
        double fr = objective(c, xr);
        if (fr < f[0]) {
            for (int d = 0; d < NPD; d++)
                xe[d] = cen[d] + 2.0 * (xr[d] - cen[d]);
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
        /* Shrink towards the best vertex. Once the vertices lie within rounding of it, a
         * shrink moves none of them and every later iteration repeats this one exactly:
         * stop there (a large sum of squares never gets its spread under 1e-12). */
        bool moved = false;
        for (int i = 1; i <= NPD; i++) {
            for (int d = 0; d < NPD; d++) {
                const double v = simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d]);
                moved = moved || v != simplex[i][d];
                simplex[i][d] = v;
            }
        }
        if (!moved) break;
        for (int i = 1; i <= NPD; i++)
            f[i] = objective(c, simplex[i]);
    }
    int best = 0;
    for (int i = 1; i <= NPD; i++)
        if (f[i] < f[best]) best = i;
    memcpy(x0, simplex[best], sizeof simplex[best]);
}

static int fit_core(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, unsigned flags,
                    ffn_eff *out)
{
    if (!hw || !pts || !out || n == 0) return FFN_EINVAL;
    /* launch and harness are one constant to the data: fit one of them */
    if ((flags & FFN_FIT_LAUNCH) && (flags & FFN_FIT_HARNESS)) return FFN_EINVAL;
    size_t n_elem = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(pts[i].time_s > 0) || !isfinite(pts[i].time_s)) return FFN_EINVAL;
        if (pts[i].elem_bytes > 0) {
            n_elem++;
            continue;
        }
        if (pts[i].m == 0 || pts[i].k == 0 || (pts[i].n == 0 && pts[i].f == 0)) return FFN_EINVAL;
    }
    if ((flags & FFN_FIT_MEMORY_ELEM) && n_elem == 0) return FFN_EINVAL;
    if ((flags & FFN_FIT_WAVE_UTIL) && n_elem == n) return FFN_EINVAL;
    fit_ctx c = {.hw = *hw,
                 .pts = pts,
                 .n = n,
                 .flags = flags,
                 .dim = NP,
                 .gemv_ix = -1,
                 .elem_ix = -1,
                 .util_ix = -1};
    if (flags & FFN_FIT_COMPUTE_BY_DTYPE) {
        bool seen[FFN_DT_COUNT] = {false};
        for (size_t i = 0; i < n; i++)
            if (!(pts[i].elem_bytes > 0)) seen[ffn_fit_point_cdtype(hw, &pts[i])] = true;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            if (seen[d]) c.dts[c.n_dts++] = (ffn_dtype)d; /* FFN_DT_FP32 is 0: first */
        c.dim = NP + (c.n_dts > 0 ? c.n_dts - 1 : 0);
    }
    if (flags & FFN_FIT_WAVE_UTIL) {
        size_t count[FFN_DT_COUNT] = {0};
        for (size_t i = 0; i < n; i++)
            if (!(pts[i].elem_bytes > 0))
                count[ffn_fit_dtype_class(ffn_fit_point_cdtype(hw, &pts[i]))]++;
        int most = -1;
        for (int k = 0; k < FFN_DT_COUNT; k++) {
            if (!count[k]) continue;
            c.ucls[c.n_ucls++] = k;
            if (most < 0 || count[k] > count[c.ucls[most]]) most = c.n_ucls - 1;
        }
        for (int j = 0; j < c.n_ucls; j++)
            c.ratio_of[j] = count[c.ucls[j]] >= UTIL_MIN_POINTS ? j : most;
        c.util_ix = c.dim;
        c.dim += 2 * c.n_ucls;
    }
    if (flags & FFN_FIT_MEMORY_GEMV) {
        /* both kinds of point, or the two fractions cannot be told apart */
        if (!ffn_fit_points_split_gemv(hw, pts, n)) return FFN_EINVAL;
        c.gemv_ix = c.dim++;
    }
    if (flags & FFN_FIT_MEMORY_ELEM) c.elem_ix = c.dim++;
    if (!by_dtype_params(&c, hw)) return FFN_EINVAL;
    c.floor_ix = -1;
    if (flags & FFN_FIT_FLOOR) {
        c.floor_ix = c.dim;
        c.dim += 2;
    }
    c.pipe_ix = -1;
    if (flags & FFN_FIT_PIPE) {
        if (!hw->eff.pipeline) return FFN_EINVAL;
        c.pipe_ix = c.dim;
        c.dim += 2;
    }
    for (int i = 0; i < FFN_HW_MAX_LEVELS; i++)
        c.level_ix[i] = -1;
    if (flags & FFN_FIT_LEVEL) {
        /* the levels the warm points' data is placed in (placement reads capacities only:
         * it does not move while the fit runs) */
        bool used[FFN_HW_MAX_LEVELS] = {false}, any = false;
        for (size_t i = 0; i < n; i++) {
            ffn_layer_cost lc;
            if (!pts[i].hot || ffn_fit_point_layer(hw, &pts[i], &lc)) continue;
            for (int o = 0; o < lc.n_ops; o++) {
                const int lv = lc.ops[o].weights_level;
                if (lv > 0 && lv <= FFN_HW_MAX_LEVELS && hw->levels[lv - 1].bandwidth_bps > 0)
                    used[lv - 1] = any = true;
            }
        }
        if (!any) return FFN_EINVAL;
        for (int i = 0; i < FFN_HW_MAX_LEVELS; i++)
            if (used[i]) c.level_ix[i] = c.dim++;
    }
    /* Start: 90% of peak, 85% of bandwidth, 5 us launch, p = 4, ramps at 1 GFLOP / 1 MB. */
    double x[NP_MAX] = {log(0.85 / 0.10), log(0.80 / 0.15), log(5e-6),
                        log(3.0),         log(1e9),         log(1e6)};
    for (int j = NP; j < NP_MAX; j++)
        x[j] = x[0];
    if (c.gemv_ix >= 0) x[c.gemv_ix] = x[1];
    if (c.elem_ix >= 0) x[c.elem_ix] = x[1];
    for (int i = 0; i < FFN_HW_MAX_LEVELS; i++)
        if (c.level_ix[i] >= 0) x[c.level_ix[i]] = x[1];
    for (int d = 0; d < FFN_DT_COUNT; d++) {
        if (c.ldt_ix[d] >= 0) x[c.ldt_ix[d]] = x[2];
        if (c.gdt_ix[d] >= 0) x[c.gdt_ix[d]] = x[1];
        if (c.qrow_ix[d] >= 0) x[c.qrow_ix[d]] = log(1e-9);
        if (c.floor_ix >= 0) {
            x[c.floor_ix] = log(1e-6);
            x[c.floor_ix + 1] = log(20e-9);
        }
    }
    if (c.pipe_ix >= 0) {
        x[c.pipe_ix] = log(1e-6);
        x[c.pipe_ix + 1] = log(3e-6);
    }
    if (c.util_ix >= 0)
        for (int j = 0; j < c.n_ucls; j++) {
            x[c.util_ix + 2 * j] = x[0];
            x[c.util_ix + 2 * j + 1] = -2.0; /* alpha ~ 12% of gamma */
        }
    if (!(flags & FFN_FIT_LAUNCH)) c.hw.eff.launch_s = hw->eff.launch_s;
    cache_ops(&c);
    /* Restarts shake the simplex out of shallow minima. With wave utilisations, a second start
     * at half the first's utilisation and a per-row quantisation cost of 5 ns (a quantised
     * kernel far below its peak, whose row costs the first start can trade for a gamma at the
     * boundary) is run too, and the better of the two kept. */
    double x2[NP_MAX];
    memcpy(x2, x, sizeof x2);
    for (int r = 0; r < 6; r++)
        nelder_mead(&c, x, 4000);
    if (c.util_ix >= 0) {
        for (int j = 0; j < c.n_ucls; j++)
            x2[c.util_ix + 2 * j] = log(0.45 / 0.55); /* gamma ~0.45 through apply's map */
        for (int d = 0; d < FFN_DT_COUNT; d++)        /* and a quantisation that costs per row */
            if (c.qrow_ix[d] >= 0) x2[c.qrow_ix[d]] = log(5e-9);
        for (int r = 0; r < 6; r++)
            nelder_mead(&c, x2, 4000);
        if (objective(&c, x2) < objective(&c, x)) memcpy(x, x2, sizeof x2);
    }
    free(c.ops);
    free(c.one);
    apply(&c, x);
    *out = c.hw.eff;
    return 0;
}

/* Achieved fraction of the compute peak of a GEMM point, as measured (a best-of-sweep figure
 * is a measured rate too: nothing is taken off either). */
static double achieved(const ffn_hw *hw, const ffn_fit_point *p)
{
    ffn_dtype cdt = ffn_fit_point_cdtype(hw, p);
    double peak = hw->peak_flops[cdt] > 0 ? hw->peak_flops[cdt] : hw->peak_flops[FFN_DT_FP32];
    double t = p->time_s;
    if (!(t > 0) || !(peak > 0)) return 0;
    return 2.0 * (double)p->m * (double)p->n * (double)p->k / (t * peak);
}

int ffn_eff_fit(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, unsigned flags, ffn_eff *out)
{
    if (!hw || !pts || !out || n == 0) return FFN_EINVAL;
    size_t n_best = 0;
    for (size_t i = 0; i < n; i++)
        n_best += pts[i].best_of_sweep;
    if (n_best == 0) return fit_core(hw, pts, n, flags, out);
    /* Best-of-sweep points (a published maximum over many shapes) are not fitted to: they
     * set the wave utilisation of a dtype class the other points do not cover, by the ratio
     * of best-of-sweep fractions (docs/model.md, "Calibration data"). */
    if (!(flags & FFN_FIT_WAVE_UTIL) || n_best == n) return FFN_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (pts[i].best_of_sweep && (pts[i].elem_bytes > 0 || pts[i].f > 0)) return FFN_EINVAL;
    ffn_fit_point *rest = malloc((n - n_best) * sizeof *rest);
    if (!rest) return FFN_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!pts[i].best_of_sweep) rest[m++] = pts[i];
    int rc = fit_core(hw, rest, m, flags, out);
    if (rc) {
        free(rest);
        return rc;
    }
    /* the reference class: the one with the most GEMM points, and its best achieved fraction */
    size_t count[FFN_DT_COUNT] = {0};
    for (size_t i = 0; i < m; i++)
        if (!(rest[i].elem_bytes > 0) && rest[i].f == 0)
            count[ffn_fit_dtype_class(ffn_fit_point_cdtype(hw, &rest[i]))]++;
    int ref = -1;
    for (int k = 0; k < FFN_DT_COUNT; k++)
        if (count[k] && (ref < 0 || count[k] > count[ref])) ref = k;
    double best_ref = 0;
    for (size_t i = 0; ref >= 0 && i < m; i++)
        if (!(rest[i].elem_bytes > 0) && rest[i].f == 0 &&
            ffn_fit_dtype_class(ffn_fit_point_cdtype(hw, &rest[i])) == ref) {
            double a = achieved(hw, &rest[i]);
            if (a > best_ref) best_ref = a;
        }
    free(rest);
    if (ref < 0 || !(best_ref > 0) || !(out->util_gamma[ref] > 0)) return FFN_EINVAL;
    double best[FFN_DT_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        if (!pts[i].best_of_sweep) continue;
        int k = ffn_fit_dtype_class(ffn_fit_point_cdtype(hw, &pts[i]));
        if (count[k]) continue; /* the class has data of its own */
        double a = achieved(hw, &pts[i]);
        if (a > best[k]) best[k] = a;
    }
    const double g_ref = out->util_gamma[ref], ratio = out->util_alpha[ref] / g_ref;
    for (int k = 0; k < FFN_DT_COUNT; k++) {
        if (!(best[k] > 0)) continue;
        double g = g_ref * best[k] / best_ref;
        if (g > 1.0) g = 1.0;
        for (int d = 0; d < FFN_DT_COUNT; d++)
            if (ffn_fit_dtype_class((ffn_dtype)d) == k) {
                out->util_gamma[d] = g;
                out->util_alpha[d] = g * ratio;
            }
    }
    return 0;
}

/* p10 and p90 of the k ratios measured/predicted in r (sorted here), each at least 6% from 1: a
 * fit's residuals understate the error on other data (the gap between two public harnesses on
 * one device, A100 SXM large GEMMs: MAMF 0.869 of peak, the A100 fit's 0.92; docs/model.md,
 * "Uncertainty"). */
static void floored_range(double *r, size_t k, double *p10, double *p90)
{
    ffn_sort_doubles(r, k);
    const double a = ffn_quantile_sorted(r, k, 0.10), b = ffn_quantile_sorted(r, k, 0.90);
    *p10 = a < UNC_FLOOR_LO ? a : UNC_FLOOR_LO;
    *p90 = b > UNC_FLOOR_HI ? b : UNC_FLOOR_HI;
}

int ffn_fit_uncertainty(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, ffn_unc *out)
{
    if (!hw || !pts || !out || n == 0) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    /* the typical points (a best-of-sweep one is a maximum, not a typical measurement), their
     * ratios measured/predicted, and a copy of those to sort */
    ffn_fit_point *typ = malloc(n * sizeof *typ);
    double *ratio = malloc(n * sizeof *ratio), *r = malloc(n * sizeof *r),
           *err = malloc(n * sizeof *err);
    if (!typ || !ratio || !r || !err) {
        free(typ);
        free(ratio);
        free(r);
        free(err);
        return FFN_ENOMEM;
    }
    size_t nt = 0;
    for (size_t i = 0; i < n; i++)
        if (!pts[i].best_of_sweep) typ[nt++] = pts[i];
    int rc = nt ? 0 : FFN_EINVAL;
    if (!rc) {
        ffn_fit_summary s;
        ffn_fit_errors(hw, typ, nt, err, &s);
        for (size_t i = 0; i < nt; i++)
            ratio[i] = 1.0 / (1.0 + err[i]); /* err = predicted/measured - 1 */
        memcpy(r, ratio, nt * sizeof *r);
        floored_range(r, nt, &out->p10, &out->p90);
        out->median_abs = s.median_abs;
        out->max_abs = s.max_abs;
        out->points = (uint32_t)(nt < UINT32_MAX ? nt : UINT32_MAX);
        out->is_default = false;
        /* each weight dtype's own range where the points hold several dtypes and enough of its
         * own: an fp8 GEMM's prediction is less sure than a bf16 one's (docs/model.md,
         * "Uncertainty") */
        size_t cnt[FFN_DT_COUNT] = {0};
        int kinds = 0;
        for (size_t i = 0; i < nt; i++)
            if ((unsigned)typ[i].wdtype < FFN_DT_COUNT && !(typ[i].elem_bytes > 0))
                kinds += cnt[typ[i].wdtype]++ == 0;
        for (int d = 0; kinds >= 2 && d < FFN_DT_COUNT; d++) {
            if (cnt[d] < UNC_DT_MIN_POINTS) continue;
            size_t k = 0;
            for (size_t i = 0; i < nt; i++)
                if (typ[i].wdtype == (ffn_dtype)d && !(typ[i].elem_bytes > 0)) r[k++] = ratio[i];
            floored_range(r, k, &out->dt_p10[d], &out->dt_p90[d]);
        }
    }
    free(typ);
    free(ratio);
    free(r);
    free(err);
    return rc;
}
