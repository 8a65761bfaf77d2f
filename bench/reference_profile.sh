#!/bin/sh
# The reference profile of a host, as committed in profiles/vm/: calibrate with one
# thread and with all of them, then bench the kernels issue's shapes and five more on each
# calibrated spec, with the peers and --verify where BENCHMARKS.md shows them.
#
#   bench/reference_profile.sh [--ffnroof PATH] [--out DIR]
#
# --ffnroof defaults to build/cli/ffnroof (a Release build; scripts/main.sh makes one), --out
# to profiles/<hostname>. Writes DIR/threads-N/{hw.yaml,calibration.json,bench/<case>/} and the
# printed tables as DIR/threads-N.calibrate.txt and DIR/threads-N/bench.<case>.txt. Run it on
# a quiet machine: about 6 minutes on 2 cores. OpenBLAS's AVX-512 kernels need
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset; the script unsets them for the bench runs.
set -eu

FFNROOF=./build/cli/ffnroof
OUT=profiles/$(hostname)
while [ $# -gt 0 ]; do
    case "$1" in
    --ffnroof) FFNROOF=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reference_profile.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$FFNROOF" ] || { echo "reference_profile.sh: '$FFNROOF' is not an executable (build it, or --ffnroof PATH)" >&2; exit 2; }
ncpu=$(nproc)
threads=1
[ "$ncpu" -gt 1 ] && threads="1 $ncpu"
mkdir -p "$OUT"

for t in $threads; do
    echo "calibrate, $t thread(s)" >&2
    "$FFNROOF" calibrate --threads "$t" --out "$OUT/threads-$t" > "$OUT/threads-$t.calibrate.txt"
    H=$OUT/threads-$t/hw.yaml
    O=$OUT/threads-$t/bench
    run() {
        name=$1
        shift
        echo "bench $name, $t thread(s)" >&2
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$t" \
            "$FFNROOF" bench --hw "$H" --threads "$t" "$@" --out "$O/$name" > "$O.$name.txt"
    }
    run prefill-fp32 --shape 512,2048,5632 --dtype fp32 --peers openblas,onednn --verify
    run prefill-bf16 --shape 512,2048,5632 --dtype bf16 --peers onednn --verify
    run decode-fp32 --shape 1,4096,11008 --dtype fp32 --peers openblas,onednn --verify
    run decode-bf16 --shape 1,4096,11008 --dtype bf16 --peers onednn --verify
    run moe-fp32 --shape 64,2048,5632 --experts 8,2 --dtype fp32 --verify
    run moe-bf16 --shape 64,2048,5632 --experts 8,2 --dtype bf16 --verify
    run moe-decode-bf16 --shape 1,2048,5632 --experts 8,2 --dtype bf16
    run prefill-bf16-t128 --shape 128,4096,11008 --dtype bf16
    run prefill-fp32-t256 --shape 256,4096,11008 --dtype fp32
    run decode-fp32-t8 --shape 8,4096,11008 --dtype fp32
    run decode-bf16-t16 --shape 16,4096,11008 --dtype bf16
done
echo "wrote $OUT" >&2
