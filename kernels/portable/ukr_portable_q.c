/* The portable quantized microkernels (plain C at the baseline ISA, like ukr_portable.c): the
 * float-activation table over the portable 6x8 fp32 tile and the W8A8 table, both from the
 * generic kernels of ukr_q_generic.h. What a CPU without a quantized ISA kernel runs. */
#include "../kern_qukernels.h"
#include "ukr_q_generic.h"

enum { NR = 8, G = 4 };

FFN__QG_FLOAT_ENTRIES(NR)

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
