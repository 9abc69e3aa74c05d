"""Derivative rules of the rest of the pointwise ops (see ``derivatives.py`` for the rule
protocol): inverse hyperbolics, copysign, fmax/fmin, float_power, angle conversions, the special
functions (digamma, polygamma, mvlgamma, sinc, the Bessel i0/i0e/i1/i1e, ndtr, log_ndtr, ndtri,
erfcx, entr, xlog1py, zeta, igamma/igammac), logaddexp2, ldexp, frexp, nextafter, prelu, eval-mode
rrelu and the dropout variants, and the identities (conj_physical, resolve_conj/neg and
torchlike's norm helpers).

Each follows PyTorch 2.13's formula (tools/autograd/derivatives.yaml, FunctionsManual.cpp) and
its conventions: copysign's gradient is 0 at self == +-0 and none flows to ``other``; fmax/fmin
give a tie to ``self`` and the whole gradient to the non-NaN operand; sinc's is 0 at 0, i1's and
i1e's 0.5 for |x| <= eps; angle of a real input has a zero gradient; nextafter passes the
gradient to ``self`` except where self == other.  Where PyTorch raises for a derivative
(heaviside, floor_divide, zeta and igamma/igammac with respect to their first operand, random
ops in training mode) the rule raises ``UnsupportedOpError`` naming the node -- for the
operand-specific ones only when that operand needs a gradient, as PyTorch does.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import TensorType
from .derivatives import attach
from .derivatives_elementwise import _dropout, _identity, _Ops, _pow, _rest, _unary, _zero
from .derivatives_structured import _shape

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN2 = math.log(2.0)


def _refuse(ctx, why):
    raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: {why}")


def _operand(ctx, i):
    """Node input ``i``: its Python number when it is a constant scalar, else its value."""
    v = ctx.node.inputs[i]
    if v.is_constant():
        c = v.constant_value()
        if isinstance(c, (int, float)) and not isinstance(c, bool):
            return float(c)
    return ctx.input(i)


def _eps(ctx):
    """The machine epsilon of the input's compute dtype (i1's and i1e's ``tiny`` threshold)."""
    t = ctx.node.inputs[0].type
    dt = t.dtype if isinstance(t, TensorType) else None
    return float(np.finfo(np.float64 if dt == "float64" else np.float32).eps)


# -- unary -------------------------------------------------------------------------------------

def _sinc(b, g, x, y):
    # PyTorch's sinc_backward: g * (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where pi x^2 == 0
    xpi = b.mul(x, math.pi)
    sq = b.mul(b.mul(x, x), math.pi)
    out = b.div(b.mul(g, b.sub(b.mul(xpi, b.cos(xpi)), b.sin(xpi))), sq)
    return b.where(b.eq(sq, 0.0), 0.0, out)


def _bessel_i1(exp_scaled):
    """special_i1 (``exp_scaled`` False) / special_i1e: PyTorch's i1_backward / i1e_backward.
    The formula divides by x, so |x| <= eps takes the limit 0.5 (x is replaced by eps inside
    the formula so that it stays finite there)."""
    def rule(ctx, grads):
        b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.output(0)
        eps = _eps(ctx)
        big = b.gt(b.abs(x), eps)
        safe = b.where(big, x, eps)
        if exp_scaled:
            d = b.sub(b.special_i0e(safe), b.mul(y, b.add(b.sgn(safe), b.reciprocal(safe))))
        else:
            d = b.sub(b.i0(safe), b.div(y, safe))
        return [b.mul(g, b.where(big, d, 0.5))]
    return rule


def _mvlgamma(ctx, grads):
    # d/dx sum_k lgamma(x + (k - (p - 1)) / 2) = sum_k digamma(x + (k - (p - 1)) / 2)
    b, g, x, p = _Ops(ctx), grads[0], ctx.input(0), ctx.static(1)
    total = None
    for k in range(p):
        c = (k - (p - 1)) / 2.0
        d = b.digamma(x if c == 0 else b.add(x, c))
        total = d if total is None else b.add(total, d)
    return [b.mul(g, total), None]


def _polygamma(ctx, grads):
    b = _Ops(ctx)
    return [None, b.mul(grads[0], b.polygamma(ctx.static(0) + 1, ctx.input(1)))]


def _rrelu(ctx, grads):
    lower, upper, training = ctx.static(1), ctx.static(2), ctx.static(3)
    if training:
        _refuse(ctx, "rrelu in training mode draws random slopes that the forward does not "
                     "save")
    # eval mode is leaky_relu with the mean slope (PyTorch's leaky_relu_backward: x > 0)
    b, g = _Ops(ctx), grads[0]
    slope = (lower + upper) / 2
    return _rest(ctx, [b.where(b.gt(ctx.input(0), 0.0), g, b.mul(g, slope))])


def _frexp(ctx, grads):
    # PyTorch: grad / exponent.exp2(); ldexp(grad, -exponent) is the same, exactly, without
    # exp2's float32 overflow for float64 exponents beyond 127
    if grads[0] is None:
        return [None]
    b = _Ops(ctx)
    return [b.ldexp(grads[0], b.neg(ctx.output(1)))]


# -- binary ------------------------------------------------------------------------------------

def _copysign(ctx, grads):
    # copysign_tensor_self_backward: g * result / self, 0 where self == 0 (+0 or -0); other: 0
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    ratio = b.where(b.eq(x, 0.0), 0.0, b.div(ctx.output(0), x))
    return [b.mul(g, ratio), None]


def _fminmax(cmp):
    """fmax (``cmp="ge"``) / fmin (``"le"``): self takes the gradient where it is the result
    (ties included) or other is NaN; other takes the rest."""
    def rule(ctx, grads):
        b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
        mask = b.logical_or(getattr(b, cmp)(x, y), b.isnan(y))
        return [b.where(mask, g, 0.0), b.where(mask, 0.0, g)]
    return rule


def _logaddexp2(ctx, grads):
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    return [b.div(g, b.add(b.exp2(b.sub(y, x)), 1.0)), b.div(g, b.add(b.exp2(b.sub(x, y)), 1.0))]


def _ldexp(ctx, grads):
    # self * 2 ** other: self's cotangent g * 2 ** other (ldexp itself: exact for integer
    # exponents, where PyTorch's integer 2 ** other truncates negative ones to 0); other's
    # g * result * ln 2 (an integer other has none)
    b, g, other = _Ops(ctx), grads[0], ctx.input(1)
    return [b.ldexp(g, other), b.mul(b.mul(g, ctx.output(0)), _LN2)]


def _xlog1py(ctx, grads):
    # as xlogy: x's cotangent is 0 where x == 0 and y <= -1 (log1p undefined there)
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    gx = b.where(b.logical_and(b.eq(x, 0.0), b.le(y, -1.0)), 0.0, b.special_xlog1py(g, y))
    return [gx, b.div(b.mul(g, x), b.add(y, 1.0))]


def _nextafter(ctx, grads):
    # PyTorch 2.13: self's gradient passes (one ulp away: locally the identity) except where
    # self == other (the result is other there); other gets none
    b, g = _Ops(ctx), grads[0]
    return [b.where(b.ne(ctx.input(0), ctx.input(1)), g, 0.0), None]


def _refused(why):
    def rule(ctx, grads):
        _refuse(ctx, why)
    return rule


def _zeta(ctx, grads):
    # d/dq zeta(x, q) = -x zeta(x + 1, q); PyTorch has no derivative in x
    if ctx.needs_grad(0):
        _refuse(ctx, "the derivative of zeta with respect to x (self) is not implemented, as in "
                     "PyTorch")
    b, g, x, q = _Ops(ctx), grads[0], _operand(ctx, 0), ctx.input(1)
    if isinstance(x, float):
        return [None, b.mul(g, b.mul(b.special_zeta(x + 1.0, q), -x))]
    return [None, b.mul(g, b.mul(b.special_zeta(b.add(x, 1.0), q), b.neg(x)))]


def _igamma(sign):
    """igamma (``sign`` 1) / igammac (-1): d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); PyTorch has
    no derivative in a."""
    def rule(ctx, grads):
        if ctx.needs_grad(0):
            _refuse(ctx, f"the derivative of {ctx.node.kind[6:]} with respect to its first "
                         f"operand (self) is not implemented, as in PyTorch")
        b, g, a, x = _Ops(ctx), grads[0], _operand(ctx, 0), ctx.input(1)
        if isinstance(a, float):
            expo = b.sub(b.sub(b.mul(b.log(x), a - 1.0), x), math.lgamma(a))
        else:
            expo = b.sub(b.sub(b.mul(b.sub(a, 1.0), b.log(x)), x), b.lgamma(a))
        d = b.exp(expo)
        return [None, b.mul(g, d) if sign > 0 else b.neg(b.mul(g, d))]
    return rule


# -- prelu -------------------------------------------------------------------------------------

def _prelu_parts(b, g, x, w):
    """PyTorch's _prelu_kernel_backward: x's cotangent g where x > 0 else w g, the weight's
    x g where x <= 0 (both in the broadcast shape)."""
    pos = b.gt(x, 0.0)
    return b.where(pos, g, b.mul(w, g)), b.where(pos, 0.0, b.mul(x, g))


def _prelu_kernel(ctx, grads):
    b = _Ops(ctx)
    return list(_prelu_parts(b, grads[0], ctx.input(0), ctx.input(1)))


def _prelu(ctx, grads):
    """prelu: the weight (one value, or one per channel: dim 1) is viewed to broadcast over the
    input; its cotangent is summed over the other dims and viewed back."""
    b, x, w = _Ops(ctx), ctx.input(0), ctx.input(1)
    xs, ws = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[1])
    if xs is None or ws is None:
        _refuse(ctx, "the shapes of its input and weight must be known")
    view = list(ws)
    if len(xs) != len(ws):
        view = [1] * len(xs)
        if len(xs) > 1:
            view[1] = math.prod(ws)
        w = b.reshape(w, view)
    gx, gw = _prelu_parts(b, grads[0], x, w)
    if len(xs) != len(ws):
        gw = b.reshape(b.sum_to_size(gw, view), list(ws))
    return [gx, gw]


RULES = {
    "aten::acosh": _unary(lambda b, g, x, y: b.mul(g, b.rsqrt(b.sub(b.mul(x, x), 1.0)))),
    "aten::asinh": _unary(lambda b, g, x, y: b.mul(g, b.rsqrt(b.add(b.mul(x, x), 1.0)))),
    "aten::atanh": _unary(lambda b, g, x, y: b.div(g, b.rsub(b.mul(x, x), 1.0))),
    "aten::deg2rad": _unary(lambda b, g, x, y: b.mul(g, math.pi / 180.0)),
    "aten::rad2deg": _unary(lambda b, g, x, y: b.mul(g, 180.0 / math.pi)),
    "aten::digamma": _unary(lambda b, g, x, y: b.mul(g, b.polygamma(1, x))),
    "aten::polygamma": _polygamma,
    "aten::mvlgamma": _mvlgamma,
    "aten::sinc": _unary(_sinc),
    "aten::i0": _unary(lambda b, g, x, y: b.mul(g, b.special_i1(x))),
    "aten::special_i0e": _unary(lambda b, g, x, y: b.mul(
        g, b.sub(b.special_i1e(x), b.mul(b.sgn(x), y)))),
    "aten::special_i1": _bessel_i1(False),
    "aten::special_i1e": _bessel_i1(True),
    "aten::special_ndtr": _unary(lambda b, g, x, y: b.mul(
        g, b.mul(b.exp(b.mul(b.mul(x, x), -0.5)), 1.0 / _SQRT_2PI))),
    "aten::special_log_ndtr": _unary(lambda b, g, x, y: b.mul(g, b.mul(b.exp(b.neg(b.add(
        y, b.mul(b.mul(x, x), 0.5)))), 1.0 / _SQRT_2PI))),
    "aten::special_ndtri": _unary(lambda b, g, x, y: b.mul(
        g, b.mul(b.exp(b.mul(b.mul(y, y), 0.5)), _SQRT_2PI))),
    "aten::special_erfcx": _unary(lambda b, g, x, y: b.mul(
        g, b.sub(b.mul(b.mul(x, y), 2.0), _TWO_OVER_SQRT_PI))),
    "aten::special_entr": _unary(lambda b, g, x, y: b.mul(g, b.neg(b.add(b.log(x), 1.0)))),
    "aten::frexp": _frexp,
    "aten::rrelu": _rrelu,
    "aten::angle": _zero,  # a real input's angle is piecewise constant (PyTorch: zeros)
    "aten::conj_physical": _identity,
    "aten::resolve_conj": _identity,
    "aten::resolve_neg": _identity,
    **{f"aten::{n}": _dropout for n in ("alpha_dropout", "feature_dropout",
                                        "feature_alpha_dropout")},
    "aten::copysign": _copysign,
    "aten::fmax": _fminmax("ge"),
    "aten::fmin": _fminmax("le"),
    "aten::float_power": _pow,  # pow's formulas; the engine casts the float64 cotangents back
    "aten::logaddexp2": _logaddexp2,
    "aten::ldexp": _ldexp,
    "aten::special_xlog1py": _xlog1py,
    "aten::nextafter": _nextafter,
    "aten::heaviside": _refused("PyTorch does not implement the derivative of heaviside"),
    "aten::floor_divide": _refused("PyTorch does not implement the derivative of floor_divide "
                                   "(div with rounding_mode='floor' has a zero one)"),
    "aten::special_zeta": _zeta,
    "aten::igamma": _igamma(1),
    "aten::igammac": _igamma(-1),
    "aten::prelu": _prelu,
    "aten::_prelu_kernel": _prelu_kernel,
    # torchlike's norm helpers pass their input on (cast_like to another dtype: the engine
    # casts the cotangent back); their other operands are only checked, not read
    "torchlike::norm_input": _identity,
    "torchlike::cast_like": _identity,
    "torchlike::add_dtype_eps": _identity,
}

attach(RULES)
