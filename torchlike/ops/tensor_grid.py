"""The spatial transformers' ops, interpreted (numpy or cupy), what ``F.affine_grid`` and
``F.grid_sample`` (graphs in the nn function table) end in::

    %g : Tensor = aten::affine_grid_generator(%theta, %size, %align_corners)
    %y : Tensor = aten::grid_sampler(%x, %grid, %interpolation, %padding, %align_corners)

``affine_grid_generator`` (4-d and 5-d sizes), ``grid_sampler`` (4-d input: bilinear, nearest,
bicubic; 5-d: trilinear, nearest; padding zeros, border, reflection; ``align_corners``), with
PyTorch's dtype rules and errors.
"""
from __future__ import annotations

from itertools import product

import numpy as np

from .registry import defop
from .tensor_common import arg, known_shape, like, not_implemented, scalar_name, tensor_in, wrap_dim
from .tensor_misc import host

# -- affine_grid_generator, grid_sampler -------------------------------------------------------


def _linspace(n, dtype, align_corners):
    """ATen's ``linspace_from_neg_one``: n points over [-1, 1] (times (n - 1) / n without
    align_corners), in ``dtype`` as ATen's linspace kernel computes them (a single point: 0)."""
    t = np.dtype(dtype).type
    if n <= 1:  # at::tensor(0, options)
        if t == np.float16:
            raise not_implemented("tensor_cpu", dtype)
        return np.zeros(1, dtype)
    step = (t(1) - t(-1)) / t(n - 1)
    i = np.arange(n)
    r = np.where(i < n // 2, t(-1) + step * i.astype(dtype),
                 t(1) - step * (n - 1 - i).astype(dtype)).astype(dtype)
    return r if align_corners else (r * t(n - 1) / t(n)).astype(dtype)


def _affine_grid_generator(xp, theta, size, align_corners):
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    if theta.dtype.kind != "f":
        raise not_implemented("affine_grid_generator", theta.dtype)
    k, spatial = len(size) - 2, size[2:]
    base = np.empty(spatial + [k + 1], theta.dtype)
    for j in range(k):  # x along the last spatial dim, y the one before (, z)
        shape = [1] * k
        shape[k - 1 - j] = -1
        base[..., j] = _linspace(spatial[k - 1 - j], theta.dtype, align_corners).reshape(shape)
    base[..., k] = 1
    wrap_dim(1, theta.ndim)  # theta.transpose(1, 2)
    wrap_dim(2, theta.ndim)
    if theta.ndim != 3 or theta.shape[0] != size[0] or theta.shape[2] != k + 1:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {theta.shape[2]}].")
    calc = np.float32 if theta.dtype == np.float16 else theta.dtype
    grid = xp.matmul(xp.asarray(base.reshape(1, -1, k + 1), calc),
                     xp.swapaxes(theta, 1, 2).astype(calc)).astype(theta.dtype)
    if theta.shape[1] != k:
        raise RuntimeError(f"shape '{size[:1] + spatial + [k]}' is invalid for input of size "
                           f"{grid.size}")
    return grid.reshape(size[:1] + spatial + [k])


def _infer_affine_grid(node, types):
    t, size = tensor_in(types), arg(node, 1)
    if not isinstance(size, list) or len(size) not in (4, 5):
        return [like(t, shape=None)]
    return [like(t, shape=size[:1] + size[2:] + [len(size) - 2])]


def _reflect(c, twice_low, twice_high):
    """ATen's reflect_coordinates: ``c`` reflected into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return np.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = np.abs(c - low)
    extra, flips = np.fmod(c, span), np.floor(c / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low).astype(c.dtype)


def _pad(c, size, padding, align_corners, scalar):
    """A source coordinate under ``padding`` (0 zeros, 1 border, 2 reflection), as ATen's
    vectorized 2-D kernel (a NaN clips to 0) or its scalar 3-D one (a NaN clips to size - 1; a
    coordinate still not finite becomes -100, outside) compute it."""
    if padding == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    if padding:
        c = np.where(np.isnan(c), size - 1 if scalar else 0, np.clip(c, 0, size - 1))
    if scalar:
        c = np.where(np.isfinite(c), c, -100)
    return c.astype(c.dtype)


def _cubic(t):
    """The four cubic convolution coefficients (A = -0.75) of a fraction ``t``."""
    a = t.dtype.type(-0.75)
    c1, c2 = (((a + 2) * x - (a + 3)) * x * x + 1 for x in (t, 1 - t))
    c0, c3 = (((a * x - 5 * a) * x + 8 * a) * x - 4 * a for x in (t + 1, 2 - t))
    return [c0, c1, c2, c3]


def _grid_sampler(xp, x, grid, interpolation_mode, padding_mode, align_corners):
    if x.ndim == 0 or grid.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    sizes = f"input with sizes {list(x.shape)} and grid with sizes {list(grid.shape)}"
    if x.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.shape[-1] != x.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {x.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension "
                               f"{i} being empty")
    k = 2 if x.ndim == 4 else 3
    if x.ndim not in (4, 5) or grid.ndim != x.ndim:
        raise RuntimeError(f"grid_sampler(): expected {k + 2}D input and grid with same number "
                           f"of dimensions, but got {sizes}")
    mode, padding = int(interpolation_mode), int(padding_mode)
    if k == 3 and mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): interpolation_mode must be 0 (bilinear), 1 "
                           f"(nearest) or 2 (bicubic) and padding_mode 0 (zeros), 1 (border) or "
                           f"2 (reflection), got {mode} and {padding}")
    if x.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(x.dtype)} but found "
                           f"{scalar_name(grid.dtype)}")
    if x.dtype.kind != "f":
        raise not_implemented("grid_sampler_2d_cpu_kernel_impl" if k == 2 else
                              "grid_sampler3d_cpu", x.dtype)
    scalar = k == 3  # ATen's scalar 3-D kernel, else the vectorized 2-D one
    t = x.dtype.type
    a, g = host(x), host(grid)
    spatial = a.shape[2:][::-1]  # W, H (, D): the order of the grid's last dim
    batch = np.arange(a.shape[0]).reshape((-1,) + (1,) * (g.ndim - 2))

    def value(coords):
        """input[n, :, z, y, x] at integer coordinates (x, y (, z)), 0 outside: (N, *out, C)."""
        if x.dtype == np.float16 and not scalar:  # int16 lanes: a NaN or inf becomes 0
            coords = [np.where(np.isfinite(c), c, 0) for c in coords]
        idx = [c.astype(np.int64) for c in coords]
        inside = np.ones(idx[0].shape, bool)
        for c, s in zip(idx, spatial):
            inside &= (c >= 0) & (c < s)
        key = [np.where(inside, c, 0) for c in idx][::-1]
        return np.where(inside[..., None], a[(batch, slice(None), *key)], t(0))

    with np.errstate(all="ignore"):
        coords = []
        for j, s in enumerate(spatial):
            c = g[..., j]
            if not scalar:  # the vectorized kernel's unnormalize
                c = (c + 1) * t((s - 1) / 2) if align_corners else (c + 1) * t(s / 2) - t(0.5)
            else:
                c = (c + 1) / 2 * t(s - 1) if align_corners else ((c + 1) * t(s) - 1) / 2
            coords.append(c if mode == 2 else _pad(c, s, padding, align_corners, scalar))
        if mode == 1:  # nearest: round half to even
            out = value([np.rint(c) for c in coords])
        elif mode == 0:
            lo = [np.floor(c) for c in coords]
            out = 0
            for bits in product((0, 1), repeat=k):  # (z,) y, x: ATen's corner order
                # the 2-D kernel's weights: (y, x) fractions f or 1 - f; the 3-D one's: (x, y,
                # z) distances c - lo or lo + 1 - c
                w = 1
                for b, c, f in list(zip(bits[::-1], coords, lo))[::1 if scalar else -1]:
                    w = w * ((c - f) if b else (f + 1 - c) if scalar else 1 - (c - f))
                out = out + value([f + b for f, b in zip(lo, bits[::-1])]) * w[..., None]
        else:  # bicubic: 4 x 4 taps, each coordinate padded on its own
            (cx, cy), (fx, fy) = coords, (np.floor(c) for c in coords)
            wx, wy = _cubic(cx - fx), _cubic(cy - fy)
            out = 0
            for i in range(4):
                row = 0
                for j in range(4):
                    tap = [_pad(f + t(d - 1), s, padding, align_corners, scalar)
                           for f, d, s in ((fx, j, spatial[0]), (fy, i, spatial[1]))]
                    row = row + value([np.trunc(c) for c in tap]) * wx[j][..., None]
                out = out + row * wy[i][..., None]
    out = np.moveaxis(np.asarray(out, x.dtype), -1, 1)
    return xp.asarray(np.ascontiguousarray(out))


def _infer_grid_sampler(node, types):
    t, g = tensor_in(types), tensor_in(types, 1)
    if not (known_shape(t) and known_shape(g)) or t.rank < 2 or g.rank < 2:
        return [like(t, shape=None)]
    return [like(t, shape=t.shape[:2] + g.shape[1:-1])]


defop("aten::affine_grid_generator", "Tensor theta, int[] size, bool align_corners",
      _affine_grid_generator, infer=_infer_affine_grid)
defop("aten::grid_sampler", "Tensor input, Tensor grid, int interpolation_mode, "
      "int padding_mode, bool align_corners", _grid_sampler, infer=_infer_grid_sampler)
