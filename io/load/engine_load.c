/* Loader for serving-engine kernel profiles (hw/arch/engines.yaml; include/ffnroof/engine.h,
 * docs/formats-hw.md "Engine profiles"):
 *   ENGINE:
 *     baseline: true            # the kernels the specs were fitted to
 *     source: ...
 *     device: h100-sxm          # the spec the by_dtype factors were fitted on top of
 *     by_dtype:
 *       fp8: {compute: 0.93, memory: 1.0, launch: 6.1 us, quant_row: 1.4 ns, range: [0.87, 1.2]}
 *       fp8-block: {..., kernels: [{waves: {rows: [64, 128, 256], cols: [16, 256], depth: 128}}]}
 *     scheduler:                # the release's defaults (`ffnroof serve`)
 *       {max_batched_tokens: 8192, max_seqs: 1024, page: 16, step_overhead: 1 ms, source: ...}
 *     moe:                      # fused-MoE kernel families (`ffnroof fit --check` of MoE tables)
 *       - {kernels: fused_moe_triton, dtype: bf16, device: h100-sxm, path: sorted,
 *          module: 5.9 us, gemm_eff: 1.4, tile: 0.33 us, kstep: 0.29 us, zero_tile: 0.33 us,
 *          ep: 0 us, misaligned: 2.1, range: [0.77, 1.37]}
 * Every rejection is one `file:line:col: message`. */
#include "ffnroof/engine.h"
#include "ffnroof/engine_load.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel_rules.h"
#include "ydoc.h"

static const char *const dt_keys[] = {"fp32", "tf32",      "bf16",  "fp16",  "fp8", "int8",
                                      "int4", "fp8-block", "nvfp4", "mxfp4", NULL};
_Static_assert(FFN_DT_COUNT == 10, "dt_keys follow enum ffn_dtype");

/* A factor in (0, 4]: an engine's kernels reach at most a few times another's fraction. */
static int factor(ffn_ydoc *y, yaml_node_t *m, const char *key, double *out)
{
    *out = 1.0;
    yaml_node_t *v = ffn_y_get(y, m, key, NULL);
    if (!v) return 0;
    int rc = ffn_y_node_num(y, v, key, FFN_UNIT_NONE, 0.0, 4.0, out);
    if (!rc && !(*out > 0))
        rc = ffn_y_error(y, v, FFN_ERANGE, "'%s' must be greater than 0 (a factor in (0, 4])", key);
    return rc;
}

/* `range: [p10, p90]` of measured / predicted under m (required or not): p10 < p90 around 1 */
static int load_range(ffn_ydoc *y, yaml_node_t *m, bool required, double *p10, double *p90)
{
    yaml_node_t *r = ffn_y_get(y, m, "range", NULL);
    if (!r && !required) return 0;
    const long n = r && r->type == YAML_SEQUENCE_NODE
                       ? (long)(r->data.sequence.items.top - r->data.sequence.items.start)
                       : -1;
    if (n != 2)
        return ffn_y_error(y, r ? r : m, FFN_ESCHEMA,
                           "'range' is [p10, p90] of measured / predicted, e.g. [0.85, 1.2]");
    int rc = 0;
    for (long j = 0; !rc && j < 2; j++)
        rc = ffn_y_node_num(y, yaml_document_get_node(&y->doc, r->data.sequence.items.start[j]),
                            j ? "p90" : "p10", FFN_UNIT_NONE, 0.05, 20.0, j ? p90 : p10);
    if (!rc && !(*p10 < *p90 && *p10 <= 1.5 && *p90 >= 0.67))
        rc = ffn_y_error(y, r, FFN_ERANGE,
                         "'range' [%g, %g] must be p10 < p90 around 1 (p10 <= 1.5, p90 >= 0.67)",
                         *p10, *p90);
    return rc;
}

static int load_by_dtype(ffn_ydoc *y, yaml_node_t *eng, ffn_engine_profile *p)
{
    static const char *const keys[] = {"compute", "memory", "launch", "quant_row",
                                       "kernels", "range",  NULL};
    yaml_node_t *bd = ffn_y_get(y, eng, "by_dtype", NULL);
    if (!bd) return 0;
    int rc = ffn_y_expect_map(y, bd, "by_dtype");
    if (!rc) rc = ffn_y_check_keys(y, bd, dt_keys);
    for (int d = 0; !rc && d < FFN_DT_COUNT; d++) {
        yaml_node_t *m = ffn_y_get(y, bd, dt_keys[d], NULL);
        if (!m) continue;
        rc = ffn_y_expect_map(y, m, dt_keys[d]);
        if (!rc) rc = ffn_y_check_keys(y, m, keys);
        ffn_engine_dt *x = &p->dt[d];
        if (!rc) rc = factor(y, m, "compute", &x->compute);
        if (!rc) rc = factor(y, m, "memory", &x->memory);
        if (!rc) rc = ffn_y_num(y, m, "launch", false, FFN_UNIT_TIME, 0.0, 1e-2, &x->launch_s);
        if (!rc)
            rc = ffn_y_num(y, m, "quant_row", false, FFN_UNIT_TIME, 0.0, 1e-3, &x->quant_row_s);
        yaml_node_t *kr = ffn_y_get(y, m, "kernels", NULL);
        if (!rc && kr) rc = ffn_y_kernel_rules(y, kr, "kernels", &x->rules);
        if (!rc) rc = load_range(y, m, false, &x->p10, &x->p90);
        x->set = true;
    }
    return rc;
}

/* One `moe:` entry: a fused-MoE kernel family's parameters (docs/formats-hw.md "Engine
 * profiles"). Times bounded to what one kernel call could take; the range must hold 1 between
 * its ends' neighbourhood: p10 <= 1.5, p90 >= 0.67, p10 < p90. */
static int load_moe_entry(ffn_ydoc *y, yaml_node_t *m, ffn_engine_moe *x)
{
    static const char *const keys[] = {
        "kernels",  "dtype", "device", "arch",      "vendor", "default",    "path",  "module",
        "gemm_eff", "tile",  "kstep",  "zero_tile", "ep",     "misaligned", "range", NULL};
    static const char *const paths[] = {"engine", "sorted", "permuted", NULL};
    int rc = ffn_y_expect_map(y, m, "a 'moe' entry");
    if (!rc) rc = ffn_y_check_keys(y, m, keys);
    if (!rc) rc = ffn_y_str(y, m, "kernels", true, x->kernels, sizeof x->kernels);
    if (!rc && !x->kernels[0])
        rc = ffn_y_error(y, ffn_y_get(y, m, "kernels", NULL), FFN_ESCHEMA,
                         "'kernels' names a part of the kernel's name, e.g. fused_moe_triton");
    if (!rc) rc = ffn_y_str(y, m, "device", true, x->device, sizeof x->device);
    if (!rc) rc = ffn_y_str(y, m, "arch", false, x->arch, sizeof x->arch);
    snprintf(x->vendor, sizeof x->vendor, "NVIDIA");
    if (!rc) rc = ffn_y_str(y, m, "vendor", false, x->vendor, sizeof x->vendor);
    bool dflt = true;
    if (!rc) rc = ffn_y_bool(y, m, "default", false, &dflt);
    x->optional = !dflt;
    int d = 0, path = 0;
    if (!rc) rc = ffn_y_enum(y, m, "dtype", true, dt_keys, &d);
    if (!rc) rc = ffn_y_enum(y, m, "path", false, paths, &path);
    ffn_moe_fused_params *p = &x->params;
    if (!rc) rc = ffn_y_num(y, m, "module", true, FFN_UNIT_TIME, 0.0, 1e-3, &p->module_s);
    if (!rc) rc = ffn_y_num(y, m, "gemm_eff", true, FFN_UNIT_NONE, 0.01, 4.0, &p->gemm_eff);
    if (!rc) rc = ffn_y_num(y, m, "tile", true, FFN_UNIT_TIME, 0.0, 1e-3, &p->tile_s);
    if (!rc) rc = ffn_y_num(y, m, "kstep", true, FFN_UNIT_TIME, 0.0, 1e-3, &p->kstep_s);
    if (!rc) rc = ffn_y_num(y, m, "zero_tile", false, FFN_UNIT_TIME, 0.0, 1e-3, &p->zero_tile_s);
    if (!rc) rc = ffn_y_num(y, m, "ep", false, FFN_UNIT_TIME, 0.0, 1e-3, &p->ep_s);
    p->misaligned_x = 1.0;
    if (!rc) rc = ffn_y_num(y, m, "misaligned", false, FFN_UNIT_NONE, 1.0, 100.0, &p->misaligned_x);
    if (!rc) rc = load_range(y, m, true, &x->p10, &x->p90);
    x->dtype = (ffn_dtype)d;
    p->path = (ffn_moe_fused_path)path;
    return rc;
}

static int load_moe(ffn_ydoc *y, yaml_node_t *eng, ffn_engine_profile *p)
{
    yaml_node_t *s = ffn_y_get(y, eng, "moe", NULL);
    if (!s) return 0;
    int rc = ffn_y_expect_seq(y, s, "moe");
    const long n = rc ? 0 : (long)(s->data.sequence.items.top - s->data.sequence.items.start);
    if (!rc && n > FFN_ENGINE_MAX_MOE)
        rc = ffn_y_error(y, s, FFN_ERANGE, "at most %d 'moe' entries", FFN_ENGINE_MAX_MOE);
    for (long j = 0; !rc && j < n; j++) {
        yaml_node_t *m = yaml_document_get_node(&y->doc, s->data.sequence.items.start[j]);
        rc = load_moe_entry(y, m, &p->moe[j]);
        for (long i = 0; !rc && i < j; i++)
            if (p->moe[i].dtype == p->moe[j].dtype &&
                !strcmp(p->moe[i].kernels, p->moe[j].kernels) &&
                !strcmp(p->moe[i].device, p->moe[j].device))
                rc =
                    ffn_y_error(y, m, FFN_ESCHEMA, "a second 'moe' entry for %s kernels '%s' on %s",
                                dt_keys[p->moe[j].dtype], p->moe[j].kernels, p->moe[j].device);
        p->n_moe = (int)j + 1;
    }
    if (rc) p->n_moe = 0;
    return rc;
}

static int load_sched(ffn_ydoc *y, yaml_node_t *eng, ffn_engine_sched *s)
{
    static const char *const keys[] = {"max_batched_tokens",
                                       "max_seqs",
                                       "page",
                                       "step_overhead",
                                       "seq_overhead",
                                       "flop_overhead",
                                       "range",
                                       "reserve_output",
                                       "reserve_output_min",
                                       "reserve_decay_steps",
                                       "reserve_retract_steps",
                                       "prefill_apart",
                                       "kv_by_chunk",
                                       "budget_over_dp",
                                       "prefix_cache",
                                       "devices",
                                       "source",
                                       NULL};
    yaml_node_t *m = ffn_y_get(y, eng, "scheduler", NULL);
    if (!m) return 0;
    int rc = ffn_y_expect_map(y, m, "scheduler");
    if (!rc) rc = ffn_y_check_keys(y, m, keys);
    double v[3];
    static const char *const ints[] = {"max_batched_tokens", "max_seqs", "page"};
    for (int i = 0; !rc && i < 3; i++) {
        rc = ffn_y_num(y, m, ints[i], true, FFN_UNIT_NONE, 1.0, 1048576.0, &v[i]);
        if (!rc && v[i] != (double)(uint64_t)v[i])
            rc = ffn_y_error(y, ffn_y_get(y, m, ints[i], NULL), FFN_ERANGE,
                             "'%s' must be a whole number", ints[i]);
    }
    if (!rc)
        rc = ffn_y_num(y, m, "step_overhead", true, FFN_UNIT_TIME, 0.0, 1.0, &s->step_overhead_s);
    if (!rc)
        rc = ffn_y_num(y, m, "seq_overhead", false, FFN_UNIT_TIME, 0.0, 1e-2, &s->seq_overhead_s);
    if (!rc)
        rc = ffn_y_num(y, m, "flop_overhead", false, FFN_UNIT_NONE, 0.0, 10.0, &s->flop_overhead);
    if (!rc) rc = load_range(y, m, false, &s->range_p10, &s->range_p90);
    s->reserve_output = 1.0;
    s->reserve_output_min = NAN;
    if (!rc)
        rc = ffn_y_num(y, m, "reserve_output", false, FFN_UNIT_NONE, 0.0, 1.0, &s->reserve_output);
    if (!rc)
        rc = ffn_y_num(y, m, "reserve_output_min", false, FFN_UNIT_NONE, 0.0, 1.0,
                       &s->reserve_output_min);
    if (!rc && s->reserve_output_min > s->reserve_output)
        rc = ffn_y_error(y, ffn_y_get(y, m, "reserve_output_min", NULL), FFN_ERANGE,
                         "'reserve_output_min' %g is above 'reserve_output' %g",
                         s->reserve_output_min, s->reserve_output);
    if (isnan(s->reserve_output_min)) s->reserve_output_min = s->reserve_output;
    s->kv_grow = s->reserve_output_min < 1.0;
    if (!rc)
        rc = ffn_y_num(y, m, "reserve_decay_steps", false, FFN_UNIT_NONE, 0.0, 1e9,
                       &s->reserve_decay_steps);
    if (!rc)
        rc = ffn_y_num(y, m, "reserve_retract_steps", false, FFN_UNIT_NONE, 0.0, 1e9,
                       &s->reserve_retract_steps);
    if (!rc) rc = ffn_y_bool(y, m, "prefill_apart", false, &s->prefill_apart);
    if (!rc) rc = ffn_y_bool(y, m, "kv_by_chunk", false, &s->kv_by_chunk);
    if (!rc) rc = ffn_y_bool(y, m, "budget_over_dp", false, &s->budget_over_dp);
    if (!rc) rc = ffn_y_bool(y, m, "prefix_cache", false, &s->prefix_cache);
    if (!rc) {
        yaml_node_t *src = ffn_y_get(y, m, "source", NULL);
        if (!src || !ffn_y_text(src))
            rc = ffn_y_error(y, src ? src : m, FFN_ESCHEMA,
                             "'scheduler' needs a 'source' (where its defaults come from)");
    }
    yaml_node_t *dv = rc ? NULL : ffn_y_get(y, m, "devices", NULL);
    if (dv) {
        rc = ffn_y_expect_map(y, dv, "devices");
        for (yaml_node_pair_t *pr = rc ? NULL : dv->data.mapping.pairs.start;
             pr && pr < dv->data.mapping.pairs.top && !rc; pr++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
            yaml_node_t *o = yaml_document_get_node(&y->doc, pr->value);
            const char *name = ffn_y_text(k);
            static const char *const dkeys[] = {"max_batched_tokens", "max_seqs", NULL};
            if (!name || !*name || strlen(name) >= sizeof s->by_device[0].device) {
                rc = ffn_y_error(y, k, FFN_ESCHEMA, "a device name of 1-63 characters");
                break;
            }
            if (s->n_by_device == FFN_ENGINE_MAX_DEVICES) {
                rc = ffn_y_error(y, k, FFN_ERANGE, "at most %d devices", FFN_ENGINE_MAX_DEVICES);
                break;
            }
            rc = ffn_y_expect_map(y, o, name);
            if (!rc) rc = ffn_y_check_keys(y, o, dkeys);
            double a = 0, b = 0;
            if (!rc)
                rc =
                    ffn_y_num(y, o, "max_batched_tokens", false, FFN_UNIT_NONE, 1.0, 1048576.0, &a);
            if (!rc) rc = ffn_y_num(y, o, "max_seqs", false, FFN_UNIT_NONE, 1.0, 1048576.0, &b);
            if (!rc && (a != (double)(uint64_t)a || b != (double)(uint64_t)b))
                rc = ffn_y_error(y, o, FFN_ERANGE, "whole numbers of tokens and sequences");
            if (rc) break;
            snprintf(s->by_device[s->n_by_device].device, sizeof s->by_device[0].device, "%s",
                     name);
            s->by_device[s->n_by_device].max_batched_tokens = (uint64_t)a;
            s->by_device[s->n_by_device++].max_seqs = (uint64_t)b;
        }
    }
    if (rc) return rc;
    s->max_batched_tokens = (uint64_t)v[0];
    s->max_seqs = (uint64_t)v[1];
    s->page_tokens = (uint64_t)v[2];
    s->set = true;
    return 0;
}

static int load_engine(ffn_ydoc *y, ffn_engine e, ffn_engine_profile *p)
{
    static const char *const keys[] = {"baseline",  "source", "device", "by_dtype",
                                       "scheduler", "moe",    NULL};
    yaml_node_t *root = ffn_ydoc_root(y);
    int rc = ffn_y_expect_map(y, root, "an engine profiles file");
    if (rc) return rc;
    /* the file's own `source:` (text), then every engine it names must be one ffnroof knows */
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
        ffn_engine any;
        const char *t = ffn_y_text(k);
        if (t && !strcmp(t, "source")) {
            if (!ffn_y_text(yaml_document_get_node(&y->doc, pr->value)))
                return ffn_y_error(y, k, FFN_ESCHEMA, "'source' must be text");
            continue;
        }
        if (!t || ffn_engine_parse(t, &any) || any == FFN_ENGINE_NONE)
            return ffn_y_error(y, k, FFN_ESCHEMA, "unknown engine '%s' (vllm, sglang, trtllm)",
                               t ? t : "?");
    }
    yaml_node_t *eng = ffn_y_get(y, root, ffn_engine_name(e), NULL);
    if (!eng)
        return ffn_y_error(y, root, FFN_ESCHEMA, "no profile for engine '%s'", ffn_engine_name(e));
    rc = ffn_y_expect_map(y, eng, ffn_engine_name(e));
    if (!rc) rc = ffn_y_check_keys(y, eng, keys);
    if (!rc) rc = ffn_y_bool(y, eng, "baseline", false, &p->baseline);
    if (!rc) {
        yaml_node_t *src = ffn_y_get(y, eng, "source", NULL);
        if (!src || !ffn_y_text(src))
            rc = ffn_y_error(y, src ? src : eng, FFN_ESCHEMA,
                             "engine '%s' needs a 'source' (where its factors come from)",
                             ffn_engine_name(e));
    }
    if (!rc) rc = ffn_y_str(y, eng, "device", false, p->device, sizeof p->device);
    if (!rc) rc = load_by_dtype(y, eng, p);
    if (!rc) rc = load_sched(y, eng, &p->sched);
    if (!rc) rc = load_moe(y, eng, p);
    return rc;
}

int ffn_engine_load(const char *path, ffn_engine e, ffn_engine_profile *out, ffn_diag *diag)
{
    ffn_diag_clear(diag);
    if (!out) return ffn_diag_set(diag, FFN_EINVAL, path, 0, 0, "no profile struct given");
    memset(out, 0, sizeof *out);
    out->engine = e;
    if (e == FFN_ENGINE_NONE) {
        out->baseline = true; /* the device's own kernels: the spec as it is */
        return 0;
    }
    ffn_ydoc y;
    int rc = ffn_ydoc_load(&y, path, diag);
    if (!rc) rc = load_engine(&y, e, out);
    ffn_ydoc_release(&y);
    if (rc) {
        memset(out, 0, sizeof *out);
        out->engine = e;
    }
    return rc;
}
