/* What every schedule of the driver shares (see driver.h): the threads of a forward call and
 * their barrier, each thread's scratch, the decode stream's row limit and the two epilogues (h
 * from the gate/up accumulators, y from the down ones). The schedules (driver.c, driver_bf16t.c,
 * driver_pairs.c, driver_i8.c) call these; nothing here calls a schedule. */
#include "drv_sched.h"

#include <string.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

unsigned ffn__drv_stream_rows(const ffn__drv *dv)
{
    if (dv->i8) return dv->i8->gemv ? dv->i8->stream_rows : 0;
    if (dv->t) return dv->t->stream_rows_fn ? dv->t->stream_rows_fn() : dv->t->stream_rows;
    if (dv->q) return dv->q->stream_rows;
    return dv->u->gemv[dv->wdt] ? dv->u->stream_rows[dv->wdt] : 0;
}

tscratch ffn__drv_scratch_of(const job *jb, int t)
{
    unsigned char *b = jb->thr + (size_t)t * jb->p->per_thread;
    tscratch ts;
    ts.acc = (float *)(void *)b;
    b += ffn__round_up(jb->p->acc_floats * 4, 64);
    ts.wbuf = (float *)(void *)b;
    b += ffn__round_up(jb->p->wbuf_floats * 4, 64);
    ts.hbuf = (float *)(void *)b;
    return ts;
}

void ffn__drv_barrier(void)
{
#if defined(_OPENMP)
#pragma omp barrier
#endif
}

void ffn__drv_team(int nt, ffn__drv_thread_fn fn, const void *arg)
{
#if defined(_OPENMP)
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        {
            ffn__clean_upper();
            fn(arg, omp_get_thread_num(), omp_get_num_threads());
        }
        return;
    }
#endif
    (void)nt;
    ffn__clean_upper();
    fn(arg, 0, 1);
}

/* h (rows x nh, row stride nh, into out) of `rows` accumulator rows c (row stride nr) of up
 * panel j: bias, activation, gate x up, in one microkernel call. */
void ffn__drv_epi_act(const job *jb, size_t j, size_t rows, const float *c, float *out)
{
    const ffn_kshape *s = jb->s;
    const size_t nr = jb->l->nr, nh = jb->l->nh;
    const float *b = jb->b1 ? jb->b1 + j * nr : NULL;
    const ffn_ukr_act_fn act = jb->dv->t ? jb->dv->t->act : ffn__drv_fu(jb->dv)->act;
    if (ffn__gated(s->act))
        act(s->act, rows, nh, c, c + nh, nr, b, b ? b + nh : NULL, out, nh);
    else
        act(s->act, rows, nh, c, NULL, nr, b, NULL, out, nh);
}

/* y columns [j*nr, j*nr + nr) of row r (the valid ones) = c + bias. */
void ffn__drv_epi_out(const job *jb, size_t r, size_t j, const float *c)
{
    const size_t d = jb->s->d, nr = jb->l->nr, c0 = j * nr;
    const size_t n = d - c0 < nr ? d - c0 : nr;
    float *yr = jb->y + r * d + c0;
    const float *b = jb->b2 ? jb->b2 + c0 : NULL;
    if (b)
        for (size_t i = 0; i < n; i++)
            yr[i] = c[i] + b[i];
    else
        memcpy(yr, c, n * sizeof *yr);
}
