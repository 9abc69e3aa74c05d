"""Numba helpers for the ops of ``ops/elementwise_pointwise.py`` (``scalar_math.py`` re-exports
them: generated kernels see every ``tl_*`` name there).

The contract is ``scalar_math``'s: operands hold the op's compute dtype, a helper may return a
wider type, and the kernel casts each op's result to its out dtype.  ``*_f32`` variants are
the float32-compute ones: call-free where ``math_f32``'s exp/log make that possible, so loops
using them vectorize.  gcd/lcm loop per element (as ATen's do); digamma and the Bessel
functions follow ``ops/special_math.py`` (ATen's Cephes formulas) in float64.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic, overload

from ..ops import special_math
from .math_f32 import _njit, _njit_ir, tl_exp2_f32, tl_exp_f32, tl_log1p_f32, tl_log_f32

# ----- typed helpers: a value in the type of another (Numba widens small ints to int64) -----

def _abs_wrap(x):
    """abs(x) wrapped to x's integer type: abs(int8(-128)) is -128, as in C (ATen's abs_impl)."""


def _lcm_finish(t, a):
    """abs of lcm's ``a / g * b`` (held exactly in int64 as ``t``) as C computes it for a's
    type: narrow types compute in int (abs there; the kernel's cast wraps), int32 and int64
    wrap the product in the type first, then abs wraps."""


def _like(x, v):
    """The float ``v`` converted to x's float type (a literal ``1`` would widen float32)."""


@overload(_abs_wrap, inline="always")
def _abs_wrap_impl(x):
    if isinstance(x, types.Integer):
        ity = getattr(np, x.name)
        return lambda x: ity(abs(x))
    return None


@overload(_lcm_finish, inline="always")
def _lcm_finish_impl(t, a):
    if isinstance(a, types.Integer):
        if a.bitwidth < 32:
            return lambda t, a: abs(t)
        ity = getattr(np, a.name)
        return lambda t, a: ity(abs(ity(t)))
    return None


@overload(_like, inline="always")
def _like_impl(x, v):
    if isinstance(x, types.Float):
        fty = np.float32 if x.bitwidth == 32 else np.float64
        return lambda x, v: fty(v)
    return None


@intrinsic
def _pow2_f64(typingctx, k):
    """2**k as a float64 for an int64 k in [-1022, 1023] (built from the bits)."""
    if k != types.int64:
        return None

    def codegen(context, builder, sig, args):
        i64 = llvm_ir.IntType(64)
        bits = builder.shl(builder.add(args[0], llvm_ir.Constant(i64, 1023)),
                           llvm_ir.Constant(i64, 52))
        return builder.bitcast(bits, llvm_ir.DoubleType())
    return types.float64(types.int64), codegen


# ----- gcd / lcm -----

@_njit
def _cmod(y, x):
    """C's y % x on int64 (the sign of y; Numba's % is Python's, the sign of x)."""
    r = y % x
    return r - x if (r != 0 and (r < 0) != (y < 0)) else r


@_njit
def tl_gcd(a, b):
    x = np.int64(_abs_wrap(a))
    y = np.int64(_abs_wrap(b))
    while x != 0:
        c = x
        x = _cmod(y, x)
        y = c
    return y


@_njit
def tl_lcm(a, b):
    g = tl_gcd(a, b)
    if g == 0:
        return np.int64(0)
    # gcd can be -1 (gcd(int8 -128, 127), as ATen's loop computes it): MIN // -1 would trap
    q = -np.int64(a) if g == -1 else np.int64(a) // g
    return np.int64(_lcm_finish(q * np.int64(b), a))


# ----- two-argument float functions -----

@_njit
def tl_hypot_f32(a, b):
    """sqrt(a^2 + b^2) in float64 (exact squares, one rounding); inf wins over nan (IEEE)."""
    ad, bd = np.float64(a), np.float64(b)
    r = np.sqrt(ad * ad + bd * bd)
    return np.inf if (abs(ad) == np.inf) | (abs(bd) == np.inf) else r


@_njit
def tl_logaddexp(a, b):
    m = b if a < b else a
    r = m + np.log1p(np.exp(-abs(a - b)))
    return a if (np.isinf(a) and a == b) else r


@_njit
def tl_logaddexp_f32(a, b):
    m = b if a < b else a
    r = m + tl_log1p_f32(tl_exp_f32(-abs(a - b)))
    return a if (np.isinf(a) and a == b) else r


@_njit
def tl_logaddexp2(a, b):
    m = b if a < b else a
    r = m + np.log1p(np.exp2(-abs(a - b))) * 1.4426950408889634
    return a if (np.isinf(a) and a == b) else r


@_njit
def tl_logaddexp2_f32(a, b):
    m = b if a < b else a
    r = m + tl_log1p_f32(tl_exp2_f32(-abs(a - b))) * np.float32(1.4426950408889634)
    return a if (np.isinf(a) and a == b) else r


@_njit
def tl_xlogy(x, y):
    r = _like(x, 0.0) if x == 0 else x * np.log(y)
    return y if y != y else r


@_njit
def tl_xlogy_f32(x, y):
    r = np.float32(0) if x == 0 else x * tl_log_f32(y)
    return y if y != y else r


@_njit
def tl_xlog1py(x, y):
    r = _like(x, 0.0) if x == 0 else x * np.log1p(y)
    return y if y != y else r


@_njit
def tl_xlog1py_f32(x, y):
    r = np.float32(0) if x == 0 else x * tl_log1p_f32(y)
    return y if y != y else r


# ----- nextafter in a half type (values held in float32), ldexp -----

@_njit
def _next_half(a, b, mantissa_bits, min_exp, top):
    """nextafter(a, b) in a float type with ``mantissa_bits`` stored bits, smallest
    subnormal 2**min_exp and largest finite value ``top``, on exact values of that type held
    in a wider float."""
    if a != a or b != b:
        return np.float64(a) + np.float64(b)
    if a == b:
        return np.float64(b)
    if np.isinf(a):
        return math.copysign(top, a)
    if a == 0:
        return math.copysign(2.0 ** min_exp, b)
    m, e = math.frexp(np.float64(a))  # a = m 2**e, 0.5 <= |m| < 1
    k = max(e - 1 - mantissa_bits, min_exp)
    up = b > a
    if up != (a > 0) and abs(m) == 0.5 and k > min_exp:
        k -= 1  # toward zero from a power of two: the spacing below is half
    step = 2.0 ** k
    return np.float64(a) + step if up else np.float64(a) - step


@_njit
def tl_nextafter_f16(a, b):
    return _next_half(a, b, 10, -24, 65504.0)


@_njit
def tl_nextafter_bf16(a, b):
    return _next_half(a, b, 7, -133, 3.3895313892515355e38)


@_njit
def _ldexp_exponent(e):
    """An integer exponent held in a float, clamped where every float result saturates."""
    return np.int64(min(max(np.float64(e), -2000.0), 2000.0))


@_njit
def tl_ldexp(x, e):
    return math.ldexp(np.float64(x), _ldexp_exponent(e))


@_njit
def tl_ldexp_f32(x, e):
    """x * 2**e exactly in float64, in two exact power-of-two steps (the kernel's float32
    cast rounds once, subnormals included); call-free, so it vectorizes."""
    k = _ldexp_exponent(e)
    k1 = k // 2
    return np.float64(x) * _pow2_f64(k1) * _pow2_f64(k - k1)


# ----- nan_to_num, logit, sinc, entr -----

@_njit
def tl_nan_to_num(x, nan, posinf, neginf):
    r = posinf if x == np.inf else (neginf if x == -np.inf else x)
    return nan if x != x else r


@_njit
def tl_logit_clamped(x, lo, hi):
    c = lo if x < lo else (hi if x > hi else x)
    return np.log(c / (_like(c, 1.0) - c))


@_njit
def tl_sinc(x, pi):
    p = x * pi  # pi in x's type: the product rounds as ATen's does
    return _like(x, 1.0) if x == 0 else np.sin(p) / p


@_njit
def tl_entr(x):
    r = -x * np.log(x) if x > 0 else (_like(x, 0.0) if x == 0 else _like(x, -np.inf))
    return x if x != x else r


@_njit
def tl_entr_f32(x):
    r = -x * tl_log_f32(x) if x > 0 else (np.float32(0) if x == 0 else np.float32(-np.inf))
    return x if x != x else r


# ----- digamma and the modified Bessel functions (ops/special_math.py, in float64) -----

_I0E_A = np.array(special_math.I0E_A)
_I0E_B = np.array(special_math.I0E_B)
_I1E_A = np.array(special_math.I1E_A)
_I1E_B = np.array(special_math.I1E_B)
_DIGAMMA_A = np.array(special_math.DIGAMMA_A)
_PSI_10 = special_math.PSI_10


@_njit_ir
def _chbevl(x, coeffs):
    b0 = coeffs[0]
    b1 = 0.0
    b2 = 0.0
    for i in range(1, coeffs.size):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + coeffs[i]
    return 0.5 * (b0 - b2)


@_njit_ir
def _bessel(x, e, small, large, odd):
    """ATen's calc_i0/i1 (e = exp(|x|)) and calc_i0e/i1e (e = 1) on |x| = ``x``."""
    near = _chbevl(x / 2.0 - 2.0, small)
    far = _chbevl(32.0 / x - 2.0, large)
    near = e * x * near if odd else e * near
    far = e * far / np.sqrt(x)
    return near if x <= 8.0 else far


@_njit
def tl_i0(x):
    xd = abs(np.float64(x))
    return _bessel(xd, np.exp(xd), _I0E_A, _I0E_B, False)


@_njit
def tl_i0_f32(x):
    # exp in float32, as ATen's float kernel: i0 overflows where expf does (|x| > 88.7)
    return _bessel(abs(np.float64(x)), np.float64(tl_exp_f32(abs(x))), _I0E_A, _I0E_B, False)


@_njit
def tl_i0e(x):
    return _bessel(abs(np.float64(x)), 1.0, _I0E_A, _I0E_B, False)


@_njit
def tl_i1(x):
    xd = abs(np.float64(x))
    out = _bessel(xd, np.exp(xd), _I1E_A, _I1E_B, True)
    return -out if x < 0 else out


@_njit
def tl_i1_f32(x):
    out = _bessel(abs(np.float64(x)), np.float64(tl_exp_f32(abs(x))), _I1E_A, _I1E_B, True)
    return -out if x < 0 else out


@_njit
def tl_i1e(x):
    out = _bessel(abs(np.float64(x)), 1.0, _I1E_A, _I1E_B, True)
    return -out if x < 0 else out


@_njit
def tl_digamma(x):
    """ATen's calc_digamma in float64 (special_math.digamma): the recurrence is a fixed 10
    steps of selects instead of a while loop."""
    x0 = np.float64(x)
    reflect = x0 < 0.0
    r = x0 - np.trunc(x0)
    correction = -np.pi / np.tan(np.pi * r) if reflect else 0.0
    y = 1.0 - x0 if reflect else x0
    result = 0.0
    for _ in range(10):
        step = y < 10.0
        result -= 1.0 / y if step else 0.0
        y += 1.0 if step else 0.0
    z = 1.0 / (y * y)
    poly = 0.0
    for i in range(_DIGAMMA_A.size):
        poly = poly * z + _DIGAMMA_A[i]
    tail = z * poly if y < 1.0e17 else 0.0
    out = result + _PSI_10 if y == 10.0 else result + np.log(y) - 0.5 / y - tail
    out = np.nan if (reflect and x0 == np.floor(x0)) else out + correction
    return math.copysign(np.inf, -x0) if x0 == 0.0 else out


__all__ = [name for name in dir() if name.startswith("tl_")]
