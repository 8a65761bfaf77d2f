/* The writers of `ffnroof serve` (include/ffnroof/serve_write.h, docs/plan.md "Serving"): every
 * simulated point of every (model, device) pair with its frontier and pick flags, as CSV or one
 * JSON object a line (ffnroof/json.h: a quantity that does not apply, such as the cost of a
 * device without a price, is an empty cell or null). The caller owns the stream; nothing here
 * opens files or exits. */
#include <stdio.h>

#include "ffnroof/json.h"
#include "ffnroof/serve.h"
#include "ffnroof/serve_write.h"

static double drive(const ffn_serve_opts *o, const ffn_serve_point *pt)
{
    return o->mode == FFN_SERVE_RATE ? o->rate : pt->concurrency;
}

int ffn_serve_write_csv(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np)
{
    fputs("model,device,tp,dp,ep,pp,devices,mode,drive,stable,ttft_p50_s,ttft_p90_s,tpot_p50_s,"
          "tpot_p90_s,tokens_per_s_device,tokens_per_s_device_lo,tokens_per_s_device_hi,"
          "user_tokens_per_s,requests_per_s,mean_running,mean_context,mean_in_system,"
          "little_in_system,bound,frontier,pick,usd_per_mtok\n",
          fp);
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < p[i].n; k++) {
            const ffn_serve_point *pt = &p[i].pts[k];
            const ffn_serve_result *r = &pt->r;
            fprintf(fp, "%s,%s,%llu,%llu,%llu,%llu,%llu,%s", p[i].m->name, p[i].hw->name,
                    (unsigned long long)pt->shape.tp, (unsigned long long)pt->shape.dp,
                    (unsigned long long)pt->shape.ep, (unsigned long long)pt->shape.pp,
                    (unsigned long long)ffn_plan_shape_devices(&pt->shape),
                    ffn_serve_mode_name(o->mode));
            ffn_csv_num(fp, drive(o, pt), 6);
            fprintf(fp, ",%d", r->stable);
            const double v[] = {r->ttft_p50_s,
                                r->ttft_p90_s,
                                r->tpot_p50_s,
                                r->tpot_p90_s,
                                r->output_tokens_per_s_device,
                                pt->tps_device_lo,
                                pt->tps_device_hi,
                                r->user_tokens_per_s,
                                r->requests_per_s,
                                r->mean_running,
                                r->mean_context,
                                r->mean_in_system,
                                r->little_in_system};
            for (size_t c = 0; c < sizeof v / sizeof *v; c++)
                ffn_csv_num(fp, v[c], 6);
            fprintf(fp, ",%s,%d,%d", ffn_serve_bound_name(r->bound), pt->frontier,
                    (int)k == p[i].pick);
            ffn_csv_num(fp, ffn_serve_usd_per_mtok(p[i].price, r->output_tokens_per_s_device), 6);
            fputc('\n', fp);
        }
    return ferror(fp) ? FFN_EIO : 0;
}

/* [lo, hi] under key: a quantity's values at the device's p10 and p90 step times */
static void range(ffn_json *j, const char *key, double lo, double hi)
{
    ffn_json_arr_begin(j, key);
    ffn_json_num(j, NULL, lo);
    ffn_json_num(j, NULL, hi);
    ffn_json_arr_end(j);
}

/* {"p50": .., "p90": .., "mean": .., "p50_range": [lo, hi]} under key */
static void quantiles(ffn_json *j, const char *key, double p50, double p90, double mean, double lo,
                      double hi)
{
    ffn_json_obj_begin(j, key);
    ffn_json_num(j, "p50", p50);
    ffn_json_num(j, "p90", p90);
    ffn_json_num(j, "mean", mean);
    range(j, "p50_range", lo, hi);
    ffn_json_obj_end(j);
}

/* {"value": v, "range": [lo, hi]} under key */
static void ranged(ffn_json *j, const char *key, double v, double lo, double hi)
{
    ffn_json_obj_begin(j, key);
    ffn_json_num(j, "value", v);
    range(j, "range", lo, hi);
    ffn_json_obj_end(j);
}

int ffn_serve_write_json(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np)
{
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < p[i].n; k++) {
            const ffn_serve_point *pt = &p[i].pts[k];
            const ffn_serve_result *r = &pt->r;
            ffn_json j;
            ffn_json_init(&j, fp, false);
            ffn_json_obj_begin(&j, NULL);
            ffn_json_str(&j, "model", p[i].m->name);
            ffn_json_str(&j, "device", p[i].hw->name);
            ffn_json_obj_begin(&j, "layout");
            ffn_json_u64(&j, "tp", pt->shape.tp);
            ffn_json_u64(&j, "dp", pt->shape.dp);
            ffn_json_u64(&j, "ep", pt->shape.ep);
            ffn_json_u64(&j, "pp", pt->shape.pp);
            ffn_json_obj_end(&j);
            ffn_json_u64(&j, "devices", ffn_plan_shape_devices(&pt->shape));
            ffn_json_str(&j, "mode", ffn_serve_mode_name(o->mode));
            ffn_json_num(&j, "drive", drive(o, pt));
            ffn_json_u64(&j, "prompt", o->isl);
            ffn_json_u64(&j, "output", o->osl);
            ffn_json_str(&j, "lengths",
                         o->sharegpt_lengths ? "sharegpt"
                         : o->isl_spread > 0 ? "uniform"
                                             : "fixed");
            ffn_json_num(&j, "spread", o->isl_spread);
            ffn_json_bool(&j, "stable", r->stable);
            ffn_json_num(&j, "queue_growth", r->queue_growth);
            quantiles(&j, "ttft_s", r->ttft_p50_s, r->ttft_p90_s, r->ttft_mean_s, pt->ttft_lo_s,
                      pt->ttft_hi_s);
            quantiles(&j, "tpot_s", r->tpot_p50_s, r->tpot_p90_s, r->tpot_mean_s, pt->tpot_lo_s,
                      pt->tpot_hi_s);
            ranged(&j, "tokens_per_s_device", r->output_tokens_per_s_device, pt->tps_device_lo,
                   pt->tps_device_hi);
            ranged(&j, "user_tokens_per_s", r->user_tokens_per_s, pt->user_tps_lo, pt->user_tps_hi);
            ffn_json_num(&j, "requests_per_s", r->requests_per_s);
            ffn_json_num(&j, "total_tokens_per_s", r->total_tokens_per_s);
            ffn_json_num(&j, "mean_running", r->mean_running);
            ffn_json_num(&j, "mean_context", r->mean_context);
            ffn_json_num(&j, "mean_in_system", r->mean_in_system);
            ffn_json_num(&j, "little_in_system", r->little_in_system);
            ffn_json_num(&j, "kv_tokens", r->kv_tokens);
            ffn_json_u64(&j, "preemptions", r->preemptions);
            ffn_json_obj_begin(&j, "shares");
            static const char *const share[] = {"gemm", "attention", "interconnect", "overhead"};
            for (int s = 0; s < 4; s++)
                ffn_json_num(&j, share[s], r->share[s]);
            ffn_json_obj_end(&j);
            ffn_json_num(&j, "idle_share", r->idle_share);
            ffn_json_str(&j, "bound", ffn_serve_bound_name(r->bound));
            ffn_json_bool(&j, "frontier", pt->frontier);
            ffn_json_bool(&j, "pick", (int)k == p[i].pick);
            ffn_json_num(&j, "usd_per_mtok",
                         ffn_serve_usd_per_mtok(p[i].price, r->output_tokens_per_s_device));
            ffn_json_obj_end(&j);
            if (ffn_json_finish(&j)) return FFN_EIO;
        }
    return ferror(fp) ? FFN_EIO : 0;
}
