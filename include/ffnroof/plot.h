/* Pictures: the data behind ffnroof's charts and the gnuplot scripts that draw them (the chart
 * model: report/plot_model.c; the rooflines of the profiler's files: report/plot_profile.c, on
 * the records of ffnroof/profile_file.h; the gnuplot writers: report/plot_roofline.c and its
 * small multiples report/plot_roofline_grid.c, report/plot_write.c).
 *
 * Three charts: a roofline (log-log FLOP/byte vs FLOP/s: compute ceilings per dtype, bandwidth
 * ceilings per memory level, ridge points, measured kernel points with the simulator's predicted
 * points beside them), FFN latency per layer vs tokens (prefill, decode, predicted and measured,
 * ridge marked) and MoE time as stacked bars (router, dispatch, experts, shared, combine,
 * all-to-all). Each is filled in a plain struct (by hand, from ffn_hw specs and ffn_predict()
 * results, or from the records of the calibration and bench JSON files of docs/formats-bench.md),
 * then written as a gnuplot data file plus a script made from a template in plots/
 * (docs/reports.md).
 *
 * Pure data preparation and writers: the caller owns the streams and decides where they go;
 * nothing here runs gnuplot (cli/gnuplot.c does). Units are SI base units (FLOP/s, B/s, s). */
#ifndef FFNROOF_PLOT_H
#define FFNROOF_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/profile_file.h"
#include "ffnroof/serve.h"
#include "ffnroof/sim.h"

#define FFN_PLOT_MAX_DEVICES 12
#define FFN_PLOT_MAX_CEILINGS 16
#define FFN_PLOT_MAX_POINTS 512
#define FFN_PLOT_MAX_SERIES 64
#define FFN_PLOT_MAX_SERIES_POINTS 64
#define FFN_PLOT_MAX_BARS 64
/* From this many devices on, a roofline is drawn as small multiples: one panel per device, all
 * on the same axes (plots/roofline-grid.gp); fewer share one chart (plots/roofline.gp). */
#define FFN_PLOT_GRID_MIN_DEVICES 5

/* How a bandwidth ceiling was obtained: a read-only or read-write (copy/triad) measurement, or a
 * datasheet peak (read+write, hw.h). Compute ceilings use FFN_ROOF_COMPUTE. */
typedef enum ffn_roof_kind {
    FFN_ROOF_COMPUTE = 0,
    FFN_ROOF_READ_ONLY,
    FFN_ROOF_READ_WRITE,
    FFN_ROOF_DATASHEET
} ffn_roof_kind;

typedef struct ffn_plot_ceiling {
    char name[32]; /* "fp32", "bf16 (AMX)", "DRAM", "L2", "HBM" */
    ffn_roof_kind kind;
    double value; /* FLOP/s (compute) or B/s (bandwidth), > 0 */
} ffn_plot_ceiling;

/* One roofline: a device or host with its ceilings. */
typedef struct ffn_plot_device {
    char name[64];
    char origin[32]; /* "datasheet", "calibrated", "calibration.json", "bench spec" */
    ffn_plot_ceiling ceil[FFN_PLOT_MAX_CEILINGS];
    int n_ceil;
} ffn_plot_device;

/* A kernel (or whole-FFN) point on a roofline: measured and/or predicted FLOP/s at the same
 * arithmetic intensity. NAN marks what is missing. */
typedef struct ffn_plot_point {
    int device;       /* index into the chart's devices */
    char label[72];   /* "decode T=8 fp32", "decode T=8 fp32 @L2" (a case label and a level) */
    double intensity; /* FLOP/B */
    double measured_flops;
    double predicted_flops;
} ffn_plot_point;

typedef struct ffn_roofline_chart {
    char title[256];
    ffn_plot_device dev[FFN_PLOT_MAX_DEVICES];
    int n_dev;
    ffn_plot_point pts[FFN_PLOT_MAX_POINTS];
    size_t n_pts;
} ffn_roofline_chart;

/* A latency curve or a set of measured points, one per (device, phase, predicted|measured). */
typedef struct ffn_latency_series {
    char label[80];
    int device;
    ffn_phase phase;
    bool measured;
    double tokens[FFN_PLOT_MAX_SERIES_POINTS];  /* tokens per step */
    double seconds[FFN_PLOT_MAX_SERIES_POINTS]; /* per layer */
    int n;
} ffn_latency_series;

typedef struct ffn_latency_chart {
    char title[256];
    char device[FFN_PLOT_MAX_DEVICES][64];
    double ridge_tokens[FFN_PLOT_MAX_DEVICES]; /* INFINITY or NAN: not marked */
    int n_dev;
    ffn_latency_series s[FFN_PLOT_MAX_SERIES];
    int n_series;
} ffn_latency_chart;

/* One stacked bar: where the time of one MoE layer goes (seconds, busiest device). */
typedef struct ffn_moe_bar {
    char label[48]; /* "b=64", "EP 8", "h100-sxm b=8" */
    double router_s, dispatch_s, expert_s, shared_s, combine_s, alltoall_s;
} ffn_moe_bar;

typedef struct ffn_moe_chart {
    char title[256];
    char xlabel[64]; /* "decode batch (sequences)", "expert-parallel degree" */
    ffn_moe_bar bars[FFN_PLOT_MAX_BARS];
    int n_bars;
} ffn_moe_chart;

/* The serving frontier (`ffnroof serve --chart`): output tokens/s per device against one user's
 * tokens/s, one series per model and device - every simulated point, the frontier through the
 * best of them, the pick at the interactivity asked for. */
typedef struct ffn_pareto_series {
    char label[96]; /* "deepseek-v3 on h200" */
    double user_tps[FFN_PLOT_MAX_POINTS], device_tps[FFN_PLOT_MAX_POINTS];
    bool frontier[FFN_PLOT_MAX_POINTS];
    int n;
    int pick; /* index of the pick, -1 none */
} ffn_pareto_series;

typedef struct ffn_pareto_chart {
    char title[256];
    double min_user_tps; /* the interactivity line; 0 = none */
    ffn_pareto_series s[FFN_PLOT_MAX_DEVICES];
    int n_series;
} ffn_pareto_chart;

/* Where the script finds its data and writes its images (names relative to the folder the
 * script is run in), and how big the images are. */
typedef struct ffn_plot_files {
    const char *data;     /* "roofline.dat" */
    const char *png;      /* "roofline.png" */
    const char *svg;      /* "roofline.svg" */
    const char *png_term; /* "pngcairo" (default when NULL) or "png" (libgd) */
    int width, height;    /* pixels, both images; 0 = 1200 x 800 */
} ffn_plot_files;

/* ---- filling ---------------------------------------------------------------------------- */

/* A device's ceilings from a hardware spec: one compute ceiling per dtype with a peak (tf32
 * left out when it equals another), main memory and every on-chip level with a bandwidth. A
 * spec written by `ffnroof calibrate` (source "measured by ffnroof calibrate ...") has
 * read-only bandwidths; a datasheet's are read+write peaks. */
void ffn_plot_device_from_hw(const ffn_hw *hw, ffn_plot_device *out);

/* Add a ceiling; FFN_ENOSPACE when full, FFN_EINVAL for a value that is not positive/finite. */
int ffn_plot_device_add(ffn_plot_device *d, const char *name, ffn_roof_kind kind, double value);

/* The slowest read-only or datasheet bandwidth ceiling (read-write only when there is no other):
 * the one ridge points refer to; 0 when none. */
double ffn_plot_device_main_bw(const ffn_plot_device *d);

/* A point for the whole FFN of a prediction: its intensity and predicted FLOP/s. */
void ffn_plot_point_from_result(const ffn_result *r, int device, ffn_plot_point *out);

/* Latency per layer of a prediction: predicted_s / (layers x steps) (seconds). */
double ffn_plot_layer_latency_s(const ffn_model *m, const ffn_result *r);

/* An MoE bar from a prediction's MoE breakdown. */
void ffn_plot_moe_bar_from_result(const ffn_result *r, const char *label, ffn_moe_bar *out);

/* ---- the charts of the profiler's files (docs/formats-bench.md) ------------------------- */

/* A calibration record as a roofline: the best all-threads peak per dtype (one-thread fp32 as a
 * second ceiling), the plateaus of the all-threads read-only ("read") and read-write ("triad",
 * else "copy") curves, and the read-only tail rate (the spec's main memory) when no plateau was
 * detected or it differs from the last read-only plateau by more than 5%. */
void ffn_plot_device_from_calibration(const ffn_calib_file *f, ffn_plot_device *out);

/* The spec a bench ran against as a roofline: its peaks, its memory (read-only when the spec
 * was written by `ffnroof calibrate`, else a datasheet peak) and its on-chip levels. */
void ffn_plot_device_from_bench(const ffn_plot_bench *b, ffn_plot_device *out);

/* "decode T=8 fp32" for a case (MoE cases say "moe"). */
void ffn_plot_case_label(const ffn_plot_case *c, char *buf, size_t n);

/* A bench run's charts, titled with its date (today when it has none): the roofline of cal
 * (NULL: the bench's spec) with each case measured and predicted, and each shape's measured and
 * predicted layer time over its token counts (one colour per shape and dtype). */
void ffn_plot_bench_charts(const ffn_plot_bench *b, const ffn_plot_device *cal, const char *today,
                           ffn_roofline_chart *rc, ffn_latency_chart *lc);

/* ---- building a chart from what the command line names (report/plot_build.c) -------------- */

/* Loaded specs and model (the predictions), calibration and bench records (the measurements)
 * and the grid; a count of 0 takes the chart's default grid. */
typedef struct ffn_plot_request {
    const ffn_hw *hws;
    int n_hw;
    const ffn_model *model;      /* NULL: no predictions */
    const ffn_calib_file *cal;   /* calibration.json records */
    const ffn_plot_bench *bench; /* bench.json records */
    int n_cal, n_bench;
    const uint64_t *batch, *seq, *ep;
    size_t n_batch, n_seq, n_ep;
    ffn_dtype dtype;
    ffn_phase phase;           /* moe */
    bool by_ep;                /* moe: bars per expert-parallel degree, not per batch */
    bool levels;               /* roofline: each bench case at each memory level's bytes */
    const char *title, *today; /* title: NULL for "what: model on devices, dtype (today)" */
} ffn_plot_request;

/* Fill the chart. Returns 0; FFN_ENOSPACE ("too many devices", "too many bars"), FFN_EINVAL (a
 * moe chart without a model with experts) or a prediction's error with diag holding one line. */
int ffn_plot_build_roofline(const ffn_plot_request *q, ffn_roofline_chart *c, ffn_diag *d);
int ffn_plot_build_latency(const ffn_plot_request *q, ffn_latency_chart *c, ffn_diag *d);
int ffn_plot_build_moe(const ffn_plot_request *q, ffn_moe_chart *c, ffn_diag *d);

/* ---- writing ---------------------------------------------------------------------------- */

/* Write the chart's data file (gnuplot index blocks, each preceded by a comment saying what it
 * holds) and its script: template_text (a template from plots/) with @TITLE@, @DATA@, @PNG@, @SVG@,
 * @PNGTERM@, @WIDTH@, @HEIGHT@, @XRANGE@, @YRANGE@, @SETUP@ and @PLOT@ replaced. Returns 0,
 * FFN_EINVAL (nothing to draw: no ceilings, no series, no bars) or FFN_EIO with diag filled. */
/* The roofline's template must be the one ffn_plot_roofline_template names: with
 * FFN_PLOT_GRID_MIN_DEVICES devices or more the script is a multiplot grid (rows x columns from
 * ffn_plot_grid_layout), one panel per device on the same axes, a shared legend of the line and
 * marker kinds, and (f's size 0) an image sized for the grid. */
int ffn_plot_roofline_write(const ffn_roofline_chart *c, const char *template_text,
                            const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag);
int ffn_plot_latency_write(const ffn_latency_chart *c, const char *template_text,
                           const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag);
int ffn_plot_moe_write(const ffn_moe_chart *c, const char *template_text, const ffn_plot_files *f,
                       FILE *data, FILE *script, ffn_diag *diag);

/* The frontier chart of serve's answers: one series per (model, device) pair, its stable points,
 * their frontier flags and the pick; the interactivity line at user_tps (0: none). */
void ffn_plot_pareto_from_serve(ffn_pareto_chart *ch, const ffn_serve_pair *p, size_t np,
                                double user_tps);
int ffn_plot_pareto_write(const ffn_pareto_chart *c, const char *template_text,
                          const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag);

/* The template in plots/ that c's script is made from: "roofline.gp", or "roofline-grid.gp" for
 * small multiples (FFN_PLOT_GRID_MIN_DEVICES devices or more). A static string. */
const char *ffn_plot_roofline_template(const ffn_roofline_chart *c);

/* The small multiples' grid for n devices (n > 0): rows x columns, filled row by row (5-6 devices
 * 2 x 3, 7-9 3 x 3, 10-12 3 x 4). */
void ffn_plot_grid_layout(int n, int *rows, int *cols);

/* Axis range of a log axis: decades that hold [lo, hi] (lo, hi > 0). */
void ffn_plot_log_range(double lo, double hi, double *min_out, double *max_out);

const char *ffn_roof_kind_name(ffn_roof_kind k);

#endif
