/* Private to ffn_measure: the per-ISA microbenchmark kernels (each in its own source file with its
 * own compiler flags; see CMakeLists.txt) and the small thread team the benchmarks share.
 *
 * A peak kernel runs `iters` iterations of its loop on the calling thread and returns a value
 * derived from its accumulators so that the compiler cannot drop the work; its FLOPs per
 * iteration are declared next to its code as FFN__<NAME>_FLOPS_PER_ITER and registered in
 * peak.c. A bandwidth kernel streams over n elements (n a multiple of FFN__BW_ALIGN_ELEMS; arrays
 * 64-byte aligned) and returns a sink value for the same reason. */
#ifndef FFN_MEASURE_INTERNAL_H
#define FFN_MEASURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* --- peak kernels ------------------------------------------------------------------------ */
typedef double (*ffn__peak_fn)(uint64_t iters);

double ffn__peak_fp32_portable(uint64_t iters);
#define FFN__FP32_PORTABLE_FLOPS_PER_ITER (32.0 * 2.0) /* 32 independent mul+add chains */
double ffn__peak_int8_portable(uint64_t iters);
#define FFN__INT8_PORTABLE_FLOPS_PER_ITER (32.0 * 2.0) /* 32 int8 MAC into int32 */

double ffn__peak_fp32_avx2(uint64_t iters);
#define FFN__FP32_AVX2_FLOPS_PER_ITER (12.0 * 8.0 * 2.0) /* 12 ymm FMA x 8 lanes x 2 */

double ffn__peak_fp32_avx512(uint64_t iters);
#define FFN__FP32_AVX512_FLOPS_PER_ITER (16.0 * 16.0 * 2.0) /* 16 zmm FMA x 16 lanes x 2 */
double ffn__peak_bf16_avx512(uint64_t iters);
#define FFN__BF16_AVX512_FLOPS_PER_ITER (16.0 * 16.0 * 4.0) /* 16 VDPBF16PS x 16 lanes x 2 MAC */
double ffn__peak_fp16_avx512(uint64_t iters);
#define FFN__FP16_AVX512_FLOPS_PER_ITER (16.0 * 32.0 * 2.0) /* 16 zmm FMA x 32 lanes x 2 */
double ffn__peak_int8_vnni(uint64_t iters);
double ffn__peak_int8_avx_vnni(uint64_t iters);
/* 12 VPDPBUSD ymm x 8 x 4 MAC */
#define FFN__INT8_AVX_VNNI_FLOPS_PER_ITER (12.0 * 8.0 * 4.0 * 2.0)
#define FFN__INT8_VNNI_FLOPS_PER_ITER (16.0 * 16.0 * 4.0 * 2.0) /* 16 VPDPBUSD x 16 x 4 MAC */
double ffn__peak_int8_avx2(uint64_t iters);
#define FFN__INT8_AVX2_FLOPS_PER_ITER (8.0 * 32.0 * 2.0) /* 8 VPMADDUBSW/VPMADDWD x 32 MAC */
/* AMX: the per-process permission must be granted first (ffn__amx_enable). */
int ffn__amx_enable(void);
double ffn__peak_bf16_amx(uint64_t iters);
#define FFN__BF16_AMX_FLOPS_PER_ITER (4.0 * 2.0 * 16.0 * 16.0 * 32.0) /* 4 TDPBF16PS 16x16x32 */
double ffn__peak_int8_amx(uint64_t iters);
#define FFN__INT8_AMX_FLOPS_PER_ITER (4.0 * 2.0 * 16.0 * 16.0 * 64.0) /* 4 TDPBSSD 16x16x64 */

/* One step of each of the 16 named accumulators a0..a15 of a probe whose vectors cannot live in
 * an array (SVE's are sizeless; NEON's were kept on the stack): OP(a0); ... OP(a15). */
#define FFN__EACH16(OP)                                                                            \
    do {                                                                                           \
        OP(a0);                                                                                    \
        OP(a1);                                                                                    \
        OP(a2);                                                                                    \
        OP(a3);                                                                                    \
        OP(a4);                                                                                    \
        OP(a5);                                                                                    \
        OP(a6);                                                                                    \
        OP(a7);                                                                                    \
        OP(a8);                                                                                    \
        OP(a9);                                                                                    \
        OP(a10);                                                                                   \
        OP(a11);                                                                                   \
        OP(a12);                                                                                   \
        OP(a13);                                                                                   \
        OP(a14);                                                                                   \
        OP(a15);                                                                                   \
    } while (0)
double ffn__peak_fp32_neon(uint64_t iters);
#define FFN__FP32_NEON_FLOPS_PER_ITER (16.0 * 4.0 * 2.0) /* 16 FMLA .4s */
double ffn__peak_fp16_neon(uint64_t iters);
#define FFN__FP16_NEON_FLOPS_PER_ITER (16.0 * 8.0 * 2.0) /* 16 FMLA .8h */
double ffn__peak_int8_neon_sdot(uint64_t iters);
#define FFN__INT8_NEON_SDOT_FLOPS_PER_ITER (16.0 * 16.0 * 2.0) /* 16 SDOT .4s x 16 MAC */
double ffn__peak_int8_neon_i8mm(uint64_t iters);
#define FFN__INT8_NEON_I8MM_FLOPS_PER_ITER (16.0 * 32.0 * 2.0) /* 16 SMMLA x 32 MAC */
double ffn__peak_int8_sve_sdot(uint64_t iters);
/* 16 SDOT z.s x VL_bytes MAC x 2, per byte of vector length (peak.c multiplies by svcntb) */
#define FFN__INT8_SVE_SDOT_FLOPS_PER_VL_BYTE (16.0 * 2.0)
double ffn__peak_fp32_sve(uint64_t iters);
/* 16 FMLA z.s x VL_bytes / 4 lanes x 2, per byte of vector length */
#define FFN__FP32_SVE_FLOPS_PER_VL_BYTE (16.0 / 4.0 * 2.0)

/* --- bandwidth kernels --------------------------------------------------------------------- */
#define FFN__BW_ALIGN_ELEMS 256 /* floats: 1 KiB, a multiple of every unroll below */

typedef struct ffn__bw_kernels {
    double (*read)(const float *a, size_t n);
    double (*copy)(float *restrict b, const float *restrict a, size_t n);
    double (*triad)(float *restrict a, const float *restrict b, const float *restrict c, float s,
                    size_t n);
    double (*copy_nt)(float *restrict b, const float *restrict a, size_t n); /* may be NULL */
    double (*triad_nt)(float *restrict a, const float *restrict b, const float *restrict c, float s,
                       size_t n); /* may be NULL */
} ffn__bw_kernels;

void ffn__bw_portable_kernels(ffn__bw_kernels *k);
void ffn__bw_avx512_kernels(ffn__bw_kernels *k);
void ffn__bw_avx2_kernels(ffn__bw_kernels *k);
void ffn__bw_sve_kernels(ffn__bw_kernels *k);
/* Every bandwidth kernel set built into this library that this CPU runs (portable first; the
 * FFNROOF_ISA cap does not apply), with its name: what tests check the kernels' results on.
 * Returns the count (at most cap). */
size_t ffn__bw_kernel_sets(ffn__bw_kernels *out, const char **names, size_t cap);
/* The widest probe width the CPU and FFNROOF_ISA allow: "avx512", "avx2", "sve" or "portable". */
const char *ffn__bw_probe_isa(void);

/* --- thread team --------------------------------------------------------------------------- */
/* Run fn(arg, tid, nthreads) on nthreads new threads, thread tid pinned to the tid-th CPU (modulo)
 * of the process's affinity mask (pinning failures are ignored: pinning is best effort), and wait
 * for all of them. Returns 0 or FFN_ENOMEM / FFN_EINVAL. */
typedef void (*ffn__team_fn)(void *arg, int tid, int nthreads);
int ffn__team_run(int nthreads, ffn__team_fn fn, void *arg);

/* CPUs in the process's affinity mask (>= 1). */
int ffn__allowed_cpus(void);

/* Append printf-style text to a NUL-terminated buffer of size n (truncating). */
void ffn__appendf(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
