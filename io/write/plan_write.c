/* The writers of `ffnroof plan` (include/ffnroof/plan_write.h, docs/plan.md): the JSON (schema
 * ffnroof.plan/1) and CSV forms of the ranked (model, device) plans. The table and the
 * explanation are views (report/plan_table.c). */
#include "ffnroof/plan_write.h"
#include "ffnroof/sweep.h"

#include <math.h>
#include <string.h>

#include "ffnroof/json.h"
#include "ffnroof/predict_write.h"
#include "ffnroof/units.h"

static const ffn_plan_layout *shown(const ffn_plan_pair *p)
{
    return p->show >= 0 ? &p->plan->layouts[p->show] : NULL;
}

static void json_layout(ffn_json *j, const char *key, const ffn_plan_pair *p,
                        const ffn_plan_layout *L, int rank)
{
    ffn_json_obj_begin(j, key);
    if (rank > 0) ffn_json_u64(j, "rank", (uint64_t)rank);
    ffn_json_str(j, "model", p->m->name);
    ffn_json_str(j, "hw", p->hw->name);
    ffn_json_bool(j, "valid", L->valid);
    ffn_json_bool(j, "feasible", L->feasible);
    ffn_json_u64(j, "devices", L->devices);
    /* the devices the weights alone need by capacity (SRAM-first devices: chips on chip) */
    ffn_json_u64(j, "devices_for_weights", p->plan->devices_for_weights);
    if (p->launch && L == shown(p)) {
        ffn_json_str(j, "launch", p->launch);
        ffn_json_str(j, "launch_note", p->launch_note ? p->launch_note : "");
    }
    ffn_json_u64(j, "tp", L->tp);
    ffn_json_u64(j, "dp", L->dp);
    ffn_json_u64(j, "ep", L->ep);
    ffn_json_u64(j, "pp", L->pp);
    ffn_json_u64(j, "replicas", L->replicas);
    ffn_json_bool(j, "fits", L->fits);
    ffn_json_num(j, "memory_per_device_bytes", L->mem.total_bytes);
    ffn_json_obj_begin(j, "memory");
    ffn_json_num(j, "weight_bytes", L->mem.weight_bytes);
    ffn_json_num(j, "ffn_weight_bytes", L->mem.ffn_weight_bytes);
    ffn_json_num(j, "other_weight_bytes", L->mem.other_weight_bytes);
    ffn_json_num(j, "kv_cache_bytes", L->mem.kv_bytes);
    ffn_json_num(j, "kv_cache_per_seq_bytes", L->mem.kv_bytes_per_seq);
    ffn_json_num(j, "activation_bytes", L->mem.activation_bytes);
    ffn_json_num(j, "usable_bytes", L->mem.usable_bytes);
    ffn_json_obj_end(j);
    ffn_json_u64(j, "max_batch", L->max_batch);
    ffn_json_u64(j, "mem_batch", L->mem_batch);
    ffn_json_num(j, "step_s", L->valid ? L->step.step_s : NAN);
    ffn_json_num(j, "ttft_s", L->ttft_s > 0 ? L->ttft_s : NAN);
    ffn_json_num(j, "tokens_per_s", L->tokens_per_s_fleet);
    ffn_json_num(j, "tokens_per_s_replica", L->tokens_per_s_replica);
    ffn_json_num(j, "tokens_per_s_device", L->tokens_per_s_device);
    ffn_json_num(j, "tokens_per_s_per_watt", L->tokens_per_s_per_watt);
    ffn_json_num(j, "tokens_per_dollar", L->tokens_per_dollar);
    ffn_json_num(j, "usd_per_hour", L->usd_per_hour);
    ffn_json_num(j, "usd_per_million_tokens", L->usd_per_mtok);
    ffn_json_str(j, "bottleneck", L->valid ? ffn_bottleneck_name(L->bottleneck) : "invalid");
    if (!L->feasible) ffn_json_num(j, "miss", L->miss > 0 ? L->miss : NAN);
    if (L->why[0]) ffn_json_str(j, "why", L->why);
    if (L->valid) {
        const ffn_plan_step *s = &L->step;
        ffn_json_obj_begin(j, "step");
        ffn_json_str(j, "phase", ffn_phase_name(s->phase));
        ffn_json_u64(j, "batch", s->batch);
        ffn_json_u64(j, "seqs_per_device", s->seqs_device);
        ffn_json_u64(j, "micro_batches", s->micro_batches);
        ffn_json_num(j, "pipeline_bubble", s->pp_bubble);
        ffn_json_u64(j, "context", s->context);
        ffn_json_num(j, "step_s", s->step_s);
        /* the predicted (median) step's range; step_s is its p90 end with --margin p90 */
        ffn_json_num(j, "step_p10_s", s->step_p10_s);
        ffn_json_num(j, "step_p90_s", s->step_p90_s);
        ffn_json_num(j, "margin_scale", s->margin_scale);
        ffn_json_bool(j, "range_default", s->range_default);
        ffn_json_num(j, "ffn_share", s->ffn_share);
        ffn_json_str(j, "ffn_bound", ffn_bound_name(s->ffn_bound));
        ffn_json_arr_begin(j, "parts");
        const struct {
            const char *name, *label;
            double v;
        } parts[] = {
            {"ffn", "ffn", s->ffn_s - s->ffn_comm_s},
            {"ffn_comm", "ffn", s->ffn_comm_s},
            {"attn_proj", "other", s->attn_proj_s},
            {"norms_rotary", "other", s->elem_s},
            {s->phase == FFN_PHASE_DECODE ? "kv_read" : "attention", "other", s->attn_core_s},
            {"attn_allreduce", "other", s->attn_comm_s},
            {"lm_head", "other", s->lm_head_s},
            {"pp_hops", "other", s->pp_comm_s}};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            ffn_json_obj_begin(j, NULL);
            ffn_json_str(j, "name", parts[i].name);
            ffn_json_str(j, "label", parts[i].label);
            ffn_json_num(j, "seconds", parts[i].v);
            ffn_json_obj_end(j);
        }
        ffn_json_arr_end(j);
        if (s->phase == FFN_PHASE_DECODE) ffn_json_num(j, "kv_read_bytes", s->kv_read_bytes);
        ffn_json_num(j, "attention_flops", s->attn_core_flops);
        ffn_json_run(j, "ffn", &s->ffn);
        ffn_json_obj_end(j);
    }
    ffn_json_obj_end(j);
}

int ffn_plan_write_json(FILE *fp, const ffn_scenario *sc, const ffn_plan_opts *o,
                        const ffn_plan_pair *pairs, size_t np)
{
    ffn_json j;
    ffn_json_doc_begin(&j, fp, "ffnroof.plan/1");
    ffn_json_obj_begin(&j, "scenario");
    ffn_json_str(&j, "name", sc->name);
    if (sc->path[0]) ffn_json_str(&j, "path", sc->path);
    ffn_json_str(&j, "phase", ffn_plan_phase_name(o->phase));
    ffn_json_u64(&j, "prompt", o->prompt);
    ffn_json_u64(&j, "output", o->output);
    ffn_json_str(&j, "wdtype", ffn_dtype_name(o->wdtype));
    ffn_json_str(&j, "adtype", ffn_dtype_name(o->adtype));
    ffn_json_str(&j, "kv_dtype", ffn_dtype_name(o->kv_dtype));
    ffn_json_num(&j, "tpot_s", o->tpot_s > 0 ? o->tpot_s : NAN);
    ffn_json_num(&j, "ttft_s", o->ttft_s > 0 ? o->ttft_s : NAN);
    ffn_json_num(&j, "target_tokens_per_s",
                 o->target_tokens_per_s > 0 ? o->target_tokens_per_s : NAN);
    ffn_json_u64(&j, "max_devices", o->max_devices);
    ffn_json_str(&j, "objective", ffn_objective_name(o->objective));
    ffn_json_str(&j, "margin", o->margin == FFN_MARGIN_P90 ? "p90" : "median");
    ffn_json_obj_end(&j);
    bool any = false;
    ffn_json_arr_begin(&j, "plans");
    for (size_t i = 0; i < np; i++) {
        const ffn_plan_layout *L = shown(&pairs[i]);
        if (!L) continue;
        any |= L->feasible;
        json_layout(&j, NULL, &pairs[i], L, L->feasible ? pairs[i].rank : 0);
    }
    ffn_json_arr_end(&j);
    bool dis = false;
    for (size_t i = 0; i < np; i++)
        dis |= pairs[i].disagg != NULL;
    if (dis) {
        ffn_json_arr_begin(&j, "disaggregated");
        for (size_t i = 0; i < np; i++) {
            const ffn_plan_disagg *g = pairs[i].disagg;
            if (!g) continue;
            ffn_json_obj_begin(&j, NULL);
            ffn_json_str(&j, "model", pairs[i].m->name);
            ffn_json_str(&j, "hw", pairs[i].hw->name);
            ffn_json_bool(&j, "feasible", g->feasible);
            ffn_json_bool(&j, "wins", g->wins);
            if (g->prefill >= 0)
                json_layout(&j, "prefill", &pairs[i], &pairs[i].prefill->layouts[g->prefill], 0);
            if (g->decode >= 0)
                json_layout(&j, "decode", &pairs[i], &pairs[i].decode->layouts[g->decode], 0);
            ffn_json_u64(&j, "prefill_batch", g->prefill_batch);
            ffn_json_num(&j, "prefill_step_s", g->prefill_step_s);
            ffn_json_num(&j, "kv_bytes_per_request", g->kv_bytes);
            ffn_json_num(&j, "kv_transfer_s", g->kv_transfer_s);
            ffn_json_num(&j, "ttft_s", g->ttft_s);
            ffn_json_num(&j, "tpot_s", g->tpot_s);
            ffn_json_num(&j, "tokens_per_s_device", g->tokens_per_s_device);
            ffn_json_num(&j, "prefill_share", g->prefill_share);
            ffn_json_u64(&j, "devices", g->devices);
            ffn_json_num(&j, "aggregated_tokens_per_s_device", g->aggregated_tokens_per_s_device);
            ffn_json_num(&j, "aggregated_prefill_share", g->aggregated_prefill_share);
            ffn_json_str(&j, "why", g->why);
            ffn_json_obj_end(&j);
        }
        ffn_json_arr_end(&j);
    }
    ffn_json_bool(&j, "feasible", any);
    ffn_json_arr_begin(&j, "layouts");
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pairs[i].plan->n_layouts; k++)
            json_layout(&j, NULL, &pairs[i], &pairs[i].plan->layouts[k], 0);
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j);
}

static void csv_text(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"') fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

int ffn_plan_write_csv(FILE *fp, const ffn_plan_pair *pairs, size_t np)
{
    fputs("model,hw,rank,chosen,valid,feasible,tp,dp,ep,pp,replicas,devices,fits,"
          "memory_per_device_bytes,weight_bytes,kv_cache_bytes,activation_bytes,max_batch,"
          "mem_batch,step_s,ffn_s,ffn_comm_s,attn_proj_s,elem_s,attn_core_s,attn_comm_s,lm_head_s,"
          "ffn_share,ttft_s,tokens_per_s,tokens_per_s_device,tokens_per_s_per_watt,"
          "tokens_per_dollar,usd_per_hour,usd_per_million_tokens,bottleneck,miss,why\n",
          fp);
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < pairs[i].plan->n_layouts; k++) {
            const ffn_plan_layout *L = &pairs[i].plan->layouts[k];
            const ffn_plan_step *s = &L->step;
            bool chosen = (int)k == pairs[i].show;
            fprintf(fp, "%s,%s,", pairs[i].m->name, pairs[i].hw->name);
            if (chosen && L->feasible) fprintf(fp, "%d", pairs[i].rank);
            fprintf(fp, ",%d,%d,%d,%llu,%llu,%llu,%llu,%llu,%llu,%d,%.6e,%.6e,%.6e,%.6e,%llu,%llu,",
                    chosen, L->valid, L->feasible, (unsigned long long)L->tp,
                    (unsigned long long)L->dp, (unsigned long long)L->ep, (unsigned long long)L->pp,
                    (unsigned long long)L->replicas, (unsigned long long)L->devices, L->fits,
                    L->mem.total_bytes, L->mem.weight_bytes, L->mem.kv_bytes,
                    L->mem.activation_bytes, (unsigned long long)L->max_batch,
                    (unsigned long long)L->mem_batch);
            if (L->valid)
                fprintf(fp, "%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6g,", s->step_s, s->ffn_s,
                        s->ffn_comm_s, s->attn_proj_s, s->elem_s, s->attn_core_s, s->attn_comm_s,
                        s->lm_head_s, s->ffn_share);
            else
                fputs(",,,,,,,,,", fp);
            double v[] = {L->ttft_s > 0 ? L->ttft_s : NAN,
                          L->tokens_per_s_fleet,
                          L->tokens_per_s_device,
                          L->tokens_per_s_per_watt,
                          L->tokens_per_dollar,
                          L->usd_per_hour,
                          L->usd_per_mtok};
            for (size_t q = 0; q < sizeof v / sizeof v[0]; q++) {
                if (isfinite(v[q]) && (q == 0 || L->max_batch)) fprintf(fp, "%.6e", v[q]);
                fputc(',', fp);
            }
            fprintf(fp, "%s,", L->valid ? ffn_bottleneck_name(L->bottleneck) : "invalid");
            if (!L->feasible && L->miss > 0) fprintf(fp, "%.6g", L->miss);
            fputc(',', fp);
            csv_text(fp, L->why);
            fputc('\n', fp);
        }
    return ferror(fp) ? FFN_EIO : 0;
}

static const char *const step_cols =
    "model,hw,phase,batch,seq,tp,dp,ep,wdtype,adtype,step_s,step_p10_s,step_p90_s,"
    "ffn_s,ffn_comm_s,attn_proj_s,elem_s,attn_core_s,attn_comm_s,lm_head_s,ffn_share,tokens_per_s,"
    "weight_bytes,kv_bytes,activation_bytes,total_bytes,usable_bytes,fits,range_default";

void ffn_sweep_step_csv_header(FILE *fp)
{
    fprintf(fp, "%s\n", step_cols);
}

int ffn_sweep_step_csv_row(FILE *fp, const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                           const ffn_sweep_step *s)
{
    const ffn_plan_step *t = &s->step;
    const ffn_plan_mem *x = &s->mem;
    fprintf(fp,
            "%s,%s,%s,%llu,%llu,%llu,%llu,%llu,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
            "%.6g,%.6g,%.4f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%d\n",
            m->name, hw->name, ffn_phase_name(run->phase), (unsigned long long)run->batch,
            (unsigned long long)run->seq, (unsigned long long)s->shape.tp,
            (unsigned long long)s->shape.dp, (unsigned long long)s->shape.ep,
            ffn_dtype_name(run->wdtype), ffn_dtype_name(run->adtype), t->step_s, t->step_p10_s,
            t->step_p90_s, t->ffn_s, t->ffn_comm_s, t->attn_proj_s, t->elem_s, t->attn_core_s,
            t->attn_comm_s, t->lm_head_s, t->ffn_share, s->tokens_per_s, x->weight_bytes,
            x->kv_bytes, x->activation_bytes, x->total_bytes, x->usable_bytes, x->fits,
            t->range_default);
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_sweep_step_json(FILE *fp, const ffn_model *m, const ffn_hw *hw, const ffn_run *run,
                        const ffn_sweep_step *s)
{
    const ffn_plan_step *t = &s->step;
    const ffn_plan_mem *x = &s->mem;
    ffn_json j;
    ffn_json_init(&j, fp, false);
    ffn_json_obj_begin(&j, NULL);
    ffn_json_str(&j, "model", m->name);
    ffn_json_str(&j, "hw", hw->name);
    ffn_json_str(&j, "phase", ffn_phase_name(run->phase));
    ffn_json_u64(&j, "batch", run->batch);
    ffn_json_u64(&j, "seq", run->seq);
    ffn_json_u64(&j, "tp", s->shape.tp);
    ffn_json_u64(&j, "dp", s->shape.dp);
    ffn_json_u64(&j, "ep", s->shape.ep);
    ffn_json_str(&j, "wdtype", ffn_dtype_name(run->wdtype));
    ffn_json_str(&j, "adtype", ffn_dtype_name(run->adtype));
    ffn_json_obj_begin(&j, "step_s");
    ffn_json_num(&j, "value", t->step_s);
    ffn_json_num(&j, "p10", t->step_p10_s);
    ffn_json_num(&j, "p90", t->step_p90_s);
    ffn_json_bool(&j, "range_default", t->range_default);
    ffn_json_num(&j, "ffn", t->ffn_s);
    ffn_json_num(&j, "ffn_comm", t->ffn_comm_s);
    ffn_json_num(&j, "attn_proj", t->attn_proj_s);
    ffn_json_num(&j, "norms_rotary", t->elem_s);
    ffn_json_num(&j, "attn_core", t->attn_core_s);
    ffn_json_num(&j, "attn_comm", t->attn_comm_s);
    ffn_json_num(&j, "lm_head", t->lm_head_s);
    ffn_json_obj_end(&j);
    ffn_json_num(&j, "ffn_share", t->ffn_share);
    ffn_json_num(&j, "tokens_per_s", s->tokens_per_s);
    ffn_json_obj_begin(&j, "memory_bytes");
    ffn_json_num(&j, "weights", x->weight_bytes);
    ffn_json_num(&j, "kv", x->kv_bytes);
    ffn_json_num(&j, "activations", x->activation_bytes);
    ffn_json_num(&j, "total", x->total_bytes);
    ffn_json_num(&j, "usable", x->usable_bytes);
    ffn_json_obj_end(&j);
    ffn_json_bool(&j, "fits", x->fits);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j) ? FFN_EIO : 0;
}
