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
/* The bf16 tile schedule's items for nt threads into p (t_chunk, t_mc; ffn__drv_phase_items). */
void ffn__drv_bf16t_items(const ffn__drv *dv, const ffn__drv_layout *l, int nt, wsplan *p);
/* W4 prefill on bf16 pairs (tables with pdequant and pgemm) of thread t of nt (driver_pairs.c). */
void ffn__drv_pair_thread(const job *jb, int t, int nt);

/* The fp32 schedule's largest down GEMM panel group and gate/up grab (ffn__drv_items). */
enum { DG = 4, GRAB_PANELS = 4 };

/* Items a phase aims to have per thread: the last ones, and a thread slowed by another process,
 * then leave the others little to wait for. */
enum { ITEMS_PER_THREAD = 4 };

/* Rows per block: at most mc_max and equal blocks (T = 512 is one block of 512 rows, not 504 +
 * 8, which would stream every weight twice for 8 rows), a multiple of mr. */
static inline size_t ffn__drv_block_rows(size_t T, size_t mc_max, size_t mr)
{
    const size_t blocks = (T + mc_max - 1) / mc_max;
    return ffn__round_up((T + blocks - 1) / blocks, mr);
}

/* The items of one phase of a schedule for nt threads: np panels handed out chunk0 at a time
 * (whole groups of g), over T rows (a multiple of row_tile where the schedule pads) in blocks of
 * mc. *chunk panels an item or grab and row blocks of *bmc rows, each shrunk, in that order,
 * only while the phase has fewer than ITEMS_PER_THREAD items a thread: a larger chunk only lets
 * the rows' chunk serve more panels from L2, while each extra row block reads the weights once
 * more, so rows split last, never below 4 row tiles, into equal blocks. With 2 threads and LLM
 * shapes nothing shrinks; with 96 (EPYC 9654), T = 512 and d = 2048 the fp32 schedule's down
 * GEMM had 16 groups of 4 panels (AVX-512: pd = 64), 80 threads idle. */
static inline void ffn__drv_phase_items(size_t T, size_t mc, size_t row_tile, size_t np, size_t g,
                                        size_t chunk0, int nt, size_t *chunk, size_t *bmc)
{
    const size_t want = ITEMS_PER_THREAD * (size_t)(nt > 1 ? nt : 1);
    const size_t nic = (T + mc - 1) / mc, groups = (np + g - 1) / g;
    *chunk = chunk0;
    while (*chunk > g && nic * ((np + *chunk - 1) / *chunk) < want)
        *chunk = ffn__round_up(*chunk / 2, g);
    *bmc = mc;
    if (nic * groups >= want || groups == 0) return;
    const size_t blocks = (want + groups - 1) / groups;
    size_t rows = ffn__round_up((T + blocks - 1) / blocks, row_tile);
    if (rows < 4 * row_tile) rows = 4 * row_tile;
    if (rows < mc) *bmc = ffn__drv_block_rows(T, rows, row_tile);
}

/* The fp32 and pair schedules' items (ffn__drv_phase_items): gate/up grabs of *grab panels (at
 * most GRAB_PANELS), down groups of *dg panels (at most DG) over row blocks of *down_mc rows,
 * split only where split_rows (the fp32 schedule; the pair schedule's h layout follows its own
 * row panels). There the down row blocks start at most mc_down rows (0: mc; the table's
 * mc_down), in equal blocks. */
static inline void ffn__drv_items(size_t T, size_t mc, size_t mc_down, size_t mr, size_t np1,
                                  size_t pd, int nt, bool split_rows, size_t *grab, size_t *dg,
                                  size_t *down_mc)
{
    size_t up_mc; /* gate/up keeps its row blocks: h is written in them */
    ffn__drv_phase_items(T, mc, mr, np1, 1, GRAB_PANELS, nt, grab, &up_mc);
    const size_t dmc =
        split_rows && mc_down && mc_down < mc ? ffn__drv_block_rows(T, mc_down, mr) : mc;
    ffn__drv_phase_items(T, dmc, mr, pd, 1, DG, nt, dg, down_mc); /* dmc <= mc */
    if (!split_rows) *down_mc = mc;
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
