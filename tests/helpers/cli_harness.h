/* The one harness the CLI suites run the built `ffnroof` with: through the shell as a child
 * (cli_run: working folder, environment, where stdout and stderr go, the exit code), or forked
 * and exec'd for a run the test interrupts (cli_spawn); and reading back what it wrote
 * (cli_slurp). Plain C without Criterion: the suites assert on what it returns. Built as the
 * static library ffn_test_cli (tests/CMakeLists.txt). */
#ifndef FFN_TEST_CLI_HARNESS_H
#define FFN_TEST_CLI_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The binary under test (FFNROOF_BINARY_DIR is defined for every suite). */
#define CLI_BIN FFNROOF_BINARY_DIR "/cli/ffnroof"

/* cli_opts.err: stderr into the same file as stdout. */
#define CLI_TO_STDOUT "&1"

/* How to run the binary; a zero-initialised cli_opts runs it here, with the test's environment
 * and both streams discarded. */
typedef struct cli_opts {
    const char *cwd;      /* run in this folder; NULL: the test's working folder */
    const char *pre;      /* cli_run: shell text before the command ("ulimit -f 2;"); NULL: none */
    const char *env;      /* cli_run: VAR=value assignments for the binary; NULL: none */
    const char *data_dir; /* FFNROOF_DATA_DIR; NULL: as the test's environment has it */
    const char *out;      /* stdout into this file; NULL: /dev/null */
    const char *err;      /* stderr into this file, or CLI_TO_STDOUT; NULL: /dev/null */
    bool err_tty;         /* cli_spawn: err is a terminal (a pty's slave); the child calls
                             setsid() and opens it as its controlling terminal */
} cli_opts;

/* Run `ffnroof ARGS` (ARGS as a shell would split it) through /bin/sh as
 * `cd CWD && PRE ENV FFNROOF_DATA_DIR=DATA_DIR ffnroof ARGS >OUT 2>ERR`. Returns the exit code,
 * or -1 when the shell did not exit normally (a signal) or could not be started. */
int cli_run(const cli_opts *o, const char *args);

/* Fork and exec the binary with argv (argv[0] is the name it sees): the out and err files are
 * opened (relative to the test's folder) before the child moves to cwd; env and pre are not
 * used. Returns the child's pid, or -1 when fork failed; the caller waits for it. */
pid_t cli_spawn(const cli_opts *o, char *const argv[]);

/* The contents of a file as a NUL-terminated string (at most 4 MiB; binary files are cut at
 * their first NUL byte for string use), or NULL when it cannot be opened. The buffer belongs to
 * the harness and is reused by the fourth call after this one. */
char *cli_slurp(const char *path);

/* Remove a file or folder tree (rm -rf); false when that failed. */
bool cli_rm_rf(const char *path);

#endif
