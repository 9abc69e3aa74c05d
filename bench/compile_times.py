"""Compile time, reported apart from steady state.

For each workload at one size: the time to capture it (``jit.script`` / ``jit.trace``, or
parsing a corpus graph into a ``jit.ScriptFunction``), its
first call with an empty ``TORCHLIKE_CACHE_DIR`` (cold: generate, compile, run), and its first
call in a fresh process reading the same cache directory (warm from the disk cache), next to
the steady-state time of a call.  Cold runs in the benchmark's process after one unrelated
warm-up compile (so that Numba's or CUDA's own start-up is not charged to the first
workload); the warm pass re-runs this module in a subprocess::

    TORCHLIKE_CACHE_DIR=DIR python -m bench.compile_times --device cpu --log2-size 10 \\
        --names gelu_tanh,mish          # prints a JSON list
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import List

import numpy as np


def _capture(w, xs):
    from .workloads import capture
    return capture(w, xs)


def _warm_up_process(to_device) -> float:
    """One unrelated compile, so that process start-up costs are not charged to a workload."""
    import torchlike as tl
    from torchlike import jit
    t0 = time.perf_counter()
    x = to_device((np.ones((3, 5), np.float32),))
    jit.trace(lambda v: tl.sqrt(tl.abs(v) * 3.0) - 0.125, x)(*x)
    return time.perf_counter() - t0


def measure(workloads, log2n: int, to_device, sync, label: str) -> dict:
    """Capture and first-call times (plus fuser counter deltas) of each workload, in this
    process, under the cache directory the environment names."""
    from torchlike import jit
    rows = []
    warm_up = _warm_up_process(to_device)
    rng = np.random.default_rng(1)
    for w in workloads:
        xs = to_device(w.make_inputs(1 << log2n, rng))
        row = {"workload": w.name, "dtype": w.dtype, "log2_size": log2n}
        try:
            before = jit.stats()
            t0 = time.perf_counter()
            fn = _capture(w, xs)
            t1 = time.perf_counter()
            fn(*xs)
            sync()
            t2 = time.perf_counter()
            after = jit.stats()
            steady = []
            for _ in range(5):
                t3 = time.perf_counter()
                fn(*xs)
                sync()
                steady.append(time.perf_counter() - t3)
            row.update({"capture_s": t1 - t0, f"{label}_first_call_s": t2 - t1,
                        f"{label}_kernels_compiled": after["kernels_compiled"]
                        - before["kernels_compiled"],
                        f"{label}_disk_hits": after["disk_hits"] - before["disk_hits"],
                        f"{label}_steady_s": float(np.median(steady))})
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
    return {"rows": rows, f"{label}_process_warmup_s": warm_up}


def warm_from_disk(device: str, names: List[str], log2n: int, cache_dir: str,
                   timeout: float = 600) -> dict:
    """Run ``measure`` in a fresh process over ``cache_dir``; {} (with an error) on failure."""
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=cache_dir)
    cmd = [sys.executable, "-m", "bench.compile_times", "--device", device,
           "--log2-size", str(log2n), "--names", ",".join(names)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        done = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True,
                              timeout=timeout)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError) as e:
        return {"error": f"{type(e).__name__}: {e}"}


def merge(cold: dict, warm: dict) -> List[dict]:
    """One row per workload with both passes' columns."""
    by_name = {r["workload"]: dict(r) for r in cold.get("rows", [])}
    for r in warm.get("rows", []):
        row = by_name.setdefault(r["workload"], {"workload": r["workload"]})
        for k, v in r.items():
            if k.startswith("warm_") or (k == "error" and "error" not in row):
                row[k] = v
            elif k == "capture_s":
                row["warm_capture_s"] = v
    return list(by_name.values())


def section(device: str, workloads, sizes: List[int], to_device, sync, cache_dir: str) -> dict:
    """A run's ``compile`` section: cold compiles at the smallest size (2^10 at most: the first
    call is then mostly compile), then the same workloads warm from disk in a fresh process.
    Run it first, while the cache directory is empty."""
    log2n = min(sizes + [10])
    sys.stderr.write(f"compile times at 2^{log2n} (cold, then warm in a fresh process)...\n")
    cold = measure(workloads, log2n, to_device, sync, "cold")
    warm = warm_from_disk(device, [w.name for w in workloads], log2n, cache_dir)
    return {"log2_size": log2n, "rows": merge(cold, warm),
            "cold_process_warmup_s": cold.get("cold_process_warmup_s"),
            "warm_process_warmup_s": warm.get("warm_process_warmup_s"),
            "warm_error": warm.get("error")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compile_times")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--log2-size", type=int, default=10)
    parser.add_argument("--names", default="")
    args = parser.parse_args(argv)
    from .workloads import all_workloads
    names = set(args.names.split(","))
    workloads = [w for w in all_workloads() if w.name in names]
    if args.device == "cuda":
        from .cuda import sync_cuda, to_device_cuda
        to_device, sync = to_device_cuda, sync_cuda
    else:
        to_device, sync = (lambda xs: xs), (lambda: None)
    print(json.dumps(measure(workloads, args.log2_size, to_device, sync, "warm")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
