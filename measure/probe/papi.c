/* PAPI for ffnroof: the probe and counter sets over named events (ffnroof's own
 * software-defined events, sde:::ffnroof::*, are registered by papi_sde.c).
 *
 * Availability is decided by trying, not by asking: on a VM PAPI may enable its perf_event
 * component, claim 20 counters and know every preset name, yet no CPU PMU is exported and every
 * hardware event fails to add (this is what we see on the development host). So an event counts
 * as available only after it was added to an event set, started and stopped; otherwise it carries
 * the reason PAPI gave. PAPI event sets are per component, so a counter set holds one PAPI event
 * set per component (the CPU one multiplexed when the events do not fit at once).
 * Without FFNROOF_HAVE_PAPI the same API is built with no counters: every call reports that
 * PAPI was not built in, and bench runs on timers alone. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/measure_papi.h"
#include "internal.h"

#if defined(FFNROOF_HAVE_PAPI)
#include <papi.h>
#endif

const char *const ffn_papi_default_events[FFN_PAPI_N_DEFAULT] = {
    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_FP_OPS", "PAPI_SP_OPS",
    "PAPI_L1_DCM",  "PAPI_L2_DCM",  "PAPI_L3_TCM"};

/* A CPU PMU exported by the kernel: /sys/bus/event_source/devices/cpu (cpu_core/cpu_atom on
 * hybrid Intel, armv8_* on Arm). Without one, no hardware event can count whatever PAPI says. */
static bool cpu_pmu_exported(void)
{
    DIR *d = opendir("/sys/bus/event_source/devices");
    if (!d) return false;
    bool found = false;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, "cpu") == 0 || strncmp(e->d_name, "cpu_", 4) == 0 ||
            strncmp(e->d_name, "armv8", 5) == 0 || strncmp(e->d_name, "armv9", 5) == 0) {
            found = true;
            break;
        }
    }
    closedir(d);
    return found;
}

#if defined(FFNROOF_HAVE_PAPI)

static int g_papi_rc = FFN_EUNSUPPORTED;
static char g_papi_err[256];
static bool g_mpx_ok;
static pthread_once_t g_papi_once = PTHREAD_ONCE_INIT;

static unsigned long thread_id(void)
{
    return (unsigned long)pthread_self();
}

static void papi_init_once(void)
{
    (void)ffn_sde_init(); /* register our SDEs before PAPI's SDE component looks for them */
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        snprintf(g_papi_err, sizeof g_papi_err, "PAPI_library_init failed: %s",
                 v > 0 ? "header/library version mismatch" : PAPI_strerror(v));
        return;
    }
    int r = PAPI_thread_init(thread_id);
    if (r != PAPI_OK) {
        snprintf(g_papi_err, sizeof g_papi_err, "PAPI_thread_init failed: %s", PAPI_strerror(r));
        return;
    }
    g_mpx_ok = PAPI_multiplex_init() == PAPI_OK;
    g_papi_rc = 0;
}

static int papi_init(void)
{
    pthread_once(&g_papi_once, papi_init_once);
    return g_papi_rc;
}

static bool is_sde_name(const char *name)
{
    return strncmp(name, "sde:::", 6) == 0;
}

/* PAPI accepts any "sde:::lib::x" name (it creates a placeholder for libraries that register
 * later), so for ffnroof's own library we check the name against the counters we register. */
static bool is_unknown_ffnroof_sde(const char *name)
{
    if (strncmp(name, "sde:::ffnroof::", 15) != 0) return false;
    for (int i = 0; i < FFN_SDE_N; i++)
        if (strcmp(name, ffn_sde_event_names[i]) == 0) return false;
    return true;
}

/* Try to count one event alone: add, start, stop. 0, FFN_ENOTFOUND (unknown name) or
 * FFN_EUNSUPPORTED (known, cannot be counted here), with the reason. */
static int try_event_alone(const char *name, char *reason, size_t rn)
{
    reason[0] = '\0';
    int code = 0;
    int r = PAPI_event_name_to_code(name, &code);
    if (r != PAPI_OK || is_unknown_ffnroof_sde(name)) {
        snprintf(reason, rn, "unknown event (PAPI: %s)",
                 r != PAPI_OK ? PAPI_strerror(r) : "no such ffnroof SDE counter");
        return FFN_ENOTFOUND;
    }
    r = PAPI_query_event(code);
    if (r != PAPI_OK) {
        snprintf(reason, rn, "not available on this host (PAPI_query_event: %s)", PAPI_strerror(r));
        return FFN_EUNSUPPORTED;
    }
    int es = PAPI_NULL;
    r = PAPI_create_eventset(&es);
    if (r != PAPI_OK) {
        snprintf(reason, rn, "PAPI_create_eventset: %s", PAPI_strerror(r));
        return FFN_EUNSUPPORTED;
    }
    int rc = 0;
    r = PAPI_add_event(es, code);
    if (r != PAPI_OK) {
        snprintf(reason, rn, "cannot be counted here (PAPI_add_event: %s)", PAPI_strerror(r));
        rc = FFN_EUNSUPPORTED;
    } else {
        r = PAPI_start(es);
        if (r != PAPI_OK) {
            snprintf(reason, rn, "cannot be counted here (PAPI_start: %s)", PAPI_strerror(r));
            rc = FFN_EUNSUPPORTED;
        } else {
            long long v = 0;
            r = PAPI_stop(es, &v);
            if (r != PAPI_OK) {
                snprintf(reason, rn, "cannot be read here (PAPI_stop: %s)", PAPI_strerror(r));
                rc = FFN_EUNSUPPORTED;
            }
        }
    }
    (void)PAPI_cleanup_eventset(es);
    (void)PAPI_destroy_eventset(&es);
    return rc;
}

static int try_event(const char *name, char *reason, size_t rn)
{
    const int rc = try_event_alone(name, reason, rn);
    if (rc == FFN_EUNSUPPORTED && !is_sde_name(name) && !cpu_pmu_exported())
        ffn__appendf(reason, rn,
                     "; no CPU PMU is exported to this system "
                     "(/sys/bus/event_source/devices has no cpu)");
    return rc;
}

int ffn_papi_probe_run(ffn_papi_probe *p)
{
    if (!p) return FFN_EINVAL;
    memset(p, 0, sizeof *p);
    p->built_in = true;
    p->cpu_pmu_exported = cpu_pmu_exported();
    strcpy(p->counter_source, "none");
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++)
        snprintf(p->events[i].name, sizeof p->events[i].name, "%s", ffn_papi_default_events[i]);
    if (papi_init() != 0) {
        snprintf(p->error, sizeof p->error, "%s", g_papi_err);
        for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++)
            snprintf(p->events[i].reason, sizeof p->events[i].reason, "PAPI unusable: %.170s",
                     g_papi_err);
        return 0;
    }
    p->initialised = true;
    const int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);
    snprintf(p->version, sizeof p->version, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(v),
             PAPI_VERSION_MINOR(v), PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));
    const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
    if (hw) {
        p->virtualized = hw->virtualized != 0;
        snprintf(p->vm_vendor, sizeof p->vm_vendor, "%.63s", hw->virtual_vendor_string);
    }
    int cid = PAPI_get_component_index("perf_event");
    if (cid >= 0) {
        const PAPI_component_info_t *ci = PAPI_get_component_info(cid);
        p->cpu_component_found = ci != NULL;
        if (ci) {
            p->cpu_component_disabled = ci->disabled != 0;
            snprintf(p->cpu_disabled_reason, sizeof p->cpu_disabled_reason, "%.255s",
                     ci->disabled_reason);
        }
        p->num_hw_counters = PAPI_num_cmp_hwctrs(cid);
    }
    cid = PAPI_get_component_index("sde");
    if (cid >= 0) {
        const PAPI_component_info_t *ci = PAPI_get_component_info(cid);
        p->sde_component_found = ci != NULL;
        if (ci) {
            p->sde_component_disabled = ci->disabled != 0;
            snprintf(p->sde_disabled_reason, sizeof p->sde_disabled_reason, "%.255s",
                     ci->disabled_reason);
        }
    }
    char reason[FFN_COUNTER_REASON_MAX];
    p->sde_works =
        ffn_sde_init() == 0 && try_event(ffn_sde_event_names[3], reason, sizeof reason) == 0;
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++) {
        ffn_counter_value *e = &p->events[i];
        if (p->cpu_component_disabled) {
            snprintf(e->reason, sizeof e->reason, "PAPI CPU component disabled: %.150s",
                     p->cpu_disabled_reason);
            continue;
        }
        e->available = try_event(e->name, e->reason, sizeof e->reason) == 0;
        if (e->available) p->n_events_available++;
    }
    strcpy(p->counter_source, p->n_events_available > 0 ? "papi_hw"
                              : p->sde_works            ? "papi_sde"
                                                        : "none");
    return 0;
}

typedef struct listbuf {
    char *buf;
    size_t n, len;
    const char *sep;
    int count;
    bool truncated;
} listbuf;

static void list_add(listbuf *l, const char *name)
{
    l->count++;
    if (l->truncated || !l->buf || l->n == 0) return;
    const size_t need = strlen(name) + (l->len ? strlen(l->sep) : 0);
    if (l->len + need + 4 >= l->n) {
        if (l->len + 4 < l->n) {
            strcpy(l->buf + l->len, "...");
            l->len += 3;
        }
        l->truncated = true;
        return;
    }
    l->len += (size_t)sprintf(l->buf + l->len, "%s%s", l->len ? l->sep : "", name);
}

int ffn_papi_list_available(char *buf, size_t n, const char *sep)
{
    if (papi_init() != 0) return FFN_EUNSUPPORTED;
    if (buf && n) buf[0] = '\0';
    listbuf l = {buf, n, 0, sep ? sep : ", ", 0, false};
    char reason[FFN_COUNTER_REASON_MAX];
    /* presets that map to something here, ffnroof's own SDEs, then each enabled component's
     * native events; each one is checked by actually counting it */
    int code = PAPI_PRESET_MASK;
    if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
        do {
            char name[PAPI_MAX_STR_LEN];
            if (PAPI_event_code_to_name(code, name) == PAPI_OK &&
                PAPI_query_event(code) == PAPI_OK && try_event(name, reason, sizeof reason) == 0)
                list_add(&l, name);
        } while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    }
    if (ffn_sde_init() == 0)
        for (int i = 0; i < FFN_SDE_N; i++)
            if (try_event(ffn_sde_event_names[i], reason, sizeof reason) == 0)
                list_add(&l, ffn_sde_event_names[i]);
    const int ncomp = PAPI_num_components();
    for (int cid = 0; cid < ncomp; cid++) {
        const PAPI_component_info_t *ci = PAPI_get_component_info(cid);
        if (!ci || ci->disabled || strcmp(ci->name, "sde") == 0) continue;
        code = PAPI_NATIVE_MASK;
        if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid) != PAPI_OK) continue;
        do {
            char name[PAPI_MAX_STR_LEN];
            if (PAPI_event_code_to_name(code, name) == PAPI_OK &&
                try_event(name, reason, sizeof reason) == 0)
                list_add(&l, name);
        } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid) == PAPI_OK);
    }
    return l.count;
}

#define MAX_SETS 8

struct ffn_counters {
    size_t n;
    ffn_counter_value *ev; /* names, availability, reasons; values filled on stop */
    int *code;
    int *set; /* index into sets[], -1 when unavailable */
    int *pos; /* position in that PAPI event set */
    struct {
        int cid, es, nev;
        bool mpx;
    } sets[MAX_SETS];
    int nsets;
    bool multiplexed, inherit, running;
};

static int new_set(ffn_counters *c, int cid, bool mpx)
{
    int es = PAPI_NULL;
    if (PAPI_create_eventset(&es) != PAPI_OK) return -1;
    if (PAPI_assign_eventset_component(es, cid) != PAPI_OK) {
        (void)PAPI_destroy_eventset(&es);
        return -1;
    }
    if (mpx && PAPI_set_multiplex(es) != PAPI_OK) {
        (void)PAPI_destroy_eventset(&es);
        return -1;
    }
    const int cpu_cid = PAPI_get_component_index("perf_event");
    if (cid == cpu_cid) {
        /* count threads created after the start too (the bench's worker threads) */
        PAPI_option_t opt;
        memset(&opt, 0, sizeof opt);
        opt.inherit.eventset = es;
        opt.inherit.inherit = PAPI_INHERIT_ALL;
        if (PAPI_set_opt(PAPI_INHERIT, &opt) == PAPI_OK) c->inherit = true;
    }
    return es;
}

/* Rebuild a component's event set as a multiplexed one with the same events. */
static int make_multiplexed(ffn_counters *c, int s)
{
    if (!g_mpx_ok) return -1;
    const int es = new_set(c, c->sets[s].cid, true);
    if (es < 0) return -1;
    for (size_t i = 0; i < c->n; i++)
        if (c->set[i] == s && PAPI_add_event(es, c->code[i]) != PAPI_OK) {
            int tmp = es;
            (void)PAPI_cleanup_eventset(tmp);
            (void)PAPI_destroy_eventset(&tmp);
            return -1;
        }
    (void)PAPI_cleanup_eventset(c->sets[s].es);
    (void)PAPI_destroy_eventset(&c->sets[s].es);
    c->sets[s].es = es;
    c->sets[s].mpx = true;
    c->multiplexed = true;
    return 0;
}

static int find_or_add_set(ffn_counters *c, int cid)
{
    for (int s = 0; s < c->nsets; s++)
        if (c->sets[s].cid == cid) return s;
    if (c->nsets == MAX_SETS) return -1;
    const int es = new_set(c, cid, false);
    if (es < 0) return -1;
    c->sets[c->nsets].cid = cid;
    c->sets[c->nsets].es = es;
    c->sets[c->nsets].nev = 0;
    c->sets[c->nsets].mpx = false;
    return c->nsets++;
}

static void diag_with_list(ffn_diag *diag, int err, const char *name, const char *reason)
{
    char list[320];
    const int n = ffn_papi_list_available(list, sizeof list, ", ");
    ffn_diag_set(diag, err, NULL, 0, 0, "event '%s': %s; available here (%d): %s", name, reason,
                 n > 0 ? n : 0, n > 0 ? list : "none");
}

int ffn_counters_create(const char *const *events, size_t n, bool strict, ffn_counters **out,
                        ffn_diag *diag)
{
    ffn_diag_clear(diag);
    if (!out || (n > 0 && !events)) return FFN_EINVAL;
    *out = NULL;
    if (papi_init() != 0) return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0, "%s", g_papi_err);
    ffn_counters *c = calloc(1, sizeof *c);
    if (!c) return FFN_ENOMEM;
    c->n = n;
    c->ev = calloc(n ? n : 1, sizeof *c->ev);
    c->code = calloc(n ? n : 1, sizeof *c->code);
    c->set = calloc(n ? n : 1, sizeof *c->set);
    c->pos = calloc(n ? n : 1, sizeof *c->pos);
    int rc = 0;
    if (!c->ev || !c->code || !c->set || !c->pos) {
        rc = FFN_ENOMEM;
        goto fail;
    }
    /* every event belongs to no set until it is added: make_multiplexed() moves the events of a
     * set, and one still to come must not look like a member of set 0 */
    for (size_t i = 0; i < n; i++)
        c->set[i] = -1;
    for (size_t i = 0; i < n; i++) {
        ffn_counter_value *e = &c->ev[i];
        c->set[i] = -1;
        if (!events[i]) {
            rc = FFN_EINVAL;
            goto fail;
        }
        snprintf(e->name, sizeof e->name, "%s", events[i]);
        /* first alone (the reason is clearest there), then into the component's set */
        const int t = try_event(e->name, e->reason, sizeof e->reason);
        if (t < 0) {
            if (strict) {
                diag_with_list(diag, t, e->name, e->reason);
                rc = t;
                goto fail;
            }
            continue;
        }
        (void)PAPI_event_name_to_code(e->name, &c->code[i]);
        const int s = find_or_add_set(c, PAPI_get_event_component(c->code[i]));
        if (s < 0) {
            snprintf(e->reason, sizeof e->reason, "no PAPI event set for its component");
        } else {
            int r = PAPI_add_event(c->sets[s].es, c->code[i]);
            if (r == PAPI_ECNFLCT && !c->sets[s].mpx && make_multiplexed(c, s) == 0)
                r = PAPI_add_event(c->sets[s].es, c->code[i]);
            if (r == PAPI_OK) {
                c->set[i] = s;
                c->pos[i] = c->sets[s].nev++;
                e->available = true;
                continue;
            }
            snprintf(e->reason, sizeof e->reason,
                     "does not fit with the other events (PAPI_add_event: %s)", PAPI_strerror(r));
        }
        if (strict) {
            rc = ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0, "event '%s': %s", e->name,
                              e->reason);
            goto fail;
        }
    }
    *out = c;
    return 0;
fail:
    ffn_counters_free(c);
    return rc;
}

int ffn_counters_start(ffn_counters *c)
{
    if (!c || c->running) return FFN_EINVAL;
    for (int s = 0; s < c->nsets; s++) {
        if (c->sets[s].nev == 0) continue;
        if (PAPI_start(c->sets[s].es) != PAPI_OK) {
            for (int t = 0; t < s; t++) {
                long long junk[64];
                if (c->sets[t].nev > 0 && c->sets[t].nev <= 64)
                    (void)PAPI_stop(c->sets[t].es, junk);
            }
            return FFN_EUNSUPPORTED;
        }
    }
    c->running = true;
    return 0;
}

int ffn_counters_stop(ffn_counters *c, ffn_counter_value *vals, size_t n)
{
    if (!c || !c->running || (n > 0 && !vals)) return FFN_EINVAL;
    int rc = 0;
    long long *v[MAX_SETS] = {NULL};
    for (int s = 0; s < c->nsets; s++) {
        if (c->sets[s].nev == 0) continue;
        v[s] = calloc((size_t)c->sets[s].nev, sizeof(long long));
        if (!v[s] || PAPI_stop(c->sets[s].es, v[s]) != PAPI_OK) {
            free(v[s]);
            v[s] = NULL;
            rc = FFN_EIO;
        }
    }
    c->running = false;
    for (size_t i = 0; i < n && i < c->n; i++) {
        vals[i] = c->ev[i];
        vals[i].value = 0;
        const int s = c->set[i];
        if (s >= 0 && v[s]) {
            vals[i].value = v[s][c->pos[i]];
        } else if (s >= 0) {
            vals[i].available = false;
            snprintf(vals[i].reason, sizeof vals[i].reason, "PAPI_stop failed");
        }
    }
    for (int s = 0; s < c->nsets; s++)
        free(v[s]);
    return rc;
}

size_t ffn_counters_count(const ffn_counters *c)
{
    return c ? c->n : 0;
}

bool ffn_counters_multiplexed(const ffn_counters *c)
{
    return c && c->multiplexed;
}

bool ffn_counters_inherit(const ffn_counters *c)
{
    return c && c->inherit;
}

void ffn_counters_free(ffn_counters *c)
{
    if (!c) return;
    if (c->running) {
        for (int s = 0; s < c->nsets; s++) {
            long long junk[64];
            if (c->sets[s].nev > 0 && c->sets[s].nev <= 64) (void)PAPI_stop(c->sets[s].es, junk);
        }
    }
    for (int s = 0; s < c->nsets; s++) {
        (void)PAPI_cleanup_eventset(c->sets[s].es);
        (void)PAPI_destroy_eventset(&c->sets[s].es);
    }
    free(c->ev);
    free(c->code);
    free(c->set);
    free(c->pos);
    free(c);
}

#else /* !FFNROOF_HAVE_PAPI */

int ffn_papi_probe_run(ffn_papi_probe *p)
{
    if (!p) return FFN_EINVAL;
    memset(p, 0, sizeof *p);
    p->cpu_pmu_exported = cpu_pmu_exported();
    snprintf(p->error, sizeof p->error, "ffnroof was built without PAPI");
    strcpy(p->counter_source, "none");
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++) {
        snprintf(p->events[i].name, sizeof p->events[i].name, "%s", ffn_papi_default_events[i]);
        snprintf(p->events[i].reason, sizeof p->events[i].reason,
                 "counters not built in (ffnroof was built without PAPI)");
    }
    return 0;
}

int ffn_papi_list_available(char *buf, size_t n, const char *sep)
{
    (void)sep;
    if (buf && n) buf[0] = '\0';
    return FFN_EUNSUPPORTED;
}

struct ffn_counters {
    int unused;
};

int ffn_counters_create(const char *const *events, size_t n, bool strict, ffn_counters **out,
                        ffn_diag *diag)
{
    (void)events;
    (void)n;
    (void)strict;
    if (out) *out = NULL;
    return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                        "counters not built in (ffnroof was built without PAPI)");
}

int ffn_counters_start(ffn_counters *c)
{
    (void)c;
    return FFN_EUNSUPPORTED;
}

int ffn_counters_stop(ffn_counters *c, ffn_counter_value *vals, size_t n)
{
    (void)c;
    (void)vals;
    (void)n;
    return FFN_EUNSUPPORTED;
}

size_t ffn_counters_count(const ffn_counters *c)
{
    (void)c;
    return 0;
}

bool ffn_counters_multiplexed(const ffn_counters *c)
{
    (void)c;
    return false;
}

bool ffn_counters_inherit(const ffn_counters *c)
{
    (void)c;
    return false;
}

void ffn_counters_free(ffn_counters *c)
{
    (void)c;
}

#endif
