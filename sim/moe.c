/* Mixture-of-Experts layer costs: router, top-k, dispatch/combine permutation, grouped expert
 * GEMMs sized by the tokens each expert receives, shared experts, expert parallelism with its
 * all-to-all, and the routing statistics behind them (expert coverage, load imbalance, dropped
 * tokens) from closed forms or a seeded Monte-Carlo simulation. Equations: docs/model.md. */
#include "op_internal.h"
#include "ffnroof/engine.h"
#include "ffnroof/moe_fused.h"
#include "ffnroof/rand.h"
#include "ffnroof/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_EXPERTS 4096
#define FFN_PI 3.14159265358979323846

double ffn_moe_coverage_uniform(uint64_t E, uint64_t k, uint64_t T)
{
    if (E == 0 || k == 0 || T == 0) return 0;
    if (k >= E) return (double)E;
    /* Each expert is missed by one token with probability 1 - k/E (a token picks k distinct
     * experts uniformly), so by all T tokens with (1 - k/E)^T. */
    return (double)E * -expm1((double)T * log1p(-(double)k / (double)E));
}

/* ---- closed forms: order statistics of Poisson loads ------------------------------------ */

/* Inverse of the standard normal CDF (Acklam's rational approximation, relative error
 * < 1.2e-9). */
static double probit(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    if (p <= 0) return -INFINITY;
    if (p >= 1) return INFINITY;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425) return -probit(1 - p);
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* E[max of n iid standard normals] by Blom's approximation, Phi^-1((n - 0.375)/(n + 0.25))
 * (Blom 1958; within 1% of the exact value for n >= 8, 4% at n = 2). */
static double emax_std_normal(double n)
{
    if (n <= 1) return 0;
    return probit((n - 0.375) / (n + 0.25));
}

/* E[max of n iid loads] = sum_{x>=0} (1 - F(x)^n) (the max is >= x+1 unless all are <= x)
 * (David & Nagaraja, Order Statistics, 2003). Loads are Binomial(T, q) when q > 0 (an
 * expert's exact marginal under uniform top-k routing), else Poisson(mean). Large means use
 * the normal limit: mean + sd * E[max of n standard normals]. */
static double expected_max_load(double mean, double var, double n, double T, double q)
{
    if (mean <= 0) return 0;
    if (n <= 1 || var <= 0) return mean;
    if (mean > 30) return mean + sqrt(var) * emax_std_normal(n);
    /* pmf by recursion from x = 0 */
    double p0 = q > 0 ? exp(T * log1p(-q)) : exp(-mean);
    double pmf = p0, F = 0, sum = 0;
    double xmax = mean + 14.0 * sqrt(var) + 40.0 + 5.0 * log(n);
    for (double x = 0; x <= xmax; x++) {
        F += pmf;
        if (F > 1) F = 1;
        double t = 1.0 - pow(F, n);
        sum += t;
        if (t < 1e-13 && x > mean) break;
        pmf *= q > 0 ? (T - x) / (x + 1) * q / (1 - q) : mean / (x + 1);
        if (q > 0 && x + 1 > T) break;
    }
    return sum;
}

/* E[(X - c)+] for X ~ Poisson(lam): the copies an expert must drop at capacity c. Uses
 * E[(X-c)+] = lam - c + E[(c-X)+] = lam - c + sum_{x<c} (c-x) p(x). */
static double expected_overflow_poisson(double lam, double c)
{
    if (lam <= 0) return 0;
    if (c <= 0) return lam;
    double under = 0;
    if (lam > 400) {
        /* normal approximation: E[(X-c)+] = s*phi(z) + (lam-c)*(1-Phi(z)), z = (c-lam)/s */
        double s = sqrt(lam), z = (c + 0.5 - lam) / s;
        double phi = exp(-0.5 * z * z) / sqrt(2 * FFN_PI), Phi = 0.5 * erfc(-z / sqrt(2.0));
        double v = s * phi + (lam - c - 0.5) * (1 - Phi);
        return v > 0 ? v : 0;
    }
    double p = exp(-lam);
    for (double x = 0; x < c; x++) {
        under += (c - x) * p;
        p *= lam / (x + 1);
    }
    double v = lam - c + under;
    return v > 0 ? v : 0;
}

/* ---- Monte-Carlo routing ------------------------------------------------------------------ */

/* Popularity of each expert (sums to 1): histogram, Zipf, or uniform. */
static int popularity(uint64_t E, const ffn_moe_opts *o, double *p)
{
    double z = 0;
    for (uint64_t i = 0; i < E; i++) {
        if (o && o->popularity && o->n_popularity == E)
            p[i] = o->popularity[i];
        else if (o && o->zipf_s > 0)
            p[i] = pow((double)(i + 1), -o->zipf_s);
        else
            p[i] = 1.0;
        if (!(p[i] >= 0) || !isfinite(p[i])) return FFN_EINVAL;
        z += p[i];
    }
    if (!(z > 0)) return FFN_EINVAL;
    for (uint64_t i = 0; i < E; i++)
        p[i] /= z;
    return 0;
}

/* One token's k distinct experts, drawn without replacement in proportion to popularity
 * (Gumbel-top-k, equivalent to successive sampling: Kool et al. 2019). */
static void route_token(ffn_rng *r, uint64_t E, uint64_t k, const double *logp, bool uniform,
                        uint32_t *perm, double *key, uint32_t *chosen)
{
    if (uniform) {
        /* partial Fisher-Yates over a persistent permutation */
        for (uint64_t j = 0; j < k; j++) {
            uint64_t pick = j + ffn_rng_next(r) % (E - j);
            uint32_t t = perm[j];
            perm[j] = perm[pick];
            perm[pick] = t;
            chosen[j] = perm[j];
        }
        return;
    }
    for (uint64_t i = 0; i < E; i++)
        key[i] = logp[i] - log(-log(ffn_rng_unif_open(r)));
    for (uint64_t j = 0; j < k; j++) {
        uint64_t best = 0;
        double bk = -INFINITY;
        for (uint64_t i = 0; i < E; i++)
            if (key[i] > bk) bk = key[i], best = i;
        chosen[j] = (uint32_t)best;
        key[best] = -INFINITY;
    }
}

static int simulate(uint64_t E, uint64_t k, uint64_t T, uint64_t n_dev, const ffn_moe_opts *o,
                    double cap, ffn_moe_stats *out)
{
    double p[MAX_EXPERTS], logp[MAX_EXPERTS], key[MAX_EXPERTS], load[MAX_EXPERTS];
    double dev[MAX_EXPERTS];
    uint32_t perm[MAX_EXPERTS], chosen[MAX_EXPERTS];
    int rc = popularity(E, o, p);
    if (rc) return rc;
    bool uniform = true;
    for (uint64_t i = 0; i < E; i++) {
        logp[i] = log(p[i]);
        if (fabs(p[i] - 1.0 / (double)E) > 1e-12) uniform = false;
        perm[i] = (uint32_t)i;
    }
    uint64_t trials = o && o->trials ? o->trials : 64;
    ffn_rng r;
    ffn_rng_seed(&r, o ? o->seed : 0);
    /* Exact per-token routing while it is affordable; beyond, per-expert loads drawn from the
     * normal approximation of Binomial(T, q_i) with inclusion probabilities q_i estimated from
     * 4096 routed tokens. */
    bool exact = (double)T * (double)trials * (uniform ? (double)k : (double)E) <= 3e7;
    double q[MAX_EXPERTS] = {0};
    if (!exact) {
        const uint64_t S = 4096;
        for (uint64_t t = 0; t < S; t++) {
            route_token(&r, E, k, logp, uniform, perm, key, chosen);
            for (uint64_t j = 0; j < k; j++)
                q[chosen[j]] += 1.0 / (double)S;
        }
        if (uniform)
            for (uint64_t i = 0; i < E; i++)
                q[i] = (double)k / (double)E;
    }
    double sum_cov = 0, sum_max = 0, sum_dmax = 0, sum_dcov = 0, sum_drop = 0;
    const double copies = (double)T * (double)k;
    for (uint64_t tr = 0; tr < trials; tr++) {
        memset(load, 0, E * sizeof load[0]);
        if (exact) {
            for (uint64_t t = 0; t < T; t++) {
                route_token(&r, E, k, logp, uniform, perm, key, chosen);
                for (uint64_t j = 0; j < k; j++)
                    load[chosen[j]] += 1;
            }
        } else {
            for (uint64_t i = 0; i < E; i++) {
                double mu = (double)T * q[i], sd = sqrt(mu * (1 - q[i]));
                double x = floor(mu + sd * ffn_rng_normal(&r) + 0.5);
                load[i] = x < 0 ? 0 : x;
            }
        }
        double mx = 0, drop = 0, cov = 0;
        memset(dev, 0, n_dev * sizeof dev[0]);
        double dcount[MAX_EXPERTS] = {0};
        for (uint64_t i = 0; i < E; i++) {
            if (load[i] > mx) mx = load[i];
            if (load[i] > 0) cov += 1, dcount[i % n_dev] += 1;
            if (cap > 0 && load[i] > cap) drop += load[i] - cap;
            dev[i % n_dev] += load[i]; /* round-robin placement of experts on devices */
        }
        uint64_t dbest = 0;
        for (uint64_t d = 1; d < n_dev; d++)
            if (dev[d] > dev[dbest]) dbest = d;
        sum_cov += cov;
        sum_max += mx;
        sum_dmax += dev[dbest];
        sum_dcov += dcount[dbest];
        sum_drop += copies > 0 ? drop / copies : 0;
    }
    double n = (double)trials;
    out->experts_touched = sum_cov / n;
    out->max_expert_load = sum_max / n;
    out->max_device_load = sum_dmax / n;
    out->experts_touched_device = sum_dcov / n;
    out->dropped_fraction = sum_drop / n;
    out->monte_carlo = true;
    return 0;
}

int ffn_moe_routing(uint64_t E, uint64_t k, uint64_t T, uint64_t n_dev, const ffn_moe_opts *o,
                    double capacity_factor, ffn_moe_stats *out)
{
    memset(out, 0, sizeof *out);
    if (E == 0 || k == 0 || k > E || E > MAX_EXPERTS || n_dev == 0 || n_dev > E) return FFN_EINVAL;
    if (o && o->popularity && o->n_popularity != E) return FFN_EINVAL;
    if (o && !(o->zipf_s >= 0 && isfinite(o->zipf_s))) return FFN_EINVAL;
    if (T == 0) return 0;
    const double copies = (double)T * (double)k;
    out->mean_expert_load = copies / (double)E;
    const double mean_dev = copies / (double)n_dev;
    /* capacity per expert (GShard/Switch: C * T*k/E), in whole tokens */
    const double cap = capacity_factor > 0 ? floor(capacity_factor * out->mean_expert_load) : 0;
    bool skewed = o && ((o->popularity && o->n_popularity) || o->zipf_s > 0);
    if (skewed || (o && o->trials)) {
        int rc = simulate(E, k, T, n_dev, o, cap, out);
        if (rc) return rc;
    } else {
        /* Closed forms under uniform routing: an expert's load is Binomial(T, k/E); a
         * device's is the sum over its experts, with the hypergeometric variance of k distinct
         * picks per token. Loads are treated as independent for the maximum. */
        double lam = out->mean_expert_load;
        double e_local = ceil((double)E / (double)n_dev);
        double q = (double)k / (double)E;
        out->experts_touched = ffn_moe_coverage_uniform(E, k, T);
        out->experts_touched_device = e_local * out->experts_touched / (double)E;
        out->max_expert_load =
            q >= 1 ? lam : expected_max_load(lam, (double)T * q * (1 - q), (double)E, (double)T, q);
        double pd = e_local / (double)E; /* share of experts on one device */
        double dvar =
            (double)T * (double)k * pd * (1 - pd) * (E > 1 ? (double)(E - k) / (double)(E - 1) : 0);
        out->max_device_load =
            n_dev > 1 ? expected_max_load(lam * e_local, dvar, (double)n_dev, (double)T, 0)
                      : copies;
        out->dropped_fraction = cap > 0 ? expected_overflow_poisson(lam, cap) / lam : 0;
    }
    if (out->max_expert_load < out->mean_expert_load) out->max_expert_load = out->mean_expert_load;
    if (out->max_device_load < mean_dev) out->max_device_load = mean_dev;
    out->imbalance = out->mean_expert_load > 0 ? out->max_expert_load / out->mean_expert_load : 1;
    out->device_imbalance = mean_dev > 0 ? out->max_device_load / mean_dev : 1;
    return 0;
}

/* ---- the experts as the engine's fused-MoE kernels run them ------------------------------ */

/* n copies over the experts [lo, lo + m): act of them active (at least enough that none takes
 * more than the T tokens there are), the copies spread evenly over those */
static void spread(uint64_t *counts, uint32_t lo, uint32_t m, uint64_t act, uint64_t n, uint64_t T)
{
    if (!m || !n) return;
    const uint64_t need = (n + T - 1) / T;
    if (act < need) act = need;
    if (act < 1) act = 1;
    if (act > m) act = m;
    for (uint64_t i = 0; i < act; i++)
        counts[lo + i] = n / act + (i < n % act ? 1 : 0);
}

/* a = (1 - w) a + w b, for the fields of an op that add up */
static void blend_op(ffn_op *a, const ffn_op *b, double w)
{
#define MIX(f) a->f = (1.0 - w) * a->f + w * b->f
    MIX(flops);
    MIX(vec_ops);
    MIX(bytes);
    MIX(weight_bytes);
    MIX(roofline_s);
    MIX(predicted_s);
    MIX(memory_s);
    for (int i = 0; i <= FFN_HW_MAX_LEVELS; i++)
        MIX(served_bytes[i]);
}

static void blend_cost(ffn_moe_fused_cost *a, const ffn_moe_fused_cost *b, double w)
{
    MIX(time_s);
    MIX(gemm_flops);
    MIX(gemm_bytes);
    MIX(weight_bytes);
    MIX(active_experts);
    MIX(local_copies);
    MIX(padded_rows);
    MIX(max_expert_tokens);
    for (int i = 0; i < FFN_MF_COUNT; i++) {
        MIX(kernel_s[i]);
        if (b->ops[i].name[0]) blend_op(&a->ops[i], &b->ops[i], w);
    }
#undef MIX
}

/* The routed experts of one layer as a fused-MoE kernel family of parameters par runs them
 * (include/ffnroof/moe_fused.h): the group's T tokens, the busiest device's copies spread
 * evenly over its touched experts, the rest over the other devices' touched experts, costed by
 * ffn_moe_fused_cost_counts; a fractional expected number of touched experts (uniform routing's
 * coverage) is the blend of the two whole numbers around it, so that the weights read are the
 * expected ones. With a routing skew alpha > 0 the copies are the op tables' own power-law draws
 * of per-expert loads instead (docs/model.md, "Routing skew"), the mean of their costs. Fills c
 * (its ops) and returns 0, or FFN_EINVAL where the fused model cannot
 * take the layer (more experts than it holds, an EP degree that does not divide them): the
 * generic model prices it then. */
static int fused_experts(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, uint64_t T,
                         const ffn_moe_fused_params *par, double alpha, double copies_dev,
                         double touched_dev, double touched_all, ffn_moe_fused_cost *c)
{
    const ffn_moe_cfg *mc = &m->moe;
    const uint32_t N = run->ep ? (uint32_t)run->ep : 1;
    ffn_aic_moe row = {
        .tokens = T,
        .hidden = m->hidden,
        .inter = mc->expert_intermediate,
        .topk = (uint32_t)mc->top_k,
        .experts = (uint32_t)mc->n_experts,
        .tp = run->tp ? (uint32_t)run->tp : 1,
        .ep = N,
        .wdtype = run->wdtype,
        .adtype = run->adtype,
        .group = run->group_size,
        .draw = FFN_DRAW_BALANCED,
    };
    if (mc->n_experts > FFN_MOE_FUSED_MAX_EXPERTS || mc->top_k > UINT32_MAX ||
        run->tp > UINT32_MAX || ffn_moe_fused_check(&row))
        return FFN_EINVAL;
    const uint32_t E = row.experts, local = E / N;
    const uint64_t all = T * row.topk;
    uint64_t here = (uint64_t)llround(copies_dev);
    if (here > all) here = all;
    if (here > (uint64_t)local * T) here = (uint64_t)local * T;
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.engine = hw->moe_engine;
    o.weights = run->weights_level > 0 ? FFN_WEIGHTS_HOT : FFN_WEIGHTS_COLD;
    o.nongated = !ffn_act_gated(m->act);
    o.params = par;
    if (alpha > 0) {
        /* skewed routing: the collector's power-law draws of per-expert loads, the busiest EP
         * group on this device, the mean of FFN_MOE_FUSED_DRAWS draws */
        row.draw = FFN_DRAW_POWER_LAW;
        row.alpha = alpha;
        o.seed = run->moe.seed;
        return ffn_moe_fused_predict(hw, &row, &o, c);
    }
    const double lo = floor(touched_dev), w = touched_dev - lo;
    const uint64_t others =
        N > 1 && touched_all > touched_dev ? (uint64_t)llround(touched_all - touched_dev) : 0;
    for (int j = 0; j < (w > 1e-9 ? 2 : 1); j++) {
        uint64_t counts[FFN_MOE_FUSED_MAX_EXPERTS] = {0};
        spread(counts, 0, local, (uint64_t)lo + (uint64_t)j, here, T);
        if (N > 1) spread(counts, local, E - local, others, all - here, T);
        ffn_moe_fused_cost x;
        const int rc = ffn_moe_fused_cost_counts(hw, &row, counts, E, &o, j ? &x : c);
        if (rc) return rc;
        if (j) blend_cost(c, &x, w);
    }
    return 0;
}

/* ---- the layer ---------------------------------------------------------------------------- */

double ffn_moe_routing_alpha(const ffn_moe_cfg *c, const ffn_moe_opts *o)
{
    if (o && (o->zipf_s > 0 || (o->popularity && o->n_popularity))) return 0;
    return o && o->routing_alpha >= 0 ? o->routing_alpha : c->routing_alpha;
}

static void push(ffn_layer_cost *c, const ffn_op *op)
{
    if (c->n_ops < FFN_MAX_OPS) c->ops[c->n_ops++] = *op;
}

/* All-to-all of `bytes` leaving each device, to n-1 peers: pairwise exchange, the off-node share
 * over the scale-out network when the group spans nodes. */
static void alltoall(ffn_op *op, const ffn_hw *hw, const char *name, double bytes_per_dev,
                     uint64_t n, uint64_t per_node)
{
    ffn__op_comm_init(op, name);
    if (n <= 1 || bytes_per_dev <= 0) return;
    double N = (double)n;
    op->bytes = bytes_per_dev;
    bool fitted = false;
    if (!(per_node && per_node < n)) {
        /* one node: the link's fitted all-to-all where it covers n devices, its message the
         * send buffer with the device's own chunk (bytes_per_dev is the n-1 chunks it sends) */
        const double t = ffn_coll_time_s(&hw->scaleup, FFN_COLL_ALLTOALL,
                                         bytes_per_dev * N / (N - 1.0), n, &fitted);
        if (fitted) {
            op->roofline_s = op->predicted_s = t;
            return;
        }
    }
    double node = (double)(per_node && per_node < n ? per_node : n);
    double on = bytes_per_dev * (node - 1.0) / (N - 1.0), off = bytes_per_dev - on;
    double t_on = 0, t_off = 0;
    if (on > 0)
        t_on = on / (hw->scaleup.bandwidth_bps > 0 ? hw->scaleup.bandwidth_bps : 1.0) +
               (node - 1.0) * hw->scaleup.latency_s;
    if (off > 0) {
        const ffn_link *l = hw->scaleout.bandwidth_bps > 0 ? &hw->scaleout : &hw->scaleup;
        t_off = off / (l->bandwidth_bps > 0 ? l->bandwidth_bps : 1.0) + (N - node) * l->latency_s;
    }
    op->bytes = bytes_per_dev;
    op->roofline_s = op->predicted_s = t_on > t_off ? t_on : t_off;
}

int ffn_moe_layer(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, uint64_t T,
                  ffn_layer_cost *out, ffn_moe_detail *det, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    memset(det, 0, sizeof *det);
    const ffn_moe_cfg *c = &m->moe;
    const uint64_t E = c->n_experts, k = c->top_k;
    const uint64_t N = run->ep ? run->ep : 1, tp = run->tp ? run->tp : 1;
    if (E == 0 || k == 0 || k > E)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "MoE top-k %llu is not in [1, %llu]",
                            (unsigned long long)k, (unsigned long long)E);
    if (N > E)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--ep %llu is larger than the %llu experts", (unsigned long long)N,
                            (unsigned long long)E);
    if (E % N && !run->moe.ep_uneven)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--ep %llu does not divide the %llu experts (add --ep-uneven)",
                            (unsigned long long)N, (unsigned long long)E);
    if (N > 1 && hw->scaleup.bandwidth_bps <= 0 && hw->scaleout.bandwidth_bps <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--ep %llu needs an interconnect, and hw '%s' has none",
                            (unsigned long long)N, hw->name);
    if (c->expert_intermediate % tp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--tp %llu does not divide the expert intermediate size %llu",
                            (unsigned long long)tp, (unsigned long long)c->expert_intermediate);
    /* Activations between the experts' GEMMs (router input, dispatch, combine, all-to-all,
     * all-reduce) move in their memory dtype: act_io_dtype for W8A8, whose int8 copies exist
     * only inside each expert's GEMMs (the per-token quantisation is charged there), else
     * adtype. */
    const double ab = ffn_run_act_bytes(run);
    /* The router is kept in 16-bit or wider even when experts are quantised. */
    ffn_dtype rdt = ffn_dtype_bits(run->wdtype) < 16 ? FFN_DT_BF16 : run->wdtype;
    const double rb = ffn_dtype_bytes(rdt, 0);
    const ffn_dtype rcdt = ffn_compute_dtype(hw, rdt, run->adtype);
    const double D = (double)m->hidden, Ed = (double)E, K = (double)k;
    /* Attention is data-parallel across the EP group: each device routes its T/N tokens. */
    const uint64_t T_dev = (T + N - 1) / N;
    const double Td = (double)T_dev;
    const double cf = run->moe.capacity_factor > 0 ? run->moe.capacity_factor : c->capacity_factor;

    int rc = ffn_moe_routing(E, k, T, N, &run->moe, cf, &det->stats);
    if (rc)
        return ffn_diag_set(diag, rc, NULL, 0, 0,
                            "invalid MoE routing options (histogram length must be %llu, "
                            "entries >= 0, Zipf exponent finite)",
                            (unsigned long long)E);
    const ffn_moe_stats *st = &det->stats;
    det->experts_per_device = ceil(Ed / (double)N);

    /* Experts on the most loaded device: its token copies spread over the experts it has that
     * were touched; each expert's GEMM is sized by its own tokens (grouped GEMM). */
    double copies_dev = N > 1 ? st->max_device_load : (double)T * K;
    if (cf > 0) copies_dev *= 1.0 - st->dropped_fraction;
    double touched = N > 1 ? st->experts_touched_device : st->experts_touched;
    if (touched < 1 && copies_dev > 0) touched = 1;
    /* On a GPU spec under a serving engine (ffn_hw_apply_engine), top-k, dispatch, the experts
     * and the combine are priced as the engine's fused MoE module runs them: by the engine's
     * kernel family of the weights' format among the device's vendor's entries, else by the
     * fused model's defaults, each with the range ffn_moe_kernel_on gives; elsewhere, and for a
     * layer the fused model cannot take, the generic ops below. */
    bool fused = false;
    ffn_moe_fused_cost fc;
    const ffn_engine_moe *fam;
    if (ffn_moe_fused_applies(hw, &run->moe, run->wdtype, run->adtype, &fam, &det->fused_p10,
                              &det->fused_p90)) {
        const ffn_moe_fused_params *par =
            fam ? &fam->params : ffn_moe_fused_default_params(run->adtype);
        const double alpha = ffn_moe_routing_alpha(c, &run->moe);
        fused = !fused_experts(m, hw, run, T, par, alpha, copies_dev, touched, st->experts_touched,
                               &fc);
        if (fused) {
            snprintf(det->fused, sizeof det->fused, "%s", fam ? fam->kernels : "defaults");
            det->fused_dtype = fam ? fam->dtype : run->wdtype;
            det->fused_engine = hw->moe_engine;
            det->fused_block_m = fc.block_m;
            det->fused_padded_rows = fc.padded_rows;
            det->fused_alpha = alpha;
        }
    }
    if (!fused) det->fused_p10 = det->fused_p90 = 0;

    ffn_op op;
    /* Router: [T_dev, d] x [d, E] logits in fp32, scoring and top-k over E per token. */
    ffn_op_gemm_counts(&op, "router", T_dev, E, m->hidden, 1, rb, ab, rcdt, 0);
    op.bytes = op.weight_bytes + Td * D * ab + Td * Ed * 4.0;
    if (c->shared_gate) { /* Qwen2-MoE: sigmoid gate of the shared expert, a d x 1 GEMV */
        op.flops += 2.0 * Td * D;
        op.weight_bytes += D * rb;
        op.bytes += D * rb;
    }
    ffn_op_recost(&op, hw);
    det->router_s += op.predicted_s;
    push(out, &op);
    if (fused) {
        /* the fused kernels, by the part of the layer each is (names as the generic ops') */
        static const char *const names[FFN_MF_COUNT] = {
            [FFN_MF_ROUTER] = "score_topk",         [FFN_MF_ALIGN] = "dispatch",
            [FFN_MF_QUANT_IN] = "experts_quant_in", [FFN_MF_GATE_UP] = "experts_gate_up",
            [FFN_MF_ACT] = "experts_act",           [FFN_MF_QUANT_MID] = "experts_quant_mid",
            [FFN_MF_DOWN] = "experts_down",         [FFN_MF_COMBINE] = "combine",
            [FFN_MF_MODULE] = "experts_module",
        };
        for (int i = 0; i < FFN_MF_COUNT; i++) {
            if (!fc.ops[i].name[0]) continue; /* a kernel the format does not run */
            ffn_op kop = fc.ops[i];
            snprintf(kop.name, sizeof kop.name, "%s", names[i]);
            if (i == FFN_MF_GATE_UP || i == FFN_MF_DOWN) {
                /* the work is the routed copies' (the padding to the row tile is in the
                 * time, not in the FLOPs a roofline counts) */
                ffn_op r = kop;
                r.flops = 2.0 * fc.local_copies * (double)kop.n * (double)kop.k;
                ffn_op_recost(&r, hw);
                r.predicted_s = kop.predicted_s;
                r.predicted_bound = kop.predicted_bound;
                kop = r;
            }
            det->fused_s += kop.predicted_s;
            if (i == FFN_MF_ROUTER)
                det->router_s += kop.predicted_s;
            else if (i == FFN_MF_ALIGN)
                det->dispatch_s += kop.predicted_s;
            else if (i == FFN_MF_COMBINE)
                det->combine_s += kop.predicted_s;
            else
                det->expert_s += kop.predicted_s;
            if (i != FFN_MF_COMBINE)
                push(out, &kop);
            else
                fc.ops[i] = kop; /* after the combine's all-to-all */
        }
    } else {
        /* scoring: softmax 5 FLOPs/logit (max, sub, exp, sum, div) or sigmoid 4; top-k as
         * E*log2(k+1) comparisons; group-limited routing adds a pass over the groups. */
        double per = c->scoring == FFN_SCORE_SIGMOID ? 4.0 : 5.0;
        double fl = Td * Ed * (per + log2(K + 1.0));
        if (c->n_group > 1) fl += Td * Ed * 2.0;
        double by = Td * Ed * 4.0 + Td * K * 8.0; /* logits in; (index, weight) pairs out */
        ffn_op_elem(&op, hw, "score_topk", FFN_OP_ELEMWISE, Td * Ed, fl, by);
        det->router_s += op.predicted_s;
        push(out, &op);
        /* Dispatch: T_dev*k token copies gathered into expert order (read + write). */
        ffn_op_elem(&op, hw, "dispatch", FFN_OP_MEMORY, Td * K * D, 0, 2.0 * Td * K * D * ab);
        det->dispatch_s = op.predicted_s;
        push(out, &op);
    }
    /* Each device sends its T_dev*k copies minus those for its own experts: the group total is
     * T*k*d*bytes*(N-1)/N per direction, the same back for the combine. */
    const double a2a_per_dev = Td * K * D * ab * ((double)N - 1.0) / (double)N;
    const uint64_t dpn = run->moe.devices_per_node
                             ? run->moe.devices_per_node
                             : (hw->devices_per_node ? hw->devices_per_node : N);
    if (N > 1) {
        det->alltoall_bytes = (double)T * K * D * ab * ((double)N - 1.0) / (double)N;
        alltoall(&op, hw, "alltoall_dispatch", a2a_per_dev, N, dpn);
        det->alltoall_s += op.predicted_s;
        push(out, &op);
    }
    const uint64_t fe = c->expert_intermediate / tp;
    if (!fused && copies_dev > 0) {
        double per_expert = copies_dev / touched;
        /* The busiest expert sets the pace of a grouped GEMM's last wave; size the per-expert
         * GEMM by the mean, and let the imbalance show through the device load above. */
        /* (less a rounding error: the closed-form coverage of T = 1, k = 2 comes out as
         * 1.9999999999999998 experts, which must size two GEMMs of one row, not of two) */
        uint64_t m_exp = (uint64_t)ceil(per_expert * (1.0 - 1e-12));
        uint64_t inst = (uint64_t)ceil(touched * (1.0 - 1e-12));
        if (m_exp < 1) m_exp = 1;
        if (inst < 1) inst = 1;
        /* Costed on the rounded grid, scaled to the expected token copies and experts. */
        double tok_scale = copies_dev / ((double)m_exp * (double)inst);
        double w_scale = touched / (double)inst;
        ffn_layer_cost ex;
        memset(&ex, 0, sizeof ex);
        ffn_dense_ops_scaled(hw, run, m->hidden, fe, m->act, m->mlp_bias, m_exp, inst, "experts_",
                             tok_scale, w_scale, &ex);
        for (int i = 0; i < ex.n_ops; i++) {
            det->expert_s += ex.ops[i].predicted_s;
            push(out, &ex.ops[i]);
        }
    }
    if (c->n_shared && c->shared_intermediate) {
        ffn_layer_cost sh;
        memset(&sh, 0, sizeof sh);
        uint64_t fs = c->n_shared * c->shared_intermediate / tp;
        ffn_dense_ops(hw, run, m->hidden, fs, m->act, m->mlp_bias, T_dev, 1, "shared_", &sh);
        for (int i = 0; i < sh.n_ops; i++) {
            det->shared_s += sh.ops[i].predicted_s;
            push(out, &sh.ops[i]);
        }
    }
    if (N > 1) {
        alltoall(&op, hw, "alltoall_combine", a2a_per_dev, N, dpn);
        det->alltoall_s += op.predicted_s;
        push(out, &op);
    }
    if (fused) {
        push(out, &fc.ops[FFN_MF_COMBINE]);
    } else {
        /* Combine: k weighted copies per token summed back in token order. */
        ffn_op_elem(&op, hw, "combine", FFN_OP_MEMORY, Td * K * D, 2.0 * Td * K * D,
                    Td * K * D * ab + Td * K * 4.0 + Td * D * ab);
        det->combine_s = op.predicted_s;
        push(out, &op);
    }
    if (tp > 1) {
        ffn_op_allreduce(&op, &hw->scaleup, "allreduce", Td * D * ab, tp);
        push(out, &op);
    }
    /* each expert's gate/up [d][g fe] and down [fe][d] with their scales (docs/model.md) */
    const uint64_t gfe = ffn_act_gated(m->act) ? 2 * fe : fe;
    det->expert_weight_bytes_device =
        det->experts_per_device *
        (ffn_weight_matrix_bytes(run->wdtype, run->group_size, run->zero_point, m->hidden, gfe) +
         ffn_weight_matrix_bytes(run->wdtype, run->group_size, run->zero_point, fe, m->hidden));
    ffn_layer_sum(out, hw);
    return 0;
}
