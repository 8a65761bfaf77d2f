/* The latency and MoE chart writers (include/ffnroof/plot.h): FFN time per layer against tokens
 * per step with each device's ridge marked, and MoE layer time as stacked bars, each as a gnuplot
 * data file and a script from plots/. */
#include "ffnroof/plot.h"

#include <math.h>
#include <string.h>

#include "ffnroof/units.h"
#include "plot_internal.h"

int ffn_plot_latency_write(const ffn_latency_chart *c, const char *template_text,
                           const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    int used = 0;
    for (int s = 0; s < c->n_series; s++)
        for (int i = 0; i < c->s[s].n; i++) {
            double x = c->s[s].tokens[i], y = c->s[s].seconds[i];
            if (!(x > 0) || !(y > 0) || !isfinite(y)) continue;
            used++;
            xlo = fmin(xlo, x), xhi = fmax(xhi, x), ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        }
    if (!used)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no latency points");
    for (int d = 0; d < c->n_dev; d++)
        if (c->ridge_tokens[d] > 0 && isfinite(c->ridge_tokens[d]))
            xlo = fmin(xlo, c->ridge_tokens[d]), xhi = fmax(xhi, c->ridge_tokens[d]);
    double xmin, xmax, ymin, ymax;
    ffn_plot_log_range(xlo / 1.5, xhi * 1.5, &xmin, &xmax);
    ffn_plot_log_range(ylo / 1.5, yhi * 1.5, &ymin, &ymax);

    ffn__membuf setup;
    ffn__plotcmd pc;
    int rc = ffn__plot_begin(&setup, &pc, diag);
    if (rc) return rc;
    fprintf(data,
            "# ffnroof FFN latency data: x = tokens per step, y = FFN time per layer (s)\n"
            "# chart: %s\n# axes: x [%g:%g], y [%g:%g]\n",
            c->title, xmin, xmax, ymin, ymax);
    int idx = 0;
    char lab[160];
    for (int s = 0; s < c->n_series; s++) {
        const ffn_latency_series *se = &c->s[s];
        if (se->n <= 0) continue;
        ffn__plot_clean(lab, sizeof lab, se->label);
        fprintf(data, "\n\n# [%d] %s: %s %s (tokens, seconds per layer)\n", idx, lab,
                ffn_phase_name(se->phase), se->measured ? "measured" : "predicted");
        for (int i = 0; i < se->n; i++)
            fprintf(data, "%.6g %.6g\n", se->tokens[i], se->seconds[i]);
        int lt = se->device + 1;
        bool decode = se->phase == FFN_PHASE_DECODE;
        if (se->measured)
            ffn__plot_clause(&pc, "datafile index %d with points lt %d pt %d ps 1.4 title \"%s\"",
                             idx, lt, decode ? 9 : 7, lab);
        else
            ffn__plot_clause(
                &pc, "datafile index %d with linespoints lt %d dt %d pt %d ps 0.9 title \"%s\"",
                idx, lt, decode ? 2 : 1, decode ? 8 : 6, lab);
        idx++;
    }
    for (int d = 0; d < c->n_dev; d++) {
        double r = c->ridge_tokens[d];
        if (!(r > 0) || !isfinite(r)) continue;
        ffn__plot_clean(lab, sizeof lab, c->device[d]);
        fprintf(data,
                "\n\n# [%d] %s: ridge point (tokens per step where the FFN turns "
                "compute-bound)\n%.6g %.6g\n%.6g %.6g\n",
                idx, lab, r, ymin, r, ymax);
        ffn__plot_clause(
            &pc, "datafile index %d with lines lt %d lw 1.2 dt 4 title \"%s ridge (%.0f tokens)\"",
            idx, d + 1, lab, r);
        idx++;
    }
    const double xr[2] = {xmin, xmax}, yr[2] = {ymin, ymax};
    return ffn__plot_end(data, script, template_text, f, c->title, xr, yr, NULL, &setup, &pc, diag);
}

int ffn_plot_moe_write(const ffn_moe_chart *c, const char *template_text, const ffn_plot_files *f,
                       FILE *data, FILE *script, ffn_diag *diag)
{
    if (c->n_bars <= 0)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no MoE bars");
    static const char *const parts[] = {"router", "dispatch", "experts",
                                        "shared", "combine",  "alltoall"};
    static const char *const titles[] = {"router",         "dispatch", "routed experts",
                                         "shared experts", "combine",  "all-to-all (EP)"};
    bool used[6] = {false};
    double top = 0, low = INFINITY;
    char lab[160], tot[32], group[64] = "", prev[64] = "";
    /* bars of one device ("h100-sxm b=8": the words before the last) stand together, a gap
     * between devices; with many bars only every k-th is labelled so the labels do not collide */
    const int every = c->n_bars > 24 ? 4 : c->n_bars > 12 ? 2 : 1;
    int groups = 0;
    fprintf(data,
            "# ffnroof MoE data: seconds per MoE layer on the busiest device\n# chart: %s\n"
            "# label router dispatch experts shared combine alltoall total \"total\" x \"tic\" "
            "and each part's share of the total stacked (%%, router first: cum1 .. cum6)\n",
            c->title);
    fprintf(data, "\n\n# [0] one row per bar: its parts, their sum and the sum as text, its x and "
                  "its tick label, the stacked shares\n");
    double xmax = 0;
    for (int b = 0; b < c->n_bars; b++) {
        const ffn_moe_bar *x = &c->bars[b];
        double v[6] = {x->router_s, x->dispatch_s, x->expert_s,
                       x->shared_s, x->combine_s,  x->alltoall_s};
        double sum = 0;
        for (int k = 0; k < 6; k++) {
            if (!(v[k] >= 0) || !isfinite(v[k])) v[k] = 0;
            used[k] |= v[k] > 0;
            if (v[k] > 0) low = fmin(low, v[k]);
            sum += v[k];
        }
        top = fmax(top, sum);
        ffn__plot_clean(lab, sizeof lab, x->label);
        const char *sp = strrchr(lab, ' ');
        snprintf(group, sizeof group, "%.*s", sp ? (int)(sp - lab) : 0, lab);
        if (b == 0 || strcmp(group, prev)) groups++;
        snprintf(prev, sizeof prev, "%s", group);
        const double xp = (double)b + (double)(groups - 1);
        xmax = xp;
        const bool tic = b % every == 0 || b == c->n_bars - 1;
        fprintf(data, "\"%s\" %.6g %.6g %.6g %.6g %.6g %.6g %.6g \"%s\" %g \"%s\"", lab, v[0], v[1],
                v[2], v[3], v[4], v[5], sum,
                sum > 0 ? ffn_units_str(tot, sizeof tot, sum, FFN_UNIT_TIME) : "", xp,
                tic ? lab : "");
        double cum = 0;
        for (int k = 0; k < 6; k++) {
            cum += sum > 0 ? 100.0 * v[k] / sum : 0;
            fprintf(data, " %.6g", cum);
        }
        fputc('\n', data);
    }
    if (!(top > 0))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: every MoE time is 0");
    ffn__plotcmd pc;
    int rc = ffn__plot_begin(NULL, &pc, diag);
    if (rc) return rc;
    FILE *fp = pc.mb.fp;
    /* the upper panel: shares stacked to 100%, each part from the top of the stack down so the
     * later (smaller) boxes are drawn over the earlier; the lower: the totals on a log axis */
    fprintf(fp,
            "set multiplot title chart_title font \",13\"\n"
            "set lmargin at screen 0.09\nset rmargin at screen 0.80\n"
            "set tmargin at screen 0.90\nset bmargin at screen 0.52\n"
            "set xrange [-0.7:%g]\nunset logscale y\nset yrange [0:100]\n"
            "set ylabel \"share of the layer (%%)\"\nset format y \"%%g%%%%\"\n"
            "set ytics 20\nunset mytics\nset xtics format \"\"\nunset xlabel\n",
            xmax + 0.7);
    for (int k = 5; k >= 0; k--) {
        if (!used[k]) continue;
        ffn__plot_clause(&pc,
                         "datafile index 0 using 10:%d:(bar_width) with boxes @%s_style "
                         "title \"%s\"",
                         12 + k, parts[k], titles[k]);
    }
    double yr[2];
    ffn_plot_log_range(fmax(top * 1e-4, fmin(low, top) / 2), top * 3, &yr[0], &yr[1]);
    char xl[80];
    ffn__plot_clean(xl, sizeof xl, c->xlabel);
    fprintf(fp,
            "\nset tmargin at screen 0.46\nset bmargin at screen %.2f\nunset title\n"
            "set logscale y 10\nset yrange [%g:%g]\nset ytics auto\nset mytics 10\n"
            "set format y \"%%.0s %%cs\"\nset ylabel \"layer time\"\n"
            "set xtics rotate by -30 left format \"%%g\"\nset xlabel x_label\n",
            c->n_bars > 12 ? 0.16 : 0.12, yr[0], yr[1]);
    pc.n = 0; /* a new plot command */
    ffn__plot_clause(&pc, "datafile index 0 using 10:8:(bar_width):xtic(11) with boxes "
                          "@total_style title \"layer total\"");
    if (c->n_bars <= 16)
        ffn__plot_clause(&pc, "datafile index 0 using 10:8:9 with labels @total_label_style "
                              "notitle");
    fputs("\nunset multiplot", fp);
    return ffn__plot_end(data, script, template_text, f, c->title, NULL, yr, c->xlabel, NULL, &pc,
                         diag);
}
