#!/usr/bin/env bash
# The main job on built-in defaults: install what is missing, build ffnroof, and predict the FFN
# of LLaMA-2-7B on an H100 SXM (prefill at 2048 tokens and decode at batch 1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFFNROOF_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ffnroof >/dev/null
./build/cli/ffnroof predict --hw h100-sxm --model llama2-7b "$@"
