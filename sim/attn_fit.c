/* Fitting attention kernels and collectives to measured tables (include/ffnroof/attn_fit.h,
 * docs/model.md "Attention" and "Collectives"): each point's work is counted once by the
 * simulator's own functions, then a few parameters are fitted by Nelder-Mead on the sum of
 * |log(predicted / measured)| (the median's loss: a table's odd kernels weigh one row each). */
#include "ffnroof/attn_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/sim.h"
#include "ffnroof/sort.h"

void ffn_attn_point_dims(const ffn_hw *hw, const ffn_attn_point *p, ffn_attn_dims *d)
{
    (void)hw;
    memset(d, 0, sizeof *d);
    d->heads = (double)p->heads;
    d->kv_heads = (double)p->kv_heads;
    d->qk_dim = d->v_dim = (double)p->head_dim;
    d->kv_bytes = 2.0 * d->kv_heads * d->qk_dim * ffn_dtype_bytes(p->kv_dtype, 0);
    d->act_bytes = 2.0; /* attn_dtype bfloat16 */
    d->window = p->window;
    d->kv_dtype = p->kv_dtype;
    d->compute_dt = FFN_DT_BF16;
}

/* Query-key pairs a causal prompt of S tokens scores with a window of W (0 = none). */
static double causal_pairs(double S, double W)
{
    if (!(W > 0) || W >= S) return S * (S + 1.0) / 2.0;
    return W * (W + 1.0) / 2.0 + (S - W) * W;
}

/* The point's call through the simulator's function; *w its work. */
static double point_call(const ffn_hw *hw, const ffn_attn_point *p, bool decode, ffn_attn_work *w)
{
    ffn_attn_dims d;
    ffn_attn_point_dims(hw, p, &d);
    const double B = (double)p->batch, S = (double)p->len;
    if (decode) return ffn_attn_decode_s(hw, &d, p->batch, 1.0, B * S, w);
    return ffn_attn_prefill_s(hw, &d, p->batch, B * S, B * causal_pairs(S, (double)p->window), w);
}

double ffn_attn_point_predict(const ffn_hw *hw, const ffn_attn_point *p, bool decode)
{
    return point_call(hw, p, decode, NULL);
}

void ffn_ratio_spread(double *r, size_t n, double *p10, double *p90, double *median_abs)
{
    *p10 = *p90 = 1.0;
    *median_abs = 0;
    if (!n) return;
    ffn_sort_doubles(r, n);
    *p10 = r[(size_t)(0.1 * (double)(n - 1) + 0.5)];
    *p90 = r[(size_t)(0.9 * (double)(n - 1) + 0.5)];
    /* |pred/meas - 1| = |1/r - 1|, in place once the quantiles are taken */
    for (size_t i = 0; i < n; i++)
        r[i] = fabs(1.0 / r[i] - 1.0);
    *median_abs = ffn_median(r, n);
}

/* ---- Nelder-Mead on at most 6 parameters ------------------------------------------------ */

#define NM_MAX 6
typedef double (*objective_fn)(void *ctx, const double *x);

/* Minimise f from x (n parameters, unconstrained), step the initial simplex's edge; restarts
 * from the best vertex so a collapsed simplex opens again. x gets the best point. */
static void nelder_mead(objective_fn f, void *ctx, double *x, int n, double step, int iters,
                        int restarts)
{
    double s[NM_MAX + 1][NM_MAX], v[NM_MAX + 1];
    for (int r = 0; r <= restarts; r++) {
        for (int i = 0; i <= n; i++) {
            memcpy(s[i], x, (size_t)n * sizeof *x);
            if (i) s[i][i - 1] += step;
            v[i] = f(ctx, s[i]);
        }
        for (int it = 0; it < iters; it++) {
            int lo = 0, hi = 0, nh = 0;
            for (int i = 1; i <= n; i++) {
                if (v[i] < v[lo]) lo = i;
                if (v[i] > v[hi]) hi = i;
            }
            nh = lo;
            for (int i = 0; i <= n; i++)
                if (i != hi && v[i] > v[nh]) nh = i;
            double c[NM_MAX] = {0}, xr[NM_MAX], xe[NM_MAX];
            for (int i = 0; i <= n; i++)
                if (i != hi)
                    for (int j = 0; j < n; j++)
                        c[j] += s[i][j] / n;
            for (int j = 0; j < n; j++)
                xr[j] = c[j] + (c[j] - s[hi][j]);
            const double fr = f(ctx, xr);
            if (fr < v[lo]) {
                for (int j = 0; j < n; j++)
                    xe[j] = c[j] + 2.0 * (c[j] - s[hi][j]);
                const double fe = f(ctx, xe);
                memcpy(s[hi], fe < fr ? xe : xr, (size_t)n * sizeof *x);
                v[hi] = fe < fr ? fe : fr;
            } else if (fr < v[nh]) {
                memcpy(s[hi], xr, (size_t)n * sizeof *x);
                v[hi] = fr;
            } else {
                for (int j = 0; j < n; j++)
                    xe[j] = c[j] + 0.5 * (s[hi][j] - c[j]);
                const double fc = f(ctx, xe);
                if (fc < v[hi]) {
                    memcpy(s[hi], xe, (size_t)n * sizeof *x);
                    v[hi] = fc;
                } else {
                    for (int i = 0; i <= n; i++) {
                        if (i == lo) continue;
                        for (int j = 0; j < n; j++)
                            s[i][j] = s[lo][j] + 0.5 * (s[i][j] - s[lo][j]);
                        v[i] = f(ctx, s[i]);
                    }
                }
            }
        }
        int lo = 0;
        for (int i = 1; i <= n; i++)
            if (v[i] < v[lo]) lo = i;
        memcpy(x, s[lo], (size_t)n * sizeof *x);
        step *= 0.5;
    }
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double logit(double p)
{
    return log(p / (1.0 - p));
}

/* ---- attention ------------------------------------------------------------------------------ */

/* One point's counts: t = L + a s + b u + comb(f / c, m_b / m). */
typedef struct attn_row {
    double s, u, f, b, t;
} attn_row;

typedef struct attn_ctx {
    const attn_row *rows;
    size_t n;
    bool decode;
    double hold_c; /* > 0: compute_max held */
} attn_ctx;

static void attn_params(const attn_ctx *c, const double *x, ffn_attn_eff *e)
{
    e->launch_s = exp(x[0]);
    e->seq_s = exp(x[1]);
    e->unit_s = exp(x[2]);
    e->memory_max = sigmoid(x[3]);
    e->compute_max = c->hold_c > 0 ? c->hold_c : sigmoid(x[4]);
}

static double attn_row_s(const ffn_attn_eff *e, const attn_row *r, bool decode)
{
    const double tc = r->f / e->compute_max, tm = r->b / e->memory_max;
    const double core = decode ? (tc > tm ? tc : tm) : tc + tm;
    return e->launch_s + e->seq_s * r->s + e->unit_s * r->u + core;
}

static double attn_objective(void *ctx, const double *x)
{
    const attn_ctx *c = ctx;
    ffn_attn_eff e;
    attn_params(c, x, &e);
    double sum = 0;
    for (size_t i = 0; i < c->n; i++)
        sum += fabs(log(attn_row_s(&e, &c->rows[i], c->decode) / c->rows[i].t));
    return sum;
}

int ffn_attn_fit(const ffn_hw *hw, const ffn_attn_point *pts, size_t n, bool decode, ffn_attn_kv kv,
                 ffn_attn_eff *out)
{
    memset(out, 0, sizeof *out);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (ffn_attn_kv_class(pts[i].kv_dtype) != kv) continue;
        if (!(pts[i].time_s > 0) || !pts[i].batch || !pts[i].len) return FFN_EINVAL;
        m++;
    }
    if (m < 8) return FFN_EINVAL;
    attn_row *rows = malloc(m * sizeof *rows);
    double *ratio = malloc(m * sizeof *ratio);
    if (!rows || !ratio) {
        free(rows);
        free(ratio);
        return FFN_ENOMEM;
    }
    const double bw = hw->mem_bandwidth_bps > 0 ? hw->mem_bandwidth_bps : 1.0;
    double tmin = INFINITY;
    m = 0;
    for (size_t i = 0; i < n; i++) {
        const ffn_attn_point *p = &pts[i];
        if (ffn_attn_kv_class(p->kv_dtype) != kv) continue;
        ffn_attn_work w;
        point_call(hw, p, decode, &w);
        const double B = (double)p->batch;
        rows[m++] = (attn_row){
            .s = B,
            .u = decode ? B * (double)p->kv_heads : B * (double)p->len,
            .f = w.flops / ffn_peak_flops(hw, FFN_DT_BF16),
            .b = w.bytes / bw,
            .t = p->time_s,
        };
        if (p->time_s < tmin) tmin = p->time_s;
    }
    /* decode rows hardly reach the compute roof: hold the prefill kernel's fraction */
    const ffn_attn_eff *pf = hw->attn.prefill[kv].fitted ? &hw->attn.prefill[kv]
                             : hw->attn.prefill[FFN_ATTN_KV16].fitted
                                 ? &hw->attn.prefill[FFN_ATTN_KV16]
                                 : NULL;
    attn_ctx c = {
        .rows = rows, .n = m, .decode = decode, .hold_c = decode && pf ? pf->compute_max : 0};
    double x[5] = {log(0.8 * tmin), log(1e-8), log(1e-8), logit(0.7), logit(0.5)};
    const int np = c.hold_c > 0 ? 4 : 5;
    nelder_mead(attn_objective, &c, x, np, 1.0, 200 * np, 3);
    attn_params(&c, x, out);
    for (size_t i = 0; i < m; i++)
        ratio[i] = rows[i].t / attn_row_s(out, &rows[i], decode);
    ffn_ratio_spread(ratio, m, &out->p10, &out->p90, &out->median_abs);
    out->points = (uint32_t)m;
    out->fitted = true;
    free(rows);
    free(ratio);
    return 0;
}

/* ---- collectives ---------------------------------------------------------------------------- */

double ffn_coll_point_predict(const ffn_link *l, const ffn_coll_point *p)
{
    /* a measured NCCL all-reduce is NCCL's alone: the custom kernel's fit stays out of it */
    static ffn_link own;
    const ffn_link *use = l;
    if (p->op == FFN_COLL_ALL_REDUCE && l->coll.n[FFN_COLL_CUSTOM_ALL_REDUCE]) {
        own = *l;
        own.coll.n[FFN_COLL_CUSTOM_ALL_REDUCE] = 0;
        use = &own;
    }
    return ffn_coll_time_s(use, (ffn_coll_op)p->op, p->bytes, p->gpus, NULL);
}

typedef struct coll_ctx {
    const ffn_coll_point *pts;
    size_t n;
    ffn_coll_op op;
    uint32_t gpus;
} coll_ctx;

static bool coll_take(const coll_ctx *c, const ffn_coll_point *p)
{
    return p->op == c->op && p->gpus == c->gpus && !p->eager && p->time_s > 0 && p->bytes > 0;
}

static double coll_objective(void *ctx, const double *x)
{
    const coll_ctx *c = ctx;
    const double a = exp(x[0]), bw = exp(x[1]);
    const double f = ffn_coll_bus_factor(c->op, (double)c->gpus);
    double sum = 0;
    for (size_t i = 0; i < c->n; i++)
        if (coll_take(c, &c->pts[i]))
            sum += fabs(log((a + f * c->pts[i].bytes / bw) / c->pts[i].time_s));
    return sum;
}

int ffn_coll_fit_op(const ffn_coll_point *pts, size_t n, ffn_coll_op op, uint32_t gpus,
                    ffn_coll_fit *out)
{
    memset(out, 0, sizeof *out);
    coll_ctx c = {.pts = pts, .n = n, .op = op, .gpus = gpus};
    size_t m = 0;
    double tmin = INFINITY, big = 0, tbig = 0, lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (!coll_take(&c, &pts[i])) continue;
        m++;
        if (pts[i].time_s < tmin) tmin = pts[i].time_s;
        if (pts[i].bytes > big) {
            big = pts[i].bytes;
            tbig = pts[i].time_s;
        }
        if (pts[i].bytes < lo) lo = pts[i].bytes;
        if (pts[i].bytes > hi) hi = pts[i].bytes;
    }
    if (m < 4 || gpus < 2) return FFN_EINVAL;
    const double f = ffn_coll_bus_factor(op, (double)gpus);
    double x[2] = {log(tmin), log(f * big / tbig)};
    nelder_mead(coll_objective, &c, x, 2, 0.5, 400, 4);
    out->gpus = gpus;
    out->latency_s = exp(x[0]);
    out->bus_bps = exp(x[1]);
    out->lo_bytes = lo;
    out->hi_bytes = hi;
    double *ratio = malloc(m * sizeof *ratio);
    if (!ratio) return FFN_ENOMEM;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (coll_take(&c, &pts[i]))
            ratio[m++] = pts[i].time_s / (out->latency_s + f * pts[i].bytes / out->bus_bps);
    ffn_ratio_spread(ratio, m, &out->p10, &out->p90, &out->median_abs);
    out->points = (uint32_t)m;
    free(ratio);
    return 0;
}

void ffn_err_median_p90(double *e, size_t n, double *median, double *p90)
{
    *median = *p90 = 0;
    if (!n) return;
    ffn_sort_doubles(e, n);
    *median = ffn_median_sorted(e, n);
    *p90 = e[(size_t)(0.9 * (double)(n - 1) + 0.5)];
}

int ffn_attn_fit_checked(const ffn_hw *hw, const ffn_attn_point *pts, size_t n, bool decode,
                         ffn_attn_kv kv, ffn_attn_eff *out, double *held_median, double *held_p90)
{
    *held_median = *held_p90 = NAN;
    int rc = ffn_attn_fit(hw, pts, n, decode, kv, out);
    if (rc) return rc;
    ffn_attn_point *train = malloc(n * sizeof *train);
    double *err = malloc(n * sizeof *err);
    ffn_hw *h = malloc(sizeof *h);
    if (!train || !err || !h) {
        free(train);
        free(err);
        free(h);
        return FFN_ENOMEM;
    }
    size_t nt = 0, nh = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (ffn_attn_kv_class(pts[i].kv_dtype) == kv && k++ % 5 != 4) train[nt++] = pts[i];
    *h = *hw;
    ffn_attn_eff *slot = decode ? &h->attn.decode[kv] : &h->attn.prefill[kv];
    if (!ffn_attn_fit(h, train, nt, decode, kv, slot)) {
        k = 0;
        for (size_t i = 0; i < n; i++)
            if (ffn_attn_kv_class(pts[i].kv_dtype) == kv && k++ % 5 == 4)
                err[nh++] = fabs(ffn_attn_point_predict(h, &pts[i], decode) / pts[i].time_s - 1.0);
        ffn_err_median_p90(err, nh, held_median, held_p90);
    }
    free(train);
    free(err);
    free(h);
    return 0;
}

int ffn_coll_sizes(const ffn_coll_point *pts, size_t n, int op, uint32_t *g)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].op != op) continue;
        int j = 0;
        while (j < k && g[j] != pts[i].gpus)
            j++;
        if (j < k || k >= FFN_COLL_MAX_SIZES) continue;
        g[k++] = pts[i].gpus;
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && g[j - 1] > g[j]; j--) {
            const uint32_t x = g[j];
            g[j] = g[j - 1];
            g[j - 1] = x;
        }
    return k;
}

int ffn_coll_fit_points(const ffn_coll_point *pts, size_t n, ffn_coll_model *m,
                        double held[FFN_COLL_COUNT][FFN_COLL_MAX_SIZES])
{
    for (int op = 0; op < FFN_COLL_COUNT; op++)
        for (int i = 0; i < FFN_COLL_MAX_SIZES; i++)
            held[op][i] = NAN;
    ffn_coll_point *train = malloc(n * sizeof *train);
    if (!train) return FFN_ENOMEM;
    for (int op = 0; op < FFN_COLL_COUNT; op++) {
        uint32_t g[FFN_COLL_MAX_SIZES];
        const int ng = ffn_coll_sizes(pts, n, op, g);
        if (!ng) continue;
        ffn_coll_model fresh = *m;
        fresh.n[op] = 0;
        for (int i = 0; i < ng; i++) {
            ffn_coll_fit f;
            if (ffn_coll_fit_op(pts, n, (ffn_coll_op)op, g[i], &f)) continue;
            /* the held-back fifth of this op and size */
            size_t nt = 0, k = 0, nh = 0;
            double e[64];
            for (size_t r = 0; r < n; r++)
                if (pts[r].op == op && pts[r].gpus == g[i] && !pts[r].eager && k++ % 5 != 4)
                    train[nt++] = pts[r];
            ffn_coll_fit f80;
            if (!ffn_coll_fit_op(train, nt, (ffn_coll_op)op, g[i], &f80)) {
                k = 0;
                const double bf = ffn_coll_bus_factor((ffn_coll_op)op, g[i]);
                for (size_t r = 0; r < n && nh < 64; r++)
                    if (pts[r].op == op && pts[r].gpus == g[i] && !pts[r].eager && k++ % 5 == 4)
                        e[nh++] =
                            fabs((f80.latency_s + bf * pts[r].bytes / f80.bus_bps) / pts[r].time_s -
                                 1.0);
                double med, p90;
                ffn_err_median_p90(e, nh, &med, &p90);
                held[op][fresh.n[op]] = med;
            }
            fresh.fit[op][fresh.n[op]++] = f;
        }
        *m = fresh;
    }
    free(train);
    return 0;
}
