/* Plain-C quantized microkernels for any panel width (header-only: included by the portable
 * table, and by ISA folders for what they have no vector code for, compiled there with that
 * folder's flags): the prefill dequantization ((u - z) s, exact) and the W8A8 pieces (int8 sums
 * in int32), following the contracts of kernels/driver/ukernel.h literally. */
#ifndef FFNROOF_KERNELS_UKR_Q_GENERIC_H
#define FFNROOF_KERNELS_UKR_Q_GENERIC_H

#include <string.h>

#include "../driver/ukernel.h"
#include "../quant/quant_internal.h"

static inline void ffn__qg_q8_dequant(size_t nr, size_t k0, size_t kc, const ffn_ukr_qpanel *w,
                                      float *dst)
{
    for (size_t k = 0; k < kc; k++) {
        const int8_t *row = (const int8_t *)w->q + (k0 + k) * nr;
        for (size_t j = 0; j < nr; j++)
            dst[k * nr + j] = (float)row[j] * w->scale[j];
    }
}

static inline void ffn__qg_q4_dequant(size_t nr, size_t k0, size_t kc, const ffn_ukr_qpanel *w,
                                      float *dst)
{
    const size_t half = nr / 2, G = w->group;
    for (size_t k = 0; k < kc; k++) {
        const size_t kk = k0 + k, g = kk / G;
        const uint8_t *row = w->q + kk * half, *z = w->zero ? w->zero + g * half : NULL;
        const uint16_t *gs = w->gscale + g * nr;
        float *d = dst + k * nr;
        for (size_t j = 0; j < half; j++) {
            const int zl = z ? (int)(z[j] & 15u) : 8, zh = z ? (int)(z[j] >> 4) : 8;
            d[j] = (float)((int)(row[j] & 15u) - zl) * ffn__bf16_to_f32(gs[j]);
            d[j + half] = (float)((int)(row[j] >> 4) - zh) * ffn__bf16_to_f32(gs[j + half]);
        }
    }
}

/* W8A8: cbuf[g][r][32] = sum_k A(r, k) B_g(k, c), A int8 codes (no offset), kv = 4 panels. */
static inline void ffn__qg_i8_gemm(size_t kp, const uint8_t *a, size_t lda, size_t m,
                                   const int8_t *b, size_t np, const int32_t *bsum, int32_t *cbuf)
{
    (void)bsum;
    for (size_t g = 0; g < np; g++) {
        const int8_t *bg = b + g * kp * 32;
        for (size_t r = 0; r < m; r++) {
            const int8_t *ar = (const int8_t *)a + r * lda;
            int32_t acc[32] = {0};
            for (size_t kq = 0; kq < kp / 4; kq++) {
                const int8_t *bk = bg + kq * 128;
                const int32_t a0 = ar[4 * kq], a1 = ar[4 * kq + 1];
                const int32_t a2 = ar[4 * kq + 2], a3 = ar[4 * kq + 3];
                for (size_t c = 0; c < 32; c++)
                    acc[c] += a0 * bk[4 * c] + a1 * bk[4 * c + 1] + a2 * bk[4 * c + 2] +
                              a3 * bk[4 * c + 3];
            }
            memcpy(cbuf + (g * m + r) * 32, acc, sizeof acc);
        }
    }
}

/* Per-token quantization, one row at a time (codes + offset). */
static inline void ffn__qg_quant(unsigned offset, size_t rows, size_t n, const float *src,
                                 size_t lds, uint8_t *q, size_t ldq, float *scale)
{
    for (size_t r = 0; r < rows; r++)
        ffn__qact_row(n, src + r * lds, q + r * ldq, scale + r, offset);
}

/* The float-activation table's prefill entry points (static q8_dequant, q4_dequant) as the
 * generic dequantization above at panel width NREXPR (a constant, or an expression such as the
 * SVE table's vector-length-derived width): the portable, NEON and SVE tables have decode
 * streams of their own and dequantize prefill weights through these. */
#define FFN__QG_DEQUANT_ENTRIES(NREXPR)                                                            \
    static void q8_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)              \
    {                                                                                              \
        ffn__qg_q8_dequant(NREXPR, k0, kc, w, dst);                                                \
    }                                                                                              \
    static void q4_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)              \
    {                                                                                              \
        ffn__qg_q4_dequant(NREXPR, k0, kc, w, dst);                                                \
    }

/* ffn_ukernels_i8.quant of a table that keeps the activation codes signed (a_offset 0: SDOT,
 * SMMLA, the portable tile), compiled with the including folder's flags. */
static inline void ffn__qg_quant_s8(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q,
                                    size_t ldq, float *scale)
{
    ffn__qg_quant(0, rows, n, src, lds, q, ldq, scale);
}

#endif
