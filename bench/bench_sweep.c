/* How fast `ffnroof sweep` evaluates a grid on one core: points per second through the sweep
 * iterator (ffn_sweep_next: ffn_predict per point, the ridge once per configuration), FFN-layer
 * evaluations per second (a point of a model with both dense and MoE layers costs one of each),
 * and the same with every row formatted as predict's CSV into /dev/null; per CPU second of the
 * thread (and per wall-clock second). The target is at least 10^6 FFN-layer evaluations per
 * second. BENCHMARKS.md records the figures.
 *
 *   bench_sweep [--seconds S] [--data REPO_DIR]   (default 1 s per case) */
#include <stdio.h>
#include <time.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/sweep.h"
#include "ffnroof/predict_write.h"
#include "ffnroof/sim.h"

#include "bench_models.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

/* Sweep the grid repeatedly for about `seconds` of CPU time; returns points per CPU second
 * (the figure on one core even when the machine is shared) and sets *wall to points per
 * wall-clock second. */
static double run(const ffn_model *m, const ffn_hw *hw, const ffn_sweep_grid *g, FILE *csv,
                  double seconds, double *wall)
{
    static ffn_result r;
    uint64_t n = 0;
    double w0 = clock_s(CLOCK_MONOTONIC), t0 = clock_s(CLOCK_THREAD_CPUTIME_ID), t;
    do {
        ffn_sweep_iter it;
        ffn_sweep_begin(&it, m, hw, g);
        int k;
        while ((k = ffn_sweep_next(&it, &r, NULL)) != 0) {
            if (k < 0) continue;
            if (csv) ffn_write_predict_csv_row(csv, m, hw, &r);
            sink += r.predicted_s;
            n++;
        }
        t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    } while (t < seconds);
    *wall = (double)n / (clock_s(CLOCK_MONOTONIC) - w0);
    return (double)n / t;
}

int main(int argc, char **argv)
{
    static bench_models b;
    if (bench_models_setup("bench_sweep", argc, argv, &b)) return 2;
    const double seconds = b.seconds;
    FILE *null = fopen("/dev/null", "w");
    if (!null) return 1;
    /* 4096 batches x 2 TP degrees, decode and prefill at 2 sequence lengths: 24,576 points. */
    static uint64_t batch[4096];
    for (int i = 0; i < 4096; i++)
        batch[i] = (uint64_t)i + 1;
    static const uint64_t seq[] = {512, 2048}, tp[] = {1, 2}, ep1[] = {1}, ep8[] = {8};
    static const ffn_dtype dt[] = {FFN_DT_BF16};
    ffn_sweep_grid g = {.phases = FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE,
                        .batch = batch,
                        .n_batch = 4096,
                        .seq = seq,
                        .n_seq = 2,
                        .tp = tp,
                        .n_tp = 2,
                        .ep = ep1,
                        .n_ep = 1,
                        .wdtype = dt,
                        .adtype = dt,
                        .n_dtype = 1};
    ffn_run_default(&g.base);
    g.base.moe.seed = 1;
    printf("%-42s %11s %13s %9s %11s\n", "sweep grid (one core)", "points/cpu-s", "layer evals/s",
           "us/point", "points/wall-s");
    struct {
        const char *name;
        const ffn_model *m;
        const uint64_t *ep;
        int csv;
    } cases[] = {
        {"llama2-7b, dense", &b.llama, ep1, 0},
        {"llama2-7b, dense, CSV to /dev/null", &b.llama, ep1, 1},
        {"mixtral-8x7b, MoE", &b.mixtral, ep1, 0},
        {"mixtral-8x7b, MoE, CSV to /dev/null", &b.mixtral, ep1, 1},
        {"deepseek-v3, dense + MoE, EP 8", &b.dsv3, ep8, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        g.ep = cases[i].ep;
        if (cases[i].m == &b.dsv3) g.n_tp = 1; /* TP 2 does not change the picture */
        double wall;
        double r = run(cases[i].m, &b.hw, &g, cases[i].csv ? null : NULL, seconds, &wall);
        uint64_t moe = ffn_model_moe_layers(cases[i].m);
        double per_point = (moe ? 1.0 : 0.0) + (cases[i].m->layers > moe ? 1.0 : 0.0);
        printf("%-42s %11.0f %13.0f %9.3f %11.0f\n", cases[i].name, r, r * per_point, 1e6 / r,
               wall);
    }
    fclose(null);
    return 0;
}
