/* The portable FFN driver (see driver.h): blocking, threads and epilogues for every ISA,
 * calling microkernels only through the tables of ukernel.h (the weights' packing and layout:
 * driver_pack.c).
 *
 * Threads. One OpenMP team per forward call (driver_team.c); work items (a row block and a few
 * weight panels) come from a shared counter (ffn__grab) rather than fixed shares, so a thread
 * slowed by another process on its core does not leave the others idle at the barrier. Every output
 * element is computed whole by one thread in a fixed K order, so the thread count never changes y.
 *
 * The fp32 schedule (the one the AVX-512 fp32 kernel was tuned with on an SPR-class VM):
 *  - x is copied into k-major row panels of mr rows, chunk-major (xp[chunk][panel][k][mr]: the
 *    mr values one k step broadcasts share a cache line, where mr rows of x d floats apart
 *    would all map to one L1 set for d a multiple of 1024; a row block's chunk is contiguous,
 *    chunk_off);
 *  - gate/up: items (row block of <= mc rows, panel); K in chunks of kc; the accumulators of the
 *    item stay in the thread's buffer across chunks; each row panel prefetches its slice of the
 *    next weight chunk into L2 while it computes; the epilogue (bias, activation, gate x up)
 *    writes h into the same chunk-major layout (hp[chunk][panel][k][mr], K = f);
 *  - down: items (row block, group of up to DG panels), order chunk, panel, row panel: the
 *    block of h (mc x kc) stays in L2 for the group, each weight chunk in L1 for all row panels;
 *  - T <= stream_rows: no blocking, whole panels streamed through the table's gemv, x and h in
 *    k-major panels T rows wide. */
#include "drv_sched.h"

#include <float.h>
#include <math.h>

#include "../quant/quant_internal.h"
#include "qpack.h"

/* DG, GRAB_PANELS: drv_sched.h */

/* ---- workspace ---------------------------------------------------------------------------- */

bool ffn__drv_wants_pairs(const ffn__drv *dv, const ffn_kshape *s)
{
    return dv->q && dv->q->a_pairs && dv->abf16 && dv->qf == FFN_UKR_Q4 && !s->zero_point;
}

bool ffn__drv_bf16_pairs(const ffn__drv *dv, const ffn_kshape *s)
{
    return ffn__drv_wants_pairs(dv, s) && !dv->q->a_pairs_fp16;
}

static void plan_ws(const ffn__drv *dv, const ffn__drv_layout *l, const ffn_kshape *s, size_t T,
                    wsplan *p)
{
    memset(p, 0, sizeof *p);
    const size_t nr = l->nr;
    if (dv->t) {
        const ffn_ukernels_bf16t *t = dv->t;
        p->stream = T <= ffn__drv_stream_rows(dv);
        const size_t Tpad = ffn__round_up(T, t->row_tile > 1 ? t->row_tile : 1);
        p->rows = Tpad;
        p->mc = t->mc;
        /* stream: x and h k-major fp32 [K][T]; prefill: bf16 rows [Tpad][ldx], [Tpad][ldh] */
        p->x_bytes = ffn__round_up(p->stream ? s->d * T * 4 : Tpad * l->ldx * 2, 64);
        p->h_bytes = ffn__round_up(p->stream ? l->ldh * T * 4 : Tpad * l->ldh * 2, 64);
        const size_t mc = Tpad < t->mc ? Tpad : t->mc;
        const size_t g = T < t->stream_g ? T : t->stream_g; /* rows a stream pass holds */
        p->acc_floats = p->stream ? g * nr : t->panels * mc * nr;
        p->hbuf_floats = (p->stream ? g : mc) * nr;
        p->per_thread =
            ffn__round_up(p->acc_floats * 4, 64) + ffn__round_up(p->hbuf_floats * 4, 64);
        return;
    }
    const ffn_ukernels *u = ffn__drv_fu(dv);
    p->stream = T <= ffn__drv_stream_rows(dv);
    if (p->stream) {
        const size_t sg = dv->q ? dv->q->stream_g : u->stream_g, g = T < sg ? T : sg;
        p->rows = T;
        p->x_bytes = ffn__round_up(s->d * T * 4, 64);
        p->h_bytes = ffn__round_up(l->ldh * T * 4, 64);
        if (dv->q && s->zero_point)
            p->asum_bytes = ffn__round_up((s->d + s->f) / s->group * T * 4, 64);
        if (ffn__drv_wants_pairs(dv, s)) /* (d + f) / 8 blocks of 4 words per row (+ scales) */
            p->pair_bytes = ffn__round_up(
                ((s->d + s->f) / 2 * p->rows + (dv->q->a_pairs_fp16 ? 2 * p->rows : 0)) * 4, 64);
        p->acc_floats = g * nr;
        p->hbuf_floats = g * nr;
    } else {
        p->rows = ffn__round_up(T, u->mr);
        p->mc = ffn__drv_block_rows(T, u->mc, u->mr);
        p->pair_gemm = ffn__drv_wants_pairs(dv, s) && dv->q->pgemm;
        if (p->pair_gemm) {
            p->pair_bytes = ffn__round_up((s->d + s->f) / 2 * p->rows * 4, 64);
        } else {
            p->x_bytes = ffn__round_up(p->rows * s->d * 4, 64);
            p->h_bytes = ffn__round_up(p->rows * l->ldh * 4, 64);
        }
        p->acc_floats = DG * p->mc * nr;
        p->wbuf_floats = dv->wdt == FFN_UKR_F32 && !dv->q ? 0 : (size_t)u->kc * nr;
        p->hbuf_floats = p->mc * nr;
    }
    p->per_thread = ffn__round_up(p->acc_floats * 4, 64) + ffn__round_up(p->wbuf_floats * 4, 64) +
                    ffn__round_up(p->hbuf_floats * 4, 64);
}

static size_t plan_bytes(const ffn__drv *dv, const ffn__drv_layout *l, const ffn_kshape *s,
                         size_t T, int threads)
{
    wsplan p;
    plan_ws(dv, l, s, T, &p);
    return 64 + p.x_bytes + p.h_bytes + p.asum_bytes + p.pair_bytes +
           (size_t)ffn__threads(threads) * p.per_thread;
}

size_t ffn__drv_workspace_bytes(const ffn__drv *dv, const ffn_kshape *s, size_t T, int threads)
{
    if (dv && dv->i8) return ffn__drv_i8_workspace_bytes(dv, s, T, threads);
    if (!dv || ffn__drv_check_shape(dv, s) || T == 0) return 0;
    ffn__drv_layout l;
    ffn__drv_get_layout(dv, s, &l);
    const size_t need = plan_bytes(dv, &l, s, T, threads);
    /* Never less than the decode stream of fewer rows needs: a caller sizes one workspace for T
     * and may call with fewer (the MoE layer's experts), and the stream keeps x and h in fp32
     * where the bf16 tiles keep them in bf16 (SVE BFMMLA: 4 stream rows of fp32 outweigh 5
     * tile rows of bf16). Each of the two schedules alone grows with T. */
    const size_t sr = ffn__drv_stream_rows(dv);
    const size_t stream = sr > 0 && T > sr ? plan_bytes(dv, &l, s, sr, threads) : 0;
    return stream > need ? stream : need;
}

/* ---- forward ------------------------------------------------------------------------------ */

/* W4 with zero points: asum[g * T + r] = sum over group g of column r of the k-major a (K rows
 * of T), the groups shared among the threads; a barrier follows. */
static void group_sums(const job *jb, const float *a, size_t K, float *asum, int t, int nt)
{
    const size_t T = jb->T, G = jb->s->group;
    size_t lo, hi;
    ffn__split(K / G, t, nt, &lo, &hi);
    for (size_t g = lo; g < hi; g++)
        for (size_t r = 0; r < T; r++) {
            float sum = 0.0f;
            for (size_t k = g * G; k < (g + 1) * G; k++)
                sum += a[k * T + r];
            asum[g * T + r] = sum;
        }
    ffn__drv_barrier();
}

/* The a_pairs layout of ukernel.h (ap) of the k-major a (K rows of T, bf16-rounded), the
 * blocks of 8 rows shared among the threads; a barrier follows. */
static void bf16_pairs(const job *jb, const float *a, size_t K, uint32_t *ap, int t, int nt)
{
    const size_t T = jb->T;
    size_t lo, hi;
    ffn__split(K / 8, t, nt, &lo, &hi);
    for (size_t b = lo; b < hi; b++)
        for (size_t r = 0; r < T; r++)
            for (size_t i = 0; i < 4; i++) { /* exact: a holds bf16 values already */
                const uint32_t lo16 = ffn__f32_to_bf16(a[(8 * b + i) * T + r]);
                const uint32_t hi16 = ffn__f32_to_bf16(a[(8 * b + 4 + i) * T + r]);
                ap[(b * T + r) * 4 + i] = lo16 | hi16 << 16;
            }
    ffn__drv_barrier();
}

/* The a_pairs layout of the k-major a as fp16 (tables with a_pairs_fp16, ukernel.h): row r
 * scaled by the power of two that puts its largest |value| in [128, 256), us[r] = the power that
 * undoes it. Every thread finds the rows' maxima itself (T <= stream_rows rows of K: no
 * reduction across threads), thread 0 writes us, and each converts its share of the blocks
 * (exact: a bf16 value times a power of two, unless it falls below fp16's normal range); a
 * barrier follows. */
static void f16_pairs(const job *jb, const float *a, size_t K, uint32_t *ap, float *us, int t,
                      int nt)
{
    const size_t T = jb->T;
    size_t lo, hi;
    ffn__split(K / 8, t, nt, &lo, &hi);
    for (size_t r = 0; r < T; r++) {
        float mx = 0.0f;
        for (size_t k = 0; k < K; k++) { /* NaN compares false: skipped */
            const float v = fabsf(a[k * T + r]);
            mx = v > mx ? v : mx;
        }
        int e = 0;
        if (mx > 0.0f && mx <= FLT_MAX) {
            int ex;
            (void)frexpf(mx, &ex); /* mx = m 2^ex, m in [0.5, 1): mx 2^(8 - ex) in [128, 256) */
            e = 8 - ex;
            e = e < -126 ? -126 : e > 126 ? 126 : e;
        }
        const float sc = ldexpf(1.0f, e);
        if (t == 0) us[r] = ldexpf(1.0f, -e);
        for (size_t b = lo; b < hi; b++)
            for (size_t i = 0; i < 4; i++) {
                const uint32_t lo16 = ffn__f32_to_f16(a[(8 * b + i) * T + r] * sc);
                const uint32_t hi16 = ffn__f32_to_f16(a[(8 * b + 4 + i) * T + r] * sc);
                ap[(b * T + r) * 4 + i] = lo16 | hi16 << 16;
            }
    }
    ffn__drv_barrier();
}

/* One decode gemv call over panel j of the matrix at w (K rows, panel stride pb); the caller
 * streams panel j + 1 next when more. */
static void stream_gemv(const job *jb, size_t m, size_t K, const float *a, const float *asum,
                        const uint32_t *ap, const unsigned char *w, size_t pb, size_t j, bool more,
                        float *c)
{
    const ffn__drv *dv = jb->dv;
    const size_t T = jb->T, nr = jb->l->nr;
    if (dv->q) {
        ffn_ukr_qpanel qp;
        ffn__qpanel_view(dv->qf, w + j * pb, K, nr, jb->s->group, jb->s->zero_point, &qp);
        qp.next = more ? w + (j + 1) * pb : NULL;
        dv->q->gemv[dv->qf](m, K, a, T, asum, ap, &qp, c, nr);
    } else if (dv->t) {
        dv->t->gemv(m, K, a, T, w + j * pb, c, nr);
    } else {
        dv->u->gemv[dv->wdt](m, K, a, T, w + j * pb, c, nr);
    }
}

/* Decode (both schedules): x and h k-major, T rows wide; whole panels through gemv. */
static void stream_thread(const job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const ffn__drv_layout *l = jb->l;
    const size_t d = s->d, f = s->f, T = jb->T, nh = l->nh;
    const size_t g = jb->dv->t   ? jb->dv->t->stream_g
                     : jb->dv->q ? jb->dv->q->stream_g
                                 : jb->dv->u->stream_g;
    float *xt = (float *)(void *)jb->xs, *ht = (float *)(void *)jb->hs;
    float *sx = jb->asum, *sh = jb->asum ? jb->asum + d / s->group * T : NULL;
    uint32_t *px = jb->pairs, *ph = jb->pairs ? jb->pairs + d / 2 * T : NULL;
    /* fp16 pairs: the rows' unscaling powers after the pairs, handed to gemv where asum goes
     * (pairs come only without zero points, so never beside group sums) */
    const bool p16 = px && jb->dv->q->a_pairs_fp16;
    float *ux = p16 ? (float *)(void *)(jb->pairs + (d + f) / 2 * T) : NULL,
          *uh = ux ? ux + T : NULL;
    const float *ax = p16 ? ux : sx, *ah = p16 ? uh : sh;
    const tscratch ts = ffn__drv_scratch_of(jb, t);
    size_t lo, hi;
    ffn__split(d, t, nt, &lo, &hi);
    for (size_t k = lo; k < hi; k++)
        for (size_t r = 0; r < T; r++)
            xt[k * T + r] = ffn__drv_act_in(jb, jb->x[r * d + k]);
    ffn__drv_barrier();
    if (sx) group_sums(jb, xt, d, sx, t, nt);
    if (p16)
        f16_pairs(jb, xt, d, px, ux, t, nt);
    else if (px)
        bf16_pairs(jb, xt, d, px, t, nt);
    while (ffn__grab(&jb->next[0], l->np1, ffn__grab_chunk(l->pb1), &lo, &hi))
        for (size_t j = lo; j < hi; j++) {
            const size_t n_out = f - j * nh < nh ? f - j * nh : nh;
            for (size_t r0 = 0; r0 < T; r0 += g) {
                const size_t m = T - r0 < g ? T - r0 : g;
                stream_gemv(jb, m, d, xt + r0, ax ? ax + r0 : NULL, px ? px + r0 * 4 : NULL, jb->w1,
                            l->pb1, j, j + 1 < hi && r0 + g >= T, ts.acc);
                ffn__drv_epi_act(jb, j, m, ts.acc, ts.hbuf);
                for (size_t r = 0; r < m; r++)
                    for (size_t c = 0; c < n_out; c++)
                        ht[(j * nh + c) * T + r0 + r] = ffn__drv_act_in(jb, ts.hbuf[r * nh + c]);
            }
        }
    ffn__drv_barrier();
    if (sh) group_sums(jb, ht, f, sh, t, nt);
    if (p16)
        f16_pairs(jb, ht, f, ph, uh, t, nt);
    else if (ph)
        bf16_pairs(jb, ht, f, ph, t, nt);
    while (ffn__grab(&jb->next[1], l->pd, ffn__grab_chunk(l->pb2), &lo, &hi))
        for (size_t j = lo; j < hi; j++)
            for (size_t r0 = 0; r0 < T; r0 += g) {
                const size_t m = T - r0 < g ? T - r0 : g;
                stream_gemv(jb, m, f, ht + r0, ah ? ah + r0 : NULL, ph ? ph + r0 * 4 : NULL, jb->w2,
                            l->pb2, j, j + 1 < hi && r0 + g >= T, ts.acc);
                for (size_t r = 0; r < m; r++)
                    ffn__drv_epi_out(jb, r0 + r, j, ts.acc + r * l->nr);
            }
}

/* Row panel i's slice of the next weight chunk (next_bytes at next) when the row block has mc
 * rows: every row panel of a block pulls its share into L2 while it computes, so the next chunk
 * does not start with a stall on memory (one cold chunk per row block was the largest loss
 * measured on the SPR-class host). NULL for a one-panel block (nothing to overlap with). */
static const void *pf_slice(const unsigned char *next, size_t next_bytes, size_t i, size_t mc,
                            size_t mr, size_t *bytes)
{
    *bytes = 0;
    if (mc <= mr || !next) return NULL;
    const size_t np = (mc + mr - 1) / mr, p = i / mr;
    const size_t lo = next_bytes * p / np, hi = next_bytes * (p + 1) / np;
    *bytes = hi - lo;
    return next + lo;
}

/* The B operand for chunk rows [pc, pc + kc) of a panel of K rows: the packed fp32 rows
 * themselves, or the chunk widened (bf16, fp16) or dequantized into the thread's scratch. */
static const float *chunk_b(const job *jb, const unsigned char *panel, size_t K, size_t pc,
                            size_t kc, float *wbuf)
{
    const ffn__drv *dv = jb->dv;
    const size_t nr = jb->l->nr;
    if (dv->q) {
        ffn_ukr_qpanel qp;
        ffn__qpanel_view(dv->qf, panel, K, nr, jb->s->group, jb->s->zero_point, &qp);
        dv->q->dequant[dv->qf](pc, kc, &qp, wbuf);
        return wbuf;
    }
    if (dv->wdt == FFN_UKR_F32) return (const float *)(const void *)panel + pc * nr;
    const uint16_t *src = (const uint16_t *)(const void *)panel + pc * nr;
    dv->u->widen[dv->wdt](kc * nr, src, wbuf);
    return wbuf;
}

/* Offset (floats) of row panel p's chunk [pc, pc + kc) in x or h held chunk-major,
 * [chunk][panel][k][mr]: a row block's chunk (mc x kc, the A operand every weight panel of the
 * chunk reuses) is one contiguous run. Panel-major ([panel][K][mr]) put its row panels d * mr
 * floats apart, 48 KiB at d = 2048 and mr = 6, where they share a few sets of an 8-way L2:
 * on Zen 4 the chunk-major h took the AVX2 down GEMM from 73-76 to 87-95 GFLOP/s
 * on one thread. Every chunk but the last is KC long, so chunk pc starts at pc * npanels. */
static inline size_t chunk_off(size_t pc, size_t p, size_t kc, size_t npanels, size_t mr)
{
    return (pc * npanels + p * kc) * mr;
}

static void f32_thread(const job *jb, int t, int nt)
{
    const ffn_ukernels *u = ffn__drv_fu(jb->dv);
    const ffn_kshape *s = jb->s;
    const ffn__drv_layout *l = jb->l;
    const size_t d = s->d, f = s->f, T = jb->T, nr = l->nr, nh = l->nh, mr = u->mr;
    const size_t mcb = jb->p->mc, KC = u->kc, rb = l->rowb;
    const size_t pb1 = l->pb1, pb2 = l->pb2;
    float *xp = (float *)(void *)jb->xs, *hp = (float *)(void *)jb->hs;
    const tscratch ts = ffn__drv_scratch_of(jb, t);
    size_t lo, hi;

    /* x -> xp[chunk][panel][k][mr], rows past T zero. */
    const size_t npanels = (T + mr - 1) / mr;
    ffn__split(npanels, t, nt, &lo, &hi);
    for (size_t p = lo; p < hi; p++)
        for (size_t r = 0; r < mr; r++)
            for (size_t pc = 0; pc < d; pc += KC) {
                const size_t kc = d - pc < KC ? d - pc : KC;
                float *dst = xp + chunk_off(pc, p, kc, npanels, mr) + r;
                if (p * mr + r < T) {
                    const float *src = jb->x + (p * mr + r) * d + pc;
                    for (size_t k = 0; k < kc; k++)
                        dst[k * mr] = ffn__drv_act_in(jb, src[k]);
                } else {
                    for (size_t k = 0; k < kc; k++)
                        dst[k * mr] = 0.0f;
                }
            }
    ffn__drv_barrier();

    /* Gate/up GEMM and the activation epilogue into hp[chunk][panel][k][mr]. */
    const size_t nic = (T + mcb - 1) / mcb;
    while (ffn__grab(&jb->next[0], nic * l->np1, jb->p->grab1, &lo, &hi))
        for (size_t it = lo; it < hi; it++) {
            const size_t ic = it / l->np1 * mcb, j = it % l->np1;
            const size_t mc = T - ic < mcb ? T - ic : mcb;
            const unsigned char *bj = jb->w1 + j * pb1;
            for (size_t pc = 0; pc < d; pc += KC) {
                const size_t kc = d - pc < KC ? d - pc : KC;
                const float *B = chunk_b(jb, bj, d, pc, kc, ts.wbuf);
                const size_t kn = (d - pc - kc) < KC ? d - pc - kc : KC;
                const size_t next_bytes = (pc + kc < d ? kn : (d < KC ? d : KC)) * rb;
                for (size_t i = 0; i < mc; i += mr) {
                    const size_t m = mc - i < mr ? mc - i : mr;
                    size_t pfb;
                    const void *pf = pf_slice(bj + (pc + kc) * rb, next_bytes, i, mc, mr, &pfb);
                    u->gemm(m, kc, xp + chunk_off(pc, (ic + i) / mr, kc, npanels, mr), mr, B,
                            ts.acc + i * nr, nr, pc > 0, pf, pfb);
                }
            }
            const size_t n_out = f - j * nh < nh ? f - j * nh : nh;
            ffn__drv_epi_act(jb, j, mc, ts.acc, ts.hbuf);
            for (size_t r = 0; r < mc; r++) {
                const size_t p = (ic + r) / mr;
                const float *src = ts.hbuf + r * nh;
                /* the panel's columns may straddle a chunk (NEON: nh = 6 or 12, KC = 256) */
                for (size_t c = 0; c < n_out;) {
                    const size_t col = j * nh + c, pc = col / KC * KC;
                    const size_t kc = f - pc < KC ? f - pc : KC;
                    const size_t run = pc + kc - col < n_out - c ? pc + kc - col : n_out - c;
                    float *dst =
                        hp + chunk_off(pc, p, kc, npanels, mr) + (col - pc) * mr + (ic + r) % mr;
                    for (size_t e = 0; e < run; e++)
                        dst[e * mr] = ffn__drv_act_in(jb, src[c + e]);
                    c += run;
                }
            }
        }
    ffn__drv_barrier();

    /* Down GEMM: partial sums of the group's panels in the thread's buffer, y at the end. */
    const size_t dmc = jb->p->down_mc;
    size_t ic, mc, j0, j1;
    while (ffn__drv_down_item(jb, &ic, &mc, &j0, &j1)) {
        for (size_t pc = 0; pc < f; pc += KC) {
            const size_t kc = f - pc < KC ? f - pc : KC;
            const bool last = pc + kc == f;
            for (size_t j = j0; j < j1; j++) {
                const unsigned char *bj = jb->w2 + j * pb2;
                const float *B = chunk_b(jb, bj, f, pc, kc, ts.wbuf);
                /* the chunk this item needs next: panel j+1 at pc, else panel j0 at pc + kc */
                const unsigned char *next = j + 1 < j1 ? bj + pb2 + pc * rb
                                            : last     ? (j1 < l->pd ? jb->w2 + j1 * pb2 : NULL)
                                                       : jb->w2 + j0 * pb2 + (pc + kc) * rb;
                const size_t next_bytes = (size_t)KC * rb;
                float *acc = ts.acc + (j - j0) * dmc * nr;
                for (size_t i = 0; i < mc; i += mr) {
                    const size_t m = mc - i < mr ? mc - i : mr;
                    size_t pfb;
                    const void *pf = pf_slice(next, next_bytes, i, mc, mr, &pfb);
                    u->gemm(m, kc, hp + chunk_off(pc, (ic + i) / mr, kc, npanels, mr), mr, B,
                            acc + i * nr, nr, pc > 0, pf, pfb);
                }
            }
        }
        for (size_t j = j0; j < j1; j++)
            for (size_t r = 0; r < mc; r++)
                ffn__drv_epi_out(jb, ic + r, j, ts.acc + ((j - j0) * dmc + r) * nr);
    }
}

static void run_thread(const job *jb, int t, int nt)
{
    if (jb->p->stream)
        stream_thread(jb, t, nt);
    else if (jb->p->pair_gemm)
        ffn__drv_pair_thread(jb, t, nt);
    else if (jb->dv->t)
        ffn__drv_bf16t_thread(jb, t, nt);
    else
        f32_thread(jb, t, nt);
}

static void team_thread(const void *arg, int t, int nt)
{
    run_thread(arg, t, nt);
}

int ffn__drv_forward(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                     const void *packed, size_t T, const float *x, float *y, void *ws,
                     size_t ws_bytes, int threads)
{
    if (dv->i8) return ffn__drv_i8_forward(dv, k, s, packed, T, x, y, ws, ws_bytes, threads);
    int rc = dv->q ? ffn__qcheck_forward(k, dv->id, s, packed, T, x, y, ws, ws_bytes, threads)
                   : ffn__check_forward(k, dv->id, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    ffn__drv_layout l;
    ffn__drv_get_layout(dv, s, &l);
    wsplan p;
    plan_ws(dv, &l, s, T, &p);
    const int nt = ffn__threads(threads);
    if (!p.stream && dv->t) ffn__drv_bf16t_items(dv, &l, nt, &p);
    if (!p.stream && !dv->t)
        ffn__drv_items(T, p.mc, ffn__drv_fu(dv)->mc_down, ffn__drv_fu(dv)->mr, l.np1, l.pd, nt,
                       !p.pair_gemm, &p.grab1, &p.dg, &p.down_mc);
    unsigned char *w = ffn__align64(ws);
    const unsigned char *base = packed;
    size_t next[2] = {0, 0};
    const job jb = {
        .dv = dv,
        .s = s,
        .l = &l,
        .p = &p,
        .w1 = base + l.off_w1,
        .w2 = base + l.off_w2,
        .b1 = s->bias ? (const float *)(const void *)(base + l.off_b1) : NULL,
        .b2 = s->bias ? (const float *)(const void *)(base + l.off_b2) : NULL,
        .T = T,
        .x = x,
        .y = y,
        .xs = w,
        .hs = w + p.x_bytes,
        .asum = p.asum_bytes ? (float *)(void *)(w + p.x_bytes + p.h_bytes) : NULL,
        .pairs =
            p.pair_bytes ? (uint32_t *)(void *)(w + p.x_bytes + p.h_bytes + p.asum_bytes) : NULL,
        .thr = w + p.x_bytes + p.h_bytes + p.asum_bytes + p.pair_bytes,
        .next = next,
    };
    ffn__drv_team(nt, team_thread, &jb);
    return 0;
}
