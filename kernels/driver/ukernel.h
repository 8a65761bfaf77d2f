/* The microkernel contracts of the kernel wing (BLIS / XNNPACK model): the one portable FFN
 * driver (kernels/driver/driver.c) knows no ISA and calls an ISA's microkernels through these
 * signatures only. An ISA folder (kernels/portable, x86_avx2, x86_avx512, x86_amx, arm_neon,
 * arm_sve) is compiled with its own flags and exports one `ffn_ukernels` table (and, for the bf16
 * tile engines, one `ffn_ukernels_bf16t`); kernels/registry.c turns each table into ffn_kernel
 * rows with a required-feature mask. Adding an ISA = one folder + one table + registry rows.
 *
 * Data layouts the driver hands to microkernels (all row counts are "m <= the tile's mr"):
 *  - Packed weights, "KN panels": the weight matrix [K][N] cut into panels of nr columns, each
 *    panel stored k-major: element (k, c) at panel[k * nr + c], in the weight dtype (fp32, or
 *    bf16/fp16 bits as uint16_t). Columns past N are zero. For gated FFNs the up projection's
 *    panel j holds gate columns j*nr/2 .. j*nr/2 + nr/2 - 1 in its first nr/2 columns and the same
 *    up columns in the second half, so one GEMM computes both and the epilogue combines them.
 *  - Activations A (x or h) in "k-major row panels": element (row r, k) at a[k * as + r], as >= m
 *    (as = mr for a full panel; as = T for a decode stream whose panel is only T rows wide).
 *  - Accumulators C: m rows of nr fp32 at c + r * ldc.
 * Every pointer is at least 4-byte aligned; the driver aligns packed panels and its scratch to
 * 64 bytes, but a microkernel must not rely on more than 4-byte alignment of A and C.
 * Microkernels never allocate, never print, and must give results that do not depend on the
 * thread count (they see no threads: the driver reduces every output element in a fixed order). */
#ifndef FFNROOF_KERNELS_UKERNEL_H
#define FFNROOF_KERNELS_UKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/types.h"

/* Weight dtypes a dense kernel stores, as an index into the per-dtype ops below. */
enum { FFN_UKR_F32 = 0, FFN_UKR_BF16 = 1, FFN_UKR_F16 = 2, FFN_UKR_NWDT = 3 };

/* fp32 GEMM micro-tile ("f32_gemm__<isa>_<mr>x<nr>"):
 *   C[r][c] = (acc ? C[r][c] : 0) + sum_{k < kc} A(r, k) * B[k * nr + c],  r < m, c < nr,
 * A in a k-major row panel with stride as, B kc rows of nr fp32 (a packed fp32 panel chunk, or
 * a bf16/fp16 chunk the driver widened into scratch). m is 1..mr; kc >= 1.
 * pf, when not NULL, is memory the driver reads after this call (the next weight chunk's slice
 * for this row panel): the microkernel may prefetch its pf_bytes into L2 while it computes. */
typedef void (*ffn_ukr_gemm_fn)(size_t m, size_t kc, const float *a, size_t as, const float *b,
                                float *c, size_t ldc, bool acc, const void *pf, size_t pf_bytes);

/* Decode row stream over one whole KN panel ("<wdt>_gemv__<isa>"), weights in the table's
 * dtype (fp32 or uint16_t bits), widened in registers:
 *   C[r][c] = sum_{k < kc} A(r, k) * W[k * nr + c],  r < m (1..stream_g), c < nr.
 * Called for T <= stream_rows: each weight byte is read from memory once per call, so this is
 * the bandwidth-bound path; the microkernel should keep enough loads in flight (software
 * prefetch, several independent streams) to reach the memory system's read bandwidth. */
typedef void (*ffn_ukr_gemv_fn)(size_t m, size_t kc, const float *a, size_t as, const void *w,
                                float *c, size_t ldc);

/* Weight widening: dst[i] = fp32 value of the bf16 or fp16 bits src[i], i < n (exact). */
typedef void (*ffn_ukr_widen_fn)(size_t n, const uint16_t *src, float *dst);

/* Activation epilogue over a block of accumulator rows (one call per row block and panel):
 *   h[r * ldh + i] = act(g[r * ldc + i] + bg[i]) * (u[r * ldc + i] + bu[i])   (u not NULL)
 *   h[r * ldh + i] = act(g[r * ldc + i] + bg[i])                              (u NULL)
 * r < rows, i < n; a NULL bias adds nothing (bu is NULL whenever u is). The gated forms
 * (swiglu, geglu, reglu) apply the base function (silu, gelu, relu) to the gate. Must match
 * kernels/ref's definitions (NaN propagation included) within the bound documented in
 * tests/test_kernels.c. */
typedef void (*ffn_ukr_act_fn)(ffn_act act, size_t rows, size_t n, const float *g,
                               const float *u, size_t ldc, const float *bg, const float *bu,
                               float *h, size_t ldh);

/* One ISA's fp32-schedule microkernels. NULL entries are absent (the registry then lists no
 * kernel of that dtype for the ISA). */
typedef struct ffn_ukernels {
    const char *isa;       /* "portable", "avx2", "avx512", "neon", "sve" */
    const char *gemm_name; /* e.g. "f32_gemm__avx2_6x16" */
    unsigned mr, nr;       /* GEMM tile: mr rows, nr columns (nr even; nr <= FFN_UKR_MAX_NR) */
    unsigned kc;           /* K chunk of the cache-blocked GEMM (kc x nr of B stays in L1) */
    unsigned mc;           /* row block of the cache-blocked GEMM (a multiple of mr) */
    ffn_ukr_gemm_fn gemm;
    /* Per weight dtype (FFN_UKR_F32/BF16/F16): the decode stream, T up to which it runs
     * (0: never), and (bf16, fp16) the widening used before the GEMM. */
    ffn_ukr_gemv_fn gemv[FFN_UKR_NWDT];
    unsigned stream_rows[FFN_UKR_NWDT];
    unsigned stream_g; /* rows per gemv call (1..mr) */
    ffn_ukr_widen_fn widen[FFN_UKR_NWDT];
    ffn_ukr_act_fn act;
    /* Vector length in bytes known only at run time (SVE): when not NULL the driver calls it
     * once and uses nr = vl_bytes / 4 * nr_vectors, where nr_vectors = nr of this table. */
    size_t (*vl_bytes)(void);
} ffn_ukernels;

#define FFN_UKR_MAX_NR 256u /* nr cap (SVE 2048-bit: 64 lanes x 4 vectors) */

/* The bf16 tile engines (AMX TDPBF16PS, AVX512-BF16 VDPBF16PS): x and h are rounded to bf16 and
 * the weights are packed in VNNI pair order, [K/2][nr][2] per panel of nr = 32 columns (the
 * layout both instructions read; K padded to a multiple of 32 with zeros). */
typedef struct ffn_ukernels_bf16t {
    const char *isa;       /* "amx", "avx512_bf16" */
    const char *gemm_name; /* "bf16_gemm__amx_32x32", "bf16_gemm__avx512bf16_14x32" */
    unsigned row_tile;     /* prefill pads T up to a multiple of this (1: no padding) */
    unsigned panels;       /* weight panels per gemm call (they share the A chunk) */
    unsigned mc;           /* rows per gemm call (a multiple of row_tile) */
    unsigned stream_rows;  /* T up to which decode streams with `gemv` instead */
    unsigned stream_g;     /* rows per gemv call */
    /* Per-thread set-up before the first gemm call of a forward, and release after the last
     * (AMX tile configuration); may be NULL. */
    void (*begin)(void);
    void (*end)(void);
    /* cbuf[g][m][32] (fp32, g < np) = A[m][kp] (bf16, row-major with stride lda elements,
     * rows past T zero) * panel g of B (VNNI pairs, panel stride kp * 32 elements); kp is a
     * multiple of 32, m a multiple of row_tile. bnext/nnext: the panels the caller computes next
     * (prefetch hint; may be NULL/0). */
    void (*gemm)(size_t kp, const uint16_t *a, size_t lda, size_t m, const uint16_t *b, size_t np,
                 const uint16_t *bnext, size_t nnext, float *cbuf);
    /* Decode stream over one VNNI panel: as ffn_ukr_gemv_fn with W in pair order
     * (element (k, c) at w[(k / 2) * 64 + c * 2 + k % 2]). */
    ffn_ukr_gemv_fn gemv;
    /* dst[r * ldd + i] = bf16 (round to nearest even, NaN stays a NaN) of src[r * lds + i],
     * r < rows, i < n. */
    void (*narrow)(size_t rows, size_t n, const float *src, size_t lds, uint16_t *dst,
                   size_t ldd);
    ffn_ukr_act_fn act;
} ffn_ukernels_bf16t;

#endif
