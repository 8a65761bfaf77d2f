/* Capacity planning over the analytic model (sim/plan.c, docs/plan.md).
 *
 * A plan answers, for one model on one device type: how much memory each layout (attention TP x
 * DP, experts EP over the same devices, pipeline stages; ffn_plan_shape) needs per device, which
 * layouts fit within a device limit, the largest decode (or prefill) batch that meets the latency
 * SLO, the tokens/s per device and for the fleet, the devices needed for a throughput target,
 * tokens/s per watt and per dollar, and what limits the answer. The step time is the FFN from
 * ffn_predict() (MoE included) plus the rest of the layer at a coarser level: attention
 * projections, the KV-cache read (decode) or attention FLOPs (prefill), the attention's TP
 * all-reduce and the LM head. Pure functions: no I/O, no allocation. The grid sweeps behind
 * `ffnroof sweep` are in ffnroof/sweep.h. */
#ifndef FFNROOF_PLAN_H
#define FFNROOF_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

#define FFN_PLAN_MAX_DEGREES 16 /* TP, DP, EP or PP candidates */
#define FFN_PLAN_MAX_LAYOUTS 1024

/* A replica's layout as serving engines express it (docs/plan.md, "Layouts"): each of pp
 * pipeline stages holds layers / pp of the layers on tp x dp devices; attention (and the dense
 * FFN layers) runs tensor-parallel over tp and data-parallel over dp, each dp rank with its own
 * share of the sequences; the routed experts run expert-parallel over ep of those same devices,
 * each expert tensor-parallel over the tp x dp / ep devices of its EP rank. "TP 8 with EP 8" of
 * vLLM or SGLang is {tp 8, dp 1, ep 8, pp 1}: 8 devices; DeepSeek's attention DP with EP is
 * {tp 1, dp 8, ep 8, pp 1}. A dense model has dp = ep = 1 (more replicas instead). */
typedef struct ffn_plan_shape {
    uint64_t tp, dp, ep, pp;
} ffn_plan_shape;

/* A layout as the tables name it: "TP4", "DP8/EP8", "TP2/DP4/EP8", "TP4/PP2" (TP shown when it
 * is more than 1 or nothing else is). */
void ffn_plan_shape_name(const ffn_plan_shape *s, char *buf, size_t n);

/* Devices per stage (tp x dp), per replica (x pp), and the experts' TP degree (stage / ep). */
static inline uint64_t ffn_plan_shape_stage(const ffn_plan_shape *s)
{
    return s->tp * s->dp;
}
static inline uint64_t ffn_plan_shape_devices(const ffn_plan_shape *s)
{
    return s->tp * s->dp * s->pp;
}
static inline uint64_t ffn_plan_shape_expert_tp(const ffn_plan_shape *s)
{
    return s->ep ? s->tp * s->dp / s->ep : s->tp * s->dp;
}

typedef enum ffn_plan_phase {
    FFN_PLAN_DECODE = 0, /* serve: decode batch under the per-token SLO */
    FFN_PLAN_PREFILL,    /* prefill batch under the time-to-first-token SLO */
    FFN_PLAN_BOTH        /* decode, with each request's prefill charged and TTFT checked */
} ffn_plan_phase;

/* What limits a layout's answer (docs/plan.md, "Bottleneck"). */
typedef enum ffn_bottleneck {
    FFN_BN_FFN_COMPUTE = 0, /* the FFN's GEMMs at the compute peak */
    FFN_BN_FFN_WEIGHTS,     /* the FFN's weights streamed from memory */
    FFN_BN_KV_CACHE,        /* the KV-cache read of decode attention */
    FFN_BN_ATTENTION,       /* attention projections and (prefill) attention FLOPs */
    FFN_BN_INTERCONNECT,    /* TP all-reduces and EP all-to-alls */
    FFN_BN_CAPACITY,        /* memory capacity: the batch (or the model) does not fit */
    FFN_BN_DEVICES,         /* the target needs more devices than the limit */
    FFN_BN_COUNT
} ffn_bottleneck;

/* Which end of a prediction's range a plan sizes against (docs/plan.md, "Margin"). */
typedef enum ffn_plan_margin {
    FFN_MARGIN_MEDIAN = 0, /* the predicted (median) step time */
    FFN_MARGIN_P90         /* the pessimistic end: step time x the device's p90 ratio */
} ffn_plan_margin;

typedef enum ffn_objective {
    FFN_OBJ_DEVICES = 0,       /* fewest devices for the target (then tokens/s per device) */
    FFN_OBJ_TOKENS_PER_DEVICE, /* most tokens/s per device */
    FFN_OBJ_TOKENS_PER_WATT,   /* most tokens/s per watt of TDP */
    FFN_OBJ_TOKENS_PER_DOLLAR, /* most tokens per dollar (needs a price) */
    FFN_OBJ_COST,              /* the cheapest fleet per hour that meets the target (needs a
                                  price; without a target: the least dollars per token) */
    FFN_OBJ_COUNT
} ffn_objective;

/* The workload and its constraints, for one model on one device type. */
typedef struct ffn_plan_opts {
    ffn_plan_phase phase;
    uint64_t prompt;        /* prompt tokens per request (prefill sequence) */
    uint64_t output;        /* output tokens per request */
    uint64_t prefill_batch; /* sequences per prefill step (phase both, TTFT), >= 1 */
    uint64_t chunk;         /* chunked prefill (FFN only), 0 = off */
    ffn_dtype wdtype, adtype, kv_dtype;
    unsigned group_size;
    bool zero_point;        /* int4 weights: a 4-bit zero point per group */
    ffn_dtype act_io_dtype; /* W8A8: the dtype x, h and y are stored in (ffn_run's) */
    bool fused;
    ffn_moe_opts moe;
    double tpot_s;              /* per-output-token SLO (decode step time); 0 = none */
    double ttft_s;              /* time-to-first-token SLO (prefill step time); 0 = none */
    double target_tokens_per_s; /* fleet throughput target (output tokens/s for decode and
                                   both, prompt tokens/s for prefill); 0 = none */
    uint64_t max_devices;       /* device limit, >= 1 */
    uint64_t max_batch;         /* largest batch (sequences per replica) considered */
    double mem_utilization;     /* usable fraction of the device memory, (0, 1] */
    double reserve_bytes;       /* the runtime's reserve out of that (CUDA context, NCCL buffers,
                                   CUDA graphs); < 0 = the default: FFN_PLAN_GPU_RESERVE on a GPU,
                                   0 on other devices */
    uint64_t kv_page_tokens;    /* the KV cache is allocated in pages of this many tokens (vLLM's
                                   default block size 16); 0 or 1 = by the token */
    double price_per_hour;      /* per device; 0 = unknown */
    uint64_t tp[FFN_PLAN_MAX_DEGREES]; /* attention (and dense FFN) TP degrees */
    size_t n_tp;
    uint64_t dp[FFN_PLAN_MAX_DEGREES]; /* attention DP degrees; ignored (1) for dense models */
    size_t n_dp;
    uint64_t ep[FFN_PLAN_MAX_DEGREES]; /* expert EP degrees; ignored (1) for dense models */
    size_t n_ep;
    uint64_t pp[FFN_PLAN_MAX_DEGREES]; /* pipeline stages; n_pp 0 = 1, or more stages where
                                          the weights need more devices than a node holds */
    size_t n_pp;
    ffn_objective objective;
    ffn_plan_margin margin; /* default: median */
    ffn_weights weights;    /* FFN weight residency (default: cold; sim.h) */
    bool onchip;            /* charge finite on-chip memory (sim.h, ffn_run.onchip) */
} ffn_plan_opts;

/* A GPU serving runtime's own memory beside weights, KV cache and activations: vLLM logs
 * non-torch memory (CUDA context, NCCL) of 0.33 GiB (vllm-project/vllm issue #14452) and CUDA
 * graphs of 0.36 GiB (gpustack/runner pull request #251, vLLM 0.27): 0.69 GiB. */
#define FFN_PLAN_GPU_RESERVE (0.69 * 1073741824.0)

/* The reserve o asks for on hw (its default resolved). */
double ffn_plan_reserve_bytes(const ffn_plan_opts *o, const ffn_hw *hw);

/* Defaults: decode, prompt 1024, output 256, bf16, fused, no SLO, no target, 64 devices,
 * batch up to 4096, 90% of memory usable, TP 1,2,4,8, DP and EP 1,2,4,8,16,32,64, PP auto. */
void ffn_plan_opts_default(ffn_plan_opts *o);

/* Memory per device of a layout at a batch (bytes). */
typedef struct ffn_plan_mem {
    double weight_bytes;             /* all weights held by one device */
    double ffn_weight_bytes;         /* ... of which FFN (dense FFNs, local experts, shared) */
    double other_weight_bytes;       /* ... attention, embeddings/LM head, norms, router */
    double kv_bytes_per_token_layer; /* KV cache of one token in one layer, this device */
    double kv_bytes_per_seq;         /* KV cache of one sequence at the full context, this device */
    double kv_bytes;                 /* KV cache of the sequences this device holds */
    double activation_bytes;         /* transient activation peak of one layer */
    double total_bytes;
    double usable_bytes; /* capacity x mem_utilization - the runtime's reserve */
    bool fits;
} ffn_plan_mem;

/* One decode or prefill step of one replica, per device, all layers. */
typedef struct ffn_plan_step {
    ffn_phase phase;
    uint64_t batch;         /* sequences per replica */
    uint64_t micro_batches; /* pipeline micro-batches in flight: min(pp, batch); 1 without PP */
    uint64_t seqs_device;   /* sequences whose attention runs on one device: ceil(batch /
                               micro_batches / dp) */
    uint64_t context;       /* decode: tokens in the KV cache; prefill: prompt tokens */
    double ffn_s;           /* FFN, all layers (ffn_predict, dense layers under EP at T/ep) */
    double ffn_comm_s;      /* ... its all-reduces and all-to-alls */
    double attn_proj_s;     /* other: QKV and output projections */
    double elem_s;          /* other: the layers' norms and rotary embeddings */
    double attn_core_s;     /* other: KV-cache read and scores (decode) / attention FLOPs */
    double attn_comm_s;     /* other: the attention output's TP all-reduce */
    double lm_head_s;       /* other: the LM head (logits of one token per sequence) */
    double pp_comm_s;       /* the activations sent from stage to stage (pp - 1 hops) */
    double pp_bubble;       /* the share of a stage's time it idles: 1 - micro_batches / pp */
    double step_s;          /* the time the plan sizes against (x p90 with FFN_MARGIN_P90) */
    double step_p10_s;      /* the range of the predicted (median) step time: x the device's */
    double step_p90_s;      /* p10 and p90 ratios measured/predicted (ffn_hw_unc_range), the
                               fused-MoE kernels' part x their family's (ffn.moe_fused_s) */
    double margin_scale;    /* 1, or step_p90_s / the median step: the times above are at p90 */
    bool range_default;     /* the ratios are the stated default, not a fit's */
    double ffn_share;       /* ffn_s / step_s */
    double kv_read_bytes;   /* decode: KV bytes read per step per device */
    double attn_core_flops;
    ffn_bound ffn_bound;
    ffn_result ffn; /* the FFN result as ffn_predict gives it */
} ffn_plan_step;

/* One layout (ffn_plan_shape) x replicas, evaluated. */
typedef struct ffn_plan_layout {
    uint64_t tp, dp, ep, pp; /* the shape */
    uint64_t replicas, devices;
    bool valid;         /* the layout is possible at all (divisibility, interconnect) */
    bool fits;          /* the model fits at batch 1 */
    bool feasible;      /* meets every SLO, fits, and the devices are within the limit */
    uint64_t mem_batch; /* largest batch that fits in memory (0 = none) */
    uint64_t max_batch; /* chosen batch: largest that fits and meets the SLO */
    ffn_plan_mem mem;   /* at max_batch (at batch 1 when nothing is feasible) */
    ffn_plan_step step; /* the phase's step at max_batch */
    double ttft_s;      /* prefill of prefill_batch sequences (both: the TTFT check) */
    double tokens_per_s_replica, tokens_per_s_device, tokens_per_s_fleet;
    double tokens_per_s_per_watt; /* NAN when the device has no TDP */
    double tokens_per_dollar;     /* NAN without a price; tokens the fleet is asked for (the
                                     target when there is one, not its spare capacity) */
    double usd_per_hour;          /* the fleet's price per hour: devices x price; NAN without */
    double usd_per_mtok;          /* dollars per million of those tokens; NAN without a price */
    ffn_bottleneck bottleneck;
    double miss;   /* infeasible: how far off, as a ratio >= 1 (e.g. step(1)/tpot) */
    char why[200]; /* infeasible or invalid: one line saying why */
} ffn_plan_layout;

typedef struct ffn_plan {
    const ffn_model *model;
    const ffn_hw *hw;
    ffn_params params;
    ffn_plan_opts opts;
    ffn_plan_layout layouts[FFN_PLAN_MAX_LAYOUTS];
    size_t n_layouts;
    int best;    /* index of the chosen feasible layout, -1 if none */
    int closest; /* when none is feasible: the valid layout with the smallest miss (those that
                    hold the model at batch 1 first), or -1 */
    /* How many devices the weights alone need by capacity, whatever the layouts considered:
     * ceil(all weights / (capacity x mem_utilization)). For an SRAM-first device (Groq LPU,
     * Cerebras WSE-3) the chips a model needs to sit on chip (docs/plan.md). */
    double weight_bytes_all;
    uint64_t devices_for_weights;
} ffn_plan;

/* Disaggregated serving (docs/plan.md, "Disaggregated prefill and decode"): a prefill pool and
 * a decode pool, each with its own layout and batch, every request's KV cache sent from one to
 * the other, against the aggregated layout that runs both phases on one pool. */
typedef struct ffn_plan_disagg {
    bool feasible;          /* both pools have a feasible layout and the TTFT holds */
    int prefill, decode;    /* the pools' layouts: indices into their plans, -1 if none */
    double kv_bytes;        /* KV cache of one request's prompt, all layers (bytes) */
    uint64_t prefill_batch; /* prompts per prefill step: the prefill plan's, smaller where its
                               KV transfer would break the TTFT */
    double prefill_step_s;  /* the prefill step at that batch */
    double kv_transfer_s;   /* the prefill batch's KV over the link between the pools */
    double ttft_s;          /* the prefill step + the KV transfer */
    double tpot_s;          /* the decode pool's step */
    double decode_tokens_per_s_device;    /* output tokens/s per decode device */
    double prefill_requests_per_s_device; /* prompts/s per prefill device */
    double tokens_per_s_device;           /* output tokens/s per device of both pools, balanced */
    double prefill_share;                 /* devices in the prefill pool / all, balanced */
    uint64_t prefill_devices, decode_devices, devices; /* for the target (0 without one) */
    double aggregated_tokens_per_s_device;             /* the aggregated plan's best, NAN if none */
    double aggregated_prefill_share;                   /* its share of time in prefill steps */
    bool wins;     /* more tokens/s per device than aggregated */
    char why[320]; /* one line: which wins and why */
} ffn_plan_disagg;

/* Combine a prefill-only plan (phase prefill, the TTFT SLO) and a decode-only plan (phase
 * decode, the TPOT SLO) of one model and device into disaggregated pools - each pool's layout
 * the one with the most tokens (prompts) per device - and weigh them against the aggregated
 * plan (phase both; may be NULL). The KV cache crosses the scale-out network (the scale-up
 * domain when the device has none), each device of the smaller replica sending its share. */
int ffn_plan_disagg_combine(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o,
                            const ffn_plan *prefill, const ffn_plan *decode,
                            const ffn_plan *aggregated, ffn_plan_disagg *out, ffn_diag *diag);

/* Evaluate every layout of opts for model m on hw and choose the best. Returns 0 (also when
 * nothing is feasible: that is an answer), or FFN_EINVAL with diag for unusable options
 * (max_devices 0, no TP candidates, ...). The plan is large (~1.5 MB): allocate it statically
 * or on the heap. */
int ffn_plan_evaluate(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o, ffn_plan *out,
                      ffn_diag *diag);

/* True when layout a is better than b under objective (both feasible). */
bool ffn_plan_better(const ffn_plan_layout *a, const ffn_plan_layout *b, ffn_objective obj);

/* Memory per device of a layout holding `batch` sequences per replica at `context` tokens each
 * (the device of the stage holding the most: the layers' share plus the embedding or LM head);
 * prefill_tokens > 0 adds the activation peak of a prefill of that many tokens. */
int ffn_plan_memory(const ffn_model *m, const ffn_params *p, const ffn_hw *hw,
                    const ffn_plan_opts *o, const ffn_plan_shape *shape, uint64_t batch,
                    uint64_t context, uint64_t prefill_tokens, ffn_plan_mem *out);

/* Weight bytes of the model on one device of layout (tp, ep), scales and zero points included:
 * *ffn_bytes the FFNs (dense FFNs and shared experts split over TP, routed experts over EP;
 * gate/up weights have K = hidden, down K = the intermediate size), *other_bytes the rest:
 * attention projections in wdt (K = hidden), embeddings, norms and routers in 16 bits when wdt
 * is narrower (the usual int4/fp8 recipes do not quantize them), else in wdt. tp = ep = 1: the
 * whole model (ffnroof compare's "weights"). */
void ffn_weight_footprint(const ffn_model *m, const ffn_params *p, ffn_dtype wdt, unsigned group,
                          bool zero_point, uint64_t tp, uint64_t ep, double *ffn_bytes,
                          double *other_bytes);

/* KV-cache bytes per token per layer on one device under TP (GQA: ceil(kv_heads/tp) heads;
 * MLA: the latent, replicated across TP). */
double ffn_plan_kv_bytes_per_token_layer(const ffn_model *m, ffn_dtype kv_dtype, uint64_t tp);

/* Step time of a layout for `batch` sequences per replica: decode with `context` tokens in the
 * cache, or prefill of `context` prompt tokens. With pipeline stages, the time one token (or
 * prompt) takes through all of them: every layer at the micro-batch's sequences plus the
 * hops between stages; the replica then makes `batch` tokens per step. */
int ffn_plan_step_eval(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o,
                       ffn_phase phase, const ffn_plan_shape *shape, uint64_t batch,
                       uint64_t context, ffn_plan_step *out, ffn_diag *diag);

/* One layer's KV up-projection (kv_b) of `tokens` cached prompt tokens on one device of a TP
 * group of tp into *s: an MLA model's prompt chunk attends to the prompt's earlier chunks by
 * up-projecting their cached latent again (vLLM's MLACommonImpl._compute_prefill_context,
 * SGLang's chunked-prefix MHA, TensorRT-LLM's MLA context chunking); 0 for other models. */
int ffn_plan_mla_prefix_s(const ffn_model *m, const ffn_hw *hw, const ffn_plan_opts *o, uint64_t tp,
                          uint64_t tokens, double *s);

/* One model on one device type and its plan (borrowed pointers, all alive while it is used). */
typedef struct ffn_plan_pair {
    const ffn_model *m;
    const ffn_hw *hw;
    size_t hw_index;
    size_t model_index; /* the model's place in the order given: the table keeps it */
    ffn_plan *plan;
    int show; /* the layout shown: best, else closest, else -1 */
    int rank; /* 1-based among this model's pairs */
    /* phase both: the disaggregated pools against the aggregated plan, with the two plans they
     * come from; NULL otherwise */
    const ffn_plan_disagg *disagg;
    const ffn_plan *prefill, *decode;
    /* plan --emit: the shown layout as an engine's launch command and its note; NULL without */
    const char *launch, *launch_note;
} ffn_plan_pair;

/* Sort the pairs (each model's together, the models in the order given; within a model feasible
 * first, by obj, then by the smallest miss) and
 * number them per model (sim/plan_rank.c). */
void ffn_plan_pairs_rank(ffn_plan_pair *pairs, size_t np, ffn_objective obj);

const char *ffn_bottleneck_name(ffn_bottleneck b);
const char *ffn_objective_name(ffn_objective o);
const char *ffn_plan_phase_name(ffn_plan_phase p);
/* Parse names as printed above; 0 or FFN_EINVAL. */
int ffn_objective_parse(const char *s, ffn_objective *out);
int ffn_plan_phase_parse(const char *s, ffn_plan_phase *out);
/* The objective o asks for, "auto" (FFN_OBJ_COUNT) resolved: devices with a throughput target,
 * else tokens per device. */
ffn_objective ffn_plan_objective(const ffn_plan_opts *o);

#endif
