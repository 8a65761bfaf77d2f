#!/usr/bin/env bash
# Fits the serving engines' kernel profiles (hw/arch/engines.yaml; docs/model.md "Engines") to
# the H100's op tables of three engines: the H100 spec is fitted to vLLM's kernels (the baseline,
# scripts/fit_gpu_specs.sh); each other engine's GEMM rows of one quantised format are fitted on
# top of it (utilisation, one-row fraction, fixed cost, quantisation cost per row) and the
# profile keeps the ratios of its utilisation and one-row fraction to vLLM's and its own fixed
# and per-row costs. bf16 runs cuBLAS under every engine: no profile entry.
#   scripts/fit_engines.sh [BUILD_DIR]    (rewrites hw/arch/engines.yaml, keeping its scheduler and moe blocks)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/cli/ffnroof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=hw/h100-sxm.yaml
# the spec without its kernel rules (vLLM's fp8 dispatch): another engine's kernels pick their own
# tiles, the best of the device's, as ffn_hw_apply_engine predicts them
nobase=$tmp/h100-sxm-norules.yaml
python3 - "$base" "$nobase" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"\n  kernels_by_dtype:\n(    [^\n]*\n)+", "\n", s)
open(sys.argv[2], "w").write(s)
PY
declare -A table=(
  [sglang]=data/calib/aic-h100_sxm_gemm_sglang_0.5.14_gemm.tsv.gz
  [trtllm]=data/calib/aic-h100_sxm_gemm_trtllm_1.3.0rc20_gemm.tsv.gz
)
# An engine's own kernel rules for a format, fitted under and written to its profile: the
# block-scaled fp8 GEMMs of SGLang (its Triton w8a8_block_fp8_matmul, one program per output
# tile over all of K, and DeepGEMM, persistent with K whole) and of TensorRT-LLM (its
# fp8_blockscale_gemm, DeepGEMM's Hopper kernel) never split or stream K: `whole`
declare -A kernels=(
  [sglang:fp8-block]="[{whole: true}]"
  [trtllm:fp8-block]="[{whole: true}]"
)
# with_rules SPEC DTYPE RULES OUT: the spec with RULES as its DTYPE's kernels_by_dtype
with_rules() {
  python3 - "$@" <<'PY'
import sys
src, dt, rules, out = sys.argv[1:5]
s = open(src).read()
s = s.replace("\nefficiency:\n", "\nefficiency:\n  kernels_by_dtype:\n    %s: %s\n" % (dt, rules), 1)
open(out, "w").write(s)
PY
}
# value SPEC SECTION DTYPE [FIELD]: a number from a written spec (4 significant digits, s)
value() {
  python3 - "$@" <<'PY'
import re, sys
path, section, dt = sys.argv[1:4]
field = sys.argv[4] if len(sys.argv) > 4 else None
s = open(path).read()
i = s.find("  %s:\n" % section)
if i < 0:
    print(0); sys.exit()
blk = s[i:].split("\n")[1:]
for l in blk:
    if not l.startswith("    "):
        break
    m = re.match(r'\s+"?%s"?: (.*)$' % re.escape(dt), l)
    if not m:
        continue
    v = m.group(1)
    if field:
        v = re.search(r"%s: ([0-9.e+-]+)" % field, v).group(1)
    num, *unit = v.split()
    scale = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}.get(unit[0], 1) if unit else 1
    print(float(num) * scale); sys.exit()
print(0)
PY
}
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.4g}' if a>0 and b>0 else '1')" "$1" "$2"; }
us() { python3 -c "import sys; print(f'{float(sys.argv[1])*1e6:.4g} us')" "$1"; }
ns() { python3 -c "import sys; print(f'{float(sys.argv[1])*1e9:.4g} ns')" "$1"; }
# unc_of SPEC DTYPE p10|p90: the written spec's range for DTYPE (uncertainty.by_dtype), else
# its overall range (a fit of one dtype writes only that)
unc_of() {
  python3 - "$@" <<'PY'
import re, sys
path, dt, key = sys.argv[1:4]
s = open(path).read()
u = s[s.index("\nuncertainty:\n"):]
m = re.search(r"\n    %s: \{[^}]*%s: ([0-9.e+-]+)" % (re.escape(dt), key), u)
if not m:
    m = re.search(r"\n  %s: ([0-9.e+-]+)" % key, u)
print(m.group(1))
PY
}
num() { python3 -c "import sys; print(f'{float(sys.argv[1]):.4g}')" "$1"; }
gemv_of() { # the one-row fraction a spec gives dtype $2
  local v; v=$(value "$1" memory_max_gemv_by_dtype "$2")
  [ "$v" = 0 ] && v=$(sed -n 's/^  memory_max_gemv: //p' "$1")
  echo "$v"
}

# sched_of ENGINE: the engine's `scheduler:` and `moe:` blocks of the current engines.yaml, kept
# as they are (the releases' defaults, cited by hand; the fused-MoE kernel families of
# scripts/fit_moe_kernels.sh)
sched_of() {
  python3 - "$1" <<'PY'
import sys
eng = sys.argv[1]
try:
    lines = open("hw/arch/engines.yaml").read().split("\n")
except OSError:
    sys.exit()
inside = grab = False
out = []
for l in lines:
    if l and not l.startswith(" "):
        inside = l.rstrip() == eng + ":"
        grab = False
        continue
    if inside and (l.startswith("  scheduler:") or l.startswith("  moe:")):
        grab = True
    elif inside and grab and l.startswith("  ") and not l.startswith("   "):
        grab = False
    if grab:
        out.append(l)
while out and not out[-1].strip():
    out.pop()
print("\n".join(out))
PY
}

out_file=hw/arch/engines.yaml
exec 3>&1 >"$tmp/engines.yaml"
echo "# Serving engines' kernel profiles: per GEMM format, how the engine's kernels perform against"
echo "# the baseline's (vLLM's, whose op tables the NVIDIA specs are fitted to). Written by"
echo "# scripts/fit_engines.sh; format: docs/formats-hw.md \"Engine profiles\"; the rule that"
echo "# carries them to other devices: docs/model.md \"Engines\"."
cat <<'SRC'
source: |
  Fitted by scripts/fit_engines.sh to the op tables of data/calib/aic-h100_sxm_gemm_*.tsv.gz
  (aiconfigurator's collectors inside vLLM 0.24.0, SGLang 0.5.14 and TensorRT-LLM 1.3.0rc20 on
  one H100 SXM; data/calib/README.md, licence data/calib/LICENSE-aiconfigurator); each engine's
  own source line says what was fitted.
SRC
echo "vllm:"
echo "  baseline: true"
echo "  source: vLLM 0.24.0's kernels, whose op tables (aiconfigurator, data/calib/aic-*_vllm_*) the H100, H200 and B200 specs are fitted to"
sched_of vllm
for eng in sglang trtllm; do
  echo "$eng:"
  echo "  source: |"
  echo "    Fitted on top of hw/h100-sxm.yaml to ${table[$eng]}, FFN-shaped rows"
  echo "    (n, k >= 256), per format: ffnroof fit --dtype D --fit util,gemv-dt,quant-row,launch-dt,hold-max,l1;"
  echo "    compute and memory are the ratios of the fitted utilisation (gamma) and one-row fraction"
  echo "    to the spec's, launch and quant_row the fitted costs; the spec's kernel rules (vLLM's"
  echo "    dispatch) left out: this engine's kernels take the best of the device's tiles, or the"
  echo "    format's own rules where the profile has them (kernels:, fitted under them): block-scaled"
  echo "    fp8 with K whole, neither split nor streamed, as SGLang's Triton and DeepGEMM kernels"
  echo "    (sgl-project/sglang python/sglang/srt/layers/quantization/fp8_kernel.py) and TensorRT-LLM's"
  echo "    fp8_blockscale_gemm (DeepGEMM's Hopper design) run it. range: the fit's p10 and p90 of"
  echo "    measured / predicted, the format's range under this engine (widened on other devices)."
  echo "  device: h100-sxm"
  echo "  by_dtype:"
  for dt in fp8 fp8-block; do
    out=$tmp/$eng-$dt.yaml
    spec=$nobase rules=${kernels[$eng:$dt]:-}
    if [ -n "$rules" ]; then
      spec=$tmp/$eng-$dt-rules.yaml
      with_rules "$nobase" "$dt" "$rules" "$spec"
    fi
    "$bin" fit --hw "$spec" --data "${table[$eng]}" --dtype "$dt" \
      --fit util,gemv-dt,quant-row,launch-dt,hold-max,l1 --out "$out" >"$tmp/$eng-$dt.log"
    g0=$(value "$base" util_by_dtype "$dt" gamma)
    g1=$(value "$out" util_by_dtype "$dt" gamma)
    m0=$(gemv_of "$base" "$dt")
    m1=$(gemv_of "$out" "$dt")
    l1=$(value "$out" launch_by_dtype "$dt")
    q1=$(value "$out" quant_row_by_dtype "$dt")
    r10=$(unc_of "$out" "$dt" p10)
    r90=$(unc_of "$out" "$dt" p90)
    echo "    $dt: {compute: $(ratio "$g1" "$g0"), memory: $(ratio "$m1" "$m0"), launch: $(us "$l1"), quant_row: $(ns "$q1")${rules:+, kernels: $rules}, range: [$(num "$r10"), $(num "$r90")]}"
    grep -E "^$dt +\(all\)" "$tmp/$eng-$dt.log" | head -1 |
      awk -v e="$eng" '{printf "    # %s %s: %s rows, median %s, p90 %s after the fit\n", e, $1, $3, $4, $5}'
  done
  sched_of "$eng"
done
exec >&3
mv "$tmp/engines.yaml" "$out_file"
echo "wrote $out_file"
