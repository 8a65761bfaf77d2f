/* Private to measure/: the bench runner's prepared layer (bench_layer.c), which the timing loop
 * (bench_run.c) runs, and the helpers the runner's files share. */
#ifndef FFNROOF_MEASURE_BENCH_INTERNAL_H
#define FFNROOF_MEASURE_BENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/bench.h"

#include "bench_moe.h"

/* A layer's weights, packed once for one kernel, and its buffers for up to Tmax tokens. */
typedef struct ffn_blayer {
    ffn_bench_kind kind;
    ffn_kshape shape;
    size_t E, k;
    ffn_dtype wdtype;
    const ffn_kernel *kern;
    float *w;         /* all unpacked fp32 weights, one block */
    ffn_kweights *kw; /* [E] (1 for dense) */
    float *router;    /* [d][E] (MoE) */
    void *packed;
    size_t packed_bytes;
    ffn_bmoe *moe;
    float *x, *y, *yref; /* [Tmax][d] */
    size_t Tmax;
    void *ws;
    size_t ws_bytes;
} ffn_blayer;

/* 64-byte aligned, rounded up to whole lines; n = 0 gives one line. NULL when out of memory. */
void *ffn__bench_xalloc(size_t n);
/* t, or for t <= 0 ("all cores") the CPUs this process may run on. */
int ffn__bench_threads(int t);

void ffn_blayer_free(ffn_blayer *L);
/* Whether L already holds c's layer packed for k. */
bool ffn_blayer_same(const ffn_blayer *L, const ffn_bench_case *c, const ffn_kernel *k);
/* Random weights for c (from seed), packed for k. */
int ffn_blayer_prepare(ffn_blayer *L, const ffn_bench_case *c, const ffn_kernel *k, uint64_t seed,
                       ffn_diag *diag);
/* Buffers for T tokens and `threads` threads, and fresh random inputs x. */
int ffn_blayer_buffers(ffn_blayer *L, size_t T, int threads, uint64_t seed, ffn_diag *diag);
/* y = FFN(x) for T tokens; MoE: timing[4] and tokens[E] as ffn_bmoe_forward (NULL to skip). */
int ffn_blayer_forward(ffn_blayer *L, size_t T, int threads, double *timing, size_t *tokens);
/* Compare y of the last call with the reference kernel on the first tokens; fills r's
 * verified, verify_tokens and max_rel_err. */
int ffn_blayer_verify(ffn_blayer *L, size_t T, ffn_bench_result *r, ffn_diag *diag);

/* --quick's compute-bound calibration runs on a slow level (a measured peak that would take over
 * 50 ms a call at T = 256): fewer tokens, down to 64 (kernel_fit.c). Returns how many shrank. */
size_t ffn__kcal_quick_shrink(const ffn_hw *hw, ffn_bench_case *cases, size_t n);

/* Whether a held-out (not fitted) float run of the kernel fit, among the first n_float runs of
 * out, is predicted by hw more than 30% off its median: calibrate then measures every float
 * run once more (kernel_fit.c). */
bool ffn__kcal_checks_missed(const ffn_hw *hw, const ffn_kcal_result *out, size_t n_float);

/* Whether run i of out (dense, measured) is timed once more after the first fit on hw: a float
 * fit run it misses by more than 15%, a fit run that decides its parameter alone (the quantized
 * ones past n_float, the float decodes, and when mode is FFN_KCAL_QUICK every float fit run),
 * and with all every float run (kernel_fit.c). */
bool ffn__kcal_redo(const ffn_hw *hw, const ffn_kcal_result *out, size_t i, size_t n_float,
                    ffn_kcal_mode mode, bool all);

/* After the float fit on hw: each float weight dtype whose largest one-token fit run (among the
 * first n_float runs of out) hw misses by more than 10% gets its own decode fraction,
 * hw->eff.memory_max_gemv_dt[dtype], solved to meet that run; out->notes says which. Returns
 * how many were set (kernel_fit.c). */
size_t ffn__kcal_decode_fractions(ffn_hw *hw, ffn_kcal_result *out, size_t n_float);

#endif
