#!/usr/bin/env bash
# The floors of the house (docs/ARCHITECTURE.md), checked: every #include of a tracked C file
# against the table of what may use what, each public header's functions in one floor, and no
# file circle (C files calling each other's functions, or headers including each other).
#   .ci/layers.sh [--verbose]   (--verbose also prints the floor of every public header)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
exec python3 .ci/layers.py "$@"
