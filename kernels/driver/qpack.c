/* Quantized panel packing (see qpack.h). */
#include "qpack.h"

#include <float.h>

#include "../quant/quant_internal.h"

size_t ffn__qpanel_bytes(int qf, size_t K, size_t nr, size_t G, bool zp)
{
    if (qf == FFN_UKR_Q8) return ffn__round_up(K * nr, 64) + ffn__round_up(nr * 4, 64);
    const size_t ng = K / G;
    return ffn__round_up(K * nr / 2, 64) + ffn__round_up(ng * nr * 2, 64) +
           (zp ? ffn__round_up(ng * nr / 2, 64) : 0);
}

void ffn__qpanel_view(int qf, const unsigned char *p, size_t K, size_t nr, size_t G, bool zp,
                      ffn_ukr_qpanel *out)
{
    memset(out, 0, sizeof *out);
    out->q = p;
    if (qf == FFN_UKR_Q8) {
        out->scale = (const float *)(const void *)(p + ffn__round_up(K * nr, 64));
        return;
    }
    const size_t off_s = ffn__round_up(K * nr / 2, 64);
    out->gscale = (const uint16_t *)(const void *)(p + off_s);
    out->zero = zp ? p + off_s + ffn__round_up(K / G * nr * 2, 64) : NULL;
    out->group = G;
}

/* The columns of panel j: (source matrix, first column, count) for its two halves (gated) or
 * its whole width. */
typedef struct slice {
    const float *w;
    size_t c0, n, at; /* source column, count, panel column */
} slice;

static size_t slices_of(size_t j, size_t N, const float *w, const float *w2, size_t nr,
                        slice out[2])
{
    const size_t nh = w2 ? nr / 2 : nr, c0 = j * nh;
    const size_t n = N - c0 < nh ? N - c0 : nh;
    out[0] = (slice){.w = w, .c0 = c0, .n = n, .at = 0};
    if (!w2) return 1;
    out[1] = (slice){.w = w2, .c0 = c0, .n = n, .at = nh};
    return 2;
}

/* Nibble u of (k, c) into a zeroed W4 panel of nr columns (ukernel.h's two orders). */
static void put_nibble(unsigned layout, unsigned char *p, size_t nr, size_t k, size_t c, unsigned u)
{
    if (layout == FFN_UKR_Q4_OCT) {
        const size_t bit = ((k / 8) * nr + c) * 32 + (k % 8) * 4; /* little-endian words */
        p[bit / 8] |= (unsigned char)(u << (bit % 8));
    } else {
        const size_t half = nr / 2;
        p[k * half + (c < half ? c : c - half)] |= (unsigned char)(c < half ? u : u << 4);
    }
}

/* Panels are quantized a block at a time, row by row over the block's columns, never one
 * panel's columns down K: that walk strides by the row length, and at the row lengths of real
 * layers (6144 or 8192 floats) the rows fall into a handful of cache sets, so every line came
 * from memory once for each panel that touches it. d = 2048, f = 6144 packed for the portable
 * kernel (8 columns a panel) at 19 ns a weight in int8 and 7.7 in fp32 on an SPR-class VM,
 * most of a quick calibration's kernel preparation. The codes are quant_ref.c's
 * arithmetic (quant_internal.h), so a block gives what ffn_qweight_quantize gives a panel. */
#define BLOCK_COLS 1024u /* panel columns a block holds statistics for (4 KiB each) */

typedef struct qblock {
    size_t j0, nj; /* panels j0 .. j0 + nj - 1 */
    size_t N, nr;
    const float *w, *w2;
} qblock;

static qblock block_of(size_t j0, size_t np, size_t N, const float *w, const float *w2, size_t nr)
{
    const size_t per = BLOCK_COLS / nr;
    return (qblock){
        .j0 = j0, .nj = np - j0 < per ? np - j0 : per, .N = N, .nr = nr, .w = w, .w2 = w2};
}

/* Panel j0 + j's slices of b. */
static size_t block_slices(const qblock *b, size_t j, slice sl[2])
{
    return slices_of(b->j0 + j, b->N, b->w, b->w2, b->nr, sl);
}

/* Statistics of rows k0 .. k1 - 1 over the block's columns: the largest |v| (sym), or the
 * least and the largest v (zp: lo, hi). FFN_EINVAL at a NaN or Inf. A row's finiteness is
 * gathered over the row and tested after it (an early return inside the loop kept the
 * compiler from vectorizing it: a quarter of the int8 packing's time). */
static int block_stats(const qblock *b, size_t k0, size_t k1, bool zp, float *lo, float *hi)
{
    for (size_t k = k0; k < k1; k++)
        for (size_t j = 0; j < b->nj; j++) {
            slice sls[2];
            const size_t ns = block_slices(b, j, sls);
            for (size_t i = 0; i < ns; i++) {
                const slice *sl = &sls[i];
                const float *row = sl->w + k * b->N + sl->c0;
                float *l = lo + j * b->nr + sl->at, *h = hi + j * b->nr + sl->at;
                int finite = 1;
                if (!zp) { /* fmaxf of finite values, without the calls */
                    for (size_t c = 0; c < sl->n; c++) {
                        const float a = fabsf(row[c]);
                        finite &= a <= FLT_MAX; /* false for NaN too */
                        h[c] = a > h[c] ? a : h[c];
                    }
                } else if (k == k0) {
                    for (size_t c = 0; c < sl->n; c++) {
                        finite &= fabsf(row[c]) <= FLT_MAX;
                        l[c] = h[c] = row[c];
                    }
                } else {
                    for (size_t c = 0; c < sl->n; c++) {
                        const float v = row[c];
                        finite &= fabsf(v) <= FLT_MAX;
                        l[c] = v < l[c] ? v : l[c];
                        h[c] = v > h[c] ? v : h[c];
                    }
                }
                if (!finite) return FFN_EINVAL;
            }
        }
    return 0;
}

/* The int8 codes of rows 0 .. K - 1 of b's panels under their column scales sc (panel j's at
 * sc + j * nr), row by row: element (k, c) of panel j at q + j * pstride + k * nr + c. */
static void block_codes8(const qblock *b, size_t K, const float *sc, int8_t *q, size_t pstride)
{
    const size_t N = b->N, nr = b->nr;
    for (size_t k = 0; k < K; k++)
        for (size_t j = 0; j < b->nj; j++) {
            int8_t *qk = q + j * pstride + k * nr;
            slice sls[2];
            const size_t ns = block_slices(b, j, sls);
            for (size_t i = 0; i < ns; i++) {
                const slice *sl = &sls[i];
                const float *row = sl->w + k * N + sl->c0;
                for (size_t c = 0; c < sl->n; c++)
                    qk[sl->at + c] = ffn__qcode_sym(row[c], sc[j * nr + sl->at + c], -127, 127);
            }
        }
}

/* The blocks of a packing are independent (each writes its own panels): they run on an OpenMP
 * team where the library has one. Packing was most of a quick calibration's kernel preparation
 * (d = 2048, f = 6144 in int8 for the portable kernel: 19 ns a weight on one thread). The bytes
 * do not depend on the thread count. Returns 0 or an error one of the blocks gave. */
typedef int (*block_fn)(const qblock *b, const void *ctx);
static int each_block(size_t np, size_t nr, size_t N, const float *w, const float *w2, block_fn fn,
                      const void *ctx)
{
    const size_t per = BLOCK_COLS / nr, nb = (np + per - 1) / per;
    int err = 0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) if (nb > 1)
#endif
    for (size_t i = 0; i < nb; i++) {
        const qblock b = block_of(i * per, np, N, w, w2, nr);
        const int rc = fn(&b, ctx);
        if (rc) {
#if defined(_OPENMP)
#pragma omp atomic write
#endif
            err = rc;
        }
    }
    return err;
}

typedef struct qf_job {
    int qf;
    unsigned q4_layout;
    size_t K, G;
    bool zp;
    unsigned char *dst;
    size_t pb;
} qf_job;

/* One block of panels (j0 .. j0 + b->nj - 1) of ffn__qpack_float. */
static int qpack_block(const qblock *bp, const void *ctx)
{
    const qf_job *jb = ctx;
    const int qf = jb->qf;
    const unsigned q4_layout = jb->q4_layout;
    const size_t K = jb->K, G = jb->G, pb = jb->pb;
    const bool zp = jb->zp;
    unsigned char *dst = jb->dst;
    const qblock b = *bp;
    const size_t j0 = b.j0, nr = b.nr, N = b.N;
    float lo[BLOCK_COLS], hi[BLOCK_COLS], sc[BLOCK_COLS];
    int8_t z[BLOCK_COLS];
    if (qf == FFN_UKR_Q8) {
        memset(hi, 0, sizeof hi);
        const int rc = block_stats(&b, 0, K, false, lo, hi);
        if (rc) return rc;
        for (size_t j = 0; j < b.nj; j++) {
            unsigned char *p = dst + (j0 + j) * pb;
            float *ps = (float *)(void *)(p + ffn__round_up(K * nr, 64));
            for (size_t c = 0; c < nr; c++) /* padding columns: max 0, scale 0 */
                ps[c] = sc[j * nr + c] = hi[j * nr + c] / 127.0f;
        }
        block_codes8(&b, K, sc, (int8_t *)(dst + j0 * pb), pb);
        return 0;
    }
    /* W4: one group of rows at a time; nibble u = q + 8 (symmetric) or q */
    const size_t half = nr / 2;
    const unsigned off = zp ? 0 : 8;
    for (size_t g = 0; g < K / G; g++) {
        memset(lo, 0, sizeof lo);
        memset(hi, 0, sizeof hi);
        memset(z, 0, sizeof z);
        const int rc = block_stats(&b, g * G, (g + 1) * G, zp, lo, hi);
        if (rc) return rc;
        for (size_t j = 0; j < b.nj; j++) {
            unsigned char *p = dst + (j0 + j) * pb;
            ffn_ukr_qpanel v;
            ffn__qpanel_view(FFN_UKR_Q4, p, K, nr, G, zp, &v);
            uint16_t *gs = (uint16_t *)(uintptr_t)v.gscale;
            uint8_t *gz = (uint8_t *)(uintptr_t)v.zero;
            float *s = sc + j * nr;
            int8_t *zj = z + j * nr;
            for (size_t c = 0; c < nr; c++) {
                const size_t at = j * nr + c;
                s[c] = zp ? ffn__qscale_asym(lo[at], hi[at]) : hi[at] / 7.0f;
                if (zp && s[c] > 0.0f) zj[c] = ffn__qzero_asym(lo[at], s[c]);
                gs[g * nr + c] = ffn__f32_to_bf16(s[c]);
            }
            if (gz)
                for (size_t c = 0; c < half; c++)
                    gz[g * half + c] = (uint8_t)(zj[c] | (zj[c + half] << 4));
        }
        for (size_t k = g * G; k < (g + 1) * G; k++)
            for (size_t j = 0; j < b.nj; j++) {
                unsigned char *p = dst + (j0 + j) * pb;
                const float *s = sc + j * nr;
                const int8_t *zj = z + j * nr;
                int8_t codes[FFN_UKR_MAX_NR] = {0}; /* padding columns: q = 0 */
                slice sls[2];
                const size_t ns = block_slices(&b, j, sls);
                for (size_t i = 0; i < ns; i++) {
                    const slice *sl = &sls[i];
                    const float *row = sl->w + k * N + sl->c0;
                    for (size_t c = 0; c < sl->n; c++) {
                        const size_t pc = sl->at + c;
                        codes[pc] = !zp            ? ffn__qcode_sym(row[c], s[pc], -8, 7)
                                    : s[pc] > 0.0f ? ffn__qcode_asym(row[c], s[pc], zj[pc])
                                                   : 0;
                    }
                }
                for (size_t c = 0; c < nr; c++)
                    put_nibble(q4_layout, p, nr, k, c, (unsigned)(codes[c] + (int)off));
            }
    }
    return 0;
}

int ffn__qpack_float(int qf, unsigned q4_layout, size_t K, size_t N, const float *w,
                     const float *w2, size_t G, bool zp, size_t nr, unsigned char *dst, size_t pb,
                     size_t np)
{
    if (nr == 0 || nr > BLOCK_COLS) return FFN_EINVAL;
    memset(dst, 0, pb * np);
    const qf_job jb = {
        .qf = qf, .q4_layout = q4_layout, .K = K, .G = G, .zp = zp, .dst = dst, .pb = pb};
    return each_block(np, nr, N, w, w2, qpack_block, &jb);
}

typedef struct i8_job {
    size_t K, kv, kp;
    int8_t *dst;
    int32_t *bsum;
    float *scale;
} i8_job;

/* One block of ffn__qpack_i8's panels. */
static int qpack_i8_block(const qblock *bp, const void *ctx)
{
    enum { NR = 32 };
    const i8_job *jb = ctx;
    const size_t K = jb->K, kv = jb->kv, kp = jb->kp;
    int8_t *dst = jb->dst;
    int32_t *bsum = jb->bsum;
    float *scale = jb->scale;
    const qblock b = *bp;
    const size_t j0 = b.j0;
    float lo[BLOCK_COLS], hi[BLOCK_COLS];
    memset(hi, 0, sizeof hi);
    const int rc = block_stats(&b, 0, K, false, lo, hi);
    if (rc) return rc;
    float *sc = scale + j0 * NR;
    for (size_t c = 0; c < b.nj * NR; c++)
        sc[c] = hi[c] / 127.0f;
    /* KN first (element (k, c) at k * 32 + c) */
    block_codes8(&b, K, sc, dst + j0 * kp * NR, kp * NR);
    /* then each block of kv rows in place into VNNI order: the kv rows of a block occupy the
     * same kv * 32 bytes in both layouts */
    for (size_t j = j0; j < j0 + b.nj; j++) {
        int8_t *p = dst + j * kp * NR;
        int32_t *bs = bsum + j * NR;
        for (size_t c = 0; c < NR; c++)
            bs[c] = 0;
        for (size_t k = 0; k < K; k++)
            for (size_t c = 0; c < NR; c++)
                bs[c] += p[k * NR + c];
        int8_t blk[8 * NR];
        for (size_t k0 = 0; k0 < kp; k0 += kv) {
            memcpy(blk, p + k0 * NR, kv * NR);
            for (size_t r = 0; r < kv; r++)
                for (size_t c = 0; c < NR; c++)
                    p[k0 * NR + c * kv + r] = blk[r * NR + c];
        }
    }
    return 0;
}

int ffn__qpack_i8(size_t K, size_t N, const float *w, const float *w2, size_t kv, size_t kp,
                  int8_t *dst, size_t np, int32_t *bsum, float *scale)
{
    enum { NR = 32 };
    memset(dst, 0, kp * NR * np);
    memset(scale, 0, np * NR * sizeof *scale);
    const i8_job jb = {.K = K, .kv = kv, .kp = kp, .dst = dst, .bsum = bsum, .scale = scale};
    return each_block(np, NR, N, w, w2, qpack_i8_block, &jb);
}
