#!/usr/bin/env python3
"""Put the fitted attention: and collectives: blocks into a shipped hardware spec without touching
the rest of it.

usage: scripts/spec_blocks.py SPEC.yaml FITTED.yaml

FITTED.yaml is a spec `ffnroof fit --out` wrote for the same device after fitting attention and
communication tables (scripts/fit_attention_specs.sh); its top-level `attention:` and
`collectives:` blocks replace SPEC's, or go in before `uncertainty:` (else at the end). Numbers are
written to 4 significant digits: times in us or ns, bandwidths in GB/s."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_efficiency import blocks  # noqa: E402  (one reader of a spec's top-level blocks)

TIME = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
BW = {"B/s": 1, "KiB/s": 1024, "MiB/s": 1024**2, "GiB/s": 1024**3, "kB/s": 1e3, "MB/s": 1e6,
      "GB/s": 1e9, "TB/s": 1e12}
NAMES = ("attention", "collectives")


def sig4(x):
    return f"{float(f'{x:.4g}'):.10g}"


def value(num, unit):
    x = float(num)
    if unit in TIME:
        s = x * TIME[unit]
        if s == 0:
            return "0 us"
        return f"{sig4(s * 1e6)} us" if s >= 1e-6 else f"{sig4(s * 1e9)} ns"
    if unit in BW:
        return f"{sig4(x * BW[unit] / 1e9)} GB/s"
    if unit:
        return f"{num} {unit}"
    if re.fullmatch(r"-?[0-9]+", num):
        return num
    return sig4(x)


PAIR = re.compile(r"(\b[a-z_0-9]+: )(-?[0-9][0-9.e+-]*)( ([A-Za-z/]+))?(?=[,}]|$)")


def tidy(line):
    if line.lstrip().startswith(("source:",)) or not re.search(r": -?[0-9]", line):
        return line
    return PAIR.sub(lambda m: m.group(1) + value(m.group(2), m.group(4)), line)


def main():
    spec_path, fitted_path = sys.argv[1:3]
    spec = open(spec_path).read().split("\n")
    fitted = open(fitted_path).read().split("\n")
    fb = blocks(fitted)
    new = []
    for name in NAMES:
        if name not in fb:
            continue
        s, e = fb[name]
        in_source = False
        for l in fitted[s:e]:
            if l.startswith("  source:"):
                in_source = True
            elif not l.startswith("    ") and l.strip():
                in_source = False
            new.append(l if in_source else tidy(l))
    sb = blocks(spec)
    for name in NAMES:  # drop the old blocks, last first
        pass
    drop = sorted((sb[n] for n in NAMES if n in sb), reverse=True)
    for s, e in drop:
        del spec[s:e]
    sb = blocks(spec)
    at = sb["uncertainty"][0] if "uncertainty" in sb else len(spec) - (1 if spec[-1] == "" else 0)
    spec[at:at] = [l for l in new if l != ""]
    open(spec_path, "w").write("\n".join(spec))


if __name__ == "__main__":
    main()
