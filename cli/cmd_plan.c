/* `ffnroof plan`: capacity planning for a scenario (docs/plan.md). For each model on each
 * device: the layouts (TP x EP x replicas) within the device limit, memory per device and fit,
 * the largest batch under the latency SLO, tokens/s per device and for the fleet, devices for
 * the throughput target, tokens/s per watt and per dollar, and the bottleneck; ranked best
 * first, as a table, JSON or CSV. An SLO no layout meets is an answer ("infeasible", with the
 * closest miss), not an error. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/json.h"
#include "ffnroof/plan.h"
#include "ffnroof/report.h"
#include "ffnroof/scenario.h"
#include "ffnroof/units.h"

#define CMD "plan"
#define MAX_PAIRS 64

static void usage(FILE *fp)
{
    fputs("usage: ffnroof plan --scenario FILE [options]\n"
          "       ffnroof plan --model NAME[,NAME..] --hw NAME[,NAME..] [options]\n"
          "\n"
          "Capacity planning: for each model on each device, the TP x EP x replicas layouts\n"
          "within the device limit, memory per device, the largest batch meeting the SLO,\n"
          "tokens/s per device and for the fleet, devices for the target, tokens/s per watt\n"
          "and per dollar, and the bottleneck. Flags override the scenario\n"
          "(docs/formats-scenario.md).\n"
          "\n"
          "  --scenario FILE       a scenario (scenarios/*.yaml)\n"
          "  --model LIST          models: names (models/NAME.yaml) or paths, comma-sep.\n"
          "  --hw LIST             devices: names (hw/NAME.yaml) or paths, comma-sep.\n"
          "  --phase P             decode, prefill or both (default: decode)\n"
          "  --prompt N            prompt tokens per request (default: 1024)\n"
          "  --output N            output tokens per request (default: 256)\n"
          "  --prefill-batch N     sequences per prefill step, for TTFT (default: 1)\n"
          "  --chunk C             chunked prefill: C tokens per sequence per step\n"
          "                        (default: off)\n"
          "  --dtype D             weights and activations (default: bf16)\n"
          "  --wdtype D --adtype D weights and activations separately\n"
          "  --kv-dtype D          KV cache (default: the activation dtype)\n"
          "  --tpot T              SLO: time per output token, e.g. 50ms (default: none)\n"
          "  --ttft T              SLO: time to first token, e.g. 2s (default: none)\n"
          "  --target R            fleet throughput target in tokens/s (default: none)\n"
          "  --max-devices N       device limit (default: 64)\n"
          "  --max-batch N         largest batch considered per replica (default: 4096)\n"
          "  --mem-util F          usable fraction of device memory (default: 0.9)\n"
          "  --tp LIST             TP degrees to consider (default: 1,2,4,8)\n"
          "  --ep LIST             EP degrees for MoE models (default: 1,2,4,8,16,32,64)\n"
          "  --ep-uneven           allow EP degrees that do not divide the experts\n"
          "  --price HW=USD        price per device-hour (repeatable)\n"
          "  --objective O         devices, tokens_per_device, tokens_per_watt or\n"
          "                        tokens_per_dollar (default: devices with a target, else\n"
          "                        tokens_per_device)\n"
          "  --margin M            median or p90: size against the predicted step time or the\n"
          "                        pessimistic end of its range (x the device's p90 ratio of\n"
          "                        measured/predicted; default: median)\n"
          "  --weights W           FFN weight residency: cold, hot or auto (resident in an\n"
          "                        on-chip level when all layers' weights of a step fit it;\n"
          "                        as for predict; default: cold)\n"
          "  --onchip              charge finite on-chip memory, as for predict\n"
          "  --zipf S --trials N --seed N --capacity-factor C --devices-per-node N\n"
          "                        MoE routing, as for predict\n"
          "Output:\n"
          "  --format F            table, json or csv (default: table)\n"
          "  --explain             the arithmetic behind the best plan\n"
          "  --all                 table: every layout, not only the chosen one per device\n"
          "  --out FILE            write there instead of stdout (atomically)\n"
          "  -h, --help            this help\n"
          "\n"
          "Tokens/s are output tokens (decode, both) or prompt tokens (prefill).\nExit codes: "
          "0 an answer (also 'infeasible'), 1 failed, 2 bad usage or bad input.\n",
          fp);
}

enum {
    O_SCEN = 256,
    O_MODEL,
    O_HW,
    O_PHASE,
    O_PROMPT,
    O_OUTPUT,
    O_PBATCH,
    O_CHUNK,
    O_DTYPE,
    O_WDTYPE,
    O_ADTYPE,
    O_KVDT,
    O_TPOT,
    O_TTFT,
    O_TARGET,
    O_MAXDEV,
    O_MAXB,
    O_MEMU,
    O_TP,
    O_EP,
    O_EPU,
    O_PRICE,
    O_OBJ,
    O_MARGIN,
    O_ZIPF,
    O_TRIALS,
    O_SEED,
    O_CAP,
    O_DPN,
    O_FORMAT,
    O_EXPLAIN,
    O_ALL,
    O_OUT,
    O_WEIGHTS,
    O_ONCHIP,
    O_END
};

static int dtype_opt(const char *opt, const char *s, ffn_dtype *out)
{
    if (ffn_dtype_parse(s, out))
        return ffn_cli_usage(
            CMD, "%s: unknown dtype '%s' (fp32, tf32, bf16, fp16, fp8, int8, int4)", opt, s);
    return 0;
}

static int time_opt(const char *opt, const char *s, double *out)
{
    char why[160];
    if (ffn_units_parse(s, FFN_UNIT_TIME, out, why, sizeof why))
        return ffn_cli_usage(CMD, "%s: %s (e.g. 50ms, 2s)", opt, why);
    if (!(*out > 0 && *out <= 3600))
        return ffn_cli_usage(CMD, "%s must be in (0, 1 h], got '%s'", opt, s);
    return 0;
}

static int degree_list(const char *opt, const char *s, uint64_t *out, size_t *n)
{
    return ffn_cli_u64_list(CMD, opt, s, 1, 4096, out, FFN_PLAN_MAX_DEGREES, n);
}

typedef struct pair {
    const ffn_model *m;
    const ffn_hw *hw;
    size_t hw_index;
    ffn_plan *plan;
    int show; /* the layout shown: best, else closest, else -1 */
    int rank; /* 1-based among this model's pairs */
} pair;

static const ffn_plan_layout *shown(const pair *p)
{
    return p->show >= 0 ? &p->plan->layouts[p->show] : NULL;
}

/* Feasible first (by the objective), then by the smallest miss. */
static ffn_objective g_obj;
static int cmp_pairs(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    int mx = strcmp(x->m->name, y->m->name);
    if (x->m != y->m && mx) return mx;
    const ffn_plan_layout *lx = shown(x), *ly = shown(y);
    bool fx = lx && lx->feasible, fy = ly && ly->feasible;
    if (fx != fy) return fx ? -1 : 1;
    if (fx) {
        if (ffn_plan_better(lx, ly, g_obj)) return -1;
        if (ffn_plan_better(ly, lx, g_obj)) return 1;
        return 0;
    }
    double ax = lx ? lx->miss : INFINITY, ay = ly ? ly->miss : INFINITY;
    return ax < ay ? -1 : ax > ay ? 1 : 0;
}

static const char *fmt_u(char *b, size_t n, double v, ffn_unit u)
{
    if (!isfinite(v)) {
        snprintf(b, n, "-");
        return b;
    }
    ffn_units_format(v, u, b, n);
    return b;
}

static void layout_str(char *b, size_t n, const ffn_plan_layout *L)
{
    snprintf(b, n, "%llux%llu", (unsigned long long)L->tp, (unsigned long long)L->ep);
}

static void table_row(FILE *fp, int rank, const ffn_hw *hw, const ffn_plan_layout *L)
{
    char lay[16], step[24], rk[16];
    layout_str(lay, sizeof lay, L);
    if (rank > 0)
        snprintf(rk, sizeof rk, "%d", rank);
    else
        snprintf(rk, sizeof rk, "-");
    if (!L->valid) {
        fprintf(fp, "%2s %-13s %5s  %.57s\n", rk, hw->name, lay, L->why);
        return;
    }
    if (!L->feasible && L->max_batch == 0) {
        fprintf(fp, "%2s %-13s %5s  %.57s\n", rk, hw->name, lay, L->why);
        return;
    }
    fmt_u(step, sizeof step, L->step.step_s, FFN_UNIT_TIME);
    char watt[16];
    if (isfinite(L->tokens_per_s_per_watt))
        snprintf(watt, sizeof watt, "%.3g", L->tokens_per_s_per_watt);
    else
        snprintf(watt, sizeof watt, "-");
    fprintf(fp, "%2s %-13s %5s %5llu %6llu %8s %9.0f %7s %3.0f%% %s%s\n", rk, hw->name, lay,
            (unsigned long long)L->devices, (unsigned long long)L->max_batch, step,
            L->tokens_per_s_device, watt, 100.0 * L->step.ffn_share,
            ffn_bottleneck_name(L->bottleneck), L->feasible ? "" : " (infeasible)");
    char rg[80];
    fprintf(fp, "%20s step %s %s%s\n", "",
            fmt_u(step, sizeof step, L->step.step_s / L->step.margin_scale, FFN_UNIT_TIME),
            ffn_range_text(rg, sizeof rg, L->step.step_s / L->step.margin_scale,
                           L->step.step_p10_s, L->step.step_p90_s, L->step.range_default, false),
            L->step.margin_scale != 1.0 ? ", sized at p90" : "");
    if (!L->feasible) fprintf(fp, "%20s %s\n", "", L->why);
}

static void describe(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o)
{
    char a[32], b[32];
    fprintf(fp, "plan     %s: %s", sc->name[0] ? sc->name : "(flags)",
            ffn_plan_phase_name(o->phase));
    if (o->phase == FFN_PLAN_PREFILL)
        fprintf(fp, ", prompt %llu tokens", (unsigned long long)o->prompt);
    else
        fprintf(fp, ", prompt %llu + output %llu tokens", (unsigned long long)o->prompt,
                (unsigned long long)o->output);
    fprintf(fp, "\n         W %s, A %s, KV %s; SLO", ffn_dtype_name(o->wdtype),
            ffn_dtype_name(o->adtype), ffn_dtype_name(o->kv_dtype));
    if (o->tpot_s > 0) fprintf(fp, " TPOT %s", fmt_u(a, sizeof a, o->tpot_s, FFN_UNIT_TIME));
    if (o->ttft_s > 0) fprintf(fp, " TTFT %s", fmt_u(b, sizeof b, o->ttft_s, FFN_UNIT_TIME));
    if (o->tpot_s <= 0 && o->ttft_s <= 0) fprintf(fp, " none");
    fprintf(fp, "\n         ");
    if (o->target_tokens_per_s > 0) fprintf(fp, "target %.6g tokens/s; ", o->target_tokens_per_s);
    fprintf(fp, "<= %llu devices; objective %s; margin %s\n", (unsigned long long)o->max_devices,
            ffn_objective_name(o->objective < FFN_OBJ_COUNT ? o->objective
                               : o->target_tokens_per_s > 0 ? FFN_OBJ_DEVICES
                                                            : FFN_OBJ_TOKENS_PER_DEVICE),
            o->margin == FFN_MARGIN_P90 ? "p90" : "median");
}

static void write_table(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o, pair *pairs,
                        size_t np, bool all)
{
    describe(fp, sc, o);
    const ffn_model *cur = NULL;
    for (size_t i = 0; i < np; i++) {
        pair *p = &pairs[i];
        if (p->m != cur) {
            cur = p->m;
            fprintf(fp, "\nmodel    %s\n", cur->name);
            fprintf(fp, "%2s %-13s %5s %5s %6s %8s %9s %7s %4s %s\n", "#", "device", "TPxEP",
                    "devs", "batch", "step", "tok/s/dev", "tok/s/W", "FFN", "bottleneck");
        }
        const ffn_plan_layout *L = shown(p);
        if (!L) {
            fprintf(fp, "%2s %-13s no layout is possible (see --all)\n", "-", p->hw->name);
            continue;
        }
        table_row(fp, L->feasible ? p->rank : 0, p->hw, L);
        if (!L->feasible) fprintf(fp, "%20s ^ infeasible; this is the closest miss\n", "");
        if (!L->feasible && p->plan->devices_for_weights > L->devices) {
            char wb[32], ub[32];
            fprintf(fp, "%20s   the weights alone (%s) need >= %llu devices of %s usable\n", "",
                    fmt_u(wb, sizeof wb, p->plan->weight_bytes_all, FFN_UNIT_BYTES),
                    (unsigned long long)p->plan->devices_for_weights,
                    fmt_u(ub, sizeof ub, p->hw->mem_capacity_bytes * o->mem_utilization,
                          FFN_UNIT_BYTES));
        }
        if (all)
            for (size_t k = 0; k < p->plan->n_layouts; k++) {
                if ((int)k == p->show) continue;
                table_row(fp, 0, p->hw, &p->plan->layouts[k]);
            }
    }
    bool any = false;
    for (size_t i = 0; i < np; i++)
        any |= shown(&pairs[i]) && shown(&pairs[i])->feasible;
    if (!any)
        fprintf(fp,
                "\ninfeasible: no layout on any device meets the scenario (closest miss above)\n");
    fprintf(fp, "\nstep = one %s step; tok/s = %s tokens; FFN = FFN share of the step\n",
            o->phase == FFN_PLAN_PREFILL ? "prefill" : "decode",
            o->phase == FFN_PLAN_PREFILL ? "prompt" : "output");
}

/* The arithmetic behind one plan, in a few lines of at most 80 columns. */
static void explain(FILE *fp, const pair *p)
{
    const ffn_plan_layout *L = shown(p);
    const ffn_plan *pl = p->plan;
    const ffn_plan_opts *o = &pl->opts;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    if (!L) return;
    fprintf(fp, "\nexplain  %s on %s: TP %llu x EP %llu x %llu replicas = %llu devices%s\n",
            p->m->name, p->hw->name, (unsigned long long)L->tp, (unsigned long long)L->ep,
            (unsigned long long)L->replicas, (unsigned long long)L->devices,
            L->feasible ? "" : " (closest miss)");
    const ffn_plan_mem *m = &L->mem;
    fprintf(fp, "  weights  %.4g G params, W %s: %s/device (FFN %s, other %s)\n",
            (double)pl->params.total / 1e9, ffn_dtype_name(o->wdtype),
            fmt_u(a, sizeof a, m->weight_bytes, FFN_UNIT_BYTES),
            fmt_u(b, sizeof b, m->ffn_weight_bytes, FFN_UNIT_BYTES),
            fmt_u(c, sizeof c, m->other_weight_bytes, FFN_UNIT_BYTES));
    uint64_t ctx = o->phase == FFN_PLAN_PREFILL ? o->prompt : o->prompt + o->output;
    fprintf(fp, "  KV       %s/token/layer x %llu layers x %llu tokens = %s per sequence\n",
            fmt_u(a, sizeof a, ffn_plan_kv_bytes_per_token_layer(p->m, o->kv_dtype, L->tp),
                  FFN_UNIT_BYTES),
            (unsigned long long)p->m->layers, (unsigned long long)ctx,
            fmt_u(b, sizeof b, m->kv_bytes_per_seq, FFN_UNIT_BYTES));
    fprintf(fp, "  memory   %s usable (%.0f%% of %s); fits up to batch %llu\n",
            fmt_u(a, sizeof a, m->usable_bytes, FFN_UNIT_BYTES), 100 * o->mem_utilization,
            fmt_u(b, sizeof b, p->hw->mem_capacity_bytes, FFN_UNIT_BYTES),
            (unsigned long long)L->mem_batch);
    fprintf(fp, "           batch %llu: weights %s + KV %s + act. %s = %s\n",
            (unsigned long long)(L->max_batch ? L->max_batch : 1),
            fmt_u(c, sizeof c, m->weight_bytes, FFN_UNIT_BYTES),
            fmt_u(d, sizeof d, m->kv_bytes, FFN_UNIT_BYTES),
            fmt_u(e, sizeof e, m->activation_bytes, FFN_UNIT_BYTES),
            fmt_u(f, sizeof f, m->total_bytes, FFN_UNIT_BYTES));
    const ffn_plan_step *s = &L->step;
    fprintf(fp, "  step     %s, batch %llu (%llu seq/device):\n", ffn_phase_name(s->phase),
            (unsigned long long)s->batch, (unsigned long long)s->seqs_device);
    if (s->margin_scale != 1.0)
        fprintf(fp, "           every time below x %.4g: the p90 end of the device's range\n",
                s->margin_scale);
    fprintf(fp, "           FFN %s (%s-bound, comm %s) [FFN]\n",
            fmt_u(a, sizeof a, s->ffn_s, FFN_UNIT_TIME), ffn_bound_name(s->ffn_bound),
            fmt_u(b, sizeof b, s->ffn_comm_s, FFN_UNIT_TIME));
    fprintf(fp, "           + attn proj %s + %s %s + all-reduce %s [other]\n",
            fmt_u(a, sizeof a, s->attn_proj_s, FFN_UNIT_TIME),
            s->phase == FFN_PHASE_DECODE ? "KV read" : "attention",
            fmt_u(b, sizeof b, s->attn_core_s, FFN_UNIT_TIME),
            fmt_u(c, sizeof c, s->attn_comm_s, FFN_UNIT_TIME));
    fprintf(fp, "           + LM head %s [other] = %s; FFN share %.1f%%\n",
            fmt_u(a, sizeof a, s->lm_head_s, FFN_UNIT_TIME),
            fmt_u(b, sizeof b, s->step_s, FFN_UNIT_TIME), 100 * s->ffn_share);
    double slo = o->phase == FFN_PLAN_PREFILL ? o->ttft_s : o->tpot_s;
    if (slo > 0)
        fprintf(fp, "  SLO      %s %s: largest batch meeting it (binary search) %llu\n",
                o->phase == FFN_PLAN_PREFILL ? "TTFT" : "TPOT",
                fmt_u(a, sizeof a, slo, FFN_UNIT_TIME), (unsigned long long)L->max_batch);
    if (o->phase != FFN_PLAN_DECODE || o->ttft_s > 0)
        fprintf(
            fp, "  TTFT     %s for a prefill of %llu x %llu tokens\n",
            fmt_u(a, sizeof a, L->ttft_s, FFN_UNIT_TIME),
            (unsigned long long)(o->phase == FFN_PLAN_PREFILL ? L->max_batch : o->prefill_batch),
            (unsigned long long)o->prompt);
    if (L->max_batch) {
        if (o->phase == FFN_PLAN_BOTH)
            fprintf(fp,
                    "  rate     %llu x %llu / (%llu x %s + %llu prefills x %s)\n"
                    "           = %.5g tokens/s per replica\n",
                    (unsigned long long)L->max_batch, (unsigned long long)o->output,
                    (unsigned long long)o->output, fmt_u(a, sizeof a, s->step_s, FFN_UNIT_TIME),
                    (unsigned long long)((L->max_batch + o->prefill_batch - 1) / o->prefill_batch),
                    fmt_u(b, sizeof b, L->ttft_s, FFN_UNIT_TIME), L->tokens_per_s_replica);
        else
            fprintf(fp, "  rate     %llu%s / %s = %.5g tokens/s per replica\n",
                    (unsigned long long)L->max_batch,
                    o->phase == FFN_PLAN_PREFILL ? " x prompt" : "",
                    fmt_u(a, sizeof a, s->step_s, FFN_UNIT_TIME), L->tokens_per_s_replica);
        fprintf(fp, "           / %llu devices = %.5g tokens/s per device\n",
                (unsigned long long)(L->tp * L->ep), L->tokens_per_s_device);
        if (o->target_tokens_per_s > 0)
            fprintf(fp, "  fleet    ceil(%.6g / %.5g) = %llu replicas = %llu devices\n",
                    o->target_tokens_per_s, L->tokens_per_s_replica,
                    (unsigned long long)L->replicas, (unsigned long long)L->devices);
        if (isfinite(L->tokens_per_s_per_watt))
            fprintf(fp, "  power    %.5g tokens/s / (%llu x %s) = %.4g tokens/s per W\n",
                    L->tokens_per_s_fleet, (unsigned long long)L->devices,
                    fmt_u(a, sizeof a, p->hw->tdp_w, FFN_UNIT_POWER), L->tokens_per_s_per_watt);
        if (isfinite(L->tokens_per_dollar))
            fprintf(fp, "  cost     %.4g tokens per dollar at $%.4g per device-hour\n",
                    L->tokens_per_dollar, o->price_per_hour);
    }
    fprintf(fp, "  limit    %s%s%.60s\n", ffn_bottleneck_name(L->bottleneck), L->why[0] ? ": " : "",
            L->why);
}

static void json_layout(ffn_json *j, const pair *p, const ffn_plan_layout *L, int rank)
{
    ffn_json_obj_begin(j, NULL);
    if (rank > 0) ffn_json_u64(j, "rank", (uint64_t)rank);
    ffn_json_str(j, "model", p->m->name);
    ffn_json_str(j, "hw", p->hw->name);
    ffn_json_bool(j, "valid", L->valid);
    ffn_json_bool(j, "feasible", L->feasible);
    ffn_json_u64(j, "devices", L->devices);
    /* the devices the weights alone need by capacity (SRAM-first devices: chips on chip) */
    ffn_json_u64(j, "devices_for_weights", p->plan->devices_for_weights);
    ffn_json_u64(j, "tp", L->tp);
    ffn_json_u64(j, "ep", L->ep);
    ffn_json_u64(j, "replicas", L->replicas);
    ffn_json_bool(j, "fits", L->fits);
    ffn_json_num(j, "memory_per_device_bytes", L->mem.total_bytes);
    ffn_json_obj_begin(j, "memory");
    ffn_json_num(j, "weight_bytes", L->mem.weight_bytes);
    ffn_json_num(j, "ffn_weight_bytes", L->mem.ffn_weight_bytes);
    ffn_json_num(j, "other_weight_bytes", L->mem.other_weight_bytes);
    ffn_json_num(j, "kv_cache_bytes", L->mem.kv_bytes);
    ffn_json_num(j, "kv_cache_per_seq_bytes", L->mem.kv_bytes_per_seq);
    ffn_json_num(j, "activation_bytes", L->mem.activation_bytes);
    ffn_json_num(j, "usable_bytes", L->mem.usable_bytes);
    ffn_json_obj_end(j);
    ffn_json_u64(j, "max_batch", L->max_batch);
    ffn_json_u64(j, "mem_batch", L->mem_batch);
    ffn_json_num(j, "step_s", L->valid ? L->step.step_s : NAN);
    ffn_json_num(j, "ttft_s", L->ttft_s > 0 ? L->ttft_s : NAN);
    ffn_json_num(j, "tokens_per_s", L->tokens_per_s_fleet);
    ffn_json_num(j, "tokens_per_s_replica", L->tokens_per_s_replica);
    ffn_json_num(j, "tokens_per_s_device", L->tokens_per_s_device);
    ffn_json_num(j, "tokens_per_s_per_watt", L->tokens_per_s_per_watt);
    ffn_json_num(j, "tokens_per_dollar", L->tokens_per_dollar);
    ffn_json_str(j, "bottleneck", L->valid ? ffn_bottleneck_name(L->bottleneck) : "invalid");
    if (!L->feasible) ffn_json_num(j, "miss", L->miss > 0 ? L->miss : NAN);
    if (L->why[0]) ffn_json_str(j, "why", L->why);
    if (L->valid) {
        const ffn_plan_step *s = &L->step;
        ffn_json_obj_begin(j, "step");
        ffn_json_str(j, "phase", ffn_phase_name(s->phase));
        ffn_json_u64(j, "batch", s->batch);
        ffn_json_u64(j, "seqs_per_device", s->seqs_device);
        ffn_json_u64(j, "context", s->context);
        ffn_json_num(j, "step_s", s->step_s);
        /* the predicted (median) step's range; step_s is its p90 end with --margin p90 */
        ffn_json_num(j, "step_p10_s", s->step_p10_s);
        ffn_json_num(j, "step_p90_s", s->step_p90_s);
        ffn_json_num(j, "margin_scale", s->margin_scale);
        ffn_json_bool(j, "range_default", s->range_default);
        ffn_json_num(j, "ffn_share", s->ffn_share);
        ffn_json_str(j, "ffn_bound", ffn_bound_name(s->ffn_bound));
        ffn_json_arr_begin(j, "parts");
        const struct {
            const char *name, *label;
            double v;
        } parts[] = {
            {"ffn", "ffn", s->ffn_s - s->ffn_comm_s},
            {"ffn_comm", "ffn", s->ffn_comm_s},
            {"attn_proj", "other", s->attn_proj_s},
            {s->phase == FFN_PHASE_DECODE ? "kv_read" : "attention", "other", s->attn_core_s},
            {"attn_allreduce", "other", s->attn_comm_s},
            {"lm_head", "other", s->lm_head_s}};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            ffn_json_obj_begin(j, NULL);
            ffn_json_str(j, "name", parts[i].name);
            ffn_json_str(j, "label", parts[i].label);
            ffn_json_num(j, "seconds", parts[i].v);
            ffn_json_obj_end(j);
        }
        ffn_json_arr_end(j);
        if (s->phase == FFN_PHASE_DECODE) ffn_json_num(j, "kv_read_bytes", s->kv_read_bytes);
        ffn_json_num(j, "attention_flops", s->attn_core_flops);
        ffn_json_run(j, "ffn", &s->ffn);
        ffn_json_obj_end(j);
    }
    ffn_json_obj_end(j);
}

static int write_json(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o, pair *pairs,
                      size_t np)
{
    ffn_json j;
    ffn_json_init(&j, fp, true);
    ffn_json_obj_begin(&j, NULL);
    ffn_json_str(&j, "schema", "ffnroof.plan/1");
    ffn_json_obj_begin(&j, "scenario");
    ffn_json_str(&j, "name", sc->name);
    if (sc->path[0]) ffn_json_str(&j, "path", sc->path);
    ffn_json_str(&j, "phase", ffn_plan_phase_name(o->phase));
    ffn_json_u64(&j, "prompt", o->prompt);
    ffn_json_u64(&j, "output", o->output);
    ffn_json_str(&j, "wdtype", ffn_dtype_name(o->wdtype));
    ffn_json_str(&j, "adtype", ffn_dtype_name(o->adtype));
    ffn_json_str(&j, "kv_dtype", ffn_dtype_name(o->kv_dtype));
    ffn_json_num(&j, "tpot_s", o->tpot_s > 0 ? o->tpot_s : NAN);
    ffn_json_num(&j, "ttft_s", o->ttft_s > 0 ? o->ttft_s : NAN);
    ffn_json_num(&j, "target_tokens_per_s",
                 o->target_tokens_per_s > 0 ? o->target_tokens_per_s : NAN);
    ffn_json_u64(&j, "max_devices", o->max_devices);
    ffn_json_str(&j, "objective", ffn_objective_name(g_obj));
    ffn_json_str(&j, "margin", o->margin == FFN_MARGIN_P90 ? "p90" : "median");
    ffn_json_obj_end(&j);
    bool any = false;
    ffn_json_arr_begin(&j, "plans");
    for (size_t i = 0; i < np; i++) {
        const ffn_plan_layout *L = shown(&pairs[i]);
        if (!L) continue;
        any |= L->feasible;
        json_layout(&j, &pairs[i], L, L->feasible ? pairs[i].rank : 0);
    }
    ffn_json_arr_end(&j);
    ffn_json_bool(&j, "feasible", any);
    ffn_json_arr_begin(&j, "layouts");
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pairs[i].plan->n_layouts; k++)
            json_layout(&j, &pairs[i], &pairs[i].plan->layouts[k], 0);
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}

static void csv_text(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"') fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

static int write_csv(FILE *fp, pair *pairs, size_t np)
{
    fputs("model,hw,rank,chosen,valid,feasible,tp,ep,replicas,devices,fits,"
          "memory_per_device_bytes,weight_bytes,kv_cache_bytes,activation_bytes,max_batch,"
          "mem_batch,step_s,ffn_s,ffn_comm_s,attn_proj_s,attn_core_s,attn_comm_s,lm_head_s,"
          "ffn_share,ttft_s,tokens_per_s,tokens_per_s_device,tokens_per_s_per_watt,"
          "tokens_per_dollar,bottleneck,miss,why\n",
          fp);
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pairs[i].plan->n_layouts; k++) {
            const ffn_plan_layout *L = &pairs[i].plan->layouts[k];
            const ffn_plan_step *s = &L->step;
            bool chosen = (int)k == pairs[i].show;
            fprintf(fp, "%s,%s,", pairs[i].m->name, pairs[i].hw->name);
            if (chosen && L->feasible) fprintf(fp, "%d", pairs[i].rank);
            fprintf(fp, ",%d,%d,%d,%llu,%llu,%llu,%llu,%d,%.6e,%.6e,%.6e,%.6e,%llu,%llu,", chosen,
                    L->valid, L->feasible, (unsigned long long)L->tp, (unsigned long long)L->ep,
                    (unsigned long long)L->replicas, (unsigned long long)L->devices, L->fits,
                    L->mem.total_bytes, L->mem.weight_bytes, L->mem.kv_bytes,
                    L->mem.activation_bytes, (unsigned long long)L->max_batch,
                    (unsigned long long)L->mem_batch);
            if (L->valid)
                fprintf(fp, "%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6g,", s->step_s, s->ffn_s,
                        s->ffn_comm_s, s->attn_proj_s, s->attn_core_s, s->attn_comm_s, s->lm_head_s,
                        s->ffn_share);
            else
                fputs(",,,,,,,,", fp);
            double v[] = {L->ttft_s > 0 ? L->ttft_s : NAN, L->tokens_per_s_fleet,
                          L->tokens_per_s_device, L->tokens_per_s_per_watt, L->tokens_per_dollar};
            for (size_t q = 0; q < sizeof v / sizeof v[0]; q++) {
                if (isfinite(v[q]) && (q == 0 || L->max_batch)) fprintf(fp, "%.6e", v[q]);
                fputc(',', fp);
            }
            fprintf(fp, "%s,", L->valid ? ffn_bottleneck_name(L->bottleneck) : "invalid");
            if (!L->feasible && L->miss > 0) fprintf(fp, "%.6g", L->miss);
            fputc(',', fp);
            csv_text(fp, L->why);
            fputc('\n', fp);
        }
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", required_argument, 0, O_SCEN},
                                         {"model", required_argument, 0, O_MODEL},
                                         {"hw", required_argument, 0, O_HW},
                                         {"phase", required_argument, 0, O_PHASE},
                                         {"prompt", required_argument, 0, O_PROMPT},
                                         {"output", required_argument, 0, O_OUTPUT},
                                         {"prefill-batch", required_argument, 0, O_PBATCH},
                                         {"chunk", required_argument, 0, O_CHUNK},
                                         {"dtype", required_argument, 0, O_DTYPE},
                                         {"wdtype", required_argument, 0, O_WDTYPE},
                                         {"adtype", required_argument, 0, O_ADTYPE},
                                         {"kv-dtype", required_argument, 0, O_KVDT},
                                         {"tpot", required_argument, 0, O_TPOT},
                                         {"ttft", required_argument, 0, O_TTFT},
                                         {"target", required_argument, 0, O_TARGET},
                                         {"max-devices", required_argument, 0, O_MAXDEV},
                                         {"max-batch", required_argument, 0, O_MAXB},
                                         {"mem-util", required_argument, 0, O_MEMU},
                                         {"tp", required_argument, 0, O_TP},
                                         {"ep", required_argument, 0, O_EP},
                                         {"ep-uneven", no_argument, 0, O_EPU},
                                         {"price", required_argument, 0, O_PRICE},
                                         {"objective", required_argument, 0, O_OBJ},
                                         {"margin", required_argument, 0, O_MARGIN},
                                         {"weights", required_argument, 0, O_WEIGHTS},
                                         {"onchip", no_argument, 0, O_ONCHIP},
                                         {"zipf", required_argument, 0, O_ZIPF},
                                         {"trials", required_argument, 0, O_TRIALS},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"capacity-factor", required_argument, 0, O_CAP},
                                         {"devices-per-node", required_argument, 0, O_DPN},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"explain", no_argument, 0, O_EXPLAIN},
                                         {"all", no_argument, 0, O_ALL},
                                         {"out", required_argument, 0, O_OUT},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    /* First pass: collect the values (the last one wins) so that the scenario loads first and
     * the flags then override it. */
    const char *val[O_END - O_SCEN] = {0};
    const char *prices[FFN_SC_MAX_REFS];
    size_t n_prices = 0;
    int c;
    ffn_cli_seen seen = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (ffn_cli_once(CMD, &seen, opts, c, (const int[]){O_PRICE, 0})) return FFN_EXIT_USAGE;
        if (c == 'h') {
            usage(stdout);
            return FFN_EXIT_OK;
        }
        if (c == ':') return ffn_cli_usage(CMD, "option '%s' needs a value", argv[optind - 1]);
        if (c < O_SCEN || c >= O_END)
            return ffn_cli_usage(CMD, "unknown option '%s'", argv[optind - 1]);
        if (c == O_PRICE) {
            if (n_prices >= FFN_SC_MAX_REFS) return ffn_cli_usage(CMD, "too many --price options");
            prices[n_prices++] = optarg;
        }
        val[c - O_SCEN] = optarg ? optarg : "";
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
#define V(o) val[(o)-O_SCEN]

    static ffn_scenario sc;
    int rc;
    {
        int r = ffn_cli_scenario_start(CMD, V(O_SCEN), V(O_MODEL), V(O_HW), &sc);
        if (r) return r;
    }
    ffn_plan_opts *o = &sc.plan;
    ffn_format fmt = FFN_FMT_TABLE;
    uint64_t v;
    if (V(O_MODEL) && (rc = ffn_cli_refs(CMD, "--model", V(O_MODEL), sc.models, &sc.n_models))) goto out;
    if (V(O_HW)) {
        if ((rc = ffn_cli_refs(CMD, "--hw", V(O_HW), sc.hws, &sc.n_hws))) goto out;
        memset(sc.price_per_hour, 0, sizeof sc.price_per_hour);
    }
    if (V(O_PHASE) && ffn_plan_phase_parse(V(O_PHASE), &o->phase)) {
        rc = ffn_cli_usage(CMD, "--phase must be decode, prefill or both; got '%s'", V(O_PHASE));
        goto out;
    }
    if ((V(O_PROMPT) &&
         (rc = ffn_cli_u64(CMD, "--prompt", V(O_PROMPT), 1, 1u << 24, &o->prompt))) ||
        (V(O_OUTPUT) &&
         (rc = ffn_cli_u64(CMD, "--output", V(O_OUTPUT), 1, 1u << 24, &o->output))) ||
        (V(O_PBATCH) &&
         (rc = ffn_cli_u64(CMD, "--prefill-batch", V(O_PBATCH), 1, 1u << 20, &o->prefill_batch))) ||
        (V(O_CHUNK) && (rc = ffn_cli_u64(CMD, "--chunk", V(O_CHUNK), 1, 1u << 24, &o->chunk))))
        goto out;
    if (V(O_DTYPE) && (V(O_WDTYPE) || V(O_ADTYPE))) {
        rc = ffn_cli_usage(CMD, "use either --dtype or --wdtype/--adtype, not both");
        goto out;
    }
    if (V(O_DTYPE)) {
        if ((rc = dtype_opt("--dtype", V(O_DTYPE), &o->wdtype))) goto out;
        o->adtype = o->kv_dtype = o->wdtype;
    }
    if (V(O_WDTYPE) && (rc = dtype_opt("--wdtype", V(O_WDTYPE), &o->wdtype))) goto out;
    if (V(O_ADTYPE)) {
        if ((rc = dtype_opt("--adtype", V(O_ADTYPE), &o->adtype))) goto out;
        o->kv_dtype = o->adtype;
    }
    if (V(O_KVDT) && (rc = dtype_opt("--kv-dtype", V(O_KVDT), &o->kv_dtype))) goto out;
    if ((V(O_TPOT) && (rc = time_opt("--tpot", V(O_TPOT), &o->tpot_s))) ||
        (V(O_TTFT) && (rc = time_opt("--ttft", V(O_TTFT), &o->ttft_s))) ||
        (V(O_TARGET) &&
         (rc = ffn_cli_double(CMD, "--target", V(O_TARGET), 1e-6, 1e15, &o->target_tokens_per_s))))
        goto out;
    if (V(O_MAXDEV) && !strcmp(V(O_MAXDEV), "0")) {
        rc = ffn_cli_usage(CMD, "--max-devices is 0: a plan needs at least one device");
        goto out;
    }
    if ((V(O_MAXDEV) &&
         (rc = ffn_cli_u64(CMD, "--max-devices", V(O_MAXDEV), 1, 1u << 24, &o->max_devices))) ||
        (V(O_MAXB) &&
         (rc = ffn_cli_u64(CMD, "--max-batch", V(O_MAXB), 1, 1u << 24, &o->max_batch))) ||
        (V(O_MEMU) &&
         (rc = ffn_cli_double(CMD, "--mem-util", V(O_MEMU), 0.01, 1.0, &o->mem_utilization))) ||
        (V(O_TP) && (rc = degree_list("--tp", V(O_TP), o->tp, &o->n_tp))) ||
        (V(O_EP) && (rc = degree_list("--ep", V(O_EP), o->ep, &o->n_ep))))
        goto out;
    if (V(O_EPU)) o->moe.ep_uneven = true;
    if (V(O_WEIGHTS) && ffn_weights_parse(V(O_WEIGHTS), &o->weights)) {
        rc = ffn_cli_usage(CMD, "--weights: '%s' is not hot, cold or auto", V(O_WEIGHTS));
        goto out;
    }
    if (V(O_ONCHIP)) o->onchip = true;
    if (V(O_MARGIN)) {
        if (!strcmp(V(O_MARGIN), "median")) o->margin = FFN_MARGIN_MEDIAN;
        else if (!strcmp(V(O_MARGIN), "p90")) o->margin = FFN_MARGIN_P90;
        else {
            rc = ffn_cli_usage(CMD, "--margin must be median or p90; got '%s'", V(O_MARGIN));
            goto out;
        }
    }
    if (V(O_OBJ) && ffn_objective_parse(V(O_OBJ), &o->objective)) {
        rc = ffn_cli_usage(CMD,
                           "--objective must be devices, tokens_per_device, tokens_per_watt "
                           "or tokens_per_dollar; got '%s'",
                           V(O_OBJ));
        goto out;
    }
    if ((V(O_ZIPF) && (rc = ffn_cli_double(CMD, "--zipf", V(O_ZIPF), 0, 100, &o->moe.zipf_s))) ||
        (V(O_TRIALS) &&
         (rc = ffn_cli_u64(CMD, "--trials", V(O_TRIALS), 1, 1000000, &o->moe.trials))) ||
        (V(O_SEED) && (rc = ffn_cli_u64(CMD, "--seed", V(O_SEED), 0, UINT64_MAX, &o->moe.seed))) ||
        (V(O_CAP) && (rc = ffn_cli_double(CMD, "--capacity-factor", V(O_CAP), 0.01, 1000,
                                          &o->moe.capacity_factor))) ||
        (V(O_DPN) && (rc = ffn_cli_u64(CMD, "--devices-per-node", V(O_DPN), 1, 4096,
                                       &o->moe.devices_per_node))) ||
        (V(O_FORMAT) && (rc = ffn_cli_format(CMD, V(O_FORMAT), &fmt, true))))
        goto out;
    for (size_t i = 0; i < n_prices; i++) {
        const char *eq = strchr(prices[i], '=');
        size_t k = 0;
        if (eq)
            while (k < sc.n_hws && (strlen(sc.hws[k].name) != (size_t)(eq - prices[i]) ||
                                    strncmp(sc.hws[k].name, prices[i], (size_t)(eq - prices[i]))))
                k++;
        if (!eq || k == sc.n_hws) {
            rc = ffn_cli_usage(
                CMD, "--price needs DEVICE=USD for a device of --hw/the scenario; got '%s'",
                prices[i]);
            goto out;
        }
        if ((rc = ffn_cli_double(CMD, "--price", eq + 1, 1e-6, 1e6, &sc.price_per_hour[k])))
            goto out;
    }
    (void)v;
    if (sc.n_models * sc.n_hws > MAX_PAIRS) {
        rc = ffn_cli_usage(CMD, "%zu models x %zu devices is more than %d pairs", sc.n_models,
                           sc.n_hws, MAX_PAIRS);
        goto out;
    }

    /* Load the models and devices (unknown names list the known ones). */
    static ffn_model models[FFN_SC_MAX_REFS];
    static ffn_hw hws[FFN_SC_MAX_REFS];
    if ((rc = ffn_cli_load_scenario_inputs(&sc, hws, models))) goto out;
    g_obj = o->objective < FFN_OBJ_COUNT ? o->objective
            : o->target_tokens_per_s > 0 ? FFN_OBJ_DEVICES
                                         : FFN_OBJ_TOKENS_PER_DEVICE;
    if (g_obj == FFN_OBJ_TOKENS_PER_DOLLAR) {
        for (size_t k = 0; k < sc.n_hws; k++)
            if (!(sc.price_per_hour[k] > 0)) {
                rc = ffn_cli_usage(CMD,
                                   "objective tokens_per_dollar needs a price for '%s' "
                                   "(price_per_hour or --price %s=USD)",
                                   sc.hws[k].name, sc.hws[k].name);
                goto out;
            }
    }
    pair pairs[MAX_PAIRS];
    size_t np = 0;
    for (size_t i = 0; i < sc.n_models; i++)
        for (size_t k = 0; k < sc.n_hws; k++) {
            pair *p = &pairs[np];
            p->m = &models[i];
            p->hw = &hws[k];
            p->hw_index = k;
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
        }
    qsort(pairs, np, sizeof pairs[0], cmp_pairs);
    for (size_t i = 0, r = 0; i < np; i++) {
        if (i && pairs[i].m != pairs[i - 1].m) r = 0;
        pairs[i].rank = (int)++r;
    }

    {
        ffn_cli_out out;
        if ((rc = ffn_cli_out_open(CMD, &out, V(O_OUT)))) goto free_out;
        int wr = 0;
        if (fmt == FFN_FMT_JSON)
            wr = write_json(out.fp, &sc, o, pairs, np);
        else if (fmt == FFN_FMT_CSV)
            wr = write_csv(out.fp, pairs, np);
        else
            write_table(out.fp, &sc, o, pairs, np, V(O_ALL) != NULL);
        if (V(O_EXPLAIN) && fmt == FFN_FMT_TABLE && np) explain(out.fp, &pairs[0]);
        if (V(O_EXPLAIN) && fmt != FFN_FMT_TABLE && np) explain(stderr, &pairs[0]);
        if (ferror(out.fp)) wr = FFN_EIO;
        rc = ffn_cli_out_close(CMD, &out, wr == 0);
    }
free_out:
    for (size_t i = 0; i < np; i++)
        free(pairs[i].plan);
out:
    ffn_scenario_release(&sc);
    return rc;
#undef V
}
