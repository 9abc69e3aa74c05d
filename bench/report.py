"""``report.md`` and the plots, rendered from a ``results.json`` document (schema /2).

One section per device run: the speedup of torchlike over each peer per workload and size,
geometric means (all results, and float32 at 2^22..2^24), compile times, modes not run, and
on the CPU the seed loop.  Plots (where matplotlib is installed): ``speedup_<device>.png``
(speedup vs size per workload) and ``bandwidth_<device>.png`` (share of the copy bandwidth).
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

MODE_ORDER = ["interpreter", "numpy", "numexpr", "numba", "torch", "torch.compile", "cupy",
              "cupy.fuse", "cupy.ElementwiseKernel"]
BIG = (22, 24)


def _color(mode: str) -> str:
    """One colour per mode in every panel and plot."""
    names = ["torchlike"] + MODE_ORDER
    return f"C{names.index(mode) % 10}" if mode in names else "black"


def geomean(xs: List[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def peers(run: dict) -> List[str]:
    present = {r["mode"] for r in run["results"]} - {"torchlike"}
    return [m for m in MODE_ORDER if m in present] + sorted(present - set(MODE_ORDER))


def speedups(run: dict) -> Dict[str, List[tuple]]:
    """peer -> [(workload, dtype, log2_size, time of peer / time of torchlike)]."""
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in run["results"]}
    out = defaultdict(list)
    for (wl, size, mode), r in by_key.items():
        mine = by_key.get((wl, size, "torchlike"))
        if mode != "torchlike" and mine is not None:
            out[mode].append((wl, r["dtype"], size, r["median_s"] / mine["median_s"]))
    return out


def _fmt_s(s) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def _header(run: dict) -> List[str]:
    m, bw = run["machine"], run["copy_bandwidth"]
    where = m.get("gpu_name") or m.get("cpu_model") or m.get("processor") or "?"
    libs = ", ".join(f"{k} {v}" for k, v in run["libraries"].items() if v)
    threads = ", ".join(f"{k}={v}" for k, v in m.items() if k.endswith("_threads"))
    alloc = " ".join(f"{k}={v}" for k, v in (run.get("allocator_env") or {}).items())
    return [f"## {run['device'].upper()}: {where}", "",
            f"`{run['command']}`; {m.get('cpu_count')} CPU cores"
            + (f" ({threads})" if threads else "") + f"; {libs}.",
            f"Allocator: {alloc or 'default'}. Copy bandwidth (the roofline): "
            f"{bw['gbps']:.1f} GB/s ({bw['method']}, {bw['bytes'] >> 20} MiB).",
            f"Timing: median of >= {run['timing']['min_repeats']} repeats after warm-up, "
            "p10-p90 shown; small inputs rotated over several copies; every mode checked "
            "against numpy first.  GB/s counts each input and output once; a share above "
            "100% means the working set sits in cache.", ""]


def _table(run: dict) -> List[str]:
    ps = peers(run)
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in run["results"]}
    lines = ["Speedup of torchlike (fused) over each mode: the mode's median time / "
             "torchlike's (above 1: torchlike is faster).", "",
             "| workload | dtype | size | torchlike ms (p10-p90) | GB/s | % of copy | "
             + " | ".join(f"vs {m}" for m in ps) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(ps)]
    order = {}
    for r in run["results"]:
        order.setdefault(r["workload"], len(order))
    mine = sorted((r for r in run["results"] if r["mode"] == "torchlike"),
                  key=lambda r: (order[r["workload"]], r["log2_size"]))
    for r in mine:
        cells = []
        for m in ps:
            other = by_key.get((r["workload"], r["log2_size"], m))
            cells.append(f"{other['median_s'] / r['median_s']:.2f}x" if other else "-")
        lines.append(f"| {r['workload']} | {r['dtype']} | 2^{r['log2_size']} | "
                     f"{r['median_s'] * 1e3:.4g} ({r['p10_s'] * 1e3:.3g}-{r['p90_s'] * 1e3:.3g})"
                     f" | {r['gbps']:.1f} | {100 * r['bandwidth_share']:.0f}% | "
                     + " | ".join(cells) + " |")
    sp = speedups(run)
    lines += ["", f"Geometric mean speedup of torchlike over each mode (float32 band: "
              f"2^{BIG[0]}..2^{BIG[1]}):", "",
              "| mode | all results | n | float32, 2^22-2^24 | n |", "|---|---|---|---|---|"]
    for m in ps:
        allv = [s for *_, s in sp[m]]
        big = [s for _, dt, size, s in sp[m] if dt == "float32" and BIG[0] <= size <= BIG[1]]
        lines.append(f"| {m} | {geomean(allv):.2f}x | {len(allv)} | "
                     + (f"{geomean(big):.2f}x | {len(big)} |" if big else "- | 0 |"))
    return lines


def _compile_table(run: dict) -> List[str]:
    comp = run.get("compile") or {}
    rows = comp.get("rows") or []
    if not rows:
        return []
    lines = ["", f"Compile time at 2^{comp.get('log2_size')} elements, apart from steady "
             "state: capture (script/trace); first call with an empty cache directory (cold: "
             "generate + compile + run); first call in a fresh process reading that cache "
             "(warm from disk); a steady-state call.", "",
             "| workload | capture | cold first call (kernels compiled) | "
             "warm first call (disk hits) | steady call |", "|---|---|---|---|---|"]
    for r in rows:
        if "cold_first_call_s" not in r and "error" in r:
            lines.append(f"| {r['workload']} | error: {r['error']} | | | |")
            continue
        lines.append(
            f"| {r['workload']} | {_fmt_s(r.get('capture_s'))} | "
            f"{_fmt_s(r.get('cold_first_call_s'))} ({r.get('cold_kernels_compiled', '-')}) | "
            f"{_fmt_s(r.get('warm_first_call_s'))} ({r.get('warm_disk_hits', '-')}) | "
            f"{_fmt_s(r.get('cold_steady_s'))} |")
    notes = []
    for label in ("cold", "warm"):
        s = comp.get(f"{label}_process_warmup_s")
        if s is not None:
            notes.append(f"{label} process start-up compile (not charged above): {s:.2f} s")
    if comp.get("warm_error"):
        notes.append(f"warm pass failed: {comp['warm_error']}")
    return lines + ([""] + [f"- {n}" for n in notes] if notes else [])


def _not_run(run: dict) -> List[str]:
    lines = []
    if run.get("failures"):
        lines += ["", "**Failures** (wrong result or error; not timed):", ""]
        lines += [f"- {f['workload']} / {f['mode']} / 2^{f.get('log2_size')}: {f['reason']}"
                  for f in run["failures"]]
    grouped = defaultdict(set)
    for s in run.get("skipped", []):
        grouped[(s["mode"], s["reason"])].add(s["workload"])
    everyone = {r["workload"] for r in run["results"]}
    if grouped:
        lines += ["", "Modes not run:", ""]
        lines += [f"- {mode}: {reason} ("
                  + ("all workloads" if wls >= everyone else ", ".join(sorted(wls))) + ")"
                  for (mode, reason), wls in sorted(grouped.items())]
    return lines


def _seed(run: dict) -> List[str]:
    seed = run.get("seed_loop")
    if not seed:
        return []
    return ["", "Seed: the traced 1000-add loop on a 2x3 float32 input (one fused kernel vs 1000 "
            f"interpreted adds): warm call fused {seed['fused']['median_s'] * 1e6:.1f} us, "
            f"interpreted {seed['interpreter']['median_s'] * 1e6:.1f} us (medians), "
            f"speedup {seed['speedup']:.0f}x; trace {seed['trace_s']:.2f} s, first call "
            f"(compile) {seed['first_call_s']:.2f} s; result {seed['check']}."]


def render_report(doc: dict, out_dir: Path = None) -> str:
    lines = ["# torchlike benchmark", "", f"Schema `{doc['schema']}`; one section per device."]
    for run in doc["runs"]:
        lines += [""] + _header(run) + _table(run) + _compile_table(run) + _not_run(run)
        lines += _seed(run)
        for name in (f"speedup_{run['device']}.png", f"bandwidth_{run['device']}.png"):
            if out_dir is not None and (Path(out_dir) / name).exists():
                lines += ["", f"![{name}]({name})"]
    return "\n".join(lines) + "\n"


def plot(run: dict, out_dir: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return
    rows, dev = run["results"], run["device"]
    if not rows:
        return
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in rows}
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    ps = peers(run)
    cols = min(4, len(workloads))
    nrows = math.ceil(len(workloads) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.5 * cols, 3.2 * nrows), squeeze=False)
    for ax, wl in zip(axes.flat, workloads):
        sizes = sorted({r["log2_size"] for r in rows if r["workload"] == wl})
        for m in ps:
            pts = [(s, by_key[(wl, s, m)]["median_s"] / by_key[(wl, s, "torchlike")]["median_s"])
                   for s in sizes if (wl, s, m) in by_key and (wl, s, "torchlike") in by_key]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=m,
                        color=_color(m))
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(wl, fontsize=9)
        ax.set_xlabel("log2(elements)", fontsize=8)
        ax.set_ylabel("speedup of torchlike", fontsize=8)
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], color=_color(m), marker="o", ms=3, label=m) for m in ps]
    fig.legend(handles=handles, loc="lower center", ncol=len(ps), fontsize=8)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(Path(out_dir) / f"speedup_{dev}.png", dpi=70)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for m in ["torchlike"] + ps:
        pts = [(r["log2_size"], r["bandwidth_share"]) for r in rows if r["mode"] == m]
        if pts:
            sizes = sorted({p[0] for p in pts})
            med = [sorted(v for s2, v in pts if s2 == s)[len([1 for s2, _ in pts if s2 == s]) // 2]
                   for s in sizes]
            ax.plot(sizes, [100 * v for v in med], marker="o", ms=3, label=m, color=_color(m))
    ax.set_xlabel("log2(elements)")
    ax.axhline(100, color="gray", lw=0.8)
    ax.set_ylabel("% of copy bandwidth (median over workloads)")
    ax.set_title(f"effective bandwidth, {dev}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(Path(out_dir) / f"bandwidth_{dev}.png", dpi=80)
    plt.close(fig)
