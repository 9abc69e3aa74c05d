"""Ops that only backward graphs use (the derivative rules of ``derivatives_linalg.py`` and
``derivatives_conv_pool.py`` emit them), interpreted (numpy or cupy)::

    %gw : Tensor = torchlike::conv_weight_backward(%grad, %x, %wsize, %stride, %pad, %dil, %g)
    %i : Tensor = torchlike::max_pool_indices(%x, %kernel, %stride, %pad, %dil, %ceil_mode)
    %gx : Tensor = torchlike::avg_pool_backward(%grad, %xsize, %kernel, %stride, %pad, ...)
    %gx : Tensor = torchlike::adaptive_avg_pool_backward(%grad, %xsize, %spatial_dims)
    %gx : Tensor = torchlike::upsample_backward(%grad, %xsize, %mode, %align_corners, %scales)
    %gx : Tensor = torchlike::grid_sampler_backward(%grad, %x, %grid, %mode, %pad, %align, %which)
    %gA : Tensor = torchlike::linalg_det_backward(%grad, %det, %A)

* ``conv_weight_backward``: a convolution's weight gradient (N, G, C/G) x (N, G, O/G) summed
  over the batch and the output pixels: the forward's im2col windows, one matmul per group;
  ``padding`` is the left padding, the right one is what the windows reach;
* ``max_pool_indices``: the ``_with_indices`` pool's indices alone (a backward op has one
  output): each window's first maximum, as ATen's, flat over the input's spatial dims;
* ``avg_pool_backward``, ``adaptive_avg_pool_backward``, ``upsample_backward``: these forwards
  are separable, one linear map per spatial dim (a window average, a bin average, the
  interpolation taps); the gradient applies each map's (out, in) matrix transposed along its
  dim, accumulating in float64 (float32 for float16).  ``scales`` holds one factor per dim, 0
  where none was given (the size ratio then, as ATen's ``area_pixel_compute_scale``);
* ``grid_sampler_backward``: bilinear (trilinear) or nearest, zeros / border / reflection
  padding: the input gradient (``which`` 0) scatters each output's cotangent to its corners
  (a ``bincount`` over flat indices), the grid's (``which`` 1) is the corner values weighted by
  the derivative of each corner's weight, times the unnormalization and padding slopes (0 at
  a clipped border, -1 where a reflection flips), as ATen's ``*_set_grad`` helpers; nearest
  gives the grid no gradient;
* ``linalg_det_backward``: ``grad * det * A^-T`` by a solve (``A^T X = I``) where ``det`` is
  nonzero, 0 where it is exactly 0 (what PyTorch's ``linalg_det`` gradient is there).
"""
from __future__ import annotations

import math
from itertools import product

import numpy as np

from ..errors import UnsupportedOpError
from .conv_pool import _acc_dtype, _max_pool, _pool_geometry, _windows
from .registry import defop
from .resample import _cubic_taps, _linear_taps, _nearest_index
from .tensor_common import arg, like, tensor_in
from .tensor_misc import host


def _require(ok, message):
    if not ok:
        raise RuntimeError(message)


def _acc(dtype):
    """Where a backward sum runs: float64, float32 for float16."""
    return np.float32 if dtype == np.float16 else np.float64


# -- convolution weight gradient -----------------------------------------------------------------

def _conv_weight_backward(xp, grad, x, weight_size, stride, padding, dilation, groups):
    n = len(weight_size) - 2
    _require(n >= 1 and grad.ndim == x.ndim == n + 2, f"conv_weight_backward: expected "
             f"batched {n + 2}-d grad_output and input, got {list(grad.shape)} and "
             f"{list(x.shape)}")
    _require(len(stride) == len(padding) == len(dilation) == n, "conv_weight_backward: "
             "stride, padding and dilation need one value per spatial dim")
    N, C = x.shape[:2]
    O, G = int(weight_size[0]), int(groups)
    _require(G > 0 and grad.shape[0] == N and grad.shape[1] == O and C == weight_size[1] * G
             and O % G == 0, f"conv_weight_backward: grad_output {list(grad.shape)}, input "
             f"{list(x.shape)}, weight size {list(weight_size)} and groups {G} do not match")
    kernel, out = tuple(int(k) for k in weight_size[2:]), tuple(grad.shape[2:])
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    pads = [(0, 0), (0, 0)] + [(p, max(0, (o - 1) * s + e - size - p)) for size, o, s, e, p
                               in zip(x.shape[2:], out, stride, eff, padding)]
    comp = _acc_dtype(x.dtype)
    xc = xp.pad(x.astype(comp, copy=False), pads)
    win = _windows(xp, xc, eff, stride, dilation, out)        # (N, C, *out, *kernel)
    P, K = math.prod(out), (C // G) * math.prod(kernel)
    cols = win.reshape((N, G, C // G) + win.shape[2:])
    cols = cols.transpose((1, 0) + tuple(range(3, 3 + n)) + (2,) + tuple(range(3 + n, 3 + 2 * n)))
    cols = cols.reshape(G, N * P, K)
    gm = grad.astype(comp, copy=False).reshape(N, G, O // G, P).transpose(1, 2, 0, 3)
    gw = xp.matmul(gm.reshape(G, O // G, N * P), cols)
    return xp.ascontiguousarray(gw.reshape(tuple(int(s) for s in weight_size)).astype(x.dtype))


def _infer_sized(i):
    """The output has the shape given by input ``i`` (a size list) and input 0's dtype."""
    def infer(node, types):
        size = arg(node, i)
        ok = isinstance(size, list) and all(isinstance(s, int) for s in size)
        return [like(tensor_in(types), shape=tuple(size) if ok else None)]
    return infer


# -- max pooling indices -------------------------------------------------------------------------

def _max_pool_indices(xp, x, kernel_size, stride, padding, dilation, ceil_mode):
    n = len(kernel_size)
    _require(n in (1, 2, 3), f"max_pool_indices: expected 1 to 3 kernel sizes, got "
             f"{list(kernel_size)}")
    pool = _max_pool(n, f"max_pool{n}d_with_indices", with_indices=True)
    return pool(xp, x, kernel_size, stride, padding, dilation, ceil_mode)[1]


def _infer_indices(node, types):
    t = tensor_in(types)
    k = arg(node, 1)
    shape = None
    if t.shape is not None and isinstance(k, list) and None not in t.shape:
        try:
            n = len(k)
            geo = _pool_geometry("max_pool", n, t.shape[-n:], k, arg(node, 2), arg(node, 3),
                                 arg(node, 4), arg(node, 5))
            shape = tuple(t.shape[:-n]) + geo[4]
        except (RuntimeError, TypeError):
            pass
    return [like(t, "int64", shape)]


# -- separable linear maps: average pools, upsampling --------------------------------------------

def _matrix(n_out, n_in, index, weight):
    """The dense (n_out, n_in) matrix of a per-dim map: row i sums ``weight[t][i]`` times input
    ``index[t][i]`` over the taps t (repeated indices add up); a tap may hold several columns
    (shape (n_out, m))."""
    m = np.zeros((n_out, n_in))
    for idx, w in zip(index, weight):  # a loop over the taps, not the elements
        idx = np.asarray(idx).reshape(n_out, -1)
        w = np.broadcast_to(np.asarray(w, np.float64).reshape(n_out, -1), idx.shape)
        np.add.at(m, (np.broadcast_to(np.arange(n_out)[:, None], idx.shape), idx), w)
    return m


def _spread(xp, grad, mats, scale=1.0):
    """``grad``'s trailing ``len(mats)`` dims mapped back through each (out, in) matrix."""
    acc = grad.astype(_acc(grad.dtype), copy=False)
    n = len(mats)
    for i, m in enumerate(mats):
        ax = acc.ndim - n + i
        _require(acc.shape[ax] == m.shape[0], f"backward: grad_output has size "
                 f"{acc.shape[ax]} in dim {ax}, expected {m.shape[0]}")
        acc = xp.moveaxis(xp.tensordot(acc, xp.asarray(m, acc.dtype), axes=([ax], [0])), -1, ax)
    if scale != 1.0:
        acc = acc * scale
    return xp.ascontiguousarray(acc.astype(grad.dtype, copy=False))


def _avg_pool_backward(xp, grad, input_size, kernel_size, stride, padding, ceil_mode,
                       count_include_pad, divisor_override=None):
    n = len(kernel_size)
    size = [int(s) for s in input_size]
    _require(grad.ndim == len(size) and n in (1, 2, 3), f"avg_pool_backward: grad_output of "
             f"rank {grad.ndim} for an input of size {size}")
    k, s, p, _, out = _pool_geometry(f"avg_pool{n}d", n, size[-n:], kernel_size, stride,
                                     padding, 1, ceil_mode)
    mats = []
    for L, ki, si, pi, o in zip(size[-n:], k, s, p, out):
        start = np.arange(o) * si - pi
        end = np.minimum(start + ki, L + pi)
        span = end - start if count_include_pad else np.minimum(end, L) - np.maximum(start, 0)
        w = np.ones(o) if divisor_override is not None else 1.0 / np.maximum(span, 1)
        taps = start[:, None] + np.arange(ki)
        ok = (taps >= 0) & (taps < L)
        mats.append(_matrix(o, L, [np.where(ok, taps, 0)], [ok * w[:, None]]))
    scale = 1.0 if divisor_override is None else 1.0 / float(divisor_override)
    return _spread(xp, grad, mats, scale)


def _adaptive_avg_pool_backward(xp, grad, input_size, spatial_dims):
    size, n = [int(s) for s in input_size], int(spatial_dims)
    _require(grad.ndim == len(size) and 1 <= n <= 3 and grad.ndim in (n + 1, n + 2),
             f"adaptive_avg_pool_backward: grad_output of rank {grad.ndim} for an input of "
             f"size {size} pooled over {n} dims")
    mats = []
    for L, o in zip(size[-n:], grad.shape[-n:]):
        i = np.arange(o)
        start, end = i * L // o, -(-(i + 1) * L // o)
        taps = start[:, None] + np.arange(int((end - start).max(initial=1)))
        ok = taps < end[:, None]
        mats.append(_matrix(o, L, [np.where(ok, taps, 0)],
                            [ok / np.maximum(end - start, 1)[:, None]]))
    return _spread(xp, grad, mats)


def _upsample_backward(xp, grad, input_size, mode, align_corners, scales):
    size = [int(s) for s in input_size]
    k = len(size) - 2
    _require(grad.ndim == k + 2 and 1 <= k <= 3 and len(scales) == k, f"upsample_backward: "
             f"grad_output of rank {grad.ndim} for an input of size {size} and {len(scales)} "
             f"scales")
    op = np.float64 if grad.dtype == np.float64 else np.float32
    mats = []
    for d in range(k):
        n_in, n_out = size[2 + d], grad.shape[2 + d]
        scale = float(scales[d]) if scales[d] else None
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(op, n_in, n_out, scale, mode != "nearest", k == 2)
            index, weight = [idx], [np.ones(n_out)]
        elif mode in ("linear", "bicubic"):
            taps = _cubic_taps if mode == "bicubic" else _linear_taps
            index, weight = taps(op, n_in, n_out, bool(align_corners), scale, grad.dtype)
            weight = [w.astype(grad.dtype).astype(np.float64) for w in weight]  # as stored
        else:
            raise RuntimeError(f"upsample_backward: unknown mode {mode!r}")
        mats.append(_matrix(n_out, n_in, index, weight))
    return _spread(xp, grad, mats)


# -- grid_sampler --------------------------------------------------------------------------------

def _reflect(c, twice_low, twice_high):
    """ATen's ``reflect_coordinates_set_grad``: the reflected coordinate and its slope."""
    if twice_low == twice_high:
        return np.zeros_like(c), np.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = c - low
    sign = np.where(c < 0, -1.0, 1.0)
    c = np.abs(c)
    extra, even = np.fmod(c, span), np.floor(c / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _grid_sampler_backward(xp, grad, x, grid, interpolation_mode, padding_mode, align_corners,
                           which):
    mode, padding = int(interpolation_mode), int(padding_mode)
    if mode not in (0, 1) or padding not in (0, 1, 2):
        raise UnsupportedOpError(f"grid_sampler_backward: interpolation mode {mode} (bicubic) "
                                 f"is not supported" if mode == 2 else
                                 f"grid_sampler_backward: bad modes {mode}, {padding}")
    _require(x.ndim in (4, 5) and grid.ndim == x.ndim and grad.ndim == x.ndim
             and grid.shape[-1] == x.ndim - 2, f"grid_sampler_backward: input "
             f"{list(x.shape)}, grid {list(grid.shape)}, grad_output {list(grad.shape)}")
    a, g = host(x).astype(np.float64), host(grid).astype(np.float64)
    go = np.moveaxis(host(grad).astype(np.float64), 1, -1)      # (N, *out, C)
    k, (N, C) = x.ndim - 2, x.shape[:2]
    spatial = a.shape[2:][::-1]                                   # W, H (, D)
    S = math.prod(spatial)
    batch = np.arange(N).reshape((-1,) + (1,) * k)
    coords, slopes = [], []
    with np.errstate(all="ignore"):
        for j, s in enumerate(spatial):
            scale = (s - 1) / 2 if align_corners else s / 2
            c = (g[..., j] + 1) * scale - (0 if align_corners else 0.5)
            slope = np.full_like(c, scale)
            if padding == 2:
                c, m = _reflect(c, 0, 2 * (s - 1)) if align_corners else \
                    _reflect(c, -1, 2 * s - 1)
                slope = slope * m
            if padding:  # a border counts as outside: no slope there
                slope = slope * ((c > 0) & (c < s - 1))
                c = np.clip(c, 0, s - 1)
            coords.append(c)
            slopes.append(slope)
    grad_in = np.zeros(N * C * S)
    grad_grid = np.zeros(g.shape)

    def corner(ids):
        inside = np.ones(ids[0].shape, bool)
        for c, s in zip(ids, spatial):
            inside &= (c >= 0) & (c < s)
        key = [np.where(inside, c, 0) for c in ids]
        flat = 0
        for c, s in zip(key[::-1], spatial[::-1]):
            flat = flat * s + c
        return inside, key, flat

    def scatter(w, inside, flat):
        idx = (batch[..., None] * C + np.arange(C)) * S + flat[..., None]
        vals = go * (w * inside)[..., None]
        grad_in[:] += np.bincount(idx.ravel(), vals.ravel(), minlength=grad_in.size)

    if mode == 1:  # nearest: round half to even, as the forward
        inside, _, flat = corner([np.rint(c).astype(np.int64) for c in coords])
        if which == 0:
            scatter(1.0, inside, flat)
    else:
        lo = [np.floor(c) for c in coords]
        frac = [c - f for c, f in zip(coords, lo)]
        for bits in product((0, 1), repeat=k):
            inside, key, flat = corner([(f + b).astype(np.int64) for f, b in zip(lo, bits)])
            ws = [f if b else 1 - f for f, b in zip(frac, bits)]
            if which == 0:
                scatter(math.prod(ws), inside, flat)
                continue
            val = a[(batch, slice(None), *key[::-1])]             # (N, *out, C)
            dot = (val * go).sum(axis=-1) * inside
            for j in range(k):
                dw = math.prod(w for i, w in enumerate(ws) if i != j)
                grad_grid[..., j] += dot * (dw if bits[j] else -dw)
        for j in range(k):
            grad_grid[..., j] *= slopes[j]
    if which == 0:
        return xp.asarray(grad_in.reshape(a.shape).astype(x.dtype))
    return xp.asarray(grad_grid.astype(grid.dtype))


def _infer_grid_backward(node, types):
    which = arg(node, 6)
    t = tensor_in(types, 1 if which == 0 else 2)
    return [like(t)]


# -- det -----------------------------------------------------------------------------------------

def _det_backward(xp, grad, det, A):
    _require(A.ndim >= 2 and A.shape[-1] == A.shape[-2] and det.shape == A.shape[:-2]
             and grad.shape == det.shape, f"linalg_det_backward: expected square matrices "
             f"and one det and grad per matrix, got A {list(A.shape)}, det {list(det.shape)}, "
             f"grad {list(grad.shape)}")
    a, d = host(A).astype(_acc(A.dtype)), host(det).astype(_acc(A.dtype))
    factor = (host(grad).astype(a.dtype) * d)[..., None, None]
    out = np.zeros_like(a)
    ok = d != 0  # PyTorch's gradient at an exactly singular matrix (det 0) is 0
    if ok.any():
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a[ok].shape)
        with np.errstate(all="ignore"):
            out[ok] = np.linalg.solve(np.swapaxes(a[ok], -1, -2), eye) * factor[ok]
    return xp.asarray(out.astype(A.dtype))


# -- registration --------------------------------------------------------------------------------

for _name, _schema, _impl, _infer in (
        ("conv_weight_backward", "Tensor grad_output, Tensor input, int[] weight_size, "
         "int[] stride, int[] padding, int[] dilation, int groups", _conv_weight_backward,
         _infer_sized(2)),
        ("max_pool_indices", "Tensor self, int[] kernel_size, int[] stride, int[] padding, "
         "int[] dilation, bool ceil_mode", _max_pool_indices, _infer_indices),
        ("avg_pool_backward", "Tensor grad_output, int[] input_size, int[] kernel_size, "
         "int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, "
         "int? divisor_override=None", _avg_pool_backward, _infer_sized(1)),
        ("adaptive_avg_pool_backward", "Tensor grad_output, int[] input_size, "
         "int spatial_dims",
         _adaptive_avg_pool_backward, _infer_sized(1)),
        ("upsample_backward", "Tensor grad_output, int[] input_size, str mode, "
         "bool align_corners, float[] scales", _upsample_backward, _infer_sized(1)),
        ("grid_sampler_backward", "Tensor grad_output, Tensor input, Tensor grid, "
         "int interpolation_mode, int padding_mode, bool align_corners, int which",
         _grid_sampler_backward, _infer_grid_backward),
        ("linalg_det_backward", "Tensor grad, Tensor det, Tensor A", _det_backward,
         lambda node, types: [like(tensor_in(types, 2))])):
    defop(f"torchlike::{_name}", _schema, _impl, infer=_infer, python_name=None)
