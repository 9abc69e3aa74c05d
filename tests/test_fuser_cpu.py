"""Compiled CPU kernels (Numba) against the interpreter, for every elementwise op in the registry.

Each test builds a ``prim::FusionGroup`` by hand and runs it twice: through the executor in
strict mode (a fallback would raise) and through the interpreter.  To keep Numba's compile count
low, one group holds every op that accepts the dtype at hand (one kernel per dtype x layout).
A new registry op is covered here with no change to this file.
"""
import numpy as np
import pytest

from torchlike import ops
from torchlike.errors import FusionError, IntegerDivisionByZeroError
from torchlike.fuser import config, executor
from torchlike.fuser.backend import get_backend_impl
from torchlike.fuser.stats import reset_stats, stats
from torchlike.interpreter import Interpreter
from torchlike.ir.graph import Graph, Node
from torchlike.ir.types import TENSOR, type_of_python_value
from torchlike.ops.elementwise_base import kept_operands
from torchlike.ops.registry import REQUIRED

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.fixture(scope="module", autouse=True)
def _kernel_cache(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    config.set_strict(True)
    yield
    config.set_strict(False)
    config.set_cache_dir(None)


# -- building groups ------------------------------------------------------------------------------

def group_node(n_inputs, build):
    """A FusionGroup over ``n_inputs`` inputs; ``build(sub, params) -> output values``."""
    sub = Graph()
    params = [sub.add_input(f"p{i}", TENSOR) for i in range(n_inputs)]
    sub.set_outputs(build(sub, params))
    outer = Graph()
    ins = [outer.add_input(f"x{i}", TENSOR) for i in range(n_inputs)]
    node = outer.create("prim::FusionGroup", ins, [TENSOR] * len(sub.outputs),
                        {"Subgraph": sub})
    outer.set_outputs(node.outputs)
    return node


def add_op(sub, kind, inputs):
    return sub.create(kind, inputs, [TENSOR]).output()


def const(sub, value):
    return sub.insert_constant(value, type_of_python_value(value) if value is not None else None)


def op_args(op, sub, x, y, z, c, dtype):
    """Inputs for ``op``: operands x, y, z in order (kept ones: the bool c); attributes from
    defaults, or a plain value of their type."""
    operands = iter([x, y, z])
    args = []
    keep = kept_operands(op)
    for p in op.params:
        if p.is_operand:
            args.append(c if p.name in keep else next(operands))
        elif p.default is not REQUIRED:
            args.append(const(sub, p.default))
        elif p.name == "dtype":
            args.append(const(sub, 6))
        else:
            base = p.type.rstrip("?")
            args.append(const(sub, {"int": 2, "float": 0.5, "bool": False}.get(
                base, 0.5 if "float" in dtype else 2)))
    return args


def run_both(node, args):
    sub = node.attrs["Subgraph"]
    expected = Interpreter(sub).run_outputs(list(args))
    got = executor.run_fusion_group(node, np, list(args))
    return got, expected


def assert_same(got, expected, label=""):
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        where = f"{label} output {k}"
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, f"{where}: {g.dtype}{g.shape} vs " \
                                                          f"{e.dtype}{e.shape}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e, err_msg=where)
            continue
        g64, e64 = g.astype(np.float64), e.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g64), np.isnan(e64), err_msg=where + " NaNs")
        rtol = 2e-3 if e.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(g64, e64, rtol=rtol, atol=1e-6, err_msg=where)
        zero = (e64 == 0) & (g64 == 0)
        np.testing.assert_array_equal(np.signbit(g64[zero]), np.signbit(e64[zero]),
                                      err_msg=where + " sign of zero")


# -- inputs ---------------------------------------------------------------------------------------

FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 7.25, np.inf, -np.inf, np.nan]


def values(dtype, n, seed, divisor=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool) | divisor
    if dtype.startswith("float"):
        v = np.array((FLOAT_SPECIALS * (n // len(FLOAT_SPECIALS) + 1))[:n])
        rng.shuffle(v)
        return v.astype(dtype)
    lo = 0 if dtype == "uint8" else -5
    v = rng.integers(lo, 6, n)
    if divisor:  # nonzero, small: division, remainder and powers stay defined
        v = rng.integers(1, 4, n)
    return v.astype(dtype)


def layout_inputs(dtype, layout):
    """(x, y, z, c): operands of shape (3, 4) after broadcasting, in the given layout."""
    def make(shape, seed, divisor=False):
        return values(dtype, int(np.prod(shape)), seed, divisor).reshape(shape)
    c = np.array([True, False, True, True, False, False] * 2).reshape(3, 4)
    if layout == "contiguous":
        return make((3, 4), 1), make((3, 4), 2, True), make((3, 4), 3), c
    if layout == "mixed":  # transposed, step-sliced, stride-0 and size-1 broadcasting at once
        return (make((4, 3), 1).T, make((6, 8), 2, True)[::2, 1::2],
                np.broadcast_to(make((4,), 3), (3, 4)), c[:1])
    if layout == "broadcast":
        return (make((3, 1), 1), np.broadcast_to(make((4,), 2, True), (3, 4)), make((4,), 3),
                c[:1])
    if layout == "0-d":
        return make((), 1), make((), 2, True), make((), 3), np.array(True)
    if layout == "empty":
        return make((0, 4), 1), make((0, 4), 2, True), make((1, 4), 3), c[:0]
    raise ValueError(layout)


def accepted_ops(dtype, args):
    """Registry elementwise ops the interpreter runs on these inputs (others raise, as PyTorch
    does, e.g. bitwise ops on floats) -- with the op's one-node group."""
    out = []
    for op in ops.elementwise_ops():
        node = group_node(4, lambda sub, p: [add_op(sub, op.name, op_args(op, sub, *p, dtype))])
        try:
            Interpreter(node.attrs["Subgraph"]).run_outputs(list(args))
        except Exception:
            continue
        out.append(op)
    return out


def all_ops_group(op_list, dtype):
    def build(sub, p):
        return [add_op(sub, op.name, op_args(op, sub, *p, dtype)) for op in op_list]
    return group_node(4, build)


def check_registry(dtype, layout):
    args = layout_inputs(dtype, layout)
    op_list = accepted_ops(dtype, args)
    assert op_list, f"no op accepts {dtype}"
    reset_stats()
    node = all_ops_group(op_list, dtype)
    try:
        got, expected = run_both(node, args)
    except FusionError as e:
        # name the op(s) the CPU backend cannot compile, one by one
        bad = []
        for op in op_list:
            one = all_ops_group([op], dtype)
            try:
                run_both(one, args)
            except FusionError as err:
                bad.append(f"{op.name}: {err}")
        pytest.fail(f"{dtype}/{layout}: {e}\n" + "\n".join(bad))
    for op, g, e in zip(op_list, got, expected):
        assert_same([g], [e], f"{op.name} {dtype} {layout}")
    s = stats()
    assert s["fallbacks"] == {} and s["kernels_compiled"] + s["disk_hits"] == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_every_dtype(dtype):
    check_registry(dtype, "contiguous")


@pytest.mark.parametrize("dtype, layout", [
    ("float32", "mixed"), ("int32", "mixed"), ("float16", "broadcast"), ("bool", "mixed"),
    ("float32", "0-d"), ("int64", "0-d"), ("float64", "empty"), ("int16", "empty")])
def test_every_op_layouts(dtype, layout):
    check_registry(dtype, layout)


# -- targeted behaviour ---------------------------------------------------------------------------

def test_integer_division_by_zero_raises_from_kernel():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::remainder",
                                                [add_op(sub, "aten::mul", [p[0], p[0]]), p[1]])])
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    y = np.array([1, 2, 3], dtype=np.int64)
    got, expected = run_both(node, [x, y])
    assert_same(got, expected)
    with pytest.raises(IntegerDivisionByZeroError, match="aten::remainder"):
        executor.run_fusion_group(node, np, [x, np.array([1, 0, 3], dtype=np.int64)])


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
            got, expected = run_both(node, [x, scale])
            assert_same(got, expected, "chunk")


def test_parallel_kernel_large_broadcast():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::mul", [
        add_op(sub, "aten::sigmoid", [p[0]]), p[1]])])
    x = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((257,)).astype(np.float64)
    reset_stats()
    got, expected = run_both(node, [x.T[:, ::1].T, y])
    assert_same(got, expected, "parallel")
    assert stats()["fallbacks"] == {}


def test_fallback_counted_and_strict_raises():
    cuda = get_backend_impl("cuda")
    if cuda is not None and cuda.available()[0]:
        pytest.skip("a CUDA backend is usable here: backend=cuda would not fall back")
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::add", [p[0], p[1], const(sub, 1)])])
    x = np.ones((2, 3), np.float32)
    try:
        config.set_backend("cuda")  # numpy inputs: no CUDA backend here
        with pytest.raises(FusionError, match="prim::FusionGroup.*backend unavailable"):
            executor.run_fusion_group(node, np, [x, x])
        config.set_strict(False)
        reset_stats()
        got, expected = run_both(node, [x, x])
        assert_same(got, expected)
        (reason, count), = stats()["fallbacks"].items()
        assert reason.startswith("backend unavailable: cuda") and count == 1
        config.set_backend("interpreter")
        reset_stats()
        got, _ = run_both(node, [x, x])
        assert stats()["fallbacks"] == {} and stats()["kernels_compiled"] == 0
        np.testing.assert_array_equal(got[0], x + x)
    finally:
        config.set_backend("auto")
        config.set_strict(True)


def test_passthrough_outputs_and_fresh_buffers():
    node = group_node(2, lambda sub, p: [add_op(sub, "aten::neg", [p[0]]), p[1]])
    x = np.arange(6.0).reshape(2, 3)
    y = np.ones(3, np.int32)
    a = executor.run_fusion_group(node, np, [x, y])
    b = executor.run_fusion_group(node, np, [x, y])
    assert a[1] is y and a[0] is not b[0] and not np.shares_memory(a[0], b[0])
    np.testing.assert_array_equal(a[0], -x)


# -- random DAGs ----------------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

BINARY = ["aten::add", "aten::mul", "aten::sub", "aten::maximum", "aten::lt", "aten::div"]
UNARY = ["aten::tanh", "aten::neg", "aten::abs", "aten::sigmoid"]


@st.composite
def dags(draw):
    dtypes = draw(st.lists(st.sampled_from(["float32", "float64", "int32", "int64", "scalar"]),
                           min_size=2, max_size=3))
    steps = draw(st.lists(st.tuples(st.sampled_from(BINARY + UNARY), st.integers(0, 99),
                                    st.integers(0, 99)), min_size=1, max_size=6))
    n_out = draw(st.integers(1, 3))
    shapes = draw(st.lists(st.sampled_from([(2, 3), (1, 3), (3,), (2, 1)]),
                           min_size=len(dtypes), max_size=len(dtypes)))
    return dtypes, steps, n_out, shapes


@hypothesis.settings(max_examples=10, deadline=None)
@hypothesis.given(dags())
def test_random_dags(dag):
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
        computed = vals[len(p):]
        return computed[-n_out:]
    node = group_node(len(args), build)
    try:
        expected = Interpreter(node.attrs["Subgraph"]).run_outputs(list(args))
    except Exception:
        hypothesis.assume(False)
    # a group's outputs are tensors (the partitioner keeps scalar arithmetic outside)
    hypothesis.assume(all(isinstance(e, np.ndarray) for e in expected))
    got = executor.run_fusion_group(node, np, list(args))
    assert_same(got, expected, "dag")


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
