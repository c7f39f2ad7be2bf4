#!/usr/bin/env python3
"""megatron_args.py - what an exported Megatron-LM command line means.

  megatron_args.py meaning ARGV_FILE VOCAB
      ARGV_FILE holds a launcher's arguments, one a line, the training
      script's name followed by its arguments (pretrain_gpt.py ...).  Prints
      JSON: the world size the launcher starts (torchrun's --nnodes x
      --nproc-per-node, deepspeed's --num_nodes x --num_gpus, or mpirun's
      -np), the flags as the script reads them (--flag value or
      --flag=value), and, where they describe a model (--num-layers), the
      parameter count of the GPT model those arguments build
      (Megatron-Core's GPTModel: QKV and projection, MLP, their biases
      with --add-bias-linear, two norms a layer and a final one, LayerNorm
      with a bias, the embedding padded as
      --make-vocab-size-divisible-by x tp pads a tokenizer of VOCAB
      tokens, the output layer unless tied, a learned position table).
      The count is written here from the flags' meaning, not taken from
      gpuplan, so that it checks the simulator's.

  megatron_args.py parse ARGV_FILE
      Runs Megatron-LM's own parse_args and validate_args (a checkout
      named by $MEGATRON_LM) on the training script's arguments, with
      WORLD_SIZE the launcher's.  torch is not needed: a stand-in module
      answers its imports (Megatron-LM's checks that ask the GPU are
      thereby skipped).  Exit 0 valid, 1 refused (the reason on stderr),
      77 when $MEGATRON_LM or a module it imports is missing.

  megatron_args.py parse ARGV_FILE KEY...
      The same, then prints JSON: each KEY's value in the arguments
      validate_args returns (moe_router_score_function, qk_layernorm, ...).
"""
import importlib.abc
import importlib.machinery
import io
import json
import math
import os
import re
import sys
import types
import typing
import contextlib



def split_launch(words):
    """(launcher words, training-script arguments): the script is the
    first word ending in .py."""
    for i, w in enumerate(words):
        if w.endswith(".py"):
            return words[:i], words[i + 1:]
    raise SystemExit("no training script (*.py) in the arguments")


def flags(args):
    """{flag: [values]}: the words after a --flag up to the next one."""
    out, cur = {}, None
    for w in args:
        if w.startswith("--"):
            name, eq, val = w.partition("=")
            cur = name
            out[cur] = [val] if eq else []
        elif cur is not None:
            out[cur].append(w)
    return out


def world_size(launch):
    f = flags([w for w in launch])
    if "--nnodes" in f and "--nproc-per-node" in f:
        return int(f["--nnodes"][0]) * int(f["--nproc-per-node"][0])
    if "--num_nodes" in f and "--num_gpus" in f:
        return int(f["--num_nodes"][0]) * int(f["--num_gpus"][0])
    for i, w in enumerate(launch):
        if w == "-np":
            return int(launch[i + 1])
    return None


def num(f, name, default=None):
    v = f.get(name)
    return default if v is None else float(v[0])


def params(f, vocab):
    L = int(num(f, "--num-layers"))
    h = int(num(f, "--hidden-size"))
    heads = int(num(f, "--num-attention-heads"))
    groups = int(num(f, "--num-query-groups", heads)) if "--group-query-attention" in f else heads
    ffn = int(num(f, "--ffn-hidden-size", 4 * h))
    tp = int(num(f, "--tensor-model-parallel-size", 1))
    div = int(num(f, "--make-vocab-size-divisible-by", 128))
    swiglu = "--swiglu" in f or "--quick-geglu" in f  # a gated linear unit either way
    bias = "--disable-bias-linear" not in f
    norm = f.get("--normalization", ["LayerNorm"])[0]
    pos = f.get("--position-embedding-type", ["learned_absolute"])[0]
    kc = int(num(f, "--kv-channels", h // heads))
    kv = groups * kc
    if "--multi-latent-attention" in f:
        # MLA: query from a --q-lora-rank latent (or the hidden state),
        # keys and values from a --kv-lora-rank latent plus a shared rope
        # key, a norm on each latent
        qr, kvr = int(num(f, "--q-lora-rank", 0)), int(num(f, "--kv-lora-rank"))
        qk, rope, v = (int(num(f, k)) for k in ("--qk-head-dim", "--qk-pos-emb-head-dim",
                                                  "--v-head-dim"))
        q = h * qr + qr + qr * heads * (qk + rope) if qr else h * heads * (qk + rope)
        attn = q + h * (kvr + rope) + kvr + kvr * heads * (qk + v) + heads * v * h
        attn_bias = 0
    else:
        attn = h * (heads * kc + 2 * kv) + heads * kc * h
        attn_bias = heads * kc + 2 * kv + h
    if "--softmax-type" in f and f["--softmax-type"][0] == "learnable":
        attn += heads
    mlp = lambda w: (2 if swiglu else 1) * h * w + w * h + (
        ((2 if swiglu else 1) * w + h) if bias else 0)
    norm_p = 2 * h if norm == "LayerNorm" else h
    layer = attn + (attn_bias if bias else 0) + 2 * norm_p
    experts = int(num(f, "--num-experts", 0))
    if experts:
        # routed experts, the shared experts' one MLP, the router
        moe = experts * mlp(int(num(f, "--moe-ffn-hidden-size"))) + experts * h
        shared = int(num(f, "--moe-shared-expert-intermediate-size", 0))
        moe += mlp(shared) if shared else 0
        freq = f.get("--moe-layer-freq", ["1"])[0]
        dense = re.fullmatch(r"\(\[0\]\*(\d+)\+\[1\]\*(\d+)\)", freq)
        pattern = [0] * int(dense[1]) + [1] * int(dense[2]) if dense else [1] * L
        total_layers = sum(layer + (moe if e else mlp(ffn)) for e in pattern)
    else:
        total_layers = L * (layer + mlp(ffn))
    multiple = div * tp
    padded = int(math.ceil(vocab / multiple) * multiple)
    total = total_layers + norm_p + padded * h
    if "--untie-embeddings-and-output-weights" in f:
        total += padded * h
    if pos == "learned_absolute":
        total += int(num(f, "--max-position-embeddings")) * h
    return total, padded


def meaning(path, vocab):
    words = [w for w in open(path).read().split("\n") if w != ""]
    launch, args = split_launch(words)
    f = flags(args)
    total, padded = params(f, vocab) if "--num-layers" in f else (None, None)
    out = {
        "world_size": world_size(launch),
        "params": total,
        "padded_vocab": padded,
        "flags": {k: " ".join(v) for k, v in f.items()},
    }
    print(json.dumps(out, sort_keys=True))


class _Stand:
    """Anything torch (or another GPU-only module) would be: attributes,
    calls, subscripts and use as a base class all answer."""

    def __init__(self, name):
        self._n = name

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stand(self._n + "." + name)

    def __call__(self, *a, **k):
        if len(a) == 1 and callable(a[0]) and not k:
            return a[0]  # a decorator
        return _Stand(self._n + "()")

    def __mro_entries__(self, bases):
        return ()

    def __getitem__(self, k):
        return self

    def __or__(self, o):
        return self

    def __ror__(self, o):
        return self

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    def __lt__(self, o):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __eq__(self, o):
        return self is o

    def __hash__(self):
        return id(self)


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stand(self.__name__ + "." + name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    roots = ("torch", "transformer_engine", "apex", "flash_attn", "nvidia_resiliency_ext",
             "tensorstore", "zarr", "wandb", "triton", "multistorageclient", "flashattn_hopper",
             "flash_attn_3", "onelogger", "nv_one_logger", "modelopt", "mamba_ssm",
             "causal_conv1d")

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _Module(spec.name)
        m.__path__ = []
        m.__version__ = "2.9.0"
        if spec.name == "torch":
            class dtype:  # what validate_args maps precision names to
                def __init__(self, n):
                    self.n = n

            m.dtype = dtype
            for n in ("float32", "bfloat16", "float16", "uint8", "float", "half", "int32",
                      "int64"):
                setattr(m, n, dtype(n))
        if spec.name == "torch.cuda":
            # validate_args asks the device's capability only to refuse
            # grouped GEMM below sm_80; the plans checked here run on Hopper
            # or newer, so answer Hopper's
            m.get_device_capability = lambda *a: (9, 0)
        return m

    def exec_module(self, module):
        pass


def parse(path, keys=()):
    root = os.environ.get("MEGATRON_LM")
    if not root or not os.path.isfile(os.path.join(root, "megatron", "training", "arguments.py")):
        print("MEGATRON_LM does not name a Megatron-LM checkout")
        return 77
    words = [w for w in open(path).read().split("\n") if w != ""]
    launch, args = split_launch(words)
    if not hasattr(typing, "override"):
        typing.override = lambda f: f  # Python 3.12's, a no-op decorator
    sys.meta_path.insert(0, _Finder())
    sys.path.insert(0, root)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from megatron.training import arguments
    except ImportError as e:
        print("Megatron-LM needs a module this python lacks: %s" % e)
        return 77
    os.environ["WORLD_SIZE"] = str(world_size(launch) or 1)
    os.environ.setdefault("RANK", "0")
    sys.argv = ["pretrain_gpt.py"] + args
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            a = arguments.parse_args()
            a.rank = 0
            arguments.validate_args(a, {})
    except SystemExit as e:
        print("Megatron-LM's parser refused the arguments (exit %s)" % e.code, file=sys.stderr)
        return 1
    except AssertionError as e:
        print("Megatron-LM's validate_args: %s" % e, file=sys.stderr)
        return 1
    if keys:
        print(json.dumps({k: getattr(a, k, None) for k in keys}, sort_keys=True, default=str))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "meaning":
        meaning(sys.argv[2], int(sys.argv[3]))
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "parse":
        return parse(sys.argv[2], sys.argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
