"""Float64-native tanh, sigmoid and the activations built on exp / log1p (``tl_<name>_f64``):
sigmoid, silu, gelu(approximate='tanh'), softplus, log_sigmoid, mish, elu (selu, celu).

Call-free and branch-free like ``math_f64.py``, whose primitives they use (the reduced
exponential ``_exp_core``, log1p's parts, the FMA and bit intrinsics); the algorithms, the
measured errors (within 1 ulp of the correctly rounded result, against mpmath) and the reasons
are in ``math_f64``'s docstring.  ``scalar_math`` re-exports every ``tl_*`` name here.
"""
from __future__ import annotations

from .math_f64 import (
    _TINY,
    _exp_core,
    _fma,
    _log1p_parts,
    _njit,
    _one_plus,
    _pow2,
    _scale_parts,
    tl_expm1_f64,
)

_SIG_LO, _SIG_HI = -40.0, 760.0  # exp(-t) clamp: sigmoid is 1 above 37; x exp(x) 0 below -752


@_njit
def _sigmoid_parts(v, vlo):
    """For e = exp(v + vlo) = 2**n (1 + r + c), v clamped to [-40, 760] (NaN: anything
    finite): (dh, dl, s1, s2) with 1 / (1 + e) = (1 / (dh + dl)) * s1 * s2: dh + dl =
    2**-n + 1 + r + c as a double-double, s1 s2 = 2**-n in two normal factors."""
    vc = _SIG_LO if v < _SIG_LO else v
    vc = _SIG_HI if vc > _SIG_HI else vc
    vc = 0.0 if v != v else vc
    n, r, c = _exp_core(vc, vlo)
    nc = 1000 if n > 1000 else n
    u = _pow2(-nc)  # 2**-n (negligible against 1 + r + c for n > 60)
    a = u if u > 1.0 else 1.0
    b = 1.0 if u > 1.0 else u
    d0 = a + b  # Fast2Sum: d0 + e0 = u + 1 exactly
    e0 = b - (d0 - a)
    dh = d0 + r  # TwoSum: dh + e1 = d0 + r exactly
    bb = dh - d0
    e1 = (d0 - (dh - bb)) + (r - bb)
    dl = (e0 + e1) + c
    dh2 = dh + dl  # normalized: |dl| <= ulp(dh) / 2
    dl = dl - (dh2 - dh)
    dh = dh2
    s1, s2 = _scale_parts(-n)
    return dh, dl, s1, s2


@_njit
def _recip(dh, dl):
    """1 / (dh + dl), |dl| < ulp(dh), rounded about once (one Newton step)."""
    y = 1.0 / dh
    return _fma(y, _fma(-y, dh, 1.0) - y * dl, y)


@_njit
def _quot(x, dh, dl):
    """x / (dh + dl), |dl| < ulp(dh), rounded about once."""
    q = x / dh
    return _fma(_fma(-q, dh, x) - q * dl, 1.0 / dh, q)


@_njit
def tl_sigmoid_f64(x):
    dh, dl, s1, s2 = _sigmoid_parts(-x, 0.0)
    s2 = 0.0 if x < -745.2 else s2  # rounds to 0: no underflowing product
    return x if x != x else (_recip(dh, dl) * s1) * s2


@_njit
def tl_silu_f64(x):
    dh, dl, s1, s2 = _sigmoid_parts(-x, 0.0)
    res = (_quot(x, dh, dl) * s1) * s2
    res = x if x > 40.0 else res  # also x = inf
    res = x if x == 0.0 else res  # keeps -0.0
    return x * 0.0 if x < -_SIG_HI else res  # rounds to -0.0 (nan at -inf, as x * sigmoid)


_GELU_C = 2.0 * 0.7978845608028654  # 2 sqrt(2/pi), as PyTorch's float64 kBeta doubled
_GELU_K = 0.044715


@_njit
def tl_gelu_tanh_f64(x):
    # 0.5 x (1 + tanh(u)) = x sigmoid(2u) = x / (1 + exp(-t)), t = 2u as a double-double
    xc = 30.0 if x > 30.0 else x  # gelu(x) = x above 30, rounds to -0.0 below -30
    xc = -30.0 if xc < -30.0 else xc
    xc = 0.0 if x != x else xc
    x2 = xc * xc
    x2l = _fma(xc, xc, -x2)
    x3 = x2 * xc
    x3l = _fma(x2, xc, -x3) + x2l * xc
    ah = _GELU_K * x3
    al = _fma(_GELU_K, x3, -ah) + _GELU_K * x3l
    wh = xc + ah  # TwoSum
    bb = wh - xc
    wl = ((xc - (wh - bb)) + (ah - bb)) + al
    th = _GELU_C * wh
    tl = _fma(_GELU_C, wh, -th) + _GELU_C * wl
    dh, dl, s1, s2 = _sigmoid_parts(-th, -tl)
    res = (_quot(xc, dh, dl) * s1) * s2
    res = x if (x > 30.0) | (x == 0.0) else res  # keeps -0.0
    res = x * 0.0 if x < -30.0 else res  # -0.0 (nan at -inf, as 0.5 x (1 + tanh u))
    return x if x != x else res


_TANH_P = (-2.060276537636634e-05, 8.511313685577672e-05, -0.0002346347410887237,
           0.0005889360520074057, -0.001455661830100716, 0.003592110378689024,
           -0.008863234397814355, 0.021869488493666944, -0.053968253967434016,
           0.13333333333332714, -0.3333333333333333)  # (tanh(x) / x - 1) / x**2, x <= 0.55


@_njit
def tl_tanh_f64(x):
    a = abs(x)
    z = x * x
    p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10 = _TANH_P
    q = _fma(_fma(_fma(_fma(_fma(p0, z, p1), z, p2), z, p3), z, p4), z, p5)
    q = _fma(_fma(_fma(_fma(_fma(q, z, p6), z, p7), z, p8), z, p9), z, p10)
    small = _fma(x, z * q, x)
    # 1 - 2 sigmoid(-2a): 2 sigmoid(-2a) <= 1/2 for a >= 0.55, accurate to about half an ulp
    dh, dl, s1, s2 = _sigmoid_parts(2.0 * a if a < 22.0 else 44.0, 0.0)  # tanh(22) = 1
    big = 1.0 - ((2.0 * _recip(dh, dl)) * s1) * s2
    big = -big if x < 0.0 else big
    res = small if a < 0.55 else big
    res = x if a < _TINY else res  # keeps -0.0 and the subnormals
    return x if x != x else res


@_njit
def _exp_dd(x):
    """exp(x) = (eh + el) * 2**n1 * 2**n2 for x in [-760, 710], eh + el a double-double."""
    n, r, c = _exp_core(x, 0.0)
    eh, el = _one_plus(r, c)
    s1, s2 = _scale_parts(n)
    return eh, el, s1, s2


@_njit
def _softplus_dd(y):
    """softplus(y) = max(y, 0) + log1p(exp(-|y|)) as a double-double (h, l), y not NaN:
    exp's rounding error goes to log1p as its low part, the sum is exact but for b's rounding."""
    v = -abs(y)
    vc = -760.0 if v < -760.0 else v
    eh, el, s1, s2 = _exp_dd(vc)
    s2 = 0.0 if v < -745.2 else s2
    e = (eh * s1) * s2
    elo = (el * s1) * s2
    a, f, b = _log1p_parts(e, elo)
    tiny = e < _TINY  # log1p(e) = e (subnormals too)
    f = e if tiny else f
    b = -elo if tiny else b
    m = y if y > 0.0 else 0.0
    sa = a + f  # TwoSum
    bb = sa - a
    e1 = (a - (sa - bb)) + (f - bb)
    h = m + sa  # TwoSum
    bb = h - m
    e2 = (m - (h - bb)) + (sa - bb)
    lo = (e1 + e2) - b
    hh = h + lo
    big = y > 40.0  # softplus(y) rounds to y (y = inf too)
    return (y if big else hh), (0.0 if big else lo - (hh - h))


@_njit
def tl_softplus_f64(x, beta, threshold):
    # log1p(exp(y)) / beta, y = beta x, the quotient of the double-double rounded once
    b = beta * 1.0  # an int literal beta as a double
    y = x * b
    h, lo = _softplus_dd(0.0 if y != y else y)
    q = h / b
    res = q + (_fma(-q, b, h) + lo) / b
    res = x if y > threshold else res
    return y if y != y else res


@_njit
def tl_log_sigmoid_f64(x):
    # min(x, 0) - log1p(exp(-|x|)) = -softplus(-x) (+0.0 where it rounds to 0, as PyTorch)
    h, lo = _softplus_dd(0.0 if x != x else -x)
    return x if x != x else 0.0 - (h + lo)


@_njit
def tl_mish_f64(x):
    # tanh(log1p(e)) = n / (n + 2), n = e (e + 2), e = exp(x): in double-double, then x * that
    # with one rounding.  Below -38 tanh(log1p(e)) rounds to e: x e, scaled last.
    xc = 40.0 if x > 40.0 else x  # mish(x) = x above 40 (t = 1 - 2 e**-2x)
    xc = -760.0 if xc < -760.0 else xc
    xc = 0.0 if x != x else xc
    eh, el, s1, s2 = _exp_dd(xc)
    tail = (_fma(xc, eh, xc * el) * s1) * s2  # x e for x < -38
    mid = xc > -38.0
    s1m = s1 if mid else 1.0
    s2m = s2 if mid else 1.0
    e = (eh * s1m) * s2m  # exp(x) as e + el2 (exact scaling for x >= -38)
    el2 = (el * s1m) * s2m
    # g = e + 2 (double-double)
    gh = e + 2.0
    bb = gh - e
    gl = ((e - (gh - bb)) + (2.0 - bb)) + el2
    # n = e * g
    nh = e * gh
    nl = _fma(e, gh, -nh) + (e * gl + el2 * gh)
    # d = n + 2
    dh = nh + 2.0
    bb = dh - nh
    dl = ((nh - (dh - bb)) + (2.0 - bb)) + nl
    # t = n / d as th + tl
    th = nh / dh
    tl = (_fma(-th, dh, nh) + nl - th * dl) / dh
    res = _fma(xc, th, xc * tl)
    res = tail if xc <= -38.0 else res
    res = x if (x > 40.0) | (x == 0.0) else res  # keeps -0.0
    res = x * 0.0 if x < -760.0 else res  # -0.0 (nan at -inf)
    return x if x != x else res


@_njit
def tl_elu_f64(x, alpha, scale, input_scale):
    neg = tl_expm1_f64(x * input_scale) * (alpha * scale)
    return x * scale if x > 0.0 else neg


__all__ = [name for name in dir() if name.startswith("tl_") and name != "tl_expm1_f64"]
