/* Op tables in the layout of NVIDIA's aiconfigurator collector (include/ffnroof/aic.h,
 * docs/formats.md "Op tables"): tab-separated text, plain or gzip (zlib reads both), one kernel
 * call and shape a row. A column that holds one value in every row may instead be a
 * `# name: value` line above the header; every field a row needs is looked up in the header
 * first, then in those lines. GEMM rows become fit points, MoE rows ffn_aic_moe rows, attention
 * rows ffn_aic_attn rows, communication rows ffn_aic_comm rows. The file
 * is streamed through one fixed buffer: rows are parsed in place with strtoull/strtod into
 * arrays that grow by doubling, so 100k-row tables load in a fraction of a second. */
#include "ffnroof/aic.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK (1u << 20)
#define MAX_CONSTS 64
#define MAX_DIM (1ull << 40)
#define MAX_COUNT (1ull << 20) /* topk, experts, TP and EP sizes */

/* ---- reading lines through zlib ----------------------------------------------------------- */

typedef struct reader {
    gzFile gz;
    const char *path;
    ffn_diag *diag;
    char *buf; /* CHUNK + FFN_AIC_MAX_LINE + 1 bytes */
    size_t len, pos;
    size_t total; /* text bytes read so far */
    bool eof;
    int lineno;
} reader;

static int open_reader(reader *r, const char *path, ffn_diag *diag)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->diag = diag;
    if (!path || !*path) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no file given");
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        const int e = errno;
        close(fd);
        return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "%s",
                            S_ISDIR(st.st_mode) ? "is a directory, not a file" : strerror(e));
    }
    r->buf = malloc(CHUNK + FFN_AIC_MAX_LINE + 1);
    r->gz = r->buf ? gzdopen(fd, "rb") : NULL;
    if (!r->gz) {
        close(fd);
        free(r->buf);
        r->buf = NULL;
        return ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory opening the file");
    }
    gzbuffer(r->gz, 256u << 10);
    return 0;
}

static void close_reader(reader *r)
{
    if (r->gz) gzclose(r->gz);
    free(r->buf);
    r->gz = NULL;
    r->buf = NULL;
}

/* Read more text behind what is left in the buffer. 0, or a negative code with diag. */
static int refill(reader *r)
{
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
    const int got = gzread(r->gz, r->buf + r->len, CHUNK);
    if (got < 0) {
        int zerr;
        const char *msg = gzerror(r->gz, &zerr);
        return ffn_diag_set(r->diag, FFN_EIO, r->path, r->lineno + 1, 0, "cannot read (gzip: %s)",
                            msg && *msg ? msg : "read error");
    }
    if (got == 0) {
        int zerr;
        const char *msg = gzerror(r->gz, &zerr);
        if (zerr == Z_BUF_ERROR)
            return ffn_diag_set(r->diag, FFN_EPARSE, r->path, r->lineno + 1, 0,
                                "the gzip stream is truncated (%s)", msg);
        r->eof = true;
    }
    r->len += (size_t)got;
    r->total += (size_t)got;
    if (r->total > FFN_AIC_MAX_TEXT_BYTES)
        return ffn_diag_set(r->diag, FFN_ERANGE, r->path, r->lineno + 1, 0,
                            "more than the limit of %u MiB of text", FFN_AIC_MAX_TEXT_BYTES >> 20);
    return 0;
}

/* The next line, NUL-terminated in place, without its "\n" or "\r\n" and trailing blanks, in
 * *line. 1 with a line, 0 at the end, or a negative code with diag (a NUL byte, a line over
 * FFN_AIC_MAX_LINE bytes, a read error). */
static int next_line(reader *r, char **line)
{
    char *nl;
    for (;;) {
        nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (nl || r->eof) break;
        if (r->len - r->pos > FFN_AIC_MAX_LINE)
            return ffn_diag_set(r->diag, FFN_ERANGE, r->path, r->lineno + 1, 1,
                                "a line longer than %d bytes", FFN_AIC_MAX_LINE);
        const int rc = refill(r);
        if (rc) return rc;
    }
    if (!nl && r->pos == r->len) return 0;
    char *s = r->buf + r->pos, *end = nl ? nl : r->buf + r->len;
    if ((size_t)(end - s) > FFN_AIC_MAX_LINE)
        return ffn_diag_set(r->diag, FFN_ERANGE, r->path, r->lineno + 1, 1,
                            "a line longer than %d bytes", FFN_AIC_MAX_LINE);
    r->pos = (size_t)(end - r->buf) + (nl ? 1 : 0);
    r->lineno++;
    const char *z = memchr(s, '\0', (size_t)(end - s));
    if (z)
        return ffn_diag_set(r->diag, FFN_EPARSE, r->path, r->lineno, (int)(z - s) + 1,
                            "a NUL byte: not a text table");
    while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    *line = s;
    return 1;
}

/* ---- the header: `# name: value` lines and the column names ------------------------------ */

typedef struct constant {
    char name[48];
    char value[512];
    int line, col; /* of the value */
} constant;

/* The fields of a row and where each comes from. */
enum {
    F_LATENCY = 0,
    F_KERNEL,
    F_DTYPE, /* gemm_dtype or moe_dtype */
    F_M,     /* GEMM: m n k; MoE: num_tokens hidden_size inter_size */
    F_N,
    F_K,
    F_TOPK, /* MoE only from here */
    F_EXPERTS,
    F_TP,
    F_EP,
    F_DIST,
    F_BATCH, /* attention from here */
    F_LEN,   /* isl (prefill) or step (decode) */
    F_HEADS,
    F_KV_HEADS,
    F_HEAD_DIM,
    F_KV_DTYPE,
    F_WINDOW,
    F_COLL, /* communication from here: op_name as a column */
    F_GPUS,
    F_MSG,
    F_ELEM,    /* nccl_dtype or allreduce_dtype */
    F_BACKEND, /* the custom all-reduce: *_graph or *_eager */
    F_COUNT
};

/* The fields each op reads (NULL: not read); OPTIONAL ones may be absent. */
static const char *const gemm_fields[F_COUNT] = {[F_LATENCY] = "latency",
                                                 [F_KERNEL] = "kernel_source",
                                                 [F_DTYPE] = "gemm_dtype",
                                                 [F_M] = "m",
                                                 [F_N] = "n",
                                                 [F_K] = "k"};
static const char *const moe_fields[F_COUNT] = {
    [F_LATENCY] = "latency", [F_KERNEL] = "kernel_source", [F_DTYPE] = "moe_dtype",
    [F_M] = "num_tokens",    [F_N] = "hidden_size",        [F_K] = "inter_size",
    [F_TOPK] = "topk",       [F_EXPERTS] = "num_experts",  [F_TP] = "moe_tp_size",
    [F_EP] = "moe_ep_size",  [F_DIST] = "distribution"};
static const char *const prefill_fields[F_COUNT] = {
    [F_LATENCY] = "latency",   [F_KERNEL] = "kernel_source",
    [F_BATCH] = "batch_size",  [F_LEN] = "isl",
    [F_HEADS] = "num_heads",   [F_KV_HEADS] = "num_key_value_heads",
    [F_HEAD_DIM] = "head_dim", [F_KV_DTYPE] = "kv_cache_dtype",
    [F_WINDOW] = "window_size"};
static const char *const decode_fields[F_COUNT] = {
    [F_LATENCY] = "latency",   [F_KERNEL] = "kernel_source",
    [F_BATCH] = "batch_size",  [F_LEN] = "step",
    [F_HEADS] = "num_heads",   [F_KV_HEADS] = "num_key_value_heads",
    [F_HEAD_DIM] = "head_dim", [F_KV_DTYPE] = "kv_cache_dtype",
    [F_WINDOW] = "window_size"};
static const char *const nccl_fields[F_COUNT] = {
    [F_LATENCY] = "latency", [F_KERNEL] = "kernel_source", [F_COLL] = "op_name",
    [F_GPUS] = "num_gpus",   [F_MSG] = "message_size",     [F_ELEM] = "nccl_dtype"};
static const char *const custom_fields[F_COUNT] = {
    [F_LATENCY] = "latency",  [F_KERNEL] = "kernel_source", [F_GPUS] = "num_gpus",
    [F_MSG] = "message_size", [F_ELEM] = "allreduce_dtype", [F_BACKEND] = "backend"};
#define OPTIONAL(f) ((f) == F_KERNEL || (f) == F_WINDOW || (f) == F_BACKEND)

/* What one row becomes, whatever the op. */
typedef struct row {
    ffn_fit_point pt;
    ffn_aic_moe mo;
    ffn_aic_attn at;
    ffn_aic_comm cm;
    uint64_t msg_elems; /* message_size, until the element's bytes are known */
} row;

typedef struct table_reader {
    reader r;
    ffn_aic_table *t;
    constant consts[MAX_CONSTS];
    int n_consts;
    char header[FFN_AIC_MAX_LINE + 1];
    int n_cols;
    /* per field: its column, or -1 and its constant (const_ix), or both -1 (optional and
     * absent: kernel_source) */
    int col[F_COUNT];
    int const_ix[F_COUNT];
    const char *const *fields;
    /* row arrays' capacity */
    size_t cap;
    /* the values of the fields that are constants, parsed once */
    row konst;
    uint16_t kernel_const;
} table_reader;

/* src into dst[n], cut to fit (the descriptive lines: version, device, source). */
static void copy_cut(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static const constant *find_const(const table_reader *tr, const char *name)
{
    for (int i = 0; i < tr->n_consts; i++)
        if (!strcmp(tr->consts[i].name, name)) return &tr->consts[i];
    return NULL;
}

/* A `# name: value` line: name is letters, digits and '_'; false for any other comment. */
static bool parse_const(const char *line, char *name, size_t nn, const char **value)
{
    const char *p = line + 1;
    while (*p == ' ')
        p++;
    const char *n0 = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    if (p == n0 || *p != ':' || (size_t)(p - n0) >= nn) return false;
    memcpy(name, n0, (size_t)(p - n0));
    name[p - n0] = '\0';
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    *value = p;
    return true;
}

static int add_const(table_reader *tr, const char *line)
{
    char name[48];
    const char *value;
    if (!parse_const(line, name, sizeof name, &value)) return 0;
    if (find_const(tr, name))
        return ffn_diag_set(tr->r.diag, FFN_ESCHEMA, tr->r.path, tr->r.lineno, 1,
                            "'# %s:' given twice", name);
    if (tr->n_consts >= MAX_CONSTS)
        return ffn_diag_set(tr->r.diag, FFN_ERANGE, tr->r.path, tr->r.lineno, 1,
                            "more than %d '# name: value' lines", MAX_CONSTS);
    constant *c = &tr->consts[tr->n_consts++];
    copy_cut(c->name, sizeof c->name, name);
    copy_cut(c->value, sizeof c->value, value);
    c->line = tr->r.lineno;
    c->col = (int)(value - line) + 1;
    return 0;
}

/* Split line in place at every tab into f[] (at most FFN_AIC_MAX_COLUMNS; trailing empty
 * fields dropped); the count, or -1 when there are more. */
static int split_tabs(char *line, char **f)
{
    int n = 0;
    for (char *p = line;;) {
        if (n >= FFN_AIC_MAX_COLUMNS) return -1;
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    while (n > 0 && f[n - 1][0] == '\0')
        n--;
    return n;
}

static const struct {
    const char *name;
    ffn_dtype w, a;
    unsigned group;
} dtype_map[] = {
    {"bfloat16", FFN_DT_BF16, FFN_DT_BF16, 0},
    {"float16", FFN_DT_FP16, FFN_DT_FP16, 0},
    {"fp8", FFN_DT_FP8, FFN_DT_FP8, 0},
    {"fp8_block", FFN_DT_FP8_BLOCK, FFN_DT_FP8_BLOCK, 0},
    {"nvfp4", FFN_DT_NVFP4, FFN_DT_NVFP4, 0},
    {"mxfp4", FFN_DT_MXFP4, FFN_DT_MXFP4, 0},
    {"int4_wo", FFN_DT_INT4, FFN_DT_BF16, 128},
    {"w4a16_mxfp4", FFN_DT_MXFP4, FFN_DT_BF16, 0},
    /* the collector's other quantisation modes (aiconfigurator sdk/common.py): per-tensor fp8
     * with static or "out of the box" scales, int8 weight-only, SmoothQuant's int8 x int8,
     * int4 weights (AWQ groups of 128) with fp8 activations, and mxfp4 weights with mxfp8
     * activations (read as fp8: their e8m0 scale, a byte per 32, is left out) */
    {"fp8_static", FFN_DT_FP8, FFN_DT_FP8, 0},
    {"fp8_ootb", FFN_DT_FP8, FFN_DT_FP8, 0},
    {"int8_wo", FFN_DT_INT8, FFN_DT_BF16, 0},
    {"sq", FFN_DT_INT8, FFN_DT_INT8, 0},
    {"w4afp8", FFN_DT_INT4, FFN_DT_FP8, 128},
    {"w4a8_mxfp4_mxfp8", FFN_DT_MXFP4, FFN_DT_FP8, 0},
};
#define N_DTYPES (sizeof dtype_map / sizeof dtype_map[0])
#define KNOWN_DTYPES                                                                               \
    "bfloat16, float16, fp8, fp8_block, nvfp4, mxfp4, int4_wo, w4a16_mxfp4, fp8_static, "          \
    "fp8_ootb, int8_wo, sq, w4afp8, w4a8_mxfp4_mxfp8"

/* The element types of the communication tables, and their bytes. */
static const struct {
    const char *name;
    double bytes;
} elem_map[] = {{"half", 2},    {"float16", 2}, {"bfloat16", 2}, {"float", 4},
                {"float32", 4}, {"int8", 1},    {"uint8", 1},    {"fp8", 1}};
#define KNOWN_ELEMS "half, float16, bfloat16, float, float32, int8, uint8, fp8"

/* The collectives of an NCCL table's op_name column, in enum ffn_coll_op order. */
static const char *const coll_names[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall"};

/* ---- one value ------------------------------------------------------------------------------ */

typedef struct where {
    int line, col;
} where;

/* A rejected value at w: "file:line:col: message". */
#define BAD(tr, err, w, ...)                                                                       \
    ffn_diag_set((tr)->r.diag, (err), (tr)->r.path, (w).line, (w).col, __VA_ARGS__)

static int parse_count(table_reader *tr, const char *s, const char *name, uint64_t max, uint64_t *v,
                       where w)
{
    if (!isdigit((unsigned char)*s))
        return BAD(tr, FFN_EPARSE, w, "'%s' must be a whole number, got '%s'", name, s);
    char *end;
    errno = 0;
    const unsigned long long x = strtoull(s, &end, 10);
    if (*end) return BAD(tr, FFN_EPARSE, w, "'%s' must be a whole number, got '%s'", name, s);
    if (errno || x == 0 || x > max)
        return BAD(tr, FFN_ERANGE, w, "'%s' must be in [1, 2^%d], got '%s'", name,
                   max == MAX_DIM ? 40 : 20, s);
    *v = x;
    return 0;
}

/* A whole number that may be 0 (window_size: 0 = full attention). */
static int parse_count0(table_reader *tr, const char *s, const char *name, uint64_t *v, where w)
{
    if (!strcmp(s, "0")) {
        *v = 0;
        return 0;
    }
    return parse_count(tr, s, name, MAX_DIM, v, w);
}

static int parse_latency(table_reader *tr, const char *s, double *time_s, where w)
{
    char *end;
    errno = 0;
    const double ms = strtod(s, &end);
    if (end == s || *end)
        return BAD(tr, FFN_EPARSE, w, "'latency' must be a number of milliseconds, got '%s'", s);
    if (errno == ERANGE || !isfinite(ms) || !(ms > 0))
        return BAD(tr, FFN_ERANGE, w,
                   "'latency' must be a positive, finite number of milliseconds, got '%s'", s);
    *time_s = ms * 1e-3;
    return 0;
}

static int parse_dtype(table_reader *tr, const char *s, int *ix, where w)
{
    if (*ix >= 0 && !strcmp(s, dtype_map[*ix].name)) return 0;
    for (size_t i = 0; i < N_DTYPES; i++)
        if (!strcmp(s, dtype_map[i].name)) {
            *ix = (int)i;
            return 0;
        }
    return BAD(tr, FFN_ESCHEMA, w, "unknown dtype '%s' (known: %s)", s, KNOWN_DTYPES);
}

static int parse_dist(table_reader *tr, const char *s, ffn_moe_draw *draw, double *alpha, where w)
{
    if (!strcmp(s, "balanced")) {
        *draw = FFN_DRAW_BALANCED;
        *alpha = 0;
        return 0;
    }
    static const char pl[] = "power_law_";
    if (!strncmp(s, pl, sizeof pl - 1) && isdigit((unsigned char)s[sizeof pl - 1])) {
        char *end;
        errno = 0;
        const double a = strtod(s + sizeof pl - 1, &end);
        if (!*end && !errno && isfinite(a) && a > 0) {
            *draw = FFN_DRAW_POWER_LAW;
            *alpha = a;
            return 0;
        }
    }
    return BAD(tr, FFN_ESCHEMA, w,
               "unknown distribution '%s' (known: balanced, power_law_<alpha> with alpha > 0)", s);
}

static int kernel_index(table_reader *tr, const char *s, uint16_t *ix, where w)
{
    ffn_aic_table *t = tr->t;
    if (*ix < t->n_kernels && !strcmp(t->kernels[*ix], s)) return 0;
    for (size_t i = 0; i < t->n_kernels; i++)
        if (!strcmp(t->kernels[i], s)) {
            *ix = (uint16_t)i;
            return 0;
        }
    if (strlen(s) >= FFN_AIC_KERNEL_NAME)
        return BAD(tr, FFN_ERANGE, w, "'kernel_source' longer than %d characters",
                   FFN_AIC_KERNEL_NAME - 1);
    if (t->n_kernels >= FFN_AIC_MAX_KERNELS)
        return BAD(tr, FFN_ERANGE, w, "more than %d kernels ('%s')", FFN_AIC_MAX_KERNELS, s);
    copy_cut(t->kernels[t->n_kernels], FFN_AIC_KERNEL_NAME, s);
    *ix = (uint16_t)t->n_kernels++;
    return 0;
}

/* ---- the header ------------------------------------------------------------------------------ */

/* The op from `# op_name:`; the fields it needs. */
static int choose_op(table_reader *tr, char **cols, int n)
{
    reader *r = &tr->r;
    for (int i = 0; i < n; i++)
        if (!strcmp(cols[i], "op_name")) { /* several collectives in one table: NCCL's */
            tr->t->op = FFN_AIC_NCCL;
            tr->fields = nccl_fields;
            return 0;
        }
    const constant *op = find_const(tr, "op_name");
    if (!op)
        return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, r->lineno, 1,
                            "no '# op_name:' line above the header");
    static const struct {
        const char *name;
        ffn_aic_op op;
        const char *const *fields;
    } ops[] = {
        {"gemm", FFN_AIC_GEMM, gemm_fields},
        {"moe", FFN_AIC_MOE, moe_fields},
        {"context_attention", FFN_AIC_PREFILL_ATTN, prefill_fields},
        {"generation_attention", FFN_AIC_DECODE_ATTN, decode_fields},
        {"all_reduce", FFN_AIC_CUSTOM_AR, custom_fields},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op->value, ops[i].name)) {
            tr->t->op = ops[i].op;
            tr->fields = ops[i].fields;
            return 0;
        }
    return ffn_diag_set(r->diag, FFN_EUNSUPPORTED, r->path, op->line, op->col,
                        "op '%s' is not read (gemm, moe, context_attention, generation_attention, "
                        "all_reduce and NCCL tables with an op_name column are)",
                        op->value);
}

/* Where each field comes from: a column, or a constant line. */
static int map_fields(table_reader *tr, char **cols, int n)
{
    reader *r = &tr->r;
    for (int i = 0; i < n; i++) {
        if (!cols[i][0])
            return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, r->lineno,
                                (int)(cols[i] - cols[0]) + 1, "column %d has no name", i + 1);
        for (int j = 0; j < i; j++)
            if (!strcmp(cols[i], cols[j]))
                return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, r->lineno,
                                    (int)(cols[i] - cols[0]) + 1, "column '%s' given twice",
                                    cols[i]);
    }
    for (int f = 0; f < F_COUNT; f++) {
        tr->col[f] = tr->const_ix[f] = -1;
        if (!tr->fields[f]) continue;
        for (int i = 0; i < n; i++)
            if (!strcmp(cols[i], tr->fields[f])) tr->col[f] = i;
        const constant *c = find_const(tr, tr->fields[f]);
        if (c && tr->col[f] >= 0)
            return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, r->lineno, 1,
                                "'%s' is both a column and a '# %s:' line (line %d)", tr->fields[f],
                                tr->fields[f], c->line);
        if (c) tr->const_ix[f] = (int)(c - tr->consts);
        if (tr->col[f] < 0 && !c && !OPTIONAL(f)) {
            char need[512] = "";
            for (int g = 0; g < F_COUNT; g++)
                if (tr->fields[g] && !OPTIONAL(g))
                    snprintf(need + strlen(need), sizeof need - strlen(need), "%s%s",
                             need[0] ? ", " : "", tr->fields[g]);
            return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, r->lineno, 1,
                                "no column or '# %s:' line '%s' (a %s table needs %s)",
                                tr->fields[f], tr->fields[f], ffn_aic_op_name(tr->t->op), need);
        }
    }
    return 0;
}

static void copy_meta(ffn_aic_table *t, const table_reader *tr)
{
    const constant *c;
    if ((c = find_const(tr, "version"))) copy_cut(t->version, sizeof t->version, c->value);
    if ((c = find_const(tr, "device"))) copy_cut(t->device, sizeof t->device, c->value);
    if ((c = find_const(tr, "source"))) copy_cut(t->source, sizeof t->source, c->value);
}

/* `# timed: module | gemms` of a MoE table (include/ffnroof/aic.h). */
static int read_timed(table_reader *tr)
{
    const constant *c = find_const(tr, "timed");
    tr->t->timed = FFN_AIC_TIMED_MODULE;
    if (!c) return 0;
    if (tr->t->op != FFN_AIC_MOE)
        return ffn_diag_set(tr->r.diag, FFN_ESCHEMA, tr->r.path, c->line, c->col,
                            "'# timed:' is a MoE table's line; this is a %s table",
                            ffn_aic_op_name(tr->t->op));
    if (!strcmp(c->value, "module")) return 0;
    if (!strcmp(c->value, "gemms")) {
        tr->t->timed = FFN_AIC_TIMED_GEMMS;
        return 0;
    }
    return ffn_diag_set(tr->r.diag, FFN_ESCHEMA, tr->r.path, c->line, c->col,
                        "'# timed: %s': known are module (router logits to the combined output) "
                        "and gemms (the grouped GEMMs with their fused activation)",
                        c->value);
}

static int parse_field(table_reader *tr, int f, const char *s, where w, row *rw, uint16_t *kernel);

/* Parse the constant fields once into konst / kernel_const. */
static int parse_consts(table_reader *tr)
{
    memset(&tr->konst, 0, sizeof tr->konst);
    tr->kernel_const = 0;
    /* a table that names no kernel has one, "-" */
    if (tr->col[F_KERNEL] < 0 && tr->const_ix[F_KERNEL] < 0)
        kernel_index(tr, "-", &tr->kernel_const, (where){tr->r.lineno, 1});
    for (int f = 0; f < F_COUNT; f++) {
        if (tr->const_ix[f] < 0) continue;
        const constant *c = &tr->consts[tr->const_ix[f]];
        int rc =
            parse_field(tr, f, c->value, (where){c->line, c->col}, &tr->konst, &tr->kernel_const);
        if (rc) return rc;
    }
    return 0;
}

static int read_header(table_reader *tr, char *line)
{
    reader *r = &tr->r;
    copy_cut(tr->header, sizeof tr->header, line);
    char *cols[FFN_AIC_MAX_COLUMNS];
    const int n = split_tabs(line, cols);
    if (n < 0)
        return ffn_diag_set(r->diag, FFN_ERANGE, r->path, r->lineno, 1,
                            "more than %d columns in the header", FFN_AIC_MAX_COLUMNS);
    tr->n_cols = n;
    int rc = choose_op(tr, cols, n);
    if (!rc) rc = map_fields(tr, cols, n);
    const constant *fw = find_const(tr, "framework");
    if (!rc && fw && ffn_engine_parse(fw->value, &tr->t->engine))
        rc = ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, fw->line, fw->col,
                          "unknown framework '%s' (known: vLLM, SGLang, TRTLLM)", fw->value);
    if (!rc) rc = parse_consts(tr);
    if (!rc) rc = read_timed(tr);
    if (!rc) copy_meta(tr->t, tr);
    return rc;
}

/* A `# name: value` line below the header may not change a value the rows take. */
static int check_late_const(table_reader *tr, const char *line)
{
    char name[48];
    const char *value;
    if (!parse_const(line, name, sizeof name, &value)) return 0;
    const constant *c = find_const(tr, name);
    if (!c) return 0;
    bool used = !strcmp(name, "op_name");
    for (int f = 0; f < F_COUNT; f++)
        used = used || tr->const_ix[f] == (int)(c - tr->consts);
    if (!used || !strcmp(c->value, value)) return 0;
    return ffn_diag_set(tr->r.diag, FFN_ESCHEMA, tr->r.path, tr->r.lineno, (int)(value - line) + 1,
                        "'# %s: %s' below the header changes the value above it ('%s', line %d): "
                        "one table a file",
                        name, value, c->value, c->line);
}

/* ---- rows ------------------------------------------------------------------------------------ */

static int parse_elem(table_reader *tr, const char *s, double *bytes, where w)
{
    for (size_t i = 0; i < sizeof elem_map / sizeof elem_map[0]; i++)
        if (!strcmp(s, elem_map[i].name)) {
            *bytes = elem_map[i].bytes;
            return 0;
        }
    return BAD(tr, FFN_ESCHEMA, w, "unknown element type '%s' (known: %s)", s, KNOWN_ELEMS);
}

static int parse_coll(table_reader *tr, const char *s, uint8_t *op, where w)
{
    for (size_t i = 0; i < sizeof coll_names / sizeof coll_names[0]; i++)
        if (!strcmp(s, coll_names[i])) {
            *op = (uint8_t)i;
            return 0;
        }
    return BAD(tr, FFN_ESCHEMA, w,
               "unknown collective '%s' (known: all_reduce, all_gather, reduce_scatter, alltoall)",
               s);
}

/* backend of the custom all-reduce: a name ending in "graph" or "eager". */
static int parse_backend(table_reader *tr, const char *s, bool *eager, where w)
{
    const size_t n = strlen(s);
    if (n >= 5 && !strcmp(s + n - 5, "eager")) {
        *eager = true;
        return 0;
    }
    if (n >= 5 && !strcmp(s + n - 5, "graph")) {
        *eager = false;
        return 0;
    }
    return BAD(tr, FFN_ESCHEMA, w, "'backend' must end in 'graph' or 'eager', got '%s'", s);
}

static int parse_field(table_reader *tr, int f, const char *s, where w, row *rw, uint16_t *kernel)
{
    const ffn_aic_op op = tr->t->op;
    const bool gemm = op == FFN_AIC_GEMM;
    const bool attn = op == FFN_AIC_PREFILL_ATTN || op == FFN_AIC_DECODE_ATTN;
    const bool comm = op == FFN_AIC_NCCL || op == FFN_AIC_CUSTOM_AR;
    ffn_fit_point *pt = &rw->pt;
    ffn_aic_moe *mo = &rw->mo;
    const char *name = tr->fields[f];
    uint64_t v = 0;
    int rc = 0, dix = -1;
    switch (f) {
    case F_LATENCY:
        return parse_latency(tr, s,
                             gemm   ? &pt->time_s
                             : attn ? &rw->at.time_s
                             : comm ? &rw->cm.time_s
                                    : &mo->time_s,
                             w);
    case F_KERNEL:
        /* the custom all-reduce's kernel names its timing too (vLLM_custom_eager) */
        if (op == FFN_AIC_CUSTOM_AR && strlen(s) >= 5 && !strcmp(s + strlen(s) - 5, "eager"))
            rw->cm.eager = true;
        return kernel_index(tr, s, kernel, w);
    case F_DTYPE:
        if ((rc = parse_dtype(tr, s, &dix, w))) return rc;
        if (gemm) {
            pt->wdtype = dtype_map[dix].w;
            pt->adtype = dtype_map[dix].a;
            pt->group = dtype_map[dix].group;
        } else {
            mo->wdtype = dtype_map[dix].w;
            mo->adtype = dtype_map[dix].a;
            mo->group = dtype_map[dix].group;
        }
        return 0;
    case F_DIST:
        return parse_dist(tr, s, &mo->draw, &mo->alpha, w);
    case F_KV_DTYPE:
        if ((rc = parse_dtype(tr, s, &dix, w))) return rc;
        rw->at.kv_dtype = dtype_map[dix].w;
        return 0;
    case F_WINDOW:
        if ((rc = parse_count0(tr, s, name, &v, w))) return rc;
        rw->at.window = v;
        return 0;
    case F_COLL:
        return parse_coll(tr, s, &rw->cm.op, w);
    case F_ELEM:
        return parse_elem(tr, s, &rw->cm.bytes, w); /* bytes of one element until the row ends */
    case F_BACKEND:
        return parse_backend(tr, s, &rw->cm.eager, w);
    default:
        break;
    }
    const bool count = (f >= F_TOPK && f <= F_EP) || f == F_BATCH || f == F_HEADS ||
                       f == F_KV_HEADS || f == F_HEAD_DIM || f == F_GPUS;
    if ((rc = parse_count(tr, s, name, count ? MAX_COUNT : MAX_DIM, &v, w))) return rc;
    switch (f) {
    case F_BATCH:
        rw->at.batch = (uint32_t)v;
        return 0;
    case F_LEN:
        rw->at.len = v;
        return 0;
    case F_HEADS:
        rw->at.heads = (uint32_t)v;
        return 0;
    case F_KV_HEADS:
        rw->at.kv_heads = (uint32_t)v;
        return 0;
    case F_HEAD_DIM:
        rw->at.head_dim = (uint32_t)v;
        return 0;
    case F_GPUS:
        rw->cm.gpus = (uint32_t)v;
        return 0;
    default:
        break;
    }
    if (f == F_MSG) {
        rw->msg_elems = v;
        return 0;
    }
    if (count) {
        uint32_t *counts[4] = {&mo->topk, &mo->experts, &mo->tp, &mo->ep};
        *counts[f - F_TOPK] = (uint32_t)v;
    } else if (gemm) {
        uint64_t *dims[3] = {&pt->m, &pt->n, &pt->k};
        *dims[f - F_M] = v;
    } else {
        uint64_t *dims[3] = {&mo->tokens, &mo->hidden, &mo->inter};
        *dims[f - F_M] = v;
    }
    return 0;
}

/* Make room for one more row. */
static int grow(table_reader *tr)
{
    ffn_aic_table *t = tr->t;
    const size_t n = ffn_aic_rows(t);
    if (n < tr->cap) return 0;
    if (n >= FFN_AIC_MAX_ROWS)
        return ffn_diag_set(tr->r.diag, FFN_ERANGE, tr->r.path, tr->r.lineno, 1,
                            "more than the limit of %u rows", FFN_AIC_MAX_ROWS);
    const size_t cap = tr->cap ? 2 * tr->cap : 4096;
    switch (t->op) {
    case FFN_AIC_GEMM: {
        ffn_fit_point *p = realloc(t->pts, cap * sizeof *p);
        if (p) t->pts = p;
        uint16_t *k = p ? realloc(t->pt_kernel, cap * sizeof *k) : NULL;
        if (k) t->pt_kernel = k;
        if (!p || !k) goto nomem;
        break;
    }
    case FFN_AIC_MOE: {
        ffn_aic_moe *m = realloc(t->moe, cap * sizeof *m);
        if (!m) goto nomem;
        t->moe = m;
        break;
    }
    case FFN_AIC_PREFILL_ATTN:
    case FFN_AIC_DECODE_ATTN: {
        ffn_aic_attn *a = realloc(t->attn, cap * sizeof *a);
        if (!a) goto nomem;
        t->attn = a;
        break;
    }
    case FFN_AIC_NCCL:
    case FFN_AIC_CUSTOM_AR: {
        ffn_aic_comm *c = realloc(t->comm, cap * sizeof *c);
        if (!c) goto nomem;
        t->comm = c;
        break;
    }
    }
    tr->cap = cap;
    return 0;
nomem:
    return ffn_diag_set(tr->r.diag, FFN_ENOMEM, tr->r.path, tr->r.lineno, 1,
                        "out of memory at %zu rows", n);
}

/* The checks across the fields of one row. */
static int check_row(table_reader *tr, row *rw)
{
    ffn_aic_table *t = tr->t;
    const int line = tr->r.lineno;
    switch (t->op) {
    case FFN_AIC_MOE:
        if (rw->mo.topk > rw->mo.experts)
            return ffn_diag_set(tr->r.diag, FFN_ERANGE, tr->r.path, line, 1,
                                "topk %u is more than num_experts %u", rw->mo.topk, rw->mo.experts);
        return 0;
    case FFN_AIC_PREFILL_ATTN:
    case FFN_AIC_DECODE_ATTN:
        if (rw->at.kv_heads > rw->at.heads)
            return ffn_diag_set(tr->r.diag, FFN_ERANGE, tr->r.path, line, 1,
                                "num_key_value_heads %u is more than num_heads %u", rw->at.kv_heads,
                                rw->at.heads);
        return 0;
    case FFN_AIC_NCCL:
    case FFN_AIC_CUSTOM_AR:
        if (t->op == FFN_AIC_CUSTOM_AR) rw->cm.op = FFN_COLL_CUSTOM_ALL_REDUCE;
        rw->cm.bytes *= (double)rw->msg_elems;
        return 0;
    case FFN_AIC_GEMM:
        break;
    }
    return 0;
}

static int read_row(table_reader *tr, char *line)
{
    char *f[FFN_AIC_MAX_COLUMNS];
    const int n = split_tabs(line, f);
    if (n != tr->n_cols)
        return ffn_diag_set(tr->r.diag, FFN_ESCHEMA, tr->r.path, tr->r.lineno, 1,
                            "expected %d columns as the header has, got %s%d", tr->n_cols,
                            n < 0 ? "more than " : "", n < 0 ? FFN_AIC_MAX_COLUMNS : n);
    int rc = grow(tr);
    if (rc) return rc;
    ffn_aic_table *t = tr->t;
    row rw = tr->konst;
    uint16_t kernel = tr->kernel_const;
    for (int k = 0; k < F_COUNT; k++) {
        const int c = tr->col[k];
        if (c < 0) continue;
        const where w = {tr->r.lineno, (int)(f[c] - line) + 1};
        if (!f[c][0]) return BAD(tr, FFN_ESCHEMA, w, "'%s' is empty", tr->fields[k]);
        if ((rc = parse_field(tr, k, f[c], w, &rw, &kernel))) return rc;
    }
    if ((rc = check_row(tr, &rw))) return rc;
    switch (t->op) {
    case FFN_AIC_GEMM:
        rw.pt.no_harness = true;
        t->pts[t->n_pts] = rw.pt;
        t->pt_kernel[t->n_pts++] = kernel;
        break;
    case FFN_AIC_MOE:
        rw.mo.kernel = kernel;
        t->moe[t->n_moe++] = rw.mo;
        break;
    case FFN_AIC_PREFILL_ATTN:
    case FFN_AIC_DECODE_ATTN:
        rw.at.kernel = kernel;
        t->attn[t->n_attn++] = rw.at;
        break;
    case FFN_AIC_NCCL:
    case FFN_AIC_CUSTOM_AR:
        rw.cm.kernel = kernel;
        t->comm[t->n_comm++] = rw.cm;
        break;
    }
    return 0;
}

/* ---- the whole table ------------------------------------------------------------------------- */

static int read_table(table_reader *tr)
{
    reader *r = &tr->r;
    bool have_header = false;
    char *line = NULL;
    int rc;
    while ((rc = next_line(r, &line)) == 1) {
        if (line[0] == '\0') continue;
        if (line[0] == '#') {
            rc = have_header ? check_late_const(tr, line) : add_const(tr, line);
            if (rc) return rc;
            continue;
        }
        if (!have_header) {
            if ((rc = read_header(tr, line))) return rc;
            have_header = true;
            continue;
        }
        if (!strcmp(line, tr->header)) continue; /* the header repeated (tables concatenated) */
        if ((rc = read_row(tr, line))) return rc;
    }
    if (rc < 0) return rc;
    if (!have_header)
        return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, 0, 0,
                            r->lineno ? "no header line (only comments)" : "the file is empty");
    if (ffn_aic_rows(tr->t) == 0)
        return ffn_diag_set(r->diag, FFN_ESCHEMA, r->path, 0, 0, "no rows below the header");
    return 0;
}

int ffn_aic_load(const char *path, ffn_aic_table *t, ffn_diag *diag)
{
    if (!t) return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0, "no table to load into");
    memset(t, 0, sizeof *t);
    table_reader *tr = calloc(1, sizeof *tr);
    if (!tr) return ffn_diag_set(diag, FFN_ENOMEM, path, 0, 0, "out of memory");
    tr->t = t;
    int rc = open_reader(&tr->r, path, diag);
    if (!rc) rc = read_table(tr);
    close_reader(&tr->r);
    free(tr);
    if (rc) ffn_aic_free(t);
    return rc;
}

void ffn_aic_free(ffn_aic_table *t)
{
    if (!t) return;
    free(t->pts);
    free(t->pt_kernel);
    free(t->moe);
    free(t->attn);
    free(t->comm);
    memset(t, 0, sizeof *t);
}

size_t ffn_aic_rows(const ffn_aic_table *t)
{
    return t->n_pts + t->n_moe + t->n_attn + t->n_comm;
}

const char *ffn_aic_op_name(ffn_aic_op op)
{
    switch (op) {
    case FFN_AIC_GEMM:
        return "gemm";
    case FFN_AIC_MOE:
        return "moe";
    case FFN_AIC_PREFILL_ATTN:
        return "context_attention";
    case FFN_AIC_DECODE_ATTN:
        return "generation_attention";
    case FFN_AIC_NCCL:
        return "nccl";
    case FFN_AIC_CUSTOM_AR:
        return "custom_allreduce";
    }
    return "?";
}

/* ---- recognising a table --------------------------------------------------------------------- */

/* Whether a header line (tab-separated) has a column `name`. */
static bool has_column(const char *line, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = line; p;) {
        const char *tab = strchr(p, '\t');
        const size_t len = tab ? (size_t)(tab - p) : strcspn(p, "\r");
        if (len == n && !strncmp(p, name, n)) return true;
        p = tab ? tab + 1 : NULL;
    }
    return false;
}

bool ffn_aic_is_table(const char *path)
{
    reader r;
    ffn_diag d;
    if (open_reader(&r, path, &d)) return false;
    const int got = gzread(r.gz, r.buf, 65536);
    bool yes = false, op = false;
    if (got > 0) {
        r.buf[got] = '\0';
        char *save = NULL;
        bool first = true;
        for (char *l = strtok_r(r.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (first && !strncmp(l, "# source:", 9) && strstr(l, "aiconfigurator")) {
                yes = true;
                break;
            }
            first = false;
            if (l[0] == '#') {
                op = op || !strncmp(l, "# op_name:", 10);
                continue;
            }
            if (l[strspn(l, " \t\r")] == '\0') continue;
            /* an NCCL table names its collectives in an op_name column */
            yes = (op || has_column(l, "op_name")) && has_column(l, "latency");
            break;
        }
    }
    close_reader(&r);
    return yes;
}
