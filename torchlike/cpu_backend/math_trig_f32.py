"""Float32-native sin, cos and tan (``tl_<name>_f32``) for the generated Numba kernels.

Same contract as ``math_f32``: call-free, branch-free, so a kernel loop calling them vectorizes;
within 2 ulp of the correctly rounded float32 result over the whole float32 range (measured:
``python -m bench.accuracy --ops sin,cos,tan``).

The argument is reduced to r = |x| - n pi/2, |r| <= ~pi/4, as a float32 pair r_hi + r_lo (an
unevaluated sum with ~40 good bits): the sin/cos polynomials are then evaluated as
r_hi + (small tail) and 1 - (small tail) with the rounding errors of the leading steps kept,
so each result is rounded essentially once (<= 1 ulp).  Two reductions, both computed for every
element and selected (a branch would keep the loop scalar):

* |x| < 8192: Cody-Waite in float32.  n = round(x 2/pi) < 2**13; pi/2 = P1 + P2 + P3 (72
  bits); x - n P1 is exact with FMA (the result is a multiple of 2**-23 below 2), n P2 is split
  exactly (FMA) and the subtraction's rounding error kept (2Sum), so r_hi + r_lo is exact to
  ~2**-64 absolute; no float32 there is closer than 4.2e-9 (~2**-28) to a multiple of pi/2
  (x = 252.8982, from an exhaustive search).
* |x| >= 2 (used from 8192): Payne-Hanek in 64-bit integers, the form of glibc's float32
  ``reduce_large`` (sysdeps/ieee754/flt-32/s_sinf.h): x = m 2**(e-150) with a 24-bit m, and
  x (2/pi) 2**62 mod 2**64, the quadrant in the top two bits and 62 fraction bits, is
  m << (e & 7) times a 96-bit window of 2/pi chosen by e >> 3 (cut from four constant 64-bit
  words with selects and funnel shifts, no memory reads), error < 2**-60 absolute.  The
  fraction is converted to a float64 r and split into r_hi + r_lo.

The huge path's integer and float64 work runs at half the float32 width (64-bit lanes) and is
half of sin's cost, so kernels call the ``tl_<name>_fast_f32`` forms (Cody-Waite only) first and
redo a block of elements with the exact ones where ``tl_trig_huge_f32`` fired
(``fast_paths.py``): sin at 2^22 floats, 2 threads, 5.5 ms -> 3.4 ms; a block holding a huge
argument costs both forms.

Quadrants: with q = n mod 4, sin x = (s, c, -s, -c)[q] and cos x = (c, -s, -c, s)[q] for
s = sin r, c = cos r; tan x = s / c for even q, -c / s for odd q, as a division of the two
normalized pairs with one correction step.  Negative x: sin and tan are odd, cos even.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

from .math_f32 import _MAGIC, _NAN, _ONE, _ZERO, _fma, _njit

F = np.float32

# 2/pi to 256 bits (its fraction: 2/pi = 0.a2f9836e... in hex), as four 64-bit words
_TWO_OVER_PI_HEX = "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561"
_TWO_OVER_PI_WORDS = [int(_TWO_OVER_PI_HEX[16 * k:16 * (k + 1)], 16) for k in range(4)]
_HUGE_SCALE = 3.4061215800865545e-19  # pi/2 * 2**-62: a fraction unit in radians (float64)

_I32, _I64 = llvm_ir.IntType(32), llvm_ir.IntType(64)


@intrinsic
def _reduce_huge(typingctx, a):
    """(f, n) for a float32 a >= 2: a (2/pi) = n + f (mod 4) with n in 0..3 (float32) and
    f in [-1/2, 1/2) as a float64 in units of 2**-62: r = f * pi/2 * 2**-62.  Other a (NaN,
    inf, a < 2) give some finite value.

    a = m 2**(e-150) with m < 2**24, so a (2/pi) 2**62 = xi 2**K (2/pi) with xi = m << (e & 7)
    < 2**31 and K = 8 (e >> 3) - 88.  Modulo 2**64 only the bits of 2**K (2/pi) from 2**33 down
    matter: a 96-bit window, hi64 (weights 2**63 .. 2**0) and lo32 (2**-1 .. 2**-32), which
    starts 8 idx - 24 bits after the point, idx = (e >> 3) - 16 in 0..15.  V = xi hi64 +
    (xi lo32 >> 32) mod 2**64 is then low by less than 1.5 units of 2**-62: the quadrant is in
    its top two bits (rounded), the rest is f.  The window is cut from the constant words by
    selects and funnel shifts (glibc's ``reduce_large`` reads the same bits from a table: a
    memory gather whose unknown address stops LLVM's vectorizer when the kernel's input and
    output need a runtime alias check)."""
    if a != types.float32:
        return None
    sig = types.Tuple((types.float64, types.float32))(types.float32)

    def codegen(context, builder, sig, args):
        def c32(v):
            return llvm_ir.Constant(_I32, v)

        def c64(v):
            return llvm_ir.Constant(_I64, v)

        bits = builder.bitcast(args[0], _I32)
        e = builder.and_(builder.lshr(bits, c32(23)), c32(0xFF))
        m = builder.or_(builder.and_(bits, c32(0x7FFFFF)), c32(0x800000))
        xi = builder.zext(builder.shl(m, builder.and_(e, c32(7))), _I64)
        # window start 8 idx - 24 = 64 k + t after the point, k in -1..1: u = 64 (k + 1) + t
        idx = builder.zext(builder.and_(builder.lshr(e, c32(3)), c32(15)), _I64)
        u = builder.add(builder.shl(idx, c64(3)), c64(40))
        k1, t = builder.lshr(u, c64(6)), builder.and_(u, c64(63))
        words = [0] + _TWO_OVER_PI_WORDS  # words[k + 1]: bits 64 k + 1 .. 64 k + 64

        def pick(j):  # words[k1 + j] for k1 in 0..2
            w = [c64(v) for v in words[j:j + 3]]
            return builder.select(builder.icmp_unsigned("==", k1, c64(0)), w[0],
                                  builder.select(builder.icmp_unsigned("==", k1, c64(1)),
                                                 w[1], w[2]))

        fshl = builder.module.declare_intrinsic(
            "llvm.fshl", [_I64], llvm_ir.FunctionType(_I64, [_I64, _I64, _I64]))
        w0, w1, w2 = pick(0), pick(1), pick(2)
        hi64 = builder.call(fshl, [w0, w1, t])
        lo32 = builder.lshr(builder.call(fshl, [w1, w2, t]), c64(32))
        v = builder.add(builder.mul(xi, hi64), builder.lshr(builder.mul(xi, lo32), c64(32)))
        n = builder.lshr(builder.add(v, c64(1 << 61)), c64(62))  # wraps to 0 near 4: right
        f = builder.sitofp(builder.sub(v, builder.shl(n, c64(62))), llvm_ir.DoubleType())
        nf = builder.uitofp(n, llvm_ir.FloatType())
        return context.make_tuple(builder, sig.return_type, [f, nf])
    return sig, codegen


_SWITCH = F(8192.0)  # below: Cody-Waite; from here: the integer reduction
_TWO_OVER_PI = F(0.636619772367581343)
_P1 = F(1.57079637050628662109375)  # pi/2 = _P1 + _P2 + _P3 + O(2**-76)
_P2 = F(-4.37113900018624283e-8)
_P3 = F(-1.71512451804399935e-15)
_QUARTER, _HALF, _THREE_EIGHTHS = F(0.25), F(0.5), F(0.375)
_R_TINY = F(2.0 ** -20)  # |r| below: sin r = r, cos r = 1 (no subnormal products)
_X_TINY = F(2.0 ** -13)  # |x| below: sin x and tan x round to x (and keep -0.0)

# sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4 + 0.002: least-squares
# fits on Chebyshev nodes, each coefficient rounded to float32 before the next ones were refit;
# relative error 2**-32 (sin) and 2**-33 (cos), far below float32's 2**-24
_S = (F(-0.16666667), F(0.008333372), F(-0.00019849892), F(2.800168e-06))
_C = (F(0.041666646), F(-0.0013887308), F(2.4432093e-05))


@_njit
def _reduce_small(a):
    """(r_hi, r_lo, q, n): the Cody-Waite reduction, right for 0 <= a < _SWITCH (an a above
    gives some finite values, NaN gives NaN); n = round(a 2/pi) as a float32."""
    af = a if a < _SWITCH else _ZERO
    n = (af * _TWO_OVER_PI + _MAGIC) - _MAGIC
    t = _fma(-n, _P1, af)  # exact
    h = n * _P2
    hl = _fma(n, _P2, -h)  # h + hl = n _P2 exactly
    s = t - h
    bb = s - t
    err = (t - (s - bb)) + (-h - bb)  # 2Sum: s + err = t - h exactly
    lo = (err - hl) - n * _P3
    q = n - F(4.0) * (((n * _QUARTER - _THREE_EIGHTHS) + _MAGIC) - _MAGIC)  # n - 4 floor(n/4)
    return s, lo, q


@_njit
def _reduce(a):
    """(r_hi, r_lo, q) with a = n pi/2 + r_hi + r_lo, q = n mod 4 (float32 0..3), for a >= 0
    (a non-finite a gives some finite values)."""
    s, lo, q = _reduce_small(a)
    f, nh = _reduce_huge(a)
    rh = f * _HUGE_SCALE
    rh_hi = np.float32(rh)
    rh_lo = np.float32(rh - np.float64(rh_hi))
    big = a >= _SWITCH
    r_hi = rh_hi if big else s
    r_lo = rh_lo if big else lo
    q = nh if big else q
    return r_hi, r_lo, q


@_njit
def _sin_cos_parts(r_hi, r_lo):
    """(s_hi, s_lo, c_hi, c_lo): sin r = s_hi + s_lo and cos r = c_hi + c_lo to ~2**-30
    relative, |s_lo| <= 0.1 |s_hi| and |c_lo| <= ulp(c_hi), for r = r_hi + r_lo."""
    rp = _ZERO if abs(r_hi) < _R_TINY else r_hi
    z = rp * rp
    s0, s1, s2, s3 = _S
    ps = _fma(_fma(_fma(s3, z, s2), z, s1), z, s0)
    # sin(r_hi + r_lo) = sin r_hi + r_lo cos r_hi, cos r_hi ~ 1 - z/2
    s_lo = _fma(rp * z, ps, _fma(-_HALF * z, r_lo, r_lo))
    c0, c1, c2 = _C
    pc = _fma(_fma(c2, z, c1), z, c0)
    hr = _HALF * rp
    h = hr * rp
    hl = _fma(hr, rp, -h)  # h + hl = r^2 / 2 exactly
    c_hi = _ONE - h
    e = (_ONE - c_hi) - h  # Fast2Sum (1 >= h): c_hi + e = 1 - h exactly
    # cos(r_hi + r_lo) = cos r_hi - r_lo sin r_hi
    c_lo = _fma(z * z, pc, e - hl) - r_lo * rp
    return r_hi, s_lo, c_hi, c_lo


@_njit
def _sin_from(x, a, r_hi, r_lo, q):
    s_hi, s_lo, c_hi, c_lo = _sin_cos_parts(r_hi, r_lo)
    odd = (q == _ONE) | (q == F(3.0))
    hi = c_hi if odd else s_hi
    lo = c_lo if odd else s_lo
    res = hi + lo
    res = -res if (q >= F(2.0)) != (x < _ZERO) else res
    res = x if a < _X_TINY else res  # keeps -0.0 and the subnormals
    return res if a < F(np.inf) else _NAN


@_njit
def _cos_from(a, r_hi, r_lo, q):
    s_hi, s_lo, c_hi, c_lo = _sin_cos_parts(r_hi, r_lo)
    odd = (q == _ONE) | (q == F(3.0))
    hi = s_hi if odd else c_hi
    lo = s_lo if odd else c_lo
    res = hi + lo
    res = -res if (q == _ONE) | (q == F(2.0)) else res
    return res if a < F(np.inf) else _NAN


@_njit
def _tan_from(x, a, r_hi, r_lo, q):
    s_hi, s_lo, c_hi, c_lo = _sin_cos_parts(r_hi, r_lo)
    # normalize both pairs (Fast2Sum: |hi| >= |lo|), then (sn + se) / (cn + ce) with one
    # correction step: y = sn / cn, y + (sn - y cn + se - y ce) / cn
    sn = s_hi + s_lo
    se = s_lo - (sn - s_hi)
    cn = c_hi + c_lo
    ce = c_lo - (cn - c_hi)
    odd = (q == _ONE) | (q == F(3.0))
    num = cn if odd else sn
    num_lo = ce if odd else se
    den = sn if odd else cn
    den_lo = se if odd else ce
    y = num / den
    rem = _fma(-y, den, num) + (num_lo - y * den_lo)
    res = y + rem / den
    res = -res if odd != (x < _ZERO) else res
    res = x if a < _X_TINY else res  # keeps -0.0 and the subnormals
    return res if a < F(np.inf) else _NAN


@_njit
def tl_sin_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce(a)
    return _sin_from(x, a, r_hi, r_lo, q)


@_njit
def tl_cos_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce(a)
    return _cos_from(a, r_hi, r_lo, q)


@_njit
def tl_tan_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce(a)
    return _tan_from(x, a, r_hi, r_lo, q)


# -- the fast forms: Cody-Waite only, right where tl_trig_huge_f32 is False (|x| < 8192, NaN,
# inf); kernels run them first and redo a block with the exact forms when the guard fires
# (cpu_backend/fast_paths.py): the integer reduction is half of sin's cost.

@_njit
def tl_trig_huge_f32(x):
    """True if the fast forms below are wrong for x: a finite |x| >= 8192."""
    a = abs(x)
    return (a >= _SWITCH) & (a < F(np.inf))


@_njit
def tl_sin_fast_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce_small(a)
    return _sin_from(x, a, r_hi, r_lo, q)


@_njit
def tl_cos_fast_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce_small(a)
    return _cos_from(a, r_hi, r_lo, q)


@_njit
def tl_tan_fast_f32(x):
    a = abs(x)
    r_hi, r_lo, q = _reduce_small(a)
    return _tan_from(x, a, r_hi, r_lo, q)


__all__ = [name for name in dir() if name.startswith("tl_")]
