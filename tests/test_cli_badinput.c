/* The bad-input matrix: for each subcommand and each flag that takes an input file,
 * the file missing, a directory, empty, binary garbage, truncated, nested too deep, too wide, one
 * very long line, bad UTF-8, a NUL byte and over the size limit each give exit 2 with the file
 * named (with line:col where a place in the file is at fault), within a second, writing
 * nothing; the same file with CRLF line ends or a UTF-8 BOM loads (exit 0). Runs the built
 * binary in an empty working folder per case; output flags point inside it. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ffnroof/limits.h"
#include "helpers/cli_harness.h"

#define SRC FFNROOF_SOURCE_DIR

/* K_BIN: a binary file (safetensors): no lines, so no positions and no CRLF or BOM variants
 * (the good file itself must load instead). */
typedef enum { K_YAML, K_JSON, K_HIST, K_CSV, K_BIN } kind;

typedef enum {
    C_MISSING,
    C_DIR,
    C_EMPTY,
    C_GARBAGE,
    C_TRUNCATED,
    C_DEEP,
    C_WIDE,
    C_LONG,
    C_UTF8,
    C_NUL,
    C_HUGE,
    C_CRLF, /* must load */
    C_BOM,  /* must load */
    C_COUNT
} bad_case;

static const char *const case_name[C_COUNT] = {
    "missing",   "directory", "empty",    "garbage", "truncated", "deep", "wide",
    "long line", "bad UTF-8", "NUL byte", "huge",    "CRLF",      "BOM"};

static char root[256], work[300], err_path[300], in_dir[300];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ffnroof-test-badinput-%d", (int)getpid());
    snprintf(work, sizeof work, "%s/cwd", root);
    snprintf(in_dir, sizeof in_dir, "%s/in", root);
    snprintf(err_path, sizeof err_path, "%s/stderr", root);
    mkdir(root, 0700);
    mkdir(work, 0700);
    mkdir(in_dir, 0700);
}

static void rm_rf(const char *p)
{
    if (!cli_rm_rf(p)) cr_log_warn("could not remove %s", p);
}

static void teardown(void)
{
    rm_rf(root);
}

TestSuite(badinput, .init = setup, .fini = teardown, .timeout = 600);

static char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "cannot read %s", path);
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    cr_assert_eq(fread(s, 1, (size_t)len, fp), (size_t)len);
    s[len] = '\0';
    fclose(fp);
    *n = (size_t)len;
    return s;
}

static void put(FILE *fp, const void *p, size_t n)
{
    cr_assert_eq(fwrite(p, 1, n, fp), n);
}

/* Write the case's file for an input of kind k whose good version is good (a path under SRC);
 * returns its path (the file is not created for C_MISSING). */
static const char *make_input(bad_case c, kind k, const char *good)
{
    static char path[400];
    static const char *const ext[] = {".yaml", ".json", ".txt", ".csv", ".safetensors"};
    snprintf(path, sizeof path, "%s/input-%d%s", in_dir, (int)c, ext[k]);
    rm_rf(path);
    if (c == C_MISSING) return path;
    if (c == C_DIR) {
        cr_assert_eq(mkdir(path, 0700), 0);
        return path;
    }
    if (c == C_HUGE) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, (off_t)FFN_MAX_INPUT_BYTES + 4096), 0);
        close(fd);
        return path;
    }
    size_t n;
    char *g = slurp(good, &n);
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    switch (c) {
    case C_EMPTY:
        break;
    case C_GARBAGE: {
        unsigned x = 12345;
        for (int i = 0; i < 4096; i++) {
            x = x * 1103515245u + 12345u;
            fputc((int)(x >> 16) & 0xFF, fp);
        }
        break;
    }
    case C_TRUNCATED: {
        /* a CSV cut anywhere after its header is still a CSV: cut inside the header; YAML or
         * JSON cut between two lines (or inside a plain scalar) is a shorter valid file: cut
         * just inside the first bracket or quote past the middle that opens a value (after
         * ': ' or '- ' or another opener: not one inside a literal block's text), which cannot
         * close */
        size_t cut = n / 2;
        for (size_t i = n / 2; i < n; i++)
            if ((g[i] == '[' || g[i] == '{' || g[i] == '"') &&
                ((g[i - 1] == ' ' && (g[i - 2] == ':' || g[i - 2] == '-')) || g[i - 1] == '[' ||
                 g[i - 1] == '{')) {
                cut = i + 1;
                break;
            }
        if (k == K_CSV)
            for (size_t i = 0; i < n; i++)
                if ((i == 0 || g[i - 1] == '\n') && g[i] != '#') {
                    cut = i + 5;
                    break;
                }
        put(fp, g, cut);
        break;
    }
    case C_DEEP:
        for (int i = 0; i < 100000; i++)
            fputc(k == K_JSON && i % 2 ? '{' : '[', fp);
        break;
    case C_WIDE:
        if (k == K_YAML)
            for (int i = 0; i < 100000; i++)
                fprintf(fp, "key%d: %d\n", i, i);
        else if (k == K_JSON) {
            fputc('{', fp);
            for (int i = 0; i < 100000; i++)
                fprintf(fp, "%s\"key%d\": %d", i ? ", " : "", i, i);
            fputc('}', fp);
        } else if (k == K_HIST)
            for (int i = 0; i < 100000; i++)
                fputs("1\n", fp);
        else {
            fputs("m,n,k,time_ms\n", fp);
            for (int i = 0; i < 100000; i++)
                fprintf(fp, "%d,64,64,1\n", i + 1);
        }
        break;
    case C_LONG:
        /* one 2 MB line that is wrong only at its end */
        if (k == K_YAML || k == K_JSON) {
            fputs("{\"a\": \"", fp);
            for (int i = 0; i < 2 << 20; i++)
                fputc('x', fp);
            fputs("\", : ]\n", fp);
        } else if (k == K_HIST) {
            for (int i = 0; i < 1 << 20; i++)
                fputs("1 ", fp);
            fputc('\n', fp);
        } else {
            fputs("m,n,k,time_ms\n1,2,3,", fp);
            for (int i = 0; i < 2 << 20; i++)
                fputc('4', fp);
            fputc('\n', fp);
        }
        break;
    case C_UTF8:
    case C_NUL: {
        /* the good file with one bad byte at the start of its third line */
        size_t at = 0;
        for (int lines = 0; at < n && lines < 2; at++)
            if (g[at] == '\n') lines++;
        put(fp, g, at);
        fputc(c == C_UTF8 ? 0xFF : 0, fp);
        put(fp, g + at, n - at);
        break;
    }
    case C_CRLF:
        for (size_t i = 0; i < n; i++) {
            if (g[i] == '\n' && (i == 0 || g[i - 1] != '\r')) fputc('\r', fp);
            fputc(g[i], fp);
        }
        break;
    case C_BOM:
        put(fp, "\xEF\xBB\xBF", 3);
        put(fp, g, n);
        break;
    default:
        break;
    }
    cr_assert_eq(fclose(fp), 0);
    free(g);
    return path;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool dir_empty(const char *p)
{
    DIR *d = opendir(p);
    if (!d) return false;
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
    closedir(d);
    return empty;
}

/* "path:L:C:" somewhere in text, with L and C >= 1 */
static bool has_position(const char *text, const char *path)
{
    size_t pl = strlen(path);
    for (const char *p = strstr(text, path); p; p = strstr(p + 1, path)) {
        const char *q = p + pl;
        if (*q++ != ':' || !isdigit((unsigned char)*q)) continue;
        long line = strtol(q, (char **)&q, 10);
        if (*q++ != ':' || !isdigit((unsigned char)*q)) continue;
        long col = strtol(q, (char **)&q, 10);
        if (*q == ':' && line >= 1 && col >= 1) return true;
    }
    return false;
}

typedef struct row {
    const char *what; /* for messages */
    const char *args; /* the command line, with @ where the input file goes */
    kind k;
    const char *good; /* the file the variants are made from (relative to SRC) */
    bool skip_good;   /* the good run is too slow for the suite (a real benchmark) */
} row;

static double time_limit(void)
{
    /* the issue's bound is one second; sanitizer builds run several times slower */
    return getenv("ASAN_OPTIONS") ? 3.0 : 1.0;
}

static void run_row(const row *r)
{
    char good[512];
    snprintf(good, sizeof good, "%s/%s", SRC, r->good);
    if (r->k == K_BIN && !r->skip_good) {
        char args[2048];
        const char *at = strchr(r->args, '@');
        snprintf(args, sizeof args, "%.*s%s%s", (int)(at - r->args), r->args, good, at + 1);
        rm_rf(work);
        mkdir(work, 0700);
        cr_expect_eq(cli_run(&(cli_opts){.cwd = work, .data_dir = SRC, .err = err_path}, args), 0,
                     "%s: the good file must load", r->what);
    }
    for (int c = 0; c < C_COUNT; c++) {
        /* line ends and a byte-order mark are text matters: a binary file has neither */
        if (r->k == K_BIN && (c == C_CRLF || c == C_BOM)) continue;
        const bool must_load = c == C_CRLF || c == C_BOM;
        if (must_load && r->skip_good) continue;
        const char *in = make_input((bad_case)c, r->k, good);
        char args[2048];
        const char *at = strchr(r->args, '@');
        cr_assert_not_null(at);
        snprintf(args, sizeof args, "%.*s%s%s", (int)(at - r->args), r->args, in, at + 1);
        rm_rf(work);
        mkdir(work, 0700);
        const double t0 = now_s();
        const int code = cli_run(&(cli_opts){.cwd = work, .data_dir = SRC, .err = err_path}, args);
        const double dt = now_s() - t0;
        size_t n;
        char *err = slurp(err_path, &n);
        if (must_load) {
            cr_expect_eq(code, 0, "%s, %s: must load, got exit %d: %s", r->what, case_name[c], code,
                         err);
        } else {
            cr_expect_eq(code, 2, "%s, %s: exit %d (want 2): %s", r->what, case_name[c], code, err);
            cr_expect(strstr(err, in) != NULL, "%s, %s: the message does not name the file: %s",
                      r->what, case_name[c], err);
            const bool positional =
                r->k != K_BIN &&
                (c == C_GARBAGE || c == C_DEEP || c == C_WIDE || c == C_LONG || c == C_UTF8 ||
                 c == C_NUL || (c == C_TRUNCATED && r->k != K_HIST) ||
                 (c == C_EMPTY && (r->k == K_YAML || r->k == K_JSON)));
            if (positional)
                cr_expect(has_position(err, in), "%s, %s: no file:line:col in: %s", r->what,
                          case_name[c], err);
            cr_expect(dt < time_limit(), "%s, %s: took %.2f s", r->what, case_name[c], dt);
            cr_expect(dir_empty(work), "%s, %s: wrote files although it failed", r->what,
                      case_name[c]);
            cr_expect(strstr(err, "AddressSanitizer") == NULL &&
                          strstr(err, "runtime error") == NULL,
                      "%s, %s: sanitizer report: %s", r->what, case_name[c], err);
        }
        free(err);
    }
}

#define HW "hw/h100-sxm.yaml"
#define MODEL "models/llama2-7b.yaml"
#define HF "tests/data/hf/llama-llama3.1-8b.json"
#define HIST "tests/data/hist/mixtral-skewed.txt"
#define CSV "tests/data/fit/a100-sxm-80gb-gemm-fp16.csv"
#define SCEN "scenarios/chat-8b.yaml"
#define CAL "tests/data/plot/calibration.json"
#define BENCH "profiles/vm/threads-1/bench/decode-fp32/bench.json"
#define GOOD_BENCH SRC "/" BENCH

Test(badinput, predict)
{
    const row rows[] = {
        {"predict --hw", "predict --model llama2-7b --hw @ --out out.txt", K_YAML, HW, false},
        {"predict --model", "predict --hw h100-sxm --model @ --out out.txt", K_YAML, MODEL, false},
        {"predict --model (config.json)", "predict --hw h100-sxm --model @ --out out.txt", K_JSON,
         HF, false},
        {"predict --histogram",
         "predict --hw h100-sxm --model mixtral-8x7b --trials 10 --histogram @ --out out.txt",
         K_HIST, HIST, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, fit)
{
    const row rows[] = {
        {"fit --hw", "fit --data " SRC "/" CSV " --hw @", K_YAML, HW, false},
        {"fit --data", "fit --hw a100-sxm-80gb --data @", K_CSV, CSV, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, sweep)
{
    const row rows[] = {
        {"sweep --scenario", "sweep --scenario @ --batch 1 --seq 128 --out out.csv", K_YAML, SCEN,
         false},
        {"sweep --model", "sweep --hw h100-sxm --model @ --out out.csv", K_YAML, MODEL, false},
        {"sweep --hw", "sweep --model llama2-7b --hw @ --out out.csv", K_YAML, HW, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, plan)
{
    const row rows[] = {
        {"plan --scenario", "plan --scenario @ --out out.txt", K_YAML, SCEN, false},
        {"plan --model", "plan --hw h100-sxm --model @ --out out.txt", K_YAML, MODEL, false},
        {"plan --hw", "plan --model llama2-7b --hw @ --out out.txt", K_YAML, HW, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, compare)
{
    const row rows[] = {
        {"compare --model", "compare --hw h100-sxm,a100-sxm-80gb --model @ --out out.txt", K_YAML,
         MODEL, false},
        {"compare --hw", "compare --model llama2-7b --hw @ --out out.txt", K_YAML, HW, false},
        {"compare --scenario", "compare --scenario @ --out out.txt", K_YAML, SCEN, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, report)
{
    const row rows[] = {
        {"report --bench", "report --bench @ --no-render --out rep", K_JSON, BENCH, false},
        {"report --calibration",
         "report --bench " GOOD_BENCH " --calibration @ --no-render --out rep", K_JSON, CAL, false},
        {"report --compare --hw", "report --compare --model llama2-7b --hw @ --no-render --out rep",
         K_YAML, HW, false},
        {"report --compare --model",
         "report --compare --hw h100-sxm --model @ --no-render --out rep", K_YAML, MODEL, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, plot)
{
    const row rows[] = {
        {"plot --hw", "plot roofline --hw @ --no-render --out plots", K_YAML, HW, false},
        {"plot --calibration", "plot roofline --calibration @ --no-render --out plots", K_JSON, CAL,
         false},
        {"plot --bench", "plot roofline --hw h100-sxm --bench @ --no-render --out plots", K_JSON,
         BENCH, false},
        {"plot --model", "plot latency --hw h100-sxm --model @ --no-render --out plots", K_YAML,
         MODEL, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, bench)
{
    /* the bad files must be refused before any kernel runs; of the good ones only --hw with a
     * one-call shape is quick enough for the suite */
    const row rows[] = {
        {"bench --hw", "bench --shape 1,64,64 --reps 1 --hw @ --out b", K_YAML, HW, false},
        {"bench --model", "bench --reps 1 --phase decode --model @ --out b", K_YAML,
         "tests/data/models/tiny.yaml", true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}

Test(badinput, quant)
{
    /* a safetensors checkpoint: every variant of the fuzzer's seed layer is refused before
     * anything is evaluated */
    const row rows[] = {
        {"quant --checkpoint", "quant --checkpoint @ --tokens 2 --no-speed --out out.txt", K_BIN,
         "tests/data/safetensors/layer0-f32.safetensors", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        run_row(&rows[i]);
}
