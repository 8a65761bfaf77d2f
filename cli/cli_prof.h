/* Helpers shared by `ffnroof calibrate`, `bench` and `report` (implemented in cli_prof.c):
 * output folders, the load average, a progress bar on stderr (only when stderr is a terminal)
 * and a SIGINT flag that asks the measuring libraries to stop. */
#ifndef FFN_CLI_PROF_H
#define FFN_CLI_PROF_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "ffnroof/bench_io.h"
#include "ffnroof/calibrate.h"

/* Where the last calibration is remembered (relative to the current directory). */
#define FFN_LAST_CAL_DIR "results/last-calibration"

/* mkdir -p; then checks that a file can be created there. 0 or FFN_EXIT_USAGE (one line). */
int ffn_prof_mkdirs(const char *cmd, const char *dir);
/* /proc/loadavg (or getloadavg); leaves load untouched when unknown. */
void ffn_prof_loadavg(double load[3]);
/* Steal time (/proc/stat's "cpu" line, 8th figure: time this VM's vCPUs were ready to run while
 * the hypervisor ran something else), seconds summed over the CPUs, and the monotonic time it
 * was read at. A pair of these brackets a run; ffn_prof_steal_note appends to notes (n bytes)
 * a sentence when the host took more than 1% of the run's CPU time (threads CPUs over the wall
 * time between the two). Where /proc/stat has no steal figure nothing is said. */
typedef struct ffn_prof_steal {
    double steal_s, at_s;
    bool known;
} ffn_prof_steal;
ffn_prof_steal ffn_prof_steal_now(void);
void ffn_prof_steal_note(const ffn_prof_steal *from, const ffn_prof_steal *to, int threads,
                         char *notes, size_t n);

typedef struct ffn_prof_progress {
    bool show;
    double lo, hi; /* the callback's fraction [0,1] maps to [lo,hi] of the bar */
    char title[48];
    int last_len;
} ffn_prof_progress;
void ffn_prof_progress_init(ffn_prof_progress *p, const char *title);
/* Progress callbacks (ffn_progress_fn and ffn_bench_progress_fn have this signature): draw and
 * return the SIGINT flag. */
int ffn_prof_progress_stage(void *user, double fraction, const char *stage);
int ffn_prof_progress_case(void *user, double fraction, const char *label);
void ffn_prof_progress_end(ffn_prof_progress *p);

/* The calibration pipeline's progress on bar p: each step draws on its part of the bar, and
 * the roofs and the kernel fit report through the callbacks above. */
ffn_cal_progress ffn_prof_cal_progress(ffn_prof_progress *p);

/* The calibration pipeline under a progress bar titled title (ffn_cal_pipeline_run's code and
 * *failed): the steal time around it and the load average at the start (load) go into r's
 * notes, the fit's warning to stderr (as "ffnroof CMD: ..."). */
int ffn_prof_cal_run(const char *cmd, const char *title, const ffn_cal_opts *opts,
                     const double load[3], ffn_cal_record *r, ffn_cal_step *failed);

/* Say why ffn_prof_cal_run failed with code rc at step failed (one line); returns the exit code. */
int ffn_prof_cal_fail(const char *cmd, int rc, ffn_cal_step failed);

/* The calibration's files (cli_calib.c): DIR/hw.yaml and DIR/calibration.json of record r
 * (load: the load average at the start). An interrupted record writes only calibration.json,
 * marked incomplete, and fails (exit 1, one line). With remember, a DIR other than
 * FFN_LAST_CAL_DIR is copied there too, for `ffnroof bench`. 0 or an exit code. */
int ffn_prof_cal_write(const char *cmd, const char *dir, const ffn_cal_record *r,
                       const double load[3], bool remember);
/* The calibration.json description of record r: the load average at the start, the peak
 * kinds; with spec_file (the hw.yaml written) also the spec, its notes and whether it is
 * complete. The record must outlive the description. */
ffn_calib_meta ffn_prof_cal_meta(const ffn_cal_record *r, const double load[3],
                                 const char *spec_file);
/* calibration.json of r and m on fp (the kernel runs when any finished); 0 or an FFN_E code. */
int ffn_prof_cal_json(FILE *fp, const ffn_cal_record *r, const ffn_calib_meta *m);
/* The calibration as a table on fp (what `ffnroof calibrate` prints), ending with the files
 * written into dir. */
void ffn_prof_cal_table(FILE *fp, const ffn_cal_record *r, const char *dir);

/* Ctrl-C sets the flag below (a second one kills); installed for the rest of the process, so
 * an interrupt while results are written cannot kill the program halfway through a file. */
void ffn_prof_sigint_install(void);
const volatile sig_atomic_t *ffn_prof_stop_flag(void);

/* The bench JSON's description of a run (date, command line, how ffn_bench_run ended: brc, the
 * host, the load average at the start, the spec and its file), as every writer of bench.json
 * (bench, report --quick) fills it; the counters and notes are the caller's. */
ffn_bench_meta ffn_prof_bench_meta(const char *date, const char *command, int brc,
                                   const ffn_host_info *host, const double load[3],
                                   const ffn_hw *spec, const char *spec_file);

#endif
