/* A plan's layout as a serving engine's launch command (include/ffnroof/plan_report.h,
 * docs/plan.md "Launch commands"): the parallel sizes, the batch, the context, the memory
 * fraction, the KV-cache dtype and the quantization, in the flags each engine documents:
 * vLLM `vllm serve` (docs.vllm.ai, engine arguments), SGLang `sglang.launch_server`
 * (docs.sglang.io, server arguments), TensorRT-LLM `trtllm-serve` (its command reference).
 * Where the engine cannot express the layout, the note says why and the command is the
 * nearest one it can run. */
#include "ffnroof/plan_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t n, len;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->len >= b->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->len, b->n - b->len, fmt, ap);
    va_end(ap);
    if (k > 0) b->len = b->len + (size_t)k < b->n ? b->len + (size_t)k : b->n;
}

/* The weights' format as a flag, or a note that a checkpoint of it is needed. */
static void quantization(sbuf *b, sbuf *note, ffn_engine e, ffn_dtype w)
{
    switch (w) {
    case FFN_DT_BF16:
    case FFN_DT_FP16:
    case FFN_DT_FP32:
        return;
    case FFN_DT_FP8:
        if (e == FFN_ENGINE_TRTLLM)
            put(note, "an fp8 checkpoint (TensorRT-LLM reads its quantization from it); ");
        else
            put(b, " --quantization fp8");
        return;
    default:
        put(note, "a %s checkpoint (the engine reads its quantization from it); ",
            ffn_dtype_name(w));
        return;
    }
}

int ffn_plan_emit(char *buf, size_t n, char *note, size_t nn, ffn_engine e, const ffn_model *m,
                  const ffn_plan *pl, const ffn_plan_layout *L)
{
    if (!buf || !n || !note || !nn || !m || !pl || !L) return FFN_EINVAL;
    sbuf b = {buf, n, 0}, w = {note, nn, 0};
    buf[0] = note[0] = '\0';
    const ffn_plan_opts *o = &pl->opts;
    typedef unsigned long long ull;
    const char *model = m->checkpoint[0] ? m->checkpoint : m->name;
    const uint64_t N = L->tp * L->dp,
                   ctx = o->prompt + (o->phase == FFN_PLAN_PREFILL ? 0 : o->output);
    const ull batch = L->max_batch ? L->max_batch : 1;
    const bool kv8 = ffn_dtype_bits(o->kv_dtype) == 8;
    if (!m->checkpoint[0]) put(&w, "'%s' stands for the model's checkpoint; ", m->name);
    switch (e) {
    case FFN_ENGINE_VLLM:
        put(&b, "vllm serve %s --tensor-parallel-size %llu", model, (ull)L->tp);
        if (L->dp > 1) put(&b, " --data-parallel-size %llu", (ull)L->dp);
        if (L->ep > 1) {
            put(&b, " --enable-expert-parallel");
            if (L->ep != N)
                put(&w, "vLLM spreads the experts over all TP x DP = %llu devices, not EP %llu; ",
                    (ull)N, (ull)L->ep);
        }
        if (L->pp > 1) put(&b, " --pipeline-parallel-size %llu", (ull)L->pp);
        put(&b, " --max-num-seqs %llu --max-model-len %llu --gpu-memory-utilization %.2f",
            (ull)(L->dp > 1 ? (batch + L->dp - 1) / L->dp : batch), (ull)ctx, o->mem_utilization);
        if (L->dp > 1) put(&w, "--max-num-seqs is per data-parallel rank; ");
        if (kv8) put(&b, " --kv-cache-dtype fp8");
        quantization(&b, &w, e, o->wdtype);
        break;
    case FFN_ENGINE_SGLANG:
        put(&b, "python -m sglang.launch_server --model-path %s --tp-size %llu", model, (ull)N);
        if (L->dp > 1) put(&b, " --dp-size %llu --enable-dp-attention", (ull)L->dp);
        if (L->ep > 1) put(&b, " --ep-size %llu", (ull)L->ep);
        if (L->pp > 1) put(&b, " --pp-size %llu", (ull)L->pp);
        put(&b, " --max-running-requests %llu --context-length %llu --mem-fraction-static %.2f",
            batch, (ull)ctx, o->mem_utilization);
        if (kv8) put(&b, " --kv-cache-dtype fp8_e4m3");
        quantization(&b, &w, e, o->wdtype);
        break;
    case FFN_ENGINE_TRTLLM: {
        /* the KV cache's share of the memory left after the weights and the buffers */
        const double cap = pl->hw ? pl->hw->mem_capacity_bytes : 0;
        const double left = cap - L->mem.weight_bytes - L->mem.activation_bytes;
        double f =
            left > 0 ? (L->mem.usable_bytes - L->mem.weight_bytes - L->mem.activation_bytes) / left
                     : 0.9;
        if (f > 0.95) f = 0.95;
        if (f < 0.05) f = 0.05;
        put(&b, "trtllm-serve %s --tp_size %llu", model, (ull)N);
        if (L->pp > 1) put(&b, " --pp_size %llu", (ull)L->pp);
        if (L->ep > 1) put(&b, " --ep_size %llu", (ull)L->ep);
        put(&b,
            " --max_batch_size %llu --max_seq_len %llu --kv_cache_free_gpu_memory_fraction %.2f",
            batch, (ull)ctx, f);
        if (L->dp > 1) {
            put(&b, " --extra_llm_api_options attention_dp.yaml");
            put(&w, "attention_dp.yaml holds 'enable_attention_dp: true'; ");
            if (L->tp > 1)
                put(&w,
                    "TensorRT-LLM's attention DP spans all %llu devices, not DP %llu x TP "
                    "%llu; ",
                    (ull)N, (ull)L->dp, (ull)L->tp);
        }
        if (kv8) put(&w, "fp8 KV cache: kv_cache_config.dtype fp8 in the options file; ");
        quantization(&b, &w, e, o->wdtype);
        break;
    }
    default:
        return FFN_EINVAL;
    }
    if (L->replicas > 1)
        put(&w, "%llu replicas of this command behind a router; ", (ull)L->replicas);
    if (w.len >= 2 && note[w.len - 2] == ';') note[w.len - 2] = '\0';
    return b.len < n ? 0 : FFN_ENOSPACE;
}
