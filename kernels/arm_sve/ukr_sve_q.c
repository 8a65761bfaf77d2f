/* SVE quantized microkernels for float activations: the generic kernels of
 * portable/ukr_q_generic.h at the SVE panel width (3 vectors: 12, 24, 48 columns at 128, 256,
 * 512-bit vectors, the f32_gemm__sve_8x3vl tile's, read from svcntw() as the driver reads it),
 * compiled with +sve so the compiler may vectorise them (W8A8 is ukr_sve_i8.c's). Correct under
 * qemu at every width; not timed on Arm hardware. */
#include <arm_sve.h>

#include "../portable/ukr_q_generic.h"
#include "sve_common.h"

extern const ffn_ukernels ffn_ukernels_sve;

enum { G = 4 };

/* The driver's panel width for the SVE table (nr_of in driver.c: 3 vectors, capped). */
static size_t nr_sve(void)
{
    const size_t nr = svcntw() * 3;
    return nr > FFN_UKR_MAX_NR ? FFN_UKR_MAX_NR : nr;
}

FFN__QG_FLOAT_ENTRIES(nr_sve())

const ffn_ukernels_q ffn_ukernels_q_sve = {
    .isa = "sve",
    .gemv_name = {"q8_gemv__sve", "q4_gemv__sve"},
    .f32 = &ffn_ukernels_sve,
    .gemv = {q8_gemv, q4_gemv},
    .dequant = {q8_dequant, q4_dequant},
    .stream_rows = 4,
    .stream_g = G,
};
