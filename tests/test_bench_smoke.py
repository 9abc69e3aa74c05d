"""Smoke tests of the benchmark harness (``python -m bench``): it runs, its output parses with
the documented schema, and every workload's peers compute what torchlike computes (JAX's in a
subprocess); torch.compile is checked to have really compiled.  No timing is asserted."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # runs the benchmark harness, torch.compile and JAX: `-m "not slow"` skips it

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_quick_run_writes_results_report_and_plots(tmp_path):
    """scale_shift and its corpus twin (the PyTorch-printed graph), at 2^10."""
    out = tmp_path / "out"
    done = _bench("--quick", "--out", str(out), "--filter", "scale_shift", "--sizes", "10")
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema"] == "torchlike.bench/3"
    (run,) = doc["runs"]
    assert run["device"] == "cpu" and run["sizes"] == [10]
    assert run["allocator_env"]["MALLOC_MMAP_MAX_"] == "0"
    assert run["failures"] == [] and run["peer_failures"] == []
    bw = run["copy_bandwidth"]
    assert bw["gbps"] == max(bw["rates"].values()) > 0
    assert bw["single_thread_gbps"] > 0 and bw["all_core_gbps"] > 0
    expected = {"torchlike", "interpreter", "numpy"}
    for lib, mode in (("numexpr", "numexpr"), ("numba", "numba"), ("torch", "torch")):
        if run["libraries"][lib]:
            expected.add(mode)
    assert expected <= set(run["modes"])
    assert "torch.compile" not in run["modes"] and "jax" not in run["modes"]   # --quick
    assert {r["workload"] for r in run["results"]} == {"scale_shift", "corpus:scale_shift"}
    corpus_modes = {r["mode"] for r in run["results"] if r["workload"] == "corpus:scale_shift"}
    assert {"torchlike", "interpreter"} <= corpus_modes and "numpy" not in corpus_modes
    for r in run["results"]:
        assert r["log2_size"] == 10
        assert 0 < r["p10_s"] <= r["median_s"] <= r["p90_s"]
        if r["workload"] == "scale_shift":
            assert r["bytes"] == 2 * r["elements"] * 4    # float32 in, float32 out
        assert r["gbps"] == pytest.approx(r["bytes"] / r["median_s"] / 1e9)
        assert r["floor_s"] == pytest.approx(r["bytes"] / (bw["gbps"] * 1e9))
        assert r["floor_ratio"] == pytest.approx(r["median_s"] / r["floor_s"])
    rows = {row["workload"]: row for row in run["compile"]["rows"]}
    row = rows["scale_shift"]
    assert row["cold_kernels_compiled"] >= 1              # an empty cache directory: compiled
    assert row["warm_kernels_compiled"] == 0 and row["warm_disk_hits"] >= 1   # fresh process
    assert "error" not in rows["corpus:scale_shift"]
    assert any(e["case"] == "mycell" for e in run["corpus"]["excluded"])   # a matmul: left out
    assert run["seed_loop"]["check"] == "ok"
    report = (out / "report.md").read_text()
    assert "| scale_shift | float32 | 2^10 |" in report and "vs numpy" in report
    assert "Copy floor:" in report and "floor ms" in report and "**Headline**" in report
    assert "Seed: the traced 1000-add loop" in report
    if run["libraries"]["matplotlib"]:
        assert list(out.glob("*.png"))


def test_cuda_without_a_gpu_exits_cleanly(tmp_path):
    from bench.cuda import unavailable_reason
    if unavailable_reason() is None:
        pytest.skip("a GPU is present")
    done = _bench("--device", "cuda", "--quick", "--out", str(tmp_path / "gpu"), timeout=60)
    assert done.returncode == 2
    assert "--device cuda" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "gpu" / "results.json").exists()


@pytest.mark.parametrize("suite", ["elementwise", "reductions"])
def test_every_workload_and_peer_agrees_with_numpy(suite):
    """What the harness checks before timing, at 2^6 elements (2^15 for the reductions: one
    whole row of 32768): torchlike, the interpreter and every in-process peer give the
    reference's answer (dtype, shape, values) for every CPU workload, the corpus graphs included
    (their reference is the interpreter), and each reduction workload is one fused kernel."""
    from bench import common
    from bench.cpu import CpuDevice
    from bench.workloads import select
    from torchlike import jit
    dev = CpuDevice()
    rng = np.random.default_rng(3)
    seen = set()
    workloads = select("", "cpu", suite)
    if suite == "elementwise":
        assert any(w.name.startswith("corpus:") for w in workloads)
    else:
        assert len(workloads) == 29 and all("reduction" in w.tags for w in workloads)
    for w in workloads:
        xs = w.make_inputs(1 << (6 if suite == "elementwise" else 15), rng)
        if suite == "reductions":
            graph = jit.script(w.fn).graph_for(*xs)
            kinds = [n.kind for n in graph.nodes]
            assert kinds.count("prim::FusionGroup") == 1, (w.name, str(graph))
        ref = common.reference(w, xs)
        modes, why_not = dev.modes(w, xs, quick=True, wanted=set(), cache={}, log2n=6)
        assert {"torchlike", "interpreter"} <= set(modes), w.name
        assert ("numpy" in modes) == (w.ref_kind == "numpy"), w.name
        for mode, fn in modes.items():
            assert common.check(fn(*xs), ref) is None, (w.name, mode, common.check(fn(*xs), ref))
            seen.add(mode)
    if common.optional("numba") is not None and suite == "elementwise":
        assert "numba" in seen  # (no hand-written Numba kernel for the reductions)


def test_corpus_inputs_scale_keeping_broadcasts_and_ratios():
    from bench.corpus import scaled_inputs
    gates, c = scaled_inputs((np.ones((4, 64), np.float32), np.ones((4, 16), np.float32)), 1 << 16)
    assert gates.shape[1] == 4 * c.shape[1] and gates.shape[0] == c.shape[0]
    assert 0.5 < gates.size / (1 << 16) < 2 and gates.dtype == np.float32
    a, b, v = scaled_inputs((np.ones((6, 1)), np.ones((1, 5)), np.ones(5)), 1 << 12)
    assert a.shape[1] == 1 and b.shape[0] == 1 and v.shape == (b.shape[1],)
    assert 0.5 < a.shape[0] * b.shape[1] / (1 << 12) < 2
    x, s = scaled_inputs((np.arange(12.0).reshape(3, 4), np.ones(1)), 1 << 10)
    assert s.shape == (1,) and (x[:3, :4] == np.arange(12.0).reshape(3, 4)).all()


needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="jax is not installed")


@needs_jax
def test_jax_versions_agree_with_the_reference():
    """Every workload's JAX version at 2^6 (one subprocess), but for XLA's known differences."""
    from bench.jax_peer import KNOWN_DIFFERENCES
    done = subprocess.run([sys.executable, "-m", "bench.jax_peer", "--check", "all"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(rows) >= 20
    bad = {r["workload"]: r.get("wrong") or r.get("error") for r in rows
           if (r.get("wrong") or r.get("error")) and r["workload"] not in KNOWN_DIFFERENCES}
    assert bad == {}


@needs_jax
def test_jax_peer_times_in_a_subprocess():
    """The harness's JAX path: one process per workload, all sizes, rows as the loop reads
    them; an int64 corpus graph turns on x64 there."""
    from bench.cpu import run_jax_peer
    from bench.timing import QUICK
    for name in ("scale_shift", "corpus:int64_floordiv_remainder"):
        rows = run_jax_peer(name, [6, 8], QUICK)
        assert [r["log2_size"] for r in rows] == [6, 8], rows
        for r in rows:
            assert r["mode"] == "jax" and "stats" in r, r
            st = r["stats"]
            assert 0 < st["p10_s"] <= st["median_s"] <= st["p90_s"]
            assert st["compile_s"] == st["first_call_s"] > 0 and st["bytes"] > 0


def test_torch_compile_counters_are_read_strictly():
    from bench.torch_compile import counters_problem
    clean = {"frames": {"total": 1, "ok": 1}, "stats": {"calls_captured": 3, "unique_graphs": 1},
             "aot_autograd": {"total": 1, "ok": 1}, "inductor": {"fxgraph_cache_miss": 1}}
    assert counters_problem(clean) is None
    broke = dict(clean, graph_break={"Failed to trace builtin operator print": 1},
                 stats={"calls_captured": 2, "unique_graphs": 2})
    assert "graph break" in counters_problem(broke)
    # What torch 2.13 records when a shared function hits the recompile limit (8) and runs eagerly
    limit = dict(clean, frames={"total": 9, "ok": 8},
                 unimplemented={"Dynamo recompile limit exceeded": 1})
    assert "not compiled" in counters_problem(limit) and "gave up" in counters_problem(limit)
    assert "Inductor" in counters_problem({k: v for k, v in clean.items() if k != "inductor"})


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_compile_mode_really_compiles(torch):  # the fixture skips it without torch
    """One tiny workload through the harness's torch.compile mode: a fresh function per
    workload and size, compiled by Inductor, checked by dynamo's counters."""
    from bench import common
    from bench.cpu import CpuDevice
    from bench.workloads import by_name
    w = by_name("scale_shift")
    xs = w.make_inputs(1 << 6, np.random.default_rng(0))
    modes, _ = CpuDevice().modes(w, xs, quick=False, wanted={"torch.compile"}, cache={},
                                 log2n=6)
    fn = modes["torch.compile"]
    assert common.check(fn(*xs), common.reference(w, xs)) is None
    assert fn.problem() is None
    fn(*xs)
    assert fn.recheck() is None
    fn.release()


def test_modes_are_timed_interleaved():
    """The CPU harness samples every mode in rounds (bench/timing.py), so a burst of load on
    the VM lands on all modes of a workload alike; a slow mode does not starve the others."""
    from bench.timing import TimingPolicy, time_interleaved
    calls = []
    policy = TimingPolicy(min_time_s=0.02, min_repeats=4, max_repeats=50, max_time_s=1.0)
    fns = {"a": lambda x: calls.append("a"), "b": lambda x: calls.append("b")}
    samples = time_interleaved(fns, [(1,), (2,)], policy)
    assert set(samples) == {"a", "b"}
    assert all(len(s) >= policy.min_repeats and min(s) > 0 for s in samples.values())
    timed = calls[2:]                      # after one warm-up call each
    switches = sum(1 for u, v in zip(timed, timed[1:]) if u != v)
    assert switches >= 2 * policy.min_repeats - 1, "modes were timed one after the other"
