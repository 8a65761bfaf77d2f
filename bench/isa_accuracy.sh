#!/usr/bin/env bash
# The per-ISA accuracy table of BENCHMARKS.md: for every ISA level this host runs
# (`ffnroof cpu`: portable, avx2, avx512, avx512_bf16, amx, neon, sve) and for one thread and all
# threads, `ffnroof calibrate` under FFNROOF_ISA=<level>, then bench/profiler_grid.sh on that
# spec under the same level, and the grid's median and worst |predicted/measured - 1|.
#
#   bench/isa_accuracy.sh [--ffnroof PATH] [--isas "L1 L2 .."] [--threads "1 N"] [--out DIR]
#                         [--full] [--full-calibrate] [--tables-only]
#
# Defaults: build-rel/cli/ffnroof, every usable level, threads "1 <nproc>", results/isa-accuracy,
# the quick grid (bench/profiler_grid.sh --quick: 20 cases) and `calibrate --quick`. --full runs
# the whole 42-case grid, --full-calibrate the default calibration. Each level/threads pair
# writes DIR/<level>-t<N>/{hw.yaml,calibration.json,calibrate.txt,grid.csv,grid.txt}; the table
# goes to stdout and DIR/table.md (the grid's errors against each case's median sample, and
# against its fastest; "fit" is calibrate's own error on its fit runs, against their medians
# (calibrations before 2026-12-01 22:00 UTC: their fastest samples)), the roofs each level
# calibrated to DIR/roofs.md;
# --tables-only rebuilds both from the files. About 3 minutes a pair with the defaults on 2
# cores (the portable level's prefill cases take longest). Run it on a quiet machine: the grid's worst case
# is set by its least repeatable one (BENCHMARKS.md, "How repeatable the measurements are").
set -euo pipefail
cd "$(dirname "$0")/.."
FFNROOF=build-rel/cli/ffnroof
isas=""
threads_list="1 $(nproc)"
out=results/isa-accuracy
gridq=--quick
calq=--quick
tables_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --ffnroof) FFNROOF=$2; shift 2 ;;
        --isas) isas=$2; shift 2 ;;
        --threads) threads_list=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --full) gridq=""; shift ;;
        --full-calibrate) calq=""; shift ;;
        --tables-only) tables_only=1; shift ;;
        -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "isa_accuracy.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$FFNROOF" ] || { echo "isa_accuracy.sh: '$FFNROOF' is not an executable (build it, or --ffnroof PATH)" >&2; exit 2; }
usable=$("$FFNROOF" cpu --format json | tr -d ' \n' | sed 's/.*"isa_usable":\[\([^]]*\)\].*/\1/' | tr -d '"' | tr ',' ' ')
[ -n "$isas" ] || isas=$(echo "$usable" | tr ' ' '\n' | grep -v '^ref$' | tr '\n' ' ')
for l in $isas; do
    case " $usable " in
        *" $l "*) ;;
        *) echo "isa_accuracy.sh: this CPU cannot run '$l' (usable: $usable)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
[ "$tables_only" = 1 ] || { date -u +"%F %T UTC"; uptime; lscpu | grep -E "Model name|^Model:|^CPU\(s\)|L1d|L2|L3"; git rev-parse --short HEAD; } >"$out/host.txt"

if [ "$tables_only" = 0 ]; then
    for l in $isas; do
        for n in $threads_list; do
            d="$out/$l-t$n"
            mkdir -p "$d"
            echo "isa_accuracy.sh: $l, $n thread(s): calibrate" >&2
            # shellcheck disable=SC2086
            FFNROOF_ISA=$l "$FFNROOF" calibrate $calq --threads "$n" --out "$d" >"$d/calibrate.txt" 2>&1 || {
                echo "isa_accuracy.sh: calibrate failed for $l, $n thread(s):" >&2; tail -5 "$d/calibrate.txt" >&2; exit 1; }
            echo "isa_accuracy.sh: $l, $n thread(s): grid" >&2
            # shellcheck disable=SC2086
            FFNROOF_ISA=$l bench/profiler_grid.sh --ffnroof "$FFNROOF" --hw "$d/hw.yaml" --threads "$n" \
                $gridq --out "$d/grid.csv" >"$d/grid.txt" 2>&1 || {
                echo "isa_accuracy.sh: the grid failed for $l, $n thread(s):" >&2; tail -5 "$d/grid.txt" >&2; exit 1; }
        done
    done
fi

# The tables, from the files of every pair that ran.
table="$out/table.md"
{
    echo "| level | threads | kernels (fp32, bf16) | fit median / worst | grid n | grid median | grid worst | worst case | vs fastest: median / worst |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >"$table"
roofs="$out/roofs.md"
{
    echo "| level | threads | fp32 roof | bf16 roof | int8 roof | memory (read) | efficiency fit |"
    echo "|---|---|---|---|---|---|---|"
} >"$roofs"
for l in $isas; do
    for n in $threads_list; do
        d="$out/$l-t$n"
        [ -s "$d/grid.txt" ] && [ -s "$d/grid.csv" ] || continue
        kern=$(sed -n 's/^kernels: fp32 \([^,]*\), bf16 \([^ ]*\).*/\1, \2/p' "$d/calibrate.txt")
        fit=$(sed -n 's/^error |predicted\/[a-z]* - 1|: fit median \([^ ]*\) max \([^ ]*\) .*/\1 \/ \2/p' "$d/calibrate.txt")
        all=$(grep -E '^  all ' "$d/grid.txt" | head -1)
        cnt=$(echo "$all" | sed 's/.*n=\([0-9]*\).*/\1/')
        med=$(echo "$all" | sed 's/.*median *\([0-9.]*%\).*/\1/')
        wst=$(echo "$all" | sed 's/.*worst *\([0-9.]*%\).*/\1/')
        # against the fastest sample: from the CSV (grids run before the summary had it, too)
        fast=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                        { t = $(c["time_min_s"]); p = $(c["predicted_s"]); if (t <= 0 || p == "") next
                          e = p / t - 1; print (e < 0 ? -e : e) }' "$d/grid.csv" | sort -g |
               awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                                          printf "%.1f%% / %.1f%%", 100 * m, 100 * v[NR] }')
        # the worst case: kind, dtype, T, d of the row with the largest |prediction_error|
        wc=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                      { e = $(c["prediction_error"]); if (e == "") next; a = e < 0 ? -e : e
                        if (a > m) { m = a; w = sprintf("%s %s T=%s d=%s (%+.0f%%)", $(c["kind"]), $(c["dtype"]), $(c["tokens"]), $(c["d"]), 100 * e) } }
                      END { print w }' "$d/grid.csv")
        echo "| $l | $n | $kern | $fit | $cnt | $med | $wst | $wc | $fast |" >>"$table"
        spec=$(sed -n 's/^spec [^:]*: fp32 \([^,]*\), bf16 \([^,]*\), memory \([^,]*\),.*/\1|\2|\3/p' "$d/calibrate.txt")
        i8=$(awk '/^peak:/ { p = 1; next } p && /^  int8:/ { printf "%.1f GOP/s", $2 / 1e9; exit } p && !/^  / { exit }' "$d/hw.yaml")
        eff=$(sed -n 's/^efficiency fit: //p' "$d/calibrate.txt")
        echo "| $l | $n | $(echo "$spec" | cut -d'|' -f1) | $(echo "$spec" | cut -d'|' -f2) | ${i8:--} | $(echo "$spec" | cut -d'|' -f3) | $eff |" >>"$roofs"
    done
done
cat "$table"
echo
cat "$roofs"
echo "isa_accuracy.sh: wrote $out/ (host in $out/host.txt)" >&2
