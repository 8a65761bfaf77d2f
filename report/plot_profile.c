/* The charts of the profiler's files (include/ffnroof/plot.h): a calibration record
 * (ffnroof/profile_file.h, read by io/load/profile_load.c) as the host's measured roofs, a
 * bench record's spec as the roofs it ran against, and a bench run's roofline and latency
 * charts. */
#include "ffnroof/plot.h"

#include <math.h>
#include <string.h>

#include "plot_internal.h"

void ffn_plot_device_from_calibration(const ffn_calib_file *f, ffn_plot_device *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", f->host[0] ? f->host : "calibrated host");
    snprintf(out->origin, sizeof out->origin, "calibration.json");
    const uint64_t all = f->threads;

    /* compute: every peak kind measured on all threads */
    for (size_t i = 0; i < f->n_peaks; i++) {
        const ffn_calib_file_peak *p = &f->peaks[i];
        if (p->threads != all || !(p->flops_per_s > 0) || !p->kind[0]) continue;
        char kind[sizeof p->kind];
        snprintf(kind, sizeof kind, "%s", p->kind);
        for (char *c = kind; *c; c++)
            if (*c == '_') *c = ' ';
        ffn_plot_device_add(out, kind, FFN_ROOF_COMPUTE, p->flops_per_s);
    }
    if (!f->has_bandwidth) return;
    /* bandwidth: the all-threads plateaus of the read-only and a read-write curve */
    int n_ro = 0; /* read-only plateaus found */
    const char *rw_kernel = "triad";
    for (int pass = 0; pass < 3; pass++) {
        /* pass 0: read-only; 1: triad; 2: copy when triad had no plateau */
        int found = 0;
        const char *want = pass == 0 ? "read" : pass == 1 ? "triad" : "copy";
        if (pass == 2 && strcmp(rw_kernel, "copy") != 0) break;
        for (size_t i = 0; i < f->n_levels; i++) {
            const ffn_calib_file_level *l = &f->levels[i];
            if (strcmp(l->kernel, want) != 0 || l->threads != all || !(l->bandwidth_bps > 0))
                continue;
            if (ffn_plot_device_add(out, l->name, pass ? FFN_ROOF_READ_WRITE : FFN_ROOF_READ_ONLY,
                                    l->bandwidth_bps) == 0)
                found++;
        }
        if (pass == 0) n_ro = found;
        if (pass == 1 && !found) rw_kernel = "copy";
    }
    /* the read-only tail rate is what calibrate puts in hw.yaml as main memory (measure.h):
     * drawn too when no plateau was found or when it differs from the last plateau, so that
     * the ridge points agree with the spec the simulator uses */
    const double t1 = f->tail_one_thread_bps, ta = f->tail_all_threads_bps;
    double t = ta > 0 ? ta : t1;
    if (t1 > t) t = t1;
    double last = 0;
    for (int i = 0; i < out->n_ceil; i++)
        if (out->ceil[i].kind == FFN_ROOF_READ_ONLY) last = out->ceil[i].value;
    if (t > 0 && (!n_ro || fabs(t / last - 1) > 0.05))
        ffn_plot_device_add(out, n_ro ? "memory (spec)" : "memory", FFN_ROOF_READ_ONLY, t);
}

void ffn_plot_device_from_bench(const ffn_plot_bench *b, ffn_plot_device *out)
{
    const ffn_plot_bench_spec *s = &b->spec;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", s->name);
    snprintf(out->origin, sizeof out->origin, "bench spec");
    /* a spec written by calibrate has the read-only tail rate as its memory bandwidth */
    const bool measured = ffn__plot_calibrated(b->spec_source);
    for (int i = 0; i < s->n_peaks; i++)
        ffn_plot_device_add(out, s->peak_names[i], FFN_ROOF_COMPUTE, s->peak_flops[i]);
    if (s->mem_bandwidth_bps > 0)
        ffn_plot_device_add(out, measured ? "memory" : "DRAM",
                            measured ? FFN_ROOF_READ_ONLY : FFN_ROOF_DATASHEET,
                            s->mem_bandwidth_bps);
    for (int i = 0; i < s->n_onchip; i++)
        ffn_plot_device_add(out, s->onchip_names[i], FFN_ROOF_DATASHEET, s->onchip_bps[i]);
}

void ffn_plot_bench_charts(const ffn_plot_bench *b, const ffn_plot_device *cal, const char *today,
                           ffn_roofline_chart *rc, ffn_latency_chart *lc)
{
    memset(rc, 0, sizeof *rc);
    memset(lc, 0, sizeof *lc);
    if (cal)
        rc->dev[0] = *cal;
    else
        ffn_plot_device_from_bench(b, &rc->dev[0]);
    rc->n_dev = 1;
    snprintf(rc->title, sizeof rc->title,
             "Roofline of %s: ffnroof kernels measured and predicted (%s)", rc->dev[0].name,
             b->date[0] ? b->date : today);
    for (size_t i = 0; i < b->n_cases && rc->n_pts < FFN_PLOT_MAX_POINTS; i++)
        ffn__plot_case_point(&b->cases[i], 0, &rc->pts[rc->n_pts++]);

    snprintf(lc->device[0], sizeof lc->device[0], "%s", b->spec.name);
    lc->ridge_tokens[0] = NAN;
    lc->n_dev = 1;
    snprintf(lc->title, sizeof lc->title, "FFN layer time on %s: measured vs predicted (%s)",
             b->spec.name, b->date[0] ? b->date : today);
    for (size_t i = 0; i < b->n_cases; i++) {
        const ffn_plot_case *c = &b->cases[i];
        for (int pred = 0; pred < 2; pred++) {
            double y = pred ? c->predicted_s : c->median_s;
            if (!(y > 0)) continue;
            char lab[80];
            snprintf(lab, sizeof lab, "%s%s d%llu f%llu %s %s",
                     strcmp(c->kind, "moe") ? "" : "moe ", ffn_phase_name(c->phase),
                     (unsigned long long)c->d, (unsigned long long)c->f, c->dtype,
                     pred ? "predicted" : "measured");
            /* every series on slot 0 until the colours are assigned below */
            ffn__plot_series_add(lc, 0, c->phase, !pred, lab, (double)c->tokens, y);
        }
    }
    /* one colour per shape: series i and its partner share a device slot */
    for (int k = 0; k < lc->n_series; k++) {
        char shape[80];
        snprintf(shape, sizeof shape, "%s", lc->s[k].label);
        char *sp = strrchr(shape, ' ');
        if (sp) *sp = '\0';
        int slot = 0;
        for (int m = 0; m < k; m++) {
            char other[80];
            snprintf(other, sizeof other, "%s", lc->s[m].label);
            char *sq = strrchr(other, ' ');
            if (sq) *sq = '\0';
            if (!strcmp(other, shape)) {
                slot = lc->s[m].device;
                goto found;
            }
            if (lc->s[m].device >= slot) slot = lc->s[m].device + 1;
        }
    found:
        lc->s[k].device = slot;
    }
}
