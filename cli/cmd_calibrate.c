/* `ffnroof calibrate`: this host's empirical roofline (timer, clock, peak FLOP/s per dtype,
 * bandwidth per memory level: measure/calibrate.c), turned into a hardware spec whose
 * efficiency model is fitted to ffnroof's own FFN kernels at a few calibration shapes
 * (measure/kernel_fit.c, ffn_bench_fit_eff). Writes DIR/hw.yaml and DIR/calibration.json and
 * remembers the spec as results/last-calibration/hw.yaml, where `ffnroof bench` looks for its
 * default spec. docs/profiler.md describes the method. */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_prof.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"

#define CMD "calibrate"

static void usage(FILE *fp)
{
    fputs("usage: ffnroof calibrate [--quick] [--threads N] [--out DIR] [--format table|json]\n"
          "\n"
          "Measure this host's roofline (peak FLOP/s per dtype, bandwidth per memory level,\n"
          "clock, timer) and fit the simulator's efficiency model to ffnroof's FFN kernels at\n"
          "a few calibration shapes (prefill and decode, fp32 and bf16).\n"
          "\n"
          "  --quick          10-15 s instead of 1-2 minutes (2 cores)\n"
          "  --threads N      the \"all cores\" thread count (default: every CPU allowed)\n"
          "  --out DIR        write DIR/hw.yaml and DIR/calibration.json\n"
          "                   (default: " FFN_LAST_CAL_DIR ")\n"
          "  --format F       what to print on stdout: table or json (calibration.json)\n"
          "  --test-tiny      for tests: tiny sweeps and kernel shapes (a few seconds; the\n"
          "                   figures mean nothing)\n"
          "  -h, --help       this help\n"
          "\n"
          "The spec is also remembered as " FFN_LAST_CAL_DIR "/hw.yaml (relative to the\n"
          "current directory): `ffnroof bench` uses it when --hw is not given. Use the spec\n"
          "anywhere with --hw DIR/hw.yaml. Exit codes: 0 ok, 1 failed, 2 bad usage.\n",
          fp);
}

static void print_table(FILE *fp, const ffn_calibration *c, const ffn_kcal_result *k,
                        const ffn_hw *hw, const char *dir)
{
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

static int write_calib(const char *path, const ffn_calibration *c, const ffn_kcal_result *k,
                       const ffn_calib_meta *m)
{
    ffn_cli_out o;
    int rc = ffn_cli_out_open(CMD, &o, path);
    if (rc) return rc;
    bool ok = ffn_calib_write_json(o.fp, c, k, m) == 0;
    return ffn_cli_out_close(CMD, &o, ok);
}

int ffn_cmd_calibrate(int argc, char **argv)
{
    bool quick = false, tiny = false;
    uint64_t threads = 0;
    const char *out_dir = FFN_LAST_CAL_DIR;
    ffn_format fmt = FFN_FMT_TABLE;
    int rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_flag(&seen, FFN_O_QUICK, &quick);
    ffn_cli_bind_flag(&seen, FFN_O_TEST_TINY, &tiny);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &out_dir);
    ffn_cli_bind_u64(&seen, FFN_O_THREADS, 1, 1024, &threads);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, false, &fmt);
    if ((rc = ffn_cli_parse(CMD, argc, argv, NULL, &seen, NULL, usage, false)) >= 0) return rc;
    {
        /* FFNROOF_ISA first: a level this CPU lacks stops here, before anything is written */
        ffn_isa isa;
        ffn_diag dg;
        ffn_diag_clear(&dg);
        if (ffn_isa_selected(&isa, &dg)) return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s", dg.msg);
    }
    if ((rc = ffn_prof_mkdirs(CMD, out_dir))) return rc;

    double load[3] = {-1, -1, -1};
    ffn_prof_loadavg(load);
    const ffn_prof_steal steal0 = ffn_prof_steal_now();
    ffn_prof_progress prog;
    ffn_prof_progress_init(&prog, tiny    ? "calibrate (tiny)"
                                  : quick ? "calibrate --quick"
                                          : "calibrate");
    ffn_prof_sigint_install();

    static ffn_calibration cal;
    ffn_calibrate_opts co;
    memset(&co, 0, sizeof co);
    co.quick = quick || tiny;
    co.threads = (int)threads;
    if (tiny) co.max_bytes = 4.0 * 1048576;
    co.progress = ffn_prof_progress_stage;
    co.user = &prog;
    prog.lo = 0.0;
    prog.hi = tiny ? 0.8 : quick ? 0.55 : 0.4;
    rc = ffn_calibrate_run(&co, &cal);
    if (rc == FFN_EINTERRUPTED) {
        ffn_prof_progress_end(&prog);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "interrupted during the microbenchmarks");
    }
    if (rc) {
        ffn_prof_progress_end(&prog);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "the microbenchmarks failed (%s)",
                            ffn_strerror(rc));
    }

    /* the bf16 peak is the one the bf16 kernels can use: AMX when the best bf16 kernel is
     * the AMX one, else the AVX-512 BF16 dot product */
    const ffn_kernel *kb = NULL;
    bool use_amx = ffn_kernel_best(FFN_DT_BF16, &kb, NULL) == 0 && strstr(kb->name, "amx") != NULL;
    static ffn_hw hw;
    if ((rc = ffn_calibration_to_hw(&cal, use_amx, &hw))) {
        ffn_prof_progress_end(&prog);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "no fp32 peak or no memory bandwidth was measured");
    }
    const char *peak_kind[FFN_DT_COUNT] = {0};
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        if (cal.roof_set && cal.roof_kind[dt] >= 0 && hw.peak_flops[dt] > 0) {
            peak_kind[dt] = ffn_peak_name((ffn_peak_kind)cal.roof_kind[dt]);
            continue;
        }
        double best = 0;
        for (int p = 0; p < FFN_PEAK_COUNT; p++) {
            if ((int)ffn_peak_dtype((ffn_peak_kind)p) != dt) continue;
            if (!use_amx && (p == FFN_PEAK_BF16_AMX || p == FFN_PEAK_INT8_AMX)) continue;
            for (int t = 0; t < 2; t++)
                if (cal.peaks[p][t].flops_per_s > best) {
                    best = cal.peaks[p][t].flops_per_s;
                    peak_kind[dt] = ffn_peak_name((ffn_peak_kind)p);
                }
        }
    }

    static ffn_kcal_result kres;
    ffn_diag d;
    ffn_diag_clear(&d);
    prog.lo = prog.hi;
    prog.hi = 1.0;
    rc = ffn_bench_fit_eff(&hw,
                           tiny    ? FFN_KCAL_TINY
                           : quick ? FFN_KCAL_QUICK
                                   : FFN_KCAL_FULL,
                           cal.threads, ffn_prof_stop_flag(), ffn_prof_progress_case, &prog, &kres,
                           &d);
    ffn_prof_progress_end(&prog);
    /* Ctrl-C: a spec with half a fit is no spec. Only calibration.json is written, marked
     * incomplete with the runs that finished; no hw.yaml, and the remembered spec of
     * FFN_LAST_CAL_DIR stays as it was. */
    const bool interrupted = rc == FFN_EINTERRUPTED || *ffn_prof_stop_flag();
    bool complete = rc == 0;
    char notes[2048] = "";
    if (rc == FFN_EINTERRUPTED)
        snprintf(notes, sizeof notes,
                 "interrupted during the kernel runs: efficiency parameters "
                 "left neutral");
    else if (rc)
        snprintf(notes, sizeof notes,
                 "the kernel runs or the fit failed (%.400s): efficiency "
                 "parameters left neutral",
                 d.msg[0] ? d.msg : ffn_strerror(rc));
    ffn_bench_fit_quality(rc == 0 ? &kres : NULL, &hw.fit);
    char fitw[256];
    if (!interrupted && ffn_hw_fit_warning(&hw, fitw, sizeof fitw))
        fprintf(stderr, "ffnroof %s: %s\n", CMD, fitw);
    if (rc) {
        /* keep a usable spec: the roofline with neutral efficiency */
        ffn_eff neutral;
        memset(&neutral, 0, sizeof neutral);
        neutral.compute_max = neutral.memory_max = 1.0;
        hw.eff = neutral;
    }
    if (kres.notes[0]) {
        size_t l = strlen(notes);
        snprintf(notes + l, sizeof notes - l, "%s%s", l ? "; " : "", kres.notes);
    }
    {
        const ffn_prof_steal steal1 = ffn_prof_steal_now();
        ffn_prof_steal_note(&steal0, &steal1, cal.threads, notes, sizeof notes);
    }
    if (load[0] > hw.compute_units * 0.5) {
        size_t l = strlen(notes);
        snprintf(notes + l, sizeof notes - l,
                 "%sthe load average was %.2f at the start (other "
                 "work was running): rerun on a quiet machine for "
                 "reference figures",
                 l ? "; " : "", load[0]);
    }

    char spec_path[1100], json_path[1100];
    snprintf(spec_path, sizeof spec_path, "%s/hw.yaml", out_dir);
    snprintf(json_path, sizeof json_path, "%s/calibration.json", out_dir);
    if (interrupted || *ffn_prof_stop_flag()) {
        ffn_calib_meta mi;
        memset(&mi, 0, sizeof mi);
        memcpy(mi.load_avg, load, sizeof load);
        memcpy(mi.peak_kind, peak_kind, sizeof peak_kind);
        mi.notes = "interrupted during the kernel runs: no spec written";
        rc = write_calib(json_path, &cal, kres.n_runs ? &kres : NULL, &mi);
        if (rc) return rc;
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD,
                            "interrupted: %s kept the finished runs, no "
                            "spec written",
                            json_path);
    }
    if (ffn_hw_write(&hw, spec_path, &d)) return ffn_cli_diag(&d);
    ffn_calib_meta m;
    memset(&m, 0, sizeof m);
    m.complete = complete;
    memcpy(m.load_avg, load, sizeof load);
    m.spec_file = spec_path;
    m.spec = &hw;
    memcpy(m.peak_kind, peak_kind, sizeof peak_kind);
    m.notes = notes;
    const ffn_kcal_result *kp = rc == 0 || kres.n_runs ? &kres : NULL;
    if ((rc = write_calib(json_path, &cal, kp, &m))) return rc;
    /* remember it for `ffnroof bench` */
    if (strcmp(out_dir, FFN_LAST_CAL_DIR) != 0) {
        if (ffn_prof_mkdirs(CMD, FFN_LAST_CAL_DIR) == 0) {
            ffn_diag d2;
            ffn_diag_clear(&d2);
            if (ffn_hw_write(&hw, FFN_LAST_CAL_DIR "/hw.yaml", &d2) == 0)
                write_calib(FFN_LAST_CAL_DIR "/calibration.json", &cal, kp, &m);
        }
    }
    if (fmt == FFN_FMT_JSON) {
        if (ffn_calib_write_json(stdout, &cal, kp, &m)) return FFN_EXIT_FAIL;
    } else {
        print_table(stdout, &cal, kp, &hw, out_dir);
        if (notes[0]) printf("note: %s\n", notes);
    }
    return complete ? FFN_EXIT_OK : FFN_EXIT_FAIL;
}
