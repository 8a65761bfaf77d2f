/* The writers of `ffnroof serve` (include/ffnroof/serve_write.h, docs/plan.md "Serving"): every
 * simulated point of every (model, device) pair with its frontier and pick flags, as CSV or one
 * JSON object a line. The caller owns the stream; nothing here opens files or exits. */
#include <math.h>
#include <stdio.h>

#include "ffnroof/serve.h"
#include "ffnroof/serve_write.h"

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
            fprintf(fp,
                    "%s,%s,%llu,%llu,%llu,%llu,%llu,%s,%.6g,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
                    "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%d,%d,%.6g\n",
                    p[i].m->name, p[i].hw->name, (unsigned long long)pt->shape.tp,
                    (unsigned long long)pt->shape.dp, (unsigned long long)pt->shape.ep,
                    (unsigned long long)pt->shape.pp,
                    (unsigned long long)ffn_plan_shape_devices(&pt->shape),
                    ffn_serve_mode_name(o->mode),
                    o->mode == FFN_SERVE_RATE ? o->rate : pt->concurrency, r->stable, r->ttft_p50_s,
                    r->ttft_p90_s, r->tpot_p50_s, r->tpot_p90_s, r->output_tokens_per_s_device,
                    pt->tps_device_lo, pt->tps_device_hi, r->user_tokens_per_s, r->requests_per_s,
                    r->mean_running, r->mean_context, r->mean_in_system, r->little_in_system,
                    ffn_serve_bound_name(r->bound), pt->frontier, (int)k == p[i].pick,
                    ffn_serve_usd_per_mtok(p[i].price, r->output_tokens_per_s_device));
        }
    return ferror(fp) ? FFN_EIO : 0;
}

int ffn_serve_write_json(FILE *fp, const ffn_serve_opts *o, const ffn_serve_pair *p, size_t np)
{
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < p[i].n; k++) {
            const ffn_serve_point *pt = &p[i].pts[k];
            const ffn_serve_result *r = &pt->r;
            fprintf(
                fp,
                "{\"model\":\"%s\",\"device\":\"%s\",\"layout\":{\"tp\":%llu,\"dp\":%llu,"
                "\"ep\":%llu,\"pp\":%llu},\"devices\":%llu,\"mode\":\"%s\",\"drive\":%.6g,"
                "\"prompt\":%llu,\"output\":%llu,\"stable\":%s,\"queue_growth\":%.6g,"
                "\"ttft_s\":{\"p50\":%.6g,\"p90\":%.6g,\"mean\":%.6g,\"p50_range\":[%.6g,%.6g]},"
                "\"tpot_s\":{\"p50\":%.6g,\"p90\":%.6g,\"mean\":%.6g,\"p50_range\":[%.6g,%.6g]},"
                "\"tokens_per_s_device\":{\"value\":%.6g,\"range\":[%.6g,%.6g]},"
                "\"user_tokens_per_s\":{\"value\":%.6g,\"range\":[%.6g,%.6g]},"
                "\"requests_per_s\":%.6g,\"total_tokens_per_s\":%.6g,\"mean_running\":%.6g,"
                "\"mean_context\":%.6g,\"mean_in_system\":%.6g,\"little_in_system\":%.6g,"
                "\"kv_tokens\":%.6g,\"shares\":{\"gemm\":%.4g,\"attention\":%.4g,"
                "\"interconnect\":%.4g,\"overhead\":%.4g},\"idle_share\":%.4g,"
                "\"bound\":\"%s\",\"frontier\":%s,\"pick\":%s,\"usd_per_mtok\":%.6g}\n",
                p[i].m->name, p[i].hw->name, (unsigned long long)pt->shape.tp,
                (unsigned long long)pt->shape.dp, (unsigned long long)pt->shape.ep,
                (unsigned long long)pt->shape.pp,
                (unsigned long long)ffn_plan_shape_devices(&pt->shape),
                ffn_serve_mode_name(o->mode), o->mode == FFN_SERVE_RATE ? o->rate : pt->concurrency,
                (unsigned long long)o->isl, (unsigned long long)o->osl,
                r->stable ? "true" : "false", r->queue_growth, r->ttft_p50_s, r->ttft_p90_s,
                r->ttft_mean_s, pt->ttft_lo_s, pt->ttft_hi_s, r->tpot_p50_s, r->tpot_p90_s,
                r->tpot_mean_s, pt->tpot_lo_s, pt->tpot_hi_s, r->output_tokens_per_s_device,
                pt->tps_device_lo, pt->tps_device_hi, r->user_tokens_per_s, pt->user_tps_lo,
                pt->user_tps_hi, r->requests_per_s, r->total_tokens_per_s, r->mean_running,
                r->mean_context, r->mean_in_system, r->little_in_system, r->kv_tokens, r->share[0],
                r->share[1], r->share[2], r->share[3], r->idle_share,
                ffn_serve_bound_name(r->bound), pt->frontier ? "true" : "false",
                (int)k == p[i].pick ? "true" : "false",
                ffn_serve_usd_per_mtok(p[i].price, r->output_tokens_per_s_device));
        }
    return ferror(fp) ? FFN_EIO : 0;
}
