/* The calibration pipeline (measure/calibrate/pipeline.c): the bf16 roof follows the features
 * the bf16 kernel requires, not its name; the peak kinds follow the roofs; the load note's
 * threshold; and the pipeline itself in its tiny mode (a few seconds) runs its steps in order
 * and gives a record with a spec, its peak kinds and a finished fit, as every command that
 * calibrates writes it. */
#include <criterion/criterion.h>
#include <string.h>

#include "ffnroof/calibrate.h"
#include "ffnroof/kernels.h"

Test(cal_pipeline, bf16_roof_is_amx_exactly_when_the_kernel_requires_amx_bf16)
{
    cr_expect(ffn_calibration_bf16_amx(FFN_CPU_AMX_BF16));
    cr_expect(ffn_calibration_bf16_amx(FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16 |
                                       FFN_CPU_AMX_BF16));
    cr_expect_not(ffn_calibration_bf16_amx(0));
    cr_expect_not(ffn_calibration_bf16_amx(FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16));
    /* int8 tiles alone do not multiply bf16 */
    cr_expect_not(ffn_calibration_bf16_amx(FFN_CPU_AMX_INT8));
    cr_expect_not(ffn_calibration_bf16_amx(FFN_CPU_NEON | FFN_CPU_ARM_BF16));
}

Test(cal_pipeline, bf16_roof_follows_the_kernel_table_not_the_names)
{
    const ffn_kernel *ks[256];
    uint64_t req[256];
    const size_t n = ffn_kernel_table(ks, req, 256);
    cr_assert_gt(n, 0u);
    for (size_t i = 0; i < n && i < 256; i++) {
        cr_expect_eq(ffn_kernel_requires(ks[i]), req[i], "%s", ks[i]->name);
        cr_expect_eq(ffn_calibration_bf16_amx(req[i]), (req[i] & FFN_CPU_AMX_BF16) != 0, "%s",
                     ks[i]->name);
    }
    /* what dispatch picks for bf16 on a Sapphire Rapids (AMX) and on a Zen 4 (AVX-512 BF16) */
    const uint64_t spr = FFN_CPU_AVX2 | FFN_CPU_AVX_VNNI | FFN_CPU_AVX512 | FFN_CPU_AVX512_VNNI |
                         FFN_CPU_AVX512_BF16 | FFN_CPU_AVX512_FP16 | FFN_CPU_AMX_BF16 |
                         FFN_CPU_AMX_INT8;
    const uint64_t zen4 = FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_VNNI | FFN_CPU_AVX512_BF16;
    const ffn_kernel *k = NULL;
#if defined(__x86_64__)
    /* an x86 build has the AMX kernels (an AArch64 one answers an x86 mask with its portable
     * kernel, which needs no AMX) */
    if (ffn_kernel_for_features(spr, FFN_ISA_AMX, FFN_DT_BF16, &k, NULL) == 0)
        cr_expect(ffn_calibration_bf16_amx(ffn_kernel_requires(k)), "%s", k->name);
    else
        cr_log_info("no AMX bf16 kernel in this build");
#endif
    cr_assert_eq(ffn_kernel_for_features(zen4, FFN_ISA_AVX512_BF16, FFN_DT_BF16, &k, NULL), 0);
    cr_expect_not(ffn_calibration_bf16_amx(ffn_kernel_requires(k)), "%s", k->name);
    /* capped below AMX on an AMX CPU: the AVX-512 BF16 roof */
    cr_assert_eq(ffn_kernel_for_features(spr, FFN_ISA_AVX512_BF16, FFN_DT_BF16, &k, NULL), 0);
    cr_expect_not(ffn_calibration_bf16_amx(ffn_kernel_requires(k)), "%s", k->name);
}

Test(cal_pipeline, peak_kinds_take_the_roof_kind_else_the_best_measured_kind)
{
    static ffn_calibration c;
    static ffn_hw hw;
    memset(&c, 0, sizeof c);
    memset(&hw, 0, sizeof hw);
    c.peaks[FFN_PEAK_FP32_AVX2][0].flops_per_s = 50e9;
    c.peaks[FFN_PEAK_FP32_AVX512][1].flops_per_s = 90e9;
    c.peaks[FFN_PEAK_BF16_AVX512][1].flops_per_s = 100e9;
    c.peaks[FFN_PEAK_BF16_AMX][1].flops_per_s = 900e9;
    const char *pk[FFN_DT_COUNT];
    ffn_cal_peak_kinds(&c, &hw, false, pk);
    cr_expect_str_eq(pk[FFN_DT_FP32], ffn_peak_name(FFN_PEAK_FP32_AVX512));
    cr_expect_str_eq(pk[FFN_DT_BF16], ffn_peak_name(FFN_PEAK_BF16_AVX512), "AMX skipped");
    cr_expect_null(pk[FFN_DT_INT4]);
    ffn_cal_peak_kinds(&c, &hw, true, pk);
    cr_expect_str_eq(pk[FFN_DT_BF16], ffn_peak_name(FFN_PEAK_BF16_AMX));
    /* a roof kind set by the calibration wins where the spec has that peak */
    c.roof_set = true;
    for (int d = 0; d < FFN_DT_COUNT; d++)
        c.roof_kind[d] = -1;
    c.roof_kind[FFN_DT_FP32] = FFN_PEAK_FP32_AVX2;
    hw.peak_flops[FFN_DT_FP32] = 50e9;
    ffn_cal_peak_kinds(&c, &hw, true, pk);
    cr_expect_str_eq(pk[FFN_DT_FP32], ffn_peak_name(FFN_PEAK_FP32_AVX2));
}

Test(cal_pipeline, load_note_only_above_half_the_compute_units)
{
    static ffn_cal_record r;
    memset(&r, 0, sizeof r);
    r.hw.compute_units = 4;
    ffn_cal_note_load(&r, -1); /* unknown */
    ffn_cal_note_load(&r, 2.0);
    cr_expect_str_empty(r.notes);
    ffn_cal_note_load(&r, 2.5);
    cr_expect(strstr(r.notes, "the load average was 2.50 at the start") != NULL, "%s", r.notes);
    const size_t l = strlen(r.notes);
    ffn_cal_note_load(&r, 3.0);
    cr_expect_eq(strncmp(r.notes + l, "; the load average was 3.00", 27), 0, "%s", r.notes);
}

Test(cal_pipeline, roofs_share_grows_as_the_kernel_fit_shrinks)
{
    cr_expect_lt(ffn_cal_roofs_share(FFN_KCAL_FULL), ffn_cal_roofs_share(FFN_KCAL_QUICK));
    cr_expect_lt(ffn_cal_roofs_share(FFN_KCAL_QUICK), ffn_cal_roofs_share(FFN_KCAL_TINY));
    cr_expect_lt(ffn_cal_roofs_share(FFN_KCAL_TINY), 1.0);
}

typedef struct seen {
    int steps[8];
    int n;
    double last_lo, last_hi;
    bool ordered;
} seen;

static void on_begin(void *user, ffn_cal_step step, double lo, double hi)
{
    seen *s = user;
    if (s->n < 8) s->steps[s->n++] = (int)step;
    if (lo < s->last_lo || hi < s->last_hi || lo > hi) s->ordered = false;
    s->last_lo = lo;
    s->last_hi = hi;
}

Test(cal_pipeline, tiny_run_gives_a_spec_with_peak_kinds_and_a_fit, .timeout = 120)
{
    static ffn_cal_record r;
    seen s = {.ordered = true};
    const ffn_cal_opts o = {.mode = FFN_KCAL_TINY, .threads = 2};
    const ffn_cal_progress p = {.begin = on_begin, .user = &s};
    ffn_cal_step failed = FFN_CAL_STEP_DONE;
    const int rc = ffn_cal_pipeline_run(&o, &p, &r, &failed);
    cr_assert_eq(rc, 0, "%s (step %d)", ffn_strerror(rc), (int)failed);
    cr_expect_eq(s.n, 4);
    for (int i = 0; i < s.n; i++)
        cr_expect_eq(s.steps[i], i, "steps in order");
    cr_expect(s.ordered, "each step's part of the bar follows the one before");
    cr_expect_gt(r.hw.peak_flops[FFN_DT_FP32], 0);
    cr_expect_gt(r.hw.mem_bandwidth_bps, 0);
    /* the record carries the peak kind behind every roof the spec has */
    cr_assert_not_null(r.peak_kind[FFN_DT_FP32]);
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (r.hw.peak_flops[d] > 0 && d != FFN_DT_INT4)
            cr_expect_not_null(r.peak_kind[d], "dtype %s", ffn_dtype_name((ffn_dtype)d));
    cr_expect_eq(r.use_amx, ffn_calibration_bf16_amx_here());
    if (r.fit_rc == 0) {
        cr_expect(r.complete);
        cr_expect_not(r.interrupted);
        cr_expect_gt(r.kcal.n_runs, 0u);
        cr_expect(r.hw.fit.recorded, "the fit's record is in the spec");
    } else {
        cr_expect_not(r.complete);
        cr_expect(strstr(r.notes, "efficiency parameters left neutral") != NULL, "%s", r.notes);
        cr_expect_eq(r.hw.eff.compute_max, 1.0);
    }
}

Test(cal_pipeline, a_stop_before_the_fit_marks_the_record_interrupted, .timeout = 120)
{
    static ffn_cal_record r;
    static volatile sig_atomic_t stop = 1;
    const ffn_cal_opts o = {.mode = FFN_KCAL_TINY, .threads = 1, .stop = &stop};
    cr_assert_eq(ffn_cal_pipeline_run(&o, NULL, &r, NULL), 0);
    cr_expect(r.interrupted);
    cr_expect_not(r.complete);
    cr_expect_str_empty(r.fit_warning);
    cr_expect_not_null(r.peak_kind[FFN_DT_FP32], "the roofs' record stays");
}
