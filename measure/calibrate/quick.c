/* What `ffnroof report --quick` measures beyond calibrate: its scaled layers as bench cases,
 * and the calibration runs it times again to say how far the host drifted meanwhile
 * (include/ffnroof/calibrate.h). */
#include <stdio.h>
#include <string.h>

#include "ffnroof/calibrate.h"

size_t ffn_bench_quick_cases(ffn_bench_case *cs, size_t cap)
{
    static const struct {
        ffn_bench_kind kind;
        ffn_phase phase;
        size_t tokens;
        ffn_dtype dt;
    } plan[] = {
        {FFN_BENCH_DENSE, FFN_PHASE_DECODE, 1, FFN_DT_FP32},
        {FFN_BENCH_DENSE, FFN_PHASE_DECODE, 16, FFN_DT_FP32},
        {FFN_BENCH_DENSE, FFN_PHASE_PREFILL, 256, FFN_DT_FP32},
        {FFN_BENCH_DENSE, FFN_PHASE_DECODE, 1, FFN_DT_BF16},
        {FFN_BENCH_DENSE, FFN_PHASE_PREFILL, 256, FFN_DT_BF16},
        {FFN_BENCH_MOE, FFN_PHASE_DECODE, 1, FFN_DT_FP32},
        {FFN_BENCH_MOE, FFN_PHASE_DECODE, 16, FFN_DT_FP32},
        {FFN_BENCH_MOE, FFN_PHASE_PREFILL, 256, FFN_DT_FP32},
    };
    const ffn_kernel *kb = NULL;
    const bool have_bf16 = ffn_kernel_best(FFN_DT_BF16, &kb, NULL) == 0;
    size_t n = 0;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0] && n < cap; i++) {
        if (plan[i].dt == FFN_DT_BF16 && !have_bf16) continue;
        ffn_bench_case *c = &cs[n++];
        memset(c, 0, sizeof *c);
        c->kind = plan[i].kind;
        c->phase = plan[i].phase;
        c->tokens = plan[i].tokens;
        c->batch = plan[i].phase == FFN_PHASE_DECODE ? plan[i].tokens : 1;
        c->seq = plan[i].phase == FFN_PHASE_PREFILL ? plan[i].tokens : 0;
        const bool moe = plan[i].kind == FFN_BENCH_MOE;
        c->shape.d = moe ? FFN_QUICK_MOE_D : FFN_QUICK_DENSE_D;
        c->shape.f = moe ? FFN_QUICK_MOE_F : FFN_QUICK_DENSE_F;
        c->shape.act = FFN_ACT_SWIGLU;
        c->n_experts = moe ? 8 : 0;
        c->top_k = moe ? 2 : 0;
        c->wdtype = plan[i].dt;
    }
    return n;
}

size_t ffn_bench_rerun(const ffn_kcal_result *k, const volatile sig_atomic_t *stop,
                       ffn_rerun out[2])
{
    int pick[2] = {-1, -1}; /* decode, prefill */
    for (size_t i = 0; i < k->n_runs; i++) {
        const ffn_bench_result *r = &k->runs[i].r;
        if (!k->runs[i].fit || r->c.kind != FFN_BENCH_DENSE || r->c.wdtype != FFN_DT_FP32 ||
            r->c.adtype || !(r->time.median > 0))
            continue;
        const int slot = r->c.phase == FFN_PHASE_DECODE ? 0 : 1;
        const ffn_bench_result *p = pick[slot] >= 0 ? &k->runs[pick[slot]].r : NULL;
        if (!p || r->flops > p->flops) pick[slot] = (int)i;
    }
    ffn_bench_case cs[2];
    size_t n = 0, idx[2];
    for (int j = 0; j < 2; j++)
        if (pick[j] >= 0) {
            idx[n] = (size_t)pick[j];
            cs[n++] = k->runs[pick[j]].r.c;
        }
    if (n == 0) return 0;
    ffn_bench_result res[2];
    ffn_bench_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.case_time_s = 1.0;
    bo.seed = 1;
    bo.threads = k->runs[idx[0]].r.threads;
    bo.stop = stop;
    size_t done = 0;
    ffn_diag d;
    ffn_diag_clear(&d);
    (void)ffn_bench_run(NULL, cs, n, &bo, NULL, NULL, res, &done, &d);
    for (size_t j = 0; j < done; j++) {
        const ffn_bench_result *r = &k->runs[idx[j]].r;
        snprintf(out[j].what, sizeof out[j].what, "fp32 %s T = %zu, d = %zu,",
                 ffn_phase_name(r->c.phase), r->c.tokens, r->c.shape.d);
        out[j].before_s = r->time.median;
        out[j].after_s = res[j].time.median;
    }
    return done;
}
