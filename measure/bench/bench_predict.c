/* The simulator's view of a bench case (include/ffnroof/bench.h): the same op costed on a spec,
 * a dense case as a fit point's layer, an MoE case as a one-layer MoE model whose expert GEMMs
 * run on the kernels' compute dtype (ffn_bench_cdtype, here with the rest of the costing, so
 * that the runner calls the costing and never the other way round). */
#include "ffnroof/bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/fit.h"
#include "ffnroof/model.h"

ffn_dtype ffn_bench_cdtype(ffn_dtype wdt)
{
    return wdt == FFN_DT_BF16 || wdt == FFN_DT_FP16 ? wdt : FFN_DT_FP32;
}

/* The layer cost of a case on hw, weights from memory. */
static int case_layer(const ffn_hw *hw, const ffn_bench_case *c, ffn_layer_cost *lcp)
{
    ffn_layer_cost lc;
    const ffn_dtype cdt = c->cdtype_set              ? c->cdtype
                          : c->adtype == FFN_DT_INT8 ? FFN_DT_INT8
                                                     : ffn_bench_cdtype(c->wdtype);
    if (c->kind == FFN_BENCH_DENSE) {
        ffn_fit_point p;
        memset(&p, 0, sizeof p);
        p.m = c->tokens;
        p.k = c->shape.d;
        p.f = c->shape.f;
        p.act = c->shape.act;
        p.wdtype = c->wdtype;
        p.adtype = c->adtype; /* fp32, bf16, or int8 (W8A8: the activation-quantization pass) */
        p.group = c->shape.group;
        p.zero_point = c->shape.zero_point;
        p.cdtype_set = true;
        p.cdtype = cdt;
        int rc = ffn_fit_point_layer(hw, &p, &lc);
        if (rc) return rc;
    } else {
        ffn_model mm;
        memset(&mm, 0, sizeof mm);
        snprintf(mm.name, sizeof mm.name, "bench-moe");
        mm.hidden = c->shape.d;
        mm.layers = 1;
        mm.intermediate = c->shape.f;
        mm.act = c->shape.act;
        mm.moe.n_experts = c->n_experts;
        mm.moe.top_k = c->top_k;
        mm.moe.expert_intermediate = c->shape.f;
        mm.moe.scoring = FFN_SCORE_SOFTMAX;
        mm.moe.layer_freq = 1;
        mm.layer_moe[0] = true;
        ffn_run run;
        ffn_run_default(&run);
        run.phase = c->phase;
        run.wdtype = c->wdtype;
        run.adtype = FFN_DT_FP32;
        run.fused = true;
        ffn_moe_detail det;
        int rc = ffn_moe_layer(&mm, hw, &run, c->tokens, &lc, &det, NULL);
        if (rc) return rc;
        /* the expert GEMMs run on the kernels' compute units; the router stays fp32 */
        for (int i = 0; i < lc.n_ops; i++)
            if (lc.ops[i].kind == FFN_OP_GEMM && !strncmp(lc.ops[i].name, "experts_", 8)) {
                lc.ops[i].compute_dtype = cdt;
                ffn_op_recost(&lc.ops[i], hw);
            }
        ffn_layer_sum(&lc, hw);
    }
    *lcp = lc;
    return 0;
}

int ffn_bench_predict_weights(const ffn_hw *hw, const ffn_bench_case *c, ffn_weights weights,
                              double *roofline_s, double *predicted_s, ffn_bound *bound,
                              double *served, int *weights_level, double *weights_frac)
{
    if (!hw || !c) return FFN_EINVAL;
    ffn_layer_cost lc;
    int rc = case_layer(hw, c, &lc);
    if (rc) return rc;
    /* A benchmark repeats one layer: warm, its weights stay in the innermost level that
     * holds them, or in part in the largest (the model's `hot`, ffn_level_placing). */
    double frac = 0;
    int lv = weights != FFN_WEIGHTS_COLD ? ffn_level_placing(hw, lc.weight_bytes, &frac) : 0;
    if (lv) ffn_layer_place_weights(&lc, hw, lv, frac);
    if (weights_level) *weights_level = lv;
    if (weights_frac) *weights_frac = frac;
    if (served) {
        memset(served, 0, (FFN_HW_MAX_LEVELS + 1) * sizeof *served);
        for (int i = 0; i < lc.n_ops; i++)
            for (int k = 0; k <= FFN_HW_MAX_LEVELS; k++)
                served[k] += lc.ops[i].served_bytes[k];
    }
    if (roofline_s) *roofline_s = lc.roofline_s;
    if (predicted_s) *predicted_s = lc.predicted_s;
    if (bound) *bound = lc.compute_s >= lc.memory_s ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    return 0;
}

int ffn_bench_predict(const ffn_hw *hw, const ffn_bench_case *c, double *roofline_s,
                      double *predicted_s, ffn_bound *bound, double *flops, double *bytes)
{
    if (!hw || !c) return FFN_EINVAL;
    ffn_layer_cost lc;
    int rc = case_layer(hw, c, &lc);
    if (rc) return rc;
    if (roofline_s) *roofline_s = lc.roofline_s;
    if (predicted_s) *predicted_s = lc.predicted_s;
    if (bound) *bound = lc.compute_s >= lc.memory_s ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    if (flops) *flops = lc.flops;
    if (bytes) *bytes = lc.bytes;
    return 0;
}

size_t ffn_bench_error_summary(const ffn_bench_result *r, size_t n, double *median_abs,
                               double *max_abs, size_t *worst)
{
    double e[256];
    size_t ne = 0, w = 0;
    for (size_t i = 0; i < n && ne < sizeof e / sizeof e[0]; i++) {
        if (!isfinite(r[i].prediction_error)) continue;
        if (!ne || fabs(r[i].prediction_error) > fabs(r[w].prediction_error)) w = i;
        e[ne++] = fabs(r[i].prediction_error);
    }
    ffn_stats st;
    *median_abs = *max_abs = 0;
    *worst = w;
    if (ne && ffn_stats_compute(e, ne, &st) == 0) {
        *median_abs = st.median;
        *max_abs = st.max;
    }
    return ne;
}
