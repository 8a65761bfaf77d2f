/* On-chip memory in the model (sim/cost.c, sim/ffn.c; docs/model.md "On-chip memory"): weight
 * residency (a layer that fits L2, one that fits L3, one that fits nowhere; hot vs auto), the
 * spill of a fused intermediate beyond the token tile the innermost level holds, and the
 * tiled-GEMM traffic bound (Hong & Kung 1981, Smith et al. 2019). Every expected number is
 * worked out by hand in the comment next to it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/sim.h"

/* A small CPU: 1 TFLOP/s fp32, 100 GB/s DRAM; L2 8 MB in 4 private 2 MB slices at 800 GB/s,
 * L3 32 MB shared at 300 GB/s. Usable capacity (x0.8): L2 6.4 MB, L3 25.6 MB. */
static ffn_hw cpu_hw(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "cpu");
    hw.kind = FFN_HW_CPU;
    hw.peak_flops[FFN_DT_FP32] = 1e12;
    hw.mem_bandwidth_bps = 100e9;
    hw.mem_capacity_bytes = 64e9;
    hw.compute_units = 4;
    hw.n_levels = 2;
    strcpy(hw.levels[0].name, "L2");
    hw.levels[0].capacity_bytes = 8e6;
    hw.levels[0].bandwidth_bps = 800e9;
    hw.levels[0].slices = 4;
    strcpy(hw.levels[1].name, "L3");
    hw.levels[1].capacity_bytes = 32e6;
    hw.levels[1].bandwidth_bps = 300e9;
    return hw;
}

static ffn_model dense(uint64_t d, uint64_t f, uint64_t layers)
{
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "dense");
    m.hidden = d;
    m.intermediate = f;
    m.layers = layers;
    m.act = FFN_ACT_GELU;
    return m;
}

static ffn_run decode_fp32(ffn_weights w)
{
    ffn_run r;
    ffn_run_default(&r);
    r.phase = FFN_PHASE_DECODE;
    r.batch = 1;
    r.wdtype = r.adtype = FFN_DT_FP32;
    r.weights = w;
    r.skip_ridge = true;
    return r;
}

/* The one-token fp32 decode of m on hw, cold then hot; returns the hot run. */
static ffn_run cold_and_hot(const ffn_model *m, const ffn_hw *hw, ffn_result *cold, ffn_result *hot)
{
    ffn_run r = decode_fp32(FFN_WEIGHTS_COLD);
    cr_assert_eq(ffn_predict(m, hw, &r, cold, NULL), 0);
    r.weights = FFN_WEIGHTS_HOT;
    cr_assert_eq(ffn_predict(m, hw, &r, hot, NULL), 0);
    return r;
}

static void close_rel(double got, double want, double rel)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "got %.12g, want %.12g", got, want);
}

Test(onchip, levels_hold_the_innermost_that_fits)
{
    ffn_hw hw = cpu_hw();
    cr_assert_float_eq(ffn_level_usable_bytes(&hw, 0), 6.4e6, 1e-3);
    cr_assert_eq(ffn_level_holding(&hw, 6.4e6), 1);
    cr_assert_eq(ffn_level_holding(&hw, 6.5e6), 2);
    cr_assert_eq(ffn_level_holding(&hw, 25.6e6), 2);
    cr_assert_eq(ffn_level_holding(&hw, 25.7e6), 0);
}

/* A scratchpad (GPU shared memory, LDS) holds nothing across calls: weights that would fit it
 * are placed in the next level that keeps data, and with only scratchpads they stay cold. */
Test(onchip, weights_never_stay_in_a_scratchpad)
{
    ffn_hw hw = cpu_hw();
    hw.levels[0].scratchpad = true;
    cr_assert_eq(ffn_level_holding(&hw, 1e6), 2);
    cr_assert_eq(ffn_level_holding(&hw, 25.7e6), 0);
    hw.levels[1].scratchpad = true;
    cr_assert_eq(ffn_level_holding(&hw, 1e6), 0);
    ffn_model m = dense(256, 1024, 1);
    ffn_result hot;
    ffn_run r = decode_fp32(FFN_WEIGHTS_HOT);
    cr_assert_eq(ffn_predict(&m, &hw, &r, &hot, NULL), 0);
    cr_assert_eq(hot.weights_level, 0);
}

Test(onchip, a_layer_that_fits_l2_reads_its_weights_from_l2)
{
    ffn_hw hw = cpu_hw();
    ffn_model m = dense(256, 1024, 1);
    ffn_result cold, hot;
    cold_and_hot(&m, &hw, &cold, &hot);
    /* layer weights 2 x 256 x 1024 x 4 B = 2,097,152 B <= 6.4 MB usable L2 -> level 1 */
    cr_assert_eq(cold.weights_level, 0);
    cr_assert_eq(hot.weights_level, 1);
    close_rel(hot.weights_working_set_bytes, 2097152.0, 1e-12);
    /* up: W 1,048,576 B + x 256*4 + h 1024*4 = 1,053,696 B. Cold: all from DRAM,
     * 1,053,696 / 100e9 = 10.53696 us. Hot: L2 serves all 1,053,696 B at 800 GB/s
     * = 1.31712 us; DRAM and L3 only the 5,120 activation bytes (51.2 ns, 17.07 ns). */
    const ffn_op *uc = &cold.dense.ops[0], *uh = &hot.dense.ops[0];
    cr_assert_str_eq(uh->name, "up");
    close_rel(uc->roofline_s, 1053696.0 / 100e9, 1e-12);
    close_rel(uh->served_bytes[0], 1053696.0, 1e-12);
    close_rel(uh->served_bytes[FFN_SRC_MEMORY], 5120.0, 1e-12);
    close_rel(uh->served_bytes[1], 5120.0, 1e-12);
    close_rel(uh->roofline_s, 1053696.0 / 800e9, 1e-12);
    cr_assert_eq(ffn_op_main_source(uh), 0);
    cr_assert_eq(ffn_op_main_source(uc), FFN_SRC_MEMORY);
    cr_assert(hot.predicted_s < cold.predicted_s / 7.0);
}

Test(onchip, a_layer_that_fits_l3_only_reads_at_l3_bandwidth)
{
    ffn_hw hw = cpu_hw();
    ffn_model m = dense(1024, 2048, 1);
    ffn_result hot;
    ffn_run r = decode_fp32(FFN_WEIGHTS_HOT);
    cr_assert_eq(ffn_predict(&m, &hw, &r, &hot, NULL), 0);
    /* weights 2 x 1024 x 2048 x 4 = 16,777,216 B: > 6.4 MB, <= 25.6 MB -> L3 (level 2) */
    cr_assert_eq(hot.weights_level, 2);
    /* up: W 8,388,608 + (1024 + 2048) x 4 = 8,400,896 B through L3 at 300 GB/s = 28.0029867 us
     * and through L2 (inside L3) at 800 GB/s = 10.50112 us; L3 is the slower: 28.00 us. */
    const ffn_op *u = &hot.dense.ops[0];
    close_rel(u->served_bytes[1], 8400896.0, 1e-12);
    close_rel(u->served_bytes[0], 8400896.0, 1e-12);
    close_rel(u->served_bytes[FFN_SRC_MEMORY], 12288.0, 1e-12);
    close_rel(u->roofline_s, 8400896.0 / 300e9, 1e-12);
}

/* A layer larger than every level keeps the part the outermost one holds there (an ideal
 * replacement keeps capacity / working set of a cyclic sweep); that level serves it and passes
 * the rest on from memory, one after the other. 2 x 4096^2 x 4 = 134,217,728 B against L3's
 * usable 25.6 MB: h = 25.6e6 / 2^27 = 0.19073486328125. up: W 67,108,864 B, of which L3 holds
 * 12,800,000 and memory serves 54,308,864 with the 32,768 activation bytes (54,341,632 B,
 * 543.41632 us); L3 passes all 67,141,632 B: its 12,832,768 at 300 GB/s (42.775893 us) then the
 * misses at 100 GB/s (543.08864 us), 585.864533 us, against the cold 671.41632 us. With no
 * bandwidth for L3 the layer is charged as cold, number for number. */
Test(onchip, a_layer_larger_than_every_level_keeps_the_outermost_part)
{
    ffn_hw hw = cpu_hw();
    ffn_model m = dense(4096, 4096, 1);
    ffn_result cold, hot;
    ffn_run r = cold_and_hot(&m, &hw, &cold, &hot);
    cr_assert_eq(hot.weights_level, 2);
    close_rel(hot.weights_working_set_bytes, 134217728.0, 1e-12);
    close_rel(hot.weights_frac, 0.19073486328125, 1e-12);
    const ffn_op *u = &hot.dense.ops[0];
    cr_assert_str_eq(u->name, "up");
    close_rel(u->served_bytes[FFN_SRC_MEMORY], 54341632.0, 1e-12);
    close_rel(u->served_bytes[1], 67141632.0, 1e-12);
    close_rel(u->served_bytes[0], 67141632.0, 1e-12);
    close_rel(u->roofline_s, 12832768.0 / 300e9 + 54308864.0 / 100e9, 1e-12);
    close_rel(cold.dense.ops[0].roofline_s, 67141632.0 / 100e9, 1e-12);
    cr_assert(hot.predicted_s < cold.predicted_s);
    double frac;
    cr_assert_eq(ffn_level_placing(&hw, 134217728.0, &frac), 2);
    cr_assert_eq(ffn_level_placing(&hw, 6.4e6, &frac), 1);
    cr_assert_eq(frac, 1.0, "held whole by L2");
    cr_assert_eq(ffn_level_placing(&hw, 0, &frac), 0);
    hw.levels[1].bandwidth_bps = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &hot, NULL), 0);
    cr_assert(hot.weights_level_no_bw);
    cr_assert_eq(hot.predicted_s, cold.predicted_s);
    cr_assert_eq(hot.roofline_s, cold.roofline_s);
    hw.n_levels = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &hot, NULL), 0);
    cr_assert_eq(hot.weights_level, 0, "no levels: memory");
}

Test(onchip, auto_holds_all_layers_of_a_step)
{
    ffn_hw hw = cpu_hw();
    ffn_result hot, au;
    ffn_run r = decode_fp32(FFN_WEIGHTS_HOT);
    /* 4 layers of 2,097,152 B: one layer fits L2 (hot -> 1); the step's 8,388,608 B only
     * fit L3 (auto -> 2). 16 layers (33,554,432 B) fit nowhere: L3 keeps 25.6 MB of them. */
    ffn_model m4 = dense(256, 1024, 4), m16 = dense(256, 1024, 16);
    cr_assert_eq(ffn_predict(&m4, &hw, &r, &hot, NULL), 0);
    cr_assert_eq(hot.weights_level, 1);
    r.weights = FFN_WEIGHTS_AUTO;
    cr_assert_eq(ffn_predict(&m4, &hw, &r, &au, NULL), 0);
    cr_assert_eq(au.weights_level, 2);
    close_rel(au.weights_working_set_bytes, 8388608.0, 1e-12);
    cr_assert_eq(ffn_predict(&m16, &hw, &r, &au, NULL), 0);
    cr_assert_eq(au.weights_level, 2);
    close_rel(au.weights_frac, 25.6e6 / 33554432.0, 1e-12);
}

Test(onchip, a_level_without_bandwidth_counts_for_capacity_only)
{
    ffn_hw hw = cpu_hw();
    hw.levels[0].bandwidth_bps = 0;
    ffn_model m = dense(256, 1024, 1);
    ffn_result cold, hot;
    cold_and_hot(&m, &hw, &cold, &hot);
    cr_assert_eq(hot.weights_level, 1);
    cr_assert(hot.weights_level_no_bw);
    /* held in L2 but charged at DRAM: the cold time */
    close_rel(hot.dense.ops[0].roofline_s, cold.dense.ops[0].roofline_s, 1e-12);
}

Test(onchip, fused_intermediate_spills_beyond_the_token_tile)
{
    ffn_hw hw = cpu_hw();
    ffn_run r;
    ffn_run_default(&r);
    r.wdtype = r.adtype = FFN_DT_FP32;
    /* innermost usable 6.4e6 B / (g 1 x f 1024 x 4 B) = 1562 tokens (floor of 1562.5) */
    cr_assert_eq(ffn_fused_token_tile(&hw, 1.0, 1024, 4.0), 1562);
    ffn_layer_cost off, on, small;
    cr_assert_eq(ffn_dense_layer(&hw, &r, 256, 1024, FFN_ACT_GELU, false, 2000, &off), 0);
    r.onchip = true;
    cr_assert_eq(ffn_dense_layer(&hw, &r, 256, 1024, FFN_ACT_GELU, false, 2000, &on), 0);
    cr_assert_eq(ffn_dense_layer(&hw, &r, 256, 1024, FFN_ACT_GELU, false, 1562, &small), 0);
    /* T 2000: (2000 - 1562) x 1024 x 4 B written and read back = 3,588,096 B */
    close_rel(on.ops[0].spill_bytes, 3588096.0, 1e-12);
    close_rel(on.ops[0].bytes - off.ops[0].bytes, 3588096.0, 1e-12);
    cr_assert_eq(off.ops[0].spill_bytes, 0.0);
    cr_assert_eq(small.ops[0].spill_bytes, 0.0);
    /* unfused is as before: its intermediates go to memory anyway */
    r.fused = false;
    ffn_layer_cost uf_on, uf_off;
    cr_assert_eq(ffn_dense_layer(&hw, &r, 256, 1024, FFN_ACT_GELU, false, 2000, &uf_on), 0);
    r.onchip = false;
    cr_assert_eq(ffn_dense_layer(&hw, &r, 256, 1024, FFN_ACT_GELU, false, 2000, &uf_off), 0);
    cr_assert_eq(uf_on.bytes, uf_off.bytes);
}

Test(onchip, gemm_traffic_bound_by_hand)
{
    /* 1024^3 fp32 into 2 MB slices: S = 5e5 elements, 2 x 1024^3 x 4 / sqrt(5e5)
     * = 8,589,934,592 / 707.106781 = 12,148,002.0 B */
    close_rel(ffn_gemm_traffic_bytes(1024, 1024, 1024, 1, 4, 2e6), 12148002.0, 1e-8);
    cr_assert_eq(ffn_gemm_traffic_bytes(1024, 1024, 1024, 1, 4, 0), 0.0);
}

Test(onchip, a_large_gemm_is_charged_what_its_tiles_move)
{
    ffn_hw hw = cpu_hw();
    ffn_op op;
    /* 4096^3 fp32: compulsory 3 x 4096^2 x 4 = 201,326,592 B. Into the 2 MB L2 slices:
     * 2 x 4096^3 x 4 / sqrt(5e5) = 777,472,128 B, served by L3 at 300 GB/s = 2.59157 ms.
     * Into L3 (8e6 elements): / 2828.427 = 194,367,514 B < compulsory: DRAM serves
     * 201,326,592 B at 100 GB/s = 2.01327 ms. Without the bound: DRAM only, 2.01327 ms. */
    ffn_op_gemm_counts(&op, "gemm", 4096, 4096, 4096, 1, 4, 4, FFN_DT_FP32, 0);
    ffn_op_recost(&op, &hw);
    double before = op.memory_s;
    close_rel(before, 201326592.0 / 100e9, 1e-12);
    op.traffic_bound = true;
    ffn_op_recost(&op, &hw);
    double q2 = 2.0 * 4096.0 * 4096.0 * 4096.0 * 4.0 / sqrt(5e5);
    close_rel(op.served_bytes[1], q2, 1e-12);
    close_rel(op.served_bytes[FFN_SRC_MEMORY], 201326592.0, 1e-12);
    close_rel(op.served_bytes[0], 201326592.0, 1e-12);
    /* compute 2 x 4096^3 / 1e12 = 137.4 ms dominates; the memory term is L3's */
    close_rel(op.memory_s, q2 / 300e9, 1e-12);
    cr_assert(op.memory_s > before);
    /* a small GEMM keeps its compulsory bytes */
    ffn_op_gemm_counts(&op, "gemm", 64, 64, 64, 1, 4, 4, FFN_DT_FP32, 0);
    op.traffic_bound = true;
    ffn_op_recost(&op, &hw);
    close_rel(op.served_bytes[FFN_SRC_MEMORY], 3.0 * 64 * 64 * 4, 1e-12);
}

Test(onchip, cold_default_is_bit_for_bit_as_before)
{
    ffn_hw hw = cpu_hw();
    ffn_op op;
    ffn_op_gemm_counts(&op, "gemm", 300, 500, 700, 2, 2, 2, FFN_DT_FP32, 0);
    ffn_op_recost(&op, &hw);
    cr_assert_eq(op.roofline_s, ffn_roofline_s(&hw, op.flops, op.bytes, FFN_DT_FP32));
    cr_assert_eq(op.predicted_s,
                 ffn_predict_gemm_s(&hw, 300, 500, 700, 2, op.flops, op.bytes, FFN_DT_FP32));
}

Test(onchip, weights_names_parse)
{
    ffn_weights w;
    cr_assert_eq(ffn_weights_parse("hot", &w), 0);
    cr_assert_eq(w, FFN_WEIGHTS_HOT);
    cr_assert_eq(ffn_weights_parse("auto", &w), 0);
    cr_assert_eq(w, FFN_WEIGHTS_AUTO);
    cr_assert_eq(ffn_weights_parse("cold", &w), 0);
    cr_assert_eq(w, FFN_WEIGHTS_COLD);
    cr_assert_neq(ffn_weights_parse("warm", &w), 0);
    cr_assert_str_eq(ffn_weights_name(FFN_WEIGHTS_AUTO), "auto");
}

/* A level that keeps nothing of a working set larger than it (keeps_part: false, LRU-like: the
 * H200's L2 as measured) is passed over for the partial placement: with L3 so, the
 * 134,217,728 B layer of the test above keeps its outermost part in L2 instead, 6.4e6 / 2^27 =
 * 0.0476837158203125 of it; with L2 so as well it stays cold, number for number. A working set
 * that fits such a level whole is still placed in it. */
Test(onchip, a_level_that_keeps_nothing_of_a_larger_set_is_passed_over)
{
    ffn_hw hw = cpu_hw();
    hw.levels[1].no_partial = true;
    double frac;
    cr_assert_eq(ffn_level_placing(&hw, 134217728.0, &frac), 1);
    close_rel(frac, 0.0476837158203125, 1e-12);
    cr_assert_eq(ffn_level_placing(&hw, 20e6, &frac), 2, "fits L3 whole");
    cr_assert_eq(frac, 1.0);
    hw.levels[0].no_partial = true;
    cr_assert_eq(ffn_level_placing(&hw, 134217728.0, &frac), 0);
    cr_assert_eq(frac, 0.0);
    ffn_model m = dense(4096, 4096, 1);
    ffn_result cold, hot;
    cold_and_hot(&m, &hw, &cold, &hot);
    cr_assert_eq(hot.weights_level, 0);
    cr_assert_eq(hot.predicted_s, cold.predicted_s);
}

/* level_max: the fraction of the resident level's bandwidth kernels reach on what it holds.
 * The d = 256, f = 1024 layer of a_layer_that_fits_l2 (memory_max 0.5, overlap max, no launch):
 * up serves 1,053,696 B from L2 (800 GB/s) and its 5,120 activation bytes from memory. With
 * level_max 0.25 for L2: 1,053,696 / (800e9 x 0.25) = 5.26848 us, against the 0.1024 us of
 * 5,120 B at 100e9 x 0.5 and the 0.524288 us of its 524,288 FLOPs at 1 TFLOP/s: 5.26848 us.
 * Without it L2 is charged at the op's own fraction: 1,053,696 / (800e9 x 0.5) = 2.63424 us. The
 * roofline (ideal) time is the same either way. */
Test(onchip, level_max_charges_the_resident_level_at_its_fraction)
{
    ffn_hw hw = cpu_hw();
    hw.eff.compute_max = 1.0;
    hw.eff.memory_max = 0.5;
    ffn_model m = dense(256, 1024, 1);
    ffn_run r = decode_fp32(FFN_WEIGHTS_HOT);
    ffn_result a, b;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &a, NULL), 0);
    close_rel(a.dense.ops[0].predicted_s, 1053696.0 / (800e9 * 0.5), 1e-12);
    hw.eff.level_max[0] = 0.25;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &b, NULL), 0);
    cr_assert_str_eq(b.dense.ops[0].name, "up");
    close_rel(b.dense.ops[0].predicted_s, 1053696.0 / (800e9 * 0.25), 1e-12);
    close_rel(b.dense.ops[0].roofline_s, a.dense.ops[0].roofline_s, 1e-15);
    /* a level the weights are not resident in keeps the op's fraction: cold is unchanged */
    ffn_result c0, c1;
    r.weights = FFN_WEIGHTS_COLD;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &c1, NULL), 0);
    hw.eff.level_max[0] = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &r, &c0, NULL), 0);
    cr_assert_eq(c0.predicted_s, c1.predicted_s);
}
