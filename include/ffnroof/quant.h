/* Quantized weight and activation formats: their exact semantics as scalar reference
 * functions (the oracle of every quantized kernel, and what `ffnroof quant` measures the
 * accuracy of). Pure functions over caller memory: no allocation, no I/O, no globals.
 *
 * Matrices follow include/ffnroof/kernels.h: a weight W is [K][N] row-major (x W), so an
 * "output channel" is a column n and a "group" runs along K within one column.
 *
 * Formats (docs/quantization.md):
 *  - int8 per tensor:  q = clamp(round(w / s), -127, 127), s = max|W| / 127 (one scale);
 *  - int8 per channel: as above with one scale per column n, s_n = max_k |W[k][n]| / 127;
 *  - int4 per group:   groups of G (32, 64 or 128; G divides K) along K in one column,
 *                      symmetric: q = clamp(round(w / s), -8, 7), s = max|group| / 7 (Q4_0 /
 *                      GPTQ storage family); with a zero point (asymmetric):
 *                      q = clamp(round(w / s) + z, 0, 15), s = (max - min) / 15,
 *                      z = clamp(round(-min / s), 0, 15), w' = (q - z) s;
 *  - int8 activations per token (W8A8, dynamic, symmetric): one scale per row of x,
 *                      s_t = max_k |x[t][k]| / 127, q = clamp(round(x / s_t), -127, 127);
 *  - SmoothQuant migration (Xiao et al. 2023, eq. 4): per input channel k,
 *                      m_k = max_t|x[t][k]|^alpha / max_n|W[k][n]|^(1 - alpha),
 *                      x' = x / m (per column of x), W' = diag(m) W; then W8A8 on x', W'.
 * round() is round-half-away-from-zero (C's lround/roundf); a zero scale (an all-zero
 * tensor, channel, group or row) quantizes to 0 and dequantizes to 0, never NaN.
 * Scales are stored as fp32 here; kernels may store them narrower (the packed layout is the
 * kernel's business) but must dequantize to the same values as these functions within the
 * bound their tests state. */
#ifndef FFNROOF_QUANT_H
#define FFNROOF_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Granularity of a weight quantization. */
typedef enum ffn_qgran {
    FFN_QG_TENSOR = 0, /* int8, one scale */
    FFN_QG_CHANNEL,    /* int8, one scale per output column */
    FFN_QG_GROUP,      /* int4, one scale (and zero point) per group of G along K */
} ffn_qgran;

typedef struct ffn_qweight_fmt {
    ffn_qgran gran;
    unsigned bits;   /* 8 (tensor, channel) or 4 (group) */
    unsigned group;  /* G for FFN_QG_GROUP: 32, 64 or 128, dividing K; 0 otherwise */
    bool zero_point; /* FFN_QG_GROUP only: asymmetric with a 4-bit zero point per group */
} ffn_qweight_fmt;

/* 0 when fmt is valid for a [K][N] weight, else FFN_EINVAL (e.g. a group size that does not
 * divide K, or is not 32/64/128). */
int ffn_qweight_check(const ffn_qweight_fmt *fmt, size_t K, size_t N);

/* Number of scales (= zero points, when present) of a [K][N] weight in this format. */
size_t ffn_qweight_nscales(const ffn_qweight_fmt *fmt, size_t K, size_t N);

/* Quantize W [K][N] fp32: q [K][N] (int8 storage of the int8 or int4 code; for int4 with a
 * zero point the code is 0..15), scale [nscales], zero [nscales] (zero points; may be NULL when
 * fmt has none). Scale index: 0 (tensor), n (channel), (k / G) * N + n (group). */
int ffn_qweight_quantize(const ffn_qweight_fmt *fmt, size_t K, size_t N, const float *w, int8_t *q,
                         float *scale, uint8_t *zero);

/* W' [K][N] fp32 = dequantized q (exactly the values the reference GEMM multiplies by). */
int ffn_qweight_dequantize(const ffn_qweight_fmt *fmt, size_t K, size_t N, const int8_t *q,
                           const float *scale, const uint8_t *zero, float *w);

/* Per-token int8 activations: x [T][K] -> q [T][K], scale [T]. */
int ffn_qact_quantize(size_t T, size_t K, const float *x, int8_t *q, float *scale);

/* SmoothQuant factors m [K] for activations x [T][K] and weight W [K][N], alpha in [0, 1]
 * (0.5 by default); m_k = 1 where a channel of x or W is all zero. */
int ffn_smooth_factors(size_t T, size_t K, const float *x, size_t N, const float *w, double alpha,
                       float *m);

#endif
