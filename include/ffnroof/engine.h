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
} ffn_engine_profile;

/* The default engine of every predicting command: vLLM, whose kernels the NVIDIA specs' op
 * tables measured. */
#define FFN_ENGINE_DEFAULT FFN_ENGINE_VLLM

/* Apply a profile to a spec's efficiency (sim/engine.c): for each format the profile sets,
 * the GEMMs computing in it get compute x the spec's utilisation (util_gamma and util_alpha, or
 * compute_max_dt where no utilisation is fitted), memory x the decode stream's fraction
 * (memory_max_gemv_dt, else memory_max_gemv, else memory_max), launch_s as their fixed cost and
 * quant_row_s as their quantisation's cost per row.
 * Fractions are capped at 1. A baseline profile changes nothing, and neither does any profile
 * to a spec that is not an NVIDIA GPU's (the profiles describe NVIDIA's kernels). */
void ffn_hw_apply_engine(ffn_hw *hw, const ffn_engine_profile *p);

#endif
