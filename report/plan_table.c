/* The views of `ffnroof plan` (include/ffnroof/plan_report.h, docs/plan.md): the table of the
 * ranked (model, device) plans in 80 columns, the disaggregated pools beneath each, the launch
 * command, and the arithmetic behind one plan. */
#include "ffnroof/plan_report.h"

#include <math.h>
#include <string.h>

#include "ffnroof/predict_write.h"
#include "ffnroof/units.h"

static const ffn_plan_layout *shown(const ffn_plan_pair *p)
{
    return p->show >= 0 ? &p->plan->layouts[p->show] : NULL;
}

/* The layout as engines name it: "TP8", "TP8/EP8", "DP8/EP8", "TP2/DP4/EP8", "TP4/PP2". */
static void layout_str(char *b, size_t n, const ffn_plan_layout *L)
{
    const ffn_plan_shape s = {L->tp, L->dp, L->ep, L->pp};
    ffn_plan_shape_name(&s, b, n);
}

/* Text from column `indent`, broken at spaces so no line passes `width` columns. */
static void wrap(FILE *fp, const char *t, int indent, int width)
{
    while (*t) {
        int room = width - indent - 1, n = (int)strlen(t);
        if (n > room) {
            n = room;
            while (n > 0 && t[n] != ' ')
                n--;
            if (n == 0) n = room;
        }
        fprintf(fp, "%*s %.*s\n", indent, "", n, t);
        t += n;
        while (*t == ' ')
            t++;
    }
}

/* A command broken before its options, each line but the last ending in " \\", so that it
 * pastes into a shell as it is. */
static void wrap_command(FILE *fp, const char *t, int indent, int width)
{
    int col = 0;
    while (*t) {
        const char *next = strstr(t + 1, " --");
        int n = next ? (int)(next - t) : (int)strlen(t);
        if (col > 0 && col + n + 2 > width) {
            fputs(" \\\n", fp);
            col = 0;
            while (*t == ' ')
                t++, n--;
        }
        if (col == 0) col = fprintf(fp, "%*s", indent, "");
        col += fprintf(fp, "%.*s", n, t);
        t += n;
    }
    fputc('\n', fp);
}

/* "$12.3" or "-" without a price */
static const char *usd_str(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, v >= 100 ? "$%.0f" : "$%.3g", v);
    else
        snprintf(b, n, "-");
    return b;
}

static void table_row(FILE *fp, int rank, const ffn_hw *hw, const ffn_plan_layout *L)
{
    char lay[40], step[24], rk[16], uh[16], um[16];
    layout_str(lay, sizeof lay, L);
    if (rank > 0)
        snprintf(rk, sizeof rk, "%d", rank);
    else
        snprintf(rk, sizeof rk, "-");
    if (!L->valid) {
        fprintf(fp, "%2s %-13s %-11s  %.70s\n", rk, hw->name, lay, L->why);
        return;
    }
    if (!L->feasible && L->max_batch == 0) {
        fprintf(fp, "%2s %-13s %-11s  %.70s\n", rk, hw->name, lay, L->why);
        return;
    }
    char ttft[24];
    ffn_units_str(step, sizeof step, L->step.step_s, FFN_UNIT_TIME);
    if (L->ttft_s > 0)
        ffn_units_str(ttft, sizeof ttft, L->ttft_s, FFN_UNIT_TIME);
    else
        snprintf(ttft, sizeof ttft, "-");
    /* the step time is on the line below, with its range */
    fprintf(fp, "%2s %-13s %-11s %4llu %5llu %7s %8.0f %8.0f %6s %6s%s\n", rk, hw->name, lay,
            (unsigned long long)L->devices, (unsigned long long)L->max_batch, ttft,
            L->tokens_per_s_device, L->tokens_per_s_fleet, usd_str(uh, sizeof uh, L->usd_per_hour),
            usd_str(um, sizeof um, L->usd_per_mtok), L->feasible ? "" : " (infeasible)");
    char rg[80], watt[24];
    if (isfinite(L->tokens_per_s_per_watt))
        snprintf(watt, sizeof watt, "; %.3g tok/s/W", L->tokens_per_s_per_watt);
    else
        watt[0] = '\0';
    fprintf(fp, "%3s step %s %s%s; FFN %.0f%%%s; %s\n", "",
            ffn_units_str(step, sizeof step, L->step.step_s / L->step.margin_scale, FFN_UNIT_TIME),
            ffn_range_text(rg, sizeof rg, L->step.step_s / L->step.margin_scale, L->step.step_p10_s,
                           L->step.step_p90_s, L->step.range_default, false),
            L->step.margin_scale != 1.0 ? ", sized at p90" : "", 100.0 * L->step.ffn_share, watt,
            ffn_bottleneck_name(L->bottleneck));
    if (!L->feasible) wrap(fp, L->why, 3, 80);
}

/* Phase both: the disaggregated pools under the aggregated row, and which wins. */
static void disagg_rows(FILE *fp, const ffn_plan_pair *p)
{
    const ffn_plan_disagg *g = p->disagg;
    char lay[40], a[24], b[24], c[24];
    if (g->prefill >= 0 && g->decode >= 0) {
        const ffn_plan_layout *P = &p->prefill->layouts[g->prefill];
        const ffn_plan_layout *D = &p->decode->layouts[g->decode];
        layout_str(lay, sizeof lay, P);
        fprintf(fp, "%3s disaggregated: prefill %s x %llu (%s + KV %s = TTFT %s)\n", "", lay,
                (unsigned long long)g->prefill_batch,
                ffn_units_str(a, sizeof a, g->prefill_step_s, FFN_UNIT_TIME),
                ffn_units_str(b, sizeof b, g->kv_transfer_s, FFN_UNIT_TIME),
                ffn_units_str(c, sizeof c, g->ttft_s, FFN_UNIT_TIME));
        layout_str(lay, sizeof lay, D);
        fprintf(fp, "%3s   decode %s x %llu (TPOT %s)\n", "", lay, (unsigned long long)D->max_batch,
                ffn_units_str(a, sizeof a, g->tpot_s, FFN_UNIT_TIME));
        fprintf(fp, "%3s   %.0f%% of the devices prefill; %.0f tok/s/dev\n", "",
                100.0 * g->prefill_share, g->tokens_per_s_device);
        if (g->devices)
            fprintf(fp, "%3s   %llu devices for the target (%llu prefill, %llu decode)\n", "",
                    (unsigned long long)g->devices, (unsigned long long)g->prefill_devices,
                    (unsigned long long)g->decode_devices);
    }
    wrap(fp, g->why, 3, 80);
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
    if (o->tpot_s > 0)
        fprintf(fp, " TPOT %s", ffn_units_str(a, sizeof a, o->tpot_s, FFN_UNIT_TIME));
    if (o->ttft_s > 0)
        fprintf(fp, " TTFT %s", ffn_units_str(b, sizeof b, o->ttft_s, FFN_UNIT_TIME));
    if (o->tpot_s <= 0 && o->ttft_s <= 0) fprintf(fp, " none");
    fprintf(fp, "\n         ");
    if (o->target_tokens_per_s > 0) fprintf(fp, "target %.6g tokens/s; ", o->target_tokens_per_s);
    fprintf(fp, "<= %llu devices; objective %s; margin %s\n", (unsigned long long)o->max_devices,
            ffn_objective_name(o->objective), o->margin == FFN_MARGIN_P90 ? "p90" : "median");
}

void ffn_plan_write_table(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                          const ffn_plan_pair *pairs, size_t np, bool all)
{
    describe(fp, sc, o);
    const ffn_model *cur = NULL;
    for (size_t i = 0; i < np; i++) {
        const ffn_plan_pair *p = &pairs[i];
        if (p->m != cur) {
            cur = p->m;
            fprintf(fp, "\nmodel    %s\n", cur->name);
            fprintf(fp, "%2s %-13s %-11s %4s %5s %7s %8s %8s %6s %6s\n", "#", "device", "layout",
                    "devs", "batch", "TTFT", "tok/s", "fleet", "$/h", "$/Mtok");
        }
        const ffn_plan_layout *L = shown(p);
        if (!L) {
            /* every layout is impossible: the first one's reason, then (--all) every one */
            fprintf(fp, "%2s %-13s no layout is possible%s\n", "-", p->hw->name,
                    p->plan->n_layouts && p->plan->layouts[0].why[0] ? "; e.g." : "");
            if (p->plan->n_layouts && p->plan->layouts[0].why[0])
                wrap(fp, p->plan->layouts[0].why, 5, 80);
            for (size_t k = 0; all && k < p->plan->n_layouts; k++)
                table_row(fp, 0, p->hw, &p->plan->layouts[k]);
            continue;
        }
        table_row(fp, L->feasible ? p->rank : 0, p->hw, L);
        if (!L->feasible) fprintf(fp, "%3s ^ infeasible; this is the closest miss\n", "");
        if (p->launch) {
            fprintf(fp, "%3s launch:\n", "");
            wrap_command(fp, p->launch, 6, 80);
            if (p->launch_note && p->launch_note[0]) {
                char nt[600];
                snprintf(nt, sizeof nt, "(%s)", p->launch_note);
                wrap(fp, nt, 5, 80);
            }
        }
        if (p->disagg) disagg_rows(fp, p);
        if (!L->feasible && p->plan->devices_for_weights > L->devices) {
            char wb[32], ub[32];
            fprintf(fp, "%3s   the weights alone (%s) need >= %llu devices of %s usable\n", "",
                    ffn_units_str(wb, sizeof wb, p->plan->weight_bytes_all, FFN_UNIT_BYTES),
                    (unsigned long long)p->plan->devices_for_weights,
                    ffn_units_str(ub, sizeof ub, p->hw->mem_capacity_bytes * o->mem_utilization,
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
    fprintf(fp,
            "\nlayout = attention TP/DP, experts EP on those devices, PP stages (docs/plan.md)\n"
            "TTFT = the first token's prefill; tok/s = %s tokens a second per device,\n"
            "fleet = of every replica the target needs; step = one %s step;\n"
            "$/h = the fleet's price an hour;\n"
            "$/Mtok = per million tokens asked for (with a price); FFN = its share of a step\n",
            o->phase == FFN_PLAN_PREFILL ? "prompt" : "output",
            o->phase == FFN_PLAN_PREFILL ? "prefill" : "decode");
}

/* The arithmetic behind one plan, in a few lines of at most 80 columns. */
void ffn_plan_explain(FILE *fp, const ffn_plan_pair *p)
{
    const ffn_plan_layout *L = shown(p);
    const ffn_plan *pl = p->plan;
    const ffn_plan_opts *o = &pl->opts;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    if (!L) return;
    char lay[40];
    layout_str(lay, sizeof lay, L);
    fprintf(fp, "\nexplain  %s on %s: %s x %llu replicas = %llu devices%s\n", p->m->name,
            p->hw->name, lay, (unsigned long long)L->replicas, (unsigned long long)L->devices,
            L->feasible ? "" : " (closest miss)");
    const ffn_plan_mem *m = &L->mem;
    fprintf(fp, "  weights  %.4g G params, W %s: %s/device (FFN %s, other %s)\n",
            (double)pl->params.total / 1e9, ffn_dtype_name(o->wdtype),
            ffn_units_str(a, sizeof a, m->weight_bytes, FFN_UNIT_BYTES),
            ffn_units_str(b, sizeof b, m->ffn_weight_bytes, FFN_UNIT_BYTES),
            ffn_units_str(c, sizeof c, m->other_weight_bytes, FFN_UNIT_BYTES));
    uint64_t ctx = o->phase == FFN_PLAN_PREFILL ? o->prompt : o->prompt + o->output;
    fprintf(fp, "  KV       %s/token/layer x %llu layers x %llu tokens = %s per sequence\n",
            ffn_units_str(a, sizeof a, m->kv_bytes_per_token_layer, FFN_UNIT_BYTES),
            (unsigned long long)p->m->layers, (unsigned long long)ctx,
            ffn_units_str(b, sizeof b, m->kv_bytes_per_seq, FFN_UNIT_BYTES));
    fprintf(fp, "  memory   %s usable (%.0f%% of %s); fits up to batch %llu\n",
            ffn_units_str(a, sizeof a, m->usable_bytes, FFN_UNIT_BYTES), 100 * o->mem_utilization,
            ffn_units_str(b, sizeof b, p->hw->mem_capacity_bytes, FFN_UNIT_BYTES),
            (unsigned long long)L->mem_batch);
    fprintf(fp, "           batch %llu: weights %s + KV %s + act. %s = %s\n",
            (unsigned long long)(L->max_batch ? L->max_batch : 1),
            ffn_units_str(c, sizeof c, m->weight_bytes, FFN_UNIT_BYTES),
            ffn_units_str(d, sizeof d, m->kv_bytes, FFN_UNIT_BYTES),
            ffn_units_str(e, sizeof e, m->activation_bytes, FFN_UNIT_BYTES),
            ffn_units_str(f, sizeof f, m->total_bytes, FFN_UNIT_BYTES));
    const ffn_plan_step *s = &L->step;
    fprintf(fp, "  step     %s, batch %llu (%llu seq/device", ffn_phase_name(s->phase),
            (unsigned long long)s->batch, (unsigned long long)s->seqs_device);
    fputs("):\n", fp);
    if (L->pp > 1)
        fprintf(fp, "           %llu stages, %llu micro-batches in flight, bubble %.0f%%\n",
                (unsigned long long)L->pp, (unsigned long long)s->micro_batches,
                100.0 * s->pp_bubble);
    if (s->margin_scale != 1.0)
        fprintf(fp, "           every time below x %.4g: the p90 end of the step's range\n",
                s->margin_scale);
    fprintf(fp, "           FFN %s (%s-bound, comm %s) [FFN]\n",
            ffn_units_str(a, sizeof a, s->ffn_s, FFN_UNIT_TIME), ffn_bound_name(s->ffn_bound),
            ffn_units_str(b, sizeof b, s->ffn_comm_s, FFN_UNIT_TIME));
    const ffn_moe_detail *md = &s->ffn.moe_detail;
    if (s->ffn.moe_fused_s > 0) { /* at p90 with the rest under --margin p90 */
        fprintf(fp, "           of it %s's fused MoE kernels %s ('%s')\n",
                ffn_engine_name(md->fused_engine),
                ffn_units_str(a, sizeof a,
                              s->ffn.moe_fused_s * (s->margin_scale != 1.0 ? md->fused_p90 : 1.0),
                              FFN_UNIT_TIME),
                md->fused);
        if (md->fused_alpha > 0)
            fprintf(fp, "           (the experts' loads a power law of exponent %.3g)\n",
                    md->fused_alpha);
    }
    fprintf(fp, "           + attn proj %s + norms and rotary %s [other]\n",
            ffn_units_str(a, sizeof a, s->attn_proj_s, FFN_UNIT_TIME),
            ffn_units_str(d, sizeof d, s->elem_s, FFN_UNIT_TIME));
    fprintf(fp, "           + %s %s + all-reduce %s [other]\n",
            s->phase == FFN_PHASE_DECODE ? "KV read" : "attention",
            ffn_units_str(b, sizeof b, s->attn_core_s, FFN_UNIT_TIME),
            ffn_units_str(c, sizeof c, s->attn_comm_s, FFN_UNIT_TIME));
    if (L->pp > 1)
        fprintf(fp, "           + stage hops %s [other]\n",
                ffn_units_str(a, sizeof a, s->pp_comm_s, FFN_UNIT_TIME));
    fprintf(fp, "           + LM head %s [other] = %s; FFN share %.1f%%\n",
            ffn_units_str(a, sizeof a, s->lm_head_s, FFN_UNIT_TIME),
            ffn_units_str(b, sizeof b, s->step_s, FFN_UNIT_TIME), 100 * s->ffn_share);
    double slo = o->phase == FFN_PLAN_PREFILL ? o->ttft_s : o->tpot_s;
    if (slo > 0)
        fprintf(fp, "  SLO      %s %s: largest batch meeting it (binary search) %llu\n",
                o->phase == FFN_PLAN_PREFILL ? "TTFT" : "TPOT",
                ffn_units_str(a, sizeof a, slo, FFN_UNIT_TIME), (unsigned long long)L->max_batch);
    if (o->phase != FFN_PLAN_DECODE || o->ttft_s > 0)
        fprintf(
            fp, "  TTFT     %s for a prefill of %llu x %llu tokens\n",
            ffn_units_str(a, sizeof a, L->ttft_s, FFN_UNIT_TIME),
            (unsigned long long)(o->phase == FFN_PLAN_PREFILL ? L->max_batch : o->prefill_batch),
            (unsigned long long)o->prompt);
    if (L->max_batch) {
        if (o->phase == FFN_PLAN_BOTH)
            fprintf(fp,
                    "  rate     %llu x %llu / (%llu x %s + %llu prefills x %s)\n"
                    "           = %.5g tokens/s per replica\n",
                    (unsigned long long)L->max_batch, (unsigned long long)o->output,
                    (unsigned long long)o->output,
                    ffn_units_str(a, sizeof a, s->step_s, FFN_UNIT_TIME),
                    (unsigned long long)((L->max_batch + o->prefill_batch - 1) / o->prefill_batch),
                    ffn_units_str(b, sizeof b, L->ttft_s, FFN_UNIT_TIME), L->tokens_per_s_replica);
        else
            fprintf(fp, "  rate     %llu%s / %s = %.5g tokens/s per replica\n",
                    (unsigned long long)L->max_batch,
                    o->phase == FFN_PLAN_PREFILL ? " x prompt" : "",
                    ffn_units_str(a, sizeof a, s->step_s, FFN_UNIT_TIME), L->tokens_per_s_replica);
        fprintf(fp, "           / %llu devices = %.5g tokens/s per device\n",
                (unsigned long long)(L->tp * L->dp * L->pp), L->tokens_per_s_device);
        if (o->target_tokens_per_s > 0)
            fprintf(fp, "  fleet    ceil(%.6g / %.5g) = %llu replicas = %llu devices\n",
                    o->target_tokens_per_s, L->tokens_per_s_replica,
                    (unsigned long long)L->replicas, (unsigned long long)L->devices);
        if (isfinite(L->tokens_per_s_per_watt))
            fprintf(fp, "  power    %.5g tokens/s / (%llu x %s) = %.4g tokens/s per W\n",
                    L->tokens_per_s_fleet, (unsigned long long)L->devices,
                    ffn_units_str(a, sizeof a, p->hw->tdp_w, FFN_UNIT_POWER),
                    L->tokens_per_s_per_watt);
        if (isfinite(L->tokens_per_dollar))
            fprintf(fp,
                    "  cost     %llu x $%.4g = $%.4g/h; %.4g tokens per $ = $%.4g per million\n",
                    (unsigned long long)L->devices, o->price_per_hour, L->usd_per_hour,
                    L->tokens_per_dollar, L->usd_per_mtok);
    }
    fprintf(fp, "  limit    %s%s%.60s\n", ffn_bottleneck_name(L->bottleneck), L->why[0] ? ": " : "",
            L->why);
}
