/* Counters for ffnroof: a PAPI probe (is PAPI built in, is its CPU component usable, which of the
 * default hardware events can be counted here), counter sets over any PAPI event names (hardware
 * presets, native events, software-defined events) with per-event availability, and ffnroof's
 * own software-defined events (sde:::ffnroof::flops, ::weight_bytes, ::act_bytes,
 * ::kernel_calls) exported through libsde so that the same PAPI read path works on a host
 * without hardware counters.
 *
 * A counter that cannot be read is never reported as 0: every value travels with an `available`
 * flag and the reason PAPI gave. Without PAPI at build time (FFNROOF_HAVE_PAPI unset) all of this
 * compiles: the probe says "not built in", counter sets fail with FFN_EUNSUPPORTED, and the SDE
 * counters are still kept (ffn_sde_snapshot) so the bench can report its own work.
 *
 * Threading: PAPI event sets count the thread that started them (hardware events are inherited by
 * threads created after the start where the component allows it; see ffn_counters.inherit);
 * the SDE counters are process-wide and updated atomically. */
#ifndef FFNROOF_MEASURE_PAPI_H
#define FFNROOF_MEASURE_PAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/error.h"

#define FFN_COUNTER_NAME_MAX 128
#define FFN_COUNTER_REASON_MAX 192

/* The default hardware event set, in the order the probe reports it. */
#define FFN_PAPI_N_DEFAULT 7
extern const char *const ffn_papi_default_events[FFN_PAPI_N_DEFAULT];

/* ffnroof's software-defined events (full PAPI names). */
#define FFN_SDE_N 4
extern const char *const ffn_sde_event_names[FFN_SDE_N];

typedef struct ffn_counter_value {
    char name[FFN_COUNTER_NAME_MAX];
    bool available; /* false: value is meaningless and must not be shown as a number */
    long long value;
    char reason[FFN_COUNTER_REASON_MAX]; /* why it is unavailable ("" when available) */
} ffn_counter_value;

typedef struct ffn_papi_probe {
    bool built_in;    /* compiled with PAPI */
    bool initialised; /* PAPI_library_init succeeded */
    char version[32]; /* "7.0.0.0" */
    char error[256];  /* why initialisation failed; "" otherwise */
    /* the CPU (perf_event) component */
    bool cpu_component_found;
    bool cpu_component_disabled;
    char cpu_disabled_reason[256]; /* PAPI's disabled_reason, verbatim */
    bool cpu_pmu_exported; /* the kernel exports a CPU PMU (/sys/bus/event_source/devices/cpu*) */
    int num_hw_counters;   /* as PAPI reports it (a VM may report counters it cannot use) */
    bool virtualized;
    char vm_vendor[64];
    /* the SDE component */
    bool sde_component_found;
    bool sde_component_disabled;
    char sde_disabled_reason[256];
    bool sde_works; /* sde:::ffnroof::kernel_calls could be added, started and read */
    /* each default event: available (it was added, started and read) or the reason */
    ffn_counter_value events[FFN_PAPI_N_DEFAULT];
    int n_events_available;
    /* "papi_hw" when at least one hardware event works, else "papi_sde" when SDE works, else
     * "none" */
    char counter_source[16];
} ffn_papi_probe;

/* Initialise PAPI (once per process) and probe it. Returns 0 even when PAPI is not built in or
 * does not work: the struct says why. */
int ffn_papi_probe_run(ffn_papi_probe *p);

/* Every event this host can count (presets and native events of enabled components, plus
 * ffnroof's SDE events), separated by sep, into buf (truncated with "..."). Returns the number of
 * events, or a negative code (FFN_EUNSUPPORTED without PAPI). */
int ffn_papi_list_available(char *buf, size_t n, const char *sep);

/* A set of events counted together. Events of different PAPI components go to separate PAPI
 * event sets; the CPU one is multiplexed when the events do not fit the counters at once. */
typedef struct ffn_counters ffn_counters;

/* Create a set over n event names.
 *  strict: an event that is unknown (FFN_ENOTFOUND) or cannot be counted here
 *          (FFN_EUNSUPPORTED) fails the whole call; diag names the event, PAPI's reason and lists
 *          available events;
 *  !strict: such events are kept as unavailable (with the reason) and the rest are counted.
 * On success *out is owned by the caller: ffn_counters_free(). */
int ffn_counters_create(const char *const *events, size_t n, bool strict, ffn_counters **out,
                        ffn_diag *diag);
/* Zero and start counting; stop and read into vals[0..n) (same order as the names given). */
int ffn_counters_start(ffn_counters *c);
int ffn_counters_stop(ffn_counters *c, ffn_counter_value *vals, size_t n);
/* Number of events, whether multiplexing is on, whether hardware counts are inherited by new
 * threads. */
size_t ffn_counters_count(const ffn_counters *c);
bool ffn_counters_multiplexed(const ffn_counters *c);
bool ffn_counters_inherit(const ffn_counters *c);
void ffn_counters_free(ffn_counters *c);

/* ffnroof's software-defined counters. ffn_sde_init registers them with libsde (once; thread
 * safe; FFN_EUNSUPPORTED without PAPI, but the counters still count). ffn_sde_add is called by the
 * bench loop outside the inner kernel loops (atomic adds; cheap). */
int ffn_sde_init(void);
void ffn_sde_add(long long flops, long long weight_bytes, long long act_bytes,
                 long long kernel_calls);
typedef struct ffn_sde_values {
    long long flops, weight_bytes, act_bytes, kernel_calls;
} ffn_sde_values;
/* The counters as ffnroof itself holds them (monotonic totals since process start). */
void ffn_sde_snapshot(ffn_sde_values *out);

#endif
