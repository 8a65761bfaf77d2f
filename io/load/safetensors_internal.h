/* What the safetensors reader (safetensors.c) shares with the FFN layer reader
 * (safetensors_ffn.c); internal to io. */
#ifndef FFNROOF_IO_SAFETENSORS_INTERNAL_H
#define FFNROOF_IO_SAFETENSORS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/safetensors.h"

/* Tensor names can be long; a message quotes at most this many characters of one. */
#define NAME_IN_MSG 160
/* Bytes of one chunk of a streamed read. */
#define FFN__ST_CHUNK_BYTES ((size_t)4 << 20)

/* n bytes at file offset off (pread, retried on EINTR; a short file is an error). */
int ffn__st_read_at(const ffn_st_file *st, void *buf, size_t n, uint64_t off, ffn_diag *diag);
/* "file: message (tensor 'NAME')" with code rc. */
int ffn__st_tensor_error(const ffn_st_file *st, ffn_diag *diag, int rc, const char *tensor,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* "[d0, d1, ...]" */
void ffn__st_shape_text(const ffn_st_tensor *t, char *buf, size_t n);
/* n little-endian elements of dt (F32, F16, BF16) -> fp32. */
void ffn__st_widen(ffn_st_dtype dt, const unsigned char *raw, float *out, size_t n);
/* F32, F16 or BF16: the dtypes read as weights. */
bool ffn__st_readable(ffn_st_dtype dt);
/* The error for a tensor whose dtype cannot be read as weights. */
int ffn__st_unsupported(const ffn_st_file *st, const ffn_st_tensor *t, ffn_diag *diag);

#endif
