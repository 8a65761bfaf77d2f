/* The dense FFN layer as ops: the gate/up and down projections (fused or unfused), the
 * activation, the quantisation of activations on the way into a GEMM, tensor parallelism, and
 * the layer's sum. The MoE layer (sim/moe.c) builds its experts from these; the whole-model
 * prediction (sim/ffn.c) sums the layers. Equations: docs/model.md. */
#include "ffnroof/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void add_op(ffn_layer_cost *c, const ffn_op *op)
{
    if (c->n_ops >= FFN_MAX_OPS) return;
    c->ops[c->n_ops++] = *op;
}

void ffn_layer_sum(ffn_layer_cost *c, const ffn_hw *hw)
{
    c->flops = c->vec_ops = c->bytes = c->weight_bytes = c->roofline_s = c->predicted_s = 0;
    c->comm_s = c->compute_s = c->memory_s = 0;
    for (int i = 0; i < c->n_ops; i++) {
        const ffn_op *op = &c->ops[i];
        c->predicted_s += op->predicted_s;
        c->roofline_s += op->roofline_s;
        if (op->kind == FFN_OP_COMM) {
            c->comm_s += op->predicted_s;
            continue;
        }
        c->flops += op->flops;
        c->vec_ops += op->vec_ops;
        c->bytes += op->bytes;
        c->weight_bytes += op->weight_bytes;
        double p = hw->peak_flops[op->compute_dtype] > 0 ? hw->peak_flops[op->compute_dtype]
                                                         : hw->peak_flops[FFN_DT_FP32];
        c->compute_s += op->flops / p;
        if (op->vec_ops > 0 && hw->peak_flops[FFN_DT_FP32] > 0)
            c->compute_s += op->vec_ops / hw->peak_flops[FFN_DT_FP32];
        /* the slowest source of the op's bytes (memory unless on-chip memory is modelled) */
        c->memory_s += op->weights_level || op->traffic_bound ? op->memory_s
                                                              : op->bytes / hw->mem_bandwidth_bps;
    }
}

void ffn_layer_place_weights(ffn_layer_cost *c, const ffn_hw *hw, int level, double frac)
{
    for (int i = 0; i < c->n_ops; i++) {
        ffn_op *op = &c->ops[i];
        if (op->kind != FFN_OP_GEMM) continue;
        op->weights_level = level;
        op->weights_frac = frac;
        ffn_op_recost(op, hw);
    }
    ffn_layer_sum(c, hw);
}

/* prefix + suffix into buf (truncated to fit); cheaper than snprintf in the hot path. */
static const char *op_name(char *buf, size_t n, const char *prefix, const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(suffix);
    if (a > n - 1) a = n - 1;
    if (b > n - 1 - a) b = n - 1 - a;
    memcpy(buf, prefix, a);
    memcpy(buf + a, suffix, b);
    buf[a + b] = '\0';
    return buf;
}

/* The counts of one projection GEMM [M][K] x [K][N] (`instances` of it) in the run's formats
 * (docs/model.md, "Quantized weights and activations"): the weights with their scales; the input
 * read and out_cols of the N output columns written at ab bytes per activation; with int8
 * activations the GEMM reads int8 rows and their per-token scales, and, when quantize_in, also
 * runs the quantisation pass over its float input (read it, write the int8 copy and the scales)
 * - false when another GEMM of the layer already quantised the same input. The vector ops are
 * returned apart as the part that scales with the weights (*vw, dequantisation) and the part
 * that scales with the tokens (*vt), for the MoE grid's scaling. */
static void proj_counts(ffn_op *op, const ffn_run *run, const char *name, uint64_t M, uint64_t N,
                        uint64_t K, uint64_t out_cols, uint64_t instances, double ab, ffn_dtype cdt,
                        double epilogue_flops_per_out, bool quantize_in, double *vw, double *vt)
{
    /* the quantised activation formats run on their units only where the device has them
     * (fp8 activations on an A100 stay 16-bit: cdt is wider) */
    const bool qa =
        ffn_dtype_quant_act(run->adtype) && ffn_dtype_unit(cdt) == ffn_dtype_unit(run->adtype);
    const bool ia = run->adtype == FFN_DT_INT8;
    ffn_op_gemm_counts(op, name, M, N, K, instances, 0.0, ab, cdt, epilogue_flops_per_out);
    const double I = (double)op->instances, m = (double)M, k = (double)K, o = (double)out_cols;
    op->weight_bytes =
        I * ffn_weight_matrix_bytes(run->wdtype, run->group_size, run->zero_point, K, N);
    if (!qa) {
        op->bytes = op->weight_bytes + I * (m * k + m * o) * ab;
    } else {
        /* int8: one fp32 scale per token; the float formats' scales are in their bytes */
        const double qb = ffn_dtype_bytes(run->adtype, 0), sb = ia ? FFN_QACT_SCALE_BYTES : 0;
        double in = m * k * qb + sb * m;
        if (quantize_in) in += m * k * ab + m * k * qb + sb * m;
        op->bytes = op->weight_bytes + I * (in + m * o * ab);
    }
    double q = I * ffn_quant_gemm_vec_ops(run->wdtype, qa ? run->adtype : cdt, run->group_size,
                                          run->zero_point, M, K, N);
    /* float weights narrower than the dot products (fp8 on an A100, fp4 on an H100): one
     * dequantisation op a weight per call, as the integer formats' W4A16 */
    const bool fdq = !ffn_dtype_quant_act(cdt) && ffn_dtype_bits(run->wdtype) < 16 &&
                     run->wdtype != FFN_DT_INT8 && run->wdtype != FFN_DT_INT4 &&
                     ffn_dtype_bits(cdt) > ffn_dtype_bits(run->wdtype);
    if (fdq) q += I * k * (double)N;
    const double pass = qa && quantize_in ? I * FFN_QACT_OPS_PER_ELEM * m * k : 0.0;
    *vw = qa ? 0.0 : q;
    *vt = qa ? q + pass : 0.0;
    op->vec_ops = q + pass;
    op->dequant_weights = qa || !(q > 0) ? 0.0 : I * k * (double)N;
    op->quant_rows = qa && quantize_in ? I * m : 0.0;
    op->wdtype = run->wdtype;
}

int ffn_dense_ops_scaled(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                         bool bias, uint64_t T, uint64_t instances, const char *prefix,
                         double tok_scale, double w_scale, ffn_layer_cost *out)
{
    const bool qweights = ffn_dtype_bits(run->wdtype) < 16;
    const double ab = ffn_run_act_bytes(run);
    /* biases are not quantised: activation-sized beside int8/int4 weights */
    const double wb = qweights ? ab : ffn_dtype_bytes(run->wdtype, run->group_size);
    const ffn_dtype cdt = ffn_compute_dtype(hw, run->wdtype, run->adtype);
    const bool gated = ffn_act_gated(act);
    const double g = gated ? 2.0 : 1.0;
    const uint64_t gf = gated ? 2 * f : f;
    const double M = (double)T, F = (double)f, D = (double)d, I = instances ? (double)instances : 1;
    const double act_fl = ffn_act_flops(act);
    char name[24];
    ffn_op ops[6];
    double vw[6] = {0}, vt[6] = {0};
    int n = 0;
#define OPNAME(s) op_name(name, sizeof name, prefix, (s))
#define PROJ(nm, N_, K_, OUT, EPI, QIN)                                                            \
    proj_counts(&ops[n], run, OPNAME(nm), T, (N_), (K_), (OUT), instances, ab, cdt, (EPI), (QIN),  \
                &vw[n], &vt[n])

    if (run->fused && run->act_separate) {
        /* gate+up as one GEMM [T,d] x [d, g*f] writing g*[T,f] (bias in its epilogue), the
         * activation and gate multiply as one elementwise kernel reading g*[T,f] and writing
         * h [T,f], then the down projection: three kernels. */
        ffn_op *op = &ops[n];
        PROJ(gated ? "gate_up" : "up", gf, d, gf, bias ? 1.0 : 0.0, true);
        n++;
        if (bias) {
            op->weight_bytes += I * g * F * wb;
            op->bytes += I * g * F * wb;
        }
        double e = I * M * F;
        ffn_op_elem_counts(&ops[n++], OPNAME("act"), FFN_OP_ELEMWISE, e, e * act_fl,
                           (g + 1.0) * e * ab);
    } else if (run->fused) {
        /* gate+up as one GEMM [T,d] x [d, g*f]; bias, activation and gate multiply run in the
         * epilogue, so only h [T,f] is written. */
        ffn_op *op = &ops[n];
        PROJ(gated ? "gate_up" : "up", gf, d, f, 0, true);
        n++;
        op->flops += I * M * F * (act_fl + (bias ? g : 0));
        if (run->onchip) {
            /* The g*[t,f] pre-activations stay on chip only for the token tile t the
             * innermost level holds; beyond it they are written out and read back. */
            uint64_t tfit = ffn_fused_token_tile(hw, g, f, ab);
            if (T > tfit) {
                op->spill_bytes = 2.0 * I * g * (double)(T - tfit) * F * ab;
                op->bytes += op->spill_bytes;
            }
        }
        if (bias) {
            op->weight_bytes += I * g * F * wb;
            op->bytes += I * g * F * wb;
        }
    }
    if (run->fused) {
        /* the down projection, its bias in the epilogue */
        ffn_op *op = &ops[n];
        PROJ("down", d, f, d, bias ? 1.0 : 0.0, true);
        n++;
        if (bias) {
            op->weight_bytes += I * D * wb;
            op->bytes += I * D * wb;
        }
    } else {
        /* Unfused: each projection is its own GEMM writing its output; the activation (and
         * gate multiply) is a separate pass reading g*[T,f] and writing h; biases are separate
         * passes. With int8 activations the first projection quantises x for both. */
        if (gated) {
            PROJ("gate", f, d, f, 0, true);
            n++;
        }
        PROJ("up", f, d, f, 0, !gated);
        n++;
        if (bias) {
            double e = I * g * M * F;
            ffn_op_elem_counts(&ops[n], OPNAME("bias_up"), FFN_OP_ELEMWISE, e, e,
                               2.0 * e * ab + I * g * F * wb);
            ops[n++].weight_bytes = I * g * F * wb;
        }
        double e = I * M * F;
        ffn_op_elem_counts(&ops[n++], OPNAME("act"), FFN_OP_ELEMWISE, e, e * act_fl,
                           (g + 1.0) * e * ab);
        PROJ("down", d, f, d, 0, true);
        n++;
        if (bias) {
            double o = I * M * D;
            ffn_op_elem_counts(&ops[n], OPNAME("bias_down"), FFN_OP_ELEMWISE, o, o,
                               2.0 * o * ab + I * D * wb);
            ops[n++].weight_bytes = I * D * wb;
        }
    }
#undef PROJ
#undef OPNAME
    /* Scale from the costed grid to expected counts (MoE: fractional tokens and experts),
     * then cost each op once. */
    for (int i = 0; i < n; i++) {
        ffn_op *op = &ops[i];
        if (tok_scale != 1.0 || w_scale != 1.0) {
            double act_bytes = op->bytes - op->weight_bytes;
            op->flops *= tok_scale;
            op->vec_ops = vw[i] * w_scale + vt[i] * tok_scale;
            op->dequant_weights *= w_scale;
            op->weight_bytes *= w_scale;
            op->bytes = op->weight_bytes + act_bytes * tok_scale;
            op->spill_bytes *= tok_scale;
        }
        if (op->kind == FFN_OP_GEMM) {
            op->weights_level = run->weights_level;
            op->weights_frac = run->weights_frac;
            op->traffic_bound = run->onchip;
        }
        ffn_op_recost(op, hw);
        add_op(out, op);
    }
    return 0;
}

int ffn_dense_ops(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                  bool bias, uint64_t T, uint64_t instances, const char *prefix,
                  ffn_layer_cost *out)
{
    return ffn_dense_ops_scaled(hw, run, d, f, act, bias, T, instances, prefix, 1.0, 1.0, out);
}

int ffn_linear_ops(const ffn_hw *hw, const ffn_run *run, uint64_t m, uint64_t n, uint64_t k,
                   ffn_layer_cost *out)
{
    if (!hw || !run || !out || !m || !n || !k) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    double vw, vt;
    const ffn_dtype cdt = ffn_compute_dtype(hw, run->wdtype, run->adtype);
    proj_counts(&out->ops[0], run, "linear", m, n, k, n, 1, ffn_run_act_bytes(run), cdt, 0.0, true,
                &vw, &vt);
    ffn_op_recost(&out->ops[0], hw);
    out->n_ops = 1;
    ffn_layer_sum(out, hw);
    return 0;
}

int ffn_dense_layer(const ffn_hw *hw, const ffn_run *run, uint64_t d, uint64_t f, ffn_act act,
                    bool bias, uint64_t T, ffn_layer_cost *out)
{
    memset(out, 0, sizeof *out);
    uint64_t tp = run->tp ? run->tp : 1;
    int rc = ffn_dense_ops(hw, run, d, f / tp, act, bias, T, 1, "", out);
    if (rc) return rc;
    if (tp > 1) {
        /* Megatron-style TP: W_gate/W_up split by columns, W_down by rows; the partial outputs
         * [T, d] are summed with one all-reduce per layer (Shoeybi et al. 2019). */
        ffn_op op;
        ffn_op_allreduce(&op, &hw->scaleup, "allreduce",
                         (double)T * (double)d * ffn_run_act_bytes(run), tp);
        add_op(out, &op);
    }
    ffn_layer_sum(out, hw);
    return 0;
}
