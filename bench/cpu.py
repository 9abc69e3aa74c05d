"""The CPU half of the harness: its modes, copy bandwidth, compile times and the seed loop.

Modes (each only where its library is installed):

==============  ===========================================================================
torchlike       ``jit.script`` (or ``jit.trace``) of the workload: fused Numba kernels
interpreter     ``jit.run`` on the same captured graph, unfused, op by op over numpy
numpy           the workload's ``ref(np, ...)``: numpy eager
numexpr         the workload's numexpr peer
numba           a hand-written ``@njit(parallel=True)`` kernel (``numba_kernels.py``)
torch           PyTorch eager on ``torch.from_numpy`` views
torch.compile   ``torch.compile`` of the PyTorch version (not with ``--quick``: minutes)
==============  ===========================================================================
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

from . import common, compile_times
from .timing import FULL, QUICK, TimingPolicy, summarize, time_call
from .workloads import Workload, loop_add_1000, select

CPU_MODES = ("torchlike", "interpreter", "numpy", "numexpr", "numba", "torch", "torch.compile")


def _torch_view(torch):
    """``torch.from_numpy``, done once per input array (cached by id, array kept alive) so
    that the conversion is not timed."""
    seen = {}

    def view(x):
        hit = seen.get(id(x))
        if hit is None:
            hit = seen[id(x)] = (x, torch.from_numpy(x))
        return hit[1]
    return view


class CpuDevice(common.Device):
    name = "cpu"

    def __init__(self):
        self.numexpr = common.optional("numexpr")
        self.torch = common.optional("torch")
        if self.torch is not None:
            self.torch.set_num_threads(os.cpu_count() or 1)
        try:
            from . import numba_kernels
            self.numba_kernels = numba_kernels
        except Exception:           # Numba missing or broken: no hand-written mode
            self.numba_kernels = None

    def default_sizes(self, quick: bool) -> List[int]:
        return [10, 14, 18] if quick else [10, 12, 14, 16, 18, 20, 22, 24]

    def to_device(self, arrays: tuple) -> tuple:
        return arrays

    def sync(self) -> None:
        pass

    def time(self, fn, input_sets, policy: TimingPolicy) -> dict:
        return summarize(time_call(fn, input_sets, policy))

    def modes(self, w: Workload, example: tuple, quick: bool, wanted: set, cache: dict):
        from torchlike import jit
        modes: Dict[str, Callable] = {}
        why_not: Dict[str, str] = {}
        on = lambda m: not wanted or m in wanted
        if w.capture == "script":
            if "script" not in cache:
                cache["script"] = jit.script(w.fn)
            fn = cache["script"]
        else:
            fn = jit.trace(w.fn, example)      # traced per size: the graph carries shapes
        if on("torchlike"):
            modes["torchlike"] = fn
        if on("interpreter"):
            graph = fn.graph
            modes["interpreter"] = lambda *xs: jit.run(graph, *xs)
        if on("numpy"):
            modes["numpy"] = lambda *xs: w.ref(np, *xs)
        if on("numexpr"):
            if self.numexpr is None:
                why_not["numexpr"] = "numexpr is not installed"
            elif w.numexpr is None:
                why_not["numexpr"] = "not expressible in numexpr"
            else:
                modes["numexpr"] = lambda *xs: w.numexpr(self.numexpr, *xs)
        if on("numba"):
            kernel = self.numba_kernels.kernel_for(w.name) if self.numba_kernels else None
            if kernel is None:
                why_not["numba"] = ("Numba is not installed" if self.numba_kernels is None
                                    else "no hand-written kernel")
            else:
                modes["numba"] = kernel
        torch = self.torch
        for mode in ("torch", "torch.compile"):
            if not on(mode):
                continue
            if torch is None:
                why_not[mode] = "torch is not installed"
            elif w.torch is None:
                why_not[mode] = "not expressible in PyTorch"
            elif mode == "torch":
                view = _torch_view(torch)
                modes[mode] = lambda *xs, view=view: w.torch(torch, *map(view, xs))
            elif quick:
                why_not[mode] = "skipped with --quick (compiles for minutes)"
            else:
                if "torch.compile" not in cache:
                    cache["torch.compile"] = torch.compile(lambda *ts: w.torch(torch, *ts))
                compiled, view = cache["torch.compile"], _torch_view(torch)
                modes[mode] = lambda *xs, fn=compiled, view=view: fn(*map(view, xs))
        return modes, why_not


def copy_bandwidth(nbytes: int) -> float:
    """Memory-to-memory copy rate (GB/s, bytes read + written) of a large array: the roofline
    each result's effective bandwidth is compared with."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    policy = TimingPolicy(min_time_s=0.5, min_repeats=5, max_repeats=20)
    return 2 * nbytes / summarize(time_call(lambda: np.copyto(dst, src), [()], policy))[
        "median_s"] / 1e9


def seed_loop(quick: bool) -> dict:
    """The seed's traced 1000-add loop on a 2x3 input: warm call, fused vs interpreted."""
    from torchlike import jit
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    t0 = time.perf_counter()
    traced = jit.trace(loop_add_1000, (x,))
    trace_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = traced(x)
    first_call_s = time.perf_counter() - t0
    bad = common.check(out, [loop_add_1000(x)])
    policy = TimingPolicy(min_time_s=0.3 if quick else 1.0, min_repeats=5, max_repeats=200)
    fused = summarize(time_call(traced, [(x,)], policy))
    graph = traced.graph
    interp = summarize(time_call(lambda v: jit.run(graph, v), [(x,)],
                                 TimingPolicy(policy.min_time_s, 5, 30)))
    return {"workload": "loop_add_1000_traced", "shape": [2, 3], "trace_s": trace_s,
            "first_call_s": first_call_s, "fused": fused, "interpreter": interp,
            "speedup": interp["median_s"] / fused["median_s"], "check": bad or "ok"}


def thread_counts(dev: CpuDevice) -> dict:
    out = {}
    numba = common.optional("numba")
    if numba is not None:
        out["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    if dev.numexpr is not None:
        out["numexpr_threads"] = getattr(dev.numexpr, "nthreads", None)
    if dev.torch is not None:
        out["torch_threads"] = dev.torch.get_num_threads()
    return out


def run_cpu(args, allocator_env: dict, cache_dir: str) -> int:
    from torchlike import jit
    dev = CpuDevice()
    sizes = [int(s) for s in args.sizes.split(",") if s] or dev.default_sizes(args.quick)
    wanted = set(m for m in args.modes.split(",") if m)
    workloads = select(args.filter, "cpu")
    if not workloads:
        print(f"no workload matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    policy = QUICK if args.quick else FULL
    copy_bytes = 1 << 26 if args.quick else 1 << 28
    bandwidth = copy_bandwidth(copy_bytes)

    # Compile times first, while the cache directory is empty.
    compile_size = min(sizes + [10])   # small: the first call is then mostly compile
    sys.stderr.write(f"compile times at 2^{compile_size} (cold, then warm in a fresh "
                     f"process)...\n")
    cold = compile_times.measure(workloads, compile_size, lambda xs: xs, lambda: None, "cold")
    warm = compile_times.warm_from_disk("cpu", [w.name for w in workloads], compile_size,
                                        cache_dir)
    jit.reset_stats()
    loop = common.run_workloads(dev, workloads, sizes, wanted, args.quick, policy, bandwidth)
    fuser_stats = jit.stats()
    seed = seed_loop(args.quick) if not args.no_seed else None
    run = {"device": "cpu", "created_unix": time.time(), "quick": bool(args.quick),
           "command": " ".join(["python -m bench"] + sys.argv[1:]),
           "machine": common.machine_info(thread_counts(dev)),
           "libraries": common.library_versions(), "allocator_env": allocator_env,
           "cache_dir": cache_dir, "timing": policy.as_dict(),
           "copy_bandwidth": {"gbps": bandwidth, "bytes": copy_bytes,
                              "method": "numpy.copyto of a float32 array, read + write bytes"},
           "sizes": sizes, "modes": sorted({r["mode"] for r in loop["results"]}),
           **loop,
           "compile": {"log2_size": compile_size, "rows": compile_times.merge(cold, warm),
                       "cold_process_warmup_s": cold.get("cold_process_warmup_s"),
                       "warm_process_warmup_s": warm.get("warm_process_warmup_s"),
                       "warm_error": warm.get("error")},
           "fuser_stats": fuser_stats, "seed_loop": seed}
    doc = common.write_outputs(run, Path(args.out))
    from .report import render_report
    print(render_report({"schema": doc["schema"], "runs": [run]}, Path(args.out)))
    return 1 if loop["failures"] else 0
