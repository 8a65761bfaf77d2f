/* Timers and the core-clock estimate of ffn_measure.
 *
 * The time source is CLOCK_MONOTONIC_RAW (hardware-based, not slewed by NTP). Its resolution is
 * both reported (clock_getres) and measured (smallest non-zero step between back-to-back reads),
 * because a VM's clocksource can be much coarser than the 1 ns it claims.
 *
 * The core clock is estimated from a dependent chain of integer adds: each add needs the result
 * of the previous one and has a latency of one cycle on every x86-64 and Arm core we know, so the
 * chain retires one add per cycle however the TSC or the nominal frequency are set up. The chain
 * is written in C as `x += y` followed by an empty asm statement that claims to read and modify x
 * in a register (`__asm__ volatile("" : "+r"(x))`): the compiler can neither fold the adds nor
 * keep x in memory, so each step is exactly one register-register add (checked with objdump:
 * `add %rdx,%rax` x 32), and the loop counter runs on other ALU ports in parallel. y is a
 * register whose value the compiler cannot see (it also goes through an empty asm), because an
 * add-immediate chain (`x += 1`) is NOT one cycle per add everywhere: on the development host (a
 * Sapphire-Rapids-class Xeon VM, 2026) it ran at ~5.9 adds per nominal cycle, i.e. the front end
 * folds immediate adds (our measurement; the mechanism is not confirmed from a vendor source).
 * This file is always compiled with -O2 (see CMakeLists.txt) because at -O0 x would live on the
 * stack. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnroof/measure.h"
#include "ffnroof/sort.h"
#include "internal.h"

#if defined(CLOCK_MONOTONIC_RAW)
#define FFN_CLOCK CLOCK_MONOTONIC_RAW
#define FFN_CLOCK_NAME "CLOCK_MONOTONIC_RAW"
#else
#define FFN_CLOCK CLOCK_MONOTONIC
#define FFN_CLOCK_NAME "CLOCK_MONOTONIC"
#endif

double ffn_time_now_s(void)
{
    struct timespec ts;
    clock_gettime(FFN_CLOCK, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(FFN_CLOCK, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ffn_timer_probe(ffn_timer_info *out)
{
    if (!out) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    strcpy(out->source, FFN_CLOCK_NAME);
    struct timespec res;
    if (clock_getres(FFN_CLOCK, &res) == 0)
        out->res_reported_s = (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;

    enum { N = 20000 };
    int64_t *d = malloc(N * sizeof *d);
    if (!d) return FFN_ENOMEM;
    int64_t min_step = 0;
    for (int i = 0; i < N; i++) {
        const int64_t a = now_ns();
        int64_t b = now_ns();
        d[i] = b - a;
        /* the step: read until the clock moves, the first non-zero difference */
        if (i < 200) {
            const int64_t base = b;
            int guard = 0;
            while (b == base && guard++ < 1000000)
                b = now_ns();
            const int64_t step = b - base;
            if (step > 0 && (min_step == 0 || step < min_step)) min_step = step;
        }
    }
    ffn_sort_i64(d, N);
    out->overhead_s = 1e-9 * (double)d[N / 2];
    for (int i = 0; i < N; i++) {
        if (d[i] > 0 && (min_step == 0 || d[i] < min_step)) {
            min_step = d[i];
            break;
        }
    }
    out->res_measured_s = 1e-9 * (double)min_step;
    free(d);
    return 0;
}

/* n iterations of 32 dependent adds. noinline: the call boundary keeps the timing honest. */
__attribute__((noinline)) static uint64_t add_chain(uint64_t n, uint64_t x)
{
    uint64_t y = 1;
    __asm__ volatile("" : "+r"(y));
#define FFN_ADD1                                                                                   \
    x += y;                                                                                        \
    __asm__ volatile("" : "+r"(x));
#define FFN_ADD8 FFN_ADD1 FFN_ADD1 FFN_ADD1 FFN_ADD1 FFN_ADD1 FFN_ADD1 FFN_ADD1 FFN_ADD1
    for (uint64_t i = 0; i < n; i++) {
        FFN_ADD8 FFN_ADD8 FFN_ADD8 FFN_ADD8
    }
#undef FFN_ADD8
#undef FFN_ADD1
    return x;
}
#define FFN_ADDS_PER_ITER 32

int ffn_clock_estimate(double budget_s, ffn_clock_est *out)
{
    if (!out || !(budget_s >= 0.01)) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    strcpy(out->time_source, FFN_CLOCK_NAME);
    strcpy(out->method, "dependent chain of 1-cycle register-register adds "
                        "(C + empty asm barriers), 32 per loop iteration");
    volatile uint64_t sink = 0;
    /* size one repetition to about 1/20 of the budget, at least 2 ms */
    uint64_t n = 1000;
    double t = 0;
    for (;;) {
        const double t0 = ffn_time_now_s();
        sink = add_chain(n, sink);
        t = ffn_time_now_s() - t0;
        if (t >= 0.002 || n > (UINT64_C(1) << 40)) break;
        n *= 4;
    }
    const double rep_s = fmax(0.002, budget_s / 20.0);
    n = (uint64_t)((double)n * rep_s / fmax(t, 1e-9)) + 1;
    enum { MAXR = 64 };
    double hz[MAXR];
    int reps = 0;
    const double start = ffn_time_now_s();
    while (reps < MAXR && (reps < 5 || ffn_time_now_s() - start < budget_s)) {
        const double t0 = ffn_time_now_s();
        sink = add_chain(n, sink);
        const double dt = ffn_time_now_s() - t0;
        if (dt > 0) hz[reps++] = (double)n * FFN_ADDS_PER_ITER / dt;
    }
    (void)sink;
    if (reps == 0) return FFN_EINVAL;
    ffn_sort_doubles(hz, (size_t)reps);
    out->hz = hz[reps - 1];
    out->median_hz = ffn_quantile_sorted(hz, (size_t)reps, 0.5);
    out->spread_rel = (hz[reps - 1] - hz[0]) / out->median_hz;
    out->adds = n * FFN_ADDS_PER_ITER;
    out->reps = reps;
    return 0;
}
