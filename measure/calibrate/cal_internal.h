/* Private to measure/calibrate/: the pieces of the roofs driver (calibrate.c) that its review
 * (cal_review.c) and the tests share, and the steps of the kernel fit (kernel_fit.c) the tests
 * check one by one. The tail's start is defined here, once, so that the driver and the review
 * call each other in one direction only (calibrate.c -> cal_review.c). */
#ifndef FFNROOF_MEASURE_CALIBRATE_INTERNAL_H
#define FFNROOF_MEASURE_CALIBRATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/calibrate.h"

/* --- the roofs (calibrate.c, cal_review.c) ------------------------------------------------- */

/* Where the sweep's tail begins, in bytes: its last octave, c->max_bytes / 2. The memory roof
 * is the median read rate there; a plateau reaching into it is main memory, not a cache. */
static inline double ffn__cal_tail_from(const ffn_calibration *c)
{
    return c->max_bytes / 2;
}

/* How much the read sweep of `threads` threads lost over its last half octave: the median rate
 * at the largest size over the median rate at the size nearest c->max_bytes / sqrt(2) (a
 * point's fastest sample where it has no median); 1 when it cannot tell. Below 0.9, calibrate
 * sweeps further (a cache larger than the LLC reported). */
double ffn__cal_read_tail_drop(const ffn_calibration *c, int threads);
/* Points timed again merged into c's: each of `again` finds c's point of the same kernel,
 * threads and size (within 2%), which keeps the better of the two medians and of the two
 * fastest samples and adds the samples. Returns how many matched. */
int ffn__cal_merge_retimed(ffn_calibration *c, const ffn_bw_point *again, size_t n_again);
/* the all-threads peak over threads x the one-thread peak (calibrate.c; 1 when not comparable) */
double ffn__cal_peak_scaling(const ffn_peak_result *one, const ffn_peak_result *all);

/* --- the kernel fit (kernel_fit.c) --------------------------------------------------------- */

/* --quick's compute-bound calibration runs on a slow level (a measured peak that would take over
 * 50 ms a call at T = 256): fewer tokens, down to 64. Returns how many shrank. */
size_t ffn__kcal_quick_shrink(const ffn_hw *hw, ffn_bench_case *cases, size_t n);

/* Whether a held-out (not fitted) float run of the kernel fit, among the first n_float runs of
 * out, is predicted by hw more than 30% off its median: calibrate then measures every float
 * run once more. */
bool ffn__kcal_checks_missed(const ffn_hw *hw, const ffn_kcal_result *out, size_t n_float);

/* Whether run i of out (dense, measured) is timed once more after the first fit on hw: a float
 * fit run it misses by more than 15%, a fit run that decides its parameter alone (the quantized
 * ones past n_float, the float decodes, and when mode is FFN_KCAL_QUICK every float fit run),
 * and with all every float run. */
bool ffn__kcal_redo(const ffn_hw *hw, const ffn_kcal_result *out, size_t i, size_t n_float,
                    ffn_kcal_mode mode, bool all);

/* After the float fit on hw: each float weight dtype whose largest one-token fit run (among the
 * first n_float runs of out) hw misses by more than 10% gets its own decode fraction,
 * hw->eff.memory_max_gemv_dt[dtype], solved to meet that run; out->notes says which. Returns
 * how many were set. */
size_t ffn__kcal_decode_fractions(ffn_hw *hw, ffn_kcal_result *out, size_t n_float);

#endif
