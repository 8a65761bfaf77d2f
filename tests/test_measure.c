/* Tests of ffn_measure without counters: statistics on known samples, the repeat-until-stable
 * driver, ERT-style plateau detection on synthetic noisy curves with two and three levels, the
 * timer and clock estimate, smoke runs of every peak and bandwidth microbenchmark at tiny sizes,
 * the calibration driver's cancellation, and the calibration -> ffn_hw conversion. Everything
 * here is sized to run in a few seconds (also under ASan+UBSan). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnroof/calibrate.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "ffnroof/sort.h"
#include "../measure/calibrate/cal_internal.h"
#include "../measure/probe/internal.h"

/* ---------------------------------------------------------------------------------------------
 * statistics */

Test(measure, stats_known_values)
{
    const double x[10] = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6};
    ffn_stats s;
    cr_assert_eq(ffn_stats_compute(x, 10, &s), 0);
    cr_expect_eq(s.n, 10);
    cr_expect_float_eq(s.min, 1.0, 1e-12);
    cr_expect_float_eq(s.max, 10.0, 1e-12);
    cr_expect_float_eq(s.median, 5.5, 1e-12);
    cr_expect_float_eq(s.p90, 9.1, 1e-12); /* type 7: 9 + 0.1 * (10 - 9) */
    cr_expect_float_eq(s.mean, 5.5, 1e-12);
    cr_expect_float_eq(s.stdev, sqrt(82.5 / 9.0), 1e-12);
    cr_expect_float_eq(s.mad, 2.5, 1e-12);
    /* the input is not reordered */
    cr_expect_float_eq(x[0], 7.0, 0);
}

Test(measure, stats_robust_to_outlier)
{
    const double x[5] = {1.0, 1.0, 1.0, 1.0, 100.0};
    ffn_stats s;
    cr_assert_eq(ffn_stats_compute(x, 5, &s), 0);
    cr_expect_float_eq(s.median, 1.0, 1e-12);
    cr_expect_float_eq(s.mad, 0.0, 1e-12);
    cr_expect_float_eq(s.mean, 20.8, 1e-12);
    cr_expect_gt(s.stdev, 40.0);
    const double one = 3.0;
    cr_assert_eq(ffn_stats_compute(&one, 1, &s), 0);
    cr_expect_float_eq(s.stdev, 0.0, 0);
    cr_expect_float_eq(s.p90, 3.0, 0);
}

Test(measure, stats_rejects_bad_input)
{
    ffn_stats s;
    const double x[2] = {1.0, NAN};
    cr_expect_eq(ffn_stats_compute(x, 0, &s), FFN_EINVAL);
    cr_expect_eq(ffn_stats_compute(x, 2, &s), FFN_EINVAL);
    cr_expect_eq(ffn_stats_compute(NULL, 2, &s), FFN_EINVAL);
    const double sorted[4] = {1, 2, 3, 4};
    cr_expect_float_eq(ffn_quantile_sorted(sorted, 4, 0.5), 2.5, 1e-12);
    cr_expect_float_eq(ffn_quantile_sorted(sorted, 4, 0.0), 1.0, 0);
    cr_expect_float_eq(ffn_quantile_sorted(sorted, 4, 1.0), 4.0, 0);
}

typedef struct fake_sampler {
    int calls;
    int fail_at;  /* 0 = never */
    double noise; /* relative alternating noise */
} fake_sampler;

static int fake_sample(void *ctx, double *out)
{
    fake_sampler *f = ctx;
    f->calls++;
    if (f->fail_at && f->calls == f->fail_at) return FFN_EIO;
    /* deterministic noise: a pseudo-random walk in [1 - noise, 1 + noise] */
    const double u = (double)((f->calls * 7919) % 101) / 100.0; /* 0..1 */
    *out = 1.0 + f->noise * (2.0 * u - 1.0);
    return 0;
}

Test(measure, repeat_stops_when_stable)
{
    fake_sampler f = {0, 0, 0.0};
    const ffn_repeat_opts o = {.warmup = 2,
                               .batch = 3,
                               .window = 3,
                               .rel_spread = 0.01,
                               .max_samples = 500,
                               .time_cap_s = 10};
    ffn_repeat_result r;
    cr_assert_eq(ffn_repeat_until_stable(fake_sample, &f, &o, &r), 0);
    cr_expect(r.stable);
    cr_expect_eq(r.stats.n, 9);   /* 3 batches of 3, the first moment it can be stable */
    cr_expect_eq(f.calls, 2 + 9); /* warm-up samples ran but are not kept */
    cr_expect_float_eq(r.stats.median, 1.0, 1e-12);
}

Test(measure, repeat_caps_unstable_runs)
{
    fake_sampler f = {0, 0, 0.5};
    const ffn_repeat_opts o = {.warmup = 0,
                               .batch = 1,
                               .window = 4,
                               .rel_spread = 0.001,
                               .max_samples = 40,
                               .time_cap_s = 10};
    ffn_repeat_result r;
    cr_assert_eq(ffn_repeat_until_stable(fake_sample, &f, &o, &r), 0);
    cr_expect_not(r.stable);
    cr_expect_eq(r.stats.n, 40);
    cr_expect_gt(r.spread, 0.001);
}

/* A sample that takes `secs` of wall time and reports alternating costs (never stable). */
typedef struct slow_sampler {
    int calls;
    double secs;
} slow_sampler;

static int slow_sample(void *ctx, double *out)
{
    slow_sampler *s = ctx;
    s->calls++;
    const struct timespec ts = {0, (long)(s->secs * 1e9)};
    nanosleep(&ts, NULL);
    *out = s->secs * (s->calls % 2 ? 1.0 : 1.5);
    return 0;
}

Test(measure, repeat_times_slow_samples_for_the_cap_not_nine_times_over)
{
    ffn_repeat_opts o = {.batch = 3, .window = 3, .rel_spread = 0.01, .time_cap_s = 0.25};
    ffn_repeat_result r;
    slow_sampler s = {0, 0.1};
    /* off: nine samples, whatever they cost */
    cr_assert_eq(ffn_repeat_until_stable(slow_sample, &s, &o, &r), 0);
    cr_expect_eq(r.stats.n, 9);
    /* on: the first sample (0.1 s) costs more than the cap / 9, so ceil(0.25 / 0.1) = 3 */
    o.slow_min_samples = 3;
    s.calls = 0;
    cr_assert_eq(ffn_repeat_until_stable(slow_sample, &s, &o, &r), 0);
    cr_expect_eq(r.stats.n, 3);
    cr_expect_geq(r.elapsed_s, 0.25);
    /* a warm-up sample is the estimate when there is one: 3 (not 2) is the floor */
    o.warmup = 1;
    o.time_cap_s = 0.15;
    s.calls = 0;
    cr_assert_eq(ffn_repeat_until_stable(slow_sample, &s, &o, &r), 0);
    cr_expect_eq(r.stats.n, 3);
    cr_expect_eq(s.calls, 4);
    /* cheap samples keep the nine */
    fake_sampler f = {0, 0, 0.0};
    const ffn_repeat_opts q = {
        .batch = 3, .window = 3, .rel_spread = 0.01, .time_cap_s = 10, .slow_min_samples = 3};
    cr_assert_eq(ffn_repeat_until_stable(fake_sample, &f, &q, &r), 0);
    cr_expect_eq(r.stats.n, 9);
}

Test(measure, repeat_passes_errors_on)
{
    fake_sampler f = {0, 5, 0.0};
    ffn_repeat_result r;
    cr_expect_eq(ffn_repeat_until_stable(fake_sample, &f, NULL, &r), FFN_EIO);
    cr_expect_eq(ffn_repeat_until_stable(NULL, &f, NULL, &r), FFN_EINVAL);
}

/* ---------------------------------------------------------------------------------------------
 * plateau detection on synthetic curves */

typedef struct syn_level {
    double bw, capacity; /* capacity 0 for the last level */
} syn_level;

/* A cache-like curve shaped like the measured ones: level i serves the share of the traffic that
 * fits in it, which falls from 1 to 0 log-linearly between 0.8 x and 2 x its capacity (real
 * caches with adaptive replacement lose their hits over about an octave); time per byte is the
 * traffic-weighted sum of 1/bw. Multiplicative noise of +-noise from a fixed LCG. */
static double fits(double capacity, double s)
{
    if (capacity <= 0) return 1.0;
    const double lo = 0.8 * capacity, hi = 2.0 * capacity;
    if (s <= lo) return 1.0;
    if (s >= hi) return 0.0;
    return log(hi / s) / log(hi / lo);
}

static size_t synth_curve(const syn_level *lv, int nl, double noise, int ppo, double *size,
                          double *bw, unsigned seed)
{
    size_t n = 0;
    unsigned state = seed;
    for (double s = 16384; s <= 1024.0 * 1024 * 1024 * 1.0001; s *= pow(2.0, 1.0 / ppo)) {
        double t = 0, covered = 0;
        for (int i = 0; i < nl; i++) {
            const double f = fmax(covered, fits(lv[i].capacity, s));
            t += (f - covered) / lv[i].bw;
            covered = f;
        }
        state = state * 1103515245u + 12345u;
        const double u = (double)((state >> 8) & 0xFFFF) / 65535.0;
        size[n] = s;
        bw[n] = (1.0 / t) * (1.0 + noise * (2.0 * u - 1.0));
        n++;
    }
    return n;
}

Test(measure, plateau_three_levels_noisy)
{
    const syn_level lv[3] = {{400e9, 48.0 * 1024}, {150e9, 2.0 * 1024 * 1024}, {20e9, 0}};
    double size[256], bw[256];
    for (unsigned seed = 1; seed <= 5; seed++) {
        const size_t n = synth_curve(lv, 3, 0.03, 4, size, bw, seed);
        ffn_level out[FFN_MAX_LEVELS];
        int nl = -1;
        cr_assert_eq(ffn_plateau_detect(size, bw, n, NULL, out, FFN_MAX_LEVELS, &nl), 0);
        cr_assert_eq(nl, 3, "seed %u: %d levels", seed, nl);
        cr_expect_str_eq(out[0].name, "L1");
        cr_expect_str_eq(out[1].name, "L2");
        cr_expect_str_eq(out[2].name, "DRAM");
        for (int i = 0; i < 3; i++)
            cr_expect(fabs(out[i].bandwidth_bps / lv[i].bw - 1.0) < 0.05, "level %d: %g vs %g", i,
                      out[i].bandwidth_bps, lv[i].bw);
        for (int i = 0; i < 2; i++) {
            const double r = out[i].capacity_bytes / lv[i].capacity;
            cr_expect(r > 0.5 && r < 2.0, "capacity %d: %g vs %g", i, out[i].capacity_bytes,
                      lv[i].capacity);
        }
        cr_expect_float_eq(out[2].capacity_bytes, 0.0, 0);
    }
}

Test(measure, plateau_two_levels_noisy)
{
    const syn_level lv[2] = {{90e9, 32.0 * 1024 * 1024}, {12e9, 0}};
    double size[256], bw[256];
    for (unsigned seed = 11; seed <= 15; seed++) {
        const size_t n = synth_curve(lv, 2, 0.04, 3, size, bw, seed);
        ffn_level out[FFN_MAX_LEVELS];
        int nl = -1;
        cr_assert_eq(ffn_plateau_detect(size, bw, n, NULL, out, FFN_MAX_LEVELS, &nl), 0);
        cr_assert_eq(nl, 2, "seed %u: %d levels", seed, nl);
        cr_expect(fabs(out[0].bandwidth_bps / 90e9 - 1.0) < 0.05);
        cr_expect(fabs(out[1].bandwidth_bps / 12e9 - 1.0) < 0.05);
        const double r = out[0].capacity_bytes / lv[0].capacity;
        cr_expect(r > 0.5 && r < 2.0, "capacity %g", out[0].capacity_bytes);
        cr_expect_lt(out[0].last_bytes, out[1].first_bytes);
    }
}

Test(measure, plateau_ignores_small_steps_and_dips)
{
    /* a 10 % step is below the 15 % threshold: one level, not two */
    double size[40], bw[40];
    for (int i = 0; i < 40; i++) {
        size[i] = 16384.0 * pow(2.0, i / 2.0);
        bw[i] = i < 20 ? 100e9 : 90e9;
    }
    ffn_level out[FFN_MAX_LEVELS];
    int nl;
    cr_assert_eq(ffn_plateau_detect(size, bw, 40, NULL, out, FFN_MAX_LEVELS, &nl), 0);
    cr_expect_eq(nl, 1);
    /* a short dip below a longer, higher plateau is replaced by it */
    for (int i = 0; i < 40; i++)
        bw[i] = i < 12 ? 200e9 : i < 16 ? 10e9 : 30e9;
    cr_assert_eq(ffn_plateau_detect(size, bw, 40, NULL, out, FFN_MAX_LEVELS, &nl), 0);
    cr_assert_eq(nl, 2);
    cr_expect_float_eq(out[1].bandwidth_bps, 30e9, 1e-3);
    /* bad input */
    cr_expect_eq(ffn_plateau_detect(size, bw, 0, NULL, out, FFN_MAX_LEVELS, &nl), FFN_EINVAL);
    size[3] = 1.0; /* not ascending */
    cr_expect_eq(ffn_plateau_detect(size, bw, 40, NULL, out, FFN_MAX_LEVELS, &nl), FFN_EINVAL);
}

/* ---------------------------------------------------------------------------------------------
 * timers, clock, host */

Test(measure, timer_and_clock)
{
    ffn_timer_info ti;
    cr_assert_eq(ffn_timer_probe(&ti), 0);
    cr_expect_gt(ti.res_measured_s, 0.0);
    cr_expect_lt(ti.res_measured_s, 1e-3);
    cr_expect_gt(ti.overhead_s, 0.0);
    const double a = ffn_time_now_s(), b = ffn_time_now_s();
    cr_expect_geq(b, a);
    ffn_clock_est ce;
    cr_assert_eq(ffn_clock_estimate(0.03, &ce), 0);
    /* any real core runs between 0.3 and 7 GHz; a folded add chain would read far higher */
    cr_expect(ce.hz > 0.3e9 && ce.hz < 7e9, "clock %g Hz", ce.hz);
    cr_expect_geq(ce.hz, ce.median_hz);
    cr_expect_gt(ce.reps, 4);
    cr_expect_eq(ffn_clock_estimate(0.0, &ce), FFN_EINVAL);
}

Test(measure, host_info)
{
    ffn_host_info h;
    cr_assert_eq(ffn_host_info_get(&h), 0);
    cr_expect_gt(strlen(h.host), 0);
    cr_expect_gt(strlen(h.cpu_model), 0);
    cr_expect_geq(h.online_cpus, 1);
    cr_expect_geq(h.allowed_cpus, 1);
    cr_expect_gt(h.phys_mem_bytes, 0.0);
    for (int i = 0; i < h.n_caches; i++) {
        cr_expect_gt(h.caches[i].size_bytes, 0.0);
        cr_expect(h.caches[i].level >= 1 && h.caches[i].level <= 4);
    }
    if (h.n_caches > 0) cr_expect_gt(ffn_host_llc_bytes(&h), 0.0);
    const ffn_cpu_caps *c = ffn_cpu_caps_get();
#if defined(__x86_64__)
    cr_expect(c->x86_64);
    /* implications the detection must respect */
    if (c->avx512_bf16 || c->avx512_vnni || c->avx512_fp16) cr_expect(c->avx512f);
#else
    (void)c;
#endif
}

/* ---------------------------------------------------------------------------------------------
 * microbenchmark smoke tests */

Test(measure, peaks_smoke)
{
    int ran = 0;
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        cr_expect_not_null(ffn_peak_name((ffn_peak_kind)k));
        ffn_peak_result r;
        /* (an SVE kind's work follows the vector length: none without SVE) */
        if ((k != FFN_PEAK_INT8_SVE_SDOT && k != FFN_PEAK_FP32_SVE) || ffn_cpu_sve_vl_bytes() > 0)
            cr_expect_gt(ffn_peak_flops_per_iter((ffn_peak_kind)k), 0.0);
        if (!ffn_peak_available((ffn_peak_kind)k)) {
            cr_expect_eq(ffn_peak_measure((ffn_peak_kind)k, 1, 0.002, 0.01, &r), FFN_EUNSUPPORTED);
            continue;
        }
        for (int t = 1; t <= 2; t++) {
            cr_assert_eq(ffn_peak_measure((ffn_peak_kind)k, t, 0.002, 0.02, &r), 0, "%s",
                         ffn_peak_name((ffn_peak_kind)k));
            cr_expect(isfinite(r.flops_per_s) && r.flops_per_s > 0, "%s x%d: %g",
                      ffn_peak_name((ffn_peak_kind)k), t, r.flops_per_s);
            cr_expect_geq(r.flops_per_s, r.median_flops_per_s);
            cr_expect_eq(r.threads, t);
            cr_expect_geq(r.samples, 5);
        }
        ran++;
    }
    cr_expect_geq(ran, 1); /* the portable kernel always runs */
    cr_expect(ffn_peak_available(FFN_PEAK_FP32_PORTABLE));
    ffn_peak_result r;
    cr_expect_eq(ffn_peak_measure(FFN_PEAK_FP32_PORTABLE, 0, 0.01, 0.1, &r), FFN_EINVAL);
    cr_expect_eq(ffn_peak_measure(FFN_PEAK_COUNT, 1, 0.01, 0.1, &r), FFN_EINVAL);
}

Test(measure, one_threads_peak_chains_run_for_their_caller)
{
    /* bench_kernels times ffn_peak_run itself, in the rounds of the kernels it measures */
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        if (!ffn_peak_available((ffn_peak_kind)k)) {
            cr_expect_eq(ffn_peak_run((ffn_peak_kind)k, 100), 0.0, "%s",
                         ffn_peak_name((ffn_peak_kind)k));
            continue;
        }
        const double v = ffn_peak_run((ffn_peak_kind)k, 1000);
        cr_expect(isfinite(v), "%s: %g", ffn_peak_name((ffn_peak_kind)k), v);
    }
    /* the portable chains start at 0.1 + 0.01 j and decay towards c / (1 - m) = 1: a sum of
     * 32 values between 0.1 and 1.31 after any number of iterations */
    const double v = ffn_peak_run(FFN_PEAK_FP32_PORTABLE, 1000);
    cr_expect(v > 3.2 && v < 42.0, "%g", v);
    cr_expect_eq(ffn_peak_run(FFN_PEAK_COUNT, 10), 0.0);
}

/* One int8 dot-product probe: where the CPU has its instructions it runs on one and
 * two threads and gives a positive, finite rate, and its name says the ISA that set it; where
 * it lacks them the probe refuses to run, and the test says so. */
static void int8_probe(ffn_peak_kind k, const char *isa_word, ffn_isa level, const char *needs)
{
    cr_assert_eq(ffn_peak_dtype(k), FFN_DT_INT8);
    cr_assert_not_null(strstr(ffn_peak_name(k), isa_word), "%s", ffn_peak_name(k));
    cr_assert(ffn_peak_allowed_at(k, level), "%s under FFNROOF_ISA=%s", ffn_peak_name(k),
              ffn_isa_name(level));
    cr_assert_not(ffn_peak_allowed_at(k, FFN_ISA_PORTABLE), "%s", ffn_peak_name(k));
    ffn_peak_result r;
    if (!ffn_peak_available(k)) {
        cr_assert_eq(ffn_peak_measure(k, 1, 0.002, 0.01, &r), FFN_EUNSUPPORTED);
        cr_skip("this CPU (or this build) has no %s: %s not measured", needs, ffn_peak_name(k));
    }
    const double fpi = ffn_peak_flops_per_iter(k);
    cr_assert(isfinite(fpi) && fpi > 0, "%s: %g ops per iteration", ffn_peak_name(k), fpi);
    for (int t = 1; t <= 2; t++) {
        cr_assert_eq(ffn_peak_measure(k, t, 0.002, 0.02, &r), 0, "%s", ffn_peak_name(k));
        cr_assert(isfinite(r.flops_per_s) && r.flops_per_s > 0, "%s x%d: %g", ffn_peak_name(k), t,
                  r.flops_per_s);
        cr_assert_eq(r.kind, k);
        cr_assert_geq(r.samples, 5);
    }
}

Test(measure, int8_probe_avx512_vnni)
{
    int8_probe(FFN_PEAK_INT8_VNNI, "vnni", FFN_ISA_AVX512, "AVX512-VNNI (VPDPBUSD zmm)");
}

Test(measure, int8_probe_avx_vnni)
{
    int8_probe(FFN_PEAK_INT8_AVX_VNNI, "vnni", FFN_ISA_AVX2, "AVX-VNNI (VPDPBUSD ymm)");
}

Test(measure, int8_probe_amx)
{
    int8_probe(FFN_PEAK_INT8_AMX, "amx", FFN_ISA_AMX, "AMX-INT8 with the tile permission");
}

Test(measure, int8_probe_avx2_without_vnni)
{
    int8_probe(FFN_PEAK_INT8_AVX2, "avx2", FFN_ISA_AVX2, "AVX2 (VPMADDUBSW/VPMADDWD)");
}

Test(measure, int8_probe_neon_sdot)
{
    int8_probe(FFN_PEAK_INT8_NEON_SDOT, "sdot", FFN_ISA_NEON, "FEAT_DotProd (SDOT)");
}

Test(measure, int8_probe_neon_i8mm)
{
    int8_probe(FFN_PEAK_INT8_NEON_I8MM, "i8mm", FFN_ISA_NEON, "FEAT_I8MM (SMMLA)");
}

Test(measure, int8_probe_portable_always_runs)
{
    /* the roof of an int8 kernel in plain C (FFNROOF_ISA=portable, or a CPU with no int8 dot
     * product): on every CPU, at every level */
    const ffn_peak_kind k = FFN_PEAK_INT8_PORTABLE;
    cr_assert_eq(ffn_peak_dtype(k), FFN_DT_INT8);
    cr_assert_str_eq(ffn_peak_name(k), "int8_portable");
    cr_assert(ffn_peak_available(k));
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        cr_assert(ffn_peak_allowed_at(k, (ffn_isa)i), "%s", ffn_isa_name((ffn_isa)i));
    for (int t = 1; t <= 2; t++) {
        ffn_peak_result r;
        cr_assert_eq(ffn_peak_measure(k, t, 0.002, 0.02, &r), 0);
        cr_assert(isfinite(r.flops_per_s) && r.flops_per_s > 0, "x%d: %g", t, r.flops_per_s);
    }
}

Test(measure, int8_probe_sve_sdot)
{
    int8_probe(FFN_PEAK_INT8_SVE_SDOT, "sve", FFN_ISA_SVE, "SVE (SDOT z)");
    /* the ops per iteration follow the vector length: 16 SDOT x VL bytes x 2 */
    cr_assert_float_eq(ffn_peak_flops_per_iter(FFN_PEAK_INT8_SVE_SDOT),
                       32.0 * (double)ffn_cpu_sve_vl_bytes(), 1e-9);
}

/* The SVE FMA probe: runs where SVE does (qemu -cpu max,sve-default-vector-length=16|32|64 in
 * .ci/aarch64.sh), its FLOPs follow the vector length, FFNROOF_ISA=neon rules it out. */
Test(measure, fp32_probe_sve_fmla)
{
    const ffn_peak_kind k = FFN_PEAK_FP32_SVE;
    cr_assert_str_eq(ffn_peak_name(k), "fp32_sve_fmla");
    cr_assert_eq(ffn_peak_dtype(k), FFN_DT_FP32);
    cr_assert_not(ffn_peak_allowed_at(k, FFN_ISA_NEON));
    if (!ffn_peak_available(k)) cr_skip_test("this CPU (or build) has no SVE");
    cr_assert_float_eq(ffn_peak_flops_per_iter(k), 8.0 * (double)ffn_cpu_sve_vl_bytes(), 1e-9);
    for (int t = 1; t <= 2; t++) {
        ffn_peak_result r;
        cr_assert_eq(ffn_peak_measure(k, t, 0.002, 0.02, &r), 0);
        cr_assert(isfinite(r.flops_per_s) && r.flops_per_s > 0, "x%d: %g", t, r.flops_per_s);
    }
}

/* Every bandwidth kernel set this CPU runs (portable, AVX2, AVX-512, SVE at any vector length
 * under qemu) computes what it streams: the read sum, the copy, the triad, with and without
 * non-temporal stores, on 3 x 256 floats (small integers: every sum exact). */
Test(measure, bandwidth_kernels_compute_what_they_stream)
{
    ffn__bw_kernels ks[4];
    const char *names[4];
    const size_t nk = ffn__bw_kernel_sets(ks, names, 4);
    cr_assert_geq(nk, 1);
    cr_assert_str_eq(names[0], "portable");
    enum { N = 3 * FFN__BW_ALIGN_ELEMS };
    float *a = aligned_alloc(64, N * 4), *b = aligned_alloc(64, N * 4),
          *c = aligned_alloc(64, N * 4);
    cr_assert(a && b && c);
    for (size_t i = 0; i < nk; i++) {
        double want = 0;
        for (size_t e = 0; e < N; e++) {
            a[e] = (float)(e % 7);
            want += (double)(e % 7);
        }
        cr_assert_float_eq(ks[i].read(a, N), want, 0, "%s read", names[i]);
        for (int nt = 0; nt < 2; nt++) {
            double (*cp)(float *restrict, const float *restrict, size_t) =
                nt ? ks[i].copy_nt : ks[i].copy;
            if (!cp) continue;
            memset(b, 0, N * 4);
            cp(b, a, N);
            cr_assert_arr_eq(b, a, N * 4, "%s copy%s", names[i], nt ? "_nt" : "");
            double (*tr)(float *restrict, const float *restrict, const float *restrict, float,
                         size_t) = nt ? ks[i].triad_nt : ks[i].triad;
            if (!tr) continue;
            for (size_t e = 0; e < N; e++)
                c[e] = (float)(e % 5);
            tr(b, a, c, 3.0f, N);
            for (size_t e = 0; e < N; e++)
                cr_assert_float_eq(b[e], (float)(e % 7) + 3.0f * (float)(e % 5), 0,
                                   "%s triad%s at %zu", names[i], nt ? "_nt" : "", e);
        }
    }
    free(a);
    free(b);
    free(c);
}

Test(measure, bandwidth_smoke)
{
    for (int k = 0; k < FFN_BW_COUNT; k++) {
        cr_expect_not_null(ffn_bw_kernel_kind((ffn_bw_kernel)k));
        if (!ffn_bw_kernel_available((ffn_bw_kernel)k)) continue;
        for (int t = 1; t <= 2; t++) {
            const ffn_bw_sweep_opts o = {.kernel = (ffn_bw_kernel)k,
                                         .threads = t,
                                         .min_bytes = 16384,
                                         .max_bytes = 512 * 1024,
                                         .points_per_octave = 1,
                                         .point_s = 0.002,
                                         .sample_bytes = 256 * 1024};
            ffn_bw_point pts[16];
            size_t n = 0;
            cr_assert_eq(ffn_bw_sweep(&o, pts, 16, &n), 0, "%s", ffn_bw_kernel_name(k));
            cr_expect_geq(n, 3);
            for (size_t i = 0; i < n; i++) {
                cr_expect(isfinite(pts[i].bytes_per_s) && pts[i].bytes_per_s > 0);
                cr_expect_geq(pts[i].bytes_per_s, pts[i].median_bytes_per_s);
                cr_expect_eq(pts[i].threads, t);
                cr_expect_eq((int)pts[i].kernel, k);
                cr_expect_leq(pts[i].size_bytes, 512.0 * 1024);
                cr_expect_geq(pts[i].samples, 3);
                if (i > 0) cr_expect_gt(pts[i].size_bytes, pts[i - 1].size_bytes);
            }
        }
    }
    cr_expect(ffn_bw_kernel_available(FFN_BW_READ));
    cr_expect_str_eq(ffn_bw_kernel_kind(FFN_BW_READ), "read-only");
    cr_expect_str_eq(ffn_bw_kernel_kind(FFN_BW_TRIAD_NT), "nt");
}

static int stop_after_two(void *user, double fraction)
{
    int *calls = user;
    (void)fraction;
    return ++*calls >= 2;
}

/* Stopped from the hook, with one thread and with a team (whose spinning barrier every thread
 * must leave). */
Test(measure, bandwidth_sweep_can_be_stopped)
{
    for (int t = 1; t <= 2; t++) {
        int calls = 0;
        const ffn_bw_sweep_opts o = {.kernel = FFN_BW_READ,
                                     .threads = t,
                                     .max_bytes = 4 * 1024 * 1024,
                                     .points_per_octave = 1,
                                     .point_s = 0.001,
                                     .sample_bytes = 64 * 1024,
                                     .hook = stop_after_two,
                                     .user = &calls};
        ffn_bw_point pts[32];
        size_t n = 0;
        cr_expect_eq(ffn_bw_sweep(&o, pts, 32, &n), FFN_EINTERRUPTED, "%d threads", t);
        cr_expect_eq(n, 2);
        cr_expect_eq(calls, 2);
    }
}

/* More threads than CPUs (two share one): the barrier's spinners yield, so the sweep ends with
 * every point measured rather than spinning out its time slices. */
Test(measure, a_sweep_with_more_threads_than_cpus_finishes, .timeout = 60)
{
    const int t = ffn__allowed_cpus() + 1;
    const ffn_bw_sweep_opts o = {.kernel = FFN_BW_TRIAD,
                                 .threads = t,
                                 .min_bytes = 16384,
                                 .max_bytes = 256 * 1024,
                                 .points_per_octave = 1,
                                 .point_s = 0.002,
                                 .sample_bytes = 64 * 1024};
    ffn_bw_point pts[16];
    size_t n = 0;
    cr_assert_eq(ffn_bw_sweep(&o, pts, 16, &n), 0);
    cr_expect_geq(n, 4);
    for (size_t i = 0; i < n; i++)
        cr_expect(pts[i].threads == t && pts[i].samples >= 3 && pts[i].bytes_per_s > 0);
}

static int stop_now(void *user, double fraction, const char *stage)
{
    (void)fraction;
    (void)stage;
    ++*(int *)user;
    return 1;
}

Test(measure, calibrate_can_be_stopped)
{
    ffn_calibration *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    int calls = 0;
    const ffn_calibrate_opts o = {.quick = true, .progress = stop_now, .user = &calls};
    cr_expect_eq(ffn_calibrate_run(&o, c), FFN_EINTERRUPTED);
    cr_expect_eq(calls, 1);
    cr_expect_gt(strlen(c->host.host), 0);
    cr_expect_eq(strlen(c->date), 20); /* 2025-01-31T12:00:00Z */
    cr_expect_lt(c->elapsed_s, 2.0);
    free(c);
}

Test(measure, team_peak_scaling_tells_a_held_back_vcpu)
{
    /* an Emerald Rapids-class VM's quick calibrations: one thread 176.2 GFLOP/s,
     * two threads 175.0 in one run (a vCPU held back) and 348.8 in another */
    const ffn_peak_result one = {FFN_PEAK_FP32_AVX512, 1, 176.2e9, 174e9, 100, 15, true};
    ffn_peak_result two = {FFN_PEAK_FP32_AVX512, 2, 175.0e9, 174.5e9, 100, 9, true};
    cr_expect_float_eq(ffn__cal_peak_scaling(&one, &two), 175.0 / (2 * 176.2), 1e-12);
    cr_expect_lt(ffn__cal_peak_scaling(&one, &two), 0.85);
    two.flops_per_s = 348.8e9;
    cr_expect_gt(ffn__cal_peak_scaling(&one, &two), 0.85);
    /* nothing to compare: one thread, or a peak that was not measured */
    cr_expect_float_eq(ffn__cal_peak_scaling(&one, &one), 1.0, 0);
    two.flops_per_s = 0;
    cr_expect_float_eq(ffn__cal_peak_scaling(&one, &two), 1.0, 0);
    cr_expect_float_eq(ffn__cal_peak_scaling(NULL, &two), 1.0, 0);
}

/* The read sweep's tail: flat (one thread reading DRAM at 33 GB/s) against still falling (the
 * Zen 4 VM's two threads, 93 -> 85 -> 78 GB/s over the last half octave up to 128 MiB), a
 * curve with no point near max_bytes / sqrt(2), which cannot tell (1), and a flat tail with
 * one fast sample, which the points' medians see as flat. */
Test(measure, read_tail_drop_tells_a_falling_tail)
{
    ffn_calibration *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    c->max_bytes = 128.0 * 1048576;
    const double one[] = {46.9e9, 43.2e9, 32.9e9, 32.5e9, 32.7e9};
    const double two[] = {115.7e9, 105.8e9, 93.4e9, 84.7e9, 78.4e9};
    for (int i = 0; i < 5; i++) {
        const double size = 64.0 * 1048576 * pow(2.0, i / 4.0);
        c->points[c->n_points++] = (ffn_bw_point){
            .kernel = FFN_BW_READ, .threads = 1, .size_bytes = size, .bytes_per_s = one[i]};
        c->points[c->n_points++] = (ffn_bw_point){
            .kernel = FFN_BW_READ, .threads = 2, .size_bytes = size, .bytes_per_s = two[i]};
        c->points[c->n_points++] = (ffn_bw_point){
            .kernel = FFN_BW_COPY, .threads = 2, .size_bytes = size, .bytes_per_s = 1e9 * (i + 1)};
    }
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 1), 32.7 / 32.9, 1e-9);
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 2), 78.4 / 93.4, 1e-9);
    cr_expect_lt(ffn__cal_read_tail_drop(c, 2), 0.9);
    cr_expect_geq(ffn__cal_read_tail_drop(c, 1), 0.9);
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 4), 1.0, 0); /* no such curve */
    c->max_bytes = 1024.0 * 1048576;                           /* no point near 724 MiB */
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 2), 1.0, 0);
    /* the medians decide where the points have them: a family 6 model 207 VM's two threads, one
     * fast sample at 362 MiB (27.9 GB/s, median 25.9) before 512 MiB at 24.9 (median 24.8): flat */
    c->n_points = 0;
    c->max_bytes = 512.0 * 1048576;
    const double best[] = {28.3e9, 27.9e9, 26.3e9, 24.9e9},
                 med[] = {28.1e9, 25.9e9, 26.1e9, 24.8e9};
    for (int i = 0; i < 4; i++)
        c->points[c->n_points++] = (ffn_bw_point){.kernel = FFN_BW_READ,
                                                  .threads = 2,
                                                  .size_bytes = 304.0 * 1048576 * pow(2.0, i / 4.0),
                                                  .bytes_per_s = best[i],
                                                  .median_bytes_per_s = med[i]};
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 2), 24.8 / 25.9, 1e-9);
    cr_expect_geq(ffn__cal_read_tail_drop(c, 2), 0.9);
    cr_expect_lt(24.9 / 27.9, 0.9, "the fastest samples alone would have called it falling");
    free(c);
}

/* A tail timed again: each retimed point (same kernel, threads, size within 2%) keeps the
 * better median and fastest sample of its two timings, so a slow minute at the last point
 * (a family 6 model 207 VM's 512 MiB at 20.2 GB/s between 25.7 and a retimed 24.6) no longer reads
 * as a falling tail, where a cache's fall, slow in both timings, still does. Points of other
 * curves and sizes are left alone. */
Test(measure, a_retimed_tail_keeps_each_points_better_median)
{
    ffn_calibration *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    c->max_bytes = 512.0 * 1048576;
    const double med[] = {26.7e9, 25.7e9, 22.3e9, 20.2e9};
    for (int i = 0; i < 4; i++) {
        const double size = 304.0 * 1048576 * pow(2.0, i / 4.0);
        c->points[c->n_points++] = (ffn_bw_point){.kernel = FFN_BW_READ,
                                                  .threads = 2,
                                                  .size_bytes = size,
                                                  .bytes_per_s = med[i] * 1.01,
                                                  .median_bytes_per_s = med[i],
                                                  .samples = 3};
        c->points[c->n_points++] = (ffn_bw_point){.kernel = FFN_BW_READ,
                                                  .threads = 1,
                                                  .size_bytes = size,
                                                  .bytes_per_s = 12e9,
                                                  .median_bytes_per_s = 12e9,
                                                  .samples = 3};
    }
    cr_expect_lt(ffn__cal_read_tail_drop(c, 2), 0.9);
    /* the retimed sweep's sizes are floored to its own grid: 0.5% off */
    const ffn_bw_point again[] = {
        {FFN_BW_READ, 2, 362.0 * 1048576 * 0.995, 25.0e9, 24.9e9, 3},
        {FFN_BW_READ, 2, 431.0 * 1048576 * 0.995, 25.1e9, 24.8e9, 3},
        {FFN_BW_READ, 2, 512.0 * 1048576 * 0.995, 24.7e9, 24.6e9, 3},
        {FFN_BW_READ, 2, 100.0 * 1048576, 99e9, 99e9, 3}, /* no such point */
    };
    cr_expect_eq(ffn__cal_merge_retimed(c, again, 4), 3);
    cr_expect_float_eq(ffn__cal_read_tail_drop(c, 2), 24.6 / 25.7, 1e-9);
    cr_expect_geq(ffn__cal_read_tail_drop(c, 2), 0.9);
    size_t n2 = 0;
    for (size_t i = 0; i < c->n_points; i++) {
        const ffn_bw_point *p = &c->points[i];
        if (p->threads == 1) {
            cr_expect_eq(p->samples, 3, "the one-thread curve is left alone");
            continue;
        }
        n2++;
        if (p->size_bytes > 400.0 * 1048576) cr_expect_eq(p->samples, 6);
    }
    cr_expect_eq(n2, 4, "no point added");
    /* a cache's fall: slow in both timings */
    c->n_points = 0;
    for (int i = 0; i < 4; i++)
        c->points[c->n_points++] = (ffn_bw_point){.kernel = FFN_BW_READ,
                                                  .threads = 2,
                                                  .size_bytes = 304.0 * 1048576 * pow(2.0, i / 4.0),
                                                  .bytes_per_s = 93e9 - 5e9 * i,
                                                  .median_bytes_per_s = 93e9 - 5e9 * i,
                                                  .samples = 3};
    const ffn_bw_point fall[] = {{FFN_BW_READ, 2, 362.0 * 1048576, 87e9, 87e9, 3},
                                 {FFN_BW_READ, 2, 512.0 * 1048576, 77e9, 77e9, 3}};
    cr_expect_eq(ffn__cal_merge_retimed(c, fall, 2), 2);
    cr_expect_lt(ffn__cal_read_tail_drop(c, 2), 0.9);
    free(c);
}

/* ---------------------------------------------------------------------------------------------
 * calibration -> hardware spec */

Test(measure, calibration_to_hw)
{
    ffn_calibration *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    snprintf(c->host.host, sizeof c->host.host, "testhost");
    snprintf(c->host.cpu_vendor, sizeof c->host.cpu_vendor, "GenuineIntel");
    snprintf(c->date, sizeof c->date, "2025-01-31T12:00:00Z");
    c->host.phys_mem_bytes = 24e9;
    c->threads = 2;
    c->clock.hz = 3.9e9;
    c->peaks[FFN_PEAK_FP32_PORTABLE][1].flops_per_s = 30e9;
    c->peaks[FFN_PEAK_FP32_AVX512][1].flops_per_s = 300e9;
    c->peaks[FFN_PEAK_BF16_AVX512][1].flops_per_s = 600e9;
    c->peaks[FFN_PEAK_BF16_AMX][1].flops_per_s = 6000e9;
    c->peaks[FFN_PEAK_INT8_VNNI][1].flops_per_s = 1200e9;
    c->peaks[FFN_PEAK_FP32_AVX512][0].flops_per_s = 150e9;
    ffn_level *lv = c->levels[FFN_BW_READ][1];
    const double bws[3] = {700e9, 350e9, 20e9}, caps[3] = {96e3, 4e6, 0};
    for (int i = 0; i < 3; i++) {
        snprintf(lv[i].name, sizeof lv[i].name, i == 2 ? "DRAM" : "L%d", i + 1);
        lv[i].bandwidth_bps = bws[i];
        lv[i].capacity_bytes = caps[i];
    }
    c->n_levels[FFN_BW_READ][1] = 3;
    c->max_bytes = 1024.0 * 1024 * 1024;
    lv[0].last_bytes = 64e3;
    lv[1].last_bytes = 2e6;
    lv[2].last_bytes = c->max_bytes;
    c->tail_read_bps[0] = 15e9;
    c->tail_read_bps[1] = 20e9;

    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_eq(hw.kind, FFN_HW_CPU);
    cr_expect_str_eq(hw.source, "measured by ffnroof calibrate on testhost, 2025-01-31T12:00:00Z");
    cr_expect_float_eq(hw.peak_flops[FFN_DT_FP32], 300e9, 1);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_BF16], 600e9, 1); /* AMX left out */
    cr_expect_float_eq(hw.peak_flops[FFN_DT_INT8], 1200e9, 1);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_TF32], 0.0, 0);
    cr_expect_eq(hw.compute_units, 2);
    cr_expect_float_eq(hw.clock_hz, 3.9e9, 1);
    cr_expect_float_eq(hw.mem_bandwidth_bps, 20e9, 1);
    cr_expect_float_eq(hw.mem_capacity_bytes, 24e9, 1);
    cr_assert_eq(hw.n_levels, 2);
    cr_expect_str_eq(hw.levels[0].name, "L1");
    cr_expect_float_eq(hw.levels[1].capacity_bytes, 4e6, 1);
    cr_expect_float_eq(hw.levels[1].bandwidth_bps, 350e9, 1);
    cr_expect_float_eq(hw.eff.compute_max, 1.0, 0);
    cr_expect_float_eq(hw.eff.memory_max, 1.0, 0);
    cr_expect_eq(hw.eff.n_tiles, 0);
    cr_expect_float_eq(hw.eff.launch_s, 0.0, 0);
    cr_expect_float_eq(hw.eff.overlap_p, 0.0, 0);

    cr_assert_eq(ffn_calibration_to_hw(c, true, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_BF16], 6000e9, 1);
    cr_expect_float_eq(ffn_calibration_peak(c, FFN_DT_FP32, 0, false), 150e9, 1);
    /* a one-core rate above the all-cores one (shared host) is still the roof */
    c->peaks[FFN_PEAK_FP32_AVX512][0].flops_per_s = 400e9;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_FP32], 400e9, 1);

    /* weights re-read across calls stay resident only in what one core's part of a level holds
     * (any thread may take any panel next call): the one-thread boundary of the nearest level */
    ffn_level *l1 = c->levels[FFN_BW_READ][0];
    const double caps1[3] = {48e3, 2e6, 0};
    for (int i = 0; i < 3; i++) {
        l1[i] = lv[i];
        l1[i].capacity_bytes = caps1[i];
    }
    c->n_levels[FFN_BW_READ][0] = 3;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.levels[0].capacity_bytes, 48e3, 1); /* per-core L1: one core's */
    cr_expect_float_eq(hw.levels[1].capacity_bytes, 2e6, 1);  /* per-core L2: one core's */
    cr_expect_float_eq(hw.levels[1].bandwidth_bps, 350e9, 1); /* the bandwidth stays all cores' */
    l1[1].capacity_bytes = 6e6; /* a one-thread level larger than the all-threads one: no say */
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.levels[1].capacity_bytes, 4e6, 1);
    l1[1].capacity_bytes = 1e6; /* too far (4x) to be the same level */
    l1[0].capacity_bytes = 10e3;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.levels[0].capacity_bytes, 96e3, 1);
    cr_expect_float_eq(hw.levels[1].capacity_bytes, 4e6, 1);
    c->n_levels[FFN_BW_READ][0] = 0;

    /* a "DRAM" plateau that ends before the tail is a cache (noise hid the real DRAM plateau) */
    lv[2].last_bytes = 64e6;
    lv[2].capacity_bytes = 100e6;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_eq(hw.n_levels, 3);
    cr_expect_float_eq(hw.levels[2].bandwidth_bps, 20e9, 1);
    cr_expect_float_eq(hw.mem_bandwidth_bps, 20e9, 1);

    c->tail_read_bps[0] = c->tail_read_bps[1] = 0; /* no bandwidth curve: cannot make a spec */
    cr_expect_eq(ffn_calibration_to_hw(c, false, &hw), FFN_EINVAL);
    free(c);
}
