/* The bench runner (measure/bench/bench_run.c) on tiny shapes: the work it reports through
 * ffnroof's SDE counters equals the kernel descriptor's count and the simulator's count for the
 * same op; the statistics, the reference check, the MoE path, the simulator's view of a case,
 * interruption and bad cases. Runs in well under a second (tiny shapes, --reps-style fixed
 * repetitions). */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/calibrate.h"
#include "ffnroof/fit.h"
#include "ffnroof/measure_papi.h"
#include "ffnroof/sim.h"
#include "ffnroof/model_load.h"

#include "../io/load/ydoc.h"

static ffn_bench_case dense_case(size_t T, size_t d, size_t f, ffn_act act, ffn_dtype dt)
{
    ffn_bench_case c;
    memset(&c, 0, sizeof c);
    c.kind = FFN_BENCH_DENSE;
    c.phase = T == 1 ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
    c.batch = 1;
    c.seq = T;
    c.tokens = T;
    c.shape.d = d;
    c.shape.f = f;
    c.shape.act = act;
    c.wdtype = dt;
    return c;
}

/* A spec with round numbers: 100 GFLOP/s fp32, 400 GFLOP/s bf16, 10 GB/s. */
static ffn_hw spec(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "test-cpu");
    hw.kind = FFN_HW_CPU;
    hw.peak_flops[FFN_DT_FP32] = 100e9;
    hw.peak_flops[FFN_DT_BF16] = 400e9;
    hw.mem_bandwidth_bps = 10e9;
    hw.compute_units = 2;
    hw.eff.compute_max = hw.eff.memory_max = 1.0;
    return hw;
}

static ffn_bench_opts fixed_opts(size_t reps)
{
    ffn_bench_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 2;
    o.reps = reps;
    o.seed = 7;
    return o;
}

static const char *sde_flops_name(void)
{
    return ffn_sde_event_names[0];
}

Test(bench, sde_flops_equal_the_descriptor_and_the_simulator)
{
    ffn_hw hw = spec();
    const ffn_act acts[] = {FFN_ACT_SWIGLU, FFN_ACT_GELU};
    for (size_t a = 0; a < 2; a++) {
        ffn_bench_case c = dense_case(5, 40, 72, acts[a], FFN_DT_FP32);
        ffn_bench_opts o = fixed_opts(4);
        ffn_counters *ctr = NULL;
        ffn_diag d;
        ffn_diag_clear(&d);
        bool papi = ffn_sde_init() != FFN_EUNSUPPORTED;
        if (papi) {
            cr_assert_eq(ffn_counters_create(ffn_sde_event_names, FFN_SDE_N, false, &ctr, &d), 0,
                         "%s", d.msg);
            o.counters = ctr;
        }
        ffn_sde_values before, after;
        ffn_sde_snapshot(&before);
        ffn_bench_result r;
        size_t done = 0;
        cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), 0, "%s", d.msg);
        ffn_sde_snapshot(&after);
        cr_assert_eq(done, 1);

        /* the three counts of one call */
        double kflops = ffn_kernel_flops(&c.shape, c.tokens);
        double sflops = NAN, sbytes = NAN;
        cr_assert_eq(ffn_bench_predict(&hw, &c, NULL, NULL, NULL, &sflops, &sbytes), 0);
        const ffn_kernel *k;
        cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, NULL), 0);
        cr_assert_float_eq(kflops, sflops, 1e-9 * kflops);
        cr_assert_float_eq(ffn_kernel_bytes(k, &c.shape, c.tokens), sbytes, 1e-9 * sbytes);
        cr_assert_float_eq(r.flops, kflops, 1e-9 * kflops);
        /* a hand count for swiglu: 2*T*d*f*2 + T*f*5 + 2*T*f*d */
        if (acts[a] == FFN_ACT_SWIGLU)
            cr_assert_float_eq(kflops, 4.0 * 5 * 40 * 72 + 5.0 * 72 * 5 + 2.0 * 5 * 72 * 40, 0.5);

        /* the process-wide SDE totals: warm-up + 4 timed calls, each adding one call's work */
        long long calls = after.kernel_calls - before.kernel_calls;
        cr_assert_eq(calls, 5);
        cr_assert_eq(after.flops - before.flops, 5 * llround(kflops));
        if (papi) {
            /* read back through PAPI over the timed calls only */
            cr_assert_eq(r.calls, 4);
            cr_assert_eq(r.n_counters, FFN_SDE_N);
            cr_assert_str_eq(r.counters[0].name, sde_flops_name());
            cr_assert(r.counters[0].available, "%s", r.counters[0].reason);
            cr_assert_eq(r.counters[0].value / r.calls, llround(sflops));
            cr_assert_eq(r.counters[3].value, r.calls); /* kernel_calls */
            cr_assert_eq(r.counters[1].value / r.calls, llround(r.weight_bytes));
            cr_assert_eq(r.counters[2].value / r.calls, llround(r.bytes - r.weight_bytes));
            ffn_counters_free(ctr);
        }
    }
}

Test(bench, statistics_prediction_and_verification)
{
    ffn_hw hw = spec();
    ffn_bench_case c[2] = {dense_case(17, 33, 65, FFN_ACT_SWIGLU, FFN_DT_FP32),
                           dense_case(1, 33, 65, FFN_ACT_SWIGLU, FFN_DT_FP32)};
    c[1].phase = FFN_PHASE_DECODE;
    ffn_bench_opts o = fixed_opts(5);
    o.verify = true;
    ffn_bench_result r[2];
    size_t done;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, c, 2, &o, NULL, NULL, r, &done, &d), 0, "%s", d.msg);
    cr_assert_eq(done, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(r[i].time.n, 5);
        cr_assert(r[i].time.min <= r[i].time.median && r[i].time.median <= r[i].time.p90);
        cr_assert(r[i].time.min > 0);
        cr_assert(r[i].cold);
        /* the roofline of the same op on the spec, by hand: max(F/peak, B/bw) per op */
        double roof, pred;
        ffn_bound b;
        cr_assert_eq(ffn_bench_predict(&hw, &c[i], &roof, &pred, &b, NULL, NULL), 0);
        cr_assert_float_eq(r[i].roofline_s, roof, 1e-15);
        cr_assert_float_eq(r[i].efficiency, roof / r[i].time.median, 1e-12);
        cr_assert_float_eq(r[i].prediction_error, pred / r[i].time.median - 1, 1e-12);
        cr_assert_float_eq(r[i].achieved_flops, r[i].flops / r[i].time.median,
                           1e-6 * r[i].achieved_flops);
        /* neutral efficiency, no launch: the prediction is the roofline */
        cr_assert_float_eq(pred, roof, 1e-12 * roof);
        /* fp32 against the double-accumulating reference */
        cr_assert(r[i].verified);
        cr_assert(r[i].max_rel_err < 1e-5, "max_rel_err %g", r[i].max_rel_err);
        cr_assert_eq(r[i].verify_tokens, c[i].tokens < 16 ? c[i].tokens : 16);
    }
}

Test(bench, bf16_cases_are_costed_at_the_bf16_peak_on_fp32_activations)
{
    ffn_hw hw = spec();
    ffn_bench_case c = dense_case(4096, 1024, 4096, FFN_ACT_SWIGLU, FFN_DT_BF16);
    double roof, flops, bytes;
    ffn_bound b;
    cr_assert_eq(ffn_bench_predict(&hw, &c, &roof, NULL, &b, &flops, &bytes), 0);
    cr_assert_eq(b, FFN_BOUND_COMPUTE);
    /* compute-bound: the two GEMMs at 400 GFLOP/s, the epilogue flops included in them */
    cr_assert_float_eq(roof, flops / 400e9, 1e-9 * roof);
    /* bytes: bf16 weights + fp32 x, h (twice) and y */
    double T = 4096, d = 1024, f = 4096;
    cr_assert_float_eq(bytes, 3 * d * f * 2 + 4 * T * d + 8 * T * f + 4 * T * d, 1.0);
    cr_assert_eq(ffn_bench_cdtype(FFN_DT_BF16), FFN_DT_BF16);
    cr_assert_eq(ffn_bench_cdtype(FFN_DT_FP32), FFN_DT_FP32);
}

/* A run is predicted on the units its kernel multiplies on (ffn_kernel_cdtype): W4A16 is fp32
 * FMAs on most tables, bf16 pairs on the AVX512-BF16 one, whose FLOPs then go at the bf16
 * peak (4x the fp32 one in this spec). */
Test(bench, runs_are_predicted_on_their_kernels_units)
{
    ffn_hw hw = spec();
    ffn_bench_case c = dense_case(64, 256, 512, FFN_ACT_SWIGLU, FFN_DT_INT4);
    c.adtype = FFN_DT_BF16;
    c.shape.group = 128;
    const ffn_kernel *k = NULL;
    cr_assert_eq(ffn_kernel_best_q(FFN_DT_INT4, FFN_DT_BF16, &k, NULL), 0);
    ffn_bench_opts o = fixed_opts(2);
    ffn_bench_result r;
    size_t done;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), 0, "%s", d.msg);
    cr_assert_str_eq(r.kernel, k->name);
    cr_assert(r.c.cdtype_set);
    cr_assert_eq(r.cdtype, ffn_kernel_cdtype(k, &c.shape));
    cr_assert_eq(r.c.cdtype, r.cdtype);
    double roof_k, roof_fp32, flops;
    ffn_bound b;
    cr_assert_eq(ffn_bench_predict(&hw, &r.c, &roof_k, NULL, &b, &flops, NULL), 0);
    cr_assert_float_eq(r.roofline_s, roof_k, 1e-15);
    cr_assert_eq(ffn_bench_predict(&hw, &c, &roof_fp32, NULL, &b, NULL, NULL), 0);
    if (r.cdtype == FFN_DT_BF16)
        cr_assert_lt(roof_k, roof_fp32, "%s: bf16 products at the bf16 peak", k->name);
    else
        cr_assert_float_eq(roof_k, roof_fp32, 1e-15);
}

Test(bench, moe_case_runs_and_is_predicted)
{
    ffn_hw hw = spec();
    ffn_bench_case c = dense_case(12, 32, 48, FFN_ACT_SWIGLU, FFN_DT_FP32);
    c.kind = FFN_BENCH_MOE;
    c.n_experts = 4;
    c.top_k = 2;
    ffn_bench_opts o = fixed_opts(3);
    o.verify = true;
    ffn_bench_result r;
    size_t done;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), 0, "%s", d.msg);
    cr_assert(r.has_moe);
    cr_assert(r.active_experts >= 1 && r.active_experts <= 4);
    /* router 2*T*d*E plus every token copy through one expert's dense FFN */
    double expert_per_token = ffn_kernel_flops(&c.shape, 1);
    cr_assert_float_eq(r.flops, 2.0 * 12 * 32 * 4 + 12 * 2 * expert_per_token, 1e-6 * r.flops);
    cr_assert(r.predicted_s > 0 && isfinite(r.predicted_s));
    cr_assert(r.max_rel_err < 1e-5, "max_rel_err %g", r.max_rel_err);
    cr_assert(r.experts_s > 0);
}

Test(bench, stop_flag_interrupts)
{
    ffn_hw hw = spec();
    ffn_bench_case c = dense_case(3, 16, 32, FFN_ACT_RELU, FFN_DT_FP32);
    ffn_bench_opts o = fixed_opts(3);
    volatile sig_atomic_t stop = 1;
    o.stop = &stop;
    ffn_bench_result r;
    size_t done = 99;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), FFN_EINTERRUPTED);
    cr_assert_eq(done, 0);
}

Test(bench, bad_cases_are_refused)
{
    ffn_bench_opts o = fixed_opts(1);
    ffn_diag d;
    ffn_bench_case c = dense_case(0, 16, 32, FFN_ACT_RELU, FFN_DT_FP32);
    cr_assert_eq(ffn_bench_case_check(&c, &o, &d), FFN_EINVAL);
    c = dense_case(2, 16, 32, FFN_ACT_RELU, FFN_DT_FP32);
    c.kind = FFN_BENCH_MOE;
    c.n_experts = 2;
    c.top_k = 3;
    cr_assert_eq(ffn_bench_case_check(&c, &o, &d), FFN_EINVAL);
    cr_assert(strstr(d.msg, "top-k") != NULL);
    c = dense_case(2, (size_t)1 << 20, (size_t)1 << 20, FFN_ACT_RELU, FFN_DT_FP32);
    cr_assert_eq(ffn_bench_case_check(&c, &o, &d), FFN_EINVAL);
#if defined(__x86_64__)
    c = dense_case(2, 16, 32, FFN_ACT_RELU, FFN_DT_FP32);
    o.isa_set = true;
    o.isa = FFN_ISA_NEON;
    cr_assert_eq(ffn_bench_case_check(&c, &o, &d), FFN_EUNSUPPORTED);
#endif
}

Test(bench, json_writer_round_trips_through_the_reader)
{
    ffn_hw hw = spec();
    ffn_bench_case c = dense_case(6, 24, 40, FFN_ACT_SWIGLU, FFN_DT_FP32);
    ffn_bench_opts o = fixed_opts(3);
    ffn_bench_result r;
    size_t done;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), 0, "%s", d.msg);
    ffn_host_info host;
    ffn_host_info_get(&host);
    ffn_papi_probe probe;
    ffn_papi_probe_run(&probe);
    ffn_bench_meta m;
    memset(&m, 0, sizeof m);
    m.date = "2025-01-01T00:00:00Z";
    m.command = "ffnroof bench test";
    m.complete = true;
    m.host = &host;
    m.load_avg[0] = -1;
    m.spec = &hw;
    m.spec_file = "test.yaml";
    m.probe = &probe;
    m.notes = "one; two";
    char path[64];
    snprintf(path, sizeof path, "/tmp/ffnroof-test-bench-%d.json", (int)getpid());
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    cr_assert_eq(ffn_bench_write_json(fp, &m, &r, 1), 0);
    fclose(fp);
    ffn_ydoc y;
    cr_assert_eq(ffn_ydoc_load(&y, path, &d), 0, "%s", d.msg);
    yaml_node_t *root = ffn_ydoc_root(&y);
    cr_assert_str_eq(ffn_y_text(ffn_y_get(&y, root, "schema", NULL)), FFN_BENCH_SCHEMA);
    yaml_node_t *cases = ffn_y_get(&y, root, "cases", NULL);
    cr_assert_eq(cases->type, YAML_SEQUENCE_NODE);
    yaml_node_t *c0 = yaml_document_get_node(&y.doc, *cases->data.sequence.items.start);
    double med = atof(ffn_y_text(ffn_y_get(&y, ffn_y_get(&y, c0, "time_s", NULL), "median", NULL)));
    cr_assert_float_eq(med, r.time.median, 1e-9 * med);
    cr_assert_str_eq(ffn_y_text(ffn_y_get(&y, c0, "act", NULL)), "swiglu");
    cr_assert_null(ffn_y_get(&y, c0, "max_rel_err", NULL)); /* null reads as absent */
    yaml_node_t *notes = ffn_y_get(&y, root, "notes", NULL);
    cr_assert_eq(notes->data.sequence.items.top - notes->data.sequence.items.start, 2);
    ffn_ydoc_release(&y);
    unlink(path);
}

/* bench --warm: a warm case is predicted with its weights where the model's `hot`
 * puts them, and the result records the bytes each level served and that it ran warm. A
 * 1 x 64 x 128 gelu layer in fp32: weights 2 x 64 x 128 x 4 = 65,536 B fit a 1 MB L2 (0.8 MB
 * usable) at 100 GB/s; cold, DRAM serves them at 10 GB/s. */
Test(bench, warm_runs_are_predicted_hot_and_say_so)
{
    ffn_hw hw = spec();
    hw.n_levels = 1;
    snprintf(hw.levels[0].name, sizeof hw.levels[0].name, "L2");
    hw.levels[0].capacity_bytes = 1e6;
    hw.levels[0].bandwidth_bps = 100e9;
    ffn_bench_case c = dense_case(1, 64, 128, FFN_ACT_GELU, FFN_DT_FP32);
    double cold_s, warm_s, served[FFN_HW_MAX_LEVELS + 1];
    int lv = -1;
    double fr = -1;
    cr_assert_eq(
        ffn_bench_predict_weights(&hw, &c, FFN_WEIGHTS_COLD, NULL, &cold_s, NULL, served, &lv, &fr),
        0);
    cr_assert_eq(lv, 0);
    cr_assert_eq(fr, 0.0);
    /* cold: DRAM serves weights + activations: 65,536 + (64 + 128 + 128 + 64) x 4 = 67,072 B */
    cr_assert_float_eq(served[FFN_SRC_MEMORY], 67072.0, 1e-6);
    cr_assert_eq(
        ffn_bench_predict_weights(&hw, &c, FFN_WEIGHTS_HOT, NULL, &warm_s, NULL, served, &lv, &fr),
        0);
    cr_assert_eq(fr, 1.0, "held whole");
    cr_assert_eq(lv, 1);
    cr_assert_float_eq(served[FFN_SRC_MEMORY], 1536.0, 1e-6); /* activations only */
    cr_assert_float_eq(served[0], 67072.0, 1e-6);
    cr_assert_lt(warm_s, cold_s / 5.0);
    /* weights larger than the level (2 x 512 x 1024 x 4 = 4,194,304 B against 0.8 MB usable):
     * the level keeps 800,000 B of them, the rest comes from memory */
    ffn_bench_case big = dense_case(1, 512, 1024, FFN_ACT_GELU, FFN_DT_FP32);
    double big_s;
    cr_assert_eq(
        ffn_bench_predict_weights(&hw, &big, FFN_WEIGHTS_HOT, NULL, &big_s, NULL, served, &lv, &fr),
        0);
    cr_assert_eq(lv, 1);
    cr_assert_float_eq(fr, 800000.0 / 4194304.0, 1e-12);
    cr_assert_float_eq(served[FFN_SRC_MEMORY], 4194304.0 - 800000.0 + (512 + 1024) * 2 * 4.0, 1e-6);

    ffn_bench_opts o = fixed_opts(2);
    o.warm = true;
    ffn_bench_result r;
    size_t done = 0;
    ffn_diag d;
    cr_assert_eq(ffn_bench_run(&hw, &c, 1, &o, NULL, NULL, &r, &done, &d), 0, "%s", d.msg);
    cr_assert(!r.cold);
    cr_assert_eq(r.weights_level, 1);
    cr_assert_str_eq(r.level_bytes_source, "model");
    cr_assert_eq(r.n_levels, 1);
    cr_assert_str_eq(r.level_names[0], "L2");
    cr_assert_float_eq(r.predicted_s, warm_s, 1e-15);
}

Test(bench, model_cases_cover_every_phase_and_batch)
{
    ffn_model m;
    ffn_diag d;
    cr_assert_eq(ffn_model_load(FFNROOF_SOURCE_DIR "/models/llama2-7b.yaml", &m, &d), 0, "%s",
                 d.msg);
    ffn_bench_case tmpl, c[8];
    memset(&tmpl, 0, sizeof tmpl);
    tmpl.wdtype = FFN_DT_INT4;
    tmpl.adtype = FFN_DT_BF16;
    tmpl.shape.group = 64;
    const uint64_t batches[] = {1, 4};
    size_t n = 0;
    char notes[256];
    cr_assert_eq(
        ffn_bench_model_cases(&m, &tmpl, 3, batches, 2, 512, c, 8, &n, notes, sizeof notes, &d), 0);
    cr_assert_eq(n, 4);
    cr_assert_str_empty(notes);
    const uint64_t tokens[] = {512, 2048, 1, 4};
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(c[i].kind, FFN_BENCH_DENSE);
        cr_expect_eq(c[i].phase, i < 2 ? FFN_PHASE_PREFILL : FFN_PHASE_DECODE);
        cr_expect_eq(c[i].tokens, tokens[i], "case %zu: %llu tokens", i,
                     (unsigned long long)c[i].tokens);
        cr_expect_eq(c[i].seq, i < 2 ? 512u : 0u);
        cr_expect_eq(c[i].shape.d, m.hidden);
        cr_expect_eq(c[i].shape.f, m.intermediate);
        cr_expect_eq(c[i].shape.act, m.act);
        cr_expect_eq(c[i].wdtype, FFN_DT_INT4);
        cr_expect_eq(c[i].adtype, FFN_DT_BF16);
        cr_expect_eq(c[i].shape.group, 64u);
    }
    /* decode only, capped at cap */
    cr_assert_eq(ffn_bench_model_cases(&m, &tmpl, 2, batches, 2, 512, c, 1, &n, NULL, 0, &d), 0);
    cr_assert_eq(n, 1);
    cr_expect_eq(c[0].tokens, 1u);
    /* too many tokens: an error that says how many */
    const uint64_t big[] = {4096};
    cr_assert_eq(ffn_bench_model_cases(&m, &tmpl, 1, big, 1, 1024, c, 8, &n, NULL, 0, &d),
                 FFN_ERANGE);
    cr_expect(strstr(d.msg, "4194304 tokens is too many") != NULL, "%s", d.msg);
    /* an MoE model: its routed experts, and a note of what is left out */
    cr_assert_eq(ffn_model_load(FFNROOF_SOURCE_DIR "/models/deepseek-v2-lite.yaml", &m, &d), 0,
                 "%s", d.msg);
    cr_assert_eq(
        ffn_bench_model_cases(&m, &tmpl, 1, batches, 1, 64, c, 8, &n, notes, sizeof notes, &d), 0);
    cr_assert_eq(n, 1);
    cr_expect_eq(c[0].kind, FFN_BENCH_MOE);
    cr_expect_eq(c[0].n_experts, 64u);
    cr_expect_eq(c[0].top_k, 6u);
    cr_expect_eq(c[0].shape.f, 1408u);
    cr_expect(strstr(notes, "shared experts") && strstr(notes, "dense FFN layers"), "%s", notes);
    cr_assert_eq(ffn_bench_model_cases(NULL, &tmpl, 1, batches, 1, 64, c, 8, &n, NULL, 0, &d),
                 FFN_EINVAL);
}

/* report --quick's cases (measure/calibrate/quick.c): the scaled llama2-7b and Mixtral layers, bf16
 * only with a bf16 kernel; and the rerun of the largest fp32 decode and the fp32 prefill fit
 * runs (held-out runs, other dtypes and failed runs are passed over). */
Test(bench, quick_cases_and_the_drift_rerun)
{
    ffn_bench_case cs[16];
    const size_t n = ffn_bench_quick_cases(cs, 16);
    const ffn_kernel *kb = NULL;
    const bool bf16 = ffn_kernel_best(FFN_DT_BF16, &kb, NULL) == 0;
    cr_assert_eq(n, bf16 ? 8u : 6u);
    size_t moe = 0;
    for (size_t i = 0; i < n; i++) {
        const bool m = cs[i].kind == FFN_BENCH_MOE;
        moe += m;
        cr_expect_eq(cs[i].shape.d, m ? (size_t)FFN_QUICK_MOE_D : (size_t)FFN_QUICK_DENSE_D);
        cr_expect_eq(cs[i].shape.f, m ? (size_t)FFN_QUICK_MOE_F : (size_t)FFN_QUICK_DENSE_F);
        cr_expect_eq(cs[i].phase == FFN_PHASE_DECODE ? cs[i].batch : cs[i].seq, cs[i].tokens);
    }
    cr_expect_eq(moe, 3u);
    cr_expect_eq(ffn_bench_quick_cases(cs, 2), 2u, "cap holds");

    static ffn_kcal_result k;
    memset(&k, 0, sizeof k);
    const size_t T[5] = {1, 4, 16, 8, 32};
    const ffn_phase ph[5] = {FFN_PHASE_DECODE, FFN_PHASE_DECODE, FFN_PHASE_PREFILL,
                             FFN_PHASE_DECODE, FFN_PHASE_PREFILL};
    for (size_t i = 0; i < 5; i++) {
        ffn_bench_result *r = &k.runs[i].r;
        r->c.kind = FFN_BENCH_DENSE;
        r->c.phase = ph[i];
        r->c.tokens = T[i];
        r->c.batch = ph[i] == FFN_PHASE_DECODE ? T[i] : 1;
        r->c.seq = ph[i] == FFN_PHASE_PREFILL ? T[i] : 0;
        r->c.shape = (ffn_kshape){.d = 64, .f = 128, .act = FFN_ACT_SWIGLU};
        r->threads = 1;
        r->time.median = 1e-3 * (double)(i + 1);
        r->flops = 1e3 * (double)T[i];
        k.runs[i].fit = i != 4; /* the T = 32 prefill is held out */
    }
    k.runs[3].r.c.wdtype = FFN_DT_BF16; /* the T = 8 decode is bf16 */
    k.n_runs = 5;
    ffn_rerun out[2];
    cr_assert_eq(ffn_bench_rerun(&k, NULL, out), 2u);
    cr_expect_str_eq(out[0].what, "fp32 decode T = 4, d = 64,");
    cr_expect_eq(out[0].before_s, 2e-3);
    cr_expect_str_eq(out[1].what, "fp32 prefill T = 16, d = 64,");
    cr_expect(out[0].after_s > 0 && out[1].after_s > 0, "timed again");
    k.n_runs = 0;
    cr_expect_eq(ffn_bench_rerun(&k, NULL, out), 0u);
}

/* `ffnroof bench --shape T,d,f`: the phase a layer stands for follows T unless asked, a decode
 * case is a batch of T sequences, a prefill one a prompt of T tokens; experts make it MoE. */
Test(bench, shape_cases_take_their_phase_from_the_tokens)
{
    ffn_bench_case tmpl, c;
    memset(&tmpl, 0, sizeof tmpl);
    tmpl.wdtype = FFN_DT_INT4;
    tmpl.shape.group = 64;
    ffn_bench_shape_case(&tmpl, 1, 128, 256, FFN_ACT_SWIGLU, 0, 0, 0, &c);
    cr_expect_eq(c.kind, FFN_BENCH_DENSE);
    cr_expect_eq(c.phase, FFN_PHASE_DECODE);
    cr_expect_eq(c.batch, 1u);
    cr_expect_eq(c.seq, 0u);
    cr_expect_eq(c.wdtype, FFN_DT_INT4, "the template's dtype stays");
    cr_expect_eq(c.shape.group, 64u, "and its group");
    cr_expect_eq(c.shape.d, 128u);
    cr_expect_eq(c.shape.f, 256u);
    ffn_bench_shape_case(&tmpl, 32, 128, 256, FFN_ACT_GELU, 0, 0, 0, &c);
    cr_expect_eq(c.phase, FFN_PHASE_PREFILL);
    cr_expect_eq(c.batch, 1u);
    cr_expect_eq(c.seq, 32u);
    cr_expect_eq(c.shape.act, FFN_ACT_GELU);
    ffn_bench_shape_case(&tmpl, 32, 128, 256, FFN_ACT_SWIGLU, 2, 0, 0, &c); /* --phase decode */
    cr_expect_eq(c.phase, FFN_PHASE_DECODE);
    cr_expect_eq(c.batch, 32u);
    cr_expect_eq(c.seq, 0u);
    ffn_bench_shape_case(&tmpl, 1, 128, 256, FFN_ACT_SWIGLU, 1, 8, 2, &c); /* --phase prefill */
    cr_expect_eq(c.phase, FFN_PHASE_PREFILL);
    cr_expect_eq(c.kind, FFN_BENCH_MOE);
    cr_expect_eq(c.n_experts, 8u);
    cr_expect_eq(c.top_k, 2u);
}

/* The default counter set lives in one place: the probe's hardware events, then the SDE ones. */
Test(bench, default_counters_are_the_hardware_set_then_the_sde_events)
{
    const char *ev[FFN_BENCH_N_DEFAULT_EVENTS + 4];
    const size_t n = ffn_bench_default_events(ev, sizeof ev / sizeof ev[0]);
    cr_assert_eq(n, (size_t)FFN_BENCH_N_DEFAULT_EVENTS);
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++)
        cr_expect_str_eq(ev[i], ffn_papi_default_events[i]);
    for (int i = 0; i < FFN_SDE_N; i++)
        cr_expect_str_eq(ev[FFN_PAPI_N_DEFAULT + i], ffn_sde_event_names[i]);
    cr_expect_eq(ffn_bench_default_events(ev, 3), 3u, "cap holds");
}

Test(bench, counters_note_says_what_cannot_be_counted)
{
    ffn_papi_probe p;
    memset(&p, 0, sizeof p);
    char note[400];
    cr_expect(ffn_bench_counters_note(&p, false, note, sizeof note));
    cr_expect_str_eq(note, "counters: ffnroof was built without PAPI, timers only");
    p.built_in = true;
    cr_expect(ffn_bench_counters_note(&p, false, note, sizeof note));
    cr_expect(strstr(note, "the kernel exports no CPU PMU") != NULL, "%s", note);
    p.cpu_pmu_exported = true;
    cr_expect(ffn_bench_counters_note(&p, false, note, sizeof note));
    cr_expect(strstr(note, "every hardware event failed") != NULL, "%s", note);
    cr_expect_not(ffn_bench_counters_note(&p, true, note, sizeof note), "an explicit list");
    cr_expect_str_empty(note);
    p.n_events_available = 3;
    cr_expect_not(ffn_bench_counters_note(&p, false, note, sizeof note));
}

Test(bench, error_summary_takes_the_median_and_the_worst_finite_error)
{
    ffn_bench_result r[4];
    memset(r, 0, sizeof r);
    r[0].prediction_error = 0.10;
    r[1].prediction_error = NAN;
    r[2].prediction_error = -0.30;
    r[3].prediction_error = 0.20;
    double med, max;
    size_t worst;
    cr_assert_eq(ffn_bench_error_summary(r, 4, &med, &max, &worst), 3u);
    cr_expect_float_eq(med, 0.20, 1e-12);
    cr_expect_float_eq(max, 0.30, 1e-12);
    cr_expect_eq(worst, 2u);
}
