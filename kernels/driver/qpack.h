/* Packing of quantized weights into the panel layouts of kernels/driver/ukernel.h (internal to
 * ffn_kernels): the float-activation panels (W8 KN codes + column scales, W4 nibble rows + bf16
 * group scales + zero points) and the W8A8 VNNI panels (+ column sums and scales). Codes and
 * scales are quant.h's (ffn_qweight_quantize's arithmetic, quant_internal.h, applied a block of
 * panels row by row); only their arrangement is the driver's. Pack-time only: no allocation
 * (stack buffers of about 13 KiB on each thread of the OpenMP team that packs the blocks), no
 * I/O. */
#ifndef FFNROOF_KERNELS_QPACK_H
#define FFNROOF_KERNELS_QPACK_H

#include "../kern_internal.h"
#include "ukernel.h"

/* Bytes of one float-activation panel of K rows and nr columns (each section 64-aligned). */
size_t ffn__qpanel_bytes(int qf, size_t K, size_t nr, size_t G, bool zp);
/* The sections of the panel at p. */
void ffn__qpanel_view(int qf, const unsigned char *p, size_t K, size_t nr, size_t G, bool zp,
                      ffn_ukr_qpanel *out);

/* Quantize the [K][N] matrix w (row-major, ld N) into np panels of nr columns at dst (panel
 * stride pb bytes); W4 nibbles in the order q4_layout (FFN_UKR_Q4_ROWS or FFN_UKR_Q4_OCT).
 * gated: w2 is the up matrix and panel j holds columns j*nr/2 .. of w in its first nr/2 columns
 * and the same columns of w2 in the second half. 0, or FFN_EINVAL for a NaN or Inf weight. */
int ffn__qpack_float(int qf, unsigned q4_layout, size_t K, size_t N, const float *w,
                     const float *w2, size_t G, bool zp, size_t nr, unsigned char *dst, size_t pb,
                     size_t np);

/* The same for W8A8: panels of 32 columns, element (k, c) at (k / kv) * 32 * kv + c * kv + k %
 * kv, K padded to kp with zeros (panel stride kp * 32 bytes), column sums bsum[j * 32 + c] and
 * scales scale[j * 32 + c]. */
int ffn__qpack_i8(size_t K, size_t N, const float *w, const float *w2, size_t kv, size_t kp,
                  int8_t *dst, size_t np, int32_t *bsum, float *scale);

#endif
