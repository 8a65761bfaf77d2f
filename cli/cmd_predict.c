/* `ffnroof predict`: one model on one device, per phase: FFN FLOPs, bytes, bound, roofline and
 * predicted latency, ridge point, activation memory and MoE costs (docs/model.md). */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/hist.h"
#include "ffnroof/plan.h"
#include "ffnroof/report.h"
#include "ffnroof/sim.h"

#define CMD "predict"
#define MAX_BATCHES 64

static void usage(FILE *fp)
{
    fputs("usage: ffnroof predict --hw NAME|PATH --model NAME|PATH [options]\n"
          "\n"
          "Predict what the FFN layers of a Transformer cost on one device, per phase.\n"
          "\n",
          fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_HW, FFN_O_MODEL, FFN_O_PHASE, FFN_O_BATCH, FFN_O_PROMPT,
                                     FFN_O_CHUNK, FFN_O_DTYPE, FFN_O_WDTYPE, FFN_O_ADTYPE,
                                     FFN_O_ENGINE, FFN_O_GROUP_SIZE, FFN_O_ZERO_POINT,
                                     FFN_O_ACT_IO_DTYPE, FFN_O_TP, FFN_O_FUSED, FFN_O_UNFUSED, 0});
    fputs("  --gate-up             gate+up as one GEMM, the activation a kernel of its own\n"
          "                        (three kernels per layer, as vLLM-style GPU stacks run it)\n"
          "  --moc K               training memory with Mixture-of-Channels: keep top-K gate\n"
          "                        channels (default: off)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_WEIGHTS, FFN_O_ONCHIP, 0});
    fputs("MoE models:\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_EP, FFN_O_EP_UNEVEN, FFN_O_GENERIC_MOE, FFN_O_MOE_KERNEL,
                                     FFN_O_DEVICES_PER_NODE, FFN_O_ZIPF, FFN_O_ROUTING_ALPHA, 0});
    fputs("  --histogram FILE      expert popularity from a file (one weight per expert)\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_TRIALS, FFN_O_SEED, FFN_O_CAPACITY_FACTOR, 0});
    fputs("Output:\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, 0});
    fputs("  --ops                 table: also list every op of one layer, with the level its\n"
          "                        weights are read from\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_OUT, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Times are per device for the whole model (all layers); per-op figures are for one\n"
          "layer. The predicted time comes with its range: the device's p10-p90 of\n"
          "measured/predicted from its fit (or the stated default, marked so; docs/model.md).\n"
          "Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
          fp);
}

int ffn_cmd_predict(int argc, char **argv)
{
    const char *hw_name = NULL, *model_name = NULL, *out_path = NULL, *hist_path = NULL;
    const char *weights = NULL, *engine = NULL;
    unsigned phases = 3; /* bit 0 prefill, bit 1 decode */
    uint64_t batches[MAX_BATCHES] = {1}, group = 0;
    size_t n_batches = 1;
    ffn_run run;
    ffn_run_default(&run);
    run.moe.seed = 1;
    ffn_dtype dt = run.wdtype;
    ffn_format fmt = FFN_FMT_TABLE;
    bool per_op = false;
    int c, rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_HW, &hw_name);
    ffn_cli_bind_str(&seen, FFN_O_MODEL, &model_name);
    ffn_cli_bind_phases(&seen, FFN_O_PHASE, &phases);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_BATCH, batches, MAX_BATCHES, &n_batches);
    ffn_cli_bind_word(&seen, FFN_O_SEQ, &run.seq);
    ffn_cli_bind_word(&seen, FFN_O_PROMPT, &run.seq);
    ffn_cli_bind_word(&seen, FFN_O_CHUNK, &run.chunk);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &dt);
    ffn_cli_bind_dtype(&seen, FFN_O_WDTYPE, &run.wdtype);
    ffn_cli_bind_dtype(&seen, FFN_O_ADTYPE, &run.adtype);
    ffn_cli_bind_word(&seen, FFN_O_GROUP_SIZE, &group);
    ffn_cli_bind_word(&seen, FFN_O_GROUP, &group);
    ffn_cli_bind_flag(&seen, FFN_O_ZERO_POINT, &run.zero_point);
    ffn_cli_bind_dtype(&seen, FFN_O_ACT_IO_DTYPE, &run.act_io_dtype);
    ffn_cli_bind_word(&seen, FFN_O_TP, &run.tp);
    ffn_cli_bind_u64(&seen, FFN_O_MOC, 1, 1u << 24, &run.moc_k);
    ffn_cli_bind_word(&seen, FFN_O_EP, &run.ep);
    ffn_cli_bind_routing(&seen, &run.moe);
    ffn_cli_bind_str(&seen, FFN_O_MOE_KERNEL, &run.moe.kernel);
    ffn_cli_bind_str(&seen, FFN_O_HISTOGRAM, &hist_path);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, true, &fmt);
    ffn_cli_bind_flag(&seen, FFN_O_OPS, &per_op);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &out_path);
    ffn_cli_bind_str(&seen, FFN_O_WEIGHTS, &weights);
    ffn_cli_bind_str(&seen, FFN_O_ENGINE, &engine);
    ffn_cli_bind_flag(&seen, FFN_O_ONCHIP, &run.onchip);
    static const int fusion[] = {FFN_O_FUSED, FFN_O_UNFUSED, FFN_O_GATE_UP, 0};
    while ((c = ffn_cli_getopt(CMD, argc, argv, fusion, &seen, NULL)) != -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        if (c != FFN_O_FUSED && c != FFN_O_UNFUSED && c != FFN_O_GATE_UP)
            return ffn_cli_opt_other(CMD, c, argv, usage, true);
        run.fused = c != FFN_O_UNFUSED;
        run.act_separate = c == FFN_O_GATE_UP;
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    if (!hw_name) return ffn_cli_usage(CMD, "--hw is required (e.g. --hw h100-sxm)");
    if (!model_name) return ffn_cli_usage(CMD, "--model is required (e.g. --model llama2-7b)");
    if ((rc = ffn_cli_run_dtypes(CMD, &seen, dt, &run))) return rc;
    if (group) run.group_size = (unsigned)group;
    if (run.act_io_dtype != FFN_DT_FP32 && run.act_io_dtype != FFN_DT_BF16 &&
        run.act_io_dtype != FFN_DT_FP16)
        return ffn_cli_usage(CMD, "--act-io-dtype must be fp32, bf16 or fp16; got '%s'",
                             ffn_dtype_name(run.act_io_dtype));
    if (weights && ffn_weights_parse(weights, &run.weights))
        return ffn_cli_usage(CMD, "--weights: '%s' is not hot, cold or auto", weights);

    static ffn_hw hw;
    static ffn_model model;
    if ((rc = ffn_cli_engine(CMD, engine))) return rc;
    if ((rc = ffn_cli_load_hw(CMD, hw_name, &hw))) return rc;
    if ((rc = ffn_cli_load_model(CMD, model_name, &model))) return rc;
    if ((rc = ffn_cli_check_moe_kernel(CMD, run.moe.kernel, run.moe.generic, &hw, run.wdtype,
                                       run.adtype)))
        return rc;
    static double hist[4096];
    if (hist_path) {
        ffn_diag d;
        ffn_diag_clear(&d);
        size_t n;
        if (ffn_hist_load(hist_path, hist, 4096, &n, &d)) return ffn_cli_diag(&d);
        if (!model.moe.n_experts)
            return ffn_cli_usage(CMD, "--histogram: model '%s' has no experts", model.name);
        if (n != model.moe.n_experts)
            return ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                                "%s: the histogram has %zu entries, model '%s' has %llu experts",
                                hist_path, n, model.name, (unsigned long long)model.moe.n_experts);
        run.moe.popularity = hist;
        run.moe.n_popularity = n;
    }
    if (model.context && run.seq > model.context)
        fprintf(stderr,
                "ffnroof predict: warning: %llu tokens a sequence is beyond %s's context of %llu "
                "(max_position_embeddings): the model was not made for it; the arithmetic "
                "goes on\n",
                (unsigned long long)run.seq, model.name, (unsigned long long)model.context);
    if (run.ep > 1 && !model.moe.n_experts)
        return ffn_cli_usage(CMD, "--ep %llu: model '%s' has no experts",
                             (unsigned long long)run.ep, model.name);

    ffn_params params;
    if (ffn_model_params(&model, &params))
        return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "parameter count of '%s' overflows", model.name);

    {
        /* weights a device cannot hold: the times are still the arithmetic of one that did */
        double ffn_b, other_b;
        ffn_weight_footprint(&model, &params, run.wdtype, run.group_size, run.zero_point, run.tp,
                             run.ep, &ffn_b, &other_b);
        if (hw.mem_capacity_bytes > 0 && ffn_b + other_b > hw.mem_capacity_bytes)
            fprintf(stderr,
                    "ffnroof predict: warning: %s's weights take %.1f GB a device (%s, TP %llu x "
                    "EP %llu), more than %s's %.1f GB: the times are those of a device that "
                    "held them; `ffnroof plan` finds layouts that fit\n",
                    model.name, (ffn_b + other_b) / 1e9, ffn_dtype_name(run.wdtype),
                    (unsigned long long)run.tp, (unsigned long long)run.ep, hw.name,
                    hw.mem_capacity_bytes / 1e9);
    }
    static ffn_result results[2 * MAX_BATCHES];
    size_t n_res = 0;
    for (int ph = 0; ph < 2; ph++) {
        if (!(phases & (1 << ph))) continue;
        for (size_t b = 0; b < n_batches; b++) {
            ffn_run r = run;
            r.phase = ph ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
            r.batch = batches[b];
            ffn_diag d;
            ffn_diag_clear(&d);
            if (ffn_predict(&model, &hw, &r, &results[n_res], &d))
                return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s", d.msg);
            n_res++;
        }
    }
    ffn_predict_report rep = {.model = &model,
                              .params = &params,
                              .hw = &hw,
                              .runs = results,
                              .n_runs = n_res,
                              .per_op = per_op};
    ffn_cli_out out;
    if ((rc = ffn_cli_out_open(CMD, &out, out_path))) return rc;
    int wr = 0;
    if (fmt == FFN_FMT_JSON) {
        wr = ffn_write_predict_json(out.fp, &rep);
    } else if (fmt == FFN_FMT_CSV) {
        wr = ffn_write_predict_csv_header(out.fp);
        for (size_t i = 0; !wr && i < n_res; i++)
            wr = ffn_write_predict_csv_row(out.fp, &model, &hw, &results[i]);
    } else {
        wr = ffn_write_predict_table(out.fp, &rep);
    }
    return ffn_cli_out_close(CMD, &out, wr == 0);
}
