/* The FFN layer of a safetensors checkpoint (include/ffnroof/safetensors.h): one layer's
 * gate/up/down projections found by their LLaMA/Mistral/Qwen names, checked against each other,
 * read through the reader of safetensors.c and transposed into ffnroof's [K][N] layout, from one
 * file or from the shards a model.safetensors.index.json names. */
#define _FILE_OFFSET_BITS 64
#include "ffnroof/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_internal.h"
#include "ydoc.h"

void ffn_st_ffn_free(ffn_st_ffn *ffn)
{
    if (!ffn) return;
    free(ffn->w_gate);
    free(ffn->w_up);
    free(ffn->w_down);
    ffn->w_gate = ffn->w_up = ffn->w_down = NULL;
}

/* A 2-D [rows][cols] tensor t -> out [cols][rows] (its transpose), read in blocks of rows. */
static int read_transposed(const ffn_st_file *st, const ffn_st_tensor *t, float *out,
                           ffn_diag *diag)
{
    const size_t rows = (size_t)t->shape[0], cols = (size_t)t->shape[1];
    const size_t esize = ffn_st_dtype_bits(t->dtype) / 8;
    size_t block = FFN__ST_CHUNK_BYTES / (cols * esize);
    if (block < 1) block = 1;
    if (block > rows) block = rows;
    unsigned char *raw = malloc(block * cols * esize);
    float *tmp = malloc(block * cols * sizeof *tmp);
    int rc = 0;
    if (!raw || !tmp) rc = ffn_diag_set(diag, FFN_ENOMEM, st->path, 0, 0, "out of memory");
    const uint64_t base = 8 + st->header_bytes + t->begin;
    for (size_t r0 = 0; r0 < rows && !rc; r0 += block) {
        const size_t nr = rows - r0 < block ? rows - r0 : block;
        rc = ffn__st_read_at(st, raw, nr * cols * esize, base + (uint64_t)r0 * cols * esize, diag);
        if (rc) break;
        ffn__st_widen(t->dtype, raw, tmp, nr * cols);
        for (size_t c = 0; c < cols; c++)
            for (size_t r = 0; r < nr; r++)
                out[c * rows + r0 + r] = tmp[r * cols + c];
    }
    free(raw);
    free(tmp);
    return rc;
}

static const char *const prefixes[] = {"model.", "model.language_model.", "language_model.model."};

/* Which layers' gate_proj the file holds, as "layers 0-15" or "no layer" text for a message. */
static void layers_held(const ffn_st_file *st, char *buf, size_t n)
{
    unsigned long lo = ~0ul, hi = 0;
    size_t count = 0;
    for (size_t i = 0; i < st->n_tensors; i++) {
        const char *s = strstr(st->tensors[i].name, "layers.");
        if (!s || !strstr(s, ".mlp.gate_proj.weight")) continue;
        char *end;
        const unsigned long l = strtoul(s + 7, &end, 10);
        if (end == s + 7 || *end != '.') continue;
        if (l < lo) lo = l;
        if (l > hi) hi = l;
        count++;
    }
    if (!count)
        snprintf(buf, n, "the file holds no *.layers.N.mlp.gate_proj.weight tensor");
    else if (lo == hi)
        snprintf(buf, n, "the file holds layer %lu", lo);
    else
        snprintf(buf, n, "the file holds layers %lu-%lu (%zu of them)", lo, hi, count);
}

/* The three weights t[i] of files st[i] (the same file, or the shards of an index): shapes and
 * dtypes checked, then read transposed into out. */
static int read_parts(const ffn_st_file *const st[3], const ffn_st_tensor *const t[3],
                      unsigned layer, ffn_st_ffn *out, ffn_diag *diag)
{
    for (int i = 0; i < 3; i++) {
        char shp[200];
        ffn__st_shape_text(t[i], shp, sizeof shp);
        if (t[i]->ndim != 2 || t[i]->elements == 0)
            return ffn__st_tensor_error(st[i], diag, FFN_ESCHEMA, t[i]->name,
                                        "a weight must be a non-empty matrix, not shape %s", shp);
        if (!ffn__st_readable(t[i]->dtype)) return ffn__st_unsupported(st[i], t[i], diag);
    }
    const uint64_t f = t[0]->shape[0], d = t[0]->shape[1];
    char g[200], s[200];
    ffn__st_shape_text(t[0], g, sizeof g);
    ffn__st_shape_text(t[1], s, sizeof s);
    if (t[1]->shape[0] != f || t[1]->shape[1] != d)
        return ffn__st_tensor_error(
            st[1], diag, FFN_ESCHEMA, t[1]->name,
            "up_proj is %s but gate_proj is %s: both are [intermediate][hidden]", s, g);
    ffn__st_shape_text(t[2], s, sizeof s);
    if (t[2]->shape[0] != d || t[2]->shape[1] != f)
        return ffn__st_tensor_error(
            st[2], diag, FFN_ESCHEMA, t[2]->name,
            "down_proj is %s but gate_proj is %s: down_proj must be [%llu, %llu] "
            "([hidden][intermediate])",
            s, g, (unsigned long long)d, (unsigned long long)f);
    if (d > SIZE_MAX / f / sizeof(float))
        return ffn__st_tensor_error(st[0], diag, FFN_EOVERFLOW, t[0]->name, "shape %s is too large",
                                    g);
    out->d = (size_t)d;
    out->f = (size_t)f;
    out->dtype = t[0]->dtype;
    const size_t n = out->d * out->f;
    out->w_gate = malloc(n * sizeof(float));
    out->w_up = malloc(n * sizeof(float));
    out->w_down = malloc(n * sizeof(float));
    if (!out->w_gate || !out->w_up || !out->w_down)
        return ffn_diag_set(diag, FFN_ENOMEM, st[0]->path, 0, 0,
                            "out of memory for layer %u's weights (%zu MiB)", layer,
                            3 * n * sizeof(float) >> 20);
    int rc;
    if ((rc = read_transposed(st[0], t[0], out->w_gate, diag))) return rc;
    if ((rc = read_transposed(st[1], t[1], out->w_up, diag))) return rc;
    return read_transposed(st[2], t[2], out->w_down, diag);
}

static const char *const parts[3] = {"gate_proj", "up_proj", "down_proj"};

int ffn_st_read_ffn(const ffn_st_file *st, unsigned layer, ffn_st_ffn *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    const ffn_st_tensor *t[3] = {NULL, NULL, NULL};
    char name[3][160];
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0] && !t[0]; p++) {
        snprintf(out->prefix, sizeof out->prefix, "%slayers.%u.mlp.", prefixes[p], layer);
        for (int i = 0; i < 3; i++) {
            snprintf(name[i], sizeof name[i], "%s%s.weight", out->prefix, parts[i]);
            t[i] = ffn_st_find(st, name[i]);
        }
    }
    if (!t[0]) {
        char held[96];
        layers_held(st, held, sizeof held);
        return ffn_diag_set(diag, FFN_ENOTFOUND, st->path, 0, 0,
                            "no tensor 'model.layers.%u.mlp.gate_proj.weight' (nor under "
                            "model.language_model. or language_model.model.); %s",
                            layer, held);
    }
    for (int i = 1; i < 3; i++)
        if (!t[i])
            return ffn_diag_set(diag, FFN_ENOTFOUND, st->path, 0, 0,
                                "no tensor '%s' beside '%s' (a gated MLP has gate_proj, up_proj "
                                "and down_proj)",
                                name[i], name[0]);
    const ffn_st_file *const sts[3] = {st, st, st};
    return read_parts(sts, t, layer, out, diag);
}

int ffn_st_read_ffn_index(const char *index_path, unsigned layer, ffn_st_ffn *out, ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, index_path, diag);
    ffn_st_file st[3];
    int opened = 0;
    if (rc) goto out;
    yaml_node_t *map = ffn_y_get(&y, ffn_ydoc_root(&y), "weight_map", NULL);
    if (!map || map->type != YAML_MAPPING_NODE) {
        rc = ffn_y_error(&y, map ? map : ffn_ydoc_root(&y), FFN_ESCHEMA,
                         "a safetensors index needs 'weight_map', an object of tensor names to "
                         "shard files");
        goto out;
    }
    char name[3][160];
    const char *shard[3] = {NULL, NULL, NULL};
    yaml_node_t *node[3] = {NULL, NULL, NULL};
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0] && !node[0]; p++) {
        snprintf(out->prefix, sizeof out->prefix, "%slayers.%u.mlp.", prefixes[p], layer);
        for (int i = 0; i < 3; i++) {
            snprintf(name[i], sizeof name[i], "%s%s.weight", out->prefix, parts[i]);
            node[i] = ffn_y_get(&y, map, name[i], NULL);
        }
    }
    for (int i = 0; i < 3 && !rc; i++) {
        if (!node[i]) {
            if (i == 0)
                rc = ffn_diag_set(diag, FFN_ENOTFOUND, index_path, 0, 0,
                                  "the weight_map has no 'model.layers.%u.mlp.gate_proj.weight' "
                                  "(nor under model.language_model. or language_model.model.)",
                                  layer);
            else
                rc = ffn_diag_set(diag, FFN_ENOTFOUND, index_path, 0, 0,
                                  "the weight_map has no '%s' beside '%s'", name[i], name[0]);
            break;
        }
        shard[i] = ffn_y_text(node[i]);
        /* a shard is a file beside the index, as the Hugging Face writers name them */
        if (!shard[i] || !*shard[i] || strchr(shard[i], '/') || !strcmp(shard[i], "..") ||
            !strcmp(shard[i], "."))
            rc = ffn_y_error(&y, node[i], FFN_ESCHEMA,
                             "the shard of '%s' must be a file name beside the index", name[i]);
    }
    if (rc) goto out;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", index_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    const ffn_st_file *sts[3];
    const ffn_st_tensor *t[3];
    for (int i = 0; i < 3; i++) {
        int same = -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(shard[j], shard[i])) same = j;
        if (same >= 0) {
            sts[i] = sts[same];
        } else {
            char path[1200];
            snprintf(path, sizeof path, "%s%s", dir, shard[i]);
            if ((rc = ffn_st_open(&st[opened], path, diag))) goto out;
            sts[i] = &st[opened++];
        }
        t[i] = ffn_st_find(sts[i], name[i]);
        if (!t[i]) {
            rc = ffn_diag_set(diag, FFN_ENOTFOUND, sts[i]->path, 0, 0,
                              "no tensor '%s', which %s says is here", name[i], index_path);
            goto out;
        }
    }
    rc = read_parts(sts, t, layer, out, diag);
out:
    for (int i = 0; i < opened; i++)
        ffn_st_close(&st[i]);
    ffn_ydoc_release(&y);
    return rc;
}
