#!/usr/bin/env bash
# The per-ISA kernel table of BENCHMARKS.md: every ISA level this host runs, each in
# its own bench_kernels run against the peer that fits it, on the issue's shapes (prefill
# T=512 d=2048 f=5632 SwiGLU, decode T=1 d=4096 f=11008), plus the portable kernel beside the
# scalar reference on a prefill small enough for the reference, and the issue-4 table of the
# commit before the driver (BEFORE=<build dir of that commit>) in the same window.
#   bench/isa_table.sh [--reps N] [--threads N] [--out DIR] [--before BUILD_DIR]
# Writes DIR/<level>.txt (bench_kernels' output) and prints where. Run it on a quiet machine:
# every figure is a median of interleaved rounds, but other processes still lower the roofs.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=9
threads=$(nproc)
out=results/isa-table
before=""
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --before) before=$2; shift 2 ;;
        *) echo "usage: bench/isa_table.sh [--reps N] [--threads N] [--out DIR] [--before BUILD_DIR]" >&2; exit 2 ;;
    esac
done
bk=build-rel/bench/bench_kernels
[ -x "$bk" ] || { cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DFFNROOF_BUILD_TESTS=OFF >/dev/null &&
                  cmake --build build-rel -j"$(nproc)" --target bench_kernels ffnroof >/dev/null; }
mkdir -p "$out"
usable=$(build-rel/cli/ffnroof --version | sed -n 2p)
{ date -u +"%F %T UTC"; uptime; lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3"; echo "$usable"; git rev-parse --short HEAD; } >"$out/host.txt"

run() { # name env... -- args...
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    echo "bench/isa_table.sh: $name" >&2
    env "${envs[@]}" "$bk" --threads "$threads" --reps "$reps" "$@" >"$out/$name.txt" 2>&1
}

isas=$(build-rel/cli/ffnroof cpu --format json | tr -d ' \n' | sed 's/.*"isa_usable":\[\([^]]*\)\].*/\1/' | tr -d '"' | tr ',' ' ')
# The host's best level with every kernel of the AVX-512 family, against OpenBLAS's AVX-512
# kernels and oneDNN. OpenBLAS 0.3.21 detects CPUs it knows; on one it does not (the Xeon of
# family 6 model 207 this was first run on) it falls back to its SSE3 "Prescott" kernels, so its
# SkylakeX (AVX-512) kernels are asked for by name; the table prints which one ran.
case " $isas " in
    *" avx512 "*)
        run best -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX -- \
            --kernels f32_ffn__avx512,bf16_ffn__avx512_,f16_ffn__avx512,bf16_ffn__avx512bf16,bf16_ffn__amx ;;
esac
case " $isas " in
    *" avx2 "*) run avx2 FFNROOF_ISA=avx2 OPENBLAS_CORETYPE=Haswell -- ;;
esac
run portable FFNROOF_ISA=portable OPENBLAS_CORETYPE=Haswell -- --kernels portable
run portable-vs-ref FFNROOF_ISA=portable -- --shape 64,1024,2816 --no-peers --kernels portable,ref
if [ -n "$before" ]; then
    # the pre-driver bench_kernels has no --kernels: it runs every kernel of that commit
    echo "bench/isa_table.sh: before" >&2
    env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX "$before/bench/bench_kernels" --threads "$threads" \
        --reps "$reps" >"$out/before.txt" 2>&1
fi
echo "bench/isa_table.sh: wrote $out/" >&2
