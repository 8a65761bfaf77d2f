/* Criterion tests of AArch64 kernel dispatch (kernels/registry.c, kernels/cpu.c): an SVE CPU
 * gets the SVE kernels for every weight dtype (bf16: the BFDOT tiles when it also has FEAT_BF16
 * and the binary holds them), a NEON-only CPU the NEON ones, FFNROOF_ISA=neon on an SVE CPU the
 * NEON ones, and the SVE kernels' panel width follows the vector length (nr = 3 vectors of
 * VL/32 lanes: 12, 24, 48 columns at 128, 256, 512 bits). The numerical
 * checks of these kernels are test_kernels' (every kernel in ffn_kernel_list against the
 * reference). Off AArch64 only dispatch_for_arm_cpu_classes could run, and it needs the Arm
 * kernels in the binary, so every test skips.
 *
 * .ci/aarch64.sh runs this under qemu-aarch64 CPUs of each kind and sets FFNROOF_EXPECT_SVE_VL
 * (the vector length in bytes it asked qemu for, 0 for a CPU without SVE), so the suite also
 * proves the emulated CPU is the one asked for: a qemu that ignored the option would otherwise
 * pass every test here by skipping the SVE ones. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/kernels.h"

static const ffn_dtype wdtypes[] = {FFN_DT_FP32, FFN_DT_BF16, FFN_DT_FP16};

static bool has(uint64_t bit)
{
    return (ffn_cpu_features() & bit) != 0;
}

static void skip_unless_aarch64(void)
{
#if !defined(__aarch64__)
    cr_skip_test("not an AArch64 build");
#endif
    if (!has(FFN_CPU_NEON)) cr_skip_test("the CPU reports no Advanced SIMD");
}

#define SVEBF16 "bf16_ffn__svebf16_8x32"

/* Whether this binary holds the kernel named name. */
static bool built(const char *name)
{
    const ffn_kernel *ks[64];
    const size_t n = ffn_kernel_table(ks, NULL, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (!strcmp(ks[i]->name, name)) return true;
    return false;
}

/* The tile tag the best kernel of dt has at level isa on this CPU. */
static const char *tag_of(ffn_isa isa, ffn_dtype dt)
{
    if (isa == FFN_ISA_NEON) return "__neon_8x12";
    if (dt == FFN_DT_BF16 && has(FFN_CPU_ARM_BF16) && built(SVEBF16)) return "__svebf16_8x32";
    return "__sve_8x3vl";
}

/* Every dtype's best kernel is of isa, with the tile tag in its name. */
static void expect_best(ffn_isa isa)
{
    for (size_t i = 0; i < sizeof wdtypes / sizeof wdtypes[0]; i++) {
        const ffn_kernel *k = NULL;
        ffn_diag dg;
        cr_assert_eq(ffn_kernel_best(wdtypes[i], &k, &dg), 0, "%s", dg.msg);
        cr_assert_eq(k->isa, isa, "%s weights: got %s, want a %s kernel",
                     ffn_dtype_name(wdtypes[i]), k->name, ffn_isa_name(isa));
        const char *tag = tag_of(isa, wdtypes[i]);
        cr_assert(strstr(k->name, tag) != NULL, "%s is not a %s kernel", k->name, tag);
    }
}

Test(kernels_arm, an_aarch64_build_holds_neon_and_sve_kernels)
{
    skip_unless_aarch64();
    cr_assert(ffn_isa_built(FFN_ISA_NEON), "the NEON folder did not build");
    cr_assert(ffn_isa_built(FFN_ISA_SVE), "the SVE folder did not build (compiler lacks +sve?)");
    cr_assert(ffn_isa_available(FFN_ISA_NEON), "every AArch64 CPU runs the NEON level");
    cr_assert_eq(ffn_isa_available(FFN_ISA_SVE), has(FFN_CPU_SVE));
}

Test(kernels_arm, the_cpu_is_the_one_ci_asked_for)
{
    skip_unless_aarch64();
    const char *want = getenv("FFNROOF_EXPECT_SVE_VL");
    if (!want || !*want) cr_skip_test("FFNROOF_EXPECT_SVE_VL is not set (.ci/aarch64.sh sets it)");
    const size_t vl = ffn_cpu_sve_vl_bytes();
    cr_assert_eq(vl, (size_t)strtoul(want, NULL, 10), "SVE vector length %zu bytes, CI asked %s",
                 vl, want);
    cr_assert_eq(has(FFN_CPU_SVE), vl != 0);
}

Test(kernels_arm, a_neon_only_cpu_gets_the_neon_kernels)
{
    skip_unless_aarch64();
    if (has(FFN_CPU_SVE)) cr_skip_test("this CPU has SVE (see the SVE tests)");
    if (getenv("FFNROOF_ISA"))
        cr_skip_test("FFNROOF_ISA is set: the uncapped choice is not tested");
    expect_best(FFN_ISA_NEON);
}

Test(kernels_arm, an_sve_cpu_gets_the_sve_kernels)
{
    skip_unless_aarch64();
    if (!has(FFN_CPU_SVE)) cr_skip_test("this CPU has no SVE");
    if (getenv("FFNROOF_ISA"))
        cr_skip_test("FFNROOF_ISA is set: the uncapped choice is not tested");
    expect_best(FFN_ISA_SVE);
}

/* Criterion runs every test in its own process, so the once-only choice sees this setenv. */
Test(kernels_arm, ffnroof_isa_neon_on_an_sve_cpu_gives_the_neon_kernels)
{
    skip_unless_aarch64();
    if (!has(FFN_CPU_SVE)) cr_skip_test("this CPU has no SVE");
    setenv("FFNROOF_ISA", "neon", 1);
    expect_best(FFN_ISA_NEON);
    ffn_isa lv;
    cr_assert_eq(ffn_isa_selected(&lv, NULL), 0);
    cr_assert_eq(lv, FFN_ISA_NEON);
}

Test(kernels_arm, ffnroof_isa_sve_on_a_neon_only_cpu_is_an_error)
{
    skip_unless_aarch64();
    if (has(FFN_CPU_SVE)) cr_skip_test("this CPU has SVE");
    setenv("FFNROOF_ISA", "sve", 1);
    const ffn_kernel *k = NULL;
    ffn_diag dg;
    cr_assert_eq(ffn_kernel_best(FFN_DT_FP32, &k, &dg), FFN_EUNSUPPORTED);
    cr_assert(strstr(dg.msg, "sve") != NULL && strstr(dg.msg, "neon") != NULL, "diag: %s", dg.msg);
}

/* The panel width nr of a kernel, from its packed size: for d a multiple of nr and f = 8 <= nr
 * (relu: one up panel of d rows, d/nr down panels of 8 rows), the weights take d nr es + 8 d es
 * bytes (each a multiple of 64 for d = 192, so the panels' 64-byte rounding hides nothing), and
 * doubling d adds exactly that much. 192 is a multiple of every nr from 12 to 192. */
static size_t panel_width(const ffn_kernel *k)
{
    const size_t d = 192, es = k->wdtype == FFN_DT_FP32 ? 4 : 2;
    const ffn_kshape s1 = {.d = d, .f = 8, .act = FFN_ACT_RELU, .bias = false};
    const ffn_kshape s2 = {.d = 2 * d, .f = 8, .act = FFN_ACT_RELU, .bias = false};
    return (k->packed_bytes(&s2) - k->packed_bytes(&s1)) / (d * es) - 8;
}

Test(kernels_arm, the_sve_panel_width_follows_the_vector_length)
{
    skip_unless_aarch64();
    if (!has(FFN_CPU_SVE)) cr_skip_test("this CPU has no SVE");
    const size_t vl = ffn_cpu_sve_vl_bytes(), want = 3 * vl / 4;
    cr_assert_geq(vl, 16, "SVE vectors are at least 128 bits, got %zu bytes", vl);
    /* the fp32-schedule SVE rows (without BF16 the bf16 row is the widening one) */
    const uint64_t cpu = ffn_cpu_features() & ~(uint64_t)FFN_CPU_ARM_BF16;
    for (size_t i = 0; i < sizeof wdtypes / sizeof wdtypes[0]; i++) {
        const ffn_kernel *k = NULL;
        cr_assert_eq(ffn_kernel_for_features(cpu, FFN_ISA_SVE, wdtypes[i], &k, NULL), 0);
        cr_assert(strstr(k->name, "__sve_8x3vl") != NULL, "%s", k->name);
        cr_assert_eq(panel_width(k), want, "%s at %zu-bit vectors: nr %zu, want %zu", k->name,
                     vl * 8, panel_width(k), want);
    }
    const ffn_kernel *kn = NULL;
    cr_assert_eq(ffn_kernel_get(FFN_ISA_NEON, FFN_DT_FP32, &kn, NULL), 0);
    cr_assert_eq(panel_width(kn), 12, "the NEON tile is 8x12: nr %zu", panel_width(kn));
    cr_log_info("SVE %zu-bit: nr %zu", vl * 8, want);
}

/* Dispatch for Arm CPU classes as kernels/cpu.c would detect them (../shared/reference/cpus.md
 * lists each class's features), whatever this CPU is: only the binary must hold the kernels. */
static const char *pick_at(uint64_t features, ffn_isa lv, ffn_dtype dt)
{
    const ffn_kernel *k = NULL;
    if (ffn_kernel_for_features(features, lv, dt, &k, NULL)) return "none";
    return k->name;
}

Test(kernels_arm, dispatch_for_arm_cpu_classes)
{
    if (!ffn_isa_built(FFN_ISA_NEON) || !ffn_isa_built(FFN_ISA_SVE))
        cr_skip_test("this binary holds no NEON and SVE kernels (not an AArch64 build)");
    const uint64_t n1 = FFN_CPU_NEON | FFN_CPU_ARM_FP16 | FFN_CPU_ARM_DOTPROD;  /* Graviton2 */
    const uint64_t v1 = n1 | FFN_CPU_ARM_BF16 | FFN_CPU_ARM_I8MM | FFN_CPU_SVE; /* Graviton3 */
    const uint64_t v2 = v1 | FFN_CPU_SVE2;                                      /* Graviton4 */
    const uint64_t a64fx = FFN_CPU_NEON | FFN_CPU_ARM_FP16 | FFN_CPU_SVE;       /* no BF16 */
    for (size_t i = 0; i < sizeof wdtypes / sizeof wdtypes[0]; i++) {
        const ffn_dtype dt = wdtypes[i];
        const char *pre = dt == FFN_DT_FP32 ? "f32" : dt == FFN_DT_BF16 ? "bf16" : "f16";
        char neon[64], sve[64];
        snprintf(neon, sizeof neon, "%s_ffn__neon_8x12", pre);
        snprintf(sve, sizeof sve, "%s_ffn__sve_8x3vl", pre);
        const char *sve_bf16 = dt == FFN_DT_BF16 && built(SVEBF16) ? SVEBF16 : sve;
        cr_assert_str_eq(pick_at(n1, FFN_ISA_SVE, dt), neon, "Neoverse N1 runs NEON");
        cr_assert_str_eq(pick_at(v1, FFN_ISA_NEON, dt), neon, "the neon level caps SVE");
        cr_assert_str_eq(pick_at(v1, FFN_ISA_SVE, dt), sve_bf16, "Neoverse V1");
        cr_assert_str_eq(pick_at(v2, FFN_ISA_SVE, dt), sve_bf16, "Neoverse V2");
        cr_assert_str_eq(pick_at(a64fx, FFN_ISA_SVE, dt), sve, "SVE without BF16 widens bf16");
        cr_assert_str_eq(pick_at(FFN_CPU_SVE, FFN_ISA_SVE, dt), pick_at(0, FFN_ISA_SVE, dt),
                         "SVE without Advanced SIMD (an OS that hid ASIMD) gets portable");
    }
    cr_assert_eq(
        ffn_kernel_for_features(n1, FFN_ISA_AVX2, FFN_DT_FP32, &(const ffn_kernel *){0}, NULL), 0,
        "an x86 cap on an Arm CPU still finds the portable kernel");
}
