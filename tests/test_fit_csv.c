/* Measurement CSVs of `ffnroof fit` under hostile input (io/load/fit_csv.c): a data line of any
 * length is one line (a 1024-byte reader split a long line into two points), an empty field is
 * an error at its column (strtok_r turned "1,,2,3,4" into m=1 n=2 k=3), CRLF and a BOM load, and
 * a directory or a NUL byte is said to be what it is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/fitdata.h"

static char path[256];
static ffn_fit_point pts[64];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/ffnroof-test-fitcsv-%d.csv", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(fit_csv, .init = setup, .fini = teardown);

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
    return ffn_fit_csv_load(path, FFN_DT_FP16, FFN_DT_FP16, pts, 64, n, d);
}

Test(fit_csv, an_empty_field_is_an_error_at_its_column)
{
    const char *s = "m,n,k,time_ms\n1,,2,3,4\n";
    write_file(s, strlen(s));
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), FFN_ESCHEMA, "must not read m=1 n=2 k=3 (%s)", d.msg);
    cr_expect_eq(d.line, 2);
    cr_expect_eq(d.col, 3, "the empty field starts at column 3, got %d", d.col);
    cr_expect(strstr(d.msg, "empty field") != NULL, "%s", d.msg);
    cr_expect_eq(n, 0);
    const char *t = "m,n,k,time_ms\n1,2,3,\n";
    write_file(t, strlen(t));
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA, "a trailing comma: %s", d.msg);
    cr_expect_eq(d.col, 7);
    const char *u = "m,n,k,time_ms\n,1,2,3\n";
    write_file(u, strlen(u));
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    cr_expect_eq(d.col, 1);
}

Test(fit_csv, a_long_line_is_one_line)
{
    /* a time of 2000 digits' worth of leading zeros and a column count check: the old 1024-byte
     * reader made the tail a second data point */
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "m,n,k,time_ms\n128,128,128,");
    memset(s + len, '0', 2000);
    len += 2000;
    len += (size_t)snprintf(s + len, cap - len, "1.5\n256,256,256,2\n");
    write_file(s, len);
    free(s);
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), 0, "%s", d.msg);
    cr_assert_eq(n, 2, "got %zu points", n);
    cr_expect_eq(pts[0].m, 128);
    cr_expect_float_eq(pts[0].time_s, 1.5e-3, 1e-12);
    cr_expect_eq(pts[1].m, 256);
}

Test(fit_csv, an_error_after_a_long_line_has_its_real_line)
{
    size_t cap = 8192, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "m,n,k,time_ms\n# ");
    memset(s + len, 'c', 3000);
    len += 3000;
    len += (size_t)snprintf(s + len, cap - len, "\n1,2,3,4\n1,2,x,4\n");
    write_file(s, len);
    free(s);
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), FFN_ESCHEMA, "%s", d.msg);
    cr_expect_eq(d.line, 4, "reported at line %d", d.line);
}

Test(fit_csv, crlf_and_a_bom_load)
{
    const char *s = "\xEF\xBB\xBFm,n,k,time_ms\r\n1,2,3,4\r\n";
    write_file(s, strlen(s));
    size_t n;
    ffn_diag d;
    cr_assert_eq(load(&n, &d), 0, "%s", d.msg);
    cr_expect_eq(n, 1);
    cr_expect_float_eq(pts[0].time_s, 4e-3, 1e-12);
}

Test(fit_csv, directories_empty_files_and_nul_bytes)
{
    size_t n;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_expect_eq(ffn_fit_csv_load("/tmp", FFN_DT_FP16, FFN_DT_FP16, pts, 64, &n, &d), FFN_EIO);
    cr_expect(strstr(d.msg, "is a directory") != NULL, "%s", d.msg);
    write_file("", 0);
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "empty") != NULL, "%s", d.msg);
    write_file("# just a comment\n", 17);
    cr_expect_eq(load(&n, &d), FFN_ESCHEMA);
    cr_expect(strstr(d.msg, "no header") != NULL, "%s", d.msg);
    write_file("m,n,k,time_ms\n1,2\0,3,4\n", 23);
    cr_expect_eq(load(&n, &d), FFN_EPARSE);
    cr_expect_eq(d.line, 2);
    cr_expect_eq(d.col, 4);
}
