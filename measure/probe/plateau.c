/* Cache levels from a bandwidth-vs-working-set curve, the way the Empirical Roofline Toolkit's
 * summary script does it (ERT 1.1.0, Scripts/summary.py; see docs reference "Roofline tools"):
 * smooth the curve, cluster consecutive points into +-5 % bins, treat a cluster with enough points
 * as a plateau, and accept a plateau as a new level only if it is at least 15 % below the level
 * before it; the levels are named L1, L2, ... and the last one DRAM (calibrate renames them after
 * the caches they pair with: ffn_calibration_review).
 * Three guards against noise that ERT's clean runs do not need: the clustering runs on the
 * smoothed curve's envelope from the right (step 1b); a plateau within +bin_rel above the
 * previous level continues it, and a longer plateau above a short previous level (but still a
 * drop from the level before) replaces it, since a short low stretch is a dip, not a level.
 * A sweep whose tail keeps falling after the last plateau ends with that tail as its last level
 * (step 4b), not with the last plateau named DRAM.
 * On top of ERT we estimate each level's capacity: the working-set size at which the smoothed
 * curve has fallen halfway (geometric mean) from this level's bandwidth to the next one's,
 * interpolated in log size.
 * ffn_plateau_match pairs the measured boundaries with the caches sysfs/CPUID report by nearest
 * size (in log size), not by index: a VM that hides a level, or a victim L3 that merges with L2,
 * then costs one unmatched entry instead of shifting every pair after it; pairs keep the order of
 * size (a larger cache never pairs with a smaller boundary than a smaller cache did). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/measure.h"
#include "ffnroof/sort.h"

static double median_range(const double *v, size_t lo, size_t hi, double *tmp)
{
    const size_t n = hi - lo + 1;
    memcpy(tmp, v + lo, n * sizeof *tmp);
    ffn_sort_doubles(tmp, n);
    return ffn_quantile_sorted(tmp, n, 0.5);
}

typedef struct cluster {
    size_t lo, hi; /* indices, inclusive */
} cluster;

int ffn_plateau_detect(const double *size, const double *bw, size_t n, const ffn_plateau_opts *opts,
                       ffn_level *levels, int cap, int *n_levels)
{
    if (!size || !bw || n == 0 || !levels || cap <= 0 || !n_levels) return FFN_EINVAL;
    *n_levels = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(bw[i] > 0) || !isfinite(bw[i]) || !(size[i] > 0) || (i > 0 && size[i] < size[i - 1]))
            return FFN_EINVAL;
    }
    ffn_plateau_opts o = {0.05, 0.15, 3, 3};
    if (opts) {
        if (opts->bin_rel > 0) o.bin_rel = opts->bin_rel;
        if (opts->drop_rel > 0) o.drop_rel = opts->drop_rel;
        if (opts->smooth > 0) o.smooth = opts->smooth | 1;
        if (opts->min_points > 0) o.min_points = opts->min_points;
    }
    double *sm = malloc(n * sizeof *sm);
    double *tmp = malloc(n * sizeof *tmp);
    cluster *cl = malloc(n * sizeof *cl);
    int rc = 0;
    if (!sm || !tmp || !cl) {
        rc = FFN_ENOMEM;
        goto done;
    }
    /* 1. moving median (window shrinks at the ends) */
    const size_t half = (size_t)o.smooth / 2;
    for (size_t i = 0; i < n; i++) {
        const size_t lo = i >= half ? i - half : 0;
        const size_t hi = i + half < n ? i + half : n - 1;
        sm[i] = median_range(bw, lo, hi, tmp);
    }
    /* 1b. the envelope from the right: no point reads slower than a larger working set does.
     * Each level is at most as fast as the one before it, so a stretch below a later, larger
     * set's rate is noise (a vCPU descheduled while it ran): a Zen 4 VM's two-thread curve
     * read 232-252 GB/s at 12-22 KiB and 369-422 at 26-64 KiB, and the
     * dip merged with L2 into one "L1" from 12 KiB to 1 MiB. Only the clustering sees the
     * envelope; a level's bandwidth stays the median of its raw points. */
    for (size_t i = n - 1; i-- > 0;)
        if (sm[i] < sm[i + 1]) sm[i] = sm[i + 1];
    /* 2. cluster consecutive points within +-bin_rel of the cluster's median */
    size_t nc = 0;
    cl[0] = (cluster){0, 0};
    nc = 1;
    for (size_t i = 1; i < n; i++) {
        cluster *c = &cl[nc - 1];
        const double ref = median_range(sm, c->lo, c->hi, tmp);
        if (fabs(sm[i] - ref) <= o.bin_rel * ref)
            c->hi = i;
        else
            cl[nc++] = (cluster){i, i};
    }
    /* 3./4. plateaus -> levels */
    int nl = 0;
    size_t last_hi[FFN_MAX_LEVELS + 1], first_lo[FFN_MAX_LEVELS + 1];
    for (size_t k = 0; k < nc; k++) {
        const cluster *c = &cl[k];
        if ((int)(c->hi - c->lo + 1) < o.min_points) continue;
        const double b = median_range(bw, c->lo, c->hi, tmp);
        const int npts = (int)(c->hi - c->lo + 1);
        if (nl > 0) {
            ffn_level *prev = &levels[nl - 1];
            /* compared with the level before it (not the first level) */
            if (b > prev->bandwidth_bps * (1.0 - o.drop_rel)) {
                if (b <= prev->bandwidth_bps * (1.0 + o.bin_rel)) {
                    /* not a new level: the previous one continues after a blip */
                    prev->last_bytes = size[c->hi];
                    prev->n_points += npts;
                    last_hi[nl - 1] = c->hi;
                } else if ((nl == 1 || b <= levels[nl - 2].bandwidth_bps * (1.0 - o.drop_rel)) &&
                           npts >= prev->n_points) {
                    /* higher than the previous level yet clearly below the one before (or the
                     * previous is the first: the ramp-up of the smallest sizes, where the loop
                     * overhead shows), and at least as long: the previous "level" was a dip
                     * (noise) or the ramp, this is the real one */
                    prev->bandwidth_bps = b;
                    prev->first_bytes = size[c->lo];
                    prev->last_bytes = size[c->hi];
                    prev->n_points = npts;
                    first_lo[nl - 1] = c->lo;
                    last_hi[nl - 1] = c->hi;
                }
                continue;
            }
        }
        if (nl == cap || nl == FFN_MAX_LEVELS) break;
        ffn_level *L = &levels[nl];
        memset(L, 0, sizeof *L);
        L->bandwidth_bps = b;
        L->first_bytes = size[c->lo];
        L->last_bytes = size[c->hi];
        L->n_points = npts;
        first_lo[nl] = c->lo;
        last_hi[nl] = c->hi;
        nl++;
    }
    /* 4b. a tail that falls without forming a plateau (a sweep that ends while the LLC still
     * drains, as on a Zen 4 VM's two-thread curve: a plateau at 170 GB/s up to
     * 10 MiB, then 154 ... 36 GB/s to 128 MiB, never flat within +-bin_rel): the last plateau is
     * not memory. When at least min_points raw points follow the last plateau and their last
     * min_points sit clearly below it, they become the last level, at their median. */
    if (nl > 0 && nl < cap && nl < FFN_MAX_LEVELS && last_hi[nl - 1] + (size_t)o.min_points < n) {
        const size_t lo = n - (size_t)o.min_points;
        const double b = median_range(bw, lo, n - 1, tmp);
        if (b < levels[nl - 1].bandwidth_bps * (1.0 - o.drop_rel)) {
            ffn_level *L = &levels[nl];
            memset(L, 0, sizeof *L);
            L->bandwidth_bps = b;
            L->first_bytes = size[lo];
            L->last_bytes = size[n - 1];
            L->n_points = o.min_points;
            first_lo[nl] = lo;
            last_hi[nl] = n - 1;
            nl++;
        }
    }
    /* 5. capacity: halfway crossing (log bandwidth) between consecutive levels */
    for (int l = 0; l + 1 < nl; l++) {
        const double target = sqrt(levels[l].bandwidth_bps * levels[l + 1].bandwidth_bps);
        size_t j = last_hi[l];
        while (j < first_lo[l + 1] && sm[j] > target)
            j++;
        double cap_bytes = size[j];
        if (j > 0 && sm[j - 1] > target && sm[j] < sm[j - 1]) {
            const double f = log(sm[j - 1] / target) / log(sm[j - 1] / sm[j]);
            cap_bytes = exp(log(size[j - 1]) + f * (log(size[j]) - log(size[j - 1])));
        }
        levels[l].capacity_bytes = cap_bytes;
    }
    for (int l = 0; l < nl; l++) {
        if (l == nl - 1)
            snprintf(levels[l].name, sizeof levels[l].name, "DRAM");
        else
            snprintf(levels[l].name, sizeof levels[l].name, "L%d", l + 1);
    }
    *n_levels = nl;
done:
    free(sm);
    free(tmp);
    free(cl);
    return rc;
}

/* Whether pairing cache i with boundary j would cross a pair already made: a smaller cache with
 * a larger boundary, or the reverse (a Zen 4 VM's one-thread portable-load curve:
 * boundaries 21.1 and 50.2 MiB; L3 = 32 MiB took 21.1, and L2 = 1 MiB would then
 * have taken 50.2 MiB and named a level after L3 "L2"). */
static bool crosses(const ffn_level *levels, const double *sys_bytes, int n_sys, const int *match,
                    int i, int j)
{
    for (int k = 0; k < n_sys; k++) {
        if (match[k] < 0 || sys_bytes[k] == sys_bytes[i]) continue;
        const bool smaller_cache = sys_bytes[k] < sys_bytes[i];
        const bool smaller_boundary = levels[match[k]].capacity_bytes < levels[j].capacity_bytes;
        if (smaller_cache != smaller_boundary) return true;
    }
    return false;
}

int ffn_plateau_match(const ffn_level *levels, int n_levels, const double *sys_bytes, int n_sys,
                      int *match)
{
    if (!levels || !sys_bytes || !match || n_levels < 0 || n_sys < 0) return FFN_EINVAL;
    /* a greedy assignment, closest pair first, each measured boundary used once */
    int used[FFN_MAX_LEVELS] = {0};
    for (int i = 0; i < n_sys; i++)
        match[i] = -1;
    const int nb = n_levels > 0 ? n_levels - 1 : 0; /* the last level has no boundary */
    for (int round = 0; round < n_sys && round < nb; round++) {
        double best = INFINITY;
        int bi = -1, bj = -1;
        for (int i = 0; i < n_sys; i++) {
            if (match[i] >= 0 || !(sys_bytes[i] > 0)) continue;
            for (int j = 0; j < nb && j < FFN_MAX_LEVELS; j++) {
                if (used[j] || !(levels[j].capacity_bytes > 0) ||
                    crosses(levels, sys_bytes, n_sys, match, i, j))
                    continue;
                const double d = fabs(log(levels[j].capacity_bytes / sys_bytes[i]));
                if (d < best) {
                    best = d;
                    bi = i;
                    bj = j;
                }
            }
        }
        if (bi < 0) break;
        match[bi] = bj;
        used[bj] = 1;
    }
    return 0;
}
