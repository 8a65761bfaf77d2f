/* The quantized microkernel tables of every ISA folder built into this binary (internal to
 * ffn_kernels, beside kern_ukernels.h's float tables), and the activation epilogues they share
 * with their ISA's float table. */
#ifndef FFNROOF_KERNELS_KERN_QUKERNELS_H
#define FFNROOF_KERNELS_KERN_QUKERNELS_H

#include "kern_internal.h"
#include "kern_ukernels.h"

void ffn__portable_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                       const float *bg, const float *bu, float *h, size_t ldh);
extern const ffn_ukernels_q ffn_ukernels_q_portable;
extern const ffn_ukernels_i8 ffn_ukernels_i8_portable;

#if defined(FFN_HAVE_AVX2)
extern const ffn_ukernels_q ffn_ukernels_q_avx2;
extern const ffn_ukernels_i8 ffn_ukernels_i8_avx2;
#endif
#if defined(FFN_HAVE_AVX_VNNI)
extern const ffn_ukernels_i8 ffn_ukernels_i8_avxvnni;
#endif
#if defined(FFN_HAVE_AVX512)
extern const ffn_ukernels_q ffn_ukernels_q_avx512;
extern const ffn_ukernels_i8 ffn_ukernels_i8_avx512;
#endif
#if defined(FFN_HAVE_AVX512_VNNI)
extern const ffn_ukernels_i8 ffn_ukernels_i8_avx512vnni;
#endif
#if defined(FFN_HAVE_AVX512_BF16)
extern const ffn_ukernels_q ffn_ukernels_q_avx512bf16;
#endif

#if defined(FFN_HAVE_AVX512_FP16)
extern const ffn_ukernels_q ffn_ukernels_q_avx512fp16;
#endif
#if defined(FFN_HAVE_AMX_INT8)
extern const ffn_ukernels_i8 ffn_ukernels_i8_amx;
#endif

#if defined(FFN_HAVE_NEON)
extern const ffn_ukernels_q ffn_ukernels_q_neon;
#endif
#if defined(FFN_HAVE_NEON_DOT)
extern const ffn_ukernels_i8 ffn_ukernels_i8_neondot;
#endif
#if defined(FFN_HAVE_NEON_I8MM)
extern const ffn_ukernels_i8 ffn_ukernels_i8_neoni8mm;
#endif
#if defined(FFN_HAVE_SVE)
extern const ffn_ukernels_q ffn_ukernels_q_sve;
extern const ffn_ukernels_i8 ffn_ukernels_i8_sve;
#endif

/* The quantized reference kernels (kernels/quant/ffn_qref.c). */
extern const ffn_kernel ffn_kernel_w8a32_ref;
extern const ffn_kernel ffn_kernel_w8a16_ref;
extern const ffn_kernel ffn_kernel_w8a8_ref;
extern const ffn_kernel ffn_kernel_w4a32_ref;
extern const ffn_kernel ffn_kernel_w4a16_ref;

#endif
