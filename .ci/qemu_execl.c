/* The execl family for the execve shim of .ci/qemu_exec.c (linked into the same preloaded
 * library by .ci/aarch64.sh): glibc's execl, execle and execlp call its internal execve, which
 * LD_PRELOAD cannot wrap, so a test that execl()s the AArch64 ffnroof from an emulated process
 * (test_cli_plan's interrupted sweep) would ask the host kernel to run an AArch64 file. These
 * collect the arguments and call execv/execve/execvp, which resolve to the shim's wrappers. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

enum { MAX_ARGS = 1024 };

/* argv[] of the variadic list that starts with arg0, into argv[MAX_ARGS] (the array lives on
 * the caller's stack: exec does not return on success); false when the list is longer. */
#define COLLECT(argv, arg0, ap, ok)                                                                \
    do {                                                                                           \
        size_t n_ = 0;                                                                             \
        (argv)[n_++] = (char *)(arg0);                                                             \
        while ((argv)[n_ - 1] && n_ < MAX_ARGS)                                                    \
            (argv)[n_++] = va_arg(ap, char *);                                                     \
        (ok) = (argv)[n_ - 1] == NULL;                                                             \
    } while (0)

static int too_long(void)
{
    errno = E2BIG;
    return -1;
}

int execl(const char *path, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;
    bool ok;
    va_start(ap, arg);
    COLLECT(argv, arg, ap, ok);
    va_end(ap);
    return ok ? execv(path, argv) : too_long();
}

int execlp(const char *file, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;
    bool ok;
    va_start(ap, arg);
    COLLECT(argv, arg, ap, ok);
    va_end(ap);
    return ok ? execvp(file, argv) : too_long();
}

int execle(const char *path, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;
    bool ok;
    va_start(ap, arg);
    COLLECT(argv, arg, ap, ok);
    char *const *envp = ok ? va_arg(ap, char *const *) : NULL;
    va_end(ap);
    return ok ? execve(path, argv, envp) : too_long();
}
