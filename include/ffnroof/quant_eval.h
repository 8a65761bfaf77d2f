/* What a quantized format costs in accuracy on one FFN layer, and what it buys in decode
 * speed on this host (`ffnroof quant`, docs/quantization.md).
 *
 * Accuracy (measure/quant/quant_eval.c): y_ref = FFN(x) in double from the fp32 weights and x, then
 * y for each format, computed in double from exactly the values the format multiplies by
 * (include/ffnroof/quant.h's reference functions: dequantized weights, dequantized per-token
 * activations), so the error is the format's and not the arithmetic's. The formats:
 *  - int8-tensor, int8-channel: int8 weights (one scale per matrix / per output column), fp32
 *    activations (W8A16 with fp32 activations);
 *  - int4-gG (G = 32, 64, 128; int4z-gG with zero points): int4 weights in groups of G along K,
 *    fp32 activations; G must divide d (gate/up) and f (down);
 *  - w8a8: int8-channel weights, x and the intermediate h quantized per token (dynamic,
 *    symmetric) before their GEMMs;
 *  - w8a8-smooth: w8a8 after SmoothQuant's migration (Xiao et al. 2023, eq. 4):
 *    m = max_t|x|^alpha / max_n|W|^(1-alpha) per input channel, one m over gate and up
 *    together (x is quantized once for both), and a second m for h -> down. The factors are
 *    taken from the evaluated tokens themselves (SmoothQuant calibrates them offline on sample
 *    data; this is the calibration that fits these tokens best).
 * Metrics over the whole output [T][d]: relative L2 ||y - y_ref|| / ||y_ref||, max |y - y_ref|,
 * and cosine similarity <y, y_ref> / (||y|| ||y_ref||).
 *
 * Synthetic inputs: x [T][d] standard Gaussian with a fraction of its channels (the same ones
 * for every token: LLM.int8()'s "systematic" outlier features, Dettmers et al. 2022) scaled by
 * an outlier factor; weights Gaussian or Student-t (heavy tails) with standard deviation
 * 1/sqrt(K). One seed gives the same inputs on every host.
 *
 * Speed (measure/quant/quant_speed.c): the best of N forward calls on T = 1 of the kernel this
 * build and CPU dispatch for the format (kernels.h: wdtype int8/int4, adtype fp32 or int8), against
 * the fp32 kernel on the same shape; "no kernel" when none exists. Conventions as in
 * include/ffnroof/kernels.h: weights [K][N] (x W), w_up NULL unless the activation is gated.
 * Everything returns 0 or a negative FFN_E* code; nothing prints. */
#ifndef FFNROOF_QUANT_EVAL_H
#define FFNROOF_QUANT_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/kernels.h"
#include "ffnroof/types.h"

typedef enum ffn_qeval_kind {
    FFN_QE_INT8_TENSOR = 0,
    FFN_QE_INT8_CHANNEL,
    FFN_QE_INT4_GROUP,
    FFN_QE_W8A8,
    FFN_QE_W8A8_SMOOTH,
    FFN_QE_COUNT
} ffn_qeval_kind;

typedef struct ffn_qeval_fmt {
    ffn_qeval_kind kind;
    unsigned group;  /* FFN_QE_INT4_GROUP: 32, 64 or 128 */
    bool zero_point; /* FFN_QE_INT4_GROUP: asymmetric groups */
} ffn_qeval_fmt;

/* "int8-tensor", "int8-channel", "int4-g64", "int4z-g64", "w8a8", "w8a8-smooth" into buf
 * (snprintf-like). */
int ffn_qeval_fmt_name(const ffn_qeval_fmt *fmt, char *buf, size_t n);
/* The inverse (case-insensitive); FFN_EINVAL for anything else. */
int ffn_qeval_fmt_parse(const char *s, ffn_qeval_fmt *out);
/* 0 when fmt applies to a layer of shape s (an int4 group must divide both d and f), else
 * FFN_EINVAL. */
int ffn_qeval_fmt_check(const ffn_qeval_fmt *fmt, const ffn_kshape *s);
/* The int4 group sizes (of 32, 64, 128) that divide both d and f, as a mask: bit 0 for 32,
 * bit 1 for 64, bit 2 for 128. */
unsigned ffn_qeval_groups_valid(size_t d, size_t f);
/* Storage bits per weight of the format, scales included (int8: 8 + 32/K per column; int4:
 * 4 + 32/G, + 8/G with zero points), as quant.h stores them (fp32 scales). */
double ffn_qeval_fmt_bits(const ffn_qeval_fmt *fmt, const ffn_kshape *s);

typedef struct ffn_qeval_metrics {
    double rel_l2;  /* ||y - ref|| / ||ref||: 0 when both are zero, +inf when only ref is */
    double max_abs; /* max |y - ref| */
    double cosine;  /* <y, ref> / (||y|| ||ref||): 1 when both are zero, 0 when one is */
} ffn_qeval_metrics;

/* The metrics of y against ref over n values. */
void ffn_qeval_compare(const double *y, const double *ref, size_t n, ffn_qeval_metrics *out);

typedef enum ffn_qeval_wdist { FFN_QW_GAUSS = 0, FFN_QW_STUDENT_T } ffn_qeval_wdist;

typedef struct ffn_qeval_synth {
    uint64_t seed;
    double outlier_frac;  /* fraction of x's channels that are outliers, [0, 1]; at least one
                             channel when > 0 (round(frac * d) otherwise) */
    double outlier_scale; /* their factor (>= 1; unused when outlier_frac is 0) */
    ffn_qeval_wdist wdist;
    double nu; /* Student-t degrees of freedom (> 0); above 2 the draws are scaled to unit
                  variance before the 1/sqrt(K) */
} ffn_qeval_synth;

/* Seeded weights for shape s: w_gate, w_up [d][f] (w_up untouched unless s->act is gated),
 * w_down [f][d]. The weights do not depend on the outlier settings. */
int ffn_qeval_synth_weights(const ffn_qeval_synth *syn, const ffn_kshape *s, float *w_gate,
                            float *w_up, float *w_down);
/* Seeded activations x [T][d]; *n_outliers (may be NULL) gets the number of outlier channels,
 * outlier_channels (may be NULL, else [d]) flags them. */
int ffn_qeval_synth_acts(const ffn_qeval_synth *syn, size_t T, size_t d, float *x,
                         size_t *n_outliers, bool *outlier_channels);

/* y_ref [T][d] = FFN(x) in double (biases of w added when s->bias). threads <= 0: all CPUs.
 * FFN_EINVAL for a bad shape or a non-finite input. */
int ffn_qeval_reference(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                        int threads, double *y_ref);

/* The SmoothQuant migration of the layer for these tokens: x_s = x / m (per channel), w_*_s
 * the weights with the factors folded in: gate and up rows times m, down rows times m_h, and
 * (gated activations) up columns divided by m_h, so that the smoothed layer computes the same
 * FFN and its h arrives divided by m_h. Where m_h cannot be folded into the first GEMM (an
 * ungated activation other than relu) h_div [f] gets m_h and the caller divides h by it;
 * otherwise h_div gets all ones. Outputs are caller buffers of the inputs' sizes. */
int ffn_qeval_smooth(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                     double alpha, int threads, float *x_s, float *w_gate_s, float *w_up_s,
                     float *w_down_s, float *h_div);

/* y [T][d] of format fmt (may be NULL when only the metrics are wanted) and its metrics
 * against y_ref. alpha: SmoothQuant's migration strength in [0, 1] (w8a8-smooth only).
 * FFN_EINVAL for a format that does not fit the shape or non-finite inputs, FFN_ENOMEM. */
int ffn_qeval_run(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                  const double *y_ref, const ffn_qeval_fmt *fmt, double alpha, int threads,
                  ffn_qeval_metrics *out, double *y);

/* ---- speed ------------------------------------------------------------------------------ */

typedef struct ffn_qspeed_opts {
    int threads;   /* kernel threads; <= 0: all CPUs */
    unsigned reps; /* timed calls after one warm-up (>= 1); the best is kept */
} ffn_qspeed_opts;

typedef struct ffn_qspeed {
    bool ran;            /* a kernel for the format runs here and was timed */
    char kernel[64];     /* its name, or "" */
    double time_s;       /* best forward on T = 1 */
    double speedup;      /* fp32 time / time_s */
    double check_rel_l2; /* the kernel's own output on the evaluated tokens vs y_ref (NAN
                            when it was not checked) */
} ffn_qspeed;

/* The kernel dispatch picks for fmt on this CPU (ffn_kernel_best_q, FFNROOF_ISA honoured):
 * int8 or int4 weights, activations fp32 (int8 for w8a8 and w8a8-smooth), or NULL when this
 * build and CPU have none. */
const ffn_kernel *ffn_qspeed_kernel(const ffn_qeval_fmt *fmt);

/* Time kernel k on shape s with weights w (packed by k) at T = 1: best of o->reps. When T > 0,
 * also run it on x [T][d] and compare with y_ref (check_rel_l2). FFN_EUNSUPPORTED when the
 * kernel refuses the shape (e.g. a group it does not pack), FFN_ENOMEM, or the kernel's own
 * error. */
int ffn_qspeed_time(const ffn_kernel *k, const ffn_kshape *s, const ffn_kweights *w,
                    const ffn_qspeed_opts *o, size_t T, const float *x, const double *y_ref,
                    double *time_s, double *check_rel_l2);

/* ---- the whole comparison, as `ffnroof quant` prints it ---------------------------------- */

#define FFN_QEVAL_MAX_ROWS 16

typedef struct ffn_qeval_row {
    ffn_qeval_fmt fmt;
    char name[24];
    double bits_per_weight;
    ffn_qeval_metrics m;
    ffn_qspeed speed; /* speed.ran false: "no kernel" (or not measured: report.speed false) */
} ffn_qeval_row;

typedef struct ffn_qeval_report {
    ffn_kshape shape;
    size_t tokens;
    /* inputs */
    bool checkpoint;       /* weights from a checkpoint (else synthetic) */
    char source[600];      /* the checkpoint's path and tensor prefix, or "synthetic" */
    char weight_dtype[8];  /* the checkpoint's dtype ("BF16"), "" for synthetic */
    ffn_qeval_synth synth; /* the activations' (and synthetic weights') settings */
    size_t outlier_channels;
    double alpha;
    /* speed */
    bool speed; /* the speed column was measured */
    ffn_qspeed_opts speed_opts;
    char fp32_kernel[64]; /* the fp32 baseline */
    double fp32_time_s;
    double fp32_check_rel_l2; /* the fp32 kernel's own error on the tokens (NAN: unchecked) */
    char host_cpu[128];       /* where it was measured ("" when unknown) */
    double load_avg[3];       /* at the start; negative when unknown */
    size_t n_rows;
    ffn_qeval_row rows[FFN_QEVAL_MAX_ROWS];
} ffn_qeval_report;

/* The report's speed column (r->speed_opts set, r->rows[] filled with their formats): the fp32
 * baseline kernel timed before and after the formats, each format's kernel at T = 1 (the
 * SmoothQuant-migrated layer, smoothing alpha, for w8a8-smooth; rows whose kernel refuses the
 * shape are left not run), its own error on the T tokens x against y_ref where it computes the
 * same function, rows that run one kernel on one shape sharing their best time, and every
 * speed-up against the baseline. 0, or the failing kernel's error with diag saying which. */
int ffn_qspeed_report(const ffn_kshape *s, const ffn_kweights *w, size_t T, const float *x,
                      const double *y_ref, double alpha, ffn_qeval_report *r, ffn_diag *diag);

#endif
