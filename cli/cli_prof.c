/* The helpers `ffnroof calibrate`, `bench` and `report` share (cli_prof.h): output folders, the
 * spec's run metadata, the load average and steal time, the SIGINT stop flag and the progress
 * bar on stderr. */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_prof.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/measure.h"

int ffn_prof_mkdirs(const char *cmd, const char *dir)
{
    return ffn_cli_mkdirs(cmd, dir);
}

ffn_bench_meta ffn_prof_bench_meta(const char *date, const char *command, int brc,
                                   const ffn_host_info *host, const double load[3],
                                   const ffn_hw *spec, const char *spec_file)
{
    ffn_bench_meta m;
    memset(&m, 0, sizeof m);
    m.date = date;
    m.command = command;
    m.complete = brc == 0;
    m.interrupted = brc == FFN_EINTERRUPTED;
    m.host = host;
    memcpy(m.load_avg, load, sizeof m.load_avg);
    m.spec = spec;
    m.spec_file = spec_file;
    return m;
}

void ffn_prof_loadavg(double load[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) {
        load[0] = a;
        load[1] = b;
        load[2] = c;
    }
    fclose(f);
}

ffn_prof_steal ffn_prof_steal_now(void)
{
    ffn_prof_steal st = {0, ffn_time_now_s(), false};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return st;
    unsigned long long v[8];
    const long hz = sysconf(_SC_CLK_TCK);
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8 &&
        hz > 0) {
        st.steal_s = (double)v[7] / (double)hz;
        st.known = true;
    }
    fclose(f);
    return st;
}

void ffn_prof_steal_note(const ffn_prof_steal *from, const ffn_prof_steal *to, int threads,
                         char *notes, size_t n)
{
    if (!from->known || !to->known || threads < 1) return;
    const double wall = to->at_s - from->at_s, stolen = to->steal_s - from->steal_s;
    if (!(wall > 0) || !(stolen > 0.01 * wall * threads)) return;
    const size_t l = strlen(notes);
    snprintf(notes + l, n > l ? n - l : 0,
             "%sthe hypervisor took %.1f%% of the CPU time of the %d thread(s) during the run "
             "(steal, /proc/stat: %.2f s of %.1f s): figures measured then read low",
             l ? "; " : "", 100.0 * stolen / (wall * threads), threads, stolen, wall);
}

static volatile sig_atomic_t prof_stop;

static void on_sigint(int sig)
{
    (void)sig;
    prof_stop = 1;
}

void ffn_prof_sigint_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    /* a second Ctrl-C kills as usual */
    sa.sa_flags = SA_RESETHAND;
    /* Never taken away again: a Ctrl-C that lands while the results are being written (or
     * between the last write and exit) would otherwise kill the program by the signal, halfway
     * through its files or with no exit status the caller can read. After the measurements the
     * first Ctrl-C only sets the flag, which nothing polls any more, so the files are finished;
     * a second one kills as usual. */
    prof_stop = 0;
    sigaction(SIGINT, &sa, NULL);
}

const volatile sig_atomic_t *ffn_prof_stop_flag(void)
{
    return &prof_stop;
}

void ffn_prof_progress_init(ffn_prof_progress *p, const char *title)
{
    memset(p, 0, sizeof *p);
    p->show = isatty(STDERR_FILENO) != 0;
    p->hi = 1.0;
    snprintf(p->title, sizeof p->title, "%s", title);
}

int ffn_prof_progress_stage(void *user, double fraction, const char *stage)
{
    ffn_prof_progress *p = user;
    if (p && p->show) {
        double f = p->lo + (p->hi - p->lo) * (fraction < 0 ? 0 : fraction > 1 ? 1 : fraction);
        int filled = (int)lround(f * 30);
        char bar[31];
        for (int i = 0; i < 30; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[30] = 0;
        int len =
            fprintf(stderr, "\r%s [%s] %3.0f%% %.60s", p->title, bar, 100 * f, stage ? stage : "");
        for (int i = len; i < p->last_len; i++)
            fputc(' ', stderr);
        p->last_len = len;
        fflush(stderr);
    }
    return prof_stop != 0;
}

int ffn_prof_progress_case(void *user, double fraction, const char *label)
{
    return ffn_prof_progress_stage(user, fraction, label);
}

void ffn_prof_progress_end(ffn_prof_progress *p)
{
    if (p->show && p->last_len) {
        fputc('\r', stderr);
        for (int i = 0; i < p->last_len; i++)
            fputc(' ', stderr);
        fputc('\r', stderr);
        fflush(stderr);
    }
    p->last_len = 0;
}
