"""Render an analysed fusion group into the Python source of ONE Numba kernel.

The walk over the ops is ``fuser.render.Renderer``'s, shared with the CUDA renderer; this
module gives it Numba's spellings (tinygrad's renderers are the model): ``CAST`` spells a
conversion per dtype, ``literal`` spells a Python constant exactly, and each op's scalar
expression comes from its registry entry (``op.templates["numba"]``).  The kernel makes one pass
over the output elements with no temporary arrays.  Two loop skeletons exist:

* flat: every array read has the iteration shape and is C-contiguous, so all arrays are
  reshaped (a view) to 1-D and one loop runs over them -- LLVM vectorizes it::

      @numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
      def tl_fused_3f2a...(in0, in1, out0):
          n = out0.size
          f0 = in0.reshape(n)
          f1 = in1.reshape(n)
          o0 = out0.reshape(n)
          for i in range(n):
              a0 = f0[i]
              a1 = f1[i]
              v0 = np.float32(a0 * a1)
              v1 = np.float32(np.tanh(v0))
              o0[i] = v1

* strided: one loop per output dim; each array is indexed with its own broadcast multi-index
  (a size-1 dim reads index 0, a lower rank drops leading indices, a chunk adds ``k * c``), so
  transposed, sliced and stride-0 inputs are read in place.

At or above ``PARALLEL_THRESHOLD`` elements the outer loop is a ``prange`` (``parallel=True``);
the size class is part of the kernel key.  float16 arrays are passed viewed as uint16 and
converted by the ``_f16_*`` helpers (Numba has no float16 arithmetic); values computed in
float32 are rounded to float16 after each op, as the interpreter does.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

from ..fuser.backend import (
    GroupSpec,
    KernelInfo,
    KernelSource,
    OpInfo,
    Unsupported,
    ValueInfo,
    ValueKind,
)
from ..fuser.kernel_spec import kernel_outputs
from ..fuser.render import Renderer, uses_err
from ..ir.graph import Value
from .fast_paths import BLOCK, fast_body

VERSION = 4
PARALLEL_THRESHOLD = 1 << 16
KERNEL_DECORATOR = 'numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True{})'

# A value of dtype D is converted with CAST[D] -- but a float becomes an integer through
# scalar_math's tl_float_to_<D> (ops/casting.py: np.int32(x) is LLVM poison when x does not
# fit); float16 values live in float32 variables.
CAST = {"float32": "np.float32({})", "float64": "np.float64({})", "float16": "_f16_round({})",
        "bool": "bool({})", **{d: f"np.{d}({{}})" for d in
                               ("uint8", "int8", "int16", "int32", "int64")}}
CARRIER = {"float16": "float32"}  # what a variable of this dtype holds in the kernel
_PYTHON_DTYPE = {bool: "bool", int: "int64", float: "float64"}

F16_HELPERS = '''
@numba.njit(cache=True)
def _f16_from_bits(h):
    h = np.int64(h)
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0:
        v = m * 5.960464477539063e-08
    elif e == 31:
        v = np.inf if m == 0 else np.nan
    else:
        v = (1024 + m) * 2.0 ** (e - 25)
    return np.float32(-v if h & 0x8000 else v)


@numba.njit(cache=True)
def _f16_bits(x):
    # float -> float16 bits, rounding half to even.  A double is rounded to float32 first, as
    # PyTorch's c10::Half(double) does (ops/casting.py); float32 -> float64 is exact.
    x = np.float64(np.float32(x))
    if x != x:
        return np.uint16(0x7E00)
    sign = 0x8000 if (x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0)) else 0
    a = abs(x)
    if a >= 65520.0:
        return np.uint16(sign | 0x7C00)
    if a < 6.103515625e-05:
        return np.uint16(sign | np.int64(np.rint(a * 16777216.0)))
    m, e = math.frexp(a)
    r = np.int64(np.rint(m * 2048.0))
    if r == 2048:
        r = 1024
        e += 1
    return np.uint16(sign | ((e + 14) << 10) | (r - 1024))


@numba.njit(cache=True)
def _f16_round(x):
    return _f16_from_bits(_f16_bits(x))
'''

# An expression of float variables with + - * / only keeps its float type in Numba: no cast
# needed (fewer casts to type is most of the compile time of long chains).
_SIMPLE_ARITH = re.compile(r"^[\w\s().+\-*/]*$")
_CALL = re.compile(r"\w\s*\(|\*\*|(?<![\w.])\d")  # calls, powers, bare numbers


def literal(v) -> str:
    """Python source for a constant, exact: floats via repr, inf/nan spelled through numpy."""
    if isinstance(v, float):
        if math.isnan(v):
            return "np.nan"
        if math.isinf(v):
            return "np.inf" if v > 0 else "(-np.inf)"
        return repr(v)
    if v is None or isinstance(v, (bool, int, str)):
        return repr(v)
    raise Unsupported(f"unsupported constant of type {type(v).__name__}")


def carrier(dtype: str) -> str:
    return CARRIER.get(dtype, dtype)


def size_class(spec: GroupSpec) -> str:
    n = math.prod(spec.iter_shape)
    return "parallel" if spec.iter_shape and n >= PARALLEL_THRESHOLD else "serial"


def is_flat(spec: GroupSpec) -> bool:
    """Every array read and written has the iteration shape and is C-contiguous."""
    if not spec.used_arrays:
        return False
    for v in spec.used_arrays:
        info = spec.values[v]
        s = spec.signature[info.input]
        if info.chunk is not None or s.layout != "C" or info.shape != spec.iter_shape:
            return False
    return all(spec.values[o].shape == spec.iter_shape for o in kernel_outputs(spec))


class _Renderer(Renderer):
    """Numba's spellings on the shared walk (``fuser.render.Renderer``): literals are Python
    literals converted by ``CAST`` (and hoisted), float16 lives in float32 variables and travels
    as uint16 bits."""

    language = "numba"
    NONE = "None"
    TYPE = {d: carrier(d) for d in CAST}
    CAST = CAST
    LOAD = {"float16": "_f16_from_bits({})"}
    STORE = {"float16": "_f16_bits({})"}
    HALF = frozenset({"float16"})

    def __init__(self, spec: GroupSpec):
        super().__init__(spec)
        self.rank = len(spec.iter_shape)
        self.flat = is_flat(spec)
        self.parallel = size_class(spec) == "parallel"
        self.uses_f16 = bool(self.half_dtypes())
        self.consts: Dict[str, str] = {}  # hoisted typed literal -> its name

    def hoist(self, expr: str) -> str:
        """A typed literal (``np.float32(2.0)``) is computed once, before the loops (this keeps
        long serial kernels quick to compile).  Not in parallel kernels: Numba passes what a
        ``prange`` body captures as run-time arguments, so a hoisted literal stops being a
        constant LLVM can fold (pow's exponent tests stayed in the loop: 20.4 ms against
        3.2 ms for gelu_tanh at 2^22)."""
        if self.parallel:
            return expr
        name = self.consts.get(expr)
        if name is None:
            name = self.consts[expr] = f"k{len(self.consts)}"
        return name

    # -- the shared walk's hooks ----------------------------------------------------------------
    def literal(self, value, dtype: str) -> str:
        return self.convert(literal(value), _PYTHON_DTYPE.get(type(value)), dtype)

    def declare(self, name: str, dtype: str, value: str) -> str:
        return f"{name} = {value}"

    def assign(self, target: str, value: str) -> str:
        return f"{target} = {value}"

    def scalar_name(self, index: int) -> str:
        return f"in{index}"

    def same_type(self, have: str, want: str) -> bool:
        return super().same_type(have, want) and want != "float16"  # float16 always rounds

    def constant(self, info: ValueInfo, want: str) -> str:
        """A Python literal converted to ``want`` if its carrier differs (then hoisted)."""
        expr = self.cast(literal(info.const), info.carrier, want)
        return self.hoist(expr) if "(" in expr else expr

    def attribute(self, o: OpInfo, name: str, r) -> str:
        """Attributes are literals (or scalar inputs); a numeric one is typed in the compute
        dtype, as a Python scalar meeting an array of that dtype is in the interpreter; others
        (bool, str, a float meeting ints) stay Python values."""
        info, compute = self.spec.info(r), o.compute
        if (info.carrier == "int64" and compute != "bool") or \
                (info.carrier == "float64" and compute.startswith("float")):
            return self.operand(r, compute)
        return literal(info.const) if info.kind == ValueKind.CONST else self.variable(r, info)

    def simple(self, o: OpInfo, text: str) -> bool:
        """True if ``text`` needs no cast to ``o.out_dtype`` (see ``_SIMPLE_ARITH``)."""
        if o.out_dtype != o.compute or o.compute not in ("float32", "float64"):
            return False
        if any(d != o.compute for d in o.operand_dtypes if d is not None):
            return False
        return bool(_SIMPLE_ARITH.match(text)) and not _CALL.search(text)

    def result(self, o: OpInfo, expr: str) -> str:
        return expr if self.simple(o, expr) else super().result(o, expr)

    # -- the kernel's loops ---------------------------------------------------------------------
    def index(self, info: ValueInfo, read: bool = True) -> str:
        """``[i0, 0, i2]``: the broadcast multi-index of a value; a chunk read adds its offset
        along the chunk dim (``read=False``: the value's own output array, no offset)."""
        if self.flat:
            return "[i]"
        r = len(info.shape)
        if r == 0:
            return "[()]"
        parts = []
        for j, one in enumerate(info.mask):
            d = self.rank - r + j
            idx = "0" if one else f"i{d}"
            if read and info.chunk is not None and info.chunk[2] == j and info.chunk[0]:
                idx = f"{idx} + {info.chunk[0]} * c{info.input}"
            parts.append(idx)
        return "[" + ", ".join(parts) + "]"

    def read_at(self, k: int, v: Value) -> str:
        info = self.spec.values[v]
        return f"{'f' if self.flat else 'in'}{info.input}{self.index(info)}"

    def write_at(self, j: int, v: Value) -> str:
        return f"o{j}[i]" if self.flat else f"out{j}{self.index(self.spec.values[v], read=False)}"

    def loops(self, body: List[str], fast: Optional[List[str]] = None) -> List[str]:
        """The loop nest around ``body``.  With ``fast`` (``fast_paths.fast_body``), the
        innermost loop runs ``fast`` over a block (a flat or 1-D loop) or a row and, where one
        of its guards fired, ``body`` again over the same elements."""
        spec, rng = self.spec, "prange" if self.parallel else "range"
        if fast is not None and self.rank == 0:
            fast = None  # one element: nothing to save
        if self.flat:
            first = spec.values[spec.used_arrays[0]].input
            head = [f"n = in{first}.size"]
            head += [f"f{i} = in{i}.reshape(n)" for i in
                     sorted({spec.values[v].input for v in spec.used_arrays})]
            head += [f"o{j} = out{j}.reshape(n)" for j in range(len(self.outputs))]
            if fast is not None:
                return head + _blocked("i", "n", rng, body, fast)
            return head + [f"for i in {rng}(n):"] + ["    " + s for s in body]
        head = []
        for i in sorted({spec.values[v].input for v in spec.used_arrays
                         if spec.values[v].chunk is not None}):
            info = next(spec.values[v] for v in spec.used_arrays if spec.values[v].input == i
                        and spec.values[v].chunk is not None)
            head.append(f"c{i} = in{i}.shape[{info.chunk[2]}] // {info.chunk[1]}")
        for d in range(self.rank):
            head.append(f"n{d} = {self.bound(d)}")
        if self.rank == 0:
            return head + body
        if self.rank == 1 and fast is not None:
            return head + _blocked("i0", "n0", rng, body, fast)
        last = self.rank - 1
        inner = [f"for i{last} in range(n{last}):"] + ["    " + s for s in body]
        if fast is not None:
            inner = (["bad = False", f"for i{last} in range(n{last}):"] + ["    " + s for s in fast]
                     + ["if bad:"] + ["    " + s for s in inner])
        if not self.parallel or self.rank == 1:
            out, indent = [], ""
            for d in range(last):
                kind = rng if d == 0 else "range"
                out.append(f"{indent}for i{d} in {kind}(n{d}):")
                indent += "    "
            if self.rank == 1:  # (no fast form here: handled above)
                return head + [f"for i0 in {rng}(n0):"] + ["    " + s for s in body]
            return head + out + [indent + s for s in inner]
        # parallel: one prange over all dims but the last, unravelled per row
        outer = " * ".join(f"n{d}" for d in range(last))
        out = [f"for t in prange({outer}):"]
        for d in range(last):  # (Numba forbids reassigning anything derived from t)
            inner_n = " * ".join(f"n{e}" for e in range(d + 1, last))
            out.append(f"    i{d} = (t // ({inner_n})) % n{d}" if inner_n else f"    i{d} = t % n{d}")
        return head + out + ["    " + s for s in inner]

    def bound(self, d: int) -> str:
        """The iteration size along dim ``d``, read from an array that is not size 1 there."""
        for v in self.spec.used_arrays:
            info = self.spec.values[v]
            j = d - (self.rank - len(info.shape))
            if j >= 0 and not info.mask[j]:
                size = f"in{info.input}.shape[{j}]"
                if info.chunk is not None and info.chunk[2] == j:
                    size = f"c{info.input}"
                return size
        return "1"


def _blocked(i: str, n: str, rng: str, body: List[str], fast: List[str]) -> List[str]:
    """A 1-D loop over ``n`` elements as blocks of ``BLOCK``: ``fast`` over each, ``body``
    again where a guard fired (``fast_paths``)."""
    return [f"for b in {rng}(({n} + {BLOCK - 1}) // {BLOCK}):",
            f"    lo = b * {BLOCK}",
            f"    hi = min(lo + {BLOCK}, {n})",
            "    bad = False",
            f"    for {i} in range(lo, hi):"] + ["        " + s for s in fast] + [
            "    if bad:",
            f"        for {i} in range(lo, hi):"] + ["            " + s for s in body]


def vector_bits() -> int:
    """The preferred vector width in bits of the kernel loops (``TORCHLIKE_CPU_VECTOR_BITS``,
    default 512; see vector_width.py)."""
    text = os.environ.get("TORCHLIKE_CPU_VECTOR_BITS", "512").strip() or "512"
    try:
        bits = int(text)
    except ValueError:
        raise ValueError(f"TORCHLIKE_CPU_VECTOR_BITS={text!r}: expected 0, 128, 256 or 512") from None
    if bits not in (0, 128, 256, 512):
        raise ValueError(f"TORCHLIKE_CPU_VECTOR_BITS={text!r}: expected 0, 128, 256 or 512")
    return bits


def kernel_name(key_hash: str) -> str:
    return f"tl_fused_{key_hash[:16]}"


@dataclass(frozen=True)
class ScalarArg:
    """A Python-scalar kernel argument: ``bool``, ``int64`` or ``float64``."""

    dtype: str


@dataclass(frozen=True)
class ArrayArg:
    """An array kernel argument as Numba types it (float16 arrays travel as ``uint16``)."""

    dtype: str
    rank: int
    layout: str          # "C", "F" or "A"
    readonly: bool


NumbaArg = Union[ScalarArg, ArrayArg]


@dataclass(frozen=True)
class NumbaKernelInfo(KernelInfo):
    """What ``compiler.compile_kernel`` and the launchers need: the key ``hash`` naming the
    module on disk (set by ``CpuBackend.generate``), the output dtypes, whether the loop is
    ``flat`` and ``parallel``, and the exact Numba argument types to compile for."""

    hash: str = ""
    outputs: Tuple[str, ...] = ()
    flat: bool = False
    parallel: bool = False
    arg_types: Tuple[NumbaArg, ...] = ()


def render(spec: GroupSpec, key_hash: str, header: str) -> KernelSource:
    """The kernel module's source for ``spec``; ``header`` is its first line (cache check)."""
    r = _Renderer(spec)
    # tl_wide_vectors(): the loop's function prefers the CPU's full SIMD width (vector_width.py)
    body = ["tl_wide_vectors()"] + r.body(r.read_at, r.write_at)
    # guarded fast forms only in parallel kernels: they double the loop body, and with it the
    # compile time (a 7-op trig chain at 512x512: 12.6 s -> 37 s), which only large inputs repay
    loop = r.loops(body, fast_body(body) if r.parallel else None)
    loop = [f"{name} = {expr}" for expr, name in r.consts.items()] + loop
    err = uses_err(loop)
    params = [f"in{i}" for i in range(len(spec.signature))]
    params += [f"out{j}" for j in range(len(r.outputs))] + (["err"] if err else [])
    name = kernel_name(key_hash)
    ops = ", ".join(o.op.name for o in spec.ops)
    lines = [header,
             f"# fused: {ops}",
             "import math",
             "import numba",
             "import numpy as np",
             "from numba import prange",
             "from torchlike.cpu_backend.scalar_math import *  # noqa: F401,F403 (tl_* helpers)",
             ""]
    if r.uses_f16:
        lines.append(F16_HELPERS)
    lines += ["",
              "@" + KERNEL_DECORATOR.format(", parallel=True" if r.parallel else ""),
              f"def {name}({', '.join(params)}):"]
    lines += ["    " + s for s in loop] if loop else ["    pass"]
    source = "\n".join(lines) + "\n"
    info = NumbaKernelInfo(uses_err=err, hash=key_hash,
                           outputs=tuple(spec.values[v].dtype for v in r.outputs), flat=r.flat,
                           parallel=r.parallel, arg_types=arg_types(spec, r.outputs))
    return KernelSource(name, source, (), info)


def arg_types(spec: GroupSpec, outs: List[Value]) -> Tuple[NumbaArg, ...]:
    """The kernel's Numba argument types: the group's inputs, then its outputs."""
    types: List[NumbaArg] = []
    for s in spec.signature:
        if isinstance(s, type):
            types.append(ScalarArg({bool: "bool", int: "int64", float: "float64"}[s]))
        else:
            dt = "uint16" if s.dtype == "float16" else s.dtype
            types.append(ArrayArg(dt, s.rank, s.layout, not s.writeable))
    for v in outs:
        info = spec.values[v]
        dt = "uint16" if info.dtype == "float16" else info.dtype
        types.append(ArrayArg(dt, len(info.shape), "C", False))
    return tuple(types)
