/* Tests of ffnroof's counter layer: the PAPI probe (never an unavailable counter without a
 * reason), ffnroof's software-defined events read back through PAPI (a known increment must read
 * back exactly), strict and lenient handling of unknown or uncountable events, and the build
 * without PAPI (clear "not built in" answers, SDE totals still kept). */
#include <criterion/criterion.h>
#include <string.h>

#include "ffnroof/measure_papi.h"

Test(measure_papi, probe_reports_reasons)
{
    ffn_papi_probe p;
    cr_assert_eq(ffn_papi_probe_run(&p), 0);
    cr_expect(strcmp(p.counter_source, "papi_hw") == 0 ||
              strcmp(p.counter_source, "papi_sde") == 0 || strcmp(p.counter_source, "none") == 0);
    for (int i = 0; i < FFN_PAPI_N_DEFAULT; i++) {
        cr_expect_str_eq(p.events[i].name, ffn_papi_default_events[i]);
        if (!p.events[i].available)
            cr_expect_gt(strlen(p.events[i].reason), 0, "%s has no reason", p.events[i].name);
    }
#if defined(FFNROOF_HAVE_PAPI)
    cr_expect(p.built_in);
    cr_assert(p.initialised, "PAPI did not initialise: %s", p.error);
    cr_expect_gt(strlen(p.version), 0);
    cr_expect(p.sde_works, "SDE read-back failed (component disabled: %d, '%s')",
              p.sde_component_disabled, p.sde_disabled_reason);
    if (p.cpu_component_disabled) cr_expect_gt(strlen(p.cpu_disabled_reason), 0);
    if (p.n_events_available == 0) cr_expect_str_eq(p.counter_source, "papi_sde");
#else
    cr_expect_not(p.built_in);
    cr_expect_str_eq(p.counter_source, "none");
#endif
}

#if defined(FFNROOF_HAVE_PAPI)

Test(measure_papi, sde_counters_read_back_through_papi)
{
    cr_assert_eq(ffn_sde_init(), 0);
    ffn_counters *c = NULL;
    ffn_diag d;
    cr_assert_eq(ffn_counters_create(ffn_sde_event_names, FFN_SDE_N, true, &c, &d), 0, "%s", d.msg);
    cr_expect_eq(ffn_counters_count(c), FFN_SDE_N);
    /* work done before the start must not be counted */
    ffn_sde_add(999, 999, 999, 999);
    cr_assert_eq(ffn_counters_start(c), 0);
    for (int i = 0; i < 3; i++)
        ffn_sde_add(2LL * 4096 * 11008 * 7, 3LL * 4096 * 11008 * 2, 4096LL * 4 * 7 * 2, 1);
    ffn_counter_value v[FFN_SDE_N];
    cr_assert_eq(ffn_counters_stop(c, v, FFN_SDE_N), 0);
    const long long want[FFN_SDE_N] = {3 * 2LL * 4096 * 11008 * 7, 3 * 3LL * 4096 * 11008 * 2,
                                       3 * 4096LL * 4 * 7 * 2, 3};
    for (int i = 0; i < FFN_SDE_N; i++) {
        cr_expect(v[i].available, "%s: %s", v[i].name, v[i].reason);
        cr_expect_str_eq(v[i].name, ffn_sde_event_names[i]);
        cr_expect_eq(v[i].value, want[i], "%s: %lld != %lld", v[i].name, v[i].value, want[i]);
    }
    /* a second interval starts from zero again */
    cr_assert_eq(ffn_counters_start(c), 0);
    ffn_sde_add(5, 0, 0, 1);
    cr_assert_eq(ffn_counters_stop(c, v, FFN_SDE_N), 0);
    cr_expect_eq(v[0].value, 5);
    cr_expect_eq(v[3].value, 1);
    cr_expect_eq(ffn_counters_stop(c, v, FFN_SDE_N), FFN_EINVAL); /* not running */
    ffn_counters_free(c);
}

Test(measure_papi, unknown_events)
{
    ffn_counters *c = NULL;
    ffn_diag d;
    const char *bad[] = {"NO_SUCH_EVENT_FFNROOF"};
    cr_expect_eq(ffn_counters_create(bad, 1, true, &c, &d), FFN_ENOTFOUND);
    cr_expect_null(c);
    cr_expect_not_null(strstr(d.msg, "NO_SUCH_EVENT_FFNROOF"));
    cr_expect_not_null(strstr(d.msg, "available"), "%s", d.msg);
    cr_expect_not_null(strstr(d.msg, "sde:::ffnroof::"), "the list names what works: %s", d.msg);
    const char *bad_sde[] = {"sde:::ffnroof::no_such_counter"};
    cr_expect_eq(ffn_counters_create(bad_sde, 1, true, &c, &d), FFN_ENOTFOUND);

    /* lenient: unknown and uncountable events stay in the set as unavailable, with a reason */
    const char *mixed[] = {"NO_SUCH_EVENT_FFNROOF", "sde:::ffnroof::kernel_calls", "PAPI_TOT_CYC"};
    cr_assert_eq(ffn_counters_create(mixed, 3, false, &c, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_counters_start(c), 0);
    ffn_sde_add(0, 0, 0, 4);
    ffn_counter_value v[3];
    cr_assert_eq(ffn_counters_stop(c, v, 3), 0);
    cr_expect_not(v[0].available);
    cr_expect_not_null(strstr(v[0].reason, "unknown"));
    cr_expect(v[1].available);
    cr_expect_eq(v[1].value, 4);
    if (!v[2].available) cr_expect_gt(strlen(v[2].reason), 0);
    ffn_counters_free(c);

    char list[4096];
    const int n = ffn_papi_list_available(list, sizeof list, ",");
    cr_expect_geq(n, FFN_SDE_N);
    cr_expect_not_null(strstr(list, "sde:::ffnroof::flops"));
}

#else

Test(measure_papi, without_papi)
{
    ffn_counters *c = (ffn_counters *)1;
    ffn_diag d;
    cr_expect_eq(ffn_counters_create(ffn_sde_event_names, FFN_SDE_N, true, &c, &d),
                 FFN_EUNSUPPORTED);
    cr_expect_null(c);
    cr_expect_not_null(strstr(d.msg, "without PAPI"));
    cr_expect_eq(ffn_sde_init(), FFN_EUNSUPPORTED);
    char buf[64];
    cr_expect_eq(ffn_papi_list_available(buf, sizeof buf, ","), FFN_EUNSUPPORTED);
}

#endif

Test(measure_papi, sde_totals_are_kept)
{
    ffn_sde_values a, b;
    ffn_sde_snapshot(&a);
    ffn_sde_add(10, 20, 30, 1);
    ffn_sde_snapshot(&b);
    cr_expect_eq(b.flops - a.flops, 10);
    cr_expect_eq(b.weight_bytes - a.weight_bytes, 20);
    cr_expect_eq(b.act_bytes - a.act_bytes, 30);
    cr_expect_eq(b.kernel_calls - a.kernel_calls, 1);
}
