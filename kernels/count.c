/* The work of one dense FFN forward call: FLOPs, compulsory bytes and (quantized kernels) the
 * vector work of the quantisation, counted exactly as the simulator's fused-FFN op costs count
 * them (docs/model.md cites these formulas; the weight bytes and the quantisation work come from
 * base's ffn_weight_matrix_bytes and ffn_quant_gemm_vec_ops, which sim/ffn.c calls too). Kept in
 * one small file so both sides point at one definition.
 *
 *   g = 2 for the gated activations (swiglu, geglu, reglu), else 1
 *   FLOPs = 2 T d f g            gate (and up) projection
 *         + T f act_flops        activation (per element of h, below)
 *         + 2 T f d              down projection
 *         + (bias ? T f g + T d : 0)
 *   act_flops: relu 1, gelu 8, gelu_tanh 8, silu 4, swiglu 4+1, geglu 8+1, reglu 1+1
 *              (the +1 of the gated forms is the gate-times-up multiply)
 *   The FLOPs do not depend on the weight format: dequantisation and rescaling are vector ops,
 *   counted apart (below).
 *
 *   bytes = Wb(d, g f) + Wb(f, d)          the weights [d][g f] (gate/up) and [f][d] (down)
 *         + (bias ? (g f + d) bb : 0)     bb = wbytes for float weights, 4 (fp32) for int8/int4
 *         + activations
 *   Wb(K, N) = ffn_weight_matrix_bytes: K N wbytes (fp32 4, bf16 and fp16 2); int8: K N + 4 N
 *              (one fp32 scale per output channel); int4: K N / 2 + (K / G) N 2 (one 16-bit
 *              scale per group of G along K) + (K / G) N / 2 with a zero point (4 bits per group)
 *   activations, fp32 or bf16 multiply (x, h and y are fp32 in memory):
 *         4 T d (x read) + 2 * 4 T f (h written once, read once) + 4 T d (y written)
 *   activations, int8 multiply (W8A8: x and h quantised per token on the fly):
 *         4 T d (x read by the quantisation pass) + (T d + 4 T) written and read again
 *         (int8 x and its per-token fp32 scales) + 4 T f (h written by the gate/up epilogue,
 *         fp32) + 4 T f (read by its quantisation pass) + (T f + 4 T) written and read again
 *         + 4 T d (y written)  =  10 T d + 10 T f + 16 T
 *
 *   vector ops (ffn_kernel_vec_ops; 0 for float weights and for T = 0):
 *     float multiply: weights dequantised once per call, (g d f + f d) (1 + zero point)
 *     int8 multiply:  3 (T d + T f) (max |x|, scale, round per element of x and of h)
 *                     + 2 T g f n_g(d) + 2 T d n_g(f) (the int32 -> fp32 rescale per output and
 *                     scale group: n_g = 1 for int8 weights, ceil(K / G) (1 + zero point) for
 *                     int4). */
#include "kern_internal.h"

static const double act_flops[FFN_ACT_COUNT] = {
    [FFN_ACT_RELU] = 1,   [FFN_ACT_GELU] = 8,  [FFN_ACT_GELU_TANH] = 8, [FFN_ACT_SILU] = 4,
    [FFN_ACT_SWIGLU] = 5, [FFN_ACT_GEGLU] = 9, [FFN_ACT_REGLU] = 2,
};

double ffn_kernel_flops(const ffn_kshape *s, size_t T)
{
    if (!s || (unsigned)s->act >= FFN_ACT_COUNT) return 0.0;
    const double t = (double)T, d = (double)s->d, f = (double)s->f;
    const double g = ffn__gated(s->act) ? 2.0 : 1.0;
    double flops = 2.0 * t * d * f * g + t * f * act_flops[s->act] + 2.0 * t * f * d;
    if (s->bias) flops += t * f * g + t * d;
    return flops;
}

static bool int_weights(ffn_dtype wdt)
{
    return wdt == FFN_DT_INT8 || wdt == FFN_DT_INT4;
}

double ffn_kernel_bytes(const ffn_kernel *k, const ffn_kshape *s, size_t T)
{
    if (!s || (unsigned)s->act >= FFN_ACT_COUNT) return 0.0;
    const double t = (double)T, d = (double)s->d, f = (double)s->f;
    const uint64_t g = ffn__gated(s->act) ? 2 : 1;
    const ffn_dtype wdt = k ? k->wdtype : FFN_DT_FP32;
    const bool qa = k && int_weights(wdt) && k->adtype == FFN_DT_INT8;
    double bytes = ffn_weight_matrix_bytes(wdt, s->group, s->zero_point, s->d, g * s->f) +
                   ffn_weight_matrix_bytes(wdt, s->group, s->zero_point, s->f, s->d);
    /* biases are not quantised: fp32 beside int8/int4 weights, the weight dtype otherwise */
    const double bb = int_weights(wdt) ? 4.0 : ffn_dtype_bits(wdt) / 8.0;
    if (s->bias) bytes += ((double)g * f + d) * bb;
    if (qa) {
        const double pass = FFN_QACT_SCALE_BYTES * t; /* one scale per token, each way */
        return bytes + 4.0 * t * d + 2.0 * (t * d + pass) + 4.0 * t * f + 4.0 * t * f +
               2.0 * (t * f + pass) + 4.0 * t * d;
    }
    return bytes + 4.0 * t * d + 2.0 * 4.0 * t * f + 4.0 * t * d;
}

double ffn_kernel_vec_ops(const ffn_kernel *k, const ffn_kshape *s, size_t T)
{
    if (!k || !s || (unsigned)s->act >= FFN_ACT_COUNT || !int_weights(k->wdtype) || T == 0)
        return 0.0;
    const uint64_t g = ffn__gated(s->act) ? 2 : 1;
    const ffn_dtype adt = k->adtype;
    double ops =
        ffn_quant_gemm_vec_ops(k->wdtype, adt, s->group, s->zero_point, T, s->d, g * s->f) +
        ffn_quant_gemm_vec_ops(k->wdtype, adt, s->group, s->zero_point, T, s->f, s->d);
    if (adt == FFN_DT_INT8)
        ops += FFN_QACT_OPS_PER_ELEM * (double)T * ((double)s->d + (double)s->f);
    return ops;
}
