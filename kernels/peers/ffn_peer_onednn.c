/* oneDNN peer FFN (peers.h): the FFN as oneDNN's own matmul primitives, the way its
 * documentation suggests fusing it. Init creates, for the T given:
 *   [bf16 only] reorder x fp32 -> bf16;
 *   [gated]     up   = x W_up (+ b_up)                                   -> fp32 [T][f]
 *               h    = act(x W_gate (+ b_gate)) [* up]                   -> [T][f] (bf16 for bf16)
 *                      (eltwise post-op: relu, gelu_erf, gelu_tanh, swish(alpha=1) = silu;
 *                       binary-mul post-op by up for the gated forms)
 *               y    = h W_down (+ b_down)                               -> fp32 [T][d]
 * with the weights reordered once into the layout each primitive asks for (format any) and
 * every primitive running on a user-mode scratchpad allocated here, so forward allocates
 * nothing. The primitives' implementation names (which ISA oneDNN picked: AMX, avx512_core_bf16,
 * ...) are recorded in the peer's description. int8 weights (W8A8, u8 x s8 -> s32 matmuls) are
 * ffn_peer_onednn_i8.c's. Built only with FFNROOF_HAVE_ONEDNN; otherwise
 * every entry returns FFN_EUNSUPPORTED. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers_internal.h"

#ifdef FFNROOF_HAVE_ONEDNN
#include <dnnl.h>

enum { P_XCVT = 0, P_UP, P_GATE, P_DOWN, P_COUNT };

typedef struct dn_state {
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    dnnl_primitive_t prim[P_COUNT];
    dnnl_memory_t scratch[P_COUNT];
    dnnl_memory_t x_user, x_bf, up, h, y_user;
    dnnl_memory_t w_up, w_gate, w_down;
    dnnl_memory_t b_up, b_gate, b_down;
    float *bias_copy[3];
} dn_state;

static void destroy_mem(dnnl_memory_t *m)
{
    if (*m != NULL) {
        dnnl_memory_destroy(*m);
        *m = NULL;
    }
}

void ffn__peer_onednn_free(ffn_peer *p)
{
    if (p->wdtype == FFN_DT_INT8) {
        ffn__peer_onednn_i8_free(p);
        return;
    }
    dn_state *st = p->impl;
    if (st == NULL) {
        return;
    }
    for (int i = 0; i < P_COUNT; ++i) {
        if (st->prim[i] != NULL) {
            dnnl_primitive_destroy(st->prim[i]);
        }
        destroy_mem(&st->scratch[i]);
    }
    destroy_mem(&st->x_user);
    destroy_mem(&st->x_bf);
    destroy_mem(&st->up);
    destroy_mem(&st->h);
    destroy_mem(&st->y_user);
    destroy_mem(&st->w_up);
    destroy_mem(&st->w_gate);
    destroy_mem(&st->w_down);
    destroy_mem(&st->b_up);
    destroy_mem(&st->b_gate);
    destroy_mem(&st->b_down);
    for (int i = 0; i < 3; ++i) {
        free(st->bias_copy[i]);
    }
    if (st->stream != NULL) {
        dnnl_stream_destroy(st->stream);
    }
    if (st->eng != NULL) {
        dnnl_engine_destroy(st->eng);
    }
    free(st);
    p->impl = NULL;
}

#define DN_CHECK(call)                                                                             \
    do {                                                                                           \
        dnnl_status_t s_ = (call);                                                                 \
        if (s_ != dnnl_success) {                                                                  \
            rc = ffn_diag_set(diag, FFN_EIO, NULL, 0, 0, "onednn: %s failed (status %d)", #call,   \
                              (int)s_);                                                            \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static void md2(dnnl_memory_desc_t *md, size_t r, size_t c, dnnl_data_type_t dt,
                dnnl_format_tag_t tag)
{
    const dnnl_dims_t dims = {(dnnl_dim_t)r, (dnnl_dim_t)c};
    dnnl_memory_desc_init_by_tag(md, 2, dims, dt, tag);
}

/* Reorder a user fp32 row-major [r][c] matrix into a new memory of descriptor want. */
static dnnl_status_t reorder_weights(dn_state *st, const float *src, size_t r, size_t c,
                                     const dnnl_memory_desc_t *want, dnnl_memory_t *out)
{
    dnnl_memory_desc_t umd;
    md2(&umd, r, c, dnnl_f32, dnnl_ab);
    dnnl_memory_t um = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_status_t s = dnnl_memory_create(&um, &umd, st->eng, (void *)(uintptr_t)src);
    if (s == dnnl_success) {
        s = dnnl_memory_create(out, want, st->eng, DNNL_MEMORY_ALLOCATE);
    }
    if (s == dnnl_success) {
        s = dnnl_reorder_primitive_desc_create(&rpd, &umd, st->eng, want, st->eng, NULL);
    }
    if (s == dnnl_success) {
        s = dnnl_primitive_create(&rp, rpd);
    }
    if (s == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, um}, {DNNL_ARG_TO, *out}};
        s = dnnl_primitive_execute(rp, st->stream, 2, args);
    }
    if (s == dnnl_success) {
        s = dnnl_stream_wait(st->stream);
    }
    if (rp != NULL) {
        dnnl_primitive_destroy(rp);
    }
    if (rpd != NULL) {
        dnnl_primitive_desc_destroy(rpd);
    }
    if (um != NULL) {
        dnnl_memory_destroy(um);
    }
    return s;
}

/* A bias [1][n] fp32 memory over a private copy of b. */
static dnnl_status_t bias_mem(dn_state *st, int slot, const float *b, size_t n, dnnl_memory_t *out)
{
    st->bias_copy[slot] = malloc(n * sizeof(float));
    if (st->bias_copy[slot] == NULL) {
        return dnnl_out_of_memory;
    }
    memcpy(st->bias_copy[slot], b, n * sizeof(float));
    dnnl_memory_desc_t md;
    md2(&md, 1, n, dnnl_f32, dnnl_ab);
    return dnnl_memory_create(out, &md, st->eng, st->bias_copy[slot]);
}

/* Create one matmul primitive (its weights reordered to its preferred layout into *wmem and
 * a user scratchpad into st->scratch[slot]); appends its implementation name to desc. */
static dnnl_status_t make_matmul(dn_state *st, ffn_peer *p, int slot, const dnnl_memory_desc_t *src,
                                 const float *w, size_t k, size_t n, dnnl_data_type_t wdt,
                                 bool bias, const dnnl_memory_desc_t *dst, const_dnnl_post_ops_t po,
                                 dnnl_memory_t *wmem)
{
    dnnl_memory_desc_t wmd, bmd;
    md2(&wmd, k, n, wdt, dnnl_format_tag_any);
    md2(&bmd, 1, n, dnnl_f32, dnnl_ab);
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = dnnl_matmul_desc_init(&desc, src, &wmd, bias ? &bmd : NULL, dst);
    if (s == dnnl_success) {
        s = dnnl_primitive_attr_create(&attr);
    }
    if (s == dnnl_success) {
        s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    }
    if (s == dnnl_success && po != NULL) {
        s = dnnl_primitive_attr_set_post_ops(attr, po);
    }
    if (s == dnnl_success) {
        s = dnnl_primitive_desc_create(&pd, &desc, attr, st->eng, NULL);
    }
    if (s == dnnl_success) {
        s = dnnl_primitive_create(&st->prim[slot], pd);
    }
    if (s == dnnl_success) {
        s = dnnl_memory_create(&st->scratch[slot],
                               dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0),
                               st->eng, DNNL_MEMORY_ALLOCATE);
    }
    if (s == dnnl_success) {
        s = reorder_weights(st, w, k, n, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                            wmem);
    }
    if (s == dnnl_success) {
        const char *impl = NULL;
        if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
            impl != NULL) {
            size_t len = strlen(p->desc);
            snprintf(p->desc + len, sizeof p->desc - len, " %s:%s",
                     slot == P_UP     ? "up"
                     : slot == P_GATE ? "gate"
                                      : "down",
                     impl);
        }
    }
    if (pd != NULL) {
        dnnl_primitive_desc_destroy(pd);
    }
    if (attr != NULL) {
        dnnl_primitive_attr_destroy(attr);
    }
    return s;
}

static dnnl_alg_kind_t eltwise_alg(ffn_act a, float *alpha)
{
    *alpha = 0.0f;
    switch (a) {
    case FFN_ACT_RELU:
    case FFN_ACT_REGLU:
        return dnnl_eltwise_relu;
    case FFN_ACT_GELU:
    case FFN_ACT_GEGLU:
        return dnnl_eltwise_gelu_erf;
    case FFN_ACT_GELU_TANH:
        return dnnl_eltwise_gelu_tanh;
    case FFN_ACT_SILU:
    case FFN_ACT_SWIGLU:
        *alpha = 1.0f; /* swish(x) = x * sigmoid(alpha x) */
        return dnnl_eltwise_swish;
    case FFN_ACT_COUNT:
        break;
    }
    return dnnl_alg_kind_undef;
}

int ffn__peer_onednn_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    const size_t d = p->shape.d, f = p->shape.f, T = p->T;
    const bool gated = ffn_act_gated(p->shape.act), bias = p->shape.bias;
    if (p->wdtype == FFN_DT_INT8) {
        return ffn__peer_onednn_i8_init(p, w, diag);
    }
    if (p->wdtype != FFN_DT_FP32 && p->wdtype != FFN_DT_BF16) {
        return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                            "the onednn peer has fp32, bf16 and int8 (W8A8) weights only, not '%s'",
                            ffn_dtype_name(p->wdtype));
    }
    const bool bf = p->wdtype == FFN_DT_BF16;
    const dnnl_data_type_t adt = bf ? dnnl_bf16 : dnnl_f32; /* matmul inputs */
    snprintf(p->desc, sizeof p->desc, "onednn matmul %s", bf ? "bf16" : "f32");
    if (T == 0) {
        return 0; /* nothing to run: forward is a no-op */
    }
    int rc = 0;
    dnnl_post_ops_t po = NULL;
    dn_state *st = calloc(1, sizeof *st);
    if (st == NULL) {
        return FFN_ENOMEM;
    }
    p->impl = st;
    DN_CHECK(dnnl_engine_create(&st->eng, dnnl_cpu, 0));
    DN_CHECK(dnnl_stream_create(&st->stream, st->eng, dnnl_stream_default_flags));

    dnnl_memory_desc_t x32, xin, up_md, h_md, y_md;
    md2(&x32, T, d, dnnl_f32, dnnl_ab);
    md2(&xin, T, d, adt, dnnl_ab);
    md2(&up_md, T, f, dnnl_f32, dnnl_ab);
    md2(&h_md, T, f, adt, dnnl_ab);
    md2(&y_md, T, d, dnnl_f32, dnnl_ab);
    DN_CHECK(dnnl_memory_create(&st->x_user, &x32, st->eng, DNNL_MEMORY_NONE));
    DN_CHECK(dnnl_memory_create(&st->y_user, &y_md, st->eng, DNNL_MEMORY_NONE));
    DN_CHECK(dnnl_memory_create(&st->h, &h_md, st->eng, DNNL_MEMORY_ALLOCATE));
    if (bf) {
        dnnl_primitive_desc_t rpd = NULL;
        DN_CHECK(dnnl_memory_create(&st->x_bf, &xin, st->eng, DNNL_MEMORY_ALLOCATE));
        DN_CHECK(dnnl_reorder_primitive_desc_create(&rpd, &x32, st->eng, &xin, st->eng, NULL));
        dnnl_status_t s = dnnl_primitive_create(&st->prim[P_XCVT], rpd);
        dnnl_primitive_desc_destroy(rpd);
        DN_CHECK(s);
    }
    if (bias) {
        DN_CHECK(bias_mem(st, 0, w->b_gate, f, &st->b_gate));
        DN_CHECK(bias_mem(st, 2, w->b_down, d, &st->b_down));
    }
    if (gated) {
        DN_CHECK(dnnl_memory_create(&st->up, &up_md, st->eng, DNNL_MEMORY_ALLOCATE));
        if (bias) {
            DN_CHECK(bias_mem(st, 1, w->b_up, f, &st->b_up));
        }
        DN_CHECK(make_matmul(st, p, P_UP, &xin, w->w_up, d, f, adt, bias, &up_md, NULL, &st->w_up));
    }
    float alpha;
    dnnl_alg_kind_t alg = eltwise_alg(p->shape.act, &alpha);
    DN_CHECK(dnnl_post_ops_create(&po));
    DN_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, 0.0f));
    if (gated) {
        DN_CHECK(dnnl_post_ops_append_binary(po, dnnl_binary_mul, &up_md));
    }
    DN_CHECK(make_matmul(st, p, P_GATE, &xin, w->w_gate, d, f, adt, bias, &h_md, po, &st->w_gate));
    DN_CHECK(
        make_matmul(st, p, P_DOWN, &h_md, w->w_down, f, d, adt, bias, &y_md, NULL, &st->w_down));
    dnnl_post_ops_destroy(po);
    return 0;
fail:
    if (po != NULL) {
        dnnl_post_ops_destroy(po);
    }
    ffn__peer_onednn_free(p);
    return rc;
}

int ffn__peer_onednn_forward(ffn_peer *p, const float *x, float *y)
{
    if (p->wdtype == FFN_DT_INT8) {
        return ffn__peer_onednn_i8_forward(p, x, y);
    }
    dn_state *st = p->impl;
    if (p->T == 0) {
        return 0;
    }
    const bool gated = st->up != NULL;
    /* oneDNN reads x and writes y in place: its memory objects just point at them. */
    if (dnnl_memory_set_data_handle(st->x_user, (void *)(uintptr_t)x) != dnnl_success ||
        dnnl_memory_set_data_handle(st->y_user, y) != dnnl_success) {
        return FFN_EIO;
    }
    dnnl_memory_t xin = st->x_user;
    dnnl_status_t s = dnnl_success;
    if (st->prim[P_XCVT] != NULL) {
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, st->x_user}, {DNNL_ARG_TO, st->x_bf}};
        s = dnnl_primitive_execute(st->prim[P_XCVT], st->stream, 2, a);
        xin = st->x_bf;
    }
    if (s == dnnl_success && gated) {
        dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, xin},
                                {DNNL_ARG_WEIGHTS, st->w_up},
                                {DNNL_ARG_DST, st->up},
                                {DNNL_ARG_SCRATCHPAD, st->scratch[P_UP]},
                                {DNNL_ARG_BIAS, st->b_up}};
        s = dnnl_primitive_execute(st->prim[P_UP], st->stream, st->b_up != NULL ? 5 : 4, a);
    }
    if (s == dnnl_success) {
        dnnl_exec_arg_t a[6] = {
            {DNNL_ARG_SRC, xin},
            {DNNL_ARG_WEIGHTS, st->w_gate},
            {DNNL_ARG_DST, st->h},
            {DNNL_ARG_SCRATCHPAD, st->scratch[P_GATE]},
            {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, st->up},
            {DNNL_ARG_BIAS, st->b_gate},
        };
        int n = 4;
        if (gated) {
            n = 5;
        }
        if (st->b_gate != NULL) {
            a[n] = a[5];
            n++;
        }
        s = dnnl_primitive_execute(st->prim[P_GATE], st->stream, n, a);
    }
    if (s == dnnl_success) {
        dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, st->h},
                                {DNNL_ARG_WEIGHTS, st->w_down},
                                {DNNL_ARG_DST, st->y_user},
                                {DNNL_ARG_SCRATCHPAD, st->scratch[P_DOWN]},
                                {DNNL_ARG_BIAS, st->b_down}};
        s = dnnl_primitive_execute(st->prim[P_DOWN], st->stream, st->b_down != NULL ? 5 : 4, a);
    }
    if (s == dnnl_success) {
        s = dnnl_stream_wait(st->stream);
    }
    return s == dnnl_success ? 0 : FFN_EIO;
}

const char *ffn__peer_onednn_version(void)
{
    static char buf[128];
    const dnnl_version_t *v = dnnl_version();
    const char *rt = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                     : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                     : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                          : "other";
    snprintf(buf, sizeof buf, "oneDNN %d.%d.%d (cpu runtime: %s)", v->major, v->minor, v->patch,
             rt);
    return buf;
}

#else /* !FFNROOF_HAVE_ONEDNN */

int ffn__peer_onednn_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    (void)p;
    (void)w;
    return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                        "ffnroof was built without oneDNN (libdnnl and dnnl.h not found)");
}
int ffn__peer_onednn_forward(ffn_peer *p, const float *x, float *y)
{
    (void)p;
    (void)x;
    (void)y;
    return FFN_EUNSUPPORTED;
}
void ffn__peer_onednn_free(ffn_peer *p)
{
    (void)p;
}
const char *ffn__peer_onednn_version(void)
{
    return "not built";
}

#endif
