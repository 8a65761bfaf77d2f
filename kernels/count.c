/* The work of one dense FFN forward call: FLOPs and compulsory bytes, counted exactly as the
 * simulator's fused-FFN op costs count them (docs/model.md cites these formulas; sim/ uses the
 * same constants). Kept in one small file so both sides point at one definition.
 *
 *   g = 2 for the gated activations (swiglu, geglu, reglu), else 1
 *   FLOPs = 2 T d f g            gate (and up) projection
 *         + T f act_flops        activation (per element of h, below)
 *         + 2 T f d              down projection
 *         + (bias ? T f g + T d : 0)
 *   act_flops: relu 1, gelu 8, gelu_tanh 8, silu 4, swiglu 4+1, geglu 8+1, reglu 1+1
 *              (the +1 of the gated forms is the gate-times-up multiply)
 *   bytes = weight_elems wbytes + (bias ? (g f + d) wbytes : 0)
 *         + 4 T d (x read) + 2 * 4 T f (h written once, read once) + 4 T d (y written),
 *   weight_elems = g d f + f d; wbytes 4 for fp32, 2 for bf16 and fp16. */
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

double ffn_kernel_bytes(const ffn_kernel *k, const ffn_kshape *s, size_t T)
{
    if (!s || (unsigned)s->act >= FFN_ACT_COUNT) return 0.0;
    const double t = (double)T, d = (double)s->d, f = (double)s->f;
    const double g = ffn__gated(s->act) ? 2.0 : 1.0;
    const double wbytes = (!k || k->wdtype == FFN_DT_FP32) ? 4.0 : 2.0;
    double bytes = (g * d * f + f * d) * wbytes;
    if (s->bias) bytes += (g * f + d) * wbytes;
    return bytes + 4.0 * t * d + 2.0 * 4.0 * t * f + 4.0 * t * d;
}
