"""Dtype conversions, defined once for every backend: PyTorch's results on x86-64 CPUs.

Every conversion torchlike computes -- the interpreter casting an operand to an op's compute
dtype (``elementwise_base._cast``), ``aten::to`` / ``aten::type_as``, a Numba kernel
(``cpu_backend.scalar_math.tl_float_to_*``), a CUDA kernel (``cuda_backend/prelude.cuh``,
emulated or on a GPU) and a literal rendered into one -- follows this module.

C and C++ leave a float -> integer conversion undefined when the truncated value does not fit
(LLVM's ``fptosi``/``fptoui`` give poison: Numba kernels returned 0 for ``uint8(-1.0)``; CUDA's
``cvt`` saturates, x86's ``cvtt`` returns the "integer indefinite" value), so each backend
spells the semantics out instead.  They are what torch 2.13 computes on x86-64 for
``x.to(dtype)`` -- observed identical on contiguous tensors of 256 elements (the vectorized
path), on 0-d tensors and on 3-element tensors, under ``ATEN_CPU_CAPABILITY`` default, avx2 and
avx512 -- because c10's ``static_cast`` compiles to ``cvttss2si``/``cvttsd2si`` and c10 routes
``uint8`` through ``int64`` (``static_cast_with_inter_type<uint8_t, ...>``):

=====================  =======================================================================
to                     from a float (float16 / bfloat16 / float32 / float64; halves widen
                       exactly to float32 first)
=====================  =======================================================================
``bool``               ``x != 0``: NaN -> True, -0.0 -> False, denormals -> True
``int64``              ``trunc(x)`` if ``-2**63 <= x < 2**63``, else ``INT64_MIN`` (NaN, +-inf
                       and every out-of-range value: x86 ``cvttsd2si``'s integer indefinite)
``int32``              ``trunc(x)`` if ``-2**31 <= x < 2**31``, else ``INT32_MIN`` (x between
                       -2**31 - 1 and -2**31 truncates to INT32_MIN either way)
``int16``, ``int8``    the ``int32`` conversion, then wrapped (low bits): 70000.0 -> 4464,
                       -129.0 -> 127, 1e10 -> 0, NaN -> 0
``uint8``              the ``int64`` conversion, then wrapped: -1.0 -> 255, 300.0 -> 44,
                       -1.5 -> 255, 2**31 + 5.0 -> 5 (float64), 1e10 -> 0, NaN -> 0
=====================  =======================================================================

=====================  =======================================================================
to                     from an integer or bool
=====================  =======================================================================
an integer             two's complement wraparound (the low bits): int64 300 -> int8 44,
                       -1 -> uint8 255, int32 2**31 + 5 (from int64) -> -2147483643
``bool``               ``x != 0``
a float                round to nearest even (``int64`` -> ``float16`` is via ``float32``:
                       values from 65520 up are inf)
=====================  =======================================================================

=====================  =======================================================================
to                     from a float
=====================  =======================================================================
``float32``            round to nearest even; beyond float32's range +-inf
``float16``,           round to nearest even, *through float32* from float64 (torch's
``bfloat16``           ``c10::Half(double)`` converts to float first, so two roundings):
                       float64 1 + 2**-11 + 2**-40 -> float16 1.0 (one rounding gives
                       1.0009765625), 65519.9999999 -> inf (one rounding gives 65504)
``float64``            exact
=====================  =======================================================================

Where torch itself is deterministic this is its result; nothing here depends on the
instruction set, the compiler or the device.  (numpy on the same machine agrees except for
float64 -> uint8 beyond the int32 range, which it converts through int32.)
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from .dtypes import FLOAT_DTYPES, INT_DTYPES

__all__ = ["cast", "cast_value", "float_to_int", "FLOAT_TO_INT_VIA", "FLOAT_TO_INT_HELPER"]

# The integer type a float goes through on its way to each integer dtype (then wrapped).
FLOAT_TO_INT_VIA: Dict[str, str] = {"uint8": "int64", "int8": "int32", "int16": "int32",
                                    "int32": "int32", "int64": "int64"}
# A float x goes to the ``via`` type as trunc(x) if MIN <= x < -MIN (both bounds are exact in
# every float type), else as MIN.
# Both kernel languages define ``tl_float_to_<dtype>(x)`` for a float x (scalar_math.py and
# prelude.cuh): the conversion of this module's table.
FLOAT_TO_INT_HELPER = "tl_float_to_{}"


_SAME, _FLOAT_TO_INT, _THROUGH_FLOAT32, _NARROWING, _PLAIN = range(5)
_WIDTH = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def _kind(src: str, dst: str) -> int:
    if src == dst:
        return _SAME
    if src in FLOAT_DTYPES and dst in INT_DTYPES:
        return _FLOAT_TO_INT
    if src == "float64" and dst in ("float16", "bfloat16"):
        return _THROUGH_FLOAT32
    if dst in _WIDTH and _WIDTH[dst] < _WIDTH.get(src, 8):
        return _NARROWING  # may overflow to inf: defined, not worth a RuntimeWarning
    return _PLAIN


_KINDS: Dict[Tuple[Any, str], int] = {}


def float_to_int(xp, x, dtype: str):
    """Float array ``x`` converted to integer ``dtype`` (see the module docstring)."""
    via = FLOAT_TO_INT_VIA[dtype]
    low = np.iinfo(via).min
    wide = x.astype(np.float64)  # exact
    ok = (wide >= float(low)) & (wide < -float(low))  # False for NaN
    out = xp.where(ok, wide, 0.0).astype(via)
    out = xp.where(ok, out, low).astype(via, copy=False)
    return out if via == dtype else out.astype(dtype)


def cast(xp, v, dtype: str):
    """Array ``v`` as ``dtype`` (``v`` itself if it has that dtype already)."""
    key = (v.dtype, dtype)
    kind = _KINDS.get(key)
    if kind is None:
        kind = _KINDS[key] = _kind(str(v.dtype), dtype)
    if kind == _SAME:
        return v
    if kind == _FLOAT_TO_INT:
        return float_to_int(xp, v, dtype)
    if kind == _PLAIN:
        return v.astype(dtype)
    with np.errstate(over="ignore"):
        if kind == _THROUGH_FLOAT32:
            v = v.astype(np.float32)
        return v.astype(dtype)


def cast_value(value: Any, dtype: str):
    """A Python or numpy scalar converted to ``dtype``: a numpy scalar (Python ints wrap)."""
    return cast(np, np.asarray(value), dtype)[()]


def round_float(v: Any, dtype: str) -> float:
    """The number ``v`` rounded to float ``dtype``, as a Python float (a half type through
    float32, as c10 converts a double; numpy has no bfloat16: round to nearest even on the
    top 16 bits of the float32, NaN and inf kept)."""
    if dtype == "float64":
        return float(v)
    with np.errstate(over="ignore"):
        f = np.array(v, np.float32)
    if dtype == "float16":
        return float(f.astype(np.float16))
    if dtype == "bfloat16":
        bits = int(f.view(np.uint32))
        if (bits & 0x7F800000) != 0x7F800000:
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return float(np.array(bits, np.uint32).view(np.float32))
    return float(f)
