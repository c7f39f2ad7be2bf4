#!/usr/bin/env python3
"""trl_args.py - what an exported `trl sft` command line means to TRL.

  trl_args.py parse ARGV_FILE [KEY...]
      ARGV_FILE holds the words `trl` was started with, one a line (sft,
      then its arguments).  Builds TRL's own parser for `trl sft`
      (trl/scripts/sft.py's make_parser: ScriptArguments, SFTConfig,
      ModelConfig, DatasetMixtureConfig through TRL's HfArgumentParser) and
      parses the arguments with it, as `trl sft` does before it hands the
      rest to Accelerate's launcher.  Prints JSON: each KEY's parsed value
      and "launch" (the words left for Accelerate).  The dataclasses'
      __post_init__ is not run: it asks the GPU.  torch, accelerate and
      the other GPU libraries are answered by megatron_args.py's stand-in
      modules.  Exit 0 parsed, 1 refused (the reason on stderr: a word
      neither TRL nor Accelerate's launcher takes is refused), 77 when trl
      does not import here.
"""
import contextlib
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import megatron_args  # noqa: E402  (its stand-in modules)

# Accelerate's launcher flags the exports pass (accelerate launch --help)
LAUNCH = {"--num_processes", "--num_machines", "--main_process_ip", "--machine_rank",
          "--main_process_port"}


class _Finder(megatron_args._Finder):
    roots = megatron_args._Finder.roots + ("accelerate", "datasets", "peft", "bitsandbytes",
                                           "deepspeed", "liger_kernel", "vllm")


def parse(path, keys):
    words = [w for w in open(path).read().split("\n") if w != ""]
    if not words or words[0] != "sft":
        print("expected `trl sft ...`, found %r" % words[:1], file=sys.stderr)
        return 1
    sys.meta_path.insert(0, _Finder())
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            from trl.scripts.sft import make_parser
            parser = make_parser(prog="trl sft")
    except Exception as e:  # ImportError, or what a stand-in cannot answer
        print("trl does not import here: %s: %s" % (type(e).__name__, e))
        return 77
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns, rest = parser.parse_known_args(words[1:])
    except SystemExit:
        print("TRL's parser refused the arguments: %s" % err.getvalue().strip().splitlines()[-1:],
              file=sys.stderr)
        return 1
    launch, i = [], 0
    while i < len(rest):
        if rest[i] not in LAUNCH:
            print("neither TRL nor Accelerate's launcher takes %r" % rest[i], file=sys.stderr)
            return 1
        launch += rest[i:i + 2]
        i += 2
    out = {k: getattr(ns, k, "<absent>") for k in keys}
    out["launch"] = launch
    print(json.dumps(out, sort_keys=True, default=str))
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "parse":
        return parse(sys.argv[2], sys.argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
