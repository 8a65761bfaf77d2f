/* The portable quantized microkernels (plain C at the baseline ISA, like ukr_portable.c): the
 * float-activation table over the portable 6x8 fp32 tile and the W8A8 table, both from the
 * generic kernels of ukr_q_generic.h. What a CPU without a quantized ISA kernel runs. */
#include <string.h>

#include "../kern_internal.h"
#include "../kern_qukernels.h"
#include "ukr_q_generic.h"

enum { NR = 8, G = 4 };

/* The generic q8/q4 gemv for any panel width, renamed: the one-row streams below take m = 1. */
#define q8_gemv q8_gemv_generic
#define q4_gemv q4_gemv_generic
FFN__QG_FLOAT_ENTRIES(NR)
#undef q8_gemv
#undef q4_gemv

/* One row (T = 1 decode) over a panel of NR = 8 columns, as the float table's one-row stream
 * (ukr_portable.c): codes widened by a loop of eight that GCC vectorises whole, partial sums in
 * named 4-float vectors. The generic kernels' accumulator arrays, indexed by run-time row counts
 * and panel widths, stayed in memory: on the Zen 5 VM (2026-12-02) the portable W8 decode read
 * 3.7 GB/s and W4 1.4 GB/s with two threads, a tenth and a twenty-fifth of the read probe. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* W8: four partial sums (k mod 4) per column, then the column scale. */
static void q8_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c)
{
    const int8_t *q = (const int8_t *)w->q;
    v4f s[4][2];
    memset(s, 0, sizeof s);
    size_t k = 0;
    for (; k + 4 <= kc; k += 4)
        for (size_t p = 0; p < 4; p++) {
            float wv[NR];
            for (size_t j = 0; j < NR; j++)
                wv[j] = (float)q[(k + p) * NR + j];
            const float x = a[(k + p) * as];
            const v4f av = (v4f){x, x, x, x};
            s[p][0] += av * v4_load(wv);
            s[p][1] += av * v4_load(wv + 4);
        }
    for (; k < kc; k++) {
        float wv[NR];
        for (size_t j = 0; j < NR; j++)
            wv[j] = (float)q[k * NR + j];
        const float x = a[k * as];
        const v4f av = (v4f){x, x, x, x};
        s[0][0] += av * v4_load(wv);
        s[0][1] += av * v4_load(wv + 4);
    }
    for (size_t h = 0; h < 2; h++) {
        const v4f t = ((s[0][h] + s[1][h]) + (s[2][h] + s[3][h])) * v4_load(w->scale + 4 * h);
        memcpy(c + 4 * h, &t, sizeof t);
    }
}

/* W4: per group, two partial sums (k mod 2) of (u - z) x per column, then the group scale. */
static void q4_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c)
{
    enum { HALF = NR / 2 };
    const size_t Gs = w->group;
    v4f o0 = {0, 0, 0, 0}, o1 = o0;
    for (size_t g = 0; g < kc / Gs; g++) {
        float zl[HALF], zh[HALF];
        for (size_t j = 0; j < HALF; j++) {
            zl[j] = w->zero ? (float)(w->zero[g * HALF + j] & 15u) : 8.0f;
            zh[j] = w->zero ? (float)(w->zero[g * HALF + j] >> 4) : 8.0f;
        }
        const v4f vzl = v4_load(zl), vzh = v4_load(zh);
        v4f p0 = {0, 0, 0, 0}, p1 = p0, q0 = p0, q1 = p0;
        for (size_t k = g * Gs; k < (g + 1) * Gs; k += 2) {
            float lo[2][HALF], hi[2][HALF];
            for (size_t e = 0; e < 2; e++)
                for (size_t j = 0; j < HALF; j++) {
                    const uint8_t b = w->q[(k + e) * HALF + j];
                    lo[e][j] = (float)(b & 15u);
                    hi[e][j] = (float)(b >> 4);
                }
            const float x0 = a[k * as], x1 = a[(k + 1) * as];
            const v4f a0 = (v4f){x0, x0, x0, x0}, a1 = (v4f){x1, x1, x1, x1};
            p0 += a0 * (v4_load(lo[0]) - vzl);
            p1 += a0 * (v4_load(hi[0]) - vzh);
            q0 += a1 * (v4_load(lo[1]) - vzl);
            q1 += a1 * (v4_load(hi[1]) - vzh);
        }
        float sc[NR];
        for (size_t j = 0; j < NR; j++)
            sc[j] = ffn__bf16_to_f32(w->gscale[g * NR + j]);
        o0 += v4_load(sc) * (p0 + q0);
        o1 += v4_load(sc + 4) * (p1 + q1);
    }
    memcpy(c, &o0, sizeof o0);
    memcpy(c + 4, &o1, sizeof o1);
}

/* ffn_ukernels_q.gemv: the one-row stream for m = 1, the generic kernel otherwise. */
#define GEMV_ENTRY(name, row1, generic)                                                            \
    static void name(size_t m, size_t kc, const float *a, size_t as, const float *asum,            \
                     const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)            \
    {                                                                                              \
        if (m == 1)                                                                                \
            row1(kc, a, as, w, c);                                                                 \
        else                                                                                       \
            generic(m, kc, a, as, asum, ap, w, c, ldc);                                            \
    }
GEMV_ENTRY(q8_gemv, q8_row1, q8_gemv_generic)
GEMV_ENTRY(q4_gemv, q4_row1, q4_gemv_generic)

const ffn_ukernels_q ffn_ukernels_q_portable = {
    .isa = "portable",
    .gemv_name = {"q8_gemv__portable", "q4_gemv__portable"},
    .f32 = &ffn_ukernels_portable,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};

const ffn_ukernels_i8 ffn_ukernels_i8_portable = {
    .isa = "portable",
    .gemm_name = "q8a8_gemm__portable_1x32",
    .kv = 4,
    .kpad = 4,
    .a_offset = 0,
    .row_tile = 1,
    .panels = 4,
    .mc = 64,
    .stream_rows = 0,
    .stream_g = 1,
    .gemm = ffn__qg_i8_gemm,
    .gemv = NULL,
    .quant = ffn__qg_quant_s8,
    .act = ffn__portable_act,
};
