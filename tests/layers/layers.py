#!/usr/bin/env python3
"""layers.py - the layers of gpuplan's code, and what crosses them.

    common < pricing < simulator < planner < export <
      executor (exec.h < device < comm < train < run) < cli

A file may include and call only files of its own layer and of the layers
before it.  Includes come from the `#include "..."` lines of every source
and header, resolved as the compiler resolves them (the file's own folder,
then the Makefile's -I folders); calls from the built objects: a symbol one
object leaves undefined (nm -u) and another defines is a call from the
first file to the second.  executor/exec.h is the executor's interface:
plain data and the entry points of every executor layer, for the CLI; it
sits below the executor's folders and includes none of them.

Inside the folders of CYCLE_FREE no two files call each other, directly
or round a longer circle; no command's file (cli/cmd_X.c, cmd_X_json.c)
calls another's.  Object names are unique, since `ar` keeps only one of
two members of the same name.

    layers.py --list BUILD    every include and call that crosses a layer
    layers.py --check BUILD   one "ok"/"not ok" line per rule and a closing
                              "N passed, N failed" (exit 1 on a failure)
"""
import collections
import os
import re
import signal
import subprocess
import sys

# (folder, layer name), bottom up; a file belongs to the longest folder
# that holds it.
LAYERS = [
    ("common", "common"),
    ("pricing", "pricing"),
    ("simulator", "simulator"),
    ("planner", "planner"),
    ("export", "export"),
    ("executor/exec.h", "executor"),
    ("executor/device", "executor/device"),
    ("executor/comm", "executor/comm"),
    ("executor/train", "executor/train"),
    ("executor/run", "executor/run"),
    ("cli", "cli"),
]
# the -I folders of the Makefile (INCLUDES), in order
INCLUDE_DIRS = ["common", "pricing", "simulator", "planner", "export", "executor"]
# folders whose files call no circle
CYCLE_FREE = ["simulator", "planner", "export", "executor", "cli"]
SOURCE = re.compile(r"\.(c|h|cu)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for rank, (folder, name) in enumerate(LAYERS):
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(LAYERS[best][0]):
                best = rank
    return best


def sources():
    out = []
    for top in sorted({f.split("/")[0] for f, _ in LAYERS}):
        for root, _, files in os.walk(top):
            out += [os.path.join(root, f) for f in sorted(files) if SOURCE.search(f)]
    return sorted(out)


def resolve(path, name):
    for d in [os.path.dirname(path)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None


def includes():
    """[(from, to or None, name, line)] of every quoted include."""
    out = []
    for f in sources():
        with open(f, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if m:
                    out.append((f, resolve(f, m.group(1)), m.group(1), n))
    return out


def source_of(build, obj):
    """executor/comm/exec_job.c for BUILD/executor/comm/exec_job.o."""
    rel = os.path.relpath(obj, build)
    if rel.endswith(".cu.o"):
        return rel[:-5] + ".cu"
    return rel[:-2] + ".c"


def objects(build):
    out = []
    for top in sorted({f.split("/")[0] for f, _ in LAYERS}):
        for root, _, files in os.walk(os.path.join(build, top)):
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".o")]
    # only objects whose source still exists (a moved file leaves its
    # old object behind in an incremental build)
    return [o for o in out if os.path.isfile(source_of(build, o))]


def nm(args):
    r = subprocess.run(["nm"] + args, capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def calls(build):
    """[(from source, to source, symbol)] of every call between objects."""
    objs = objects(build)
    defined = {}
    for o in objs:
        for line in nm(["-g", "--defined-only", o]):
            parts = line.split()
            # strong definitions only: a template or inline function is
            # defined weakly (W, V) in every object that uses it
            if len(parts) == 3 and parts[1] in "TDBRGS":
                defined.setdefault(parts[2], source_of(build, o))
    out = []
    for o in objs:
        src = source_of(build, o)
        for line in nm(["-u", o]):
            sym = line.split()[-1]
            to = defined.get(sym)
            if to and to != src:
                out.append((src, to, sym))
    return out


def circles(edges):
    """Strongly connected groups of more than one file (Tarjan)."""
    g = collections.defaultdict(set)
    for a, b in edges:
        g[a].add(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def name(rank):
    return LAYERS[rank][1]


def list_all(build):
    inc = includes()
    cl = calls(build)
    print("layers, bottom up: " + " < ".join(n for _, n in LAYERS))
    for rank in range(len(LAYERS)):
        ups = collections.Counter()
        down = collections.Counter()
        for f, t, _, _ in inc:
            if t and layer_of(f) == rank and layer_of(t) != rank:
                (ups if layer_of(t) > rank else down)[name(layer_of(t))] += 1
        calls_to = collections.defaultdict(set)
        for f, t, s in cl:
            if layer_of(f) == rank and layer_of(t) != rank:
                calls_to[(f, t)].add(s)
        print("\n%s" % name(rank))
        print("  includes: %s" % (", ".join("%s %d" % kv for kv in sorted(down.items()))
                                  or "none of another layer"))
        for k, v in sorted(ups.items()):
            print("  INCLUDES UP: %s %d" % (k, v))
        by_layer = collections.Counter(name(layer_of(t)) for (_, t) in calls_to)
        print("  calls: %s" % (", ".join("%s (%d file pairs)" % kv
                                         for kv in sorted(by_layer.items()))
                               or "none of another layer"))
        for (f, t), syms in sorted(calls_to.items()):
            mark = "UP " if layer_of(t) > rank else ""
            print("    %s%s -> %s: %s" % (mark, f, t, " ".join(sorted(syms))))
    return 0


def check(build):
    passed = failed = 0

    def result(ok, what, why=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok - " + what)
        else:
            failed += 1
            print("not ok - %s: %s" % (what, why))

    unlayered = [f for f in sources() if layer_of(f) is None]
    result(not unlayered, "every source file is in a layer", " ".join(unlayered))
    inc = includes()
    lost = ["%s:%d: %s" % (f, n, x) for f, t, x, n in inc if t is None]
    result(not lost, "every quoted include resolves", "; ".join(lost))
    up = ["%s:%d: %s (%s includes %s)" % (f, n, x, name(layer_of(f)), name(layer_of(t)))
          for f, t, x, n in inc if t and layer_of(t) > layer_of(f)]
    result(not up, "no file includes a higher layer's header", "; ".join(up))
    objs = objects(build)
    result(len(objs) > 0, "objects are built in " + build, "none found")
    cl = calls(build)
    up = sorted({"%s -> %s (%s)" % (f, t, s) for f, t, s in cl if layer_of(t) > layer_of(f)})
    result(not up, "no file calls a higher layer (%d calls between files)" % len(cl),
           "; ".join(up))
    for folder in CYCLE_FREE:
        edges = [(f, t) for f, t, _ in cl
                 if f.startswith(folder + "/") and t.startswith(folder + "/")]
        found = circles(edges)
        result(not found, "no circle of calls between the files of %s/" % folder,
               "; ".join(" <-> ".join(c) for c in found))
    def command(path):
        m = re.match(r"cli/cmd_([a-z]+?)(_json)?\.c$", path)
        return m.group(1) if m else None
    cross = sorted({"%s -> %s (%s)" % (f, t, s) for f, t, s in cl
                    if command(f) and command(t) and command(f) != command(t)})
    result(not cross, "no command calls another command's file (cli_*.c holds what two share)",
           "; ".join(cross))
    names = collections.defaultdict(list)
    for o in objs:
        names[os.path.basename(o)].append(o)
    dup = ["%s (%s)" % (n, ", ".join(v)) for n, v in sorted(names.items()) if len(v) > 1]
    result(not dup, "object names are unique (one archive holds them)", "; ".join(dup))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(argv) != 3 or argv[1] not in ("--list", "--check"):
        sys.stderr.write("usage: layers.py --list|--check BUILD\n")
        return 2
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return list_all(argv[2]) if argv[1] == "--list" else check(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
