"""``python -m bench.dask_bench``: fused torchlike graphs on Dask against Dask with numpy and
with numexpr, on a two-worker ``LocalCluster``.

    python -m bench.dask_bench --sizes 26 --chunks 20,22,24 --out bench/results/dask

Three ways to run one program over a Dask array of 2^N float32 elements (rows of 1024), each
in worker processes (one thread each, and one thread for numexpr and Numba inside them):

* ``dask+numpy``: the program as Dask array expressions (Dask fuses the elementwise layers into
  one task per chunk; numpy makes a temporary per op inside it);
* ``dask+numexpr``: ``map_blocks`` of a function that evaluates the program with numexpr
  (numexpr-style: one pass per expression, in cache-sized blocks);
* ``dask+torchlike``: ``torchlike.dask.run`` of the scripted program (one fused kernel per
  chunk).

Workloads: ``gelu`` (tanh form: numpy and numexpr have no erf), the LSTM cell's pointwise part
(four gates and the cell state in, h and c out), ``softmax`` over rows of 1024.  The inputs are
made on the workers and persisted first; a timed run computes each output and its sum on the
workers (only the sums come back: each chunk is summed and dropped as it is made; the same small
cost in every mode), median of ``--repeats``.  Each mode starts on restarted
workers, and its peak memory is the largest resident memory of both workers together over its
runs, sampled every 20 ms (``psutil``; inputs included).  Every mode's output is checked against dask+numpy's (first chunk) before it is
timed.  The copy floor is the workload's bytes (inputs and outputs once) at the machine's
all-core copy rate (``bench.cpu.copy_bandwidth``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, List, NamedTuple

import numpy as np

import torchlike as tl

ROW = 1024
MODES = ("dask+numpy", "dask+numexpr", "dask+torchlike")
_C = 0.7978845608028654  # sqrt(2 / pi)


# -- the programs, three ways -------------------------------------------------------------------

def gelu_tl(x):
    return 0.5 * x * (1.0 + tl.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def lstm_tl(i, f, g, o, c):
    c2 = tl.sigmoid(f) * c + tl.sigmoid(i) * tl.tanh(g)
    return tl.sigmoid(o) * tl.tanh(c2), c2


def softmax_tl(x):
    return tl.softmax(x, -1)


def gelu_np(x, xp):
    return 0.5 * x * (1.0 + xp.tanh(_C * (x + 0.044715 * x * x * x)))


def _sig(x, xp):
    return 1.0 / (1.0 + xp.exp(-x))


def lstm_np(i, f, g, o, c, xp):
    c2 = _sig(f, xp) * c + _sig(i, xp) * xp.tanh(g)
    return _sig(o, xp) * xp.tanh(c2), c2


def softmax_np(x, xp):
    e = xp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def gelu_ne(x):
    import numexpr as ne
    return ne.evaluate("0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))")


def lstm_ne(i, f, g, o, c):
    import numexpr as ne
    c2 = ne.evaluate("c / (1 + exp(-f)) + tanh(g) / (1 + exp(-i))")
    return np.stack([ne.evaluate("tanh(c2) / (1 + exp(-o))"), c2])


def softmax_ne(x):
    import numexpr as ne
    e = ne.evaluate("exp(x - m)", local_dict={"x": x, "m": x.max(axis=-1, keepdims=True)})
    return ne.evaluate("e / s", local_dict={"e": e, "s": e.sum(axis=-1, keepdims=True)})


class Workload(NamedTuple):
    name: str
    inputs: int
    outputs: int
    tl_fn: Callable
    np_fn: Callable
    ne_fn: Callable


WORKLOADS = [
    Workload("gelu", 1, 1, gelu_tl, gelu_np, gelu_ne),
    Workload("lstm_cell_pointwise", 5, 2, lstm_tl, lstm_np, lstm_ne),
    Workload("softmax_rows1024", 1, 1, softmax_tl, softmax_np, softmax_ne),
]


def build(w: Workload, mode: str, xs: list, salt: str = "") -> list:
    """The workload's outputs as lazy Dask arrays (``salt``: a run's own numexpr keys)."""
    import dask.array as da

    if mode == "dask+numpy":
        out = w.np_fn(*xs, da)
    elif mode == "dask+numexpr":
        if w.outputs == 1:
            out = da.map_blocks(w.ne_fn, *xs, dtype=np.float32, token=f"ne-{salt}")
        else:  # both outputs from one pass, stacked (a leading dim of 2)
            out = da.map_blocks(w.ne_fn, *xs, dtype=np.float32, new_axis=0,
                                chunks=((2,),) + xs[0].chunks, token=f"ne-{salt}")
    else:
        import torchlike.dask as tld
        from torchlike import jit
        out = tld.run(jit.script(w.tl_fn), *xs)
    return list(out) if isinstance(out, tuple) else [out]


def run(sizes: List[int], chunk_logs: List[int], repeats: int, wanted: set) -> dict:
    from .cpu import copy_bandwidth

    floor = copy_bandwidth(256 * 2 ** 20)
    records = []
    # worker processes get one thread each, and so do the libraries inside them
    for k in ("NUMBA_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS",
              "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[k] = "1"
    os.environ.setdefault("TORCHLIKE_CACHE_DIR", tempfile.mkdtemp(prefix="tl-dask-bench-"))
    for w in WORKLOADS:
        if wanted and not any(f in w.name for f in wanted):
            continue
        for n in sizes:
            for cl in chunk_logs:
                records.extend(_one(w, n, cl, repeats, floor["gbps"]))
    return {"schema": "torchlike.bench.dask/1", "copy_floor": floor, "records": records,
            "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                        "python": sys.version.split()[0]},
            "command": "python -m bench.dask_bench " + " ".join(sys.argv[1:])}


def _held(keys, dask_scheduler=None) -> bool:
    return any(k in dask_scheduler.tasks for k in keys)


def _forgotten(client, arrays) -> None:
    """Wait until the scheduler has forgotten ``arrays``: a run of the same keys must not
    find them made."""
    keys = [k for a in arrays for k in a.__dask_keys__()]
    while client.run_on_scheduler(_held, keys):
        time.sleep(0.01)


class _RssSampler:
    """The largest sum of the worker processes' resident sets, read every 20 ms by a thread
    of this process (``psutil``, which distributed depends on)."""

    def __init__(self, pids):
        import psutil
        self.procs = [psutil.Process(p) for p in pids]
        self.peak = 0
        self._stop = threading.Event()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(p.memory_info().rss for p in self.procs))
            time.sleep(0.02)

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _one(w: Workload, n: int, cl: int, repeats: int, gbps: float) -> List[dict]:
    """The three modes of one workload, size and chunk size, each on fresh workers."""
    from distributed import Client, LocalCluster

    shape, chunks = (2 ** n // ROW, ROW), (2 ** cl // ROW, ROW)
    nbytes = 4 * 2 ** n * (w.inputs + w.outputs)
    reference = None
    out = []
    for mode in MODES:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as lc, Client(lc) as client:
            out.append(_mode(client, w, mode, n, cl, shape, chunks, repeats))
        r = out[-1]
        if reference is None:
            reference = r.pop("first")
        r["ok"] = all(np.allclose(a, b, rtol=2e-5, atol=2e-6)
                      for a, b in zip(r.pop("first", reference), reference))
        r["floor_s"] = nbytes / (gbps * 1e9)
        print(f"{w.name:22s} 2^{n} chunk 2^{cl} {mode:15s} {r['median_s'] * 1e3:9.1f} ms "
              f"({r['median_s'] / r['floor_s']:5.1f}x floor) peak "
              f"{r['peak_worker_mib']:7.0f} MiB {'' if r['ok'] else 'WRONG'}", flush=True)
    return out


def _mode(client, w: Workload, mode: str, n: int, cl: int, shape, chunks, repeats: int) -> dict:
    """One mode on a fresh cluster: inputs persisted, a warm-up run, ``repeats`` timed runs."""
    import dask.array as da
    from distributed import wait

    rng = da.random.default_rng(n * 100 + cl)
    xs = [rng.standard_normal(shape, chunks=chunks, dtype=np.float32) for _ in range(w.inputs)]
    xs = client.persist(xs)
    wait(xs)
    first = [np.asarray(y.blocks[(0,) * y.ndim].compute()) for y in build(w, mode, xs)]
    if len(first) == 1 and w.outputs > 1:  # numexpr's stacked outputs
        first = list(first[0])
    times = []
    with _RssSampler(client.run(os.getpid).values()) as sampler:
        for i in range(repeats + 1):  # the first run warms the workers (kernels, pools)
            sums = [y.sum(dtype=np.float64) for y in build(w, mode, xs, str(i))]
            t0 = time.perf_counter()
            client.compute(sums, sync=True)
            times.append(time.perf_counter() - t0)
            _forgotten(client, sums)
    peak = sampler.peak / 2 ** 20
    return {"workload": w.name, "log2n": n, "chunk_log2": cl, "mode": mode,
            "median_s": statistics.median(times[1:]), "times_s": times[1:],
            "peak_worker_mib": peak, "first": first}


def report(result: dict) -> str:
    floor = result["copy_floor"]
    lines = [
        "# torchlike on Dask: a two-worker LocalCluster",
        "",
        f"`{result['command']}`; {result['machine']['cpu_count']} cores, "
        f"{result['machine']['platform']}.",
        "",
        f"Copy floor: **{floor['gbps']:.1f} GB/s** ({floor['method']}). Workers: 2 processes, "
        "one thread each (numexpr and Numba one thread inside). Times: median of the runs "
        "after a warm-up, each output summed on the workers; peak: the largest resident memory of "
        "both workers together, sampled every 20 ms (inputs included).",
        "",
        "| workload | size | chunk | mode | ms | x floor | vs dask+numpy | peak MiB | "
        "vs dask+numpy memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    base = {(r["workload"], r["log2n"], r["chunk_log2"]): r for r in result["records"]
            if r["mode"] == "dask+numpy"}
    for r in result["records"]:
        b = base[(r["workload"], r["log2n"], r["chunk_log2"])]
        lines.append(
            f"| {r['workload']} | 2^{r['log2n']} | 2^{r['chunk_log2']} | {r['mode']} | "
            f"{r['median_s'] * 1e3:.1f} | {r['median_s'] / r['floor_s']:.1f}x | "
            f"{b['median_s'] / r['median_s']:.2f}x | {r['peak_worker_mib']:.0f} | "
            f"{r['peak_worker_mib'] / b['peak_worker_mib']:.2f}x |"
            + ("" if r["ok"] else " WRONG |"))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.dask_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="26", help="log2 element counts (default 26)")
    p.add_argument("--chunks", default="20,22,24", help="log2 chunk sizes (default 20,22,24)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--filter", default="", help="comma-separated workload name parts")
    p.add_argument("--out", default="bench/out/dask")
    a = p.parse_args(argv)
    result = run([int(s) for s in a.sizes.split(",")], [int(c) for c in a.chunks.split(",")],
                 a.repeats, {f for f in a.filter.split(",") if f})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=1))
    (out / "report.md").write_text(report(result))
    print(report(result))
    return 0 if all(r["ok"] for r in result["records"]) else 1


if __name__ == "__main__":
    sys.exit(main())
