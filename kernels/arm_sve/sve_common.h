/* What the SVE folder's two objects share: the activation epilogue of ukr_sve.c (compiled with
 * +sve), which the FEAT_BF16 tile engine (ukr_sve_bf16.c, +sve+bf16) reuses. */
#ifndef FFNROOF_KERNELS_SVE_COMMON_H
#define FFNROOF_KERNELS_SVE_COMMON_H

#include "../driver/ukernel.h"

void ffn__sve_act(ffn_act act, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                  const float *bg, const float *bu, float *h, size_t ldh);

#endif
