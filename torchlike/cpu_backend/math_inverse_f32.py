"""Float32-native inverse trigonometric and (inverse) hyperbolic helpers for the Numba kernels:
``tl_asin_f32``, ``tl_acos_f32``, ``tl_atan_f32``, ``tl_atan2_f32``, ``tl_sinh_f32``,
``tl_cosh_f32``, ``tl_asinh_f32``, ``tl_acosh_f32``, ``tl_atanh_f32``.

Same contract as ``math_f32`` (whose pieces they share): call-free and branch-free (selects), so
the kernel loop vectorizes at the full float32 width, float32 arithmetic with ``np.float32``
constants, within 2 ulp of the correctly rounded float32 result over the whole float32 range
(``python -m bench.accuracy`` measures them), special values as numpy/PyTorch give them.
``scalar_math`` re-exports every ``tl_*`` name here.

The polynomials are Cephes' single-precision ones (asinf, atanf, sinhf, asinhf, atanhf; acosh's
is refitted, see _ACOSH_P).  Cephes' own float formulas around them measured 3 ulp (atan), 2
(asin; sinh below 88.7, inf above) on bench/accuracy's inputs; what is added, and why:

* Results of the form ``K + t + t*p`` (a constant multiple of pi/4 plus a reduced argument and
  its polynomial correction: asin/acos near +-1, atan past tan(pi/8), atan2's quadrants) add
  ``K + t`` with Fast2Sum (``|K| >= |t|``) and fold its rounding error into the correction, with
  pi/4 split in two (``_PIO4_HI`` has two spare low bits, so ``n * _PIO4_HI`` is exact for
  ``n <= 4``): Cephes' ``K + (t + t*p)`` rounds twice.
* Reduced arguments carry their rounding error where the result amplifies it: atan's
  ``(q - 1) / (q + 1)`` (pi/4 + atan(t) cancels down to pi/8) and atan2's ``q = min / max``
  (atan(q) ~ q) with the residuals by FMA; asin/acos near +-1 use ``sqrt((1 - |x|) / 2)`` with
  the square root's rounding error recovered by FMA, since the result is ``pi/2 - 2 sqrt(...)``
  with cancellation at 0.5.
* sinh/cosh split ``exp(|x|) = 2**n (p_hi + p_lo)`` (one reduction, ``p_lo`` the rounding error
  of ``1 + expm1(r)``) for ``(e -+ 1/e) / 2``; large |x| scale by ``2**(n - 1)`` in two steps,
  so sinh/cosh of 88.8 .. 89.4 are finite although exp overflows there.
* asinh/acosh/atanh take one logarithm of ``1 + w`` with log1p's correction
  ``(w - (u - 1) + w_lo) / u`` (w + w_lo the argument minus one, kept as two floats), or, past
  2**12 (where the ``1 / (4x^2)`` term is below half an ulp), ``log(x) + ln2`` as one logarithm
  with the exponent raised by one, which cannot overflow where ``2x`` would.
* Small arguments skip the polynomial's ``x * x`` below 2**-12 (the correction is below an ulp
  there): x86 takes a microcode assist for every subnormal product.
* asin, atan, sinh, asinh, atanh compute on |x| and copy x's sign last (``llvm.copysign``), so
  -0.0 stays -0.0; atan2 takes the sign of y and the quadrant from x's sign bit, so the four
  signed-zero pairs and the infinities come out as C99 (and numpy, PyTorch) define them.
"""
from __future__ import annotations

from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

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
    _log_reduce,
    _njit,
    _pow2i,
    _scale_parts,
)

_F32 = llvm_ir.FloatType()


@intrinsic
def _sqrt(typingctx, x):
    """IEEE float32 square root (NaN below 0): ``llvm.sqrt``, one instruction.  Numba's np.sqrt
    leaves a libm ``sqrtf`` call in the loop's scalar remainder."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.sqrt", [_F32],
                                              llvm_ir.FunctionType(_F32, [_F32]))
        return builder.call(fn, args)
    return types.float32(types.float32), codegen


@intrinsic
def _copysign(typingctx, mag, sgn):
    """|mag| with the sign bit of sgn (also for zeros and NaN)."""
    if not (mag == sgn == types.float32):
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.copysign", [_F32],
                                              llvm_ir.FunctionType(_F32, [_F32, _F32]))
        return builder.call(fn, args)
    return types.float32(types.float32, types.float32), codegen


_SMALL = F(2.0 ** -12)  # below it x + x^3 c rounds to x: the polynomial's x * x is skipped
_PIO4_HI = F(0.785398006439208984375)  # 0x3F490FD8: 2 spare low bits, n * _PIO4_HI exact
_PIO4_LO = F(0.785398163397448309616 - 0.785398006439208984375)
_FOUR = F(4.0)


@_njit
def _add_multiple_of_pio4(n, t, c):
    """n pi/4 + t + c for an integral n in [0, 4], |t| <= pi/4 where n > 0, a small c: Fast2Sum
    of ``n _PIO4_HI + t`` (exact), its error and pi/4's low part folded into c."""
    k = n * _PIO4_HI
    d = k + t
    e = (k - d) + t
    return d + (e + (c + n * _PIO4_LO))


@_njit
def _masked_square(a):
    """a * a, or 0 below 2**-12 (where the caller's correction term x * x * p would be below an
    ulp of x): no subnormal products."""
    b = a if a >= _SMALL else _ZERO
    return b * b


# ----- asin, acos -----

_ASIN_P = (F(4.2163199048e-2), F(2.4181311049e-2), F(4.5470025998e-2), F(7.4953002686e-2),
           F(1.6666752422e-1))


@_njit
def _asin_poly(z):
    """(asin(s) - s) / (s z) for z = s^2 in [0, 1/4]."""
    p0, p1, p2, p3, p4 = _ASIN_P
    return _fma(_fma(_fma(_fma(p0, z, p1), z, p2), z, p3), z, p4)


@_njit
def _asin_parts(x):
    """For a = |x|: (t, c, big) with asin(a) = t + c for a <= 1/2 (t = a) and
    asin(a) = pi/2 - (t + c) for a > 1/2 (t = 2 s, s = sqrt((1 - a) / 2) rounded, c holding the
    square root's rounding error and the polynomial).  NaN for |x| > 1 (sqrt of a negative)."""
    a = abs(x)
    big = a > _HALF
    zs = _masked_square(a)
    zb = _HALF * (_ONE - a)  # exact: 1 - a by Sterbenz
    s = _sqrt(zb)
    ds = s + s
    s_lo = _fma(-s, s, zb) / (ds if s > _ZERO else _ONE)  # zb - s^2 exactly, over 2s
    z = zb if big else zs
    t = ds if big else a
    c = _fma(t * z, _asin_poly(z), (s_lo + s_lo) if big else _ZERO)
    return t, c, big


@_njit
def tl_asin_f32(x):
    t, c, big = _asin_parts(x)
    r = _add_multiple_of_pio4(_TWO if big else _ZERO, -t if big else t, -c if big else c)
    return _copysign(r, x)


@_njit
def tl_acos_f32(x):
    # |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s) = t + c; x < -1/2: pi - (t + c)
    t, c, big = _asin_parts(x)
    neg = x < _ZERO
    n = _ZERO if big else _TWO
    n = _FOUR if big & neg else n
    flip = (big & neg) | ((x > _ZERO) & (x <= _HALF))  # t and c enter with a minus sign
    t = -t if flip else t
    c = -c if flip else c
    return _add_multiple_of_pio4(n, t, c)


# ----- atan, atan2 -----

_ATAN_P = (F(8.05374449538e-2), F(-1.38776856032e-1), F(1.99777106478e-1),
           F(-3.33329491539e-1))
_TAN_PIO8 = F(0.4142135623730950)
_TWO_64, _TWO_M64 = F(2.0 ** 64), F(2.0 ** -64)


@_njit
def _atan2_core(y, x, comp):
    """atan2(y, x), the sign of y not yet applied (the result for |y|).  With q = min / max of
    |x|, |y| in [0, 1] (q = 1 for two infinities), atan(q) = n0 pi/4 + atan(t) with t = q or
    (q - 1) / (q + 1); the quadrant adds pi/2 - or pi - (x's sign bit, so x = -0.0 counts as
    negative) and the total is n pi/4 + sigma * atan(t), n in 0..4."""
    ax, ay = abs(x), abs(y)
    swap = ay > ax
    mx = ay if swap else ax
    mn = ax if swap else ay
    inf2 = (ax == _INF) & (ay == _INF)
    mn = _ONE if inf2 else mn
    mx = _ONE if inf2 else mx
    mx = _ONE if mx == _ZERO else mx  # 0 / 0: q = 0
    up = mx < _TWO_M64  # both scaled up exactly: the residual below is exact for normal floats
    mx = mx * _TWO_64 if up else mx
    mn = mn * _TWO_64 if up else mn
    q = mn / mx
    # q + q_lo: the quotient's rounding error (its residual by FMA) is up to half an ulp of
    # the result where atan(q) ~ q.  atan (comp False, folded away after inlining) does
    # without: its q is |x| / 1, exact, or 1 / |x| under pi/2 - atan(q) >= pi/4
    q_lo = _fma(-q, mx, mn) / mx if comp & (mx < _INF) else _ZERO
    red = q > _TAN_PIO8
    # t = (q - 1) / (q + 1) + t_lo: numerator and denominator with their rounding errors
    # (Fast2Sum), the quotient's residual by FMA; the result is pi/4 + atan(t) >= pi/8, so an
    # error of |t| 2**-24 would be up to 1 ulp
    num = q - _ONE
    num_lo = (q - (num + _ONE)) + q_lo
    den = q + _ONE
    den_lo = (q - (den - _ONE)) + q_lo
    inv = _ONE / den
    tr = num * inv
    tr_lo = (_fma(-tr, den, num) + (num_lo - tr * den_lo)) * inv
    t = tr if red else q
    z = _masked_square(abs(t))
    p0, p1, p2, p3 = _ATAN_P
    c = _fma(t * z, _fma(_fma(_fma(p0, z, p1), z, p2), z, p3), tr_lo if red else q_lo)
    xneg = _copysign(_ONE, x) < _ZERO
    minus = swap != xneg
    n = _TWO if swap else (_FOUR if xneg else _ZERO)
    n0 = _ONE if red else _ZERO
    n = n - n0 if minus else n + n0
    r = _add_multiple_of_pio4(n, -t if minus else t, -c if minus else c)
    return r if q == q else q + y  # NaN in, NaN out (the selects above may drop it)


@_njit
def tl_atan2_f32(y, x):
    return _copysign(_atan2_core(y, x, True), y)


@_njit
def tl_atan_f32(x):
    return _copysign(_atan2_core(x, _ONE, False), x)


# ----- sinh, cosh -----

_SINH_P = (F(2.03721912945e-4), F(8.33028376239e-3), F(1.66667160211e-1))
_EXPH_HI = F(90.0)  # sinh, cosh overflow past 89.4159
_BIG = F(12.0)  # past it exp(-x) is below 2**-34 of exp(x): sinh = cosh = exp(x) / 2


@_njit
def _exp_half_parts(a):
    """For 0 <= a <= 90 (2**-12 <= a, or a = 0): (h, c, lo, big) with exp(a) / 2 = h + lo
    (h = 2**(n-1) p_hi exact, lo its low part) and exp(-a) / 2 ~ c for a < 12; for a >= 12
    (big) h = exp(a) / 2 rounded once (inf past 89.4159), c = lo = 0."""
    n = (a * _LOG2E + _MAGIC) - _MAGIC
    r = (a - n * _C1) - n * _C2
    q = _fma(_exp_poly(r), r * r, r)  # expm1(r), |r| <= ln2 / 2
    p_hi = _ONE + q
    p_lo = (_ONE - p_hi) + q  # Fast2Sum: 1 >= |q|
    big = a >= _BIG
    nm = _ZERO if big else n  # keeps the unused lanes' powers of two in range
    s = _pow2i(nm - _ONE)
    c = _pow2i(-nm - _ONE) / p_hi  # its p_lo term is below 2**-24 of a c <= h / 7
    u, v = _scale_parts(p_hi + p_lo, n - _ONE)
    h = u * v if big else p_hi * s
    return h, _ZERO if big else c, _ZERO if big else p_lo * s, big


@_njit
def _exph_arg(x):
    """|x| clamped to 90, 0 below 2**-12 (where cosh rounds to 1) and for NaN."""
    a = abs(x)
    a = _EXPH_HI if a > _EXPH_HI else a
    return a if a >= _SMALL else _ZERO  # NaN: 0 (the callers return x)


@_njit
def tl_sinh_f32(x):
    a = abs(x)
    h, c, lo, big = _exp_half_parts(_exph_arg(x))
    d = h - c  # Fast2Sum (h > c): one rounding in all, not one here and one adding lo
    r = h if big else d + (((h - d) - c) + lo)  # h may be inf
    z = _masked_square(a)
    p0, p1, p2 = _SINH_P
    small = _fma(a * z, _fma(_fma(p0, z, p1), z, p2), a)
    r = small if a < _ONE else r
    return x if x != x else _copysign(r, x)


@_njit
def tl_cosh_f32(x):
    h, c, lo, big = _exp_half_parts(_exph_arg(x))
    d = h + c  # Fast2Sum (h >= c)
    r = h if big else d + (((h - d) + c) + lo)
    return x if x != x else r


# ----- asinh, acosh, atanh -----

_ASINH_P = (F(2.0122003309e-2), F(-4.2699340972e-2), F(7.4847586088e-2), F(-1.6666288134e-1))
# acosh(1 + t) = sqrt(t) (sqrt(2) + t P(t)) on [0, 1/2]: P fitted here (relative least squares
# on Chebyshev nodes against mpmath, coefficients rounded to float32: 0.03 ulp), one degree more
# than Cephes' acoshf, whose fit is off by up to 0.8 ulp near t = 1/2
_ACOSH_P = (F(-5.832483e-04), F(2.4876033e-03), F(-7.845181e-03), F(2.651157e-02),
            F(-1.1785096e-01))
_SQRT2_HI = F(1.41421356237309504880)
_SQRT2_LO = F(1.41421356237309504880 - float(_SQRT2_HI))
_ATANH_P = (F(1.81740078349e-1), F(8.24370301058e-2), F(1.46691431730e-1), F(1.99782164500e-1),
            F(3.33337300303e-1))
_HUGE = F(4096.0)  # log(x + sqrt(x^2 +- 1)) = log(2x) to below half an ulp from here on


@_njit
def _log1p_or_log2x(w, w_lo, x, huge):
    """log(1 + w + w_lo) for a finite w >= 0 and its low part w_lo, or log(2x) for a finite
    x >= 1 when huge: one logarithm, with log1p's correction (w - (u - 1) + w_lo) / u for the
    rounding of u = 1 + w, and the 2 of log(2x) as one more in the exponent (2x may overflow)."""
    u = _ONE + w
    c = ((w - (u - _ONE)) + w_lo) / u
    u = x if huge else u
    e, f, y = _log_reduce(u)
    e = e + _ONE if huge else e
    c = _ZERO if huge else c
    return (f + ((y + c) + e * _C2)) + e * _C1


@_njit
def tl_asinh_f32(x):
    # a < 1/2: Cephes' polynomial; else log1p(a + a^2 / (1 + sqrt(1 + a^2))) = log(a +
    # sqrt(a^2 + 1)) without the rounding of the sum at 1 + ..., the sum a + v kept as two
    # floats (Fast2Sum, a >= v); past 2**12 log(2a)
    a = abs(x)
    fin = a < _INF
    huge = a >= _HUGE
    am = a if a < _HUGE else _ONE
    a2 = am * am
    v = a2 / (_ONE + _sqrt(_ONE + a2))
    w = am + v
    big = _log1p_or_log2x(w, v - (w - am), a if fin else _ONE, huge)
    z = _masked_square(a)
    p0, p1, p2, p3 = _ASINH_P
    small = _fma(a * z, _fma(_fma(_fma(p0, z, p1), z, p2), z, p3), a)
    r = small if a < _HALF else big
    r = a if a == _INF else r
    return x if x != x else _copysign(r, x)


@_njit
def tl_acosh_f32(x):
    # t = x - 1 is exact for every x >= 1.  t < 1/2: sqrt(t) (sqrt(2) + t P(t)), with the square
    # root's rounding error recovered by FMA and sqrt(2) (in two parts) multiplied in by FMA;
    # else log1p(t + sqrt(t (t + 2))), the sum kept as two floats; past 2**12 log(2x)
    t = x - _ONE
    fin = (t >= _ZERO) & (x < _INF)
    huge = x >= _HUGE
    tm = t if fin & (x < _HUGE) else _ONE
    sq = _sqrt(tm * (tm + _TWO))
    w = sq + tm
    big = _log1p_or_log2x(w, tm - (w - sq), x if fin else _ONE, huge)
    small_t = (t >= _ZERO) & (t < _HALF)
    ts = t if small_t else _ZERO
    s = _sqrt(ts)
    s_lo = _fma(-s, s, ts) / (s + s if s > _ZERO else _ONE)  # ts - s^2 exactly, over 2s
    p0, p1, p2, p3, p4 = _ACOSH_P
    q = _fma(_fma(_fma(_fma(_fma(p0, ts, p1), ts, p2), ts, p3), ts, p4), ts, _SQRT2_LO)
    small = _fma(s, _SQRT2_HI, _fma(s, q, s_lo * _SQRT2_HI))
    r = small if t < _HALF else big
    r = _INF if x == _INF else r
    return r if t >= _ZERO else _NAN  # below 1 and NaN


@_njit
def tl_atanh_f32(x):
    # a < 1/2: Cephes' polynomial; else log1p(2a / (1 - a)) / 2 (1 - a exact, the quotient as
    # two floats: 1 / (1 - a) rounded, the product's residual by FMA): inf at 1, the log of a
    # negative number (NaN) past it
    a = abs(x)
    d = _ONE - a
    inv = _ONE / d
    w = (a + a) * inv
    w_lo = _fma(-w, d, a + a) * inv
    ok = (d > _ZERO) & (a >= _HALF)
    big = _HALF * _log1p_or_log2x(w if ok else _ONE, w_lo if ok else _ZERO, _ONE, False)
    big = _INF if d == _ZERO else big
    big = big if ok | (d == _ZERO) else _NAN
    z = _masked_square(a)
    p0, p1, p2, p3, p4 = _ATANH_P
    small = _fma(a * z, _fma(_fma(_fma(_fma(p0, z, p1), z, p2), z, p3), z, p4), a)
    r = small if a < _HALF else big
    return x if x != x else _copysign(r, x)


__all__ = [name for name in dir() if name.startswith("tl_")]
