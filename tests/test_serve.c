/* The serving simulation (sim/serve_step.c, sim/serve.c): a hand-worked mixed step, Little's law
 * on the steady states, the curve monotone in the concurrency, offline token accounting, an
 * unstable rate said as such, speculative decoding, data-parallel ranks scheduling their own
 * budgets or sharing one, MLA chunks paying for their prefix, the engines' admission and
 * preemption, pages by chunk, prompts apart from decodes, bad workloads refused, and the engines'
 * scheduler defaults as engines.yaml gives them.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/attention.h"
#include "ffnroof/engine.h"
#include "ffnroof/engine_load.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"
#include "ffnroof/plan.h"
#include "ffnroof/serve.h"

#define ENGINES FFNROOF_SOURCE_DIR "/hw/arch/engines.yaml"

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

static ffn_hw hw;
static ffn_model model;

/* A replica of `model` on `hw` with layout (tp, dp, ep), vLLM's scheduler defaults. */
static void replica(ffn_serve_ctx *c, ffn_serve_opts *o, uint64_t tp, uint64_t dp, uint64_t ep)
{
    ffn_plan_opts po;
    ffn_plan_opts_default(&po);
    ffn_serve_opts_default(o);
    o->sched = (ffn_engine_sched){.set = true,
                                  .max_batched_tokens = 8192,
                                  .max_seqs = 1024,
                                  .page_tokens = 16,
                                  .step_overhead_s = 0.5e-3};
    o->shape = (ffn_plan_shape){tp, dp, ep, 1};
    ffn_diag d;
    const uint64_t maxtok = (8192 + 1024 * 17) * dp;
    cr_assert_eq(ffn_serve_ctx_init(c, &model, &hw, &po, &o->shape, maxtok, &d), 0, "%s", d.msg);
}

static double rel(double a, double b)
{
    return fabs(a / b - 1.0);
}

/* docs/plan.md "A hand-worked engine step": LLaMA-2-7B on an H100 SXM with the efficiency model
 * switched off (the ideal roofline). Four sequences decode at 1000 cached tokens each beside a
 * 96-token prompt whose last chunk is in the step: 100 tokens. */
Test(serve, hand_worked_mixed_step)
{
    load_hw("h100-sxm", &hw);
    load_model("llama2-7b", &model);
    memset(&hw.eff, 0, sizeof hw.eff);
    hw.eff.compute_max = 1.0;
    hw.eff.memory_max = 1.0;
    /* the fitted attention kernels and collectives are efficiency models too */
    memset(&hw.attn, 0, sizeof hw.attn);
    memset(&hw.scaleup.coll, 0, sizeof hw.scaleup.coll);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    ffn_serve_batch b = {.decode_seqs = 4,
                         .decode_ctx = 4000,
                         .prefill_seqs = 1,
                         .prefill_tokens = 96,
                         .prefill_pairs = 96.0 * 97.0 / 2.0,
                         .logits = 5};
    ffn_serve_step st;
    ffn_diag d;
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &st, &d), 0, "%s", d.msg);

    /* the token-count parts: the plan's prefill step of the 100 tokens without its attention
     * core and LM head */
    ffn_plan_step ps;
    ffn_plan_opts po;
    ffn_plan_opts_default(&po);
    po.kv_page_tokens = 16;
    const ffn_plan_shape one = {1, 1, 1, 1};
    cr_assert_eq(ffn_plan_step_eval(&model, &hw, &po, FFN_PHASE_PREFILL, &one, 1, 100, &ps, &d), 0);
    cr_expect_lt(rel(st.gemm_s, ps.ffn_s + ps.attn_proj_s + ps.elem_s), 1e-12, "%g vs %g",
                 st.gemm_s, ps.ffn_s + ps.attn_proj_s + ps.elem_s);

    /* attention, by hand: 32 heads of 128, 32 KV heads, bf16: a token's K and V in one layer
     * are 2 x 32 x 128 x 2 = 16384 bytes. Decode: QK^T and PV over 4000 cached tokens, 2 FLOPs
     * a multiply-add, 32 x 256 per token: 65,536,000 FLOPs; the cache (65,536,000 bytes) plus
     * the 4 queries and outputs (4 x 32 x 256 x 2 = 65,536 bytes). Prefill: 96 x 97 / 2 = 4656
     * scored pairs, 2 x 4656 x 32 x 256 = 76,283,904 FLOPs; 96 tokens of K, V, Q and output
     * cross memory once: 96 x (16384 + 16384) = 3,145,728 bytes. */
    const double P = hw.peak_flops[FFN_DT_BF16], B = hw.mem_bandwidth_bps;
    const double dec = fmax(65536000.0 / P, (65536000.0 + 65536.0) / B);
    const double pre = fmax(76283904.0 / P, 3145728.0 / B);
    cr_expect_lt(rel(st.attn_s, 32.0 * (dec + pre)), 1e-12, "%g vs %g", st.attn_s,
                 32.0 * (dec + pre));
    /* the LM head for the 5 sequences that produce a token: 32000 x 4096 weights in bf16, read
     * once; 2 FLOPs a weight a token; fp32 logits written */
    const double Pe = 32000.0 * 4096.0;
    const double head =
        fmax(2.0 * 5.0 * Pe / P, (2.0 * Pe + 5.0 * 32000.0 * 4.0 + 5.0 * 4096.0 * 2.0) / B);
    cr_expect_lt(rel(st.lm_head_s, head), 1e-12, "%g vs %g", st.lm_head_s, head);
    cr_expect_eq(st.overhead_s, 0.5e-3);
    cr_expect_lt(rel(st.step_s, st.gemm_s + st.attn_s + st.lm_head_s + 0.5e-3), 1e-12);
    /* the host's share per running sequence: 5 sequences in the step */
    o.sched.seq_overhead_s = 100e-6;
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &st, &d), 0, "%s", d.msg);
    cr_expect_lt(rel(st.overhead_s, 0.5e-3 + 5 * 100e-6), 1e-12, "%g", st.overhead_s);
    /* the engine's flop term: LLaMA-2-7B's projections (32 layers of 4 x 4096 x 4096) and FFN
     * (32 x 3 x 4096 x 11008) are 6,476,005,376 weights, 2 FLOPs each for each of the 100
     * tokens, at the rate of the device's large bf16 GEMMs (the bf16 peak, the efficiency model
     * being off), x 0.5; added to the GEMMs and nothing else */
    const double gemm0 = st.gemm_s, attn0 = st.attn_s;
    o.sched.flop_overhead = 0.5;
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &st, &d), 0, "%s", d.msg);
    const double flop = 0.5 * 2.0 * 100.0 * 6476005376.0 / P;
    cr_expect_lt(rel(st.flop_s, flop), 1e-12, "%g vs %g", st.flop_s, flop);
    cr_expect_lt(rel(st.gemm_s, gemm0 + flop), 1e-12, "%g vs %g", st.gemm_s, gemm0 + flop);
    cr_expect_eq(st.attn_s, attn0);
    /* ... and at half that rate where the spec's large GEMMs reach half the peak */
    hw.eff.util_gamma[FFN_DT_BF16] = 0.5;
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &st, &d), 0, "%s", d.msg);
    cr_expect_lt(rel(st.flop_s, 2.0 * flop), 1e-12, "%g vs %g", st.flop_s, 2.0 * flop);
    ffn_serve_ctx_free(&c);
}

/* Closed loop: exactly C requests are in the system at every moment, and Little's law - the
 * completions per second times the mean time in the system - gives C back. */
Test(serve, littles_law_closed_loop)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    o.isl = 512;
    o.osl = 128;
    o.isl_spread = o.osl_spread = 0.5;
    for (double C = 4; C <= 256; C *= 4) {
        o.concurrency = C;
        ffn_serve_result r;
        ffn_diag d;
        cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
        cr_expect_lt(rel(r.mean_in_system, C), 1e-9, "C %g: %g in the system", C, r.mean_in_system);
        cr_expect_lt(rel(r.little_in_system, C), 0.05, "C %g: X x W = %g", C, r.little_in_system);
        cr_expect_leq(r.mean_running, C + 1e-9);
        cr_expect(r.stable);
    }
    ffn_serve_ctx_free(&c);
}

/* Open loop below capacity: the time-averaged requests in the system match the arrival rate
 * times the mean time in the system, and the replica serves what arrives. */
Test(serve, littles_law_open_loop)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    o.mode = FFN_SERVE_RATE;
    o.rate = 10;
    o.requests = 2000;
    ffn_serve_result r;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
    cr_expect(r.stable);
    cr_expect_lt(rel(r.requests_per_s, o.rate), 0.1, "serves %g of %g req/s", r.requests_per_s,
                 o.rate);
    cr_expect_lt(rel(r.mean_in_system, r.little_in_system), 0.1, "L %g vs X W %g", r.mean_in_system,
                 r.little_in_system);
    cr_expect_lt(rel(r.output_tokens_per_s, o.rate * (double)o.osl), 0.1);
    ffn_serve_ctx_free(&c);
}

/* More clients never serve fewer tokens per device, and each one's tokens come no faster. */
Test(serve, curve_monotone_in_concurrency)
{
    load_hw("h200", &hw);
    load_model("llama3-70b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 4, 1, 1);
    double tps = 0, tpot = 0;
    for (double C = 1; C <= 512; C *= 2) {
        o.concurrency = C;
        ffn_serve_result r;
        ffn_diag d;
        cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
        cr_expect_geq(r.output_tokens_per_s_device, tps * 0.999, "C %g: %g < %g", C,
                      r.output_tokens_per_s_device, tps);
        cr_expect_geq(r.tpot_p50_s, tpot * 0.999, "C %g: TPOT %g < %g", C, r.tpot_p50_s, tpot);
        tps = r.output_tokens_per_s_device;
        tpot = r.tpot_p50_s;
    }
    ffn_serve_ctx_free(&c);
}

/* LLaMA-3-8B on one H100 SXM, `requests` of isl + osl tokens queued at once. */
static void offline_8b(ffn_serve_ctx *c, ffn_serve_opts *o, uint64_t requests, uint64_t isl,
                       uint64_t osl)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    replica(c, o, 1, 1, 1);
    o->mode = FFN_SERVE_OFFLINE;
    o->requests = requests;
    o->isl = isl;
    o->osl = osl;
}

/* Offline: every output token of every request is counted once over the makespan. */
Test(serve, offline_counts_every_token)
{
    ffn_serve_ctx c;
    ffn_serve_opts o;
    offline_8b(&c, &o, 300, 200, 300);
    ffn_serve_result r;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
    cr_expect_lt(rel(r.output_tokens_per_s * r.window_s, 300.0 * 300.0), 1e-9);
    cr_expect_lt(rel(r.total_tokens_per_s * r.window_s, 300.0 * 500.0), 1e-9);
    cr_expect_lt(rel(r.requests_per_s * r.window_s, 300.0), 1e-9);
    ffn_serve_ctx_free(&c);
}

/* ShareGPT-like lengths: the means asked for, and a long tail the uniform law has not (offline,
 * the longest requests decode on after the rest: a longer makespan than a uniform spread of 0.9
 * about the same means gives); means beyond the benchmarks' limits (prompts <= 1024, requests
 * <= 2048) refused. */
Test(serve, sharegpt_lengths_keep_their_means_and_tail)
{
    ffn_serve_ctx c;
    ffn_serve_opts o;
    offline_8b(&c, &o, 2000, 217, 200);
    o.sharegpt_lengths = true;
    ffn_serve_result r;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
    const double n = r.requests_per_s * r.window_s, out = r.output_tokens_per_s * r.window_s,
                 in = r.total_tokens_per_s * r.window_s - out;
    cr_expect_lt(rel(n, 2000.0), 1e-9);
    /* the mean of 2000 draws of an exponential law is within 3 standard errors (6.7%) */
    cr_expect_lt(rel(in / n, 217.0), 0.067, "mean prompt %g", in / n);
    cr_expect_lt(rel(out / n, 200.0), 0.067, "mean output %g", out / n);
    /* the last request to finish decodes alone for a while: the makespan is longer than the
     * same means drawn uniformly within 0.9 of them */
    ffn_serve_opts u = o;
    u.sharegpt_lengths = false;
    u.isl_spread = u.osl_spread = 0.9;
    ffn_serve_result ru;
    cr_assert_eq(ffn_serve_run(&c, &u, &ru, &d), 0, "%s", d.msg);
    cr_expect_gt(r.window_s, 1.2 * ru.window_s, "%g vs %g s", r.window_s, ru.window_s);
    ffn_serve_opts x = o;
    x.isl = 500;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "ShareGPT") && strstr(d.msg, "1024"), "%s", d.msg);
    x = o;
    x.osl_spread = 0.5;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "spread"), "%s", d.msg);
    ffn_serve_ctx_free(&c);
}

/* Admission (docs/plan.md "Admission"): on a KV cache too small for the load, holding the whole
 * output at admission (TensorRT-LLM's) never preempts; holding none of it (vLLM's) admits more
 * sequences and preempts the newest as they grow; SGLang's decaying share lies between. Each
 * counts every output token once and every prompt token once as input, recomputation not. */
Test(serve, kv_admission_and_preemption)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    c.kv_tokens = 20000; /* a small cache: 40 requests of 500 tokens */
    o.mode = FFN_SERVE_OFFLINE;
    o.requests = 200;
    o.isl = 100;
    o.osl = 400;
    ffn_serve_result full, none, sg;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &full, &d), 0, "%s", d.msg);
    ffn_serve_opts x = o;
    x.sched.kv_grow = true;
    cr_assert_eq(ffn_serve_run(&c, &x, &none, &d), 0, "%s", d.msg);
    x.sched.reserve_output = 0.7;
    x.sched.reserve_output_min = 0.098;
    x.sched.reserve_decay_steps = 600;
    x.sched.reserve_retract_steps = 20;
    cr_assert_eq(ffn_serve_run(&c, &x, &sg, &d), 0, "%s", d.msg);
    cr_expect_eq(full.preemptions, 0);
    cr_expect_leq(full.mean_running, 40.0 + 1e-9);
    cr_expect_gt(none.preemptions, 0);
    cr_expect_gt(none.mean_running, full.mean_running, "%g vs %g", none.mean_running,
                 full.mean_running);
    cr_expect_gt(sg.mean_running, full.mean_running, "%g vs %g", sg.mean_running,
                 full.mean_running);
    const ffn_serve_result *all[] = {&full, &none, &sg};
    for (int i = 0; i < 3; i++) {
        cr_expect_lt(rel(all[i]->output_tokens_per_s * all[i]->window_s, 200.0 * 400.0), 1e-9);
        cr_expect_lt(rel(all[i]->total_tokens_per_s * all[i]->window_s, 200.0 * 500.0), 1e-9);
        cr_expect_lt(rel(all[i]->requests_per_s * all[i]->window_s, 200.0), 1e-9);
    }
    ffn_serve_ctx_free(&c);
}

/* Pages by chunk (vLLM's V1 scheduler): prompts longer than the step's budget enter when their
 * first chunk fits and take pages chunk by chunk, so on a cache too small for the prompts in
 * flight more of them start and later chunks preempt the newest, which recompute their prompts:
 * more preemptions and less throughput than entering only when the whole prompt fits, with the
 * same tokens counted. */
Test(serve, kv_pages_by_chunk_preempt_long_prompts)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    c.kv_tokens = 60000; /* two 24,000-token requests, and room for a third's first chunks */
    o.mode = FFN_SERVE_OFFLINE;
    o.requests = 20;
    o.isl = 24000;
    o.osl = 50;
    o.sched.kv_grow = true;
    o.sched.reserve_output = 0;
    ffn_serve_result whole, chunk;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &whole, &d), 0, "%s", d.msg);
    o.sched.kv_by_chunk = true;
    cr_assert_eq(ffn_serve_run(&c, &o, &chunk, &d), 0, "%s", d.msg);
    cr_expect_gt(chunk.preemptions, whole.preemptions, "%g vs %g", (double)chunk.preemptions,
                 (double)whole.preemptions);
    cr_expect_lt(chunk.total_tokens_per_s, whole.total_tokens_per_s, "%g vs %g",
                 chunk.total_tokens_per_s, whole.total_tokens_per_s);
    /* with a prefix cache (vLLM's) a preempted prompt re-enters from its pages still cached:
     * the same work is asked for and less of it is done again */
    ffn_serve_result cached;
    o.sched.prefix_cache = true;
    cr_assert_eq(ffn_serve_run(&c, &o, &cached, &d), 0, "%s", d.msg);
    o.sched.prefix_cache = false;
    cr_expect_gt(cached.preemptions, 0);
    cr_expect_gt(cached.total_tokens_per_s, chunk.total_tokens_per_s, "%g vs %g",
                 cached.total_tokens_per_s, chunk.total_tokens_per_s);
    const ffn_serve_result *all[] = {&whole, &chunk, &cached};
    for (int i = 0; i < 3; i++) {
        cr_expect_lt(rel(all[i]->output_tokens_per_s * all[i]->window_s, 20.0 * 50.0), 1e-9);
        cr_expect_lt(rel(all[i]->total_tokens_per_s * all[i]->window_s, 20.0 * 24050.0), 1e-9);
    }
    /* a cache that holds every prompt in flight: the two rules schedule alike */
    c.kv_tokens = 1e7;
    o.sched.kv_by_chunk = false;
    cr_assert_eq(ffn_serve_run(&c, &o, &whole, &d), 0, "%s", d.msg);
    o.sched.kv_by_chunk = true;
    cr_assert_eq(ffn_serve_run(&c, &o, &chunk, &d), 0, "%s", d.msg);
    cr_expect_lt(rel(chunk.total_tokens_per_s, whole.total_tokens_per_s), 1e-9);
    ffn_serve_ctx_free(&c);
}

/* Prompts apart from decodes (SGLang's default): with prompt chunks in the decode steps every
 * running sequence decodes every step, its TPOT one step; with prompts in steps of their own, a
 * step that computes a prompt holds the decodes back. Steps of 1 s of engine overhead (the
 * GPU's few milliseconds beside it), two clients, prompts of 4 tokens under a budget of 6: the
 * second prompt's last chunk runs alone, and the first request's 3 decode intervals take 4
 * steps. */
Test(serve, prefill_apart_holds_decodes_back)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-8b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 1, 1);
    o.sched.step_overhead_s = 1.0;
    o.sched.max_batched_tokens = 6;
    o.concurrency = 2;
    o.requests = 10;
    o.isl = 4;
    o.osl = 4;
    ffn_serve_result mixed, apart;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &mixed, &d), 0, "%s", d.msg);
    o.sched.prefill_apart = true;
    cr_assert_eq(ffn_serve_run(&c, &o, &apart, &d), 0, "%s", d.msg);
    cr_expect_lt(rel(mixed.tpot_p90_s, mixed.tpot_p50_s), 0.02, "%g %g", mixed.tpot_p50_s,
                 mixed.tpot_p90_s);
    cr_expect_lt(rel(mixed.tpot_p90_s, 1.0), 0.02, "%g", mixed.tpot_p90_s);
    cr_expect_gt(apart.tpot_p90_s, 1.3, "%g", apart.tpot_p90_s);
    ffn_serve_ctx_free(&c);
}

/* A rate beyond what the replica serves is an answer that says so, with the queue's growth. */
Test(serve, a_rate_beyond_capacity_is_unstable)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-70b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 4, 1, 1);
    o.mode = FFN_SERVE_RATE;
    o.rate = 200;
    ffn_serve_result r;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &r, &d), 0, "%s", d.msg);
    cr_expect(!r.stable);
    cr_expect_gt(r.queue_growth, 0.5 * (o.rate - r.requests_per_s), "growth %g, serves %g",
                 r.queue_growth, r.requests_per_s);
    cr_expect_lt(r.requests_per_s, o.rate / 2);
    ffn_serve_ctx_free(&c);
}

/* Speculative decoding: one draft token accepted often enough makes a lone user faster; one
 * never accepted only costs. */
Test(serve, speculation_pays_only_when_accepted)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-70b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 4, 1, 1);
    ffn_serve_result off, good, bad;
    ffn_diag d;
    cr_assert_eq(ffn_serve_run(&c, &o, &off, &d), 0, "%s", d.msg);
    o.spec_tokens = 1;
    o.spec_accept = 1.8;
    cr_assert_eq(ffn_serve_run(&c, &o, &good, &d), 0, "%s", d.msg);
    o.spec_accept = 1.0;
    cr_assert_eq(ffn_serve_run(&c, &o, &bad, &d), 0, "%s", d.msg);
    cr_expect_gt(good.user_tokens_per_s, 1.3 * off.user_tokens_per_s, "%g vs %g",
                 good.user_tokens_per_s, off.user_tokens_per_s);
    cr_expect_lt(bad.user_tokens_per_s, off.user_tokens_per_s);
    ffn_serve_ctx_free(&c);
}

/* Each attention-DP rank schedules its own token budget: two ranks run steps of more tokens
 * than one rank's budget. */
Test(serve, data_parallel_ranks_have_their_own_budgets)
{
    load_hw("h200", &hw);
    load_model("qwen3-30b-a3b", &model);
    ffn_serve_ctx c1, c2;
    ffn_serve_opts o1, o2;
    replica(&c1, &o1, 1, 1, 1);
    replica(&c2, &o2, 1, 2, 2);
    ffn_serve_result r1, r2;
    ffn_diag d;
    o1.sched.max_batched_tokens = o2.sched.max_batched_tokens = 256;
    o1.mode = o2.mode = FFN_SERVE_OFFLINE;
    o1.requests = o2.requests = 200;
    o1.isl = o2.isl = 2048;
    o1.osl = o2.osl = 16;
    cr_assert_eq(ffn_serve_run(&c1, &o1, &r1, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_serve_run(&c2, &o2, &r2, &d), 0, "%s", d.msg);
    cr_expect_lt(r1.mean_step_tokens, 256 + 64, "one rank: %g", r1.mean_step_tokens);
    cr_expect_gt(r2.mean_step_tokens, 300, "two ranks: %g", r2.mean_step_tokens);
    /* SGLang's DP attention splits one budget over the ranks (budget_over_dp): the two ranks'
     * steps hold no more prompt tokens than the one rank's */
    cr_expect_eq(ffn_serve_budget(&o2, 2), 512);
    o2.sched.budget_over_dp = true;
    cr_expect_eq(ffn_serve_budget(&o2, 2), 256);
    cr_expect_eq(ffn_serve_budget(&o2, 300), 300, "at least a token a rank");
    ffn_serve_result r3;
    cr_assert_eq(ffn_serve_run(&c2, &o2, &r3, &d), 0, "%s", d.msg);
    cr_expect_lt(r3.mean_step_tokens, 256 + 64, "two ranks sharing: %g", r3.mean_step_tokens);
    cr_expect_lt(r3.total_tokens_per_s, r2.total_tokens_per_s, "%g vs %g", r3.total_tokens_per_s,
                 r2.total_tokens_per_s);
    ffn_serve_ctx_free(&c1);
    ffn_serve_ctx_free(&c2);
}

Test(serve, bad_workloads_are_refused)
{
    load_hw("h100-sxm", &hw);
    load_model("llama3-70b", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 2, 1, 1);
    ffn_serve_result r;
    ffn_diag d;
    ffn_serve_opts x = o;
    x.concurrency = 0;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "concurrency"), "%s", d.msg);
    x = o;
    x.isl = 1u << 30;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "does not fit"), "%s", d.msg);
    x = o;
    x.isl_spread = 1.0;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "spread"), "%s", d.msg);
    x = o;
    x.spec_tokens = 1;
    x.spec_accept = 2.5;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    x = o;
    x.mode = FFN_SERVE_RATE;
    x.rate = 0;
    cr_expect_eq(ffn_serve_run(&c, &x, &r, &d), FFN_EINVAL);
    ffn_serve_ctx_free(&c);
    /* a layout the model cannot take */
    ffn_plan_opts po;
    ffn_plan_opts_default(&po);
    ffn_plan_shape s = {3, 1, 1, 1};
    cr_expect_eq(ffn_serve_ctx_init(&c, &model, &hw, &po, &s, 8192, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "TP 3 does not divide"), "%s", d.msg);
    s = (ffn_plan_shape){1, 1, 1, 81};
    cr_expect_eq(ffn_serve_ctx_init(&c, &model, &hw, &po, &s, 8192, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "pipeline stages"), "%s", d.msg);
}

/* An MLA model's prompt chunk pays the up-projection of its prompt's earlier tokens, each DP
 * rank its own share of them, beside what the same step costs without them. */
Test(serve, mla_chunks_up_project_their_prefix)
{
    load_hw("h100-sxm", &hw);
    load_model("deepseek-v2-lite", &model);
    ffn_serve_ctx c;
    ffn_serve_opts o;
    replica(&c, &o, 1, 2, 2);
    ffn_serve_batch b = {.prefill_seqs = 2, .prefill_tokens = 1024, .prefill_pairs = 1024.0 * 1536};
    ffn_serve_step s0, s1;
    ffn_diag d;
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &s0, &d), 0, "%s", d.msg);
    cr_expect_eq(s0.prefix_s, 0.0);
    b.prefill_prefix = 2048; /* two prompts with 1024 tokens each done before */
    cr_assert_eq(ffn_serve_step_eval(&c, &o, &b, &s1, &d), 0, "%s", d.msg);
    ffn_plan_opts po;
    ffn_plan_opts_default(&po);
    double up;
    cr_assert_eq(ffn_plan_mla_prefix_s(&model, &hw, &po, 1, 1024, &up), 0);
    cr_expect_float_eq(s1.prefix_s, 27 * up, 1e-9 * up, "%g vs %g", s1.prefix_s, 27 * up);
    cr_expect_float_eq(s1.gemm_s - s0.gemm_s, s1.prefix_s, 1e-6 * s1.prefix_s);
    ffn_serve_ctx_free(&c);
}

/* engines.yaml: every engine has a scheduler; vLLM's budget is smaller on an A100 and SGLang's
 * larger on a B200, as their releases pick. */
Test(serve, engine_schedulers_as_shipped)
{
    ffn_engine_profile p;
    ffn_diag d;
    for (int e = FFN_ENGINE_VLLM; e <= FFN_ENGINE_TRTLLM; e++) {
        cr_assert_eq(ffn_engine_load(ENGINES, (ffn_engine)e, &p, &d), 0, "%s", d.msg);
        cr_expect(p.sched.set, "%s", ffn_engine_name((ffn_engine)e));
        cr_expect_geq(p.sched.max_batched_tokens, 1024);
        cr_expect_gt(p.sched.step_overhead_s, 0);
        cr_expect_gt(p.sched.seq_overhead_s, 0);
        cr_expect_gt(p.sched.flop_overhead, 0);
        cr_expect(p.sched.range_p10 < 1 && p.sched.range_p90 > 1);
    }
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_VLLM, &p, &d), 0);
    cr_expect_eq(ffn_engine_sched_for(&p.sched, "a100-sxm-80gb").max_batched_tokens, 2048);
    cr_expect_eq(ffn_engine_sched_for(&p.sched, "h100-sxm").max_batched_tokens, 8192);
    cr_expect(p.sched.kv_grow && p.sched.reserve_output == 0 && !p.sched.prefill_apart &&
              p.sched.kv_by_chunk && !p.sched.budget_over_dp && p.sched.prefix_cache);
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_SGLANG, &p, &d), 0);
    cr_expect_eq(ffn_engine_sched_for(&p.sched, "b200").max_batched_tokens, 16384);
    cr_expect_eq(ffn_engine_sched_for(&p.sched, "h200").max_batched_tokens, 8192);
    cr_expect(p.sched.kv_grow && p.sched.prefill_apart && !p.sched.kv_by_chunk &&
              p.sched.budget_over_dp);
    cr_expect(p.sched.reserve_output_min < p.sched.reserve_output &&
              p.sched.reserve_decay_steps > 0);
    cr_assert_eq(ffn_engine_load(ENGINES, FFN_ENGINE_TRTLLM, &p, &d), 0);
    cr_expect(!p.sched.kv_grow && !p.sched.prefill_apart);
}

static int load_text(const char *text, ffn_diag *d)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/ffnroof-sched-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    ffn_engine_profile p;
    const int rc = ffn_engine_load(path, FFN_ENGINE_VLLM, &p, d);
    unlink(path);
    return rc;
}

Test(serve, bad_scheduler_blocks_are_refused_at_their_line)
{
    ffn_diag d;
    cr_expect_eq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                           "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n",
                           &d),
                 FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "'source'") && d.line == 4, "%d %s", d.line, d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 81.5\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                            "    source: y\n",
                            &d),
                  0);
    cr_expect(strstr(d.msg, "whole number") && d.line == 4, "%d %s", d.line, d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 2 s\n"
                            "    source: y\n",
                            &d),
                  0);
    cr_expect_eq(d.line, 7, "%d %s", d.line, d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                            "    devices:\n      h100: {budget: 3}\n    source: y\n",
                            &d),
                  0);
    cr_expect(strstr(d.msg, "budget") && d.line == 9, "%d %s", d.line, d.msg);
    cr_expect_eq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                           "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                           "    devices:\n      h100: {max_seqs: 3}\n    source: y\n",
                           &d),
                 0, "%s", d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                            "    reserve_output: 0.5\n    reserve_output_min: 0.7\n    source: y\n",
                            &d),
                  0);
    cr_expect(strstr(d.msg, "reserve_output_min") && d.line == 9, "%d %s", d.line, d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                            "    prefill_apart: maybe\n    source: y\n",
                            &d),
                  0);
    cr_expect_eq(d.line, 8, "%d %s", d.line, d.msg);
    cr_expect_neq(load_text("vllm:\n  source: x\n  scheduler:\n    max_batched_tokens: 8192\n"
                            "    max_seqs: 256\n    page: 16\n    step_overhead: 1 ms\n"
                            "    flop_overhead: 0.5\n    range: [1.3, 0.8]\n    source: y\n",
                            &d),
                  0);
    cr_expect(strstr(d.msg, "range") && d.line == 9, "%d %s", d.line, d.msg);
}

/* serve's range: the device's spread and the serving fit's, their logarithms in quadrature; the
 * device's alone without the fit's. */
Test(serve, the_range_joins_the_device_and_the_serving_fit)
{
    load_hw("h100-sxm", &hw);
    double d10, d90, p10, p90;
    (void)ffn_hw_unc_range_dt(&hw, FFN_DT_BF16, &d10, &d90);
    cr_assert(d10 < 1 && d90 > 1, "%g %g", d10, d90);
    ffn_engine_sched s = {.set = true};
    (void)ffn_serve_range(&hw, FFN_DT_BF16, &s, &p10, &p90);
    cr_expect(p10 == d10 && p90 == d90);
    s.range_p10 = 0.8;
    s.range_p90 = 1.25;
    (void)ffn_serve_range(&hw, FFN_DT_BF16, &s, &p10, &p90);
    const double l10 = -sqrt(log(d10) * log(d10) + log(0.8) * log(0.8)),
                 l90 = sqrt(log(d90) * log(d90) + log(1.25) * log(1.25));
    cr_expect_lt(fabs(log(p10) - l10), 1e-12, "%g", p10);
    cr_expect_lt(fabs(log(p90) - l90), 1e-12, "%g", p90);
    cr_expect(p10 < fmin(d10, 0.8) && p90 > fmax(d90, 1.25));
}
