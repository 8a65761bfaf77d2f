/* A device as the simulator sees it: peak throughput per dtype, memory levels, interconnect and
 * the parameters of the realistic-efficiency model. Filled by ffn_hw_load() from hw/NAME.yaml
 * (docs/formats.md) or by `ffnroof calibrate`. All quantities in SI base units. */
#ifndef FFNROOF_HW_H
#define FFNROOF_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/moe_kernel.h"
#include "ffnroof/types.h"

#define FFN_HW_MAX_LEVELS 6
#define FFN_HW_MAX_TILES 12
#define FFN_HW_MAX_RULES 8

typedef enum ffn_hw_kind { FFN_HW_GPU = 0, FFN_HW_CPU, FFN_HW_ACCEL } ffn_hw_kind;

/* One on-chip memory level (L1/shared memory, L2, L3/LLC, SRAM), innermost first. */
typedef struct ffn_mem_level {
    char name[24];
    double capacity_bytes; /* whole device */
    double bandwidth_bps;  /* whole device; 0 when not published (capacity only) */
    /* Private slices the capacity is split into (one per SM, per core, per XCD): a GEMM tile
     * sees capacity_bytes / slices. 0 or 1 = one level shared by the whole device. */
    uint32_t slices;
    /* Software-managed memory that a kernel fills and that does not outlive it (GPU shared
     * memory, AMD LDS, TPU VMEM): it tiles inside one kernel (the GEMM traffic bound, the
     * fused intermediate) but holds nothing across calls, so weights never stay in it. */
    bool scratchpad;
    /* The level keeps nothing of a working set larger than it across calls (YAML
     * `keeps_part: false`): a cyclic sweep through it misses every time, as under LRU (the
     * H200's L2: GEMMs of 56-924 MiB of weights ran as fast warm as
     * cold). false (the default): it keeps capacity / working set of it, as the adaptive
     * replacement of the CPUs' L3s measured (docs/model.md, "On-chip memory"). */
    bool no_partial;
} ffn_mem_level;

/* The collectives a link's fitted model covers (docs/model.md, "Collectives"). The message is
 * the buffer as nccl-tests sizes it: all-reduce the whole buffer on every device, all-gather the
 * gathered output, reduce-scatter the input, all-to-all one device's send buffer (a chunk for
 * each peer, its own included). FFN_COLL_CUSTOM_ALL_REDUCE is the serving engine's own
 * all-reduce kernel (vLLM's and SGLang's custom all-reduce, captured in a CUDA graph). */
typedef enum ffn_coll_op {
    FFN_COLL_ALL_REDUCE = 0,
    FFN_COLL_ALL_GATHER,
    FFN_COLL_REDUCE_SCATTER,
    FFN_COLL_ALLTOALL,
    FFN_COLL_CUSTOM_ALL_REDUCE,
    FFN_COLL_COUNT
} ffn_coll_op;

#define FFN_COLL_MAX_SIZES 8

/* One collective on one group size, fitted to measured times:
 *   t = latency_s + busf(op, gpus) * bytes / bus_bps
 * with the ring's bus factor busf: 2 (n-1)/n for an all-reduce, (n-1)/n for the others
 * (nccl-tests' "bus bandwidth", doc/PERFORMANCE.md of NVIDIA/nccl-tests). */
typedef struct ffn_coll_fit {
    uint32_t gpus;
    double latency_s;
    double bus_bps;
    double lo_bytes, hi_bytes; /* the message sizes it was fitted over */
    double p10, p90;           /* measured/predicted over its points */
    double median_abs;         /* median |predicted/measured - 1| */
    uint32_t points;
} ffn_coll_fit;

/* A link's fitted collectives, per op in rising group size; n[op] 0 = the ring model of the
 * link's bandwidth and latency applies. */
typedef struct ffn_coll_model {
    ffn_coll_fit fit[FFN_COLL_COUNT][FFN_COLL_MAX_SIZES];
    int n[FFN_COLL_COUNT];
    /* The largest message the engine hands its custom all-reduce (`custom_max`); larger ones go
     * to NCCL. 0 = no limit. */
    double custom_max_bytes;
    char source[1024]; /* `collectives.source`: what was fitted to what, and when */
} ffn_coll_model;

/* A link: scale-up (NVLink, Infinity Fabric, ICI, UPI) or scale-out (InfiniBand, Ethernet). */
typedef struct ffn_link {
    char kind[32];        /* "" when the device has none */
    double bandwidth_bps; /* per direction, per device */
    double latency_s;     /* per message */
    ffn_coll_model coll;  /* fitted collectives (scale-up: `collectives:` of the spec) */
} ffn_link;

/* The KV-cache classes attention is fitted per: 16-bit caches (bf16, fp16) and 8-bit ones (fp8,
 * int8), whose kernels dequantise on the way in. */
typedef enum ffn_attn_kv { FFN_ATTN_KV16 = 0, FFN_ATTN_KV8, FFN_ATTN_KV_COUNT } ffn_attn_kv;

/* One attention kernel's fitted efficiency (docs/model.md, "Attention"). Decode over seqs
 * sequences with kv_heads KV heads each:
 *   t = launch_s + seq_s seqs + unit_s seqs kv_heads + max(F / (peak compute_max),
 *                                                          B / (bw memory_max))
 * prefill of q_tokens tokens in seqs chunks:
 *   t = launch_s + seq_s seqs + unit_s q_tokens + B / (bw memory_max) + F / (peak compute_max)
 * F and B as ffn_attn_work counts them, peak the compute dtype's, bw the main memory's. */
typedef struct ffn_attn_eff {
    bool fitted; /* false: the coarse roofline applies */
    double launch_s, seq_s, unit_s;
    double memory_max, compute_max;
    double p10, p90;   /* measured/predicted over its points */
    double median_abs; /* median |predicted/measured - 1| */
    uint32_t points;
} ffn_attn_eff;

typedef struct ffn_attn_model {
    ffn_attn_eff decode[FFN_ATTN_KV_COUNT], prefill[FFN_ATTN_KV_COUNT];
    char source[1024]; /* `attention.source` */
} ffn_attn_model;

/* The GEMM tiles of the kernels that compute in one dtype, where they differ from the device's
 * (a CPU whose bf16 GEMMs run on AMX tiles padded to 16 rows while its fp32 ones pad nothing).
 * A GEMM of m < tile rows gets a row tile shrunk to the rows there are, in powers of two from
 * min_rows (matrix instructions have a smallest shape); one of m <= gemv_rows runs as a
 * streaming GEMV with no row padding at all. */
typedef struct ffn_tileset {
    uint32_t tiles[FFN_HW_MAX_TILES][2]; /* rows x cols */
    int n_tiles;                         /* 0 = not set: the device's tiles apply */
    uint32_t min_rows;                   /* 0 = 16 */
    uint32_t gemv_rows;                  /* 0 = none */
} ffn_tileset;

/* One rule of a kernel dispatch (docs/model.md, "The tile pipeline"): a GEMM of at most m_max
 * rows and n_max output columns (0 = no bound) runs
 *  - FFN_RULE_TILE: on output tiles of tm rows x tn columns, tk deep a pipeline step,
 *    persistently over the units (one tile cost, block_s, for the whole run: each unit loads its
 *    next tile under its last one's epilogue), without splitting K: what a serving engine's own
 *    kernels do where they pick their tile from the shape (vLLM's CUTLASS fp8 GEMMs on Hopper);
 *  - FFN_RULE_WAVES: the same, on the tile a wave search picks among rows[] x (col_step,
 *    2 col_step, .. col_max): the fewest waves over the units, then the fullest last wave, then the
 *    smallest tile (DeepGEMM's heuristic);
 *  - FFN_RULE_BEST: on the best of the device's tiles, K split or streamed where faster (what a
 *    GEMM without rules gets);
 *  - FFN_RULE_WHOLE: on the best of the device's tiles with K whole, neither split nor
 *    streamed (kernels that launch one block per output tile over all of K, as the Triton and
 *    DeepGEMM-style block-scaled fp8 GEMMs do). */
typedef enum ffn_rule_kind {
    FFN_RULE_TILE,
    FFN_RULE_WAVES,
    FFN_RULE_BEST,
    FFN_RULE_WHOLE
} ffn_rule_kind;

#define FFN_RULE_MAX_ROWS 4

typedef struct ffn_kernel_rule {
    uint32_t m_max, n_max;
    ffn_rule_kind kind;
    uint32_t tm, tn, tk; /* TILE: the tile; WAVES: tk only */
    uint32_t rows[FFN_RULE_MAX_ROWS];
    int n_rows;
    uint32_t col_step, col_max;
} ffn_kernel_rule;

typedef struct ffn_kernel_rules {
    ffn_kernel_rule r[FFN_HW_MAX_RULES];
    int n; /* 0 = none: the best of the device's tiles, split-K and stream-K allowed */
} ffn_kernel_rules;

/* Realistic-efficiency model (docs/model.md, "Efficiency"): a GEMM of FLOPs F and compulsory
 * bytes B on a tile grid of `tiles` tiles takes
 *   t = launch_s + pnorm_p( F / (peak * compute_max * wave_eff * F/(F+compute_half_flops)),
 *                           B / (bw * memory_max * B/(B+memory_half_bytes)) )
 * (memory_max_gemv in place of memory_max, when it is set, for a GEMM of one row or of up to
 * its dtype's gemv_rows rows: ffn_gemv_rows)
 * where wave_eff is the useful share of the work paid for on the best tile shape in tiles[]
 * (padding to whole tiles, a partly empty last wave, split-K when there are fewer tiles than
 * units; docs/model.md), and pnorm_p(a,b) = (a^p + b^p)^(1/p) (p = 0 means max(a,b)). */
typedef struct ffn_eff {
    double compute_max; /* fraction of peak reached by large, well-shaped GEMMs, (0,1] */
    double compute_max_dt[FFN_DT_COUNT]; /* per compute dtype where it differs; 0 = compute_max */
    double compute_half_flops; /* op size at which the size ramp halves efficiency; 0 = off */
    double memory_max;         /* fraction of peak bandwidth reached by large transfers, (0,1] */
    double memory_half_bytes;  /* transfer size at which a GEMM's ramp halves bandwidth (its
                                  pipeline fill; elementwise kernels pay only launch_s); 0 = off */
    /* Fraction of peak bandwidth reached by matrix-vector products (GEMMs of one row: batch-1
     * decode), whose kernels stream the weights with nothing else to do, where it differs
     * from memory_max; 0 = memory_max. */
    double memory_max_gemv;
    uint32_t tiles[FFN_HW_MAX_TILES][2]; /* GEMM output tiles (rows x cols) the library picks */
    int n_tiles;                         /* 0 = no wave quantization */
    ffn_tileset tiles_dt[FFN_DT_COUNT];  /* per compute dtype where it differs; n_tiles 0 = the
                                            device's tiles (min 16 rows, no GEMV rows) */
    double launch_s;                     /* fixed device-side cost per kernel */
    /* Per-call overhead of the harness that measured the data the parameters were fitted to
     * (host-side timing, framework dispatch). Not device time: predictions leave it out, the
     * fit adds it back to compare with its measurements. */
    double harness_s;
    double overlap_p; /* p of the p-norm; 0 = max (perfect overlap) */
    /* Wave utilisation (NeuSight's form, docs/model.md "Waves"): a GEMM computing in dtype d
     * whose best tile grid runs in W waves over the compute units reaches
     *   util = util_gamma[d] - util_alpha[d] / W
     * of peak in place of compute_max_dt[d] / compute_max. util_gamma[d] 0 = off (the
     * dtype's compute_max applies, as before). */
    double util_gamma[FFN_DT_COUNT];
    double util_alpha[FFN_DT_COUNT];
    /* Fraction of peak bandwidth reached by elementwise kernels (activation, gate multiply,
     * bias): a different kernel kind from a GEMM's operand streams; 0 = memory_max. */
    double memory_max_elem;
    /* dequant_cost: for the integer weight formats with float activations (int8, int4;
     * docs/model.md, "Quantized weights and activations"), where measured: vector ops one
     * weight's dequantisation costs a GEMM that packs them (more rows than the GEMV rows), 0 =
     * the count's own (1 op a weight), range [1, 64].
     * memory_max_gemv_dt: per weight dtype, the fraction of peak bandwidth that format's
     * decode stream reaches, covering the first row's work (an int8/int4 stream dequantises in
     * registers beside the weight stream; a float one widens bf16/fp16 to fp32 or not), 0 =
     * memory_max_gemv. `ffnroof calibrate` fits it for the integer formats always and for a
     * float dtype whose decode the shared memory_max_gemv misses by over 10% (the portable
     * bf16 stream converts in scalar code and reads at half the fp32 stream's rate). */
    double dequant_cost[FFN_DT_COUNT];
    double memory_max_gemv_dt[FFN_DT_COUNT];
    /* Per on-chip level (index as hw->levels): the fraction of that level's bandwidth the
     * kernels reach reading the data resident in it (warm weights), where measured
     * (`ffnroof fit --fit level` on warm data: the H200's L2 under cuBLAS GEMMs); 0 = the
     * op's fraction of the memory bandwidth, as before. The tiled-GEMM traffic through a
     * level (--onchip) keeps the op's fraction: nothing measured it. */
    double level_max[FFN_HW_MAX_LEVELS];
    /* Per compute dtype, the fixed cost of one GEMM where it differs from launch_s (0 = launch_s):
     * what a serving engine's quantised linear layer spends beyond its dot products and bytes
     * at small sizes (the activations' quantisation kernel and its launch, the block-scaled
     * kernels' set-up; `ffnroof fit --fit launch-dt` on an op table). */
    double launch_dt[FFN_DT_COUNT];
    /* Per compute dtype, what quantising one token row of a GEMM's input costs beyond its bytes
     * (an engine's activation-quantisation kernel run row by row; 0 = nothing; `ffnroof fit
     * --fit quant-row`). */
    double quant_row_s[FFN_DT_COUNT];
    /* The latency floor of a GEMM with little parallelism (docs/model.md, "The latency floor"):
     * its output tiles run in W waves of the units, each tile's reduction a pipeline of
     * S = ceil(K bits / 1024) steps (128 bytes of K a step: 64 bf16 elements, 128 fp8); it takes
     * at least launch + W (block_s + S kstep_s), whatever its bytes and FLOPs. 0 = none.
     * `ffnroof fit --fit floor`. */
    double block_s;
    double kstep_s;
    /* The tile pipeline (docs/model.md, "The tile pipeline"; `gemm_model: pipeline`): a GEMM's
     * compute time is the time the units take to run its tiles, each tile block_s plus one
     * pipeline step per 128 bytes of K at util_gamma of the unit's share of peak, on the best of
     * the device's tiles with K split or streamed where that is faster (fixup_s for each
     * reduction of partial tiles), or on the tile of the dtype's kernel rules; in place of the
     * wave efficiency, util_alpha and the latency floor (kstep_s unused). false = the wave model.
     */
    bool pipeline;
    double fixup_s;
    ffn_kernel_rules rules_dt[FFN_DT_COUNT];
} ffn_eff;

/* How far a prediction on this device may be off (docs/model.md, "Uncertainty"): quantiles of
 * measured/predicted over the points the efficiency model was fitted to (or a stated default
 * for a spec without a fit). A prediction t is printed as t (t*p10 - t*p90, p10-p90). */
typedef struct ffn_unc {
    double p10;        /* 10th percentile of measured/predicted, (0, 1] typically */
    double p90;        /* 90th percentile, >= p10 */
    double median_abs; /* the fit's median |predicted/measured - 1|; 0 = not recorded */
    double max_abs;    /* the fit's worst |predicted/measured - 1|; 0 = not recorded */
    uint32_t points;   /* points the fit used; 0 = not recorded */
    bool is_default;   /* true: no fit residuals in the spec; p10/p90 are the default */
    /* per weight dtype where the fit had enough of its points (`uncertainty.by_dtype`): its own
     * p10 and p90 of measured/predicted; 0 = none, the device's apply */
    double dt_p10[FFN_DT_COUNT], dt_p90[FFN_DT_COUNT];
} ffn_unc;

/* Default range of a spec without fit residuals: measured/predicted in [0.80, 1.25] at
 * p10-p90, a stated convention (docs/model.md, "Uncertainty"), not a measurement. */
#define FFN_UNC_DEFAULT_P10 0.80
#define FFN_UNC_DEFAULT_P90 1.25

/* How well the efficiency model fitted the kernel runs it was fitted to (`fit:` in the spec,
 * written by `ffnroof calibrate`): errors are |predicted/measured - 1| of the fastest runs. */
typedef struct ffn_fit_quality {
    bool recorded;          /* the spec has a `fit:` section (false: nothing known) */
    bool failed;            /* the fit did not run or failed: efficiency left neutral */
    double median_error;    /* over the fitted points */
    double worst_error;     /* the largest over the fitted points */
    double held_out_median; /* over the held-out check runs; 0 when there were none */
    uint32_t points;        /* fitted points */
} ffn_fit_quality;

/* A fit whose own median error exceeds this is flagged wherever its spec predicts. */
#define FFN_FIT_WARN_MEDIAN 0.10

typedef struct ffn_hw {
    char name[64];
    char vendor[32];
    ffn_hw_kind kind;
    /* Architecture family (`family:`, e.g. hopper, blackwell, cdna3; "" when not given): the
     * matrix formats it has units for (hw/families.yaml, checked against `peak:`) and the
     * fitted device an unseen one takes its efficiency from (docs/model.md, "Transfer"). */
    char family[24];
    char source[1024];               /* datasheet(s) or "measured by ... on <host>, <date>" */
    double peak_flops[FFN_DT_COUNT]; /* dense peak per compute dtype; 0 = not supported */
    uint32_t compute_units;          /* SMs, CUs, cores, TensorCores */
    double clock_hz;
    double mem_capacity_bytes;
    double mem_bandwidth_bps; /* main memory (HBM/DRAM), read+write peak */
    ffn_mem_level levels[FFN_HW_MAX_LEVELS];
    int n_levels;
    ffn_link scaleup;
    ffn_link scaleout;
    uint32_t devices_per_node; /* devices sharing one scale-up domain; 1 when none */
    ffn_eff eff;
    ffn_attn_model attn; /* fitted attention kernels (`attention:`); none fitted when absent */
    ffn_unc unc;         /* from `uncertainty:`; the default (is_default) when absent */
    double tdp_w;        /* 0 when not published */
    ffn_fit_quality fit; /* from `fit:`; recorded false when absent */
    /* The serving engine whose kernel profile was applied (ffn_hw_apply_engine); NONE = the
     * spec as fitted (its baseline engine's kernels) */
    ffn_engine engine;
    /* The serving engine's fused-MoE kernel families (engines.yaml `moe:`), carried onto a GPU's
     * spec by ffn_hw_apply_engine, its baseline engine's included: the MoE layers of a GPU
     * under an engine (moe_engine set) are priced as its fused module runs them, with the
     * family that applies (ffn_moe_kernel_on) or the fused model's defaults (sim/moe.c,
     * docs/model.md "MoE layers as fused kernels"); no engine: the generic grouped GEMMs */
    ffn_engine_moe moe_kernels[FFN_ENGINE_MAX_MOE];
    int n_moe_kernels;
    ffn_engine moe_engine; /* whose they are */
} ffn_hw;

/* The warning every prediction made with hw carries when its fit failed or its median error is
 * above FFN_FIT_WARN_MEDIAN: writes one sentence (naming the spec) into buf and returns true;
 * false (buf "") when the fit is fine or not recorded (sim/hw_record.c). */
bool ffn_hw_fit_warning(const ffn_hw *hw, char *buf, size_t n);

/* The p10 and p90 ratios measured/predicted of hw: its recorded ones, else the default (also
 * for an ffn_hw filled in code with unc left zero). Returns true when they are the default. */
bool ffn_hw_unc_range(const ffn_hw *hw, double *p10, double *p90);
/* The same for GEMMs of weight dtype dt: the dtype's own range where the spec has it (fp16 and
 * bf16 stand in for each other), else the device's. */
bool ffn_hw_unc_range_dt(const ffn_hw *hw, ffn_dtype dt, double *p10, double *p90);

/* Kind as text ("gpu", "cpu", "accelerator"; sim/hw_record.c). */
const char *ffn_hw_kind_name(ffn_hw_kind k);

#endif
