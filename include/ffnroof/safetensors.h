/* A small reader of safetensors checkpoints (io/load/safetensors.c), enough for `ffnroof quant
 * --checkpoint`: the header of tensor names, dtypes, shapes and byte ranges, every number of
 * it checked against the file before anything is read, and one FFN layer's gate/up/down
 * weights read by name and converted to fp32 in the kernels' [K][N] layout.
 *
 * The format (github.com/huggingface/safetensors, README "Format", and its reference reader
 * safetensors/src/tensor.rs): 8 bytes, a little-endian uint64 N; N bytes of UTF-8 JSON
 * {"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
 * "__metadata__": {"key": "text", ...}} (padded with spaces); then the data buffer, which the
 * offsets index from its first byte. As the reference reader does, a file is refused when the
 * header does not start with '{', when a tensor's byte count is not its element count times
 * its dtype's size, when the ranges (sorted) leave a hole or overlap, and when the last one does
 * not end at the end of the file. The JSON goes through the project's JSON/YAML loader
 * (io/load/ydoc.c), within include/ffnroof/limits.h (a header of at most FFN_MAX_INPUT_BYTES, at
 * most FFN_MAX_KEYS tensors); the data, which may be many GB, is read with pread() only where
 * a tensor is asked for.
 *
 * Errors: a negative FFN_E* code and a diagnostic "file: what is wrong (tensor 'NAME')"; a
 * fault inside the JSON also says its line and column in the header. Nothing is printed. */
#ifndef FFNROOF_SAFETENSORS_H
#define FFNROOF_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"

/* The dtypes of the format (name, bits per element). Only F32, F16 and BF16 can be read as
 * weights; the others are known so that a file holding them is validated, not refused. */
#define FFN_ST_DTYPE_MAP(X)                                                                        \
    X(BOOL, "BOOL", 8)                                                                             \
    X(U8, "U8", 8)                                                                                 \
    X(I8, "I8", 8)                                                                                 \
    X(F8_E5M2, "F8_E5M2", 8)                                                                       \
    X(F8_E4M3, "F8_E4M3", 8)                                                                       \
    X(F8_E8M0, "F8_E8M0", 8)                                                                       \
    X(I16, "I16", 16)                                                                              \
    X(U16, "U16", 16)                                                                              \
    X(F16, "F16", 16)                                                                              \
    X(BF16, "BF16", 16)                                                                            \
    X(I32, "I32", 32)                                                                              \
    X(U32, "U32", 32)                                                                              \
    X(F32, "F32", 32)                                                                              \
    X(F64, "F64", 64)                                                                              \
    X(I64, "I64", 64)                                                                              \
    X(U64, "U64", 64)                                                                              \
    X(F4, "F4", 4)                                                                                 \
    X(F6_E2M3, "F6_E2M3", 6)                                                                       \
    X(F6_E3M2, "F6_E3M2", 6)                                                                       \
    X(C64, "C64", 64)

typedef enum ffn_st_dtype {
#define FFN_ST_ENUM(id, name, bits) FFN_ST_##id,
    FFN_ST_DTYPE_MAP(FFN_ST_ENUM)
#undef FFN_ST_ENUM
        FFN_ST_DTYPE_COUNT
} ffn_st_dtype;

/* "BF16"; NULL out of range. */
const char *ffn_st_dtype_name(ffn_st_dtype dt);
/* Bits per element (0 out of range). */
unsigned ffn_st_dtype_bits(ffn_st_dtype dt);

/* Most dimensions of one tensor. */
#define FFN_ST_MAX_DIMS 16

typedef struct ffn_st_tensor {
    const char *name; /* owned by the ffn_st_file */
    ffn_st_dtype dtype;
    unsigned ndim;
    uint64_t shape[FFN_ST_MAX_DIMS];
    uint64_t elements;   /* product of shape (1 for a scalar, ndim 0) */
    uint64_t begin, end; /* byte range in the data buffer */
} ffn_st_tensor;

typedef struct ffn_st_file {
    char path[512];
    int fd; /* open for the file's lifetime; -1 after ffn_st_close */
    uint64_t file_bytes;
    uint64_t header_bytes; /* N */
    uint64_t data_bytes;   /* file_bytes - 8 - N */
    size_t n_tensors;
    ffn_st_tensor *tensors; /* in header order (owned) */
} ffn_st_file;

/* Open path and validate its header and layout (above). On error *st is closed and needs no
 * ffn_st_close. Errors: FFN_EIO (cannot open or read, a directory, not a regular file),
 * FFN_EPARSE (not JSON, not starting with '{'), FFN_ESCHEMA (a field missing or mistyped, an
 * unknown dtype, sizes that disagree, holes, overlaps, trailing bytes), FFN_ERANGE (a header
 * beyond the limits, offsets past the file), FFN_EOVERFLOW (a shape whose size overflows),
 * FFN_ENOMEM. */
int ffn_st_open(ffn_st_file *st, const char *path, ffn_diag *diag);
void ffn_st_close(ffn_st_file *st);

/* The tensor named name, or NULL. */
const ffn_st_tensor *ffn_st_find(const ffn_st_file *st, const char *name);

/* All elements of t (of st) as fp32 into out[n] (n >= t->elements). F32 is copied, BF16 and
 * F16 widened exactly (subnormals, infinities and NaN kept). FFN_EUNSUPPORTED for any other
 * dtype, FFN_ENOSPACE when n is too small, FFN_EIO when the read fails. */
int ffn_st_read_f32(const ffn_st_file *st, const ffn_st_tensor *t, float *out, size_t n,
                    ffn_diag *diag);

/* One gated FFN layer of a LLaMA / Mistral / Qwen style checkpoint:
 * <prefix>layers.<N>.mlp.{gate,up,down}_proj.weight, where <prefix> is "model.",
 * "model.language_model." or "language_model.model." (the first one the file holds).
 * Hugging Face's nn.Linear stores a weight as [out_features][in_features], so gate and up are
 * [f][d] and down is [d][f]; they are transposed here into x W's [K][N] layout of
 * include/ffnroof/kernels.h: w_gate, w_up [d][f], w_down [f][d]. */
typedef struct ffn_st_ffn {
    size_t d, f;
    float *w_gate, *w_up, *w_down; /* owned: ffn_st_ffn_free */
    ffn_st_dtype dtype;            /* gate_proj's dtype, for the record */
    char prefix[96];               /* e.g. "model.layers.3.mlp." */
} ffn_st_ffn;

/* Read layer `layer` into *out (zeroed first; free with ffn_st_ffn_free even on error).
 * Errors: FFN_ENOTFOUND (no such layer: the message says which layers the file holds),
 * FFN_ESCHEMA (shapes that do not agree, not 2-D), FFN_EUNSUPPORTED (a dtype other than
 * F32/F16/BF16), FFN_ENOMEM, FFN_EIO. */
int ffn_st_read_ffn(const ffn_st_file *st, unsigned layer, ffn_st_ffn *out, ffn_diag *diag);
/* The same from a sharded checkpoint through its index (model.safetensors.index.json:
 * {"weight_map": {"NAME": "model-00001-of-00002.safetensors", ...}}): each of the three
 * weights is read from the shard the index names, a file beside the index (gate, up and down
 * may lie in different shards). The index is a JSON file within include/ffnroof/limits.h;
 * errors as ffn_st_open and ffn_st_read_ffn, and "file:line:col" ones in the index. */
int ffn_st_read_ffn_index(const char *index_path, unsigned layer, ffn_st_ffn *out, ffn_diag *diag);
void ffn_st_ffn_free(ffn_st_ffn *ffn);

#endif
