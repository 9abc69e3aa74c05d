"""Tensor ops PyTorch-printed graphs use, interpreted (numpy or cupy), with PyTorch's dtypes,
shapes and errors::

    %d : Tensor = aten::diag(%x, %offset)
    %r : Tensor = aten::repeat_interleave(%x, %repeats, %dim, %output_size)
    %i : Tensor = aten::repeat_interleave(%repeats, %output_size)       # repeat_interleave.Tensor
    %y : Tensor = aten::scatter_reduce_(%y, %dim, %index, %src, %reduce, %include_self)

* layout: ``diag`` / ``diag_embed``, ``rot90``, ``take``, ``reshape_as``, ``block_diag``,
  ``vstack`` (``torch.row_stack`` prints as it), ``hstack``, ``dstack``, ``column_stack``,
  ``triu_indices`` / ``tril_indices`` (factories: dtype int64 or int32; layout, device and
  pin_memory are ignored), ``repeat_interleave`` (its three overloads, told apart by the
  argument count and the type of ``repeats``);
* products: ``inner``, ``linalg_cross`` and ``cross`` (``dim`` None: the first dim of size 3);
* ``aminmax`` (NaN propagates);
* scatters: ``scatter_reduce`` / ``scatter_reduce_`` (sum, prod, mean, amax, amin; with or
  without ``self``), the in-place ``scatter_`` (value or src, ``reduce`` add / multiply) and
  ``scatter_add_`` (the functional ``scatter`` / ``scatter_add`` are ``ops/indexing.py``'s).
  The in-place ops write into ``self`` and are listed in ``inplace.INPLACE_OF``.

kthvalue, mode, counting, ``torch.unique`` & co. and the spatial transformers are in
``tensor_misc_sampling.py``.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ..ir.types import SCALAR_TYPE_ENUM, TensorType
from .dtypes import operand_info, promote_types, result_type
from .inplace import INPLACE_OF
from .registry import REGISTRY, defop
from .tensor_common import (
    UNKNOWN,
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

__all__ = ["host"]


def host(x):
    """A numpy view of ``x`` (a cupy array is copied over): for the loops run in Python."""
    return x if isinstance(x, np.ndarray) else x.get()


# -- diag, diag_embed, rot90, take, reshape_as -------------------------------------------------


def _embed(xp, x, k):
    """``x``'s last dim as the k-th diagonal of two new last dims."""
    n = x.shape[-1] + abs(k)
    out = xp.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = xp.arange(x.shape[-1])
    out[..., i + max(-k, 0), i + max(k, 0)] = x
    return out


def _diag(xp, x, diagonal=0):
    if x.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    if x.ndim == 2:
        return xp.ascontiguousarray(xp.diagonal(x, int(diagonal)))
    return _embed(xp, x, int(diagonal))


def _diag_embed(xp, x, offset=0, dim1=-2, dim2=-1):
    d1, d2 = wrap_dim(dim1, x.ndim + 1), wrap_dim(dim2, x.ndim + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return xp.ascontiguousarray(xp.moveaxis(_embed(xp, x, int(offset)), (-2, -1), (d1, d2)))


def _infer_diag(node, types):
    t, k = tensor_in(types), arg(node, 1, 0)
    if not known_shape(t) or not isinstance(k, int) or t.rank not in (1, 2) or None in t.shape:
        return [like(t, shape=None)]
    if t.rank == 1:
        return [like(t, shape=(t.shape[0] + abs(k),) * 2)]
    rows, cols = t.shape
    return [like(t, shape=(max(0, min(rows + min(k, 0), cols - max(k, 0))),))]


def _infer_diag_embed(node, types):
    t = tensor_in(types)
    k, d1, d2 = arg(node, 1, 0), arg(node, 2, -2), arg(node, 3, -1)
    if not known_shape(t) or t.rank == 0 or not all(isinstance(v, int) for v in (k, d1, d2)):
        return [like(t, shape=None)]
    d1, d2 = known_dim(d1, t.rank + 1), known_dim(d2, t.rank + 1)
    if d1 is None or d2 is None or d1 == d2:
        return [like(t, shape=None)]
    n = None if t.shape[-1] is None else t.shape[-1] + abs(k)
    shape = list(t.shape[:-1])
    shape.insert(min(d1, d2), n)
    shape.insert(max(d1, d2), n)
    return [like(t, shape=shape)]


def _rot90(xp, x, k=1, dims=(0, 1)):
    dims = [int(d) for d in dims]
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == x.ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    axes = (wrap_dim(dims[0], x.ndim), wrap_dim(dims[1], x.ndim))
    return xp.ascontiguousarray(xp.rot90(x, int(k) % 4, axes=axes))


def _infer_rot90(node, types):
    t, k, dims = tensor_in(types), arg(node, 1, 1), arg(node, 2, [0, 1])
    if not known_shape(t) or not isinstance(k, int) or not isinstance(dims, list) or len(dims) != 2:
        return [like(t, shape=None)]
    a, b = known_dim(dims[0], t.rank), known_dim(dims[1], t.rank)
    if a is None or b is None:
        return [like(t, shape=None)]
    shape = list(t.shape)
    if k % 2:
        shape[a], shape[b] = shape[b], shape[a]
    return [like(t, shape=shape)]


def _take(xp, x, index):
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{scalar_name(index.dtype)}")
    n = x.size
    if n == 0 and index.size:
        raise IndexError("take(): tried to take from an empty tensor")
    flat = index.reshape(-1)
    bad = (flat < -n) | (flat >= n)
    if bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor "
                         f"of {n} elements.")
    return xp.asarray(x.reshape(-1)[flat]).reshape(index.shape)


def _reshape_as(xp, x, other):
    if prod(other.shape) != x.size:
        raise RuntimeError(f"shape '{list(other.shape)}' is invalid for input of size {x.size}")
    return x.reshape(other.shape)


defop("aten::diag", "Tensor self, int diagonal=0", _diag, infer=_infer_diag)
defop("aten::diag_embed", "Tensor self, int offset=0, int dim1=-2, int dim2=-1", _diag_embed,
      infer=_infer_diag_embed)
defop("aten::rot90", "Tensor self, int k=1, int[] dims=[0,1]", _rot90, infer=_infer_rot90)
defop("aten::take", "Tensor self, Tensor index", _take,
      infer=lambda node, types: [like(tensor_in(types), shape=tensor_in(types, 1).shape)])
defop("aten::reshape_as", "Tensor self, Tensor other", _reshape_as, category="shape",
      infer=lambda node, types: [like(tensor_in(types), shape=tensor_in(types, 1).shape)])

# -- inner, cross ------------------------------------------------------------------------------


def _inner(xp, a, b):
    if a.ndim == 0 or b.ndim == 0:
        return REGISTRY["aten::mul"].impl(xp, a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a.shape)} and {list(b.shape)}")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if a.dtype == np.bool_:
        raise not_implemented("dot" if a.ndim == b.ndim == 1 else "addmm_impl_cpu_", a.dtype)
    return xp.asarray(xp.tensordot(a, b, axes=([-1], [-1])))


def _infer_inner(node, types):
    a, b = tensor_in(types), tensor_in(types, 1)
    if not (known_shape(a) and known_shape(b)) or a.rank == 0 or b.rank == 0:
        return [like(a, dtype=None if a.dtype != b.dtype else a.dtype, shape=None)]
    return [like(a, shape=a.shape[:-1] + b.shape[:-1])]


def _linalg_cross(xp, a, b, dim=-1):
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    shape = broadcast_sizes(a.shape, b.shape)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(a.dtype)} but found "
                           f"{scalar_name(b.dtype)}")
    if a.dtype == np.bool_:
        raise not_implemented("cross", a.dtype)
    u, v = (xp.moveaxis(xp.broadcast_to(t, shape), d, 0) for t in (a, b))
    with np.errstate(all="ignore"):
        out = xp.stack([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                        u[0] * v[1] - u[1] * v[0]])
    return xp.ascontiguousarray(xp.moveaxis(out, 0, d))


def _cross(xp, a, b, dim=None):
    if dim is None:  # ATen's default: the first dim of size 3
        dim = next((i for i, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _linalg_cross(xp, a, b, dim)


def _infer_cross(node, types):
    a, b = tensor_in(types), tensor_in(types, 1)
    shape = None
    if known_shape(a) and known_shape(b) and a.rank == b.rank and None not in a.shape + b.shape:
        try:
            shape = broadcast_sizes(a.shape, b.shape)
        except RuntimeError:
            pass
    return [like(a, shape=shape)]


defop("aten::inner", "Tensor self, Tensor other", _inner, infer=_infer_inner)
defop("aten::linalg_cross", "Tensor self, Tensor other, int dim=-1", _linalg_cross,
      infer=_infer_cross)
defop("aten::cross", "Tensor self, Tensor other, int? dim=None", _cross, infer=_infer_cross)

# -- block_diag, the stacks, triu / tril indices -------------------------------------------------


def _block_diag(xp, tensors):
    if not tensors:
        return xp.zeros((1, 0), np.float32)
    dtype = result_type([operand_info(t) for t in tensors])
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        blocks.append(t.reshape((1,) * (2 - t.ndim) + t.shape))
    out = xp.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _cat(xp, tensors, dim):
    """``torch.cat`` with its dtype promotion, legacy skip of 1-d empty tensors and errors."""
    dtype = str(tensors[0].dtype)
    for t in tensors[1:]:
        dtype = promote_types(dtype, str(t.dtype))
    kept = [(i, t) for i, t in enumerate(tensors) if t.shape != (0,)]
    if not kept:
        return xp.zeros((0,), dtype)
    first = kept[0][1]
    d = wrap_dim(dim, first.ndim)
    for i, t in kept[1:]:
        if t.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} "
                               f"and {t.ndim}")
        for j, (s, e) in enumerate(zip(t.shape, first.shape)):
            if j != d and s != e:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {e} but got size {s} for tensor number {i} "
                                   f"in the list.")
    return xp.concatenate([t.astype(dtype, copy=False) for _, t in kept], axis=d)


def _atleast(t, n):
    if t.ndim >= n:
        return t
    if n == 3 and t.ndim == 2:
        return t[..., None]
    if n == 3 and t.ndim == 1:
        return t[None, :, None]
    return t.reshape((1,) * (n - t.ndim) + t.shape)


def _stack(name):
    def impl(xp, tensors):
        if not tensors:
            raise RuntimeError(f"{name} expects a non-empty TensorList")
        ts = list(tensors)
        if name == "column_stack":
            ts = [t.reshape(t.size, 1) if t.ndim <= 1 else t for t in ts]
        if name in ("hstack", "column_stack"):
            ts = [_atleast(t, 1) for t in ts]
            return _cat(xp, ts, 0 if ts[0].ndim == 1 else 1)
        if name == "vstack":
            return _cat(xp, [_atleast(t, 2) for t in ts], 0)
        return _cat(xp, [_atleast(t, 3) for t in ts], 2)
    return impl


def _infer_list(node, types):
    """The promoted dtype of a ``prim::ListConstruct`` of tensors, shape unknown."""
    src = node.inputs[0].node if node.inputs else None
    dtype = None
    if src is not None and src.kind == "prim::ListConstruct" and src.inputs:
        dts = [getattr(v.type, "dtype", None) for v in src.inputs]
        if None not in dts:
            dtype = dts[0]
            for d in dts[1:]:
                dtype = promote_types(dtype, d)
    return [TensorType(dtype)]


def _tri_indices(upper: bool):
    name = "triu_indices" if upper else "tril_indices"

    def impl(xp, row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dt = dtype_arg(dtype) or "int64"
        if dt not in ("int32", "int64"):
            raise not_implemented(name, dt)
        i, j = np.indices((row, col)).reshape(2, -1)
        keep = (j - i >= offset) if upper else (j - i <= offset)
        return xp.asarray(np.stack([i[keep], j[keep]]).astype(dt))
    return impl


def _infer_tri(upper: bool):
    def infer(node, types):
        args = [arg(node, i, d) for i, d in enumerate((UNKNOWN, UNKNOWN, 0, None))]
        dt = args[3]
        dt = "int64" if dt is None else SCALAR_TYPE_ENUM.get(dt) if isinstance(dt, int) else None
        if all(isinstance(v, int) and v >= 0 for v in args[:2]) and isinstance(args[2], int):
            i, j = np.indices(args[:2]).reshape(2, -1)
            n = int(np.sum((j - i >= args[2]) if upper else (j - i <= args[2])))
            return [TensorType(dt, (2, n))]
        return [TensorType(dt, (2, None))]
    return infer


_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
defop("aten::block_diag", "Tensor[] tensors", _block_diag, infer=_infer_list)
for _name in ("vstack", "hstack", "dstack", "column_stack"):
    defop(f"aten::{_name}", "Tensor[] tensors", _stack(_name), infer=_infer_list)
for _name, _upper in (("triu_indices", True), ("tril_indices", False)):
    defop(f"aten::{_name}", f"int row, int col, int offset=0, {_OPTS}", _tri_indices(_upper),
          infer=_infer_tri(_upper), foldable=False)

# -- repeat_interleave -----------------------------------------------------------------------


def _repeat_index(xp, repeats, output_size=None):
    """``repeat_interleave.Tensor``: each position i of ``repeats`` repeats[i] times."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (np.int64, np.int32):
        raise not_implemented("repeat_interleave_cpu", repeats.dtype)
    if repeats.size and int(repeats.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and int(output_size) != int(repeats.sum()):
        raise RuntimeError("allocated size does not match required size")
    return xp.repeat(xp.arange(repeats.size, dtype=repeats.dtype), repeats.astype(np.int64))


def _repeat_interleave(xp, *args):
    """``repeat_interleave(repeats, output_size)`` (a graph's two inputs, or ``repeats`` None
    from an eager call), ``(self, Tensor repeats, dim, output_size)``, ``(self, int repeats,
    dim, output_size)``."""
    if len(args) <= 2 or args[1] is None:
        return _repeat_index(xp, args[0], args[-1] if len(args) == 2 else
                             (args[3] if len(args) > 3 else None))
    x, repeats = args[0], args[1]
    dim = args[2] if len(args) > 2 else None
    output_size = args[3] if len(args) > 3 else None
    inp = x.reshape(-1) if dim is None or x.ndim == 0 else x
    if hasattr(repeats, "ndim"):
        d = 0 if dim is None else wrap_dim(dim, inp.ndim)
        n = inp.shape[d]
        if repeats.ndim == 0 or repeats.shape == (1,):
            repeats = xp.broadcast_to(repeats.reshape(1), (n,))
        elif repeats.ndim == 1:
            if repeats.shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                                   f"repeats.size(0) = {repeats.shape[0]} and input.size("
                                   f"{0 if dim is None else dim}) = {n}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return xp.take(inp, _repeat_index(xp, repeats, output_size), axis=d)
    d = wrap_dim(0 if dim is None else dim, x.ndim)
    if int(repeats) < 0:
        raise RuntimeError("Repeats must be non-negative")
    expected = inp.shape[d] * int(repeats)
    if output_size is not None and int(output_size) != expected:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {expected} but got "
                           f"{output_size}")
    return xp.repeat(inp, int(repeats), axis=d)


def _infer_repeat_interleave(node, types):
    if len(node.inputs) <= 2 or arg(node, 1) is None:
        return [like(tensor_in(types), shape=(None,))]
    t, r, dim = tensor_in(types), arg(node, 1), arg(node, 2, None)
    if dim is None or not known_shape(t):
        return [like(t, shape=(None,) if dim is None else None)]
    d = known_dim(dim, t.rank)
    if d is None or t.rank == 0:
        return [like(t, shape=None)]
    shape = list(t.shape)
    shape[d] = shape[d] * r if isinstance(r, int) and shape[d] is not None else None
    return [like(t, shape=shape)]


defop("aten::repeat_interleave", "Tensor self, Any repeats=None, int? dim=None, "
      "int? output_size=None", _repeat_interleave, infer=_infer_repeat_interleave)

# -- aminmax ----------------------------------------------------------------------------------


def _aminmax(xp, x, dim=None, keepdim=False):
    if dim is None:
        if x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        shape = (1,) * x.ndim if keepdim else ()
        return xp.asarray(xp.min(x)).reshape(shape), xp.asarray(xp.max(x)).reshape(shape)
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return x.copy(), x.copy()
    if x.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    return (xp.asarray(xp.min(x, axis=d, keepdims=bool(keepdim))),
            xp.asarray(xp.max(x, axis=d, keepdims=bool(keepdim))))


def _infer_aminmax(node, types):
    t, dim, keep = tensor_in(types), arg(node, 1, None), arg(node, 2, False)
    shape = None
    if dim is None and isinstance(keep, bool) and t.rank is not None:
        shape = (1,) * t.rank if keep else ()
    elif known_shape(t) and known_dim(dim, t.rank) is not None and isinstance(keep, bool):
        d = known_dim(dim, t.rank)
        shape = t.shape[:d] + ((1,) if keep else ()) + t.shape[d + 1:] if t.rank else ()
    return [like(t, shape=shape), like(t, shape=shape)]


defop("aten::aminmax", "Tensor self, int? dim=None, bool keepdim=False", _aminmax,
      num_outputs=2, category="reduction", infer=_infer_aminmax)

# -- scatter_reduce, scatter_, scatter_add_ ----------------------------------------------------

_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin",
           "max": "amax", "min": "amin"}


def _scatter_checks(x, dim, index, src):
    """ATen's scatter checks in its order; the wrapped dim."""
    d = wrap_dim(dim, x.ndim)
    if index.size and index.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not index.size:
        return d
    xs, ix = x.shape or (1,), index.shape or (1,)
    if len(xs) != len(ix):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    ss = None if src is None else (src.shape or (1,))
    wrong = any(ix[k] > xs[k] for k in range(len(xs)) if k != d)
    if not wrong and ss is not None:
        wrong = any(ix[k] > ss[wrap_dim(k, len(ss))] for k in range(len(xs)))
    if wrong:
        tail = "" if src is None else f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {d}{tail}")
    return d


def _scatter_key(xp, x, d, index, src):
    """(``x`` at least 1-d -- a view --, the numpy key of the places index writes, the values
    of ``src`` it writes), with ATen's bounds error."""
    out = x.reshape(1) if x.ndim == 0 else x
    idx = (index.reshape(1) if index.ndim == 0 else index).astype(np.int64)
    n = out.shape[d]
    bad = (idx < 0) | (idx >= n)
    if bool(bad.any()):
        raise RuntimeError(f"index {int(idx[bad][0])} is out of bounds for dimension {d} with "
                           f"size {n}")
    key = list(xp.indices(idx.shape, sparse=True))
    key[d] = idx
    if hasattr(src, "ndim"):
        src = (src.reshape(1) if src.ndim == 0 else src)[tuple(slice(0, k) for k in idx.shape)]
    return out, tuple(key), src


def _writable(x, name):
    if not getattr(getattr(x, "flags", None), "writeable", True):
        raise RuntimeError(f"{name}: the tensor it writes into is read-only")


def _identity(op, dtype):
    """What ``include_self=False`` puts in the written places first."""
    if op in ("sum", "mean", "prod"):
        return int(op == "prod")
    if dtype == np.bool_:
        return op == "amin"
    if dtype.kind == "f":
        return np.inf if op == "amin" else -np.inf
    return np.iinfo(dtype).max if op == "amin" else np.iinfo(dtype).min


def _scatter_reduce_into(xp, x, dim, index, src, reduce, include_self=True):
    d = _scatter_checks(x, dim, index, src)
    op = _REDUCE.get(reduce)
    if op is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if op == "mean" and x.dtype == np.bool_:
        raise not_implemented("scatter_gather_tensor_cpu_reduce_mean", x.dtype)
    _writable(x, "scatter_reduce_")
    if not index.size:
        return x
    out, key, vals = _scatter_key(xp, x, d, index, src)
    if not include_self:
        out[key] = _identity(op, x.dtype)
    ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum,
             "amin": xp.minimum}[op]
    acc = out  # float16 sums and products accumulate in float32, as ATen's
    if x.dtype == np.float16 and op in ("sum", "prod", "mean"):
        acc = out.astype(np.float32)
    with np.errstate(all="ignore"):
        ufunc.at(acc, key, vals.astype(acc.dtype))
        out[...] = acc
        if op == "mean":
            count = xp.full(out.shape, 1 if include_self else 0, np.int64)
            xp.add.at(count, key, 1)
            count = xp.maximum(count, 1).astype(x.dtype)
            out[...] = out / count if x.dtype.kind == "f" else xp.floor_divide(out, count)
    return x


def _scatter_into(xp, x, dim, index, src, reduce=None):
    """``scatter_`` of a src tensor or a value, plain or with ``reduce`` add / multiply."""
    tensor_src = hasattr(src, "ndim")
    d = _scatter_checks(x, dim, index, src if tensor_src else None)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    _writable(x, "scatter_")
    if not index.size:
        return x
    out, key, vals = _scatter_key(xp, x, d, index, src)
    if not tensor_src:
        with np.errstate(all="ignore"):
            vals = np.asarray(src).astype(x.dtype)[()]
    if reduce is None:
        out[key] = vals
    else:
        (xp.add if reduce == "add" else xp.multiply).at(out, key, vals)
    return x


def _scatter_add_into(xp, x, dim, index, src):
    return _scatter_into(xp, x, dim, index, src, "add")


_SCATTER_REDUCE = ("Tensor self, int dim, Tensor index, Tensor src, str reduce, "
                   "bool include_self=True")
defop("aten::scatter_reduce", _SCATTER_REDUCE,
      lambda xp, x, *args: _scatter_reduce_into(xp, x.copy(), *args), infer=infer_same)
for _name, _schema, _into in (
        ("scatter_reduce", _SCATTER_REDUCE, _scatter_reduce_into),
        ("scatter", "Tensor self, int dim, Tensor index, Any src, str? reduce=None",
         _scatter_into),
        ("scatter_add", "Tensor self, int dim, Tensor index, Tensor src", _scatter_add_into)):
    defop(f"aten::{_name}_", _schema, _into, pure=False, foldable=False,
          infer=lambda node, types: [types[0]])
    INPLACE_OF[f"aten::{_name}_"] = f"aten::{_name}"
