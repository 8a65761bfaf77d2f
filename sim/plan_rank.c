/* The ranking of (model, device) plans `ffnroof plan` shows (include/ffnroof/plan.h): each
 * model's pairs together, feasible first by the objective, then by the smallest miss. */
#include "ffnroof/plan.h"

#include <math.h>
#include <string.h>

static const ffn_plan_layout *shown(const ffn_plan_pair *p)
{
    return p->show >= 0 ? &p->plan->layouts[p->show] : NULL;
}

/* Feasible first (by the objective), then by the smallest miss; pairs of one model together, the
 * models in the order they were given. */
static int cmp_pairs(const ffn_plan_pair *x, const ffn_plan_pair *y, ffn_objective obj)
{
    if (x->model_index != y->model_index) return x->model_index < y->model_index ? -1 : 1;
    const ffn_plan_layout *lx = shown(x), *ly = shown(y);
    bool fx = lx && lx->feasible, fy = ly && ly->feasible;
    if (fx != fy) return fx ? -1 : 1;
    if (fx) {
        if (ffn_plan_better(lx, ly, obj)) return -1;
        if (ffn_plan_better(ly, lx, obj)) return 1;
        return 0;
    }
    double ax = lx ? lx->miss : INFINITY, ay = ly ? ly->miss : INFINITY;
    return ax < ay ? -1 : ax > ay ? 1 : 0;
}

void ffn_plan_pairs_rank(ffn_plan_pair *pairs, size_t np, ffn_objective obj)
{
    /* a stable insertion sort: a few dozen pairs, and equal ones keep their order */
    for (size_t i = 1; i < np; i++)
        for (size_t k = i; k > 0 && cmp_pairs(&pairs[k], &pairs[k - 1], obj) < 0; k--) {
            ffn_plan_pair t = pairs[k];
            pairs[k] = pairs[k - 1];
            pairs[k - 1] = t;
        }
    for (size_t i = 0, r = 0; i < np; i++) {
        if (i && pairs[i].m != pairs[i - 1].m) r = 0;
        pairs[i].rank = (int)++r;
    }
}
