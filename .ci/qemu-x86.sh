#!/usr/bin/env bash
# The x86 CPUs CI does not have, under qemu-user: the test suite and `ffnroof bench --verify` on
# an AVX2 CPU without AVX-512 (qemu's Haswell: AVX2, FMA, F16C) and on the x86-64 baseline
# (qemu64: SSE2, no AVX), from one release build in its own tree. On Haswell the bench must pick
# the avx2 kernels and on qemu64 the portable ones, for fp32, bf16 and fp16 and every
# activation and for the int8/int4 formats, and match the reference kernel. A test whose ISA feature or peer library the
# emulated CPU lacks skips with its reason (cr_skip); FFNROOF_EMULATED=1 tells the timing-based
# checks that time here is TCG's, not the CPU's.
#
# How every program runs emulated: CTest starts each suite through CMAKE_CROSSCOMPILING_EMULATOR
# (qemu-x86_64; the CPU model comes from QEMU_CPU) and .ci/qemu_exec.c, an LD_PRELOAD shim in the
# guest, turns every execve() of a program of this build tree (Criterion's per-test
# "boxfort-worker" re-exec, the CLI tests' ffnroof through /bin/sh) into qemu-x86_64 again;
# without it those run natively on the host's CPU. .ci/qemu_probe.c checks that it works.
#
# What does not run emulated, and why (TCG runs this code 20-100x slower than the host):
#  - kernels/matches_reference_every_activation_and_shape (630 kernel runs against a
#    double-precision oracle: over its 600 s limit under TCG). The native suite runs it for the
#    same portable and avx2 kernels (every kernel the CPU runs is tested); here the other
#    test_kernels tests (NaN/Inf, unaligned pointers, 1 vs 2 threads, argument checks, dispatch)
#    and the bench --verify cases below run them on the emulated CPU.
#  - moe/imbalance_one_when_balanced_and_grows_with_skew (routes 10^7 tokens: 5 s natively, over
#    its limit under TCG; sim/ code without an ISA path).
#  - test_cli_badinput (loader refusals of 64 MiB inputs: io/ code without an ISA path; over its
#    900 s limit under TCG) and test_cli_vocab (some 600 runs of the CLI to check how each
#    command parses its options: cli/ code without an ISA path; over its limit under TCG).
#  - qemu64 (the slowest to emulate for the kernels) leaves out the CLI suites but
#    test_cli_profiler: they run the simulator and loaders through the CLI, code without an ISA
#    path that Haswell runs; the sim/io suites stay, since glibc picks other libm and string
#    variants on a CPU without FMA or AVX2.
#  - Haswell: peers/onednn_fp32_matches_reference. qemu 7.2's TCG mis-executes oneDNN 2.6's AVX2
#    JIT (gelu_tanh, T=1: y = -0.41 for -0.53); the same AVX2 code passes on real silicon, which
#    this script checks natively with DNNL_MAX_CPU_ISA=AVX2 instead.
#   usage: .ci/qemu-x86.sh [build-dir]      (default: build-qx)
#   env:   FFNROOF_QEMU_CPUS="haswell qemu64"   the CPUs to run (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${1:-build-qx}
case $dir in /*) ;; *) dir=$root/$dir ;; esac
jobs=$(nproc 2>/dev/null || echo 2)

# qemu's Haswell without the system features TCG cannot emulate (PCID, x2APIC, TSC deadline,
# TSX): each would print a warning on every start, into the stderr the CLI tests read.
cpu_haswell="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
cpu_qemu64="qemu64"
skip_all="kernels/matches_reference_every_activation_and_shape"
skip_all+="|moe/imbalance_one_when_balanced_and_grows_with_skew"
skip_haswell="$skip_all|peers/onednn_fp32_matches_reference"
skip_qemu64="$skip_all"
suites_haswell="^test_cli_(badinput|vocab)$"
suites_qemu64="^test_cli_(badinput|predict|plan|report|faults|vocab)$"

scripts/deps.sh test
qemu=$(command -v qemu-x86_64) || {
    echo "qemu-x86.sh: 'qemu-x86_64' not found (apt-get install qemu-user)" >&2
    exit 2
}

t0=$(date +%s)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFFNROOF_BUILD_TESTS=ON \
    -DFFNROOF_BUILD_BENCH=OFF -DCMAKE_CROSSCOMPILING_EMULATOR="$qemu" >/dev/null
cmake --build "$dir" -j"$jobs" >/dev/null
# .ci/qemu_execl.c (from .ci/aarch64.sh) adds execl/execlp/execle, whose glibc versions call
# glibc's internal execve and would start ffnroof natively (test_cli_plan's interrupted sweep).
shim_src=(.ci/qemu_exec.c)
[ -f .ci/qemu_execl.c ] && shim_src+=(.ci/qemu_execl.c)
cc -O2 -shared -fPIC -o "$dir/qemu_exec.so" "${shim_src[@]}" -ldl
cc -O2 -DPROBE_MAIN -o "$dir/qemu_probe_exe" .ci/qemu_probe.c
read -ra crit <<<"$(pkg-config --cflags --libs criterion)"
cc -O2 -o "$dir/qemu_probe" .ci/qemu_probe.c "${crit[@]}"
echo "qemu-x86.sh: built in $(($(date +%s) - t0)) s"

export FFNROOF_QEMU=$qemu FFNROOF_QEMU_TREE=$dir QEMU_SET_ENV=LD_PRELOAD=$dir/qemu_exec.so
export FFNROOF_EMULATED=1
bin=$dir/cli/ffnroof
fail=0

# bench_one CPU ISA NAME LABEL BOUND SHAPE ARGS...: one `ffnroof bench --verify` under -cpu CPU
# must have run a kernel of isa ISA with NAME in its name (the JSON's case row gives the kernel,
# its isa and max_rel_err), not the reference, within BOUND of the reference.
bench_one() {
    local cpu=$1 isa=$2 name=$3 label=$4 bound=$5 shape=$6 k kisa err line
    shift 6
    if ! QEMU_CPU=$cpu "$qemu" "$bin" bench --hw epyc-9654 --shape "$shape" "$@" --reps 2 \
        --verify --format csv --out "$out/b" >"$out/csv" 2>"$out/err"; then
        echo "qemu-x86.sh: bench $label failed under -cpu $cpu:" >&2
        cat "$out/err" >&2
        fail=1
        return
    fi
    k=$(sed -n 's/^ *"kernel": "\(.*\)",$/\1/p' "$out/b/bench.json")
    kisa=$(sed -n 's/^ *"isa": "\(.*\)",$/\1/p' "$out/b/bench.json")
    err=$(sed -n 's/^ *"max_rel_err": \([^,]*\),\{0,1\}$/\1/p' "$out/b/bench.json")
    line="qemu-x86.sh: -cpu ${cpu%%,*} $label: ${k:-?} (isa ${kisa:-?}), max rel err ${err:-?}"
    if [ "$kisa" = "$isa" ] && [[ $k == *"$name"* ]] && awk -v e="$err" -v t="$bound" \
        'BEGIN { exit !(e != "" && e + 0 == e && e >= 0 && e <= t + 0) }'; then
        echo "$line: ok"
    else
        echo "$line: FAILED (wanted an $isa kernel within $bound)" >&2
        fail=1
    fi
    rm -rf "$out/b"
}

# check_bench CPU ISA: one small layer per float weight dtype and activation (T = 1 or 17, sizes
# that leave vector tails), then the quantized formats. The float bound on max |y - ref| /
# max |ref| (the reference runs on the same rounded weights): fp32 accumulation order (~1e-6
# seen); a bf16/fp16 kernel may round x and h to its dtype (2^-8, 2^-11 relative). The quantized
# formats: W8A32, W8A16, W8A8 and W4A16 (groups of 32, with zero points through the
# suites); the bound is the W8A8 one, where a code of h may flip against the reference
# (test_kernels_quant derives the tight ones).
check_bench() {
    local cpu=$1 isa=$2 dt act fmt out bound T=1
    out=$(mktemp -d)
    for dt in fp32 bf16 fp16; do
        case $dt in fp32) bound=1e-4 ;; fp16) bound=5e-3 ;; *) bound=3e-2 ;; esac
        for act in relu gelu gelu_tanh silu swiglu geglu reglu; do
            T=$((T == 1 ? 17 : 1))
            bench_one "$cpu" "$isa" "__${isa}_" "$dt $act" "$bound" "$T,72,130,$act" --dtype "$dt"
        done
    done
    for fmt in "int8" "int8 --adtype bf16" "int8 --adtype int8" "int4 --group 32 --adtype bf16"; do
        for T in 1 17; do
            # shellcheck disable=SC2086
            bench_one "$cpu" "$isa" "__${isa}" "$fmt T=$T" 1e-3 "$T,64,96,swiglu" --dtype $fmt
        done
    done
    rm -rf "$out"
}

# run_cpu NAME CPU ISA PROBE SKIP SUITES: the probe, the suites but SUITES (a ctest -E regex)
# without the tests SKIP, then the bench check.
run_cpu() {
    local name=$1 cpu=$2 isa=$3 probe=$4 skip=$5 suites=$6 t
    t=$(date +%s)
    if ! QEMU_CPU=$cpu FFNROOF_QEMU_PROBE_WANT=$probe "$qemu" "$dir/qemu_probe" --jobs 1; then
        echo "qemu-x86.sh: -cpu $name: the probe saw another CPU; the shim does not work" >&2
        exit 1
    fi
    echo "qemu-x86.sh: -cpu $name: $(QEMU_CPU=$cpu "$qemu" "$bin" --version | grep kernels)"
    if ! QEMU_CPU=$cpu CRITERION_TEST_PATTERN="!($skip)" \
        ctest --test-dir "$dir" -E "$suites" --output-on-failure -j"$jobs" \
            --repeat after-timeout:2; then
        echo "qemu-x86.sh: the test suite failed under -cpu $name" >&2
        fail=1
    fi
    echo "qemu-x86.sh: -cpu $name: suites in $(($(date +%s) - t)) s"
    t=$(date +%s)
    check_bench "$cpu" "$isa"
    echo "qemu-x86.sh: -cpu $name: bench in $(($(date +%s) - t)) s"
}

for c in ${FFNROOF_QEMU_CPUS:-haswell qemu64}; do
    case $c in
    haswell)
        run_cpu Haswell "$cpu_haswell" avx2 11 "$skip_haswell" "$suites_haswell"
        # oneDNN's AVX2 path on this (real) CPU, in place of the emulated run above.
        if ! (unset QEMU_SET_ENV; DNNL_MAX_CPU_ISA=AVX2 "$dir/tests/test_peers" --jobs 1 \
            --filter 'peers/onednn_fp32_matches_reference'); then
            echo "qemu-x86.sh: oneDNN's AVX2 path (native, DNNL_MAX_CPU_ISA=AVX2) failed" >&2
            fail=1
        fi
        ;;
    qemu64) run_cpu qemu64 "$cpu_qemu64" portable 12 "$skip_qemu64" "$suites_qemu64" ;;
    *) echo "qemu-x86.sh: unknown CPU '$c' (haswell or qemu64)" >&2; exit 2 ;;
    esac
done
echo "qemu-x86.sh: $(($(date +%s) - t0)) s in all"
exit "$fail"
