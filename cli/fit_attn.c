/* `ffnroof fit` on attention and communication op tables (cli/fit_attn.h): the order of the
 * steps and the report; the fits themselves are sim/attn_fit.c's. Every fit also runs once on
 * 80% of its rows (every fifth row held back) and reports its error on the held-back fifth. */
#define _GNU_SOURCE
#include "fit_attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ffnroof/attn_fit.h"
#include "ffnroof/sim.h"
#include "ffnroof/sort.h"

#define CMD "fit"
/* The largest message vLLM and SGLang hand their custom all-reduce: its registered buffer,
 * CustomAllreduce(max_size=8192 * 1024) (vllm/distributed/device_communicators/
 * custom_all_reduce.py; sglang's custom_all_reduce.py alike). Written into the spec's
 * collectives as custom_max when a custom all-reduce table is fitted and the spec has none. */
#define ENGINE_CUSTOM_AR_MAX_BYTES (8192.0 * 1024.0)

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Replace (or add) the line of hw's block source that begins with `key`. */
static void source_line(char *src, size_t cap, const char *key, const char *line)
{
    char out[1024] = "";
    size_t used = 0;
    for (const char *p = src; *p;) {
        const char *nl = strchr(p, '\n');
        const size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, key, strlen(key)) && len && used + len + 2 < sizeof out) {
            memcpy(out + used, p, len);
            used += len;
            out[used++] = '\n';
            out[used] = '\0';
        }
        p += len + (nl ? 1 : 0);
    }
    snprintf(out + used, sizeof out - used, "%s\n", line);
    snprintf(src, cap, "%s", out);
}

static void today(char *buf, size_t n)
{
    const time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%d", &tm);
}

/* ---- attention ------------------------------------------------------------------------------ */

static const char *const kv_names[FFN_ATTN_KV_COUNT] = {"kv16", "kv8"};

/* Fit one KV class (with its held-back check) into hw. */
static int fit_class(ffn_hw *hw, const ffn_aic_table *t, bool decode, ffn_attn_kv kv,
                     double *held_med, double *held_p90)
{
    ffn_attn_eff e;
    int rc = ffn_attn_fit_checked(hw, t->attn, t->n_attn, decode, kv, &e, held_med, held_p90);
    if (rc) return rc;
    if (decode)
        hw->attn.decode[kv] = e;
    else
        hw->attn.prefill[kv] = e;
    return 0;
}

static void print_eff(const ffn_attn_eff *e, bool decode, const char *kv)
{
    printf("  %s %s: launch %.3f us, per seq %.3g ns, per %s %.3g ns, memory_max %.4f, "
           "compute_max %.4f; p10 %.3f p90 %.3f of measured/predicted over %u rows\n",
           decode ? "decode" : "prefill", kv, e->launch_s * 1e6, e->seq_s * 1e9,
           decode ? "kv head" : "token", e->unit_s * 1e9, e->memory_max, e->compute_max, e->p10,
           e->p90, e->points);
}

static int run_attn(const ffn_fit_attn_req *req, ffn_hw *hw, const ffn_aic_table *t)
{
    const bool decode = t->op == FFN_AIC_DECODE_ATTN;
    double held[FFN_ATTN_KV_COUNT][2];
    bool did[FFN_ATTN_KV_COUNT] = {false, false};
    if (!req->check) {
        /* prefill first when the spec has none: decode holds its compute fraction */
        for (int kv = 0; kv < FFN_ATTN_KV_COUNT; kv++) {
            int rc = fit_class(hw, t, decode, (ffn_attn_kv)kv, &held[kv][0], &held[kv][1]);
            if (rc == FFN_ENOMEM) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
            did[kv] = rc == 0;
        }
        if (!did[0] && !did[1])
            return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "%s: fewer than 8 rows of any KV class",
                                req->data);
        char date[16], line[400];
        today(date, sizeof date);
        snprintf(line, sizeof line, "%s: ffnroof fit --data %s, %s (%s %s on %s)",
                 decode ? "decode" : "prefill", base_name(req->data), date,
                 ffn_engine_name(t->engine), t->version, t->device);
        source_line(hw->attn.source, sizeof hw->attn.source, decode ? "decode:" : "prefill:", line);
    }
    printf("%s: %s attention, %zu rows (%s %s on %s)\n", hw->name, decode ? "decode" : "prefill",
           t->n_attn, ffn_engine_name(t->engine), t->version, t->device);
    for (int kv = 0; kv < FFN_ATTN_KV_COUNT; kv++) {
        const ffn_attn_eff *e = decode ? &hw->attn.decode[kv] : &hw->attn.prefill[kv];
        if (e->fitted) print_eff(e, decode, kv_names[kv]);
    }
    /* the errors per kernel and KV dtype, then over all rows */
    double *err = malloc((t->n_attn + 1) * sizeof *err);
    if (!err) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    printf("  %-34s %-9s %8s %9s %9s\n", "kernel", "kv", "rows", "median", "p90");
    for (size_t k = 0; k <= t->n_kernels; k++)
        for (int kv = 0; kv < FFN_ATTN_KV_COUNT; kv++) {
            size_t n = 0;
            for (size_t i = 0; i < t->n_attn; i++) {
                const ffn_attn_point *p = &t->attn[i];
                if (k < t->n_kernels && p->kernel != k) continue;
                if (ffn_attn_kv_class(p->kv_dtype) != (ffn_attn_kv)kv) continue;
                err[n++] = fabs(ffn_attn_point_predict(hw, p, decode) / p->time_s - 1.0);
            }
            if (!n) continue;
            double med, p90;
            ffn_err_median_p90(err, n, &med, &p90);
            printf("  %-34s %-9s %8zu %8.1f%% %8.1f%%\n",
                   k < t->n_kernels ? t->kernels[k] : "(all)", kv_names[kv], n, 100 * med,
                   100 * p90);
        }
    for (int kv = 0; kv < FFN_ATTN_KV_COUNT; kv++)
        if (did[kv] && !isnan(held[kv][0]))
            printf("  held-back fifth, %s: median %.1f%%, p90 %.1f%% (fitted on the other 80%%)\n",
                   kv_names[kv], 100 * held[kv][0], 100 * held[kv][1]);
    if (req->points)
        for (size_t i = 0; i < t->n_attn; i++) {
            const ffn_attn_point *p = &t->attn[i];
            const double pr = ffn_attn_point_predict(hw, p, decode);
            printf("  %s b=%u len=%llu h=%u kv=%u d=%u w=%llu %s: measured %.4g ms, predicted "
                   "%.4g ms, %+.1f%%\n",
                   t->kernels[p->kernel], p->batch, (unsigned long long)p->len, p->heads,
                   p->kv_heads, p->head_dim, (unsigned long long)p->window,
                   ffn_dtype_name(p->kv_dtype), p->time_s * 1e3, pr * 1e3,
                   100 * (pr / p->time_s - 1));
        }
    free(err);
    return FFN_EXIT_OK;
}

/* ---- collectives ---------------------------------------------------------------------------- */

static int run_comm(const ffn_fit_attn_req *req, ffn_hw *hw, const ffn_aic_table *t)
{
    ffn_coll_model *m = &hw->scaleup.coll;
    double held[FFN_COLL_COUNT][FFN_COLL_MAX_SIZES];
    for (int op = 0; op < FFN_COLL_COUNT; op++)
        for (int i = 0; i < FFN_COLL_MAX_SIZES; i++)
            held[op][i] = NAN;
    if (!req->check) {
        if (ffn_coll_fit_points(t->comm, t->n_comm, m, held))
            return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
        char date[16], line[400];
        today(date, sizeof date);
        const bool custom = t->op == FFN_AIC_CUSTOM_AR;
        if (custom && !(m->custom_max_bytes > 0)) m->custom_max_bytes = ENGINE_CUSTOM_AR_MAX_BYTES;
        snprintf(line, sizeof line, "%s: ffnroof fit --data %s, %s (%s %s on %s)",
                 custom ? "custom_all_reduce" : "nccl", base_name(req->data), date,
                 custom ? ffn_engine_name(t->engine) : "NCCL", t->version, t->device);
        source_line(m->source, sizeof m->source, custom ? "custom_all_reduce:" : "nccl:", line);
    }
    printf("%s: %s, %zu rows (%s %s on %s)\n", hw->name,
           t->op == FFN_AIC_CUSTOM_AR ? "custom all-reduce" : "NCCL collectives", t->n_comm,
           ffn_engine_name(t->engine), t->version, t->device);
    printf("  %-18s %5s %6s %11s %12s %9s %9s %11s\n", "op", "gpus", "rows", "latency", "bus bw",
           "median", "p90", "held median");
    double *err = malloc((t->n_comm + 1) * sizeof *err),
           *all = malloc((t->n_comm + 1) * sizeof *all);
    if (!err || !all) {
        free(err);
        free(all);
        return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
    }
    size_t na = 0;
    for (int op = 0; op < FFN_COLL_COUNT; op++) {
        uint32_t g[FFN_COLL_MAX_SIZES];
        const int ng = ffn_coll_sizes(t->comm, t->n_comm, op, g);
        for (int i = 0; i < ng; i++) {
            size_t n = 0;
            for (size_t r = 0; r < t->n_comm; r++) {
                const ffn_coll_point *p = &t->comm[r];
                if (p->op != op || p->gpus != g[i] || p->eager) continue;
                err[n] = fabs(ffn_coll_point_predict(&hw->scaleup, p) / p->time_s - 1.0);
                all[na++] = err[n++];
            }
            double med, p90;
            ffn_err_median_p90(err, n, &med, &p90);
            const ffn_coll_fit *f = NULL;
            for (int j = 0; j < m->n[op]; j++)
                if (m->fit[op][j].gpus == g[i]) f = &m->fit[op][j];
            printf("  %-18s %5u %6zu %8.2f us %7.1f GB/s %8.1f%% %8.1f%%", ffn_coll_name(op), g[i],
                   n, f ? f->latency_s * 1e6 : NAN, f ? f->bus_bps / 1e9 : NAN, 100 * med,
                   100 * p90);
            if (f && !isnan(held[op][f - m->fit[op]]))
                printf(" %10.1f%%", 100 * held[op][f - m->fit[op]]);
            putchar('\n');
        }
    }
    double med, p90;
    ffn_err_median_p90(all, na, &med, &p90);
    printf("  %-18s %5s %6zu %11s %12s %8.1f%% %8.1f%%\n", "(all, graph)", "", na, "", "",
           100 * med, 100 * p90);
    if (req->points)
        for (size_t r = 0; r < t->n_comm; r++) {
            const ffn_coll_point *p = &t->comm[r];
            const double pr = ffn_coll_point_predict(&hw->scaleup, p);
            printf("  %s n=%u %.0f B%s: measured %.4g us, predicted %.4g us, %+.1f%%\n",
                   ffn_coll_name(p->op), p->gpus, p->bytes, p->eager ? " eager" : "",
                   p->time_s * 1e6, pr * 1e6, 100 * (pr / p->time_s - 1));
        }
    free(err);
    free(all);
    return FFN_EXIT_OK;
}

int ffn_cli_fit_attn(const ffn_fit_attn_req *req, ffn_hw *hw, const ffn_aic_table *t)
{
    if (t->n_attn) return run_attn(req, hw, t);
    return run_comm(req, hw, t);
}
