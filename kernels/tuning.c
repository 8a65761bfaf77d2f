/* The CPU's tuning (include/ffnroof/kernels.h, ffn_tuning): which of two measured kernel designs
 * it gets, from the CPUID vendor or FFNROOF_TUNING, detected once; tests and side-by-side
 * benchmarks may override it. */
#include "kern_internal.h"
#include "driver/ukernel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static const char *const names[FFN_TUNING_COUNT] = {"default", "intel"};
static const char *const what[FFN_TUNING_COUNT] = {
    "one-row decode streams in memory order",
    "one-row decode streams as four quarters of K, bf16 and W4A16 off VDPBF16PS"};

const char *ffn_tuning_name(ffn_tuning t)
{
    return (unsigned)t < FFN_TUNING_COUNT ? names[t] : NULL;
}

const char *ffn_tuning_what(ffn_tuning t)
{
    return (unsigned)t < FFN_TUNING_COUNT ? what[t] : NULL;
}

int ffn_tuning_parse(const char *s, ffn_tuning *out)
{
    for (int i = 0; s && i < FFN_TUNING_COUNT; i++)
        if (!strcasecmp(s, names[i])) {
            if (out) *out = (ffn_tuning)i;
            return 0;
        }
    return FFN_EINVAL;
}

static _Atomic int g_tuning = -1; /* the override, else the detected value after once */
static ffn_tuning g_detected;
static char g_source[48] = "the default";
static char g_bad_env[65]; /* an FFNROOF_TUNING that names no tuning, "" otherwise */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void detect(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, v[3];
    if (__get_cpuid(0, &a, &v[0], &v[2], &v[1])) { /* EBX, EDX, ECX: "Genu" "ineI" "ntel" */
        char vendor[13];
        memcpy(vendor, v, 12);
        vendor[12] = '\0';
        snprintf(g_source, sizeof g_source, "CPUID vendor %s", vendor);
        if (!strcmp(vendor, "GenuineIntel")) g_detected = FFN_TUNING_INTEL;
    }
#endif
    const char *env = getenv("FFNROOF_TUNING");
    ffn_tuning t;
    if (env && *env && ffn_tuning_parse(env, &t) == 0) {
        g_detected = t;
        snprintf(g_source, sizeof g_source, "FFNROOF_TUNING");
    } else if (env && *env) {
        snprintf(g_bad_env, sizeof g_bad_env, "%s", env);
    }
    int unset = -1;
    atomic_compare_exchange_strong(&g_tuning, &unset, (int)g_detected);
}

ffn_tuning ffn_cpu_tuning(void)
{
    pthread_once(&g_once, detect);
    return (ffn_tuning)atomic_load_explicit(&g_tuning, memory_order_relaxed);
}

const char *ffn_cpu_tuning_source(void)
{
    pthread_once(&g_once, detect);
    return g_source;
}

void ffn_cpu_tuning_set(ffn_tuning t)
{
    pthread_once(&g_once, detect);
    if ((unsigned)t < FFN_TUNING_COUNT) atomic_store(&g_tuning, (int)t);
}

const char *ffn__tuning_bad_env(void)
{
    pthread_once(&g_once, detect);
    return g_bad_env[0] ? g_bad_env : NULL;
}

bool ffn__decode_split(void)
{
    return ffn_cpu_tuning() == FFN_TUNING_INTEL;
}
