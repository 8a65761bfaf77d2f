/* Sorting and order statistics (include/ffnroof/sort.h). */
#include "ffnroof/sort.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void ffn_sort_doubles(double *v, size_t n)
{
    if (v && n > 1) qsort(v, n, sizeof *v, cmp_double);
}

void ffn_sort_i64(int64_t *v, size_t n)
{
    if (v && n > 1) qsort(v, n, sizeof *v, cmp_i64);
}

double ffn_median_sorted(const double *sorted, size_t n)
{
    if (!sorted || n == 0) return NAN;
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double ffn_median(double *v, size_t n)
{
    ffn_sort_doubles(v, n);
    return ffn_median_sorted(v, n);
}

double ffn_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (!sorted || n == 0) return NAN;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    const double h = (double)(n - 1) * q;
    const size_t lo = (size_t)floor(h);
    const size_t hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (h - (double)lo) * (sorted[hi] - sorted[lo]);
}
