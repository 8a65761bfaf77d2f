/* Real FFN kernels: y = act(x W_gate [, x W_up]) W_down for one layer: one portable driver
 * (kernels/driver) over per-ISA microkernels (portable C, AVX2, AVX-512, AVX512-BF16, AMX, NEON,
 * SVE), chosen once at run time per weight dtype from a table whose rows carry the CPU features
 * they need, plus a scalar reference that is the test oracle only. Kernels never allocate and
 * never print: the caller provides the packed weights and the workspace, sized by the kernel's
 * own size functions.
 *
 * Conventions (all variants):
 *  - activations x [T][d] and y [T][d] are fp32, row-major, any alignment, T >= 0;
 *  - unpacked weights are fp32, row-major: W_gate and W_up [d][f] (x W), W_down [f][d];
 *    biases b_gate, b_up [f] and b_down [d] (NULL when the shape has no bias);
 *  - the weight dtype (fp32, bf16, fp16) is the storage format of the packed weights;
 *    accumulation is fp32 (double in the reference);
 *  - the work of one call is counted by ffn_kernel_flops()/ffn_kernel_bytes(), which equal the
 *    simulator's fused-FFN op counts for the same shape (docs/model.md). */
#ifndef FFNROOF_KERNELS_H
#define FFNROOF_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/types.h"

/* CPU features, one bit each (id, bit, name): a feature is set only when the CPU has it and the
 * OS saves its state (and, for AMX, Linux granted the tile permission). */
#define FFN_CPU_FEATURE_MAP(X)                                                                     \
    X(AVX2, 0, "avx2") /* AVX2 + FMA + F16C, OS ymm state */                                       \
    X(AVX_VNNI, 1, "avx_vnni")                                                                     \
    X(AVX512, 2, "avx512") /* F, BW, VL, DQ, OS zmm + opmask state */                              \
    X(AVX512_VNNI, 3, "avx512_vnni")                                                               \
    X(AVX512_BF16, 4, "avx512_bf16")                                                               \
    X(AVX512_FP16, 5, "avx512_fp16")                                                               \
    X(AMX_BF16, 6, "amx_bf16") /* AMX-TILE + AMX-BF16, OS tile state, Linux permission */          \
    X(AMX_INT8, 7, "amx_int8")                                                                     \
    X(NEON, 16, "neon")           /* AArch64 Advanced SIMD (HWCAP_ASIMD) */                        \
    X(ARM_FP16, 17, "asimdhp")    /* fp16 arithmetic (FEAT_FP16) */                                \
    X(ARM_DOTPROD, 18, "asimddp") /* SDOT/UDOT (FEAT_DotProd) */                                   \
    X(ARM_BF16, 19, "bf16")       /* BFDOT/BFMMLA (FEAT_BF16) */                                   \
    X(ARM_I8MM, 20, "i8mm")       /* SMMLA (FEAT_I8MM) */                                          \
    X(SVE, 21, "sve")                                                                              \
    X(SVE2, 22, "sve2")

enum {
#define FFN_CPU_ENUM(id, bit, name) FFN_CPU_##id = 1ull << (bit),
    FFN_CPU_FEATURE_MAP(FFN_CPU_ENUM)
#undef FFN_CPU_ENUM
};

/* This CPU's features (detected once: CPUID + XCR0 on x86, HWCAP/HWCAP2 on AArch64). */
uint64_t ffn_cpu_features(void);
/* The SVE vector length in bytes, 0 without SVE. */
size_t ffn_cpu_sve_vl_bytes(void);
/* "avx512" for FFN_CPU_AVX512, NULL for anything but a single known bit. */
const char *ffn_cpu_feature_name(uint64_t bit);
/* The names of the bits of mask, space-separated, into buf (snprintf-like: returns the length
 * the full list needs). */
size_t ffn_cpu_feature_list(uint64_t mask, char *buf, size_t n);

/* Where two kernel designs measured the other way round on two CPUs, the one each CPU gets
 * (kernels/tuning.c; BENCHMARKS.md has the measurements):
 *  - FFN_TUNING_DEFAULT, measured on Zen 4: the one-row decode streams read each panel in
 *    memory order; bf16 and W4A16 on AVX512-BF16 CPUs without AMX run the VDPBF16PS kernels;
 *  - FFN_TUNING_INTEL, measured on SPR/EMR-class Xeons: the one-row decode streams read each
 *    panel as four concurrent streams (quarters of K); bf16 runs the AVX-512 kernel that widens
 *    to fp32 FMAs and W4A16 the AVX-512 VPERMPS one (VDPBF16PS issues at half the FMA rate
 *    there).
 * This CPU's is FFN_TUNING_INTEL for CPUID vendor "GenuineIntel", else the default; the
 * environment variable FFNROOF_TUNING=default|intel overrides it (ffn_isa_selected refuses
 * another value). */
typedef enum ffn_tuning { FFN_TUNING_DEFAULT = 0, FFN_TUNING_INTEL, FFN_TUNING_COUNT } ffn_tuning;
/* "default", "intel"; NULL out of range. */
const char *ffn_tuning_name(ffn_tuning t);
/* What tuning t picks, in a phrase ("one-row decode streams in memory order"); NULL out of
 * range. */
const char *ffn_tuning_what(ffn_tuning t);
/* FFN_EINVAL for a name that is not a tuning's. */
int ffn_tuning_parse(const char *s, ffn_tuning *out);
/* This process's tuning (detected once; FFNROOF_TUNING honoured, a bad value ignored here). */
ffn_tuning ffn_cpu_tuning(void);
/* Where it comes from: "FFNROOF_TUNING", or "CPUID vendor <vendor>" / "the default" (not x86). */
const char *ffn_cpu_tuning_source(void);
/* Override it for this process (tests, side-by-side benchmarks): call before the first dispatch
 * (ffn_kernel_best caches its choice) or between forward calls, never during one. */
void ffn_cpu_tuning_set(ffn_tuning t);

/* Unpacked fp32 weights of one layer (borrowed; never modified). w_up is NULL unless the
 * activation is gated; biases are NULL unless shape.bias. */
typedef struct ffn_kweights {
    const float *w_gate; /* [d][f] */
    const float *w_up;   /* [d][f] */
    const float *w_down; /* [f][d] */
    const float *b_gate; /* [f] */
    const float *b_up;   /* [f] */
    const float *b_down; /* [d] */
} ffn_kweights;

/* A kernel: one ISA, one weight dtype. Every entry point validates its arguments and returns
 * 0 or a negative FFN_E* code (FFN_EINVAL for NULL pointers or zero dimensions, FFN_ENOSPACE for
 * a buffer that is too small). */
typedef struct ffn_kernel {
    const char *name; /* e.g. "f32_ffn__avx512_14x32": dtype, op, ISA, tile */
    ffn_isa isa;      /* the level its microkernels are written for */
    ffn_dtype wdtype; /* FFN_DT_FP32, FFN_DT_BF16, FFN_DT_FP16; FFN_DT_INT8, FFN_DT_INT4 */
    /* Bytes of the packed weights for this shape (0 for an invalid shape). */
    size_t (*packed_bytes)(const ffn_kshape *s);
    /* Pack fp32 weights into the kernel's layout (and dtype) in caller memory. */
    int (*pack)(const ffn_kshape *s, const ffn_kweights *w, void *packed, size_t packed_bytes);
    /* Bytes of scratch a forward call on T tokens with `threads` threads needs. */
    size_t (*workspace_bytes)(const ffn_kshape *s, size_t T, int threads);
    /* y = FFN(x). threads <= 0 means all cores. */
    int (*forward)(const ffn_kshape *s, const void *packed, size_t T, const float *x, float *y,
                   void *ws, size_t ws_bytes, int threads);
    /* Row padding, for the efficiency model (ffnroof calibrate writes it into the spec's
     * tiles_by_dtype): calls on more than stream_rows tokens run on row tiles of row_tile
     * rows, T padded up to a multiple of it (0 = no padding: T is processed as it is); calls
     * on up to stream_rows tokens stream the weights with no padding. */
    unsigned row_tile, stream_rows;
    /* The format the kernel multiplies activations in: FFN_DT_FP32 (0, every float kernel and
     * W8/W4 with fp32 activations), FFN_DT_BF16 (W8A16/W4A16 with bf16 activations) or
     * FFN_DT_INT8 (W8A8: x and h quantized per token on the fly, int8 dot products, int32
     * accumulate). x and y stay fp32 at the interface in every case. */
    ffn_dtype adtype;
    /* Private to kernels/: the driver descriptor of a driver kernel (NULL for the reference
     * kernels), which ffn_kernel_stream_rows reads. */
    const void *impl;
} ffn_kernel;

/* Tokens up to which k streams its weights instead of running its GEMM tiles (the driver's
 * gemv path: every weight byte read once, no row padding; 0 = never): what its microkernel
 * table says, for every driver kernel, else k->stream_rows. The simulator serves these calls
 * at the spec's GEMV bandwidth (ffn_gemv_rows). */
unsigned ffn_kernel_stream_rows(const ffn_kernel *k);

/* The units k's dot products run on for shape s, the peak the simulator charges its FLOPs
 * at: FFN_DT_INT8 for W8A8; the weights' own dtype for bf16/fp16 weights; FFN_DT_BF16 for W4
 * symmetric with bf16 activations on a table that multiplies bf16 code pairs (VDPBF16PS: the
 * AVX512-BF16 W4A16 kernel, decode and prefill); else FFN_DT_FP32 (every float-FMA path). */
ffn_dtype ffn_kernel_cdtype(const ffn_kernel *k, const ffn_kshape *s);

/* The work of one forward call, counted the simulator's way (fused variant: the intermediate
 * is written once and read once; weights in the kernel's dtype with their scales (s->group,
 * s->zero_point), activations fp32; W8A8 adds its per-token quantisation passes' bytes).
 * kernels/count.c gives the formulas. The FLOPs do not depend on the format; the vector work of
 * dequantising weights, quantising activations and rescaling int32 sums (0 for float weights)
 * is ffn_kernel_vec_ops, timed by the simulator at the fp32 peak. */
double ffn_kernel_flops(const ffn_kshape *s, size_t T);
double ffn_kernel_bytes(const ffn_kernel *k, const ffn_kshape *s, size_t T);
double ffn_kernel_vec_ops(const ffn_kernel *k, const ffn_kshape *s, size_t T);

/* The features a level needs (its defining ones: avx512_bf16 needs avx2 avx512 avx512_bf16) and
 * the features it lets dispatch use (its cap: avx512 allows avx2, avx_vnni, avx512, avx512_vnni,
 * avx512_fp16 but not avx512_bf16 or AMX). */
uint64_t ffn_isa_requires(ffn_isa isa);
uint64_t ffn_isa_allows(ffn_isa isa);
/* Whether this binary holds kernels of that level (its compiler had the ISA's flags). */
bool ffn_isa_built(ffn_isa isa);
/* Whether this CPU and OS run that level and the binary holds it. */
bool ffn_isa_available(ffn_isa isa);
/* The usable level names (available on this CPU and built), space-separated, into buf
 * (snprintf-like). */
size_t ffn_isa_usable_list(char *buf, size_t n);
/* The highest level this CPU runs, or the one FFNROOF_ISA names. FFN_EINVAL (unknown name) or
 * FFN_EUNSUPPORTED (a level this CPU or build cannot run) with a diag that lists the usable
 * names. */
int ffn_isa_selected(ffn_isa *out, ffn_diag *diag);

/* Every kernel in this binary, in dispatch order (newest ISA first; within a level and dtype
 * the better engine first), whether or not this CPU runs it, with the CPU features each
 * requires. Writes the first min(n, count) into out/requires (either may be NULL) and returns
 * the count. */
size_t ffn_kernel_table(const ffn_kernel **out, uint64_t *requires, size_t n);
/* The features k requires (0 for a kernel not in the table). */
uint64_t ffn_kernel_requires(const ffn_kernel *k);

/* Every kernel built into this library that this CPU and OS can run, in dispatch order, the
 * reference kernels last. Writes the first min(n, count) into out (out may be NULL when n is 0)
 * and returns the count; the kernels are static and never freed. Tests and benchmarks iterate
 * over this list. */
size_t ffn_kernel_list(const ffn_kernel **out, size_t n);

/* The activation a of the FFN (ffn_act: relu, gelu by erf, gelu_tanh, silu; a gated variant
 * applies its base activation to the gate) at g, in double: the definition the reference
 * kernels compute and every vector kernel is tested against (kernels/ref/ffn_ref.c). */
double ffn_act_ref(ffn_act a, double g);

/* The best kernel for wdtype with dispatch capped at level isa (isa = ref: the reference
 * kernel). FFN_EUNSUPPORTED when the CPU cannot run that level or no kernel of the level or
 * below stores that dtype (diag says which). */
int ffn_kernel_get(ffn_isa isa, ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *diag);
/* The kernel dispatch would pick for wdtype on a CPU with these features, capped at level isa
 * (the pure function behind ffn_kernel_get: what a Zen 4 or a Graviton 3 gets can be asked on
 * any host). FFN_EUNSUPPORTED when no row fits. */
int ffn_kernel_for_features(uint64_t features, ffn_isa isa, ffn_dtype wdtype,
                            const ffn_kernel **out, ffn_diag *diag);
/* The best kernel for wdtype on this CPU (ffn_isa_selected: FFNROOF_ISA honoured), chosen once.
 * Errors as ffn_isa_selected and ffn_kernel_get. */
int ffn_kernel_best(ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *diag);

/* The same three with the activation format as well (the quantized kernels: FFN_DT_INT8 or
 * FFN_DT_INT4 weights with FFN_DT_FP32, FFN_DT_BF16 or FFN_DT_INT8 activations). The functions
 * above are these with adtype FFN_DT_FP32: for int8 and int4 weights they return the
 * weight-only kernels (activations fp32). FFN_EUNSUPPORTED when no row of that (wdtype, adtype)
 * fits (W8A8 is int8 weights only; diag says which). */
int ffn_kernel_get_q(ffn_isa isa, ffn_dtype wdtype, ffn_dtype adtype, const ffn_kernel **out,
                     ffn_diag *diag);
int ffn_kernel_for_features_q(uint64_t features, ffn_isa isa, ffn_dtype wdtype, ffn_dtype adtype,
                              const ffn_kernel **out, ffn_diag *diag);
/* ffn_kernel_for_features_q on a CPU of tuning t (the _for_features functions use this
 * process's, ffn_cpu_tuning). */
int ffn_kernel_for_cpu_q(uint64_t features, ffn_tuning t, ffn_isa isa, ffn_dtype wdtype,
                         ffn_dtype adtype, const ffn_kernel **out, ffn_diag *diag);
/* Whether dispatch passes k over on a CPU of tuning t (a row below it measured faster there). */
bool ffn_kernel_avoided(const ffn_kernel *k, ffn_tuning t);
int ffn_kernel_best_q(ffn_dtype wdtype, ffn_dtype adtype, const ffn_kernel **out, ffn_diag *diag);

#endif
