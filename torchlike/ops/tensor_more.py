"""More tensor ops PyTorch-printed graphs use, interpreted (numpy or cupy), with PyTorch's
dtypes, shapes and errors::

    %y : Tensor = aten::prelu(%x, %weight)                       # nn.PReLU, F.prelu
    %d : Tensor = aten::cdist(%x1, %x2, %p, %compute_mode)       # traced torch.cdist
    %d : Tensor = prim::CallFunction(%cdist, %x1, %x2, %p, %mode) # scripted: a function constant
    %b : Tensor = aten::isin(%x, %test, %assume_unique, %invert)
    %w : Tensor = aten::unfold(%x, %dimension, %size, %step)     # Tensor.unfold: a view
    %c : Tensor = aten::im2col(%x, %kernel, %dilation, %padding, %stride)  # F.unfold

* activations: ``prelu`` (weight of 1 or C elements, C = dim 1, 1 for a 1-d input) and
  ``_prelu_kernel`` (plain broadcasting);
* distances: ``cdist`` (batched, p = 0, 1, 2, inf or any p >= 0; p = 2 over more than 25 rows,
  or with ``compute_mode`` 1, as ATen's matmul form; p = inf skips NaN, as ATen's kernel) and
  the ``torch.functional.cdist`` function scripted calls reach;
* selection: ``isin`` (its three overloads), ``masked_select`` (both operands broadcast);
* layout: ``pixel_shuffle`` / ``pixel_unshuffle``, ``unfold``, ``im2col`` / ``col2im`` (what
  ``F.unfold`` / ``F.fold`` call);
* ``is_floating_point``, ``broadcast_shapes``, and the in-place ``squeeze_`` / ``unsqueeze_``
  (they change the tensor's own shape, as PyTorch's do).

Indexing writes (``index_put``, ``index_add``, ``index_copy``, ``index_fill``) are in
``tensor_more_index.py``.
"""
from __future__ import annotations

import warnings
from math import prod

import numpy as np

from ..ir.types import BOOL, INT, ListType, TensorType
from .dtypes import operand_info, promote_types, result_type, scalar_dtype
from .functions import register_function
from .inplace import INPLACE_OF
from .registry import REGISTRY, defop
from .tensor_common import (
    arg,
    array_module_of,
    broadcast_shapes,
    broadcast_sizes,
    infer_same,
    known_dim,
    known_shape,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
    wrap_dim,
)

# -- prelu -----------------------------------------------------------------------------------


def _prelu_kernel(xp, x, weight):
    if x.dtype.kind != "f":
        raise not_implemented("prelu_cpu", x.dtype)
    if weight.dtype != x.dtype:
        raise RuntimeError(f"Found dtype {scalar_name(weight.dtype)} but expected "
                           f"{scalar_name(x.dtype)}")
    broadcast_sizes(x.shape, weight.shape)
    return xp.asarray(xp.where(x > 0, x, weight * x))


def _prelu(xp, x, weight):
    if x.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_name(x.dtype)} "
                           f"and {scalar_name(weight.dtype)}")
    if weight.size != 1:
        if x.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim > 1 else 1
        if channels != weight.size:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.size} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if x.ndim != weight.ndim:
        shape = [1] * x.ndim
        if x.ndim > 1:
            shape[1] = weight.size
        weight = weight.reshape(shape)
    return _prelu_kernel(xp, x, weight)


def _infer_prelu_kernel(node, types):
    t, w = tensor_in(types), tensor_in(types, 1)
    shape = broadcast_shapes(t.shape, w.shape) if known_shape(t) and known_shape(w) else None
    return [like(t, shape=shape)]


defop("aten::prelu", "Tensor self, Tensor weight", _prelu,
      infer=infer_same)
defop("aten::_prelu_kernel", "Tensor self, Tensor weight", _prelu_kernel,
      infer=_infer_prelu_kernel)

# -- cdist -----------------------------------------------------------------------------------


def _cdist(xp, x1, x2, p=2.0, compute_mode=None):
    """ATen's ``cdist``: its checks in its order, then the matmul form or the direct one."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else int(compute_mode)
    if mode not in (0, 1, 2):
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(x1.dtype)} but found "
                           f"{scalar_name(x2.dtype)}")
    if x1.dtype == np.float16:
        raise not_implemented("cdist", x1.dtype)
    batch = broadcast_sizes(x1.shape[:-2], x2.shape[:-2])
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if r1 == 0 or r2 == 0 or prod(batch) == 0 or c == 0:
        return xp.zeros(batch + (r1, r2), dtype=x1.dtype)
    a = xp.broadcast_to(x1, batch + (r1, c))
    b = xp.broadcast_to(x2, batch + (r2, c))
    t = x1.dtype.type
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        # _euclidean_dist: [-2 a, |a|^2, 1] @ [b, 1, |b|^2]^T, clamped at 0, square root
        na, nb = xp.sum(a * a, axis=-1, keepdims=True), xp.sum(b * b, axis=-1, keepdims=True)
        left = xp.concatenate([a * t(-2), na, xp.ones_like(na)], axis=-1)
        right = xp.concatenate([b, xp.ones_like(nb), nb], axis=-1)
        return xp.sqrt(xp.maximum(xp.matmul(left, xp.swapaxes(right, -1, -2)), t(0)))
    d = xp.abs(a[..., :, None, :] - b[..., None, :, :])
    with np.errstate(invalid="ignore", over="ignore"):
        if p == 0:
            return xp.sum(xp.minimum(xp.ceil(d), t(1)), axis=-1)
        if p == 1:
            return xp.sum(d, axis=-1)
        if p == 2:
            return xp.sqrt(xp.sum(d * d, axis=-1))
        if p == float("inf"):  # ATen's max skips NaN
            return xp.max(xp.where(xp.isnan(d), t(0), d), axis=-1)
        return xp.sum(d ** t(p), axis=-1) ** t(1.0 / p)


def _infer_cdist(node, types):
    a, b = tensor_in(types), tensor_in(types, 1)
    if not (known_shape(a) and known_shape(b)) or a.rank < 2 or b.rank < 2:
        return [like(a, shape=None)]
    return [like(a, shape=broadcast_shapes(a.shape[:-2], b.shape[:-2]) +
                 (a.shape[-2], b.shape[-2]))]


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _functional_cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """``torch.cdist`` as scripted code calls it: ``prim::CallFunction`` of the function
    constant ``cdist`` (``torch.functional.cdist``) with (x1, x2, p, compute_mode)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _cdist(array_module_of(x1), x1, x2, p, _CDIST_MODES[compute_mode])


defop("aten::cdist", "Tensor x1, Tensor x2, float p=2., int? compute_mode=None", _cdist,
      infer=_infer_cdist)
register_function("cdist", _functional_cdist)

# -- isin, masked_select ---------------------------------------------------------------------

_NO_ISIN = ("bool", "bfloat16", "complex64", "complex128")


def _own_dtype(v) -> str:
    """A Python scalar's dtype as ATen's ``wrapped_scalar_tensor`` makes it (float: double)."""
    if hasattr(v, "dtype"):
        return str(v.dtype)
    return "float64" if isinstance(v, float) else scalar_dtype(v)


def _isin(xp, elements, test_elements, assume_unique=False, invert=False):
    """``isin.Tensor_Tensor`` / ``Tensor_Scalar`` / ``Scalar_Tensor`` (NaN is in nothing;
    ``assume_unique`` changes no result).  Tensor_Scalar is ``eq`` / ``ne``; otherwise ATen
    compares elementwise in ``result_type`` of the two for a few test elements, and by sorting
    the concatenated elements for more, where the elements lose a wrapped number's or 0-d
    tensor's lower priority: ``isin(-1, uint8 tensor)`` depends on the test tensor's size."""
    infos = [operand_info(v) for v in (elements, test_elements)]
    for dtype, _ in infos:
        if dtype in _NO_ISIN:
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{scalar_name(dtype)}")
    n, m = int(np.size(elements)), int(np.size(test_elements))
    scalar_test = not hasattr(test_elements, "dtype")
    if scalar_test or m < int(10.0 * n ** 0.145):
        common = result_type(infos)
    else:
        common = promote_types(_own_dtype(elements), _own_dtype(test_elements))
    a = xp.asarray(elements).astype(common, copy=False)
    b = xp.asarray(test_elements).astype(common, copy=False)
    if scalar_test:  # Tensor_Scalar: eq / ne
        return xp.asarray((a != b) if invert else (a == b))
    return xp.asarray(xp.isin(a, b.reshape(-1), invert=bool(invert))).reshape(a.shape)


def _infer_isin(node, types):
    t = types[0]
    return [TensorType("bool", t.shape, None, t.device) if isinstance(t, TensorType)
            else TensorType("bool", ())]


def _masked_select(xp, x, mask):
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_sizes(x.shape, mask.shape)
    return xp.broadcast_to(x, shape)[xp.broadcast_to(mask, shape)]


defop("aten::isin", "Tensor elements, Tensor test_elements, bool assume_unique=False, "
      "bool invert=False", _isin, infer=_infer_isin)
defop("aten::masked_select", "Tensor self, Tensor mask", _masked_select,
      infer=lambda node, types: [like(tensor_in(types), shape=(None,))])

# -- pixel shuffles, unfold ------------------------------------------------------------------


def _pixel_check(x, r, name, factor):
    if x.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}, but got {r}")


def _pixel_shuffle(xp, x, upscale_factor):
    r = int(upscale_factor)
    _pixel_check(x, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return xp.ascontiguousarray(y).reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(xp, x, downscale_factor):
    r = int(downscale_factor)
    _pixel_check(x, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = x.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    if x.size == 0:  # ATen returns an empty input as it is
        return x.copy()
    n = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return xp.ascontiguousarray(y).reshape(*lead, c * r * r, h // r, w // r)


def _infer_pixel(shuffle: bool):
    def infer(node, types):
        t, r = tensor_in(types), arg(node, 1)
        if not known_shape(t) or t.rank < 3 or not isinstance(r, int) or r <= 0:
            return [like(t, shape=None)]
        *lead, c, h, w = t.shape

        def scale(v, f):
            return None if v is None else f(v)
        if 0 in t.shape and not shuffle:
            return [like(t)]
        if shuffle:
            return [like(t, shape=(*lead, scale(c, lambda v: v // (r * r)),
                                   scale(h, lambda v: v * r), scale(w, lambda v: v * r)))]
        return [like(t, shape=(*lead, scale(c, lambda v: v * r * r), scale(h, lambda v: v // r),
                               scale(w, lambda v: v // r)))]
    return infer


def _unfold(xp, x, dimension, size, step):
    """``Tensor.unfold``: windows of ``size`` every ``step`` along ``dimension``, a new last
    dim; a view of ``x``, as PyTorch's."""
    d = wrap_dim(dimension, x.ndim)
    most = 1 if x.ndim == 0 else x.shape[d]
    if size > most:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {most} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if x.ndim == 0:
        return x.reshape(1)[:size]
    shape = x.shape[:d] + ((x.shape[d] - size) // step + 1,) + x.shape[d + 1:] + (size,)
    strides = x.strides[:d] + (x.strides[d] * step,) + x.strides[d + 1:] + (x.strides[d],)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _infer_unfold(node, types):
    t, d, size, step = tensor_in(types), arg(node, 1), arg(node, 2), arg(node, 3)
    if not known_shape(t) or not all(isinstance(v, int) for v in (size, step)) or step <= 0:
        return [like(t, shape=None)]
    if t.rank == 0:
        return [like(t, shape=(size,))]
    d = known_dim(d, t.rank)
    if d is None:
        return [like(t, shape=None)]
    n = None if t.shape[d] is None else (t.shape[d] - size) // step + 1
    return [like(t, shape=t.shape[:d] + (n,) + t.shape[d + 1:] + (size,))]


defop("aten::pixel_shuffle", "Tensor self, int upscale_factor", _pixel_shuffle,
      infer=_infer_pixel(True))
defop("aten::pixel_unshuffle", "Tensor self, int downscale_factor", _pixel_unshuffle,
      infer=_infer_pixel(False))
defop("aten::unfold", "Tensor self, int dimension, int size, int step", _unfold,
      category="shape", infer=_infer_unfold)

# -- im2col, col2im --------------------------------------------------------------------------


def _pairs(**lists):
    out = []
    for name, v in lists.items():
        v = [v, v] if isinstance(v, (int, np.integer)) else list(v)
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out.append([int(i) for i in v])
    return out


def _window_checks(kernel, dilation, padding, stride, order):
    msgs = {"kernel": ("kernel size should be greater than zero", "kernel", kernel),
            "dilation": ("dilation should be greater than zero", "dilation", dilation),
            "padding": ("padding should be non-negative", "pad", padding),
            "stride": ("stride should be greater than zero", "stride", stride)}
    for key in order:
        text, label, (hv, wv) = msgs[key]
        if (hv < 0 or wv < 0) if key == "padding" else (hv <= 0 or wv <= 0):
            raise RuntimeError(f"{text}, but got {label}_height: {hv} {label}_width: {wv}")


def _blocks(size, kernel, dilation, padding, stride):
    return [(s + 2 * p - d * (k - 1) - 1) // st + 1
            for s, k, d, p, st in zip(size, kernel, dilation, padding, stride)]


def _im2col(xp, x, kernel_size, dilation, padding, stride):
    """``F.unfold``'s op: (N, C, H, W) -> (N, C * kh * kw, blocks), unbatched (C, H, W) too."""
    k, dl, pd, st = _pairs(kernel_size=kernel_size, dilation=dilation, padding=padding,
                           stride=stride)
    _window_checks(k, dl, pd, st, ("kernel", "dilation", "padding", "stride"))
    if x.ndim < 3:
        if x.ndim == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        wrap_dim(x.ndim, x.ndim)  # PyTorch reads input.size(2): IndexError
    valid = x.ndim in (3, 4) and x.shape[1] != 0 and x.shape[2] != 0 and \
        (x.shape[0] != 0 if x.ndim == 3 else x.shape[3] != 0)
    if not valid:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: {list(x.shape)}")
    if x.dtype.kind != "f":
        raise not_implemented("im2col_out_cpu", x.dtype)
    a = x if x.ndim == 4 else x[None]
    n, c, h, w = a.shape
    oh, ow = _blocks((h, w), k, dl, pd, st)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({dl[0]}, {dl[1]}), padding=({pd[0]}, {pd[1]}), "
                           f"calculated shape of the array of sliding blocks as ({oh}, {ow}), "
                           f"but its components must be at least one.")
    padded = xp.pad(a, ((0, 0), (0, 0), (pd[0], pd[0]), (pd[1], pd[1])))
    cols = xp.empty((n, c, k[0], k[1], oh, ow), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = padded[:, :, i * dl[0]:i * dl[0] + st[0] * (oh - 1) + 1:st[0],
                                      j * dl[1]:j * dl[1] + st[1] * (ow - 1) + 1:st[1]]
    out = cols.reshape(n, c * k[0] * k[1], oh * ow)
    return out if x.ndim == 4 else out[0]


def _col2im(xp, x, output_size, kernel_size, dilation, padding, stride):
    """``F.fold``'s op: (N, C * kh * kw, blocks) -> (N, C, H, W), overlapping blocks summed
    (in kernel-offset order, as ATen's loop)."""
    size, k, dl, pd, st = _pairs(output_size=output_size, kernel_size=kernel_size,
                                 dilation=dilation, padding=padding, stride=stride)
    _window_checks(k, dl, pd, st, ("kernel", "stride", "dilation", "padding"))
    valid = (x.ndim == 2 and x.shape[0] != 0 and x.shape[1] != 0) or \
        (x.ndim == 3 and x.shape[1] != 0 and x.shape[2] != 0)
    if not valid:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(x.shape)}")
    a = x if x.ndim == 3 else x[None]
    n, planes, length = a.shape
    if planes % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and kernel_size=("
                           f"{k[0]}, {k[1]}).")
    bh, bw = _blocks(size, k, dl, pd, st)
    given = (f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
             f"dilation=({dl[0]}, {dl[1]}), padding=({pd[0]}, {pd[1]}), stride=({st[0]}, "
             f"{st[1]}), ")
    if length != bh * bw:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
                           f"input.size(2)={length}.")
    if bh < 1 or bw < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as ({bh}, "
                           f"{bw}), which is invalid.")
    if x.dtype.kind != "f":
        raise not_implemented("col2im_out_cpu", x.dtype)
    c = planes // (k[0] * k[1])
    cols = a.reshape(n, c, k[0], k[1], bh, bw)
    out = xp.zeros((n, c, size[0] + 2 * pd[0], size[1] + 2 * pd[1]), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * dl[0]:i * dl[0] + st[0] * (bh - 1) + 1:st[0],
                j * dl[1]:j * dl[1] + st[1] * (bw - 1) + 1:st[1]] += cols[:, :, i, j]
    out = out[:, :, pd[0]:pd[0] + size[0], pd[1]:pd[1] + size[1]]
    out = xp.ascontiguousarray(out)
    return out if x.ndim == 3 else out[0]


def _int_pair(v):
    if isinstance(v, int):
        return [v, v]
    return list(v) if isinstance(v, list) and len(v) == 2 and \
        all(isinstance(i, int) for i in v) else None


def _infer_im2col(node, types):
    t = tensor_in(types)
    k, dl, pd, st = (_int_pair(arg(node, i)) for i in range(1, 5))
    if not known_shape(t) or t.rank not in (3, 4) or None in (k, dl, pd, st):
        return [like(t, shape=None)]
    *lead, c, h, w = t.shape
    blocks = None if None in (h, w) else prod(_blocks((h, w), k, dl, pd, st))
    return [like(t, shape=(*lead, None if c is None else c * k[0] * k[1], blocks))]


def _infer_col2im(node, types):
    t = tensor_in(types)
    size, k = _int_pair(arg(node, 1)), _int_pair(arg(node, 2))
    if not known_shape(t) or t.rank not in (2, 3) or None in (size, k):
        return [like(t, shape=None)]
    *lead, planes, _ = t.shape
    c = None if planes is None else planes // (k[0] * k[1])
    return [like(t, shape=(*lead, c, size[0], size[1]))]


defop("aten::im2col", "Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
      "int[2] stride", _im2col, infer=_infer_im2col)
defop("aten::col2im", "Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, "
      "int[2] padding, int[2] stride", _col2im, infer=_infer_col2im)

# -- is_floating_point, broadcast_shapes, squeeze_ / unsqueeze_ ------------------------------


def _broadcast_shapes(xp, a, b):
    # ATen's message names the second shape "tensor a"
    return [int(s) for s in broadcast_sizes([int(s) for s in b], [int(s) for s in a])]


def _infer_broadcast_shapes(node, types):
    return [ListType(INT)]


defop("aten::is_floating_point", "Tensor self", lambda xp, x: x.dtype.kind == "f",
      infer=lambda node, types: [BOOL])
defop("aten::broadcast_shapes", "int[] a, int[] b", _broadcast_shapes,
      infer=_infer_broadcast_shapes)


def _reshape_in_place(name: str):
    """``squeeze_`` / ``unsqueeze_``: the functional op's shape given to ``self`` itself (the
    array object every later use of the value holds), as PyTorch changes the tensor's sizes."""
    functional = REGISTRY[f"aten::{name}"].impl

    def impl(xp, x, *args):
        shape = functional(xp, x, *args).shape
        with warnings.catch_warnings():  # numpy may deprecate assigning .shape
            warnings.simplefilter("ignore", DeprecationWarning)
            x.shape = shape
        return x
    return impl


for _name, _schema in (("squeeze", "Tensor self, int? dim=None"),
                       ("unsqueeze", "Tensor self, int dim")):
    defop(f"aten::{_name}_", _schema, _reshape_in_place(_name), pure=False, foldable=False,
          infer=REGISTRY[f"aten::{_name}"].infer)
    INPLACE_OF[f"aten::{_name}_"] = f"aten::{_name}"
