#!/usr/bin/env bash
# Fits the attention kernels and the scale-up collectives of the NVIDIA specs to the measured op
# tables in data/calib/ (aiconfigurator's collector: vLLM 0.24.0 on the H100, H200 and B200,
# SGLang 0.5.10 on the A100; NCCL and the engine's custom all-reduce; data/calib/README.md), and
# the AMD specs' custom all-reduce to public kernel tables (scripts/amd_allreduce_tables.py), and
# writes each fitted `attention:` and `collectives:` block into hw/DEVICE.yaml
# (docs/model.md, "Attention" and "Collectives").
#   scripts/fit_attention_specs.sh [BUILD_DIR]      (default build/)
# Per device, each on top of the last: prefill attention (its compute fraction is the one decode
# holds), decode attention, NCCL's four collectives, the custom all-reduce.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/cli/ffnroof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fit_device() { # DEVICE PREFILL DECODE NCCL CUSTOM
  local dev=$1 spec=hw/$1.yaml step=0
  shift
  for table in "$@"; do
    local out=$tmp/$dev-$step.yaml
    echo "== ffnroof fit --hw $(basename "$spec") --data $table"
    "$bin" fit --hw "$spec" --data "data/calib/$table" --out "$out"
    spec=$out
    step=$((step + 1))
  done
  scripts/spec_blocks.py "hw/$dev.yaml" "$spec"
}

fit_device h100-sxm aic-h100_sxm_attention_vllm_0.24.0_context_attention.tsv.gz \
  aic-h100_sxm_attention_vllm_0.24.0_generation_attention.tsv.gz \
  aic-h100_sxm_comm_nccl_2.29.2_nccl.tsv.gz aic-h100_sxm_comm_vllm_0.24.0_custom_allreduce.tsv.gz
fit_device h200 aic-h200_sxm_attention_vllm_0.24.0_context_attention.tsv.gz \
  aic-h200_sxm_attention_vllm_0.24.0_generation_attention.tsv.gz \
  aic-h200_sxm_comm_nccl_2.29.2_nccl.tsv.gz aic-h200_sxm_comm_vllm_0.24.0_custom_allreduce.tsv.gz
fit_device b200 aic-b200_sxm_attention_vllm_0.24.0_context_attention.tsv.gz \
  aic-b200_sxm_attention_vllm_0.24.0_generation_attention.tsv.gz \
  aic-b200_sxm_comm_nccl_2.29.2_nccl.tsv.gz aic-b200_sxm_comm_vllm_0.24.0_custom_allreduce.tsv.gz
fit_device a100-sxm-80gb aic-a100_sxm_attention_sglang_0.5.10_context_attention.tsv.gz \
  aic-a100_sxm_attention_sglang_0.5.10_generation_attention.tsv.gz \
  aic-a100_sxm_comm_nccl_2.27.3_nccl.tsv.gz aic-a100_sxm_comm_sglang_0.5.10_custom_allreduce.tsv.gz
# AMD: vLLM's custom all-reduce only, from the public kernel tables of scripts/amd_allreduce_tables.py
# (the MI325X takes the MI300X's: the same gfx942 GPU and xGMI links)
fit_device mi300x vllm-mi300x_custom_allreduce.tsv.gz
fit_device mi325x vllm-mi300x_custom_allreduce.tsv.gz
fit_device mi355x vllm-mi355x_custom_allreduce.tsv.gz
