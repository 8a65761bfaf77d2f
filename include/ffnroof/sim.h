/* The analytic FFN model: pure functions from (model, hardware, run configuration) to FLOPs,
 * bytes, roofline and predicted time per operation, per layer and per model, plus activation
 * memory. No I/O, no allocation. Equations and their sources: docs/model.md. */
#ifndef FFNROOF_SIM_H
#define FFNROOF_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/names.h"
#include "ffnroof/types.h"

#define FFN_MAX_OPS 24

typedef enum ffn_op_kind {
    FFN_OP_GEMM = 0, /* matrix multiply (possibly grouped over experts) */
    FFN_OP_ELEMWISE, /* activation, gate multiply, bias, scoring, top-k */
    FFN_OP_MEMORY,   /* pure data movement (MoE dispatch/combine permutation) */
    FFN_OP_COMM      /* collective over a link (all-reduce, all-to-all) */
} ffn_op_kind;

/* Where the weights live between calls (docs/model.md, "On-chip memory"): cold = read from
 * memory every call (today's model, and a benchmark that flushes its caches); hot = each
 * layer's weights stay in the innermost on-chip level that holds one layer (a benchmark that
 * calls one layer again and again with warm caches); auto = resident only where all the
 * layers' weights of one step fit in a level together (a model that fits the LLC). */
typedef enum ffn_weights { FFN_WEIGHTS_COLD = 0, FFN_WEIGHTS_HOT, FFN_WEIGHTS_AUTO } ffn_weights;

/* Fraction of an on-chip level's capacity that data re-read across calls may occupy: the
 * rest is left to the activations streaming through it and to conflict misses. A stated
 * convention (docs/model.md, "On-chip memory"), not a measurement. */
#define FFN_ONCHIP_USABLE 0.8

/* MoE routing assumptions (docs/model.md). */
typedef struct ffn_moe_opts {
    double zipf_s;            /* expert popularity p_i ~ 1/i^s; 0 = uniform routing */
    const double *popularity; /* borrowed histogram of n_popularity = E weights, or NULL */
    uint64_t n_popularity;
    uint64_t trials; /* Monte-Carlo routing trials; 0 = closed forms where they exist */
    uint64_t seed;
    double capacity_factor; /* overrides the model's; 0 = the model's (0 there = dropless) */
    bool ep_uneven;         /* allow an EP degree that does not divide the experts */
    /* price the routed experts as grouped GEMMs at the spec's efficiency even where the spec
     * carries its engine's fused-MoE kernel families (sim/moe.c) */
    bool generic;
    /* the engine's fused-MoE kernel family to price them with, by the name part an op table's
     * kernel names hold (ffn_moe_kernel_on's `kernel`; an entry the engine runs only when
     * asked included); NULL = the format's default. Borrowed. */
    const char *kernel;
    uint64_t devices_per_node; /* overrides hw->devices_per_node when > 0 */
    /* The routing skew the engines' fused MoE kernels are priced on, as the exponent of the
     * power-law draw of per-expert loads (ffn_moe_fused_draw): >= 0 that exponent (0 =
     * balanced), < 0 the model's (ffn_moe_cfg.routing_alpha; ffn_run_default and
     * ffn_plan_opts_default set -1). Not used under zipf_s or popularity, whose routing the
     * kernels then see, nor by the generic grouped-GEMM model. */
    double routing_alpha;
} ffn_moe_opts;

/* The prompt length every command takes when none is given (predict, compare, sweep, plot, bench
 * --seq; plan and serve --prompt): 1024 tokens, the input length vLLM's and SGLang's serving
 * benchmarks default to (docs/cli.md). */
#define FFN_DEFAULT_PROMPT 1024

/* What to evaluate. ffn_run_default() fills sensible defaults. */
typedef struct ffn_run {
    ffn_phase phase;
    uint64_t batch; /* sequences */
    uint64_t seq;   /* prompt tokens per sequence (prefill) */
    uint64_t chunk; /* prefill chunk size in tokens per sequence; 0 = whole prompt at once */
    ffn_dtype wdtype;
    ffn_dtype adtype;
    unsigned group_size; /* int4 weights: elements per 16-bit scale (default 128) */
    bool zero_point;     /* int4 weights: each group also has a 4-bit zero point */
    /* int8 activations (W8A8): the dtype x, h and y are stored in outside the int8 GEMMs, which
     * the per-token quantisation pass reads (docs/model.md, "Quantized weights and
     * activations"); bf16 by default, fp32 for ffnroof's own kernels. Ignored otherwise. */
    ffn_dtype act_io_dtype;
    uint64_t tp; /* tensor-parallel degree: intermediate dim split across tp devices */
    uint64_t ep; /* expert-parallel degree (MoE layers) */
    bool fused;  /* gate+up as one GEMM with the activation in its epilogue */
    /* With fused: gate+up still one GEMM, but the activation (and gate multiply) is a kernel
     * of its own reading the GEMM's g*[T,f] output: three kernels per layer, as vLLM-style
     * GPU stacks run it (docs/model.md, "Kernels of the FFN"). Ignored when !fused. */
    bool act_separate;
    /* MoC (Mixture-of-Channels): keep only the top moc_k channels of the gate for backward;
     * 0 = off. */
    uint64_t moc_k;
    ffn_moe_opts moe;
    /* Weight residency across calls (cold: the default, today's numbers). */
    ffn_weights weights;
    /* Charge finite on-chip memory: the tiled-GEMM traffic bound per level and the spill of
     * a fused FFN's intermediate beyond the token tile that fits the innermost level
     * (docs/model.md, "On-chip memory"). false: compulsory bytes only, as before. */
    bool onchip;
    /* The on-chip level the weights are resident in, 1-based into hw->levels; 0 = memory, and
     * the part of them it holds (0 or 1 = all: ffn_level_placing). ffn_predict() sets both from
     * `weights`; callers of the layer functions may set them. */
    int weights_level;
    double weights_frac;
    /* Leave ridge_tokens NAN instead of searching for it (a sweep computes it once per
     * configuration with ffn_ridge_tokens(): it does not depend on batch or sequence). */
    bool skip_ridge;
} ffn_run;

/* One operation of one FFN layer on one device. */
typedef struct ffn_op {
    char name[24];
    ffn_op_kind kind;
    ffn_dtype compute_dtype;
    uint64_t m, n, k;   /* GEMM: tokens x out x in (per instance); elementwise: m elements */
    uint64_t instances; /* identical instances (e.g. experts that run), >= 1 */
    double flops;       /* all instances */
    /* Quantisation work on the fp32 vector units, all instances: dequantising weights,
     * quantising activations, rescaling int32 sums (docs/model.md). Not part of flops; its
     * time vec_ops / peak[fp32] adds to the op's compute time. */
    double vec_ops;
    /* The weights of format wdtype (int8/int4 with float activations) the op dequantises, all
     * instances: vec_ops counts 1 op each (2 with an int4 zero point); the spec's measured
     * dequant_cost, where it has one, replaces the 1. */
    double dequant_weights;
    /* the format of the weights a GEMM streams (its decode fraction memory_max_gemv_dt[]);
     * FFN_DT_COUNT where not known (ffn_op_gemm's generic GEMMs) */
    ffn_dtype wdtype;
    /* Token rows whose activations the op quantises on the way in (all instances; 0 when it
     * reads them as they are): an engine's quantisation kernel costs quant_row_s of the spec a
     * row beyond its bytes, where fitted (docs/model.md, "GPU dtypes"). */
    double quant_rows;
    double bytes;              /* compulsory memory traffic, all instances */
    double weight_bytes;       /* the part of bytes that is weights */
    double roofline_s;         /* max(flops/peak, bytes/bw) (comm: bytes/link + latency) */
    double predicted_s;        /* efficiency model (docs/model.md) */
    ffn_bound bound;           /* from the roofline */
    ffn_bound predicted_bound; /* from the efficiency model: its compute term (tiles padded,
                                  utilisation) against its memory term; the roofline's for
                                  the ops it does not model */
    /* On-chip memory (docs/model.md, "On-chip memory"). Inputs, set before ffn_op_recost: */
    int weights_level;   /* 1-based level the weights are read from; 0 = memory */
    double weights_frac; /* the part of them that level holds (the rest from memory); 0 or 1: all */
    bool traffic_bound;  /* charge the tiled-GEMM traffic bound per level (GEMMs) */
    double spill_bytes;  /* part of bytes: a fused intermediate spilled to memory */
    /* Outputs of ffn_op_recost: bytes each source served, [i] on-chip level i (0-based),
     * [FFN_HW_MAX_LEVELS] memory, and the ideal time of the slowest source. */
    double served_bytes[FFN_HW_MAX_LEVELS + 1];
    double memory_s;
} ffn_op;

#define FFN_SRC_MEMORY FFN_HW_MAX_LEVELS

/* One layer (dense or MoE) on one device. */
typedef struct ffn_layer_cost {
    ffn_op ops[FFN_MAX_OPS];
    int n_ops;
    double flops, vec_ops, bytes, weight_bytes;
    double roofline_s;  /* sum of the ops' roofline times */
    double predicted_s; /* sum of the ops' predicted times, communication included */
    double comm_s;      /* the communication part of predicted_s */
    double compute_s;   /* sum of flops/peak + vec_ops/peak[fp32] (ideal) */
    double memory_s;    /* sum of bytes/bw (ideal) */
} ffn_layer_cost;

/* Activation memory of the FFN, itemised (bytes, per device). */
typedef struct ffn_act_mem {
    /* inference: transient peak of one layer's FFN */
    double infer_input_bytes;        /* x [T, d], live for the residual */
    double infer_intermediate_bytes; /* gate/up outputs and h at the peak */
    double infer_output_bytes;       /* y [T, d] */
    double infer_peak_bytes;
    uint64_t infer_tokens; /* T the peak was computed for (a chunk when chunked) */
    /* training: saved for backward per layer, three recompute policies */
    double train_input_bytes;            /* input of the first linear */
    double train_preact_bytes;           /* gate (and up) outputs: the activation's inputs */
    double train_postact_bytes;          /* activation output: the input of the down projection */
    double train_mask_bytes;             /* dropout mask, 1 byte per element, when dropout > 0 */
    double train_layer_bytes;            /* no recompute */
    double train_layer_actrecomp_bytes;  /* activation recomputed from its input */
    double train_layer_fullrecomp_bytes; /* only the layer input kept */
    double train_model_bytes;            /* no recompute, all layers */
    double train_model_actrecomp_bytes;
    double train_model_fullrecomp_bytes;
} ffn_act_mem;

/* Routing statistics of one MoE layer for T tokens (sim/moe.c). */
typedef struct ffn_moe_stats {
    double experts_touched;        /* expected distinct experts hit by the T tokens */
    double experts_touched_device; /* ... among the experts of the most loaded device */
    double mean_expert_load;       /* token copies per expert, T*k/E */
    double max_expert_load;        /* expected load of the most loaded expert */
    double imbalance;              /* max/mean expert load */
    double max_device_load;        /* expected token copies on the most loaded device */
    double device_imbalance;       /* max/mean device load */
    double dropped_fraction;       /* token copies over capacity, when a capacity factor is set */
    bool monte_carlo;              /* from simulation (else closed forms) */
} ffn_moe_stats;

/* MoE breakdown of one MoE layer on the most loaded device. */
typedef struct ffn_moe_detail {
    ffn_moe_stats stats;
    double experts_per_device;
    double expert_weight_bytes_device; /* all local experts: what must fit in memory */
    double router_s, dispatch_s, expert_s, shared_s, combine_s, alltoall_s;
    double alltoall_bytes; /* one direction, whole EP group: T*k*d*bytes*(N-1)/N */
    double share_of_ffn;   /* MoE layers' share of the model's FFN predicted time */
    /* The engine's fused-MoE kernel family that priced top-k, dispatch, the routed experts and
     * the combine (sim/moe.c; "" = the generic ops): its `kernels` name, weight format and
     * engine, its row tile and padded rows on the busiest device, the time of its kernels in
     * one layer (part of the times above), and the range measured / predicted it carries on
     * this device (ffn_moe_kernel_on) */
    char fused[48];
    ffn_dtype fused_dtype;
    ffn_engine fused_engine;
    unsigned fused_block_m;
    double fused_padded_rows;
    double fused_s, fused_p10, fused_p90;
    double fused_alpha; /* the power-law exponent of the experts' loads it was priced on; 0 =
                           the routing statistics' copies (docs/model.md, "Routing skew") */
} ffn_moe_detail;

/* Whole-model FFN result for one run. */
typedef struct ffn_result {
    ffn_run run;
    uint64_t tokens; /* tokens per step (T) */
    uint64_t steps;  /* prefill chunks (1 unless chunked) */
    ffn_dtype compute_dtype;
    double peak_flops; /* peak of compute_dtype used */
    uint64_t dense_layers, moe_layers;
    ffn_layer_cost dense; /* valid when dense_layers > 0 */
    ffn_layer_cost moe;   /* valid when moe_layers > 0 */
    ffn_moe_detail moe_detail;
    /* whole model, all layers, all steps, per device; vec_ops: the quantisation's vector work
     * (ffn_op.vec_ops), not part of flops */
    double flops, vec_ops, bytes, weight_bytes, intensity;
    double roofline_s, predicted_s, comm_s;
    /* The range of predicted_s: predicted_s times the device's p10 and p90 ratios
     * measured/predicted (ffn_hw_unc_range); unc_default when they are the stated default. */
    double predicted_p10_s, predicted_p90_s;
    bool unc_default;
    /* the part of predicted_s the engine's fused-MoE kernels take (ffn_moe_detail.fused; 0 under
     * the generic model): its range is the kernel family's, the rest's the device's */
    double moe_fused_s;
    ffn_bound bound;
    /* Weight residency: the 1-based level the weights were placed in (0 = memory), the
     * working set held against it (one layer for hot, all layers of a step for auto), the part
     * of it the level holds (1 = all; less when the working set is larger than every level:
     * ffn_level_placing), and whether that level has no bandwidth in the spec (capacity only:
     * charged at memory). */
    int weights_level;
    double weights_working_set_bytes;
    double weights_frac; /* the part of the working set that level holds (1: all of it) */
    bool weights_level_no_bw;
    double ridge_tokens; /* T at which the FFN turns compute-bound; INFINITY if never */
    ffn_act_mem mem;
} ffn_result;

void ffn_run_default(ffn_run *r);

/* Compute dtype implied by (weights, activations): the wider of the two (W4A16 -> 16-bit peak,
 * W8A8 -> int8, fp8 x fp8-block -> fp8-block), falling back to the next wider dtype the device
 * has units for; a narrow float format without units runs at 16 bits (fp8 on an A100, nvfp4
 * on an H100: the weights are dequantised). */
ffn_dtype ffn_compute_dtype(const ffn_hw *hw, ffn_dtype w, ffn_dtype a);
/* The weights are dequantised on the way into the dot products: narrower than 16 bits and
 * multiplied in a wider floating-point dtype (W4A16, W8A16, fp4 weights on a device without
 * fp4 units). */
bool ffn_weights_dequantised(const ffn_hw *hw, ffn_dtype w, ffn_dtype a);
/* The activations are quantised on the way into each GEMM (W8A8, fp8, fp8-block, nvfp4,
 * mxfp4 activations on a device with those units): each GEMM whose input is not already
 * quantised runs the quantisation pass over it. */
bool ffn_acts_quantised(const ffn_hw *hw, ffn_dtype w, ffn_dtype a);
/* Activation formats that exist only inside a GEMM, quantised from act_io_dtype on the way in:
 * int8, fp8, fp8-block, nvfp4, mxfp4. */
bool ffn_dtype_quant_act(ffn_dtype dt);

/* Bytes per element of the activations x, h and y in memory: act_io_dtype's when the
 * activations are a quantised format (ffn_dtype_quant_act: W8A8, fp8: the engines quantise
 * them per token or per tensor on the way into each GEMM), else adtype's. */
double ffn_run_act_bytes(const ffn_run *run);

/* FLOPs per element of an activation (docs/model.md table): relu 1, gelu 8, gelu_tanh 8,
 * silu 4; gated forms add 1 for the gate multiply. */
double ffn_act_flops(ffn_act a);

/* Peak FLOP/s of math in dtype cdt on hw, the one rule every cost uses (the layers' ops and the
 * planner's attention and LM head alike): the device's peak for cdt; where it lists none, the
 * first it lists of fp32, tf32, bf16, fp16, fp8 (widest first); 1 when it lists no peak at all,
 * so that a time stays finite. */
double ffn_peak_flops(const ffn_hw *hw, ffn_dtype cdt);
/* Ideal roofline time of an op: max(flops/peak, bytes/bw), peak = ffn_peak_flops(hw, cdt). */
double ffn_roofline_s(const ffn_hw *hw, double flops, double bytes, ffn_dtype cdt);
/* Predicted time of a GEMM (m x n x k, `instances` run back-to-back in one grouped launch). */
double ffn_predict_gemm_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                          double flops, double bytes, ffn_dtype cdt);
/* Predicted time of an elementwise / memory op. */
double ffn_predict_elem_s(const ffn_hw *hw, double flops, double bytes);
/* Tile/wave-quantization efficiency of an [m,k] x [k,n] GEMM (instances of it in one grouped
 * launch) computing in cdt, on the best of hw's tiles for cdt, in (0, 1]. */
double ffn_wave_efficiency(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                           ffn_dtype cdt);

/* Rows up to which a GEMM computing in cdt runs as a streaming GEMV and is served at
 * memory_max_gemv: the dtype's tiles_by_dtype gemv_rows where set (a CPU kernel that streams
 * its weights for up to that many tokens), else 1 (a matrix-vector product only). */
uint64_t ffn_gemv_rows(const ffn_hw *hw, ffn_dtype cdt);

/* Waves the best tile of that GEMM runs in over hw's compute units (1 without tiles). */
uint64_t ffn_wave_count(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                        ffn_dtype cdt);
/* The tile pipeline's compute time of that GEMM (docs/model.md, "The tile pipeline"): the best
 * configuration of hw's tiles, or the dtype's kernel rule, at the dtype's utilisation; 0 when hw
 * prices GEMMs by waves (gemm_model waves) or has no units. */
double ffn_pipeline_compute_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k,
                              uint64_t instances, ffn_dtype cdt);
/* Wave utilisation gamma - alpha / waves of dtype cdt (floored at 0.02, capped at 1), or NAN
 * when e has none for cdt. */
double ffn_wave_util(const ffn_eff *e, ffn_dtype cdt, double waves);
/* The share of the dense peak large, well-shaped GEMMs of dtype cdt reach: its wave model's
 * gamma, else its (or the device's) compute_max, 1 with neither (the tile pipeline's
 * utilisation). */
double ffn_large_gemm_util(const ffn_eff *e, ffn_dtype cdt);

/* Fill op as a GEMM / elementwise op and cost it. */
void ffn_op_gemm(ffn_op *op, const ffn_hw *hw, const char *name, uint64_t m, uint64_t n, uint64_t k,
                 uint64_t instances, double wbytes, double abytes, ffn_dtype cdt,
                 double epilogue_flops_per_out);
void ffn_op_elem(ffn_op *op, const ffn_hw *hw, const char *name, ffn_op_kind kind, double elems,
                 double flops, double bytes);
/* All-reduce of `bytes` (the whole buffer) over n devices of link (sim/collective.c): the
 * link's fitted all-reduce where its `collectives:` cover n devices, the faster of NCCL's and
 * the engine's custom kernel where both are fitted (as vLLM picks); else the ring,
 * 2(n-1)/n * bytes / bw + 2(n-1) * latency. */
void ffn_op_allreduce(ffn_op *op, const ffn_link *link, const char *name, double bytes, uint64_t n);
/* Any collective as an op (the message as ffn_coll_op counts it), as ffn_coll_time_s costs it. */
void ffn_op_collective(ffn_op *op, const ffn_link *link, ffn_coll_op kind, const char *name,
                       double bytes, uint64_t n);
/* Seconds of collective kind over n devices of link: the fitted latency and bus bandwidth
 * (interpolated linearly in n between fitted group sizes) where link->coll covers n, else the
 * ring model of the link's bandwidth and latency (docs/model.md, "Collectives"); *fitted (may be
 * NULL) says which. 0 for n <= 1 or no bytes. */
double ffn_coll_time_s(const ffn_link *link, ffn_coll_op kind, double bytes, uint64_t n,
                       bool *fitted);
/* The range of that prediction: the fitted group's p10 and p90 of measured/predicted (the wider
 * of two neighbours when interpolated; returns true), else the spec's range (returns false). */
bool ffn_coll_range(const ffn_hw *hw, const ffn_link *link, ffn_coll_op kind, uint64_t n,
                    double *p10, double *p90);
/* The ring's bus factor of op on n devices: 2 (n-1)/n for an all-reduce (NCCL's or custom),
 * (n-1)/n for the others. */
double ffn_coll_bus_factor(ffn_coll_op op, double n);
/* The collective's name as specs and tables write it (all_reduce, all_gather, reduce_scatter,
 * alltoall, custom_all_reduce). */
const char *ffn_coll_name(ffn_coll_op kind);

/* Cost one dense FFN layer of intermediate f on T tokens (per device: f/tp). */
int ffn_dense_layer(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                    bool bias, uint64_t T, ffn_layer_cost *out);

/* Evaluate the whole model. Returns 0, FFN_EINVAL (bad run: zero batch, tp that does not divide
 * the intermediate size, ...) with a message in diag. */
int ffn_predict(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, ffn_result *out,
                ffn_diag *diag);

/* Token count per step at which the FFN's ideal compute time reaches its memory time;
 * INFINITY if it never does. Independent of run->batch, seq and chunk. */
double ffn_ridge_tokens(const ffn_model *m, const ffn_hw *hw, const ffn_run *run);

/* Activation memory for T tokens per step (see ffn_act_mem). */
void ffn_activation_memory(const ffn_model *m, const ffn_run *run, uint64_t T, uint64_t layers,
                           ffn_act_mem *out);

/* Routing statistics for T tokens over E experts (top-k) on n_dev devices. Closed forms for
 * uniform routing without trials; otherwise a seeded Monte-Carlo simulation. */
int ffn_moe_routing(uint64_t E, uint64_t k, uint64_t T, uint64_t n_dev, const ffn_moe_opts *o,
                    double capacity_factor, ffn_moe_stats *out);
/* Expected distinct experts hit by T tokens under uniform top-k routing: E(1-(1-k/E)^T). */
double ffn_moe_coverage_uniform(uint64_t E, uint64_t k, uint64_t T);
/* The routing skew a layer's fused kernels are priced on (docs/model.md, "Routing skew"): the
 * run's routing_alpha where it sets one (>= 0), else the model's; 0 where the run routes by its
 * own law (zipf_s, popularity). o may be NULL (the model's). */
double ffn_moe_routing_alpha(const ffn_moe_cfg *c, const ffn_moe_opts *o);
/* Cost one MoE layer for T tokens entering the EP group. */
int ffn_moe_layer(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, uint64_t T,
                  ffn_layer_cost *out, ffn_moe_detail *detail, ffn_diag *diag);

/* Building blocks shared by sim/ffn.c and sim/moe.c. */
int ffn_dense_ops(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                  bool bias, uint64_t T, uint64_t instances, const char *prefix,
                  ffn_layer_cost *out);
/* One linear layer [m, k] x [k, n] as a serving engine runs it: weights in run->wdtype with
 * their scales, input and output in memory as ffn_run_act_bytes, the input quantised on the
 * way in where ffn_acts_quantised (the pass counted in the GEMM op), the weights dequantised
 * where ffn_weights_dequantised. One op, costed, into out. Returns 0 or FFN_EINVAL. */
int ffn_linear_ops(const ffn_hw *hw, const ffn_run *run, uint64_t m, uint64_t n, uint64_t k,
                   ffn_layer_cost *out);
/* The same with FLOPs and activation bytes scaled by tok_scale and weight bytes by w_scale
 * before costing (MoE: expected, fractional tokens and experts on a rounded grid). */
int ffn_dense_ops_scaled(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                         bool bias, uint64_t T, uint64_t instances, const char *prefix,
                         double tok_scale, double w_scale, ffn_layer_cost *out);
void ffn_layer_sum(ffn_layer_cost *c, const ffn_hw *hw);
/* (Re)derive an op's times and bound from its counts. */
void ffn_op_recost(ffn_op *op, const ffn_hw *hw);
/* Fill an op's counts without costing it (call ffn_op_recost after adjusting them). */
void ffn_op_gemm_counts(ffn_op *op, const char *name, uint64_t m, uint64_t n, uint64_t k,
                        uint64_t instances, double wbytes, double abytes, ffn_dtype cdt,
                        double epilogue_flops_per_out);
void ffn_op_elem_counts(ffn_op *op, const char *name, ffn_op_kind kind, double elems, double flops,
                        double bytes);

/* On-chip memory (docs/model.md, "On-chip memory"). */
/* Usable capacity of level i (0-based) of hw for data re-read across calls, whole device. */
double ffn_level_usable_bytes(const ffn_hw *hw, int i);
/* The innermost on-chip level (1-based) that keeps data across calls (not a scratchpad) and
 * whose usable capacity holds bytes; 0 when none. */
int ffn_level_holding(const ffn_hw *hw, double bytes);
/* Where data of `bytes` re-read across calls stays (docs/model.md, "On-chip memory"): the level
 * that holds it all (ffn_level_holding, *frac = 1); else, when it is larger than every level,
 * part of it in the largest level that keeps data across calls (the outermost of equals) and
 * part of a larger working set (not keeps_part: false), *frac = that level's usable capacity /
 * bytes (what an ideal replacement keeps of a cyclic sweep; a level without a bandwidth is
 * charged at memory's, as a resident one); 0 (and *frac 0) when there is none. */
int ffn_level_placing(const ffn_hw *hw, double bytes, double *frac);
/* Tiled-GEMM traffic bound into a fast memory of s_bytes per slice for `instances` GEMMs
 * m x n x k of elem_bytes per element: 2 m n k e / sqrt(s/e) bytes, all slices together. */
double ffn_gemm_traffic_bytes(double m, double n, double k, double instances, double elem_bytes,
                              double s_bytes);
/* Tokens of a fused FFN's g*[t, f] intermediate the innermost level holds (UINT64_MAX without
 * levels). */
uint64_t ffn_fused_token_tile(const ffn_hw *hw, double g, uint64_t f, double abytes);
/* Put the GEMM weights of a layer cost in level (1-based; 0 = memory), re-cost, re-sum. */
void ffn_layer_place_weights(ffn_layer_cost *c, const ffn_hw *hw, int level, double frac);
/* Name of a source of an op's bytes: a level's name, or "memory" for FFN_SRC_MEMORY. */
const char *ffn_source_name(const ffn_hw *hw, int src);
/* The source that served most of an op's bytes (the level its bytes "come from"). */
int ffn_op_main_source(const ffn_op *op);
const char *ffn_weights_name(ffn_weights w);
int ffn_weights_parse(const char *s, ffn_weights *out);

#endif
