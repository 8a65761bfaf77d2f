/* The view of `ffnroof serve` (report/serve_table.c, docs/plan.md "Serving"): per model and
 * device the scheduler and the load, one row per point on the frontier (every point with all),
 * the pick at the interactivity asked for and its cost, and across devices the cheapest. The
 * caller owns the stream; nothing here opens files or exits. */
#include <math.h>
#include <stdio.h>

#include "ffnroof/engine.h"
#include "ffnroof/serve.h"
#include "ffnroof/serve_report.h"

void ffn_serve_write_table(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np,
                           bool all, double user_tps, double ttft_s)
{
    char lay[48];
    for (size_t i = 0; i < np; i++) {
        const ffn_serve_pair *q = &p[i];
        double p10, p90;
        bool def = ffn_serve_range(q->hw, q->wdtype, &q->sched, &p10, &p90);
        const bool srv = q->sched.range_p10 > 0 && q->sched.range_p90 > q->sched.range_p10;
        char seqo[112] = "";
        int n = 0;
        if (q->sched.seq_overhead_s > 0)
            n = snprintf(seqo, sizeof seqo, " + %.3g us a sequence", 1e6 * q->sched.seq_overhead_s);
        if (q->sched.flop_overhead > 0 && n >= 0 && (size_t)n < sizeof seqo)
            snprintf(seqo + n, sizeof seqo - (size_t)n, ", GEMMs + %.3g x their compute time",
                     q->sched.flop_overhead);
        /* how a request enters the KV cache (docs/plan.md "Admission") */
        char admit[128];
        const ffn_engine_sched *s = &q->sched;
        if (!s->kv_grow)
            snprintf(admit, sizeof admit,
                     "KV cache: a request enters with its prompt and whole output held");
        else if (s->reserve_output <= 0)
            snprintf(admit, sizeof admit,
                     "KV cache: filled as sequences grow, the newest preempted when full%s",
                     s->prefix_cache ? " (re-entering from its pages still cached)" : "");
        else if (s->reserve_output_min < s->reserve_output)
            snprintf(admit, sizeof admit,
                     "KV cache: the prompt and %.3g falling to %.3g of the output held, the "
                     "newest preempted when full",
                     s->reserve_output, s->reserve_output_min);
        else
            snprintf(admit, sizeof admit,
                     "KV cache: the prompt and %.3g of the output held, the newest preempted "
                     "when full",
                     s->reserve_output);
        fprintf(fp,
                "%s on %s, %s scheduler: %llu tokens a step, %llu sequences, pages of %llu, "
                "%.3g ms a step overhead%s\n  %s; prompts %s%s\n",
                q->m->name, q->hw->name, ffn_engine_name(q->engine),
                (unsigned long long)s->max_batched_tokens, (unsigned long long)s->max_seqs,
                (unsigned long long)s->page_tokens, 1e3 * s->step_overhead_s, seqo, admit,
                s->prefill_apart ? "in steps of their own (decodes wait)"
                                 : "chunked into the decode steps",
                s->budget_over_dp ? "; DP ranks share the step's tokens, a prompt's chunk at "
                                    "most a rank's share"
                                  : "");
        /* what prices the MoE layers (sim/moe.c, docs/model.md section 10) */
        if (ffn_model_moe_layers(q->m) > 0) {
            const ffn_hw *hw = q->hw;
            const ffn_moe_opts mo = {.generic = q->generic_moe,
                                     .kernel = q->moe_kernel,
                                     .routing_alpha = q->routing_alpha};
            const ffn_engine_moe *f;
            double lo = 0, hi = 0;
            if (!ffn_moe_fused_applies(hw, &mo, q->wdtype, q->adtype, &f, &lo, &hi)) {
                fprintf(fp, "  MoE layers: generic grouped GEMMs at the spec's efficiency\n");
            } else {
                if (f)
                    fprintf(fp,
                            "  MoE layers: %s's fused kernels '%s' (%s weights), their range "
                            "x[%.3g, %.3g]",
                            ffn_engine_name(hw->moe_engine), f->kernels, ffn_dtype_name(f->dtype),
                            lo, hi);
                else
                    fprintf(fp,
                            "  MoE layers: %s's fused module at the model's defaults (no kernel "
                            "family for this device), range x[%.3g, %.3g]",
                            ffn_engine_name(hw->moe_engine), lo, hi);
                /* the routing the kernels are priced on (sim/moe.c) */
                const double a = ffn_moe_routing_alpha(&q->m->moe, &mo);
                if (a > 0)
                    fprintf(fp, "; experts' loads drawn as a power law of exponent %.3g (%s)\n", a,
                            q->routing_alpha >= 0 ? "--routing-alpha" : "the model's");
                else
                    fprintf(fp, "; experts' loads balanced\n");
            }
        }
        fprintf(fp,
                "  workload: %s, prompt %llu, output %llu tokens%s; range: step times x "
                "[%.3g, %.3g] (%s)\n",
                o->mode == FFN_SERVE_RATE      ? "Poisson arrivals"
                : o->mode == FFN_SERVE_OFFLINE ? "offline"
                                               : "closed-loop clients",
                (unsigned long long)o->isl, (unsigned long long)o->osl,
                o->sharegpt_lengths ? " (drawn as ShareGPT's)"
                : o->isl_spread > 0 ? " (drawn)"
                                    : "",
                p10, p90,
                def   ? (srv ? "the stated default and the serving fit's p10/p90"
                             : "the stated default range")
                : srv ? "the device's and the serving fit's p10/p90"
                      : "the device's fitted p10/p90");
        fprintf(fp, "  %-3s %-16s %4s %7s %9s %9s %8s %8s %22s %8s %7s %6s %7s %-15s\n", "",
                "layout", "dev",
                o->mode == FFN_SERVE_RATE      ? "req/s"
                : o->mode == FFN_SERVE_OFFLINE ? "queued"
                                               : "clients",
                "TTFT p50", "TTFT p90", "TPOT p50", "TPOT p90", "tok/s/device (range)", "tok/s/u",
                "req/s", "batch", "ctx", "bound");
        for (size_t k = 0; k < q->n; k++) {
            const ffn_serve_point *pt = &q->pts[k];
            const ffn_serve_result *r = &pt->r;
            if (!all && !pt->frontier && (int)k != q->pick) continue;
            ffn_plan_shape_name(&pt->shape, lay, sizeof lay);
            char mark[4] = "   ";
            if (pt->frontier) mark[1] = '*';
            if ((int)k == q->pick) mark[0] = '>';
            double drive = o->mode == FFN_SERVE_RATE      ? o->rate
                           : o->mode == FFN_SERVE_OFFLINE ? (double)r->requests
                                                          : pt->concurrency;
            char range[40];
            snprintf(range, sizeof range, "%.4g (%.4g-%.4g)", r->output_tokens_per_s_device,
                     pt->tps_device_lo, pt->tps_device_hi);
            if (!r->stable) {
                fprintf(fp,
                        "  %-3s %-16s %4llu %7.4g unstable: the queue grows by %.3g requests/s "
                        "(it serves %.3g of %.3g requests/s)\n",
                        mark, lay, (unsigned long long)ffn_plan_shape_devices(&pt->shape), drive,
                        r->queue_growth, r->requests_per_s, o->rate);
                continue;
            }
            fprintf(fp,
                    "  %-3s %-16s %4llu %7.4g %7.4gms %7.4gms %6.4gms %6.4gms %22s %8.4g %7.4g "
                    "%6.4g %7.5g %-15s\n",
                    mark, lay, (unsigned long long)ffn_plan_shape_devices(&pt->shape), drive,
                    1e3 * r->ttft_p50_s, 1e3 * r->ttft_p90_s, 1e3 * r->tpot_p50_s,
                    1e3 * r->tpot_p90_s, range, r->user_tokens_per_s, r->requests_per_s,
                    r->mean_running, r->mean_context, ffn_serve_bound_name(r->bound));
        }
        for (size_t k = 0; k < q->n_skipped; k++)
            fprintf(fp, "  skipped %s\n", q->skipped[k]);
        if (user_tps > 0) {
            if (q->pick < 0) {
                fprintf(fp, "  nothing serves %.4g tokens/s per user%s on %s\n", user_tps,
                        ttft_s > 0 ? " within the TTFT" : "", q->hw->name);
            } else {
                const ffn_serve_point *pt = &q->pts[q->pick];
                ffn_plan_shape_name(&pt->shape, lay, sizeof lay);
                fprintf(fp,
                        "  > at >= %.4g tokens/s per user%s: %s at %.4g clients, %.4g tokens/s "
                        "per device (%.4g-%.4g)",
                        user_tps, ttft_s > 0 ? " within the TTFT" : "", lay, pt->concurrency,
                        pt->r.output_tokens_per_s_device, pt->tps_device_lo, pt->tps_device_hi);
                if (q->price > 0)
                    fprintf(fp, ", $%.3g per M output tokens ($%.3g-%.3g) at $%.2f/h a device",
                            ffn_serve_usd_per_mtok(q->price, pt->r.output_tokens_per_s_device),
                            ffn_serve_usd_per_mtok(q->price, pt->tps_device_hi),
                            ffn_serve_usd_per_mtok(q->price, pt->tps_device_lo), q->price);
                fputc('\n', fp);
            }
        }
        fputs(i + 1 < np ? "\n" : "", fp);
    }
    fputs("  * on the frontier of tokens/s per device against tokens/s per user; > the pick.\n"
          "  tok/s/u: one user's tokens/s, 1 / median TPOT; batch: mean running sequences; "
          "ctx: mean KV length of a decoding sequence.\n",
          fp);
    if (user_tps > 0 && np > 1) {
        int best = -1;
        double best_cost = INFINITY;
        for (size_t i = 0; i < np; i++) {
            if (p[i].pick < 0) continue;
            double c = ffn_serve_usd_per_mtok(p[i].price,
                                              p[i].pts[p[i].pick].r.output_tokens_per_s_device);
            if (c < best_cost) best_cost = c, best = (int)i;
        }
        if (best >= 0) {
            const ffn_serve_point *bp = &p[best].pts[p[best].pick];
            fprintf(fp,
                    "cheapest at >= %.4g tokens/s per user: %s on %s, $%.3g per M output tokens "
                    "($%.3g-%.3g over the range)\n",
                    user_tps, p[best].m->name, p[best].hw->name, best_cost,
                    ffn_serve_usd_per_mtok(p[best].price, bp->tps_device_hi),
                    ffn_serve_usd_per_mtok(p[best].price, bp->tps_device_lo));
        }
        /* a device without a price: the hourly price at which it would cost as much */
        for (size_t i = 0; best >= 0 && i < np; i++) {
            if (p[i].pick < 0 || p[i].price > 0) continue;
            const double tps = p[i].pts[p[i].pick].r.output_tokens_per_s_device;
            fprintf(fp,
                    "  %s has no price (hw/prices.tsv, --price): it matches $%.3g per M output "
                    "tokens at $%.3g/h a device\n",
                    p[i].hw->name, best_cost, best_cost * tps * 3600.0 / 1e6);
        }
    }
}
