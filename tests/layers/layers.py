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

Inside the folders of CYCLE_FREE no two files depend on each other,
directly or round a longer circle; no command's file (cli/cmd_X.c,
cmd_X_*.c) calls another's.  Object names are unique, since `ar` keeps
only one of two members of the same name.

A file depends on another when it calls it, or when it includes, itself
or through other headers, a header private to the other.  The ownership
rule: a header named X_internal.h belongs to X.c (or X.cu) beside it, as
exec_trainer_internal.h would to executor/train/exec_trainer.c, unless
it is named after its folder: sim_internal.h in simulator/,
plan_internal.h in planner/, exec_cpu_internal.h in executor/device/cpu/
(X a prefix of the folder's name, or exec_ and the folder's name) are
their folder's shared internals, a module's <prefix>_internal.h, and
belong to no one file.  Other headers (X.h) are interfaces and belong to
no file.  So a file that takes a type or an inline helper from a
driver's private header, while the driver calls it, closes a circle.
The circle check runs over every folder; a circle in a folder that
CYCLE_FREE does not cover yet is printed but does not fail.

No source file (.c .h .cu .py .sh) outside tests/ is over LONG_LINES
lines unless its opening comment says why it must be one file, with the
words of ONE_FILE_MARK ("one file because ..."); the files of
BEING_SPLIT are reported but pass until their split lands.

Inside the folders of HEADER_OWNED a header belongs to a file: X.h and
X_internal.h are X.c's (or X.cu's), so including one is an arrow to that
file as a call is, and a header's own includes are its owner's arrows.  A
header with no X.c, such as a folder's constants (simulator/sim_const.h),
is no file's, and so are the folder's public headers (PUBLIC_HEADERS:
sim.h declares the simulator's interface for the layers above); both make
no arrow.  The includes and calls between a folder's files together draw
no circle, so no file takes a name from a file above it.

    layers.py --list BUILD    every include and call that crosses a layer
    layers.py --check BUILD   one "ok"/"not ok" line per rule and a closing
                              "N passed, N failed" (exit 1 on a failure)
    layers.py --self-test     the circle and long-file checks on synthetic
                              trees, which they must catch (same output)
"""
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile

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
CYCLE_FREE = ["common", "pricing", "simulator", "planner", "export", "executor", "cli"]
# the long-file rule: the limit, the words that excuse a file, and the
# files being split now (empty it as their splits land)
LONG_LINES = 1000
ONE_FILE_MARK = "one file because"
BEING_SPLIT = []
# folders whose headers belong to their files (see above), and the
# headers that are a whole folder's
HEADER_OWNED = ["simulator"]
PUBLIC_HEADERS = ["simulator/sim.h"]
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


def header_owner(h):
    """The .c or .cu whose private header h is, or None (the ownership
    rule of the opening comment)."""
    d, base = os.path.split(h)
    if not base.endswith("_internal.h"):
        return None
    stem = base[:-len("_internal.h")]
    folder = os.path.basename(d)
    if folder.startswith(stem) or stem == "exec_" + folder:
        return None
    for ext in (".c", ".cu"):
        if os.path.isfile(os.path.join(d, stem + ext)):
            return os.path.join(d, stem + ext)
    return None


def depends(cl, inc):
    """[(from, to)]: every call of cl, and every file that includes,
    directly or through other headers, a header private to another."""
    g = collections.defaultdict(set)
    for f, t, _, _ in inc:
        if t:
            g[f].add(t)
    out = [(f, t) for f, t, _ in cl]
    for f in sorted(g):
        if f.endswith(".h"):
            continue
        seen, todo = set(), [f]
        while todo:
            for h in g[todo.pop()]:
                if h not in seen:
                    seen.add(h)
                    todo.append(h)
        out += [(f, header_owner(h)) for h in sorted(seen)
                if header_owner(h) and header_owner(h) != f]
    return out


def folder_circles(cl, inc):
    """[(folder, circle)] of every circle of depends(), each with the
    deepest folder that holds all its files."""
    out = []
    for c in circles(depends(cl, inc)):
        folder = os.path.commonpath([os.path.dirname(f) for f in c])
        out.append((folder, c))
    return out


def check_circles(result, cl, inc):
    """One line per folder of sources(): no circle of files, failing only
    where CYCLE_FREE covers the folder."""
    found = collections.defaultdict(list)
    for folder, c in folder_circles(cl, inc):
        found[folder].append(" <-> ".join(c))
    for folder in sorted({os.path.dirname(f) for f in sources()} | set(found)):
        covered = any(folder == c or folder.startswith(c + "/") for c in CYCLE_FREE)
        if covered or not found[folder]:
            result(not found[folder], "no circle of calls or private headers between the "
                   "files of %s/" % folder, "; ".join(found[folder]))
        else:
            result(True, "%s/ is not in CYCLE_FREE yet; its circles: %s"
                   % (folder, "; ".join(found[folder])))


def opening_comment(path, lines):
    """The comment a file opens with: a C file's first /* ... */, a
    script's leading # lines or a Python module's docstring."""
    text = "".join(lines[:200])
    if path.endswith((".c", ".h", ".cu")):
        m = re.match(r"\s*/\*.*?\*/", text, re.S)
        return m.group(0) if m else ""
    if path.endswith(".py"):
        m = re.match(r'(?:#.*\n|\s)*"""(.*?)"""', text, re.S)
        if m:
            return m.group(1)
    out = []
    for line in lines:
        if not line.startswith("#"):
            break
        out.append(line)
    return "".join(out)


def long_files(root="."):
    """[(path, lines, excused)] of the source files outside tests/ (and
    build folders) over LONG_LINES lines; excused when the opening comment
    holds ONE_FILE_MARK."""
    out = []
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build"))
                         and not (rel == "." and d == "tests"))
        for f in sorted(files):
            if not re.search(r"\.(c|h|cu|py|sh)$", f):
                continue
            p = os.path.normpath(os.path.join(rel, f))
            with open(os.path.join(root, p), encoding="utf-8", errors="replace") as fh:
                lines = fh.readlines()
            if len(lines) > LONG_LINES:
                words = re.sub(r"[*#/]", " ", opening_comment(p, lines).lower()).split()
                why = ONE_FILE_MARK in " ".join(words)
                out.append((p, len(lines), why))
    return out


def check_long_files(result, root="."):
    """Fails on a long file neither excused nor on BEING_SPLIT."""
    found = long_files(root)
    bad = ["%s (%d lines)" % (p, n) for p, n, why in found if not why and p not in BEING_SPLIT]
    split = ["%s (%d)" % (p, n) for p, n, why in found if not why and p in BEING_SPLIT]
    done = sorted(set(BEING_SPLIT) - {p for p, _, _ in found})
    what = "no source file outside tests/ is over %d lines unless its opening comment " \
           "says why (\"%s\")" % (LONG_LINES, ONE_FILE_MARK)
    if split:
        what += "; being split: " + ", ".join(split)
    if done:
        what += "; split already, drop from BEING_SPLIT: " + ", ".join(done)
    result(not bad, what, "; ".join(bad))


def self_test(result):
    """The circle and long-file checks on synthetic trees: a trainer whose
    layer file includes the driver's private header while the driver
    calls it (a circle, through the header), the same with the folder's
    shared header (none), a plain circle of calls, a long file."""
    def write(root, path, text):
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as fh:
            fh.write(text)

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as root:
        os.chdir(root)
        try:
            t = "executor/train/"
            write(root, t + "exec_trainer_internal.h", "struct exec_trainer;\n")
            write(root, t + "exec_trainer.c", '#include "exec_trainer_internal.h"\n')
            write(root, t + "exec_train_mlp.c", '#include "exec_trainer_internal.h"\n')
            write(root, "simulator/sim_internal.h", "struct sim;\n")
            write(root, "simulator/sim.c", '#include "sim_internal.h"\n')
            write(root, "simulator/sim_cost.c", '#include "sim_internal.h"\n')
            inc = includes()
            cl = [(t + "exec_trainer.c", t + "exec_train_mlp.c", "train_mlp_forward"),
                  ("simulator/sim.c", "simulator/sim_cost.c", "sim_cost")]
            found = folder_circles(cl, inc)
            result(found == [("executor/train", [t + "exec_train_mlp.c", t + "exec_trainer.c"])],
                   "self-test: a file including its caller's private header is a circle; "
                   "a folder's own header (sim_internal.h) is not", repr(found))
            os.rename(t + "exec_trainer_internal.h", t + "exec_train_state.h")
            for f in ("exec_trainer.c", "exec_train_mlp.c"):
                write(root, t + f, '#include "exec_train_state.h"\n')
            found = folder_circles(cl, includes())
            result(not found, "self-test: the state in a header of its own closes no circle",
                   repr(found))
            cl = [("cli/a.c", "cli/b.c", "b"), ("cli/b.c", "cli/c.c", "c"),
                  ("cli/c.c", "cli/a.c", "a"), ("cli/d.c", "cli/a.c", "a")]
            found = folder_circles(cl, [])
            result(found == [("cli", ["cli/a.c", "cli/b.c", "cli/c.c"])],
                   "self-test: a circle of three calls is found, and only it", repr(found))
            body = "int x;\n" * LONG_LINES
            write(root, "planner/long.c", "/* long.c - tables. */\n" + body)
            write(root, "planner/kept.c", "/* kept.c - one file\n * because it is one "
                  "table. */\n" + body)
            write(root, "tests/test_long.c", body + body)
            found = long_files(root)
            result([(p, why) for p, _, why in found] == [("planner/kept.c", True),
                                                          ("planner/long.c", False)],
                   "self-test: a long file is found, excused by its opening comment, and "
                   "tests/ is left out", repr(found))
        finally:
            os.chdir(here)


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


def tally():
    """result(ok, what, why) prints one "ok"/"not ok" line; close() the
    closing "N passed, N failed" and returns the exit status."""
    n = {True: 0, False: 0}

    def result(ok, what, why=""):
        n[bool(ok)] += 1
        print("ok - " + what if ok else "not ok - %s: %s" % (what, why))

    def close():
        print("%d passed, %d failed" % (n[True], n[False]))
        return 1 if n[False] else 0
    return result, close


def owner(path, files):
    """The file of files a header belongs to (X.h, X_internal.h: X.c or
    X.cu), None for a public header or one without; a source is its own."""
    if not path.endswith(".h"):
        return path
    if path in PUBLIC_HEADERS:
        return None
    stem = path[:-2]
    if stem.endswith("_internal"):
        stem = stem[:-len("_internal")]
    for ext in (".c", ".cu"):
        if stem + ext in files:
            return stem + ext
    return None


def owned_edges(folder, inc, cl, files):
    """[(from file, to file)] inside folder: its calls, and each include of
    a header another file owns, from the includer's owner."""
    inside = lambda f: f is not None and f.startswith(folder + "/")
    out = [(f, t) for f, t, _ in cl if inside(f) and inside(t)]
    for f, t, _, _ in inc:
        if inside(f) and inside(t):
            a, b = owner(f, files), owner(t, files)
            if a and b and a != b:
                out.append((a, b))
    return out


def owned_self_test(result):
    """The owner rule and the circle finder on made-up files."""
    files = {"x/a.c", "x/a.h", "x/b.c", "x/b_internal.h", "x/c.c", "x/c.h", "x/k.h",
             "simulator/sim.h", "simulator/sim.c", "simulator/sim_a.c"}
    cases = [  # (what, folder, includes, calls, circles expected)
        ("an include one way and a call back is a circle", "x",
         [("x/a.c", "x/b_internal.h", "b_internal.h", 1)], [("x/b.c", "x/a.c", "f")],
         [["x/a.c", "x/b.c"]]),
        ("two files including each other's headers are a circle", "x",
         [("x/a.c", "x/b_internal.h", "", 1), ("x/b.c", "x/a.h", "", 1)], [],
         [["x/a.c", "x/b.c"]]),
        ("a header's include is its owner's arrow, round three files", "x",
         [("x/a.h", "x/b_internal.h", "", 1), ("x/b.c", "x/c.h", "", 1)],
         [("x/c.c", "x/a.c", "f")], [["x/a.c", "x/b.c", "x/c.c"]]),
        ("a header of no file makes no arrow", "x",
         [("x/a.c", "x/k.h", "", 1), ("x/b.c", "x/k.h", "", 1), ("x/k.h", "x/a.h", "", 1)],
         [("x/a.c", "x/b.c", "f")], []),
        ("a folder's public header makes no arrow", "simulator",
         [("simulator/sim_a.c", "simulator/sim.h", "", 1)],
         [("simulator/sim.c", "simulator/sim_a.c", "f")], []),
        ("includes and calls one way are no circle", "x",
         [("x/c.c", "x/b_internal.h", "", 1), ("x/b.c", "x/a.h", "", 1)],
         [("x/c.c", "x/a.c", "f")], []),
    ]
    for what, folder, inc, cl, want in cases:
        got = circles(owned_edges(folder, inc, cl, files))
        result(got == want, "self-test: " + what, "found %s, expected %s" % (got, want))


def run_self_test():
    result, close = tally()
    self_test(result)
    owned_self_test(result)
    return close()


def check(build):
    result, close = tally()
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
    check_circles(result, cl, inc)
    check_long_files(result)
    files = set(sources())
    for folder in HEADER_OWNED:
        found = circles(owned_edges(folder, inc, cl, files))
        result(not found, "no circle of includes and calls between the files of %s/ "
               "(X.h and X_internal.h are X.c's)" % folder,
               "; ".join(" <-> ".join(c) for c in found))
    def command(path):
        m = re.match(r"cli/cmd_([a-z]+)(_[a-z_]+)?\.c$", path)
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
    return close()


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if argv[1:] == ["--self-test"]:
        return run_self_test()
    if len(argv) != 3 or argv[1] not in ("--list", "--check"):
        sys.stderr.write("usage: layers.py --list|--check BUILD, or --self-test\n")
        return 2
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return list_all(argv[2]) if argv[1] == "--list" else check(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
