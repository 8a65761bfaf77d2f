/* CPU discovery for ffn_measure: which vector/matrix extensions the CPU implements and the OS has
 * enabled (CPUID + XCR0 on x86-64, AT_HWCAP on aarch64), and what the host says about itself
 * (host name, model string, cache sizes from sysfs or else CPUID, memory). The extensions come from
 * the kernel wing's ffn_cpu_features() (an extension counts only when both the CPU and the OS
 * support it). */
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
#endif

#include "ffnroof/kernels.h"
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

/* The kernel wing's detection (kernels/cpu.c: CPUID + XCR0, HWCAP, the AMX permission) is the
 * one source; this is its view in the calibration's terms, so a probe and the kernels never
 * disagree about what the CPU runs. */
static void detect_caps(void)
{
    const uint64_t m = ffn_cpu_features();
    ffn_cpu_caps c;
    memset(&c, 0, sizeof c);
#if defined(__x86_64__)
    c.x86_64 = true;
#elif defined(__aarch64__)
    c.aarch64 = true;
#endif
    c.fma = m & FFN_CPU_AVX2;
    c.avx512f = m & FFN_CPU_AVX512;
    c.avx512_bf16 = m & FFN_CPU_AVX512_BF16;
    c.avx512_vnni = m & FFN_CPU_AVX512_VNNI;
    c.avx512_fp16 = m & FFN_CPU_AVX512_FP16;
    c.amx_bf16 = m & FFN_CPU_AMX_BF16;
    c.amx_int8 = m & FFN_CPU_AMX_INT8;
    c.neon = m & FFN_CPU_NEON;
    c.neon_fp16 = m & FFN_CPU_ARM_FP16;
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
    if (h->n_caches > 0)
        snprintf(h->cache_source, sizeof h->cache_source, "sysfs");
    else if ((h->n_caches = ffn_cpuid_caches_host(h->caches, FFN_MAX_SYSFS_CACHES)) > 0)
        snprintf(h->cache_source, sizeof h->cache_source, "CPUID");
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
