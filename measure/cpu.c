/* CPU discovery for ffn_measure: which vector/matrix extensions the CPU implements and the OS has
 * enabled (CPUID + XCR0 on x86-64, AT_HWCAP on aarch64), and what the host says about itself
 * (host name, model string, sysfs cache sizes, memory). BLIS-style: an extension counts only when
 * both the CPU and the OS support it, because executing AVX-512 with the ZMM state disabled in
 * XCR0 faults. */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "ffnroof/measure.h"
#include "internal.h"

void ffn__appendf(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || n == 0) return;
    const size_t len = strnlen(buf, n);
    if (len + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

static ffn_cpu_caps g_caps;
static pthread_once_t g_caps_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

static void detect_caps(void)
{
    ffn_cpu_caps c;
    memset(&c, 0, sizeof c);
#if defined(__x86_64__)
    c.x86_64 = true;
    unsigned a, b, cx, d;
    if (!__get_cpuid(1, &a, &b, &cx, &d)) goto out;
    const bool osxsave = (cx >> 27) & 1, avx = (cx >> 28) & 1, fma = (cx >> 12) & 1;
    if (!osxsave) goto out;
    const uint64_t xcr0 = xgetbv0();
    const bool os_avx = (xcr0 & 0x6) == 0x6;
    const bool os_avx512 = os_avx && (xcr0 & 0xE0) == 0xE0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    const bool os_amx = (xcr0 & 0x60000) == 0x60000;        /* XTILECFG, XTILEDATA */
    c.fma = os_avx && avx && fma;
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 7) goto out;
    __cpuid_count(7, 0, a, b, cx, d);
    const unsigned sub1_max = a;
    c.avx512f = os_avx512 && ((b >> 16) & 1);
    c.avx512_vnni = c.avx512f && ((cx >> 11) & 1);
    c.avx512_fp16 = c.avx512f && ((d >> 23) & 1);
    const bool amx_tile = (d >> 24) & 1;
    c.amx_bf16 = os_amx && amx_tile && ((d >> 22) & 1);
    c.amx_int8 = os_amx && amx_tile && ((d >> 25) & 1);
    if (sub1_max >= 1) {
        __cpuid_count(7, 1, a, b, cx, d);
        c.avx512_bf16 = c.avx512f && ((a >> 5) & 1);
    }
out:
#elif defined(__aarch64__)
    c.aarch64 = true;
    const unsigned long hw = getauxval(AT_HWCAP);
    c.neon = (hw >> 1) & 1;                   /* HWCAP_ASIMD */
    c.neon_fp16 = c.neon && ((hw >> 10) & 1); /* HWCAP_ASIMDHP */
#endif
    g_caps = c;
}

const ffn_cpu_caps *ffn_cpu_caps_get(void)
{
    pthread_once(&g_caps_once, detect_caps);
    return &g_caps;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] && isspace((unsigned char)s[i]))
        i++;
    if (i) memmove(s, s + i, n - i + 1);
}

/* First line of a small sysfs/procfs file into buf; 0 or -1. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    const bool ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    trim(buf);
    return 0;
}

/* "48K", "2048K", "480M" -> bytes (sysfs uses binary K/M/G). */
static double parse_size(const char *s)
{
    char *end;
    const double v = strtod(s, &end);
    switch (toupper((unsigned char)*end)) {
    case 'K':
        return v * 1024.0;
    case 'M':
        return v * 1024.0 * 1024.0;
    case 'G':
        return v * 1024.0 * 1024.0 * 1024.0;
    default:
        return v;
    }
}

/* Number of CPUs in a list like "0-3,8,10-11". */
static int count_cpu_list(const char *s)
{
    int count = 0;
    while (*s) {
        char *end;
        const long a = strtol(s, &end, 10);
        if (end == s) break;
        long b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            s = end;
        }
        if (b >= a) count += (int)(b - a + 1);
        if (*s == ',')
            s++;
        else
            break;
    }
    return count;
}

static void cpuinfo_field(const char *key, char *out, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    const size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                snprintf(out, n, "%s", colon + 1);
                trim(out);
                break;
            }
        }
    }
    fclose(f);
}

int ffn_host_info_get(ffn_host_info *h)
{
    if (!h) return FFN_EINVAL;
    memset(h, 0, sizeof *h);
    if (gethostname(h->host, sizeof h->host - 1) != 0) strcpy(h->host, "unknown");
    cpuinfo_field("model name", h->cpu_model, sizeof h->cpu_model);
    cpuinfo_field("vendor_id", h->cpu_vendor, sizeof h->cpu_vendor);
#if defined(__x86_64__)
    if (!h->cpu_model[0] && __get_cpuid_max(0x80000000, NULL) >= 0x80000004) {
        unsigned r[12];
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
        memcpy(h->cpu_model, r, 48);
        h->cpu_model[48] = '\0';
        trim(h->cpu_model);
    }
#elif defined(__aarch64__)
    if (!h->cpu_model[0]) {
        char part[32] = "", impl[32] = "";
        cpuinfo_field("CPU part", part, sizeof part);
        cpuinfo_field("CPU implementer", impl, sizeof impl);
        snprintf(h->cpu_model, sizeof h->cpu_model, "aarch64 implementer %s part %s", impl, part);
    }
#endif
    if (!h->cpu_model[0]) strcpy(h->cpu_model, "unknown");
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    h->online_cpus = online > 0 ? (int)online : 1;
    h->allowed_cpus = ffn__allowed_cpus();
    const long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) h->phys_mem_bytes = (double)pages * (double)psz;

    for (int i = 0; i < 16 && h->n_caches < FFN_MAX_SYSFS_CACHES; i++) {
        char path[128], buf[128];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (read_line(path, buf, sizeof buf) != 0) break;
        ffn_sysfs_cache *c = &h->caches[h->n_caches];
        c->level = atoi(buf);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (read_line(path, buf, sizeof buf) == 0) snprintf(c->type, sizeof c->type, "%.15s", buf);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (read_line(path, buf, sizeof buf) != 0) continue;
        c->size_bytes = parse_size(buf);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list",
                 i);
        if (read_line(path, buf, sizeof buf) == 0) c->shared_cpus = count_cpu_list(buf);
        h->n_caches++;
    }
    return 0;
}

double ffn_host_llc_bytes(const ffn_host_info *h)
{
    double best = 0;
    int best_level = 0;
    if (!h) return 0;
    for (int i = 0; i < h->n_caches; i++) {
        const ffn_sysfs_cache *c = &h->caches[i];
        if (strcmp(c->type, "Instruction") == 0) continue;
        if (c->level > best_level || (c->level == best_level && c->size_bytes > best)) {
            best_level = c->level;
            best = c->size_bytes;
        }
    }
    return best;
}
