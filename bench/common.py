"""The run loop both devices share: build each workload's modes, check every mode against the
numpy reference, time it, and collect one record per (workload, size, mode).

A device (``cpu.CpuDevice``, ``cuda.CudaDevice``) supplies what differs: how inputs move to it,
which modes exist, how a call is timed, its copy bandwidth (the floor every time is set beside)
and modes timed in another process (``external``: JAX on the CPU).  Results go to
``results.json`` (schema ``SCHEMA``, fields in ``bench/README.md``) and ``report.md``.

A mode's callable may carry hooks the loop calls: ``problem()`` after the checked first call
(a reason makes the mode a peer failure, not timed: torch.compile that did not compile
cleanly), ``recheck()`` after the timed calls, ``release()`` when the size is done, and
``compiles = True`` to report its first call as ``compile_s``.
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
from .workloads import Workload, input_rng

SCHEMA = "torchlike.bench/3"
LIBRARIES = ("numpy", "numba", "numexpr", "torch", "jax", "jaxlib", "cupy", "matplotlib",
             "torchlike")
NOT_IMPORTED = ("jax", "jaxlib")   # versions read from metadata: jax runs in subprocesses only


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
            text = [l.strip() for l in str(e).splitlines() if l.strip()]
            lines = [l for l in text if "Max" in l or "Mismatch" in l or "mismatch" in l]
            return f"output {k}: " + "; ".join(lines or text[:2])
    return None


def reference(w: Workload, host_inputs: tuple) -> List[np.ndarray]:
    """numpy's answer (for a corpus graph: the interpreter's); float16 work is computed in
    float32 and rounded once at the end."""
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
        if lib in NOT_IMPORTED:
            from importlib import metadata
            try:
                out[lib] = metadata.version(lib)
            except metadata.PackageNotFoundError:
                out[lib] = None
            continue
        mod = optional(lib)
        out[lib] = getattr(mod, "__version__", None) if mod else None
    return out


def input_sets(w: Workload, log2n: int, policy: TimingPolicy) -> Tuple[List[tuple], int]:
    """The host input sets of ``w`` at 2^log2n (the first is the checked one, the rest rotate)
    and the number of sets: the same arrays in every process (``input_rng``)."""
    rng = input_rng(w.name, log2n)
    first = w.make_inputs(1 << log2n, rng)
    rotations = policy.rotations(sum(x.nbytes for x in first))
    return [first] + [w.make_inputs(1 << log2n, rng) for _ in range(rotations - 1)], rotations


def floor_fields(nbytes: int, median_s: float, floor_gbps: float) -> dict:
    """Effective bandwidth and where a time sits against the copy floor: ``floor_s`` (the
    bytes moved at the floor bandwidth), ``floor_ratio`` (time / floor_s) and
    ``bandwidth_share`` (floor_s / time)."""
    floor_s = nbytes / (floor_gbps * 1e9)
    return {"bytes": nbytes, "gbps": nbytes / median_s / 1e9, "floor_s": floor_s,
            "floor_ratio": median_s / floor_s, "bandwidth_share": floor_s / median_s}


def make_record(w: Workload, log2n: int, mode: str, stats: dict, first_call_s: float,
                rotations: int, nbytes: int, floor_gbps: float,
                compile_s: Optional[float] = None) -> dict:
    rec = {"workload": w.name, "dtype": w.dtype, "tags": list(w.tags), "log2_size": log2n,
           "elements": 1 << log2n, "mode": mode, "first_call_s": first_call_s,
           "rotations": rotations, **floor_fields(nbytes, stats["median_s"], floor_gbps),
           **stats}
    if compile_s is not None:
        rec["compile_s"] = compile_s
    return rec


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

    def time_many(self, fns: Dict[str, Callable], input_sets: List[tuple],
                  policy: TimingPolicy) -> Dict[str, dict]:
        """Every mode of one workload and size, mode -> ``time``'s stats; one after the
        other unless the device interleaves them (``cpu.CpuDevice``)."""
        return {m: self.time(fn, input_sets, policy) for m, fn in fns.items()}

    def external(self, w: Workload, sizes: List[int], wanted: set, quick: bool,
                 policy: TimingPolicy) -> Tuple[List[dict], Dict[str, str]]:
        """Modes timed in another process, all sizes at once: (rows, mode -> why not run).
        A row has ``mode``, ``log2_size`` and either ``stats`` (with ``first_call_s``,
        ``rotations``, ``bytes``, optionally ``compile_s``), ``wrong`` or ``error``."""
        return [], {}


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def run_workloads(dev: Device, workloads: List[Workload], sizes: List[int], wanted: set,
                  quick: bool, policy: TimingPolicy, floor_gbps: float) -> dict:
    """Time every mode of every workload at every size.  Returns ``results``, ``skipped``
    (modes not run, with why), ``failures`` (torchlike/interpreter errors and wrong answers
    of torchlike or the interpreter) and ``peer_failures`` (a peer that raised, gave a wrong
    answer or did not compile cleanly)."""
    results, skipped, failures, peer_failures = [], [], [], []
    progress = Progress(len(workloads) * len(sizes))

    def failed(w, mode, log2n, reason):
        entry = {"workload": w.name, "mode": mode, "log2_size": log2n, "reason": reason}
        if mode in ("torchlike", "interpreter"):
            failures.append(entry)
        else:
            peer_failures.append(entry)

    for w in workloads:
        mode_cache: Dict[str, Callable] = {}
        for log2n in sizes:
            label = f"{w.name} 2^{log2n}"
            progress.show(label)
            host_sets, rotations = input_sets(w, log2n, policy)
            try:
                ref = reference(w, host_sets[0])
            except Exception as e:
                failures.append({"workload": w.name, "mode": "reference", "log2_size": log2n,
                                 "reason": f"the {w.ref_kind} reference failed: " + _short(e)})
                progress.step(label)
                continue
            nbytes = sum(x.nbytes for x in host_sets[0]) + sum(o.nbytes for o in ref)
            device_sets = [dev.to_device(s) for s in host_sets]
            del host_sets[1:]
            try:
                modes, why_not = dev.modes(w, device_sets[0], quick, wanted, mode_cache, log2n)
            except Exception as e:   # capture (script/trace/parse) failed: report, go on
                failed(w, "torchlike", log2n, "capture failed: " + _short(e))
                progress.step(label)
                continue
            for mode, reason in why_not.items():
                if log2n == sizes[0]:
                    skipped.append({"workload": w.name, "mode": mode, "reason": reason})
            checked: Dict[str, Tuple[Callable, float]] = {}
            for mode, fn in modes.items():
                progress.show(f"{label} {mode}")
                try:
                    t0 = time.perf_counter()
                    out = fn(*device_sets[0])
                    dev.sync()
                    first = time.perf_counter() - t0
                except Exception as e:
                    failed(w, mode, log2n, _short(e))
                    if mode in ("torchlike", "interpreter"):
                        traceback.print_exc(limit=3)
                    _release(fn)
                    continue
                bad = check(out, ref)
                del out
                if bad is None and hasattr(fn, "problem"):
                    why = fn.problem()
                    if why is not None:
                        failed(w, mode, log2n, "did not compile cleanly: " + why)
                        sys.stderr.write(f"\n{w.name}/{mode}/2^{log2n}: {why}\n")
                        _release(fn)
                        continue
                if bad is not None:
                    failed(w, mode, log2n, "wrong result: " + bad)
                    sys.stderr.write(f"\n{w.name}/{mode}/2^{log2n}: wrong result, not timed: "
                                     f"{bad}\n")
                    _release(fn)
                    continue
                checked[mode] = (fn, first)
            # every checked mode is timed together (interleaved where the device does so),
            # then rechecked: a torch.compile that recompiled or fell back while timed is
            # reported instead of its time
            progress.show(f"{label} timing {len(checked)} modes")
            all_stats = dev.time_many({m: fn for m, (fn, _) in checked.items()}, device_sets,
                                      policy)
            for mode, (fn, first) in checked.items():
                why = fn.recheck() if hasattr(fn, "recheck") else None
                _release(fn)
                if why is not None:
                    failed(w, mode, log2n, why)
                    continue
                results.append(make_record(w, log2n, mode, all_stats[mode], first, rotations,
                                           nbytes, floor_gbps,
                                           first if getattr(fn, "compiles", False) else None))
            del checked
            del modes, device_sets
            progress.step(label)
        progress.show(f"{w.name} (other process)")
        rows, why_not = dev.external(w, sizes, wanted, quick, policy)
        skipped += [{"workload": w.name, "mode": m, "reason": r} for m, r in why_not.items()]
        for row in rows:
            if "stats" in row:
                st = dict(row["stats"])
                results.append(make_record(w, row["log2_size"], row["mode"], st,
                                           st.pop("first_call_s"), st.pop("rotations"),
                                           st.pop("bytes"), floor_gbps, st.pop("compile_s", None)))
            elif "wrong" in row:
                failed(w, row["mode"], row["log2_size"], "wrong result: " + row["wrong"])
            else:
                failed(w, row["mode"], row.get("log2_size"), row.get("error", "failed"))
    progress.close()
    return {"results": results, "skipped": skipped, "failures": failures,
            "peer_failures": peer_failures}


def _release(fn) -> None:
    if hasattr(fn, "release"):
        fn.release()


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
