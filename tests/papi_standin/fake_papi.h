/* Controls of the PAPI stand-in (tests/papi_standin/fake_papi.c). */
#ifndef FFN_TEST_FAKE_PAPI_H
#define FFN_TEST_FAKE_PAPI_H

#include <stdbool.h>

typedef struct fake_papi_stats {
    int sets_created, sets_destroyed, multiplexed_sets, starts, stops;
} fake_papi_stats;

/* Make every PAPI_start fail with PAPI_ESYS (a start that fails on a set that was accepted). */
void fake_papi_fail_starts(bool on);
fake_papi_stats fake_papi_get_stats(void);
/* What one start..stop of a hardware event counts on this fake host; -1 for an unknown name. */
long long fake_papi_per_run(const char *name);

#endif
