/* `ffnroof calibrate` under FFNROOF_ISA and Ctrl-C: a level this CPU lacks (or an
 * unknown name) is exit 2 with the usable names and writes nothing, not even the folder; a
 * capped level runs only what it allows (FFNROOF_ISA=avx2 on an AVX-512 host: no 512-bit peak,
 * 256-bit probes, the AVX2 roof); and an interrupt at any point leaves no spec behind unless the
 * run finished. Runs the real binary in its tiny mode (a few seconds per run). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ffnroof/kernels.h"
#include "skip_clean.h"
#include "helpers/cli_harness.h"

static char root[128], out_path[192], err_path[192];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ffnroof-test-calisa-%d", (int)getpid());
    mkdir(root, 0700);
    snprintf(out_path, sizeof out_path, "%s.out", root);
    snprintf(err_path, sizeof err_path, "%s.err", root);
}

static void teardown(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", root, out_path, err_path);
    (void)system(cmd);
}

static int run(const char *env, const char *args)
{
    char vars[256];
    snprintf(vars, sizeof vars, "%s OPENBLAS_NUM_THREADS=1", env);
    return cli_run(&(cli_opts){.cwd = root, .env = vars, .out = out_path, .err = err_path}, args);
}

static bool exists(const char *rel)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return access(p, F_OK) == 0;
}

/* The tiny calibration the interrupt tests start and stop. */
static char *const calibrate_argv[] = {"ffnroof", "calibrate", "--test-tiny", "--out", "cal", NULL};

TestSuite(cli_calisa, .init = setup, .fini = teardown, .timeout = 600);

Test(cli_calisa, unusable_isa_is_exit_2_and_writes_nothing)
{
    char usable[256];
    ffn_isa_usable_list(usable, sizeof usable);
    int rc = run("FFNROOF_ISA=bogus", "calibrate --test-tiny --out cal");
    cr_expect_eq(rc, 2);
    const char *e = cli_slurp(err_path);
    cr_assert_not_null(e);
    cr_expect(strstr(e, "bogus") && strstr(e, usable), "%s", e);
    cr_expect_not(exists("cal"), "the folder was created");
    cr_expect_not(exists("results"), "the remembered spec was touched");
    /* a real level this CPU or binary does not run: the other architecture's */
#if defined(__x86_64__)
    const char *other = "neon";
#else
    const char *other = "avx2";
#endif
    char env[64];
    snprintf(env, sizeof env, "FFNROOF_ISA=%s", other);
    rc = run(env, "calibrate --test-tiny --out cal");
    cr_expect_eq(rc, 2);
    e = cli_slurp(err_path);
    cr_expect(strstr(e, other) && strstr(e, usable), "%s", e);
    cr_expect_not(exists("cal"));
}

Test(cli_calisa, avx2_cap_on_an_avx512_host)
{
    if (!ffn_isa_available(FFN_ISA_AVX512) || !ffn_isa_available(FFN_ISA_AVX2))
        skip_clean(teardown, "needs a host with AVX-512 and AVX2");
    int rc = run("FFNROOF_ISA=avx2", "calibrate --test-tiny --out cal");
    cr_assert_eq(rc, 0, "exit %d: %s", rc, cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "bandwidth probes: avx2 loads; FFNROOF_ISA=avx2") != NULL, "%s", o);
    cr_expect(strstr(o, "fp32_avx2") != NULL, "%s", o);
    cr_expect(strstr(o, "fp32_avx512") == NULL, "a 512-bit peak ran under avx2: %s", o);
    cr_expect(strstr(o, "amx") == NULL || strstr(o, "f32_ffn__avx2") != NULL, "%s", o);
    char p[400];
    snprintf(p, sizeof p, "%s/cal/calibration.json", root);
    const char *j = cli_slurp(p);
    cr_assert_not_null(j);
    /* the fp32 roof the spec records is the AVX2 FMA peak, the one the AVX2 kernel runs on */
    const char *pk = strstr(j, "\"peak_kinds\"");
    cr_assert_not_null(pk);
    cr_expect(strncmp(strstr(pk, "\"fp32\""), "\"fp32\": \"fp32_avx2_fma\"",
                      strlen("\"fp32\": \"fp32_avx2_fma\"")) == 0,
              "the fp32 roof is not the AVX2 FMA: %.120s", pk);
    cr_expect(strncmp(strstr(pk, "\"bf16\""), "\"bf16\": \"fp32_avx2_fma\"",
                      strlen("\"bf16\": \"fp32_avx2_fma\"")) == 0,
              "the AVX2 bf16 kernel converts to fp32: %.120s", pk);
    snprintf(p, sizeof p, "%s/cal/hw.yaml", root);
    const char *y = cli_slurp(p);
    cr_assert_not_null(y);
    cr_expect(strstr(y, "\nfit:\n") != NULL, "the spec records its fit");
}

/* Ctrl-C at several moments: the run either finished (spec and calibration.json written, exit
 * 0) or was stopped (exit 1) and then left no hw.yaml, neither in --out nor as the remembered
 * spec. Under qemu-user (FFNROOF_EMULATED=1, .ci/qemu-x86.sh) the program needs longer than
 * 0.3 s to start and install its SIGINT handler, so the moments are 10 times later there. */
Test(cli_calisa, interrupt_leaves_no_spec)
{
    static const double delays[] = {0.3, 1.5, 3.0, 5.0};
    const double scale = getenv("FFNROOF_EMULATED") ? 10.0 : 1.0;
    for (size_t i = 0; i < sizeof delays / sizeof delays[0]; i++) {
        pid_t pid = cli_spawn(&(cli_opts){.cwd = root}, calibrate_argv);
        cr_assert_geq(pid, 0);
        const double delay = delays[i] * scale;
        struct timespec ts = {(time_t)delay, (long)((delay - (time_t)delay) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, SIGINT);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "killed by a signal after %.1f s", delay);
        const int rc = WEXITSTATUS(st);
        if (rc == 0) {
            cr_expect(exists("cal/hw.yaml") && exists("cal/calibration.json"));
        } else if (rc == 2 && scale > 1.0) {
            /* emulated, finished: TCG's roofs are out of a spec's range, so it wrote none */
            cr_expect_not(exists("cal/hw.yaml"), "a spec out of range was written");
            cr_expect_not(exists("results/last-calibration/hw.yaml"));
        } else {
            cr_expect_eq(rc, 1, "exit %d after %.1f s", rc, delay);
            cr_expect_not(exists("cal/hw.yaml"), "a spec was written after Ctrl-C at %.1f s",
                          delay);
            cr_expect_not(exists("results/last-calibration/hw.yaml"));
            if (exists("cal/calibration.json")) {
                char p[400];
                snprintf(p, sizeof p, "%s/cal/calibration.json", root);
                const char *j = cli_slurp(p);
                cr_expect(j && strstr(j, "\"complete\": false"), "not marked incomplete");
            }
        }
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/cal' '%s/results'", root, root);
        (void)system(cmd);
    }
}

/* Ctrl-C while the results are being written: the moment the first file appears in --out (the
 * spec's temporary file, before any fsync or rename) the run is interrupted. The measurements
 * are over, so the program finishes its files and exits 0 with both in place; it must not die
 * by the signal halfway through them (it did: the handler was taken away before the writes,
 * and CI's slow fsync made the window wide enough for the fixed delays above to land in it). */
static bool dir_has_entry(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool any = false;
    for (struct dirent *e; !any && (e = readdir(d));)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

Test(cli_calisa, interrupt_while_writing_finishes_the_files)
{
    char cal[300];
    snprintf(cal, sizeof cal, "%s/cal", root);
    pid_t pid = cli_spawn(&(cli_opts){.cwd = root}, calibrate_argv);
    cr_assert_geq(pid, 0);
    int st;
    bool seen = false;
    while (!seen) {
        if (waitpid(pid, &st, WNOHANG) == pid) break; /* finished before we looked */
        seen = dir_has_entry(cal);
    }
    if (!seen) {
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run failed");
        skip_clean(teardown, "the run wrote and exited between two looks at %s", cal);
    }
    kill(pid, SIGINT);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "killed by signal %d while writing its files",
              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (getenv("FFNROOF_EMULATED") && WEXITSTATUS(st) == 2) {
        /* emulated: TCG's roofs are out of a spec's range, so the spec was refused (as in
         * interrupt_leaves_no_spec); what matters here is that it exited, not by the signal */
        cr_expect_not(exists("cal/hw.yaml"), "a spec out of range was written");
        return;
    }
    cr_expect_eq(WEXITSTATUS(st), 0);
    cr_expect(exists("cal/hw.yaml") && exists("cal/calibration.json"));
}

/* A spec whose fit is poor, or failed, still loads, and compare and bench print the warning
 * beside every prediction made with it; every other command on stderr. */
Test(cli_calisa, poor_fit_is_shown_beside_every_prediction)
{
    char src[400], dst[400];
    snprintf(src, sizeof src, "%s/hw/xeon-8480.yaml", FFNROOF_SOURCE_DIR);
    snprintf(dst, sizeof dst, "%s/poor.yaml", root);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && printf 'fit:\\n  median_error: 0.23\\n  worst_error: 0.5\\n"
             "  points: 6\\n  held_out_median: 0.3\\n' >> '%s'",
             src, dst, dst);
    cr_assert_eq(system(cmd), 0);
    int rc = run("", "compare --hw poor.yaml --model llama2-7b --batch 1,8");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    const char *o = cli_slurp(out_path);
    cr_expect(strstr(o, "median error of 23.0%") != NULL, "%s", o);
    size_t marks = 0;
    for (const char *p = strstr(o, "! fit\n"); p; p = strstr(p + 1, "! fit\n"))
        marks++;
    cr_expect_eq(marks, 3, "prefill + 2 decode rows, each marked: %s", o);
    rc = run("", "compare --hw poor.yaml --model llama2-7b --batch 1 --format json");
    cr_assert_eq(rc, 0);
    cr_expect(strstr(cli_slurp(out_path), "\"fit_warning\"") != NULL);
    /* predict and plan say it on stderr */
    rc = run("", "predict --hw poor.yaml --model llama2-7b --batch 1");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(err_path), "ffnroof predict: warning: the efficiency fit of spec") !=
                  NULL,
              "%s", cli_slurp(err_path));
    rc = run("", "plan --hw poor.yaml --model llama2-7b --tp 1");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(err_path), "ffnroof plan: warning: the efficiency fit of spec") !=
                  NULL,
              "%s", cli_slurp(err_path));
    /* failed */
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf 'fit:\\n  failed: true\\n' >> '%s'", src, dst,
             dst);
    cr_assert_eq(system(cmd), 0);
    rc = run("", "compare --hw poor.yaml --model llama2-7b --batch 1");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "fit of spec") && strstr(cli_slurp(out_path), "failed"));
}
