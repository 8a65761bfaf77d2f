/* `ffnroof bench` results as JSON (schema ffnroof.bench/1) and CSV, every key and unit in
 * docs/formats-bench.md. Quantities that were not measured are null (JSON) or empty (CSV). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ffnroof/bench_io.h"
#include "ffnroof/json.h"

#include "profile_json.h"

static void spec(ffn_json *j, const ffn_bench_meta *m)
{
    if (!m->spec) {
        ffn_json_null(j, "spec");
        return;
    }
    const ffn_hw *h = m->spec;
    ffn_json_obj_begin(j, "spec");
    ffn_json_str(j, "file", m->spec_file ? m->spec_file : "");
    ffn_json_str(j, "name", h->name);
    ffn_json_str(j, "source", h->source);
    ffn_json_str(j, "kind", ffn_hw_kind_name(h->kind));
    ffn_json_obj_begin(j, "peak_flops");
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (h->peak_flops[d] > 0) ffn_json_num(j, ffn_dtype_name((ffn_dtype)d), h->peak_flops[d]);
    ffn_json_obj_end(j);
    ffn_json_num(j, "mem_bandwidth_bps", h->mem_bandwidth_bps);
    /* the on-chip levels, for the cache-aware roofline's roofs (bandwidth null: capacity only) */
    ffn_json_arr_begin(j, "onchip");
    for (int i = 0; i < h->n_levels && i < FFN_HW_MAX_LEVELS; i++) {
        ffn_json_obj_begin(j, NULL);
        ffn_json_str(j, "name", h->levels[i].name);
        ffn_json_num(j, "capacity_bytes", h->levels[i].capacity_bytes);
        if (h->levels[i].bandwidth_bps > 0)
            ffn_json_num(j, "bandwidth_bps", h->levels[i].bandwidth_bps);
        else
            ffn_json_null(j, "bandwidth_bps");
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
    ffn_json_u64(j, "compute_units", h->compute_units);
    if (h->clock_hz > 0)
        ffn_json_num(j, "clock_hz", h->clock_hz);
    else
        ffn_json_null(j, "clock_hz");
    ffn_json_obj_end(j);
}

static void counters_available(ffn_json *j, const ffn_bench_meta *m)
{
    const ffn_papi_probe *p = m->probe;
    ffn_json_obj_begin(j, "counters_available");
    ffn_json_bool(j, "papi_built_in", p && p->built_in);
    if (p && p->initialised)
        ffn_json_str(j, "papi_version", p->version);
    else
        ffn_json_null(j, "papi_version");
    ffn_json_str(j, "source", p ? p->counter_source : "none");
    bool hw = p && p->n_events_available > 0;
    ffn_json_bool(j, "hardware", hw);
    if (hw) {
        ffn_json_null(j, "hardware_reason");
    } else if (!p || !p->built_in) {
        ffn_json_str(j, "hardware_reason", "ffnroof was built without PAPI");
    } else if (!p->initialised) {
        ffn_json_str(j, "hardware_reason", p->error);
    } else if (p->cpu_component_disabled && p->cpu_disabled_reason[0]) {
        ffn_json_str(j, "hardware_reason", p->cpu_disabled_reason);
    } else {
        char buf[400];
        snprintf(
            buf, sizeof buf, "%s%s", p->cpu_pmu_exported ? "" : "the kernel exports no CPU PMU; ",
            p->events[0].reason[0] ? p->events[0].reason : "no hardware event could be counted");
        ffn_json_str(j, "hardware_reason", buf);
    }
    ffn_json_bool(j, "sde", m->sde_read);
    ffn_json_arr_begin(j, "events");
    for (size_t i = 0; i < m->n_events; i++)
        ffn_json_str(j, NULL, m->events[i]);
    ffn_json_arr_end(j);
    ffn_json_obj_end(j);
}

static void one_case(ffn_json *j, const ffn_bench_result *r, size_t id)
{
    const ffn_bench_case *c = &r->c;
    const bool moe = c->kind == FFN_BENCH_MOE;
    ffn_json_obj_begin(j, NULL);
    ffn_json_u64(j, "id", id);
    ffn_json_str(j, "kind", moe ? "moe" : "dense");
    ffn_json_str(j, "phase", ffn_phase_name(c->phase));
    ffn_json_u64(j, "batch", c->batch);
    if (c->phase == FFN_PHASE_PREFILL)
        ffn_json_u64(j, "seq", c->seq);
    else
        ffn_json_null(j, "seq");
    ffn__json_case_layer(j, c);
    ffn_json_str(j, "isa", ffn_isa_name(r->isa));
    ffn_json_str(j, "kernel", r->kernel);
    ffn_json_u64(j, "threads", (uint64_t)r->threads);
    ffn_json_bool(j, "cold_weights", r->cold);
    /* warm = the model's `hot` (weights left in cache between calls; bench --warm) */
    ffn_json_str(j, "weights", r->cold ? "cold" : "warm");
    ffn__json_time(j, "time_s", &r->time, true);
    ffn_json_u64(j, "samples", r->time.n);
    ffn_json_bool(j, "stable", r->stable);
    ffn_json_num(j, "flops", r->flops);
    ffn_json_num(j, "bytes", r->bytes);
    ffn_json_num(j, "weight_bytes", r->weight_bytes);
    ffn_json_num_or_null(j, "achieved_flops", r->achieved_flops);
    ffn_json_num_or_null(j, "achieved_bps", r->achieved_bps);
    ffn_json_num_or_null(j, "intensity", r->intensity);
    if (isfinite(r->roofline_s))
        ffn_json_str(j, "bound", ffn_bound_name(r->bound));
    else
        ffn_json_null(j, "bound");
    ffn_json_str(j, "compute_dtype", ffn_dtype_name(r->cdtype));
    ffn_json_num_or_null(j, "roofline_s", r->roofline_s);
    ffn_json_num_or_null(j, "predicted_s", r->predicted_s);
    if (r->level_bytes_source) {
        /* the cache-aware roofline: bytes each level served per call, and where they came
         * from (the model's per-level traffic, or host counters) */
        ffn_json_str(j, "level_bytes_source", r->level_bytes_source);
        ffn_json_u64(j, "weights_level", (uint64_t)(r->weights_level > 0 ? r->weights_level : 0));
        ffn_json_num(j, "weights_resident_fraction", r->weights_level > 0 ? r->weights_frac : 0.0);
        ffn_json_arr_begin(j, "level_bytes");
        for (int i = 0; i <= r->n_levels; i++) {
            int k = i < r->n_levels ? i : FFN_SRC_MEMORY;
            ffn_json_obj_begin(j, NULL);
            ffn_json_str(j, "level", i < r->n_levels ? r->level_names[i] : "memory");
            ffn_json_num(j, "bytes", r->level_bytes[k]);
            ffn_json_obj_end(j);
        }
        ffn_json_arr_end(j);
    }
    ffn_json_num_or_null(j, "prediction_error", r->prediction_error);
    ffn_json_num_or_null(j, "prediction_error_min", r->prediction_error_min);
    ffn_json_num_or_null(j, "efficiency", r->efficiency);
    ffn_json_arr_begin(j, "counters");
    for (size_t i = 0; i < r->n_counters; i++) {
        const ffn_counter_value *v = &r->counters[i];
        ffn_json_obj_begin(j, NULL);
        ffn_json_str(j, "name", v->name);
        if (v->available && r->calls > 0) {
            ffn_json_num(j, "value", (double)v->value);
            ffn_json_num(j, "per_call", (double)v->value / (double)r->calls);
            ffn_json_null(j, "reason");
        } else {
            ffn_json_null(j, "value");
            ffn_json_null(j, "per_call");
            ffn_json_str(j, "reason", v->reason[0] ? v->reason : "not counted");
        }
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
    ffn_json_u64(j, "calls", (uint64_t)(r->calls > 0 ? r->calls : 0));
    if (r->has_moe) {
        ffn_json_obj_begin(j, "moe");
        ffn_json_num_or_null(j, "route_s", r->route_s);
        ffn_json_num_or_null(j, "permute_s", r->permute_s);
        ffn_json_num_or_null(j, "experts_s", r->experts_s);
        ffn_json_num_or_null(j, "combine_s", r->combine_s);
        double over = r->route_s + r->permute_s + r->combine_s;
        double tot = over + r->experts_s;
        ffn_json_num_or_null(j, "routing_share", tot > 0 ? over / tot : NAN);
        ffn_json_u64(j, "active_experts", r->active_experts);
        ffn_json_obj_end(j);
    } else {
        ffn_json_null(j, "moe");
    }
    ffn_json_arr_begin(j, "peers");
    for (int p = 0; p < FFN_PEER_COUNT; p++) {
        const ffn_bench_peer *bp = &r->peers[p];
        if (!bp->ran) continue;
        ffn_json_obj_begin(j, NULL);
        ffn_json_str(j, "lib", ffn_peer_lib_name(bp->lib));
        ffn_json_str(j, "describe", bp->describe);
        ffn_json_str(j, "dtype", ffn_dtype_name(bp->dtype));
        if (bp->time.n) {
            ffn__json_time(j, "time_s", &bp->time, false);
            ffn_json_num_or_null(j, "speedup", bp->speedup);
        } else {
            ffn_json_null(j, "time_s");
            ffn_json_null(j, "speedup");
        }
        if (bp->error[0])
            ffn_json_str(j, "error", bp->error);
        else
            ffn_json_null(j, "error");
        ffn_json_obj_end(j);
    }
    ffn_json_arr_end(j);
    if (r->verified) {
        ffn_json_num_or_null(j, "max_rel_err", r->max_rel_err);
        ffn_json_u64(j, "verify_tokens", r->verify_tokens);
    } else {
        ffn_json_null(j, "max_rel_err");
        ffn_json_null(j, "verify_tokens");
    }
    ffn_json_obj_end(j);
}

int ffn_bench_write_json(FILE *fp, const ffn_bench_meta *m, const ffn_bench_result *r, size_t n)
{
    if (!fp || !m || (n && !r)) return FFN_EINVAL;
    ffn_json j;
    ffn_json_doc_begin(&j, fp, FFN_BENCH_SCHEMA);
    ffn_json_str(&j, "date", m->date ? m->date : "");
    ffn_json_str(&j, "command", m->command ? m->command : "");
    ffn_json_bool(&j, "complete", m->complete);
    ffn_json_bool(&j, "interrupted", m->interrupted);
    ffn_json_obj_begin(&j, "host");
    if (m->host) {
        ffn_json_str(&j, "name", m->host->host);
        ffn_json_str(&j, "cpu_model", m->host->cpu_model);
        ffn_json_str(&j, "cpu_vendor", m->host->cpu_vendor);
        ffn_json_u64(&j, "online_cpus",
                     (uint64_t)(m->host->online_cpus > 0 ? m->host->online_cpus : 0));
        ffn_json_u64(&j, "allowed_cpus",
                     (uint64_t)(m->host->allowed_cpus > 0 ? m->host->allowed_cpus : 0));
    }
    if (m->load_avg[0] >= 0) {
        ffn_json_arr_begin(&j, "load_avg");
        for (int i = 0; i < 3; i++)
            ffn_json_num(&j, NULL, m->load_avg[i]);
        ffn_json_arr_end(&j);
    } else {
        ffn_json_null(&j, "load_avg");
    }
    ffn_json_obj_end(&j);
    spec(&j, m);
    counters_available(&j, m);
    ffn_json_arr_begin(&j, "cases");
    for (size_t i = 0; i < n; i++)
        one_case(&j, &r[i], i + 1);
    ffn_json_arr_end(&j);
    ffn__json_notes(&j, "notes", m->notes, NULL);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}

int ffn_bench_write_csv(FILE *fp, const ffn_bench_meta *m, const ffn_bench_result *r, size_t n)
{
    if (!fp || !m || (n && !r)) return FFN_EINVAL;
    fputs("id,kind,phase,batch,seq,tokens,d,f,act,experts,top_k,dtype,isa,kernel,threads,"
          "cold_weights,time_median_s,time_min_s,time_p90_s,samples,flops,bytes,achieved_flops,"
          "achieved_bps,intensity,bound,roofline_s,predicted_s,prediction_error,efficiency,"
          "openblas_median_s,onednn_median_s,max_rel_err,complete,adtype,group,zero_point\n",
          fp);
    for (size_t i = 0; i < n; i++) {
        const ffn_bench_result *x = &r[i];
        const ffn_bench_case *c = &x->c;
        const bool moe = c->kind == FFN_BENCH_MOE;
        fprintf(fp, "%zu,%s,%s,%" PRIu64 ",", i + 1, moe ? "moe" : "dense",
                ffn_phase_name(c->phase), c->batch);
        if (c->phase == FFN_PHASE_PREFILL) fprintf(fp, "%" PRIu64, c->seq);
        fprintf(fp, ",%zu,%zu,%zu,%s,", c->tokens, c->shape.d, c->shape.f,
                ffn_act_name(c->shape.act));
        if (moe) fprintf(fp, "%zu", c->n_experts);
        fputc(',', fp);
        if (moe) fprintf(fp, "%zu", c->top_k);
        fprintf(fp, ",%s,%s,%s,%d,%s", ffn_dtype_name(c->wdtype), ffn_isa_name(x->isa), x->kernel,
                x->threads, x->cold ? "true" : "false");
        ffn_csv_num(fp, x->time.median, 9);
        ffn_csv_num(fp, x->time.min, 9);
        ffn_csv_num(fp, x->time.p90, 9);
        fprintf(fp, ",%zu", x->time.n);
        ffn_csv_num(fp, x->flops, 9);
        ffn_csv_num(fp, x->bytes, 9);
        ffn_csv_num(fp, x->achieved_flops, 9);
        ffn_csv_num(fp, x->achieved_bps, 9);
        ffn_csv_num(fp, x->intensity, 9);
        fprintf(fp, ",%s", isfinite(x->roofline_s) ? ffn_bound_name(x->bound) : "");
        ffn_csv_num(fp, x->roofline_s, 9);
        ffn_csv_num(fp, x->predicted_s, 9);
        ffn_csv_num(fp, x->prediction_error, 9);
        ffn_csv_num(fp, x->efficiency, 9);
        for (int p = 0; p < FFN_PEER_COUNT; p++)
            ffn_csv_num(fp, x->peers[p].time.n ? x->peers[p].time.median : NAN, 9);
        ffn_csv_num(fp, x->verified ? x->max_rel_err : NAN, 9);
        fprintf(fp, ",%s,%s,", m->complete ? "true" : "false", ffn_dtype_name(c->adtype));
        if (c->wdtype == FFN_DT_INT4)
            fprintf(fp, "%u,%s", c->shape.group, c->shape.zero_point ? "true" : "false");
        else
            fputc(',', fp);
        fputc('\n', fp);
    }
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_bench_write_table(FILE *fp, const ffn_hw *hw, const char *spec_file,
                          const ffn_bench_result *r, size_t n, bool any_peer)
{
    if (!fp || (n && !r)) return FFN_EINVAL;
    if (hw)
        fprintf(fp, "spec %s (%s): fp32 %.1f GFLOP/s, bf16 %.1f GFLOP/s, memory %.2f GB/s\n",
                hw->name, spec_file, hw->peak_flops[FFN_DT_FP32] / 1e9,
                hw->peak_flops[FFN_DT_BF16] / 1e9, hw->mem_bandwidth_bps / 1e9);
    fprintf(fp, "%-4s %-7s %5s %5s %6s %-5s %-28s %10s %9s %8s %7s %6s %5s %10s %7s %7s", "kind",
            "phase", "T", "d", "f", "dtype", "kernel", "median_ms", "min_ms", "GFLOP/s", "GB/s",
            "FLOP/B", "roof", "pred_ms", "err", "err_min");
    if (any_peer) fprintf(fp, " %12s %12s", "openblas_ms", "onednn_ms");
    fprintf(fp, " %9s\n", "max_rel");
    for (size_t i = 0; i < n; i++) {
        const ffn_bench_result *x = &r[i];
        fprintf(fp,
                "%-4s %-7s %5zu %5zu %6zu %-5s %-28.28s %10.3f %9.3f %8.1f %7.2f %6.1f %4.0f%% "
                "%10.3f %+6.1f%% %+6.1f%%",
                x->c.kind == FFN_BENCH_MOE ? "moe" : "ffn", ffn_phase_name(x->c.phase), x->c.tokens,
                x->c.shape.d, x->c.shape.f, ffn_dtype_name(x->c.wdtype), x->kernel,
                x->time.median * 1e3, x->time.min * 1e3, x->achieved_flops / 1e9,
                x->achieved_bps / 1e9, x->intensity, 100 * x->efficiency, x->predicted_s * 1e3,
                100 * x->prediction_error, 100 * x->prediction_error_min);
        if (any_peer)
            for (int p = 0; p < FFN_PEER_COUNT; p++) {
                const ffn_bench_peer *bp = &x->peers[p];
                if (bp->time.n)
                    fprintf(fp, " %7.3f(%.2fx)", bp->time.median * 1e3, bp->speedup);
                else
                    fprintf(fp, " %12s", bp->ran ? "failed" : "-");
            }
        if (x->verified)
            fprintf(fp, " %9.2e\n", x->max_rel_err);
        else
            fprintf(fp, " %9s\n", "-");
        if (x->has_moe)
            fprintf(fp,
                    "     moe: route %.3f ms, permute %.3f ms, experts %.3f ms, combine %.3f ms, "
                    "%zu experts active\n",
                    x->route_s * 1e3, x->permute_s * 1e3, x->experts_s * 1e3, x->combine_s * 1e3,
                    x->active_experts);
    }
    fprintf(fp, "(roof = roofline time / measured median; err = predicted / median - 1, err_min = "
                "predicted / min - 1; peers: median (their time / ours))\n");
    char fw[320];
    if (hw && ffn_hw_fit_warning(hw, fw, sizeof fw)) fprintf(fp, "! every pred_ms above: %s\n", fw);
    return ferror(fp) ? FFN_EIO : 0;
}
