"""Scalar helpers that the registry's Numba templates call by bare name.

Generated CPU kernels do ``from torchlike.cpu_backend.scalar_math import *``, so a template such
as ``tl_remainder_int({self}, {other}, err)`` resolves here.  Every helper is
``@_njit`` (math_f32.py): a plain scalar function compiled once, which LLVM inlines into the
kernel loop.

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
* ``tl_<name>_f32`` helpers (exp, exp2, expm1, log, log1p, log2, log10, tanh, sigmoid, silu,
  gelu_tanh, mish, softplus, elu; sin, cos, tan; erf, erfc, erfinv, gelu; asin, acos, atan, atan2, sinh, cosh,
  asinh, acosh, atanh) are the float32-compute versions the templates pick by dtype:
  call-free, branch-free, float32 arithmetic (``math_f32.py``; ``math_trig_f32.py`` for sin,
  cos, tan, with 64-bit integers for huge arguments; ``math_erf_f32.py``;
  ``math_inverse_f32.py``; re-exported here), within 2 ulp
  of the correctly rounded float32 result (gelu and mish: 4, where PyTorch's own are looser);
  ``tl_pow_f32`` (below) computes in float64.  The
  previous float64-compute versions stay below as ``f64_<name>_f32`` (bench/accuracy.py
  compares them).
* ``tl_<name>_f64`` helpers (exp, exp2, expm1, log, log1p, log2, log10, sinh, cosh, tanh,
  sigmoid, silu,
  gelu_tanh, softplus, mish, elu, log_sigmoid; ``math_f64.py`` and ``math_act_f64.py``,
  re-exported here) are the
  float64 templates': call-free, branch-free float64 arithmetic, within 1 ulp of the
  correctly rounded result.  The other float64 math (sin, cos, erf, ...) keeps libm.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic, overload

from ..ops import casting
from .math_f32 import _njit  # how every helper is compiled and inlined

# ----- integer division (C truncation for fmod/trunc, Python floor for remainder/floor) -----
# MIN // -1 overflows: x86's idiv traps (PyTorch's CPU kernels die of SIGFPE there) and Numba's
# // gives 0.  We define it as two's complement wrap-around, MIN, with remainder 0, as numpy and
# the CUDA kernels give: -a wraps to MIN.

@_njit
def tl_int_div_trunc(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a  # zero of a's type
    if b == -1:
        return -a
    q = a // b  # floor; C truncation rounds up instead where inexact with mixed signs
    if a - q * b != 0 and (a < 0) != (b < 0):
        q += 1
    return q


@_njit
def tl_int_div_floor(a, b, err):
    if b == 0:
        err[0] = 1
        return a - a
    if b == -1:
        return -a
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


# ----- dtype conversions: float -> integer as ``torchlike/ops/casting.py`` defines it -----
#
# ``np.int32(x)`` of a float that does not fit is LLVM ``fptosi`` poison (Numba kernels stored 0
# for uint8(-1.0) where PyTorch gives 255), so the conversion is spelled out: trunc(x) when
# ``MIN <= x < -MIN`` of the type it goes through (both bounds exact in float32 and float64; NaN
# fails), else MIN (x86's "integer indefinite"); int8/int16 wrap the int32 result, uint8 the
# int64 one.  Only a clamped value is converted (``max(lo, x)`` is ``lo`` for NaN: Numba's max
# keeps its first argument unless the second compares greater), so no poison exists, and MIN
# is blended in arithmetically: a ``a if c else b`` here, inlined twice into one kernel, trips
# Numba's SSA check (NumbaIRAssumptionWarning).  The compares, min/max and blend vectorize.
# Integer and bool arguments (a template that computes an integer) wrap.  Kernels call
# ``tl_float_to_<dtype>``; called from Python, the functions apply ``ops.casting`` to a value.

def tl_float_to_int64(x):
    return int(casting.cast_value(x, "int64"))


def tl_float_to_int32(x):
    return int(casting.cast_value(x, "int32"))


def tl_float_to_int16(x):
    return int(casting.cast_value(x, "int16"))


def tl_float_to_int8(x):
    return int(casting.cast_value(x, "int8"))


def tl_float_to_uint8(x):
    return int(casting.cast_value(x, "uint8"))


def _float_to_int(via):
    """An overload of ``tl_float_to_<via>`` (int32/int64) for Numba's argument types."""
    ity = getattr(np, via)
    low = int(np.iinfo(via).min)

    def typer(x):
        if isinstance(x, types.Float):
            fty = np.float32 if x.bitwidth == 32 else np.float64
            lo, hi, least = fty(low), fty(-low), ity(low)
            top = np.nextafter(hi, fty(0))  # the largest float below -MIN

            def impl(x):
                t = ity(min(max(lo, x), top))
                return t + (least - t) * ity(not ((x >= lo) & (x < hi)))
            return impl
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: ity(x)
        return None
    return typer


def _wrapped(to, via):
    """An overload of ``tl_float_to_<to>``: the ``via`` conversion, wrapped to ``to``."""
    ity = getattr(np, to)

    def typer(x):
        if isinstance(x, types.Float):
            return lambda x: ity(via(x))
        if isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: ity(x)
        return None
    return typer


overload(tl_float_to_int64, inline="always")(_float_to_int("int64"))
overload(tl_float_to_int32, inline="always")(_float_to_int("int32"))
overload(tl_float_to_int16, inline="always")(_wrapped("int16", tl_float_to_int32))
overload(tl_float_to_int8, inline="always")(_wrapped("int8", tl_float_to_int32))
overload(tl_float_to_uint8, inline="always")(_wrapped("uint8", tl_float_to_int64))


# ----- vectorizable float32 transcendental functions -----
#
# pip's llvmlite has no SVML, so ``np.exp(x)`` on float32 in a loop is a scalar ``expf`` call and
# the loop cannot be vectorized.  The ``tl_*_f32`` helpers below are call-free and branch-free
# (conditionals are ``a if c else b`` selects, which LLVM if-converts), so LLVM's loop vectorizer
# turns a kernel using them into SIMD code.  They compute in float64: a float32 argument is exact
# as a double (subnormals included), a degree-10 polynomial is accurate to ~1e-15, and the
# kernel's final cast rounds once to float32 -- within 1 ulp of the correctly rounded result
# (tests/test_scalar_math.py measures it).  Overflow, underflow, subnormals, inf and NaN fall out
# of that final cast; the selects below only pin down the values a polynomial gets wrong
# (log(0) = -inf, log(<0) = nan, -0.0 kept where numpy keeps it).  Float64 compute keeps libm.

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453
_LOG10_2 = 0.30102999566398120
_LOG10_E = 0.43429448190325176
_ROUND = 6755399441055744.0  # 1.5 * 2**52: t + _ROUND rounds t to an integer in the low bits
_F32_OVERFLOW = 3.4028235677973366e38  # doubles at or above this round to float32 inf


@intrinsic
def _f64_from_bits(typingctx, bits):
    """The double whose IEEE bits are the int64 ``bits`` (a bitcast, no conversion)."""
    if bits != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _f64_bits(typingctx, x):
    """The IEEE bits of the double ``x`` as an int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.IntType(64))
    return types.int64(types.float64), codegen


@_njit
def _exp_d(x):
    """exp of a double, ~1e-15 relative on [-708, 709]; 0 below, inf above (fine for float32
    results: both are far outside float32's range); NaN propagates."""
    xc = -708.0 if x < -708.0 else x  # NaN compares false and stays NaN
    xc = 709.0 if xc > 709.0 else xc
    t = xc * _LOG2E + _ROUND  # round(x / ln2) in the low mantissa bits, no conversion needed
    nf = t - _ROUND
    n = _f64_bits(t) - _f64_bits(_ROUND)
    r = xc - nf * _LN2  # |r| <= ln2 / 2
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.6666666666666666e-01 + r * (
        4.1666666666666664e-02 + r * (8.3333333333333332e-03 + r * (
            1.3888888888888889e-03 + r * (1.9841269841269841e-04 + r * (
                2.4801587301587302e-05 + r * (2.7557319223985893e-06 + r * (
                    2.7557319223985888e-07))))))))))
    res = p * _f64_from_bits((n + 1023) << 52)
    res = np.inf if x > 709.0 else res
    return 0.0 if x < -708.0 else res


@_njit
def _expm1_d(x):
    """expm1 of a double: a Taylor polynomial for |x| < 0.25 (no cancellation; keeps -0.0),
    exp(x) - 1 elsewhere."""
    p = x * (1.0 + x * (0.5 + x * (1.6666666666666666e-01 + x * (
        4.1666666666666664e-02 + x * (8.3333333333333332e-03 + x * (
            1.3888888888888889e-03 + x * (1.9841269841269841e-04 + x * (
                2.4801587301587302e-05 + x * 2.7557319223985893e-06))))))))
    big = _exp_d(x) - 1.0
    return p if abs(x) < 0.25 else big


@_njit
def _log_series(num, den):
    """log((1 + f) / (1 - f)) = 2 atanh(f) for f = num / den, |f| <= 0.1716."""
    f = num / den
    s = f * f
    return 2.0 * f * (1.0 + s * (3.3333333333333333e-01 + s * (2.0e-01 + s * (
        1.4285714285714285e-01 + s * (1.1111111111111111e-01 + s * (
            9.0909090909090912e-02 + s * (7.6923076923076927e-02 + s * (
                6.6666666666666666e-02 + s * 5.8823529411764705e-02))))))))


@_njit
def _log_parts(u):
    """(e, m) with u = 2**e * m, m in [sqrt(1/2), sqrt(2)), for a positive normal double u
    (e as a double)."""
    bits = _f64_bits(u)
    # exponent field as a double without an int -> float conversion: (2**52 + E) - (2**52 + 1023)
    e = _f64_from_bits((bits >> 52) | 0x4330000000000000) - 4503599627371519.0
    m = _f64_from_bits((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    hi = m > 1.4142135623730951
    m = m * 0.5 if hi else m
    e = e + 1.0 if hi else e
    return e, m


@_njit
def _log_special(x, res, pole):
    """log's result with the special inputs fixed: pole -> -inf, below -> nan, +inf, nan."""
    res = np.inf if x == np.inf else res
    res = -np.inf if x == pole else res
    return np.nan if not (x >= pole) else res  # x < pole, or NaN


@_njit
def _log_d(x):
    e, m = _log_parts(x)
    return e, _log_series(m - 1.0, m + 1.0)


@_njit
def _log1p_d(x):
    """log1p: for x in [sqrt(1/2) - 1, sqrt(2) - 1] the series on x / (2 + x) (no 1 + x
    rounding, keeps -0.0); elsewhere log(1 + x), well conditioned there."""
    u = 1.0 + x
    e, m = _log_parts(u if u > 0.0 else 1.0)
    small = (x > -0.2928932188134524) & (x < 0.41421356237309503)
    num = x if small else m - 1.0
    den = 2.0 + x if small else m + 1.0
    series = _log_series(num, den)
    return series if small else e * _LN2 + series  # (0.0 + -0.0 would lose log1p(-0.0) = -0.0)


@_njit
def f64_exp_f32(x):
    return _exp_d(np.float64(x))


@_njit
def f64_expm1_f32(x):
    return _expm1_d(np.float64(x))


@_njit
def f64_log_f32(x):
    xd = np.float64(x)
    e, lm = _log_d(xd if xd > 0.0 else 1.0)
    return _log_special(xd, e * _LN2 + lm, 0.0)


@_njit
def f64_log2_f32(x):
    xd = np.float64(x)
    e, lm = _log_d(xd if xd > 0.0 else 1.0)
    return _log_special(xd, e + lm * _LOG2E, 0.0)  # exact integer for powers of two


@_njit
def f64_log10_f32(x):
    xd = np.float64(x)
    e, lm = _log_d(xd if xd > 0.0 else 1.0)
    return _log_special(xd, e * _LOG10_2 + lm * _LOG10_E, 0.0)


@_njit
def f64_log1p_f32(x):
    xd = np.float64(x)
    return _log_special(xd, _log1p_d(xd), -1.0)


@_njit
def _tanh_d(x):
    # tanh(x) = expm1(2x) / (expm1(2x) + 2): no cancellation for either sign; |x| > 20 is +-1
    xc = 20.0 if x > 20.0 else x
    xc = -20.0 if xc < -20.0 else xc
    em = _expm1_d(2.0 * xc)
    return em / (em + 2.0)


@_njit
def f64_tanh_f32(x):
    return _tanh_d(np.float64(x))


@_njit
def f64_sigmoid_f32(x):
    return 1.0 / (1.0 + _exp_d(-np.float64(x)))


@_njit
def f64_silu_f32(x):
    xd = np.float64(x)
    return xd / (1.0 + _exp_d(-xd))


@_njit
def f64_gelu_tanh_f32(x):
    # 0.5 x (1 + tanh(u)) = x * sigmoid(2u): no cancellation in the negative tail
    xd = np.float64(x)
    u = 0.7978845608028654 * (xd + 0.044715 * xd * xd * xd)
    return xd / (1.0 + _exp_d(-2.0 * u))


@_njit
def f64_softplus_f32(x, beta, threshold):
    xb = x * beta  # float32, as the interpreter compares it
    e = _exp_d(np.float64(xb))
    e = np.inf if e >= _F32_OVERFLOW else e  # float32 exp overflows, as in the interpreter
    r = _log_special(e, _log1p_d(e), -1.0) / np.float64(beta)  # inf and NaN pass through
    return np.float64(x) if xb > threshold else r


@_njit
def f64_mish_f32(x):
    # tanh(log1p(e)) = ((1+e)^2 - 1) / ((1+e)^2 + 1) = n / (n + 2) with n = e (e + 2)
    xd = np.float64(x)
    e = _exp_d(xd if xd < 20.0 else 20.0)
    n = e * (e + 2.0)
    t = n / (n + 2.0)
    return xd * (1.0 if xd >= 20.0 else t)


@_njit
def f64_elu_f32(x, alpha, scale, input_scale):
    neg = np.float64(alpha) * np.float64(scale) * _expm1_d(np.float64(x * input_scale))
    return np.float64(x * scale) if x > 0 else neg


@_njit
def tl_pow_f32(a, b):
    """float32 ``a ** b``: small integral exponents and 0.5 as products / sqrt (as PyTorch and
    numpy do); a constant exponent folds the tests away, leaving SIMD-friendly code.  Results
    equal powf's for every input (the tensor-exponent semantics): the helper cannot tell a
    constant exponent, where numpy/PyTorch use sqrt itself (nan at -inf, -0.0 at -0.0)."""
    ad = np.float64(a)
    if b == 2.0:
        return ad * ad
    if b == 3.0:
        return ad * ad * ad
    if b == 0.5:  # powf's values at -0.0 and -inf (+0.0, inf), which sqrt's differ from
        return np.inf if ad == -np.inf else np.sqrt(ad) + 0.0
    if b == 1.0:
        return ad
    if b == -1.0:
        return 1.0 / ad
    if b == -2.0:
        return 1.0 / (ad * ad)
    if b == 4.0:
        sq = ad * ad
        return sq * sq
    return np.float64(a ** b)


# the float32-native helpers (call-free, float32 SIMD); the ``f64_*_f32`` versions above are the
# previous float64-compute ones, kept for bench/accuracy.py's comparison
from .math_f32 import (  # noqa: E402, F401, I001 (re-exported for the kernels)
    tl_elu_f32, tl_exp2_f32, tl_exp_f32, tl_expm1_f32, tl_gelu_tanh_f32, tl_log1p_f32, tl_mish_f32,
    tl_log2_f32, tl_log10_f32, tl_log_f32, tl_sigmoid_f32, tl_silu_f32,
    tl_softplus_f32, tl_tanh_f32,
)
from .math_f64 import *  # noqa: E402, F401, F403 (float64 exp/log family, sinh, cosh)
from .math_act_f64 import *  # noqa: E402, F401, F403 (float64 tanh, sigmoid, activations)
from .scalar_math_nn import *  # noqa: E402, F401, F403 (shifts, lgamma, log_sigmoid)
from .scalar_math_pointwise import *  # noqa: E402, F401, F403 (ops/elementwise_pointwise.py)
from .vector_width import tl_wide_vectors  # noqa: E402, F401
from .math_trig_f32 import (  # noqa: E402, F401, I001
    tl_cos_f32, tl_cos_fast_f32, tl_sin_f32, tl_sin_fast_f32, tl_tan_f32, tl_tan_fast_f32,
    tl_trig_huge_f32,
)
from .math_erf_f32 import (  # noqa: E402, F401, I001 (re-exported for the kernels)
    tl_erf_f32, tl_erfc_f32, tl_erfinv, tl_erfinv_f32, tl_gelu_backward_f32, tl_gelu_f32,
)
from .math_inverse_f32 import (  # noqa: E402, F401, I001 (re-exported for the kernels)
    tl_acos_f32, tl_acosh_f32, tl_asin_f32, tl_asinh_f32, tl_atan2_f32, tl_atan_f32,
    tl_atanh_f32, tl_cosh_f32, tl_sinh_f32,
)

__all__ = [name for name in dir() if name.startswith("tl_")] + ["math", "np"]
