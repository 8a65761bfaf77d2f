/* Fitting the realistic-efficiency model of a device (ffn_eff in hw.h) to measured times of
 * GEMMs (datasheet-less devices, published GEMM sweeps) or of whole FFN kernel calls (ffnroof
 * calibrate on a CPU). Pure: no I/O. docs/model.md records the A100 fit. */
#ifndef FFNROOF_FIT_H
#define FFNROOF_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/hw.h"
#include "ffnroof/sim.h"

/* One measurement: a GEMM [m, k] x [k, n] (f == 0), or a fused dense FFN layer on m tokens
 * with d = k and intermediate f (f > 0; n unused). */
typedef struct ffn_fit_point {
    uint64_t m, n, k, f;
    ffn_act act;
    ffn_dtype wdtype, adtype;
    double time_s;
    /* The compute dtype, when the kernel's arithmetic differs from the simulator's rule (the
     * wider of weights and activations): a bf16-weight CPU kernel stores fp32 activations but
     * multiplies in bf16 (AMX, VDPBF16PS), so its FLOPs run at the bf16 peak. false (the zero
     * value) = the rule. */
    bool cdtype_set;
    ffn_dtype cdtype;
} ffn_fit_point;

typedef struct ffn_fit_summary {
    size_t n;
    double median_abs; /* median |predicted/measured - 1| */
    double mean_abs;
    double max_abs;
} ffn_fit_summary;

enum {
    FFN_FIT_LAUNCH = 1u << 0,       /* fit launch_s (else keep hw's) */
    FFN_FIT_HARNESS = 1u << 4,      /* fit harness_s: the measuring harness's per-call cost */
    FFN_FIT_OVERLAP = 1u << 1,      /* fit overlap_p (else keep hw's) */
    FFN_FIT_COMPUTE_RAMP = 1u << 2, /* fit compute_half_flops */
    FFN_FIT_MEMORY_RAMP = 1u << 3,  /* fit memory_half_bytes */
    /* fit compute_max_dt[] for every compute dtype among the points (one parameter each);
     * compute_max is then set to the fp32 value when fp32 is among them, else left as hw's */
    FFN_FIT_COMPUTE_BY_DTYPE = 1u << 5,
    /* fit memory_max_gemv (the bandwidth fraction of one-row GEMMs) apart from memory_max;
     * needs points with one token among the others */
    FFN_FIT_MEMORY_GEMV = 1u << 6,
};

/* Whether the points can tell memory_max_gemv from memory_max: some have one row (m == 1)
 * and some more (what FFN_FIT_MEMORY_GEMV needs). */
bool ffn_fit_points_split_gemv(const ffn_fit_point *pts, size_t n);
/* The compute dtype of a point: cdtype when cdtype_set, else the simulator's rule. */
ffn_dtype ffn_fit_point_cdtype(const ffn_hw *hw, const ffn_fit_point *p);
/* Cost the op of a point as the simulator does (f > 0: a fused dense FFN layer on m tokens
 * with d = k, no bias; f == 0: one GEMM), with the point's compute dtype, into out (summed).
 * Returns 0 or FFN_EINVAL. The time the harness measured is out->predicted_s plus harness_s
 * per op. */
int ffn_fit_point_layer(const ffn_hw *hw, const ffn_fit_point *p, ffn_layer_cost *out);

/* The model's prediction for one point on hw, as the harness measured it: the device time
 * plus hw->eff.harness_s. */
double ffn_fit_point_predict(const ffn_hw *hw, const ffn_fit_point *p);
/* Signed relative error of each point (err[n], caller memory) and their summary. */
void ffn_fit_errors(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, double *err,
                    ffn_fit_summary *s);
/* Fit compute_max and memory_max (always) and the parameters named in flags, keeping hw's
 * tiles and the rest. Returns 0 or FFN_EINVAL (no points, non-positive times;
 * FFN_FIT_MEMORY_GEMV without both one-row and larger points). */
int ffn_eff_fit(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, unsigned flags,
                ffn_eff *out);

#endif
