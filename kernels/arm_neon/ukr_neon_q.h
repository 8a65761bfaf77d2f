/* What the NEON quantized tables share with the NEON float table (files compiled with NEON
 * flags). */
#ifndef FFNROOF_KERNELS_UKR_NEON_Q_H
#define FFNROOF_KERNELS_UKR_NEON_Q_H

#include "../driver/ukernel.h"

/* The NEON activation epilogue (ukr_neon.c). */
void ffn__neon_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                   const float *bg, const float *bu, float *h, size_t ldh);

#endif
