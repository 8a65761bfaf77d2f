/* What the predicting commands read alike (cli/cli.h): the dtypes of weights, activations and
 * the KV cache (predict and compare into a run, plan and serve into plan options), the runtime's
 * memory reserve, prices from --price and from the shipped dated table. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/prices.h"
#include "ffnroof/scenario.h"
#include "ffnroof/units.h"

int ffn_cli_collect_with_prices(const char *cmd, int argc, char **argv, const int *accept,
                                const char **val, const char **prices, size_t *n_prices,
                                void (*usage)(FILE *))
{
    int c;
    ffn_cli_seen seen = {0};
    *n_prices = 0;
    while ((c = ffn_cli_getopt(cmd, argc, argv, accept, &seen, (const int[]){FFN_O_PRICE, 0})) !=
           -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        if (c == FFN_O_PRICE) {
            if (*n_prices >= FFN_SC_MAX_REFS) return ffn_cli_usage(cmd, "too many --price options");
            prices[(*n_prices)++] = optarg;
        }
        const int r = ffn_cli_collect(cmd, c, argv, val, usage);
        if (r >= 0) return r;
    }
    if (optind < argc) return ffn_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return -1;
}

int ffn_cli_plan_dtypes(const char *cmd, const char *dtype, const char *wdtype, const char *adtype,
                        const char *kv_dtype, ffn_plan_opts *o)
{
    int rc;
    if (dtype && (wdtype || adtype))
        return ffn_cli_usage(cmd, "use either --dtype or --wdtype/--adtype, not both");
    if (dtype) {
        if ((rc = ffn_cli_dtype(cmd, "--dtype", dtype, &o->wdtype))) return rc;
        o->adtype = o->kv_dtype = o->wdtype;
    }
    if (wdtype && (rc = ffn_cli_dtype(cmd, "--wdtype", wdtype, &o->wdtype))) return rc;
    if (adtype) {
        if ((rc = ffn_cli_dtype(cmd, "--adtype", adtype, &o->adtype))) return rc;
        o->kv_dtype = o->adtype;
    }
    if (kv_dtype && (rc = ffn_cli_dtype(cmd, "--kv-dtype", kv_dtype, &o->kv_dtype))) return rc;
    return 0;
}

int ffn_cli_run_dtypes(const char *cmd, const ffn_cli_seen *seen, ffn_dtype dt, ffn_run *run)
{
    const bool w = ffn_cli_given(seen, FFN_O_WDTYPE), a = ffn_cli_given(seen, FFN_O_ADTYPE);
    if (ffn_cli_given(seen, FFN_O_DTYPE)) {
        if (w || a) return ffn_cli_usage(cmd, "use either --dtype or --wdtype/--adtype, not both");
        run->wdtype = run->adtype = dt;
    } else if (w && !a && (run->wdtype == FFN_DT_FP8 || ffn_dtype_block_scaled(run->wdtype))) {
        /* an fp8 or fp4 checkpoint runs with its activations in the same format where the
         * device has the units (W8A8, W4A4), else dequantised beside 16-bit ones */
        run->adtype = run->wdtype;
    }
    return 0;
}

int ffn_cli_reserve(const char *cmd, const char *s, double *out)
{
    char why[160];
    double r;
    if (ffn_units_parse(s, FFN_UNIT_BYTES, &r, why, sizeof why) || !(r >= 0) || r > 1e15)
        return ffn_cli_usage(cmd, "--reserve needs a size such as 1GiB or 0; got '%s'", s);
    *out = r;
    return 0;
}

int ffn_cli_price_flags(const char *cmd, const char *const *prices, size_t n,
                        struct ffn_scenario *sc)
{
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(prices[i], '=');
        size_t k = 0;
        if (eq)
            while (k < sc->n_hws && (strlen(sc->hws[k].name) != (size_t)(eq - prices[i]) ||
                                     strncmp(sc->hws[k].name, prices[i], (size_t)(eq - prices[i]))))
                k++;
        if (!eq || k == sc->n_hws)
            return ffn_cli_usage(
                cmd, "--price needs DEVICE=USD for a device of --hw/the scenario; got '%s'",
                prices[i]);
        int rc = ffn_cli_double(cmd, "--price", eq + 1, 1e-6, 1e6, &sc->price_per_hour[k]);
        if (rc) return rc;
    }
    return 0;
}

int ffn_cli_list_prices(struct ffn_scenario *sc, const ffn_hw *hws, const ffn_price **listed)
{
    static ffn_price_table table;
    char dir[PATH_MAX], path[PATH_MAX + 16];
    for (size_t k = 0; k < sc->n_hws; k++)
        listed[k] = NULL;
    if (!ffn_cli_data_dir("hw", dir, sizeof dir)) return 0;
    snprintf(path, sizeof path, "%s/prices.tsv", dir);
    if (access(path, R_OK) != 0) return 0;
    ffn_diag d;
    if (ffn_prices_load(path, &table, &d)) return ffn_cli_diag(&d);
    for (size_t k = 0; k < sc->n_hws; k++)
        if (!(sc->price_per_hour[k] > 0) && (listed[k] = ffn_price_find(&table, hws[k].name)))
            sc->price_per_hour[k] = listed[k]->usd_per_hour;
    return 0;
}

int ffn_cli_check_context(const char *cmd, const ffn_model *models, size_t n, double tokens)
{
    for (size_t i = 0; i < n; i++)
        if (models[i].context && tokens > (double)models[i].context)
            return ffn_cli_fail(FFN_EXIT_USAGE, cmd,
                                "prompt + output of up to %.0f tokens is beyond %s's context of "
                                "%llu tokens (max_position_embeddings); shorten them",
                                tokens, models[i].name, (unsigned long long)models[i].context);
    return 0;
}

int ffn_cli_slo_time(const char *cmd, const char *opt, const char *s, double *out)
{
    char why[160];
    if (ffn_units_parse(s, FFN_UNIT_TIME, out, why, sizeof why) || !(*out > 0 && *out <= 3600))
        return ffn_cli_usage(cmd, "%s needs a time in (0, 1 h], e.g. 50ms or 2s; got '%s'", opt, s);
    return 0;
}
