#!/usr/bin/env bash
# The whole of ffnroof cross-built for AArch64 (Debian 12's gcc-aarch64-linux-gnu) and its test
# suite run under qemu-user on four emulated CPUs:
#   neon     -cpu max,sve=off                         Advanced SIMD only: the NEON kernels
#   sve128   -cpu max,sve-default-vector-length=16    SVE at 128 bits (Graviton4/Grace class)
#   sve256   -cpu max,sve-default-vector-length=32    SVE at 256 bits (Graviton3 class)
#   sve512   -cpu max,sve-default-vector-length=64    SVE at 512 bits (A64FX class)
# The full suite runs on neon (less test_cli_badinput and test_cli_faults: 64 MiB inputs and
# Ctrl-C timing, io/cli code without an ISA path that runs natively and under ASan); the SVE CPUs
# run the kernel suites (test_kernels*), which hold every VL-dependent kernel path, and
# test_measure and test_calroof (the SVE FMLA and SDOT probes, whose work follows the vector
# length, and the roofs they set; 9 s each under qemu), SVE-256 and SVE-512 with FFNROOF_KERNEL_SHAPES=small (the reference check
# on shapes up to 10^6 T*d*f: their emulation is the slowest): the whole suite under four CPUs
# would not fit the time CI has on a 2-core machine. On each CPU
# `ffnroof --version` must name the kernel dispatch is expected to pick (sve on the SVE CPUs,
# neon on the other), and test_kernels_arm checks the SVE vector length is the one asked for
# (FFNROOF_EXPECT_SVE_VL) and that the SVE panel width follows it (nr 12 / 24 / 48).
# Measured on the 2-core dev VM while other jobs kept its load at 9-13 (so several times what a
# dedicated machine takes): clean cross build 156-188 s, neon full suite 641 s, sve128 kernel
# suites 421 s, sve256 full suite 1027 s, sve512 kernel suites 632 s; test_kernels dominates
# every run (an SVE CPU runs ten kernels against the reference). FFNROOF_AARCH64_CPUS picks a
# subset.
#
# What it installs when missing (Debian 12, root or sudo; idempotent):
#  - scripts/deps.sh test (cmake, the cross gcc, qemu-user, ...);
#  - the arm64 architecture in dpkg and the Multi-Arch: same arm64 packages the build and the
#    tests load (libc6, libgomp1, libyaml-dev, zlib1g-dev, libgit2-1.5 and libffi8 for
#    Criterion);
#  - Criterion for arm64, extracted into $FFNROOF_AARCH64_ROOT (default /opt/ffnroof-aarch64)
#    rather than installed: libcriterion-dev:arm64 cannot be installed next to the amd64 one
#    (apt removes the host's Criterion, through libnanomsg), so its .debs and libnanomsg5's are
#    unpacked there, and qemu -L looks there first for every file the guest opens.
#
# How the tests run under qemu-user without binfmt_misc: CTest starts each test binary through
# CMAKE_CROSSCOMPILING_EMULATOR (cmake/toolchain-aarch64-linux-gnu.cmake); Criterion re-executes
# the test binary for every test (BoxFort workers) and the CLI tests start build/cli/ffnroof
# through /bin/sh, and the host kernel cannot exec an AArch64 file. .ci/qemu_exec.c (an execve
# shim, also used by the x86 qemu CI; .ci/qemu_execl.c adds the execl family, whose glibc
# versions bypass it) is built twice, for the guest and for the host's shell, and preloaded
# through LD_PRELOAD='.../$LIB/...' (each ld.so picks its own build: lib/aarch64-linux-gnu or
# lib/x86_64-linux-gnu); it starts programs of the build tree under $FFNROOF_QEMU. QEMU_CPU and QEMU_LD_PREFIX carry the CPU and
# the library root to every qemu process. FFNROOF_EMULATED=1 tells the tests they run emulated.
# LeakSanitizer cannot run under qemu-user (it cannot suspend threads), so no sanitizer build.
#
#   usage: .ci/aarch64.sh [build-dir]          (default: build-arm)
#   env:   FFNROOF_AARCH64_CPUS   the CPUs to run (default "neon sve128 sve256 sve512")
#          FFNROOF_AARCH64_BENCH  ON: also cross-build bench/ (default OFF)
#          FFNROOF_AARCH64_ROOT   where the extracted arm64 packages go
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-arm}
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
cpus=${FFNROOF_AARCH64_CPUS:-neon sve128 sve256 sve512}
xroot=${FFNROOF_AARCH64_ROOT:-/opt/ffnroof-aarch64}
jobs=$(nproc 2>/dev/null || echo 2)
t_start=$(date +%s)
stamp() { echo "aarch64.sh: $* ($(($(date +%s) - t_start)) s)"; }

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

# ---- dependencies ----------------------------------------------------------------------------
"$root/scripts/deps.sh" test
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
fi
arm_pkgs=(libc6:arm64 libgomp1:arm64 libyaml-dev:arm64 zlib1g-dev:arm64 libgit2-1.5:arm64 libffi8:arm64)
missing=()
for p in "${arm_pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "aarch64.sh: installing ${missing[*]}" >&2
    apt-cache policy libc6:arm64 | grep -q "Candidate: (none)" && $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
pc=$xroot/usr/lib/aarch64-linux-gnu/pkgconfig/criterion.pc
if [ ! -f "$pc" ] || [ ! -e "$xroot/usr/lib/aarch64-linux-gnu/libnanomsg.so.5" ]; then
    echo "aarch64.sh: unpacking arm64 Criterion into $xroot" >&2
    tmp=$(mktemp -d)
    chmod 777 "$tmp" # apt-get download writes as _apt where it can
    (cd "$tmp" && apt-get download -qq libcriterion3:arm64 libcriterion-dev:arm64 \
        libnanomsg5:arm64)
    $SUDO mkdir -p "$xroot"
    for deb in "$tmp"/*.deb; do $SUDO dpkg-deb -x "$deb" "$xroot"; done
    rm -rf "$tmp"
    # Its own prefix, and only what a dynamic link needs (the private requirements are the
    # -dev packages that cannot be installed next to the host's).
    $SUDO sed -i -e "s|^prefix=.*|prefix=$xroot/usr|" -e '/^Requires.private/d' \
        -e '/^Libs.private/d' "$pc"
fi
stamp "dependencies ready"

# ---- cross build -----------------------------------------------------------------------------
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake" \
    -DFFN_CROSS_ROOT="$xroot" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFNROOF_BUILD_TESTS=ON \
    -DFFNROOF_BUILD_BENCH="${FFNROOF_AARCH64_BENCH:-OFF}" >/dev/null
grep -q "^FFN_CC_neon:INTERNAL=1" "$build/CMakeCache.txt" || { echo "aarch64.sh: NEON kernels OFF" >&2; exit 1; }
grep -q "^FFN_CC_sve:INTERNAL=1" "$build/CMakeCache.txt" || { echo "aarch64.sh: SVE kernels OFF" >&2; exit 1; }
cmake --build "$build" -j "$jobs" >/dev/null

shim=$build/qemu-exec
[ -f "$root/.ci/qemu_exec.c" ] || { echo "aarch64.sh: .ci/qemu_exec.c is missing" >&2; exit 1; }
mkdir -p "$shim/lib/x86_64-linux-gnu" "$shim/lib/aarch64-linux-gnu"
for cc in gcc:x86_64 aarch64-linux-gnu-gcc:aarch64; do
    "${cc%%:*}" -O2 -shared -fPIC -o "$shim/lib/${cc##*:}-linux-gnu/libqemu_exec.so" \
        "$root/.ci/qemu_exec.c" "$root/.ci/qemu_execl.c" -ldl
done
stamp "built"

# ---- runs ------------------------------------------------------------------------------------
FFNROOF_QEMU=$(command -v qemu-aarch64)
export FFNROOF_QEMU FFNROOF_QEMU_TREE=$build QEMU_LD_PREFIX=$xroot FFNROOF_EMULATED=1
export QEMU_SET_ENV="LD_PRELOAD=$shim/\$LIB/libqemu_exec.so"
# LeakSanitizer, were a sanitized build tried, stops with a fatal error under qemu-user.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
unset FFNROOF_ISA

fail=0
for c in $cpus; do
    case $c in
        neon) QEMU_CPU=max,sve=off vl=0 want=f32_ffn__neon_8x12 sel="" shapes="" ;;
        sve128) QEMU_CPU=max,sve-default-vector-length=16 vl=16 want=f32_ffn__sve_8x3vl sel=kernels shapes="" ;;
        sve256) QEMU_CPU=max,sve-default-vector-length=32 vl=32 want=f32_ffn__sve_8x3vl sel=kernels shapes=small ;;
        sve512) QEMU_CPU=max,sve-default-vector-length=64 vl=64 want=f32_ffn__sve_8x3vl sel=kernels shapes=small ;;
        *) echo "aarch64.sh: unknown CPU '$c' (neon sve128 sve256 sve512)" >&2; exit 2 ;;
    esac
    export QEMU_CPU FFNROOF_EXPECT_SVE_VL=$vl FFNROOF_KERNEL_SHAPES=$shapes
    t0=$(date +%s)
    version=$("$FFNROOF_QEMU" "$build/cli/ffnroof" --version 2>&1 | grep -i kernel || true)
    echo "aarch64.sh: [$c] QEMU_CPU=$QEMU_CPU: $version"
    case "$version" in
        *"$want"*) ;;
        *) echo "aarch64.sh: [$c] dispatch did not pick $want" >&2; fail=1 ;;
    esac
    # a suite that times out runs once more: qemu-user can deadlock a forked Criterion worker
    # (tests/CMakeLists.txt); a failure is not retried
    args=(--test-dir "$build" --output-on-failure -j "$jobs" --repeat after-timeout:2)
    if [ "$sel" = kernels ]; then
        args+=(-R '^(test_kernels.*|test_measure|test_calroof)$')
    else
        # loader and CLI refusals of 64 MiB inputs and the Ctrl-C timing tests: io/cli code
        # without an ISA path, run natively and under ASan; under TCG they pass their limits
        args+=(-E '^(test_cli_badinput|test_cli_faults)$')
    fi
    ctest "${args[@]}" || fail=1
    echo "aarch64.sh: [$c] ${sel:-full} suite took $(($(date +%s) - t0)) s"
done
stamp "done, $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
