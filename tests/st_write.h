/* Test helper: writes small safetensors files (include/ffnroof/safetensors.h describes the
 * format), well-formed ones from tensors and deliberately broken ones from raw header text, so
 * that the suites need no checked-in binary fixtures. Header-only; every function asserts. */
#ifndef FFN_TEST_ST_WRITE_H
#define FFN_TEST_ST_WRITE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_tensor {
    const char *name;
    const char *dtype; /* "F32", "F16", "BF16", or anything else for a broken file */
    unsigned ndim;
    uint64_t shape[4];
    const void *data; /* little-endian raw bytes */
    size_t bytes;
} st_tensor;

/* The 8-byte length, `hlen` (the header's own length when hlen == UINT64_MAX), the header text,
 * then dlen bytes of data. */
static inline void st_write_raw(const char *path, uint64_t hlen, const char *header,
                                const void *data, size_t dlen)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "cannot write %s", path);
    const size_t n = strlen(header);
    if (hlen == UINT64_MAX) hlen = n;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)(hlen >> (8 * i));
    cr_assert_eq(fwrite(len8, 1, 8, fp), 8u);
    cr_assert_eq(fwrite(header, 1, n, fp), n);
    if (dlen) cr_assert_eq(fwrite(data, 1, dlen, fp), dlen);
    cr_assert_eq(fclose(fp), 0);
}

/* A well-formed file: the tensors' data one after another in the given order, the header
 * padded with spaces to a multiple of 8 bytes as the reference writer does. */
static inline void st_write(const char *path, const st_tensor *t, size_t n, bool metadata)
{
    size_t cap = 256 + n * 256, len = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        cap += strlen(t[i].name);
    char *h = malloc(cap);
    cr_assert_not_null(h);
    len += (size_t)snprintf(h + len, cap - len, "{");
    if (metadata)
        len += (size_t)snprintf(h + len, cap - len, "\"__metadata__\":{\"format\":\"pt\"}%s",
                                n ? "," : "");
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(h + len, cap - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                                i ? "," : "", t[i].name, t[i].dtype);
        for (unsigned k = 0; k < t[i].ndim; k++)
            len += (size_t)snprintf(h + len, cap - len, "%s%llu", k ? "," : "",
                                    (unsigned long long)t[i].shape[k]);
        len += (size_t)snprintf(h + len, cap - len, "],\"data_offsets\":[%zu,%zu]}", total,
                                total + t[i].bytes);
        total += t[i].bytes;
    }
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8)
        h[len++] = ' ';
    h[len] = '\0';
    cr_assert_lt(len, cap);
    unsigned char *data = malloc(total ? total : 1);
    cr_assert_not_null(data);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].bytes) memcpy(data + at, t[i].data, t[i].bytes);
        at += t[i].bytes;
    }
    st_write_raw(path, UINT64_MAX, h, data, total);
    free(data);
    free(h);
}

static inline uint16_t st_f32_to_bf16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even (finite inputs) */
    return (uint16_t)(u >> 16);
}

/* binary32 -> binary16 for values that binary16 holds exactly (asserted): normals only. */
static inline uint16_t st_f32_to_f16_exact(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    if ((u & 0x7FFFFFFFu) == 0) return (uint16_t)sign;
    const int exp = (int)((u >> 23) & 0xFFu) - 127 + 15;
    cr_assert(exp > 0 && exp < 31 && (u & 0x1FFFu) == 0, "%g is not an exact fp16 normal", v);
    return (uint16_t)(sign | (uint32_t)exp << 10 | ((u >> 13) & 0x3FFu));
}

/* w [K][N] (x W layout) as the raw bytes of Hugging Face's [N][K] weight in dtype dt (F32, F16
 * or BF16); *bytes gets the size. Free the result. */
static inline void *st_hf_weight(const float *w, size_t K, size_t N, const char *dt, size_t *bytes)
{
    const size_t es = !strcmp(dt, "F32") ? 4 : 2;
    unsigned char *out = malloc(K * N * es);
    cr_assert_not_null(out);
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < K; k++) {
            const float v = w[k * N + n];
            unsigned char *p = out + (n * K + k) * es;
            if (es == 4) {
                uint32_t u;
                memcpy(&u, &v, 4);
                for (int b = 0; b < 4; b++)
                    p[b] = (unsigned char)(u >> (8 * b));
            } else {
                const uint16_t h = !strcmp(dt, "BF16") ? st_f32_to_bf16(v) : st_f32_to_f16_exact(v);
                p[0] = (unsigned char)h;
                p[1] = (unsigned char)(h >> 8);
            }
        }
    *bytes = K * N * es;
    return out;
}

/* One LLaMA-style layer `layer` (model.layers.L.mlp.{gate,up,down}_proj.weight) from our
 * layout: wg, wu [d][f], wd [f][d], stored in dtype dt. */
static inline void st_write_layer(const char *path, unsigned layer, const float *wg,
                                  const float *wu, const float *wd, size_t d, size_t f,
                                  const char *dt)
{
    char names[3][96];
    static const char *const parts[3] = {"gate_proj", "up_proj", "down_proj"};
    st_tensor t[3];
    void *raw[3];
    for (int i = 0; i < 3; i++) {
        snprintf(names[i], sizeof names[i], "model.layers.%u.mlp.%s.weight", layer, parts[i]);
        size_t b;
        raw[i] = i < 2 ? st_hf_weight(i ? wu : wg, d, f, dt, &b) : st_hf_weight(wd, f, d, dt, &b);
        t[i] = (st_tensor){.name = names[i],
                           .dtype = dt,
                           .ndim = 2,
                           .shape = {i < 2 ? f : d, i < 2 ? d : f},
                           .data = raw[i],
                           .bytes = b};
    }
    st_write(path, t, 3, true);
    for (int i = 0; i < 3; i++)
        free(raw[i]);
}

#endif
