/* One Mixture-of-Experts layer as the serving engines' fused MoE modules run it on a GPU (vLLM's
 * and SGLang's fused_moe Triton kernels, TensorRT-LLM's CUTLASS MoE): the tokens each expert
 * receives drawn as NVIDIA aiconfigurator's collector draws them (balanced, or power-law), the
 * shard's experts under expert parallelism, each active expert's rows padded to the kernel's
 * row tile, two grouped GEMMs costed by the simulator's GEMM model (sim/cost.c) with the
 * module's own latency floor, and the small kernels around them (router top-k, align/sort,
 * activation quantisation, SiLU-and-multiply, combine). Predicts the rows of an ffn_aic_moe
 * table (include/ffnroof/aic.h). Equations, sources and the fitted values:
 * docs/model.md, "MoE layers as fused kernels". Pure functions: no I/O, no allocation (fixed
 * arrays of at most FFN_MOE_FUSED_MAX_EXPERTS experts on the stack). */
#ifndef FFNROOF_MOE_FUSED_H
#define FFNROOF_MOE_FUSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/aic.h"
#include "ffnroof/hw.h"
#include "ffnroof/moe_kernel.h"
#include "ffnroof/sim.h"
#include "ffnroof/types.h"

/* Most experts one layer may have (more is FFN_EINVAL). */
#define FFN_MOE_FUSED_MAX_EXPERTS 1024
/* Power-law draws a prediction averages: the collector times 5 draws of router logits back to
 * back and reports the mean (collector/vllm/collect_moe.py, `num_iter = 5`). */
#define FFN_MOE_FUSED_DRAWS 5
/* Default block shape (BLOCK_SIZE_N, BLOCK_SIZE_K) of the grouped GEMMs' latency floor; fp8-block
 * weights use their 128 x 128 scale block (vLLM fused_moe.py, get_default_config). */
#define FFN_MOE_FUSED_BLOCK_N 64
#define FFN_MOE_FUSED_BLOCK_K 64

/* The kernels of one call, in order. */
typedef enum ffn_moe_fused_kernel {
    FFN_MF_ROUTER = 0, /* top-k over the router logits */
    FFN_MF_ALIGN,      /* moe_align_block_size: sort the copies by expert, pad to block_m */
    FFN_MF_QUANT_IN,   /* fp8 / fp8-block activations: quantise the input tokens */
    FFN_MF_GATE_UP,    /* grouped GEMM [rows_e, d] x [d, 2 f/tp] over the active experts */
    FFN_MF_ACT,        /* SiLU-and-multiply of the gate_up output */
    FFN_MF_QUANT_MID,  /* fp8 / fp8-block activations: quantise the intermediate */
    FFN_MF_DOWN,       /* grouped GEMM [rows_e, f/tp] x [f/tp, d] */
    FFN_MF_COMBINE,    /* weighted sum of each token's top-k outputs */
    FFN_MF_MODULE,     /* the module's fixed cost (module_s, and ep_s under EP) */
    FFN_MF_COUNT
} ffn_moe_fused_kernel;

/* "router", "align", ...; NULL out of range. */
const char *ffn_moe_fused_kernel_name(ffn_moe_fused_kernel k);

/* The parameters fitted to vLLM 0.24's Triton fused_moe on an H100 SXM (hw/h100-sxm.yaml): for
 * 16-bit activations (bf16, and weight-only int4 / mxfp4, dequantised into bf16 GEMMs) and for
 * fp8 and fp8-block activations (quantised per token group on the way into each GEMM). Never
 * NULL. */
const ffn_moe_fused_params *ffn_moe_fused_default_params(ffn_dtype adtype);

/* How to predict. ffn_moe_fused_opts_default() fills the defaults; a zeroed struct means the
 * same except for `weights` (cold). */
typedef struct ffn_moe_fused_opts {
    uint64_t seed;  /* the power-law draws (the balanced one has no randomness) */
    unsigned draws; /* power-law draws averaged; 0 = FFN_MOE_FUSED_DRAWS */
    /* Row tile of the grouped GEMMs (BLOCK_SIZE_M); 0 = ffn_moe_fused_block_m() of the mean
     * rows per active expert. block_n, block_k: the latency floor's block; 0 = 128 for
     * fp8-block weights, else FFN_MOE_FUSED_BLOCK_N / _K. */
    unsigned block_m, block_n, block_k;
    /* Whose module, where the parameters leave the layout to the engine (FFN_MF_PATH_ENGINE):
     * vLLM and SGLang sorted, TensorRT-LLM permuted. FFN_ENGINE_NONE reads as vLLM. */
    ffn_engine engine;
    /* Where the active experts' weights live between back-to-back calls: cold (memory), hot or
     * auto (on chip when they fit the innermost level that keeps data across calls). */
    ffn_weights weights;
    /* The experts are not gated: one up projection [d, f/tp] and an elementwise activation
     * (Nemotron-H's relu2), not gate and up [d, 2 f/tp] and SiLU-and-multiply. A property of
     * the model that the table rows do not carry. */
    bool nongated;
    /* Borrowed for the call; NULL = ffn_moe_fused_default_params(row->adtype). */
    const ffn_moe_fused_params *params;
} ffn_moe_fused_opts;

void ffn_moe_fused_opts_default(ffn_moe_fused_opts *o);

/* One predicted call, on the shard the collector measures (EP rank 0: the busiest group). The
 * power-law numbers are means over the draws. */
typedef struct ffn_moe_fused_cost {
    double time_s;                 /* the sum of kernel_s */
    double kernel_s[FFN_MF_COUNT]; /* per kernel (0 for a kernel the dtype does not run) */
    double gemm_flops;             /* both grouped GEMMs, on the padded rows */
    double gemm_bytes;             /* both grouped GEMMs: weights with scales + activations */
    double weight_bytes;           /* the active experts' weights with their scales */
    uint32_t local_experts;        /* experts / ep */
    double active_experts;         /* local experts that receive tokens */
    double local_copies;           /* token copies routed to the shard's experts */
    double padded_rows;            /* sum over active experts of ceil(rows / block_m) block_m */
    double max_expert_tokens;      /* the most token copies on one local expert */
    unsigned block_m;              /* of the last draw */
    ffn_op gate_up, down;          /* the GEMM ops of the last draw (counts and times) */
    /* every kernel as an op, named by ffn_moe_fused_kernel_name (the module's fixed cost an op
     * of no work), its work and times the draws' means; zeroed for a kernel the dtype does not
     * run */
    ffn_op ops[FFN_MF_COUNT];
} ffn_moe_fused_cost;

/* 0 when row can be predicted, else FFN_EINVAL: a NULL row, zero tokens, hidden, inter or
 * experts, more than FFN_MOE_FUSED_MAX_EXPERTS experts or 2^32 tokens, topk 0 or above
 * experts, tp 0 or not dividing inter, ep 0 or not dividing experts, an unknown draw, a
 * power-law alpha that is not positive and finite. */
int ffn_moe_fused_check(const ffn_aic_moe *row);

/* The tokens x topk copies each of row's experts receives, as aiconfigurator's collector draws
 * them (collector/helper.py): balanced_logits (token t takes experts (t + j s) mod E, j < topk,
 * s = ceil(E / topk), or floor(t s / T + j s) mod E in bf16 when T < s) or power_law_logits_v3
 * (per-expert counts from a power law of exponent alpha, rounded to sum T topk, each at most T,
 * the group of experts / ep experts with the most copies swapped to EP rank 0). counts has
 * n >= row->experts entries; the shard's experts are counts[0 .. experts / ep). Deterministic
 * given seed (which the balanced draw ignores). Returns 0 or FFN_EINVAL. */
int ffn_moe_fused_draw(const ffn_aic_moe *row, uint64_t seed, uint64_t *counts, size_t n);

/* The default row tile for a mean of rows_per_expert rows per active expert: the largest of 16,
 * 32 and 64 not above it (16 below 32), the range vLLM's get_default_config picks
 * BLOCK_SIZE_M from. */
unsigned ffn_moe_fused_block_m(double rows_per_expert);

/* Cost one call from the copies each expert receives (counts[0 .. experts), n >= experts, the
 * shard's experts first, as ffn_moe_fused_draw leaves them). o may be NULL (the defaults).
 * Returns 0 or FFN_EINVAL. */
int ffn_moe_fused_cost_counts(const ffn_hw *hw, const ffn_aic_moe *row, const uint64_t *counts,
                              size_t n, const ffn_moe_fused_opts *o, ffn_moe_fused_cost *out);

/* Predict one row: draw (o->draws power-law draws with seeds o->seed, o->seed + 1, ...; one
 * balanced draw), cost each, average. o may be NULL (the defaults). Returns 0 or FFN_EINVAL. */
int ffn_moe_fused_predict(const ffn_hw *hw, const ffn_aic_moe *row, const ffn_moe_fused_opts *o,
                          ffn_moe_fused_cost *out);

/* The part of a predicted call a table of the given kind times (include/ffnroof/aic.h, `#
 * timed:`): the whole call, or the grouped GEMMs with what a tuner's kernels fuse into them
 * (gate_up, the activation, the intermediate's quantisation, down). */
double ffn_moe_fused_timed_s(const ffn_moe_fused_cost *c, ffn_aic_timed timed);

/* Predict n rows into time_s[0 .. n) (seconds; NAN for a row ffn_moe_fused_check refuses).
 * Returns 0, or FFN_EINVAL when some row was refused (the first one's index in *first_bad when
 * first_bad is not NULL) or when hw, rows or time_s is NULL with n > 0. */
int ffn_moe_fused_predict_many(const ffn_hw *hw, const ffn_aic_moe *rows, size_t n,
                               const ffn_moe_fused_opts *o, double *time_s, size_t *first_bad);

#endif
