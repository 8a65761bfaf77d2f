#!/usr/bin/env python3
"""The floors of the house, checked: every #include of the project's C sources against the table
of what may use what (docs/ARCHITECTURE.md), and no file circle anywhere.

A file's floor is the folder it lives in (the longest prefix in FLOORS). A public header
(include/ffnroof/X.h) belongs to the floor whose C files define the functions it declares; a
header whose functions are defined in two floors is itself an error (each header's functions
live in ONE library), and a header that declares no function (types, records, constants) belongs
to the lowest floor among the files that define anything it names, or to OWN_TYPES below.
Usage: .ci/layers.py [--verbose]   exit 0 clean, 1 on any forbidden arrow or circle.
"""
import os
import re
import subprocess
import sys

# floor -> the floors it may use (besides itself and base, which every floor may use)
FLOORS = {
    "base": set(),
    "sim": set(),
    "kernels": set(),
    "measure/probe": {"kernels"},
    "measure/bench": {"measure/probe", "kernels", "sim"},
    "measure/calibrate": {"measure/probe", "measure/bench", "kernels", "sim"},
    "measure/quant": {"measure/probe", "kernels", "sim"},
    "io/load": {"sim"},
    "io/write": {"sim", "io/load"},  # a writer reads back what it wrote with the one reader
    "report": {"sim", "io/write"},
    "cli": {"*"},
    "tests": {"*"},
    "bench": {"*"},
    "fuzz": {"*"},
}
# the public headers that declare no function of their own: which floor's records they hold
OWN_TYPES = {}
# arrows the rules forbid but the code still has; empty, and to stay so
ALLOW = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DECL = re.compile(r"\b(ffn_[A-Za-z0-9_]+)\s*\(")
WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
DEF_START = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \t\*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def tracked_sources(root):
    try:
        out = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, subdirs, files in os.walk(root):
            subdirs[:] = [s for s in subdirs if not s.startswith(("build", ".", "results"))]
            out += [os.path.relpath(os.path.join(d, f), root) for f in files
                    if f.endswith((".c", ".h"))]
    return sorted(f for f in out if not f.startswith(("bench/gpu/", ".ci/")))


def floor_of(path):
    best = None
    for f in FLOORS:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def definitions(text):
    """Names of the functions a C file defines at file scope."""
    names = set()
    lines = strip_comments(text).split("\n")
    for i, line in enumerate(lines):
        if not line or line[0] in " \t#{}" or line.startswith(("static ", "typedef ", "return ")):
            continue
        m = DEF_START.match(line)
        if not m:
            continue
        rest = "\n".join(lines[i:i + 40])
        brace, semi = rest.find("{"), rest.find(";")
        if brace >= 0 and (semi < 0 or brace < semi):
            names.add(m.group(1))
    return names


def strip_strings(text):
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def circles(graph):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[u] = min(low[u], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[u])
            if low[u] == index[u]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == u:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

    for v in sorted(set(graph) | {w for s in graph.values() for w in s}):
        if v not in index:
            visit(v)
    return found


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    verbose = "--verbose" in sys.argv
    files = tracked_sources(root)
    text = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text[f] = fh.read()
    errors = []

    for f in files:
        if floor_of(f) is None and not f.startswith("include/ffnroof/"):
            errors.append(f"{f}: in no floor of the table; put it in one (docs/ARCHITECTURE.md)")

    # who defines what
    defined_in = {}
    for f in files:
        if f.endswith(".c") and floor_of(f) not in (None, "tests", "bench", "fuzz", "cli"):
            for name in definitions(text[f]):
                defined_in.setdefault(name, set()).add(f)
        elif f.endswith(".c") and floor_of(f) == "cli":
            for name in definitions(text[f]):
                defined_in.setdefault(name, set()).add(f)

    # the owner of each public header, and the files that implement it
    public = [f for f in files if f.startswith("include/ffnroof/")]
    owner, impl = {}, {}
    for h in public:
        declared = set(DECL.findall(strip_comments(text[h])))
        floors, srcs = set(), set()
        for name in declared:
            for src in defined_in.get(name, ()):
                floors.add(floor_of(src))
                srcs.add(src)
        impl[h] = srcs
        base = os.path.basename(h)
        if len(floors) > 1:
            where = ", ".join(sorted(floors))
            errors.append(f"{h}: its functions are defined in several floors ({where}); "
                          "split the header so each part's functions live in one library")
        if len(floors) == 1:
            owner[h] = floors.pop()
        elif base in OWN_TYPES:
            owner[h] = OWN_TYPES[base]
        elif not floors:
            owner[h] = None  # records only: settled below by who uses it

    # include edges, resolved to files
    def resolve(src, inc):
        cands = [os.path.normpath(os.path.join(os.path.dirname(src), inc)),
                 os.path.normpath(os.path.join("include", inc))]
        for c in cands:
            if c in text:
                return c
        return None

    edges = {f: set() for f in files}
    for f in files:
        for line in text[f].split("\n"):
            m = INCLUDE.match(line)
            if m:
                tgt = resolve(f, m.group(1))
                if tgt:
                    edges[f].add(tgt)

    # a records-only public header belongs to the lowest floor that includes it
    order = list(FLOORS)
    for h in public:
        if owner.get(h) is None:
            users = [floor_of(f) for f in files if h in edges[f] and floor_of(f)]
            users = [u for u in users if u not in ("tests", "bench", "fuzz")]
            owner[h] = min(users, key=order.index) if users else "base"

    def floor_of_file(f):
        return owner[f] if f in owner else floor_of(f)

    # forbidden arrows
    for f in files:
        a = floor_of(f)
        if a is None:
            continue
        for g in sorted(edges[f]):
            b = floor_of_file(g)
            if b is None or a == b or b == "base":
                continue
            if "*" in FLOORS[a] or b in FLOORS[a]:
                continue
            if (a, b) in ALLOW:
                continue
            why = f" (its functions live in {b})" if g in owner else ""
            errors.append(f"{f}: includes {g}{why}: {a}/ may not use {b}/")

    # base includes nothing of the project but itself
    for f in files:
        if floor_of_file(f) == "base":
            for g in edges[f]:
                if floor_of_file(g) != "base":
                    errors.append(f"{f}: base/ includes {g} ({floor_of_file(g)}/)")

    # file circles: C files that call each other's functions, or headers that include each other
    unique = {name: next(iter(srcs)) for name, srcs in defined_in.items() if len(srcs) == 1}
    graph, because = {}, {}
    for f in files:
        if not f.endswith(".c") or floor_of(f) in (None, "tests", "bench", "fuzz"):
            continue
        for w in set(WORD.findall(strip_strings(strip_comments(text[f])))):
            g = unique.get(w)
            if g and g != f and w != "main":
                graph.setdefault(f, set()).add(g)
                because.setdefault((f, g), w)
    for f in files:
        if f.endswith(".h"):
            for g in edges[f]:
                graph.setdefault(f, set()).add(g)
    for comp in circles(graph):
        ring = []
        for a in comp:
            for b in comp:
                if b in graph.get(a, ()):
                    via = because.get((a, b))
                    ring.append(f"{a} -> {b}" + (f" ({via})" if via else " (#include)"))
        errors.append("file circle: " + "; ".join(ring) +
                      " (move the piece they share into its own file, one floor down)")

    if verbose:
        for h in public:
            print(f"{h}: {owner[h]}")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f".ci/layers.py: {len(errors)} problem(s); the floors are in docs/ARCHITECTURE.md",
              file=sys.stderr)
        return 1
    print(f".ci/layers.py: {len(files)} files, {sum(len(v) for v in edges.values())} includes: "
          "every arrow allowed, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
