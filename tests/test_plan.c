/* Capacity planning and the sweep iterator (sim/plan.c): the hand-worked plan of docs/plan.md,
 * monotonicity (a looser SLO never needs more devices; more memory never makes a fitting plan
 * unfit), MoE plans choosing expert parallelism where it helps, infeasible answers with the
 * closest miss, bad options, and the sweep giving exactly what ffn_predict gives. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/plan.h"
#include "ffnroof/sweep.h"
#include "ffnroof/sim.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"

static void load_hw(const char *name, ffn_hw *hw)
{
    char p[512];
    ffn_diag d;
    snprintf(p, sizeof p, "%s/hw/%s.yaml", FFNROOF_SOURCE_DIR, name);
    cr_assert_eq(ffn_hw_load(p, hw, &d), 0, "%s: %s", p, d.msg);
}

static void load_model(const char *name, ffn_model *m)
{
    char p[512];
    ffn_diag d;
    snprintf(p, sizeof p, "%s/models/%s.yaml", FFNROOF_SOURCE_DIR, name);
    cr_assert_eq(ffn_model_load(p, m, &d), 0, "%s: %s", p, d.msg);
}

static ffn_plan plan; /* large: static */

/* The hand-worked examples' setting: LLaMA-2-7B on an H100 SXM with the efficiency model
 * switched off (the ideal roofline), prompt 1024 + output 1024, bf16, TPOT 20 ms, TP 1. */
static void hand_worked(ffn_hw *hw, ffn_model *m, ffn_plan_opts *o)
{
    load_hw("h100-sxm", hw);
    load_model("llama2-7b", m);
    memset(&hw->eff, 0, sizeof hw->eff);
    /* the fitted attention kernels and collectives are efficiency models too */
    memset(&hw->attn, 0, sizeof hw->attn);
    memset(&hw->scaleup.coll, 0, sizeof hw->scaleup.coll);
    hw->eff.compute_max = 1.0;
    hw->eff.memory_max = 1.0;
    ffn_plan_opts_default(o);
    o->prompt = 1024;
    o->output = 1024;
    o->tpot_s = 0.020;
    o->tp[0] = 1;
    o->n_tp = 1;
}

/* The example of docs/plan.md, "A hand-worked plan": LLaMA-2-7B decode on one H100 SXM with
 * the efficiency model switched off (the ideal roofline), prompt 1024 + output 1024, bf16,
 * TPOT 20 ms, 10,000 tokens/s, TP 1. Every number below is recomputed from the model's sizes
 * with the equations of docs/plan.md, then compared with the plan. */
Test(plan, hand_worked_dense_example)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_plan_opts o;
    hand_worked(&hw, &m, &o);
    o.target_tokens_per_s = 10000;
    ffn_diag d;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
    cr_assert_eq(plan.n_layouts, 1);
    const ffn_plan_layout *L = &plan.layouts[0];
    cr_assert(L->feasible, "%s", L->why);

    const double D = 4096, F = 11008, Lr = 32, V = 32000, H = 32, hd = 128, ctx = 2048, b = 2;
    const double bw = 3.35e12;
    /* weights: 6,738,415,616 parameters x 2 bytes */
    cr_assert_eq(plan.params.total, 6738415616ull);
    double W = 6738415616.0 * b;
    cr_assert_float_eq(L->mem.weight_bytes, W, 1e-3);
    /* KV cache: 2 (K and V) x 32 heads x 128 x 2 bytes per token per layer = 16 KiB */
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 1), 2 * H * hd * b, 1e-9);
    double kv_seq = ctx * Lr * 2 * H * hd * b; /* 1 GiB */
    cr_assert_float_eq(kv_seq, 1073741824.0, 1e-3);
    cr_assert_float_eq(L->mem.kv_bytes_per_seq, kv_seq, 1e-3);
    /* activation peak per sequence: the fp32 logits, 4 V = 128,000 bytes, are the largest */
    double act_per_seq = 4 * V;
    cr_assert_gt(act_per_seq, (2 * D + F) * b); /* FFN: x, h and y of one token */
    /* memory: 90% of the 81559 MiB nvidia-smi reports less the runtime's 0.69 GiB, 76.23 GB
     * usable; the largest batch */
    double usable = 81559.0 * 1048576 * 0.9 - 0.69 * 1073741824;
    cr_assert_float_eq(L->mem.usable_bytes, usable, 1);
    uint64_t mem_batch = (uint64_t)floor((usable - W) / (kv_seq + act_per_seq));
    cr_assert_eq(mem_batch, 58);
    cr_assert_eq(L->mem_batch, mem_batch);
    /* step(B) = [L (FFN weights 3 d f b + FFN acts 2 (d + 3 f) b B + attn weights 4 d^2 b
     *             + attn acts 6 d b B + KV 2 H hd b ctx B + q/o 2 H hd b B
     *             + norms 8 d b B + rotary 4 H hd b B)
     *            + LM head V d b + logits 4 V B + input d b B] / bw   (all memory-bound) */
    double fixed = Lr * (3 * D * F * b + 4 * D * D * b) + V * D * b;
    double per_b = Lr * (2 * (D + 3 * F) * b + 6 * D * b + 2 * H * hd * b * ctx + 2 * H * hd * b +
                         8 * D * b + 4 * H * hd * b) +
                   4 * V + D * b;
    cr_assert_float_eq(fixed, 13214154752.0, 1e-3);
    cr_assert_float_eq(per_b, 1083872256.0, 1e-3);
    uint64_t B = (uint64_t)floor((0.020 * bw - fixed) / per_b);
    cr_assert_eq(B, 49);
    cr_assert_eq(L->max_batch, B);
    double step = (fixed + per_b * (double)B) / bw;
    cr_assert_float_eq(L->step.step_s, step, 1e-12 + 1e-9 * step, "step %.9g vs %.9g",
                       L->step.step_s, step);
    cr_assert_float_eq(step, 0.0197981777, 1e-9);
    /* the FFN part: 32 layers x (3 d f b + 2 (d + 3 f) b B) / bw: the gate/up GEMM writes both
     * halves, the activation kernel reads them and writes h, the down GEMM reads h */
    double ffn = Lr * (3 * D * F * b + 2 * (D + 3 * F) * b * (double)B) / bw;
    cr_assert_float_eq(L->step.ffn_s, ffn, 1e-12);
    cr_assert_float_eq(L->step.ffn_share, ffn / step, 1e-9);
    cr_assert_eq(L->bottleneck, FFN_BN_KV_CACHE);
    /* throughput and devices: ceil(10000 / (49 / 19.70 ms)) = ceil(4.02) = 5 */
    double tps = (double)B / step;
    cr_assert_float_eq(L->tokens_per_s_device, tps, 1e-6);
    cr_assert_eq(L->replicas, 5);
    cr_assert_eq(L->devices, 5);
    cr_assert_float_eq(L->tokens_per_s_per_watt, 5 * tps / (5 * 700.0), 1e-9);

    /* A looser SLO, 25 ms, would allow 65 sequences: memory stops the batch at 58. */
    o.tpot_s = 0.025;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0);
    cr_assert_eq((uint64_t)floor((0.025 * bw - fixed) / per_b), 65);
    cr_assert_eq(plan.layouts[0].max_batch, 58);
    cr_assert_eq(plan.layouts[0].bottleneck, FFN_BN_CAPACITY);
}

/* The same LLaMA-2-7B decode on two pipeline stages of one H100 each (docs/plan.md, "Pipeline
 * stages"), ideal roofline: each stage holds half the layers and, the LM head being untied, one
 * of the two vocabulary tables, so half the weights and half of each sequence's KV cache; the
 * batch runs as two micro-batches, and one token of a micro-batch passes every layer and one hop
 * (the micro-batch's activations over NVLink: latency + ceil(B/2) d b / bandwidth). */
Test(plan, hand_worked_pipeline_example)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_plan_opts o;
    hand_worked(&hw, &m, &o);
    o.pp[0] = 2;
    o.n_pp = 1;
    ffn_diag d;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
    cr_assert_eq(plan.n_layouts, 1);
    const ffn_plan_layout *L = &plan.layouts[0];
    cr_assert(L->feasible, "%s", L->why);
    cr_assert_eq(L->pp, 2);
    cr_assert_eq(L->devices, 2);
    const double D = 4096, F = 11008, Lr = 32, V = 32000, H = 32, hd = 128, ctx = 2048, b = 2;
    const double bw = hw.mem_bandwidth_bps;
    const double W = 6738415616.0 * b, kv_seq = ctx * Lr * 2 * H * hd * b;
    cr_assert_float_eq(L->mem.weight_bytes, W / 2, 1e-3);
    cr_assert_float_eq(L->mem.kv_bytes_per_seq, kv_seq / 2, 1e-3);
    /* memory: half the weights, half the KV of every sequence, the logits of a micro-batch */
    const double usable = hw.mem_capacity_bytes * 0.9 - FFN_PLAN_GPU_RESERVE;
    uint64_t mem_batch = 0;
    for (uint64_t B = 1; B < 4096; B++)
        if (W / 2 + (double)B * kv_seq / 2 + 4 * V * (double)((B + 1) / 2) <= usable) mem_batch = B;
    cr_assert_eq(L->mem_batch, mem_batch);
    /* TPOT(B) = every layer at ceil(B/2) sequences (the dense example's terms) + one hop */
    const double fixed = Lr * (3 * D * F * b + 4 * D * D * b) + V * D * b;
    const double per_b = Lr * (2 * (D + 3 * F) * b + 6 * D * b + 2 * H * hd * b * ctx +
                               2 * H * hd * b + 8 * D * b + 4 * H * hd * b) +
                         4 * V + D * b;
    uint64_t best = 0;
    double best_step = 0;
    for (uint64_t B = 1; B <= mem_batch; B++) {
        const double mb = (double)((B + 1) / 2);
        const double hop = hw.scaleup.latency_s + mb * D * b / hw.scaleup.bandwidth_bps;
        const double step = (fixed + per_b * mb) / bw + hop;
        if (step <= o.tpot_s) best = B, best_step = step;
    }
    cr_assert_gt(best, 1);
    cr_assert_eq(L->max_batch, best);
    cr_assert_eq(L->step.micro_batches, 2);
    cr_assert_float_eq(L->step.step_s, best_step, 1e-12 + 1e-9 * best_step, "step %.9g vs %.9g",
                       L->step.step_s, best_step);
    cr_assert_float_eq(L->tokens_per_s_device, (double)best / best_step / 2, 1e-6);
    cr_assert_float_eq(L->step.pp_bubble, 0.0, 1e-12);
    /* one sequence: one micro-batch, so each stage idles half the time */
    ffn_plan_step st;
    const ffn_plan_shape sh = {1, 1, 1, 2};
    cr_assert_eq(ffn_plan_step_eval(&m, &hw, &o, FFN_PHASE_DECODE, &sh, 1, 2048, &st, &d), 0);
    cr_assert_eq(st.micro_batches, 1);
    cr_assert_float_eq(st.pp_bubble, 0.5, 1e-12);
}

/* Disaggregated pools for LLaMA-2-7B on H100s (docs/plan.md, "Disaggregated prefill and
 * decode"), ideal roofline, a 400 Gb/s network with 20 us per message: each pool's layout is the
 * one with the most tokens per device; a prompt's KV cache is 1024 tokens x 32 layers x 16 KiB =
 * 512 MiB, sent over the network after the prefill; balanced pools serve
 * 1 / (1 / decode + 1 / (output x prefill prompts/s)) output tokens/s per device; the aggregated
 * plan interleaves the same prefills with its decode steps. */
Test(plan, hand_worked_disaggregated_example)
{
    static ffn_hw hw;
    static ffn_model m;
    static ffn_plan pre, dec, agg;
    ffn_plan_opts o;
    hand_worked(&hw, &m, &o);
    hw.scaleout.bandwidth_bps = 50e9;
    hw.scaleout.latency_s = 20e-6;
    o.ttft_s = 0.5;
    o.prefill_batch = 4;
    ffn_diag d;
    ffn_plan_opts op = o, od = o, oa = o;
    op.phase = FFN_PLAN_PREFILL;
    od.phase = FFN_PLAN_DECODE;
    oa.phase = FFN_PLAN_BOTH;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &op, &pre, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &od, &dec, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &oa, &agg, &d), 0, "%s", d.msg);
    ffn_plan_disagg g;
    cr_assert_eq(ffn_plan_disagg_combine(&m, &hw, &o, &pre, &dec, &agg, &g, &d), 0, "%s", d.msg);
    cr_assert_eq(g.prefill, 0);
    cr_assert_eq(g.decode, 0);
    const ffn_plan_layout *P = &pre.layouts[0], *D = &dec.layouts[0], *A = &agg.layouts[0];
    cr_assert(P->feasible && D->feasible && A->feasible);
    cr_assert_float_eq(g.kv_bytes, 1024.0 * 32 * 16384, 1e-3);
    /* the largest prefill batch whose prefill + transfer meets the 500 ms TTFT */
    const double kvb = 1024.0 * 32 * 16384;
    uint64_t bp = 0;
    double bstep = 0;
    for (uint64_t b = 1; b <= P->max_batch; b++) {
        ffn_plan_step st;
        const ffn_plan_shape sh = {1, 1, 1, 1};
        cr_assert_eq(ffn_plan_step_eval(&m, &hw, &op, FFN_PHASE_PREFILL, &sh, b, 1024, &st, &d), 0);
        if (st.step_s + 20e-6 + (double)b * kvb / 50e9 <= 0.5) bp = b, bstep = st.step_s;
    }
    cr_assert_gt(bp, 0);
    cr_assert_eq(g.prefill_batch, bp);
    const double xfer = 20e-6 + (double)bp * kvb / 50e9;
    cr_assert_float_eq(g.kv_transfer_s, xfer, 1e-12);
    cr_assert_float_eq(g.ttft_s, bstep + xfer, 1e-12);
    cr_assert_float_eq(g.tpot_s, D->step.step_s, 1e-15);
    const double xd = D->tokens_per_s_device;
    const double rp = (double)bp / bstep; /* prompts/s of one device */
    cr_assert_float_eq(g.prefill_requests_per_s_device, rp, 1e-9 * rp);
    const double per = 1.0 / (1.0 / xd + 1.0 / (1024.0 * rp));
    cr_assert_float_eq(g.tokens_per_s_device, per, 1e-9 * per);
    cr_assert_float_eq(g.prefill_share, per / (1024.0 * rp), 1e-9);
    /* the aggregated pool spends ceil(B / 4) prefills of 4 prompts per 1024 decode steps */
    const double B = (double)A->max_batch;
    const double share =
        ceil(B / 4) * A->ttft_s / (ceil(B / 4) * A->ttft_s + 1024 * A->step.step_s);
    cr_assert_float_eq(g.aggregated_prefill_share, share, 1e-12);
    cr_assert_float_eq(g.aggregated_tokens_per_s_device, A->tokens_per_s_device, 1e-12);
    cr_assert_eq(g.wins, per > A->tokens_per_s_device);
    cr_assert(strstr(g.why, g.wins ? "disaggregated:" : "aggregated:") == g.why, "%s", g.why);
    cr_assert(g.feasible);
    /* a TTFT that even one prompt's KV transfer breaks: the answer says so */
    o.ttft_s = 0.5 * (20e-6 + kvb / 50e9);
    cr_assert_eq(ffn_plan_disagg_combine(&m, &hw, &o, &pre, &dec, &agg, &g, &d), 0);
    cr_assert_not(g.feasible);
    cr_assert(strstr(g.why, "KV transfer") != NULL, "%s", g.why);
}

/* Quantized footprints, counted by hand for LLaMA-2-7B (d 4096, f 11008, 32 layers, vocab
 * 32000): int8 weights carry one fp32 scale per output channel (gate and up: f channels of K =
 * d; down: d channels of K = f; the attention projections: d channels each of K = d), int4 with
 * zero points 2.5 bytes per group of 128 and column; embeddings and norms stay 16-bit. plan's
 * memory and compare's weights are the same footprint. */
Test(plan, quantized_footprints_include_scales_and_zero_points)
{
    static ffn_model m;
    load_model("llama2-7b", &m);
    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    const double D = 4096, F = 11008, L = 32, V = 32000;
    const double emb = 2 * V * D, norms = (2 * L + 1) * D;
    double ffn_b, other_b;
    ffn_weight_footprint(&m, &p, FFN_DT_INT8, 128, false, 1, 1, &ffn_b, &other_b);
    cr_assert_float_eq(ffn_b, L * (3 * D * F + 4 * (2 * F + D)), 1e-3, "%.17g", ffn_b);
    cr_assert_float_eq(other_b, L * (4 * D * D + 4 * 4 * D) + (emb + norms) * 2, 1e-3);
    ffn_weight_footprint(&m, &p, FFN_DT_INT4, 128, true, 1, 1, &ffn_b, &other_b);
    const double g_up = D / 128, g_down = F / 128; /* 32 and 86 groups along K */
    cr_assert_float_eq(ffn_b, L * (1.5 * D * F + 2.5 * (2 * F * g_up + D * g_down)), 1e-3);
    cr_assert_float_eq(other_b, L * (2 * D * D + 2.5 * 4 * D * g_up) + (emb + norms) * 2, 1e-3);
    /* TP 2 halves the FFN and attention, and the vocabulary-parallel embeddings */
    double f2, o2;
    ffn_weight_footprint(&m, &p, FFN_DT_INT4, 128, true, 2, 1, &f2, &o2);
    cr_assert_float_eq(f2, ffn_b / 2, 1e-3);
    cr_assert_float_eq(o2, (other_b - norms * 2) / 2 + norms * 2, 1e-3);
    /* bf16: exactly 2 bytes a parameter, as before */
    ffn_weight_footprint(&m, &p, FFN_DT_BF16, 128, false, 1, 1, &ffn_b, &other_b);
    cr_assert_float_eq(ffn_b + other_b, 2.0 * (double)p.total, 1e-3);
    /* plan's memory is this footprint */
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    o.wdtype = FFN_DT_INT8;
    o.adtype = FFN_DT_BF16;
    ffn_plan_mem mem;
    const ffn_plan_shape one = {1, 1, 1, 1};
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 1, 1024, 0, &mem), 0);
    ffn_weight_footprint(&m, &p, FFN_DT_INT8, 128, false, 1, 1, &ffn_b, &other_b);
    cr_assert_float_eq(mem.ffn_weight_bytes, ffn_b, 1e-6);
    cr_assert_float_eq(mem.weight_bytes, ffn_b + other_b, 1e-6);
}

/* Devices for the target as the SLO loosens, for a dense and two MoE models. */
Test(plan, looser_slo_never_needs_more_devices)
{
    static ffn_hw hw;
    static ffn_model m;
    const char *cases[][2] = {
        {"llama3-8b", "h100-sxm"}, {"mixtral-8x7b", "h200"}, {"qwen3-30b-a3b", "mi300x"}};
    for (size_t c = 0; c < 3; c++) {
        load_model(cases[c][0], &m);
        load_hw(cases[c][1], &hw);
        ffn_plan_opts o;
        ffn_plan_opts_default(&o);
        o.prompt = 2048;
        o.output = 512;
        o.target_tokens_per_s = 20000;
        o.max_devices = 512;
        o.n_ep = 4; /* 1, 2, 4, 8 */
        uint64_t prev = UINT64_MAX;
        bool was_feasible = false;
        for (double slo = 0.005; slo <= 0.4; slo *= 1.25) {
            o.tpot_s = slo;
            ffn_diag d;
            cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
            if (plan.best < 0) {
                cr_assert_not(was_feasible, "%s on %s: feasible, then infeasible at %g s",
                              cases[c][0], cases[c][1], slo);
                cr_assert_geq(plan.closest, 0);
                continue;
            }
            was_feasible = true;
            uint64_t dev = plan.layouts[plan.best].devices;
            cr_assert_leq(dev, prev, "%s on %s: %llu devices at TPOT %g s, %llu before",
                          cases[c][0], cases[c][1], (unsigned long long)dev, slo,
                          (unsigned long long)prev);
            prev = dev;
            /* each layout's batch grows with the SLO too */
        }
        cr_assert(was_feasible, "%s on %s never feasible", cases[c][0], cases[c][1]);
    }
}

Test(plan, more_memory_never_makes_a_fitting_plan_unfit)
{
    static ffn_hw hw;
    static ffn_model m;
    static ffn_plan before;
    const char *models[] = {"llama3-70b", "mixtral-8x7b", "deepseek-v3"};
    for (size_t c = 0; c < 3; c++) {
        load_model(models[c], &m);
        load_hw("h100-sxm", &hw);
        ffn_plan_opts o;
        ffn_plan_opts_default(&o);
        o.wdtype = FFN_DT_FP8;
        o.tpot_s = 0.1;
        o.max_devices = 64;
        static const uint64_t pp[] = {1, 2}; /* the same layouts whatever the capacity */
        memcpy(o.pp, pp, sizeof pp);
        o.n_pp = 2;
        ffn_diag d;
        cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &before, &d), 0, "%s", d.msg);
        const double cap0 = hw.mem_capacity_bytes;
        for (double f = 1.25; f <= 4; f *= 1.25) {
            hw.mem_capacity_bytes = cap0 * f;
            cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
            cr_assert_eq(plan.n_layouts, before.n_layouts);
            for (size_t i = 0; i < plan.n_layouts; i++) {
                const ffn_plan_layout *a = &before.layouts[i], *b = &plan.layouts[i];
                if (a->fits)
                    cr_assert(b->fits, "%s TP%llu DP%llu EP%llu PP%llu unfit with more memory",
                              models[c], (unsigned long long)b->tp, (unsigned long long)b->dp,
                              (unsigned long long)b->ep, (unsigned long long)b->pp);
                if (a->feasible) cr_assert(b->feasible, "%s: feasible layout lost", models[c]);
                cr_assert_geq(b->mem_batch, a->mem_batch);
            }
            if (before.best >= 0) cr_assert_geq(plan.best, 0);
            memcpy(&before, &plan, sizeof plan);
        }
    }
}

/* DeepSeek-V3 on H200s: with MLA the latent KV cache is not split by TP, and TP all-reduces
 * cost more than EP's all-to-all of k/EP token copies; the plan must pick EP > 1, and it must be
 * better than the best plan restricted to EP 1. */
Test(plan, moe_plans_choose_ep_where_it_helps)
{
    static ffn_hw hw;
    static ffn_model m;
    static ffn_plan tp_only;
    load_model("deepseek-v3", &m);
    load_hw("h200", &hw);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    o.wdtype = FFN_DT_FP8;
    o.prompt = 2048;
    o.output = 512;
    o.tpot_s = 0.05;
    o.target_tokens_per_s = 20000;
    o.max_devices = 256;
    static const uint64_t ep[] = {1, 8, 16, 32};
    memcpy(o.ep, ep, sizeof ep);
    o.n_ep = 4;
    ffn_diag d;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
    cr_assert_geq(plan.best, 0);
    const ffn_plan_layout *best = &plan.layouts[plan.best];
    cr_assert_gt(best->ep, 1);
    o.n_ep = 1;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &tp_only, &d), 0, "%s", d.msg);
    if (tp_only.best >= 0) {
        const ffn_plan_layout *t = &tp_only.layouts[tp_only.best];
        cr_assert(
            best->devices < t->devices ||
                (best->devices == t->devices && best->tokens_per_s_device > t->tokens_per_s_device),
            "EP %llu: %llu devices; TP only: %llu devices", (unsigned long long)best->ep,
            (unsigned long long)best->devices, (unsigned long long)t->devices);
    }
    /* a dense model never gets EP layouts */
    load_model("llama3-8b", &m);
    o.n_ep = 4;
    o.wdtype = FFN_DT_BF16;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0);
    for (size_t i = 0; i < plan.n_layouts; i++)
        cr_assert_eq(plan.layouts[i].ep, 1);
}

Test(plan, kv_cache_gqa_and_mla)
{
    static ffn_model m;
    load_model("llama3-8b", &m); /* 8 kv heads of 128 */
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 1), 2 * 8 * 128 * 2.0,
                       1e-9);
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 4), 2 * 2 * 128 * 2.0,
                       1e-9);
    /* TP 16 > 8 kv heads: one head per device, replicated */
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 16), 2 * 1 * 128 * 2.0,
                       1e-9);
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_FP8, 1), 2 * 8 * 128 * 1.0,
                       1e-9);
    load_model("deepseek-v3", &m); /* MLA: latent 512 + rope 64, not split by TP */
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 1), (512 + 64) * 2.0,
                       1e-9);
    cr_assert_float_eq(ffn_plan_kv_bytes_per_token_layer(&m, FFN_DT_BF16, 8), (512 + 64) * 2.0,
                       1e-9);
}

Test(plan, infeasible_slo_reports_the_closest_miss)
{
    static ffn_hw hw;
    static ffn_model m;
    load_model("llama3-70b", &m);
    load_hw("a100-sxm-80gb", &hw);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    o.tpot_s = 0.001; /* 1 ms per token for a 70B model: no layout can */
    ffn_diag d;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "infeasible is an answer");
    cr_assert_eq(plan.best, -1);
    cr_assert_geq(plan.closest, 0);
    const ffn_plan_layout *c = &plan.layouts[plan.closest];
    cr_assert_gt(c->miss, 1.0);
    cr_assert(strstr(c->why, "TPOT") != NULL, "%s", c->why);
    /* layouts that fit come first; among them the smallest miss */
    cr_assert(c->fits);
    for (size_t i = 0; i < plan.n_layouts; i++)
        if (plan.layouts[i].valid && plan.layouts[i].fits)
            cr_assert_geq(plan.layouts[i].miss, c->miss);
    /* TP 1: 141 GB of weights do not fit 80 GB */
    cr_assert_eq(plan.layouts[0].tp, 1);
    cr_assert_not(plan.layouts[0].fits);
    cr_assert_eq(plan.layouts[0].bottleneck, FFN_BN_CAPACITY);
    /* a target beyond the device limit */
    o.tpot_s = 0.1;
    o.target_tokens_per_s = 1e9;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0);
    cr_assert_eq(plan.best, -1);
    cr_assert_eq(plan.layouts[plan.closest].bottleneck, FFN_BN_DEVICES);
}

Test(plan, bad_options)
{
    static ffn_hw hw;
    static ffn_model m;
    load_model("llama3-8b", &m);
    load_hw("h100-sxm", &hw);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    ffn_diag d;
    o.max_devices = 0;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), FFN_EINVAL);
    cr_assert(strstr(d.msg, "device limit is 0") != NULL, "%s", d.msg);
    ffn_plan_opts_default(&o);
    o.n_tp = 0;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), FFN_EINVAL);
    ffn_plan_opts_default(&o);
    o.mem_utilization = 0;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), FFN_EINVAL);
    /* layouts the model or device do not allow are listed, not evaluated */
    ffn_plan_opts_default(&o);
    o.tp[0] = 3;
    o.tp[1] = 16;
    o.n_tp = 2;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0);
    cr_assert_not(plan.layouts[0].valid);
    cr_assert(strstr(plan.layouts[0].why, "heads") || strstr(plan.layouts[0].why, "intermediate"),
              "%s", plan.layouts[0].why);
    cr_assert_not(plan.layouts[1].valid);
    cr_assert(strstr(plan.layouts[1].why, "node") != NULL, "%s", plan.layouts[1].why);
    cr_assert_eq(plan.best, -1);
    cr_assert_eq(plan.closest, -1);
}

/* The cost objective returns the cheapest fleet that meets the target, checked against a brute
 * force over every layout and replica count; tokens per dollar counts the tokens asked for, so
 * it ranks fleets the same way and never pays for spare capacity. */
Test(plan, cost_objective_is_the_cheapest_fleet_by_brute_force)
{
    static ffn_hw hw;
    static ffn_model m;
    const char *models[] = {"llama3-70b", "mixtral-8x7b", "deepseek-v3"};
    const char *hws[] = {"mi300x", "h100-sxm"};
    for (size_t a = 0; a < sizeof models / sizeof *models; a++)
        for (size_t b = 0; b < sizeof hws / sizeof *hws; b++) {
            load_model(models[a], &m);
            load_hw(hws[b], &hw);
            ffn_plan_opts o;
            ffn_plan_opts_default(&o);
            o.tpot_s = 0.100;
            o.target_tokens_per_s = 20000;
            o.price_per_hour = 2.80;
            ffn_diag d;
            double cheapest = INFINITY;
            for (int obj = FFN_OBJ_TOKENS_PER_DOLLAR; obj <= FFN_OBJ_COST; obj++) {
                o.objective = (ffn_objective)obj;
                cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, &d), 0, "%s", d.msg);
                cheapest = INFINITY;
                for (size_t i = 0; i < plan.n_layouts; i++) {
                    const ffn_plan_layout *L = &plan.layouts[i];
                    if (!L->valid || !L->fits || !(L->tokens_per_s_replica > 0) || !L->max_batch)
                        continue;
                    if ((o.tpot_s > 0 && !L->feasible && L->bottleneck != FFN_BN_DEVICES)) continue;
                    const uint64_t per = L->tp * L->dp * L->pp;
                    for (uint64_t r = 1; r * per <= o.max_devices; r++)
                        if ((double)r * L->tokens_per_s_replica >= o.target_tokens_per_s) {
                            double usd = (double)(r * per) * o.price_per_hour;
                            if (usd < cheapest) cheapest = usd;
                            break;
                        }
                }
                if (!isfinite(cheapest)) {
                    cr_assert_eq(plan.best, -1, "%s on %s: a plan where none meets the target",
                                 models[a], hws[b]);
                    continue;
                }
                cr_assert_geq(plan.best, 0, "%s on %s", models[a], hws[b]);
                const ffn_plan_layout *B = &plan.layouts[plan.best];
                cr_assert_float_eq(B->usd_per_hour, cheapest, 1e-9,
                                   "%s on %s, %s: $%g/h, cheapest $%g/h", models[a], hws[b],
                                   ffn_objective_name(o.objective), B->usd_per_hour, cheapest);
                cr_assert_float_eq(B->tokens_per_dollar,
                                   o.target_tokens_per_s * 3600.0 / B->usd_per_hour,
                                   1e-6 * B->tokens_per_dollar);
                cr_assert_float_eq(B->usd_per_mtok, 1e6 / B->tokens_per_dollar,
                                   1e-9 * B->usd_per_mtok);
            }
        }
}

Test(plan, names_round_trip)
{
    for (int i = 0; i < FFN_OBJ_COUNT; i++) {
        ffn_objective o;
        cr_assert_eq(ffn_objective_parse(ffn_objective_name((ffn_objective)i), &o), 0);
        cr_assert_eq(o, i);
    }
    ffn_plan_phase p;
    cr_assert_eq(ffn_plan_phase_parse("both", &p), 0);
    cr_assert_eq(p, FFN_PLAN_BOTH);
    cr_assert_neq(ffn_plan_phase_parse("train", &p), 0);
    cr_assert_str_eq(ffn_bottleneck_name(FFN_BN_KV_CACHE), "kv_cache");
}

/* Every point of a sweep equals ffn_predict with the ridge it computes itself. */
Test(plan, sweep_equals_predict)
{
    static ffn_hw hw;
    static ffn_model models[2];
    load_hw("h100-sxm", &hw);
    load_model("llama2-7b", &models[0]);
    load_model("mixtral-8x7b", &models[1]);
    static const uint64_t batch[] = {1, 3, 64}, seq[] = {100, 512}, tp[] = {1, 2, 3}, ep[] = {1, 2};
    static const ffn_dtype w[] = {FFN_DT_BF16, FFN_DT_INT4}, a[] = {FFN_DT_BF16, FFN_DT_BF16};
    ffn_sweep_grid g = {.phases = FFN_SWEEP_PREFILL | FFN_SWEEP_DECODE,
                        .batch = batch,
                        .n_batch = 3,
                        .seq = seq,
                        .n_seq = 2,
                        .tp = tp,
                        .n_tp = 3,
                        .ep = ep,
                        .n_ep = 2,
                        .wdtype = w,
                        .adtype = a,
                        .n_dtype = 2};
    ffn_run_default(&g.base);
    g.base.moe.seed = 1;
    cr_assert_eq(ffn_sweep_count(&g), 2 * 3 * 2 * (3 * 2 + 3));
    for (int mi = 0; mi < 2; mi++) {
        ffn_sweep_iter it;
        ffn_sweep_begin(&it, &models[mi], &hw, &g);
        static ffn_result r, ref;
        uint64_t got = 0, rejected = 0;
        int k;
        ffn_diag d;
        while ((k = ffn_sweep_next(&it, &r, &d)) != 0) {
            if (k < 0) {
                rejected++;
                continue;
            }
            got++;
            ffn_run run = r.run;
            run.skip_ridge = false;
            cr_assert_eq(ffn_predict(&models[mi], &hw, &run, &ref, &d), 0, "%s", d.msg);
            cr_assert_eq(r.tokens, ref.tokens);
            cr_assert_eq(r.flops, ref.flops);
            cr_assert_eq(r.bytes, ref.bytes);
            cr_assert_eq(r.predicted_s, ref.predicted_s);
            cr_assert_eq(r.roofline_s, ref.roofline_s);
            cr_assert_eq(r.comm_s, ref.comm_s);
            cr_assert_eq(r.mem.infer_peak_bytes, ref.mem.infer_peak_bytes);
            cr_assert(r.ridge_tokens == ref.ridge_tokens ||
                          (isinf(r.ridge_tokens) && isinf(ref.ridge_tokens)),
                      "ridge %g vs %g", r.ridge_tokens, ref.ridge_tokens);
        }
        /* TP 3 divides neither model; EP 2 is rejected for the dense model */
        uint64_t per_cfg = 3 * 2 + 3;
        uint64_t valid_cfgs = mi == 0 ? 2 * 2 * 1 : 2 * 2 * 2;
        cr_assert_eq(got, valid_cfgs * per_cfg, "%s: %llu points", models[mi].name,
                     (unsigned long long)got);
        cr_assert_eq(it.done, got);
        cr_assert_eq(got + it.skipped, ffn_sweep_count(&g));
        cr_assert_gt(rejected, 0);
    }
}

/* An SRAM-first device by hand: LLaMA-2-70B's weights on Groq LPUs, whose memory is
 * their 230 MB of on-chip SRAM. 68,976,648,192 parameters (HF config: 80 layers, d 8192,
 * f 28672, GQA 64/8 heads, vocab 32000) x 2 B = 137,953,296,384 B; / (230e6 B x 1.0 usable)
 * = 599.8 -> 600 chips. (Groq's public deployment, about 576 chips, is the check in
 * docs/validation.md.) */
Test(plan, groq_chips_for_llama2_70b_by_hand)
{
    ffn_hw hw;
    ffn_model m;
    load_hw("groq-lpu", &hw);
    load_model("llama2-70b", &m);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    o.mem_utilization = 1.0;
    o.max_devices = 4096;
    cr_assert_eq(ffn_plan_evaluate(&m, &hw, &o, &plan, NULL), 0);
    cr_assert_float_eq(plan.weight_bytes_all, 137953296384.0, 1.0);
    cr_assert_eq(plan.devices_for_weights, 600);
    /* the plan's own layouts (TP <= 8) cannot hold it on 8 chips: infeasible, by capacity */
    cr_assert_lt(plan.best, 0);
}

/* One peak rule for every cost (ffn_peak_flops): a dtype the device lists no peak for runs at the
 * first listed of fp32, tf32, bf16, fp16, fp8. The planner's attention and LM head used to fall
 * back to fp32 only and then to 1 FLOP/s, so fp32 on a TPU (bf16 and int8 peaks only) priced a
 * decode step's attention at about 1e9 s while its FFN ran at the bf16 peak. */
Test(plan, a_dtype_without_a_peak_runs_at_the_widest_listed_one)
{
    static ffn_hw hw, same;
    static ffn_model m;
    load_hw("tpu-v5e", &hw);
    load_model("llama3-8b", &m);
    cr_assert_eq(hw.peak_flops[FFN_DT_FP32], 0.0, "the spec lists no fp32 peak");
    cr_assert_gt(hw.peak_flops[FFN_DT_BF16], 0.0);
    cr_expect_eq(ffn_peak_flops(&hw, FFN_DT_FP32), hw.peak_flops[FFN_DT_BF16]);
    cr_expect_eq(ffn_peak_flops(&hw, FFN_DT_INT8), hw.peak_flops[FFN_DT_INT8], "its own peak");
    same = hw;
    same.peak_flops[FFN_DT_FP32] = hw.peak_flops[FFN_DT_BF16];
    ffn_hw none = hw;
    memset(none.peak_flops, 0, sizeof none.peak_flops);
    cr_expect_eq(ffn_peak_flops(&none, FFN_DT_BF16), 1.0, "no peak at all: finite times");

    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    ffn_plan_opts o;
    ffn_plan_opts_default(&o);
    o.wdtype = o.adtype = o.kv_dtype = FFN_DT_FP32;
    ffn_plan_step a, b;
    ffn_diag d;
    const ffn_plan_shape one = {1, 1, 1, 1};
    cr_assert_eq(ffn_plan_step_eval(&m, &hw, &o, FFN_PHASE_DECODE, &one, 8, 1024, &a, &d), 0, "%s",
                 d.msg);
    cr_assert_eq(ffn_plan_step_eval(&m, &same, &o, FFN_PHASE_DECODE, &one, 8, 1024, &b, &d), 0,
                 "%s", d.msg);
    cr_expect(a.attn_proj_s > 0 && a.attn_proj_s < 1.0, "projections %g s", a.attn_proj_s);
    cr_expect_eq(a.attn_proj_s, b.attn_proj_s);
    cr_expect_eq(a.attn_core_s, b.attn_core_s);
    cr_expect_eq(a.lm_head_s, b.lm_head_s);
    cr_expect_eq(a.step_s, b.step_s);
}

/* A device, a model, its parameters and the plan's default options, for the tests below. */
static void one_device(const char *hw_name, const char *model_name, ffn_hw *hw, ffn_model *m,
                       ffn_params *p, ffn_plan_opts *o)
{
    load_hw(hw_name, hw);
    load_model(model_name, m);
    cr_assert_eq(ffn_model_params(m, p), 0);
    ffn_plan_opts_default(o);
}

/* The runtime's reserve and the KV cache's pages: a GPU keeps 0.69 GiB for itself unless told
 * otherwise, an SRAM-first device nothing; a context that is not a whole number of pages holds
 * whole pages (2049 tokens in pages of 16: 2064). */
Test(plan, runtime_reserve_and_kv_pages)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_params p;
    ffn_plan_opts o;
    one_device("h100-sxm", "llama2-7b", &hw, &m, &p, &o);
    const ffn_plan_shape one = {1, 1, 1, 1};
    ffn_plan_mem a, b;
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 4, 2048, 0, &a), 0);
    cr_assert_float_eq(a.usable_bytes, hw.mem_capacity_bytes * 0.9 - 0.69 * 1073741824, 1);
    o.reserve_bytes = 4.0 * 1073741824;
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 4, 2048, 0, &b), 0);
    cr_assert_float_eq(b.usable_bytes, hw.mem_capacity_bytes * 0.9 - 4.0 * 1073741824, 1);
    o.reserve_bytes = -1;
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 4, 2049, 0, &b), 0);
    cr_assert_float_eq(b.kv_bytes_per_seq, a.kv_bytes_per_seq * 2064.0 / 2048.0, 1e-6);
    o.kv_page_tokens = 1;
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 4, 2049, 0, &b), 0);
    cr_assert_float_eq(b.kv_bytes_per_seq, a.kv_bytes_per_seq * 2049.0 / 2048.0, 1e-6);
    load_hw("cerebras-wse3", &hw);
    cr_assert_eq(ffn_plan_reserve_bytes(&o, &hw), 0.0);
}

/* Sliding-window layers cache their window at most and attend to it (gpt-oss-120b: 18 of 36
 * layers on 128 tokens). A token's K and V in one layer: 8 heads x 64 x 2 x 2 bytes = 2048; a
 * sequence of 4096 cached tokens holds 18 x 4096 + 18 x 128 token-layers, not 36 x 4096; the
 * decode step reads that cache, and its attention costs less than the same model's without the
 * window and more than half of it (the 18 full layers' share, the window layers' kernels not
 * free). */
Test(plan, sliding_window_layers_cache_and_read_their_window)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_params p;
    ffn_plan_opts o;
    one_device("h100-sxm", "gpt-oss-120b", &hw, &m, &p, &o);
    o.kv_page_tokens = 16;
    const ffn_plan_shape one = {1, 1, 1, 1};
    ffn_plan_mem a;
    cr_assert_eq(ffn_plan_memory(&m, &p, &hw, &o, &one, 1, 4096, 0, &a), 0);
    cr_expect_float_eq(a.kv_bytes_per_token_layer, 2048.0, 1e-9);
    cr_expect_float_eq(a.kv_bytes_per_seq, (18.0 * 4096 + 18.0 * 128) * 2048.0, 1e-3);
    ffn_plan_step w, full;
    ffn_diag d;
    cr_assert_eq(ffn_plan_step_eval(&m, &hw, &o, FFN_PHASE_DECODE, &one, 8, 4096, &w, &d), 0, "%s",
                 d.msg);
    cr_expect_float_eq(w.kv_read_bytes, (18.0 * 4096 + 18.0 * 128) * 8 * 2048.0, 1e-3);
    ffn_model nw = m;
    nw.attn.window = nw.attn.window_layers = 0;
    cr_assert_eq(ffn_plan_step_eval(&nw, &hw, &o, FFN_PHASE_DECODE, &one, 8, 4096, &full, &d), 0,
                 "%s", d.msg);
    cr_expect_float_eq(full.kv_read_bytes, 36.0 * 4096 * 8 * 2048.0, 1e-3);
    cr_expect_lt(w.attn_core_s, 0.9 * full.attn_core_s, "%g vs %g", w.attn_core_s,
                 full.attn_core_s);
    cr_expect_gt(w.attn_core_s, 0.5 * full.attn_core_s, "%g vs %g", w.attn_core_s,
                 full.attn_core_s);
}

/* A checkpoint that quantises its routed experts only (gpt-oss's MXFP4): under a narrow weight
 * dtype the attention stays at 2 bytes a weight, the experts take the narrow format's bytes;
 * the same model with every linear layer quantised puts the attention in the narrow format. */
Test(plan, quantized_experts_only_keeps_the_rest_16_bit)
{
    static ffn_model m;
    load_model("gpt-oss-120b", &m);
    cr_assert(m.quantized_experts_only);
    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    double ffn_b, other_b, ffn_all, other_all;
    ffn_weight_footprint(&m, &p, FFN_DT_MXFP4, 128, false, 1, 1, &ffn_b, &other_b);
    const double rest = (double)(p.embedding + p.router + p.norm + p.other);
    cr_expect_float_eq(other_b, ((double)p.attention + rest) * 2.0, 1e-3, "%g", other_b);
    m.quantized_experts_only = false;
    ffn_weight_footprint(&m, &p, FFN_DT_MXFP4, 128, false, 1, 1, &ffn_all, &other_all);
    cr_expect_eq(ffn_all, ffn_b, "the experts are quantised either way");
    cr_expect_lt(other_all, other_b - 1.0 * (double)p.attention, "%g vs %g", other_all, other_b);
}

/* MLA's down-projections to the query and KV latents are held whole on every tensor-parallel
 * rank (vLLM's fused_qkv_a_proj with disable_tp; SGLang's ReplicatedLinear): at TP 8 a device
 * holds 7/8 of them more than an even split, and the decode step reads them. */
Test(plan, mla_down_projections_are_replicated)
{
    static ffn_model m;
    load_model("deepseek-v3", &m);
    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    cr_assert_eq(p.attention_replicated, 61ull * 15140864);
    ffn_params split = p;
    split.attention_replicated = 0;
    double f1, o1, f0, o0;
    ffn_weight_footprint(&m, &p, FFN_DT_BF16, 128, false, 8, 1, &f1, &o1);
    ffn_weight_footprint(&m, &split, FFN_DT_BF16, 128, false, 8, 1, &f0, &o0);
    cr_expect_eq(f1, f0, "the FFN weights do not move");
    cr_expect_float_eq(o1 - o0, (double)p.attention_replicated * 7.0 / 8.0 * 2.0, 1.0, "%g",
                       o1 - o0);
    /* at TP 1 nothing is split, so nothing changes */
    ffn_weight_footprint(&m, &p, FFN_DT_BF16, 128, false, 1, 1, &f1, &o1);
    ffn_weight_footprint(&m, &split, FFN_DT_BF16, 128, false, 1, 1, &f0, &o0);
    cr_expect_float_eq(o1, o0, 1.0, "%g vs %g", o1, o0);
}

/* The attention block of an MLA model beyond its core, by hand on the ideal roofline (the
 * hand-worked setting: no launch cost, all bytes at the datasheet bandwidth): DeepSeek-V2-Lite
 * (d 2048, 16 heads, no query compression, KV latent 512, rope 64, nope 128, v 128, 27 layers)
 * decoding 4 sequences at TP 1 in bf16. Per layer the elementwise kernels move two fused
 * add+norms 2 x 4 T d b, the KV latent's norm 2 T 512 b and the rotary embedding of the query
 * heads' and the shared key's rope parts 2 T (16 + 1) 64 b; the projections read their weights
 * (the query projection d x 16 (128 + 64), the KV down-projection d x (512 + 64), the absorbed
 * products 16 x 128 x 512 twice, the output projection 16 x 128 x d) and move their inputs and
 * outputs. */
Test(plan, mla_projections_and_norms_by_hand)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_plan_opts o;
    hand_worked(&hw, &m, &o);
    load_model("deepseek-v2-lite", &m);
    ffn_params p;
    cr_assert_eq(ffn_model_params(&m, &p), 0);
    const ffn_plan_shape one = {1, 1, 1, 1};
    ffn_plan_step st;
    ffn_diag d;
    cr_assert_eq(ffn_plan_step_eval(&m, &hw, &o, FFN_PHASE_DECODE, &one, 4, 1024, &st, &d), 0, "%s",
                 d.msg);
    const double T = 4, D = 2048, b = 2, L = 27, bw = hw.mem_bandwidth_bps;
    const double elem = L * (2 * 4 * T * D * b + 2 * T * 512 * b + 2 * T * 17 * 64 * b) / bw;
    cr_expect_float_eq(st.elem_s, elem, 1e-9 * elem, "%.9g vs %.9g", st.elem_s, elem);
    const double w = D * 16 * 192 + D * 576 + 2 * 16 * 128 * 512.0 + 16 * 128 * D;
    const double acts =
        T * (D + 16 * 192) + T * (D + 576) + 16 * T * (128 + 512) * 2 + T * (16 * 128 + D);
    const double proj = L * (w + acts) * b / bw;
    cr_expect_float_eq(st.attn_proj_s, proj, 1e-6 * proj, "%.9g vs %.9g", st.attn_proj_s, proj);
    /* without RoPE (learned positions) the rotary kernel goes */
    m.pos = FFN_POS_LEARNED;
    cr_assert_eq(ffn_plan_step_eval(&m, &hw, &o, FFN_PHASE_DECODE, &one, 4, 1024, &st, &d), 0, "%s",
                 d.msg);
    const double no_rope = elem - L * 2 * T * 17 * 64 * b / bw;
    cr_expect_float_eq(st.elem_s, no_rope, 1e-9 * no_rope, "%.9g vs %.9g", st.elem_s, no_rope);
}

/* MLA's prompt chunks up-project their prompt's earlier tokens again (kv_b of the cached latent):
 * one GEMM of [T, kv_lora_rank] x [kv_lora_rank, heads x (nope + v)], on the ideal roofline its
 * weights and activations over the bandwidth; nothing for a model without MLA. */
Test(plan, mla_prefix_up_projection_by_hand)
{
    static ffn_hw hw;
    static ffn_model m;
    ffn_plan_opts o;
    hand_worked(&hw, &m, &o);
    double s = -1;
    cr_assert_eq(ffn_plan_mla_prefix_s(&m, &hw, &o, 1, 64, &s), 0);
    cr_expect_eq(s, 0.0, "a GQA model re-projects nothing: %g", s);
    load_model("deepseek-v2-lite", &m);
    const double T = 64, b = 2, bw = hw.mem_bandwidth_bps;
    for (uint64_t tp = 1; tp <= 2; tp++) {
        const double n = 16.0 / (double)tp * (128 + 128);
        const double want = (512 * n + T * 512 + T * n) * b / bw;
        cr_assert_eq(ffn_plan_mla_prefix_s(&m, &hw, &o, tp, 64, &s), 0);
        cr_expect_float_eq(s, want, 1e-6 * want, "tp %llu: %.9g vs %.9g", (unsigned long long)tp, s,
                           want);
    }
    cr_assert_eq(ffn_plan_mla_prefix_s(&m, &hw, &o, 1, 0, &s), 0);
    cr_expect_eq(s, 0.0);
}
