/* Skipping a test whose suite's .init made files. Criterion runs .fini when a test returns or
 * fails, but cr_skip_test leaves the test's process without it, so a skipped test left its
 * /tmp/ffnroof-test-* folder behind (three a CI run, from the emulated CPUs). */
#ifndef FFNROOF_TESTS_SKIP_CLEAN_H
#define FFNROOF_TESTS_SKIP_CLEAN_H

#include <criterion/criterion.h>

/* Run fini (the suite's teardown), then skip with the printf-style reason. */
#define skip_clean(fini, ...)                                                                      \
    do {                                                                                           \
        fini();                                                                                    \
        cr_skip_test(__VA_ARGS__);                                                                 \
    } while (0)

#endif
