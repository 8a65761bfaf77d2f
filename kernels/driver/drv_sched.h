/* What the driver's schedules share (private to kernels/driver): the workspace plan of a
 * forward call, the job every thread of its team reads, a thread's scratch, and the epilogues
 * (driver.c); the bf16 tile schedule lives in driver_bf16t.c, the W4 pair schedule in
 * driver_pairs.c, the fp32 one and the decode stream in driver.c. */
#ifndef FFNROOF_KERNELS_DRV_SCHED_H
#define FFNROOF_KERNELS_DRV_SCHED_H

#include "../quant/quant_internal.h"
#include "drv_internal.h"

typedef struct wsplan {
    bool stream;
    size_t rows;             /* rows of x and h held (padded to mr / row_tile) */
    size_t mc;               /* row block */
    size_t x_bytes, h_bytes; /* shared */
    size_t asum_bytes;       /* shared: W4 zero points, group sums of x and h (decode) */
    size_t pair_bytes;       /* shared: x and h as bf16 pairs (tables with a_pairs) */
    bool pair_gemm;          /* prefill on the pairs (the table's pdequant + pgemm): x and h
                                live only as pairs, x_bytes = h_bytes = 0 */
    size_t per_thread;       /* accumulators + widening scratch + epilogue rows */
    size_t acc_floats, wbuf_floats, hbuf_floats;
    /* the work items of the fp32 and pair schedules for the call's threads (ffn__drv_items) */
    size_t grab1;   /* gate/up panels a grab takes */
    size_t dg;      /* down panels a group holds */
    size_t down_mc; /* down row block (the fp32 schedule; the pair one keeps mc) */
    /* the bf16 tile schedule's items per pass (gate/up, down): items a grab, rows a block */
    size_t t_chunk[2], t_mc[2];
} wsplan;

typedef struct job {
    const ffn__drv *dv;
    const ffn_kshape *s;
    const ffn__drv_layout *l;
    const wsplan *p;
    const unsigned char *w1, *w2;
    const float *b1, *b2;
    size_t T;
    const float *x;
    float *y;
    unsigned char *xs, *hs; /* x and h in the schedule's layout */
    float *asum;            /* W4 zero points, decode: group sums of x, then of h */
    uint32_t *pairs;        /* a_pairs tables: x, then h, as bf16 pairs (ffn__drv_wants_pairs) */
    unsigned char *thr;     /* per-thread areas */
    size_t *next;           /* the shared work counters (zeroed) */
} job;

typedef struct tscratch {
    float *acc, *wbuf, *hbuf;
} tscratch;

/* Thread t's accumulators, widening scratch and epilogue rows in the job's workspace. */
tscratch ffn__drv_scratch_of(const job *jb, int t);
/* h (rows x nh, row stride nh, into out) of `rows` accumulator rows c (row stride nr) of up
 * panel j: bias, activation, gate x up, in one microkernel call. */
void ffn__drv_epi_act(const job *jb, size_t j, size_t rows, const float *c, float *out);
/* y columns [j*nr, j*nr + nr) of row r (the valid ones) = c + bias. */
void ffn__drv_epi_out(const job *jb, size_t r, size_t j, const float *c);
/* The bf16 tile schedule (AMX, VDPBF16PS tiles) of thread t of nt (driver_bf16t.c). */
void ffn__drv_bf16t_thread(const job *jb, int t, int nt);
/* The bf16 tile schedule's items for nt threads into p (t_chunk, t_mc; ffn__drv_t_items). */
void ffn__drv_bf16t_items(const ffn__drv *dv, const ffn__drv_layout *l, int nt, wsplan *p);
/* W4 prefill on bf16 pairs (tables with pdequant and pgemm) of thread t of nt (driver_pairs.c). */
void ffn__drv_pair_thread(const job *jb, int t, int nt);

/* The fp32 schedule's largest down GEMM panel group and gate/up grab (ffn__drv_items). */
enum { DG = 4, GRAB_PANELS = 4 };

/* Items a phase aims to have per thread: the last ones, and a thread slowed by another process,
 * then leave the others little to wait for. */
enum { ITEMS_PER_THREAD = 4 };

/* The work items of the fp32 and pair schedules for nt threads, T rows in row blocks of mc (a
 * multiple of mr), np1 gate/up panels and pd down panels: *grab gate/up panels a grab (at most
 * GRAB_PANELS), down groups of *dg panels (at most DG) over row blocks of *down_mc rows (at most
 * mc). Each shrinks, in that order, only while its phase has fewer than ITEMS_PER_THREAD items a
 * thread: the group only lets a chunk of h serve more panels from L2, while each extra down row
 * block reads the down weights once more, so rows split last, and only where split_rows (the
 * fp32 schedule; the pair schedule's h layout follows its own row panels) and never below 4 * mr
 * rows. With 2 threads and LLM shapes nothing shrinks; with 96 (EPYC 9654), T = 512 and d =
 * 2048 the down GEMM had 16 groups of 4 panels (AVX-512: pd = 64), 80 threads idle. */
static inline void ffn__drv_items(size_t T, size_t mc, size_t mr, size_t np1, size_t pd, int nt,
                                  bool split_rows, size_t *grab, size_t *dg, size_t *down_mc)
{
    const size_t want = ITEMS_PER_THREAD * (size_t)(nt > 1 ? nt : 1);
    const size_t nic = (T + mc - 1) / mc;
    *grab = GRAB_PANELS;
    while (*grab > 1 && nic * ((np1 + *grab - 1) / *grab) < want)
        *grab /= 2;
    *dg = DG;
    while (*dg > 1 && nic * ((pd + *dg - 1) / *dg) < want)
        *dg /= 2;
    *down_mc = mc;
    if (!split_rows || nic * pd >= want || pd == 0) return;
    const size_t blocks = (want + pd - 1) / pd;                   /* row blocks wanted */
    size_t rows = ((T + blocks - 1) / blocks + mr - 1) / mr * mr; /* rows a block */
    if (rows < 4 * mr) rows = 4 * mr;
    if (rows >= mc) return;
    /* equal blocks of at most `rows` rows, a multiple of mr (driver.c's block_rows) */
    const size_t nb = (T + rows - 1) / rows;
    *down_mc = ((T + nb - 1) / nb + mr - 1) / mr * mr;
}

/* The bf16 tile schedule's items for nt threads, one pass (np panels, whole groups of g; Tpad
 * rows, a multiple of row_tile, in blocks of mc): *chunk items a grab (chunk0, about 256 KiB of
 * weights, at first) and row blocks of *bmc rows, shrunk as ffn__drv_items shrinks the fp32
 * schedule's: the grab to whole groups first, then the row block, never below 4 row tiles. */
static inline void ffn__drv_t_items(size_t Tpad, size_t mc, size_t row_tile, size_t np, size_t g,
                                    size_t chunk0, int nt, size_t *chunk, size_t *bmc)
{
    const size_t want = ITEMS_PER_THREAD * (size_t)(nt > 1 ? nt : 1);
    const size_t nic = (Tpad + mc - 1) / mc, groups = (np + g - 1) / g;
    *chunk = chunk0;
    while (*chunk > g && nic * ((np + *chunk - 1) / *chunk) < want)
        *chunk = ffn__round_up(*chunk / 2, g);
    *bmc = mc;
    if (nic * groups >= want || groups == 0) return;
    const size_t blocks = (want + groups - 1) / groups;
    size_t rows = ffn__round_up((Tpad + blocks - 1) / blocks, row_tile);
    if (rows < 4 * row_tile) rows = 4 * row_tile;
    if (rows >= mc) return;
    const size_t nb = (Tpad + rows - 1) / rows;
    *bmc = ffn__round_up((Tpad + nb - 1) / nb, row_tile);
}

/* The next item of the down GEMM of the fp32 and pair schedules from the shared counter: the
 * rows [*ic, *ic + *mc) of one row block and the panels [*j0, *j1) of one group; false once
 * every item is taken. */
static inline bool ffn__drv_down_item(const job *jb, size_t *ic, size_t *mc, size_t *j0, size_t *j1)
{
    const size_t T = jb->T, mcb = jb->p->down_mc, pd = jb->l->pd, dg = jb->p->dg;
    const size_t ngrp = (pd + dg - 1) / dg, nic = (T + mcb - 1) / mcb;
    size_t lo, hi;
    if (!ffn__grab(&jb->next[1], nic * ngrp, 1, &lo, &hi)) return false;
    *ic = lo / ngrp * mcb;
    *mc = T - *ic < mcb ? T - *ic : mcb;
    *j0 = lo % ngrp * dg;
    *j1 = pd - *j0 < dg ? pd : *j0 + dg;
    return true;
}

/* An activation as the kernel multiplies it: fp32, or rounded to bf16 (quantized A16). */
static inline float ffn__drv_act_in(const job *jb, float v)
{
    return jb->dv->abf16 ? ffn__bf16_round(v) : v;
}

#endif
