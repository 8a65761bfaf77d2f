/* Helpers shared by the MoE fast path (ffn_moe.c) and its scalar reference (ffn_moe_ref.c), so
 * both derive the expert shapes and the token permutation the same way. Internal: ffn__ prefix. */
#ifndef FFNROOF_KERNELS_MOE_INTERNAL_H
#define FFNROOF_KERNELS_MOE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ffnroof/kernels_moe.h"

/* Dense shapes of one routed expert {d, f} and of the shared FFN {d, f_shared}. */
void ffn__moe_expert_shape(const ffn_moe_shape *s, ffn_kshape *e);
void ffn__moe_shared_shape(const ffn_moe_shape *s, ffn_kshape *e);

/* Stable counting sort of the T*K slots by expert: offset [E+1], cursor [E] scratch,
 * perm [T*K] (row -> slot), inv [T*K] (slot -> row; may be NULL). */
void ffn__moe_permute(size_t T, size_t K, size_t E, const int32_t *expert, size_t *offset,
                      size_t *cursor, int32_t *perm, int32_t *inv);

#endif
