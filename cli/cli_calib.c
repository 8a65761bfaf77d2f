/* The calibration's outputs shared by `ffnroof calibrate`, `ffnroof bench` (when it calibrates
 * first) and `ffnroof report --quick`: the table printed and the files written
 * (DIR/hw.yaml, DIR/calibration.json) for a record of the calibration pipeline
 * (include/ffnroof/calibrate.h). */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_prof.h"

#include <limits.h>
#include <string.h>

#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"

static void cal_begin(void *user, ffn_cal_step step, double lo, double hi)
{
    (void)step;
    ffn_prof_progress *p = user;
    p->lo = lo;
    p->hi = hi;
}

ffn_cal_progress ffn_prof_cal_progress(ffn_prof_progress *p)
{
    return (ffn_cal_progress){.begin = cal_begin,
                              .stage = ffn_prof_progress_stage,
                              .kcase = ffn_prof_progress_case,
                              .user = p};
}

int ffn_prof_cal_run(const char *cmd, const char *title, const ffn_cal_opts *opts,
                     const double load[3], ffn_cal_record *r, ffn_cal_step *failed)
{
    ffn_prof_progress prog;
    ffn_prof_progress_init(&prog, title);
    const ffn_prof_steal steal0 = ffn_prof_steal_now();
    const ffn_cal_progress cp = ffn_prof_cal_progress(&prog);
    const int rc = ffn_cal_pipeline_run(opts, &cp, r, failed);
    ffn_prof_progress_end(&prog);
    if (rc) return rc;
    if (r->fit_warning[0]) fprintf(stderr, "ffnroof %s: %s\n", cmd, r->fit_warning);
    const ffn_prof_steal steal1 = ffn_prof_steal_now();
    ffn_prof_steal_note(&steal0, &steal1, r->cal.threads, r->notes, sizeof r->notes);
    ffn_cal_note_load(r, load[0]);
    return 0;
}

int ffn_prof_cal_fail(const char *cmd, int rc, ffn_cal_step failed)
{
    if (rc == FFN_EINTERRUPTED)
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "interrupted during the microbenchmarks");
    if (failed == FFN_CAL_STEP_SPEC)
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "no fp32 peak or no memory bandwidth was measured");
    return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "the microbenchmarks failed (%s)", ffn_strerror(rc));
}

/* The kernel runs worth writing: all of a finished fit, or the runs that finished. */
static const ffn_kcal_result *cal_runs(const ffn_cal_record *r)
{
    return r->fit_rc == 0 || r->kcal.n_runs ? &r->kcal : NULL;
}

void ffn_prof_cal_table(FILE *fp, const ffn_cal_record *rec, const char *dir)
{
    const ffn_calibration *c = &rec->cal;
    const ffn_kcal_result *k = cal_runs(rec);
    const ffn_hw *hw = &rec->hw;
    fprintf(fp, "host %s: %s, %d CPUs allowed, %d threads used; %s\n", c->host.host,
            c->host.cpu_model, c->host.allowed_cpus, c->threads, c->date);
    fprintf(fp, "timer %s, resolution %.3g s; core clock %.3g GHz (dependent add chain)\n",
            c->timer.source, c->timer.res_measured_s, c->clock.hz / 1e9);
    fprintf(fp, "\n%-20s %8s %12s\n", "peak", "threads", "GFLOP/s");
    for (int p = 0; p < FFN_PEAK_COUNT; p++)
        for (int t = 0; t < 2; t++)
            /* with one thread the all-cores peak is the one-core one: printed once */
            if (c->peaks[p][t].flops_per_s > 0 &&
                !(t == 1 && c->peaks[p][0].threads == c->peaks[p][1].threads))
                fprintf(fp, "%-20s %8d %12.1f\n", ffn_peak_name((ffn_peak_kind)p),
                        c->peaks[p][t].threads, c->peaks[p][t].flops_per_s / 1e9);
    fprintf(fp, "\nbandwidth probes: %s loads%s%s\n", c->bw_probe[0] ? c->bw_probe : "portable",
            c->isa_capped ? "; FFNROOF_ISA=" : "", c->isa_capped ? ffn_isa_name(c->isa) : "");
    const int t = c->n_levels[FFN_BW_READ][1] > 0 ? 1 : 0;
    fprintf(fp, "read-only levels (%s):\n", t ? "all threads" : "one thread");
    for (int i = 0; i < c->n_levels[FFN_BW_READ][t]; i++) {
        const ffn_level *l = &c->levels[FFN_BW_READ][t][i];
        /* the last level (main memory) has no capacity: the sweep's end is not one */
        if (l->capacity_bytes > 0)
            fprintf(fp, "  %-5s %8.1f GB/s  up to %.3g MiB\n", l->name, l->bandwidth_bps / 1e9,
                    l->capacity_bytes / 1048576.0);
        else
            fprintf(fp, "  %-5s %8.1f GB/s  beyond the levels above\n", l->name,
                    l->bandwidth_bps / 1e9);
    }
    fprintf(fp, "main memory (read-only tail): %.2f GB/s one thread", c->tail_read_bps[0] / 1e9);
    if (c->threads > 1 && c->tail_read_bps[1] > 0)
        fprintf(fp, ", %.2f GB/s %d threads", c->tail_read_bps[1] / 1e9, c->threads);
    fputc('\n', fp);
    fprintf(fp, "\nspec %s: fp32 %.1f GFLOP/s, bf16 %.1f GFLOP/s, memory %.2f GB/s, %u units\n",
            hw->name, hw->peak_flops[FFN_DT_FP32] / 1e9, hw->peak_flops[FFN_DT_BF16] / 1e9,
            hw->mem_bandwidth_bps / 1e9, hw->compute_units);
    if (k) {
        const ffn_eff *e = &hw->eff;
        fprintf(fp,
                "efficiency fit: compute_max fp32 %.3f bf16 %.3f, memory_max %.3f (one-token "
                "decode %.3f), launch %.3g us, overlap p %.3g\n",
                e->compute_max_dt[FFN_DT_FP32], e->compute_max_dt[FFN_DT_BF16], e->memory_max,
                e->memory_max_gemv > 0 ? e->memory_max_gemv : e->memory_max,
                e->launch_s < 1e-9 ? 0.0 : e->launch_s * 1e6, /* a fit that went to 0 */
                e->overlap_p);
        bool own = false; /* float dtypes with a decode fraction of their own */
        for (int d = 0; d < FFN_DT_COUNT; d++) {
            if (d == FFN_DT_INT8 || d == FFN_DT_INT4 || !(e->memory_max_gemv_dt[d] > 0)) continue;
            fprintf(fp, "%s %s %.3f",
                    own ? "," : "one-token decode of its own:", ffn_dtype_name((ffn_dtype)d),
                    e->memory_max_gemv_dt[d]);
            own = true;
        }
        if (own) fputc('\n', fp);
        const ffn_tileset *tb = &e->tiles_dt[FFN_DT_BF16];
        if (tb->n_tiles > 0)
            fprintf(fp, "bf16 rows padded to %u above %u tokens (the bf16 kernel's row tile)\n",
                    tb->tiles[0][0], tb->gemv_rows);
        fprintf(fp, "kernels: fp32 %s, bf16 %s\n", k->fp32_kernel,
                k->bf16_kernel[0] ? k->bf16_kernel : "(none)");
        if (e->dequant_cost[FFN_DT_INT8] > 0 || e->dequant_cost[FFN_DT_INT4] > 0 ||
            e->compute_max_dt[FFN_DT_INT8] > 0)
            fprintf(fp,
                    "quantized: dequantisation %.3g ops a weight (int8), %.3g (int4); W8A8 "
                    "compute_max %.3f\n",
                    e->dequant_cost[FFN_DT_INT8], e->dequant_cost[FFN_DT_INT4],
                    e->compute_max_dt[FFN_DT_INT8]);
        fprintf(fp, "\n%-6s %-8s %5s %5s %6s %-9s %10s %10s %12s %8s %8s %6s\n", "kind", "phase",
                "T", "d", "f", "dtype", "median_ms", "min_ms", "predicted_ms", "err_med", "err_min",
                "role");
        for (size_t i = 0; i < k->n_runs; i++) {
            const ffn_bench_result *r = &k->runs[i].r;
            char fmt[24];
            if (r->c.adtype != FFN_DT_FP32)
                snprintf(fmt, sizeof fmt, "%s/%s", ffn_dtype_name(r->c.wdtype),
                         ffn_dtype_name(r->c.adtype));
            else
                snprintf(fmt, sizeof fmt, "%s", ffn_dtype_name(r->c.wdtype));
            fprintf(fp,
                    "%-6s %-8s %5zu %5zu %6zu %-9s %10.3f %10.3f %12.3f %+7.1f%% %+7.1f%% %6s\n",
                    r->c.kind == FFN_BENCH_MOE ? "moe" : "dense", ffn_phase_name(r->c.phase),
                    r->c.tokens, r->c.shape.d, r->c.shape.f, fmt, r->time.median * 1e3,
                    r->time.min * 1e3, r->predicted_s * 1e3, 100 * r->prediction_error,
                    100 * r->prediction_error_min, k->runs[i].fit ? "fit" : "check");
        }
        fprintf(fp,
                "error |predicted/median - 1|: fit median %.1f%% max %.1f%% (n=%zu); "
                "held out median %.1f%% max %.1f%% (n=%zu)\n",
                100 * k->fit_median_abs, 100 * k->fit_max_abs, k->n_fit, 100 * k->check_median_abs,
                100 * k->check_max_abs, k->n_check);
    }
    if (c->notes[0]) fprintf(fp, "\nnotes: %s\n", c->notes);
    fprintf(fp, "\nwrote %s/hw.yaml and %s/calibration.json\n", dir, dir);
}

ffn_calib_meta ffn_prof_cal_meta(const ffn_cal_record *r, const double load[3],
                                 const char *spec_file)
{
    ffn_calib_meta m;
    memset(&m, 0, sizeof m);
    memcpy(m.load_avg, load, sizeof m.load_avg);
    memcpy(m.peak_kind, r->peak_kind, sizeof m.peak_kind);
    if (spec_file) {
        m.complete = r->complete;
        m.spec_file = spec_file;
        m.spec = &r->hw;
        m.notes = r->notes;
    }
    return m;
}

int ffn_prof_cal_json(FILE *fp, const ffn_cal_record *r, const ffn_calib_meta *m)
{
    return ffn_calib_write_json(fp, &r->cal, cal_runs(r), m);
}

static int write_json(const char *cmd, const char *path, const ffn_cal_record *r,
                      const ffn_kcal_result *k, const ffn_calib_meta *m)
{
    ffn_cli_out o;
    int rc = ffn_cli_out_open(cmd, &o, path);
    if (rc) return rc;
    bool ok = ffn_calib_write_json(o.fp, &r->cal, k, m) == 0;
    return ffn_cli_out_close(cmd, &o, ok);
}

int ffn_prof_cal_write(const char *cmd, const char *dir, const ffn_cal_record *r,
                       const double load[3], bool remember)
{
    char spec_path[PATH_MAX + 16], json_path[PATH_MAX + 32];
    snprintf(spec_path, sizeof spec_path, "%s/hw.yaml", dir);
    snprintf(json_path, sizeof json_path, "%s/calibration.json", dir);
    int rc;
    /* Ctrl-C: a spec with half a fit is no spec. Only calibration.json is written, marked
     * incomplete with the runs that finished; no hw.yaml, and the remembered spec of
     * FFN_LAST_CAL_DIR stays as it was. */
    if (r->interrupted) {
        ffn_calib_meta m = ffn_prof_cal_meta(r, load, NULL);
        m.notes = "interrupted during the kernel runs: no spec written";
        if ((rc = write_json(cmd, json_path, r, r->kcal.n_runs ? &r->kcal : NULL, &m))) return rc;
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd,
                            "interrupted: %s kept the finished runs, no spec written", json_path);
    }
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_hw_write(&r->hw, spec_path, &d)) return ffn_cli_diag(&d);
    const ffn_calib_meta m = ffn_prof_cal_meta(r, load, spec_path);
    const ffn_kcal_result *kp = cal_runs(r);
    if ((rc = write_json(cmd, json_path, r, kp, &m))) return rc;
    /* remember it for `ffnroof bench` */
    if (remember && strcmp(dir, FFN_LAST_CAL_DIR) != 0) {
        if (ffn_prof_mkdirs(cmd, FFN_LAST_CAL_DIR) == 0) {
            ffn_diag d2;
            ffn_diag_clear(&d2);
            if (ffn_hw_write(&r->hw, FFN_LAST_CAL_DIR "/hw.yaml", &d2) == 0)
                write_json(cmd, FFN_LAST_CAL_DIR "/calibration.json", r, kp, &m);
        }
    }
    return 0;
}
