/* The small vocabulary shared by the simulator, the loaders and the kernels: data types, FFN
 * activations and kernel ISA levels. Only enums and pure helpers; no state. */
#ifndef FFNROOF_TYPES_H
#define FFNROOF_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Numeric formats a weight or activation can be stored and computed in. */
typedef enum ffn_dtype {
    FFN_DT_FP32 = 0,
    FFN_DT_TF32, /* fp32 storage, tensor-core TF32 math */
    FFN_DT_BF16,
    FFN_DT_FP16,
    FFN_DT_FP8,
    FFN_DT_INT8,
    FFN_DT_INT4, /* 4-bit weights with one 16-bit scale per group */
    /* The block-scaled formats of GPU serving (docs/model.md, "GPU dtypes"). Each is a storage
     * format with its scales; the matrix units it multiplies on are ffn_dtype_unit's. */
    FFN_DT_FP8_BLOCK, /* e4m3 with fp32 scales per 1x128 activation and 128x128 weight block
                         (DeepSeek-V3's format); multiplies on the fp8 units */
    FFN_DT_NVFP4,     /* e2m1 with one e4m3 scale per 16 elements and an fp32 tensor scale */
    FFN_DT_MXFP4,     /* e2m1 with one e8m0 scale per 32 elements (OCP Microscaling) */
    FFN_DT_COUNT
} ffn_dtype;

/* FFN activation. The gated forms (GLU family) use two input projections, gate and up:
 * h = act(x W_gate) * (x W_up). */
typedef enum ffn_act {
    FFN_ACT_RELU = 0,
    FFN_ACT_GELU,      /* erf form */
    FFN_ACT_GELU_TANH, /* tanh approximation */
    FFN_ACT_SILU,
    FFN_ACT_SWIGLU,
    FFN_ACT_GEGLU,
    FFN_ACT_REGLU,
    FFN_ACT_COUNT
} ffn_act;

/* "fp32", "bf16", ... ; NULL for an out-of-range value. */
const char *ffn_dtype_name(ffn_dtype dt);
/* Parse a dtype name (case-insensitive; also accepts float32/float16/bfloat16/e4m3/e5m2).
 * Returns 0 and sets *out, or FFN_EINVAL. */
int ffn_dtype_parse(const char *s, ffn_dtype *out);
/* Storage bits per element, excluding group scales (fp32 32, tf32 32, int4 4, nvfp4 4, ...). */
unsigned ffn_dtype_bits(ffn_dtype dt);
/* Storage bytes per element of an activation (a row of K elements) with its scales: int4 one
 * 16-bit scale per group of group_size elements (0 = 128); fp8_block one fp32 scale per 128
 * (1 + 4/128); nvfp4 one byte per 16 (0.5 + 1/16); mxfp4 one byte per 32 (0.5 + 1/32). A weight
 * matrix's bytes are ffn_weight_matrix_bytes'. */
double ffn_dtype_bytes(ffn_dtype dt, unsigned group_size);
/* The dtype whose matrix units (and `peak:` key) a GEMM in dt multiplies on: fp8 for fp8_block,
 * dt itself for every other. */
ffn_dtype ffn_dtype_unit(ffn_dtype dt);
/* True for the block-scaled GPU formats (fp8_block, nvfp4, mxfp4). */
bool ffn_dtype_block_scaled(ffn_dtype dt);
/* Elements along K that share one scale in a block-scaled format (128, 16, 32), else 0. */
unsigned ffn_dtype_scale_block(ffn_dtype dt);

/* Quantized weights: what a [K][N] weight matrix (x W: K inputs, N output channels; groups run
 * along K, as include/ffnroof/quant.h) stores and what its GEMMs spend on the quantisation. The
 * simulator (sim/ffn.c, sim/moe.c) and the kernels' work count (kernels/count.c) both call these,
 * so the two count the same work; docs/model.md gives the formulas and their sources. */
#define FFN_QACT_OPS_PER_ELEM 3.0 /* per-token int8 activations: max |x|, x * (1/s), round */
#define FFN_QACT_SCALE_BYTES 4.0  /* one fp32 scale per token (row) */
#define FFN_QW8_SCALE_BYTES 4.0   /* int8 weights: one fp32 scale per output channel */
#define FFN_QW4_SCALE_BYTES 2.0   /* int4 weights: one 16-bit scale per group */
#define FFN_QW4_ZERO_BYTES 0.5    /* int4 weights with a zero point: one 4-bit zero per group */

/* Bytes of a [K][N] weight matrix in dt with its scales: K N ffn_dtype_bits(dt) / 8 for the
 * float formats (fp8's one per-tensor scale left out); int8: K N + 4 N; int4: K N / 2 +
 * ceil(K / G) N (2 + (zero_point ? 0.5 : 0)), G = group (0 means 128); fp8_block: K N + 4
 * ceil(K / 128) ceil(N / 128); nvfp4: K N / 2 + ceil(K / 16) N + 4; mxfp4: K N / 2 +
 * ceil(K / 32) N. */
double ffn_weight_matrix_bytes(ffn_dtype dt, unsigned group, bool zero_point, uint64_t K,
                               uint64_t N);
/* Bytes per weight of such a matrix, its scales and zero points included:
 * ffn_weight_matrix_bytes(dt, group, zero_point, K, 1) / K (K >= 1). What a footprint made of
 * parameter counts multiplies by (int8: 1 + 4 / K, the per-channel scale shared by K weights). */
double ffn_weight_elem_bytes(ffn_dtype dt, unsigned group, bool zero_point, uint64_t K);

/* Vector operations (not FLOPs: fp32 vector work beside the GEMM's 2 M N K, timed at the fp32
 * peak) that a GEMM [M][K] x [K][N] with weights in wdt spends on its quantisation when it
 * multiplies in adt; 0 for float weights and for M = 0:
 *  - int8/int4 weights, float activations (W8A16, W4A16, W8A32, ...): the weights are
 *    dequantised once per call, one multiply by the scale per weight plus one subtraction of
 *    the zero point where there is one: K N (1 + zero_point);
 *  - int8 activations (W8A8, W4A8): the int32 dot products are rescaled to fp32 once per output
 *    and scale group along K, 2 ops each (s_x s_w, then times the sum): 2 M N n_g, n_g = 1
 *    for int8 weights and ceil(K / G) (1 + zero_point) for int4.
 * The per-token quantisation of the activations themselves (FFN_QACT_OPS_PER_ELEM per element)
 * is counted where the activations are quantised, not here. */
double ffn_quant_gemm_vec_ops(ffn_dtype wdt, ffn_dtype adt, unsigned group, bool zero_point,
                              uint64_t M, uint64_t K, uint64_t N);

/* ISA levels, lowest first. A kernel's level is the ISA its microkernels are written for;
 * FFNROOF_ISA=<level> caps what dispatch may use to that level's features (so FFNROOF_ISA=avx2 on
 * an AVX-512 host runs what an AVX2 host would run). ref is the scalar oracle: never chosen
 * unless asked for. */
typedef enum ffn_isa {
    FFN_ISA_REF = 0,
    FFN_ISA_PORTABLE,    /* plain C vectorised by the compiler at the baseline ISA */
    FFN_ISA_AVX2,        /* x86-64-v3: AVX2 + FMA + F16C */
    FFN_ISA_AVX512,      /* AVX-512 F/BW/VL/DQ (Skylake-SP .. Ice Lake) */
    FFN_ISA_AVX512_BF16, /* + AVX512-BF16 (Cooper Lake, Zen 4/5) */
    FFN_ISA_AMX,         /* + AMX-BF16 (Sapphire Rapids and later) */
    FFN_ISA_NEON,        /* AArch64 Advanced SIMD */
    FFN_ISA_SVE,         /* AArch64 SVE/SVE2, vector-length agnostic */
    FFN_ISA_COUNT
} ffn_isa;

/* "avx512", ...; NULL for an out-of-range value. */
const char *ffn_isa_name(ffn_isa isa);
/* Parse an ISA level name (case-insensitive). Returns 0 and sets *out, or FFN_EINVAL. */
int ffn_isa_parse(const char *s, ffn_isa *out);

/* The serving engine whose kernels a table (or a prediction) stands for. */
typedef enum ffn_engine {
    FFN_ENGINE_NONE = 0, /* the device's own baseline (cuBLAS / hipBLASLt GEMMs) */
    FFN_ENGINE_VLLM,
    FFN_ENGINE_SGLANG,
    FFN_ENGINE_TRTLLM,
    FFN_ENGINE_COUNT
} ffn_engine;

/* "vllm", "sglang", "trtllm", "none"; NULL out of range. */
const char *ffn_engine_name(ffn_engine e);
/* Case-insensitive; also the tables' framework names (VLLM, SGLang, TRTLLM, tensorrt-llm).
 * Returns 0 or FFN_EINVAL. */
int ffn_engine_parse(const char *s, ffn_engine *out);

const char *ffn_act_name(ffn_act a);
int ffn_act_parse(const char *s, ffn_act *out);
/* True for swiglu, geglu, reglu (gate and up projections). */
bool ffn_act_gated(ffn_act a);

/* Shape of one dense FFN layer. */
typedef struct ffn_kshape {
    size_t d; /* model (hidden) size, >= 1 */
    size_t f; /* intermediate size, >= 1 */
    ffn_act act;
    bool bias;
    /* Quantized kernels only (wdtype int4; zero for every other kernel): the K group of one
     * scale (32, 64 or 128, dividing d and f) and whether groups carry a zero point
     * (include/ffnroof/quant.h gives the formats' semantics). */
    unsigned group;
    bool zero_point;
} ffn_kshape;

#endif
