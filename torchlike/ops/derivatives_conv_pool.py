"""Derivative rules of convolutions, pools, fold/unfold and resampling (see ``derivatives.py``
for the rule protocol).

* convolution (``conv1d/2d/3d``, ``convolution``, ``_convolution``, ``_convolution_mode``,
  ``conv_transpose1d/2d/3d``): a convolution's input gradient is the transposed convolution of
  the cotangent (``output_padding`` takes up the rows a stride left over, a slice drops the
  extra row of an odd ``"same"`` padding), its weight gradient ``torchlike::conv_weight_backward``
  and its bias gradient the cotangent summed over all but the channel dim; a transposed
  convolution is the adjoint of the convolution with the same weight, so its input gradient
  is that convolution of the cotangent and its weight gradient the convolution's weight
  gradient with input and cotangent swapped;
* max pools (plain, ``_with_indices``, adaptive): the cotangent goes to the index of each
  window's first maximum (PyTorch's choice among ties), summed where windows overlap
  (``scatter_add`` over the flat spatial index); the plain pools recompute the indices
  (``torchlike::max_pool_indices``); ``max_unpool2d/3d`` gathers back from the indices;
* average pools (``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``) and upsampling (every
  ``upsample_*`` / ``_upsample_nearest_exact*`` op) are separable linear maps: the backward ops
  in ``backward_ops.py`` apply each dim's matrix transposed; ``im2col`` and ``col2im`` are each
  other's adjoints;
* ``grid_sampler`` (bilinear or nearest; zeros, border or reflection padding): input and grid
  gradients from ``torchlike::grid_sampler_backward`` (bicubic: no rule); ``affine_grid_generator``:
  ``theta``'s gradient is the cotangent (N, H*W, k) transposed times the base grid (H*W, k+1),
  a constant.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import DTYPE_TO_SCALAR_TYPE_ENUM
from .conv_pool import _conv_geometry, _ints, _pool_geometry
from .derivatives import attach
from .derivatives_elementwise import _Ops, _rest
from .derivatives_structured import _shape
from .resample import _sizes
from .tensor_grid import _linspace


def _fail(ctx, why):
    return UnsupportedOpError(f"no derivative for {ctx.node.describe()}: {why}")


def _shape_of(ctx, i=0):
    s = _shape(ctx.node.inputs[i])
    if s is None:
        raise _fail(ctx, f"the shape of its input {i} is unknown")
    return s


def _st(ctx, i):
    """Input i's constant value; an ``int[]`` built by ``prim::ListConstruct`` of constants
    (an empty ``stride=[]``, a list of traced ints) too."""
    node = ctx.node
    if i < len(node.inputs) and not node.inputs[i].is_constant():
        src = node.inputs[i].node
        if src is not None and src.kind == "prim::ListConstruct" and all(
                e.is_constant() for e in src.inputs):
            return [e.constant_value() for e in src.inputs]
    return ctx.static(i)


def _none(ctx, i):
    node = ctx.node
    return i >= len(node.inputs) or (node.inputs[i].is_constant()
                                     and node.inputs[i].constant_value() is None)


def _dtype_enum(ctx, i=0):
    return DTYPE_TO_SCALAR_TYPE_ENUM.get(ctx.node.inputs[i].type.dtype)


def _fit_size(b, v, sizes, first):
    """``v`` cut to ``sizes`` in its dims ``first``, ``first + 1``, ... where it is longer."""
    got = _shape(v)
    for i, size in enumerate(sizes):
        if got is None or got[first + i] > size:
            v = b.slice(v, first + i, 0, size, 1)
    return v


# -- convolution ---------------------------------------------------------------------------------

def _conv_grads(ctx, g, stride, padding, dilation, groups, transposed=False):
    """(input, weight, bias) cotangents of a convolution whose input may be unbatched (a
    transposed one's ``output_padding`` only sets the output size, which the cotangent has)."""
    b = _Ops(ctx)
    x, w = ctx.input(0), ctx.input(1)
    xs, ws = _shape_of(ctx, 0), _shape_of(ctx, 1)
    n = len(ws) - 2
    batched = len(xs) == n + 2
    if not batched:
        x, g, xs = b.unsqueeze(x, 0), b.unsqueeze(g, 0), (1,) + xs
    kernel, spatial = ws[2:], xs[2:]
    bad = lambda what: lambda got: f"bad {what} {got}"  # noqa: E731  (the forward checked)
    d = list(_ints(dilation, n, bad("dilation")))
    if not transposed:
        pads, s, _, out = _conv_geometry(spatial, kernel, stride, padding, dilation)
        lo, s = [p for p, _ in pads], list(s)
        full = [(o - 1) * si - 2 * p + di * (k - 1) + 1
                for o, si, p, di, k in zip(out, s, lo, d, kernel)]
        extra = [max(0, size - f) for size, f in zip(spatial, full)]  # < stride: rows left over
        if n not in (1, 2, 3):
            raise _fail(ctx, f"a convolution over {n} dims")
        # conv_transposeNd, not convolution(transposed=True): the latter's type rule gives
        # the shape of a plain convolution; the size is set by the reshape below
        gx = ctx.emit(f"aten::conv_transpose{n}d", g, w, None, s, lo, extra, groups, d)
        for i, (size, f, e) in enumerate(zip(spatial, full, extra)):
            if f + e > size:  # the extra row of an odd "same" padding
                gx = b.slice(gx, 2 + i, 0, size, 1)
        gx = b.reshape(gx, list(xs))
        gw = ctx.emit("torchlike::conv_weight_backward", g, x, list(ws), s, lo, d, groups)
    else:
        s = list(_ints(stride, n, bad("stride")))
        p = list(_ints(padding, n, bad("padding")))
        gx = b.convolution(g, w, None, s, p, d, False, [0] * n, groups)
        gw = ctx.emit("torchlike::conv_weight_backward", x, g, list(ws), s, p, d, groups)
        gx = _fit_size(b, gx, spatial, 2)  # output_padding >= stride: rows past the input
    if not batched:
        gx = b.squeeze(gx, 0)
    has_bias = not _none(ctx, 2)
    gb = b.sum(g, [0] + list(range(2, n + 2))) if has_bias else None
    return [gx, gw, gb]


def _conv(ctx, grads):  # conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)
    st = [_st(ctx, i) for i in range(3, 7)]
    return _rest(ctx, _conv_grads(ctx, grads[0], *st))


def _conv_transpose(ctx, grads):
    # conv_transposeNd(input, weight, bias, stride, padding, output_padding, groups, dilation)
    s, p, _, groups, d = (_st(ctx, i) for i in range(3, 8))
    return _rest(ctx, _conv_grads(ctx, grads[0], s, p, d, groups, True))


def _convolution(ctx, grads):
    # (_)convolution(input, weight, bias, stride, padding, dilation, transposed, out_pad, groups)
    s, p, d, transposed, _, groups = (_st(ctx, i) for i in range(3, 9))
    return _rest(ctx, _conv_grads(ctx, grads[0], s, p, d, groups, bool(transposed)))


def _convolution_mode(ctx, grads):  # (input, weight, bias, stride, str padding, dilation, groups)
    s, p, d, groups = (_st(ctx, i) for i in range(3, 7))
    return _rest(ctx, _conv_grads(ctx, grads[0], s, p, d, groups))


# -- pools -------------------------------------------------------------------------------------

def _scatter_back(ctx, g, idx, n):
    """Each cotangent added at its flat spatial index into zeros of the input's shape."""
    b = _Ops(ctx)
    xs = _shape_of(ctx)
    lead, plane = math.prod(xs[:-n]), math.prod(xs[-n:])
    zeros = b.zeros([lead, plane], _dtype_enum(ctx))
    flat = b.scatter_add(zeros, 1, b.reshape(idx, [lead, -1]), b.reshape(g, [lead, -1]))
    return b.reshape(flat, list(xs))


def _max_pool(n, with_indices):
    def rule(ctx, grads):
        if with_indices:
            idx = ctx.output(1)
        else:
            xs = _shape_of(ctx)
            k, s, p, d, _ = _pool_geometry(f"max_pool{n}d", n, xs[-n:], *(
                _st(ctx, i) for i in range(1, 6)))
            idx = ctx.emit("torchlike::max_pool_indices", ctx.input(0), list(k), list(s),
                           list(p), list(d), bool(_st(ctx, 5)))
        return _rest(ctx, [_scatter_back(ctx, grads[0], idx, n)])
    return rule


def _adaptive_max(n):
    def rule(ctx, grads):
        return _rest(ctx, [_scatter_back(ctx, grads[0], ctx.output(1), n)])
    return rule


def _avg_pool(n):
    def rule(ctx, grads):
        xs = _shape_of(ctx)
        ceil, include_pad = bool(_st(ctx, 4)), bool(_st(ctx, 5))
        divisor = _st(ctx, 6) if n > 1 else None
        k, s, p, _, _ = _pool_geometry(f"avg_pool{n}d", n, xs[-n:], _st(ctx, 1),
                                       _st(ctx, 2), _st(ctx, 3), 1, ceil)
        gx = ctx.emit("torchlike::avg_pool_backward", grads[0], list(xs), list(k), list(s),
                      list(p), ceil, include_pad, divisor)
        return _rest(ctx, [gx])
    return rule


def _adaptive_avg(n):
    def rule(ctx, grads):
        gx = ctx.emit("torchlike::adaptive_avg_pool_backward", grads[0], list(_shape_of(ctx)), n)
        return _rest(ctx, [gx])
    return rule


def _max_unpool(n):
    def rule(ctx, grads):
        b = _Ops(ctx)
        xs = _shape_of(ctx)
        lead = math.prod(xs[:-n])
        g = b.reshape(grads[0], [lead, -1])
        gx = b.gather(g, 1, b.reshape(ctx.input(1), [lead, -1]))
        return _rest(ctx, [b.reshape(gx, list(xs))])
    return rule


def _im2col(ctx, grads):  # im2col(self, kernel_size, dilation, padding, stride)
    xs = _shape_of(ctx)
    k, d, p, s = (_st(ctx, i) for i in range(1, 5))
    return _rest(ctx, [ctx.emit("aten::col2im", grads[0], list(xs[-2:]), k, d, p, s)])


def _col2im(ctx, grads):  # col2im(self, output_size, kernel_size, dilation, padding, stride)
    k, d, p, s = (_st(ctx, i) for i in range(2, 6))
    return _rest(ctx, [ctx.emit("aten::im2col", grads[0], k, d, p, s)])


# -- resampling --------------------------------------------------------------------------------

class _Dims:
    """What ``resample._sizes`` reads of an array: its rank and shape."""

    def __init__(self, shape):
        self.shape, self.ndim = tuple(shape), len(shape)


def _upsample(mode, k, has_align):
    def rule(ctx, grads):
        xs = _shape_of(ctx)
        first = 3 if has_align else 2
        align = bool(_st(ctx, 2)) if has_align else False
        rest = [_st(ctx, i) for i in range(first, len(ctx.node.inputs))]
        _, scales = _sizes(_Dims(xs), k, _st(ctx, 1), rest, ctx.node.kind)
        gx = ctx.emit("torchlike::upsample_backward", grads[0], list(xs), mode, align,
                      [float(s) if s else 0.0 for s in scales])
        return _rest(ctx, [gx])
    return rule


def _grid_sampler(ctx, grads):
    mode, padding, align = _st(ctx, 2), _st(ctx, 3), bool(_st(ctx, 4))
    if mode not in (0, 1):
        raise _fail(ctx, "only bilinear and nearest sampling have a rule (bicubic: none)")
    x, grid = ctx.input(0), ctx.input(1)
    gx, gg = (ctx.emit("torchlike::grid_sampler_backward", grads[0], x, grid, mode, padding,
                       align, which) for which in (0, 1))
    return [gx, gg, None, None, None]


def _affine_grid(ctx, grads):
    b = _Ops(ctx)
    size = [int(v) for v in _st(ctx, 1)]
    dtype = ctx.node.inputs[0].type.dtype
    if dtype is None or len(size) not in (4, 5):
        raise _fail(ctx, "the dtype of theta or the size is unknown")
    k, spatial = len(size) - 2, size[2:]
    base = np.empty(spatial + [k + 1], dtype)
    for j in range(k):  # as the forward: x along the last spatial dim, then y (, z)
        shape = [1] * k
        shape[k - 1 - j] = -1
        base[..., j] = _linspace(spatial[k - 1 - j], dtype, bool(_st(ctx, 2))).reshape(shape)
    base[..., k] = 1
    g = b.transpose(b.reshape(grads[0], [size[0], -1, k]), 1, 2)
    return [b.matmul(g, ctx.const(base.reshape(-1, k + 1))), None, None]


RULES = {
    **{f"aten::conv{n}d": _conv for n in (1, 2, 3)},
    **{f"aten::conv_transpose{n}d": _conv_transpose for n in (1, 2, 3)},
    "aten::convolution": _convolution,
    "aten::_convolution": _convolution,
    "aten::_convolution_mode": _convolution_mode,
    **{f"aten::max_pool{n}d": _max_pool(n, False) for n in (1, 2, 3)},
    **{f"aten::max_pool{n}d_with_indices": _max_pool(n, True) for n in (1, 2, 3)},
    **{f"aten::adaptive_max_pool{n}d": _adaptive_max(n) for n in (1, 2, 3)},
    **{f"aten::avg_pool{n}d": _avg_pool(n) for n in (1, 2, 3)},
    **{f"aten::adaptive_avg_pool{n}d": _adaptive_avg(n) for n in (1, 2, 3)},
    "aten::max_unpool2d": _max_unpool(2),
    "aten::max_unpool3d": _max_unpool(3),
    "aten::im2col": _im2col,
    "aten::col2im": _col2im,
    **{f"aten::upsample_nearest{k}d": _upsample("nearest", k, False) for k in (1, 2, 3)},
    **{f"aten::_upsample_nearest_exact{k}d": _upsample("nearest-exact", k, False)
       for k in (1, 2, 3)},
    "aten::upsample_linear1d": _upsample("linear", 1, True),
    "aten::upsample_bilinear2d": _upsample("linear", 2, True),
    "aten::upsample_trilinear3d": _upsample("linear", 3, True),
    "aten::upsample_bicubic2d": _upsample("bicubic", 2, True),
    "aten::grid_sampler": _grid_sampler,
    "aten::affine_grid_generator": _affine_grid,
}

attach(RULES)
