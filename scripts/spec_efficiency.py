#!/usr/bin/env python3
"""Put a fitted efficiency into a shipped hardware spec without touching the rest of it.

usage: scripts/spec_efficiency.py SPEC.yaml FITTED.yaml SOURCE.txt

FITTED.yaml is a spec `ffnroof fit --out` wrote for the same device; its `efficiency:` and
`uncertainty:` blocks replace SPEC's (the datasheet part, `derived:` and comments stay as they
are). Numbers are written to 4 significant digits (times in us or ns). SPEC's compute_max is
kept (a fit of wave utilisations does not determine it), and so is its efficiency source text,
under the new one (SOURCE.txt: what was fitted, to what, how), for the parameters not refitted."""
import re
import sys


def blocks(lines):
    """top-level key -> (start, end) line indices of its block"""
    out, key, start = {}, None, 0
    for i, l in enumerate(lines + ["END:"]):
        if l and not l[0].isspace() and not l.startswith("#") and ":" in l:
            if key:
                out[key] = (start, i)
            key, start = l.split(":", 1)[0], i
    return out


def sig4(x):
    return f"{float(f'{x:.4g}'):.10g}"


def tidy(line):
    """shorten the writer's exact numbers; times to us or ns"""
    m = re.match(r"^(\s*[\w\"-]+: )(-?[0-9.e+-]+)( (s|ns|us|ms))?$", line)
    if not m:
        return re.sub(r"(\d+\.\d{5,}(e[+-]?\d+)?)", lambda g: sig4(float(g.group(1))), line)
    if re.fullmatch(r"-?[0-9]+", m.group(2)):
        return line  # a count
    head, num, unit = m.group(1), float(m.group(2)), m.group(4)
    if unit:
        s = num * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]
        if s == 0:
            return f"{head}0 us"
        return f"{head}{sig4(s * 1e6)} us" if s >= 1e-6 else f"{head}{sig4(s * 1e9)} ns"
    return f"{head}{sig4(num)}"


def source_of(lines, s, e):
    """the `  source: |` text of a block, its lines without the indent"""
    out, on = [], False
    for l in lines[s:e]:
        if l.startswith("  source:"):
            on = True
            continue
        if on:
            if l.startswith("    ") or not l.strip():
                out.append(l[4:])
            else:
                break
    return out


def main():
    spec_path, fitted_path, source_path = sys.argv[1:4]
    spec = open(spec_path).read().split("\n")
    fitted = open(fitted_path).read().split("\n")
    sb, fb = blocks(spec), blocks(fitted)
    text = open(source_path).read().rstrip("\n").split("\n")
    old_src = source_of(spec, *sb["efficiency"]) if "efficiency" in sb else []
    old_cmax = None
    if "efficiency" in sb:
        for l in spec[sb["efficiency"][0]:sb["efficiency"][1]]:
            if l.startswith("  compute_max:"):
                old_cmax = l
    # a rerun of the same fit replaces its own earlier paragraph (from its first line down to the
    # next "Kept from before" line) instead of keeping it as history
    if old_src and text and text[0] in old_src:
        i = old_src.index(text[0])
        j = next((x for x in range(i + 1, len(old_src)) if old_src[x].startswith("Kept from before")),
                 len(old_src) - 1)
        old_src = old_src[:i] + old_src[j + 1:]
    eff_src = text + (["Kept from before (not refitted here):"] + old_src if old_src else [])
    new = {}
    for key in ("efficiency", "uncertainty"):
        if key not in fb:
            sys.exit(f"{fitted_path}: no '{key}:' block")
        s, e = fb[key]
        body = [tidy(l) for l in fitted[s:e] if l.strip()]
        if key == "efficiency" and old_cmax:
            body = [old_cmax if l.startswith("  compute_max:") else l for l in body]
        src = eff_src if key == "efficiency" else [
            "p10/p90 of measured/predicted over every FFN-shaped row the efficiency was fitted",
            "on (efficiency.source), each at least 6% from 1 (docs/model.md, \"Uncertainty\")."]
        new[key] = body + ["  source: |"] + ["    " + l if l else "" for l in src]
    out = list(spec)
    # replace in place from the last block up, so that indices stay valid; then append the
    # blocks the spec lacks
    for key in sorted((k for k in new if k in sb), key=lambda k: -sb[k][0]):
        s, e = sb[key]
        while e > s and not out[e - 1].strip():
            e -= 1
        out[s:e] = new[key]
    for key in (k for k in new if k not in sb):
        while out and not out[-1].strip():
            out.pop()
        out += new[key]
    open(spec_path, "w").write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
