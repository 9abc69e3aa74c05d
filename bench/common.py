"""The run loop both devices share: build each workload's modes, check every mode against the
numpy reference, time it, and collect one record per (workload, size, mode).

A device (``cpu.CpuDevice``, ``cuda.CudaDevice``) supplies what differs: how inputs move to it,
which modes exist, how a call is timed, and its copy bandwidth.  Results go to
``results.json`` (schema ``SCHEMA``, fields in ``bench/README.md``) and ``report.md``.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from .timing import Progress, TimingPolicy
from .workloads import Workload

SCHEMA = "torchlike.bench/2"
LIBRARIES = ("numpy", "numba", "numexpr", "torch", "cupy", "matplotlib", "torchlike")


def optional(name: str):
    """The module, or None when it is not installed (or fails to import)."""
    try:
        import importlib
        return importlib.import_module(name)
    except Exception:
        return None


def as_list(out) -> List[np.ndarray]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    res = []
    for o in outs:
        if hasattr(o, "detach"):                      # torch (CPU or CUDA)
            o = o.detach().cpu().numpy()
        elif hasattr(o, "get") and type(o).__module__.startswith("cupy"):
            o = o.get()
        res.append(np.asarray(o))
    return res


def tolerance(dtype: np.dtype) -> Tuple[float, float]:
    """(rtol, atol) for comparing against the reference: float16 loose, ints exact."""
    if dtype == np.float16:
        return 1e-2, 1e-2
    if dtype == np.float64:
        return 1e-9, 1e-12
    if dtype.kind == "f":
        return 2e-3, 2e-4
    return 0.0, 0.0


def check(out, ref: List[np.ndarray]) -> Optional[str]:
    """None when ``out`` matches ``ref`` (count, dtype, shape, values), else why not."""
    outs = as_list(out)
    if len(outs) != len(ref):
        return f"{len(outs)} outputs, expected {len(ref)}"
    for k, (a, b) in enumerate(zip(outs, ref)):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"output {k}: {a.dtype}{list(a.shape)}, expected {b.dtype}{list(b.shape)}"
        rtol, atol = tolerance(b.dtype)
        try:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True)
        except AssertionError as e:
            lines = [l for l in str(e).splitlines() if "Max" in l or "Mismatch" in l]
            return f"output {k}: " + "; ".join(l.strip() for l in lines)
    return None


def reference(w: Workload, host_inputs: tuple) -> List[np.ndarray]:
    """numpy's answer; float16 work is computed in float32 and rounded once at the end."""
    if any(x.dtype == np.float16 for x in host_inputs):
        wide = tuple(x.astype(np.float32) if x.dtype == np.float16 else x for x in host_inputs)
        return [o.astype(np.float16) for o in as_list(w.ref(np, *wide))]
    return as_list(w.ref(np, *host_inputs))


def machine_info(extra: Optional[dict] = None) -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "processor": platform.processor()}
    try:
        model = [l for l in open("/proc/cpuinfo") if l.startswith("model name")]
        info["cpu_model"] = model[0].split(":", 1)[1].strip() if model else ""
    except OSError:
        pass
    info.update(extra or {})
    return info


def library_versions() -> Dict[str, Optional[str]]:
    out = {}
    for lib in LIBRARIES:
        mod = optional(lib)
        out[lib] = getattr(mod, "__version__", None) if mod else None
    return out


class Device:
    """What the run loop needs from a device; see ``cpu.CpuDevice``."""
    name = "?"

    def default_sizes(self, quick: bool) -> List[int]: ...
    def to_device(self, arrays: tuple) -> tuple: ...
    def modes(self, w: Workload, example: tuple, quick: bool, wanted: set, cache: dict
              ) -> Tuple[Dict[str, Callable], Dict[str, str]]:
        """(mode -> callable, mode -> why it is not run); ``cache`` lives as long as the
        workload, for what is built once across sizes (torch.compile, cupy.fuse)."""
    def time(self, fn: Callable, input_sets: List[tuple], policy: TimingPolicy) -> dict: ...
    def sync(self) -> None: ...


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def run_workloads(dev: Device, workloads: List[Workload], sizes: List[int], wanted: set,
                  quick: bool, policy: TimingPolicy, bandwidth_gbps: float) -> dict:
    """Time every mode of every workload at every size.  Returns ``results``, ``skipped``
    (modes not run, with why) and ``failures`` (modes that ran and gave a wrong answer)."""
    rng = np.random.default_rng(0)
    results, skipped, failures = [], [], []
    progress = Progress(len(workloads) * len(sizes))
    for w in workloads:
        mode_cache: Dict[str, Callable] = {}
        for log2n in sizes:
            label = f"{w.name} 2^{log2n}"
            progress.show(label)
            n = 1 << log2n
            first_set = w.make_inputs(n, rng)
            set_bytes = sum(x.nbytes for x in first_set)
            rotations = policy.rotations(set_bytes)
            host_sets = [first_set] + [w.make_inputs(n, rng) for _ in range(rotations - 1)]
            ref = reference(w, host_sets[0])
            nbytes = set_bytes + sum(o.nbytes for o in ref)
            input_sets = [dev.to_device(s) for s in host_sets]
            del host_sets[1:]
            try:
                modes, why_not = dev.modes(w, input_sets[0], quick, wanted, mode_cache)
            except Exception as e:   # capture (script/trace) failed: report, go on
                failures.append({"workload": w.name, "mode": "torchlike", "log2_size": log2n,
                                 "reason": "capture failed: " + _short(e)})
                progress.step(label)
                continue
            for mode, reason in why_not.items():
                if log2n == sizes[0]:
                    skipped.append({"workload": w.name, "mode": mode, "reason": reason})
            for mode, fn in modes.items():
                progress.show(f"{label} {mode}")
                t0 = time.perf_counter()
                try:
                    out = fn(*input_sets[0])
                    dev.sync()
                except Exception as e:
                    first = time.perf_counter() - t0
                    entry = {"workload": w.name, "mode": mode, "log2_size": log2n,
                             "reason": _short(e)}
                    (failures if mode in ("torchlike", "interpreter") else skipped).append(entry)
                    if mode in ("torchlike", "interpreter"):
                        traceback.print_exc(limit=3)
                    continue
                first = time.perf_counter() - t0
                bad = check(out, ref)
                if bad is not None:
                    failures.append({"workload": w.name, "mode": mode, "log2_size": log2n,
                                     "reason": "wrong result: " + bad})
                    sys.stderr.write(f"\n{w.name}/{mode}/2^{log2n}: wrong result, not timed: "
                                     f"{bad}\n")
                    continue
                del out
                stats = dev.time(fn, input_sets, policy)
                gbps = nbytes / stats["median_s"] / 1e9
                results.append({"workload": w.name, "dtype": w.dtype, "tags": list(w.tags),
                                "log2_size": log2n, "elements": n, "mode": mode,
                                "first_call_s": first, "rotations": rotations, "bytes": nbytes,
                                "gbps": gbps, "bandwidth_share": gbps / bandwidth_gbps,
                                **stats})
            progress.step(label)
    progress.close()
    return {"results": results, "skipped": skipped, "failures": failures}


def write_outputs(run: dict, out_dir: Path) -> dict:
    """Write ``results.json`` (this run replaces an earlier run for the same device in the
    same folder; runs for other devices are kept), ``report.md`` and the plots."""
    from .report import plot, render_report
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    runs = []
    if path.exists():
        try:
            old = json.loads(path.read_text())
            if old.get("schema") == SCHEMA:
                runs = [r for r in old.get("runs", []) if r.get("device") != run["device"]]
        except (OSError, ValueError):
            pass
    doc = {"schema": SCHEMA, "runs": sorted(runs + [run], key=lambda r: r["device"])}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)
    for r in doc["runs"]:
        plot(r, out_dir)
    (out_dir / "report.md").write_text(render_report(doc, out_dir))
    return doc
