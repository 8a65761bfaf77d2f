/* Quantized panel packing (see qpack.h). */
#include "qpack.h"

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
        p[k * half + c % half] |= (unsigned char)(c < half ? u : u << 4);
    }
}

int ffn__qpack_float(int qf, unsigned q4_layout, size_t K, size_t N, const float *w,
                     const float *w2, size_t G, bool zp, size_t nr, unsigned char *dst, size_t pb,
                     size_t np)
{
    memset(dst, 0, pb * np);
    if (qf == FFN_UKR_Q8) {
        const ffn_qweight_fmt fmt = {.gran = FFN_QG_CHANNEL, .bits = 8};
        for (size_t j = 0; j < np; j++) {
            unsigned char *p = dst + j * pb;
            float *sc = (float *)(void *)(p + ffn__round_up(K * nr, 64));
            slice sl[2];
            const size_t ns = slices_of(j, N, w, w2, nr, sl);
            for (size_t i = 0; i < ns; i++) {
                const int rc =
                    ffn__qweight_quantize_ld(&fmt, K, sl[i].n, sl[i].w + sl[i].c0, N,
                                             (int8_t *)p + sl[i].at, nr, sc + sl[i].at, NULL);
                if (rc) return rc;
            }
        }
        return 0;
    }
    /* W4: one group of rows at a time through int8 codes on the stack, then nibbles. */
    const ffn_qweight_fmt fmt = {
        .gran = FFN_QG_GROUP, .bits = 4, .group = (unsigned)G, .zero_point = zp};
    int8_t codes[128 * FFN_UKR_MAX_NR];
    float sc[FFN_UKR_MAX_NR];
    uint8_t z[FFN_UKR_MAX_NR];
    const size_t half = nr / 2;
    for (size_t j = 0; j < np; j++) {
        unsigned char *p = dst + j * pb;
        ffn_ukr_qpanel v;
        ffn__qpanel_view(FFN_UKR_Q4, p, K, nr, G, zp, &v);
        uint16_t *gs = (uint16_t *)(uintptr_t)v.gscale;
        uint8_t *gz = (uint8_t *)(uintptr_t)v.zero;
        slice sl[2];
        const size_t ns = slices_of(j, N, w, w2, nr, sl);
        for (size_t g = 0; g < K / G; g++) {
            memset(codes, 0, G * nr); /* padding columns: q = 0 */
            memset(sc, 0, sizeof sc);
            memset(z, 0, sizeof z);
            for (size_t i = 0; i < ns; i++) {
                const int rc = ffn__qweight_quantize_ld(
                    &fmt, G, sl[i].n, sl[i].w + g * G * N + sl[i].c0, N, codes + sl[i].at, nr,
                    sc + sl[i].at, zp ? z + sl[i].at : NULL);
                if (rc) return rc;
            }
            for (size_t c = 0; c < nr; c++)
                gs[g * nr + c] = ffn__f32_to_bf16(sc[c]);
            if (gz)
                for (size_t c = 0; c < half; c++)
                    gz[g * half + c] = (uint8_t)(z[c] | (z[c + half] << 4));
            const int off = zp ? 0 : 8; /* nibble u = q + 8 (symmetric) or q */
            for (size_t kk = 0; kk < G; kk++)
                for (size_t c = 0; c < nr; c++)
                    put_nibble(q4_layout, p, nr, g * G + kk, c,
                               (unsigned)(codes[kk * nr + c] + off));
        }
    }
    return 0;
}

int ffn__qpack_i8(size_t K, size_t N, const float *w, const float *w2, size_t kv, size_t kp,
                  int8_t *dst, size_t np, int32_t *bsum, float *scale)
{
    enum { NR = 32 };
    const ffn_qweight_fmt fmt = {.gran = FFN_QG_CHANNEL, .bits = 8};
    memset(dst, 0, kp * NR * np);
    memset(scale, 0, np * NR * sizeof *scale);
    for (size_t j = 0; j < np; j++) {
        int8_t *p = dst + j * kp * NR;
        slice sl[2];
        const size_t ns = slices_of(j, N, w, w2, NR, sl);
        /* KN first (element (k, c) at k * 32 + c), then each block of kv rows in place into
         * VNNI order: the kv rows of a block occupy the same kv * 32 bytes in both layouts. */
        for (size_t i = 0; i < ns; i++) {
            const int rc =
                ffn__qweight_quantize_ld(&fmt, K, sl[i].n, sl[i].w + sl[i].c0, N, p + sl[i].at, NR,
                                         scale + j * NR + sl[i].at, NULL);
            if (rc) return rc;
        }
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
