"""Derivative rules of reductions, normalizations, matmuls, views and list/tuple plumbing
(see ``derivatives.py`` for the rule protocol).

Reductions broadcast the cotangent back over the reduced dims (``unsqueeze`` + ``expand``);
``amax``/``amin`` (and full ``max``/``min``) share it evenly among tied maxima, as PyTorch does;
``var``/``std``/``layer_norm`` recompute the mean from the input rather than saving it.  Lists
and tuples carry a Python list of cotangents (one per element, None for none), so
``chunk`` -> ``ListUnpack`` and ``ListConstruct`` -> ``cat`` compose.
"""
from __future__ import annotations

import math

from ..errors import UnsupportedOpError
from ..ir.types import DTYPE_TO_SCALAR_TYPE_ENUM, TensorType
from .derivatives import attach
from .derivatives_elementwise import _identity, _minmax, _Ops, _rest, _zero


def _shape(v):
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and None not in t.shape:
        return tuple(t.shape)
    return None


def _rank(v):
    t = v.type
    return t.rank if isinstance(t, TensorType) else None


def _size_value(ctx, i):
    """Node input i's shape as a backward value (a constant when known)."""
    s = _shape(ctx.node.inputs[i])
    return ctx.const(list(s)) if s is not None else ctx.emit("aten::size", ctx.input(i))


def _dims(ctx, i, rank):
    """The reduced dims (normalized, sorted) of a reduction whose dim argument is input i."""
    d = ctx.static(i) if i < len(ctx.node.inputs) else None
    if d is None or d == []:
        return list(range(rank))
    d = [d] if isinstance(d, int) else list(d)
    return sorted(x % rank if rank else 0 for x in d)


def _need_rank(ctx):
    r = _rank(ctx.node.inputs[0])
    if r is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: the rank of its "
                                 f"input is unknown")
    return r


def _keep(ctx, g, dims, keepdim):
    """A reduced value with its reduced dims kept (size 1)."""
    if keepdim:
        return g
    for d in dims:
        g = ctx.emit("aten::unsqueeze", g, d)
    return g


def _expand_back(ctx, g, dims, keepdim):
    """A reduction's cotangent with its dims kept: it broadcasts over the reduced dims (the
    engine expands it only where a consumer needs the exact shape)."""
    return _keep(ctx, g, dims, keepdim)


def _count(ctx, dims):
    s = _shape(ctx.node.inputs[0])
    if s is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its input's "
                                 f"shape is unknown")
    return math.prod(s[d] for d in dims)


def _sum(ctx, grads):
    rank = _need_rank(ctx)
    dims = _dims(ctx, 1, rank)
    return _rest(ctx, [_expand_back(ctx, grads[0], dims, ctx.static(2))])


def _mean(ctx, grads):
    rank = _need_rank(ctx)
    dims = _dims(ctx, 1, rank)
    g = ctx.emit("aten::div", grads[0], float(max(_count(ctx, dims), 1)))
    return _rest(ctx, [_expand_back(ctx, g, dims, ctx.static(2))])


def _extreme(ctx, grads, dims, keepdim):
    """amax/amin: the cotangent split evenly among the elements equal to the result."""
    b, x = _Ops(ctx), ctx.input(0)
    y = _keep(ctx, ctx.output(0), dims, keepdim)
    g = _keep(ctx, grads[0], dims, keepdim)
    mask = b.eq(x, y)
    count = b.sum(mask, dims, True)
    return b.where(mask, b.div(g, count), 0.0)


def _amax(ctx, grads):
    rank = _need_rank(ctx)
    return _rest(ctx, [_extreme(ctx, grads, _dims(ctx, 1, rank), ctx.static(2))])


def _max_or_min(kind):
    pair = _minmax("lt" if kind == "max" else "gt")

    def rule(ctx, grads):
        node = ctx.node
        if len(node.inputs) == 2 and isinstance(node.inputs[1].type, TensorType):
            return pair(ctx, grads)
        full = all(v.is_constant() and v.constant_value() in (None, False)
                   for v in node.inputs[1:])
        if full and len(node.outputs) == 1:
            return [_extreme(ctx, grads, list(range(_need_rank(ctx))), False)]
        # max(x, dim, keepdim) -> (values, indices): the cotangent goes to the selected
        # index (PyTorch's value_selecting_reduction_backward), not split among ties
        rank = _need_rank(ctx)
        dim = ctx.static(1) % max(rank, 1)
        keep = ctx.static(2)
        g, idx = _keep(ctx, grads[0], [dim], keep), _keep(ctx, ctx.output(1), [dim], keep)
        b = _Ops(ctx)
        return [b.scatter(b.zeros_like(ctx.input(0)), dim, idx, g), None, None]
    return rule


def _gather(ctx, grads):
    b = _Ops(ctx)
    dim = ctx.static(1)
    return [b.scatter_add(b.zeros_like(ctx.input(0)), dim, ctx.input(2), grads[0]), None,
            None, None]


def _slice(ctx, grads):
    """A unit-step slice: its cotangent padded with zeros back to the input's size."""
    shape = _shape(ctx.node.inputs[0])
    dim, start, end, step = (ctx.static(i) for i in range(1, 5))
    if shape is None or step != 1:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: only unit-step "
                                 f"slices of known shapes")
    dim %= len(shape)
    lo, hi, _ = slice(start, end, 1).indices(shape[dim])
    hi = max(hi, lo)
    pad = []
    for d in reversed(range(len(shape))):
        pad += [lo, shape[dim] - hi] if d == dim else [0, 0]
    return [ctx.emit("aten::constant_pad_nd", grads[0], pad, 0.0), None, None, None, None]


def _var_terms(ctx):
    """(dims, count - correction, x - mean, keepdim) of var/std, also for the
    ``var(self, bool unbiased)`` overload (every dim)."""
    rank = _need_rank(ctx)
    first = ctx.static(1)
    if isinstance(first, bool):
        dims, corr, keep = list(range(rank)), int(first), False
    else:
        dims, corr, keep = _dims(ctx, 1, rank), ctx.static(2), ctx.static(3)
    n = _count(ctx, dims) - (1 if corr is None else corr)
    b, x = _Ops(ctx), ctx.input(0)
    xc = b.sub(x, b.mean(x, dims, True))
    return dims, float(n), xc, bool(keep)


def _var(ctx, grads):
    b = _Ops(ctx)
    dims, n, xc, keep = _var_terms(ctx)
    g = _keep(ctx, grads[0], dims, keep)
    return _rest(ctx, [b.mul(g, b.mul(xc, 2.0 / n))])


def _std(ctx, grads):
    """PyTorch's std_backward: 0 where the std is 0 (a constant slice), not 0 / 0."""
    b = _Ops(ctx)
    dims, n, xc, keep = _var_terms(ctx)
    g = _keep(ctx, grads[0], dims, keep)
    y = _keep(ctx, ctx.output(0), dims, keep)
    d = b.div(b.mul(g, xc), b.mul(y, n))
    return _rest(ctx, [b.where(b.eq(y, 0.0), 0.0, d)])


def _logsumexp(ctx, grads):
    b = _Ops(ctx)
    dims = _dims(ctx, 1, _need_rank(ctx))
    keep = ctx.static(2)
    g, y = _keep(ctx, grads[0], dims, keep), _keep(ctx, ctx.output(0), dims, keep)
    return [b.mul(g, b.exp(b.sub(ctx.input(0), y))), None, None]


def _softmax(ctx, grads):
    b, g, y, d = _Ops(ctx), grads[0], ctx.output(0), ctx.static(1)
    return [b.mul(y, b.sub(g, b.sum(b.mul(g, y), [d], True))), None, None]


def _log_softmax(ctx, grads):
    b, g, y, d = _Ops(ctx), grads[0], ctx.output(0), ctx.static(1)
    return [b.sub(g, b.mul(b.exp(y), b.sum(g, [d], True))), None, None]


# -- matrix products -----------------------------------------------------------------------------

def _mT(b, v):
    return b.transpose(v, -1, -2)


def _matmul(ctx, grads):
    """Cotangents of ``a @ b`` for every rank combination (batch broadcasting is summed back by
    the engine)."""
    b, g = _Ops(ctx), grads[0]
    x, y = ctx.input(0), ctx.input(1)
    ra, rb = _rank(ctx.node.inputs[0]), _rank(ctx.node.inputs[1])
    if ra is None or rb is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: unknown ranks")
    if ra == 1 and rb == 1:
        return [b.mul(g, y), b.mul(g, x)]
    if ra == 1:   # (k) @ (..., k, m) -> (..., m)
        gx = b.squeeze(b.matmul(y, b.unsqueeze(g, -1)), -1)
        gy = b.mul(b.unsqueeze(x, -1), b.unsqueeze(g, -2))
        return [gx, gy]
    if rb == 1:   # (..., n, k) @ (k) -> (..., n)
        gx = b.mul(b.unsqueeze(g, -1), y)
        gy = b.squeeze(b.matmul(_mT(b, x), b.unsqueeze(g, -1)), -1)
        return [gx, gy]
    return [b.matmul(g, _mT(b, y)), b.matmul(_mT(b, x), g)]


def _linear(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    x, w = ctx.input(0), ctx.input(1)
    gx = b.matmul(g, w)
    if _rank(ctx.node.inputs[0]) == 1:
        gw = b.mul(b.unsqueeze(g, 1), b.unsqueeze(x, 0))
    else:
        out_f, in_f = _shape(ctx.node.inputs[1]) or (-1, -1)
        gw = b.mm(b.t(b.reshape(g, [-1, out_f])), b.reshape(x, [-1, in_f]))
    has_bias = not (ctx.node.inputs[2].is_constant()
                    and ctx.node.inputs[2].constant_value() is None)
    return [gx, gw, g if has_bias else None]


def _addmm(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    beta, alpha = ctx.static(3), ctx.static(4)
    m1, m2 = ctx.input(1), ctx.input(2)
    g1, g2 = b.mm(g, b.t(m2)), b.mm(b.t(m1), g)
    if alpha != 1:
        g1, g2 = b.mul(g1, alpha), b.mul(g2, alpha)
    return [g if beta == 1 else b.mul(g, beta), g1, g2, None, None]


def _layer_norm(ctx, grads):
    """The mean and 1/std are recomputed from the input (two row reductions) instead of saved."""
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    k = len(ctx.static(1))
    dims = list(range(-k, 0))
    node = ctx.node
    has_w = not (node.inputs[2].is_constant() and node.inputs[2].constant_value() is None)
    has_b = not (node.inputs[3].is_constant() and node.inputs[3].constant_value() is None)
    xc = b.sub(x, b.mean(x, dims, True))
    rstd = b.rsqrt(b.add(b.mean(b.mul(xc, xc), dims, True), ctx.static(4)))
    xhat = b.mul(xc, rstd)
    gh = b.mul(g, ctx.input(2)) if has_w else g
    inner = b.sub(b.sub(gh, b.mean(gh, dims, True)), b.mul(xhat, b.mean(b.mul(gh, xhat),
                                                                        dims, True)))
    return [b.mul(rstd, inner), None, b.mul(g, xhat) if has_w else None,
            g if has_b else None, None, None]


# -- views -----------------------------------------------------------------------------------

def _reshape_back(ctx, grads):
    return _rest(ctx, [ctx.emit("aten::reshape", grads[0], _size_value(ctx, 0))])


def _transpose(ctx, grads):
    return [ctx.emit("aten::transpose", grads[0], ctx.static(1), ctx.static(2)), None, None]


def _permute(ctx, grads):
    dims = ctx.static(1)
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return [ctx.emit("aten::permute", grads[0], inverse), None]


def _t(ctx, grads):
    return [ctx.emit("aten::t", grads[0])]


def _expand(ctx, grads):  # the engine sums the cotangent back to the input's shape
    return _rest(ctx, [grads[0]])


def _chunk(ctx, grads):
    """Cotangents of the chunks (a list) concatenated; a chunk without one is zeros."""
    parts = grads[0]
    shape = _shape(ctx.node.inputs[0])
    chunks, dim = ctx.static(1), ctx.static(2)
    if not isinstance(parts, list) or shape is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its input's "
                                 f"shape is unknown")
    dim %= len(shape)
    step = -(-shape[dim] // chunks)
    sizes = [min(step, shape[dim] - i) for i in range(0, shape[dim], step)]
    dtype = DTYPE_TO_SCALAR_TYPE_ENUM.get(ctx.node.inputs[0].type.dtype)
    pieces = []
    for size, p in zip(sizes, parts + [None] * len(sizes)):
        if p is None:
            s = list(shape)
            s[dim] = size
            p = ctx.emit("aten::zeros", s, dtype)
        pieces.append(p)
    return [ctx.emit("aten::cat", ctx.emit("prim::ListConstruct", *pieces), dim), None, None]


def _split(ctx, grads):
    """split / split_with_sizes: like chunk, the pieces' cotangents concatenated."""
    shape = _shape(ctx.node.inputs[0])
    sizes, dim = ctx.static(1), ctx.static(2)
    if shape is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its input's "
                                 f"shape is unknown")
    dim %= len(shape)
    if isinstance(sizes, int):
        sizes = [min(sizes, shape[dim] - i) for i in range(0, shape[dim], sizes)]
    dtype = DTYPE_TO_SCALAR_TYPE_ENUM.get(ctx.node.inputs[0].type.dtype)
    parts = grads[0] if isinstance(grads[0], list) else []
    pieces = []
    for size, p in zip(sizes, parts + [None] * len(sizes)):
        if p is None:
            s = list(shape)
            s[dim] = size
            p = ctx.emit("aten::zeros", s, dtype)
        pieces.append(p)
    return [ctx.emit("aten::cat", ctx.emit("prim::ListConstruct", *pieces), dim), None, None]


def _select(ctx, grads):
    shape = _shape(ctx.node.inputs[0])
    if shape is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its input's "
                                 f"shape is unknown")
    dim = ctx.static(1) % len(shape)
    i = ctx.static(2) % shape[dim]
    g = ctx.emit("aten::unsqueeze", grads[0], dim)
    pad = []
    for d in reversed(range(len(shape))):
        pad += [i, shape[dim] - 1 - i] if d == dim else [0, 0]
    return [ctx.emit("aten::constant_pad_nd", g, pad, 0.0), None, None]


def _tri(kind):
    def rule(ctx, grads):
        return [ctx.emit(kind, grads[0], ctx.static(1)), None]
    return rule


def _pointwise_loss(kind):
    """mse_loss / l1_loss with reduction none (0), mean (1) or sum (2)."""
    def rule(ctx, grads):
        b, g = _Ops(ctx), grads[0]
        diff = b.sub(ctx.input(0), ctx.input(1))
        d = b.mul(diff, 2.0) if kind == "mse" else b.sgn(diff)
        if ctx.static(2) == 1:
            g = b.div(g, float(max(math.prod(_shape(ctx.node.inputs[0]) or (1,)), 1)))
        gx = b.mul(g, d)
        return [gx, b.neg(gx), None]
    return rule


def _glu(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    dim = ctx.static(1)
    first, second = (ctx.emit("aten::chunk", ctx.input(0), 2, dim),) * 2
    a = b.__getitem__(first, 0)
    s = b.sigmoid(b.__getitem__(second, 1))
    ga = b.mul(g, s)
    gb = b.mul(b.mul(ga, a), b.rsub(s, 1.0))
    return [b.cat(ctx.emit("prim::ListConstruct", ga, gb), dim), None]


def _baddbmm(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    beta, alpha = ctx.static(3), ctx.static(4)
    g1 = b.bmm(g, _mT(b, ctx.input(2)))
    g2 = b.bmm(_mT(b, ctx.input(1)), g)
    if alpha != 1:
        g1, g2 = b.mul(g1, alpha), b.mul(g2, alpha)
    return [g if beta == 1 else b.mul(g, beta), g1, g2, None, None]


def _list_items(ctx):
    src = ctx.node.inputs[0].node
    if src is None or src.kind != "prim::ListConstruct":
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its list is not "
                                 f"built by prim::ListConstruct in the graph")
    return src.inputs


def _cat(ctx, grads):
    return [_cat_slices(ctx, _list_items(ctx), ctx.static(1), grads[0]), None]


def _fused_concat(ctx, grads):
    """``prim::FusedConcat[dim=d](%a, %b, ...)``: a fusion group's cat output, cat's rule."""
    return _cat_slices(ctx, ctx.node.inputs, ctx.node.attrs.get("dim", 0), grads[0])


def _cat_slices(ctx, items, dim, g):
    """Each of ``items``' slice of the cotangent ``g`` of their cat along ``dim``."""
    out, start = [], 0
    for v in items:
        s = _shape(v)
        if s is None:
            raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: an input's "
                                     f"shape is unknown")
        d = dim % len(s)
        out.append(ctx.emit("aten::slice", g, d, start, start + s[d], 1))
        start += s[d]
    return out


def _stack(ctx, grads):
    items = _list_items(ctx)
    dim = ctx.static(1)
    rank = _rank(items[0]) + 1
    return [[ctx.emit("aten::select", grads[0], dim % rank, i) for i in range(len(items))],
            None]


def _construct(ctx, grads):  # ListConstruct / TupleConstruct: the list's items
    parts = grads[0] or []
    return list(parts) + [None] * (len(ctx.node.inputs) - len(parts))


def _unpack(ctx, grads):  # ListUnpack / TupleUnpack: one list for the input
    return [list(grads)]


def _tuple_index(ctx, grads):
    i = ctx.static(1)
    n = len(ctx.node.inputs[0].type.elems)
    parts = [None] * n
    parts[i % n] = grads[0]
    return [parts, None]


RULES = {
    "aten::sum": _sum,
    "aten::mean": _mean,
    "aten::amax": _amax,
    "aten::amin": _amax,
    "aten::max": _max_or_min("max"),
    "aten::min": _max_or_min("min"),
    "aten::var": _var,
    "aten::std": _std,
    "aten::logsumexp": _logsumexp,
    "aten::softmax": _softmax,
    "aten::log_softmax": _log_softmax,
    "aten::_softmax": _softmax,  # (x, dim, half_to_float): the same cotangent
    "aten::_log_softmax": _log_softmax,
    "aten::matmul": _matmul,
    "aten::mm": _matmul,
    "aten::bmm": _matmul,
    "aten::linear": _linear,
    "aten::addmm": _addmm,
    "aten::layer_norm": _layer_norm,
    "aten::reshape": _reshape_back,
    "aten::view": _reshape_back,
    "aten::flatten": _reshape_back,
    "aten::squeeze": _reshape_back,
    "aten::unsqueeze": _reshape_back,
    "aten::transpose": _transpose,
    "aten::permute": _permute,
    "aten::t": _t,
    "aten::numpy_T": lambda ctx, grads: [ctx.emit("aten::numpy_T", grads[0])],
    "aten::expand": _expand,
    "aten::expand_as": _expand,
    "aten::contiguous": _identity,
    "aten::clone": _identity,
    "aten::detach": _zero,
    "aten::chunk": _chunk,
    "aten::split": _split,
    "aten::split_with_sizes": _split,
    "aten::select": _select,
    "aten::unflatten": _reshape_back,
    "aten::tril": _tri("aten::tril"),
    "aten::triu": _tri("aten::triu"),
    "aten::mse_loss": _pointwise_loss("mse"),
    "aten::l1_loss": _pointwise_loss("l1"),
    "aten::glu": _glu,
    "aten::baddbmm": _baddbmm,
    "aten::gather": _gather,
    "aten::slice": _slice,
    "aten::cat": _cat,
    "prim::FusedConcat": _fused_concat,
    "aten::stack": _stack,
    "prim::ListConstruct": _construct,
    "prim::TupleConstruct": _construct,
    "prim::ListUnpack": _unpack,
    "prim::TupleUnpack": _unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::unchecked_cast": _identity,  # Optional[Tensor] -> Tensor after an `is None` check
}

attach(RULES)
