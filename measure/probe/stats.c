/* Robust statistics over timing samples and the "repeat until stable" driver of ffn_measure.
 * Medians and MAD rather than means: timing noise is one-sided (interrupts, other tenants of a
 * VM) and a few slow outliers must not move the answer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/measure.h"
#include "ffnroof/sort.h"

int ffn_stats_compute(const double *x, size_t n, ffn_stats *out)
{
    if (!x || !out || n == 0) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return FFN_EINVAL;
    double *s = malloc(n * sizeof *s);
    if (!s) return FFN_ENOMEM;
    memcpy(s, x, n * sizeof *s);
    ffn_sort_doubles(s, n);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = ffn_quantile_sorted(s, n, 0.5);
    out->p90 = ffn_quantile_sorted(s, n, 0.9);
    /* Welford: stable for samples that differ in their last digits */
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = x[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (x[i] - mean);
    }
    out->mean = mean;
    out->stdev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(s[i] - out->median);
    ffn_sort_doubles(s, n);
    out->mad = ffn_quantile_sorted(s, n, 0.5);
    free(s);
    return 0;
}

static double median_of(double *v, size_t n)
{
    ffn_sort_doubles(v, n);
    return ffn_quantile_sorted(v, n, 0.5);
}

int ffn_repeat_until_stable(ffn_sample_fn fn, void *ctx, const ffn_repeat_opts *opts,
                            ffn_repeat_result *out)
{
    if (!fn || !out) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    ffn_repeat_opts o = {0};
    if (opts) o = *opts;
    if (o.batch == 0) o.batch = 3;
    if (o.window == 0) o.window = 3;
    if (!(o.rel_spread > 0)) o.rel_spread = 0.02;
    if (o.min_samples == 0) o.min_samples = o.batch * o.window;
    if (o.max_samples == 0) o.max_samples = 1000;
    if (o.max_samples < o.min_samples) o.max_samples = o.min_samples;
    if (!(o.time_cap_s > 0)) o.time_cap_s = 2.0;
    if (opts == NULL) o.warmup = 1;

    double *x = malloc(o.max_samples * sizeof *x);
    double *hist = malloc((o.max_samples / o.batch + 1) * sizeof *hist);
    double *tmp = malloc((o.batch > o.window ? o.batch : o.window) * sizeof *tmp);
    int rc = 0;
    if (!x || !hist || !tmp) {
        rc = FFN_ENOMEM;
        goto done;
    }
    const double start = ffn_time_now_s();
    double first = NAN;
    for (size_t i = 0; i < o.warmup; i++) {
        rc = fn(ctx, &first);
        if (rc < 0) goto done;
    }
    size_t n = 0, nh = 0;
    while (n < o.max_samples) {
        double v;
        rc = fn(ctx, &v);
        if (rc < 0) goto done;
        x[n++] = v;
        if (n == 1 && o.slow_min_samples > 0) {
            const double cost = o.warmup > 0 ? first : v;
            if (cost > 0 && cost * (double)o.min_samples > o.time_cap_s) {
                const double need = ceil(o.time_cap_s / cost);
                const size_t lo =
                    o.slow_min_samples < o.min_samples ? o.slow_min_samples : o.min_samples;
                o.min_samples = need > (double)lo ? (size_t)need : lo;
            }
        }
        if (n % o.batch == 0) {
            memcpy(tmp, x + n - o.batch, o.batch * sizeof *tmp);
            hist[nh++] = median_of(tmp, o.batch);
            if (nh >= o.window) {
                memcpy(tmp, hist + nh - o.window, o.window * sizeof *tmp);
                ffn_sort_doubles(tmp, o.window);
                const double med = ffn_quantile_sorted(tmp, o.window, 0.5);
                out->spread = med != 0 ? (tmp[o.window - 1] - tmp[0]) / fabs(med) : 0.0;
                if (n >= o.min_samples && out->spread <= o.rel_spread) {
                    out->stable = true;
                    break;
                }
            }
        }
        if (n >= o.min_samples && ffn_time_now_s() - start >= o.time_cap_s) break;
    }
    out->elapsed_s = ffn_time_now_s() - start;
    rc = ffn_stats_compute(x, n, &out->stats);
done:
    free(x);
    free(hist);
    free(tmp);
    return rc;
}
