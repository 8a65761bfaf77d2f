/* Row lists for microkernel tiles written with named accumulators: FFN_ROWS<m>(X) expands to
 * X(0) X(1) ... X(m-1). A tile of m rows declares, loads, updates and stores c<r>... through
 * these, so each row count gets straight-line code whose accumulators stay in registers.
 * Arrays of vectors indexed by a loop over rows do not: GCC 12 keeps them in memory as well and
 * stores every accumulator each k step (the AVX2 6x16 tile at 38% of its FMA peak on the
 * SPR-class dev VM; the AVX2 tails at 42-47 against 101 GFLOP/s and the NEON 8x12
 * tile's 24 stores a step, Zen 4 and the aarch64 cross build). */
#ifndef FFNROOF_KERNELS_DRIVER_UKR_ROWS_H
#define FFNROOF_KERNELS_DRIVER_UKR_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "ukernel.h"

#define FFN_ROWS1(X) X(0)
#define FFN_ROWS2(X) FFN_ROWS1(X) X(1)
#define FFN_ROWS3(X) FFN_ROWS2(X) X(2)
#define FFN_ROWS4(X) FFN_ROWS3(X) X(3)
#define FFN_ROWS5(X) FFN_ROWS4(X) X(4)
#define FFN_ROWS6(X) FFN_ROWS5(X) X(5)
#define FFN_ROWS7(X) FFN_ROWS6(X) X(6)
#define FFN_ROWS8(X) FFN_ROWS7(X) X(7)
#define FFN_ROWS9(X) FFN_ROWS8(X) X(8)
#define FFN_ROWS10(X) FFN_ROWS9(X) X(9)
#define FFN_ROWS11(X) FFN_ROWS10(X) X(10)
#define FFN_ROWS12(X) FFN_ROWS11(X) X(11)
#define FFN_ROWS13(X) FFN_ROWS12(X) X(12)
#define FFN_ROWS14(X) FFN_ROWS13(X) X(13)

/* One row count's tile, GEMM and decode stream alike: C (+)= A (kc x m, stride as) times B (kc
 * rows of the table's panel, fp32 for the GEMM, the weight dtype for a stream), acc, pf and
 * pf_bytes as ukernel.h's gemm has them (a stream passes false, NULL, 0). Each ISA file keeps a
 * table of these, indexed by rows - 1. */
typedef void (*ffn_tile_fn)(size_t kc, const float *A, size_t as, const void *B, float *C,
                            size_t ldc, bool acc, const char *pf, size_t pf_bytes);

/* The start of a GEMM tile over the row list ROWS, with the per-row macros the ISA file defines
 * for its vectors (TILE_DECL, TILE_LD, TILE_ZR): its accumulators declared, then loaded from C
 * where acc, else zeroed. */
#define FFN_TILE_ACC(ROWS)                                                                         \
    ROWS(TILE_DECL)                                                                                \
    if (acc) {                                                                                     \
        ROWS(TILE_LD)                                                                              \
    } else {                                                                                       \
        ROWS(TILE_ZR)                                                                              \
    }

/* The slice of the next weight chunk (pf, pf_bytes; ukernel.h) pulled into L2 before the k loop:
 * with the test inside the loop, one line a k step, the AVX2 FFN prefill ran 5-8% slower (Zen 4).
 * Locality 2 is PREFETCHT1 on x86 and PRFM PLDL2KEEP on AArch64. */
#define FFN_TILE_PREFETCH()                                                                        \
    if (pf)                                                                                        \
        for (size_t pfo_ = 0; pfo_ < pf_bytes; pfo_ += 64)                                         \
            __builtin_prefetch(pf + pfo_, 0, 2);

/* One format's decode-stream tiles for 1..4 rows (ffn_ukr_qgemv_fn's m, a table's stream_g of
 * 4): TILE(name, ROWS) defines a static ffn_qtile_fn over the row list ROWS; FFN_QTILES4 makes
 * name##1 .. name##4 and the table name[4]; FFN_QTILES4_ROW1 the same with a one-row stream of
 * its own (row1) for m = 1; FFN_QGEMV4 the table's gemv entry over it. */
typedef void (*ffn_qtile_fn)(size_t kc, const float *a, size_t as, const ffn_ukr_qpanel *w,
                             float *c, size_t ldc);
#define FFN_QTILES4_ROW1(TILE, name, row1)                                                         \
    TILE(name##2, FFN_ROWS2)                                                                       \
    TILE(name##3, FFN_ROWS3)                                                                       \
    TILE(name##4, FFN_ROWS4)                                                                       \
    static const ffn_qtile_fn name[4] = {row1, name##2, name##3, name##4};
#define FFN_QTILES4(TILE, name)                                                                    \
    TILE(name##1, FFN_ROWS1)                                                                       \
    FFN_QTILES4_ROW1(TILE, name, name##1)
#define FFN_QGEMV4(fname, tiles)                                                                   \
    static void fname(size_t m, size_t kc, const float *a, size_t as, const float *asum,           \
                      const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc)           \
    {                                                                                              \
        (void)asum;                                                                                \
        (void)ap;                                                                                  \
        tiles[(m < 4 ? m : 4) - 1](kc, a, as, w, c, ldc);                                          \
    }

#endif
