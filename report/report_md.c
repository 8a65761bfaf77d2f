/* The pieces of `ffnroof report`'s Markdown (include/ffnroof/report_md.h): the header, charts
 * with their captions, the inputs with their sources, the validation table of bench results
 * (measured vs roofline vs predicted) and the model's assumptions. */
#include "ffnroof/report_md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/sort.h"
#include "ffnroof/units.h"

/* The first sentence of a source text (specs cite several; the first says where the figures are
 * from): its wrapped lines joined, up to the first full stop outside parentheses or a blank
 * line, never cut inside a parenthesis when the room allows; Markdown's table character left
 * harmless. */
static void source_line(char *dst, size_t n, const char *src)
{
    size_t j = 0;
    int depth = 0;
    for (size_t i = 0; src[i] && j + 1 < n; i++) {
        char ch = src[i];
        if (ch == '\n') {
            if (src[i + 1] == '\n' || src[i + 1] == '\0') break; /* a blank line: the end */
            ch = ' ';
        }
        if (ch == ' ' && j > 0 && dst[j - 1] == ' ') continue;
        if (ch == '(') depth++;
        if (ch == ')' && depth > 0) depth--;
        dst[j++] = ch == '|' ? '/' : ch;
        if (ch == '.' && depth == 0 && (src[i + 1] == ' ' || src[i + 1] == '\n')) break;
    }
    dst[j] = '\0';
    /* out of room inside a parenthesis: end before it rather than in it */
    if (depth > 0 && src[0]) {
        char *open = strrchr(dst, '(');
        for (int d = depth; d > 1 && open && open > dst; d--) {
            *open = '\0';
            open = strrchr(dst, '(');
        }
        if (open && open > dst) {
            while (open > dst && open[-1] == ' ')
                open--;
            *open = '\0';
        }
    }
}

void ffn_md_header(FILE *fp, const char *title, const char *today, const char *command)
{
    fprintf(fp,
            "# %s\n\n*Written by ffnroof on %s with `%s`. Every chart has its data file "
            "(`.dat`) and gnuplot script (`.gp`) beside it: restyle the script and run "
            "`gnuplot NAME.gp` in this folder (docs/reports.md).*\n\n",
            title, today, command);
}

void ffn_md_chart(FILE *fp, const char *name, const char *alt, const char *caption)
{
    fprintf(fp, "![%s](%s.png)\n\n*%s* ([SVG](%s.svg), [data](%s.dat), [script](%s.gp))\n\n", alt,
            name, caption, name, name, name);
}

void ffn_md_assumptions(FILE *fp, bool moe, bool measured)
{
    fputs("## How the numbers are made (model assumptions)\n\n"
          "- **Roofline.** An operation's ideal time is max(FLOPs / peak, bytes / bandwidth) "
          "with the peak of its compute dtype and the main-memory bandwidth; FLOPs of a GEMM "
          "are 2·M·N·K, bytes are the compulsory traffic (weights read once per step, "
          "activations in and out). The ridge point is the tokens per step at which the FFN's "
          "compute time reaches its memory time (docs/model.md).\n"
          "- **Predicted time.** The efficiency model of each spec scales the roofline by the "
          "fraction of peak large GEMMs and transfers reach, a size ramp for small operations, "
          "tile/wave quantisation, a fixed launch cost and a p-norm overlap of compute and "
          "memory time; its parameters are cited or fitted per device "
          "(docs/model-efficiency.md).\n"
          "- **Scope.** Only the FFN (MLP or MoE) layers are costed, per device, without tensor "
          "or expert parallelism unless stated; FFN tokens/s and tokens/s per watt (of TDP) are "
          "upper bounds for a whole model, since attention is left out. \"Weights fit\" "
          "compares all weights of the model in the weight dtype with one device's memory "
          "capacity (no KV cache, no activations).\n",
          fp);
    if (moe)
        fputs("- **MoE.** Routing is uniform top-k unless stated: the experts a batch touches and "
              "the load of the busiest expert and device come from closed forms (Blom's "
              "approximation for the expected maximum); router, dispatch and combine are "
              "memory-bound permutations; the all-to-all of expert parallelism moves "
              "T·k·d elements over the scale-up link (docs/model.md).\n",
              fp);
    if (measured)
        fputs("- **Measurements.** Kernel times are medians of repetitions run until stable, with "
              "the weights flushed from the caches before each call as in a real model; "
              "`prediction error` = predicted / measured - 1 and `fraction of roof` = "
              "roofline time / measured time (docs/formats-bench.md).\n",
              fp);
    fputc('\n', fp);
}

void ffn_md_validation(FILE *fp, const ffn_plot_bench *b)
{
    char t1[32], t2[32], t3[32];
    fprintf(fp,
            "| # | kind | phase | tokens | d | f | experts (top-k) | dtype | threads | measured "
            "(median) | roofline | predicted | prediction error | fraction of roof |\n"
            "|---:|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
    static double errs[FFN_PLOT_MAX_CASES];
    size_t ne = 0, within10 = 0, within25 = 0;
    for (size_t i = 0; i < b->n_cases; i++) {
        const ffn_plot_case *c = &b->cases[i];
        char ex[32] = "-", err[32] = "-", frac[32] = "-";
        if (!strcmp(c->kind, "moe"))
            snprintf(ex, sizeof ex, "%llu (%llu)", (unsigned long long)c->experts,
                     (unsigned long long)c->top_k);
        if (isfinite(c->prediction_error)) {
            snprintf(err, sizeof err, "%+.1f%%", 100 * c->prediction_error);
            double a = fabs(c->prediction_error);
            errs[ne++] = a;
            within10 += a <= 0.10;
            within25 += a <= 0.25;
        }
        if (isfinite(c->efficiency)) snprintf(frac, sizeof frac, "%.0f%%", 100 * c->efficiency);
        fprintf(fp,
                "| %d | %s | %s | %llu | %llu | %llu | %s | %s | %d | %s | %s | %s | %s | %s |\n",
                c->id, c->kind, ffn_phase_name(c->phase), (unsigned long long)c->tokens,
                (unsigned long long)c->d, (unsigned long long)c->f, ex, c->dtype, c->threads,
                ffn_units_str(t1, sizeof t1, c->median_s, FFN_UNIT_TIME),
                ffn_units_str(t2, sizeof t2, c->roofline_s, FFN_UNIT_TIME),
                ffn_units_str(t3, sizeof t3, c->predicted_s, FFN_UNIT_TIME), err, frac);
    }
    if (ne) {
        const double med = ffn_median(errs, ne);
        fprintf(fp,
                "\nPrediction error over %zu cases: median |error| %.1f%%, worst %.1f%%; "
                "%zu within 10%%, %zu within 25%%.\n",
                ne, 100 * med, 100 * errs[ne - 1], within10, within25);
    }
    if (!b->complete)
        fputs("\n**The bench run was incomplete** (interrupted): only the cases "
              "that finished are shown.\n",
              fp);
    fputc('\n', fp);
}

void ffn_md_bench_inputs(FILE *fp, const ffn_plot_bench *b, const char *bench_path,
                         const char *cal_path)
{
    char src[600];
    source_line(src, sizeof src, b->spec_source);
    fprintf(fp, "## Inputs\n\n- Bench results: `%s` (%s%s), measured on **%s**%s%s%s.\n",
            bench_path, b->date[0] ? b->date : "date not recorded",
            b->complete ? "" : ", incomplete", b->host[0] ? b->host : "an unnamed host",
            b->cpu_model[0] ? " (" : "", b->cpu_model, b->cpu_model[0] ? ")" : "");
    fprintf(fp, "- Roofline and predictions on the spec **%s**: %s\n", b->spec.name,
            src[0] ? src : "(no source recorded)");
    fprintf(fp, "- Counters: %s.\n",
            !strcmp(b->counters_source, "papi_hw") ? "PAPI hardware counters"
            : !strcmp(b->counters_source, "papi_sde")
                ? "PAPI software-defined events only (no hardware counters on this host)"
                : "none (timers only)");
    if (cal_path) fprintf(fp, "- Calibration (roofline chart): `%s`.\n", cal_path);
    fputc('\n', fp);
}

void ffn_md_compare_inputs(FILE *fp, const ffn_compare *c)
{
    const ffn_model *m = &c->model;
    fprintf(fp, "- Model **%s** (`%s`): %llu layers, hidden %llu, %s", m->name, c->model_path,
            (unsigned long long)m->layers, (unsigned long long)m->hidden, ffn_act_name(m->act));
    if (m->moe.n_experts)
        fprintf(fp, ", %llu experts of intermediate %llu, top-%llu",
                (unsigned long long)m->moe.n_experts,
                (unsigned long long)m->moe.expert_intermediate, (unsigned long long)m->moe.top_k);
    else
        fprintf(fp, ", FFN intermediate %llu", (unsigned long long)m->intermediate);
    fprintf(fp, "; %.2f G parameters (FFN %.0f%%)%s.\n", (double)c->params.total / 1e9,
            100 * c->params.ffn_share,
            c->params.active != c->params.total ? ", fewer active per token" : "");
    fprintf(fp, "- Weights and activations in %s/%s; prefill %llu x %llu tokens; decode batches",
            ffn_dtype_name(c->run.wdtype), ffn_dtype_name(c->run.adtype),
            (unsigned long long)c->run.batch, (unsigned long long)c->run.seq);
    for (size_t i = 0; i < c->n_batch; i++)
        fprintf(fp, "%s%llu", i ? ", " : " ", (unsigned long long)c->batch[i]);
    fprintf(fp, "%s%s%s.\n- Devices, with the source of each spec:\n",
            c->scenario[0] ? "; scenario `" : "", c->scenario, c->scenario[0] ? "`" : "");
    for (size_t i = 0; i < c->n_dev; i++) {
        char src[600];
        source_line(src, sizeof src, c->dev[i].hw.source);
        fprintf(fp, "  - **%s** (`%s`): %s\n", c->dev[i].hw.name, c->dev[i].hw_path, src);
    }
    fputc('\n', fp);
}

/* The caption of a chart of `report --bench` (name "roofline" or "latency"). */
void ffn_md_bench_chart(FILE *fp, const char *name, bool calibrated)
{
    if (strcmp(name, "roofline") == 0)
        ffn_md_chart(fp, "roofline", "Roofline with measured and predicted kernel points",
                     calibrated
                         ? "The calibrated roofline of this host (compute ceilings per peak kind, "
                           "read-only and read-write bandwidth per memory level); filled dots are "
                           "the measured kernels, open circles the simulator's predictions, joined "
                           "by a thin line."
                         : "The roofline of the spec the bench ran against; filled dots are the "
                           "measured kernels, open circles the simulator's predictions, joined by "
                           "a thin line.");
    else
        ffn_md_chart(fp, "latency", "Measured and predicted FFN layer time",
                     "Time of one FFN layer vs tokens per call: measured (filled) and predicted "
                     "(open, joined), one colour per layer shape and dtype.");
}

void ffn_md_compare_chart(FILE *fp, const char *nm)
{
    if (strstr(nm, "latency"))
        ffn_md_chart(fp, nm, "FFN latency per layer",
                     "FFN time per layer vs tokens per step: prefill (solid) over prompt lengths, "
                     "decode (dashed) over batch sizes; the dash-dotted line is each device's "
                     "ridge point.");
    else if (strstr(nm, "roofline"))
        ffn_md_chart(fp, nm, "Rooflines",
                     "Each device's roofline (compute ceilings per dtype, memory bandwidth) with "
                     "the model's whole FFN as a point per phase and batch (predicted).");
    else
        ffn_md_chart(fp, nm, "MoE breakdown",
                     "Where the time of one MoE layer goes on the busiest device, per device and "
                     "decode batch.");
}

void ffn_md_quick_host(FILE *fp, const ffn_host_info *host, const ffn_calibration *cal,
                       const ffn_hw *hw, const ffn_kcal_result *kres, bool fit_failed,
                       const ffn_plot_device *cdev)
{
    fprintf(fp,
            "## The question\n\nWhat can this host (%s, %d CPUs usable) do for the "
            "feed-forward layers of a Transformer: its empirical roofline, how close "
            "ffnroof's FFN kernels come to it, how well the simulator predicts them once "
            "calibrated, and how the host compares with datacenter devices for llama2-7b and "
            "Mixtral-8x7B?\n\n",
            host->cpu_model, host->allowed_cpus);
    char t1[32], t2[32], t3[32];
    fprintf(fp, "## This host's roofline (measured %s)\n\n", cal->date);
    fprintf(fp, "| roof | kind | value |\n|---|---|---:|\n");
    for (int i = 0; i < cdev->n_ceil; i++)
        fprintf(
            fp, "| %s | %s | %s |\n", cdev->ceil[i].name, ffn_roof_kind_name(cdev->ceil[i].kind),
            ffn_units_str(t1, sizeof t1, cdev->ceil[i].value,
                          cdev->ceil[i].kind == FFN_ROOF_COMPUTE ? FFN_UNIT_FLOPS : FFN_UNIT_BPS));
    fprintf(fp,
            "\nCore clock %s (%s). The spec written from it, `calibration/hw.yaml`, has "
            "main-memory bandwidth %s and fp32 peak %s; its efficiency parameters were "
            "fitted to %zu kernel runs (median |error| %.1f%%, held-out median %.1f%% over "
            "%zu runs)%s. Raw points: `calibration/calibration.json`.%s%s\n\n",
            ffn_units_str(t2, sizeof t2, cal->clock.hz, FFN_UNIT_FREQ), cal->clock.method,
            ffn_units_str(t1, sizeof t1, hw->mem_bandwidth_bps, FFN_UNIT_BPS),
            ffn_units_str(t3, sizeof t3, hw->peak_flops[FFN_DT_FP32], FFN_UNIT_FLOPS), kres->n_fit,
            100 * kres->fit_median_abs, 100 * kres->check_median_abs, kres->n_check,
            fit_failed ? " - the fit failed, efficiency left neutral" : "",
            cal->notes[0] ? " Notes: " : "", cal->notes);
}

void ffn_md_quick_layers(FILE *fp, int dense_d, int dense_f, int moe_d, int moe_f)
{
    fputs("## Validation: ffnroof's kernels on this host\n\n", fp);
    fprintf(fp,
            "Layers shaped like llama2-7b's (d 4096, f 11008, SwiGLU) scaled to d %d, f %d, "
            "and like Mixtral-8x7B's (d 4096, f 14336, 8 experts, top-2) scaled to d %d, "
            "f %d, so that each case runs in about a second; weights are still larger than "
            "the caches, so decode stays memory-bound as in the full model. Timers only (run "
            "`ffnroof bench` for PAPI counters and peer libraries). Results: "
            "`bench/bench.json`.\n\n",
            dense_d, dense_f, moe_d, moe_f);
}

void ffn_md_quick_drift(FILE *fp, const ffn_rerun *d, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(d[i].before_s > 0) || !(d[i].after_s > 0)) return;
        const double ch = fabs(d[i].after_s / d[i].before_s - 1.0);
        if (ch > worst) worst = ch;
    }
    if (n == 0) return;
    char t1[32], t2[32];
    fprintf(fp,
            "**The host's drift.** %s of the calibration's kernel runs, timed again after "
            "the bench:",
            n == 1   ? "One"
            : n == 2 ? "Two"
                     : "Some");
    for (size_t i = 0; i < n; i++)
        fprintf(fp, "%s %s %s then %s (%+.0f%%)", i ? ";" : "", d[i].what,
                ffn_units_str(t1, sizeof t1, d[i].before_s, FFN_UNIT_TIME),
                ffn_units_str(t2, sizeof t2, d[i].after_s, FFN_UNIT_TIME),
                100 * (d[i].after_s / d[i].before_s - 1.0));
    if (worst <= 0.10)
        fputs(". The host held within 10% from the calibration to the end of the bench: the "
              "errors above are more likely the model's (a slow stretch inside the bench alone "
              "would not show here).\n\n",
              fp);
    else
        fprintf(fp,
                ". The host moved by up to %.0f%% within this report: prediction errors of that "
                "size above are the host's as much as the model's (run it again on a quieter "
                "machine).\n\n",
                100 * worst);
}
