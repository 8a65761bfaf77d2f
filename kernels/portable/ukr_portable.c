/* The portable microkernels: plain C that the compiler vectorises at the baseline ISA (SSE2 on
 * x86-64, Advanced SIMD on AArch64), compiled at -O3 without ISA flags (kernels/CMakeLists.txt).
 * They are what a CPU no ISA folder fits runs, so they must be real kernels, not the oracle:
 * the tile (6 rows x 8 columns: 12 accumulator vectors of 4 floats, 2 for B, 1 broadcast, within
 * the 16 registers of SSE2 and of any wider target) is written with the compilers' generic
 * 4-float vectors and named accumulators, so GCC and Clang keep it in registers. The activations
 * use libm (expf, erfcf) in fp32; kernels/ref is the double-precision oracle they are tested
 * against. Their weight streams prefetch in software (STREAM_PF below). */
#include "../driver/ukernel.h"
#include "../driver/ukr_rows.h"
#include "../kern_internal.h"
#include "../kern_qukernels.h"

#include <math.h>
#include <string.h>

enum { MR = 6, NR = 8, G = 4 };

/* Four floats as one vector: GCC's and Clang's generic vectors, lowered to whatever the baseline
 * ISA has (SSE2 on x86-64, Advanced SIMD on AArch64) without ISA flags. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f v4_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void v4_store(float *p, v4f v)
{
    memcpy(p, &v, sizeof v);
}

/* The tile for each row count m = 1..6, its 2m accumulators named (driver/ukr_rows.h says why:
 * arrays of vectors ran at 20% of the plain-C roof on an SPR-class VM). The block tails
 * went row by row before, two accumulators and one FMA-latency chain each: 16-18 against 34
 * GFLOP/s for the full tile (Zen 4, one thread). */
/* Every weight stream (the GEMM tile's B, the decode rows) asks for its panel STREAM_PF bytes
 * ahead, one line at a time (__builtin_prefetch: GNU C on every target, PRFM on AArch64), and
 * the tile pulls the driver's next chunk (pf) in before its k loop. The hardware prefetcher
 * alone left these streams latency-bound on an SPR-class VM (one thread,
 * FFNROOF_ISA=portable, weights flushed): d = 1536, f = 4096 bf16 T = 2 and 4 ran 2.8x and 3.3x
 * faster with it, fp32 T = 6 2.9x, the bf16 and fp16 one-row streams (d = 4096, f = 11008)
 * 2.1x and 2.7x; the fp32 one-row stream and T >= 64 did not move. */
#define STREAM_PF 2048
#define TILE_DECL(r) v4f c##r##0, c##r##1;
#define TILE_LD(r)                                                                                 \
    c##r##0 = v4_load(c + (r)*ldc);                                                                \
    c##r##1 = v4_load(c + (r)*ldc + 4);
#define TILE_ZR(r) c##r##0 = c##r##1 = (v4f){0.0f, 0.0f, 0.0f, 0.0f};
#define TILE_FM(r)                                                                                 \
    {                                                                                              \
        const v4f av = (v4f){ak[r], ak[r], ak[r], ak[r]};                                          \
        c##r##0 += av * b0;                                                                        \
        c##r##1 += av * b1;                                                                        \
    }
#define TILE_ST(r)                                                                                 \
    v4_store(c + (r)*ldc, c##r##0);                                                                \
    v4_store(c + (r)*ldc + 4, c##r##1);
#define TILE(name, ROWS)                                                                           \
    static void name(size_t kc, const float *a, size_t as, const void *bv, float *c, size_t ldc,   \
                     bool acc, const char *pf, size_t pf_bytes)                                    \
    {                                                                                              \
        const float *b = bv;                                                                       \
        FFN_TILE_ACC(ROWS)                                                                         \
        FFN_TILE_PREFETCH()                                                                        \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (k % 2 == 0) __builtin_prefetch((const char *)(b + k * NR) + STREAM_PF);            \
            const v4f b0 = v4_load(b + k * NR), b1 = v4_load(b + k * NR + 4);                      \
            const float *ak = a + k * as;                                                          \
            ROWS(TILE_FM)                                                                          \
        }                                                                                          \
        ROWS(TILE_ST)                                                                              \
    }
TILE(gemm1, FFN_ROWS1)
TILE(gemm2, FFN_ROWS2)
TILE(gemm3, FFN_ROWS3)
TILE(gemm4, FFN_ROWS4)
TILE(gemm5, FFN_ROWS5)
TILE(gemm6, FFN_ROWS6)

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pf, size_t pf_bytes)
{
    static const ffn_tile_fn tiles[MR] = {gemm1, gemm2, gemm3, gemm4, gemm5, gemm6};
    tiles[(m < MR ? m : MR) - 1](kc, a, as, b, c, ldc, acc, pf, pf_bytes);
}

/* IEEE binary16 -> fp32, exact (subnormals, Inf and NaN included), the way F. Giesen's
 * half_to_float does it: rebias the exponent, then fix the two special exponents (the
 * subnormals by one float subtraction). Both fixes are computed and selected, without branches,
 * so the compiler vectorises the decode stream's conversion (with branches the unrolled one-row
 * stream ran at 0.6 Gweights/s a core on a Zen 5 VM). */
static inline float f16_f32(uint16_t h)
{
    const uint32_t shifted = ((uint32_t)h & 0x7fffu) << 13;
    const uint32_t exp = shifted & 0x0f800000u;
    const uint32_t o = shifted + 0x38000000u;  /* (127 - 15) << 23 */
    const uint32_t inf = o + 0x38000000u;      /* Inf / NaN: exponent 255 */
    const uint32_t sub_bits = o + 0x00800000u; /* zero / subnormal: renormalise */
    float sub;
    memcpy(&sub, &sub_bits, 4);
    sub -= 6.103515625e-05f; /* 2^-14 */
    uint32_t sub_o;
    memcpy(&sub_o, &sub, 4);
    uint32_t r = exp == 0x0f800000u ? inf : exp == 0 ? sub_o : o;
    r |= ((uint32_t)h & 0x8000u) << 16;
    float f;
    memcpy(&f, &r, 4);
    return f;
}

static void widen_bf16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ffn__bf16_to_f32(src[i]);
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = f16_f32(src[i]);
}

/* Decode streams of 2..G rows: the widened weight row (8 values) shared by the rows, one pair of
 * named accumulators a row (driver/ukr_rows.h says why). An accumulator array indexed by the
 * run-time row count, the code before, stayed in memory: one thread, one panel in L1, 13.4
 * Gweights/s at one row (ROW1_BODY) fell to 2.8, 2.5 and 2.3 at 2, 3 and 4 rows (Zen 4).
 * The multiply-adds and stores are the GEMM tile's (TILE_FM, TILE_ST). */
#define SR_DECL(r) v4f c##r##0 = {0, 0, 0, 0}, c##r##1 = c##r##0;
#define STREAM_ROWS(ROWS, LOAD8)                                                                   \
    {                                                                                              \
        ROWS(SR_DECL)                                                                              \
        for (size_t k = 0; k < kc; k++) {                                                          \
            if (k * NR * sizeof *w % 64 == 0)                                                      \
                __builtin_prefetch((const char *)(w + k * NR) + STREAM_PF);                        \
            v4f b0, b1;                                                                            \
            LOAD8(k *NR, b0, b1);                                                                  \
            const float *ak = a + k * as;                                                          \
            ROWS(TILE_FM)                                                                          \
        }                                                                                          \
        ROWS(TILE_ST)                                                                              \
    }

/* One row (T = 1 decode), the case decode spends its time in: four partial sums per column (k
 * mod 4, added in a fixed order), held in eight named 4-float vectors. An accumulator array
 * indexed by a run-time row count stayed in memory: on a Zen 5 VM the portable
 * bf16 decode widened and summed 2 Gweights/s a core, a third of what the fp32 stream read from
 * DRAM. */
#define ROW1_BODY(LOADW)                                                                           \
    v4f s00 = {0, 0, 0, 0}, s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00,      \
        s31 = s00;                                                                                 \
    size_t k = 0;                                                                                  \
    for (; k + 4 <= kc; k += 4) {                                                                  \
        for (size_t o_ = 0; o_ < 4 * NR * sizeof *w; o_ += 64)                                     \
            __builtin_prefetch((const char *)(w + k * NR) + STREAM_PF + o_);                       \
        ROW1_STEP(LOADW, k, s00, s01)                                                              \
        ROW1_STEP(LOADW, k + 1, s10, s11)                                                          \
        ROW1_STEP(LOADW, k + 2, s20, s21)                                                          \
        ROW1_STEP(LOADW, k + 3, s30, s31)                                                          \
    }                                                                                              \
    for (; k < kc; k++)                                                                            \
        ROW1_STEP(LOADW, k, s00, s01)                                                              \
    v4_store(c, (s00 + s10) + (s20 + s30));                                                        \
    v4_store(c + 4, (s01 + s11) + (s21 + s31));

#define ROW1_STEP(LOAD8, kk, lo, hi)                                                               \
    {                                                                                              \
        v4f b0, b1;                                                                                \
        LOAD8((kk)*NR, b0, b1);                                                                    \
        const float x = a[(kk)*as];                                                                \
        const v4f av = (v4f){x, x, x, x};                                                          \
        lo += av * b0;                                                                             \
        hi += av * b1;                                                                             \
    }

#define GEMV_FN(name, type, LOAD8)                                                                 \
    static void name(size_t m, size_t kc, const float *a, size_t as, const void *wp, float *c,     \
                     size_t ldc)                                                                   \
    {                                                                                              \
        const type *w = wp;                                                                        \
        if (m == 1) {                                                                              \
            ROW1_BODY(LOAD8)                                                                       \
        } else if (m == 2) {                                                                       \
            STREAM_ROWS(FFN_ROWS2, LOAD8)                                                          \
        } else if (m == 3) {                                                                       \
            STREAM_ROWS(FFN_ROWS3, LOAD8)                                                          \
        } else {                                                                                   \
            STREAM_ROWS(FFN_ROWS4, LOAD8)                                                          \
        }                                                                                          \
    }

/* Four fp16 weights widened to fp32: loaded as one 8-byte vector and zero-extended by
 * __builtin_convertvector (GCC >= 9, Clang), an unpack on SSE2 and NEON (built lane by lane,
 * the loads were scalar inserts). */
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef uint16_t v4h __attribute__((vector_size(8)));

static inline v4u u16x4(const uint16_t *p)
{
    v4h h;
    memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, v4u);
}

/* f16_f32 on four lanes: the same operations, the fixes chosen by masks. */
static inline v4f f16x4(const uint16_t *p)
{
    const v4u h = u16x4(p);
    const v4u shifted = (h & 0x7fffu) << 13;
    const v4u exp = shifted & 0x0f800000u;
    const v4u o = shifted + 0x38000000u;
    const v4f sub = (v4f)(o + 0x00800000u) - 6.103515625e-05f;
    const v4u is_inf = (v4u)(exp == 0x0f800000u), is_sub = (v4u)(exp == 0u);
    const v4u r = (o & ~(is_inf | is_sub)) | ((o + 0x38000000u) & is_inf) | ((v4u)sub & is_sub);
    return (v4f)(r | (h & 0x8000u) << 16);
}

#define LW_F32(i) w[i]
#define LW_BF16(i) ffn__bf16_to_f32(w[i])
#define LW_F16(i) f16_f32(w[i])
/* A row of NR = 8 weights as two vectors: fp32 and bf16 through a loop of eight, which GCC
 * vectorises whole (bf16: 10.5 Gweights/s a core on a Zen 5 VM; a loop of four, or a shift of
 * u16x4, 3.2 and 6.0), fp16 through f16x4 (1.6 Gweights/s; 0.6 as a loop, whose branches or
 * selects GCC does not vectorise once unrolled). */
#define L8_LOOP(LW, i, b0, b1)                                                                     \
    {                                                                                              \
        float wv[NR];                                                                              \
        for (size_t j = 0; j < NR; j++)                                                            \
            wv[j] = LW((i) + j);                                                                   \
        b0 = v4_load(wv);                                                                          \
        b1 = v4_load(wv + 4);                                                                      \
    }
#define L8_F32(i, b0, b1) L8_LOOP(LW_F32, i, b0, b1)
#define L8_BF16(i, b0, b1) L8_LOOP(LW_BF16, i, b0, b1)
#define L8_F16(i, b0, b1)                                                                          \
    {                                                                                              \
        b0 = f16x4(w + (i));                                                                       \
        b1 = f16x4(w + (i) + 4);                                                                   \
    }
GEMV_FN(gemv_f32, float, L8_F32)
GEMV_FN(gemv_bf16, uint16_t, L8_BF16)
GEMV_FN(gemv_f16, uint16_t, L8_F16)

static inline float act1(ffn_act act, float g)
{
    switch (act) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return g < 0.0f ? 0.0f : g; /* NaN stays NaN */
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return 0.5f * g * erfcf(-g * 0.70710678118654752f);
    case FFN_ACT_GELU_TANH: {
        const float z = 0.7978845608028654f * (g + 0.044715f * g * g * g);
        return g / (1.0f + expf(-2.0f * z));
    }
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
    default:
        return g / (1.0f + expf(-g));
    }
}

void ffn__portable_act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
                       const float *bg, const float *bu, float *h, size_t ldh)
{
    for (size_t r = 0; r < rows; r++) {
        const float *gr = g + r * ldc;
        float *hr = h + r * ldh;
        for (size_t i = 0; i < n; i++) {
            const float v = act1(a, bg ? gr[i] + bg[i] : gr[i]);
            hr[i] = u ? v * (bu ? u[r * ldc + i] + bu[i] : u[r * ldc + i]) : v;
        }
    }
}

const ffn_ukernels ffn_ukernels_portable = {
    .isa = "portable",
    .gemm_name = "f32_gemm__portable_6x8",
    .mr = MR,
    .nr = NR,
    .kc = 256,
    .mc = 504,
    .gemm = gemm,
    .gemv = {gemv_f32, gemv_bf16, gemv_f16},
    .stream_rows = {4, 4, 4},
    .stream_g = G,
    .widen = {NULL, widen_bf16, widen_f16},
    .act = ffn__portable_act,
};
