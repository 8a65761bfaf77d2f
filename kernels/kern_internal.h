/* Helpers shared by the dense FFN kernels of every ISA (internal to ffn_kernels; ffn__ prefix):
 * argument checks, the packed-weight header every kernel writes in front of its weights, the
 * thread count, and portable scalar bf16/fp16 conversions. Nothing here allocates or prints. */
#ifndef FFNROOF_KERNELS_KERN_INTERNAL_H
#define FFNROOF_KERNELS_KERN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffnroof/kernels.h"

/* The FFNROOF_TUNING value that names no tuning (its first 64 bytes), NULL when it is unset or
 * valid (kernels/tuning.c): ffn_isa_selected reports it. */
const char *ffn__tuning_bad_env(void);

/* The reference kernels (always built). */
extern const ffn_kernel ffn_kernel_f32_ref;
extern const ffn_kernel ffn_kernel_bf16_ref;
extern const ffn_kernel ffn_kernel_f16_ref;

/* Every packed blob starts with this header (64 bytes, so weights that follow stay 64-byte
 * aligned relative to the blob): forward refuses weights packed for another shape or kernel. */
#define FFN__PACK_MAGIC 0x4b4e4646u /* "FFNK" */
#define FFN__PACK_HDR 64u
typedef struct ffn__pack_hdr {
    uint32_t magic;
    uint32_t kernel_id; /* a per-layout tag chosen by each kernel file */
    uint64_t d, f;
    uint32_t act, bias;
} ffn__pack_hdr;

static inline size_t ffn__round_up(size_t x, size_t m)
{
    return (x + m - 1) / m * m;
}

static inline bool ffn__gated(ffn_act a)
{
    return a == FFN_ACT_SWIGLU || a == FFN_ACT_GEGLU || a == FFN_ACT_REGLU;
}

/* 0 when s is a valid shape; FFN_EINVAL otherwise. */
static inline int ffn__check_shape(const ffn_kshape *s)
{
    if (!s || s->d == 0 || s->f == 0 || (unsigned)s->act >= FFN_ACT_COUNT) return FFN_EINVAL;
    /* Keep every element count (and its byte count) far from size_t overflow. */
    if (s->d > ((size_t)1 << 24) || s->f > ((size_t)1 << 24)) return FFN_EINVAL;
    if ((uint64_t)s->d * s->f > ((uint64_t)1 << 36)) return FFN_EINVAL;
    return 0;
}

/* Checks shared by every pack(): shape, weight pointers (w_up iff gated, biases iff bias),
 * destination size. */
int ffn__check_pack(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w,
                    const void *packed, size_t packed_bytes);
/* Checks shared by every forward(): shape, packed header (kernel_id), T/x/y, workspace. */
int ffn__check_forward(const ffn_kernel *k, uint32_t kernel_id, const ffn_kshape *s,
                       const void *packed, size_t T, const float *x, const float *y, const void *ws,
                       size_t ws_bytes, int threads);
void ffn__write_hdr(void *packed, uint32_t kernel_id, const ffn_kshape *s);

/* threads <= 0: every online CPU; otherwise threads, capped at 1024. */
int ffn__threads(int threads);

/* VZEROUPPER on an x86 CPU with AVX, nothing elsewhere. Legacy-SSE code (the portable kernel,
 * built for the x86-64 baseline) run while a 256/512-bit register's upper half is dirty pays
 * for it on every instruction: on a Zen 4 VM the portable fp32 decode of d = 512,
 * f = 1408 took 0.62 ms instead of 0.148 after one VEX-256 instruction, and GCC 12 leaves the
 * MoE router's avx512f target clone without the VZEROUPPER it puts after AVX code elsewhere.
 * The driver calls it at the start of every thread's work (a library entry, as BLIS does), the
 * MoE layer after its router. */
void ffn__clean_upper(void);

/* The pointer p rounded up to a 64-byte boundary (workspaces are not assumed aligned: every
 * workspace_bytes() adds 64 bytes of slack for this). */
static inline void *ffn__align64(void *p)
{
    return (void *)(((uintptr_t)p + 63u) & ~(uintptr_t)63u);
}

/* fp32 -> bf16, round to nearest even; NaN stays a (quiet) NaN. */
static inline uint16_t ffn__f32_to_bf16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float ffn__bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float v;
    memcpy(&v, &u, 4);
    return v;
}

/* The next chunk [*lo, *hi) of n items from a counter shared by the threads (zero before the
 * loop); false once all are taken. Work is split this way rather than in fixed shares: on a
 * shared host one vCPU is often slowed for a while, and with a fixed split the other one then
 * idles at the barrier. Each item is still computed whole by one thread, so y does not depend
 * on who took what. */
static inline bool ffn__grab(size_t *next, size_t n, size_t chunk, size_t *lo, size_t *hi)
{
    const size_t s = __atomic_fetch_add(next, chunk, __ATOMIC_RELAXED);
    if (s >= n) return false;
    *lo = s;
    *hi = n - s < chunk ? n : s + chunk;
    return true;
}

/* Items per grab: about 256 KiB of weights (item_bytes each), at least one. */
static inline size_t ffn__grab_chunk(size_t item_bytes)
{
    const size_t c = ((size_t)256 << 10) / (item_bytes ? item_bytes : 1);
    return c ? c : 1;
}

/* Contiguous share [*lo, *hi) of n items for thread t of nt. */
static inline void ffn__split(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
}

/* Append word w to the space-separated list of length len in buf (n bytes, snprintf-like: the
 * returned length counts what did not fit). */
static inline size_t ffn__list_add(char *buf, size_t n, size_t len, const char *w)
{
    const size_t l = strlen(w);
    if (buf && len + l + 2 <= n) {
        if (len) buf[len++] = ' ';
        memcpy(buf + len, w, l + 1);
        return len + l;
    }
    return len + l + 1;
}

/* fp32 -> IEEE binary16, round to nearest even; overflow gives +-Inf, NaN stays NaN. */
uint16_t ffn__f32_to_f16(float v);
float ffn__f16_to_f32(uint16_t h);

#endif
