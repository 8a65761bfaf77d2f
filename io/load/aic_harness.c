/* How each engine's collector timed an op table's GEMM rows (include/ffnroof/aic.h), so that the
 * fit predicts what was measured and not a different experiment. From the collector scripts of
 * github.com/ai-dynamo/aiconfigurator at 095f58a51c4ca8e61b66ec108d86f223f8d559ce (Apache-2.0):
 *  - every engine times its linear layer as it runs in serving: a bf16 input [m, k], quantised on
 *    the way in for fp8, fp8-block and nvfp4 (vLLM's RowParallelLinear with its quant config,
 *    SGLang's per-token / per-token-group / fp4 quantisation kernels before the GEMM, TRT-LLM's
 *    Linear module), and a bf16 output: engine_linear;
 *  - the timed loop cycles through separate copies of the layer (vLLM: 6 for bf16 and fp8, 1 for
 *    fp8_block and nvfp4; SGLang: up to 6; TRT-LLM: ceil(L2 / weight bytes), 1..5) "so that
 *    repeated calls span more than the GPU L2 cache" (collector/trtllm/collect_gemm.py): the rows
 *    are read as cold (weights from memory). Placing the copies' weights in the L2 where they
 *    fit made the fits worse, not better (docs/model.md, "Op tables"), so the rows are not
 *    marked warm;
 *  - the loop is replayed as a CUDA graph (collector/helper.py benchmark_with_power), except
 *    vLLM's fp8_block rows, timed eagerly (use_cuda_graph=False): such a call never takes less
 *    than the host's time to issue it, which depends on the kernel's Python path (FlashInfer's
 *    for m <= 16, DeepGEMM's above), so each eager row gets its kernel's floor, the median of
 *    that kernel's rows whose device time is surely under it (eager_floor_s; the rows at the
 *    floor are then predicted at it, whatever the device time under it). */
#include "ffnroof/aic.h"
#include "ffnroof/sort.h"

#include <stdlib.h>

static bool timed_eagerly(const ffn_aic_table *t, const ffn_fit_point *p)
{
    return t->engine == FFN_ENGINE_VLLM && p->wdtype == FFN_DT_FP8_BLOCK;
}

/* A row whose device time is surely under any host floor: a few rows and a few MiB of weights
 * (at most 64 rows, 16 MiB). */
static bool surely_host_bound(const ffn_fit_point *p)
{
    return p->m <= 64 &&
           (double)p->n * (double)p->k * ffn_dtype_bits(p->wdtype) / 8.0 <= 16777216.0;
}

/* Kernel k's eager floor: the median time of its surely host-bound eager rows, else (a table
 * without such rows) the 30th percentile of all its eager rows; 0 when it has none (or no
 * memory: then no floor, as for a graph-timed row). */
static double kernel_floor(const ffn_aic_table *t, uint16_t k)
{
    double *v = malloc((t->n_pts ? t->n_pts : 1) * sizeof *v);
    if (!v) return 0.0;
    double f = 0.0;
    for (int pass = 0; pass < 2 && !(f > 0); pass++) {
        size_t n = 0;
        for (size_t i = 0; i < t->n_pts; i++)
            if ((!t->pt_kernel || t->pt_kernel[i] == k) && timed_eagerly(t, &t->pts[i]) &&
                (pass || surely_host_bound(&t->pts[i])))
                v[n++] = t->pts[i].time_s;
        if (!n) continue;
        ffn_sort_doubles(v, n);
        f = pass ? v[(n - 1) * 3 / 10] : v[(n - 1) / 2];
    }
    free(v);
    return f;
}

void ffn_aic_mark_harness(ffn_aic_table *t)
{
    if (!t || t->op != FFN_AIC_GEMM) return;
    double floor_of[FFN_AIC_MAX_KERNELS] = {0};
    for (size_t k = 0; k < FFN_AIC_MAX_KERNELS && (k < t->n_kernels || k == 0); k++)
        floor_of[k] = kernel_floor(t, (uint16_t)k);
    for (size_t i = 0; i < t->n_pts; i++) {
        ffn_fit_point *p = &t->pts[i];
        const uint16_t k =
            t->pt_kernel && t->pt_kernel[i] < FFN_AIC_MAX_KERNELS ? t->pt_kernel[i] : 0;
        p->engine_linear = true;
        p->no_harness = true;
        p->eager_floor_s = timed_eagerly(t, p) ? floor_of[k] : 0.0;
    }
}
