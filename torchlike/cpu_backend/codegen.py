"""Render an analysed fusion group into the Python source of ONE Numba kernel.

Small tables drive it (tinygrad's renderers are the model): ``CAST`` spells a conversion per
dtype, ``literal`` spells a Python constant exactly, and each op's scalar expression comes from
its registry entry (``op.templates["numba"]``).  The kernel makes one pass over the output
elements with no temporary arrays.  Two loop skeletons exist:

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
import re
from typing import Dict, List, Optional, Tuple

from ..fuser.backend import GroupSpec, KernelSource, OpInfo, Unsupported, ValueInfo
from ..fuser.kernel_spec import kernel_outputs
from ..ir.graph import Value

VERSION = 1
PARALLEL_THRESHOLD = 1 << 16
KERNEL_DECORATOR = 'numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True{})'

# A value of dtype D is converted with CAST[D]; float16 values live in float32 variables.
CAST = {"float32": "np.float32({})", "float64": "np.float64({})", "float16": "_f16_round({})",
        "bool": "bool({})", **{d: f"np.{d}({{}})" for d in
                               ("uint8", "int8", "int16", "int32", "int64")}}
CARRIER = {"float16": "float32"}  # what a variable of this dtype holds in the kernel

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
    # float -> float16 bits, rounding half to even (exact: x is at most a double)
    x = np.float64(x)
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

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
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


def cast(expr: str, have: Optional[str], want: str) -> str:
    """``expr`` (a variable holding ``have``) converted to hold ``want``."""
    if have is not None and carrier(have) == carrier(want) and want != "float16":
        return expr
    return CAST[want].format(expr)


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


class _Renderer:
    def __init__(self, spec: GroupSpec):
        self.spec = spec
        self.rank = len(spec.iter_shape)
        self.flat = is_flat(spec)
        self.parallel = size_class(spec) == "parallel"
        self.names: Dict[Value, str] = {}
        self.outs = kernel_outputs(spec)
        self.uses_f16 = False
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

    # -- expressions --------------------------------------------------------------------------
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

    def ref(self, r) -> Tuple[str, Optional[str]]:
        """(expression, carrier dtype) of an op argument."""
        info = self.spec.info(r)
        if info.kind == "const":
            return literal(info.const), info.carrier
        if info.kind == "scalar":
            return f"in{info.input}", info.carrier
        return self.names[r], info.carrier

    def attr(self, r, compute: str) -> str:
        """Attributes are literals (or scalar inputs); a numeric one is typed in the compute
        dtype, as a Python scalar meeting an array of that dtype is in the interpreter."""
        expr, have = self.ref(r)
        if (have == "int64" and compute != "bool") or (have == "float64"
                                                       and compute.startswith("float")):
            return self.typed(r, cast(expr, have, compute))
        return expr

    def typed(self, r, expr: str) -> str:
        return self.hoist(expr) if self.spec.info(r).kind == "const" and "(" in expr else expr

    def simple(self, o: OpInfo, text: str) -> bool:
        """True if ``text`` needs no cast to ``o.out_dtype`` (see ``_SIMPLE_ARITH``)."""
        if o.out_dtype != o.compute or o.compute not in ("float32", "float64"):
            return False
        if any(d != o.compute for d in o.operand_dtypes if d is not None):
            return False
        return bool(_SIMPLE_ARITH.match(text)) and not _CALL.search(text)

    def op_expr(self, o: OpInfo) -> str:
        text = o.template_text("numba")
        subst = {}
        for name, r, want in zip(o.op.operand_names, o.operands, o.operand_dtypes):
            if r is None:
                subst[name] = "None"
            else:
                expr, have = self.ref(r)
                subst[name] = self.typed(r, cast(expr, have, want))
        for name, r in o.attrs.items():
            subst[name] = self.attr(r, o.compute)

        def fill(m):
            if m.group(1) not in subst:
                raise Unsupported(f"compile failed: template of {o.op.name} names "
                                  f"unknown {{{m.group(1)}}}")
            return subst[m.group(1)]
        return _PLACEHOLDER.sub(fill, text)

    # -- statements ---------------------------------------------------------------------------
    def body(self) -> List[str]:
        spec, lines = self.spec, []
        for k, v in enumerate(spec.used_arrays):
            info = spec.values[v]
            self.names[v] = f"a{k}"
            src = f"f{info.input}" if self.flat else f"in{info.input}"
            load = f"{src}{self.index(info)}"
            if info.dtype == "float16":
                self.uses_f16 = True
                load = f"_f16_from_bits({load})"
            lines.append(f"a{k} = {load}")
        for k, o in enumerate(spec.ops):
            out = o.node.output()
            self.names[out] = f"v{k}"
            if o.out_dtype == "float16":
                self.uses_f16 = True
            text = self.op_expr(o)
            lines.append(f"v{k} = {text}" if self.simple(o, text) else
                         f"v{k} = {cast('(' + text + ')', None, o.out_dtype)}")
        for j, v in enumerate(self.outs):
            info = spec.values[v]
            value = self.names[v]
            if info.dtype == "float16":
                value = f"_f16_bits({value})"
            dst = f"o{j}[i]" if self.flat else f"out{j}{self.index(info, read=False)}"
            lines.append(f"{dst} = {value}")
        return lines

    def loops(self, body: List[str]) -> List[str]:
        spec, rng = self.spec, "prange" if self.parallel else "range"
        if self.flat:
            first = spec.values[spec.used_arrays[0]].input
            head = [f"n = in{first}.size"]
            head += [f"f{i} = in{i}.reshape(n)" for i in
                     sorted({spec.values[v].input for v in spec.used_arrays})]
            head += [f"o{j} = out{j}.reshape(n)" for j in range(len(self.outs))]
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
        if not self.parallel or self.rank == 1:
            out, indent = [], ""
            for d in range(self.rank):
                kind = rng if d == 0 else "range"
                out.append(f"{indent}for i{d} in {kind}(n{d}):")
                indent += "    "
            return head + out + [indent + s for s in body]
        # parallel: one prange over all dims but the last, unravelled per row
        outer = " * ".join(f"n{d}" for d in range(self.rank - 1))
        out = [f"for t in prange({outer}):"]
        for d in range(self.rank - 1):  # (Numba forbids reassigning anything derived from t)
            inner = " * ".join(f"n{e}" for e in range(d + 1, self.rank - 1))
            out.append(f"    i{d} = (t // ({inner})) % n{d}" if inner else f"    i{d} = t % n{d}")
        last = self.rank - 1
        out.append(f"    for i{last} in range(n{last}):")
        return head + out + ["        " + s for s in body]

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


def kernel_name(key_hash: str) -> str:
    return f"tl_fused_{key_hash[:16]}"


def render(spec: GroupSpec, key_hash: str, header: str) -> KernelSource:
    """The kernel module's source for ``spec``; ``header`` is its first line (cache check)."""
    r = _Renderer(spec)
    loop = r.loops(r.body())
    loop = [f"{name} = {expr}" for expr, name in r.consts.items()] + loop
    uses_err = any(re.search(r"\berr\b", line) for line in loop)
    params = [f"in{i}" for i in range(len(spec.signature))]
    params += [f"out{j}" for j in range(len(r.outs))] + (["err"] if uses_err else [])
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
    info = {"outputs": [spec.values[v].dtype for v in r.outs], "uses_err": uses_err,
            "flat": r.flat, "parallel": r.parallel,
            "arg_types": _arg_types(spec, r.outs)}
    return KernelSource(name, source, (), info)


def _arg_types(spec: GroupSpec, outs: List[Value]) -> List[Tuple]:
    """Numba argument types, as plain tuples: ("array", dtype, rank, layout, readonly) or
    ("scalar", dtype); float16 arrays travel as uint16."""
    types = []
    for s in spec.signature:
        if isinstance(s, type):
            types.append(("scalar", {bool: "bool", int: "int64", float: "float64"}[s]))
        else:
            dt = "uint16" if s.dtype == "float16" else s.dtype
            types.append(("array", dt, s.rank, s.layout, not s.writeable))
    for v in outs:
        info = spec.values[v]
        dt = "uint16" if info.dtype == "float16" else info.dtype
        types.append(("array", dt, len(info.shape), "C", False))
    return types
