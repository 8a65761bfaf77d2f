#!/bin/sh
# Combine the public calibration data of each GPU into the one file `ffnroof fit --data` reads
# (data/calib/fit-<device>.csv, the GPU kit's format). Sources and licences: data/calib/README.md.
# usage: scripts/calib_combine.sh   (from the repository root)
set -eu
d=data/calib
body() { grep -v -e '^#$' -e '^#[^@]' -e '^kind,' "$1"; }
combine() {
    out=$d/fit-$1.csv
    shift
    {
        echo "# Public calibration data for $(basename "$out" .csv | sed 's/^fit-//'), combined by"
        echo "# scripts/calib_combine.sh from: $*"
        echo "# (sources, licences and what each part is: data/calib/README.md). Not measured here."
        echo "kind,dtype,m,n,k,time_ms"
        for f in "$@"; do
            case $f in
            *a100-sxm-80gb-gemm-fp16.csv) echo "#@ harness on"; grep -v '^#' "$f" | tail -n +2 | sed 's/^/gemm,fp16,/' ;;
            *public-*) echo "#@ harness off"; body "$f" ;;
            *) echo "#@ harness on"; body "$f" ;;
            esac
        done
    } > "$out"
}
combine h100-sxm $d/neusight-h100-sxm-linear-fp32.csv $d/public-h100-sxm.csv
combine a100-pcie-80gb $d/neusight-a100-pcie-80gb-linear-fp32.csv \
    $d/neusight-a100-pcie-80gb-elem-fp32.csv $d/public-a100-pcie-80gb.csv
combine a100-sxm-80gb tests/data/fit/a100-sxm-80gb-gemm-fp16.csv $d/public-a100-sxm-80gb.csv
