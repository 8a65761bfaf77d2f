/* The driver's W4 prefill on bf16 pairs (ffn_ukernels_q tables with pdequant and pgemm: the
 * AVX512-BF16 W4A16 one): the fp32 schedule's items (row block, panel), K chunks and row tiles
 * of driver.c, with x and h held only as bf16 pairs, and each weight chunk's code pairs
 * looked up once per row block into the thread's scratch.
 *
 * x and h are the a_pairs layout of ukernel.h per row panel of mr rows (the tile height, at most
 * the fp32 table's mr): word (b, r, i) of panel p at ((p (K / 8) + b) mr + r) 4 + i, so a tile
 * reads its chunk's activations contiguously (224 bytes a block). With the rows of all T in one
 * a_pairs array (as = T), the 32 blocks of a chunk lay T * 16 bytes apart, 8 KiB at T = 512, all in
 * the same few L1 sets: Zen 4 ran T = 512 d = 2048 f = 5632 at 0.74-0.89x the bf16 kernel. */
#include "drv_sched.h"

#include "qpack.h"

/* Word (k / 8, r, k % 4) of a matrix of K columns in the panelled pair layout above. */
static inline size_t pword(size_t K, size_t mr, size_t r, size_t k)
{
    return ((r / mr * (K / 8) + k / 8) * mr + r % mr) * 4 + k % 4;
}

/* x (T rows of d) in that layout, rounded as the kernel multiplies it; a barrier follows. */
static void x_pairs(const job *jb, size_t mr, uint32_t *ap, int t, int nt)
{
    const size_t T = jb->T, K = jb->s->d;
    const float *x = jb->x;
    size_t lo, hi;
    ffn__split(T, t, nt, &lo, &hi);
    for (size_t r = lo; r < hi; r++)
        for (size_t b = 0; b < K / 8; b++)
            for (size_t i = 0; i < 4; i++) {
                const uint32_t lo16 = ffn__f32_to_bf16(ffn__drv_act_in(jb, x[r * K + 8 * b + i]));
                const uint32_t hi16 =
                    ffn__f32_to_bf16(ffn__drv_act_in(jb, x[r * K + 8 * b + 4 + i]));
                ap[pword(K, mr, r, 8 * b + i)] = lo16 | hi16 << 16;
            }
    ffn__drv_barrier();
}

/* One K chunk of one weight panel for the mc rows from ic (a multiple of mr): its code pairs
 * into the thread's scratch, then every row tile. */
static void pair_chunk(const job *jb, size_t mr, const unsigned char *panel, size_t K, size_t pc,
                       size_t kc, const uint32_t *ap, size_t ic, size_t mc, float *acc,
                       const tscratch *ts)
{
    const ffn__drv *dv = jb->dv;
    const size_t nr = jb->l->nr, G = jb->s->group;
    ffn_ukr_qpanel qp;
    ffn__qpanel_view(dv->qf, panel, K, nr, G, false, &qp);
    uint32_t *bp = (uint32_t *)(void *)ts->wbuf;
    dv->q->pdequant(pc, kc, &qp, bp);
    for (size_t i = 0; i < mc; i += mr) {
        const size_t m = mc - i < mr ? mc - i : mr;
        dv->q->pgemm(m, kc, ap + pword(K, mr, ic + i, pc), mr, bp, qp.gscale + pc / G * nr, G,
                     acc + i * nr, nr, pc > 0);
    }
}

void ffn__drv_pair_thread(const job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const ffn__drv_layout *l = jb->l;
    const size_t d = s->d, f = s->f, T = jb->T, nr = l->nr, nh = l->nh;
    const size_t mcb = jb->p->mc, KC = ffn__drv_fu(jb->dv)->kc, mr0 = ffn__drv_fu(jb->dv)->mr;
    /* One row block: tiles of equal height (16 rows as 8 + 8, not 14 + 2, whose 2-row tile has
     * too few accumulator chains to cover VDPBF16PS's latency), which is also the height of the
     * row panels of x and h; several blocks: the table's mr (block starts are multiples of it). */
    const size_t ntile = (T + mr0 - 1) / mr0;
    const size_t mr = T <= mcb ? (T + ntile - 1) / ntile : mr0;
    uint32_t *px = jb->pairs, *ph = jb->pairs + d / 2 * jb->p->rows;
    uint16_t *ph16 = (uint16_t *)(void *)ph;
    const tscratch ts = ffn__drv_scratch_of(jb, t);
    size_t lo, hi;
    x_pairs(jb, mr, px, t, nt);

    const size_t nic = (T + mcb - 1) / mcb;
    while (ffn__grab(&jb->next[0], nic * l->np1, jb->p->grab1, &lo, &hi))
        for (size_t it = lo; it < hi; it++) {
            const size_t ic = it / l->np1 * mcb, j = it % l->np1;
            const size_t mc = T - ic < mcb ? T - ic : mcb;
            for (size_t pc = 0; pc < d; pc += KC)
                pair_chunk(jb, mr, jb->w1 + j * l->pb1, d, pc, d - pc < KC ? d - pc : KC, px, ic,
                           mc, ts.acc, &ts);
            const size_t n_out = f - j * nh < nh ? f - j * nh : nh;
            ffn__drv_epi_act(jb, j, mc, ts.acc, ts.hbuf);
            /* h(r, k) into its half of its word (nh is a multiple of 8, so both halves of a
             * word are this item's) */
            for (size_t r = 0; r < mc; r++)
                for (size_t c = 0; c < n_out; c++) {
                    const size_t k = j * nh + c, wd = pword(f, mr, ic + r, k);
                    ph16[wd * 2 + k % 8 / 4] =
                        ffn__f32_to_bf16(ffn__drv_act_in(jb, ts.hbuf[r * nh + c]));
                }
        }
    ffn__drv_barrier();

    size_t ic, mc, j0, j1;
    while (ffn__drv_down_item(jb, &ic, &mc, &j0, &j1)) {
        for (size_t pc = 0; pc < f; pc += KC)
            for (size_t j = j0; j < j1; j++)
                pair_chunk(jb, mr, jb->w2 + j * l->pb2, f, pc, f - pc < KC ? f - pc : KC, ph, ic,
                           mc, ts.acc + (j - j0) * mcb * nr, &ts);
        for (size_t j = j0; j < j1; j++)
            for (size_t r = 0; r < mc; r++)
                ffn__drv_epi_out(jb, ic + r, j, ts.acc + ((j - j0) * mcb + r) * nr);
    }
}
