"""Derivative rules of the rest of the pointwise ops (``ops/derivatives_pointwise_more.py``)
against ``torch.autograd``: each op in float64 (rtol 1e-10) and float32, on domains where it is
smooth, then PyTorch's conventions at special points (sinc at 0, fmax/fmin with NaN, copysign at
+-0, i1 at 0, nextafter ties, xlog1py at x == 0), integer operands without gradients, prelu's
weight reductions, and the derivatives PyTorch refuses (raised as ``UnsupportedOpError``)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import torchlike as tl
from tests.autodiff_check import U, _rng, check_against_torch, check_case, needs_torch
from tests.autodiff_check import make as _make
from torchlike import jit
from torchlike.errors import UnsupportedOpError
from torchlike.ir import parse_graph
from torchlike.ops import registry

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

pytestmark = pytest.mark.usefixtures("unfused")  # the rules are under test


def _t(name):
    """torch's function of a torchlike name (``special_i0e`` -> ``torch.special.i0e``)."""
    if name.startswith("special_"):
        return getattr(torch.special, name[len("special_"):])
    return getattr(torch, name)


S = (3, 5)
A = U(-2, 2, *S)
UNARY = {  # name: domain where the op is smooth
    "acosh": (1.2, 3), "asinh": (-2, 2), "atanh": (-0.9, 0.9), "deg2rad": (-2, 2),
    "rad2deg": (-2, 2), "digamma": (0.5, 4), "sinc": (-2, 2), "i0": (-2, 2),
    "special_i0e": (-3, 3), "special_i1": (-3, 3), "special_i1e": (-3, 3),
    "special_ndtr": (-3, 3), "special_log_ndtr": (-3, 3), "special_ndtri": (0.05, 0.95),
    "special_erfcx": (-1, 3), "special_entr": (0.1, 2), "angle": (-2, 2),
    "conj_physical": (-2, 2), "resolve_conj": (-2, 2), "resolve_neg": (-2, 2),
}


def _unary(n, lo, hi):
    return (n, lambda m, x: getattr(tl, n)(x) * 2.0, lambda x: _t(n)(x) * 2.0,
            [U(lo, hi, *S)])


CASES = [_unary(n, *d) for n, d in UNARY.items()]
CASES += [
    ("polygamma0", lambda m, x: m.polygamma(0, x), None, [U(0.5, 4, *S)]),
    ("polygamma1", lambda m, x: m.polygamma(1, x), None, [U(0.5, 4, *S)]),
    ("polygamma2", lambda m, x: m.polygamma(2, x), None, [U(0.5, 4, *S)]),
    ("mvlgamma_p1", lambda m, x: m.mvlgamma(x, 1), None, [U(0.5, 4, *S)]),
    ("mvlgamma_p3", lambda m, x: m.mvlgamma(x, 3), None, [U(1.5, 4, *S)]),
    ("copysign", lambda m, x, y: m.copysign(x, y), None, [A, U(-2, 2, 5)]),
    ("copysign_scalar", lambda m, x: m.copysign(x, -1.0), None, [A]),
    ("fmax_broadcast", lambda m, x, y: m.fmax(x, y), None, [A, U(-2, 2, 5)]),
    ("fmin_broadcast", lambda m, x, y: m.fmin(x, y), None, [U(-2, 2, 3, 1), A]),
    ("float_power", lambda m, x, y: m.float_power(x, y), None, [U(0.5, 2, *S), U(-1, 2, 5)]),
    ("float_power_scalar", lambda m, x: m.float_power(x, 3.0), None, [A]),
    ("float_power_rscalar", lambda m, x: m.float_power(2.0, x), None, [A]),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), None, [A, U(-2, 2, 3, 1)]),
    ("ldexp_float", lambda m, x, y: m.ldexp(x, y), None, [A, U(-2, 2, 5)]),
    ("ldexp_int_const", lambda m, x: m.ldexp(x, (m.tensor if m is torch else np.array)(
        [0, 1, 2, 3, 5])), None, [A]),
    ("xlog1py", lambda m, x, y: m.special_xlog1py(x, y) if m is tl else
     torch.special.xlog1py(x, y), None, [A, U(-0.5, 2, *S)]),
    ("xlog1py_scalar_other", lambda m, x: m.special_xlog1py(x, 0.5) if m is tl else
     torch.special.xlog1py(x, 0.5), None, [A]),
    ("nextafter", lambda m, x, y: m.nextafter(x, y), None, [A, U(-2, 2, 5)]),
    ("zeta_scalar_x", lambda m, q: m.special_zeta(2.5, q) if m is tl else
     torch.special.zeta(2.5, q), None, [U(0.5, 3, *S)]),
    ("prelu_scalar_weight", lambda m, x, w: m.prelu(x, w) if m is tl else F.prelu(x, w), None,
     [U(-2, 2, 2, 3, 4), U(0.1, 0.5, 1)]),
    ("prelu_per_channel", lambda m, x, w: m.prelu(x, w) if m is tl else F.prelu(x, w), None,
     [U(-2, 2, 2, 3, 4), U(0.1, 0.5, 3)]),
    ("prelu_1d", lambda m, x, w: m.prelu(x, w) if m is tl else F.prelu(x, w), None,
     [U(-2, 2, 6), U(0.1, 0.5, 1)]),
    ("rrelu_eval", lambda m, x: m.rrelu(x, 0.1, 0.3) if m is tl else F.rrelu(x, 0.1, 0.3),
     None, [A]),
    ("rrelu_eval_defaults", lambda m, x: m.rrelu(x) if m is tl else F.rrelu(x), None, [A]),
    ("alpha_dropout_eval", lambda m, x: m.alpha_dropout(x, 0.5, False) * x, None, [A]),
    ("feature_dropout_eval", lambda m, x: m.feature_dropout(x, 0.3, False) * x, None,
     [U(-2, 2, 2, 3, 4)]),
    ("feature_alpha_dropout_eval", lambda m, x: m.feature_alpha_dropout(x, 0.3, False) * x,
     None, [U(-2, 2, 2, 3, 4)]),
    ("frexp", lambda m, x: m.frexp(x * 5.0)[0] * 3.0, None, [A]),
]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch_float64(case):
    arrays = [_make(s, np.float64, _rng(7)) if i == 0 else _make(s, np.float64, _rng(8 + i))
              for i, s in enumerate(case[3])]
    check_case(case, arrays, "float64")


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch_float32(case):
    arrays = [_make(s, np.float32, _rng(11)) if i == 0 else _make(s, np.float32, _rng(12 + i))
              for i, s in enumerate(case[3])]
    check_case(case, arrays, "float32")


# -- PyTorch's conventions at special points (float64, exact values) ---------------------------

NAN = float("nan")
SPECIAL = [
    ("sinc_at_0", lambda m, x: m.sinc(x), [np.array([0.0, -0.0, 0.5, 1.0, -1.5])]),
    ("fmax_nan", lambda m, x, y: m.fmax(x, y),
     [np.array([1.0, NAN, 2.0, NAN, 3.0, -0.0]), np.array([NAN, 1.0, 2.0, NAN, 1.0, 0.0])]),
    ("fmin_nan", lambda m, x, y: m.fmin(x, y),
     [np.array([1.0, NAN, 2.0, NAN, 3.0, 0.0]), np.array([NAN, 1.0, 2.0, NAN, 1.0, -0.0])]),
    ("copysign_at_zeros", lambda m, x, y: m.copysign(x, y),
     [np.array([0.0, -0.0, 0.0, -0.0, 1.5, -2.0]), np.array([-1.0, 1.0, 0.0, -0.0, -0.0, 0.0])]),
    ("i1_at_0", lambda m, x: m.special_i1(x) if m is tl else torch.special.i1(x),
     [np.array([0.0, -0.0, 1e-300, -1e-17, 0.7])]),
    ("i1e_at_0", lambda m, x: m.special_i1e(x) if m is tl else torch.special.i1e(x),
     [np.array([0.0, -0.0, 1e-300, -1e-17, 0.7])]),
    ("i0e_at_0", lambda m, x: m.special_i0e(x) if m is tl else torch.special.i0e(x),
     [np.array([0.0, -0.0, -0.7, 0.7])]),
    ("nextafter_ties", lambda m, x, y: m.nextafter(x, y),
     [np.array([1.0, 2.0, -0.5, 0.0]), np.array([1.0, 1.0, -0.5, 1.0])]),
    ("xlog1py_x0", lambda m, x, y: m.special_xlog1py(x, y) if m is tl else
     torch.special.xlog1py(x, y), [np.array([0.0, 0.0, 0.0, 1.0]),
                                   np.array([-1.0, -1.5, 0.5, 0.5])]),
    ("entr_at_0", lambda m, x: m.special_entr(x) if m is tl else torch.special.entr(x),
     [np.array([0.0, 0.5, 1.0])]),
    ("fmax_ties", lambda m, x, y: m.fmax(x, y), [np.array([1.0, 2.0]), np.array([1.0, 2.0])]),
    ("float_power_zero_base", lambda m, x, y: m.float_power(x, y),
     [np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.0, 0.0])]),
]


@needs_torch
@pytest.mark.parametrize("case", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_points_follow_pytorch(case):
    name, fn, arrays = case
    check_against_torch(lambda *a: fn(tl, *a), lambda *a: fn(torch, *a), arrays)


# -- integer operands, gradients of one operand ------------------------------------------------

@needs_torch
@pytest.mark.parametrize("op", ["ldexp", "copysign", "fmax", "float_power"])
def test_integer_operand_gets_no_gradient(op):
    x = _rng(0).uniform(0.5, 2, S)
    n = np.arange(15).reshape(S) % 4
    check_against_torch(lambda a, b: getattr(tl, op)(a, b), lambda a, b: getattr(torch, op)(a, b),
                        [x, n])


def test_ldexp_negative_integer_exponent_is_exact():
    # PyTorch's integer 2 ** other truncates negative exponents to 0 in its formula; the
    # derivative of x * 2 ** n is 2 ** n
    x, n = _rng(0).standard_normal(6), np.array([-3, -1, 0, 1, 4, -60])
    out, pullback = jit.vjp(lambda a, b: tl.ldexp(a, b), x, n)
    gx, gn = pullback(np.ones(6))
    assert gn is None
    np.testing.assert_array_equal(gx, np.ldexp(1.0, n))


@needs_torch
@pytest.mark.parametrize("op", ["special_zeta", "igamma", "igammac"])
def test_second_operand_only(op):
    """zeta, igamma and igammac have a derivative in their second operand only: it is computed
    when the first needs none (not asked for, or an integer cast to float)."""
    a, x = _rng(0).uniform(1.5, 3, S), _rng(1).uniform(0.5, 3, S)
    g = jit.grad(lambda p, q: tl.sum(getattr(tl, op)(p, q) * q), argnums=1)(a, x)
    at, xt = torch.tensor(a), torch.tensor(x, requires_grad=True)
    (_t(op)(at, xt) * xt).sum().backward()
    np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-10)
    n = np.array([2, 3, 4])
    f = lambda k, q: getattr(tl, op)(k.astype(np.float64), q)  # noqa: E731
    out, pullback = jit.vjp(f, n, x[0, :3])
    gn, gq = pullback(np.ones(3))
    xt = torch.tensor(x[0, :3], requires_grad=True)
    _t(op)(torch.tensor(n, dtype=torch.float64), xt).sum().backward()
    assert gn is None
    np.testing.assert_allclose(gq, xt.grad.numpy(), rtol=1e-10)


# -- derivatives PyTorch refuses ---------------------------------------------------------------

REFUSED = [  # (id, function, the node's kind, why)
    ("special_zeta_x", lambda x, q: tl.special_zeta(x, q), "special_zeta", "zeta with respect to x"),
    ("igamma_a", lambda a, x: tl.igamma(a, x), "igamma", "igamma with respect to its first"),
    ("igammac_a", lambda a, x: tl.igammac(a, x), "igammac", "igammac with respect to its first"),
    ("heaviside", lambda x, v: tl.heaviside(x, v), "heaviside", "heaviside"),
    ("floor_divide", lambda x, y: x // y, "floor_divide", "floor_divide"),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_derivatives_name_the_node(case):
    name, fn, kind, why = case
    a, b = _rng(0).uniform(1.5, 3, S), _rng(1).uniform(0.5, 3, S)
    with pytest.raises(UnsupportedOpError, match=rf"no derivative for aten::{kind}\(.*{why}"):
        jit.vjp(fn, a, b)


class _StubCtx:
    """The rule context as far as a rule that refuses reads it (the forward of these ops
    refuses training mode itself, so the rule is reached only through a hand-made context)."""

    def __init__(self, kind, statics):
        self.node = SimpleNamespace(kind=kind, describe=lambda: f"{kind}(%x)",
                                    inputs=[None] * (len(statics) + 1))
        self._statics = statics

    def static(self, i):
        return self._statics[i - 1]


@pytest.mark.parametrize("kind,statics", [
    ("aten::rrelu", [0.1, 0.3, True, None]),
    ("aten::alpha_dropout", [0.5, True]),
    ("aten::feature_dropout", [0.5, True]),
    ("aten::feature_alpha_dropout", [0.5, True]),
])
def test_training_mode_randomness_is_refused(kind, statics):
    with pytest.raises(UnsupportedOpError, match=rf"no derivative for {kind}\(%x\).*random"):
        registry.lookup(kind).vjp(_StubCtx(kind, statics), [object()])


@pytest.mark.parametrize("kind", ["aten::alpha_dropout", "aten::feature_dropout",
                                  "aten::feature_alpha_dropout"])
def test_dropout_with_p_zero_in_training_is_the_identity(kind):
    g = object()
    assert registry.lookup(kind).vjp(_StubCtx(kind, [0.0, True]), [g]) == [g, None, None]


# -- graph-level ops: _prelu_kernel and torchlike's norm helpers ----------------------------------

@needs_torch
def test_prelu_kernel_broadcast_weight():
    fn = jit.ScriptFunction(parse_graph("""graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::_prelu_kernel(%x, %w)
  return (%y)"""))
    x, w = _rng(0).uniform(-2, 2, (2, 3, 4)), _rng(1).uniform(0.1, 0.5, (1, 3, 1))
    check_against_torch(fn, torch._prelu_kernel, [x, w])


def test_norm_helpers_pass_the_gradient_on():
    fn = jit.ScriptFunction(parse_graph("""graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %shape : int[] = prim::Constant[value=[4]]()
  %name : str = prim::Constant[value="rms_norm"]()
  %a : Tensor = torchlike::norm_input(%x, %w, %none, %shape, %name)
  %b : Tensor = torchlike::add_dtype_eps(%a)
  %c : Tensor = aten::mul(%b, %w)
  %d : Tensor = torchlike::cast_like(%c, %x)
  return (%d)"""))
    x = _rng(0).standard_normal((3, 4)).astype(np.float32)
    w, cot = _rng(1).standard_normal(4), _rng(2).standard_normal((3, 4)).astype(np.float32)
    out, pullback = jit.vjp(fn, x, w)
    gx, gw = pullback(cot)
    assert out.dtype == gx.dtype == np.float32 and gw.dtype == np.float64
    np.testing.assert_allclose(gx, (cot.astype(np.float64) * w).astype(np.float32), rtol=1e-6)
    eps = float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(gw, (cot * (x + np.float32(eps))).astype(np.float64).sum(0),
                               rtol=1e-6)


def test_mvlgamma_gradient_is_a_digamma_sum():
    x = np.array([2.0, 3.5])
    out, pullback = jit.vjp(lambda a: tl.mvlgamma(a, 4), x)
    (g,) = pullback(np.ones(2))
    want = [sum(_digamma(v - k / 2) for k in range(4)) for v in x]
    np.testing.assert_allclose(g, want, rtol=1e-8)


def _digamma(v, h=1e-5):  # a central difference of lgamma (smooth where it is used)
    return (math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h)
