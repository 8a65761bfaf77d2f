#!/bin/bash
# Warm-weights run on an NVIDIA GPU machine (bench/gpu/README.md, "Runs"): the
# kit built there, run with --warm (one buffer of each kind reused call after call, so what fits
# in L2 stays there) over the bf16 grid, then its quick grid cold (rotated buffers) in the same
# minute for a paired look. `ffnroof fit --hw h200 --data warm.csv --check` predicts the warm
# rows with the weights placed where they fit, as `--weights hot` does. Everything lands in
# $OUT (default ./gpu-run-warm).
set -u
O=${OUT:-gpu-run-warm}
mkdir -p "$O"
command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
{
    date -u
    nvidia-smi
    nvidia-smi -q -d CLOCK,POWER | grep -v '^$'
    nvcc --version | tail -2
} > "$O/machine.txt" 2>&1
K=/tmp/ffn_gpu_calib
. bench/gpu/build_kit.sh
build_kit $K "$O/kit.log" || exit 1
t0=$(date +%s)
timeout 240 $K --warm --dtypes bf16 --out "$O/kit-warm.csv" 2>> "$O/kit.log"
echo "warm kit: rc $?, $(($(date +%s) - t0)) s" >> "$O/kit.log"
t0=$(date +%s)
timeout 120 $K --quick --dtypes bf16 --out "$O/kit-cold-quick.csv" 2>> "$O/kit.log"
echo "cold quick kit: rc $?, $(($(date +%s) - t0)) s" >> "$O/kit.log"
{
    echo "== after"
    date -u
    nvidia-smi -q -d CLOCK,PERFORMANCE | grep -v '^$'
} >> "$O/machine.txt" 2>&1
tail -n 3 "$O/kit.log"
wc -l "$O"/*.csv
