#!/usr/bin/env python3
"""transcribe_recipes.py - what Megatron-Bridge's workload configs say for
the MoE runs of moe_runs.csv, to check moe_recipes.csv against its sources.

    transcribe_recipes.py MOE_RUNS.csv CONTAINER=CONFIGS.py... [--check RECIPES.csv]

Each CONFIGS.py is a release's
scripts/performance/configs/{deepseek,qwen}/*_workload_base_configs.py
(for example `git show v0.5.1:scripts/performance/configs/deepseek/
deepseek_workload_base_configs.py`), named with the container release
that shipped it (26.06.01=...).  The file is read, never run: its
`NAME = WorkloadBaseConfig(...)`, `NAME = replace(OTHER, ...)` and
`NAME = OTHER` assignments of literal values are followed, from the
defaults of WorkloadBaseConfig (micro-batch 1, degrees 1, no virtual
stages, moe_a2a_overlap False, recompute_modules None).

For every run of that container whose model the file configures, the
entry {MODEL}_PRETRAIN_CONFIG_{GPU}_{PRECISION}_{VARIANT} with the run's
GPU, precision (BF16, FP8_CS for FP8, FP8_MX for MXFP8, NVFP4), global
and micro-batch and degrees (pp, vp, ep) is the run's recipe; one CSV
line a run is printed: container, model, system, precision, mbs, pp, vp,
ep, entry, a2a_overlap (0/1), recompute_modules ("none" or the names).
A run no entry matches prints "no entry".

With --check, each printed a2a_overlap and recompute_modules is compared
with what RECIPES.csv gives that run (its first matching row, as
bench/accuracy reads it); every difference is one line, and the exit
status is 1 when there is one.  Releases whose recipes are not in this
form (perf_recipes/ of 26.08) are not read.
"""
import ast
import csv
import re
import sys

DEFAULTS = {"micro_batch_size": 1, "pipeline_model_parallel_size": 1,
            "virtual_pipeline_model_parallel_size": None, "expert_model_parallel_size": 1,
            "global_batch_size": 1, "moe_a2a_overlap": False, "recompute_modules": None}
MODELS = {"DEEPSEEK_V3": "DeepSeekV3", "QWEN3_30B_A3B": "Qwen3_30B_a3B"}
PRECISIONS = {"BF16": "BF16", "FP8_CS": "FP8", "FP8_MX": "MXFP8", "NVFP4": "NVFP4"}
ENTRY = re.compile(r"^(%s)_PRETRAIN_CONFIG_([A-Z0-9]+)_(BF16|FP8_CS|FP8_MX|NVFP4)_(V\d+)$"
                   % "|".join(MODELS))


def configs(path):
    """{name: {field: value}} of the file's literal assignments."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        name, v = node.targets[0].id, node.value
        if isinstance(v, ast.Name) and v.id in out:
            out[name] = dict(out[v.id])
            continue
        if not isinstance(v, ast.Call) or not isinstance(v.func, ast.Name):
            continue
        if v.func.id == "WorkloadBaseConfig":
            cfg = dict(DEFAULTS)
        elif (v.func.id == "replace" and v.args and isinstance(v.args[0], ast.Name)
              and v.args[0].id in out):
            cfg = dict(out[v.args[0].id])
        else:
            continue
        for kw in v.keywords:
            try:
                cfg[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                cfg[kw.arg] = "?"
        out[name] = cfg
    return out


def recipe_value(rows, fact, run):
    """What moe_recipes.csv gives fact for run, as bench/accuracy reads it."""
    def release(s):
        p = [int(x) for x in s.split(".")] + [0, 0]
        return p[0] * 10000 + p[1] * 100 + p[2]
    for r in rows:
        if r["fact"] != fact:
            continue
        if any(r[k] and r[k] != run[k] for k in ("model", "system")):
            continue
        if any(r[k] and int(r[k]) != int(run[k]) for k in ("mbs", "pp", "vp", "ep")):
            continue
        if r["from_container"] and release(run["container"]) < release(r["from_container"]):
            continue
        if r["until_container"] and release(run["container"]) >= release(r["until_container"]):
            continue
        return r["value"]
    return {"a2a_overlap": "0", "recompute_modules": "none"}[fact]


def main(argv):
    args, check = argv[1:], None
    if "--check" in args:
        i = args.index("--check")
        if i + 1 >= len(args):
            sys.stderr.write("error: --check: expected a moe_recipes.csv\n")
            return 2
        check = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2 or any("=" not in a for a in args[1:]):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    with open(args[0], newline="", encoding="utf-8") as f:
        runs = list(csv.DictReader(f))
    recipes = None
    if check:
        with open(check, newline="", encoding="utf-8") as f:
            recipes = list(csv.DictReader(f))
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["container", "model", "system", "precision", "mbs", "pp", "vp", "ep",
                "entry", "a2a_overlap", "recompute_modules"])
    differ = 0
    for arg in args[1:]:
        container, path = arg.split("=", 1)
        entries = {}
        for name, cfg in configs(path).items():
            m = ENTRY.match(name)
            if m:
                entries[name] = (MODELS[m.group(1)], "DGX-" + m.group(2),
                                 PRECISIONS[m.group(3)], cfg)
        models = {e[0] for e in entries.values()}
        for run in runs:
            if run["container"] != container or run["model"] not in models:
                continue
            run = dict(run, vp="1" if run["vp"] in ("", "n/a") else run["vp"])
            found = [(n, cfg) for n, (mod, sys_, prec, cfg) in sorted(entries.items())
                     if mod == run["model"] and sys_ == run["system"]
                     and prec == run["precision"]
                     and cfg["global_batch_size"] == int(run["gbs"])
                     and cfg["micro_batch_size"] == int(run["mbs"])
                     and cfg["pipeline_model_parallel_size"] == int(run["pp"])
                     and (cfg["virtual_pipeline_model_parallel_size"] or 1) == int(run["vp"])
                     and cfg["expert_model_parallel_size"] == int(run["ep"])]
            key = [container, run["model"], run["system"], run["precision"], run["mbs"],
                   run["pp"], run["vp"], run["ep"]]
            if not found:
                w.writerow(key + ["no entry", "", ""])
                continue
            name, cfg = found[0]
            got = {"a2a_overlap": "1" if cfg["moe_a2a_overlap"] is True else "0",
                   "recompute_modules": " ".join(cfg["recompute_modules"] or []) or "none"}
            w.writerow(key + [name, got["a2a_overlap"], got["recompute_modules"]])
            for fact in got if recipes is not None else ():
                want = recipe_value(recipes, fact, dict(run, container=container))
                if want != got[fact]:
                    differ += 1
                    sys.stderr.write("differs: %s %s: %s says %s, the table %s\n"
                                     % (" ".join(key), fact, name, got[fact], want))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
