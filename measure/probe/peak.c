/* Peak-compute microbenchmarks: the registry of kernels (name, dtype, FLOPs per iteration, the
 * run-time check that gates it) and the measurement loop (pinned thread team, iteration count
 * sized to the sample time, repeat until stable, best sample = the roof as in ERT and likwid). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "internal.h"

/* (the kinds' names and dtypes: base/names.c) */
typedef struct peak_desc {
    double flops_per_iter; /* per byte of SVE vector length when per_vl_byte */
    ffn__peak_fn fn;       /* NULL when not built into this binary */
    bool per_vl_byte;
} peak_desc;

#if defined(FFN_MEASURE_HAVE_X86)
#define X86_FN(f) f
#else
#define X86_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_AVX512_FP16)
#define FP16_FN(f) f
#else
#define FP16_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_AVX_VNNI)
#define AVX_VNNI_FN(f) f
#else
#define AVX_VNNI_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_AMX)
#define AMX_FN(f) f
#else
#define AMX_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_NEON) && defined(__aarch64__)
#define NEON_FN(f) f
#else
#define NEON_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_NEON_SDOT) && defined(__aarch64__)
#define SDOT_FN(f) f
#else
#define SDOT_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_NEON_I8MM) && defined(__aarch64__)
#define I8MM_FN(f) f
#else
#define I8MM_FN(f) NULL
#endif
#if defined(FFN_MEASURE_HAVE_SVE) && defined(__aarch64__)
#define SVE_FN(f) f
#else
#define SVE_FN(f) NULL
#endif

static const peak_desc g_peaks[FFN_PEAK_COUNT] = {
    [FFN_PEAK_FP32_PORTABLE] = {FFN__FP32_PORTABLE_FLOPS_PER_ITER, ffn__peak_fp32_portable},
    [FFN_PEAK_FP32_AVX2] = {FFN__FP32_AVX2_FLOPS_PER_ITER, X86_FN(ffn__peak_fp32_avx2)},
    [FFN_PEAK_FP32_AVX512] = {FFN__FP32_AVX512_FLOPS_PER_ITER, X86_FN(ffn__peak_fp32_avx512)},
    [FFN_PEAK_BF16_AVX512] = {FFN__BF16_AVX512_FLOPS_PER_ITER, X86_FN(ffn__peak_bf16_avx512)},
    [FFN_PEAK_FP16_AVX512] = {FFN__FP16_AVX512_FLOPS_PER_ITER, FP16_FN(ffn__peak_fp16_avx512)},
    [FFN_PEAK_INT8_VNNI] = {FFN__INT8_VNNI_FLOPS_PER_ITER, X86_FN(ffn__peak_int8_vnni)},
    [FFN_PEAK_BF16_AMX] = {FFN__BF16_AMX_FLOPS_PER_ITER, AMX_FN(ffn__peak_bf16_amx)},
    [FFN_PEAK_INT8_AMX] = {FFN__INT8_AMX_FLOPS_PER_ITER, AMX_FN(ffn__peak_int8_amx)},
    [FFN_PEAK_FP32_NEON] = {FFN__FP32_NEON_FLOPS_PER_ITER, NEON_FN(ffn__peak_fp32_neon)},
    [FFN_PEAK_FP16_NEON] = {FFN__FP16_NEON_FLOPS_PER_ITER, NEON_FN(ffn__peak_fp16_neon)},
    [FFN_PEAK_INT8_AVX_VNNI] = {FFN__INT8_AVX_VNNI_FLOPS_PER_ITER,
                                AVX_VNNI_FN(ffn__peak_int8_avx_vnni)},
    [FFN_PEAK_INT8_AVX2] = {FFN__INT8_AVX2_FLOPS_PER_ITER, X86_FN(ffn__peak_int8_avx2)},
    [FFN_PEAK_INT8_NEON_SDOT] = {FFN__INT8_NEON_SDOT_FLOPS_PER_ITER,
                                 SDOT_FN(ffn__peak_int8_neon_sdot)},
    [FFN_PEAK_INT8_NEON_I8MM] = {FFN__INT8_NEON_I8MM_FLOPS_PER_ITER,
                                 I8MM_FN(ffn__peak_int8_neon_i8mm)},
    [FFN_PEAK_INT8_PORTABLE] = {FFN__INT8_PORTABLE_FLOPS_PER_ITER, ffn__peak_int8_portable},
    [FFN_PEAK_INT8_SVE_SDOT] = {FFN__INT8_SVE_SDOT_FLOPS_PER_VL_BYTE,
                                SVE_FN(ffn__peak_int8_sve_sdot), .per_vl_byte = true},
    [FFN_PEAK_FP32_SVE] = {FFN__FP32_SVE_FLOPS_PER_VL_BYTE, SVE_FN(ffn__peak_fp32_sve),
                           .per_vl_byte = true},
};

double ffn_peak_flops_per_iter(ffn_peak_kind k)
{
    if ((unsigned)k >= FFN_PEAK_COUNT) return 0.0;
    const peak_desc *p = &g_peaks[k];
    return p->per_vl_byte ? p->flops_per_iter * (double)ffn_cpu_sve_vl_bytes() : p->flops_per_iter;
}

double ffn_peak_run(ffn_peak_kind k, uint64_t iters)
{
    return ffn_peak_available(k) ? g_peaks[k].fn(iters) : 0.0;
}

bool ffn_peak_available(ffn_peak_kind k)
{
    if ((unsigned)k >= FFN_PEAK_COUNT || !g_peaks[k].fn) return false;
    const ffn_cpu_caps *c = ffn_cpu_caps_get();
    switch (k) {
    case FFN_PEAK_FP32_PORTABLE:
    case FFN_PEAK_INT8_PORTABLE:
        return true;
    case FFN_PEAK_FP32_AVX2:
        return c->fma;
    case FFN_PEAK_FP32_AVX512:
        return c->avx512f;
    case FFN_PEAK_BF16_AVX512:
        return c->avx512_bf16;
    case FFN_PEAK_FP16_AVX512:
        return c->avx512_fp16;
    case FFN_PEAK_INT8_VNNI:
        return c->avx512_vnni;
    case FFN_PEAK_INT8_AVX_VNNI:
        return (ffn_cpu_features() & FFN_CPU_AVX_VNNI) != 0;
    case FFN_PEAK_INT8_AVX2:
        return (ffn_cpu_features() & FFN_CPU_AVX2) != 0;
    case FFN_PEAK_INT8_NEON_SDOT:
        return (ffn_cpu_features() & FFN_CPU_ARM_DOTPROD) != 0;
    case FFN_PEAK_INT8_NEON_I8MM:
        return (ffn_cpu_features() & FFN_CPU_ARM_I8MM) != 0;
    case FFN_PEAK_INT8_SVE_SDOT:
    case FFN_PEAK_FP32_SVE:
        return (ffn_cpu_features() & FFN_CPU_SVE) != 0 && ffn_cpu_sve_vl_bytes() > 0;
#if defined(FFN_MEASURE_HAVE_AMX)
    case FFN_PEAK_BF16_AMX:
        return c->amx_bf16 && ffn__amx_enable() == 0;
    case FFN_PEAK_INT8_AMX:
        return c->amx_int8 && ffn__amx_enable() == 0;
#endif
    case FFN_PEAK_FP32_NEON:
        return c->neon;
    case FFN_PEAK_FP16_NEON:
        return c->neon_fp16;
    default:
        return false;
    }
}

typedef struct peak_ctx {
    ffn__peak_fn fn;
    uint64_t iters;
    int threads;
    pthread_barrier_t bar;
    double t0[1024], t1[1024];
    volatile double sink;
} peak_ctx;

static void peak_worker(void *arg, int tid, int nthreads)
{
    peak_ctx *c = arg;
    (void)nthreads;
    pthread_barrier_wait(&c->bar);
    c->t0[tid] = ffn_time_now_s();
    const double s = c->fn(c->iters);
    c->t1[tid] = ffn_time_now_s();
    if (tid == 0) c->sink = s;
}

/* One sample: wall time from the first thread's start to the last thread's end. */
static int peak_sample(void *arg, double *out)
{
    peak_ctx *c = arg;
    if (pthread_barrier_init(&c->bar, NULL, (unsigned)c->threads) != 0) return FFN_ENOMEM;
    const int rc = ffn__team_run(c->threads, peak_worker, c);
    pthread_barrier_destroy(&c->bar);
    if (rc < 0) return rc;
    double t0 = c->t0[0], t1 = c->t1[0];
    for (int i = 1; i < c->threads; i++) {
        t0 = fmin(t0, c->t0[i]);
        t1 = fmax(t1, c->t1[i]);
    }
    *out = t1 - t0;
    return 0;
}

int ffn_peak_measure(ffn_peak_kind k, int threads, double sample_s, double budget_s,
                     ffn_peak_result *out)
{
    if (!out || threads < 1 || threads > 1024 || (unsigned)k >= FFN_PEAK_COUNT || !(sample_s > 0) ||
        !(budget_s > 0))
        return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    out->kind = k;
    out->threads = threads;
    if (!ffn_peak_available(k)) return FFN_EUNSUPPORTED;
    peak_ctx *c = calloc(1, sizeof *c);
    if (!c) return FFN_ENOMEM;
    c->fn = g_peaks[k].fn;
    c->threads = threads;
    /* size the iteration count on one pinned thread: grow until a run takes >= sample_s / 8 */
    c->threads = 1;
    c->iters = 256;
    double t = 0;
    int rc = 0;
    for (;;) {
        rc = peak_sample(c, &t);
        if (rc < 0) goto done;
        if (t >= sample_s / 8 || c->iters > (UINT64_C(1) << 40)) break;
        c->iters *= 4;
    }
    c->iters = (uint64_t)fmax(1.0, (double)c->iters * sample_s / fmax(t, 1e-9));
    c->threads = threads;
    const ffn_repeat_opts ro = {.warmup = 1,
                                .batch = 3,
                                .window = 3,
                                .rel_spread = 0.01,
                                .min_samples = 5,
                                .max_samples = 200,
                                .time_cap_s = budget_s};
    ffn_repeat_result rr;
    rc = ffn_repeat_until_stable(peak_sample, c, &ro, &rr);
    if (rc < 0) goto done;
    const double flops = (double)c->iters * (double)threads * ffn_peak_flops_per_iter(k);
    out->flops_per_s = flops / rr.stats.min;
    out->median_flops_per_s = flops / rr.stats.median;
    out->iters = c->iters;
    out->samples = rr.stats.n;
    out->stable = rr.stable;
done:
    free(c);
    return rc;
}
