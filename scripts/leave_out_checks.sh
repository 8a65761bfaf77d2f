#!/usr/bin/env bash
# The op-table fits' own leave-out checks (docs/validation.md, "GPU op tables"), printed as
# Markdown rows `| check | dtype | rows | median | p90 | in p10-p90 |`:
#  1. shapes: each device's table split by its (n, k) shapes, every other shape in the order of
#     a hash; the spec refitted (scripts/fit_gpu_specs.sh's steps) on one half, checked on the other;
#  2. devices: the H100 SXM's efficiency alone, given to the H200 and the B200 by the family rule
#     (scripts/transfer_efficiency.py; each keeps its own kernel rules, vLLM's tile dispatch for
#     its architecture), checked on their vLLM tables;
#  3. engines: the spec (vLLM's kernels) with one other engine's profile, checked on the third's
#     table, beside the same check with the third's own profile.
#   scripts/leave_out_checks.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}/cli/ffnroof")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rows() { # LABEL, then `ffnroof fit ... --check` output on stdin
  grep -E '^[a-z0-9-]+ +\(all\)' | awk -v l="$1" '{printf "| %s | %s | %s | %s | %s | %s |\n", l, $1, $3, $4, $5, $7}'
}

# split TABLE OUT_A OUT_B: the header lines in both, each row by its (n, k) shape's hash
split_table() {
  zcat "$1" | awk -v a="$2" -v b="$3" -F'\t' '
    /^#/ { print > a; print > b; next }
    !h { h = 1; for (i = 1; i <= NF; i++) col[$i] = i; print > a; print > b; next }
    { key = $col["n"] "x" $col["k"]; s = 0
      for (i = 1; i <= length(key); i++) s = (s * 31 + index("0123456789x", substr(key, i, 1))) % 1000003
      print > (s % 2 ? b : a) }'
}

echo "| check | dtype | rows | median | p90 | in p10-p90 |"
echo "|---|---|---:|---:|---:|---:|"
for d in h100-sxm:h100_sxm_gemm_vllm_0.24.0 h200:h200_sxm_gemm_vllm_0.24.0 b200:b200_sxm_gemm_vllm_0.24.0 a100-sxm-80gb:a100_sxm_gemm_sglang_0.5.10; do
  dev=${d%%:*}
  table=data/calib/aic-${d#*:}_gemm.tsv.gz
  split_table "$table" "$tmp/a.tsv" "$tmp/b.tsv"
  spec=$tmp/$dev-0.yaml
  "$bin" fit --hw "$dev" --data "$tmp/a.tsv" --dtype bf16 --fit util,launch,memory-ramp,gemv,pipe,overlap,l1 --out "$spec" >/dev/null 2>&1
  for dt in fp8 fp8-block nvfp4; do
    zcat "$table" | grep -q "	$dt	\|: $dt\$\|	${dt/-/_}	" || continue
    f="util,gemv-dt,quant-row,hold-max,l1"
    [ "$dt" != fp8-block ] && f+=",launch-dt"
    "$bin" fit --hw "$spec" --data "$tmp/a.tsv" --dtype "$dt" --fit "$f" --out "$tmp/$dev-$dt.yaml" >/dev/null 2>&1 || continue
    spec=$tmp/$dev-$dt.yaml
  done
  "$bin" fit --hw "$spec" --data "$tmp/b.tsv" --check 2>/dev/null | rows "$dev: fitted on half the shapes, the other half"
done

for dev in h200 b200; do
  cp "hw/$dev.yaml" "$tmp/$dev.yaml"
  # the device keeps its own kernel rules (its engine's dispatch for its architecture, read from
  # the engine's code, not fitted) in place of the H100's
  scripts/transfer_efficiency.py hw/h100-sxm.yaml "$tmp/$dev.yaml" 0.9 1.1 "leave-out check" --own-kernels >/dev/null
  "$bin" fit --hw "$tmp/$dev.yaml" --data "data/calib/aic-${dev}_sxm_gemm_vllm_0.24.0_gemm.tsv.gz" --check 2>/dev/null |
    rows "$dev: the H100's efficiency alone"
done

for pair in sglang:trtllm trtllm:sglang; do
  prof=${pair%%:*} eng=${pair#*:}
  t=$(ls data/calib/aic-h100_sxm_gemm_${eng}_*_gemm.tsv.gz)
  "$bin" fit --hw h100-sxm --data "$t" --engine vllm --check 2>/dev/null | rows "$eng table, vLLM's kernels (no profile)"
  "$bin" fit --hw h100-sxm --data "$t" --engine "$prof" --check 2>/dev/null | rows "$eng table, $prof's profile"
  "$bin" fit --hw h100-sxm --data "$t" --check 2>/dev/null | rows "$eng table, its own profile (fitted on it)"
done
