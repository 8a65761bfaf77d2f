/* The one error style of every command (cli/cli.h): "ffnroof CMD: what is wrong" on stderr, a
 * "Try" line for bad usage, and the exit code it stands for. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

int ffn_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ffnroof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ffnroof %s --help'.\n", cmd);
    va_end(ap);
    return FFN_EXIT_USAGE;
}

int ffn_cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ffnroof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int ffn_cli_diag(const ffn_diag *d)
{
    char buf[1200];
    ffn_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "%s\n", buf);
    return FFN_EXIT_USAGE;
}
