#!/usr/bin/env python3
"""Turn the public AMD GEMM measurements (data/calib/amd-public-points.tsv, each row citing its
source) into the GPU kit's fit format (docs/formats.md "Fit data"), one file per device:
data/calib/public-mi300x.csv (the MI300X rows and the aiter rows tuned on MI300X/MI325X) and
data/calib/public-mi355x.csv (the MI355X rows and the aiter rows tuned on MI350X/MI355X).
A row given as TFLOPS becomes the time 2 m n k / rate; the MAMF rows (the best shape of a sweep)
go under '#@ best-of-sweep on'; of a shape measured more than once the fastest is kept (the
rocm-libraries M = 1 pairs time hipBLASLt against vLLM's wvSplitK skinny kernel, and vLLM runs the
faster; the two Azure MI300X runs differ by 5x at 1024^3 fp8, the slower one an older library).
Every time is a kernel's own (no per-call harness): '#@ harness off'.

usage: scripts/calib_amd.py [data/calib]"""
import csv
import os
import sys

DEVICES = {"mi300x": ("MI300X", "MI300X/MI325X"), "mi355x": ("MI355X", "MI350X/MI355X")}


def rows(path):
    with open(path, newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            yield r


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "data/calib"
    src = os.path.join(root, "amd-public-points.tsv")
    for dev, names in DEVICES.items():
        best, fastest = [], {}
        for r in rows(src):
            if r["device"] not in names:
                continue
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            if r["latency_us"]:
                us = float(r["latency_us"])
            else:
                us = 2.0 * m * n * k / (float(r["tflops"]) * 1e12) * 1e6
            if "MAMF" in r["source"]:
                best.append(f"gemm,{r['dtype']},{m},{n},{k},{us:.6g}")
            else:
                key = (r["dtype"], m, n, k)
                fastest[key] = min(us, fastest.get(key, us))
        plain = [f"gemm,{dt},{m},{n},{k},{us:.6g}" for (dt, m, n, k), us in sorted(fastest.items())]
        out = os.path.join(root, f"public-{dev}.csv")
        with open(out, "w") as f:
            f.write(f"# {dev}: public GEMM measurements, from {src} (each row's source there)\n")
            f.write("#@ harness off\nkind,dtype,m,n,k,time_us\n")
            f.write("\n".join(plain) + "\n")
            if best:
                f.write("#@ best-of-sweep on\n" + "\n".join(best) + "\n#@ best-of-sweep off\n")
        print(f"wrote {out}: {len(plain)} rows, {len(best)} best-of-sweep")


if __name__ == "__main__":
    main()
