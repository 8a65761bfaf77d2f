/* calibration.json (schema ffnroof.calibration/1, docs/formats-bench.md): every raw point of
 * `ffnroof calibrate` - peaks, bandwidth sweeps and plateaus, timer and clock, the FFN kernel
 * runs the efficiency model was fitted to, and the fit. */
#include <math.h>
#include <string.h>

#include "ffnroof/bench_io.h"
#include "ffnroof/json.h"

#include "profile_json.h"

/* A measured quantity: 0 means it was not measured (null in the file). */
static double pos(double v)
{
    return v > 0 ? v : NAN;
}

static void host(ffn_json *j, const ffn_host_info *h, const double load[3])
{
    ffn_json_obj_begin(j, "host");
    ffn_json_str(j, "name", h->host);
    ffn_json_str(j, "cpu_model", h->cpu_model);
    ffn_json_str(j, "cpu_vendor", h->cpu_vendor);
    ffn_json_u64(j, "online_cpus", (uint64_t)(h->online_cpus > 0 ? h->online_cpus : 0));
    ffn_json_u64(j, "allowed_cpus", (uint64_t)(h->allowed_cpus > 0 ? h->allowed_cpus : 0));
    ffn_json_num_or_null(j, "phys_mem_bytes", pos(h->phys_mem_bytes));
    if (load && load[0] >= 0) {
        ffn_json_arr_begin(j, "load_avg");
        for (int i = 0; i < 3; i++)
            ffn_json_num(j, NULL, load[i]);
        ffn_json_arr_end(j);
    } else {
        ffn_json_null(j, "load_avg");
    }
    ffn_json_obj_end(j);
}

/* {dtype: value} of the dtypes with a value ({} when none has) */
static void json_by_dtype(ffn_json *j, const char *key, const double *v)
{
    ffn_json_obj_begin(j, key);
    for (int d = 0; d < FFN_DT_COUNT; d++)
        if (v[d] > 0) ffn_json_num(j, ffn_dtype_name((ffn_dtype)d), v[d]);
    ffn_json_obj_end(j);
}

/* "tiles": [[rows, cols], ...] */
static void json_tiles(ffn_json *j, const uint32_t (*tiles)[2], int n)
{
    ffn_json_arr_begin(j, "tiles");
    for (int t = 0; t < n; t++) {
        ffn_json_arr_begin(j, NULL);
        ffn_json_u64(j, NULL, tiles[t][0]);
        ffn_json_u64(j, NULL, tiles[t][1]);
        ffn_json_arr_end(j);
    }
    ffn_json_arr_end(j);
}

static void kernel_run(ffn_json *j, const ffn_kcal_run *kr)
{
    const ffn_bench_result *r = &kr->r;
    const ffn_bench_case *c = &r->c;
    ffn_json_obj_begin(j, NULL);
    ffn_json_str(j, "kind", c->kind == FFN_BENCH_MOE ? "moe" : "dense");
    ffn_json_str(j, "phase", ffn_phase_name(c->phase));
    ffn__json_case_layer(j, c);
    ffn_json_str(j, "kernel", r->kernel);
    ffn_json_str(j, "isa", ffn_isa_name(r->isa));
    ffn_json_u64(j, "threads", (uint64_t)r->threads);
    ffn__json_time(j, "time_s", &r->time, false);
    ffn_json_u64(j, "samples", r->time.n);
    ffn_json_bool(j, "stable", r->stable);
    ffn_json_num(j, "flops", r->flops);
    ffn_json_num(j, "bytes", r->bytes);
    ffn_json_str(j, "role", kr->fit ? "fit" : "check");
    ffn_json_num(j, "predicted_s", r->predicted_s);
    ffn_json_num(j, "prediction_error", r->prediction_error);
    ffn_json_num(j, "prediction_error_min", r->prediction_error_min);
    ffn_json_obj_end(j);
}

int ffn_calib_write_json(FILE *fp, const ffn_calibration *c, const ffn_kcal_result *k,
                         const ffn_calib_meta *m)
{
    if (!fp || !c || !m) return FFN_EINVAL;
    ffn_json j;
    ffn_json_doc_begin(&j, fp, FFN_CALIB_SCHEMA);
    ffn_json_str(&j, "date", c->date);
    ffn_json_bool(&j, "quick", c->quick);
    ffn_json_u64(&j, "threads", (uint64_t)(c->threads > 0 ? c->threads : 0));
    ffn_json_num(&j, "elapsed_s", c->elapsed_s);
    ffn_json_bool(&j, "complete", m->complete);
    host(&j, &c->host, m->load_avg);

    /* the caches as the host describes them: sysfs, else CPUID (cache_source says which) */
    ffn_json_str(&j, "cache_source", c->host.cache_source);
    ffn_json_arr_begin(&j, "sysfs_caches");
    for (int i = 0; i < c->host.n_caches; i++) {
        const ffn_sysfs_cache *s = &c->host.caches[i];
        ffn_json_obj_begin(&j, NULL);
        ffn_json_u64(&j, "level", (uint64_t)(s->level > 0 ? s->level : 0));
        ffn_json_str(&j, "type", s->type);
        ffn_json_num(&j, "size_bytes", s->size_bytes);
        ffn_json_u64(&j, "shared_cpus", (uint64_t)(s->shared_cpus > 0 ? s->shared_cpus : 0));
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);

    const ffn_cpu_caps *cp = &c->caps;
    ffn_json_obj_begin(&j, "caps");
    ffn_json_bool(&j, "x86_64", cp->x86_64);
    ffn_json_bool(&j, "aarch64", cp->aarch64);
    ffn_json_bool(&j, "fma", cp->fma);
    ffn_json_bool(&j, "avx512f", cp->avx512f);
    ffn_json_bool(&j, "avx512_bf16", cp->avx512_bf16);
    ffn_json_bool(&j, "avx512_vnni", cp->avx512_vnni);
    ffn_json_bool(&j, "avx512_fp16", cp->avx512_fp16);
    ffn_json_bool(&j, "amx_bf16", cp->amx_bf16);
    ffn_json_bool(&j, "amx_int8", cp->amx_int8);
    ffn_json_bool(&j, "neon", cp->neon);
    ffn_json_bool(&j, "neon_fp16", cp->neon_fp16);
    ffn_json_obj_end(&j);

    ffn_json_obj_begin(&j, "timer");
    ffn_json_str(&j, "source", c->timer.source);
    ffn_json_num(&j, "res_reported_s", c->timer.res_reported_s);
    ffn_json_num(&j, "res_measured_s", c->timer.res_measured_s);
    ffn_json_num(&j, "overhead_s", c->timer.overhead_s);
    ffn_json_obj_end(&j);

    ffn_json_obj_begin(&j, "clock");
    ffn_json_num_or_null(&j, "hz", pos(c->clock.hz));
    ffn_json_num_or_null(&j, "median_hz", pos(c->clock.median_hz));
    ffn_json_num(&j, "spread_rel", c->clock.spread_rel);
    ffn_json_u64(&j, "reps", (uint64_t)(c->clock.reps > 0 ? c->clock.reps : 0));
    ffn_json_str(&j, "method", c->clock.method);
    ffn_json_obj_end(&j);

    ffn_json_arr_begin(&j, "peaks");
    for (int kk = 0; kk < FFN_PEAK_COUNT; kk++)
        for (int t = 0; t < 2; t++) {
            const ffn_peak_result *p = &c->peaks[kk][t];
            if (!(p->flops_per_s > 0)) continue;
            ffn_json_obj_begin(&j, NULL);
            ffn_json_str(&j, "kind", ffn_peak_name((ffn_peak_kind)kk));
            ffn_json_str(&j, "dtype", ffn_dtype_name(ffn_peak_dtype((ffn_peak_kind)kk)));
            ffn_json_u64(&j, "threads", (uint64_t)p->threads);
            ffn_json_num(&j, "flops_per_s", p->flops_per_s);
            ffn_json_num(&j, "median_flops_per_s", p->median_flops_per_s);
            ffn_json_u64(&j, "samples", p->samples);
            ffn_json_bool(&j, "stable", p->stable);
            ffn_json_obj_end(&j);
        }
    ffn_json_arr_end(&j);

    ffn_json_obj_begin(&j, "bandwidth");
    ffn_json_num_or_null(&j, "max_bytes", pos(c->max_bytes));
    ffn_json_obj_begin(&j, "tail_read_bps");
    ffn_json_num_or_null(&j, "one_thread", pos(c->tail_read_bps[0]));
    ffn_json_num_or_null(&j, "all_threads", pos(c->tail_read_bps[1]));
    ffn_json_obj_end(&j);
    ffn_json_arr_begin(&j, "points");
    for (size_t i = 0; i < c->n_points; i++) {
        const ffn_bw_point *p = &c->points[i];
        ffn_json_obj_begin(&j, NULL);
        ffn_json_str(&j, "kernel", ffn_bw_kernel_name(p->kernel));
        ffn_json_str(&j, "kind", ffn_bw_kernel_kind(p->kernel));
        ffn_json_u64(&j, "threads", (uint64_t)p->threads);
        ffn_json_num(&j, "size_bytes", p->size_bytes);
        ffn_json_num(&j, "bytes_per_s", p->bytes_per_s);
        ffn_json_num(&j, "median_bytes_per_s", p->median_bytes_per_s);
        ffn_json_u64(&j, "samples", p->samples);
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);
    ffn_json_arr_begin(&j, "levels");
    for (int kk = 0; kk < FFN_BW_COUNT; kk++)
        for (int t = 0; t < 2; t++)
            for (int l = 0; l < c->n_levels[kk][t]; l++) {
                const ffn_level *v = &c->levels[kk][t][l];
                ffn_json_obj_begin(&j, NULL);
                ffn_json_str(&j, "kernel", ffn_bw_kernel_name((ffn_bw_kernel)kk));
                ffn_json_u64(&j, "threads", (uint64_t)(t ? c->threads : 1));
                ffn_json_str(&j, "name", v->name);
                ffn_json_num(&j, "bandwidth_bps", v->bandwidth_bps);
                ffn_json_num(&j, "first_bytes", v->first_bytes);
                ffn_json_num(&j, "last_bytes", v->last_bytes);
                ffn_json_num_or_null(&j, "capacity_bytes", pos(v->capacity_bytes));
                ffn_json_u64(&j, "n_points", (uint64_t)(v->n_points > 0 ? v->n_points : 0));
                ffn_json_obj_end(&j);
            }
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);

    ffn_json_arr_begin(&j, "kernel_runs");
    for (size_t i = 0; k && i < k->n_runs; i++)
        kernel_run(&j, &k->runs[i]);
    ffn_json_arr_end(&j);

    if (k && m->spec) {
        const ffn_eff *e = &m->spec->eff;
        ffn_json_obj_begin(&j, "fit");
        ffn_json_num(&j, "compute_max", e->compute_max);
        json_by_dtype(&j, "compute_max_by_dtype", e->compute_max_dt);
        json_by_dtype(&j, "dequant_cost", e->dequant_cost);
        json_by_dtype(&j, "memory_max_gemv_by_dtype", e->memory_max_gemv_dt);
        ffn_json_num(&j, "memory_max", e->memory_max);
        ffn_json_num(&j, "memory_max_gemv",
                     e->memory_max_gemv > 0 ? e->memory_max_gemv : e->memory_max);
        ffn_json_num(&j, "launch_s", e->launch_s);
        ffn_json_num(&j, "overlap_p", e->overlap_p);
        ffn_json_num(&j, "compute_half_flops", e->compute_half_flops);
        ffn_json_num(&j, "memory_half_bytes", e->memory_half_bytes);
        json_tiles(&j, e->tiles, e->n_tiles);
        ffn_json_obj_begin(&j, "tiles_by_dtype");
        for (int d = 0; d < FFN_DT_COUNT; d++) {
            const ffn_tileset *ts = &e->tiles_dt[d];
            if (ts->n_tiles <= 0) continue;
            ffn_json_obj_begin(&j, ffn_dtype_name((ffn_dtype)d));
            json_tiles(&j, ts->tiles, ts->n_tiles);
            ffn_json_u64(&j, "min_rows", ts->min_rows ? ts->min_rows : 16);
            ffn_json_u64(&j, "gemv_rows", ts->gemv_rows);
            ffn_json_obj_end(&j);
        }
        ffn_json_obj_end(&j);
        ffn_json_u64(&j, "compute_units", m->spec->compute_units);
        ffn_json_str(&j, "fp32_kernel", k->fp32_kernel);
        if (k->bf16_kernel[0])
            ffn_json_str(&j, "bf16_kernel", k->bf16_kernel);
        else
            ffn_json_null(&j, "bf16_kernel");
        ffn_json_obj_begin(&j, "error_fit");
        ffn_json_u64(&j, "n", k->n_fit);
        ffn_json_num(&j, "median_abs", k->n_fit ? k->fit_median_abs : NAN);
        ffn_json_num(&j, "max_abs", k->n_fit ? k->fit_max_abs : NAN);
        ffn_json_obj_end(&j);
        ffn_json_obj_begin(&j, "error_check");
        ffn_json_u64(&j, "n", k->n_check);
        ffn_json_num(&j, "median_abs", k->n_check ? k->check_median_abs : NAN);
        ffn_json_num(&j, "max_abs", k->n_check ? k->check_max_abs : NAN);
        ffn_json_obj_end(&j);
        ffn_json_obj_end(&j);
    } else {
        ffn_json_null(&j, "fit");
    }

    if (m->spec) {
        const ffn_hw *h = m->spec;
        ffn_json_obj_begin(&j, "spec");
        ffn_json_str(&j, "file", m->spec_file ? m->spec_file : "");
        ffn_json_str(&j, "name", h->name);
        ffn_json_obj_begin(&j, "peak_flops");
        for (int d = 0; d < FFN_DT_COUNT; d++)
            if (h->peak_flops[d] > 0)
                ffn_json_num(&j, ffn_dtype_name((ffn_dtype)d), h->peak_flops[d]);
        ffn_json_obj_end(&j);
        ffn_json_obj_begin(&j, "peak_kinds");
        for (int d = 0; d < FFN_DT_COUNT; d++)
            if (m->peak_kind[d]) ffn_json_str(&j, ffn_dtype_name((ffn_dtype)d), m->peak_kind[d]);
        ffn_json_obj_end(&j);
        ffn_json_num(&j, "mem_bandwidth_bps", h->mem_bandwidth_bps);
        ffn_json_num_or_null(&j, "clock_hz", pos(h->clock_hz));
        ffn_json_u64(&j, "compute_units", h->compute_units);
        ffn_json_obj_end(&j);
    } else {
        ffn_json_null(&j, "spec");
    }
    ffn__json_notes(&j, "notes", c->notes, m->notes);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}
