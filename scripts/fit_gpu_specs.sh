#!/usr/bin/env bash
# Fits the efficiency of the NVIDIA specs to the measured op tables in data/calib/ (aiconfigurator's
# GEMM tables: vLLM on the H100, H200 and B200, SGLang on the A100; docs/model.md "GPU dtypes")
# and writes each fitted `efficiency:` and `uncertainty:` block into hw/DEVICE.yaml.
#   scripts/fit_gpu_specs.sh [BUILD_DIR]      (default build/)
# Per device, one dtype class after another, each on top of the last:
#   1. bf16: wave utilisation, launch, the GEMM size ramp, the one-row fraction, the latency
#      floor of GEMMs with few tiles and long reductions (the warm L2
#      fraction stays the spec's: measured by the GPU kit on the H200, not fitted to tables whose
#      warm rows mix weights, inputs and outputs in the L2);
#   2. each quantised format (fp8, fp8-block, nvfp4): its utilisation, fixed cost, one-row
#      fraction and quantisation cost per row, the bf16 parameters held. vLLM times its fp8-block
#      linear layers eagerly (no CUDA graph), so their fixed cost is not the device's: it is set to
#      the same device's fp8 one (a quantisation kernel and one GEMM alike) and not fitted;
#   3. the range: the residuals over every FFN-shaped row of every dtype.
# Every step minimises the absolute log errors (--fit l1): the tables' outlying kernels weigh as
# one row each, not as their squared error.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/cli/ffnroof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# dup_launch SPEC FROM TO: give dtype TO the fitted launch_by_dtype of FROM
dup_launch() {
  python3 - "$@" <<'PY'
import re, sys
path, a, b = sys.argv[1:4]
s = open(path).read()
i = s.index("  launch_by_dtype:\n")
j = i + len("  launch_by_dtype:\n")
while s.startswith("    ", j):
    j = s.index("\n", j) + 1
blk = s[i:j]
m = re.search(r"\n    %s: ([^\n]+)" % re.escape(a), blk)
blk = re.sub(r"\n    %s: [^\n]+" % re.escape(b), "", blk)  # the entry it had, replaced
blk = blk.replace("  launch_by_dtype:\n", "  launch_by_dtype:\n    %s: %s\n" % (b, m.group(1)), 1)
s = s[:i] + blk + s[j:]
open(path, "w").write(s)
PY
}

fit_device() { # DEVICE TABLE DTYPES...
  local dev=$1 table=$2
  shift 2
  local spec=hw/$dev.yaml step=0 flags="util,launch,memory-ramp,gemv,pipe,overlap,l1"
  local log=$tmp/$dev.log
  : >"$log"
  for dt in "$@"; do
    local out=$tmp/$dev-$step.yaml
    local f=$flags
    if [ "$dt" != bf16 ]; then
      f="util,gemv-dt,quant-row,hold-max,l1"
      if [ "$dt" = fp8-block ] && [[ "$table" == *vllm* ]]; then
        dup_launch "$spec" fp8 fp8-block
      else
        f+=",launch-dt"
      fi
    fi
    echo "ffnroof fit --hw $(basename "$spec") --data $table --dtype $dt --fit $f" >>"$log"
    "$bin" fit --hw "$spec" --data "$table" --dtype "$dt" --fit "$f" --out "$out" |
      grep -E '^(fitted|dtype|[a-z0-9-]+ +\(all\))' >>"$log"
    spec=$out
    step=$((step + 1))
  done
  # the range over every dtype: a fit of nothing (hold-max alone) writes the residuals
  "$bin" fit --hw "$spec" --data "$table" --fit hold-max --out "$tmp/$dev-final.yaml" |
    grep -E '\(all\)' >>"$log"
  cat "$log"
  {
    echo "Fitted by scripts/fit_gpu_specs.sh to $table"
    echo "(aiconfigurator's collector inside the engine; data/calib/README.md), one dtype class on"
    echo "top of the last:"
    grep '^ffnroof fit' "$log" | sed -E 's/--hw [^ ]+-[0-9]+\.yaml/--hw (the last)/; s|--data [^ ]+|--data TABLE|' 
    echo "Residuals over every FFN-shaped row (n, k >= 256), |predicted/measured - 1|:"
    grep -E '\(all\)' "$log" | tail -n "$(($# + 1))" | awk '{printf "  %s: %s rows, median %s, p90 %s\n", $1, $3, $4, $5}'
    echo "The rows' harness (the engine's linear layer with its quantisation kernel, CUDA-graph or"
    echo "eager timing, weights cold) as io/load/aic_harness.c reads the collector."
  } >"$tmp/$dev-source.txt"
  scripts/spec_efficiency.py "hw/$dev.yaml" "$tmp/$dev-final.yaml" "$tmp/$dev-source.txt"
}

fit_device h100-sxm data/calib/aic-h100_sxm_gemm_vllm_0.24.0_gemm.tsv.gz bf16 fp8 fp8-block
fit_device h200 data/calib/aic-h200_sxm_gemm_vllm_0.24.0_gemm.tsv.gz bf16 fp8 fp8-block
fit_device b200 data/calib/aic-b200_sxm_gemm_vllm_0.24.0_gemm.tsv.gz bf16 fp8 fp8-block nvfp4
fit_device a100-sxm-80gb data/calib/aic-a100_sxm_gemm_sglang_0.5.10_gemm.tsv.gz bf16
