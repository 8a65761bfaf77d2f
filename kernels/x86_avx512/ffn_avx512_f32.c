/* AVX-512 fp32 dense FFN kernel "f32_ffn__avx512_14x32" (see ffn_avx512.h).
 *
 * Packed layout (after the 64-byte header), all fp32:
 *   up panels   np1 x [d][32]: gated, panel j holds gate columns 16j..16j+15 then up columns
 *               16j..16j+15 (np1 = ceil(f/16)); otherwise gate columns 32j..32j+31
 *               (np1 = ceil(f/32)); columns past f are zero;
 *   down panels pd x [f][32]: W_down columns 32j..32j+31 (pd = ceil(d/32)), zero past d;
 *   biases      np1 x 32 (same interleave) and pd x 32, when the shape has biases.
 * Forward: x is first copied into k-major panels of MR = 14 rows (xp[panel][k][14]: the 14 values
 * a k step broadcasts share one cache line, where 14 rows of x d floats apart would all map to
 * one L1 set for d a multiple of 1024); h = act(x W_gate [+b]) [* (x W_up [+b])] is written by the
 * epilogue straight into the same panel layout (hp[panel][ldh][14], a scatter per tile row);
 * then y = h W_down [+b]; both GEMMs use the 14x32 microkernel below. Threads take work items
 * (a row block and a few panels) from a shared counter rather than fixed halves, so a thread
 * slowed by another process on its core does not leave the other idle at the barrier; every
 * item is computed whole by one thread in a fixed K order, so the thread count never changes y. */
#include "avx512_common.h"
#include "ffn_avx512.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

/* T <= MR streams whole weight panels (one row panel, no K blocking) with a software prefetch
 * PF_S rows ahead into L2: on the SPR-class dev VM (one and two threads, d=2048 f=5632 and
 * d=4096 f=11008 SwiGLU, weights flushed between calls) that cut T=4..12 by 7-30% against
 * relying on the hardware prefetcher. Streaming larger T as well (the row panels of each
 * 512-row chunk reading it from L2) measured no faster than the GEMM path for T=16..64, so
 * above MR the cache-blocked GEMM runs. */
enum {
    MR = 14,
    NR = 32,
    KC = 256,
    MC_MAX = 518,
    PF_K = 32,
    PF_S = 64,
    DG = 4,
    KERNEL_ID = 0x41463332u
};

typedef struct layout {
    size_t np1, pd, ldh;
    size_t off_w1, off_w2, off_b1, off_b2, total; /* byte offsets in the blob */
} layout;

static void get_layout(const ffn_kshape *s, layout *l)
{
    const bool gated = ffn__gated(s->act);
    l->np1 = gated ? (s->f + 15) / 16 : (s->f + 31) / 32;
    l->pd = (s->d + 31) / 32;
    l->ldh = gated ? l->np1 * 16 : l->np1 * 32;
    l->off_w1 = FFN__PACK_HDR;
    l->off_w2 = l->off_w1 + l->np1 * s->d * NR * 4;
    l->off_b1 = l->off_w2 + l->pd * s->f * NR * 4;
    l->off_b2 = l->off_b1 + (s->bias ? l->np1 * NR * 4 : 0);
    l->total = l->off_b2 + (s->bias ? l->pd * NR * 4 : 0);
}

static size_t packed_bytes(const ffn_kshape *s)
{
    if (ffn__check_shape(s)) return 0;
    layout l;
    get_layout(s, &l);
    return l.total;
}

static int pack(const ffn_kshape *s, const ffn_kweights *w, void *packed, size_t n)
{
    int rc = ffn__check_pack(&ffn_kernel_f32_avx512, s, w, packed, n);
    if (rc) return rc;
    layout l;
    get_layout(s, &l);
    const size_t d = s->d, f = s->f;
    const bool gated = ffn__gated(s->act);
    unsigned char *base = packed;
    float *w1 = (float *)(void *)(base + l.off_w1), *w2 = (float *)(void *)(base + l.off_w2);
    for (size_t j = 0; j < l.np1; j++)
        for (size_t k = 0; k < d; k++) {
            float *dst = w1 + (j * d + k) * NR;
            for (size_t c = 0; c < NR; c++) {
                size_t col;
                const float *src;
                if (gated) {
                    col = j * 16 + (c & 15);
                    src = c < 16 ? w->w_gate : w->w_up;
                } else {
                    col = j * NR + c;
                    src = w->w_gate;
                }
                dst[c] = col < f ? src[k * f + col] : 0.0f;
            }
        }
    for (size_t j = 0; j < l.pd; j++)
        for (size_t k = 0; k < f; k++) {
            float *dst = w2 + (j * f + k) * NR;
            for (size_t c = 0; c < NR; c++) {
                const size_t col = j * NR + c;
                dst[c] = col < d ? w->w_down[k * d + col] : 0.0f;
            }
        }
    if (s->bias) {
        float *b1 = (float *)(void *)(base + l.off_b1), *b2 = (float *)(void *)(base + l.off_b2);
        for (size_t j = 0; j < l.np1; j++)
            for (size_t c = 0; c < NR; c++) {
                const size_t col = gated ? j * 16 + (c & 15) : j * NR + c;
                const float *src = gated && c >= 16 ? w->b_up : w->b_gate;
                b1[j * NR + c] = col < f ? src[col] : 0.0f;
            }
        for (size_t j = 0; j < l.pd * NR; j++)
            b2[j] = j < d ? w->b_down[j] : 0.0f;
    }
    ffn__write_hdr(packed, KERNEL_ID, s);
    return 0;
}

/* Rows of x per block: at most MC_MAX, and equal blocks (T = 512 is one block of 512 rows, not
 * 504 + 8, which would stream every weight twice for 8 rows). */
static size_t mc_for(size_t T)
{
    const size_t blocks = (T + MC_MAX - 1) / MC_MAX;
    return ((T + blocks - 1) / blocks + MR - 1) / MR * MR;
}

static size_t workspace_bytes(const ffn_kshape *s, size_t T, int threads)
{
    if (ffn__check_shape(s) || T == 0) return 0;
    layout l;
    get_layout(s, &l);
    const size_t nt = (size_t)ffn__threads(threads);
    const size_t rows = (T + MR - 1) / MR * MR;
    return 64 + ffn__round_up(rows * s->d * 4, 64) + ffn__round_up(rows * l.ldh * 4, 64) +
           nt * mc_for(T) * NR * 4;
}

/* C[mr][32] (+)= A[mr][kc] * B[kc][32], A in a k-major row panel (element (r, k) at k*as + r,
 * as = MR, or = mr when T <= MR and the one panel is only T rows wide);
 * then e (or a raw store when e is NULL). pf, when not NULL, is this row panel's slice of the
 * next weight chunk (pf_rows rows of 32 floats): every row panel of a chunk pulls its slice
 * into L2 while it computes, so the next chunk does not start with a stall on memory (one cold
 * 32 KiB chunk per row block was the largest loss measured on the SPR-class host). */
FFN_AI void ukr_body(const int mr, const int as, size_t kc, const float *A, const float *B,
                     float *C, size_t ldc, __mmask16 cm0, __mmask16 cm1, bool load_c, const epi *e,
                     const float *pf, size_t pf_rows, bool stream)
{
    __m512 c0[MR], c1[MR];
    for (int r = 0; r < mr; r++) {
        if (load_c) {
            c0[r] = _mm512_maskz_loadu_ps(cm0, C + (size_t)r * ldc);
            c1[r] = _mm512_maskz_loadu_ps(cm1, C + (size_t)r * ldc + 16);
        } else {
            c0[r] = c1[r] = _mm512_setzero_ps();
        }
    }
    for (size_t k = 0; k < kc; k++) {
        if (pf && k < pf_rows) {
            _mm_prefetch((const char *)(pf + k * NR), _MM_HINT_T1);
            _mm_prefetch((const char *)(pf + k * NR + 16), _MM_HINT_T1);
        }
        if (stream) { /* into L2, 8 KiB ahead: measured faster than T0 at 4-16 KiB */
            _mm_prefetch((const char *)(B + (k + PF_S) * NR), _MM_HINT_T1);
            _mm_prefetch((const char *)(B + (k + PF_S) * NR + 16), _MM_HINT_T1);
        }
        const __m512 b0 = _mm512_loadu_ps(B + k * NR), b1 = _mm512_loadu_ps(B + k * NR + 16);
        for (int r = 0; r < mr; r++) {
            const __m512 a = _mm512_set1_ps(A[k * (size_t)as + (size_t)r]);
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
        }
    }
    if (e) {
        epi_apply(mr, c0, c1, e);
        return;
    }
    for (int r = 0; r < mr; r++) {
        _mm512_mask_storeu_ps(C + (size_t)r * ldc, cm0, c0[r]);
        _mm512_mask_storeu_ps(C + (size_t)r * ldc + 16, cm1, c1[r]);
    }
}

/* One row (decode): the panel's K rows are read as four concurrent streams (quarters of K,
 * each with its own accumulator pair), which keeps more memory requests in flight than one
 * sequential stream and hides the FMA latency; the quarters are summed in a fixed order. */
static void ukr_m1(size_t kc, const float *A, size_t as, const float *B, float *C, __mmask16 cm0,
                   __mmask16 cm1, bool load_c, const epi *e)
{
    __m512 a0[4], a1[4];
    for (int i = 0; i < 4; i++)
        a0[i] = a1[i] = _mm512_setzero_ps();
    if (load_c) {
        a0[0] = _mm512_maskz_loadu_ps(cm0, C);
        a1[0] = _mm512_maskz_loadu_ps(cm1, C + 16);
    }
    const size_t q = kc / 4;
    for (size_t k = 0; k < q; k++) {
        for (int i = 0; i < 4; i++) {
            const size_t kk = (size_t)i * q + k;
            _mm_prefetch((const char *)(B + (kk + PF_K) * NR), _MM_HINT_T0);
            _mm_prefetch((const char *)(B + (kk + PF_K) * NR) + 64, _MM_HINT_T0);
            const __m512 a = _mm512_set1_ps(A[kk * as]);
            a0[i] = _mm512_fmadd_ps(a, _mm512_loadu_ps(B + kk * NR), a0[i]);
            a1[i] = _mm512_fmadd_ps(a, _mm512_loadu_ps(B + kk * NR + 16), a1[i]);
        }
    }
    for (size_t k = 4 * q; k < kc; k++) {
        const __m512 a = _mm512_set1_ps(A[k * as]);
        a0[0] = _mm512_fmadd_ps(a, _mm512_loadu_ps(B + k * NR), a0[0]);
        a1[0] = _mm512_fmadd_ps(a, _mm512_loadu_ps(B + k * NR + 16), a1[0]);
    }
    __m512 c0[1] = {_mm512_add_ps(_mm512_add_ps(a0[0], a0[1]), _mm512_add_ps(a0[2], a0[3]))};
    __m512 c1[1] = {_mm512_add_ps(_mm512_add_ps(a1[0], a1[1]), _mm512_add_ps(a1[2], a1[3]))};
    if (e) {
        epi_apply(1, c0, c1, e);
        return;
    }
    _mm512_mask_storeu_ps(C, cm0, c0[0]);
    _mm512_mask_storeu_ps(C + 16, cm1, c1[0]);
}

#define UKR_CASE(m)                                                                                \
    case m:                                                                                        \
        if (as == m)                                                                               \
            ukr_body(m, m, kc, A, B, C, ldc, cm0, cm1, load_c, e, pf, pf_rows, stream);            \
        else                                                                                       \
            ukr_body(m, MR, kc, A, B, C, ldc, cm0, cm1, load_c, e, pf, pf_rows, stream);           \
        break;

static void ukr(int mr, int as, size_t kc, const float *A, const float *B, float *C, size_t ldc,
                __mmask16 cm0, __mmask16 cm1, bool load_c, const epi *e, const float *pf,
                size_t pf_rows, bool stream)
{
    switch (mr) {
    case 1:
        ukr_m1(kc, A, (size_t)as, B, C, cm0, cm1, load_c, e);
        break;
        UKR_CASE(2)
        UKR_CASE(3)
        UKR_CASE(4)
        UKR_CASE(5)
        UKR_CASE(6)
        UKR_CASE(7)
        UKR_CASE(8)
        UKR_CASE(9)
        UKR_CASE(10)
        UKR_CASE(11)
        UKR_CASE(12)
        UKR_CASE(13)
        UKR_CASE(14)
    default:
        break;
    }
}

static __mmask16 mask_n(size_t n) /* the low min(n, 16) bits */
{
    const unsigned m = n >= 16 ? 0xffffu : (1u << n) - 1u;
    return (__mmask16)m;
}

/* Row panel i's slice of the next weight chunk (kc rows, at next) when the row block has mc
 * rows; NULL when the block is one panel (decode: a single stream, no reuse to wait for). Not
 * used when streaming (T <= MR), where the microkernel prefetches PF_S rows ahead. */
static const float *pf_slice(const float *next, size_t kc, size_t i, size_t mc, size_t *rows)
{
    *rows = 0;
    if (mc <= MR || kc > ((size_t)1 << 20)) return NULL;
    const size_t np = (mc + MR - 1) / MR, p = i / MR;
    const size_t lo = kc * p / np, hi = kc * (p + 1) / np;
    *rows = hi - lo;
    return next + lo * NR;
}

typedef struct job {
    const ffn_kshape *s;
    const layout *l;
    const unsigned char *packed;
    size_t T;
    const float *x;
    float *y, *xp, *hp; /* x and h in k-major panels of MR rows */
    unsigned char *cbufs;
    size_t mc, kc1, kc2;
    size_t ps;    /* rows per panel of xp/hp: MR, or T when T < MR (decode reads x, h densely) */
    bool stream;  /* T <= MR: prefetch the weight stream PF_S rows ahead */
    size_t *next; /* the shared work-item counters of the two GEMMs (ffn__grab), zeroed */
} job;

static void run_thread(const job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const layout *l = jb->l;
    const size_t d = s->d, f = s->f, T = jb->T, mc_max = jb->mc;
    const bool gated = ffn__gated(s->act);
    const float *w1 = (const float *)(const void *)(jb->packed + l->off_w1);
    const float *w2 = (const float *)(const void *)(jb->packed + l->off_w2);
    const float *b1 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b1) : NULL;
    const float *b2 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b2) : NULL;
    float *cbuf = (float *)(void *)(jb->cbufs + (size_t)t * mc_max * NR * 4);
    size_t lo, hi;

    /* x -> xp[panel][k][ps], rows past T zero. */
    const size_t ps = jb->ps;
    ffn__split((T + MR - 1) / MR, t, nt, &lo, &hi);
    for (size_t p = lo; p < hi; p++)
        for (size_t r = 0; r < ps; r++) {
            float *dst = jb->xp + p * d * ps + r;
            const float *src = jb->x + (p * MR + r) * d;
            if (p * MR + r < T)
                for (size_t k = 0; k < d; k++)
                    dst[k * ps] = src[k];
            else
                for (size_t k = 0; k < d; k++)
                    dst[k * ps] = 0.0f;
        }
#if defined(_OPENMP)
#pragma omp barrier
#endif
    /* Gate/up projection and activation: h into hp[panel][ldh][MR]. Loop order ic, j, pc, i:
     * the accumulators of a (row block, panel) stay in the thread's buffer across the K chunks
     * (a buffer for all 2f columns would not fit near L1/L2). The row block is large (up to
     * MC_MAX rows): smaller blocks that keep x in L2 measured slower, since every weight chunk
     * then comes from memory more often. */
    const size_t mc1 = jb->mc, nic1 = (T + mc1 - 1) / mc1;
    /* Work items (row block, panel) in groups of 4 consecutive panels per grab: the prefetch of
     * the next chunk at the end of a panel is then mostly for this thread's own next panel. */
    const size_t grab1 = jb->stream ? ffn__grab_chunk(d * NR * 4) : 4;
    while (ffn__grab(&jb->next[0], nic1 * l->np1, grab1, &lo, &hi)) {
        for (size_t it = lo; it < hi; it++) {
            const size_t ic = it / l->np1 * mc1, j = it % l->np1;
            const size_t mc = T - ic < mc1 ? T - ic : mc1;
            const float *bj = w1 + j * d * NR;
            for (size_t pc = 0; pc < d; pc += jb->kc1) {
                const size_t kc = d - pc < jb->kc1 ? d - pc : jb->kc1;
                const bool last = pc + kc == d;
                for (size_t i = 0; i < mc; i += MR) {
                    const int mr = (int)(mc - i < MR ? mc - i : MR);
                    const size_t panel = (ic + i) / MR;
                    size_t pfr;
                    const float *pf =
                        jb->stream ? NULL : pf_slice(bj + (pc + kc) * NR, jb->kc1, i, mc, &pfr);
                    if (jb->stream) pfr = 0;
                    epi e = {EPI_ACT,
                             s->act,
                             gated,
                             false,
                             b1 ? b1 + j * NR : NULL,
                             jb->hp + (panel * l->ldh + j * (gated ? 16 : 32)) * ps,
                             1,
                             0,
                             0,
                             ps};
                    ukr(mr, (int)ps, kc, jb->xp + (panel * d + pc) * ps, bj + pc * NR,
                        cbuf + i * NR, NR, 0xffff, 0xffff, pc > 0, last ? &e : NULL, pf, pfr,
                        jb->stream && i == 0);
                }
            }
        }
    }
#if defined(_OPENMP)
#pragma omp barrier
#endif
    /* Down projection: y[T][d] = h W_down (+ b_down). A work item is a row block and a group
     * of DG panels; inside it the order is pc, j, i: the block of h (mc x KC) stays in L2 for
     * the group's panels, each KC x 32 weight chunk in L1 for all row panels, and the partial
     * sums live in y (the item's y tiles, reduced chunk by chunk in a fixed order). */
    const size_t dg = jb->stream ? 1 : DG, ngrp = (l->pd + dg - 1) / dg;
    while (ffn__grab(&jb->next[1], (T + mc_max - 1) / mc_max * ngrp, 1, &lo, &hi)) {
        const size_t ic = lo / ngrp * mc_max, j0 = lo % ngrp * dg;
        const size_t j1 = l->pd - j0 < dg ? l->pd : j0 + dg;
        const size_t mc = T - ic < mc_max ? T - ic : mc_max;
        for (size_t pc = 0; pc < f; pc += jb->kc2) {
            const size_t kc = f - pc < jb->kc2 ? f - pc : jb->kc2;
            const bool last = pc + kc == f;
            for (size_t j = j0; j < j1; j++) {
                const float *bj = w2 + j * f * NR;
                const __mmask16 m0 = mask_n(d - j * NR),
                                m1 = mask_n(d > j * NR + 16 ? d - j * NR - 16 : 0);
                /* the chunk this item needs next: panel j+1 at pc, else panel j0 at pc + kc */
                const float *next = j + 1 < j1 ? bj + (f + pc) * NR
                                    : last     ? w2 + j1 * f * NR
                                               : w2 + (j0 * f + pc + kc) * NR;
                for (size_t i = 0; i < mc; i += MR) {
                    const int mr = (int)(mc - i < MR ? mc - i : MR);
                    float *yt = jb->y + (ic + i) * d + j * NR;
                    size_t pfr;
                    const float *pf = jb->stream ? NULL : pf_slice(next, jb->kc2, i, mc, &pfr);
                    if (jb->stream) pfr = 0;
                    epi e = {EPI_OUT, s->act, false, false, b2 ? b2 + j * NR : NULL,
                             yt,      d,      m0,    m1,    1};
                    ukr(mr, (int)ps, kc, jb->hp + ((ic + i) / MR * l->ldh + pc) * ps, bj + pc * NR,
                        yt, d, m0, m1, pc > 0, last ? &e : NULL, pf, pfr, jb->stream && i == 0);
                }
            }
        }
    }
}

static int forward(const ffn_kshape *s, const void *packed, size_t T, const float *x, float *y,
                   void *ws, size_t ws_bytes, int threads)
{
    int rc = ffn__check_forward(&ffn_kernel_f32_avx512, KERNEL_ID, s, packed, T, x, y, ws, ws_bytes,
                                threads);
    if (rc || T == 0) return rc;
    layout l;
    get_layout(s, &l);
    const int nt = ffn__threads(threads);
    unsigned char *w = ffn__align64(ws);
    const size_t rows = (T + MR - 1) / MR * MR, xbytes = ffn__round_up(rows * s->d * 4, 64);
    size_t next[2] = {0, 0};
    job jb = {s,
              &l,
              packed,
              T,
              x,
              y,
              (float *)(void *)w,
              (float *)(void *)(w + xbytes),
              w + xbytes + ffn__round_up(rows * l.ldh * 4, 64),
              mc_for(T),
              KC,
              KC,
              T < MR ? T : MR,
              T <= MR,
              next};
    /* One row panel: no reuse of a weight chunk, so stream whole panels. */
    if (T <= MR) jb.kc1 = jb.kc2 = (size_t)-1 / 2;
#if defined(_OPENMP)
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        run_thread(&jb, omp_get_thread_num(), omp_get_num_threads());
        return 0;
    }
#endif
    run_thread(&jb, 0, 1);
    return 0;
}

const ffn_kernel ffn_kernel_f32_avx512 = {
    "f32_ffn__avx512_14x32", FFN_ISA_AVX512, FFN_DT_FP32, packed_bytes, pack,
    workspace_bytes,         forward,        0,           0};
