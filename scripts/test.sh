#!/usr/bin/env bash
# Builds everything and runs the whole test suite (Criterion suites through CTest).
#   scripts/test.sh              release build in build-test/
#   scripts/test.sh --sanitize   the same built with AddressSanitizer + UBSan in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
dir=build-test
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DFFNROOF_SANITIZE=ON -DFFNROOF_BUILD_BENCH=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
# The installed binary must find the data installed beside it.
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$dir" --prefix "$prefix" >/dev/null
(cd / && "$prefix/bin/ffnroof" --version | grep -q "data: $prefix/bin/../share/ffnroof/hw" &&
  "$prefix/bin/ffnroof" predict --hw h100-sxm --model llama2-7b --format csv >/dev/null) ||
  { echo "scripts/test.sh: the installed ffnroof does not find its installed data" >&2; exit 1; }
echo "install check: passed"
