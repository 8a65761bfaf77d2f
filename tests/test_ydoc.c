/* Hostile YAML/JSON input (io/load/ydoc.c, io/load/input.c, include/ffnroof/limits.h): the limits
 * on nesting, keys per mapping, values and file size are checked before parsing can go quadratic,
 * so each such file is refused quickly with its position; duplicate keys are found in n log n;
 * reader errors (bad UTF-8, control characters, NUL) are reported where they are, not at 1:1; a
 * second document is refused even when it is broken; a directory is said to be one; a BOM and CRLF
 * line ends load. Every loader goes through ffn_ydoc_load, so the hw loader stands for all of them
 * here (the CLI matrix, test_cli_badinput.c, covers each flag). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/load/ydoc.h"
#include "ffnroof/hw.h"
#include "ffnroof/limits.h"
#include "ffnroof/model.h"
#include "ffnroof/hw_load.h"

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/ffnroof-test-ydoc-%d.yaml", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(ydoc, .init = setup, .fini = teardown);

static void write_file(const char *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(data, 1, n, fp), n);
    cr_assert_eq(fclose(fp), 0);
}

/* Time bounds say "not quadratic"; a Debug build under the sanitizers is several times slower,
 * and one under qemu-user's TCG (FFNROOF_EMULATED=1, .ci/qemu-x86.sh) 20-100 times. */
static double slack(void)
{
    if (getenv("FFNROOF_EMULATED")) return 100.0;
    return getenv("ASAN_OPTIONS") ? 5.0 : 1.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Load path as a YAML document; returns the code, fills d and the seconds it took. */
static int load(ffn_diag *d, double *secs)
{
    ffn_ydoc y;
    ffn_diag_clear(d);
    double t0 = now_s();
    int rc = ffn_ydoc_load(&y, path, d);
    ffn_ydoc_release(&y);
    if (secs) *secs = now_s() - t0;
    return rc;
}

static char *repeat(const char *unit, size_t times, const char *tail)
{
    size_t ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(ul * times + tl + 1);
    cr_assert_not_null(s);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * ul, unit, ul);
    memcpy(s + ul * times, tail, tl + 1);
    return s;
}

Test(ydoc, deep_flow_nesting_is_refused_at_the_limit_quickly)
{
    /* 100,000 '[' took 42 s in libyaml before its own error */
    char *s = repeat("[", 100000, "");
    write_file(s, strlen(s));
    free(s);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ERANGE, "%s", d.msg);
    cr_expect(t < 1.0 * slack(), "took %.2f s", t);
    cr_expect(strstr(d.msg, "deeper than 64") != NULL, "%s", d.msg);
    cr_expect_eq(d.line, 1);
    cr_expect_eq(d.col, FFN_MAX_DEPTH + 1, "the first collection beyond the limit: col %d", d.col);
}

Test(ydoc, deep_json_objects_and_block_nesting_are_refused)
{
    char *s = repeat("{\"a\": ", 50000, "1");
    write_file(s, strlen(s));
    free(s);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ERANGE, "%s", d.msg);
    cr_expect(t < 1.0 * slack(), "took %.2f s", t);

    /* block style: 70 levels of indentation */
    char buf[70 * 80];
    size_t n = 0;
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%*sk%d:\n", i, "", i);
    write_file(buf, n);
    cr_assert_eq(load(&d, NULL), FFN_ERANGE, "%s", d.msg);
    cr_expect_eq(d.line, FFN_MAX_DEPTH + 1, "the line of the 65th mapping: %d", d.line);
}

Test(ydoc, nesting_up_to_the_limit_loads)
{
    char *s = malloc(2 * FFN_MAX_DEPTH + 1);
    for (int i = 0; i < FFN_MAX_DEPTH; i++)
        s[i] = '[', s[2 * FFN_MAX_DEPTH - 1 - i] = ']';
    s[2 * FFN_MAX_DEPTH] = '\0';
    write_file(s, strlen(s));
    free(s);
    ffn_diag d;
    cr_expect_eq(load(&d, NULL), 0, "%s", d.msg);
}

Test(ydoc, a_mapping_of_100000_keys_is_refused_quickly)
{
    /* 1 MB of distinct keys took over 20 s in the pairwise duplicate check */
    size_t cap = 100000 * 16, n = 0;
    char *s = malloc(cap);
    for (int i = 0; i < 100000; i++)
        n += (size_t)snprintf(s + n, cap - n, "key%d: %d\n", i, i);
    write_file(s, n);
    free(s);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ERANGE, "%s", d.msg);
    cr_expect(t < 1.0 * slack(), "took %.2f s", t);
    cr_expect(strstr(d.msg, "more than 10000 keys") != NULL, "%s", d.msg);
    cr_expect_eq(d.line, FFN_MAX_KEYS + 1);
}

Test(ydoc, duplicate_keys_are_found_in_a_wide_mapping_quickly)
{
    /* 10,000 keys (the limit) with the only duplicate at the very end: the sort finds it */
    size_t cap = 10000 * 20, n = 0;
    char *s = malloc(cap);
    for (int i = 0; i < 9999; i++)
        n += (size_t)snprintf(s + n, cap - n, "key%d: %d\n", i, i);
    n += (size_t)snprintf(s + n, cap - n, "key17: again\n");
    write_file(s, n);
    free(s);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ESCHEMA, "%s", d.msg);
    cr_expect(t < 1.0 * slack(), "took %.2f s", t);
    cr_expect(strstr(d.msg, "duplicate key 'key17'") != NULL, "%s", d.msg);
    cr_expect_eq(d.line, 10000);
    cr_expect_eq(d.col, 1);
}

Test(ydoc, the_earliest_second_occurrence_is_the_duplicate_reported)
{
    const char *s = "b: 1\na: 1\nc:\n  x: 1\n  x: 2\na: 2\nb: 2\n";
    write_file(s, strlen(s));
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_ESCHEMA);
    /* in the root mapping 'a' repeats first (line 6); the nested mapping's 'x' is its own */
    cr_expect(strstr(d.msg, "'x'") || strstr(d.msg, "'a'"), "%s", d.msg);
    const char *t = "b: 1\na: 1\na: 2\nb: 2\n";
    write_file(t, strlen(t));
    cr_assert_eq(load(&d, NULL), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "duplicate key 'a'") != NULL, "%s", d.msg);
    cr_expect_eq(d.line, 3);
}

Test(ydoc, control_character_is_reported_at_its_line)
{
    char buf[512];
    size_t n = 0;
    for (int i = 0; i < 29; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "k%d: x\n", i);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "vendor: a\x01z\n");
    write_file(buf, n);
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 30, "reported at %d:%d: %s", d.line, d.col, d.msg);
    cr_expect_eq(d.col, 10);
    cr_expect(strstr(d.msg, "control characters") != NULL, "%s", d.msg);
}

Test(ydoc, bad_utf8_is_reported_at_its_line)
{
    char buf[512];
    size_t n = 0;
    for (int i = 0; i < 29; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "k%d: \xc3\xa9t\xc3\xa9\n", i);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "vendor: \xc3\xa9\xff\n");
    write_file(buf, n);
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 30, "reported at %d:%d: %s", d.line, d.col, d.msg);
    cr_expect_eq(d.col, 10, "columns count characters, not bytes");
    cr_expect(strstr(d.msg, "UTF-8") != NULL, "%s", d.msg);
}

Test(ydoc, nul_byte_is_reported_at_its_line)
{
    const char s[] = "a: 1\nb: 2\nc: x\0y\n";
    write_file(s, sizeof s - 1);
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 3);
    cr_expect_eq(d.col, 5);
}

Test(ydoc, a_second_document_is_refused_even_when_broken)
{
    const char *s = "a: 1\n---\n[[[ : {\n";
    write_file(s, strlen(s));
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 2, "%d:%d %s", d.line, d.col, d.msg);
    cr_expect(strstr(d.msg, "second YAML document") != NULL, "%s", d.msg);
    const char *t = "a: 1\n---\nb: 2\n";
    write_file(t, strlen(t));
    cr_assert_eq(load(&d, NULL), FFN_EPARSE, "%s", d.msg);
    /* one document with explicit markers is fine */
    const char *u = "---\na: 1\n...\n";
    write_file(u, strlen(u));
    cr_expect_eq(load(&d, NULL), 0, "%s", d.msg);
}

Test(ydoc, syntax_errors_after_the_first_document_are_not_missed)
{
    const char *s = "a: 1\n...\n]\n";
    write_file(s, strlen(s));
    ffn_diag d;
    cr_expect_lt(load(&d, NULL), 0, "a stray ']' after the document must not be ignored");
    cr_expect_eq(d.line, 3, "%d:%d %s", d.line, d.col, d.msg);
}

Test(ydoc, a_directory_is_said_to_be_one)
{
    ffn_ydoc y;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_ydoc_load(&y, "/tmp", &d), FFN_EIO);
    ffn_ydoc_release(&y);
    cr_expect(strstr(d.msg, "is a directory") != NULL, "%s", d.msg);
    cr_expect(strstr(d.msg, "syntax") == NULL, "%s", d.msg);
}

Test(ydoc, a_file_over_the_size_limit_is_refused_without_reading_it)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)FFN_MAX_INPUT_BYTES + 1), 0); /* sparse */
    close(fd);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ERANGE, "%s", d.msg);
    cr_expect(t < 0.5 * slack(), "took %.2f s", t);
    cr_expect(strstr(d.msg, "64 MiB") != NULL, "%s", d.msg);
}

Test(ydoc, too_many_values_are_refused)
{
    /* a flow list of FFN_MAX_NODES + 1 small values (2 MB) */
    char *s = repeat(",1", FFN_MAX_NODES + 1, "]");
    s[0] = '['; /* "[1,1,...,1]" */
    write_file(s, strlen(s));
    free(s);
    ffn_diag d;
    double t;
    cr_assert_eq(load(&d, &t), FFN_ERANGE, "%s", d.msg);
    cr_expect(t < 2.0 * slack(), "took %.2f s", t);
    cr_expect(strstr(d.msg, "values in one file") != NULL, "%s", d.msg);
}

Test(ydoc, empty_and_comment_only_files_say_so)
{
    write_file("", 0);
    ffn_diag d;
    cr_assert_eq(load(&d, NULL), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "empty") != NULL, "%s", d.msg);
    write_file("# nothing\n\n", 11);
    cr_assert_eq(load(&d, NULL), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "empty") != NULL, "%s", d.msg);
}

Test(ydoc, bom_and_crlf_load_and_positions_stay_right)
{
    /* the shipped h100 spec, with a UTF-8 BOM and CRLF line ends, loads as it is */
    FILE *in = fopen(FFNROOF_SOURCE_DIR "/hw/h100-sxm.yaml", "rb");
    cr_assert_not_null(in);
    static char src[1 << 16], out[1 << 17];
    size_t n = fread(src, 1, sizeof src, in), m = 0;
    fclose(in);
    memcpy(out, "\xEF\xBB\xBF", 3);
    m = 3;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\n') out[m++] = '\r';
        out[m++] = src[i];
    }
    write_file(out, m);
    static ffn_hw hw, ref;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_hw_load(path, &hw, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_hw_load(FFNROOF_SOURCE_DIR "/hw/h100-sxm.yaml", &ref, &d), 0, "%s", d.msg);
    cr_expect_str_eq(hw.name, ref.name);
    cr_expect_eq(hw.mem_bandwidth_bps, ref.mem_bandwidth_bps);
    /* and an error in a CRLF file is at its line */
    const char *s = "a: 1\r\nb: 2\r\nc: [\r\n";
    write_file(s, strlen(s));
    cr_assert_eq(load(&d, NULL), FFN_EPARSE);
    cr_expect_geq(d.line, 3, "%d:%d %s", d.line, d.col, d.msg);
}
