/* Benchmark of the MoE layer forward (kernels_moe.h) with the best dense kernel of this CPU:
 * per-phase wall-clock times (route, permute, experts, shared, combine; median over repeats)
 * and the routing share, (route + permute + combine) / layer, which the benchmark holds under 10%
 * at E=8, k=2, d=2048, f=5632, T=64 (the defaults). Also the layer's FLOP/s and bytes/s from the
 * simulator's count of the same call (ffn_moe_count). Weights are random (fixed seed), so the
 * router spreads tokens about evenly; the expert weights (1.1 GB in fp32 at the defaults) are far
 * larger than the last-level cache, as they are in a real decode or small-batch step.
 *
 * usage: bench_moe [--dtype fp32|bf16] [--reps N] [--threads N] [--T N] [--d N] [--f N]
 *                  [--E N] [--k N] [--shared F] [--sigmoid]
 * FFNROOF_ISA=ref|avx512 overrides the dense kernel choice. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnroof/kernels.h"
#include "ffnroof/kernels_moe.h"
#include "ffnroof/measure.h"
#include "ffnroof/rand.h"

#include "common/bench_common.h"

static ffn_rng rng; /* seeded in main: the same weights every run */
static void fill(float *p, size_t n, float a)
{
    for (size_t i = 0; i < n; i++)
        p[i] = a * (float)(2.0 * ffn_rng_unif(&rng) - 1.0);
}

static float *new_floats(size_t n, float a)
{
    float *p = malloc(n * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_moe: out of memory (%zu floats)\n", n);
        exit(1);
    }
    fill(p, n, a);
    return p;
}

static size_t arg_size(const char *v)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v == '\0' || *end != '\0') {
        fprintf(stderr, "bench_moe: bad number '%s'\n", v);
        exit(2);
    }
    return (size_t)x;
}

static void fill_dense(ffn_kweights *w, size_t d, size_t f, bool gated)
{
    memset(w, 0, sizeof *w);
    w->w_gate = new_floats(d * f, 1.0f / sqrtf((float)d));
    w->w_up = gated ? new_floats(d * f, 1.0f / sqrtf((float)d)) : NULL;
    w->w_down = new_floats(f * d, 1.0f / sqrtf((float)f));
}
static void free_dense(ffn_kweights *w)
{
    free((void *)w->w_gate);
    free((void *)w->w_up);
    free((void *)w->w_down);
}

int main(int argc, char **argv)
{
    ffn_rng_seed(&rng, 1);
    ffn_moe_shape s = {.d = 2048,
                       .f = 5632,
                       .n_experts = 8,
                       .top_k = 2,
                       .act = FFN_ACT_SWIGLU,
                       .score = FFN_MOE_SOFTMAX,
                       .norm_topk = true};
    size_t T = 64, reps = 15;
    int threads = 0;
    ffn_dtype dt = FFN_DT_FP32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sigmoid")) {
            s.score = FFN_MOE_SIGMOID;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_moe: '%s' needs a value (or unknown option)\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--dtype")) {
            if (ffn_dtype_parse(v, &dt) != 0) {
                fprintf(stderr, "bench_moe: unknown dtype '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--reps"))
            reps = arg_size(v);
        else if (!strcmp(a, "--threads"))
            threads = (int)arg_size(v);
        else if (!strcmp(a, "--T"))
            T = arg_size(v);
        else if (!strcmp(a, "--d"))
            s.d = arg_size(v);
        else if (!strcmp(a, "--f"))
            s.f = arg_size(v);
        else if (!strcmp(a, "--E"))
            s.n_experts = arg_size(v);
        else if (!strcmp(a, "--k"))
            s.top_k = arg_size(v);
        else if (!strcmp(a, "--shared"))
            s.f_shared = arg_size(v);
        else {
            fprintf(stderr, "bench_moe: unknown option '%s'\n", a);
            return 2;
        }
    }
    if (reps == 0 || ffn_moe_shape_check(&s) != 0) {
        fprintf(stderr, "bench_moe: invalid shape or repeat count\n");
        return 2;
    }
    const ffn_kernel *k = NULL;
    ffn_diag diag;
    int rc = ffn_kernel_best(dt, &k, &diag);
    if (rc != 0) {
        fprintf(stderr, "bench_moe: no %s kernel: %s\n", ffn_dtype_name(dt), diag.msg);
        return 1;
    }
    const bool gated = ffn_act_gated(s.act);
    ffn_kweights *experts = calloc(s.n_experts, sizeof *experts);
    ffn_kweights shared;
    for (size_t e = 0; e < s.n_experts; e++)
        fill_dense(&experts[e], s.d, s.f, gated);
    if (s.f_shared) fill_dense(&shared, s.d, s.f_shared, gated);
    float *router = new_floats(s.d * s.n_experts, 2.0f / sqrtf((float)s.d));
    ffn_moe_weights w = {
        .w_router = router, .experts = experts, .shared = s.f_shared ? &shared : NULL};

    size_t pb = ffn_moe_packed_bytes(k, &s);
    void *packed = aligned_alloc(64, (pb + 63) / 64 * 64);
    size_t wsb = ffn_moe_workspace_bytes(k, &s, T, threads);
    void *ws = malloc(wsb ? wsb : 1);
    float *x = new_floats(T * s.d, 1.0f), *y = new_floats(T * s.d, 1.0f);
    if (!packed || !ws || pb == 0 || wsb == 0) {
        fprintf(stderr, "bench_moe: cannot size or allocate the layer\n");
        return 1;
    }
    double t0 = ffn_time_now_s();
    rc = ffn_moe_pack(k, &s, &w, packed, pb);
    const double pack_s = ffn_time_now_s() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_moe: pack failed: %s\n", ffn_strerror(rc));
        return 1;
    }
    /* The unpacked copies are not needed any more: free them so the run has the memory. */
    for (size_t e = 0; e < s.n_experts; e++)
        free_dense(&experts[e]);
    if (s.f_shared) free_dense(&shared);

    double *ph[7];
    for (int i = 0; i < 7; i++)
        ph[i] = calloc(reps, sizeof(double));
    ffn_kmoe_stats st;
    size_t *tokens = calloc(s.n_experts, sizeof(size_t));
    for (size_t r = 0; r <= reps; r++) { /* run 0 warms up and is not counted */
        double a = ffn_time_now_s();
        rc = ffn_moe_forward(k, &s, packed, T, x, y, ws, wsb, threads, &st);
        double wall = ffn_time_now_s() - a;
        if (rc != 0) {
            fprintf(stderr, "bench_moe: forward failed: %s\n", ffn_strerror(rc));
            return 1;
        }
        if (r == 0) {
            for (size_t e = 0; e < s.n_experts; e++)
                tokens[e] = st.routing.offset[e + 1] - st.routing.offset[e];
            continue;
        }
        const ffn_moe_timing *tm = &st.timing;
        ph[0][r - 1] = tm->route_s;
        ph[1][r - 1] = tm->permute_s;
        ph[2][r - 1] = tm->experts_s;
        ph[3][r - 1] = tm->shared_s;
        ph[4][r - 1] = tm->combine_s;
        ph[5][r - 1] = wall;
        ph[6][r - 1] = (tm->route_s + tm->permute_s + tm->combine_s) / tm->total_s;
    }
    ffn_moe_work work;
    ffn_moe_count(k, &s, T, tokens, &work);
    const char *names[7] = {"route (router GEMM + scoring + top-k)",
                            "permute (sort + gather)",
                            "experts",
                            "shared experts",
                            "combine",
                            "layer (wall)",
                            "routing share"};
    double med[7];
    for (int i = 0; i < 7; i++)
        med[i] = bench_median(ph[i], (int)reps);
    printf("bench_moe: E=%zu k=%zu d=%zu f=%zu T=%zu act=%s score=%s shared_f=%zu\n", s.n_experts,
           s.top_k, s.d, s.f, T, ffn_act_name(s.act),
           s.score == FFN_MOE_SIGMOID ? "sigmoid" : "softmax", s.f_shared);
    printf("dense kernel: %s, threads %d (0 = all), repeats %zu (median), pack %.3f s\n", k->name,
           threads, reps, pack_s);
    printf("tokens per expert:");
    for (size_t e = 0; e < s.n_experts; e++)
        printf(" %zu", tokens[e]);
    printf("  (active %zu)\n", work.active_experts);
    for (int i = 0; i < 6; i++)
        printf("  %-40s %10.3f ms\n", names[i], 1e3 * med[i]);
    printf("  %-40s %10.2f %%  (median of per-run shares; target < 10 %%)\n", names[6],
           100.0 * med[6]);
    printf("  work: %.3f GFLOP, %.1f MB -> %.1f GFLOP/s, %.1f GB/s over the layer\n",
           work.flops * 1e-9, work.bytes * 1e-6, work.flops / med[5] * 1e-9,
           work.bytes / med[5] * 1e-9);
    for (int i = 0; i < 7; i++)
        free(ph[i]);
    free(tokens);
    free(experts);
    free(router);
    free(packed);
    free(ws);
    free(x);
    free(y);
    return 0;
}
