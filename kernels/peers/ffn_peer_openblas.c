/* OpenBLAS peer FFN (peers.h): what a user would write with OpenBLAS alone. Init copies W_gate
 * and W_up side by side into one [d][2f] matrix (so both projections are one sgemm, like our
 * fused kernels) and keeps W_down [f][d]. Forward, T > 1: sgemm x [T][d] * [Wg|Wu] -> G [T][2f],
 * the activation pass in place over G (peer_act.c), sgemm G[:, 0:f] (lda 2f) * W_down -> y,
 * with y preset to b_down and beta = 1 when there are biases. T = 1 (decode): the same with
 * sgemv. Built only with FFNROOF_HAVE_OPENBLAS; otherwise every entry returns
 * FFN_EUNSUPPORTED. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/kernels.h"
#include "peers_internal.h"

uint64_t ffn__openblas_core_lacks(const char *core, uint64_t have)
{
    static const struct {
        const char *name;
        uint64_t need;
    } cores[] = {
        {"Haswell", FFN_CPU_AVX2},
        {"Zen", FFN_CPU_AVX2},
        {"SkylakeX", FFN_CPU_AVX512},
        {"Cooperlake", FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16},
        {"SapphireRapids", FFN_CPU_AVX512 | FFN_CPU_AVX512_BF16},
    };
    for (size_t i = 0; core && i < sizeof cores / sizeof cores[0]; i++)
        if (strcmp(core, cores[i].name) == 0) return cores[i].need & ~have;
    return 0;
}

#ifdef FFNROOF_HAVE_OPENBLAS
#include <cblas.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* Whether the kernels OpenBLAS chose can run on this CPU; else the reason in why. Two ways they
 * cannot: OPENBLAS_CORETYPE forces a core (this environment sets Haswell) on a CPU without its
 * instructions, and DYNAMIC_ARCH (0.3.21) gives an AuthenticAMD CPU of family 0xf its K8 kernels
 * (core "Opteron", "Opteron_SSE3"), which execute 3DNow! (FEMMS): every real K8 has 3DNow!, but a
 * virtual CPU may report that family without it (qemu's qemu64). Either way the first sgemm
 * would die of SIGILL (test_peers under qemu64 with OPENBLAS_CORETYPE=Haswell), so
 * the peer refuses the CPU instead. */
static bool kernels_runnable(char *why, size_t n)
{
    const char *core = openblas_get_corename();
    const char *forced = getenv("OPENBLAS_CORETYPE");
    char set[96] = "";
    if (forced && forced[0]) snprintf(set, sizeof set, ", set by OPENBLAS_CORETYPE=%.64s", forced);
    const uint64_t lacks = ffn__openblas_core_lacks(core, ffn_cpu_features());
    if (lacks) {
        char names[128] = "";
        for (int b = 0; b < 64; b++) {
            const char *nm = (lacks >> b) & 1u ? ffn_cpu_feature_name(1ull << b) : NULL;
            if (nm)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         names[0] ? " " : "", nm);
        }
        snprintf(why, n,
                 "openblas: its kernels for this CPU (core %s%s) need %s, which this CPU "
                 "lacks",
                 core, set, names);
        return false;
    }
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (strncmp(core, "Opteron", 7) == 0 &&
        (!__get_cpuid(0x80000001, &a, &b, &c, &d) || !((d >> 31) & 1u))) {
        snprintf(why, n,
                 "openblas: its kernels for this CPU (core %s%s) use 3DNow!, which this "
                 "CPU lacks",
                 core, set);
        return false;
    }
#endif
    return true;
}

typedef struct ob_state {
    float *w_gu;   /* [d][2f] (gated) or [d][f] */
    float *w_down; /* [f][d] */
    float *b_gate, *b_up, *b_down;
    float *g;     /* [T][2f] or [T][f] */
    size_t ncols; /* 2f or f */
} ob_state;

static float *dup_floats(const float *src, size_t n)
{
    float *p = malloc(n * sizeof(float));
    if (p != NULL && src != NULL) {
        memcpy(p, src, n * sizeof(float));
    }
    return p;
}

void ffn__peer_openblas_free(ffn_peer *p)
{
    ob_state *st = p->impl;
    if (st == NULL) {
        return;
    }
    free(st->w_gu);
    free(st->w_down);
    free(st->b_gate);
    free(st->b_up);
    free(st->b_down);
    free(st->g);
    free(st);
    p->impl = NULL;
}

int ffn__peer_openblas_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    const size_t d = p->shape.d, f = p->shape.f;
    const bool gated = ffn_act_gated(p->shape.act);
    if (p->wdtype != FFN_DT_FP32) {
        return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                            "the openblas peer has fp32 weights only, not '%s'",
                            ffn_dtype_name(p->wdtype));
    }
    char why[256];
    if (!kernels_runnable(why, sizeof why)) {
        return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0, "%s", why);
    }
    ob_state *st = calloc(1, sizeof *st);
    if (st == NULL) {
        return FFN_ENOMEM;
    }
    p->impl = st;
    st->ncols = gated ? 2 * f : f;
    st->w_gu = malloc(d * st->ncols * sizeof(float));
    st->w_down = dup_floats(w->w_down, f * d);
    st->g = malloc((p->T > 0 ? p->T : 1) * st->ncols * sizeof(float));
    bool ok = st->w_gu != NULL && st->w_down != NULL && st->g != NULL;
    if (ok && p->shape.bias) {
        st->b_gate = dup_floats(w->b_gate, f);
        st->b_down = dup_floats(w->b_down, d);
        ok = st->b_gate != NULL && st->b_down != NULL;
        if (gated) {
            st->b_up = dup_floats(w->b_up, f);
            ok = ok && st->b_up != NULL;
        }
    }
    if (!ok) {
        ffn__peer_openblas_free(p);
        return FFN_ENOMEM;
    }
    for (size_t i = 0; i < d; ++i) {
        memcpy(st->w_gu + i * st->ncols, w->w_gate + i * f, f * sizeof(float));
        if (gated) {
            memcpy(st->w_gu + i * st->ncols + f, w->w_up + i * f, f * sizeof(float));
        }
    }
    snprintf(p->desc, sizeof p->desc, "openblas %s (%s)",
             p->T == 1 ? "sgemv+act+sgemv" : "sgemm+act+sgemm", openblas_get_corename());
    return 0;
}

int ffn__peer_openblas_forward(ffn_peer *p, const float *x, float *y)
{
    ob_state *st = p->impl;
    const size_t d = p->shape.d, f = p->shape.f, T = p->T, nc = st->ncols;
    if (T == 0) {
        return 0;
    }
    /* The thread count is process-wide in OpenBLAS: set it for each call so that peers with
     * different settings can share a process. */
    openblas_set_num_threads(p->threads > 0 ? p->threads : openblas_get_num_procs());
    float beta = 0.0f;
    if (st->b_down != NULL) {
        for (size_t t = 0; t < T; ++t) {
            memcpy(y + t * d, st->b_down, d * sizeof(float));
        }
        beta = 1.0f;
    }
    if (T == 1) {
        cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)d, (blasint)nc, 1.0f, st->w_gu, (blasint)nc,
                    x, 1, 0.0f, st->g, 1);
        ffn__peer_act_rows(p->shape.act, 1, f, nc, st->g, st->b_gate, st->b_up);
        cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)f, (blasint)d, 1.0f, st->w_down, (blasint)d,
                    st->g, 1, beta, y, 1);
        return 0;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)T, (blasint)nc, (blasint)d,
                1.0f, x, (blasint)d, st->w_gu, (blasint)nc, 0.0f, st->g, (blasint)nc);
    ffn__peer_act_rows(p->shape.act, T, f, nc, st->g, st->b_gate, st->b_up);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)T, (blasint)d, (blasint)f, 1.0f,
                st->g, (blasint)nc, st->w_down, (blasint)d, beta, y, (blasint)d);
    return 0;
}

const char *ffn__peer_openblas_version(void)
{
    return openblas_get_config();
}

#else /* !FFNROOF_HAVE_OPENBLAS */

int ffn__peer_openblas_init(ffn_peer *p, const ffn_kweights *w, ffn_diag *diag)
{
    (void)p;
    (void)w;
    return ffn_diag_set(diag, FFN_EUNSUPPORTED, NULL, 0, 0,
                        "ffnroof was built without OpenBLAS (pkg-config openblas not found)");
}
int ffn__peer_openblas_forward(ffn_peer *p, const float *x, float *y)
{
    (void)p;
    (void)x;
    (void)y;
    return FFN_EUNSUPPORTED;
}
void ffn__peer_openblas_free(ffn_peer *p)
{
    (void)p;
}
const char *ffn__peer_openblas_version(void)
{
    return "not built";
}

#endif
