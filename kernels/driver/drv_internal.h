/* What the fp32 and bf16-tile schedules of the driver (driver.c) and its packing
 * (driver_pack.c) share: the packed layout of a shape and the tables behind a descriptor. */
#ifndef FFNROOF_KERNELS_DRV_INTERNAL_H
#define FFNROOF_KERNELS_DRV_INTERNAL_H

#include "driver.h"

static inline size_t ffn__drv_wsize(int wdt)
{
    return wdt == FFN_UKR_F32 ? 4u : 2u;
}

/* The fp32 schedule's table: the float kernels' own, or the quantized table's GEMM tile. */
static inline const ffn_ukernels *ffn__drv_fu(const ffn__drv *dv)
{
    return dv->q ? dv->q->f32 : dv->u;
}

/* The GEMM tile width of the fp32 schedule (SVE: from the vector length). */
static inline size_t ffn__drv_nr_of(const ffn_ukernels *u)
{
    if (!u->vl_bytes) return u->nr;
    size_t nr = u->vl_bytes() / 4 * u->nr;
    if (nr < 2) nr = 2;
    return nr > FFN_UKR_MAX_NR ? FFN_UKR_MAX_NR : nr;
}

/* The packed weights of one shape: panels of nr columns, the up projection's (gate and up
 * interleaved by halves when gated) then the down projection's, then the biases. */
typedef struct ffn__drv_layout {
    size_t nr, nh;   /* panel width; h columns per up panel (nr/2 gated, nr otherwise) */
    size_t np1, pd;  /* up panels, down panels */
    size_t kp1, kp2; /* K of the up and down panels as stored (bf16 tiles: padded to 32) */
    size_t ldh;      /* h row length (columns np1 * nh; bf16 tiles: padded: driver_pack.c) */
    size_t ldx;      /* bf16 tiles: x row length in the workspace */
    size_t pb1, pb2; /* bytes per up and down panel */
    size_t rowb;     /* bytes per k row of a panel's weights (codes when quantized) */
    size_t off_w1, off_w2, off_b1, off_b2, total;
} ffn__drv_layout;

void ffn__drv_get_layout(const ffn__drv *dv, const ffn_kshape *s, ffn__drv_layout *l);
/* 0 when s suits dv (a quantized kernel also checks the group and zero point). */
int ffn__drv_check_shape(const ffn__drv *dv, const ffn_kshape *s);

#endif
