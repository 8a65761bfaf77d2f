/* Private to report/: what the chart model (plot_model.c), the profile rooflines
 * (plot_profile.c) and the gnuplot writers (plot_roofline*.c, plot_write.c) share, and the script
 * machinery of plot_script.c. */
#ifndef FFNROOF_REPORT_PLOT_INTERNAL_H
#define FFNROOF_REPORT_PLOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ffnroof/error.h"
#include "ffnroof/plot.h"

/* ---- the chart model (plot_model.c) ------------------------------------------------------ */

/* Whether a spec's source line says `ffnroof calibrate` measured it. */
bool ffn__plot_calibrated(const char *source);
/* The highest bandwidth (bw) or compute (!bw) ceiling of d; 0 when it has none. */
double ffn__plot_device_max(const ffn_plot_device *d, bool bw);
/* The lowest compute ceiling of d; 0 when it has none. */
double ffn__plot_device_min_peak(const ffn_plot_device *d);
/* A bench case as a roofline point on device dev: its label, intensity, measured FLOP/s and
 * predicted FLOP/s (NAN without a prediction). */
void ffn__plot_case_point(const ffn_plot_case *bc, int dev, ffn_plot_point *p);
/* Add (tokens, seconds) to the series (dev, phase, measured, label) of c, creating it when
 * needed; dropped when c has no room left. */
void ffn__plot_series_add(ffn_latency_chart *c, int dev, ffn_phase ph, bool measured,
                          const char *label, double tokens, double seconds);

/* ---- the roofline: its geometry (plot_roofline_geom.c), its small multiples (_grid.c) ------ */

/* A text's or marker's box on the image, in pixels from the bottom left. */
typedef struct ffn__plot_box {
    double x0, y0, x1, y1;
} ffn__plot_box;

/* Where a label w x h pixels wide for the point (x, y) covers the least of the boxes taken and
 * stays inside the plot area [pl, pr] x [pb, pt]; the box is added to those taken (up to cap). */
ffn__plot_box ffn__plot_place_label(ffn__plot_box *taken, size_t *n_taken, size_t cap, double x,
                                    double y, double w, double h, double pl, double pr, double pb,
                                    double pt);

/* Per device, the roofs its points are measured against: the index of the compute ceiling of
 * their dtype (the last word of a point's label; without points, the highest) and of the main
 * memory ceiling (ffn_plot_device_main_bw); -1 where the device has none. */
void ffn__plot_roofs_kept(const ffn_roofline_chart *c, int keep_compute[], int keep_bw[]);

/* The log axes' ranges (whole decades) that hold every ridge with room on both sides and every
 * point; by_device: only the kept compute roofs set the top. */
void ffn__plot_roofline_axes(const ffn_roofline_chart *c, bool by_device, const int keep_compute[],
                             double x[2], double y[2]);

/* ffn_plot_roofline_write for FFN_PLOT_GRID_MIN_DEVICES devices or more: small multiples from
 * plots/roofline-grid.gp. Same contract. */
int ffn__plot_roofline_grid_write(const ffn_roofline_chart *c, const char *template_text,
                                  const ffn_plot_files *f, FILE *data, FILE *script,
                                  ffn_diag *diag);

/* ---- gnuplot scripts (plot_script.c) ----------------------------------------------------- */

/* Text safe inside a gnuplot double-quoted string (titles, data-file labels). */
void ffn__plot_clean(char *dst, size_t n, const char *src);

/* Growing text buffer for the generated @SETUP@ and @PLOT@ parts (open_memstream). */
typedef struct ffn__membuf {
    char *text;
    size_t len;
    FILE *fp;
} ffn__membuf;

/* 0 or FFN_ENOMEM. The stream keeps the addresses of text and len: open it in place. */
int ffn__mb_open(ffn__membuf *m);
/* Closes the stream; the text stays valid until ffn__mb_free. */
const char *ffn__mb_close(ffn__membuf *m);
void ffn__mb_free(ffn__membuf *m);

/* A plot command built clause by clause: "plot A, \\\n     B". */
typedef struct ffn__plotcmd {
    ffn__membuf mb;
    int n;
} ffn__plotcmd;

void ffn__plot_clause(ffn__plotcmd *pc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The generated parts of a script; NULL ranges are "[*:*]", other NULL parts "". */
typedef struct ffn__plot_parts {
    const char *title, *xrange, *yrange, *xlabel, *setup, *plot;
} ffn__plot_parts;

/* Open the @SETUP@ buffer (setup may be NULL: none) and the plot command; 0 or FFN_ENOMEM with
 * diag (nothing left open). */
int ffn__plot_begin(ffn__membuf *setup, ffn__plotcmd *pc, ffn_diag *diag);
/* End the plot command and write the script: the template with @TITLE@ (title made safe),
 * @DATA@, @PNG@, @SVG@, @PNGTERM@, @WIDTH@, @HEIGHT@ (from f), @XRANGE@ and @YRANGE@ ("[lo:hi]";
 * xrange NULL: "[*:*]"), @XLABEL@ (NULL: ""), @SETUP@ and @PLOT@ filled; frees both buffers.
 * Returns 0, or FFN_EIO with diag when either stream has an error. */
int ffn__plot_end(FILE *data, FILE *script, const char *tmpl, const ffn_plot_files *f,
                  const char *title, const double *xrange, const double *yrange, const char *xlabel,
                  ffn__membuf *setup, ffn__plotcmd *pc, ffn_diag *diag);

#endif
