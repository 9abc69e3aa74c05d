"""Float32-native erf, erfc, erfinv and gelu (erf form) for the generated Numba kernels, with the
conventions of ``math_f32.py`` (call-free, branch-free float32 arithmetic, ``np.float32``
constants, within 2 ulp of the correctly rounded float32 result over the whole range; gelu
within 4, where PyTorch's own float32 gelu is off by up to 8.7e8 ulp).

Every lane computes every path (the selects are branch-free), so each function is built to
evaluate few and short polynomials, at most one division and one exp, and no TwoSum.  Errors
below are the largest over all 2^32 inputs against libm's float64 erf/erfc (fractions of an
ulp of the correctly rounded result); times are ns per element compute-bound (one thread,
512-bit vectors, 2^13 floats in cache), previous version of this module in parentheses.

erf (0.99 ulp; 0.52 ns (1.75)): x + x P(x^2) for |x| < 1 (P of degree 6); for 1 <= |x| < 3.85
K + v S(v) with v = |x| - c exact, degree 10, on [1, 2.25) (c = 1.65625) and [2.25, 3.85)
(c = 3.0625), c such that erf(c) is within 0.005 ulp of the float32 K, the coefficients picked
by selects; +-1 above.  erf > 0.84 there only needs 2**-25 absolute accuracy: no exp.

erfc (0.84 ulp; 1.2 ns (1.9)): erfc(a) = exp(-a^2) R(a), R = erfcx, for a in [0.47, 10.06]
(erfc rounds to 0 above):

* R = t G(t) with t = 1/(a + 1.5) (the one division) and G = (a + 1.5) R one polynomial over
  the whole tail (degree 10), g0 + (g0_lo + v S(v)) in v = t - 3/16, which
  is exact for t in [1/16, 1/2].  The roundings of a + 1.5 and of the quotient are corrected to
  first order with R' (erfcx' = 2 a erfcx - 2/sqrt(pi)); g0 + v S and t G are split exactly:
  R = r_hi + r_lo.  (A polynomial in a alone needs degree 24 over the range; in 1/a two pieces.)
* exp(-h - l), a^2 = h + l exactly: 2**n exp(r + r_lo), n ln2 = n C1 (exact) + n C2, r_lo =
  fma(-n, C2, u - r) the reduction's rounding (to 2**-30); exp(-l) = 1 - l joins R as -R l;
  exp(r + r_lo) = (1 + r) + (r^2 P(r) + r_lo e^r), 1 + r split exactly (P of degree 5).
  Rounding a^2 to float32 instead costs up to a^2 2**-24 relative (100 ulp at a = 10).
* (r_hi + r_lo)(x_hi + x_lo) is rounded once, then scaled by 2**n with integer work on the bits
  (``_scale2n``): no floating-point operation has a subnormal result.  On x86 each one that
  does costs a ~100-cycle microcode assist: erfc over [-10, 10] (2^22 floats, 2 threads) took
  18 ms with a two-step float scaling, 5.3 ms now.

erfc is 1 - erf(x) for |x| < 0.47 (erf < 0.5 rounded once, P of degree 4), the tail above and
2 - tail below -0.47.

gelu(x) = x Phi(x) (4 ulp; 0.74 ns (0.94)): one formula over the whole range, Y = y Phi(-y) =
y R(y) exp(-y^2 / 2) with y = |x| and R(y) = erfcx(y / sqrt 2) / 2, -Y for x < 0, x - Y for
x > 0 (Y <= x/2: no cancellation anywhere; 0.5 x (1 + erf) loses the negative tail: PyTorch's
float32 gelu(-6) is -0.0, not -5.9e-9).  R = t G(t), t = 1/(y + 3), G of degree 10 in
t - 0.195 on [0, 14.4], corrected for the roundings of y + 3 and t as erfc's; y^2 / 2 = h + l
exactly.  The previous version (0.84 ulp) added a polynomial for -0.665 < x < 1.25 and carried
R and exp as double floats; every lane computed both: 59 vector multiplies and fmas against 35:
the loop is FMA-bound, so those count.  Clamping |x| at 14.5 (x - Y is x above 5.42, -Y is
-0.0 below -14.36) replaced selecting those ranges and a path for |x| < 2**-100 (0.94 ns).
gelu's derivative (``tl_gelu_backward_f32``, PyTorch's ``gelu_backward``) shares R and the
exp: Phi(-y) - y phi(y) = exp(-y^2 / 2) (R(y) - y / sqrt(2 pi)), 1.2e-7 absolute.

erfinv (0.76 ulp; 1.5 ns (6.7)): Giles' variable ("Approximating the erfinv function", 2010)
w = -log(1 - x^2), erfinv(x) / x = p(w) as c0 + c0_lo + v S(v), v = w - c, degree 10 on
[0, 5.21] (c = 3.5 C1) and [5.19, 16] (c = 15.5 C1; w <= 15.95 for |x| <= 1 - 2**-24), no
Newton step.  p's slope amplifies w's absolute error, which float32 rounding alone makes
2**-22 at w = 4.5 (0.6 ulp of the result), so w is carried as hi + lo: 1 - x^2 = u + u_lo exactly
for |x| >= 1/2 (1 - x is exact), u = 2**-k (1 + f) with u_lo 2**k folded into f, log(1 + f) =
f - f^2/2 + f^3 L(f) (L of degree 7, 2**-28 absolute), w = k C1 + (k C2 - log(1 + f)) and
v = (k - j - 1/2) C1 + (...) split by Fast2Sum (|(k - j - 1/2) C1| >= C1/2 > |k C2 - log|);
c0 + s0 v is split exactly, p'(v) v_lo added, and x (p_hi + p_lo) rounded once.

The fits are near-minimax for the error in ulps of the result (Lawson-weighted least squares
against float64 scipy/mpmath values), coefficients rounded to float32 one at a time and the
rest refitted.

gelu_tanh (math_f32.py) forms 2u in float64 and runs the float32 sigmoid on it as hi + lo; an all-float32 form within 1 ulp (2u as hi + lo,
x / (1 + e^-2u) with the denominator in two floats and one quotient correction) ran at
29-42 ms against 24 ms for the then float64 helper (2^22 floats, 2 threads, prange loop).

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
    _SQRTHF,
    _TWO,
    _ZERO,
    F,
    _add_exponent,
    _bits_sub,
    _exp_poly,
    _exp_reduce,
    _exponent_field,
    _fma,
    _mantissa_half,
    _njit,
    _pow2i,
    _split_scale,
)

# erf(x) / x - 1 as a polynomial in x^2 on [0, 1): relative error of erf 0.05 ulp
_ERF_P = (F(0.12837917), F(-0.37612626), F(0.11283599), F(-0.026854938), F(0.0051913788),
          F(-0.0008043746), F(7.983437e-05))


@_njit
def _pick(b, x, y):
    return x if b else y


@_njit
def _erf_small(x):
    """erf(x) for |x| < 1: x + x P(x^2), one rounding after the exact x."""
    s = x * x
    p0, p1, p2, p3, p4, p5, p6 = _ERF_P
    p = _fma(_fma(_fma(_fma(_fma(_fma(p6, s, p5), s, p4), s, p3), s, p2), s, p1), s, p0)
    return _fma(x, p, x)


# erf(a) = K + v S(v), v = a - c exact, on [1, 2.25) (A) and [2.25, 3.85) (B); c chosen so that
# erf(c) is within 0.005 ulp of the float32 K
_EA_C, _EA_K = F(1.65625), F(0.9808342456817627)
_EA_S = (F(0.0726296603679657), F(-0.12029282003641129), F(0.10861383378505707),
         F(-0.04984971508383751), F(0.00043485977221280336), F(0.013067089021205902),
         F(-0.006245795637369156), F(-0.000268545321887359), F(0.0011979574337601662),
         F(-0.0002614868280943483))
_EB_C, _EB_K = F(3.0625), F(0.9999851584434509)
_EB_S = (F(9.53260314418003e-05), F(-0.00029194256057962775), F(0.0005645708879455924),
         F(-0.0007670822087675333), F(0.0007675936794839799), F(-0.0005797160556539893),
         F(0.00033454500953666866), F(-0.0001296259870287031), F(6.902341283421265e-06),
         F(1.5119535419216845e-05))
_ERF_SPLIT = F(2.25)
_ERF_ONE = F(3.85)  # erf rounds to 1 above 3.8325


@_njit
def _erf_big(a):
    """erf(a) for 1 <= a < 3.85 (finite garbage elsewhere)."""
    b = a >= _ERF_SPLIT
    v = a - _pick(b, _EB_C, _EA_C)
    p0, p1, p2, p3, p4, p5, p6, p7, p8, p9 = _EA_S
    q0, q1, q2, q3, q4, q5, q6, q7, q8, q9 = _EB_S
    s = _fma(_pick(b, q9, p9), v, _pick(b, q8, p8))
    s = _fma(s, v, _pick(b, q7, p7))
    s = _fma(s, v, _pick(b, q6, p6))
    s = _fma(s, v, _pick(b, q5, p5))
    s = _fma(s, v, _pick(b, q4, p4))
    s = _fma(s, v, _pick(b, q3, p3))
    s = _fma(s, v, _pick(b, q2, p2))
    s = _fma(s, v, _pick(b, q1, p1))
    s = _fma(s, v, _pick(b, q0, p0))
    return _fma(s, v, _pick(b, _EB_K, _EA_K))


@_njit
def tl_erf_f32(x):
    a = abs(x)
    e = _pick(a < _ERF_ONE, _erf_big(a), _ONE)
    e = _pick(x < _ZERO, -e, e)
    res = _pick(a < _ONE, _erf_small(x), e)
    return x if x != x else res


# The tails of erfc and gelu: erfc(a) = exp(-a^2) R(a) with R = erfcx, and Phi(-y) =
# exp(-y^2 / 2) R(y) with R(y) = erfcx(y / sqrt 2) / 2.  R = t G(t), t = 1/(a + 1.5), G(t) =
# (a + 1.5) R(a) as g0 + (g0_lo + v S(v)), v = t - 3/16 (exact for t in [1/16, 1/2])
_TK, _TC = F(1.5), F(0.1875)
_EG0, _EG0LO = F(0.7605981826782227), F(1.1745333594603835e-08)  # erfc, a in [0.47, 10.06]
_ES = (F(1.256028175354004), F(1.0923320055007935), F(-0.4593315124511719),
       F(-1.965040683746338), F(0.45959383249282837), F(4.6892266273498535),
       F(-2.7036330699920654), F(-13.049104690551758), F(25.80661964416504),
       F(-15.566938400268555))
_TAIL_LO, _TAIL_HI = F(0.47), F(10.06)  # erfc(10.06) < 2**-150 rounds to 0
_MTWO_OVER_SQRTPI = F(-1.12837917)
_MINV_SQRT2PI = F(-0.398942280)
_TWO_M64, _TWO_P64 = F(2.0 ** -64), F(2.0 ** 64)
_HUNDRED, _TWO_M26 = F(100.0), F(2.0 ** -26)
# exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2 (0.003 ulp)
_EXPQ = (F(0.5), F(0.1666666567325592), F(0.04166647791862488), F(0.008333578705787659),
         F(0.0013933408772572875), F(0.00019729261111933738))
# erf(x) = x + x P(x^2) for |x| < 0.47 (0.02 ulp), erfc's middle
_ERF_P4 = (F(0.12837916612625122), F(-0.3761261999607086), F(0.11283129453659058),
           F(-0.026782162487506866), F(0.004779751878231764))


@_njit
def _exp_q(r):
    p0, p1, p2, p3, p4, p5 = _EXPQ
    return _fma(_fma(_fma(_fma(_fma(p5, r, p4), r, p3), r, p2), r, p1), r, p0)


@_njit
def _recip_parts(a):
    """(t, da, v): t = 1/(a + 1.5) rounded, and a - a_eff to first order, a_eff + 1.5 = 1/t
    exactly (a + 1.5 = s + ds; 1 - t s = e1 exactly: a - a_eff = ds - s e1); v = t - 3/16."""
    s = a + _TK
    ds = a - (s - _TK)
    t = _ONE / s
    da = _fma(-s, _fma(-t, s, _ONE), ds)
    return t, da, t - _TC


@_njit
def _r_parts(t, da, v, q, g0, g0_lo, a2, mc, l):
    """R(a) exp(-l) = r_hi + r_lo from G = g0 + g0_lo + v q (t G is R at a_eff): t G split
    exactly, plus R'(a) (a - a_eff), R' = a2 R + mc, and exp(-l) = 1 - l as -R l."""
    p = q * v
    g = g0 + p
    g_lo = ((g0 - g) + p) + (_fma(q, v, -p) + g0_lo)
    r_hi = t * g
    r_lo = _fma(t, g_lo, _fma(t, g, -r_hi))
    return r_hi, _fma(_fma(a2, r_hi, mc), da, _fma(-r_hi, l, r_lo))


@_njit
def _exp_neg(h):
    """exp(-h) = (x_hi + x_lo) 2**n for 0 <= h <= 104: n ln2 = n C1 (exact) + n C2, the
    rounding of the reduced argument r kept (|r| <= ln2/2), 1 + r split exactly."""
    n = _fma(h, -_LOG2E, _MAGIC) - _MAGIC
    u = _fma(n, -_C1, -h)
    r = _fma(n, -_C2, u)
    r_lo = _fma(n, -_C2, u - r)
    x_hi = _ONE + r
    return x_hi, ((_ONE - x_hi) + r) + _fma(r_lo, x_hi, r * r * _exp_q(r)), n


@_njit
def _scale2n(w, n):
    """w 2**n rounded once, for a positive w in [2**-10, 2) and an integral n in [-160, 0],
    without a floating-point operation with a subnormal result (on x86 each such instruction
    costs a ~100-cycle microcode assist: erfc on [-10, 10] ran 3.5x slower).  Normal results
    come from adding n to w's exponent; for subnormal ones, y = w 2**(n + 100) < 2**-26 is
    formed the same way (normal, exact) and rounded to a multiple of 2**-49 = 2**-149 / 2**-100
    by adding 2**-26: the bits of y + 2**-26 less those of 2**-26 are the subnormal's."""
    r = _add_exponent(w, n)
    y = _add_exponent(r, _HUNDRED)
    return _pick(y < _TWO_M26, _bits_sub(y + _TWO_M26, _TWO_M26), r)


@_njit
def _erfc_tail(a):
    """erfc(a) for 0.47 <= a <= 10.06, rounded once (twice into the subnormals); finite for
    any a in [0, 10.06]."""
    t, da, v = _recip_parts(a)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 = _ES
    q = _fma(_fma(_fma(_fma(s9, v, s8), v, s7), v, s6), v, s5)
    q = _fma(_fma(_fma(_fma(_fma(q, v, s4), v, s3), v, s2), v, s1), v, s0)
    h = a * a
    r_hi, r_lo = _r_parts(t, da, v, q, _EG0, _EG0LO, a + a, _MTWO_OVER_SQRTPI,
                          _fma(a, a, -h))
    x_hi, x_lo, n = _exp_neg(h)
    # (r_hi + r_lo) (x_hi + x_lo): r_lo is up to 2**-18 r_hi (the -R l term)
    w = _fma(r_hi, x_hi, _fma(r_hi, x_lo, r_lo * (x_hi + x_lo)))
    return _scale2n(w, n)  # n in [-146, 0]


@_njit
def tl_erfc_f32(x):
    a = abs(x)
    # above 10.06 (and NaN): 0 (or 2), from the tail at 1, not at 10.06: no subnormal results
    # (a microcode assist per instruction on x86)
    big = a < _TAIL_HI
    e = _pick(big, _erfc_tail(_pick(big, a, _ONE)), _ZERO)
    e = _pick(x < _ZERO, _TWO - e, e)
    # |x| < 0.47: 1 - erf(x), erf(x) < 0.5 rounded once
    z = x * x
    p0, p1, p2, p3, p4 = _ERF_P4
    m = _fma(x, _fma(_fma(_fma(_fma(p4, z, p3), z, p2), z, p1), z, p0), x)
    res = _pick(a < _TAIL_LO, _ONE - m, e)
    return x if x != x else res


_GELU_YMAX = F(14.5)  # y clamped: x Phi(x) rounds to -0.0 below -14.356, and x - Y to x above 5.42
# Phi(-y) = exp(-y^2 / 2) R(y), R(y) = erfcx(y / sqrt 2) / 2 = t G(t) for y in [0, 14.5], t =
# 1/(y + 3), G = (y + 3) R(y) a polynomial of degree 10 in v = t - _GV (|v| <= 0.14: Horner's
# rounding errors shrink; 0.26 ulp with these float32 coefficients)
_GK, _GV = F(3.0), F(0.1954023)
_GG = (F(0.8239691257476807), F(3.5557148456573486), F(9.081263542175293),
       F(8.231772422790527), F(-20.53606414794922), F(-41.58130645751953),
       F(94.28258514404297), F(164.5897979736328), F(-630.802734375), F(-376.5111083984375),
       F(3292.00634765625))
_NINF = F(-np.inf)
_GELU_DMAX = F(15.0)  # gelu' = Phi(x) + x phi(x) rounds to 0 below -14.3 (1 above 5.6)


@_njit
def _gelu_r(y):
    """(R at the y_eff = 1/t - 3 that the rounded t = 1/(y + 3) stands for, and y - y_eff =
    ds - s (1 - t s) to first order (s = y + 3 + ds exactly))."""
    s = y + _GK
    ds = y - (s - _GK)
    t = _ONE / s
    v = t - _GV
    g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10 = _GG
    g = _fma(_fma(_fma(_fma(_fma(g10, v, g9), v, g8), v, g7), v, g6), v, g5)
    g = _fma(_fma(_fma(_fma(_fma(g, v, g4), v, g3), v, g2), v, g1), v, g0)
    return t * g, _fma(-s, _fma(-t, s, _ONE), ds)


@_njit
def _gelu_exp(y):
    """(tt, r): exp(-y^2 / 2) = 2**n exp(r), tt = n + _MAGIC, with y^2 = 2 (h + l) exactly
    (rounding y^2 would cost up to 100 ulp at y = 14)."""
    hh = y * y
    tt, r = _exp_reduce(hh * -_HALF)
    return tt, _fma(_fma(y, y, -hh), -_HALF, r)


@_njit
def tl_gelu_f32(x):
    # One formula for every lane (a second, polynomial one near 0 would be computed by every
    # lane too): y = |x| (clamped), Y = y Phi(-y) = y R(y) exp(-y^2 / 2); gelu = -Y (x < 0),
    # x - Y (x >= 0, Y <= x/2: no cancellation; above 5.42 Y is below half an ulp of x, so a
    # large or infinite x comes back unchanged, and -Y is -0.0 for x <= -14.36).  R moved from
    # y_eff to y by R' = y R - 1/sqrt(2 pi).  w exp(r) = w + w (exp(r) - 1) rounded once;
    # 2**n from two normal factors, so only a subnormal result rounds a second time.
    ax = abs(x)
    y = _pick(ax < _GELU_YMAX, ax, _GELU_YMAX)  # NaN: any finite y (NaN is picked below)
    rr, da = _gelu_r(y)
    w = y * _fma(_fma(y, rr, _MINV_SQRT2PI), da, rr)
    tt, r = _gelu_exp(y)
    ea, eb = _split_scale(_fma(w, _fma(_exp_poly(r), r * r, r), w), tt)
    yn = ea * eb
    res = _pick(x < _ZERO, -yn, x - yn)
    return _pick(x > _NINF, res, _NAN)  # -inf (x Phi(x) = -inf * 0) and NaN: NaN


@_njit
def tl_gelu_backward_f32(g, x):
    """g gelu'(x), gelu'(x) = Phi(x) + x phi(x) (PyTorch's ``gelu_backward``, erf form) with one
    exp: for y = |x|, D = Phi(-y) - y phi(y) = exp(-y^2 / 2) (R(y) - y / sqrt(2 pi)); gelu' = D
    for x < 0, 1 - D for x >= 0.  NaN at +-inf, as PyTorch's cdf + x pdf (x * 0)."""
    ax = abs(x)
    y = _pick(ax < _GELU_DMAX, ax, _GELU_DMAX)
    rr, da = _gelu_r(y)
    w = _fma(y, _MINV_SQRT2PI, _fma(_fma(y, rr, _MINV_SQRT2PI), da, rr))
    tt, r = _gelu_exp(y)
    ea, eb = _split_scale(_fma(_exp_poly(r), r * r, r) + _ONE, tt)
    d = (w * ea) * eb  # w ea is normal (or 0): only a subnormal D rounds twice
    d = _pick(x < _ZERO, d + _ZERO, _ONE - d)  # an underflowed D: +0.0, as cdf + x pdf
    return g * _pick(ax < _INF, d, _NAN)


# erfinv(x) / x = p(w), w = -log(1 - x^2) (Giles), as c0 + c0_lo + v S(v), v = w - c, on
# [0, 5.21] (c = 3.5 C1) and [5.19, 16] (c = 15.5 C1; |x| <= 1 - 2**-24 gives w <= 15.95)
_IC0, _IC0LO = F(1.4833229780197144), F(-1.0700126118479147e-08)
_ICS = (F(0.24723169207572937), F(-0.003895020578056574), F(-0.0013169245794415474),
        F(0.00021979663870297372), F(-3.4048769066430395e-06),
        F(-3.6602243653760524e-06), F(4.54541776662154e-07), F(2.1838303609911236e-08),
        F(-9.090178387793912e-09), F(4.787412688500581e-10))
_IT0, _IT0LO = F(3.1123108863830566), F(7.653862610368378e-08)
_ITS = (F(0.15336641669273376), F(-0.0034498260356485844), F(0.00014815469330642372),
        F(-7.246669156302232e-06), F(3.0528488537129306e-07),
        F(-2.9680295998701922e-09), F(-1.3717257330014831e-09),
        F(2.528649789557136e-10), F(-3.3943511196232734e-11),
        F(2.1582863534569396e-12))
# log(1 + f) = f - f^2/2 + f^3 L(f) on [sqrt(1/2) - 1, sqrt(2) - 1], to 2**-28 absolute
_IL = (F(0.3333335518836975), F(-0.25000956654548645), F(0.19999922811985016),
       F(-0.166188046336174), F(0.1422330141067505), F(-0.13216838240623474),
       F(0.12647752463817596), F(-0.07364899665117264))
_ERFINV_SPLIT = F(7.5)  # k <= 7: w < 5.21
_ERFINV_TINY = F(2.0 ** -14)  # the x^2 term < 2**-30
_SQRTPI_2_DN, _SQRTPI_2_UP = F(0.8862269), F(3.2981443e-08)  # sqrt(pi)/2, the low part > 0 (-0.0)


@_njit
def tl_erfinv_f32(x):
    a = abs(x)
    ok = a < _ONE
    ac = _pick(ok, a, _ZERO)
    # 1 - a^2 = u + u_lo exactly-ish for a >= 1/2 (1 - a exact, 1 + a = op + op_lo)
    om = _ONE - ac
    op = _ONE + ac
    u = om * op
    u_lo = _fma(om, (_ONE - op) + ac, _fma(om, op, -u))
    # u = 2**-k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), f carrying u_lo; a < 1/2: k = 0, f = -a^2
    m = _mantissa_half(u)
    lowm = m < _SQRTHF
    k = F(126.0) - _exponent_field(u)
    k = _pick(lowm, k + _ONE, k)
    f = _fma(u_lo, _pow2i(k), _pick(lowm, m + m, m) - _ONE)
    small = ac < _HALF
    f = _pick(small, -(ac * ac), f)
    k = _pick(small, _ZERO, k)
    # w = k ln2 - log(1 + f) = k C1 + (k C2 - log(1 + f)); v = w - c = V1 + W2 split exactly
    z = f * f
    l0, l1, l2, l3, l4, l5, l6, l7 = _IL
    lp = _fma(_fma(_fma(_fma(_fma(_fma(_fma(l7, f, l6), f, l5), f, l4), f, l3), f, l2), f, l1),
              f, l0)
    w2 = _fma(k, _C2, -_fma(f * z, lp, _fma(-_HALF, z, f)))
    tl = k > _ERFINV_SPLIT
    v1 = (k - _pick(tl, F(15.5), F(3.5))) * _C1  # exact; |v1| >= C1/2 >= |w2|
    v = v1 + w2
    v_lo = (v1 - v) + w2
    # p = c0 + s0 v + v^2 S2(v) (+ c0_lo + p'(v) v_lo): c0 + s0 v split exactly
    a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 = _ICS
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9 = _ITS
    q = _fma(_pick(tl, b9, a9), v, _pick(tl, b8, a8))
    q = _fma(q, v, _pick(tl, b7, a7))
    q = _fma(q, v, _pick(tl, b6, a6))
    q = _fma(q, v, _pick(tl, b5, a5))
    q = _fma(q, v, _pick(tl, b4, a4))
    q = _fma(q, v, _pick(tl, b3, a3))
    q = _fma(q, v, _pick(tl, b2, a2))
    s1 = _pick(tl, b1, a1)
    q = _fma(q, v, s1)
    s0 = _pick(tl, b0, a0)
    c0 = _pick(tl, _IT0, _IC0)
    t1 = s0 * v
    p_hi = c0 + t1
    p_lo = _fma(_fma(s1 + s1, v, s0), v_lo, _fma(s0, v, -t1) + _pick(tl, _IT0LO, _IC0LO))
    p_lo = ((c0 - p_hi) + t1) + _fma(v * v, q, p_lo)
    y = _fma(x, p_hi, x * p_lo)  # keeps the sign and -0.0
    # tiny x: x p_lo underflows; erfinv(x) = sqrt(pi)/2 x (1 + pi x^2 / 12 + ...), sqrt(pi)/2
    # as hi + lo, x scaled by 2**64 (exact) so that x lo is a normal float
    x64 = x * _TWO_P64
    y = _pick(a < _ERFINV_TINY, _fma(x64, _SQRTPI_2_DN, x64 * _SQRTPI_2_UP) * _TWO_M64, y)
    y = _pick(ok, y, _pick(a == _ONE, x * _INF, _NAN))
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
