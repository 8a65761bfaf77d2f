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
#include "ffnroof/profile.h"

/* The default hardware event set (FFN_PAPI_N_DEFAULT of them, ffnroof/profile.h), in the order
 * the probe reports it. */
extern const char *const ffn_papi_default_events[FFN_PAPI_N_DEFAULT];

/* ffnroof's software-defined events (full PAPI names). */
#define FFN_SDE_N 4
extern const char *const ffn_sde_event_names[FFN_SDE_N];

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
