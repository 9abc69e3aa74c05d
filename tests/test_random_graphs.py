"""Property test: random graphs of elementwise ops over random shapes, dtypes and special values.

Each graph must print, parse and print back identically, and the interpreter must agree with a
direct numpy evaluation written here from scratch (float64 arithmetic rounded to the result
dtype, with PyTorch's promotion spelled out independently of the registry's)."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlike.interpreter import run
from torchlike.ir import FLOAT, INT, Graph, TensorType, parse_graph

SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1), (0, 3)]
DTYPES = ["float32", "float64", "int32", "int64"]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.5, 1e30, 1e-30]


def promote(a: str, b: str, a_0d: bool = False, b_0d: bool = False) -> str:
    """torch.result_type for the dtypes used here: an int with a float gives the float, and a
    0-d tensor beside a tensor with dimensions only counts if its category is higher."""
    fa, fb = a.startswith("float"), b.startswith("float")
    if fa != fb:
        return a if fa else b
    if a_0d != b_0d:
        return b if a_0d else a
    return str(np.promote_types(a, b))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# name -> (arity, numpy formula on float64 values, result dtype from operand dtypes)
BINARY = {
    "aten::mul": lambda a, b: a * b,
    "aten::sub": lambda a, b: a - b,
    "aten::maximum": lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b)),
    "aten::minimum": lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.minimum(a, b)),
}
UNARY_ANY = {"aten::neg": lambda a: -a, "aten::abs": np.abs,
             "aten::relu": lambda a: np.where(np.isnan(a), np.nan, np.maximum(a, 0))}
UNARY_FLOAT = {"aten::tanh": np.tanh, "aten::exp": np.exp, "aten::sigmoid": sigmoid}


def _values(draw, shape, dtype):
    n = int(np.prod(shape))
    if dtype.startswith("float"):
        vals = draw(st.lists(st.one_of(st.sampled_from(SPECIALS),
                                       st.floats(-10, 10, allow_nan=False)), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n))
    return np.array(vals, dtype=dtype).reshape(shape)


@st.composite
def programs(draw):
    """A random graph with its inputs and the numpy evaluation of each of its values."""
    g = Graph()
    shape_of = draw(st.sampled_from(SHAPES))
    values, env, inputs = [], {}, []
    for i in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from([shape_of, shape_of[1:], ()])) if shape_of else ()
        dtype = draw(st.sampled_from(DTYPES))
        v = g.add_input(f"x{i}", TensorType(dtype, shape))
        arr = _values(draw, shape, dtype)
        inputs.append(arr)
        env[v] = (arr.astype(np.float64), dtype)
        values.append(v)
    one = g.insert_constant(1, INT)
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(sorted(BINARY) + sorted(UNARY_ANY) + sorted(UNARY_FLOAT)
                                    + ["aten::add", "aten::add_scalar"]))
        a = draw(st.sampled_from(values))
        (va, da) = env[a]
        if kind in UNARY_ANY or kind in UNARY_FLOAT:
            out_dtype = da if kind in UNARY_ANY else (da if da.startswith("float") else "float32")
            if kind == "aten::abs" and da.startswith("int"):
                result = np.abs(va)
            else:
                with np.errstate(all="ignore"):
                    result = (UNARY_ANY.get(kind) or UNARY_FLOAT.get(kind))(va)
            node = g.create(kind, [a], [TensorType(out_dtype)])
        elif kind == "aten::add_scalar":  # a Python float never widens a float tensor
            c = draw(st.sampled_from([0.5, -2.0, 3.0]))
            out_dtype = da if da.startswith("float") else "float32"
            result = va + c
            node = g.create("aten::add", [a, g.insert_constant(c, FLOAT), one],
                            [TensorType(out_dtype)])
        else:
            b = draw(st.sampled_from(values))
            (vb, db) = env[b]
            out_dtype = promote(da, db, va.ndim == 0, vb.ndim == 0)
            # PyTorch computes in the result dtype: a wider 0-d operand (float64 beside a
            # float32 tensor) is rounded to it first (1e30 - float64(1e30) is 0 in float32).
            va, vb = (np.asarray(v).astype(out_dtype).astype(np.float64) for v in (va, vb))
            with np.errstate(all="ignore"):
                result = va + vb if kind == "aten::add" else BINARY[kind](va, vb)
            if out_dtype.startswith("int") and np.max(np.abs(result), initial=0) >= 2 ** 30:
                kind = "aten::minimum"  # keep integer results exact (no wrap-around to model)
                result = BINARY[kind](va, vb)
            inputs_ = [a, b, one] if kind == "aten::add" else [a, b]
            node = g.create(kind, inputs_, [TensorType(out_dtype)])
        with np.errstate(all="ignore"):
            rounded = np.asarray(result).astype(out_dtype)
        env[node.output()] = (rounded.astype(np.float64), out_dtype)
        values.append(node.output())
    outs = draw(st.lists(st.sampled_from(values[len(inputs):]), min_size=1, max_size=2,
                         unique=True))
    g.set_outputs(outs)
    expected = [(env[v][0].astype(env[v][1]), env[v][1]) for v in outs]
    return g, inputs, expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_elementwise_graphs(program):
    graph, inputs, expected = program
    text = str(graph)
    assert str(parse_graph(text)) == text
    result = run(graph, *inputs)
    results = list(result) if isinstance(result, tuple) else [result]
    for got, (want, dtype) in zip(results, expected):
        assert got.dtype == np.dtype(dtype), text
        assert got.shape == want.shape, text
        if dtype.startswith("float"):
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=text)
            finite = np.isfinite(want)
            np.testing.assert_array_equal(got[~finite & ~np.isnan(want)],
                                          want[~finite & ~np.isnan(want)], err_msg=text)
            np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=1e-30,
                                       err_msg=text)
        else:
            np.testing.assert_array_equal(got, want, err_msg=text)
