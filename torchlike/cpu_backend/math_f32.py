"""Float32-native transcendental helpers (``tl_<name>_f32``) for the generated Numba kernels.

pip's llvmlite has no SVML, so a libm call (``expf``) in a kernel loop keeps the loop scalar.
These helpers are call-free and branch-free (conditionals are ``a if c else b`` selects, which
LLVM if-converts) and compute in float32 with ``np.float32`` constants only, so the loop
vectorizes at the machine's full float32 width (16 lanes with AVX-512, 8 with AVX2).  Numba
promotes ``float32 * <Python float>`` to float64: every constant below is an ``np.float32``
module global, which Numba freezes as a float32 literal.  Integer work on the IEEE bits is done
in LLVM IR (``@intrinsic``) in 32 bits: Numba's own int32 arithmetic would widen to int64.

The algorithms are Cephes' single-precision ones (range reduction, short polynomials); the
results are within 2 ulp of the correctly rounded float32 result over the whole float32 range,
special values included (``python -m bench.accuracy`` measures every helper; the table is in
bench/results/accuracy/report.md).  ``scalar_math`` re-exports every ``tl_*`` name here, so the
generated kernels (``from torchlike.cpu_backend.scalar_math import *``) see them.

``exp`` scales by ``2**n`` in two steps (``p * 2**n1 * 2**n2``): each factor is a normal float,
the first product is exact, and the second rounds once, into the subnormals or to 0/inf as
IEEE does.  n is rounded by the fma that adds 1.5 * 2**23 (it then sits in the sum's low bits,
whence both factors come by integer shifts: ``_split_scale``), and clamps are ``llvm.maxnum``/
``minnum`` (one instruction each): exp went from ~40 vector instructions to 28 (1.7x faster in
cache; softmax, sigmoid, silu and the activations with it).  sigmoid and silu divide by ``a + 2**-n2`` (exp(-x) = a * 2**n2) and scale by the
power of two last, so results that are normal floats while exp(x) is subnormal (or exp(-x)
overflows) keep their full precision.
Polynomials use ``llvm.fma`` where Numba's target CPU has FMA (one instruction; multiply-add
otherwise).  Products that underflow where the result does not need them are avoided: x86
takes a ~100-cycle microcode assist for each subnormal result.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

F = np.float32


def _njit(fn):
    """A kernel helper (every ``tl_*`` function of the cpu_backend math modules): compiled by
    Numba once per process and signature, and inlined into each kernel that calls it by LLVM
    (``forceinline``: LLVM's ``alwaysinline``), so the kernel's loop still vectorizes.  Numba's
    own inlining (``inline="always"``) copies a helper's IR into every caller and types it
    again there: that was most of a kernel's compile time (the float32, int32 and float64
    registry kernels of tests/test_fuser_cpu.py compiled in 240 s that way, 97 s this way).
    ``error_model="numpy"``: a float x / 0.0 is inf or NaN, as in IEEE and PyTorch."""
    return numba.njit(forceinline=True, error_model="numpy")(fn)


def _njit_ir(fn):
    """A helper that loops over a constant table (a module-level ``np.array``), inlined by
    Numba instead: the copy makes the table a constant of the caller, while a compiled
    helper takes it as an array argument and the caller's loop did not vectorize (the
    Chebyshev series of i0e: tests/test_vectorization.py)."""
    return numba.njit(inline="always", error_model="numpy")(fn)


_I32 = llvm_ir.IntType(32)


def _target_has(feature: str) -> bool:
    """Whether the CPU Numba compiles for has ``feature`` (an LLVM feature name: "fma",
    "f16c"); a helper then emits the instruction, else what the instruction computes (without
    FMA LLVM would call libm's fmaf, without F16C a compiler-rt routine Numba may not link)."""
    from numba.core import config
    if config.CPU_FEATURES is not None:
        return f"+{feature}" in config.CPU_FEATURES.split(",")
    if config.CPU_NAME is not None:
        return False  # a named generic target (portable cache): no assumption
    import llvmlite.binding as llvm
    return bool(llvm.get_host_cpu_features().get(feature, False))


HAS_FMA = _target_has("fma")


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c, rounded once where the target has FMA (twice otherwise); float32 or float64
    (math_f64 uses it too)."""
    if not (a == b == c) or a not in (types.float32, types.float64):
        return None
    ty = llvm_ir.FloatType() if a == types.float32 else llvm_ir.DoubleType()

    def codegen(context, builder, sig, args):
        if HAS_FMA:
            fn = builder.module.declare_intrinsic(
                "llvm.fma", [ty], llvm_ir.FunctionType(ty, [ty, ty, ty]))
            return builder.call(fn, args)
        return builder.fadd(builder.fmul(args[0], args[1]), args[2])
    return a(a, a, a), codegen


@intrinsic
def _pow2i(typingctx, n):
    """2**n as a float32 for an integral float32 n in [-126, 127] (built from the bits)."""
    if n != types.float32:
        return None

    def codegen(context, builder, sig, args):
        k = builder.fptosi(args[0], _I32)
        k = builder.shl(builder.add(k, llvm_ir.Constant(_I32, 127)), llvm_ir.Constant(_I32, 23))
        return builder.bitcast(k, llvm_ir.FloatType())
    return types.float32(types.float32), codegen


def _minmax(name):
    def typer(typingctx, a, b):
        if not (a == b) or a not in (types.float32, types.float64):
            return None
        ty = llvm_ir.FloatType() if a == types.float32 else llvm_ir.DoubleType()

        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic(name, [ty], llvm_ir.FunctionType(ty, [ty, ty]))
            return builder.call(fn, args)
        return a(a, a), codegen
    typer.__name__ = "_fmax" if name == "llvm.maxnum" else "_fmin"
    typer.__doc__ = (f"``{name}``: the larger (smaller) of a and b, the other operand where one "
                     "is NaN.  Against a constant this is one x86 max/min instruction, where "
                     "two chained selects (a clamp) become compares and blends.")
    return intrinsic(typer)


_fmax = _minmax("llvm.maxnum")
_fmin = _minmax("llvm.minnum")


def _magic_int(builder, t):
    """The bits of ``t = n + _MAGIC`` (an integral n, |n| < 2**22, in t's low mantissa bits)
    shifted so that ``n << 22`` and ``n << 23`` come out: _MAGIC's own bits vanish in both
    shifts (its lowest set bit is bit 22), so no subtraction is needed."""
    bits = builder.bitcast(t, _I32)
    return (builder.shl(bits, llvm_ir.Constant(_I32, 22)),
            builder.shl(bits, llvm_ir.Constant(_I32, 23)))


def _split_codegen(inverse):
    def codegen(context, builder, sig, args):
        n22, n23 = _magic_int(builder, args[1])
        k1 = builder.and_(n22, llvm_ir.Constant(_I32, -(1 << 23)))  # floor(n / 2) << 23
        a = builder.add(builder.bitcast(args[0], _I32), k1)
        k2 = builder.sub(n23, k1)  # (n - n1) << 23
        one = llvm_ir.Constant(_I32, 127 << 23)
        b = builder.sub(one, k2) if inverse else builder.add(k2, one)
        f32 = llvm_ir.FloatType()
        return context.make_tuple(builder, sig.return_type,
                                  [builder.bitcast(a, f32), builder.bitcast(b, f32)])
    return codegen


@intrinsic
def _split_scale(typingctx, p, t):
    """(p * 2**n1, 2**n2) for ``t = n + _MAGIC`` (an integral n in [-200, 200]), n1 = floor(n / 2),
    n2 = n - n1, and a p in [2**-2, 2**2): the first factor by adding n1 to p's exponent field
    (exact, normal), the second built from the bits; integer work only (no conversions), so
    the scaling of exp is 7 vector instructions where the conversion-based one took 12."""
    if not (p == t == types.float32):
        return None
    return types.UniTuple(types.float32, 2)(types.float32, types.float32), _split_codegen(False)


@intrinsic
def _split_scale_inv(typingctx, p, t):
    """(p * 2**n1, 2**-n2), as _split_scale (the second factor's reciprocal, exact)."""
    if not (p == t == types.float32):
        return None
    return types.UniTuple(types.float32, 2)(types.float32, types.float32), _split_codegen(True)


@intrinsic
def _pow2_magic(typingctx, t):
    """2**n for ``t = n + _MAGIC``, an integral n in [-126, 127] (from the bits: two integer
    instructions, no conversion)."""
    if t != types.float32:
        return None

    def codegen(context, builder, sig, args):
        _, n23 = _magic_int(builder, args[0])
        b = builder.add(n23, llvm_ir.Constant(_I32, 127 << 23))
        return builder.bitcast(b, llvm_ir.FloatType())
    return types.float32(types.float32), codegen


@intrinsic
def _add_exponent(typingctx, x, n):
    """x * 2**n by adding n to x's exponent field (32-bit integer work on the bits), for an
    integral float32 n: exact where x and the result are normal floats; bits otherwise."""
    if not (x == n == types.float32):
        return None

    def codegen(context, builder, sig, args):
        k = builder.shl(builder.fptosi(args[1], _I32), llvm_ir.Constant(_I32, 23))
        bx = builder.bitcast(args[0], _I32)
        return builder.bitcast(builder.add(bx, k), llvm_ir.FloatType())
    return types.float32(types.float32, types.float32), codegen


@intrinsic
def _bits_sub(typingctx, x, y):
    """The float32 whose bits are bits(x) - bits(y) (32-bit integer subtraction): builds a
    subnormal result from integer work, e.g. bits(k + 2**23) - bits(2**23) = k for an integer
    k < 2**23, i.e. k * 2**-149, without a floating-point operation that has a subnormal
    result (a ~100-cycle microcode assist per instruction on x86)."""
    if not (x == y == types.float32):
        return None

    def codegen(context, builder, sig, args):
        bx = builder.bitcast(args[0], _I32)
        by = builder.bitcast(args[1], _I32)
        return builder.bitcast(builder.sub(bx, by), llvm_ir.FloatType())
    return types.float32(types.float32, types.float32), codegen


@intrinsic
def _exponent_field(typingctx, x):
    """The biased exponent field of the float32 x, as a float32 (0..255)."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], _I32)
        e = builder.and_(builder.lshr(bits, llvm_ir.Constant(_I32, 23)),
                         llvm_ir.Constant(_I32, 0xFF))
        return builder.sitofp(e, llvm_ir.FloatType())
    return types.float32(types.float32), codegen


@intrinsic
def _mantissa_half(typingctx, x):
    """x's significand as a float32 in [0.5, 1) (frexp's), for a positive normal x."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], _I32)
        m = builder.or_(builder.and_(bits, llvm_ir.Constant(_I32, 0x007FFFFF)),
                        llvm_ir.Constant(_I32, 0x3F000000))
        return builder.bitcast(m, llvm_ir.FloatType())
    return types.float32(types.float32), codegen


# ----- exp, exp2, expm1 -----

_MAGIC = F(12582912.0)  # 1.5 * 2**23: (t + _MAGIC) - _MAGIC rounds t to an integer, |t| < 2**22
_LOG2E = F(1.44269504088896341)
_LN2 = F(0.693147180559945309)
_C1 = F(0.693359375)  # Cody-Waite: ln2 = _C1 + _C2, _C1 with 9 bits (n * _C1 is exact)
_C2 = F(-2.12194440e-4)
_EXP_P0, _EXP_P1, _EXP_P2 = F(1.9875691500e-4), F(1.3981999507e-3), F(8.3334519073e-3)
_EXP_P3, _EXP_P4, _EXP_P5 = F(4.1665795894e-2), F(1.6666665459e-1), F(5.0000001201e-1)
_EXP_LO, _EXP_HI = F(-110.0), F(89.0)  # exp is 0 below (rounded), inf above; x * exp(x) too
_HALF, _ZERO, _ONE, _TWO = F(0.5), F(0.0), F(1.0), F(2.0)
_INF, _NAN = F(np.inf), F(np.nan)


@_njit
def _clamp_exp_arg(x):
    """x clamped to [-110, 89], NaN to -110 (the caller restores it): keeps the exponent
    arithmetic in range."""
    return _fmin(_fmax(x, _EXP_LO), _EXP_HI)


@_njit
def _scale_parts(p, n):
    """(p * 2**n1, 2**n2) with n1 + n2 = n, n integral in [-200, 200], p in [2**-2, 2**2):
    both factors normal floats."""
    return _split_scale(p, n + _MAGIC)


@_njit
def _exp_poly(r):
    q = _fma(_fma(_EXP_P0, r, _EXP_P1), r, _EXP_P2)
    return _fma(_fma(_fma(q, r, _EXP_P3), r, _EXP_P4), r, _EXP_P5)


@_njit
def _exp_reduce(x):
    """(t, r) with x = n ln2 + r, |r| <= ln2 / 2 (a little more), t = n + _MAGIC: n rounded
    by the fma's own rounding, r by Cody-Waite (n * _C1 is exact)."""
    t = _fma(x, _LOG2E, _MAGIC)
    n = t - _MAGIC
    return t, _fma(n, -_C2, _fma(n, -_C1, x))


@_njit
def _exp_parts(x):
    """exp(x) as (a, b), exp = a * b, for x in [-110, 89]."""
    t, r = _exp_reduce(x)
    p = _fma(_exp_poly(r), r * r, r) + _ONE
    return _split_scale(p, t)


@_njit
def tl_exp_f32(x):
    a, b = _exp_parts(_clamp_exp_arg(x))
    b = _ZERO if x < F(-104.0) else b  # exp rounds to 0: no underflowing product (slow on x86)
    return x if x != x else a * b


_EXP2_P = (F(1.535336188319500e-4), F(1.339887440266574e-3), F(9.618437357674640e-3),
           F(5.550332471162809e-2), F(2.402264791363012e-1), F(6.931472028550421e-1))
_EXP2_LO, _EXP2_HI = F(-151.0), F(128.0)  # 2**-151 rounds to 0; 2**128 is inf


@_njit
def tl_exp2_f32(x):
    xc = _fmin(_fmax(x, _EXP2_LO), _EXP2_HI)  # NaN gives _EXP2_LO, restored below
    t = xc + _MAGIC
    r = xc - (t - _MAGIC)  # exact, |r| <= 1/2
    p0, p1, p2, p3, p4, p5 = _EXP2_P
    p = _fma(_fma(_fma(_fma(_fma(_fma(p0, r, p1), r, p2), r, p3), r, p4), r, p5), r, _ONE)
    a, b = _split_scale(p, t)
    b = _ZERO if x < F(-150.0) else b  # rounds to 0: no underflowing product (slow on x86)
    return x if x != x else a * b


# expm1 on |r| <= ln2/2: r + r^2/2 + r^3 (1/6 + r/24 + ...), Taylor coefficients to r^9
_EM1 = (F(1.0 / 6), F(1.0 / 24), F(1.0 / 120), F(1.0 / 720), F(1.0 / 5040), F(1.0 / 40320),
        F(1.0 / 362880))
_TINY = F(2.0 ** -24)


@_njit
def _expm1_poly(r):
    q0, q1, q2, q3, q4, q5, q6 = _EM1
    q = _fma(_fma(_fma(_fma(_fma(_fma(q6, r, q5), r, q4), r, q3), r, q2), r, q1), r, q0)
    return _fma(r * r, _fma(r, q, _HALF), r)


@_njit
def tl_expm1_f32(x):
    # x = n ln2 + r: expm1(x) = 2**n expm1(r) + (2**n - 1), exact 2**n - 1 for n <= 24
    xc = F(-18.0) if x < F(-18.0) else x
    xc = F(20.0) if xc > F(20.0) else xc
    xc = _ZERO if x != x else xc
    n = (xc * _LOG2E + _MAGIC) - _MAGIC
    r = (xc - n * _C1) - n * _C2
    s = _pow2i(n)
    mid = s * _expm1_poly(r) + (s - _ONE)
    mid = _expm1_poly(x) if abs(x) < F(0.34) else mid
    mid = x if abs(x) < _TINY else mid  # keeps -0.0 and the subnormals
    mid = F(-1.0) if x < F(-18.0) else mid
    a, b = _exp_parts(_clamp_exp_arg(x))
    mid = a * b - _ONE if x > F(20.0) else mid
    return x if x != x else mid


# ----- log family -----

_SQRTHF = F(0.707106781186547524)
_LOG_P = (F(7.0376836292e-2), F(-1.1514610310e-1), F(1.1676998740e-1), F(-1.2420140846e-1),
          F(1.4249322787e-1), F(-1.6668057665e-1), F(2.0000714765e-1), F(-2.4999993993e-1),
          F(3.3333331174e-1))
_TWO23 = F(8388608.0)
_FLT_MIN = F(1.17549435e-38)


@_njit
def _log_reduce(x):
    """(e, f, y) with log(x) = e ln2 + f + y for a positive finite x (subnormals scaled up
    first): f = m - 1 with m in [sqrt(1/2), sqrt(2)), y the polynomial's correction."""
    sub = x < _FLT_MIN
    xs = x * _TWO23 if sub else x
    e = _exponent_field(xs) - F(126.0)
    e = e - F(23.0) if sub else e
    m = _mantissa_half(xs)
    lowm = m < _SQRTHF
    e = e - _ONE if lowm else e
    f = (m + m - _ONE) if lowm else m - _ONE
    z = f * f
    p0, p1, p2, p3, p4, p5, p6, p7, p8 = _LOG_P
    y = _fma(_fma(_fma(_fma(p0, f, p1), f, p2), f, p3), f, p4)
    y = _fma(_fma(_fma(_fma(y, f, p5), f, p6), f, p7), f, p8) * f * z
    return e, f, y - _HALF * z


@_njit
def _log_special(x, res, pole):
    """Special inputs: pole -> -inf, below (or NaN) -> nan, +inf -> inf."""
    res = _INF if x == _INF else res
    res = -_INF if x == pole else res
    return res if x >= pole else _NAN


@_njit
def _log_core(x):
    """Cephes logf on a positive finite x (any other x gives some finite value)."""
    e, f, y = _log_reduce(x if x > _ZERO else _ONE)
    return (f + (y + e * _C2)) + e * _C1


@_njit
def tl_log_f32(x):
    xx = x if x < _INF else _ONE
    return _log_special(x, _log_core(xx), _ZERO)


_LOG2EA = F(0.44269504088896340736)  # log2(e) - 1


@_njit
def tl_log2_f32(x):
    xx = x if (x > _ZERO) & (x < _INF) else _ONE
    e, f, y = _log_reduce(xx)
    z = f * _LOG2EA + y * _LOG2EA + y + f + e
    return _log_special(x, z, _ZERO)


_L102A, _L102B = F(3.0078125e-1), F(2.48745663981195213739e-4)
_L10EA, _L10EB = F(4.3359375e-1), F(7.00731903251827651129e-4)


@_njit
def tl_log10_f32(x):
    xx = x if (x > _ZERO) & (x < _INF) else _ONE
    e, f, y = _log_reduce(xx)
    z = y * _L10EB + f * _L10EB + e * _L102B + y * _L10EA + f * _L10EA + e * _L102A
    return _log_special(x, z, _ZERO)


@_njit
def tl_log1p_f32(x):
    # log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the quotient restores the
    # rounding error of u to first order
    u = _ONE + x
    uu = u if (u > _ZERO) & (u < _INF) else _ONE
    res = _log_core(uu) + (x - (uu - _ONE)) / uu
    res = x if abs(x) < _TINY else res  # keeps -0.0 and the subnormals
    return _log_special(x, res, F(-1.0))


# ----- tanh, sigmoid and the activations -----

_TANH_P = (F(-5.70498872745e-3), F(2.06390887954e-2), F(-5.37397155531e-2),
           F(1.33314422036e-1), F(-3.33332819422e-1))


@_njit
def tl_tanh_f32(x):
    # Cephes tanhf: an odd polynomial below 0.625, else 1 - 2 / (exp(2|x|) + 1) (the quotient is
    # below 0.45, so the subtraction keeps the result's accuracy).  exp(2|x|) with 2|x| clamped
    # to 20 (tanh is 1 in float32 beyond 9.01) needs no overflow handling: one scaling by 2**n.
    a = abs(x)
    p0, p1, p2, p3, p4 = _TANH_P
    z = x * x
    small = _fma(x * z, _fma(_fma(_fma(_fma(p0, z, p1), z, p2), z, p3), z, p4), x)
    t = _TWO * a
    t = _fmin(t, F(20.0))  # NaN gives 20 (the result is x below)
    tm, r = _exp_reduce(t)
    e = (_fma(_exp_poly(r), r * r, r) + _ONE) * _pow2_magic(tm)
    big = _ONE - _TWO / (e + _ONE)
    big = -big if x < _ZERO else big
    big = x if x != x else big
    small = x if a < _TINY else small  # keeps -0.0
    return small if a < F(0.625) else big


@_njit
def _sigmoid_parts(x, lo):
    """sigmoid(x + lo) as (d, s), sigmoid = (1 / d) * s: with exp(-x - lo) = a * b (two normal
    factors, b = 2**n2), 1 / (1 + a b) = (1 / (a + 1/b)) * (1/b); 1/b is a power of two, so the
    product a b, which overflows for x < -88.7, is never formed and the last step rounds once
    into the subnormals.  x is clamped to [-110, 110] (sigmoid(-110) rounds to 0)."""
    t = _fmin(_fmax(-x, F(-110.0)), F(110.0))  # NaN gives -110 (callers restore NaN)
    tm, r = _exp_reduce(t)
    r = r - lo
    z = r * r
    p = _fma(_exp_poly(r), z, r) + _ONE
    a, ib = _split_scale_inv(p, tm)  # ib = 1 / 2**n2, n2 in [-79, 80]
    return a + ib, ib


@_njit
def tl_sigmoid_f32(x):
    d, s = _sigmoid_parts(x, _ZERO)
    return x if x != x else (_ONE / d) * s


@_njit
def tl_silu_f32(x):
    d, s = _sigmoid_parts(x, _ZERO)
    r = (x / d) * s  # one rounding before the exact (or subnormal-rounding) scaling
    return x * _ZERO if x < F(-110.0) else r  # rounds to -0.0 (nan at -inf, as x * sigmoid)


_GELU_TANH_LIM = F(20.0)  # sigmoid(2u) rounds to 1 above (x), x sigmoid(2u) to -0.0 below


@_njit
def tl_gelu_tanh_f32(x):
    # 0.5 x (1 + tanh u) = x sigmoid(2u): no cancellation in the negative tail.  2u = sqrt(8/pi)
    # (x + 0.044715 x^3) is formed in float64 (x^3 exact to 2**-53) and handed to the sigmoid
    # as hi + lo: in float32 its rounding, |2u| 2**-24 relative, would reach exp as 100 ulp at
    # x = -10.  2 ulp over all floats; 1.10 ns/element against 1.53 for the all-float64 helper
    # (f64_gelu_tanh_f32)
    xc = _fmin(_fmax(x, -_GELU_TANH_LIM), _GELU_TANH_LIM)
    xd = np.float64(xc)
    w = 1.5957691216057308 * (xd + 0.044715 * (xd * xd * xd))
    hi = np.float32(w)
    d, s = _sigmoid_parts(hi, np.float32(w - np.float64(hi)))
    r = (xc / d) * s  # as silu: one rounding before the exact (or subnormal-rounding) scaling
    r = x if x >= _GELU_TANH_LIM else r
    r = x * _ZERO if x <= -_GELU_TANH_LIM else r  # -0.0 (NaN at -inf, as x * sigmoid)
    return x if x != x else r


_MISH_HI, _MISH_TAIL, _MISH_ZERO = F(20.0), F(-20.0), F(-110.0)


@_njit
def tl_mish_f32(x):
    # x tanh(log1p(e)) = x n / (n + 2), n = e (e + 2), e = exp(x): for x >= 0 as it stands; for
    # x < 0, (x e) g with g = (e + 2) / (n + 2) = 1 - e (e + 1) / (n + 2) in [0.6, 1] and x e
    # rounded once from exp's two factors, so a subnormal result rounds once; below -20, g is 1.
    # 4 ulp over all floats (4 inputs; 3 for 223031), PyTorch's float32 mish 154; 0.53 ns/element
    # against 1.38 for the float64 helper (f64_mish_f32)
    xc = _fmin(_fmax(x, _MISH_ZERO), _MISH_HI)  # NaN gives -110 (restored below)
    a, b = _exp_parts(xc)
    tail = x < _MISH_TAIL
    e = a * (_ONE if tail else b)  # normal in every lane (no subnormal products: slow on x86)
    n = e * (e + _TWO)
    d = n + _TWO
    g = _ONE - (e * (e + _ONE)) / d
    r = ((x * a) * b) * (_ONE if tail else g)
    r = x * (n / d) if x >= _ZERO else r
    r = x if x >= _MISH_HI else r  # tanh(softplus(20)) rounds to 1
    r = x * _ZERO if x <= _MISH_ZERO else r  # -0.0 (NaN at -inf, as x * tanh(softplus))
    return x if x != x else r


@_njit
def tl_softplus_f32(x, beta, threshold):
    xb = x * np.float32(beta)
    a, b = _exp_parts(_clamp_exp_arg(xb))
    b = _ZERO if xb < F(-104.0) else b  # exp rounds to 0
    e = a * b
    e = xb if xb != xb else e
    r = tl_log1p_f32(e) / np.float32(beta)
    return x if xb > np.float32(threshold) else r


@_njit
def tl_elu_f32(x, alpha, scale, input_scale):
    # alpha * scale rounded once to float32, as the interpreter's float32 array * Python float
    neg = tl_expm1_f32(x * np.float32(input_scale)) * np.float32(np.float64(alpha) * np.float64(scale))
    return x * np.float32(scale) if x > _ZERO else neg


__all__ = [name for name in dir() if name.startswith("tl_")]
