#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (docs/reliability.md): built with clang and FFNROOF_FUZZ=ON in
# their own build tree, each run for a fixed time from seeds assembled out of the shipped data
# files and the tests' fixtures, with its dictionary; then every input of fuzz/crashes/ (the
# findings so far) replayed. Fails on a crash, a sanitizer report, a leak or an input slower
# than the per-input timeout.
#   .ci/fuzz.sh [SECONDS]   seconds per target (default 20; FFNROOF_FUZZ_SECONDS)
#   FFNROOF_FUZZ_BUILD=dir  build tree (default build-fuzz)
#   FFNROOF_FUZZ_TARGETS="hw model"  only these targets (default: every fuzz/fuzz_*.c)
#   FFNROOF_FUZZ_RUNS=N     also stop a target after N executions (default: no limit)
#   FFNROOF_FUZZ_TIMEOUT=S  per-input time limit (default 5 s; raise it on a loaded machine,
#                           where a starved process can take 5 s over one large seed)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
secs=${1:-${FFNROOF_FUZZ_SECONDS:-20}}
dir=${FFNROOF_FUZZ_BUILD:-build-fuzz}
CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFNROOF_FUZZ=ON \
  -DFFNROOF_BUILD_TESTS=OFF -DFFNROOF_BUILD_BENCH=OFF -DFFNROOF_SKIP="kernels;measure;cli" \
  >/dev/null
cmake --build "$dir" -j"$(nproc)" --target fuzz
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Seeds of each target: the shipped files and fixtures its loader reads.
seeds() {
  case $1 in
  hw) ls hw/*.yaml tests/data/hw/* ;;
  model) ls models/*.yaml tests/data/models/* ;;
  hf) ls tests/data/hf/*.json tests/data/hf/bad/* ;;
  scenario) ls scenarios/*.yaml ;;
  hist) ls tests/data/hist/* ;;
  fit_csv) ls tests/data/fit/*.csv data/check/h200-torch-fp16-mlp.csv ;;
  fit_data) ls data/calib/*.csv tests/data/fit/*.csv tests/data/fit/*/*.csv ;;
  aic) ls fuzz/seeds/aic/* tests/data/aic/* ;;
  engine) ls hw/arch/engines.yaml ;;
  families) ls hw/arch/families.yaml ;;
  prices) ls hw/prices.tsv tests/data/prices/* ;;
  calibration) ls profiles/*/*/calibration.json tests/data/plot/*.json ;;
  bench) ls profiles/*/*/bench/*/bench.json tests/data/plot/*.json ;;
  units) ls fuzz/seeds/units/* ;;
  safetensors) ls tests/data/safetensors/*.safetensors ;;
  esac 2>/dev/null || true
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scratch"
export FFNROOF_FUZZ_DIR="$work/scratch" # each target's input file
failed=()
for bin in "$dir"/fuzz/fuzz_*; do
  t=${bin##*/fuzz_}
  if [ -n "${FFNROOF_FUZZ_TARGETS:-}" ] && [[ " $FFNROOF_FUZZ_TARGETS " != *" $t "* ]]; then
    continue
  fi
  mkdir -p "$work/$t" "$work/artifacts"
  for f in $(seeds "$t"); do [ -f "$f" ] && cp "$f" "$work/$t/${f//\//_}"; done
  dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  runs=()
  [ -n "${FFNROOF_FUZZ_RUNS:-}" ] && runs=(-runs="$FFNROOF_FUZZ_RUNS")
  echo "fuzz: $t for ${secs}s ($(ls "$work/$t" | wc -l) seeds, started $(date -u +%H:%M:%S))"
  start=$SECONDS
  if ! "$bin" -max_total_time="$secs" "${runs[@]}" -timeout="${FFNROOF_FUZZ_TIMEOUT:-5}" \
      -rss_limit_mb=2048 -print_final_stats=1 \
      "${dict[@]}" -artifact_prefix="$work/artifacts/$t-" "$work/$t" >"$work/$t.log" 2>&1; then
    tail -40 "$work/$t.log" >&2
    failed+=("$t")
    mkdir -p "fuzz/findings"
    cp "$work"/artifacts/"$t"-* fuzz/findings/ 2>/dev/null || true
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$work/$t.log" | tr '\n' ' '
    echo "($((SECONDS - start)) s)"
  fi
  if [ -d "fuzz/crashes/$t" ]; then
    echo "fuzz: $t replays fuzz/crashes/$t ($(ls "fuzz/crashes/$t" | wc -l) inputs)"
    if ! "$bin" -timeout=2 -rss_limit_mb=2048 fuzz/crashes/"$t"/* >"$work/$t.replay.log" 2>&1; then
      tail -40 "$work/$t.replay.log" >&2
      failed+=("$t (replay)")
    fi
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo ".ci/fuzz.sh: findings in: ${failed[*]} (inputs copied to fuzz/findings/)" >&2
  exit 1
fi
echo "fuzz: passed"
