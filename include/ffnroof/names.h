/* The names the whole project spells the same way: the phases and bounds of the analytic model,
 * and the profiler's peak kinds, bandwidth kernels and peer libraries as calibrate, bench and
 * their files (docs/formats-bench.md) write them. Enums and their names only; base/names.c
 * implements them with nothing but libc, so sim/, measure/, the peers and io/ share one table. */
#ifndef FFNROOF_NAMES_H
#define FFNROOF_NAMES_H

#include "ffnroof/types.h"

/* ---- the analytic model ------------------------------------------------------------------- */

typedef enum ffn_phase { FFN_PHASE_PREFILL = 0, FFN_PHASE_DECODE } ffn_phase;
typedef enum ffn_bound { FFN_BOUND_MEMORY = 0, FFN_BOUND_COMPUTE, FFN_BOUND_COMM } ffn_bound;

/* "prefill" or "decode" (any value other than FFN_PHASE_DECODE reads "prefill"). */
const char *ffn_phase_name(ffn_phase p);
/* "memory", "compute" or "interconnect" (any other value reads "memory"). */
const char *ffn_bound_name(ffn_bound b);

/* ---- the profiler ------------------------------------------------------------------------- */

typedef enum ffn_peak_kind {
    FFN_PEAK_FP32_PORTABLE = 0, /* fp32 mul+add in C, vectorised by the compiler: always runs */
    FFN_PEAK_FP32_AVX2,         /* VFMADD231PS ymm (x86 without AVX-512) */
    FFN_PEAK_FP32_AVX512,       /* VFMADD231PS zmm */
    FFN_PEAK_BF16_AVX512,       /* VDPBF16PS zmm */
    FFN_PEAK_FP16_AVX512,       /* VFMADD231PH zmm */
    FFN_PEAK_INT8_VNNI,         /* VPDPBUSD zmm */
    FFN_PEAK_BF16_AMX,          /* TDPBF16PS */
    FFN_PEAK_INT8_AMX,          /* TDPBSSD */
    FFN_PEAK_FP32_NEON,         /* FMLA v.4s */
    FFN_PEAK_FP16_NEON,         /* FMLA v.8h */
    FFN_PEAK_INT8_AVX_VNNI,     /* VPDPBUSD ymm (AVX-VNNI, VEX: 256-bit int8 path) */
    FFN_PEAK_INT8_AVX2,         /* VPMADDUBSW + VPMADDWD + VPADDD ymm (AVX2 without VNNI) */
    FFN_PEAK_INT8_NEON_SDOT,    /* SDOT v.4s (FEAT_DotProd) */
    FFN_PEAK_INT8_NEON_I8MM,    /* SMMLA v.4s (FEAT_I8MM) */
    FFN_PEAK_INT8_SVE_SDOT,     /* SDOT z.s (SVE, any vector length) */
    FFN_PEAK_INT8_PORTABLE,     /* int8 x int8 into int32 in C, vectorised by the compiler */
    FFN_PEAK_FP32_SVE,          /* FMLA z.s (SVE, any vector length) */
    FFN_PEAK_COUNT
} ffn_peak_kind;

const char *ffn_peak_name(ffn_peak_kind k); /* "fp32_avx512", ...; NULL when out of range */
ffn_dtype ffn_peak_dtype(ffn_peak_kind k);  /* the dtype whose peak it measures */

typedef enum ffn_bw_kernel {
    FFN_BW_READ = 0, /* s += a[i], 8+ independent accumulators: 4 B/element read */
    FFN_BW_COPY,     /* b[i] = a[i]: 8 B/element (STREAM counting, write-allocate not credited) */
    FFN_BW_TRIAD,    /* a[i] = b[i] + s * c[i]: 12 B/element */
    FFN_BW_COPY_NT,  /* copy with non-temporal stores (no read-for-ownership) */
    FFN_BW_TRIAD_NT, /* triad with non-temporal stores */
    FFN_BW_COUNT
} ffn_bw_kernel;

const char *ffn_bw_kernel_name(ffn_bw_kernel k); /* "read", "copy", "triad", "copy_nt", ... */
const char *ffn_bw_kernel_kind(ffn_bw_kernel k); /* "read-only", "read-write" or "nt" */

typedef enum ffn_peer_lib { FFN_PEER_OPENBLAS = 0, FFN_PEER_ONEDNN, FFN_PEER_COUNT } ffn_peer_lib;

/* "openblas", "onednn"; NULL for an out-of-range value. */
const char *ffn_peer_lib_name(ffn_peer_lib lib);

#endif
