/* The command line under faults and conflicting flags: an option given twice, or
 * --fused with --unfused, is refused naming both; every unwritable --out is exit 2 (a folder
 * given as a file was exit 1); a sweep grid beyond the point limit is refused unless
 * --max-points raises it; output past a file-size limit (ulimit -f) or onto a full file system
 * is exit 1 and leaves no partial file; and Ctrl-C during `bench` and `calibrate` keeps the
 * cases that finished and marks the run incomplete. Runs the built binary. */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "skip_clean.h"
#include "helpers/cli_harness.h"

#define SRC FFNROOF_SOURCE_DIR

static char root[256], err_path[300];

static void rm_rf(const char *p)
{
    if (!cli_rm_rf(p)) cr_log_warn("could not remove %s", p);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ffnroof-test-faults-%d", (int)getpid());
    snprintf(err_path, sizeof err_path, "%s.err", root);
    rm_rf(root);
    cr_assert_eq(mkdir(root, 0700), 0);
}

static void teardown(void)
{
    rm_rf(root);
    unlink(err_path);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 300);

static char err_text[1 << 16];

/* Run `ffnroof ARGS` in root with stdout discarded (prefix: shell commands before it, such as
 * `ulimit -f 1;`); returns the exit code, stderr in err_text. */
static int run(const char *prefix, const char *args)
{
    const int rc =
        cli_run(&(cli_opts){.cwd = root, .pre = prefix, .data_dir = SRC, .err = err_path}, args);
    const char *e = cli_slurp(err_path);
    snprintf(err_text, sizeof err_text, "%s", e ? e : "");
    return rc;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

Test(faults, an_option_given_twice_is_refused_naming_both)
{
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"predict --hw h100-sxm --model llama2-7b --batch 1 --batch 8",
         "'--batch 1' and '--batch 8'"},
        {"predict --hw h100-sxm --hw a100-sxm-80gb --model llama2-7b", "--hw given twice"},
        {"predict --hw h100-sxm --model llama2-7b --out a.txt --out b.txt", "--out given twice"},
        {"predict --hw h100-sxm --model llama2-7b --fused --unfused", "--fused and --unfused"},
        {"predict --hw h100-sxm --model llama2-7b --unfused --fused", "--unfused and --fused"},
        {"predict --hw h100-sxm --model llama2-7b --ops --ops", "--ops given twice"},
        {"predict --hw=h100-sxm --model llama2-7b --hw=a100-sxm-80gb", "--hw given twice"},
        {"sweep --model llama2-7b --hw h100-sxm --batch 1 --batch 2", "--batch given twice"},
        {"sweep --model llama2-7b --hw h100-sxm --fused --unfused", "--fused and --unfused"},
        {"plan --model llama2-7b --hw h100-sxm --tpot 50ms --tpot 20ms", "--tpot given twice"},
        {"compare --model llama2-7b --hw h100-sxm --model gpt2", "--model given twice"},
        {"fit --hw a100-sxm-80gb --data x.csv --data y.csv", "--data given twice"},
        {"plot roofline --hw h100-sxm --dtype bf16 --dtype fp8", "--dtype given twice"},
        {"report --bench a.json --bench b.json", "--bench given twice"},
        {"bench --threads 1 --threads 2", "--threads given twice"},
        {"calibrate --threads 1 --threads 2", "--threads given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run(NULL, cases[i].args);
        cr_expect_eq(rc, 2, "%s: exit %d: %s", cases[i].args, rc, err_text);
        cr_expect(strstr(err_text, cases[i].needle) != NULL, "%s: '%s' not in: %s", cases[i].args,
                  cases[i].needle, err_text);
        cr_expect_eq(count_entries(root), 0, "%s wrote something", cases[i].args);
    }
}

Test(faults, repeatable_options_stay_repeatable)
{
    /* plan --price and plot --calibration/--bench take several values by design */
    int rc = run(NULL, "plan --model llama2-7b --hw h100-sxm,a100-sxm-80gb --price h100-sxm=3 "
                       "--price a100-sxm-80gb=2");
    cr_expect_eq(rc, 0, "%s", err_text);
    rc = run(NULL, "plot roofline --calibration " SRC "/tests/data/plot/calibration.json "
                   "--calibration " SRC "/tests/data/plot/calibration.json --no-render --out p");
    cr_expect_eq(rc, 0, "%s", err_text);
}

Test(faults, every_unwritable_out_is_exit_2)
{
    static const char *const outs[] = {"/tmp", "/proc/ffnroof/x", "/nonexistent/dir/x.txt"};
    static const char *const cmds[] = {
        "predict --hw h100-sxm --model llama2-7b --out %s",
        "plan --hw h100-sxm --model llama2-7b --out %s",
        "compare --hw h100-sxm --model llama2-7b --out %s",
        "sweep --hw h100-sxm --model llama2-7b --out %s",
        "fit --hw a100-sxm-80gb --data " SRC
        "/tests/data/fit/a100-sxm-80gb-gemm-fp16.csv --format json --out %s",
    };
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++)
        for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++) {
            char args[1024];
            snprintf(args, sizeof args, cmds[c], outs[o]);
            int rc = run(NULL, args);
            if (c == 4 && rc == 2 && strstr(err_text, "unknown option"))
                continue; /* fit without --out */
            cr_expect_eq(rc, 2, "%s: exit %d: %s", args, rc, err_text);
            cr_expect(strstr(err_text, outs[o]) != NULL, "%s: %s", args, err_text);
        }
    /* folders: a file where a folder should be, or a folder that cannot be made */
    FILE *fp = fopen("/tmp/ffnroof-test-faults-file", "w");
    cr_assert_not_null(fp);
    fclose(fp);
    static const char *const dcmds[] = {
        "plot roofline --hw h100-sxm --no-render --out %s",
        "report --compare --model llama2-7b --hw h100-sxm --no-render --out %s",
        "calibrate --test-tiny --out %s",
        "bench --hw h100-sxm --shape 1,64,64 --reps 1 --out %s",
    };
    static const char *const douts[] = {"/tmp/ffnroof-test-faults-file", "/proc/ffnroof/x"};
    for (size_t c = 0; c < sizeof dcmds / sizeof dcmds[0]; c++)
        for (size_t o = 0; o < sizeof douts / sizeof douts[0]; o++) {
            char args[1024];
            snprintf(args, sizeof args, dcmds[c], douts[o]);
            int rc = run(NULL, args);
            cr_expect_eq(rc, 2, "%s: exit %d: %s", args, rc, err_text);
        }
    unlink("/tmp/ffnroof-test-faults-file");
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fputs(text, fp);
    cr_assert_eq(fclose(fp), 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(faults, a_sweep_grid_beyond_the_limit_is_refused)
{
    /* six lines that ask for 2.8e14 rows (each axis within its own cap) */
    char sc[512];
    snprintf(sc, sizeof sc, "%s/in.yaml", root);
    write_text(sc, "name: huge\nmodel: llama2-7b\nhw: [h100-sxm]\nsweep:\n"
                   "  batch: 1-16777216\n  seq: 1-16777216\n");
    const double t0 = now_s();
    int rc = run(NULL, "sweep --scenario in.yaml --out out.csv");
    cr_expect_lt(now_s() - t0, 10.0, "the refusal must come before the work");
    cr_expect_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_expect(strstr(err_text, "in.yaml") && strstr(err_text, "--max-points"), "%s", err_text);
    cr_expect_eq(access("/tmp", F_OK), 0);
    char out[400];
    snprintf(out, sizeof out, "%s/out.csv", root);
    cr_expect_neq(access(out, F_OK), 0, "nothing is written");

    /* the limit is the product, and --max-points moves it: 4 batches x 2 phases = 8 points */
    rc = run(NULL, "sweep --model llama2-7b --hw h100-sxm --batch 1-4 --max-points 7");
    cr_expect_eq(rc, 2, "%s", err_text);
    cr_expect(strstr(err_text, "8 points") != NULL, "%s", err_text);
    rc = run(NULL, "sweep --model llama2-7b --hw h100-sxm --batch 1-4 --max-points 8");
    cr_expect_eq(rc, 0, "%s", err_text);
    rc = run(NULL, "sweep --model llama2-7b --hw h100-sxm --batch 1-4 --max-points 0");
    cr_expect_eq(rc, 2, "%s", err_text);
}

/* no file in root other than the ones listed */
static void expect_only(const char *what, const char *keep)
{
    DIR *d = opendir(root);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!keep || strcmp(e->d_name, keep)))
            cr_expect(false, "%s left '%s' behind", what, e->d_name);
    closedir(d);
}

Test(faults, output_past_a_file_size_limit_is_exit_1_and_leaves_nothing)
{
    static const char *const cmds[] = {
        "predict --hw h100-sxm --model llama2-7b --batch 1-64 --format json --out out.json",
        "plan --hw h100-sxm,a100-sxm-80gb,h200,b200 --model llama2-7b --all --format json --out "
        "out.json",
        "compare --hw h100-sxm,a100-sxm-80gb,h200 --model llama2-7b --batch 1-16 --format json "
        "--out out.json",
        "sweep --hw h100-sxm --model llama2-7b --batch 1-2000 --out out.csv",
        "plot latency --hw h100-sxm --model llama2-7b --no-render --out plots",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = run("ulimit -f 2;", cmds[i]); /* 2 KiB */
        cr_expect_eq(rc, 1, "%s: exit %d: %s", cmds[i], rc, err_text);
        cr_expect(strstr(err_text, "too large") || strstr(err_text, "cannot write"), "%s: %s",
                  cmds[i], err_text);
        expect_only(cmds[i], i == 4 ? "plots" : NULL);
        if (i == 4) {
            char p[400];
            snprintf(p, sizeof p, "%s/plots", root);
            cr_expect_eq(count_entries(p), 0, "plot left a partial file");
        }
        rm_rf(root);
        mkdir(root, 0700);
    }
}

Test(faults, output_onto_a_full_file_system_is_exit_1_and_leaves_nothing)
{
    char fs[400];
    snprintf(fs, sizeof fs, "%s/fs", root);
    cr_assert_eq(mkdir(fs, 0700), 0);
    if (mount("tmpfs", fs, "tmpfs", 0, "size=16k") != 0)
        skip_clean(teardown, "cannot mount a small tmpfs here (%s): needs root with CAP_SYS_ADMIN",
                   strerror(errno));
    int rc = run(NULL, "predict --hw h100-sxm --model llama2-7b --batch 1-64 --format json "
                       "--out fs/out.json");
    const size_t left = count_entries(fs);
    const char *msg = err_text;
    umount(fs);
    cr_expect_eq(rc, 1, "exit %d: %s", rc, msg);
    cr_expect(strstr(msg, "No space") != NULL, "%s", msg);
    cr_expect_eq(left, 0, "a partial file was left on the full file system");
}

/* Run ffnroof with stderr on a pseudo-terminal (so that it shows its progress bar), send
 * SIGINT once the progress line shows `trigger` (a case that starts after another finished);
 * returns the exit code. */
static int run_interrupted(char *const argv[], const char *trigger)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(master, 0);
    cr_assert_eq(grantpt(master), 0);
    cr_assert_eq(unlockpt(master), 0);
    const char *slave = ptsname(master);
    cr_assert_not_null(slave);
    pid_t pid =
        cli_spawn(&(cli_opts){.cwd = root, .data_dir = SRC, .err = slave, .err_tty = true}, argv);
    cr_assert_geq(pid, 0);
    static char seen[1 << 20];
    size_t n = 0;
    bool sent = false;
    for (;;) {
        char buf[4096];
        ssize_t r = read(master, buf, sizeof buf);
        if (r <= 0) break; /* EIO once the child closed the terminal */
        if (n + (size_t)r < sizeof seen) {
            memcpy(seen + n, buf, (size_t)r);
            n += (size_t)r;
            seen[n] = '\0';
        }
        if (!sent && strstr(seen, trigger)) {
            kill(pid, SIGINT);
            sent = true;
        }
    }
    close(master);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(sent, "the progress never showed '%s': %s", trigger, seen);
    const size_t keep = n < sizeof err_text - 1 ? n : sizeof err_text - 1;
    memcpy(err_text, seen + n - keep, keep); /* the end of what it said */
    err_text[keep] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(faults, ctrl_c_during_bench_keeps_the_finished_cases)
{
    char *const argv[] = {
        "ffnroof", "bench",  "--hw",    "xeon-8480", "--model", SRC "/tests/data/models/tiny.yaml",
        "--phase", "decode", "--batch", "1-32",      "--reps",  "50",
        "--out",   "b",      NULL};
    int rc = run_interrupted(argv, "T=3 ");
    cr_expect_eq(rc, 1, "exit %d: %s", rc, err_text);
    char path[400];
    snprintf(path, sizeof path, "%s/b/bench.json", root);
    const char *j = cli_slurp(path);
    cr_assert_not_null(j, "no bench.json after the interrupt: %s", err_text);
    cr_expect(strstr(j, "\"complete\": false") != NULL, "not marked incomplete");
    cr_expect(strstr(j, "\"interrupted\": true") != NULL, "not marked interrupted");
    size_t cases = count(j, "\"cold_weights\"");
    cr_expect(cases >= 2 && cases < 32, "%zu cases kept (2 finished before the interrupt)", cases);
}

Test(faults, ctrl_c_during_calibrate_keeps_the_finished_kernel_runs)
{
    char *const argv[] = {"ffnroof", "calibrate", "--test-tiny", "--out", "cal", NULL};
    int rc = run_interrupted(argv, "dense decode T=1");
    cr_expect_eq(rc, 1, "exit %d: %s", rc, err_text);
    char path[400];
    snprintf(path, sizeof path, "%s/cal/calibration.json", root);
    const char *j = cli_slurp(path);
    cr_assert_not_null(j, "no calibration.json after the interrupt: %s", err_text);
    cr_expect(strstr(j, "\"complete\": false") != NULL, "not marked incomplete");
    cr_expect(strstr(j, "\"kernel_runs\"") != NULL);
    cr_expect_geq(count(j, "\"samples\""), 2, "the kernel runs that finished are kept");
}
