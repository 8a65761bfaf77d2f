/* The driver's bf16 tile schedule (AMX and VDPBF16PS tile engines, ffn_ukernels_bf16t): x and
 * h as bf16 rows, VNNI pair panels, runs of (row block, panel group) items from a shared
 * counter with the next run's panels prefetched; see driver.c for the fp32 schedule and the
 * decode stream, drv_sched.h for what they share. */
#include "drv_sched.h"

/* A run of panels of one row block for the bf16 tile schedule: items (row block, panel) come
 * from the shared counter a chunk of `chunk` at a time (a multiple of the engine's panel group,
 * so groups stay whole); a chunk that crosses into the next row block is handed out as two runs.
 * The chunk after the current one is taken as soon as the current one's last run is handed out,
 * so that run's last gemm call can prefetch the panels that come next (*nlo, *nn: the first
 * panel of the next run and how many panels it has; *nn = 0 when there is none): the AMX
 * engine streams its weights through that prefetch, and without it at every chunk boundary one
 * thread ran T=512 d=2048 f=5632 at 96 ms against 41 ms. Returns false once every item is
 * taken; else the row block index *ib and panels [*lo, *hi). */
typedef struct grabrun {
    size_t s, e;   /* the items of the current chunk not handed out yet */
    size_t ns, ne; /* the chunk taken ahead (ns == ne: none) */
    bool started, done;
} grabrun;

static bool next_run(size_t *counter, size_t nblocks, size_t np, size_t chunk, grabrun *g,
                     size_t *ib, size_t *lo, size_t *hi, size_t *nlo, size_t *nn)
{
    const size_t n = nblocks * np;
    if (!g->started) {
        g->started = true;
        if (!ffn__grab(counter, n, chunk, &g->s, &g->e)) g->done = true;
    } else if (g->s >= g->e) {
        if (g->ns >= g->ne) return false;
        g->s = g->ns;
        g->e = g->ne;
        g->ns = g->ne = 0;
    }
    if (g->done) return false;
    *ib = g->s / np;
    *lo = g->s % np;
    const size_t blk_end = (*ib + 1) * np, e = g->e < blk_end ? g->e : blk_end;
    *hi = e - *ib * np;
    g->s = e;
    if (g->s >= g->e && !ffn__grab(counter, n, chunk, &g->ns, &g->ne)) g->ns = g->ne = 0;
    /* the run that follows: the rest of this chunk (a new row block), or the chunk ahead */
    size_t fs = g->s, fe = g->e;
    if (fs >= fe) {
        fs = g->ns;
        fe = g->ne;
    }
    *nn = 0;
    if (fs < fe) {
        const size_t fb_end = (fs / np + 1) * np;
        *nlo = fs % np;
        *nn = (fe < fb_end ? fe : fb_end) - fs;
    }
    return true;
}

/* Items per grab of the bf16 tile schedule: about 256 KiB of weights, whole panel groups. */
static size_t bf16t_chunk(const ffn_ukernels_bf16t *tk, size_t panel_bytes)
{
    const size_t g = tk->panels ? tk->panels : 1;
    return ffn__round_up(ffn__grab_chunk(panel_bytes), g);
}

/* One gemm call of the bf16 tile schedule: panels [j, j + np) of the weights w (pb elements a
 * panel) in a run that ends at hi, prefetching up to ge panels that come next: the rest of the
 * run, else the next run's (nlo, nn from next_run). */
static void bf16t_gemm(const ffn_ukernels_bf16t *tk, size_t kp, const uint16_t *a, size_t lda,
                       size_t mc, const uint16_t *w, size_t pb, size_t j, size_t np, size_t hi,
                       size_t ge, size_t nlo, size_t nn, float *acc)
{
    const size_t jn = j + np, left = jn < hi ? hi - jn : nn;
    const uint16_t *pf = jn < hi ? w + jn * pb : nn ? w + nlo * pb : NULL;
    tk->gemm(kp, a, lda, mc, w + j * pb, np, pf, left < ge ? left : ge, acc);
}

/* One GEMM of the bf16 tile schedule over its shared counter: pass 0 x W_gate|up into h (the
 * activation epilogue, narrowed to bf16; the h columns past f zeroed), pass 1 h W_down into y
 * (+ b_down). Each row tile goes panel by panel, so the weights are read as one stream. */
static void bf16t_pass(const job *jb, const tscratch *ts, int pass)
{
    const ffn_ukernels_bf16t *tk = jb->dv->t;
    const ffn__drv_layout *l = jb->l;
    const size_t f = jb->s->f, T = jb->T, Tpad = jb->p->rows, nh = l->nh;
    const size_t kp = pass ? l->kp2 : l->kp1, np_all = pass ? l->pd : l->np1, pb = kp * 32;
    const uint16_t *w = (const uint16_t *)(const void *)(pass ? jb->w2 : jb->w1);
    const uint16_t *a = (const uint16_t *)(const void *)(pass ? jb->hs : jb->xs);
    uint16_t *hb = (uint16_t *)(void *)jb->hs;
    const size_t lda = pass ? l->ldh : l->ldx;
    const size_t mcb = jb->p->t_mc[pass], nic = (Tpad + mcb - 1) / mcb;
    grabrun g = {0};
    size_t ib, lo, hi, nlo = 0, nn = 0; /* set by next_run; zero keeps -O2 from warning */
    while (next_run(&jb->next[pass], nic, np_all, jb->p->t_chunk[pass], &g, &ib, &lo, &hi, &nlo,
                    &nn)) {
        const size_t ic = ib * mcb;
        const size_t mc = Tpad - ic < mcb ? Tpad - ic : mcb;
        const size_t ge = mc > tk->row_tile ? tk->panels : 1;
        for (size_t j = lo; j < hi; j += ge) {
            const size_t np = hi - j < ge ? hi - j : ge;
            bf16t_gemm(tk, kp, a + ic * lda, lda, mc, w, pb, j, np, hi, ge, nlo, nn, ts->acc);
            for (size_t gi = 0; gi < np; gi++) {
                const float *acc = ts->acc + gi * mc * 32;
                if (pass) {
                    for (size_t r = 0; r < mc && ic + r < T; r++)
                        ffn__drv_epi_out(jb, ic + r, j + gi, acc + r * 32);
                    continue;
                }
                const size_t n_out = f - (j + gi) * nh < nh ? f - (j + gi) * nh : nh;
                ffn__drv_epi_act(jb, j + gi, mc, acc, ts->hbuf);
                if (n_out < nh) /* the last panel: zero the h columns past f */
                    for (size_t r = 0; r < mc; r++)
                        memset(ts->hbuf + r * nh + n_out, 0, (nh - n_out) * 4);
                tk->narrow(mc, nh, ts->hbuf, nh, hb + ic * l->ldh + (j + gi) * nh, l->ldh);
            }
        }
    }
}

void ffn__drv_bf16t_items(const ffn__drv *dv, const ffn__drv_layout *l, int nt, wsplan *p)
{
    const ffn_ukernels_bf16t *tk = dv->t;
    const size_t g = tk->panels ? tk->panels : 1, rt = tk->row_tile > 1 ? tk->row_tile : 1;
    const size_t mc = p->rows < tk->mc ? p->rows : tk->mc;
    for (int pass = 0; pass < 2; pass++) {
        const size_t np = pass ? l->pd : l->np1, kp = pass ? l->kp2 : l->kp1;
        ffn__drv_phase_items(p->rows, mc, rt, np, g, bf16t_chunk(tk, kp * 32 * 2), nt,
                             &p->t_chunk[pass], &p->t_mc[pass]);
    }
}

void ffn__drv_bf16t_thread(const job *jb, int t, int nt)
{
    const ffn_ukernels_bf16t *tk = jb->dv->t;
    const ffn_kshape *s = jb->s;
    const ffn__drv_layout *l = jb->l;
    const size_t d = s->d, T = jb->T, Tpad = jb->p->rows, nh = l->nh;
    uint16_t *xb = (uint16_t *)(void *)jb->xs, *hb = (uint16_t *)(void *)jb->hs;
    const tscratch ts = ffn__drv_scratch_of(jb, t);
    size_t lo, hi;

    /* x -> bf16 rows (zero past d and past T); h columns past f to zero (read up to kp2). */
    const size_t hcols = l->np1 * nh;
    ffn__split(Tpad, t, nt, &lo, &hi);
    for (size_t r = lo; r < hi; r++) {
        if (r < T) {
            tk->narrow(1, d, jb->x + r * d, d, xb + r * l->ldx, l->ldx);
            memset(xb + r * l->ldx + d, 0, (l->ldx - d) * 2);
        } else {
            memset(xb + r * l->ldx, 0, l->ldx * 2);
        }
        memset(hb + r * l->ldh + hcols, 0, (l->ldh - hcols) * 2);
    }
    ffn__drv_barrier();
    if (tk->begin) tk->begin();

    /* Gate/up, then down: runs of (row block, panel group) items from the shared counter, so a
     * thread slowed by another process leaves its panels to the other one (a fixed share made
     * the whole call wait for it: bf16 T=256 d=2048 took 10.8 to 21.9 ms on the shared VM). */
    bf16t_pass(jb, &ts, 0);
    ffn__drv_barrier();
    bf16t_pass(jb, &ts, 1);
    if (tk->end) tk->end();
}
