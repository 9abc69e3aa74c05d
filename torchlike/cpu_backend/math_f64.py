"""Float64-native transcendental helpers (``tl_<name>_f64``) for the generated Numba kernels.

Why: pip's llvmlite has no SVML, so ``np.exp`` on a double in a kernel loop is a libm call and
LLVM leaves the loop scalar.  These helpers are call-free and branch-free -- every case is
computed and the answer picked with ``a if c else b`` selects, which LLVM if-converts -- so the
loop vectorizes at the machine's full double width (8 lanes with AVX-512, 4 with AVX2).  Integer
work on the IEEE bits (exponent extraction, building ``2**n``) is int64 arithmetic, which
vectorizes too; ``round(t)`` and the exponent as a double come from the 1.5 * 2**52 trick, with
no float <-> int conversion.

Algorithms (measured errors: ``python -m bench.accuracy --f64`` against mpmath, the table in
bench/results/accuracy/report_f64.md; tests/test_math_f64.py asserts <= 1 ulp):

* exp: Cody-Waite reduction x = n ln2 + r with FDLIBM's 2-part ln2 (``_LN2HI`` has 21 trailing
  zero bits, so ``n * _LN2HI`` is exact), |r| <= ln2/2, r's rounding error rlo kept;
  exp(r + rlo) = 1 + r + c with c from the Taylor polynomial to r**13 (truncation < 1e-19
  relative), 1 + r summed exactly (Fast2Sum) so only the last addition rounds; ``2**n`` built
  from the bits and applied in two steps (``y * 2**n1 * 2**n2``, both factors normal), so
  results in the subnormals round once more (<= 1 ulp there) and overflow gives inf.
  exp2: n = round(x), d = x - n exact, d ln2 as a double-double, then the same.
* expm1: FDLIBM's (rational approximation with the reduction's correction term and its cases
  by n), all cases computed and selected.
* log, log1p: FDLIBM's (x = 2**k (1 + f), s = f / (2 + f), a degree-14 polynomial in s, the
  ``hfsq`` compensated form; log1p adds FDLIBM's correction for the rounding of 1 + x).
  log2 and log10: FreeBSD's (the same kernel, the result split into hi + lo parts multiplied by
  2-part constants).
The activations (and tanh) are in ``math_act_f64.py``, built on this module's pieces:

* sigmoid, silu, tanh (|x| >= 0.55), gelu(approximate='tanh'): 1 / (1 + exp(-t)) as
  2**-n / (2**-n + 1 + r + c) with exp(-t) = 2**n (1 + r + c): the denominator as a
  double-double (exact sums of the powers of two and r, then c), the quotient refined by one
  Newton step with FMA, the power of two applied last (two steps: results in the subnormals,
  x exp(x) for x < -709, round once).  gelu's argument t = 2 sqrt(2/pi) (x + 0.044715 x**3)
  is a double-double (an error of one ulp in t is |t| ulps in the result in the negative
  tail).  tanh below 0.55: x + x**3 P(x**2), P a degree-10 Chebyshev fit (error < 1e-17).
* sinh, cosh: (E +- 1/E) / 2 with E = exp(|x|) and 1/E as double-doubles, summed exactly but
  for the last rounding, 2**(n-1) applied last (cosh and sinh overflow after exp does); sinh
  below 1: x + x**3 P(x**2), Taylor to x**25.
* softplus: max(y, 0) + log1p(exp(-|y|)) (y = beta x) as a double-double: exp's rounding error
  goes to log1p's correction term, log1p's parts are summed exactly with max(y, 0), and the
  division by beta is refined.  log_sigmoid(x) = -softplus(-x) (+0.0 where it rounds to 0, as
  PyTorch).  mish: x tanh(log1p(e)) = x n / (n + 2) with n = e (e + 2), e = exp(x), all as
  double-doubles, so only the last product rounds.
* elu/selu/celu: the expm1 above times alpha * scale (one more rounding unless that is 1).

Measured (``python -m bench.accuracy --f64``, ~190k inputs per op): every result within 1 ulp of
the correctly rounded one, largest errors in ulps of the exact value: exp 0.74, exp2 0.74, expm1
0.81, log 0.75, log1p 0.74, log2 0.76, log10 0.62, sinh 0.70, cosh 0.58, tanh 0.77, sigmoid
0.74, silu 0.74, gelu_tanh 0.56, softplus 0.77, softplus(beta=2,threshold=5) 0.75, mish 0.80,
elu 0.76, log_sigmoid 0.75.

Special values: NaN propagates; +-inf and signed zeros as libm (expm1, log1p, tanh keep -0.0);
log(0) = -inf, log(<0) = nan; log of subnormals is exact up to rounding.  Polynomials use
``llvm.fma`` where Numba's target CPU has FMA (math_f32's ``HAS_FMA``; multiply-add otherwise,
where the refinement steps lose accuracy -- the <= 1 ulp figures are for FMA machines).
Products that underflow are avoided where the result does not need them (x86 takes a
~100-cycle assist per subnormal result).
"""
from __future__ import annotations

import math

from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

from .math_f32 import HAS_FMA, _fma, _njit  # noqa: F401 (one FMA intrinsic for both widths)

_I64 = llvm_ir.IntType(64)
_F64 = llvm_ir.DoubleType()


@intrinsic
def _bits(typingctx, x):
    """The IEEE bits of the double x as an int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _I64)
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, b):
    """The double whose IEEE bits are the int64 b."""
    if b != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _F64)
    return types.float64(types.int64), codegen


_INF, _NAN = math.inf, math.nan
_ROUND = 6755399441055744.0  # 1.5 * 2**52: (t + _ROUND) - _ROUND rounds t, |t| < 2**51
_ROUND_BITS = 0x4338000000000000  # its bits: bits(t + _ROUND) - _ROUND_BITS = round(t)
_INVLN2 = 1.44269504088896338700e+00
_LN2HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: n * _LN2HI exact for |n| < 2**21
_LN2LO = 1.90821492927058770002e-10
_TINY = 2.0 ** -54  # below this, expm1/log1p/tanh(x) round to x


@_njit
def _pow2(n):
    """2**n for an int64 n in [-1022, 1023]."""
    return _from_bits((n + 1023) << 52)


@_njit
def _scale_parts(n):
    """(2**n1, 2**n2), n1 + n2 = n, both normal for n in [-2044, 2046]."""
    n1 = n >> 1
    return _pow2(n1), _pow2(n - n1)


_EXP_C = tuple(1.0 / math.factorial(k) for k in range(2, 14))  # 1/2! .. 1/13!


@_njit
def _exp_poly(n, r, rlo):
    """(n, r, c) with 2**n exp(r + rlo) = 2**n (1 + r + c), |r| <= 0.35, rlo tiny: c = w +
    rlo (1 + r + w), w = r**2 (1/2 + r/6 + ... + r**11/13!) (exp(rlo) = 1 + rlo)."""
    c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _EXP_C
    q = _fma(_fma(_fma(_fma(c13, r, c12), r, c11), r, c10), r, c9)
    q = _fma(_fma(_fma(_fma(q, r, c8), r, c7), r, c6), r, c5)
    q = _fma(_fma(_fma(q, r, c4), r, c3), r, c2)
    w = (r * r) * q
    return n, r, w + _fma(rlo, r + w, rlo)


@_njit
def _exp_core(t, tlo):
    """(n, r, c) with exp(t + tlo) = 2**n (1 + r + c), |r| <= ln2/2 (a little more at ties),
    |c| < 0.07, for a finite |t| < 2**40 and a tiny tlo: Cody-Waite reduction t = n ln2 + r
    (+ rlo: r's rounding error and tlo, kept), then ``_exp_poly``."""
    k = t * _INVLN2 + _ROUND
    nf = k - _ROUND
    hi = t - nf * _LN2HI  # exact
    lo = nf * _LN2LO
    r = hi - lo
    return _exp_poly(_bits(k) - _ROUND_BITS, r, ((hi - r) - lo) + tlo)


@_njit
def _one_plus(r, c):
    """1 + r + c as a normalized double-double (hi, lo), |r| < 1, |c| < 0.1."""
    h = 1.0 + r
    lo = ((1.0 - h) + r) + c
    hh = h + lo
    return hh, lo - (hh - h)


@_njit
def tl_exp_f64(x):
    xc = -746.0 if x < -746.0 else x
    xc = 710.0 if xc > 710.0 else xc
    xc = 0.0 if x != x else xc
    n, r, c = _exp_core(xc, 0.0)
    h = 1.0 + r
    lo = ((1.0 - h) + r) + c
    a, b = _scale_parts(n)
    b = 0.0 if x < -745.2 else b  # rounds to 0: no underflowing product (slow on x86)
    res = ((h + lo) * a) * b
    return x if x != x else res


_LN2 = 0.6931471805599453
_LN2_LO = 2.3190468138462996e-17  # ln2 - _LN2


@_njit
def tl_exp2_f64(x):
    # 2**x = 2**n exp(d ln2), d = x - round(x) exact, d ln2 as a double-double
    xc = -1080.0 if x < -1080.0 else x
    xc = 1030.0 if xc > 1030.0 else xc
    xc = 0.0 if x != x else xc
    k = xc + _ROUND
    d = xc - (k - _ROUND)
    rh = d * _LN2
    rl = _fma(d, _LN2, -rh) + d * _LN2_LO
    n, r, c = _exp_poly(_bits(k) - _ROUND_BITS, rh, rl)
    h = 1.0 + r
    lo = ((1.0 - h) + r) + c
    a, b = _scale_parts(n)
    b = 0.0 if x < -1076.0 else b  # rounds to 0: no underflowing product
    res = ((h + lo) * a) * b
    return x if x != x else res


# ----- sinh, cosh -----

_SINH_C = tuple(1.0 / math.factorial(2 * k + 1) for k in range(1, 13))  # 1/3! .. 1/25!


@_njit
def _hyperbolic(a, sgn):
    """(exp(a) + sgn exp(-a)) / 2 for a = |x| (clamped to 711: inf beyond), sgn = +-1:
    exp(a) = 2**n (eh + el) and its reciprocal as double-doubles, summed exactly but for the
    last rounding, 2**(n - 1) applied last in two steps (cosh overflows after exp does)."""
    ac = 711.0 if a > 711.0 else a
    ac = 0.0 if a != a else ac
    n, r, c = _exp_core(ac, 0.0)
    h = 1.0 + r
    lo = ((1.0 - h) + r) + c
    eh = h + lo
    el = lo - (eh - h)
    y = 1.0 / eh
    yl = y * (_fma(-y, eh, 1.0) - y * el)  # 1 / (eh + el) = y + yl
    nc = 40 if n > 40 else n  # exp(-2a) negligible beyond
    f = sgn * _pow2(-2 * nc)
    th = y * f
    sh = eh + th  # TwoSum
    bb = sh - eh
    se = (eh - (sh - bb)) + (th - bb)
    s1, s2 = _scale_parts(n - 1)
    return ((sh + (se + (el + yl * f))) * s1) * s2


@_njit
def tl_cosh_f64(x):
    return x * x if x != x else _hyperbolic(abs(x), 1.0)


@_njit
def tl_sinh_f64(x):
    # |x| < 1: x + x**3 (1/3! + x**2/5! + ... + x**22/25!); above, (exp(a) - exp(-a)) / 2
    z = x * x
    c3, c5, c7, c9, c11, c13, c15, c17, c19, c21, c23, c25 = _SINH_C
    q = _fma(_fma(_fma(_fma(_fma(c25, z, c23), z, c21), z, c19), z, c17), z, c15)
    q = _fma(_fma(_fma(_fma(_fma(_fma(q, z, c13), z, c11), z, c9), z, c7), z, c5), z, c3)
    small = _fma(x, z * q, x)
    big = _hyperbolic(abs(x), -1.0)
    big = -big if x < 0.0 else big
    res = small if abs(x) < 1.0 else big
    return x if x != x else res


# FDLIBM expm1's rational approximation on |r| <= ln2/2
_Q1, _Q2 = -3.33333333333331316428e-02, 1.58730158725481460165e-03
_Q3, _Q4 = -7.93650757867487942473e-05, 4.00821782732936239552e-06
_Q5 = -2.01099218183624371326e-07


@_njit
def tl_expm1_f64(x):
    xc = -40.0 if x < -40.0 else x  # expm1 rounds to -1 below -38
    xc = 710.0 if xc > 710.0 else xc
    xc = 0.0 if x != x else xc
    k = xc * _INVLN2 + _ROUND
    kf = k - _ROUND
    n = _bits(k) - _ROUND_BITS
    hi = xc - kf * _LN2HI
    lo = kf * _LN2LO
    r = hi - lo
    c = (hi - r) - lo
    hfx = 0.5 * r
    hxs = r * hfx
    r1 = _fma(hxs, _fma(hxs, _fma(hxs, _fma(hxs, _fma(hxs, _Q5, _Q4), _Q3), _Q2), _Q1), 1.0)
    t = 3.0 - r1 * hfx
    e = hxs * ((r1 - t) / (6.0 - r * t))
    res0 = r - (r * e - hxs)  # n == 0
    e = (r * (e - c) - c) - hxs
    res_m1 = 0.5 * (r - e) - 0.5  # n == -1
    res_p1 = -2.0 * (e - (r + 0.5)) if r < -0.25 else 1.0 + 2.0 * (r - e)  # n == 1
    a, b = _scale_parts(n)
    res_far = ((1.0 - (e - r)) * a) * b - 1.0  # n <= -2 or n > 56
    nc = 60 if n > 60 else n
    nc = 0 if nc < 0 else nc
    s = _pow2(nc)
    si = _pow2(-nc)
    res_mid = ((1.0 - si) - (e - r)) * s  # 2 <= n < 20
    res_big = ((r - (e + si)) + 1.0) * s  # 20 <= n <= 56
    res = res_big if n < 57 else res_far
    res = res_mid if n < 20 else res
    res = res_p1 if n == 1 else res
    res = res0 if n == 0 else res
    res = res_m1 if n == -1 else res
    res = res_far if n < -1 else res
    res = x if abs(x) < _TINY else res  # keeps -0.0 and the subnormals
    return x if x != x else res


# ----- log family (FDLIBM / FreeBSD) -----

_LG1, _LG2 = 6.666666666666735130e-01, 3.999999999940941908e-01
_LG3, _LG4 = 2.857142874366239149e-01, 2.222219843214978396e-01
_LG5, _LG6 = 1.818357216161805012e-01, 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_SQRT2 = 1.4142135623730951
_DBL_MIN = 2.2250738585072014e-308
_TWO54 = 2.0 ** 54
_MANT = 0x000FFFFFFFFFFFFF
_ONE_BITS = 0x3FF0000000000000
_EXP_TO_F = 0x4330000000000000  # (bits >> 52) | this, as a double: 2**52 + exponent field


@_njit
def _split(x):
    """(k, f) with x = 2**k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), k a double, for a positive
    finite x (subnormals scaled up first)."""
    sub = x < _DBL_MIN
    xs = x * _TWO54 if sub else x
    bits = _bits(xs)
    k = _from_bits((bits >> 52) | _EXP_TO_F) - 4503599627371519.0  # 2**52 + 1023
    k = k - 54.0 if sub else k
    m = _from_bits((bits & _MANT) | _ONE_BITS)
    big = m > _SQRT2
    return (k + 1.0 if big else k), (m * 0.5 if big else m) - 1.0


@_njit
def _log_kernel(f):
    """(hfsq, s (hfsq + R)): log(1 + f) = f - (hfsq - s (hfsq + R)), |f| < 0.42."""
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * _fma(w, _fma(w, _LG6, _LG4), _LG2)
    t2 = z * _fma(w, _fma(w, _fma(w, _LG7, _LG5), _LG3), _LG1)
    hfsq = 0.5 * f * f
    return hfsq, s * (hfsq + (t2 + t1))


@_njit
def _log_special(x, res, pole):
    """Special inputs: pole -> -inf, below it or NaN -> nan, +inf -> inf."""
    res = _INF if x == _INF else res
    res = -_INF if x == pole else res
    return res if x >= pole else _NAN


@_njit
def _positive(x):
    return x if (x > 0.0) & (x < _INF) else 1.0


@_njit
def tl_log_f64(x):
    k, f = _split(_positive(x))
    hfsq, r = _log_kernel(f)
    return _log_special(x, k * _LN2HI - ((hfsq - (r + k * _LN2LO)) - f), 0.0)


_HI_MASK = -0x100000000  # keeps the top 32 bits of a double


@_njit
def _log_hi_lo(f):
    """log(1 + f) = hi + lo, hi with 21 significant bits (products by 2-part constants exact)."""
    hfsq, r = _log_kernel(f)
    hi = _from_bits(_bits(f - hfsq) & _HI_MASK)
    return hi, ((f - hi) - hfsq) + r


_IVLN2HI, _IVLN2LO = 1.44269504072144627571e+00, 1.67517131648865118353e-10
_IVLN10HI, _IVLN10LO = 4.34294481878168880939e-01, 2.50829467116452752298e-11
_LOG10_2HI, _LOG10_2LO = 3.01029995663611771306e-01, 3.69423907715893078616e-13


@_njit
def tl_log2_f64(x):
    k, f = _split(_positive(x))
    hi, lo = _log_hi_lo(f)
    vhi = hi * _IVLN2HI
    vlo = (lo + hi) * _IVLN2LO + lo * _IVLN2HI
    w = k + vhi
    vlo = vlo + ((k - w) + vhi)
    return _log_special(x, vlo + w, 0.0)


@_njit
def tl_log10_f64(x):
    k, f = _split(_positive(x))
    hi, lo = _log_hi_lo(f)
    vhi = hi * _IVLN10HI
    y2 = k * _LOG10_2HI
    vlo = k * _LOG10_2LO + (lo + hi) * _IVLN10LO + lo * _IVLN10HI
    w = y2 + vhi
    vlo = vlo + ((y2 - w) + vhi)
    return _log_special(x, vlo + w, 0.0)


@_njit
def _log1p_parts(x, xlo):
    """(a, f, b) with log1p(x + xlo) = a + f - b, a = k ln2_hi and f exact, |b| < 0.1, for
    x > -1 finite (anything else gives some finite values), |xlo| tiny against x: FDLIBM's
    log1p, with xlo added to its correction term for the rounding of 1 + x."""
    u = 1.0 + x
    k, f = _split(u if (u > 0.0) & (u < _INF) else 1.0)
    c = (1.0 - (u - x)) if u >= 2.0 else (x - (u - 1.0))  # exact rounding error of u
    c = 0.0 if k >= 54.0 else c
    small = (x > -0.2928932188134524) & (x < 0.41421356237309503)
    c = (xlo if small else c + xlo) / (1.0 + x if small else u)
    k = 0.0 if small else k
    f = x if small else f
    hfsq, r = _log_kernel(f)
    return k * _LN2HI, f, hfsq - (r + (k * _LN2LO + c))


@_njit
def tl_log1p_f64(x):
    a, f, b = _log1p_parts(x, 0.0)
    res = a - (b - f)
    res = x if abs(x) < _TINY else res  # keeps -0.0 and the subnormals
    return _log_special(x, res, -1.0)


__all__ = [name for name in dir() if name.startswith("tl_")]
