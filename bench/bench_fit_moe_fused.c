/* Fits the fused-MoE model's parameters (include/ffnroof/moe_fused.h, docs/model.md section 10)
 * to one kernel's rows of an op table: Nelder-Mead on the mean |log(predicted / measured)|, from
 * the shipped parameters of the rows' activation class, every STRIDE-th row. The parameters in
 * sim/moe_fused.c come from this fit (a longer run of it: within a few percent of what these
 * three restarts of 100 iterations give):
 *   bench_fit_moe_fused hw/h100-sxm.yaml data/calib/aic-h100_sxm_moe_vllm_0.24.0_moe.tsv.gz \
 *       unquantizedfusedmoe_triton 3
 *   bench_fit_moe_fused hw/h100-sxm.yaml ...same table... fp8moe_triton 1 zeta,ep,mu
 * (the fp8 set keeps the bf16 set's zero-tile, EP and misalignment terms: its rows have neither).
 * usage: bench_fit_moe_fused SPEC TABLE KERNEL_SUBSTRING [STRIDE] [HELD,...] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/aic.h"
#include "ffnroof/hw.h"
#include "ffnroof/moe_fused.h"
#include "ffnroof/hw_load.h"

#define NP 7
static const char *const names[NP] = {"module", "eta", "tau", "kappa", "zeta", "ep", "mu"};
/* parameters in the units they are printed in: us for times, plain numbers else */
static const double scale[NP] = {1e-6, 1, 1e-6, 1e-6, 1e-6, 1e-6, 1};

static ffn_hw hw;
static ffn_aic_moe *rows;
static size_t n_rows;
static ffn_engine engine;
static bool held[NP];

static void to_params(const double *x, ffn_moe_fused_params *p)
{
    p->module_s = x[0] * scale[0];
    p->gemm_eff = x[1];
    p->tile_s = x[2] * scale[2];
    p->kstep_s = x[3] * scale[3];
    p->zero_tile_s = x[4] * scale[4];
    p->ep_s = x[5] * scale[5];
    p->misaligned_x = x[6];
}

static double objective(const double *x)
{
    for (int i = 0; i < NP; i++)
        if (!(x[i] >= 0)) return 1e9;
    if (x[1] <= 0.05 || x[1] > 1.5) return 1e9;
    ffn_moe_fused_params p;
    to_params(x, &p);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.params = &p;
    o.engine = engine;
    double s = 0;
    for (size_t i = 0; i < n_rows; i++) {
        ffn_moe_fused_cost c;
        if (ffn_moe_fused_predict(&hw, &rows[i], &o, &c)) return 1e9;
        s += fabs(log(c.time_s / rows[i].time_s));
    }
    return s / (double)n_rows;
}

/* Nelder-Mead over the parameters not held (the simplex moves only those). */
static double nelder_mead(double *x, int iters)
{
    double p[NP + 1][NP], f[NP + 1];
    for (int i = 0; i <= NP; i++) {
        memcpy(p[i], x, sizeof p[i]);
        if (i && !held[i - 1]) p[i][i - 1] = x[i - 1] ? x[i - 1] * 1.4 : 0.5;
        f[i] = objective(p[i]);
    }
    for (int it = 0; it < iters; it++) {
        int hi = 0, lo = 0, nh;
        for (int i = 0; i <= NP; i++) {
            if (f[i] > f[hi]) hi = i;
            if (f[i] < f[lo]) lo = i;
        }
        nh = lo;
        for (int i = 0; i <= NP; i++)
            if (i != hi && f[i] > f[nh]) nh = i;
        double c[NP] = {0}, r[NP], t[NP];
        for (int i = 0; i <= NP; i++)
            if (i != hi)
                for (int j = 0; j < NP; j++)
                    c[j] += p[i][j] / NP;
        for (int j = 0; j < NP; j++)
            r[j] = held[j] ? x[j] : c[j] + (c[j] - p[hi][j]);
        const double fr = objective(r);
        if (fr < f[lo]) {
            for (int j = 0; j < NP; j++)
                t[j] = held[j] ? x[j] : c[j] + 2 * (c[j] - p[hi][j]);
            const double ft = objective(t);
            memcpy(p[hi], ft < fr ? t : r, sizeof t);
            f[hi] = ft < fr ? ft : fr;
        } else if (fr < f[nh]) {
            memcpy(p[hi], r, sizeof r);
            f[hi] = fr;
        } else {
            for (int j = 0; j < NP; j++)
                t[j] = held[j] ? x[j] : c[j] + 0.5 * (p[hi][j] - c[j]);
            const double ft = objective(t);
            if (ft < f[hi]) {
                memcpy(p[hi], t, sizeof t);
                f[hi] = ft;
            } else {
                for (int i = 0; i <= NP; i++) {
                    if (i == lo) continue;
                    for (int j = 0; j < NP; j++)
                        p[i][j] = p[lo][j] + 0.5 * (p[i][j] - p[lo][j]);
                    f[i] = objective(p[i]);
                }
            }
        }
    }
    int lo = 0;
    for (int i = 0; i <= NP; i++)
        if (f[i] < f[lo]) lo = i;
    memcpy(x, p[lo], sizeof p[lo]);
    return f[lo];
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fputs("usage: bench_fit_moe_fused SPEC TABLE KERNEL_SUBSTRING [STRIDE] [HELD,...]\n",
              stderr);
        return 2;
    }
    ffn_diag d;
    if (ffn_hw_load(argv[1], &hw, &d)) {
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
        return 2;
    }
    ffn_aic_table t;
    if (ffn_aic_load(argv[2], &t, &d) || t.op != FFN_AIC_MOE) {
        fprintf(stderr, "%s: %s\n", argv[2], d.msg[0] ? d.msg : "not a MoE table");
        return 2;
    }
    const size_t stride = argc > 4 ? strtoul(argv[4], NULL, 10) : 1;
    if (argc > 5)
        for (int i = 0; i < NP; i++)
            held[i] = strstr(argv[5], names[i]) != NULL;
    rows = malloc((t.n_moe ? t.n_moe : 1) * sizeof *rows);
    if (!rows) return 1;
    size_t seen = 0;
    for (size_t i = 0; i < t.n_moe; i++)
        if (strstr(t.kernels[t.moe[i].kernel], argv[3]) && seen++ % (stride ? stride : 1) == 0)
            rows[n_rows++] = t.moe[i];
    engine = t.engine;
    if (!n_rows) {
        fprintf(stderr, "no rows of a kernel named like '%s'\n", argv[3]);
        return 2;
    }
    const ffn_moe_fused_params *p0 = ffn_moe_fused_default_params(rows[0].adtype);
    double x[NP] = {p0->module_s / scale[0],
                    p0->gemm_eff,
                    p0->tile_s / scale[2],
                    p0->kstep_s / scale[3],
                    p0->zero_tile_s / scale[4],
                    p0->ep_s / scale[5],
                    p0->misaligned_x};
    printf("%zu rows; mean |log error| from the shipped parameters %.4f\n", n_rows, objective(x));
    double f = 0;
    for (int r = 0; r < 3; r++)
        f = nelder_mead(x, 100);
    printf("fitted: mean |log error| %.4f\n", f);
    for (int i = 0; i < NP; i++)
        printf("  %-6s %.4g%s\n", names[i], x[i], scale[i] == 1 ? "" : " us");
    free(rows);
    ffn_aic_free(&t);
    return 0;
}
