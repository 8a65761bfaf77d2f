/* `ffnroof compare`: one model on several devices side by side - prefill and decode FFN latency
 * per layer and for the model, FFN tokens/s and tokens/s per watt, the ridge point, whether the
 * weights fit and how many devices they need, the MoE breakdown - as a table, JSON or CSV, and
 * as charts (latency, roofline, MoE) through the templates in plots/. The options, the loading
 * and the charts are shared with `report --compare` (cli/compare_setup.c). */
#include "pictures.h"

#include <string.h>

int ffn_cmd_compare(int argc, char **argv)
{
    static ffn_compare c;
    ffn_format fmt = FFN_FMT_TABLE;
    const char *out = NULL, *plots = NULL;
    int rc = ffn_compare_setup("compare", argc, argv, &c, &fmt, &out, &plots);
    if (rc == -1) return FFN_EXIT_OK; /* --help */
    if (rc) return rc;
    bool render = true;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--no-render")) render = false;
    if (plots) {
        if ((rc = ffn_cli_prepare_dir("compare", plots))) return rc;
        char names[3][64];
        int n;
        if ((rc = ffn_compare_plots("compare", &c, plots, "", 0, 0, render, names, &n))) return rc;
    }
    ffn_cli_out o;
    if ((rc = ffn_cli_out_open("compare", &o, out))) return rc;
    int wr = ffn_compare_write(o.fp, &c, fmt);
    return ffn_cli_out_close("compare", &o, wr == 0);
}
