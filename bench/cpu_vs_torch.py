#!/usr/bin/env python3
"""The model `gpuplan execute` trains, written in PyTorch, timed on the CPU.

A GPT-2 decoder: learned token and position embeddings, pre-norm blocks of
LayerNorm, causal multi-head attention with biases, a tanh-GELU MLP, a final
LayerNorm and an LM head tied to the token embedding; fp32, cross-entropy
over the vocabulary, AdamW.  Prints one line per step, "step N S" with S the
seconds it took, then "median S" over the steps after the first (the first
allocates), the same statistic `gpuplan execute` reports.

Usage: cpu_vs_torch.py --layers L --hidden C --heads H --vocab V --seq T
       --batch B --steps N --threads K;  cpu_vs_torch.py --probe
Exit status 4 when torch does not import (the line says why).
"""
import argparse
import math
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 12), ("hidden", 768), ("heads", 12),
                          ("vocab", 50257), ("seq", 256), ("batch", 4),
                          ("steps", 3), ("threads", 1), ("seed", 1234)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--probe", action="store_true", help="say whether torch imports, and stop")
    a = ap.parse_args()
    if a.steps < 1:
        print("cpu_vs_torch.py: --steps: expected at least 1", file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # ImportError, or a shared library torch lacks
        print(f"skip: torch does not import: {type(e).__name__}: {e}".splitlines()[0])
        return 4
    if a.probe:
        print(f"torch {torch.__version__}")
        return 0
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    C, H, L, V, T, B = a.hidden, a.heads, a.layers, a.vocab, a.seq, a.batch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(C)
            self.qkv = torch.nn.Linear(C, 3 * C)
            self.proj = torch.nn.Linear(C, C)
            self.ln2 = torch.nn.LayerNorm(C)
            self.fc = torch.nn.Linear(C, 4 * C)
            self.fc2 = torch.nn.Linear(4 * C, C)

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = torch.nn.Embedding(V, C)
            self.wpe = torch.nn.Embedding(T, C)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
            self.lnf = torch.nn.LayerNorm(C)
            for p in self.parameters():
                if p.dim() > 1:
                    torch.nn.init.normal_(p, std=0.02)

        def forward(self, tok, tgt):
            x = self.wte(tok) + self.wpe(torch.arange(T))
            for b in self.blocks:
                x = b(x)
            logits = self.lnf(x) @ self.wte.weight.t()
            return F.cross_entropy(logits.view(-1, V), tgt.view(-1))

    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    n = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {n / 1e6:.0f}M parameters")
    tok = torch.randint(0, V, (B, T))
    tgt = torch.randint(0, V, (B, T))
    times = []
    for s in range(a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(tok, tgt)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if not math.isfinite(loss.item()):
            print(f"step {s + 1}: loss {loss.item()}", file=sys.stderr)
            return 1
        print(f"step {s + 1} {times[-1]:.3f}  loss {loss.item():.4f}", flush=True)
    print(f"median {statistics.median(times[1:] or times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
