/* What the roofline's two shapes share (report/plot_internal.h): which roofs a device's points
 * are measured against, the log axes' ranges that hold every ridge and point, and the placing of
 * a point's label where it covers the least of what is already on the chart. The single chart
 * (plot_roofline.c) and the small multiples (plot_roofline_grid.c) both use them, so a device's
 * roofs and the axes are the same whichever shape draws it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/plot.h"
#include "plot_internal.h"

ffn__plot_box ffn__plot_place_label(ffn__plot_box *taken, size_t *n_taken, size_t cap, double x,
                                    double y, double w, double h, double pl, double pr, double pb,
                                    double pt)
{
    /* right, right above/below, left, left above/below, above, below, further out */
    const double cand[][2] = {{10, 0},       {10, 12},       {10, -12},     {-10 - w, 0},
                              {-10 - w, 12}, {-10 - w, -12}, {-w / 2, 15},  {-w / 2, -15},
                              {10, 24},      {10, -24},      {-10 - w, 24}, {-10 - w, -24}};
    const size_t n_cand = sizeof cand / sizeof cand[0];
    size_t best = 0;
    double best_cost = INFINITY;
    for (size_t k = 0; k < n_cand && best_cost > 0; k++) {
        ffn__plot_box b = {x + cand[k][0], y + cand[k][1] - h / 2, x + cand[k][0] + w,
                           y + cand[k][1] + h / 2};
        /* outside the plot area counts as covering (it would be cut off) */
        double cost =
            fmax(0, pl - b.x0) + fmax(0, b.x1 - pr) + fmax(0, pb - b.y0) + fmax(0, b.y1 - pt);
        cost *= h;
        for (size_t t = 0; t < *n_taken; t++) {
            double ox = fmin(b.x1, taken[t].x1) - fmax(b.x0, taken[t].x0);
            double oy = fmin(b.y1, taken[t].y1) - fmax(b.y0, taken[t].y0);
            if (ox > 0 && oy > 0) cost += ox * oy;
        }
        if (cost < best_cost) best_cost = cost, best = k;
    }
    ffn__plot_box b = {x + cand[best][0], y + cand[best][1] - h / 2, x + cand[best][0] + w,
                       y + cand[best][1] + h / 2};
    if (*n_taken < cap) taken[(*n_taken)++] = b;
    return b;
}

void ffn__plot_roofs_kept(const ffn_roofline_chart *c, int keep_compute[], int keep_bw[])
{
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        const double bmain = ffn_plot_device_main_bw(dv);
        char dt[24] = "";
        for (size_t i = 0; i < c->n_pts && !dt[0]; i++) /* the dtype: the last word of a label */
            if (c->pts[i].device == d) {
                const char *sp = strrchr(c->pts[i].label, ' ');
                snprintf(dt, sizeof dt, "%s", sp ? sp + 1 : c->pts[i].label);
            }
        keep_compute[d] = keep_bw[d] = -1;
        for (int i = 0; i < dv->n_ceil; i++) {
            const ffn_plot_ceiling *e = &dv->ceil[i];
            if (e->kind == FFN_ROOF_COMPUTE) {
                const bool named = dt[0] && strstr(e->name, dt);
                const ffn_plot_ceiling *k =
                    keep_compute[d] >= 0 ? &dv->ceil[keep_compute[d]] : NULL;
                const bool k_named = k && dt[0] && strstr(k->name, dt);
                if (!k || (named && !k_named) || (named == k_named && e->value > k->value))
                    keep_compute[d] = i;
            } else if (e->value == bmain && keep_bw[d] < 0) {
                keep_bw[d] = i;
            }
        }
    }
}

void ffn__plot_roofline_axes(const ffn_roofline_chart *c, bool by_device, const int keep_compute[],
                             double x[2], double y[2])
{
    /* axis ranges: every ridge with room on both sides, every point */
    double lo = INFINITY, hi = 0, ylo = INFINITY, yhi = 0;
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        double pmax = ffn__plot_device_max(dv, false), pmin = ffn__plot_device_min_peak(dv);
        double btop = ffn__plot_device_max(dv, true), bmain = ffn_plot_device_main_bw(dv);
        if (pmax > 0 && btop > 0) {
            lo = fmin(lo, pmin / btop / 30);
            hi = fmax(hi, pmax / bmain * 4);
        }
        if (pmax > 0) yhi = fmax(yhi, pmax * 2.5);
        if (btop > 0) yhi = fmax(yhi, btop * 2.5);
    }
    if (by_device) { /* only the roofs drawn set the top */
        yhi = 0;
        for (int d = 0; d < c->n_dev; d++)
            if (keep_compute[d] >= 0) yhi = fmax(yhi, c->dev[d].ceil[keep_compute[d]].value * 2.5);
    }
    for (size_t i = 0; i < c->n_pts; i++) {
        const ffn_plot_point *p = &c->pts[i];
        if (!(p->intensity > 0)) continue;
        lo = fmin(lo, p->intensity / 3);
        hi = fmax(hi, p->intensity * 3);
        if (p->measured_flops > 0) ylo = fmin(ylo, p->measured_flops / 3);
        if (p->predicted_flops > 0) ylo = fmin(ylo, p->predicted_flops / 3);
    }
    if (!isfinite(lo)) lo = 0.1, hi = 1000;
    double dummy;
    ffn_plot_log_range(lo, hi, &x[0], &x[1]);
    for (int d = 0; d < c->n_dev; d++) {
        double bmain = ffn_plot_device_main_bw(&c->dev[d]);
        double pmin = ffn__plot_device_min_peak(&c->dev[d]);
        /* the slowest roof should enter the chart, but not drag it down by many decades */
        if (bmain > 0)
            ylo = fmin(ylo, fmax(bmain * x[0], pmin / 1e4));
        else if (pmin > 0)
            ylo = fmin(ylo, pmin / 10);
    }
    ffn_plot_log_range(ylo, yhi, &y[0], &dummy);
    ffn_plot_log_range(ylo, yhi, &dummy, &y[1]);
}
