/* The work of quantized FFN layers, counted twice: by the kernels' work count
 * (kernels/count.c, what the bench runner charges a kernel call) and by the simulator's fused
 * layer (sim/ffn.c), both against hand counts worked out in the comments: weight bytes plus scale
 * bytes for int8 per channel and int4 groups with and without a zero point, the W8A8 activation
 * quantisation passes, the dequantisation and rescale vector ops; and what the simulator makes
 * of them: decode bound by weight + scale bytes, W8A8 prefill on the int8 peak, W8A16 prefill on
 * the 16-bit peak plus the dequantisation, MoE expert weights with their scales. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/fit.h"
#include "ffnroof/kernels.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

static void close_rel(double got, double want, double rel)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "got %.12g, want %.12g", got, want);
}

/* A descriptor carrying only what the work count reads: the weight and multiply formats. */
static ffn_kernel fmt(ffn_dtype w, ffn_dtype a)
{
    return (ffn_kernel){.name = "count-only", .wdtype = w, .adtype = a};
}

/* 1 TFLOP/s fp32, 2 TFLOP/s bf16, 4 TOP/s int8, 100 GB/s, no efficiency losses. */
static ffn_hw cpu(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "quant-cpu");
    hw.kind = FFN_HW_CPU;
    hw.peak_flops[FFN_DT_FP32] = 1e12;
    hw.peak_flops[FFN_DT_BF16] = 2e12;
    hw.peak_flops[FFN_DT_INT8] = 4e12;
    hw.mem_bandwidth_bps = 100e9;
    hw.compute_units = 2;
    return hw;
}

/* dt's tiles on hw: a CPU kernel of 1 x 32 tiles that streams up to `rows` rows. */
static ffn_tileset *stream_tiles(ffn_hw *hw, ffn_dtype dt, uint32_t rows)
{
    ffn_tileset *ts = &hw->eff.tiles_dt[dt];
    ts->n_tiles = 1;
    ts->tiles[0][0] = 1;
    ts->tiles[0][1] = 32;
    ts->min_rows = 1;
    ts->gemv_rows = rows;
    return ts;
}

/* The simulator's fused layer for the kernel's formats: activations fp32 in memory (what
 * ffnroof's kernels read and write), multiply in the kernel's format. */
static ffn_layer_cost sim_layer(const ffn_kernel *k, const ffn_kshape *s, size_t T)
{
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = k->wdtype;
    run.adtype = k->adtype == FFN_DT_INT8 ? FFN_DT_INT8 : FFN_DT_FP32;
    run.act_io_dtype = FFN_DT_FP32;
    run.group_size = s->group;
    run.zero_point = s->zero_point;
    run.fused = true;
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, s->d, s->f, s->act, s->bias, T, &c), 0);
    return c;
}

static void both_agree(const ffn_kernel *k, const ffn_kshape *s, size_t T, double bytes,
                       double vec_ops)
{
    const ffn_layer_cost c = sim_layer(k, s, T);
    cr_assert_float_eq(ffn_kernel_bytes(k, s, T), bytes, 1e-9, "kernel bytes %.1f, hand %.1f",
                       ffn_kernel_bytes(k, s, T), bytes);
    cr_assert_float_eq(ffn_kernel_vec_ops(k, s, T), vec_ops, 1e-9, "kernel vec ops %.1f, hand %.1f",
                       ffn_kernel_vec_ops(k, s, T), vec_ops);
    cr_assert_float_eq(c.bytes, bytes, 1e-9, "sim bytes %.1f, hand %.1f", c.bytes, bytes);
    cr_assert_float_eq(c.vec_ops, vec_ops, 1e-9, "sim vec ops %.1f, hand %.1f", c.vec_ops, vec_ops);
    /* the FLOPs do not depend on the format */
    cr_assert_float_eq(c.flops, ffn_kernel_flops(s, T), 1e-9);
}

Test(quant_count, weight_matrix_bytes_by_hand)
{
    /* [64][192]: fp32 49152; bf16 24576; int8 12288 + 4*192 = 13056; int4 G 32: 6144 +
     * 2 groups * 192 * 2 = 6912, + 2 * 192 * 0.5 = 7104 with zero points */
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_FP32, 0, false, 64, 192), 49152.0, 1e-9);
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_BF16, 0, false, 64, 192), 24576.0, 1e-9);
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT8, 0, false, 64, 192), 13056.0, 1e-9);
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT8, 32, true, 64, 192), 13056.0, 1e-9,
                       "int8 per channel has no groups and no zero point");
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 32, false, 64, 192), 6912.0, 1e-9);
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 32, true, 64, 192), 7104.0, 1e-9);
    /* group 0 is 128; a K the group does not divide pays for the partial group: 130 = 2 groups */
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 0, false, 128, 10), 640.0 + 20.0, 1e-9);
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 128, false, 130, 10), 650.0 + 40.0,
                       1e-9);
    /* Q4_0's block, 32 weights in 18 bytes, is one column of a [32][1] group-32 int4 matrix */
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 32, false, 32, 1), 18.0, 1e-12);
    /* with the per-element size of the float formats and of int4 groups that divide K */
    cr_assert_float_eq(ffn_weight_matrix_bytes(FFN_DT_INT4, 128, false, 4096, 11008),
                       4096.0 * 11008 * ffn_dtype_bytes(FFN_DT_INT4, 128), 1e-6);
}

Test(quant_count, int8_weights_by_hand)
{
    /* SwiGLU, T 3, d 64, f 96, no bias. Weights: gate/up [64][192] 12288 + 768 scale bytes,
     * down [96][64] 6144 + 256: 19456. */
    const ffn_kshape s = {.d = 64, .f = 96, .act = FFN_ACT_SWIGLU};
    /* W8A32 and W8A16 (x, h, y fp32 in memory): 4*3*64 + 8*3*96 + 4*3*64 = 3840 -> 23296;
     * dequantisation: one multiply per weight, 64*192 + 96*64 = 18432 */
    const ffn_kernel a32 = fmt(FFN_DT_INT8, FFN_DT_FP32), a16 = fmt(FFN_DT_INT8, FFN_DT_BF16);
    both_agree(&a32, &s, 3, 23296.0, 18432.0);
    both_agree(&a16, &s, 3, 23296.0, 18432.0);
    /* W8A8: x read 768; int8 x and 3 scales written and read 2*(192 + 12) = 408; h written
     * 1152, read 1152; int8 h and scales 2*(288 + 12) = 600; y 768: 4848 -> 24304.
     * Vector ops: quantising x and h 3*(192 + 288) = 1440, rescaling 2*3*192 + 2*3*64 = 1536:
     * 2976. */
    const ffn_kernel a8 = fmt(FFN_DT_INT8, FFN_DT_INT8);
    both_agree(&a8, &s, 3, 24304.0, 2976.0);
    /* biases stay fp32: (192 + 64) * 4 = 1024 more */
    const ffn_kshape sb = {.d = 64, .f = 96, .act = FFN_ACT_SWIGLU, .bias = true};
    both_agree(&a16, &sb, 3, 24320.0, 18432.0);
    both_agree(&a8, &sb, 3, 25328.0, 2976.0);
    /* no call, no work beyond the weights */
    cr_assert_float_eq(ffn_kernel_vec_ops(&a8, &s, 0), 0.0, 1e-12);
    cr_assert_float_eq(ffn_kernel_bytes(&a8, &s, 0), 19456.0, 1e-9);
}

Test(quant_count, int4_groups_by_hand)
{
    /* SwiGLU, T 3, d 64, f 96, G 32: gate/up 6144 + 2 groups * 192 * 2 = 6912, down 3072 +
     * 3 * 64 * 2 = 3456: 10368; zero points add 2*192*0.5 + 3*64*0.5 = 288. */
    const ffn_kshape s = {.d = 64, .f = 96, .act = FFN_ACT_SWIGLU, .group = 32};
    const ffn_kshape z = {.d = 64, .f = 96, .act = FFN_ACT_SWIGLU, .group = 32, .zero_point = true};
    const ffn_kernel a16 = fmt(FFN_DT_INT4, FFN_DT_BF16), a8 = fmt(FFN_DT_INT4, FFN_DT_INT8);
    /* W4A16: 10368 + 3840 activations; one multiply per weight (18432), and one subtraction
     * more with a zero point (36864) */
    both_agree(&a16, &s, 3, 14208.0, 18432.0);
    both_agree(&a16, &z, 3, 14496.0, 36864.0);
    /* W4A8: rescale per output and group 2*3*192*2 + 2*3*64*3 = 3456, plus 1440 quantising
     * x and h: 4896; a zero point doubles the rescale (its correction term): 8352 */
    both_agree(&a8, &s, 3, 10368.0 + 4848.0, 4896.0);
    both_agree(&a8, &z, 3, 10656.0 + 4848.0, 8352.0);
    /* a float kernel's count is unchanged: fp32 weights 4*(12288 + 6144) = 73728 */
    const ffn_kernel f32 = fmt(FFN_DT_FP32, FFN_DT_FP32);
    both_agree(&f32, &s, 3, 73728.0 + 3840.0, 0.0);
}

Test(quant_count, unfused_and_separate_activation_count_the_passes_once)
{
    /* Unfused W8A8 SwiGLU T 3, d 64, f 96, fp32 in memory: gate reads x through the
     * quantisation pass (768 + 2*(192 + 12)) and writes 1152; up reads the int8 x (192 + 12) and
     * writes 1152; the activation reads 2304 and writes 1152; down quantises h (1152 +
     * 2*(288 + 12)) and writes 768. Weights 12288 + 768 + 6144 + 256. */
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_INT8;
    run.act_io_dtype = FFN_DT_FP32;
    run.fused = false;
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 64, 96, FFN_ACT_SWIGLU, false, 3, &c), 0);
    cr_assert_eq(c.n_ops, 4);
    const double want =
        19456.0 + (768 + 408 + 1152) + (204 + 1152) + (2304 + 1152) + (1152 + 600 + 768);
    close_rel(c.bytes, want, 1e-12);
    /* vector ops: x quantised once (576), h once (864), the rescale of the three GEMMs
     * 2*3*96 * 2 + 2*3*64 = 1536 */
    close_rel(c.vec_ops, 576.0 + 864.0 + 1536.0, 1e-12);
    /* fused with the activation apart: gate_up writes 2304, the activation reads it */
    run.fused = true;
    run.act_separate = true;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 64, 96, FFN_ACT_SWIGLU, false, 3, &c), 0);
    cr_assert_eq(c.n_ops, 3);
    close_rel(c.bytes, 19456.0 + (768 + 408 + 2304) + (2304 + 1152) + (1152 + 600 + 768), 1e-12);
    close_rel(c.vec_ops, 2976.0, 1e-12);
}

Test(quant_count, decode_is_bound_by_weight_and_scale_bytes)
{
    /* LLaMA-7B FFN, decode T 1, W8A16 with bf16 activations: weights 4096*22016 + 4*22016 and
     * 11008*4096 + 4*4096 = 135,370,752 B; activations (4096 + 11008)*2*2 = 60,416 B. At
     * 100 GB/s: 1.35431e-3 s, far above the compute term (180 MFLOP / 2 TFLOP/s + 135 M
     * dequantising multiplies / 1 TFLOP/s = 0.225 ms). */
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_BF16;
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &c), 0);
    close_rel(c.weight_bytes, 135370752.0, 1e-12);
    close_rel(c.bytes, 135370752.0 + 60416.0, 1e-12);
    close_rel(c.roofline_s, (135370752.0 + 60416.0) / 100e9, 1e-12);
    cr_assert_lt(c.compute_s, c.memory_s);
    for (int i = 0; i < c.n_ops; i++)
        cr_assert_eq(c.ops[i].bound, FFN_BOUND_MEMORY);
    /* int4 G 128: 4096*22016/2 + 32*22016*2 and 11008*4096/2 + 86*4096*2 = 69,746,688 */
    run.wdtype = FFN_DT_INT4;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &c), 0);
    close_rel(c.weight_bytes, 69746688.0, 1e-12);
    /* a zero point per group: + (32*22016 + 86*4096) / 2 = 528,384 */
    run.zero_point = true;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &c), 0);
    close_rel(c.weight_bytes, 69746688.0 + 528384.0, 1e-12);
}

Test(quant_count, prefill_runs_on_the_peak_of_the_multiply)
{
    /* T 2048, d 4096, f 11008 SwiGLU. gate_up FLOPs 2*2048*4096*22016 + 2048*11008*5. */
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_INT8;
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2048, &c), 0);
    const double fl = 2.0 * 2048 * 4096 * 22016 + 2048.0 * 11008 * 5;
    /* W8A8: the int8 peak; vector ops quantise x (3*2048*4096) and rescale 2*2048*22016 */
    const ffn_op *gu = &c.ops[0];
    cr_assert_eq(gu->compute_dtype, FFN_DT_INT8);
    close_rel(gu->flops, fl, 1e-12);
    const double v8 = 3.0 * 2048 * 4096 + 2.0 * 2048 * 22016;
    close_rel(gu->vec_ops, v8, 1e-12);
    cr_assert_eq(gu->bound, FFN_BOUND_COMPUTE);
    close_rel(gu->roofline_s, fl / 4e12 + v8 / 1e12, 1e-12);
    /* W8A16 with bf16 activations: the bf16 peak, plus one dequantising multiply per weight */
    run.adtype = FFN_DT_BF16;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2048, &c), 0);
    gu = &c.ops[0];
    cr_assert_eq(gu->compute_dtype, FFN_DT_BF16);
    close_rel(gu->vec_ops, 4096.0 * 22016, 1e-12);
    close_rel(gu->roofline_s, fl / 2e12 + 4096.0 * 22016 / 1e12, 1e-12);
    /* the layer's ideal compute time holds the vector work too */
    close_rel(c.compute_s, c.ops[0].flops / 2e12 + c.ops[1].flops / 2e12 + c.vec_ops / 1e12, 1e-12);
    /* and the efficiency model charges it: the prediction exceeds the FLOPs alone */
    cr_assert_gt(gu->predicted_s, gu->flops / 2e12);
    /* a device without an int8 peak runs W8A8 on the next wider one it has (bf16 here) */
    hw.peak_flops[FFN_DT_INT8] = 0;
    run.adtype = FFN_DT_INT8;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2048, &c), 0);
    cr_assert_eq(c.ops[0].compute_dtype, FFN_DT_BF16);
}

Test(quant_count, the_model_sums_the_vector_work)
{
    /* 32 LLaMA-like layers decoding one token as W8A16: the weights of every layer dequantised
     * once, 32 * (4096*22016 + 11008*4096) ops, none of them in the FLOPs */
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "llama-like");
    m.hidden = 4096;
    m.intermediate = 11008;
    m.layers = 32;
    m.act = FFN_ACT_SWIGLU;
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.wdtype = FFN_DT_INT8;
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    close_rel(r.vec_ops, 32.0 * (4096.0 * 22016 + 11008.0 * 4096), 1e-12);
    close_rel(r.flops, 32.0 * (2.0 * 4096 * 22016 + 11008.0 * 5 + 2.0 * 11008 * 4096), 1e-12);
    run.wdtype = FFN_DT_BF16;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    cr_assert_float_eq(r.vec_ops, 0.0, 0, "float weights need no dequantisation");
}

Test(quant_count, w8a8_activations_live_in_the_io_dtype)
{
    /* decode T 4, W8A8, d 4096 f 11008: x read, h written and read, y written in bf16 are
     * 2*(2*4*4096 + 2*4*11008) = 241,664 B, fp32 doubles them; the int8 copies and their
     * scales, written and read (2*(4*4096 + 16) + 2*(4*11008 + 16) = 120,896 B), do not change */
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_INT8;
    cr_assert_eq(run.act_io_dtype, FFN_DT_BF16, "served models keep 16-bit activations");
    ffn_layer_cost b, f;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 4, &b), 0);
    run.act_io_dtype = FFN_DT_FP32;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 4, &f), 0);
    close_rel(b.bytes - b.weight_bytes, 241664.0 + 120896.0, 1e-12);
    close_rel(f.bytes - f.weight_bytes, 2 * 241664.0 + 120896.0, 1e-12);
    close_rel(ffn_run_act_bytes(&run), 4.0, 0);
    run.adtype = FFN_DT_BF16;
    close_rel(ffn_run_act_bytes(&run), 2.0, 0);
}

Test(quant_count, moe_expert_weights_carry_their_scales)
{
    /* 8 experts of d 256, f 512 SwiGLU, top-2, one device, int8: each expert 256*1024 +
     * 4*1024 + 512*256 + 4*256 = 398,336 B; all 8 on the device: 3,186,688 B */
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "moe-q");
    m.hidden = 256;
    m.layers = 1;
    m.intermediate = 512;
    m.act = FFN_ACT_SWIGLU;
    m.moe.n_experts = 8;
    m.moe.top_k = 2;
    m.moe.expert_intermediate = 512;
    m.moe.scoring = FFN_SCORE_SOFTMAX;
    m.moe.layer_freq = 1;
    m.layer_moe[0] = true;
    ffn_hw hw = cpu();
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_BF16;
    ffn_layer_cost c;
    ffn_moe_detail det;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 1, &c, &det, NULL), 0);
    close_rel(det.expert_weight_bytes_device, 8 * 398336.0, 1e-12);
    /* one token reads its two experts' weights and scales, dequantised once each */
    double wexp = 0, vexp = 0;
    for (int i = 0; i < c.n_ops; i++)
        if (!strncmp(c.ops[i].name, "experts_", 8)) {
            wexp += c.ops[i].weight_bytes;
            vexp += c.ops[i].vec_ops;
        }
    close_rel(wexp, 2 * 398336.0, 1e-9);
    close_rel(vexp, 2 * (256.0 * 1024 + 512.0 * 256), 1e-9);
}

Test(quant_count, a_kernel_fit_point_costs_what_the_kernel_counts)
{
    /* the bench runner pairs a kernel call with a fit point's layer
     * (measure/bench/bench_predict.c): W4A8 with G 64 and zero points, and W8A16 multiplying in
     * bf16 (cdtype), T 5 */
    const ffn_hw hw = cpu();
    const ffn_kshape s = {
        .d = 128, .f = 192, .act = FFN_ACT_GEGLU, .group = 64, .zero_point = true};
    const ffn_kernel ks[] = {fmt(FFN_DT_INT4, FFN_DT_INT8), fmt(FFN_DT_INT8, FFN_DT_BF16)};
    for (size_t i = 0; i < 2; i++) {
        ffn_fit_point p;
        memset(&p, 0, sizeof p);
        p.m = 5;
        p.k = s.d;
        p.f = s.f;
        p.act = s.act;
        p.wdtype = ks[i].wdtype;
        p.adtype = ks[i].adtype == FFN_DT_INT8 ? FFN_DT_INT8 : FFN_DT_FP32;
        p.group = s.group;
        p.zero_point = s.zero_point;
        p.cdtype_set = ks[i].adtype == FFN_DT_BF16;
        p.cdtype = FFN_DT_BF16;
        ffn_layer_cost c;
        cr_assert_eq(ffn_fit_point_layer(&hw, &p, &c), 0);
        close_rel(c.bytes, ffn_kernel_bytes(&ks[i], &s, 5), 1e-12);
        close_rel(c.vec_ops, ffn_kernel_vec_ops(&ks[i], &s, 5), 1e-12);
        close_rel(c.flops, ffn_kernel_flops(&s, 5), 1e-12);
        cr_assert_eq(c.ops[0].compute_dtype, i == 0 ? FFN_DT_INT8 : FFN_DT_BF16);
    }
}

/* The dequantisation is priced per weight, not per padded tile: on a GPU spec whose wave model
 * pads a decode GEMV to 16-row tiles (wave ~1/19 at M = 1 here), the vector work is not
 * multiplied by 1/wave. A device with wave tiles and memory fast enough that the GEMMs are
 * compute-bound (100 TFLOP/s bf16, 50 TFLOP/s fp32, 100 units of 128x128 tiles, 10 PB/s):
 * LLaMA-2-7B's FFN layer decoding one token as W4A16 (G = 128) has the FLOPs of a bf16 layer and
 * a dequantisation of 135,266,304 ops, 2.7 us at 50 TFLOP/s, so the two predictions differ by
 * that, where the padded pricing made it about 50 us. */
Test(quant_count, gemv_dequantisation_is_not_padded_to_tiles)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "tile-gpu");
    hw.kind = FFN_HW_GPU;
    hw.peak_flops[FFN_DT_FP32] = 50e12;
    hw.peak_flops[FFN_DT_BF16] = 100e12;
    hw.mem_bandwidth_bps = 1e16;
    hw.compute_units = 100;
    hw.eff.compute_max = hw.eff.memory_max = 1.0;
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = hw.eff.tiles[0][1] = 128;
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT4;
    run.adtype = FFN_DT_BF16;
    run.fused = true;
    ffn_layer_cost c, b;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &c), 0);
    close_rel(c.vec_ops, 3.0 * 4096 * 11008, 1e-12);
    run.wdtype = FFN_DT_BF16;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &b), 0);
    close_rel(c.flops, b.flops, 1e-12);
    const double t_v = 3.0 * 4096 * 11008 / 50e12;
    cr_assert(b.predicted_s > 10 * t_v, "the GEMMs are compute-bound on padded tiles: %.3g s",
              b.predicted_s);
    close_rel(c.predicted_s - b.predicted_s, t_v, 0.02);
}

/* W4A16, groups of 128, symmetric, fused, activations fp32 in memory (the kernels' view). */
static ffn_run w4a16_run(void)
{
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_INT4;
    run.adtype = FFN_DT_BF16;
    run.act_io_dtype = FFN_DT_FP32;
    run.group_size = 128;
    run.fused = true;
    return run;
}

/* The measured costs of a quantized format (the spec's efficiency.dequant_cost and
 * memory_max_gemv_by_dtype, which calibrate fits) replace the count's 1 op a weight in the
 * prediction, not in the count or the roofline. LLaMA-2-7B's FFN layer as W4A16 (G = 128) on
 * the 1 TFLOP/s fp32, 2 TFLOP/s bf16, 100 GB/s CPU, no efficiency losses, perfect overlap,
 * W = 3 x 4096 x 11008 = 135,266,304 weights, 67.6 MB + 2.1 MB of scales:
 * - 16 tokens run as a GEMM that packs its weights: at 1 op a weight the compute is
 *   W x (32 / 2e12 + 1 / 1e12) = 2.30 ms, at 6 ops W x (32 / 2e12 + 6 / 1e12) = 2.98 ms; the
 *   weights take 0.70 ms, so compute-bound either way.
 * - one token is the decode stream, which dequantises in registers beside the weight stream:
 *   the dequant cost does not apply (memory-bound at 0.70 ms), the stream's own fraction of
 *   the bandwidth does: at 0.5, 1.40 ms.
 * W8A8 has no weight dequantisation (its int32 sums are rescaled per output): int8 costs leave
 * it as it was. */
Test(quant_count, measured_dequant_costs_replace_the_count)
{
    ffn_hw hw = cpu();
    ffn_run run = w4a16_run();
    const double W = 3.0 * 4096 * 11008;
    ffn_layer_cost a, b;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 16, &a), 0);
    /* (plus the SwiGLU epilogue's few FLOPs per output: 2e-4 of it) */
    close_rel(a.predicted_s, W * (32.0 / 2e12 + 1.0 / 1e12), 5e-4);
    hw.eff.dequant_cost[FFN_DT_INT4] = 6.0;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 16, &b), 0);
    close_rel(b.vec_ops, a.vec_ops, 1e-12);
    close_rel(b.vec_ops, W, 1e-12);
    close_rel(b.roofline_s, a.roofline_s, 1e-12);
    close_rel(b.predicted_s, W * (32.0 / 2e12 + 6.0 / 1e12), 5e-4);
    /* decode: the stream's fraction, not the GEMM's dequantisation cost */
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 100e9, 1e-9);
    hw.eff.memory_max_gemv_dt[FFN_DT_INT4] = 0.5;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &b), 0);
    close_rel(b.predicted_s, a.bytes / 50e9, 1e-9);
    /* int4 figures do not touch int8 weights, nor fp32 ones */
    run.wdtype = FFN_DT_INT8;
    run.group_size = 0;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 100e9, 1e-9);
    run.wdtype = FFN_DT_FP32;
    run.adtype = FFN_DT_FP32;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 100e9, 1e-9);
    /* W8A8 has no weight dequantisation to charge */
    run.wdtype = FFN_DT_INT8;
    run.adtype = FFN_DT_INT8;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 512, &a), 0);
    hw.eff.dequant_cost[FFN_DT_INT8] = 10.0;
    hw.eff.memory_max_gemv_dt[FFN_DT_INT8] = 0.1;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 512, &b), 0);
    close_rel(b.predicted_s, a.predicted_s, 1e-12);
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &b), 0);
    close_rel(b.predicted_s, b.bytes / 100e9, 1e-9);
}

/* A fitted stream fraction covers one row's work; the vector ops run at the fp32 units' own
 * c_max. Overlap p = 1 (compute and memory add), so every term shows. W4A16, d = 4096,
 * f = 11008, W = 3 x 4096 x 11008 weights:
 * - one token, no fraction fitted: the GEMM charge, 2W FLOP at 2e12 plus W vector ops at 1e12,
 *   adds to the weights' bytes / 100 GB/s;
 * - with the fraction 0.5: bytes / 50 GB/s and nothing else (the stream was measured so);
 * - two tokens on a stream of up to 4 rows: the second row's 2W FLOP adds, the dequantisation
 *   does not;
 * - 16 tokens (a GEMM) with c_max 0.25 for bf16 and 1 for fp32: 32W FLOP at 0.5e12, the W
 *   vector ops at 1e12 (at 0.25e12 before: the dot products' fraction). */
Test(quant_count, a_fitted_stream_fraction_covers_the_first_row)
{
    ffn_hw hw = cpu();
    hw.eff.overlap_p = 1.0;
    const ffn_run run = w4a16_run();
    const double W = 3.0 * 4096 * 11008;
    ffn_layer_cost a;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 100e9 + 2.0 * W / 2e12 + W / 1e12, 1e-3);
    hw.eff.memory_max_gemv_dt[FFN_DT_INT4] = 0.5;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9, 1e-9);
    ffn_tileset *ts = stream_tiles(&hw, FFN_DT_BF16, 4);
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9 + 2.0 * W / 2e12, 1e-3);
    memset(ts, 0, sizeof *ts);
    hw.eff.compute_max_dt[FFN_DT_BF16] = 0.25;
    hw.eff.compute_max_dt[FFN_DT_FP32] = 1.0;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 16, &a), 0);
    close_rel(a.predicted_s, a.bytes / 100e9 + 32.0 * W / 0.5e12 + W / 1e12, 1e-3);
}

/* The float weights' decode stream, as the quantized ones: on a spec whose bf16 tiles stream
 * up to 4 rows (a calibrated CPU), memory_max_gemv was fitted on one-row streams, so a
 * one-token decode is its bytes at that fraction and nothing else, and a second row adds its
 * FLOPs; on a spec with no stream rows (every shipped GPU spec) the first row's FLOPs are still
 * charged. bf16 weights, d = 4096, f = 11008, W = 3 x 4096 x 11008, overlap p = 1, 2 TFLOP/s
 * bf16, memory_max_gemv 0.5 of 100 GB/s. */
Test(quant_count, a_float_decode_stream_fraction_covers_the_first_row)
{
    ffn_hw hw = cpu();
    hw.eff.overlap_p = 1.0;
    hw.eff.memory_max_gemv = 0.5;
    ffn_run run;
    ffn_run_default(&run);
    run.wdtype = FFN_DT_BF16;
    run.fused = true;
    const double W = 3.0 * 4096 * 11008;
    ffn_layer_cost a;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9 + 2.0 * W / 2e12, 1e-3);
    stream_tiles(&hw, FFN_DT_BF16, 4);
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9, 1e-9);
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9 + 2.0 * W / 2e12, 1e-3);
}

/* A float dtype's own decode fraction (memory_max_gemv_by_dtype, which calibrate fits where the
 * shared one misses that dtype's decode by over 10%) is used for that dtype's one-token stream
 * alone and covers its first row, as the quantized ones do, even on a spec with no stream rows;
 * the other float dtypes keep the shared fraction and their first row's FLOPs. fp32 at 0.25
 * and bf16 at the shared 0.5 of 100 GB/s, d = 4096, f = 11008, overlap p = 1. */
Test(quant_count, a_float_dtype_s_own_decode_fraction_is_its_alone)
{
    ffn_hw hw = cpu();
    hw.eff.overlap_p = 1.0;
    hw.eff.memory_max_gemv = 0.5;
    hw.eff.memory_max_gemv_dt[FFN_DT_FP32] = 0.25;
    ffn_run run;
    ffn_run_default(&run);
    run.fused = true;
    const double W = 3.0 * 4096 * 11008;
    ffn_layer_cost a;
    run.wdtype = FFN_DT_FP32;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 25e9, 1e-9);
    run.wdtype = FFN_DT_BF16;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &a), 0);
    close_rel(a.predicted_s, a.bytes / 50e9 + 2.0 * W / 2e12, 1e-3);
}

/* W8A8 experts: the tokens travel between devices in their memory dtype (act_io_dtype, bf16 by
 * default), not as the int8 codes that exist only inside each expert's GEMMs. 64 tokens, top-2
 * of 8 experts over EP 8, d = 256: the all-to-all moves 64 x 2 x 256 x 2 B x 7/8 one way in bf16,
 * twice that with fp32 activations in memory (it moved 1 B an element before). */
Test(quant_count, w8a8_moe_dispatch_moves_the_memory_dtype)
{
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "moe-q8");
    m.hidden = 256;
    m.layers = 1;
    m.intermediate = 512;
    m.act = FFN_ACT_SWIGLU;
    m.moe.n_experts = 8;
    m.moe.top_k = 2;
    m.moe.expert_intermediate = 512;
    m.moe.scoring = FFN_SCORE_SOFTMAX;
    m.moe.layer_freq = 1;
    m.layer_moe[0] = true;
    ffn_hw hw = cpu();
    hw.scaleup.bandwidth_bps = 100e9;
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.wdtype = run.adtype = FFN_DT_INT8;
    run.ep = 8;
    ffn_layer_cost c;
    ffn_moe_detail det;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 64, &c, &det, NULL), 0);
    close_rel(det.alltoall_bytes, 64.0 * 2 * 256 * 2 * 7 / 8, 1e-12);
    run.act_io_dtype = FFN_DT_FP32;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 64, &c, &det, NULL), 0);
    close_rel(det.alltoall_bytes, 64.0 * 2 * 256 * 4 * 7 / 8, 1e-12);
}
