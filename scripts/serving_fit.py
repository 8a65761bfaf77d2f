#!/usr/bin/env python3
"""The fit of the engines' two serving terms (hw/arch/engines.yaml `seq_overhead` and
`flop_overhead`, one value each for vLLM, SGLang and TensorRT-LLM) to the `fit` rows of
data/validation/serving_runs.tsv (docs/validation.md, "Serving end to end"): every pair of a grid
is simulated with scripts/serving_check.py, and the pair with the smallest mean |ln(pred/meas)|
over the fit rows' throughputs and TPOTs together is the fit (a mean, which weighs every row,
rather than the median, which the grid's neighbours tie on to a point). Prints the grid's table,
best first, with the median and p90 of |pred/meas - 1|, the best pair's p10 and p90 of measured /
predicted step time (the scheduler's `range`), then a leave-one-source-out check: the
fit on the other sources' rows, and how it and the whole fit predict the source left out.
Nothing is written: the chosen values go into engines.yaml by hand, with this command's output
cited.

    scripts/serving_fit.py [BUILD_DIR] [--seq 0,25,50] [--flop 0,0.5,1]
"""
import csv
import math
import os
import statistics
import subprocess
import sys

from cli_args import take

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
seqs = [float(x) for x in take(args, "--seq", "0,10,20,30,40,50,60,75,100,125,150").split(",")]
flops = [float(x) for x in take(args, "--flop", "0,0.2,0.4,0.5,0.6,0.75,1,1.5").split(",")]
build = args[0] if args else "build"
fit = [r for r in csv.DictReader(
    (l for l in open(os.path.join(root, "data/validation/serving_runs.tsv")) if not l.startswith("#")),
    delimiter="\t") if r["role"] == "fit"]
if not fit:
    sys.exit("serving_fit.py: no fit rows in data/validation/serving_runs.tsv")
rows = [r["id"] for r in fit]
source = {r["id"]: r["source"] for r in fit}


def errors(seq_us, flop):
    """signed pred/meas - 1 of each fit row's throughput and TPOT (None: not given), by row"""
    out = subprocess.run([sys.executable, os.path.join(root, "scripts/serving_check.py"), build,
                          "--rows", ",".join(rows), "--serve-args",
                          f"--seq-overhead {seq_us:g}us --flop-overhead {flop:g}"],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit(out.stderr.strip() or f"serving_check.py failed at {seq_us} us, {flop}")
    e = {}
    for line in out.stdout.splitlines():
        if not line.startswith("| r") or line.startswith("| run"):
            continue
        c = [x.strip() for x in line.split("|")]
        e[c[1].split()[0]] = tuple(float(v[:-1]) / 100 if v.endswith("%") else None
                                   for v in (c[9], c[12]))
    return e


def p90(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]


def score(e, ids):
    """mean |ln(pred/meas)|, median and p90 of |pred/meas - 1| over the rows ids"""
    v = [x for i in ids for x in e[i] if x is not None]
    a = [abs(x) for x in v]
    return statistics.fmean(abs(math.log1p(x)) for x in v), statistics.median(a), p90(a), len(v)


grid = {(s, f): errors(s, f) for s in seqs for f in flops}
res = sorted((score(e, rows), k) for k, e in grid.items())
print(f"fit rows: {', '.join(rows)} ({res[0][0][3]} throughputs and TPOTs)")
print("| seq_overhead | flop_overhead | mean abs ln | median | p90 |")
print("|---:|---:|---:|---:|---:|")
for (l, m, q, _), (s, f) in res:
    print(f"| {s:g} us | {f:g} | {l:.3f} | {100 * m:.1f}% | {100 * q:.1f}% |")
best = res[0][1]
# the fit's own spread, for engines.yaml's `range`: measured / predicted step time, a TPOT's
# ratio as it is and a throughput's inverted (more tokens predicted: a shorter step)
step = sorted([1 + t for t, _ in (grid[best][i] for i in rows) if t is not None] +
              [1 / (1 + p) for _, p in (grid[best][i] for i in rows) if p is not None])


def quantile(v, f):
    x = f * (len(v) - 1)
    i = int(x)
    return v[i] + (v[min(i + 1, len(v) - 1)] - v[i]) * (x - i)


print(f"\nat {best[0]:g} us and {best[1]:g}: measured / predicted step time p10 "
      f"{quantile(step, 0.1):.3f}, p90 {quantile(step, 0.9):.3f} (engines.yaml `range`)")
print("\n| source left out | its rows | fit on the others | its median / p90 then | under the whole fit |")
print("|---|---:|---|---:|---:|")
for src in sorted(set(source.values())):
    out = [i for i in rows if source[i] == src]
    rest = [i for i in rows if source[i] != src]
    k = min(grid, key=lambda k: score(grid[k], rest)[0])
    _, m, q, _ = score(grid[k], out)
    _, mb, qb, _ = score(grid[best], out)
    parts = src.rstrip("/").split("/")
    label = parts[2] + " .. " + "/".join(parts[-2:])
    print(f"| {label} | {len(out)} | {k[0]:g} us, {k[1]:g} | {100 * m:.0f}% / {100 * q:.0f}% | "
          f"{100 * mb:.0f}% / {100 * qb:.0f}% |")
