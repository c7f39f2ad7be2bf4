#!/usr/bin/env python3
"""launchers.py - an export's launch read by the launchers' own code.

  launchers.py torchrun ARGV_FILE WORLD
      ARGV_FILE holds what a launcher got, one word a line (a stub's
      record).  The torchrun words (those after "torchrun" where a launcher
      such as srun starts it, else those before the training script) are
      parsed by torch's own parser, torch.distributed.run.get_args_parser,
      as torchrun does; nnodes x nproc_per_node must be WORLD.  $VAR words
      the script left unexpanded fail the parse like any other typo.

  launchers.py dsconfig CONFIG TP PP DP
      Reads CONFIG with DeepSpeed's own DeepSpeedConfig, as
      deepspeed.initialize does, with a model-parallel unit of TP x PP x DP
      ranks: it checks the keys' types and the batch identity
      train_batch_size = micro-batch x accumulation x DP.

  launchers.py batch LIST
      Each line of LIST is one of the checks above, its words separated by
      tabs after a name: NAME<TAB>torchrun<TAB>ARGV_FILE<TAB>WORLD or
      NAME<TAB>dsconfig<TAB>CONFIG<TAB>TP<TAB>PP<TAB>DP; all run in this
      one process (torch and deepspeed take seconds to import).  Prints
      "ok<TAB>NAME: what", "bad<TAB>NAME: what<TAB>why" or
      "skip<TAB>NAME: what<TAB>why" a line.

Exit status: 0 accepted, 1 refused (why on stderr), 77 when python3 cannot
import torch or deepspeed (why on stdout).  Nothing is launched.
"""
import contextlib
import io
import sys


def words_of(path):
    return [w for w in open(path).read().split("\n") if w != ""]


def torchrun(path, world):
    try:
        from torch.distributed.run import get_args_parser
    except ImportError as e:
        print("python3 cannot import torch (%s)" % e)
        return 77
    words = words_of(path)
    if "torchrun" in words:
        words = words[words.index("torchrun") + 1:]
    script = next(i for i, w in enumerate(words) if w.endswith(".py"))
    try:
        a = get_args_parser().parse_args(words[:script + 1])
    except SystemExit as e:
        print("torchrun's parser refused %s (exit %s)" % (words[:script], e.code), file=sys.stderr)
        return 1
    # standalone needs one node; several need the first one's address, a
    # c10d endpoint or a static master (127.0.0.1 unless given)
    n = int(a.nnodes) * int(a.nproc_per_node)
    if n != world or (a.standalone and a.nnodes != "1") or \
            (not a.standalone and a.nnodes != "1" and not a.rdzv_endpoint and
             a.master_addr == "127.0.0.1"):
        print("torchrun starts %s x %s (standalone %s, endpoint %r), expected %d ranks"
              % (a.nnodes, a.nproc_per_node, a.standalone, a.rdzv_endpoint, world), file=sys.stderr)
        return 1
    return 0


def dsconfig(path, tp, pp, dp):
    try:
        from deepspeed.runtime import config as dsc
    except ImportError as e:
        print("python3 cannot import deepspeed (%s)" % e)
        return 77

    class Mpu:  # Megatron's parallel state as DeepSpeed asks it
        def get_data_parallel_world_size(self):
            return dp

        def get_data_parallel_rank(self):
            return 0

        def get_model_parallel_world_size(self):
            return tp * pp

        def get_model_parallel_rank(self):
            return 0

    # DeepSpeedConfig asks torch.distributed for the rank, which a check
    # outside a launched job has not initialised: rank 0
    dsc.dist.get_rank = lambda *a, **k: 0
    try:
        c = dsc.DeepSpeedConfig(path, mpu=Mpu())
    except Exception as e:  # its asserts and pydantic's ValidationError
        print("DeepSpeedConfig refused %s: %s" % (path, e), file=sys.stderr)
        return 1
    print("train_batch_size %d = %d x %d x %d, ZeRO stage %d" % (
        c.train_batch_size, c.train_micro_batch_size_per_gpu, c.gradient_accumulation_steps,
        c.world_size, c.zero_optimization_stage))
    return 0


def batch(path):
    what = {"torchrun": "torchrun's own parser accepts it",
            "dsconfig": "DeepSpeedConfig accepts it"}
    for line in open(path).read().split("\n"):
        if not line:
            continue
        name, kind, *args = line.split("\t")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = torchrun(args[0], int(args[1])) if kind == "torchrun" else \
                dsconfig(args[0], *map(int, args[1:4]))
        last = lambda t: (t.strip().splitlines() or [""])[-1]
        if rc == 0:
            print("ok\t%s: %s%s" % (name, what[kind], " (%s)" % last(out.getvalue())
                                    if out.getvalue().strip() else ""))
        elif rc == 77:
            print("skip\t%s: %s\t%s" % (name, what[kind], last(out.getvalue())))
        else:
            print("bad\t%s: %s\t%s" % (name, what[kind], last(err.getvalue())))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "batch":
        return batch(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "torchrun":
        return torchrun(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) == 6 and sys.argv[1] == "dsconfig":
        return dsconfig(sys.argv[2], *map(int, sys.argv[3:6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
