"""``report.md`` and the plots, rendered from a ``results.json`` document (schema /3).

One section per device run: the machine and its measured copy bandwidth (one thread and all
cores; the floor); every mode's median time per workload and size beside the floor time for
that workload's bytes and the ratio time / floor; the speedup of torchlike over each peer;
geometric means and the headline (torchlike vs the faster of torch.compile and jax at the
largest sizes); compile times (torchlike's, and the peers' first calls); failures, modes not
run and the corpus cases left out; on the CPU the seed loop.  Plots (where matplotlib is
installed): ``speedup_<device>.png`` and ``bandwidth_<device>.png`` (share of the floor).
"""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional

MODE_ORDER = ["interpreter", "numpy", "numexpr", "numba", "torch", "torch.compile", "jax",
              "cupy", "cupy.fuse", "cupy.ElementwiseKernel"]
BIG = (22, 24)
COMPILED_PEERS = ("torch.compile", "jax")     # the headline compares with the faster of these


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


def headline_sizes(run: dict) -> List[int]:
    """The sizes the headline uses: 2^22 and up where the run has them, else its largest."""
    sizes = sorted(set(run.get("sizes") or [r["log2_size"] for r in run["results"]]))
    return [s for s in sizes if s >= BIG[0]] or sizes[-1:]


def headline(run: dict) -> dict:
    """torchlike vs the faster of torch.compile and jax, per (workload, size) at
    ``headline_sizes``: ``geomean`` of (faster peer's median / torchlike's), ``n``, ``rows``
    (workload, size, peer, speedup), ``sizes``, and the same against each peer alone."""
    sizes = headline_sizes(run)
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in run["results"]}
    rows, alone = [], defaultdict(list)
    for (wl, size, mode), mine in sorted(by_key.items()):
        if mode != "torchlike" or size not in sizes:
            continue
        times = {p: by_key[(wl, size, p)]["median_s"] for p in COMPILED_PEERS
                 if (wl, size, p) in by_key}
        for p, t in times.items():
            alone[p].append(t / mine["median_s"])
        if times:
            best = min(times, key=times.get)
            rows.append((wl, size, best, times[best] / mine["median_s"]))
    return {"sizes": sizes, "geomean": geomean([r[3] for r in rows]), "n": len(rows),
            "rows": rows, "alone": {p: (geomean(v), len(v)) for p, v in alone.items()}}


def _fmt_s(s) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def _fmt_t(s: float) -> str:
    """A time in ms with 3-4 significant digits."""
    return f"{s * 1e3:.4g}"


def _bandwidth_line(bw: dict) -> str:
    line = f"Copy floor: **{bw['gbps']:.1f} GB/s** ({bw['method']}, {bw['bytes'] >> 20} MiB)"
    if "single_thread_gbps" in bw:
        line += (f"; measured copy bandwidth: one thread {bw['single_thread_gbps']:.1f} GB/s, "
                 f"all {bw.get('cores', '?')} cores {bw['all_core_gbps']:.1f} GB/s")
        others = [f"{k}: {v:.1f}" for k, v in (bw.get("rates") or {}).items()]
        if others:
            line += " (" + "; ".join(others) + ")"
    return line + "."


def _header(run: dict) -> List[str]:
    m, bw = run["machine"], run["copy_bandwidth"]
    where = m.get("gpu_name") or m.get("cpu_model") or m.get("processor") or "?"
    libs = ", ".join(f"{k} {v}" for k, v in run["libraries"].items() if v)
    threads = ", ".join(f"{k}={v}" for k, v in m.items()
                        if k.endswith("_threads") or k == "numba_threading_layer")
    env = " ".join(f"{k}={v}" for k, v in (m.get("thread_env") or {}).items())
    alloc = " ".join(f"{k}={v}" for k, v in (run.get("allocator_env") or {}).items())
    return [f"## {run['device'].upper()}: {where}", "",
            f"Machine: {m.get('cpu_model') or m.get('processor') or '?'}, "
            f"{m.get('cpu_count')} CPU cores" + (f" ({threads})" if threads else "")
            + (f"; GPU {m['gpu_name']}" if m.get("gpu_name") else "")
            + f"; thread environment: {env or 'none set'}.",
            f"`{run['command']}`; {libs}.", "",
            _bandwidth_line(bw), "",
            f"Allocator: {alloc or 'default'}. Timing ({run['timing'].get('clock', 'wall')}): "
            f"median of >= {run['timing']['min_repeats']} repeats after warm-up, p10-p90 shown; "
            "small inputs "
            "rotated over several copies; every mode checked against the reference first "
            "(numpy; for corpus graphs the interpreter).  Bytes count each input and output "
            "once; the floor time is those bytes at the copy floor, and time / floor below 1 "
            "means the working set sits in cache.  torch.compile and jax: a fresh compile per "
            "workload and size, timed after it; jax runs in its own process per workload.", ""]


def _times_table(run: dict) -> List[str]:
    modes = ["torchlike"] + peers(run)
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in run["results"]}
    keys = sorted({(r["workload"], r["log2_size"]) for r in run["results"]},
                  key=lambda k: (_order(run)[k[0]], k[1]))
    lines = ["### Times beside the copy floor", "",
             "Median ms of each mode, with its time / floor in parentheses (floor: the "
             "workload's bytes at the copy floor).", "",
             "| workload | dtype | size | MiB | floor ms | " + " | ".join(modes) + " |",
             "|---|---|---|---|---|" + "---|" * len(modes)]
    for wl, size in keys:
        any_r = next(by_key[(wl, size, m)] for m in modes if (wl, size, m) in by_key)
        cells = []
        for m in modes:
            r = by_key.get((wl, size, m))
            cells.append(f"{_fmt_t(r['median_s'])} ({r['floor_ratio']:.3g}x)" if r else "-")
        lines.append(f"| {wl} | {any_r['dtype']} | 2^{size} | {any_r['bytes'] / 2**20:.3g} | "
                     f"{_fmt_t(any_r['floor_s'])} | " + " | ".join(cells) + " |")
    return lines


def _order(run: dict) -> Dict[str, int]:
    order: Dict[str, int] = {}
    for r in run["results"]:
        order.setdefault(r["workload"], len(order))
    return order


def _table(run: dict) -> List[str]:
    ps = peers(run)
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r for r in run["results"]}
    lines = ["", "### Speedup of torchlike", "",
             "Each mode's median time / torchlike's (above 1: torchlike is faster).", "",
             "| workload | dtype | size | torchlike ms (p10-p90) | GB/s | x floor | "
             + " | ".join(f"vs {m}" for m in ps) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(ps)]
    order = _order(run)
    mine = sorted((r for r in run["results"] if r["mode"] == "torchlike"),
                  key=lambda r: (order[r["workload"]], r["log2_size"]))
    for r in mine:
        cells = []
        for m in ps:
            other = by_key.get((r["workload"], r["log2_size"], m))
            cells.append(f"{other['median_s'] / r['median_s']:.2f}x" if other else "-")
        lines.append(f"| {r['workload']} | {r['dtype']} | 2^{r['log2_size']} | "
                     f"{_fmt_t(r['median_s'])} ({r['p10_s'] * 1e3:.3g}-{r['p90_s'] * 1e3:.3g})"
                     f" | {r['gbps']:.1f} | {r['floor_ratio']:.2f} | " + " | ".join(cells) + " |")
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


def _headline_lines(run: dict) -> List[str]:
    h = headline(run)
    where = ", ".join(f"2^{s}" for s in h["sizes"])
    if not h["n"]:
        return [f"**Headline**: no workload has torchlike and torch.compile or jax at {where}."]
    alone = "; ".join(f"vs {p} alone {g:.2f}x (n={n})" for p, (g, n) in sorted(h["alone"].items()))
    wins = sum(1 for *_, s in h["rows"] if s > 1)
    return [f"**Headline**: torchlike vs the faster of torch.compile and jax at {where}: "
            f"geometric mean **{h['geomean']:.2f}x** over {h['n']} workload-sizes (torchlike "
            f"faster in {wins}); {alone}.  Above 1: torchlike is faster."]


def _compile_table(run: dict) -> List[str]:
    comp = run.get("compile") or {}
    rows = comp.get("rows") or []
    if not rows:
        return []
    lines = ["", "### Compile times", "",
             f"torchlike at 2^{comp.get('log2_size')} elements, apart from steady "
             "state: capture (script/trace/parse); first call with an empty cache directory "
             "(cold: generate + compile + run); first call in a fresh process reading that cache "
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
    return lines + ([""] + [f"- {n}" for n in notes] if notes else []) + _peer_compile(run)


def _peer_compile(run: dict) -> List[str]:
    """The compiling peers' first calls (trace + compile + one run), per workload and size."""
    rows = [r for r in run["results"] if r.get("compile_s") is not None]
    if not rows:
        return []
    modes = [m for m in MODE_ORDER if any(r["mode"] == m for r in rows)]
    sizes = sorted({r["log2_size"] for r in rows})
    by_key = {(r["workload"], r["log2_size"], r["mode"]): r["compile_s"] for r in rows}
    order = _order(run)
    lines = ["", "Peers' compile time: the first call of each fresh compile (trace + compile + "
             "one run; torch.compile with an empty Inductor cache), "
             + " / ".join(modes) + " per size.", "",
             "| workload | " + " | ".join(f"2^{s}" for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for wl in sorted({r["workload"] for r in rows}, key=lambda w: order[w]):
        cells = [" / ".join(_fmt_s(by_key.get((wl, s, m))) for m in modes) for s in sizes]
        lines.append(f"| {wl} | " + " | ".join(cells) + " |")
    return lines


def _not_run(run: dict) -> List[str]:
    lines = []
    if run.get("failures"):
        lines += ["", "**Failures** of torchlike or the interpreter (wrong result or error; not "
                  "timed):", ""]
        lines += [f"- {f['workload']} / {f['mode']} / 2^{f.get('log2_size')}: {f['reason']}"
                  for f in run["failures"]]
    if run.get("peer_failures"):
        lines += ["", "**Peers that failed** (raised, gave a wrong result, or did not compile "
                  "cleanly; not timed):", ""]
        lines += [f"- {f['workload']} / {f['mode']} / 2^{f.get('log2_size')}: {f['reason']}"
                  for f in run["peer_failures"]]
    grouped = defaultdict(set)
    for s in run.get("skipped", []):
        grouped[(s["mode"], s["reason"])].add(s["workload"])
    everyone = {r["workload"] for r in run["results"]}
    if grouped:
        lines += ["", "Modes not run:", ""]
        lines += [f"- {mode}: {reason} ("
                  + ("all workloads" if wls >= everyone else ", ".join(sorted(wls))) + ")"
                  for (mode, reason), wls in sorted(grouped.items())]
    excluded = (run.get("corpus") or {}).get("excluded")
    if excluded:
        lines += ["", f"Corpus cases that are not workloads ({run['corpus'].get('dir')}):", ""]
        lines += [f"- {e['case']}: {e['reason']}" for e in excluded]
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


def render_report(doc: dict, out_dir: Optional[Path] = None) -> str:
    lines = ["# torchlike benchmark", "", f"Schema `{doc['schema']}`; one section per device."]
    for run in doc["runs"]:
        lines += [""] + _header(run)
        if run["results"]:
            lines += _headline_lines(run) + [""] + _times_table(run) + _table(run)
        lines += _compile_table(run) + _not_run(run) + _seed(run)
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
    if handles:            # a run of torchlike alone has no peer to draw
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8)
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
    ax.set_ylabel("% of the copy floor (median over workloads)")
    ax.set_title(f"effective bandwidth, {dev}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(Path(out_dir) / f"bandwidth_{dev}.png", dpi=80)
    plt.close(fig)
