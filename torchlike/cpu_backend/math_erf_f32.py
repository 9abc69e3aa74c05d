"""Float32-native erf, erfc, erfinv and gelu (erf form) for the generated Numba kernels, with the
conventions of ``math_f32.py`` (call-free, branch-free float32 arithmetic, ``np.float32``
constants, within 2 ulp of the correctly rounded float32 result over the whole range).

One core, ``_erfc_parts``, computes erfc(a) = exp(-a^2) erfcx(a) for a in [0.5, 10.2] (erfc
rounds to 0 above 10.13) with the relative accuracy erfc's tail needs down to the subnormals:

* exp(-a^2): a^2 comes exactly as hi + lo (FMA), and exp's reduced argument is carried as
  r + r_lo (the Cody-Waite step's rounding recovered by TwoSum), so exp(-a^2) = 2**n (1 + w)
  with w good to ~1e-9; rounding a^2 to float32 instead costs up to a^2 2**-24 ~ 6e-6
  relative (100 ulp) at a = 10 (Cephes' erfcf has that error).
* erfcx(a) = exp(a^2) erfc(a) is smooth: a degree-11 polynomial in v = a - 0.875 on [0.5, 1.25)
  (piece A) and, on [1.25, 10.2] (piece B), a erfcx(a) (within [0.45, 0.57]: erfcx itself falls
  from 0.37 to 0.055 there, and a c0 + v Q(v) form would cancel) in v = 1/a - 0.449; one Horner
  chain, its coefficients picked by selects.  Each is c0 + (c0_lo + v Q(v)), c0 split in two
  floats.  The fits (near-minimax for relative error: Lawson-weighted least squares on mpmath
  values, coefficients rounded to float32 one at a time and the rest refitted) are good to
  0.02 ulp.
* The roundings of v (1/a, 1/a - 0.449) and a caller's low part of the argument (gelu passes
  x / sqrt(2) as hi + lo) are corrected to first order with erfcx' = 2 a erfcx - 2 / sqrt(pi).
* The result is c0 + y, y summing the small terms with FMAs, scaled by 2**n in two steps (one
  rounding into the subnormals): within 0.8 ulp before that rounding.

erf(x) is x + x P(x^2) for |x| < 1 (the x term exact, P a degree-6 fit) and +-(1 - erfc(|x|))
above.  erfc(x) for -1 < x < 0.5 is 1 - erf(x) with erf as two floats (one rounding), the core
above and 2 - erfc(-x) below.  gelu(x) = x Phi(x) is x/2 (1 + erf(x / sqrt 2)) for
-1/2 < x / sqrt 2 < 1 (erf in two floats), x - x/2 erfc(x / sqrt 2) above and
x/2 erfc(|x| / sqrt 2) below, the product x/2 c0 split exactly: no cancellation anywhere
(0.5 x (1 + erf) loses the negative tail: PyTorch's float32 gelu(-6) is -0.0, not -5.9e-9).

erfinv starts from Giles' split ("Approximating the erfinv function", 2010: erfinv(x) / x as a
polynomial in w = -log(1 - x^2), or in sqrt(w) for w >= 5; degree-5 fits, 2e-5) and takes one
Newton step, which squares that error.  The residual must be accurate to far below ulp(x), as
erfinv's slope amplifies it: erf(y) - x from erf in two floats for |x| < 0.84 (y < 1), and
erfc(y) - (1 - |x|) above, both terms accurate relative to the small 1 - |x| (float32 erf(y) - x
would be off by ulp(1) e^(y^2), 1e-3 relative, near 1).

gelu_tanh and mish stay in float64 (scalar_math): a float32 gelu_tanh within 1 ulp (2u as
hi + lo, x / (1 + e^-2u) with the denominator in two floats and one quotient correction) ran
at 29-42 ms against 24 ms for the float64 helper (2^22 floats, 2 threads, prange loop).

``tl_erfinv`` is the float64 version (a float64 kernel's ``{"default": ...}`` template): the
same start and two Halley steps on libm's erf/erfc, as ops/elementwise_math.py's numpy ref.
"""
from __future__ import annotations

import math

import numpy as np

from ..ops.elementwise_math import ERFINV_CENTRAL, ERFINV_FAR, ERFINV_TAIL
from .math_f32 import (
    _C1,
    _C2,
    _HALF,
    _INF,
    _LOG2E,
    _MAGIC,
    _NAN,
    _ONE,
    _TWO,
    _ZERO,
    F,
    _exp_poly,
    _fma,
    _njit,
    _pow2i,
    _scale_parts,
    tl_log_f32,
)

_TWO_OVER_SQRTPI = F(1.12837917)
_SQRTPI_2, _SQRTPI_2_LO = F(0.886226925), F(-2.66232e-08)  # sqrt(pi) / 2 = hi + lo
_SQRT1_2, _SQRT1_2_LO = F(0.707106769), F(1.21016175e-08)  # 1 / sqrt(2) = hi + lo

# erf(x) / x - 1 as a polynomial in x^2 on [0, 1): relative error of erf 0.05 ulp
_ERF_P = (F(0.12837917), F(-0.37612626), F(0.11283599), F(-0.026854938), F(0.0051913788),
          F(-0.0008043746), F(7.983437e-05))

# piece A (a < 1.25): erfcx(a) = c0 + c0_lo + v Q(v), v = a - 0.875, fitted on [0.5, 1.25];
# piece B: a erfcx(a) = c0 + c0_lo + v Q(v), v = 1/a - 0.449, fitted on [1.25, 10.2]
_A_C, _A_C0, _A_C0LO = F(0.875), F(0.46431157), F(1.3273546e-08)
_A_Q = (F(-0.3158339), F(0.18795693), F(-0.10091441), F(0.049828034), F(-0.022924948),
        F(0.009931082), F(-0.0040844833), F(0.0015190571), F(-0.00048452057),
        F(0.0004291872), F(-0.000369183))
_B_C, _B_C0, _B_C0LO = F(0.4490196), F(0.51920414), F(-2.5373579e-08)
_B_Q = (F(-0.16248932), F(-0.056575026), F(0.1421095), F(-0.11743679), F(0.023418752),
        F(0.08678491), F(-0.16197596), F(0.17206424), F(-0.056008484), F(-0.2479403),
        F(0.3505292))
_SPLIT = F(1.25)
_ERFC_MAX = F(10.2)  # erfc(a) rounds to 0 above 10.1277; the core is fitted up to 10.2


@_njit
def _erf_small_p(x):
    s = x * x
    p0, p1, p2, p3, p4, p5, p6 = _ERF_P
    return _fma(_fma(_fma(_fma(_fma(_fma(p6, s, p5), s, p4), s, p3), s, p2), s, p1), s, p0)


@_njit
def _erf_small(x):
    """erf(x) for |x| < 1: x + x P(x^2), one rounding after the exact x."""
    return _fma(x, _erf_small_p(x), x)


@_njit
def _erf_small2(x):
    """erf(x) = hi + lo for |x| < 1 (x P rounded once, the rest exact)."""
    p = _erf_small_p(x)
    xp = x * p
    hi = x + xp
    return hi, ((x - hi) + xp) + _fma(x, p, -xp)


@_njit
def _pick(b, x, y):
    return x if b else y


@_njit
def _erfc_parts(a, da, h, l):
    """erfc(a + da) = (c0 + y) * 2**n, returned as (c0, y, n, w) with exp(-(a + da)^2) =
    2**n (1 + w), for 0.5 <= a <= 10.2, |da| <= ulp(a), (a + da)^2 = h + l exactly.  Below 0.5
    the result is finite and wrong, (n, w) still right."""
    # exp(-h - l) = 2**n exp(r + r_lo): r + r_lo = -h - l - n ln2, r's rounding kept in r_lo
    n = (-h * _LOG2E + _MAGIC) - _MAGIC
    u = -h - n * _C1  # exact: n * _C1 has 17 bits and is within a factor 2 of h (or n = 0)
    p = n * _C2
    p_lo = _fma(n, _C2, -p)
    r = u - p
    bb = r - u
    r_lo = ((u - (r - bb)) + (-p - bb)) - p_lo - l  # TwoSum's error of u - p
    q = r * r * _exp_poly(r)  # exp(r) = 1 + r + q
    w_lo = _fma(r_lo, r + q + _ONE, q)  # exp(r + r_lo) = 1 + r + w_lo

    # G = c0 + sm (sm = c0_lo + v Q(v)) is erfcx(a) (piece A) or a erfcx(a) (B, v from 1/a)
    b = a >= _SPLIT
    t = _ONE / (a if b else _ONE)
    tail = _fma(-a, t, _ONE)  # 1 - a t, exact: 1/a = t (1 + tail) to first order
    c = _pick(b, _B_C, _A_C)
    x = _pick(b, t, a)
    v = x - c
    v_err = x - (v + c)  # v's rounding (1/a - 0.449 is inexact for 1/a < 0.22)
    q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10 = _A_Q
    k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10 = _B_Q
    s = _fma(_pick(b, k10, q10), v, _pick(b, k9, q9))
    s = _fma(s, v, _pick(b, k8, q8))
    s = _fma(s, v, _pick(b, k7, q7))
    s = _fma(s, v, _pick(b, k6, q6))
    s = _fma(s, v, _pick(b, k5, q5))
    s = _fma(s, v, _pick(b, k4, q4))
    s = _fma(s, v, _pick(b, k3, q3))
    s = _fma(s, v, _pick(b, k2, q2))
    s = _fma(s, v, _pick(b, k1, q1))
    s = _fma(s, v, _pick(b, k0, q0))
    c0 = _pick(b, _B_C0, _A_C0)
    sm = _fma(s, v, _pick(b, _B_C0LO, _A_C0LO))
    g0 = c0 + sm
    f = _pick(b, t, _ONE)  # erfcx = f G
    r0 = f * g0
    # G ran at a - delta instead of a + da: add delta G'(a), erfcx' = 2 a erfcx - 2/sqrt(pi)
    # (piece B: (a erfcx)' = erfcx + a erfcx', and 1/(a + da) = t (1 + tail - da t))
    delta = da + _pick(b, -a * (tail + a * v_err), v_err)
    rp = _fma(a + a, r0, -_TWO_OVER_SQRTPI)
    sm = sm + _fma(delta, _pick(b, _fma(a, rp, r0), rp), _pick(b, g0 * (tail - da * t), _ZERO))
    # G exp(r + r_lo) - c0 = sm + (c0 + sm) (r + w_lo); then times f, f c0 split exactly
    y = _fma(c0, r, _fma(sm, r, _fma(g0, w_lo, sm)))
    fc = f * c0
    return fc, _fma(f, y, _fma(f, c0, -fc)), n, r + w_lo


@_njit
def _erfc_pos(a):
    """erfc(a) for 0.5 <= a <= 10.2."""
    c0, y, n, w = _erfc_parts(a, _ZERO, a * a, _fma(a, a, -(a * a)))
    m1, m2 = _scale_parts(c0 + y, n)
    return m1 * m2


@_njit
def tl_erf_f32(x):
    a = abs(x)
    big = a >= _ONE
    ac = _pick(big, _pick(a < F(4.0), a, F(4.0)), _ONE)  # erf(4) rounds to 1; NaN -> 1
    e = _ONE - _erfc_pos(ac)
    e = _pick(x < _ZERO, -e, e)
    res = _pick(big, e, _erf_small(_pick(big, _ZERO, x)))
    return x if x != x else res


@_njit
def tl_erfc_f32(x):
    a = abs(x)
    ac = _pick(a <= _ERFC_MAX, a, _ONE)  # above: 0 or 2, and no underflowing arithmetic
    e = _erfc_pos(ac)
    e = _pick(a <= _ERFC_MAX, e, _ZERO)
    e = _pick(x < _ZERO, _TWO - e, e)
    # -1 < x < 0.5: 1 - erf(x) (in [0.48, 1.85]), erf(x) = hi + lo, 1 - hi = s + s_lo exactly:
    # one rounding at the end (the core is accurate relative to erfc, not to 1 - x)
    mid = (x > -_ONE) & (x < _HALF)
    hi, lo = _erf_small2(_pick(mid, x, _ZERO))
    s = _ONE - hi
    res = _pick(mid, s + (((_ONE - s) - hi) - lo), e)
    return x if x != x else res


_GELU_ZERO = F(-14.36)  # x Phi(x) rounds to -0.0 below -14.356
_GELU_ONE = F(5.5)  # Phi(x) rounds to 1 above 5.42: gelu(x) = x
_SUBNORMAL = F(0.70710678 * 2.0 ** -126)  # u = x / sqrt 2 below the smallest normal float
_HALF_UP, _HALF_DOWN = F(0.5 + 2.0 ** -23), F(0.5 - 2.0 ** -25)


@_njit
def tl_gelu_f32(x):
    # u = x / sqrt(2) = u + du exactly enough; u^2 = x^2 / 2 = h + l exactly
    xc = _pick((x > _GELU_ZERO) & (x < _GELU_ONE), x, _ZERO)
    u = xc * _SQRT1_2
    du = _fma(xc, _SQRT1_2, -u) + xc * _SQRT1_2_LO
    a = abs(u)
    da = _pick(u < _ZERO, -du, du)
    h = xc * xc
    l = _fma(xc, xc, -h)
    c0, y, n, w = _erfc_parts(a, da, h * _HALF, l * _HALF)
    m = xc * _HALF
    # m erfc(|u|) = (m c0 + m y) 2**n, m c0 split exactly
    mc = m * c0
    mc_lo = _fma(m, c0, -mc)
    m1, m2 = _scale_parts(mc + _fma(m, y, mc_lo), n)
    neg = m1 * m2  # x < 0: x/2 erfc(-x / sqrt 2)
    m1, m2 = _scale_parts(c0 + y, n)
    big = _fma(-m, m1 * m2, xc)  # x >= sqrt 2: x - x/2 erfc(x / sqrt 2)
    # -1/2 < u < 1: x/2 (1 + erf(u + du)), erf(u + du) = hi + lo + du 2/sqrt(pi) e^(-u^2)
    # and 1 + hi = s + s_lo exactly: x/2 s + x/2 (the rest), one rounding
    hi, lo = _erf_small2(_pick(a < _ONE, u, _ZERO))
    lo = _fma(du * _TWO_OVER_SQRTPI, (_ONE + w) * _pow2i(_pick(n > F(-2.0), n, _ZERO)), lo)
    s = _ONE + hi
    small = _fma(m, s, m * (((_ONE - s) + hi) + lo))
    res = _pick((u > -_HALF) & (u < _ONE), small, _pick(u < _ZERO, neg, big))
    # subnormal x: x Phi(x) is just above (x > 0) or below x/2, which decides its ties
    res = _pick(a < _SUBNORMAL, x * _pick(x > _ZERO, _HALF_UP, _HALF_DOWN), res)
    res = _pick(x <= _GELU_ZERO, x * _ZERO, res)  # -0.0 (NaN at -inf, as x * Phi(x))
    res = _pick(x >= _GELU_ONE, x, res)
    return x if x != x else res


_ERFINV_TINY = F(2.0 ** -14)  # erfinv(x) = sqrt(pi)/2 x (1 + pi x^2 / 12 + ...): x^2 term < 2**-30
_ERFINV_BIG = F(0.84)  # erfinv(0.84) = 0.9945: below, y < 1 (_erf_small's range)
_GC = tuple(F(c) for c in ERFINV_CENTRAL)
_GT = tuple(F(c) for c in ERFINV_TAIL)


@_njit
def tl_erfinv_f32(x):
    a = abs(x)
    ok = a < _ONE
    ac = _pick(ok, a, _ZERO)
    # start: erfinv(a) / a = P(w - 2.5) (w < 5) or P(sqrt(w) - 3), w = -log(1 - a^2)
    om = _ONE - ac  # exact for a >= 0.5
    g = -tl_log_f32(om * (_ONE + ac))
    tl = g >= F(5.0)
    v = _pick(tl, np.sqrt(_pick(tl, g, _ZERO)) - F(3.0), g - F(2.5))
    c0, c1, c2, c3, c4, c5 = _GC
    t0, t1, t2, t3, t4, t5 = _GT
    p = _fma(_pick(tl, t5, c5), v, _pick(tl, t4, c4))
    p = _fma(p, v, _pick(tl, t3, c3))
    p = _fma(p, v, _pick(tl, t2, c2))
    p = _fma(p, v, _pick(tl, t1, c1))
    p = _fma(p, v, _pick(tl, t0, c0))
    y = ac * p
    # one Newton step on erf(y) = a: y += (a - erf(y)) sqrt(pi)/2 e^(y^2), the residual from
    # erf(y) in two floats (y < 1), or as erfc(y) - (1 - a) for a >= 0.84 (y >= 0.99), both
    # terms accurate relative to the (tiny) 1 - a there
    yc = _pick(y <= _ERFC_MAX, y, _ZERO)
    e0, ey, n, w = _erfc_parts(yc, _ZERO, yc * yc, _fma(yc, yc, -(yc * yc)))
    m1, m2 = _scale_parts(e0 + ey, n)
    big = ac >= _ERFINV_BIG
    hi, lo = _erf_small2(_pick(big, _ZERO, yc))  # the residual must beat ulp(a)
    res = _pick(big, m1 * m2 - om, (ac - hi) - lo)
    y = _fma(res * _pow2i(-n), _SQRTPI_2 / (_ONE + w), y)
    y = _pick(a == _ONE, _INF, _pick(ok, y, _NAN))
    y = _pick(x < _ZERO, -y, y)
    y = _pick(a < _ERFINV_TINY, x * _SQRTPI_2, y)  # keeps -0.0
    return x if x != x else y


# ----- float64 -----

_SQRTPI_2_D = 0.88622692545275801


@_njit
def tl_erfinv(x):
    """float64 erfinv: the float32 start in float64 and two Halley steps on libm's erf/erfc
    (erfc against the exact 1 - |x| for |x| >= 0.5), to ~1 ulp of float64."""
    xd = np.float64(x)
    a = abs(xd)
    if not a < 1.0:
        return np.nan if not a == 1.0 else math.copysign(np.inf, xd)
    if a < 1e-300:
        return xd * _SQRTPI_2_D
    g = -math.log((1.0 - a) * (1.0 + a))
    cs = ERFINV_FAR if g >= 16.0 else (ERFINV_TAIL if g >= 5.0 else ERFINV_CENTRAL)
    v = math.sqrt(g) - (5.0 if g >= 16.0 else 3.0) if g >= 5.0 else g - 2.5
    p = 0.0
    for i in range(len(cs) - 1, -1, -1):
        p = p * v + cs[i]
    y = a * p
    for _ in range(2):
        f = (1.0 - a) - math.erfc(y) if a >= 0.5 else math.erf(y) - a
        u = f * _SQRTPI_2_D * math.exp(y * y)
        y = y - u / (1.0 + y * u)
    return math.copysign(y, xd)


__all__ = [name for name in dir() if name.startswith("tl_")]
