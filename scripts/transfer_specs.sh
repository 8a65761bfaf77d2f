#!/usr/bin/env bash
# The efficiency of every GPU spec that no op table measured (docs/model.md, "Transfer to devices
# never measured"), after scripts/fit_gpu_specs.sh:
#  - AMD: the MI300X fitted to the public GEMM points of data/calib/public-mi300x.csv (its bf16
#    compute stays the MAMF-derived compute_max: its public bf16 rows are one-row GEMVs, which
#    cannot tell a utilisation); the MI325X takes the MI300X's (same CDNA 3 silicon); the MI355X
#    takes the MI300X's memory terms and tile pipeline and is fitted to
#    data/calib/public-mi355x.csv on top (its utilisations and fixed costs: a dozen points cannot
#    also tell the pipeline's tile and fixup costs, which came out at 10 us a tile when tried);
#  - NVIDIA: a device takes its family's fitted device's efficiency: Blackwell (B300, GB200,
#    GB300) the B200's, mxfp4 as its nvfp4; Hopper (H100 PCIe) the H100 SXM's; Ampere (the A100
#    PCIe cards) the A100 SXM's; Ada (L40S) and Blackwell RTX (RTX PRO 6000), which no fitted
#    device shares a family with, the H100 SXM's and the B200's without their kernel rules (an
#    engine's tile dispatch for another architecture);
#  - each with the source's range widened: x0.9/x1.1 within a family, x0.8/x1.25 across.
#   scripts/transfer_specs.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/cli/ffnroof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=scripts/transfer_efficiency.py

# AMD: the MI300X from its public points
"$bin" fit --hw mi300x --data data/calib/public-mi300x.csv --fit util,launch-dt,gemv,hold-max \
  --out "$tmp/mi300x.yaml" >"$tmp/mi300x.log"
sed -i -E '/^    (bf16|fp16): \{gamma/d' "$tmp/mi300x.yaml"
{
  echo "Fitted by scripts/transfer_specs.sh: ffnroof fit --hw mi300x --data"
  echo "data/calib/public-mi300x.csv --fit util,launch-dt,gemv,hold-max (public hipBLASLt, aiter and"
  echo "vLLM skinny-GEMM measurements, each cited in data/calib/amd-public-points.tsv):"
  grep -E '^median' "$tmp/mi300x.log" | sed 's/^/  /'
  echo "bf16/fp16 keep compute_max (the MAMF-derived fraction below): the public bf16/fp16 rows"
  echo "are one-row GEMVs, which cannot tell a utilisation."
} >"$tmp/mi300x.txt"
scripts/spec_efficiency.py hw/mi300x.yaml "$tmp/mi300x.yaml" "$tmp/mi300x.txt"

$T hw/mi300x.yaml hw/mi325x.yaml 0.9 1.1 "CDNA 3 like the MI300X (the same 304 CUs and clocks; HBM3E in place of HBM3)."

# the MI355X: the MI300X's memory terms, then its own public points on top
$T hw/mi300x.yaml hw/mi355x.yaml 0.8 1.25 "CDNA 4's memory terms by analogy with CDNA 3 (no public MI355X bandwidth measurement)."
"$bin" fit --hw mi355x --data data/calib/public-mi355x.csv --fit util,launch-dt,hold-max \
  --out "$tmp/mi355x.yaml" >"$tmp/mi355x.log"
{
  echo "Fitted by scripts/transfer_specs.sh on top of the MI300X's memory terms: ffnroof fit --hw"
  echo "mi355x --data data/calib/public-mi355x.csv --fit util,launch-dt,hold-max (aiter's tuned"
  echo "GEMMs on MI350X/MI355X, cited in data/calib/amd-public-points.tsv):"
  grep -E '^median' "$tmp/mi355x.log" | sed 's/^/  /'
} >"$tmp/mi355x.txt"
scripts/spec_efficiency.py hw/mi355x.yaml "$tmp/mi355x.yaml" "$tmp/mi355x.txt"
# a dozen points on top of borrowed memory terms: the cross-family widening on their range
python3 - <<'PY'
import re
p = "hw/mi355x.yaml"
s = open(p).read()
u = s.index("\nuncertainty:")
head, tail = s[:u], s[u:]
tail = re.sub(r"(\n  p10: )([0-9.e+-]+)", lambda m: m.group(1) + f"{float(m.group(2)) * 0.8:.4g}", tail, 1)
tail = re.sub(r"(\n  p90: )([0-9.e+-]+)", lambda m: m.group(1) + f"{float(m.group(2)) * 1.25:.4g}", tail, 1)
tail = tail.replace("each at least 6% from 1", "widened by x0.8 and x1.25 (a dozen points on the MI300X's memory terms),\n    each at least 6% from 1", 1)
open(p, "w").write(head + tail)
PY

# NVIDIA
for d in b300 gb200 gb300; do
  $T hw/b200.yaml "hw/$d.yaml" 0.9 1.1 "Blackwell like the B200 (the same SM, tensor cores and kernels); mxfp4 runs the nvfp4 fp4 path." --fp4-from-nvfp4
done
$T hw/b200.yaml hw/rtx-pro-6000.yaml 0.8 1.25 "Blackwell RTX (GB202): no fitted device of its family; the B200's, the nearest generation with fp4 units; mxfp4 runs the nvfp4 path; vLLM's Blackwell fp8 tile rules left out (sm120 has its own dispatch)." --fp4-from-nvfp4 --no-kernels
$T hw/h100-sxm.yaml hw/h100-pcie.yaml 0.9 1.1 "Hopper like the H100 SXM (the same GH100 SMs and kernels, a lower power limit already in its peaks)."
$T hw/h100-sxm.yaml hw/l40s.yaml 0.8 1.25 "Ada: no fitted device of its family; the H100 SXM's, the nearest generation with fp8 units; vLLM's Hopper fp8 tile rules left out (Ada runs its own CUTLASS 2 kernels)." --no-kernels
for d in a100-pcie-40gb a100-pcie-80gb; do
  $T hw/a100-sxm-80gb.yaml "hw/$d.yaml" 0.9 1.1 "Ampere like the A100 SXM (the same GA100 SMs and cuBLAS kernels)."
done
