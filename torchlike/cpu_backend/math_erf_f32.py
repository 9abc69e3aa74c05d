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
_PG0, _PG0LO = F(0.5231633186340332), F(2.779210461767434e-08)  # Phi(-y), y in [0.66, 14.37]
_PS = (F(0.6866357922554016), F(-0.11520960181951523), F(-1.3031742572784424),
       F(0.8171164989471436), F(3.567066192626953), F(-7.0787811279296875),
       F(-4.916271209716797), F(38.62049102783203), F(-49.77815628051758),
       F(-19.53486442565918), F(71.22142791748047))
_TAIL_LO, _TAIL_HI = F(0.47), F(10.06)  # erfc(10.06) < 2**-150 rounds to 0
_MTWO_OVER_SQRTPI = F(-1.12837917)
_MINV_SQRT2PI = F(-0.398942280)
_TWO_M64, _SIXTYFOUR = F(2.0 ** -64), F(64.0)
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
    # times 2**n, n in [-146, 0]: 2**(n + 64) (exact) then 2**-64 (rounds into the subnormals)
    return w * _pow2i(n + _SIXTYFOUR) * _TWO_M64


@_njit
def tl_erfc_f32(x):
    a = abs(x)
    e = _erfc_tail(_pick(a < _TAIL_HI, a, _TAIL_HI))  # NaN -> 10.06
    e = _pick(x < _ZERO, _TWO - e, e)
    # |x| < 0.47: 1 - erf(x), erf(x) < 0.5 rounded once
    z = x * x
    p0, p1, p2, p3, p4 = _ERF_P4
    m = _fma(x, _fma(_fma(_fma(_fma(p4, z, p3), z, p2), z, p1), z, p0), x)
    res = _pick(a < _TAIL_LO, _ONE - m, e)
    return x if x != x else res


_GELU_ZERO = F(-14.36)  # x Phi(x) rounds to -0.0 below -14.356
_GELU_ONE = F(5.5)  # Phi(x) rounds to 1 above 5.42: gelu(x) = x
_GELU_NEG, _GELU_POS = F(-0.665), F(1.25)  # the small range; the tail from |x| >= 0.665
_GELU_TINY = F(2.0 ** -125)  # below, x / 2 may round
# Phi(x) = 1/2 + x (p0 + p0_lo + z P(z)), z = x^2, for |x| < 1.25 (0.004 ulp of gelu for
# -0.665 < x < 1.25), p0 + p0_lo = 1/sqrt(2 pi)
_GELU_P0, _GELU_P0LO = F(0.3989422917366028), F(-1.1335170135851058e-08)
_GELU_P = (F(-0.06649037450551987), F(0.009973499923944473), F(-0.0011871113674715161),
           F(0.00011503657151479274), F(-9.062085155164823e-06), F(4.770682267007942e-07))


@_njit
def tl_gelu_f32(x):
    # |x| >= 0.665: Phi(-y) = R(y) exp(-y^2 / 2) 2**n, y = |x| (clamped to [0, 14.37]);
    # x Phi(-y) = Y 2**n with Y = x (r_hi + r_lo) (x_hi + x_lo) rounded once (x r_hi split)
    xc = _pick((x > _GELU_ZERO) & (x < _GELU_ONE), x, _ZERO)
    y = abs(xc)
    t, da, v = _recip_parts(y)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = _PS
    q = _fma(_fma(_fma(_fma(_fma(s10, v, s9), v, s8), v, s7), v, s6), v, s5)
    q = _fma(_fma(_fma(_fma(_fma(q, v, s4), v, s3), v, s2), v, s1), v, s0)
    h = y * y
    r_hi, r_lo = _r_parts(t, da, v, q, _PG0, _PG0LO, y, _MINV_SQRT2PI,
                          _fma(y, y, -h) * _HALF)
    x_hi, x_lo, n = _exp_neg(h * _HALF)
    xr = xc * r_hi
    inner = xc * _fma(r_hi, x_lo, r_lo * (x_hi + x_lo))
    yn = _fma(xr, x_hi, _fma(_fma(xc, r_hi, -xr), x_hi, inner))
    neg = xc < _ZERO
    pw = _pow2i(_pick(neg, n + _SIXTYFOUR, n))
    # x < 0: x Phi(x) = Y 2**n (in two steps, one rounding into the subnormals);
    # x > 0: x Phi(x) = x - x Phi(-x) = x - Y 2**n, one rounding
    tail = _pick(neg, yn * pw * _TWO_M64, _fma(-yn, pw, xc))
    # -0.665 < x < 1.25: Phi(x) = 1/2 + x p0 + x (p0_lo + z P(z)) as f_hi + f_lo (1/2 + x p0
    # split exactly), then x f_hi + x f_lo rounded once: Phi - 1/2 nearly cancels 1/2 at
    # x = -0.665; up to 1.25, where x Phi(-x) is within 0.12 x, the tail's error shrinks
    z = xc * xc
    p1, p2, p3, p4, p5, p6 = _GELU_P
    q_hi = xc * _GELU_P0
    q = _fma(_fma(_fma(_fma(_fma(p6, z, p5), z, p4), z, p3), z, p2), z, p1)
    q_lo = _fma(xc * z, q, _fma(xc, _GELU_P0LO, _fma(xc, _GELU_P0, -q_hi)))
    f_hi = _HALF + q_hi
    small = _fma(xc, f_hi, xc * (((_HALF - f_hi) + q_hi) + q_lo))
    res = _pick((xc > _GELU_NEG) & (xc < _GELU_POS), small, tail)
    # |x| < 2**-125: x Phi(x) = x/2 + (a positive below 2**-200), x/2 rounded but its ties
    # upwards: x/2 = m + d/2 with d = x - 2 m in {0, +-2**-149} exactly
    m = x * _HALF
    d = _fma(m, -_TWO, x)
    res = _pick(abs(x) < _GELU_TINY, _pick(d > _ZERO, m + d, m), res)  # m: keeps -0.0
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
