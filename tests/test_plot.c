/* Chart data and gnuplot scripts (include/ffnroof/plot.h): for known charts the data file and
 * the script are compared with golden files in tests/data/plot/ AND their numbers are checked
 * against the geometry computed here (ceiling ends, ridge points, axis ranges, label places,
 * MoE bars and their totals);
 * the readers of calibration.json and bench.json (docs/formats-bench.md) on fixtures, including
 * files of another kind or version. FFNROOF_UPDATE_GOLDEN=1 rewrites the golden files. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/plot.h"
#include "ffnroof/units.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"

#define DATA FFNROOF_TEST_DATA "/plot/"

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t r = fread(buf, 1, (size_t)n, fp);
    buf[r] = '\0';
    fclose(fp);
    return buf;
}

static char *template_of(const char *kind)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plots/%s.gp", FFNROOF_SOURCE_DIR, kind);
    char *t = slurp(path);
    cr_assert_not_null(t, "template %s", path);
    return t;
}

/* Compare text with a golden file (or rewrite it when FFNROOF_UPDATE_GOLDEN is set). */
static void golden(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, DATA "%s", name);
    if (getenv("FFNROOF_UPDATE_GOLDEN")) {
        FILE *fp = fopen(path, "wb");
        cr_assert_not_null(fp);
        fputs(text, fp);
        fclose(fp);
    }
    char *want = slurp(path);
    cr_assert_not_null(want, "golden file %s missing (FFNROOF_UPDATE_GOLDEN=1 writes it)", path);
    cr_expect_str_eq(text, want, "%s differs from the golden file", name);
    free(want);
}

typedef struct outputs {
    char *data, *script;
    size_t dlen, slen;
    FILE *d, *s;
} outputs;

static void out_open(outputs *o)
{
    memset(o, 0, sizeof *o);
    o->d = open_memstream(&o->data, &o->dlen);
    o->s = open_memstream(&o->script, &o->slen);
    cr_assert(o->d && o->s);
}

static void out_close(outputs *o)
{
    fclose(o->d);
    fclose(o->s);
}

static void out_free(outputs *o)
{
    free(o->data);
    free(o->script);
}

/* The rows (numbers) of block [idx] of a data file: up to cap rows of ncol numbers. */
static int block_rows(const char *data, int idx, double rows[][2], int cap)
{
    char tag[32];
    snprintf(tag, sizeof tag, "# [%d] ", idx);
    const char *p = strstr(data, tag);
    cr_assert_not_null(p, "block %d missing", idx);
    p = strchr(p, '\n') + 1;
    int n = 0;
    while (*p && *p != '#' && n < cap) {
        if (*p == '\n') {
            if (p[1] == '\n') break; /* two blank lines: next block */
            p++;
            continue;
        }
        double x, y;
        if (sscanf(p, "%lf %lf", &x, &y) == 2) {
            rows[n][0] = x;
            rows[n][1] = y;
            n++;
        }
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
    return n;
}

static void close_to(double got, double want, const char *what)
{
    cr_expect(fabs(got - want) <= 1e-5 * fabs(want), "%s: got %.9g, want %.9g", what, got, want);
}

static const ffn_plot_files files = {.data = "t.dat",
                                     .png = "t.png",
                                     .svg = "t.svg",
                                     .png_term = "pngcairo",
                                     .width = 800,
                                     .height = 600};

/* A device with known ceilings: fp32 1 TFLOP/s, bf16 4 TFLOP/s; read-only L2 400 GB/s and DRAM
 * 100 GB/s; read-write DRAM 80 GB/s. Two kernel points. */
static void fixture_roofline(ffn_roofline_chart *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->title, sizeof c->title, "Roofline: test device (2025-01-31)");
    ffn_plot_device *d = &c->dev[0];
    snprintf(d->name, sizeof d->name, "testdev");
    snprintf(d->origin, sizeof d->origin, "test");
    cr_assert_eq(ffn_plot_device_add(d, "fp32", FFN_ROOF_COMPUTE, 1e12), 0);
    cr_assert_eq(ffn_plot_device_add(d, "bf16", FFN_ROOF_COMPUTE, 4e12), 0);
    cr_assert_eq(ffn_plot_device_add(d, "L2", FFN_ROOF_READ_ONLY, 4e11), 0);
    cr_assert_eq(ffn_plot_device_add(d, "DRAM", FFN_ROOF_READ_ONLY, 1e11), 0);
    cr_assert_eq(ffn_plot_device_add(d, "DRAM", FFN_ROOF_READ_WRITE, 8e10), 0);
    cr_assert_eq(ffn_plot_device_add(d, "bad", FFN_ROOF_COMPUTE, NAN), FFN_EINVAL);
    c->n_dev = 1;
    c->pts[0] = (ffn_plot_point){0, "decode T=1 fp32", 0.5, 4e10, 5e10};
    c->pts[1] = (ffn_plot_point){0, "prefill T=512 fp32", 100, 8e11, 9e11};
    c->n_pts = 2;
}

Test(plot, roofline_golden_and_geometry)
{
    static ffn_roofline_chart c;
    fixture_roofline(&c);
    cr_expect_eq(ffn_plot_device_main_bw(&c.dev[0]), 1e11, "the slowest read-only roof");
    char *t = template_of("roofline");
    outputs o;
    out_open(&o);
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, &d), 0, "%s", d.msg);
    out_close(&o);
    golden("roofline.dat", o.data);
    golden("roofline.gp", o.script);

    /* axes: x from the lowest ridge on the fastest roof / 30 (1e12/4e11/30 = 0.083) down to its
     * decade, up to 4 x the highest ridge (4e12/1e11 x 4 = 160) -> [0.01:1000] */
    cr_expect(strstr(o.data, "# axes: x [0.01:1000]"), "x axis decades");
    cr_expect(strstr(o.script, "set xrange [0.01:1000]"));
    /* one block per ceiling, highest first: compute from where the fastest roof (L2) meets
     * it to xmax, bandwidth from xmin up to the highest compute ceiling */
    double r[16][2];
    int n = block_rows(o.data, 0, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[0][0], 4e12 / 4e11, "bf16 ceiling start");
    close_to(r[0][1], 4e12, "bf16 ceiling");
    close_to(r[1][0], 1000, "bf16 ceiling end");
    n = block_rows(o.data, 1, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[0][0], 1e12 / 4e11, "fp32 ceiling start");
    close_to(r[1][1], 1e12, "fp32 ceiling");
    n = block_rows(o.data, 2, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[0][1], 4e11 * 0.01, "L2 at xmin");
    close_to(r[1][0], 4e12 / 4e11, "L2 meets bf16");
    close_to(r[1][1], 4e12, "L2 meets bf16 (y)");
    n = block_rows(o.data, 3, r, 16);
    close_to(r[1][0], 4e12 / 1e11, "DRAM meets bf16");
    n = block_rows(o.data, 4, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[1][0], 4e12 / 8e10, "read-write DRAM meets bf16");
    /* a colour per ceiling, the same for one memory level read-only and read-write (dotted),
     * and the legend names each with its value, the kind of roof and the ridge */
    cr_expect(strstr(o.script, "index 0 with lines lt 2 lw 2.5 dt 1 title \"bf16 4.00 TFLOP/s, "
                               "ridge 40 FLOP/B\""));
    cr_expect(strstr(o.script, "index 1 with lines lt 1 lw 2.5 dt 1 title \"fp32 1.00 TFLOP/s, "
                               "ridge 10 FLOP/B\""));
    cr_expect(strstr(o.script, "index 2 with lines lt 3 lw 2 dt 1 title \"L2 400 GB/s, "
                               "read-only\""));
    cr_expect(strstr(o.script, "index 3 with lines lt 4 lw 2 dt 1 title \"DRAM 100 GB/s, "
                               "read-only\""));
    cr_expect(strstr(o.script, "index 4 with lines lt 4 lw 2.5 dt 3 title \"DRAM 80.0 GB/s, "
                               "read-write\""));
    /* the pairs joining measured and predicted, the points, then their labels */
    n = block_rows(o.data, 5, r, 16);
    cr_assert_eq(n, 4);
    close_to(r[2][0], 100, "pair x");
    close_to(r[3][1], 9e11, "pair ends at the prediction");
    n = block_rows(o.data, 6, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[1][1], 8e11, "measured prefill");
    n = block_rows(o.data, 7, r, 16);
    close_to(r[0][1], 5e10, "predicted decode");
    /* the labels: one per measured point, clear of every marker and of each other */
    n = block_rows(o.data, 8, r, 16);
    cr_assert_eq(n, 2);
    cr_expect(strstr(o.data, "\"decode T=1 fp32\"") && strstr(o.data, "\"prefill T=512 fp32\""));
    cr_expect(r[0][0] > 0.5, "the decode label starts right of its point");
    cr_expect(r[1][0] < 100 && r[1][1] < 8e11, "at the right edge, the prefill label goes left");
    cr_expect(strstr(o.script, "set rmargin at screen") && strstr(o.script, "set key at screen"),
              "the plot area the labels were placed for");
    /* ridge points against DRAM read-only (100 GB/s), in their ceiling's colour */
    n = block_rows(o.data, 9, r, 16);
    cr_assert_eq(n, 2);
    close_to(r[0][0], 40, "bf16 ridge x");
    close_to(r[0][1], 4e12, "bf16 ridge y");
    close_to(r[1][0], 10, "fp32 ridge x");
    cr_expect(strstr(o.data, "40 4e+12 2\n10 1e+12 1\n"), "ridge colours");
    /* the script: template filled, both images, title */
    cr_expect(strstr(o.script, "set terminal pngcairo noenhanced size 800,600"));
    cr_expect(strstr(o.script, "png_file = \"t.png\""));
    cr_expect(strstr(o.script, "svg_file = \"t.svg\""));
    cr_expect(strstr(o.script, "datafile = \"t.dat\""));
    cr_expect(strstr(o.script, "set title \"Roofline: test device (2025-01-31)\""));
    cr_expect(!strstr(o.script, "@PLOT@") && !strstr(o.script, "@TITLE@"), "placeholders left");
    out_free(&o);
    free(t);
}

Test(plot, roofline_quotes_in_titles_and_labels_are_neutralised)
{
    static ffn_roofline_chart c;
    fixture_roofline(&c);
    snprintf(c.title, sizeof c.title, "a \"quoted\" \\ title");
    snprintf(c.pts[0].label, sizeof c.pts[0].label, "x\"y");
    char *t = template_of("roofline");
    outputs o;
    out_open(&o);
    cr_assert_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, NULL), 0);
    out_close(&o);
    cr_expect(strstr(o.script, "set title \"a 'quoted' / title\""));
    cr_expect(strstr(o.data, "\"x'y\""));
    out_free(&o);
    free(t);
}

Test(plot, several_devices_get_their_own_dash_and_legend_header)
{
    static ffn_roofline_chart c;
    fixture_roofline(&c);
    ffn_plot_device *d = &c.dev[1];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "other");
    ffn_plot_device_add(d, "fp16", FFN_ROOF_COMPUTE, 1e15);
    ffn_plot_device_add(d, "HBM", FFN_ROOF_DATASHEET, 3e12);
    c.n_dev = 2;
    char *t = template_of("roofline");
    outputs o;
    out_open(&o);
    cr_assert_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, NULL), 0);
    out_close(&o);
    /* a legend header per device with its dash, ceilings of the same name in one colour */
    cr_expect(
        strstr(o.script, "keyentry with lines lc rgb point_colour lw 2 dt 1 title \"testdev\""));
    cr_expect(
        strstr(o.script, "keyentry with lines lc rgb point_colour lw 2 dt 2 title \"other\""));
    cr_expect(strstr(o.script, "with lines lt 3 lw 2.5 dt 2 title \"fp16 1.00 PFLOP/s, ridge 333 "
                               "FLOP/B\""),
              "%s", o.script);
    cr_expect(strstr(o.script, "lw 2 dt 2 title \"HBM 3.00 TB/s, datasheet peak\""));
    cr_expect(strstr(o.data, "other: bandwidth ceiling HBM 3.00 TB/s, datasheet peak"));
    cr_expect(strstr(o.data, "testdev: bandwidth ceiling L2 400 GB/s, read-only"));
    /* the y axis reaches above the fastest device's peak */
    cr_expect(strstr(o.script, "set yrange [1e+09:1e+16]"), "%s", strstr(o.script, "set yrange"));
    out_free(&o);
    free(t);
}

/* Three devices or more: one colour per device and, of each, only the compute roof of its
 * points' dtype and main memory; one label per workload over all the devices, not one per point
 * (the labels of six devices piled up on one another). */
Test(plot, many_devices_are_drawn_by_device)
{
    static ffn_roofline_chart c;
    memset(&c, 0, sizeof c);
    snprintf(c.title, sizeof c.title, "many");
    const double hbm[3] = {2e12, 3e12, 5e12};
    for (int d = 0; d < 3; d++) {
        ffn_plot_device *dv = &c.dev[d];
        snprintf(dv->name, sizeof dv->name, "dev%d", d);
        ffn_plot_device_add(dv, "fp8", FFN_ROOF_COMPUTE, 2e15 * (d + 1));
        ffn_plot_device_add(dv, "bf16/fp16", FFN_ROOF_COMPUTE, 1e15 * (d + 1));
        ffn_plot_device_add(dv, "fp32", FFN_ROOF_COMPUTE, 6e13);
        ffn_plot_device_add(dv, "L2", FFN_ROOF_READ_ONLY, 1e13);
        ffn_plot_device_add(dv, "HBM", FFN_ROOF_DATASHEET, hbm[d]);
        for (int k = 0; k < 2; k++) {
            ffn_plot_point *p = &c.pts[c.n_pts++];
            p->device = d;
            snprintf(p->label, sizeof p->label, k ? "decode T=1 bf16" : "prefill T=512 bf16");
            p->intensity = k ? 1 : 400;
            p->measured_flops = NAN;
            p->predicted_flops = k ? hbm[d] * 0.8 : 0.5e15 * (d + 1);
        }
    }
    c.n_dev = 3;
    char *t = template_of("roofline");
    outputs o;
    out_open(&o);
    cr_assert_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, NULL), 0);
    out_close(&o);
    for (int d = 0; d < 3; d++) {
        char want[96];
        snprintf(want, sizeof want, "keyentry with points pt 7 ps 1.3 lt %d title \"dev%d\"", d + 1,
                 d);
        cr_expect(strstr(o.script, want), "no header %s in %s", want, o.script);
    }
    /* the bf16 roof (the points' dtype), not the faster fp8 one; main memory, not the L2 */
    cr_expect(strstr(o.script, "title \"  bf16/fp16 1.00 PFLOP/s, ridge 500 FLOP/B\""), "%s",
              o.script);
    cr_expect(strstr(o.script, "title \"  HBM 2.00 TB/s, datasheet peak\""), "%s", o.script);
    cr_expect_null(strstr(o.script, "fp8 2.00 PFLOP/s"), "%s", o.script);
    cr_expect_null(strstr(o.data, "L2 10.0 TB/s"));
    cr_expect_null(strstr(o.data, "fp32"));
    /* one label per workload: two, not six */
    const char *labels = strstr(o.data, "point labels, one per workload");
    cr_assert_not_null(labels, "%s", o.data);
    int n = 0;
    for (const char *q = strstr(labels, "\n") + 1; *q && *q != '\n'; q = strchr(q, '\n') + 1)
        n++;
    cr_expect_eq(n, 2, "%s", labels);
    /* the top of the chart: the fastest roof drawn (bf16 3 PFLOP/s x 2.5), not fp8's 6 x 2.5 */
    cr_expect(strstr(o.script, ":1e+16]\nset xlabel"), "%s", strstr(o.script, "set yrange"));
    out_free(&o);
    free(t);
}

/* n devices like those of a comparison: fp8 above bf16 (the points' dtype), an L2 above HBM, two
 * whole-FFN points each (device 0's decode point also measured). */
static void fixture_devices(ffn_roofline_chart *c, int n)
{
    memset(c, 0, sizeof *c);
    snprintf(c->title, sizeof c->title, "grid of %d", n);
    for (int d = 0; d < n; d++) {
        ffn_plot_device *dv = &c->dev[d];
        snprintf(dv->name, sizeof dv->name, "dev%d", d);
        snprintf(dv->origin, sizeof dv->origin, "datasheet");
        ffn_plot_device_add(dv, "fp8", FFN_ROOF_COMPUTE, 2e15 * (d + 1));
        ffn_plot_device_add(dv, "bf16/fp16", FFN_ROOF_COMPUTE, 1e15 * (d + 1));
        ffn_plot_device_add(dv, "L2", FFN_ROOF_READ_ONLY, 5e13);
        ffn_plot_device_add(dv, "HBM", FFN_ROOF_DATASHEET, 1e12 * (d + 1));
        for (int k = 0; k < 2; k++) {
            ffn_plot_point *p = &c->pts[c->n_pts++];
            p->device = d;
            snprintf(p->label, sizeof p->label, k ? "decode T=1 bf16" : "prefill T=512 bf16");
            p->intensity = k ? 1 : 400;
            p->measured_flops = d == 0 && k ? 0.7e12 : NAN;
            p->predicted_flops = k ? 0.8e12 * (d + 1) : 0.5e15 * (d + 1);
        }
    }
    c->n_dev = n;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *q = strstr(text, what); q; q = strstr(q + 1, what))
        n++;
    return n;
}

/* From five devices on: one panel per device in a multiplot grid of the documented shape, every
 * panel on the one pair of axis ranges the template sets (no panel sets its own), each with its
 * device's bf16 roof and HBM, ridge point and points, its title naming the device and its roofs,
 * and one legend of the kinds. */
Test(plot, five_devices_or_more_are_small_multiples_on_one_pair_of_axes)
{
    static const struct {
        int n, rows, cols;
    } grids[] = {{5, 2, 3}, {6, 2, 3}, {7, 3, 3}, {9, 3, 3}, {10, 3, 4}, {12, 3, 4}};
    char *t = template_of("roofline-grid");
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        const int n = grids[g].n;
        int rows, cols;
        ffn_plot_grid_layout(n, &rows, &cols);
        cr_expect(rows == grids[g].rows && cols == grids[g].cols, "%d devices: %dx%d", n, rows,
                  cols);
        static ffn_roofline_chart c;
        fixture_devices(&c, n);
        cr_expect_str_eq(ffn_plot_roofline_template(&c), "roofline-grid.gp");
        outputs o;
        out_open(&o);
        ffn_diag d;
        ffn_diag_clear(&d);
        /* no size asked for: an image sized for the grid, 400 x 260 pixels a panel */
        ffn_plot_files fs = files;
        fs.width = fs.height = 0;
        cr_assert_eq(ffn_plot_roofline_write(&c, t, &fs, o.d, o.s, &d), 0, "%s", d.msg);
        out_close(&o);
        char want[160];
        snprintf(want, sizeof want, "size %d,%d", 80 + 30 + cols * 400 + (cols - 1) * 44,
                 84 + 96 + rows * 260 + (rows - 1) * 60);
        cr_expect(strstr(o.script, want), "%d devices: %s", n, want);
        snprintf(want, sizeof want, "set multiplot layout %d,%d rowsfirst title chart_title",
                 grids[g].rows, grids[g].cols);
        cr_expect(strstr(o.script, want), "%d devices: no '%s'", n, want);
        cr_expect_eq(count(o.script, "\nplot "), n, "%d devices: one plot command per panel", n);
        cr_expect_eq(count(o.script, "\n# panel "), n);
        cr_expect_eq(count(o.script, "unset multiplot"), 1);
        /* one pair of ranges, set once by the template: as wide as every device needs (x from
         * the decode points / 3 to 4 x the fp8 ridges on HBM, 8000; y from HBM at the left edge
         * to the fastest bf16 roof x 2.5) */
        cr_expect_eq(count(o.script, "set xrange"), 1, "%d devices", n);
        cr_expect_eq(count(o.script, "set yrange"), 1, "%d devices", n);
        cr_expect(strstr(o.script, "set xrange [0.1:10000]"), "%s", strstr(o.script, "set xrange"));
        cr_expect(strstr(o.script, "set yrange [1e+11:1e+17]"), "%s",
                  strstr(o.script, "set yrange"));
        cr_expect_null(strstr(o.script, "plot ["), "a panel with its own ranges");
        cr_expect_null(strstr(o.script, "set size"), "a panel of another size");
        cr_expect_null(strstr(o.script, "@PLOT@"));
        /* the legend once, of the kinds (a device's name in it would be a colour list) */
        cr_expect_eq(count(o.script, "\"compute roof (the dtype in the panel title)\""), 1);
        cr_expect_eq(count(o.script, "\"measured to predicted\""), 1, "device 0 has a pair");
        cr_expect_null(strstr(o.script, "keyentry"));
        for (int i = 0; i < n; i++) {
            /* the title: the device, its roofs with their values, its ridge */
            char v[2][32];
            ffn_units_str(v[0], sizeof v[0], 1e15 * (i + 1), FFN_UNIT_FLOPS);
            ffn_units_str(v[1], sizeof v[1], 1e12 * (i + 1), FFN_UNIT_BPS);
            snprintf(want, sizeof want,
                     "set title \"dev%d\\nbf16/fp16 %s, HBM %s, ridge 1000 FLOP/B\"", i, v[0],
                     v[1]);
            const char *at = strstr(o.script, want);
            cr_expect(at, "%d devices: no '%s' in %s", n, want, o.script);
            if (!at) continue;
            /* tick labels on the outer panels only */
            const char *fmt = at ? strstr(at, "set format x ") : NULL;
            cr_assert_not_null(fmt);
            const bool lowest = i + grids[g].cols >= n, left = i % grids[g].cols == 0;
            cr_expect(!strncmp(fmt + 13, lowest ? "xtic_format" : "\"\"", lowest ? 11 : 2),
                      "%d devices, panel %d: x tick labels", n, i);
            fmt = strstr(fmt, "set format y ");
            cr_expect(!strncmp(fmt + 13, left ? "ytic_format" : "\"\"", left ? 11 : 2),
                      "%d devices, panel %d: y tick labels", n, i);
        }
        /* each panel's roofs: bf16 (the points' dtype, not fp8) from its ridge on HBM, HBM
         * (main memory, not the L2) from the left edge up to it; its ridge point */
        for (int i = 0; i < n; i++) {
            snprintf(want, sizeof want, "dev%d: compute ceiling bf16/fp16", i);
            const char *b = strstr(o.data, want);
            cr_assert_not_null(b, "%s", want);
            double x0, y0, x1, y1;
            cr_assert_eq(sscanf(strchr(b, '\n') + 1, "%lf %lf %lf %lf", &x0, &y0, &x1, &y1), 4);
            close_to(x0, 1000, "bf16 starts at the HBM ridge");
            close_to(y0, 1e15 * (i + 1), "bf16 roof");
            close_to(x1, 10000, "to the right edge");
            snprintf(want, sizeof want, "dev%d: bandwidth ceiling HBM", i);
            b = strstr(o.data, want);
            cr_assert_not_null(b, "%s", want);
            cr_assert_eq(sscanf(strchr(b, '\n') + 1, "%lf %lf %lf %lf", &x0, &y0, &x1, &y1), 4);
            close_to(x0, 0.1, "HBM from the left edge");
            close_to(y1, 1e15 * (i + 1), "HBM meets bf16");
            snprintf(want, sizeof want, "dev%d: ridge point", i);
            cr_expect(strstr(o.data, want), "%s", want);
            snprintf(want, sizeof want, "dev%d: predicted points", i);
            cr_expect(strstr(o.data, want), "%s", want);
        }
        cr_expect_null(strstr(o.data, "fp8"), "only the points' dtype is drawn");
        cr_expect_null(strstr(o.data, "L2"), "only main memory is drawn");
        /* labels without the dtype the title names */
        const char *lb = strstr(o.data, "dev0: point labels");
        cr_assert_not_null(lb);
        const char *end = strstr(lb, "# [");
        cr_expect(strstr(lb, "\"decode T=1\"") && strstr(lb, "\"decode T=1\"") < end);
        cr_expect(!strstr(lb, "bf16") || strstr(lb, "bf16") > end, "%.200s", lb);
        out_free(&o);
    }
    free(t);
}

/* Up to four devices the roofline stays one chart, from plots/roofline.gp. */
Test(plot, four_devices_or_fewer_share_one_chart)
{
    char *t = template_of("roofline");
    for (int n = 1; n <= 4; n++) {
        static ffn_roofline_chart c;
        fixture_devices(&c, n);
        cr_expect_str_eq(ffn_plot_roofline_template(&c), "roofline.gp");
        outputs o;
        out_open(&o);
        cr_assert_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, NULL), 0);
        out_close(&o);
        cr_expect_null(strstr(o.script, "multiplot"), "%d devices", n);
        cr_expect_eq(count(o.script, "\nplot "), 1, "%d devices", n);
        cr_expect(strstr(o.script, "\nreplot\n"));
        out_free(&o);
    }
    free(t);
}

/* Small multiples refuse what one chart refuses: devices without a single ceiling. */
Test(plot, small_multiples_without_ceilings_are_refused)
{
    static ffn_roofline_chart c;
    fixture_devices(&c, 6);
    for (int d = 0; d < c.n_dev; d++)
        c.dev[d].n_ceil = 0;
    char *t = template_of("roofline-grid");
    outputs o;
    out_open(&o);
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_plot_roofline_write(&c, t, &files, o.d, o.s, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "nothing to draw"), "%s", d.msg);
    out_close(&o);
    out_free(&o);
    free(t);
}

Test(plot, latency_golden_and_values)
{
    static ffn_latency_chart c;
    memset(&c, 0, sizeof c);
    snprintf(c.title, sizeof c.title, "FFN latency per layer: test (2025-01-31)");
    snprintf(c.device[0], sizeof c.device[0], "testdev");
    c.ridge_tokens[0] = 300;
    c.n_dev = 1;
    ffn_latency_series *p = &c.s[0], *dd = &c.s[1], *m = &c.s[2];
    snprintf(p->label, sizeof p->label, "testdev prefill, predicted");
    p->phase = FFN_PHASE_PREFILL;
    snprintf(dd->label, sizeof dd->label, "testdev decode, predicted");
    dd->phase = FFN_PHASE_DECODE;
    snprintf(m->label, sizeof m->label, "testdev decode, measured");
    m->phase = FFN_PHASE_DECODE;
    m->measured = true;
    for (int i = 0; i < 4; i++) {
        double T = pow(4, i);
        dd->tokens[i] = T;
        dd->seconds[i] = 1e-4 * fmax(1, T / 300);
        p->tokens[i] = 256 * T;
        p->seconds[i] = 1e-4 * fmax(1, 256 * T / 300);
    }
    dd->n = p->n = 4;
    m->tokens[0] = 1, m->seconds[0] = 1.3e-4, m->n = 1;
    c.n_series = 3;
    char *t = template_of("latency");
    outputs o;
    out_open(&o);
    cr_assert_eq(ffn_plot_latency_write(&c, t, &files, o.d, o.s, NULL), 0);
    out_close(&o);
    golden("latency.dat", o.data);
    golden("latency.gp", o.script);
    /* x: 1 / 1.5 .. 16384 x 1.5 -> decades [0.1:100000]; y: 1e-4/1.5 .. 0.0054 x 1.5 */
    cr_expect(strstr(o.script, "set xrange [0.1:100000]"));
    cr_expect(strstr(o.script, "set yrange [1e-05:0.01]"));
    double r[8][2];
    cr_assert_eq(block_rows(o.data, 0, r, 8), 4);
    close_to(r[3][0], 256 * 64, "prefill tokens");
    close_to(r[3][1], 1e-4 * 256 * 64 / 300, "prefill time");
    /* the ridge: a vertical line at 300 tokens across the whole y range */
    cr_assert_eq(block_rows(o.data, 3, r, 8), 2);
    close_to(r[0][0], 300, "ridge x");
    close_to(r[0][1], 1e-5, "ridge from ymin");
    close_to(r[1][1], 0.01, "ridge to ymax");
    cr_expect(strstr(o.script, "title \"testdev ridge (300 tokens)\""));
    /* decode dashed with open points, measured as filled points */
    cr_expect(strstr(o.script, "index 1 with linespoints lt 1 dt 2 pt 8"));
    cr_expect(strstr(o.script, "index 2 with points lt 1 pt 9"));
    out_free(&o);
    free(t);
}

Test(plot, moe_golden_shares_above_totals_below)
{
    static ffn_moe_chart c;
    memset(&c, 0, sizeof c);
    snprintf(c.title, sizeof c.title, "MoE layer time: test (2025-01-31)");
    snprintf(c.xlabel, sizeof c.xlabel, "expert-parallel degree");
    for (int i = 0; i < 3; i++) {
        ffn_moe_bar *b = &c.bars[i];
        snprintf(b->label, sizeof b->label, "EP %d", 1 << i);
        b->router_s = 1e-6;
        b->dispatch_s = 2e-6;
        b->expert_s = 8e-5 / (1 << i);
        b->combine_s = 2e-6;
        b->alltoall_s = i ? 1e-5 * i : 0;
    }
    c.n_bars = 3;
    char *t = template_of("moe");
    outputs o;
    out_open(&o);
    cr_assert_eq(ffn_plot_moe_write(&c, t, &files, o.d, o.s, NULL), 0);
    out_close(&o);
    golden("moe.dat", o.data);
    golden("moe.gp", o.script);
    /* the parts, their sum as number and text, the bar's x and tick, then the shares stacked:
     * 1/45, 3/45, 23/45, 23/45, 25/45, 45/45 of the layer */
    cr_expect(strstr(o.data, "\"EP 4\" 1e-06 2e-06 2e-05 0 2e-06 2e-05 4.5e-05 \"45.0 us\" 2 "
                             "\"EP 4\" 2.22222 6.66667 51.1111 51.1111 55.5556 100"),
              "%s", o.data);
    /* above: the shares on a linear axis to 100%, each part from the top of the stack down */
    cr_expect(strstr(o.script, "unset logscale y\nset yrange [0:100]"), "%s", o.script);
    cr_expect(strstr(o.script, "using 10:17:(bar_width) with boxes @alltoall_style"));
    cr_expect(
        strstr(o.script, "using 10:12:(bar_width) with boxes @router_style title \"router\""));
    const char *plot = strstr(o.script, "\nplot ");
    cr_assert_not_null(plot);
    cr_expect(strstr(plot, "@alltoall_style") < strstr(plot, "@router_style"),
              "the tallest stack first, so the parts below are drawn over it");
    cr_expect(!strstr(o.script, "title \"shared experts\""),
              "an all-zero part is left out of the legend");
    /* below: the totals on a log axis from a decade under the smallest part (1 us / 2) to 3x
     * the tallest (85 us), with their values */
    cr_expect(strstr(o.script, "set logscale y 10\nset yrange [1e-07:0.001]"), "%s",
              strstr(o.script, "set logscale y 10"));
    cr_expect(strstr(o.script, "using 10:8:(bar_width):xtic(11) with boxes @total_style"));
    cr_expect(strstr(o.script, "using 10:8:9 with labels"));
    cr_expect(strstr(o.script, "set multiplot") && strstr(o.script, "unset multiplot"));
    cr_expect(strstr(o.script, "x_label = \"expert-parallel degree\"") &&
              strstr(o.script, "set xlabel x_label"));
    out_free(&o);
    free(t);
}

Test(plot, empty_charts_are_refused)
{
    static ffn_roofline_chart r;
    static ffn_latency_chart l;
    static ffn_moe_chart m;
    memset(&r, 0, sizeof r);
    memset(&l, 0, sizeof l);
    memset(&m, 0, sizeof m);
    outputs o;
    out_open(&o);
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_plot_roofline_write(&r, "@PLOT@", &files, o.d, o.s, &d), FFN_EINVAL);
    cr_expect(strstr(d.msg, "nothing to draw"));
    cr_expect_eq(ffn_plot_latency_write(&l, "@PLOT@", &files, o.d, o.s, &d), FFN_EINVAL);
    cr_expect_eq(ffn_plot_moe_write(&m, "@PLOT@", &files, o.d, o.s, &d), FFN_EINVAL);
    m.n_bars = 1; /* a bar of zeros */
    cr_expect_eq(ffn_plot_moe_write(&m, "@PLOT@", &files, o.d, o.s, &d), FFN_EINVAL);
    out_close(&o);
    out_free(&o);
}

Test(plot, device_from_hw_spec)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "gpu-x");
    hw.kind = FFN_HW_GPU;
    snprintf(hw.source, sizeof hw.source, "datasheet");
    hw.peak_flops[FFN_DT_FP32] = 6e13;
    hw.peak_flops[FFN_DT_BF16] = 1e15;
    hw.peak_flops[FFN_DT_FP16] = 1e15;
    hw.mem_bandwidth_bps = 3e12;
    hw.n_levels = 1;
    snprintf(hw.levels[0].name, sizeof hw.levels[0].name, "L2");
    hw.levels[0].bandwidth_bps = 1e13;
    ffn_plot_device d;
    ffn_plot_device_from_hw(&hw, &d);
    cr_assert_eq(d.n_ceil, 4, "fp32, bf16/fp16 merged, L2, HBM");
    cr_expect_str_eq(d.ceil[1].name, "bf16/fp16");
    cr_expect_eq(d.ceil[3].kind, FFN_ROOF_DATASHEET);
    cr_expect_str_eq(d.ceil[3].name, "HBM");
    cr_expect_eq(ffn_plot_device_main_bw(&d), 3e12);
    /* a calibrated spec's bandwidth is a read-only measurement */
    snprintf(hw.source, sizeof hw.source, "measured by ffnroof calibrate on h, 2025-01-01");
    hw.kind = FFN_HW_CPU;
    ffn_plot_device_from_hw(&hw, &d);
    cr_expect_eq(d.ceil[3].kind, FFN_ROOF_READ_ONLY);
    cr_expect_str_eq(d.origin, "calibrated");
}

Test(plot, reads_calibration_json)
{
    static ffn_calib_file f;
    ffn_plot_device d;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_assert_eq(ffn_profile_load_calibration(DATA "calibration.json", &f, &dg), 0, "%s", dg.msg);
    cr_expect_str_eq(f.date, "2025-01-31T11:00:00Z");
    ffn_plot_device_from_calibration(&f, &d);
    cr_expect_str_eq(d.name, "fixture-host");
    /* all-threads peaks only (the one-thread fp32 and the unmeasured int8 are left out) */
    cr_assert_eq(d.n_ceil, 2 + 3 + 1);
    cr_expect_str_eq(d.ceil[0].name, "fp32 avx512");
    cr_expect_eq(d.ceil[0].value, 1e11);
    cr_expect_str_eq(d.ceil[1].name, "bf16 amx");
    cr_expect_eq(d.ceil[2].kind, FFN_ROOF_READ_ONLY);
    cr_expect_eq(d.ceil[2].value, 2e11, "the all-threads L1, not the one-thread one");
    cr_expect_eq(d.ceil[5].kind, FFN_ROOF_READ_WRITE);
    cr_expect_eq(d.ceil[5].value, 7e9);
    cr_expect_eq(ffn_plot_device_main_bw(&d), 1e10, "ridges against read-only DRAM");
}

/* The calibration record holds what the file says, every thread count and null included; the
 * roofline above picks from it. */
Test(plot, calibration_record_holds_the_file)
{
    static ffn_calib_file f;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_assert_eq(ffn_profile_load_calibration(DATA "calibration.json", &f, &dg), 0, "%s", dg.msg);
    cr_expect_str_eq(f.host, "fixture-host");
    cr_expect_eq(f.threads, 2);
    cr_assert_eq(f.n_peaks, 4);
    cr_expect_str_eq(f.peaks[0].kind, "fp32_avx512", "the kind as the file spells it");
    cr_expect_eq(f.peaks[0].threads, 1);
    cr_expect(isnan(f.peaks[3].flops_per_s), "a null peak stays null");
    cr_expect(f.has_bandwidth);
    cr_assert_eq(f.n_levels, 5);
    cr_expect_str_eq(f.levels[4].kernel, "triad");
    cr_expect_eq(f.tail_all_threads_bps, 1e10);
    cr_expect_eq(f.tail_one_thread_bps, 9e9);
}

Test(plot, reads_bench_json)
{
    static ffn_plot_bench b;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_assert_eq(ffn_profile_load_bench(DATA "bench.json", &b, &dg), 0, "%s", dg.msg);
    cr_expect_str_eq(b.host, "fixture-host");
    cr_expect_str_eq(b.counters_source, "papi_sde");
    cr_assert_eq(b.n_cases, 3);
    cr_expect_eq(b.cases[1].phase, FFN_PHASE_PREFILL);
    cr_expect_eq(b.cases[1].tokens, 64);
    cr_expect_eq(b.cases[1].median_s, 2e-4);
    cr_expect_eq(b.cases[1].prediction_error, -0.25);
    cr_expect_str_eq(b.cases[2].kind, "moe");
    cr_expect_eq(b.cases[2].experts, 8);
    /* nulls that the definitions fix are derived: intensity = flops/bytes, achieved = flops/t */
    close_to(b.cases[2].intensity, 98304.0 / 800000.0, "derived intensity");
    close_to(b.cases[2].achieved_flops, 98304.0 / 4e-5, "derived achieved FLOP/s");
    /* the spec as a roofline: a calibrated spec -> read-only memory */
    ffn_plot_device spec;
    ffn_plot_device_from_bench(&b, &spec);
    cr_assert_eq(spec.n_ceil, 3);
    cr_expect_eq(spec.ceil[2].kind, FFN_ROOF_READ_ONLY);
    cr_expect_eq(spec.ceil[2].value, 1e10);
    char lab[48];
    ffn_plot_case_label(&b.cases[2], lab, sizeof lab);
    cr_expect_str_eq(lab, "moe decode T=1 fp32");
}

Test(plot, refuses_other_kinds_and_versions)
{
    static ffn_plot_bench b;
    static ffn_calib_file f;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_bench(DATA "calibration.json", &b, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "is not a bench result"), "%s", dg.msg);
    cr_expect_eq(dg.line, 2, "points at the schema value");
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_calibration(DATA "bench.json", &f, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "is not a calibration"), "%s", dg.msg);
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_bench(DATA "bench-newer.json", &b, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "newer ffnroof"), "%s", dg.msg);
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_bench(DATA "bench-empty.json", &b, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "no cases"), "%s", dg.msg);
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_bench(DATA "bench-no-time.json", &b, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "time_s.median"), "%s", dg.msg);
    ffn_diag_clear(&dg);
    cr_expect_eq(ffn_profile_load_bench(FFNROOF_TEST_DATA "/hw/valid.yaml", &b, &dg), FFN_ESCHEMA);
    cr_expect(strstr(dg.msg, "no 'schema'"), "%s", dg.msg);
}

Test(plot, log_range_is_whole_decades)
{
    double a, b;
    ffn_plot_log_range(0.083, 160, &a, &b);
    cr_expect_eq(a, 0.01);
    cr_expect_eq(b, 1000);
    ffn_plot_log_range(1, 10, &a, &b);
    cr_expect_eq(a, 1);
    cr_expect_eq(b, 10);
    ffn_plot_log_range(5, 5, &a, &b); /* degenerate: still a decade */
    cr_expect(b > a);
}

/* The cache-aware roofline: a warm bench case records the bytes each level served
 * (the model's: 1 x 256 x 512 gelu fp32, weights 1,048,576 B + activations 6,144 B from L2,
 * the activations alone from memory) and the spec's on-chip roofs; --levels draws the case
 * once per level at flops / bytes. */
Test(plot, reads_bench_level_bytes_and_onchip_roofs)
{
    static ffn_plot_bench b;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_assert_eq(ffn_profile_load_bench(DATA "bench-levels.json", &b, &dg), 0, "%s", dg.msg);
    cr_assert_eq(b.n_cases, 1);
    const ffn_plot_case *c = &b.cases[0];
    cr_assert_eq(c->n_levels, 2);
    cr_expect_str_eq(c->level_names[0], "L2");
    cr_expect_str_eq(c->level_names[1], "memory");
    cr_expect_eq(c->level_bytes[0], 1054720.0);
    cr_expect_eq(c->level_bytes[1], 6144.0);
    cr_expect_str_eq(c->level_bytes_source, "model");
    /* roofs: fp32 compute, DRAM, and the L2 at 200 GB/s */
    ffn_plot_device spec;
    ffn_plot_device_from_bench(&b, &spec);
    cr_assert_eq(spec.n_ceil, 3);
    cr_expect_str_eq(spec.ceil[2].name, "L2");
    cr_expect_eq(spec.ceil[2].value, 200e9);
    /* a bench file without level_bytes (the older fixture) has none */
    static ffn_plot_bench old;
    cr_assert_eq(ffn_profile_load_bench(DATA "bench.json", &old, &dg), 0, "%s", dg.msg);
    cr_expect_eq(old.cases[0].n_levels, 0);
}

/* The builders `ffnroof plot` calls (report/plot_build.c), on real specs and models: a roofline of
 * one device with a bench file (its level points under --levels) and the model's prefill and
 * decode points; the latency chart's predicted curves over the grid; the MoE chart's bars; and
 * each refusal with the error the command maps to its exit code. */
#define SRC FFNROOF_SOURCE_DIR "/"
static void load_pair(const char *hw, const char *model, ffn_hw *h, ffn_model *m)
{
    ffn_diag dg;
    ffn_diag_clear(&dg);
    cr_assert_eq(ffn_hw_load(hw, h, &dg), 0, "%s", dg.msg);
    cr_assert_eq(ffn_model_load(model, m, &dg), 0, "%s", dg.msg);
}

Test(plot, builders_fill_each_chart_from_a_request)
{
    static ffn_hw hw;
    static ffn_model llama, mixtral;
    load_pair(SRC "hw/h100-sxm.yaml", SRC "models/llama2-7b.yaml", &hw, &llama);
    load_pair(SRC "hw/h100-sxm.yaml", SRC "models/mixtral-8x7b.yaml", &hw, &mixtral);
    static ffn_plot_bench bench[1];
    ffn_diag lg;
    ffn_diag_clear(&lg);
    cr_assert_eq(ffn_profile_load_bench(DATA "bench-levels.json", &bench[0], &lg), 0, "%s", lg.msg);
    const uint64_t batch[] = {1, 64};
    ffn_plot_request q = {.hws = &hw,
                          .n_hw = 1,
                          .model = &llama,
                          .bench = bench,
                          .n_bench = 1,
                          .batch = batch,
                          .n_batch = 2,
                          .dtype = FFN_DT_BF16,
                          .phase = FFN_PHASE_DECODE,
                          .today = "2026-12-03"};
    ffn_diag dg;
    ffn_diag_clear(&dg);
    static ffn_roofline_chart rc;
    cr_assert_eq(ffn_plot_build_roofline(&q, &rc, &dg), 0, "%s", dg.msg);
    cr_expect_eq(rc.n_dev, 2, "the spec, then the bench's own spec");
    cr_expect_eq(rc.n_pts, 1 + 1 + 2, "one bench case, a prefill and two decode predictions");
    cr_expect_eq(rc.pts[1].device, 0);
    cr_expect(strstr(rc.title, "llama2-7b") && strstr(rc.title, "2026-12-03"), "%s", rc.title);
    q.levels = true;
    cr_assert_eq(ffn_plot_build_roofline(&q, &rc, &dg), 0, "%s", dg.msg);
    cr_expect_eq(rc.n_pts, 2 + 1 + 2, "the case once per level");
    cr_expect(strstr(rc.pts[0].label, "@L2"), "%s", rc.pts[0].label);

    static ffn_latency_chart lc;
    q.bench = NULL;
    q.n_bench = 0;
    const uint64_t seq[] = {128, 512, 2048};
    q.seq = seq;
    q.n_seq = 3;
    q.title = "mine";
    cr_assert_eq(ffn_plot_build_latency(&q, &lc, &dg), 0, "%s", dg.msg);
    cr_assert_eq(lc.n_series, 2, "prefill and decode, predicted");
    cr_expect_eq(lc.s[0].n, 3);
    cr_expect_eq(lc.s[1].n, 2);
    cr_expect(lc.s[0].seconds[2] > lc.s[0].seconds[0], "a longer prompt takes longer");
    cr_expect_str_eq(lc.title, "mine");

    static ffn_moe_chart mc;
    cr_expect_eq(ffn_plot_build_moe(&q, &mc, &dg), FFN_EINVAL, "llama2-7b has no experts");
    cr_expect(strstr(dg.msg, "no experts"), "%s", dg.msg);
    q.model = &mixtral;
    cr_assert_eq(ffn_plot_build_moe(&q, &mc, &dg), 0, "%s", dg.msg);
    cr_expect_eq(mc.n_bars, 2);
    cr_expect_str_eq(mc.bars[1].label, "b=64");
    q.by_ep = true;
    cr_assert_eq(ffn_plot_build_moe(&q, &mc, &dg), 0, "%s", dg.msg);
    cr_expect_eq(mc.n_bars, 4, "EP 1, 2, 4, 8 at the first batch");
    cr_expect_str_eq(mc.bars[3].label, "EP 8");
    uint64_t many[FFN_PLOT_MAX_BARS + 1];
    for (size_t i = 0; i < FFN_PLOT_MAX_BARS + 1; i++)
        many[i] = i + 1;
    q.by_ep = false;
    q.batch = many;
    q.n_batch = FFN_PLOT_MAX_BARS + 1;
    cr_expect_eq(ffn_plot_build_moe(&q, &mc, &dg), FFN_ENOSPACE);
    cr_expect_str_eq(dg.msg, "too many bars");

    static ffn_plot_bench missing;
    ffn_diag_clear(&dg);
    cr_expect_neq(ffn_profile_load_bench(DATA "no-such-bench.json", &missing, &dg), 0);
    cr_expect(strstr(dg.file, "no-such-bench.json"), "the loader names the file: '%s'", dg.file);
}
