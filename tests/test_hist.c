/* The expert-popularity histogram loader (io/load/hist_load.c, include/ffnroof/hist.h): numbers,
 * separators and comments; lines of any length (a number straddling byte 4095 of a line used
 * to become two numbers, exit 0 with wrong weights); positions on long lines; CRLF and a BOM;
 * and every bad file - a directory, an empty file, a NUL byte, a negative, non-finite or
 * overflowing weight - refused with file:line:col. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/hist.h"

static char path[256];
static double w[4096];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/ffnroof-test-hist-%d.txt", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(hist, .init = setup, .fini = teardown);

static void write_file(const char *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(data, 1, n, fp), n);
    cr_assert_eq(fclose(fp), 0);
}

static int load(size_t *n, ffn_diag *d)
{
    ffn_diag_clear(d);
    return ffn_hist_load(path, w, 4096, n, d);
}

Test(hist, reads_numbers_separated_by_spaces_commas_and_lines)
{
    const char *s = "# eight experts\n1, 2 3\n4,5,  6 # trailing comment\n\n7\t8\n";
    write_file(s, strlen(s));
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 8);
    for (size_t i = 0; i < 8; i++)
        cr_expect_eq(w[i], (double)(i + 1));
}

Test(hist, the_shipped_fixture_loads)
{
    size_t n;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_hist_load(FFNROOF_TEST_DATA "/hist/mixtral-skewed.txt", w, 4096, &n, &d), 0,
                 "%s", d.msg);
    cr_expect_eq(n, 8);
}

Test(hist, a_number_straddling_byte_4095_stays_one_number)
{
    /* 4093 spaces, then "123456" across bytes 4094..4099 of the line, then a second number */
    char *s = malloc(8192);
    memset(s, ' ', 4093);
    strcpy(s + 4093, "123456 7\n");
    write_file(s, strlen(s));
    free(s);
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 2, "got %zu entries", n);
    cr_expect_eq(w[0], 123456.0);
    cr_expect_eq(w[1], 7.0);
}

Test(hist, a_bad_entry_after_a_long_line_is_on_line_2)
{
    /* line 1 is 6,000 bytes (a 4096-byte reader counted it as two lines) */
    size_t cap = 40000, len = 0;
    char *s = malloc(cap);
    for (int i = 0; i < 3000; i++)
        len += (size_t)snprintf(s + len, cap - len, "1 ");
    len += (size_t)snprintf(s + len, cap - len, "\n1 x\n");
    write_file(s, len);
    free(s);
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 2, "reported at %d:%d", d.line, d.col);
    cr_expect_eq(d.col, 3);
    cr_expect_eq(n, 0);
}

Test(hist, crlf_and_a_bom_load)
{
    const char *s = "\xEF\xBB\xBF"
                    "1 2\r\n3 4\r\n";
    write_file(s, strlen(s));
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), 0, "%s", d.msg);
    cr_expect_eq(n, 4);
    cr_expect_eq(w[0], 1.0);
    cr_expect_eq(w[3], 4.0);
}

Test(hist, bad_files_are_refused_with_their_position)
{
    size_t n;
    ffn_diag d;
    write_file("1 2\n3 -4\n", 9);
    cr_expect_eq(load(&n, &d), FFN_ERANGE);
    cr_expect_eq(d.line, 2);
    cr_expect_eq(d.col, 3);
    write_file("1 nan\n", 6);
    cr_expect_eq(load(&n, &d), FFN_ERANGE);
    write_file("1e308 1e308\n", 12);
    cr_expect_eq(load(&n, &d), FFN_ERANGE, "a sum that overflows: %s", d.msg);
    write_file("0 0\n", 4);
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    write_file("1 2\n3 4\0 5\n", 11);
    cr_expect_eq(load(&n, &d), FFN_EPARSE, "a NUL byte: %s", d.msg);
    cr_expect_eq(d.line, 2);
    cr_expect_eq(d.col, 4);
    cr_expect_eq(n, 0);
}

Test(hist, empty_files_and_directories_say_what_they_are)
{
    size_t n;
    ffn_diag d;
    write_file("", 0);
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "empty") != NULL, "%s", d.msg);
    write_file("# only a comment\n", 17);
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "no entries") != NULL, "%s", d.msg);
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_hist_load("/tmp", w, 4096, &n, &d), FFN_EIO);
    cr_expect(strstr(d.msg, "is a directory") != NULL, "%s", d.msg);
    cr_expect(strstr(d.msg, "empty") == NULL, "%s", d.msg);
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_hist_load("/nonexistent/h.txt", w, 4096, &n, &d), FFN_EIO);
    cr_expect(strstr(d.msg, "cannot open") != NULL, "%s", d.msg);
}

Test(hist, more_entries_than_room_is_an_error)
{
    size_t n;
    ffn_diag d;
    write_file("1 2 3 4 5\n", 10);
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_hist_load(path, w, 4, &n, &d), FFN_ERANGE);
    cr_expect_eq(d.col, 9);
    cr_expect_eq(n, 0);
}
