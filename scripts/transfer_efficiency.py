#!/usr/bin/env python3
"""Give a device without measurements the efficiency of a fitted one (docs/model.md, "Transfer to
devices never measured"): the `efficiency:` block of FROM.yaml, copied into TO.yaml with a source
line saying so, and FROM's residual range widened to p10 x LO, p90 x HI as TO's `uncertainty:`.
A level_max of an on-chip level TO does not have is left out; with --fp4-from-nvfp4 a device
with mxfp4 units takes the nvfp4 parameters for mxfp4 (the same fp4 tensor-core path; only the
scales' format differs) where FROM has none of its own; with --no-kernels FROM's kernel rules
(`kernels_by_dtype`: an engine's tile dispatch for FROM's architecture) are left out, for a device
of another architecture, whose kernels that dispatch does not run; with --own-kernels TO keeps its
own rules in their place.

usage: scripts/transfer_efficiency.py FROM.yaml TO.yaml LO HI "why" [--fp4-from-nvfp4]
       [--no-kernels | --own-kernels]"""
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from spec_efficiency import blocks  # noqa: E402


def levels_of(lines):
    return set(re.findall(r"name: ([^,}]+)", "\n".join(l for l in lines if "capacity:" in l)))


def kernel_lines(lines, s, e):
    """the `kernels_by_dtype:` block of lines[s:e] (its key line and its entries), or []"""
    for i in range(s, e):
        if lines[i].startswith("  kernels_by_dtype:"):
            j = i + 1
            while j < e and lines[j].startswith("    "):
                j += 1
            return lines[i:j]
    return []


def main():
    src_path, dst_path, lo, hi, why = sys.argv[1:6]
    fp4 = "--fp4-from-nvfp4" in sys.argv[6:]
    own_kernels = "--own-kernels" in sys.argv[6:]
    no_kernels = own_kernels or "--no-kernels" in sys.argv[6:]
    src = open(src_path).read().split("\n")
    dst = open(dst_path).read().split("\n")
    sb, db = blocks(src), blocks(dst)
    s, e = sb["efficiency"]
    drop = set()
    if no_kernels:
        k = kernel_lines(src, s, e)
        if k:
            i = src.index(k[0], s)
            drop = set(range(i, i + len(k)))
    eff = []
    have = levels_of(dst)
    skip_level = False
    for idx in range(s, e):
        l = src[idx]
        if l.startswith("  source:"):
            break
        if idx in drop:
            continue
        if l.startswith("  level_max:"):
            skip_level = True
            kept = [x for x in src[src.index(l) + 1:e] if x.startswith("    ")]
            keep = [x for x in kept if x.split(":")[0].strip().strip('"') in have]
            if keep:
                eff.append(l)
                eff += keep
            continue
        if skip_level and l.startswith("    "):
            continue
        skip_level = False
        if l.strip():
            eff.append(l)
    if own_kernels and "efficiency" in db:
        eff += kernel_lines(dst, *db["efficiency"])
    if fp4:
        out = []
        for l in eff:
            out.append(l)
            m = re.match(r"^    nvfp4: (.*)$", l)
            if m and not any(x.startswith("    mxfp4:") for x in eff):
                out.append("    mxfp4: " + m.group(1))
        eff = out
    name = re.search(r"^name: (.*)$", "\n".join(src), re.M).group(1)
    eff += ["  source: |", f"    Transferred from {name} ({src_path}), not measured on this device:",
            *["    " + x for x in why.split("\n")],
            "    The range is the fitted device's, widened (docs/model.md, \"Transfer to devices",
            "    never measured\")."]
    us, ue = sb["uncertainty"]
    p = {k: float(v) for k, v in re.findall(r"^  (p10|p90): ([0-9.e+-]+)$", "\n".join(src[us:ue]), re.M)}
    by = re.findall(r"^    ([\w-]+): \{p10: ([0-9.e+-]+), p90: ([0-9.e+-]+)\}$", "\n".join(src[us:ue]), re.M)
    unc = ["uncertainty:", f"  p10: {p['p10'] * float(lo):.4g}", f"  p90: {p['p90'] * float(hi):.4g}",
           "  source: |",
           f"    {name}'s fitted p10-p90 ({p['p10']:.4g}-{p['p90']:.4g}) widened by x{lo} and x{hi}: a device",
           "    never measured, its efficiency transferred by the family rule (docs/model.md)."]
    if by:
        unc += ["  by_dtype:"] + [f"    {d}: {{p10: {float(a) * float(lo):.4g}, p90: {float(b) * float(hi):.4g}}}"
                                  for d, a, b in by]
    out = list(dst)
    for key, body in sorted((("efficiency", eff), ("uncertainty", unc)),
                            key=lambda kv: -db.get(kv[0], (-1, 0))[0]):
        if key in db:
            a, b = db[key]
            while b > a and not out[b - 1].strip():
                b -= 1
            out[a:b] = body
    for key, body in (("efficiency", eff), ("uncertainty", unc)):
        if key not in db:
            while out and not out[-1].strip():
                out.pop()
            out += body
    open(dst_path, "w").write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
