"""Numba helpers for the ops of ``ops/activations.py``, ``ops/elementwise_more.py`` and
``ops/elementwise_backward.py``
(``scalar_math.py`` re-exports them: generated kernels see every ``tl_*`` name there).

The contract is ``scalar_math``'s: operands hold the op's compute dtype, a helper may return a
wider type, and the kernel casts each op's result to its out dtype -- which is what makes the
shifts below wrap in a narrow dtype: they shift in int64 and the cast keeps the low bits.
"""
from __future__ import annotations

import math

import numpy as np

from .math_f32 import _fma, _njit, tl_exp_f32, tl_log1p_f32, tl_tanh_f32
from .scalar_math_pointwise import _like

# ----- shifts: PyTorch's rule for counts outside [0, bits) (see ops/elementwise_more.py) -----
# The shift itself happens in int64, where every count used is below 64 (LLVM's shl/ashr are
# poison for a count >= 64): the kernel's cast to the out dtype wraps the left shift, and an
# arithmetic right shift by 63 of a sign-extended value is its sign fill (0 for uint8).

@_njit
def tl_lshift(a, b, bits):
    ok = b >= 0 and b < bits
    r = np.int64(a) << np.int64(b if ok else 0)
    return r if ok else r - r


@_njit
def tl_rshift(a, b, bits):
    ok = b >= 0 and b < bits
    return np.int64(a) >> np.int64(b if ok else 63)


# ----- special functions and activations -----

@_njit
def tl_lgamma(x):
    return math.lgamma(x)


@_njit
def tl_log_sigmoid(x):
    return min(x, 0.0) - math.log1p(math.exp(-abs(x))) if x == x else x


_ZERO = np.float32(0.0)


@_njit
def tl_log_sigmoid_f32(x):
    m = x if x < _ZERO else _ZERO
    return x if x != x else m - tl_log1p_f32(tl_exp_f32(-abs(x)))


# ----- gelu_backward: PyTorch's formulas, in float64 (the float32 erf form is
# math_erf_f32.tl_gelu_backward_f32) -----

@_njit
def tl_gelu_backward(g, x):
    cdf = 0.5 * math.erfc(x * -0.7071067811865476)
    pdf = math.exp(-0.5 * x * x) * 0.3989422804014327
    return g * (cdf + x * pdf)


@_njit
def tl_gelu_tanh_backward(g, x):
    beta, kappa = 0.7978845608028654, 0.044715
    t = math.tanh(beta * (x + kappa * x * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * (beta * (1.0 + 3.0 * kappa * x * x)))


@_njit
def tl_gelu_tanh_backward_f32(g, x):
    """float32: the vectorizable tanh, the rest in float32 (``t`` carries the rounding)."""
    x_sq = x * x
    t = tl_tanh_f32(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x_sq * x))
    h = np.float32(0.5)
    return g * (h * (np.float32(1.0) + t) + h * x * (np.float32(1.0) - t * t)
                * (np.float32(0.7978845608028654) * (np.float32(1.0)
                                                     + np.float32(3.0 * 0.044715) * x_sq)))


# ----- tanh_backward, silu_backward, logit_backward: ATen's formulas (ops/elementwise_backward.py);
# 1 - y y and 1 + x (1 - s) are one fma each, as the compilers of PyTorch's kernels contract them
# (GCC's default -ffp-contract=fast in its AVX2 build, nvcc's --fmad): bit for bit PyTorch's

@_njit
def tl_tanh_backward(g, y):
    return g * _fma(-y, y, _like(y, 1.0))


@_njit
def tl_silu_backward(g, x):
    s = 1.0 / (1.0 + math.exp(-x))
    return g * s * _fma(x, 1.0 - s, 1.0)


_ONE = np.float32(1.0)


@_njit
def tl_silu_backward_f32(g, x):
    """float32: the vectorizable exp; exp(-x) overflows to inf below -88.7 (s = 0), as ATen's."""
    s = _ONE / (_ONE + tl_exp_f32(-x))
    return g * s * _fma(x, _ONE - s, _ONE)


@_njit
def tl_logit_backward(g, x, lo, hi, nan_outside):
    """g / (x (1 - x)) on [lo, hi], g * inf at x = 0 (also -0.0) or 1, NaN or 0 outside."""
    if x < lo or x > hi:
        return _like(x, np.nan) if nan_outside else _like(x, 0.0)
    if x == _like(x, 0.0) or x == _like(x, 1.0):
        return g * _like(x, np.inf)
    return g / (x * (_like(x, 1.0) - x))


__all__ = [name for name in dir() if name.startswith("tl_")]
