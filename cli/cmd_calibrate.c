/* `ffnroof calibrate`: this host's empirical roofline (timer, clock, peak FLOP/s per dtype,
 * bandwidth per memory level), turned into a hardware spec whose efficiency model is fitted to
 * ffnroof's own FFN kernels at a few calibration shapes: the calibration pipeline
 * (measure/calibrate/pipeline.c, ffn_cal_pipeline_run); the table and the files are
 * cli_calib.c's. Writes DIR/hw.yaml and DIR/calibration.json and
 * remembers the spec as results/last-calibration/hw.yaml, where `ffnroof bench` looks for its
 * default spec. docs/profiler.md describes the method. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"
#include "cli_prof.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/measure.h"

#define CMD "calibrate"

static void usage(FILE *fp)
{
    fputs("usage: ffnroof calibrate [--quick] [--threads N] [--out DIR] [--format table|json]\n"
          "\n"
          "Measure this host's roofline (peak FLOP/s per dtype, bandwidth per memory level,\n"
          "clock, timer) and fit the simulator's efficiency model to ffnroof's FFN kernels at\n"
          "a few calibration shapes (prefill and decode, fp32 and bf16).\n"
          "\n",
          fp);
    ffn_cli_help_words(
        fp, CMD,
        (const int[]){FFN_O_QUICK, FFN_O_THREADS, FFN_O_OUT_DIR, FFN_O_OUT, FFN_O_FORMAT, 0});
    fputs("  --test-tiny      for tests: tiny sweeps and kernel shapes (a few seconds; the\n"
          "                   figures mean nothing)\n"
          "  -h, --help       this help\n"
          "\n"
          "The spec is also remembered as " FFN_LAST_CAL_DIR "/hw.yaml (relative to the\n"
          "current directory): `ffnroof bench` uses it when --hw is not given. Use the spec\n"
          "anywhere with --hw DIR/hw.yaml. Exit codes: 0 ok, 1 failed, 2 bad usage.\n",
          fp);
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
    ffn_cli_bind_str(&seen, FFN_O_OUT_DIR, &out_dir);
    ffn_cli_bind_word(&seen, FFN_O_THREADS, &threads);
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
    ffn_prof_sigint_install();
    static ffn_cal_record r;
    const ffn_cal_opts co = {.mode = tiny    ? FFN_KCAL_TINY
                                     : quick ? FFN_KCAL_QUICK
                                             : FFN_KCAL_FULL,
                             .threads = (int)threads,
                             .stop = ffn_prof_stop_flag()};
    ffn_cal_step failed = FFN_CAL_STEP_DONE;
    rc = ffn_prof_cal_run(CMD,
                          tiny    ? "calibrate (tiny)"
                          : quick ? "calibrate --quick"
                                  : "calibrate",
                          &co, load, &r, &failed);
    if (rc) return ffn_prof_cal_fail(CMD, rc, failed);
    if ((rc = ffn_prof_cal_write(CMD, out_dir, &r, load, true))) return rc;
    if (fmt == FFN_FMT_JSON) {
        char spec_path[1100];
        snprintf(spec_path, sizeof spec_path, "%s/hw.yaml", out_dir);
        const ffn_calib_meta m = ffn_prof_cal_meta(&r, load, spec_path);
        if (ffn_prof_cal_json(stdout, &r, &m)) return FFN_EXIT_FAIL;
    } else {
        ffn_prof_cal_table(stdout, &r, out_dir);
        if (r.notes[0]) printf("note: %s\n", r.notes);
    }
    return r.complete ? FFN_EXIT_OK : FFN_EXIT_FAIL;
}
