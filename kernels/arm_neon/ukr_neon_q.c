/* NEON quantized microkernels for float activations: the generic kernels of
 * portable/ukr_q_generic.h at the NEON panel width (12 columns, the f32_gemm__neon_8x12 tile's),
 * compiled with this folder's flags so the compiler vectorises them. Correct on every AArch64
 * CPU; nothing here has been timed on Arm hardware (.ci/aarch64.sh runs them under qemu). */
#include "../portable/ukr_q_generic.h"
#include "ukr_neon_q.h"

extern const ffn_ukernels ffn_ukernels_neon;

enum { NR = 12, G = 4 };

FFN__QG_FLOAT_ENTRIES(NR)

const ffn_ukernels_q ffn_ukernels_q_neon = {
    .isa = "neon",
    .gemv_name = {"q8_gemv__neon", "q4_gemv__neon"},
    .f32 = &ffn_ukernels_neon,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};
