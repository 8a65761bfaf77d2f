#!/usr/bin/env python3
"""Extract the NeuSight measurements ffnroof fits to (data/calib/, docs/model.md "Calibration
data") from a checkout of github.com/sitar-lab/NeuSight (MIT licence).

usage: scripts/calib_neusight.py NEUSIGHT_GIT_DIR COMMIT OUT_DIR

Writes, in the GPU kit's fit format (kind,dtype,m,n,k,time_ms; docs/formats.md):
  neusight-<device>-linear-fp32.csv  every torch.nn.Linear row of scripts/asplos/data/dataset/
                                     test/linear.csv for the device (B = 1; NeuSight's M tokens,
                                     N in, K out; fp32 SIMT kernels); the cuBLAS kernel column is
                                     dropped (its tiles are in docs/model.md)
  neusight-<device>-elem-fp32.csv    the binary (add, mul) and unary (relu) elementwise rows
                                     of test/elem.csv for the device ([B, H] fp32 tensors)
"""
import csv
import io
import subprocess
import sys

DEVICES = {
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
}
BINARY = {"add", "mul"}
UNARY = {"relu"}


def show(git_dir, commit, path):
    out = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                         check=True, capture_output=True).stdout
    return list(csv.DictReader(io.StringIO(out.decode())))


def main():
    git_dir, commit, out_dir = sys.argv[1:4]
    lin = show(git_dir, commit, "scripts/asplos/data/dataset/test/linear.csv")
    elem = show(git_dir, commit, "scripts/asplos/data/dataset/test/elem.csv")
    head = ("# Source: github.com/sitar-lab/NeuSight (MIT licence, (c) 2025 Georgia Institute of\n"
            f"# Technology and Microsoft Corporation; see data/calib/LICENSE-NeuSight), commit {commit},\n"
            "# {path}, rows with Device = '{dev}'. Latency column (ms, PyTorch {torch}, CUDA\n"
            "# events around one call as NeuSight measured it), fp32. Extracted by scripts/calib_neusight.py.\n")
    for dev, name in DEVICES.items():
        rows = [r for r in lin if r["Device"] == dev and r["OPName"] == "linear"]
        with open(f"{out_dir}/neusight-{name}-linear-fp32.csv", "w") as f:
            f.write(head.format(path="scripts/asplos/data/dataset/test/linear.csv", dev=dev,
                                torch=rows[0]["Torch Version"]))
            f.write("# torch.nn.Linear(N, K, bias=True) on an [M, N] input (NeuSight's columns;\n"
                    "# B = 1), written as ffnroof's m = M, n = K (out), k = N (in). Time: CUDA\n"
                    "# events around one call, mean of the fastest samples (neusight/Dataset/collect.py).\n")
            f.write("kind,dtype,m,n,k,time_ms\n")
            for r in rows:
                assert r["B"] == "1"
                # NeuSight's linear dims: input [B, M, N], torch.nn.Linear(N, K): N is the
                # input width (ffnroof's k), K the output width (ffnroof's n)
                f.write(f"gemm,fp32,{r['M']},{r['K']},{r['N']},{float(r['Latency']):.6g}\n")
        rows = [r for r in elem if r["Device"] == dev and r["OPName"] in BINARY | UNARY]
        if not rows:
            continue
        with open(f"{out_dir}/neusight-{name}-elem-fp32.csv", "w") as f:
            f.write(head.format(path="scripts/asplos/data/dataset/test/elem.csv", dev=dev,
                                torch=rows[0]["Torch Version"]))
            f.write("# OPName add/mul (two [B, H] inputs: kind binary) and relu (kind unary).\n")
            f.write("kind,dtype,m,n,k,time_ms\n")
            for r in rows:
                kind = "binary" if r["OPName"] in BINARY else "unary"
                f.write(f"{kind},fp32,{r['B']},{r['H']},1,{float(r['Latency']):.6g}\n")


if __name__ == "__main__":
    main()
