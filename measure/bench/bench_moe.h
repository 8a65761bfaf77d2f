/* Internal to measure/: the MoE kernel calls of the bench runner, kept in a translation unit of
 * their own so that bench_layer.c deals with an opaque MoE layer; every function mirrors one of
 * include/ffnroof/kernels_moe.h. */
#ifndef FFNROOF_MEASURE_BENCH_MOE_H
#define FFNROOF_MEASURE_BENCH_MOE_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/kernels.h"

typedef struct ffn_bmoe ffn_bmoe;

/* Softmax scoring with renormalised top-k (Mixtral), no shared expert; each expert has shape e
 * (d, f, act, bias, and a quantized kernel's group and zero point). NULL when out of memory or
 * the shape is invalid. */
ffn_bmoe *ffn_bmoe_new(const ffn_kernel *k, const ffn_kshape *e, size_t E, size_t top_k);
void ffn_bmoe_free(ffn_bmoe *m);
size_t ffn_bmoe_packed_bytes(const ffn_bmoe *m);
int ffn_bmoe_pack(const ffn_bmoe *m, const float *router, const ffn_kweights *experts, void *packed,
                  size_t n);
size_t ffn_bmoe_ws_bytes(const ffn_bmoe *m, size_t T, int threads);
/* timing[4] = route, permute, experts, combine seconds (NULL to skip); expert_tokens[E] =
 * tokens each expert received (NULL to skip). */
int ffn_bmoe_forward(const ffn_bmoe *m, const void *packed, size_t T, const float *x, float *y,
                     void *ws, size_t ws_bytes, int threads, double *timing, size_t *expert_tokens);
int ffn_bmoe_count(const ffn_bmoe *m, size_t T, const size_t *expert_tokens, double *flops,
                   double *bytes, size_t *active_experts);
size_t ffn_bmoe_ref_ws_bytes(const ffn_bmoe *m);
int ffn_bmoe_ref_forward(const ffn_bmoe *m, const float *router, const ffn_kweights *experts,
                         size_t T, const float *x, float *y, void *ws, size_t ws_bytes);
/* The same layer through ffn_moe_forward with another expert kernel `ref` (a quantized format's
 * reference kernel: the experts' quantization is the kernel's, so a quantized MoE is checked
 * against the same formats, not against fp32), packed and run on one thread; its own buffers. */
int ffn_bmoe_kernel_forward(const ffn_bmoe *m, const ffn_kernel *ref, const float *router,
                            const ffn_kweights *experts, size_t T, const float *x, float *y);

#endif
