"""Derivative rules of indexing, gathers, scatters, embeddings and sorts (see ``derivatives.py``
for the rule protocol; the helpers come from ``derivatives_shape_more.py``).

PyTorch's formulas (tools/autograd/derivatives.yaml): a read at indices (``index``,
``index_select``, ``take``, ``take_along_dim``, ``masked_select``, ``embedding``) gives its
input the cotangent added back at those indices -- repeated indices accumulate (``index_put``
with ``accumulate=True``, ``index_add``, ``put``, ``scatter_add`` on zeros); a write at indices
(``scatter``, ``index_put``, ``index_copy``, ``index_fill``, the ``*_scatter`` ops) gives
``self`` the cotangent with the written positions zeroed and the written values the cotangent
read there (every duplicate gets it, even one that was overwritten, as PyTorch).  Ops that pick
values (``sort``, ``topk``, ``kthvalue``, ``mode``, ``median``/``nanmedian`` along a dim,
``msort``) put the cotangent at the positions their index output names
(``value_selecting_reduction_backward``), so ties follow the forward's indices; the full
``median``/``nanmedian`` shares it evenly among all elements equal to the result (PyTorch's
``evenly_distribute_backward``).  ``embedding`` skips ``padding_idx`` rows and, with
``scale_grad_by_freq``, divides each row's cotangent by its index's count in the batch; its
gradient is dense (``sparse=True`` too).  Integer index, mask and count inputs get none.
``scatter_reduce`` / ``index_reduce`` follow PyTorch's formulas for every reduction (prod exact
with zeros, amax/amin ties sharing evenly).  Also here: other copies with constant source
positions (``as_strided``, ``combinations``, ``cartesian_prod``, ``meshgrid``,
``prim::ConstantChunk``), ``cross``, ``vander`` and the trapezoid rules; ``unique*``,
``bincount`` and ``histogram`` raise (PyTorch implements no derivative), and ``histc``, the
``new_*`` factories and ``*_like`` random/empty tensors pass none (PyTorch's outputs carry no
gradient).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir.types import ListType, TensorType
from .derivatives import attach
from .derivatives_elementwise import _Ops, _zero
from .derivatives_shape_more import (
    dtype_enum,
    fail,
    in_shape,
    is_none,
    join_pieces,
    pad_dim,
    static,
    wrap,
    zeros,
)
from .derivatives_structured import _keep, _list_items, _shape
from .registry import lookup


def _fit_gathered(ctx, g, i):
    """A cotangent gathered at an index shape, zero-padded up to node input i's shape where
    the forward read only the leading part of it (scatter's ``src`` may be larger)."""
    s, gs = in_shape(ctx, i), _shape_like_index(ctx)
    if gs is None or gs == s or len(gs) != len(s):
        return g
    pad = []
    for a, b in reversed(list(zip(gs, s))):
        pad += [0, b - a]
    return ctx.emit("aten::constant_pad_nd", g, pad, 0.0)


def _shape_like_index(ctx):
    return _shape(ctx.node.inputs[2])


# -- reads --------------------------------------------------------------------------------------

def _index_select(ctx, grads):
    shape = in_shape(ctx)
    d = wrap(static(ctx, 1), len(shape))
    if not shape:
        return [ctx.emit("aten::reshape", ctx.emit("aten::sum", grads[0]), []), None, None]
    return [ctx.emit("aten::index_add", zeros(ctx, shape), d, ctx.input(2), grads[0]),
            None, None]


def _index(ctx, grads):
    """PyTorch's ``index_backward``: ``zeros.index_put_(indices, grad, accumulate=True)``."""
    z = zeros(ctx, in_shape(ctx))
    return [ctx.emit("aten::index_put", z, ctx.input(1), grads[0], True), None]


def _take(ctx, grads):
    z = zeros(ctx, in_shape(ctx))
    return [ctx.emit("aten::put", z, ctx.input(1), grads[0], True), None]


def _take_along_dim(ctx, grads):
    """The gather of the broadcast input undone: ``scatter_add`` into zeros of the broadcast
    shape (the engine sums the broadcast dims back)."""
    shape, ishape, g = in_shape(ctx), in_shape(ctx, 1), grads[0]
    if is_none(ctx, 2):
        flat = ctx.emit("aten::reshape", ctx.input(1), [-1])
        gx = ctx.emit("aten::scatter_add", zeros(ctx, [math.prod(shape)]), 0, flat,
                      ctx.emit("aten::reshape", g, [-1]))
        return [ctx.emit("aten::reshape", gx, list(shape)), None, None]
    d = wrap(static(ctx, 2), len(shape))
    big = [n if k == d else max(n, m) for k, (n, m) in enumerate(zip(shape, ishape))]
    ibig = [m if k == d else n for k, (n, m) in enumerate(zip(big, ishape))]
    idx = ctx.input(1)
    if list(ishape) != ibig:
        idx = ctx.emit("aten::expand", idx, ibig)
    return [ctx.emit("aten::scatter_add", zeros(ctx, big), d, idx, g), None, None]


def _broadcast_shape(ctx, a, b):
    return [int(n) for n in np.broadcast_shapes(in_shape(ctx, a), in_shape(ctx, b))]


def _masked_select(ctx, grads):
    """PyTorch's ``masked_select_backward``: zeros of the broadcast shape with the cotangent
    scattered into the mask's positions (summed back to ``self`` by the engine)."""
    z = zeros(ctx, _broadcast_shape(ctx, 0, 1))
    return [ctx.emit("aten::masked_scatter", z, ctx.input(1), grads[0]), None]


def _embedding(ctx, grads):
    """PyTorch's ``embedding_dense_backward``: each index's row of the cotangent added into its
    weight row; ``padding_idx`` rows get nothing; ``scale_grad_by_freq`` divides a row by how
    often its index occurs."""
    b = _Ops(ctx)
    num, dim = in_shape(ctx)
    pad, scale = static(ctx, 2), static(ctx, 3)
    idx = b.reshape(ctx.input(1), [-1])
    g = b.reshape(grads[0], [-1, dim])
    if pad is not None and pad >= 0:
        g = b.where(b.unsqueeze(b.ne(idx, pad), 1), g, 0.0)
    if scale:
        counts = b.index_add(zeros(ctx, [num]), 0, idx, b.ones_like(idx, _self_dtype(ctx)))
        g = b.div(g, b.unsqueeze(b.index_select(counts, 0, idx), 1))
    return [b.index_add(zeros(ctx, [num, dim]), 0, idx, g), None, None, None, None]


def _self_dtype(ctx):
    return dtype_enum(ctx.node.inputs[0])


# -- writes -------------------------------------------------------------------------------------

def _has_tensor(ctx, i):
    return i < len(ctx.node.inputs) and isinstance(ctx.node.inputs[i].type, TensorType)


def _scatter(add):
    """scatter (``src`` tensor or value) / scatter_add: ``self`` gets the cotangent (zeroed
    where scatter wrote), ``src`` the cotangent gathered at the index."""
    def rule(ctx, grads):
        b, g, d, idx = _Ops(ctx), grads[0], static(ctx, 1), ctx.input(2)
        gself = g if add else b.scatter(g, d, idx, 0.0)
        gsrc = _fit_gathered(ctx, b.gather(g, d, idx), 3) if _has_tensor(ctx, 3) else None
        return [gself, None, None, gsrc] + [None] * (len(ctx.node.inputs) - 4)
    return rule


def _along_index(ctx, g, i):
    """``grad.index_select(dim, index)`` shaped like node input i (the written source)."""
    sel = ctx.emit("aten::index_select", g, static(ctx, 1), ctx.input(2))
    return ctx.emit("aten::reshape", sel, list(in_shape(ctx, i)))


def _index_add(ctx, grads):
    alpha = static(ctx, 4)
    gsrc = _along_index(ctx, grads[0], 3)
    if alpha != 1:
        gsrc = ctx.emit("aten::mul", gsrc, alpha)
    return [grads[0], None, None, gsrc, None]


def _index_copy(ctx, grads):
    g, d, idx = grads[0], static(ctx, 1), ctx.input(2)
    return [ctx.emit("aten::index_fill", g, d, idx, 0.0), None, None, _along_index(ctx, g, 3)]


def _index_fill(ctx, grads):
    """``value`` (a 0-d tensor) gets the sum of the cotangent over the filled positions, each
    counted once (PyTorch sums over the unique indices)."""
    b, g, d, idx = _Ops(ctx), grads[0], static(ctx, 1), ctx.input(2)
    filled = b.index_fill(g, d, idx, 0.0)
    gval = b.sum(b.sub(g, filled)) if _has_tensor(ctx, 3) else None
    return [filled, None, None, gval]


def _index_put(ctx, grads):
    """``self``: the cotangent, zeroed at the written positions unless ``accumulate``;
    ``values``: the cotangent read at the indices (summed to its shape by the engine)."""
    b, g, ind = _Ops(ctx), grads[0], ctx.input(1)
    gself = g if static(ctx, 3) else b.index_put(g, ind, zeros(ctx, []), False)
    return [gself, None, b.index(g, ind), None]


def _put(ctx, grads):
    b, g, idx = _Ops(ctx), grads[0], ctx.input(1)
    gself = g if static(ctx, 3) else b.put(g, idx, zeros(ctx, in_shape(ctx, 2)), False)
    gsrc = b.reshape(b.take(g, idx), list(in_shape(ctx, 2)))
    return [gself, None, gsrc, None]


def _masked_scatter(ctx, grads):
    """``self``: the cotangent where the mask is off; ``source``: PyTorch's
    ``masked_scatter_backward`` -- the cotangent at the mask's positions, in order, in the
    first elements of ``source`` and zeros after (masked_scatter of it into the positions
    below the count)."""
    b, g, mask = _Ops(ctx), grads[0], ctx.input(1)
    gself = b.masked_fill(g, mask, 0.0)
    sshape = in_shape(ctx, 2)
    n = math.prod(sshape)
    full = _broadcast_shape(ctx, 0, 1)
    count = b.sum(b.expand(mask, full))
    first = b.lt(np.arange(n, dtype=np.int64), count)
    gsrc = b.masked_scatter(zeros(ctx, [n]), first, b.masked_select(g, mask))
    return [gself, None, b.reshape(gsrc, list(sshape))]


def _scatter_like(kind, read):
    """select_scatter / slice_scatter / diagonal_scatter(self, src, *args): ``self`` gets the
    cotangent with the written part zeroed, ``src`` the written part of it."""
    def rule(ctx, grads):
        g = grads[0]
        args = [static(ctx, i) for i in range(2, len(ctx.node.inputs))]
        z = zeros(ctx, in_shape(ctx, 1))
        return [ctx.emit(kind, g, z, *args), ctx.emit(read, g, *args)] + [None] * len(args)
    return rule


def _reduce_into(by_index):
    """scatter_reduce / index_reduce: PyTorch's ``scatter_reduce_backward`` /
    ``index_reduce_backward`` for sum, mean, prod (exact with zeros: a source that is the only
    zero of its target gets the product of the others) and amax / amin (ties share the cotangent
    evenly); ``include_self=False`` zeroes ``self``'s at the written positions."""
    def rule(ctx, grads):
        b, g, d, idx = _Ops(ctx), grads[0], static(ctx, 1), ctx.input(2)
        reduce, include = static(ctx, 4), static(ctx, 5)
        x, src, dt = ctx.input(0), ctx.input(3), _self_dtype(ctx)
        if by_index:
            def add(t, s): return b.index_add(t, d, idx, s)
            def read(t): return b.index_select(t, d, idx)
            def again(t, s): return b.index_reduce(t, d, idx, s, reduce, include)
        else:
            def add(t, s): return b.scatter_add(t, d, idx, s)
            def read(t): return b.gather(t, d, idx)
            def again(t, s): return b.scatter_reduce(t, d, idx, s, reduce, include)
        if reduce == "sum":
            gself, gsrc = g, read(g)
        elif reduce == "mean":
            n = add(b.ones_like(g) if include else b.zeros_like(g), b.ones_like(src))
            n = b.masked_fill(n, b.eq(n, 0.0), 1.0)
            gself, gsrc = b.div(g, n), b.div(read(g), read(n))
        elif reduce == "prod":
            masked = b.masked_fill(x, b.eq(x, 0.0), 1.0)
            gself = b.div(b.mul(g, again(masked, src)), masked)
            src_zero = b.eq(src, 0.0)
            zeros_at = read(add(b.zeros_like(x), b.to(src_zero, dt)))
            single = b.logical_and(src_zero, b.eq(zeros_at, 1.0))
            others = again(x, b.masked_fill(src, single, 1.0))
            gsrc = b.where(single, read(b.mul(g, others)),
                           b.div(read(b.mul(g, ctx.output(0))), b.masked_fill(src, src_zero, 1.0)))
        elif reduce in ("amax", "amin"):
            y = ctx.output(0)
            self_is, src_is = b.to(b.eq(x, y), dt), b.to(b.eq(src, read(y)), dt)
            share = b.div(g, add(self_is, src_is))
            gself, gsrc = b.mul(self_is, share), b.mul(src_is, read(share))
        else:
            fail(ctx, f"no rule for reduce={reduce!r}")
        if not include:
            gself = b.index_fill(gself, d, idx, 0.0) if by_index else b.scatter(gself, d, idx, 0.0)
        return [gself, None, None, gsrc, None, None]
    return rule


# -- picks --------------------------------------------------------------------------------------

def _pick(dim_at, keep_at):
    """sort / topk / kthvalue / mode / median.dim: the cotangent scattered to the positions of
    the index output (``value_selecting_reduction_backward``)."""
    def rule(ctx, grads):
        shape = in_shape(ctx)
        out = [None] * len(ctx.node.inputs)
        if not shape:
            out[0] = grads[0]
            return out
        at = dim_at + 1 if ctx.node.kind == "aten::sort" and len(ctx.node.inputs) == 4 \
            else dim_at  # sort.stable(self, stable, dim, descending)
        d = wrap(static(ctx, at), len(shape))
        keep = True if keep_at is None else static(ctx, keep_at)
        g, idx = _keep(ctx, grads[0], [d], keep), _keep(ctx, ctx.output(1), [d], keep)
        out[0] = ctx.emit("aten::scatter", zeros(ctx, shape), d, idx, g)
        return out
    return rule


def _median(ctx, grads):
    if len(ctx.node.outputs) > 1:
        return _pick(1, 2)(ctx, grads)
    # evenly_distribute_backward: among the elements equal to the result (NaN: the NaNs)
    b, x, y = _Ops(ctx), ctx.input(0), ctx.output(0)
    mask = b.where(b.isnan(y), b.isnan(x), b.eq(x, y))
    return [b.where(mask, b.div(grads[0], b.sum(mask)), 0.0)] + [None] * (
        len(ctx.node.inputs) - 1)


def _msort(ctx, grads):
    shape = in_shape(ctx)
    if not shape:
        return [grads[0]]
    idx = ctx.emit("aten::argsort", ctx.input(0), 0, False)  # msort's stable order
    return [ctx.emit("aten::scatter", zeros(ctx, shape), 0, idx, grads[0])]


def _list_length(v):
    """The static length of a list value: its ``ListConstruct``'s items, or the pieces its op
    makes of an input of static shape (run on a broadcast zero: no memory)."""
    src = v.node
    if src is None:
        return None
    if src.kind == "prim::ListConstruct":
        return len(src.inputs)
    op, shape = lookup(src.kind), _shape(src.inputs[0]) if src.inputs else None
    if op is None or shape is None or not all(a.is_constant() for a in src.inputs[1:]):
        return None
    dummy = np.broadcast_to(np.zeros((), np.float32), shape)
    try:
        return len(op.impl(np, dummy, *[a.constant_value() for a in src.inputs[1:]]))
    except Exception:  # not a list-making op after all: the rule says so
        return None


def _getitem(ctx, grads):
    """``list[i]`` of a list of tensors: a list cotangent with ``grads[0]`` at i."""
    if not isinstance(ctx.node.inputs[0].type, ListType):
        fail(ctx, "only a list's items have cotangents here")
    i = static(ctx, 1)
    if isinstance(i, int) and i < 0:
        n = _list_length(ctx.node.inputs[0])
        i = i + n if n is not None else i
    if not isinstance(i, int) or i < 0:
        fail(ctx, "a list item's index must be a constant int (and non-negative unless the "
                  "list is built in the graph)")
    return [[None] * i + [grads[0]], None]


# -- other copies and small products ---------------------------------------------------------

def _gather_flat(ctx, g, pos):
    """Zeros of the input's shape with ``g``'s elements added at the flat positions ``pos``
    (a constant of ``g``'s shape)."""
    shape = in_shape(ctx)
    flat = ctx.emit("aten::index_add", zeros(ctx, [math.prod(shape)]), 0,
                    np.asarray(pos, np.int64).reshape(-1), ctx.emit("aten::reshape", g, [-1]))
    return ctx.emit("aten::reshape", flat, list(shape))


def _as_strided(ctx, grads):
    """Each output element's cotangent added into the element of the (contiguous) input it
    reads; overlapping windows accumulate."""
    size, stride = static(ctx, 1), static(ctx, 2)
    offset = 0 if is_none(ctx, 3) else static(ctx, 3)
    pos = np.full(size, offset, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        pos += (np.arange(n) * st).reshape([-1 if j == k else 1 for j in range(len(size))])
    return [_gather_flat(ctx, grads[0], pos), None, None, None]


def _combinations(ctx, grads):
    (n,), r, rep = in_shape(ctx), static(ctx, 1), static(ctx, 2)
    if r == 0:
        return [None, None, None]
    pick = itertools.combinations_with_replacement if rep else itertools.combinations
    pos = np.array(list(pick(range(n), r)), np.int64).reshape(-1, r)
    return [_gather_flat(ctx, grads[0], pos), None, None]


def _items_shapes(ctx):
    shapes = [_shape(v) for v in _list_items(ctx)]
    if None in shapes:
        fail(ctx, "the shape of a list item is unknown")
    return shapes


def _sum_grid(ctx, g, grid, axis, shape):
    """A grid-shaped cotangent summed over every axis but ``axis``, shaped like the item."""
    others = [k for k in range(len(grid)) if k != axis]
    if others:
        g = ctx.emit("aten::sum", g, others)
    return ctx.emit("aten::reshape", g, list(shape))


def _cartesian_prod(ctx, grads):
    shapes = _items_shapes(ctx)
    if len(shapes) == 1:
        return [[grads[0]]]
    grid = [s[0] for s in shapes]
    return [[_sum_grid(ctx, ctx.emit("aten::reshape", ctx.emit("aten::select", grads[0], 1, i),
                                     grid), grid, i, s) for i, s in enumerate(shapes)]]


def _meshgrid(ctx, grads):
    shapes = _items_shapes(ctx)
    grid = [math.prod(s) for s in shapes]
    axes = list(range(len(shapes)))
    if static(ctx, 1) == "xy" and len(shapes) > 1:  # the first two axes swapped
        axes[0], axes[1] = 1, 0
        grid[0], grid[1] = grid[1], grid[0]
    parts = grads[0] if isinstance(grads[0], list) else []
    parts = parts + [None] * (len(shapes) - len(parts))
    return [[None if p is None else _sum_grid(ctx, p, grid, a, s)
             for p, a, s in zip(parts, axes, shapes)], None]


def _constant_chunk(ctx, grads):
    shape = in_shape(ctx)
    chunks, dim = ctx.node.attrs.get("chunks", len(ctx.node.outputs)), ctx.node.attrs.get("dim", 0)
    d = wrap(dim, len(shape))
    dummy = np.broadcast_to(np.zeros((), np.float32), shape)
    shapes = [p.shape for p in lookup("aten::chunk").impl(np, dummy, chunks, d)]
    return [join_pieces(ctx, list(grads), shapes, d)]


def _cross(ctx, grads):
    """PyTorch's: ``self``: cross(other, grad), ``other``: cross(grad, self) (the engine sums
    broadcast dims back)."""
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    dim = static(ctx, 2)
    if dim is None:  # aten::cross's default: the first dim of size 3
        dim = list(in_shape(ctx)).index(3)
    return [b.linalg_cross(y, g, dim), b.linalg_cross(g, x, dim), None]


def _vander(linalg):
    """sum_j g_j p_j x^(p_j - 1) over the columns' powers p_j (0 where p_j = 0)."""
    def rule(ctx, grads):
        b, g, x = _Ops(ctx), grads[0], ctx.input(0)
        shape = in_shape(ctx)
        n = (shape[-1] if shape else 1) if is_none(ctx, 1) else static(ctx, 1)
        p = np.arange(n, dtype=np.dtype(ctx.node.inputs[0].type.dtype))
        if not linalg and not static(ctx, 2):
            p = p[::-1].copy()
        t = b.mul(b.mul(g, p), b.pow(b.unsqueeze(x, -1), p - 1))
        gx = b.sum(b.where(p > 0, t, 0.0), [-1])
        return [b.reshape(gx, list(shape)), None, None][:len(ctx.node.inputs)]
    return rule


def _trapezoid(cumulative):
    """trapezoid / trapz / cumulative_trapezoid(y, x or dx, dim): the interval areas
    ``(x[j+1] - x[j]) (y[j+1] + y[j]) / 2`` get the cotangent (summed for the cumulative form:
    a reversed cumsum); each area's goes to its two ends of y and, for a tensor x, with
    opposite signs to its two ends of x."""
    def rule(ctx, grads):
        b, g, y = _Ops(ctx), grads[0], ctx.input(0)
        shape = in_shape(ctx)
        d = wrap(static(ctx, 2), len(shape))
        n, rank = shape[d], len(shape)
        if cumulative:
            a = b.flip(b.cumsum(b.flip(g, [d]), d), [d])
        else:
            a = b.expand(b.unsqueeze(g, d), [n - 1 if k == d else s for k, s in enumerate(shape)])
        lo = lambda t: pad_dim(ctx, t, rank, d, 0, 1)  # noqa: E731 -- area j -> y[j]
        hi = lambda t: pad_dim(ctx, t, rank, d, 1, 0)  # noqa: E731 -- area j -> y[j + 1]
        if not _has_tensor(ctx, 1):
            half = b.mul(a, float(static(ctx, 1)) / 2.0)
            return [b.add(lo(half), hi(half)), None, None]
        xs = in_shape(ctx, 1)
        view = [1] * d + [-1] + [1] * (rank - d - 1) if len(xs) == 1 else \
            [1] * (rank - len(xs)) + list(xs)
        xv = b.reshape(ctx.input(1), view)
        cut = lambda t, s, e: ctx.emit("aten::slice", t, d, s, e, 1)  # noqa: E731
        step = b.sub(cut(xv, 1, None), cut(xv, 0, -1))
        half = b.mul(a, 0.5)
        gy_area = b.mul(half, step)
        gx_step = b.mul(half, b.add(cut(y, 1, None), cut(y, 0, -1)))
        gxv = b.sub(hi(gx_step), lo(gx_step))
        full = _shape(gxv)
        vshape = [n if v == -1 else v for v in view]
        ones = [k for k, v in enumerate(vshape) if v == 1 and (full is None or full[k] != 1)]
        if ones:
            gxv = b.sum(gxv, ones, True)
        return [b.add(lo(gy_area), hi(gy_area)), b.reshape(gxv, list(xs)), None]
    return rule


def _not_in_pytorch(ctx, grads):
    fail(ctx, "PyTorch implements no derivative for it (its outputs depend on the input's "
              "values only through comparisons and counts)")


RULES = {
    "aten::index_select": _index_select,
    "aten::index": _index,
    "aten::take": _take,
    "aten::take_along_dim": _take_along_dim,
    "aten::masked_select": _masked_select,
    "aten::embedding": _embedding,
    "aten::scatter": _scatter(False),
    "aten::scatter_add": _scatter(True),
    "aten::scatter_reduce": _reduce_into(False),
    "aten::index_reduce": _reduce_into(True),
    "aten::index_add": _index_add,
    "aten::index_copy": _index_copy,
    "aten::index_fill": _index_fill,
    "aten::index_put": _index_put,
    "aten::put": _put,
    "aten::masked_scatter": _masked_scatter,
    "aten::select_scatter": _scatter_like("aten::select_scatter", "aten::select"),
    "aten::slice_scatter": _scatter_like("aten::slice_scatter", "aten::slice"),
    "aten::diagonal_scatter": _scatter_like("aten::diagonal_scatter", "aten::diagonal"),
    "aten::sort": _pick(1, None),
    "aten::topk": _pick(2, None),
    "aten::kthvalue": _pick(2, 3),
    "aten::mode": _pick(1, 2),
    "aten::median": _median,
    "aten::nanmedian": _median,
    "aten::msort": _msort,
    "aten::__getitem__": _getitem,
    "aten::as_strided": _as_strided,
    "aten::combinations": _combinations,
    "aten::cartesian_prod": _cartesian_prod,
    "aten::meshgrid": _meshgrid,
    "prim::ConstantChunk": _constant_chunk,
    "aten::list": lambda ctx, grads: [grads[0]],
    "aten::cross": _cross,
    "aten::linalg_cross": _cross,
    "aten::vander": _vander(False),
    "aten::linalg_vander": _vander(True),
    "aten::trapezoid": _trapezoid(False),
    "aten::trapz": _trapezoid(False),
    "aten::cumulative_trapezoid": _trapezoid(True),
    **{f"aten::{k}": _not_in_pytorch for k in ("_unique", "_unique2", "unique_dim",
                                               "unique_consecutive", "bincount", "histogram")},
    # values that PyTorch returns without a gradient path (counts, fresh tensors)
    **{f"aten::{k}": _zero for k in ("histc", "new_zeros", "new_ones", "new_full",
                                     "new_empty", "empty_like", "rand_like", "randn_like")},
}

attach(RULES)
