"""More elementwise ops (``elementwise.py`` is at the module-size limit): ``lerp``, ``addcmul``
and ``addcdiv``, ``isnan``, ``lgamma``, the bit shifts, ``round`` (which, like floor/ceil/trunc,
is the identity on integers) and ``gelu_backward`` (gelu's derivative rule emits it: the float32
kernel computes the erf form's ``Phi(x) + x phi(x)`` with one exp, where the expansion spent an
erf and an exp).

Shifts follow PyTorch's CPU and CUDA kernels (ATen BinaryOps), not C: for a shift count outside
``[0, bits)``, where ``bits`` is the width of the (promoted) dtype, a left shift gives 0 and a
right shift the sign fill (-1 for negative signed values, else 0); inside the range the left
shift wraps in the dtype (``int8(100) << 1 == -56``) and the right shift is arithmetic.  A Python
scalar count is first converted to the tensor's dtype, wrapping (``int8 << 300`` shifts by 44).
Shifts of bool and float tensors raise, as in PyTorch; a bool tensor with a Python int promotes
to int64.  TorchScript's ``int << int`` on two Python ints is C's shift on int64 with the count
taken mod 64 (x86's), which this op does not copy: it follows the tensor rule there too.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from ..ir.types import TensorType
from .dtypes import Priority, is_float, result_type
from .elementwise import _alpha, _erfc, _rule_alpha, _t_unless
from .elementwise_base import elementwise, rule_same
from .registry import defop
from .tensor_common import broadcast_shapes, like

# ----- lerp, addcmul, addcdiv -----


def _rule_lerp(infos, attrs):
    tensors = {dt for dt, prio in infos[:2] if prio != Priority.WRAPPED}
    if len(tensors) > 1:
        raise ExecutionError(f"lerp expected self and end to have the same dtype, got "
                             f"{sorted(tensors)}")
    dt = result_type(infos[:2])
    if not is_float(dt):
        raise UnsupportedOpError(f"aten::lerp is not implemented for dtype {dt}")
    if len(infos) > 2 and infos[2][1] == Priority.DIM and infos[2][0] != dt:
        # a tensor weight is not promoted (a 0-d one or a Python number is a scalar)
        raise ExecutionError(f"lerp expected dtype {dt} for `weight` but got dtype "
                             f"{infos[2][0]}")
    return dt, dt


def _lerp(xp, a, b, w):
    small = xp.abs(w) < 0.5
    return xp.where(small, a + w * (b - a), b - (b - a) * (1 - w))


elementwise("aten::lerp", "Tensor self, Tensor end, Tensor weight", ref=_lerp,
            dtype_rule=_rule_lerp, numba="tl_lerp({self}, {end}, {weight})",
            cuda="tl_lerp({self}, {end}, {weight})", exact_scalars=("weight",))


def _rule_addcdiv(infos, attrs):
    if not is_float(result_type(infos[1:])):
        raise ExecutionError("Integer division with addcdiv is no longer supported, and in a "
                             "future release addcdiv will perform a true division of tensor1 "
                             "and tensor2.")
    return _rule_alpha(infos, {"alpha": attrs.get("value", 1)})


# PyTorch's kernels compute self + value * t1 * t2 and self + value * t1 / t2, left to right
# (PointwiseOpsKernel.cpp): value * t1 can overflow where t1 / t2 would not, and torch says inf.
def _value_in(value, dtype):
    """addcmul's ``value`` as the integer tensors' type: PyTorch's value.to<scalar_t>()
    truncates toward zero (addcmul(int32 x, x, x, value=0.5) is x + 0 * x * x; add's alpha
    refuses a float there instead)."""
    return int(value) if np.dtype(dtype).kind in "iu" else value


def _rule_addcmul(infos, attrs):
    dt = result_type(infos)
    value = attrs.get("value", 1)
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:  # PyTorch's checked Scalar conversion
            raise ExecutionError(f"value cannot be converted to type {dt} without overflow")
    return dt, dt


elementwise("aten::addcmul", "Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1",
            ref=lambda xp, a, t1, t2, value=1: a + _alpha(xp, t1, _value_in(value, a.dtype)) * t2,
            dtype_rule=_rule_addcmul,
            dtypes="number",
            numba="{self} + np.{T}({value}) * {tensor1} * {tensor2}",
            cuda=_t_unless("value", 1, "{self} + {tensor1} * {tensor2}",
                           "{self} + {value} * {tensor1} * {tensor2}"))
elementwise("aten::addcdiv", "Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1",
            ref=lambda xp, a, t1, t2, value=1: a + _alpha(xp, t1, value) / t2,
            dtype_rule=_rule_addcdiv, numba="{self} + np.{T}({value}) * {tensor1} / {tensor2}",
            cuda=_t_unless("value", 1, "{self} + {tensor1} / {tensor2}",
                           "{self} + {value} * {tensor1} / {tensor2}"))

# ----- isnan -----

elementwise("aten::isnan", "Tensor self", ref=lambda xp, a: xp.isnan(a) if a.dtype.kind == "f"
            else xp.zeros(a.shape, bool),
            dtype_rule="compare",
            numba={"float": "{self} != {self}", "default": "False"},
            cuda={"float": "tl_isnan({self})", "default": "false"})

# ----- lgamma -----


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, -2, ...): +inf, as libm's lgamma
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_scalar, 1, 1)


def _lgamma(xp, a):
    if xp is np:  # math.lgamma: double precision, then one rounding to the compute dtype
        return np.asarray(_LGAMMA(a.astype(np.float64)), dtype=np.float64).astype(a.dtype)
    import cupyx.scipy.special as sp  # pragma: no cover (GPU only)
    return sp.gammaln(a)


elementwise("aten::lgamma", "Tensor self", ref=_lgamma, dtype_rule="float",
            numba="tl_lgamma({self})", cuda="tl_lgamma({self})")

# ----- shifts -----


def _shift_parts(xp, a, b):
    """(count in range, the count where it is, 0 elsewhere) for a's dtype width."""
    bits = a.dtype.itemsize * 8
    ok = (b >= 0) & (b < bits) if a.dtype.kind == "i" else b < bits
    return ok, xp.where(ok, b, 0).astype(a.dtype)


def _lshift(xp, a, b):
    ok, count = _shift_parts(xp, a, b)
    return xp.where(ok, xp.left_shift(a, count), a.dtype.type(0))


def _rshift(xp, a, b):
    ok, count = _shift_parts(xp, a, b)
    fill = xp.right_shift(a, a.dtype.type(a.dtype.itemsize * 8 - 1)) if a.dtype.kind == "i" \
        else xp.zeros_like(a)
    return xp.where(ok, xp.right_shift(a, count), fill)


def _t_shift(helper: str):
    """``helper(a, b, bits)``: the same text in Numba and CUDA C, with the dtype's width."""
    return lambda dt, attrs: f"{helper}({{self}}, {{other}}, {np.dtype(dt).itemsize * 8})"


for _kind, _pyname, _ref, _helper in (
        ("__lshift__", None, _lshift, "tl_lshift"),
        ("bitwise_left_shift", "bitwise_left_shift", _lshift, "tl_lshift"),
        ("__rshift__", None, _rshift, "tl_rshift"),
        ("bitwise_right_shift", "bitwise_right_shift", _rshift, "tl_rshift")):
    elementwise(f"aten::{_kind}", "Tensor self, Tensor other", ref=_ref, dtypes="int",
                python_name=_pyname, numba=_t_shift(_helper), cuda=_t_shift(_helper),
                aliases=(("left_shift",) if _pyname == "bitwise_left_shift" else
                         ("right_shift",) if _pyname == "bitwise_right_shift" else ()))

# ----- round (half to even; integers unchanged, as floor/ceil/trunc) -----


def _round(xp, a, decimals=0):
    if a.dtype.kind != "f":
        return a
    if decimals == 0:
        return xp.rint(a)
    p = a.dtype.type(10.0 ** abs(decimals))
    return xp.rint(a * p) / p if decimals > 0 else xp.rint(a / p) * p


def _rule_round(infos, attrs):
    dt = result_type(infos)
    if attrs.get("decimals", 0) != 0 and not is_float(dt):
        raise UnsupportedOpError(f"aten::round with decimals is not implemented for dtype {dt} "
                                 "(PyTorch has no such kernel either)")
    return rule_same(infos, attrs)


def _t_round(rint: str):
    def template(dt, attrs):
        if not is_float(dt):
            return "{self}"
        if attrs.get("decimals", 0) == 0:
            return f"{rint}({{self}})"
        return "tl_round_decimals({self}, {decimals})"  # Numba and CUDA C
    return template


elementwise("aten::round", "Tensor self, int decimals=0", ref=_round, dtype_rule=_rule_round,
            dtypes="number", scalar_out="float64", aliases=("rint",),
            numba=_t_round("np.rint"), cuda=_t_round("tl_rint"))


# ----- isclose: interpreted (its tolerances are arguments; rare inside hot loops) -----

def _isclose(xp, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{a.dtype} did not match {b.dtype}")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"isclose(): rtol and atol must be non-negative, got rtol={rtol} "
                           f"and atol={atol}")
    if a.dtype == np.bool_:
        return xp.asarray(a == b)
    # |a - b| <= atol + rtol |b|, or a == b (equal infinities), as PyTorch computes it
    return xp.asarray(xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=bool(equal_nan)))


def _infer_isclose(node, types):
    if len(types) < 2 or not all(isinstance(t, TensorType) for t in types[:2]):
        return None
    a, b = types[0], types[1]
    shape = None if a.shape is None or b.shape is None else broadcast_shapes(a.shape, b.shape)
    return [like(a, "bool", shape)]


defop("aten::isclose", "Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
      "bool equal_nan=False", _isclose, infer=_infer_isclose)


# ----- gelu_backward(grad_output, self, approximate): PyTorch's formulas (ATen GeluKernel) -----


def _gelu_backward(xp, g, x, approximate="none"):
    T = x.dtype.type
    if approximate == "tanh":
        beta, kappa = T(0.7978845608028654), T(0.044715)
        x_sq = x * x
        t = xp.tanh(beta * (x + kappa * x_sq * x))
        right = T(0.5) * x * (1 - t * t) * (beta * (1 + T(3) * kappa * x_sq))
        return g * (T(0.5) * (1 + t) + right)
    if approximate != "none":
        raise ExecutionError(f"approximate argument must be either none or tanh, not "
                             f"{approximate!r}")
    # Phi(x) as erfc(-x / sqrt 2) / 2: no cancellation below 0 (PyTorch's 0.5 (1 + erf(...))
    # loses Phi(-7) = 1.3e-12, 2% of gelu'(-7))
    cdf = T(0.5) * _erfc(xp, x * T(-0.7071067811865476))
    pdf = xp.exp(T(-0.5) * x * x) * T(0.3989422804014327)
    return g * (cdf + x * pdf)


def _t_gelu_backward(dt, attrs, suffix=""):  # the same text in Numba and CUDA C
    tanh = "_tanh" if attrs.get("approximate") == "tanh" else ""
    return f"tl_gelu{tanh}_backward{suffix}({{grad_output}}, {{self}})"


def _t_gelu_backward_numba(dt, attrs):  # float32: the vectorizable helpers
    return _t_gelu_backward(dt, attrs, "_f32" if dt == "float32" else "")


elementwise("aten::gelu_backward", 'Tensor grad_output, Tensor self, str approximate="none"',
            ref=_gelu_backward, dtypes="float", numba=_t_gelu_backward_numba,
            cuda=_t_gelu_backward)
