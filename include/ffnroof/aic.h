/* Measured GPU op tables in the layout of NVIDIA's aiconfigurator collector (data/calib/aic-*,
 * docs/formats.md "Op tables"): TSV, plain or gzip, one kernel call and shape a row, its device
 * time in milliseconds; `# name: value` lines above the header hold the columns with one value
 * (framework, version, device, op_name, kernel_source, gemm_dtype, ...). GEMM rows load as fit
 * points (include/ffnroof/fit.h); MoE rows as ffn_aic_moe rows, predicted by
 * include/ffnroof/moe_fused.h; attention rows (prefill and decode) as ffn_aic_attn rows and
 * communication rows (NCCL's collectives, the engine's custom all-reduce) as ffn_aic_comm rows,
 * both fitted by include/ffnroof/attn_fit.h. */
#ifndef FFNROOF_AIC_H
#define FFNROOF_AIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/attn_fit.h"
#include "ffnroof/error.h"
#include "ffnroof/fit.h"
#include "ffnroof/types.h"

/* How a MoE table drew the tokens each expert receives (aiconfigurator's collector,
 * docs/POWER_LAW_DISTRIBUTION.md of that repository). */
typedef enum ffn_moe_draw {
    FFN_DRAW_BALANCED = 0, /* every expert gets tokens * topk / experts (rounded) */
    FFN_DRAW_POWER_LAW,    /* power-law counts with exponent alpha */
} ffn_moe_draw;

/* One MoE row: one layer as the engine's fused MoE module runs it, from router logits to the
 * combined output. */
typedef struct ffn_aic_moe {
    uint64_t tokens, hidden, inter; /* inter: the intermediate size of one expert */
    uint32_t topk, experts;
    uint32_t tp, ep; /* moe_tp_size, moe_ep_size */
    ffn_dtype wdtype, adtype;
    unsigned group; /* int4 weights: the K group (0 = 128) */
    ffn_moe_draw draw;
    /* the router the engine's collector sent the row's logits through: a group-limited top-k of
     * `groups` groups of experts, `topk_groups` of them kept (DeepSeek-V3: 8 and 4), as
     * ffn_aic_route_groups marks it; 0: plain top-k */
    uint32_t groups, topk_groups;
    double alpha; /* power-law exponent (1.01, 1.2); 0 for balanced */
    double time_s;
    uint16_t kernel; /* index into ffn_aic_table.kernels */
} ffn_aic_moe;

/* Attention rows load as ffn_attn_point, communication rows as ffn_coll_point
 * (include/ffnroof/attn_fit.h). */
typedef ffn_attn_point ffn_aic_attn;
typedef ffn_coll_point ffn_aic_comm;

#define FFN_AIC_MAX_KERNELS 64
/* Longest kernel name, its terminating NUL included (vLLM's MoE kernels reach 68 characters). */
#define FFN_AIC_KERNEL_NAME 128
/* Limits of one table (docs/formats.md, "Input limits"): text bytes after gunzip, rows, bytes
 * of one line, columns. The shipped tables hold up to 11 MB and 143k rows. */
#define FFN_AIC_MAX_TEXT_BYTES (256u << 20)
#define FFN_AIC_MAX_ROWS (4u << 20)
#define FFN_AIC_MAX_LINE 65536
#define FFN_AIC_MAX_COLUMNS 64

typedef enum ffn_aic_op {
    FFN_AIC_GEMM = 0,
    FFN_AIC_MOE,
    FFN_AIC_PREFILL_ATTN, /* op_name context_attention */
    FFN_AIC_DECODE_ATTN,  /* op_name generation_attention */
    FFN_AIC_NCCL,         /* op_name a column: all_gather, all_reduce, reduce_scatter, alltoall */
    FFN_AIC_CUSTOM_AR,    /* op_name all_reduce with allreduce_dtype: the engine's own kernel */
} ffn_aic_op;

/* A whole table in memory (heap; ffn_aic_free). */
typedef enum ffn_aic_timed { FFN_AIC_TIMED_MODULE = 0, FFN_AIC_TIMED_GEMMS } ffn_aic_timed;

typedef struct ffn_aic_table {
    ffn_aic_op op;
    ffn_engine engine; /* from `# framework:` */
    char version[32];  /* `# version:` */
    char device[96];   /* `# device:` (the device as it names itself) */
    char source[512];  /* `# source:` */
    /* MoE tables: what a row's latency times (`# timed:`): the whole module from router logits to
     * the combined output (FFN_AIC_TIMED_MODULE, the default: aiconfigurator's collector), or
     * its grouped GEMMs with what they fuse, the activation and the intermediate's quantisation
     * (FFN_AIC_TIMED_GEMMS, "gemms": a kernel tuner's own timings, as ROCm aiter's tuned fused-MoE
     * tables) */
    ffn_aic_timed timed;
    /* the kernels the rows name (`kernel_source` column or line), in order of appearance; one,
     * "-", when the table names none */
    char kernels[FFN_AIC_MAX_KERNELS][FFN_AIC_KERNEL_NAME];
    size_t n_kernels;
    /* FFN_AIC_GEMM: one fit point per row (f = 0, time_s in seconds, no_harness true: the
     * collector's times are device times of CUDA-graph replays or of eager calls) and the
     * index of each row's kernel */
    ffn_fit_point *pts;
    uint16_t *pt_kernel;
    size_t n_pts;
    /* FFN_AIC_MOE */
    ffn_aic_moe *moe;
    size_t n_moe;
    /* FFN_AIC_PREFILL_ATTN, FFN_AIC_DECODE_ATTN */
    ffn_aic_attn *attn;
    size_t n_attn;
    /* FFN_AIC_NCCL, FFN_AIC_CUSTOM_AR */
    ffn_aic_comm *comm;
    size_t n_comm;
} ffn_aic_table;

/* The rows of t whatever its op. */
size_t ffn_aic_rows(const ffn_aic_table *t);
/* The op's name as the tables write it ("gemm", "moe", "context_attention",
 * "generation_attention", "nccl", "custom_allreduce"). */
const char *ffn_aic_op_name(ffn_aic_op op);

/* Whether path is such a table: its first line is `# source:` naming aiconfigurator, or its
 * first non-comment line is a header with a `latency` column and `# op_name:` came before it
 * (or an op_name column: an NCCL table).
 * Reads at most the first 64 KiB (through gzip when the file is gzip). */
bool ffn_aic_is_table(const char *path);

/* Load a table. Every row is checked: a missing column, a non-numeric or non-positive latency or
 * dimension (window_size may be 0), an unknown dtype, distribution or collective, more KV heads
 * than heads, an unknown op is `file:line:col: message` in diag
 * and a negative code, with *t left empty. No cap on rows beyond FFN_MAX_INPUT_BYTES of text
 * (after gunzip). */
int ffn_aic_load(const char *path, ffn_aic_table *t, ffn_diag *diag);
void ffn_aic_free(ffn_aic_table *t);

/* Mark the MoE rows of t that the engine's collector routed through a group-limited top-k: the
 * rows of a model of models_dir whose router picks groups (n_group > 1, topk_group < n_group),
 * matched by hidden size, expert intermediate size, top-k and experts, in a table of an engine
 * whose collector builds the model's own router (vLLM's and SGLang's FusedMoE with its grouped
 * top-k; TensorRT-LLM's rows are routed plainly: its balanced rows halve with each doubling of
 * EP). *marked: the rows marked. Returns 0, or a negative code with diag set when a model of
 * the directory does not load. */
int ffn_aic_route_groups(ffn_aic_table *t, const char *models_dir, size_t *marked, ffn_diag *diag);

/* Mark each GEMM row with how its engine's collector timed it (io/load/aic_harness.c): as the
 * engine's linear layer (engine_linear), no per-call harness, and for the rows timed without CUDA
 * graphs their kernel's eager floor. */
void ffn_aic_mark_harness(ffn_aic_table *t);

#endif
