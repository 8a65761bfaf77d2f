/* The roofline writer (include/ffnroof/plot.h, ffn_plot_roofline_write): the axis ranges, each
 * device's compute and bandwidth ceilings, their labels, ridge points and kernel points as index
 * blocks of a gnuplot data file, and the plot command that draws them from plots/roofline.gp. */
#include "ffnroof/plot.h"

#include <math.h>
#include <string.h>

#include "ffnroof/units.h"
#include "plot_internal.h"

int ffn_plot_roofline_write(const ffn_roofline_chart *c, const char *template_text,
                            const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    int n_ceil = 0;
    for (int d = 0; d < c->n_dev; d++) n_ceil += c->dev[d].n_ceil;
    if (c->n_dev <= 0 || n_ceil == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no device ceilings");

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
    for (size_t i = 0; i < c->n_pts; i++) {
        const ffn_plot_point *p = &c->pts[i];
        if (!(p->intensity > 0)) continue;
        lo = fmin(lo, p->intensity / 3);
        hi = fmax(hi, p->intensity * 3);
        if (p->measured_flops > 0) ylo = fmin(ylo, p->measured_flops / 3);
        if (p->predicted_flops > 0) ylo = fmin(ylo, p->predicted_flops / 3);
    }
    if (!isfinite(lo)) lo = 0.1, hi = 1000;
    double xmin, xmax, ymin, ymax, dummy;
    ffn_plot_log_range(lo, hi, &xmin, &xmax);
    for (int d = 0; d < c->n_dev; d++) {
        double bmain = ffn_plot_device_main_bw(&c->dev[d]);
        double pmin = ffn__plot_device_min_peak(&c->dev[d]);
        /* the slowest roof should enter the chart, but not drag it down by many decades */
        if (bmain > 0) ylo = fmin(ylo, fmax(bmain * xmin, pmin / 1e4));
        else if (pmin > 0) ylo = fmin(ylo, pmin / 10);
    }
    ffn_plot_log_range(ylo, yhi, &ymin, &dummy);
    ffn_plot_log_range(ylo, yhi, &dummy, &ymax);

    ffn__membuf setup;
    ffn__plotcmd pc = {.n = 0};
    int rc = ffn__mb_open(&setup);
    if (!rc) rc = ffn__mb_open(&pc.mb);
    if (rc) {
        ffn__mb_free(&setup);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "out of memory");
    }

    char buf[32], lab[256], name[80];
    int idx = 0;
    bool multi = c->n_dev > 1;
    fprintf(data, "# ffnroof roofline data: x = arithmetic intensity (FLOP/byte), "
                  "y = performance (FLOP/s)\n# chart: %s\n# axes: x [%g:%g], y [%g:%g]\n",
            c->title, xmin, xmax, ymin, ymax);
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        int lt = d + 1;
        ffn__plot_clean(name, sizeof name, dv->name);
        fprintf(data, "\n# ==== device %d: %s (%s)\n", d + 1, name, dv->origin);
        double pmax = ffn__plot_device_max(dv, false), btop = ffn__plot_device_max(dv, true);
        double bmain = ffn_plot_device_main_bw(dv);

        /* compute ceilings: y = peak from where the fastest bandwidth roof meets it */
        bool any = false;
        for (int i = 0; i < dv->n_ceil; i++) {
            const ffn_plot_ceiling *e = &dv->ceil[i];
            if (e->kind != FFN_ROOF_COMPUTE) continue;
            if (!any) fprintf(data, "\n\n# [%d] compute ceilings (x1 y, x2 y per line)\n", idx);
            any = true;
            double x0 = btop > 0 ? e->value / btop : xmin;
            fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", x0, e->value, xmax, e->value);
        }
        if (any) {
            ffn__plot_clause(&pc, "datafile index %d with lines lt %d lw 2.5 dt 1 title \"%s compute\"",
                   idx, lt, name);
            idx++;
        }
        /* bandwidth ceilings by kind: y = bw * x up to the highest compute roof */
        static const ffn_roof_kind kinds[] = {FFN_ROOF_READ_ONLY, FFN_ROOF_READ_WRITE,
                                              FFN_ROOF_DATASHEET};
        static const char *const dts[] = {"1", "2", "1"}; /* read-write dashed */
        for (size_t k = 0; k < 3; k++) {
            any = false;
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind != kinds[k]) continue;
                if (!any)
                    fprintf(data, "\n\n# [%d] %s bandwidth ceilings (x y per end)\n", idx,
                            ffn_roof_kind_name(kinds[k]));
                any = true;
                double x1 = pmax > 0 ? pmax / e->value : xmax;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", xmin, e->value * xmin, x1,
                        e->value * x1);
            }
            if (any) {
                ffn__plot_clause(&pc, "datafile index %d with lines lt %d lw 2 dt %s title \"%s bandwidth, %s\"",
                       idx, lt, dts[k], name, ffn_roof_kind_name(kinds[k]));
                idx++;
            }
        }
        /* labels: compute at the right end above the line, bandwidth along the diagonal */
        int n_compute = 0, n_bw = 0;
        for (int i = 0; i < dv->n_ceil; i++) {
            if (dv->ceil[i].kind == FFN_ROOF_COMPUTE) n_compute++;
            else n_bw++;
        }
        if (n_compute) {
            fprintf(data, "\n\n# [%d] compute ceiling labels (x y \"text\")\n", idx);
            /* from the highest ceiling down; a label that would sit on its upper neighbour's
             * goes below its own line, and further left when that is taken too */
            int order[FFN_PLOT_MAX_CEILINGS], no = 0;
            for (int i = 0; i < dv->n_ceil; i++)
                if (dv->ceil[i].kind == FFN_ROOF_COMPUTE) order[no++] = i;
            for (int a = 1; a < no; a++)
                for (int b2 = a; b2 > 0 && dv->ceil[order[b2]].value > dv->ceil[order[b2 - 1]].value;
                     b2--) {
                    int t = order[b2];
                    order[b2] = order[b2 - 1];
                    order[b2 - 1] = t;
                }
            double last_y = INFINITY;
            int last_side = 0;
            for (int oi = 0; oi < no; oi++) {
                const ffn_plot_ceiling *e = &dv->ceil[order[oi]];
                double y = e->value * 1.15, x = xmax / 1.25;
                int side = 0;
                if (last_y / y < 1.45) {
                    y = e->value / 1.2;
                    side = 1;
                    if (last_side == 1 || last_y / y < 1.45) x = xmax / 40;
                }
                last_y = y;
                last_side = side;
                char cn[40];
                ffn__plot_clean(cn, sizeof cn, e->name);
                char ridge[48] = "";
                if (bmain > 0) /* the ridge against main memory, said once, on its ceiling */
                    snprintf(ridge, sizeof ridge, ", ridge %.3g FLOP/B", e->value / bmain);
                /* no device prefix: the colour and the legend say whose roof it is, and the
                 * right end of the chart has little room */
                snprintf(lab, sizeof lab, "%s %s%s", cn,
                         ffn_units_str(buf, sizeof buf, e->value, FFN_UNIT_FLOPS), ridge);
                fprintf(data, "%.6g %.6g \"%s\"\n", x, y, lab);
            }
            ffn__plot_clause(&pc, "datafile index %d using 1:2:3 with labels right font \",9\" tc lt %d "
                        "notitle",
                   idx, lt);
            idx++;
        }
        if (n_bw) {
            fprintf(data, "\n\n# [%d] bandwidth ceiling labels (x y \"text\")\n", idx);
            int nbw = 0;
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind == FFN_ROOF_COMPUTE) continue;
                char cn[40];
                ffn__plot_clean(cn, sizeof cn, e->name);
                snprintf(lab, sizeof lab, "%.63s%s%s %s, %s", multi ? name : "", multi ? ": " : "",
                         cn, ffn_units_str(buf, sizeof buf, e->value, FFN_UNIT_BPS),
                         ffn_roof_kind_name(e->kind));
                /* stagger along the diagonal so that neighbouring roofs do not share a spot */
                double x = xmin * 1.6 * pow(3, nbw++);
                if (pmax > 0 && x > pmax / e->value / 4) x = xmin * 1.6;
                fprintf(data, "%.6g %.6g \"%s\"\n", x, e->value * x * 1.5, lab);
            }
            ffn__plot_clause(&pc, "datafile index %d using 1:2:3 with labels left font \",9\" tc lt %d "
                        "notitle",
                   idx, lt);
            idx++;
        }
        /* ridge points: each compute roof against the slowest (main memory) roof */
        if (bmain > 0 && pmax > 0) {
            fprintf(data, "\n\n# [%d] ridge points against %s (x = peak / bandwidth, y = peak)\n",
                    idx, ffn_units_str(buf, sizeof buf, bmain, FFN_UNIT_BPS));
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if (e->kind != FFN_ROOF_COMPUTE) continue;
                fprintf(data, "%.6g %.6g\n", e->value / bmain, e->value);
            }
            ffn__plot_clause(&pc, "datafile index %d using 1:2 with points lt %d pt 12 ps 2 title \"%s ridge "
                        "points\"",
                   idx, lt, name);
            idx++;
        }
        /* kernel points of this device */
        size_t nm = 0, np = 0, npair = 0;
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *p = &c->pts[i];
            if (p->device != d || !(p->intensity > 0)) continue;
            nm += p->measured_flops > 0;
            np += p->predicted_flops > 0;
            npair += p->measured_flops > 0 && p->predicted_flops > 0;
        }
        if (nm) {
            fprintf(data, "\n\n# [%d] measured points (intensity FLOP/B, FLOP/s, \"label\")\n", idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->measured_flops > 0)) continue;
                ffn__plot_clean(lab, sizeof lab, p->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", p->intensity, p->measured_flops, lab);
            }
            ffn__plot_clause(&pc, "datafile index %d using 1:2 with points lt %d pt 7 ps 1.2 title \"%s "
                        "measured\"",
                   idx, lt, name);
            ffn__plot_clause(&pc, "datafile index %d using 1:2:3 with labels left offset 0.8,0.3 "
                        "font \",8\" tc lt %d notitle",
                   idx, lt);
            idx++;
        }
        if (np) {
            fprintf(data, "\n\n# [%d] predicted points (intensity FLOP/B, FLOP/s, \"label\")\n",
                    idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->predicted_flops > 0)) continue;
                ffn__plot_clean(lab, sizeof lab, p->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", p->intensity, p->predicted_flops, lab);
            }
            ffn__plot_clause(&pc, "datafile index %d using 1:2 with points lt %d pt 6 ps 1.4 title \"%s "
                        "predicted\"",
                   idx, lt, name);
            if (!nm) /* predictions alone: label them (otherwise the measured label says it) */
                ffn__plot_clause(&pc, "datafile index %d using 1:2:3 with labels left offset 0.8,0.3 "
                            "font \",8\" tc lt %d notitle",
                       idx, lt);
            idx++;
        }
        if (npair) {
            fprintf(data, "\n\n# [%d] measured -> predicted (one pair per line)\n", idx);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->measured_flops > 0) ||
                    !(p->predicted_flops > 0))
                    continue;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", p->intensity, p->measured_flops,
                        p->intensity, p->predicted_flops);
            }
            ffn__plot_clause(&pc, "datafile index %d with lines lt %d lw 0.8 dt 3 notitle", idx, lt);
            idx++;
        }
    }
    fputc('\n', pc.mb.fp);
    char xr[64], yr[64], title[300];
    snprintf(xr, sizeof xr, "[%g:%g]", xmin, xmax);
    snprintf(yr, sizeof yr, "[%g:%g]", ymin, ymax);
    ffn__plot_clean(title, sizeof title, c->title);
    ffn__plot_parts sp = {.title = title, .xrange = xr, .yrange = yr, .setup = ffn__mb_close(&setup),
                       .plot = ffn__mb_close(&pc.mb)};
    rc = ffn__plot_script(script, template_text, f, &sp);
    ffn__mb_free(&setup);
    ffn__mb_free(&pc.mb);
    return ffn__plot_finish(data, script, diag, rc);
}
