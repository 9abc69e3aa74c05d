"""The CPU half of the harness: its modes, copy bandwidth, compile times and the seed loop.

Modes (each only where its library is installed):

==============  ===========================================================================
torchlike       ``jit.script`` / ``jit.trace`` of the workload (a corpus graph: its text
                parsed into a ``jit.ScriptFunction``): fused Numba kernels
interpreter     ``jit.run`` on the same captured graph, unfused, op by op over numpy
numpy           the workload's ``ref(np, ...)``: numpy eager (not for corpus graphs)
numexpr         the workload's numexpr peer
numba           a hand-written ``@njit(parallel=True)`` kernel (``numba_kernels.py``)
torch           PyTorch eager on ``torch.from_numpy`` views
torch.compile   ``torch.compile(fn, dynamic=False)`` of the PyTorch version, a fresh function
                per workload and size, checked to have compiled (``torch_compile.py``)
jax             ``jax.jit`` of the JAX version (XLA CPU), in a subprocess per workload
                (``jax_peer.py``)
==============  ===========================================================================

torch.compile and jax are left out of ``--quick`` unless ``--modes`` names them.  The copy
floor is measured with every core (``copy_bandwidth``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

from . import common, compile_times, corpus
from .timing import FULL, QUICK, TimingPolicy, summarize, time_call, time_interleaved
from .workloads import Workload, capture, loop_add_1000, select

CPU_MODES = ("torchlike", "interpreter", "numpy", "numexpr", "numba", "torch", "torch.compile",
             "jax")
ROOT = Path(__file__).resolve().parents[1]


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

    def time_many(self, fns, input_sets, policy: TimingPolicy) -> dict:
        # interleaved: on a shared VM the ratios are what must not drift (timing.py)
        return {m: summarize(s) for m, s in time_interleaved(fns, input_sets, policy).items()}

    def modes(self, w: Workload, example: tuple, quick: bool, wanted: set, cache: dict,
              log2n: int):
        from torchlike import jit

        from .torch_compile import TorchCompiled
        modes: Dict[str, Callable] = {}
        why_not: Dict[str, str] = {}
        on = lambda m: not wanted or m in wanted
        fn = capture(w, example, cache)
        if on("torchlike"):
            modes["torchlike"] = fn
        if on("interpreter"):
            graph = fn.graph
            modes["interpreter"] = lambda *xs: jit.run(graph, *xs)
        corpus_why = "corpus graph: no hand-written version (the interpreter is the oracle)"
        if on("numpy"):
            if w.ref_kind != "numpy":
                why_not["numpy"] = corpus_why
            else:
                modes["numpy"] = lambda *xs: w.ref(np, *xs)
        if on("numexpr"):
            if self.numexpr is None:
                why_not["numexpr"] = "numexpr is not installed"
            elif w.numexpr is None:
                why_not["numexpr"] = (corpus_why if w.ref_kind != "numpy"
                                      else "not expressible in numexpr")
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
            elif quick and mode not in wanted:
                why_not[mode] = "skipped with --quick (compiles for minutes; name it in --modes)"
            else:
                modes[mode] = TorchCompiled(torch, w.torch, w.name, log2n, _torch_view(torch))
        return modes, why_not

    def external(self, w: Workload, sizes: List[int], wanted: set, quick: bool,
                 policy: TimingPolicy):
        if wanted and "jax" not in wanted:
            return [], {}
        why = jax_unavailable_reason()
        if why is None and w.jax is None:
            why = "not expressible in JAX (no JAX version)"
        if why is None and quick and "jax" not in wanted:
            why = "skipped with --quick (a process per workload; name it in --modes)"
        if why is not None:
            return [], {"jax": why}
        return run_jax_peer(w.name, sizes, policy), {}


def jax_unavailable_reason() -> Optional[str]:
    """None when jax is installed (it is not imported here: it runs in subprocesses)."""
    return None if importlib.util.find_spec("jax") is not None else "jax is not installed"


def run_jax_peer(name: str, sizes: List[int], policy: TimingPolicy,
                 timeout: Optional[float] = None) -> List[dict]:
    """Time workload ``name``'s JAX version at every size in a fresh Python process
    (``python -m bench.jax_peer``): XLA's thread pool never shares a process with torch's,
    Numba's or numexpr's.  Rows as ``Device.external`` describes; whatever the process printed
    before a crash or a timeout is kept, the rest become ``error`` rows."""
    cmd = [sys.executable, "-m", "bench.jax_peer", "--workload", name,
           "--sizes", ",".join(map(str, sizes)), "--policy", json.dumps(policy.as_dict())]
    if timeout is None:
        timeout = 120 + len(sizes) * (4 * policy.max_time_s + 30)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        stdout, err = done.stdout, (None if done.returncode == 0 else
                                    f"exit status {done.returncode}: "
                                    + _last_line(done.stderr))
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        stdout = out.decode() if isinstance(out, bytes) else out
        err = f"timed out after {timeout:.0f} s"
    rows = []
    for line in stdout.splitlines():
        try:
            row = json.loads(line) if line.startswith("{") else None
        except ValueError:
            row = None
        if isinstance(row, dict) and "log2_size" in row:      # not the version line
            rows.append(row)
    done_sizes = {r.get("log2_size") for r in rows}
    rows += [{"mode": "jax", "log2_size": s, "error": err or "no result"}
             for s in sizes if s not in done_sizes]
    for r in rows:
        r["mode"] = "jax"
    return rows


def _last_line(text: str) -> str:
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else "(no message)"


def _copy_rate(copy: Callable, nbytes: int, policy: TimingPolicy) -> float:
    return 2 * nbytes / summarize(time_call(copy, [()], policy))["median_s"] / 1e9


def copy_bandwidth(nbytes: int) -> dict:
    """Memory-to-memory copy rates (GB/s, bytes read + written) of a large float32 array: one
    thread (``numpy.copyto``) and every core (``numpy.copyto`` over one chunk per core in a
    thread pool: numpy drops the GIL while it copies; and a Numba ``prange`` copy loop).  The
    floor every time is set beside (``gbps``) is the fastest of them: all cores, unless the
    machine was busy while that ran and one thread did better."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    policy = TimingPolicy(min_time_s=0.5, min_repeats=5, max_repeats=20)
    cores = os.cpu_count() or 1
    rates = {"numpy.copyto, 1 thread": _copy_rate(lambda: np.copyto(dst, src), nbytes, policy)}
    step = -(-src.size // cores)
    chunks = [(dst[k:k + step], src[k:k + step]) for k in range(0, src.size, step)]
    with ThreadPoolExecutor(cores) as pool:
        rates[f"numpy.copyto, {cores} threads over chunks"] = _copy_rate(
            lambda: list(pool.map(lambda c: np.copyto(*c), chunks)), nbytes, policy)
    numba = common.optional("numba")
    if numba is not None:
        from .numba_kernels import parallel_copy
        parallel_copy(dst, src)
        rates[f"Numba prange copy, {numba.config.NUMBA_NUM_THREADS} threads"] = _copy_rate(
            lambda: parallel_copy(dst, src), nbytes, policy)
    best = max(rates, key=rates.get)
    single = rates["numpy.copyto, 1 thread"]
    all_core = max(v for k, v in rates.items() if k != "numpy.copyto, 1 thread")
    return {"gbps": rates[best], "method": best + ", read + write bytes", "bytes": nbytes,
            "single_thread_gbps": single, "all_core_gbps": all_core, "cores": cores,
            "rates": rates}


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
    if numba is not None:
        try:
            out["numba_threading_layer"] = numba.threading_layer()
        except ValueError:           # no parallel kernel ran yet
            pass
    # OpenMP's wait policy matters on a busy machine: with active waiting a 2-thread barrier
    # whose other thread is descheduled stalls for a scheduler slice (several ms).
    out["thread_env"] = {k: v for k, v in sorted(os.environ.items())
                         if k.startswith(("OMP_", "GOMP_", "KMP_", "MKL_", "NUMBA_", "XLA_"))}
    return out


def run_cpu(args, allocator_env: dict, cache_dir: str) -> int:
    from torchlike import jit
    dev = CpuDevice()
    sizes = [int(s) for s in args.sizes.split(",") if s] or dev.default_sizes(args.quick)
    wanted = set(m for m in args.modes.split(",") if m)
    workloads = select(args.filter, "cpu", args.suite)
    if not workloads:
        print(f"no workload matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    policy = QUICK if args.quick else FULL
    copy_bytes = 1 << 26 if args.quick else 1 << 28
    bandwidth = copy_bandwidth(copy_bytes)
    sys.stderr.write(f"copy floor {bandwidth['gbps']:.1f} GB/s ({bandwidth['method']}); "
                     f"one thread {bandwidth['single_thread_gbps']:.1f} GB/s\n")

    compile_section = None if args.no_compile_times else compile_times.section(
        "cpu", workloads, sizes, lambda xs: xs, lambda: None, cache_dir)
    jit.reset_stats()
    loop = common.run_workloads(dev, workloads, sizes, wanted, args.quick, policy,
                                bandwidth["gbps"])
    fuser_stats = jit.stats()
    seed = seed_loop(args.quick) if not args.no_seed else None
    run = {"device": "cpu", "created_unix": time.time(), "quick": bool(args.quick),
           "command": " ".join(["python -m bench"] + sys.argv[1:]),
           "machine": common.machine_info(thread_counts(dev)),
           "libraries": common.library_versions(), "allocator_env": allocator_env,
           "cache_dir": cache_dir, "timing": policy.as_dict(),
           "copy_bandwidth": bandwidth,
           "corpus": {"dir": str(corpus.corpus_dir()), "excluded": corpus.excluded()},
           "sizes": sizes, "modes": sorted({r["mode"] for r in loop["results"]}),
           **loop,
           "compile": compile_section,
           "fuser_stats": fuser_stats, "seed_loop": seed}
    doc = common.write_outputs(run, Path(args.out))
    from .report import render_report
    print(render_report({"schema": doc["schema"], "runs": [run]}, Path(args.out)))
    return 1 if loop["failures"] else 0
