/* The calibration's review of its own curves (ffn_calibration_review, calibrate.h): the read-only
 * plateau boundaries against the caches sysfs (else CPUID) reports (nearest size, one thread and
 * all threads, per-core or shared; the plateaus named after the caches they pair with), what must
 * not become a roof (a read-write rate above the read-only one at DRAM sizes, a level not faster
 * than the one after it: ffn_calibration_level_ok), all said in the calibration's notes. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/calibrate.h"

#include "cal_internal.h"
#include "internal.h"

static void human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.3g GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1000.0 * 1024 * 1024)
        snprintf(buf, n, "%.0f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.3g MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, n, "%.3g KiB", b / 1024.0);
}

/* Name one curve's plateaus after the caches their boundaries pair with (match[i]: the plateau
 * paired with cache i, or -1). Between two paired plateaus of levels p < n (p = 0 before the
 * first), k unpaired ones either fill levels the list skipped (p+1 ... p+k, when n - p - 1 >= k:
 * a VM whose sysfs hides L2) or, with no level number free, are parts of level n and take
 * letters with it (L3a, L3b: a Zen 5 VM's L3, which reads as two plateaus before DRAM). After
 * the last paired plateau the numbers go on (p+1, ...) up to the last level the list has; past
 * it, a plateau is part of the last level named (L3a, L3b: a level between a CPU's L3 and memory
 * is that L3's tail, not an L4 it does not have). With nothing paired the names stay by
 * position; the last plateau stays DRAM. */
static void name_after_caches(ffn_level *lv, int nl, const int *match, const int *sys_level, int ns)
{
    const int nb = nl - 1; /* plateaus with a boundary */
    int lvl[FFN_MAX_LEVELS] = {0}, top = 0;
    bool any = false;
    for (int i = 0; i < ns; i++) {
        if (sys_level[i] > top) top = sys_level[i];
        if (match[i] >= 0 && match[i] < nb && match[i] < FFN_MAX_LEVELS) {
            lvl[match[i]] = sys_level[i];
            any = true;
        }
    }
    if (!any) return;
    int j = 0, p = 0;
    while (j < nb) {
        int e = j; /* the next paired plateau at or after j */
        while (e < nb && lvl[e] == 0)
            e++;
        const int k = e - j; /* unpaired ones before it */
        if (e == nb) {       /* none left: numbers go on, then letters of the last level */
            for (int u = j; u < nb; u++) {
                if (p < top || u == 0) {
                    snprintf(lv[u].name, sizeof lv[u].name, "L%d", ++p);
                    continue;
                }
                char *prev = lv[u - 1].name;
                const size_t pl = strlen(prev);
                char letter = 'b';
                if (pl > 2 && prev[pl - 1] >= 'a' && prev[pl - 1] < 'z')
                    letter = (char)(prev[pl - 1] + 1);
                else
                    snprintf(prev, sizeof lv[u - 1].name, "L%da", p);
                snprintf(lv[u].name, sizeof lv[u].name, "L%d%c", p, letter);
            }
            break;
        }
        const int n = lvl[e];
        if (k == 0 || n - p - 1 >= k) {
            for (int u = j; u < e; u++)
                snprintf(lv[u].name, sizeof lv[u].name, "L%d", ++p);
            snprintf(lv[e].name, sizeof lv[e].name, "L%d", n);
        } else {
            for (int u = j; u <= e; u++)
                snprintf(lv[u].name, sizeof lv[u].name, "L%d%c", n, 'a' + (u - j) % 26);
        }
        p = n > p ? n : p;
        j = e + 1;
    }
}

/* Compare the read-only plateaus with the data/unified caches sysfs (or CPUID, where sysfs lists
 * none) reports, each boundary paired with the cache nearest to it in size (ffn_plateau_match),
 * not by index, and named after it; the other curves' plateaus are named the same way. t = 0:
 * the one-thread curve against one instance of each cache; t = 1: the all-threads curve, whose
 * working set is spread over the threads, against the instances those threads use (a per-core
 * cache counts once per thread, a shared one once per group of shared_cpus; where the sharing
 * is unknown, L1 and L2 count as per-core and L3 as shared). A level whose boundary grows with the
 * threads is per-core, one that stays put is shared. */
static void compare_with_sysfs(ffn_calibration *c)
{
    double sys1[FFN_MAX_SYSFS_CACHES], sysn[FFN_MAX_SYSFS_CACHES];
    int sys_level[FFN_MAX_SYSFS_CACHES], ns = 0;
    const char *src = c->host.cache_source[0] ? c->host.cache_source : "sysfs";
    for (int i = 0; i < c->host.n_caches && ns < FFN_MAX_SYSFS_CACHES; i++) {
        const ffn_sysfs_cache *sc = &c->host.caches[i];
        if (strcmp(sc->type, "Instruction") == 0 || !(sc->size_bytes > 0)) continue;
        /* unknown sharing (CPUID's legacy leaves): L1 and L2 per core, L3 and beyond shared */
        const int share = sc->shared_cpus > 0 ? sc->shared_cpus : sc->level >= 3 ? c->threads : 1;
        const int inst = (c->threads + share - 1) / share;
        sys1[ns] = sc->size_bytes;
        sysn[ns] = sc->size_bytes * (inst > 0 ? inst : 1);
        sys_level[ns++] = sc->level;
    }
    char a[32], b[32];
    for (int t = 0; t < 2; t++) {
        if (t == 1 && c->threads <= 1) break;
        ffn_level *lv = c->levels[FFN_BW_READ][t];
        const int nl = c->n_levels[FFN_BW_READ][t];
        if (nl == 0) {
            if (t == 0) ffn__appendf(c->notes, sizeof c->notes, "no bandwidth plateau detected; ");
            continue;
        }
        const int measured_caches = nl - 1;
        if (t == 0 && measured_caches != ns)
            ffn__appendf(c->notes, sizeof c->notes,
                         "%s lists %d data cache level(s), the one-thread read sweep shows %d "
                         "plateau(s) before the last; ",
                         src, ns, measured_caches);
        int match[FFN_MAX_SYSFS_CACHES];
        if (ffn_plateau_match(lv, nl, t ? sysn : sys1, ns, match)) continue;
        name_after_caches(lv, nl, match, sys_level, ns);
        for (int i = 0; i < ns; i++) {
            const double want = t ? sysn[i] : sys1[i];
            human_bytes(want, a, sizeof a);
            if (match[i] < 0) {
                if (t == 0)
                    ffn__appendf(c->notes, sizeof c->notes,
                                 "%s lists L%d = %s but no boundary of the one-thread read "
                                 "sweep pairs with it; ",
                                 src, sys_level[i], a);
                continue;
            }
            const double r = lv[match[i]].capacity_bytes / want;
            if (r < 0.5 || r > 2.0) {
                human_bytes(lv[match[i]].capacity_bytes, b, sizeof b);
                ffn__appendf(c->notes, sizeof c->notes,
                             "%s says L%d = %s%s but the nearest measured boundary (%s, %s) "
                             "is at about %s; ",
                             src, sys_level[i], a, t ? " for these threads" : "", lv[match[i]].name,
                             t ? "all threads" : "one thread", b);
            }
        }
        for (int k = 0; k < FFN_BW_COUNT; k++) { /* the read-write curves' plateaus too */
            if (k == FFN_BW_READ || c->n_levels[k][t] < 2) continue;
            int mk[FFN_MAX_SYSFS_CACHES];
            if (ffn_plateau_match(c->levels[k][t], c->n_levels[k][t], t ? sysn : sys1, ns, mk) == 0)
                name_after_caches(c->levels[k][t], c->n_levels[k][t], mk, sys_level, ns);
        }
    }
    /* per-core or shared: with N threads a per-core cache's boundary grows N-fold and a shared
     * one's stays put; the cut-offs are N^0.75 and N^0.25 (with 2 threads x1.68 and x1.19: the
     * Zen 4 VM's L2 grew x1.1, which the old "more than half of N" called per-core) */
    if (c->threads > 1 && c->n_levels[FFN_BW_READ][0] > 1 && c->n_levels[FFN_BW_READ][1] > 1) {
        char line[512] = "";
        const int n0 = c->n_levels[FFN_BW_READ][0] - 1, n1 = c->n_levels[FFN_BW_READ][1] - 1;
        for (int i = 0; i < n0 && i < n1; i++) {
            const double g = c->levels[FFN_BW_READ][1][i].capacity_bytes /
                             c->levels[FFN_BW_READ][0][i].capacity_bytes;
            /* beyond x2N the two curves cut their levels differently (two levels within 15%
             * of each other merge on one curve: a Zen 4 VM's two-thread L2 and L3, 215 and
             * 192 GB/s, made one "L2" to 10 MiB, "x14"), not a cache that grew; below x0.7 the
             * boundary shrank, which no cache does (a shared one stays put): one curve found a
             * boundary in noise (a family 6 model 207 VM's two-thread read curve put an
             * "L1" end at 18.8 KiB against one thread's 48 KiB, "x0.38", once called shared) */
            const char *why =
                g < 0.7 ? "a boundary that shrank with more threads is noise, no cache"
                : !(g <= 2.0 * c->threads) ? "the two curves cut their levels differently"
                                           : NULL;
            if (why) {
                human_bytes(c->levels[FFN_BW_READ][0][i].capacity_bytes, a, sizeof a);
                human_bytes(c->levels[FFN_BW_READ][1][i].capacity_bytes, b, sizeof b);
                ffn__appendf(line, sizeof line,
                             "%s%s not compared (one thread %s, %d threads %s: %s)", i ? ", " : "",
                             c->levels[FFN_BW_READ][0][i].name, a, c->threads, b, why);
                continue;
            }
            ffn__appendf(line, sizeof line, "%s%s %s (x%.2g with %d threads)", i ? ", " : "",
                         c->levels[FFN_BW_READ][0][i].name,
                         g >= pow(c->threads, 0.75)   ? "per-core"
                         : g <= pow(c->threads, 0.25) ? "shared"
                                                      : "partly shared",
                         g, c->threads);
        }
        if (line[0]) ffn__appendf(c->notes, sizeof c->notes, "measured levels: %s; ", line);
    }
    const ffn_level *lv = c->levels[FFN_BW_READ][0];
    const int nl = c->n_levels[FFN_BW_READ][0];
    const double llc = ffn_host_llc_bytes(&c->host);
    if (llc > 0 && c->max_bytes < 2.0 * llc) {
        human_bytes(llc, a, sizeof a);
        human_bytes(c->max_bytes, b, sizeof b);
        ffn__appendf(c->notes, sizeof c->notes,
                     "the sweep stopped at %s, less than 2x the LLC %s reports (%s): if that "
                     "size is real, the last plateau is not DRAM; ",
                     b, src, a);
    }
    if (nl > 0 && (lv[nl - 1].n_points < 3 || lv[nl - 1].first_bytes >= c->max_bytes / 2))
        ffn__appendf(c->notes, sizeof c->notes,
                     "the last plateau (%s) is short: it may not be the final level; ",
                     lv[nl - 1].name);
}

bool ffn_calibration_level_ok(const ffn_calibration *c, ffn_bw_kernel k, int t, int i)
{
    if (!c || (unsigned)k >= FFN_BW_COUNT || t < 0 || t > 1) return false;
    const int nl = c->n_levels[k][t];
    if (i < 0 || i >= nl) return false;
    const ffn_level *lv = c->levels[k][t];
    /* a plateau reaching into the tail (the last octave, where the memory roof is taken:
     * ffn__cal_tail_from) is main memory; one that ends before it and is faster than it is a
     * cache, however close to the end of the sweep (a family 6 model 207 VM's L3:
     * 61 GB/s with two threads up to 193 MiB of a 512 MiB sweep, against 34 GB/s beyond, was
     * dropped by the quarter-of-the-sweep rule this replaced, and its warm layers were priced
     * at DRAM speed, up to 77% slow) */
    if (lv[i].last_bytes >= ffn__cal_tail_from(c) || !(lv[i].capacity_bytes > 0)) return false;
    for (int j = i + 1; j < nl; j++)
        if (lv[j].bandwidth_bps >= lv[i].bandwidth_bps) return false;
    const double tail = fmax(c->tail_read_bps[0], c->tail_read_bps[1]);
    return !(tail > 0) || lv[i].bandwidth_bps >= tail;
}

/* What must not become a roof, said in the notes: a read-write rate above the read-only one at a
 * DRAM-sized working set (the read probe is then below the real roof, or the host's write path
 * is miscounted), and a level faster than a smaller one before it. */
static void check_order(ffn_calibration *c)
{
    for (int t = 0; t < 2; t++) {
        if (t == 1 && c->threads <= 1) break;
        const double ro = c->tail_read_bps[t];
        if (!(ro > 0)) continue;
        for (int k = FFN_BW_COPY; k < FFN_BW_COUNT; k++) {
            double tail[FFN_CAL_MAX_POINTS];
            size_t nt = 0;
            const int threads = t == 0 ? 1 : c->threads;
            for (size_t i = 0; i < c->n_points; i++) {
                const ffn_bw_point *p = &c->points[i];
                if ((int)p->kernel == k && p->threads == threads &&
                    p->size_bytes >= ffn__cal_tail_from(c))
                    tail[nt++] = p->bytes_per_s;
            }
            ffn_stats st;
            if (nt == 0 || ffn_stats_compute(tail, nt, &st)) continue;
            if (st.median > 1.05 * ro)
                ffn__appendf(c->notes, sizeof c->notes,
                             "%s (%s) at DRAM sizes with %d thread(s) ran at %.2f GB/s, above the "
                             "read-only %.2f GB/s: not a roof (the memory roof stays the "
                             "read-only figure); ",
                             ffn_bw_kernel_name((ffn_bw_kernel)k),
                             ffn_bw_kernel_kind((ffn_bw_kernel)k), threads, st.median / 1e9,
                             ro / 1e9);
        }
        const ffn_level *lv = c->levels[FFN_BW_READ][t];
        const int nl = c->n_levels[FFN_BW_READ][t];
        for (int i = 0; i < nl; i++) {
            if (lv[i].last_bytes >= ffn__cal_tail_from(c) || !(lv[i].capacity_bytes > 0)) continue;
            if (!ffn_calibration_level_ok(c, FFN_BW_READ, t, i))
                ffn__appendf(c->notes, sizeof c->notes,
                             "the %s read plateau %s (%.1f GB/s) is not faster than a larger "
                             "level or main memory: not written as a roof; ",
                             t ? "all-threads" : "one-thread", lv[i].name,
                             lv[i].bandwidth_bps / 1e9);
        }
    }
}

void ffn_calibration_review(ffn_calibration *c)
{
    if (!c || c->n_points == 0) return;
    compare_with_sysfs(c);
    check_order(c);
}
