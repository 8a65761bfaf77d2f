/* Tests of the strict unit parser and formatter (base/units.c, include/ffnroof/units.h): decimal
 * and binary prefixes honoured exactly, bits vs bytes, and every kind of bad quantity refused
 * with the right code and a reason naming the problem. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/error.h"
#include "ffnroof/units.h"

static double parse_ok(const char *text, ffn_unit kind)
{
    double v = -12345.0;
    char why[256] = "";
    int rc = ffn_units_parse(text, kind, &v, why, sizeof why);
    cr_assert_eq(rc, 0, "'%s' should parse, got %s: %s", text, ffn_err_name(rc), why);
    return v;
}

/* Parse must fail with code err and a reason that contains `needle`. */
static void parse_bad(const char *text, ffn_unit kind, int err, const char *needle)
{
    double v = -12345.0;
    char why[256] = "";
    int rc = ffn_units_parse(text, kind, &v, why, sizeof why);
    cr_expect_eq(rc, err, "'%s': expected %s, got %s (%s)", text, ffn_err_name(err),
                 ffn_err_name(rc), why);
    cr_expect_eq(v, -12345.0, "'%s': output must be left untouched on error", text);
    if (needle)
        cr_expect(strstr(why, needle) != NULL, "'%s': reason '%s' should mention '%s'", text, why,
                  needle);
}

Test(units, decimal_prefixes_are_powers_of_ten)
{
    cr_expect_eq(parse_ok("3.35 TB/s", FFN_UNIT_BPS), 3.35e12);
    cr_expect_eq(parse_ok("80 GB", FFN_UNIT_BYTES), 80e9);
    cr_expect_eq(parse_ok("50 MB", FFN_UNIT_BYTES), 50e6);
    cr_expect_eq(parse_ok("989.4 TFLOPS", FFN_UNIT_FLOPS), 989.4e12);
    cr_expect_eq(parse_ok("989.4 TFLOP/s", FFN_UNIT_FLOPS), 989.4e12);
    cr_expect_eq(parse_ok("1979 TOPS", FFN_UNIT_FLOPS), 1979e12);
    cr_expect_eq(parse_ok("1.98 GHz", FFN_UNIT_FREQ), 1.98e9);
    cr_expect_eq(parse_ok("700 W", FFN_UNIT_POWER), 700.0);
    cr_expect_eq(parse_ok("1.2 kW", FFN_UNIT_POWER), 1200.0);
    cr_expect_eq(parse_ok("2 GFLOP", FFN_UNIT_FLOP), 2e9);
    /* no space between number and unit is fine, surrounding blanks too */
    cr_expect_eq(parse_ok("3.35TB/s", FFN_UNIT_BPS), 3.35e12);
    cr_expect_eq(parse_ok("  80 GB  ", FFN_UNIT_BYTES), 80e9);
}

Test(units, binary_prefixes_are_powers_of_two)
{
    cr_expect_eq(parse_ok("141 GiB", FFN_UNIT_BYTES), 141.0 * 1073741824.0);
    cr_expect_eq(parse_ok("64 KiB", FFN_UNIT_BYTES), 65536.0);
    cr_expect_eq(parse_ok("2 MiB", FFN_UNIT_BYTES), 2.0 * 1048576.0);
    cr_expect_eq(parse_ok("1 TiB", FFN_UNIT_BYTES), 1099511627776.0);
    cr_expect_eq(parse_ok("800 GiB/s", FFN_UNIT_BPS), 800.0 * 1073741824.0);
    /* the classic slip the tool exists to avoid: GB and GiB differ by 7.4 % */
    cr_expect_neq(parse_ok("80 GB", FFN_UNIT_BYTES), parse_ok("80 GiB", FFN_UNIT_BYTES));
}

Test(units, bits_are_an_eighth_of_a_byte)
{
    cr_expect_eq(parse_ok("400 Gb/s", FFN_UNIT_BPS), 5e10);
    cr_expect_eq(parse_ok("200 Gbps", FFN_UNIT_BPS), 2.5e10);
    cr_expect_eq(parse_ok("4800 Gbps", FFN_UNIT_BPS), 600e9);
    cr_expect_eq(parse_ok("8 b", FFN_UNIT_BYTES), 1.0);
}

Test(units, times)
{
    cr_expect_eq(parse_ok("2 us", FFN_UNIT_TIME), 2e-6);
    cr_expect_eq(parse_ok("2 \xc2\xb5s", FFN_UNIT_TIME), 2e-6); /* µs */
    cr_expect_eq(parse_ok("5 ms", FFN_UNIT_TIME), 5e-3);
    cr_expect_eq(parse_ok("1.5 s", FFN_UNIT_TIME), 1.5);
    cr_expect_eq(parse_ok("0 s", FFN_UNIT_TIME), 0.0);
}

Test(units, plain_numbers)
{
    cr_expect_eq(parse_ok("0.93", FFN_UNIT_NONE), 0.93);
    cr_expect_eq(parse_ok("1e-3", FFN_UNIT_NONE), 1e-3);
    cr_expect_eq(parse_ok("-2", FFN_UNIT_NONE), -2.0); /* sign kept; ranges are the caller's */
    parse_bad("0.93 W", FFN_UNIT_NONE, FFN_ESCHEMA, "without a unit");
}

/* Decimal prefixes must be exact for every decimal the datasheets print, not only for those
 * whose product with 10^n happens to round right: 2.039 * 1e12 is one ulp above 2.039e12. */
Test(units, decimal_prefix_exact_even_when_the_product_rounds)
{
    cr_expect_eq(parse_ok("2.039 TB/s", FFN_UNIT_BPS), 2.039e12,
                 "'2.039 TB/s' must equal 2.039e12 exactly (parse the prefix into the exponent)");
    cr_expect_eq(parse_ok("2039 GB/s", FFN_UNIT_BPS), 2.039e12);
    cr_expect_eq(parse_ok("150 ns", FFN_UNIT_TIME), 150e-9, "150 * 1e-9 != 150e-9 in doubles");
}

Test(units, rejects_unknown_units)
{
    parse_bad("3 furlongs", FFN_UNIT_BYTES, FFN_EPARSE, "furlongs");
    parse_bad("3 TB/fortnight", FFN_UNIT_BPS, FFN_EPARSE, "TB/fortnight");
    parse_bad("5 mB", FFN_UNIT_BYTES, FFN_EPARSE, "mB"); /* milli-bytes make no sense */
    parse_bad("3.35 TB/s extra", FFN_UNIT_BPS, FFN_EPARSE, NULL);
    parse_bad("0x10 B", FFN_UNIT_BYTES, FFN_EPARSE, NULL);
}

Test(units, rejects_a_unit_of_another_kind)
{
    parse_bad("12 GB", FFN_UNIT_BPS, FFN_ESCHEMA, "bandwidth");
    parse_bad("3.35 TB/s", FFN_UNIT_BYTES, FFN_ESCHEMA, "bytes");
    parse_bad("2 GFLOP", FFN_UNIT_FLOPS, FFN_ESCHEMA, "throughput");
    parse_bad("700 W", FFN_UNIT_TIME, FFN_ESCHEMA, "time");
}

Test(units, rejects_a_missing_unit)
{
    parse_bad("80", FFN_UNIT_BYTES, FFN_ESCHEMA, "needs a unit");
    parse_bad("3.35", FFN_UNIT_BPS, FFN_ESCHEMA, "needs a unit");
}

Test(units, rejects_non_numbers_and_non_finite)
{
    parse_bad("nan TB/s", FFN_UNIT_BPS, FFN_EPARSE, "not a number");
    parse_bad("inf W", FFN_UNIT_POWER, FFN_EPARSE, "not a number");
    parse_bad("1e400 B", FFN_UNIT_BYTES, FFN_ERANGE, "finite");
    parse_bad("GB", FFN_UNIT_BYTES, FFN_EPARSE, "not a number");
    parse_bad("", FFN_UNIT_BYTES, FFN_EPARSE, NULL);
    parse_bad(".", FFN_UNIT_NONE, FFN_EPARSE, NULL);
}

Test(units, null_arguments)
{
    double v;
    cr_expect_eq(ffn_units_parse(NULL, FFN_UNIT_BYTES, &v, NULL, 0), FFN_EINVAL);
    cr_expect_eq(ffn_units_parse("1 B", FFN_UNIT_BYTES, NULL, NULL, 0), FFN_EINVAL);
    /* why may be NULL on the error path too */
    cr_expect_eq(ffn_units_parse("3 furlongs", FFN_UNIT_BYTES, &v, NULL, 0), FFN_EPARSE);
}

Test(units, format_three_significant_digits)
{
    char b[64];
    ffn_units_format(3.35e12, FFN_UNIT_BPS, b, sizeof b);
    cr_expect_str_eq(b, "3.35 TB/s");
    ffn_units_format(989.4e12, FFN_UNIT_FLOPS, b, sizeof b);
    cr_expect_str_eq(b, "989 TFLOP/s");
    ffn_units_format(2e-6, FFN_UNIT_TIME, b, sizeof b);
    cr_expect_str_eq(b, "2.00 us");
    ffn_units_format(80e9, FFN_UNIT_BYTES, b, sizeof b);
    cr_expect_str_eq(b, "80.0 GB");
    ffn_units_format(0.0, FFN_UNIT_TIME, b, sizeof b);
    cr_expect_str_eq(b, "0 s");
    /* what is printed parses back to within the 3 printed digits */
    ffn_units_format(1.555e12, FFN_UNIT_BPS, b, sizeof b);
    double back = parse_ok(b, FFN_UNIT_BPS);
    cr_expect(fabs(back - 1.555e12) <= 0.005 * 1.555e12, "'%s' far from 1.555e12", b);
}

Test(units, a_huge_exponent_does_not_overflow_the_prefix_scaling)
{
    /* strtol gives LONG_MAX for the exponent; ex + e10 was signed overflow (UBSan) */
    cr_expect_eq(parse_ok("0e99999999999999999999 MB", FFN_UNIT_BYTES), 0.0);
    cr_expect_eq(parse_ok("0e-99999999999999999999 GB", FFN_UNIT_BYTES), 0.0);
    parse_bad("1e99999999999999999999 MB", FFN_UNIT_BYTES, FFN_ERANGE, "finite");
    cr_expect_eq(parse_ok("1e-99999999999999999999 GB", FFN_UNIT_BYTES), 0.0);
}

Test(units, the_finite_check_comes_after_the_prefix)
{
    /* 1e308 is finite; 1e308 kB is not a finite number of bytes */
    parse_bad("1e308 kB", FFN_UNIT_BYTES, FFN_ERANGE, "finite");
    parse_bad("1e308 KiB", FFN_UNIT_BYTES, FFN_ERANGE, "finite");
    parse_bad("1.7e308 TB/s", FFN_UNIT_BPS, FFN_ERANGE, "finite");
    cr_expect_eq(parse_ok("1e305 kB", FFN_UNIT_BYTES), 1e308);
}

/* Hours and minutes are times too: an SLO's range reads "(0, 1 h]", and "1h" parses. */
Test(units, hours_and_minutes)
{
    double v;
    char why[160];
    cr_assert_eq(ffn_units_parse("1h", FFN_UNIT_TIME, &v, why, sizeof why), 0, "%s", why);
    cr_expect_eq(v, 3600.0);
    cr_assert_eq(ffn_units_parse("1.5 min", FFN_UNIT_TIME, &v, why, sizeof why), 0, "%s", why);
    cr_expect_eq(v, 90.0);
    cr_assert_eq(ffn_units_parse("3 ms", FFN_UNIT_TIME, &v, why, sizeof why), 0, "%s", why);
    cr_expect_float_eq(v, 3e-3, 1e-15);
    cr_expect_neq(ffn_units_parse("2 h", FFN_UNIT_BYTES, &v, why, sizeof why), 0);
}
