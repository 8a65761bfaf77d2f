/* The calibration driver behind `ffnroof calibrate`: timer and clock, peak compute per dtype on
 * one core and on all cores, bandwidth sweeps (read-only, copy, triad, non-temporal) on one and all
 * threads, plateau detection on every curve, a comparison of the plateaus with what sysfs claims,
 * and the conversion of the result into an ffn_hw the simulator can use. No printing: progress
 * goes through the caller's callback. The stage plan below is sized so that quick mode takes
 * about 15 s and the default about 60 s on a small VM; sweeps longer than planned only stretch
 * the time, they never skip a stage. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ffnroof/measure.h"
#include "internal.h"

typedef struct plan {
    double clock_s;
    double peak_sample_s, peak_budget_s;
    int ppo;
    double point_s, sample_bytes;
    bool bw_1t[FFN_BW_COUNT], bw_all[FFN_BW_COUNT];
} plan;

static void make_plan(bool quick, plan *p)
{
    memset(p, 0, sizeof *p);
    if (quick) {
        p->clock_s = 0.1;
        p->peak_sample_s = 0.01;
        p->peak_budget_s = 0.2;
        p->ppo = 2;
        p->point_s = 0.02;
        p->sample_bytes = 8.0 * 1024 * 1024;
        p->bw_1t[FFN_BW_READ] = true;
        p->bw_all[FFN_BW_READ] = true;
        p->bw_all[FFN_BW_TRIAD] = true;
        p->bw_all[FFN_BW_TRIAD_NT] = true;
    } else {
        p->clock_s = 0.3;
        p->peak_sample_s = 0.02;
        p->peak_budget_s = 0.8;
        p->ppo = 4;
        p->point_s = 0.04;
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

static void human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.3g GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.3g MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, n, "%.3g KiB", b / 1024.0);
}

/* Compare the one-thread read-only plateaus with the data/unified caches sysfs reports. */
static void compare_with_sysfs(ffn_calibration *c)
{
    const ffn_level *lv = c->levels[FFN_BW_READ][0];
    const int nl = c->n_levels[FFN_BW_READ][0];
    double sys[FFN_MAX_SYSFS_CACHES];
    int sys_level[FFN_MAX_SYSFS_CACHES], ns = 0;
    for (int i = 0; i < c->host.n_caches; i++) {
        const ffn_sysfs_cache *sc = &c->host.caches[i];
        if (strcmp(sc->type, "Instruction") == 0) continue;
        sys[ns] = sc->size_bytes;
        sys_level[ns++] = sc->level;
    }
    char a[32], b[32];
    if (nl == 0) {
        ffn__appendf(c->notes, sizeof c->notes, "no bandwidth plateau detected; ");
        return;
    }
    const int measured_caches = nl - 1;
    if (measured_caches != ns)
        ffn__appendf(c->notes, sizeof c->notes,
                     "sysfs lists %d data cache level(s), the one-thread read sweep shows %d "
                     "plateau(s) before the last; ",
                     ns, measured_caches);
    for (int i = 0; i < ns && i < measured_caches; i++) {
        const double r = lv[i].capacity_bytes / sys[i];
        if (r < 0.5 || r > 2.0) {
            human_bytes(sys[i], a, sizeof a);
            human_bytes(lv[i].capacity_bytes, b, sizeof b);
            ffn__appendf(c->notes, sizeof c->notes,
                         "sysfs says L%d = %s but the measured %s boundary is at about %s; ",
                         sys_level[i], a, lv[i].name, b);
        }
    }
    const double llc = ffn_host_llc_bytes(&c->host);
    if (llc > 0 && c->max_bytes < 2.0 * llc) {
        human_bytes(llc, a, sizeof a);
        human_bytes(c->max_bytes, b, sizeof b);
        ffn__appendf(c->notes, sizeof c->notes,
                     "the sweep stopped at %s, less than 2x the LLC sysfs reports (%s): if that "
                     "size is real, the last plateau is not DRAM; ",
                     b, a);
    }
    if (lv[nl - 1].n_points < 3 || lv[nl - 1].first_bytes >= c->max_bytes / 2)
        ffn__appendf(c->notes, sizeof c->notes,
                     "the last plateau (%s) is short: it may not be the final level; ",
                     lv[nl - 1].name);
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
            if (k == FFN_BW_READ && n > 0) {
                double tail[FFN_CAL_MAX_POINTS];
                size_t nt = 0;
                for (size_t i = 0; i < n; i++)
                    if (size[i] >= c->max_bytes / 4) tail[nt++] = bw[i];
                ffn_stats st;
                if (nt > 0 && ffn_stats_compute(tail, nt, &st) == 0)
                    c->tail_read_bps[t] = st.median;
            }
        }
    }
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
     * kernel exists (they cannot be the roof) */
    bool do_peak[FFN_PEAK_COUNT];
    int n_peak = 0;
    for (int k = 0; k < FFN_PEAK_COUNT; k++) {
        do_peak[k] = ffn_peak_available((ffn_peak_kind)k);
        if (opts->quick && do_peak[k] && (k == FFN_PEAK_FP32_PORTABLE || k == FFN_PEAK_FP32_AVX2) &&
            (ffn_peak_available(FFN_PEAK_FP32_AVX512) || ffn_peak_available(FFN_PEAK_FP32_NEON)))
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
        }
        if (tcount == 1) c->peaks[k][1] = c->peaks[k][0];
    }

    for (int k = 0; k < FFN_BW_COUNT; k++) {
        if (!ffn_bw_kernel_available((ffn_bw_kernel)k)) continue;
        for (int t = 0; t < tcount; t++) {
            if (!(t == 0 ? pl.bw_1t[k] : pl.bw_all[k])) continue;
            const int threads = t == 0 ? 1 : c->threads;
            const double base = pg.done;
            char what[64];
            snprintf(what, sizeof what, "bandwidth %s x%d", ffn_bw_kernel_name((ffn_bw_kernel)k),
                     threads);
            if ((rc = stage(&pg, what, sweep_w)) < 0) goto out;
            sweep_hook_ctx hc = {&pg, base, sweep_w};
            const ffn_bw_sweep_opts so = {.kernel = (ffn_bw_kernel)k,
                                          .threads = threads,
                                          .min_bytes = 16384,
                                          .max_bytes = c->max_bytes,
                                          .points_per_octave = pl.ppo,
                                          .point_s = pl.point_s,
                                          .sample_bytes = pl.sample_bytes,
                                          .hook = sweep_hook,
                                          .user = &hc};
            size_t got = 0;
            rc = ffn_bw_sweep(&so, c->points + c->n_points, FFN_CAL_MAX_POINTS - c->n_points, &got);
            c->n_points += got;
            if (rc < 0) goto out;
        }
    }
    rc = stage(&pg, "done", 0);
out:
    detect_all(c);
    if (c->n_points > 0) compare_with_sysfs(c);
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
    for (int dt = 0; dt < FFN_DT_COUNT; dt++)
        hw->peak_flops[dt] = fmax(ffn_calibration_peak(c, (ffn_dtype)dt, 1, use_amx),
                                  ffn_calibration_peak(c, (ffn_dtype)dt, 0, use_amx));
    hw->compute_units = (uint32_t)c->threads;
    hw->clock_hz = c->clock.hz;
    hw->mem_capacity_bytes = c->host.phys_mem_bytes;
    /* main memory: the sweep's tail, the better of one and all threads (see peaks above) */
    hw->mem_bandwidth_bps = fmax(c->tail_read_bps[0], c->tail_read_bps[1]);
    if (!(hw->mem_bandwidth_bps > 0)) return FFN_EINVAL;
    /* caches: the all-threads read-only plateaus (one thread when that is all we have) that end
     * before the tail; a plateau reaching into the tail is main memory */
    const int t = c->n_levels[FFN_BW_READ][1] > 0 ? 1 : 0;
    const ffn_level *lv = c->levels[FFN_BW_READ][t];
    const int nl = c->n_levels[FFN_BW_READ][t];
    for (int i = 0; i < nl && hw->n_levels < FFN_HW_MAX_LEVELS; i++) {
        if (lv[i].last_bytes >= c->max_bytes / 4 || lv[i].capacity_bytes <= 0) continue;
        ffn_mem_level *m = &hw->levels[hw->n_levels];
        snprintf(m->name, sizeof m->name, "L%d", hw->n_levels + 1);
        m->capacity_bytes = lv[i].capacity_bytes;
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
