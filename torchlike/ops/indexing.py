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
from .tensor_common import tensor_in, wrap_dim


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
    _check_index(index, "gather")
    axis = wrap_dim(dim, max(x.ndim, 1))
    n = x.shape[axis] if x.ndim else 1
    if index.size and (int(index.min()) < -n or int(index.max()) >= n):
        raise RuntimeError(f"gather: index out of bounds for dimension {dim} with size {n}")
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
defop("aten::index_select", "Tensor self, int dim, Tensor index", _index_select,
      infer=_same_dtype)
defop("aten::gather", "Tensor self, int dim, Tensor index, bool sparse_grad=False", _gather,
      infer=_same_dtype)
defop("aten::scatter", "Tensor self, int dim, Tensor index, Any src", _scatter(False),
      infer=_same_dtype)
defop("aten::scatter_add", "Tensor self, int dim, Tensor index, Tensor src", _scatter(True),
      infer=_same_dtype)
defop("aten::split_with_sizes", "Tensor self, int[] split_sizes, int dim=0", _split_with_sizes,
      infer=lambda node, types: [ListType(TENSOR)], category="shape")
defop("aten::unflatten", "Tensor self, int dim, int[] sizes", _unflatten, infer=_same_dtype,
      category="shape")
defop("aten::repeat", "Tensor self, int[] repeats", _repeat, infer=_same_dtype)
