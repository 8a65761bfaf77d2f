/* The setup bench_sim and bench_sweep share: `--seconds S` and `--data REPO_DIR` on the command
 * line, then the H100 spec and the three models both time (LLaMA-2-7B, Mixtral-8x7B,
 * DeepSeek-V3) loaded from the repository. Header-only: bench/CMakeLists.txt makes one
 * executable per bench_*.c. */
#ifndef FFNROOF_BENCH_MODELS_H
#define FFNROOF_BENCH_MODELS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model.h"
#include "ffnroof/model_load.h"

typedef struct bench_models {
    double seconds; /* per case */
    ffn_hw hw;
    ffn_model llama, mixtral, dsv3;
} bench_models;

static int bench_fail(const char *prog, const ffn_diag *d)
{
    fprintf(stderr, "%s: %s:%d:%d: %s\n", prog, d->file, d->line, d->col, d->msg);
    return 2;
}

/* Parse the options and load; 0, or 2 after a message on stderr. */
static int bench_models_setup(const char *prog, int argc, char **argv, bench_models *b)
{
    const char *dir = FFNROOF_BENCH_SOURCE_DIR;
    b->seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            b->seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--seconds S] [--data REPO_DIR]\n", prog);
            return 2;
        }
    }
    static const char *const models[3] = {"llama2-7b", "mixtral-8x7b", "deepseek-v3"};
    ffn_model *const out[3] = {&b->llama, &b->mixtral, &b->dsv3};
    char p[1024];
    ffn_diag d;
    snprintf(p, sizeof p, "%s/hw/h100-sxm.yaml", dir);
    if (ffn_hw_load(p, &b->hw, &d)) return bench_fail(prog, &d);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/models/%s.yaml", dir, models[i]);
        if (ffn_model_load(p, out[i], &d)) return bench_fail(prog, &d);
    }
    return 0;
}

#endif
