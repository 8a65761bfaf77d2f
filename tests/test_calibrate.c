/* `ffnroof calibrate` without the measuring: the per-dtype efficiency fit recovers parameters
 * it generated (kernel points with a compute-dtype override, as the bf16 kernels need); a
 * synthetic calibration turns into a spec that writes, loads back through ffn_hw_load and
 * predicts exactly as before; calibration.json round-trips through the reader; the writers'
 * names agree with the libraries'. Fast: no microbenchmark runs here (tests/test_cli_profiler.c
 * runs the real thing in its tiny mode). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/calibrate.h"
#include "ffnroof/fit.h"
#include "ffnroof/measure.h"
#include "ffnroof/sim.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/hw_write.h"

#include "../io/load/ydoc.h"

Test(calibrate, every_profiler_enum_has_one_distinct_name)
{
    /* base/names.c is the one table measure/, the peers and the writers all use */
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        cr_assert_not_null(ffn_peak_name((ffn_peak_kind)k), "peak kind %d", k);
        cr_assert_lt((int)ffn_peak_dtype((ffn_peak_kind)k), FFN_DT_COUNT, "peak kind %d", k);
        for (int o = 0; o < k; o++)
            cr_assert_str_neq(ffn_peak_name((ffn_peak_kind)k), ffn_peak_name((ffn_peak_kind)o));
    }
    cr_expect_str_eq(ffn_peak_name(FFN_PEAK_BF16_AMX), "bf16_amx");
    cr_expect_eq(ffn_peak_dtype(FFN_PEAK_INT8_VNNI), FFN_DT_INT8);
    cr_expect_null(ffn_peak_name(FFN_PEAK_COUNT));
    for (int k = 0; k < FFN_BW_COUNT; k++) {
        cr_assert_not_null(ffn_bw_kernel_name((ffn_bw_kernel)k));
        cr_assert_not_null(ffn_bw_kernel_kind((ffn_bw_kernel)k));
    }
    cr_expect_str_eq(ffn_bw_kernel_kind(FFN_BW_TRIAD), "read-write");
    cr_expect_str_eq(ffn_peer_lib_name(FFN_PEER_ONEDNN), "onednn");
    cr_expect_null(ffn_peer_lib_name(FFN_PEER_COUNT));
}

/* A 2-core CPU as calibrate sees it: fp32 470 GFLOP/s, bf16 (AMX) 6.8 TFLOP/s, 30 GB/s. */
static ffn_hw cpu(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "synthetic");
    snprintf(hw.source, sizeof hw.source, "test");
    hw.kind = FFN_HW_CPU;
    hw.peak_flops[FFN_DT_FP32] = 470e9;
    hw.peak_flops[FFN_DT_BF16] = 6.8e12;
    hw.mem_bandwidth_bps = 30e9;
    hw.mem_capacity_bytes = 16e9;
    hw.compute_units = 2;
    hw.devices_per_node = 1;
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = 1;
    hw.eff.tiles[0][1] = 32;
    hw.eff.compute_max = hw.eff.memory_max = 1;
    return hw;
}

static size_t kernel_points(ffn_fit_point *p, const ffn_hw *truth)
{
    static const uint64_t T[] = {1, 4, 16, 64, 256};
    static const uint64_t D[][2] = {{1024, 2816}, {1536, 4096}, {3072, 8192}};
    size_t n = 0;
    for (int dt = 0; dt < 2; dt++)
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 3; j++) {
                memset(&p[n], 0, sizeof p[n]);
                p[n].m = T[i];
                p[n].k = D[j][0];
                p[n].f = D[j][1];
                p[n].act = FFN_ACT_SWIGLU;
                p[n].wdtype = dt ? FFN_DT_BF16 : FFN_DT_FP32;
                p[n].adtype = FFN_DT_FP32;
                p[n].cdtype_set = true;
                p[n].cdtype = p[n].wdtype;
                p[n].time_s = ffn_fit_point_predict(truth, &p[n]);
                n++;
            }
    return n;
}

Test(calibrate, per_dtype_fit_recovers_what_it_generated)
{
    ffn_hw truth = cpu();
    truth.eff.compute_max_dt[FFN_DT_FP32] = 0.82;
    truth.eff.compute_max_dt[FFN_DT_BF16] = 0.21;
    truth.eff.compute_max = 0.82;
    truth.eff.memory_max = 0.55;
    truth.eff.launch_s = 8e-6;
    truth.eff.overlap_p = 3.0;
    ffn_fit_point p[32];
    size_t n = kernel_points(p, &truth);
    /* the override matters: a bf16 point costed by the simulator's rule (fp32) differs */
    ffn_fit_point q = p[n - 1];
    q.cdtype_set = false;
    cr_assert(fabs(ffn_fit_point_predict(&truth, &q) / p[n - 1].time_s - 1) > 0.5);
    cr_assert_eq(ffn_fit_point_cdtype(&truth, &q), FFN_DT_FP32);
    cr_assert_eq(ffn_fit_point_cdtype(&truth, &p[n - 1]), FFN_DT_BF16);

    ffn_hw start = cpu();
    ffn_eff e;
    cr_assert_eq(
        ffn_eff_fit(&start, p, n, FFN_FIT_COMPUTE_BY_DTYPE | FFN_FIT_LAUNCH | FFN_FIT_OVERLAP, &e),
        0);
    cr_assert_float_eq(e.compute_max_dt[FFN_DT_FP32], 0.82, 0.02);
    cr_assert_float_eq(e.compute_max_dt[FFN_DT_BF16], 0.21, 0.01);
    cr_assert_float_eq(e.compute_max, e.compute_max_dt[FFN_DT_FP32], 1e-15);
    cr_assert_float_eq(e.memory_max, 0.55, 0.01);
    cr_assert_float_eq(e.launch_s, 8e-6, 1e-6);
    ffn_hw fitted = start;
    fitted.eff = e;
    double err[32];
    ffn_fit_summary s;
    ffn_fit_errors(&fitted, p, n, err, &s);
    cr_assert(s.max_abs < 0.02, "max error %g", s.max_abs);

    /* one dtype only: the per-dtype fit of a single dtype is the plain fit */
    ffn_eff e1, e2;
    cr_assert_eq(ffn_eff_fit(&start, p, 15, FFN_FIT_COMPUTE_BY_DTYPE | FFN_FIT_LAUNCH, &e1), 0);
    cr_assert_eq(ffn_eff_fit(&start, p, 15, FFN_FIT_LAUNCH, &e2), 0);
    cr_assert_float_eq(e1.compute_max_dt[FFN_DT_FP32], e2.compute_max, 1e-9);
    cr_assert_float_eq(e1.memory_max, e2.memory_max, 1e-9);
}

Test(calibrate, fit_recovers_the_gemv_bandwidth_and_padded_bf16_rows)
{
    /* the spec calibrate builds for an AMX host: bf16 rows padded to 32 above 2 tokens, and
     * one-token GEMMs streaming at a larger share of the bandwidth than the rest */
    ffn_hw truth = cpu();
    ffn_tileset *ts = &truth.eff.tiles_dt[FFN_DT_BF16];
    ts->n_tiles = 1;
    ts->tiles[0][0] = ts->tiles[0][1] = 32;
    ts->min_rows = 32;
    ts->gemv_rows = 2;
    truth.eff.compute_max_dt[FFN_DT_FP32] = truth.eff.compute_max = 0.7;
    truth.eff.compute_max_dt[FFN_DT_BF16] = 0.3;
    truth.eff.memory_max = 0.7;
    truth.eff.memory_max_gemv = 0.95;
    truth.eff.overlap_p = 1.5;
    ffn_fit_point p[32];
    size_t n = kernel_points(p, &truth);
    ffn_hw start = cpu();
    start.eff.tiles_dt[FFN_DT_BF16] = *ts;
    ffn_eff e;
    const unsigned fl = FFN_FIT_COMPUTE_BY_DTYPE | FFN_FIT_OVERLAP | FFN_FIT_MEMORY_GEMV;
    cr_assert_eq(ffn_eff_fit(&start, p, n, fl, &e), 0);
    cr_assert_float_eq(e.memory_max_gemv, 0.95, 0.01);
    cr_assert_float_eq(e.memory_max, 0.7, 0.01);
    cr_assert_float_eq(e.compute_max_dt[FFN_DT_BF16], 0.3, 0.01);
    /* the gemv fraction changes one-token predictions only */
    ffn_hw a = truth, b = truth;
    b.eff.memory_max_gemv = 0;
    for (size_t i = 0; i < n; i++) {
        const double ta = ffn_fit_point_predict(&a, &p[i]), tb = ffn_fit_point_predict(&b, &p[i]);
        if (p[i].m == 1)
            cr_assert(ta < 0.9 * tb, "T=1 point %zu: %g vs %g", i, ta, tb);
        else
            cr_assert_eq(ta, tb, "T=%llu point %zu", (unsigned long long)p[i].m, i);
    }
    /* without padded bf16 rows the fit cannot reproduce the data */
    ffn_hw nopad = cpu();
    ffn_eff e2;
    cr_assert_eq(ffn_eff_fit(&nopad, p, n, fl, &e2), 0);
    nopad.eff = e2;
    double err[32];
    ffn_fit_summary s2;
    ffn_fit_errors(&nopad, p, n, err, &s2);
    start.eff = e;
    ffn_fit_summary s1;
    ffn_fit_errors(&start, p, n, err, &s1);
    cr_assert(s1.max_abs < 0.01 && s2.max_abs > 0.03, "padded %g, not padded %g", s1.max_abs,
              s2.max_abs);
    /* both kinds of point are needed to tell the two bandwidth fractions apart */
    cr_assert_eq(ffn_eff_fit(&start, p + 3, 12, fl, &e2), FFN_EINVAL); /* T = 4 .. 256 */
}

Test(calibrate, streaming_kernels_get_the_gemv_bandwidth_up_to_their_stream_rows)
{
    /* an AVX2/AVX-512-style fp32 kernel streams its weights for up to 6 tokens (the driver's
     * gemv path): those calls read at the GEMV fraction, 7 tokens and more at memory_max */
    ffn_hw truth = cpu();
    ffn_tileset *ts = &truth.eff.tiles_dt[FFN_DT_FP32];
    ts->n_tiles = 1;
    ts->tiles[0][0] = 1;
    ts->tiles[0][1] = 32;
    ts->min_rows = 1;
    ts->gemv_rows = 6;
    cr_assert_eq(ffn_gemv_rows(&truth, FFN_DT_FP32), 6);
    cr_assert_eq(ffn_gemv_rows(&truth, FFN_DT_BF16), 1, "no tiles for bf16: one row");
    truth.eff.memory_max = 0.4;
    truth.eff.memory_max_gemv = 0.8;
    const double bytes = 4.0 * 4096 * 11008, fl = 2.0 * 4096 * 11008;
    for (uint64_t m = 1; m <= 8; m++) {
        const double t =
            ffn_predict_gemm_s(&truth, m, 11008, 4096, 1, fl * (double)m, bytes, FFN_DT_FP32);
        const double want = bytes / (truth.mem_bandwidth_bps * (m <= 6 ? 0.8 : 0.4));
        cr_assert_float_eq(t, want, 1e-6 * want, "m=%llu: %g s, want %g s", (unsigned long long)m,
                           t, want);
    }
    /* the fit tells the two fractions apart on points of 4 tokens, and recovers both */
    truth.eff.compute_max = truth.eff.compute_max_dt[FFN_DT_FP32] = 0.7;
    ffn_fit_point p[32];
    size_t n = 0;
    ffn_fit_point q[32];
    kernel_points(q, &truth);
    for (size_t i = 0; i < 15; i++) /* the fp32 points of kernel_points, without T = 1 */
        if (q[i].m > 1) p[n++] = q[i];
    cr_assert(ffn_fit_points_split_gemv(&truth, p, n), "T = 4 points are streaming GEMVs");
    ffn_hw start = cpu();
    start.eff.tiles_dt[FFN_DT_FP32] = *ts;
    const ffn_hw plain = cpu();
    cr_assert(!ffn_fit_points_split_gemv(&plain, p, n), "without stream rows: no GEMV points");
    ffn_eff e;
    cr_assert_eq(ffn_eff_fit(&start, p, n, FFN_FIT_MEMORY_GEMV, &e), 0);
    cr_assert_float_eq(e.memory_max_gemv, 0.8, 0.01, "%g", e.memory_max_gemv);
    cr_assert_float_eq(e.memory_max, 0.4, 0.01, "%g", e.memory_max);
}

/* A calibration as ffn_calibrate_run would leave it, filled by hand. */
static void synthetic_calibration(ffn_calibration *c)
{
    memset(c, 0, sizeof *c);
    c->quick = true;
    c->threads = 2;
    snprintf(c->date, sizeof c->date, "2025-01-31T12:00:00Z");
    snprintf(c->host.host, sizeof c->host.host, "testhost");
    snprintf(c->host.cpu_model, sizeof c->host.cpu_model, "Test CPU");
    snprintf(c->host.cpu_vendor, sizeof c->host.cpu_vendor, "GenuineIntel");
    c->host.online_cpus = c->host.allowed_cpus = 2;
    c->host.phys_mem_bytes = 16e9;
    snprintf(c->timer.source, sizeof c->timer.source, "CLOCK_MONOTONIC_RAW");
    c->timer.res_measured_s = 2e-8;
    c->clock.hz = 3.8e9;
    c->clock.median_hz = 3.79e9;
    c->clock.reps = 5;
    c->peaks[FFN_PEAK_FP32_AVX512][0] =
        (ffn_peak_result){FFN_PEAK_FP32_AVX512, 1, 235e9, 230e9, 100, 9, true};
    c->peaks[FFN_PEAK_FP32_AVX512][1] =
        (ffn_peak_result){FFN_PEAK_FP32_AVX512, 2, 470e9, 460e9, 100, 9, true};
    c->peaks[FFN_PEAK_BF16_AVX512][1] =
        (ffn_peak_result){FFN_PEAK_BF16_AVX512, 2, 918e9, 900e9, 100, 9, true};
    c->peaks[FFN_PEAK_BF16_AMX][1] =
        (ffn_peak_result){FFN_PEAK_BF16_AMX, 2, 6.78e12, 6.7e12, 100, 9, true};
    double sizes[] = {32e3, 64e3, 1e6, 2e6, 64e6, 128e6, 512e6, 1024e6};
    double bw[] = {600e9, 600e9, 360e9, 360e9, 60e9, 60e9, 30e9, 30e9};
    for (int i = 0; i < 8; i++)
        c->points[c->n_points++] = (ffn_bw_point){FFN_BW_READ, 2, sizes[i], bw[i], bw[i] * 0.95, 5};
    c->max_bytes = 1024e6;
    c->tail_read_bps[0] = 15.6e9;
    c->tail_read_bps[1] = 30e9;
    c->n_levels[FFN_BW_READ][1] = 2;
    c->levels[FFN_BW_READ][1][0] = (ffn_level){"L1", 600e9, 32e3, 64e3, 96e3, 2};
    c->levels[FFN_BW_READ][1][1] = (ffn_level){"DRAM", 30e9, 512e6, 1024e6, 0, 2};
    snprintf(c->notes, sizeof c->notes, "synthetic; no measurement");
}

Test(calibrate, spec_writes_loads_back_and_predicts_the_same)
{
    static ffn_calibration c;
    synthetic_calibration(&c);
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(&c, true, &hw), 0);
    cr_assert_float_eq(hw.peak_flops[FFN_DT_BF16], 6.78e12, 1); /* AMX: the bf16 kernels' unit */
    cr_assert_float_eq(hw.mem_bandwidth_bps, 30e9, 1);
    cr_assert(strstr(hw.source, "measured by ffnroof calibrate on testhost, 2025-01-31") != NULL);
    /* what ffn_bench_fit_eff leaves in the spec */
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = 1;
    hw.eff.tiles[0][1] = 32;
    hw.eff.compute_max_dt[FFN_DT_FP32] = hw.eff.compute_max = 0.8312345678901234;
    hw.eff.compute_max_dt[FFN_DT_BF16] = 0.2187654321;
    hw.eff.memory_max = 0.61234;
    hw.eff.launch_s = 7.654321e-6;
    hw.eff.overlap_p = 3.21;
    hw.eff.tiles_dt[FFN_DT_BF16].n_tiles = 1;
    hw.eff.tiles_dt[FFN_DT_BF16].tiles[0][0] = 32;
    hw.eff.tiles_dt[FFN_DT_BF16].tiles[0][1] = 32;
    hw.eff.tiles_dt[FFN_DT_BF16].min_rows = 32;
    hw.eff.tiles_dt[FFN_DT_BF16].gemv_rows = 2;
    char path[80];
    snprintf(path, sizeof path, "/tmp/ffnroof-test-cal-%d.yaml", (int)getpid());
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_hw_write(&hw, path, &d), 0, "%s", d.msg);
    ffn_hw back;
    cr_assert_eq(ffn_hw_load(path, &back, &d), 0, "%s", d.msg);
    unlink(path);
    cr_assert_eq(back.eff.compute_max_dt[FFN_DT_BF16], hw.eff.compute_max_dt[FFN_DT_BF16]);
    cr_assert_eq(back.eff.launch_s, hw.eff.launch_s);
    cr_assert_eq(back.eff.tiles_dt[FFN_DT_BF16].tiles[0][0], 32u);
    cr_assert_eq(back.eff.tiles_dt[FFN_DT_BF16].gemv_rows, 2u);
    cr_assert_eq(back.compute_units, 2);
    /* the same op predicts identically on the spec and on what was read back */
    ffn_bench_case cs[3];
    memset(cs, 0, sizeof cs);
    for (int i = 0; i < 3; i++) {
        cs[i].kind = i == 2 ? FFN_BENCH_MOE : FFN_BENCH_DENSE;
        cs[i].phase = i == 1 ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
        cs[i].tokens = i == 1 ? 1 : 512;
        cs[i].shape.d = 2048;
        cs[i].shape.f = 5632;
        cs[i].shape.act = FFN_ACT_SWIGLU;
        cs[i].wdtype = i == 0 ? FFN_DT_BF16 : FFN_DT_FP32;
        cs[i].n_experts = 8;
        cs[i].top_k = 2;
    }
    for (int i = 0; i < 3; i++) {
        double r1, p1, r2, p2;
        cr_assert_eq(ffn_bench_predict(&hw, &cs[i], &r1, &p1, NULL, NULL, NULL), 0);
        cr_assert_eq(ffn_bench_predict(&back, &cs[i], &r2, &p2, NULL, NULL, NULL), 0);
        cr_assert(p1 > r1 && isfinite(p1), "case %d: predicted %g roofline %g", i, p1, r1);
        cr_assert_eq(p1, p2);
        cr_assert_eq(r1, r2);
    }
    /* and `predict` uses it like any spec: a dense layer with bf16 weights and activations */
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost lc;
    cr_assert_eq(ffn_dense_layer(&back, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2048, &lc), 0);
    cr_assert(lc.predicted_s > lc.roofline_s);
}

Test(calibrate, calibration_json_round_trips)
{
    static ffn_calibration c;
    synthetic_calibration(&c);
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(&c, true, &hw), 0);
    hw.eff.compute_max_dt[FFN_DT_FP32] = 0.8;
    hw.eff.compute_max_dt[FFN_DT_BF16] = 0.2;
    static ffn_kcal_result k;
    memset(&k, 0, sizeof k);
    k.n_runs = 1;
    k.runs[0].fit = true;
    k.runs[0].r.c.tokens = 16;
    k.runs[0].r.c.shape.d = 64;
    k.runs[0].r.c.shape.f = 96;
    k.runs[0].r.c.shape.act = FFN_ACT_SWIGLU;
    k.runs[0].r.time = (ffn_stats){5, 1e-3, 2e-3, 1.5e-3, 1.9e-3, 1.5e-3, 1e-4, 1e-4};
    k.runs[0].r.predicted_s = 1.4e-3;
    k.runs[0].r.prediction_error = 1.4 / 1.5 - 1;
    k.n_fit = 1;
    snprintf(k.fp32_kernel, sizeof k.fp32_kernel, "f32_test");
    ffn_calib_meta m;
    memset(&m, 0, sizeof m);
    m.complete = true;
    m.load_avg[0] = 0.5;
    m.spec = &hw;
    m.spec_file = "x/hw.yaml";
    m.peak_kind[FFN_DT_BF16] = "bf16_amx";
    m.notes = "extra note";
    char path[80];
    snprintf(path, sizeof path, "/tmp/ffnroof-test-cal-%d.json", (int)getpid());
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    cr_assert_eq(ffn_calib_write_json(fp, &c, &k, &m), 0);
    fclose(fp);
    ffn_ydoc y;
    ffn_diag d;
    cr_assert_eq(ffn_ydoc_load(&y, path, &d), 0, "%s", d.msg);
    unlink(path);
    yaml_node_t *root = ffn_ydoc_root(&y);
    cr_assert_str_eq(ffn_y_text(ffn_y_get(&y, root, "schema", NULL)), FFN_CALIB_SCHEMA);
    yaml_node_t *peaks = ffn_y_get(&y, root, "peaks", NULL);
    cr_assert_eq(peaks->data.sequence.items.top - peaks->data.sequence.items.start, 4);
    yaml_node_t *bwn = ffn_y_get(&y, root, "bandwidth", NULL);
    yaml_node_t *pts = ffn_y_get(&y, bwn, "points", NULL);
    cr_assert_eq(pts->data.sequence.items.top - pts->data.sequence.items.start, 8);
    yaml_node_t *fit = ffn_y_get(&y, root, "fit", NULL);
    yaml_node_t *by = ffn_y_get(&y, fit, "compute_max_by_dtype", NULL);
    cr_assert_float_eq(atof(ffn_y_text(ffn_y_get(&y, by, "bf16", NULL))), 0.2, 1e-12);
    yaml_node_t *spec = ffn_y_get(&y, root, "spec", NULL);
    cr_assert_str_eq(
        ffn_y_text(ffn_y_get(&y, ffn_y_get(&y, spec, "peak_kinds", NULL), "bf16", NULL)),
        "bf16_amx");
    yaml_node_t *notes = ffn_y_get(&y, root, "notes", NULL);
    cr_assert_eq(notes->data.sequence.items.top - notes->data.sequence.items.start, 3);
    ffn_ydoc_release(&y);
}
