"""PyTorch's pointwise backward kernels, as AOT-autograd and ``torch.jit`` backward graphs print
them (``gelu_backward`` is in ``elementwise_more.py``).  Each formula is ATen's CPU kernel's, in
its order of operations, so float32 rounds as PyTorch's does and NaN, +-inf and -0.0 come out
as its do::

    sigmoid_backward(g, y)         (g * (1 - y)) * y                 (BinaryOpsKernel)
    tanh_backward(g, y)            g * fma(-y, y, 1)                 (BinaryOpsKernel)
    silu_backward(g, x)            (g * s) * fma(x, 1 - s, 1), s = 1 / (1 + exp(-x)): NaN at
                                   x = +-inf (0 * inf), as ATen's
    threshold_backward(g, x, t)    0 where x <= t, else g (NaN x passes g); t is converted to
                                   the compute dtype as ATen's ``Scalar::to<T>`` (an integer
                                   x <= -0.5 is x <= 0; a value out of range raises)
    logit_backward(g, x, eps)      g / (x (1 - x)) on [lo, hi], g * inf at x = 0 or 1; outside,
                                   NaN without eps (or eps < 0: [lo, hi] = [0, 1]) and 0 with it
                                   (lo, hi = eps, 1 - eps rounded in the out dtype, as logit's)
    native_dropout_backward(g, m, scale)   (g * m) * scale, PyTorch's composite: g * m in
                                   result_type(g, m) (integers wrap, a half product rounds),
                                   then times scale in that type's float (int, bool: float32)

The fmas are the compilers' (GCC contracts ATen's ``1 - y * y`` in its AVX2 build, nvcc in
CUDA), which makes the float32 kernels PyTorch's bit for bit: Numba's helpers call one, CUDA
templates leave it to nvcc, the interpreter rounds the float32 ones once through float64.
Where PyTorch's own CPU loops disagree, logit_backward follows its scalar loop: g * inf at
x = -0.0 (the vectorized loop and CUDA divide by x (1 - x) = -0.0, flipping the infinity's
sign) and NaN for a NaN x with eps (the vectorized loop's in-range mask gives 0).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError
from .dtypes import is_float, result_type, to_float
from .elementwise_base import compute_dtype_of, elementwise
from .elementwise_pointwise import _logit_bounds


def _fma(a, b, c):
    """a * b + c rounded once for float32 (exact products in float64), twice for float64."""
    if a.dtype != np.float32:
        return a * b + c
    return (a.astype(np.float64) * b + c).astype(np.float32)


# ----- sigmoid_backward, tanh_backward: the output's derivative, in ATen's order -----

elementwise("aten::sigmoid_backward", "Tensor grad_output, Tensor output",
            ref=lambda xp, g, y: g * (1 - y) * y, dtypes="float",
            numba="{grad_output} * (np.{T}(1) - {output}) * {output}",
            cuda="{grad_output} * (({T})1 - {output}) * {output}")
elementwise("aten::tanh_backward", "Tensor grad_output, Tensor output",
            ref=lambda xp, g, y: g * _fma(-y, y, 1), dtypes="float",
            numba="tl_tanh_backward({grad_output}, {output})",
            cuda="{grad_output} * (({T})1 - {output} * {output})")

# ----- silu_backward: sigmoid as 1 / (1 + exp(-x)), as ATen (no clamping at the tails) -----


def _silu_backward(xp, g, x):
    s = 1 / (1 + xp.exp(-x))
    return g * s * _fma(x, 1 - s, 1)


elementwise("aten::silu_backward", "Tensor grad_output, Tensor self", ref=_silu_backward,
            dtypes="float", cuda="tl_silu_backward({grad_output}, {self})",
            numba={"float32": "tl_silu_backward_f32({grad_output}, {self})",
                   "default": "tl_silu_backward({grad_output}, {self})"})

# ----- threshold_backward: ATen's threshold kernel with value 0 over (self, grad) -----

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _threshold_in(t, dtype: str):
    """``threshold`` as ATen's ``Scalar::to<T>()`` gives it for the compute dtype ``dtype``:
    a float for the float types (a double for float64), truncated for the integers; c10's
    overflow check raises where the value does not fit (a negative int wraps into uint8)."""
    t = int(t) if isinstance(t, (bool, np.bool_)) else t
    if dtype == "float64":
        return float(t)
    if is_float(dtype):
        if math.isfinite(t) and abs(t) > _FLOAT32_MAX:
            raise ExecutionError("value cannot be converted to type float without overflow")
        return np.float32(t)
    info = np.iinfo(dtype)
    if isinstance(t, (float, np.floating)):
        ok = info.min <= t <= info.max  # False for NaN
    else:
        t = int(t)
        ok = t <= info.max and (t >= info.min or (info.min == 0 and -t <= info.max))
    if not ok:
        raise ExecutionError(f"value cannot be converted to type {dtype}_t without overflow")
    return int(np.array(int(t)).astype(dtype))


def _rule_threshold_backward(infos, attrs):
    dt = result_type(infos)
    if attrs.get("threshold") is not None:  # a constant (or the interpreter's value)
        _threshold_in(attrs["threshold"], compute_dtype_of(dt))
    return dt, dt


def _threshold_backward(xp, g, x, threshold):
    return xp.where(x <= _threshold_in(threshold, x.dtype.name), g.dtype.type(0), g)


def _int_literal(v: int, language: str) -> str:
    if language == "cuda":  # INT64_MIN has no literal in C
        return "(-9223372036854775807LL - 1)" if v == -2 ** 63 else f"{v}LL"
    return str(v)


def _t_threshold_backward(language):
    def template(dt, attrs):
        if is_float(dt):
            th = "{threshold}"  # rendered in the compute dtype: float32 for the halves
        elif "threshold" in attrs:
            th = _int_literal(_threshold_in(attrs["threshold"], dt), language)
        else:  # a runtime threshold meeting integers: truncated, as Scalar::to<T>()
            th = "np.{T}({threshold})" if language == "numba" else "(({T})({threshold}))"
        if language == "numba":
            return f"np.{{T}}(0) if {{self}} <= {th} else {{grad_output}}"
        return f"{{self}} <= {th} ? ({{T}})0 : {{grad_output}}"
    return template


elementwise("aten::threshold_backward", "Tensor grad_output, Tensor self, Scalar threshold",
            ref=_threshold_backward, dtype_rule=_rule_threshold_backward, dtypes="number",
            numba=_t_threshold_backward("numba"), cuda=_t_threshold_backward("cuda"))

# ----- logit_backward -----


def _logit_backward_bounds(eps, out: str):
    """(lo, hi, NaN outside): ATen takes eps < 0 (eps rounded to the out dtype) as no eps."""
    lo = None if eps is None else _logit_bounds(eps, out)
    if lo is None or lo[0] < 0:
        return 0.0, 1.0, True
    return lo[0], lo[1], False


def _logit_backward(xp, g, x, eps=None, dtypes=None):
    T = x.dtype.type
    lo, hi, nan_outside = _logit_backward_bounds(eps, dtypes.out)
    inner = xp.where((x == 0) | (x == 1), g * T(np.inf), g / (x * (1 - x)))
    return xp.where((x < T(lo)) | (x > T(hi)), T(np.nan if nan_outside else 0.0), inner)


def _t_logit_backward(language):
    def template(dt, attrs):
        out = attrs["dtypes"].out if attrs.get("dtypes") else dt
        if "eps" not in attrs:  # a runtime eps: lo = max(eps, 0) (eps < 0 is no eps), hi = 1 - lo
            if out in ("float16", "bfloat16"):
                return None  # rounded in the half type: the interpreter's
            if language == "numba":
                lo = "max(np.{T}({eps}), np.{T}(0))"
                return (f"tl_logit_backward({{grad_output}}, {{self}}, {lo}, np.{{T}}(1) - {lo}, "
                        f"np.{{T}}({{eps}}) < np.{{T}}(0))")
            lo = "fmax(({T})({eps}), ({T})0)"
            return (f"tl_logit_backward({{grad_output}}, {{self}}, {lo}, ({{T}})1 - {lo}, "
                    f"({{T}})({{eps}}) < ({{T}})0)")
        lo, hi, nan_outside = _logit_backward_bounds(attrs["eps"], out)
        if language == "numba":
            return (f"tl_logit_backward({{grad_output}}, {{self}}, np.{{T}}({lo!r}), "
                    f"np.{{T}}({hi!r}), {nan_outside})")
        return (f"tl_logit_backward({{grad_output}}, {{self}}, ({{T}}){lo!r}, ({{T}}){hi!r}, "
                f"{'true' if nan_outside else 'false'})")
    return template


elementwise("aten::logit_backward", "Tensor grad_output, Tensor self, float? eps=None",
            ref=_logit_backward, dtypes="float", sees_dtypes=True,
            numba=_t_logit_backward("numba"), cuda=_t_logit_backward("cuda"))

# ----- native_dropout_backward: grad * mask * scale, two ops of PyTorch's -----


def _rule_dropout_backward(infos, attrs):
    """g * m computes in result_type(g, m); times a Python float, ints and bools go float32."""
    dt = result_type(infos)
    return dt, to_float(dt)


def _native_dropout_backward(xp, g, mask, scale, dtypes=None):
    p = g * mask  # bool * bool is logical and, integers wrap: ATen's mul in that dtype
    if dtypes.out == "float16":  # the product is a float16 tensor before the scaling
        p = p.astype(np.float16).astype(np.float32)
    if p.dtype.kind != "f":
        p = p.astype(np.float32)
    return p * p.dtype.type(scale)


def _t_dropout_backward(language):
    numba = language == "numba"

    def template(dt, attrs):
        prod = "{grad_output} and {mask}" if numba and dt == "bool" else \
            "{grad_output} && {mask}" if dt == "bool" else "{grad_output} * {mask}"
        if is_float(dt):
            out = attrs["dtypes"].out if attrs.get("dtypes") else dt
            if out == "float16":
                prod = f"_f16_round({prod})" if numba else f"tl_round_half({prod})"
            elif out == "bfloat16":
                if numba:
                    return None
                prod = f"tl_round_bf16({prod})"
            return f"({prod}) * {{scale}}"
        # a float32 scale, as the product's float type (a runtime one: converted here)
        scale = repr(float(np.float32(attrs["scale"]))) if "scale" in attrs else "{scale}"
        if numba:
            return f"np.float32(np.{{T}}({prod})) * np.float32({scale})"
        return f"(float32)(({{T}})({prod})) * (float32){scale}"
    return template


elementwise("aten::native_dropout_backward", "Tensor grad_output, Tensor mask, float scale",
            ref=_native_dropout_backward, dtype_rule=_rule_dropout_backward, sees_dtypes=True,
            numba=_t_dropout_backward("numba"), cuda=_t_dropout_backward("cuda"))
