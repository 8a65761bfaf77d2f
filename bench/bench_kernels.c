/* bench_kernels: ffnroof's dense FFN kernels side by side with the library peers (OpenBLAS and
 * oneDNN, through ffn_peers when it was built) in one run, against this host's measured fp32
 * FMA peak and read-only memory bandwidth.
 *
 *   bench_kernels [--threads N] [--reps N] [--case prefill|decode|qdecode|qprefill|all]
 *                 [--act NAME] [--shape T,d,f] [--group G] [--no-peers] [--verbose]
 *                 [--kernels NAME,...]
 *
 * Kernels: those of the ISA level dispatch selects (FFNROOF_ISA honoured: FFNROOF_ISA=avx2 on
 * an AVX-512 host runs the AVX2 kernels), or those whose names contain a word of --kernels
 * (e.g. --kernels portable,ref: the portable kernel beside the scalar reference). The FMA probe
 * is that level's: zmm chains at avx512 and above, ymm chains at avx2.
 *
 * Cases: prefill T=512, d=2048, f=5632; decode T=1, d=4096, f=11008; SwiGLU unless
 * --act. All implementations of a case are prepared first and then timed in interleaved
 * rounds (one call of each per round, in a fresh random order each round, 150 ms apart so
 * spinning runtime threads park); each figure is the median over --reps rounds after two
 * warm-up rounds, and ratios and fractions are also given "paired": the median over rounds of
 * the ratio within a round. --verbose prints every round's times. Interleaving matters: this
 * project's VM shows read bandwidth drifting between 6 and 26 GB/s from one run to the next.
 * For decode the weights are rotated over enough packed copies that the working set is at
 * least twice the last-level cache (sysconf), and a read-only probe over a buffer of
 * max(1 GiB, 2 x LLC) runs in every round: decode bandwidth is reported as a fraction of the
 * probe's median. Likewise prefill runs an fp32 FMA probe (an FMA-chain loop, 16 independent
 * zmm accumulators per thread, on every thread) in every round and reports FLOP/s as a
 * fraction of its median, so a busy host lowers both sides alike (the header's peak and
 * bandwidth lines are best-of-5 figures taken before the rounds, for reference). FLOPs and
 * bytes are ffn_kernel_flops/ffn_kernel_bytes (the simulator's count) for every
 * implementation.
 *
 * Quantized cases, the best kernel of each format at the selected level:
 *  - qdecode: T=1, d=4096, f=11008: our fp32 decode beside W8A32, W8A16, W4A32 and W4A16 (int4
 *    groups of --group G, default 128, symmetric; and the AVX-512 W4A16 kernel where the best is
 *    the AVX512-BF16 one), each as a fraction of the read probe (the bytes include the scales:
 *    ffn_kernel_bytes) and as a ratio to the fp32 decode;
 *  - qprefill: T=512 and the prefill shape: our bf16 prefill beside W8A8 (the best W8A8 kernel,
 *    and the AVX-512 one where the best is AMX), W4A16 (int4 as qdecode; and the AVX-512
 *    dequantizing one where the best is the AVX512-BF16 pair engine) and oneDNN's int8 FFN
 *    (u8s8s32 matmuls: the ffn_peers int8 peer), ratios to our bf16 prefill and to oneDNN
 *    int8. */
#define _DEFAULT_SOURCE 1
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"
#include "ffnroof/profile.h"
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
#include "ffnroof/peers.h"
#endif

#include "common/bench_common.h"

/* ---- FFN timing -------------------------------------------------------------------------- */

typedef struct weights {
    ffn_kshape s;
    float *wg, *wu, *wd, *bg, *bu, *bd;
    ffn_kweights kw;
} weights;

static bool is_gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

static void weights_init(weights *w, size_t d, size_t f, ffn_act act)
{
    uint64_t st = 88172645463325252ull;
    memset(w, 0, sizeof *w);
    w->s = (ffn_kshape){.d = d, .f = f, .act = act, .bias = false};
    w->wg = bench_rand_array(d * f, 1.0f / sqrtf((float)d), &st);
    w->wu = is_gated(act) ? bench_rand_array(d * f, 1.0f / sqrtf((float)d), &st) : NULL;
    w->wd = bench_rand_array(f * d, 1.0f / sqrtf((float)f), &st);
    w->kw = (ffn_kweights){w->wg, w->wu, w->wd, NULL, NULL, NULL};
}

/* One implementation under test: ours (a kernel), a peer, or the read-bandwidth probe. */
typedef struct impl {
    char name[64];
    ffn_kshape s; /* the case's shape, with the group of an int4 kernel */
    int kind;     /* 0 kernel, 1 peer, 2 read probe, 3 FMA probe */
    const ffn_kernel *k, *count_k;
    void **packed;
    int copies;
    void *ws;
    size_t wb;
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
    ffn_peer **peers;
#endif
    uint64_t *probe;
    size_t probe_bytes;
    double *ts;
} impl;

static int call_once(impl *m, int i, size_t T, const float *x, float *y, int nt)
{
    const int c = (i + 2) % m->copies;
    if (m->kind == 0) return m->k->forward(&m->s, m->packed[c], T, x, y, m->ws, m->wb, nt);
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
    if (m->kind == 1) return ffn_peer_forward(m->peers[c], T, x, y);
#endif
    if (m->kind == 2) return bench_probe_read(m->probe, m->probe_bytes, nt) == 42 ? 1 : 0;
    if (m->kind == 3) return bench_fma_probe(nt, BENCH_FMA_PROBE_ITERS) == 42.0 ? 1 : 0;
    return -1;
}

/* pr: the median over rounds of (probe time / this time), for the paired fraction. */
static void print_impl(const impl *m, size_t T, double t, double peak, double probe_bps,
                       double probe_t, double pr, bool decode)
{
    const ffn_kshape *s = &m->s;
    const double gflops = ffn_kernel_flops(s, T) / t * 1e-9;
    const double gbps = ffn_kernel_bytes(m->count_k, s, T) / t * 1e-9;
    printf("  %-30s %9.3f ms %8.1f GFLOP/s %7.2f GB/s", m->name, t * 1e3, gflops, gbps);
    /* paired: this call's rate over the probe's rate in the same round, median over rounds */
    if (decode && probe_bps > 0)
        printf("  %5.1f%% of read BW (paired %5.1f%%)", 100.0 * gbps * 1e9 / probe_bps,
               100.0 * gbps * 1e9 * t / (probe_bps * probe_t) * pr);
    else if (!decode && peak > 0)
        printf("  %5.1f%% of fp32 FMA peak (paired %5.1f%%)", 100.0 * gflops * 1e9 / peak,
               100.0 * gflops * 1e9 * t / (peak * probe_t) * pr);
    printf("\n");
}

/* Every implementation is prepared first, then timed in interleaved rounds (one call of each
 * per round, with a pause between calls so the previous runtime's spinning threads park):
 * on a shared VM whose bandwidth drifts between runs, only interleaved figures compare. */
/* --kernels a,b,...: the kernels whose names contain one of the words (default: every kernel
 * this CPU runs at the selected ISA level, i.e. ffn_kernel_best's choice per dtype plus the
 * other engines of the same level, but not the scalar reference). */
static const char *kernel_filter;

static bool kernel_wanted(const ffn_kernel *k)
{
    if (!kernel_filter) {
        if (k->isa == FFN_ISA_REF) return false;
        if (k->wdtype == FFN_DT_INT8 || k->wdtype == FFN_DT_INT4) return false; /* q cases */
        ffn_isa lv = FFN_ISA_PORTABLE;
        ffn_isa_selected(&lv, NULL);
        const ffn_kernel *b = NULL;
        if (ffn_kernel_best(k->wdtype, &b, NULL) == 0 && b == k) return true;
        return k->isa == lv && (ffn_kernel_requires(k) & ~ffn_cpu_features()) == 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", kernel_filter);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strstr(k->name, t)) return true;
    return false;
}

/* The implementations of a quantized case (1 qdecode, 2 qprefill; see the header), appended to
 * ms: our baseline first (fp32 decode, bf16 prefill). Returns the count. */
static int quant_impls(int qcase, const ffn_kshape *s0, unsigned group, impl *ms)
{
    static const struct {
        ffn_dtype w, a;
    } dec[] = {{FFN_DT_FP32, FFN_DT_FP32},
               {FFN_DT_INT8, FFN_DT_FP32},
               {FFN_DT_INT8, FFN_DT_BF16},
               {FFN_DT_INT4, FFN_DT_FP32},
               {FFN_DT_INT4, FFN_DT_BF16}},
      pre[] = {{FFN_DT_BF16, FFN_DT_FP32}, {FFN_DT_INT8, FFN_DT_INT8}, {FFN_DT_INT4, FFN_DT_BF16}};
    const size_t nf = qcase == 1 ? sizeof dec / sizeof dec[0] : sizeof pre / sizeof pre[0];
    int n = 0;
    for (size_t i = 0; i < nf; i++) {
        const ffn_dtype wd = qcase == 1 ? dec[i].w : pre[i].w,
                        ad = qcase == 1 ? dec[i].a : pre[i].a;
        const ffn_kernel *k = NULL;
        ffn_diag dg;
        if (ffn_kernel_best_q(wd, ad, &k, &dg)) {
            fprintf(stderr, "bench_kernels: no %s kernel with %s activations: %s\n",
                    ffn_dtype_name(wd), ffn_dtype_name(ad), dg.msg);
            continue;
        }
        for (int pass = 0; pass < 2; pass++) {
            /* W8A8: the AVX-512 (VNNI) tile beside an AMX choice; W4A16: the AVX-512 VPERMPS
             * stream beside the VDPBF16PS or VFMADD231PH one */
            if (pass == 1) {
                const bool i8amx = wd == FFN_DT_INT8 && ad == FFN_DT_INT8 && k->isa == FFN_ISA_AMX;
                const bool w4bf =
                    wd == FFN_DT_INT4 && ad == FFN_DT_BF16 && k->isa == FFN_ISA_AVX512_BF16;
                const bool w4h = wd == FFN_DT_INT4 && ad == FFN_DT_BF16 &&
                                 (ffn_kernel_requires(k) & FFN_CPU_AVX512_FP16);
                if (!i8amx && !w4bf && !w4h) break;
                const uint64_t feat = ffn_cpu_features() & ~FFN_CPU_AVX512_FP16;
                if (ffn_kernel_for_cpu_q(feat, ffn_cpu_tuning(), FFN_ISA_AVX512, wd, ad, &k, NULL))
                    break;
            }
            impl *m = &ms[n++];
            memset(m, 0, sizeof *m);
            m->s = *s0;
            if (wd == FFN_DT_INT4) m->s.group = group;
            snprintf(m->name, sizeof m->name, "%s", k->name);
            m->k = m->count_k = k;
        }
    }
    return n;
}

static void run_case(const char *label, size_t T, size_t d, size_t f, ffn_act act, int nt, int reps,
                     bool peers, double peak, bool verbose, int qcase, unsigned group)
{
    const bool decode = T <= 4;
    weights w;
    weights_init(&w, d, f, act);
    uint64_t st = 12345;
    float *x = bench_rand_array(T * d, 1.0f, &st), *y = bench_xmalloc(T * d * sizeof *y);
    const ffn_kernel *ref32 = NULL, *ref16 = NULL;
    ffn_kernel_get(FFN_ISA_REF, FFN_DT_FP32, &ref32, NULL);
    ffn_kernel_get(FFN_ISA_REF, FFN_DT_BF16, &ref16, NULL);
    const size_t llc = bench_llc_bytes();
    printf("\n%s: T=%zu d=%zu f=%zu act=%s threads=%d, median of %d interleaved rounds\n", label, T,
           d, f, ffn_act_name(act), nt, reps);

    /* Decode: every implementation rotates over at least DECODE_COPIES copies of its weights
     * (and enough for twice the LLC), and the copies are allocated round-robin across the
     * implementations (copy 0 of each, then copy 1 of each, ...): on this VM the read bandwidth
     * of a buffer depends on where it landed (in a standalone test the first-allocated of 12
     * 512 MiB buffers read ~1.6x slower than the rest in two of three runs, and the two bf16
     * kernels, identical decode code on identical bytes, measured 1.35x apart), so no
     * implementation should own all the early, or all the late, allocations. */
    enum { DECODE_COPIES = 3 };
    impl ms[16];
    int n = 0;
    memset(ms, 0, sizeof ms);
    const ffn_kernel *ks[256];
    const size_t nk = qcase ? 0 : ffn_kernel_list(ks, 256);
    for (size_t i = 0; i < nk && i < 256 && n < 12; i++) {
        if (!kernel_wanted(ks[i])) continue;
        impl *m = &ms[n++];
        m->s = w.s;
        if (ks[i]->wdtype == FFN_DT_INT4) m->s.group = group;
        snprintf(m->name, sizeof m->name, "%s", ks[i]->name);
        m->k = m->count_k = ks[i];
    }
    if (qcase) {
        printf("  (int4: groups of %u along K, symmetric, bf16 scales)\n", group);
        n = quant_impls(qcase, &w.s, group, ms);
    }
    const int first_peer = n;
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
    const struct {
        ffn_peer_lib lib;
        ffn_dtype dt;
    } pl[] = {{FFN_PEER_OPENBLAS, FFN_DT_FP32},
              {FFN_PEER_ONEDNN, FFN_DT_FP32},
              {FFN_PEER_ONEDNN, FFN_DT_BF16},
              {FFN_PEER_ONEDNN, FFN_DT_INT8}};
    ffn_peer_lib peer_lib[16];
    ffn_dtype peer_dt[16];
    const ffn_kernel *ref8 = NULL;
    ffn_kernel_get_q(FFN_ISA_REF, FFN_DT_INT8, FFN_DT_INT8, &ref8, NULL);
    if (qcase == 2 && peers && !ffn_peer_available(FFN_PEER_ONEDNN))
        printf("  (no oneDNN int8 peer: ffnroof was built without oneDNN)\n");
    if (peers && qcase != 1) {
        for (size_t i = 0; i < sizeof pl / sizeof pl[0]; i++) {
            if (!ffn_peer_available(pl[i].lib)) continue;
            if ((qcase == 2) != (pl[i].dt == FFN_DT_INT8)) continue; /* qprefill: int8 only */
            impl *m = &ms[n];
            m->kind = 1;
            m->s = w.s;
            m->count_k = pl[i].dt == FFN_DT_BF16 ? ref16 : pl[i].dt == FFN_DT_INT8 ? ref8 : ref32;
            peer_lib[n] = pl[i].lib;
            peer_dt[n] = pl[i].dt;
            n++;
        }
    }
#else
    (void)peers;
#endif
    int max_copies = 1;
    bool failed[16] = {false};
    for (int i = 0; i < n; i++) {
        impl *m = &ms[i];
        const double wbytes = ffn_kernel_bytes(m->count_k, &m->s, 0);
        m->copies = decode ? (int)ceil(2.0 * (double)llc / wbytes) : 1;
        if (decode && m->copies < DECODE_COPIES) m->copies = DECODE_COPIES;
        if (m->copies > max_copies) max_copies = m->copies;
        if (m->kind == 0) {
            m->packed = calloc((size_t)m->copies, sizeof *m->packed);
            m->wb = m->k->workspace_bytes(&m->s, T, nt);
            m->ws = bench_xmalloc(m->wb);
        }
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
        else
            m->peers = calloc((size_t)m->copies, sizeof *m->peers);
#endif
    }
    for (int c = 0; c < max_copies; c++)
        for (int i = 0; i < n; i++) {
            impl *m = &ms[i];
            if (failed[i] || c >= m->copies) continue;
            if (m->kind == 0) {
                const size_t pb = m->k->packed_bytes(&m->s);
                m->packed[c] = bench_xmalloc(pb);
                if (m->k->pack(&m->s, &w.kw, m->packed[c], pb)) {
                    fprintf(stderr, "%s: pack failed\n", m->name);
                    failed[i] = true;
                }
                continue;
            }
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
            ffn_diag dg;
            if (ffn_peer_init(peer_lib[i], peer_dt[i], &w.s, &w.kw, T, nt, &m->peers[c], &dg)) {
                fprintf(stderr, "peer %s: %s\n", ffn_peer_lib_name(peer_lib[i]), dg.msg);
                failed[i] = true;
                continue;
            }
            if (c == 0)
                snprintf(m->name, sizeof m->name, "peer %s %s (%.40s)",
                         ffn_peer_lib_name(peer_lib[i]), ffn_dtype_name(peer_dt[i]),
                         ffn_peer_describe(m->peers[0]));
#endif
        }
    /* Drop what failed to prepare (freeing what it got). */
    int kept = 0, first_peer_kept = first_peer;
    for (int i = 0; i < n; i++) {
        if (!failed[i]) {
            ms[kept++] = ms[i];
            continue;
        }
        if (i < first_peer) first_peer_kept--;
        for (int c = 0; ms[i].packed && c < ms[i].copies; c++)
            free(ms[i].packed[c]);
        free(ms[i].packed);
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
        for (int c = 0; ms[i].peers && c < ms[i].copies; c++)
            if (ms[i].peers[c]) ffn_peer_free(ms[i].peers[c]);
        free(ms[i].peers);
#endif
        free(ms[i].ws);
    }
    n = kept;
    memset(&ms[n], 0, sizeof ms[0]);
    int probe = -1;
    if (!decode) {
        impl *m = &ms[n];
        m->kind = 3;
        m->copies = 1;
        snprintf(m->name, sizeof m->name, "fp32 FMA probe");
        probe = n++;
    } else {
        impl *m = &ms[n];
        m->kind = 2;
        m->copies = 1;
        m->probe_bytes = (2 * llc < ((size_t)1 << 30) ? (size_t)1 << 30 : 2 * llc) / 65536 * 65536;
        m->probe = bench_xmalloc(m->probe_bytes);
        for (size_t j = 0; j < m->probe_bytes / 8; j++)
            m->probe[j] = j;
        snprintf(m->name, sizeof m->name, "read-only probe (%zu MiB)", m->probe_bytes >> 20);
        probe = n++;
    }
    for (int i = 0; i < n; i++)
        ms[i].ts = bench_xmalloc((size_t)reps * sizeof(double));
    /* Every copy is read once before the timed rounds. On a Zen 5 microVM the
     * first read of a freshly packed buffer ran 2-3x slower than later ones (w8a32 decode:
     * 15.3, 13.0, 11.9 ... ms over its 8 copies, then 5.0 ms each), and with a 508 MiB L3
     * reported (the whole socket's) the rotation is 8-16 copies long: the two warm-up rounds
     * below read only copies 0 and 1, so most timed calls were first reads. */
    for (int c = 0; c < max_copies; c++)
        for (int i = 0; i < n; i++)
            if (c < ms[i].copies && ms[i].copies > 1) (void)call_once(&ms[i], c - 2, T, x, y, nt);
    /* Each round calls the implementations in a fresh random order (fixed seed): on this VM a
     * fixed order (even rotated, which keeps each one's predecessor) measured the same decode
     * code 1.45x apart in two neighbouring slots. */
    uint64_t ord_st = 0x2545f4914f6cdd1dull;
    int order[16];
    for (int r = -2; r < reps; r++) {
        for (int k = 0; k < n; k++)
            order[k] = k;
        for (int k = n - 1; k > 0; k--) {
            ord_st ^= ord_st << 13;
            ord_st ^= ord_st >> 7;
            ord_st ^= ord_st << 17;
            const int j = (int)(ord_st % (uint64_t)(k + 1)), tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (int k = 0; k < n; k++) {
            const int i = order[k];
            usleep(150000); /* OpenBLAS threads spin ~2^28 cycles after a call */
            const double t0 = ffn_time_now_s();
            const int rc = call_once(&ms[i], r, T, x, y, nt);
            const double t = ffn_time_now_s() - t0;
            if (rc < 0) fprintf(stderr, "%s: call failed (%d)\n", ms[i].name, rc);
            if (r >= 0) ms[i].ts[r] = t;
        }
    }
    if (verbose)
        for (int i = 0; i < n; i++) {
            printf("  rounds (ms) %-30.30s", ms[i].name);
            for (int r = 0; r < reps; r++)
                printf(" %.1f", ms[i].ts[r] * 1e3);
            printf("\n");
        }
    double med[16];
    for (int i = 0; i < n; i++)
        med[i] = bench_median(ms[i].ts, reps);
    const double probe_bps = decode ? (double)ms[probe].probe_bytes / med[probe] : 0;
    const double probe_flops =
        decode ? 0 : (double)nt * BENCH_FMA_PROBE_ITERS * bench_fma_flops_per_iter() / med[probe];
    if (decode)
        printf("  %-30s %9.3f ms %28.2f GB/s\n", ms[probe].name, med[probe] * 1e3,
               probe_bps * 1e-9);
    else
        printf("  %-30s %9.3f ms %8.1f GFLOP/s (peak measured in the same rounds)\n",
               ms[probe].name, med[probe] * 1e3, probe_flops * 1e-9);
    (void)peak;
    for (int i = 0; i < n; i++)
        if (i != probe)
            print_impl(&ms[i], T, med[i], probe_flops, probe_bps, med[probe],
                       bench_paired_ratio(ms[probe].ts, ms[i].ts, reps), decode);
    int f32 = -1;
    for (int i = 0; i < first_peer_kept; i++)
        if (ms[i].k->wdtype == FFN_DT_FP32) f32 = i;
    if (qcase && first_peer_kept > 0) /* the case's baseline: fp32 decode, bf16 prefill */
        f32 = ms[0].k->wdtype == (qcase == 1 ? FFN_DT_FP32 : FFN_DT_BF16) ? 0 : -1;
    printf("  ratios (other time / our time; > 1: ours is faster): of the medians, and the median "
           "of the per-round ratios\n");
    for (int i = 0; i < first_peer_kept; i++) {
        for (int j = first_peer_kept; j < n; j++)
            if (j != probe)
                printf("    %-28s vs %-40.40s %6.2fx %6.2fx\n", ms[i].name, ms[j].name,
                       med[j] / med[i], bench_paired_ratio(ms[j].ts, ms[i].ts, reps));
        if (f32 >= 0 && i != f32)
            printf("    %-28s vs %-40.40s %6.2fx %6.2fx\n", ms[i].name, ms[f32].name,
                   med[f32] / med[i], bench_paired_ratio(ms[f32].ts, ms[i].ts, reps));
        for (int j = i + 1; j < first_peer_kept; j++) /* two kernels of one format */
            if (ms[j].k->wdtype == ms[i].k->wdtype && ms[j].k->adtype == ms[i].k->adtype)
                printf("    %-28s vs %-40.40s %6.2fx %6.2fx\n", ms[i].name, ms[j].name,
                       med[j] / med[i], bench_paired_ratio(ms[j].ts, ms[i].ts, reps));
    }
    for (int i = 0; i < n; i++) {
        for (int c = 0; ms[i].packed && c < ms[i].copies; c++)
            free(ms[i].packed[c]);
        free(ms[i].packed);
#if defined(FFN_BENCH_HAVE_FFN_PEERS)
        for (int c = 0; ms[i].peers && c < ms[i].copies; c++)
            ffn_peer_free(ms[i].peers[c]);
        free(ms[i].peers);
#endif
        free(ms[i].ws);
        free(ms[i].probe);
        free(ms[i].ts);
    }
    free(x);
    free(y);
    free(w.wg);
    free(w.wu);
    free(w.wd);
}

int main(int argc, char **argv)
{
    int nt = 0, reps = 9;
    const char *which = "all";
    bool peers = true, verbose = false;
    ffn_act act = FFN_ACT_SWIGLU;
    size_t shape[3] = {0, 0, 0};
    unsigned group = 128;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--verbose"))
            verbose = true;
        else if (!strcmp(argv[i], "--no-peers"))
            peers = false;
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            kernel_filter = argv[++i];
        else if (!strcmp(argv[i], "--group") && i + 1 < argc) {
            group = (unsigned)atoi(argv[++i]);
            if (group != 32 && group != 64 && group != 128) {
                fprintf(stderr, "bench_kernels: --group takes 32, 64 or 128\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--act") && i + 1 < argc) {
            if (ffn_act_parse(argv[++i], &act)) {
                fprintf(stderr, "bench_kernels: unknown activation '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (sscanf(argv[++i], "%zu,%zu,%zu", &shape[0], &shape[1], &shape[2]) != 3) {
                fprintf(stderr, "bench_kernels: --shape wants T,d,f\n");
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: bench_kernels [--threads N] [--reps N]\n"
                    "                     [--case prefill|decode|qdecode|qprefill|all]\n"
                    "                     [--act NAME] [--shape T,d,f] [--group G] [--no-peers]\n"
                    "                     [--kernels NAME,...]\n");
            return 2;
        }
    }
    if (nt <= 0) nt = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (reps < 1) reps = 1;
    if (reps > 256) reps = 256;

    bench_fma_choose();
    const double peak = bench_fma_peak(nt);
    size_t bw_buf = 0;
    const double bw = bench_read_bw(nt, &bw_buf);
    printf("host: %d threads, LLC %zu MiB (sysconf)\n", nt, bench_llc_bytes() >> 20);
    printf("  fp32 FMA peak      %9.1f GFLOP/s (%s chains, best of 5)\n", peak * 1e-9,
           bench_fma_name());
    printf("  read bandwidth     %9.1f GB/s (read-only sum over %zu MiB, best of 5)\n", bw * 1e-9,
           bw_buf >> 20);
    const char *isa_env = getenv("FFNROOF_ISA");
    printf("  FFNROOF_ISA=%s  OPENBLAS_CORETYPE=%s\n", isa_env ? isa_env : "(unset)",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)");

    if (shape[0] || shape[1]) {
        run_case("custom", shape[0], shape[1], shape[2], act, nt, reps, peers, peak, verbose, 0,
                 group);
        return 0;
    }
    if (!strcmp(which, "all") || !strcmp(which, "prefill"))
        run_case("prefill", 512, 2048, 5632, act, nt, reps, peers, peak, verbose, 0, group);
    if (!strcmp(which, "all") || !strcmp(which, "decode"))
        run_case("decode", 1, 4096, 11008, act, nt, reps, peers, peak, verbose, 0, group);
    if (!strcmp(which, "all") || !strcmp(which, "qprefill"))
        run_case("qprefill", 512, 2048, 5632, act, nt, reps, peers, peak, verbose, 2, group);
    if (!strcmp(which, "all") || !strcmp(which, "qdecode"))
        run_case("qdecode", 1, 4096, 11008, act, nt, reps, peers, peak, verbose, 1, group);
    return 0;
}
