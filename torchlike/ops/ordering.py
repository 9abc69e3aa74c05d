"""Ops that walk a dim in order: ``cumsum``, ``cumprod``, ``topk``, ``sort``, ``argsort``, and
the ones that reorder or split along dims, ``flip``, ``roll``, ``unbind``::

    %c : Tensor = aten::cumsum(%x, %dim, %none)
    %values : Tensor, %indices : Tensor = aten::topk(%x, %k, %dim, %largest, %sorted)
    %rows : Tensor[] = aten::unbind(%x, %0)    # a traced ``for r in x``

Interpreted.  Dtypes as PyTorch: integer and bool ``cumsum``/``cumprod`` give int64, half
precision accumulates in float32; ``topk`` and ``sort`` rank NaN above every number (it comes
first when ``largest`` / ``descending``), ties keep index order, indices are int64.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import ListType, TensorType
from .registry import defop
from .tensor_common import (
    arg,
    compute_dtype,
    dims_list,
    dtype_arg,
    index_along,
    like,
    tensor_in,
    wrap_dim,
)


def _scan(kind):
    def impl(xp, x, dim, dtype=None):
        out = dtype_arg(dtype) or ("int64" if x.dtype.kind in "biu" else str(x.dtype))
        axis = wrap_dim(dim, max(x.ndim, 1))
        a = x.astype(compute_dtype(out), copy=False)
        if a.ndim == 0:
            return a.astype(out)
        return getattr(xp, kind)(a, axis=axis).astype(out, copy=False)
    return impl


def _order(xp, x, axis, descending):
    """Stable order along ``axis``, NaN ranked above every number."""
    if x.ndim == 0:
        return xp.zeros((), np.int64)
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    # descending, stable: argsort of the reversed axis, reversed back (NaN sorts last ascending,
    # so first here); indices mapped to the original positions
    n = x.shape[axis]
    flipped = xp.flip(x, axis=axis)
    idx = xp.flip(xp.argsort(flipped, axis=axis, kind="stable"), axis=axis)
    return (n - 1) - idx


def _topk(xp, x, k, dim=-1, largest=True, sorted=True):
    axis = wrap_dim(dim, max(x.ndim, 1))
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k = {k}, size = {n})")
    idx = _order(xp, x, axis, bool(largest))
    if x.ndim == 0:
        return x.copy(), idx
    idx = xp.take(idx, xp.arange(k), axis=axis).astype(np.int64)
    return xp.take_along_axis(x, idx, axis=axis), idx


def _sort(xp, x, *args):
    """``sort(self, dim=-1, descending=False)``, or the ``sort.stable`` overload PyTorch prints
    for ``stable=``: ``sort(self, stable, dim, descending)`` (every sort here is stable)."""
    dim, descending = _sort_args(args)
    axis = wrap_dim(dim, max(x.ndim, 1))
    idx = _order(xp, x, axis, bool(descending)).astype(np.int64)
    if x.ndim == 0:
        return x.copy(), idx
    return xp.take_along_axis(x, idx, axis=axis), idx


def _sort_args(args):
    if len(args) == 3:  # stable, dim, descending
        args = args[1:]
    return (args + (-1, False)[len(args):])[:2]


def _argsort(xp, x, *args):
    return _sort(xp, x, *args)[1]


def _infer_scan(node, types):
    """cumsum/cumprod: the ``dtype`` argument's, else the input's, integers and bools as int64
    (what ``_scan`` computes: a gradient is cast back by it)."""
    t = tensor_in(types)
    d = arg(node, 2, None)
    if isinstance(d, int) and not isinstance(d, bool) and dtype_arg(d):
        dt = dtype_arg(d)
    elif t.dtype is None:
        dt = None
    else:
        dt = "int64" if t.dtype == "bool" or "int" in t.dtype else t.dtype
    return [TensorType(dt, t.shape)]


def _infer_pair(node, types):
    t = tensor_in(types)
    dt = t.dtype if isinstance(t, TensorType) else None
    return [TensorType(dt), TensorType("int64")]


defop("aten::cumsum", "Tensor self, int dim, ScalarType? dtype=None", _scan("cumsum"),
      infer=_infer_scan)
defop("aten::cumprod", "Tensor self, int dim, ScalarType? dtype=None", _scan("cumprod"),
      infer=_infer_scan)
defop("aten::topk", "Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True",
      _topk, num_outputs=2, infer=_infer_pair)
defop("aten::sort", "Tensor self, int dim=-1, bool descending=False", _sort, num_outputs=2,
      infer=_infer_pair)
defop("aten::argsort", "Tensor self, int dim=-1, bool descending=False", _argsort,
      infer=lambda node, types: [TensorType("int64", tensor_in(types).shape)])


def _flip(xp, x, dims):
    axes = [wrap_dim(d, max(x.ndim, 1)) for d in dims_list(dims) or ()]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(axes)}, but "
                           f"unique flip dims size={len(set(axes))}")
    return xp.flip(x, axis=tuple(axes)).copy() if x.ndim and axes else x.copy()


def _roll(xp, x, shifts, dims=()):
    shifts, dims = dims_list(shifts) or [], dims_list(dims) or []
    if not dims:  # flattened, rolled, reshaped back
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        return xp.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    return xp.roll(x, tuple(shifts), axis=tuple(wrap_dim(d, x.ndim) for d in dims))


def _unbind(xp, x, dim=0):
    d = wrap_dim(dim, x.ndim)
    return [x[index_along(x.ndim, d, i)] for i in range(x.shape[d])]  # views, as PyTorch's


def _infer_unbind(node, types):
    t, d = tensor_in(types), arg(node, 1, 0)
    shape = None
    if t.shape is not None and isinstance(d, int) and t.rank:
        shape = t.shape[:d % t.rank] + t.shape[d % t.rank + 1:]
    return [ListType(like(t, shape=shape))]


defop("aten::flip", "Tensor self, int[] dims", _flip, category="shape",
      infer=lambda node, types: [like(tensor_in(types))])
defop("aten::roll", "Tensor self, int[1] shifts, int[1] dims=[]", _roll, category="shape",
      infer=lambda node, types: [like(tensor_in(types))])
defop("aten::unbind", "Tensor self, int dim=0", _unbind, category="shape", infer=_infer_unbind)
