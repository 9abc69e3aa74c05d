"""Order statistics and searches in sorted sequences, interpreted, with PyTorch's tie, NaN and
dtype rules::

    %m : Tensor = aten::median(%x)                                   # the lower median
    %v : Tensor, %i : Tensor = aten::median(%x, %dim, %keepdim)      # median.dim
    %q : Tensor = aten::quantile(%x, %q, %dim, %keepdim, %interpolation)
    %values : Tensor, %indices : Tensor = aten::cummax(%x, %dim)
    %b : Tensor = aten::bucketize(%x, %boundaries, %out_int32, %right)

* ``median`` / ``nanmedian``: the lower of the two middle values (PyTorch does not average);
  ``median`` is NaN where a NaN is present (its index the first NaN's), ``nanmedian`` skips
  NaN; the index is the median's position in a stable sort.
* ``quantile`` / ``nanquantile``: float inputs only, ``q`` in [0, 1] (a float, or a 1-d tensor
  whose dim leads the result), interpolation ``linear``, ``lower``, ``higher``, ``midpoint``,
  ``nearest`` (half to even, as PyTorch's ``round``).
* ``cummax`` / ``cummin``: a tie moves the index to the later element (PyTorch compares with
  ``>=``); a NaN propagates and each NaN takes the index; ``logcumsumexp`` (floats only).
* ``bucketize`` / ``searchsorted``: int64 indices (int32 with ``out_int32``), ``right`` or
  ``side="right"`` for the upper bound, searchsorted's sequence 1-d or one sorted row per
  leading index, with an optional ``sorter``.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from .registry import defop
from .tensor_common import arg, dim_overload_outputs, like, not_implemented, tensor_in, wrap_dim

# -- medians ---------------------------------------------------------------------------------


def _median(skip_nan: bool):
    name = "nanmedian" if skip_nan else "median"

    def impl(xp, x, dim=None, keepdim=False):
        full = dim is None
        a = x.reshape(-1) if full else x
        d = 0 if full else wrap_dim(dim, max(x.ndim, 1))
        if a.ndim == 0:
            return x.copy() if full else (x.copy(), xp.zeros((), np.int64))
        if a.shape[d] == 0:
            if full and x.dtype.kind == "f":
                return xp.asarray(np.nan, dtype=x.dtype)
            if full:
                raise RuntimeError(f"{name}() input tensor cannot be empty")
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        order = xp.argsort(a, axis=d, kind="stable")          # NaN sorts last
        nan = xp.isnan(a) if a.dtype.kind == "f" else xp.zeros(a.shape, bool)
        count = a.shape[d] - (xp.sum(nan, axis=d, keepdims=True) if skip_nan else 0)
        pos = xp.maximum((count - 1) // 2, 0)
        pos = xp.broadcast_to(xp.asarray(pos), a.shape[:d] + (1,) + a.shape[d + 1:])
        idx = xp.take_along_axis(order, pos, axis=d)
        if not skip_nan and a.dtype.kind == "f":              # any NaN: the first one
            has = xp.any(nan, axis=d, keepdims=True)
            first = xp.argmax(nan, axis=d)
            idx = xp.where(has, xp.expand_dims(first, d), idx)
        values = xp.take_along_axis(a, idx, axis=d)
        if full:
            return values.reshape(())
        if not keepdim:
            values, idx = xp.squeeze(values, d), xp.squeeze(idx, d)
        return values, idx.astype(np.int64)
    return impl


def _infer_median(node, types):
    t = tensor_in(types)
    if len(node.inputs) == 1 or arg(node, 1) is None:
        return [like(t, shape=())]
    return [like(t, shape=None), like(t, "int64", None)][:max(len(node.outputs), 1)]


# -- quantiles -------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(skip_nan: bool):
    name = "nanquantile" if skip_nan else "quantile"

    def impl(xp, x, q, dim=None, keepdim=False, interpolation="linear"):
        if x.dtype not in (np.float32, np.float64):
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        qs = xp.asarray(q, dtype=x.dtype)
        if qs.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if qs.size and (bool(xp.any(qs < 0)) or bool(xp.any(qs > 1))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        if interpolation not in _METHODS:
            raise RuntimeError(f"{name}() interpolation must be one of {', '.join(_METHODS)}. "
                               f"Got '{interpolation}'")
        if x.size == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        a = x.reshape(-1) if dim is None else x
        d = 0 if dim is None else wrap_dim(dim, max(x.ndim, 1))
        fn = np.nanquantile if skip_nan else np.quantile
        with np.errstate(invalid="ignore"):
            out = fn(xp.asnumpy(a) if hasattr(xp, "asnumpy") else a, qs, axis=d,
                     method=interpolation, keepdims=bool(keepdim))
        if not skip_nan:  # numpy's NaN handling differs by method: PyTorch's is NaN
            nan = np.isnan(a).any(axis=d, keepdims=bool(keepdim))
            out = np.where(nan, np.nan, out)
        if keepdim and dim is None:  # PyTorch keeps every dim of the input as 1
            out = out.reshape(qs.shape + (1,) * x.ndim)
        return xp.asarray(out, dtype=x.dtype)
    return impl


# -- cumulative extremes and log-sum-exp -------------------------------------------------------


def _cum_extreme(kind: str):
    def impl(xp, x, dim):
        d = wrap_dim(dim, max(x.ndim, 1))
        if x.ndim == 0:
            return x.copy(), xp.zeros((), np.int64)
        ufunc = xp.maximum if kind == "cummax" else xp.minimum
        values = ufunc.accumulate(x, axis=d) if x.dtype != np.bool_ else \
            (xp.logical_or if kind == "cummax" else xp.logical_and).accumulate(x, axis=d)
        # the index moves where the element is the running extreme (>=, so a tie takes the
        # later one) or a NaN
        update = x == values
        if x.dtype.kind == "f":
            update |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[d] = x.shape[d]
        pos = xp.arange(x.shape[d], dtype=np.int64).reshape(shape)
        idx = xp.maximum.accumulate(xp.where(update, pos, 0), axis=d)
        return values, idx
    return impl


def _logcumsumexp(xp, x, dim):
    if x.dtype.kind != "f":
        raise not_implemented("logcumsumexp_out_cpu", x.dtype)
    d = wrap_dim(dim, max(x.ndim, 1))
    if x.ndim == 0:
        return x.copy()
    acc = "float32" if x.dtype == np.float16 else x.dtype
    with np.errstate(invalid="ignore"):
        return xp.logaddexp.accumulate(x.astype(acc), axis=d).astype(x.dtype)


def _infer_pair(node, types):
    t = tensor_in(types)
    return [like(t), like(t, "int64")]


# -- searching sorted sequences --------------------------------------------------------------


def _searchsorted(xp, seq, values, out_int32=False, right=False, side=None, sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter.astype(np.int64), axis=-1)
    scalar = not hasattr(values, "ndim")
    v = xp.asarray(values)
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = xp.searchsorted(seq.reshape(-1), v, side=how)
    else:
        if v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension "
                               f"or the first N-1 dimensions of boundaries tensor and input "
                               f"value tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor {list(v.shape)}")
        rows_s, rows_v = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        out = xp.stack([xp.searchsorted(s, r, side=how) for s, r in zip(rows_s, rows_v)])
        out = out.reshape(v.shape)
    out = xp.asarray(out).astype(np.int32 if out_int32 else np.int64)
    return out.reshape(()) if scalar else out


def _bucketize(xp, x, boundaries, out_int32=False, right=False):
    if getattr(boundaries, "ndim", 1) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return _searchsorted(xp, boundaries, x, out_int32, right)


def _infer_search(values_at: int):
    def infer(node, types):
        t = types[values_at] if isinstance(types[values_at], TensorType) else TensorType()
        int32 = arg(node, 2, False)  # out_int32, in both schemas
        return [like(t, "int32" if int32 is True else "int64" if int32 is False else None,
                     t.shape if isinstance(t, TensorType) else ())]
    return infer


for _name, _skip in (("median", False), ("nanmedian", True)):
    defop(f"aten::{_name}", "Tensor self, int? dim=None, bool keepdim=False", _median(_skip),
          category="reduction", num_outputs=None, output_count=dim_overload_outputs,
          infer=_infer_median)
for _name, _skip in (("quantile", False), ("nanquantile", True)):
    defop(f"aten::{_name}", "Tensor self, Tensor q, int? dim=None, bool keepdim=False, "
          "str interpolation=\"linear\"", _quantile(_skip), category="reduction",
          infer=lambda node, types: [like(tensor_in(types), shape=None)])
defop("aten::cummax", "Tensor self, int dim", _cum_extreme("cummax"), num_outputs=2,
      infer=_infer_pair)
defop("aten::cummin", "Tensor self, int dim", _cum_extreme("cummin"), num_outputs=2,
      infer=_infer_pair)
defop("aten::logcumsumexp", "Tensor self, int dim", _logcumsumexp,
      infer=lambda node, types: [like(tensor_in(types))])
defop("aten::bucketize", "Tensor self, Tensor boundaries, bool out_int32=False, "
      "bool right=False", _bucketize, infer=_infer_search(0))
defop("aten::searchsorted", "Tensor sorted_sequence, Tensor self, bool out_int32=False, "
      "bool right=False, str? side=None, Tensor? sorter=None", _searchsorted,
      infer=_infer_search(1))
