/* `ffnroof plan`: capacity planning for a scenario (docs/plan.md). For each model on each
 * device: the layouts (TP x EP x replicas) within the device limit, memory per device and fit,
 * the largest batch under the latency SLO, tokens/s per device and for the fleet, devices for
 * the throughput target, tokens/s per watt and per dollar, and the bottleneck; ranked best
 * first, as a table, JSON or CSV (io/write/plan_write.c). An SLO no layout meets is an answer
 * ("infeasible", with the closest miss), not an error. This file parses the options, loads the
 * inputs and calls the planner and the writers. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/plan.h"
#include "ffnroof/plan_report.h"
#include "ffnroof/prices.h"
#include "ffnroof/plan_write.h"
#include "ffnroof/scenario.h"
#include "ffnroof/units.h"

#define CMD "plan"
#define MAX_PAIRS 64

static void usage(FILE *fp)
{
    fputs("usage: ffnroof plan --scenario FILE [options]\n"
          "       ffnroof plan --model NAME[,NAME..] --hw NAME[,NAME..] [options]\n"
          "\n"
          "Capacity planning: for each model on each device, the layouts (TP x DP x EP x PP)\n"
          "and replicas within the device limit, memory per device, the largest batch meeting\n"
          "the SLO, tokens/s per device and for the fleet, devices for the target, tokens/s per\n"
          "watt, $/h and $/M tokens, and the bottleneck; with --phase both, disaggregated\n"
          "prefill and decode pools against the aggregated one. Flags override the scenario\n"
          "(docs/formats-scenario.md).\n",
          fp);
    fputs("\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_SCENARIO, FFN_O_MODEL, FFN_O_HW, FFN_O_ENGINE,
                                     FFN_O_PHASE, FFN_O_PROMPT, FFN_O_OUTPUT, FFN_O_PREFILL_BATCH,
                                     FFN_O_CHUNK, FFN_O_DTYPE, FFN_O_WDTYPE, FFN_O_ADTYPE,
                                     FFN_O_KV_DTYPE, FFN_O_GROUP_SIZE, 0});
    fputs("  --tpot T              SLO: time per output token, e.g. 50ms (default: none; at\n"
          "                        most 1 h)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_TTFT, 0});
    fputs("  --target R            fleet throughput target in tokens/s (default: none)\n"
          "  --max-batch N         largest batch considered per replica (default: 4096)\n",
          fp);
    ffn_cli_help_words(
        fp, CMD, (const int[]){FFN_O_MAX_DEVICES, FFN_O_MEM_UTIL, FFN_O_RESERVE, FFN_O_KV_PAGE, 0});
    fputs("Layouts (per replica, as vLLM, SGLang and TensorRT-LLM name them; docs/plan.md):\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_TP, FFN_O_DP, FFN_O_EP, FFN_O_PP, FFN_O_EP_UNEVEN,
                                     FFN_O_GENERIC_MOE, FFN_O_MOE_KERNEL, FFN_O_PRICE, 0});
    fputs("  --objective O         devices, tokens_per_device, tokens_per_watt,\n"
          "                        tokens_per_dollar or cost (the cheapest fleet per hour that\n"
          "                        meets --target; needs prices) (default: devices with a\n"
          "                        target, else tokens_per_device)\n"
          "  --margin M            median or p90: size against the predicted step time or the\n"
          "                        pessimistic end of its range (x the device's p90 ratio of\n"
          "                        measured/predicted; default: median)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_WEIGHTS, FFN_O_ONCHIP, 0});
    fputs("MoE routing:\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_ZIPF, FFN_O_ROUTING_ALPHA, FFN_O_TRIALS, FFN_O_SEED,
                                     FFN_O_CAPACITY_FACTOR, FFN_O_DEVICES_PER_NODE, 0});
    fputs("Output:\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, 0});
    fputs("  --explain[=DEVICE]    the arithmetic behind the best plan (or the best on\n"
          "                        DEVICE)\n"
          "  --emit E              each shown plan as engine E's launch command: vllm,\n"
          "                        sglang or trtllm (parallel sizes, batch, context, memory\n"
          "                        fraction, KV dtype, quantization; what E cannot express is\n"
          "                        said beside it)\n"
          "  --all                 table: every layout, not only the chosen one per device\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_OUT, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Tokens/s are output tokens (decode, both) or prompt tokens (prefill).\nExit codes: "
          "0 an answer (also 'infeasible'), 1 failed, 2 bad usage or bad input.\n",
          fp);
}

static int degree_list(int opt, const char *s, uint64_t *out, size_t *n)
{
    return ffn_cli_word_list(CMD, opt, s, out, FFN_PLAN_MAX_DEGREES, n);
}

int ffn_cmd_plan(int argc, char **argv)
{
    static const int accept[] = {FFN_O_SCENARIO,
                                 FFN_O_ENGINE,
                                 FFN_O_MODEL,
                                 FFN_O_HW,
                                 FFN_O_PHASE,
                                 FFN_O_PROMPT,
                                 FFN_O_SEQ,
                                 FFN_O_GROUP_SIZE,
                                 FFN_O_GROUP,
                                 FFN_O_OUTPUT,
                                 FFN_O_PREFILL_BATCH,
                                 FFN_O_CHUNK,
                                 FFN_O_DTYPE,
                                 FFN_O_WDTYPE,
                                 FFN_O_ADTYPE,
                                 FFN_O_KV_DTYPE,
                                 FFN_O_TPOT,
                                 FFN_O_TTFT,
                                 FFN_O_TARGET,
                                 FFN_O_MAX_DEVICES,
                                 FFN_O_MAX_BATCH,
                                 FFN_O_MEM_UTIL,
                                 FFN_O_RESERVE,
                                 FFN_O_KV_PAGE,
                                 FFN_O_TP,
                                 FFN_O_DP,
                                 FFN_O_EP,
                                 FFN_O_PP,
                                 FFN_O_EP_UNEVEN,
                                 FFN_O_GENERIC_MOE,
                                 FFN_O_MOE_KERNEL,
                                 FFN_O_PRICE,
                                 FFN_O_OBJECTIVE,
                                 FFN_O_EMIT,
                                 FFN_O_MARGIN,
                                 FFN_O_WEIGHTS,
                                 FFN_O_ONCHIP,
                                 FFN_O_ZIPF,
                                 FFN_O_ROUTING_ALPHA,
                                 FFN_O_TRIALS,
                                 FFN_O_SEED,
                                 FFN_O_CAPACITY_FACTOR,
                                 FFN_O_DEVICES_PER_NODE,
                                 FFN_O_FORMAT,
                                 FFN_O_EXPLAIN,
                                 FFN_O_ALL,
                                 FFN_O_OUT,
                                 0};
    /* First pass: collect the values (the last one wins) so that the scenario loads first and
     * the flags then override it. */
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
    int rc;
    {
        int r = ffn_cli_scenario_start(CMD, V(FFN_O_SCENARIO), V(FFN_O_MODEL), V(FFN_O_HW), &sc);
        if (r) return r;
    }
    ffn_plan_opts *o = &sc.plan;
    ffn_format fmt = FFN_FMT_TABLE;
    if (V(FFN_O_PHASE) && ffn_plan_phase_parse(V(FFN_O_PHASE), &o->phase)) {
        rc =
            ffn_cli_usage(CMD, "--phase must be decode, prefill or both; got '%s'", V(FFN_O_PHASE));
        goto out;
    }
    if (V(FFN_O_MAX_DEVICES) && !strcmp(V(FFN_O_MAX_DEVICES), "0")) {
        rc = ffn_cli_usage(CMD, "--max-devices is 0: a plan needs at least one device");
        goto out;
    }
    ffn_cli_seen late = {0};
    ffn_cli_bind_word(&late, FFN_O_PROMPT, &o->prompt);
    ffn_cli_bind_word(&late, FFN_O_SEQ, &o->prompt);
    uint64_t group = 0;
    ffn_cli_bind_word(&late, FFN_O_GROUP_SIZE, &group);
    ffn_cli_bind_word(&late, FFN_O_GROUP, &group);
    ffn_cli_bind_word(&late, FFN_O_OUTPUT, &o->output);
    ffn_cli_bind_word(&late, FFN_O_PREFILL_BATCH, &o->prefill_batch);
    ffn_cli_bind_word(&late, FFN_O_CHUNK, &o->chunk);
    ffn_cli_bind_double(&late, FFN_O_TARGET, 1e-6, 1e15, &o->target_tokens_per_s);
    ffn_cli_bind_word(&late, FFN_O_MAX_DEVICES, &o->max_devices);
    ffn_cli_bind_u64(&late, FFN_O_MAX_BATCH, 1, 1u << 24, &o->max_batch);
    ffn_cli_bind_word(&late, FFN_O_MEM_UTIL, &o->mem_utilization);
    ffn_cli_bind_word(&late, FFN_O_KV_PAGE, &o->kv_page_tokens);
    ffn_cli_bind_routing(&late, &o->moe);
    ffn_cli_bind_str(&late, FFN_O_MOE_KERNEL, &o->moe.kernel);
    ffn_cli_bind_format(&late, FFN_O_FORMAT, true, &fmt);
    if ((rc = ffn_cli_store_collected(CMD, &late, val))) goto out;
    if (group) o->group_size = (unsigned)group;
    if ((rc = ffn_cli_plan_dtypes(CMD, V(FFN_O_DTYPE), V(FFN_O_WDTYPE), V(FFN_O_ADTYPE),
                                  V(FFN_O_KV_DTYPE), o)))
        goto out;
    if ((V(FFN_O_TPOT) && (rc = ffn_cli_slo_time(CMD, "--tpot", V(FFN_O_TPOT), &o->tpot_s))) ||
        (V(FFN_O_TTFT) && (rc = ffn_cli_slo_time(CMD, "--ttft", V(FFN_O_TTFT), &o->ttft_s))) ||
        (V(FFN_O_TP) && (rc = degree_list(FFN_O_TP, V(FFN_O_TP), o->tp, &o->n_tp))) ||
        (V(FFN_O_DP) && (rc = degree_list(FFN_O_DP, V(FFN_O_DP), o->dp, &o->n_dp))) ||
        (V(FFN_O_EP) && (rc = degree_list(FFN_O_EP, V(FFN_O_EP), o->ep, &o->n_ep))) ||
        (V(FFN_O_PP) && (rc = degree_list(FFN_O_PP, V(FFN_O_PP), o->pp, &o->n_pp))))
        goto out;
    if (V(FFN_O_WEIGHTS) && ffn_weights_parse(V(FFN_O_WEIGHTS), &o->weights)) {
        rc = ffn_cli_usage(CMD, "--weights: '%s' is not hot, cold or auto", V(FFN_O_WEIGHTS));
        goto out;
    }
    if (V(FFN_O_ONCHIP)) o->onchip = true;
    if (V(FFN_O_MARGIN)) {
        int i;
        if ((rc = ffn_cli_choice(CMD, "--margin", V(FFN_O_MARGIN),
                                 (const char *const[]){"median", "p90", NULL}, &i)))
            goto out;
        o->margin = i == 0 ? FFN_MARGIN_MEDIAN : FFN_MARGIN_P90;
    }
    if (V(FFN_O_RESERVE) && (rc = ffn_cli_reserve(CMD, V(FFN_O_RESERVE), &o->reserve_bytes)))
        goto out;
    if (V(FFN_O_OBJECTIVE) && ffn_objective_parse(V(FFN_O_OBJECTIVE), &o->objective)) {
        rc = ffn_cli_usage(CMD,
                           "--objective must be devices, tokens_per_device, tokens_per_watt, "
                           "tokens_per_dollar or cost; got '%s'",
                           V(FFN_O_OBJECTIVE));
        goto out;
    }
    if ((rc = ffn_cli_price_flags(CMD, prices, n_prices, &sc))) goto out;
    if (sc.n_models * sc.n_hws > MAX_PAIRS) {
        rc = ffn_cli_usage(CMD, "%zu models x %zu devices is more than %d pairs", sc.n_models,
                           sc.n_hws, MAX_PAIRS);
        goto out;
    }

    /* Load the models and devices (unknown names list the known ones). */
    static ffn_model models[FFN_SC_MAX_REFS];
    static ffn_hw hws[FFN_SC_MAX_REFS];
    if ((rc = ffn_cli_engine(CMD, V(FFN_O_ENGINE)))) goto out;
    if ((rc = ffn_cli_load_scenario_inputs(CMD, &sc, hws, models))) goto out;
    if ((rc = ffn_cli_check_context(CMD, models, sc.n_models, (double)(o->prompt + o->output))))
        goto out;
    for (size_t k = 0; k < sc.n_hws; k++)
        if ((rc = ffn_cli_check_moe_kernel(CMD, o->moe.kernel, o->moe.generic, &hws[k], o->wdtype,
                                           o->adtype)))
            goto out;
    /* a device without --price (or price_per_hour) takes the shipped table's list price */
    const ffn_price *listed[FFN_SC_MAX_REFS];
    if ((rc = ffn_cli_list_prices(&sc, hws, listed))) goto out;
    const ffn_objective obj = ffn_plan_objective(o);
    if (obj == FFN_OBJ_TOKENS_PER_DOLLAR || obj == FFN_OBJ_COST) {
        for (size_t k = 0; k < sc.n_hws; k++)
            if (!(sc.price_per_hour[k] > 0)) {
                rc = ffn_cli_usage(CMD,
                                   "objective %s needs a price for '%s' "
                                   "(price_per_hour or --price %s=USD)",
                                   ffn_objective_name(obj), sc.hws[k].name, sc.hws[k].name);
                goto out;
            }
    }
    ffn_engine emit = FFN_ENGINE_NONE;
    if (V(FFN_O_EMIT) && (ffn_engine_parse(V(FFN_O_EMIT), &emit) || emit == FFN_ENGINE_NONE)) {
        rc = ffn_cli_usage(CMD, "--emit must be vllm, sglang or trtllm; got '%s'", V(FFN_O_EMIT));
        goto out;
    }
    static char launch[MAX_PAIRS][640], launch_note[MAX_PAIRS][480];
    ffn_plan_pair pairs[MAX_PAIRS];
    size_t np = 0;
    for (size_t i = 0; i < sc.n_models; i++)
        for (size_t k = 0; k < sc.n_hws; k++) {
            ffn_plan_pair *p = &pairs[np];
            p->m = &models[i];
            p->hw = &hws[k];
            p->hw_index = k;
            p->model_index = i;
            p->plan = malloc(sizeof *p->plan);
            if (!p->plan) {
                rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
                goto free_out;
            }
            np++;
            ffn_plan_opts po = *o;
            po.price_per_hour = sc.price_per_hour[k];
            ffn_diag d;
            ffn_diag_clear(&d);
            if (ffn_plan_evaluate(p->m, p->hw, &po, p->plan, &d)) {
                rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s on %s: %s", p->m->name, p->hw->name,
                                  d.msg);
                goto free_out;
            }
            p->show = p->plan->best >= 0 ? p->plan->best : p->plan->closest;
            p->disagg = NULL;
            p->prefill = p->decode = NULL;
            p->launch = p->launch_note = NULL;
            if (emit != FFN_ENGINE_NONE && p->show >= 0 &&
                ffn_plan_emit(launch[np - 1], sizeof launch[0], launch_note[np - 1],
                              sizeof launch_note[0], emit, p->m, p->plan,
                              &p->plan->layouts[p->show]) == 0) {
                p->launch = launch[np - 1];
                p->launch_note = launch_note[np - 1];
            }
            if (o->phase == FFN_PLAN_BOTH) {
                /* the same workload as a prefill pool and a decode pool */
                ffn_plan *pre = malloc(sizeof *pre), *dec = malloc(sizeof *dec);
                ffn_plan_disagg *g = malloc(sizeof *g);
                p->prefill = pre;
                p->decode = dec;
                p->disagg = g;
                if (!pre || !dec || !g) {
                    rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
                    goto free_out;
                }
                ffn_plan_opts pp = po, dp = po;
                pp.phase = FFN_PLAN_PREFILL;
                pp.target_tokens_per_s = 0;
                dp.phase = FFN_PLAN_DECODE;
                if (ffn_plan_evaluate(p->m, p->hw, &pp, pre, &d) ||
                    ffn_plan_evaluate(p->m, p->hw, &dp, dec, &d) ||
                    ffn_plan_disagg_combine(p->m, p->hw, &po, pre, dec, p->plan, g, &d)) {
                    rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s on %s: %s", p->m->name, p->hw->name,
                                      d.msg);
                    goto free_out;
                }
            }
        }
    ffn_plan_pairs_rank(pairs, np, obj);
    /* --explain: the best plan; --explain=DEVICE: the best on that device (of the first model) */
    size_t explain = 0;
    if (V(FFN_O_EXPLAIN) && V(FFN_O_EXPLAIN)[0]) {
        size_t k = 0;
        while (k < np && strcmp(pairs[k].hw->name, V(FFN_O_EXPLAIN)))
            k++;
        if (k == np) {
            rc = ffn_cli_usage(CMD, "--explain=%s: no such device in --hw/the scenario",
                               V(FFN_O_EXPLAIN));
            goto free_out;
        }
        explain = k;
    }

    {
        ffn_cli_out out;
        if ((rc = ffn_cli_out_open(CMD, &out, V(FFN_O_OUT)))) goto free_out;
        int wr = 0;
        ffn_plan_opts wo = *o; /* as the plans were evaluated: the objective resolved */
        wo.objective = obj;
        if (fmt == FFN_FMT_JSON)
            wr = ffn_plan_write_json(out.fp, &sc, &wo, pairs, np);
        else if (fmt == FFN_FMT_CSV)
            wr = ffn_plan_write_csv(out.fp, pairs, np);
        else
            ffn_plan_write_table(out.fp, &sc, &wo, pairs, np, V(FFN_O_ALL) != NULL);
        if (fmt == FFN_FMT_TABLE) {
            bool any = false;
            for (size_t k = 0; k < sc.n_hws; k++)
                any |= listed[k] != NULL;
            if (any) {
                fputs("prices   the on-demand list prices of hw/prices.tsv (--price overrides):\n",
                      out.fp);
                for (size_t k = 0; k < sc.n_hws; k++)
                    if (listed[k])
                        fprintf(out.fp, "         %s $%.2f/h, %s, retrieved %s\n",
                                listed[k]->device, listed[k]->usd_per_hour, listed[k]->provider,
                                listed[k]->retrieved);
            }
        }
        if (V(FFN_O_EXPLAIN) && np)
            ffn_plan_explain(fmt == FFN_FMT_TABLE ? out.fp : stderr, &pairs[explain]);
        if (ferror(out.fp)) wr = FFN_EIO;
        rc = ffn_cli_out_close(CMD, &out, wr == 0);
    }
free_out:
    for (size_t i = 0; i < np; i++) {
        free(pairs[i].plan);
        free((void *)pairs[i].prefill);
        free((void *)pairs[i].decode);
        free((void *)pairs[i].disagg);
    }
out:
    ffn_scenario_release(&sc);
    return rc;
#undef V
}
