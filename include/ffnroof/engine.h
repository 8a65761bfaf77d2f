/* Serving-engine kernel profiles (hw/arch/engines.yaml, docs/formats-hw.md "Engine profiles";
 * docs/model.md "Engines"): per weight format, how one engine's kernels perform relative to the
 * kernels a device's spec was fitted to (the baseline engine, vLLM's, for the fitted NVIDIA
 * specs). A spec stays one device; `--engine` turns it into that device under that engine's
 * kernels. */
#ifndef FFNROOF_ENGINE_H
#define FFNROOF_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/moe_fused.h"
#include "ffnroof/moe_kernel.h"
#include "ffnroof/types.h"

/* One format's kernels under an engine, relative to the baseline engine's. */
typedef struct ffn_engine_dt {
    bool set;
    double compute;     /* multiplies the compute fraction (wave utilisation or compute_max) */
    double memory;      /* multiplies the decode stream's fraction of the bandwidth */
    double launch_s;    /* the GEMM's fixed cost under this engine; 0 = the spec's */
    double quant_row_s; /* its activation quantisation's cost per token row; 0 = the spec's */
    /* the tile its kernels pick by shape (`kernels:`), in place of the spec's rules (its
     * baseline engine's dispatch); n 0 = the best of the device's tiles */
    ffn_kernel_rules rules;
    /* measured / predicted at p10 and p90 over the rows the factors were fitted to (`range:`),
     * the format's range under this engine; 0 = the spec's */
    double p10, p90;
} ffn_engine_dt;

/* The engine's scheduler as a release ships it (engines.yaml `scheduler:`; docs/plan.md
 * "Serving" cites each value). */
#define FFN_ENGINE_MAX_DEVICES 16

typedef struct ffn_engine_sched {
    bool set;
    uint64_t max_batched_tokens; /* the token budget of one step */
    uint64_t max_seqs;           /* running sequences at most */
    uint64_t page_tokens;        /* KV-cache page (block) size */
    double step_overhead_s;      /* per step outside the GPU kernels: scheduling, input
                                    preparation, sampling, launch */
    double seq_overhead_s;       /* ... and per running sequence of the step (the host's work
                                    grows with the batch); 0 = none */
    double flop_overhead;        /* the step's linear-layer FLOPs (projections and FFN, each
                                    token's active weights) at the rate of the device's large
                                    GEMMs in the compute dtype, times this, added to the step's
                                    GEMMs: the time that grows with the tokens' FLOPs in
                                    serving beyond the kernels timed alone; 0 = none */
    double range_p10, range_p90; /* the serving fit's own spread: p10 and p90 of measured /
                                    predicted step time over the runs it was fitted to (0 =
                                    none); serve's range joins it to the device's */
    /* How a request enters the KV cache (docs/plan.md "Admission"). kv_grow false: its prompt
     * and whole output are held from the start and nothing is ever preempted (TensorRT-LLM's
     * GUARANTEED_NO_EVICT). kv_grow true: the prompt and a share of the output are held, the
     * cache fills as sequences grow and the newest are preempted and recomputed; the share
     * starts at reserve_output and falls by (reserve_output - reserve_output_min) /
     * reserve_decay_steps a decode step, and a preemption sets it to what the running
     * sequences have decoded, plus reserve_retract_steps tokens each, over their output
     * lengths (SGLang's new-token ratio; vLLM holds no share: 0). */
    bool kv_grow;
    double reserve_output;      /* in [0, 1] */
    double reserve_output_min;  /* in [0, reserve_output] */
    double reserve_decay_steps; /* 0 = a fixed share */
    double reserve_retract_steps;
    bool prefill_apart;  /* prompts in steps of their own, decodes waiting (SGLang without its
                            mixed chunks); false: prompt chunks ride in the decode steps */
    bool kv_by_chunk;    /* kv_grow engines: a prompt holds KV pages for the chunks computed so far,
                            enters when its first chunk fits, and a chunk that finds no room
                            preempts the newest running sequences (vLLM's V1 scheduler); false: a
                            prompt enters only when the whole of it fits */
    bool prefix_cache;   /* kv_grow engines: a preempted sequence's pages stay cached until the
                            allocator reaches them (least recently freed first, a sequence's
                            last pages first), and it re-enters from what is left of them
                            (vLLM's prefix caching, on by default); false: recomputed whole */
    bool budget_over_dp; /* with attention data parallelism, max_batched_tokens is the replica's,
                            split over its DP ranks (SGLang divides chunked_prefill_size by
                            dp_size); false: each DP rank an engine with a budget of its own
                            (vLLM) */
    /* where a release picks other defaults on some devices (vLLM's smaller budget on A100s,
     * SGLang's larger one on GPUs of 160 GB and more): by device name, 0 = the default */
    struct {
        char device[64];
        uint64_t max_batched_tokens, max_seqs;
    } by_device[FFN_ENGINE_MAX_DEVICES];
    int n_by_device;
} ffn_engine_sched;

/* The scheduler an engine runs on the device named `device`: s with that device's values. */
ffn_engine_sched ffn_engine_sched_for(const ffn_engine_sched *s, const char *device);

typedef struct ffn_engine_profile {
    ffn_engine engine;
    ffn_engine_sched sched;
    bool baseline;                  /* the kernels the specs were fitted to: nothing changes */
    ffn_engine_dt dt[FFN_DT_COUNT]; /* by the GEMM's format (weights = activations) */
    ffn_engine_moe moe[FFN_ENGINE_MAX_MOE];
    int n_moe;
    char device[64]; /* the spec the `by_dtype` factors were fitted on top of; "" = not said */
} ffn_engine_profile;

/* ffn_engine_moe_on over a list of n families (a profile's, or those a spec carries, ffn_hw
 * .moe_kernels). */
const ffn_engine_moe *ffn_moe_kernel_on(const ffn_engine_moe *list, int n, const ffn_hw *hw,
                                        const char *kernel, ffn_dtype wdtype, ffn_dtype adtype,
                                        double *p10, double *p90);

/* Whether family m runs on the GPUs of `vendor` (its `vendor:`, NVIDIA where not said). */
bool ffn_moe_kernel_of_vendor(const ffn_engine_moe *m, const char *vendor);

/* Whether a MoE layer of weights w and activations a on hw is priced as the engine's fused
 * module (sim/moe.c): hw a GPU spec under an engine (ffn_hw_apply_engine) and mo not asking for
 * the generic grouped GEMMs. When it is, *fam is the family that prices it (ffn_moe_kernel_on
 * with mo->kernel; NULL: the fused model's defaults) and *p10, *p90 its range. */
bool ffn_moe_fused_applies(const ffn_hw *hw, const ffn_moe_opts *mo, ffn_dtype w, ffn_dtype a,
                           const ffn_engine_moe **fam, double *p10, double *p90);

/* The fused-MoE kernel family that runs a layer of weights in `wdtype` and activations in
 * `adtype` under the profile's engine (sim/engine.c): the first entry of that weight format
 * whose `kernels` is a part of `kernel` (the name an op table gives; NULL or unmatched: the
 * first entry of the format, the engine's default); for a format without entries, the first
 * entry of another format whose `kernels` the name holds (the same kernel family: FlashInfer's
 * CUTLASS MoE in fp8 and nvfp4), else the engine's first entry of the activations' class (fp8,
 * then fp8-block, for 8-bit and narrower activations; bf16, then fp16, for 16-bit ones). An
 * optional entry (`default: false`) is taken by its name only. NULL when none is found. */
const ffn_engine_moe *ffn_engine_moe_for(const ffn_engine_profile *p, const char *kernel,
                                         ffn_dtype wdtype, ffn_dtype adtype);

/* The same on GPU hw among the entries of its vendor (`vendor`), those of its own architecture
 * (`arch`) first, with the range the prediction carries there (docs/model.md, "MoE layers as
 * fused kernels", transfer): the family's own range on the device it was fitted on, widened to
 * p10 x 0.9 and p90 x 1.1 on any other GPU of its vendor (the engine runs the same kernels
 * there; their costs were measured on one device), again on a device of another architecture
 * than the entry's `arch`, and again for an entry of another format. NULL where the engine has
 * no entry for the device's vendor, or none of the format or its activations' class, or hw is
 * not a GPU: the model's defaults price the layer, and p10 and p90 get the spec's range for
 * `wdtype` widened to x0.8 and x1.25 (parameters carried to kernels they were not fitted to). */
const ffn_engine_moe *ffn_engine_moe_on(const ffn_engine_profile *p, const ffn_hw *hw,
                                        const char *kernel, ffn_dtype wdtype, ffn_dtype adtype,
                                        double *p10, double *p90);

/* The default engine of every predicting command: vLLM, whose kernels the NVIDIA specs' op
 * tables measured. */
#define FFN_ENGINE_DEFAULT FFN_ENGINE_VLLM

/* Apply a profile to a spec's efficiency (sim/engine.c): for each format the profile sets,
 * the GEMMs computing in it get compute x the spec's utilisation (util_gamma and util_alpha, or
 * compute_max_dt where no utilisation is fitted), memory x the decode stream's fraction
 * (memory_max_gemv_dt, else memory_max_gemv, else memory_max), launch_s as their fixed cost and
 * quant_row_s as their quantisation's cost per row, and the format's range its p10 and p90
 * (as fitted on the profile's device; on another device widened to p10 x 0.9, p90 x 1.1, as
 * ffn_engine_moe_on widens a MoE family's). Fractions are capped at 1. A baseline profile changes
 * none of these, and no profile changes the GEMMs of a spec that is not an NVIDIA GPU's (the
 * profiles describe NVIDIA's kernels). On every GPU's spec every profile, the baseline's
 * included, leaves its fused-MoE kernel families and its engine (moe_kernels, moe_engine). */
void ffn_hw_apply_engine(ffn_hw *hw, const ffn_engine_profile *p);

#endif
