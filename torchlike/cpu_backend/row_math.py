"""Row reductions for the fused reduction kernels (``row_codegen``): ``tl_rsum_<f>``,
``tl_rmax_<f>`` and ``tl_rmin_<f>`` over ``a[start:start + n]`` of a 1-D array, for float32
and float64 (float16 is reduced from a float32 buffer, as PyTorch accumulates it in float32).

The kernels compile with ``fastmath=False``, where LLVM keeps ``s += a[i]`` in source order
and will not vectorize it; Numba's SLP vectorizer does not vectorize hand-written strided
partial sums either (measured: scalar ``vaddss`` only).  So:

* sums: only the helper's own additions carry ``reassoc`` (``tl_radd``: the flag on that one
  instruction, kept wherever it is inlined; nothing else of the kernel is reassociated): the loop
  vectorizes into 16-lane partial sums (x LLVM's unroll).  The order is fixed by the compiled
  code, so a kernel gives the same sum on every call.  Each block of 4096 elements is summed so
  and its total added to a float64 running sum: the error grows with the block, not the row
  (PyTorch's cascade sum is as accurate).  Each block is a view indexed from 0 by a loop
  from 0: indexed from a block offset instead (``v[i]``, ``i`` in ``range(c, c + m)``), Numba's
  negative-index wraparound stays in the loop and it does not vectorize (measured 15x slower).
* max/min: on integer keys (a float's bits, negatives' magnitude bits flipped, order the
  floats' order), whose max and min vectorize without any float flag.  A NaN key lies beyond
  the infinities' (above +inf's for a positive NaN, below -inf's for a negative one), so one
  pass finds both the extreme and whether a NaN was there: any NaN makes the result NaN, as
  PyTorch's ``amax``/``amin``.  ``-0.0`` sorts below ``0.0``.

The sum, max and min helpers are inlined into the kernel: a call per row costs more than the
reduction of a short row (softmax over rows of 64 ran ~20% faster).  LLVM inlines them
(``forceinline``, as ``math_f32._njit``): compiled once per process, not copied into every
kernel's Numba IR and typed again there (float32 reduction tests compiled ~9% faster).
"""
import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["tl_radd_f32", "tl_radd_f64", "tl_rsum_f32", "tl_rsum_f64", "tl_rmax_f32", "tl_rmax_f64",
           "tl_rshift_f32", "tl_rshift_f64", "tl_rmin_f32", "tl_rmin_f64", "tl_rprod_f32",
           "tl_rprod_f64", "tl_rfind"]

_BLOCK = SUM_BLOCK = 4096


def _radd(typingctx, s, v):
    if not (s == v) or s not in (types.float32, types.float64):
        return None

    def codegen(context, builder, sig, args):
        return builder.fadd(args[0], args[1], flags=("reassoc",))
    return s(s, s), codegen


tl_radd_f32 = tl_radd_f64 = intrinsic(_radd)
tl_radd_f32.__doc__ = """``s + v`` carrying LLVM's ``reassoc`` flag: a loop accumulating with it
vectorizes into partial sums, as tl_rsum's (a row kernel sums a buffer in the loop that fills
it: one pass over the row less).  Only this addition is reassociated."""


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rsum_f32(a, start, n):
    """sum(a[start:start + n]) in float32 (module docstring)."""
    total = 0.0
    for c in range(0, n, _BLOCK):
        m = min(_BLOCK, n - c)
        v = a[start + c:start + c + m]  # a view from 0: see the module docstring
        s = np.float32(0.0)
        for i in range(m):
            s = tl_radd_f32(s, v[i])
        total += s
    return np.float32(total)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rsum_f64(a, start, n):
    """sum(a[start:start + n]) in float64 (module docstring)."""
    total = 0.0
    for c in range(0, n, _BLOCK):
        m = min(_BLOCK, n - c)
        v = a[start + c:start + c + m]  # a view from 0: see the module docstring
        s = 0.0
        for i in range(m):
            s = tl_radd_f64(s, v[i])
        total += s
    return total


# keys: b ^ ((b >> 31) & 0x7FFFFFFF); +inf's key, -inf's key
_F32_HI, _F32_LO = np.int32(0x7F800000), np.int32(-2139095041)
_F64_HI, _F64_LO = np.int64(0x7FF0000000000000), np.int64(-9218868437227405313)
_I32_MIN, _I32_MAX = np.int32(-2147483648), np.int32(2147483647)
_I64_MIN, _I64_MAX = np.int64(-9223372036854775808), np.int64(9223372036854775807)


def _flip(builder, b):
    """b ^ ((b >> (w - 1)) & (2**(w - 1) - 1)): a negative's magnitude bits flipped (its own
    inverse)."""
    w = b.type.width
    m = builder.ashr(b, ir.Constant(b.type, w - 1))
    return builder.xor(b, builder.and_(m, ir.Constant(b.type, (1 << (w - 1)) - 1)))


@intrinsic
def _key(typingctx, x):
    """The float's order key: its bits as an integer of its width with a negative's magnitude
    bits flipped, so keys order as the floats do (module docstring).  Taken per element from
    a bitcast, not from ``row.view(np.int32)``: Numba's array .view() is a call with checks,
    per row (a 64-element row's max took 3x longer)."""
    if x not in (types.float32, types.float64):
        return None
    out = types.int32 if x == types.float32 else types.int64

    def codegen(context, builder, sig, args):
        return _flip(builder, builder.bitcast(args[0], ir.IntType(out.bitwidth)))
    return out(x), codegen


@intrinsic
def _unkey(typingctx, k):
    """The float whose key is ``k``."""
    if k not in (types.int32, types.int64):
        return None
    out = types.float32 if k == types.int32 else types.float64

    def codegen(context, builder, sig, args):
        ty = ir.FloatType() if out == types.float32 else ir.DoubleType()
        return builder.bitcast(_flip(builder, args[0]), ty)
    return out(k), codegen


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def _keys(a, start, n, hi, lo):
    """(largest key, smallest key) of a row, from the keys ``hi`` and ``lo`` up."""
    v = a[start:start + n]
    for i in range(n):
        k = _key(v[i])
        hi = k if k > hi else hi
        lo = k if k < lo else lo
    return hi, lo


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def _top(a, start, n, hi):
    """The float of the largest key of a row, from the key ``hi`` up."""
    v = a[start:start + n]
    for i in range(n):
        k = _key(v[i])
        hi = k if k > hi else hi
    return _unkey(hi)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rmax_f32(a, start, n):
    """max(a[start:start + n]); NaN if any element is NaN; -inf when n == 0."""
    if n == 0:
        return np.float32(-np.inf)
    hi, lo = _keys(a, start, n, _I32_MIN, _I32_MAX)
    if hi > _F32_HI or lo < _F32_LO:
        return np.float32(np.nan)
    return _unkey(hi)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rmin_f32(a, start, n):
    """min(a[start:start + n]); NaN if any element is NaN; inf when n == 0."""
    if n == 0:
        return np.float32(np.inf)
    hi, lo = _keys(a, start, n, _I32_MIN, _I32_MAX)
    if hi > _F32_HI or lo < _F32_LO:
        return np.float32(np.nan)
    return _unkey(lo)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rmax_f64(a, start, n):
    """max(a[start:start + n]); NaN if any element is NaN; -inf when n == 0."""
    if n == 0:
        return -np.inf
    hi, lo = _keys(a, start, n, _I64_MIN, _I64_MAX)
    if hi > _F64_HI or lo < _F64_LO:
        return np.nan
    return _unkey(hi)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rmin_f64(a, start, n):
    """min(a[start:start + n]); NaN if any element is NaN; inf when n == 0."""
    if n == 0:
        return np.inf
    hi, lo = _keys(a, start, n, _I64_MIN, _I64_MAX)
    if hi > _F64_HI or lo < _F64_LO:
        return np.nan
    return _unkey(lo)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rshift_f32(a, start, n):
    """The shift of a softmax row: its max where it has no NaN (-inf when n == 0); with a NaN,
    some value, possibly NaN (exp(NaN - shift) makes the row's sum NaN either way)."""
    return _top(a, start, n, _F32_LO)


@numba.njit(forceinline=True, error_model="numpy", nogil=True)
def tl_rshift_f64(a, start, n):
    """tl_rshift_f32 for float64."""
    return _top(a, start, n, _F64_LO)


@numba.njit(cache=True, fastmath={"reassoc"}, error_model="numpy", nogil=True)
def tl_rprod_f32(a, start, n):
    """prod(a[start:start + n]) in float32 (reassociated like ``tl_rsum_f32``)."""
    v = a[start:start + n]
    s = np.float32(1.0)
    for i in range(n):
        s *= v[i]
    return s


@numba.njit(cache=True, fastmath={"reassoc"}, error_model="numpy", nogil=True)
def tl_rprod_f64(a, start, n):
    """prod(a[start:start + n]) in float64."""
    v = a[start:start + n]
    s = 1.0
    for i in range(n):
        s *= v[i]
    return s


@numba.njit(cache=True, error_model="numpy", nogil=True)
def tl_rfind(a, start, n, v):
    """The first ``i`` with ``a[start + i] == v`` (the first NaN when ``v`` is NaN): the index
    PyTorch's ``max.dim``/``argmax`` return, once the extreme ``v`` is known."""
    w = a[start:start + n]
    if v != v:
        for i in range(n):
            if w[i] != w[i]:
                return i
    for i in range(n):
        if w[i] == v:
            return i
    return 0
