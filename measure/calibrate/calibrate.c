/* The calibration driver behind `ffnroof calibrate`: timer and clock, peak compute per dtype on
 * one core and on all cores, bandwidth sweeps (read-only, copy, triad, non-temporal) on one and all
 * threads, plateau detection on every curve, a comparison of the plateaus with what sysfs claims,
 * and the conversion of the result into an ffn_hw the simulator can use. No printing: progress
 * goes through the caller's callback (the review of the curves against sysfs: cal_review.c).
 * The stage plan below is sized so that quick mode takes about 10 s and the default about 75 s
 * on a 2-core VM; sweeps longer than planned only stretch the time, they never skip a stage. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnroof/calibrate.h"
#include "ffnroof/kernels.h"

#include "cal_internal.h"
#include "internal.h"

typedef struct plan {
    double clock_s;
    double peak_sample_s, peak_budget_s;
    int ppo;
    double point_s, rw_point_s, sample_bytes; /* rw_point_s: the read-write and nt sweeps' */
    bool bw_1t[FFN_BW_COUNT], bw_all[FFN_BW_COUNT];
} plan;

static void make_plan(bool quick, plan *p)
{
    memset(p, 0, sizeof *p);
    if (quick) {
        p->clock_s = 0.1;
        p->peak_sample_s = 0.01;
        p->peak_budget_s = 0.2;
        p->ppo = 4;
        p->point_s = p->rw_point_s = 0.012;
        p->sample_bytes = 8.0 * 1024 * 1024;
        p->bw_1t[FFN_BW_READ] = true;
        p->bw_all[FFN_BW_READ] = true;
        p->bw_all[FFN_BW_TRIAD] = true;
    } else {
        p->clock_s = 0.3;
        p->peak_sample_s = 0.02;
        p->peak_budget_s = 0.8;
        p->ppo = 4;
        /* The read sweep decides the plateaus and the memory roof: 40 ms a point. The
         * read-write and streaming-store sweeps (the DRAM read-write figure, their own curves)
         * take 25 ms a point, which kept their DRAM figures within the run-to-run spread here
         * and saves about 12 s of the default calibration's 75-140 s. */
        p->point_s = 0.04;
        p->rw_point_s = 0.025;
        p->sample_bytes = 16.0 * 1024 * 1024;
        for (int k = 0; k < FFN_BW_COUNT; k++)
            p->bw_1t[k] = p->bw_all[k] = true;
    }
}

typedef struct prog {
    const ffn_calibrate_opts *o;
    double done, total;
    int stop;
    char stage[64];
} prog;

static int stage(prog *p, const char *what, double weight)
{
    if (p->o->progress && p->o->progress(p->o->user, p->total > 0 ? p->done / p->total : 0, what))
        p->stop = 1;
    snprintf(p->stage, sizeof p->stage, "%s", what);
    p->done += weight;
    return p->stop ? FFN_EINTERRUPTED : 0;
}

typedef struct sweep_hook_ctx {
    prog *p;
    double base, weight;
} sweep_hook_ctx;

static int sweep_hook(void *user, double fraction)
{
    sweep_hook_ctx *h = user;
    prog *p = h->p;
    if (p->o->progress &&
        p->o->progress(p->o->user, (h->base + fraction * h->weight) / p->total, p->stage))
        p->stop = 1;
    return p->stop;
}

static void detect_all(ffn_calibration *c)
{
    for (int k = 0; k < FFN_BW_COUNT; k++) {
        for (int t = 0; t < 2; t++) {
            double size[FFN_CAL_MAX_POINTS], bw[FFN_CAL_MAX_POINTS];
            size_t n = 0;
            const int threads = t == 0 ? 1 : c->threads;
            for (size_t i = 0; i < c->n_points; i++) {
                const ffn_bw_point *p = &c->points[i];
                if ((int)p->kernel == k && p->threads == threads && (t == 0 || c->threads > 1)) {
                    size[n] = p->size_bytes;
                    bw[n++] = p->bytes_per_s;
                }
            }
            c->n_levels[k][t] = 0;
            if (n > 0)
                (void)ffn_plateau_detect(size, bw, n, NULL, c->levels[k][t], FFN_MAX_LEVELS,
                                         &c->n_levels[k][t]);
            /* The memory roof: the median of the sweep's last octave (from 2x the LLC when the
             * sweep ends at 4x it). From a quarter of the sweep, a Zen 4 VM's two-thread tail
             * began at its 32 MiB L3, which two threads still read from at 60-110 GB/s up to
             * 45 MiB: one default calibration wrote 79.9 GB/s, the quick one before it 46.7. */
            if (k == FFN_BW_READ && n > 0) {
                double tail[FFN_CAL_MAX_POINTS];
                size_t nt = 0;
                for (size_t i = 0; i < n; i++)
                    if (size[i] >= ffn__cal_tail_from(c)) tail[nt++] = bw[i];
                ffn_stats st;
                if (nt > 0 && ffn_stats_compute(tail, nt, &st) == 0)
                    c->tail_read_bps[t] = st.median;
            }
        }
    }
}

/* How far the all-threads peak falls short of its threads times the one-thread peak (1: they
 * scale; 0.5: half of it). Separate cores scale their FMA and dot-product units perfectly; a
 * figure far below that is either SMT siblings sharing a core or the hypervisor holding a vCPU
 * back: an Emerald Rapids-class VM measured its two-thread AVX-512 FMA peak at
 * 175 GFLOP/s in one quick calibration of three, 1.00x its one-thread peak (338.6 and 348.8 in
 * the others), and an accuracy run's fit, handed 232-267 for that roof, ended at compute_max
 * 1.000 with the grid's prefills up to 42% off. */
double ffn__cal_peak_scaling(const ffn_peak_result *one, const ffn_peak_result *all)
{
    if (!one || !all || all->threads < 2 || !(one->flops_per_s > 0) || !(all->flops_per_s > 0))
        return 1.0;
    return all->flops_per_s / (one->flops_per_s * (double)all->threads);
}

/* Below this scaling the all-threads peak is measured up to twice more and the best kept (a
 * roof is the best sample, ERT and likwid practice); SMT siblings stay low and cost the retries. */
#define TEAM_PEAK_MIN_SCALING 0.85
#define TEAM_PEAK_RETRIES 2

static double team_scaling(const ffn_calibration *c, ffn_peak_kind k)
{
    return ffn__cal_peak_scaling(&c->peaks[k][0], &c->peaks[k][1]);
}

/* The all-threads peak of kind k once more while it scales below TEAM_PEAK_MIN_SCALING (at most
 * TEAM_PEAK_RETRIES times), keeping the best; the notes say what happened. */
static int remeasure_low_team_peak(ffn_calibration *c, ffn_peak_kind k, const plan *pl)
{
    const double first = c->peaks[k][1].flops_per_s, s0 = team_scaling(c, k);
    if (!(s0 < TEAM_PEAK_MIN_SCALING)) return 0;
    int tries = 0;
    for (; tries < TEAM_PEAK_RETRIES && team_scaling(c, k) < TEAM_PEAK_MIN_SCALING; tries++) {
        ffn_peak_result r;
        const int rc = ffn_peak_measure(k, c->threads, pl->peak_sample_s, pl->peak_budget_s, &r);
        if (rc < 0) return rc;
        if (r.flops_per_s > c->peaks[k][1].flops_per_s) c->peaks[k][1] = r;
    }
    const double s1 = team_scaling(c, k);
    ffn__appendf(c->notes, sizeof c->notes,
                 "peak %s x%d: %.1f GFLOP/s, %.2fx %d times one thread's; measured %d more "
                 "time(s): %.1f (%.2fx)%s; ",
                 ffn_peak_name(k), c->threads, first / 1e9, s0, c->threads, tries,
                 c->peaks[k][1].flops_per_s / 1e9, s1,
                 s1 < TEAM_PEAK_MIN_SCALING
                     ? ": the threads share cores (SMT) or the hypervisor held a vCPU back"
                     : ", kept");
    return 0;
}

/* One bandwidth sweep from min_bytes to max_bytes into pts (at most cap), the plan's points per
 * octave, point time and sample size, its progress a share `weight` of pg's. */
static int sweep_into(const plan *pl, prog *pg, double weight, ffn_bw_kernel k, int threads,
                      double min_bytes, double max_bytes, ffn_bw_point *pts, size_t cap,
                      size_t *got)
{
    sweep_hook_ctx hc = {pg, pg->done - weight, weight};
    const ffn_bw_sweep_opts so = {.kernel = k,
                                  .threads = threads,
                                  .min_bytes = min_bytes,
                                  .max_bytes = max_bytes,
                                  .points_per_octave = pl->ppo,
                                  .point_s = k == FFN_BW_READ ? pl->point_s : pl->rw_point_s,
                                  .sample_bytes = pl->sample_bytes,
                                  .hook = sweep_hook,
                                  .user = &hc};
    *got = 0;
    return ffn_bw_sweep(&so, pts, cap, got);
}

/* One bandwidth sweep from min_bytes to max_bytes, its points appended to the calibration's. */
static int sweep_range(ffn_calibration *c, const plan *pl, prog *pg, double weight, ffn_bw_kernel k,
                       int threads, double min_bytes, double max_bytes)
{
    size_t got = 0;
    const int rc = sweep_into(pl, pg, weight, k, threads, min_bytes, max_bytes,
                              c->points + c->n_points, FFN_CAL_MAX_POINTS - c->n_points, &got);
    c->n_points += got;
    return rc;
}

/* Each point's median rate where it has one (its fastest sample otherwise): one fast sample at
 * max / sqrt(2) made a flat tail look falling on a family 6 model 207 VM (two threads: 362
 * MiB best 27.9 GB/s, median 25.9; 512 MiB 24.9 and 24.8), and the sweep was extended to 1 GiB,
 * 4.5 s of a 19 s quick calibration, to find 23-24 GB/s there. */
static double tail_rate(const ffn_bw_point *p)
{
    return p->median_bytes_per_s > 0 ? p->median_bytes_per_s : p->bytes_per_s;
}

double ffn__cal_read_tail_drop(const ffn_calibration *c, int threads)
{
    double last = 0, last_size = 0, half = 0, half_dist = INFINITY;
    const double at = c->max_bytes / M_SQRT2;
    for (size_t i = 0; i < c->n_points; i++) {
        const ffn_bw_point *p = &c->points[i];
        if (p->kernel != FFN_BW_READ || p->threads != threads) continue;
        if (p->size_bytes >= last_size) {
            last_size = p->size_bytes;
            last = tail_rate(p);
        }
        const double d = fabs(log(p->size_bytes / at));
        if (d < half_dist) {
            half_dist = d;
            half = tail_rate(p);
        }
    }
    return last > 0 && half > 0 && half_dist < 0.2 ? last / half : 1.0;
}

/* The read curve of `threads` threads over its last half octave (sizes from c->max_bytes /
 * sqrt(2)) timed once more, each point keeping the better of its two medians and of its two
 * fastest samples (a shared host only slows a point down). A tail that falls in both timings
 * is a cache's; one slow minute is not: on a family 6 model 207 VM two threads read 512
 * MiB at a median of 20.2 and 31.1 GB/s in two quick calibrations, 10-20% under their
 * neighbours, and the extension to 1 GiB then found 21-24 and 33 GB/s, flat: 3-4 s of
 * --quick each time. Returns how many points it timed again, or an error. */
static int retime_read_tail(ffn_calibration *c, const plan *pl, prog *pg, int threads)
{
    double from = INFINITY;
    for (size_t i = 0; i < c->n_points; i++) {
        const ffn_bw_point *p = &c->points[i];
        if (p->kernel == FFN_BW_READ && p->threads == threads &&
            p->size_bytes >= c->max_bytes / M_SQRT2 / 1.02)
            from = fmin(from, p->size_bytes);
    }
    if (!isfinite(from)) return 0;
    char what[64];
    snprintf(what, sizeof what, "bandwidth read x%d: its tail again", threads);
    int rc = stage(pg, what, 0);
    if (rc < 0) return rc;
    ffn_bw_point again[16];
    size_t got = 0;
    rc = sweep_into(pl, pg, 0, FFN_BW_READ, threads, from, c->max_bytes, again,
                    sizeof again / sizeof again[0], &got);
    if (rc < 0) return rc;
    return ffn__cal_merge_retimed(c, again, got);
}

int ffn__cal_merge_retimed(ffn_calibration *c, const ffn_bw_point *again, size_t n_again)
{
    int n = 0;
    for (size_t j = 0; j < n_again; j++)
        for (size_t i = 0; i < c->n_points; i++) {
            ffn_bw_point *p = &c->points[i];
            if (p->kernel != again[j].kernel || p->threads != again[j].threads ||
                fabs(log(p->size_bytes / again[j].size_bytes)) > 0.02)
                continue;
            p->bytes_per_s = fmax(p->bytes_per_s, again[j].bytes_per_s);
            p->median_bytes_per_s = fmax(p->median_bytes_per_s, again[j].median_bytes_per_s);
            p->samples += again[j].samples;
            n++;
            break;
        }
    return n;
}

/* A read sweep that still falls at its end has not reached main memory: a Zen 4 VM
 * read 128 MiB with two threads at 78 GB/s, still 16% down on its last half
 * octave, and the spec took 93 GB/s as DRAM where one thread read 33 (its caches reach beyond
 * the 4x-LLC end the sweep was sized for). While either read curve falls by more than 10% over
 * its last half octave, in its first timing and when that half octave is timed again
 * (retime_read_tail), both are swept an octave further, up to 2 GiB or an eighth of memory;
 * the later sweeps (copy, triad, streaming stores) then end where the read sweeps did. */
static int extend_read_tail(ffn_calibration *c, const plan *pl, prog *pg, int tcount)
{
    double cap = 2048.0 * 1024 * 1024;
    if (c->host.phys_mem_bytes > 0) cap = fmin(cap, c->host.phys_mem_bytes / 8);
    const double start = c->max_bytes;
    bool falling;
    double flat_again = 0; /* the end where a fall timed again was not one */
    for (;;) {
        falling = false;
        bool fell = false;
        for (int t = 0; t < tcount; t++) {
            const int threads = t == 0 ? 1 : c->threads;
            if (!(ffn__cal_read_tail_drop(c, threads) < 0.9)) continue;
            fell = true;
            const int rc = retime_read_tail(c, pl, pg, threads);
            if (rc < 0) return rc;
            falling |= ffn__cal_read_tail_drop(c, threads) < 0.9;
        }
        if (fell && !falling) flat_again = c->max_bytes;
        if (!falling || 2.0 * c->max_bytes > cap) break;
        const double from = c->max_bytes * pow(2.0, 1.0 / pl->ppo);
        for (int t = 0; t < tcount; t++) {
            const int threads = t == 0 ? 1 : c->threads;
            if (!(t == 0 ? pl->bw_1t[FFN_BW_READ] : pl->bw_all[FFN_BW_READ])) continue;
            char what[64];
            snprintf(what, sizeof what, "bandwidth read x%d to %.0f MiB", threads,
                     2.0 * c->max_bytes / 1048576);
            int rc = stage(pg, what, 0);
            if (rc == 0)
                rc = sweep_range(c, pl, pg, 0, FFN_BW_READ, threads, from, 2.0 * c->max_bytes);
            if (rc < 0) return rc;
        }
        c->max_bytes *= 2.0;
    }
    if (flat_again > 0)
        ffn__appendf(c->notes, sizeof c->notes,
                     "the read sweep fell by over 10%% over its last half octave to %.0f MiB; "
                     "timed again (each point keeping its better median) it did not; ",
                     flat_again / 1048576);
    if (c->max_bytes > start)
        ffn__appendf(c->notes, sizeof c->notes,
                     "the read sweep still fell at %.0f MiB (a cache larger than the LLC "
                     "reported): extended to %.0f MiB; ",
                     start / 1048576, c->max_bytes / 1048576);
    if (falling)
        ffn__appendf(c->notes, sizeof c->notes,
                     "the read sweep still fell at %.0f MiB, the most this host allows: the "
                     "memory roof may be a cache's; ",
                     c->max_bytes / 1048576);
    return 0;
}

int ffn_calibrate_run(const ffn_calibrate_opts *opts, ffn_calibration *c)
{
    if (!opts || !c) return FFN_EINVAL;
    const double t_start = ffn_time_now_s();
    memset(c, 0, sizeof *c);
    c->quick = opts->quick;
    int rc = ffn_host_info_get(&c->host);
    if (rc < 0) return rc;
    c->caps = *ffn_cpu_caps_get();
    c->threads = opts->threads > 0 ? opts->threads : c->host.allowed_cpus;
    if (c->threads > 1024) c->threads = 1024;
    const time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(c->date, sizeof c->date, "%Y-%m-%dT%H:%M:%SZ", &tm);

    /* FFNROOF_ISA caps calibrate as it caps bench: the kernel path bench will use decides which
     * roof the spec records per dtype, and a capped run skips what the level does not allow */
    ffn_isa sel = FFN_ISA_REF;
    ffn_diag isad;
    ffn_diag_clear(&isad);
    if ((rc = ffn_isa_selected(&sel, &isad)) < 0) return rc;
    const char *env = getenv("FFNROOF_ISA");
    c->isa_capped = env && env[0];
    c->isa = sel;
    snprintf(c->bw_probe, sizeof c->bw_probe, "%s", ffn__bw_probe_isa());
    c->roof_set = true;
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        const ffn_kernel *kk = NULL;
        c->roof_kind[dt] = -1;
        c->roof_isa[dt] = FFN_ISA_REF;
        if (ffn_kernel_best((ffn_dtype)dt, &kk, NULL) == 0 && kk) {
            c->roof_isa[dt] = kk->isa;
            int k = ffn_calibration_roof_kind((ffn_dtype)dt, kk->isa);
            while (k >= 0 && !ffn_peak_available((ffn_peak_kind)k))
                k = ffn_calibration_roof_fallback(k); /* SVE FMLA -> NEON FMLA */
            c->roof_kind[dt] = k;
        }
    }
    /* int8 is the roof of int8 dot products (W8A8 kernels, the simulator's int8 peak): the best
     * this CPU runs at the level of the W8A8 kernel bench uses (the selected level without one) */
    const ffn_kernel *k8k = NULL;
    c->roof_isa[FFN_DT_INT8] = sel;
    if (ffn_kernel_best_q(FFN_DT_INT8, FFN_DT_INT8, &k8k, NULL) == 0 && k8k)
        c->roof_isa[FFN_DT_INT8] = k8k->isa;
    int k8 = ffn_calibration_roof_kind(FFN_DT_INT8, c->roof_isa[FFN_DT_INT8]);
    while (k8 >= 0 && !ffn_peak_available((ffn_peak_kind)k8))
        k8 = ffn_calibration_roof_fallback(k8);
    c->roof_kind[FFN_DT_INT8] = k8;

    plan pl;
    make_plan(opts->quick, &pl);
    c->max_bytes = opts->max_bytes;
    if (!(c->max_bytes > 0)) {
        const double llc = ffn_host_llc_bytes(&c->host);
        c->max_bytes = llc > 0 ? 4.0 * llc : 1024.0 * 1024 * 1024;
        c->max_bytes = fmin(c->max_bytes, (opts->quick ? 512.0 : 1024.0) * 1024 * 1024);
        if (c->host.phys_mem_bytes > 0)
            c->max_bytes = fmin(c->max_bytes, c->host.phys_mem_bytes / 8);
        c->max_bytes = fmax(c->max_bytes, 1024.0 * 1024);
    }

    /* which peaks: everything available; quick mode skips the fp32 fallbacks when a wider fp32
     * kernel exists and the int8 kinds below the int8 roof (they cannot be the roof) */
    bool do_peak[FFN_PEAK_COUNT];
    int n_peak = 0;
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        do_peak[k] = ffn_peak_available((ffn_peak_kind)k) &&
                     (!c->isa_capped || ffn_peak_allowed_at((ffn_peak_kind)k, sel));
    }
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        bool roof = false;
        for (int dt = 0; dt < FFN_DT_COUNT; dt++)
            roof |= c->roof_kind[dt] == k;
        if (opts->quick && do_peak[k] && !roof &&
            (k == FFN_PEAK_FP32_PORTABLE || k == FFN_PEAK_FP32_AVX2 || k == FFN_PEAK_FP32_NEON) &&
            (do_peak[FFN_PEAK_FP32_AVX512] || do_peak[FFN_PEAK_FP32_SVE] ||
             (k != FFN_PEAK_FP32_NEON && do_peak[FFN_PEAK_FP32_NEON])))
            do_peak[k] = false;
        if (opts->quick && do_peak[k] && !roof && ffn_peak_dtype((ffn_peak_kind)k) == FFN_DT_INT8 &&
            c->roof_kind[FFN_DT_INT8] >= 0)
            do_peak[k] = false;
        n_peak += do_peak[k];
    }
    const int tcount = c->threads > 1 ? 2 : 1;
    int n_sweeps = 0;
    for (int k = 0; k < FFN_BW_COUNT; k++) {
        if (!ffn_bw_kernel_available((ffn_bw_kernel)k)) continue;
        n_sweeps += pl.bw_1t[k] + (c->threads > 1 && pl.bw_all[k]);
    }
    /* progress weights: rough seconds per stage */
    const double sweep_w = opts->quick ? 1.5 : 3.0;
    prog pg = {opts, 0, 0, 0, {0}};
    pg.total = 0.05 + pl.clock_s + n_peak * tcount * pl.peak_budget_s * 0.6 + n_sweeps * sweep_w;

    if ((rc = stage(&pg, "timer", 0.05)) < 0) goto out;
    if ((rc = ffn_timer_probe(&c->timer)) < 0) goto out;
    if ((rc = stage(&pg, "clock", pl.clock_s)) < 0) goto out;
    if ((rc = ffn_clock_estimate(pl.clock_s, &c->clock)) < 0) goto out;

    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        for (int t = 0; t < 2; t++) {
            c->peaks[k][t].kind = (ffn_peak_kind)k;
            c->peaks[k][t].threads = t == 0 ? 1 : c->threads;
        }
        if (!do_peak[k]) continue;
        for (int t = 0; t < tcount; t++) {
            char what[64];
            snprintf(what, sizeof what, "peak %s x%d", ffn_peak_name((ffn_peak_kind)k),
                     t == 0 ? 1 : c->threads);
            if ((rc = stage(&pg, what, pl.peak_budget_s * 0.6)) < 0) goto out;
            rc = ffn_peak_measure((ffn_peak_kind)k, t == 0 ? 1 : c->threads, pl.peak_sample_s,
                                  pl.peak_budget_s, &c->peaks[k][t]);
            if (rc < 0) goto out;
            if (t == 1 && (rc = remeasure_low_team_peak(c, (ffn_peak_kind)k, &pl)) < 0) goto out;
        }
        if (tcount == 1) c->peaks[k][1] = c->peaks[k][0];
    }

    for (int k = 0; k < FFN_BW_COUNT; k++) {
        if (!ffn_bw_kernel_available((ffn_bw_kernel)k)) continue;
        for (int t = 0; t < tcount; t++) {
            if (!(t == 0 ? pl.bw_1t[k] : pl.bw_all[k])) continue;
            const int threads = t == 0 ? 1 : c->threads;
            char what[64];
            snprintf(what, sizeof what, "bandwidth %s x%d", ffn_bw_kernel_name((ffn_bw_kernel)k),
                     threads);
            if ((rc = stage(&pg, what, sweep_w)) < 0) goto out;
            if ((rc = sweep_range(c, &pl, &pg, sweep_w, (ffn_bw_kernel)k, threads, 4096,
                                  c->max_bytes)) < 0)
                goto out;
        }
        if (k == FFN_BW_READ && opts->max_bytes <= 0 &&
            (rc = extend_read_tail(c, &pl, &pg, tcount)) < 0)
            goto out;
    }
    rc = stage(&pg, "done", 0);
out:
    detect_all(c);
    ffn_calibration_review(c);
    if (c->isa_capped)
        ffn__appendf(c->notes, sizeof c->notes,
                     "FFNROOF_ISA=%s: only the peaks and probes that level allows were run; ",
                     ffn_isa_name(sel));
    if (c->threads == 1)
        ffn__appendf(c->notes, sizeof c->notes,
                     "one thread only: the all-cores figures are the "
                     "one-core figures; ");
    c->elapsed_s = ffn_time_now_s() - t_start;
    return rc;
}

double ffn_calibration_peak(const ffn_calibration *c, ffn_dtype dt, int threads_index, bool use_amx)
{
    if (!c || threads_index < 0 || threads_index > 1) return 0;
    double best = 0;
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        if (ffn_peak_dtype((ffn_peak_kind)k) != dt) continue;
        if (!use_amx && (k == FFN_PEAK_BF16_AMX || k == FFN_PEAK_INT8_AMX)) continue;
        best = fmax(best, c->peaks[k][threads_index].flops_per_s);
    }
    return best;
}

/* The capacity an all-threads level of `all` bytes offers weights re-read across calls. The
 * kernels hand weight panels to whichever thread asks next (a shared counter), so from one call
 * to the next any core may read any panel: only what one core's part of the level holds stays
 * resident, the one-thread sweep's boundary of the nearest level (within a factor 2.5) where
 * that is smaller. A per-core cache counts once, not once per core; a shared one is the same
 * either way. On a Zen 5 VM the two-thread sweep read 87 MiB at L3 speed, one
 * thread 60 MiB, and 69 MB of bf16 weights left warm ran at DRAM speed. */
static double resident_capacity(const ffn_calibration *c, double all)
{
    const ffn_level *one = c->levels[FFN_BW_READ][0];
    double best = all, dist = log(2.5);
    for (int j = 0; j < c->n_levels[FFN_BW_READ][0]; j++) {
        if (!(one[j].capacity_bytes > 0) || one[j].last_bytes >= ffn__cal_tail_from(c)) continue;
        const double d = fabs(log(one[j].capacity_bytes / all));
        if (d < dist) {
            dist = d;
            best = fmin(all, one[j].capacity_bytes);
        }
    }
    return best;
}

int ffn_calibration_to_hw(const ffn_calibration *c, bool use_amx, ffn_hw *hw)
{
    if (!c || !hw) return FFN_EINVAL;
    memset(hw, 0, sizeof *hw);
    snprintf(hw->name, sizeof hw->name, "calibrated-%.52s", c->host.host);
    snprintf(hw->vendor, sizeof hw->vendor, "%s", c->host.cpu_vendor);
    hw->kind = FFN_HW_CPU;
    snprintf(hw->source, sizeof hw->source, "measured by ffnroof calibrate on %s, %s", c->host.host,
             c->date);
    /* the roof is the best rate seen: on a shared or SMT-paired host all threads together can
     * come out below one thread alone, and the one-thread rate is then still attainable */
    hw->compute_units = (uint32_t)c->threads;
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        const int rk = c->roof_set ? c->roof_kind[dt] : -1;
        if (rk >= 0 && fmax(c->peaks[rk][0].flops_per_s, c->peaks[rk][1].flops_per_s) > 0) {
            /* the roof of the kernel path bench uses; the reference kernel runs on one thread */
            const bool ref = c->roof_isa[dt] == FFN_ISA_REF;
            const double p0 = c->peaks[rk][0].flops_per_s, p1 = c->peaks[rk][1].flops_per_s;
            hw->peak_flops[dt] = ref && p0 > 0 ? p0 : fmax(p0, p1);
        } else { /* no kernel for this dtype (or a hand-filled calibration): the best kind */
            hw->peak_flops[dt] = fmax(ffn_calibration_peak(c, (ffn_dtype)dt, 1, use_amx),
                                      ffn_calibration_peak(c, (ffn_dtype)dt, 0, use_amx));
        }
    }
    if (c->roof_set && c->roof_isa[FFN_DT_FP32] == FFN_ISA_REF) hw->compute_units = 1;
    hw->clock_hz = c->clock.hz;
    hw->mem_capacity_bytes = c->host.phys_mem_bytes;
    /* main memory: the sweep's tail, the better of one and all threads (see peaks above) */
    hw->mem_bandwidth_bps = fmax(c->tail_read_bps[0], c->tail_read_bps[1]);
    if (!(hw->mem_bandwidth_bps > 0)) return FFN_EINVAL;
    /* caches: the all-threads read-only plateaus (one thread when that is all we have) that end
     * before the tail; a plateau reaching into the tail is main memory. Capacity: what stays
     * resident for the kernels (resident_capacity) */
    const int t = c->n_levels[FFN_BW_READ][1] > 0 ? 1 : 0;
    const ffn_level *lv = c->levels[FFN_BW_READ][t];
    const int nl = c->n_levels[FFN_BW_READ][t];
    for (int i = 0; i < nl && hw->n_levels < FFN_HW_MAX_LEVELS; i++) {
        if (!ffn_calibration_level_ok(c, FFN_BW_READ, t, i)) continue;
        ffn_mem_level *m = &hw->levels[hw->n_levels];
        snprintf(m->name, sizeof m->name, "%s", lv[i].name); /* as the review named it */
        m->capacity_bytes = t ? resident_capacity(c, lv[i].capacity_bytes) : lv[i].capacity_bytes;
        m->bandwidth_bps = lv[i].bandwidth_bps;
        hw->n_levels++;
    }
    hw->devices_per_node = 1;
    hw->eff.compute_max = 1.0;
    hw->eff.memory_max = 1.0;
    hw->eff.compute_half_flops = 0;
    hw->eff.memory_half_bytes = 0;
    hw->eff.n_tiles = 0;
    hw->eff.launch_s = 0;
    hw->eff.overlap_p = 0;
    if (hw->peak_flops[FFN_DT_FP32] <= 0) return FFN_EINVAL;
    return 0;
}

bool ffn_peak_allowed_at(ffn_peak_kind k, ffn_isa isa)
{
    static const uint64_t needs[FFN_PEAK_COUNT] = {
        [FFN_PEAK_FP32_PORTABLE] = 0,
        [FFN_PEAK_FP32_AVX2] = FFN_CPU_AVX2,
        [FFN_PEAK_FP32_AVX512] = FFN_CPU_AVX512,
        [FFN_PEAK_BF16_AVX512] = FFN_CPU_AVX512_BF16,
        [FFN_PEAK_FP16_AVX512] = FFN_CPU_AVX512_FP16,
        [FFN_PEAK_INT8_VNNI] = FFN_CPU_AVX512_VNNI,
        [FFN_PEAK_BF16_AMX] = FFN_CPU_AMX_BF16,
        [FFN_PEAK_INT8_AMX] = FFN_CPU_AMX_INT8,
        [FFN_PEAK_FP32_NEON] = FFN_CPU_NEON,
        [FFN_PEAK_FP16_NEON] = FFN_CPU_ARM_FP16,
        [FFN_PEAK_INT8_AVX_VNNI] = FFN_CPU_AVX_VNNI,
        [FFN_PEAK_INT8_AVX2] = FFN_CPU_AVX2,
        [FFN_PEAK_INT8_NEON_SDOT] = FFN_CPU_NEON | FFN_CPU_ARM_DOTPROD,
        [FFN_PEAK_INT8_NEON_I8MM] = FFN_CPU_NEON | FFN_CPU_ARM_I8MM,
        [FFN_PEAK_INT8_SVE_SDOT] = FFN_CPU_SVE,
        [FFN_PEAK_INT8_PORTABLE] = 0,
        [FFN_PEAK_FP32_SVE] = FFN_CPU_SVE,
    };
    if ((unsigned)k >= FFN_PEAK_COUNT || (unsigned)isa >= FFN_ISA_COUNT) return false;
    return (needs[k] & ~ffn_isa_allows(isa)) == 0;
}

/* The int8 dot product of each level, best first (the roofs of W8A8 kernels). */
static int int8_roof_kind(ffn_isa isa)
{
    switch (isa) {
    case FFN_ISA_AMX:
        return FFN_PEAK_INT8_AMX;
    case FFN_ISA_AVX512_BF16:
    case FFN_ISA_AVX512:
        return FFN_PEAK_INT8_VNNI;
    case FFN_ISA_AVX2:
        return FFN_PEAK_INT8_AVX_VNNI;
    case FFN_ISA_NEON:
        return FFN_PEAK_INT8_NEON_I8MM;
    case FFN_ISA_SVE:
        return FFN_PEAK_INT8_SVE_SDOT;
    case FFN_ISA_PORTABLE:
    case FFN_ISA_REF:
        return FFN_PEAK_INT8_PORTABLE;
    default:
        return -1;
    }
}

int ffn_calibration_roof_fallback(int k)
{
    switch (k) {
    case FFN_PEAK_INT8_AMX:
        return FFN_PEAK_INT8_VNNI;
    case FFN_PEAK_INT8_VNNI:
        return FFN_PEAK_INT8_AVX_VNNI;
    case FFN_PEAK_INT8_AVX_VNNI:
        return FFN_PEAK_INT8_AVX2;
    case FFN_PEAK_INT8_NEON_I8MM:
        return FFN_PEAK_INT8_NEON_SDOT;
    case FFN_PEAK_INT8_AVX2:
    case FFN_PEAK_INT8_NEON_SDOT:
        return FFN_PEAK_INT8_PORTABLE;
    case FFN_PEAK_FP32_SVE:
        return FFN_PEAK_FP32_NEON;
    default:
        return -1;
    }
}

int ffn_calibration_roof_kind(ffn_dtype dt, ffn_isa isa)
{
    if ((unsigned)dt >= FFN_DT_COUNT) return -1;
    if (dt == FFN_DT_INT8) return int8_roof_kind(isa);
    if (dt == FFN_DT_INT4) return -1;
    switch (isa) {
    case FFN_ISA_AMX:
        return dt == FFN_DT_BF16 ? FFN_PEAK_BF16_AMX : FFN_PEAK_FP32_AVX512;
    case FFN_ISA_AVX512_BF16:
        return dt == FFN_DT_BF16 ? FFN_PEAK_BF16_AVX512 : FFN_PEAK_FP32_AVX512;
    case FFN_ISA_AVX512:
        return FFN_PEAK_FP32_AVX512;
    case FFN_ISA_AVX2:
        return FFN_PEAK_FP32_AVX2;
    case FFN_ISA_PORTABLE:
    case FFN_ISA_REF:
        return FFN_PEAK_FP32_PORTABLE;
    case FFN_ISA_NEON:
        return FFN_PEAK_FP32_NEON;
    case FFN_ISA_SVE:
        return FFN_PEAK_FP32_SVE;
    default:
        return -1;
    }
}
