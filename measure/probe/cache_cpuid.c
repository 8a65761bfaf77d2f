/* The data caches as CPUID describes them, for hosts whose sysfs lists none: a Firecracker
 * microVM has no /sys/devices/system/cpu/cpu0/cache at all (a Zen 5 VM), and
 * without sizes calibrate could neither pair its plateaus with caches nor name them. In the
 * order the leaves are trusted:
 *  - leaf 4, Intel's deterministic cache parameters (Intel SDM vol. 2A, CPUID, "Deterministic
 *    Cache Parameters Leaf"): type, level, ways x partitions x line size x sets, and the most
 *    logical processors that can share one instance;
 *  - leaf 0x8000001D, AMD's cache topology (AMD APM vol. 3, "Function 8000_001Dh", with the
 *    TOPOEXT feature), laid out as leaf 4;
 *  - AMD's legacy leaves 0x80000005 (L1d: ECX[31:24] KiB) and 0x80000006 (L2: ECX[31:16] KiB;
 *    L3: EDX[31:18] x 512 KiB), which say nothing of sharing. A hypervisor may pass the whole
 *    socket's L3 through them (508 MiB on that Zen 5 VM, whose two vCPUs measure a 32-75 MiB
 *    L3): calibrate pairs by nearest size, so such an entry costs a note, not a wrong pairing.
 * The decoding takes a function that answers CPUID, so the tests feed it the registers of CPUs
 * we do not have (tests/test_plateau.c). */
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "ffnroof/measure.h"

enum { LEAF_MAX_SUB = 16 };

static void put(ffn_sysfs_cache *out, int cap, int *n, int level, int type, double bytes,
                int shared)
{
    static const char *const names[] = {"", "Data", "Instruction", "Unified"};
    if (*n >= cap || !(bytes > 0) || type < 1 || type > 3) return;
    ffn_sysfs_cache *c = &out[(*n)++];
    memset(c, 0, sizeof *c);
    c->level = level;
    snprintf(c->type, sizeof c->type, "%s", names[type]);
    c->size_bytes = bytes;
    c->shared_cpus = shared;
}

/* Leaf 4 and leaf 0x8000001D share one layout. */
static int deterministic(ffn_cpuid_fn fn, void *user, uint32_t leaf, ffn_sysfs_cache *out, int cap)
{
    int n = 0;
    for (uint32_t sub = 0; sub < LEAF_MAX_SUB; sub++) {
        uint32_t r[4] = {0, 0, 0, 0};
        fn(user, leaf, sub, r);
        const int type = (int)(r[0] & 31u);
        if (type == 0) break; /* no more caches */
        const double ways = (double)((r[1] >> 22) + 1),
                     parts = (double)(((r[1] >> 12) & 0x3ffu) + 1),
                     line = (double)((r[1] & 0xfffu) + 1), sets = (double)r[2] + 1.0;
        put(out, cap, &n, (int)((r[0] >> 5) & 7u), type, ways * parts * line * sets,
            (int)(((r[0] >> 14) & 0xfffu) + 1));
    }
    return n;
}

int ffn_cpuid_caches(ffn_cpuid_fn fn, void *user, ffn_sysfs_cache *out, int cap)
{
    if (!fn || !out || cap <= 0) return 0;
    uint32_t r[4] = {0, 0, 0, 0};
    fn(user, 0, 0, r);
    const uint32_t max_basic = r[0];
    int n = 0;
    if (max_basic >= 4) n = deterministic(fn, user, 4, out, cap);
    if (n > 0) return n;
    memset(r, 0, sizeof r);
    fn(user, 0x80000000u, 0, r);
    const uint32_t max_ext = r[0];
    /* an Intel CPU asked for an extended leaf above its maximum answers with its highest basic
     * leaf: only leaves at or below max_ext are read */
    if (max_ext < 0x80000000u || max_ext > 0x8fffffffu) return 0;
    if (max_ext >= 0x8000001Du) n = deterministic(fn, user, 0x8000001Du, out, cap);
    if (n > 0) return n;
    if (max_ext >= 0x80000005u) {
        memset(r, 0, sizeof r);
        fn(user, 0x80000005u, 0, r);
        put(out, cap, &n, 1, 1, (double)(r[2] >> 24) * 1024.0, 1);
    }
    if (max_ext >= 0x80000006u) {
        memset(r, 0, sizeof r);
        fn(user, 0x80000006u, 0, r);
        put(out, cap, &n, 2, 3, (double)(r[2] >> 16) * 1024.0, 1);
        put(out, cap, &n, 3, 3, (double)(r[3] >> 18) * 512.0 * 1024.0, 0);
    }
    return n;
}

#if defined(__x86_64__)
static void hw_cpuid(void *user, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    (void)user;
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(leaf, sub, a, b, c, d);
    r[0] = a;
    r[1] = b;
    r[2] = c;
    r[3] = d;
}
#endif

int ffn_cpuid_caches_host(ffn_sysfs_cache *out, int cap)
{
#if defined(__x86_64__)
    return ffn_cpuid_caches(hw_cpuid, NULL, out, cap);
#else
    /* AArch64 keeps its cache geometry in CCSIDR_EL1/CLIDR_EL1, which user space cannot read */
    (void)out;
    (void)cap;
    return 0;
#endif
}
