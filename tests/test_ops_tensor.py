"""Non-elementwise ops (ops/linalg.py, ops/shape_ops.py, ops/reductions.py, ops/prim_ops.py, ops/functions.py) against PyTorch.

Every case builds a one-node graph, runs it with the interpreter, compares the result (values,
dtype, shape) with eager PyTorch, and checks that the op's ``infer`` rule predicts the dtype and
shape of what actually came out.
"""
from typing import List, Tuple

import numpy as np
import pytest

from torchlike import ir, jit
from torchlike.errors import ExecutionError, UnsupportedOpError
from torchlike.interpreter import Interpreter
from torchlike.ir.graph import Graph
from torchlike.ir.types import (
    ANY,
    FUNCTION,
    INT,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    tensor_type_of,
)
from torchlike.ops import registry
from torchlike.ops.functions import lookup_function, register_function, unregister_function

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")

INT64_MAX = 9223372036854775807
RNG = np.random.default_rng(0)


def rand(*shape, dtype="float32"):
    if dtype == "bool":
        return np.asarray(RNG.random(shape) > 0.5)
    if dtype.startswith(("int", "uint")):
        return np.asarray(RNG.integers(0, 10, shape), dtype=dtype)
    return np.asarray(RNG.standard_normal(shape), dtype=dtype)


# -- harness -------------------------------------------------------------------------------------

def build(kind, args, n_out=1, attrs=None):
    """A graph holding one ``kind`` node: arrays become inputs, lists of arrays a ListConstruct,
    anything else a constant.  Returns (graph, node, runtime inputs)."""
    g, feeds, vals = Graph(), [], []
    for a in args:
        if isinstance(a, np.ndarray):
            vals.append(g.add_input(None, tensor_type_of(a)))
            feeds.append(a)
        elif isinstance(a, list) and a and all(isinstance(e, np.ndarray) for e in a):
            elems = []
            for e in a:
                elems.append(g.add_input(None, tensor_type_of(e)))
                feeds.append(e)
            vals.append(g.create("prim::ListConstruct", elems, [ListType(TENSOR)]).output())
        else:
            vals.append(g.insert_constant(a))
    node = g.create(kind, vals, [TENSOR] * n_out, attrs)
    g.set_outputs(node.outputs)
    return g, node, feeds


def run(kind, *args, n_out=1, attrs=None):
    """Run the node; check infer() against the results; return the outputs (list if n_out>1)."""
    g, node, feeds = build(kind, args, n_out, attrs)
    outs = Interpreter(g).run_outputs(feeds)
    types = registry.get(kind).infer(node, [v.type for v in node.inputs])
    assert len(types) == n_out
    for out, t in zip(outs, types):
        check_type(out, t)
    return outs if n_out > 1 else outs[0]


def check_type(value, t):
    if isinstance(value, np.ndarray):
        assert isinstance(t, TensorType), t
        assert t.dtype == str(value.dtype), (t, value.dtype)
        assert t.shape == value.shape, (t, value.shape)
    elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        assert isinstance(t, ListType) and isinstance(t.elem, TensorType)
        assert t.elem.dtype in (None, str(value[0].dtype))


def to_torch(a):
    import torch  # reached only from tests holding the ``torch`` fixture (conftest.py)
    if isinstance(a, np.ndarray):
        return torch.from_numpy(np.array(a))
    if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
        return [to_torch(e) for e in a]
    return a


def same(ours, theirs):
    """Values, dtype and shape equal (floats within rounding, NaN where PyTorch has NaN)."""
    import torch  # reached only from tests holding the ``torch`` fixture (conftest.py)
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
        return
    if not isinstance(theirs, torch.Tensor):
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)
        return
    assert isinstance(ours, np.ndarray), type(ours)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), (ours.dtype, theirs.dtype)
    assert ours.shape == tuple(theirs.shape), (ours.shape, theirs.shape)
    expected = theirs.numpy()
    if ours.dtype.kind == "f":
        tol = 2e-3 if ours.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(ours.astype("float64"), expected.astype("float64"),
                                   rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(ours, expected)


def check(kind, torch_fn, *args, n_out=1, attrs=None):
    same(run(kind, *args, n_out=n_out, attrs=attrs), torch_fn(*[to_torch(a) for a in args]))


def both_fail(kind, torch_fn, *args, n_out=1):
    with pytest.raises(Exception):  # noqa: B017 - any error torch raises; ours is checked below
        torch_fn(*[to_torch(a) for a in args])
    g, node, feeds = build(kind, args, n_out)
    with pytest.raises(ExecutionError, match=kind):
        Interpreter(g).run_outputs(feeds)


# -- matmul --------------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)),
                                   ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((0, 3), (3, 2)), ((3, 0), (0, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_matmul(torch, sa, sb, dtype):
    check("aten::matmul", torch.matmul, rand(*sa, dtype=dtype), rand(*sb, dtype=dtype))


def test_mm_bmm_and_errors(torch):
    check("aten::mm", torch.mm, rand(3, 4), rand(4, 2))
    check("aten::bmm", torch.bmm, rand(2, 3, 4), rand(2, 4, 5))
    both_fail("aten::matmul", torch.matmul, rand(2, 2), rand(2, 2, dtype="float64"))
    both_fail("aten::matmul", torch.matmul, rand(), rand(2))
    both_fail("aten::mm", torch.mm, rand(2, 2, 2), rand(2, 2))
    both_fail("aten::bmm", torch.bmm, rand(2, 3, 4), rand(3, 4, 5))


# -- splitting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,chunks,dim", [((5,), 3, 0), ((5,), 4, 0), ((3, 8), 4, 1),
                                             ((3, 8), 4, -1), ((0,), 3, 0), ((3, 0), 2, 1),
                                             ((6, 2), 2, -2), ((2,), 5, 0)])
def test_chunk(torch, shape, chunks, dim):
    x = rand(*shape)
    check("aten::chunk", lambda t, c, d: list(torch.chunk(t, c, d)), x, chunks, dim)
    n = len(torch.chunk(to_torch(x), chunks, dim))
    check("prim::ConstantChunk", lambda t: list(torch.chunk(t, chunks, dim)), x, n_out=n,
          attrs={"chunks": chunks, "dim": dim})


def test_chunk_errors(torch):
    both_fail("aten::chunk", torch.chunk, rand(), 2, 0)
    both_fail("aten::chunk", torch.chunk, rand(4), 0, 0)


@pytest.mark.parametrize("split,dim", [(2, 0), (3, 1), (1, -1), ([1, 4], 1), ([0, 5], -1)])
def test_split(torch, split, dim):
    check("aten::split", lambda t, s, d: list(torch.split(t, s, d)), rand(4, 5), split, dim)


def test_split_empty_and_str(torch):
    check("aten::split", lambda t, s, d: list(torch.split(t, s, d)), rand(0, 2), 2, 0)
    both_fail("aten::split", torch.split, rand(4, 5), [1, 2], 1)
    assert run("aten::split", "a b  c", None, -1) == ["a", "b", "c"]
    assert run("aten::split", "a,b,c", ",", 1) == ["a", "b,c"]


# -- indexing and views --------------------------------------------------------------------------

@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (-1, 0), (-3, 2)])
def test_select(torch, dim, index):
    check("aten::select", torch.select, rand(3, 4, 5), dim, index)


def test_select_errors(torch):
    both_fail("aten::select", torch.select, rand(3, 4), 0, 3)
    both_fail("aten::select", torch.select, rand(3, 4), 2, 0)
    both_fail("aten::select", torch.select, rand(), 0, 0)


@pytest.mark.parametrize("dim,start,end,step", [(0, None, None, 1), (1, 1, INT64_MAX, 1),
                                                (-1, 0, INT64_MAX, 2), (1, -3, -1, 1),
                                                (0, 5, 2, 1), (0, -100, 100, 3), (1, 2, 2, 1)])
def test_slice(torch, dim, start, end, step):
    x = rand(4, 6)
    out = run("aten::slice", x, dim, start, end, step)
    same(out, to_torch(x)[(slice(None),) * (dim % 2) + (slice(start, end, step),)])


def test_slice_list_and_errors():
    assert run("aten::slice", [1, 2, 3, 4], 1, INT64_MAX, 1) == [2, 3, 4]
    assert run("aten::slice", [1, 2, 3, 4], -3, -1, 1) == [2, 3]
    g, node, feeds = build("aten::slice", [rand(4), 0, 0, 4, 0])
    with pytest.raises(ExecutionError, match="step"):
        Interpreter(g).run_outputs(feeds)


@pytest.mark.parametrize("shape", [(), (3,), (3, 4)])
def test_t(torch, shape):
    check("aten::t", torch.t, rand(*shape))


def test_t_rejects_3d(torch):
    both_fail("aten::t", torch.t, rand(2, 3, 4))


@pytest.mark.parametrize("shape,d0,d1", [((2, 3, 4), 0, 2), ((2, 3, 4), -1, 0), ((), 0, -1),
                                         ((2, 0), 0, 1)])
def test_transpose(torch, shape, d0, d1):
    check("aten::transpose", torch.transpose, rand(*shape), d0, d1)


@pytest.mark.parametrize("shape,dims", [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [-1, -2, -3]),
                                        ((), []), ((0, 2), [1, 0])])
def test_permute(torch, shape, dims):
    check("aten::permute", torch.permute, rand(*shape), dims)


@pytest.mark.parametrize("kind", ["aten::reshape", "aten::view"])
@pytest.mark.parametrize("shape,new", [((2, 6), [3, 4]), ((2, 6), [-1]), ((2, 6), [4, -1]),
                                       ((), [1, 1]), ((1,), []), ((0, 3), [-1, 3])])
def test_reshape_view(torch, kind, shape, new):
    check(kind, lambda t, s: t.reshape(s), rand(*shape), new)


@pytest.mark.parametrize("shape,s,e", [((2, 3, 4), 0, -1), ((2, 3, 4), 1, 2), ((2, 3, 4), -2, -1),
                                       ((), 0, -1), ((2, 0, 3), 0, 1), ((5,), 0, 0)])
def test_flatten(torch, shape, s, e):
    check("aten::flatten", torch.flatten, rand(*shape), s, e)


@pytest.mark.parametrize("shape,dim", [((2, 3), 0), ((2, 3), 2), ((2, 3), -1), ((2, 3), -3),
                                       ((), 0), ((), -1)])
def test_unsqueeze(torch, shape, dim):
    check("aten::unsqueeze", torch.unsqueeze, rand(*shape), dim)


def test_unsqueeze_out_of_range(torch):
    both_fail("aten::unsqueeze", torch.unsqueeze, rand(2, 3), 3)


@pytest.mark.parametrize("shape,dim", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), 1),
                                       ((1, 3, 1), -1), ((1, 3, 1), [0, 2]), ((), None), ((), 0),
                                       ((1, 0), None)])
def test_squeeze(torch, shape, dim):
    x = rand(*shape)
    if dim is None:
        check("aten::squeeze", torch.squeeze, x)
    else:
        check("aten::squeeze", torch.squeeze, x, dim)


@pytest.mark.parametrize("shape,size", [((3, 1), [3, 4]), ((3, 1), [2, -1, 5]), ((), [2, 2]),
                                        ((1,), [0]), ((3, 1), [-1, -1])])
def test_expand(torch, shape, size):
    x = rand(*shape)
    out = run("aten::expand", x, size, False)
    same(out, to_torch(x).expand(size))
    # A view, not a copy: the kernels see stride 0 like PyTorch's expanded tensors.
    assert out.size == 0 or np.shares_memory(out, x)


def test_expand_as_contiguous_clone_detach(torch):
    x, y = rand(1, 3), rand(4, 3)
    check("aten::expand_as", lambda a, b: a.expand_as(b), x, y)
    xt = rand(3, 4).T
    out = run("aten::contiguous", xt, 0)
    assert out.flags.c_contiguous
    same(out, to_torch(xt))
    c = run("aten::clone", x, None)
    same(c, to_torch(x))
    assert not np.shares_memory(c, x)
    assert run("aten::detach", x) is x


# -- joining -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dtypes,dim", [
    ([(2, 3), (4, 3)], ["float32", "float32"], 0),
    ([(2, 3), (2, 1)], ["float32", "float64"], -1),
    ([(2, 3), (2, 3)], ["int32", "float32"], 1),
    ([(2, 3), (2, 3), (2, 3)], ["bool", "int8", "uint8"], 0),
    ([(0,), (2, 3)], ["float32", "float32"], 0),      # legacy: 1-D empty tensors are skipped
    ([(0, 3), (2, 3)], ["float32", "float32"], 0),
])
def test_cat(torch, shapes, dtypes, dim):
    check("aten::cat", torch.cat, [rand(*s, dtype=d) for s, d in zip(shapes, dtypes)], dim)


@pytest.mark.parametrize("shapes,dtypes,dim", [
    ([(2, 3), (2, 3)], ["float32", "float32"], 0),
    ([(2, 3), (2, 3)], ["int32", "float64"], -1),
    ([(), ()], ["int64", "bool"], 0),
    ([(2, 0)] * 3, ["float32"] * 3, 1),
])
def test_stack(torch, shapes, dtypes, dim):
    check("aten::stack", torch.stack, [rand(*s, dtype=d) for s, d in zip(shapes, dtypes)], dim)


def test_cat_errors_and_all_empty(torch):
    check("aten::cat", torch.cat, [rand(0), rand(0, dtype="float64")], -2)
    both_fail("aten::cat", torch.cat, [rand(), rand()], 0)
    both_fail("aten::cat", torch.cat, [rand(2, 3), rand(2, 4)], 0)


# -- reductions ----------------------------------------------------------------------------------

SHAPES = [(3, 4), (2, 3, 4), (), (0, 3), (5,)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8", "bool"])
def test_sum_all(torch, shape, dtype):
    x = rand(*shape, dtype=dtype)
    check("aten::sum", lambda t, d: torch.sum(t), x, None)
    check("aten::sum", lambda t, d: torch.sum(t, dtype=torch.float64), x, 7)  # 7 = Double


@pytest.mark.parametrize("dims,keepdim", [([1], False), ([-1], True), ([0, -1], False),
                                          ([], False), ([], True), (None, True), (1, False)])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_sum_dims(torch, dims, keepdim, dtype):
    x = rand(2, 3, 4, dtype=dtype)
    torch_dims = dims if dims is not None else None
    check("aten::sum", lambda t, d, k, dt: torch.sum(t, torch_dims, keepdim=k), x, dims,
          keepdim, None)
    check("aten::sum", lambda t, d, k, dt: torch.sum(t, torch_dims, keepdim=k, dtype=torch.float32),
          x, dims, keepdim, 6)


@pytest.mark.parametrize("shape,dims,keepdim", [((3, 4), None, False), ((3, 4), [1], True),
                                                ((2, 3, 4), [0, 2], False), ((), [0], True),
                                                ((0, 3), [0], False), ((0, 3), [1], True),
                                                ((2, 3), [], False)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_mean(torch, shape, dims, keepdim, dtype):
    x = rand(*shape, dtype=dtype)
    check("aten::mean", lambda t, d, k, dt: torch.mean(t, d, keepdim=k), x, dims, keepdim, None)
    check("aten::mean", lambda t, dt: torch.mean(t), x, None)


def test_mean_of_ints(torch):
    both_fail("aten::mean", torch.mean, rand(3, dtype="int64"), None)
    check("aten::mean", lambda t, d, k, dt: torch.mean(t, d, k, dtype=torch.float32),
          rand(3, 4, dtype="int64"), [1], False, 6)


@pytest.mark.parametrize("kind,fn", [("aten::amax", "amax"), ("aten::amin", "amin")])
@pytest.mark.parametrize("shape,dims,keepdim", [((3, 4), [], False), ((3, 4), [1], True),
                                                ((2, 3, 4), [0, -1], False), ((), [], False),
                                                ((0, 3), [1], False)])
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool"])
def test_amax_amin(torch, kind, fn, shape, dims, keepdim, dtype):
    fn = getattr(torch, fn)
    check(kind, fn, rand(*shape, dtype=dtype), dims, keepdim)


def test_amax_nan_and_empty(torch):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], dtype="float32")
    check("aten::amax", torch.amax, x, [1], False)
    check("aten::amin", torch.amin, x, [0], True)
    both_fail("aten::amax", torch.amax, rand(0, 3), [], False)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("shape", [(3, 4), (5,), ()])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_max_min(torch, name, shape, dtype):
    kind, fn = f"aten::{name}", getattr(torch, name)
    x = rand(*shape, dtype=dtype)
    check(kind, fn, x)
    for dim in (0, -1):
        for keepdim in (False, True):
            check(kind, lambda t, d, k: tuple(fn(t, d, k)), x, dim, keepdim, n_out=2)
    check(kind, fn, x, rand(*shape, dtype=dtype))


def test_max_nan_ties_broadcast_and_empty(torch):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 7.0, 7.0, 0.0]], dtype="float32")
    check("aten::max", lambda t, d, k: tuple(torch.max(t, d, k)), x, 1, False, n_out=2)
    check("aten::min", lambda t, d, k: tuple(torch.min(t, d, k)), x, 1, True, n_out=2)
    check("aten::max", torch.max, x)
    check("aten::max", torch.max, x, np.array(2.5, dtype="float64"))     # 0-d doesn't widen
    check("aten::min", torch.min, rand(3, 1, dtype="int32"), rand(4, dtype="float16"))
    both_fail("aten::max", torch.max, rand(0, 3))
    both_fail("aten::max", lambda t, d, k: torch.max(t, d, k), rand(0, 3), 0, False, n_out=2)
    assert run("aten::max", 3, 7) == 7 and run("aten::min", [4, 2, 9]) == 2


@pytest.mark.parametrize("kind,fn", [("aten::argmax", "argmax"), ("aten::argmin", "argmin")])
@pytest.mark.parametrize("shape,dim,keepdim", [((3, 4), None, False), ((3, 4), None, True),
                                               ((3, 4), 1, False), ((3, 4), -2, True),
                                               ((), None, False), ((), 0, True),
                                               ((0, 3), 1, False)])
def test_argmax_argmin(torch, kind, fn, shape, dim, keepdim):
    fn = getattr(torch, fn)
    x = rand(*shape)
    if x.size:
        x.flat[0] = x.flat[-1]     # a tie: the first index wins
    check(kind, fn, x, dim, keepdim)
    both_fail(kind, fn, rand(*shape, dtype="bool"), dim, keepdim)


@pytest.mark.parametrize("kind,fn", [("aten::softmax", "softmax"),
                                     ("aten::log_softmax", "log_softmax")])
@pytest.mark.parametrize("shape,dim", [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((), 0),
                                       ((0, 4), 1), ((3, 0), 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax(torch, kind, fn, shape, dim, dtype):
    fn = getattr(torch, fn)
    x = rand(*shape, dtype=dtype)
    check(kind, lambda t, d, dt: fn(t, d), x, dim, None)


def test_softmax_dtype_inf_and_ints(torch):
    x = np.array([[1.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf]], dtype="float32")
    check("aten::softmax", lambda t, d, dt: torch.softmax(t, d), x, 1, None)
    check("aten::log_softmax", lambda t, d, dt: torch.log_softmax(t, d), x[:1], 1, None)
    check("aten::softmax", lambda t, d, dt: torch.softmax(t, d, dtype=torch.float64),
          rand(3, 4), -1, 7)
    check("aten::log_softmax", lambda t, d, dt: torch.log_softmax(t, d, dtype=torch.float32),
          rand(3, 4, dtype="int64"), 0, 6)
    both_fail("aten::softmax", torch.softmax, rand(3, dtype="int64"), 0, None)
    check("aten::softmax", lambda t, d, dt: torch.softmax(t, d), rand(2, 0, dtype="int32"), 1, None)


# -- scalars, lists, strings ---------------------------------------------------------------------

def test_size_dim_numel(torch):
    x = rand(2, 0, 3)
    assert run("aten::size", x) == [2, 0, 3]
    assert run("aten::size", x, -1) == 3 and run("aten::size", x, 0) == 2
    assert run("aten::dim", x) == 3 and run("aten::dim", rand()) == 0
    assert run("aten::numel", x) == 0 and run("aten::numel", rand(2, 3)) == 6
    both_fail("aten::size", lambda t, d: t.size(d), rand(), 0)
    both_fail("aten::size", lambda t, d: t.size(d), x, 3)


@pytest.mark.parametrize("kind,fn", [("aten::Bool", bool), ("aten::Int", int),
                                     ("aten::Float", float)])
@pytest.mark.parametrize("value", [np.array(2.75, "float32"), np.array([-3], "int64"),
                                   np.array([[True]]), np.array(0.0, "float64")])
def test_tensor_to_python_scalar(torch, kind, fn, value):
    ours = run(kind, value)
    theirs = fn(to_torch(value))
    assert type(ours) is type(theirs) and ours == theirs


def test_scalar_conversions(torch):
    assert run("aten::Float", 3) == 3.0 and type(run("aten::Float", 3)) is float
    assert run("aten::Int", -2.7) == -2 and run("aten::Int", True) == 1
    assert run("aten::Bool", 0.0) is False
    assert run("aten::Float", "1.5") == 1.5
    both_fail("aten::Int", int, rand(2))
    for v in (np.array(3.5, "float32"), np.array(4, "int32"), np.array(True)):
        for kind in ("aten::ScalarImplicit", "aten::item"):
            ours, theirs = run(kind, v), to_torch(v).item()
            assert type(ours) is type(theirs) and ours == theirs


def test_len_getitem_contains(torch):
    assert run("aten::len", [1, 2, 3]) == 3 and run("aten::len", rand(4, 2)) == 4
    both_fail("aten::len", len, rand())
    assert run("aten::__getitem__", [5, 6, 7], -1) == 7
    assert run("aten::__getitem__", [5, 6, 7], 0) == 5
    assert run("aten::__getitem__", "abc", 1) == "b"
    assert run("aten::__getitem__", {"a": 1}, "a") == 1
    g, node, feeds = build("aten::__getitem__", [[5, 6, 7], 3])
    with pytest.raises(ExecutionError, match="out of range"):
        Interpreter(g).run_outputs(feeds)
    assert run("aten::__contains__", [1, 2, 3], 2) is True
    assert run("aten::__contains__", {"a": 1}, "b") is False
    assert run("prim::TupleIndex", (1, 2.0, "x"), -1) == "x"


def test_int_helpers():
    for a in (7, -7, 0, 9):
        for b in (2, -2, 3):
            assert run("aten::floordiv", a, b) == a // b
            assert run("aten::__round_to_zero_floordiv", a, b) == int(a / b)
    assert run("aten::floordiv", 7.5, 2.0) == 3.0
    g, node, feeds = build("aten::floordiv", [1, 0])
    with pytest.raises(ZeroDivisionError):
        Interpreter(g).run_outputs(feeds)
    for lo, hi, step in [(0, 10, 3), (10, 0, -3), (5, 5, 1), (0, -3, 1)]:
        assert run("aten::__range_length", lo, hi, step) == len(range(lo, hi, step))
    assert run("aten::__derive_index", 3, 10, -2) == 4
    assert run("aten::__not__", False) is True and run("aten::__not__", True) is False
    assert run("aten::__is__", None, None) is True and run("aten::__isnot__", 1, None) is True


def _format_in_script(x: float, n: int, l: List[float], t: Tuple[int, str], b: bool):
    return "{}|{}|{}|{}|{}|{}".format(x, n, l, t, b, None)


def _print_in_script(x: float, n: int, l: List[float], t: Tuple[int, str], b: bool, s: str):
    print(x, n, l, t, b, None, s, 100.0, (3,))


def test_format_and_str_match_torchscript(torch):
    f = torch.jit.script(_format_in_script)
    args = (1.0 / 3, -4, [1.0, 2.5, 1e-7], (1, "x"), False)
    assert run("aten::format", "{}|{}|{}|{}|{}|{}", *args, None) == f(*args)
    assert run("aten::format", "a{}b", 1e20) == "a1e+20b"
    assert run("aten::str", 2.0) == "2."


def test_print_matches_torchscript(torch, capfd):
    args = (0.1, 2, [1.0, float("inf")], (1, "x"), True, "hi")
    torch.jit.script(_print_in_script)(*args)     # TorchScript prints from C++: capture the fd
    expected = capfd.readouterr().out
    g = Graph()
    vals = [g.insert_constant(a) for a in args + (None,)]
    g.create("prim::Print", vals[:5] + [vals[6], vals[5], g.insert_constant(100.0),
                                        g.insert_constant((3,))], [])
    Interpreter(g).run_outputs([])
    assert capfd.readouterr().out == expected
    assert registry.get("prim::Print").pure is False


def test_print_arrays(capsys):
    x = rand(2, 2)
    run_graph_print = build("prim::Print", [x, "t"], n_out=0)
    Interpreter(run_graph_print[0]).run_outputs(run_graph_print[2])
    assert capsys.readouterr().out == f"{x} t\n"


def test_raise_exception():
    g, node, feeds = build("prim::RaiseException", ["AssertionError: n must be positive", None],
                           n_out=0)
    with pytest.raises(AssertionError, match="^n must be positive$"):
        Interpreter(g).run_outputs(feeds)
    g, node, feeds = build("prim::RaiseException", ["too big", "builtins.ValueError"], n_out=0)
    with pytest.raises(ExecutionError) as info:
        Interpreter(g).run_outputs(feeds)
    assert isinstance(info.value.__cause__, ValueError)
    assert registry.get("prim::RaiseException").pure is False


def test_tensor_metadata_prims(torch):
    x = rand(2, 3, dtype="float64")
    assert run("prim::device", x) == "cpu"
    assert run("prim::dtype", x) == 7 and run("prim::dtype", rand(2, dtype="bool")) == 11
    for v, dtype in ((3, "int64"), (2.5, "float64"), (True, "bool")):
        t = run("prim::NumToTensor", v)
        same(t, torch.ops.prim.NumToTensor(v))
        assert t.ndim == 0 and str(t.dtype) == dtype
    assert run("prim::unchecked_cast", x) is x
    g = Graph()
    node = g.create("prim::Uninitialized", [], [TENSOR])
    g.set_outputs(node.outputs)
    assert Interpreter(g).run() is None


# -- functions -----------------------------------------------------------------------------------

def _double_and_sum():
    g = Graph()
    x = g.add_input("x", TensorType("float32", (2, 3)))
    two = g.insert_constant(2.0)
    y = g.create("aten::mul", [x, two], [TensorType("float32", (2, 3))]).output()
    s = g.create("aten::sum", [y, g.insert_constant(None)], [TensorType("float32", ())]).output()
    g.set_outputs([y, s])
    return g


def test_call_function_graph_and_callable():
    g = Graph()
    f = g.add_input("f", FUNCTION)
    x = g.add_input("x", TensorType("float32", (2, 3)))
    call = g.create("prim::CallFunction", [f, x], [TupleType((TENSOR, TENSOR))])
    g.set_outputs(call.outputs)
    x0 = rand(2, 3)
    y, s = Interpreter(g).run(_double_and_sum(), x0)
    np.testing.assert_allclose(y, 2 * x0)
    np.testing.assert_allclose(s, (2 * x0).sum(), rtol=1e-6)
    assert Interpreter(g).run(lambda a: (a, a), x0)[0] is x0
    with pytest.raises(UnsupportedOpError):
        Interpreter(g).run(None, x0)


def test_function_table():
    callee = _double_and_sum()
    register_function("test_ops_tensor_fn", callee)
    try:
        assert lookup_function("test_ops_tensor_fn") is callee
        g = Graph()
        f = g.create("prim::Constant", [], [FUNCTION], {"name": "test_ops_tensor_fn"}).output()
        x = g.add_input("x", TENSOR)
        call = g.create("prim::CallFunction", [f, x], [TENSOR])
        (t,) = registry.get("prim::CallFunction").infer(call, [FUNCTION, TENSOR])
        assert t == TupleType((TensorType("float32", (2, 3)), TensorType("float32", ())))
        # The interpreter resolves the constant and runs the callee graph on the arguments.
        g.set_outputs(call.outputs)
        x0 = rand(2, 3)
        out = Interpreter(g).run(x0)
        assert isinstance(out, tuple) and len(out) == 2
        np.testing.assert_allclose(out[0], x0 * 2, rtol=1e-6)
        # A Python callable registered by name runs through the op's impl.
        register_function("test_ops_tensor_fn", lambda a: a + 1)
        np.testing.assert_allclose(
            registry.get("prim::CallFunction").impl(np, "test_ops_tensor_fn", x0), x0 + 1)
    finally:
        unregister_function("test_ops_tensor_fn")
    assert lookup_function("test_ops_tensor_fn") is None
    with pytest.raises(UnsupportedOpError, match="test_ops_tensor_fn"):
        registry.get("prim::CallFunction").impl(np, "test_ops_tensor_fn", rand(2, 3))


# -- layouts, keyword binding, a corpus graph ----------------------------------------------------

def test_noncontiguous_and_expanded_inputs(torch):
    xt = rand(3, 4).T                                      # transposed
    xe = np.broadcast_to(rand(1, 3), (4, 3))               # stride 0
    xs = rand(4, 6)[:, ::2]                                # step-sliced
    for x in (xt, xe, xs):
        check("aten::sum", lambda t, d, k, dt: torch.sum(t, d, k), x, [0], False, None)
        check("aten::matmul", torch.matmul, x, rand(2, 3).T)
        check("aten::cat", torch.cat, [x, x], 1)
        check("aten::softmax", lambda t, d, dt: torch.softmax(t, d), x, 0, None)
        check("aten::chunk", lambda t, c, d: list(torch.chunk(t, c, d)), x, 2, 1)
        check("aten::view", lambda t, s: t.reshape(s), x, [-1])


def test_keyword_binding_uses_the_common_schema(torch):
    x = rand(3, 4)
    for name, kwargs, expected in [
            ("aten::sum", {"dim": 1}, torch.sum(to_torch(x), 1)),
            ("aten::sum", {"dim": [0, 1], "keepdim": True}, torch.sum(to_torch(x), [0, 1], True)),
            ("aten::mean", {}, torch.mean(to_torch(x))),
            ("aten::max", {}, torch.max(to_torch(x))),
            ("aten::softmax", {"dim": -1}, torch.softmax(to_torch(x), -1)),
            ("aten::squeeze", {}, torch.squeeze(to_torch(x)))]:
        op = registry.get(name)
        same(op.impl(np, *op.bind([x], dict(kwargs))), expected)
    op = registry.get("aten::max")
    same(list(op.impl(np, *op.bind([x], {"dim": 0}))), list(torch.max(to_torch(x), 0)))


def _lstm_graph(constant_chunk: bool) -> Graph:
    """The corpus lstm_cell, scripted (aten::chunk + prim::ListUnpack) or in the fusion-group
    form (prim::ConstantChunk)."""
    g = Graph()
    x, h, c, wi, wh, b = (g.add_input(n) for n in ("x", "h", "c", "Wi", "Wh", "b"))
    one = g.insert_constant(1)
    add = lambda a, b_: g.create("aten::add", [a, b_, one]).output()    # noqa: E731
    gates = add(add(g.create("aten::matmul", [x, wi]).output(),
                    g.create("aten::matmul", [h, wh]).output()), b)
    if constant_chunk:
        parts = g.create("prim::ConstantChunk", [gates], [TENSOR] * 4,
                         {"chunks": 4, "dim": 1}).outputs
    else:
        lst = g.create("aten::chunk", [gates, g.insert_constant(4), one],
                       [ListType(TENSOR)]).output()
        parts = g.create("prim::ListUnpack", [lst], [TENSOR] * 4).outputs
    i, f, gg, o = (g.create(k, [v]).output() for k, v in zip(
        ["aten::sigmoid", "aten::sigmoid", "aten::tanh", "aten::sigmoid"], parts))
    c_new = add(g.create("aten::mul", [f, c]).output(), g.create("aten::mul", [i, gg]).output())
    h_new = g.create("aten::mul", [o, g.create("aten::tanh", [c_new]).output()]).output()
    g.set_outputs([g.create("prim::TupleConstruct", [h_new, c_new]).output()])
    return g


@pytest.mark.parametrize("constant_chunk", [False, True])
def test_lstm_cell_matches_corpus(constant_chunk):
    from corpus_utils import assert_matches, flatten_outputs, input_sets
    for kind in ("aten::sigmoid", "aten::tanh", "aten::mul", "aten::add"):
        if registry.lookup(kind) is None:
            pytest.skip(f"{kind} is not registered yet")
    for label, args, expected in input_sets("lstm_cell"):
        outs = flatten_outputs(Interpreter(_lstm_graph(constant_chunk)).run(*args))
        for k, out in enumerate(outs):
            assert_matches(out, expected[f"out{k}"], f"lstm_cell {label} out{k}")


# -- type inference on unknowns ------------------------------------------------------------------

MY_OPS = ["aten::matmul", "aten::mm", "aten::bmm", "aten::chunk", "prim::ConstantChunk",
          "aten::split", "aten::select", "aten::slice", "aten::t", "aten::transpose",
          "aten::permute", "aten::reshape", "aten::view", "aten::flatten", "aten::unsqueeze",
          "aten::squeeze", "aten::expand", "aten::expand_as", "aten::contiguous", "aten::clone",
          "aten::detach", "aten::cat", "aten::stack", "aten::sum", "aten::mean", "aten::amax",
          "aten::amin", "aten::max", "aten::min", "aten::argmax", "aten::argmin",
          "aten::softmax", "aten::log_softmax", "aten::size", "aten::dim", "aten::numel",
          "aten::Bool", "aten::Int", "aten::Float", "aten::ScalarImplicit", "aten::item",
          "aten::len", "aten::__getitem__", "aten::__contains__", "aten::format", "aten::str",
          "aten::floordiv", "aten::__not__", "aten::__is__", "prim::TupleIndex", "prim::unchecked_cast", "prim::device",
          "prim::dtype", "prim::NumToTensor", "prim::Print", "prim::RaiseException",
          "prim::Uninitialized", "prim::CallFunction", "prim::TupleConstruct",
          "prim::TupleUnpack", "prim::ListConstruct", "prim::ListUnpack"]


@pytest.mark.parametrize("kind", MY_OPS)
@pytest.mark.parametrize("input_type", [TENSOR, TensorType("float32", (None, 3, None)), ANY])
def test_infer_never_raises_on_unknowns(kind, input_type):
    op = registry.get(kind)
    for n_in in range(0, 5):
        g = Graph()
        ins = [g.add_input(None, input_type) for _ in range(n_in)]
        node = g.create(kind, ins, [TENSOR, TENSOR], {"chunks": 2, "dim": 1})
        types = op.infer(node, [v.type for v in ins])
        assert isinstance(types, list)


def test_infer_through_list_construct_and_sizes():
    """view(x.size(0), -1) as traces record it: sizes of known dims resolve."""
    g = Graph()
    x = g.add_input("x", TensorType("float32", (4, 6)))
    size0 = g.create("aten::size", [x, g.insert_constant(0)], [INT]).output()
    dims = g.create("prim::ListConstruct", [size0, g.insert_constant(-1)],
                    [ListType(INT)]).output()
    node = g.create("aten::view", [x, dims], [TENSOR])
    assert registry.get("aten::view").infer(node, [x.type, dims.type]) == \
        [TensorType("float32", (4, 6))]
    unknown = g.add_input("n", INT)
    dims2 = g.create("prim::ListConstruct", [unknown, g.insert_constant(3)],
                     [ListType(INT)]).output()
    node2 = g.create("aten::reshape", [x, dims2], [TENSOR])
    assert registry.get("aten::reshape").infer(node2, [x.type, dims2.type]) == \
        [TensorType("float32", (None, 3))]


@pytest.mark.parametrize("name", ["sum", "mean", "cumsum", "cumprod", "vector_norm", "norm",
                                  "matmul"])
def test_reductions_of_inf_and_nan_are_silent_and_match_torch(torch, name):
    """inf - inf inside a sum, an overflowing product or square: IEEE results, computed by
    PyTorch without a warning; numpy's warning would be an error under ``-W error``.  Eager
    calls (``run_impl``) and the interpreter run every op under ``np.errstate``."""
    import warnings

    from torchlike.frontend.calls import run_impl
    x = np.array([[np.inf, -np.inf, 1.0], [np.nan, 2.0, 3.0], [1e38, 1e38, -1e38]], np.float32)
    calls = {"sum": ("aten::sum", [[-1], False, None], lambda t: t.sum(-1)),
             "mean": ("aten::mean", [[-1], False, None], lambda t: t.mean(-1)),
             "cumsum": ("aten::cumsum", [1, None], lambda t: t.cumsum(1)),
             "cumprod": ("aten::cumprod", [1, None], lambda t: t.cumprod(1)),
             "vector_norm": ("aten::linalg_vector_norm", [2, [1], False, None],
                             lambda t: torch.linalg.vector_norm(t, 2, [1])),
             "norm": ("aten::norm", [2, [1], False], lambda t: t.norm(2, [1])),
             "matmul": ("aten::matmul", [x.T.copy()], lambda t: t @ t.T)}
    kind, args, ref = calls[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run_impl(registry.get(kind), [x, *args])
        graph = ir.parse_graph("graph(%a : Tensor):\n  %b : Tensor = aten::t(%a)\n"
                               "  %c : Tensor = aten::matmul(%a, %b)\n  return (%c)")
        interpreted = jit.run(graph, x)
    np.testing.assert_array_equal(got, ref(torch.from_numpy(x)).numpy())
    np.testing.assert_array_equal(interpreted, torch.from_numpy(x) @ torch.from_numpy(x).T)
