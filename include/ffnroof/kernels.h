/* Real FFN kernels: y = act(x W_gate [, x W_up]) W_down for one layer, in a scalar reference
 * (the test oracle, always built) and ISA-specific variants (AVX-512, NEON), chosen once at run
 * time. Kernels never allocate and never print: the caller provides the packed weights and the
 * workspace, sized by the kernel's own size functions.
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

#include "ffnroof/error.h"
#include "ffnroof/types.h"

typedef enum ffn_isa { FFN_ISA_REF = 0, FFN_ISA_AVX512, FFN_ISA_NEON, FFN_ISA_COUNT } ffn_isa;

/* Shape of one dense FFN layer. */
typedef struct ffn_kshape {
    size_t d; /* model (hidden) size, >= 1 */
    size_t f; /* intermediate size, >= 1 */
    ffn_act act;
    bool bias;
} ffn_kshape;

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
    const char *name; /* e.g. "f32_ffn__avx512_32x12" */
    ffn_isa isa;
    ffn_dtype wdtype; /* FFN_DT_FP32, FFN_DT_BF16 or FFN_DT_FP16 */
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
} ffn_kernel;

/* The work of one forward call, counted the simulator's way (fused variant: the intermediate
 * is written once and read once; weights in the kernel's dtype, activations fp32). */
double ffn_kernel_flops(const ffn_kshape *s, size_t T);
double ffn_kernel_bytes(const ffn_kernel *k, const ffn_kshape *s, size_t T);

/* Which ISAs this CPU and OS can run (CPUID + xgetbv on x86, HWCAP on Arm). */
bool ffn_isa_available(ffn_isa isa);
const char *ffn_isa_name(ffn_isa isa);
int ffn_isa_parse(const char *s, ffn_isa *out);

/* Every kernel built into this library that this CPU and OS can run, best first within each
 * (isa, wdtype) (e.g. the AMX bf16 kernel before the AVX512-BF16 one). Writes the first
 * min(n, count) into out (out may be NULL when n is 0) and returns the count; the kernels are
 * static and never freed. Tests and benchmarks iterate over this list. */
size_t ffn_kernel_list(const ffn_kernel **out, size_t n);

/* The kernel for (isa, wdtype). FFN_EUNSUPPORTED when the ISA is absent on this CPU or has no
 * kernel for that dtype (diag says which). */
int ffn_kernel_get(ffn_isa isa, ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *diag);
/* The best kernel for wdtype on this CPU, chosen once; FFNROOF_ISA=ref|avx512|neon overrides
 * (asking for an absent ISA is FFN_EUNSUPPORTED with a diag). */
int ffn_kernel_best(ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *diag);

#endif
