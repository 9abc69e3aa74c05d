"""Elementwise ops: one ``elementwise(...)`` entry each (see ``elementwise_base``).

Refs run on arrays already cast to the compute dtype (float16 computes in float32); templates
are Numba (``numba=``) and CUDA C (``cuda=``) scalar expressions whose helpers (``tl_*``) live
in ``cpu_backend/scalar_math.py`` and ``cuda_backend/prelude.cuh``; in CUDA ``({T})1`` is a cast
to the compute dtype's typedef (``float32``, ``int64``, ``bool_``).
Where PyTorch raises, so do we: ``UnsupportedOpError`` for a dtype PyTorch has no kernel for,
``ExecutionError`` for its other RuntimeErrors, ``ZeroDivisionError`` for integer division by
zero (the interpreter reports it as ``IntegerDivisionByZeroError`` naming the node).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from ..ir.types import SCALAR_TYPE_ENUM
from .dtypes import Priority, is_float, result_type
from .elementwise_base import HALF_DTYPES, compute_dtype_of, elementwise, rule_float, rule_same


def _alpha(xp, x, alpha):
    return x if alpha == 1 else x * alpha


def _rule_alpha(infos, attrs):
    dt, alpha = result_type(infos), attrs.get("alpha", 1)
    if isinstance(alpha, bool) and dt != "bool":  # ATen's alpha_check, in its order
        raise ExecutionError("Boolean alpha only supported for Boolean results.")
    if not is_float(dt) and isinstance(alpha, float):
        raise ExecutionError("For integral input tensors, argument alpha must not be a floating "
                             "point number.")
    return dt, dt


def _rule_sub(infos, attrs):
    if any(d == "bool" for d, p in infos):
        raise ExecutionError("Subtraction, the `-` operator, with a bool tensor is not "
                             "supported. If you are trying to invert a mask, use the `~` or "
                             "`logical_not()` operator instead.")
    return _rule_alpha(infos, attrs)


def _t_alpha(op, scaled="np.{T}({alpha})"):
    """``op``, with ``{other}`` multiplied by ``scaled`` when alpha is not 1 (CUDA: ``{alpha}``,
    the attribute already renders as a literal of the compute dtype)."""
    def template(dt, attrs):
        alpha = attrs.get("alpha", 1)
        return op if alpha == 1 else op.replace("{other}", f"({{other}} * {scaled})")
    return template


def _t_unless(attr, default, plain, general):
    """``plain`` when attribute ``attr`` has its default value, else ``general``."""
    return lambda dt, attrs: plain if attrs.get(attr, default) == default else general


elementwise("aten::add", "Tensor self, Tensor other, Scalar alpha=1",
            half_attrs=("alpha",),
            ref=lambda xp, a, b, alpha=1: a + _alpha(xp, b, alpha), dtype_rule=_rule_alpha,
            numba=_t_alpha("{self} + {other}"), cuda=_t_alpha("{self} + {other}", "{alpha}"),
            commutative=True)
elementwise("aten::sub", "Tensor self, Tensor other, Scalar alpha=1",
            half_attrs=("alpha",),
            ref=lambda xp, a, b, alpha=1: a - _alpha(xp, b, alpha), dtype_rule=_rule_sub,
            numba=_t_alpha("{self} - {other}"), cuda=_t_alpha("{self} - {other}", "{alpha}"),
            aliases=("subtract",))
elementwise("aten::rsub", "Tensor self, Tensor other, Scalar alpha=1",
            half_attrs=("alpha",),
            ref=lambda xp, a, b, alpha=1: b - _alpha(xp, a, alpha), dtype_rule=_rule_sub,
            numba=_t_unless("alpha", 1, "{other} - {self}", "{other} - {self} * np.{T}({alpha})"),
            cuda=_t_unless("alpha", 1, "{other} - {self}", "{other} - {self} * {alpha}"))
elementwise("aten::mul", "Tensor self, Tensor other", ref=lambda xp, a, b: a * b,
            numba={"bool": "{self} and {other}", "default": "{self} * {other}"},
            cuda="{self} * {other}", aliases=("multiply",), commutative=True,
            exact_scalars=("other",))


# ----- division family -----

def _check_int_zero(xp, b):
    if bool((b == 0).any()):
        raise ZeroDivisionError("integer division by zero")


def _trunc_div(xp, a, b):
    if a.dtype.kind in "iub":
        _check_int_zero(xp, b)
        q = xp.floor_divide(a, b)  # C truncation: floor, one up where inexact with mixed signs
        return q + (((a - q * b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    return xp.trunc(a / b)


def _floor_div(xp, a, b, dtypes=None):
    if a.dtype.kind in "iub":
        _check_int_zero(xp, b)
    half = _half_steps(dtypes)
    if half is not None:
        return _floor_div_rounded(xp, a, b, lambda v: v.astype(half).astype(a.dtype))
    return xp.floor_divide(a, b)


def _half_steps(dtypes) -> "str | None":
    """The half dtype PyTorch's trunc and floor division round every step to, or None.
    Its float16/bfloat16 kernels divide in the half type (``Vectorized<Half>``'s ``a / b``
    rounds, and so does ``c10::div_floor_floating<Half>``'s each step: trunc(7.5 / 0.025) is
    300, not 299), except with a scalar divisor, read at float32 (``original_scalar_value``)."""
    if dtypes is None or dtypes.out not in HALF_DTYPES:
        return None
    other = dtypes.operands[1]
    return dtypes.out if other is not None and other[1] == Priority.DIM else None


def _floor_div_rounded(xp, a, b, r):
    """``c10::div_floor_floating`` with each step rounded by ``r``."""
    m = xp.fmod(a, b)  # exact
    d = r(r(a - m) / b)
    d = xp.where((m != 0) & ((b < 0) != (m < 0)), r(d - 1), d)
    f = xp.floor(d)
    f = xp.where(d - f > 0.5, f + 1, f)
    q = a / b
    return xp.where(b == 0, q, xp.where(d != 0, f, xp.copysign(xp.zeros_like(q), q)))


def _remainder(xp, a, b):
    if a.dtype.kind in "iub":
        _check_int_zero(xp, b)
        return xp.remainder(a, b)
    m = xp.fmod(a, b)  # PyTorch's formula: -0.0 % 3 stays -0.0 (numpy would give +0.0)
    return xp.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _fmod(xp, a, b):
    if a.dtype.kind in "iub":
        _check_int_zero(xp, b)
    return xp.fmod(a, b)


def _div(xp, a, b, rounding_mode=None, dtypes=None):
    if rounding_mode is None:
        return xp.true_divide(a, b)
    if rounding_mode == "trunc":
        half = _half_steps(dtypes)
        if half is not None:
            return xp.trunc((a / b).astype(half).astype(a.dtype))
        return _trunc_div(xp, a, b)
    if rounding_mode == "floor":
        return _floor_div(xp, a, b, dtypes)
    raise ExecutionError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{rounding_mode}'")


def _rule_div(infos, attrs):
    if attrs.get("rounding_mode") is None:
        return rule_float(infos, attrs)
    dt, _ = rule_same(infos, attrs)
    if dt == "bool":
        raise UnsupportedOpError(f"aten::div with rounding_mode={attrs['rounding_mode']!r} is "
                                 f"not implemented for dtype bool")
    return dt, dt


def _t_div(dt, attrs):  # the same text in Numba and CUDA C
    mode = attrs.get("rounding_mode")
    if mode is None:
        return "{self} / {other}"
    if is_float(dt):
        half = _half_steps(attrs.get("dtypes"))
        kind = "float" if half is None else "half" if half == "float16" else "bf16"
        return f"tl_div_trunc_{kind}({{self}}, {{other}})" if mode == "trunc" else \
            f"tl_floor_divide_{kind}({{self}}, {{other}})"
    return f"tl_int_div_{mode}({{self}}, {{other}}, err)"


elementwise("aten::div", "Tensor self, Tensor other, str? rounding_mode=None", ref=_div,
            dtype_rule=_rule_div, numba=_t_div, cuda=_t_div, aliases=("true_divide", "divide"),
            exact_scalars=("other",), sees_dtypes=True)
_FLOOR_DIVIDE = lambda dt, attrs: _t_div(dt, dict(attrs, rounding_mode="floor"))  # noqa: E731
_REMAINDER = {"float": "tl_remainder_float({self}, {other})",
              "default": "tl_remainder_int({self}, {other}, err)"}
elementwise("aten::floor_divide", "Tensor self, Tensor other", ref=_floor_div,
            dtypes="number", numba=_FLOOR_DIVIDE, cuda=_FLOOR_DIVIDE, exact_scalars=("other",),
            sees_dtypes=True)
elementwise("aten::remainder", "Tensor self, Tensor other", ref=_remainder, dtypes="number",
            numba=_REMAINDER, cuda=_REMAINDER, aliases=("mod",))
elementwise("aten::fmod", "Tensor self, Tensor other", ref=_fmod, dtypes="number",
            scalar_out="float64", numba={"float": "np.fmod({self}, {other})",
                                         "default": "tl_fmod_int({self}, {other}, err)"},
            cuda={"float": "tl_fmod({self}, {other})",
                  "default": "tl_fmod_int({self}, {other}, err)"})


elementwise("aten::square", "Tensor self", ref=lambda xp, a: a * a,
            dtype_rule=lambda infos, attrs: rule_same(infos + [("int64", Priority.WRAPPED)], attrs),
            numba="{self} * {self}", cuda="{self} * {self}")


# ----- unary math -----

def _np_special(fn):
    vec = np.frompyfunc(fn, 1, 1)

    def apply(xp, a):
        if xp is np:  # numpy has no erf; math's is correctly rounded to double
            return np.asarray(vec(a.astype(np.float64)), dtype=np.float64).astype(a.dtype)
        import cupyx.scipy.special as sp  # pragma: no cover (GPU only)
        return getattr(sp, fn.__name__)(a)
    return apply


_erf, _erfc = _np_special(math.erf), _np_special(math.erfc)


# float64 compute calls scalar_math's vectorizable ``tl_<name>_f64`` for these (math_f64.py)
F64_HELPERS = frozenset({"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "tanh",
                         "sinh", "cosh"})


def _f32(name, np_name=None):
    """Numba template: float32 (and half) compute calls scalar_math's vectorizable
    ``tl_<name>_f32``; float64 calls ``tl_<name>_f64`` for the names in ``F64_HELPERS`` and
    keeps numpy's (libm's) function, ``np.<np_name or name>``, for the others."""
    t = {"float32": f"tl_{name}_f32({{self}})", "default": f"np.{np_name or name}({{self}})"}
    if name in F64_HELPERS:
        t["float64"] = f"tl_{name}_f64({{self}})"
    return t


_FLOAT_UNARY = [  # name, numpy ref, numba template, numpy aliases
    ("exp", np.exp, _f32("exp"), ()),
    ("exp2", np.exp2, _f32("exp2"), ()),
    ("expm1", np.expm1, _f32("expm1"), ()),
    ("log", np.log, _f32("log"), ()),
    ("log1p", np.log1p, _f32("log1p"), ()),
    ("log2", np.log2, _f32("log2"), ()), ("log10", np.log10, _f32("log10"), ()),
    ("sqrt", np.sqrt, "np.sqrt({self})", ()),
    ("sin", np.sin, _f32("sin"), ()),
    ("cos", np.cos, _f32("cos"), ()),
    ("tan", np.tan, _f32("tan"), ()),
    ("asin", np.arcsin, _f32("asin", "arcsin"), ("arcsin",)),
    ("acos", np.arccos, _f32("acos", "arccos"), ("arccos",)),
    ("atan", np.arctan, _f32("atan", "arctan"), ("arctan",)),
    ("sinh", np.sinh, _f32("sinh"), ()),
    ("cosh", np.cosh, _f32("cosh"), ()),
    ("tanh", np.tanh, _f32("tanh"), ()),
]
for _name, _fn, _tpl, _aliases in _FLOAT_UNARY:  # CUDA C: prelude.cuh's tl_<name>
    elementwise(f"aten::{_name}", "Tensor self", ref=lambda xp, a, _n=_fn.__name__: getattr(xp, _n)(a),
                dtype_rule="float", numba=_tpl, cuda=f"tl_{_name}({{self}})", aliases=_aliases)

elementwise("aten::rsqrt", "Tensor self", ref=lambda xp, a: 1 / xp.sqrt(a), dtype_rule="float",
            numba="np.{T}(1) / np.sqrt({self})", cuda="tl_rsqrt({self})")
elementwise("aten::reciprocal", "Tensor self", ref=lambda xp, a: 1 / a, dtype_rule="float",
            numba="np.{T}(1) / {self}", cuda="({T})1 / {self}")
elementwise("aten::sigmoid", "Tensor self", ref=lambda xp, a: 1 / (1 + xp.exp(-a)),
            dtype_rule="float", cuda="tl_sigmoid({self})",
            numba={"float32": "tl_sigmoid_f32({self})", "float64": "tl_sigmoid_f64({self})",
                   "default": "tl_sigmoid({self})"})
elementwise("aten::erf", "Tensor self", ref=_erf, dtype_rule="float", cuda="tl_erf({self})",
            numba={"float32": "tl_erf_f32({self})", "default": "tl_erf({self})"})
elementwise("aten::erfc", "Tensor self", ref=_erfc, dtype_rule="float", cuda="tl_erfc({self})",
            numba={"float32": "tl_erfc_f32({self})", "default": "tl_erfc({self})"})
elementwise("aten::atan2", "Tensor self, Tensor other", ref=lambda xp, a, b: xp.arctan2(a, b),
            dtype_rule="float", cuda="tl_atan2({self}, {other})", aliases=("arctan2",), numba={
                "float32": "tl_atan2_f32({self}, {other})", "default": "np.arctan2({self}, {other})"})


def _rule_neg(infos, attrs):
    if result_type(infos) == "bool":
        raise ExecutionError("Negation, the `-` operator, on a bool tensor is not supported. If "
                             "you are trying to invert a mask, use the `~` or `logical_not()` "
                             "operator instead.")
    return rule_same(infos, attrs)


elementwise("aten::neg", "Tensor self", ref=lambda xp, a: -a, dtype_rule=_rule_neg,
            numba="-{self}", cuda="-{self}", aliases=("negative",))
elementwise("aten::abs", "Tensor self", ref=lambda xp, a: xp.abs(a), dtypes="number",
            numba="abs({self})", cuda="tl_abs({self})", aliases=("absolute",))
for _name, _fn in (("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc")):
    elementwise(f"aten::{_name}", "Tensor self",
                ref=lambda xp, a, _f=_fn: getattr(xp, _f)(a) if a.dtype.kind == "f" else a,
                dtypes="number", scalar_out="int64" if _name != "trunc" else None,
                numba={"float": f"np.{_fn}({{self}})", "default": "{self}"},
                cuda={"float": f"tl_{_fn}({{self}})", "default": "{self}"})
elementwise("aten::frac", "Tensor self", ref=lambda xp, a: a - xp.trunc(a), dtypes="float",
            numba="tl_frac({self})", cuda="tl_frac({self})")
elementwise("aten::sign", "Tensor self",
            ref=lambda xp, a: a if a.dtype == bool else
            (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype),
            numba={"bool": "{self}", "default": "tl_sign({self})"},
            cuda={"bool": "{self}", "default": "tl_sign({self})"})


# ----- activations -----

def _gelu(xp, a, approximate="none"):
    if approximate == "tanh":
        inner = a.dtype.type(0.7978845608028654) * (a + a.dtype.type(0.044715) * a * a * a)
        return a.dtype.type(0.5) * a * (1 + xp.tanh(inner))
    if approximate != "none":
        raise ExecutionError(f"approximate argument must be either none or tanh, not "
                             f"{approximate!r}")
    return a.dtype.type(0.5) * a * (1 + _erf(xp, a * a.dtype.type(0.7071067811865476)))


def _softplus(xp, a, beta=1, threshold=20):
    ab = a * beta
    return xp.where(ab > threshold, a, xp.log1p(xp.exp(ab)) / beta)


def _elu(xp, a, alpha=1, scale=1, input_scale=1):
    return xp.where(a > 0, a * scale, xp.expm1(a * input_scale) * (alpha * scale))


def _relu_check(infos, attrs):
    if result_type(infos) == "bool":
        raise ExecutionError("Boolean inputs not supported for relu")
    return rule_same(infos, attrs)


elementwise("aten::relu", "Tensor self", ref=lambda xp, a: xp.maximum(a, a.dtype.type(0)),
            dtype_rule=_relu_check, numba="tl_maximum({self}, np.{T}(0))",
            cuda="tl_maximum({self}, ({T})0)")
def _t_gelu(dt, attrs):  # the same text in Numba and CUDA C
    return "tl_gelu_tanh({self})" if attrs.get("approximate") == "tanh" else "tl_gelu({self})"


def _t_gelu_numba(dt, attrs):  # float32 (and float64 tanh): scalar_math's vectorizable helpers
    if dt == "float64" and attrs.get("approximate") == "tanh":
        return "tl_gelu_tanh_f64({self})"
    if dt == "float32":
        return "tl_gelu_tanh_f32({self})" if attrs.get("approximate") == "tanh" else "tl_gelu_f32({self})"
    return _t_gelu(dt, attrs)


elementwise("aten::gelu", 'Tensor self, str approximate="none"', ref=_gelu, dtypes="float",
            numba=_t_gelu_numba, cuda=_t_gelu)
elementwise("aten::silu", "Tensor self", ref=lambda xp, a: a / (1 + xp.exp(-a)), dtypes="float",
            numba={"float32": "tl_silu_f32({self})", "float64": "tl_silu_f64({self})",
                   "default": "{self} * tl_sigmoid({self})"},
            cuda="{self} / (({T})1 + tl_exp(-{self}))")
elementwise("aten::mish", "Tensor self", ref=lambda xp, a: a * xp.tanh(xp.log1p(xp.exp(a))),
            dtypes="float", numba={"float32": "tl_mish_f32({self})", "float64": "tl_mish_f64({self})",
                                   "default": "tl_mish({self})"},
            cuda="tl_mish({self})")
elementwise("aten::softplus", "Tensor self, Scalar beta=1, Scalar threshold=20", ref=_softplus,
            dtypes="float", numba={"float32": "tl_softplus_f32({self}, {beta}, {threshold})",
                                   "float64": "tl_softplus_f64({self}, {beta}, {threshold})",
                                   "default": "tl_softplus({self}, {beta}, {threshold})"},
            cuda="tl_softplus({self}, {beta}, {threshold})")
elementwise("aten::hardsigmoid", "Tensor self",
            ref=lambda xp, a: xp.clip(a + 3, 0, 6) / 6, dtypes="float",
            numba="tl_minimum(tl_maximum({self} + np.{T}(3), np.{T}(0)), np.{T}(6)) / np.{T}(6)",
            cuda="tl_hardsigmoid({self})")
elementwise("aten::hardswish", "Tensor self",
            ref=lambda xp, a: a * xp.clip(a + 3, 0, 6) / 6, dtypes="float",
            numba="{self} * tl_minimum(tl_maximum({self} + np.{T}(3), np.{T}(0)), np.{T}(6))"
                  " / np.{T}(6)",
            cuda="{self} * tl_minimum(tl_maximum({self} + ({T})3, ({T})0), ({T})6) / ({T})6")
def _lit(a, v):
    """A Python scalar as a's dtype, wrapping like PyTorch's scalar casts (numpy would raise)."""
    return np.asarray(v).astype(a.dtype)[()]


def _rule_hardtanh(infos, attrs):
    dt, _ = rule_same(infos, attrs)
    if dt == "uint8" and (attrs.get("min_val", -1) < 0 or attrs.get("max_val", 1) < 0):
        raise ExecutionError("cannot do hardtanh on an unsigned type with negative limits")
    return dt, dt


elementwise("aten::hardtanh", "Tensor self, Scalar min_val=-1, Scalar max_val=1",
            ref=lambda xp, a, min_val=-1, max_val=1:
            xp.minimum(xp.maximum(a, _lit(a, min_val)), _lit(a, max_val)),
            dtype_rule=_rule_hardtanh, dtypes="number",
            numba="tl_minimum(tl_maximum({self}, np.{T}({min_val})), np.{T}({max_val}))",
            cuda="tl_minimum(tl_maximum({self}, {min_val}), {max_val})")
elementwise("aten::leaky_relu", "Tensor self, Scalar negative_slope=0.01",
            ref=lambda xp, a, negative_slope=0.01: xp.where(a > 0, a, a * negative_slope),
            dtypes="float", numba="{self} if {self} > 0 else {self} * np.{T}({negative_slope})",
            cuda="{self} > ({T})0 ? {self} : {self} * {negative_slope}")
elementwise("aten::elu", "Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1",
            ref=_elu, dtypes="float",
            numba={"float32": "tl_elu_f32({self}, {alpha}, {scale}, {input_scale})",
                   "float64": "tl_elu_f64({self}, {alpha}, {scale}, {input_scale})",
                   "default": "tl_elu({self}, {alpha}, {scale}, {input_scale})"},
            cuda="tl_elu({self}, {alpha}, {scale}, {input_scale})")
elementwise("aten::threshold", "Tensor self, Scalar threshold, Scalar value",
            ref=lambda xp, a, threshold, value: xp.where(a <= _lit(a, threshold), _lit(a, value), a),
            dtypes="number", numba="np.{T}({value}) if {self} <= {threshold} else {self}",
            cuda="{self} <= {threshold} ? {value} : {self}")


# ----- min / max / clamp (NaN-propagating) -----

def _clamp(xp, a, min=None, max=None):
    r = a
    if min is not None:
        r = xp.maximum(r, min)
    if max is not None:
        r = xp.minimum(r, max)
    return r


def _clamp_check(operands, attrs):
    if operands[1] is None and operands[2] is None:
        raise ExecutionError("torch.clamp: At least one of 'min' or 'max' must not be None")


def _rule_clamp(infos, attrs):
    """A bool tensor clamps by one bool tensor bound (clamp_min/clamp_max: a logical or/and);
    with both, PyTorch has no kernel."""
    present = [i for i in infos if i is not None]
    dt = result_type(present)
    if dt == "bool" and len(present) == 3:
        raise UnsupportedOpError("\"clamp_cpu\" not implemented for 'Bool'")
    return dt, dt


elementwise("aten::clamp", "Tensor self, Tensor? min=None, Tensor? max=None", ref=_clamp,
            precheck=_clamp_check, dtype_rule=_rule_clamp, dtypes="all",
            checked_scalars=("min", "max"),
            numba="tl_clamp({self}, {min}, {max})", cuda="tl_clamp({self}, {min}, {max})",
            aliases=("clip",))
def _rule_clamp_scalar(infos, attrs):
    if result_type(infos) == "bool" and infos[-1][1] == Priority.WRAPPED:
        raise UnsupportedOpError("clamp of a bool tensor by a Python scalar is not implemented")
    return rule_same(infos, attrs)


elementwise("aten::clamp_min", "Tensor self, Tensor min", ref=lambda xp, a, min: xp.maximum(a, min),
            dtype_rule=_rule_clamp_scalar, numba="tl_maximum({self}, {min})", checked_scalars=("min",),
            cuda="tl_maximum({self}, {min})")
elementwise("aten::clamp_max", "Tensor self, Tensor max", ref=lambda xp, a, max: xp.minimum(a, max),
            dtype_rule=_rule_clamp_scalar, numba="tl_minimum({self}, {max})", checked_scalars=("max",),
            cuda="tl_minimum({self}, {max})")
elementwise("aten::maximum", "Tensor self, Tensor other", ref=lambda xp, a, b: xp.maximum(a, b),
            numba="tl_maximum({self}, {other})", cuda="tl_maximum({self}, {other})",
            commutative=True)
elementwise("aten::minimum", "Tensor self, Tensor other", ref=lambda xp, a, b: xp.minimum(a, b),
            numba="tl_minimum({self}, {other})", cuda="tl_minimum({self}, {other})",
            commutative=True)


# ----- selection and fused arithmetic -----

def _as_bool(xp, c):
    return c if c.dtype == bool else c.astype(bool)


elementwise("aten::where", "Tensor condition, Tensor self, Tensor other",
            ref=lambda xp, c, a, b: xp.where(c, a, b), keep=("condition",),
            checked_scalars=("self", "other"),
            numba="{self} if {condition} else {other}", cuda="{condition} ? {self} : {other}")
def _masked_fill_check(operands, attrs):
    self, value = operands[0], operands[2]
    if getattr(value, "ndim", 0) != 0:
        raise ExecutionError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value.ndim} dimension(s).")
    kind = getattr(getattr(self, "dtype", None), "kind", "f")
    if kind in "iu":  # c10's checked conversion: negative values may wrap into unsigned types
        v, info = float(value), np.iinfo(self.dtype)
        if not (v <= info.max and (kind == "u" or v >= info.min)):
            raise ExecutionError(f"value cannot be converted to type {self.dtype} without overflow")


elementwise("aten::masked_fill", "Tensor self, Tensor mask, Tensor value",
            ref=lambda xp, a, m, v: xp.where(m, v, a), keep=("mask",), dtype_rule="first",
            precheck=_masked_fill_check,
            numba="{value} if {mask} else {self}", cuda="{mask} ? {value} : {self}")


# ----- comparisons, logical and bitwise ops -----

for _name, _np, _op in (("eq", "equal", "=="), ("ne", "not_equal", "!="), ("lt", "less", "<"),
                        ("le", "less_equal", "<="), ("gt", "greater", ">"),
                        ("ge", "greater_equal", ">=")):
    elementwise(f"aten::{_name}", "Tensor self, Tensor other",  # the same text in Numba and C
                ref=lambda xp, a, b, _f=_np: getattr(xp, _f)(a, b), dtype_rule="compare",
                numba=f"{{self}} {_op} {{other}}", cuda=f"{{self}} {_op} {{other}}", aliases=(_np,),
                commutative=_name in ("eq", "ne"))

for _name, _op, _c_op in (("and", "and", "&&"), ("or", "or", "||"), ("xor", "!=", "!=")):
    elementwise(f"aten::logical_{_name}", "Tensor self, Tensor other",
                ref=lambda xp, a, b, _f=f"logical_{_name}": getattr(xp, _f)(a, b),
                dtype_rule="bool", numba=f"{{self}} {_op} {{other}}",
                cuda=f"{{self}} {_c_op} {{other}}")
elementwise("aten::logical_not", "Tensor self", ref=lambda xp, a: xp.logical_not(a),
            dtype_rule="bool", numba="not {self}", cuda="!{self}")

for _name, _op in (("and", "&"), ("or", "|"), ("xor", "^")):
    for _kind, _pyname in ((f"bitwise_{_name}", f"bitwise_{_name}"), (f"__{_name}__", None)):
        elementwise(f"aten::{_kind}", "Tensor self, Tensor other",  # the same text in Numba and C
                    ref=lambda xp, a, b, _f=f"bitwise_{_name}": getattr(xp, _f)(a, b),
                    dtypes="int_bool", python_name=_pyname, numba=f"{{self}} {_op} {{other}}",
                    cuda=f"{{self}} {_op} {{other}}")
for _kind, _pyname, _aliases in (("bitwise_not", "bitwise_not", ("invert",)),
                                 ("__invert__", None, ())):
    elementwise(f"aten::{_kind}", "Tensor self", ref=lambda xp, a: xp.invert(a),
                dtypes="int_bool", python_name=_pyname, aliases=_aliases,
                numba={"bool": "not {self}", "default": "~{self}"},
                cuda={"bool": "!{self}", "default": "~{self}"})


# ----- casts and constant fills -----

def dtype_of_spec(spec, default: str) -> str:
    """A dtype argument as graphs and users give it: a c10 ScalarType enum int, a dtype name,
    a numpy dtype, a tensor (``to(self, other)``, ``type_as``) or None (keep ``default``)."""
    if spec is None:
        return default
    if hasattr(spec, "dtype"):
        return str(spec.dtype)
    if isinstance(spec, bool):
        raise ExecutionError(f"expected a dtype, got {spec!r}")
    if isinstance(spec, int):
        if spec not in SCALAR_TYPE_ENUM:
            raise UnsupportedOpError(f"unsupported ScalarType {spec}")
        return SCALAR_TYPE_ENUM[spec]
    if isinstance(spec, str) and spec == "bfloat16":
        return spec
    return str(np.dtype(spec))


def _is_device(v) -> bool:
    return (isinstance(v, str) and v.split(":")[0] in ("cpu", "cuda")) or \
        type(v).__name__ == "device"


def _normalize_to(args):
    """to(self, dtype, ...), to(self, other, ...), to(self, device, dtype, ...) and
    to(self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format)."""
    if len(args) == 8:
        return [args[0], args[1]] + args[5:]
    if len(args) >= 2 and _is_device(args[1]):
        return [args[0]] + args[2:]  # the device is where the input already is
    return args


def _rule_cast(spec_name):
    """The conversion happens where every backend converts operands (``ops/casting.py``): the
    operand is cast to the target's compute dtype (a half target rounds through float32, as
    PyTorch's does), and the op passes it through."""
    def rule(infos, attrs):
        out = dtype_of_spec(attrs.get(spec_name), infos[0][0])
        if out == "bfloat16":  # x.bfloat16(), x.to(torch.bfloat16)
            raise UnsupportedOpError("bfloat16 tensors are not supported at run time (numpy has "
                                     "none)")
        return compute_dtype_of(out), out
    return rule


elementwise("aten::to", "Tensor self, ScalarType? dtype=None, bool non_blocking=False, "
            "bool copy=False, MemoryFormat? memory_format=None",
            ref=lambda xp, a, dtype=None, non_blocking=False, copy=False, memory_format=None:
            a.copy() if copy else a, dtype_rule=_rule_cast("dtype"), normalize=_normalize_to,
            numba="{self}", cuda="{self}", aliases=("astype",),  # x.astype(np.float64): numpy's
            returns_self=True)
elementwise("aten::type_as", "Tensor self, Any other", ref=lambda xp, a, other: a,
            dtype_rule=_rule_cast("other"), numba="{self}", cuda="{self}", returns_self=True)

_LIKE = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
        "bool? pin_memory=None, MemoryFormat? memory_format=None"


def _rule_like(infos, attrs):
    dt = dtype_of_spec(attrs.get("dtype"), infos[0][0])
    return dt, dt


elementwise("aten::zeros_like", "Tensor self, " + _LIKE, ref=lambda xp, a, **kw: xp.zeros_like(a),
            dtype_rule=_rule_like, numba="np.{T}(0)", cuda="({T})0")
elementwise("aten::ones_like", "Tensor self, " + _LIKE, ref=lambda xp, a, **kw: xp.ones_like(a),
            dtype_rule=_rule_like, numba="np.{T}(1)", cuda="({T})1")
elementwise("aten::full_like", "Tensor self, Scalar fill_value, " + _LIKE,
            ref=lambda xp, a, fill_value, **kw: xp.full_like(a, fill_value),
            dtype_rule=_rule_like, numba="np.{T}({fill_value})", cuda="{fill_value}")


def dropout_p_check(operands, attrs):
    """PyTorch checks p in eval mode too (``F.dropout(x, 1.5, False)`` raises)."""
    p = attrs.get("p")
    if isinstance(p, (int, float)) and not 0 <= p <= 1:
        raise ExecutionError(f"dropout probability has to be between 0 and 1, but got {p}")


def _rule_dropout(infos, attrs):
    # p == 0 in training mode is the identity in ATen too (a model built with dropout=0.0)
    if attrs.get("train") and attrs.get("p") != 0:
        raise UnsupportedOpError("training-mode dropout (train=True) is not supported: torchlike "
                                 "runs inference graphs; call the model in eval mode")
    return rule_same(infos, attrs)


elementwise("aten::dropout", "Tensor input, float p, bool train", ref=lambda xp, a, p, train: a,
            dtype_rule=_rule_dropout, numba="{input}", cuda="{input}", precheck=dropout_p_check,
            fusible_if=lambda attrs: None if attrs.get("train") is False or attrs.get("p") == 0
            else "train is not False", foldable=False)
