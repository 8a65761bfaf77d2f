/* The analytic FFN model (sim/cost.c, sim/ffn.c): hand-computed roofline times for decode and
 * prefill, fused vs unfused bytes, the ridge point, tensor parallelism, chunked prefill,
 * compute-dtype selection, wave quantization and activation memory (Korthikanti et al. 2022).
 * Every expected number below is worked out by hand in the comment next to it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/sim.h"

/* An ideal device: 1 PFLOP/s bf16, 2 TB/s, no efficiency losses. */
static ffn_hw ideal_hw(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "ideal");
    hw.peak_flops[FFN_DT_BF16] = 1e15;
    hw.peak_flops[FFN_DT_FP16] = 1e15;
    hw.peak_flops[FFN_DT_FP32] = 1e14;
    hw.peak_flops[FFN_DT_INT8] = 2e15;
    hw.mem_bandwidth_bps = 2e12;
    hw.compute_units = 100;
    hw.scaleup.bandwidth_bps = 1e11;
    hw.scaleup.latency_s = 1e-6;
    return hw;
}

/* A LLaMA-7B-shaped dense model: d 4096, f 11008, SwiGLU, 32 layers. */
static ffn_model llama_like(void)
{
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "llama-like");
    m.hidden = 4096;
    m.intermediate = 11008;
    m.layers = 32;
    m.vocab = 32000;
    m.act = FFN_ACT_SWIGLU;
    m.attn.n_heads = m.attn.n_kv_heads = 32;
    m.attn.head_dim = 128;
    return m;
}

static void close_rel(double got, double want, double rel)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "got %.12g, want %.12g", got, want);
}

Test(sim, decode_roofline_by_hand)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &c), 0);
    cr_assert_eq(c.n_ops, 2);
    /* gate_up: 2*1*4096*22016 + 1*11008*5 = 180,355,072 + 55,040 FLOPs;
     * bytes: W 4096*22016*2 = 180,355,072, x 4096*2, h 11008*2 -> 180,385,280 */
    cr_assert_str_eq(c.ops[0].name, "gate_up");
    close_rel(c.ops[0].flops, 180410112.0, 1e-12);
    close_rel(c.ops[0].bytes, 180385280.0, 1e-12);
    cr_assert_eq(c.ops[0].bound, FFN_BOUND_MEMORY);
    close_rel(c.ops[0].roofline_s, 180385280.0 / 2e12, 1e-12); /* 90.19264 us */
    /* down: 2*11008*4096 = 90,177,536 FLOPs; bytes 90,177,536 + (11008 + 4096)*2 */
    close_rel(c.ops[1].flops, 90177536.0, 1e-12);
    close_rel(c.ops[1].bytes, 90207744.0, 1e-12);
    close_rel(c.roofline_s, (180385280.0 + 90207744.0) / 2e12, 1e-12); /* 135.296512 us */
    /* ideal device: prediction equals the roofline */
    close_rel(c.predicted_s, c.roofline_s, 1e-12);
}

Test(sim, prefill_roofline_by_hand)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost c;
    cr_assert_eq(ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 2048, &c), 0);
    /* gate_up: 2*2048*4096*22016 + 2048*11008*5 = 369,367,187,456 + 112,721,920 */
    close_rel(c.ops[0].flops, 369479909376.0, 1e-12);
    /* bytes: 180,355,072 + 2048*(4096 + 11008)*2 = 242,221,056 -> 121.1 us < 369.5 us */
    close_rel(c.ops[0].bytes, 242221056.0, 1e-12);
    cr_assert_eq(c.ops[0].bound, FFN_BOUND_COMPUTE);
    close_rel(c.ops[0].roofline_s, 369479909376.0 / 1e15, 1e-12);
    /* down: 2*2048*11008*4096 = 184,683,593,728 FLOPs -> 184.68 us */
    close_rel(c.ops[1].roofline_s, 184683593728.0 / 1e15, 1e-12);
}

Test(sim, fused_vs_unfused_bytes)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    const uint64_t T = 512, d = 4096, f = 11008;
    const double Td = 512, dd = 4096, fd = 11008;
    ffn_layer_cost fused, unfused;
    ffn_dense_layer(&hw, &run, d, f, FFN_ACT_SWIGLU, false, T, &fused);
    run.fused = false;
    ffn_dense_layer(&hw, &run, d, f, FFN_ACT_SWIGLU, false, T, &unfused);
    cr_assert_eq(unfused.n_ops, 4); /* gate, up, act, down */
    /* fused:   W + T*(d + f)*2 [gate_up] + T*(f + d)*2 [down]           = W + T(2d + 2f)*2
     * unfused: W + 2*T*(d + f)*2 [gate, up] + 3*T*f*2 [act] + T*(f + d)*2 = W + T(3d + 6f)*2
     * difference T*(d + 4f)*2 bytes */
    double W = 3.0 * dd * fd * 2;
    close_rel(fused.bytes, W + Td * (2.0 * dd + 2.0 * fd) * 2, 1e-12);
    close_rel(unfused.bytes - fused.bytes, Td * (dd + 4.0 * fd) * 2, 1e-12);
    /* same weights, same GEMM FLOPs; the activation FLOPs move from the epilogue to a pass */
    close_rel(unfused.weight_bytes, fused.weight_bytes, 1e-12);
    close_rel(unfused.flops, fused.flops, 1e-12);
}

Test(sim, bias_counts)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost nb, b;
    ffn_dense_layer(&hw, &run, 768, 3072, FFN_ACT_GELU, false, 10, &nb);
    ffn_dense_layer(&hw, &run, 768, 3072, FFN_ACT_GELU, true, 10, &b);
    /* biases add f + d weights (bf16) and T*(f + d) adds */
    close_rel(b.weight_bytes - nb.weight_bytes, (3072.0 + 768.0) * 2, 1e-12);
    close_rel(b.flops - nb.flops, 10.0 * (3072 + 768), 1e-12);
}

Test(sim, ridge_tokens_closed_form)
{
    ffn_hw hw = ideal_hw();
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    /* per token F1 = 2*4096*22016 + 11008*5 + 2*11008*4096 = 270,587,648 FLOPs,
     * activation bytes A1 = (4096 + 2*11008 + 4096)*2 = 60,416, weights W = 270,532,608.
     * T*F1/1e15 = (W + T*A1)/2e12  =>  T = W / (F1/500 - A1) = 562.7 -> 563 */
    cr_assert_float_eq(r.ridge_tokens, 563.0, 1e-9);
    cr_assert_eq(r.bound, FFN_BOUND_MEMORY);
    run.phase = FFN_PHASE_PREFILL;
    run.seq = 563;
    ffn_predict(&m, &hw, &run, &r, NULL);
    cr_assert_eq(r.bound, FFN_BOUND_COMPUTE);
    run.seq = 562;
    ffn_predict(&m, &hw, &run, &r, NULL);
    cr_assert_eq(r.bound, FFN_BOUND_MEMORY);
}

Test(sim, whole_model_sums_layers)
{
    ffn_hw hw = ideal_hw();
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.batch = 4;
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    cr_assert_eq(r.tokens, 4);
    cr_assert_eq(r.dense_layers, 32);
    close_rel(r.weight_bytes, 32.0 * 3 * 4096 * 11008 * 2, 1e-12); /* 8,657,043,456 B */
    close_rel(r.predicted_s, 32.0 * r.dense.predicted_s, 1e-12);
}

Test(sim, tensor_parallel_allreduce)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    run.tp = 4;
    ffn_layer_cost c;
    ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 16, &c);
    /* each device holds f/4 = 2752 columns: gate_up n = 5504 */
    cr_assert_eq(c.ops[0].n, 5504);
    /* ring all-reduce of 16*4096*2 = 131,072 B over 4 devices:
     * 2*3/4*131072 / 1e11 + 2*3*1 us = 1.96608 us + 6 us */
    const ffn_op *ar = &c.ops[c.n_ops - 1];
    cr_assert_str_eq(ar->name, "allreduce");
    close_rel(ar->predicted_s, 2.0 * 3 / 4 * 131072 / 1e11 + 6e-6, 1e-12);
    close_rel(c.comm_s, ar->predicted_s, 1e-12);
}

Test(sim, tp_must_divide)
{
    ffn_hw hw = ideal_hw();
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    run.tp = 3; /* 11008 = 2^8 * 43 */
    ffn_result r;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, &d), FFN_EINVAL);
    cr_assert(strstr(d.msg, "does not divide"), "%s", d.msg);
}

Test(sim, chunked_prefill)
{
    ffn_hw hw = ideal_hw();
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    run.seq = 4096;
    ffn_result whole, chunked;
    ffn_predict(&m, &hw, &run, &whole, NULL);
    run.chunk = 1024;
    ffn_predict(&m, &hw, &run, &chunked, NULL);
    cr_assert_eq(chunked.steps, 4);
    cr_assert_eq(chunked.tokens, 1024);
    /* same FLOPs, weights read once per chunk, a quarter of the activation peak */
    close_rel(chunked.flops, whole.flops, 1e-12);
    close_rel(chunked.weight_bytes, 4 * whole.weight_bytes, 1e-12);
    close_rel(chunked.mem.infer_peak_bytes, whole.mem.infer_peak_bytes / 4, 1e-12);
    /* 4096 = 3 x 1200 + 496: three full chunks and a shorter last one, same FLOPs, weights
     * read four times */
    run.chunk = 1200;
    ffn_predict(&m, &hw, &run, &chunked, NULL);
    cr_assert_eq(chunked.steps, 4);
    cr_assert_eq(chunked.tokens, 1200);
    close_rel(chunked.flops, whole.flops, 1e-12);
    close_rel(chunked.weight_bytes, 4 * whole.weight_bytes, 1e-12);
}

Test(sim, compute_dtype_pairs)
{
    ffn_hw hw = ideal_hw();
    cr_assert_eq(ffn_compute_dtype(&hw, FFN_DT_INT4, FFN_DT_BF16), FFN_DT_BF16); /* W4A16 */
    cr_assert_eq(ffn_compute_dtype(&hw, FFN_DT_INT8, FFN_DT_INT8), FFN_DT_INT8); /* W8A8 */
    cr_assert_eq(ffn_compute_dtype(&hw, FFN_DT_BF16, FFN_DT_BF16), FFN_DT_BF16);
    /* no fp8 peak on this device: fp8 x fp8 runs at the next wider dtype it has */
    cr_assert_eq(ffn_compute_dtype(&hw, FFN_DT_FP8, FFN_DT_FP8), FFN_DT_BF16);
    /* int4 weights: 4 bits plus a 16-bit scale per 128 */
    close_rel(ffn_dtype_bytes(FFN_DT_INT4, 128), 0.5 + 2.0 / 128, 1e-15);
}

Test(sim, w4a16_reads_quarter_weights)
{
    ffn_hw hw = ideal_hw();
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost b16, w4;
    ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &b16);
    run.wdtype = FFN_DT_INT4;
    ffn_dense_layer(&hw, &run, 4096, 11008, FFN_ACT_SWIGLU, false, 1, &w4);
    close_rel(w4.weight_bytes / b16.weight_bytes, (0.5 + 2.0 / 128) / 2.0, 1e-12);
}

Test(sim, wave_quantization)
{
    ffn_hw hw = ideal_hw();
    hw.compute_units = 108;
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = 128;
    hw.eff.tiles[0][1] = 128;
    /* 512 x 12288: 4 x 96 = 384 tiles on 108 units -> 4 waves of 108: 384/432 */
    close_rel(ffn_wave_efficiency(&hw, 512, 12288, 4096, 1, FFN_DT_FP16), 384.0 / 432.0, 1e-12);
    /* a padded tile costs a full one: 200 rows in two 128-row tiles on one unit = 200/256 */
    hw.compute_units = 1;
    close_rel(ffn_wave_efficiency(&hw, 200, 128, 4096, 1, FFN_DT_FP16), 200.0 / 256.0, 1e-12);
    /* skinny: 1 row runs in a 16-row tile, not a 128-row one */
    close_rel(ffn_wave_efficiency(&hw, 1, 128, 4096, 1, FFN_DT_FP16), 1.0 / 16.0, 1e-12);
    /* too few tiles: split-K fills the units. 1 x 128 x 4096 on 8 units: 1 tile, split 8 ways
     * (4096/256 = 16 >= 8), one wave, each split 512 deep: useful 1*128*4096 over
     * 8 * 16*128*512 paid = 1/16 */
    hw.compute_units = 8;
    close_rel(ffn_wave_efficiency(&hw, 1, 128, 4096, 1, FFN_DT_FP16), 1.0 / 16.0, 1e-12);
    /* without split-K the same GEMM would use 1 of 8 units: 1/128 */
    close_rel(ffn_wave_efficiency(&hw, 1, 128, 128, 1, FFN_DT_FP16), 1.0 / 128.0, 1e-12);
}

/* The tile pipeline (docs/model.md, "The tile pipeline"), by hand on two units whose share of the
 * bf16 peak computes one 64 x 64 x 64 step in 1 us, with the memory term out of the way. */
Test(sim, tile_pipeline)
{
    ffn_hw hw = ideal_hw();
    hw.compute_units = 2;
    hw.peak_flops[FFN_DT_BF16] = 2 * 2.0 * 64 * 64 * 64 * 1e6;
    hw.peak_flops[FFN_DT_FP8] = 2 * hw.peak_flops[FFN_DT_BF16];
    hw.mem_bandwidth_bps = 1e30;
    hw.eff.compute_max = hw.eff.memory_max = 1.0;
    hw.eff.pipeline = true;
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = hw.eff.tiles[0][1] = 64;
    hw.eff.block_s = 1e-6;
    hw.eff.fixup_s = 0.5e-6;
    /* 64 x 128 x 128: two tiles, one wave, 2 steps of 64 deep (128 bytes of bf16 K): 1 + 2 us;
     * K too short to split; stream-K 2 x 1 + 2 us */
    close_rel(ffn_predict_gemm_s(&hw, 64, 128, 128, 1, 2.0 * 64 * 128 * 128, 0, FFN_DT_BF16), 3e-6,
              1e-9);
    /* 64 x 64 x 1024: one tile of 16 steps (17 us) on two units; split in 2 (512 deep): one wave of
     * 1 + 8 us plus the fixup, 9.5 us; in 3: two waves, 14.5; in 4: 10.5; stream-K: 2 + 8 = 10 */
    close_rel(ffn_predict_gemm_s(&hw, 64, 64, 1024, 1, 2.0 * 64 * 64 * 1024, 0, FFN_DT_BF16),
              9.5e-6, 1e-9);
    /* a utilisation of one half doubles every step: split in 2, 1 + 8 x 2 + 0.5 = 17.5 us;
     * stream-K 2 + 16 = 18; whole 1 + 32 = 33 */
    hw.eff.util_gamma[FFN_DT_BF16] = 0.5;
    close_rel(ffn_predict_gemm_s(&hw, 64, 64, 1024, 1, 2.0 * 64 * 64 * 1024, 0, FFN_DT_BF16),
              17.5e-6, 1e-9);
    /* kernel rules: the first that holds the shape, persistent, K whole, one tile cost */
    ffn_kernel_rules *r = &hw.eff.rules_dt[FFN_DT_FP8];
    r->n = 2;
    r->r[0] = (ffn_kernel_rule){.m_max = 16, .tm = 16, .tn = 64, .tk = 256};
    r->r[1] = (ffn_kernel_rule){.tm = 128, .tn = 128, .tk = 128};
    /* 8 x 256 x 512: 4 tiles of 16 x 64 in 2 waves of 2 steps of 0.5 us each: 1 + 2 x 2 x 0.5 */
    close_rel(ffn_predict_gemm_s(&hw, 8, 256, 512, 1, 2.0 * 8 * 256 * 512, 0, FFN_DT_FP8), 3e-6,
              1e-9);
    /* 32 x 256 x 512: the second rule, 2 tiles of 128 x 128, one wave of 4 steps of 4 us */
    close_rel(ffn_predict_gemm_s(&hw, 32, 256, 512, 1, 2.0 * 32 * 256 * 512, 0, FFN_DT_FP8), 17e-6,
              1e-9);
    /* a wave search (DeepGEMM's pick) over 64-row tiles 16 or 32 wide: 100 x 40 is 2 x 3 tiles
     * of 64 x 16 (3 waves) or 2 x 2 of 64 x 32 (2 waves): the latter, 2 waves of 2 steps of
     * 0.5 us (64 deep) after one tile cost */
    ffn_kernel_rules *b = &hw.eff.rules_dt[FFN_DT_BF16];
    b->n = 2;
    b->r[0] = (ffn_kernel_rule){.m_max = 64, .kind = FFN_RULE_BEST};
    b->r[1] = (ffn_kernel_rule){
        .kind = FFN_RULE_WAVES, .rows = {64}, .n_rows = 1, .col_step = 16, .col_max = 32, .tk = 64};
    hw.eff.util_gamma[FFN_DT_BF16] = 0;
    close_rel(ffn_predict_gemm_s(&hw, 100, 40, 128, 1, 2.0 * 100 * 40 * 128, 0, FFN_DT_BF16), 3e-6,
              1e-9);
    /* the `best` rule before it: what no rule gives (the first case above) */
    close_rel(ffn_predict_gemm_s(&hw, 64, 128, 128, 1, 2.0 * 64 * 128 * 128, 0, FFN_DT_BF16), 3e-6,
              1e-9);
    /* `whole`: the best tile with K whole, a block per output tile: 64 x 64 x 1024 is one tile
     * of 16 steps on one of the two units, 1 + 16 us, where K split in 2 gave 9.5 us */
    hw.peak_flops[FFN_DT_FP16] = hw.peak_flops[FFN_DT_BF16];
    ffn_kernel_rules *h = &hw.eff.rules_dt[FFN_DT_FP16];
    h->n = 1;
    h->r[0] = (ffn_kernel_rule){.kind = FFN_RULE_WHOLE};
    close_rel(ffn_predict_gemm_s(&hw, 64, 64, 1024, 1, 2.0 * 64 * 64 * 1024, 0, FFN_DT_FP16), 17e-6,
              1e-9);
    h->n = 0;
    close_rel(ffn_predict_gemm_s(&hw, 64, 64, 1024, 1, 2.0 * 64 * 64 * 1024, 0, FFN_DT_FP16),
              9.5e-6, 1e-9);
    /* the memory term still bounds it: at a bandwidth that makes the bytes take 40 us (p = 0: max)
     */
    hw.mem_bandwidth_bps = 1e6 / 40e-6;
    close_rel(ffn_predict_gemm_s(&hw, 32, 256, 512, 1, 2.0 * 32 * 256 * 512, 1e6, FFN_DT_FP8),
              40e-6, 1e-9);
}

Test(sim, wave_quantization_by_dtype)
{
    /* A CPU thread: fp32 kernels pad no rows (1 x 32 tiles), the bf16 ones run on AMX tiles of
     * 32 rows from 3 rows up and stream the weights (no padding) at 1 and 2 rows. */
    ffn_hw hw = ideal_hw();
    hw.compute_units = 1;
    hw.eff.n_tiles = 1;
    hw.eff.tiles[0][0] = 1;
    hw.eff.tiles[0][1] = 32;
    ffn_tileset *b = &hw.eff.tiles_dt[FFN_DT_BF16];
    b->n_tiles = 1;
    b->tiles[0][0] = 32;
    b->tiles[0][1] = 32;
    b->min_rows = 32;
    b->gemv_rows = 2;
    close_rel(ffn_wave_efficiency(&hw, 5, 64, 4096, 1, FFN_DT_FP32), 1.0, 1e-12);
    close_rel(ffn_wave_efficiency(&hw, 5, 64, 4096, 1, FFN_DT_BF16), 5.0 / 32.0, 1e-12);
    close_rel(ffn_wave_efficiency(&hw, 2, 64, 4096, 1, FFN_DT_BF16), 1.0, 1e-12);
    close_rel(ffn_wave_efficiency(&hw, 3, 64, 4096, 1, FFN_DT_BF16), 3.0 / 32.0, 1e-12);
    close_rel(ffn_wave_efficiency(&hw, 80, 64, 4096, 1, FFN_DT_BF16), 80.0 / 96.0, 1e-12);
    /* a dtype without its own tiles falls back to the device's */
    close_rel(ffn_wave_efficiency(&hw, 5, 64, 4096, 1, FFN_DT_FP16), 1.0, 1e-12);
    /* min_rows 0 means 16: 5 rows in a 16-row tile */
    b->min_rows = 0;
    close_rel(ffn_wave_efficiency(&hw, 5, 64, 4096, 1, FFN_DT_BF16), 5.0 / 16.0, 1e-12);
    /* and the prediction pays for it: 5 rows cost as much compute as 32 */
    b->min_rows = 32;
    const double f5 = 2.0 * 5 * 64 * 4096, f32 = 2.0 * 32 * 64 * 4096;
    close_rel(ffn_predict_gemm_s(&hw, 5, 64, 4096, 1, f5, 0, FFN_DT_BF16),
              ffn_predict_gemm_s(&hw, 32, 64, 4096, 1, f32, 0, FFN_DT_BF16), 1e-12);
}

Test(sim, efficiency_model_terms)
{
    ffn_hw hw = ideal_hw();
    hw.eff.compute_max = 0.5;
    hw.eff.memory_max = 0.8;
    hw.eff.launch_s = 1e-5;
    /* compute-bound GEMM: flops/(peak*0.5) + launch */
    double t = ffn_predict_gemm_s(&hw, 4096, 4096, 4096, 1, 1e12, 1e6, FFN_DT_BF16);
    close_rel(t, 1e12 / 5e14 + 1e-5, 1e-12);
    /* memory-bound: bytes/(bw*0.8) + launch */
    t = ffn_predict_gemm_s(&hw, 1, 4096, 4096, 1, 1e6, 1.6e9, FFN_DT_BF16);
    close_rel(t, 1.6e9 / 1.6e12 + 1e-5, 1e-12);
    /* p-norm overlap with p = 1 adds the two */
    hw.eff.overlap_p = 1;
    t = ffn_predict_gemm_s(&hw, 64, 64, 64, 1, 1e12, 1.6e9, FFN_DT_BF16);
    close_rel(t, 2e-3 + 1e-3 + 1e-5, 1e-9);
}

Test(sim, korthikanti_19sbh)
{
    /* A GELU MLP with a 4h intermediate, 16-bit activations and dropout saves
     * 2sbh (input) + 8sbh (GELU input) + 8sbh (second linear input) + sbh (mask) = 19sbh
     * bytes per layer (Korthikanti et al. 2022, Sec. 4.1). */
    ffn_model m;
    memset(&m, 0, sizeof m);
    m.hidden = 1024;
    m.intermediate = 4096;
    m.layers = 24;
    m.act = FFN_ACT_GELU;
    m.dropout = 0.1;
    ffn_run run;
    ffn_run_default(&run);
    const uint64_t sb = 2048 * 4;
    const double s = 2048, b = 4, h = 1024;
    ffn_act_mem mem;
    ffn_activation_memory(&m, &run, sb, m.layers, &mem);
    close_rel(mem.train_layer_bytes, 19.0 * s * b * h, 1e-12);
    close_rel(mem.train_mask_bytes, 1.0 * s * b * h, 1e-12);
    /* recomputing GELU from its input drops its output: 11sbh; full recompute keeps 2sbh */
    close_rel(mem.train_layer_actrecomp_bytes, 11.0 * s * b * h, 1e-12);
    close_rel(mem.train_layer_fullrecomp_bytes, 2.0 * s * b * h, 1e-12);
    close_rel(mem.train_model_bytes, 24 * 19.0 * s * b * h, 1e-12);
    /* no dropout, no mask: 18sbh */
    m.dropout = 0;
    ffn_activation_memory(&m, &run, sb, m.layers, &mem);
    close_rel(mem.train_layer_bytes, 18.0 * s * b * h, 1e-12);
}

Test(sim, inference_activation_peak_by_hand)
{
    /* SwiGLU d=4096 f=11008, T=2048 tokens, bf16:
     * fused: x + h + y = 2048*(4096 + 11008 + 4096)*2 = 78,643,200 B
     * unfused: x + gate + up + h = 2048*(4096 + 3*11008)*2 = 152,043,520 B */
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    ffn_act_mem mem;
    ffn_activation_memory(&m, &run, 2048, 32, &mem);
    close_rel(mem.infer_peak_bytes, 78643200.0, 1e-12);
    run.fused = false;
    ffn_activation_memory(&m, &run, 2048, 32, &mem);
    close_rel(mem.infer_peak_bytes, 152043520.0, 1e-12);
}

Test(sim, mixture_of_channels_shrinks_training_memory)
{
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    ffn_act_mem full, moc;
    ffn_activation_memory(&m, &run, 1000, 32, &full);
    run.moc_k = 1024; /* keep 1024 of 11008 channels */
    ffn_activation_memory(&m, &run, 1000, 32, &moc);
    /* per token each [f] tensor becomes K values + an f-bit mask: 1024*2 + 11008/8 B */
    close_rel(moc.train_postact_bytes, 1000.0 * (1024 * 2 + 11008.0 / 8), 1e-12);
    cr_assert_lt(moc.train_layer_bytes, full.train_layer_bytes / 2);
    close_rel(moc.train_input_bytes, full.train_input_bytes, 1e-12);
}

Test(sim, bad_runs)
{
    ffn_hw hw = ideal_hw();
    ffn_model m = llama_like();
    ffn_run run;
    ffn_run_default(&run);
    ffn_result r;
    run.batch = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), FFN_EINVAL);
    ffn_run_default(&run);
    run.seq = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), FFN_EINVAL);
    ffn_run_default(&run);
    run.tp = 2;
    hw.scaleup.bandwidth_bps = 0;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), FFN_EINVAL);
    cr_assert_eq(ffn_predict(NULL, &hw, &run, &r, NULL), FFN_EINVAL);
}
