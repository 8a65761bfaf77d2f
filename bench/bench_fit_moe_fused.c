/* Fits the fused-MoE model's parameters (include/ffnroof/moe_fused.h, docs/model.md section 10)
 * to one kernel's rows of an op table: Nelder-Mead on the mean |log(predicted / measured)|, from
 * the shipped parameters of the rows' activation class, every STRIDE-th row. The parameters in
 * sim/moe_fused.c come from this fit (a longer run of it: within a few percent of what these
 * three restarts of 100 iterations give):
 *   bench_fit_moe_fused hw/h100-sxm.yaml data/calib/aic-h100_sxm_moe_vllm_0.24.0_moe.tsv.gz \
 *       unquantizedfusedmoe_triton 3
 *   bench_fit_moe_fused hw/h100-sxm.yaml ...same table... fp8moe_triton 1 zeta,ep,mu
 * (the fp8 set keeps the bf16 set's zero-tile, EP and misalignment terms: its rows have neither).
 * The kernel families of hw/arch/engines.yaml (`moe:`) come from the same fit on one kernel's
 * rows of one weight format, with the module's layout given where the engine's own is not the
 * kernel's (FlashInfer's CUTLASS MoE under vLLM and SGLang is permuted), e.g.
 *   bench_fit_moe_fused hw/h100-sxm.yaml data/calib/aic-h100_sxm_moe_trtllm_1.3.0rc20_moe.tsv.gz \
 *       moe_torch_flow_cutlass@fp8 10 - permuted
 * HELD "all" fits nothing: the shipped defaults' figures. It prints the entry as engines.yaml
 * writes it, its range the p10 and p90 of measured /
 * predicted over all the kernel's rows of the format.
 * A last argument "half" fits on every other shape (hidden, inter, experts, topk) and reports
 * the rest (docs/validation.md, leave-out checks). A table that times the grouped GEMMs alone
 * (`# timed: gemms`: ROCm aiter's tuned tables, scripts/aiter_moe_tables.py) is fitted on those
 * kernels' part of the prediction, the module's fixed cost held at the shipped value.
 * usage: bench_fit_moe_fused SPEC TABLE KERNEL_SUBSTRING[@DTYPE[/ADTYPE]] [STRIDE]
 *        [HELD[=VALUE],...|-] [sorted|permuted|-] [half] */
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
static bool nongated;
static ffn_moe_fused_path path;
static bool held[NP];
static ffn_aic_timed timed; /* what the table's latencies time (`# timed:`) */

static void to_params(const double *x, ffn_moe_fused_params *p)
{
    p->module_s = x[0] * scale[0];
    p->gemm_eff = x[1];
    p->tile_s = x[2] * scale[2];
    p->kstep_s = x[3] * scale[3];
    p->zero_tile_s = x[4] * scale[4];
    p->ep_s = x[5] * scale[5];
    p->misaligned_x = x[6];
    p->path = path;
}

/* the prediction options of the fit: the parameters x, the table's engine and gating */
static void opts_of(const ffn_moe_fused_params *p, ffn_moe_fused_opts *o)
{
    ffn_moe_fused_opts_default(o);
    o->params = p;
    o->engine = engine;
    o->nongated = nongated;
}

static double objective(const double *x)
{
    for (int i = 0; i < NP; i++)
        if (!(x[i] >= 0)) return 1e9;
    if (x[1] <= 0.05 || x[1] > 1.5) return 1e9;
    /* misalignment only slows a kernel, and by a few times at most */
    if (x[6] < 1 || x[6] > 10) return 1e9;
    ffn_moe_fused_params p;
    to_params(x, &p);
    ffn_moe_fused_opts o;
    opts_of(&p, &o);
    double s = 0;
    for (size_t i = 0; i < n_rows; i++) {
        ffn_moe_fused_cost c;
        if (ffn_moe_fused_predict(&hw, &rows[i], &o, &c)) return 1e9;
        s += fabs(log(ffn_moe_fused_timed_s(&c, timed) / rows[i].time_s));
    }
    return s / (double)n_rows;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
        fputs("usage: bench_fit_moe_fused SPEC TABLE KERNEL_SUBSTRING[@DTYPE[/ADTYPE]] [STRIDE] "
              "[HELD[=VALUE],...|-] [sorted|permuted|-] [half]\n",
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
    /* the rows the engine's collector routed through a model's group-limited top-k (the models
     * of FFNROOF_DATA_DIR/models, else ./models) */
    {
        const char *dd = getenv("FFNROOF_DATA_DIR");
        char md[1024];
        snprintf(md, sizeof md, "%s/models", dd && *dd ? dd : ".");
        if (ffn_aic_route_groups(&t, md, NULL, &d)) {
            fprintf(stderr, "%s: %s\n", md, d.msg);
            return 2;
        }
    }
    const size_t stride = argc > 4 ? strtoul(argv[4], NULL, 10) : 1;
    /* a comma-separated list of names, whole, each held at the shipped value or at NAME=VALUE */
    double held_at[NP];
    bool held_set[NP] = {false};
    if (argc > 5)
        for (const char *h = argv[5]; *h;) {
            const size_t len = strcspn(h, ",");
            const size_t nl = strcspn(h, ",=");
            for (int i = 0; i < NP; i++)
                if ((strlen(names[i]) == nl && !strncmp(h, names[i], nl)) ||
                    (nl == 3 && !strncmp(h, "all", 3))) {
                    held[i] = true;
                    if (nl < len && h[nl] == '=') {
                        held_at[i] = strtod(h + nl + 1, NULL);
                        held_set[i] = true;
                    }
                }
            h += len + (h[len] == ',');
        }
    /* a permuted module has no zero-writing blocks and no Triton misalignment */
    if (argc > 6 && !strcmp(argv[6], "permuted")) held[4] = held[6] = true;
    rows = malloc((t.n_moe ? t.n_moe : 1) * sizeof *rows);
    if (!rows) return 1;
    size_t seen = 0;
    /* KERNEL_SUBSTRING[@DTYPE[/ADTYPE]]: the rows of that kernel, of that weight dtype (and
     * activation dtype) only */
    char want[128];
    snprintf(want, sizeof want, "%s", argv[3]);
    char *at = strchr(want, '@');
    ffn_dtype wdt = FFN_DT_COUNT, adt = FFN_DT_COUNT;
    if (at) {
        *at++ = 0;
        char *sl = strchr(at, '/');
        if (sl) {
            *sl++ = 0;
            if (ffn_dtype_parse(sl, &adt)) {
                fprintf(stderr, "unknown dtype '%s'\n", sl);
                return 2;
            }
        }
        if (ffn_dtype_parse(at, &wdt)) {
            fprintf(stderr, "unknown dtype '%s'\n", at);
            return 2;
        }
    }
    ffn_aic_moe *all = malloc((t.n_moe ? t.n_moe : 1) * sizeof *all);
    if (!all) return 1;
    size_t n_all = 0;
    /* "half": the shapes (hidden, inter, experts, topk) numbered as they first appear; fitted
     * on the even ones, reported on the odd ones */
    const bool half = argc > 7 && !strcmp(argv[7], "half");
    uint64_t shape[256][4];
    size_t n_shape = 0;
    for (size_t i = 0; i < t.n_moe; i++) {
        const ffn_aic_moe *m = &t.moe[i];
        if (!strstr(t.kernels[m->kernel], want) || (wdt != FFN_DT_COUNT && m->wdtype != wdt) ||
            (adt != FFN_DT_COUNT && m->adtype != adt))
            continue;
        const uint64_t key[4] = {m->hidden, m->inter, m->experts, m->topk};
        size_t si = 0;
        while (si < n_shape && memcmp(shape[si], key, sizeof key))
            si++;
        if (si == n_shape && n_shape < 256) memcpy(shape[n_shape++], key, sizeof key);
        const bool fit_side = !half || si % 2 == 0;
        if (!half || !fit_side) all[n_all++] = *m;
        if (fit_side && seen++ % (stride ? stride : 1) == 0) rows[n_rows++] = *m;
    }
    if (half) printf("leave-out: fitted on the even of %zu shapes, reported on the odd\n", n_shape);
    nongated = strstr(want, "nongated") != NULL;
    engine = t.engine;
    timed = t.timed;
    /* a table of the grouped GEMMs alone does not time the module's fixed cost: it keeps the
     * shipped value */
    if (timed == FFN_AIC_TIMED_GEMMS) held[0] = true;
    path = FFN_MF_PATH_ENGINE;
    if (argc > 6 && !strcmp(argv[6], "sorted")) path = FFN_MF_PATH_SORTED;
    if (argc > 6 && !strcmp(argv[6], "permuted")) path = FFN_MF_PATH_PERMUTED;
    if (argc > 6 && path == FFN_MF_PATH_ENGINE && strcmp(argv[6], "-")) {
        fprintf(stderr, "the layout is sorted or permuted, not '%s'\n", argv[6]);
        return 2;
    }
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
    if (path == FFN_MF_PATH_PERMUTED) {
        x[4] = 0;
        x[6] = 1;
    }
    for (int i = 0; i < NP; i++)
        if (held_set[i]) x[i] = held_at[i];
    printf("%zu rows; mean |log error| from the shipped parameters %.4f\n", n_rows, objective(x));
    bool free_any = false;
    for (int i = 0; i < NP; i++)
        free_any |= !held[i];
    double f = free_any ? 0 : objective(x);
    for (int r = 0; free_any && r < 3; r++)
        f = nelder_mead(x, 100);
    printf("fitted: mean |log error| %.4f\n", f);
    for (int i = 0; i < NP; i++)
        printf("  %-6s %.4g%s\n", names[i], x[i], scale[i] == 1 ? "" : " us");
    if (!n_all) {
        puts("no rows to report");
        return 0;
    }
    /* every row of the kernel: |predicted/measured - 1| and the spread of measured/predicted */
    double *e = malloc(n_all * sizeof *e), *q = malloc(n_all * sizeof *q);
    if (!e || !q) return 1;
    ffn_moe_fused_params pf;
    to_params(x, &pf);
    ffn_moe_fused_opts o;
    opts_of(&pf, &o);
    for (size_t i = 0; i < n_all; i++) {
        ffn_moe_fused_cost c;
        if (ffn_moe_fused_predict(&hw, &all[i], &o, &c)) return 1;
        const double pt = ffn_moe_fused_timed_s(&c, timed);
        e[i] = fabs(pt / all[i].time_s - 1.0);
        q[i] = all[i].time_s / pt;
    }
    qsort(e, n_all, sizeof *e, cmp_double);
    qsort(q, n_all, sizeof *q, cmp_double);
    printf("all %zu rows: median |e| %.1f%%, p90 |e| %.1f%%; measured/predicted p10 %.3f, p90 "
           "%.3f\n",
           n_all, 100 * e[n_all / 2], 100 * e[(size_t)(0.9 * (double)(n_all - 1))],
           q[(size_t)(0.1 * (double)(n_all - 1))], q[(size_t)(0.9 * (double)(n_all - 1))]);
    char vend[48] = "";
    if (strcmp(hw.vendor, "NVIDIA")) snprintf(vend, sizeof vend, ", vendor: %s", hw.vendor);
    printf("yaml: {kernels: %s, dtype: %s, device: %s%s%s, module: %.4g us, gemm_eff: %.4g, "
           "tile: %.4g us, "
           "kstep: %.4g us, zero_tile: %.4g us, ep: %.4g us, misaligned: %.4g, range: [%.3f, "
           "%.3f]}\n",
           want, at ? at : "?", hw.name, vend,
           path == FFN_MF_PATH_SORTED     ? ", path: sorted"
           : path == FFN_MF_PATH_PERMUTED ? ", path: permuted"
                                          : "",
           x[0], x[1], x[2], x[3], x[4], x[5] < 1e-3 ? 0.0 : x[5], x[6],
           q[(size_t)(0.1 * (double)(n_all - 1))], q[(size_t)(0.9 * (double)(n_all - 1))]);
    free(e);
    free(q);
    free(all);
    free(rows);
    ffn_aic_free(&t);
    return 0;
}
