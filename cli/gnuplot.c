/* Rendering charts with gnuplot, run as a separate process with a time limit (cli/pictures.h).
 * gnuplot is a run-time dependency: the data file and the script are always written first; the
 * images follow when gnuplot is on the PATH, and its absence is a message, not a failure. The
 * images are rendered under temporary names (the script's png_file/svg_file variables, preset
 * with -e) and renamed into place, so a failed or killed gnuplot leaves no half-written image. */
#define _GNU_SOURCE
#include "pictures.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

bool ffn_gnuplot_find(char *path, size_t n)
{
    const char *env = getenv("PATH");
    if (!env || !*env) return false;
    const char *p = env;
    while (*p) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len > 0) { /* an empty entry would mean "." - not followed on purpose */
            snprintf(path, n, "%.*s/gnuplot", (int)len, p);
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0) return true;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return false;
}

double ffn_gnuplot_timeout_s(void)
{
    const char *e = getenv("FFNROOF_GNUPLOT_TIMEOUT");
    if (e && *e) {
        char *end;
        double v = strtod(e, &end);
        if (!*end && v > 0 && isfinite(v)) return v;
    }
    return 60;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ffn_gnuplot_run(const char *gnuplot, const char *dir, const char *script, const char *preset,
                    double timeout_s, char *msg, size_t msg_n)
{
    if (msg_n) msg[0] = '\0';
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(msg, msg_n, "cannot create a pipe: %s", strerror(errno));
        return FFN_EIO;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, msg_n, "cannot start gnuplot: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return FFN_ENOTFOUND;
    }
    if (pid == 0) {
        /* child: run in the chart's folder (the script names its files relative to it), its
         * stderr into the pipe, stdout and stdin away from the terminal */
        close(pfd[0]);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
        }
        dup2(pfd[1], 2);
        if (dir && chdir(dir) != 0) _exit(126);
        char *const args_p[] = {(char *)gnuplot, (char *)"-e", (char *)preset, (char *)script,
                                NULL};
        char *const args[] = {(char *)gnuplot, (char *)script, NULL};
        execv(gnuplot, preset && *preset ? args_p : args);
        _exit(127);
    }
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    char err[4096];
    size_t elen = 0;
    double deadline = now_s() + timeout_s;
    bool timed_out = false, eof = false;
    while (!eof) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
        int pr = poll(&pf, 1, (int)fmin(left * 1000 + 1, 200));
        if (pr < 0 && errno != EINTR) break;
        if (pr > 0) {
            char tmp[1024];
            ssize_t r = read(pfd[0], tmp, sizeof tmp);
            if (r > 0) {
                size_t take = (size_t)r < sizeof err - 1 - elen ? (size_t)r : sizeof err - 1 - elen;
                memcpy(err + elen, tmp, take);
                elen += take;
            } else if (r == 0) {
                eof = true;
            }
        }
    }
    err[elen] = '\0';
    close(pfd[0]);
    int st = 0;
    if (timed_out) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        snprintf(msg, msg_n, "gnuplot took longer than %g s and was stopped", timeout_s);
        return FFN_EINTERRUPTED;
    }
    /* stderr closed: gnuplot is exiting; wait for it, still within the limit */
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            snprintf(msg, msg_n, "gnuplot took longer than %g s and was stopped", timeout_s);
            return FFN_EINTERRUPTED;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        snprintf(msg, msg_n, "cannot run '%s'", gnuplot);
        return FFN_ENOTFOUND;
    }
    /* the most useful line of gnuplot's complaint: the first that is not blank or a caret */
    const char *line = err;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t l = nl ? (size_t)(nl - line) : strlen(line);
        bool blank = true;
        for (size_t i = 0; i < l; i++)
            if (line[i] != ' ' && line[i] != '^' && line[i] != '\t') blank = false;
        if (!blank && strstr(line, "line") && l < 400) {
            snprintf(msg, msg_n, "%.*s", (int)l, line);
            break;
        }
        if (!nl) break;
        line = nl + 1;
    }
    if (!msg[0]) snprintf(msg, msg_n, "%.300s", elen ? err : "gnuplot failed");
    for (char *c = msg; *c; c++)
        if (*c == '\n') *c = ' ';
    return FFN_EIO;
}

const char *ffn_gnuplot_png_term(const char *gnuplot)
{
    static char cached[16];
    if (cached[0]) return cached;
    char msg[256];
    /* pngcairo is in Debian's gnuplot-nox; a build without cairo has only libgd's png */
    int rc =
        ffn_gnuplot_run(gnuplot, NULL, "/dev/null", "set terminal pngcairo", 20, msg, sizeof msg);
    snprintf(cached, sizeof cached, "%s", rc == 0 ? "pngcairo" : "png");
    return cached;
}

void ffn_cli_today(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d", &tm);
}

int ffn_cli_prepare_dir(const char *cmd, const char *dir)
{
    return ffn_cli_mkdirs(cmd, dir);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 16384;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, 4096, fp);
        len += r;
        if (r < 4096) break;
    }
    fclose(fp);
    buf[len] = '\0';
    return buf;
}

int ffn_chart_emit(const char *cmd, ffn_chart_kind kind, const void *chart, ffn_chart_out *o)
{
    static const char *const tmpl_names[] = {"roofline.gp", "latency.gp", "moe.gp", "pareto.gp"};
    const char *tmpl_name =
        kind == FFN_CHART_ROOFLINE ? ffn_plot_roofline_template(chart) : tmpl_names[kind];
    o->rendered = o->gnuplot_missing = false;
    char dir[PATH_MAX], tpath[PATH_MAX + 32];
    if (!ffn_cli_data_dir("plots", dir, sizeof dir))
        return ffn_cli_fail(
            FFN_EXIT_FAIL, cmd,
            "no plots/ folder with the chart templates found (set FFNROOF_DATA_DIR)");
    snprintf(tpath, sizeof tpath, "%s/%s", dir, tmpl_name);
    char *tmpl = slurp(tpath);
    if (!tmpl) return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot read template '%s'", tpath);

    char gp[PATH_MAX];
    bool have_gp = o->render && ffn_gnuplot_find(gp, sizeof gp);
    char data_name[256], gp_name[256], png_name[256], svg_name[256];
    snprintf(data_name, sizeof data_name, "%s.dat", o->base);
    snprintf(gp_name, sizeof gp_name, "%s.gp", o->base);
    snprintf(png_name, sizeof png_name, "%s.png", o->base);
    snprintf(svg_name, sizeof svg_name, "%s.svg", o->base);
    ffn_plot_files files = {.data = data_name,
                            .png = png_name,
                            .svg = svg_name,
                            .png_term = have_gp ? ffn_gnuplot_png_term(gp) : "pngcairo",
                            .width = o->width,
                            .height = o->height};

    char dpath[PATH_MAX + 300], spath[PATH_MAX + 300];
    snprintf(dpath, sizeof dpath, "%s/%s", o->dir, data_name);
    snprintf(spath, sizeof spath, "%s/%s", o->dir, gp_name);
    ffn_cli_out dout, sout;
    int rc = ffn_cli_out_open(cmd, &dout, dpath);
    if (rc) {
        free(tmpl);
        return rc;
    }
    if ((rc = ffn_cli_out_open(cmd, &sout, spath))) {
        ffn_cli_out_close(cmd, &dout, false);
        free(tmpl);
        return rc;
    }
    ffn_diag d;
    ffn_diag_clear(&d);
    int wr;
    if (kind == FFN_CHART_ROOFLINE)
        wr = ffn_plot_roofline_write(chart, tmpl, &files, dout.fp, sout.fp, &d);
    else if (kind == FFN_CHART_LATENCY)
        wr = ffn_plot_latency_write(chart, tmpl, &files, dout.fp, sout.fp, &d);
    else if (kind == FFN_CHART_MOE)
        wr = ffn_plot_moe_write(chart, tmpl, &files, dout.fp, sout.fp, &d);
    else
        wr = ffn_plot_pareto_write(chart, tmpl, &files, dout.fp, sout.fp, &d);
    free(tmpl);
    /* the data and its script are one result: when either cannot be written (a full disk, a
     * file-size limit), neither is left */
    int rc1 = ffn_cli_out_close(cmd, &dout, wr == 0);
    int rc2 = ffn_cli_out_close(cmd, &sout, wr == 0 && rc1 == 0);
    if (wr == 0 && rc1 == 0 && rc2 != 0) unlink(dpath);
    if (wr)
        return ffn_cli_fail(wr == FFN_EINVAL ? FFN_EXIT_USAGE : FFN_EXIT_FAIL, cmd, "%s", d.msg);
    if (rc1 || rc2) return FFN_EXIT_FAIL;

    if (!o->render) {
        if (!o->quiet) fprintf(stderr, "wrote %s and %s\n", dpath, spath);
        return FFN_EXIT_OK;
    }
    if (!have_gp) {
        o->gnuplot_missing = true;
        fprintf(stderr,
                "ffnroof %s: gnuplot not found in PATH; wrote %s and %s. Render them with: "
                "(cd '%s' && gnuplot %s)  [Debian/Ubuntu: apt-get install gnuplot-nox]\n",
                cmd, dpath, spath, o->dir, gp_name);
        return FFN_EXIT_OK;
    }
    char tpng[300], tsvg[300], preset[700], msg[512];
    long pid = (long)getpid();
    snprintf(tpng, sizeof tpng, "%s.tmp.%ld", png_name, pid);
    snprintf(tsvg, sizeof tsvg, "%s.tmp.%ld", svg_name, pid);
    snprintf(preset, sizeof preset, "png_file='%s'; svg_file='%s'", tpng, tsvg);
    rc = ffn_gnuplot_run(gp, o->dir, gp_name, preset, ffn_gnuplot_timeout_s(), msg, sizeof msg);
    char a[PATH_MAX + 300], b[PATH_MAX + 300];
    if (rc) {
        snprintf(a, sizeof a, "%s/%s", o->dir, tpng);
        unlink(a);
        snprintf(a, sizeof a, "%s/%s", o->dir, tsvg);
        unlink(a);
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "rendering %s failed (data and script kept): %s",
                            spath, msg);
    }
    const char *pairs[2][2] = {{tpng, png_name}, {tsvg, svg_name}};
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof a, "%s/%s", o->dir, pairs[i][0]);
        snprintf(b, sizeof b, "%s/%s", o->dir, pairs[i][1]);
        if (rename(a, b) != 0) {
            int e = errno;
            unlink(a);
            return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot create '%s': %s", b, strerror(e));
        }
    }
    o->rendered = true;
    if (!o->quiet)
        fprintf(stderr, "wrote %s/%s.{png,svg,dat,gp}%s\n", o->dir, o->base,
                strcmp(files.png_term, "pngcairo") ? " (png via libgd: no pngcairo here)" : "");
    return FFN_EXIT_OK;
}
