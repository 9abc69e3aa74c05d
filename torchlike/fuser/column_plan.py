"""The ``columns`` layout of a reduction group: the reduced dims are a contiguous range
``[a, b)`` of the input's dims, followed by at least one kept dim (``x.sum(0)`` of an
``(N, C)`` tensor, ``x.softmax(1)`` of ``(B, N, C)``, batch-norm style statistics over the
leading dims).  The shape is seen as ``(O, R, I)`` = (the dims before ``a``, the reduced ones,
the dims after ``b``); a C-contiguous input is then ``O`` blocks of ``R`` rows of ``I``
contiguous elements, and the fast loop nest is *transposed*: for each outer index (and block
of columns, in parallel) the ``R`` rows are swept one after the other while an inner loop over
the contiguous columns -- vectorized -- accumulates into one accumulator per column.

Each input is one of: ``full`` (the whole shape, read at ``(o * R + r) * I + i``),
``perrow`` (the keepdim shape ``outer + 1s + inner``: one value per column, read at
``o * I + i``), ``colvec`` (only the inner dims, broadcast over the rest: read at ``i``),
``rowval`` (the dims up to the reduced ones, 1 for the inner ones: one value per reduced row,
broadcast over the columns -- the per-row ``rsqrt(var)`` a layer norm's weight gradient
multiplies by; read once per row at ``o * R + r``; what is computed from such inputs alone,
``rsqrt(var + eps)``, is per row too), ``uniform`` (size 1), ``scalar``.  Levels
as in the row layout: 2 per element, 1 one value per (outer, column) -- kept in a small array
per block of columns --, 0 uniform.  A per-column
value may meet per-element ones when its shape broadcasts like the keepdim shape (every dim 1
or the keepdim shape's): ``x - x.mean(0)`` of ``(N, C)`` without keepdim is such a case.

``Unsupported`` (the executor then splits the group) for reduced dims that are not one
contiguous range, reductions of different dims or shapes in one group, a non-contiguous
input, an input broadcast over some reduced or outer dims but not others, per-column values
whose broadcast would not be per column, outputs of other shapes, ``ConstantChunk``.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from ..ir.graph import Value
from .backend import ArraySpec, GroupSpec, Unsupported, ValueKind
from .kernel_spec import kernel_outputs
from .row_reduce import RowPlan, padded

__all__ = ["plan_columns", "column_range"]


def column_range(dims: Tuple[int, ...], n: int):
    """``(a, b)`` when ``dims`` are the contiguous range ``[a, b)`` with ``b < n``, else None."""
    if not dims or dims != tuple(range(dims[0], dims[-1] + 1)) or dims[-1] >= n - 1:
        return None
    return dims[0], dims[-1] + 1


def plan_columns(spec: GroupSpec) -> RowPlan:
    """The ``columns`` ``RowPlan`` of an analysed group (module docstring), or ``Unsupported``."""
    reds = spec.reductions
    shape, dims = reds[0].in_shape, reds[0].dims
    if any(r.in_shape != shape or r.dims != dims for r in reds):
        raise Unsupported("unsupported reductions of different dims or shapes in one group")
    n = len(shape)
    ab = column_range(dims, n)
    if ab is None:
        raise Unsupported(f"unsupported reduction over dims {list(dims)} of a {n}-d tensor "
                          "(not one contiguous range)")
    a, b = ab
    keep_shape = shape[:a] + (1,) * (b - a) + shape[b:]
    kept = shape[:a] + shape[b:]
    colvec = (1,) * b + shape[b:]
    rowval = shape[:b] + (1,) * (n - b)
    within = lambda t: (lambda p: p is not None and all(  # noqa: E731
        x in (1, y) for x, y in zip(p, keep_shape)))(padded(t, n))
    ones = lambda t: all(d == 1 for d in t)  # noqa: E731
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
        if ones(p):
            cls, lv = "uniform", 0
        elif s.layout != "C":
            raise Unsupported("unsupported non-contiguous input of a reduction group")
        elif p == shape:
            cls, lv = "full", 2
        elif p == keep_shape:
            cls, lv = "perrow", 1
        elif p == colvec:
            cls, lv = "colvec", 1
        elif p == rowval:
            cls, lv = "rowval", 2
        else:
            raise Unsupported("unsupported input broadcast over some reduced or outer dims")
        classes.append(cls)
        level[param], avail[param] = lv, 0
    by_node = {o.node: o for o in spec.ops}
    by_red = {r.node: r for r in reds}
    for node in spec.subgraph.nodes:
        if node.kind == "prim::Constant":
            level[node.outputs[0]], avail[node.outputs[0]] = 0, 0
        elif node in by_red:
            r = by_red[node]
            if level[r.operand] != 2 or spec.values[r.operand].shape != shape:
                raise Unsupported("unsupported reduction of a value that is not per element")
            for out in node.outputs:  # max.dim's indices: per row, as its values
                level[out] = 2 if r.red.per_element else 1
                avail[out] = avail[r.operand] + r.red.passes
        elif node in by_node:
            o = by_node[node]
            refs = [v for v in list(o.operands) + list(o.attrs.values()) if isinstance(v, Value)]
            lv = max([level[v] for v in refs], default=0)
            out_shape = spec.values[node.outputs[0]].shape
            if lv == 2:
                # a value of the row's shape computed from per-row inputs only (rsqrt(var +
                # eps)): per element as far as the loop nest goes, invariant in the inner loop
                per_row = padded(out_shape, n) == rowval and all(
                    padded(spec.values[v].shape, n) == rowval for v in refs if level[v] == 2)
                if out_shape != shape and not per_row:
                    raise Unsupported("unsupported per-element value of another shape")
                if any(level[v] == 1 and not within(spec.values[v].shape) for v in refs):
                    raise Unsupported("unsupported per-column value broadcast over other dims")
            else:
                lv = 1 if lv == 1 or any(level[v] == 0 and spec.values[v].kind == ValueKind.ARRAY
                                         for v in refs) else lv
                if lv == 1 and not within(out_shape):
                    raise Unsupported("unsupported per-column value of another shape")
            level[node.outputs[0]] = lv
            avail[node.outputs[0]] = max([avail[v] for v in refs], default=0)
        else:
            raise Unsupported(f"unsupported {node.kind} in a reduction group")
    out_levels = []
    for v in kernel_outputs(spec):
        lv, vs = level.get(v, 0), spec.values[v].shape
        if lv == 2 and vs != shape:
            raise Unsupported("unsupported per-element output smaller than the input")
        if lv == 1 and vs not in (keep_shape, kept):
            raise Unsupported("unsupported per-column output of another shape")
        if lv == 0:
            raise Unsupported("unsupported uniform output of a reduction group")
        out_levels.append(lv)
    passes = max(avail[r.node.outputs[0]] for r in reds)
    return RowPlan(tuple(shape), b - a, tuple(classes), level, avail, passes, tuple(out_levels),
                   layout="columns", dims=tuple(dims))
