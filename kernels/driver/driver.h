/* The portable FFN driver (internal to ffn_kernels): packing, cache blocking, threading over a
 * shared work counter, gate/up fusion and the epilogues, for every ISA. A dense kernel built on
 * it is a driver descriptor (which microkernel table, which weight dtype) plus the ffn_kernel
 * face that kernels/registry.c defines with FFN__DRIVER_KERNEL. The driver itself is compiled
 * without ISA flags; it reaches vector code only through the microkernel tables (ukernel.h).
 *
 * Two schedules:
 *  - fp32 register tiles (portable, avx2, avx512, neon, sve): weights in KN panels of the
 *    table's nr columns, stored in the weight dtype; x and h fp32 in k-major row panels of mr
 *    rows; K blocked by kc, rows by mc; bf16/fp16 chunks widened into per-thread scratch before
 *    the GEMM (the widening is shared by every row panel of the block); T <= stream_rows streams
 *    the weights through the table's gemv instead (bandwidth-bound decode);
 *  - bf16 tiles (amx, avx512_bf16): weights in VNNI pair panels of 32 columns, x and h rounded
 *    to bf16, the table's gemm computes row blocks x groups of panels; decode streams as above.
 * Quantized weights with float activations run the fp32 schedule with quantized panels
 * (qpack.h): decode through the ffn_ukernels_q gemv, prefill dequantizing each chunk where the
 * float weights are widened; W8A8 has a third schedule of its own (driver_i8.c). */
#ifndef FFNROOF_KERNELS_DRIVER_H
#define FFNROOF_KERNELS_DRIVER_H

#include "../kern_internal.h"
#include "ukernel.h"

typedef struct ffn__drv {
    const ffn_ukernels *u;       /* the fp32 schedule's microkernels, or NULL */
    const ffn_ukernels_bf16t *t; /* the bf16 tile schedule's, or NULL */
    int wdt;                     /* FFN_UKR_F32, FFN_UKR_BF16 or FFN_UKR_F16 */
    uint32_t id;                 /* packed-header tag: weights packed by one kernel only */
    /* Quantized weights, float activations (the fp32 schedule over q->f32; u is NULL): the
     * format (FFN_UKR_Q8, FFN_UKR_Q4) and whether x and h are rounded to bf16. */
    const ffn_ukernels_q *q;
    int qf;
    bool abf16;
    /* W8A8 (driver_i8.c; u, t and q are NULL). */
    const ffn_ukernels_i8 *i8;
} ffn__drv;

/* The team of a forward: fn(arg, t, nt) on nt threads (an OpenMP team; one thread without
 * OpenMP or for nt <= 1), and the barrier its threads meet at (a no-op with one). Both
 * schedules (driver.c, driver_i8.c) run their threads through these. */
typedef void (*ffn__drv_thread_fn)(const void *arg, int t, int nt);
void ffn__drv_team(int nt, ffn__drv_thread_fn fn, const void *arg);
void ffn__drv_barrier(void);

/* The W8A8 schedule (driver_i8.c), called by the four entry points below when dv->i8 is set. */
size_t ffn__drv_i8_packed_bytes(const ffn__drv *dv, const ffn_kshape *s);
int ffn__drv_i8_pack(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                     const ffn_kweights *w, void *packed, size_t packed_bytes);
size_t ffn__drv_i8_workspace_bytes(const ffn__drv *dv, const ffn_kshape *s, size_t T, int threads);
int ffn__drv_i8_forward(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                        const void *packed, size_t T, const float *x, float *y, void *ws,
                        size_t ws_bytes, int threads);

size_t ffn__drv_packed_bytes(const ffn__drv *dv, const ffn_kshape *s);
/* Tokens up to which forward runs the table's gemv (the switch each schedule makes). */
unsigned ffn__drv_stream_rows(const ffn__drv *dv);
/* Whether forward hands the table x and h as bf16 pairs (ukernel.h's ap) for shape s: W4
 * symmetric with bf16 activations on a table with a_pairs. Its gemv then multiplies code pairs
 * on them, and so does its prefill where the table has pdequant and pgemm. */
bool ffn__drv_wants_pairs(const ffn__drv *dv, const ffn_kshape *s);
/* ... as bf16 pairs on VDPBF16PS (decode and prefill; not the fp16 pairs of a_pairs_fp16
 * tables, whose prefill runs on the fp32 tile). */
bool ffn__drv_bf16_pairs(const ffn__drv *dv, const ffn_kshape *s);
int ffn__drv_pack(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                  const ffn_kweights *w, void *packed, size_t packed_bytes);
size_t ffn__drv_workspace_bytes(const ffn__drv *dv, const ffn_kshape *s, size_t T, int threads);
int ffn__drv_forward(const ffn__drv *dv, const ffn_kernel *k, const ffn_kshape *s,
                     const void *packed, size_t T, const float *x, float *y, void *ws,
                     size_t ws_bytes, int threads);

/* Defines the ffn_kernel `var` on the driver descriptor `drv` (an ffn__drv constant): the
 * four entry points are trampolines into the driver. FFN__DRIVER_KERNEL_A also sets the
 * activation format (the quantized kernels). */
#define FFN__DRIVER_KERNEL(var, kname, level, dtype, drv, rtile, srows)                            \
    FFN__DRIVER_KERNEL_A(var, kname, level, dtype, FFN_DT_FP32, drv, rtile, srows)
#define FFN__DRIVER_KERNEL_A(var, kname, level, dtype, adt, drv, rtile, srows)                     \
    extern const ffn_kernel var;                                                                   \
    static size_t var##_pb(const ffn_kshape *s)                                                    \
    {                                                                                              \
        return ffn__drv_packed_bytes(&(drv), s);                                                   \
    }                                                                                              \
    static int var##_pack(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)           \
    {                                                                                              \
        return ffn__drv_pack(&(drv), &(var), s, w, p, n);                                          \
    }                                                                                              \
    static size_t var##_ws(const ffn_kshape *s, size_t T, int threads)                             \
    {                                                                                              \
        return ffn__drv_workspace_bytes(&(drv), s, T, threads);                                    \
    }                                                                                              \
    static int var##_fwd(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,   \
                         void *ws, size_t n, int threads)                                          \
    {                                                                                              \
        return ffn__drv_forward(&(drv), &(var), s, p, T, x, y, ws, n, threads);                    \
    }                                                                                              \
    const ffn_kernel var = {.name = (kname),                                                       \
                            .isa = (level),                                                        \
                            .wdtype = (dtype),                                                     \
                            .packed_bytes = var##_pb,                                              \
                            .pack = var##_pack,                                                    \
                            .workspace_bytes = var##_ws,                                           \
                            .forward = var##_fwd,                                                  \
                            .row_tile = (rtile),                                                   \
                            .stream_rows = (srows),                                                \
                            .adtype = (adt),                                                       \
                            .impl = &(drv)}

#endif
