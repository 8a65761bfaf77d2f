/* The execl family for the execve shim of .ci/qemu_exec.c (linked into the same preloaded
 * library by .ci/aarch64.sh): glibc's execl, execle and execlp call its internal execve, which
 * LD_PRELOAD cannot wrap, so a test that execl()s the AArch64 ffnroof from an emulated process
 * (test_cli_plan's interrupted sweep) would ask the host kernel to run an AArch64 file. These
 * collect the arguments and call execv/execve/execvp, which resolve to the shim's wrappers. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_ARGS = 1024 };

/* argv[] of the variadic list that starts with arg (ap just past it), then the exec: execv for
 * 'v', execvp for 'p', execve with the envp that follows the NULL for 'e'. The array lives on
 * this frame, which exec leaves only on failure; a list longer than MAX_ARGS is E2BIG. */
static int exec_list(char kind, const char *file, const char *arg, va_list ap)
{
    char *argv[MAX_ARGS];
    size_t n = 0;
    argv[n++] = (char *)arg;
    while (argv[n - 1] && n < MAX_ARGS)
        argv[n++] = va_arg(ap, char *);
    if (argv[n - 1] != NULL) {
        errno = E2BIG;
        return -1;
    }
    if (kind == 'e') return execve(file, argv, va_arg(ap, char *const *));
    return kind == 'p' ? execvp(file, argv) : execv(file, argv);
}

int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    const int rc = exec_list('v', path, arg, ap);
    va_end(ap);
    return rc;
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    const int rc = exec_list('p', file, arg, ap);
    va_end(ap);
    return rc;
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    const int rc = exec_list('e', path, arg, ap);
    va_end(ap);
    return rc;
}
