"""Shape, scatter, padding and normalization ops PyTorch-printed graphs use, interpreted (numpy
or cupy), with PyTorch's dtypes, shapes and errors::

    %p : Tensor[] = aten::hsplit(%x, %sections)                 # also vsplit, dsplit (int, int[])
    %y : Tensor = aten::slice_scatter(%x, %src, %dim, %start, %end, %step)
    %y : Tensor, %mean : Tensor, %rstd : Tensor = aten::native_layer_norm(%x, %shape, %w, %b, %eps)
    %o : Tensor, %o2b : Tensor, %n : Tensor, %mi : Tensor = aten::embedding_bag(%w, %i, %offs, ...)

* layout: ``logspace`` (a factory, as ``linspace``), ``diagflat``, ``msort``, ``ravel``,
  ``unsafe_chunk`` / ``unsafe_split`` / ``unsafe_split_with_sizes`` (values as the safe ones),
  ``hsplit`` / ``vsplit`` / ``dsplit``, ``atleast_1d/2d/3d`` (a tensor or a list), ``narrow_copy``,
  ``resolve_conj`` / ``resolve_neg`` (real tensors: the input itself), ``as_strided`` (element
  strides over a C-contiguous input's own elements, the offset counted from its first one: an
  array has no storage to share, so a strided view input is refused), ``channel_shuffle``;
* scatters into a copy: ``select_scatter``, ``slice_scatter``, ``diagonal_scatter``,
  ``masked_scatter`` (self and mask broadcast together);
* padding: ``reflection_pad{1,2,3}d``, ``replication_pad{1,2,3}d`` (negative pads crop);
* ``native_layer_norm``, ``native_batch_norm``, ``_native_batch_norm_legit_no_training``
  (``layer_norm`` / ``batch_norm``'s values, plus the saved statistics);
* ``embedding_bag`` (sum, mean, max; its four outputs as ATen's CPU kernel leaves them: what
  ``nn.EmbeddingBag`` traces to, the first output used).

``torch.row_stack`` prints as ``aten::vstack`` and ``swapdims`` / ``swapaxes`` as
``aten::transpose``: both are registered elsewhere.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir.types import SCALAR_TYPE_ENUM, TENSOR, ListType, TensorType
from .registry import REGISTRY, defop
from .tensor_common import (
    arg,
    broadcast_sizes,
    dtype_arg,
    infer_same,
    known_dim,
    known_shape,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
    wrap_dim,
)
from .tensor_misc import host


def _impl(name):
    return REGISTRY[f"aten::{name}"].impl


def _pieces(node, types):
    return [ListType(like(tensor_in(types), shape=None))]


def _shape_of(shape):
    """An inferred shape: the known shape, or None when ``shape`` is not a list of ints."""
    return shape if isinstance(shape, list) and all(isinstance(s, int) for s in shape) else None


# -- logspace, diagflat, msort, ravel ---------------------------------------------------------


def _logspace(xp, start, end, steps, base=10.0, dtype=None, layout=None, device=None,
              pin_memory=None):
    """ATen's: start and end cast to the result dtype, the exponents in double from both ends
    (an integer dtype truncates the powers, of a float base)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = np.dtype(dtype_arg(dtype) or "float32")
    if dt == np.bool_:
        raise not_implemented("logspace_cpu", dt)
    if steps == 1:
        return xp.asarray(np.array([float(base) ** float(start)]).astype(dt))
    s, e = float(dt.type(float(start))), float(dt.type(float(end)))
    b = float(np.float32(base)) if dt.kind in "iu" else float(base)
    i = np.arange(steps)
    step = (e - s) / max(steps - 1, 1)
    with np.errstate(all="ignore"):
        out = np.power(b, np.where(i < steps // 2, s + step * i, e - step * (steps - i - 1)))
        return xp.asarray(out.astype(dt))


def _infer_logspace(node, types):
    dt, steps = arg(node, 4, None), arg(node, 2)
    dt = "float32" if dt is None else SCALAR_TYPE_ENUM.get(dt) if isinstance(dt, int) else None
    return [TensorType(dt, (steps if isinstance(steps, int) and steps >= 0 else None,))]


def _infer_diagflat(node, types):
    t, k = tensor_in(types), arg(node, 1, 0)
    n = None if not known_shape(t) or None in t.shape else math.prod(t.shape)
    n = None if n is None or not isinstance(k, int) else n + abs(k)
    return [like(t, shape=(n, n))]


def _infer_ravel(node, types):
    t = tensor_in(types)
    return [like(t, shape=(math.prod(t.shape) if known_shape(t) and None not in t.shape
                           else None,))]


_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
defop("aten::logspace", f"Scalar start, Scalar end, int steps, float base=10.0, {_OPTS}",
      _logspace, infer=_infer_logspace, foldable=False)
defop("aten::diagflat", "Tensor self, int offset=0",
      lambda xp, x, offset=0: _impl("diag")(xp, x.reshape(-1), offset), infer=_infer_diagflat)
defop("aten::msort", "Tensor self", lambda xp, x: _impl("sort")(xp, x, 0, False)[0],
      infer=infer_same)
defop("aten::ravel", "Tensor self", lambda xp, x: x.reshape(-1), category="shape",
      infer=_infer_ravel)

# -- unsafe splits, hsplit / vsplit / dsplit, atleast_nd --------------------------------------


def _unsafe_split(xp, x, split_size, dim=0):
    """``split``'s pieces, with ATen's messages for a bad size."""
    if x.ndim and split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if x.ndim and split_size == 0 and x.shape[wrap_dim(dim, x.ndim)]:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {x.shape[wrap_dim(dim, x.ndim)]}")
    return _impl("split")(xp, x, split_size, dim)


def _unsafe_split_with_sizes(xp, x, split_sizes, dim=0):
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d, sizes = wrap_dim(dim, x.ndim), [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if sum(sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]} "
                           f"(input tensor's size at dimension {d}), but got split_sizes={sizes}")
    return list(xp.split(x, list(itertools.accumulate(sizes))[:-1], axis=d))


def _dir_split(name, least):
    """``torch.hsplit`` (dim 1, or 0 for a 1-d input), ``vsplit`` (0), ``dsplit`` (2): a number
    of equal sections or a list of split indices, through ``tensor_split``."""
    def impl(xp, x, sections):
        if x.ndim < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension"
                               f", but got a tensor with {x.ndim} dimensions!")
        d = {"hsplit": 0 if x.ndim == 1 else 1, "vsplit": 0, "dsplit": 2}[name]
        if isinstance(sections, (int, np.integer)) and (
                sections == 0 or x.shape[d] % int(sections)):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size "
                               f"of the dimension {x.shape[d]} is not divisible by the split_size "
                               f"{sections}!")
        return _impl("tensor_split")(xp, x, sections, d)
    return impl


def _atleast(n):
    def one(x):
        if x.ndim >= n:
            return x
        if n == 3 and x.ndim:  # (W,) -> (1, W, 1), (H, W) -> (H, W, 1), as ATen's
            return x[None, :, None] if x.ndim == 1 else x[..., None]
        return x.reshape((1,) * (n - x.ndim) + x.shape)

    def impl(xp, x):  # atleast_nd(Tensor) or atleast_nd(Tensor[])
        return [one(t) for t in x] if isinstance(x, (list, tuple)) else one(x)
    return impl


def _infer_atleast(n):
    def infer(node, types):
        t = types[0] if types else TENSOR
        if isinstance(t, ListType):
            return [ListType(TENSOR)]
        t = tensor_in(types)
        if not known_shape(t) or t.rank >= n:
            return [like(t)]
        shape = {0: (1,) * n, 1: (1,) + t.shape + (1,) * (n - 2)}.get(t.rank, t.shape + (1,))
        return [like(t, shape=shape)]
    return infer


defop("aten::unsafe_chunk", "Tensor self, int chunks, int dim=0", _impl("chunk"),
      category="shape", infer=_pieces)
defop("aten::unsafe_split", "Tensor self, int split_size, int dim=0", _unsafe_split,
      category="shape", infer=_pieces)
defop("aten::unsafe_split_with_sizes", "Tensor self, int[] split_sizes, int dim=0",
      _unsafe_split_with_sizes, category="shape", infer=_pieces)
for _name, _least in (("hsplit", 1), ("vsplit", 2), ("dsplit", 3)):
    defop(f"aten::{_name}", "Tensor self, Any sections", _dir_split(_name, _least),
          category="shape", infer=_pieces)
for _n in (1, 2, 3):
    defop(f"aten::atleast_{_n}d", "Any self", _atleast(_n), category="shape",
          infer=_infer_atleast(_n))

# -- narrow_copy, resolve_conj / resolve_neg, as_strided --------------------------------------


def _narrow_copy(xp, x, dim, start, length):
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= x.ndim:  # ATen's narrow_copy indexes its sizes before wrapping the dim
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return x[(slice(None),) * d + (slice(start, start + length),)].copy()


def _infer_narrow(node, types):
    t, d, n = tensor_in(types), arg(node, 1), arg(node, 3)
    d = known_dim(d, t.rank) if known_shape(t) and t.rank else None
    if d is None:
        return [like(t)]
    return [like(t, shape=t.shape[:d] + (n if isinstance(n, int) else None,) + t.shape[d + 1:])]


def _as_strided(xp, x, size, stride, storage_offset=None):
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={size} and "
                           f"strides={stride}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {stride}")
    offset = 0 if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if not x.flags.c_contiguous:
        raise RuntimeError("as_strided: torchlike reads the elements of a C-contiguous input "
                           "only (a strided view has no storage of its own here): call "
                           ".contiguous() first")
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > x.size:
        raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset {offset}"
                           f", and itemsize {x.itemsize} requiring a storage size of "
                           f"{need * x.itemsize} are out of bounds for storage of size "
                           f"{x.size * x.itemsize}")
    flat = x.reshape(-1)[offset:] if need else x.reshape(-1)[:0]
    return xp.lib.stride_tricks.as_strided(flat, tuple(size), tuple(s * x.itemsize
                                                                    for s in stride))


defop("aten::narrow_copy", "Tensor self, int dim, int start, int length", _narrow_copy,
      infer=_infer_narrow)
for _name in ("resolve_conj", "resolve_neg"):
    defop(f"aten::{_name}", "Tensor self", lambda xp, x: x, category="shape", infer=infer_same)
defop("aten::as_strided", "Tensor self, int[] size, int[] stride, int? storage_offset=None",
      _as_strided, category="shape",
      infer=lambda node, types: [like(tensor_in(types), shape=_shape_of(arg(node, 1)))])

# -- select_scatter, slice_scatter, diagonal_scatter, masked_scatter --------------------------


def _embed_into(xp, out, view, src):
    """``out`` with ``view`` (a view of it, or a key into it) overwritten by ``src``, after
    ATen's size check; src is cast to out's dtype, as ``copy_``."""
    shape = out[view].shape if isinstance(view, tuple) else view.shape
    if tuple(src.shape) != tuple(shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(shape)}")
    if isinstance(view, tuple):
        out[view] = src
    else:
        view[...] = src
    return out


def _select_scatter(xp, x, src, dim, index):
    _impl("select")(xp, x, dim, index)  # its errors
    d = wrap_dim(dim, x.ndim)
    return _embed_into(xp, x.copy(), (slice(None),) * d + (index,), src)


def _slice_scatter(xp, x, src, dim=0, start=None, end=None, step=1):
    if x.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _embed_into(xp, x.copy(), (slice(None),) * d + (slice(start, end, step),), src)


def _diagonal_scatter(xp, x, src, offset=0, dim1=0, dim2=1):
    out = x.copy()
    return _embed_into(xp, out, _impl("diagonal")(xp, out, offset, dim1, dim2), src)


defop("aten::select_scatter", "Tensor self, Tensor src, int dim, int index", _select_scatter,
      infer=infer_same)
defop("aten::slice_scatter", "Tensor self, Tensor src, int dim=0, int? start=None, "
      "int? end=None, int step=1", _slice_scatter, infer=infer_same)
defop("aten::diagonal_scatter", "Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1",
      _diagonal_scatter, infer=infer_same)


def _masked_scatter(xp, x, mask, source):
    shape = broadcast_sizes(mask.shape, x.shape)  # ATen's order: "tensor a" is the mask
    if x.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{scalar_name(x.dtype)} and {scalar_name(source.dtype)}")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {scalar_name(mask.dtype)}")
    out, m = xp.broadcast_to(x, shape).copy(), xp.broadcast_to(mask, shape)
    k = int(m.sum())
    if k > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = source.reshape(-1)[:k]
    return out


defop("aten::masked_scatter", "Tensor self, Tensor mask, Tensor source", _masked_scatter,
      infer=lambda node, types: [like(tensor_in(types), shape=None)])

# -- channel_shuffle ----------------------------------------------------------------------------


def _channel_shuffle(xp, x, groups):
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(x.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = x.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    y = x.reshape((x.shape[0], groups, c // groups) + x.shape[2:]).swapaxes(1, 2)
    return xp.ascontiguousarray(y).reshape(x.shape)


for _name in ("channel_shuffle", "native_channel_shuffle"):
    defop(f"aten::{_name}", "Tensor self, int groups", _channel_shuffle, infer=infer_same)

# -- reflection / replication padding ---------------------------------------------------------


def _pad_nd(kind, n):
    """``reflection_pad{n}d`` / ``replication_pad{n}d``: (C, *spatial) or (N, C, *spatial), the
    pad list last dim first; each output position reads one input position (a reflection or a
    clamp of its offset from the input's start), so negative pads crop."""
    name, letters = f"{kind}_pad{n}d", "DHW"[3 - n:]

    def impl(xp, x, padding):
        pad = [int(p) for p in padding]
        if len(pad) != 2 * n:
            tail = f", but got: {len(pad)}" if kind == "reflection" else ""
            raise RuntimeError(f"padding size is expected to be {2 * n}{tail}")
        batch = x.ndim == n + 2
        if x.ndim not in (n + 1, n + 2) or 0 in x.shape[int(batch):]:
            raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly "
                               f"0 batch size and other non-zero dimensions for input, but got: "
                               f"{list(x.shape)}")
        sizes, pads = x.shape[-n:], [pad[2 * (n - 1 - i):2 * (n - i)] for i in range(n)]
        if kind == "reflection":
            for i in reversed(range(n)):  # W first: "Argument #4", then H (#6), D (#8)
                (lo, hi), size = pads[i], sizes[i]
                if lo >= size or hi >= size:
                    raise RuntimeError(f"Argument #{2 * (n - i) + 2}: Padding size should be less "
                                       f"than the corresponding input dimension, but got: padding "
                                       f"({lo}, {hi}) at dimension {x.ndim - n + i} of input "
                                       f"{list(x.shape)}")
        outs = [s + lo + hi for s, (lo, hi) in zip(sizes, pads)]
        if all(o < 1 for o in outs):
            space = " " if kind == "replication" and n == 2 else ""
            ins = ", ".join(f"{c}: {s}" for c, s in zip(letters, sizes)).replace(", H", " H", 1) \
                if n == 3 else ", ".join(f"{c}: {s}" for c, s in zip(letters, sizes))
            raise RuntimeError(f"input ({ins}{space}) is too small. Calculated output "
                               + " ".join(f"{c}: {o}" for c, o in zip(letters, outs)))
        if min(outs) < 0:
            shape = list(x.shape[:-n]) + outs
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                               f"{shape}")
        if x.dtype == np.bool_:
            raise not_implemented(name, x.dtype)
        for i, ((lo, _), size, o) in enumerate(zip(pads, sizes, outs)):
            k = np.arange(o) - lo
            if kind == "reflection":
                k = np.abs(k)
                k = np.where(k > size - 1, 2 * (size - 1) - k, k)
            x = xp.take(x, xp.asarray(np.clip(k, 0, size - 1)), axis=x.ndim - n + i)
        return x
    return impl


def _infer_pad_nd(n):
    def infer(node, types):
        t, pad = tensor_in(types), _shape_of(arg(node, 1))
        if not known_shape(t) or t.rank < n or pad is None or len(pad) != 2 * n:
            return [like(t, shape=None)]
        tail = [None if s is None else s + pad[2 * (n - 1 - i)] + pad[2 * (n - i) - 1]
                for i, s in enumerate(t.shape[-n:])]
        return [like(t, shape=t.shape[:-n] + tuple(tail))]
    return infer


for _kind in ("reflection", "replication"):
    for _n in (1, 2, 3):
        defop(f"aten::{_kind}_pad{_n}d", f"Tensor self, int[{2 * _n}] padding",
              _pad_nd(_kind, _n), infer=_infer_pad_nd(_n))

# -- native_layer_norm, native_batch_norm -----------------------------------------------------


def _stat_dtype(x, *params):
    """Saved statistics' dtype: float32 for a float16 input with float32 parameters (PyTorch's
    mixed-type CPU kernels), else the input's."""
    mixed = x.dtype == np.float16 and any(p is not None and p.dtype == np.float32 for p in params)
    return np.float32 if mixed else x.dtype


def _native_layer_norm(xp, x, normalized_shape, weight=None, bias=None, eps=1e-5):
    y = _impl("layer_norm")(xp, x, normalized_shape, weight, bias, eps)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    x64, dt = x.astype(np.float64), _stat_dtype(x, weight, bias)
    with np.errstate(all="ignore"):
        mean = xp.mean(x64, axis=axes, keepdims=True)
        rstd = 1.0 / xp.sqrt(xp.mean((x64 - mean) ** 2, axis=axes, keepdims=True) + eps)
    return y, mean.astype(dt), rstd.astype(dt)


def _native_batch_norm(xp, x, weight, bias, running_mean, running_var, training, momentum,
                       eps):
    """``batch_norm``'s result (training mode updates the running statistics, as it does),
    the batch mean and ``1 / sqrt(biased var + eps)`` in training, empty ones in eval mode."""
    y = _impl("batch_norm")(xp, x, weight, bias, running_mean, running_var, training, momentum,
                            eps)
    dt = _stat_dtype(x, weight, bias, running_mean, running_var)
    if not training:
        return y, xp.zeros(0, dt), xp.zeros(0, dt)
    axes, x64 = (0,) + tuple(range(2, x.ndim)), x.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = xp.mean(x64, axis=axes)
        var = xp.mean((x64 - mean.reshape((1, -1) + (1,) * (x.ndim - 2))) ** 2, axis=axes)
        return y, mean.astype(dt), (1.0 / xp.sqrt(var + eps)).astype(dt)


def _infer_native_layer_norm(node, types):
    t, k = tensor_in(types), arg(node, 1)
    w = tensor_in(types, 2)
    dt = "float32" if t.dtype == "float16" and w.dtype == "float32" else t.dtype
    shape = None
    if known_shape(t) and isinstance(k, list) and len(k) <= t.rank:
        shape = t.shape[:t.rank - len(k)] + (1,) * len(k)
    return [like(t), like(t, dtype=dt, shape=shape), like(t, dtype=dt, shape=shape)]


def _infer_native_batch_norm(node, types):
    t = tensor_in(types)
    dt = None if t.dtype == "float16" else t.dtype  # float32 with float32 parameters
    return [like(t), like(t, dtype=dt, shape=(None,)), like(t, dtype=dt, shape=(None,))]


defop("aten::native_layer_norm", "Tensor input, int[] normalized_shape, Tensor? weight, "
      "Tensor? bias, float eps", _native_layer_norm, num_outputs=3,
      infer=_infer_native_layer_norm)
defop("aten::native_batch_norm", "Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps",
      _native_batch_norm, num_outputs=3, pure=False, infer=_infer_native_batch_norm)
defop("aten::_native_batch_norm_legit_no_training", "Tensor input, Tensor? weight, "
      "Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps",
      lambda xp, x, w, b, m, v, momentum, eps: _native_batch_norm(xp, x, w, b, m, v, False,
                                                                  momentum, eps),
      num_outputs=3, infer=_infer_native_batch_norm)

# -- embedding_bag ----------------------------------------------------------------------------

_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _check_types(x, arg_name, allowed, names):
    if x.dtype.name not in allowed:
        raise RuntimeError(f"Expected tensor for argument #1 '{arg_name}' to have one of the "
                           f"following scalar types: {names}; "
                           f"but got torch.{_LEGACY.get(x.dtype.name, x.dtype.name)}Tensor "
                           f"instead (while checking arguments for embedding_bag)")


def _embedding_bag(xp, weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                   sparse=False, per_sample_weights=None, include_last_offset=False,
                   padding_idx=None):
    """(output, offset2bag, bag_size, max_indices) as ATen's CPU kernel returns them: its fast
    sum / mean path (float32 / float16 weights, no padding_idx) ends the last bag at
    offsets[-1] with include_last_offset and, for a sum, leaves offset2bag empty; a sum's
    bag_size is zeros; ``max_indices`` is bag_size's copy but in ``max`` mode."""
    num = weight.shape[0] if weight.ndim else 0
    if padding_idx is not None and not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                           f"through {num - 1}, but got {padding_idx}")
    pad = -1 if padding_idx is None else padding_idx % num
    if indices.ndim != 1:
        raise RuntimeError(f"embedding_bag: torchlike takes 1-D indices with offsets (F.embedding"
                           f"_bag flattens a 2-D input), got {indices.ndim} dimensions")
    if offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.ndim}")
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.ndim}")
    _check_types(indices, "indices", ("int64", "int32"), "Long, Int")
    _check_types(offsets, "offsets", ("int64", "int32"), "Long, Int")
    _check_types(weight, "weight", ("float16", "float32", "float64"), "Half, BFloat16, Float, "
                 "Double")
    itype = np.int32 if indices.dtype == offsets.dtype == np.int32 else np.int64
    offs, n = host(offsets).astype(np.int64), indices.shape[0]  # bags are found on the host
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offs[0]}")
    if offs.size and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offs[-1]}")
    psw = per_sample_weights
    if psw is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if psw.dtype != weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type "
                               f"as tensor for argument #1 'per_sample_weights'; but type torch."
                               f"{_LEGACY[weight.dtype.name]}Tensor does not equal torch."
                               f"{_LEGACY[psw.dtype.name]}Tensor (while checking arguments for "
                               f"embedding_bag)")
        if psw.size != n:
            raise RuntimeError("Expected per_sample_weights.value().numel() == indices.numel() "
                               "to be true, but got false.")
    if include_last_offset and offs.size < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if np.any(np.diff(offs) < 0):
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    idx = host(indices).astype(np.int64)
    fast = mode != 2 and weight.dtype != np.float64 and pad < 0  # ATen's index_select_add
    bad = (idx < 0) | (idx >= num)
    if bool(bad.any()):
        i = int(np.argmax(bad))
        raise RuntimeError(f"Index {i} of input takes value {idx[i]} which is not in the valid "
                           f"range [0, {num})" if fast else "embedding_bag: Expected idx >= 0 "
                           f"&& idx < num_embeddings but found idx to be {idx[i]}")
    bags = offs.size - int(bool(include_last_offset))
    bag = np.searchsorted(offs[:bags], np.arange(n), side="right") - 1  # ATen's offset2bag
    used = (idx != pad) & (bag >= 0)
    counts = np.bincount(bag[used], minlength=bags)[:bags] if n else np.zeros(bags, np.int64)
    if fast and include_last_offset:  # the fast path ends the last bag at offsets[-1]
        used &= np.arange(n) < offs[-1]
    acc = np.float32 if weight.dtype == np.float16 else weight.dtype
    rows, out = host(weight)[idx].astype(acc), np.zeros((bags, weight.shape[1]), acc)
    max_idx = np.zeros(out.shape, itype)
    if mode == 2:  # each bag's maximum, and the first position holding it (ATen's strict >)
        b, r, j = bag[used], rows[used], np.flatnonzero(used)
        out[counts > 0] = -np.inf
        np.maximum.at(out, b, r)
        first = np.full(out.shape, n, np.int64)
        np.minimum.at(first, b, np.where(r == out[b], j[:, None], n))
        max_idx[first < n] = idx[first[first < n]]
    else:
        if psw is not None:
            rows = rows * host(psw).astype(acc)[:, None]
        np.add.at(out, bag[used], rows[used])
        if mode == 1:
            out = out / np.maximum(counts, 1).astype(acc)[:, None]
    offset2bag = np.zeros(0 if mode == 0 and fast or n == 0 else n, itype)
    offset2bag[:] = bag[:offset2bag.size]
    bag_size = counts.astype(itype) if mode else np.zeros(offs.size, itype)
    aux = [offset2bag, bag_size, max_idx if mode == 2 else bag_size.copy()]
    return tuple([xp.asarray(out.astype(weight.dtype))] + [xp.asarray(a) for a in aux])


def _infer_embedding_bag(node, types):
    w, i, o = tensor_in(types), tensor_in(types, 1), tensor_in(types, 2)
    idx = like(i, dtype=None if None in (i.dtype, o.dtype) else "int32" if i.dtype == o.dtype
               == "int32" else "int64", shape=None)  # indices and offsets promoted together
    bags = None if not known_shape(o) or o.rank != 1 or arg(node, 7, False) is not False \
        else o.shape[0]
    d = w.shape[1] if known_shape(w) and w.rank == 2 else None
    return [like(w, shape=(bags, d)), idx, idx, idx]


defop("aten::embedding_bag", "Tensor weight, Tensor indices, Tensor offsets, "
      "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
      "Tensor? per_sample_weights=None, bool include_last_offset=False, int? padding_idx=None",
      _embedding_bag, num_outputs=4, infer=_infer_embedding_bag)
