"""torchlike vs torch.compile on non-contiguous inputs, side by side in one process.

    PYTHONPATH=. python -m bench.layouts [--log2n 22] [--runs 9]

Workloads at 2^log2n elements (float32):

* ``noncontig``: ``corpus:noncontig_inputs``'s program, ``(a * b + sin(c), relu(a - c))``, on
  the corpus's layouts -- ``a`` transposed (F-ordered), ``b`` a column slice with step 2,
  ``c`` a row expanded (stride 0); PyTorch gives both outputs ``a``'s layout.
* ``transpose_add``: ``x.T + y.T`` (both F-ordered; the result is F-ordered).
* ``mixed_add``: ``x + y.T`` (the result takes ``x``'s C order; ``y.T`` is read across).

Each mode is timed interleaved with the other (the machine may be shared: the ratio of the two
medians is what counts), ``--runs`` calls each after warming up; torch.compile is compiled once
per workload and its ``torch._dynamo`` counters are checked (``bench.torch_compile``).  Results
are printed, never written to ``bench/results``.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np


def _inputs(name: str, n: int, rng):
    side = 1 << (int(math.log2(n)) // 2)
    m, k = n // side, side
    if name == "noncontig":
        a = rng.standard_normal((k, m), dtype=np.float32).T            # (m, k), strides [1, m]
        b = rng.standard_normal((m, 2 * k), dtype=np.float32)[:, ::2]  # (m, k), strides [2k, 2]
        c = np.broadcast_to(rng.standard_normal((1, k), dtype=np.float32), (m, k))  # [0, 1]
        return a, b, c
    x = rng.standard_normal((m, k), dtype=np.float32)
    y = rng.standard_normal((k, m), dtype=np.float32).T
    if name == "transpose_add":
        return rng.standard_normal((k, m), dtype=np.float32).T, y
    return x, y


def _programs(tl):
    return {
        "noncontig": lambda lib, a, b, c: (a * b + lib.sin(c), lib.relu(a - c)),
        "transpose_add": lambda lib, x, y: x + y,
        "mixed_add": lambda lib, x, y: x + y,
    }


def _time(fn, xs) -> float:
    t0 = time.perf_counter()
    fn(*xs)
    return time.perf_counter() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=22)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", type=int, default=0, help="threads for both (0: their default)")
    args = ap.parse_args(argv)
    import warnings

    import torch
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
    if args.threads:
        import numba
        numba.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)

    import torchlike as tl
    from torchlike import jit

    from .torch_compile import TorchCompiled

    rng = np.random.default_rng(0)
    n = 1 << args.log2n
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; 2^{args.log2n} elements")
    print(f"{'workload':16} {'torchlike ms':>12} {'compile ms':>11} {'tl/compile':>10}"
          "   out strides (tl | torch)")
    for name, prog in _programs(tl).items():
        if args.only and name not in args.only.split(","):
            continue
        xs = _inputs(name, n, rng)
        traced = jit.trace(lambda *a, p=prog: p(tl, *a), xs)
        jit.reset_stats()
        mine = traced(*xs)
        st = jit.stats()
        assert st["cache_hits"] + st["cache_misses"] > 0 and not st["fallbacks"], st
        tc = TorchCompiled(torch, lambda torch, *ts, p=prog: p(torch, *ts), name, args.log2n,
                           torch.from_numpy)
        theirs = tc(*xs)
        problem = tc.problem()
        assert problem is None, problem
        mine = mine if isinstance(mine, tuple) else (mine,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for u, v in zip(mine, theirs, strict=True):
            np.testing.assert_allclose(u, v.numpy(), rtol=1e-5, atol=1e-5)
        t_tl, t_tc = [], []
        for _ in range(2):  # warm both
            traced(*xs)
            tc(*xs)
        for _ in range(args.runs):
            t_tl.append(_time(traced, xs))
            t_tc.append(_time(tc, xs))
        assert tc.recheck() is None
        a, b = statistics.median(t_tl) * 1e3, statistics.median(t_tc) * 1e3
        strides = [tuple(s // u.itemsize for s in u.strides) for u in mine]
        print(f"{name:16} {a:12.2f} {b:11.2f} {a / b:10.2f}   {strides} | "
              f"{[tuple(v.stride()) for v in theirs]}")
        tc.release()


if __name__ == "__main__":
    main()
