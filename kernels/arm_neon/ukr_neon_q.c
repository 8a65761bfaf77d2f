/* NEON quantized microkernels for float activations: the generic kernels of
 * portable/ukr_q_generic.h at the NEON panel width (12 columns, the f32_gemm__neon_8x12 tile's),
 * compiled with this folder's flags so the compiler vectorises them. Correct on every AArch64
 * CPU; nothing here has been timed on Arm hardware (.ci/aarch64.sh runs them under qemu). */
#include "../portable/ukr_q_generic.h"
#include "ukr_neon_q.h"

extern const ffn_ukernels ffn_ukernels_neon;

enum { NR = 12, G = 4 };

static void q8_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    (void)asum;
    ffn__qg_q8_gemv(NR, m, kc, a, as, w, c, ldc);
}

static void q4_gemv(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                    const ffn_ukr_qpanel *w, float *c, size_t ldc)
{
    (void)asum;
    ffn__qg_q4_gemv(NR, m, kc, a, as, w, c, ldc);
}

static void q8_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    ffn__qg_q8_dequant(NR, k0, kc, w, dst);
}

static void q4_dequant(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst)
{
    ffn__qg_q4_dequant(NR, k0, kc, w, dst);
}

const ffn_ukernels_q ffn_ukernels_q_neon = {
    .isa = "neon",
    .gemv_name = {"q8_gemv__neon", "q4_gemv__neon"},
    .f32 = &ffn_ukernels_neon,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};
