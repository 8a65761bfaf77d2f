/* AVX-512 bf16-weight dense FFN kernels (see ffn_avx512.h): "bf16_ffn__amx_32x32" and
 * "bf16_ffn__avx512bf16_14x32". Both use one packed layout and one forward; they differ in the
 * prefill engine.
 *
 * Packed layout (after the 64-byte header): weights bf16 (round to nearest even) in VNNI pair
 * order, the layout both VDPBF16PS and AMX TDPBF16PS read:
 *   up panels   np1 x [Kp1/2][32 columns][2 consecutive k] (Kp1 = d rounded up to 32), with the
 *               gate/up interleave of the fp32 kernel (gated: 16 gate + 16 up columns);
 *   down panels pd x [Kp2/2][32][2] (Kp2 = f rounded up to 32);
 *   biases      fp32 holding the bf16-rounded biases (the values the bf16 reference uses),
 *               np1 x 32 and pd x 32.
 * Padding (k past d or f, columns past f or d) is zero.
 *
 * Forward paths:
 *  - T <= DECODE_T_AMX / DECODE_T_DP: weight streaming, DECODE_G rows per pass over a panel
 *    (the first pass from memory, the others from L2). The bf16 pairs are widened to fp32 with
 *    a shift (even k) and a mask (odd k) and multiply fp32 x with fp32 accumulation; h stays
 *    fp32. Bandwidth bound: each weight byte is read from memory once.
 *  - otherwise x is rounded to bf16 into the workspace, h is produced in bf16, and the GEMMs run
 *    on AMX tiles (2x2 tiles of 16x16 fp32 = a 32x32 output block; K in chunks shared by up to
 *    AMX_MC rows and AMX_G panels, see amx_panels) or, without AMX, on VDPBF16PS with the 14x32
 *    register tile of the fp32 kernel. */
#include "avx512_common.h"
#include "ffn_avx512.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

enum {
    MR = 14,
    NR = 32,
    KCP = 256,
    MC_MAX = 504,
    DECODE_G = 6, /* rows per pass of the streaming microkernel: 4 accumulators a row, 24 zmm;
                     6 measured 2-14% faster than 4 at T = 8..64 (T/G passes per panel) */
    /* T up to which the weights are streamed, per kernel, from one- and two-thread timings on
     * the SPR-class dev VM (d=2048 f=5632 and d=4096 f=11008 SwiGLU, weights flushed): the AMX
     * GEMM on 32-row tiles matches streaming at T = 2 and beats it at T = 4 (6-17%), while
     * streaming (T/6 passes over each panel, the later ones from L2) beat the VDPBF16PS GEMM
     * at every T measured up to 64 (by 10-31% at T = 8..64). */
    DECODE_T_AMX = 2,
    DECODE_T_DP = 64,
    PF_P = 32,
    AMX_KC = 256, /* k per AMX chunk: 16 KiB of a weight panel */
    AMX_G = 8,    /* weight panels per AMX pass: G chunks (128 KiB) in L2 */
    AMX_ROWS = 32, /* rows of an AMX output block (2 tiles of 16): prefill pads T to a multiple
                      (what ffn_kernel.row_tile tells the efficiency model) */
    AMX_MC = 512, /* rows per AMX pass: the accumulators (G * MC * 128 B = 512 KiB) in L2 */
    KERNEL_ID = 0x41423136u
};

typedef struct layout {
    size_t np1, pd, kp1, kp2, hcols, ldx, ldh;
    size_t off_w1, off_w2, off_b1, off_b2, total;
} layout;

static void get_layout(const ffn_kshape *s, layout *l)
{
    const bool gated = ffn__gated(s->act);
    l->np1 = gated ? (s->f + 15) / 16 : (s->f + 31) / 32;
    l->pd = (s->d + 31) / 32;
    l->kp1 = ffn__round_up(s->d, 32);
    l->kp2 = ffn__round_up(s->f, 32);
    l->hcols = gated ? l->np1 * 16 : l->np1 * 32; /* columns of h the up GEMM writes */
    /* Row strides of x (bf16) and h: an odd number of cache lines, so the 16 rows of an AMX
     * tile load fall into 16 different L1 sets. With a stride of a multiple of 4 KiB (d or f
     * a multiple of 2048, e.g. d = 2048 and 4096 of the LLaMA shapes) all 16 rows hit one
     * 12-way set and every A tile load missed L1: T = 512, d = 2048, f = 5632, one thread,
     * ran at 900-920 GFLOP/s against 1030-1090 at d = 1024 or 2560 before this padding. */
    l->ldx = (l->kp1 / 32) % 2 ? l->kp1 : l->kp1 + 32;
    l->ldh = (l->kp2 / 32) % 2 ? l->kp2 : l->kp2 + 32; /* >= hcols */
    l->off_w1 = FFN__PACK_HDR;
    l->off_w2 = l->off_w1 + l->np1 * l->kp1 * NR * 2;
    l->off_b1 = l->off_w2 + l->pd * l->kp2 * NR * 2;
    l->off_b2 = l->off_b1 + (s->bias ? l->np1 * NR * 4 : 0);
    l->total = l->off_b2 + (s->bias ? l->pd * NR * 4 : 0);
}

static size_t packed_bytes(const ffn_kshape *s)
{
    if (ffn__check_shape(s)) return 0;
    layout l;
    get_layout(s, &l);
    return l.total;
}

static int pack_impl(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w, void *packed,
                     size_t n)
{
    int rc = ffn__check_pack(k, s, w, packed, n);
    if (rc) return rc;
    layout l;
    get_layout(s, &l);
    const size_t d = s->d, f = s->f;
    const bool gated = ffn__gated(s->act);
    unsigned char *base = packed;
    uint16_t *w1 = (uint16_t *)(void *)(base + l.off_w1);
    uint16_t *w2 = (uint16_t *)(void *)(base + l.off_w2);
    for (size_t j = 0; j < l.np1; j++)
        for (size_t kk = 0; kk < l.kp1; kk++)
            for (size_t c = 0; c < NR; c++) {
                size_t col = gated ? j * 16 + (c & 15) : j * NR + c;
                const float *src = gated && c >= 16 ? w->w_up : w->w_gate;
                const float v = col < f && kk < d ? src[kk * f + col] : 0.0f;
                w1[j * l.kp1 * NR + (kk / 2) * 2 * NR + c * 2 + (kk & 1)] = ffn__f32_to_bf16(v);
            }
    for (size_t j = 0; j < l.pd; j++)
        for (size_t kk = 0; kk < l.kp2; kk++)
            for (size_t c = 0; c < NR; c++) {
                const size_t col = j * NR + c;
                const float v = col < d && kk < f ? w->w_down[kk * d + col] : 0.0f;
                w2[j * l.kp2 * NR + (kk / 2) * 2 * NR + c * 2 + (kk & 1)] = ffn__f32_to_bf16(v);
            }
    if (s->bias) {
        float *b1 = (float *)(void *)(base + l.off_b1), *b2 = (float *)(void *)(base + l.off_b2);
        for (size_t j = 0; j < l.np1; j++)
            for (size_t c = 0; c < NR; c++) {
                const size_t col = gated ? j * 16 + (c & 15) : j * NR + c;
                const float *src = gated && c >= 16 ? w->b_up : w->b_gate;
                b1[j * NR + c] = col < f ? ffn__bf16_to_f32(ffn__f32_to_bf16(src[col])) : 0.0f;
            }
        for (size_t j = 0; j < l.pd * NR; j++)
            b2[j] = j < d ? ffn__bf16_to_f32(ffn__f32_to_bf16(w->b_down[j])) : 0.0f;
    }
    ffn__write_hdr(packed, KERNEL_ID, s);
    return 0;
}

static int pack_amx(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)
{
    return pack_impl(&ffn_kernel_bf16_avx512_amx, s, w, p, n);
}
static int pack_dp(const ffn_kshape *s, const ffn_kweights *w, void *p, size_t n)
{
    return pack_impl(&ffn_kernel_bf16_avx512, s, w, p, n);
}

static size_t mc_for(size_t T)
{
    return T < MC_MAX ? (T + MR - 1) / MR * MR : MC_MAX;
}

/* Workspace: x in bf16 [Tpad][ldx], h [Tpad][ldh] (fp32 size: covers both the fp32 h of the
 * decode path and the bf16 h of prefill), and one accumulator buffer per thread. */
static size_t ws_x_bytes(const layout *l, size_t Tpad)
{
    return ffn__round_up(Tpad * l->ldx * 2, 64);
}
static size_t ws_h_bytes(const layout *l, size_t Tpad)
{
    return ffn__round_up(Tpad * l->ldh * 4, 64);
}
static size_t ws_cbuf_bytes(size_t T)
{
    /* VDPBF16PS: one row block; AMX: 32 output columns of AMX_G panels for AMX_MC rows. */
    const size_t Tp = ffn__round_up(T, 32);
    const size_t dp = mc_for(T) * NR * 4, amx = AMX_G * (Tp < AMX_MC ? Tp : AMX_MC) * NR * 4;
    return dp > amx ? dp : amx;
}

static size_t workspace_bytes(const ffn_kshape *s, size_t T, int threads)
{
    if (ffn__check_shape(s) || T == 0) return 0;
    layout l;
    get_layout(s, &l);
    const size_t nt = (size_t)ffn__threads(threads), Tpad = ffn__round_up(T, 32);
    return 64 + ws_x_bytes(&l, Tpad) + ws_h_bytes(&l, Tpad) + nt * ws_cbuf_bytes(T);
}

static __mmask16 mask_n(size_t n)
{
    const unsigned m = n >= 16 ? 0xffffu : (1u << n) - 1u;
    return (__mmask16)m;
}

/* ---- decode: fp32 x times bf16 weights widened in registers ---------------------------- */

/* C[mr][32] = A[mr][kc] (fp32, row stride lda) * B (bf16 pairs, 64 values per pair row). Even
 * and odd k accumulate separately (4 independent chains per row) and are added at the end. */
FFN_AI void ukr_shift_body(const int mr, size_t kc, const float *A, size_t lda, const uint16_t *B,
                           const epi *e)
{
    __m512 e0[DECODE_G], e1[DECODE_G], o0[DECODE_G], o1[DECODE_G];
    for (int r = 0; r < mr; r++)
        e0[r] = e1[r] = o0[r] = o1[r] = _mm512_setzero_ps();
    const __m512i himask = _mm512_set1_epi32((int)0xffff0000u);
    const size_t np = kc / 2;
    for (size_t p = 0; p < np; p++) {
        /* 128 bytes per pair row: prefetch 4 KiB ahead (prefetches past the panel are harmless). */
        _mm_prefetch((const char *)(B + (p + PF_P) * 64), _MM_HINT_T0);
        _mm_prefetch((const char *)(B + (p + PF_P) * 64) + 64, _MM_HINT_T0);
        const __m512i v0 = _mm512_loadu_si512(B + p * 64), v1 = _mm512_loadu_si512(B + p * 64 + 32);
        const __m512 lo0 = _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16));
        const __m512 hi0 = _mm512_castsi512_ps(_mm512_and_si512(v0, himask));
        const __m512 lo1 = _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16));
        const __m512 hi1 = _mm512_castsi512_ps(_mm512_and_si512(v1, himask));
        for (int r = 0; r < mr; r++) {
            const __m512 ae = _mm512_set1_ps(A[(size_t)r * lda + 2 * p]);
            const __m512 ao = _mm512_set1_ps(A[(size_t)r * lda + 2 * p + 1]);
            e0[r] = _mm512_fmadd_ps(ae, lo0, e0[r]);
            e1[r] = _mm512_fmadd_ps(ae, lo1, e1[r]);
            o0[r] = _mm512_fmadd_ps(ao, hi0, o0[r]);
            o1[r] = _mm512_fmadd_ps(ao, hi1, o1[r]);
        }
    }
    if (kc & 1) { /* the last k has no partner in A (its partner weight is zero padding) */
        const __m512i v0 = _mm512_loadu_si512(B + np * 64),
                      v1 = _mm512_loadu_si512(B + np * 64 + 32);
        const __m512 lo0 = _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16));
        const __m512 lo1 = _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16));
        for (int r = 0; r < mr; r++) {
            const __m512 ae = _mm512_set1_ps(A[(size_t)r * lda + 2 * np]);
            e0[r] = _mm512_fmadd_ps(ae, lo0, e0[r]);
            e1[r] = _mm512_fmadd_ps(ae, lo1, e1[r]);
        }
    }
    __m512 c0[DECODE_G], c1[DECODE_G];
    for (int r = 0; r < mr; r++) {
        c0[r] = _mm512_add_ps(e0[r], o0[r]);
        c1[r] = _mm512_add_ps(e1[r], o1[r]);
    }
    epi_apply(mr, c0, c1, e);
}

/* One row: the pair rows are read as four concurrent streams (quarters), as in the fp32
 * kernel's decode, each with its own even/odd accumulators; summed in a fixed order. */
static void ukr_shift_m1(size_t kc, const float *A, const uint16_t *B, const epi *e)
{
    __m512 acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = _mm512_setzero_ps();
    const __m512i himask = _mm512_set1_epi32((int)0xffff0000u);
    const size_t np = kc / 2, q = np / 4;
    for (size_t p = 0; p < q; p++)
        for (int i = 0; i < 4; i++) {
            const size_t pp = (size_t)i * q + p;
            _mm_prefetch((const char *)(B + (pp + PF_P) * 64), _MM_HINT_T0);
            _mm_prefetch((const char *)(B + (pp + PF_P) * 64) + 64, _MM_HINT_T0);
            const __m512i v0 = _mm512_loadu_si512(B + pp * 64),
                          v1 = _mm512_loadu_si512(B + pp * 64 + 32);
            const __m512 ae = _mm512_set1_ps(A[2 * pp]), ao = _mm512_set1_ps(A[2 * pp + 1]);
            acc[i][0] =
                _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[i][0]);
            acc[i][1] =
                _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[i][1]);
            acc[i][2] =
                _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v0, himask)), acc[i][2]);
            acc[i][3] =
                _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v1, himask)), acc[i][3]);
        }
    for (size_t pp = 4 * q; pp < np; pp++) {
        const __m512i v0 = _mm512_loadu_si512(B + pp * 64),
                      v1 = _mm512_loadu_si512(B + pp * 64 + 32);
        const __m512 ae = _mm512_set1_ps(A[2 * pp]), ao = _mm512_set1_ps(A[2 * pp + 1]);
        acc[0][0] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[0][0]);
        acc[0][1] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[0][1]);
        acc[0][2] =
            _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v0, himask)), acc[0][2]);
        acc[0][3] =
            _mm512_fmadd_ps(ao, _mm512_castsi512_ps(_mm512_and_si512(v1, himask)), acc[0][3]);
    }
    if (kc & 1) { /* the last k has no partner in A */
        const __m512i v0 = _mm512_loadu_si512(B + np * 64),
                      v1 = _mm512_loadu_si512(B + np * 64 + 32);
        const __m512 ae = _mm512_set1_ps(A[2 * np]);
        acc[0][0] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v0, 16)), acc[0][0]);
        acc[0][1] = _mm512_fmadd_ps(ae, _mm512_castsi512_ps(_mm512_slli_epi32(v1, 16)), acc[0][1]);
    }
    __m512 c0[1], c1[1];
    c0[0] = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[0][0], acc[0][2]), _mm512_add_ps(acc[1][0], acc[1][2])),
        _mm512_add_ps(_mm512_add_ps(acc[2][0], acc[2][2]), _mm512_add_ps(acc[3][0], acc[3][2])));
    c1[0] = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[0][1], acc[0][3]), _mm512_add_ps(acc[1][1], acc[1][3])),
        _mm512_add_ps(_mm512_add_ps(acc[2][1], acc[2][3]), _mm512_add_ps(acc[3][1], acc[3][3])));
    epi_apply(1, c0, c1, e);
}

static void ukr_shift(int mr, size_t kc, const float *A, size_t lda, const uint16_t *B,
                      const epi *e)
{
    switch (mr) {
    case 1:
        ukr_shift_m1(kc, A, B, e);
        (void)lda;
        break;
    case 2:
        ukr_shift_body(2, kc, A, lda, B, e);
        break;
    case 3:
        ukr_shift_body(3, kc, A, lda, B, e);
        break;
    case 4:
        ukr_shift_body(4, kc, A, lda, B, e);
        break;
    case 5:
        ukr_shift_body(5, kc, A, lda, B, e);
        break;
    case 6:
        ukr_shift_body(6, kc, A, lda, B, e);
        break;
    default:
        break;
    }
}

/* ---- VDPBF16PS prefill ------------------------------------------------------------------ */

/* C[mr][32] (+)= A[mr][2 np] (bf16, row stride lda elements) * B (np pair rows). */
FFN_AI void ukr_dp_body(const int mr, size_t np, const uint16_t *A, size_t lda, const uint16_t *B,
                        float *C, size_t ldc, __mmask16 cm0, __mmask16 cm1, bool load_c,
                        const epi *e)
{
    __m512 c0[MR], c1[MR];
    for (int r = 0; r < mr; r++) {
        if (load_c) {
            c0[r] = _mm512_maskz_loadu_ps(cm0, C + (size_t)r * ldc);
            c1[r] = _mm512_maskz_loadu_ps(cm1, C + (size_t)r * ldc + 16);
        } else {
            c0[r] = c1[r] = _mm512_setzero_ps();
        }
    }
    for (size_t p = 0; p < np; p++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(B + p * 64);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512(B + p * 64 + 32);
        for (int r = 0; r < mr; r++) {
            int32_t pair;
            memcpy(&pair, A + (size_t)r * lda + 2 * p, 4);
            const __m512bh a = (__m512bh)_mm512_set1_epi32(pair);
            c0[r] = _mm512_dpbf16_ps(c0[r], a, b0);
            c1[r] = _mm512_dpbf16_ps(c1[r], a, b1);
        }
    }
    if (e) {
        epi_apply(mr, c0, c1, e);
        return;
    }
    for (int r = 0; r < mr; r++) {
        _mm512_mask_storeu_ps(C + (size_t)r * ldc, cm0, c0[r]);
        _mm512_mask_storeu_ps(C + (size_t)r * ldc + 16, cm1, c1[r]);
    }
}

#define DP_CASE(m)                                                                                 \
    case m:                                                                                        \
        ukr_dp_body(m, np, A, lda, B, C, ldc, cm0, cm1, load_c, e);                                \
        break;
static void ukr_dp(int mr, size_t np, const uint16_t *A, size_t lda, const uint16_t *B, float *C,
                   size_t ldc, __mmask16 cm0, __mmask16 cm1, bool load_c, const epi *e)
{
    switch (mr) {
        DP_CASE(1)
        DP_CASE(2) DP_CASE(3) DP_CASE(4) DP_CASE(5) DP_CASE(6) DP_CASE(7) DP_CASE(8) DP_CASE(9)
            DP_CASE(10) DP_CASE(11) DP_CASE(12) DP_CASE(13) DP_CASE(14) default : break;
    }
}

/* ---- AMX prefill ------------------------------------------------------------------------ */

typedef struct tilecfg {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg;

/* Tiles 0-3: C (2x2 blocks of 16x16 fp32); 4, 5: A (16 rows x 32 bf16); 6, 7: B (16 pair rows
 * x 16 columns x 2). Every tile is 16 rows of 64 bytes. */
static void amx_config(void)
{
    tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 8; i++) {
        cfg.colsb[i] = 64;
        cfg.rows[i] = 16;
    }
    /* GCC 12's ldtilecfg builtin does not tell the optimiser that it reads the 64 bytes, so
     * once this is inlined the rows/colsb stores can be dropped as dead (seen: only the palette
     * byte written, then a #GP on the first tile load). Let cfg escape into memory first. */
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}

/* C for nrt row tiles of 32 rows and np consecutive weight panels: cbuf [np][nrt * 32][32]
 * (fp32) = A [nrt * 32 rows][kp] (bf16, stride lda elements) * B ([kp/2][32][2] bf16 each,
 * panel stride kp * NR). K is split into AMX_KC chunks; for each, every row tile's A chunk
 * (16 KiB) is loaded once into L1 and used by all np panels, whose chunks (np * 16 KiB) stay in
 * L2 for all row tiles: each weight byte comes from memory once per call (for T up to AMX_MC)
 * and only one operand per step is read from L2. The accumulator tiles go to cbuf and back
 * between chunks (fp32 stored and reloaded: the same sums as one pass over K, so y is bit for
 * bit what a single pass gives). Meanwhile the next chunk of the panels (after the last: the
 * first chunk of the nnext panels at Bnext) is prefetched into L2, spread evenly over the
 * steps, so the weight stream overlaps the tiles. With one row tile (T <= 32) there is nothing
 * to share: one pass over K, no software prefetch (the panels then form one sequential stream
 * that the hardware prefetcher follows; chunking and prefetching were 0-20% slower there).
 * The previous schedule (one pass over K per 32x32 block, rows in chunks of 1 MiB of x, so the
 * weights were re-read from memory for every chunk: 16 times for W_down at f = 11008, T = 512)
 * took, one thread, weights flushed, SwiGLU, on the SPR-class dev VM (2026-11-30): d=4096
 * f=11008 T=128 63-67 ms, T=512 239 ms; this one 44 and 155 ms. */
static void amx_panels(size_t kp, const uint16_t *A, size_t lda, size_t nrt, const uint16_t *B,
                       size_t np, const uint16_t *Bnext, size_t nnext, float *cbuf)
{
    const size_t sa = lda * 2, pstride = kp * NR, mrows = nrt * 32;
    const size_t kc = nrt == 1 ? kp : AMX_KC; /* one row tile: nothing to share */
    for (size_t k0 = 0; k0 < kp; k0 += kc) {
        const size_t k1 = kp - k0 < kc ? kp : k0 + kc;
        const uint16_t *pb = k1 < kp ? B + k1 * NR : Bnext;
        const size_t pn = nrt == 1 ? 0 : k1 < kp ? np : (Bnext ? nnext : 0);
        const size_t pk = k1 < kp ? kp - k1 : kp;
        const size_t cb = (pk < AMX_KC ? pk : AMX_KC) * NR * 2; /* bytes per panel chunk */
        const size_t steps = nrt * np * ((k1 - k0) / 32);
        const size_t pf_step = ffn__round_up((pn * cb + steps - 1) / steps, 64);
        size_t pq = 0;
        for (size_t ri = 0; ri < nrt; ri++) {
            const uint16_t *a = A + ri * 32 * lda;
            for (size_t g = 0; g < np; g++) {
                const uint16_t *b = B + g * pstride;
                float *c = cbuf + (g * mrows + ri * 32) * 32;
                if (k0 == 0) {
                    _tile_zero(0);
                    _tile_zero(1);
                    _tile_zero(2);
                    _tile_zero(3);
                } else {
                    _tile_loadd(0, c, 128);
                    _tile_loadd(1, c + 16, 128);
                    _tile_loadd(2, c + 16 * 32, 128);
                    _tile_loadd(3, c + 16 * 32 + 16, 128);
                }
                for (size_t kb = k0; kb < k1; kb += 32) {
                    for (size_t o = 0; o < pf_step && pq < pn * cb; o += 64, pq += 64)
                        _mm_prefetch((const char *)(pb + (pq / cb) * pstride) + pq % cb,
                                     _MM_HINT_T1);
                    _tile_loadd(4, a + kb, sa);
                    _tile_loadd(5, a + 16 * lda + kb, sa);
                    _tile_loadd(6, b + kb * NR, 128);
                    _tile_loadd(7, b + kb * NR + 32, 128);
                    _tile_dpbf16ps(0, 4, 6);
                    _tile_dpbf16ps(1, 4, 7);
                    _tile_dpbf16ps(2, 5, 6);
                    _tile_dpbf16ps(3, 5, 7);
                }
                _tile_stored(0, c, 128);
                _tile_stored(1, c + 16, 128);
                _tile_stored(2, c + 16 * 32, 128);
                _tile_stored(3, c + 16 * 32 + 16, 128);
            }
        }
    }
}

/* ---- forward ---------------------------------------------------------------------------- */

typedef struct job {
    const ffn_kshape *s;
    const layout *l;
    const unsigned char *packed;
    size_t T, Tpad;
    const float *x;
    float *y;
    uint16_t *xb;
    void *h;
    unsigned char *cbufs;
    size_t cbuf_bytes;
    bool amx;
    size_t decode_t; /* T up to which the weights are streamed (per kernel, measured) */
    size_t *next; /* decode: the shared panel counters of the two GEMMs (see ffn__grab), zeroed */
} job;

static void decode_thread(const job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const layout *l = jb->l;
    const size_t d = s->d, f = s->f, T = jb->T;
    const bool gated = ffn__gated(s->act);
    const uint16_t *w1 = (const uint16_t *)(const void *)(jb->packed + l->off_w1);
    const uint16_t *w2 = (const uint16_t *)(const void *)(jb->packed + l->off_w2);
    const float *b1 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b1) : NULL;
    const float *b2 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b2) : NULL;
    float *h = jb->h;
    size_t lo, hi;
    (void)t;
    (void)nt;
    /* Panels come from a shared counter (ffn__grab), each computed whole by one thread. */
    while (ffn__grab(&jb->next[0], l->np1, ffn__grab_chunk(l->kp1 * NR * 2), &lo, &hi)) {
        for (size_t j = lo; j < hi; j++) {
            epi e = {
                EPI_ACT, s->act, gated, false, b1 ? b1 + j * NR : NULL, h + j * (gated ? 16 : 32),
                l->ldh,  0,      0,     1};
            for (size_t r0 = 0; r0 < T; r0 += DECODE_G) {
                e.out = h + r0 * l->ldh + j * (gated ? 16 : 32);
                ukr_shift((int)(T - r0 < DECODE_G ? T - r0 : DECODE_G), d, jb->x + r0 * d, d,
                          w1 + j * l->kp1 * NR, &e);
            }
        }
    }
#if defined(_OPENMP)
#pragma omp barrier
#endif
    while (ffn__grab(&jb->next[1], l->pd, ffn__grab_chunk(l->kp2 * NR * 2), &lo, &hi)) {
        for (size_t j = lo; j < hi; j++) {
            const __mmask16 m0 = mask_n(d - j * NR),
                            m1 = mask_n(d > j * NR + 16 ? d - j * NR - 16 : 0);
            epi e = {EPI_OUT,        s->act, false, false, b2 ? b2 + j * NR : NULL,
                     jb->y + j * NR, d,      m0,    m1,    1};
            for (size_t r0 = 0; r0 < T; r0 += DECODE_G) {
                e.out = jb->y + r0 * d + j * NR;
                ukr_shift((int)(T - r0 < DECODE_G ? T - r0 : DECODE_G), f, h + r0 * l->ldh,
                          l->ldh, w2 + j * l->kp2 * NR, &e);
            }
        }
    }
}

static void prefill_thread(const job *jb, int t, int nt)
{
    const ffn_kshape *s = jb->s;
    const layout *l = jb->l;
    const size_t d = s->d, T = jb->T, Tpad = jb->Tpad;
    const bool gated = ffn__gated(s->act);
    const uint16_t *w1 = (const uint16_t *)(const void *)(jb->packed + l->off_w1);
    const uint16_t *w2 = (const uint16_t *)(const void *)(jb->packed + l->off_w2);
    const float *b1 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b1) : NULL;
    const float *b2 = s->bias ? (const float *)(const void *)(jb->packed + l->off_b2) : NULL;
    uint16_t *h = jb->h, *xb = jb->xb;
    float *cbuf = (float *)(void *)(jb->cbufs + (size_t)t * jb->cbuf_bytes);
    size_t lo, hi;

    /* x -> bf16 (zero padding past d and past T), and the h columns past hcols to zero (the
     * AMX down GEMM reads up to kp2). */
    ffn__split(Tpad, t, nt, &lo, &hi);
    for (size_t r = lo; r < hi; r++) {
        for (size_t c = 0; c < l->kp1; c += 16) {
            const __mmask16 m = r < T ? mask_n(c < d ? d - c : 0) : 0;
            const __m512 v = _mm512_maskz_loadu_ps(m, jb->x + r * d + c);
            _mm256_storeu_si256((__m256i *)(xb + r * l->ldx + c), (__m256i)_mm512_cvtneps_pbh(v));
        }
        for (size_t c = l->hcols; c < l->ldh; c++)
            h[r * l->ldh + c] = 0;
    }
#if defined(_OPENMP)
#pragma omp barrier
#endif
    if (jb->amx) amx_config();

    /* Gate/up GEMM with the activation epilogue: h (bf16). */
    ffn__split(l->np1, t, nt, &lo, &hi);
    if (jb->amx) {
        for (size_t ic = 0; ic < Tpad; ic += AMX_MC) {
            const size_t mc = Tpad - ic < AMX_MC ? Tpad - ic : AMX_MC;
            /* One row tile: panel by panel, so the weights are read as one sequential
             * stream (no A to share across panels). */
            const size_t ge = mc > 32 ? AMX_G : 1;
            for (size_t j = lo; j < hi; j += ge) {
                const size_t np = hi - j < ge ? hi - j : ge, jn = j + np;
                amx_panels(l->kp1, xb + ic * l->ldx, l->ldx, mc / 32, w1 + j * l->kp1 * NR, np,
                           jn < hi ? w1 + jn * l->kp1 * NR : NULL, hi - jn < ge ? hi - jn : ge,
                           cbuf);
                for (size_t g = 0; g < np; g++)
                    for (size_t r = 0; r < mc; r++) {
                        const float *cr = cbuf + (g * mc + r) * 32;
                        __m512 c0 = _mm512_loadu_ps(cr), c1 = _mm512_loadu_ps(cr + 16);
                        epi e = {EPI_ACT,
                                 s->act,
                                 gated,
                                 true,
                                 b1 ? b1 + (j + g) * NR : NULL,
                                 h + (ic + r) * l->ldh + (j + g) * (gated ? 16 : 32),
                                 l->ldh,
                                 0,
                                 0,
                                 1};
                        epi_apply(1, &c0, &c1, &e);
                    }
            }
        }
    } else {
        const size_t mc_max = mc_for(T), np = (d + 1) / 2;
        for (size_t ic = 0; ic < T; ic += mc_max) {
            const size_t mc = T - ic < mc_max ? T - ic : mc_max;
            for (size_t j = lo; j < hi; j++) {
                const uint16_t *bj = w1 + j * l->kp1 * NR;
                for (size_t pc = 0; pc < np; pc += KCP) {
                    const size_t kc = np - pc < KCP ? np - pc : KCP;
                    const bool last = pc + kc == np;
                    for (size_t i = 0; i < mc; i += MR) {
                        const int mr = (int)(mc - i < MR ? mc - i : MR);
                        epi e = {EPI_ACT,
                                 s->act,
                                 gated,
                                 true,
                                 b1 ? b1 + j * NR : NULL,
                                 h + (ic + i) * l->ldh + j * (gated ? 16 : 32),
                                 l->ldh,
                                 0,
                                 0,
                                 1};
                        ukr_dp(mr, kc, xb + (ic + i) * l->ldx + 2 * pc, l->ldx, bj + pc * 64,
                               cbuf + i * NR, NR, 0xffff, 0xffff, pc > 0, last ? &e : NULL);
                    }
                }
            }
        }
    }
#if defined(_OPENMP)
#pragma omp barrier
#endif
    /* Down GEMM: y = h W_down (+ b_down). */
    ffn__split(l->pd, t, nt, &lo, &hi);
    if (jb->amx) {
        for (size_t ic = 0; ic < Tpad; ic += AMX_MC) {
            const size_t mc = Tpad - ic < AMX_MC ? Tpad - ic : AMX_MC;
            /* One row tile: panel by panel, so the weights are read as one sequential
             * stream (no A to share across panels). */
            const size_t ge = mc > 32 ? AMX_G : 1;
            for (size_t j = lo; j < hi; j += ge) {
                const size_t np = hi - j < ge ? hi - j : ge, jn = j + np;
                amx_panels(l->kp2, h + ic * l->ldh, l->ldh, mc / 32, w2 + j * l->kp2 * NR, np,
                           jn < hi ? w2 + jn * l->kp2 * NR : NULL, hi - jn < ge ? hi - jn : ge,
                           cbuf);
                for (size_t g = 0; g < np; g++) {
                    const size_t jg = j + g;
                    const __mmask16 m0 = mask_n(d - jg * NR),
                                    m1 = mask_n(d > jg * NR + 16 ? d - jg * NR - 16 : 0);
                    for (size_t r = 0; r < mc && ic + r < T; r++) {
                        const float *cr = cbuf + (g * mc + r) * 32;
                        __m512 c0 = _mm512_loadu_ps(cr), c1 = _mm512_loadu_ps(cr + 16);
                        epi e = {EPI_OUT,
                                 s->act,
                                 false,
                                 false,
                                 b2 ? b2 + jg * NR : NULL,
                                 jb->y + (ic + r) * d + jg * NR,
                                 d,
                                 m0,
                                 m1,
                                 1};
                        epi_apply(1, &c0, &c1, &e);
                    }
                }
            }
        }
        _tile_release();
    } else {
        const size_t mc_max = mc_for(T), np = (s->f + 1) / 2;
        for (size_t ic = 0; ic < T; ic += mc_max) {
            const size_t mc = T - ic < mc_max ? T - ic : mc_max;
            for (size_t j = lo; j < hi; j++) {
                const uint16_t *bj = w2 + j * l->kp2 * NR;
                const __mmask16 m0 = mask_n(d - j * NR),
                                m1 = mask_n(d > j * NR + 16 ? d - j * NR - 16 : 0);
                for (size_t pc = 0; pc < np; pc += KCP) {
                    const size_t kc = np - pc < KCP ? np - pc : KCP;
                    const bool last = pc + kc == np;
                    for (size_t i = 0; i < mc; i += MR) {
                        const int mr = (int)(mc - i < MR ? mc - i : MR);
                        float *yt = jb->y + (ic + i) * d + j * NR;
                        epi e = {EPI_OUT, s->act, false, false, b2 ? b2 + j * NR : NULL,
                                 yt,      d,      m0,    m1,    1};
                        ukr_dp(mr, kc, h + (ic + i) * l->ldh + 2 * pc, l->ldh, bj + pc * 64, yt, d,
                               m0, m1, pc > 0, last ? &e : NULL);
                    }
                }
            }
        }
    }
}

static void run_thread(const job *jb, int t, int nt)
{
    if (jb->T <= jb->decode_t)
        decode_thread(jb, t, nt);
    else
        prefill_thread(jb, t, nt);
}

static int forward_impl(const ffn_kernel *k, bool amx, const ffn_kshape *s, const void *packed,
                        size_t T, const float *x, float *y, void *ws, size_t ws_bytes, int threads)
{
    int rc = ffn__check_forward(k, KERNEL_ID, s, packed, T, x, y, ws, ws_bytes, threads);
    if (rc || T == 0) return rc;
    layout l;
    get_layout(s, &l);
    const int nt = ffn__threads(threads);
    const size_t Tpad = amx ? ffn__round_up(T, AMX_ROWS) : T;
    unsigned char *w = ffn__align64(ws);
    const size_t Tws = ffn__round_up(T, 32);
    size_t next[2] = {0, 0};
    job jb = {s,
              &l,
              packed,
              T,
              Tpad,
              x,
              y,
              (uint16_t *)(void *)w,
              w + ws_x_bytes(&l, Tws),
              w + ws_x_bytes(&l, Tws) + ws_h_bytes(&l, Tws),
              ws_cbuf_bytes(T),
              amx,
              amx ? DECODE_T_AMX : DECODE_T_DP,
              next};
#if defined(_OPENMP)
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        run_thread(&jb, omp_get_thread_num(), omp_get_num_threads());
        return 0;
    }
#endif
    run_thread(&jb, 0, 1);
    return 0;
}

static int forward_amx(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,
                       void *ws, size_t n, int threads)
{
    return forward_impl(&ffn_kernel_bf16_avx512_amx, true, s, p, T, x, y, ws, n, threads);
}
static int forward_dp(const ffn_kshape *s, const void *p, size_t T, const float *x, float *y,
                      void *ws, size_t n, int threads)
{
    return forward_impl(&ffn_kernel_bf16_avx512, false, s, p, T, x, y, ws, n, threads);
}

const ffn_kernel ffn_kernel_bf16_avx512_amx = {
    "bf16_ffn__amx_32x32", FFN_ISA_AVX512, FFN_DT_BF16, packed_bytes, pack_amx,
    workspace_bytes,       forward_amx,    AMX_ROWS,    DECODE_T_AMX};
const ffn_kernel ffn_kernel_bf16_avx512 = {"bf16_ffn__avx512bf16_14x32",
                                           FFN_ISA_AVX512,
                                           FFN_DT_BF16,
                                           packed_bytes,
                                           pack_dp,
                                           workspace_bytes,
                                           forward_dp,
                                           0,
                                           0};
