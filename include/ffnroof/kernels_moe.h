/* Mixture-of-experts FFN layer forward, built on the dense kernel API of kernels.h: a router
 * GEMM, softmax or sigmoid scoring, top-k selection, a counting-sort permutation of the token
 * copies into expert order, the expert FFNs run grouped (each expert is one dense-kernel call on
 * its contiguous block of tokens, through the ffn_kernel function pointers, so the same code runs
 * on the reference, AVX-512 or NEON dense kernels), the weighted combine back into token order,
 * and optional shared experts (a dense FFN applied to every token and added).
 *
 * Routing rules (the same in the fast path and in the reference):
 *  - softmax scoring (Mixtral): p = softmax(logits) over all E experts; the top k are chosen by
 *    logit (the same order as by p, but immune to exp() rounding two logits onto one p); the
 *    weights are p, or p / sum over the chosen k of p when norm_topk is set;
 *  - sigmoid scoring (DeepSeek-V3): s = sigmoid(logits); the top k are chosen by s + b_select
 *    (the selection-only bias, DeepSeek-V3's e_score_correction_bias) when b_select is given,
 *    else by logit; the weights are s, or s / sum over the chosen k of s when norm_topk is set;
 *  - every weight is then multiplied by route_scale (0 means 1; DeepSeek-V3's
 *    routed_scaling_factor);
 *  - ties: on equal selection key, the lower expert index wins. A token's k choices are listed
 *    in order of decreasing key (ties: increasing expert index).
 * Shared experts: n shared experts of intermediate size f are one dense FFN of intermediate
 * size n*f (concatenate their gate/up columns and down rows), so the shape carries one f_shared.
 *
 * Conventions follow kernels.h: fp32 activations x [T][d], y [T][d], row-major, any alignment;
 * unpacked weights fp32 row-major; the router stays fp32 whatever the expert dtype. Nothing here
 * allocates, prints or exits; the caller provides packed-weight memory and a workspace sized by
 * the functions below. Errors: FFN_EINVAL (NULL pointer, zero dimension, top_k > n_experts or 0,
 * packed weights of another shape), FFN_ENOSPACE (buffer or workspace too small), or what the
 * dense kernel returns. */
#ifndef FFNROOF_KERNELS_MOE_H
#define FFNROOF_KERNELS_MOE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/kernels.h"

typedef enum ffn_moe_score { FFN_MOE_SOFTMAX = 0, FFN_MOE_SIGMOID } ffn_moe_score;

/* Shape of one MoE layer. */
typedef struct ffn_moe_shape {
    size_t d;         /* model size, >= 1 */
    size_t f;         /* intermediate size of each routed expert, >= 1 */
    size_t n_experts; /* E, >= 1 */
    size_t top_k;     /* k, 1 <= k <= E */
    size_t f_shared;  /* intermediate size of the shared-expert FFN; 0 = no shared expert */
    ffn_act act;      /* activation of routed and shared experts */
    bool bias;        /* experts (and the shared FFN) have biases */
    ffn_moe_score score;
    bool norm_topk;    /* renormalise the k chosen weights to sum to 1 */
    float route_scale; /* multiplies every routed weight; 0 means 1 */
    /* Quantized experts (a kernel with int8 or int4 weights): int4's weights per scale (32, 64
     * or 128) and zero points, passed to every expert's ffn_kshape; 0 and false otherwise. */
    unsigned group;
    bool zero_point;
} ffn_moe_shape;

/* Unpacked fp32 weights (borrowed; never modified). */
typedef struct ffn_moe_weights {
    const float *w_router;       /* [d][E] */
    const float *b_select;       /* [E] selection-only bias (sigmoid scoring), or NULL */
    const ffn_kweights *experts; /* [E], each as in kernels.h for shape {d, f, act, bias} */
    const ffn_kweights *shared;  /* shape {d, f_shared, act, bias}; NULL iff f_shared == 0 */
} ffn_moe_weights;

/* Routing decisions of one forward call. In the fast path these point into the caller's
 * workspace (valid until it is reused); for the reference the caller provides the arrays.
 * Slot t*k + j is token t's j-th choice. */
typedef struct ffn_kmoe_routing {
    int32_t *expert; /* [T*k] expert of each slot */
    float *weight;   /* [T*k] combine weight of each slot */
    size_t *offset;  /* [E+1] expert e's rows in the permuted order are offset[e]..offset[e+1]-1 */
    int32_t *perm;   /* [T*k] permuted row p holds slot perm[p]; a stable counting sort by
                        expert, so within an expert the rows are in increasing token order */
} ffn_kmoe_routing;

/* Wall-clock seconds of each phase of one fast-path forward call (CLOCK_MONOTONIC). Routing
 * overhead is route_s + permute_s + combine_s. */
typedef struct ffn_moe_timing {
    double route_s;   /* router GEMM, scoring, top-k */
    double permute_s; /* counting sort and gather of token copies into expert order */
    double experts_s; /* the grouped expert FFNs */
    double shared_s;  /* the shared-expert FFN */
    double combine_s; /* weighted scatter-add back into token order */
    double total_s;
} ffn_moe_timing;

/* Optional outputs of ffn_moe_forward (pass NULL to skip). */
typedef struct ffn_kmoe_stats {
    ffn_kmoe_routing routing; /* points into the workspace */
    ffn_moe_timing timing;
} ffn_kmoe_stats;

/* The work of one MoE forward call, counted the simulator's way: router 2*T*d*E FLOPs reading
 * the fp32 router weights (d*E*4 bytes); each expert that receives n >= 1 tokens counts as the
 * dense kernel call ffn_kernel_flops/bytes on n tokens (so weights only of experts that receive
 * a token); the shared FFN counts as a dense call on T tokens; dispatch and combine each move
 * T*k*d*4 bytes of fp32 activations. Scoring, top-k and the combine's multiply-adds are not
 * counted as FLOPs. */
typedef struct ffn_moe_work {
    double router_flops, router_bytes;
    double expert_flops, expert_bytes;
    double shared_flops, shared_bytes;
    double dispatch_bytes, combine_bytes;
    size_t active_experts;
    double flops, bytes; /* totals */
} ffn_moe_work;

/* Validate a shape (0 or FFN_EINVAL). */
int ffn_moe_shape_check(const ffn_moe_shape *s);

/* Bytes of packed weights for dense kernel k (0 for an invalid shape or kernel). */
size_t ffn_moe_packed_bytes(const ffn_kernel *k, const ffn_moe_shape *s);
/* Pack the router and every expert into caller memory `packed`, which must be 64-byte aligned
 * (FFN_EINVAL otherwise). The packed weights are then used only with the same k and shape. */
int ffn_moe_pack(const ffn_kernel *k, const ffn_moe_shape *s, const ffn_moe_weights *w,
                 void *packed, size_t packed_bytes);
/* Bytes of workspace a forward call on up to T tokens needs (any alignment); 0 when invalid.
 * Assumes k's own workspace need does not shrink as T grows. */
size_t ffn_moe_workspace_bytes(const ffn_kernel *k, const ffn_moe_shape *s, size_t T, int threads);
/* y = MoE(x). threads is passed to the dense kernel (<= 0: all cores). stats may be NULL. */
int ffn_moe_forward(const ffn_kernel *k, const ffn_moe_shape *s, const void *packed, size_t T,
                    const float *x, float *y, void *ws, size_t ws_bytes, int threads,
                    ffn_kmoe_stats *stats);

/* Scalar reference of the whole layer on the unpacked weights, accumulating in double: the
 * oracle of the tests. route may be NULL; else its arrays ([T*k], [T*k], [E+1], [T*k]) are
 * filled. ws: ffn_moe_ref_workspace_bytes(s) bytes, any alignment. */
size_t ffn_moe_ref_workspace_bytes(const ffn_moe_shape *s);
int ffn_moe_ref_forward(const ffn_moe_shape *s, const ffn_moe_weights *w, size_t T, const float *x,
                        float *y, ffn_kmoe_routing *route, void *ws, size_t ws_bytes);

/* The work of one call given how many tokens each expert received (expert_tokens [E], e.g.
 * offset[e+1] - offset[e] of a routing). k gives the expert weight dtype. */
int ffn_moe_count(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                  const size_t *expert_tokens, ffn_moe_work *out);
double ffn_moe_flops(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                     const size_t *expert_tokens);
double ffn_moe_bytes(const ffn_kernel *k, const ffn_moe_shape *s, size_t T,
                     const size_t *expert_tokens);

#endif
