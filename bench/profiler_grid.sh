#!/bin/sh
# The profiler's prediction accuracy over a grid of shapes: `ffnroof bench` on every
# case of the grid against one calibrated spec, then |predicted / measured median - 1| per
# dtype and kind, median and worst. The grid is LLaMA-shaped (d = 2048 f = 5632 and d = 4096
# f = 11008, neither a calibration shape), T = 1 .. 1024 dense and a MoE layer of 8 experts
# top-2 at T = 1 .. 256, fp32 and bf16 weights; --quant adds the quantized formats
# on the dense shapes (W8 with fp32 activations, W8A8, W4A16 in groups of 128; T = 1 .. 512).
#
#   bench/profiler_grid.sh [--ffnroof PATH] [--hw SPEC] [--threads N] [--out FILE.csv] [--quick]
#                          [--quant] [--warm] [--no-remeasure]
#
# --ffnroof defaults to build/cli/ffnroof (scripts/main.sh builds it); --hw to bench's own
# default (the last calibration); --quick runs a third of the grid. Writes every case's CSV
# row (docs/formats-bench.md) to --out (default results/profiler-grid.csv) and prints the
# summary by kind/dtype/adtype. --warm leaves the weights in the caches between calls (bench
# --warm, predicted as the model's --weights hot: the on-chip residency). Takes about 4 minutes on 2 cores (--quant: about 2 more).
# A one-token decode runs before and after the grid: the last lines say how far the host's
# memory rate moved during the grid and from the spec's. A case the spec misses by more than
# 25% runs once more and keeps the lower of its two medians (a shared host only slows a run
# down); the summary then shows the first pass too and names those cases (--no-remeasure: one
# pass only).
set -eu

FFNROOF=./build/cli/ffnroof # what scripts/main.sh builds (Release)
HW=
THREADS=
OUT=results/profiler-grid.csv
QUICK=0
QUANT=0
WARM=0
REMEASURE=1
while [ $# -gt 0 ]; do
    case "$1" in
    --ffnroof) FFNROOF=$2; shift 2 ;;
    --hw) HW=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --quant) QUANT=1; shift ;;
    --warm) WARM=1; shift ;;
    --no-remeasure) REMEASURE=0; shift ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "profiler_grid.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$FFNROOF" ] || { echo "profiler_grid.sh: '$FFNROOF' is not an executable (build it, or --ffnroof PATH)" >&2; exit 2; }
mkdir -p "$(dirname "$OUT")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
opts=""
[ -n "$HW" ] && opts="$opts --hw $HW"
[ -n "$THREADS" ] && opts="$opts --threads $THREADS"
[ "$WARM" = 1 ] && opts="$opts --warm"
if [ "$QUICK" = 1 ]; then Ts="1 16 128 512"; Tm="1 64"; else Ts="1 4 16 32 64 128 256 512 1024"; Tm="1 16 64 256"; fi

# The host's drift: the same one-token decode before and after the grid, its weight stream rate
# against the one the spec predicts (a shared VM's memory rate moves 20-100% between minutes)
probe() { # $1: a name; prints "<measured GB/s> <predicted GB/s>", or nothing when it failed
    # shellcheck disable=SC2086
    "$FFNROOF" bench $opts --shape 1,2048,5632 --dtype fp32 --format csv --out "$tmp/p$1" \
        > "$tmp/p$1.csv" 2> /dev/null || return 0
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             { printf "%.1f %.1f", $(c["bytes"]) / $(c["time_median_s"]) / 1e9,
                                   $(c["bytes"]) / $(c["predicted_s"]) / 1e9 }' "$tmp/p$1.csv"
}
drift_before=$(probe before)

n=0
: > "$tmp/rows.csv"
: > "$tmp/cases"
run_case() { # $1: file; the rest: bench options
    f=$1; shift
    # shellcheck disable=SC2086
    "$FFNROOF" bench $opts "$@" --format csv --out "$f.d" > "$f" 2> "$f.err" || {
        echo "profiler_grid.sh: ffnroof bench $* failed:" >&2; cat "$f.err" >&2; exit 1; }
}
one() { # args: bench options
    n=$((n + 1))
    run_case "$tmp/c$n.csv" "$@"
    echo "$*" >> "$tmp/cases"
    [ -s "$tmp/hdr" ] || head -1 "$tmp/c$n.csv" > "$tmp/hdr"
    tail -n +2 "$tmp/c$n.csv" >> "$tmp/rows.csv"
    printf '.' >&2
}
for dt in fp32 bf16; do
    for df in 2048,5632 4096,11008; do
        for T in $Ts; do
            [ "$dt" = fp32 ] && [ "$T" = 1024 ] && continue
            one --shape "$T,$df" --dtype "$dt"
        done
    done
    for T in $Tm; do one --shape "$T,2048,5632" --experts 8,2 --dtype "$dt"; done
done
if [ "$QUANT" = 1 ]; then
    if [ "$QUICK" = 1 ]; then Tq="1 128"; else Tq="1 16 128 512"; fi
    for q in "int8" "int8 --adtype int8" "int4 --group 128 --adtype bf16"; do
        for df in 2048,5632 4096,11008; do
            # shellcheck disable=SC2086
            for T in $Tq; do one --shape "$T,$df" --dtype $q; done
        done
    done
fi
echo >&2
cat "$tmp/hdr" "$tmp/rows.csv" > "$OUT"
cp "$OUT" "$tmp/first.csv"

# A case the spec misses by more than 25% runs once more and keeps the lower of its two medians
# (a shared host only ever slows a run down: on the Zen 4 VM whole cases ran at half speed for a
# minute, fastest sample and median alike). Both passes are summarised; --no-remeasure skips it.
remeasured=""
if [ "$REMEASURE" = 1 ]; then
    i=0
    while IFS= read -r args; do
        i=$((i + 1))
        row=$(sed -n "$((i + 1))p" "$OUT")
        miss=$(printf '%s\n%s\n' "$(cat "$tmp/hdr")" "$row" | awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }
            { e = $(c["prediction_error"]); if (e < 0) e = -e; print (e > 0.25) ? 1 : 0 }')
        [ "$miss" = 1 ] || continue
        # shellcheck disable=SC2086 # the case's options, split on purpose
        run_case "$tmp/r$i.csv" $args
        new=$(tail -n +2 "$tmp/r$i.csv")
        keep=$(printf '%s\n%s\n%s\n' "$(cat "$tmp/hdr")" "$row" "$new" | awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) c[$j] = j; next }
            { m[NR] = $(c["time_median_s"]) } END { print (m[3] > 0 && m[3] < m[2]) ? "new" : "old"; printf "%.3g %.3g\n", 1e3 * m[2], 1e3 * m[3] }')
        set -- $keep
        remeasured="$remeasured
  $args: $2 then $3 ms, kept the $1"
        if [ "$1" = new ]; then
            awk -v r="$((i + 1))" -v line="$new" 'NR == r { print line; next } { print }' "$OUT" > "$tmp/out" && mv "$tmp/out" "$OUT"
        fi
        printf '+' >&2
    done < "$tmp/cases"
    [ -n "$remeasured" ] && echo >&2
fi

# |error| by group: kind/dtype, then all; against each case's median sample (what a user sees
# on this host), then against its fastest one (what the spec is fitted to: calibrate fits the
# fastest calibration runs, as a shared host only ever slows a sample down)
summary() { # $1: "median" or "min"
    awk -F, -v which="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { if (which == "median") e = $(col["prediction_error"]);
           else { t = $(col["time_min_s"]); p = $(col["predicted_s"]); if (t == "" || p == "" || t <= 0) next; e = p / t - 1 }
           if (e == "") next; if (e < 0) e = -e;
           a = ("adtype" in col) ? $(col["adtype"]) : "fp32"
           print $(col["kind"]) "/" $(col["dtype"]) "/" a, e; print "all", e }' "$OUT" |
        sort -k1,1 -k2,2g > "$tmp/errs"
    if [ "$1" = median ]; then
        echo "prediction error |predicted / measured median - 1| on $(tail -n +2 "$OUT" | wc -l) cases ($OUT):"
    else
        echo "against the fastest sample, |predicted / measured min - 1|:"
    fi
    for g in $(cut -d' ' -f1 "$tmp/errs" | uniq); do
        grep "^$g " "$tmp/errs" | cut -d' ' -f2 > "$tmp/g"
        c=$(wc -l < "$tmp/g")
        med=$(awk -v c="$c" '{ v[NR] = $1 } END { if (c % 2) m = v[(c + 1) / 2]; else m = (v[c / 2] + v[c / 2 + 1]) / 2; printf "%.1f", 100 * m }' "$tmp/g")
        max=$(tail -1 "$tmp/g" | awk '{ printf "%.1f", 100 * $1 }')
        printf '  %-18s n=%-3s median %5s%%   worst %5s%%\n' "$g" "$c" "$med" "$max"
    done
}
if [ -n "$remeasured" ]; then
    echo "first pass:"
    OUT_SAVED=$OUT; OUT=$tmp/first.csv; summary median | sed "s|($tmp/first.csv)|(first pass)|; s/^/  /"; OUT=$OUT_SAVED
    echo "measured once more (over 25% off in the first pass):$remeasured"
fi
summary median
summary min
drift_after=$(probe after)
if [ -n "$drift_before" ] && [ -n "$drift_after" ]; then
    # shellcheck disable=SC2086 # two numbers each, split on purpose
    set -- $drift_before $drift_after
    echo "host drift: a one-token decode (d = 2048, f = 5632, fp32) streamed its weights at $1 GB/s" \
        "before the grid and $3 GB/s after; the spec predicts $2 GB/s."
    awk -v a="$1" -v b="$3" -v p="$2" 'BEGIN { d = (b > a ? b / a : a / b) - 1; e = (a > p ? a / p : p / a) - 1;
        if (d > 0.10 || e > 0.10) printf "  the host moved %.0f%% during the grid and %.0f%% from the spec: part of the errors above is the host'"'"'s\n", 100 * d, 100 * e }'
fi
