/* How fast the simulator evaluates: FFN-layer evaluations per second (dense and MoE) and whole
 * `ffn_predict` calls per second, on one core, over a grid of token counts so that nothing is
 * constant-folded. Prints a table; BENCHMARKS.md records the figures.
 *
 *   bench_sim [--seconds S]   (default 1 s per case) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

/* Thread CPU time: the rate per CPU-second is what one core does, even on a loaded machine
 * (the wall-clock rate is printed beside it). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

typedef struct bench_ctx {
    const ffn_model *m;
    const ffn_hw *hw;
    ffn_run run;
} bench_ctx;

static void dense(bench_ctx *c, uint64_t i)
{
    ffn_layer_cost l;
    ffn_dense_layer(c->hw, &c->run, c->m->hidden, c->m->intermediate, c->m->act, false,
                    1 + (i & 4095), &l);
    sink += l.predicted_s;
}

static void moe(bench_ctx *c, uint64_t i)
{
    ffn_layer_cost l;
    ffn_moe_detail d;
    ffn_moe_layer(c->m, c->hw, &c->run, 1 + (i & 4095), &l, &d, NULL);
    sink += l.predicted_s;
}

static void predict(bench_ctx *c, uint64_t i)
{
    static ffn_result r;
    c->run.batch = 1 + (i & 255);
    ffn_predict(c->m, c->hw, &c->run, &r, NULL);
    sink += r.predicted_s;
}

static double rate(void (*fn)(bench_ctx *, uint64_t), bench_ctx *c, double seconds,
                   double *wall_rate)
{
    uint64_t n = 0, batch = 64;
    double t0 = cpu_now(), w0 = wall_now(), t;
    do {
        for (uint64_t i = 0; i < batch; i++) fn(c, n + i);
        n += batch;
        t = cpu_now() - t0;
    } while (t < seconds);
    *wall_rate = (double)n / (wall_now() - w0);
    return (double)n / t;
}

static int load(const char *dir, const char *hw_name, const char *model_name, ffn_hw *hw,
                ffn_model *m)
{
    char p[1024];
    ffn_diag d;
    snprintf(p, sizeof p, "%s/hw/%s.yaml", dir, hw_name);
    if (ffn_hw_load(p, hw, &d)) {
        fprintf(stderr, "bench_sim: %s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
        return 2;
    }
    snprintf(p, sizeof p, "%s/models/%s.yaml", dir, model_name);
    if (ffn_model_load(p, m, &d)) {
        fprintf(stderr, "bench_sim: %s:%d:%d: %s\n", d.file, d.line, d.col, d.msg);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    const char *dir = FFNROOF_BENCH_SOURCE_DIR;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: bench_sim [--seconds S] [--data REPO_DIR]\n");
            return 2;
        }
    }
    static ffn_hw hw;
    static ffn_model llama, mixtral, dsv3;
    if (load(dir, "h100-sxm", "llama2-7b", &hw, &llama) ||
        load(dir, "h100-sxm", "mixtral-8x7b", &hw, &mixtral) ||
        load(dir, "h100-sxm", "deepseek-v3", &hw, &dsv3))
        return 2;
    bench_ctx c = {.hw = &hw};
    ffn_run_default(&c.run);
    c.run.phase = FFN_PHASE_DECODE;
    printf("%-44s %12s %9s %12s\n", "case (one core)", "evals/cpu-s", "us/eval", "evals/wall-s");
    struct {
        const char *name;
        void (*fn)(bench_ctx *, uint64_t);
        const ffn_model *m;
        uint64_t ep;
    } cases[] = {
        {"dense FFN layer (llama2-7b, T 1..4096)", dense, &llama, 1},
        {"MoE layer (mixtral-8x7b, T 1..4096)", moe, &mixtral, 1},
        {"MoE layer (deepseek-v3, EP 8, T 1..4096)", moe, &dsv3, 8},
        {"ffn_predict (llama2-7b decode, with ridge)", predict, &llama, 1},
        {"ffn_predict (mixtral-8x7b decode, w/ ridge)", predict, &mixtral, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c.m = cases[i].m;
        c.run.ep = cases[i].ep;
        double w, r = rate(cases[i].fn, &c, seconds, &w);
        printf("%-44s %12.0f %9.3f %12.0f\n", cases[i].name, r, 1e6 / r, w);
    }
    return 0;
}
