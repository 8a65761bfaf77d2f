/* The portable quantized microkernels (plain C with GCC/Clang vector extensions at the baseline
 * ISA, like ukr_portable.c): the float-activation table, decode streams of its own over the
 * portable 6x8 fp32 tile for prefill (the weights dequantized by ukr_q_generic.h), and the W8A8
 * table from the generic kernels. What a CPU without a quantized ISA kernel runs. */
#include <string.h>

#include "../kern_internal.h"
#include "../driver/ukr_rows.h"
#include "../kern_qukernels.h"
#include "ukr_q_generic.h"

enum { NR = 8, G = 4 };

/* Prefill dequantizes through the generic kernels; the decode streams below are this file's. */
FFN__QG_DEQUANT_ENTRIES(NR)

/* One row (T = 1 decode) over a panel of NR = 8 columns, as the float table's one-row stream
 * (ukr_portable.c), partial sums in named 4-float vectors. Codes become floats without an
 * integer-to-float convert: bytes are zero-extended to 32-bit lanes by two interleaves with zero
 * (PUNPCKLBW/PUNPCKLWD on SSE2, ZIP1/ZIP2 on NEON), ORed into the mantissa of 2^23 and the bias
 * 2^23 + offset subtracted, exact for every code. The loops these replace (a loop of eight
 * (float) casts, which GCC 12 compiled to one scalar CVTSI2SS a weight at the baseline ISA) read
 * 2.7 (W8) and 1.5 (W4) GB/s with two threads on Zen 4, a tenth and a twentieth of
 * the read probe; the generic kernels' accumulator arrays had stayed in memory before that
 * (3.7 and 1.4 GB/s on a Zen 5 VM). */
typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef uint16_t v8h __attribute__((vector_size(16)));
typedef uint8_t v16b __attribute__((vector_size(16)));
typedef uint64_t v2q __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline v4f v4_splat(float x)
{
    return (v4f){x, x, x, x};
}

/* Interleaves with zero: bytes 0..7 or 8..15 of b as 16-bit lanes, halfwords 0..3 or 4..7 of h
 * as 32-bit lanes (GCC >= 12 and Clang name the shuffle __builtin_shufflevector; older GCC
 * __builtin_shuffle). */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define FFN_SHUFFLEVECTOR 1
#endif
#endif
#if defined(FFN_SHUFFLEVECTOR)
#define ZIP_B(b, z, o)                                                                             \
    ((v8h)__builtin_shufflevector(b, z, o, 16 + o, o + 1, 17 + o, o + 2, 18 + o, o + 3, 19 + o,    \
                                  o + 4, 20 + o, o + 5, 21 + o, o + 6, 22 + o, o + 7, 23 + o))
#define ZIP_H(h, z, o)                                                                             \
    ((v4u)__builtin_shufflevector(h, z, o, 8 + o, o + 1, 9 + o, o + 2, 10 + o, o + 3, 11 + o))
#else
#define ZIP_B(b, z, o)                                                                             \
    ((v8h)__builtin_shuffle(b, z,                                                                  \
                            (v16b){o, 16 + o, o + 1, 17 + o, o + 2, 18 + o, o + 3, 19 + o, o + 4,  \
                                   20 + o, o + 5, 21 + o, o + 6, 22 + o, o + 7, 23 + o}))
#define ZIP_H(h, z, o)                                                                             \
    ((v4u)__builtin_shuffle(h, z, (v8h){o, 8 + o, o + 1, 9 + o, o + 2, 10 + o, o + 3, 11 + o}))
#endif

/* The 16 bytes at p as four vectors of 32-bit lanes (bytes 4i..4i+3 in u[i]), each byte XORed
 * with flip first. */
static inline void u8x16(const uint8_t *p, uint8_t flip, v4u u[4])
{
    v16b b;
    memcpy(&b, p, sizeof b);
    b ^= (v16b){flip, flip, flip, flip, flip, flip, flip, flip,
                flip, flip, flip, flip, flip, flip, flip, flip};
    const v16b zb = {0};
    const v8h zh = {0}, lo = ZIP_B(b, zb, 0), hi = ZIP_B(b, zb, 8);
    u[0] = ZIP_H(lo, zh, 0);
    u[1] = ZIP_H(lo, zh, 4);
    u[2] = ZIP_H(hi, zh, 0);
    u[3] = ZIP_H(hi, zh, 4);
}

/* The 8 bytes at p, XORed with flip, as two vectors of 32-bit lanes (bytes 4i..4i+3 in u[i]). */
static inline void u8x8(const uint8_t *p, uint64_t flip, v4u u[2])
{
    uint64_t w8;
    memcpy(&w8, p, sizeof w8);
    w8 ^= flip;
    const v16b b = (v16b)(v2q){w8, 0}, zb = {0};
    const v8h zh = {0}, lo = ZIP_B(b, zb, 0);
    u[0] = ZIP_H(lo, zh, 0);
    u[1] = ZIP_H(lo, zh, 4);
}

/* Lanes u (< 2^23) as floats minus bias2 (2^23 + the code's offset): exact. */
static inline v4f u_minus(v4u u, v4f bias2)
{
    return (v4f)(u | 0x4B000000u) - bias2;
}

/* The decode streams ask for their panels 2 KiB ahead, as ukr_portable.c's STREAM_PF: on the
 * SPR-class VM (one thread, d = 2048, f = 6144, weights flushed) the W8 streams at
 * T = 1 and 2 ran 2.9x and 2.6x faster, the W4 one-row stream 1.75x. */
#define QSTREAM_PF 2048

/* W4 group g's biases for u_minus (2^23 + the zero point, 8 without zero points) of columns
 * 0..3 and 4..7, and its bf16 scales as fp32. A k row is NR / 2 = 4 bytes: low nibbles columns
 * 0..3, high 4..7. */
static inline void q4_group(const ffn_ukr_qpanel *w, size_t g, v4f *bl, v4f *bh, v4f *s0, v4f *s1)
{
    enum { HALF = NR / 2 };
    float zl[HALF], zh[HALF], sc[NR];
    for (size_t j = 0; j < HALF; j++) {
        zl[j] = 8388608.0f + (w->zero ? (float)(w->zero[g * HALF + j] & 15u) : 8.0f);
        zh[j] = 8388608.0f + (w->zero ? (float)(w->zero[g * HALF + j] >> 4) : 8.0f);
    }
    for (size_t j = 0; j < NR; j++)
        sc[j] = ffn__bf16_to_f32(w->gscale[g * NR + j]);
    *bl = v4_load(zl);
    *bh = v4_load(zh);
    *s0 = v4_load(sc);
    *s1 = v4_load(sc + 4);
}

/* W8: two partial sums (k mod 2) per column, then the column scale (four spilled two of their
 * eight vectors at SSE2's 16 registers). Codes + 128 are the bytes XORed with 0x80. */
static void q8_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,
                    size_t ldc)
{
    (void)ldc;
    const uint8_t *q = w->q;
    const v4f bias2 = v4_splat(8388736.0f); /* 2^23 + 128 */
    v4f s00 = {0, 0, 0, 0}, s01 = s00, s10 = s00, s11 = s00;
    size_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        if (k % 8 == 0) __builtin_prefetch(q + k * NR + QSTREAM_PF);
        v4u u[4];
        u8x16(q + k * NR, 0x80, u);
        const v4f x0 = v4_splat(a[k * as]), x1 = v4_splat(a[(k + 1) * as]);
        s00 += x0 * u_minus(u[0], bias2);
        s01 += x0 * u_minus(u[1], bias2);
        s10 += x1 * u_minus(u[2], bias2);
        s11 += x1 * u_minus(u[3], bias2);
    }
    for (; k < kc; k++) {
        float wv[NR];
        for (size_t j = 0; j < NR; j++)
            wv[j] = (float)(int8_t)q[k * NR + j];
        const v4f x = v4_splat(a[k * as]);
        s00 += x * v4_load(wv);
        s01 += x * v4_load(wv + 4);
    }
    for (size_t h = 0; h < 2; h++) {
        const v4f t = h ? s01 + s11 : s00 + s10;
        const v4f o = t * v4_load(w->scale + 4 * h);
        memcpy(c + 4 * h, &o, sizeof o);
    }
}

/* W4: per group (an even number of rows), two partial sums (k mod 2) of (u - z) x per column,
 * then the group scale. */
static void q4_row1(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,
                    size_t ldc)
{
    (void)ldc;
    const size_t Gs = w->group;
    v4f o0 = {0, 0, 0, 0}, o1 = o0;
    for (size_t g = 0; g < kc / Gs; g++) {
        v4f bl, bh, sc0, sc1;
        q4_group(w, g, &bl, &bh, &sc0, &sc1);
        v4f p0 = {0, 0, 0, 0}, p1 = p0, q0 = p0, q1 = p0;
        for (size_t k = g * Gs; k < (g + 1) * Gs; k += 2) {
            if (k % 16 == 0) __builtin_prefetch(w->q + k * NR / 2 + QSTREAM_PF);
            v4u u[2];
            u8x8(w->q + k * NR / 2, 0, u);
            const v4f x0 = v4_splat(a[k * as]), x1 = v4_splat(a[(k + 1) * as]);
            p0 += x0 * u_minus(u[0] & 15u, bl);
            q0 += x0 * u_minus(u[0] >> 4, bh);
            p1 += x1 * u_minus(u[1] & 15u, bl);
            q1 += x1 * u_minus(u[1] >> 4, bh);
        }
        o0 += sc0 * (p0 + p1);
        o1 += sc1 * (q0 + q1);
    }
    memcpy(c, &o0, sizeof o0);
    memcpy(c + 4, &o1, sizeof o1);
}

/* Rows 2..G of the streams over the same widening, each k row's weights widened once for every
 * row, the 2m accumulators named (driver/ukr_rows.h says why). W8: one sum per column and row,
 * then the column scale; W4: one per group, scaled into C at the group's end. These rows went
 * through the generic kernels (accumulator arrays in memory, a scalar convert a weight). */
#define QR_DECL(r) v4f c##r##0 = {0, 0, 0, 0}, c##r##1 = c##r##0;
#define QR_ZERO(r) c##r##0 = c##r##1 = (v4f){0, 0, 0, 0};
#define QR_ZERO_C(r) memset(c + (r)*ldc, 0, NR * sizeof *c);
#define QR_FM(r)                                                                                   \
    {                                                                                              \
        const v4f x = v4_splat(a[kk * as + (r)]);                                                  \
        c##r##0 += x * b0;                                                                         \
        c##r##1 += x * b1;                                                                         \
    }
#define Q8_ST(r)                                                                                   \
    {                                                                                              \
        const v4f o0 = c##r##0 * v4_load(w->scale), o1 = c##r##1 * v4_load(w->scale + 4);          \
        memcpy(c + (r)*ldc, &o0, sizeof o0);                                                       \
        memcpy(c + (r)*ldc + 4, &o1, sizeof o1);                                                   \
    }
#define Q4_ACC(r)                                                                                  \
    {                                                                                              \
        const v4f o0 = v4_load(c + (r)*ldc) + sc0 * c##r##0;                                       \
        const v4f o1 = v4_load(c + (r)*ldc + 4) + sc1 * c##r##1;                                   \
        memcpy(c + (r)*ldc, &o0, sizeof o0);                                                       \
        memcpy(c + (r)*ldc + 4, &o1, sizeof o1);                                                   \
    }
#define Q8_ROWS(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const v4f bias2 = v4_splat(8388736.0f); /* 2^23 + 128 */                                   \
        ROWS(QR_DECL)                                                                              \
        for (size_t kk = 0; kk < kc; kk++) {                                                       \
            if (kk % 8 == 0) __builtin_prefetch(w->q + kk * NR + QSTREAM_PF);                      \
            v4u u[2];                                                                              \
            u8x8(w->q + kk * NR, 0x8080808080808080u, u);                                          \
            const v4f b0 = u_minus(u[0], bias2), b1 = u_minus(u[1], bias2);                        \
            ROWS(QR_FM)                                                                            \
        }                                                                                          \
        ROWS(Q8_ST)                                                                                \
    }
#define Q4_ROWS(name, ROWS)                                                                        \
    static void name(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w, float *c,      \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const size_t Gs = w->group;                                                                \
        ROWS(QR_ZERO_C)                                                                            \
        ROWS(QR_DECL)                                                                              \
        for (size_t g = 0; g < kc / Gs; g++) {                                                     \
            v4f bl, bh, sc0, sc1;                                                                  \
            q4_group(w, g, &bl, &bh, &sc0, &sc1);                                                  \
            ROWS(QR_ZERO)                                                                          \
            for (size_t k = g * Gs; k < (g + 1) * Gs; k += 2) {                                    \
                if (k % 16 == 0) __builtin_prefetch(w->q + k * NR / 2 + QSTREAM_PF);               \
                v4u u[2];                                                                          \
                u8x8(w->q + k * NR / 2, 0, u);                                                     \
                for (size_t e = 0; e < 2; e++) {                                                   \
                    const size_t kk = k + e;                                                       \
                    const v4f b0 = u_minus(u[e] & 15u, bl), b1 = u_minus(u[e] >> 4, bh);           \
                    ROWS(QR_FM)                                                                    \
                }                                                                                  \
            }                                                                                      \
            ROWS(Q4_ACC)                                                                           \
        }                                                                                          \
    }
/* ffn_ukernels_q.gemv: the one-row stream for m = 1, the row tiles for 2..G. */
FFN_QTILES4_ROW1(Q8_ROWS, q8_tiles, q8_row1)
FFN_QTILES4_ROW1(Q4_ROWS, q4_tiles, q4_row1)
FFN_QGEMV4(q8_gemv, q8_tiles)
FFN_QGEMV4(q4_gemv, q4_tiles)

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
