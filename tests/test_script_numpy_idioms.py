"""The numpy idioms users write, scripted and traced: ``x.T``, ``x.shape[i]``, ``len(x)``,
``x.astype(dtype)``, reductions with ``axis=`` / ``keepdims=``, basic indexing (ints, slices,
None, ``...``), ``tl.zeros(3, 4)`` and ``tl.zeros((3, 4))``, ``range(x.shape[0])`` loops and tuple
returns -- each against numpy running the same function, and what is not supported reported with
the source line."""
import numpy as np
import pytest

import torchlike as tl
from torchlike import jit
from torchlike.errors import ScriptError


def transpose(x):
    return x.T * 2.0


def shape_scale(x):
    return x * x.shape[0] + x.ndim


def length(x):
    return x * len(x)


def astype(x):
    return x.astype(np.float64) + 1.0


def mean_rows(x):
    return x.mean(axis=1, keepdims=True)


def sum_cols(x):
    return x.sum(axis=0) + np.sum(x, axis=-1, keepdims=True)


def index_int(x):
    return x[0] + x[-1]


def index_none(x):
    return x[:, None, 1] * x[None]


def slices(x):
    return x[1:, ::2] + x[:-1, 1::2]


def zeros_sizes(x):
    return tl.zeros(3, 4) + tl.ones((3, 4)) + x


def row_loop(x):
    y = x[0]
    for i in range(x.shape[0]):
        y = y + x[i] * i
    return y


def pair(x):
    a, b = x * 2.0, x.T[1:]
    return a, b


FUNCTIONS = [transpose, shape_scale, length, astype, mean_rows, sum_cols, index_int, index_none,
             slices, zeros_sizes, row_loop, pair]


def _x():
    return np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


def _check(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert np.asarray(g).shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_scripted_matches_numpy(fn):
    x = _x()
    _check(jit.script(fn)(x), fn(x))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_traced_matches_numpy(fn):
    x = _x()
    _check(jit.trace(fn, (x,))(x), fn(x))


def test_scripted_shape_generalizes():
    """x.shape[0] in a scripted loop reads the input's size at run time (not baked in)."""
    f = jit.script(row_loop)
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    _check(f(x), row_loop(x))


def test_scripted_graph_records_torchscript_ops():
    text = str(jit.script(index_none).graph) + str(jit.script(transpose).graph)
    for kind in ("aten::unsqueeze", "aten::select", "aten::numpy_T"):
        assert kind in text, text


def test_factory_sizes_eager():
    assert tl.zeros(3, 4).shape == (3, 4)
    assert tl.ones(2).shape == (2,)
    assert tl.empty(2, 2, dtype=tl.int32).dtype == np.int32
    assert tl.zeros([2, 3], dtype=np.float64).dtype == np.float64
    assert tl.full((2, 2), 3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]


def advanced(x):
    return x[x > 0]


def two_ellipses(x):
    return x[..., 0, ...]


@pytest.mark.parametrize("fn, message", [
    (advanced, "advanced indexing"),
    (two_ellipses, "single ellipsis"),
])
def test_unsupported_indexing_names_the_line(fn, message):
    with pytest.raises(ScriptError, match=message) as info:
        jit.script(fn)(_x())
    assert "test_script_numpy_idioms.py" in str(info.value)
