/* Peer FFN implementations on the libraries a user would otherwise call (OpenBLAS, oneDNN), in
 * the same binary as ffnroof's own kernels so that every comparison is made side by side in one
 * run. They compute exactly the FFN of kernels.h (same shape struct, same unpacked fp32
 * weights, fp32 activations in and out), prepared once in ffn_peer_init (weights packed or
 * reordered, primitives created: not part of the timed work) and run by ffn_peer_forward.
 *
 *  - OpenBLAS (fp32 weights): prefill is one cblas_sgemm of x [T][d] by [W_gate | W_up]
 *    [d][2f] (the two projections share one GEMM), a vectorisable activation pass (and the
 *    gate*up multiply) over [T][2f], and a cblas_sgemm by W_down; T = 1 (decode) uses
 *    cblas_sgemv for both. Threads: openblas_set_num_threads (a process-wide setting).
 *  - oneDNN (fp32 or bf16 weights; bf16 also converts the activations to bf16 as input of each
 *    matmul): matmul primitives, the activation as an eltwise post-op (swish for silu, gelu_erf,
 *    gelu_tanh, relu) of the gate matmul and, for gated forms, a binary-mul post-op by the up
 *    projection; biases as the matmul bias. Threads: oneDNN's own runtime (Debian's libdnnl is
 *    built with OpenMP: OMP_NUM_THREADS, default all cores); `threads` is not applied.
 *
 * ffn_peers is a library apart from ffn_kernels (which never depends on these libraries).
 * When a library was not found at build time (FFNROOF_HAVE_OPENBLAS / FFNROOF_HAVE_ONEDNN
 * undefined), its functions return FFN_EUNSUPPORTED. Unlike the kernels, a peer allocates (in
 * init only: forward allocates nothing of ours; oneDNN runs with a user-provided scratchpad). */
#ifndef FFNROOF_PEERS_H
#define FFNROOF_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#include "ffnroof/error.h"
#include "ffnroof/kernels.h"
#include "ffnroof/profile.h"
#include "ffnroof/types.h"

/* A prepared peer FFN for one shape, weight dtype and token count. Opaque; ffn_peer_free. */
typedef struct ffn_peer ffn_peer;

/* Was lib found at build time? */
bool ffn_peer_available(ffn_peer_lib lib);
/* Library version text, e.g. "OpenBLAS 0.3.21 ..." or "oneDNN 2.6.3 (cpu runtime: OpenMP)";
 * "not built" when absent. Static storage. */
const char *ffn_peer_lib_version(ffn_peer_lib lib);

/* Prepare a peer FFN of shape s with weights w (copied/reordered: w may be freed afterwards)
 * in weight dtype wdtype (OpenBLAS: FFN_DT_FP32; oneDNN: FFN_DT_FP32, FFN_DT_BF16, or
 * FFN_DT_INT8 for the W8A8 FFN of ffnroof's int8 kernels: weights per output channel, x and h
 * quantized per token, u8 x s8 -> s32 matmuls) for
 * forward calls on exactly T tokens. threads <= 0 means all cores (OpenBLAS only, see above).
 * On success *out owns the peer. Errors: FFN_EINVAL (NULL, zero dims, missing weights),
 * FFN_EUNSUPPORTED (library absent or dtype not offered; diag says which), FFN_ENOMEM, or
 * FFN_EIO when the library itself fails (diag carries its status). */
int ffn_peer_init(ffn_peer_lib lib, ffn_dtype wdtype, const ffn_kshape *s, const ffn_kweights *w,
                  size_t T, int threads, ffn_peer **out, ffn_diag *diag);
/* y = FFN(x) on the T tokens given to init (FFN_EINVAL for another T). x [T][d], y [T][d]. */
int ffn_peer_forward(ffn_peer *p, size_t T, const float *x, float *y);
/* Short description of what forward runs, e.g. "openblas sgemm+act+sgemm". */
const char *ffn_peer_describe(const ffn_peer *p);
/* Release a peer; NULL is a no-op. */
void ffn_peer_free(ffn_peer *p);

#endif
