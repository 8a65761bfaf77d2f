/* The chart model of include/ffnroof/plot.h: roofline ceilings from hardware specs, kernel and
 * whole-FFN points from predictions, MoE bars, and the small geometry helpers (log ranges, a
 * device's highest and lowest roofs) that the readers and the writers share. */
#include "ffnroof/plot.h"

#include <math.h>
#include <string.h>

#include "plot_internal.h"

const char *ffn_roof_kind_name(ffn_roof_kind k)
{
    switch (k) {
    case FFN_ROOF_COMPUTE:
        return "compute";
    case FFN_ROOF_READ_ONLY:
        return "read-only";
    case FFN_ROOF_READ_WRITE:
        return "read-write";
    default:
        return "datasheet peak";
    }
}

/* ---- filling ---------------------------------------------------------------------------- */

int ffn_plot_device_add(ffn_plot_device *d, const char *name, ffn_roof_kind kind, double value)
{
    if (!(value > 0) || !isfinite(value)) return FFN_EINVAL;
    if (d->n_ceil >= FFN_PLOT_MAX_CEILINGS) return FFN_ENOSPACE;
    ffn_plot_ceiling *c = &d->ceil[d->n_ceil++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->kind = kind;
    c->value = value;
    return 0;
}

/* A spec or device written by `ffnroof calibrate` (its source line says so). */
bool ffn__plot_calibrated(const char *source)
{
    static const char measured[] = "measured by ffnroof calibrate";
    return strncmp(source, measured, sizeof measured - 1) == 0;
}

void ffn_plot_device_from_hw(const ffn_hw *hw, ffn_plot_device *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", hw->name);
    /* calibrate writes the read-only tail rate as main memory bandwidth (measure.h) */
    bool measured = ffn__plot_calibrated(hw->source);
    snprintf(out->origin, sizeof out->origin, "%s", measured ? "calibrated" : "datasheet");
    for (int dt = 0; dt < FFN_DT_COUNT; dt++) {
        double p = hw->peak_flops[dt];
        if (!(p > 0)) continue;
        /* TF32 and int4 usually repeat another dtype's peak: one ceiling is enough */
        bool dup = false;
        for (int i = 0; i < out->n_ceil; i++)
            if (out->ceil[i].kind == FFN_ROOF_COMPUTE && out->ceil[i].value == p) {
                size_t l = strlen(out->ceil[i].name);
                snprintf(out->ceil[i].name + l, sizeof out->ceil[i].name - l, "/%s",
                         ffn_dtype_name((ffn_dtype)dt));
                dup = true;
            }
        if (!dup) ffn_plot_device_add(out, ffn_dtype_name((ffn_dtype)dt), FFN_ROOF_COMPUTE, p);
    }
    ffn_roof_kind bw_kind = measured ? FFN_ROOF_READ_ONLY : FFN_ROOF_DATASHEET;
    for (int i = 0; i < hw->n_levels; i++)
        if (hw->levels[i].bandwidth_bps > 0)
            ffn_plot_device_add(out, hw->levels[i].name, bw_kind, hw->levels[i].bandwidth_bps);
    const char *mem = hw->kind == FFN_HW_CPU ? "DRAM" : "HBM";
    ffn_plot_device_add(out, measured ? "memory" : mem, bw_kind, hw->mem_bandwidth_bps);
}

double ffn_plot_device_main_bw(const ffn_plot_device *d)
{
    /* the slowest read-only or datasheet roof: the bandwidth a hw spec (and so the simulator)
     * uses; read-write roofs only when there is nothing else */
    double b = 0, rw = 0;
    for (int i = 0; i < d->n_ceil; i++) {
        const ffn_plot_ceiling *c = &d->ceil[i];
        if (c->kind == FFN_ROOF_READ_WRITE) {
            if (rw == 0 || c->value < rw) rw = c->value;
        } else if (c->kind != FFN_ROOF_COMPUTE && (b == 0 || c->value < b)) {
            b = c->value;
        }
    }
    return b > 0 ? b : rw;
}

double ffn__plot_device_max(const ffn_plot_device *d, bool bw)
{
    double m = 0;
    for (int i = 0; i < d->n_ceil; i++)
        if ((d->ceil[i].kind != FFN_ROOF_COMPUTE) == bw && d->ceil[i].value > m)
            m = d->ceil[i].value;
    return m;
}

double ffn__plot_device_min_peak(const ffn_plot_device *d)
{
    double m = 0;
    for (int i = 0; i < d->n_ceil; i++)
        if (d->ceil[i].kind == FFN_ROOF_COMPUTE && (m == 0 || d->ceil[i].value < m))
            m = d->ceil[i].value;
    return m;
}

void ffn_plot_point_from_result(const ffn_result *r, int device, ffn_plot_point *out)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    snprintf(out->label, sizeof out->label, "%s T=%llu %s", ffn_phase_name(r->run.phase),
             (unsigned long long)r->tokens, ffn_dtype_name(r->compute_dtype));
    out->intensity = r->intensity;
    out->measured_flops = NAN;
    out->predicted_flops = r->predicted_s > 0 ? r->flops / r->predicted_s : NAN;
}

double ffn_plot_layer_latency_s(const ffn_model *m, const ffn_result *r)
{
    double div = (double)m->layers * (double)(r->steps ? r->steps : 1);
    return div > 0 ? r->predicted_s / div : NAN;
}

void ffn_plot_moe_bar_from_result(const ffn_result *r, const char *label, ffn_moe_bar *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->label, sizeof out->label, "%s", label);
    const ffn_moe_detail *d = &r->moe_detail;
    out->router_s = d->router_s;
    out->dispatch_s = d->dispatch_s;
    out->expert_s = d->expert_s;
    out->shared_s = d->shared_s;
    out->combine_s = d->combine_s;
    out->alltoall_s = d->alltoall_s;
}

void ffn_plot_case_label(const ffn_plot_case *c, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s T=%llu %s", strcmp(c->kind, "moe") ? "" : "moe ",
             ffn_phase_name(c->phase), (unsigned long long)c->tokens, c->dtype);
}

void ffn__plot_case_point(const ffn_plot_case *bc, int dev, ffn_plot_point *p)
{
    p->device = dev;
    ffn_plot_case_label(bc, p->label, sizeof p->label);
    p->intensity = bc->intensity;
    p->measured_flops = bc->achieved_flops;
    p->predicted_flops = bc->predicted_s > 0 ? bc->flops / bc->predicted_s : NAN;
}

void ffn__plot_series_add(ffn_latency_chart *c, int dev, ffn_phase ph, bool measured,
                          const char *label, double tokens, double seconds)
{
    ffn_latency_series *s = NULL;
    for (int i = 0; i < c->n_series; i++)
        if (c->s[i].device == dev && c->s[i].phase == ph && c->s[i].measured == measured &&
            !strcmp(c->s[i].label, label))
            s = &c->s[i];
    if (!s) {
        if (c->n_series >= FFN_PLOT_MAX_SERIES) return;
        s = &c->s[c->n_series++];
        memset(s, 0, sizeof *s);
        s->device = dev;
        s->phase = ph;
        s->measured = measured;
        snprintf(s->label, sizeof s->label, "%s", label);
    }
    if (s->n < FFN_PLOT_MAX_SERIES_POINTS) {
        s->tokens[s->n] = tokens;
        s->seconds[s->n] = seconds;
        s->n++;
    }
}

void ffn_plot_log_range(double lo, double hi, double *min_out, double *max_out)
{
    if (!(lo > 0) || !isfinite(lo)) lo = 1;
    if (!(hi > lo) || !isfinite(hi)) hi = lo * 10;
    /* a hair inside so that values exactly on a decade stay on it */
    *min_out = pow(10, floor(log10(lo) + 1e-9));
    *max_out = pow(10, ceil(log10(hi) - 1e-9));
    if (*max_out <= *min_out) *max_out = *min_out * 10;
}
