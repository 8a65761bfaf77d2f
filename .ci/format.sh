#!/usr/bin/env bash
# The house style (.clang-format) is checked, not only suggested: every tracked C source and
# header must be exactly what clang-format (Debian 12: clang-format 14) makes of it.
#   .ci/format.sh          check (exit 1 listing the files that differ)
#   .ci/format.sh --fix    rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.c' '*.h')
else # an exported tree: every source outside build folders
    mapfile -t files < <(find . -name '*.c' -o -name '*.h' | grep -v -E '^\./(build[^/]*|results)/' |
        sed 's|^\./||' | sort)
fi
if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    printf '.ci/format.sh: not in the house style (run .ci/format.sh --fix):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "format: ${#files[@]} files in the house style ($(clang-format --version | head -1))"
