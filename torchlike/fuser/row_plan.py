"""The executor-time half of ``row_reduce``: ``plan_rows(spec)``, the ``RowPlan`` of an analysed
group with reductions for its exact signature, or ``Unsupported`` (see ``row_reduce``'s
docstring for the rules; the executor then splits the group).  A backend that renders row
reductions calls it from its ``check`` (the CPU backend does)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

from ..ir.graph import Value
from .backend import ArraySpec, GroupSpec, Unsupported, ValueKind
from .column_plan import plan_columns
from .kernel_spec import kernel_outputs
from .row_reduce import RowPlan, padded

__all__ = ["plan_rows", "block_split", "BlockIndex", "block_index"]


def block_split(p: Tuple[int, ...], shape: Tuple[int, ...], k: int):
    """For an input of padded shape ``p`` broadcast within the row (class ``block``): the ``s``
    for which its row part is the row's first ``s`` dims followed by size-1 dims (constant over
    the row's last ``k - s`` dims: a group norm's per-channel weight ``(G, C/G, 1)`` against
    ``(N, G, C/G, H*W)``), its rows part any mix of full and size-1 dims; else None."""
    n = len(shape)
    if any(a not in (1, b) for a, b in zip(p, shape)):
        return None
    row, prow = shape[n - k:], p[n - k:]
    for s in range(k, -1, -1):
        if prow[:s] == row[:s] and all(d == 1 for d in prow[s:]):
            return s
    return None


@dataclass(frozen=True)
class BlockIndex:
    """Where a ``block`` input holds the value of element ``j`` of row ``r`` (dims index the
    reduced shape; a kernel reads its sizes as ``S<d>``): at ``row_offset`` -- r's index in each
    rows dim ``d`` the input has, times the input's stride there -- plus ``j // prod(S[inner])``.
    ``outer``: the row dims it spans; ``inner``: those it is constant over (none: it holds the
    whole row)."""

    rows: Tuple[Tuple[int, Tuple[int, ...], Tuple[int, ...]], ...]  # (d, dims below, stride)
    outer: Tuple[int, ...]
    inner: Tuple[int, ...]

    @staticmethod
    def product(dims: Tuple[int, ...], one: str = "1") -> str:
        return " * ".join(f"S{d}" for d in dims) or one

    def row_offset(self, div: str = "//", one: str = "1") -> str:
        """The offset of row ``r``'s part, spelled with ``div`` and the literal ``one``."""
        return " + ".join(f"((r {div} ({self.product(below, one)})) % S{d}) * "
                          f"({self.product(stride, one)})"
                          for d, below, stride in self.rows) or "0"


def block_index(in_shape: Tuple[int, ...], shape: Tuple[int, ...], k: int) -> BlockIndex:
    """The ``BlockIndex`` of an input of shape ``in_shape`` of class ``block`` (see
    ``block_split``) in a plan of ``shape`` reducing its last ``k`` dims."""
    n = len(shape)
    p = padded(tuple(in_shape), n)
    s = block_split(p, shape, k)
    rows = tuple((d, tuple(range(d + 1, n - k)), tuple(e for e in range(d + 1, n) if p[e] != 1))
                 for d in range(n - k) if p[d] != 1)
    return BlockIndex(rows, tuple(range(n - k, n - k + s)), tuple(range(n - k + s, n)))


def plan_rows(spec: GroupSpec, layouts: Tuple[str, ...] = ("rows",)) -> RowPlan:
    """The ``RowPlan`` of an analysed group with reductions, or ``Unsupported`` (module
    docstring: the executor then splits the group).  ``layouts``: the plan layouts the caller
    renders; a reduction over other dims than the trailing ones has a plan only for a caller
    that takes ``columns`` (``column_plan``), so a backend that knows only rows refuses it."""
    reds = spec.reductions
    if not all(r.trailing for r in reds):
        if "columns" not in layouts:
            raise Unsupported("unsupported reduction over dims that are not the last ones")
        return plan_columns(spec)
    shape, k = reds[0].in_shape, reds[0].k
    if any(r.in_shape != shape or r.k != k for r in reds):
        raise Unsupported("unsupported reductions of different shapes in one group")
    n = len(shape)
    rows, row = shape[:n - k], shape[n - k:]
    keep_shape = rows + (1,) * k
    classes: List[str] = []
    level: Dict[Value, int] = {}
    avail: Dict[Value, int] = {}
    for param, s in zip(spec.subgraph.inputs, spec.signature, strict=False):
        if not isinstance(s, ArraySpec):
            classes.append("scalar")
            level[param], avail[param] = 0, 0
            continue
        p = padded(s.shape, n)
        if p is None:
            raise Unsupported("unsupported input of a higher rank than the reduced tensor")
        if all(d == 1 for d in p):
            cls, lv = "uniform", 0
        elif s.layout != "C":
            raise Unsupported("unsupported non-contiguous input of a reduction group")
        elif p == shape:
            cls, lv = "full", 2
        elif all(d == 1 for d in p[:n - k]) and p[n - k:] == row:
            cls, lv = "rowvec", 2
        elif len(s.shape) == n and p == keep_shape:
            cls, lv = "perrow", 1
        elif block_split(p, shape, k) is not None:
            cls, lv = "block", 2
        else:
            raise Unsupported("unsupported input broadcast within a row or across some rows")
        classes.append(cls)
        level[param], avail[param] = lv, 0
    by_node = {o.node: o for o in spec.ops}
    by_red = {r.node: r for r in reds}
    ones = lambda t: all(d == 1 for d in t)  # noqa: E731
    for node in spec.subgraph.nodes:
        if node.kind == "prim::Constant":
            level[node.outputs[0]], avail[node.outputs[0]] = 0, 0
        elif node in by_red:
            r = by_red[node]
            if level[r.operand] != 2:
                raise Unsupported("unsupported reduction of a value that is not per element")
            if spec.values[r.operand].shape != shape:
                raise Unsupported("unsupported reduction of a value broadcast over the rows")
            for out in node.outputs:  # max.dim's indices: per row, as its values
                level[out] = 2 if r.red.per_element else 1
                avail[out] = avail[r.operand] + r.red.passes
        elif node in by_node:
            o = by_node[node]
            refs = [v for v in list(o.operands) + list(o.attrs.values()) if isinstance(v, Value)]
            lv = max([level[v] for v in refs], default=0)
            out_shape = spec.values[node.outputs[0]].shape
            if lv == 2:
                p = padded(out_shape, n)
                if p is None or any(a not in (1, b) for a, b in zip(p, shape)):
                    raise Unsupported("unsupported per-element value larger than the rows")
                for v in refs:
                    vs = spec.values[v].shape
                    if level[v] == 1 and not (ones(vs) or (len(vs) == n and vs == keep_shape)):
                        raise Unsupported("unsupported per-row value broadcast without keepdim")
            else:
                lv = 1 if lv == 1 or any(level[v] == 0 and spec.values[v].kind == ValueKind.ARRAY
                                         for v in refs) else lv
                if lv == 1 and not ((out_shape in (keep_shape, rows) or ones(out_shape)) and all(
                        level[v] != 1 or spec.values[v].shape == out_shape
                        or ones(spec.values[v].shape) for v in refs)):
                    raise Unsupported("unsupported per-row values of different shapes")
            level[node.outputs[0]] = lv
            avail[node.outputs[0]] = max([avail[v] for v in refs], default=0)
        else:
            raise Unsupported(f"unsupported {node.kind} in a reduction group")
    out_levels = []
    for v in kernel_outputs(spec):
        lv, vs = level.get(v, 0), spec.values[v].shape
        if lv == 2 and vs != shape:
            raise Unsupported("unsupported per-element output smaller than the rows")
        if lv == 1 and vs not in (keep_shape, rows):
            raise Unsupported("unsupported per-row output of another shape")
        if lv == 0:
            raise Unsupported("unsupported uniform output of a reduction group")
        out_levels.append(lv)
    passes = max(avail[r.node.outputs[0]] for r in reds)
    return RowPlan(tuple(shape), k, tuple(classes), level, avail, passes, tuple(out_levels))
