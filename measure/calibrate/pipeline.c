/* The one calibration pipeline (include/ffnroof/calibrate.h): roofs, spec, peak kinds, kernel
 * fit, fit record and notes, in that order, for every command that calibrates this host. The
 * measuring is calibrate.c (roofs) and kernel_fit.c (the efficiency fit); this file only
 * orders them and decides what the record says. */
#include <stdio.h>
#include <string.h>

#include "ffnroof/calibrate.h"
#include "ffnroof/kernels.h"

bool ffn_calibration_bf16_amx(uint64_t kernel_requires)
{
    return (kernel_requires & FFN_CPU_AMX_BF16) != 0;
}

bool ffn_calibration_bf16_amx_here(void)
{
    const ffn_kernel *kb = NULL;
    return ffn_kernel_best(FFN_DT_BF16, &kb, NULL) == 0 &&
           ffn_calibration_bf16_amx(ffn_kernel_requires(kb));
}

double ffn_cal_roofs_share(ffn_kcal_mode mode)
{
    return mode == FFN_KCAL_TINY ? 0.8 : mode == FFN_KCAL_QUICK ? 0.55 : 0.4;
}

void ffn_cal_peak_kinds(const ffn_calibration *c, const ffn_hw *hw, bool use_amx,
                        const char *peak_kind[FFN_DT_COUNT])
{
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        peak_kind[dt] = NULL;
        if (c->roof_set && c->roof_kind[dt] >= 0 && hw->peak_flops[dt] > 0) {
            peak_kind[dt] = ffn_peak_name((ffn_peak_kind)c->roof_kind[dt]);
            continue;
        }
        double best = 0;
        for (int p = 0; p < FFN_PEAK_COUNT; p++) {
            if ((int)ffn_peak_dtype((ffn_peak_kind)p) != dt) continue;
            if (!use_amx && (p == FFN_PEAK_BF16_AMX || p == FFN_PEAK_INT8_AMX)) continue;
            for (int t = 0; t < 2; t++)
                if (c->peaks[p][t].flops_per_s > best) {
                    best = c->peaks[p][t].flops_per_s;
                    peak_kind[dt] = ffn_peak_name((ffn_peak_kind)p);
                }
        }
    }
}

static void note(ffn_cal_record *r, const char *text)
{
    size_t l = strlen(r->notes);
    snprintf(r->notes + l, sizeof r->notes - l, "%s%s", l ? "; " : "", text);
}

void ffn_cal_note_load(ffn_cal_record *r, double load1)
{
    if (!(load1 > r->hw.compute_units * 0.5)) return;
    char text[200];
    snprintf(text, sizeof text,
             "the load average was %.2f at the start (other work was running): rerun on a quiet "
             "machine for reference figures",
             load1);
    note(r, text);
}

static void begin(const ffn_cal_progress *p, ffn_cal_step step, double lo, double hi)
{
    if (p && p->begin) p->begin(p->user, step, lo, hi);
}

int ffn_cal_pipeline_run(const ffn_cal_opts *opts, const ffn_cal_progress *progress,
                         ffn_cal_record *out, ffn_cal_step *failed)
{
    memset(out, 0, sizeof *out);
    ffn_diag_clear(&out->diag);
    const ffn_kcal_mode mode = opts->mode;
    const double share = ffn_cal_roofs_share(mode);

    /* 1. the roofs */
    ffn_calibrate_opts co;
    memset(&co, 0, sizeof co);
    co.quick = mode != FFN_KCAL_FULL;
    co.threads = opts->threads;
    if (mode == FFN_KCAL_TINY) co.max_bytes = 4.0 * 1048576;
    co.progress = progress ? progress->stage : NULL;
    co.user = progress ? progress->user : NULL;
    begin(progress, FFN_CAL_STEP_ROOFS, 0.0, share);
    int rc = ffn_calibrate_run(&co, &out->cal);
    if (rc) {
        if (failed) *failed = FFN_CAL_STEP_ROOFS;
        return rc;
    }

    /* 2. the spec: the bf16 roof is the one the bf16 kernels can use (AMX tiles when the best
     * bf16 kernel requires them, else the AVX-512 BF16 dot product) */
    begin(progress, FFN_CAL_STEP_SPEC, share, share);
    out->use_amx = ffn_calibration_bf16_amx_here();
    if (ffn_calibration_to_hw(&out->cal, out->use_amx, &out->hw)) {
        if (failed) *failed = FFN_CAL_STEP_SPEC;
        return FFN_EINVAL;
    }
    ffn_cal_peak_kinds(&out->cal, &out->hw, out->use_amx, out->peak_kind);

    /* 3. the efficiency fit to the kernels */
    begin(progress, FFN_CAL_STEP_FIT, share, 1.0);
    const int krc = ffn_bench_fit_eff(&out->hw, mode, out->cal.threads, opts->stop,
                                      progress ? progress->kcase : NULL,
                                      progress ? progress->user : NULL, &out->kcal, &out->diag);
    out->fit_rc = krc;
    out->interrupted = krc == FFN_EINTERRUPTED || (opts->stop && *opts->stop);
    out->complete = krc == 0;
    if (krc == FFN_EINTERRUPTED) {
        note(out, "interrupted during the kernel runs: efficiency parameters left neutral");
    } else if (krc) {
        char text[600];
        snprintf(text, sizeof text,
                 "the kernel runs or the fit failed (%.400s): efficiency parameters left neutral",
                 out->diag.msg[0] ? out->diag.msg : ffn_strerror(krc));
        note(out, text);
    }
    ffn_bench_fit_quality(krc == 0 ? &out->kcal : NULL, &out->hw.fit);
    if (out->interrupted ||
        !ffn_hw_fit_warning(&out->hw, out->fit_warning, sizeof out->fit_warning))
        out->fit_warning[0] = '\0';
    if (krc) {
        /* keep a usable spec: the roofline with neutral efficiency */
        memset(&out->hw.eff, 0, sizeof out->hw.eff);
        out->hw.eff.compute_max = out->hw.eff.memory_max = 1.0;
    }
    if (out->kcal.notes[0]) note(out, out->kcal.notes);
    begin(progress, FFN_CAL_STEP_DONE, 1.0, 1.0);
    return 0;
}
