/* The roofline as small multiples (report/plot_internal.h, ffn__plot_roofline_grid_write): from
 * FFN_PLOT_GRID_MIN_DEVICES devices on, one chart holding every device's roofs and points stops
 * being readable (seven devices drew fourteen look-alike lines and a legend of thirty entries), so
 * each device gets a panel of its own in a gnuplot multiplot grid made from
 * plots/roofline-grid.gp.
 *
 * Every panel has the same log-log axes (set once in the template, never per panel), so panels
 * compare at a glance; it draws the roofs its device's points are measured against (the compute
 * roof of their dtype, main memory), the ridge point, the measured and predicted points and their
 * labels. The roofs' values stand in the panel's title, not as text on the lines; the one legend
 * explains the line and marker kinds, which look the same in every panel. Tick labels are written
 * on the outer panels only (the left column, the lowest panel of each column). The panels' places
 * are fixed here (the grid's margins and spacing in screen fractions) so that each label is put
 * where it covers no other label and no marker of its panel, as in plot_roofline.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/plot.h"
#include "ffnroof/units.h"
#include "plot_internal.h"

/* The grid's frame in pixels: room for the y tick labels and axis label (left), the chart's
 * title (top), the x tick labels, axis label and legend (bottom), and between panels the panel
 * titles (two lines) and the ticks. */
enum { LEFT_PX = 80, RIGHT_PX = 30, TOP_PX = 84, BOTTOM_PX = 96, GAP_X_PX = 44, GAP_Y_PX = 60 };
/* A panel's plot area when the caller leaves the image size to the chart. */
enum { PANEL_W_PX = 400, PANEL_H_PX = 260 };

void ffn_plot_grid_layout(int n, int *rows, int *cols)
{
    int c = 1;
    while (c * c < n)
        c++;
    *cols = c;
    *rows = (n + c - 1) / c;
}

/* The point label without its dtype when that is the panel's roof dtype (said in the title). */
static void short_label(char *dst, size_t n, const char *label, const char *roof_name)
{
    ffn__plot_clean(dst, n, label);
    char *sp = strrchr(dst, ' ');
    if (sp && sp != dst && roof_name && strstr(roof_name, sp + 1)) *sp = '\0';
}

int ffn__plot_roofline_grid_write(const ffn_roofline_chart *c, const char *template_text,
                                  const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    int keep_compute[FFN_PLOT_MAX_DEVICES], keep_bw[FFN_PLOT_MAX_DEVICES];
    ffn__plot_roofs_kept(c, keep_compute, keep_bw);
    double xr[2], yr[2];
    ffn__plot_roofline_axes(c, true, keep_compute, xr, yr);
    const double lx0 = log10(xr[0]), lx1 = log10(xr[1]), ly0 = log10(yr[0]), ly1 = log10(yr[1]);

    int rows, cols;
    ffn_plot_grid_layout(c->n_dev, &rows, &cols);
    ffn_plot_files fs = *f;
    if (fs.width <= 0 || fs.height <= 0) { /* an image sized for the grid */
        fs.width = LEFT_PX + RIGHT_PX + cols * PANEL_W_PX + (cols - 1) * GAP_X_PX;
        fs.height = TOP_PX + BOTTOM_PX + rows * PANEL_H_PX + (rows - 1) * GAP_Y_PX;
    }
    const double W = fs.width, H = fs.height;
    const double pw = (W - LEFT_PX - RIGHT_PX - (cols - 1) * GAP_X_PX) / cols;
    const double ph = (H - TOP_PX - BOTTOM_PX - (rows - 1) * GAP_Y_PX) / rows;

    ffn__membuf setup;
    ffn__plotcmd pc;
    int rc = ffn__plot_begin(&setup, &pc, diag);
    if (rc) return rc;
    const double mid = (LEFT_PX + (W - RIGHT_PX)) / 2 / W; /* the grid's middle */

    fprintf(data,
            "# ffnroof roofline data, one panel per device: x = arithmetic intensity "
            "(FLOP/byte), y = performance (FLOP/s)\n# chart: %s\n# axes (every panel): x "
            "[%g:%g], y [%g:%g]\n",
            c->title, xr[0], xr[1], yr[0], yr[1]);

    /* @PLOT@: the grid, then per panel its title, its tick labels and its plot command */
    FILE *p = pc.mb.fp;
    fprintf(p,
            "set multiplot layout %d,%d rowsfirst title chart_title font \",13\" \\\n"
            "    margins screen %.4f, screen %.4f, screen %.4f, screen %.4f \\\n"
            "    spacing screen %.4f, screen %.4f\n",
            rows, cols, LEFT_PX / W, 1 - RIGHT_PX / W, BOTTOM_PX / H, 1 - TOP_PX / H, GAP_X_PX / W,
            GAP_Y_PX / H);

    bool any_meas = false, any_pred = false, any_pair = false;
    for (size_t i = 0; i < c->n_pts; i++) {
        const ffn_plot_point *q = &c->pts[i];
        if (!(q->intensity > 0)) continue;
        any_meas |= q->measured_flops > 0;
        any_pred |= q->predicted_flops > 0;
        any_pair |= q->measured_flops > 0 && q->predicted_flops > 0;
    }
    /* The shared legend: a line or a marker and its text per kind, in one row under the grid
     * (two when it is too wide), drawn with the first panel. Labels and arrows, because a
     * gnuplot key is no wider than its panel. */
    const struct {
        bool on, line;
        const char *style, *text;
    } keys[] = {
        {true, true, "lc rgb compute_colour lw 2.5 dt 1",
         "compute roof (the dtype in the panel title)"},
        {true, true, "lc rgb memory_colour lw 2 dt 2", "memory roof (main memory)"},
        {true, false, "pt 12 ps 1.6 lw 1.5 lc rgb compute_colour", "ridge point"},
        {any_meas, false, "pt 7 ps 1.1 lc rgb point_colour", "measured"},
        {any_pred, false, "pt 6 ps 1.2 lc rgb point_colour", "predicted"},
        {any_pair, true, "lc rgb pair_colour lw 0.8 dt 3", "measured to predicted"},
    };
    const int n_keys = (int)(sizeof keys / sizeof keys[0]);
    double key_w[sizeof keys / sizeof keys[0]], row_w[2] = {0, 0};
    int key_row[sizeof keys / sizeof keys[0]];
    for (int k = 0; k < n_keys; k++) /* sample 30 px, text after 8 px, 28 px to the next */
        key_w[k] = keys[k].on ? 30 + 8 + 7.2 * (double)strlen(keys[k].text) + 28 : 0;
    for (int k = 0, row = 0; k < n_keys; k++) {
        if (row == 0 && row_w[0] + key_w[k] > W - LEFT_PX - RIGHT_PX) row = 1;
        key_row[k] = row;
        row_w[row] += key_w[k];
    }
    fputs("# the legend: the line and marker kinds, the same in every panel\n", p);
    double key_x[2] = {mid * W - row_w[0] / 2, mid * W - row_w[1] / 2};
    for (int k = 0, tag = 10; k < n_keys; k++) {
        if (!keys[k].on) continue;
        const int r = key_row[k];
        const double y = (row_w[1] > 0 && r == 0 ? 34 : 14) / H, x = key_x[r];
        if (keys[k].line)
            fprintf(p,
                    "set arrow %d from screen %.4f, screen %.4f to screen %.4f, screen %.4f "
                    "nohead %s\n",
                    tag, x / W, y, (x + 30) / W, y, keys[k].style);
        else
            fprintf(p, "set label %d \"\" at screen %.4f, screen %.4f point %s\n", tag,
                    (x + 15) / W, y, keys[k].style);
        fprintf(p, "set label %d \"%s\" at screen %.4f, screen %.4f left font \",10\"\n", tag + 1,
                keys[k].text, (x + 38) / W, y);
        key_x[r] += key_w[k];
        tag += 2;
    }

    /* the axes' names, once for the grid, above the legend */
    fprintf(p,
            "set label 1 \"Arithmetic intensity (FLOP/byte)\" at screen %.4f, screen %.4f "
            "center\n"
            "set label 2 \"Performance (FLOP/s)\" at screen %.4f, screen %.4f center rotate by "
            "90\n",
            mid, (row_w[1] > 0 ? 58 : 46) / H, 16 / W,
            (BOTTOM_PX + (H - TOP_PX - BOTTOM_PX) / 2) / H);

    static ffn__plot_box taken[3 * FFN_PLOT_MAX_POINTS];
    char name[80], cn[40], bn[40], lab[256], sub[192], b1[32], b2[32];
    int idx = 0;
    for (int d = 0; d < c->n_dev; d++) {
        const ffn_plot_device *dv = &c->dev[d];
        const ffn_plot_ceiling *ec = keep_compute[d] >= 0 ? &dv->ceil[keep_compute[d]] : NULL;
        const ffn_plot_ceiling *eb = keep_bw[d] >= 0 ? &dv->ceil[keep_bw[d]] : NULL;
        const int row = d / cols, col = d % cols;
        /* the panel's plot area in pixels, as the grid's margins and spacing place it */
        const double PL = LEFT_PX + col * (pw + GAP_X_PX), PR = PL + pw;
        const double PT = H - TOP_PX - row * (ph + GAP_Y_PX), PB = PT - ph;
#define PX(x) (PL + (log10(x) - lx0) / (lx1 - lx0) * (PR - PL))
#define PY(y) (PB + (log10(y) - ly0) / (ly1 - ly0) * (PT - PB))
        ffn__plot_clean(name, sizeof name, dv->name);
        fprintf(data, "\n# ==== panel %d: %s (%s)\n", d + 1, name, dv->origin);

        const double ridge = ec && eb ? ec->value / eb->value : NAN;
        /* the title: the name, then the roofs' values - shortened until they fit the panel */
        sub[0] = '\0';
        if (ec) ffn__plot_clean(cn, sizeof cn, ec->name);
        if (eb) ffn__plot_clean(bn, sizeof bn, eb->name);
        const char *peak = ec ? ffn_units_str(b1, sizeof b1, ec->value, FFN_UNIT_FLOPS) : NULL;
        const char *bw = eb ? ffn_units_str(b2, sizeof b2, eb->value, FFN_UNIT_BPS) : NULL;
        for (int form = 0; form < 3; form++) {
            if (ec && eb && form == 0)
                snprintf(sub, sizeof sub,
                         ridge >= 100 ? "%s %s, %s %s, ridge %.0f FLOP/B"
                                      : "%s %s, %s %s, ridge %.3g FLOP/B",
                         cn, peak, bn, bw, ridge);
            else if (ec && eb && form == 1)
                snprintf(sub, sizeof sub, "%s %s, %s %s", cn, peak, bn, bw);
            else if (form == 2 && (ec || eb))
                snprintf(sub, sizeof sub, "%s%s%s", ec ? peak : "", ec && eb ? ", " : "",
                         eb ? bw : "");
            else
                continue;
            if (6.6 * (double)strlen(sub) <= pw) break;
            sub[0] = '\0';
        }
        fprintf(p, "\n# panel %d: %s\n", d + 1, name);
        fprintf(p, "set title \"%s%s%s\" font \",10\"\n", name, sub[0] ? "\\n" : "", sub);
        /* tick labels on the outer panels: the left column, the lowest panel of each column */
        fprintf(p, "set format x %s\nset format y %s\n",
                d + cols >= c->n_dev ? "xtic_format" : "\"\"", col == 0 ? "ytic_format" : "\"\"");

        /* the roofs: compute from the ridge to the right edge, memory from the left to it */
        if (ec) {
            fprintf(data, "\n\n# [%d] %s: compute ceiling %s %s (x y per end)\n", idx, name, cn,
                    peak);
            fprintf(data, "%.6g %.6g\n%.6g %.6g\n", eb ? ridge : xr[0], ec->value, xr[1],
                    ec->value);
            ffn__plot_clause(&pc,
                             "datafile index %d with lines lc rgb compute_colour lw 2.5 dt 1 "
                             "notitle",
                             idx++);
        }
        if (eb) {
            const double x1 = ec ? ridge : xr[1];
            fprintf(data, "\n\n# [%d] %s: bandwidth ceiling %s %s, %s (x y per end)\n", idx, name,
                    bn, bw, ffn_roof_kind_name(eb->kind));
            fprintf(data, "%.6g %.6g\n%.6g %.6g\n", xr[0], eb->value * xr[0], x1, eb->value * x1);
            ffn__plot_clause(
                &pc, "datafile index %d with lines lc rgb memory_colour lw 2 dt 2 notitle", idx++);
        }

        /* the points: the pairs joining measured and predicted, measured filled, predicted open */
        size_t nm = 0, np = 0, npair = 0, n_taken = 0;
        for (size_t i = 0; i < c->n_pts; i++) {
            const ffn_plot_point *q = &c->pts[i];
            if (q->device != d || !(q->intensity > 0)) continue;
            nm += q->measured_flops > 0;
            np += q->predicted_flops > 0;
            npair += q->measured_flops > 0 && q->predicted_flops > 0;
            const double v[2] = {q->measured_flops, q->predicted_flops};
            for (int k = 0; k < 2; k++) /* every marker is an obstacle to the labels */
                if (v[k] > 0 && n_taken < sizeof taken / sizeof taken[0]) {
                    const double x = PX(q->intensity), y = PY(v[k]);
                    taken[n_taken++] = (ffn__plot_box){x - 6, y - 6, x + 6, y + 6};
                }
        }
        if (ec && eb) {
            const double x = PX(ridge), y = PY(ec->value);
            taken[n_taken++] = (ffn__plot_box){x - 8, y - 8, x + 8, y + 8};
        }
        /* and so are the roofs, as a chain of small boxes every 8 pixels along each line */
        const size_t cap = sizeof taken / sizeof taken[0];
        if (ec)
            for (double x = eb ? PX(ridge) : PL; x <= PR && n_taken < cap; x += 8)
                taken[n_taken++] =
                    (ffn__plot_box){x - 4, PY(ec->value) - 3, x + 4, PY(ec->value) + 3};
        if (eb)
            for (double x = PL; x <= (ec ? PX(ridge) : PR) && n_taken < cap; x += 8) {
                const double y = PY(eb->value * pow(10, lx0 + (x - PL) / (PR - PL) * (lx1 - lx0)));
                if (y >= PB && y <= PT)
                    taken[n_taken++] = (ffn__plot_box){x - 4, y - 3, x + 4, y + 3};
            }
        if (npair) {
            fprintf(data, "\n\n# [%d] %s: measured -> predicted (one pair per line)\n", idx, name);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *q = &c->pts[i];
                if (q->device != d || !(q->intensity > 0) || !(q->measured_flops > 0) ||
                    !(q->predicted_flops > 0))
                    continue;
                fprintf(data, "%.6g %.6g\n%.6g %.6g\n\n", q->intensity, q->measured_flops,
                        q->intensity, q->predicted_flops);
            }
            ffn__plot_clause(
                &pc, "datafile index %d with lines lw 0.8 dt 3 lc rgb pair_colour notitle", idx++);
        }
        for (int pred = 0; pred < 2; pred++) {
            if (!(pred ? np : nm)) continue;
            const char *what = pred ? "predicted" : "measured";
            fprintf(data, "\n\n# [%d] %s: %s points (intensity FLOP/B, FLOP/s, \"label\")\n", idx,
                    name, what);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *q = &c->pts[i];
                const double v = pred ? q->predicted_flops : q->measured_flops;
                if (q->device != d || !(q->intensity > 0) || !(v > 0)) continue;
                ffn__plot_clean(lab, sizeof lab, q->label);
                fprintf(data, "%.6g %.6g \"%s\"\n", q->intensity, v, lab);
            }
            ffn__plot_clause(&pc,
                             "datafile index %d using 1:2 with points pt %d ps %s "
                             "lc rgb point_colour notitle",
                             idx++, pred ? 6 : 7, pred ? "1.2" : "1.1");
        }
        /* one label per point (the measured one, its prediction beside it), without the dtype
         * the title already names */
        if (nm || np) {
            fprintf(data,
                    "\n\n# [%d] %s: point labels (x y \"text\", placed clear of each other)\n", idx,
                    name);
            for (size_t i = 0; i < c->n_pts; i++) {
                const ffn_plot_point *q = &c->pts[i];
                if (q->device != d || !(q->intensity > 0)) continue;
                const double v = q->measured_flops > 0 ? q->measured_flops : q->predicted_flops;
                if (!(v > 0)) continue;
                short_label(lab, sizeof lab, q->label, ec ? ec->name : NULL);
                const ffn__plot_box b = ffn__plot_place_label(
                    taken, &n_taken, sizeof taken / sizeof taken[0], PX(q->intensity), PY(v),
                    5.6 * (double)strlen(lab), 10, PL, PR, PB, PT);
                /* back to data coordinates: the text's left end, centred vertically */
                const double lx = pow(10, lx0 + (b.x0 - PL) / (PR - PL) * (lx1 - lx0));
                const double ly = pow(10, ly0 + ((b.y0 + b.y1) / 2 - PB) / (PT - PB) * (ly1 - ly0));
                fprintf(data, "%.6g %.6g \"%s\"\n", lx, ly, lab);
            }
            ffn__plot_clause(&pc,
                             "datafile index %d using 1:2:3 with labels left font \",8\" "
                             "tc rgb point_colour notitle",
                             idx++);
        }
        if (ec && eb) {
            fprintf(data,
                    "\n\n# [%d] %s: ridge point against %s (x = peak / bandwidth, y = peak)\n", idx,
                    name, bw);
            fprintf(data, "%.6g %.6g\n", ridge, ec->value);
            ffn__plot_clause(&pc,
                             "datafile index %d with points pt 12 ps 1.6 lw 1.5 lc rgb "
                             "compute_colour notitle",
                             idx++);
        }
#undef PX
#undef PY
        /* end this panel's plot command (a panel with nothing to draw stays empty); the next
         * panel starts its own */
        fputs(pc.n ? "\n" : "set multiplot next\n", p);
        if (d == 0) fputs("unset label\nunset arrow\n", p);
        pc.n = 0;
    }
    fputs("unset multiplot", p);
    return ffn__plot_end(data, script, template_text, &fs, c->title, xr, yr, NULL, &setup, &pc,
                         diag);
}
