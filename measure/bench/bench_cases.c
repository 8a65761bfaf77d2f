/* The bench cases of a model (include/ffnroof/bench.h, ffn_bench_model_cases): its FFN layer,
 * or its routed MoE layer, once per phase and batch. */
#include <stdio.h>
#include <string.h>

#include "ffnroof/bench.h"
#include "ffnroof/model.h"

int ffn_bench_model_cases(const ffn_model *m, const ffn_bench_case *tmpl, unsigned phases,
                          const uint64_t *batches, size_t n_batches, uint64_t seq,
                          ffn_bench_case *out, size_t cap, size_t *n, char *notes, size_t nn,
                          ffn_diag *diag)
{
    if (!m || !tmpl || !out || !n || (!batches && n_batches)) return FFN_EINVAL;
    *n = 0;
    const bool moe = m->moe.n_experts > 0 && ffn_model_moe_layers(m) > 0;
    if (notes && nn) {
        notes[0] = '\0';
        if (moe && m->moe.n_shared)
            snprintf(notes, nn, "%s has shared experts: the bench runs the routed experts only",
                     m->name);
        if (moe && ffn_model_moe_layers(m) < m->layers) {
            const size_t l = strlen(notes);
            snprintf(notes + l, nn - l,
                     "%s%s also has dense FFN layers: the bench runs its MoE layer", l ? "; " : "",
                     m->name);
        }
    }
    for (int ph = 0; ph < 2; ph++) {
        if (!(phases & (1u << ph))) continue;
        for (size_t b = 0; b < n_batches && *n < cap; b++) {
            const uint64_t T = ph ? batches[b] : batches[b] * seq;
            if (T > FFN_BENCH_MAX_TOKENS)
                return ffn_diag_set(diag, FFN_ERANGE, NULL, 0, 0,
                                    "batch x seq = %llu tokens is too many (at most %u)",
                                    (unsigned long long)T, FFN_BENCH_MAX_TOKENS);
            ffn_bench_case *k = &out[(*n)++];
            *k = *tmpl;
            k->kind = moe ? FFN_BENCH_MOE : FFN_BENCH_DENSE;
            k->phase = ph ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
            k->batch = batches[b];
            k->seq = ph ? 0 : seq;
            k->tokens = T;
            k->shape.d = m->hidden;
            k->shape.f = moe ? m->moe.expert_intermediate : m->intermediate;
            k->shape.act = m->act;
            k->shape.bias = m->mlp_bias;
            k->n_experts = moe ? m->moe.n_experts : 0;
            k->top_k = moe ? m->moe.top_k : 0;
        }
    }
    return 0;
}

void ffn_bench_shape_case(const ffn_bench_case *tmpl, size_t tokens, size_t d, size_t f,
                          ffn_act act, unsigned phases, size_t n_experts, size_t top_k,
                          ffn_bench_case *out)
{
    *out = *tmpl;
    out->kind = n_experts ? FFN_BENCH_MOE : FFN_BENCH_DENSE;
    out->tokens = tokens;
    out->shape.d = d;
    out->shape.f = f;
    out->shape.act = act;
    out->phase = phases == 2 || (phases == 0 && tokens == 1) ? FFN_PHASE_DECODE : FFN_PHASE_PREFILL;
    out->batch = out->phase == FFN_PHASE_DECODE ? tokens : 1;
    out->seq = out->phase == FFN_PHASE_DECODE ? 0 : tokens;
    out->n_experts = n_experts;
    out->top_k = n_experts ? top_k : 0;
}
