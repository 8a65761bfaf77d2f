/* Records of the profiler's files as the charts and reports read them (io/load/profile_load.c,
 * docs/formats-bench.md): what a calibration.json and a bench JSON hold, as plain structs. The
 * roofline a record draws is made in report/ (ffn_plot_device_from_calibration and
 * ffn_plot_device_from_bench, ffnroof/plot.h). Units are SI base units (FLOP/s, B/s, s). */
#ifndef FFNROOF_PROFILE_FILE_H
#define FFNROOF_PROFILE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/sim.h"

#define FFN_PLOT_CALIBRATION_SCHEMA "ffnroof.calibration/1"
#define FFN_PLOT_BENCH_SCHEMA "ffnroof.bench/1"

/* Entries of a calibration's "peaks" and "bandwidth.levels" a record holds (a calibration on
 * one host has a few dozen of each: every peak kind and every kernel's plateaus, on one thread
 * and on all). */
#define FFN_CALIB_FILE_MAX 256

/* One entry of "peaks": a peak kind measured on `threads` threads. */
typedef struct ffn_calib_file_peak {
    char kind[32]; /* "fp32_avx512" as the file writes it ("" when absent) */
    uint64_t threads;
    double flops_per_s; /* NAN when null */
} ffn_calib_file_peak;

/* One entry of "bandwidth.levels": a kernel's plateau on `threads` threads. */
typedef struct ffn_calib_file_level {
    char kernel[16]; /* "read", "copy", "triad" */
    char name[16];   /* "L1", "DRAM" */
    uint64_t threads;
    double bandwidth_bps; /* NAN when null */
} ffn_calib_file_level;

/* What a calibration.json (schema ffnroof.calibration/1) holds for the pictures. */
typedef struct ffn_calib_file {
    char date[64];
    char host[64];    /* host.name, "" when absent */
    uint64_t threads; /* the all-threads count */
    ffn_calib_file_peak peaks[FFN_CALIB_FILE_MAX];
    size_t n_peaks;
    bool has_bandwidth; /* a "bandwidth" object is present */
    ffn_calib_file_level levels[FFN_CALIB_FILE_MAX];
    size_t n_levels;
    double tail_all_threads_bps, tail_one_thread_bps; /* bandwidth.tail_read_bps; NAN when null */
} ffn_calib_file;

/* Read a calibration.json. Refuses a file of another kind or a newer major version, and one
 * without an all-threads compute peak or bandwidth level (FFN_ESCHEMA with diag); more entries
 * than FFN_CALIB_FILE_MAX is FFN_ENOSPACE. */
int ffn_profile_load_calibration(const char *path, ffn_calib_file *out, ffn_diag *diag);

/* One case of a bench.json, as far as the pictures and the validation table need it. */
typedef struct ffn_plot_case {
    int id;
    char kind[8]; /* "dense" | "moe" */
    ffn_phase phase;
    uint64_t batch, tokens, d, f, experts, top_k;
    char act[16];
    char dtype[8];
    char isa[16];
    int threads;
    double median_s, min_s, p90_s;
    double flops, bytes, intensity, achieved_flops;
    double roofline_s, predicted_s, prediction_error, efficiency; /* NAN when null */
    /* The bytes each memory level served per call ("level_bytes", docs/formats-bench.md), for
     * the cache-aware roofline (plot roofline --levels); n_levels 0 when the file has none. */
    char level_names[FFN_HW_MAX_LEVELS + 1][24];
    double level_bytes[FFN_HW_MAX_LEVELS + 1];
    int n_levels;
    char level_bytes_source[16]; /* "model" or "counters" */
} ffn_plot_case;

#define FFN_PLOT_MAX_CASES 256
/* Peaks and on-chip levels of a bench's spec a record holds (those with a positive value). */
#define FFN_BENCH_SPEC_MAX 16

/* The spec a bench ran against, as its file states it. */
typedef struct ffn_plot_bench_spec {
    char name[64]; /* the spec's name, else the host's, else "host" */
    char peak_names[FFN_BENCH_SPEC_MAX][32];
    double peak_flops[FFN_BENCH_SPEC_MAX]; /* the positive peaks, in the file's order */
    int n_peaks;
    double mem_bandwidth_bps; /* NAN when null */
    char onchip_names[FFN_BENCH_SPEC_MAX][24];
    double onchip_bps[FFN_BENCH_SPEC_MAX]; /* named on-chip levels with a positive bandwidth */
    int n_onchip;
} ffn_plot_bench_spec;

typedef struct ffn_plot_bench {
    char date[32];
    char host[128];
    char cpu_model[128];
    bool complete;
    char counters_source[16];
    ffn_plot_bench_spec spec; /* the spec the bench ran against */
    char spec_source[512];
    ffn_plot_case cases[FFN_PLOT_MAX_CASES];
    size_t n_cases;
} ffn_plot_bench;

/* Read a bench.json (schema ffnroof.bench/1). FFN_ESCHEMA for another kind/version, a file
 * without cases or a case without its time; more than FFN_PLOT_MAX_CASES cases is
 * FFN_ENOSPACE. */
int ffn_profile_load_bench(const char *path, ffn_plot_bench *out, ffn_diag *diag);

#endif
