/* `ffnroof plot`, `compare` and `report` end to end (the built binary): without gnuplot on the
 * PATH the data and script are written with a message saying how to render them; with gnuplot
 * the PNG is a valid PNG of the requested size (IHDR) and the SVG says the same size; bad input
 * exits 2 with one line; an existing report is kept without --force; the comparison's JSON and
 * CSV hold one entry per device and point; a bench report validates the fixture's cases. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffnroof/report_md.h"
#include "skip_clean.h"
#include "helpers/cli_harness.h"

#define DATA FFNROOF_TEST_DATA "/plot/"

static char dir[256], err_path[300], out_path[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ffnroof-report-test-%d", (int)getpid());
    snprintf(err_path, sizeof err_path, "%s.err", dir);
    snprintf(out_path, sizeof out_path, "%s.out", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", dir, err_path, out_path);
    (void)!system(cmd);
}

/* Run `env ffnroof ARGS` with stdout/stderr to files; returns the exit code. */
static int run_env(const char *env, const char *args)
{
    return cli_run(&(cli_opts){.cwd = dir,
                               .env = env,
                               .data_dir = FFNROOF_SOURCE_DIR,
                               .out = out_path,
                               .err = err_path},
                   args);
}

static int run(const char *args)
{
    return run_env(NULL, args);
}

static bool exists(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static bool have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* Width and height from a PNG's IHDR chunk; false when the file is not a PNG. */
static bool png_size(const char *path, uint32_t *w, uint32_t *h)
{
    unsigned char b[24];
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(b, sig, 8) || memcmp(b + 12, "IHDR", 4)) return false;
    *w = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    *h = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    return true;
}

TestSuite(cli_report, .init = setup, .fini = teardown, .timeout = 120);

Test(cli_report, no_gnuplot_writes_data_and_script_and_says_how_to_render)
{
    /* an empty PATH: gnuplot cannot be found (the binary is called by its full path) */
    int rc = run_env("PATH=", "plot roofline --hw h100-sxm --model llama2-7b --out charts");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    cr_expect(exists("charts/roofline.dat"));
    cr_expect(exists("charts/roofline.gp"));
    cr_expect(!exists("charts/roofline.png"));
    const char *e = cli_slurp(err_path);
    cr_expect(strstr(e, "gnuplot not found"), "%s", e);
    cr_expect(strstr(e, "gnuplot roofline.gp"), "says how to render: %s", e);
    cr_expect_eq(lines(e), 1, "one line: %s", e);
    char p[600];
    snprintf(p, sizeof p, "%s/charts/roofline.gp", dir);
    const char *gp = cli_slurp(p);
    cr_expect(strstr(gp, "datafile = \"roofline.dat\""));
    cr_expect(strstr(gp, "title \"bf16/fp16 989 TFLOP/s, ridge"), "the legend names the roof");
}

Test(cli_report, gnuplot_renders_a_png_of_the_requested_size)
{
    if (!have_gnuplot()) skip_clean(teardown, "gnuplot is not installed here");
    int rc = run("plot roofline --hw h100-sxm,xeon-8480 --model llama2-7b --size 640x480 "
                 "--out charts --name r");
    cr_assert_eq(rc, 0, "%s", cli_slurp(err_path));
    char p[600];
    snprintf(p, sizeof p, "%s/charts/r.png", dir);
    uint32_t w = 0, h = 0;
    cr_assert(png_size(p, &w, &h), "r.png is not a PNG");
    cr_expect_eq(w, 640);
    cr_expect_eq(h, 480);
    snprintf(p, sizeof p, "%s/charts/r.svg", dir);
    const char *svg = cli_slurp(p);
    cr_assert_not_null(svg);
    cr_expect(strstr(svg, "<svg") && strstr(svg, "width=\"640\""), "SVG of the same size");
    /* no temporary image left behind */
    snprintf(p, sizeof p, "ls '%s/charts' | grep -q tmp", dir);
    cr_expect_neq(system(p), 0, "temporary files left");
}

Test(cli_report, latency_and_moe_charts_render)
{
    if (!have_gnuplot()) skip_clean(teardown, "gnuplot is not installed here");
    cr_assert_eq(run("plot latency --model mixtral-8x7b --hw h100-sxm --batch 1-64:x4 --seq "
                     "128,1024 --bench " DATA "bench.json --out c --size 400x300"),
                 0, "%s", cli_slurp(err_path));
    char p[600];
    uint32_t w, h;
    snprintf(p, sizeof p, "%s/c/latency.png", dir);
    cr_expect(png_size(p, &w, &h) && w == 400 && h == 300);
    snprintf(p, sizeof p, "%s/c/latency.dat", dir);
    const char *dat = cli_slurp(p);
    cr_expect(strstr(dat, "fixture-host"), "the bench's measured series");
    cr_expect(strstr(dat, "h100-sxm: ridge point"), "the ridge is marked");
    cr_assert_eq(run("plot moe --model mixtral-8x7b --hw h100-sxm --by ep --ep 1,2,4 --out c "
                     "--size 400x300"),
                 0, "%s", cli_slurp(err_path));
    snprintf(p, sizeof p, "%s/c/moe.png", dir);
    cr_expect(png_size(p, &w, &h) && w == 400);
    snprintf(p, sizeof p, "%s/c/moe.dat", dir);
    cr_expect_eq(lines(strstr(cli_slurp(p), "# [0]")), 4, "one row per EP degree");
}

/* Five devices or more: `compare --plots` draws the roofline as small multiples from
 * plots/roofline-grid.gp, one panel per device, and gnuplot renders it (an image sized for the
 * grid); four keep the single chart. */
Test(cli_report, compare_of_many_devices_draws_small_multiples)
{
    cr_assert_eq(run_env("PATH=", "compare --model llama3-70b --hw h100-sxm,h200,b200,mi300x "
                                  "--plots four"),
                 0, "%s", cli_slurp(err_path));
    char p[600];
    snprintf(p, sizeof p, "%s/four/roofline.gp", dir);
    const char *gp = cli_slurp(p);
    cr_assert_not_null(gp);
    cr_expect_null(strstr(gp, "multiplot"), "four devices: one chart");
    if (!have_gnuplot()) skip_clean(teardown, "gnuplot is not installed here");
    cr_assert_eq(run("compare --model llama3-70b --hw h100-sxm,h200,b200,mi300x,mi355x,"
                     "a100-sxm-80gb,l40s --plots seven"),
                 0, "%s", cli_slurp(err_path));
    snprintf(p, sizeof p, "%s/seven/roofline.gp", dir);
    gp = cli_slurp(p);
    cr_assert_not_null(gp);
    cr_expect(strstr(gp, "set multiplot layout 3,3 rowsfirst"), "%s", gp);
    static const char *const devs[] = {"h100-sxm", "h200",          "b200", "mi300x",
                                       "mi355x",   "a100-sxm-80gb", "l40s"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "set title \"%s\\n", devs[i]);
        cr_expect(strstr(gp, want), "no panel titled %s", devs[i]);
    }
    snprintf(p, sizeof p, "%s/seven/roofline.png", dir);
    uint32_t w = 0, h = 0;
    cr_assert(png_size(p, &w, &h), "roofline.png is not a PNG");
    cr_expect(w == 80 + 30 + 3 * 400 + 2 * 44 && h == 84 + 96 + 3 * 260 + 2 * 60, "%ux%u", w, h);
}

Test(cli_report, bad_input_exits_2_with_one_line)
{
    static const char *const cases[][2] = {
        {"plot sunburst", "unknown chart 'sunburst'"},
        {"plot roofline --bench " DATA "calibration.json --no-render", "is not a bench result"},
        {"plot roofline --calibration " DATA "bench.json --no-render", "is not a calibration"},
        {"plot roofline --bench " DATA "bench-newer.json --no-render", "newer ffnroof"},
        {"plot roofline --bench " DATA "bench-empty.json --no-render", "no cases"},
        {"plot moe --model llama2-7b --hw h100-sxm --no-render", "has no experts"},
        {"plot roofline --hw h100-sxm --out /proc/ffnroof-no", "cannot create folder"},
        {"compare --model llama2-7b --hw ,", "empty comparison"},
        {"compare --model llama2-7b", "empty comparison"},
        {"compare --model llama2-7b --hw h100-sxm --plots /proc/ffnroof-no", "cannot create"},
        {"compare --model llama2-7b --plots c --hw h100-sxm,h200,b200,b300,mi300x,mi325x,mi355x,"
         "a100-sxm-80gb,l40s,gaudi3,tpu-v5p,xeon-8480,h100-pcie",
         "at most 12 devices"},
        {"report --out r --bench " DATA "calibration.json", "is not a bench result"},
        {"report --out r", "exactly one of"},
        {"report --out r --quick --compare", "exactly one of"},
        {"report --out r --model llama2-7b --bench " DATA "bench.json", "need --compare"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run(cases[i][0]);
        const char *e = cli_slurp(err_path);
        cr_expect_eq(rc, 2, "'%s' exited %d", cases[i][0], rc);
        cr_expect(strstr(e, cases[i][1]), "'%s': %s", cases[i][0], e);
        cr_expect_leq(lines(e), 2, "'%s': one line (+ the --help hint): %s", cases[i][0], e);
    }
    /* an output "folder" that is a file */
    char p[600];
    snprintf(p, sizeof p, "%s/afile", dir);
    FILE *fp = fopen(p, "w");
    fclose(fp);
    cr_expect_eq(run("plot roofline --hw h100-sxm --out afile"), 2);
}

Test(cli_report, compare_json_and_csv)
{
    cr_assert_eq(run("compare --model mixtral-8x7b --hw h100-sxm,mi300x,xeon-8480 --batch 1,8 "
                     "--format json"),
                 0, "%s", cli_slurp(err_path));
    const char *j = cli_slurp(out_path);
    cr_expect(strstr(j, "\"schema\": \"ffnroof.compare/1\""));
    int devs = 0;
    for (const char *p = j; (p = strstr(p, "\"devices_for_weights\"")); p++)
        devs++;
    cr_expect_eq(devs, 3);
    /* Mixtral in bf16 (93 GB) does not fit an 80 GB H100 but fits a 192 GB MI300X */
    const char *h = strstr(j, "\"name\": \"h100-sxm\"");
    cr_assert_not_null(h);
    cr_expect(strstr(h, "\"fits\": false") < strstr(h, "\"name\": \"mi300x\""));
    cr_expect(strstr(j, "\"alltoall_s\""), "the MoE breakdown");
    cr_assert_eq(run("compare --model llama2-7b --hw h100-sxm,xeon-8480 --batch 1,8,64 --format "
                     "csv"),
                 0);
    cr_expect_eq(lines(cli_slurp(out_path)), 1 + 2 * (1 + 3),
                 "header + per device prefill + 3 "
                 "decode rows");
    cr_assert_eq(run("compare --model llama2-7b --hw h100-sxm"), 0);
    cr_expect(strstr(cli_slurp(out_path), "ridge"));
}

Test(cli_report, report_compare_is_kept_without_force)
{
    cr_assert_eq(run("report --out r --no-render --compare --model mixtral-8x7b --hw "
                     "h100-sxm,xeon-8480 --batch 1,64"),
                 0, "%s", cli_slurp(err_path));
    char p[600];
    snprintf(p, sizeof p, "%s/r/report.md", dir);
    const char *md = cli_slurp(p);
    cr_assert_not_null(md);
    cr_expect(strstr(md, "## The question"));
    cr_expect(strstr(md, "## Inputs"));
    cr_expect(strstr(md, "NVIDIA H100"), "the spec's source");
    cr_expect(strstr(md, "| h100-sxm | gpu |"));
    cr_expect(strstr(md, "![FFN latency per layer](latency.png)"));
    cr_expect(strstr(md, "## How the numbers are made"));
    cr_expect(exists("r/latency.gp") && exists("r/roofline.gp") && exists("r/moe.gp"));
    /* a second run keeps it, --force replaces it */
    struct stat a, b;
    stat(p, &a);
    cr_expect_eq(run("report --out r --compare --model llama2-7b --hw h100-sxm"), 2);
    cr_expect(strstr(cli_slurp(err_path), "--force"));
    cr_expect(strstr(cli_slurp(p), "mixtral-8x7b"), "untouched");
    cr_assert_eq(
        run("report --out r --force --no-render --compare --model llama2-7b --hw h100-sxm"), 0,
        "%s", cli_slurp(err_path));
    stat(p, &b);
    cr_expect(strstr(cli_slurp(p), "llama2-7b on h100-sxm"));
    (void)a, (void)b;
}

Test(cli_report, report_bench_validates_the_cases)
{
    cr_assert_eq(run("report --out v --no-render --bench " DATA "bench.json --calibration " DATA
                     "calibration.json"),
                 0, "%s", cli_slurp(err_path));
    char p[600];
    snprintf(p, sizeof p, "%s/v/report.md", dir);
    const char *md = cli_slurp(p);
    cr_assert_not_null(md);
    cr_expect(strstr(md, "| 1 | dense | decode | 1 | 64 | 128 | - | fp32 | 2 | 10.0 us | 5.00 us | "
                         "11.0 us | +10.0% | 50% |"),
              "%s", md);
    cr_expect(strstr(md, "| 2 | dense | prefill | 64 |"));
    cr_expect(strstr(md, "-25.0%"));
    cr_expect(strstr(md, "8 (2)"), "MoE experts (top-k)");
    /* |errors| 0.10, 0.25, 0.10: median 10%, worst 25% */
    cr_expect(strstr(md, "median |error| 10.0%, worst 25.0%; 2 within 10%, 3 within 25%"), "%s",
              strstr(md, "Prediction error"));
    cr_expect(strstr(md, "software-defined events only"));
    snprintf(p, sizeof p, "%s/v/roofline.dat", dir);
    const char *dat = cli_slurp(p);
    cr_expect(strstr(dat, "fp32 avx512"), "the calibration's roofs");
    cr_expect(strstr(dat, "\"moe decode T=1 fp32\""), "the bench's points");
}

/* The quick report's drift paragraph (report_md.h): both times and the change of each run, and
 * whether the host held within 10% or moved by up to the largest change; nothing without runs
 * or with a missing time. The text goes to out (n bytes). */
static void drift_text(const ffn_rerun *d, size_t nd, char *out, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    cr_assert_not_null(fp);
    ffn_md_quick_drift(fp, d, nd);
    fclose(fp);
    snprintf(out, n, "%s", buf);
    free(buf);
}

Test(cli_report, quick_drift_says_whether_the_host_held)
{
    char t[1024];
    ffn_rerun d[2] = {{"fp32 decode T = 1, d = 2048,", 6.03e-3, 5.10e-3},
                      {"fp32 prefill T = 256, d = 1024,", 20.3e-3, 20.4e-3}};
    drift_text(d, 2, t, sizeof t);
    cr_expect(strstr(t, "fp32 decode T = 1, d = 2048, 6.03 ms then 5.10 ms (-15%)") != NULL, "%s",
              t);
    cr_expect(strstr(t, "(+0%)") != NULL, "%s", t);
    cr_expect(strstr(t, "moved by up to 15%") != NULL, "%s", t);
    d[0].after_s = 6.2e-3;
    drift_text(d, 2, t, sizeof t);
    cr_expect(strstr(t, "held within 10%") != NULL, "%s", t);
    drift_text(d, 0, t, sizeof t);
    cr_expect_str_eq(t, "");
    d[1].after_s = NAN;
    drift_text(d, 2, t, sizeof t);
    cr_expect_str_eq(t, "");
}

/* compare takes one model: a scenario naming several compares the first and says so. */
Test(cli_report, compare_of_a_many_model_scenario_says_which_it_compares, .init = setup,
     .fini = teardown)
{
    char path[400];
    snprintf(path, sizeof path, "%s/two.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("name: two\nmodel: [llama2-7b, mistral-7b]\nhw: [h100-sxm, b200]\n", f);
    fclose(f);
    cr_assert_eq(run("compare --scenario two.yaml --batch 1"), 0, "%s", cli_slurp(err_path));
    cr_expect(
        strstr(cli_slurp(err_path), "the scenario names 2, the first (llama2-7b) is compared"),
        "%s", cli_slurp(err_path));
    cr_expect(strstr(cli_slurp(out_path), "llama2-7b"), "%s", cli_slurp(out_path));
}

/* The commands that write a folder take --out-dir, and --out as before; both at once is refused. */
Test(cli_report, out_dir_is_the_folder, .init = setup, .fini = teardown)
{
    cr_assert_eq(run("plot roofline --hw h100-sxm --model llama2-7b --out-dir od --no-render"), 0,
                 "%s", cli_slurp(err_path));
    cr_expect(exists("od/roofline.gp"));
    cr_assert_eq(run("plot roofline --hw h100-sxm --model llama2-7b --out o2 --no-render"), 0, "%s",
                 cli_slurp(err_path));
    cr_expect(exists("o2/roofline.gp"));
    cr_expect_eq(run("plot roofline --hw h100-sxm --model llama2-7b --out a --out-dir b"), 2);
    cr_expect(strstr(cli_slurp(err_path), "both given"), "%s", cli_slurp(err_path));
}

/* A spec's source in the report is its first sentence, whole: no line ends inside a
 * parenthesis. */
Test(cli_report, spec_sources_are_whole_sentences, .init = setup, .fini = teardown)
{
    cr_assert_eq(run("report --compare --model llama2-7b --hw h100-sxm,mi300x,b200 --no-render "
                     "--out-dir r"),
                 0, "%s", cli_slurp(err_path));
    char p[600];
    snprintf(p, sizeof p, "%s/r/report.md", dir);
    const char *md = cli_slurp(p);
    cr_assert_not_null(md);
    int lines = 0;
    for (const char *l = strstr(md, "  - **"); l; l = strstr(l + 1, "  - **")) {
        const char *e = strchr(l, '\n');
        int depth = 0;
        for (const char *q = l; q < e; q++)
            depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
        cr_expect_eq(depth, 0, "%.*s", (int)(e - l), l);
        lines++;
    }
    cr_expect_eq(lines, 3);
}
