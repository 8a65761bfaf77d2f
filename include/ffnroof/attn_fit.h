/* Fitting a device's attention kernels and collectives to measured times (the aiconfigurator
 * collector's attention and communication tables, include/ffnroof/aic.h): the per-kernel
 * efficiency of include/ffnroof/attention.h (hw->attn) and the alpha-beta model of each
 * collective and group size (hw->scaleup.coll). docs/model.md, "Attention" and "Collectives",
 * gives the equations and the fitted values. Pure: no I/O; a fit allocates only its scratch. */
#ifndef FFNROOF_ATTN_FIT_H
#define FFNROOF_ATTN_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/attention.h"
#include "ffnroof/hw.h"
#include "ffnroof/types.h"

/* One measured attention call: prefill (batch prompts of len tokens each, no cached context) or
 * decode (batch sequences of one new token each over a KV cache of len tokens). */
typedef struct ffn_attn_point {
    uint32_t batch;
    uint64_t len;      /* prefill: the prompt's tokens; decode: the KV length */
    uint32_t heads;    /* query heads */
    uint32_t kv_heads; /* KV heads */
    uint32_t head_dim; /* of queries, keys and values alike */
    uint64_t window;   /* sliding window in tokens, 0 = full attention */
    ffn_dtype kv_dtype;
    double time_s;
    uint16_t kernel; /* the table's kernel index (include/ffnroof/aic.h) */
} ffn_attn_point;

/* One measured collective over gpus devices of one node; bytes as ffn_coll_op counts them. */
typedef struct ffn_coll_point {
    uint8_t op; /* ffn_coll_op */
    uint32_t gpus;
    double bytes;
    bool eager; /* timed eagerly, outside a CUDA graph (the custom all-reduce's *_eager rows) */
    double time_s;
    uint16_t kernel;
} ffn_coll_point;

/* The dims of a point's call (heads unsplit: the table's shapes are one device's), computing
 * in bf16 with bf16 queries and outputs, as the collector runs it. */
void ffn_attn_point_dims(const ffn_hw *hw, const ffn_attn_point *p, ffn_attn_dims *d);

/* The time ffn_attn_decode_s (decode) or ffn_attn_prefill_s predicts for a point on hw. */
double ffn_attn_point_predict(const ffn_hw *hw, const ffn_attn_point *p, bool decode);

/* Fit hw's attention efficiency of one phase and KV class to the points of that class among
 * pts (the others are skipped): launch, per-sequence and per-unit costs, the bandwidth fraction,
 * and the compute fraction (for decode held at hw's prefill fraction of the class, or the 16-bit
 * class's, when fitted: decode rows rarely reach the compute roof). Minimises the sum of
 * |log(predicted / measured)|; out gets the parameters and the residual quantiles of its points.
 * Returns 0 or FFN_EINVAL (fewer than 8 points of the class, a non-positive time). */
int ffn_attn_fit(const ffn_hw *hw, const ffn_attn_point *pts, size_t n, bool decode, ffn_attn_kv kv,
                 ffn_attn_eff *out);

/* Predicted time of a point by link's collectives: its own op's fit where it covers the group,
 * else the ring model (an NCCL all-reduce point by NCCL's fit alone, not the faster of NCCL and
 * the custom kernel that ffn_coll_time_s gives a serving step). Not reentrant (a static copy of
 * the link). */
double ffn_coll_point_predict(const ffn_link *l, const ffn_coll_point *p);

/* Fit latency and bus bandwidth of one collective on one group size to the matching points (graph
 * timings only: eager ones are skipped), minimising the sum of |log(predicted / measured)|.
 * Returns 0 or FFN_EINVAL (fewer than 4 points). */
int ffn_coll_fit_op(const ffn_coll_point *pts, size_t n, ffn_coll_op op, uint32_t gpus,
                    ffn_coll_fit *out);

/* p10 and p90 of measured/predicted and the median |predicted/measured - 1| of ratios r[n]
 * (sorted in place). */
void ffn_ratio_spread(double *r, size_t n, double *p10, double *p90, double *median_abs);

/* The median and the p90 (its nearest rank) of e[n], sorted in place; 0 and 0 when n is 0. */
void ffn_err_median_p90(double *e, size_t n, double *median, double *p90);

/* ffn_attn_fit, and as a check the same fit on four fifths of the class's points (every fifth
 * held back) scored on the held-back fifth: *held_median and *held_p90 of |pred/meas - 1|
 * there (NAN when that fit fails). Returns ffn_attn_fit's code, or FFN_ENOMEM. */
int ffn_attn_fit_checked(const ffn_hw *hw, const ffn_attn_point *pts, size_t n, bool decode,
                         ffn_attn_kv kv, ffn_attn_eff *out, double *held_median, double *held_p90);

/* The group sizes of collective op among the points, rising (at most FFN_COLL_MAX_SIZES); their
 * count. */
int ffn_coll_sizes(const ffn_coll_point *pts, size_t n, int op, uint32_t *gpus);

/* Fit every collective and group size the points hold into m, in place of m's fits of those
 * collectives (a size whose fit fails is left out), each also fitted on four fifths of its
 * graph-timed points and scored on the fifth held back: held[op][i] the median |pred/meas - 1|
 * of m->fit[op][i] there (NAN when not scored). Returns 0 or FFN_ENOMEM (m unchanged). */
int ffn_coll_fit_points(const ffn_coll_point *pts, size_t n, ffn_coll_model *m,
                        double held[FFN_COLL_COUNT][FFN_COLL_MAX_SIZES]);

#endif
