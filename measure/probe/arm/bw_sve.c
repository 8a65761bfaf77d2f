/* SVE bandwidth kernels, vector-length agnostic (compiled with +sve; used only when the CPU has
 * SVE and FFNROOF_ISA allows it), so that L1 and L2 bandwidth on an SVE CPU are measured at its
 * vector width (256-bit loads on Neoverse V1 / Graviton3, where NEON moves 128 bits) rather than
 * at the NEON width the portable kernels compile to. Arrays are 64-byte aligned and n is a
 * multiple of FFN__BW_ALIGN_ELEMS (256 floats); each loop step covers 8 (read) or 4 vectors
 * under WHILELT predicates, so any vector length up to 2048 bits divides the work exactly.
 *  read:     8 independent sums (FADD latency x 2-3 load pipes), 4 B/element;
 *  copy:     b = a (LD1W, ST1W), 8 B/element;   copy_nt:  the same with STNT1W;
 *  triad:    a = b + s*c (one FMLA), 12 B/element; triad_nt: the same with STNT1W.
 * Run under qemu in CI; not timed on Arm hardware. */
#include <arm_sve.h>

#include "../internal.h"

static double read_sve(const float *a, size_t n)
{
    const uint64_t vl = svcntw();
    svfloat32_t s0 = svdup_n_f32(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (uint64_t i = 0; i < n; i += 8 * vl) {
#define RD(j, s)                                                                                   \
    {                                                                                              \
        const svbool_t p = svwhilelt_b32_u64(i + (j)*vl, n);                                       \
        s = svadd_f32_m(p, s, svld1_f32(p, a + i + (j)*vl));                                       \
    }
        RD(0, s0) RD(1, s1) RD(2, s2) RD(3, s3) RD(4, s4) RD(5, s5) RD(6, s6) RD(7, s7)
#undef RD
    }
    const svbool_t all = svptrue_b32();
    const svfloat32_t s =
        svadd_f32_x(all, svadd_f32_x(all, svadd_f32_x(all, s0, s1), svadd_f32_x(all, s2, s3)),
                    svadd_f32_x(all, svadd_f32_x(all, s4, s5), svadd_f32_x(all, s6, s7)));
    return (double)svaddv_f32(all, s);
}

#define COPY_BODY(store)                                                                           \
    const uint64_t vl = svcntw();                                                                  \
    for (uint64_t i = 0; i < n; i += 4 * vl)                                                       \
        for (uint64_t j = 0; j < 4; j++) {                                                         \
            const svbool_t p = svwhilelt_b32_u64(i + j * vl, n);                                   \
            store(p, b + i + j * vl, svld1_f32(p, a + i + j * vl));                                \
        }

static double copy_sve(float *restrict b, const float *restrict a, size_t n)
{
    COPY_BODY(svst1_f32)
    return b[n - 1];
}

static double copy_nt_sve(float *restrict b, const float *restrict a, size_t n)
{
    COPY_BODY(svstnt1_f32)
    return a[n - 1];
}
#undef COPY_BODY

#define TRIAD_BODY(store)                                                                          \
    const uint64_t vl = svcntw();                                                                  \
    const svfloat32_t vs = svdup_n_f32(s);                                                         \
    for (uint64_t i = 0; i < n; i += 4 * vl)                                                       \
        for (uint64_t j = 0; j < 4; j++) {                                                         \
            const svbool_t p = svwhilelt_b32_u64(i + j * vl, n);                                   \
            const uint64_t o = i + j * vl;                                                         \
            store(p, a + o, svmla_f32_x(p, svld1_f32(p, b + o), vs, svld1_f32(p, c + o)));         \
        }

static double triad_sve(float *restrict a, const float *restrict b, const float *restrict c,
                        float s, size_t n)
{
    TRIAD_BODY(svst1_f32)
    return a[n - 1];
}

static double triad_nt_sve(float *restrict a, const float *restrict b, const float *restrict c,
                           float s, size_t n)
{
    TRIAD_BODY(svstnt1_f32)
    return b[n - 1];
}
#undef TRIAD_BODY

void ffn__bw_sve_kernels(ffn__bw_kernels *k)
{
    k->read = read_sve;
    k->copy = copy_sve;
    k->triad = triad_sve;
    k->copy_nt = copy_nt_sve;
    k->triad_nt = triad_nt_sve;
}
