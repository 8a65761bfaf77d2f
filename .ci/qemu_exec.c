/* LD_PRELOAD shim for .ci/qemu-x86.sh: keeps every program of one build tree under qemu-user.
 *
 * qemu-user emulates one process; an execve() from the guest starts the new program natively on
 * the host. Criterion's sandbox (BoxFort) re-executes the test binary for every test
 * ("boxfort-worker") and the CLI tests system() the ffnroof executable, so without this shim
 * only the test runner's parent would run on the emulated CPU and every test body on the host's.
 *
 * Loaded in the guest (qemu's QEMU_SET_ENV puts LD_PRELOAD in the guest's environment only) and
 * in the native children the guest starts (/bin/sh of system() inherits LD_PRELOAD), it wraps
 * execve/execv/execvp/execvpe: a program whose real path lies under $FFNROOF_QEMU_TREE is started
 * as `$FFNROOF_QEMU -0 argv0 path args...` instead; anything else (sh, rm, gnuplot) runs
 * natively. The CPU model comes from QEMU_CPU in the environment, which qemu reads itself. The
 * new qemu process gets the environment without LD_PRELOAD (QEMU_SET_ENV adds it back for its
 * guest), so qemu itself never loads the shim.
 *
 * Built without ISA flags (x86-64 baseline): it runs inside every emulated CPU. glibc-internal
 * exec paths (system(), popen(), posix_spawn()) are not wrapped; they only start /bin/sh here,
 * and the shell's own execve() of the program is. */
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

extern char **environ;

static int real_execve(const char *path, char *const argv[], char *const envp[])
{
    static execve_fn next;
    if (!next) next = (execve_fn)(void (*)(void))dlsym(RTLD_NEXT, "execve");
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, argv, envp);
}

/* True when PATH's real path is inside $FFNROOF_QEMU_TREE. */
static int in_tree(const char *path)
{
    const char *tree = getenv("FFNROOF_QEMU_TREE");
    char real[PATH_MAX], root[PATH_MAX];
    if (!tree || !*tree || !realpath(path, real) || !realpath(tree, root)) return 0;
    const size_t n = strlen(root);
    return strncmp(real, root, n) == 0 && real[n] == '/';
}

static int exec_maybe_emulated(const char *path, char *const argv[], char *const envp[])
{
    const char *qemu = getenv("FFNROOF_QEMU");
    if (!qemu || !*qemu || !in_tree(path)) return real_execve(path, argv, envp);
    size_t argc = 0, envc = 0;
    while (argv && argv[argc])
        argc++;
    while (envp && envp[envc])
        envc++;
    char **nargv = malloc((argc + 5) * sizeof *nargv);
    char **nenvp = malloc((envc + 1) * sizeof *nenvp);
    if (!nargv || !nenvp) {
        free(nargv);
        free(nenvp);
        errno = ENOMEM;
        return -1;
    }
    size_t a = 0;
    nargv[a++] = (char *)qemu;
    nargv[a++] = (char *)"-0";
    nargv[a++] = (char *)(argc ? argv[0] : path);
    nargv[a++] = (char *)path;
    for (size_t i = 1; i < argc; i++)
        nargv[a++] = argv[i];
    nargv[a] = NULL;
    size_t e = 0;
    for (size_t i = 0; i < envc; i++)
        if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) nenvp[e++] = envp[i];
    nenvp[e] = NULL;
    const int rc = real_execve(qemu, nargv, nenvp);
    const int err = errno;
    free(nargv);
    free(nenvp);
    errno = err;
    return rc;
}

/* execvp's search: FILE as given when it holds a '/', else the first executable in $PATH. */
static int exec_search(const char *file, char *const argv[], char *const envp[])
{
    if (!file || !*file) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/')) return exec_maybe_emulated(file, argv, envp);
    const char *p = getenv("PATH");
    if (!p) p = "/usr/local/bin:/usr/bin:/bin";
    char buf[PATH_MAX];
    while (*p) {
        const char *end = strchr(p, ':');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        const size_t flen = strlen(file);
        if (len + flen + 2 <= sizeof buf) {
            memcpy(buf, len ? p : ".", len ? len : 1);
            size_t o = len ? len : 1;
            buf[o++] = '/';
            memcpy(buf + o, file, flen + 1);
            if (access(buf, X_OK) == 0) return exec_maybe_emulated(buf, argv, envp);
        }
        if (!end) break;
        p = end + 1;
    }
    errno = ENOENT;
    return -1;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_maybe_emulated(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    return exec_maybe_emulated(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_search(file, argv, envp);
}

int execvp(const char *file, char *const argv[])
{
    return exec_search(file, argv, environ);
}
