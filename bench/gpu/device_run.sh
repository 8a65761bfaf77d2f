#!/bin/bash
# One calibration run on an NVIDIA GPU machine (bench/gpu/README.md, "Runs"): machine facts,
# the kit built there and run in full (CUDA-graph timing), the PyTorch check of the MLP
# operators (torch_ffn_check.py), and the kit's quick grid with host launches (--no-graph) to show what the launch
# rate does to short kernels. Everything lands in $OUT (default ./gpu-run), at most 8 files.
set -u
O=${OUT:-gpu-run}
mkdir -p "$O"
command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
{
    date -u
    nvidia-smi
    nvidia-smi -q -d CLOCK,POWER,MEMORY | grep -v '^$'
    nvcc --version | tail -2
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    nproc
} > "$O/machine.txt" 2>&1
K=/tmp/ffn_gpu_calib
. bench/gpu/build_kit.sh
build_kit $K "$O/kit.log" || exit 1
nvidia-smi dmon -s pc -d 2 > "$O/dmon.txt" 2>&1 &
dmon=$!
t0=$(date +%s)
timeout 300 $K --out "$O/h200-kit.csv" 2>> "$O/kit.log"
rc=$?
if [ $rc != 0 ] && [ $rc != 124 ]; then
    echo "graph-timed kit run failed (rc $rc); rerunning with --no-graph" >> "$O/kit.log"
    timeout 200 $K --no-graph --out "$O/h200-kit.csv" 2>> "$O/kit.log"
fi
echo "kit: $(($(date +%s) - t0)) s" >> "$O/kit.log"
t0=$(date +%s)
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/torch_ffn_check.py --out "$O/h200-torch.csv" \
    2> "$O/torch.log"
echo "torch check: rc $?, $(($(date +%s) - t0)) s" >> "$O/torch.log"
timeout 60 $K --quick --no-graph --max-tp 1 --out "$O/h200-kit-quick-nograph.csv" 2>> "$O/kit.log"
kill $dmon 2> /dev/null
{
    echo "== after"
    date -u
    nvidia-smi -q -d CLOCK,PERFORMANCE | grep -v '^$'
} >> "$O/machine.txt" 2>&1
tail -n 4 "$O/kit.log" "$O/torch.log"
wc -l "$O"/*.csv
