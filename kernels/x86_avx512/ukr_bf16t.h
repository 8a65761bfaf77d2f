/* The decode stream and the fp32 -> bf16 conversion of the bf16 tile engines, defined once in
 * ukr_avx512bf16.c and shared by the AVX512-BF16 and AMX tables (files compiled with AVX512-BF16
 * flags only). */
#ifndef FFNROOF_KERNELS_UKR_BF16T_H
#define FFNROOF_KERNELS_UKR_BF16T_H

#include "../driver/ukernel.h"

void ffn__bf16t_gemv(size_t m, size_t kc, const float *a, size_t as, const void *w, float *c,
                     size_t ldc);
void ffn__bf16t_narrow(size_t rows, size_t n, const float *src, size_t lds, uint16_t *dst,
                       size_t ldd);

#endif
