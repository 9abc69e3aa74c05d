"""float16 in the CPU kernels: a float16 array is read and written through its bits (a uint16
view) and every float16 value lives in a float32 variable, rounded to float16 where PyTorch
rounds (``codegen.CAST``).  ``_f16_from_bits(h)`` is the float32 of the bits ``h``,
``_f16_bits(x)`` the bits of ``x`` rounded to float16, ``_f16_round(x)`` both.

Written in LLVM IR so that a kernel's loop over float16 arrays vectorizes: where the target has
F16C, LLVM's ``half`` conversions (one ``vcvtph2ps`` / ``vcvtps2ph`` per vector, what PyTorch's
CPU kernels use); elsewhere branch-free integer and float arithmetic on the bits (F. Giesen's
``half_to_float`` and ``float_to_half_fast3_rtne``, public domain), the same numbers but for a
NaN's payload (there 0x200, with its sign).  The conversions they replace branched on the
exponent and called ``frexp`` per element: a float16 add of 2^22 elements took 119 ms where
PyTorch takes under 1 ms.  Rounding is to nearest, ties to even, as ``c10::Half``: overflow
gives inf, subnormals are exact, a float64 is rounded to float32 first, as PyTorch's
``c10::Half(double)`` (ops/casting.py).  Checked against numpy and PyTorch over every float16
and a dense float32 sample (tests/test_float16.py; every float32 once, by hand).

The helpers compile once per process and LLVM inlines them into the kernels that use them
(``math_f32._njit``): they were once pasted into every float16 kernel's module, which compiled
its own copies (a third of a small float16 row kernel's compile time).
"""
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .math_f32 import _njit, _target_has

__all__ = ["_f16_from_bits", "_f16_bits", "_f16_round", "tl_div_trunc_half",
           "tl_floor_divide_half", "HAS_F16C"]

HAS_F16C = _target_has("f16c")
_I16, _I32, _F32 = ir.IntType(16), ir.IntType(32), ir.FloatType()


def _c(v: int) -> ir.Constant:
    return ir.Constant(_I32, v & 0xFFFFFFFF)


def _to_float(builder, h16, f16c: bool):
    """The float32 of the float16 bits ``h16`` (an i16)."""
    if f16c:
        return builder.fpext(builder.bitcast(h16, ir.HalfType()), _F32)
    x = builder.zext(h16, _I32)
    # exponent and mantissa moved into place and scaled by 2**112 (exact, subnormals too);
    # inf and NaN (at or above 2**16 so scaled) get the all-ones exponent; then the sign
    em = builder.and_(x, _c(0x7FFF))
    f = builder.fmul(builder.bitcast(builder.shl(em, _c(13)), _F32),
                     ir.Constant(_F32, 2.0 ** 112))
    bits = builder.bitcast(f, _I32)
    big = builder.fcmp_ordered(">=", f, ir.Constant(_F32, 65536.0))
    bits = builder.select(big, builder.or_(bits, _c(0x7F800000)), bits)
    sign = builder.shl(builder.and_(x, _c(0x8000)), _c(16))
    return builder.bitcast(builder.or_(bits, sign), _F32)


def _to_half(builder, f, f16c: bool):
    """The float16 bits (an i16) of the float32 ``f``, rounded to nearest even."""
    if f16c:
        return builder.bitcast(builder.fptrunc(f, ir.HalfType()), _I16)
    u = builder.bitcast(f, _I32)
    sign = builder.and_(u, _c(0x80000000))
    a = builder.xor(u, sign)  # |f|'s bits: every compare below is of non-negative ints
    # |f| >= 65536 (past the rounding range), inf or NaN
    nan = builder.icmp_unsigned(">", a, _c(0x7F800000))
    special = builder.select(nan, _c(0x7E00), _c(0x7C00))
    # |f| < 2**-14: a float16 subnormal or zero; adding 0.5 rounds the 10 bits into place
    s = builder.fadd(builder.bitcast(a, _F32), ir.Constant(_F32, 0.5))
    sub = builder.sub(builder.bitcast(s, _I32), _c(0x3F000000))
    # normal: rebias the exponent, round half to even on the 13 bits dropped
    odd = builder.and_(builder.lshr(a, _c(13)), _c(1))
    normal = builder.lshr(builder.add(builder.add(a, _c(((15 - 127) << 23) + 0xFFF)), odd),
                          _c(13))
    res = builder.select(builder.icmp_unsigned(">=", a, _c(0x47800000)), special,
                         builder.select(builder.icmp_unsigned("<", a, _c(113 << 23)),
                                        sub, normal))
    return builder.trunc(builder.or_(res, builder.lshr(sign, _c(16))), _I16)


def _from_bits_typer(f16c: bool):
    def typer(typingctx, h):
        if not isinstance(h, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            x = args[0]
            w = x.type.width
            x = builder.trunc(x, _I16) if w > 16 else builder.zext(x, _I16) if w < 16 else x
            return _to_float(builder, x, f16c)
        return types.float32(h), codegen
    return typer


def _of_float32(result, build):
    """An intrinsic's typer taking one float32 and returning ``result`` built by
    ``build(builder, f)`` (``_to_half``, or the round trip through it)."""
    def typer(typingctx, f):
        if f != types.float32:
            return None

        def codegen(context, builder, sig, args):
            return build(builder, args[0])
        return result(f), codegen
    return typer


def _bits_typer(f16c: bool):
    return _of_float32(types.uint16, lambda b, f: _to_half(b, f, f16c))


def _round_typer(f16c: bool):
    return _of_float32(types.float32, lambda b, f: _to_float(b, _to_half(b, f, f16c), f16c))


# the target's conversions, and the portable ones (tests compare the two)
_f16_from_bits = intrinsic(_from_bits_typer(HAS_F16C))
_f16_bits_f32 = intrinsic(_bits_typer(HAS_F16C))
_f16_round_f32 = intrinsic(_round_typer(HAS_F16C))
_f16_from_bits_portable = intrinsic(_from_bits_typer(False))
_f16_bits_portable = intrinsic(_bits_typer(False))
_f16_from_bits.__doc__ = """The float32 whose float16 bits are ``h`` (an integer: its low 16
bits)."""


@_njit
def _f16_bits(x):
    """The float16 bits of ``x`` (any real): a float64 or an integer rounded to float32 first,
    as PyTorch (module docstring)."""
    return _f16_bits_f32(np.float32(x))


@_njit
def _f16_round(x):
    """``x`` rounded to float16, as a float32."""
    return _f16_round_f32(np.float32(x))


# -- __truncdfhf2 for the JIT ---------------------------------------------------------------------
# F16C has no float64 -> float16 instruction: where LLVM folds a kernel's float64 -> float32 ->
# float16 conversions into one float64 -> float16 fptrunc it calls compiler-rt's __truncdfhf2,
# which a Numba process does not have: the kernel jumped to address 0 (a float64 tensor's
# .half() under asinh, found by tests/test_fuzz_programs.py).  This one rounds through float32,
# as the kernel's source does and PyTorch's c10::Half(double): the fold changes nothing.  It
# returns the half in xmm0's low 16 bits (LLVM's x86-64 ABI for half): a float32 whose bits are
# the half's, zero-extended.

@intrinsic
def _bits_as_f32(typingctx, h):
    if not isinstance(h, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.zext(args[0], _I32), _F32)
    return types.float32(h), codegen


def _install_truncdfhf2() -> None:
    from llvmlite import binding
    from numba import cfunc
    if binding.address_of_symbol("__truncdfhf2"):
        return

    @cfunc(types.float32(types.float64), nopython=True, cache=True)
    def truncdfhf2(x):
        return _bits_as_f32(_f16_bits_portable(np.float32(x)))
    binding.add_symbol("__truncdfhf2", truncdfhf2.address)
    _KEEP.append(truncdfhf2)


_KEEP: list = []  # the cfunc's machine code lives as long as this module
if HAS_F16C:
    _install_truncdfhf2()


# -- division in float16 arithmetic -------------------------------------------------------------
# PyTorch's float16 trunc and floor division round every step to float16 (ops/elementwise.py's
# _half_steps): the quotient before trunc, and each step of c10::div_floor_floating.

@_njit
def tl_div_trunc_half(a, b):
    return np.trunc(_f16_round(a / b))


@_njit
def tl_floor_divide_half(a, b):
    if b == 0:
        return a / b
    m = np.fmod(a, b)  # exact
    d = _f16_round(_f16_round(a - m) / b)
    if m != 0 and (b < 0) != (m < 0):
        d = _f16_round(d - np.float32(1))
    if d != 0:
        f = np.floor(d)
        if d - f > 0.5:
            f += np.float32(1)
        return f
    return np.copysign(np.float32(0), a / b)
