"""How a CUDA kernel indexes its arrays: the host-side plan, shared by generator and launchers.

``plan(spec)`` looks at the exact runtime signature of a fusion group (``fuser.backend``'s
``GroupSpec``) and decides everything the generated code depends on -- the kernel key -- plus
the numbers the launcher passes as kernel arguments (never baked into the code, so new sizes of
one layout reuse the kernel):

* every array an op reads is a *view*: an input, or one chunk of an input (``ConstantChunk``
  becomes a pointer offset plus the input's strides), with one stride per iteration dim (0 for
  a broadcast dim, a missing leading dim, or a size-1 dim);
* ``order``: the iteration dims outermost first, the memory order of the outputs
  (``fuser.output_layout``: PyTorch's layout for an elementwise result, C for C inputs).  The
  flat index ``i`` runs in that order, so consecutive threads write consecutive addresses of
  each output (allocated dense in its order) and read those of every input laid out alike;
* ``path``: ``contig`` when every view and output is dense in ``order`` with the iteration
  shape (one flat index ``i``; the module also gets a 16-byte vector entry point, chosen per
  call when the pointers are aligned) -- all-C or all-transposed groups alike -- else
  ``strided`` (``i`` is unravelled over the live dims -- those of size > 1, in ``order`` --
  and each view not itself dense-full gets ``i0 * st_0 + ...``).  A strided kernel gets a
  vector entry point too when every view moves along the innermost live dim with stride 1
  (``inner == "unit"``: a chunk of a C array, a row broadcast over columns) or not at all
  (``"zero"``: read once per vector; an output of a broadcast shape, stored once), or is
  dense: the launcher picks it per call when that dim's size and the unit views' other
  strides are multiples of the width and the pointers are aligned, so ``V`` consecutive ``i``
  share their outer indices;
* ``index_bits``: 32 when the element count and every offset fit in a signed 32-bit int;
* ``table``: the kernel's parameters would pass ``MAX_PARAM_BYTES`` (CUDA < 12.1 allows 4 KB),
  so pointers, scalars, sizes and strides travel in one device array of int64 instead.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..fuser.backend import ArraySpec, GroupSpec, Unsupported
from ..fuser.kernel_spec import kernel_outputs
from ..fuser.output_layout import dense_strides, loop_order, output_orders
from ..ir.graph import Value

MAX_PARAM_BYTES = 4000  # < 4096 (CUDA < 12.1); every parameter is counted as 8 bytes
VECTOR_BYTES = 16
INT32_MAX = 2 ** 31 - 1
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


@dataclass
class View:
    """An array the kernel reads (``input`` >= 0) or writes (``output`` >= 0)."""

    value: Value
    dtype: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]      # per iteration dim, in elements (0: broadcast / size 1)
    offset: int = 0               # in elements from the input's data pointer (chunks)
    input: int = -1
    output: int = -1
    direct: bool = False          # dense in the loop order with the iteration shape: i
    order: Tuple[int, ...] = ()   # an output's dims in memory order, outermost first
    inner: str = ""               # strided path, not direct: its stride along the innermost
    #                               live dim is 1 ("unit"), 0 ("zero") or other ("other")

    @property
    def live(self) -> Tuple[int, ...]:
        """Iteration dims this view moves along."""
        return tuple(d for d, s in enumerate(self.strides) if s != 0)


@dataclass
class Plan:
    spec: GroupSpec
    reads: List[View]
    writes: List[View]
    scalars: List[int]            # input indices of Python scalars the code reads
    live: Tuple[int, ...]         # iteration dims of size > 1, outermost first (loop order)
    path: str                     # "contig" | "strided"
    vector: int                   # elements per vector load of the vector entry (0: none)
    index_bits: int
    table: bool
    max_param_bytes: Optional[int] = None
    uses_err: bool = False        # set by the generator

    @property
    def n(self) -> int:
        return math.prod(self.spec.iter_shape)

    def key(self) -> Tuple:
        views = tuple((v.direct, v.live, v.inner) for v in self.reads + self.writes)
        return (self.path, self.vector, self.index_bits, self.table, self.live, views,
                tuple(self.scalars))

    def index_args(self) -> List[int]:
        """n, then the sizes of live dims but the outermost, then every strided view's strides
        along the dims it moves in (the order of the generated parameters)."""
        args = [self.n]
        if self.path == "strided":
            args += [self.spec.iter_shape[d] for d in self.live[1:]]
            for v in self.reads + self.writes:
                if not v.direct:
                    args += [v.strides[d] for d in v.live]
        return args

    def vector_fits(self) -> bool:
        """Whether the vector entry of a strided plan may run for this exact signature (the
        pointers' alignment aside): the innermost live dim's size, and every unit view's
        strides along the other dims and its offset, are multiples of the width."""
        V = self.vector
        if self.path != "strided":
            return True
        if not V or self.spec.iter_shape[self.live[-1]] % V:
            return False
        return all(v.offset % V == 0 and all(v.strides[d] % V == 0 for d in self.live[:-1])
                   for v in self.reads + self.writes if v.inner == "unit")

    def param_count(self) -> int:
        return (len(self.reads) + len(self.scalars) + len(self.writes) + 1 +
                len(self.index_args()))


def _dense_in(shape, strides_elems, order) -> bool:
    """Dense in ``order`` (dims outermost first), size-1 dims aside: element ``i`` of the
    loop over ``order`` is at offset ``i``."""
    expect = 1
    for d in reversed(order):
        if shape[d] != 1 and strides_elems[d] != expect:
            return False
        expect *= shape[d]
    return True


def _view(value, dtype, shape, strides, iter_shape, order, offset=0) -> View:
    """Strides per iteration dim: the view's dims align with the last ones."""
    rank = len(iter_shape)
    per_dim = [0] * rank
    for j, (size, st) in enumerate(zip(shape, strides, strict=True)):
        if size != 1:
            per_dim[rank - len(shape) + j] = st
    direct = tuple(shape) == tuple(iter_shape) and _dense_in(shape, strides, order)
    return View(value, dtype, tuple(shape), tuple(per_dim), offset, direct=direct)


def _elem_strides(s: ArraySpec) -> Tuple[int, ...]:
    item = ITEMSIZE[s.dtype]
    if any(st % item for st in s.strides):
        raise Unsupported("unsupported strides that are not a multiple of the element size")
    return tuple(st // item for st in s.strides)


def _extent(v: View, iter_shape) -> int:
    """The largest |offset| in elements the view reaches."""
    return abs(v.offset) + sum((size - 1) * abs(st)
                               for size, st in zip(iter_shape, v.strides, strict=True))


def plan(spec: GroupSpec, max_param_bytes: Optional[int] = None) -> Plan:
    """The kernel plan of ``spec`` (see the module docstring)."""
    iter_shape = spec.iter_shape
    orders = output_orders(spec)
    order = loop_order(spec, orders)
    reads = []
    for val in spec.used_arrays:
        info = spec.values[val]
        s = spec.signature[info.input]
        strides = _elem_strides(s)
        offset = 0
        if info.chunk is not None:
            k, _, dim = info.chunk
            offset = k * info.shape[dim] * strides[dim]
        v = _view(val, info.dtype, info.shape, strides, iter_shape, order, offset)
        v.input = info.input
        reads.append(v)
    writes = []
    for j, (val, out_order) in enumerate(zip(kernel_outputs(spec), orders, strict=True)):
        info = spec.values[val]
        v = _view(val, info.dtype, info.shape, dense_strides(info.shape, out_order), iter_shape,
                  order)
        v.output, v.order = j, out_order
        writes.append(v)
    scalars = sorted({spec.values[r].input for o in spec.ops for r in
                      list(o.operands) + list(o.attrs.values())
                      if r is not None and spec.info(r).kind == "scalar"})
    live = tuple(d for d in order if iter_shape[d] != 1)  # outermost first
    contig = all(v.direct for v in reads + writes)
    path = "contig" if contig else "strided"
    vector = 0
    if contig and reads + writes:
        vector = min(VECTOR_BYTES // ITEMSIZE[v.dtype] for v in reads + writes)
    elif live:
        for v in reads + writes:
            if not v.direct:
                st = v.strides[live[-1]]
                v.inner = "unit" if st == 1 else "zero" if st == 0 else "other"
        moved = [v for v in reads + writes if v.inner != "zero"]
        if all(v.inner != "other" for v in reads + writes) and moved:
            vector = min(VECTOR_BYTES // ITEMSIZE[v.dtype] for v in moved)
    n = math.prod(iter_shape)
    bits = 32
    if n > INT32_MAX or any(_extent(v, iter_shape) > INT32_MAX for v in reads + writes):
        bits = 64
    p = Plan(spec, reads, writes, scalars, live, path, vector, bits, False, max_param_bytes)
    limit = MAX_PARAM_BYTES if max_param_bytes is None else max_param_bytes
    p.table = 8 * p.param_count() > limit
    return p
