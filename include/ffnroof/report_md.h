/* The pieces of the Markdown reports of `ffnroof report` (report/report_md.c, docs/reports.md):
 * each writes one part of report.md to a caller-opened stream; cli/cmd_report.c decides which
 * parts a report has, emits the charts and writes the file. */
#ifndef FFNROOF_REPORT_MD_H
#define FFNROOF_REPORT_MD_H

#include <stdbool.h>
#include <stdio.h>

#include "ffnroof/compare.h"
#include "ffnroof/plot.h"
#include "ffnroof/profile.h"

/* "# title" and the line that says when (today, "2025-01-31") and by which command. */
void ffn_md_header(FILE *fp, const char *title, const char *today, const char *command);
/* A chart NAME.png with its caption and links to NAME.svg, NAME.dat and NAME.gp. */
void ffn_md_chart(FILE *fp, const char *name, const char *alt, const char *caption);
/* The caption of `report --bench`'s "roofline" (on a calibration's roofs when calibrated, else
 * the bench's spec) or "latency" chart. */
void ffn_md_bench_chart(FILE *fp, const char *name, bool calibrated);
/* The caption of a chart of ffn_compare_charts, by its name (…latency, …roofline, …moe). */
void ffn_md_compare_chart(FILE *fp, const char *name);
/* How the numbers are made: roofline, predicted time, scope; MoE and measurement notes. */
void ffn_md_assumptions(FILE *fp, bool moe, bool measured);

/* The bench run's inputs: its file, host, spec (first line of its source), counters and the
 * calibration drawn (cal_path NULL: none). */
void ffn_md_bench_inputs(FILE *fp, const ffn_plot_bench *b, const char *bench_path,
                         const char *cal_path);
/* One row per case: measured, roofline and predicted times, prediction error and fraction of
 * the roof; then the median and worst |error| and how many cases are within 10% and 25%. */
void ffn_md_validation(FILE *fp, const ffn_plot_bench *b);
/* A comparison's model, settings and devices with the source of each spec. */
void ffn_md_compare_inputs(FILE *fp, const ffn_compare *c);

/* `report --quick`: the question about this host, then its roofline (cdev, the calibration read
 * back) as a table and the spec written from it (hw: clock, bandwidth, fp32 peak, the kernel
 * fit kres, which failed when fit_failed). */
void ffn_md_quick_host(FILE *fp, const ffn_host_info *host, const ffn_calibration *cal,
                       const ffn_hw *hw, const ffn_kcal_result *kres, bool fit_failed,
                       const ffn_plot_device *cdev);
/* `report --quick`: what the validation's scaled layers are (d and f of each). */
void ffn_md_quick_layers(FILE *fp, int dense_d, int dense_f, int moe_d, int moe_f);

/* `report --quick`: the host's drift within the report, from n such runs: each with both times
 * and the change, then whether the host held within 10% (the table's errors are more likely the
 * model's; a slow stretch inside the bench alone is not seen) or moved by up to the largest
 * change (errors of that size are the host's as much). Nothing when
 * n is 0 or a time is missing. */
void ffn_md_quick_drift(FILE *fp, const ffn_rerun *d, size_t n);

#endif
