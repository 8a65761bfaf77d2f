#!/usr/bin/env bash
# Fits the engines' fused-MoE kernel families (the `moe:` lists of hw/arch/engines.yaml;
# docs/model.md "MoE layers as fused kernels") to the H100's MoE op tables of three engines and
# to ROCm aiter's MI300X and MI355X tables: each kernel's rows of one weight format, against the
# job's spec as it is, by bench/bench_fit_moe_fused (Nelder-Mead on the mean |log(predicted /
# measured)|, every STRIDE-th row; its range the p10 and p90 of measured / predicted over all
# the kernel's rows of the format). vLLM's Triton entries are the model's defaults
# (sim/moe_fused.c, fitted by the same bench), restated with their range. The first entry of a
# format is the engine's default kernel for it. Needs a build with -DFFNROOF_BENCH=ON.
#   scripts/fit_moe_kernels.sh [BUILD_DIR] [WORK_DIR]
# Each fit starts from the defaults of its activation class. The families other than vLLM's
# Triton ones were fitted from the defaults before their refit of 2026-12-08 (16-bit: module
# 7.887 us, eta 0.5477, tau 0.6581 us, kappa 0.1438 us, zeta 0.2876 us, ep 7.143 us, mu 3.598;
# fp8: module 8.361 us, eta 0.4697, tau 1.543 us, kappa 0.3303 us), and the AMD families hold
# those modules, zeta and ep; from today's defaults a rerun lands on the same medians (within
# 0.1 point) but moves the grouped-GEMM efficiency where a family's rows leave it free (the tile
# floor binds on most rows), which would move its predictions beyond the table's shapes, so the
# shipped entries are those fits.
# rewrites the `moe:` lists of hw/arch/engines.yaml and keeps everything else; a WORK_DIR keeps
# each fit's output and reuses the ones already there (16 minutes of CPU from none: 20 minutes
# on the two cores of the Zen 5 VM beside a CI run).
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-build}/bench/bench_fit_moe_fused
work=${2:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
[ -x "$bench" ] || { echo "no $bench: configure with -DFFNROOF_BENCH=ON and build it" >&2; exit 2; }
H=hw/h100-sxm.yaml
M3=hw/mi300x.yaml
M5=hw/mi355x.yaml
V=data/calib/aic-h100_sxm_moe_vllm_0.24.0_moe.tsv.gz
S=data/calib/aic-h100_sxm_moe_sglang_0.5.14_moe.tsv.gz
R=data/calib/aic-h100_sxm_moe_trtllm_1.3.0rc20_moe.tsv.gz
# ROCm aiter's tuned fused-MoE tables (scripts/aiter_moe_tables.py; they time the grouped GEMMs:
# `# timed: gemms`): the AMD GPUs' family, the same under vLLM and SGLang, which both call aiter's
# fused MoE on ROCm
A3=data/calib/aiter-mi300x_moe.tsv.gz
A5=data/calib/aiter-mi355x_moe.tsv.gz
# engine[,engine]  spec  name  table  kernel@dtype[/adtype]  stride  held  layout ("-": the
# engine's own)  [optional]
# FlashInfer's CUTLASS MoE permutes the shard's copies under vLLM and SGLang too; TensorRT-LLM's
# modules all permute; the Triton and Marlin modules sort (moe_align_block_size). "optional":
# the engine runs the kernel only when asked (`default: false`): vLLM's FlashInfer fp8 MoE
# behind VLLM_USE_FLASHINFER_MOE_FP8, default "0" (vllm/envs.py), or a ModelOpt checkpoint.
jobs=$(cat <<EOF
vllm $H v_tr_bf16 $V unquantizedfusedmoe_triton@bf16 1 all -
vllm $H v_tr_fp8b $V fp8moe_triton@fp8-block 1 all -
vllm $H v_fi_fp8 $V flashinfer_cutlass@fp8 5 - permuted optional
vllm $H v_fi_fp8b $V flashinfer_cutlass@fp8-block 3 - permuted optional
vllm $H v_marlin $V marlin@int4 1 - -
vllm $H v_oai $V oaitritonmxfp4@mxfp4 1 - -
vllm $H v_marlin_mx $V marlin@mxfp4 1 - -
sglang $H s_tr_bf16 $S fused_moe_triton@bf16 12 - -
sglang $H s_fi_bf16 $S flashinfer_cutlass_moe@bf16 3 - permuted
sglang $H s_tr_fp8b $S fused_moe_triton@fp8-block 12 - -
sglang $H s_tr_mx $S fused_moe_triton@mxfp4 2 - -
sglang $H s_marlin $S marlin_moe@int4 1 - -
sglang $H s_marlin_mx $S marlin_moe_situ@mxfp4 1 - -
trtllm $H r_cut_bf16 $R moe_torch_flow_cutlass@bf16 12 - permuted
trtllm $H r_ng_bf16 $R moe_torch_flow_nongated@bf16 3 - permuted
trtllm $H r_cut_fp8 $R moe_torch_flow_cutlass@fp8 10 - permuted
trtllm $H r_ng_fp8 $R moe_torch_flow_nongated@fp8 2 - permuted
trtllm $H r_cut_fp8b $R moe_torch_flow_cutlass@fp8-block 12 - permuted
trtllm $H r_mx $R moe_torch_flow@mxfp4 1 - permuted
vllm,sglang $M3 ai_fp8b_300 $A3 aiter_fmoe@fp8-block 1 ep,zeta,mu=1 sorted
vllm,sglang $M3 ai_bf16_300 $A3 aiter_fmoe@bf16 1 ep,zeta,mu=1 sorted
vllm,sglang $M5 ai_fp8b_355 $A5 aiter_fmoe@fp8-block 1 ep,zeta,mu=1 sorted
vllm,sglang $M5 ai_bf16_355 $A5 aiter_fmoe@bf16 1 ep,zeta,mu=1 sorted
vllm,sglang $M5 ai_fp8_355 $A5 aiter_fmoe@fp8 1 ep,zeta,mu=1 sorted
vllm,sglang $M5 ai_mx_355 $A5 aiter_fmoe@mxfp4/mxfp4 1 ep,zeta,mu=1 sorted
EOF
)
fit_one() { # spec name table kernel stride held layout
  local out=$work/$2.txt
  grep -q '^yaml:' "$out" 2>/dev/null && return 0
  local layout=()
  [ "$7" != - ] && layout=("$7")
  "$bench" "$1" "$3" "$4" "$5" "$6" "${layout[@]}" >"$out.tmp" && mv "$out.tmp" "$out"
}
export -f fit_one
export bench work
echo "$jobs" | awk '{print $2, $3, $4, $5, $6, $7, $8}' |
  xargs -P 2 -L 1 bash -c 'fit_one "$@"' _

python3 - "$work" <<'PY' "$jobs"
import re, sys
work, jobs = sys.argv[1], sys.argv[2]
by_engine = {}
for line in jobs.strip().split("\n"):
    eng, spec, name, table, kernel = line.split()[:5]
    device = spec.rsplit("/", 1)[-1].removesuffix(".yaml")
    # the architecture family the entry runs on (the spec's `family:`)
    arch = re.search(r"^family:\s*(\S+)", open(spec).read(), re.M).group(1)
    text = open(f"{work}/{name}.txt").read()
    entry = re.search(r"^yaml: (\{.*\})$", text, re.M).group(1)
    if "device:" not in entry:
        entry = entry.replace(", module:", f", device: {device}, module:", 1)
    if "arch:" not in entry:
        entry = re.sub(r"(device: [^,}]+)", rf"\1, arch: {arch}", entry, count=1)
    if line.split()[8:9] == ["optional"] and "default:" not in entry:
        entry = re.sub(r"(arch: [^,}]+)", r"\1, default: false", entry, count=1)
    stats = re.search(r"^all (\d+) rows: median \|e\| ([0-9.]+%), p90 \|e\| ([0-9.]+%)", text, re.M)
    note = f"# {stats.group(1)} rows of {table.rsplit('/', 1)[-1].split('.tsv')[0]}: median {stats.group(2)}, p90 {stats.group(3)}"
    for e in eng.split(","):  # one fit, the entry of every engine listed
        by_engine.setdefault(e, []).append((entry, note))
path = "hw/arch/engines.yaml"
lines = open(path).read().rstrip("\n").split("\n")
out, eng, skip = [], None, False
def flush(e):
    if e in by_engine:
        out.append("  moe:")
        out.append("    # fused-MoE kernel families: scripts/fit_moe_kernels.sh (docs/model.md, \"MoE layers as fused kernels\")")
        for entry, note in by_engine[e]:
            out.append(f"    {note}")
            out.append(f"    - {entry}")
for l in lines:
    top = l and not l.startswith(" ") and not l.startswith("#")
    if top:
        if eng: flush(eng)
        eng = l.rstrip(":") if l.endswith(":") else None
        skip = False
    elif eng and l.startswith("  moe:"):
        skip = True
        continue
    elif skip and (l.startswith("    ") or not l.strip()):
        continue
    else:
        skip = False
    out.append(l)
if eng: flush(eng)
open(path, "w").write("\n".join(out) + "\n")
print(f"wrote the moe: lists of {path}")
PY
