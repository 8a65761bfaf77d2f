/* The accuracy half of `ffnroof quant` (include/ffnroof/quant_eval.h): seeded synthetic
 * layers and activations, the double-precision reference FFN, each format's FFN computed from
 * the values quant.h's reference functions give (kernels/quant/quant_ref.c), SmoothQuant's
 * migration, and the error metrics. The GEMMs are plain blocked loops in double over the
 * process's CPUs (the thread team of measure/probe/team.c): an oracle, not a kernel. */
#include "ffnroof/quant_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ffnroof/quant.h"
#include "ffnroof/rand.h"
#include "internal.h"

/* ---- formats ------------------------------------------------------------------------------ */

static const char *const kind_names[FFN_QE_COUNT] = {"int8-tensor", "int8-channel", "int4", "w8a8",
                                                     "w8a8-smooth"};

int ffn_qeval_fmt_name(const ffn_qeval_fmt *fmt, char *buf, size_t n)
{
    if (!fmt || (unsigned)fmt->kind >= FFN_QE_COUNT) return snprintf(buf, n, "?");
    if (fmt->kind == FFN_QE_INT4_GROUP)
        return snprintf(buf, n, "%s-g%u", fmt->zero_point ? "int4z" : "int4", fmt->group);
    return snprintf(buf, n, "%s", kind_names[fmt->kind]);
}

int ffn_qeval_fmt_parse(const char *s, ffn_qeval_fmt *out)
{
    if (!s || !out) return FFN_EINVAL;
    for (int k = 0; k < FFN_QE_COUNT; k++)
        if (k != FFN_QE_INT4_GROUP && !strcasecmp(s, kind_names[k])) {
            *out = (ffn_qeval_fmt){.kind = (ffn_qeval_kind)k};
            return 0;
        }
    const bool z = !strncasecmp(s, "int4z-g", 7);
    if (!z && strncasecmp(s, "int4-g", 6)) return FFN_EINVAL;
    const char *g = s + (z ? 7 : 6);
    unsigned group = 0;
    if (!strcmp(g, "32"))
        group = 32;
    else if (!strcmp(g, "64"))
        group = 64;
    else if (!strcmp(g, "128"))
        group = 128;
    else
        return FFN_EINVAL;
    *out = (ffn_qeval_fmt){.kind = FFN_QE_INT4_GROUP, .group = group, .zero_point = z};
    return 0;
}

unsigned ffn_qeval_groups_valid(size_t d, size_t f)
{
    unsigned mask = 0;
    for (unsigned i = 0; i < 3; i++) {
        const size_t g = (size_t)32 << i;
        if (d % g == 0 && f % g == 0) mask |= 1u << i;
    }
    return mask;
}

int ffn_qeval_fmt_check(const ffn_qeval_fmt *fmt, const ffn_kshape *s)
{
    if (!fmt || !s || s->d == 0 || s->f == 0 || (unsigned)s->act >= FFN_ACT_COUNT ||
        (unsigned)fmt->kind >= FFN_QE_COUNT)
        return FFN_EINVAL;
    if (fmt->kind != FFN_QE_INT4_GROUP) return fmt->group == 0 && !fmt->zero_point ? 0 : FFN_EINVAL;
    const unsigned bit = fmt->group == 32    ? 1u
                         : fmt->group == 64  ? 2u
                         : fmt->group == 128 ? 4u
                                             : 0u;
    return bit && (ffn_qeval_groups_valid(s->d, s->f) & bit) ? 0 : FFN_EINVAL;
}

double ffn_qeval_fmt_bits(const ffn_qeval_fmt *fmt, const ffn_kshape *s)
{
    if (ffn_qeval_fmt_check(fmt, s)) return 0;
    const double d = (double)s->d, f = (double)s->f;
    const double in_mats = ffn_act_gated(s->act) ? 2.0 : 1.0; /* [d][f] matrices */
    const double elems = (in_mats + 1.0) * d * f;
    switch (fmt->kind) {
    case FFN_QE_INT8_TENSOR:
        return 8.0 + 32.0 * (in_mats + 1.0) / elems;
    case FFN_QE_INT4_GROUP:
        return 4.0 + (32.0 + (fmt->zero_point ? 8.0 : 0.0)) / fmt->group;
    default: /* per output column: gate/up have K = d, down K = f */
        return 8.0 + 32.0 * (in_mats * f + d) / elems;
    }
}

void ffn_qeval_compare(const double *y, const double *ref, size_t n, ffn_qeval_metrics *out)
{
    double ee = 0, rr = 0, yy = 0, yr = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = y[i] - ref[i];
        ee += e * e;
        rr += ref[i] * ref[i];
        yy += y[i] * y[i];
        yr += y[i] * ref[i];
        if (fabs(e) > mx || isnan(e)) mx = fabs(e);
    }
    out->max_abs = mx;
    out->rel_l2 = rr > 0 ? sqrt(ee) / sqrt(rr) : ee > 0 ? INFINITY : 0.0;
    out->cosine = rr > 0 && yy > 0 ? yr / (sqrt(yy) * sqrt(rr)) : rr == 0 && yy == 0 ? 1.0 : 0.0;
}

/* ---- synthetic inputs ---------------------------------------------------------------------- */

/* A splitmix64 stream (include/ffnroof/rand.h): one word of state per purpose. */
typedef struct rng {
    uint64_t s;
} rng;

/* One stream per purpose, so that (say) the outlier settings never move the weights. */
static rng stream(uint64_t seed, uint64_t tag)
{
    rng r = {seed ^ (tag * 0xD1B54A32D192ED03ull)};
    (void)ffn_splitmix64(&r.s);
    return r;
}

static double unif(rng *r) /* [0, 1) */
{
    return (double)(ffn_splitmix64(&r->s) >> 11) * 0x1p-53;
}

static double gauss(rng *r)
{
    /* Box-Muller, one value per call */
    const double u1 = 1.0 - unif(r), u2 = unif(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Gamma(a, 1): Marsaglia and Tsang (2000) for a >= 1; a < 1 through Gamma(a + 1) U^(1/a). */
static double gamma_draw(rng *r, double a)
{
    if (a < 1.0) return gamma_draw(r, a + 1.0) * pow(1.0 - unif(r), 1.0 / a);
    const double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = gauss(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = 1.0 - unif(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}

/* Student-t with nu degrees of freedom: Z / sqrt(V / nu), V ~ chi2(nu) = 2 Gamma(nu / 2). */
static double student_t(rng *r, double nu)
{
    const double z = gauss(r), v = 2.0 * gamma_draw(r, 0.5 * nu);
    return v > 0 ? z / sqrt(v / nu) : z;
}

static int check_synth(const ffn_qeval_synth *syn)
{
    if (!syn || !(syn->outlier_frac >= 0 && syn->outlier_frac <= 1) ||
        (syn->outlier_frac > 0 && !(syn->outlier_scale >= 1 && isfinite(syn->outlier_scale))) ||
        (unsigned)syn->wdist > FFN_QW_STUDENT_T ||
        (syn->wdist == FFN_QW_STUDENT_T && !(syn->nu > 0 && isfinite(syn->nu))))
        return FFN_EINVAL;
    return 0;
}

static void fill_weights(const ffn_qeval_synth *syn, uint64_t tag, size_t K, size_t N, float *w)
{
    rng r = stream(syn->seed, tag);
    double sd = 1.0 / sqrt((double)K);
    if (syn->wdist == FFN_QW_STUDENT_T && syn->nu > 2) sd *= sqrt((syn->nu - 2) / syn->nu);
    for (size_t i = 0; i < K * N; i++)
        w[i] = (float)(sd * (syn->wdist == FFN_QW_GAUSS ? gauss(&r) : student_t(&r, syn->nu)));
}

int ffn_qeval_synth_weights(const ffn_qeval_synth *syn, const ffn_kshape *s, float *w_gate,
                            float *w_up, float *w_down)
{
    if (check_synth(syn) || !s || s->d == 0 || s->f == 0 || !w_gate || !w_down ||
        (ffn_act_gated(s->act) && !w_up))
        return FFN_EINVAL;
    fill_weights(syn, 1, s->d, s->f, w_gate);
    if (ffn_act_gated(s->act)) fill_weights(syn, 2, s->d, s->f, w_up);
    fill_weights(syn, 3, s->f, s->d, w_down);
    return 0;
}

int ffn_qeval_synth_acts(const ffn_qeval_synth *syn, size_t T, size_t d, float *x,
                         size_t *n_outliers, bool *outlier_channels)
{
    if (check_synth(syn) || d == 0 || (T && !x)) return FFN_EINVAL;
    size_t c = 0;
    if (syn->outlier_frac > 0) {
        c = (size_t)llround(syn->outlier_frac * (double)d);
        if (c < 1) c = 1;
        if (c > d) c = d;
    }
    size_t *idx = malloc(d * sizeof *idx);
    bool *is_out = calloc(d, sizeof *is_out);
    if (!idx || !is_out) {
        free(idx);
        free(is_out);
        return FFN_ENOMEM;
    }
    /* which channels: the first c of a seeded Fisher-Yates shuffle */
    rng r = stream(syn->seed, 5);
    for (size_t i = 0; i < d; i++)
        idx[i] = i;
    for (size_t i = 0; i < c; i++) {
        const size_t j = i + (size_t)(unif(&r) * (double)(d - i));
        const size_t t = idx[i];
        idx[i] = idx[j < d ? j : d - 1];
        idx[j < d ? j : d - 1] = t;
        is_out[idx[i]] = true;
    }
    rng rx = stream(syn->seed, 4);
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < d; k++) {
            const double v = gauss(&rx);
            x[t * d + k] = (float)(is_out[k] ? v * syn->outlier_scale : v);
        }
    if (n_outliers) *n_outliers = c;
    if (outlier_channels) memcpy(outlier_channels, is_out, d * sizeof *is_out);
    free(idx);
    free(is_out);
    return 0;
}

/* ---- the double-precision FFN ---------------------------------------------------------------- */

static int nthreads(int threads)
{
    return threads > 0 ? threads : ffn__allowed_cpus();
}

typedef struct gemm_job {
    size_t T, K, N;
    const double *A;   /* [T][K] */
    const float *B;    /* [K][N] */
    const float *bias; /* [N] or NULL */
    double *C;         /* [T][N] */
} gemm_job;

/* Columns in blocks of 256 (a [T][256] block of C stays in L2 while B streams), blocks dealt
 * to the threads round robin. */
static void gemm_part(void *arg, int tid, int nt)
{
    const gemm_job *j = arg;
    const size_t NB = 256, nb = (j->N + NB - 1) / NB;
    for (size_t b = (size_t)tid; b < nb; b += (size_t)nt) {
        const size_t n0 = b * NB, nn = j->N - n0 < NB ? j->N - n0 : NB;
        for (size_t t = 0; t < j->T; t++)
            for (size_t n = 0; n < nn; n++)
                j->C[t * j->N + n0 + n] = j->bias ? (double)j->bias[n0 + n] : 0.0;
        for (size_t k = 0; k < j->K; k++) {
            const float *brow = j->B + k * j->N + n0;
            for (size_t t = 0; t < j->T; t++) {
                const double a = j->A[t * j->K + k];
                if (a == 0.0) continue;
                double *c = j->C + t * j->N + n0;
                for (size_t n = 0; n < nn; n++)
                    c[n] += a * (double)brow[n];
            }
        }
    }
}

static int gemm(size_t T, size_t K, size_t N, const double *A, const float *B, const float *bias,
                double *C, int threads)
{
    if (T == 0) return 0;
    gemm_job j = {T, K, N, A, B, bias, C};
    int nt = nthreads(threads);
    const size_t blocks = (N + 255) / 256;
    if ((size_t)nt > blocks) nt = (int)blocks;
    if (nt <= 1) {
        gemm_part(&j, 0, 1);
        return 0;
    }
    return ffn__team_run(nt, gemm_part, &j);
}

typedef struct layer {
    const float *wg, *wu, *wd;
    const float *bg, *bu, *bd;
} layer;

static layer layer_of(const ffn_kshape *s, const ffn_kweights *w)
{
    return (layer){w->w_gate,
                   w->w_up,
                   w->w_down,
                   s->bias ? w->b_gate : NULL,
                   s->bias ? w->b_up : NULL,
                   s->bias ? w->b_down : NULL};
}

/* H [T][f] = act(X Wg [+ bg]) [* (X Wu [+ bu])]. */
static int first_half(const ffn_kshape *s, const layer *L, size_t T, const double *X, int threads,
                      double *H)
{
    const size_t f = s->f;
    const bool gated = ffn_act_gated(s->act);
    double *U = gated ? malloc(T * f * sizeof *U) : NULL;
    if (gated && !U && T) return FFN_ENOMEM;
    int rc = gemm(T, s->d, f, X, L->wg, L->bg, H, threads);
    if (!rc && gated) rc = gemm(T, s->d, f, X, L->wu, L->bu, U, threads);
    if (!rc)
        for (size_t i = 0; i < T * f; i++)
            H[i] = gated ? ffn_act_ref(s->act, H[i]) * U[i] : ffn_act_ref(s->act, H[i]);
    free(U);
    return rc;
}

/* Per-token int8 of v [T][K] (rows divided by div [K] first when div is not NULL), dequantized
 * back into out [T][K] as double. */
static int quant_tokens(size_t T, size_t K, const double *v, const float *div, double *out)
{
    float *vf = calloc(T * K + 1, sizeof *vf);
    int8_t *q = malloc(T * K + 1);
    float *sc = malloc(T * sizeof *sc + 1);
    int rc = vf && q && sc ? 0 : FFN_ENOMEM;
    if (!rc) {
        for (size_t t = 0; t < T; t++)
            for (size_t k = 0; k < K; k++) {
                const float f = (float)v[t * K + k];
                vf[t * K + k] = div ? f / div[k] : f;
            }
        rc = ffn_qact_quantize(T, K, vf, q, sc);
    }
    if (!rc)
        for (size_t t = 0; t < T; t++)
            for (size_t k = 0; k < K; k++)
                out[t * K + k] = (double)q[t * K + k] * (double)sc[t];
    free(vf);
    free(q);
    free(sc);
    return rc;
}

/* Y [T][d] = FFN(X) of layer L; quant_h: h quantized per token (after division by h_div). */
static int forward(const ffn_kshape *s, const layer *L, size_t T, const double *X, bool quant_h,
                   const float *h_div, int threads, double *Y)
{
    double *H = malloc(T * s->f * sizeof *H + 1);
    if (!H) return FFN_ENOMEM;
    int rc = first_half(s, L, T, X, threads, H);
    if (!rc && quant_h) rc = quant_tokens(T, s->f, H, h_div, H);
    if (!rc && !quant_h && h_div)
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < s->f; n++)
                H[t * s->f + n] /= (double)h_div[n];
    if (!rc) rc = gemm(T, s->f, s->d, H, L->wd, L->bd, Y, threads);
    free(H);
    return rc;
}

static bool finite_f(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

static int check_layer(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x)
{
    if (!s || !w || s->d == 0 || s->f == 0 || (unsigned)s->act >= FFN_ACT_COUNT ||
        s->d > ((size_t)1 << 40) / s->f || !w->w_gate || !w->w_down ||
        (ffn_act_gated(s->act) && !w->w_up) || (T && !x))
        return FFN_EINVAL;
    if (s->bias && (!w->b_gate || !w->b_down || (ffn_act_gated(s->act) && !w->b_up)))
        return FFN_EINVAL;
    const size_t df = s->d * s->f;
    if (!finite_f(w->w_gate, df) || !finite_f(w->w_down, df) ||
        (ffn_act_gated(s->act) && !finite_f(w->w_up, df)) || !finite_f(x, T * s->d))
        return FFN_EINVAL;
    return 0;
}

static double *to_double(const float *x, size_t n)
{
    double *X = malloc(n * sizeof *X + 1);
    if (X)
        for (size_t i = 0; i < n; i++)
            X[i] = x[i];
    return X;
}

int ffn_qeval_reference(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                        int threads, double *y_ref)
{
    int rc = check_layer(s, w, T, x);
    if (rc) return rc;
    if (T && !y_ref) return FFN_EINVAL;
    double *X = to_double(x, T * s->d);
    if (!X) return FFN_ENOMEM;
    const layer L = layer_of(s, w);
    rc = forward(s, &L, T, X, false, NULL, threads, y_ref);
    free(X);
    return rc;
}

/* ---- SmoothQuant ---------------------------------------------------------------------------- */

int ffn_qeval_smooth(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                     double alpha, int threads, float *x_s, float *w_gate_s, float *w_up_s,
                     float *w_down_s, float *h_div)
{
    int rc = check_layer(s, w, T, x);
    if (rc) return rc;
    const bool gated = ffn_act_gated(s->act);
    if (!(alpha >= 0 && alpha <= 1) || (T && !x_s) || !w_gate_s || !w_down_s || !h_div ||
        (gated && !w_up_s))
        return FFN_EINVAL;
    const size_t d = s->d, f = s->f, N = gated ? 2 * f : f;
    float *cat = malloc(d * N * sizeof *cat);
    float *m = malloc(d * sizeof *m);
    float *hf = malloc(T * f * sizeof *hf + 1);
    float *mh = malloc(f * sizeof *mh);
    double *X = to_double(x, T * d);
    double *H = malloc(T * f * sizeof *H + 1);
    rc = cat && m && hf && mh && X && H ? 0 : FFN_ENOMEM;
    if (rc) goto out;
    /* one m for gate and up: x is quantized once for both GEMMs */
    for (size_t k = 0; k < d; k++) {
        memcpy(cat + k * N, w->w_gate + k * f, f * sizeof *cat);
        if (gated) memcpy(cat + k * N + f, w->w_up + k * f, f * sizeof *cat);
    }
    if ((rc = ffn_smooth_factors(T, d, x, N, cat, alpha, m))) goto out;
    /* m_h from the reference h of these tokens and W_down */
    const layer L = layer_of(s, w);
    if ((rc = first_half(s, &L, T, X, threads, H))) goto out;
    for (size_t i = 0; i < T * f; i++)
        hf[i] = (float)H[i];
    if ((rc = ffn_smooth_factors(T, f, hf, d, w->w_down, alpha, mh))) goto out;
    for (size_t t = 0; t < T; t++)
        for (size_t k = 0; k < d; k++)
            x_s[t * d + k] = x[t * d + k] / m[k];
    /* h_n / m_h[n] folds into the column n of up (gated: h = act(g) u) or of gate (relu is
     * positively homogeneous); a bias would need the same division, so with biases, and for
     * the other activations, h is divided explicitly */
    const bool fold_up = gated && !s->bias, fold_gate = s->act == FFN_ACT_RELU && !s->bias;
    for (size_t k = 0; k < d; k++)
        for (size_t n = 0; n < f; n++) {
            float g = w->w_gate[k * f + n] * m[k];
            if (fold_gate) g /= mh[n];
            w_gate_s[k * f + n] = g;
            if (gated) {
                float u = w->w_up[k * f + n] * m[k];
                if (fold_up) u /= mh[n];
                w_up_s[k * f + n] = u;
            }
        }
    for (size_t n = 0; n < f; n++) {
        for (size_t j = 0; j < d; j++)
            w_down_s[n * d + j] = w->w_down[n * d + j] * mh[n];
        h_div[n] = fold_up || fold_gate ? 1.0f : mh[n];
    }
out:
    free(cat);
    free(m);
    free(hf);
    free(mh);
    free(X);
    free(H);
    return rc;
}

/* ---- one format --------------------------------------------------------------------------------
 */

/* out [K][N] = the dequantized weight of w in format qf. */
static int dequant(const ffn_qweight_fmt *qf, size_t K, size_t N, const float *w, float *out)
{
    const size_t ns = ffn_qweight_nscales(qf, K, N);
    int8_t *q = malloc(K * N);
    float *sc = malloc(ns * sizeof *sc + 1);
    uint8_t *z = malloc(ns + 1);
    int rc = q && sc && z && ns ? 0 : FFN_ENOMEM;
    if (!rc) rc = ffn_qweight_quantize(qf, K, N, w, q, sc, qf->zero_point ? z : NULL);
    if (!rc) rc = ffn_qweight_dequantize(qf, K, N, q, sc, qf->zero_point ? z : NULL, out);
    free(q);
    free(sc);
    free(z);
    return rc;
}

int ffn_qeval_run(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                  const double *y_ref, const ffn_qeval_fmt *fmt, double alpha, int threads,
                  ffn_qeval_metrics *out, double *y)
{
    int rc = check_layer(s, w, T, x);
    if (rc) return rc;
    if (ffn_qeval_fmt_check(fmt, s) || !out || (T && !y_ref) ||
        (fmt->kind == FFN_QE_W8A8_SMOOTH && !(alpha >= 0 && alpha <= 1)))
        return FFN_EINVAL;
    const size_t d = s->d, f = s->f, df = d * f;
    const bool gated = ffn_act_gated(s->act);
    const bool smooth = fmt->kind == FFN_QE_W8A8_SMOOTH;
    const bool a8 = fmt->kind == FFN_QE_W8A8 || smooth;
    ffn_qweight_fmt qf = {.gran = FFN_QG_CHANNEL, .bits = 8};
    if (fmt->kind == FFN_QE_INT8_TENSOR) qf.gran = FFN_QG_TENSOR;
    if (fmt->kind == FFN_QE_INT4_GROUP)
        qf = (ffn_qweight_fmt){
            .gran = FFN_QG_GROUP, .bits = 4, .group = fmt->group, .zero_point = fmt->zero_point};
    float *wq = malloc((gated ? 3 : 2) * df * sizeof *wq);
    float *sm = smooth ? malloc(((gated ? 3 : 2) * df + T * d + f) * sizeof *sm) : NULL;
    double *X = malloc(T * d * sizeof *X + 1);
    double *Y = y ? y : malloc(T * d * sizeof *Y + 1);
    rc = wq && (sm || !smooth) && X && Y ? 0 : FFN_ENOMEM;
    if (rc) goto out;
    /* the layer the format quantizes: the weights, or their smoothed versions */
    const float *wg = w->w_gate, *wu = w->w_up, *wd = w->w_down, *xin = x, *h_div = NULL;
    if (smooth) {
        float *sg = sm, *sd = sm + df, *su = gated ? sm + 2 * df : NULL;
        float *sx = sm + (gated ? 3 : 2) * df, *hd = sx + T * d;
        if ((rc = ffn_qeval_smooth(s, w, T, x, alpha, threads, sx, sg, su, sd, hd))) goto out;
        wg = sg, wu = su, wd = sd, xin = sx, h_div = hd;
    }
    float *qg = wq, *qd = wq + df, *qu = gated ? wq + 2 * df : NULL;
    if ((rc = dequant(&qf, d, f, wg, qg))) goto out;
    if (gated && (rc = dequant(&qf, d, f, wu, qu))) goto out;
    if ((rc = dequant(&qf, f, d, wd, qd))) goto out;
    if (a8) {
        for (size_t i = 0; i < T * d; i++)
            X[i] = xin[i];
        if ((rc = quant_tokens(T, d, X, NULL, X))) goto out;
    } else {
        for (size_t i = 0; i < T * d; i++)
            X[i] = xin[i];
    }
    const layer Lq = {qg,
                      qu,
                      qd,
                      s->bias ? w->b_gate : NULL,
                      s->bias ? w->b_up : NULL,
                      s->bias ? w->b_down : NULL};
    bool trivial_div = true;
    for (size_t n = 0; h_div && n < f; n++)
        if (h_div[n] != 1.0f) trivial_div = false;
    if ((rc = forward(s, &Lq, T, X, a8, trivial_div ? NULL : h_div, threads, Y))) goto out;
    ffn_qeval_compare(Y, y_ref, T * d, out);
out:
    free(wq);
    free(sm);
    free(X);
    if (Y != y) free(Y);
    return rc;
}
