/* `ffnroof serve`: the serving steady state of a workload (docs/plan.md "Serving"). For each
 * model on each device and each layout: the engine's scheduler simulated step by step under a
 * client concurrency, a request rate or offline, with TTFT, TPOT, tokens/s per device and per
 * user and what bounds them; over a sweep of concurrencies, the frontier of tokens/s per device
 * against tokens/s per user and, with --user-tps, the point each device serves best at that
 * interactivity and what it costs. This file parses the options, loads the inputs and calls
 * the simulator (sim/serve.c) and the writers. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/engine.h"
#include "ffnroof/engine_load.h"
#include "ffnroof/plot.h"
#include "ffnroof/prices.h"
#include "ffnroof/scenario.h"
#include "ffnroof/serve.h"
#include "ffnroof/serve_report.h"
#include "ffnroof/serve_write.h"
#include "ffnroof/units.h"
#include "pictures.h"

#define CMD "serve"
#define MAX_CONC 32

static void usage(FILE *fp)
{
    fputs("usage: ffnroof serve --model NAME[,NAME..] --hw NAME[,NAME..] [options]\n"
          "       ffnroof serve --scenario FILE [options]\n"
          "\n"
          "The serving steady state of a workload under continuous batching with chunked\n"
          "prefill, the engine's scheduler simulated step by step: TTFT and TPOT (median and\n"
          "p90), output tokens/s per device and per user, requests/s, the mean running batch\n"
          "and context, and what bounds them, each throughput with its range. Without\n"
          "--concurrency, --rate or --offline: a sweep of client concurrencies 1..4096 and\n"
          "the frontier of tokens/s per device against tokens/s per user (docs/plan.md,\n"
          "\"Serving\").\n",
          fp);
    fputs("\nWorkload:\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_PROMPT, FFN_O_OUTPUT, 0});
    fputs("  --spread S            lengths drawn uniformly in N x [1 - S, 1 + S], as vLLM's\n"
          "                        random dataset's range ratio (default: 0, fixed; 0-0.99)\n"
          "  --lengths L           uniform (as --spread says) or sharegpt: long-tailed, as\n"
          "                        ShareGPT benchmarks sample them (exponential laws of\n"
          "                        the two means, prompts <= 1024 tokens, requests <= 2048;\n"
          "                        default: uniform)\n"
          "  --concurrency LIST    closed loop: clients, each sending its next request when\n"
          "                        the last finished (e.g. 64 or 1-256:x2; default: 1-4096:x2;\n"
          "                        at most 32 values of 1-1000000)\n"
          "  --rate R              open loop: Poisson arrivals, requests/s\n"
          "  --offline             every request queued at once (offline throughput)\n"
          "  --requests N          requests simulated (default: 10 x concurrency within\n"
          "                        [200, 20000]; 1000 for --rate and --offline; 10-1000000)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_SEED, 0});
    fputs("  --spec K:A            speculative decoding / MTP: K draft tokens a step, A tokens\n"
          "                        emitted a step on average, 1 <= A <= K + 1 (default: off)\n"
          "Engine (its kernels and its scheduler's defaults, hw/arch/engines.yaml):\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_ENGINE, 0});
    fputs("  --max-batched-tokens N  the token budget of one step (default: the engine's)\n"
          "  --max-seqs N          running sequences at most (default: the engine's)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_KV_PAGE, 0});
    fputs("  --step-overhead T     per-step time outside the GPU kernels, e.g. 2ms (default:\n"
          "                        the engine's)\n"
          "  --seq-overhead T      ... and per running sequence of a step, e.g. 20us\n"
          "                        (default: the engine's)\n"
          "  --flop-overhead X     ... and X times the step's linear-layer FLOPs at the\n"
          "                        rate of the device's large GEMMs, as GEMMs run in\n"
          "                        serving beyond kernels timed alone; 0 = none (default:\n"
          "                        the engine's)\n"
          "  --reserve-output F    the share of a request's output the KV cache holds when\n"
          "                        it enters: 1 = all of it, never preempted (TensorRT-LLM),\n"
          "                        0 = none, the newest preempted when full (vLLM), in\n"
          "                        between a fixed share (default: the engine's; SGLang's\n"
          "                        falls from 0.7 to 0.098)\n"
          "  --prefill-apart yes|no  prompts in steps of their own, decodes waiting (SGLang),\n"
          "                        or chunked into the decode steps (default: the engine's)\n"
          "Model, devices and layouts:\n",
          fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_MODEL, FFN_O_HW, FFN_O_SCENARIO, FFN_O_DTYPE,
                                     FFN_O_WDTYPE, FFN_O_ADTYPE, FFN_O_KV_DTYPE, FFN_O_GROUP_SIZE,
                                     FFN_O_TP, FFN_O_DP, FFN_O_EP, FFN_O_PP, FFN_O_MAX_DEVICES,
                                     FFN_O_MEM_UTIL, FFN_O_RESERVE, FFN_O_PRICE, 0});
    fputs("MoE layers:\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_GENERIC_MOE, FFN_O_MOE_KERNEL, FFN_O_ROUTING_ALPHA, 0});
    fputs("Output:\n"
          "  --user-tps R          the interactivity to serve at: pick, per device, the point\n"
          "                        with the most tokens/s per device whose median TPOT gives a\n"
          "                        user at least R tokens/s, and its cost\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_TTFT, 0});
    fputs("  --all                 table: every point, not only the frontier (JSON and CSV\n"
          "                        carry every point, flagged)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, 0});
    fputs("  --chart DIR           the frontier chart (pareto.png/.svg/.dat/.gp) into DIR\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_OUT, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Exit codes: 0 an answer (also 'unstable' or 'nothing meets'), 1 failed, 2 bad usage\n"
          "or bad input.\n",
          fp);
}

static int time_opt(const char *opt, const char *s, double lo, double *out)
{
    char why[160];
    if (ffn_units_parse(s, FFN_UNIT_TIME, out, why, sizeof why))
        return ffn_cli_usage(CMD, "%s: %s (e.g. 2ms)", opt, why);
    if (!(*out >= lo && *out <= 1.0))
        return ffn_cli_usage(CMD, "%s must be in [0, 1 s], got '%s'", opt, s);
    return 0;
}

static int spec_opt(const char *s, ffn_serve_opts *o)
{
    char *end;
    unsigned long k = strtoul(s, &end, 10);
    double a = end != s && *end == ':' ? strtod(end + 1, &end) : NAN;
    if (*end || !(a >= 1) || k < 1 || k > 16 || a > (double)k + 1)
        return ffn_cli_usage(CMD,
                             "--spec needs K:A, K draft tokens (1-16) and A tokens a step "
                             "(1 <= A <= K + 1), e.g. 1:1.7; got '%s'",
                             s);
    o->spec_tokens = (uint32_t)k;
    o->spec_accept = a;
    return 0;
}

/* The frontier chart of every pair into dir (pareto.*). */
static int serve_chart(const char *dir, const ffn_serve_pair *p, size_t np, double user_tps)
{
    static ffn_pareto_chart ch;
    ffn_plot_pareto_from_serve(&ch, p, np, user_tps);
    int rc = ffn_cli_prepare_dir(CMD, dir);
    if (rc) return rc;
    ffn_chart_out o = {.dir = dir, .base = "pareto", .width = 1200, .height = 800, .render = true};
    return ffn_chart_emit(CMD, FFN_CHART_PARETO, &ch, &o);
}

int ffn_cmd_serve(int argc, char **argv)
{
    static const int accept[] = {FFN_O_SCENARIO,
                                 FFN_O_ENGINE,
                                 FFN_O_MODEL,
                                 FFN_O_HW,
                                 FFN_O_PROMPT,
                                 FFN_O_OUTPUT,
                                 FFN_O_SPREAD,
                                 FFN_O_LENGTHS,
                                 FFN_O_CONCURRENCY,
                                 FFN_O_RATE,
                                 FFN_O_OFFLINE,
                                 FFN_O_REQUESTS,
                                 FFN_O_SEED,
                                 FFN_O_SPEC,
                                 FFN_O_MAX_BATCHED_TOKENS,
                                 FFN_O_MAX_SEQS,
                                 FFN_O_KV_PAGE,
                                 FFN_O_STEP_OVERHEAD,
                                 FFN_O_SEQ_OVERHEAD,
                                 FFN_O_FLOP_OVERHEAD,
                                 FFN_O_RESERVE_OUTPUT,
                                 FFN_O_PREFILL_APART,
                                 FFN_O_SEQ,
                                 FFN_O_GROUP_SIZE,
                                 FFN_O_GROUP,
                                 FFN_O_DTYPE,
                                 FFN_O_WDTYPE,
                                 FFN_O_ADTYPE,
                                 FFN_O_KV_DTYPE,
                                 FFN_O_TP,
                                 FFN_O_DP,
                                 FFN_O_EP,
                                 FFN_O_PP,
                                 FFN_O_MAX_DEVICES,
                                 FFN_O_MEM_UTIL,
                                 FFN_O_RESERVE,
                                 FFN_O_PRICE,
                                 FFN_O_GENERIC_MOE,
                                 FFN_O_MOE_KERNEL,
                                 FFN_O_ROUTING_ALPHA,
                                 FFN_O_USER_TPS,
                                 FFN_O_TTFT,
                                 FFN_O_ALL,
                                 FFN_O_FORMAT,
                                 FFN_O_CHART,
                                 FFN_O_OUT,
                                 0};
    const char *val[FFN_O_END - FFN_O_FIRST] = {0};
    const char *prices[FFN_SC_MAX_REFS];
    size_t n_prices = 0;
    {
        const int r =
            ffn_cli_collect_with_prices(CMD, argc, argv, accept, val, prices, &n_prices, usage);
        if (r >= 0) return r;
    }
#define V(o) val[(o)-FFN_O_FIRST]
    static ffn_scenario sc;
    int rc = ffn_cli_scenario_start(CMD, V(FFN_O_SCENARIO), V(FFN_O_MODEL), V(FFN_O_HW), &sc);
    if (rc) return rc;
    ffn_plan_opts *po = &sc.plan;
    ffn_serve_opts so;
    ffn_serve_opts_default(&so);
    ffn_format fmt = FFN_FMT_TABLE;
    uint64_t max_devices = 8, mbt = 0, mseqs = 0, page = 0, requests = 0, seed = 1;
    double spread = 0, rate = 0, user_tps = 0, flop_overhead = NAN, reserve_output = NAN;
    static uint64_t conc[MAX_CONC];
    size_t n_conc = 0;
    ffn_serve_pair *pairs = NULL;
    size_t np = 0;
    if (!V(FFN_O_SCENARIO)) {
        /* serve's own layout defaults (a plan searches wider) */
        static const uint64_t d[] = {1, 2, 4, 8};
        memcpy(po->tp, d, sizeof d);
        po->n_tp = 4;
        memcpy(po->dp, d, sizeof d);
        po->n_dp = 4;
        po->n_pp = 0;
    }
    /* the scenario's serve block first, the flags then override it */
    const ffn_sc_serve *ss = &sc.serve;
    if (ss->set) {
        if (ss->max_devices) max_devices = ss->max_devices;
        user_tps = ss->user_tokens_per_s;
        spread = ss->spread;
        so.sharegpt_lengths = ss->sharegpt_lengths;
        for (size_t i = 0; i < ss->n_concurrency && i < MAX_CONC; i++)
            conc[n_conc++] = ss->concurrency[i];
        so.spec_tokens = ss->spec_tokens;
        so.spec_accept = ss->spec_tokens ? ss->spec_accept : 1.0;
    }
    const uint64_t max_devices_sc = max_devices;
    if (V(FFN_O_MAX_DEVICES)) max_devices = 0;
    ffn_cli_seen late = {0};
    ffn_cli_bind_word(&late, FFN_O_PROMPT, &po->prompt);
    ffn_cli_bind_word(&late, FFN_O_SEQ, &po->prompt);
    uint64_t group = 0;
    ffn_cli_bind_word(&late, FFN_O_GROUP_SIZE, &group);
    ffn_cli_bind_word(&late, FFN_O_GROUP, &group);
    ffn_cli_bind_word(&late, FFN_O_OUTPUT, &po->output);
    ffn_cli_bind_double(&late, FFN_O_SPREAD, 0, 0.99, &spread);
    ffn_cli_bind_double(&late, FFN_O_FLOP_OVERHEAD, 0, 10, &flop_overhead);
    ffn_cli_bind_double(&late, FFN_O_RESERVE_OUTPUT, 0, 1, &reserve_output);
    ffn_cli_bind_double(&late, FFN_O_RATE, 1e-6, 1e9, &rate);
    ffn_cli_bind_u64(&late, FFN_O_REQUESTS, 10, 1000000, &requests);
    ffn_cli_bind_word(&late, FFN_O_SEED, &seed);
    ffn_cli_bind_u64(&late, FFN_O_MAX_BATCHED_TOKENS, 1, 1u << 20, &mbt);
    ffn_cli_bind_u64(&late, FFN_O_MAX_SEQS, 1, 1u << 20, &mseqs);
    ffn_cli_bind_word(&late, FFN_O_KV_PAGE, &page);
    ffn_cli_bind_word(&late, FFN_O_MAX_DEVICES, &max_devices);
    ffn_cli_bind_word(&late, FFN_O_MEM_UTIL, &po->mem_utilization);
    ffn_cli_bind_flag(&late, FFN_O_GENERIC_MOE, &po->moe.generic);
    ffn_cli_bind_str(&late, FFN_O_MOE_KERNEL, &po->moe.kernel);
    ffn_cli_bind_word(&late, FFN_O_ROUTING_ALPHA, &po->moe.routing_alpha);
    ffn_cli_bind_double(&late, FFN_O_USER_TPS, 1e-6, 1e9, &user_tps);
    ffn_cli_bind_format(&late, FFN_O_FORMAT, true, &fmt);
    if ((rc = ffn_cli_store_collected(CMD, &late, val))) goto out;
    if (!max_devices) max_devices = max_devices_sc;
    if (group) po->group_size = (unsigned)group;
    {
        int modes = !!V(FFN_O_CONCURRENCY) + !!V(FFN_O_RATE) + !!V(FFN_O_OFFLINE);
        if (modes > 1) {
            rc = ffn_cli_usage(CMD, "use one of --concurrency, --rate and --offline");
            goto out;
        }
    }
    if (V(FFN_O_CONCURRENCY) && (rc = ffn_cli_u64_list(CMD, "--concurrency", V(FFN_O_CONCURRENCY),
                                                       1, 1000000, conc, MAX_CONC, &n_conc)))
        goto out;
    if (V(FFN_O_RATE)) so.mode = FFN_SERVE_RATE, so.rate = rate;
    if (V(FFN_O_OFFLINE)) so.mode = FFN_SERVE_OFFLINE;
    if (!n_conc && so.mode == FFN_SERVE_CONCURRENCY)
        for (uint64_t v = 1; v <= 4096; v *= 2)
            conc[n_conc++] = v;
    if (so.mode != FFN_SERVE_CONCURRENCY) conc[0] = 1, n_conc = 1;
    if (V(FFN_O_SPEC) && (rc = spec_opt(V(FFN_O_SPEC), &so))) goto out;
    if ((rc = ffn_cli_plan_dtypes(CMD, V(FFN_O_DTYPE), V(FFN_O_WDTYPE), V(FFN_O_ADTYPE),
                                  V(FFN_O_KV_DTYPE), po)))
        goto out;
    if ((V(FFN_O_TP) && (rc = ffn_cli_word_list(CMD, FFN_O_TP, V(FFN_O_TP), po->tp,
                                                FFN_PLAN_MAX_DEGREES, &po->n_tp))) ||
        (V(FFN_O_DP) && (rc = ffn_cli_word_list(CMD, FFN_O_DP, V(FFN_O_DP), po->dp,
                                                FFN_PLAN_MAX_DEGREES, &po->n_dp))) ||
        (V(FFN_O_EP) && (rc = ffn_cli_word_list(CMD, FFN_O_EP, V(FFN_O_EP), po->ep,
                                                FFN_PLAN_MAX_DEGREES, &po->n_ep))) ||
        (V(FFN_O_PP) && (rc = ffn_cli_word_list(CMD, FFN_O_PP, V(FFN_O_PP), po->pp,
                                                FFN_PLAN_MAX_DEGREES, &po->n_pp))))
        goto out;
    if (V(FFN_O_TTFT) && (rc = ffn_cli_slo_time(CMD, "--ttft", V(FFN_O_TTFT), &po->ttft_s)))
        goto out;
    double overhead = NAN, seq_overhead = NAN;
    if (V(FFN_O_SEQ_OVERHEAD)) {
        char why[160];
        if (ffn_units_parse(V(FFN_O_SEQ_OVERHEAD), FFN_UNIT_TIME, &seq_overhead, why, sizeof why) ||
            !(seq_overhead >= 0 && seq_overhead <= 1e-2)) {
            rc =
                ffn_cli_usage(CMD, "--seq-overhead needs a time in [0, 10 ms], e.g. 50us; got '%s'",
                              V(FFN_O_SEQ_OVERHEAD));
            goto out;
        }
    }
    if (V(FFN_O_STEP_OVERHEAD) &&
        (rc = time_opt("--step-overhead", V(FFN_O_STEP_OVERHEAD), 0.0, &overhead)))
        goto out;
    if (V(FFN_O_LENGTHS)) {
        if (!strcmp(V(FFN_O_LENGTHS), "sharegpt")) {
            so.sharegpt_lengths = true;
        } else if (strcmp(V(FFN_O_LENGTHS), "uniform")) {
            rc = ffn_cli_usage(CMD, "--lengths needs uniform or sharegpt; got '%s'",
                               V(FFN_O_LENGTHS));
            goto out;
        }
    }
    if (so.sharegpt_lengths && spread > 0) {
        rc = ffn_cli_usage(CMD, "--lengths sharegpt draws lengths by its own law: no --spread "
                                "with it");
        goto out;
    }
    int prefill_apart = -1;
    if (V(FFN_O_PREFILL_APART)) {
        const char *a = V(FFN_O_PREFILL_APART);
        prefill_apart = !strcmp(a, "yes") ? 1 : !strcmp(a, "no") ? 0 : -1;
        if (prefill_apart < 0) {
            rc = ffn_cli_usage(CMD, "--prefill-apart needs yes or no; got '%s'", a);
            goto out;
        }
    }
    if (V(FFN_O_RESERVE) && (rc = ffn_cli_reserve(CMD, V(FFN_O_RESERVE), &po->reserve_bytes)))
        goto out;
    if ((rc = ffn_cli_price_flags(CMD, prices, n_prices, &sc))) goto out;
    so.isl = po->prompt;
    so.osl = po->output;
    so.isl_spread = so.osl_spread = spread;
    double max_isl, max_osl;
    if (so.sharegpt_lengths && !ffn_serve_sharegpt_means_fit(so.isl, so.osl, &max_isl, &max_osl)) {
        rc = ffn_cli_usage(CMD,
                           "--lengths sharegpt keeps prompts to %d tokens and requests to %d "
                           "(the benchmarks' sampling): give a --prompt below %.0f and an "
                           "--output below %.0f",
                           FFN_SHAREGPT_MAX_PROMPT, FFN_SHAREGPT_MAX_TOTAL, ceil(max_isl),
                           ceil(max_osl));
        goto out;
    }
    so.requests = requests;
    so.seed = seed;

    static ffn_model models[FFN_SC_MAX_REFS];
    static ffn_hw hws[FFN_SC_MAX_REFS];
    if ((rc = ffn_cli_engine(CMD, V(FFN_O_ENGINE)                 ? V(FFN_O_ENGINE)
                                  : ss->engine != FFN_ENGINE_NONE ? ffn_engine_name(ss->engine)
                                                                  : NULL)))
        goto out;
    if ((rc = ffn_cli_load_scenario_inputs(CMD, &sc, hws, models))) goto out;
    for (size_t k = 0; k < sc.n_hws; k++)
        if ((rc = ffn_cli_check_moe_kernel(CMD, po->moe.kernel, po->moe.generic, &hws[k],
                                           po->wdtype, po->adtype)))
            goto out;
    if ((rc = ffn_cli_check_context(CMD, models, sc.n_models, ffn_serve_max_request_tokens(&so))))
        goto out;
    ffn_engine_profile prof;
    if ((rc = ffn_cli_engine_profile(CMD, ffn_cli_engine_in_force(), &prof))) goto out;
    if (!prof.sched.set) {
        rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                          "hw/arch/engines.yaml gives no scheduler for %s: set "
                          "--max-batched-tokens, --max-seqs, --kv-page and --step-overhead",
                          ffn_engine_name(ffn_cli_engine_in_force()));
        if (!(mbt && mseqs && page && !isnan(overhead))) goto out;
        rc = 0;
    }
    {
        const ffn_price *listed[FFN_SC_MAX_REFS];
        if ((rc = ffn_cli_list_prices(&sc, hws, listed))) goto out;
    }

    pairs = calloc(sc.n_models * sc.n_hws, sizeof *pairs);
    if (!pairs) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < sc.n_models; i++)
        for (size_t k = 0; k < sc.n_hws; k++) {
            ffn_serve_pair *q = &pairs[np++];
            q->m = &models[i];
            q->hw = &hws[k];
            q->wdtype = po->wdtype;
            q->adtype = po->adtype;
            q->generic_moe = po->moe.generic;
            q->moe_kernel = po->moe.kernel;
            q->routing_alpha = po->moe.routing_alpha;
            q->price = sc.price_per_hour[k];
            q->engine = ffn_cli_engine_in_force();
            /* the engine's defaults on this device, then the flags */
            q->sched = ffn_engine_sched_for(&prof.sched, q->hw->name);
            if (mbt) q->sched.max_batched_tokens = mbt;
            if (mseqs) q->sched.max_seqs = mseqs;
            if (page) q->sched.page_tokens = page;
            if (!isnan(overhead)) q->sched.step_overhead_s = overhead;
            if (!isnan(seq_overhead)) q->sched.seq_overhead_s = seq_overhead;
            if (!isnan(flop_overhead)) q->sched.flop_overhead = flop_overhead;
            if (!isnan(reserve_output)) { /* a fixed share: no decay */
                q->sched.reserve_output = q->sched.reserve_output_min = reserve_output;
                q->sched.reserve_decay_steps = 0;
                q->sched.kv_grow = reserve_output < 1.0;
            }
            if (prefill_apart >= 0) q->sched.prefill_apart = prefill_apart == 1;
            ffn_plan_opts pop = *po;
            pop.kv_page_tokens = q->sched.page_tokens;
            q->pick = -1;
            ffn_plan_shape shapes[FFN_SERVE_MAX_SHAPES];
            size_t ns = ffn_serve_shapes(q->m, po, V(FFN_O_EP) != NULL, max_devices, shapes);
            q->pts = calloc(ns * n_conc, sizeof *q->pts);
            if (!q->pts) {
                rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
                goto out;
            }
            for (size_t s = 0; s < ns; s++) {
                char lay[48];
                ffn_plan_shape_name(&shapes[s], lay, sizeof lay);
                ffn_serve_ctx ctx;
                ffn_diag d;
                ffn_diag_clear(&d);
                const uint64_t maxtok =
                    (q->sched.max_batched_tokens + q->sched.max_seqs * (1 + so.spec_tokens)) *
                    shapes[s].dp;
                if (ffn_serve_ctx_init(&ctx, q->m, q->hw, &pop, &shapes[s], maxtok, &d)) {
                    if (q->n_skipped < FFN_SERVE_MAX_SHAPES)
                        snprintf(q->skipped[q->n_skipped++], sizeof q->skipped[0], "%s: %.150s",
                                 lay, d.msg);
                    continue;
                }
                for (size_t j = 0; j < n_conc; j++) {
                    ffn_serve_opts x = so;
                    x.sched = q->sched;
                    x.shape = shapes[s];
                    x.concurrency = (double)conc[j];
                    ffn_serve_point *pt = &q->pts[q->n];
                    int e = ffn_serve_point_eval(&ctx, &x, pt, &d);
                    if (e == FFN_ENOMEM) {
                        ffn_serve_ctx_free(&ctx);
                        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
                        goto out;
                    }
                    if (e) {
                        if (q->n_skipped < FFN_SERVE_MAX_SHAPES)
                            snprintf(q->skipped[q->n_skipped++], sizeof q->skipped[0], "%s: %.150s",
                                     lay, d.msg);
                        break;
                    }
                    q->n++;
                }
                ffn_serve_ctx_free(&ctx);
            }
            ffn_serve_mark_frontier(q->pts, q->n);
            if (user_tps > 0 || po->ttft_s > 0)
                q->pick = ffn_serve_pick(q->pts, q->n, user_tps, po->ttft_s);
        }

    {
        ffn_cli_out out;
        if ((rc = ffn_cli_out_open(CMD, &out, V(FFN_O_OUT)))) goto out;
        const bool all = V(FFN_O_ALL) || so.mode != FFN_SERVE_CONCURRENCY || n_conc == 1;
        /* JSON and CSV carry every point, each with its frontier and pick flags */
        int wr = 0;
        if (fmt == FFN_FMT_JSON)
            wr = ffn_serve_write_json(out.fp, &so, pairs, np);
        else if (fmt == FFN_FMT_CSV)
            wr = ffn_serve_write_csv(out.fp, &so, pairs, np);
        else
            ffn_serve_write_table(out.fp, &so, pairs, np, all, user_tps, po->ttft_s);
        rc = ffn_cli_out_close(CMD, &out, wr == 0 && !ferror(out.fp));
    }
    if (!rc && V(FFN_O_CHART)) rc = serve_chart(V(FFN_O_CHART), pairs, np, user_tps);
out:
    if (pairs)
        for (size_t i = 0; i < np; i++)
            free(pairs[i].pts);
    free(pairs);
    ffn_scenario_release(&sc);
    return rc;
#undef V
}
