/* Writers for predictions (include/ffnroof/predict_write.h): the predict JSON, the CSV rows of
 * predict and sweep, and the JSON of one run other writers embed. The terminal table, which
 * asks the simulator how the weights are multiplied, is a view (report/predict_table.c). */
#include "ffnroof/predict_write.h"
#include "ffnroof/plan.h"
#include "ffnroof/error.h"
#include "ffnroof/json.h"

#include <math.h>

static const char *op_kind_name(ffn_op_kind k)
{
    switch (k) {
    case FFN_OP_GEMM:
        return "gemm";
    case FFN_OP_ELEMWISE:
        return "elementwise";
    case FFN_OP_MEMORY:
        return "memory";
    default:
        return "comm";
    }
}

static void json_op(ffn_json *j, const ffn_op *op)
{
    ffn_json_obj_begin(j, NULL);
    ffn_json_str(j, "name", op->name);
    ffn_json_str(j, "kind", op_kind_name(op->kind));
    if (op->kind == FFN_OP_GEMM) {
        ffn_json_u64(j, "m", op->m);
        ffn_json_u64(j, "n", op->n);
        ffn_json_u64(j, "k", op->k);
        ffn_json_u64(j, "instances", op->instances);
    }
    if (op->kind != FFN_OP_COMM)
        ffn_json_str(j, "compute_dtype", ffn_dtype_name(op->compute_dtype));
    ffn_json_num(j, "flops", op->flops);
    /* quantisation work on the fp32 vector units, not in flops (docs/model.md) */
    ffn_json_num(j, "vec_ops", op->vec_ops);
    ffn_json_num(j, "bytes", op->bytes);
    ffn_json_num(j, "weight_bytes", op->weight_bytes);
    ffn_json_num(j, "intensity", op->bytes > 0 ? op->flops / op->bytes : 0);
    ffn_json_str(j, "bound", ffn_bound_name(op->bound));
    ffn_json_num(j, "roofline_s", op->roofline_s);
    ffn_json_num(j, "predicted_s", op->predicted_s);
    if (op->kind != FFN_OP_COMM) {
        /* on-chip memory (docs/model.md): where the weights came from, the bytes memory
         * served, the spill of a fused intermediate */
        ffn_json_u64(j, "weights_level", (uint64_t)(op->weights_level > 0 ? op->weights_level : 0));
        ffn_json_num(j, "memory_bytes", op->served_bytes[FFN_SRC_MEMORY]);
        ffn_json_num(j, "spill_bytes", op->spill_bytes);
    }
    ffn_json_obj_end(j);
}

static void json_layer(ffn_json *j, const char *key, const ffn_layer_cost *c, uint64_t layers)
{
    ffn_json_obj_begin(j, key);
    ffn_json_u64(j, "layers", layers);
    ffn_json_num(j, "flops", c->flops);
    ffn_json_num(j, "vec_ops", c->vec_ops);
    ffn_json_num(j, "bytes", c->bytes);
    ffn_json_num(j, "weight_bytes", c->weight_bytes);
    ffn_json_num(j, "roofline_s", c->roofline_s);
    ffn_json_num(j, "predicted_s", c->predicted_s);
    ffn_json_num(j, "comm_s", c->comm_s);
    ffn_json_arr_begin(j, "ops");
    for (int i = 0; i < c->n_ops; i++)
        json_op(j, &c->ops[i]);
    ffn_json_arr_end(j);
    ffn_json_obj_end(j);
}

void ffn_json_step_shape(ffn_json *j, const ffn_result *r)
{
    ffn_json_u64(j, "batch", r->run.batch);
    if (r->run.phase == FFN_PHASE_PREFILL)
        ffn_json_u64(j, "seq", r->run.seq);
    else
        ffn_json_null(j, "seq");
    ffn_json_u64(j, "tokens", r->tokens);
}

void ffn_json_moe_times(ffn_json *j, const ffn_moe_detail *m)
{
    ffn_json_num(j, "router_s", m->router_s);
    ffn_json_num(j, "dispatch_s", m->dispatch_s);
    ffn_json_num(j, "expert_s", m->expert_s);
    ffn_json_num(j, "shared_s", m->shared_s);
    ffn_json_num(j, "combine_s", m->combine_s);
    ffn_json_num(j, "alltoall_s", m->alltoall_s);
}

void ffn_json_run(ffn_json *j, const char *key, const ffn_result *r)
{
    ffn_json_obj_begin(j, key);
    ffn_json_str(j, "phase", ffn_phase_name(r->run.phase));
    ffn_json_step_shape(j, r);
    ffn_json_u64(j, "steps", r->steps);
    if (r->run.chunk) ffn_json_u64(j, "chunk", r->run.chunk);
    ffn_json_str(j, "wdtype", ffn_dtype_name(r->run.wdtype));
    ffn_json_str(j, "adtype", ffn_dtype_name(r->run.adtype));
    ffn_json_str(j, "compute_dtype", ffn_dtype_name(r->compute_dtype));
    ffn_json_u64(j, "tp", r->run.tp);
    ffn_json_u64(j, "ep", r->run.ep);
    ffn_json_bool(j, "fused", r->run.fused);
    ffn_json_str(j, "weights", ffn_weights_name(r->run.weights));
    ffn_json_bool(j, "onchip", r->run.onchip);
    /* 1-based into the spec's onchip list, 0 = memory; the working set held against it */
    ffn_json_u64(j, "weights_level", (uint64_t)(r->weights_level > 0 ? r->weights_level : 0));
    ffn_json_num(j, "weights_working_set_bytes", r->weights_working_set_bytes);
    /* the part of the working set that level holds (1: all; 0: no level) */
    ffn_json_num(j, "weights_resident_fraction", r->weights_level > 0 ? r->weights_frac : 0.0);
    ffn_json_bool(j, "weights_level_no_bandwidth", r->weights_level_no_bw);

    ffn_json_obj_begin(j, "ffn");
    ffn_json_num(j, "flops", r->flops);
    ffn_json_num(j, "vec_ops", r->vec_ops);
    ffn_json_num(j, "bytes", r->bytes);
    ffn_json_num(j, "weight_bytes", r->weight_bytes);
    ffn_json_num(j, "intensity", r->intensity);
    ffn_json_str(j, "bound", ffn_bound_name(r->bound));
    ffn_json_num(j, "roofline_s", r->roofline_s);
    ffn_json_num(j, "predicted_s", r->predicted_s);
    /* the range of predicted_s: the device's p10-p90 of measured/predicted (docs/model.md) */
    ffn_json_num(j, "predicted_p10_s", r->predicted_p10_s);
    ffn_json_num(j, "predicted_p90_s", r->predicted_p90_s);
    ffn_json_bool(j, "range_default", r->unc_default);
    ffn_json_num(j, "comm_s", r->comm_s);
    ffn_json_num(j, "ridge_tokens", r->ridge_tokens); /* null when never compute-bound */
    /* ops of one layer: the dense layer's, else the MoE layer's */
    const ffn_layer_cost *one = r->dense_layers ? &r->dense : &r->moe;
    ffn_json_arr_begin(j, "ops");
    for (int i = 0; i < one->n_ops; i++)
        json_op(j, &one->ops[i]);
    ffn_json_arr_end(j);
    ffn_json_obj_begin(j, "layers");
    if (r->dense_layers) json_layer(j, "dense", &r->dense, r->dense_layers);
    if (r->moe_layers) json_layer(j, "moe", &r->moe, r->moe_layers);
    ffn_json_obj_end(j);
    ffn_json_obj_end(j);

    if (r->moe_layers) {
        const ffn_moe_detail *d = &r->moe_detail;
        ffn_json_obj_begin(j, "moe");
        ffn_json_u64(j, "layers", r->moe_layers);
        ffn_json_num(j, "experts_touched", d->stats.experts_touched);
        ffn_json_num(j, "experts_touched_device", d->stats.experts_touched_device);
        ffn_json_num(j, "experts_per_device", d->experts_per_device);
        ffn_json_num(j, "expert_weight_bytes_device", d->expert_weight_bytes_device);
        ffn_json_num(j, "imbalance", d->stats.imbalance);
        ffn_json_num(j, "device_imbalance", d->stats.device_imbalance);
        ffn_json_num(j, "dropped_fraction", d->stats.dropped_fraction);
        ffn_json_str(j, "routing_stats", d->stats.monte_carlo ? "monte-carlo" : "closed-form");
        ffn_json_moe_times(j, d);
        ffn_json_num(j, "alltoall_bytes", d->alltoall_bytes);
        ffn_json_num(j, "share_of_ffn", d->share_of_ffn);
        if (d->fused[0]) {
            ffn_json_obj_begin(j, "fused_kernels");
            ffn_json_str(j, "engine", ffn_engine_name(d->fused_engine));
            ffn_json_str(j, "kernels", d->fused);
            ffn_json_str(j, "weights", ffn_dtype_name(d->fused_dtype));
            ffn_json_u64(j, "block_m", d->fused_block_m);
            ffn_json_num(j, "padded_rows", d->fused_padded_rows);
            ffn_json_num(j, "routing_alpha", d->fused_alpha);
            ffn_json_num(j, "layer_s", d->fused_s);
            ffn_json_num(j, "range_p10", d->fused_p10);
            ffn_json_num(j, "range_p90", d->fused_p90);
            ffn_json_obj_end(j);
        } else {
            ffn_json_null(j, "fused_kernels");
        }
        ffn_json_obj_end(j);
    }

    const ffn_act_mem *m = &r->mem;
    ffn_json_obj_begin(j, "memory");
    ffn_json_num(j, "activation_peak_bytes", m->infer_peak_bytes);
    ffn_json_u64(j, "activation_peak_tokens", m->infer_tokens);
    ffn_json_obj_begin(j, "activation_items");
    ffn_json_num(j, "input_bytes", m->infer_input_bytes);
    ffn_json_num(j, "intermediate_bytes", m->infer_intermediate_bytes);
    ffn_json_num(j, "output_bytes", m->infer_output_bytes);
    ffn_json_obj_end(j);
    ffn_json_num(j, "training_saved_bytes", m->train_model_bytes);
    ffn_json_obj_begin(j, "training");
    ffn_json_num(j, "input_bytes", m->train_input_bytes);
    ffn_json_num(j, "preact_bytes", m->train_preact_bytes);
    ffn_json_num(j, "postact_bytes", m->train_postact_bytes);
    ffn_json_num(j, "dropout_mask_bytes", m->train_mask_bytes);
    ffn_json_num(j, "layer_bytes", m->train_layer_bytes);
    ffn_json_num(j, "layer_act_recompute_bytes", m->train_layer_actrecomp_bytes);
    ffn_json_num(j, "layer_full_recompute_bytes", m->train_layer_fullrecomp_bytes);
    ffn_json_num(j, "model_bytes", m->train_model_bytes);
    ffn_json_num(j, "model_act_recompute_bytes", m->train_model_actrecomp_bytes);
    ffn_json_num(j, "model_full_recompute_bytes", m->train_model_fullrecomp_bytes);
    ffn_json_obj_end(j);
    ffn_json_obj_end(j);
    ffn_json_obj_end(j);
}

int ffn_write_predict_json(FILE *fp, const ffn_predict_report *r)
{
    ffn_json j;
    ffn_json_doc_begin(&j, fp, FFN_PREDICT_SCHEMA);
    ffn_json_obj_begin(&j, "model");
    ffn_json_str(&j, "name", r->model->name);
    ffn_json_str(&j, "family", r->model->family);
    ffn_json_u64(&j, "layers", r->model->layers);
    ffn_json_u64(&j, "hidden", r->model->hidden);
    ffn_json_u64(&j, "intermediate", r->model->intermediate);
    ffn_json_str(&j, "activation", ffn_act_name(r->model->act));
    if (r->model->moe.n_experts) {
        ffn_json_u64(&j, "experts", r->model->moe.n_experts);
        ffn_json_u64(&j, "top_k", r->model->moe.top_k);
        ffn_json_u64(&j, "expert_intermediate", r->model->moe.expert_intermediate);
        ffn_json_u64(&j, "shared_experts", r->model->moe.n_shared);
        ffn_json_u64(&j, "moe_layers", ffn_model_moe_layers(r->model));
    }
    ffn_json_obj_begin(&j, "params");
    const ffn_params *p = r->params;
    ffn_json_u64(&j, "total", p->total);
    ffn_json_u64(&j, "active", p->active);
    ffn_json_u64(&j, "ffn", p->ffn);
    ffn_json_u64(&j, "ffn_active", p->ffn_active);
    ffn_json_u64(&j, "attention", p->attention);
    ffn_json_u64(&j, "attention_replicated", p->attention_replicated);
    ffn_json_u64(&j, "embedding", p->embedding);
    ffn_json_u64(&j, "router", p->router);
    ffn_json_u64(&j, "norm", p->norm);
    ffn_json_u64(&j, "other", p->other);
    ffn_json_num(&j, "ffn_share", p->ffn_share);
    ffn_json_obj_end(&j);
    ffn_json_obj_end(&j);

    const ffn_hw *hw = r->hw;
    ffn_json_obj_begin(&j, "hw");
    ffn_json_str(&j, "name", hw->name);
    ffn_json_str(&j, "vendor", hw->vendor);
    ffn_json_str(&j, "kind", ffn_hw_kind_name(hw->kind));
    /* peak of the first run's compute dtype, plus every dtype */
    ffn_json_num(&j, "peak_flops", r->n_runs ? r->runs[0].peak_flops : hw->peak_flops[FFN_DT_BF16]);
    ffn_json_obj_begin(&j, "peak_flops_by_dtype");
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (hw->peak_flops[d] > 0)
            ffn_json_num(&j, ffn_dtype_name((ffn_dtype)d), hw->peak_flops[d]);
    ffn_json_obj_end(&j);
    ffn_json_num(&j, "mem_bandwidth_bps", hw->mem_bandwidth_bps);
    ffn_json_num(&j, "mem_capacity_bytes", hw->mem_capacity_bytes);
    ffn_json_obj_end(&j);

    ffn_json_arr_begin(&j, "runs");
    for (size_t i = 0; i < r->n_runs; i++)
        ffn_json_run(&j, NULL, &r->runs[i]);
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}

int ffn_write_predict_csv_header(FILE *fp)
{
    fputs("model,hw,phase,batch,seq,tokens,wdtype,adtype,tp,ep,fused,flops,bytes,weight_bytes,"
          "intensity,bound,roofline_s,predicted_s,comm_s,ridge_tokens,activation_peak_bytes,"
          "training_saved_bytes,experts_touched,imbalance,weights,weights_from,vec_ops,"
          "predicted_p10_s,predicted_p90_s,range_default,fits\n",
          fp);
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_write_predict_csv_row(FILE *fp, const ffn_model *m, const ffn_hw *hw, const ffn_result *r)
{
    char seq[32] = "";
    if (r->run.phase == FFN_PHASE_PREFILL)
        snprintf(seq, sizeof seq, "%llu", (unsigned long long)r->run.seq);
    char ridge[32] = "";
    if (isfinite(r->ridge_tokens)) snprintf(ridge, sizeof ridge, "%.0f", r->ridge_tokens);
    char moe[64] = ",";
    if (r->moe_layers)
        snprintf(moe, sizeof moe, "%.6g,%.6g", r->moe_detail.stats.experts_touched,
                 r->moe_detail.stats.imbalance);
    /* whether one device of the run's layout holds its share of the weights (the FFN's and
     * the rest of the model's, scales included); empty when the capacity is unknown */
    const char *fits = "";
    if (hw->mem_capacity_bytes > 0) {
        ffn_params p;
        double ffn_b, other_b;
        if (!ffn_model_params(m, &p)) {
            ffn_weight_footprint(m, &p, r->run.wdtype, r->run.group_size, r->run.zero_point,
                                 r->run.tp ? r->run.tp : 1, r->run.ep ? r->run.ep : 1, &ffn_b,
                                 &other_b);
            fits = ffn_b + other_b <= hw->mem_capacity_bytes ? "1" : "0";
        }
    }
    /* where the weights were read from: the on-chip level's name, or memory */
    const char *from =
        ffn_source_name(hw, r->weights_level > 0 ? r->weights_level - 1 : FFN_SRC_MEMORY);
    fprintf(fp,
            "%s,%s,%s,%llu,%s,%llu,%s,%s,%llu,%llu,%d,%.6e,%.6e,%.6e,%.6g,%s,%.6e,%.6e,%.6e,%s,%."
            "6e,%.6e,%s,%s,%s,%.6e,%.6e,%.6e,%d,%s\n",
            m->name, hw->name, ffn_phase_name(r->run.phase), (unsigned long long)r->run.batch, seq,
            (unsigned long long)r->tokens, ffn_dtype_name(r->run.wdtype),
            ffn_dtype_name(r->run.adtype), (unsigned long long)r->run.tp,
            (unsigned long long)r->run.ep, r->run.fused ? 1 : 0, r->flops, r->bytes,
            r->weight_bytes, r->intensity, ffn_bound_name(r->bound), r->roofline_s, r->predicted_s,
            r->comm_s, ridge, r->mem.infer_peak_bytes, r->mem.train_model_bytes, moe,
            ffn_weights_name(r->run.weights), from, r->vec_ops, r->predicted_p10_s,
            r->predicted_p90_s, r->unc_default ? 1 : 0, fits);
    return ferror(fp) ? FFN_EIO : 0;
}

const char *ffn_range_text(char *buf, size_t n, double t, double lo, double hi, bool dflt,
                           bool brief)
{
    /* both ends in the unit the time itself prints in: s, ms, us or ns */
    double a = t > 0 ? t : hi;
    double scale = a >= 1 ? 1 : a >= 1e-3 ? 1e3 : a >= 1e-6 ? 1e6 : 1e9;
    const char *u = scale == 1 ? "s" : scale == 1e3 ? "ms" : scale == 1e6 ? "us" : "ns";
    if (brief)
        snprintf(buf, n, "%.3g-%.3g %s%s", lo * scale, hi * scale, u, dflt ? "*" : "");
    else
        snprintf(buf, n, "(%.3g-%.3g %s, p10-p90%s)", lo * scale, hi * scale, u,
                 dflt ? ", default" : "");
    return buf;
}
