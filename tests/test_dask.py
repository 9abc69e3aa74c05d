"""torchlike.dask: fused graphs over Dask arrays, one task per chunk.

Every result is checked against the same graph run on the whole numpy arrays (the interpreter,
or PyTorch's own answers from the corpus); compiled-path tests run in strict mode (a fallback
raises) and read the fuser's counters.  The threaded scheduler runs most tests in this process;
``dask.distributed`` tests start a two-process ``LocalCluster``.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask (the torchlike[dask] extra) is not installed")
import dask  # noqa: E402
from corpus_utils import (  # noqa: E402
    CASES,
    assert_matches,
    flatten_outputs,
    graph_text,
    input_sets,
)
from differential import fuser_settings, use_emulator_as_cuda  # noqa: E402
from readme_blocks import run_readme_block  # noqa: E402

import torchlike as tl  # noqa: E402
import torchlike.dask as tld  # noqa: E402
from torchlike import jit  # noqa: E402
from torchlike.errors import IntegerDivisionByZeroError  # noqa: E402
from torchlike.interpreter import run as interpret  # noqa: E402
from torchlike.ir import parse_graph  # noqa: E402

THREADS = {"scheduler": "threads"}


def _tasks(arr) -> int:
    """How many tasks of ``arr``'s graph run torchlike's chunk function."""
    from torchlike.dask.tasks import run_block
    count = 0
    for task in dict(arr.__dask_graph__()).values():
        func = getattr(task, "func", None) or (task[0] if isinstance(task, tuple) else None)
        count += func is run_block
    return count


def act(x, w, b):
    return tl.tanh(x * w + b) * tl.sigmoid(x)


def rows(x, w):
    y = x * w
    return tl.softmax(y, -1), y.sum(-1), tl.amax(y, -1, keepdim=True)


def by_size(x):
    return x / x.shape[0]


def divide(x, y):
    return (x + 1) // y


def mlp(x, w, b):
    return tl.relu(tl.matmul(x, w) + b)


@pytest.fixture
def strict():
    with fuser_settings("cpu", strict=True):
        jit.reset_stats()
        yield


def test_elementwise_broadcast_chunks_and_counts(strict):
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((300, 70)).astype(np.float32)
    x = da.from_array(xn, chunks=(64, 32))
    w = da.from_array(rng.standard_normal(70).astype(np.float32), chunks=20)  # other chunks
    b = np.float32(0.5) * np.ones((300, 1), np.float32)                       # numpy column
    fn = jit.script(act)
    y = tld.run(fn, x, w, b)
    # lazy: shape, dtype and chunks known; the chunks are the common refinement along dim 1
    assert y.shape == (300, 70) and y.dtype == np.float32
    assert y.chunks[0] == x.chunks[0]
    assert y.chunks[1] == (20, 12, 8, 20, 4, 6)
    assert _tasks(y) == len(y.chunks[0]) * len(y.chunks[1])
    got = y.compute(**THREADS)
    want = fn(xn, w.compute(), b)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # strict mode: a fallback would have raised; each chunk signature fetched its kernel
    s = jit.stats()
    signatures = {(r, c) for r in y.chunks[0] for c in y.chunks[1]}
    assert s["fallbacks"] == {} and s["cache_hits"] + s["cache_misses"] >= len(signatures)


def test_row_reductions_rechunk_along_the_row_only(strict):
    rng = np.random.default_rng(1)
    xn = rng.standard_normal((256, 96)).astype(np.float32)
    wn = rng.standard_normal(96).astype(np.float32)
    x = da.from_array(xn, chunks=(50, 40))
    fn = jit.script(rows)
    p = tld.plan(fn, x, wn)
    assert [c.whole for c in p.classes] == [False, True]
    assert "aten::sum" in p.classes[1].why or "softmax" in p.classes[1].why
    soft, total, peak = tld.run(fn, x, wn)
    assert soft.chunks == (x.chunks[0], (96,))
    assert total.chunks == (x.chunks[0],) and peak.chunks == (x.chunks[0], (1,))
    assert _tasks(soft) == len(x.chunks[0])
    got = dask.compute(soft, total, peak, **THREADS)
    for g, w in zip(got, fn(xn, wn)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert jit.stats()["fallbacks"] == {}


def test_nothing_runs_until_computed():
    def boom(block):
        raise AssertionError("computed")

    x = da.ones((40, 8), chunks=(10, 8), dtype=np.float32).map_blocks(boom, dtype=np.float32)
    y = tld.run(jit.script(act), x, np.ones(8, np.float32), np.float32(1.0))
    assert (y.shape, y.dtype, y.chunks) == ((40, 8), np.float32, ((10,) * 4, (8,)))


def test_a_size_query_keeps_its_dim_whole():
    xn = np.arange(60, dtype=np.float64).reshape(12, 5)
    x = da.from_array(xn, chunks=(4, 5))
    fn = jit.script(by_size)
    p = tld.plan(fn, x)
    assert p.classes[0].whole and "aten::size" in p.classes[0].why
    y = tld.run(fn, x)
    assert y.chunks == ((12,), (5,))
    np.testing.assert_array_equal(y.compute(**THREADS), xn / 12)


def test_a_matmul_cuts_rows_and_keeps_the_weight_whole(strict):
    rng = np.random.default_rng(2)
    xn = rng.standard_normal((120, 16)).astype(np.float32)
    wn = rng.standard_normal((16, 8)).astype(np.float32)
    bn = rng.standard_normal(8).astype(np.float32)
    x = da.from_array(xn, chunks=(30, 4))
    fn = jit.script(mlp)
    y = tld.run(fn, x, wn, bn)
    assert y.chunks == ((30,) * 4, (8,))
    np.testing.assert_allclose(y.compute(**THREADS), fn(xn, wn, bn), rtol=1e-5, atol=1e-6)


def test_an_unknown_op_sees_whole_tensors_and_says_so():
    g = parse_graph("""graph(%x : Tensor):
  %1 : Tensor = aten::t(%x)
  %2 : Tensor = aten::exp(%1)
  return (%2)""")
    xn = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = da.from_array(xn, chunks=(1, 2))
    p = tld.plan(g, x)
    assert all(c.whole for c in p.classes) and any("aten::t" in n for n in p.notes)
    with pytest.warns(tld.DaskPlanWarning, match="one chunk: aten::t"):
        y = tld.run(g, x)
    np.testing.assert_allclose(y.compute(**THREADS), np.exp(xn.T), rtol=1e-6)


def test_script_function_called_with_dask_arrays(strict):
    xn = np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)
    fn = jit.trace(lambda x: tl.tanh(x * 2.0 + 1.0) * x, (xn,))
    y = fn(da.from_array(xn, chunks=4))
    assert isinstance(y, da.Array) and y.chunks == ((4, 4), (4, 4))
    np.testing.assert_allclose(y.compute(**THREADS), fn(xn), rtol=1e-6)


def test_integer_division_by_zero_names_the_node():
    x = da.arange(0, 40, chunks=10, dtype=np.int64)
    yn = np.ones(40, np.int64)
    yn[33] = 0
    y = tld.run(jit.script(divide), x, da.from_array(yn, chunks=10))
    with pytest.raises(IntegerDivisionByZeroError, match="aten::floor_divide"):
        y.compute(**THREADS)


def test_bad_calls_raise_typed_errors():
    fn = jit.script(act)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        tld.run(fn, da.ones(3))
    g = parse_graph("""graph(%x : Tensor):
  %1 : int = aten::dim(%x)
  return (%1)""")
    with pytest.raises(tld.DaskPlanError, match="not a tensor"):
        tld.run(g, da.ones(3))
    with pytest.raises(TypeError, match="ScriptFunction"):
        tld.run(act, da.ones(3))
    with pytest.raises(TypeError, match="'b' .* expects a Tensor"):
        tld.run(fn, da.ones(3), da.ones(3), 1.0)


def test_cuda_kernels_run_per_chunk_through_the_emulator():
    xn = np.linspace(-4, 4, 2 * 96, dtype=np.float32).reshape(2 * 8, 12)
    wn = np.linspace(0, 1, 12, dtype=np.float32)
    fn = jit.script(rows)
    want = fn(xn, wn)
    with use_emulator_as_cuda(strict=True):
        jit.reset_stats()
        got = dask.compute(*tld.run(fn, da.from_array(xn, chunks=(4, 12)), wn), **THREADS)
        s = jit.stats()
    assert s["fallbacks"] == {} and s["cache_hits"] + s["cache_misses"] >= 1
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# -- the corpus: every graph PyTorch printed, its tensor inputs cut in two along every dim ----

CORPUS = [(case, which) for case in CASES for which in ("traced", "scripted")
          if case != "mycell_module" and
          (__import__("corpus_utils").CORPUS / case / f"{which}.txt").exists()]


def _cut(a):
    if isinstance(a, np.ndarray) and a.ndim and a.size:
        return da.from_array(np.ascontiguousarray(a), chunks=tuple(max(1, (d + 1) // 2)
                                                                   for d in a.shape))
    return a


@pytest.mark.parametrize("case,which", CORPUS)
def test_corpus_graphs_over_dask_reproduce_pytorch(case, which):
    graph = parse_graph(graph_text(case, which))
    for label, args, expected in input_sets(case):
        if which == "traced" and label != "inputs":
            continue  # a trace holds the branch its example took
        result = tld.run(graph, *map(_cut, args))
        outputs = flatten_outputs(dask.compute(result, **THREADS)[0])
        want = flatten_outputs(interpret(graph, *args))
        assert len(outputs) == len(expected) == len(want)
        for i, actual in enumerate(outputs):
            assert_matches(actual, expected[f"out{i}"], f"dask {case}/{which}/{label}/out{i}")


# -- dask.distributed: worker processes --------------------------------------------------------

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    distributed = pytest.importorskip("distributed", reason="distributed is not installed")
    cache = tmp_path_factory.mktemp("cache")
    saved = {k: os.environ.get(k) for k in ("TORCHLIKE_CACHE_DIR", "TORCHLIKE_DEBUG")}
    os.environ.update(TORCHLIKE_CACHE_DIR=str(cache), TORCHLIKE_DEBUG="1")  # the workers'
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as lc, \
                distributed.Client(lc) as client:
            yield client, cache
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


LOGGED: list = []


def _collect_torchlike_log() -> None:
    """On a worker: keep what the torchlike logger says (it also goes to the worker's
    stderr at TORCHLIKE_DEBUG=1) where ``client.run`` can read it."""
    import logging

    class Keep(logging.Handler):
        def emit(self, record):
            LOGGED.append(record.getMessage())

    logging.getLogger("torchlike").addHandler(Keep())


def _logged() -> list:
    return list(LOGGED)


def test_distributed_workers_compile_once_and_log_it(cluster, tmp_path):
    client, cache = cluster
    client.run(_collect_torchlike_log)
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((4000, 64)).astype(np.float32)
    fn = jit.script(rows)
    before = set(os.listdir(os.getcwd()))
    got = client.compute(list(tld.run(fn, da.from_array(xn, chunks=(500, 64)),
                                      np.ones(64, np.float32))), sync=True)
    for g, w in zip(got, fn(xn, np.ones(64, np.float32))):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    logs = [line for lines in client.run(_logged).values() for line in lines]
    assert any("first task of graph" in line for line in logs)
    specialized = [line for line in logs if "specialized on worker" in line]
    assert specialized and all("float32[500, 64]" in line for line in specialized)
    assert len(specialized) <= 2  # once per worker and signature, not once per task
    assert any(files for _, _, files in os.walk(cache))  # kernels in the shared cache ...
    assert set(os.listdir(os.getcwd())) == before         # ... and nothing written here


def test_distributed_error_names_the_node(cluster):
    client, _ = cluster
    yn = np.ones(40, np.int64)
    yn[5] = 0
    y = tld.run(jit.script(divide), da.arange(0, 40, chunks=10, dtype=np.int64),
                da.from_array(yn, chunks=10))
    with pytest.raises(IntegerDivisionByZeroError, match="aten::floor_divide"):
        client.compute(y, sync=True)


def _die_once(block, marker):
    """Kill this worker process the first time any task runs it (a worker lost mid-run)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return block
    os.close(fd)
    os._exit(1)


def test_a_killed_worker_is_retried_and_the_result_is_right(cluster, tmp_path):
    client, _ = cluster
    xn = np.linspace(-2, 2, 4000, dtype=np.float32).reshape(40, 100)
    x = da.from_array(xn, chunks=(10, 100)).map_blocks(_die_once, str(tmp_path / "died"),
                                                        meta=np.empty((0, 0), np.float32))
    fn = jit.script(act)
    w, b = np.float32(0.5), np.ones(100, np.float32)
    got = client.compute(tld.run(fn, x, w, b), sync=True)
    assert (tmp_path / "died").exists()
    np.testing.assert_allclose(got, fn(xn, w, b), rtol=1e-6)


def test_max_of_two_tensors_is_elementwise_and_branches_are_walked():
    xn = np.arange(8, dtype=np.float32).reshape(4, 2)
    yn = np.full((4, 2), 3.0, np.float32)
    x, y = da.from_array(xn, chunks=(2, 1)), da.from_array(yn, chunks=(2, 1))
    g = parse_graph("""graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::max(%x, %y)
  return (%1)""")
    assert not any(c.whole for c in tld.plan(g, x, y).classes)  # maximum: cut freely
    np.testing.assert_array_equal(tld.run(g, x, y).compute(**THREADS), np.maximum(xn, yn))
    # float(x) inside a branch reads all of x: x stays whole, whichever branch runs
    g = parse_graph("""graph(%x : Tensor, %flag : bool):
  %4 : int[] = prim::ListConstruct()
  %5 : bool = prim::Constant[value=0]()
  %2 : float = prim::If(%flag)
    block0():
      %3 : Tensor = aten::amax(%x, %4, %5)
      %6 : float = aten::Float(%3)
      -> (%6)
    block1():
      %7 : float = prim::Constant[value=1.]()
      -> (%7)
  %8 : Tensor = aten::mul(%x, %2)
  return (%8)""")
    assert all(c.whole for c in tld.plan(g, x, False).classes)
    for flag in (False, True):
        want = xn * (float(xn.max()) if flag else 1.0)
        np.testing.assert_array_equal(tld.run(g, x, flag).compute(**THREADS), want)


def test_an_operand_of_another_size_is_not_broadcast():
    # type_as reads only its other's dtype: a (3,) other does not tie the (6, 4) dims
    g = parse_graph("""graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::type_as(%x, %y)
  %2 : Tensor = aten::mul(%1, %1)
  return (%2)""")
    xn = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = tld.run(g, da.from_array(xn, chunks=(2, 2)), da.from_array(np.ones(3), chunks=1))
    assert y.dtype == np.float64 and y.chunks == ((2, 2, 2), (2, 2))
    np.testing.assert_array_equal(y.compute(**THREADS), xn.astype(np.float64) ** 2)


def test_a_graph_writing_into_its_input_leaves_the_dask_input_unchanged():
    g = parse_graph("""graph(%x : Tensor):
  %1 : float = prim::Constant[value=2.]()
  %2 : Tensor = aten::mul_(%x, %1)
  %3 : Tensor = aten::exp(%2)
  return (%3)""")
    xn = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    before = xn.copy()
    x = da.from_array(xn, chunks=(1, 2))  # chunks are views of xn
    p = tld.plan(g, x)
    assert p.writes and not any(c.whole for c in p.classes)
    np.testing.assert_allclose(tld.run(g, x).compute(**THREADS), np.exp(2 * before), rtol=1e-6)
    np.testing.assert_array_equal(xn, before)


def test_readme_dask_example_runs_as_written(tmp_path):
    """README's "Scale out with Dask" block, run as pasted in a fresh process."""
    out = run_readme_block("Scale out with Dask", tmp_path)
    assert out.startswith("aten::softmax") and "reduces it" in out
