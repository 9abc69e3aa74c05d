"""Derivative rules of views, copies, pads, splits, diagonals and scans (see ``derivatives.py``
for the rule protocol; gathers, scatters, indexing and sorts are in ``derivatives_index.py``).

The formulas are PyTorch's (tools/autograd/derivatives.yaml): a permutation of elements (flip,
roll, rot90, movedim, channel/pixel shuffles) is undone by its inverse; a copy that repeats
elements (repeat, tile, repeat_interleave, unfold, reflect/replicate/circular pads) adds the
cotangents of all copies back into the element they came from (``index_add`` along each dim,
with the source positions computed from the static shapes); a piece of the input (narrow,
diagonal, a split, unbind) puts its cotangent back with zeros around it.  Scans: cumsum's
gradient is a reversed cumsum; cumprod's is ``reversed_cumsum(g * y) / x`` before the first
zero of a slice, the product of the others at that zero and 0 after it (PyTorch's
``cumprod_backward``, exact with zeros); logcumsumexp uses PyTorch's two log-space reversed
scans over the positive and negative parts of the cotangent; cummax/cummin add the cotangent
into the position each value came from (``scatter_add`` on the index output).  Shapes of the
inputs must be static (graphs are specialized to the primals); a rule raises
``UnsupportedOpError`` naming the node where one is not.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import DTYPE_TO_SCALAR_TYPE_ENUM, ListType, TensorType
from .derivatives import attach
from .derivatives_elementwise import _identity, _Ops, _rest
from .derivatives_structured import _list_items, _shape
from .registry import lookup

_INT64_MAX = 2 ** 63 - 1


# -- helpers (shared with derivatives_index.py) --------------------------------------------------

def fail(ctx, why):
    raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: {why}")


def static(ctx, i):
    """``ctx.static(i)``, also for a list built by ``prim::ListConstruct`` of constants (an
    empty ``dims`` list, for one)."""
    if i < len(ctx.node.inputs):
        v = ctx.node.inputs[i]
        src = v.node
        if not v.is_constant() and src is not None and src.kind == "prim::ListConstruct" \
                and all(a.is_constant() for a in src.inputs):
            return [a.constant_value() for a in src.inputs]
    return ctx.static(i)


def in_shape(ctx, i=0):
    """Node input i's static shape (the rule raises where it is unknown)."""
    s = _shape(ctx.node.inputs[i])
    if s is None:
        fail(ctx, f"the shape of its input {i} is unknown")
    return s


def dtype_enum(v):
    return DTYPE_TO_SCALAR_TYPE_ENUM.get(v.type.dtype) if isinstance(v.type, TensorType) else None


def zeros(ctx, shape, like=None):
    """``aten::zeros(shape)`` in the dtype of forward value ``like`` (node input 0)."""
    like = ctx.node.inputs[0] if like is None else like
    return ctx.emit("aten::zeros", [int(s) for s in shape], dtype_enum(like))


def wrap(d, rank):
    return d % rank if rank else 0


def is_none(ctx, i):
    """Whether node input i is absent or the constant None."""
    if i >= len(ctx.node.inputs):
        return True
    v = ctx.node.inputs[i]
    return v.is_constant() and v.constant_value() is None


def pad_dim(ctx, g, rank, dim, before, after):
    """``g`` padded along ``dim`` with zeros (negative widths crop)."""
    pad = []
    for d in reversed(range(rank)):
        pad += [before, after] if d == dim else [0, 0]
    return ctx.emit("aten::constant_pad_nd", g, pad, 0.0)


def join_pieces(ctx, parts, shapes, dim):
    """The cotangents of a list of pieces of the input (None: zeros) concatenated on ``dim``."""
    parts = list(parts) if isinstance(parts, list) else []
    parts += [None] * (len(shapes) - len(parts))
    pieces = [p if p is not None else zeros(ctx, s) for p, s in zip(parts, shapes)]
    if len(pieces) == 1:
        return pieces[0]
    return ctx.emit("aten::cat", ctx.emit("prim::ListConstruct", *pieces), dim)


def _piece_shapes(ctx, kind, *args):
    """The shapes of the pieces the forward op makes of the input (its own implementation, run
    on a broadcast zero of the input's shape: no memory)."""
    shape = in_shape(ctx)
    dummy = np.broadcast_to(np.zeros((), np.float32), shape)
    return [p.shape for p in lookup(kind).impl(np, dummy, *args)]


# -- permutations and views ---------------------------------------------------------------------

def _flip(ctx, grads):
    return [ctx.emit("aten::flip", grads[0], static(ctx, 1)), None]


def _flip_fixed(dim):
    return lambda ctx, grads: [ctx.emit("aten::flip", grads[0], [dim])]


def _roll(ctx, grads):
    shifts = static(ctx, 1)
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = static(ctx, 2)
    return [ctx.emit("aten::roll", grads[0], [-s for s in shifts], dims), None, None]


def _rot90(ctx, grads):
    return [ctx.emit("aten::rot90", grads[0], -static(ctx, 1), static(ctx, 2)), None, None]


def _reshape_to_input(ctx, grads):
    return _rest(ctx, [ctx.emit("aten::reshape", grads[0], list(in_shape(ctx)))])


def _movedim(ctx, grads):
    return [ctx.emit("aten::movedim", grads[0], static(ctx, 2), static(ctx, 1)), None, None]


def _mT(ctx, grads):
    return [ctx.emit("aten::transpose", grads[0], -2, -1)]


def _broadcast_tensors(ctx, grads):  # the engine sums each cotangent back to its input
    return [list(grads[0]) if isinstance(grads[0], list) else None]


def _atleast(ctx, grads):
    if isinstance(ctx.node.inputs[0].type, ListType):
        items = _list_items(ctx)
        parts = grads[0] if isinstance(grads[0], list) else []
        out = []
        for v, p in zip(items, parts + [None] * len(items)):
            s = _shape(v)
            if p is not None and s is None:
                fail(ctx, "the shape of a list item is unknown")
            out.append(None if p is None else ctx.emit("aten::reshape", p, list(s)))
        return [out]
    return _reshape_to_input(ctx, grads)


def _sum_to_size(ctx, grads):
    return [ctx.emit("aten::expand", grads[0], list(in_shape(ctx))), None]


# -- repeats ------------------------------------------------------------------------------------

def _sum_repeats(ctx, g, shape, reps):
    """PyTorch's ``repeat_backward``: each output dim split into (repeat, size), the repeat
    dims summed."""
    shape = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split = []
    for r, s in zip(reps, shape):
        split += [r, s]
    g = ctx.emit("aten::reshape", g, split)
    g = ctx.emit("aten::sum", g, list(range(0, 2 * len(reps), 2)))
    return ctx.emit("aten::reshape", g, list(in_shape(ctx)))


def _repeat(ctx, grads):
    return [_sum_repeats(ctx, grads[0], in_shape(ctx), list(static(ctx, 1))), None]


def _tile(ctx, grads):
    shape, dims = in_shape(ctx), list(static(ctx, 1))
    reps = [1] * (len(shape) - len(dims)) + dims
    return [_sum_repeats(ctx, grads[0], shape, reps), None]


def _repeat_interleave(ctx, grads):
    """int repeats: the copies summed (a reshape); tensor repeats: ``index_add`` of the
    cotangent at ``repeat_interleave(repeats)``, as PyTorch's index_select-based form."""
    if is_none(ctx, 1):
        return [None, None, None, None]
    shape, g = in_shape(ctx), grads[0]
    dim = static(ctx, 2) if not is_none(ctx, 2) else None
    flat = dim is None or not shape
    inp = (math.prod(shape),) if flat else shape
    d = 0 if flat else wrap(dim, len(shape))
    rv = ctx.node.inputs[1]
    if not isinstance(rv.type, TensorType):
        r = static(ctx, 1)
        split = list(inp[:d]) + [inp[d], r] + list(inp[d + 1:])
        gx = ctx.emit("aten::sum", ctx.emit("aten::reshape", g, split), [d + 1])
    else:
        if rv.is_constant():
            reps = np.broadcast_to(np.asarray(rv.constant_value()).reshape(-1), (inp[d],))
            index = np.repeat(np.arange(inp[d]), reps.astype(np.int64))
        else:
            reps = ctx.input(1)
            if _shape(rv) in ((), (1,)) and inp[d] != 1:
                reps = ctx.emit("aten::expand", ctx.emit("aten::reshape", reps, [1]), [inp[d]])
            index = ctx.emit("aten::repeat_interleave", reps)
        gx = ctx.emit("aten::index_add", zeros(ctx, inp), d, index, g)
    return [ctx.emit("aten::reshape", gx, list(shape)), None, None, None]


# -- pieces -------------------------------------------------------------------------------------

def _narrow(ctx, grads):
    shape = in_shape(ctx)
    d = wrap(static(ctx, 1), len(shape))
    start, length = static(ctx, 2), static(ctx, 3)
    start = start + shape[d] if start < 0 else start
    return [pad_dim(ctx, grads[0], len(shape), d, start, shape[d] - start - length),
            None, None, None]


def _unbind(ctx, grads):
    shape = in_shape(ctx)
    d = wrap(static(ctx, 1), len(shape))
    piece = shape[:d] + shape[d + 1:]
    parts = grads[0] if isinstance(grads[0], list) else []
    parts = (parts + [None] * shape[d])[:shape[d]]
    items = [p if p is not None else zeros(ctx, piece) for p in parts]
    return [ctx.emit("aten::stack", ctx.emit("prim::ListConstruct", *items), d), None]


def _split_like(dim_of):
    """tensor_split, hsplit/vsplit/dsplit, unsafe_chunk/split/split_with_sizes: the pieces'
    cotangents concatenated (zeros for a piece without one)."""
    def rule(ctx, grads):
        shape = in_shape(ctx)
        args = [static(ctx, i) for i in range(1, len(ctx.node.inputs))]
        shapes = _piece_shapes(ctx, ctx.node.kind, *args)
        return [join_pieces(ctx, grads[0], shapes, dim_of(ctx, shape))] + [None] * len(args)
    return rule


def _dim_arg(i, default=0):
    return lambda ctx, shape: wrap(static(ctx, i) if i < len(ctx.node.inputs) else default,
                                   len(shape))


_DIR_DIM = {"aten::hsplit": lambda ctx, s: 0 if len(s) == 1 else 1,
            "aten::vsplit": lambda ctx, s: 0, "aten::dsplit": lambda ctx, s: 2}


def _stack_like(ctx, grads):
    """hstack / vstack / dstack / column_stack: a cat of the items made at least 1-/2-/3-d
    (column_stack: 0-/1-d items as columns); each item gets its slice back, reshaped."""
    kind = ctx.node.kind.split("::")[1]
    items = _list_items(ctx)
    shapes = [_shape(v) for v in items]
    if None in shapes:
        fail(ctx, "the shape of a list item is unknown")
    n = {"hstack": 1, "column_stack": 1, "vstack": 2, "dstack": 3}[kind]
    dummies = [np.broadcast_to(np.zeros((), np.float32), s) for s in shapes]
    if kind == "column_stack":
        dummies = [t.reshape(t.size, 1) if t.ndim <= 1 else t for t in dummies]
    made = [lookup(f"aten::atleast_{n}d").impl(np, t).shape for t in dummies]
    dim = {"vstack": 0, "dstack": 2}.get(kind, 0 if len(made[0]) == 1 else 1)
    out, start = [], 0
    for s, m in zip(shapes, made):
        piece = ctx.emit("aten::slice", grads[0], dim, start, start + m[dim], 1)
        out.append(ctx.emit("aten::reshape", piece, list(s)))
        start += m[dim]
    return [out]


def _block_diag(ctx, grads):
    items = _list_items(ctx)
    shapes = [_shape(v) for v in items]
    if None in shapes:
        fail(ctx, "the shape of a list item is unknown")
    out, r, c = [], 0, 0
    for s in shapes:
        s2 = (1, s[0]) if len(s) == 1 else (1, 1) if not s else s
        piece = ctx.emit("aten::slice", grads[0], 0, r, r + s2[0], 1)
        piece = ctx.emit("aten::slice", piece, 1, c, c + s2[1], 1)
        out.append(ctx.emit("aten::reshape", piece, list(s)))
        r, c = r + s2[0], c + s2[1]
    return [out]


# -- diagonals ----------------------------------------------------------------------------------

def _diagonal(ctx, grads):
    z = zeros(ctx, in_shape(ctx))
    return [ctx.emit("aten::diagonal_scatter", z, grads[0], static(ctx, 1), static(ctx, 2),
                     static(ctx, 3)), None, None, None]


def _diag(ctx, grads):
    shape, k = in_shape(ctx), static(ctx, 1)
    if len(shape) == 1:
        return [ctx.emit("aten::diagonal", grads[0], k, 0, 1), None]
    return [ctx.emit("aten::diagonal_scatter", zeros(ctx, shape), grads[0], k, 0, 1), None]


def _diag_embed(ctx, grads):
    return [ctx.emit("aten::diagonal", grads[0], static(ctx, 1), static(ctx, 2), static(ctx, 3)),
            None, None, None]


def _diagflat(ctx, grads):
    g = ctx.emit("aten::diagonal", grads[0], static(ctx, 1), 0, 1)
    return [ctx.emit("aten::reshape", g, list(in_shape(ctx))), None]


def _trace(ctx, grads):
    shape = in_shape(ctx)
    g = ctx.emit("aten::expand", grads[0], [min(shape)])
    return [ctx.emit("aten::diagonal_scatter", zeros(ctx, shape), g, 0, 0, 1)]


# -- windows and pads ---------------------------------------------------------------------------

def _unfold(ctx, grads):
    """PyTorch's ``unfold_backward``: each window element's cotangent added into its source
    position (windows overlap where step < size)."""
    shape = in_shape(ctx)
    size, step, g = static(ctx, 2), static(ctx, 3), grads[0]
    if not shape:
        g = ctx.emit("aten::sum", g) if size else zeros(ctx, ())
        return [ctx.emit("aten::reshape", g, []), None, None, None]
    d = wrap(static(ctx, 1), len(shape))
    n = (shape[d] - size) // step + 1
    g = ctx.emit("aten::movedim", g, -1, d + 1)
    g = ctx.emit("aten::reshape", g, list(shape[:d]) + [n * size] + list(shape[d + 1:]))
    pos = (np.arange(n)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    return [ctx.emit("aten::index_add", zeros(ctx, shape), d, pos, g), None, None, None]


def _source_positions(mode, n, before, after):
    """For each output position along a padded dim of size n: the input position it copies."""
    j = np.arange(n + before + after)
    if mode == "circular":  # torchlike's circular pad: crop (negative pads), then wrap once
        lo, m = max(-before, 0), n - max(-before, 0) - max(-after, 0)
        return (j - max(before, 0)) % m + lo
    i = j - before
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    i = np.where(i < 0, -i, i)  # reflect, about the first and the last element
    return np.where(i >= n, 2 * (n - 1) - i, i)


def _gather_pads(ctx, g, mode, pad):
    """The cotangent of a reflect / replicate / circular pad: along each padded dim, every
    output position's cotangent added into the input position it copies."""
    shape = in_shape(ctx)
    rank = len(shape)
    cur = list(shape)
    for i in range(len(pad) // 2):
        cur[rank - 1 - i] += pad[2 * i] + pad[2 * i + 1]
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        pos = _source_positions(mode, shape[d], pad[2 * i], pad[2 * i + 1])
        cur[d] = shape[d]
        g = ctx.emit("aten::index_add", zeros(ctx, cur), d, pos, g)
    return g


def _constant_pad(ctx, grads):
    return [ctx.emit("aten::constant_pad_nd", grads[0], [-p for p in static(ctx, 1)], 0.0),
            None, None]


def _pad(ctx, grads):
    mode, pad = static(ctx, 2), list(static(ctx, 1))
    if mode == "constant":
        return _constant_pad(ctx, grads) + [None]
    return [_gather_pads(ctx, grads[0], mode, pad), None, None, None]


def _pad_nd(mode):
    return lambda ctx, grads: [_gather_pads(ctx, grads[0], mode, list(static(ctx, 1))), None]


def _channel_shuffle(ctx, grads):
    c = in_shape(ctx)[1]
    return [ctx.emit("aten::channel_shuffle", grads[0], c // static(ctx, 1)), None]


def _pixel(inverse):
    return lambda ctx, grads: [ctx.emit(inverse, grads[0], static(ctx, 1)), None]


# -- scans --------------------------------------------------------------------------------------

def _rev_cumsum(b, w, d):
    return b.flip(b.cumsum(b.flip(w, [d]), d), [d])


def _grad_in_input_dtype(ctx, g):
    """``grad.to(self.scalar_type())`` (a scan with ``dtype=`` computes in another dtype)."""
    e = dtype_enum(ctx.node.inputs[0])
    if e is not None and isinstance(g.type, TensorType) and g.type.dtype != \
            ctx.node.inputs[0].type.dtype:
        g = ctx.emit("aten::to", g, e)
    return g


def _scan_dim(ctx):
    return wrap(static(ctx, 1), len(in_shape(ctx)))


def _cumsum(ctx, grads):
    b, d = _Ops(ctx), _scan_dim(ctx)
    if not in_shape(ctx):
        return [grads[0], None, None]
    return [_rev_cumsum(b, _grad_in_input_dtype(ctx, grads[0]), d), None, None]


def _cumprod(ctx, grads):
    """PyTorch's ``cumprod_backward``, exact where a slice holds zeros: before its first zero
    ``reversed_cumsum(g * y) / x``; at the first zero ``reversed_cumsum(g * y')``, y' the
    cumprod with that zero replaced by 1; after it 0."""
    b, x = _Ops(ctx), ctx.input(0)
    if not in_shape(ctx):
        return [grads[0], None, None]
    d = _scan_dim(ctx)
    g = _grad_in_input_dtype(ctx, grads[0])
    is_zero = b.eq(x, 0.0)
    seen = b.cumsum(is_zero, d)
    before = b.eq(seen, 0)
    first = b.logical_and(is_zero, b.eq(seen, 1))
    head = b.div(_rev_cumsum(b, b.mul(g, ctx.output(0)), d), b.where(before, x, 1.0))
    y1 = b.cumprod(b.where(first, 1.0, x), d)
    at = _rev_cumsum(b, b.mul(g, y1), d)
    return [b.where(before, head, b.where(first, at, 0.0)), None, None]


def _logcumsumexp(ctx, grads):
    """PyTorch's ``logcumsumexp_backward``: the positive and negative parts of the cotangent
    accumulated in log space by reversed logcumsumexps."""
    b, g, x, y = _Ops(ctx), grads[0], ctx.input(0), ctx.output(0)
    if not in_shape(ctx):
        return [g, None]
    d = _scan_dim(ctx)
    lowest = float(np.finfo(np.dtype(ctx.node.inputs[0].type.dtype or "float64")).min)
    log_abs = b.log(b.abs(g))

    def part(mask):
        lg = b.sub(b.where(mask, log_abs, lowest), y)
        rev = b.flip(b.logcumsumexp(b.flip(lg, [d]), d), [d])
        return b.exp(b.add(rev, x))
    return [b.sub(part(b.gt(g, 0.0)), part(b.lt(g, 0.0))), None]


def _cum_extreme(ctx, grads):
    """cummax / cummin: PyTorch's ``cummaxmin_backward``, the values' cotangent added into the
    positions the index output names."""
    shape = in_shape(ctx)
    if not shape:
        return [grads[0], None]
    d = wrap(static(ctx, 1), len(shape))
    return [ctx.emit("aten::scatter_add", zeros(ctx, shape), d, ctx.output(1), grads[0]), None]


def _diff(ctx, grads):
    """diff(n, dim, prepend, append): the transpose of n neighbour differences over the
    concatenation, split back into prepend / self / append."""
    shape = in_shape(ctx)
    d = wrap(static(ctx, 2), len(shape))
    n = static(ctx, 1)
    lens = [0 if is_none(ctx, i) else in_shape(ctx, i)[d] for i in (3, 4)]
    total = shape[d] + sum(lens)
    g = grads[0]
    if total - n <= 0:
        g = zeros(ctx, shape[:d] + (total,) + shape[d + 1:])
    else:
        for _ in range(n):
            g = ctx.emit("aten::sub", pad_dim(ctx, g, len(shape), d, 1, 0),
                         pad_dim(ctx, g, len(shape), d, 0, 1))
    parts, start = [], 0
    for size in (lens[0], shape[d], lens[1]):
        parts.append(ctx.emit("aten::slice", g, d, start, start + size, 1) if size else None)
        start += size
    return [parts[1], None, None, parts[0], parts[2]]


RULES = {
    "aten::flip": _flip,
    "aten::fliplr": _flip_fixed(1),
    "aten::flipud": _flip_fixed(0),
    "aten::roll": _roll,
    "aten::rot90": _rot90,
    "aten::repeat": _repeat,
    "aten::tile": _tile,
    "aten::repeat_interleave": _repeat_interleave,
    "aten::narrow": _narrow,
    "aten::narrow_copy": _narrow,
    "aten::unbind": _unbind,
    "aten::view_as": _reshape_to_input,
    "aten::reshape_as": _reshape_to_input,
    "aten::ravel": _reshape_to_input,
    "aten::movedim": _movedim,
    "aten::moveaxis": _movedim,
    "aten::mT": _mT,
    "aten::mH": _mT,
    "aten::adjoint": _mT,
    "aten::matrix_H": _mT,
    "aten::broadcast_to": _identity,
    "aten::broadcast_tensors": _broadcast_tensors,
    "aten::atleast_1d": _atleast,
    "aten::atleast_2d": _atleast,
    "aten::atleast_3d": _atleast,
    "aten::sum_to_size": _sum_to_size,
    **{f"aten::{k}": _stack_like for k in ("hstack", "vstack", "dstack", "column_stack")},
    "aten::block_diag": _block_diag,
    "aten::tensor_split": _split_like(_dim_arg(2)),
    **{k: _split_like(f) for k, f in _DIR_DIM.items()},
    "aten::unsafe_chunk": _split_like(_dim_arg(2)),
    "aten::unsafe_split": _split_like(_dim_arg(2)),
    "aten::unsafe_split_with_sizes": _split_like(_dim_arg(2)),
    "aten::diagonal": _diagonal,
    "aten::diag": _diag,
    "aten::diag_embed": _diag_embed,
    "aten::diagflat": _diagflat,
    "aten::trace": _trace,
    "aten::unfold": _unfold,
    "aten::constant_pad_nd": _constant_pad,
    "aten::pad": _pad,
    **{f"aten::reflection_pad{n}d": _pad_nd("reflect") for n in (1, 2, 3)},
    **{f"aten::replication_pad{n}d": _pad_nd("replicate") for n in (1, 2, 3)},
    "aten::channel_shuffle": _channel_shuffle,
    "aten::native_channel_shuffle": _channel_shuffle,
    "aten::pixel_shuffle": _pixel("aten::pixel_unshuffle"),
    "aten::pixel_unshuffle": _pixel("aten::pixel_shuffle"),
    "aten::cumsum": _cumsum,
    "aten::cumprod": _cumprod,
    "aten::logcumsumexp": _logcumsumexp,
    "aten::cummax": _cum_extreme,
    "aten::cummin": _cum_extreme,
    "aten::diff": _diff,
}

attach(RULES)
