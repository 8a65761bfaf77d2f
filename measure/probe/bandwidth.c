/* Memory-bandwidth sweep: for working sets from L1-sized to beyond the last-level cache, time a
 * streaming kernel (read-only, copy, triad, and their non-temporal-store variants) on a pinned
 * thread team. Each thread allocates and first-touches its own slice (so pages land on its NUMA
 * node), and all threads start each timed sample together behind a barrier; a sample repeats the
 * kernel enough times to move about sample_bytes, so small working sets are not dominated by the
 * barrier (a spinning one: see spin_wait). The best sample of each point is the bandwidth roof at
 * that size (ERT/likwid practice); the median is kept for noise. Byte counts follow STREAM
 * (explicit traffic only). */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "ffnroof/sort.h"
#include "internal.h"

static const int g_bw_arrays[FFN_BW_COUNT] = {1, 2, 3, 2, 3};
static const double g_bw_bytes_per_elem[FFN_BW_COUNT] = {4, 8, 12, 8, 12};

/* The widest loads the CPU has, within what FFNROOF_ISA allows (so that FFNROOF_ISA=avx2 on an
 * AVX-512 host measures what an AVX2 host of the same memory system would see). */
const char *ffn__bw_probe_isa(void)
{
#if defined(FFN_MEASURE_HAVE_X86)
    uint64_t allowed = ~(uint64_t)0;
    const char *env = getenv("FFNROOF_ISA");
    ffn_isa isa;
    if (env && env[0] && ffn_isa_selected(&isa, NULL) == 0) allowed = ffn_isa_allows(isa);
    if (ffn_cpu_caps_get()->avx512f && (allowed & FFN_CPU_AVX512)) return "avx512";
    if ((ffn_cpu_features() & FFN_CPU_AVX2) && (allowed & FFN_CPU_AVX2)) return "avx2";
#elif defined(FFN_MEASURE_HAVE_SVE) && defined(__aarch64__)
    uint64_t allowed = ~(uint64_t)0;
    const char *env = getenv("FFNROOF_ISA");
    ffn_isa isa;
    if (env && env[0] && ffn_isa_selected(&isa, NULL) == 0) allowed = ffn_isa_allows(isa);
    if ((ffn_cpu_features() & FFN_CPU_SVE) && (allowed & FFN_CPU_SVE)) return "sve";
#endif
    return "portable";
}

static void pick_kernels(ffn__bw_kernels *k)
{
    ffn__bw_portable_kernels(k);
#if defined(FFN_MEASURE_HAVE_X86)
    const char *w = ffn__bw_probe_isa();
    if (strcmp(w, "avx512") == 0)
        ffn__bw_avx512_kernels(k);
    else if (strcmp(w, "avx2") == 0)
        ffn__bw_avx2_kernels(k);
#elif defined(FFN_MEASURE_HAVE_SVE) && defined(__aarch64__)
    if (strcmp(ffn__bw_probe_isa(), "sve") == 0) ffn__bw_sve_kernels(k);
#endif
}

size_t ffn__bw_kernel_sets(ffn__bw_kernels *out, const char **names, size_t cap)
{
    size_t n = 0;
    if (n < cap) {
        ffn__bw_portable_kernels(&out[n]);
        names[n++] = "portable";
    }
#if defined(FFN_MEASURE_HAVE_X86)
    if (n < cap && (ffn_cpu_features() & FFN_CPU_AVX2)) {
        ffn__bw_avx2_kernels(&out[n]);
        names[n++] = "avx2";
    }
    if (n < cap && ffn_cpu_caps_get()->avx512f) {
        ffn__bw_avx512_kernels(&out[n]);
        names[n++] = "avx512";
    }
#elif defined(FFN_MEASURE_HAVE_SVE) && defined(__aarch64__)
    if (n < cap && (ffn_cpu_features() & FFN_CPU_SVE)) {
        ffn__bw_sve_kernels(&out[n]);
        names[n++] = "sve";
    }
#endif
    return n;
}

bool ffn_bw_kernel_available(ffn_bw_kernel k)
{
    if ((unsigned)k >= FFN_BW_COUNT) return false;
    ffn__bw_kernels ks;
    pick_kernels(&ks);
    if (k == FFN_BW_COPY_NT) return ks.copy_nt != NULL;
    if (k == FFN_BW_TRIAD_NT) return ks.triad_nt != NULL;
    return true;
}

#define MAX_SAMPLES 1000

/* The sweep's barrier spins (with a pause, yielding after about 2^14 rounds): a futex barrier
 * (pthread_barrier_wait) cost tens of microseconds in the 2-vCPU KVM guests, against quick
 * samples of 16 us at L1 sizes (8 MiB a sample at 500 GB/s), so the two-thread curve of small
 * working sets scattered 2-3x between samples and runs (a family 6 model 207 VM: medians of
 * 110-270 GB/s under best samples of 200-560 at 4 KiB to 2 MiB) and its L1 came out as two
 * plateaus. Sense-reversing: each thread keeps its own sense. */
typedef struct spin_barrier {
    atomic_int left;
    atomic_int sense;
    int n;
} spin_barrier;

static void spin_init(spin_barrier *b, int n)
{
    atomic_init(&b->left, n);
    atomic_init(&b->sense, 0);
    b->n = n;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void spin_wait(spin_barrier *b, int *sense)
{
    *sense = !*sense;
    if (atomic_fetch_sub_explicit(&b->left, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&b->left, b->n, memory_order_relaxed);
        atomic_store_explicit(&b->sense, *sense, memory_order_release);
        return;
    }
    for (unsigned spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != *sense;
         spins++) {
        if (spins < (1u << 14))
            cpu_relax();
        else
            sched_yield();
    }
}

typedef struct sweep {
    ffn_bw_sweep_opts o;
    ffn__bw_kernels k;
    size_t n_points;
    size_t n_done;   /* points finished (written by thread 0) */
    size_t *elems;   /* per thread per array, for each point */
    uint64_t *inner; /* kernel calls per sample, for each point */
    size_t max_elems;
    ffn_bw_point *pts;
    spin_barrier bar;
    volatile int failed; /* a thread could not allocate */
    volatile int go;     /* another sample of the current point */
    volatile int stop;   /* the hook asked to stop */
    double t0;
    double samples[MAX_SAMPLES];
    size_t n_samples;
    double point_start;
    volatile double sink;
} sweep;

static float *alloc_array(size_t elems)
{
    const size_t bytes = elems * sizeof(float);
    /* 2 MiB alignment for large arrays lets transparent huge pages back them (fewer TLB misses,
     * which would otherwise show up as a bandwidth drop unrelated to the caches) */
    const size_t align = bytes >= ((size_t)4 << 20) ? ((size_t)2 << 20) : 4096;
    void *p = NULL;
    if (posix_memalign(&p, align, bytes) != 0) return NULL;
#if defined(MADV_HUGEPAGE)
    if (align > 4096) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    float *f = p;
    for (size_t i = 0; i < elems; i++) /* first touch by the owning thread */
        f[i] = 1.0f + (float)(i & 7) * 0.125f;
    return f;
}

static double run_kernel(const sweep *s, float *a, float *b, float *c, size_t n)
{
    switch (s->o.kernel) {
    case FFN_BW_READ:
        return s->k.read(a, n);
    case FFN_BW_COPY:
        return s->k.copy(b, a, n);
    case FFN_BW_TRIAD:
        return s->k.triad(a, b, c, 0.5f, n);
    case FFN_BW_COPY_NT:
        return s->k.copy_nt(b, a, n);
    case FFN_BW_TRIAD_NT:
        return s->k.triad_nt(a, b, c, 0.5f, n);
    default:
        return 0;
    }
}

static void sweep_worker(void *arg, int tid, int nthreads)
{
    sweep *s = arg;
    int sense = 0;
    const int na = g_bw_arrays[s->o.kernel];
    float *arr[3] = {NULL, NULL, NULL};
    for (int i = 0; i < na; i++) {
        arr[i] = alloc_array(s->max_elems);
        if (!arr[i]) s->failed = 1;
    }
    spin_wait(&s->bar, &sense);
    double sink = 0;
    if (s->failed) goto out;
    for (size_t p = 0; p < s->n_points; p++) {
        const size_t n = s->elems[p];
        const uint64_t inner = s->inner[p];
        if (tid == 0) {
            s->n_samples = 0;
            s->point_start = ffn_time_now_s();
        }
        for (;;) {
            spin_wait(&s->bar, &sense);
            if (tid == 0) s->t0 = ffn_time_now_s();
            for (uint64_t r = 0; r < inner; r++)
                sink += run_kernel(s, arr[0], arr[1], arr[2], n);
            spin_wait(&s->bar, &sense);
            if (tid == 0) {
                const double now = ffn_time_now_s();
                s->samples[s->n_samples++] = now - s->t0;
                s->go = s->n_samples < MAX_SAMPLES &&
                        (s->n_samples < 3 || now - s->point_start < s->o.point_s);
            }
            spin_wait(&s->bar, &sense);
            if (!s->go) break;
        }
        if (tid == 0) {
            const double bytes =
                g_bw_bytes_per_elem[s->o.kernel] * (double)n * (double)nthreads * (double)inner;
            ffn_sort_doubles(s->samples, s->n_samples);
            ffn_bw_point *pt = &s->pts[p];
            pt->kernel = s->o.kernel;
            pt->threads = nthreads;
            pt->size_bytes = (double)na * 4.0 * (double)n * (double)nthreads;
            pt->bytes_per_s = bytes / s->samples[0];
            pt->median_bytes_per_s = bytes / ffn_quantile_sorted(s->samples, s->n_samples, 0.5);
            pt->samples = s->n_samples;
            s->n_done = p + 1;
            if (s->o.hook && s->o.hook(s->o.user, (double)(p + 1) / (double)s->n_points) != 0)
                s->stop = 1;
        }
        spin_wait(&s->bar, &sense);
        if (s->stop) break;
    }
out:
    if (tid == 0) s->sink = sink;
    for (int i = 0; i < na; i++)
        free(arr[i]);
}

int ffn_bw_sweep(const ffn_bw_sweep_opts *opts, ffn_bw_point *pts, size_t cap, size_t *n_out)
{
    if (!opts || !pts || !n_out || cap == 0) return FFN_EINVAL;
    *n_out = 0;
    sweep *s = calloc(1, sizeof *s);
    if (!s) return FFN_ENOMEM;
    s->o = *opts;
    ffn_bw_sweep_opts *o = &s->o;
    int rc = 0;
    if ((unsigned)o->kernel >= FFN_BW_COUNT || o->threads < 1 || o->threads > 1024) {
        rc = FFN_EINVAL;
        goto done;
    }
    if (!ffn_bw_kernel_available(o->kernel)) {
        rc = FFN_EUNSUPPORTED;
        goto done;
    }
    if (!(o->min_bytes > 0)) o->min_bytes = 16384;
    if (!(o->max_bytes > 0)) o->max_bytes = 256.0 * 1024 * 1024;
    if (o->max_bytes < o->min_bytes) o->max_bytes = o->min_bytes;
    if (o->points_per_octave <= 0) o->points_per_octave = 2;
    if (!(o->point_s > 0)) o->point_s = 0.05;
    if (!(o->sample_bytes > 0)) o->sample_bytes = 16.0 * 1024 * 1024;
    pick_kernels(&s->k);

    const int na = g_bw_arrays[o->kernel];
    const double unit = (double)na * 4.0 * FFN__BW_ALIGN_ELEMS * o->threads;
    const size_t max_pts = (size_t)(log2(o->max_bytes / o->min_bytes) * o->points_per_octave) + 2;
    s->elems = calloc(max_pts, sizeof *s->elems);
    s->inner = calloc(max_pts, sizeof *s->inner);
    if (!s->elems || !s->inner) {
        rc = FFN_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < max_pts && s->n_points < cap; i++) {
        const double want = o->min_bytes * pow(2.0, (double)i / o->points_per_octave);
        if (want > o->max_bytes * 1.0001) break;
        const double units = fmax(1.0, floor(want / unit));
        const size_t n = (size_t)units * FFN__BW_ALIGN_ELEMS;
        if (s->n_points > 0 && s->elems[s->n_points - 1] == n)
            continue; /* rounding merged two sizes */
        const double traffic = g_bw_bytes_per_elem[o->kernel] * (double)n * o->threads;
        s->elems[s->n_points] = n;
        s->inner[s->n_points] = (uint64_t)fmax(1.0, ceil(o->sample_bytes / traffic));
        if (n > s->max_elems) s->max_elems = n;
        s->n_points++;
    }
    s->pts = pts;
    spin_init(&s->bar, o->threads);
    rc = ffn__team_run(o->threads, sweep_worker, s);
    if (rc == 0 && s->failed) rc = FFN_ENOMEM;
    if (rc == 0) {
        *n_out = s->n_done;
        if (s->stop) rc = FFN_EINTERRUPTED;
    }
done:
    free(s->elems);
    free(s->inner);
    free(s);
    return rc;
}
