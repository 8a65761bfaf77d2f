/* The MoE kernel calls of the bench runner (see bench_moe.h for why they live apart). */
#include "bench_moe.h"

#include <stdlib.h>

#include "bench_internal.h"
#include "ffnroof/kernels_moe.h"

struct ffn_bmoe {
    const ffn_kernel *k;
    ffn_moe_shape s;
};

ffn_bmoe *ffn_bmoe_new(const ffn_kernel *k, const ffn_kshape *e, size_t E, size_t top_k)
{
    ffn_bmoe *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->k = k;
    m->s.d = e->d;
    m->s.f = e->f;
    m->s.n_experts = E;
    m->s.top_k = top_k;
    m->s.act = e->act;
    m->s.bias = e->bias;
    m->s.group = e->group;
    m->s.zero_point = e->zero_point;
    m->s.score = FFN_MOE_SOFTMAX;
    m->s.norm_topk = true;
    if (!k || ffn_moe_shape_check(&m->s)) {
        free(m);
        return NULL;
    }
    return m;
}

void ffn_bmoe_free(ffn_bmoe *m)
{
    free(m);
}

size_t ffn_bmoe_packed_bytes(const ffn_bmoe *m)
{
    return ffn_moe_packed_bytes(m->k, &m->s);
}

int ffn_bmoe_pack(const ffn_bmoe *m, const float *router, const ffn_kweights *experts, void *packed,
                  size_t n)
{
    ffn_moe_weights w = {router, NULL, experts, NULL};
    return ffn_moe_pack(m->k, &m->s, &w, packed, n);
}

size_t ffn_bmoe_ws_bytes(const ffn_bmoe *m, size_t T, int threads)
{
    return ffn_moe_workspace_bytes(m->k, &m->s, T, threads);
}

int ffn_bmoe_forward(const ffn_bmoe *m, const void *packed, size_t T, const float *x, float *y,
                     void *ws, size_t ws_bytes, int threads, double *timing, size_t *expert_tokens)
{
    ffn_kmoe_stats st;
    int rc = ffn_moe_forward(m->k, &m->s, packed, T, x, y, ws, ws_bytes, threads,
                             timing || expert_tokens ? &st : NULL);
    if (rc) return rc;
    if (timing) {
        timing[0] = st.timing.route_s;
        timing[1] = st.timing.permute_s;
        timing[2] = st.timing.experts_s;
        timing[3] = st.timing.combine_s;
    }
    if (expert_tokens)
        for (size_t e = 0; e < m->s.n_experts; e++)
            expert_tokens[e] = st.routing.offset[e + 1] - st.routing.offset[e];
    return 0;
}

int ffn_bmoe_count(const ffn_bmoe *m, size_t T, const size_t *expert_tokens, double *flops,
                   double *bytes, size_t *active_experts)
{
    ffn_moe_work w;
    int rc = ffn_moe_count(m->k, &m->s, T, expert_tokens, &w);
    if (rc) return rc;
    *flops = w.flops;
    *bytes = w.bytes;
    *active_experts = w.active_experts;
    return 0;
}

size_t ffn_bmoe_ref_ws_bytes(const ffn_bmoe *m)
{
    return ffn_moe_ref_workspace_bytes(&m->s);
}

int ffn_bmoe_ref_forward(const ffn_bmoe *m, const float *router, const ffn_kweights *experts,
                         size_t T, const float *x, float *y, void *ws, size_t ws_bytes)
{
    ffn_moe_weights w = {router, NULL, experts, NULL};
    return ffn_moe_ref_forward(&m->s, &w, T, x, y, NULL, ws, ws_bytes);
}

int ffn_bmoe_kernel_forward(const ffn_bmoe *m, const ffn_kernel *ref, const float *router,
                            const ffn_kweights *experts, size_t T, const float *x, float *y)
{
    ffn_moe_weights w = {router, NULL, experts, NULL};
    const size_t pb = ffn_moe_packed_bytes(ref, &m->s),
                 wb = ffn_moe_workspace_bytes(ref, &m->s, T, 1);
    if (!pb || !wb) return FFN_EINVAL;
    void *p = ffn__bench_xalloc(pb), *ws = ffn__bench_xalloc(wb);
    int rc = !p || !ws ? FFN_ENOMEM : ffn_moe_pack(ref, &m->s, &w, p, pb);
    if (!rc) rc = ffn_moe_forward(ref, &m->s, p, T, x, y, ws, wb, 1, NULL);
    free(p);
    free(ws);
    return rc;
}
