#!/usr/bin/env python3
"""End-to-end check of `ffnroof serve` against published serving runs (data/validation/
serving_runs.tsv; docs/validation.md "Serving end to end"). For each run: the same model,
device, engine, layout, dtypes, lengths and load, simulated; the published throughput (output
or total tokens/s) and median TPOT against the prediction, with the prediction's range.
Prints a Markdown table and the summary, the check rows apart from the ones the engines' two
serving terms were fitted to (the `role` column; scripts/serving_fit.py), and how often two
devices that one source ran under the same engine, model and load come out in the measured
order. Nothing is fitted here.

    scripts/serving_check.py [BUILD_DIR] [--rows r01,r05,..] [--serve-args '--seq-overhead 20us']
                             [--doc docs/validation.md]

--doc FILE: instead of printing, check that FILE's table of the runs is the one printed (every
row, no other), its summary table's figures and its device-order counts; list what differs
and exit 1 if anything does (a CTest of the suite, so that the document stays true to the code).
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys

from cli_args import take

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
only = take(args, "--rows")
only = set(only.split(",")) if only else None
doc = take(args, "--doc")
extra = (take(args, "--serve-args") or "").split()
build = args[0] if args else "build"
binary = os.path.join(root, build, "cli", "ffnroof")
if not os.access(binary, os.X_OK):
    print(f"serving_check.py: no ffnroof at {binary}: build it first (scripts/test.sh, or cmake --build)",
          file=sys.stderr)
    sys.exit(2)
rows = [r for r in csv.DictReader(
    (l for l in open(os.path.join(root, "data/validation/serving_runs.tsv")) if not l.startswith("#")),
    delimiter="\t") if only is None or r["id"] in only]


def run(r):
    cmd = [binary, "serve", "--model", r["model"], "--hw", r["hw"], "--engine", r["engine"],
           "--tp", r["tp"], "--dp", r["dp"], "--ep", r["ep"], "--wdtype", r["wdtype"],
           "--adtype", r["adtype"], "--kv-dtype", r["kv_dtype"], "--prompt", r["isl"],
           "--output", r["osl"], "--requests", r["requests"], "--max-devices", "64", "--format", "json"]
    cmd += ["--lengths", "sharegpt"] if r["spread"] == "sharegpt" else ["--spread", r["spread"]]
    cmd += (["--rate", r["value"]] if r["mode"] == "rate" else
            ["--concurrency", r["value"]] if r["mode"] == "concurrency" else ["--offline"])
    if r["max_seqs"]:
        cmd += ["--max-seqs", r["max_seqs"]]
    if r.get("max_batched"):
        cmd += ["--max-batched-tokens", r["max_batched"]]
    cmd += extra
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        return None, " ".join(cmd[1:]), out.stderr.strip()
    return json.loads(out.stdout.strip().splitlines()[0]), " ".join(cmd[1:]), ""


def key(r):
    """The published comparison a run belongs to: one lab's page (its repository and folder,
    any version of it: GPUStack's pages of one model on two devices), engine, model, format,
    load (the mean lengths to 10 tokens: a sample's means move by a token or two between runs)
    and scheduler budget; the layout as well where the devices' runs are on two pages, one
    source file giving each device's own layout (dstack's H200 with DP attention, its MI300X
    at TP 8)."""
    m = re.match(r"https://github.com/([^/]+/[^/]+)/blob/[0-9a-f]+/(.*)/[^/]+$", r["source"])
    page = m.group(1) + "/" + m.group(2) if m else r["source"]
    load = tuple(str(round(float(r[c]), -1)) for c in ("isl", "osl"))
    return (page, r["engine"], r["model"], r["wdtype"], *load, r["spread"], r["mode"], r["value"],
            r["metric"], r.get("max_batched") or "")


def layout(r):
    return (r["source"], r["tp"], r["dp"], r["ep"])


def pct(x):
    return f"{100 * x:+.0f}%"


lines = []  # what the script prints, or checks against --doc


def out(text=""):
    lines.append(text)


out("| run | engine | model | device | layout | workload | measured | predicted (range) | "
    "pred/meas | TPOT measured | TPOT predicted | pred/meas |")
out("|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|")
tput, tpot = {"fit": [], "check": []}, {"fit": [], "check": []}
inside = {"fit": [], "check": []}  # the measured throughput within the printed range
ranked = []  # (workload key, device, metric, measured, predicted, layout) for the device pairs
for r in rows:
    j, cmd, err = run(r)
    model = os.path.basename(r["model"]).replace(".json", "")
    # as ffnroof's tables name a layout (ffn_plan_shape_name): TP shown when it is more than 1
    # or nothing else is
    parts = [f"TP{r['tp']}"] if r["tp"] != "1" or (r["dp"] == "1" and r["ep"] == "1") else []
    parts += [f"DP{r['dp']}"] if r["dp"] != "1" else []
    parts += [f"EP{r['ep']}"] if r["ep"] != "1" else []
    lay = "/".join(parts)
    load = (f"{r['isl']}/{r['osl']}" + (" ShareGPT" if r["spread"] == "sharegpt" else
                                          f" x[{1 - float(r['spread']):g}, {1 + float(r['spread']):g}]"
                                          if r["spread"] != "0" else "") +
            (f", {r['value']} req/s" if r["mode"] == "rate" else
             f", concurrency {r['value']}" if r["mode"] == "concurrency" else f", {r['requests']} at once") +
            (f", {r['max_batched']} tokens a step" if r.get("max_batched") else ""))
    if j is None:
        out(f"| {r['id']}{' (fit)' if r['role'] == 'fit' else ''} | {r['engine']} | {model} | {r['hw']} | {lay} | {load} | | refused: "
              f"{err} | | | | |")
        continue
    dev = j["devices"]
    if r["metric"] == "tpot":
        meas = pred = lo = hi = None
    elif r["metric"] == "output":
        tv = j["tokens_per_s_device"]
        meas, pred, lo, hi = float(r["measured"]), tv["value"] * dev, tv["range"][0] * dev, tv["range"][1] * dev
    else:  # total: input + output; its range scales as the output's
        tv = j["tokens_per_s_device"]
        k = j["total_tokens_per_s"] / (tv["value"] * dev) if tv["value"] > 0 else 0
        meas, pred = float(r["measured"]), j["total_tokens_per_s"]
        lo, hi = tv["range"][0] * dev * k, tv["range"][1] * dev * k
    cells = ["", "", ""]
    if meas:
        q = pred / meas
        tput[r["role"]].append(abs(q - 1))
        inside[r["role"]].append(lo <= meas <= hi)
        cells = [f"{meas:.0f} {r['metric']}", f"{pred:.0f} ({lo:.0f}-{hi:.0f})", pct(q - 1)]
        ranked.append((key(r), r["hw"], "throughput", meas, pred, layout(r)))
    t_cells = ["", "", ""]
    if r["tpot_ms"]:
        m, p = float(r["tpot_ms"]), 1e3 * j["tpot_s"]["p50"]
        tpot[r["role"]].append(abs(p / m - 1))
        t_cells = [f"{m:.1f} ms", f"{p:.1f} ms", pct(p / m - 1)]
        ranked.append((key(r), r["hw"], "TPOT", -m, -p, layout(r)))
    out(f"| {r['id']}{' (fit)' if r['role'] == 'fit' else ''} | {r['engine']} | {model} | {r['hw']} | {lay} | {load} | " +
          " | ".join(cells + t_cells) + " |")


def median_p90(v):
    v = sorted(v)
    return 100 * statistics.median(v), 100 * v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]


def summary(name, v):
    if not v:
        return
    m, p = median_p90(v)
    out(f"- {name}: {len(v)} runs, median |pred/meas - 1| {m:.0f}%, p90 {p:.0f}%")


out()
summary("throughput, check rows", tput["check"])
for role in ("check", "fit"):
    out(f"- throughput inside the printed range, {role} rows: {sum(inside[role])} of "
        f"{len(inside[role])}")
summary("median TPOT, check rows", tpot["check"])
summary("throughput, fit rows", tput["fit"])
summary("median TPOT, fit rows", tpot["fit"])
summary("throughput, all", tput["check"] + tput["fit"])
summary("median TPOT, all", tpot["check"] + tpot["fit"])

# Device ranking: every two runs of one comparison (same source, engine, model, format and load) on
# two devices whose measured values differ by more than 10%: is the faster one predicted faster?
order = {}
for metric in ("throughput", "TPOT"):
    pts = [x for x in ranked if x[2] == metric]
    pairs = right = 0
    for i, a in enumerate(pts):
        for b in pts[i + 1:]:
            if a[0] != b[0] or a[1] == b[1]:
                continue
            if a[5][0] != b[5][0] and a[5][1:] != b[5][1:]:
                continue  # two pages: the same layout on both devices
            if max(abs(a[3]), abs(b[3])) / min(abs(a[3]), abs(b[3])) <= 1.10:
                continue
            pairs += 1
            right += (a[3] > b[3]) == (a[4] > b[4])
    order[metric] = (right, pairs)
    if pairs:
        out(f"- device order, {metric}: {right} of {pairs} pairs measured more than 10% apart "
            f"predicted in the measured order")

if doc is None:
    print("\n".join(lines))
    sys.exit(0)

# --doc: the document's table of the runs, its summary table's check, fit and all rows, and its
# device-order counts, against what this run computes
text = open(doc).read()
start = text.index("| run | engine | model | device | layout | workload |")
table = text[start:text.index("\n\n", start)].splitlines()
row = re.compile(r"^\| r[0-9]+")
want = [l for l in lines if row.match(l)]
have = [l for l in table if row.match(l)]
bad = [f"{doc}: not as printed now: {l}" for l in have if l not in want]
bad += [f"{doc}: missing: {l}" for l in want if l not in have]


def cell(v):
    m, p = median_p90(v)
    return f"{m:.0f}% / {p:.0f}%"


t_all, p_all = tput["check"] + tput["fit"], tpot["check"] + tpot["fit"]
expect = [
    f"| check ({sum(1 for r in rows if r['role'] == 'check')} runs; {len(tput['check'])} with a "
    f"throughput, {len(tpot['check'])} with a TPOT) | {cell(tput['check'])} | {cell(tpot['check'])} |",
    f"| fit ({sum(1 for r in rows if r['role'] == 'fit')} runs) | {cell(tput['fit'])} | "
    f"{cell(tpot['fit'])} |",
    f"| all | {cell(t_all)} | {cell(p_all)} |",
]
expect += [f"inside the printed range for {sum(inside['check'])} of {len(inside['check'])} check "
           f"rows and {sum(inside['fit'])} of {len(inside['fit'])} fit rows"]
if all(order[k][1] for k in order):
    expect.append(f"in {order['throughput'][0]} of {order['throughput'][1]} (throughput) and "
                  f"{order['TPOT'][0]} of {order['TPOT'][1]} (TPOT)")
flat = " ".join(text.split())  # the prose may wrap anywhere
bad += [f"{doc}: lacks: {e}" for e in expect if " ".join(e.split()) not in flat]
for b in bad:
    print(b, file=sys.stderr)
if bad:
    print(f"serving_check.py: {doc} is not what the simulator gives now: regenerate it with "
          f"scripts/serving_check.py", file=sys.stderr)
sys.exit(1 if bad else 0)
