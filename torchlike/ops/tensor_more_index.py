"""Indexed writes as PyTorch records them, interpreted (numpy or cupy), each functional and
in place (``_``)::

    %15 : Tensor?[] = prim::ListConstruct(%mask)
    %17 : Tensor = aten::index_put_(%y, %15, %v, %false)          # y[y > 0] = v
    %21 : Tensor?[] = prim::ListConstruct(%none, %i)
    %20 : Tensor = aten::index_put_(%y, %21, %18, %false)         # y[:, i] += 1
    %11 : Tensor = aten::index_add_(%y, %dim, %i, %src, %alpha)   # y.index_add_(0, i, s, alpha=2)

* ``index_put`` / ``index_put_``: ``indices`` a list of None (the dim whole), bool (or uint8)
  masks (each the nonzero positions of its dims) and int64/int32 index tensors, broadcast
  together; numpy's advanced-indexing layout is PyTorch's (separated index tensors put their
  dims first).  ``values`` broadcasts to the indexed shape and must have ``self``'s dtype;
  ``accumulate=True`` adds, duplicates included.
* ``index_add`` (``alpha``, in ``self``'s dtype), ``index_copy``, ``index_fill`` (a Scalar or a
  0-d tensor value, cast to ``self``'s dtype): along one dim, by a 0-d or 1-d index.

Each checks what ATen checks, in its order, with its exception type and message.  The in-place
forms write into ``self`` (a view writes through to its base, as ``y[:, i] += 1`` needs) and are
``pure=False``; they are listed in ``inplace.INPLACE_OF`` with their functional op, so the
partitioner keeps reads and writes in order and ``passes.remove_mutation`` can make an
unobservable one functional.
"""
from __future__ import annotations

import numpy as np

from .inplace import INPLACE_OF, infer_self
from .registry import defop
from .tensor_common import infer_same, scalar_name, wrap_dim

# -- index_put -------------------------------------------------------------------------------


def _writable(xp, x, name):
    if not getattr(getattr(x, "flags", None), "writeable", True):
        raise RuntimeError(f"{name}: the tensor it writes into is read-only")


def _index_key(xp, x, indices):
    """PyTorch's index list -> (numpy key with one entry per indexed dim, the int64 index
    arrays with the dim each indexes), masks expanded to their nonzero positions."""
    indices = list(indices)
    for i in indices:
        if i is not None and getattr(i, "dtype", None) not in (np.int64, np.int32, np.bool_,
                                                                np.uint8):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    key, arrays = [], []
    for i in indices:
        if i is None:
            key.append(slice(None))
        elif i.dtype in (np.bool_, np.uint8):
            for j in range(i.ndim):
                d = wrap_dim(len(key) + j, x.ndim)  # PyTorch reads self.size(d): IndexError
                if i.shape[j] != x.shape[d]:
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(x.shape)} at index {d}")
            for pos in xp.nonzero(i):
                arrays.append((len(key), pos.astype(np.int64)))
                key.append(arrays[-1][1])
        else:
            arrays.append((len(key), i.astype(np.int64, copy=False)))
            key.append(arrays[-1][1])
    if len(key) > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {len(key)})")
    return key, arrays


def _indexed_shape(x, key, arrays) -> tuple:
    """The shape ``x[key]`` has (numpy's layout, which is PyTorch's)."""
    if not arrays:
        return tuple(x.shape)
    shapes = [tuple(a.shape) for _, a in arrays]
    try:
        joint = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    first, last = arrays[0][0], arrays[-1][0]
    if last - first + 1 == len(arrays):  # adjacent: their dims replace the indexed ones
        return tuple(x.shape[:first]) + joint + tuple(x.shape[last + 1:])
    kept = tuple(x.shape[d] for d, k in enumerate(key) if isinstance(k, slice))
    return joint + kept + tuple(x.shape[len(key):])


def _expandable(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(shape[::-1], target[::-1]))


def _check_bounds(xp, x, arrays, name=""):
    for d, a in arrays:
        n = x.shape[d]
        bad = (a < -n) | (a >= n)
        if a.size and bool(xp.any(bad)):
            v = int(a[bad].reshape(-1)[0])
            raise IndexError(f"{name}index {v} is out of bounds for dimension {d} with size {n}")


def _index_put_into(xp, x, indices, values, accumulate=False):
    key, arrays = _index_key(xp, x, indices)
    if not hasattr(values, "dtype"):
        values = xp.asarray(values, dtype=x.dtype)
    target = _indexed_shape(x, key, arrays)
    if not _expandable(tuple(values.shape), target):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}")
    if values.dtype != x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_name(x.dtype)} for the destination and "
                           f"{scalar_name(values.dtype)} for the source.")
    _check_bounds(xp, x, arrays)
    _writable(xp, x, "index_put_")
    values = xp.broadcast_to(values, target)
    if accumulate:
        xp.add.at(x, tuple(key), values)
    else:
        x[tuple(key)] = values
    return x


# -- index_add, index_copy, index_fill -------------------------------------------------------


def _along(x, dim):
    """(``x`` with at least one dim -- a 0-d tensor as a view of one element --, the dim)."""
    d = wrap_dim(dim, x.ndim)
    return (x.reshape(1) if x.ndim == 0 else x), d


def check_index_source(op: str, x, dim, index, source) -> int:
    """ATen's checks of ``index_add_`` / ``index_reduce_`` (``op``), in its order and with its
    messages: a vector index of an integer dtype, ``source`` of ``x``'s dtype with one slice per
    index along ``dim`` and ``x``'s shape elsewhere.  Returns the wrapped dim."""
    d = wrap_dim(dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {scalar_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_name(index.dtype)}")
    if x.dtype != source.dtype:
        raise RuntimeError(f"{op}(): self ({scalar_name(x.dtype)}) and source "
                           f"({scalar_name(source.dtype)}) must have the same scalar type")
    if not (d == 0 or d < source.ndim):
        raise RuntimeError(f"{op}(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    count = 1 if source.ndim == 0 else source.shape[d]
    if index.size != count:
        raise RuntimeError(f"{op}(): Number of indices ({index.size}) should be equal to "
                           f"source.size(dim): ({count}), for dim: {d}")
    xs, ss = list(x.shape), list(source.shape)
    if x.ndim and source.ndim:
        del xs[d], ss[d]
    if xs != ss:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")
    return d


def _index_add_into(xp, x, dim, index, source, alpha=1):
    check_index_source("index_add_", x, dim, index, source)
    out, d = _along(x, dim)
    idx = index.reshape(-1).astype(np.int64)
    n = out.shape[d]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        v = int(idx[(idx < 0) | (idx >= n)][0])
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}")
    _writable(xp, x, "index_add_")
    src = source.reshape(out.shape[:d] + (idx.size,) + out.shape[d + 1:])
    if alpha != 1:
        src = src * xp.asarray(alpha).astype(x.dtype)
    xp.add.at(out, (slice(None),) * d + (idx,), src.astype(x.dtype, copy=False))
    return x


def _index_copy_into(xp, x, dim, index, source):
    d = wrap_dim(dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if source.ndim == 0 and index.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {index.size})")
    if source.ndim != x.ndim and source.ndim and x.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    if index.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{scalar_name(index.dtype)}")
    if x.dtype != source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {scalar_name(x.dtype)} and (source) "
                           f"{scalar_name(source.dtype)}")
    xs = [s for i, s in enumerate(x.shape) if i != d]
    ss = [s for i, s in enumerate(source.shape) if i != d]
    if xs != ss:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, xs))} at "
                           f"dimension {d} and source slice shape: {' '.join(map(str, ss))} at "
                           f"dimension 0.")
    if source.ndim and index.size != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.size}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")
    out, d = _along(x, dim)
    idx = index.reshape(-1)
    n = out.shape[d]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        v = int(idx[(idx < 0) | (idx >= n)][0])
        raise IndexError(f"index_copy_(): index {v} is out of bounds for dimension {d} with "
                         f"size {n}")
    _writable(xp, x, "index_copy_")
    out[(slice(None),) * d + (idx,)] = source.reshape(
        out.shape[:d] + (idx.size,) + out.shape[d + 1:])
    return x


def _index_fill_into(xp, x, dim, index, value):
    if hasattr(value, "ndim"):  # index_fill.int_Tensor: a 0-d value tensor
        if value.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        value = value.item()
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    out, d = _along(x, dim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    _check_bounds(xp, out, [(d, index.reshape(-1))])
    _writable(xp, x, "index_fill_")
    with np.errstate(invalid="ignore"):
        out[(slice(None),) * d + (index.reshape(-1),)] = np.asarray(value).astype(x.dtype)[()]
    return x


# -- registration ----------------------------------------------------------------------------


def _functional(into):
    def impl(xp, x, *args):
        return into(xp, x.copy(), *args)
    return impl


_OPS = (
    ("index_put", "Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False",
     _index_put_into),
    ("index_add", "Tensor self, int dim, Tensor index, Tensor source, Scalar alpha=1",
     _index_add_into),
    ("index_copy", "Tensor self, int dim, Tensor index, Tensor source", _index_copy_into),
    ("index_fill", "Tensor self, int dim, Tensor index, Any value", _index_fill_into),
)

for _name, _schema, _into in _OPS:
    defop(f"aten::{_name}", _schema, _functional(_into), infer=infer_same)
    defop(f"aten::{_name}_", _schema, _into, infer=infer_self, pure=False, foldable=False)
    INPLACE_OF[f"aten::{_name}_"] = f"aten::{_name}"
