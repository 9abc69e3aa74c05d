"""The CPU half of the harness: modes, the run loop, results.json and report.md."""
from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

from .timing import summarize, time_call
from .workloads import WORKLOADS, Workload, loop_add_1000

SCHEMA = "torchlike.bench/1"


def _optional(name):
    try:
        return __import__(name)
    except Exception:
        return None


def build_modes(w: Workload, example: tuple, quick: bool) -> Dict[str, Callable]:
    """name -> callable(*inputs) for every mode whose library is installed."""
    import torchlike
    from torchlike import jit
    modes: Dict[str, Callable] = {}
    scripted = jit.script(w.fn)
    modes["torchlike"] = scripted
    graph = scripted.graph
    modes["interpreter"] = lambda *xs: jit.run(graph, *xs)
    modes["numpy"] = w.numpy
    ne = _optional("numexpr")
    if ne is not None and w.numexpr:
        exprs = list(w.numexpr.values())
        names = [chr(ord("x") + i) for i in range(len(example))]

        def run_numexpr(*xs, exprs=exprs, names=names):
            env = dict(zip(names, xs))
            outs = tuple(ne.evaluate(e, local_dict=env) for e in exprs)
            return outs[0] if len(outs) == 1 else outs
        modes["numexpr"] = run_numexpr
    torch = _optional("torch")
    if torch is not None and w.torch is not None:
        torch.set_num_threads(os.cpu_count() or 1)

        def run_torch(*xs, fn=w.torch):
            return fn(torch, *(torch.from_numpy(x) for x in xs))
        modes["torch"] = run_torch
        if not quick:
            compiled = torch.compile(lambda *ts: w.torch(torch, *ts))

            def run_compiled(*xs):
                return compiled(*(torch.from_numpy(x) for x in xs))
            modes["torch.compile"] = run_compiled
    return modes


def _as_list(out) -> list:
    if isinstance(out, (tuple, list)):
        return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in out]
    return [np.asarray(out.numpy() if hasattr(out, "numpy") else out)]


def check(out, ref, what: str) -> None:
    for a, b in zip(_as_list(out), _as_list(ref)):
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=2e-3,
                                   atol=2e-4, equal_nan=True, err_msg=what)


def copy_bandwidth(nbytes: int = 1 << 28) -> float:
    """Memory-to-memory copy rate (GB/s, read + write) of a large array: the roofline."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    samples = time_call(lambda: np.copyto(dst, src), [()], min_time=0.5, max_repeats=20)
    return 2 * nbytes / summarize(samples)["median_s"] / 1e9


def progress(i: int, total: int, label: str) -> None:
    width = 30
    done = int(width * i / max(total, 1))
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {i}/{total} {label[:50]:<50}")
    sys.stderr.flush()
    if i == total:
        sys.stderr.write("\n")


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
    check(out, loop_add_1000(x), "seed loop")
    fused = summarize(time_call(traced, [(x,)], min_time=0.3 if quick else 1.0))
    graph = traced.graph
    interp = summarize(time_call(lambda v: jit.run(graph, v), [(x,)],
                                 min_time=0.3 if quick else 1.0, max_repeats=30))
    return {"workload": "loop_add_1000_traced", "shape": [2, 3], "trace_s": trace_s,
            "first_call_s": first_call_s, "fused": fused, "interpreter": interp,
            "speedup": interp["median_s"] / fused["median_s"]}


def run_cpu(args, allocator_env: dict) -> int:
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([10, 16, 20] if args.quick
                                                              else [10, 14, 18, 20, 22, 24])
    wanted = set(m for m in args.modes.split(",") if m)
    workloads = [w for w in WORKLOADS if args.filter in w.name]
    rng = np.random.default_rng(0)
    bandwidth = copy_bandwidth(1 << 26 if args.quick else 1 << 28)
    results: List[dict] = []
    total = len(workloads) * len(sizes)
    step = 0
    for w in workloads:
        for log2n in sizes:
            progress(step, total, f"{w.name} 2^{log2n}")
            step += 1
            n = 1 << log2n
            rotations = max(1, min(8, (1 << 22) // n))  # enough copies to exceed the caches
            input_sets = [w.make_inputs(n, rng) for _ in range(rotations)]
            ref = w.numpy(*input_sets[0])
            modes = build_modes(w, input_sets[0], args.quick)
            nbytes = sum(x.nbytes for x in input_sets[0]) + sum(o.nbytes for o in _as_list(ref))
            for name, fn in modes.items():
                if wanted and name not in wanted:
                    continue
                t0 = time.perf_counter()
                out = fn(*input_sets[0])
                first = time.perf_counter() - t0
                check(out, ref, f"{w.name}/{name}/2^{log2n}")
                s = summarize(time_call(fn, input_sets, min_time=0.1 if args.quick else 0.4,
                                        max_repeats=50 if args.quick else 200))
                gbps = nbytes / s["median_s"] / 1e9
                results.append({"workload": w.name, "log2_size": log2n, "elements": n,
                                "dtype": "float32", "mode": name, "first_call_s": first,
                                "gbps": gbps, "bandwidth_share": gbps / bandwidth, **s})
    progress(total, total, "seed loop")
    seed = seed_loop(args.quick)
    doc = {"schema": SCHEMA, "device": "cpu", "created_unix": time.time(),
           "command": " ".join(["python -m bench"] + sys.argv[1:]),
           "machine": machine_info(), "allocator_env": allocator_env,
           "copy_bandwidth_gbps": bandwidth, "results": results, "seed_loop": seed}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=1))
    (out_dir / "report.md").write_text(render_report(doc))
    plot(doc, out_dir)
    print(render_report(doc))
    return 0


def machine_info() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "processor": platform.processor()}
    try:
        model = [l for l in open("/proc/cpuinfo") if l.startswith("model name")]
        info["cpu_model"] = model[0].split(":", 1)[1].strip() if model else ""
    except OSError:
        pass
    for lib in ("numpy", "numba", "numexpr", "torch", "torchlike"):
        mod = _optional(lib)
        info[f"{lib}_version"] = getattr(mod, "__version__", None) if mod else None
    return info


def geomean(xs: List[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def render_report(doc: dict) -> str:
    rows = doc["results"]
    modes = sorted({r["mode"] for r in rows} - {"torchlike"})
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in rows}
    lines = [f"# torchlike benchmark ({doc['device']})", "",
             f"`{doc['command']}` on {doc['machine'].get('cpu_model', '?')}, "
             f"{doc['machine']['cpu_count']} cores; allocator "
             + " ".join(f"{k}={v}" for k, v in doc["allocator_env"].items())
             + f"; copy bandwidth {doc['copy_bandwidth_gbps']:.1f} GB/s.", "",
             "Speedup of torchlike (fused) over each mode: median time of the mode / median time "
             "of torchlike (above 1 means torchlike is faster). float32.", "",
             "| workload | size | torchlike ms | GB/s (share of copy) | "
             + " | ".join(f"vs {m}" for m in modes) + " |",
             "|---|---|---|---|" + "---|" * len(modes)]
    speedups: Dict[str, List[float]] = {m: [] for m in modes}
    big: Dict[str, List[float]] = {m: [] for m in modes}
    for (wl, size, mode), r in sorted(by_key.items()):
        if mode != "torchlike":
            continue
        cells = []
        for m in modes:
            other = by_key.get((wl, size, m))
            if other is None:
                cells.append("-")
                continue
            s = other["median_s"] / r["median_s"]
            speedups[m].append(s)
            if size >= 22:
                big[m].append(s)
            cells.append(f"{s:.2f}x")
        lines.append(f"| {wl} | 2^{size} | {r['median_s'] * 1e3:.3f} | {r['gbps']:.1f} "
                     f"({100 * r['bandwidth_share']:.0f}%) | " + " | ".join(cells) + " |")
    lines += ["", "Geometric mean speedup of torchlike over each mode:", "",
              "| mode | all sizes | 2^22 and up |", "|---|---|---|"]
    for m in modes:
        lines.append(f"| {m} | {geomean(speedups[m]):.2f}x | {geomean(big[m]):.2f}x |")
    seed = doc.get("seed_loop")
    if seed:
        lines += ["", "Seed: the traced 1000-add loop on a 2x3 float32 input "
                  "(one fused kernel vs 1000 interpreted adds):", "",
                  f"- warm call, fused: {seed['fused']['median_s'] * 1e6:.1f} us (median)",
                  f"- interpreted: {seed['interpreter']['median_s'] * 1e6:.1f} us (median)",
                  f"- speedup: {seed['speedup']:.0f}x; trace {seed['trace_s']:.2f} s, "
                  f"first call (compile) {seed['first_call_s']:.2f} s"]
    return "\n".join(lines) + "\n"


def plot(doc: dict, out_dir: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return
    rows = doc["results"]
    workloads = sorted({r["workload"] for r in rows})
    modes = sorted({r["mode"] for r in rows} - {"torchlike"})
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in rows}
    cols = min(3, len(workloads))
    nrows = math.ceil(len(workloads) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.5 * nrows), squeeze=False)
    for ax, wl in zip(axes.flat, workloads):
        sizes = sorted({r["log2_size"] for r in rows if r["workload"] == wl})
        for m in modes:
            pts = [(s, by_key[(wl, s, m)]["median_s"] / by_key[(wl, s, "torchlike")]["median_s"])
                   for s in sizes if (wl, s, m) in by_key and (wl, s, "torchlike") in by_key]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(wl)
        ax.set_xlabel("log2(elements)")
        ax.set_ylabel("speedup of torchlike")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "speedup.png", dpi=80)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in ["torchlike"] + modes:
        pts = sorted((r["log2_size"], r["bandwidth_share"]) for r in rows if r["mode"] == m)
        if pts:
            sizes = sorted({p[0] for p in pts})
            med = [np.median([p[1] for p in pts if p[0] == s]) for s in sizes]
            ax.plot(sizes, med, marker="o", label=m)
    ax.set_xlabel("log2(elements)")
    ax.set_ylabel("share of copy bandwidth (median over workloads)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "bandwidth.png", dpi=80)
    plt.close(fig)
