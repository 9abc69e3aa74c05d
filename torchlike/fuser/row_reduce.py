"""Row reductions inside fusion groups: which reductions may join a group, and the row plan a
backend renders them from.

A *row reduction* reduces the trailing ``k`` dims of its input ``S`` (shape ``rows + row``):
``sum``/``mean``/``amax``/``amin``/``var``/``std`` (any correction)/``logsumexp`` over
``dim=-1`` (or ``[-2, -1]``, ...), ``softmax`` and ``log_softmax`` over ``dim=-1``, and
``max``/``min`` over one dim (their indices output computed only when used: the first
extreme, or the first NaN, as PyTorch), ``argmax``/``argmin`` over one dim.  Each row is reduced independently, so one kernel can run one
row at a time: pass 1 over the row computes the reduction's operand (the elementwise producers,
per element) and accumulates; the reduced value then stays in a register for the row, where
per-row elementwise work (``var + eps``, ``rsqrt``) and the *epilogue* -- elementwise work that
broadcasts the reduced value back over the row (``x - mean``, ``e / sum``) -- read it.  A
reduction whose operand needs an earlier reduction (``mean((x - mean(x))**2)``) takes one more
pass; softmax, log_softmax and logsumexp take two (the row max, then the sum of
``exp(x - max)``), var and std two (the mean, then the sum of squared deviations).

``why_not_row_reduction(node)`` is the partitioner's question (None: it may join a group): the
op is one of ``ROW_REDUCTIONS`` (also ``prod`` and the 1/2/inf norms), its dims are constants
(any dims: the layout -- trailing rows, the transposed ``columns`` of ``column_plan``, or a
split -- is decided at run time; ``dim=None``/``[]`` and ``x.sum()`` reduce every dim),
``keepdim`` is a constant, no ``dtype=`` argument, and the input is a float tensor (or of
unknown dtype).  docs/reductions.md is the full table of what fuses and where groups are cut.

``row_plan.plan_rows(spec)`` is the executor-time check on the exact signature (``RowPlan``),
made by the backend that renders row reductions (the CPU one, in its ``check``).  Every
value of the group gets a *level*: 2 varies along the row (computed per element), 1 is one
value per row (a reduction result, per-row arithmetic on it), 0 is uniform (constants,
scalars, size-1 arrays).  ``Unsupported`` -- and the executor then splits the group into its
elementwise parts and runs the reductions interpreted, as without reduction fusion -- when:
the reductions of the group reduce different shapes or numbers of trailing dims; an input is
not C-contiguous (or is broadcast inside the row other than as a ``block``: constant over the
row's last dims, a group norm's per-channel weight); a per-row value
meets a per-element one without keepdim (its broadcast would not be per row); an output is not
the full shape nor one value per row; a ``ConstantChunk`` is in the group.  An empty row for
``amax``/``amin`` is the interpreter's (it raises PyTorch's error).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from ..ir.graph import Node, Value
from ..ir.types import TensorType
from ..ops.tensor_common import UNKNOWN, arg, dims_list

__all__ = ["ROW_REDUCTIONS", "NORMS", "Reduction", "parse_reduction", "why_not_row_reduction",
           "RedInfo", "RowPlan", "is_reduction_group"]

# kind -> (positions of dim, keepdim and dtype in the node's inputs; None: not an input),
# accumulation passes over the row, whether the result is per element (softmax)
ROW_REDUCTIONS: Dict[str, Tuple[Optional[int], Optional[int], Optional[int], int, bool]] = {
    "aten::sum": (1, 2, 3, 1, False),
    "aten::mean": (1, 2, 3, 1, False),
    "aten::amax": (1, 2, None, 1, False),
    "aten::amin": (1, 2, None, 1, False),
    "aten::max": (1, 2, None, 1, False),        # max.dim / min.dim: values (and indices)
    "aten::min": (1, 2, None, 1, False),
    "aten::softmax": (1, None, 2, 2, True),
    "aten::log_softmax": (1, None, 2, 2, True),
    "aten::var": (1, 3, None, 2, False),        # correction: input 2 (two-pass variance)
    "aten::std": (1, 3, None, 2, False),
    "aten::logsumexp": (1, 2, None, 2, False),  # max-shifted, like softmax
    "aten::prod": (1, 2, 3, 1, False),
    "aten::argmax": (1, 2, None, 1, False),     # indices only
    "aten::argmin": (1, 2, None, 1, False),
    "aten::linalg_vector_norm": (2, 3, 4, 1, False),  # ord (input 1): 1, 2 or inf
    "aten::norm": (2, 3, 4, 1, False),
}
NORMS = ("aten::linalg_vector_norm", "aten::norm")
FLOAT_DTYPES = ("float16", "float32", "float64")


@dataclass(frozen=True)
class Reduction:
    """A row reduction's constant parameters: ``dims`` as written, ``keepdim``."""

    kind: str
    dims: Tuple[int, ...]
    keepdim: bool
    correction: float = 0.0  # var / std
    all_dims: bool = False   # over every dim (``x.sum()``, ``dim=None``/``[]``): ``dims`` is ()
    ord: float = 2.0         # norms: 1.0, 2.0 or inf
    indices: bool = False    # max/min: the indices output is used; argmax/argmin: always

    @property
    def passes(self) -> int:
        return ROW_REDUCTIONS[self.kind][3]

    @property
    def per_element(self) -> bool:
        return ROW_REDUCTIONS[self.kind][4]


def parse_reduction(node: Node) -> Any:
    """``Reduction`` for a row-reduction node, else a string saying why it is not one."""
    entry = ROW_REDUCTIONS.get(node.kind)
    if entry is None:
        return "not a fusible reduction"
    dim_at, keep_at, dtype_at, _, _ = entry
    if node.kind in ("aten::max", "aten::min"):
        if len(node.inputs) != 3 or len(node.outputs) != 2:
            return f"{node.kind} without a dim (or of two tensors)"
        indices = _used(node.outputs[1])
    elif node.kind in ("aten::argmax", "aten::argmin"):
        indices = True
        if len(node.inputs) != 3 or not isinstance(arg(node, 1, None), int):
            return f"{node.kind} without a constant dim"
    elif len(node.outputs) != 1:
        return f"{node.kind} with {len(node.outputs)} outputs"
    if node.kind not in ("aten::max", "aten::min", "aten::argmax", "aten::argmin"):
        indices = False
    order = 2.0
    if node.kind in NORMS:
        p = arg(node, 1, None)
        order = 2.0 if p is None else p
        if isinstance(order, bool) or not isinstance(order, (int, float)) or \
                float(order) not in (1.0, 2.0, math.inf):
            return f"a norm of order {order!r} (1, 2 and inf fuse)"
        order = float(order)
    if node.kind in ("aten::sum", "aten::mean", "aten::prod") and len(node.inputs) <= 2:
        dtype = arg(node, 1, None)  # aten::sum(self, dtype=None): every dim, no keepdim
        if dtype is not None:
            return "a dtype= argument" if dtype is not UNKNOWN else "a dtype that is not a constant"
        return Reduction(node.kind, (), False, all_dims=True)
    if node.kind in ("aten::var", "aten::std") and (
            len(node.inputs) == 2 or isinstance(arg(node, 1, None), bool)):
        c = arg(node, 1, UNKNOWN)  # aten::var(self, bool unbiased); a traced tl.var(x, False)
        if not isinstance(c, bool):  # also passes the bound defaults after it
            return "an unbiased= that is not a constant bool"
        return Reduction(node.kind, (), False, float(c), all_dims=True)
    if len(node.inputs) > max(p for p in entry[:3] if p is not None) + 1 and \
            node.kind not in ("aten::var", "aten::std"):
        return f"{len(node.inputs)} inputs do not match the schema"
    dim = arg(node, dim_at, None if node.kind.startswith("aten::am") or node.kind in NORMS
              else UNKNOWN)
    if node.kind in ("aten::max", "aten::min") and not isinstance(dim, int):
        return f"{node.kind} whose dim is not a constant int"
    keepdim = arg(node, keep_at, False) if keep_at is not None else False
    dtype = arg(node, dtype_at, None) if dtype_at is not None else None
    correction = 0.0
    if node.kind in ("aten::var", "aten::std"):
        c = arg(node, 2, None)
        if c is UNKNOWN or not (c is None or isinstance(c, (bool, int, float))):
            return "a correction that is not a constant"
        correction = 1.0 if c is None else float(c)  # unbiased=True/False is 1/0
    if dim is UNKNOWN or keepdim is UNKNOWN or dtype is UNKNOWN:
        return "a dim, keepdim or dtype that is not a constant"
    if dtype is not None:
        return "a dtype= argument"
    if not isinstance(keepdim, bool):
        return f"keepdim={keepdim!r}"
    try:
        dims = dims_list(dim)
    except (TypeError, ValueError):
        return "dims that are not constants"
    if dims is not None and any(d is None for d in dims):
        return "dims that are not constants"
    if dims is None:  # dim=None or []: every dim (logsumexp(x, []) is an error in PyTorch)
        if node.kind in ("aten::logsumexp", "aten::softmax", "aten::log_softmax"):
            return "a reduction over no dim"
        return Reduction(node.kind, (), keepdim, correction, all_dims=True, ord=order)
    return Reduction(node.kind, tuple(int(d) for d in dims), keepdim, correction, ord=order,
                     indices=indices)


def reduced_signature(node: Node) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]]:
    """``(input shape, reduced dims >= 0)`` of a fusible reduction node whose input shape the
    types know (every dim for a full reduction), else None: two reductions fit one kernel only
    when these are equal (the partitioner keeps others apart)."""
    if node.kind not in ROW_REDUCTIONS:
        return None
    t = node.inputs[0].type
    shape = t.shape if isinstance(t, TensorType) else None
    r = parse_reduction(node)
    if shape is None or any(d is None for d in shape) or not isinstance(r, Reduction):
        return None
    n = len(shape)
    dims = tuple(range(n)) if r.all_dims else tuple(sorted({d % n for d in r.dims}))
    return tuple(shape), dims


def _used(value: Value) -> bool:
    """Whether a node uses ``value`` or a block of its graph returns it."""
    if value.uses:
        return True
    block = value.node.owning_block
    if block is None:
        return True  # not in a graph: assume used
    stack = [block.graph.block] if block.graph is not None else [block]
    while stack:
        b = stack.pop()
        if any(v is value for v in b.returns):
            return True
        stack.extend(inner for n in b.nodes for inner in n.blocks)
    return False


def trailing(dims: Tuple[int, ...], rank: Optional[int]) -> Optional[int]:
    """How many trailing dims ``dims`` name (``k``), or None if they are not the last ``k``."""
    if rank is not None:
        if not all(-rank <= d < rank for d in dims):
            return None
        dims = tuple(d - rank if d >= 0 else d for d in dims)
    elif any(d >= 0 for d in dims):
        return None
    k = len(dims)
    return k if sorted(dims) == list(range(-k, 0)) else None


def why_not_row_reduction(node: Node) -> Optional[str]:
    """None if ``node`` may join a fusion group as a row reduction (module docstring)."""
    red = parse_reduction(node)
    if isinstance(red, str):
        return red
    t = node.inputs[0].type
    if not isinstance(t, TensorType):
        return "an input that is not a tensor"
    if t.dtype is not None and t.dtype not in FLOAT_DTYPES:
        return f"input of dtype {t.dtype} (float row reductions only)"
    rank = None if t.shape is None else len(t.shape)
    if rank == 0:
        return "a 0-d input"
    if rank is not None and not all(-rank <= d < rank for d in red.dims):
        return f"dims {list(red.dims)} out of range for a {rank}-d input"
    return None


def is_reduction_group(sub) -> bool:
    return any(n.kind in ROW_REDUCTIONS for n in sub.nodes)


@dataclass
class RedInfo:
    """One reduction of an analysed group: its node, parameters, operand, the dtype it
    accumulates in (float32 for float16, as PyTorch) and produces."""

    node: Node
    red: Reduction
    operand: Value
    k: int                     # how many dims are reduced (the trailing ones when ``trailing``)
    in_shape: Tuple[int, ...]
    out_dtype: str
    acc: str
    dims: Tuple[int, ...] = ()  # the reduced dims, normalized and sorted; () = the last ``k``

    @property
    def trailing(self) -> bool:
        """Whether the reduced dims are the input's last ``k`` (the ``rows`` layout)."""
        n = len(self.in_shape)
        return not self.dims or self.dims == tuple(range(n - self.k, n))

    @property
    def last_dim(self) -> bool:
        """Whether the reduction is over the input's last dim alone (a 0-d input's one
        element too): PyTorch's CPU softmax then runs its ``lastdim`` kernel, which multiplies
        ``exp(x - max)`` by ``1 / sum``; over any other dim it divides by the sum."""
        n = max(len(self.in_shape), 1)
        return self.k == 1 and (self.dims or (n - 1,)) == (n - 1,)


@dataclass
class RowPlan:
    """How the group runs row by row (see the module docstring): ``shape`` = rows + row,
    ``k`` trailing dims reduced; each input's class (``full``: the whole shape, read at
    ``r * N + j``; ``rowvec``: broadcast over the rows, read at ``j``; ``perrow``: one value per
    row (keepdim shape), read at ``r``; ``block``: broadcast within the row, constant over
    its trailing dims (``row_plan.block_split``, read where ``row_plan.BlockIndex`` says; the
    CPU expands the row's copy into a row buffer); ``uniform``: size 1; ``scalar``: a Python
    scalar);
    each value's ``level`` and ``avail`` (how many passes over the row must be done before it
    can be computed); ``passes``: the accumulation passes."""

    shape: Tuple[int, ...]
    k: int
    inputs: Tuple[str, ...]
    level: Dict[Value, int] = field(default_factory=dict)
    avail: Dict[Value, int] = field(default_factory=dict)
    passes: int = 0
    out_levels: Tuple[int, ...] = ()
    # ``rows``: the trailing ``k`` dims are reduced (everything above).  ``columns`` (CPU only:
    # ``plan_rows(spec, layouts=...)`` returns it only to a backend that asks for it): the
    # reduced ``dims`` are a contiguous range ``[a, b)`` with dims after it, the shape seen as
    # (outer, reduced, inner); ``column_plan``'s docstring has the input classes and levels.
    layout: str = "rows"
    dims: Tuple[int, ...] = ()

    @property
    def rows(self) -> Tuple[int, ...]:
        return self.shape[:len(self.shape) - self.k]

    @property
    def row(self) -> Tuple[int, ...]:
        return self.shape[len(self.shape) - self.k:]

    @property
    def n_rows(self) -> int:
        return math.prod(self.rows)

    @property
    def row_size(self) -> int:
        return math.prod(self.row)

    def key(self) -> Tuple:
        """What the generated code depends on beyond the group's structure and input layouts."""
        key = (len(self.shape), self.k, self.inputs, self.out_levels)
        return key if self.layout == "rows" else key + (self.layout, self.dims)


def padded(shape: Tuple[int, ...], n: int) -> Optional[Tuple[int, ...]]:
    return None if len(shape) > n else (1,) * (n - len(shape)) + tuple(shape)
