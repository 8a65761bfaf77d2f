/* The serving frontier chart (include/ffnroof/plot.h, ffn_pareto_chart): tokens/s per device
 * against tokens/s per user, gnuplot data and script from plots/pareto.gp. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/plot.h"
#include "plot_internal.h"

typedef struct xy {
    double x, y;
} xy;

static int by_x(const void *a, const void *b)
{
    const xy *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x;
}

int ffn_plot_pareto_write(const ffn_pareto_chart *c, const char *template_text,
                          const ffn_plot_files *f, FILE *data, FILE *script, ffn_diag *diag)
{
    double xhi = 0, yhi = 0;
    int used = 0;
    for (int s = 0; s < c->n_series; s++)
        for (int i = 0; i < c->s[s].n; i++) {
            double x = c->s[s].user_tps[i], y = c->s[s].device_tps[i];
            if (!(x > 0) || !(y > 0) || !isfinite(x) || !isfinite(y)) continue;
            used++;
            xhi = fmax(xhi, x), yhi = fmax(yhi, y);
        }
    if (!used)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "nothing to draw: no serving points");
    if (c->min_user_tps > 0) xhi = fmax(xhi, c->min_user_tps);
    ffn__membuf setup;
    ffn__plotcmd pc;
    int rc = ffn__plot_begin(&setup, &pc, diag);
    if (rc) return rc;
    fprintf(data,
            "# ffnroof serving frontier: x = one user's output tokens/s (1 / median TPOT), y = "
            "output tokens/s per device\n# chart: %s\n",
            c->title);
    int idx = 0;
    char lab[160];
    for (int s = 0; s < c->n_series; s++) {
        const ffn_pareto_series *se = &c->s[s];
        if (se->n <= 0) continue;
        ffn__plot_clean(lab, sizeof lab, se->label);
        /* every point, faint; the frontier through the best, sorted by x; the pick */
        fprintf(data, "\n\n# [%d] %s: every layout and concurrency simulated\n", idx, lab);
        for (int i = 0; i < se->n; i++)
            fprintf(data, "%.6g %.6g\n", se->user_tps[i], se->device_tps[i]);
        ffn__plot_clause(&pc, "datafile index %d with points lt %d pt 6 ps 0.6 notitle", idx,
                         s + 1);
        idx++;
        xy *fr = malloc((size_t)se->n * sizeof *fr);
        if (!fr) {
            ffn__mb_free(&setup);
            ffn__mb_free(&pc.mb);
            return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
        }
        int nf = 0;
        for (int i = 0; i < se->n; i++)
            if (se->frontier[i]) fr[nf++] = (xy){se->user_tps[i], se->device_tps[i]};
        qsort(fr, (size_t)nf, sizeof *fr, by_x);
        fprintf(data, "\n\n# [%d] %s: the frontier\n", idx, lab);
        for (int i = 0; i < nf; i++)
            fprintf(data, "%.6g %.6g\n", fr[i].x, fr[i].y);
        free(fr);
        ffn__plot_clause(&pc, "datafile index %d with linespoints lt %d pt 7 ps 1.0 title \"%s\"",
                         idx, s + 1, lab);
        idx++;
        if (se->pick >= 0 && se->pick < se->n) {
            fprintf(data, "\n\n# [%d] %s: the pick\n%.6g %.6g\n", idx, lab, se->user_tps[se->pick],
                    se->device_tps[se->pick]);
            ffn__plot_clause(&pc,
                             "datafile index %d with points lt %d pt 12 ps 3 lw 2 title \"%s: "
                             "pick (%.4g tok/s/device)\"",
                             idx, s + 1, lab, se->device_tps[se->pick]);
            idx++;
        }
    }
    if (c->min_user_tps > 0) {
        fprintf(data,
                "\n\n# [%d] the interactivity asked for (tokens/s per user)\n%.6g 0\n%.6g "
                "%.6g\n",
                idx, c->min_user_tps, c->min_user_tps, yhi * 1.1);
        ffn__plot_clause(&pc,
                         "datafile index %d with lines lc rgb \"#808080\" lw 1.5 dt 2 title "
                         "\"%.4g tokens/s per user\"",
                         idx, c->min_user_tps);
    }
    const double xr[2] = {0, xhi * 1.08}, yr[2] = {0, yhi * 1.1};
    return ffn__plot_end(data, script, template_text, f, c->title, xr, yr, NULL, &setup, &pc, diag);
}

void ffn_plot_pareto_from_serve(ffn_pareto_chart *ch, const ffn_serve_pair *p, size_t np,
                                double user_tps)
{
    memset(ch, 0, sizeof *ch);
    snprintf(ch->title, sizeof ch->title, "Serving frontier: %s", np ? p[0].m->name : "");
    ch->min_user_tps = user_tps;
    for (size_t i = 0; i < np && ch->n_series < FFN_PLOT_MAX_DEVICES; i++) {
        ffn_pareto_series *se = &ch->s[ch->n_series++];
        snprintf(se->label, sizeof se->label, "%.40s on %.40s", p[i].m->name, p[i].hw->name);
        se->pick = -1;
        for (size_t k = 0; k < p[i].n && se->n < FFN_PLOT_MAX_POINTS; k++) {
            const ffn_serve_point *pt = &p[i].pts[k];
            if (!pt->r.stable) continue;
            if ((int)k == p[i].pick) se->pick = se->n;
            se->user_tps[se->n] = pt->r.user_tokens_per_s;
            se->device_tps[se->n] = pt->r.output_tokens_per_s_device;
            se->frontier[se->n++] = pt->frontier;
        }
    }
}
