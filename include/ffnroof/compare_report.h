/* The views of a device comparison (report/compare_write.c; the record and its predictions are
 * in ffnroof/compare.h): the table, JSON (schema ffnroof.compare/1), CSV and Markdown forms of
 * `ffnroof compare` and `report --compare`, and the comparison's charts. The writers take a
 * caller-opened stream and return 0 or FFN_EIO. */
#ifndef FFNROOF_COMPARE_REPORT_H
#define FFNROOF_COMPARE_REPORT_H

#include <stdio.h>

#include "ffnroof/compare.h"

int ffn_compare_write_table(FILE *fp, const ffn_compare *c);
int ffn_compare_write_json(FILE *fp, const ffn_compare *c);
int ffn_compare_write_csv(FILE *fp, const ffn_compare *c);
/* Markdown tables of a comparison (for report.md). */
int ffn_compare_write_markdown(FILE *fp, const ffn_compare *c);

/* The comparison's charts, titled with today's date: FFN latency per layer (prefill over a
 * prompt-length sweep, decode over a batch sweep), each device's roofline with the model's
 * whole-FFN points, and (MoE models; else mc->n_bars = 0) where a MoE layer's time goes
 * (the chart structs of ffnroof/plot.h). */
struct ffn_latency_chart;
struct ffn_roofline_chart;
struct ffn_moe_chart;
void ffn_compare_charts(const ffn_compare *c, const char *today, struct ffn_latency_chart *lc,
                        struct ffn_roofline_chart *rc, struct ffn_moe_chart *mc);

#endif
