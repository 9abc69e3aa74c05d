"""Compiled CPU kernels (Numba) against the interpreter, for every elementwise op in the registry.

The registry matrix goes through the differential harness (``differential.py``): per dtype x
layout, one ``prim::FusionGroup`` holds every op case (op x attribute variant) that accepts the
dtype, so Numba compiles one kernel per case; it runs through the executor in strict mode (a
fallback would raise) and the stats counters prove a compiled kernel served it.  Per-case tests
check that; per-op tests compare each op's outputs in every case with the interpreter's.
Attribute variants run in the contiguous kernels of every dtype.  A new registry op is
covered here with no change to this file.
"""
import numpy as np
import pytest
from differential import (
    DTYPES,
    Matrix,
    add_op,
    assert_same,
    const,
    group_node,
    interpret,
    layout_cases,
    narrow_dtype_cases,
    op_cases,
    run,
    run_cpu,
)

from torchlike.errors import FusionError, IntegerDivisionByZeroError
from torchlike.fuser import config, executor
from torchlike.fuser.backend import get_backend_impl
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ir.types import TENSOR

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("kernel_cache")]  # compiles a Numba kernel per dtype x layout (about 3 minutes): `-m "not slow"` skips it

try:
    import hypothesis
    from hypothesis import strategies as st
except ImportError:  # only test_random_dags needs it
    hypothesis = None

MATRIX = [(d, "contiguous") for d in DTYPES] + [
    ("float32", "mixed"), ("int32", "mixed"), ("float16", "broadcast"), ("bool", "mixed"),
    ("float32", "0-d"), ("int64", "0-d"), ("float64", "empty"), ("int16", "empty")]


@pytest.fixture(scope="module")
def matrix():
    """Every op case in the contiguous kernels (every dtype); the layout kernels hold the
    representative ``LAYOUT_OPS``: Numba compiles the inlined math helpers of every op slowly
    (about 40 s per dtype for the whole registry), and the narrow integer dtypes leave out
    the float math helpers, which they reach only through promotion to float32."""
    narrow = narrow_dtype_cases()
    return Matrix("cpu", MATRIX, layout_cases=layout_cases(),
                  dtype_cases={d: narrow for d in ("bool", "uint8", "int8", "int16")})


# -- the registry matrix --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,layout", MATRIX)
def test_registry_kernel_compiles_and_runs(matrix, dtype, layout):
    """One compiled kernel (strict mode, no fallback) runs every op case accepting ``dtype``."""
    matrix.check_case(dtype, layout)


@pytest.mark.parametrize("case", op_cases(), ids=lambda c: c.id)
def test_op_matches_interpreter(matrix, case):
    """The op case's outputs from the kernels of every dtype x layout equal the interpreter's
    (ints/bools exactly, floats closely, NaN/inf/-0.0 alike)."""
    ran, failures = matrix.op_failures(case.id)
    assert ran, f"{case.id}: no case of the matrix ran it"
    assert not failures, "\n".join(failures[:12])


# -- targeted behaviour ---------------------------------------------------------------------------

def test_integer_division_by_zero_raises_from_kernel():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::remainder",
                                                [add_op(sub, "aten::mul", [p[0], p[0]]), p[1]])])
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    y = np.array([1, 2, 3], dtype=np.int64)
    assert_same(run_cpu(node, [x, y]), interpret(node, [x, y]))
    with pytest.raises(IntegerDivisionByZeroError, match="aten::remainder"):
        run_cpu(node, [x, np.array([1, 0, 3], dtype=np.int64)])


def test_chunk_multi_output_and_scalars():
    """ConstantChunk (the LSTM gates) indexes its input; a Python float is a kernel argument."""
    def build(sub, p):
        chunk = sub.create("prim::ConstantChunk", [p[0]], [TENSOR] * 4, {"chunks": 4, "dim": 1})
        a, b, c, d = chunk.outputs
        s = add_op(sub, "aten::sigmoid", [a])
        t = add_op(sub, "aten::tanh", [add_op(sub, "aten::mul", [b, p[1]])])
        u = add_op(sub, "aten::add", [add_op(sub, "aten::mul", [s, t]), c, const(sub, 1)])
        return [u, s, d]
    node = group_node(2, build)
    for x in (np.linspace(-3, 3, 24, dtype=np.float32).reshape(3, 8),
              np.linspace(-3, 3, 48, dtype=np.float32).reshape(4, 12)[::-1]):
        for scale in (0.5, 2.0):
            assert_same(run_cpu(node, [x, scale]), interpret(node, [x, scale]), "chunk")


def test_parallel_kernel_large_broadcast():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::mul", [
        add_op(sub, "aten::sigmoid", [p[0]]), p[1]])])
    x = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((257,)).astype(np.float64)
    args = [x.T[:, ::1].T, y]
    assert_same(run_cpu(node, args), interpret(node, args), "parallel")


def test_fallback_counted_and_strict_raises():
    cuda = get_backend_impl("cuda")
    if cuda is not None and cuda.available()[0]:
        pytest.skip("a CUDA backend is usable here: backend=cuda would not fall back")
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::add", [p[0], p[1], const(sub, 1)])])
    x = np.ones((2, 3), np.float32)
    saved = config.get_backend(), config.strict()
    try:
        config.set_backend("cuda")  # numpy inputs: no CUDA backend here
        config.set_strict(True)
        with pytest.raises(FusionError, match="prim::FusionGroup.*backend unavailable"):
            executor.run_fusion_group(node, np, [x, x])
        config.set_strict(False)
        reset_stats()
        assert_same(executor.run_fusion_group(node, np, [x, x]), interpret(node, [x, x]))
        (reason, count), = stats()["fallbacks"].items()
        assert reason.startswith("backend unavailable: cuda") and count == 1
        config.set_backend("interpreter")
        reset_stats()
        got = executor.run_fusion_group(node, np, [x, x])
        assert stats()["fallbacks"] == {} and stats()["kernels_compiled"] == 0
        np.testing.assert_array_equal(got[0], x + x)
    finally:
        config.set_backend(saved[0])
        config.set_strict(saved[1])


def test_passthrough_outputs_and_fresh_buffers():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::neg", [p[0]]), p[1]])
    x = np.arange(6.0).reshape(2, 3)
    y = np.ones(3, np.int32)
    a = run_cpu(node, [x, y])
    b = executor.run_fusion_group(node, np, [x, y])
    assert a[1] is y and a[0] is not b[0] and not np.shares_memory(a[0], b[0])
    np.testing.assert_array_equal(a[0], -x)


def test_codegen_returns_source_without_compiling():
    from torchlike.fuser.codegen import codegen
    from torchlike.ir import parse_graph
    g = parse_graph("""
graph(%x : Tensor, %y : Tensor):
  %1 : float = prim::Constant[value=2.]()
  %2 : Tensor = aten::mul(%x, %1)
  %3 : Tensor = aten::sigmoid(%2)
  %4 : Tensor = aten::sub(%3, %y, %1)
  return (%4)
""")
    reset_stats()
    x = np.ones((2, 3), np.float32)
    (k,) = codegen(g, x, x.T.copy().T)
    assert f"def {k.name}(in0, in1, out0):" in k.source and "tl_sigmoid" in k.source
    assert k.source.startswith("# torchlike-cpu-kernel v")
    assert stats()["kernels_compiled"] == 0


# -- random DAGs ----------------------------------------------------------------------------------

BINARY = ["aten::add", "aten::mul", "aten::sub", "aten::maximum", "aten::lt", "aten::div"]
UNARY = ["aten::tanh", "aten::neg", "aten::abs", "aten::sigmoid"]


def check_dag(dag):
    """A random DAG of ops as one group: the cpu kernel equals the interpreter."""
    dtypes, steps, n_out, shapes = dag
    args = []
    for i, (dt, shape) in enumerate(zip(dtypes, shapes)):
        if dt == "scalar":
            args.append(1.5 if i % 2 else 3)
        else:
            args.append((np.arange(np.prod(shape)).reshape(shape) % 5 - 1.5).astype(dt))

    def build(sub, p):
        vals = list(p)
        for kind, i, j in steps:
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            vals.append(add_op(sub, kind, [a, b] if kind in BINARY else [a]))
        return vals[len(p):][-n_out:]
    node = group_node(len(args), build)
    try:
        expected = interpret(node, args)
    except Exception:
        hypothesis.assume(False)
    # a group's outputs are tensors (the partitioner keeps scalar arithmetic outside)
    hypothesis.assume(all(isinstance(e, np.ndarray) for e in expected))
    assert_same(run("cpu", node, args), expected, "dag")


if hypothesis is not None:
    @st.composite
    def dags(draw):
        dtypes = draw(st.lists(st.sampled_from(["float32", "float64", "int32", "int64",
                                                "scalar"]), min_size=2, max_size=3))
        steps = draw(st.lists(st.tuples(st.sampled_from(BINARY + UNARY), st.integers(0, 99),
                                        st.integers(0, 99)), min_size=1, max_size=6))
        n_out = draw(st.integers(1, 3))
        shapes = draw(st.lists(st.sampled_from([(2, 3), (1, 3), (3,), (2, 1)]),
                               min_size=len(dtypes), max_size=len(dtypes)))
        return dtypes, steps, n_out, shapes

    @hypothesis.settings(max_examples=10, deadline=None)
    @hypothesis.given(dags())
    def test_random_dags(dag):
        check_dag(dag)
else:
    def test_random_dags():
        pytest.skip("needs hypothesis (pip install hypothesis)")


def test_parallel_by_work(monkeypatch):
    """The production rule (conftest sets a plain 2^16-element threshold for the other tests):
    a kernel runs its loop in parallel where elements x (1 + heavy ops) reaches 2^19, since
    waking the OpenMP pool (passive waiting) costs more than a small kernel's work: an add
    of 2^18 elements stays serial, sin of 2^18 and an add of 2^19 go parallel."""
    from torchlike.cpu_backend import codegen as cpu_codegen
    from torchlike.fuser.codegen import codegen
    from torchlike.ir import parse_graph
    monkeypatch.setattr(cpu_codegen, "PARALLEL_WORK", 1 << 19)
    monkeypatch.setattr(cpu_codegen, "HEAVY_WEIGHT", 1)
    saved = config.get_backend()
    config.set_backend("cpu")
    add = "graph(%x : Tensor):\n  %y : Tensor = aten::mul(%x, %x)\n  return (%y)\n"
    sin = "graph(%x : Tensor):\n  %y : Tensor = aten::sin(%x)\n  return (%y)\n"
    try:
        for text, n, want in [(add, 1 << 18, "serial"), (sin, 1 << 18, "parallel"),
                              (add, 1 << 19, "parallel"), (sin, 1 << 17, "serial")]:
            (source,) = codegen(parse_graph(text), np.ones(n, np.float32))
            assert want in source.key, (text, n, source.key)
            assert ("prange(" in source.source) == (want == "parallel")
    finally:  # a later test of the same worker expects the default ("auto": test_cli)
        config.set_backend(saved)
