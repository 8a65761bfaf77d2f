/* Human units in data files: "3.35 TB/s", "80 GB", "141 GiB", "989.4 TFLOPS", "2 us", "700 W".
 * Parsing is strict: a finite number, optional space, then a unit of the expected kind with an
 * optional decimal (k M G T P E, 10^3n) or binary (Ki Mi Gi Ti Pi, 2^10n) prefix, honoured
 * exactly. 'B' is a byte and 'b' a bit (Gb/s = 1.25e8 B/s). Values come back in SI base units. */
#ifndef FFNROOF_UNITS_H
#define FFNROOF_UNITS_H

#include <stddef.h>

typedef enum ffn_unit {
    FFN_UNIT_NONE = 0, /* a plain number, no unit allowed */
    FFN_UNIT_BYTES,    /* B, kB, MB, GiB, ... (also bits: Gb) */
    FFN_UNIT_BPS,      /* B/s, GB/s, TB/s, GiB/s, Gb/s, Gbps */
    FFN_UNIT_FLOPS,    /* FLOP/s: FLOPS, TFLOPS, TFLOP/s, TOPS, POPS */
    FFN_UNIT_FLOP,     /* an amount of work: FLOP, GFLOP */
    FFN_UNIT_TIME,     /* s, ms, us (also µs), ns */
    FFN_UNIT_POWER,    /* W, kW */
    FFN_UNIT_FREQ,     /* Hz, MHz, GHz */
    FFN_UNIT_COUNT
} ffn_unit;

/* Parse text as a quantity of the given kind. Returns 0 and sets *out, or FFN_EPARSE (bad
 * number or unknown unit) / FFN_ESCHEMA (a unit of another kind, a missing unit) with a reason
 * in why (may be NULL). */
int ffn_units_parse(const char *text, ffn_unit kind, double *out, char *why, size_t why_n);

/* Format v with a decimal prefix and 3 significant digits, e.g. "3.35 TB/s", "989 TFLOP/s",
 * "2.00 us". Returns snprintf's result. */
int ffn_units_format(double v, ffn_unit kind, char *buf, size_t n);

/* ffn_units_format into buf, returning buf, with "-" for a value that is not finite (a figure
 * a table does not have): the one formatter of every table, report and chart label. */
const char *ffn_units_str(char *buf, size_t n, double v, ffn_unit kind);

/* The unit's name for messages ("bytes", "bytes per second", ...). */
const char *ffn_unit_kind_name(ffn_unit kind);

#endif
