/* MoE routing costs (sim/moe.c): expert coverage, load imbalance, dropped tokens, FLOPs that
 * scale with top-k, all-to-all volume under expert parallelism, decode weight traffic that
 * grows with the batch, and rejection of bad routing options. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/moe_fused.h"
#include "ffnroof/sim.h"

static ffn_hw test_hw(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "test");
    hw.peak_flops[FFN_DT_BF16] = 1e15;
    hw.peak_flops[FFN_DT_FP32] = 6e13;
    hw.mem_bandwidth_bps = 3e12;
    hw.compute_units = 132;
    hw.scaleup.bandwidth_bps = 4.5e11;
    hw.scaleup.latency_s = 2e-6;
    hw.devices_per_node = 8;
    return hw;
}

/* Mixtral-8x7B-shaped: d 4096, 8 experts of 14336, top-2, 32 MoE layers. */
static ffn_model mixtral_like(uint64_t k)
{
    ffn_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "moe");
    m.hidden = 4096;
    m.layers = 32;
    m.vocab = 32000;
    m.act = FFN_ACT_SWIGLU;
    m.moe.n_experts = 8;
    m.moe.top_k = k;
    m.moe.expert_intermediate = 14336;
    for (int i = 0; i < 32; i++)
        m.layer_moe[i] = true;
    return m;
}

Test(moe, coverage_closed_form_limits)
{
    /* T = 1: exactly k experts; T -> infinity: all E */
    cr_assert_float_eq(ffn_moe_coverage_uniform(8, 2, 1), 2.0, 1e-12);
    cr_assert_float_eq(ffn_moe_coverage_uniform(256, 8, 1), 8.0, 1e-9);
    cr_assert_float_eq(ffn_moe_coverage_uniform(256, 8, 100000), 256.0, 1e-9);
    /* E(1 - (1 - k/E)^T) at E=8, k=2, T=4: 8(1 - 0.75^4) = 5.46875 */
    cr_assert_float_eq(ffn_moe_coverage_uniform(8, 2, 4), 5.46875, 1e-12);
    double prev = 0;
    for (uint64_t T = 1; T < 200; T++) {
        double c = ffn_moe_coverage_uniform(64, 6, T);
        cr_assert_gt(c, prev);
        cr_assert_leq(c, 64.0);
        prev = c;
    }
}

Test(moe, closed_form_matches_seeded_simulation)
{
    static const uint64_t cases[][3] = {{8, 2, 4}, {64, 6, 16}, {256, 8, 32}, {128, 8, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t E = cases[i][0], k = cases[i][1], T = cases[i][2];
        ffn_moe_opts o;
        memset(&o, 0, sizeof o);
        o.trials = 2000;
        o.seed = 42;
        ffn_moe_stats sim;
        cr_assert_eq(ffn_moe_routing(E, k, T, 1, &o, 0, &sim), 0);
        cr_assert(sim.monte_carlo);
        double closed = ffn_moe_coverage_uniform(E, k, T);
        cr_assert(fabs(sim.experts_touched / closed - 1) < 0.01,
                  "E=%llu k=%llu T=%llu: simulated %.4f vs closed form %.4f", (unsigned long long)E,
                  (unsigned long long)k, (unsigned long long)T, sim.experts_touched, closed);
    }
}

Test(moe, simulation_is_deterministic)
{
    ffn_moe_opts o;
    memset(&o, 0, sizeof o);
    o.trials = 50;
    o.seed = 7;
    o.zipf_s = 1.2;
    ffn_moe_stats a, b, c;
    ffn_moe_routing(64, 4, 100, 8, &o, 1.25, &a);
    ffn_moe_routing(64, 4, 100, 8, &o, 1.25, &b);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    o.seed = 8;
    ffn_moe_routing(64, 4, 100, 8, &o, 1.25, &c);
    cr_assert_neq(a.max_expert_load, c.max_expert_load);
}

Test(moe, imbalance_one_when_balanced_and_grows_with_skew)
{
    ffn_moe_stats s;
    /* every token to every expert: perfectly balanced */
    cr_assert_eq(ffn_moe_routing(8, 8, 1000, 1, NULL, 0, &s), 0);
    cr_assert_float_eq(s.imbalance, 1.0, 1e-12);
    /* uniform routing balances out as T grows */
    ffn_moe_routing(8, 2, 10000000, 1, NULL, 0, &s);
    cr_assert_lt(s.imbalance, 1.01);
    ffn_moe_opts o;
    memset(&o, 0, sizeof o);
    o.trials = 64;
    o.seed = 1;
    double prev = 0;
    const double skews[] = {0.0, 0.5, 1.0, 1.5};
    for (int i = 0; i < 4; i++) {
        o.zipf_s = skews[i];
        o.trials = 64;
        ffn_moe_routing(64, 4, 4096, 1, &o, 0, &s);
        cr_assert_gt(s.imbalance, prev, "skew %.1f: imbalance %.3f <= %.3f", skews[i], s.imbalance,
                     prev);
        prev = s.imbalance;
    }
}

Test(moe, dropped_fraction_under_capacity)
{
    ffn_moe_opts o;
    memset(&o, 0, sizeof o);
    o.zipf_s = 1.0;
    o.trials = 32;
    o.seed = 3;
    ffn_moe_stats s;
    ffn_moe_routing(16, 2, 2048, 1, &o, 1.0, &s);
    cr_assert_gt(s.dropped_fraction, 0.05);
    ffn_moe_routing(16, 2, 2048, 1, &o, 100.0, &s);
    cr_assert_float_eq(s.dropped_fraction, 0.0, 1e-15);
    /* uniform closed form: capacity 1.0 still drops the Poisson overflow, 2.0 far less */
    ffn_moe_stats u1, u2;
    ffn_moe_routing(16, 2, 2048, 1, NULL, 1.0, &u1);
    ffn_moe_routing(16, 2, 2048, 1, NULL, 2.0, &u2);
    cr_assert_gt(u1.dropped_fraction, 0);
    cr_assert_lt(u2.dropped_fraction, u1.dropped_fraction / 100);
}

Test(moe, flops_scale_with_topk)
{
    ffn_hw hw = test_hw();
    ffn_run run;
    ffn_run_default(&run);
    run.seq = 4096; /* prefill: every expert busy for any k */
    ffn_result r1, r2;
    ffn_model m1 = mixtral_like(1), m2 = mixtral_like(2);
    cr_assert_eq(ffn_predict(&m1, &hw, &run, &r1, NULL), 0);
    cr_assert_eq(ffn_predict(&m2, &hw, &run, &r2, NULL), 0);
    double e1 = 0, e2 = 0;
    for (int i = 0; i < r1.moe.n_ops; i++)
        if (!strncmp(r1.moe.ops[i].name, "experts_", 8)) e1 += r1.moe.ops[i].flops;
    for (int i = 0; i < r2.moe.n_ops; i++)
        if (!strncmp(r2.moe.ops[i].name, "experts_", 8)) e2 += r2.moe.ops[i].flops;
    cr_assert_float_eq(e2 / e1, 2.0, 1e-9);
    /* expert GEMM FLOPs = 2 * T*k * d * f * 3 (+ activation) for SwiGLU */
    double gemm = 2.0 * 4096 * 2 * 4096 * 14336 * 3;
    cr_assert(fabs(e2 / gemm - 1) < 1e-3, "expert flops %.6g vs %.6g", e2, gemm);
}

/* A spec that publishes no fp32 rate (TPUs) prices the router's top-k and the combine, fp32
 * vector work, at its widest floating-point peak, not at 1 FLOP/s (which once made a TPU v5e
 * MoE layer take 195,630 s): with only a bf16 peak the layer costs what it costs with an fp32
 * peak as high as that bf16 one. */
Test(moe, routing_without_an_fp32_peak_runs_at_the_widest_float_peak)
{
    ffn_hw hw = test_hw();
    hw.peak_flops[FFN_DT_FP32] = 0;
    ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.batch = 8;
    ffn_result r, ref;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    hw.peak_flops[FFN_DT_FP32] = hw.peak_flops[FFN_DT_BF16];
    cr_assert_eq(ffn_predict(&m, &hw, &run, &ref, NULL), 0);
    cr_assert_lt(r.moe_detail.router_s, 1e-3);
    cr_assert_lt(r.moe_detail.combine_s, 1e-3);
    cr_assert_float_eq(r.moe_detail.router_s, ref.moe_detail.router_s, 1e-15);
    cr_assert_float_eq(r.moe_detail.combine_s, ref.moe_detail.combine_s, 1e-15);
    cr_assert_float_eq(r.predicted_s, ref.predicted_s, 1e-12);
}

/* A decode step of `batch` sequences, the other run settings at their defaults. */
static ffn_run decode_run(uint64_t batch)
{
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.batch = batch;
    return run;
}

Test(moe, alltoall_bytes_follow_ep)
{
    ffn_hw hw = test_hw();
    ffn_model m = mixtral_like(2);
    ffn_run run = decode_run(64);
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    cr_assert_float_eq(r.moe_detail.alltoall_bytes, 0.0, 1e-15);
    cr_assert_float_eq(r.moe_detail.alltoall_s, 0.0, 1e-15);
    const double total = 64.0 * 2 * 4096 * 2; /* T*k*d*bytes */
    const uint64_t eps[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        run.ep = eps[i];
        cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
        double N = (double)eps[i];
        cr_assert_float_eq(r.moe_detail.alltoall_bytes, total * (N - 1) / N, 1e-6);
        cr_assert_gt(r.moe_detail.alltoall_s, 0);
        cr_assert_float_eq(r.moe_detail.experts_per_device, 8.0 / N, 1e-12);
    }
}

Test(moe, decode_weights_grow_with_batch)
{
    ffn_hw hw = test_hw();
    ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    const double expert = 3.0 * 4096 * 14336 * 2; /* one expert's bf16 weights */
    double prev = 0;
    const uint64_t batches[] = {1, 2, 4, 16, 64, 256};
    for (int i = 0; i < 6; i++) {
        run.batch = batches[i];
        ffn_result r;
        cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
        double w = 0;
        for (int o = 0; o < r.moe.n_ops; o++)
            if (!strncmp(r.moe.ops[o].name, "experts_", 8)) w += r.moe.ops[o].weight_bytes;
        double per_layer = w / expert;
        if (i == 0) cr_assert(fabs(per_layer - 2.0) < 1e-3, "B=1: %.4f experts", per_layer);
        cr_assert_geq(per_layer, prev);
        cr_assert_leq(per_layer, 8.0 + 1e-9);
        prev = per_layer;
    }
    cr_assert_gt(prev, 7.99);
}

Test(moe, one_token_decode_runs_one_row_gemms)
{
    /* batch-1 decode with top-2: two experts, one token each. The closed-form coverage is
     * 2 - 2e-16; the expert GEMMs must still be two instances of one row (a GEMV, which a spec
     * can give its own bandwidth fraction), not of two rows. */
    ffn_hw hw = test_hw();
    hw.eff.memory_max = 0.5;
    hw.eff.memory_max_gemv = 0.9;
    ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    run.phase = FFN_PHASE_DECODE;
    run.batch = 1;
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    int seen = 0;
    for (int o = 0; o < r.moe.n_ops; o++) {
        const ffn_op *op = &r.moe.ops[o];
        if (strncmp(op->name, "experts_", 8)) continue;
        seen++;
        cr_assert_eq(op->m, 1u, "%s: m = %llu", op->name, (unsigned long long)op->m);
        cr_assert_eq(op->instances, 2u, "%s", op->name);
        /* memory-bound at the GEMV fraction of the bandwidth */
        cr_assert_float_eq(op->predicted_s, op->bytes / (3e12 * 0.9), 0.02 * op->predicted_s);
    }
    cr_assert_eq(seen, 2);
}

Test(moe, ep_must_divide_unless_uneven)
{
    ffn_hw hw = test_hw();
    ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    run.ep = 3;
    ffn_result r;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, &d), FFN_EINVAL);
    cr_assert(strstr(d.msg, "--ep-uneven"), "%s", d.msg);
    run.moe.ep_uneven = true;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    cr_assert_float_eq(r.moe_detail.experts_per_device, 3.0, 1e-12);
}

Test(moe, bad_routing_options)
{
    ffn_moe_stats s;
    cr_assert_eq(ffn_moe_routing(8, 9, 10, 1, NULL, 0, &s), FFN_EINVAL); /* k > E */
    cr_assert_eq(ffn_moe_routing(8, 0, 10, 1, NULL, 0, &s), FFN_EINVAL);
    ffn_moe_opts o;
    memset(&o, 0, sizeof o);
    o.zipf_s = NAN;
    cr_assert_eq(ffn_moe_routing(8, 2, 10, 1, &o, 0, &s), FFN_EINVAL);
    o.zipf_s = INFINITY;
    cr_assert_eq(ffn_moe_routing(8, 2, 10, 1, &o, 0, &s), FFN_EINVAL);
    memset(&o, 0, sizeof o);
    const double hist[4] = {1, 2, 3, 4};
    o.popularity = hist;
    o.n_popularity = 4; /* wrong length for 8 experts */
    cr_assert_eq(ffn_moe_routing(8, 2, 10, 1, &o, 0, &s), FFN_EINVAL);
    const double neg[8] = {1, 1, 1, -1, 1, 1, 1, 1};
    o.popularity = neg;
    o.n_popularity = 8;
    cr_assert_eq(ffn_moe_routing(8, 2, 10, 1, &o, 0, &s), FFN_EINVAL);
}

Test(moe, histogram_routing_follows_popularity)
{
    /* all popularity on experts 0 and 1 with k = 2: exactly those two are touched */
    const double hist[8] = {1, 1, 0, 0, 0, 0, 0, 0};
    ffn_moe_opts o;
    memset(&o, 0, sizeof o);
    o.popularity = hist;
    o.n_popularity = 8;
    o.trials = 16;
    ffn_moe_stats s;
    cr_assert_eq(ffn_moe_routing(8, 2, 100, 1, &o, 0, &s), 0);
    cr_assert_float_eq(s.experts_touched, 2.0, 1e-12);
    cr_assert_float_eq(s.imbalance, 4.0, 1e-12); /* 100 tokens each on 2 of 8: max 100, mean 25 */
}

/* ---- the experts as an engine's fused-MoE kernels run them -------------------------------- */

/* test_hw as an NVIDIA GPU carrying one bf16 fused-MoE kernel family (the model's defaults)
 * fitted on itself, range [0.8, 1.25] */
static ffn_hw fused_hw(void)
{
    ffn_hw hw = test_hw();
    hw.kind = FFN_HW_GPU;
    strcpy(hw.vendor, "NVIDIA");
    hw.eff.compute_max = 0.8;
    hw.eff.memory_max = 0.8;
    hw.eff.memory_max_elem = 0.9;
    hw.eff.launch_s = 2e-6;
    ffn_engine_moe *f = &hw.moe_kernels[0];
    strcpy(f->kernels, "triton");
    f->dtype = FFN_DT_BF16;
    f->params = *ffn_moe_fused_default_params(FFN_DT_BF16);
    f->p10 = 0.8;
    f->p90 = 1.25;
    strcpy(f->device, "test");
    hw.n_moe_kernels = 1;
    hw.moe_engine = FFN_ENGINE_VLLM;
    return hw;
}

/* mixtral_like(2)'s MoE layer as a bf16 table row of T tokens drawn as draw (alpha) */
static ffn_aic_moe mixtral_row(uint64_t T, ffn_moe_draw draw, double alpha)
{
    ffn_aic_moe row;
    memset(&row, 0, sizeof row);
    row.tokens = T;
    row.hidden = 4096;
    row.inter = 14336;
    row.topk = 2;
    row.experts = 8;
    row.tp = row.ep = 1;
    row.wdtype = row.adtype = FFN_DT_BF16;
    row.draw = draw;
    row.alpha = alpha;
    return row;
}

static double ops_named(const ffn_layer_cost *c, const char *name)
{
    for (int i = 0; i < c->n_ops; i++)
        if (!strcmp(c->ops[i].name, name)) return c->ops[i].predicted_s;
    return NAN;
}

/* Where the spec carries a family, the layer's top-k, dispatch, experts and combine are the
 * fused model's call: at 4096 tokens over 8 experts every expert receives its 1024 copies, the
 * collector's balanced draw exactly, so the layer's fused part is ffn_moe_fused_predict's time
 * of that row, kernel for kernel; the router GEMM stays the layer's own. */
Test(moe, fused_kernels_price_the_layer_as_the_fused_model_does)
{
    const ffn_hw hw = fused_hw();
    const ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost c;
    ffn_moe_detail det;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 4096, &c, &det, NULL), 0);
    cr_assert_str_eq(det.fused, "triton");
    ffn_aic_moe row = mixtral_row(4096, FFN_DRAW_BALANCED, 0);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.weights = FFN_WEIGHTS_COLD;
    o.params = &hw.moe_kernels[0].params;
    ffn_moe_fused_cost f;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &row, &o, &f), 0);
    cr_expect_float_eq(det.fused_s, f.time_s, 1e-12 * f.time_s, "%g vs %g", det.fused_s, f.time_s);
    cr_expect_float_eq(ops_named(&c, "experts_gate_up"), f.kernel_s[FFN_MF_GATE_UP], 1e-15);
    cr_expect_float_eq(ops_named(&c, "experts_down"), f.kernel_s[FFN_MF_DOWN], 1e-15);
    cr_expect_float_eq(ops_named(&c, "experts_module"), f.kernel_s[FFN_MF_MODULE], 1e-15);
    cr_expect_float_eq(ops_named(&c, "score_topk"), f.kernel_s[FFN_MF_ROUTER], 1e-15);
    cr_expect_float_eq(ops_named(&c, "dispatch"), f.kernel_s[FFN_MF_ALIGN], 1e-15);
    cr_expect_float_eq(ops_named(&c, "combine"), f.kernel_s[FFN_MF_COMBINE], 1e-15);
    /* the layer: the router GEMM plus the fused call, nothing else at TP 1, EP 1 */
    cr_expect_float_eq(c.predicted_s, ops_named(&c, "router") + f.time_s, 1e-12 * c.predicted_s);
    /* the FLOPs are the copies' (8192 x 2 x 4096 x 3 x 14336), not the padded rows' */
    const double useful = 2.0 * 8192.0 * 4096.0 * 3.0 * 14336.0;
    double fl = 0;
    for (int i = 0; i < c.n_ops; i++)
        if (!strcmp(c.ops[i].name, "experts_gate_up") || !strcmp(c.ops[i].name, "experts_down"))
            fl += c.ops[i].flops;
    cr_expect_float_eq(fl, useful, 1e-9 * useful);
    cr_expect_eq(det.fused_block_m, 64u);
}

/* Fewer tokens than experts x top-k: the copies land on the experts uniform routing touches
 * (2 of 8 for one token, 5.47 on average for four), not on all of them as the balanced draw at
 * the same T would spread them; the layer reads those experts' weights only. */
Test(moe, fused_kernels_read_the_touched_experts_weights)
{
    const ffn_hw hw = fused_hw();
    const ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost one, four;
    ffn_moe_detail d1, d4;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 1, &one, &d1, NULL), 0);
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, 4, &four, &d4, NULL), 0);
    double w1 = 0, w4 = 0;
    for (int i = 0; i < one.n_ops; i++)
        if (!strncmp(one.ops[i].name, "experts_", 8)) w1 += one.ops[i].weight_bytes;
    for (int i = 0; i < four.n_ops; i++)
        if (!strncmp(four.ops[i].name, "experts_", 8)) w4 += four.ops[i].weight_bytes;
    const double expert = 3.0 * 4096.0 * 14336.0 * 2.0; /* bf16 gate, up and down */
    cr_expect_float_eq(w1, 2.0 * expert, 1e-9 * expert);
    /* T = 4: 8 (1 - 0.75^4) = 5.46875 experts touched, the expected weights (the layer blends
     * the costs of 5 and 6 active experts) */
    cr_expect_float_eq(w4, 5.46875 * expert, 1e-9 * expert);
    cr_expect_gt(d4.fused_s, d1.fused_s);
}

/* A routing skew (the model's routing_alpha, or the run's): the fused part is the mean of the
 * collector's power-law draws at that exponent (ffn_moe_fused_predict of the power-law row, its
 * five draws from the run's seed); the run's 0 is the balanced price whatever the model says; a
 * --zipf routing keeps its own law. */
Test(moe, routing_skew_prices_the_fused_kernels_on_power_law_draws)
{
    const ffn_hw hw = fused_hw();
    ffn_model m = mixtral_like(2);
    m.moe.routing_alpha = 1.2;
    ffn_run run;
    ffn_run_default(&run);
    run.moe.seed = 7;
    const uint64_t T = 512;
    ffn_layer_cost c;
    ffn_moe_detail det;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, T, &c, &det, NULL), 0);
    ffn_aic_moe row = mixtral_row(T, FFN_DRAW_POWER_LAW, 1.2);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.weights = FFN_WEIGHTS_COLD;
    o.params = &hw.moe_kernels[0].params;
    o.seed = 7;
    ffn_moe_fused_cost skew, flat;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &row, &o, &skew), 0);
    cr_expect_float_eq(det.fused_s, skew.time_s, 1e-9 * skew.time_s, "%g vs %g", det.fused_s,
                       skew.time_s);
    /* the run's own exponent wins over the model's, 0 balanced */
    run.moe.routing_alpha = 0;
    ffn_moe_detail d0;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, T, &c, &d0, NULL), 0);
    row.draw = FFN_DRAW_BALANCED;
    row.alpha = 0;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &row, &o, &flat), 0);
    cr_expect_float_eq(d0.fused_s, flat.time_s, 1e-9 * flat.time_s);
    /* the busiest expert of a skewed draw holds more copies than the balanced share, and its
     * row tiles make the call slower */
    cr_expect_gt(skew.max_expert_tokens, flat.max_expert_tokens);
    cr_expect_gt(det.fused_s, d0.fused_s);
    /* a Zipf routing of the run is what the kernels see: not the model's exponent */
    run.moe.routing_alpha = -1;
    run.moe.zipf_s = 1.0;
    ffn_moe_detail dz;
    cr_assert_eq(ffn_moe_layer(&m, &hw, &run, T, &c, &dz, NULL), 0);
    cr_expect_neq(dz.fused_s, det.fused_s);
}

/* No engine on the spec, a CPU, --generic-moe, or an EP split the fused model cannot take: the
 * generic grouped GEMMs. */
Test(moe, fused_kernels_stay_off_where_they_do_not_apply)
{
    const ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost c, g;
    ffn_moe_detail det;
    ffn_hw plain = fused_hw();
    plain.n_moe_kernels = 0;
    plain.moe_engine = FFN_ENGINE_NONE;
    cr_assert_eq(ffn_moe_layer(&m, &plain, &run, 64, &g, &det, NULL), 0);
    cr_expect_eq(det.fused[0], '\0', "no engine applied: generic");
    cr_expect_eq(det.fused_s, 0.0);
    ffn_hw cpu = fused_hw();
    cpu.kind = FFN_HW_CPU;
    cr_assert_eq(ffn_moe_layer(&m, &cpu, &run, 64, &c, &det, NULL), 0);
    cr_expect_eq(det.fused[0], '\0', "a CPU: generic");
    ffn_hw nv = fused_hw();
    run.moe.generic = true;
    cr_assert_eq(ffn_moe_layer(&m, &nv, &run, 64, &c, &det, NULL), 0);
    cr_expect_eq(det.fused[0], '\0', "--generic-moe");
    cr_expect_float_eq(c.predicted_s, g.predicted_s, 1e-12 * g.predicted_s);
    run.moe.generic = false;
    run.ep = 3;
    run.moe.ep_uneven = true;
    cr_assert_eq(ffn_moe_layer(&m, &nv, &run, 64, &c, &det, NULL), 0);
    cr_expect_eq(det.fused[0], '\0', "EP 3 over 8 experts: generic");
}

/* Every GPU under an engine runs the fused module: another vendor's with the fused model's
 * defaults at the spec's range widened to x0.8 and x1.25; an NVIDIA GPU of another
 * architecture than the family's with the family, its range widened a step for the device
 * and one for the architecture. */
Test(moe, fused_kernels_carry_to_other_vendors_and_architectures)
{
    const ffn_model m = mixtral_like(2);
    ffn_run run;
    ffn_run_default(&run);
    ffn_layer_cost c, d;
    ffn_moe_detail det;
    ffn_hw amd = fused_hw();
    strcpy(amd.vendor, "AMD");
    cr_assert_eq(ffn_moe_layer(&m, &amd, &run, 64, &c, &det, NULL), 0);
    cr_expect_str_eq(det.fused, "defaults");
    double lo, hi;
    ffn_hw_unc_range_dt(&amd, FFN_DT_BF16, &lo, &hi);
    cr_expect_float_eq(det.fused_p10, 0.8 * lo, 1e-12);
    cr_expect_float_eq(det.fused_p90, 1.25 * hi, 1e-12);
    /* the test family's parameters are the defaults: the same time as on the NVIDIA twin */
    const ffn_hw nv = fused_hw();
    cr_assert_eq(ffn_moe_layer(&m, &nv, &run, 64, &d, &det, NULL), 0);
    cr_expect_float_eq(c.predicted_s, d.predicted_s, 1e-12 * d.predicted_s);
    ffn_hw bw = fused_hw();
    strcpy(bw.name, "bw-gpu");
    strcpy(bw.family, "blackwell");
    strcpy(bw.moe_kernels[0].arch, "hopper");
    cr_assert_eq(ffn_moe_layer(&m, &bw, &run, 64, &c, &det, NULL), 0);
    cr_expect_str_eq(det.fused, "triton");
    cr_expect_float_eq(det.fused_p10, 0.8 * 0.81, 1e-12);
    cr_expect_float_eq(det.fused_p90, 1.25 * 1.21, 1e-12);
}

/* The prediction's range: the fused kernels' part at their family's p10 and p90, the rest at
 * the device's. */
Test(moe, fused_kernels_carry_their_familys_range)
{
    const ffn_hw hw = fused_hw();
    const ffn_model m = mixtral_like(2);
    const ffn_run run = decode_run(64);
    ffn_result r;
    cr_assert_eq(ffn_predict(&m, &hw, &run, &r, NULL), 0);
    cr_assert_gt(r.moe_fused_s, 0);
    cr_expect_float_eq(r.moe_fused_s, 32.0 * r.moe_detail.fused_s, 1e-12 * r.moe_fused_s);
    double p10, p90;
    ffn_hw_unc_range_dt(&hw, FFN_DT_BF16, &p10, &p90);
    const double rest = r.predicted_s - r.moe_fused_s;
    cr_expect_float_eq(r.predicted_p10_s, rest * p10 + r.moe_fused_s * 0.8, 1e-12);
    cr_expect_float_eq(r.predicted_p90_s, rest * p90 + r.moe_fused_s * 1.25, 1e-12);
}
