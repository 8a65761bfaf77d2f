/* Names, sizes and parsing of data types and activations (include/ffnroof/types.h). */
#include "ffnroof/types.h"
#include "ffnroof/error.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

static const char *const dtype_names[FFN_DT_COUNT] = {
    "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp8-block", "nvfp4", "mxfp4"};
static const char *const isa_names[FFN_ISA_COUNT] = {
    [FFN_ISA_REF] = "ref",
    [FFN_ISA_PORTABLE] = "portable",
    [FFN_ISA_AVX2] = "avx2",
    [FFN_ISA_AVX512] = "avx512",
    [FFN_ISA_AVX512_BF16] = "avx512_bf16",
    [FFN_ISA_AMX] = "amx",
    [FFN_ISA_NEON] = "neon",
    [FFN_ISA_SVE] = "sve",
};
static const char *const act_names[FFN_ACT_COUNT] = {"relu",   "gelu",  "gelu_tanh", "silu",
                                                     "swiglu", "geglu", "reglu"};

static bool ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* A name of names[0..n) or an alias (case-insensitive): its index into *out. */
typedef struct name_alias {
    const char *alias;
    int value;
} name_alias;

static int lookup(const char *s, const char *const *names, int n, const name_alias *aliases,
                  size_t n_aliases, int *out)
{
    if (!s || !out) return FFN_EINVAL;
    for (int i = 0; i < n; i++)
        if (names[i] && ieq(s, names[i])) {
            *out = i;
            return 0;
        }
    for (size_t i = 0; i < n_aliases; i++)
        if (ieq(s, aliases[i].alias)) {
            *out = aliases[i].value;
            return 0;
        }
    return FFN_EINVAL;
}

const char *ffn_dtype_name(ffn_dtype dt)
{
    return (unsigned)dt < FFN_DT_COUNT ? dtype_names[dt] : NULL;
}

int ffn_dtype_parse(const char *s, ffn_dtype *out)
{
    static const name_alias aliases[] = {
        {"float32", FFN_DT_FP32}, {"float", FFN_DT_FP32},    {"float16", FFN_DT_FP16},
        {"half", FFN_DT_FP16},    {"bfloat16", FFN_DT_BF16}, {"e4m3", FFN_DT_FP8},
        {"e5m2", FFN_DT_FP8},     {"float8", FFN_DT_FP8},    {"fp8_block", FFN_DT_FP8_BLOCK}};
    int v;
    const int rc =
        out ? lookup(s, dtype_names, FFN_DT_COUNT, aliases, sizeof aliases / sizeof aliases[0], &v)
            : FFN_EINVAL;
    if (!rc) *out = (ffn_dtype)v;
    return rc;
}

unsigned ffn_dtype_bits(ffn_dtype dt)
{
    switch (dt) {
    case FFN_DT_FP32:
    case FFN_DT_TF32:
        return 32;
    case FFN_DT_BF16:
    case FFN_DT_FP16:
        return 16;
    case FFN_DT_FP8:
    case FFN_DT_INT8:
        return 8;
    case FFN_DT_FP8_BLOCK:
        return 8;
    case FFN_DT_INT4:
    case FFN_DT_NVFP4:
    case FFN_DT_MXFP4:
        return 4;
    default:
        return 0;
    }
}

/* Bytes of one scale of a block-scaled format: fp32 (fp8_block), e4m3 (nvfp4), e8m0 (mxfp4). */
static double scale_bytes(ffn_dtype dt)
{
    return dt == FFN_DT_FP8_BLOCK ? 4.0 : 1.0;
}

unsigned ffn_dtype_scale_block(ffn_dtype dt)
{
    switch (dt) {
    case FFN_DT_FP8_BLOCK:
        return 128;
    case FFN_DT_NVFP4:
        return 16;
    case FFN_DT_MXFP4:
        return 32;
    default:
        return 0;
    }
}

bool ffn_dtype_block_scaled(ffn_dtype dt)
{
    return ffn_dtype_scale_block(dt) > 0;
}

ffn_dtype ffn_dtype_unit(ffn_dtype dt)
{
    return dt == FFN_DT_FP8_BLOCK ? FFN_DT_FP8 : dt;
}

double ffn_dtype_bytes(ffn_dtype dt, unsigned group_size)
{
    double bytes = ffn_dtype_bits(dt) / 8.0;
    if (dt == FFN_DT_INT4) bytes += 2.0 / (group_size ? group_size : 128);
    if (ffn_dtype_block_scaled(dt)) bytes += scale_bytes(dt) / ffn_dtype_scale_block(dt);
    return bytes;
}

static bool is_int_weight(ffn_dtype dt)
{
    return dt == FFN_DT_INT8 || dt == FFN_DT_INT4;
}

/* Scale groups along K of one output channel (int4: ceil(K / G); int8: one per channel). */
static double groups_along_k(ffn_dtype dt, unsigned group, uint64_t K)
{
    if (dt != FFN_DT_INT4) return 1.0;
    const uint64_t g = group ? group : 128;
    return (double)((K + g - 1) / g);
}

double ffn_weight_matrix_bytes(ffn_dtype dt, unsigned group, bool zero_point, uint64_t K,
                               uint64_t N)
{
    const double k = (double)K, n = (double)N;
    switch (dt) {
    case FFN_DT_INT8:
        return k * n + FFN_QW8_SCALE_BYTES * n;
    case FFN_DT_INT4:
        return k * n * 0.5 + groups_along_k(dt, group, K) * n *
                                 (FFN_QW4_SCALE_BYTES + (zero_point ? FFN_QW4_ZERO_BYTES : 0.0));
    case FFN_DT_FP8_BLOCK: /* one fp32 scale per 128 x 128 block */
        return k * n + 4.0 * (double)((K + 127) / 128) * (double)((N + 127) / 128);
    case FFN_DT_NVFP4: /* one e4m3 scale per 16 along K, one fp32 tensor scale */
        return k * n * 0.5 + (double)((K + 15) / 16) * n + 4.0;
    case FFN_DT_MXFP4: /* one e8m0 scale per 32 along K */
        return k * n * 0.5 + (double)((K + 31) / 32) * n;
    default:
        return k * n * (ffn_dtype_bits(dt) / 8.0);
    }
}

double ffn_weight_elem_bytes(ffn_dtype dt, unsigned group, bool zero_point, uint64_t K)
{
    if (K == 0) K = 1;
    return ffn_weight_matrix_bytes(dt, group, zero_point, K, 1) / (double)K;
}

double ffn_quant_gemm_vec_ops(ffn_dtype wdt, ffn_dtype adt, unsigned group, bool zero_point,
                              uint64_t M, uint64_t K, uint64_t N)
{
    if (!is_int_weight(wdt) || M == 0) return 0.0;
    const double zp = wdt == FFN_DT_INT4 && zero_point ? 1.0 : 0.0;
    if (adt == FFN_DT_INT8)
        return 2.0 * (double)M * (double)N * groups_along_k(wdt, group, K) * (1.0 + zp);
    return (double)K * (double)N * (1.0 + zp);
}

static const char *const engine_names[FFN_ENGINE_COUNT] = {"none", "vllm", "sglang", "trtllm"};

const char *ffn_engine_name(ffn_engine e)
{
    return (unsigned)e < FFN_ENGINE_COUNT ? engine_names[e] : NULL;
}

int ffn_engine_parse(const char *s, ffn_engine *out)
{
    static const name_alias aliases[] = {{"tensorrt-llm", FFN_ENGINE_TRTLLM},
                                         {"tensorrt_llm", FFN_ENGINE_TRTLLM},
                                         {"trt-llm", FFN_ENGINE_TRTLLM}};
    int v;
    const int rc = out ? lookup(s, engine_names, FFN_ENGINE_COUNT, aliases,
                                sizeof aliases / sizeof aliases[0], &v)
                       : FFN_EINVAL;
    if (!rc) *out = (ffn_engine)v;
    return rc;
}

const char *ffn_act_name(ffn_act a)
{
    return (unsigned)a < FFN_ACT_COUNT ? act_names[a] : NULL;
}

int ffn_act_parse(const char *s, ffn_act *out)
{
    static const name_alias aliases[] = {{"gelu_new", FFN_ACT_GELU_TANH},
                                         {"gelu_pytorch_tanh", FFN_ACT_GELU_TANH},
                                         {"gelu_fast", FFN_ACT_GELU_TANH},
                                         {"swish", FFN_ACT_SILU},
                                         {"gelu_erf", FFN_ACT_GELU}};
    int v;
    const int rc =
        out ? lookup(s, act_names, FFN_ACT_COUNT, aliases, sizeof aliases / sizeof aliases[0], &v)
            : FFN_EINVAL;
    if (!rc) *out = (ffn_act)v;
    return rc;
}

bool ffn_act_gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

const char *ffn_isa_name(ffn_isa isa)
{
    return (unsigned)isa < FFN_ISA_COUNT ? isa_names[isa] : NULL;
}

int ffn_isa_parse(const char *s, ffn_isa *out)
{
    int v;
    const int rc = out ? lookup(s, isa_names, FFN_ISA_COUNT, NULL, 0, &v) : FFN_EINVAL;
    if (!rc) *out = (ffn_isa)v;
    return rc;
}
