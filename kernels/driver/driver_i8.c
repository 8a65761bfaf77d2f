/* The W8A8 schedule of the portable driver (see driver.h): int8 weights per output channel in
 * VNNI panels of 32 columns (qpack.h), x and h quantized per token on the fly (dynamic,
 * symmetric: include/ffnroof/quant.h), int8 dot products with int32 sums through the ISA's
 * ffn_ukernels_i8, then y = sum * s_token * s_column (+ bias) in fp32.
 *
 * One forward: (1) the rows of x are quantized into row-major codes (row stride an odd number
 * of cache lines, as the bf16 tiles', so the rows of an AMX tile load fall into different L1
 * sets); (2) gate/up: items of (row block, group of panels) from a shared counter, the int32
 * sums scaled, biased and activated into fp32 h rows; (3) each row of h is quantized once it is
 * whole (a per-token scale needs the row's maximum, hence h is kept in fp32 until then); (4)
 * down: the same items over the h codes, scaled into y. T <= stream_rows runs the table's gemv
 * (decode: each weight byte read once) instead of its row-tiled gemm. */
#include "../quant/quant_internal.h"
#include "driver.h"
#include "drv_sched.h"
#include "qpack.h"

enum { NR = 32 };

typedef struct i8layout {
    size_t nh, np1, pd, kp1, kp2;
    size_t off_c1, off_c2, off_s1, off_s2, off_q1, off_q2, off_b1, off_b2, total;
} i8layout;

static void get_layout(const ffn__drv *dv, const ffn_kshape *s, i8layout *l)
{
    const ffn_ukernels_i8 *u = dv->i8;
    l->nh = ffn__gated(s->act) ? NR / 2 : NR;
    l->np1 = (s->f + l->nh - 1) / l->nh;
    l->pd = (s->d + NR - 1) / NR;
    l->kp1 = ffn__round_up(s->d, u->kpad);
    l->kp2 = ffn__round_up(s->f, u->kpad);
    l->off_c1 = FFN__PACK_HDR;
    l->off_c2 = l->off_c1 + ffn__round_up(l->np1 * l->kp1 * NR, 64);
    l->off_s1 = l->off_c2 + ffn__round_up(l->pd * l->kp2 * NR, 64);
    l->off_s2 = l->off_s1 + l->np1 * NR * 4;
    l->off_q1 = l->off_s2 + l->pd * NR * 4;
    l->off_q2 = l->off_q1 + l->np1 * NR * 4;
    l->off_b1 = l->off_q2 + l->pd * NR * 4;
    l->off_b2 = l->off_b1 + (s->bias ? l->np1 * NR * 4 : 0);
    l->total = l->off_b2 + (s->bias ? l->pd * NR * 4 : 0);
}

static int check_shape(const ffn_kshape *s)
{
    return ffn__qcheck_shape(s, FFN_DT_INT8, FFN_DT_INT8);
}

size_t ffn__drv_i8_packed_bytes(const ffn__drv *dv, const ffn_kshape *s)
{
    if (check_shape(s)) return 0;
    i8layout l;
    get_layout(dv, s, &l);
    return l.total;
}

int ffn__drv_i8_pack(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                     const ffn_kweights *w, void *packed, size_t n)
{
    if (check_shape(s)) return FFN_EINVAL;
    int rc = ffn__check_pack(k, s, w, packed, n);
    if (rc) return rc;
    i8layout l;
    get_layout(dv, s, &l);
    unsigned char *p = packed;
    const bool gated = ffn__gated(s->act);
    const size_t kv = dv->i8->kv;
    rc = ffn__qpack_i8(s->d, s->f, w->w_gate, gated ? w->w_up : NULL, kv, l.kp1,
                       (int8_t *)(p + l.off_c1), l.np1, (int32_t *)(void *)(p + l.off_s1),
                       (float *)(void *)(p + l.off_q1));
    if (!rc)
        rc = ffn__qpack_i8(s->f, s->d, w->w_down, NULL, kv, l.kp2, (int8_t *)(p + l.off_c2), l.pd,
                           (int32_t *)(void *)(p + l.off_s2), (float *)(void *)(p + l.off_q2));
    if (rc) return rc; /* a NaN or Inf weight has no scale */
    if (s->bias) {
        float *b1 = (float *)(void *)(p + l.off_b1), *b2 = (float *)(void *)(p + l.off_b2);
        for (size_t j = 0; j < l.np1; j++)
            for (size_t c = 0; c < NR; c++) {
                const size_t col = gated ? j * l.nh + (c % l.nh) : j * NR + c;
                const float *src = gated && c >= l.nh ? w->b_up : w->b_gate;
                b1[j * NR + c] = col < s->f ? src[col] : 0.0f;
            }
        for (size_t j = 0; j < l.pd * NR; j++)
            b2[j] = j < s->d ? w->b_down[j] : 0.0f;
    }
    ffn__qwrite_hdr(packed, dv->id, s);
    return 0;
}

/* ---- workspace ---------------------------------------------------------------------------- */

typedef struct i8plan {
    bool stream;
    size_t rows, mc; /* rows held (T padded to row_tile), rows per item */
    size_t ldx, ldh; /* code row strides (bytes) */
    size_t ldf;      /* fp32 h row stride (floats) */
    size_t off_sx, off_hf, off_hq, off_sh, shared;
    size_t off_g, per_thread; /* per thread: int32 sums, fp32 tile */
    size_t grp[2], imc[2];    /* per matrix (up, down): panels and rows of an item (i8_items) */
} i8plan;

/* A code row stride for n codes: whole cache lines, an odd number of them. */
static size_t odd_lines(size_t n)
{
    const size_t b = ffn__round_up(n, 64);
    return (b / 64) % 2 ? b : b + 64;
}

static void plan_ws(const ffn__drv *dv, const i8layout *l, const ffn_kshape *s, size_t T, i8plan *p)
{
    const ffn_ukernels_i8 *u = dv->i8;
    memset(p, 0, sizeof *p);
    p->stream = T <= ffn__drv_stream_rows(dv);
    const size_t rt = p->stream || u->row_tile < 1 ? 1 : u->row_tile;
    p->rows = ffn__round_up(T, rt);
    p->mc = p->stream ? u->stream_g : (p->rows < u->mc ? p->rows : u->mc);
    p->ldx = odd_lines(l->kp1);
    p->ldh = odd_lines(l->kp2);
    p->ldf = l->np1 * l->nh;
    p->off_sx = ffn__round_up(p->rows * p->ldx, 64);
    p->off_hf = p->off_sx + ffn__round_up(p->rows * 4, 64);
    p->off_hq = p->off_hf + ffn__round_up(T * p->ldf * 4, 64);
    p->off_sh = p->off_hq + ffn__round_up(p->rows * p->ldh, 64);
    p->shared = p->off_sh + ffn__round_up(p->rows * 4, 64);
    const size_t cb = (size_t)u->panels * p->mc * NR * 4;
    p->off_g = ffn__round_up(cb, 64);
    p->per_thread = p->off_g + ffn__round_up(p->mc * NR * 4, 64);
    (void)s;
}

/* Items (row block x panel group, each one gemm call over all of K) for nt threads: the
 * table's panels and mc, shrunk as the float schedules' are (ffn__drv_phase_items: panels first,
 * then rows, never below 4 row tiles) where a matrix has fewer than 4 items a thread. The
 * decode stream keeps its own. */
static void i8_items(const ffn_ukernels_i8 *u, const i8layout *l, int nt, i8plan *p)
{
    const size_t rt = p->stream || u->row_tile < 1 ? 1 : u->row_tile;
    for (int m = 0; m < 2; m++) {
        p->grp[m] = u->panels;
        p->imc[m] = p->mc;
        if (!p->stream)
            ffn__drv_phase_items(p->rows, p->mc, rt, m ? l->pd : l->np1, 1, u->panels, nt,
                                 &p->grp[m], &p->imc[m]);
    }
}

size_t ffn__drv_i8_workspace_bytes(const ffn__drv *dv, const ffn_kshape *s, size_t T, int threads)
{
    if (check_shape(s) || T == 0) return 0;
    i8layout l;
    get_layout(dv, s, &l);
    i8plan p;
    plan_ws(dv, &l, s, T, &p);
    return 64 + p.shared + (size_t)ffn__threads(threads) * p.per_thread;
}

/* ---- forward ------------------------------------------------------------------------------ */

typedef struct i8job {
    const ffn_ukernels_i8 *u;
    const ffn_kshape *s;
    const i8layout *l;
    const i8plan *p;
    const unsigned char *pk; /* the packed blob */
    size_t T;
    const float *x;
    float *y;
    unsigned char *w; /* aligned workspace */
    size_t *next;
} i8job;

/* Rows [lo, hi) of src (n fp32 each, stride lds) quantized into codes (stride ldq, zero past n
 * up to ldq) and scales; rows from T on are zero. */
static void quant_rows(const i8job *jb, size_t lo, size_t hi, const float *src, size_t n,
                       size_t lds, uint8_t *q, size_t ldq, float *scale)
{
    const unsigned char zero = (unsigned char)jb->u->a_offset;
    for (size_t r = lo; r < hi; r++) {
        if (r < jb->T) {
            jb->u->quant(1, n, src + r * lds, lds, q + r * ldq, ldq, scale + r);
            memset(q + r * ldq + n, zero, ldq - n);
        } else {
            memset(q + r * ldq, zero, ldq);
            scale[r] = 0.0f;
        }
    }
}

/* One matrix: items (row block, group of panels); out() consumes each panel's int32 sums. */
typedef struct i8mat {
    const uint8_t *a;   /* codes of the rows */
    size_t lda, kp, np; /* code row stride, K as stored, panels */
    const int8_t *b;    /* panels */
    const int32_t *bsum;
} i8mat;

static void run_mat(const i8job *jb, const i8mat *m, size_t *next, int t, int down)
{
    const ffn_ukernels_i8 *u = jb->u;
    const i8plan *p = jb->p;
    const ffn_kshape *s = jb->s;
    const i8layout *l = jb->l;
    const size_t P = p->grp[down], mcb = p->imc[down], rows = p->rows, T = jb->T;
    const size_t nrb = (rows + mcb - 1) / mcb, ng = (m->np + P - 1) / P;
    unsigned char *tb = jb->w + p->shared + (size_t)t * p->per_thread;
    int32_t *cbuf = (int32_t *)(void *)tb;
    float *gb = (float *)(void *)(tb + p->off_g);
    const float *sa = (const float *)(const void *)(jb->w + (down ? p->off_sh : p->off_sx));
    const float *sw = (const float *)(const void *)(jb->pk + (down ? l->off_q2 : l->off_q1));
    const float *bias =
        s->bias ? (const float *)(const void *)(jb->pk + (down ? l->off_b2 : l->off_b1)) : NULL;
    float *hf = (float *)(void *)(jb->w + p->off_hf);
    size_t lo, hi;
    while (ffn__grab(next, nrb * ng, 1, &lo, &hi)) {
        const size_t ic = lo / ng * mcb, j0 = lo % ng * P;
        const size_t np = m->np - j0 < P ? m->np - j0 : P;
        const size_t mc = rows - ic < mcb ? rows - ic : mcb;
        (p->stream ? u->gemv : u->gemm)(m->kp, m->a + ic * m->lda, m->lda, mc,
                                        m->b + j0 * m->kp * NR, np, m->bsum + j0 * NR, cbuf);
        const size_t live = T > ic ? (T - ic < mc ? T - ic : mc) : 0; /* rows < T */
        for (size_t g = 0; g < np; g++) {
            const size_t j = j0 + g;
            const int32_t *cg = cbuf + g * mc * NR;
            if (u->scale)
                u->scale(live, cg, sa + ic, sw + j * NR, gb);
            else
                for (size_t r = 0; r < live; r++)
                    for (size_t c = 0; c < NR; c++)
                        gb[r * NR + c] = (float)cg[r * NR + c] * sa[ic + r] * sw[j * NR + c];
            if (down) {
                const size_t c0 = j * NR, n = s->d - c0 < NR ? s->d - c0 : NR;
                for (size_t r = 0; r < live; r++) {
                    float *yr = jb->y + (ic + r) * s->d + c0;
                    for (size_t c = 0; c < n; c++)
                        yr[c] = bias ? gb[r * NR + c] + bias[c0 + c] : gb[r * NR + c];
                }
                continue;
            }
            /* straight into h's rows: their stride ldf holds every panel's nh columns (the
             * last panel's past f are padding quant_rows never reads). Through a row buffer and
             * a memcpy of 64 bytes a row, the copies took 6% of a W8A8 AMX prefill (T = 512, d
             * = 2048, f = 5632, two threads, SPR-class VM). */
            const float *b = bias ? bias + j * NR : NULL;
            const size_t nh = l->nh;
            float *h = hf + ic * p->ldf + j * nh;
            if (ffn__gated(s->act))
                u->act(s->act, live, nh, gb, gb + nh, NR, b, b ? b + nh : NULL, h, p->ldf);
            else
                u->act(s->act, live, nh, gb, NULL, NR, b, NULL, h, p->ldf);
        }
    }
}

static void run_thread(const i8job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const i8layout *l = jb->l;
    const i8plan *p = jb->p;
    uint8_t *xq = jb->w, *hq = jb->w + p->off_hq;
    float *sx = (float *)(void *)(jb->w + p->off_sx), *sh = (float *)(void *)(jb->w + p->off_sh);
    const float *hf = (const float *)(const void *)(jb->w + p->off_hf);
    size_t lo, hi;
    ffn__split(p->rows, t, nt, &lo, &hi);
    quant_rows(jb, lo, hi, jb->x, s->d, s->d, xq, p->ldx, sx);
    ffn__drv_barrier();
    if (jb->u->begin) jb->u->begin();
    const i8mat up = {.a = xq,
                      .lda = p->ldx,
                      .kp = l->kp1,
                      .np = l->np1,
                      .b = (const int8_t *)(jb->pk + l->off_c1),
                      .bsum = (const int32_t *)(const void *)(jb->pk + l->off_s1)};
    run_mat(jb, &up, &jb->next[0], t, 0);
    ffn__drv_barrier();
    quant_rows(jb, lo, hi, hf, s->f, p->ldf, hq, p->ldh, sh);
    ffn__drv_barrier();
    const i8mat down = {.a = hq,
                        .lda = p->ldh,
                        .kp = l->kp2,
                        .np = l->pd,
                        .b = (const int8_t *)(jb->pk + l->off_c2),
                        .bsum = (const int32_t *)(const void *)(jb->pk + l->off_s2)};
    run_mat(jb, &down, &jb->next[1], t, 1);
    if (jb->u->end) jb->u->end();
}

static void team_thread(const void *arg, int t, int nt)
{
    run_thread(arg, t, nt);
}

int ffn__drv_i8_forward(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                        const void *packed, size_t T, const float *x, float *y, void *ws,
                        size_t ws_bytes, int threads)
{
    int rc = ffn__qcheck_forward(k, dv->id, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    i8layout l;
    get_layout(dv, s, &l);
    i8plan p;
    plan_ws(dv, &l, s, T, &p);
    const int nt = ffn__threads(threads);
    i8_items(dv->i8, &l, nt, &p);
    size_t next[2] = {0, 0};
    const i8job jb = {
        .u = dv->i8,
        .s = s,
        .l = &l,
        .p = &p,
        .pk = packed,
        .T = T,
        .x = x,
        .y = y,
        .w = ffn__align64(ws),
        .next = next,
    };
    ffn__drv_team(nt, team_thread, &jb);
    return 0;
}
