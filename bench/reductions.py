"""Fused reductions on the CPU: softmax, log_softmax, layer norm (scripted from mean/var), RMS
norm, logsumexp, a standardize (mean/std) and an MSE loss (a full reduction), as PyTorch
scripts them, at row lengths 64, 1024 and 32768 over 2^22 float32 elements -- before (reductions interpreted, the elementwise parts fused: ``fuse(g,
reductions=False)``), after (one kernel per group), torch eager and torch.compile (compiled per
workload, ``dynamic=False``), all with 2 threads.  Median of ``--runs`` calls after a warm-up.

    python -m bench.reductions [--runs 9] [--out bench/results/reductions.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

SHAPES = [(65536, 64), (4096, 1024), (128, 32768)]


def programs(torch):
    def softmax(x, y, w, b):
        return torch.softmax(x, -1)

    def log_softmax(x, y, w, b):
        return torch.log_softmax(x, -1)

    def layer_norm(x, y, w, b):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + 1e-5) * w + b

    def rms_norm(x, y, w, b):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def logsumexp(x, y, w, b):
        return torch.logsumexp(x, -1)

    def standardize(x, y, w, b):
        return (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)

    def mse(x, y, w, b):
        return ((x - y) ** 2).mean()

    return [softmax, log_softmax, layer_norm, rms_norm, logsumexp, standardize, mse]


def median_ms(fn, args, runs: int) -> float:
    fn(*args)
    fn(*args)
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    args = ap.parse_args(argv)
    import torch

    from torchlike import jit
    from torchlike.fuser import config
    from torchlike.fuser.executor import run_fusion_group
    from torchlike.fuser.partition import fuse
    from torchlike.interpreter import Interpreter
    from torchlike.ir import parse_graph
    torch.set_num_threads(2)
    config.set_backend("cpu")
    rows = ["| program | rows x row | before (ms) | after (ms) | torch eager (ms) | "
            "torch.compile (ms) | after vs compile |",
            "|---|---|---|---|---|---|---|"]
    for fn in programs(torch):
        graph = parse_graph(str(torch.jit.script(fn).graph))
        before, after = fuse(graph, reductions=False), jit.fuse(graph)
        for shape in SHAPES:
            rng = np.random.default_rng(0)
            x = rng.standard_normal(shape).astype(np.float32)
            y = rng.standard_normal(shape).astype(np.float32)
            w = rng.standard_normal(shape[-1]).astype(np.float32)
            b = rng.standard_normal(shape[-1]).astype(np.float32)
            args_np = (x, y, w, b)
            args_t = tuple(torch.from_numpy(a) for a in args_np)
            run_b = Interpreter(before, fusion_runner=run_fusion_group).run
            run_a = Interpreter(after, fusion_runner=run_fusion_group).run
            want = fn(*args_t).numpy()
            for run in (run_b, run_a):
                np.testing.assert_allclose(run(*args_np), want, rtol=1e-4, atol=1e-4)
            jit.reset_stats()
            t_before = median_ms(run_b, args_np, args.runs)
            t_after = median_ms(run_a, args_np, args.runs)
            assert jit.stats()["groups_split"] == 0, jit.stats()
            with torch.no_grad():
                t_eager = median_ms(fn, args_t, args.runs)
                if args.no_compile:
                    t_comp = float("nan")
                else:
                    torch._dynamo.reset()
                    compiled = torch.compile(fn, dynamic=False)
                    t_comp = median_ms(compiled, args_t, args.runs)
            line = (f"| {fn.__name__} | {shape[0]}x{shape[1]} | {t_before:.2f} | {t_after:.2f} | "
                    f"{t_eager:.2f} | {t_comp:.2f} | {t_comp / t_after:.2f}x |")
            print(line, flush=True)
            rows.append(line)
    text = "\n".join(rows) + "\n"
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
