/* The CLI suites' harness (cli_harness.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli_harness.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* printf into a new heap string; NULL when out of memory. */
static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int cli_run(const cli_opts *o, const char *args)
{
    static const cli_opts none = {0};
    if (!o) o = &none;
    char *cd = o->cwd ? format("cd '%s' && ", o->cwd) : NULL;
    char *dd = o->data_dir ? format("FFNROOF_DATA_DIR='%s' ", o->data_dir) : NULL;
    char *err = !o->err                          ? format("/dev/null")
                : !strcmp(o->err, CLI_TO_STDOUT) ? format("&1")
                                                 : format("'%s'", o->err);
    char *cmd = format("%s%s%s%s%s%s'%s' %s >'%s' 2>%s", cd ? cd : "", o->pre ? o->pre : "",
                       o->pre ? " " : "", o->env ? o->env : "", o->env ? " " : "", dd ? dd : "",
                       CLI_BIN, args ? args : "", o->out ? o->out : "/dev/null", err ? err : "");
    const int st = cmd && err ? system(cmd) : -1;
    free(cd);
    free(dd);
    free(err);
    free(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

pid_t cli_spawn(const cli_opts *o, char *const argv[])
{
    static const cli_opts none = {0};
    if (!o) o = &none;
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid != 0) return pid;
    if (o->err_tty) setsid();
    const int out = open(o->out ? o->out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = o->err_tty ? open(o->err, O_RDWR)
                    : o->err   ? open(o->err, O_WRONLY | O_CREAT | O_TRUNC, 0600)
                               : open("/dev/null", O_WRONLY);
    if (out < 0 || err < 0 || (o->cwd && chdir(o->cwd) != 0)) _exit(99);
    if (o->data_dir) setenv("FFNROOF_DATA_DIR", o->data_dir, 1);
    dup2(out, 1);
    dup2(err, 2);
    execv(CLI_BIN, argv);
    _exit(98);
}

char *cli_slurp(const char *path)
{
    enum { BUFS = 4, CAP = 1 << 22 };
    static char bufs[BUFS][CAP];
    static int which;
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = bufs[which = (which + 1) % BUFS];
    const size_t n = fread(buf, 1, CAP - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

bool cli_rm_rf(const char *path)
{
    char *cmd = format("rm -rf '%s'", path);
    const bool ok = cmd && system(cmd) == 0;
    free(cmd);
    return ok;
}
