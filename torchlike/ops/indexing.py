"""Indexing and splitting as PyTorch records them: ``aten::index`` (advanced indexing, ``x[i]``
with a tensor ``i`` or a bool mask), ``index_select``, ``gather``, ``scatter`` /
``scatter_add``, ``split_with_sizes``, ``unflatten``, ``repeat``::

    %2 : Tensor?[] = prim::ListConstruct(%i)
    %y : Tensor = aten::index(%x, %2)
    %g : Tensor = aten::gather(%x, %dim, %idx, %false)

Interpreted.  numpy's advanced indexing has PyTorch's rules (a ``None`` entry keeps a dim
whole; separated index tensors move their dims to the front); index tensors must be int64 (or
int32, bool masks) and in range, or the error says which.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TENSOR, ListType, TensorType
from .registry import defop
from .tensor_common import arg, tensor_in, wrap_dim


def _check_index(idx, name):
    if idx.dtype.kind not in "iub":
        raise RuntimeError(f"{name}: tensors used as indices must be long, int, byte or bool "
                           f"tensors, got {idx.dtype}")


def _index(xp, x, indices):
    key = []
    for i in indices:
        if i is None:
            key.append(slice(None))
            continue
        _check_index(i, "index")
        key.append(i)
    try:
        return x[tuple(key)]
    except IndexError as e:
        raise RuntimeError(f"index: {e}") from None


def _index_select(xp, x, dim, index):
    _check_index(index, "index_select")
    flat = index.reshape(-1) if index.ndim else index[None]
    return xp.take(x, flat, axis=wrap_dim(dim, max(x.ndim, 1)))


def _gather(xp, x, dim, index, sparse_grad=False):
    """PyTorch's gather: ``index`` may be longer than ``x`` along ``dim`` and no longer in the
    other dims (``x`` is read over the index's extent there); indices in [0, size)."""
    _check_index(index, "gather")
    axis = wrap_dim(dim, max(x.ndim, 1))
    n = x.shape[axis] if x.ndim else 1
    if index.size and (int(index.min()) < 0 or int(index.max()) >= n):
        bad = int(index.min()) if int(index.min()) < 0 else int(index.max())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {n}")
    if x.ndim and index.ndim == x.ndim:
        over = [d for d, (i, s) in enumerate(zip(index.shape, x.shape)) if d != axis and i > s]
        if over:
            raise RuntimeError(f"Size does not match at dimension {over[0]} expected index "
                               f"{list(index.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {axis}")
        x = x[tuple(slice(None) if d == axis else slice(0, i)
                    for d, i in enumerate(index.shape))]
    return xp.take_along_axis(x, index, axis=axis)


def _scatter(add):
    def impl(xp, x, dim, index, src):
        _check_index(index, "scatter_add" if add else "scatter")
        axis = wrap_dim(dim, max(x.ndim, 1))
        out = x.copy()
        if not hasattr(src, "shape"):  # scatter(self, dim, index, value)
            src = xp.full(index.shape, src, dtype=x.dtype)
        src = src[tuple(slice(0, s) for s in index.shape)].astype(x.dtype, copy=False)
        grid = list(xp.indices(index.shape, sparse=True))
        grid[axis] = index
        if add:
            xp.add.at(out, tuple(grid), src)
        else:
            out[tuple(grid)] = src
        return out
    return impl


def _split_with_sizes(xp, x, sizes, dim=0):
    axis = wrap_dim(dim, max(x.ndim, 1))
    if sum(sizes) != x.shape[axis]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{x.shape[axis]} (input tensor's size at dimension {dim}), but got "
                           f"split_sizes={list(sizes)}")
    return list(xp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis))


def _unflatten(xp, x, dim, sizes):
    axis = wrap_dim(dim, max(x.ndim, 1))
    sizes = [int(s) for s in sizes]
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = x.shape[axis] // max(known, 1)
    if int(np.prod(sizes)) != x.shape[axis]:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({x.shape[axis]}) in the input tensor")
    return x.reshape(x.shape[:axis] + tuple(sizes) + x.shape[axis + 1:])


def _repeat(xp, x, repeats):
    repeats = [int(r) for r in repeats]
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return xp.tile(x.reshape((1,) * (len(repeats) - x.ndim) + x.shape), repeats)


def _same_dtype(node, types):
    t = tensor_in(types)
    return [TensorType(t.dtype) if isinstance(t, TensorType) else TensorType()]


defop("aten::index", "Tensor self, Tensor?[] indices", _index, infer=_same_dtype)
def _infer_index_select(node, types):
    """self's shape with ``dim`` the (1-d or 0-d) index's length."""
    t, d, index = tensor_in(types), arg(node, 1), tensor_in(types, 2)
    if t.shape is None or index.shape is None or len(index.shape) > 1 or \
            not isinstance(d, int) or not -max(len(t.shape), 1) <= d < max(len(t.shape), 1):
        return _same_dtype(node, types)
    n = index.shape[0] if index.shape else 1
    return [TensorType(t.dtype, tuple(n if i == d % len(t.shape) else s
                                      for i, s in enumerate(t.shape)) if t.shape else ())]


def _infer_like_index(node, types):
    """gather's result: the index's shape, self's dtype."""
    t, index = tensor_in(types), tensor_in(types, 2)
    return [TensorType(t.dtype, index.shape)]


def _infer_like_self(node, types):
    """scatter's result: self's shape and dtype."""
    t = tensor_in(types)
    return [TensorType(t.dtype, t.shape)]


defop("aten::index_select", "Tensor self, int dim, Tensor index", _index_select,
      infer=_infer_index_select)
defop("aten::gather", "Tensor self, int dim, Tensor index, bool sparse_grad=False", _gather,
      infer=_infer_like_index)
defop("aten::scatter", "Tensor self, int dim, Tensor index, Any src", _scatter(False),
      infer=_infer_like_self)
defop("aten::scatter_add", "Tensor self, int dim, Tensor index, Tensor src", _scatter(True),
      infer=_infer_like_self)
defop("aten::split_with_sizes", "Tensor self, int[] split_sizes, int dim=0", _split_with_sizes,
      infer=lambda node, types: [ListType(TENSOR)], category="shape")
defop("aten::unflatten", "Tensor self, int dim, int[] sizes", _unflatten, infer=_same_dtype,
      category="shape")
def _infer_repeat(node, types):
    """x.repeat(r): x's shape left-padded with 1s to len(r), times r (constant r)."""
    t, reps = tensor_in(types), arg(node, 1)
    if t.shape is None or not isinstance(reps, list) or len(reps) < len(t.shape) or \
            not all(isinstance(r, int) and r >= 0 for r in reps):
        return _same_dtype(node, types)
    shape = (1,) * (len(reps) - len(t.shape)) + tuple(t.shape)
    return [TensorType(t.dtype, tuple(None if d is None else d * r
                                      for d, r in zip(shape, reps)))]


defop("aten::repeat", "Tensor self, int[] repeats", _repeat, infer=_infer_repeat)
