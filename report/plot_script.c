/* The gnuplot script machinery the chart writers share (report/plot_internal.h): text made safe for
 * a gnuplot string, a template in plots/ with its @KEY@ fields filled, a growing text buffer and
 * a plot command built clause by clause. */
#include "plot_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ffn__plot_clean(char *dst, size_t n, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < n; i++) {
        char ch = src[i];
        if (ch == '"')
            ch = '\'';
        else if (ch == '\\')
            ch = '/';
        else if ((unsigned char)ch < 0x20)
            ch = ' ';
        dst[j++] = ch;
    }
    dst[j] = '\0';
}

/* Write template with the @KEY@ fields replaced; unknown @...@ text is left alone. */
static int substitute(FILE *out, const char *tmpl, const char *const *keys, const char *const *vals,
                      size_t n_keys)
{
    for (const char *p = tmpl; *p;) {
        if (*p == '@') {
            bool done = false;
            for (size_t k = 0; k < n_keys && !done; k++) {
                size_t l = strlen(keys[k]);
                if (!strncmp(p + 1, keys[k], l) && p[1 + l] == '@') {
                    fputs(vals[k], out);
                    p += l + 2;
                    done = true;
                }
            }
            if (done) continue;
        }
        fputc(*p++, out);
    }
    return ferror(out) ? FFN_EIO : 0;
}

int ffn__mb_open(ffn__membuf *m)
{
    m->text = NULL;
    m->len = 0;
    m->fp = open_memstream(&m->text, &m->len);
    return m->fp ? 0 : FFN_ENOMEM;
}

const char *ffn__mb_close(ffn__membuf *m)
{
    if (m->fp) fclose(m->fp);
    m->fp = NULL;
    return m->text ? m->text : "";
}

void ffn__mb_free(ffn__membuf *m)
{
    if (m->fp) fclose(m->fp);
    free(m->text);
    m->text = NULL;
}

void ffn__plot_clause(ffn__plotcmd *pc, const char *fmt, ...)
{
    fputs(pc->n++ ? ", \\\n     " : "plot ", pc->mb.fp);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(pc->mb.fp, fmt, ap);
    va_end(ap);
}

static int plot_script(FILE *script, const char *tmpl, const ffn_plot_files *f,
                       const ffn__plot_parts *sp)
{
    char w[16], h[16];
    snprintf(w, sizeof w, "%d", f->width > 0 ? f->width : 1200);
    snprintf(h, sizeof h, "%d", f->height > 0 ? f->height : 800);
    const char *keys[] = {"TITLE",  "DATA",   "PNG",    "SVG",    "PNGTERM", "WIDTH",
                          "HEIGHT", "XRANGE", "YRANGE", "XLABEL", "SETUP",   "PLOT"};
    const char *vals[] = {sp->title,
                          f->data,
                          f->png,
                          f->svg,
                          f->png_term ? f->png_term : "pngcairo",
                          w,
                          h,
                          sp->xrange ? sp->xrange : "[*:*]",
                          sp->yrange ? sp->yrange : "[*:*]",
                          sp->xlabel ? sp->xlabel : "",
                          sp->setup ? sp->setup : "",
                          sp->plot};
    return substitute(script, tmpl, keys, vals, sizeof keys / sizeof keys[0]);
}

static int plot_finish(FILE *data, FILE *script, ffn_diag *diag, int rc)
{
    if (!rc && (ferror(data) || ferror(script)))
        rc = ffn_diag_set(diag, FFN_EIO, NULL, 0, 0, "cannot write the chart's data or script");
    return rc;
}

int ffn__plot_begin(ffn__membuf *setup, ffn__plotcmd *pc, ffn_diag *diag)
{
    pc->n = 0;
    int rc = setup ? ffn__mb_open(setup) : 0;
    if (!rc) rc = ffn__mb_open(&pc->mb);
    if (rc) {
        if (setup) ffn__mb_free(setup);
        return ffn_diag_set(diag, rc, NULL, 0, 0, "out of memory");
    }
    return 0;
}

int ffn__plot_end(FILE *data, FILE *script, const char *tmpl, const ffn_plot_files *f,
                  const char *title, const double *xrange, const double *yrange, const char *xlabel,
                  ffn__membuf *setup, ffn__plotcmd *pc, ffn_diag *diag)
{
    fputc('\n', pc->mb.fp);
    char xr[64], yr[64], t[300], xl[80];
    if (xrange) snprintf(xr, sizeof xr, "[%g:%g]", xrange[0], xrange[1]);
    snprintf(yr, sizeof yr, "[%g:%g]", yrange[0], yrange[1]);
    ffn__plot_clean(t, sizeof t, title);
    if (xlabel) ffn__plot_clean(xl, sizeof xl, xlabel);
    ffn__plot_parts sp = {.title = t,
                          .xrange = xrange ? xr : NULL,
                          .yrange = yr,
                          .xlabel = xlabel ? xl : NULL,
                          .setup = setup ? ffn__mb_close(setup) : NULL,
                          .plot = ffn__mb_close(&pc->mb)};
    int rc = plot_script(script, tmpl, f, &sp);
    if (setup) ffn__mb_free(setup);
    ffn__mb_free(&pc->mb);
    return plot_finish(data, script, diag, rc);
}
