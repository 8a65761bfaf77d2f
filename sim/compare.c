/* The predictions of a device comparison (include/ffnroof/compare.h): one model's prefill step
 * and its decode steps over a few batches on every device, and how many devices its weights
 * need by capacity. Pure: no I/O, no allocation. */
#include "ffnroof/compare.h"
#include "ffnroof/plan.h"

#include <math.h>

int ffn_compare_predict(ffn_compare *c, size_t *failed, ffn_diag *diag)
{
    /* the whole model on one device, scales included, embeddings and norms in 16 bits when the
     * weights are narrower: the same footprint as plan's */
    double ffn_b, other_b;
    ffn_weight_footprint(&c->model, &c->params, c->run.wdtype, c->run.group_size, c->run.zero_point,
                         1, 1, &ffn_b, &other_b);
    const double wbytes = ffn_b + other_b;
    ffn_weight_footprint(&c->model, &c->params, c->run.wdtype, c->run.group_size, c->run.zero_point,
                         c->run.tp ? c->run.tp : 1, c->run.ep ? c->run.ep : 1, &ffn_b, &other_b);
    const double share = ffn_b + other_b;
    for (size_t i = 0; i < c->n_dev; i++) {
        ffn_cmp_device *d = &c->dev[i];
        ffn_run r = c->run;
        r.phase = FFN_PHASE_PREFILL;
        *failed = i;
        ffn_diag_clear(diag);
        int rc = ffn_predict(&c->model, &d->hw, &r, &d->prefill[0], diag);
        if (rc) return rc;
        for (size_t b = 0; b < c->n_batch; b++) {
            r.phase = FFN_PHASE_DECODE;
            r.batch = c->batch[b];
            ffn_diag_clear(diag);
            if ((rc = ffn_predict(&c->model, &d->hw, &r, &d->decode[b], diag))) return rc;
        }
        d->weight_bytes = wbytes;
        d->share_bytes = share;
        d->devices_for_weights =
            d->hw.mem_capacity_bytes > 0 ? (uint64_t)ceil(wbytes / d->hw.mem_capacity_bytes) : 0;
        d->fits = d->hw.mem_capacity_bytes > 0 && share <= d->hw.mem_capacity_bytes;
    }
    return 0;
}

uint64_t ffn_compare_devices(const ffn_compare *c)
{
    return (c->run.tp ? c->run.tp : 1) * (c->model.moe.n_experts && c->run.ep ? c->run.ep : 1);
}
