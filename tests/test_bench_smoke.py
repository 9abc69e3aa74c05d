"""Smoke tests of the benchmark harness (``python -m bench``): it runs, its output parses with
the documented schema, and every workload's peers compute what torchlike computes.  No timing
is asserted."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_quick_run_writes_results_report_and_plots(tmp_path):
    out = tmp_path / "out"
    done = _bench("--quick", "--out", str(out), "--filter", "scale_shift", "--sizes", "10")
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema"] == "torchlike.bench/2"
    (run,) = doc["runs"]
    assert run["device"] == "cpu" and run["sizes"] == [10]
    assert run["allocator_env"]["MALLOC_MMAP_MAX_"] == "0"
    assert run["failures"] == []
    expected = {"torchlike", "interpreter", "numpy"}
    for lib, mode in (("numexpr", "numexpr"), ("numba", "numba"), ("torch", "torch")):
        if run["libraries"][lib]:
            expected.add(mode)
    assert expected <= set(run["modes"])
    for r in run["results"]:
        assert r["workload"] == "scale_shift" and r["log2_size"] == 10
        assert 0 < r["p10_s"] <= r["median_s"] <= r["p90_s"]
        assert r["bytes"] == 2 * r["elements"] * 4        # float32 in, float32 out
        assert r["gbps"] == pytest.approx(r["bytes"] / r["median_s"] / 1e9)
    (row,) = run["compile"]["rows"]
    assert row["workload"] == "scale_shift"
    assert row["cold_kernels_compiled"] >= 1              # an empty cache directory: compiled
    assert row["warm_kernels_compiled"] == 0 and row["warm_disk_hits"] >= 1   # fresh process
    assert run["seed_loop"]["check"] == "ok"
    report = (out / "report.md").read_text()
    assert "| scale_shift | float32 | 2^10 |" in report and "vs numpy" in report
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


def test_every_workload_and_peer_agrees_with_numpy():
    """What the harness checks before timing, at 2^6 elements: torchlike, the interpreter and
    every peer give numpy's answer (dtype, shape, values) for every CPU workload."""
    from bench import common
    from bench.cpu import CpuDevice
    from bench.workloads import select
    dev = CpuDevice()
    rng = np.random.default_rng(3)
    seen = set()
    for w in select("", "cpu"):
        xs = w.make_inputs(1 << 6, rng)
        ref = common.reference(w, xs)
        modes, why_not = dev.modes(w, xs, quick=True, wanted=set(), cache={})
        assert {"torchlike", "interpreter", "numpy"} <= set(modes), w.name
        for mode, fn in modes.items():
            assert common.check(fn(*xs), ref) is None, (w.name, mode, common.check(fn(*xs), ref))
            seen.add(mode)
    if common.optional("numba") is not None:
        assert "numba" in seen
