/* The Arm NEON (AArch64 Advanced SIMD) dense FFN kernels: fp32 weights and fp16 weights, both
 * with fp32 activations and fp32 accumulation. Built only for AArch64 (kernels/arm_neon/
 * sources.cmake); dispatch registers them under #if defined(__aarch64__). They use only base
 * ARMv8.0-A Advanced SIMD instructions (FCVTL/FCVTN for fp16 <-> fp32), so every AArch64 CPU
 * runs them and no HWCAP check beyond "is AArch64" is needed.
 *
 * Both follow include/ffnroof/kernels.h: pack once (packed_bytes, pack), then forward with a
 * caller workspace of workspace_bytes(s, T, threads). The packed blob starts with a header that
 * records the shape it was packed for (kern_internal.h); forward rejects a shape or kernel that
 * does not match (FFN_EINVAL). packed must be float-aligned (4 bytes); x, y and ws may have any
 * float alignment.
 * Results do not depend on the thread count (every output element is reduced in the same order
 * whatever the partition), so 1 and N threads give bit-identical y. */
#ifndef FFNROOF_KERNELS_FFN_NEON_H
#define FFNROOF_KERNELS_FFN_NEON_H

#include "ffnroof/kernels.h"

/* "f32_ffn__neon_8x12": fp32 weights. */
extern const ffn_kernel ffn_kernel_f32_neon;
/* "f16w_ffn__neon_8x12": weights and biases rounded to IEEE binary16 when packed (round to
 * nearest even, |w| >= 65520 becomes +-Inf, exactly as the fp16 reference kernel rounds them);
 * weights are stored as fp16 and widened to fp32 in registers (FCVTL), biases are stored as the
 * fp32 values of their fp16 roundings. */
extern const ffn_kernel ffn_kernel_f16_neon;

#endif
