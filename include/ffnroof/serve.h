/* Serving as engines run it (sim/serve_step.c, sim/serve.c; docs/plan.md "Serving"): a replica of
 * one layout under continuous batching with chunked prefill, fed by a workload - a closed-loop
 * client concurrency, an open-loop Poisson request rate, or everything queued (offline) - and
 * its steady state out: TTFT and TPOT (median and p90), output tokens/s per device and per user,
 * requests/s, the mean running batch and context, and what bounds it.
 *
 * The scheduler is simulated step by step, as vLLM's, SGLang's and TensorRT-LLM's run: each step
 * has a token budget (max_batched_tokens): one token for every running sequence that decodes
 * (1 + draft tokens with speculative decoding), then chunks of the prompts in prefill, oldest
 * first, until the budget or the sequence cap is reached (or, where the engine keeps prompts
 * apart, a step runs the prompts alone and the decodes wait); a request enters when the KV cache
 * holds its prompt and the engine's share of its output (pages of page_tokens), and where that
 * share is below the whole output the newest sequences are preempted and recomputed when the
 * cache fills (ffn_engine_sched: TensorRT-LLM's, vLLM's and SGLang's rules). The step time is the
 * token-count parts (FFN, attention projections, their collectives, pipeline hops) at the step's
 * tokens, the attention of each decode sequence over its own KV length and of each prompt chunk
 * against its context, the LM head for the sequences that produce a token, and the engine's
 * per-step overhead. Pure functions over caller-owned state: no I/O. */
#ifndef FFNROOF_SERVE_H
#define FFNROOF_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/engine.h"
#include "ffnroof/error.h"
#include "ffnroof/plan.h"

/* How requests arrive. */
typedef enum ffn_serve_mode {
    FFN_SERVE_CONCURRENCY = 0, /* closed loop: `concurrency` clients, each sending its next
                                  request when the last one finished (serving benchmarks'
                                  --max-concurrency) */
    FFN_SERVE_RATE,            /* open loop: Poisson arrivals at `rate` requests/s */
    FFN_SERVE_OFFLINE,         /* every request queued at time 0 (offline throughput) */
} ffn_serve_mode;

const char *ffn_serve_mode_name(ffn_serve_mode m);

/* ShareGPT's sampling limits in vLLM's and SGLang's serving benchmarks (sample_sharegpt_requests:
 * a prompt of more than 1024 tokens, or a prompt and output of more than 2048, is dropped) */
#define FFN_SHAREGPT_MAX_PROMPT 1024
#define FFN_SHAREGPT_MAX_TOTAL 2048

/* The means ShareGPT-like lengths can be drawn with (below 0.45 of each limit: a truncated
 * exponential's mean stays under half its limit): true when isl and osl are below them; *max_isl
 * and *max_osl get the two bounds (exclusive) when not NULL. */
bool ffn_serve_sharegpt_means_fit(uint64_t isl, uint64_t osl, double *max_isl, double *max_osl);

/* A workload and the replica that serves it. */
typedef struct ffn_serve_opts {
    ffn_plan_shape shape;   /* the replica's layout */
    ffn_engine_sched sched; /* the engine's defaults (ffn_engine_load), overridable */
    ffn_serve_mode mode;
    double concurrency; /* FFN_SERVE_CONCURRENCY: clients, >= 1 */
    double rate;        /* FFN_SERVE_RATE: requests/s, > 0 */
    uint64_t isl, osl;  /* mean input and output tokens per request, >= 1 */
    double isl_spread;  /* lengths drawn uniformly in mean x [1 - s, 1 + s] (vLLM's random */
    double osl_spread;  /* dataset's range ratio); 0 = fixed, [0, 1) */
    /* lengths drawn as the ShareGPT benchmarks' samples are (no spread then): each an
     * exponential law of mean isl or osl in whole tokens (the law of greatest entropy for a
     * positive length of a known mean: the sources give means alone), the prompt kept to
     * FFN_SHAREGPT_MAX_PROMPT tokens and the request to FFN_SHAREGPT_MAX_TOTAL, the limits vLLM's
     * and SGLang's sample_sharegpt_requests drop longer pairs at; each law's scale solved so
     * that its truncated mean is the one asked for */
    bool sharegpt_lengths;
    uint64_t requests;    /* requests simulated; 0 = as many as a steady state needs */
    uint64_t seed;        /* of the lengths and arrivals */
    uint32_t spec_tokens; /* speculative decoding / MTP: draft tokens per step, 0 = off */
    double spec_accept;   /* mean tokens a decode step emits with them, in [1, spec_tokens + 1] */
    double step_scale;    /* every step time x this (1; the range runs at the p10 and p90) */
    /* ... except the engine's fused-MoE kernels' part (ffn_serve_ctx.moe_s), x this; 0 = as
     * step_scale (the range runs at their kernel family's p10 and p90) */
    double moe_scale;
} ffn_serve_opts;

/* The token budget of one step of a replica with dp attention-DP ranks: max_batched_tokens each
 * (vLLM), or max_batched_tokens in all where the engine splits it over them (budget_over_dp,
 * SGLang), at least one token a rank. */
uint64_t ffn_serve_budget(const ffn_serve_opts *o, uint64_t dp);

/* The longest request (prompt + output tokens) the workload of o draws. */
double ffn_serve_max_request_tokens(const ffn_serve_opts *o);

/* Defaults: TP 1, concurrency 1, isl 1024, osl 256, fixed lengths, no speculation; the
 * scheduler left unset (the engine profile's, ffn_engine_load). */
void ffn_serve_opts_default(ffn_serve_opts *o);

/* What one step holds. */
typedef struct ffn_serve_batch {
    uint64_t decode_seqs;    /* sequences decoding this step */
    double decode_ctx;       /* the sum of their KV lengths */
    uint64_t prefill_seqs;   /* prompts with a chunk in this step */
    uint64_t prefill_tokens; /* the chunks' tokens */
    double prefill_pairs;    /* query-key pairs the chunks score (causal) */
    double prefill_prefix;   /* the chunks' prompt tokens computed in earlier steps (an MLA
                                model up-projects their cached latent again) */
    uint64_t logits;         /* sequences producing a token (decode, finished prompts) */
} ffn_serve_batch;

/* The parts of one step's time (seconds, one replica). */
typedef struct ffn_serve_step {
    double gemm_s;     /* FFN, attention projections, their collectives, pipeline hops */
    double attn_s;     /* the attention core: decode over KV caches, prefill chunks */
    double lm_head_s;  /* logits */
    double draft_s;    /* the draft (MTP) layers of speculative decoding */
    double prefix_s;   /* of gemm_s, before step_scale: MLA's up-projection of the prompt
                          chunks' earlier tokens (ffn_plan_mla_prefix_s) */
    double overhead_s; /* the engine's per-step overhead */
    double step_s;     /* the sum, x step_scale */
    double comm_s;     /* of gemm_s: collectives and hops */
    double flop_s;     /* of gemm_s: the engine's flop_overhead term */
} ffn_serve_step;

/* A cache of the token-count parts of a step for one model, device, layout and dtype set: they
 * are a function of the step's tokens alone, priced once per token count (ffn_serve_ctx_init;
 * ffn_serve_ctx_free). */
typedef struct ffn_serve_ctx {
    const ffn_model *m;
    const ffn_hw *hw;
    ffn_params params;
    ffn_plan_opts plan; /* dtypes, kernels, weights residency, memory options */
    ffn_plan_shape shape;
    uint64_t max_tokens;
    double *gemm_s, *comm_s; /* by token count, NAN until priced */
    double *moe_s;           /* ... of gemm_s, the fused-MoE kernels' part (ffn_result) */
    double moe_p10, moe_p90; /* their kernel family's range on the device (0: none priced) */
    /* per layer (x layers by the caller), one device */
    double layers;
    double lm_head_w_bytes; /* the LM head's weights on one device */
    double kv_tokens;       /* KV-cache capacity of the replica (tokens), pages not counted */
    double weight_bytes;    /* per device */
    bool fits;
} ffn_serve_ctx;

/* Price what does not change from step to step and the replica's KV capacity. max_tokens: the
 * largest step (the token budget plus the decode tokens of max_seqs). Returns 0, FFN_ENOMEM,
 * or FFN_EINVAL with diag for a layout the model cannot take. */
int ffn_serve_ctx_init(ffn_serve_ctx *c, const ffn_model *m, const ffn_hw *hw,
                       const ffn_plan_opts *plan, const ffn_plan_shape *shape, uint64_t max_tokens,
                       ffn_diag *diag);
void ffn_serve_ctx_free(ffn_serve_ctx *c);

/* The time of one step holding b (speculation and overhead from o). */
int ffn_serve_step_eval(ffn_serve_ctx *c, const ffn_serve_opts *o, const ffn_serve_batch *b,
                        ffn_serve_step *out, ffn_diag *diag);

/* What bounds a steady state. */
typedef enum ffn_serve_bound {
    FFN_SBN_GEMM = 0,  /* the FFN and projection GEMMs (weights or compute) */
    FFN_SBN_ATTENTION, /* the attention core (KV-cache reads, prefill scores) */
    FFN_SBN_COMM,      /* collectives and pipeline hops */
    FFN_SBN_OVERHEAD,  /* the engine's per-step overhead */
    FFN_SBN_KV,        /* requests wait for KV-cache room */
    FFN_SBN_SEQS,      /* requests wait for a sequence slot (max_seqs) */
    FFN_SBN_CLIENTS,   /* the clients: the engine idles between requests */
    FFN_SBN_COUNT
} ffn_serve_bound;

const char *ffn_serve_bound_name(ffn_serve_bound b);

/* The steady state of a workload. */
typedef struct ffn_serve_result {
    bool stable;         /* rate mode: the queue does not grow */
    double queue_growth; /* unstable: requests/s the queue grows by (arrivals - service) */
    double ttft_p50_s, ttft_p90_s, ttft_mean_s;
    double tpot_p50_s, tpot_p90_s, tpot_mean_s; /* per request: (last - first token) / (osl - 1) */
    double e2e_mean_s;                          /* arrival to last token */
    double requests_per_s;                      /* completions in the measured window */
    double output_tokens_per_s;                 /* the replica's */
    double output_tokens_per_s_device;
    double total_tokens_per_s; /* input + output */
    double user_tokens_per_s;  /* one user's: 1 / median TPOT */
    double mean_running;       /* time-averaged sequences running (decode or prefill) */
    double mean_in_system;     /* time-averaged requests arrived and not finished */
    double little_in_system;   /* requests/s x mean e2e (Little's law) */
    double mean_context;       /* time-averaged KV length of a decoding sequence */
    double mean_step_s, mean_step_tokens;
    double kv_tokens;  /* the replica's KV capacity */
    double share[4];   /* of busy time: gemm, attention, comm, overhead */
    double idle_share; /* of the window: no request to run */
    ffn_serve_bound bound;
    uint64_t requests, steps; /* simulated */
    uint64_t preemptions;     /* sequences preempted (their cache freed) and recomputed */
    double window_s;          /* the measured window */
} ffn_serve_result;

/* Simulate o on the replica c. Returns 0 (an unstable rate is an answer: stable false),
 * FFN_ENOMEM, or FFN_EINVAL with diag (a request longer than the KV cache holds, a concurrency
 * of 0, lengths out of range). */
int ffn_serve_run(ffn_serve_ctx *c, const ffn_serve_opts *o, ffn_serve_result *r, ffn_diag *diag);

/* One point of the throughput-interactivity curve: a layout at a concurrency, its steady state
 * at the predicted step times and at the ends of their range (the device's p10 and p90 ratios
 * of measured/predicted). */
typedef struct ffn_serve_point {
    ffn_plan_shape shape;
    double concurrency;
    ffn_serve_result r;                  /* at the predicted step times */
    double tps_device_lo, tps_device_hi; /* output tokens/s per device at p90 and p10 times */
    double user_tps_lo, user_tps_hi;
    double tpot_lo_s, tpot_hi_s, ttft_lo_s, ttft_hi_s;
    bool frontier; /* no other point has both more tokens/s per device and per
                      user */
} ffn_serve_point;

/* The range serve prints a step time with: the device's p10 and p90 of measured / predicted for
 * the weights' dtype (ffn_hw_unc_range_dt) joined to the engine's serving fit's (its scheduler's
 * range_p10/p90, when set), their logarithms in quadrature. Returns whether the device's part is
 * the stated default. */
bool ffn_serve_range(const ffn_hw *hw, ffn_dtype wdtype, const ffn_engine_sched *s, double *p10,
                     double *p90);

/* Run o on c at the predicted step times and at p10 and p90 (ffn_serve_range), filling *pt. */
int ffn_serve_point_eval(ffn_serve_ctx *c, const ffn_serve_opts *o, ffn_serve_point *pt,
                         ffn_diag *diag);

/* Mark the Pareto frontier of tokens/s per device against tokens/s per user. */
void ffn_serve_mark_frontier(ffn_serve_point *p, size_t n);

/* The point with the most tokens/s per device whose user rate is at least min_user_tps
 * (0: any) and whose p90 TTFT is at most max_ttft_s (0: any; past the knee more clients only
 * queue), -1 if none. */
int ffn_serve_pick(const ffn_serve_point *p, size_t n, double min_user_tps, double max_ttft_s);

/* Dollars per million output tokens at a device-hour price and a rate per device; NAN without
 * a price or a rate. */
double ffn_serve_usd_per_mtok(double price_per_hour, double tokens_per_s_device);

/* What `serve` answers for one model on one device: its points (layouts x loads), the pick, the
 * layouts it could not simulate and why, and what the writers name (ffnroof/serve_write.h,
 * ffnroof/serve_report.h). Pointers are borrowed. */
#define FFN_SERVE_MAX_SHAPES 64
typedef struct ffn_serve_pair {
    const ffn_model *m;
    const ffn_hw *hw;
    ffn_engine engine;
    ffn_dtype wdtype; /* the weights' dtype: the device's range for it (ffn_hw_unc_range_dt) */
    ffn_dtype adtype; /* the activations': with wdtype, the MoE layers' kernels */
    bool generic_moe; /* the MoE layers as generic grouped GEMMs (--generic-moe) */
    const char *moe_kernel; /* the kernel family asked for by name (--moe-kernel); NULL */
    double routing_alpha;   /* the routing skew asked for (--routing-alpha); < 0 the model's */
    double price;           /* per device-hour; 0 = none */
    ffn_engine_sched sched;
    ffn_serve_point *pts;
    size_t n;
    int pick; /* -1: none */
    char skipped[FFN_SERVE_MAX_SHAPES][200];
    size_t n_skipped;
} ffn_serve_pair;

/* The layouts serve simulates for m: every (tp, dp, ep, pp) of o's lists whose devices are within
 * max_devices (dp and ep for MoE models only; without ep_given, the experts go EP over all the
 * devices of a stage); at most FFN_SERVE_MAX_SHAPES into out. Returns their count. */
size_t ffn_serve_shapes(const ffn_model *m, const ffn_plan_opts *o, bool ep_given,
                        uint64_t max_devices, ffn_plan_shape *out);

#endif
