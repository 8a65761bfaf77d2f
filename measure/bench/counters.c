/* The counters of a bench run (include/ffnroof/bench.h): the default set, defined here once (the
 * hardware events the PAPI probe checks, then ffnroof's software-defined events), and the note a
 * run carries when it cannot count what it was meant to. */
#include <stdio.h>

#include "ffnroof/bench.h"

size_t ffn_bench_default_events(const char **ev, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < FFN_PAPI_N_DEFAULT && n < cap; i++)
        ev[n++] = ffn_papi_default_events[i];
    for (int i = 0; i < FFN_SDE_N && n < cap; i++)
        ev[n++] = ffn_sde_event_names[i];
    return n;
}

bool ffn_bench_counters_note(const ffn_papi_probe *p, bool events_given, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    if (!p->built_in)
        snprintf(buf, n, "counters: ffnroof was built without PAPI, timers only");
    else if (p->n_events_available == 0 && !events_given)
        snprintf(buf, n, "no hardware counters here (%s); the SDE events are read through PAPI",
                 p->cpu_disabled_reason[0] ? p->cpu_disabled_reason
                 : p->cpu_pmu_exported     ? "every hardware event failed"
                                           : "the kernel exports no CPU PMU");
    else
        return false;
    return true;
}
