/* Plateau detection on synthetic bandwidth-vs-working-set curves shaped like real CPUs (one
 * thread, read-only): Zen 3 (32 KiB / 512 KiB / 32 MiB, the L3 a victim cache of L2), Sapphire
 * Rapids (48 KiB / 2 MiB / 105 MiB), Graviton 3 (64 KiB / 1 MiB / 32 MiB) and a VM whose sysfs
 * is wrong. Each curve has seeded noise, a ramp at the smallest sizes (loop overhead) and an
 * outlier, and is sampled the way `calibrate --quick` samples (from 4 KiB, 4 points per octave,
 * to 4 x LLC). The criterion: every detected boundary within a factor 1.5 of the
 * truth, one level per cache plus DRAM. Then the nearest-size matching against sysfs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ffnroof/measure.h"
#include "ffnroof/rand.h"

typedef struct truth {
    const char *name;
    int n_caches;
    double cap[4]; /* bytes, per level */
    double bw[5];  /* GB/s per level, the last DRAM */
    double width;  /* transition width in octaves (a victim L3 and sliced LLCs are wider) */
} truth;

static ffn_rng g_rng;

static double urand(void)
{
    return ffn_rng_unif(&g_rng);
}

static double gauss(void)
{
    double u = urand(), v = urand();
    if (u < 1e-12) u = 1e-12;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static double logistic(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* Time per byte nested level by level: a fraction w_i of the traffic misses level i, rising
 * over `width` octaves centred a quarter octave above its capacity. */
static double curve(const truth *t, double s)
{
    double T = 1.0 / t->bw[t->n_caches];
    for (int i = t->n_caches - 1; i >= 0; i--) {
        const double w = logistic((log2(s / t->cap[i]) - 0.25) / (t->width / 4));
        T = (1 - w) / t->bw[i] + w * T;
    }
    const double ramp = 1.0 - 0.12 * exp2(-log2(s / 4096.0)); /* 4 KiB 12% low, 8 KiB 6% */
    return ramp / T * 1e9;
}

static size_t sample(const truth *t, uint64_t seed, double noise, double *size, double *bw)
{
    ffn_rng_seed(&g_rng, seed);
    const double llc = t->cap[t->n_caches - 1];
    size_t n = 0;
    for (double s = 4096; s <= 4 * llc * 1.0001 && n < 256; s *= exp2(0.25)) {
        size[n] = s;
        bw[n] = curve(t, s) * (1 + noise * gauss());
        n++;
    }
    bw[n / 3] *= 0.7; /* one sample hit by an interrupt */
    return n;
}

static void check(const truth *t, uint64_t seed, double noise)
{
    double size[256], bw[256];
    const size_t n = sample(t, seed, noise, size, bw);
    ffn_level lv[FFN_MAX_LEVELS];
    int nl = 0;
    cr_assert_eq(ffn_plateau_detect(size, bw, n, NULL, lv, FFN_MAX_LEVELS, &nl), 0);
    cr_assert_eq(nl, t->n_caches + 1, "%s seed %llu: %d levels, want %d", t->name,
                 (unsigned long long)seed, nl, t->n_caches + 1);
    for (int i = 0; i < t->n_caches; i++) {
        const double r = lv[i].capacity_bytes / t->cap[i];
        cr_assert(r > 1 / 1.5 && r < 1.5, "%s seed %llu: L%d boundary %.0f KiB, truth %.0f KiB",
                  t->name, (unsigned long long)seed, i + 1, lv[i].capacity_bytes / 1024,
                  t->cap[i] / 1024);
    }
    for (int i = 0; i <= t->n_caches; i++) {
        const double r = lv[i].bandwidth_bps / (t->bw[i] * 1e9);
        cr_assert(r > 0.85 && r < 1.15, "%s seed %llu: level %d at %.1f GB/s, truth %.1f", t->name,
                  (unsigned long long)seed, i, lv[i].bandwidth_bps / 1e9, t->bw[i]);
    }
    cr_assert_str_eq(lv[nl - 1].name, "DRAM");
}

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)

static const truth zen3 = {"zen3", 3, {32 * KiB, 512 * KiB, 32 * MiB}, {190, 95, 55, 22}, 1.2};
static const truth spr = {
    "sapphire-rapids", 3, {48 * KiB, 2 * MiB, 105 * MiB}, {330, 140, 32, 13}, 1.0};
static const truth grav3 = {"graviton3", 3, {64 * KiB, 1 * MiB, 32 * MiB}, {130, 80, 45, 26}, 0.8};
/* a VM: sysfs claims 32 KiB / 4 MiB / 16 MiB, the host underneath has 48 KiB / 1.25 MiB / 54 MiB */
static const truth vm = {"vm", 3, {48 * KiB, 1.25 * MiB, 54 * MiB}, {280, 120, 40, 15}, 1.0};

Test(plateau, zen3_victim_l3)
{
    for (uint64_t seed = 1; seed <= 8; seed++)
        check(&zen3, seed, 0.025);
}

Test(plateau, sapphire_rapids)
{
    for (uint64_t seed = 1; seed <= 8; seed++)
        check(&spr, seed, 0.025);
}

Test(plateau, graviton3)
{
    for (uint64_t seed = 1; seed <= 8; seed++)
        check(&grav3, seed, 0.025);
}

/* Every seed of t checked as above, then one sample's levels (lv) paired with three cache sizes
 * as a host would list them (match). */
static void check_and_match(const truth *t, double noise, const double sys[3], ffn_level *lv,
                            int match[3])
{
    for (uint64_t seed = 1; seed <= 8; seed++)
        check(t, seed, noise);
    double size[256], bw[256];
    const size_t n = sample(t, 3, noise, size, bw);
    int nl = 0;
    cr_assert_eq(ffn_plateau_detect(size, bw, n, NULL, lv, FFN_MAX_LEVELS, &nl), 0);
    cr_assert_eq(ffn_plateau_match(lv, nl, sys, 3, match), 0);
}

Test(plateau, vm_with_wrong_sysfs)
{
    /* what sysfs says is wrong: matched by nearest size, its L2 and L3 are off by more than 2x */
    const double sys[3] = {32 * KiB, 4 * MiB, 16 * MiB};
    ffn_level lv[FFN_MAX_LEVELS];
    int match[3];
    check_and_match(&vm, 0.025, sys, lv, match);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(match[i], i);
    cr_assert(lv[match[1]].capacity_bytes < sys[1] / 2);
    cr_assert(lv[match[2]].capacity_bytes > sys[2] * 2);
}

/* A level that sysfs lists but the curve does not show (a victim L3 indistinguishable from L2,
 * or a VM hiding one) shifts nothing: the others still pair with their own boundary. */
Test(plateau, match_by_nearest_size_not_index)
{
    ffn_level lv[3];
    memset(lv, 0, sizeof lv);
    lv[0].capacity_bytes = 36 * KiB;
    lv[1].capacity_bytes = 30 * MiB;
    double sys[3] = {32 * KiB, 512 * KiB, 32 * MiB};
    int match[3];
    cr_assert_eq(ffn_plateau_match(lv, 3, sys, 3, match), 0);
    cr_assert_eq(match[0], 0);
    cr_assert_eq(match[1], -1, "the unseen L2 pairs with nothing");
    cr_assert_eq(match[2], 1, "L3 pairs with the 30 MiB boundary, not the 36 KiB one");
    /* sysfs in any order */
    double rev[3] = {32 * MiB, 512 * KiB, 32 * KiB};
    cr_assert_eq(ffn_plateau_match(lv, 3, rev, 3, match), 0);
    cr_assert_eq(match[0], 1);
    cr_assert_eq(match[2], 0);
    cr_assert_eq(ffn_plateau_match(NULL, 3, rev, 3, match), FFN_EINVAL);
}

/* Pairs keep the order of size: once L3 (32 MiB) has taken the 21.1 MiB boundary, L2 (1 MiB)
 * cannot take the 50.2 MiB one, though it is the nearest left (a Zen 4 VM's one-thread
 * portable-load curve). */
Test(plateau, pairs_do_not_cross)
{
    ffn_level lv[3];
    memset(lv, 0, sizeof lv);
    lv[0].capacity_bytes = 21.1 * MiB;
    lv[1].capacity_bytes = 50.2 * MiB;
    const double sys[3] = {32 * KiB, 1 * MiB, 32 * MiB};
    int match[3];
    cr_assert_eq(ffn_plateau_match(lv, 3, sys, 3, match), 0);
    cr_expect_eq(match[2], 0, "L3 pairs with 21.1 MiB");
    cr_expect_eq(match[1], -1, "L2 would cross: %d", match[1]);
    cr_expect_eq(match[0], -1, "L1 would cross: %d", match[0]);
}

/* The ramp of the smallest sizes (lower than L1) is not the first level: L1 is. */
Test(plateau, ramp_at_small_sizes_is_not_a_level)
{
    double size[40], bw[40];
    size_t n = 0;
    for (double s = 4096; s <= 64 * MiB; s *= 2) {
        size[n] = s;
        bw[n++] = s <= 8192 ? 150e9 : s <= 64 * KiB ? 200e9 : 20e9;
    }
    ffn_level lv[FFN_MAX_LEVELS];
    int nl = 0;
    ffn_plateau_opts o = {0, 0, 1, 2};
    cr_assert_eq(ffn_plateau_detect(size, bw, n, &o, lv, FFN_MAX_LEVELS, &nl), 0);
    cr_assert_eq(nl, 2);
    cr_assert_float_eq(lv[0].bandwidth_bps, 200e9, 1);
    cr_assert_float_eq(lv[1].bandwidth_bps, 20e9, 1);
}

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

/* The levels of a measured curve given as KiB and GB/s (n sizes, ng rates: the same count), with
 * the default options. */
static int detect_measured(const double *kib, const double *gbs, size_t n, size_t ng, ffn_level *lv)
{
    double size[128], bw[128];
    cr_assert_eq(n, ng);
    cr_assert_leq(n, 128);
    for (size_t i = 0; i < n; i++) {
        size[i] = kib[i] * KiB;
        bw[i] = gbs[i] * 1e9;
    }
    int nl = 0;
    cr_assert_eq(ffn_plateau_detect(size, bw, n, NULL, lv, FFN_MAX_LEVELS, &nl), 0);
    return nl;
}

/* A Zen 4 (family 25 model 17) KVM guest, two threads, `calibrate --quick`: the
 * best rate per size as measured (KiB, GB/s). Two L1s to 64 KiB, then L2 and L3 too noisy to
 * tell apart up to about 10 MiB, then a fall that never flattens before the sweep ends at
 * 128 MiB (memory reads about 45 GB/s with both threads). Before step 4b the 128 KiB - 10 MiB
 * plateau was the last level and was named DRAM at 170 GB/s. */
Test(plateau, falling_tail_is_the_last_level)
{
    static const double kib[] = {
        4,     6,     8,     10,    12,    16,    18,    22,    26,     32,    38,    44,
        52,    64,    76,    90,    106,   128,   152,   180,   214,    256,   304,   362,
        430,   512,   608,   724,   860,   1024,  1216,  1448,  1722,   2048,  2434,  2896,
        3444,  4096,  4870,  5792,  6888,  8192,  9740,  11584, 13776,  16384, 19482, 23170,
        27554, 32768, 38966, 46340, 55108, 65536, 77934, 92680, 110216, 131072};
    static const double gbs[] = {
        253.1, 339.4, 279.9, 319.8, 348.4, 274.9, 271.1, 281.9, 278.4, 267.7, 281.6, 320.4,
        397.6, 318.2, 232.0, 201.9, 180.3, 169.9, 169.8, 170.0, 211.3, 229.6, 230.1, 177.5,
        176.7, 226.3, 178.6, 207.8, 168.1, 203.9, 191.0, 171.1, 196.7, 155.0, 153.0, 189.4,
        191.8, 162.5, 153.7, 156.9, 159.7, 156.4, 146.3, 154.1, 136.8, 132.6, 123.4, 117.6,
        107.3, 107.7, 76.7,  63.5,  46.7,  49.4,  45.9,  43.6,  41.5,  35.8};
    ffn_level lv[FFN_MAX_LEVELS];
    int nl = detect_measured(kib, gbs, ARRAY_N(kib), ARRAY_N(gbs), lv);
    cr_assert_geq(nl, 3, "%d levels", nl);
    cr_assert_str_eq(lv[nl - 1].name, "DRAM");
    cr_assert(lv[nl - 1].bandwidth_bps > 30e9 && lv[nl - 1].bandwidth_bps < 50e9,
              "memory at %.1f GB/s", lv[nl - 1].bandwidth_bps / 1e9);
    cr_assert(lv[nl - 2].bandwidth_bps > 140e9, "the cache plateau at %.1f GB/s",
              lv[nl - 2].bandwidth_bps / 1e9);
    /* its boundary lies where the fall is, between 10 and 64 MiB (two threads' L3: 32 MiB) */
    cr_assert(lv[nl - 2].capacity_bytes > 10 * MiB && lv[nl - 2].capacity_bytes < 64 * MiB,
              "boundary at %.1f MiB", lv[nl - 2].capacity_bytes / MiB);
    /* the same curve cut where it is still flat keeps its plateau as the last level */
    size_t cut = 0;
    while (cut < ARRAY_N(kib) && kib[cut] <= 9740)
        cut++;
    nl = detect_measured(kib, gbs, cut, cut, lv);
    cr_assert(lv[nl - 1].bandwidth_bps > 140e9);
}

/* The same VM, two threads, a default calibration (best rate per size,
 * KiB, GB/s): a stretch at 12-22 KiB read 232-252 GB/s between 314-402 below it and 369-422
 * above it (a vCPU descheduled while those points ran). Clustered as measured, the dip merged
 * with L2 (232 GB/s) into one "L1" from 12 KiB to 1 MiB and the 400 GB/s L1 was lost; on the
 * envelope from the right (no size reads slower than a larger one) it is L1 to 64 KiB (two 32
 * KiB L1s), L2 to about 2 MiB (two 1 MiB L2s), L3, then memory. */
Test(plateau, a_dip_below_a_larger_sizes_rate_is_noise)
{
    static const double kib[] = {4,     6,     8,      10,     12,     16,     18,     22,    26,
                                 32,    38,    44,     52,     64,     76,     90,     106,   128,
                                 152,   180,   214,    256,    304,    362,    430,    512,   608,
                                 724,   860,   1024,   1216,   1448,   1722,   2048,   2434,  2896,
                                 3444,  4096,  4870,   5792,   6888,   8192,   9740,   11584, 13776,
                                 16384, 19482, 23170,  27554,  32768,  38966,  46340,  55108, 65536,
                                 77934, 92680, 110216, 131072, 155870, 185362, 220434, 262142};
    static const double gbs[] = {
        314.1, 338.6, 392.5, 401.9, 246.9, 249.1, 252.4, 232.3, 409.0, 376.6, 369.3, 421.6, 415.2,
        407.1, 241.8, 240.4, 226.1, 231.8, 232.3, 232.6, 232.7, 232.5, 233.0, 235.0, 232.8, 232.3,
        235.0, 231.3, 234.9, 224.4, 213.7, 206.7, 202.8, 196.3, 192.4, 191.6, 189.7, 197.4, 193.6,
        192.5, 188.3, 181.7, 189.9, 192.0, 187.8, 179.5, 163.3, 153.6, 138.5, 117.8, 104.4, 83.2,
        65.8,  58.1,  52.1,  49.6,  46.5,  43.2,  32.0,  33.1,  32.7,  32.7};
    ffn_level lv[FFN_MAX_LEVELS];
    int nl = detect_measured(kib, gbs, ARRAY_N(kib), ARRAY_N(gbs), lv);
    cr_assert_eq(nl, 4, "%d levels", nl);
    cr_assert(lv[0].bandwidth_bps > 340e9, "L1 at %.1f GB/s", lv[0].bandwidth_bps / 1e9);
    cr_assert(lv[0].capacity_bytes > 48 * KiB && lv[0].capacity_bytes < 96 * KiB,
              "L1 boundary at %.1f KiB", lv[0].capacity_bytes / KiB);
    cr_assert(lv[1].bandwidth_bps > 220e9 && lv[1].bandwidth_bps < 245e9);
    cr_assert(lv[1].capacity_bytes > 1 * MiB && lv[1].capacity_bytes < 3 * MiB,
              "L2 boundary at %.2f MiB", lv[1].capacity_bytes / MiB);
    cr_assert(lv[2].bandwidth_bps > 180e9 && lv[2].bandwidth_bps < 205e9);
    cr_assert_str_eq(lv[3].name, "DRAM");
    cr_assert(lv[3].bandwidth_bps > 30e9 && lv[3].bandwidth_bps < 36e9);
}

/* ---- the caches CPUID describes, for hosts whose sysfs lists none ---------------------------- */

typedef struct cpuid_row {
    uint32_t leaf, sub, r[4];
} cpuid_row;

typedef struct cpuid_table {
    const cpuid_row *rows;
    size_t n;
    int asked_above_max; /* extended leaves asked for beyond the table's maximum */
} cpuid_table;

static void fake_cpuid(void *user, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    cpuid_table *t = user;
    memset(r, 0, 4 * sizeof r[0]);
    uint32_t max_ext = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].leaf == 0x80000000u) max_ext = t->rows[i].r[0];
    if (leaf > 0x80000000u && leaf > max_ext) t->asked_above_max++;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].leaf == leaf && t->rows[i].sub == sub) memcpy(r, t->rows[i].r, 16);
}

/* EAX/EBX/ECX of a leaf-4-style entry: type, level, CPUs sharing, ways x line 64 x sets */
#define DET(type, level, share, ways, sets)                                                        \
    {                                                                                              \
        (type) | (level) << 5 | ((share)-1u) << 14, ((ways)-1u) << 22 | 63u, (sets)-1u, 0          \
    }

static int decode(const cpuid_row *rows, size_t n, ffn_sysfs_cache *out, int *above)
{
    cpuid_table t = {rows, n, 0};
    const int got = ffn_cpuid_caches(fake_cpuid, &t, out, FFN_MAX_SYSFS_CACHES);
    if (above) *above = t.asked_above_max;
    return got;
}

Test(plateau, cpuid_leaf4_sapphire_rapids)
{
    static const cpuid_row spr_rows[] = {
        {0, 0, {0x20, 0x756e6547, 0x6c65746e, 0x49656e69}},
        {4, 0, DET(1u, 1u, 2u, 12u, 64u)},       /* L1d 48 KiB */
        {4, 1, DET(2u, 1u, 2u, 8u, 64u)},        /* L1i 32 KiB */
        {4, 2, DET(3u, 2u, 2u, 16u, 2048u)},     /* L2 2 MiB */
        {4, 3, DET(3u, 3u, 128u, 15u, 114688u)}, /* L3 105 MiB */
        {0x80000000u, 0, {0x80000008u, 0, 0, 0}},
    };
    ffn_sysfs_cache c[FFN_MAX_SYSFS_CACHES];
    cr_assert_eq(decode(spr_rows, sizeof spr_rows / sizeof spr_rows[0], c, NULL), 4);
    cr_expect_eq(c[0].level, 1);
    cr_expect_str_eq(c[0].type, "Data");
    cr_expect_float_eq(c[0].size_bytes, 48 * KiB, 0.5);
    cr_expect_eq(c[0].shared_cpus, 2);
    cr_expect_str_eq(c[1].type, "Instruction");
    cr_expect_float_eq(c[2].size_bytes, 2 * MiB, 0.5);
    cr_expect_str_eq(c[2].type, "Unified");
    cr_expect_eq(c[3].level, 3);
    cr_expect_float_eq(c[3].size_bytes, 105 * MiB, 0.5);
    cr_expect_eq(c[3].shared_cpus, 128);
}

Test(plateau, cpuid_8000001d_zen3)
{
    /* AMD answers leaf 4 with zeros; TOPOEXT's leaf 0x8000001D has the same layout */
    static const cpuid_row zen3_rows[] = {
        {0, 0, {0x10, 0x68747541, 0x444d4163, 0x69746e65}},
        {0x80000000u, 0, {0x80000023u, 0x68747541, 0x444d4163, 0x69746e65}},
        {0x8000001Du, 0, DET(1u, 1u, 2u, 8u, 64u)},
        {0x8000001Du, 1, DET(2u, 1u, 2u, 8u, 64u)},
        {0x8000001Du, 2, DET(3u, 2u, 2u, 8u, 1024u)},
        {0x8000001Du, 3, DET(3u, 3u, 16u, 16u, 32768u)},
    };
    ffn_sysfs_cache c[FFN_MAX_SYSFS_CACHES];
    cr_assert_eq(decode(zen3_rows, sizeof zen3_rows / sizeof zen3_rows[0], c, NULL), 4);
    cr_expect_float_eq(c[0].size_bytes, 32 * KiB, 0.5);
    cr_expect_float_eq(c[2].size_bytes, 512 * KiB, 0.5);
    cr_expect_float_eq(c[3].size_bytes, 32 * MiB, 0.5);
    cr_expect_eq(c[3].shared_cpus, 16);
}

/* The registers of a Zen 5 (family 26 model 2) Firecracker microVM, as read:
 * no sysfs caches, leaf 4 and 0x8000001D empty, the legacy leaves give L1d 48 KiB, L2 1 MiB and
 * the socket's L3, 1016 x 512 KiB = 508 MiB. Its one-thread read curve (L3 in two steps, at
 * about 7 and 45 MiB) then pairs L3 with the 45 MiB boundary, the nearest, not the 7 MiB one. */
Test(plateau, cpuid_legacy_zen5_microvm)
{
    static const cpuid_row zen5_rows[] = {
        {0x0, 0, {0x0000000d, 0x68747541, 0x444d4163, 0x69746e65}},
        {0x80000000u, 0, {0x80000021, 0x68747541, 0x444d4163, 0x69746e65}},
        {0x80000005u, 0, {0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140}},
        {0x80000006u, 0, {0x40802040, 0x60804040, 0x04006140, 0x0fe09140}},
    };
    ffn_sysfs_cache c[FFN_MAX_SYSFS_CACHES];
    cr_assert_eq(decode(zen5_rows, sizeof zen5_rows / sizeof zen5_rows[0], c, NULL), 3);
    cr_expect_eq(c[0].level, 1);
    cr_expect_str_eq(c[0].type, "Data");
    cr_expect_float_eq(c[0].size_bytes, 48 * KiB, 0.5);
    cr_expect_eq(c[0].shared_cpus, 1, "the legacy L1 and L2 are per core");
    cr_expect_float_eq(c[1].size_bytes, 1 * MiB, 0.5);
    cr_expect_eq(c[2].level, 3);
    cr_expect_float_eq(c[2].size_bytes, 508 * MiB, 0.5);
    cr_expect_eq(c[2].shared_cpus, 0, "the legacy leaf does not say who shares L3");

    static const truth zen5vm = {
        "zen5-microvm", 4, {48 * KiB, 1 * MiB, 8 * MiB, 45 * MiB}, {340, 130, 92, 74, 26}, 0.8};
    const double sys[3] = {c[0].size_bytes, c[1].size_bytes, c[2].size_bytes};
    ffn_level lv[FFN_MAX_LEVELS];
    int match[3];
    check_and_match(&zen5vm, 0.02, sys, lv, match);
    cr_expect_eq(match[0], 0);
    cr_expect_eq(match[1], 1);
    cr_expect_eq(match[2], 3, "L3 pairs with the 45 MiB boundary");
}

Test(plateau, cpuid_without_cache_leaves)
{
    /* an old or minimal CPU: basic leaf 1 only, extended up to the brand string. The table has
     * junk above the maximum, which must not be read (Intel answers such leaves with its highest
     * basic leaf) */
    static const cpuid_row old_rows[] = {
        {0, 0, {0x1, 0, 0, 0}},
        {4, 0, DET(1u, 1u, 1u, 8u, 64u)},
        {0x80000000u, 0, {0x80000004u, 0, 0, 0}},
        {0x80000006u, 0, {0, 0, 0x04006140, 0x0fe09140}},
        {0x8000001Du, 0, DET(1u, 1u, 1u, 8u, 64u)},
    };
    ffn_sysfs_cache c[FFN_MAX_SYSFS_CACHES];
    int above = -1;
    cr_expect_eq(decode(old_rows, sizeof old_rows / sizeof old_rows[0], c, &above), 0);
    cr_expect_eq(above, 0, "no extended leaf above the maximum was asked for");
    cr_expect_eq(ffn_cpuid_caches(NULL, NULL, c, 4), 0);
    cr_expect_eq(ffn_cpuid_caches(fake_cpuid, NULL, NULL, 4), 0);
}
