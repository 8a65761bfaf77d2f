/* What this CPU and OS can run, as a feature mask (include/ffnroof/kernels.h), detected once
 * under pthread_once. BLIS-style: a feature counts only when both the CPU implements it and the
 * OS saves its state (XCR0 on x86: executing AVX-512 with the ZMM state disabled faults; AMX also
 * needs Linux's per-process permission), so a VM that hides a state component gets the next
 * lower kernel instead of SIGILL.
 *  - x86-64: CPUID leaves 1 and 7 (subleaves 0 and 1) and XGETBV(0).
 *  - AArch64 Linux: AT_HWCAP / AT_HWCAP2 (asm/hwcap.h bit numbers, written out here so the
 *    build does not depend on the kernel headers' age), and the SVE vector length from
 *    prctl(PR_SVE_GET_VL). */
/* syscall() (for arch_prctl) and prctl are outside _POSIX_C_SOURCE. */
#define _DEFAULT_SOURCE 1

#include "kern_internal.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

static uint64_t g_features;
static size_t g_sve_vl;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static uint64_t detect_x86(void)
{
    uint64_t m = 0;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u,
               f16c = (c >> 29) & 1u;
    if (!osxsave || __get_cpuid_max(0, NULL) < 7) return 0;
    const uint64_t xcr0 = xgetbv0();
    const bool os_ymm = (xcr0 & 0x6u) == 0x6u;             /* SSE, AVX state */
    const bool os_zmm = os_ymm && (xcr0 & 0xe0u) == 0xe0u; /* opmask, ZMM_Hi256, Hi16_ZMM */
    bool os_amx = (xcr0 & 0x60000u) == 0x60000u;           /* XTILECFG, XTILEDATA */
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned sub_max = a;
    const bool avx2 = (b >> 5) & 1u, f = (b >> 16) & 1u, dq = (b >> 17) & 1u, bw = (b >> 30) & 1u,
               vl = (b >> 31) & 1u, vnni = (c >> 11) & 1u, fp16 = (d >> 23) & 1u,
               amx_bf16 = (d >> 22) & 1u, amx_tile = (d >> 24) & 1u, amx_int8 = (d >> 25) & 1u;
    bool bf16 = false, avx_vnni = false;
    if (sub_max >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        avx_vnni = (a >> 4) & 1u;
        bf16 = (a >> 5) & 1u;
    }
    if (os_ymm && avx && avx2 && fma && f16c) m |= FFN_CPU_AVX2;
    if ((m & FFN_CPU_AVX2) && avx_vnni) m |= FFN_CPU_AVX_VNNI;
    if ((m & FFN_CPU_AVX2) && os_zmm && f && dq && bw && vl) m |= FFN_CPU_AVX512;
    if ((m & FFN_CPU_AVX512) && vnni) m |= FFN_CPU_AVX512_VNNI;
    if ((m & FFN_CPU_AVX512) && bf16) m |= FFN_CPU_AVX512_BF16;
    if ((m & FFN_CPU_AVX512) && fp16) m |= FFN_CPU_AVX512_FP16;
        /* Linux wants a per-process permission (ARCH_REQ_XCOMP_PERM = 0x1023 for XFEATURE_XTILEDATA
         * = 18) before the first tile instruction. */
#if defined(__x86_64__) && defined(__linux__)
    if (os_amx && amx_tile) os_amx = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
    os_amx = false;
#endif
    if ((m & FFN_CPU_AVX512_BF16) && os_amx && amx_tile && amx_bf16) m |= FFN_CPU_AMX_BF16;
    if ((m & FFN_CPU_AVX512) && os_amx && amx_tile && amx_int8) m |= FFN_CPU_AMX_INT8;
    return m;
}
#endif

#if defined(__aarch64__)
static uint64_t detect_arm(size_t *sve_vl)
{
    uint64_t m = FFN_CPU_NEON; /* Advanced SIMD is mandatory in AArch64 (checked below) */
#if defined(__linux__)
    const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    if (!((hw >> 1) & 1ul)) m = 0;                         /* HWCAP_ASIMD */
    if (m && ((hw >> 10) & 1ul)) m |= FFN_CPU_ARM_FP16;    /* HWCAP_ASIMDHP */
    if (m && ((hw >> 20) & 1ul)) m |= FFN_CPU_ARM_DOTPROD; /* HWCAP_ASIMDDP */
    if (m && ((hw2 >> 14) & 1ul)) m |= FFN_CPU_ARM_BF16;   /* HWCAP2_BF16 */
    if (m && ((hw2 >> 13) & 1ul)) m |= FFN_CPU_ARM_I8MM;   /* HWCAP2_I8MM */
    if (m && ((hw >> 22) & 1ul)) {                         /* HWCAP_SVE */
        const int vl = prctl(51 /* PR_SVE_GET_VL */);
        if (vl > 0) {
            m |= FFN_CPU_SVE;
            *sve_vl = (size_t)(vl & 0xffff);         /* PR_SVE_VL_LEN_MASK */
            if ((hw2 >> 1) & 1ul) m |= FFN_CPU_SVE2; /* HWCAP2_SVE2 */
        }
    }
#else
    (void)sve_vl;
#endif
    return m;
}
#endif

static void detect(void)
{
#if defined(__x86_64__) || defined(__i386__)
    g_features = detect_x86();
#elif defined(__aarch64__)
    g_features = detect_arm(&g_sve_vl);
#endif
}

uint64_t ffn_cpu_features(void)
{
    pthread_once(&g_once, detect);
    return g_features;
}

size_t ffn_cpu_sve_vl_bytes(void)
{
    pthread_once(&g_once, detect);
    return g_sve_vl;
}

static const char *const feature_names[] = {
#define FFN_CPU_NAME(id, bit, name) [bit] = name,
    FFN_CPU_FEATURE_MAP(FFN_CPU_NAME)
#undef FFN_CPU_NAME
};

const char *ffn_cpu_feature_name(uint64_t bit)
{
    for (unsigned i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++)
        if (bit == (1ull << i)) return feature_names[i];
    return NULL;
}

size_t ffn_cpu_feature_list(uint64_t mask, char *buf, size_t n)
{
    size_t len = 0;
    if (buf && n) buf[0] = '\0';
    for (unsigned i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++) {
        if (!((mask >> i) & 1u) || !feature_names[i]) continue;
        len = ffn__list_add(buf, n, len, feature_names[i]);
    }
    return len;
}
