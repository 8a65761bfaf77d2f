/* Shared internals of the peer FFNs (ffn_peers library): the handle each backend fills, the
 * backends' entry points and the activation pass of the OpenBLAS FFN. Internal: ffn__ prefix. */
#ifndef FFNROOF_PEERS_INTERNAL_H
#define FFNROOF_PEERS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ffnroof/peers.h"

struct ffn_peer {
    ffn_peer_lib lib;
    ffn_kshape shape;
    ffn_dtype wdtype;
    size_t T;
    int threads;
    char desc[256];
    void *impl; /* the backend's own state */
};

/* The features (FFN_CPU_* bits) the kernels of OpenBLAS 0.3.21 core `core` need that `have`
 * lacks, or 0: Haswell and Zen AVX2 + FMA, SkylakeX AVX-512, Cooperlake and SapphireRapids
 * AVX-512 with BF16; any other core name, 0 (3DNow!, which the K8 "Opteron" cores need, is
 * not an FFN_CPU_* bit: ffn_peer_openblas.c checks it apart). */
uint64_t ffn__openblas_core_lacks(const char *core, uint64_t have);

int ffn__peer_openblas_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag);
int ffn__peer_openblas_forward(ffn_peer *p, const float *x, float *y);
void ffn__peer_openblas_free(ffn_peer *p);
const char *ffn__peer_openblas_version(void);

int ffn__peer_onednn_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag);
int ffn__peer_onednn_forward(ffn_peer *p, const float *x, float *y);
void ffn__peer_onednn_free(ffn_peer *p);
const char *ffn__peer_onednn_version(void);

/* The oneDNN int8 (W8A8) peer (ffn_peer_onednn_i8.c), reached through the onednn entry points
 * when wdtype is FFN_DT_INT8. */
int ffn__peer_onednn_i8_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag);
int ffn__peer_onednn_i8_forward(ffn_peer *p, const float *x, float *y);
void ffn__peer_onednn_i8_free(ffn_peer *p);

/* Its passes (peer_quant.c): per-token codes q[t][i] = code(x[t][i]) + 128 (quant.h's rule)
 * and scales sx[t] for T rows of n values (row stride ldx; codes packed n per row); and
 * out[t][i] = (c[t][i] - 128 cs[i]) sx[t] sw[i] + b[i] for T rows of n int32 sums. */
void ffn__peer_quant_rows(size_t T, size_t n, const float *x, size_t ldx, uint8_t *q, float *sx);
void ffn__peer_rescale_rows(size_t T, size_t n, const int32_t *c, const float *sx, const float *sw,
                            const int32_t *cs, const float *b, float *out, size_t ldo);

/* The activation pass over rows of an [T][ld] fp32 matrix holding the gate projection in
 * columns 0..f-1 and, for gated forms, the up projection in columns f..2f-1:
 * g[t][j] = act(g[t][j] + b_gate[j]) (* (g[t][f+j] + b_up[j])), written in place into columns
 * 0..f-1. Biases may be NULL. */
void ffn__peer_act_rows(ffn_act act, size_t T, size_t f, size_t ld, float *g, const float *b_gate,
                        const float *b_up);

#endif
