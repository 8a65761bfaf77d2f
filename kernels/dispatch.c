/* Run-time choice of the dense FFN kernel: which ISAs this CPU and OS can run (CPUID + xgetbv
 * on x86, HWCAP on AArch64), the table of every kernel built into ffn_kernels, and the best
 * kernel per weight dtype, chosen once (pthread_once) and overridable with
 * FFNROOF_ISA=ref|avx512|neon. Like BLIS's context, the reference kernels are always present
 * and the ISA kernels only override what they improve. */
/* syscall() (for arch_prctl) is a GNU/BSD extension, outside _POSIX_C_SOURCE. */
#define _DEFAULT_SOURCE 1

#include "kern_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#if defined(FFN_HAVE_AVX512)
#include "x86_avx512/ffn_avx512.h"
#endif
#if defined(__aarch64__) && defined(FFN_HAVE_NEON)
#include "arm_neon/ffn_neon.h"
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* Best first within each (isa, dtype): ffn_kernel_get returns the first usable match. */
static const ffn_kernel *const all_kernels[] = {
#if defined(FFN_HAVE_AVX512)
    &ffn_kernel_f32_avx512, &ffn_kernel_bf16_avx512_amx, &ffn_kernel_bf16_avx512,
#endif
#if defined(__aarch64__) && defined(FFN_HAVE_NEON)
    &ffn_kernel_f32_neon,   &ffn_kernel_f16_neon,
#endif
    &ffn_kernel_f32_ref,    &ffn_kernel_bf16_ref,        &ffn_kernel_f16_ref,
};
enum { N_KERNELS = sizeof all_kernels / sizeof all_kernels[0] };

static struct {
    bool avx512;      /* F, BW, VL, DQ + FMA, and the OS saves opmask/zmm state */
    bool avx512_bf16; /* + AVX512_BF16 */
    bool amx_bf16;    /* + AMX-TILE, AMX-BF16, OS tile state and the Linux permission granted */
    bool neon;
} cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

static void detect_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u;
    if (!osxsave || __get_cpuid_max(0, NULL) < 7) return;
    const uint64_t xcr0 = xgetbv0();
    /* XCR0 bits 1,2 (SSE, AVX state) and 5,6,7 (opmask, ZMM_Hi256, Hi16_ZMM). */
    const bool os_zmm = (xcr0 & 0xe6u) == 0xe6u;
    __cpuid_count(7, 0, a, b, c, d);
    const bool f = (b >> 16) & 1u, dq = (b >> 17) & 1u, bw = (b >> 30) & 1u, vl = (b >> 31) & 1u;
    const bool amx_bf16 = (d >> 22) & 1u, amx_tile = (d >> 24) & 1u;
    __cpuid_count(7, 1, a, b, c, d);
    const bool bf16 = (a >> 5) & 1u;
    cpu.avx512 = os_zmm && fma && f && dq && bw && vl;
    cpu.avx512_bf16 = cpu.avx512 && bf16;
    /* XCR0 bits 17, 18: XTILECFG and XTILEDATA; Linux also wants a per-process permission
     * (ARCH_REQ_XCOMP_PERM = 0x1023 for XFEATURE_XTILEDATA = 18) before the first tile use. */
    bool os_amx = (xcr0 & 0x60000u) == 0x60000u;
#if defined(__x86_64__) && defined(__linux__)
    if (os_amx) os_amx = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
    os_amx = false;
#endif
    cpu.amx_bf16 = cpu.avx512_bf16 && amx_bf16 && amx_tile && os_amx;
#elif defined(__aarch64__)
#if defined(__linux__)
    cpu.neon = (getauxval(AT_HWCAP) & (1ul << 1)) != 0; /* HWCAP_ASIMD */
#else
    cpu.neon = true; /* Advanced SIMD is mandatory in AArch64 */
#endif
#endif
}

bool ffn_isa_available(ffn_isa isa)
{
    pthread_once(&cpu_once, detect_cpu);
    switch (isa) {
    case FFN_ISA_REF:
        return true;
    case FFN_ISA_AVX512:
        return cpu.avx512;
    case FFN_ISA_NEON:
        return cpu.neon;
    default:
        return false;
    }
}

static const char *const isa_names[FFN_ISA_COUNT] = {"ref", "avx512", "neon"};

const char *ffn_isa_name(ffn_isa isa)
{
    return (unsigned)isa < FFN_ISA_COUNT ? isa_names[isa] : NULL;
}

int ffn_isa_parse(const char *s, ffn_isa *out)
{
    if (!s || !out) return FFN_EINVAL;
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        if (strcasecmp(s, isa_names[i]) == 0) {
            *out = (ffn_isa)i;
            return 0;
        }
    return FFN_EINVAL;
}

/* Whether this CPU can run k (its ISA plus any extension beyond the ISA's base set). */
static bool usable(const ffn_kernel *k)
{
    if (!ffn_isa_available(k->isa)) return false;
#if defined(FFN_HAVE_AVX512)
    if (k == &ffn_kernel_bf16_avx512) return cpu.avx512_bf16;
    if (k == &ffn_kernel_bf16_avx512_amx) return cpu.amx_bf16;
#endif
    return true;
}

size_t ffn_kernel_list(const ffn_kernel **out, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < N_KERNELS; i++) {
        if (!usable(all_kernels[i])) continue;
        if (out && count < n) out[count] = all_kernels[i];
        count++;
    }
    return count;
}

/* ffn_diag_set without linking ffn_sim (kernels depend on nothing but libc). */
static int diag(ffn_diag *dg, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int diag(ffn_diag *dg, int err, const char *fmt, ...)
{
    if (!dg) return err;
    memset(dg, 0, sizeof *dg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dg->msg, sizeof dg->msg, fmt, ap);
    va_end(ap);
    return err;
}

static const char *dt_name(ffn_dtype dt)
{
    static const char *const names[FFN_DT_COUNT] = {"fp32", "tf32", "bf16", "fp16",
                                                    "fp8",  "int8", "int4"};
    return (unsigned)dt < FFN_DT_COUNT ? names[dt] : "?";
}

int ffn_kernel_get(ffn_isa isa, ffn_dtype wdtype, const ffn_kernel **out, ffn_diag *dg)
{
    if (!out || (unsigned)isa >= FFN_ISA_COUNT || (unsigned)wdtype >= FFN_DT_COUNT)
        return diag(dg, FFN_EINVAL, "invalid isa or dtype");
    *out = NULL;
    if (!ffn_isa_available(isa))
        return diag(dg, FFN_EUNSUPPORTED, "isa '%s' is not available on this CPU/OS%s",
                    isa_names[isa],
                    isa == FFN_ISA_AVX512 ? " (needs AVX-512 F/BW/VL/DQ, FMA, OS zmm state)" : "");
    bool built = false;
    for (size_t i = 0; i < N_KERNELS; i++) {
        const ffn_kernel *k = all_kernels[i];
        if (k->isa != isa || k->wdtype != wdtype) continue;
        built = true;
        if (usable(k)) {
            *out = k;
            return 0;
        }
    }
    if (built)
        return diag(dg, FFN_EUNSUPPORTED,
                    "the %s kernel for %s weights needs a CPU extension this CPU lacks",
                    isa_names[isa], dt_name(wdtype));
    return diag(dg, FFN_EUNSUPPORTED, "no %s kernel for %s weights in this build", isa_names[isa],
                dt_name(wdtype));
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
    const char *env = getenv("FFNROOF_ISA");
    ffn_isa forced = FFN_ISA_COUNT;
    int env_rc = 0;
    if (env && *env && ffn_isa_parse(env, &forced)) env_rc = FFN_EINVAL;
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        if (env_rc) {
            best[dt].rc = diag(&best[dt].dg, FFN_EINVAL,
                               "FFNROOF_ISA='%.64s' is not one of ref, avx512, neon", env);
            continue;
        }
        if (forced != FFN_ISA_COUNT) {
            best[dt].rc = ffn_kernel_get(forced, (ffn_dtype)dt, &best[dt].k, &best[dt].dg);
            if (best[dt].rc)
                snprintf(best[dt].dg.msg + strlen(best[dt].dg.msg),
                         sizeof best[dt].dg.msg - strlen(best[dt].dg.msg), " (FFNROOF_ISA=%.16s)",
                         env);
            continue;
        }
        best[dt].rc = diag(&best[dt].dg, FFN_EUNSUPPORTED, "no kernel for %s weights",
                           dt_name((ffn_dtype)dt));
        for (size_t i = 0; i < N_KERNELS; i++)
            if (all_kernels[i]->wdtype == (ffn_dtype)dt && usable(all_kernels[i])) {
                best[dt].k = all_kernels[i];
                best[dt].rc = 0;
                break;
            }
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
