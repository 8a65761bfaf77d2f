/* The parameters of a fused-MoE kernel family (docs/model.md, "MoE layers as fused kernels"):
 * the records that the fused-MoE model (include/ffnroof/moe_fused.h), the engines' profiles
 * (include/ffnroof/engine.h) and a device spec under an engine (include/ffnroof/hw.h) share. */
#ifndef FFNROOF_MOE_KERNEL_H
#define FFNROOF_MOE_KERNEL_H

#include "ffnroof/types.h"

/* How a module lays out the routed copies: by the engine (FFN_MF_PATH_ENGINE: vLLM and SGLang
 * sorted, TensorRT-LLM permuted), or as a kernel family does whatever engine runs it. */
typedef enum ffn_moe_fused_path {
    FFN_MF_PATH_ENGINE = 0,
    /* Triton fused_moe (vLLM, SGLang): the copies sorted by expert with moe_align_block_size;
     * the elementwise kernels run over all tokens x topk copies, the shard's or not, and the
     * GEMMs write zeros for the other shards' rows */
    FFN_MF_PATH_SORTED,
    /* CUTLASS MoE (TensorRT-LLM's, FlashInfer's): the shard's copies permuted into place and
     * only those computed */
    FFN_MF_PATH_PERMUTED,
} ffn_moe_fused_path;

/* The module's own parameters beyond the device spec (docs/model.md, "MoE layers as fused
 * kernels"), in seconds where not said otherwise. */
typedef struct ffn_moe_fused_params {
    double module_s; /* fixed cost of one call beyond the launch of each kernel */
    /* the grouped GEMMs' compute efficiency relative to the spec's GEMMs of the same dtype:
     * their FLOPs are costed divided by it, (0, 1] */
    double gemm_eff;
    /* The latency floor of a grouped GEMM: blocks of block_m x block_n outputs, one per compute
     * unit per wave, each taking tile_s plus kstep_s per block_k step of its reduction; under
     * EP, vLLM's and SGLang's kernel also runs a block per row tile of the other shards'
     * experts, which only writes zeros: zero_tile_s each. */
    double tile_s, kstep_s, zero_tile_s;
    double ep_s; /* extra fixed cost of a call with ep > 1 */
    /* vLLM's and SGLang's Triton down GEMM when f / tp is not a multiple of 16 (its rows'
     * stride loses Triton's divisibility specialisation: no vector loads): time times this */
    double misaligned_x;
    ffn_moe_fused_path path; /* the module's layout of the copies */
} ffn_moe_fused_params;

/* One fused-MoE kernel family of the engine (engines.yaml `moe:`; docs/model.md "MoE layers as
 * fused kernels"): the fused-MoE model's parameters for the layers it runs in one weight
 * format, fitted to its rows of an op table against the device spec as it is (no `by_dtype`
 * factors applied), and the spread of measured / predicted over those rows. */
#define FFN_ENGINE_MAX_MOE 16
#define FFN_ENGINE_MOE_NAME 48

typedef struct ffn_engine_moe {
    /* a part of the kernel's name as op tables write it (`kernel_source`); the engine's first
     * entry of a format is its default kernel for that format */
    char kernels[FFN_ENGINE_MOE_NAME];
    ffn_dtype dtype; /* the weights' format */
    ffn_moe_fused_params params;
    double p10, p90; /* measured / predicted over the fitted rows: the prediction's range */
    char device[64]; /* the spec (hw/ name) it was fitted against */
    /* that device's architecture family (`arch:`, hw/arch/families.yaml): on a device of
     * another family the entry's range is widened one more step (ffn_moe_kernel_on); "" =
     * not said */
    char arch[24];
    /* the vendor whose GPUs run the kernel (`vendor:`, default NVIDIA): an entry prices only
     * that vendor's devices (ffn_moe_kernel_on) */
    char vendor[32];
    /* a kernel the engine runs only when asked (an environment switch, a checkpoint's own
     * quantisation method; `default: false`): an op table's rows that name it are priced with
     * it, a prediction never takes it as a format's kernel */
    bool optional;
} ffn_engine_moe;

#endif
