/* The safetensors reader (include/ffnroof/safetensors.h): the header is read whole and parsed
 * by io/load/ydoc.c, every tensor entry is checked against its dtype, shape and the file's size,
 * the ranges against each other; tensor data is read later with pread() in bounded chunks, so a
 * checkpoint of many GB costs the memory of the tensors asked for and no more. */
#define _FILE_OFFSET_BITS 64
#include "ffnroof/safetensors.h"

#include "ffnroof/limits.h"
#include "safetensors_internal.h"
#include "ydoc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name;
    unsigned bits;
} dtypes[FFN_ST_DTYPE_COUNT] = {
#define FFN_ST_ROW(id, nm, b) [FFN_ST_##id] = {nm, b},
    FFN_ST_DTYPE_MAP(FFN_ST_ROW)
#undef FFN_ST_ROW
};

const char *ffn_st_dtype_name(ffn_st_dtype dt)
{
    return (unsigned)dt < FFN_ST_DTYPE_COUNT ? dtypes[dt].name : NULL;
}

unsigned ffn_st_dtype_bits(ffn_st_dtype dt)
{
    return (unsigned)dt < FFN_ST_DTYPE_COUNT ? dtypes[dt].bits : 0;
}

void ffn_st_close(ffn_st_file *st)
{
    if (!st) return;
    if (st->fd >= 0) close(st->fd);
    for (size_t i = 0; i < st->n_tensors; i++)
        free((char *)(uintptr_t)st->tensors[i].name);
    free(st->tensors);
    st->tensors = NULL;
    st->n_tensors = 0;
    st->fd = -1;
}

/* Read exactly n bytes at off; FFN_EIO with the reason otherwise. */
int ffn__st_read_at(const ffn_st_file *st, void *buf, size_t n, uint64_t off, ffn_diag *diag)
{
    unsigned char *p = buf;
    while (n > 0) {
        const size_t want = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
        const ssize_t got = pread(st->fd, p, want, (off_t)off);
        if (got < 0) {
            if (errno == EINTR) continue;
            return ffn_diag_set(diag, FFN_EIO, st->path, 0, 0, "cannot read: %s",
                                errno == EISDIR ? "is a directory, not a file" : strerror(errno));
        }
        if (got == 0)
            return ffn_diag_set(diag, FFN_EIO, st->path, 0, 0,
                                "cannot read: the file ended early (it changed while read?)");
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

/* A diagnostic of the JSON loader (file:line:col inside the header text) restated at the file
 * level: "file: JSON header, line L, column C: message[ (tensor 'NAME')]". */
static int header_diag(const ffn_st_file *st, int rc, ffn_diag *diag, const char *tensor)
{
    if (!diag) return rc;
    char msg[sizeof diag->msg];
    snprintf(msg, sizeof msg, "%s", diag->msg);
    char where[64] = "";
    if (diag->line > 0 && diag->col > 0)
        snprintf(where, sizeof where, ", line %d, column %d", diag->line, diag->col);
    if (tensor)
        return ffn_diag_set(diag, rc, st->path, 0, 0, "JSON header%s: %s (tensor '%.*s')", where,
                            msg, NAME_IN_MSG, tensor);
    return ffn_diag_set(diag, rc, st->path, 0, 0, "JSON header%s: %s", where, msg);
}

int ffn__st_tensor_error(const ffn_st_file *st, ffn_diag *diag, int rc, const char *tensor,
                         const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ffn_diag_set(diag, rc, st->path, 0, 0, "%s (tensor '%.*s')", msg, NAME_IN_MSG, tensor);
}

void ffn__st_shape_text(const ffn_st_tensor *t, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "[");
    for (unsigned i = 0; i < t->ndim && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%llu", i ? ", " : "",
                                (unsigned long long)t->shape[i]);
    if (len < n) snprintf(buf + len, n - len, "]");
}

/* One "NAME": {"dtype", "shape", "data_offsets"} entry into *t (its name not yet set). */
static int parse_entry(ffn_st_file *st, ffn_ydoc *y, yaml_node_t *v, const char *name,
                       ffn_st_tensor *t, ffn_diag *diag)
{
    int rc;
    if ((rc = ffn_y_expect_map(y, v, "a tensor entry"))) return header_diag(st, rc, diag, name);
    char dt[32];
    if ((rc = ffn_y_str(y, v, "dtype", true, dt, sizeof dt)))
        return header_diag(st, rc, diag, name);
    t->dtype = FFN_ST_DTYPE_COUNT;
    for (int i = 0; i < FFN_ST_DTYPE_COUNT; i++)
        if (!strcmp(dt, dtypes[i].name)) t->dtype = (ffn_st_dtype)i;
    if (t->dtype == FFN_ST_DTYPE_COUNT)
        return ffn__st_tensor_error(
            st, diag, FFN_ESCHEMA, name,
            "unknown dtype '%s' (the format's are BOOL, U8, I8, F8_E5M2, "
            "F8_E4M3, F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, F64, I64, "
            "U64, F4, F6_E2M3, F6_E3M2, C64)",
            dt);
    yaml_node_t *sh = ffn_y_get(y, v, "shape", NULL);
    if (!sh) return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name, "no 'shape'");
    if ((rc = ffn_y_expect_seq(y, sh, "'shape'"))) return header_diag(st, rc, diag, name);
    const size_t ndim = (size_t)(sh->data.sequence.items.top - sh->data.sequence.items.start);
    if (ndim > FFN_ST_MAX_DIMS)
        return ffn__st_tensor_error(st, diag, FFN_ERANGE, name,
                                    "a shape of %zu dimensions (at most %d)", ndim,
                                    FFN_ST_MAX_DIMS);
    t->ndim = (unsigned)ndim;
    uint64_t elements = 1;
    bool overflow = false, zero = false;
    for (size_t i = 0; i < ndim; i++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, sh->data.sequence.items.start[i]);
        if ((rc = ffn_y_node_u64(y, e, "shape", 0, UINT64_MAX, &t->shape[i])))
            return header_diag(st, rc, diag, name);
        if (t->shape[i] == 0)
            zero = true;
        else if (elements > UINT64_MAX / t->shape[i])
            overflow = true;
        elements *= t->shape[i];
    }
    char shp[200];
    ffn__st_shape_text(t, shp, sizeof shp);
    /* a zero dimension makes the tensor empty whatever the others say */
    if (zero)
        elements = 0;
    else if (overflow)
        return ffn__st_tensor_error(st, diag, FFN_EOVERFLOW, name, "shape %s overflows 64 bits",
                                    shp);
    t->elements = elements;
    yaml_node_t *of = ffn_y_get(y, v, "data_offsets", NULL);
    if (!of) return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name, "no 'data_offsets'");
    if ((rc = ffn_y_expect_seq(y, of, "'data_offsets'"))) return header_diag(st, rc, diag, name);
    if (of->data.sequence.items.top - of->data.sequence.items.start != 2)
        return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name,
                                    "'data_offsets' must be two numbers, [begin, end]");
    uint64_t be[2];
    for (int i = 0; i < 2; i++) {
        yaml_node_t *e = yaml_document_get_node(&y->doc, of->data.sequence.items.start[i]);
        if ((rc = ffn_y_node_u64(y, e, "data_offsets", 0, UINT64_MAX, &be[i])))
            return header_diag(st, rc, diag, name);
    }
    t->begin = be[0];
    t->end = be[1];
    if (t->end < t->begin)
        return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name,
                                    "data_offsets [%llu, %llu] end before they begin",
                                    (unsigned long long)t->begin, (unsigned long long)t->end);
    const unsigned bits = dtypes[t->dtype].bits;
    if (elements > UINT64_MAX / bits)
        return ffn__st_tensor_error(st, diag, FFN_EOVERFLOW, name,
                                    "shape %s of %s overflows 64 bits", shp, dt);
    if (elements * bits % 8)
        return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name,
                                    "shape %s of %s (%u bits each) is not a whole number of bytes",
                                    shp, dt, bits);
    const uint64_t bytes = elements * bits / 8;
    if (t->end - t->begin != bytes)
        return ffn__st_tensor_error(st, diag, FFN_ESCHEMA, name,
                                    "shape %s of %s needs %llu bytes but data_offsets [%llu, %llu] "
                                    "hold %llu",
                                    shp, dt, (unsigned long long)bytes,
                                    (unsigned long long)t->begin, (unsigned long long)t->end,
                                    (unsigned long long)(t->end - t->begin));
    if (t->end > st->data_bytes)
        return ffn__st_tensor_error(
            st, diag, FFN_ERANGE, name,
            "data_offsets [%llu, %llu] run past the end of the file (its data "
            "section holds %llu bytes: truncated?)",
            (unsigned long long)t->begin, (unsigned long long)t->end,
            (unsigned long long)st->data_bytes);
    return 0;
}

static int by_range(const void *a, const void *b)
{
    const ffn_st_tensor *x = *(const ffn_st_tensor *const *)a;
    const ffn_st_tensor *y = *(const ffn_st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The ranges, sorted, must tile the data section exactly (the reference reader's rule: no
 * hole, no overlap, nothing after the last tensor). */
static int check_layout(ffn_st_file *st, ffn_diag *diag)
{
    if (st->n_tensors == 0) {
        if (st->data_bytes)
            return ffn_diag_set(diag, FFN_ESCHEMA, st->path, 0, 0,
                                "the header lists no tensor but %llu bytes of data follow it",
                                (unsigned long long)st->data_bytes);
        return 0;
    }
    const ffn_st_tensor **order = malloc(st->n_tensors * sizeof *order);
    if (!order) return ffn_diag_set(diag, FFN_ENOMEM, st->path, 0, 0, "out of memory");
    for (size_t i = 0; i < st->n_tensors; i++)
        order[i] = &st->tensors[i];
    qsort(order, st->n_tensors, sizeof *order, by_range);
    int rc = 0;
    uint64_t at = 0;
    const ffn_st_tensor *prev = NULL;
    for (size_t i = 0; i < st->n_tensors && !rc; i++) {
        const ffn_st_tensor *t = order[i];
        if (t->begin > at)
            rc = ffn__st_tensor_error(
                st, diag, FFN_ESCHEMA, t->name,
                "bytes %llu..%llu of the data belong to no tensor (a hole before "
                "this one)",
                (unsigned long long)at, (unsigned long long)t->begin);
        else if (t->begin < at)
            rc = ffn__st_tensor_error(
                st, diag, FFN_ESCHEMA, t->name,
                "data_offsets [%llu, %llu] overlap those of tensor '%.*s' [%llu, "
                "%llu]",
                (unsigned long long)t->begin, (unsigned long long)t->end, NAME_IN_MSG, prev->name,
                (unsigned long long)prev->begin, (unsigned long long)prev->end);
        at = t->end;
        prev = t;
    }
    if (!rc && at != st->data_bytes)
        rc = ffn_diag_set(diag, FFN_ESCHEMA, st->path, 0, 0,
                          "%llu bytes after the last tensor ('%.*s' ends at byte %llu of %llu "
                          "bytes of data)",
                          (unsigned long long)(st->data_bytes - at), NAME_IN_MSG, prev->name,
                          (unsigned long long)at, (unsigned long long)st->data_bytes);
    free(order);
    return rc;
}

/* libyaml takes a mapping key (JSON's quoted names included) to end within 1024 characters of
 * its start (YAML 1.2's limit on implicit keys) and otherwise reports a syntax error far from
 * the cause. After a syntax error, the first such name, if any, is the better explanation. */
static const char *long_key(const char *text, size_t len, size_t *key_len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '"') continue;
        size_t j = i + 1;
        while (j < len && text[j] != '"')
            j += text[j] == '\\' ? 2 : 1;
        if (j >= len) return NULL;
        size_t k = j + 1;
        while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'))
            k++;
        if (k < len && text[k] == ':' && k - i > 1024) {
            *key_len = j - i - 1;
            return text + i + 1;
        }
        i = j;
    }
    return NULL;
}

static int parse_header(ffn_st_file *st, const char *text, size_t len, ffn_diag *diag)
{
    ffn_ydoc y;
    int rc = ffn_ydoc_load_buffer(&y, st->path, text, len, diag);
    size_t klen;
    const char *key = rc == FFN_EPARSE ? long_key(text, len, &klen) : NULL;
    if (key) {
        rc = ffn_diag_set(diag, FFN_EUNSUPPORTED, st->path, 0, 0,
                          "JSON header: a name of %zu characters; names of up to about 1020 "
                          "characters can be read (tensor '%.*s...')",
                          klen, 60, key);
        goto out;
    }
    if (rc) {
        rc = header_diag(st, rc, diag, NULL);
        goto out;
    }
    yaml_node_t *root = ffn_ydoc_root(&y);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = ffn_diag_set(diag, FFN_ESCHEMA, st->path, 0, 0,
                          "the JSON header must be an object of tensors");
        goto out;
    }
    const size_t pairs = (size_t)(root->data.mapping.pairs.top - root->data.mapping.pairs.start);
    st->tensors = calloc(pairs ? pairs : 1, sizeof *st->tensors);
    if (!st->tensors) {
        rc = ffn_diag_set(diag, FFN_ENOMEM, st->path, 0, 0, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < pairs && !rc; i++) {
        const yaml_node_pair_t *p = &root->data.mapping.pairs.start[i];
        yaml_node_t *k = yaml_document_get_node(&y.doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&y.doc, p->value);
        const char *name = ffn_y_text(k);
        if (!name) {
            rc = ffn_y_error(&y, k, FFN_ESCHEMA, "a tensor name must be text");
            rc = header_diag(st, rc, diag, NULL);
            break;
        }
        if (!strcmp(name, "__metadata__")) {
            /* free-form text to text; nothing here reads it, but it must be an object */
            if (!ffn_y_is_null(v) && v->type != YAML_MAPPING_NODE) {
                rc = ffn_y_error(&y, v, FFN_ESCHEMA,
                                 "'__metadata__' must be an object of text values");
                rc = header_diag(st, rc, diag, NULL);
            }
            continue;
        }
        ffn_st_tensor *t = &st->tensors[st->n_tensors];
        if ((rc = parse_entry(st, &y, v, name, t, diag))) break;
        char *copy = strdup(name);
        if (!copy) {
            rc = ffn_diag_set(diag, FFN_ENOMEM, st->path, 0, 0, "out of memory");
            break;
        }
        t->name = copy;
        st->n_tensors++;
    }
    if (!rc) rc = check_layout(st, diag);
out:
    ffn_ydoc_release(&y);
    return rc;
}

int ffn_st_open(ffn_st_file *st, const char *path, ffn_diag *diag)
{
    memset(st, 0, sizeof *st);
    st->fd = -1;
    if (!path || !*path) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no file given");
    snprintf(st->path, sizeof st->path, "%s", path);
    st->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (st->fd < 0)
        return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    int rc = 0;
    char *text = NULL;
    struct stat sb;
    if (fstat(st->fd, &sb) != 0) {
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
        goto out;
    }
    if (S_ISDIR(sb.st_mode)) {
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0, "is a directory, not a file");
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        rc = ffn_diag_set(diag, FFN_EIO, path, 0, 0,
                          "not a regular file (a safetensors file is read by offsets)");
        goto out;
    }
    st->file_bytes = (uint64_t)sb.st_size;
    if (st->file_bytes < 8) {
        rc = ffn_diag_set(diag, FFN_EPARSE, path, 0, 0,
                          st->file_bytes ? "the file is %llu bytes, shorter than the 8-byte "
                                           "header length that starts a safetensors file"
                                         : "the file is empty (%llu bytes)",
                          (unsigned long long)st->file_bytes);
        goto out;
    }
    unsigned char len8[8];
    if ((rc = ffn__st_read_at(st, len8, 8, 0, diag))) goto out;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | len8[i];
    st->header_bytes = n;
    if (n == 0) {
        rc = ffn_diag_set(diag, FFN_EPARSE, path, 0, 0,
                          "the header length is 0 (a safetensors header is at least '{}')");
        goto out;
    }
    if (n > st->file_bytes - 8) {
        rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0,
                          "the header length, %llu bytes, runs past the end of the file (%llu "
                          "bytes): truncated, or not a safetensors file",
                          (unsigned long long)n, (unsigned long long)st->file_bytes);
        goto out;
    }
    if (n > FFN_MAX_INPUT_BYTES) {
        rc = ffn_diag_set(diag, FFN_ERANGE, path, 0, 0,
                          "the JSON header is %llu bytes, larger than the limit of %u MiB",
                          (unsigned long long)n, FFN_MAX_INPUT_BYTES >> 20);
        goto out;
    }
    st->data_bytes = st->file_bytes - 8 - n;
    text = malloc((size_t)n + 1);
    if (!text) {
        rc = ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory reading the header");
        goto out;
    }
    if ((rc = ffn__st_read_at(st, text, (size_t)n, 8, diag))) goto out;
    text[n] = '\0';
    if (text[0] != '{') {
        rc = ffn_diag_set(diag, FFN_EPARSE, path, 0, 0,
                          "the JSON header does not start with '{' (byte 8 is 0x%02X): not a "
                          "safetensors file",
                          (unsigned)(unsigned char)text[0]);
        goto out;
    }
    rc = parse_header(st, text, (size_t)n, diag);
out:
    free(text);
    if (rc) ffn_st_close(st);
    return rc;
}

const ffn_st_tensor *ffn_st_find(const ffn_st_file *st, const char *name)
{
    if (!st || !name) return NULL;
    for (size_t i = 0; i < st->n_tensors; i++)
        if (!strcmp(st->tensors[i].name, name)) return &st->tensors[i];
    return NULL;
}

/* IEEE binary16 -> binary32, exact. */
static float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24 is exact in binary32 */
        const float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    if (exp == 31)
        bits = sign | 0x7F800000u | man << 13;
    else
        bits = sign | (exp + 112u) << 23 | man << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static float bf16_to_f32(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* n elements of little-endian raw data of dtype dt -> fp32. */
void ffn__st_widen(ffn_st_dtype dt, const unsigned char *raw, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (dt == FFN_ST_F32) {
            const unsigned char *b = raw + 4 * i;
            const uint32_t u =
                (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
            memcpy(&out[i], &u, sizeof u);
        } else {
            const uint16_t h = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
            out[i] = dt == FFN_ST_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
        }
    }
}

bool ffn__st_readable(ffn_st_dtype dt)
{
    return dt == FFN_ST_F32 || dt == FFN_ST_F16 || dt == FFN_ST_BF16;
}

int ffn__st_unsupported(const ffn_st_file *st, const ffn_st_tensor *t, ffn_diag *diag)
{
    return ffn__st_tensor_error(st, diag, FFN_EUNSUPPORTED, t->name,
                                "dtype %s cannot be read as weights (F32, F16 or BF16 can)",
                                dtypes[t->dtype].name);
}

int ffn_st_read_f32(const ffn_st_file *st, const ffn_st_tensor *t, float *out, size_t n,
                    ffn_diag *diag)
{
    if (!st || !t || (!out && t->elements))
        return ffn_diag_set(diag, FFN_EINVAL, st ? st->path : NULL, 0, 0, "no tensor given");
    if (!ffn__st_readable(t->dtype)) return ffn__st_unsupported(st, t, diag);
    if (t->elements > n)
        return ffn__st_tensor_error(st, diag, FFN_ENOSPACE, t->name,
                                    "%llu elements do not fit a buffer of %zu",
                                    (unsigned long long)t->elements, n);
    const size_t esize = dtypes[t->dtype].bits / 8;
    unsigned char *buf = malloc(FFN__ST_CHUNK_BYTES);
    if (!buf) return ffn_diag_set(diag, FFN_ENOMEM, st->path, 0, 0, "out of memory");
    int rc = 0;
    const uint64_t base = 8 + st->header_bytes + t->begin;
    for (uint64_t done = 0; done < t->elements && !rc;) {
        const uint64_t left = t->elements - done;
        const size_t cnt =
            left < FFN__ST_CHUNK_BYTES / esize ? (size_t)left : FFN__ST_CHUNK_BYTES / esize;
        rc = ffn__st_read_at(st, buf, cnt * esize, base + done * esize, diag);
        if (!rc) ffn__st_widen(t->dtype, buf, out + done, cnt);
        done += cnt;
    }
    free(buf);
    return rc;
}
