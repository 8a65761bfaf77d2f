/* The price table (io/load/prices_load.c): the shipped one loads and cites each row's date, a
 * good fixture reads back, and every kind of bad row is refused at its line and column. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ffnroof/prices.h"

static ffn_price_table t;

Test(prices, the_shipped_table_loads)
{
    ffn_diag d;
    cr_assert_eq(ffn_prices_load(FFNROOF_SOURCE_DIR "/hw/prices.tsv", &t, &d), 0, "%s:%d:%d: %s",
                 d.file, d.line, d.col, d.msg);
    cr_assert_geq(t.n, 5);
    const ffn_price *p = ffn_price_find(&t, "h100-sxm");
    cr_assert_not_null(p);
    cr_expect(p->usd_per_hour > 0 && p->usd_per_hour < 100);
    cr_expect_eq(strlen(p->retrieved), 10);
    cr_expect_null(ffn_price_find(&t, "no-such-device"));
}

Test(prices, a_good_table_reads_back)
{
    ffn_diag d;
    cr_assert_eq(ffn_prices_load(FFNROOF_TEST_DATA "/prices/good.tsv", &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.n, 2);
    cr_expect_str_eq(t.rows[0].device, "h100-sxm");
    cr_expect_float_eq(t.rows[0].usd_per_hour, 3.90, 1e-12);
    cr_expect_str_eq(t.rows[0].provider, "Acme");
    cr_expect_str_eq(t.rows[1].retrieved, "2026-09-20");
}

Test(prices, bad_rows_are_refused_where_they_stand)
{
    static const struct {
        const char *file, *what;
        int line, col;
    } bad[] = {
        {"negative.tsv", "usd_per_hour must be a number", 2, 10},
        {"bad-date.tsv", "retrieved must be a date", 2, 19},
        {"twice.tsv", "listed twice", 3, 1},
        {"no-header.tsv", "expected the header", 2, 1},
        {"short.tsv", "this one has 3 field(s)", 2, 16},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, FFNROOF_TEST_DATA "/prices/%s", bad[i].file);
        ffn_diag d;
        cr_expect_neq(ffn_prices_load(path, &t, &d), 0, "%s", bad[i].file);
        cr_expect(strstr(d.msg, bad[i].what), "%s: %s", bad[i].file, d.msg);
        cr_expect_eq(d.line, bad[i].line, "%s: line %d", bad[i].file, d.line);
        cr_expect_eq(d.col, bad[i].col, "%s: col %d", bad[i].file, d.col);
        cr_expect_eq(t.n, 0, "%s: nothing kept", bad[i].file);
    }
    ffn_diag d;
    cr_expect_eq(ffn_prices_load(FFNROOF_TEST_DATA "/prices/none.tsv", &t, &d), FFN_EIO);
}
