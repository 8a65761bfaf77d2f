#!/usr/bin/env bash
# The main job on built-in defaults: install what is missing, build ffnroof, write the quick
# report of this host (calibrate, bench LLaMA-2-7B- and Mixtral-shaped layers, predict them on
# datacenter devices, roofline plot) to results/quick/, then print the FFN of LLaMA-2-7B on an
# H100 SXM.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFFNROOF_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ffnroof >/dev/null
./build/cli/ffnroof report --quick --force --out results/quick
echo
./build/cli/ffnroof predict --hw h100-sxm --model llama2-7b "$@"
