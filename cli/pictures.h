/* Internal to cli/: what `ffnroof plot`, `compare` and `report` share - rendering charts with
 * gnuplot (cli/gnuplot.c), the chart-emitting helper that writes data + script + images into a
 * folder, and the comparison that both `compare` and `report --compare` compute. */
#ifndef FFN_CLI_PICTURES_H
#define FFN_CLI_PICTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "ffnroof/compare_report.h"
#include "ffnroof/plot.h"
#include "ffnroof/sim.h"

/* ---- gnuplot (cli/gnuplot.c) ------------------------------------------------------------- */

/* Look for an executable `gnuplot` in $PATH (an empty or unset PATH finds nothing). */
bool ffn_gnuplot_find(char *path, size_t n);

/* "pngcairo" when this gnuplot has it, else "png" (libgd); asks gnuplot once per process. */
const char *ffn_gnuplot_png_term(const char *gnuplot);

/* Run `gnuplot -e PRESET SCRIPT` in folder dir, killed after timeout_s seconds. Returns 0,
 * FFN_EIO (it failed: msg holds its first error line), FFN_EINTERRUPTED (timed out) or
 * FFN_ENOTFOUND (could not be started). */
int ffn_gnuplot_run(const char *gnuplot, const char *dir, const char *script, const char *preset,
                    double timeout_s, char *msg, size_t msg_n);

/* Seconds gnuplot may take per chart: $FFNROOF_GNUPLOT_TIMEOUT, else 60. */
double ffn_gnuplot_timeout_s(void);

/* ---- charts into a folder ----------------------------------------------------------------- */

typedef enum ffn_chart_kind {
    FFN_CHART_ROOFLINE = 0,
    FFN_CHART_LATENCY,
    FFN_CHART_MOE,
    FFN_CHART_PARETO
} ffn_chart_kind;

typedef struct ffn_chart_out {
    const char *dir;  /* existing, writable folder */
    const char *base; /* file names: base.dat, base.gp, base.png, base.svg */
    int width, height;
    bool render; /* false: write data and script only (--no-render) */
    bool quiet;  /* do not print the "wrote ..." line */
    /* filled: */
    bool rendered;
    bool gnuplot_missing;
} ffn_chart_out;

/* Write DIR/base.dat and DIR/base.gp (temporary names renamed into place) from the chart and
 * the template plots/<kind>.gp, then render base.png and base.svg when gnuplot is on the PATH.
 * Without gnuplot: says on stderr how to render them and returns FFN_EXIT_OK. Returns an exit
 * code (FFN_EXIT_USAGE for an unwritable folder or an empty chart). */
int ffn_chart_emit(const char *cmd, ffn_chart_kind kind, const void *chart, ffn_chart_out *o);

/* Create dir (and its parents) if missing and check it is writable; FFN_EXIT_USAGE with one line
 * otherwise. */
int ffn_cli_prepare_dir(const char *cmd, const char *dir);

/* "2025-01-31" (UTC, today). */
void ffn_cli_today(char *buf, size_t n);

/* ---- comparison (cli/cmd_compare.c; the computation: include/ffnroof/compare.h) ----------- */

/* Parse compare's options (argv[0] is the command name; `report` passes its own argv with
 * --compare removed), load the inputs and predict every device. Returns an exit code. */
int ffn_compare_setup(const char *cmd, int argc, char **argv, ffn_compare *c, ffn_format *fmt,
                      const char **out_path, const char **plots_dir);
int ffn_compare_write(FILE *fp, const ffn_compare *c, ffn_format fmt);
/* The comparison's charts into dir: PREFIXlatency, PREFIXroofline and (MoE models) PREFIXmoe.
 * Writes the base names it made into names[] (at most 3) and returns an exit code. */
int ffn_compare_plots(const char *cmd, const ffn_compare *c, const char *dir, const char *prefix,
                      int width, int height, bool render, char names[][64], int *n_names);

#endif
