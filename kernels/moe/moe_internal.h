/* Helpers shared by the MoE fast path (ffn_moe.c, moe_layout.c) and its scalar reference
 * (ffn_moe_ref.c), so both derive the expert shapes and the token permutation the same way.
 * Internal: ffn__ prefix. */
#ifndef FFNROOF_KERNELS_MOE_INTERNAL_H
#define FFNROOF_KERNELS_MOE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/kernels_moe.h"

#define MOE_ALIGN ((size_t)64)
#define MOE_MAGIC UINT64_C(0x4646524f4f464d45) /* "EMFOORFF" */

/* Start of the packed weights: enough of the shape to refuse packed weights of another shape. */
typedef struct moe_header {
    uint64_t magic;
    uint64_t d, f, n_experts, top_k, f_shared;
    uint32_t act, bias, score, norm_topk, has_select, wdtype, isa, group, zero_point;
    float route_scale;
} moe_header;

typedef struct moe_layout {
    size_t router, select; /* offsets of the fp32 router [d][Ep] (Ep = E rounded up to 16) and
                              the selection bias [E] */
    size_t expert, stride; /* expert e's packed weights at expert + e*stride */
    size_t expert_bytes;   /* k->packed_bytes of one expert */
    size_t shared, shared_bytes;
    size_t total;
} moe_layout;

/* Workspace regions, as offsets from the 64-byte aligned start of the caller's buffer. */
typedef struct moe_ws {
    size_t logits; /* float [T][E] */
    size_t expert; /* int32 [T*k] */
    size_t weight; /* float [T*k] */
    size_t offset; /* size_t [E+1] */
    size_t cursor; /* size_t [E] */
    size_t taken;  /* unsigned char [E] */
    size_t perm;   /* int32 [T*k] */
    size_t inv;    /* int32 [T*k] */
    size_t xperm;  /* float [T*k][d] */
    size_t yperm;  /* float [T*k][d] */
    size_t kws;    /* the dense kernel's workspace */
    size_t kws_bytes;
    size_t total; /* including the alignment slack */
} moe_ws;

/* Columns of the packed router: E rounded up to the router block (RB in ffn_moe.c). */
static inline size_t ffn__moe_router_cols(size_t E)
{
    return (E + 15u) / 16u * 16u;
}

/* The packed layout and the workspace layout of a call (FFN_EINVAL for a kernel without the
 * dense entry points or a bad shape, FFN_EOVERFLOW when a size overflows), and the header that
 * ffn_moe_pack writes and ffn_moe_forward checks. */
int ffn__moe_layout(const ffn_kernel *k, const ffn_moe_shape *s, moe_layout *l);
int ffn__moe_ws_layout(const ffn_kernel *k, const ffn_moe_shape *s, size_t T, int threads,
                       moe_ws *w);
void ffn__moe_fill_header(const ffn_kernel *k, const ffn_moe_shape *s, bool has_select,
                          moe_header *h);

/* Dense shapes of one routed expert {d, f} and of the shared FFN {d, f_shared}. */
void ffn__moe_expert_shape(const ffn_moe_shape *s, ffn_kshape *e);
void ffn__moe_shared_shape(const ffn_moe_shape *s, ffn_kshape *e);

/* Stable counting sort of the T*K slots by expert: offset [E+1], cursor [E] scratch,
 * perm [T*K] (row -> slot), inv [T*K] (slot -> row; may be NULL). */
void ffn__moe_permute(size_t T, size_t K, size_t E, const int32_t *expert, size_t *offset,
                      size_t *cursor, int32_t *perm, int32_t *inv);

#endif
