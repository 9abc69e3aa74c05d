"""``ops/special_more.py`` against PyTorch (the ``torch`` fixture; mpmath, where installed, as
the float64 truth).

* each op's implementation (``op.impl``, what the interpreter runs for a node) over the grid of
  special values (-inf, -1e30, -100, ..., -0.0, 0, tiny, ..., 1e30, inf, nan) and random values,
  in every dtype PyTorch accepts, within the bound stated per op: ulps of PyTorch's result, wider
  (and said why) where PyTorch's own float32 kernel is that far off the true value;
* refusals: PyTorch's exception type and message;
* the fused ops' Numba and CUDA C kernels against the interpreter, every dtype;
* the ops inside scripted and traced functions, run interpreted, fused and strict
  (``graph_modes.against_torch``): the fused ops inside a ``prim::FusionGroup``, the interpreted
  ones outside any, and strict mode running without a fallback.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from differential import assert_same, backend_missing, group_node, require, run
from graph_modes import against_torch, program_module

from torchlike import jit
from torchlike.errors import ExecutionError, UnsupportedOpError
from torchlike.fuser import config
from torchlike.ir import parse_graph
from torchlike.ir.types import TENSOR
from torchlike.ops import get, registry
from torchlike.passes import infer_types

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("kernel_cache")]

SPECIAL = [-math.inf, -1e30, -100.0, -7.5, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-30, 1e-3, 0.5, 1.0,
           2.0, 3.7, 10.0, 100.0, 1e30, math.inf, math.nan]
_rng = np.random.default_rng(0)
RANDOM = np.concatenate([_rng.standard_normal(1500) * 3, _rng.uniform(-30, 100, 1500),
                         np.exp(_rng.uniform(-20, 8, 1000))])
INTS = np.array([-100, -7, -3, -2, -1, 0, 1, 2, 3, 7, 40, 100])


def values(dtype):
    """The test values in ``dtype``: the special grid then random values (integers: INTS)."""
    if np.dtype(dtype).kind in "iu":
        return INTS.astype(dtype)
    if dtype == "bool":
        return np.array([False, True])
    with np.errstate(over="ignore"):
        return np.concatenate([SPECIAL, RANDOM]).astype(dtype)


def pairs(dtype, a_extra=(), b_extra=()):
    """Every pair of special values, then random pairs (``a_extra``/``b_extra`` appended)."""
    a, b = (m.ravel() for m in np.meshgrid(SPECIAL, SPECIAL, indexing="ij"))
    with np.errstate(over="ignore"):
        return (np.concatenate([a, *a_extra]).astype(dtype),
                np.concatenate([b, *b_extra]).astype(dtype))


def assert_close(got, want, ulps=0, rtol=0.0, atol=0.0):
    """``got`` matches PyTorch's ``want``: dtype, shape, NaN and infinities exactly, the sign of
    a zero both give, finite values within ``ulps`` of want's type (a number or an array) plus
    ``rtol`` |want| plus ``atol``."""
    w = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
    g = np.asarray(got)
    assert (g.dtype, g.shape) == (w.dtype, w.shape)
    if w.dtype.kind != "f":
        np.testing.assert_array_equal(g, w)
        return
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    inf = np.isinf(w) | np.isinf(g)
    np.testing.assert_array_equal(g[inf], w[inf])
    fin = ~np.isnan(w) & ~inf
    g64, w64 = g[fin].astype(np.float64), w[fin].astype(np.float64)
    ulps = np.broadcast_to(ulps, w.shape)[fin]
    bound = ulps * np.spacing(np.abs(w[fin])).astype(np.float64) + rtol * np.abs(w64) + atol
    bad = np.abs(g64 - w64) > bound
    off = np.abs(g64 - w64) / np.spacing(np.abs(w[fin]))
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ: got {g64[bad][:4]!r}, want "
                           f"{w64[bad][:4]!r}, ulps {off[bad][:4]}")
    zeros = (g64 == 0) & (w64 == 0)
    np.testing.assert_array_equal(np.signbit(g64[zeros]), np.signbit(w64[zeros]))


def T(torch, v):
    return torch.from_numpy(np.ascontiguousarray(v))


def impl(name, *args):
    return get(f"aten::{name}").impl(np, *args)


# -- unary ops ------------------------------------------------------------------------------------

# (ulps, atol) per op and dtype class, measured with margin.  ndtr: PyTorch's is the composite
# (1 + erf(x / sqrt 2)) / 2 whose tail keeps erf's absolute error (2**-24 in float32); erfcx:
# its Chebyshev pieces near x = 0 are 8 ulp below the true value (float32 and float64 alike;
# ours are within 2); ndtri: 5 ulp of float arithmetic.
UNARY = {"special_ndtr": {"float16": (1, 0), "float32": (2, 2 ** -23), "float64": (4, 2 ** -52)},
         "special_erfcx": {"float32": (10, 0), "float64": (10, 0)},
         "special_log_ndtr": {"float32": (4, 0), "float64": (4, 0)},
         "special_ndtri": {"float32": (6, 0), "float64": (8, 0)}}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_match_torch(torch, name, dtype):
    fn = getattr(torch.special, name.removeprefix("special_"))
    x = values(dtype)
    if name == "special_ndtri" and dtype.startswith("float"):  # its domain [0, 1], finely
        x = np.concatenate([x, _rng.uniform(0, 1, 3000), np.exp(-_rng.uniform(0, 700, 500))]
                           ).astype(dtype)
    bounds = UNARY[name]
    if dtype == "float16" and dtype not in bounds:  # PyTorch has no Half kernel for it
        with pytest.raises(NotImplementedError) as theirs:
            fn(T(torch, x))
        with pytest.raises(UnsupportedOpError, match=re.escape(str(theirs.value))):
            impl(name, x)
        return
    ulps, atol = bounds.get(dtype, bounds["float32"])
    assert_close(impl(name, x), fn(T(torch, x)), ulps, atol=atol)


def test_special_values_exactly(torch):
    """The edges ATen's kernels spell out, exactly: ndtri's 0 / 1 / outside [0, 1], erfcx's
    inf below -26.7 and 1/(x sqrt(pi)) above 5e7, log_ndtr's -inf and -0.0."""
    for dt in ("float32", "float64"):
        y = np.array([0, 1, -0.0, -1e-30, 1 + 1e-7, math.inf, -math.inf, math.nan], dt)
        assert_close(impl("special_ndtri", y), torch.special.ndtri(T(torch, y)))
        x = np.array([-math.inf, -27, -26.7, -26, -6.2, -6.0, 5e7, 6e7, 1e30, math.inf], dt)
        assert_close(impl("special_erfcx", x), torch.special.erfcx(T(torch, x)), 4)
        assert_close(impl("special_log_ndtr", x), torch.special.log_ndtr(T(torch, x)), 4)


# -- polygamma, zeta, mvlgamma --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma_matches_torch(torch, n, dtype):
    """n = 0 is digamma's entry (float32: its float64 evaluation is up to 5e-7 off PyTorch's
    float arithmetic where digamma crosses 0); trigamma and zeta within a few ulp, float64's
    zeta sum at negative x within 1e-13 (terms cancel)."""
    x = values(dtype)
    bound = {"float16": (1, 0, 0), "float64": (16, 1e-13, 0)}.get(
        dtype, (6, 0, 1e-6 if n == 0 else 0))
    assert_close(impl("polygamma", n, x), torch.polygamma(n, T(torch, x)), bound[0],
                 bound[1], bound[2])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_zeta_matches_torch(torch, dtype):
    s, q = pairs(dtype, [_rng.uniform(1, 20, 2000), 1 + np.exp(_rng.uniform(-20, 3, 500))],
                 [_rng.uniform(-30, 50, 2000), np.exp(_rng.uniform(-10, 8, 500))])
    if dtype == "int64":
        s, q = (np.clip(v, -50, 50) for v in (np.nan_to_num(s), np.nan_to_num(q)))
        s, q = s.astype(dtype), q.astype(dtype)
    want = torch.special.zeta(T(torch, s), T(torch, q))
    ulps = 16 if dtype == "float64" else 2  # float64: numpy's pow vs libm's, summed
    assert_close(impl("special_zeta", s, q), want, ulps)
    # the Scalar overloads: special_zeta(x, 2.0) and special_zeta(3.0, q)
    assert_close(impl("special_zeta", s, 2.0), torch.special.zeta(T(torch, s), 2.0), ulps)
    assert_close(impl("special_zeta", 3.0, q), torch.special.zeta(3.0, T(torch, q)), ulps)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_mvlgamma_matches_torch(torch, p, dtype):
    """Sums of lgamma: where the terms cancel (results near 0, negative x) lgamma's own
    last-ulp differences from PyTorch's show as absolute errors (1e-6 in float32)."""
    x = values(dtype)
    bound = {"float16": (1, 0), "float64": (16, 1e-13)}.get(dtype, (8, 1e-6))
    assert_close(impl("mvlgamma", x, p), torch.mvlgamma(T(torch, x), p), bound[0],
                 atol=bound[1])


# -- igamma, igammac ------------------------------------------------------------------------------

def _gamma_args(dtype):
    n = 2000
    a = [_rng.uniform(0, 5, n), _rng.uniform(0, 100, n), np.exp(_rng.uniform(-10, 10, n))]
    x = [_rng.uniform(0, 10, n), _rng.uniform(0, 150, n), np.exp(_rng.uniform(-10, 10, n))]
    near = _rng.uniform(20, 1e4, n)  # Temme's expansion: large a, x near a
    a.append(near)
    x.append(near * (1 + _rng.uniform(-1, 1, n) * np.where(near < 200, 0.3, 4.5 / np.sqrt(near))))
    return pairs(dtype, a, x)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch(torch, name, dtype):
    """Within a few ulp where the result is well conditioned.  x^a e^-x / Gamma(a) is
    exp(a log x - x - lgamma(a)): rounding those terms costs their size in ulps of the result
    (PyTorch's float32 igammac(48, 71.3) is 300 ulp off the true value), so the bound grows with
    ``cond`` = 1 + |a log x| + x + |lgamma(a)|: 16 cond ulps (float32), 64 cond (float64)."""
    a, x = _gamma_args(dtype)
    want = getattr(torch, name)(T(torch, a), T(torch, x))
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    with np.errstate(all="ignore"):
        lg = np.array([math.lgamma(v) if 0 < v < 1e300 else 0.0 for v in a64])
        cond = np.nan_to_num(1 + np.abs(a64 * np.log(x64)) + np.abs(x64) + np.abs(lg), posinf=0)
    if dtype == "float16":
        assert_close(impl(name, a, x), want, 1, atol=1e-4)
    else:
        assert_close(impl(name, a, x), want, 8 + (16 if dtype == "float32" else 64) * cond)


def test_incomplete_gamma_as_accurate_as_torch(torch):
    """float64 against mpmath's exact values: ours is as close to the truth as PyTorch's."""
    mpmath = pytest.importorskip("mpmath")
    a = np.array([0.5, 3.0, 25.0, 150.0, 1e4, 1e-3, 7.5, 300.0, 80.0])
    x = np.array([0.2, 2.5, 24.0, 170.0, 1.001e4, 0.8, 30.0, 250.0, 40.0])
    for name, lower in (("igamma", True), ("igammac", False)):
        ours, theirs = impl(name, a, x), getattr(torch, name)(T(torch, a), T(torch, x)).numpy()
        true = np.array([float(mpmath.gammainc(ai, 0, xi, regularized=True) if lower else
                               mpmath.gammainc(ai, xi, mpmath.inf, regularized=True))
                         for ai, xi in zip(a, x)])
        err, terr = np.abs(ours - true) / true, np.abs(theirs - true) / true
        assert (err <= 2 * terr + 4e-16).all(), (name, err, terr)


def test_incomplete_gamma_edges_and_dtypes(torch):
    a = np.array([0, 0, 0, 1, math.inf, math.inf, 2, -1, 1, math.nan, 1], np.float32)
    x = np.array([0, 1, math.inf, 0, 1, math.inf, math.inf, 1, -1, 1, math.nan], np.float32)
    for name in ("igamma", "igammac"):
        assert_close(impl(name, a, x), getattr(torch, name)(T(torch, a), T(torch, x)))
        # an integer operand promotes with a float one; integers alone have no kernel
        i = np.array([1, 2, 5])
        f = x[:3] + 1
        assert_close(impl(name, i, f), getattr(torch, name)(T(torch, i), T(torch, f)))
        with pytest.raises(NotImplementedError) as theirs:
            getattr(torch, name)(T(torch, i), T(torch, i))
        with pytest.raises(UnsupportedOpError, match=re.escape(str(theirs.value))):
            impl(name, i, i)


# -- float_power, frexp ---------------------------------------------------------------------------

@pytest.mark.parametrize("da,db", [("float32", "float32"), ("int64", "float32"),
                                   ("int64", "int64"), ("float16", "float64"), ("bool", "int64")])
def test_float_power_matches_torch(torch, da, db):
    """float64 whatever the operands; a Python-number exponent takes pow's forms (sqrt, ...)."""
    def cast(v, dtype):  # integers: the special values clipped into a small range
        if dtype == "bool":
            return v > 0
        if dtype.startswith("int"):
            v = np.nan_to_num(v, posinf=7, neginf=-7).clip(-9, 9)
        return v.astype(dtype)

    a, b = pairs("float64")
    a, b = cast(a, da), cast(b, db)
    assert_close(impl("float_power", a, b), torch.float_power(T(torch, a), T(torch, b)), 1)
    for e in (0.5, -0.5, 2, 3, -1, -2, 0, 1, 2.5, -3.0, math.nan):
        assert_close(impl("float_power", a, e), torch.float_power(T(torch, a), e), 1)
    for base in (2.0, -2, 1, 0.0):
        assert_close(impl("float_power", base, b), torch.float_power(base, T(torch, b)), 1)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_frexp_matches_torch(torch, dtype):
    x = values(dtype)
    if dtype == "int32":
        with pytest.raises(RuntimeError) as theirs:
            torch.frexp(T(torch, x))
        with pytest.raises(ExecutionError, match=re.escape(str(theirs.value))):
            impl("frexp", x)
        return
    with np.errstate(under="ignore"):
        x = np.concatenate([x, np.array([6e-8, 1e-40, 5e-324, 65504]).astype(dtype)])
    m, e = impl("frexp", x)
    want = torch.frexp(T(torch, x))
    assert_close(m, want.mantissa)
    assert_close(e, want.exponent)
    assert impl("frexp", 12.0) == (0.75, 4)  # TorchScript's frexp(float) -> (float, int)


# -- refusals -------------------------------------------------------------------------------------

def test_errors_match_torch(torch):
    x = np.array([0.5, 2.0], np.float32)
    cases = [(lambda: torch.polygamma(-1, T(torch, x)), lambda: impl("polygamma", -1, x)),
             (lambda: torch.mvlgamma(T(torch, x), 0), lambda: impl("mvlgamma", x, 0)),
             (lambda: torch.mvlgamma(T(torch, x > 1), 2), lambda: impl("mvlgamma", x > 1, 2)),
             (lambda: torch.special.zeta(T(torch, x.astype(np.float16)), T(torch, x)[0].half()),
              lambda: impl("special_zeta", x.astype(np.float16), np.float16(1.5)))]
    for theirs, ours in cases:
        with pytest.raises(Exception) as want:
            theirs()
        with pytest.raises(type(want.value)) as got:
            ours()
        assert str(got.value) == str(want.value).split("\n")[0]
    # mvlgamma no longer checks x > (p - 1) / 2 in PyTorch 2.13: values below it are summed too
    assert_close(impl("mvlgamma", x, 3), torch.mvlgamma(T(torch, x), 3), 4)


# -- graph spellings ------------------------------------------------------------------------------

SPELLINGS = """
graph(%x : Tensor, %a : Tensor):
  %0 : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %dims : int[] = prim::ListConstruct(%0)
  %p : int = prim::Constant[value=2]()
  %1 : Tensor = aten::special_log_softmax(%x, %0, %none)
  %2 : Tensor = aten::special_softmax(%x, %0, %none)
  %3 : Tensor = aten::special_logsumexp(%x, %dims, %false)
  %4 : Tensor = aten::special_multigammaln(%a, %p)
  %5 : Tensor = aten::special_gammainc(%a, %x)
  %6 : Tensor = aten::special_gammaincc(%a, %x)
  %7 : Tensor = aten::special_polygamma(%p, %a)
  return (%1, %2, %3, %4, %5, %6, %7)
"""


def test_spellings_resolve_to_the_existing_ops(torch):
    for alias, name in (("special_log_softmax", "log_softmax"), ("special_softmax", "softmax"),
                        ("special_logsumexp", "logsumexp"), ("special_multigammaln", "mvlgamma"),
                        ("special_gammainc", "igamma"), ("special_gammaincc", "igammac"),
                        ("special_polygamma", "polygamma")):
        assert registry.lookup(f"aten::{alias}") is get(f"aten::{name}")
    x = np.array([0.5, 1.5, 3.0, 0.1], np.float32)
    a = np.array([1.0, 2.5, 4.0, 0.7], np.float32)
    X, A = T(torch, x), T(torch, a)
    want = (torch.special.log_softmax(X, 0), torch.special.softmax(X, 0),
            torch.special.logsumexp(X, [0]), torch.special.multigammaln(A, 2),
            torch.special.gammainc(A, X), torch.special.gammaincc(A, X),
            torch.special.polygamma(2, A))
    for mode in (False, True):
        graph = jit.fuse(parse_graph(SPELLINGS)) if mode else parse_graph(SPELLINGS)
        for g, w in zip(jit.run(graph, x, a), want):
            assert_close(g, w, 4)


def test_type_inference():
    graph = infer_types(parse_graph("""
graph(%x : Tensor, %i : Tensor):
  %2 : int = prim::Constant[value=2]()
  %a : Tensor = aten::polygamma(%2, %i)
  %b : Tensor = aten::igamma(%x, %x)
  %c : Tensor = aten::special_zeta(%i, %2)
  %d : Tensor = aten::float_power(%i, %2)
  %m : Tensor, %e : Tensor = aten::frexp(%x)
  return (%a, %b, %c, %d, %m, %e)
"""), [np.zeros((2, 3), np.float64), np.zeros(3, np.int64)])
    types = [(v.type.dtype, v.type.shape) for v in graph.outputs]
    assert types == [("float32", (3,)), ("float64", (2, 3)), ("float32", (3,)),
                     ("float64", (3,)), ("float64", (2, 3)), ("int32", (2, 3))]


# -- kernels and graphs ---------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["cpu", "cuda-emulated"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
def test_fused_kernels_match_interpreter(backend, dtype):
    """special_ndtr (float16 rounding between its steps) and float_power in one kernel."""
    require(backend_missing(backend))
    node = group_node(2, lambda sub, p: [
        sub.create("aten::special_ndtr", [p[0]], [TENSOR]).output(),
        sub.create("aten::float_power", [p[0], p[1]], [TENSOR]).output()])
    x, y = pairs(dtype) if dtype != "int64" else np.meshgrid(INTS, INTS % 5)
    args = [np.asarray(x).ravel(), np.asarray(y).ravel()]
    assert_same(run(backend, node, args), run("interpreter", node, args), f"{dtype}")


SOURCE = '''
import torch


def fused_fn(x, y):
    return torch.special.ndtr(x * 2.0 - 1.0) * 3.0 + torch.float_power(x, y) \\
        - torch.float_power(x.abs(), 0.5)


def special_fn(x, a):
    m, e = torch.frexp(x * 3.0)
    p = torch.polygamma(2, a + 0.25) + torch.special.zeta(a + 1.5, 2.0)
    g = torch.igamma(a, x.abs()) - torch.igammac(a + 1.0, x.abs() * 2.0)
    s = torch.special.erfcx(x) + torch.special.log_ndtr(x) + torch.mvlgamma(a + 2.0, 3)
    return m * 2.0, e, p.exp(), g + 1.0, s * 0.5, torch.special.ndtri(torch.sigmoid(x))
'''


def test_functions_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "special_more_programs", SOURCE)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=gen)
    y = torch.rand(4, 5, generator=gen) * 3
    a = torch.rand(4, 5, generator=gen) * 4 + 0.1
    against_torch(torch, mod.fused_fn, (x, y))
    against_torch(torch, mod.special_fn, (x, a))
    # the fused ops join a FusionGroup; the interpreted ones stay outside, and strict mode
    # compiles every group (no fallback)
    for fn, args, inside, outside in (
            (mod.fused_fn, (x, y), {"aten::special_ndtr", "aten::float_power"}, set()),
            (mod.special_fn, (x, a), set(), {"aten::polygamma", "aten::special_zeta",
                                             "aten::igamma", "aten::igammac", "aten::frexp",
                                             "aten::special_erfcx", "aten::special_log_ndtr",
                                             "aten::mvlgamma", "aten::special_ndtri"})):
        for graph in (torch.jit.script(fn).graph, torch.jit.trace(fn, args).graph):
            fused = jit.fuse(parse_graph(str(graph)))
            groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
            kinds = {m.kind for g in groups for m in g.attrs["Subgraph"].nodes}
            assert groups and inside <= kinds and not kinds & outside, kinds
            assert outside <= {n.kind for n in fused.nodes}
            config.set_strict(True)
            try:
                jit.reset_stats()
                jit.run(fused, *[v.numpy() for v in args])
                assert jit.stats()["fallbacks"] == {}
            finally:
                config.set_strict(False)
