/* The bench runner (include/ffnroof/bench.h): on a prepared layer (bench_layer.c: random weights,
 * packed once), times ffnroof's kernel and the peers in interleaved rounds (one call of each per
 * round, so that a drifting memory bandwidth on a shared host hits all of them alike) until the
 * timing of ours is stable, with the weights flushed from the caches before every call; reads
 * the counters around every timed call of ours, checks against the reference kernel on request
 * and costs the same op with the simulator (bench_predict.c). kernel_fit.c turns kernel runs at
 * a few calibration shapes into the efficiency parameters of a calibrated spec. */
#define _GNU_SOURCE 1

#include "ffnroof/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define FFN_BENCH_CLFLUSH 1
#endif
#include <sched.h>
#include <unistd.h>

#define MAX_SAMPLES 400
/* Peers keep their own copy of the weights, which we cannot flush line by line: they are
 * evicted by writing a buffer larger than the last-level cache this VM actually has (the
 * read-bandwidth sweep drops to DRAM speed between 64 and 256 MiB here; sysfs claims 480 MiB
 * and is not believed). */
#define EVICT_BYTES ((size_t)256 << 20)

/* ---- small helpers ----------------------------------------------------------------------- */

#if defined(FFN_BENCH_CLFLUSH)
/* CLFLUSHOPT (CPUID.(EAX=7,ECX=0):EBX bit 23): the same eviction as CLFLUSH but not ordered
 * line by line. On a family 6 model 207 VM CLFLUSH took 0.8 s over 300 MiB of weights and
 * CLFLUSHOPT 16 ms, the lines read back at the same DRAM speed after either (a test): every cold
 * sample of a large layer spent most of its time flushing. */
static bool have_clflushopt(void)
{
    static int have = -1;
    if (have < 0) {
        unsigned a, b, c, d;
        have = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) ? 1 : 0;
    }
    return have == 1;
}

__attribute__((target("clflushopt"))) static void flush_opt(char *c, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        _mm_clflushopt(c + i);
    _mm_mfence(); /* the flushes complete before the call's loads (SFENCE orders stores only) */
}
#endif

static void flush_lines(const void *p, size_t n)
{
#if defined(FFN_BENCH_CLFLUSH)
    char *c = (char *)(uintptr_t)p; /* flushing does not write the bytes */
    if (have_clflushopt()) {
        flush_opt(c, n);
        return;
    }
    for (size_t i = 0; i < n; i += 64)
        _mm_clflush(c + i);
    _mm_mfence();
#else
    (void)p;
    (void)n;
#endif
}

/* "All cores": the CPUs this process may run on. */
int ffn__bench_threads(int t)
{
    if (t > 0) return t;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int get_kernel(const ffn_bench_case *c, const ffn_bench_opts *o, const ffn_kernel **k,
                      ffn_diag *diag)
{
    if (o && o->isa_set) return ffn_kernel_get_q(o->isa, c->wdtype, c->adtype, k, diag);
    return ffn_kernel_best_q(c->wdtype, c->adtype, k, diag);
}

/* The quantized formats a case may ask for: int4 groups of 32, 64 or 128 dividing d and f,
 * int8 without groups, bf16 or int8 activations only with int8/int4 weights, int8 with int8. */
static int check_format(const ffn_bench_case *c, ffn_diag *diag)
{
    const bool q = c->wdtype == FFN_DT_INT8 || c->wdtype == FFN_DT_INT4;
    const unsigned G = c->shape.group;
    if (c->wdtype == FFN_DT_INT4) {
        if ((G != 32 && G != 64 && G != 128) || c->shape.d % G || c->shape.f % G)
            return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                                "int4 group size %u does not suit d = %zu, f = %zu: groups are "
                                "32, 64 or 128 weights and must divide both",
                                G, c->shape.d, c->shape.f);
    } else if (G || c->shape.zero_point) {
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "a group size and zero points go with int4 weights only");
    }
    if (c->adtype != FFN_DT_FP32 && !q)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "%s activations go with int8 or int4 weights (float kernels multiply "
                            "fp32 activations)",
                            ffn_dtype_name(c->adtype) ? ffn_dtype_name(c->adtype) : "?");
    if (c->adtype != FFN_DT_FP32 && c->adtype != FFN_DT_BF16 && c->adtype != FFN_DT_INT8)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "activations are fp32, bf16 or int8");
    if (c->adtype == FFN_DT_INT8 && c->wdtype != FFN_DT_INT8)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "int8 activations (W8A8) go with int8 weights only");
    return 0;
}

int ffn_bench_case_check(const ffn_bench_case *c, const ffn_bench_opts *o, ffn_diag *diag)
{
    if (!c) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no case");
    if (c->tokens == 0 || c->shape.d == 0 || c->shape.f == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "tokens, d and f must be >= 1");
    if ((unsigned)c->shape.act >= FFN_ACT_COUNT)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "unknown activation");
    if (c->kind == FFN_BENCH_MOE && (c->n_experts == 0 || c->top_k == 0 || c->top_k > c->n_experts))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "MoE top-k %zu is not in [1, %zu]",
                            c->top_k, c->n_experts);
    int frc = check_format(c, diag);
    if (frc) return frc;
    /* 2^40 bytes of weights is far beyond any host this runs on; refuse before multiplying. */
    double g = ffn_act_gated(c->shape.act) ? 2.0 : 1.0;
    double E = c->kind == FFN_BENCH_MOE ? (double)c->n_experts : 1.0;
    double wbytes = E * (g + 1.0) * (double)c->shape.d * (double)c->shape.f * 4.0;
    if (wbytes > 0x1p40 || (double)c->tokens * (double)c->shape.d > 0x1p36 ||
        (double)c->tokens * (double)c->shape.f * g > 0x1p36)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "shape too large (%.3g bytes of weights)",
                            wbytes);
    const ffn_kernel *k;
    return get_kernel(c, o, &k, diag);
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct round_ctx {
    ffn_blayer *L;
    size_t T;
    int threads;
    bool cold;
    const ffn_bench_opts *o;
    ffn_bench_result *r;
    ffn_peer *peers[FFN_PEER_COUNT];
    double *peer_t[FFN_PEER_COUNT];
    size_t n_peer_t[FFN_PEER_COUNT];
    double *moe_t[4]; /* route, permute, experts, combine */
    size_t n_moe_t;
    unsigned char *evict;
    long long sde_flops, sde_wbytes, sde_abytes;
    bool recording;
    int err;
} round_ctx;

static void evict_caches(round_ctx *c)
{
    if (!c->evict) return;
    /* writes: dirty lines force every earlier line out of an inclusive or victim LLC */
    for (size_t i = 0; i < EVICT_BYTES; i += 64)
        c->evict[i] = (unsigned char)(c->evict[i] + 1);
}

static void counters_accumulate(ffn_bench_result *r, const ffn_counter_value *v, size_t n)
{
    for (size_t i = 0; i < n && i < FFN_BENCH_MAX_EVENTS; i++) {
        ffn_counter_value *a = &r->counters[i];
        if (!r->calls) {
            *a = v[i];
            continue;
        }
        if (!a->available) continue;
        if (!v[i].available) {
            a->available = false;
            snprintf(a->reason, sizeof a->reason, "%s", v[i].reason);
            continue;
        }
        a->value += v[i].value;
    }
}

static int one_round(void *vctx, double *out)
{
    round_ctx *c = vctx;
    if (c->o->stop && *c->o->stop) return FFN_EINTERRUPTED;
    ffn_blayer *L = c->L;
    if (c->cold) flush_lines(L->packed, L->packed_bytes);
    double tm[4] = {0, 0, 0, 0};
    ffn_counter_value vals[FFN_BENCH_MAX_EVENTS];
    ffn_counters *ctr = c->recording ? c->o->counters : NULL;
    if (ctr && ffn_counters_start(ctr)) ctr = NULL;
    double t0 = ffn_time_now_s();
    int rc = ffn_blayer_forward(L, c->T, c->threads, L->kind == FFN_BENCH_MOE ? tm : NULL, NULL);
    double t1 = ffn_time_now_s();
    /* counted outside the kernel's loops, inside the counted window */
    ffn_sde_add(c->sde_flops, c->sde_wbytes, c->sde_abytes, 1);
    if (ctr) {
        size_t n = ffn_counters_count(ctr);
        if (n > FFN_BENCH_MAX_EVENTS) n = FFN_BENCH_MAX_EVENTS;
        if (ffn_counters_stop(ctr, vals, n) == 0) {
            counters_accumulate(c->r, vals, n);
            c->r->n_counters = n;
            c->r->calls++;
        }
    }
    if (rc) {
        c->err = rc;
        return rc;
    }
    if (c->recording && L->kind == FFN_BENCH_MOE && c->n_moe_t < MAX_SAMPLES) {
        for (int i = 0; i < 4; i++)
            c->moe_t[i][c->n_moe_t] = tm[i];
        c->n_moe_t++;
    }
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        if (!c->peers[p]) continue;
        if (c->o->stop && *c->o->stop) return FFN_EINTERRUPTED;
        if (c->cold) evict_caches(c);
        double p0 = ffn_time_now_s();
        int prc = ffn_peer_forward(c->peers[p], c->T, L->x, L->yref);
        double p1 = ffn_time_now_s();
        if (prc) {
            snprintf(c->r->peers[p].error, sizeof c->r->peers[p].error, "forward failed (%s)",
                     ffn_strerror(prc));
            ffn_peer_free(c->peers[p]);
            c->peers[p] = NULL;
            continue;
        }
        if (c->recording && c->n_peer_t[p] < MAX_SAMPLES) c->peer_t[p][c->n_peer_t[p]++] = p1 - p0;
    }
    *out = t1 - t0 > 1e-9 ? t1 - t0 : 1e-9;
    return 0;
}

static double median_of(double *v, size_t n)
{
    ffn_stats s;
    if (!n || ffn_stats_compute(v, n, &s)) return NAN;
    return s.median;
}
static int run_case(const ffn_hw *hw, ffn_blayer *L, const ffn_bench_case *cs,
                    const ffn_bench_opts *o, unsigned char *evict, ffn_bench_result *r,
                    ffn_diag *diag)
{
    memset(r, 0, sizeof *r);
    r->c = *cs;
    r->c.cdtype_set = true;
    r->c.cdtype = ffn_kernel_cdtype(L->kern, &cs->shape);
    cs = &r->c; /* predicted with the units the kernel multiplies on */
    snprintf(r->kernel, sizeof r->kernel, "%s", L->kern->name);
    r->isa = L->kern->isa;
    r->threads = ffn__bench_threads(o->threads);
    r->cold = !o->warm;
    r->cdtype = r->c.cdtype;
    r->max_rel_err = NAN;
    const size_t T = cs->tokens;
    int rc = ffn_blayer_buffers(L, T, r->threads, o->seed, diag);
    if (rc) return rc;

    round_ctx c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.T = T;
    c.threads = r->threads;
    c.cold = r->cold;
    c.o = o;
    c.r = r;
    c.evict = evict;
    double *store = calloc((FFN_PEER_COUNT + 4) * MAX_SAMPLES, sizeof(double));
    if (!store) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
    for (int p = 0; p < FFN_PEER_COUNT; p++)
        c.peer_t[p] = store + (size_t)p * MAX_SAMPLES;
    for (int i = 0; i < 4; i++)
        c.moe_t[i] = store + (size_t)(FFN_PEER_COUNT + i) * MAX_SAMPLES;

    /* the work of one call */
    const double g = ffn_act_gated(cs->shape.act) ? 2.0 : 1.0;
    const bool qw = cs->wdtype == FFN_DT_INT8 || cs->wdtype == FFN_DT_INT4;
    const double wb = ffn_dtype_bytes(cs->wdtype, 0), bb = qw ? 4.0 : wb; /* biases: fp32 */
    const double dd = (double)cs->shape.d, ff = (double)cs->shape.f;
    const double w1 =
        (qw ? ffn_weight_matrix_bytes(cs->wdtype, cs->shape.group, cs->shape.zero_point,
                                      cs->shape.d, (uint64_t)g * cs->shape.f) +
                  ffn_weight_matrix_bytes(cs->wdtype, cs->shape.group, cs->shape.zero_point,
                                          cs->shape.f, cs->shape.d)
            : (g + 1.0) * dd * ff * wb) +
        (cs->shape.bias ? (g * ff + dd) * bb : 0);
    if (L->kind == FFN_BENCH_DENSE) {
        r->flops = ffn_kernel_flops(&L->shape, T);
        r->bytes = ffn_kernel_bytes(L->kern, &L->shape, T);
        r->weight_bytes = w1;
    }

    /* peers, prepared once per token count (not timed) */
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        ffn_bench_peer *bp = &r->peers[p];
        bp->lib = (ffn_peer_lib)p;
        bp->speedup = NAN;
        if (!o->peers[p]) continue;
        bp->ran = true;
        if (L->kind != FFN_BENCH_DENSE) {
            snprintf(bp->error, sizeof bp->error, "the peers run dense layers only");
            continue;
        }
        /* OpenBLAS has fp32 weights only: a bf16 or quantized case is compared with its fp32
         * FFN; oneDNN's int8 FFN is W8A8, the peer of int8 activations only */
        bp->dtype = p == FFN_PEER_OPENBLAS ? FFN_DT_FP32 : cs->wdtype;
        if (p == FFN_PEER_ONEDNN && qw && cs->adtype != FFN_DT_INT8) {
            snprintf(bp->error, sizeof bp->error,
                     "no oneDNN peer for %s weights with %s activations (its int8 FFN is W8A8)",
                     ffn_dtype_name(cs->wdtype), ffn_dtype_name(cs->adtype));
            continue;
        }
        ffn_diag pd;
        ffn_diag_clear(&pd);
        int prc = ffn_peer_init((ffn_peer_lib)p, bp->dtype, &L->shape, &L->kw[0], T, o->threads,
                                &c.peers[p], &pd);
        if (prc) {
            snprintf(bp->error, sizeof bp->error, "%.180s", pd.msg[0] ? pd.msg : ffn_strerror(prc));
            c.peers[p] = NULL;
            continue;
        }
        snprintf(bp->describe, sizeof bp->describe, "%s", ffn_peer_describe(c.peers[p]));
    }

    if (L->kind == FFN_BENCH_MOE) {
        /* the routing, hence the work, is fixed by x: count it from one call */
        size_t *tok = calloc(L->E, sizeof *tok);
        if (!tok) {
            rc = FFN_ENOMEM;
            goto done;
        }
        rc = ffn_blayer_forward(L, T, r->threads, NULL, tok);
        if (!rc) rc = ffn_bmoe_count(L->moe, T, tok, &r->flops, &r->bytes, &r->active_experts);
        free(tok);
        if (rc) goto done;
        r->weight_bytes = dd * (double)L->E * 4.0 + (double)r->active_experts * w1;
        r->has_moe = true;
    }
    c.sde_flops = (long long)llround(r->flops);
    c.sde_wbytes = (long long)llround(r->weight_bytes);
    c.sde_abytes = (long long)llround(r->bytes - r->weight_bytes);
    /* warm-up round (also pages in the workspaces and spins up the thread pools) */
    double t;
    c.recording = false;
    rc = one_round(&c, &t);
    if (rc) goto done;
    c.recording = true;

    ffn_repeat_opts ro;
    memset(&ro, 0, sizeof ro);
    if (o->reps) {
        ro.batch = o->reps;
        ro.window = 1;
        ro.min_samples = ro.max_samples = o->reps;
        ro.time_cap_s = 1e9;
    } else {
        ro.batch = 3;
        ro.window = 3;
        ro.rel_spread = 0.03;
        ro.min_samples = 9;
        ro.max_samples = 60;
        ro.time_cap_s = o->case_time_s > 0 ? o->case_time_s : 4.0;
        /* a case whose first round alone takes over a ninth of the cap: timed for the cap, at
         * least three rounds (the median of three half-second calls moves less than that of
         * nine 10 ms ones; the slow ISA levels then calibrate in under two minutes) */
        ro.slow_min_samples = 3;
    }
    ffn_repeat_result rr;
    rc = ffn_repeat_until_stable(one_round, &c, &ro, &rr);
    if (rc) goto done;
    r->time = rr.stats;
    r->stable = rr.stable;
    const double med = r->time.median;
    r->achieved_flops = r->flops / med;
    r->achieved_bps = r->bytes / med;
    r->intensity = r->bytes > 0 ? r->flops / r->bytes : NAN;
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        ffn_bench_peer *bp = &r->peers[p];
        if (!c.n_peer_t[p]) continue;
        ffn_stats_compute(c.peer_t[p], c.n_peer_t[p], &bp->time);
        bp->speedup = bp->time.median / med;
    }
    if (r->has_moe) {
        r->route_s = median_of(c.moe_t[0], c.n_moe_t);
        r->permute_s = median_of(c.moe_t[1], c.n_moe_t);
        r->experts_s = median_of(c.moe_t[2], c.n_moe_t);
        r->combine_s = median_of(c.moe_t[3], c.n_moe_t);
    }
    r->roofline_s = r->predicted_s = r->prediction_error = r->efficiency = NAN;
    r->prediction_error_min = NAN;
    r->bound = FFN_BOUND_MEMORY;
    if (hw && hw->mem_bandwidth_bps > 0 && hw->peak_flops[FFN_DT_FP32] > 0) {
        /* warm runs are predicted with the weights where the model says they stay */
        rc = ffn_bench_predict_weights(hw, cs, r->cold ? FFN_WEIGHTS_COLD : FFN_WEIGHTS_HOT,
                                       &r->roofline_s, &r->predicted_s, &r->bound, r->level_bytes,
                                       &r->weights_level, &r->weights_frac);
        r->n_levels = hw->n_levels < FFN_HW_MAX_LEVELS ? hw->n_levels : FFN_HW_MAX_LEVELS;
        for (int i = 0; i < r->n_levels; i++)
            snprintf(r->level_names[i], sizeof r->level_names[i], "%s", hw->levels[i].name);
        r->level_bytes_source = "model";
        if (rc) {
            rc = ffn_diag_set(diag, rc, NULL, 0, 0, "the simulator could not cost this case");
            goto done;
        }
        r->prediction_error = r->predicted_s / med - 1.0;
        r->prediction_error_min = r->predicted_s / r->time.min - 1.0;
        r->efficiency = r->roofline_s / med;
    }
    if (o->verify) {
        /* y of the last timed call is still in L->y (the peers write into yref) */
        rc = ffn_blayer_forward(L, T, r->threads, NULL, NULL);
        if (!rc) rc = ffn_blayer_verify(L, T, r, diag);
    }
done:
    if (rc == FFN_EINTERRUPTED)
        ffn_diag_set(diag, rc, NULL, 0, 0, "interrupted");
    else if (rc && (c.err || !diag || !diag->msg[0]))
        ffn_diag_set(diag, rc, NULL, 0, 0, "%s failed on T=%zu (%s)", L->kern->name, T,
                     ffn_strerror(rc));
    for (int p = 0; p < FFN_PEER_COUNT; p++)
        ffn_peer_free(c.peers[p]);
    free(store);
    return rc;
}

int ffn_bench_run(const ffn_hw *hw, const ffn_bench_case *cases, size_t n, const ffn_bench_opts *o,
                  ffn_bench_progress_fn progress, void *user, ffn_bench_result *res, size_t *n_done,
                  ffn_diag *diag)
{
    if (n_done) *n_done = 0;
    if (!cases || !o || !res || !n_done)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "bad arguments");
    ffn_diag_clear(diag);
    for (size_t i = 0; i < n; i++) {
        int rc = ffn_bench_case_check(&cases[i], o, diag);
        if (rc) return rc;
    }
    ffn_sde_init(); /* FFN_EUNSUPPORTED without PAPI: the counters still count */
    bool any_peer = false;
    for (int p = 0; p < FFN_PEER_COUNT; p++)
        any_peer = any_peer || o->peers[p];
    unsigned char *evict = NULL;
    if (any_peer && !o->warm) {
        evict = ffn__bench_xalloc(EVICT_BYTES);
        if (!evict) return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory (evict)");
        memset(evict, 1, EVICT_BYTES);
    }
    ffn_blayer L;
    memset(&L, 0, sizeof L);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (o->stop && *o->stop) {
            rc = FFN_EINTERRUPTED;
            break;
        }
        const ffn_bench_case *c = &cases[i];
        if (progress) {
            char label[160];
            snprintf(label, sizeof label, "%s %s T=%zu d=%zu f=%zu %s",
                     c->kind == FFN_BENCH_MOE ? "moe" : "dense", ffn_phase_name(c->phase),
                     c->tokens, c->shape.d, c->shape.f, ffn_dtype_name(c->wdtype));
            if (progress(user, (double)i / (double)n, label)) {
                rc = FFN_EINTERRUPTED;
                break;
            }
        }
        const ffn_kernel *k;
        if ((rc = get_kernel(c, o, &k, diag))) break;
        if (!ffn_blayer_same(&L, c, k) && (rc = ffn_blayer_prepare(&L, c, k, o->seed, diag))) break;
        rc = run_case(hw, &L, c, o, evict, &res[i], diag);
        if (rc) break;
        *n_done = i + 1;
    }
    if (progress && rc == 0) progress(user, 1.0, "done");
    if (rc == FFN_EINTERRUPTED && diag && !diag->msg[0])
        ffn_diag_set(diag, rc, NULL, 0, 0, "interrupted");
    ffn_blayer_free(&L);
    free(evict);
    return rc;
}
