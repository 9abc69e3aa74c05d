"""Ops that walk a dim in order: ``cumsum``, ``cumprod``, ``topk``, ``sort``, ``argsort``::

    %c : Tensor = aten::cumsum(%x, %dim, %none)
    %values : Tensor, %indices : Tensor = aten::topk(%x, %k, %dim, %largest, %sorted)

Interpreted.  Dtypes as PyTorch: integer and bool ``cumsum``/``cumprod`` give int64, half
precision accumulates in float32; ``topk`` and ``sort`` rank NaN above every number (it comes
first when ``largest`` / ``descending``), ties keep index order, indices are int64.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from .registry import defop
from .tensor_common import compute_dtype, dtype_arg, tensor_in, wrap_dim


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


def _sort(xp, x, dim=-1, descending=False):
    axis = wrap_dim(dim, max(x.ndim, 1))
    idx = _order(xp, x, axis, bool(descending)).astype(np.int64)
    if x.ndim == 0:
        return x.copy(), idx
    return xp.take_along_axis(x, idx, axis=axis), idx


def _argsort(xp, x, dim=-1, descending=False):
    return _sort(xp, x, dim, descending)[1]


def _infer_scan(node, types):
    t = tensor_in(types)
    return [TensorType(None, t.shape) if isinstance(t, TensorType) else TensorType()]


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
      infer=lambda node, types: [TensorType("int64")])
