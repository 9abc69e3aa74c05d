"""Derivative rules of the pointwise ops (see ``derivatives.py`` for the rule protocol).

Each rule returns cotangents in the output's (broadcast) shape; the engine sums them back to
each input's shape and casts them to its dtype.  Kinks follow PyTorch's autograd formulas
(tools/autograd/derivatives.yaml): relu's gradient is 0 at 0 (``threshold_backward`` on the
result), abs uses ``sgn`` (0 at 0), clamp passes the gradient where ``min <= x <= max``,
hardtanh where ``min < x < max``, ``maximum``/``minimum`` split it half/half between equal
operands, and ops that are piecewise constant (floor, round, sign, comparisons, a ``div`` with a
rounding mode) give no gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from .derivatives import attach

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ONE_SIXTH = float(np.float32(1.0 / 6.0))  # PyTorch's hardsigmoid_backward: 1.0f / 6.0f
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class _Ops:
    """``b.mul(x, y)`` emits ``aten::mul(x, y)`` through the rule's context."""

    def __init__(self, ctx):
        self.ctx = ctx

    def __getattr__(self, name):
        return lambda *args: self.ctx.emit("aten::" + name, *args)


def _rest(ctx, first):
    """``first`` followed by None for every other input of the node."""
    return list(first) + [None] * (len(ctx.node.inputs) - len(first))


def _unary(deriv):
    """A rule ``g * f'(x)``: ``deriv(b, g, x, y)`` returns the input cotangent."""
    def rule(ctx, grads):
        b = _Ops(ctx)
        return _rest(ctx, [deriv(b, grads[0], ctx.input(0), ctx.output(0))])
    return rule


def _zero(ctx, grads):
    return [None] * len(ctx.node.inputs)


def _identity(ctx, grads):
    return _rest(ctx, [grads[0]])


def _where0(b, mask, g):
    """``g`` where ``mask``, else 0."""
    return b.where(mask, g, 0.0)


def _gelu(ctx, grads):
    # aten::gelu_backward, PyTorch's own op: torchlike's float32 kernel for it computes the erf
    # form's Phi(x) + x phi(x) with one exp (an expansion spends an erf and an exp)
    return [_Ops(ctx).gelu_backward(grads[0], ctx.input(0), ctx.static(1)), None]


def _gelu_backward(ctx, grads):
    """gelu_backward(g, x)'s rule: gelu'(x) gg for g, g gelu''(x) gg for x; erf form gelu'' =
    phi(x) (2 - x^2); tanh form (1 - t^2)(u' - x t u'^2 + 3 beta kappa x^2), t = tanh(u),
    u = beta (x + kappa x^3)."""
    b, gg, g, x, approximate = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1), ctx.static(2)
    d_g = b.gelu_backward(gg, x, approximate) if ctx.needs_grad(0) else None
    if not ctx.needs_grad(1):
        return [d_g, None, None]
    x_sq = b.mul(x, x)
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        t = b.tanh(b.mul(b.add(x, b.mul(b.mul(x_sq, x), kappa)), beta))
        du = b.mul(b.add(b.mul(x_sq, 3.0 * kappa), 1.0), beta)
        inner = b.add(b.sub(du, b.mul(b.mul(x, t), b.mul(du, du))),
                      b.mul(x_sq, 3.0 * beta * kappa))
        second = b.mul(b.rsub(b.mul(t, t), 1.0), inner)
    else:
        pdf = b.mul(b.exp(b.mul(x_sq, -0.5)), _INV_SQRT_2PI)
        second = b.mul(pdf, b.rsub(x_sq, 2.0))
    return [d_g, b.mul(b.mul(gg, g), second), None]


def _sigmoid_backward(ctx, grads):
    """sigmoid_backward(g, y) = g (1 - y) y: sigmoid_backward(gg, y) for g, gg g (1 - 2y) for y
    (PyTorch's formulas)."""
    b, gg, g, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    d_g = b.sigmoid_backward(gg, y) if ctx.needs_grad(0) else None
    d_y = b.mul(b.mul(gg, g), b.rsub(b.mul(y, 2.0), 1.0)) if ctx.needs_grad(1) else None
    return [d_g, d_y]


def _tanh_backward(ctx, grads):
    """tanh_backward(g, y) = g (1 - y^2): tanh_backward(gg, y) for g, -2 y g gg for y."""
    b, gg, g, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    d_g = b.tanh_backward(gg, y) if ctx.needs_grad(0) else None
    d_y = b.mul(b.mul(gg, g), b.mul(y, -2.0)) if ctx.needs_grad(1) else None
    return [d_g, d_y]


def _silu_backward(ctx, grads):
    """silu_backward(g, x) = g silu'(x): silu_backward(gg, x) for g, gg g silu''(x) for x, with
    silu'' = s (1 - s) (2 + x (1 - 2s)) (PyTorch's silu_double_backward)."""
    b, gg, g, x = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    d_g = b.silu_backward(gg, x) if ctx.needs_grad(0) else None
    if not ctx.needs_grad(1):
        return [d_g, None]
    s = b.sigmoid(x)
    inner = b.add(b.mul(x, b.rsub(b.mul(s, 2.0), 1.0)), 2.0)
    second = b.mul(b.mul(s, b.rsub(s, 1.0)), inner)
    return [d_g, b.mul(b.mul(gg, g), second)]


def _threshold_backward(ctx, grads):
    """threshold_backward(g, x, t): the same mask for g's cotangent, none for x (piecewise
    constant in x: PyTorch's zeros)."""
    return [_Ops(ctx).threshold_backward(grads[0], ctx.input(1), ctx.static(2)), None, None]


def _logit_backward(ctx, grads):
    """logit_backward(g, x, eps) = g / (x (1 - x)): logit_backward(gg, x, eps) for g,
    gg g (2x - 1) / (x (1 - x))^2 for x (0 outside [eps, 1 - eps] with eps)."""
    b, gg, g, x, eps = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1), ctx.static(2)
    d_g = b.logit_backward(gg, x, eps) if ctx.needs_grad(0) else None
    if not ctx.needs_grad(1):
        return [d_g, None, None]
    d = b.mul(x, b.rsub(x, 1.0))
    d_x = b.div(b.mul(b.mul(gg, g), b.sub(b.mul(x, 2.0), 1.0)), b.mul(d, d))
    if eps is not None and eps >= 0:
        d_x = b.where(b.logical_or(b.lt(x, eps), b.gt(x, 1.0 - eps)), 0.0, d_x)
    return [d_g, d_x, None]


def _native_dropout_backward(ctx, grads):
    """native_dropout_backward(g, mask, scale) = g mask scale: linear in g; none for the mask."""
    b = _Ops(ctx)
    return [b.native_dropout_backward(grads[0], ctx.input(1), ctx.static(2)), None, None]


def _silu(b, g, x, y):
    s = b.sigmoid(x)
    return b.mul(g, b.mul(s, b.add(b.mul(x, b.rsub(s, 1.0)), 1.0)))


def _mish(b, g, x, y):
    t = b.tanh(b.softplus(x))
    return b.mul(g, b.add(t, b.mul(b.mul(x, b.sigmoid(x)), b.rsub(b.mul(t, t), 1.0))))


def _softplus(ctx, grads):
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    beta, threshold = ctx.static(1), ctx.static(2)
    xb = b.mul(x, beta)
    return [b.where(b.gt(xb, threshold), g, b.mul(g, b.sigmoid(xb))), None, None]


def _elu_like(ctx, g, alpha, scale, input_scale):
    b, x = _Ops(ctx), ctx.input(0)
    neg = b.mul(g, b.mul(b.exp(b.mul(x, input_scale)), input_scale * alpha * scale))
    return b.where(b.le(x, 0.0), neg, b.mul(g, scale))


def _elu(ctx, grads):
    return _rest(ctx, [_elu_like(ctx, grads[0], ctx.static(1), ctx.static(2), ctx.static(3))])


def _celu(ctx, grads):
    alpha = ctx.static(1)  # PyTorch's formula: input_scale = 1.0 / alpha.toFloat()
    return _rest(ctx, [_elu_like(ctx, grads[0], alpha, 1.0, 1.0 / float(np.float32(alpha)))])


def _selu(ctx, grads):
    return [_elu_like(ctx, grads[0], _SELU_ALPHA, _SELU_SCALE, 1.0)]


def _leaky_relu(ctx, grads):
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    return [b.where(b.gt(x, 0.0), g, b.mul(g, ctx.static(1))), None]


def _hardtanh_between(ctx, g, lo, hi):
    b, x = _Ops(ctx), ctx.input(0)
    return b.where(b.logical_or(b.le(x, lo), b.ge(x, hi)), 0.0, g)


def _hardswish(b, g, x, y):
    mid = b.mul(g, b.add(b.div(x, 3.0), 0.5))
    return b.where(b.lt(x, -3.0), 0.0, b.where(b.le(x, 3.0), mid, g))


def _threshold(ctx, grads):
    b = _Ops(ctx)
    return [b.where(b.le(ctx.input(0), ctx.static(1)), 0.0, grads[0]), None, None]


def _shrink(ctx, grads):
    b, x, lam = _Ops(ctx), ctx.input(0), ctx.static(1)
    return [b.where(b.logical_and(b.ge(x, -lam), b.le(x, lam)), 0.0, grads[0]), None]


# -- binary ------------------------------------------------------------------------------------

def _add(ctx, grads):
    b, g, alpha = _Ops(ctx), grads[0], ctx.static(2)
    return [g, g if alpha == 1 else b.mul(g, alpha), None]


def _sub(ctx, grads):
    b, g, alpha = _Ops(ctx), grads[0], ctx.static(2)
    return [g, b.neg(g) if alpha == 1 else b.mul(g, -alpha), None]


def _rsub(ctx, grads):  # other - alpha * self
    b, g, alpha = _Ops(ctx), grads[0], ctx.static(2)
    return [b.neg(g) if alpha == 1 else b.mul(g, -alpha), g, None]


def _mul(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    return [b.mul(g, ctx.input(1)), b.mul(g, ctx.input(0))]


def _div(ctx, grads):
    if ctx.static(2) is not None:  # floor/trunc division: piecewise constant
        return [None, None, None]
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    return [b.div(g, y), b.neg(b.div(b.mul(g, x), b.mul(y, y))), None]


def _pow(ctx, grads):
    b, g, x, e = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    node = ctx.node
    exp_static = node.inputs[1].constant_value() if node.inputs[1].is_constant() else None
    if isinstance(exp_static, (int, float)) and not hasattr(exp_static, "shape"):
        if exp_static == 0:
            return [None, None]
        gx = b.mul(g, b.mul(b.pow(x, exp_static - 1), exp_static))
        return [gx, None]
    gx = b.where(b.eq(e, 0.0), 0.0, b.mul(g, b.mul(b.pow(x, b.sub(e, 1.0)), e)))
    if node.inputs[0].is_constant() and isinstance(node.inputs[0].constant_value(),
                                                   (int, float)):
        base = float(node.inputs[0].constant_value())
        log_x = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        ge = b.mul(g, b.mul(ctx.output(0), log_x))
        if base == 0:
            ge = b.where(b.ge(e, 0.0), 0.0, ge)
        return [None, ge]
    ge = b.where(b.logical_and(b.eq(x, 0.0), b.ge(e, 0.0)), 0.0,
                 b.mul(g, b.mul(ctx.output(0), b.log(x))))
    return [gx, ge]


def _minmax(less):
    """maximum (``less="lt"``) / minimum (``"gt"``): PyTorch's
    ``where(self == other, grad / 2, grad).masked_fill_(self < other, 0)`` and its mirror."""
    def rule(ctx, grads):
        b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
        half = b.where(b.eq(x, y), b.mul(g, 0.5), g)
        cmp = getattr(b, less)
        return [b.where(cmp(x, y), 0.0, half), b.where(cmp(y, x), 0.0, half)]
    return rule


def _where(ctx, grads):
    b, g, c = _Ops(ctx), grads[0], ctx.input(0)
    return [None, b.where(c, g, 0.0), b.where(c, 0.0, g)]


def _clamp(ctx, grads):
    """clamp(x, min, max): x's gradient where min <= x <= max; a tensor bound gets the rest
    (PyTorch's ``clamp_backward_min_max``)."""
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    node = ctx.node
    has_min = not (node.inputs[1].is_constant() and node.inputs[1].constant_value() is None)
    has_max = len(node.inputs) > 2 and not (node.inputs[2].is_constant()
                                            and node.inputs[2].constant_value() is None)
    lo = ctx.input(1) if has_min else None
    hi = ctx.input(2) if has_max else None
    mask = None
    if has_min:
        mask = b.ge(x, lo)
    if has_max:
        m = b.le(x, hi)
        mask = m if mask is None else b.logical_and(mask, m)
    out = [g if mask is None else b.where(mask, g, 0.0), None, None][:len(node.inputs)]
    if has_min and has_max:
        out[1] = b.where(b.logical_and(b.lt(x, lo), b.lt(lo, hi)), g, 0.0)
        out[2] = b.where(b.logical_or(b.gt(x, hi), b.lt(hi, lo)), g, 0.0)
    elif has_min:
        out[1] = b.where(b.lt(x, lo), g, 0.0)
    elif has_max:
        out[2] = b.where(b.gt(x, hi), g, 0.0)
    return out


def _clamp_min(ctx, grads):
    b, g, x, lo = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    return [b.where(b.ge(x, lo), g, 0.0), b.where(b.lt(x, lo), g, 0.0)]


def _clamp_max(ctx, grads):
    b, g, x, hi = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    return [b.where(b.le(x, hi), g, 0.0), b.where(b.gt(x, hi), g, 0.0)]


def _lerp(ctx, grads):
    b, g, x, y, w = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1), ctx.input(2)
    return [b.mul(g, b.rsub(w, 1.0)), b.mul(g, w), b.mul(g, b.sub(y, x))]


def _addcmul(ctx, grads):
    b, g, v = _Ops(ctx), grads[0], ctx.static(3)
    t1, t2 = ctx.input(1), ctx.input(2)
    return [g, b.mul(b.mul(g, t2), v), b.mul(b.mul(g, t1), v), None]


def _addcdiv(ctx, grads):
    b, g, v = _Ops(ctx), grads[0], ctx.static(3)
    t1, t2 = ctx.input(1), ctx.input(2)
    return [g, b.div(b.mul(g, v), t2),
            b.neg(b.div(b.mul(b.mul(g, v), t1), b.mul(t2, t2))), None]


def _atan2(ctx, grads):
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    r = b.add(b.mul(x, x), b.mul(y, y))
    return [b.div(b.mul(g, y), r), b.neg(b.div(b.mul(g, x), r))]


def _hypot(ctx, grads):
    b, g, out = _Ops(ctx), grads[0], ctx.output(0)
    return [b.div(b.mul(g, ctx.input(0)), out), b.div(b.mul(g, ctx.input(1)), out)]


def _logaddexp(ctx, grads):
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    return [b.mul(g, b.sigmoid(b.sub(x, y))), b.mul(g, b.sigmoid(b.sub(y, x)))]


def _xlogy(ctx, grads):
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    gx = b.where(b.logical_and(b.eq(x, 0.0), b.le(y, 0.0)), 0.0, b.xlogy(g, y))
    return [gx, b.div(b.mul(g, x), y)]


def _masked_fill(ctx, grads):
    b, g, mask = _Ops(ctx), grads[0], ctx.input(1)
    return [b.where(mask, 0.0, g), None, b.where(mask, g, 0.0)]


def _remainder(rounding):
    """remainder (floor) / fmod (trunc): ``other``'s cotangent is ``-g * div(self, other)``
    rounded the same way (PyTorch's formulas)."""
    def rule(ctx, grads):
        b, g = _Ops(ctx), grads[0]
        q = b.div(ctx.input(0), ctx.input(1), rounding)
        return [g, b.neg(b.mul(g, q))]
    return rule


def _logit(ctx, grads):
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    eps = ctx.static(1)
    d = b.div(g, b.mul(x, b.rsub(x, 1.0)))
    if eps is None:
        return [d, None]
    return [b.where(b.logical_or(b.lt(x, eps), b.gt(x, 1.0 - eps)), 0.0, d), None]


def _dropout(ctx, grads):
    p, train = ctx.static(1), ctx.static(2)
    if not train or p == 0:
        return [grads[0], None, None]
    raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: dropout in training "
                             f"mode draws a random mask that the forward does not save")


def _nan_to_num(ctx, grads):
    b = _Ops(ctx)
    return _rest(ctx, [b.where(b.isfinite(ctx.input(0)), grads[0], 0.0)])


RULES = {
    "aten::neg": _unary(lambda b, g, x, y: b.neg(g)),
    "aten::positive": _identity,
    "aten::exp": _unary(lambda b, g, x, y: b.mul(g, y)),
    "aten::exp2": _unary(lambda b, g, x, y: b.mul(g, b.mul(y, math.log(2.0)))),
    "aten::expm1": _unary(lambda b, g, x, y: b.mul(g, b.add(y, 1.0))),
    "aten::log": _unary(lambda b, g, x, y: b.div(g, x)),
    "aten::log2": _unary(lambda b, g, x, y: b.div(g, b.mul(x, math.log(2.0)))),
    "aten::log10": _unary(lambda b, g, x, y: b.div(g, b.mul(x, math.log(10.0)))),
    "aten::log1p": _unary(lambda b, g, x, y: b.div(g, b.add(x, 1.0))),
    "aten::sqrt": _unary(lambda b, g, x, y: b.div(g, b.mul(y, 2.0))),
    "aten::rsqrt": _unary(lambda b, g, x, y: b.mul(g, b.mul(b.mul(y, b.mul(y, y)), -0.5))),
    "aten::reciprocal": _unary(lambda b, g, x, y: b.neg(b.mul(g, b.mul(y, y)))),
    "aten::square": _unary(lambda b, g, x, y: b.mul(g, b.mul(x, 2.0))),
    "aten::abs": _unary(lambda b, g, x, y: b.mul(g, b.sgn(x))),
    "aten::sin": _unary(lambda b, g, x, y: b.mul(g, b.cos(x))),
    "aten::cos": _unary(lambda b, g, x, y: b.neg(b.mul(g, b.sin(x)))),
    "aten::tan": _unary(lambda b, g, x, y: b.mul(g, b.add(b.mul(y, y), 1.0))),
    "aten::sinh": _unary(lambda b, g, x, y: b.mul(g, b.cosh(x))),
    "aten::cosh": _unary(lambda b, g, x, y: b.mul(g, b.sinh(x))),
    "aten::asin": _unary(lambda b, g, x, y: b.mul(g, b.rsqrt(b.rsub(b.mul(x, x), 1.0)))),
    "aten::acos": _unary(lambda b, g, x, y: b.neg(b.mul(g, b.rsqrt(b.rsub(b.mul(x, x), 1.0))))),
    "aten::atan": _unary(lambda b, g, x, y: b.div(g, b.add(b.mul(x, x), 1.0))),
    "aten::tanh": _unary(lambda b, g, x, y: b.mul(g, b.rsub(b.mul(y, y), 1.0))),
    "aten::sigmoid": _unary(lambda b, g, x, y: b.mul(g, b.mul(y, b.rsub(y, 1.0)))),
    "aten::log_sigmoid": _unary(lambda b, g, x, y: b.mul(g, b.sigmoid(b.neg(x)))),
    "aten::erf": _unary(lambda b, g, x, y: b.mul(g, b.mul(b.exp(b.neg(b.mul(x, x))),
                                                            _TWO_OVER_SQRT_PI))),
    "aten::erfc": _unary(lambda b, g, x, y: b.mul(g, b.mul(b.exp(b.neg(b.mul(x, x))),
                                                             -_TWO_OVER_SQRT_PI))),
    "aten::relu": _unary(lambda b, g, x, y: b.where(b.le(y, 0.0), 0.0, g)),
    "aten::relu6": lambda ctx, grads: [_hardtanh_between(ctx, grads[0], 0.0, 6.0)],
    "aten::hardtanh": lambda ctx, grads: [_hardtanh_between(ctx, grads[0], ctx.static(1),
                                                            ctx.static(2)), None, None],
    "aten::hardsigmoid": _unary(lambda b, g, x, y: b.where(
        b.logical_and(b.gt(x, -3.0), b.lt(x, 3.0)), b.mul(g, _ONE_SIXTH), 0.0)),
    "aten::hardswish": _unary(_hardswish),
    "aten::gelu": _gelu,
    "aten::gelu_backward": _gelu_backward,
    # PyTorch's backward kernels (ops/elementwise_backward.py): their double backward
    "aten::sigmoid_backward": _sigmoid_backward,
    "aten::tanh_backward": _tanh_backward,
    "aten::silu_backward": _silu_backward,
    "aten::threshold_backward": _threshold_backward,
    "aten::logit_backward": _logit_backward,
    "aten::native_dropout_backward": _native_dropout_backward,
    "aten::silu": _unary(_silu),
    "aten::mish": _unary(_mish),
    "aten::softplus": _softplus,
    "aten::elu": _elu,
    "aten::celu": _celu,
    "aten::selu": _selu,
    "aten::leaky_relu": _leaky_relu,
    "aten::threshold": _threshold,
    "aten::hardshrink": _shrink,
    "aten::softshrink": _shrink,
    "aten::add": _add,
    "aten::sub": _sub,
    "aten::rsub": _rsub,
    "aten::mul": _mul,
    "aten::div": _div,
    "aten::pow": _pow,
    "aten::maximum": _minmax("lt"),
    "aten::minimum": _minmax("gt"),
    "aten::where": _where,
    "aten::clamp": _clamp,
    "aten::clamp_min": _clamp_min,
    "aten::clamp_max": _clamp_max,
    "aten::lerp": _lerp,
    "aten::addcmul": _addcmul,
    "aten::addcdiv": _addcdiv,
    "aten::atan2": _atan2,
    "aten::hypot": _hypot,
    "aten::logaddexp": _logaddexp,
    "aten::xlogy": _xlogy,
    "aten::dropout": _dropout,
    "aten::masked_fill": _masked_fill,
    "aten::remainder": _remainder("floor"),
    "aten::fmod": _remainder("trunc"),
    "aten::logit": _logit,
    "aten::lgamma": _unary(lambda b, g, x, y: b.mul(g, b.digamma(x))),
    "aten::erfinv": _unary(lambda b, g, x, y: b.mul(g, b.mul(b.exp(b.mul(y, y)),
                                                             math.sqrt(math.pi) / 2.0))),
    "aten::nan_to_num": _nan_to_num,
    # casts: the engine casts the cotangent back to the input's dtype
    "aten::to": _identity,
    "aten::type_as": _identity,
    **{f"aten::_cast_{t}": _identity for t in ("Byte", "Char", "Double", "Float", "Half",
                                                "Int", "Long", "Short")},
    # piecewise constant: no gradient (PyTorch: zeros)
    **{f"aten::{n}": _zero for n in ("sign", "sgn", "round", "floor", "ceil", "trunc",
                                      "zeros_like", "ones_like", "full_like")},
    "aten::frac": _identity,
}

attach(RULES)
