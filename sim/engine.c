/* Serving-engine kernel profiles applied to a spec's efficiency (include/ffnroof/engine.h). */
#include "ffnroof/engine.h"

#include <math.h>
#include <string.h>

static double cap1(double x)
{
    return x > 1.0 ? 1.0 : x;
}

/* A range carried `away` steps from what it was fitted on (another device, another format):
 * p10 x 0.9 and p90 x 1.1 a step (docs/model.md, "Engines" and section 10). */
static void widen(double p10, double p90, int away, double *lo, double *hi)
{
    if (lo) *lo = p10 * pow(0.9, away);
    if (hi) *hi = p90 * pow(1.1, away);
}

void ffn_hw_apply_engine(ffn_hw *hw, const ffn_engine_profile *p)
{
    if (!hw || !p || hw->kind != FFN_HW_GPU) return;
    /* every GPU runs its MoE layers as the engine's fused module (sim/moe.c), priced by the
     * families where they apply (ffn_moe_kernel_on), else by the fused model's defaults */
    const int nm = p->n_moe < FFN_ENGINE_MAX_MOE ? p->n_moe : FFN_ENGINE_MAX_MOE;
    memcpy(hw->moe_kernels, p->moe, (size_t)nm * sizeof p->moe[0]);
    hw->n_moe_kernels = nm;
    hw->moe_engine = p->engine;
    /* the GEMM factors describe NVIDIA's kernels: another vendor's GPUs run their own */
    if (p->baseline || strcmp(hw->vendor, "NVIDIA")) return;
    hw->engine = p->engine;
    ffn_eff *e = &hw->eff;
    for (int d = 0; d < FFN_DT_COUNT; d++) {
        const ffn_engine_dt *x = &p->dt[d];
        if (!x->set) continue;
        if (e->util_gamma[d] > 0) {
            e->util_gamma[d] = cap1(e->util_gamma[d] * x->compute);
            e->util_alpha[d] *= x->compute;
        } else {
            const double base = e->compute_max_dt[d] > 0 ? e->compute_max_dt[d]
                                : e->compute_max > 0     ? e->compute_max
                                                         : 1.0;
            e->compute_max_dt[d] = cap1(base * x->compute);
        }
        const double mg = e->memory_max_gemv_dt[d] > 0 ? e->memory_max_gemv_dt[d]
                          : e->memory_max_gemv > 0     ? e->memory_max_gemv
                          : e->memory_max > 0          ? e->memory_max
                                                       : 1.0;
        e->memory_max_gemv_dt[d] = cap1(mg * x->memory);
        if (x->launch_s > 0) e->launch_dt[d] = x->launch_s;
        if (x->quant_row_s > 0) e->quant_row_s[d] = x->quant_row_s;
        /* the spec's kernel rules are its baseline engine's dispatch: another engine's kernels
         * pick their own tiles, by its own rules where the profile has them, else taken as the
         * best of the device's (docs/model.md, "Engines") */
        e->rules_dt[d] = x->rules;
        if (x->p10 > 0 && x->p90 > x->p10 && !hw->unc.is_default) {
            const bool own = p->device[0] && !strcmp(hw->name, p->device);
            widen(x->p10, x->p90, !own, &hw->unc.dt_p10[d], &hw->unc.dt_p90[d]);
        }
    }
}

ffn_engine_sched ffn_engine_sched_for(const ffn_engine_sched *s, const char *device)
{
    ffn_engine_sched r = *s;
    for (int i = 0; device && i < s->n_by_device; i++)
        if (!strcmp(s->by_device[i].device, device)) {
            if (s->by_device[i].max_batched_tokens)
                r.max_batched_tokens = s->by_device[i].max_batched_tokens;
            if (s->by_device[i].max_seqs) r.max_seqs = s->by_device[i].max_seqs;
        }
    return r;
}

bool ffn_moe_kernel_of_vendor(const ffn_engine_moe *m, const char *vendor)
{
    return !strcmp(m->vendor[0] ? m->vendor : "NVIDIA", vendor);
}

/* The family of the formats among the entries of `vendor` (NULL: any) and architecture `arch`
 * (NULL: any), by ffn_engine_moe_for's rules. */
static const ffn_engine_moe *find_in(const ffn_engine_moe *list, int n, const char *kernel,
                                     ffn_dtype wdtype, ffn_dtype adtype, const char *vendor,
                                     const char *arch)
{
    if (!list) return NULL;
    const ffn_engine_moe *first = NULL, *named = NULL;
#define SKIP(m)                                                                                    \
    ((vendor && !ffn_moe_kernel_of_vendor((m), vendor)) || (arch && strcmp((m)->arch, arch)))
    for (int i = 0; i < n; i++) {
        const ffn_engine_moe *m = &list[i];
        if (SKIP(m)) continue;
        const bool name = kernel && m->kernels[0] && strstr(kernel, m->kernels);
        if (m->optional && !name) continue; /* run only when asked: by its name alone */
        if (m->dtype != wdtype) {
            if (name && !named) named = m;
            continue;
        }
        if (name) return m;
        if (!first) first = m;
    }
    if (first || named) return first ? first : named;
    /* the engine's kernel of the activations' class: fp8 (else fp8-block) for narrow ones,
     * bf16 (else fp16) for 16-bit ones */
    const bool narrow = ffn_dtype_bits(ffn_dtype_unit(adtype)) < 16;
    const ffn_dtype cls[2] = {narrow ? FFN_DT_FP8 : FFN_DT_BF16,
                              narrow ? FFN_DT_FP8_BLOCK : FFN_DT_FP16};
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < n; i++)
            if (list[i].dtype == cls[c] && !list[i].optional && !SKIP(&list[i])) return &list[i];
#undef SKIP
    return NULL;
}

const ffn_engine_moe *ffn_engine_moe_for(const ffn_engine_profile *p, const char *kernel,
                                         ffn_dtype wdtype, ffn_dtype adtype)
{
    return p ? find_in(p->moe, p->n_moe, kernel, wdtype, adtype, NULL, NULL) : NULL;
}

const ffn_engine_moe *ffn_engine_moe_on(const ffn_engine_profile *p, const ffn_hw *hw,
                                        const char *kernel, ffn_dtype wdtype, ffn_dtype adtype,
                                        double *p10, double *p90)
{
    return ffn_moe_kernel_on(p ? p->moe : NULL, p ? p->n_moe : 0, hw, kernel, wdtype, adtype, p10,
                             p90);
}

const ffn_engine_moe *ffn_moe_kernel_on(const ffn_engine_moe *list, int n, const ffn_hw *hw,
                                        const char *kernel, ffn_dtype wdtype, ffn_dtype adtype,
                                        double *p10, double *p90)
{
    /* the device's vendor's entries, those of its own architecture first */
    const ffn_engine_moe *m = NULL;
    if (hw && hw->kind == FFN_HW_GPU) {
        if (hw->family[0]) m = find_in(list, n, kernel, wdtype, adtype, hw->vendor, hw->family);
        if (!m) m = find_in(list, n, kernel, wdtype, adtype, hw->vendor, NULL);
    }
    if (!m) { /* the model's defaults on kernels they were not fitted to */
        double lo = 0, hi = 0;
        if (hw) ffn_hw_unc_range_dt(hw, wdtype, &lo, &hi);
        if (p10) *p10 = 0.8 * lo;
        if (p90) *p90 = 1.25 * hi;
        return NULL;
    }
    /* one step for another device, another for another architecture than the one it was
     * fitted on, another for another format */
    const int away = (strcmp(hw->name, m->device) != 0) +
                     (m->arch[0] && strcmp(m->arch, hw->family) != 0) + (m->dtype != wdtype);
    widen(m->p10, m->p90, away, p10, p90);
    return m;
}

bool ffn_moe_fused_applies(const ffn_hw *hw, const ffn_moe_opts *mo, ffn_dtype w, ffn_dtype a,
                           const ffn_engine_moe **fam, double *p10, double *p90)
{
    *fam = NULL;
    if (hw->kind != FFN_HW_GPU || hw->moe_engine == FFN_ENGINE_NONE || mo->generic) return false;
    *fam = ffn_moe_kernel_on(hw->moe_kernels, hw->n_moe_kernels, hw, mo->kernel, w, a, p10, p90);
    return true;
}
