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

/* Whether the one-row decode streams read each panel as four concurrent streams (quarters of
 * K) instead of in memory order: the CPU's tuning (ffn_cpu_tuning, kernels/tuning.c). */
bool ffn__decode_split(void);

/* The order of a one-row stream with four accumulators over q steps of four k rows: accumulator
 * i reads row i * lane + p * step at step p - memory order (lane 1, step 4), or four concurrent
 * streams over the quarters of the 4q rows (lane q, step 1) where ffn__decode_split() says. */
typedef struct ffn__row1_order {
    size_t lane, step;
} ffn__row1_order;
static inline ffn__row1_order ffn__row1_order_of(size_t q)
{
    return ffn__decode_split() ? (ffn__row1_order){q, 1} : (ffn__row1_order){1, 4};
}

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
typedef void (*ffn_ukr_act_fn)(ffn_act act, size_t rows, size_t n, const float *g, const float *u,
                               size_t ldc, const float *bg, const float *bu, float *h, size_t ldh);

/* One ISA's fp32-schedule microkernels. NULL entries are absent (the registry then lists no
 * kernel of that dtype for the ISA). */
typedef struct ffn_ukernels {
    const char *isa;       /* "portable", "avx2", "avx512", "neon", "sve" */
    const char *gemm_name; /* e.g. "f32_gemm__avx2_6x16" */
    unsigned mr, nr;       /* GEMM tile: mr rows, nr columns (nr even; nr <= FFN_UKR_MAX_NR) */
    unsigned kc;           /* K chunk of the cache-blocked GEMM (kc x nr of B stays in L1) */
    unsigned mc;           /* row block of the cache-blocked GEMM (a multiple of mr) */
    /* At most this many rows in a row block of the down GEMM (0: mc), whose row block's K chunk
     * (mc_down x kc floats of h) serves a group of panels from L2: where the tile reads A often
     * (AVX2: 6 floats for 12 FMAs) a 516-row chunk, 528 KiB, did not stay in a 1 MiB L2. */
    unsigned mc_down;
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
    /* When set, what this CPU streams instead (measured once, at most stream_rows): where the
     * stream's FMA rate and the gemm's dot-product rate differ by CPU. May be NULL. */
    unsigned (*stream_rows_fn)(void);
    unsigned stream_g; /* rows per gemv call */
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
    void (*narrow)(size_t rows, size_t n, const float *src, size_t lds, uint16_t *dst, size_t ldd);
    ffn_ukr_act_fn act;
} ffn_ukernels_bf16t;

/* ---- quantized weights (include/ffnroof/quant.h gives the formats' semantics) ----------------
 *
 * Two schedules, each with its own table per ISA:
 *  - float activations (W8A16/W4A16 with x and h fp32, or rounded to bf16 by the driver): the
 *    fp32 schedule above with the weights quantized in the panels. Decode (T <= stream_rows)
 *    streams whole panels through the table's q8/q4 gemv, which dequantizes in registers;
 *    prefill dequantizes each kc x nr weight chunk into fp32 scratch (the table's dequant) and
 *    runs the fp32 GEMM tile of the ISA's ffn_ukernels (its nr is the panel width);
 *  - int8 activations (W8A8): x and h quantized per token (dynamic, symmetric, the table's
 *    quant), int8 x int8 dot products accumulated in int32 (ffn_ukernels_i8).
 *
 * Quantized panel layouts (the driver packs them; packed by ffn_qweight_quantize's rules):
 *  - W8 (int8 per output channel), float activations: a KN panel of int8 codes, element
 *    (k, c) at q[k * nr + c], then nr fp32 column scales (w' = q * scale[c]);
 *  - W4 (groups of G along K, G = 32, 64 or 128), float activations, in one of two nibble
 *    orders (the table's q4_layout), each K * nr / 2 bytes:
 *     FFN_UKR_Q4_ROWS: K rows of nr / 2 bytes, byte j of row k holding column j in its low
 *       nibble and column j + nr / 2 in its high nibble;
 *     FFN_UKR_Q4_OCT: K / 8 blocks of nr 32-bit words (little-endian), word c of block b
 *       holding rows 8b .. 8b + 7 of column c, row 8b + i in bits 4i .. 4i + 3 (a vector of
 *       words is a vector of columns: a shift and a mask give any row, no byte shuffle);
 *    a nibble u is the code q + 8 (symmetric, q in -8..7) or the code q itself (with
 *    zero points, q in 0..15); then [K / G][nr] bf16 group scales (the round-to-nearest-even
 *    bf16 of quant.h's fp32 scale: range of fp32, 2^-9 relative, exact products with the
 *    4-bit codes) and, with zero points, [K / G][nr / 2] bytes of 4-bit zero points in the
 *    codes' nibble order (byte j: column j low, column j + nr / 2 high):
 *    w'(k, c) = (u - z) * scale[k / G][c], z = 8 when the panel has no zero points;
 *  - W8A8: panels of 32 columns in VNNI order, element (k, c) at q[(k / kv) * 32 * kv + c * kv
 *    + k % kv] (kv = 4 for VPDPBUSD, AMX and SDOT), K padded with zeros to the table's kpad,
 *    plus per panel the int32 column sums of the codes and the 32 fp32 column scales.
 * Columns past N have zero codes (W4 symmetric: u = 8) and zero scales. */
enum { FFN_UKR_Q8 = 0, FFN_UKR_Q4 = 1, FFN_UKR_NQ = 2 };
enum { FFN_UKR_Q4_ROWS = 0, FFN_UKR_Q4_OCT = 1 };

/* One quantized panel of the float-activation schedule (K rows, the table's nr columns). */
typedef struct ffn_ukr_qpanel {
    const uint8_t *q;       /* codes: W8 int8 [K][nr]; W4 nibble rows [K][nr / 2] */
    const float *scale;     /* W8: [nr] column scales; NULL for W4 */
    const uint16_t *gscale; /* W4: [K / G][nr] bf16 group scales; NULL for W8 */
    const uint8_t *zero;    /* W4 with zero points: [K / G][nr / 2] nibbles; NULL: z = 8 */
    size_t group;           /* W4: G; 0 for W8 */
    const uint8_t *next;    /* decode: the codes of the panel streamed after this one, or NULL
                               (a prefetch hint: a gemv may read ahead into it, never past it) */
} ffn_ukr_qpanel;

/* Quantized decode stream over one whole panel ("q8_gemv__<isa>", "q4_gemv__<isa>"):
 *   C[r][c] = sum_{k < kc} A(r, k) * w'(k, c),  r < m (1..stream_g), c < nr,
 * A in a k-major row panel with stride as (as in ffn_ukr_gemv_fn), kc = K of the panel.
 * asum (W4 with zero points only, else NULL): asum[g * as + r] = sum over group g of A(r, k),
 * which the driver computes once per forward, so that a kernel may compute
 * sum A u - z asum per group instead of dequantizing each weight against its own zero point.
 * ap (tables with a_pairs, W4 symmetric with bf16-rounded activations only, else NULL): A again
 * as bf16 pairs for a two-products-a-lane dot instruction (VDPBF16PS), built once per forward
 * by the driver: ap[((k / 8) * as + r) * 4 + i] = bf16(A(r, 8 (k / 8) + i)) in the low half and
 * bf16(A(r, 8 (k / 8) + 4 + i)) in the high half, i < 4 (the rows of an FFN_UKR_Q4_OCT word's
 * low and high 16 bits). Tables with a_pairs_fp16 get the pairs as fp16 instead, row r scaled
 * by a power of two 2^e_r that puts its largest |A(r, k)| in [128, 256) (2^e_r = 1 when the row
 * is all zeros or has an Inf or NaN), and then asum[r] = 2^-e_r (asum is not otherwise used
 * there: a_pairs tables get pairs only for symmetric panels). */
typedef void (*ffn_ukr_qgemv_fn)(size_t m, size_t kc, const float *a, size_t as, const float *asum,
                                 const uint32_t *ap, const ffn_ukr_qpanel *w, float *c, size_t ldc);

/* Quantized weight dequantization for the prefill GEMM: dst[k * nr + c] = w'(k0 + k, c),
 * k < kc, c < nr (exact: a code times its scale). */
typedef void (*ffn_ukr_qdequant_fn)(size_t k0, size_t kc, const ffn_ukr_qpanel *w, float *dst);

/* W4 prefill on bf16 pairs (tables with a_pairs; W4 symmetric, bf16-rounded activations):
 * pdequant: dst[((k / 8) * 4 + i) * nr + c], k = k0 + 8 b (b < kc / 8), i < 4 = the bf16 codes
 * (u - 8, exact) of rows 8 (k / 8) + i (low half) and 8 (k / 8) + 4 + i (high half) of column c,
 * unscaled; k0 and kc multiples of the group;
 * pgemm: C[r][c] (+= when acc) sum over the kc / G groups g of the chunk of gscale[g][c] x
 * (sum over the group's k of A(r, k) code(k, c)), r < m <= the fp32 table's mr, c < nr: ap in the
 * a_pairs layout of ffn_ukr_qgemv_fn with row stride as (the driver's row panels: as = mr), at
 * the chunk's first block and the tile's first row; bp what pdequant wrote for the chunk; gscale
 * the chunk's first group's
 * scales. Each group's products are summed before its scale multiplies them, as the gemv does:
 * the scaled codes are not bf16 values. */
typedef void (*ffn_ukr_qpdequant_fn)(size_t k0, size_t kc, const ffn_ukr_qpanel *w, uint32_t *dst);
typedef void (*ffn_ukr_qpgemm_fn)(size_t m, size_t kc, const uint32_t *ap, size_t as,
                                  const uint32_t *bp, const uint16_t *gscale, size_t group,
                                  float *c, size_t ldc, bool acc);

/* One ISA's float-activation quantized microkernels. */
typedef struct ffn_ukernels_q {
    const char *isa;
    const char *gemv_name[FFN_UKR_NQ]; /* "q8_gemv__avx512", "q4_gemv__avx512" */
    const ffn_ukernels *f32;           /* the GEMM tile, its nr (the panel width), kc, mc, act */
    ffn_ukr_qgemv_fn gemv[FFN_UKR_NQ];
    ffn_ukr_qdequant_fn dequant[FFN_UKR_NQ];
    /* W4 prefill on bf16 pairs instead of dequant + the fp32 tile, where not NULL (both or
     * neither): what the driver runs for T > stream_rows when it builds ap */
    ffn_ukr_qpdequant_fn pdequant;
    ffn_ukr_qpgemm_fn pgemm;
    unsigned stream_rows; /* T up to which decode streams through gemv */
    unsigned stream_g;    /* rows per gemv call */
    unsigned q4_layout;   /* FFN_UKR_Q4_ROWS or FFN_UKR_Q4_OCT: the W4 nibble order it reads */
    bool a_pairs;         /* W4 gemv wants ap (see ffn_ukr_qgemv_fn) for bf16 activations */
    bool a_pairs_fp16;    /* ... as scaled fp16 pairs (decode only: no pdequant/pgemm) */
} ffn_ukernels_q;

/* W8A8 microkernels ("q8a8_gemm__<isa>_<tile>"). Activations are quantized by the table's
 * quant, so an ISA whose dot product wants an unsigned operand (VPDPBUSD, AMX TDPBUSD) may
 * store them as q + a_offset (unsigned bytes) and correct with the column sums; either way gemm
 * and gemv return the exact int32 sum of (activation code) x (weight code). |codes| <= 127 and
 * K <= 2^17 keep every sum inside int32. */
typedef struct ffn_ukernels_i8 {
    const char *isa;
    const char *gemm_name; /* e.g. "q8a8_gemm__avx512vnni_8x32" */
    unsigned kv;           /* k values per column group in the panels (4) */
    unsigned kpad;         /* K padded to a multiple of this (a multiple of kv) */
    unsigned a_offset;     /* 0: activation codes stored as int8; 128: as q + 128 (uint8) */
    unsigned row_tile;     /* prefill pads T up to a multiple of this (1: no padding) */
    unsigned panels;       /* weight panels per gemm call (they share the A rows) */
    unsigned mc;           /* rows per gemm call (a multiple of row_tile) */
    unsigned stream_rows;  /* T up to which decode runs gemv instead (0: never) */
    unsigned stream_g;     /* rows per gemv call */
    /* Per-thread set-up and release around the gemm calls of a forward (AMX tiles); may be
     * NULL. */
    void (*begin)(void);
    void (*end)(void);
    /* cbuf[g][r][32] (int32; g < np, r < m) = sum_{k < kp} A(r, k) B_g(k, c): A rows of kp
     * codes at a + r * lda, B_g the panel at b + g * kp * 32 with column sums bsum + g * 32. kp
     * is a multiple of kpad; gemm: m a multiple of row_tile, at most mc; gemv: m <= stream_g. */
    void (*gemm)(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b, size_t np,
                 const int32_t *bsum, int32_t *cbuf);
    void (*gemv)(size_t kp, const uint8_t *a, size_t lda, size_t m, const int8_t *b, size_t np,
                 const int32_t *bsum, int32_t *cbuf);
    /* Per-token quantization (include/ffnroof/quant.h, ffn_qact_quantize's exact codes): for
     * r < rows, scale[r] = max_i |src[r * lds + i]| / 127 and q[r * ldq + i] = the code of
     * src[r * lds + i] (+ a_offset), i < n. A row holding a NaN or an Inf has no scale: its
     * scale is NaN (so the row's outputs are NaN, as a float kernel's would be) and its codes
     * are 0 (+ a_offset). */
    void (*quant)(size_t rows, size_t n, const float *src, size_t lds, uint8_t *q, size_t ldq,
                  float *scale);
    ffn_ukr_act_fn act; /* the ISA's activation epilogue (its ffn_ukernels' act) */
    /* One panel's rescale: out[r * 32 + c] = ((float)sum[r * 32 + c] * sa[r]) * sw[c], r <
     * rows, c < 32, fp32 products in that order (the driver's loop, bit for bit). May be NULL:
     * the driver's loop then runs at the baseline ISA. */
    void (*scale)(size_t rows, const int32_t *sum, const float *sa, const float *sw, float *out);
} ffn_ukernels_i8;

#endif
