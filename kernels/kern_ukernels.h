/* The microkernel tables of every ISA folder built into this binary (internal to ffn_kernels;
 * kernels/CMakeLists.txt defines FFN_HAVE_<ISA> for each folder whose compile probe passed).
 * registry.c turns each table into kernel rows. */
#ifndef FFNROOF_KERNELS_KERN_UKERNELS_H
#define FFNROOF_KERNELS_KERN_UKERNELS_H

#include "driver/ukernel.h"

extern const ffn_ukernels ffn_ukernels_portable;
#if defined(FFN_HAVE_AVX2)
extern const ffn_ukernels ffn_ukernels_avx2;
#endif
#if defined(FFN_HAVE_AVX512)
extern const ffn_ukernels ffn_ukernels_avx512;
#endif
#if defined(FFN_HAVE_AVX512_BF16)
extern const ffn_ukernels_bf16t ffn_ukernels_avx512bf16;
#endif
#if defined(FFN_HAVE_AMX)
extern const ffn_ukernels_bf16t ffn_ukernels_amx;
#endif
#if defined(FFN_HAVE_NEON)
extern const ffn_ukernels ffn_ukernels_neon;
#define FFN_NEON_EXTRA_ROWS
#endif
#if defined(FFN_HAVE_SVE)
extern const ffn_ukernels ffn_ukernels_sve;
#if defined(FFN_HAVE_SVE_BF16) /* SVE + FEAT_BF16: BFDOT tiles (arm_sve/ukr_sve_bf16.c) */
extern const ffn_kernel ffn_kernel_bf16_svebf16;
#define FFN_SVE_EXTRA_ROWS                                                                         \
    {&ffn_kernel_bf16_svebf16, FFN_CPU_NEON | FFN_CPU_SVE | FFN_CPU_ARM_BF16},
#else
#define FFN_SVE_EXTRA_ROWS
#endif
#endif

#endif
