#!/bin/sh
# NEON kernels in CI: cross-configure tests/neon (a standalone CMake project) for AArch64 with
# Debian's gcc-aarch64-linux-gnu, build it, and run the self-test under qemu-aarch64 (qemu-user).
# The self-test prints "N passed, N failed" last; this script exits non-zero on any failure.
#   usage: .ci/neon.sh [build-dir]      (default: build-neon)
#   env:   FFNROOF_SANITIZE=ON|UB       build the test with ASan+UBSan, or UBSan only
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-neon}
sysroot=/usr/aarch64-linux-gnu
jobs=$(nproc 2>/dev/null || echo 2)

for tool in aarch64-linux-gnu-gcc qemu-aarch64 cmake; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "neon.sh: '$tool' not found (apt-get install gcc-aarch64-linux-gnu qemu-user cmake)" >&2
        exit 2
    }
done

san=""
case "${FFNROOF_SANITIZE:-OFF}" in
    ON | on | 1) san="-DFFNROOF_SANITIZE=ON" ;;
    UB | ub) san="-DFFNROOF_SANITIZE_UB_ONLY=ON" ;;
esac

cmake -S "$root/tests/neon" -B "$build" \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo $san >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null

# LeakSanitizer stops with "fatal error" under qemu-user (checked with qemu 7.2: it cannot
# suspend threads there); ASan and UBSan themselves work.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS
log=$(mktemp)
status=$(mktemp)
trap 'rm -f "$log" "$status"' EXIT
# POSIX sh has no pipefail: the test's own exit status goes through a file.
{
    code=0
    qemu-aarch64 -L "$sysroot" "$build/test_neon" 2>&1 || code=$?
    echo "$code" >"$status"
} | tee "$log"
rc=$(cat "$status")
last=$(tail -n 1 "$log")
case "$last" in
    *" passed, 0 failed") ;;
    *" passed, "*" failed") [ "$rc" -ne 0 ] || rc=1 ;;
    *) echo "neon.sh: the self-test did not finish (exit $rc)" >&2; [ "$rc" -ne 0 ] || rc=1 ;;
esac
exit "$rc"
