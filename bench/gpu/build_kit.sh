#!/bin/bash
# Build the GPU calibration kit on a GPU machine (sourced by device_run*.sh): the machine's nvcc
# for sm_90, with the toolkit's cuBLAS, else the one PyTorch's wheels carry. $1: the binary to
# write; $2: the log the compiler's messages go to. Returns non-zero when neither build works.
build_kit() {
    local bin=$1 log=$2
    command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
    nvcc -O3 -std=c++17 -arch=sm_90 -o "$bin" bench/gpu/ffn_gpu_calib.cu -lcublas 2> "$log" &&
        return 0
    local cbl
    cbl=$(python3 -c 'import nvidia.cublas as m; print(list(m.__path__)[0])') || return 1
    nvcc -O3 -std=c++17 -arch=sm_90 -I"$cbl/include" -o "$bin" bench/gpu/ffn_gpu_calib.cu \
        -L"$cbl/lib" -l:libcublas.so.13 -Xlinker -rpath="$cbl/lib" 2>> "$log"
}
