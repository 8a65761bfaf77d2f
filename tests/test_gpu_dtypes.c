/* The GPU serving formats (fp8, fp8-block, nvfp4, mxfp4): their bytes with the scales, the units
 * a GEMM in them multiplies on, the dequantising path of a device without those units, the
 * quantisation pass of an engine's linear layer, the spec keys that carry them (family units,
 * per-dtype launch cost) and the fit's engine-linear and eager points. Every expected number is
 * worked out by hand beside it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffnroof/aic.h"
#include "ffnroof/fit.h"
#include "ffnroof/engine_load.h"
#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/hw_write.h"
#include "ffnroof/sim.h"

static void close_rel(double got, double want, double rel)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "got %.12g, want %.12g", got, want);
}

/* An ideal Hopper-like device: fp8 2 PFLOP/s, bf16 1 PFLOP/s, fp32 100 TFLOP/s, 4 TB/s; no fp4
 * units; no efficiency losses. */
static ffn_hw hopper_like(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "hopper-like");
    hw.peak_flops[FFN_DT_FP32] = 1e14;
    hw.peak_flops[FFN_DT_BF16] = 1e15;
    hw.peak_flops[FFN_DT_FP16] = 1e15;
    hw.peak_flops[FFN_DT_FP8] = 2e15;
    hw.peak_flops[FFN_DT_FP8_BLOCK] = 2e15; /* as the loader fills it: the fp8 units' */
    hw.mem_bandwidth_bps = 4e12;
    hw.compute_units = 100;
    hw.eff.compute_max = hw.eff.memory_max = 1.0;
    return hw;
}

Test(gpu_dtypes, names_parse_and_round_trip)
{
    static const char *const names[] = {"fp8-block", "nvfp4", "mxfp4"};
    static const ffn_dtype dts[] = {FFN_DT_FP8_BLOCK, FFN_DT_NVFP4, FFN_DT_MXFP4};
    for (int i = 0; i < 3; i++) {
        ffn_dtype d;
        cr_assert_eq(ffn_dtype_parse(names[i], &d), 0, "%s", names[i]);
        cr_assert_eq(d, dts[i]);
        cr_assert_str_eq(ffn_dtype_name(d), names[i]);
    }
    ffn_dtype d;
    cr_assert_eq(ffn_dtype_parse("FP8_BLOCK", &d), 0); /* the op tables' spelling */
    cr_assert_eq(d, FFN_DT_FP8_BLOCK);
    cr_assert_neq(ffn_dtype_parse("fp4", &d), 0); /* nvfp4 or mxfp4: ambiguous, refused */
    cr_assert_eq(ffn_dtype_unit(FFN_DT_FP8_BLOCK), FFN_DT_FP8);
    cr_assert_eq(ffn_dtype_unit(FFN_DT_NVFP4), FFN_DT_NVFP4);
}

Test(gpu_dtypes, activation_bytes_carry_their_scales)
{
    close_rel(ffn_dtype_bytes(FFN_DT_FP8, 0), 1.0, 1e-15);
    close_rel(ffn_dtype_bytes(FFN_DT_FP8_BLOCK, 0), 1.0 + 4.0 / 128, 1e-15); /* fp32 per 128 */
    close_rel(ffn_dtype_bytes(FFN_DT_NVFP4, 0), 0.5 + 1.0 / 16, 1e-15);      /* e4m3 per 16 */
    close_rel(ffn_dtype_bytes(FFN_DT_MXFP4, 0), 0.5 + 1.0 / 32, 1e-15);      /* e8m0 per 32 */
}

Test(gpu_dtypes, weight_matrix_bytes_by_hand)
{
    /* K 300, N 200 (neither a multiple of a block) */
    /* fp8-block: 60000 + 4 * ceil(300/128)=3 * ceil(200/128)=2 = 60024 */
    close_rel(ffn_weight_matrix_bytes(FFN_DT_FP8_BLOCK, 0, false, 300, 200), 60024.0, 1e-15);
    /* nvfp4: 30000 + ceil(300/16)=19 * 200 + 4 = 33804 */
    close_rel(ffn_weight_matrix_bytes(FFN_DT_NVFP4, 0, false, 300, 200), 33804.0, 1e-15);
    /* mxfp4: 30000 + ceil(300/32)=10 * 200 = 32000 */
    close_rel(ffn_weight_matrix_bytes(FFN_DT_MXFP4, 0, false, 300, 200), 32000.0, 1e-15);
    /* fp8: the one tensor scale is left out */
    close_rel(ffn_weight_matrix_bytes(FFN_DT_FP8, 0, false, 300, 200), 60000.0, 1e-15);
}

Test(gpu_dtypes, compute_dtype_and_the_dequantising_path)
{
    ffn_hw h = hopper_like();
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_FP8, FFN_DT_FP8), FFN_DT_FP8);
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_FP8_BLOCK, FFN_DT_FP8_BLOCK), FFN_DT_FP8_BLOCK);
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_FP8, FFN_DT_FP8_BLOCK), FFN_DT_FP8_BLOCK);
    /* no fp4 units: the weights are dequantised to 16 bits (W4A16), not to fp8 */
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_NVFP4, FFN_DT_NVFP4), FFN_DT_BF16);
    cr_assert(ffn_weights_dequantised(&h, FFN_DT_NVFP4, FFN_DT_NVFP4));
    cr_assert(!ffn_acts_quantised(&h, FFN_DT_NVFP4, FFN_DT_NVFP4));
    cr_assert(ffn_acts_quantised(&h, FFN_DT_FP8, FFN_DT_FP8));
    cr_assert(!ffn_weights_dequantised(&h, FFN_DT_FP8, FFN_DT_FP8));
    /* an Ampere-like device (no fp8 units): fp8 weights run W8A16 */
    h.peak_flops[FFN_DT_FP8] = h.peak_flops[FFN_DT_FP8_BLOCK] = 0;
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_FP8, FFN_DT_FP8), FFN_DT_BF16);
    cr_assert(ffn_weights_dequantised(&h, FFN_DT_FP8, FFN_DT_FP8));
    /* a device with fp4 units multiplies nvfp4 on them */
    h.peak_flops[FFN_DT_NVFP4] = 8e15;
    cr_assert_eq(ffn_compute_dtype(&h, FFN_DT_NVFP4, FFN_DT_NVFP4), FFN_DT_NVFP4);
}

Test(gpu_dtypes, fp8_linear_by_hand)
{
    ffn_hw h = hopper_like();
    ffn_run run;
    ffn_run_default(&run); /* act_io bf16 */
    run.wdtype = run.adtype = FFN_DT_FP8;
    ffn_layer_cost c;
    cr_assert_eq(ffn_linear_ops(&h, &run, 16, 256, 512, &c), 0);
    cr_assert_eq(c.n_ops, 1);
    const ffn_op *op = &c.ops[0];
    cr_assert_eq(op->compute_dtype, FFN_DT_FP8);
    close_rel(op->flops, 2.0 * 16 * 256 * 512, 1e-15); /* 4,194,304 */
    /* W 512*256 = 131072; the quantisation pass reads x bf16 16*512*2 = 16384 and writes fp8
     * 8192; the GEMM reads the fp8 x 8192 and writes y bf16 16*256*2 = 8192: 172032 */
    close_rel(op->weight_bytes, 131072.0, 1e-15);
    close_rel(op->bytes, 172032.0, 1e-15);
    close_rel(op->vec_ops, 3.0 * 16 * 512, 1e-15); /* max, scale, round per element */
}

Test(gpu_dtypes, fp8_block_linear_reads_the_scales)
{
    ffn_hw h = hopper_like();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = run.adtype = FFN_DT_FP8_BLOCK;
    ffn_layer_cost c;
    cr_assert_eq(ffn_linear_ops(&h, &run, 16, 256, 512, &c), 0);
    /* W 131072 + 4 * 4 * 2 = 131104; x bf16 16384; the fp8 x with one fp32 per 128: 16*512*
     * (1 + 4/128) = 8448, written then read: 16896; y 8192: 172576 */
    close_rel(c.ops[0].bytes, 172576.0, 1e-15);
    /* at the fp8 units' rate (an ideal device: the roofline) */
    close_rel(c.ops[0].roofline_s,
              fmax(2.0 * 16 * 256 * 512 / 2e15 + 3.0 * 16 * 512 / 1e14, 172576.0 / 4e12), 1e-12);
}

Test(gpu_dtypes, nvfp4_without_units_is_w4a16)
{
    ffn_hw h = hopper_like();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = run.adtype = FFN_DT_NVFP4;
    ffn_layer_cost c;
    cr_assert_eq(ffn_linear_ops(&h, &run, 4, 256, 512, &c), 0);
    const ffn_op *op = &c.ops[0];
    cr_assert_eq(op->compute_dtype, FFN_DT_BF16);
    /* W 512*256/2 + 32*256 + 4 = 73732; x and y stay bf16: 4*512*2 + 4*256*2 = 6144 */
    close_rel(op->bytes, 79876.0, 1e-15);
    /* one dequantisation op a weight, no quantisation pass */
    close_rel(op->vec_ops, 512.0 * 256, 1e-15);
}

Test(gpu_dtypes, launch_by_dtype_replaces_the_launch_cost)
{
    ffn_hw h = hopper_like();
    h.eff.launch_s = 2e-6;
    h.eff.launch_dt[FFN_DT_FP8] = 7e-6;
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost b, f;
    cr_assert_eq(ffn_linear_ops(&h, &run, 1, 256, 256, &b), 0);
    run.wdtype = run.adtype = FFN_DT_FP8;
    cr_assert_eq(ffn_linear_ops(&h, &run, 1, 256, 256, &f), 0);
    /* tiny ops: the fixed cost dominates, 2 us for bf16 and 7 us for fp8 */
    cr_assert(b.ops[0].predicted_s >= 2e-6 && b.ops[0].predicted_s < 2.1e-6, "%g",
              b.ops[0].predicted_s);
    cr_assert(f.ops[0].predicted_s >= 7e-6 && f.ops[0].predicted_s < 7.1e-6, "%g",
              f.ops[0].predicted_s);
}

Test(gpu_dtypes, engine_linear_and_eager_points)
{
    ffn_hw h = hopper_like();
    ffn_fit_point p;
    memset(&p, 0, sizeof p);
    p.m = 16;
    p.n = 256;
    p.k = 512;
    p.wdtype = p.adtype = FFN_DT_FP8;
    p.time_s = 1e-5;
    p.no_harness = true;
    const double plain = ffn_fit_point_predict(&h, &p);
    p.engine_linear = true;
    const double linear = ffn_fit_point_predict(&h, &p);
    /* the quantisation pass and the bf16 input and output: more bytes than the plain GEMM */
    cr_assert(linear > plain, "%g %g", linear, plain);
    ffn_layer_cost c;
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = run.adtype = FFN_DT_FP8;
    cr_assert_eq(ffn_linear_ops(&h, &run, 16, 256, 512, &c), 0);
    close_rel(linear, c.predicted_s, 1e-12);
    p.eager_floor_s = 50e-6; /* never shorter than the host's issue time */
    close_rel(ffn_fit_point_predict(&h, &p), 50e-6, 1e-15);
}

/* A spec in a folder with its own arch/families.yaml. */
static char dir[128];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static const char *spec(const char *family, const char *peaks)
{
    static char path[256], text[2048];
    snprintf(dir, sizeof dir, "/tmp/ffnroof-dtypes-%d", (int)getpid());
    mkdir(dir, 0700);
    char arch[192];
    snprintf(arch, sizeof arch, "%s/arch", dir);
    mkdir(arch, 0700);
    snprintf(path, sizeof path, "%s/arch/families.yaml", dir);
    write_file(path, "hopper:\n  units: [fp32, bf16, fp16, fp8, int8]\n  source: test\n");
    snprintf(text, sizeof text,
             "name: t\nvendor: v\nkind: gpu\nfamily: %s\nsource: s\npeak:\n%s"
             "compute_units: 1\nmemory: {capacity: 80 GB, bandwidth: 3 TB/s}\n"
             "efficiency:\n  launch_by_dtype: {fp8: 6 us, nvfp4: 9 us}\n"
             "  quant_row_by_dtype: {fp8: 6.5 ns}\n",
             family, peaks);
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    write_file(path, text);
    return path;
}

static void cleanup(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(gpu_dtypes, a_family_bounds_the_peaks, .fini = cleanup)
{
    ffn_hw hw;
    ffn_diag d;
    const char *p = spec("hopper", "  bf16: 989 TFLOPS\n  fp8: 1979 TFLOPS\n");
    cr_assert_eq(ffn_hw_load(p, &hw, &d), 0, "%s", d.msg);
    cr_assert_str_eq(hw.family, "hopper");
    close_rel(hw.peak_flops[FFN_DT_FP8_BLOCK], 1979e12, 1e-15); /* the fp8 units' */
    close_rel(hw.eff.launch_dt[FFN_DT_FP8], 6e-6, 1e-12);
    close_rel(hw.eff.quant_row_s[FFN_DT_FP8], 6.5e-9, 1e-12);
    /* an nvfp4 peak on a family without fp4 units: refused at the key */
    p = spec("hopper", "  bf16: 989 TFLOPS\n  nvfp4: 3958 TFLOPS\n");
    cr_assert_neq(ffn_hw_load(p, &hw, &d), 0);
    cr_assert_eq(d.line, 8, "%d: %s", d.line, d.msg);
    cr_assert_eq(d.col, 3);
    cr_assert(strstr(d.msg, "no nvfp4 units") != NULL, "%s", d.msg);
    /* fp8-block has no units of its own */
    p = spec("hopper", "  fp8: 1979 TFLOPS\n  fp8-block: 1979 TFLOPS\n");
    cr_assert_neq(ffn_hw_load(p, &hw, &d), 0);
    cr_assert(strstr(d.msg, "fp8 units") != NULL, "%s", d.msg);
    /* an unknown family */
    p = spec("pascal", "  bf16: 989 TFLOPS\n");
    cr_assert_neq(ffn_hw_load(p, &hw, &d), 0);
    cr_assert(strstr(d.msg, "unknown family 'pascal'") != NULL, "%s", d.msg);
    cr_assert_eq(d.line, 4);
}

Test(gpu_dtypes, new_keys_round_trip, .fini = cleanup)
{
    ffn_hw hw, back;
    ffn_diag d;
    const char *p = spec("hopper", "  bf16: 989 TFLOPS\n  fp8: 1979 TFLOPS\n");
    cr_assert_eq(ffn_hw_load(p, &hw, &d), 0, "%s", d.msg);
    char out[256];
    snprintf(out, sizeof out, "%s/back.yaml", dir);
    cr_assert_eq(ffn_hw_write(&hw, out, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_hw_load(out, &back, &d), 0, "%s", d.msg);
    cr_assert_str_eq(back.family, "hopper");
    cr_assert_eq(back.eff.launch_dt[FFN_DT_NVFP4], hw.eff.launch_dt[FFN_DT_NVFP4]);
    cr_assert_eq(back.eff.quant_row_s[FFN_DT_FP8], hw.eff.quant_row_s[FFN_DT_FP8]);
    cr_assert_eq(back.peak_flops[FFN_DT_FP8_BLOCK], hw.peak_flops[FFN_DT_FP8]);
}

/* ---- serving-engine kernel profiles ---------------------------------------------------- */

#include "ffnroof/engine.h"

#define ENGINES FFNROOF_SOURCE_DIR "/hw/arch/engines.yaml"

Test(gpu_dtypes, shipped_engine_profiles_load)
{
    ffn_engine_profile p;
    ffn_diag d;
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_VLLM, &p, &d), 0, "%s", d.msg);
    cr_expect(p.baseline, "vLLM's kernels are the ones the specs are fitted to");
    for (int e = FFN_ENGINE_SGLANG; e <= FFN_ENGINE_TRTLLM; e++) {
        cr_assert_eq(ffn_engine_load(ENGINES, (ffn_engine)e, &p, &d), 0, "%s", d.msg);
        cr_expect(!p.baseline);
        cr_expect(p.dt[FFN_DT_FP8].set && p.dt[FFN_DT_FP8_BLOCK].set, "%s", ffn_engine_name(e));
        cr_expect(!p.dt[FFN_DT_BF16].set, "bf16 runs cuBLAS under every engine: no entry");
        cr_expect(p.dt[FFN_DT_FP8].p10 > 0 && p.dt[FFN_DT_FP8_BLOCK].p10 > 0,
                  "%s: each fitted format carries its range", ffn_engine_name(e));
        cr_expect_str_eq(p.device, "h100-sxm");
    }
}

static int load_text(const char *text, ffn_engine e, ffn_diag *d);

/* engine e's profile from a profiles file holding text (loaded, or the test fails) */
static void load_profile(const char *text, ffn_engine e, ffn_engine_profile *p)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ffnroof-engines-ok-%d.yaml", (int)getpid());
    write_file(path, text);
    ffn_diag d;
    const int rc = ffn_engine_load(path, e, p, &d);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", d.msg);
}

/* An engine's range for a format replaces the spec's on the device it was fitted on and is
 * widened on another; a bad range is refused at its line. */
Test(gpu_dtypes, an_engine_range_replaces_the_formats_range)
{
    const char *text = "trtllm:\n  source: x\n  device: h100-sxm\n  by_dtype:\n"
                       "    fp8: {compute: 1, range: [0.9, 1.1]}\n";
    ffn_engine_profile p;
    ffn_diag d;
    load_profile(text, FFN_ENGINE_TRTLLM, &p);
    static const char *const specs[] = {"h100-sxm", "b200"};
    for (int i = 0; i < 2; i++) {
        char sp[256];
        snprintf(sp, sizeof sp, FFNROOF_SOURCE_DIR "/hw/%s.yaml", specs[i]);
        ffn_hw hw;
        cr_assert_eq(ffn_hw_load(sp, &hw, &d), 0, "%s", d.msg);
        double b10, b90, lo, hi;
        ffn_hw_unc_range_dt(&hw, FFN_DT_BF16, &b10, &b90);
        ffn_hw_apply_engine(&hw, &p);
        ffn_hw_unc_range_dt(&hw, FFN_DT_FP8, &lo, &hi);
        cr_expect_float_eq(lo, i ? 0.81 : 0.9, 1e-12, "%s", specs[i]);
        cr_expect_float_eq(hi, i ? 1.21 : 1.1, 1e-12, "%s", specs[i]);
        ffn_hw_unc_range_dt(&hw, FFN_DT_BF16, &lo, &hi);
        cr_expect(lo == b10 && hi == b90, "%s: bf16 keeps the spec's range", specs[i]);
    }
    cr_expect_eq(load_text("trtllm:\n  source: x\n  by_dtype:\n    fp8: {range: [1.3, 0.9]}\n",
                           FFN_ENGINE_TRTLLM, &d),
                 FFN_ERANGE);
    cr_expect(d.line == 4 && strstr(d.msg, "p10 < p90"), "%d %s", d.line, d.msg);
    cr_expect_eq(load_text("trtllm:\n  source: x\n  by_dtype:\n    fp8: {range: 1}\n",
                           FFN_ENGINE_TRTLLM, &d),
                 FFN_ESCHEMA);
    cr_expect(d.line == 4 && strstr(d.msg, "[p10, p90]"), "%d %s", d.line, d.msg);
}

/* --engine changes a quantised prediction and leaves bf16 as it was. */
Test(gpu_dtypes, an_engine_changes_the_quantised_gemms_only)
{
    ffn_hw base;
    ffn_diag d;
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/h100-sxm.yaml", &base, &d), 0, "%s", d.msg);
    ffn_engine_profile p;
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_TRTLLM, &p, &d), 0, "%s", d.msg);
    ffn_hw trt = base;
    ffn_hw_apply_engine(&trt, &p);
    cr_expect_eq(trt.engine, FFN_ENGINE_TRTLLM);
    /* the spec's fp8 tile rules are vLLM's dispatch: TRT-LLM's kernels take the best tiles */
    cr_expect_gt(base.eff.rules_dt[FFN_DT_FP8].n, 0, "the H100 spec carries vLLM's fp8 rules");
    cr_expect_eq(trt.eff.rules_dt[FFN_DT_FP8].n, 0);
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost a, b;
    for (uint64_t m = 1; m <= 4096; m *= 8) {
        run.wdtype = run.adtype = FFN_DT_BF16;
        cr_assert_eq(ffn_linear_ops(&base, &run, m, 8192, 8192, &a), 0);
        cr_assert_eq(ffn_linear_ops(&trt, &run, m, 8192, 8192, &b), 0);
        cr_expect_eq(a.predicted_s, b.predicted_s, "bf16 m %llu", (unsigned long long)m);
        run.wdtype = run.adtype = FFN_DT_FP8;
        cr_assert_eq(ffn_linear_ops(&base, &run, m, 8192, 8192, &a), 0);
        cr_assert_eq(ffn_linear_ops(&trt, &run, m, 8192, 8192, &b), 0);
        cr_expect(fabs(b.predicted_s / a.predicted_s - 1) > 0.01, "fp8 m %llu: %g vs %g",
                  (unsigned long long)m, b.predicted_s, a.predicted_s);
    }
    /* the baseline profile changes nothing */
    ffn_engine_profile v;
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_VLLM, &v, &d), 0, "%s", d.msg);
    ffn_hw same = base;
    ffn_hw_apply_engine(&same, &v);
    cr_expect_eq(memcmp(&same.eff, &base.eff, sizeof base.eff), 0);
}

static int load_text(const char *text, ffn_engine e, ffn_diag *d)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ffnroof-engines-%d.yaml", (int)getpid());
    write_file(path, text);
    ffn_engine_profile p;
    const int rc = ffn_engine_load(path, e, &p, d);
    unlink(path);
    return rc;
}

Test(gpu_dtypes, bad_engine_profiles_are_refused_at_their_line)
{
    ffn_diag d;
    cr_expect_eq(load_text("tgi:\n  source: x\n", FFN_ENGINE_SGLANG, &d), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "unknown engine 'tgi'") && d.line == 1, "%d %s", d.line, d.msg);
    cr_expect_eq(load_text("vllm:\n  baseline: true\n  source: x\n", FFN_ENGINE_SGLANG, &d),
                 FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "no profile for engine 'sglang'") != NULL, "%s", d.msg);
    cr_expect_eq(load_text("sglang:\n  by_dtype: {fp8: {compute: 1}}\n", FFN_ENGINE_SGLANG, &d),
                 FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "needs a 'source'") != NULL, "%s", d.msg);
    cr_expect_eq(load_text("sglang:\n  source: x\n  by_dtype:\n    fp8: {compute: 0}\n",
                           FFN_ENGINE_SGLANG, &d),
                 FFN_ERANGE);
    cr_expect_eq(d.line, 4, "%d %s", d.line, d.msg);
    cr_expect_eq(load_text("sglang:\n  source: x\n  by_dtype:\n    fp9: {compute: 1}\n",
                           FFN_ENGINE_SGLANG, &d),
                 FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "fp9") && d.line == 4, "%d %s", d.line, d.msg);
    /* a time without its unit */
    cr_expect_lt(load_text("sglang:\n  source: x\n  by_dtype:\n    fp8: {launch: 5}\n",
                           FFN_ENGINE_SGLANG, &d),
                 0);
    cr_expect(d.line == 4 && strstr(d.msg, "launch"), "%d %s", d.line, d.msg);
    /* a kernel rule without its depth, at its line */
    cr_expect_eq(load_text("sglang:\n  source: x\n  by_dtype:\n    fp8-block:\n      kernels:\n"
                           "        - {waves: {rows: [64], cols: [16, 256]}}\n",
                           FFN_ENGINE_SGLANG, &d),
                 FFN_ESCHEMA);
    cr_expect(d.line == 6 && strstr(d.msg, "depth"), "%d %s", d.line, d.msg);
}

/* A fused-MoE kernel family: read whole, refused at its line when malformed. */
Test(gpu_dtypes, engine_moe_entries_load_and_bad_ones_are_refused_at_their_line)
{
    const char *head = "trtllm:\n  source: x\n  moe:\n";
    char buf[1024];
    snprintf(buf, sizeof buf,
             "%s    - {kernels: flow_cutlass, dtype: fp8, device: h100-sxm, path: permuted, "
             "module: 12 us, "
             "gemm_eff: 1.1, tile: 0.8 us, kstep: 40 ns, range: [0.84, 1.9]}\n"
             "    - {kernels: flow_cutlass, dtype: bf16, device: h100-sxm, module: 15 us, "
             "gemm_eff: 0.2, "
             "tile: 0.7 us, kstep: 0.1 us, zero_tile: 0.4 us, ep: 1 us, misaligned: 3, "
             "range: [0.8, 2.5]}\n",
             head);
    ffn_engine_profile p;
    ffn_diag d;
    load_profile(buf, FFN_ENGINE_TRTLLM, &p);
    cr_assert_eq(p.n_moe, 2);
    cr_expect_str_eq(p.moe[0].kernels, "flow_cutlass");
    cr_expect_eq(p.moe[0].dtype, FFN_DT_FP8);
    cr_expect_eq(p.moe[0].params.path, FFN_MF_PATH_PERMUTED);
    cr_expect_float_eq(p.moe[0].params.module_s, 12e-6, 1e-15);
    cr_expect_float_eq(p.moe[0].params.kstep_s, 40e-9, 1e-15);
    cr_expect_eq(p.moe[0].params.misaligned_x, 1.0, "no misalignment unless given");
    cr_expect_eq(p.moe[0].params.zero_tile_s, 0.0);
    cr_expect(p.moe[0].p10 == 0.84 && p.moe[0].p90 == 1.9);
    cr_expect_eq(p.moe[1].params.path, FFN_MF_PATH_ENGINE, "the engine's layout by default");
    cr_expect_eq(p.moe[1].params.misaligned_x, 3.0);

    static const struct {
        const char *entry, *what;
        int rc, line;
    } bad[] = {
        {"    - {dtype: fp8, device: h100-sxm, module: 1 us, gemm_eff: 1, tile: 1 us, kstep: 1 us, "
         "range: [0.8, 1.2]}\n",
         "kernels", FFN_ESCHEMA, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp9, module: 1 us, gemm_eff: 1, tile: 1 us, "
         "kstep: 1 us, "
         "range: [0.8, 1.2]}\n",
         "fp9", FFN_ESCHEMA, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp8, path: gathered, module: 1 us, gemm_eff: "
         "1, tile: 1 us, "
         "kstep: 1 us, range: [0.8, 1.2]}\n",
         "sorted, permuted", FFN_ESCHEMA, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp8, module: 1 us, gemm_eff: 0, tile: 1 us, "
         "kstep: 1 us, "
         "range: [0.8, 1.2]}\n",
         "gemm_eff", FFN_ERANGE, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp8, module: 1 us, gemm_eff: 1, tile: 1 us, "
         "kstep: 1 us, "
         "range: [1.2, 0.8]}\n",
         "p10 < p90", FFN_ERANGE, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp8, module: 1 us, gemm_eff: 1, tile: 1 us, "
         "kstep: 1 us}\n",
         "range", FFN_ESCHEMA, 4},
        {"    - {kernels: k, device: h100-sxm, dtype: fp8, module: 1 us, gemm_eff: 1, tile: 1 us, "
         "kstep: 1 us, "
         "range: [0.8, 1.2]}\n"
         "    - {kernels: k, device: h100-sxm, dtype: fp8, module: 2 us, gemm_eff: 1, tile: 1 us, "
         "kstep: 1 us, "
         "range: [0.8, 1.2]}\n",
         "a second", FFN_ESCHEMA, 5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(buf, sizeof buf, "%s%s", head, bad[i].entry);
        cr_expect_eq(load_text(buf, FFN_ENGINE_TRTLLM, &d), bad[i].rc, "%zu: %s", i, d.msg);
        cr_expect(d.line == bad[i].line && strstr(d.msg, bad[i].what), "%zu: %d %s", i, d.line,
                  d.msg);
    }
}

/* A layer's kernel family: the entry of its format whose name part the kernel's name holds,
 * else the format's first entry (the engine's default kernel), else none. */
Test(gpu_dtypes, a_moe_kernel_family_is_found_by_name_and_format)
{
    ffn_engine_profile p;
    memset(&p, 0, sizeof p);
    const struct {
        const char *k;
        ffn_dtype dt;
    } e[] = {{"triton", FFN_DT_BF16}, {"cutlass", FFN_DT_BF16}, {"cutlass", FFN_DT_FP8}};
    for (int i = 0; i < 3; i++) {
        snprintf(p.moe[i].kernels, sizeof p.moe[i].kernels, "%s", e[i].k);
        p.moe[i].dtype = e[i].dt;
    }
    p.n_moe = 3;
    const ffn_dtype B = FFN_DT_BF16, F8 = FFN_DT_FP8, N4 = FFN_DT_NVFP4, I8 = FFN_DT_INT8;
    cr_expect_eq(ffn_engine_moe_for(&p, "sglang_flashinfer_cutlass_moe", B, B), &p.moe[1]);
    cr_expect_eq(ffn_engine_moe_for(&p, "sglang_fused_moe_triton", B, B), &p.moe[0]);
    cr_expect_eq(ffn_engine_moe_for(&p, "a_new_kernel", B, B), &p.moe[0]);
    cr_expect_eq(ffn_engine_moe_for(&p, NULL, B, B), &p.moe[0]);
    cr_expect_eq(ffn_engine_moe_for(&p, "fused_moe_triton", F8, F8), &p.moe[2]);
    /* a format without entries: the kernel family of the same name in another format */
    cr_expect_eq(ffn_engine_moe_for(&p, "flashinfer_cutlass", N4, N4), &p.moe[1]);
    /* ... else the engine's kernel of the activations' class */
    cr_expect_eq(ffn_engine_moe_for(&p, "marlin", N4, N4), &p.moe[2], "narrow: fp8's");
    cr_expect_eq(ffn_engine_moe_for(&p, "marlin", I8, B), &p.moe[0], "weight-only: bf16's");
    p.n_moe = 1; /* the bf16 Triton entry alone: nothing of the narrow class */
    cr_expect_null(ffn_engine_moe_for(&p, "marlin", N4, N4));
    p.n_moe = 3;
    cr_expect_null(ffn_engine_moe_for(NULL, "cutlass", B, B));

    /* on its own device its range, on another NVIDIA GPU widened, on AMD's none */
    snprintf(p.moe[1].device, sizeof p.moe[1].device, "h100-sxm");
    p.moe[1].p10 = 0.8;
    p.moe[1].p90 = 1.3;
    static const char *const specs[] = {"h100-sxm", "b200", "mi300x"};
    ffn_hw hw;
    ffn_diag d;
    char path[256];
    double lo = 0, hi = 0;
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, FFNROOF_SOURCE_DIR "/hw/%s.yaml", specs[i]);
        cr_assert_eq(ffn_hw_load(path, &hw, &d), 0, "%s", d.msg);
        const ffn_engine_moe *m = ffn_engine_moe_on(&p, &hw, "x_cutlass", B, B, &lo, &hi);
        if (i == 2) {
            cr_expect_null(m, "AMD runs its own MoE kernels");
            continue;
        }
        cr_assert_eq(m, &p.moe[1], "%s", specs[i]);
        cr_expect_float_eq(lo, i ? 0.72 : 0.8, 1e-12, "%s", specs[i]);
        cr_expect_float_eq(hi, i ? 1.43 : 1.3, 1e-12, "%s", specs[i]);
        /* and again for another format */
        cr_assert_eq(ffn_engine_moe_on(&p, &hw, "x_cutlass", N4, N4, &lo, &hi), &p.moe[1]);
        cr_expect_float_eq(lo, 0.8 * (i ? 0.81 : 0.9), 1e-12, "%s", specs[i]);
        cr_expect_float_eq(hi, 1.3 * (i ? 1.21 : 1.1), 1e-12, "%s", specs[i]);
    }
}

/* An engine's own kernel rules replace the spec's for that format; without them the format
 * takes the best of the device's tiles. */
Test(gpu_dtypes, an_engine_brings_its_kernel_rules)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ffnroof-engines-rules-%d.yaml", (int)getpid());
    write_file(path, "sglang:\n  source: x\n  by_dtype:\n"
                     "    fp8: {compute: 1}\n"
                     "    fp8-block:\n      compute: 1\n      kernels:\n"
                     "        - {m: 16, best: true}\n"
                     "        - {waves: {rows: [64, 128], cols: [16, 256], depth: 128}}\n");
    ffn_engine_profile p;
    ffn_diag d;
    cr_assert_eq(ffn_engine_load(path, FFN_ENGINE_SGLANG, &p, &d), 0, "%s", d.msg);
    unlink(path);
    ffn_hw hw;
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/h100-sxm.yaml", &hw, &d), 0, "%s", d.msg);
    cr_assert_gt(hw.eff.rules_dt[FFN_DT_FP8].n, 0);
    ffn_hw_apply_engine(&hw, &p);
    cr_expect_eq(hw.eff.rules_dt[FFN_DT_FP8].n, 0, "fp8: the best tiles");
    const ffn_kernel_rules *r = &hw.eff.rules_dt[FFN_DT_FP8_BLOCK];
    cr_assert_eq(r->n, 2);
    cr_expect_eq(r->r[0].kind, FFN_RULE_BEST);
    cr_expect_eq(r->r[0].m_max, 16);
    cr_expect_eq(r->r[1].kind, FFN_RULE_WAVES);
    cr_expect(r->r[1].n_rows == 2 && r->r[1].rows[1] == 128 && r->r[1].col_step == 16 &&
              r->r[1].col_max == 256 && r->r[1].tk == 128);
}

/* Every profile, its baseline engine's included, leaves its fused-MoE kernel families on a
 * GPU's spec (what prices its MoE layers), its GEMM factors on an NVIDIA GPU's only; a family
 * applies to NVIDIA GPUs, its range widened a step for another device and one for another
 * architecture. */
Test(gpu_dtypes, an_engine_leaves_its_moe_kernels_on_gpu_specs)
{
    const char *text =
        "vllm:\n  baseline: true\n  source: x\n  moe:\n"
        "    - {kernels: tri, dtype: bf16, device: h100-sxm, arch: hopper, module: 7 us, "
        "gemm_eff: 0.5, "
        "tile: 0.6 us, kstep: 0.1 us, zero_tile: 0.2 us, ep: 7 us, misaligned: 3, "
        "range: [0.8, 1.2]}\n";
    ffn_engine_profile p;
    load_profile(text, FFN_ENGINE_VLLM, &p);
    ffn_diag d;
    ffn_hw nv, amd;
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/h200.yaml", &nv, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/mi300x.yaml", &amd, &d), 0, "%s", d.msg);
    const ffn_hw before = nv;
    ffn_hw_apply_engine(&nv, &p);
    ffn_hw_apply_engine(&amd, &p);
    cr_expect_eq(nv.n_moe_kernels, 1);
    cr_expect_str_eq(nv.moe_kernels[0].kernels, "tri");
    cr_expect_str_eq(nv.moe_kernels[0].arch, "hopper");
    cr_expect_eq(nv.moe_engine, FFN_ENGINE_VLLM);
    cr_expect_eq(nv.engine, FFN_ENGINE_NONE, "a baseline profile leaves the GEMMs as fitted");
    cr_expect(!memcmp(&nv.eff, &before.eff, sizeof nv.eff));
    cr_expect_eq(amd.n_moe_kernels, 1);
    cr_expect_eq(amd.engine, FFN_ENGINE_NONE);
    /* on the H200 (fitted on the H100, both Hopper) the range is widened one step, on the
     * B200 (Blackwell) two */
    double lo, hi;
    cr_assert_not_null(ffn_moe_kernel_on(nv.moe_kernels, nv.n_moe_kernels, &nv, NULL, FFN_DT_BF16,
                                         FFN_DT_BF16, &lo, &hi));
    cr_expect_float_eq(lo, 0.72, 1e-12);
    cr_expect_float_eq(hi, 1.32, 1e-12);
    ffn_hw bw;
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/b200.yaml", &bw, &d), 0, "%s", d.msg);
    ffn_hw_apply_engine(&bw, &p);
    cr_assert_not_null(ffn_moe_kernel_on(bw.moe_kernels, bw.n_moe_kernels, &bw, NULL, FFN_DT_BF16,
                                         FFN_DT_BF16, &lo, &hi));
    cr_expect_float_eq(lo, 0.648, 1e-12);
    cr_expect_float_eq(hi, 1.452, 1e-12);
    cr_expect_null(ffn_moe_kernel_on(amd.moe_kernels, amd.n_moe_kernels, &amd, NULL, FFN_DT_BF16,
                                     FFN_DT_BF16, &lo, &hi));
}

/* An entry the engine runs only when asked (`default: false`) prices the op-table rows that name
 * its kernel and is never a prediction's kernel for its format: the format then falls to the
 * activations' class. A `default` that is not true or false is refused at its line. */
Test(gpu_dtypes, an_optional_moe_kernel_is_taken_by_name_only)
{
    const char *text =
        "vllm:\n  baseline: true\n  source: x\n  moe:\n"
        "    - {kernels: tri, dtype: bf16, device: h100-sxm, module: 7 us, gemm_eff: 0.5, "
        "tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n"
        "    - {kernels: fi, dtype: fp8, device: h100-sxm, default: false, module: 7 us, "
        "gemm_eff: 0.5, tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n"
        "    - {kernels: trf, dtype: fp8-block, device: h100-sxm, module: 7 us, gemm_eff: 0.5, "
        "tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n";
    ffn_engine_profile p;
    load_profile(text, FFN_ENGINE_VLLM, &p);
    cr_assert_eq(p.n_moe, 3);
    cr_expect(p.moe[1].optional && !p.moe[0].optional && !p.moe[2].optional);
    const ffn_engine_moe *m = ffn_engine_moe_for(&p, "vllm_fi_experts", FFN_DT_FP8, FFN_DT_FP8);
    cr_expect(m == &p.moe[1], "by its name");
    m = ffn_engine_moe_for(&p, NULL, FFN_DT_FP8, FFN_DT_FP8);
    cr_expect(m == &p.moe[2], "fp8 without a name: the class's next, fp8-block (got %s)",
              m ? m->kernels : "none");
    m = ffn_engine_moe_for(&p, NULL, FFN_DT_FP8, FFN_DT_BF16);
    cr_expect(m == &p.moe[0], "fp8 weights, bf16 activations: the bf16 kernel");
    ffn_diag d;
    cr_expect_eq(load_text("vllm:\n  source: x\n  moe:\n"
                           "    - {kernels: fi, dtype: fp8, device: h100-sxm, default: maybe, "
                           "module: 7 us, gemm_eff: 0.5, tile: 0.6 us, kstep: 0.1 us, "
                           "range: [0.8, 1.2]}\n",
                           FFN_ENGINE_VLLM, &d),
                 FFN_ESCHEMA);
    cr_expect(d.line == 4 && strstr(d.msg, "true or false"), "%d %s", d.line, d.msg);
}

/* A family prices its vendor's GPUs only, one of the device's own architecture first: the H200
 * takes the NVIDIA entry, the MI300X and the MI325X (both CDNA 3) the one fitted on the MI300X
 * (on the MI325X widened a step), the MI355X its own. The same kernel and format may be fitted on
 * several devices, not twice on one. */
Test(gpu_dtypes, a_moe_family_prices_its_vendors_gpus_its_own_architecture_first)
{
    const char *text =
        "vllm:\n  baseline: true\n  source: x\n  moe:\n"
        "    - {kernels: tri, dtype: bf16, device: h100-sxm, arch: hopper, module: 7 us, "
        "gemm_eff: 0.5, tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n"
        "    - {kernels: ai, dtype: bf16, device: mi355x, arch: cdna4, vendor: AMD, module: 7 us, "
        "gemm_eff: 0.5, tile: 0.6 us, kstep: 0.1 us, range: [0.7, 1.3]}\n"
        "    - {kernels: ai, dtype: bf16, device: mi300x, arch: cdna3, vendor: AMD, module: 7 us, "
        "gemm_eff: 0.4, tile: 0.6 us, kstep: 0.1 us, range: [0.9, 1.1]}\n";
    ffn_engine_profile p;
    load_profile(text, FFN_ENGINE_VLLM, &p);
    cr_assert_eq(p.n_moe, 3);
    cr_expect_str_eq(p.moe[0].vendor, "NVIDIA", "the default vendor");
    static const struct {
        const char *spec;
        int entry;
        double lo, hi;
    } cases[] = {
        {"h200", 0, 0.72, 1.32},
        {"mi300x", 2, 0.9, 1.1},
        {"mi325x", 2, 0.81, 1.21},
        {"mi355x", 1, 0.7, 1.3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sp[256];
        snprintf(sp, sizeof sp, FFNROOF_SOURCE_DIR "/hw/%s.yaml", cases[i].spec);
        ffn_hw hw;
        ffn_diag d;
        cr_assert_eq(ffn_hw_load(sp, &hw, &d), 0, "%s", d.msg);
        double lo, hi;
        const ffn_engine_moe *m =
            ffn_engine_moe_on(&p, &hw, NULL, FFN_DT_BF16, FFN_DT_BF16, &lo, &hi);
        cr_expect(m == &p.moe[cases[i].entry], "%s: entry %d", cases[i].spec,
                  m ? (int)(m - p.moe) : -1);
        cr_expect_float_eq(lo, cases[i].lo, 1e-12, "%s", cases[i].spec);
        cr_expect_float_eq(hi, cases[i].hi, 1e-12, "%s", cases[i].spec);
    }
    ffn_diag d;
    cr_expect_eq(load_text("vllm:\n  source: x\n  moe:\n"
                           "    - {kernels: ai, dtype: bf16, device: mi300x, module: 7 us, "
                           "gemm_eff: 0.5, tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n"
                           "    - {kernels: ai, dtype: bf16, device: mi300x, module: 7 us, "
                           "gemm_eff: 0.4, tile: 0.6 us, kstep: 0.1 us, range: [0.8, 1.2]}\n",
                           FFN_ENGINE_VLLM, &d),
                 FFN_ESCHEMA);
    cr_expect(d.line == 5 && strstr(d.msg, "a second 'moe' entry for bf16 kernels 'ai' on mi300x"),
              "%d %s", d.line, d.msg);
}
