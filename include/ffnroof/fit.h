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
    /* int4 weights: the K group of one scale (0 = 128) and whether groups carry a zero point
     * (ffn_run.group_size, zero_point). A whole-layer point (f > 0) with int8 activations is
     * one of ffnroof's W8A8 kernels: x, h and y fp32 in memory (ffn_run.act_io_dtype). */
    unsigned group;
    bool zero_point;
    double time_s;
    /* The compute dtype, when the kernel's arithmetic differs from the simulator's rule (the
     * wider of weights and activations): a bf16-weight CPU kernel stores fp32 activations but
     * multiplies in bf16 (AMX, VDPBF16PS), so its FLOPs run at the bf16 peak. false (the zero
     * value) = the rule. */
    bool cdtype_set;
    ffn_dtype cdtype;
    /* An elementwise kernel instead of a GEMM (elem_bytes > 0): elem_bytes moved and
     * elem_flops computed by one kernel (SiLU-and-multiply, a copy, a read); m, n, k, f are
     * then the shape it was measured at and are not used for the cost. */
    double elem_bytes, elem_flops;
    /* The time was measured without the per-call harness overhead (a mean over a timed loop,
     * a published rate): harness_s is not added to its prediction. */
    bool no_harness;
    /* A published maximum over a sweep of shapes (MAMF's best shape), not a typical
     * measurement: ffn_eff_fit does not fit to it, but sets the wave utilisation of a dtype
     * class that no other point covers from it (FFN_FIT_WAVE_UTIL; docs/model.md). */
    bool best_of_sweep;
    /* Measured with its data warm (the GPU kit's --warm, '#@ weights hot'): what the kernel
     * re-reads call after call (a GEMM's weights; an elementwise kernel's inputs, hot_bytes
     * of them) is placed in the innermost on-chip level that holds it (ffn_level_placing) and
     * charged at that level's bandwidth, as `--weights hot` places a layer's weights. */
    bool hot;
    double hot_bytes;
    /* A GEMM timed as a serving engine's linear layer runs it (an op table's rows,
     * include/ffnroof/aic.h): a 16-bit input [m, k] quantised on the way in where the
     * activations are a quantised format, and a 16-bit output, as ffn_linear_ops counts it.
     * false: the operands as the dtype says (a GEMM benchmark's). */
    bool engine_linear;
    /* Timed eagerly, call after call without CUDA graphs: a call is never shorter than the
     * host's time to issue it, this floor (the lower tail of the kernel's own rows, set by the
     * table's reader; 0 = timed as a CUDA graph, no floor). A property of the harness, never
     * of the device: predictions leave it out. */
    double eager_floor_s;
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
    /* fit the wave utilisation util = gamma - alpha / waves (util_gamma[], util_alpha[]) for
     * every dtype class (ffn_fit_dtype_class) among the GEMM points, in place of their
     * compute_max; a class with fewer than 8 GEMM points takes the alpha/gamma ratio of the
     * class with the most */
    FFN_FIT_WAVE_UTIL = 1u << 7,
    /* fit memory_max_elem, the bandwidth fraction of elementwise kernels; needs elementwise
     * points */
    FFN_FIT_MEMORY_ELEM = 1u << 8,
    /* keep compute_max and memory_max as hw gives them (data that cannot tell them: only
     * compute-bound GEMMs under FFN_FIT_WAVE_UTIL, and elementwise kernels) */
    FFN_FIT_HOLD_MAX = 1u << 9,
    /* fit level_max (the fraction of an on-chip level's bandwidth the kernels reach) for each
     * level the warm points' data is placed in ('#@ weights hot'); needs such points */
    FFN_FIT_LEVEL = 1u << 10,
    /* fit launch_dt[] (a GEMM's fixed cost) for every compute dtype among the GEMM points in
     * place of launch_s; the dtypes without points keep hw's */
    FFN_FIT_LAUNCH_BY_DTYPE = 1u << 11,
    /* fit memory_max_gemv_dt[] for every weight dtype among the streaming (GEMV) points */
    FFN_FIT_GEMV_BY_DTYPE = 1u << 12,
    /* fit quant_row_s[] for every compute dtype among the engine-linear points whose
     * activations are quantised */
    FFN_FIT_QUANT_ROW = 1u << 14,
    /* fit block_s and kstep_s, the GEMM latency floor */
    FFN_FIT_FLOOR = 1u << 15,
    /* minimise the sum of |log(predicted/measured)| (the median's loss: a large table's
     * outlying kernels weigh as one row each) instead of its square */
    FFN_FIT_L1 = 1u << 16,
    /* fit block_s and fixup_s, the tile pipeline's cost per tile and per reduction of split or
     * streamed tiles (a spec with gemm_model: pipeline; FFN_EINVAL otherwise) */
    FFN_FIT_PIPE = 1u << 17,
};

/* The dtype class a dtype's wave utilisation is fitted in: fp16 and bf16 share one (the same
 * tensor-core pipes), fp8 and int8 one, every other dtype its own. Returns the class's
 * representative dtype (bf16, fp8, or d). */
int ffn_fit_dtype_class(ffn_dtype d);

/* The residual spread of hw's model over the points, as the spec records it: p10 and p90 of
 * measured/predicted (each end at least 6% from 1, the floor docs/model.md gives; best-of-sweep
 * points left out), the median
 * and worst |predicted/measured - 1|, the number of points; is_default false. Returns 0 or
 * FFN_EINVAL (no points). */
int ffn_fit_uncertainty(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, ffn_unc *out);

/* Whether the points can tell memory_max_gemv from memory_max: some are streaming GEMVs (m up
 * to ffn_gemv_rows of their compute dtype on hw; one row where hw's tiles say nothing) and
 * some are not (what FFN_FIT_MEMORY_GEMV needs). */
bool ffn_fit_points_split_gemv(const ffn_hw *hw, const ffn_fit_point *pts, size_t n);
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
/* Fit compute_max and memory_max (unless FFN_FIT_HOLD_MAX) and the parameters named in flags,
 * keeping hw's tiles and the rest. With best-of-sweep points (FFN_FIT_WAVE_UTIL only): the
 * others are fitted, then each dtype class only best-of-sweep points have gets
 * gamma = gamma_ref * (its best fraction of peak) / (the best fraction among the reference
 * class's points), alpha in the reference class's proportion to gamma; the reference class is
 * the one with the most GEMM points. Returns 0 or FFN_EINVAL (no points, non-positive times;
 * FFN_FIT_MEMORY_GEMV without both one-row and larger points, FFN_FIT_LEVEL without warm
 * points placed on chip). */
int ffn_eff_fit(const ffn_hw *hw, const ffn_fit_point *pts, size_t n, unsigned flags, ffn_eff *out);

#endif
