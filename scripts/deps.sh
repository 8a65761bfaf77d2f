#!/usr/bin/env bash
# Installs the Debian packages ffnroof needs that are missing (Debian 12, as root or via sudo).
#   scripts/deps.sh [build|test|all]   (default: all)
# build: compiler, CMake, libyaml, zlib, PAPI, OpenBLAS, oneDNN, gnuplot (run time)
# test:  the above plus Criterion, the aarch64 cross toolchain + qemu (.ci/aarch64.sh adds
#        the arm64 target libraries itself), clang + libFuzzer, clang-format and python3
set -euo pipefail
what=${1:-all}
pkgs=(build-essential cmake pkg-config libyaml-dev zlib1g-dev libpapi-dev papi-tools
      libopenblas-dev libdnnl-dev gnuplot-nox)
if [ "$what" != build ]; then
  pkgs+=(libcriterion-dev qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
  pkgs+=(clang libclang-rt-14-dev) # libFuzzer for .ci/fuzz.sh (only recommended by clang)
  pkgs+=(clang-format)             # the house style check, .ci/format.sh
  pkgs+=(python3)                  # the floors check, .ci/layers.sh
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "scripts/deps.sh: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
