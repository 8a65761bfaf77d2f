/* Sorting and order statistics over samples: one comparator and one definition of the median
 * and of a quantile for the fits (sim/), the timers and sweeps (measure/) and the reports. */
#ifndef FFNROOF_SORT_H
#define FFNROOF_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort v[0..n) ascending in place (qsort; NaN compares equal to everything, so keep NaNs out). */
void ffn_sort_doubles(double *v, size_t n);
void ffn_sort_i64(int64_t *v, size_t n);

/* Median of n ascending values: the middle one for odd n, the mean of the two middle ones for
 * even n; NaN for n == 0. */
double ffn_median_sorted(const double *sorted, size_t n);
/* Median of v[0..n): sorts v in place, then ffn_median_sorted. */
double ffn_median(double *v, size_t n);

/* Quantile q in [0, 1] of n ascending values: linear interpolation between order statistics
 * (Hyndman and Fan 1996, type 7, R's default): h = (n - 1) q, v[floor h] + frac(h) (v[floor h +
 * 1] - v[floor h]). q <= 0 gives the minimum, q >= 1 the maximum; NaN for n == 0 or NULL. Equal to
 * ffn_median_sorted at q = 0.5 up to rounding. */
double ffn_quantile_sorted(const double *sorted, size_t n, double q);

#endif
