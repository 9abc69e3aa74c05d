"""Resizing images: ``F.interpolate`` and the ``aten::upsample_*`` ops it calls, interpreted
(numpy or cupy) with PyTorch's CPU index arithmetic.  Traced code prints the ``.vec`` overloads
(a size list or a scale-factor list, the other None); TorchScript prints the Python function
``interpolate`` as a call of a function constant, run here by the callable registered under
that name::

    %s : float[] = prim::ListConstruct(%two, %two)
    %y : Tensor = aten::upsample_bilinear2d(%x, %none, %false, %s)        # .vec
    %z : Tensor = aten::upsample_nearest2d(%x, %size, %sh, %sw)   # size, scales_h, scales_w
    %f : Function = prim::Constant[name="interpolate"]()
    %w : Tensor = prim::CallFunction(%f, %x, %none, %two, %mode, %none, %none, %false)

* ops: ``upsample_nearest{1,2,3}d``, ``_upsample_nearest_exact{1,2,3}d``,
  ``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_trilinear3d``,
  ``upsample_bicubic2d``; each impl takes both overloads (told apart by the argument after
  the size, or after ``align_corners``: a list or None is ``.vec``'s ``scale_factors``);
* callables: ``interpolate``, ``upsample`` (``F.upsample``), ``upsample_nearest``,
  ``upsample_bilinear`` (align_corners=True, as PyTorch's);
* modes nearest, nearest-exact (float16/32/64 and uint8), linear, bilinear, trilinear,
  bicubic (floats); ``area`` runs ``aten::adaptive_avg_pool{1,2,3}d`` when the registry has
  it; ``antialias=True`` and ``lanczos`` are unsupported (a clear error).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from .functions import register_function
from .registry import defop, lookup
from .tensor_common import UNKNOWN, arg, array_module_of, like, scalar_name, tensor_in

_AXES = ("W",), ("H", "W"), ("D", "H", "W")   # the size-check message's names, per rank


def _opmath(x) -> type:
    """ATen computes positions and weights in ``opmath_t``: double for double, float for the
    rest (uint8 included: its nearest kernel dispatches as float)."""
    return np.float64 if x.dtype == np.float64 else np.float32


def _check(x, k, out_size, what):
    if x.ndim != k + 2:
        raise RuntimeError(f"{what}: It is expected input_size equals to {k + 2}, but got size "
                           f"{x.ndim}")
    if len(out_size) != k:
        raise RuntimeError(f"{what}: It is expected output_size equals to {k}, but got size "
                           f"{len(out_size)}")
    ins = x.shape[2:]
    if min(ins) <= 0 or min(out_size) <= 0:
        names = _AXES[k - 1]
        show = lambda sizes: ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))  # noqa: E731
        joint = " and" if k == 1 else ""  # ATen's 1-d message says "and"
        raise RuntimeError(f"{what}: Input and output sizes should be greater than 0, but got "
                           f"input ({show(ins)}){joint} output ({show(out_size)})")


def _scale(op, n_in, n_out, align_corners, scale):
    """UpSample.h's ``area_pixel_compute_scale``: a given positive scale factor s means 1/s
    (not in/out: recompute_scale_factor=False keeps the user's factor), else in/out."""
    if align_corners:
        return op(n_in - 1) / op(n_out - 1) if n_out > 1 else op(0)
    if scale is not None and scale > 0:
        return op(1.0 / scale)
    return op(n_in) / op(n_out)


def _source(op, n_in, n_out, align_corners, scale, cubic=False):
    """``area_pixel_compute_source_index`` for every output index, in opmath: align_corners
    maps corner centres onto each other; else pixel centres, clamped at 0 except for cubic."""
    s = _scale(op, n_in, n_out, align_corners, scale)
    i = np.arange(n_out).astype(op)
    if align_corners:
        return s * i
    src = s * (i + op(0.5)) - op(0.5)
    return src if cubic else np.maximum(src, op(0))


def _floor(real):
    """ATen's ``floorf``: a double position is rounded to float before the floor."""
    return np.floor(real.astype(np.float32)).astype(np.int64)


def _nearest_index(op, n_in, n_out, scale, exact, two_d):
    if two_d:  # ATen's 2-d kernel: nearest_idx / nearest_exact_idx, in float whatever the dtype
        i = np.arange(n_out)
        if not exact and n_out in (n_in, 2 * n_in):  # its shortcuts, even for a scale factor
            return i if n_out == n_in else i >> 1
        s = _scale(np.float32, n_in, n_out, False, scale)
        real = (i + 0.5) * np.float64(s) if exact else s * i.astype(np.float32)
        return np.minimum(_floor(real), n_in - 1)
    s = _scale(op, n_in, n_out, False, scale)  # 1-d, 3-d: the generic kernel, in opmath
    if exact:  # floorf(src + 0.5): float + a double 0.5, rounded to float
        real = _source(op, n_in, n_out, False, scale).astype(np.float64) + 0.5
    else:      # OpenCV's INTER_NEAREST: floor(dst * scale)
        real = s * np.arange(n_out).astype(op)
    return np.minimum(_floor(real), n_in - 1)


def _linear_taps(op, n_in, n_out, align_corners, scale, store):
    """``compute_source_index_and_lambda``: two taps; an unchanged size copies (weights 1, 0)."""
    if n_out == n_in:
        i0 = np.arange(n_out)
        return [i0, i0], [np.ones(n_out, op), np.zeros(n_out, op)]
    real = _source(op, n_in, n_out, align_corners, scale)
    i0 = np.minimum(_floor(real), n_in - 1)
    lam1 = np.clip(real - i0.astype(op), op(0), op(1)).astype(store).astype(op)
    i1 = i0 + (i0 < n_in - 1)
    return [i0, i1], [op(1) - lam1, lam1]


def _cubic_taps(op, n_in, n_out, align_corners, scale, store):
    """Keys' cubic convolution with A = -0.75 over input_index - 1 .. + 2, border pixels
    repeated (``upsample_get_value_bounded``); no copy shortcut for an unchanged size."""
    real = _source(op, n_in, n_out, align_corners, scale, cubic=True)
    i = _floor(real)
    t = (real - i.astype(op)).astype(op)
    a = op(-0.75)
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1                  # noqa: E731 |x| <= 1
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a             # noqa: E731 1 < |x| < 2
    weights = [far(t + op(1)), near(t), near(op(1) - t), far(op(2) - t)]
    return [np.clip(i - 1 + j, 0, n_in - 1) for j in range(4)], [w.astype(op) for w in weights]


def _check_dtype(x, mode, what):
    kind = "nearest" if mode.startswith("nearest") else mode
    if x.dtype in (np.float16, np.float32, np.float64) or (kind == "nearest" and
                                                            x.dtype == np.uint8):
        return
    if x.dtype == np.uint8:  # PyTorch has uint8 bilinear/bicubic (its own fixed-point kernel)
        raise UnsupportedOpError(f"{what}: torchlike resamples uint8 tensors in the nearest "
                                 f"modes only (got mode {mode!r})")
    name = scalar_name(x.dtype)
    kernel = {"nearest": "nearest", "bicubic": "cubic"}.get(kind, "linear")
    raise RuntimeError(f'{what}: "compute_indices_weights_{kernel}" not implemented for '
                       f"'{name}'")


def resample(xp, x, mode, out_size, scales, align_corners=False, what="interpolate"):
    """``x`` (N, C, *spatial) resized to ``out_size``; ``scales`` holds the scale factor of
    each spatial dim or None (then in/out).  Nearest modes gather once; linear and cubic run
    one weighted pass a dim, last dim first, the order of ATen's nested sums."""
    k = len(out_size)
    _check(x, k, out_size, what)
    _check_dtype(x, mode, what)
    op = _opmath(x)
    dims = range(k)
    if mode in ("nearest", "nearest-exact"):
        idx = [_nearest_index(op, x.shape[2 + d], out_size[d], scales[d], mode != "nearest",
                              k == 2) for d in dims]
        grid = np.ix_(*idx)  # open mesh: one fancy-indexing gather for every spatial dim
        return x[(slice(None), slice(None)) + tuple(xp.asarray(g) for g in grid)]
    taps = _cubic_taps if mode == "bicubic" else _linear_taps
    # float16 computes in float32 (ATen's opmath); float32 accumulates in float64: ATen's own
    # float32 sums round differently (vectorized), so only an exact sum stays within an ulp
    acc = x.astype(np.float32 if x.dtype == np.float16 else np.float64)
    for d in reversed(dims):
        index, weight = taps(op, x.shape[2 + d], out_size[d], align_corners, scales[d], x.dtype)
        shape = [1] * x.ndim
        shape[2 + d] = out_size[d]
        out = None
        for i, w in zip(index, weight):  # ATen stores weights as the input dtype (half too)
            w = xp.asarray(w.astype(x.dtype).astype(acc.dtype).reshape(shape))
            term = xp.take(acc, xp.asarray(i), axis=2 + d) * w
            out = term if out is None else out + term
        acc = out
    return xp.asarray(acc).astype(x.dtype, copy=False)


# -- the aten ops ------------------------------------------------------------------------------

def _sizes(x, k, output_size, rest, what):
    """(output size, per-dim scale factors) from either overload: ``.vec``'s
    ``(output_size, scale_factors)`` (exactly one given; the output size is int(in * s), as
    ATen's ``compute_output_size``) or the plain ``(output_size, scales_h=None, ...)``."""
    if x.ndim != k + 2:
        _check(x, k, [1] * k, what)
    if isinstance(output_size, (int, np.integer)):  # an int stands for every dim, as int[k]
        output_size = [output_size] * k
    if len(rest) == 1 and (rest[0] is None or isinstance(rest[0], (list, tuple))):
        factors = rest[0]
        if (output_size is None) == (factors is None):
            raise RuntimeError(f"{what}: Must specify exactly one of output_size and "
                               f"scale_factors")
        if output_size is not None:
            return [int(s) for s in output_size], [None] * k
        if len(factors) != k:
            raise RuntimeError(f"{what}: expected {k} scale factors, got {len(factors)}")
        factors = [float(s) for s in factors]
        if not all(math.isfinite(s) for s in factors):
            raise RuntimeError(f"{what}: scale factors must be finite, got {factors}")
        return [int(n * s) for n, s in zip(x.shape[2:], factors)], factors
    if output_size is None or len(rest) > k:
        raise TypeError(f"{what}: expected (input, output_size, {k} optional scales) or the "
                        f".vec overload (input, output_size, scale_factors)")
    scales = [None if s is None else float(s) for s in rest] + [None] * (k - len(rest))
    return [int(s) for s in output_size], scales


def _impl(mode, k, name, has_align):
    def impl(xp, x, output_size, *rest):
        align = False
        if has_align:
            if not rest:
                raise TypeError(f"{name}() missing argument 'align_corners'")
            align, rest = bool(rest[0]), rest[1:]
        out_size, scales = _sizes(x, k, output_size, rest, name)
        return resample(xp, x, mode, out_size, scales, align, name)
    return impl


def _constant_floats(node, i):
    """The scale-factor list at input ``i`` as floats (None where unknown), or None."""
    if i >= len(node.inputs) or node.inputs[i].node is None:
        return None
    src = node.inputs[i].node
    if src.kind == "prim::Constant" and isinstance(src.attrs.get("value"), (list, tuple)):
        return [float(v) for v in src.attrs["value"]]
    if src.kind != "prim::ListConstruct":
        return None
    values = [e.node.attrs.get("value") if e.node is not None and e.node.kind ==
              "prim::Constant" else None for e in src.inputs]
    return [float(v) if isinstance(v, (int, float)) else None for v in values]


def _infer(k, has_align):
    """(N, C, *output size): the size list's known entries, or int(in * s) from constant scale
    factors and known input dims; the input's dtype."""
    def infer(node, types):
        t = tensor_in(types)
        if t.shape is None or len(t.shape) != k + 2:
            return [like(t, shape=None)]
        size = arg(node, 1)
        spatial = [None] * k
        if isinstance(size, (list, tuple)) and len(size) == k:
            spatial = [s if isinstance(s, int) else None for s in size]
        elif size is None:
            factors = _constant_floats(node, 3 if has_align else 2)
            if factors is not None and len(factors) == k:
                spatial = [int(n * s) if isinstance(n, int) and s is not None and
                           math.isfinite(s) else None for n, s in zip(t.shape[2:], factors)]
        elif size is not UNKNOWN:
            return [like(t, shape=None)]
        return [like(t, shape=tuple(t.shape[:2]) + tuple(spatial))]
    return infer


_VEC = "Tensor input, SymInt[]? output_size, "
_OPS = [(f"upsample_nearest{k}d", "nearest", k, False) for k in (1, 2, 3)] + \
    [(f"_upsample_nearest_exact{k}d", "nearest-exact", k, False) for k in (1, 2, 3)] + \
    [("upsample_linear1d", "linear", 1, True), ("upsample_bilinear2d", "bilinear", 2, True),
     ("upsample_trilinear3d", "trilinear", 3, True), ("upsample_bicubic2d", "bicubic", 2, True)]
for _name, _mode, _k, _align in _OPS:
    # the .vec schema (what traced graphs print and keyword binding uses); the impl also
    # takes the plain overload's (output_size, [align_corners,] scales...) positionally
    defop(f"aten::{_name}", _VEC + ("bool align_corners, " if _align else "") +
          "float[]? scale_factors", _impl(_mode, _k, f"aten::{_name}", _align),
          infer=_infer(_k, _align))

# -- the Python functions TorchScript calls ----------------------------------------------------

_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _per_dim(value, dim, x, what, kind):
    if isinstance(value, (list, tuple)):
        if len(value) != dim:
            raise ValueError(f"Input and {what} must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(x.shape[2:])} and {kind} {list(value)}.")
        return list(value)
    return [value] * dim


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """``torch.nn.functional.interpolate``: its argument checks and its rules for the output
    size (a scale factor gives floor(in * s); it is also the kernel's scale unless
    ``recompute_scale_factor``), then the kernel of the mode."""
    xp = array_module_of(input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    align = bool(align_corners)
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = [None] * max(dim, 0)
    if size is not None:
        out_size = [int(s) for s in _per_dim(size, dim, input, "output", "output size of")]
    elif scale_factor is not None:
        scales = [float(s) for s in _per_dim(scale_factor, dim, input, "scale_factor",
                                             "scale_factor of shape")]
        if not all(math.isfinite(s) for s in scales):
            raise ValueError(f"scale_factor must be finite, got {scales}")
        out_size = [math.floor(float(n) * s) for n, s in zip(input.shape[2:], scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":  # the kernel sees only the output size
        scales = [None] * max(dim, 0)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if antialias or mode == "lanczos":
        raise UnsupportedOpError(f"interpolate: antialias=True (mode {mode!r}) is not "
                                 f"supported by torchlike")
    if mode in ("nearest", "nearest-exact") and input.ndim in (3, 4, 5):
        return resample(xp, input, mode, out_size, scales, False)
    if mode == "area" and input.ndim in (3, 4, 5):
        pool = lookup(f"aten::adaptive_avg_pool{dim}d")
        if pool is None:
            raise UnsupportedOpError(f"interpolate: mode 'area' needs aten::adaptive_avg_pool"
                                     f"{dim}d, which torchlike's registry does not have")
        return pool.impl(xp, input, out_size)
    if _LINEAR.get(mode) == input.ndim:
        return resample(xp, input, mode, out_size, scales, align)
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5}  # bicubic: the generic error below
    if mode in needs and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needs[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_ALL_MODES} (got {mode})")


def _upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``F.upsample``: the deprecated spelling of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def _upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def _upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


register_function("interpolate", interpolate)
register_function("upsample", _upsample)
register_function("upsample_nearest", _upsample_nearest)
register_function("upsample_bilinear", _upsample_bilinear)
