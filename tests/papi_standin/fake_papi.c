/* A link-time stand-in for the PAPI and libsde calls measure/probe/papi.c and papi_sde.c make,
 * behaving like PAPI on a bare-metal host whose CPU has 6 counters: it knows a table of presets and
 * native events, accepts some, refuses others with PAPI's own error codes (PAPI_ENOEVNT from
 * PAPI_query_event, PAPI_ECNFLCT from PAPI_add_event, PAPI_ESYS from PAPI_start), needs
 * multiplexing past 6 events in one set, and reads back values it made up so that a test can
 * tell a counted value from an estimated one. The SDE component reads the counters libsde was
 * given, as the real one does. Used only by tests/papi_standin/test_papi_standin.c; ffnroof
 * itself links the real PAPI. */
#include "fake_papi.h"

#include <papi.h>
#include <sde_lib.h>
#include <stdio.h>
#include <string.h>

#define HW_COUNTERS 6
#define MAX_SETS 64
#define MAX_IN_SET 32
#define CID_CPU 0
#define CID_SDE 1

typedef struct fake_event {
    const char *name;
    int code;
    int cid;
    int query_rc;         /* PAPI_query_event */
    int add_rc;           /* PAPI_add_event */
    int start_rc;         /* PAPI_start of a set holding it */
    long long per_run;    /* what one start..stop counts (hardware events) */
    const long long *sde; /* SDE events: the library's counter */
} fake_event;

static long long sde_counters[4];
static const long long *sde_registered[4];

static fake_event events[] = {
    {"PAPI_TOT_CYC", PAPI_TOT_CYC, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 1000001, NULL},
    {"PAPI_TOT_INS", PAPI_TOT_INS, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 2000002, NULL},
    {"PAPI_FP_OPS", PAPI_FP_OPS, CID_CPU, PAPI_ENOEVNT, PAPI_ENOEVNT, PAPI_OK, 0, NULL},
    {"PAPI_SP_OPS", PAPI_SP_OPS, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 3000003, NULL},
    {"PAPI_L1_DCM", PAPI_L1_DCM, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 4004, NULL},
    {"PAPI_L2_DCM", PAPI_L2_DCM, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 505, NULL},
    {"PAPI_L3_TCM", PAPI_L3_TCM, CID_CPU, PAPI_OK, PAPI_ECNFLCT, PAPI_OK, 0, NULL},
    {"PAPI_BR_INS", PAPI_BR_INS, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 60006, NULL},
    {"PAPI_BR_MSP", PAPI_BR_MSP, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 707, NULL},
    {"PAPI_REF_CYC", PAPI_REF_CYC, CID_CPU, PAPI_OK, PAPI_OK, PAPI_ESYS, 0, NULL},
    {"cpu::UOPS_RETIRED", PAPI_NATIVE_MASK | 1, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 8000008, NULL},
    {"cpu::MEM_LOAD_RETIRED", PAPI_NATIVE_MASK | 2, CID_CPU, PAPI_OK, PAPI_OK, PAPI_OK, 90009,
     NULL},
    {"sde:::ffnroof::flops", PAPI_NATIVE_MASK | 0x100, CID_SDE, PAPI_OK, PAPI_OK, PAPI_OK, 0,
     &sde_counters[0]},
    {"sde:::ffnroof::weight_bytes", PAPI_NATIVE_MASK | 0x101, CID_SDE, PAPI_OK, PAPI_OK, PAPI_OK, 0,
     &sde_counters[1]},
    {"sde:::ffnroof::act_bytes", PAPI_NATIVE_MASK | 0x102, CID_SDE, PAPI_OK, PAPI_OK, PAPI_OK, 0,
     &sde_counters[2]},
    {"sde:::ffnroof::kernel_calls", PAPI_NATIVE_MASK | 0x103, CID_SDE, PAPI_OK, PAPI_OK, PAPI_OK, 0,
     &sde_counters[3]},
};
#define N_EVENTS (sizeof events / sizeof events[0])

static struct {
    bool used, mpx, running;
    int cid;
    int n;
    int ev[MAX_IN_SET];
    long long start_sde[MAX_IN_SET];
} sets[MAX_SETS];

static fake_papi_stats stats;
static bool fail_all_starts;

void fake_papi_fail_starts(bool on)
{
    fail_all_starts = on;
}

fake_papi_stats fake_papi_get_stats(void)
{
    return stats;
}

long long fake_papi_per_run(const char *name)
{
    for (size_t i = 0; i < N_EVENTS; i++)
        if (!strcmp(events[i].name, name)) return events[i].per_run;
    return -1;
}

static fake_event *by_code(int code)
{
    for (size_t i = 0; i < N_EVENTS; i++)
        if (events[i].code == code) return &events[i];
    return NULL;
}

static bool valid_set(int es)
{
    return es >= 0 && es < MAX_SETS && sets[es].used;
}

/* ---- libsde ----------------------------------------------------------------------------- */

papi_handle_t papi_sde_init(const char *name_of_library)
{
    return strcmp(name_of_library, "ffnroof") ? NULL : (papi_handle_t)sde_counters;
}

int papi_sde_register_counter(papi_handle_t handle, const char *event_name, int cntr_mode,
                              int cntr_type, void *counter)
{
    (void)handle;
    (void)cntr_mode;
    (void)cntr_type;
    static const char *const names[4] = {"flops", "weight_bytes", "act_bytes", "kernel_calls"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(names[i], event_name)) {
            sde_registered[i] = counter;
            events[N_EVENTS - 4 + (size_t)i].sde = counter;
            return SDE_OK;
        }
    return SDE_EINVAL;
}

int papi_sde_describe_counter(papi_handle_t handle, const char *event_name,
                              const char *event_description)
{
    (void)handle;
    (void)event_name;
    (void)event_description;
    return SDE_OK;
}

/* ---- PAPI ------------------------------------------------------------------------------- */

int PAPI_library_init(int version)
{
    return version == PAPI_VER_CURRENT ? PAPI_VER_CURRENT : PAPI_EINVAL;
}

int PAPI_thread_init(unsigned long (*id_fn)(void))
{
    return id_fn ? PAPI_OK : PAPI_EINVAL;
}

int PAPI_multiplex_init(void)
{
    return PAPI_OK;
}

int PAPI_get_opt(int option, PAPI_option_t *ptr)
{
    (void)ptr;
    return option == PAPI_LIB_VERSION ? PAPI_VERSION_NUMBER(7, 0, 1, 0) : PAPI_EINVAL;
}

int PAPI_set_opt(int option, PAPI_option_t *ptr)
{
    if (option != PAPI_INHERIT || !ptr || !valid_set(ptr->inherit.eventset)) return PAPI_EINVAL;
    return PAPI_OK;
}

const PAPI_hw_info_t *PAPI_get_hardware_info(void)
{
    static PAPI_hw_info_t hw;
    hw.virtualized = 0;
    hw.totalcpus = 16;
    return &hw;
}

int PAPI_num_components(void)
{
    return 2;
}

int PAPI_get_component_index(const char *name)
{
    if (!strcmp(name, "perf_event")) return CID_CPU;
    if (!strcmp(name, "sde")) return CID_SDE;
    return PAPI_ENOCMP;
}

const PAPI_component_info_t *PAPI_get_component_info(int cidx)
{
    static PAPI_component_info_t ci[2];
    if (cidx < 0 || cidx > 1) return NULL;
    snprintf(ci[cidx].name, sizeof ci[cidx].name, "%s", cidx == CID_CPU ? "perf_event" : "sde");
    ci[cidx].disabled = 0;
    ci[cidx].num_cntrs = cidx == CID_CPU ? HW_COUNTERS : 0;
    return &ci[cidx];
}

int PAPI_num_cmp_hwctrs(int cidx)
{
    return cidx == CID_CPU ? HW_COUNTERS : 0;
}

int PAPI_event_name_to_code(const char *in, int *out)
{
    for (size_t i = 0; i < N_EVENTS; i++)
        if (!strcmp(events[i].name, in)) {
            *out = events[i].code;
            return PAPI_OK;
        }
    return PAPI_ENOEVNT;
}

int PAPI_event_code_to_name(int code, char *out)
{
    const fake_event *e = by_code(code);
    if (!e) return PAPI_ENOEVNT;
    snprintf(out, PAPI_MAX_STR_LEN, "%s", e->name);
    return PAPI_OK;
}

int PAPI_query_event(int code)
{
    const fake_event *e = by_code(code);
    return e ? e->query_rc : PAPI_ENOEVNT;
}

int PAPI_get_event_component(int code)
{
    const fake_event *e = by_code(code);
    return e ? e->cid : PAPI_ENOEVNT;
}

/* presets first, then each component's native events, in table order */
static int enum_next(int *code, int modifier, bool presets, int cid)
{
    size_t i = 0;
    if (modifier != PAPI_ENUM_FIRST) {
        while (i < N_EVENTS && events[i].code != *code)
            i++;
        i++;
    }
    for (; i < N_EVENTS; i++) {
        const bool preset = (events[i].code & PAPI_PRESET_MASK) != 0;
        if (preset == presets && (presets || events[i].cid == cid)) {
            *code = events[i].code;
            return PAPI_OK;
        }
    }
    return PAPI_ENOEVNT;
}

int PAPI_enum_event(int *code, int modifier)
{
    return enum_next(code, modifier, true, 0);
}

int PAPI_enum_cmp_event(int *code, int modifier, int cidx)
{
    return enum_next(code, modifier, false, cidx);
}

int PAPI_create_eventset(int *es)
{
    for (int i = 0; i < MAX_SETS; i++)
        if (!sets[i].used) {
            memset(&sets[i], 0, sizeof sets[i]);
            sets[i].used = true;
            sets[i].cid = -1;
            *es = i;
            stats.sets_created++;
            return PAPI_OK;
        }
    return PAPI_ENOMEM;
}

int PAPI_assign_eventset_component(int es, int cidx)
{
    if (!valid_set(es) || sets[es].n) return PAPI_EINVAL;
    if (cidx != CID_CPU && cidx != CID_SDE) return PAPI_ENOCMP;
    sets[es].cid = cidx;
    return PAPI_OK;
}

int PAPI_set_multiplex(int es)
{
    if (!valid_set(es) || sets[es].cid != CID_CPU) return PAPI_EINVAL;
    sets[es].mpx = true;
    stats.multiplexed_sets++;
    return PAPI_OK;
}

int PAPI_add_event(int es, int code)
{
    if (!valid_set(es)) return PAPI_ENOEVST;
    if (sets[es].running) return PAPI_EISRUN;
    fake_event *e = by_code(code);
    if (!e) return PAPI_ENOEVNT;
    if (e->add_rc != PAPI_OK) return e->add_rc;
    if (sets[es].cid < 0) sets[es].cid = e->cid;
    if (sets[es].cid != e->cid) return PAPI_ECMP;
    const int room = e->cid == CID_CPU && !sets[es].mpx ? HW_COUNTERS : MAX_IN_SET;
    if (sets[es].n >= room) return PAPI_ECNFLCT;
    sets[es].ev[sets[es].n++] = code;
    return PAPI_OK;
}

int PAPI_start(int es)
{
    if (!valid_set(es)) return PAPI_ENOEVST;
    if (sets[es].running) return PAPI_EISRUN;
    if (fail_all_starts) return PAPI_ESYS;
    for (int i = 0; i < sets[es].n; i++) {
        const fake_event *e = by_code(sets[es].ev[i]);
        if (e->start_rc != PAPI_OK) return e->start_rc;
        sets[es].start_sde[i] = e->sde ? *e->sde : 0;
    }
    sets[es].running = true;
    stats.starts++;
    return PAPI_OK;
}

int PAPI_stop(int es, long long *values)
{
    if (!valid_set(es)) return PAPI_ENOEVST;
    if (!sets[es].running) return PAPI_ENOTRUN;
    for (int i = 0; i < sets[es].n; i++) {
        const fake_event *e = by_code(sets[es].ev[i]);
        values[i] =
            e->sde ? __atomic_load_n(e->sde, __ATOMIC_RELAXED) - sets[es].start_sde[i] : e->per_run;
    }
    sets[es].running = false;
    stats.stops++;
    return PAPI_OK;
}

int PAPI_cleanup_eventset(int es)
{
    if (!valid_set(es)) return PAPI_ENOEVST;
    if (sets[es].running) return PAPI_EISRUN;
    sets[es].n = 0;
    return PAPI_OK;
}

int PAPI_destroy_eventset(int *es)
{
    if (!es || !valid_set(*es)) return PAPI_ENOEVST;
    if (sets[*es].running || sets[*es].n) return PAPI_EISRUN;
    sets[*es].used = false;
    *es = PAPI_NULL;
    stats.sets_destroyed++;
    return PAPI_OK;
}

/* PAPI's own texts for the codes this host returns (papi_internal.c, _papi_errlist) */
char *PAPI_strerror(int code)
{
    switch (code) {
    case PAPI_OK:
        return "No error";
    case PAPI_EINVAL:
        return "Invalid argument";
    case PAPI_ENOMEM:
        return "Insufficient memory";
    case PAPI_ESYS:
        return "A System/C library call failed";
    case PAPI_ENOEVNT:
        return "Event does not exist";
    case PAPI_ECNFLCT:
        return "Event exists, but cannot be counted due to counter resource limitations";
    case PAPI_ENOTRUN:
        return "EventSet is currently not running";
    case PAPI_EISRUN:
        return "EventSet is currently counting";
    case PAPI_ENOEVST:
        return "No such EventSet Available";
    case PAPI_ENOCMP:
        return "Component Index isn't set";
    case PAPI_ECMP:
        return "Not supported by component";
    default:
        return "Unknown error code";
    }
}
