/* The FFN layer and the whole-model prediction: per-op costs of a dense FFN layer (fused and
 * unfused), tensor parallelism, prefill/decode phases, the ridge point and activation memory.
 * MoE layers are costed in sim/moe.c. Equations: docs/model.md. */
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

/* Activation memory (docs/model.md, "Activation memory"). */
void ffn_activation_memory(const ffn_model *m, const ffn_run *run, uint64_t T, uint64_t layers,
                           ffn_act_mem *o)
{
    memset(o, 0, sizeof *o);
    const double ab = ffn_run_act_bytes(run);
    const uint64_t tp = run->tp ? run->tp : 1;
    const bool gated = ffn_act_gated(m->act);
    const double g = gated ? 2.0 : 1.0;
    const double D = (double)m->hidden;
    /* The widest FFN a token passes through: a dense layer's f, or k routed experts plus the
     * shared experts of an MoE layer (each token's expert intermediates coexist). */
    double F = 0;
    if (m->layers > ffn_model_moe_layers(m)) F = (double)m->intermediate;
    if (m->moe.n_experts && ffn_model_moe_layers(m)) {
        double fm = (double)m->moe.top_k * (double)m->moe.expert_intermediate +
                    (double)m->moe.n_shared * (double)m->moe.shared_intermediate;
        if (fm > F) F = fm;
    }
    F /= (double)tp;
    const double Tt = (double)T;
    o->infer_tokens = T;
    o->infer_input_bytes = Tt * D * ab;
    o->infer_output_bytes = Tt * D * ab;
    /* fused: only h is materialised; unfused: the g projection outputs and h coexist while
     * the activation pass runs (no in-place update). */
    o->infer_intermediate_bytes = Tt * F * ab * (run->fused ? 1.0 : g + 1.0);
    double during_act = o->infer_input_bytes + o->infer_intermediate_bytes;
    double during_down = o->infer_input_bytes + Tt * F * ab + o->infer_output_bytes;
    o->infer_peak_bytes = during_act > during_down ? during_act : during_down;

    /* Training, saved for backward (Korthikanti et al. 2022, Sec. 4.1, generalised to gated
     * FFNs): the first linear's input, the activation's input(s), the down projection's input,
     * and a 1-byte dropout mask per output element. With MoC (top-K channels of the gate kept),
     * the [T,f] tensors are stored as K values plus an f-bit channel mask per token. */
    double Ff = F;
    double sparse_bytes_per_tok = Ff * ab;
    if (run->moc_k > 0 && (double)run->moc_k < Ff)
        sparse_bytes_per_tok = (double)run->moc_k * ab + Ff / 8.0;
    o->train_input_bytes = Tt * D * ab;
    o->train_preact_bytes = Tt * (g * sparse_bytes_per_tok);
    o->train_postact_bytes = Tt * sparse_bytes_per_tok;
    o->train_mask_bytes = m->dropout > 0 ? Tt * D : 0;
    o->train_layer_bytes =
        o->train_input_bytes + o->train_preact_bytes + o->train_postact_bytes + o->train_mask_bytes;
    o->train_layer_actrecomp_bytes =
        o->train_input_bytes + o->train_preact_bytes + o->train_mask_bytes;
    o->train_layer_fullrecomp_bytes = o->train_input_bytes;
    o->train_model_bytes = o->train_layer_bytes * (double)layers;
    o->train_model_actrecomp_bytes = o->train_layer_actrecomp_bytes * (double)layers;
    o->train_model_fullrecomp_bytes = o->train_layer_fullrecomp_bytes * (double)layers;
}

/* Cost the dense and MoE layers for T tokens per step. */
static int cost_layers(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, uint64_t T,
                       ffn_result *r, ffn_diag *diag)
{
    r->moe_layers = ffn_model_moe_layers(m);
    r->dense_layers = m->layers - r->moe_layers;
    memset(&r->dense, 0, sizeof r->dense);
    memset(&r->moe, 0, sizeof r->moe);
    if (r->dense_layers) {
        /* Under expert parallelism the rest of the model is data-parallel over the EP group
         * (as in sim/moe.c): each device runs the dense layers on its T/ep tokens. */
        uint64_t ep = r->moe_layers && run->ep > 1 ? run->ep : 1;
        uint64_t Td = (T + ep - 1) / ep;
        int rc = ffn_dense_layer(hw, run, m->hidden, m->intermediate, m->act, m->mlp_bias, Td,
                                 &r->dense);
        if (rc) return rc;
    }
    if (r->moe_layers) {
        int rc = ffn_moe_layer(m, hw, run, T, &r->moe, &r->moe_detail, diag);
        if (rc) return rc;
    }
    return 0;
}

static double compute_minus_memory(const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                                   uint64_t T, ffn_result *scratch)
{
    if (cost_layers(m, hw, run, T, scratch, NULL)) return NAN;
    double c = (double)scratch->dense_layers * scratch->dense.compute_s +
               (double)scratch->moe_layers * scratch->moe.compute_s;
    double mm = (double)scratch->dense_layers * scratch->dense.memory_s +
                (double)scratch->moe_layers * scratch->moe.memory_s;
    return c - mm;
}

/* Smallest token count at which the FFN's ideal compute time reaches its memory time
 * (intensity = peak/bandwidth). Bisection, because MoE weight traffic is not linear in T. */
double ffn_ridge_tokens(const ffn_model *m, const ffn_hw *hw, const ffn_run *run)
{
    ffn_result *s = &(ffn_result){0};
    const uint64_t hi_limit = (uint64_t)1 << 34;
    if (!(compute_minus_memory(m, hw, run, hi_limit, s) >= 0)) return INFINITY;
    if (compute_minus_memory(m, hw, run, 1, s) >= 0) return 1;
    uint64_t lo = 1, hi = hi_limit;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (compute_minus_memory(m, hw, run, mid, s) >= 0)
            hi = mid;
        else
            lo = mid;
    }
    return (double)hi;
}

int ffn_predict(const ffn_model *m, const ffn_hw *hw, const ffn_run *run, ffn_result *out,
                ffn_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!m || !hw || !run) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "no model/hw/run");
    if (run->batch == 0) return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "batch must be >= 1");
    if (run->phase == FFN_PHASE_PREFILL && run->seq == 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "seq must be >= 1 for prefill");
    uint64_t tp = run->tp ? run->tp : 1;
    if (m->layers > ffn_model_moe_layers(m) && m->intermediate % tp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--tp %llu does not divide the intermediate size %llu",
                            (unsigned long long)tp, (unsigned long long)m->intermediate);
    if (hw->mem_bandwidth_bps <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "hw '%s' has no memory bandwidth",
                            hw->name);
    if (tp > 1 && hw->scaleup.bandwidth_bps <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "--tp %llu needs an interconnect, and hw '%s' has none",
                            (unsigned long long)tp, hw->name);
    out->run = *run;
    out->compute_dtype = ffn_compute_dtype(hw, run->wdtype, run->adtype);
    out->peak_flops = hw->peak_flops[out->compute_dtype];

    /* Steps: one for decode and unchunked prefill; for chunked prefill, full chunks of
     * `chunk` tokens per sequence plus a shorter last chunk when the prompt does not divide. */
    uint64_t T, full_steps = 1, rem = 0;
    if (run->phase == FFN_PHASE_DECODE) {
        T = run->batch;
    } else {
        uint64_t per_seq = run->seq;
        if (run->chunk && run->chunk < run->seq) {
            per_seq = run->chunk;
            full_steps = run->seq / run->chunk;
            rem = run->seq % run->chunk;
        }
        if (per_seq > UINT64_MAX / run->batch)
            return ffn_diag_set(diag, FFN_EOVERFLOW, NULL, 0, 0, "batch x seq overflows");
        T = run->batch * per_seq;
    }
    out->tokens = T;
    out->steps = full_steps + (rem ? 1 : 0);
    ffn_run rr = *run;
    if (rr.weights_level < 0 || rr.weights_level > hw->n_levels || run->weights != FFN_WEIGHTS_COLD)
        rr.weights_level = 0;
    int rc = cost_layers(m, hw, &rr, T, out, diag);
    if (rc) return rc;
    if (run->weights != FFN_WEIGHTS_COLD) {
        /* Residency (docs/model.md, "On-chip memory"): hot holds one layer's weights against
         * each level (a benchmark repeating one layer), auto all layers' weights of a step
         * (a model whose FFN fits on chip across steps; serving decode over many layers
         * does not, and stays cold). MoE layers count the experts the batch touches. A working
         * set larger than every level keeps the part the largest one holds there (what an
         * ideal replacement keeps of a cyclic sweep: capacity / working set). */
        double wd = out->dense_layers ? out->dense.weight_bytes : 0;
        double wm = out->moe_layers ? out->moe.weight_bytes : 0;
        double ws = run->weights == FFN_WEIGHTS_HOT
                        ? (wd > wm ? wd : wm)
                        : (double)out->dense_layers * wd + (double)out->moe_layers * wm;
        double frac;
        int lv = ffn_level_placing(hw, ws, &frac);
        out->weights_working_set_bytes = ws;
        out->weights_level = lv;
        out->weights_frac = frac;
        out->weights_level_no_bw = lv && !(hw->levels[lv - 1].bandwidth_bps > 0);
        if (lv) {
            rr.weights_level = lv;
            rr.weights_frac = frac;
            rc = cost_layers(m, hw, &rr, T, out, diag);
            if (rc) return rc;
        }
    }
    out->run.weights_level = rr.weights_level;

    const double S = (double)full_steps, Ld = (double)out->dense_layers,
                 Lm = (double)out->moe_layers;
    double cs = S * (Ld * out->dense.compute_s + Lm * out->moe.compute_s);
    double ms = S * (Ld * out->dense.memory_s + Lm * out->moe.memory_s);
    out->flops = S * (Ld * out->dense.flops + Lm * out->moe.flops);
    out->vec_ops = S * (Ld * out->dense.vec_ops + Lm * out->moe.vec_ops);
    out->bytes = S * (Ld * out->dense.bytes + Lm * out->moe.bytes);
    out->weight_bytes = S * (Ld * out->dense.weight_bytes + Lm * out->moe.weight_bytes);
    out->roofline_s = S * (Ld * out->dense.roofline_s + Lm * out->moe.roofline_s);
    out->predicted_s = S * (Ld * out->dense.predicted_s + Lm * out->moe.predicted_s);
    out->comm_s = S * (Ld * out->dense.comm_s + Lm * out->moe.comm_s);
    double moe_s = S * Lm * out->moe.predicted_s;
    if (rem) {
        /* the last, shorter chunk: batch x rem tokens */
        ffn_result *last = &(ffn_result){0};
        rc = cost_layers(m, hw, &rr, run->batch * rem, last, diag);
        if (rc) return rc;
        cs += Ld * last->dense.compute_s + Lm * last->moe.compute_s;
        ms += Ld * last->dense.memory_s + Lm * last->moe.memory_s;
        out->flops += Ld * last->dense.flops + Lm * last->moe.flops;
        out->vec_ops += Ld * last->dense.vec_ops + Lm * last->moe.vec_ops;
        out->bytes += Ld * last->dense.bytes + Lm * last->moe.bytes;
        out->weight_bytes += Ld * last->dense.weight_bytes + Lm * last->moe.weight_bytes;
        out->roofline_s += Ld * last->dense.roofline_s + Lm * last->moe.roofline_s;
        out->predicted_s += Ld * last->dense.predicted_s + Lm * last->moe.predicted_s;
        out->comm_s += Ld * last->dense.comm_s + Lm * last->moe.comm_s;
        moe_s += Lm * last->moe.predicted_s;
    }
    out->intensity = out->bytes > 0 ? out->flops / out->bytes : 0;
    double p10, p90;
    out->unc_default = ffn_hw_unc_range(hw, &p10, &p90);
    out->predicted_p10_s = out->predicted_s * p10;
    out->predicted_p90_s = out->predicted_s * p90;
    out->bound = cs >= ms ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    if (out->comm_s > (cs > ms ? cs : ms)) out->bound = FFN_BOUND_COMM;
    out->ridge_tokens = run->skip_ridge ? NAN : ffn_ridge_tokens(m, hw, &rr);
    if (out->moe_layers && out->predicted_s > 0)
        out->moe_detail.share_of_ffn = moe_s / out->predicted_s;
    /* activations per device: the EP group splits the tokens (data-parallel attention) */
    uint64_t ep = out->moe_layers && run->ep > 1 ? run->ep : 1;
    ffn_activation_memory(m, run, (T + ep - 1) / ep, m->layers, &out->mem);
    return 0;
}
