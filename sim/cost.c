/* Op-level costs: FLOPs and bytes of GEMMs and elementwise ops, the ideal roofline, the
 * realistic efficiency model (size ramps, wave quantization, launch overhead, imperfect
 * overlap) and ring collectives. Every equation is in docs/model.md with its source. */
#include "ffnroof/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ffn_run_default(ffn_run *r)
{
    memset(r, 0, sizeof *r);
    r->phase = FFN_PHASE_PREFILL;
    r->batch = 1;
    r->seq = FFN_DEFAULT_PROMPT;
    r->wdtype = FFN_DT_BF16;
    r->adtype = FFN_DT_BF16;
    r->group_size = 128;
    r->act_io_dtype = FFN_DT_BF16;
    r->tp = 1;
    r->ep = 1;
    r->fused = true;
    r->moe.routing_alpha = -1.0; /* the model's */
}

bool ffn_dtype_quant_act(ffn_dtype dt)
{
    return dt == FFN_DT_INT8 || dt == FFN_DT_FP8 || ffn_dtype_block_scaled(dt);
}

double ffn_run_act_bytes(const ffn_run *run)
{
    return ffn_dtype_bytes(ffn_dtype_quant_act(run->adtype) ? run->act_io_dtype : run->adtype, 0);
}

double ffn_act_flops(ffn_act a)
{
    switch (a) {
    case FFN_ACT_RELU:
        return 1;
    case FFN_ACT_GELU:
    case FFN_ACT_GELU_TANH:
        return 8;
    case FFN_ACT_SILU:
        return 4;
    case FFN_ACT_SWIGLU:
        return 4 + 1;
    case FFN_ACT_GEGLU:
        return 8 + 1;
    case FFN_ACT_REGLU:
        return 1 + 1;
    default:
        return 0;
    }
}

/* Order of "width" for picking the compute dtype: the 4-bit formats < fp8 = fp8-block = int8 <
 * fp16 = bf16 < tf32 < fp32. A wider dtype can always emulate a narrower one (weights are
 * up-converted on the fly). */
static int width(ffn_dtype d)
{
    switch (d) {
    case FFN_DT_INT4:
    case FFN_DT_NVFP4:
    case FFN_DT_MXFP4:
        return 0;
    case FFN_DT_INT8:
    case FFN_DT_FP8:
    case FFN_DT_FP8_BLOCK:
        return 1;
    case FFN_DT_BF16:
    case FFN_DT_FP16:
        return 2;
    case FFN_DT_TF32:
        return 3;
    default:
        return 4;
    }
}

static bool is_integer(ffn_dtype d)
{
    return d == FFN_DT_INT4 || d == FFN_DT_INT8;
}

/* The dtype two narrow formats of one width multiply in: int8 for fp8 against int8 (no common
 * unit), fp8-block for fp8 against fp8-block, else the activations' format (the kernel is the
 * activations': W4A4 on fp4 units). */
static ffn_dtype same_width(ffn_dtype w, ffn_dtype a)
{
    if (w == a) return a;
    if (width(a) == 1 && (is_integer(w) || is_integer(a))) return FFN_DT_INT8;
    if (width(a) == 1) return FFN_DT_FP8_BLOCK;
    return a;
}

ffn_dtype ffn_compute_dtype(const ffn_hw *hw, ffn_dtype w, ffn_dtype a)
{
    ffn_dtype c = width(w) > width(a) ? w : width(a) > width(w) ? a : same_width(w, a);
    if (hw->peak_flops[c] > 0) return c;
    /* Fall back to the next wider dtype the device has units for. Integer math may climb to
     * int8 and then to floating point; floating-point math never runs on integer units, and a
     * narrow float format without units (fp8 on an A100, fp4 on an H100) is dequantised to 16
     * bits, as the engines' W8A16 / W4A16 kernels run it (docs/model.md, "GPU dtypes"). */
    static const ffn_dtype ladder[] = {FFN_DT_INT4, FFN_DT_INT8, FFN_DT_BF16,
                                       FFN_DT_FP16, FFN_DT_TF32, FFN_DT_FP32};
    const bool integer = is_integer(c);
    for (size_t i = 0; i < sizeof ladder / sizeof ladder[0]; i++) {
        if (is_integer(ladder[i]) && !integer) continue;
        if (width(ladder[i]) >= width(c) && hw->peak_flops[ladder[i]] > 0) return ladder[i];
    }
    return FFN_DT_FP32;
}

bool ffn_weights_dequantised(const ffn_hw *hw, ffn_dtype w, ffn_dtype a)
{
    if (width(w) >= 2) return false;
    const ffn_dtype c = ffn_compute_dtype(hw, w, a);
    return width(c) > width(w) && !is_integer(c);
}

bool ffn_acts_quantised(const ffn_hw *hw, ffn_dtype w, ffn_dtype a)
{
    if (!ffn_dtype_quant_act(a)) return false;
    const ffn_dtype c = ffn_compute_dtype(hw, w, a);
    return width(c) <= width(a);
}

/* The peak an op of compute dtype cdt runs at: its own, else fp32's, else (a spec that
 * publishes no fp32 rate: TPUs, Cerebras) the widest floating-point peak the device has, so
 * that the fp32 vector work of routing and elementwise ops is priced at a rate the device has
 * rather than at 1 FLOP/s. */
double ffn_peak_flops(const ffn_hw *hw, ffn_dtype cdt)
{
    double p = (unsigned)cdt < FFN_DT_COUNT ? hw->peak_flops[cdt] : 0.0;
    static const ffn_dtype widest_first[] = {FFN_DT_FP32, FFN_DT_TF32, FFN_DT_BF16, FFN_DT_FP16,
                                             FFN_DT_FP8};
    for (size_t i = 0; !(p > 0) && i < sizeof widest_first / sizeof widest_first[0]; i++)
        p = hw->peak_flops[widest_first[i]];
    return p > 0 ? p : 1.0;
}

double ffn_roofline_s(const ffn_hw *hw, double flops, double bytes, ffn_dtype cdt)
{
    double tc = flops / ffn_peak_flops(hw, cdt);
    double tm = bytes / (hw->mem_bandwidth_bps > 0 ? hw->mem_bandwidth_bps : 1.0);
    return tc > tm ? tc : tm;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : 0;
}

/* The wave model: the useful share of the work paid for on the best tile, and the waves that
 * tile runs in (*waves_out, 1 when there are no tiles). */
static double wave_model(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                         ffn_dtype cdt, uint64_t *waves_out, uint64_t *tile_waves_out)
{
    *waves_out = 1;
    if (tile_waves_out) *tile_waves_out = 1;
    /* The tiles of the kernels for this dtype, else the device's (min 16 rows, no GEMV). */
    const ffn_tileset *ts = (unsigned)cdt < FFN_DT_COUNT && hw->eff.tiles_dt[cdt].n_tiles > 0
                                ? &hw->eff.tiles_dt[cdt]
                                : NULL;
    const int n_tiles = ts ? ts->n_tiles : hw->eff.n_tiles;
    const uint32_t(*tl)[2] = ts ? ts->tiles : hw->eff.tiles;
    const uint64_t min_rows = ts && ts->min_rows ? ts->min_rows : 16;
    const uint64_t gemv_rows = ts ? ts->gemv_rows : 0;
    if (n_tiles <= 0 || hw->compute_units == 0 || m == 0 || n == 0) return 1.0;
    if (instances == 0) instances = 1;
    if (k == 0) k = 1;
    const uint64_t units = hw->compute_units;
    double best = 0.0;
    for (int i = 0; i < n_tiles; i++) {
        uint64_t tm = tl[i][0], tn = tl[i][1];
        if (!tm || !tn) continue;
        /* Skinny GEMMs (decode) get kernels whose row tile shrinks to the rows there are,
         * down to the smallest matrix-instruction shape (16 rows unless the dtype's tiles say
         * otherwise), rather than padding to tm; up to gemv_rows rows, a streaming GEMV that
         * pads nothing. */
        if (m <= gemv_rows) {
            tm = m;
        } else if (m < tm) {
            uint64_t r = min_rows;
            while (r < m)
                r *= 2;
            if (r < tm) tm = r;
        }
        /* Tiles of all instances share the machine (grouped GEMM); a padded tile costs as much
         * as a full one, and the last wave runs partly empty. */
        uint64_t tiles = ceil_div(m, tm) * ceil_div(n, tn) * instances;
        /* Too few tiles to fill the units: the library splits the reduction (split-K), each
         * split at least 256 deep. */
        uint64_t splits = 1;
        if (tiles < units) {
            uint64_t room = units / tiles, depth = k / 256;
            splits = room < depth ? room : depth;
            if (splits < 1) splits = 1;
        }
        uint64_t waves = ceil_div(tiles * splits, units);
        double useful = (double)m * (double)n * (double)k * (double)instances;
        double paid =
            (double)waves * (double)units * (double)tm * (double)tn * (double)ceil_div(k, splits);
        double e = useful / paid;
        if (e > best) {
            best = e;
            *waves_out = waves ? waves : 1;
            /* the waves of whole-K tiles: what the latency floor pays for */
            if (tile_waves_out) *tile_waves_out = tiles > units ? ceil_div(tiles, units) : 1;
        }
    }
    return best > 0 ? (best < 1.0 ? best : 1.0) : 1.0;
}

double ffn_wave_efficiency(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                           ffn_dtype cdt)
{
    uint64_t w;
    return wave_model(hw, m, n, k, instances, cdt, &w, NULL);
}

uint64_t ffn_wave_count(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                        ffn_dtype cdt)
{
    uint64_t w;
    wave_model(hw, m, n, k, instances, cdt, &w, NULL);
    return w;
}

double ffn_wave_util(const ffn_eff *e, ffn_dtype cdt, double waves)
{
    if ((unsigned)cdt >= FFN_DT_COUNT || !(e->util_gamma[cdt] > 0)) return NAN;
    double w = waves >= 1 ? waves : 1;
    double u = e->util_gamma[cdt] - e->util_alpha[cdt] / w;
    /* a utilisation is a fraction: floor it where a fitted alpha would drive it to zero */
    if (u < 0.02) u = 0.02;
    return u < 1.0 ? u : 1.0;
}

bool ffn_hw_unc_range(const ffn_hw *hw, double *p10, double *p90)
{
    bool def = !hw || hw->unc.is_default || !(hw->unc.p10 > 0) || !(hw->unc.p90 >= hw->unc.p10);
    *p10 = def ? FFN_UNC_DEFAULT_P10 : hw->unc.p10;
    *p90 = def ? FFN_UNC_DEFAULT_P90 : hw->unc.p90;
    return def;
}

bool ffn_hw_unc_range_dt(const ffn_hw *hw, ffn_dtype dt, double *p10, double *p90)
{
    const bool def = ffn_hw_unc_range(hw, p10, p90);
    if (def || (unsigned)dt >= FFN_DT_COUNT) return def;
    ffn_dtype d = dt;
    if (!(hw->unc.dt_p10[d] > 0) && (d == FFN_DT_FP16 || d == FFN_DT_BF16))
        d = d == FFN_DT_FP16 ? FFN_DT_BF16 : FFN_DT_FP16;
    if (hw->unc.dt_p10[d] > 0 && hw->unc.dt_p90[d] >= hw->unc.dt_p10[d]) {
        *p10 = hw->unc.dt_p10[d];
        *p90 = hw->unc.dt_p90[d];
    }
    return false;
}

/* (a^p + b^p)^(1/p): p -> infinity is max (perfect overlap), p = 1 is the sum (none).
 * Computed as max * (1 + r^p)^(1/p) with r = min/max; when r^p is below double precision the
 * answer is max, which skips the transcendental calls for most ops. */
static double pnorm(double a, double b, double p)
{
    double mx = a > b ? a : b, mn = a > b ? b : a;
    if (p <= 0 || mx <= 0) return mx > 0 ? mx : 0;
    if (mn <= 0) return mx;
    double lr = p * log(mn / mx);
    if (lr < -37.0) return mx; /* r^p < 1e-16 */
    return mx * exp(log1p(exp(lr)) / p);
}

static double ramp(double size, double half)
{
    return half > 0 ? size / (size + half) : 1.0;
}

static double cmax_of(const ffn_eff *e, ffn_dtype dt)
{
    return e->compute_max_dt[dt] > 0 ? e->compute_max_dt[dt]
           : e->compute_max > 0      ? e->compute_max
                                     : 1.0;
}

double ffn_large_gemm_util(const ffn_eff *e, ffn_dtype cdt)
{
    return (unsigned)cdt < FFN_DT_COUNT && e->util_gamma[cdt] > 0 ? e->util_gamma[cdt]
                                                                  : cmax_of(e, cdt);
}

/* The tile pipeline (docs/model.md, "The tile pipeline"): the time the units take to run a
 * GEMM's output tiles, each tile block_s plus one pipeline step per tk of K, a step computing
 * tm x tn x tk at the dtype's utilisation (ffn_large_gemm_util) of the unit's share of the dtype's
 * peak. With kernel rules for the dtype, the first rule that holds the shape (else the last) gives
 * the tile or the wave search that picks it, run persistently without splitting K; otherwise (or
 * for a `best` rule) the best of the device's tiles, a step 128 bytes of K deep, whole (waves of
 * tiles), split (each split at least 256 deep: the partial tiles written and read in fp32 at the
 * bandwidth, plus fixup_s) or streamed (stream-K: the tiles' steps dealt evenly over the units,
 * fixup_s where they do not divide). */
static double pipeline_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                         ffn_dtype cdt)
{
    const ffn_eff *e = &hw->eff;
    const uint64_t units = hw->compute_units;
    const double unit_peak = ffn_peak_flops(hw, cdt) / (double)units * ffn_large_gemm_util(e, cdt);
    if (!(unit_peak > 0) || m == 0 || n == 0) return 0;
    const uint64_t inst = instances ? instances : 1;
    if (k == 0) k = 1;
    const ffn_kernel_rules *rl = (unsigned)cdt < FFN_DT_COUNT ? &e->rules_dt[cdt] : NULL;
    const ffn_kernel_rule *r = NULL;
    for (int i = 0; rl && i < rl->n && !r; i++)
        if ((!rl->r[i].m_max || m <= rl->r[i].m_max) && (!rl->r[i].n_max || n <= rl->r[i].n_max))
            r = &rl->r[i];
    if (rl && rl->n > 0 && !r) r = &rl->r[rl->n - 1];
    if (r && r->kind != FFN_RULE_BEST && r->kind != FFN_RULE_WHOLE) {
        uint64_t tm = r->tm, tn = r->tn;
        if (r->kind == FFN_RULE_WAVES) {
            /* DeepGEMM's pick: the fewest waves, then the fullest last wave, then the smallest
             * tile */
            uint64_t bw = 0, bl = 0, ba = 0;
            tm = tn = 0;
            for (int a = 0; a < r->n_rows; a++)
                for (uint64_t c = r->col_step; c && c <= r->col_max; c += r->col_step) {
                    const uint64_t t = ceil_div(m, r->rows[a]) * ceil_div(n, c) * inst;
                    const uint64_t w = ceil_div(t, units), last = t % units ? t % units : units;
                    const uint64_t area = (uint64_t)r->rows[a] * c;
                    if (!tm || w < bw || (w == bw && (last > bl || (last == bl && area < ba)))) {
                        tm = r->rows[a], tn = c, bw = w, bl = last, ba = area;
                    }
                }
            if (!tm) return 0;
        }
        const uint64_t tiles = ceil_div(m, tm) * ceil_div(n, tn) * inst;
        const double step = 2.0 * (double)tm * (double)tn * r->tk / unit_peak;
        /* persistent: a unit's next tile's loads overlap its last tile's epilogue */
        return e->block_s + (double)ceil_div(tiles, units) * (double)ceil_div(k, r->tk) * step;
    }
    const bool whole = r && r->kind == FFN_RULE_WHOLE;
    const unsigned bits = ffn_dtype_bits(cdt) ? ffn_dtype_bits(cdt) : 16;
    const uint64_t kd = 1024 / bits ? 1024 / bits : 1;
    const uint64_t steps = ceil_div(k, kd);
    static const unsigned splits[] = {2, 3, 4, 6, 8, 12, 16};
    /* fp32 partial tiles, written and read back */
    const double out_bytes = (double)m * (double)n * (double)inst * 8.0;
    const double bw = hw->mem_bandwidth_bps * (e->memory_max > 0 ? e->memory_max : 1.0);
    /* the dtype's own tiles where the spec has them (a GPU's fp32 SIMT kernels) */
    const ffn_tileset *ts =
        (unsigned)cdt < FFN_DT_COUNT && e->tiles_dt[cdt].n_tiles > 0 ? &e->tiles_dt[cdt] : NULL;
    const int n_tiles = ts ? ts->n_tiles : e->n_tiles;
    const uint32_t(*tl)[2] = ts ? ts->tiles : e->tiles;
    double best = INFINITY;
    for (int i = 0; i < n_tiles; i++) {
        const uint32_t tm = tl[i][0], tn = tl[i][1];
        if (!tm || !tn) continue;
        const uint64_t tiles = ceil_div(m, tm) * ceil_div(n, tn) * inst;
        const double step = 2.0 * tm * tn * (double)kd / unit_peak;
        /* no configuration of this tile beats its padded work spread evenly over the units, and
         * a split adds its fixup to that */
        const double even = (double)tiles * (double)steps * step / (double)units;
        if (even >= best) continue;
        double t = (double)ceil_div(tiles, units) * (e->block_s + (double)steps * step);
        if (whole) { /* K whole: a block per output tile, no split, no stream */
            if (t < best) best = t;
            continue;
        }
        for (size_t j = 0; j < sizeof splits / sizeof *splits && t > even + e->fixup_s; j++) {
            const unsigned sp = splits[j];
            if (k / sp < 256) break;
            /* its waves each pay a tile cost on top of the evenly spread work: more splits,
             * more waves */
            const double waves = (double)ceil_div(tiles * sp, units);
            if (even + e->fixup_s + waves * e->block_s >= t) break;
            const double tsp = waves * (e->block_s + (double)ceil_div(steps, sp) * step) +
                               e->fixup_s + (bw > 0 ? sp * out_bytes / bw : 0);
            if (tsp < t) t = tsp;
        }
        const uint64_t it = tiles * steps;
        const double sk =
            2.0 * e->block_s + (double)ceil_div(it, units) * step + (it % units ? e->fixup_s : 0);
        if (sk < t) t = sk;
        if (t < best) best = t;
    }
    return isfinite(best) ? best : 0;
}

double ffn_pipeline_compute_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k,
                              uint64_t instances, ffn_dtype cdt)
{
    if (!hw || !hw->eff.pipeline || hw->compute_units == 0) return 0;
    return pipeline_s(hw, m, n, k, instances, cdt);
}

/* The GEMM time for a memory time tm computed by the caller (memory or on-chip levels).
 * Quantisation work (vec_ops) runs on the fp32 vector units beside the dot products, which on
 * a CPU share their ports: its time adds to the FLOPs'. It is scaled by the fp32 c_max (the
 * vector units' own fraction: the dot-product dtype's, 0.34 of VDPBF16PS's peak on Zen 4,
 * charged a W4A16 decode's nibble lookups 2.6x what fp32 vector code takes) but not by the
 * wave and size ramp, which describe how the dot products fill the matrix units: a
 * dequantisation touches each weight once whatever M is, so a GEMV's 16-row tile padding (wave
 * 1/16 at M = 1 on a GPU) must not multiply it. */
static double gemm_time_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                          double flops, double vec_ops, ffn_dtype cdt, double tm, bool *compute)
{
    const ffn_eff *e = &hw->eff;
    const double launch =
        (unsigned)cdt < FFN_DT_COUNT && e->launch_dt[cdt] > 0 ? e->launch_dt[cdt] : e->launch_s;
    if (e->pipeline && hw->compute_units > 0) {
        double tc = pipeline_s(hw, m, n, k, instances, cdt);
        if (!(tc > 0) && flops > 0)
            tc = flops / (ffn_peak_flops(hw, cdt) * ffn_large_gemm_util(e, cdt));
        if (vec_ops > 0)
            tc += vec_ops / (ffn_peak_flops(hw, FFN_DT_FP32) * cmax_of(e, FFN_DT_FP32));
        if (compute) *compute = tc >= tm;
        return launch + pnorm(tc, tm, e->overlap_p);
    }
    double cmax = cmax_of(e, cdt);
    uint64_t waves = 1, tile_waves = 1;
    double wave = wave_model(hw, m, n, k, instances, cdt, &waves, &tile_waves);
    /* NeuSight-style utilisation that grows with the number of waves, where the spec has it */
    double util = ffn_wave_util(e, cdt, (double)waves);
    if (isfinite(util)) cmax = util;
    const double r = ramp(flops, e->compute_half_flops);
    double tc = flops / (ffn_peak_flops(hw, cdt) * cmax * wave * r);
    if (vec_ops > 0) tc += vec_ops / (ffn_peak_flops(hw, FFN_DT_FP32) * cmax_of(e, FFN_DT_FP32));
    double t = pnorm(tc, tm, e->overlap_p);
    if (compute) *compute = tc >= tm;
    /* the latency floor: few tiles, each a long pipeline over K, cannot reach the bandwidth; a
     * pipeline step moves 128 bytes of a row's K (64 bf16 elements, 128 fp8, 256 fp4) */
    if (e->block_s > 0 || e->kstep_s > 0) {
        const unsigned bits = ffn_dtype_bits(cdt) ? ffn_dtype_bits(cdt) : 16;
        const uint64_t steps = ceil_div((k ? k : 1) * bits, 1024);
        const double fl = (double)tile_waves * (e->block_s + (double)steps * e->kstep_s);
        if (fl > t) t = fl;
    }
    return launch + t;
}

uint64_t ffn_gemv_rows(const ffn_hw *hw, ffn_dtype cdt)
{
    const ffn_tileset *ts = (unsigned)cdt < FFN_DT_COUNT ? &hw->eff.tiles_dt[cdt] : NULL;
    return ts && ts->n_tiles > 0 && ts->gemv_rows > 1 ? ts->gemv_rows : 1;
}

/* wdt: the format of the weights the op streams (its decode stream's own fraction, where
 * fitted: memory_max_gemv_dt), else FFN_DT_COUNT */
static double gemm_mmax(const ffn_hw *hw, uint64_t m, ffn_dtype cdt, ffn_dtype wdt)
{
    const ffn_eff *e = &hw->eff;
    const bool gemv = m <= ffn_gemv_rows(hw, cdt);
    if (gemv && (unsigned)wdt < FFN_DT_COUNT && e->memory_max_gemv_dt[wdt] > 0)
        return e->memory_max_gemv_dt[wdt];
    return gemv && e->memory_max_gemv > 0 ? e->memory_max_gemv
           : e->memory_max > 0            ? e->memory_max
                                          : 1.0;
}

double ffn_predict_gemm_s(const ffn_hw *hw, uint64_t m, uint64_t n, uint64_t k, uint64_t instances,
                          double flops, double bytes, ffn_dtype cdt)
{
    if (flops <= 0 && bytes <= 0) return 0;
    double mmax = gemm_mmax(hw, m, cdt, FFN_DT_COUNT);
    double tm = bytes / (hw->mem_bandwidth_bps * mmax * ramp(bytes, hw->eff.memory_half_bytes));
    return gemm_time_s(hw, m, n, k, instances, flops, 0, cdt, tm, NULL);
}

/* An elementwise kernel of `flops` whose bytes take tm to move. */
static double elem_time_s(const ffn_hw *hw, double flops, double tm)
{
    const ffn_eff *e = &hw->eff;
    double cmax = e->compute_max > 0 ? e->compute_max : 1.0;
    double tc = flops / (ffn_peak_flops(hw, FFN_DT_FP32) * cmax);
    return e->launch_s + pnorm(tc, tm, e->overlap_p);
}

double ffn_predict_elem_s(const ffn_hw *hw, double flops, double bytes)
{
    if (flops <= 0 && bytes <= 0) return 0;
    const ffn_eff *e = &hw->eff;
    double mmax = e->memory_max_elem > 0 ? e->memory_max_elem
                  : e->memory_max > 0    ? e->memory_max
                                         : 1.0;
    /* No memory_half ramp: an elementwise kernel's fixed cost is its launch. The ramp is a
     * GEMM's pipeline fill; shared, the H200 kit's fit set it to zero, because
     * the read, copy and SiLU-and-multiply kernels pay none beyond the launch. */
    return elem_time_s(hw, flops, bytes / (hw->mem_bandwidth_bps * mmax));
}

static void set_name(ffn_op *op, const char *name)
{
    size_t n = strlen(name);
    if (n >= sizeof op->name) n = sizeof op->name - 1;
    memcpy(op->name, name, n);
    op->name[n] = '\0';
}

/* ---- on-chip memory (docs/model.md, "On-chip memory") ------------------------------------ */

const char *ffn_weights_name(ffn_weights w)
{
    return w == FFN_WEIGHTS_HOT ? "hot" : w == FFN_WEIGHTS_AUTO ? "auto" : "cold";
}

int ffn_weights_parse(const char *s, ffn_weights *out)
{
    if (!s) return FFN_EINVAL;
    if (!strcmp(s, "cold"))
        *out = FFN_WEIGHTS_COLD;
    else if (!strcmp(s, "hot"))
        *out = FFN_WEIGHTS_HOT;
    else if (!strcmp(s, "auto"))
        *out = FFN_WEIGHTS_AUTO;
    else
        return FFN_EINVAL;
    return 0;
}

static int n_levels(const ffn_hw *hw)
{
    return hw->n_levels < 0                   ? 0
           : hw->n_levels > FFN_HW_MAX_LEVELS ? FFN_HW_MAX_LEVELS
                                              : hw->n_levels;
}

double ffn_level_usable_bytes(const ffn_hw *hw, int i)
{
    if (i < 0 || i >= n_levels(hw)) return 0;
    return hw->levels[i].capacity_bytes * FFN_ONCHIP_USABLE;
}

int ffn_level_holding(const ffn_hw *hw, double bytes)
{
    if (!(bytes > 0)) return 0;
    for (int i = 0; i < n_levels(hw); i++)
        if (!hw->levels[i].scratchpad && ffn_level_usable_bytes(hw, i) >= bytes) return i + 1;
    return 0;
}

int ffn_level_placing(const ffn_hw *hw, double bytes, double *frac)
{
    *frac = 0;
    if (!(bytes > 0)) return 0;
    int lv = ffn_level_holding(hw, bytes);
    if (lv) {
        *frac = 1.0;
        return lv;
    }
    /* the largest level that keeps part of a larger working set across calls (the outermost
     * of equals); one that keeps nothing of it (keeps_part: false, LRU-like) is passed over */
    int best = -1;
    for (int i = 0; i < n_levels(hw); i++)
        if (!hw->levels[i].scratchpad && !hw->levels[i].no_partial &&
            (best < 0 || ffn_level_usable_bytes(hw, i) >= ffn_level_usable_bytes(hw, best)))
            best = i;
    if (best < 0 || !(ffn_level_usable_bytes(hw, best) > 0)) return 0;
    *frac = ffn_level_usable_bytes(hw, best) / bytes;
    return best + 1;
}

/* The tight form of the Hong-Kung red-blue pebble bound for C += A*B with a fast memory of S
 * elements (Hong & Kung 1981; constant from Smith, Lowery, Langou, van de Geijn 2019,
 * arXiv:1702.02017): Q >= 2 M N K / sqrt(S) elements moved into fast memory. With P private
 * fast memories of S each, every processor's share obeys it, so the total is the same form
 * with S the per-slice capacity (Irony, Toledo, Tiskin 2004). */
double ffn_gemm_traffic_bytes(double m, double n, double k, double instances, double elem_bytes,
                              double s_bytes)
{
    if (!(s_bytes > 0) || !(elem_bytes > 0)) return 0;
    double S = s_bytes / elem_bytes;
    return instances * 2.0 * m * n * k * elem_bytes / sqrt(S);
}

uint64_t ffn_fused_token_tile(const ffn_hw *hw, double g, uint64_t f, double abytes)
{
    double per = g * (double)f * abytes;
    if (n_levels(hw) == 0 || !(per > 0)) return UINT64_MAX;
    return (uint64_t)floor(ffn_level_usable_bytes(hw, 0) / per);
}

const char *ffn_source_name(const ffn_hw *hw, int src)
{
    if (src >= 0 && src < n_levels(hw)) return hw->levels[src].name;
    return "memory";
}

int ffn_op_main_source(const ffn_op *op)
{
    /* the source nearest the compute that holds the weights, else memory */
    if (op->weights_level > 0) return op->weights_level - 1;
    return FFN_SRC_MEMORY;
}

/* Bytes each source serves and the ideal and efficiency-model memory times (docs/model.md,
 * "On-chip memory"). Weights resident in level r are read from r; activations (and spills)
 * from memory. With the traffic bound, the bytes into level j are at least the tiled-GEMM
 * bound for level j's slice, and the level beyond j serves them. Levels without a
 * bandwidth count for capacity only. Without residency and without the bound this is the
 * memory term of before, bit for bit. */
static void serve(ffn_op *op, const ffn_hw *hw, double mmax, double half, double *tm_ideal,
                  double *tm_eff)
{
    memset(op->served_bytes, 0, sizeof op->served_bytes);
    const int nl = n_levels(hw);
    const double B = op->bytes, W = op->weight_bytes, A = B - W > 0 ? B - W : 0;
    const double bw = hw->mem_bandwidth_bps > 0 ? hw->mem_bandwidth_bps : 1.0;
    int r = op->weights_level > 0 && op->weights_level <= nl ? op->weights_level : 0;
    const bool bound = op->traffic_bound && op->kind == FFN_OP_GEMM && nl > 0;
    if (!r && !bound) {
        op->served_bytes[FFN_SRC_MEMORY] = B;
        for (int j = 0; j < nl; j++)
            op->served_bytes[j] = B;
        *tm_ideal = B / bw;
        *tm_eff = B / (bw * mmax * ramp(B, half));
        return;
    }
    /* Element size of the tile bound: the mean of the weight and activation element sizes. */
    double I = (double)op->instances, M = (double)op->m, N = (double)op->n, K = (double)op->k;
    double wb = I * N * K > 0 ? W / (I * N * K) : 0;
    double ab = I * M * (K + N) > 0 ? A / (I * M * (K + N)) : 0;
    double e = (wb + ab) / 2.0;
    double q[FFN_HW_MAX_LEVELS];
    for (int j = 0; j < nl; j++) {
        double sl = hw->levels[j].slices > 1 ? (double)hw->levels[j].slices : 1.0;
        q[j] = bound ? ffn_gemm_traffic_bytes(M, N, K, I, e, hw->levels[j].capacity_bytes / sl) : 0;
    }
    /* a resident level with no bandwidth holds the weights but cannot be charged: memory */
    const bool r_nobw = r && !(hw->levels[r - 1].bandwidth_bps > 0);
    /* Wm: the weights level r does not hold (a working set larger than it), read from memory
     * in turn with the part it holds: one stream, served at two rates one after the other */
    const double h = op->weights_frac > 0 && op->weights_frac < 1 ? op->weights_frac : 1.0;
    const double Wm = r && !r_nobw ? (1.0 - h) * W : 0;
    double mem = r && !r_nobw ? A + Wm : B;
    if (!r && nl > 0 && q[nl - 1] > mem) mem = q[nl - 1];
    op->served_bytes[FFN_SRC_MEMORY] = mem;
    double ti = mem / bw, te = mem / (bw * mmax * ramp(mem, half));
    for (int j = 0; j < nl; j++) {
        double in = j > 0 ? q[j - 1] : 0;
        double sv = r && j > r - 1 ? A + Wm : (in > B ? in : B);
        op->served_bytes[j] = sv;
        double lb = hw->levels[j].bandwidth_bps;
        if (!(lb > 0) || !(sv > 0)) continue;
        /* the fraction of the resident level's bandwidth kernels reach on what it holds,
         * where measured (level_max); the traffic through a level at the op's own */
        const double lm = j == r - 1 && hw->eff.level_max[j] > 0 ? hw->eff.level_max[j] : mmax;
        /* level r itself serves what it holds and passes the misses on at memory's rate */
        const double hit = j == r - 1 ? sv - Wm : sv;
        double t_i = hit / lb + (j == r - 1 ? Wm / bw : 0);
        if (t_i > ti) ti = t_i;
        double t = hit / (lb * lm * ramp(hit, half)) +
                   (j == r - 1 && Wm > 0 ? Wm / (bw * mmax * ramp(Wm, half)) : 0);
        if (t > te) te = t;
    }
    *tm_ideal = ti;
    *tm_eff = te;
}

void ffn_op_recost(ffn_op *op, const ffn_hw *hw)
{
    const bool gemm = op->kind == FFN_OP_GEMM;
    const ffn_eff *e = &hw->eff;
    const ffn_dtype dq = op->dequant_weights > 0 ? op->wdtype : FFN_DT_COUNT;
    /* the weights whose decode stream has its own fraction: float weights, and integer ones
     * dequantised beside float activations (a W8A8 GEMM multiplies int8 codes: not the W8
     * stream's fraction) */
    const bool int_w = op->wdtype == FFN_DT_INT8 || op->wdtype == FFN_DT_INT4;
    const ffn_dtype sdt = int_w ? dq : op->wdtype;
    double mmax = gemm                     ? gemm_mmax(hw, op->m, op->compute_dtype, sdt)
                  : e->memory_max_elem > 0 ? e->memory_max_elem
                  : e->memory_max > 0      ? e->memory_max
                                           : 1.0;
    double tm_ideal, tm_eff;
    /* the size ramp is a GEMM's pipeline fill (ffn_predict_elem_s) */
    serve(op, hw, mmax, gemm ? e->memory_half_bytes : 0.0, &tm_ideal, &tm_eff);
    op->memory_s = tm_ideal;
    double tc = op->flops / ffn_peak_flops(hw, op->compute_dtype);
    if (op->vec_ops > 0) tc += op->vec_ops / ffn_peak_flops(hw, FFN_DT_FP32);
    op->roofline_s = tc > tm_ideal ? tc : tm_ideal;
    /* The roofline counts 1 op a weight; the prediction charges a GEMM that packs its weights
     * what the kernels were measured at. A decode stream dequantises in registers beside the
     * weight stream: its measured fraction of the bandwidth (gemm_mmax, fitted on one row)
     * covers the dequantisation and the first row's dot products, so only the rows beyond the
     * first add compute. Charged as a GEMM's, the first row made the Zen 4 W4A16 decode
     * 1.6x slower than measured even at the whole bandwidth. */
    double vec = op->vec_ops, flops = op->flops;
    const double dqc = (unsigned)dq < FFN_DT_COUNT ? e->dequant_cost[dq] : 0;
    const uint64_t gemv_rows = ffn_gemv_rows(hw, op->compute_dtype);
    const bool stream = op->m <= gemv_rows;
    if (dqc > 0 && !stream) vec += op->dequant_weights * (dqc - 1.0);
    /* So does the float weights' decode stream, where the spec's tiles say its kernels stream
     * (a calibrated CPU spec: gemv_rows > 1; GPU specs have none): memory_max_gemv is fitted
     * on one-row streams, their FMAs (one per weight read) included. Charged beside it, they
     * made a one-thread bf16 decode on Zen 4 (p = 1) 26-30% slower than measured
     * while the fp32 one, whose stream the fraction was fitted to, was on time: the same FLOPs
     * weigh twice as much against half the bytes. A float dtype's own decode fraction
     * (memory_max_gemv_dt, fitted on its one-row stream) covers them the same way. */
    const bool own = (unsigned)sdt < FFN_DT_COUNT && e->memory_max_gemv_dt[sdt] > 0;
    const bool q_stream = (unsigned)dq < FFN_DT_COUNT && own;
    const bool f_stream = dq == FFN_DT_COUNT && (gemv_rows > 1 || own);
    if (gemm && stream && (q_stream || f_stream)) {
        if (q_stream) vec = 0;
        flops *= (double)(op->m - 1) / (double)op->m;
    }
    bool eff_compute = false;
    if (op->flops <= 0 && op->bytes <= 0)
        op->predicted_s = 0;
    else if (gemm)
        op->predicted_s = gemm_time_s(hw, op->m, op->n, op->k, op->instances, flops, vec,
                                      op->compute_dtype, tm_eff, &eff_compute) +
                          ((unsigned)op->compute_dtype < FFN_DT_COUNT
                               ? op->quant_rows * e->quant_row_s[op->compute_dtype]
                               : 0.0);
    else if (op->weights_level > 0) /* data re-read across calls resident on chip (a fit point) */
        op->predicted_s = elem_time_s(hw, op->flops, tm_eff);
    else
        op->predicted_s = ffn_predict_elem_s(hw, op->flops, op->bytes);
    op->bound = tc >= tm_ideal ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY;
    op->predicted_bound = gemm ? (eff_compute ? FFN_BOUND_COMPUTE : FFN_BOUND_MEMORY) : op->bound;
}

void ffn_op_gemm_counts(ffn_op *op, const char *name, uint64_t m, uint64_t n, uint64_t k,
                        uint64_t instances, double wbytes, double abytes, ffn_dtype cdt,
                        double epilogue_flops_per_out)
{
    memset(op, 0, sizeof *op);
    set_name(op, name);
    op->kind = FFN_OP_GEMM;
    op->compute_dtype = cdt;
    op->wdtype = FFN_DT_COUNT; /* not known here: the caller sets it (proj_counts) */
    op->m = m;
    op->n = n;
    op->k = k;
    op->instances = instances ? instances : 1;
    double I = (double)op->instances, M = (double)m, N = (double)n, K = (double)k;
    /* 2*M*N*K per GEMM (one multiply and one add per MAC). */
    op->flops = I * (2.0 * M * N * K + epilogue_flops_per_out * M * N);
    op->weight_bytes = I * N * K * wbytes;
    op->bytes = op->weight_bytes + I * (M * K + M * N) * abytes;
}

void ffn_op_gemm(ffn_op *op, const ffn_hw *hw, const char *name, uint64_t m, uint64_t n, uint64_t k,
                 uint64_t instances, double wbytes, double abytes, ffn_dtype cdt,
                 double epilogue_flops_per_out)
{
    ffn_op_gemm_counts(op, name, m, n, k, instances, wbytes, abytes, cdt, epilogue_flops_per_out);
    ffn_op_recost(op, hw);
}

void ffn_op_elem_counts(ffn_op *op, const char *name, ffn_op_kind kind, double elems, double flops,
                        double bytes)
{
    memset(op, 0, sizeof *op);
    set_name(op, name);
    op->kind = kind;
    op->compute_dtype = FFN_DT_FP32;
    op->m = (uint64_t)elems;
    op->instances = 1;
    op->flops = flops;
    op->bytes = bytes;
}

void ffn_op_elem(ffn_op *op, const ffn_hw *hw, const char *name, ffn_op_kind kind, double elems,
                 double flops, double bytes)
{
    ffn_op_elem_counts(op, name, kind, elems, flops, bytes);
    ffn_op_recost(op, hw);
}
