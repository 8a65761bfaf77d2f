/* How fast the simulator evaluates: FFN-layer evaluations per second (dense and MoE) and whole
 * `ffn_predict` calls per second, on one core, over a grid of token counts so that nothing is
 * constant-folded. Prints a table; BENCHMARKS.md records the figures.
 *
 *   bench_sim [--seconds S] [--data REPO_DIR]   (default 1 s per case) */
#include <stdio.h>
#include <time.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/measure.h"
#include "ffnroof/sim.h"

#include "bench_models.h"

/* Thread CPU time: the rate per CPU-second is what one core does, even on a loaded machine
 * (the wall-clock rate is printed beside it). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
    double t0 = cpu_now(), w0 = ffn_time_now_s(), t;
    do {
        for (uint64_t i = 0; i < batch; i++)
            fn(c, n + i);
        n += batch;
        t = cpu_now() - t0;
    } while (t < seconds);
    *wall_rate = (double)n / (ffn_time_now_s() - w0);
    return (double)n / t;
}

int main(int argc, char **argv)
{
    static bench_models b;
    if (bench_models_setup("bench_sim", argc, argv, &b)) return 2;
    const double seconds = b.seconds;
    bench_ctx c = {.hw = &b.hw};
    ffn_run_default(&c.run);
    c.run.phase = FFN_PHASE_DECODE;
    printf("%-44s %12s %9s %12s\n", "case (one core)", "evals/cpu-s", "us/eval", "evals/wall-s");
    struct {
        const char *name;
        void (*fn)(bench_ctx *, uint64_t);
        const ffn_model *m;
        uint64_t ep;
    } cases[] = {
        {"dense FFN layer (llama2-7b, T 1..4096)", dense, &b.llama, 1},
        {"MoE layer (mixtral-8x7b, T 1..4096)", moe, &b.mixtral, 1},
        {"MoE layer (deepseek-v3, EP 8, T 1..4096)", moe, &b.dsv3, 8},
        {"ffn_predict (llama2-7b decode, with ridge)", predict, &b.llama, 1},
        {"ffn_predict (mixtral-8x7b decode, w/ ridge)", predict, &b.mixtral, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c.m = cases[i].m;
        c.run.ep = cases[i].ep;
        double w, r = rate(cases[i].fn, &c, seconds, &w);
        printf("%-44s %12.0f %9.3f %12.0f\n", cases[i].name, r, 1e6 / r, w);
    }
    return 0;
}
