#!/usr/bin/env python3
"""Public timings of vLLM's custom all-reduce on AMD GPUs as ffnroof op tables.

The kernel tables of three public pull requests time vLLM's custom all-reduce (the kernel vLLM
and SGLang run for a tensor-parallel all-reduce below their 8 MiB buffer) on AMD GPUs, beside
the quantised all-reduces the requests add; this writes those timings, copied here as printed,
in the layout `ffnroof fit --data` reads for a custom all-reduce (docs/formats.md, "Op tables";
the columns of aiconfigurator's custom_allreduce tables, message_size in 2-byte elements,
latency in milliseconds), so that `ffnroof fit` gives the devices' `collectives:` blocks
(docs/model.md, "Collectives"; scripts/fit_attention_specs.sh):

  MI300X, 2 GPUs: ROCm/aiter pull request #801 ("[feature] [rocm] add quick allreduce",
    2025-08-11), its float16 kernel table, column "vllm cr", 4 KiB to 4 MiB (MI300-series, the
    only GPUs the request enables);
  MI300X, 4 GPUs: vllm-project/vllm pull request #19744 ("[Feature][Rocm] add quick all reduce
    for rocm", 2025-06-17), its TP=4 kernel table, column "baseline" (vLLM's custom all-reduce
    for these sizes), 2 KiB to 4 MiB;
  MI355X, 8 GPUs: vllm-project/vllm pull request #39080 ("[ROCM] Optimize all-reduce
    performances", 2026-04-06), its TP8 table (bf16, rows of 3072), column "vllm/us" (vLLM's
    kernel before the request), 4 to 256 tokens.

Messages of 8 MiB and more are left out: vLLM hands its custom all-reduce only messages below
its buffer (vllm/distributed/device_communicators/custom_all_reduce.py, max_size 8 MiB). The
requests do not say whether the kernels were timed in a CUDA/HIP graph; their small-message
times (6-7 us) are of the order of the graph rows of aiconfigurator's H200 table (4.4 us),
not of its eager rows (20 us), so the rows are marked `vllm_graph`.

  scripts/amd_allreduce_tables.py OUT_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_table  # noqa: E402

KIB, MIB = 1024, 1024 * 1024

TABLES = {
    "mi300x": {
        "device": "AMD Instinct MI300X (gfx942)",
        "dtype": "float16",
        "sources": [
            "github.com/ROCm/aiter/pull/801 description, float16 kernel table, tp2 column 'vllm cr' "
            "(2025-08-11; aiter: MIT)",
            "github.com/vllm-project/vllm/pull/19744 description, TP=4 kernel table, column 'baseline' "
            "(2025-06-17; vLLM: Apache-2.0)",
        ],
        "rows": [  # (gpus, bytes, us)
            (2, 4 * KIB, 7.07), (2, 8 * KIB, 7.58), (2, 16 * KIB, 7.53), (2, 32 * KIB, 7.30),
            (2, 64 * KIB, 7.66), (2, 128 * KIB, 8.70), (2, 256 * KIB, 11.45),
            (2, 512 * KIB, 17.13), (2, 1 * MIB, 28.15), (2, 2 * MIB, 49.67), (2, 4 * MIB, 93.79),
            (4, 2 * KIB, 7.18), (4, 16 * KIB, 7.26), (4, 32 * KIB, 7.58), (4, 256 * KIB, 14.39),
            (4, 512 * KIB, 14.65), (4, 1 * MIB, 22.91), (4, 2 * MIB, 36.64), (4, 4 * MIB, 63.86),
        ],
    },
    "mi355x": {
        "device": "AMD Instinct MI355X (gfx950)",
        "dtype": "bfloat16",
        "sources": [
            "github.com/vllm-project/vllm/pull/39080 description, TP8 table (bf16, dim=3072), column "
            "'vllm/us' (2026-04-06; vLLM: Apache-2.0)",
        ],
        "rows": [(8, t * 3072 * 2, us) for t, us in
                 ((4, 6.3), (8, 6.7), (16, 7.6), (32, 10.0), (64, 13.1), (128, 16.0), (256, 24.2))],
    },
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for dev, t in TABLES.items():
        head = ["# source: " + "; ".join(t["sources"]), "# framework: vLLM",
                "# version: PR kernel tables", f"# device: {t['device']}", "# op_name: all_reduce",
                f"# allreduce_dtype: {t['dtype']}",
                f"# latency is in milliseconds; {len(t['rows'])} rows"]
        rows = [["vLLM_custom_graph", gpus, nbytes // 2, f"{us / 1000:.5f}", "vllm_graph"]
                for gpus, nbytes, us in t["rows"]]
        op_table.write(os.path.join(sys.argv[1], f"vllm-{dev}_custom_allreduce.tsv.gz"), head,
                       ["kernel_source", "num_gpus", "message_size", "latency", "backend"], rows)


if __name__ == "__main__":
    main()
