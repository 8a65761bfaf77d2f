/* `ffnroof fit`: fit a device's efficiency model (docs/model.md, "Efficiency") to measured
 * GEMM or FFN-kernel times, print the efficiency block for its hw spec and the error of every
 * point; --check evaluates the spec's current parameters without fitting. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

#include "ffnroof/fit.h"
#include "ffnroof/fitdata.h"
#include "ffnroof/hw.h"
#include "ffnroof/json.h"

#define CMD "fit"
#define MAX_POINTS 4096

static void usage(FILE *fp)
{
    fputs("usage: ffnroof fit --hw NAME|PATH --data FILE.csv [options]\n"
          "\n"
          "Fit the efficiency model of a device to measured times and print the fitted\n"
          "'efficiency:' block with the error of every point.\n"
          "\n"
          "  --hw NAME|PATH   device whose peaks, bandwidth, units and tiles are used (required)\n"
          "  --data FILE      CSV 'm,n,k,time_ms' (GEMMs), 'm,d,f,act,time_ms' (FFN layers) or\n"
          "                   the GPU kit's 'kind,dtype,m,n,k,time_<unit>' (bench/gpu/)\n"
          "  --dtype D        dtype of the measured runs of the first two formats (default: fp16)\n"
          "  --fit LIST       parameters beyond compute_max and memory_max: launch, harness,\n"
          "                   overlap, compute-ramp, memory-ramp, by-dtype (compute_max per\n"
          "                   dtype), util (wave utilisation gamma - alpha/waves per dtype),\n"
          "                   gemv (one-row GEMM bandwidth), elem (elementwise bandwidth),\n"
          "                   level (the fraction of an on-chip level's bandwidth the warm\n"
          "                   points reach: rows after '#@ weights hot', the kit's --warm);\n"
          "                   hold-max keeps the spec's compute_max and memory_max\n"
          "                   (default: launch,overlap).\n"
          "                   'harness' fits the per-call overhead of the harness that measured\n"
          "                   the data (kept out of predictions) instead of the device launch\n"
          "                   cost, which then stays as the spec gives it; not both\n"
          "  --check          do not fit: report the errors of the spec's own parameters\n"
          "  --out PATH       write the calibrated spec (the device with the fitted efficiency\n"
          "                   block and its residuals as 'uncertainty:') to PATH\n"
          "  --format F       table or json (default: table)\n"
          "  -h, --help       this help\n",
          fp);
}

/* --fit a,b,c: the fitted parameters as FFN_FIT_* flags ("none" for the roofline alone). */
static int fit_flags(const char *list, unsigned *flags)
{
    static const char *const names[] = {
        "launch", "harness", "overlap", "compute-ramp", "memory-ramp", "by-dtype", "util",
        "gemv",   "elem",    "level",   "hold-max",     "none",        NULL};
    static const unsigned bits[] = {
        FFN_FIT_LAUNCH,       FFN_FIT_HARNESS,     FFN_FIT_OVERLAP,
        FFN_FIT_COMPUTE_RAMP, FFN_FIT_MEMORY_RAMP, FFN_FIT_COMPUTE_BY_DTYPE,
        FFN_FIT_WAVE_UTIL,    FFN_FIT_MEMORY_GEMV, FFN_FIT_MEMORY_ELEM,
        FFN_FIT_LEVEL,        FFN_FIT_HOLD_MAX,    0};
    *flags = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i, rc;
        if ((rc = ffn_cli_choice(CMD, "--fit", t, names, &i))) return rc;
        *flags |= bits[i];
    }
    return 0;
}

int ffn_cmd_fit(int argc, char **argv)
{
    const char *hw_name = NULL, *data = NULL, *out_path = NULL, *fit = NULL;
    ffn_dtype dt = FFN_DT_FP16;
    unsigned flags = FFN_FIT_LAUNCH | FFN_FIT_OVERLAP;
    bool check = false;
    ffn_format fmt = FFN_FMT_TABLE;
    int rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_HW, &hw_name);
    ffn_cli_bind_str(&seen, FFN_O_DATA, &data);
    ffn_cli_bind_dtype(&seen, FFN_O_DTYPE, &dt);
    ffn_cli_bind_str(&seen, FFN_O_FIT, &fit);
    ffn_cli_bind_flag(&seen, FFN_O_CHECK, &check);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, false, &fmt);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &out_path);
    if ((rc = ffn_cli_parse(CMD, argc, argv, NULL, &seen, NULL, usage, true)) >= 0) return rc;
    if (fit && (rc = fit_flags(fit, &flags))) return rc;
    if ((flags & FFN_FIT_LAUNCH) && (flags & FFN_FIT_HARNESS))
        return ffn_cli_usage(CMD, "--fit: launch and harness are one constant to the data; "
                                  "fit one of them");
    if (!hw_name) return ffn_cli_usage(CMD, "--hw is required");
    if (!data) return ffn_cli_usage(CMD, "--data is required");
    static ffn_hw hw;
    if ((rc = ffn_cli_load_hw(CMD, hw_name, &hw))) return rc;
    static ffn_fit_point pts[MAX_POINTS];
    size_t n;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_fit_data_load(data, dt, dt, pts, MAX_POINTS, &n, &d)) return ffn_cli_diag(&d);
    if (!check) {
        ffn_eff e;
        if (ffn_eff_fit(&hw, pts, n, flags, &e))
            return ffn_cli_fail(FFN_EXIT_FAIL, CMD,
                                "the fit failed (gemv needs one-row and larger GEMMs, elem "
                                "needs elementwise points, util needs GEMMs, level needs warm "
                                "points whose data fits on chip)");
        hw.eff = e;
        if (ffn_fit_uncertainty(&hw, pts, n, &hw.unc))
            return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "cannot compute the fit's residuals");
    }
    if (out_path) {
        if (check) return ffn_cli_usage(CMD, "--out writes a fitted spec; not with --check");
        if ((rc = ffn_hw_write(&hw, out_path, &d))) return ffn_cli_diag(&d);
    }
    static double err[MAX_POINTS];
    ffn_fit_summary s;
    ffn_fit_errors(&hw, pts, n, err, &s);
    const ffn_eff *e = &hw.eff;
    if (fmt == FFN_FMT_JSON) {
        ffn_json j;
        ffn_json_init(&j, stdout, true);
        ffn_json_obj_begin(&j, NULL);
        ffn_json_str(&j, "hw", hw.name);
        ffn_json_bool(&j, "fitted", !check);
        ffn_json_obj_begin(&j, "efficiency");
        ffn_json_num(&j, "compute_max", e->compute_max);
        ffn_json_num(&j, "compute_half_flops", e->compute_half_flops);
        ffn_json_num(&j, "memory_max", e->memory_max);
        ffn_json_num(&j, "memory_half_bytes", e->memory_half_bytes);
        ffn_json_num(&j, "launch_s", e->launch_s);
        ffn_json_num(&j, "harness_s", e->harness_s);
        ffn_json_num(&j, "overlap_p", e->overlap_p);
        ffn_json_num(&j, "memory_max_gemv", e->memory_max_gemv);
        ffn_json_num(&j, "memory_max_elem", e->memory_max_elem);
        ffn_json_obj_begin(&j, "level_max");
        for (int l = 0; l < hw.n_levels; l++)
            if (e->level_max[l] > 0) ffn_json_num(&j, hw.levels[l].name, e->level_max[l]);
        ffn_json_obj_end(&j);
        ffn_json_obj_begin(&j, "util_by_dtype");
        for (int k = 0; k < FFN_DT_COUNT; k++) {
            if (!(e->util_gamma[k] > 0)) continue;
            ffn_json_obj_begin(&j, ffn_dtype_name((ffn_dtype)k));
            ffn_json_num(&j, "gamma", e->util_gamma[k]);
            ffn_json_num(&j, "alpha", e->util_alpha[k]);
            ffn_json_obj_end(&j);
        }
        ffn_json_obj_end(&j);
        ffn_json_obj_end(&j);
        ffn_json_obj_begin(&j, "uncertainty");
        ffn_json_num(&j, "p10", hw.unc.p10);
        ffn_json_num(&j, "p90", hw.unc.p90);
        ffn_json_bool(&j, "default", hw.unc.is_default);
        ffn_json_obj_end(&j);
        ffn_json_arr_begin(&j, "points");
        for (size_t i = 0; i < n; i++) {
            ffn_json_obj_begin(&j, NULL);
            ffn_json_u64(&j, "m", pts[i].m);
            ffn_json_u64(&j, pts[i].f ? "d" : "n", pts[i].f ? pts[i].k : pts[i].n);
            ffn_json_u64(&j, pts[i].f ? "f" : "k", pts[i].f ? pts[i].f : pts[i].k);
            ffn_json_str(&j, "kind", pts[i].f ? "layer" : pts[i].elem_bytes > 0 ? "elem" : "gemm");
            ffn_json_str(&j, "dtype", ffn_dtype_name(pts[i].wdtype));
            ffn_json_bool(&j, "best_of_sweep", pts[i].best_of_sweep);
            ffn_json_bool(&j, "warm", pts[i].hot);
            ffn_json_num(&j, "measured_s", pts[i].time_s);
            ffn_json_num(&j, "predicted_s", pts[i].time_s * (1 + err[i]));
            ffn_json_num(&j, "error", err[i]);
            ffn_json_obj_end(&j);
        }
        ffn_json_arr_end(&j);
        ffn_json_num(&j, "median_abs_error", s.median_abs);
        ffn_json_num(&j, "max_abs_error", s.max_abs);
        ffn_json_obj_end(&j);
        return ffn_json_finish(&j) ? FFN_EXIT_FAIL : FFN_EXIT_OK;
    }
    printf("%s efficiency model for %s on %zu points of %s\n", check ? "checked" : "fitted",
           hw.name, n, data);
    printf("efficiency:\n  compute_max: %.4f\n  compute_half: %.4g FLOP\n  memory_max: %.4f\n"
           "  memory_half: %.4g B\n  launch: %.4g us\n  harness: %.4g us\n  overlap: %.4g\n",
           e->compute_max, e->compute_half_flops, e->memory_max, e->memory_half_bytes,
           e->launch_s * 1e6, e->harness_s * 1e6,
           isfinite(e->overlap_p) && e->overlap_p < 1e6 ? e->overlap_p : 0.0);
    if (e->memory_max_gemv > 0) printf("  memory_max_gemv: %.4f\n", e->memory_max_gemv);
    if (e->memory_max_elem > 0) printf("  memory_max_elem: %.4f\n", e->memory_max_elem);
    for (int l = 0; l < hw.n_levels; l++)
        if (e->level_max[l] > 0)
            printf("  level_max %s: %.4f (of %.4g TB/s)\n", hw.levels[l].name, e->level_max[l],
                   hw.levels[l].bandwidth_bps / 1e12);
    for (int k = 0; k < FFN_DT_COUNT; k++)
        if (e->util_gamma[k] > 0)
            printf("  util %s: gamma %.4f, alpha %.4f\n", ffn_dtype_name((ffn_dtype)k),
                   e->util_gamma[k], e->util_alpha[k]);
    if (!check)
        printf("uncertainty:\n  p10: %.4f\n  p90: %.4f\n  points: %zu\n", hw.unc.p10, hw.unc.p90,
               n);
    printf("\n%10s %8s %8s %8s %12s %12s %8s\n", "m", pts[0].f ? "d" : "n", pts[0].f ? "f" : "k",
           "", "measured", "predicted", "error");
    for (size_t i = 0; i < n; i++)
        printf("%10llu %8llu %8llu %8s %9.4f ms %9.4f ms %+7.1f%%%s\n",
               (unsigned long long)pts[i].m, (unsigned long long)(pts[i].f ? pts[i].k : pts[i].n),
               (unsigned long long)(pts[i].f ? pts[i].f : pts[i].k),
               pts[i].f                ? ffn_act_name(pts[i].act)
               : pts[i].elem_bytes > 0 ? "elem"
                                       : (pts[i].wdtype != dt ? ffn_dtype_name(pts[i].wdtype) : ""),
               pts[i].time_s * 1e3, pts[i].time_s * (1 + err[i]) * 1e3, 100 * err[i],
               pts[i].hot ? "  warm" : "");
    printf("median |error| %.1f%%, mean %.1f%%, max %.1f%%\n", 100 * s.median_abs, 100 * s.mean_abs,
           100 * s.max_abs);
    if (s.median_abs > 0.10 || s.max_abs > 0.35)
        fprintf(stderr,
                "ffnroof fit: warning: a poor fit (median |error| %.1f%%, max %.1f%%; the model "
                "does not explain these data well)\n",
                100 * s.median_abs, 100 * s.max_abs);
    if (out_path) printf("wrote %s\n", out_path);
    return FFN_EXIT_OK;
}
