/* What the AVX2 quantized tables share with the AVX2 float table and with each other (files
 * compiled with the AVX2 flags). */
#ifndef FFNROOF_KERNELS_UKR_AVX2_Q_H
#define FFNROOF_KERNELS_UKR_AVX2_Q_H

#include "../driver/ukernel.h"

/* The AVX2 activation epilogue (ukr_avx2.c). */
void ffn__avx2_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                   const float *bg, const float *bu, float *h, size_t ldh);
/* ffn_ukernels_i8.quant with code offset 0 or 128 (ukr_avx2_q.c). */
void ffn__avx2_quant_rows(unsigned offset, size_t rows, size_t n, const float *src, size_t lds,
                          uint8_t *q, size_t ldq, float *scale);

#endif
