/* The project's enum names (include/ffnroof/names.h): the model's phases and bounds, and the
 * profiler's peak kinds, bandwidth kernels and peer libraries as calibrate, bench and their files
 * (docs/formats-bench.md) spell them, in one place for sim/, measure/, the peers and io/. */
#include "ffnroof/names.h"

#include <stddef.h>

const char *ffn_phase_name(ffn_phase p)
{
    return p == FFN_PHASE_DECODE ? "decode" : "prefill";
}

const char *ffn_bound_name(ffn_bound b)
{
    switch (b) {
    case FFN_BOUND_COMPUTE:
        return "compute";
    case FFN_BOUND_COMM:
        return "interconnect";
    default:
        return "memory";
    }
}

static const struct {
    const char *name;
    ffn_dtype dtype; /* the dtype whose peak it measures */
} g_peaks[FFN_PEAK_COUNT] = {
    [FFN_PEAK_FP32_PORTABLE] = {"fp32_portable", FFN_DT_FP32},
    [FFN_PEAK_FP32_AVX2] = {"fp32_avx2_fma", FFN_DT_FP32},
    [FFN_PEAK_FP32_AVX512] = {"fp32_avx512_fma", FFN_DT_FP32},
    [FFN_PEAK_BF16_AVX512] = {"bf16_avx512_dpbf16", FFN_DT_BF16},
    [FFN_PEAK_FP16_AVX512] = {"fp16_avx512_fma", FFN_DT_FP16},
    [FFN_PEAK_INT8_VNNI] = {"int8_avx512_vnni", FFN_DT_INT8},
    [FFN_PEAK_BF16_AMX] = {"bf16_amx", FFN_DT_BF16},
    [FFN_PEAK_INT8_AMX] = {"int8_amx", FFN_DT_INT8},
    [FFN_PEAK_FP32_NEON] = {"fp32_neon_fmla", FFN_DT_FP32},
    [FFN_PEAK_FP16_NEON] = {"fp16_neon_fmla", FFN_DT_FP16},
    [FFN_PEAK_INT8_AVX_VNNI] = {"int8_avx_vnni", FFN_DT_INT8},
    [FFN_PEAK_INT8_AVX2] = {"int8_avx2_maddubs", FFN_DT_INT8},
    [FFN_PEAK_INT8_NEON_SDOT] = {"int8_neon_sdot", FFN_DT_INT8},
    [FFN_PEAK_INT8_NEON_I8MM] = {"int8_neon_i8mm", FFN_DT_INT8},
    [FFN_PEAK_INT8_PORTABLE] = {"int8_portable", FFN_DT_INT8},
    [FFN_PEAK_INT8_SVE_SDOT] = {"int8_sve_sdot", FFN_DT_INT8},
    [FFN_PEAK_FP32_SVE] = {"fp32_sve_fmla", FFN_DT_FP32},
};

static const char *const g_bw_names[FFN_BW_COUNT] = {"read", "copy", "triad", "copy_nt",
                                                     "triad_nt"};
static const char *const g_bw_kinds[FFN_BW_COUNT] = {"read-only", "read-write", "read-write", "nt",
                                                     "nt"};
static const char *const g_peer_names[FFN_PEER_COUNT] = {"openblas", "onednn"};

const char *ffn_peak_name(ffn_peak_kind k)
{
    return (unsigned)k < FFN_PEAK_COUNT ? g_peaks[k].name : NULL;
}

ffn_dtype ffn_peak_dtype(ffn_peak_kind k)
{
    return (unsigned)k < FFN_PEAK_COUNT ? g_peaks[k].dtype : FFN_DT_COUNT;
}

const char *ffn_bw_kernel_name(ffn_bw_kernel k)
{
    return (unsigned)k < FFN_BW_COUNT ? g_bw_names[k] : NULL;
}

const char *ffn_bw_kernel_kind(ffn_bw_kernel k)
{
    return (unsigned)k < FFN_BW_COUNT ? g_bw_kinds[k] : NULL;
}

const char *ffn_peer_lib_name(ffn_peer_lib lib)
{
    return (unsigned)lib < FFN_PEER_COUNT ? g_peer_names[lib] : NULL;
}
