/* The hardware-counter path of measure/probe/papi.c on a host that has counters, which the
 * development VMs (no CPU PMU) never exercise: linked against a stand-in for the PAPI calls
 * (fake_papi.c) that behaves like PAPI with 6 counters. Every counter comes out with its counted
 * value or unavailable with PAPI's reason (null in bench.json), nothing is estimated, sets past
 * 6 events are multiplexed, a start that fails is reported, and the SDE events still read.
 * Built by tests/CMakeLists.txt as its own executable; ffnroof links the real PAPI. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_papi.h"
#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/measure_papi.h"

Test(papi_standin, the_probe_sees_a_host_with_six_counters)
{
    ffn_papi_probe p;
    cr_assert_eq(ffn_papi_probe_run(&p), 0);
    cr_expect(p.built_in && p.initialised, "%s", p.error);
    cr_expect_str_eq(p.version, "7.0.1.0");
    cr_expect(p.cpu_component_found && !p.cpu_component_disabled);
    cr_expect_eq(p.num_hw_counters, 6);
    cr_expect(p.sde_works, "the SDE events must read through PAPI");
    cr_expect_str_eq(p.counter_source, "papi_hw");
    /* default events: TOT_CYC TOT_INS FP_OPS SP_OPS L1_DCM L2_DCM L3_TCM */
    static const bool want[FFN_PAPI_N_DEFAULT] = {true, true, false, true, true, true, false};
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++) {
        cr_expect_eq(p.events[i].available, want[i], "%s: %s", p.events[i].name,
                     p.events[i].reason);
        if (!want[i]) cr_expect(p.events[i].reason[0], "%s has no reason", p.events[i].name);
    }
    cr_expect_eq(p.n_events_available, 5);
    cr_expect(strstr(p.events[2].reason, "Event does not exist") != NULL, "FP_OPS: %s",
              p.events[2].reason);
    cr_expect(strstr(p.events[6].reason, "PAPI_add_event") &&
                  strstr(p.events[6].reason, "counter resource limitations"),
              "L3_TCM: %s", p.events[6].reason);
}

static const char *const many[] = {"PAPI_TOT_CYC",
                                   "PAPI_TOT_INS",
                                   "PAPI_SP_OPS",
                                   "PAPI_L1_DCM",
                                   "PAPI_L2_DCM",
                                   "PAPI_BR_INS",
                                   "PAPI_BR_MSP",
                                   "cpu::UOPS_RETIRED",
                                   "PAPI_FP_OPS",
                                   "PAPI_L3_TCM",
                                   "PAPI_REF_CYC",
                                   "NO_SUCH_EVENT",
                                   "sde:::ffnroof::flops",
                                   "sde:::ffnroof::weight_bytes",
                                   "sde:::ffnroof::act_bytes",
                                   "sde:::ffnroof::kernel_calls"};
#define N_MANY (sizeof many / sizeof many[0])

Test(papi_standin, every_counter_has_its_value_or_the_reason)
{
    ffn_counters *c = NULL;
    ffn_diag d;
    cr_assert_eq(ffn_counters_create(many, N_MANY, false, &c, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_counters_count(c), N_MANY);
    cr_expect(ffn_counters_multiplexed(c), "8 CPU events do not fit 6 counters: multiplexed");
    cr_expect(ffn_counters_inherit(c));
    cr_assert_eq(ffn_counters_start(c), 0);
    ffn_sde_add(1000, 2000, 300, 7); /* the bench's own work, during the run */
    ffn_counter_value v[N_MANY];
    cr_assert_eq(ffn_counters_stop(c, v, N_MANY), 0);
    for (size_t i = 0; i < N_MANY; i++) {
        cr_expect_str_eq(v[i].name, many[i]);
        const long long hw = fake_papi_per_run(many[i]);
        const bool sde = !strncmp(many[i], "sde:::", 6);
        const bool counted = sde || (hw > 0);
        cr_expect_eq(v[i].available, counted, "%s: %s", many[i], v[i].reason);
        if (counted && !sde)
            cr_expect_eq(v[i].value, hw, "%s: %lld is not what PAPI counted (%lld)", many[i],
                         v[i].value, hw);
        if (!counted) {
            cr_expect(v[i].reason[0], "%s: unavailable without a reason", many[i]);
            cr_expect_eq(v[i].value, 0, "%s: an unavailable counter carries no number", many[i]);
        }
    }
    cr_expect_eq(v[12].value, 1000, "SDE flops");
    cr_expect_eq(v[13].value, 2000, "SDE weight bytes");
    cr_expect_eq(v[14].value, 300, "SDE activation bytes");
    cr_expect_eq(v[15].value, 7, "SDE kernel calls");
    cr_expect(strstr(v[8].reason, "PAPI_query_event: Event does not exist") != NULL, "%s",
              v[8].reason);
    cr_expect(strstr(v[9].reason, "PAPI_add_event") != NULL, "%s", v[9].reason);
    cr_expect(strstr(v[10].reason, "PAPI_start: A System/C library call failed") != NULL, "%s",
              v[10].reason);
    cr_expect(strstr(v[11].reason, "unknown event") != NULL, "%s", v[11].reason);

    /* bench.json: the counted ones as numbers, the others as null with PAPI's reason */
    static ffn_bench_result r;
    memset(&r, 0, sizeof r);
    r.calls = 10;
    r.n_counters = N_MANY < FFN_BENCH_MAX_EVENTS ? N_MANY : FFN_BENCH_MAX_EVENTS;
    memcpy(r.counters, v, r.n_counters * sizeof v[0]);
    ffn_bench_meta m;
    memset(&m, 0, sizeof m);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    cr_assert_not_null(fp);
    cr_assert_eq(ffn_bench_write_json(fp, &m, &r, 1), 0);
    fclose(fp);
    cr_expect(strstr(buf, "\"name\": \"PAPI_TOT_CYC\", \"value\": 1000001") ||
                  strstr(buf, "\"value\": 1000001"),
              "TOT_CYC's count: %s", buf);
    const char *fp_ops = strstr(buf, "\"PAPI_FP_OPS\"");
    cr_assert_not_null(fp_ops);
    const char *end = strchr(fp_ops, '}');
    char one[512];
    snprintf(one, sizeof one, "%.*s", (int)(end - fp_ops), fp_ops);
    cr_expect(strstr(one, "\"value\": null") && strstr(one, "Event does not exist"), "%s", one);
    free(buf);
    ffn_counters_free(c);
    fake_papi_stats st = fake_papi_get_stats();
    cr_expect_eq(st.sets_created, st.sets_destroyed, "every PAPI event set is destroyed");
}

Test(papi_standin, six_events_fit_without_multiplexing)
{
    ffn_counters *c = NULL;
    ffn_diag d;
    cr_assert_eq(ffn_counters_create(many, 6, true, &c, &d), 0, "%s", d.msg);
    cr_expect(!ffn_counters_multiplexed(c));
    ffn_counters_free(c);
}

Test(papi_standin, strict_sets_name_the_event_and_list_what_counts)
{
    ffn_counters *c = NULL;
    ffn_diag d;
    const char *const bad[] = {"PAPI_TOT_CYC", "PAPI_FP_OPS"};
    cr_expect_eq(ffn_counters_create(bad, 2, true, &c, &d), FFN_EUNSUPPORTED);
    cr_expect_null(c);
    cr_expect(strstr(d.msg, "PAPI_FP_OPS") && strstr(d.msg, "PAPI_TOT_CYC"),
              "names the event and lists the available ones: %s", d.msg);
    const char *const unknown[] = {"NO_SUCH_EVENT"};
    cr_expect_eq(ffn_counters_create(unknown, 1, true, &c, &d), FFN_ENOTFOUND);
    char list[1024];
    const int n = ffn_papi_list_available(list, sizeof list, ",");
    cr_expect_eq(n, 13, "presets that count, the SDE events and the native ones: %s", list);
    cr_expect(strstr(list, "PAPI_FP_OPS") == NULL && strstr(list, "PAPI_REF_CYC") == NULL, "%s",
              list);
}

Test(papi_standin, a_start_that_fails_is_reported_not_counted)
{
    ffn_counters *c = NULL;
    ffn_diag d;
    cr_assert_eq(ffn_counters_create(many, 4, true, &c, &d), 0, "%s", d.msg);
    fake_papi_fail_starts(true);
    cr_expect_eq(ffn_counters_start(c), FFN_EUNSUPPORTED);
    fake_papi_fail_starts(false);
    ffn_counter_value v[4];
    cr_expect_eq(ffn_counters_stop(c, v, 4), FFN_EINVAL, "nothing to read: it never ran");
    cr_assert_eq(ffn_counters_start(c), 0);
    cr_assert_eq(ffn_counters_stop(c, v, 4), 0);
    cr_expect_eq(v[0].value, fake_papi_per_run("PAPI_TOT_CYC"));
    ffn_counters_free(c);
}
