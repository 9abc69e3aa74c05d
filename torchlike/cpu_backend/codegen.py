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

  When every array is F-contiguous instead (transposed inputs; the outputs then are too,
  ``fuser.output_layout``), the same loop runs over ``in0.T.reshape(n)``.

* strided: one loop per output dim; each array is indexed with its own broadcast multi-index
  (a size-1 dim reads index 0, a lower rank drops leading indices, a chunk adds ``k * c``), so
  transposed, sliced and stride-0 inputs are read in place.  The loops nest in the memory
  order of the output (``output_layout.loop_order``: outermost = its largest stride), so the
  innermost loop runs along the output's contiguous dim -- and along every input laid out
  like it -- and vectorizes; with all-C inputs that is the logical order, last dim innermost.
  Where an input is read across that loop (a transpose against the output, a step slice),
  a parallel kernel runs in tiles of ``TILE`` over the innermost dim and the input's
  contiguous one (``tile_dim``), so the lines of that input stay in L1 between their uses.

A kernel whose work (``size_class``: elements x (1 + the ops that call a math helper)) reaches
``PARALLEL_WORK`` runs its outer loop as a ``prange`` (``parallel=True``); the size class is
part of the kernel key.  float16 arrays are passed viewed as uint16 and
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
    ArraySpec,
    GroupSpec,
    KernelInfo,
    KernelSource,
    OpInfo,
    Unsupported,
    ValueInfo,
    ValueKind,
)
from ..fuser.kernel_spec import kernel_outputs, piece_starts
from ..fuser.output_layout import array_layout, dense_strides, loop_order, output_orders
from ..fuser.render import Renderer, uses_err
from ..ir.graph import Value
from .fast_paths import BLOCK, fast_body
from .hoist import hoist_invariants

VERSION = 7
# Waking the OpenMP pool costs ~40-70 us a parallel region under OMP_WAIT_POLICY=PASSIVE (the
# CPU backend's default): measured on 2 cores, a 2^17-element layer norm took 38 us serial and
# 76 us parallel, an add of 2^18 33 us and 74 us, while gelu (erf) at 2^18 took 179 us serial
# and 157 us parallel.  So a kernel goes parallel by its work, elements x (1 + heavy ops).
PARALLEL_WORK = 1 << 19
HEAVY_WEIGHT = 1  # what a heavy op adds to an element's work (tests: 0, a plain size threshold)
_SOFTMAX_FAMILY = ("aten::softmax", "aten::log_softmax", "aten::logsumexp")
KERNEL_DECORATOR = 'numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True{})'

# A value of dtype D is converted with CAST[D] -- but a float becomes an integer through
# scalar_math's tl_float_to_<D> (ops/casting.py: np.int32(x) is LLVM poison when x does not
# fit); float16 values live in float32 variables.
CAST = {"float32": "np.float32({})", "float64": "np.float64({})", "float16": "_f16_round({})",
        "bool": "bool({})", **{d: f"np.{d}({{}})" for d in
                               ("uint8", "int8", "int16", "int32", "int64")}}
CARRIER = {"float16": "float32"}  # what a variable of this dtype holds in the kernel
_PYTHON_DTYPE = {bool: "bool", int: "int64", float: "float64"}

# A float16 kernel imports its conversions (math_f16): compiled once per process, inlined.
F16_HELPERS = ("from torchlike.cpu_backend.math_f16 import _f16_bits, _f16_from_bits, "
               "_f16_round, tl_div_trunc_half, tl_floor_divide_half  # noqa: F401")

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
    """"parallel" where the group's work (elements x (1 + ops calling a math helper, the
    softmax family's exp included)) reaches PARALLEL_WORK, else "serial"."""
    heavy = sum(o.op.calls_math_helper for o in spec.ops)
    heavy += sum(r.red.kind in _SOFTMAX_FAMILY for r in spec.reductions)
    work = math.prod(spec.iter_shape) * (1 + HEAVY_WEIGHT * heavy)
    return "parallel" if spec.iter_shape and work >= PARALLEL_WORK else "serial"


def output_layouts(spec: GroupSpec) -> Tuple[str, ...]:
    """Numba's layout (``C``/``F``/``A``) of each kernel output as the launcher allocates it
    (``output_layout.output_orders``; a ``prim::FusedConcat`` piece: the whole concatenation,
    written at the piece's offset, ``_Renderer.write_at``); all ``C`` for a reduction group."""
    outs = kernel_outputs(spec)
    if spec.reductions:
        return ("C",) * len(outs)
    pieces = {p for c in spec.concats.values() for p in c.pieces}
    return tuple("C" if v in pieces else  # the C-ordered concatenation, written at an offset
                 array_layout(spec.values[v].shape, dense_strides(spec.values[v].shape, order))
                 for v, order in zip(outs, output_orders(spec), strict=True))


def expanded_dims(spec: GroupSpec) -> Tuple[Tuple[int, ...], ...]:
    """Per input, its dims of stride 0 and size > 1 (``np.broadcast_to``, ``expand``): they
    are read at index 0, so the read is loop-invariant there (LLVM hoists it, and what is
    computed from it, out of the inner loop instead of gathering the same element)."""
    return tuple(tuple(j for j, (n, st) in enumerate(zip(s.shape, s.strides, strict=True))
                       if st == 0 and n > 1)
                 if isinstance(s, ArraySpec) and not spec.reductions else ()
                 for s in spec.signature)


def layout_key(spec: GroupSpec) -> Tuple:
    """What the kernel's code depends on beyond its inputs' layout keys: the loop nest's
    order (an ``A`` input's strides decide it), the tiled dim, and the outputs' layouts (the
    kernel's argument types).  Part of the kernel key."""
    order = loop_order(spec)
    tile = tile_dim(spec, order) if size_class(spec) == "parallel" and not is_flat(spec) else None
    return ("order", order, "tile", tile, "expanded", expanded_dims(spec), output_layouts(spec))


def flat_layout(spec: GroupSpec) -> Optional[str]:
    """``C`` when every array read and written has the iteration shape and is C-contiguous,
    ``F`` when every one is F-contiguous instead (rank >= 2: a 1-D array is C), else None."""
    if not spec.used_arrays or spec.reductions or spec.concats:
        return None
    layouts = set(output_layouts(spec))
    for v in spec.used_arrays:
        info = spec.values[v]
        if info.chunk is not None or info.shape != spec.iter_shape:
            return None
        layouts.add(spec.signature[info.input].layout)
    if any(spec.values[o].shape != spec.iter_shape for o in kernel_outputs(spec)):
        return None
    return layouts.pop() if len(layouts) == 1 and layouts <= {"C", "F"} else None


def is_flat(spec: GroupSpec) -> bool:
    """Every array read and written has the iteration shape and is C- or F-contiguous (all
    the same one): one flat loop (``flat_layout``)."""
    return flat_layout(spec) is not None


# Tiles of the tiled loop nest (``tile_dim``): (rows along the dim an input is contiguous
# in, elements along the innermost loop dim).  Measured on x + y.T, (a * b + sin(c), relu(a - c))
# with b a step-2 slice, and sin(x) + y.T at 2048 x 2048 float32, one thread, AVX-512: untiled
# 24 / 50 / 45 ms; 64 x 128: 21 / 29 / 26; 32 x 512: 17 / 25 / 23; 256 x 256: 13 / 22 / 18;
# 512 x 512: 13 / 22 / 18; 128 x 1024: 17-22 / 33 / 22.  A tile of 256 rows keeps the
# 256 cache lines of the input read across in L1 while each line serves 16 floats.
TILE = (256, 256)
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "float32": 4, "float64": 8}


def tile_dim(spec: GroupSpec, order: Tuple[int, ...]) -> Optional[int]:
    """The dim to tile together with the innermost loop dim ``order[-1]``: the contiguous
    (smallest-stride) dim of the first input that the innermost loop reads across -- a cache
    line or more apart -- or None."""
    if len(order) < 2 or spec.reductions:
        return None
    last, rank = order[-1], len(spec.iter_shape)
    for v in spec.used_arrays:
        info = spec.values[v]
        s = spec.signature[info.input]
        item = ITEMSIZE.get(s.dtype, 1)
        moves = {rank - len(info.shape) + j: abs(st) for j, (size, st) in
                 enumerate(zip(info.shape, s.strides, strict=True)) if size != 1 and st != 0}
        if last not in moves or moves[last] < 64:
            continue
        q = min(moves, key=lambda d: (moves[d], -d))
        if q != last and moves[q] < 64 and moves[q] >= item and spec.iter_shape[q] > 1:
            return q
    return None


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
        self.flat_layout = flat_layout(spec)
        self.flat = self.flat_layout is not None
        self.order = loop_order(spec)  # the loop nest's dims, outermost first
        self.expanded = expanded_dims(spec)
        self.parallel = size_class(spec) == "parallel"
        self.tile = tile_dim(spec, self.order) if self.parallel and not self.flat else None
        self.uses_f16 = bool(self.half_dtypes())
        self.consts: Dict[str, str] = {}  # hoisted typed literal -> its name
        # a prim::FusedConcat piece's output array is the concatenation: (dim, its start)
        self.at: Dict[Value, Tuple[int, str]] = {
            p: (d, f"{full} * n{self.rank - len(spec.values[p].shape) + d} + {ones}")
            for p, (d, full, ones) in piece_starts(spec).items() if full or ones}

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
            return self.operand(r, self.attribute_dtype(o, name))
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
    def index(self, info: ValueInfo, read: bool = True,
              offset: Optional[Tuple[int, str]] = None) -> str:
        """``[i0, 0, i2]``: the broadcast multi-index of a value; a chunk read adds its offset
        along the chunk dim (``read=False``: the value's own output array, no offset; a write
        into a concatenation, ``offset``: (dim, the piece's start), adds that)."""
        if self.flat:
            return "[i]"
        r = len(info.shape)
        if r == 0:
            return "[()]"
        parts = []
        fixed = self.expanded[info.input] if read and info.kind == ValueKind.ARRAY else ()
        for j, one in enumerate(info.mask):
            d = self.rank - r + j
            idx = "0" if one or j in fixed else f"i{d}"
            if read and info.chunk is not None and info.chunk[2] == j and info.chunk[0]:
                # (the sum's sign is unknown to LLVM: see ``_NONNEG``)
                idx = f"({idx} + {info.chunk[0]} * c{info.input}) & {_NONNEG}"
            if offset is not None and offset[0] == j:
                idx = f"({idx} + {offset[1]}) & {_NONNEG}"
            parts.append(idx)
        return "[" + ", ".join(parts) + "]"

    def read_at(self, k: int, v: Value) -> str:
        info = self.spec.values[v]
        return f"{'f' if self.flat else 'in'}{info.input}{self.index(info)}"

    def write_at(self, j: int, v: Value) -> str:
        if self.flat:
            return f"o{j}[i]"
        return f"out{j}{self.index(self.spec.values[v], read=False, offset=self.at.get(v))}"

    def loops(self, body: List[str], fast: Optional[List[str]] = None) -> List[str]:
        """The loop nest around ``body``.  With ``fast`` (``fast_paths.fast_body``), the
        innermost loop runs ``fast`` over a block (a flat or 1-D loop) or a row and, where one
        of its guards fired, ``body`` again over the same elements."""
        spec, rng = self.spec, "prange" if self.parallel else "range"
        if fast is not None and self.rank == 0:
            fast = None  # one element: nothing to save
        if self.flat:
            first = spec.values[spec.used_arrays[0]].input
            t = ".T" if self.flat_layout == "F" else ""  # F-contiguous: flat along .T
            head = [f"n = in{first}.size"]
            head += [f"f{i} = in{i}{t}.reshape(n)" for i in
                     sorted({spec.values[v].input for v in spec.used_arrays})]
            head += [f"o{j} = out{j}{t}.reshape(n)" for j in range(len(self.outputs))]
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
        # the dims outermost first: the output's memory order, so the innermost loop is along
        # its contiguous dim (``output_layout.loop_order``; 0, 1, ..., rank-1 for C outputs)
        *outer_dims, last = self.order
        inner = [f"for i{last} in range(n{last}):"] + ["    " + s for s in body]
        if fast is not None:
            inner = (["bad = False", f"for i{last} in range(n{last}):"] + ["    " + s for s in fast]
                     + ["if bad:"] + ["    " + s for s in inner])
        if not self.parallel or self.rank == 1:
            out, indent = [], ""
            for k, d in enumerate(outer_dims):
                kind = rng if k == 0 else "range"
                out.append(f"{indent}for i{d} in {kind}(n{d}):")
                indent += "    "
            if self.rank == 1:  # (no fast form here: handled above)
                return head + [f"for i0 in {rng}(n0):"] + ["    " + s for s in body]
            return head + out + [indent + s for s in inner]
        if self.tile is not None:
            return head + self.tiled(outer_dims, last, inner)
        # parallel: one prange over all dims but the innermost, unravelled per row
        outer = " * ".join(f"n{d}" for d in outer_dims)
        out = [f"for t in prange({outer}):"]
        for k, d in enumerate(outer_dims):  # (Numba forbids reassigning anything derived from t)
            inner_n = " * ".join(f"n{e}" for e in outer_dims[k + 1:])
            out.append(f"    i{d} = (t // ({inner_n})) % n{d}" if inner_n else f"    i{d} = t % n{d}")
        return head + out + ["    " + s for s in inner]

    def tiled(self, outer_dims: List[int], last: int, inner: List[str]) -> List[str]:
        """The parallel loop nest in tiles of ``TILE`` over the dims ``self.tile`` and ``last``
        (see ``tile_dim``): one prange over the other outer dims and the tiles, then the tile's
        rows, then ``inner`` over the tile's part of ``last``."""
        q, (tq, tl) = self.tile, TILE
        others = [d for d in outer_dims if d != q]
        counts = [f"n{d}" for d in others] + ["nbq", "nbl"]
        out = [f"nbq = (n{q} + {tq - 1}) // {tq}", f"nbl = (n{last} + {tl - 1}) // {tl}",
               f"for t in prange({' * '.join(counts)}):"]
        names = [f"i{d}" for d in others] + ["bq", "bl"]
        for k, (name, count) in enumerate(zip(names, counts, strict=True)):
            inner_n = " * ".join(counts[k + 1:])
            out.append(f"    {name} = (t // ({inner_n})) % {count}" if inner_n
                       else f"    {name} = t % {count}")
        out += [f"    lo = bl * {tl}", f"    hi = min(lo + {tl}, n{last})",
                f"    for i{q} in range(bq * {tq}, min(bq * {tq} + {tq}, n{q})):"]
        inner = [_int_flag(line) for line in _from_offset(inner, f"i{last}", f"n{last}")]
        return out + ["        " + line for line in inner]

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


def _int_flag(line: str) -> str:
    """A guarded fast form's ``bad`` flag as an int32: LLVM does not vectorize the tiled
    loop's inner loop with a bool OR-reduction in it (it does with an int one)."""
    stripped = line.lstrip()
    if stripped == "bad = False":
        return line.replace("bad = False", "bad = np.int32(0)")
    if stripped.startswith("bad |= "):
        return line.replace("bad |= ", "bad |= np.int32(", 1) + ")"
    return line


# Indexing with a signed integer costs a negative-index check (``i < 0: i += size``), which
# LLVM drops when it can prove ``i >= 0``: it can for ``range(n)``, not for ``range(lo, hi)``,
# and then the loop does not vectorize (a blocked sin kernel at 2^22: 5.6 ms against 1.9 ms).
# A loop from an offset therefore indexes with ``i & _NONNEG``, the same int64 with its sign
# bit known clear.
_NONNEG = "np.int64(0x7FFFFFFFFFFFFFFF)"


def _offset_loop(i: str) -> List[str]:
    """The head of a loop over ``range(lo, hi)`` whose body indexes with ``i``."""
    return [f"for {i}_ in range(lo, hi):", f"    {i} = {i}_ & {_NONNEG}"]


def _from_offset(lines: List[str], i: str, n: str) -> List[str]:
    """``lines`` with each loop ``for {i} in range({n}):`` over ``range(lo, hi)`` instead."""
    out = []
    for line in lines:
        indent = line[:len(line) - len(line.lstrip())]
        if line.strip() == f"for {i} in range({n}):":
            out += [indent + h for h in _offset_loop(i)]
        else:
            out.append(line)
    return out


def _blocked(i: str, n: str, rng: str, body: List[str], fast: List[str]) -> List[str]:
    """A 1-D loop over ``n`` elements as blocks of ``BLOCK``: ``fast`` over each, ``body``
    again where a guard fired (``fast_paths``)."""
    def block(lines: List[str]) -> List[str]:
        return _offset_loop(i) + ["    " + s for s in lines]
    return [f"for b in {rng}(({n} + {BLOCK - 1}) // {BLOCK}):",
            f"    lo = b * {BLOCK}",
            f"    hi = min(lo + {BLOCK}, {n})",
            "    bad = False"] + ["    " + s for s in block(fast)] + [
            "    if bad:"] + ["        " + s for s in block(body)]


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
    once, body = hoist_invariants(r.body(r.read_at, r.write_at))  # (hoist.py)
    body = ["tl_wide_vectors()"] + body
    # guarded fast forms only in parallel kernels: they double the loop body, and with it the
    # compile time (a 7-op trig chain at 512x512: 12.6 s -> 37 s), which only large inputs repay
    loop = once + r.loops(body, fast_body(body) if r.parallel else None)
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
                           parallel=r.parallel,
                           arg_types=arg_types(spec, r.outputs, output_layouts(spec)))
    return KernelSource(name, source, (), info)


def arg_types(spec: GroupSpec, outs: List[Value], layouts: Optional[Tuple[str, ...]] = None
              ) -> Tuple[NumbaArg, ...]:
    """The kernel's Numba argument types: the group's inputs, then its outputs (of
    ``layouts``, C by default)."""
    types: List[NumbaArg] = []
    for s in spec.signature:
        if isinstance(s, type):
            types.append(ScalarArg({bool: "bool", int: "int64", float: "float64"}[s]))
        else:
            dt = "uint16" if s.dtype == "float16" else s.dtype
            types.append(ArrayArg(dt, s.rank, s.layout, not s.writeable))
    for j, v in enumerate(outs):
        info = spec.values[v]
        dt = "uint16" if info.dtype == "float16" else info.dtype
        types.append(ArrayArg(dt, len(info.shape), layouts[j] if layouts else "C", False))
    return tuple(types)
