/* The portable microkernels: plain C that the compiler vectorises at the baseline ISA (SSE2 on
 * x86-64, Advanced SIMD on AArch64), compiled at -O3 without ISA flags (kernels/CMakeLists.txt).
 * They are what a CPU no ISA folder fits runs, so they must be real kernels, not the oracle:
 * the tile (6 rows x 8 columns: 12 accumulator vectors of 4 floats, 2 for B, 1 broadcast, within
 * the 16 registers of SSE2 and of any wider target) and the fixed trip counts are chosen so GCC
 * and Clang keep the accumulators in registers. The activations use libm (expf, erfcf) in fp32;
 * kernels/ref is the double-precision oracle they are tested against. */
#include "../driver/ukernel.h"

#include <math.h>
#include <string.h>

enum { MR = 6, NR = 8, G = 4 };

/* One row panel of m <= MR rows: the constant trip counts let the compiler keep acc in
 * registers for every m (one instantiation per m). */
static inline void gemm_body(const size_t m, size_t kc, const float *a, size_t as, const float *b,
                             float *c, size_t ldc, bool acc_in)
{
    float acc[MR][NR];
    for (size_t r = 0; r < MR; r++)
        for (size_t j = 0; j < NR; j++)
            acc[r][j] = (acc_in && r < m) ? c[r * ldc + j] : 0.0f;
    for (size_t k = 0; k < kc; k++) {
        const float *bk = b + k * NR;
        for (size_t r = 0; r < m; r++) {
            const float av = a[k * as + r];
            for (size_t j = 0; j < NR; j++)
                acc[r][j] += av * bk[j];
        }
    }
    for (size_t r = 0; r < m; r++)
        memcpy(c + r * ldc, acc[r], sizeof acc[r]);
}

static void gemm(size_t m, size_t kc, const float *a, size_t as, const float *b, float *c,
                 size_t ldc, bool acc, const void *pf, size_t pf_bytes)
{
    (void)pf;
    (void)pf_bytes;
    switch (m) {
    case 6: gemm_body(6, kc, a, as, b, c, ldc, acc); break;
    case 5: gemm_body(5, kc, a, as, b, c, ldc, acc); break;
    case 4: gemm_body(4, kc, a, as, b, c, ldc, acc); break;
    case 3: gemm_body(3, kc, a, as, b, c, ldc, acc); break;
    case 2: gemm_body(2, kc, a, as, b, c, ldc, acc); break;
    default: gemm_body(1, kc, a, as, b, c, ldc, acc); break;
    }
}

static inline float bf16_f32(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float v;
    memcpy(&v, &u, 4);
    return v;
}

/* IEEE binary16 -> fp32, exact (subnormals, Inf and NaN included). */
static inline float f16_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (e == 0) {
        const float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    const uint32_t u =
        sign | (e == 31 ? 0x7f800000u | (mant << 13) : ((e + 112u) << 23) | (mant << 13));
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static void widen_bf16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = bf16_f32(src[i]);
}

static void widen_f16(size_t n, const uint16_t *src, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = f16_f32(src[i]);
}

/* Decode streams: G rows at most per call; the widened weight row (8 values) is shared by the
 * rows. Four partial sums per row (k mod 4) keep the FMA/add chains independent. */
#define GEMV_BODY(LOADW)                                                                           \
    float acc[G][4][NR];                                                                           \
    memset(acc, 0, sizeof acc);                                                                    \
    size_t k = 0;                                                                                  \
    for (; k + 4 <= kc; k += 4)                                                                    \
        for (size_t q = 0; q < 4; q++) {                                                           \
            float wv[NR];                                                                          \
            for (size_t j = 0; j < NR; j++)                                                        \
                wv[j] = LOADW((k + q) * NR + j);                                                   \
            for (size_t r = 0; r < m; r++) {                                                       \
                const float av = a[(k + q) * as + r];                                              \
                for (size_t j = 0; j < NR; j++)                                                    \
                    acc[r][q][j] += av * wv[j];                                                    \
            }                                                                                      \
        }                                                                                          \
    for (; k < kc; k++) {                                                                          \
        float wv[NR];                                                                              \
        for (size_t j = 0; j < NR; j++)                                                            \
            wv[j] = LOADW(k * NR + j);                                                             \
        for (size_t r = 0; r < m; r++) {                                                           \
            const float av = a[k * as + r];                                                        \
            for (size_t j = 0; j < NR; j++)                                                        \
                acc[r][0][j] += av * wv[j];                                                        \
        }                                                                                          \
    }                                                                                              \
    for (size_t r = 0; r < m; r++)                                                                 \
        for (size_t j = 0; j < NR; j++)                                                            \
            c[r * ldc + j] = (acc[r][0][j] + acc[r][1][j]) + (acc[r][2][j] + acc[r][3][j]);

static void gemv_f32(size_t m, size_t kc, const float *a, size_t as, const void *wp, float *c,
                     size_t ldc)
{
    const float *w = wp;
#define LW(i) w[i]
    GEMV_BODY(LW)
#undef LW
}

static void gemv_bf16(size_t m, size_t kc, const float *a, size_t as, const void *wp, float *c,
                      size_t ldc)
{
    const uint16_t *w = wp;
#define LW(i) bf16_f32(w[i])
    GEMV_BODY(LW)
#undef LW
}

static void gemv_f16(size_t m, size_t kc, const float *a, size_t as, const void *wp, float *c,
                     size_t ldc)
{
    const uint16_t *w = wp;
#define LW(i) f16_f32(w[i])
    GEMV_BODY(LW)
#undef LW
}

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

static void act(ffn_act a, size_t rows, size_t n, const float *g, const float *u, size_t ldc,
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
    .act = act,
};
