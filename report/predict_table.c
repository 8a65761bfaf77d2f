/* The terminal table of `ffnroof predict` (include/ffnroof/report.h): the model, the device and
 * one block per run with its work, bound, times, memory and (on request) every op. */
#include "ffnroof/report.h"
#include "ffnroof/error.h"
#include "ffnroof/units.h"

#include <math.h>
#include <string.h>

static const char *fmt(char *buf, size_t n, double v, ffn_unit u)
{
    ffn_units_format(v, u, buf, n);
    return buf;
}

/* "1.23 G" style for counts */
static const char *cnt(char *buf, size_t n, double v)
{
    static const struct {
        double m;
        const char *p;
    } pre[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].m) {
            snprintf(buf, n, "%.3g%s", v / pre[i].m, pre[i].p);
            return buf;
        }
    snprintf(buf, n, "%.3g", v);
    return buf;
}

int ffn_write_predict_table(FILE *fp, const ffn_predict_report *r)
{
    char a[32], b[32], c[32], d[32];
    const ffn_model *m = r->model;
    const ffn_params *p = r->params;
    const ffn_hw *hw = r->hw;
    uint64_t moe = ffn_model_moe_layers(m);
    fprintf(fp, "model   %s: %s params", m->name, cnt(a, sizeof a, (double)p->total));
    if (p->active != p->total) fprintf(fp, ", %s active", cnt(b, sizeof b, (double)p->active));
    fprintf(fp, "; FFN %s (%.1f%%)\n", cnt(c, sizeof c, (double)p->ffn), 100.0 * p->ffn_share);
    fprintf(fp, "        %llu layers", (unsigned long long)m->layers);
    if (moe) fprintf(fp, " (%llu MoE)", (unsigned long long)moe);
    fprintf(fp, ", d %llu, %s", (unsigned long long)m->hidden, ffn_act_name(m->act));
    if (m->layers > moe) fprintf(fp, " f %llu", (unsigned long long)m->intermediate);
    if (moe)
        fprintf(fp, ", %llu experts of %llu, top-%llu", (unsigned long long)m->moe.n_experts,
                (unsigned long long)m->moe.expert_intermediate, (unsigned long long)m->moe.top_k);
    fputc('\n', fp);
    fprintf(fp, "device  %s: %s at %s\n", hw->name,
            fmt(a, sizeof a, hw->mem_capacity_bytes, FFN_UNIT_BYTES),
            fmt(b, sizeof b, hw->mem_bandwidth_bps, FFN_UNIT_BPS));
    for (size_t i = 0; i < r->n_runs; i++) {
        const ffn_result *x = &r->runs[i];
        fprintf(fp, "\n%-8s batch %llu", ffn_phase_name(x->run.phase),
                (unsigned long long)x->run.batch);
        if (x->run.phase == FFN_PHASE_PREFILL)
            fprintf(fp, " x seq %llu", (unsigned long long)x->run.seq);
        fprintf(fp, " = %llu tokens/step", (unsigned long long)x->tokens);
        if (x->steps > 1) fprintf(fp, " x %llu chunks", (unsigned long long)x->steps);
        if (x->run.tp > 1) fprintf(fp, ", TP %llu", (unsigned long long)x->run.tp);
        if (x->run.ep > 1) fprintf(fp, ", EP %llu", (unsigned long long)x->run.ep);
        fprintf(fp, "\n  %-10s W %s, A %s -> %s at %s, %s\n", "dtypes",
                ffn_dtype_name(x->run.wdtype), ffn_dtype_name(x->run.adtype),
                ffn_dtype_name(x->compute_dtype), fmt(a, sizeof a, x->peak_flops, FFN_UNIT_FLOPS),
                x->run.fused ? "fused" : "unfused");
        if (hw->engine != FFN_ENGINE_NONE)
            fprintf(fp, "  %-10s %s's kernels (hw/arch/engines.yaml)\n", "engine",
                    ffn_engine_name(hw->engine));
        const ffn_dtype w = x->run.wdtype;
        if ((w == FFN_DT_FP8 || ffn_dtype_block_scaled(w)) &&
            ffn_weights_dequantised(hw, w, x->run.adtype)) {
            if (hw->peak_flops[ffn_dtype_unit(w)] > 0)
                fprintf(fp, "  %-10s %s activations: the weights are dequantised to %s (W%uA16)\n",
                        "", ffn_dtype_name(x->run.adtype), ffn_dtype_name(x->compute_dtype),
                        ffn_dtype_bits(w));
            else
                fprintf(fp,
                        "  %-10s no %s units on %s: the weights are dequantised to %s (W%uA16)\n",
                        "", ffn_dtype_name(ffn_dtype_unit(w)), hw->name,
                        ffn_dtype_name(x->compute_dtype), ffn_dtype_bits(w));
        }
        fprintf(fp, "  %-10s %s FLOP, %s moved (%s weights), %.4g FLOP/B\n", "work",
                cnt(a, sizeof a, x->flops), fmt(b, sizeof b, x->bytes, FFN_UNIT_BYTES),
                fmt(c, sizeof c, x->weight_bytes, FFN_UNIT_BYTES), x->intensity);
        fprintf(fp, "  %-10s roofline %s, predicted %s", "time",
                fmt(a, sizeof a, x->roofline_s, FFN_UNIT_TIME),
                fmt(b, sizeof b, x->predicted_s, FFN_UNIT_TIME));

        if (x->comm_s > 0) fprintf(fp, " (comm %s)", fmt(c, sizeof c, x->comm_s, FFN_UNIT_TIME));
        fprintf(fp, ": %s-bound", ffn_bound_name(x->bound));
        {
            /* the efficiency model's own balance may differ from the ideal roofline's: a GEMM
             * whose tiles pad its rows, or that reaches a small share of the peak, is limited by
             * its compute while the roofline calls it memory-bound */
            double t[2] = {0, 0}; /* predicted time of the compute- and memory-limited ops */
            const ffn_layer_cost *lc[2] = {&x->dense, &x->moe};
            const double nl[2] = {(double)x->dense_layers, (double)x->moe_layers};
            for (int q = 0; q < 2; q++)
                for (int j = 0; nl[q] > 0 && j < lc[q]->n_ops; j++) {
                    const ffn_op *op = &lc[q]->ops[j];
                    if (op->kind == FFN_OP_COMM) continue;
                    t[op->predicted_bound == FFN_BOUND_COMPUTE ? 0 : 1] += nl[q] * op->predicted_s;
                }
            const ffn_bound pb = t[0] >= t[1] ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
            if (t[0] + t[1] > 0 && pb != x->bound &&
                (x->bound == FFN_BOUND_COMPUTE || x->bound == FFN_BOUND_MEMORY))
                fprintf(fp, " by the roofline, %s-limited as predicted", ffn_bound_name(pb));
        }
        fputc('\n', fp);
        if (x->run.weights != FFN_WEIGHTS_COLD) {
            fprintf(fp, "  %-10s %s: %s %s ", "weights", ffn_weights_name(x->run.weights),
                    x->run.weights == FFN_WEIGHTS_HOT ? "one layer's" : "a step's",
                    fmt(a, sizeof a, x->weights_working_set_bytes, FFN_UNIT_BYTES));
            const char *lvn = x->weights_level > 0 ? r->hw->levels[x->weights_level - 1].name : "";
            if (x->weights_level > 0 && x->weights_frac < 1) {
                fprintf(fp, "%.0f%% in %s, the rest from memory\n", 100 * x->weights_frac, lvn);
                if (x->weights_level_no_bw)
                    fprintf(fp, "             (%s has no bandwidth: at memory speed)\n", lvn);
            } else if (x->weights_level > 0)
                fprintf(fp, "in %s%s\n", lvn,
                        x->weights_level_no_bw ? " (no bandwidth: at memory speed)" : "");
            else
                fputs("fit no on-chip level: read from memory\n", fp);
        }
        if (x->run.onchip)
            fprintf(fp, "  %-10s tiled-GEMM traffic per level and fused spill charged\n",
                    "on-chip");
        char rg[80];
        fprintf(fp, "  %-10s %s at p10-p90, %s\n", "range",
                ffn_range_text(rg, sizeof rg, x->predicted_s, x->predicted_p10_s,
                               x->predicted_p90_s, false, true),
                x->unc_default       ? "the default of a spec without a fit"
                : x->moe_fused_s > 0 ? "from the spec's and the MoE kernels' fits"
                                     : "from the spec's fit residuals");
        if (isfinite(x->ridge_tokens))
            fprintf(fp, "  %-10s compute-bound from %.0f tokens/step\n", "ridge", x->ridge_tokens);
        else
            fprintf(fp, "  %-10s never compute-bound\n", "ridge");
        fprintf(fp, "  %-10s inference peak %s per layer (%llu tokens)\n", "act. mem",
                fmt(a, sizeof a, x->mem.infer_peak_bytes, FFN_UNIT_BYTES),
                (unsigned long long)x->mem.infer_tokens);
        fprintf(fp, "  %-10s %s saved; %s with act. recompute; %s full\n", "train mem",
                fmt(a, sizeof a, x->mem.train_model_bytes, FFN_UNIT_BYTES),
                fmt(b, sizeof b, x->mem.train_model_actrecomp_bytes, FFN_UNIT_BYTES),
                fmt(c, sizeof c, x->mem.train_model_fullrecomp_bytes, FFN_UNIT_BYTES));
        if (x->moe_layers) {
            const ffn_moe_detail *md = &x->moe_detail;
            fprintf(fp, "  %-10s %.2f experts touched, %.2f on the busiest device\n", "MoE layer",
                    md->stats.experts_touched, md->stats.experts_touched_device);
            fprintf(fp, "  %-10s imbalance %.2f (devices %.2f), dropped %.1f%% (%s)\n", "",
                    md->stats.imbalance, md->stats.device_imbalance,
                    100.0 * md->stats.dropped_fraction,
                    md->stats.monte_carlo ? "simulated" : "closed form");
            fprintf(fp, "  %-10s router %s, dispatch %s, experts %s\n", "",
                    fmt(a, sizeof a, md->router_s, FFN_UNIT_TIME),
                    fmt(b, sizeof b, md->dispatch_s, FFN_UNIT_TIME),
                    fmt(c, sizeof c, md->expert_s, FFN_UNIT_TIME));
            fprintf(fp, "  %-10s shared %s, combine %s, all-to-all %s\n", "",
                    fmt(a, sizeof a, md->shared_s, FFN_UNIT_TIME),
                    fmt(b, sizeof b, md->combine_s, FFN_UNIT_TIME),
                    fmt(c, sizeof c, md->alltoall_s, FFN_UNIT_TIME));
            if (!strcmp(md->fused, "defaults")) {
                fprintf(fp, "  %-10s %s's fused MoE module, the model's defaults\n", "",
                        ffn_engine_name(md->fused_engine));
                fprintf(fp, "  %-10s (no kernel family of the engine for this device)\n", "");
            } else if (md->fused[0]) {
                fprintf(fp, "  %-10s %s's fused MoE kernels '%s' (%s)\n", "",
                        ffn_engine_name(md->fused_engine), md->fused,
                        ffn_dtype_name(md->fused_dtype));
            }
            if (md->fused[0]) {
                fprintf(fp, "  %-10s row tile %u; their range x%.2f-%.2f\n", "", md->fused_block_m,
                        md->fused_p10, md->fused_p90);
                if (md->fused_alpha > 0)
                    fprintf(fp, "  %-10s the experts' loads a power law of exponent %.3g\n", "",
                            md->fused_alpha);
            } else {
                fprintf(fp, "  %-10s generic grouped GEMMs (%s)\n", "",
                        x->run.moe.generic                      ? "--generic-moe"
                        : x->run.ep > 1 && x->run.moe.ep_uneven ? "an uneven EP split"
                                                                : "not a GPU under an engine");
            }
            fprintf(fp, "  %-10s MoE layers take %.1f%% of the FFN time\n", "",
                    100.0 * md->share_of_ffn);
        }
        if (!r->per_op) continue;
        for (int which = 0; which < 2; which++) {
            const ffn_layer_cost *lc = which == 0 ? &x->dense : &x->moe;
            uint64_t nl = which == 0 ? x->dense_layers : x->moe_layers;
            if (!nl) continue;
            fprintf(fp, "  one %s layer of %llu:\n", which ? "MoE" : "dense",
                    (unsigned long long)nl);
            /* the source of each op's weights, when on-chip memory is modelled */
            const bool src = x->run.weights != FFN_WEIGHTS_COLD || x->run.onchip;
            fprintf(fp, "    %-20s %7s %9s %7s %-7s %9s %9s\n", "op", "FLOP", "bytes", "FLOP/B",
                    "bound", "roofline", "predicted");
            for (int k = 0; k < lc->n_ops; k++) {
                const ffn_op *op = &lc->ops[k];
                fprintf(fp, "    %-20s %7s %9s %7.3g %-7s %9s %9s", op->name,
                        cnt(a, sizeof a, op->flops), fmt(b, sizeof b, op->bytes, FFN_UNIT_BYTES),
                        op->bytes > 0 ? op->flops / op->bytes : 0.0,
                        op->kind == FFN_OP_COMM ? "comm" : ffn_bound_name(op->bound),
                        fmt(c, sizeof c, op->roofline_s, FFN_UNIT_TIME),
                        fmt(d, sizeof d, op->predicted_s, FFN_UNIT_TIME));
                fputc('\n', fp);
                if (!src || op->kind == FFN_OP_COMM ||
                    !(op->weight_bytes > 0 || op->spill_bytes > 0))
                    continue;
                /* the level this op's weights are read from, on a line of its own (80 columns) */
                int s = ffn_op_main_source(op);
                bool nobw = s != FFN_SRC_MEMORY && !(r->hw->levels[s].bandwidth_bps > 0);
                fprintf(fp, "    %-20s weights from %s%s", "", ffn_source_name(r->hw, s),
                        nobw ? " (capacity only)" : "");
                if (op->spill_bytes > 0)
                    fprintf(fp, ", spills %s", fmt(a, sizeof a, op->spill_bytes, FFN_UNIT_BYTES));
                fputc('\n', fp);
            }
        }
    }
    return ferror(fp) ? FFN_EIO : 0;
}
