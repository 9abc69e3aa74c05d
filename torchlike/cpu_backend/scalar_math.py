"""Scalar helpers that the registry's Numba templates call by bare name.

Generated CPU kernels do ``from torchlike.cpu_backend.scalar_math import *``, so a template such
as ``tl_remainder_int({self}, {other}, err)`` resolves here.  Every helper is
``@numba.njit(inline="always")``: a plain scalar function the kernel loop inlines.

Contract with the code generator:

* Operand arguments hold the op's compute dtype (float32/float64/int*/bool); a helper may return
  a wider type (float64 for float32 input): the kernel casts each op's result to its out dtype.
* ``err`` is a 1-element ``int32`` array the kernel receives as a parameter named ``err``
  (initialised to 0 by the host).  Integer division by zero does not raise inside the kernel
  (raising from a parallel loop is fragile): the helper returns 0 and sets ``err[0] = 1``; after
  the kernel the host checks ``err[0]`` and raises ``IntegerDivisionByZeroError``.
* Kernels are compiled with ``error_model="numpy"`` (float division by zero gives inf/nan;
  Numba's default "python" model would raise).
* An absent optional operand (``clamp(x, None, hi)``) is passed as ``None``; the helpers
  prune the branch at compile time.
"""
from __future__ import annotations

import math

import numba
import numpy as np

def _njit(fn):
    # error_model="numpy": float x / 0.0 is inf/nan, as in IEEE and PyTorch (kernels use it too)
    return numba.njit(inline="always", error_model="numpy")(fn)


# ----- integer division (C truncation for fmod/trunc, Python floor for remainder/floor) -----

@_njit
def tl_int_div_trunc(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a  # zero of a's type
    q = a // b  # floor; C truncation rounds up instead where inexact with mixed signs
    if a - q * b != 0 and (a < 0) != (b < 0):
        q += 1
    return q


@_njit
def tl_int_div_floor(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a
    return a // b  # Numba integer // is Python's floor division


@_njit
def tl_remainder_int(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a
    return a % b  # Python sign rule: the result has b's sign


@_njit
def tl_fmod_int(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a
    return a - b * tl_int_div_trunc(a, b, err)


# ----- float division family (PyTorch's CPU formulas, -0.0 and inf included) -----

@_njit
def tl_remainder_float(a, b):
    m = np.fmod(a, b)
    if m != 0 and (b < 0) != (m < 0):
        m += b
    return m


@_njit
def tl_floor_divide_float(a, b):
    if b == 0:
        return a / b
    m = np.fmod(a, b)
    d = (a - m) / b
    if m != 0 and (b < 0) != (m < 0):
        d -= 1.0
    if d != 0:
        f = np.floor(d)  # math.floor would return an int in Numba
        if d - f > 0.5:
            f += 1.0
        return f
    return math.copysign(0.0, a / b)


@_njit
def tl_div_trunc_float(a, b):
    return np.trunc(a / b)


# ----- rounding, sign, pow -----

@_njit
def tl_round_decimals(x, decimals):
    if decimals == 0:
        return np.rint(x)
    if decimals > 0:
        p = 10.0 ** decimals
        return np.rint(x * p) / p
    p = 10.0 ** (-decimals)
    return np.rint(x / p) * p


@_njit
def tl_sign(x):
    return (x > 0) - (x < 0)  # sign(nan) is 0, as in PyTorch


@_njit
def tl_pow_int(a, b):
    """Integer power; a negative exponent gives 0 except for bases 1 and -1 (PyTorch)."""
    if b < 0:
        if a == 1:
            return a
        if a == -1:
            return a if b % 2 != 0 else -a
        return a - a
    result = a - a + 1
    base = a
    while b:
        if b & 1:
            result = result * base
        base = base * base
        b >>= 1
    return result


# ----- NaN-propagating min/max/clamp -----

@_njit
def tl_maximum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a > b else b


@_njit
def tl_minimum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a < b else b


@_njit
def tl_clamp(x, lo, hi):
    r = x
    if lo is not None:
        r = tl_maximum(r, lo)
    if hi is not None:
        r = tl_minimum(r, hi)
    return r


# ----- activations -----

@_njit
def tl_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@_njit
def tl_erf(x):
    return math.erf(x)


@_njit
def tl_erfc(x):
    return math.erfc(x)


@_njit
def tl_gelu(x):
    return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))


@_njit
def tl_gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + math.tanh(inner))


@_njit
def tl_softplus(x, beta, threshold):
    if x * beta > threshold:
        return x * 1.0
    return math.log1p(math.exp(x * beta)) / beta


@_njit
def tl_mish(x):
    return x * math.tanh(math.log1p(math.exp(x)))


@_njit
def tl_elu(x, alpha, scale, input_scale):
    if x > 0:
        return x * scale
    return alpha * scale * math.expm1(x * input_scale)


@_njit
def tl_lerp(a, b, w):
    if abs(w) < 0.5:
        return a + w * (b - a)
    return b - (b - a) * (1.0 - w)


@_njit
def tl_frac(x):
    return x - np.trunc(x)


__all__ = [name for name in dir() if name.startswith("tl_")] + ["math", "np"]
