/* Writers of the profiler's results (docs/formats-bench.md): calibration.json (schema
 * ffnroof.calibration/1) and the bench results as JSON (ffnroof.bench/1) and CSV. They write
 * to a FILE the caller opened (cli/ writes to a temporary file and renames it) and return 0 or
 * FFN_EIO. */
#ifndef FFNROOF_BENCH_IO_H
#define FFNROOF_BENCH_IO_H

#include <stdbool.h>
#include <stdio.h>

#include "ffnroof/hw.h"
#include "ffnroof/profile.h"

#define FFN_CALIB_SCHEMA "ffnroof.calibration/1"
#define FFN_BENCH_SCHEMA "ffnroof.bench/1"

/* What a calibration file says besides the measurements. */
typedef struct ffn_calib_meta {
    bool complete;
    double load_avg[3];                  /* at the start; negative when unknown */
    const char *spec_file;               /* the hw.yaml written ("" or NULL when none) */
    const ffn_hw *spec;                  /* the spec written (NULL when none) */
    const char *peak_kind[FFN_DT_COUNT]; /* the peak kind chosen per dtype, NULL when none */
    const char *notes;                   /* extra "; "-separated notes, or NULL */
} ffn_calib_meta;

/* c: the microbenchmarks; k: the kernel runs and the fit (NULL when not run). */
int ffn_calib_write_json(FILE *fp, const ffn_calibration *c, const ffn_kcal_result *k,
                         const ffn_calib_meta *m);

typedef struct ffn_bench_meta {
    const char *date;
    const char *command;
    bool complete, interrupted;
    const ffn_host_info *host;
    double load_avg[3];
    const ffn_hw *spec; /* NULL when none */
    const char *spec_file;
    const ffn_papi_probe *probe;
    bool sde_read; /* the SDE events were read back through PAPI */
    const char *const *events;
    size_t n_events;
    const char *notes; /* "; "-separated, or NULL */
} ffn_bench_meta;

int ffn_bench_write_json(FILE *fp, const ffn_bench_meta *m, const ffn_bench_result *r, size_t n);
int ffn_bench_write_csv(FILE *fp, const ffn_bench_meta *m, const ffn_bench_result *r, size_t n);
/* The table `ffnroof bench` prints: the spec's roofs (hw may be NULL), one row per case (times in
 * ms, the roof fraction, the prediction and its errors, the peers' medians with our speed-up,
 * the verification error), MoE cases' time split, a legend, and the spec's fit warning. */
int ffn_bench_write_table(FILE *fp, const ffn_hw *hw, const char *spec_file,
                          const ffn_bench_result *r, size_t n, bool any_peer);

#endif
