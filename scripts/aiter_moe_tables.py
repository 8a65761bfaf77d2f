#!/usr/bin/env python3
"""ROCm aiter's tuned fused-MoE tables as ffnroof MoE op tables, one per AMD device.

aiter (github.com/ROCm/aiter, MIT) ships the fused-MoE configurations its tuner picked
(aiter/configs/tuned_fmoe.csv and aiter/configs/model_configs/*_tuned_fmoe*.csv), each row with
the time of the chosen kernels on the tuning GPU (`us`: the grouped GEMMs, stage 1 with its fused
activation and stage 2, or the one-stage kernel; the routing sort and the input's quantisation
are outside it: csrc/ck_gemm_moe_2stages_codegen/gemm_moe_tune.py). This writes those rows in
the layout `ffnroof fit --data` reads (docs/formats.md, "Op tables") with `# timed: gemms`, so
that `fit --check` compares them with the fused-MoE model's grouped GEMMs (docs/validation.md,
"Fused MoE layers on AMD GPUs"). Nothing is fitted to them.

  scripts/aiter_moe_tables.py AITER_GIT_DIR COMMIT OUT_DIR

Rows kept: gated experts (use_g1u1 1), SiLU, the routed weight applied in stage 2
(doweight_stage1 0), a time above zero, a format ffnroof has (bf16; fp8 per token or per
tensor as fp8; fp8 per 1x128 blocks as fp8-block; fp4 weights per 1x32 with fp4, bf16 or fp8
activations as mxfp4, w4a16_mxfp4 or w4a8_mxfp4_mxfp8). A configuration's rows whose time
repeats another token count's to the last digit are left out: the tuner copies a result to the
token counts it did not run. The tuner routes each token to the top-k of random scores (or
round-robin); the tables say `balanced`, the collector's even draw, which gives every expert
its share as random routing does on average. Devices by aiter's `cu_num`: 304 compute units is
the MI300X (and the MI325X: the same GPU, gfx942), 256 the MI355X (and the MI350X, gfx950);
80-CU parts have no spec here and are left out.
"""
import collections
import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_table  # noqa: E402

DEVICES = {
    "304": ("mi300x", "AMD Instinct MI300X (gfx942, 304 CUs; aiter cu_num 304, as the MI325X)"),
    "256": ("mi355x", "AMD Instinct MI355X (gfx950, 256 CUs; aiter cu_num 256, as the MI350X)"),
}


def fmt_of(row):
    w, a, q = row["q_dtype_w"], row["q_dtype_a"], row["q_type"]
    if q == "QuantType.No" and w == "torch.bfloat16":
        return "bfloat16"
    if "float8" in w and q in ("QuantType.per_Token", "QuantType.per_Tensor"):
        return "fp8"
    if "float8" in w and q == "QuantType.per_1x128":
        return "fp8_block"
    if "float4" in w and q == "QuantType.per_1x32":
        if "float4" in a:
            return "mxfp4"
        if a == "torch.bfloat16":
            return "w4a16_mxfp4"
        if "float8" in a:
            return "w4a8_mxfp4_mxfp8"
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    git_dir, commit, out_dir = sys.argv[1:]
    names = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "--name-only", commit],
                           check=True, capture_output=True, text=True).stdout.split()
    files = sorted(n for n in names if n.endswith(".csv") and "tuned_fmoe" in n
                   and "untuned" not in n and n.startswith("aiter/configs/"))
    configs = collections.defaultdict(list)
    for f in files:
        text = subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{f}"], check=True,
                              capture_output=True, text=True).stdout
        for row in csv.DictReader(io.StringIO(text)):
            try:
                if row["cu_num"] not in DEVICES or row["use_g1u1"] != "1":
                    continue
                if row["doweight_stage1"] != "0" or "Silu" not in row["act_type"]:
                    continue
                us = float(row["us"])
            except (KeyError, ValueError):
                continue
            fmt = fmt_of(row)
            if fmt is None or not us > 0:
                continue
            key = (row["cu_num"], fmt, row["model_dim"], row["inter_dim"], row["expert"],
                   row["topk"])
            stage = "1stage" if row.get("run_1stage") == "1" else "2stage"
            configs[key].append((int(row["token"]), us, stage, f))
    by_device = collections.defaultdict(list)
    for key, rows in configs.items():
        seen = collections.Counter(round(r[1], 4) for r in rows)
        tokens = set()
        for tok, us, stage, f in sorted(rows):
            if seen[round(us, 4)] > 1 or tok in tokens:  # copied, or the same shape twice
                continue
            tokens.add(tok)
            by_device[key[0]].append((key, tok, us, stage))
    os.makedirs(out_dir, exist_ok=True)
    for cu, rows in sorted(by_device.items()):
        name, label = DEVICES[cu]
        path = os.path.join(out_dir, f"aiter-{name}_moe.tsv.gz")
        lines = [
            f"# source: github.com/ROCm/aiter@{commit} aiter/configs/tuned_fmoe.csv and "
            "aiter/configs/model_configs/*_tuned_fmoe*.csv (MIT, Copyright Advanced Micro "
            "Devices, Inc.), converted by scripts/aiter_moe_tables.py",
            f"# version: aiter {commit[:12]}",
            f"# device: {label}",
            "# op_name: moe",
            "# timed: gemms",
            "# distribution: balanced",
            "# moe_tp_size: 1",
            "# moe_ep_size: 1",
        ]
        cells = [["aiter_fmoe", fmt, tok, d, f, k, e, f"{us / 1000:.6g}"]
                 for (_, fmt, d, f, e, k), tok, us, stage in sorted(rows)]
        op_table.write(path, lines, ["kernel_source", "moe_dtype", "num_tokens", "hidden_size",
                                     "inter_size", "topk", "num_experts", "latency"], cells)


if __name__ == "__main__":
    main()
