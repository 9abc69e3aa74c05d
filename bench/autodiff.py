"""Forward + backward on the CPU: torchlike's fused forward and backward graphs
(``torchlike.autodiff.compile_vjp``: each graph specialized and fused once, then called) against
PyTorch eager and ``torch.compile`` (forward, then ``backward()`` of the cotangent; one fresh
function per workload and size, ``dynamic=False``, its dynamo counters checked after the
compiling call: see ``bench/torch_compile.py``).  Float32, 2 threads; every mode of a
workload and size is timed in interleaved rounds (``bench/timing.py``: at least ``--runs``
rounds and 1 s per mode), median and fastest call reported; the gradients are checked against
PyTorch's first.

Workloads (n = the elements of the pointwise state):

* ``lstm_cell``: the corpus's LSTM cell pointwise part (``lstm_cell_pointwise``: gates of
  shape (n/256, 1024) and the cell state (n/256, 256) in; h and c out);
* ``gelu``: ``gelu(x)`` (erf form) on n elements;
* ``layer_norm``: the corpus's scripted layer norm (mean, var, rsqrt, scale, shift: the
  ``layernorm_manual`` graph) on rows of 1024.

    python -m bench.autodiff [--sizes 20 21 22] [--runs 9] [--out bench/results/autodiff/cpu.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

import numpy as np

from .environment import same_environment
from .timing import TimingPolicy, time_interleaved

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "cases"


def workloads(torch):
    F = torch.nn.functional

    def lstm_cell(gates, c):
        i, f, g, o = gates.chunk(4, 1)
        c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c2), c2

    def gelu(x):
        return F.gelu(x)

    def layer_norm(x, gamma, beta):
        mean = x.mean(-1, keepdim=True)
        xc = x - mean
        var = (xc * xc).mean(-1, keepdim=True)
        return xc * torch.rsqrt(var + 1e-5) * gamma + beta

    def lstm_inputs(n, rng):
        rows = n // 256
        return [rng.standard_normal((rows, 1024)).astype(np.float32),
                rng.standard_normal((rows, 256)).astype(np.float32)]

    def gelu_inputs(n, rng):
        return [rng.standard_normal(n).astype(np.float32)]

    def ln_inputs(n, rng):
        return [rng.standard_normal((n // 1024, 1024)).astype(np.float32),
                rng.standard_normal(1024).astype(np.float32),
                rng.standard_normal(1024).astype(np.float32)]

    return [("lstm_cell", "lstm_cell_pointwise", lstm_cell, lstm_inputs),
            ("gelu", None, gelu, gelu_inputs),
            ("layer_norm", "layernorm_manual", layer_norm, ln_inputs)]


def torch_step(torch, fn, arrays, cots):
    """A callable running forward + backward on fresh-grad leaf tensors; returns the grads."""
    leaves = [torch.from_numpy(a).requires_grad_(True) for a in arrays]
    tcots = [torch.from_numpy(c) for c in cots]

    def step():
        for t in leaves:
            t.grad = None
        out = fn(*leaves)
        outs = out if isinstance(out, tuple) else (out,)
        torch.autograd.backward(outs, tcots)
        return [t.grad for t in leaves]
    return step


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 21, 22])
    ap.add_argument("--runs", type=int, default=9, help="interleaved rounds, at least")
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    args = ap.parse_args(argv)
    if argv is None:  # the harness's allocator and OpenMP settings (bench/environment.py)
        same_environment("bench.autodiff")
    import torch
    from torch._dynamo.utils import counters

    import torchlike as tl
    from torchlike import jit
    from torchlike.autodiff import compile_vjp
    from torchlike.fuser import config
    from torchlike.ir import parse_graph

    from .torch_compile import _fresh_function, counters_problem
    torch.set_num_threads(2)
    config.set_backend("cpu")
    policy = TimingPolicy(min_time_s=1.0, min_repeats=args.runs, max_repeats=400,
                          warmup_calls=2)
    load_before = os.getloadavg()
    rows = ["| workload | n | torchlike fwd+bwd (ms) | fwd | bwd | torch eager (ms) | "
            "torch.compile (ms) | vs eager | vs compile | best of runs: torchlike / "
            "torch.compile (ms) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, case, tfn, make in workloads(torch):
        for log2n in args.sizes:
            n = 1 << log2n
            rng = np.random.default_rng(0)
            arrays = make(n, rng)
            if case is not None:
                program = jit.ScriptFunction(parse_graph((CORPUS / case / "scripted.txt")
                                                         .read_text()))
            else:
                program = (lambda x: tl.gelu(x))
            c = compile_vjp(program, *arrays)
            res = c.forward(*arrays)
            res = res if isinstance(res, tuple) else (res,)
            outs, saved = res[:c.num_outputs], res[c.num_outputs:]
            cots = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]

            def ours(c=c, arrays=arrays, cots=cots):
                r = c.forward(*arrays)
                r = r if isinstance(r, tuple) else (r,)
                g = c.backward(*cots, *r[c.num_outputs:])
                return g if isinstance(g, tuple) else (g,)

            def fwd_only(c=c, arrays=arrays):
                return c.forward(*arrays)

            def bwd_only(c=c, cots=cots, saved=saved):
                return c.backward(*cots, *saved)

            eager = torch_step(torch, tfn, arrays, cots)
            want = [g.numpy() for g in eager()]
            jit.reset_stats()
            got = ours()
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3 * float(np.abs(w).max()))
            fallbacks = jit.stats()["fallbacks"]
            assert not fallbacks, f"{name}: fused groups fell back: {fallbacks}"
            fns = {"ours": ours, "fwd": fwd_only, "bwd": bwd_only, "eager": eager}
            note, frames = "", 0
            if not args.no_compile:
                torch._dynamo.reset()
                counters.clear()
                tag = f"tc_ad_{name}_{log2n}"
                compiled = torch.compile(_fresh_function(lambda _t, *xs, f=tfn: f(*xs), torch, tag),
                                         dynamic=False)
                step = torch_step(torch, compiled, arrays, cots)
                step()
                problem = counters_problem(counters)
                frames = counters["frames"].get("total", 0)
                if problem:
                    note = f" (torch.compile refused: {problem})"
                else:
                    for g, w in zip(step(), want):
                        np.testing.assert_allclose(g.numpy(), w, rtol=2e-3,
                                                   atol=2e-3 * float(np.abs(w).max()))
                    fns["compile"] = step
            # every mode in interleaved rounds (bench/timing.py): load bursts on the shared
            # machine hit them alike
            samples = time_interleaved(fns, [()], policy)
            med = {k: statistics.median(v) * 1e3 for k, v in samples.items()}
            best = {k: min(v) * 1e3 for k, v in samples.items()}
            t_ours, b_ours, t_fwd, t_bwd, t_eager = (med["ours"], best["ours"], med["fwd"],
                                                     med["bwd"], med["eager"])
            t_comp = med.get("compile", float("nan"))
            b_comp = best.get("compile", float("nan"))
            if "compile" in fns:
                if counters["frames"].get("total", 0) != frames:
                    note, t_comp = " (torch.compile recompiled while timed)", float("nan")
                torch._dynamo.reset()
            line = (f"| {name} | 2^{log2n} | {t_ours:.2f} | {t_fwd:.2f} | {t_bwd:.2f} | "
                    f"{t_eager:.2f} | {t_comp:.2f} | {t_eager / t_ours:.2f}x | "
                    f"{t_comp / t_ours:.2f}x | {b_ours:.2f} / {b_comp:.2f} |{note}")
            print(line, flush=True)
            rows.append(line)
    load = os.getloadavg()
    text = (f"Forward + backward, float32, 2 threads, medians over >= {args.runs} interleaved "
            f"rounds of all modes (>= 1 s each) "
            f"(`python -m bench.autodiff`); load average before: {load_before[0]:.2f}, "
            f"after: {load[0]:.2f} (a shared 2-core machine: other jobs add noise).\n\n"
            + "\n".join(rows) + "\n")
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
