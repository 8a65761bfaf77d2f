/* ffnroof's own PAPI software-defined events (sde:::ffnroof::flops, weight_bytes, act_bytes,
 * kernel_calls): counters the kernels' callers add to analytically, registered with libsde so
 * that a PAPI event set (papi.c) reads them where the VM exports no hardware counter. Without
 * FFNROOF_HAVE_PAPI the counters still count and ffn_sde_init reports that libsde is absent. */
#include <pthread.h>

#include "ffnroof/measure_papi.h"
#include "internal.h"

#if defined(FFNROOF_HAVE_PAPI)
#include <papi.h>
#include <sde_lib.h>
#endif

const char *const ffn_sde_event_names[FFN_SDE_N] = {
    "sde:::ffnroof::flops", "sde:::ffnroof::weight_bytes", "sde:::ffnroof::act_bytes",
    "sde:::ffnroof::kernel_calls"};
#if defined(FFNROOF_HAVE_PAPI)
static const char *const g_sde_short[FFN_SDE_N] = {"flops", "weight_bytes", "act_bytes",
                                                   "kernel_calls"};
static const char *const g_sde_desc[FFN_SDE_N] = {
    "FLOPs of the FFN kernel calls made (2 per multiply-add, counted analytically)",
    "bytes of weights the kernel calls had to read (compulsory traffic)",
    "bytes of activations read and written by the kernel calls (compulsory traffic)",
    "number of FFN kernel calls"};
#endif

/* The counters themselves: plain long longs that libsde reads through the registered pointers;
 * updated with atomic adds because the bench may call from several threads. */
static long long g_sde[FFN_SDE_N];

void ffn_sde_add(long long flops, long long weight_bytes, long long act_bytes,
                 long long kernel_calls)
{
    __atomic_fetch_add(&g_sde[0], flops, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_sde[1], weight_bytes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_sde[2], act_bytes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_sde[3], kernel_calls, __ATOMIC_RELAXED);
}

void ffn_sde_snapshot(ffn_sde_values *out)
{
    if (!out) return;
    out->flops = __atomic_load_n(&g_sde[0], __ATOMIC_RELAXED);
    out->weight_bytes = __atomic_load_n(&g_sde[1], __ATOMIC_RELAXED);
    out->act_bytes = __atomic_load_n(&g_sde[2], __ATOMIC_RELAXED);
    out->kernel_calls = __atomic_load_n(&g_sde[3], __ATOMIC_RELAXED);
}

static int g_sde_rc = FFN_EUNSUPPORTED;
static pthread_once_t g_sde_once = PTHREAD_ONCE_INIT;

static void sde_register(void)
{
#if defined(FFNROOF_HAVE_PAPI)
    papi_handle_t h = papi_sde_init("ffnroof");
    if (!h) {
        g_sde_rc = FFN_EUNSUPPORTED;
        return;
    }
    for (int i = 0; i < FFN_SDE_N; i++) {
        if (papi_sde_register_counter(h, g_sde_short[i], PAPI_SDE_RO | PAPI_SDE_DELTA,
                                      PAPI_SDE_long_long, &g_sde[i]) != SDE_OK) {
            g_sde_rc = FFN_EUNSUPPORTED;
            return;
        }
        (void)papi_sde_describe_counter(h, g_sde_short[i], g_sde_desc[i]);
    }
    g_sde_rc = 0;
#endif
}

int ffn_sde_init(void)
{
    pthread_once(&g_sde_once, sde_register);
    return g_sde_rc;
}
