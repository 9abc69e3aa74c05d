"""Derivative rules of the remaining reductions and of the normalizations (see ``derivatives.py``
for the rule protocol), with PyTorch's formulas (tools/autograd/derivatives.yaml,
FunctionsManual.cpp) and conventions:

* ``prod`` multiplies the cotangent by the product of the *other* elements of its slice,
  computed as exclusive cumulative products from both ends (PyTorch's
  ``prod_safe_zeros_backward``), so one zero or several zeros in a slice need no division;
* ``norm`` / ``linalg_vector_norm`` / ``linalg_norm`` follow ``norm_backward``: p = 0 has no
  gradient, p = 1 is ``sgn``, a zero 2-norm gives 0 (not NaN), +-inf splits the cotangent
  evenly among the elements whose magnitude is the norm (or NaN), ``p < 1`` gives 0 at
  ``x == 0``; matrix norms: 'fro' is the 2-norm over the two dims, +-1 and +-inf go through
  their column / row sums (ties split evenly, as ``amax``); 'nuc' and +-2 (singular values)
  raise ``UnsupportedOpError``;
* ``nansum`` / ``nanmean`` give NaN positions 0 (an all-NaN slice of nanmean: NaN, as 0 / 0
  in PyTorch); ``std_mean`` gives 0 where the std is 0 (PyTorch's ``std_backward`` masks it);
  ``aminmax`` splits each cotangent among ties;
* layer / RMS / group / instance / batch norms recompute their statistics from the input (two
  row reductions) rather than saving them, as ``aten::layer_norm``'s rule does.  The saved
  statistics outputs of ``native_layer_norm`` / ``native_batch_norm`` /
  ``_native_batch_norm_legit_no_training`` are not differentiable in PyTorch (they never
  require grad): a cotangent given to them is dropped, as PyTorch treats them as constants.
  Running statistics get no gradient: PyTorch refuses ``requires_grad`` on them, and so does
  the rule (``UnsupportedOpError``).

``jit.vjp`` differentiates the captured graph before any fusion, so ``group_norm``,
``instance_norm``, ``rms_norm`` and eval-mode ``batch_norm`` are differentiated as such (the
fuser lowers them afterwards, in the forward graph).  Rules for the parts
``passes/decompose_norms.py`` lowers them to (``torchlike::group_norm_rows`` & co.) are here
too, for graphs that were lowered already.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import TensorType
from .derivatives import attach
from .derivatives_elementwise import _identity, _Ops, _rest
from .derivatives_structured import (
    _dims,
    _keep,
    _layer_norm,
    _need_rank,
    _rank,
    _shape,
    _size_value,
)

# -- helpers shared with derivatives_losses.py ------------------------------------------------


def is_none(ctx, i):
    """Whether node input i is absent (a trailing default) or the constant None."""
    if i >= len(ctx.node.inputs):
        return True
    v = ctx.node.inputs[i]
    return v.is_constant() and v.constant_value() is None


def needs_grad(ctx, i):
    """Whether node input i depends differentiably on the inputs being differentiated."""
    if is_none(ctx, i):
        return False
    return ctx.needs_grad(i)


def refuse_grad(ctx, indices, what):
    """PyTorch refuses ``requires_grad`` on some arguments (class weights, running statistics):
    raise when one of ``indices`` carries a gradient."""
    for i in indices:
        if needs_grad(ctx, i):
            raise UnsupportedOpError(f"no derivative for {ctx.node.describe()} with respect to "
                                     f"its {what} (input {i}): PyTorch does not differentiate "
                                     f"it either")


def static_shape(ctx, i):
    s = _shape(ctx.node.inputs[i])
    if s is None:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: the shape of its "
                                 f"input {i} is unknown")
    return s


def dtype_eps(v):
    """The machine epsilon of a value's compute dtype (float32 for half precision)."""
    dt = v.type.dtype if isinstance(v.type, TensorType) else None
    return float(np.finfo(np.float64 if dt == "float64" else np.float32).eps)


def norm_grad(ctx, g, x, y, p, dims, keepdim):
    """PyTorch's ``norm_backward``: the cotangent of ``x`` for ``y = ||x||_p`` over ``dims``;
    None for p = 0."""
    b = _Ops(ctx)
    g, y = _keep(ctx, g, dims, keepdim), _keep(ctx, y, dims, keepdim)
    p = float(p)
    if p == 0.0:
        return None
    if p == 1.0:
        return b.mul(b.sgn(x), g)
    if p == 2.0:
        return b.mul(g, b.where(b.eq(y, 0.0), 0.0, b.div(x, y)))
    if math.isinf(p):  # amax / amin of |x|, NaN counted as a maximum, ties sharing
        ax = b.abs(x)
        mask = b.logical_or(b.eq(ax, y), b.isnan(ax))
        share = b.div(g, b.sum(mask, dims, True))
        return b.mul(b.sgn(x), b.where(mask, share, 0.0))
    if p < 1.0:
        scaled = b.where(b.eq(x, 0.0), 0.0, b.mul(b.sgn(x), b.pow(b.abs(x), p - 1.0)))
        return b.mul(b.mul(scaled, g), b.pow(y, 1.0 - p))
    if p < 2.0:
        scaled = b.mul(b.sgn(x), b.pow(b.abs(x), p - 1.0))
    else:
        scaled = b.mul(x, b.pow(b.abs(x), p - 2.0))
    return b.mul(scaled, b.where(b.eq(y, 0.0), 0.0, b.div(g, b.pow(y, p - 1.0))))


def affine_view(ctx, p, rank):
    """A per-channel (C,) parameter viewed as (1, C, 1, ...) against a rank-``rank`` input."""
    return ctx.emit("aten::reshape", p, [1, -1] + [1] * (rank - 2))


def normalize_grad(b, g, xhat, rstd, dims):
    """Cotangent of ``x`` for ``xhat = (x - mean) * rstd`` over ``dims`` (batch statistics)."""
    inner = b.sub(b.sub(g, b.mean(g, dims, True)),
                  b.mul(xhat, b.mean(b.mul(g, xhat), dims, True)))
    return b.mul(rstd, inner)


# -- reductions --------------------------------------------------------------------------------

def _exclusive_prod(ctx, x, d, n, rank):
    """For each element, the product of the other elements of its slice along ``d``."""
    b = _Ops(ctx)
    if n <= 1:
        return b.ones_like(x)
    pad = []
    for k in reversed(range(rank)):
        pad += [1, 0] if k == d else [0, 0]

    def before(v):  # products of the elements before each one (1 for the first)
        return b.cumprod(b.constant_pad_nd(b.slice(v, d, 0, n - 1, 1), pad, 1.0), d)
    return b.mul(before(x), b.flip(before(b.flip(x, [d])), [d]))


def _prod(ctx, grads):
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    shape = static_shape(ctx, 0)
    rank = len(shape)
    if rank == 0:
        return _rest(ctx, [g])
    dim = ctx.static(1)
    if dim is None:  # over every element: the flattened input's slice
        flat = b.reshape(x, [-1])
        excl = _exclusive_prod(ctx, flat, 0, math.prod(shape), 1)
        return _rest(ctx, [b.mul(b.reshape(excl, list(shape)), g)])
    d = dim % rank
    g = _keep(ctx, g, [d], ctx.static(2))
    return _rest(ctx, [b.mul(g, _exclusive_prod(ctx, x, d, shape[d], rank))])


def _vector_norm(ctx, grads):  # linalg_vector_norm(x, ord, dim, keepdim, dtype)
    rank = _need_rank(ctx)
    p = ctx.static(1)
    return _rest(ctx, [norm_grad(ctx, grads[0], ctx.input(0), ctx.output(0),
                                 2 if p is None else p, _dims(ctx, 2, rank), ctx.static(3))])


def _dist(ctx, grads):  # dist(a, b, p): the p-norm of a - b over every element
    b, ranks = _Ops(ctx), [_rank(v) for v in ctx.node.inputs[:2]]
    if None in ranks:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: the rank of an "
                                 f"input is unknown")
    d = norm_grad(ctx, grads[0], b.sub(ctx.input(0), ctx.input(1)), ctx.output(0),
                  ctx.static(2), list(range(max(ranks))), False)
    return [d, None if d is None else b.neg(d), None]


def _norm(ctx, grads):
    """``aten::norm``'s overloads: ``(p)``, ``(p, dim, keepdim[, dtype])``; p None or 'fro'
    is 2, 'nuc' has no rule here."""
    rank = _need_rank(ctx)
    p = ctx.static(1) if len(ctx.node.inputs) > 1 else None
    if p == "nuc":
        _refuse_svd(ctx, p)
    p = 2 if p in (None, "fro") else p
    dims = _dims(ctx, 2, rank) if len(ctx.node.inputs) > 2 else list(range(rank))
    keep = bool(ctx.static(3)) if len(ctx.node.inputs) > 3 else False
    return _rest(ctx, [norm_grad(ctx, grads[0], ctx.input(0), ctx.output(0), p, dims, keep)])


def _refuse_svd(ctx, ord):
    raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: the matrix norm of "
                             f"order {ord!r} goes through singular values, which have no rule")


def _matrix_norm_grad(ctx, g, ord, dims, keepdim):
    x = ctx.input(0)
    if ord in (None, "fro"):
        return norm_grad(ctx, g, x, ctx.output(0), 2, dims, keepdim)
    if ord in ("nuc", 2, -2):
        _refuse_svd(ctx, ord)
    # +-1: the max / min over d1 of the column sums over d0; +-inf: the row sums (PyTorch's
    # ``amax(abs(x).sum(d0), d1)``), the cotangent shared among tied sums as amax's
    b = _Ops(ctx)
    d0, d1 = dims if abs(float(ord)) == 1 else dims[::-1]
    sums = b.sum(b.abs(x), [d0], True)
    best = (b.amax if float(ord) > 0 else b.amin)(sums, [d1], True)
    mask = b.eq(sums, best)
    g = _keep(ctx, g, sorted(dims), keepdim)
    return b.mul(b.sgn(x), b.where(mask, b.div(g, b.sum(mask, [d1], True)), 0.0))


def _linalg_norm(ctx, grads):  # linalg_norm(x, ord=None, dim=None, keepdim, dtype)
    rank = _need_rank(ctx)
    ord, dim, keep = ctx.static(1), ctx.static(2), ctx.static(3)
    dims = [dim] if isinstance(dim, int) else (list(dim) if dim else None)
    if ord is None and not dims:
        return _rest(ctx, [norm_grad(ctx, grads[0], ctx.input(0), ctx.output(0), 2,
                                     list(range(rank)), keep)])
    if dims is None:
        dims = list(range(rank))
    dims = [d % rank for d in dims]
    if len(dims) == 1:
        return _rest(ctx, [norm_grad(ctx, grads[0], ctx.input(0), ctx.output(0),
                                     2 if ord is None else ord, dims, keep)])
    return _rest(ctx, [_matrix_norm_grad(ctx, grads[0], ord, dims, keep)])


def _linalg_matrix_norm(ctx, grads):  # linalg_matrix_norm(x, ord='fro', dim=[-2,-1], keepdim)
    rank = _need_rank(ctx)
    dims = [d % rank for d in ctx.static(2)]
    return _rest(ctx, [_matrix_norm_grad(ctx, grads[0], ctx.static(1), dims, ctx.static(3))])


def _nansum(ctx, grads):
    """``g * ~isnan(x)`` (PyTorch's ``nansum_backward``: a product, so an infinite or NaN
    cotangent still gives NaN there)."""
    b, x = _Ops(ctx), ctx.input(0)
    dims = _dims(ctx, 1, _need_rank(ctx))
    g = _keep(ctx, grads[0], dims, ctx.static(2))
    return _rest(ctx, [b.mul(g, b.logical_not(b.isnan(x)))])


def _nanmean(ctx, grads):
    """nansum / the count of the non-NaN elements (PyTorch's composite): an all-NaN slice
    divides by 0 and gets NaN, as in PyTorch."""
    b, x = _Ops(ctx), ctx.input(0)
    dims = _dims(ctx, 1, _need_rank(ctx))
    g = _keep(ctx, grads[0], dims, ctx.static(2))
    keep = b.logical_not(b.isnan(x))
    return _rest(ctx, [b.mul(b.div(g, b.sum(keep, dims, True)), keep)])


def _var_args(ctx):
    """(dims, correction, keepdim) of var_mean / std_mean: ``(unbiased)`` or
    ``(dim, correction or unbiased, keepdim)``."""
    rank = _need_rank(ctx)
    node = ctx.node
    if len(node.inputs) == 2 and isinstance(ctx.static(1), bool):
        return list(range(rank)), int(ctx.static(1)), False
    corr = ctx.static(2)
    return _dims(ctx, 1, rank), 1 if corr is None else int(corr), bool(ctx.static(3))


def _spread_mean(std):
    """var_mean / std_mean: outputs (var or std, mean)."""
    def rule(ctx, grads):
        b, x = _Ops(ctx), ctx.input(0)
        dims, corr, keep = _var_args(ctx)
        count = math.prod(static_shape(ctx, 0)[d] for d in dims)
        out = None
        if grads[0] is not None:
            g = _keep(ctx, grads[0], dims, keep)
            if std:  # std_backward: var's cotangent g / (2 std), 0 where std is 0
                y = _keep(ctx, ctx.output(0), dims, keep)
                g = b.where(b.eq(y, 0.0), 0.0, b.div(g, b.mul(y, 2.0)))
            dof = count - corr
            scale = 2.0 / dof if dof > 0 else math.inf
            out = b.mul(b.mul(g, scale), b.sub(x, b.mean(x, dims, True)))
        if grads[1] is not None:
            gm = b.div(_keep(ctx, grads[1], dims, keep), float(max(count, 1)))
            out = gm if out is None else b.add(out, gm)
        return _rest(ctx, [out])
    return rule


def _aminmax(ctx, grads):
    """(min, max): each cotangent shared evenly among the elements equal to its result."""
    b, x = _Ops(ctx), ctx.input(0)
    rank = _need_rank(ctx)
    dim, keep = ctx.static(1), bool(ctx.static(2))
    dims = list(range(rank)) if dim is None else [dim % max(rank, 1)]
    out = None
    for i, g in enumerate(grads):
        if g is None:
            continue
        if rank == 0:
            part = g
        else:
            y = _keep(ctx, ctx.output(i), dims, keep)
            mask = b.eq(x, y)
            g = _keep(ctx, g, dims, keep)
            part = b.where(mask, b.div(g, b.sum(mask, dims, True)), 0.0)
        out = part if out is None else b.add(out, part)
    return _rest(ctx, [out])


# -- normalizations ----------------------------------------------------------------------------

def _rms_norm(ctx, grads):
    """``x * rstd * w``, ``rstd = rsqrt(mean(x^2) + eps)`` over the trailing dims; eps None is
    the compute dtype's machine epsilon, as the forward."""
    b, g, x = _Ops(ctx), grads[0], ctx.input(0)
    dims = list(range(-len(ctx.static(1)), 0))
    eps = ctx.static(3)
    eps = dtype_eps(ctx.node.inputs[0]) if eps is None else eps
    rstd = b.rsqrt(b.add(b.mean(b.mul(x, x), dims, True), eps))
    xhat = b.mul(x, rstd)
    has_w = not is_none(ctx, 2)
    gh = b.mul(g, ctx.input(2)) if has_w else g
    gx = b.mul(rstd, b.sub(gh, b.mul(xhat, b.mean(b.mul(gh, xhat), dims, True))))
    return [gx, None, b.mul(g, xhat) if has_w else None, None]


def _grouped_grad(ctx, g, x, groups, eps, iw, ib):
    """Group norm of ``x`` (N, C, *) over ``groups`` groups (``instance_norm``: C groups), its
    per-channel weight and bias node inputs ``iw`` / ``ib``: the cotangents (x, w, b)."""
    b = _Ops(ctx)
    shape = static_shape(ctx, 0)
    n, rank = shape[0], len(shape)
    rows = [n, groups, -1]
    xr = b.reshape(x, rows)
    xc = b.sub(xr, b.mean(xr, [2], True))
    rstd = b.rsqrt(b.add(b.mean(b.mul(xc, xc), [2], True), eps))
    xhat_r = b.mul(xc, rstd)
    has_w, has_b = not is_none(ctx, iw), not is_none(ctx, ib)
    gh = b.mul(g, affine_view(ctx, ctx.input(iw), rank)) if has_w else g
    gx = b.reshape(normalize_grad(b, b.reshape(gh, rows), xhat_r, rstd, [2]), list(shape))
    other = [0] + list(range(2, rank))
    gw = b.sum(b.mul(g, b.reshape(xhat_r, list(shape))), other) if has_w else None
    return gx, gw, b.sum(g, other) if has_b else None


def _group_norm(ctx, grads):  # group_norm(x, num_groups, weight, bias, eps, cudnn)
    gx, gw, gb = _grouped_grad(ctx, grads[0], ctx.input(0), ctx.static(1), ctx.static(4), 2, 3)
    return [gx, None, gw, gb, None, None]


def _affine_eval(ctx, g, mean_i, var_i, eps, iw, ib):
    """``(x - mean) * rsqrt(var + eps) * w + b`` with given per-channel statistics (eval-mode
    batch norm; an instance norm without input statistics): the cotangents (x, w, b)."""
    b, x = _Ops(ctx), ctx.input(0)
    rank = len(static_shape(ctx, 0))
    invstd = b.rsqrt(b.add(affine_view(ctx, ctx.input(var_i), rank), eps))
    has_w, has_b = not is_none(ctx, iw), not is_none(ctx, ib)
    scale = b.mul(invstd, affine_view(ctx, ctx.input(iw), rank)) if has_w else invstd
    other = [0] + list(range(2, rank))
    gw = None
    if has_w:
        xhat = b.mul(b.sub(x, affine_view(ctx, ctx.input(mean_i), rank)), invstd)
        gw = b.sum(b.mul(g, xhat), other)
    return b.mul(g, scale), gw, b.sum(g, other) if has_b else None


def _batch_stats_grad(ctx, g, eps, iw, ib):
    """Training-mode batch norm: statistics over every dim but the channels' (dim 1); the
    cotangents (x, w, b)."""
    b, x = _Ops(ctx), ctx.input(0)
    rank = len(static_shape(ctx, 0))
    dims = [0] + list(range(2, rank))
    xc = b.sub(x, b.mean(x, dims, True))
    rstd = b.rsqrt(b.add(b.mean(b.mul(xc, xc), dims, True), eps))
    xhat = b.mul(xc, rstd)
    has_w, has_b = not is_none(ctx, iw), not is_none(ctx, ib)
    gh = b.mul(g, affine_view(ctx, ctx.input(iw), rank)) if has_w else g
    return (normalize_grad(b, gh, xhat, rstd, dims),
            b.sum(b.mul(g, xhat), dims) if has_w else None, b.sum(g, dims) if has_b else None)


_RUNNING = "running statistics"


def _batch_norm(ctx, grads):
    """batch_norm(x, w, b, running_mean, running_var, training, momentum, eps, cudnn)."""
    refuse_grad(ctx, (3, 4), _RUNNING)
    eps = ctx.static(7)
    if ctx.static(5):
        gx, gw, gb = _batch_stats_grad(ctx, grads[0], eps, 1, 2)
    else:
        gx, gw, gb = _affine_eval(ctx, grads[0], 3, 4, eps, 1, 2)
    return _rest(ctx, [gx, gw, gb])


def _native_batch_norm(ctx, grads):
    """native_batch_norm(x, w, b, running_mean, running_var, training, momentum, eps) ->
    (y, save_mean, save_invstd): only y is differentiable (as in PyTorch)."""
    refuse_grad(ctx, (3, 4), _RUNNING)
    if grads[0] is None:
        return _rest(ctx, [])
    eps = ctx.static(7)
    if ctx.static(5):
        return _rest(ctx, list(_batch_stats_grad(ctx, grads[0], eps, 1, 2)))
    return _rest(ctx, list(_affine_eval(ctx, grads[0], 3, 4, eps, 1, 2)))


def _legit_no_training(ctx, grads):
    """_native_batch_norm_legit_no_training(x, w, b, running_mean, running_var, momentum, eps):
    eval mode (its statistics outputs are empty)."""
    refuse_grad(ctx, (3, 4), _RUNNING)
    if grads[0] is None:
        return _rest(ctx, [])
    return _rest(ctx, list(_affine_eval(ctx, grads[0], 3, 4, ctx.static(6), 1, 2)))


def _instance_norm(ctx, grads):
    """instance_norm(x, w, b, running_mean, running_var, use_input_stats, momentum, eps,
    cudnn): with input statistics, a group norm of C groups (the running statistics, updated
    in place by the forward, are not differentiated); without, an affine map per channel."""
    refuse_grad(ctx, (3, 4), _RUNNING)
    eps = ctx.static(7)
    if ctx.static(5):
        channels = static_shape(ctx, 0)[1]
        gx, gw, gb = _grouped_grad(ctx, grads[0], ctx.input(0), channels, eps, 1, 2)
    else:
        gx, gw, gb = _affine_eval(ctx, grads[0], 3, 4, eps, 1, 2)
    return _rest(ctx, [gx, gw, gb])


def _native_layer_norm(ctx, grads):
    """native_layer_norm(x, normalized_shape, w, b, eps) -> (y, mean, rstd): only y is
    differentiable (as in PyTorch), with ``aten::layer_norm``'s rule."""
    if grads[0] is None:
        return _rest(ctx, [])
    return _layer_norm(ctx, grads[:1])[:5]


# -- the parts passes/decompose_norms.py lowers norms to ----------------------------------------

def _view_back(ctx, grads):  # group_norm_rows / _param, group_rows_of: views of their input
    return _rest(ctx, [ctx.emit("aten::reshape", grads[0], _size_value(ctx, 0))])


def _batch_norm_affine(ctx, grads):
    """(scale, shift) = (w * rsqrt(var + eps), b - mean * scale), shaped (1, C, 1, ...): the
    weight's and bias's cotangents (running statistics: none, as for batch_norm)."""
    refuse_grad(ctx, (3, 4), _RUNNING)
    b = _Ops(ctx)
    gs, gsh = grads
    invstd = b.rsqrt(b.add(ctx.input(4), ctx.static(5)))
    gw = gb = None
    if gsh is not None:
        gb = b.reshape(gsh, [-1]) if not is_none(ctx, 2) else None
        gs2 = b.mul(b.reshape(gsh, [-1]), b.neg(ctx.input(3)))
    else:
        gs2 = None
    if not is_none(ctx, 1):
        parts = [p for p in (None if gs is None else b.reshape(gs, [-1]), gs2) if p is not None]
        if parts:
            gw = b.mul(parts[0] if len(parts) == 1 else b.add(parts[0], parts[1]), invstd)
    return [None, gw, gb, None, None, None]


RULES = {
    "aten::prod": _prod,
    "aten::norm": _norm,
    "aten::linalg_vector_norm": _vector_norm,
    "aten::dist": _dist,
    "aten::linalg_norm": _linalg_norm,
    "aten::linalg_matrix_norm": _linalg_matrix_norm,
    "aten::nansum": _nansum,
    "aten::nanmean": _nanmean,
    "aten::var_mean": _spread_mean(False),
    "aten::std_mean": _spread_mean(True),
    "aten::aminmax": _aminmax,
    "aten::rms_norm": _rms_norm,
    "aten::group_norm": _group_norm,
    "aten::instance_norm": _instance_norm,
    "aten::batch_norm": _batch_norm,
    "aten::native_layer_norm": _native_layer_norm,
    "aten::native_batch_norm": _native_batch_norm,
    "aten::_native_batch_norm_legit_no_training": _legit_no_training,
    "torchlike::norm_input": _identity,      # the input passed on (weight, bias: checks only)
    "torchlike::cast_like": _identity,
    "torchlike::add_dtype_eps": _identity,
    "torchlike::group_norm_rows": _view_back,
    "torchlike::group_norm_param": _view_back,
    "torchlike::group_rows_of": _view_back,
    "torchlike::batch_norm_affine": _batch_norm_affine,
}

attach(RULES)
