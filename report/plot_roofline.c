/* The roofline writer (include/ffnroof/plot.h, ffn_plot_roofline_write): the axis ranges, each
 * device's compute and bandwidth ceilings, ridge points and kernel points as index blocks of a
 * gnuplot data file, and the plot command that draws them from plots/roofline.gp.
 *
 * Readability: every ceiling has a colour of its own (one per compute roof and per memory level,
 * the same name sharing a colour across devices, which differ by dash pattern), and the legend
 * names each with its value (a compute roof also with its ridge point), so no text sits on the
 * lines. The kernel points' labels are placed one by one where they cover no other label and no
 * point: the plot area is fixed here (margins at screen positions) so that positions in pixels
 * are known, with the text's size estimated from its font. From FFN_PLOT_GRID_MIN_DEVICES devices
 * on, the chart is small multiples instead (plot_roofline_grid.c); both take the roofs' choice,
 * the axis ranges and the label placement from plot_roofline_geom.c. */
#include "ffnroof/plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/units.h"
#include "plot_internal.h"

const char *ffn_plot_roofline_template(const ffn_roofline_chart *c)
{
    return c->n_dev >= FFN_PLOT_GRID_MIN_DEVICES ? "roofline-grid.gp" : "roofline.gp";
}

int ffn_plot_roofline_write(const ffn_roofline_chart *c, const char *template_text,
                            const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    int n_ceil = 0;
    for (int d = 0; d < c->n_dev; d++)
        n_ceil += c->dev[d].n_ceil;
    if (c->n_dev <= 0 || n_ceil == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no device ceilings");
    if (c->n_dev >= FFN_PLOT_GRID_MIN_DEVICES)
        return ffn__plot_roofline_grid_write(c, template_text, f, data, script, diag);

    /* Three devices or more: one colour per device, and of each only the roofs its points are
     * measured against - the compute roof of their dtype and main memory - so the legend is a
     * block per device and no roof is drawn twice in look-alike colours. */
    const bool by_device = c->n_dev >= 3;
    int keep_compute[FFN_PLOT_MAX_DEVICES], keep_bw[FFN_PLOT_MAX_DEVICES];
    ffn__plot_roofs_kept(c, keep_compute, keep_bw);
    double xr[2], yr[2];
    ffn__plot_roofline_axes(c, by_device, keep_compute, xr, yr);
    const double xmin = xr[0], xmax = xr[1], ymin = yr[0], ymax = yr[1];

    /* ---- the ceilings in legend order, each with its colour ---------------------------- */
    typedef struct roof {
        int dev, ceil, lt;
        char title[160];
    } roof;
    static roof roofs[FFN_PLOT_MAX_DEVICES * FFN_PLOT_MAX_CEILINGS];
    int n_roofs = 0;
    const char *keys[FFN_PLOT_MAX_DEVICES * FFN_PLOT_MAX_CEILINGS];
    int n_keys = 0;
    const bool multi = c->n_dev > 1;
    char buf[32], lab[256], name[80], cn[40];
    for (int pass = 0; pass < 2; pass++) /* compute roofs take the first colours */
        for (int d = 0; d < c->n_dev; d++) {
            const ffn_plot_device *dv = &c->dev[d];
            const double bmain = ffn_plot_device_main_bw(dv);
            int first = n_roofs;
            for (int i = 0; i < dv->n_ceil; i++) {
                const ffn_plot_ceiling *e = &dv->ceil[i];
                if ((e->kind != FFN_ROOF_COMPUTE) != (pass == 1)) continue;
                if (by_device && i != keep_compute[d] && i != keep_bw[d]) continue;
                /* the colour's key is the name: a level read-only and read-write, or the same
                 * roof on several devices ("bf16/fp16", "HBM"), share one */
                int k = 0;
                while (k < n_keys && strcmp(keys[k], e->name))
                    k++;
                if (k == n_keys) keys[n_keys++] = e->name;
                roof *r = &roofs[n_roofs++];
                r->dev = d;
                r->ceil = i;
                r->lt = by_device ? d + 1 : k + 1;
                ffn__plot_clean(cn, sizeof cn, e->name);
                char ridge[48] = "";
                if (pass == 0 && bmain > 0) /* the ridge against main memory */
                    snprintf(ridge, sizeof ridge, ", ridge %.3g FLOP/B", e->value / bmain);
                snprintf(
                    r->title, sizeof r->title, "%s%s %s%s%s%s", by_device ? "  " : "", cn,
                    ffn_units_str(buf, sizeof buf, e->value, pass ? FFN_UNIT_BPS : FFN_UNIT_FLOPS),
                    pass ? ", " : "", pass ? ffn_roof_kind_name(e->kind) : "", ridge);
            }
            /* highest first, as the lines stand on the chart (a stable insertion sort) */
            for (int a = first + 1; a < n_roofs; a++)
                for (int b = a;
                     b > first && dv->ceil[roofs[b].ceil].value > dv->ceil[roofs[b - 1].ceil].value;
                     b--) {
                    roof t = roofs[b];
                    roofs[b] = roofs[b - 1];
                    roofs[b - 1] = t;
                }
        }

    /* ---- the plot area, fixed so that label positions can be computed in pixels ---------- */
    const double W = f->width > 0 ? f->width : 1200, H = f->height > 0 ? f->height : 800;
    /* the legend (its entries: a header per device when there are several, its ceilings, its
     * measured and predicted points; the ridge points) stands right of the plot area */
    int n_entries = n_roofs + 1 + c->n_dev * (multi ? 3 : 2);
    size_t longest = 36;
    for (int r = 0; r < n_roofs; r++)
        if (strlen(roofs[r].title) > longest) longest = strlen(roofs[r].title);
    for (int d = 0; d < c->n_dev; d++)
        if (strlen(c->dev[d].name) > longest) longest = strlen(c->dev[d].name);
    const bool small_key = n_entries > 30;
    const double key_char = small_key ? 6.7 : 7.2; /* px per character at the key's font */
    double rm = 1 - (key_char * (double)longest + 70) / W;
    if (rm < 0.5) rm = 0.5;
    const double lm = 90 / W, bm = 70 / H, tm = 1 - 45 / H;
    const double PL = lm * W, PR = rm * W, PB = bm * H, PT = tm * H;
    const double lx0 = log10(xmin), lx1 = log10(xmax), ly0 = log10(ymin), ly1 = log10(ymax);
#define PX(x) (PL + (log10(x) - lx0) / (lx1 - lx0) * (PR - PL))
#define PY(y) (PB + (log10(y) - ly0) / (ly1 - ly0) * (PT - PB))

    ffn__membuf setup;
    ffn__plotcmd pc;
    int rc = ffn__plot_begin(&setup, &pc, diag);
    if (rc) return rc;
    fprintf(setup.fp,
            "# the plot area, fixed: ffnroof placed the point labels for it\n"
            "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
            "set bmargin at screen %.4f\nset tmargin at screen %.4f\n",
            lm, rm, bm, tm);
    fprintf(setup.fp, "set key at screen %.4f, screen %.4f left top%s\n", rm + 8 / W, tm,
            small_key ? " font \",9\" spacing 1.0" : "");

    int idx = 0;
    fprintf(data,
            "# ffnroof roofline data: x = arithmetic intensity (FLOP/byte), "
            "y = performance (FLOP/s)\n# chart: %s\n# axes: x [%g:%g], y [%g:%g]\n",
            c->title, xmin, xmax, ymin, ymax);
    /* device d's lines: solid, dashed, dash-dotted, ... (read-write roofs dotted) */
    static const int dev_dt[] = {1, 2, 4, 5};
    static const int meas_pt[] = {7, 5, 9, 11, 13, 15}, pred_pt[] = {6, 4, 8, 10, 12, 14};

    /* ---- what the point labels must not cover: every marker and ridge point ------------- */
    static ffn__plot_box
        taken[3 * FFN_PLOT_MAX_POINTS + FFN_PLOT_MAX_DEVICES * FFN_PLOT_MAX_CEILINGS];
    size_t n_taken = 0;
    for (size_t i = 0; i < c->n_pts; i++) { /* every marker is an obstacle */
        const ffn_plot_point *p = &c->pts[i];
        if (!(p->intensity > 0)) continue;
        const double v[2] = {p->measured_flops, p->predicted_flops};
        for (int k = 0; k < 2; k++)
            if (v[k] > 0) {
                double x = PX(p->intensity), y = PY(v[k]);
                taken[n_taken++] = (ffn__plot_box){x - 6, y - 6, x + 6, y + 6};
            }
    }
    for (int r = 0; r < n_roofs; r++) {
        const ffn_plot_device *dv = &c->dev[roofs[r].dev];
        const ffn_plot_ceiling *e = &dv->ceil[roofs[r].ceil];
        const double bmain = ffn_plot_device_main_bw(dv);
        if (e->kind != FFN_ROOF_COMPUTE || !(bmain > 0)) continue;
        double x = PX(e->value / bmain), y = PY(e->value);
        taken[n_taken++] = (ffn__plot_box){x - 9, y - 9, x + 9, y + 9};
    }

    /* ---- per device: its ceilings, its kernel points, then their labels -------------------- */
    for (int d = 0; d < c->n_dev; d++) {
        ffn__plot_clean(name, sizeof name, c->dev[d].name);
        fprintf(data, "\n# ==== device %d: %s (%s)\n", d + 1, name, c->dev[d].origin);
        if (by_device) /* the device's name in its colour over its roofs */
            ffn__plot_clause(&pc, "keyentry with points pt 7 ps 1.3 lt %d title \"%s\"", d + 1,
                             name);
        else if (multi) /* the device's name, with its dash pattern, over its ceilings */
            ffn__plot_clause(&pc, "keyentry with lines lc rgb point_colour lw 2 dt %d title \"%s\"",
                             dev_dt[d % 4], name);
        for (int r = 0; r < n_roofs; r++) {
            const roof *ro = &roofs[r];
            if (ro->dev != d) continue;
            const ffn_plot_device *dv = &c->dev[ro->dev];
            const ffn_plot_ceiling *e = &dv->ceil[ro->ceil];
            const double pmax = ffn__plot_device_max(dv, false),
                         btop = ffn__plot_device_max(dv, true);
            const int dt = by_device                        ? (e->kind == FFN_ROOF_COMPUTE ? 1 : 2)
                           : e->kind == FFN_ROOF_READ_WRITE ? 3
                                                            : dev_dt[ro->dev % 4];
            const double lw = e->kind == FFN_ROOF_READ_WRITE ? 2.5 : 2;
            ffn__plot_clean(name, sizeof name, dv->name);
            const double bkept =
                by_device && keep_bw[ro->dev] >= 0 ? dv->ceil[keep_bw[ro->dev]].value : 0;
            const double ckept =
                by_device && keep_compute[ro->dev] >= 0 ? dv->ceil[keep_compute[ro->dev]].value : 0;
            if (e->kind == FFN_ROOF_COMPUTE) {
                /* y = peak from where the fastest bandwidth roof drawn meets it */
                double x0 = bkept > 0 ? e->value / bkept : btop > 0 ? e->value / btop : xmin;
                fprintf(data, "\n\n# [%d] %s: compute ceiling %s (x y per end)\n", idx, name,
                        ro->title);
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n", x0, e->value, xmax, e->value);
                ffn__plot_clause(&pc,
                                 "datafile index %d with lines lt %d lw 2.5 dt %d title \"%s\"",
                                 idx, ro->lt, dt, ro->title);
            } else {
                /* y = bw * x up to the highest compute roof drawn */
                double x1 = ckept > 0 ? ckept / e->value : pmax > 0 ? pmax / e->value : xmax;
                fprintf(data, "\n\n# [%d] %s: bandwidth ceiling %s (x y per end)\n", idx, name,
                        ro->title);
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n", xmin, e->value * xmin, x1, e->value * x1);
                ffn__plot_clause(&pc, "datafile index %d with lines lt %d lw %g dt %d title \"%s\"",
                                 idx, ro->lt, lw, dt, ro->title);
            }
            idx++;
        }
        ffn__plot_clean(name, sizeof name, c->dev[d].name);
        size_t nm = 0, np = 0, npair = 0;
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *p = &c->pts[i];
            if (p->device != d || !(p->intensity > 0)) continue;
            nm += p->measured_flops > 0;
            np += p->predicted_flops > 0;
            npair += p->measured_flops > 0 && p->predicted_flops > 0;
        }
        if (npair) {
            fprintf(data, "\n\n# [%d] %s: measured -> predicted (one pair per line)\n", idx, name);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                if (p->device != d || !(p->intensity > 0) || !(p->measured_flops > 0) ||
                    !(p->predicted_flops > 0))
                    continue;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", p->intensity, p->measured_flops,
                        p->intensity, p->predicted_flops);
            }
            ffn__plot_clause(&pc,
                             "datafile index %d with lines lw 0.8 dt 3 lc rgb pair_colour "
                             "notitle",
                             idx);
            idx++;
        }
        for (int pred = 0; pred < 2; pred++) { /* the measured points, then the predicted */
            if (!(pred ? np : nm)) continue;
            const char *what = pred ? "predicted" : "measured";
            fprintf(data, "\n\n# [%d] %s: %s points (intensity FLOP/B, FLOP/s, \"label\")\n", idx,
                    name, what);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *p = &c->pts[i];
                const double v = pred ? p->predicted_flops : p->measured_flops;
                if (p->device != d || !(p->intensity > 0) || !(v > 0)) continue;
                ffn__plot_clean(lab, sizeof lab, p->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", p->intensity, v, lab);
            }
            if (by_device) /* the device's colour; measured filled, predicted open */
                ffn__plot_clause(&pc,
                                 "datafile index %d using 1:2 with points pt %d ps %s lt %d "
                                 "title \"  %s\"",
                                 idx, pred ? 6 : 7, pred ? "1.4" : "1.3", d + 1, what);
            else
                ffn__plot_clause(&pc,
                                 "datafile index %d using 1:2 with points pt %d ps %s "
                                 "lc rgb point_colour title \"%s\"",
                                 idx, pred ? pred_pt[d % 6] : meas_pt[d % 6], pred ? "1.4" : "1.3",
                                 what);
            idx++;
        }
        if ((!nm && !np) || by_device) continue;
        /* one label per point: the measured one (its prediction beside it), else the predicted */
        fprintf(data, "\n\n# [%d] %s: point labels (x y \"text\", placed clear of each other)\n",
                idx, name);
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *p = &c->pts[i];
            if (p->device != d || !(p->intensity > 0)) continue;
            const double v = p->measured_flops > 0 ? p->measured_flops : p->predicted_flops;
            if (!(v > 0)) continue;
            ffn__plot_clean(lab, sizeof lab, p->label);
            const double w = 6.0 * (double)strlen(lab), h = 11, x = PX(p->intensity), y = PY(v);
            const ffn__plot_box b = ffn__plot_place_label(
                taken, &n_taken, sizeof taken / sizeof taken[0], x, y, w, h, PL, PR, PB, PT);
            /* back to data coordinates: the text's left end, centred vertically */
            double lx = pow(10, lx0 + (b.x0 - PL) / (PR - PL) * (lx1 - lx0));
            double ly = pow(10, ly0 + ((b.y0 + b.y1) / 2 - PB) / (PT - PB) * (ly1 - ly0));
            fprintf(data, "%.6g %.6g \"%s\"\n", lx, ly, lab);
        }
        ffn__plot_clause(&pc,
                         "datafile index %d using 1:2:3 with labels left font \",8\" "
                         "tc rgb point_colour notitle",
                         idx);
        idx++;
    }

    if (by_device) {
        /* one label per workload, beside its highest point over all the devices */
        fprintf(data, "\n\n# [%d] point labels, one per workload (x y \"text\")\n", idx);
        bool any = false;
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *p = &c->pts[i];
            if (!(p->intensity > 0)) continue;
            bool seen = false;
            for (size_t k = 0; k < i && !seen; k++)
                seen = c->pts[k].intensity > 0 && !strcmp(c->pts[k].label, p->label);
            if (seen) continue;
            double x = p->intensity, v = 0;
            for (size_t k = i; k < c->n_pts; k++) {
                const ffn_plot_point *q = &c->pts[k];
                const double qv = q->measured_flops > 0 ? q->measured_flops : q->predicted_flops;
                if (strcmp(q->label, p->label) || !(q->intensity > 0) || !(qv > v)) continue;
                v = qv, x = q->intensity;
            }
            if (!(v > 0)) continue;
            ffn__plot_clean(lab, sizeof lab, p->label);
            const ffn__plot_box b =
                ffn__plot_place_label(taken, &n_taken, sizeof taken / sizeof taken[0], PX(x), PY(v),
                                      6.0 * (double)strlen(lab), 11, PL, PR, PB, PT);
            double lx = pow(10, lx0 + (b.x0 - PL) / (PR - PL) * (lx1 - lx0));
            double ly = pow(10, ly0 + ((b.y0 + b.y1) / 2 - PB) / (PT - PB) * (ly1 - ly0));
            fprintf(data, "%.6g %.6g \"%s\"\n", lx, ly, lab);
            any = true;
        }
        if (any) {
            ffn__plot_clause(&pc,
                             "datafile index %d using 1:2:3 with labels left font \",8\" "
                             "tc rgb point_colour notitle",
                             idx);
            idx++;
        } else {
            fputs("0 0 \"\"\n", data); /* keep the block, so the indices stay in step */
            idx++;
        }
    }

    /* ridge points: each compute roof against the slowest (main memory) roof, in its colour */
    bool ridge_titled = false;
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        const double bmain = ffn_plot_device_main_bw(dv), pmax = ffn__plot_device_max(dv, false);
        if (!(bmain > 0 && pmax > 0)) continue;
        ffn__plot_clean(name, sizeof name, dv->name);
        fprintf(data,
                "\n\n# [%d] %s: ridge points against %s (x = peak / bandwidth, y = peak, "
                "line type)\n",
                idx, name, ffn_units_str(buf, sizeof buf, bmain, FFN_UNIT_BPS));
        for (int r = 0; r < n_roofs; r++)
            if (roofs[r].dev == d && dv->ceil[roofs[r].ceil].kind == FFN_ROOF_COMPUTE)
                fprintf(data, "%.6g %.6g %d\n", dv->ceil[roofs[r].ceil].value / bmain,
                        dv->ceil[roofs[r].ceil].value, roofs[r].lt);
        if (ridge_titled)
            ffn__plot_clause(&pc,
                             "datafile index %d using 1:2:3 with points pt 12 ps 2 lw 1.5 "
                             "lc variable notitle",
                             idx);
        else
            ffn__plot_clause(&pc,
                             "datafile index %d using 1:2:3 with points pt 12 ps 2 lw 1.5 "
                             "lc variable title \"ridge points (against main memory)\"",
                             idx);
        ridge_titled = true;
        idx++;
    }

#undef PX
#undef PY
    return ffn__plot_end(data, script, template_text, f, c->title, xr, yr, NULL, &setup, &pc, diag);
}
