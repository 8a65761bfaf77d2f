/* oneDNN int8 peer FFN (W8A8, peers.h with wdtype FFN_DT_INT8): the FFN of ffnroof's W8A8
 * kernels (include/ffnroof/quant.h: int8 weights per output channel, x and h quantized per
 * token on the fly) on oneDNN's u8 x s8 -> s32 matmul, the way a oneDNN user composes it (oneDNN
 * 2.6 has no per-token dynamic scales, so the quantization and rescale passes are ours):
 *   x -> u8 codes q + 128 and per-token scales (peer_quant.c);
 *   [gate | up] = u8 x s8 [d][g f] -> s32 [T][g f]   (one matmul: the two projections share x);
 *   rescale: (s - 128 colsum) s_x s_w (+ b) -> fp32; act (and gate x up) in place (peer_act.c);
 *   h -> u8 codes + per-token scales; y = u8 x s8 [f][d] -> s32, rescaled (+ b) into y.
 * Weights are quantized once in init with the same rule as ffnroof's (max |column| / 127, round
 * half away from zero) and reordered into the layout the primitive asks for. Every primitive
 * runs on a user scratchpad; forward allocates nothing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers_internal.h"

#ifdef FFNROOF_HAVE_ONEDNN
#include <dnnl.h>

enum { M_UP = 0, M_DOWN, M_COUNT };

typedef struct i8_state {
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    dnnl_primitive_t prim[M_COUNT];
    dnnl_memory_t scratch[M_COUNT], wmem[M_COUNT];
    dnnl_memory_t a[M_COUNT], c[M_COUNT]; /* u8 inputs, s32 outputs */
    uint8_t *xq, *hq;
    int32_t *c1, *c2;
    float *g, *sx, *sh;
    float *sw1, *sw2, *b1, *b2; /* column scales and biases ([g f] and [d]) */
    int32_t *cs1, *cs2;         /* column sums of the codes */
} i8_state;

void ffn__peer_onednn_i8_free(ffn_peer *p)
{
    i8_state *st = p->impl;
    if (st == NULL) return;
    for (int i = 0; i < M_COUNT; i++) {
        if (st->prim[i]) dnnl_primitive_destroy(st->prim[i]);
        if (st->scratch[i]) dnnl_memory_destroy(st->scratch[i]);
        if (st->wmem[i]) dnnl_memory_destroy(st->wmem[i]);
        if (st->a[i]) dnnl_memory_destroy(st->a[i]);
        if (st->c[i]) dnnl_memory_destroy(st->c[i]);
    }
    free(st->xq);
    free(st->hq);
    free(st->c1);
    free(st->c2);
    free(st->g);
    free(st->sx);
    free(st->sh);
    free(st->sw1);
    free(st->sw2);
    free(st->b1);
    free(st->b2);
    free(st->cs1);
    free(st->cs2);
    if (st->stream) dnnl_stream_destroy(st->stream);
    if (st->eng) dnnl_engine_destroy(st->eng);
    free(st);
    p->impl = NULL;
}

static void md2(dnnl_memory_desc_t *md, size_t r, size_t c, dnnl_data_type_t dt,
                dnnl_format_tag_t tag)
{
    const dnnl_dims_t dims = {(dnnl_dim_t)r, (dnnl_dim_t)c};
    dnnl_memory_desc_init_by_tag(md, 2, dims, dt, tag);
}

/* Column c of the concatenation [w | w2] (each [K][n]); w2 may be NULL. */
static float col_val(const float *w, const float *w2, size_t n, size_t k, size_t c)
{
    return c < n ? w[k * n + c] : w2[k * n + c - n];
}

/* Quantize the [K][N] matrix [w | w2] per column into s8 codes q, scales sw, sums cs. 0, or -1
 * for a weight with no scale (NaN or Inf). */
static int quant_weights(const float *w, const float *w2, size_t n, size_t K, size_t N, int8_t *q,
                         float *sw, int32_t *cs)
{
    for (size_t c = 0; c < N; c++) {
        float m = 0.0f;
        for (size_t k = 0; k < K; k++) {
            const float v = fabsf(col_val(w, w2, n, k, c));
            if (!(v <= 3.40282347e38f)) return -1;
            m = v > m ? v : m;
        }
        const float s = m / 127.0f;
        int32_t sum = 0;
        for (size_t k = 0; k < K; k++) {
            float r = s > 0.0f ? roundf(col_val(w, w2, n, k, c) / s) : 0.0f;
            r = r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r;
            q[k * N + c] = (int8_t)r;
            sum += (int32_t)r;
        }
        sw[c] = s;
        cs[c] = sum;
    }
    return 0;
}

/* One u8 x s8 -> s32 matmul [T][K] x [K][N], its s8 weights reordered from q. */
static dnnl_status_t make(i8_state *st, ffn_peer *p, int slot, size_t T, size_t K, size_t N,
                          const int8_t *q, uint8_t *a, int32_t *c)
{
    dnnl_memory_desc_t amd, wmd, cmd, umd;
    md2(&amd, T, K, dnnl_u8, dnnl_ab);
    md2(&wmd, K, N, dnnl_s8, dnnl_format_tag_any);
    md2(&cmd, T, N, dnnl_s32, dnnl_ab);
    md2(&umd, K, N, dnnl_s8, dnnl_ab);
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL, rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_memory_t um = NULL;
    dnnl_status_t s = dnnl_matmul_desc_init(&desc, &amd, &wmd, NULL, &cmd);
    if (s == dnnl_success) s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success)
        s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success) s = dnnl_primitive_desc_create(&pd, &desc, attr, st->eng, NULL);
    if (s == dnnl_success) s = dnnl_primitive_create(&st->prim[slot], pd);
    if (s == dnnl_success)
        s = dnnl_memory_create(&st->scratch[slot],
                               dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0),
                               st->eng, DNNL_MEMORY_ALLOCATE);
    const dnnl_memory_desc_t *want =
        s == dnnl_success ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0) : NULL;
    if (s == dnnl_success) s = dnnl_memory_create(&um, &umd, st->eng, (void *)(uintptr_t)q);
    if (s == dnnl_success)
        s = dnnl_memory_create(&st->wmem[slot], want, st->eng, DNNL_MEMORY_ALLOCATE);
    if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(&rpd, &umd, st->eng, want, st->eng, NULL);
    if (s == dnnl_success) s = dnnl_primitive_create(&rp, rpd);
    if (s == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, um}, {DNNL_ARG_TO, st->wmem[slot]}};
        s = dnnl_primitive_execute(rp, st->stream, 2, args);
    }
    if (s == dnnl_success) s = dnnl_stream_wait(st->stream);
    if (s == dnnl_success) s = dnnl_memory_create(&st->a[slot], &amd, st->eng, a);
    if (s == dnnl_success) s = dnnl_memory_create(&st->c[slot], &cmd, st->eng, c);
    if (s == dnnl_success) {
        const char *impl = NULL;
        if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
            impl) {
            const size_t len = strlen(p->desc);
            snprintf(p->desc + len, sizeof p->desc - len, " %s:%s", slot == M_UP ? "up" : "down",
                     impl);
        }
    }
    if (rp) dnnl_primitive_destroy(rp);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (um) dnnl_memory_destroy(um);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return s;
}

int ffn__peer_onednn_i8_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    const size_t d = p->shape.d, f = p->shape.f, T = p->T;
    const bool gated = ffn_act_gated(p->shape.act);
    const size_t g = gated ? 2 : 1, gf = g * f;
    snprintf(p->desc, sizeof p->desc, "onednn matmul u8s8s32");
    if (T == 0) return 0;
    i8_state *st = calloc(1, sizeof *st);
    if (!st) return FFN_ENOMEM;
    p->impl = st;
    int8_t *q1 = malloc(d * gf), *q2 = malloc(f * d);
    st->xq = malloc(T * d);
    st->hq = malloc(T * f);
    st->c1 = malloc(T * gf * sizeof *st->c1);
    st->c2 = malloc(T * d * sizeof *st->c2);
    st->g = malloc(T * gf * sizeof *st->g);
    st->sx = malloc(T * sizeof *st->sx);
    st->sh = malloc(T * sizeof *st->sh);
    st->sw1 = malloc(gf * sizeof *st->sw1);
    st->sw2 = malloc(d * sizeof *st->sw2);
    st->cs1 = malloc(gf * sizeof *st->cs1);
    st->cs2 = malloc(d * sizeof *st->cs2);
    st->b1 = calloc(gf, sizeof *st->b1);
    st->b2 = calloc(d, sizeof *st->b2);
    int rc = 0;
    if (!q1 || !q2 || !st->xq || !st->hq || !st->c1 || !st->c2 || !st->g || !st->sx || !st->sh ||
        !st->sw1 || !st->sw2 || !st->cs1 || !st->cs2 || !st->b1 || !st->b2) {
        rc = FFN_ENOMEM;
        goto done;
    }
    if (quant_weights(w->w_gate, gated ? w->w_up : NULL, f, d, gf, q1, st->sw1, st->cs1) ||
        quant_weights(w->w_down, NULL, d, f, d, q2, st->sw2, st->cs2)) {
        rc = ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "onednn int8: a weight is NaN or Inf");
        goto done;
    }
    if (p->shape.bias) {
        memcpy(st->b1, w->b_gate, f * sizeof *st->b1);
        if (gated) memcpy(st->b1 + f, w->b_up, f * sizeof *st->b1);
        memcpy(st->b2, w->b_down, d * sizeof *st->b2);
    }
    dnnl_status_t s = dnnl_engine_create(&st->eng, dnnl_cpu, 0);
    if (s == dnnl_success) s = dnnl_stream_create(&st->stream, st->eng, dnnl_stream_default_flags);
    if (s == dnnl_success) s = make(st, p, M_UP, T, d, gf, q1, st->xq, st->c1);
    if (s == dnnl_success) s = make(st, p, M_DOWN, T, f, d, q2, st->hq, st->c2);
    if (s != dnnl_success)
        rc = ffn_diag_set(diag, FFN_EIO, NULL, 0, 0, "onednn int8 matmul: status %d", (int)s);
done:
    free(q1);
    free(q2);
    if (rc) ffn__peer_onednn_i8_free(p);
    return rc;
}

static int run(i8_state *st, int slot)
{
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, st->a[slot]},
                            {DNNL_ARG_WEIGHTS, st->wmem[slot]},
                            {DNNL_ARG_DST, st->c[slot]},
                            {DNNL_ARG_SCRATCHPAD, st->scratch[slot]}};
    if (dnnl_primitive_execute(st->prim[slot], st->stream, 4, a) != dnnl_success) return FFN_EIO;
    return dnnl_stream_wait(st->stream) == dnnl_success ? 0 : FFN_EIO;
}

int ffn__peer_onednn_i8_forward(ffn_peer *p, const float *x, float *y)
{
    i8_state *st = p->impl;
    const size_t d = p->shape.d, f = p->shape.f, T = p->T;
    if (T == 0) return 0;
    const bool gated = ffn_act_gated(p->shape.act);
    const size_t gf = (gated ? 2 : 1) * f;
    ffn__peer_quant_rows(T, d, x, d, st->xq, st->sx);
    int rc = run(st, M_UP);
    if (rc) return rc;
    ffn__peer_rescale_rows(T, gf, st->c1, st->sx, st->sw1, st->cs1, st->b1, st->g, gf);
    ffn__peer_act_rows(p->shape.act, T, f, gf, st->g, NULL, NULL);
    ffn__peer_quant_rows(T, f, st->g, gf, st->hq, st->sh);
    rc = run(st, M_DOWN);
    if (rc) return rc;
    ffn__peer_rescale_rows(T, d, st->c2, st->sh, st->sw2, st->cs2, st->b2, y, d);
    return 0;
}

#else /* !FFNROOF_HAVE_ONEDNN */

int ffn__peer_onednn_i8_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    (void)p;
    (void)w;
    return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                        "ffnroof was built without oneDNN (libdnnl and dnnl.h not found)");
}
int ffn__peer_onednn_i8_forward(ffn_peer *p, const float *x, float *y)
{
    (void)p;
    (void)x;
    (void)y;
    return FFN_EUNSUPPORTED;
}
void ffn__peer_onednn_i8_free(ffn_peer *p)
{
    (void)p;
}

#endif
