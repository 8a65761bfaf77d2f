/* Which MoE rows of an op table the engine's collector routed through a group-limited top-k
 * (include/ffnroof/aic.h, ffn_aic_route_groups; docs/model.md "MoE layers as fused kernels",
 * "The collector's draws"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/aic.h"
#include "ffnroof/model.h"
#include "ffnroof/model_load.h"
#include "ffnroof/scenario.h"

#define MAX_MODELS 256

int ffn_aic_route_groups(ffn_aic_table *t, const char *models_dir, size_t *marked, ffn_diag *diag)
{
    if (marked) *marked = 0;
    if (!t || !models_dir) return FFN_EINVAL;
    /* vLLM's and SGLang's collectors build the module with the model's grouped top-k
     * (aiconfigurator collector/vllm/collect_moe.py: FusedMoE(use_grouped_topk=...,
     * num_expert_group=..., topk_group=...) with a zero correction bias); TensorRT-LLM's
     * balanced rows halve with each doubling of EP, as plain routing gives */
    if (t->op != FFN_AIC_MOE || !t->n_moe ||
        (t->engine != FFN_ENGINE_VLLM && t->engine != FFN_ENGINE_SGLANG))
        return 0;
    char(*names)[64] = malloc(MAX_MODELS * sizeof *names);
    ffn_model *m = malloc(sizeof *m);
    if (!names || !m) {
        free(names);
        free(m);
        return ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
    }
    const size_t n = ffn_data_names(models_dir, names, MAX_MODELS);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.yaml", models_dir, names[i]);
        if ((rc = ffn_model_load(path, m, diag))) break;
        const ffn_moe_cfg *c = &m->moe;
        if (c->n_experts && c->n_group > 1 && c->topk_group < c->n_group &&
            c->n_experts % c->n_group == 0)
            for (size_t r = 0; r < t->n_moe; r++) {
                ffn_aic_moe *row = &t->moe[r];
                if (row->hidden != m->hidden || row->inter != c->expert_intermediate ||
                    row->topk != c->top_k || row->experts != c->n_experts || row->groups)
                    continue;
                row->groups = (uint32_t)c->n_group;
                row->topk_groups = (uint32_t)c->topk_group;
                if (marked) (*marked)++;
            }
    }
    free(names);
    free(m);
    return rc;
}
