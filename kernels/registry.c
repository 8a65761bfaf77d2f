/* The kernel table and dispatch. Each row is one dense kernel: the ISA level its microkernels
 * belong to, the CPU features it requires (a mask, checked against kernels/cpu.c's detection),
 * and its ffn_kernel face, which for every vector kernel is the portable driver over that ISA's
 * microkernel table (kernels/driver). Rows are in dispatch order, newest ISA first; the best
 * kernel for a dtype is the first row whose requirements the CPU meets within the level cap
 * (FFNROOF_ISA), chosen once under pthread_once. Like BLIS's context, the reference kernels are
 * always present, but they are the oracle: dispatch picks them only when asked (ref), since the
 * portable kernel fits every CPU. Adding an ISA: its microkernel folder, its table extern
 * below, and its rows. */
#include "driver/driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "kern_qukernels.h"

/* ---- ISA levels --------------------------------------------------------------------------- */

#define X86_AVX2_CAP (FFN_CPU_AVX2 | FFN_CPU_AVX_VNNI)
#define X86_AVX512_CAP (X86_AVX2_CAP | FFN_CPU_AVX512 | FFN_CPU_AVX512_VNNI | FFN_CPU_AVX512_FP16)
#define ARM_NEON_CAP                                                                               \
    (FFN_CPU_NEON | FFN_CPU_ARM_FP16 | FFN_CPU_ARM_DOTPROD | FFN_CPU_ARM_BF16 | FFN_CPU_ARM_I8MM)

static const struct {
    uint64_t requires, allows;
} levels[FFN_ISA_COUNT] = {
    [FFN_ISA_REF] = {0, 0},
    [FFN_ISA_PORTABLE] = {0, 0},
    [FFN_ISA_AVX2] = {FFN_CPU_AVX2, X86_AVX2_CAP},
    [FFN_ISA_AVX512] = {FFN_CPU_AVX2 | FFN_CPU_AVX512, X86_AVX512_CAP},
    [FFN_ISA_AVX512_BF16] = {FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16,
                             X86_AVX512_CAP | FFN_CPU_AVX512_BF16},
    [FFN_ISA_AMX] = {FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16 | FFN_CPU_AMX_BF16,
                     X86_AVX512_CAP | FFN_CPU_AVX512_BF16 | FFN_CPU_AMX_BF16 | FFN_CPU_AMX_INT8},
    [FFN_ISA_NEON] = {FFN_CPU_NEON, ARM_NEON_CAP},
    [FFN_ISA_SVE] = {FFN_CPU_NEON | FFN_CPU_SVE, ARM_NEON_CAP | FFN_CPU_SVE | FFN_CPU_SVE2},
};

/* ---- the kernels -------------------------------------------------------------------------- */

/* Driver descriptors: one per (microkernel table, weight dtype). The id tags packed weights so
 * forward refuses a blob packed by another kernel (layouts differ in nr and dtype). */
#define DRV(tbl, w, tag)                                                                           \
    {                                                                                              \
        .u = &(tbl), .t = NULL, .wdt = (w), .id = (tag)                                            \
    }
#define DRVT(tbl, tag)                                                                             \
    {                                                                                              \
        .u = NULL, .t = &(tbl), .wdt = FFN_UKR_BF16, .id = (tag)                                   \
    }
/* Quantized: float activations (qf FFN_UKR_Q8 / Q4, bf16-rounded or not), and W8A8. */
#define DRVQ(tbl, qfmt, bf, tag)                                                                   \
    {                                                                                              \
        .q = &(tbl), .qf = (qfmt), .abf16 = (bf), .id = (tag)                                      \
    }
#define DRVI8(tbl, tag)                                                                            \
    {                                                                                              \
        .i8 = &(tbl), .id = (tag)                                                                  \
    }
/* The four float-activation kernels of a quantized table (W8/W4 x fp32/bf16 activations), and
 * the tag base of their packed layouts. */
#define QKERNELS(pre, tbl, tagb, kn, level)                                                        \
    static const ffn__drv drv_##pre##_w8a32 = DRVQ(tbl, FFN_UKR_Q8, false, (tagb) + 1);            \
    static const ffn__drv drv_##pre##_w8a16 = DRVQ(tbl, FFN_UKR_Q8, true, (tagb) + 2);             \
    static const ffn__drv drv_##pre##_w4a32 = DRVQ(tbl, FFN_UKR_Q4, false, (tagb) + 3);            \
    static const ffn__drv drv_##pre##_w4a16 = DRVQ(tbl, FFN_UKR_Q4, true, (tagb) + 4);             \
    FFN__DRIVER_KERNEL_A(ffn_kernel_w8a32_##pre, "w8a32_ffn__" kn, level, FFN_DT_INT8,             \
                         FFN_DT_FP32, drv_##pre##_w8a32, 0, 0);                                    \
    FFN__DRIVER_KERNEL_A(ffn_kernel_w8a16_##pre, "w8a16_ffn__" kn, level, FFN_DT_INT8,             \
                         FFN_DT_BF16, drv_##pre##_w8a16, 0, 0);                                    \
    FFN__DRIVER_KERNEL_A(ffn_kernel_w4a32_##pre, "w4a32_ffn__" kn, level, FFN_DT_INT4,             \
                         FFN_DT_FP32, drv_##pre##_w4a32, 0, 0);                                    \
    FFN__DRIVER_KERNEL_A(ffn_kernel_w4a16_##pre, "w4a16_ffn__" kn, level, FFN_DT_INT4,             \
                         FFN_DT_BF16, drv_##pre##_w4a16, 0, 0)
/* The three float-weight kernels of a microkernel table (fp32, bf16 and fp16 weights, widened in
 * registers or scratch), named "<dt>_ffn__" kn, and the tag base of their packed layouts (the
 * ISA's letter in the top byte; "F32", "B16", "F16" below it). */
#define FKERNELS(pre, tbl, tagc, kn, level)                                                        \
    static const ffn__drv drv_##pre##_f32 = DRV(tbl, FFN_UKR_F32, ((tagc) << 24) | 0x463332u);     \
    static const ffn__drv drv_##pre##_bf16 = DRV(tbl, FFN_UKR_BF16, ((tagc) << 24) | 0x423136u);   \
    static const ffn__drv drv_##pre##_f16 = DRV(tbl, FFN_UKR_F16, ((tagc) << 24) | 0x463136u);     \
    FFN__DRIVER_KERNEL(ffn_kernel_f32_##pre, "f32_ffn__" kn, level, FFN_DT_FP32, drv_##pre##_f32,  \
                       0, 0);                                                                      \
    FFN__DRIVER_KERNEL(ffn_kernel_bf16_##pre, "bf16_ffn__" kn, level, FFN_DT_BF16,                 \
                       drv_##pre##_bf16, 0, 0);                                                    \
    FFN__DRIVER_KERNEL(ffn_kernel_f16_##pre, "f16_ffn__" kn, level, FFN_DT_FP16, drv_##pre##_f16,  \
                       0, 0)
#define QROWS(pre, req)                                                                            \
    {&ffn_kernel_w8a32_##pre, (req)}, {&ffn_kernel_w8a16_##pre, (req)},                            \
        {&ffn_kernel_w4a32_##pre, (req)},                                                          \
    {                                                                                              \
        &ffn_kernel_w4a16_##pre, (req)                                                             \
    }

/* A W8A8 kernel: the int8 driver over one ISA's int8 tables (row tile, stream rows). */
#define W8A8KERNEL(sfx, ukr, id, label, level, rtile, srows)                                       \
    static const ffn__drv drv_##sfx##_w8a8 = DRVI8(ukr, id);                                       \
    FFN__DRIVER_KERNEL_A(ffn_kernel_w8a8_##sfx, "w8a8_ffn__" label, level, FFN_DT_INT8,            \
                         FFN_DT_INT8, drv_##sfx##_w8a8, rtile, srows)

FKERNELS(portable, ffn_ukernels_portable, 0x50u, "portable_6x8", FFN_ISA_PORTABLE);
QKERNELS(portable, ffn_ukernels_q_portable, 0x50510000u, "portable_6x8", FFN_ISA_PORTABLE);
W8A8KERNEL(portable, ffn_ukernels_i8_portable, 0x50513838u, "portable_1x32", FFN_ISA_PORTABLE, 0,
           0);

#if defined(FFN_HAVE_AVX2)
FKERNELS(avx2, ffn_ukernels_avx2, 0x32u, "avx2_6x16", FFN_ISA_AVX2);
QKERNELS(avx2, ffn_ukernels_q_avx2, 0x32510000u, "avx2_6x16", FFN_ISA_AVX2);
W8A8KERNEL(avx2, ffn_ukernels_i8_avx2, 0x32513838u, "avx2_2x32", FFN_ISA_AVX2, 0, 4);
#endif

#if defined(FFN_HAVE_AVX_VNNI)
W8A8KERNEL(avxvnni, ffn_ukernels_i8_avxvnni, 0x4e513838u, "avx2vnni_2x32", FFN_ISA_AVX2, 0, 4);
#endif

#if defined(FFN_HAVE_AVX512)
FKERNELS(avx512, ffn_ukernels_avx512, 0x41u, "avx512_14x32", FFN_ISA_AVX512);
QKERNELS(avx512, ffn_ukernels_q_avx512, 0x41510000u, "avx512_14x32", FFN_ISA_AVX512);
W8A8KERNEL(avx512, ffn_ukernels_i8_avx512, 0x41513838u, "avx512_8x32", FFN_ISA_AVX512, 0, 4);
#endif

#if defined(FFN_HAVE_AVX512_VNNI)
W8A8KERNEL(avx512vnni, ffn_ukernels_i8_avx512vnni, 0x56513838u, "avx512vnni_8x32", FFN_ISA_AVX512,
           0, 4);
#endif

#if defined(FFN_HAVE_AVX512_BF16)
static const ffn__drv drv_avx512bf16 = DRVT(ffn_ukernels_avx512bf16, 0x44423136u);
FFN__DRIVER_KERNEL(ffn_kernel_bf16_avx512bf16, "bf16_ffn__avx512bf16_14x32", FFN_ISA_AVX512_BF16,
                   FFN_DT_BF16, drv_avx512bf16, 0, 0);
/* W4A16 only: VDPBF16PS multiplies bf16 activations (the table's W8 entries are NULL). */
static const ffn__drv drv_avx512bf16_w4a16 =
    DRVQ(ffn_ukernels_q_avx512bf16, FFN_UKR_Q4, true, 0x42510004u);
FFN__DRIVER_KERNEL_A(ffn_kernel_w4a16_avx512bf16, "w4a16_ffn__avx512_bf16_14x32",
                     FFN_ISA_AVX512_BF16, FFN_DT_INT4, FFN_DT_BF16, drv_avx512bf16_w4a16, 0, 0);
#endif

#if defined(FFN_HAVE_AVX512_FP16)
/* W4A16 only: VFMADD231PH on the nibble lookups in decode, the fp32 tile in prefill. */
static const ffn__drv drv_avx512fp16_w4a16 =
    DRVQ(ffn_ukernels_q_avx512fp16, FFN_UKR_Q4, true, 0x48510004u);
FFN__DRIVER_KERNEL_A(ffn_kernel_w4a16_avx512fp16, "w4a16_ffn__avx512_fp16_14x32", FFN_ISA_AVX512,
                     FFN_DT_INT4, FFN_DT_BF16, drv_avx512fp16_w4a16, 0, 0);
#endif

#if defined(FFN_HAVE_AMX)
static const ffn__drv drv_amx = DRVT(ffn_ukernels_amx, 0x58423136u);
FFN__DRIVER_KERNEL(ffn_kernel_bf16_amx, "bf16_ffn__amx_32x32", FFN_ISA_AMX, FFN_DT_BF16, drv_amx,
                   32, 2);
#endif

#if defined(FFN_HAVE_AMX_INT8)
W8A8KERNEL(amx, ffn_ukernels_i8_amx, 0x58513838u, "amx_32x32", FFN_ISA_AMX, 32, 4);
#endif

#if defined(FFN_HAVE_NEON)
FKERNELS(neon, ffn_ukernels_neon, 0x4eu, "neon_8x12", FFN_ISA_NEON);
QKERNELS(neon, ffn_ukernels_q_neon, 0x4e510000u, "neon_8x12", FFN_ISA_NEON);
#endif

#if defined(FFN_HAVE_NEON_I8MM)
W8A8KERNEL(neoni8mm, ffn_ukernels_i8_neoni8mm, 0x4d513838u, "neoni8mm_4x16", FFN_ISA_NEON, 0, 4);
#endif
#if defined(FFN_HAVE_SVE)
W8A8KERNEL(sve, ffn_ukernels_i8_sve, 0x53513838u, "sve_8x2vl", FFN_ISA_SVE, 0, 4);
#endif
#if defined(FFN_HAVE_NEON_DOT)
W8A8KERNEL(neondot, ffn_ukernels_i8_neondot, 0x44513838u, "neondot_2x32", FFN_ISA_NEON, 0, 4);
#endif

#if defined(FFN_HAVE_SVE)
FKERNELS(sve, ffn_ukernels_sve, 0x53u, "sve_8x3vl", FFN_ISA_SVE);
QKERNELS(sve, ffn_ukernels_q_sve, 0x53510000u, "sve_8x3vl", FFN_ISA_SVE);
#endif

typedef struct row {
    const ffn_kernel *k;
    uint64_t requires;
} row;

/* Dispatch order: newest first. */
static const row table[] = {
#if defined(FFN_HAVE_AMX)
    {&ffn_kernel_bf16_amx, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16 | FFN_CPU_AMX_BF16},
#endif
#if defined(FFN_HAVE_AMX_INT8)
    {&ffn_kernel_w8a8_amx, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16 | FFN_CPU_AMX_BF16 |
                               FFN_CPU_AMX_INT8 | FFN_CPU_AVX512_VNNI},
#endif
#if defined(FFN_HAVE_AVX512_FP16)
    {&ffn_kernel_w4a16_avx512fp16, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_FP16},
#endif
#if defined(FFN_HAVE_AVX512_BF16)
    {&ffn_kernel_bf16_avx512bf16, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16},
    {&ffn_kernel_w4a16_avx512bf16, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16},
#endif
#if defined(FFN_HAVE_AVX512)
    {&ffn_kernel_f32_avx512, FFN_CPU_AVX2 | FFN_CPU_AVX512},
    {&ffn_kernel_bf16_avx512, FFN_CPU_AVX2 | FFN_CPU_AVX512},
    {&ffn_kernel_f16_avx512, FFN_CPU_AVX2 | FFN_CPU_AVX512},
    QROWS(avx512, FFN_CPU_AVX2 | FFN_CPU_AVX512),
#if defined(FFN_HAVE_AVX512_VNNI)
    {&ffn_kernel_w8a8_avx512vnni, FFN_CPU_AVX2 | FFN_CPU_AVX512 | FFN_CPU_AVX512_VNNI},
#endif
    {&ffn_kernel_w8a8_avx512, FFN_CPU_AVX2 | FFN_CPU_AVX512},
#endif
#if defined(FFN_HAVE_AVX2)
    {&ffn_kernel_f32_avx2, FFN_CPU_AVX2},
    {&ffn_kernel_bf16_avx2, FFN_CPU_AVX2},
    {&ffn_kernel_f16_avx2, FFN_CPU_AVX2},
    QROWS(avx2, FFN_CPU_AVX2),
#if defined(FFN_HAVE_AVX_VNNI)
    {&ffn_kernel_w8a8_avxvnni, FFN_CPU_AVX2 | FFN_CPU_AVX_VNNI},
#endif
    {&ffn_kernel_w8a8_avx2, FFN_CPU_AVX2},
#endif
#if defined(FFN_HAVE_SVE)
    FFN_SVE_EXTRA_ROWS{&ffn_kernel_f32_sve, FFN_CPU_NEON | FFN_CPU_SVE},
    {&ffn_kernel_bf16_sve, FFN_CPU_NEON | FFN_CPU_SVE},
    {&ffn_kernel_f16_sve, FFN_CPU_NEON | FFN_CPU_SVE},
    QROWS(sve, FFN_CPU_NEON | FFN_CPU_SVE),
#endif
#if defined(FFN_HAVE_NEON)
    FFN_NEON_EXTRA_ROWS{&ffn_kernel_f32_neon, FFN_CPU_NEON},
    {&ffn_kernel_bf16_neon, FFN_CPU_NEON},
    {&ffn_kernel_f16_neon, FFN_CPU_NEON},
    QROWS(neon, FFN_CPU_NEON),
#if defined(FFN_HAVE_NEON_I8MM)
    {&ffn_kernel_w8a8_neoni8mm, FFN_CPU_NEON | FFN_CPU_ARM_I8MM},
#endif
#if defined(FFN_HAVE_SVE)
    /* after SMMLA (32 products an instruction at any vector length), before NEON SDOT */
    {&ffn_kernel_w8a8_sve, FFN_CPU_NEON | FFN_CPU_SVE},
#endif
#if defined(FFN_HAVE_NEON_DOT)
    {&ffn_kernel_w8a8_neondot, FFN_CPU_NEON | FFN_CPU_ARM_DOTPROD},
#endif
#endif
    {&ffn_kernel_f32_portable, 0},
    {&ffn_kernel_bf16_portable, 0},
    {&ffn_kernel_f16_portable, 0},
    QROWS(portable, 0),
    {&ffn_kernel_w8a8_portable, 0},
    {&ffn_kernel_f32_ref, 0},
    {&ffn_kernel_bf16_ref, 0},
    {&ffn_kernel_f16_ref, 0},
    {&ffn_kernel_w8a32_ref, 0},
    {&ffn_kernel_w8a16_ref, 0},
    {&ffn_kernel_w8a8_ref, 0},
    {&ffn_kernel_w4a32_ref, 0},
    {&ffn_kernel_w4a16_ref, 0},
};
enum { N_ROWS = sizeof table / sizeof table[0] };

/* Rows passed over on a CPU of some tuning (ffn_tuning: bit t), where the next row measured
 * faster there. */
static const struct {
    const ffn_kernel *k;
    unsigned tunings;
} avoided[] = {
#if defined(FFN_HAVE_AVX512_BF16)
    /* VDPBF16PS issues at half the FMA rate on SPR/EMR-class Xeons: there the AVX-512
     * VPERMPS kernel ran W4A16 decode 1.01-1.09x and prefill 1.3-1.6x faster */
    {&ffn_kernel_w4a16_avx512bf16, 1u << FFN_TUNING_INTEL},
    /* and the bf16 GEMM tile on VDPBF16PS ran prefill at 0.61-0.64x the AVX-512 kernel's
     * (widening bf16 to fp32 FMAs) at T = 64, 192 and 512, won 1.12-1.17x at T = 16 and tied
     * at decode (2 threads; BENCHMARKS.md): prefill is where the FLOPs are. The
     * calibrated bf16 roof follows the kernel's ISA (the fp32 FMA peak then). */
    {&ffn_kernel_bf16_avx512bf16, 1u << FFN_TUNING_INTEL},
#endif
    {NULL, 0},
};

bool ffn_kernel_avoided(const ffn_kernel *k, ffn_tuning t)
{
    for (size_t i = 0; avoided[i].k; i++)
        if (avoided[i].k == k && ((avoided[i].tunings >> (unsigned)t) & 1u)) return true;
    return false;
}

/* ---- queries ------------------------------------------------------------------------------ */

/* A diagnostic with no file position (base/error.c's ffn_diag_set). */
#define diag(dg, err, ...) ffn_diag_set((dg), (err), NULL, 0, 0, __VA_ARGS__)

unsigned ffn_kernel_stream_rows(const ffn_kernel *k)
{
    if (!k) return 0;
    return k->impl ? ffn__drv_stream_rows((const ffn__drv *)k->impl) : k->stream_rows;
}

ffn_dtype ffn_kernel_cdtype(const ffn_kernel *k, const ffn_kshape *s)
{
    if (!k) return FFN_DT_FP32;
    if (k->adtype == FFN_DT_INT8) return FFN_DT_INT8;
    if (k->wdtype == FFN_DT_BF16 || k->wdtype == FFN_DT_FP16) return k->wdtype;
    const ffn_kshape sym = {.zero_point = false};
    if (k->impl && ffn__drv_bf16_pairs((const ffn__drv *)k->impl, s ? s : &sym))
        return FFN_DT_BF16; /* code pairs on VDPBF16PS, decode and prefill */
    return FFN_DT_FP32;
}

uint64_t ffn_isa_requires(ffn_isa isa)
{
    return (unsigned)isa < FFN_ISA_COUNT ? levels[isa].requires : 0;
}

uint64_t ffn_isa_allows(ffn_isa isa)
{
    return (unsigned)isa < FFN_ISA_COUNT ? levels[isa].allows : 0;
}

bool ffn_isa_built(ffn_isa isa)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (table[i].k->isa == isa) return true;
    return false;
}

bool ffn_isa_available(ffn_isa isa)
{
    if ((unsigned)isa >= FFN_ISA_COUNT || !ffn_isa_built(isa)) return false;
    return (levels[isa].requires & ~ffn_cpu_features()) == 0;
}

size_t ffn_isa_usable_list(char *buf, size_t n)
{
    size_t len = 0;
    if (buf && n) buf[0] = '\0';
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        if (ffn_isa_available((ffn_isa)i))
            len = ffn__list_add(buf, n, len, ffn_isa_name((ffn_isa)i));
    return len;
}

/* The highest available level: the one whose requirements are the largest set this CPU meets. */
static ffn_isa highest_level(void)
{
    ffn_isa best = FFN_ISA_PORTABLE;
    int best_bits = -1;
    for (int i = FFN_ISA_PORTABLE; i < FFN_ISA_COUNT; i++) {
        if (!ffn_isa_available((ffn_isa)i)) continue;
        const int bits = __builtin_popcountll(levels[i].requires);
        if (bits > best_bits) {
            best = (ffn_isa)i;
            best_bits = bits;
        }
    }
    return best;
}

static struct {
    ffn_isa level;
    int rc;
    ffn_diag dg;
} sel;
static pthread_once_t sel_once = PTHREAD_ONCE_INIT;

static void select_level(void)
{
    const char *env = getenv("FFNROOF_ISA");
    char usable[160];
    ffn_isa_usable_list(usable, sizeof usable);
    sel.level = highest_level();
    const char *tenv = ffn__tuning_bad_env();
    if (tenv) {
        sel.rc = diag(&sel.dg, FFN_EINVAL,
                      "FFNROOF_TUNING='%s' is not a tuning name: default or intel", tenv);
        return;
    }
    if (!env || !*env || !strcasecmp(env, "auto")) return;
    ffn_isa lv;
    if (ffn_isa_parse(env, &lv)) {
        sel.rc = diag(&sel.dg, FFN_EINVAL,
                      "FFNROOF_ISA='%.64s' is not an ISA name; this CPU runs: %s", env, usable);
        return;
    }
    if (!ffn_isa_available(lv)) {
        char miss[128];
        ffn_cpu_feature_list(levels[lv].requires & ~ffn_cpu_features(), miss, sizeof miss);
        if (!ffn_isa_built(lv))
            sel.rc = diag(&sel.dg, FFN_EUNSUPPORTED,
                          "FFNROOF_ISA=%s: not built into this binary; this CPU runs: %s",
                          ffn_isa_name(lv), usable);
        else
            sel.rc =
                diag(&sel.dg, FFN_EUNSUPPORTED, "FFNROOF_ISA=%s: this CPU lacks %s; it runs: %s",
                     ffn_isa_name(lv), miss, usable);
        return;
    }
    sel.level = lv;
}

int ffn_isa_selected(ffn_isa *out, ffn_diag *dg)
{
    pthread_once(&sel_once, select_level);
    if (out) *out = sel.level;
    if (sel.rc && dg) *dg = sel.dg;
    return sel.rc;
}

size_t ffn_kernel_table(const ffn_kernel **out, uint64_t *requires, size_t n)
{
    for (size_t i = 0; i < N_ROWS && i < n; i++) {
        if (out) out[i] = table[i].k;
        if (requires) requires[i] = table[i].requires;
    }
    return N_ROWS;
}

uint64_t ffn_kernel_requires(const ffn_kernel *k)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (table[i].k == k) return table[i].requires;
    return 0;
}

static bool runs(const row *r)
{
    return (r->requires & ~ffn_cpu_features()) == 0;
}

size_t ffn_kernel_list(const ffn_kernel **out, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        if (!runs(&table[i])) continue;
        if (out && count < n) out[count] = table[i].k;
        count++;
    }
    return count;
}

int ffn_kernel_get(ffn_isa isa, ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *dg)
{
    return ffn_kernel_get_q(isa, wdtype, FFN_DT_FP32, out, dg);
}

int ffn_kernel_get_q(ffn_isa isa, ffn_dtype wdtype, ffn_dtype adtype, const ffn_kernel **out,
                     ffn_diag *dg)
{
    if (!out || (unsigned)isa >= FFN_ISA_COUNT || (unsigned)wdtype >= FFN_DT_COUNT ||
        (unsigned)adtype >= FFN_DT_COUNT)
        return diag(dg, FFN_EINVAL, "invalid isa or dtype");
    *out = NULL;
    if (!ffn_isa_available(isa)) {
        char miss[128], usable[160];
        ffn_cpu_feature_list(levels[isa].requires & ~ffn_cpu_features(), miss, sizeof miss);
        ffn_isa_usable_list(usable, sizeof usable);
        if (!ffn_isa_built(isa))
            return diag(dg, FFN_EUNSUPPORTED, "isa '%s' is not built into this binary; usable: %s",
                        ffn_isa_name(isa), usable);
        return diag(dg, FFN_EUNSUPPORTED,
                    "isa '%s' is not available on this CPU/OS (lacks %s); usable: %s",
                    ffn_isa_name(isa), miss, usable);
    }
    return ffn_kernel_for_features_q(ffn_cpu_features(), isa, wdtype, adtype, out, dg);
}

int ffn_kernel_for_features(uint64_t features, ffn_isa isa, ffn_dtype wdtype,
                            const ffn_kernel **out, ffn_diag *dg)
{
    return ffn_kernel_for_features_q(features, isa, wdtype, FFN_DT_FP32, out, dg);
}

int ffn_kernel_for_features_q(uint64_t features, ffn_isa isa, ffn_dtype wdtype, ffn_dtype adtype,
                              const ffn_kernel **out, ffn_diag *dg)
{
    return ffn_kernel_for_cpu_q(features, ffn_cpu_tuning(), isa, wdtype, adtype, out, dg);
}

int ffn_kernel_for_cpu_q(uint64_t features, ffn_tuning t, ffn_isa isa, ffn_dtype wdtype,
                         ffn_dtype adtype, const ffn_kernel **out, ffn_diag *dg)
{
    if (!out || (unsigned)isa >= FFN_ISA_COUNT || (unsigned)wdtype >= FFN_DT_COUNT ||
        (unsigned)adtype >= FFN_DT_COUNT)
        return diag(dg, FFN_EINVAL, "invalid isa or dtype");
    *out = NULL;
    const uint64_t cap = features & levels[isa].allows;
    for (size_t i = 0; i < N_ROWS; i++) {
        const row *r = &table[i];
        if (r->k->wdtype != wdtype || r->k->adtype != adtype) continue;
        if (isa == FFN_ISA_REF ? r->k->isa != FFN_ISA_REF : r->k->isa == FFN_ISA_REF) continue;
        if ((r->requires & ~cap) != 0 || ffn_kernel_avoided(r->k, t)) continue;
        *out = r->k;
        return 0;
    }
    const char *wn = ffn_dtype_name(wdtype) ? ffn_dtype_name(wdtype) : "?";
    if (adtype == FFN_DT_FP32)
        return diag(dg, FFN_EUNSUPPORTED, "no kernel for %s weights at isa '%s' or below", wn,
                    ffn_isa_name(isa));
    return diag(dg, FFN_EUNSUPPORTED,
                "no kernel for %s weights with %s activations at isa '%s' or below", wn,
                ffn_dtype_name(adtype) ? ffn_dtype_name(adtype) : "?", ffn_isa_name(isa));
}

/* The choice per dtype, made once. */
static struct {
    const ffn_kernel *k;
    int rc;
    ffn_diag dg;
} best[FFN_DT_COUNT];
static pthread_once_t best_once = PTHREAD_ONCE_INIT;

static void choose_best(void)
{
    ffn_isa lv;
    ffn_diag dg;
    const int rc = ffn_isa_selected(&lv, &dg);
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        if (rc) {
            best[dt].rc = rc;
            best[dt].dg = dg;
            continue;
        }
        best[dt].rc = ffn_kernel_get(lv, (ffn_dtype)dt, &best[dt].k, &best[dt].dg);
    }
}

int ffn_kernel_best(ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *dg)
{
    if (!out || (unsigned)wdtype >= FFN_DT_COUNT) return diag(dg, FFN_EINVAL, "invalid dtype");
    pthread_once(&best_once, choose_best);
    *out = best[wdtype].k;
    if (best[wdtype].rc && dg) *dg = best[wdtype].dg;
    return best[wdtype].rc;
}

int ffn_kernel_best_q(ffn_dtype wdtype, ffn_dtype adtype, const ffn_kernel **out, ffn_diag *dg)
{
    if (!out || (unsigned)wdtype >= FFN_DT_COUNT || (unsigned)adtype >= FFN_DT_COUNT)
        return diag(dg, FFN_EINVAL, "invalid dtype");
    if (adtype == FFN_DT_FP32) return ffn_kernel_best(wdtype, out, dg);
    *out = NULL;
    ffn_isa lv;
    const int rc = ffn_isa_selected(&lv, dg);
    return rc ? rc : ffn_kernel_get_q(lv, wdtype, adtype, out, dg);
}
