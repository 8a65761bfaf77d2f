/* Collectives over a link (include/ffnroof/sim.h, docs/model.md "Collectives"): the alpha-beta
 * model fitted per op and group size to measured NCCL and custom all-reduce tables where the
 * spec has it (`collectives:`, fitted by sim/attn_fit.c), else the ring model of the link's
 * datasheet bandwidth and latency. */
#include <stdio.h>
#include <string.h>

#include "op_internal.h"
#include "ffnroof/sim.h"

const char *ffn_coll_name(ffn_coll_op kind)
{
    static const char *const names[FFN_COLL_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                      "alltoall", "custom_all_reduce"};
    return (unsigned)kind < FFN_COLL_COUNT ? names[kind] : "?";
}

double ffn_coll_bus_factor(ffn_coll_op op, double n)
{
    if (!(n > 1)) return 0;
    /* nccl-tests' bus bandwidth (NVIDIA/nccl-tests doc/PERFORMANCE.md): what each device sends
     * over its link in a ring, per byte of the message */
    const double f = (n - 1.0) / n;
    return op == FFN_COLL_ALL_REDUCE || op == FFN_COLL_CUSTOM_ALL_REDUCE ? 2.0 * f : f;
}

/* The ring over the link's datasheet figures: an all-reduce is a reduce-scatter plus an
 * all-gather, 2(n-1) latency-bound steps (Patarasuk & Yuan 2009); the others n-1 steps. */
static double ring_s(const ffn_link *l, ffn_coll_op kind, double bytes, double N)
{
    const double bw = l->bandwidth_bps > 0 ? l->bandwidth_bps : 1.0;
    const bool ar = kind == FFN_COLL_ALL_REDUCE || kind == FFN_COLL_CUSTOM_ALL_REDUCE;
    return ffn_coll_bus_factor(kind, N) * bytes / bw + (ar ? 2.0 : 1.0) * (N - 1.0) * l->latency_s;
}

/* The fitted entries of kind around n: *a <= n <= *b (the same entry when n was fitted); false
 * when n is outside the fitted group sizes. */
static bool around(const ffn_coll_model *m, ffn_coll_op kind, uint64_t n, const ffn_coll_fit **a,
                   const ffn_coll_fit **b)
{
    const int k = m->n[kind];
    if (k <= 0 || n < m->fit[kind][0].gpus || n > m->fit[kind][k - 1].gpus) return false;
    for (int i = 0; i < k; i++) {
        if (m->fit[kind][i].gpus == n) {
            *a = *b = &m->fit[kind][i];
            return true;
        }
        if (i + 1 < k && m->fit[kind][i].gpus < n && m->fit[kind][i + 1].gpus > n) {
            *a = &m->fit[kind][i];
            *b = &m->fit[kind][i + 1];
            return true;
        }
    }
    return false;
}

/* The fitted time of kind alone, or a negative value when it does not cover n. */
static double fitted_s(const ffn_coll_model *m, ffn_coll_op kind, double bytes, uint64_t n)
{
    const ffn_coll_fit *a, *b;
    if (!around(m, kind, n, &a, &b)) return -1.0;
    double lat = a->latency_s, bus = a->bus_bps;
    if (a != b) {
        const double w = ((double)n - a->gpus) / ((double)b->gpus - a->gpus);
        lat = a->latency_s + w * (b->latency_s - a->latency_s);
        bus = a->bus_bps + w * (b->bus_bps - a->bus_bps);
    }
    return lat + ffn_coll_bus_factor(kind, (double)n) * bytes / bus;
}

double ffn_coll_time_s(const ffn_link *link, ffn_coll_op kind, double bytes, uint64_t n,
                       bool *fitted)
{
    if (fitted) *fitted = false;
    if (n <= 1 || !(bytes > 0)) return 0.0;
    double t = fitted_s(&link->coll, kind, bytes, n);
    if (kind == FFN_COLL_ALL_REDUCE) {
        /* vLLM runs its custom all-reduce on one node for messages up to its buffer
         * (custom_max) and NCCL above: the faster of the two fitted kernels where both may run */
        const double cap = link->coll.custom_max_bytes;
        const double c = cap > 0 && bytes > cap
                             ? -1.0
                             : fitted_s(&link->coll, FFN_COLL_CUSTOM_ALL_REDUCE, bytes, n);
        if (c > 0 && (t < 0 || c < t)) t = c;
    }
    if (t >= 0) {
        if (fitted) *fitted = true;
        return t;
    }
    return ring_s(link, kind, bytes, (double)n);
}

bool ffn_coll_range(const ffn_hw *hw, const ffn_link *link, ffn_coll_op kind, uint64_t n,
                    double *p10, double *p90)
{
    const ffn_coll_fit *a, *b;
    if (!around(&link->coll, kind, n, &a, &b)) {
        ffn_hw_unc_range(hw, p10, p90);
        return false;
    }
    *p10 = a->p10 < b->p10 ? a->p10 : b->p10;
    *p90 = a->p90 > b->p90 ? a->p90 : b->p90;
    return true;
}

void ffn_op_collective(ffn_op *op, const ffn_link *link, ffn_coll_op kind, const char *name,
                       double bytes, uint64_t n)
{
    ffn__op_comm_init(op, name);
    if (n <= 1 || bytes <= 0) return;
    op->bytes = ffn_coll_bus_factor(kind, (double)n) * bytes;
    op->roofline_s = op->predicted_s = ffn_coll_time_s(link, kind, bytes, n, NULL);
}

void ffn_op_allreduce(ffn_op *op, const ffn_link *link, const char *name, double bytes, uint64_t n)
{
    ffn_op_collective(op, link, FFN_COLL_ALL_REDUCE, name, bytes, n);
}
