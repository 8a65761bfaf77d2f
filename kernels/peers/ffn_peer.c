/* Front of the peer FFNs (peers.h): argument checks, the handle's life cycle and the choice of
 * backend. The backends (ffn_peer_openblas.c, ffn_peer_onednn.c) are compiled in when
 * FFNROOF_HAVE_OPENBLAS / FFNROOF_HAVE_ONEDNN say the library is there; otherwise their entry
 * points return FFN_EUNSUPPORTED with a message naming the missing library. */
#include <stdint.h>
#include <stdlib.h>

#include "peers_internal.h"

bool ffn_peer_available(ffn_peer_lib lib)
{
    switch (lib) {
    case FFN_PEER_OPENBLAS:
#ifdef FFNROOF_HAVE_OPENBLAS
        return true;
#else
        return false;
#endif
    case FFN_PEER_ONEDNN:
#ifdef FFNROOF_HAVE_ONEDNN
        return true;
#else
        return false;
#endif
    case FFN_PEER_COUNT:
        break;
    }
    return false;
}

const char *ffn_peer_lib_version(ffn_peer_lib lib)
{
    switch (lib) {
    case FFN_PEER_OPENBLAS:
        return ffn__peer_openblas_version();
    case FFN_PEER_ONEDNN:
        return ffn__peer_onednn_version();
    case FFN_PEER_COUNT:
        break;
    }
    return "not built";
}

static bool weights_ok(const ffn_kshape *s, const ffn_kweights *w)
{
    const bool gated = ffn_act_gated(s->act);
    if (w->w_gate == NULL || w->w_down == NULL || (gated && w->w_up == NULL)) {
        return false;
    }
    return !s->bias || (w->b_gate != NULL && w->b_down != NULL && (!gated || w->b_up != NULL));
}

int ffn_peer_init(ffn_peer_lib lib, ffn_dtype wdtype, const ffn_kshape *s, const ffn_kweights *w,
                  size_t T, int threads, ffn_peer **out, ffn_diag *diag)
{
    ffn_diag_clear(diag);
    if (out == NULL) {
        return FFN_EINVAL;
    }
    *out = NULL;
    if (s == NULL || w == NULL || s->d == 0 || s->f == 0 ||
        (unsigned)s->act >= (unsigned)FFN_ACT_COUNT || (unsigned)lib >= (unsigned)FFN_PEER_COUNT) {
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "invalid peer shape or library");
    }
    if (!weights_ok(s, w)) {
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "missing weights for activation '%s'%s",
                            ffn_act_name(s->act), s->bias ? " with biases" : "");
    }
    /* Both backends index with 32-bit BLAS/oneDNN integers over [T][2f], [d][2f], [f][d]. */
    const size_t lim = (size_t)INT32_MAX;
    if (s->d > lim / 2 || s->f > lim / 2 || T > lim || (T > 0 && 2 * s->f > lim / T) ||
        s->d > lim / (2 * s->f)) {
        return ffn_diag_set(diag, FFN_EOVERFLOW, NULL, 0, 0, "peer shape too large");
    }
    if (!ffn_peer_available(lib)) {
        return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0, "ffnroof was built without %s",
                            ffn_peer_lib_name(lib));
    }
    ffn_peer *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return FFN_ENOMEM;
    }
    p->lib = lib;
    p->shape = *s;
    p->wdtype = wdtype;
    p->T = T;
    p->threads = threads;
    int rc = lib == FFN_PEER_OPENBLAS ? ffn__peer_openblas_init(p, w, diag)
                                      : ffn__peer_onednn_init(p, w, diag);
    if (rc != 0) {
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int ffn_peer_forward(ffn_peer *p, size_t T, const float *x, float *y)
{
    if (p == NULL || T != p->T || (T > 0 && (x == NULL || y == NULL))) {
        return FFN_EINVAL;
    }
    return p->lib == FFN_PEER_OPENBLAS ? ffn__peer_openblas_forward(p, x, y)
                                       : ffn__peer_onednn_forward(p, x, y);
}

const char *ffn_peer_describe(const ffn_peer *p)
{
    return p != NULL ? p->desc : "(null)";
}

void ffn_peer_free(ffn_peer *p)
{
    if (p == NULL) {
        return;
    }
    if (p->lib == FFN_PEER_OPENBLAS) {
        ffn__peer_openblas_free(p);
    } else {
        ffn__peer_onednn_free(p);
    }
    free(p);
}
