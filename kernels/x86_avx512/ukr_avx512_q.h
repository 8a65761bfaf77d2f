/* The AVX-512 pieces the quantized tables of the AVX-512 family share (defined in
 * ukr_avx512_q.c, compiled with the AVX-512 flags; used by the VNNI and AMX-INT8 tables). */
#ifndef FFNROOF_KERNELS_UKR_AVX512_Q_H
#define FFNROOF_KERNELS_UKR_AVX512_Q_H

#include <stddef.h>
#include <stdint.h>

/* ffn_ukernels_i8.quant with the given code offset (0 or 128). */
void ffn__avx512_quant_rows(unsigned offset, size_t rows, size_t n, const float *src, size_t lds,
                            uint8_t *q, size_t ldq, float *scale);

/* ffn_ukernels_i8.scale. */
void ffn__avx512_i8_scale(size_t rows, const int32_t *sum, const float *sa, const float *sw,
                          float *out);

/* The VNNI W8A8 tile as a decode stream (ukr_avx512vnni.c; the AMX-INT8 table streams with
 * it): ffn_ukernels_i8.gemv. */
void ffn__avx512vnni_i8_gemv(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b,
                             size_t np, const int32_t *bsum, int32_t *cbuf);

#endif
