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

/* 64-byte aligned, rounded up to whole lines; n = 0 gives one line. NULL when out of memory
 * (bench_alloc.c; the caller frees). */
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

#endif
