"""More tensor ops PyTorch-printed graphs use, interpreted (numpy or cupy), with PyTorch's
dtypes, shapes and errors (the ops ``tensor_shape_more.py`` had no room for)::

    %y : Tensor = aten::index_reduce(%x, %dim, %index, %source, %reduce, %include_self)
    %h : Tensor, %edges : Tensor = aten::histogram(%x, %bins, %range, %weight, %density)
    %y : Tensor = aten::max_unpool2d(%x, %indices, %output_size)   # what F.max_unpool1d/2d call

* scatters into a copy: ``index_reduce`` (prod, mean, amax, amin; include_self), ``put`` and
  the in-place ``put_`` (listed in ``inplace.INPLACE_OF``);
* ``max_unpool2d`` / ``max_unpool3d`` (stride and padding checked, not used, as ATen's);
* ``combinations``, ``histogram`` (bin count or edges; bins found as ATen's ``upper_bound``).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..ir.types import TensorType
from .inplace import INPLACE_OF
from .registry import REGISTRY, defop
from .tensor_common import (
    arg,
    infer_same,
    known_shape,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
)
from .tensor_misc import host
from .tensor_more_index import check_index_source


def _impl(name):
    return REGISTRY[f"aten::{name}"].impl


def _shape_of(shape):
    """An inferred shape: the known shape, or None when ``shape`` is not a list of ints."""
    return shape if isinstance(shape, list) and all(isinstance(s, int) for s in shape) else None


# -- index_reduce, put / put_ -----------------------------------------------------------------


def _index_reduce(xp, x, dim, index, source, reduce, include_self=True):
    """ATen's checks, in its order, then ``scatter_reduce`` with the index spread along
    ``dim`` of ``source``."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = check_index_source("index_reduce_", x, dim, index, source)
    if x.dtype == np.bool_ and (not include_self or x.ndim <= 1):  # ATen's kernels' dtypes
        raise not_implemented("index_func_" if include_self else
                              "index_reduce_func_exclude_input_init", x.dtype)
    size = x.shape[d] if x.ndim else 1
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        raise IndexError("index out of range in self")
    if reduce == "mean" and x.dtype == np.bool_:
        raise not_implemented("div_floor_cpu", x.dtype)
    spread = index.reshape(()) if source.ndim == 0 else \
        xp.broadcast_to(index.reshape([-1 if k == d else 1 for k in range(source.ndim)]),
                        source.shape)
    return _impl("scatter_reduce")(xp, x, d, spread, source, reduce, include_self)


def _put_into(xp, x, index, source, accumulate=False):
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{scalar_name(index.dtype)}")
    if x.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_name(x.dtype)} and source.dtype = "
                           f"{scalar_name(source.dtype)}")
    if source.size != index.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.size}, index.numel() = "
                         f"{index.size}")
    if x.size == 0 and index.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    if not getattr(getattr(x, "flags", None), "writeable", True):
        raise RuntimeError("put_: the tensor it writes into is read-only")
    flat, y = index.reshape(-1), x.reshape(-1).copy()  # positions in x's logical order
    bad = (flat < -x.size) | (flat >= x.size)
    if bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor "
                         f"of {x.size} elements.")
    if accumulate:
        xp.add.at(y, flat % max(x.size, 1), source.reshape(-1))
    else:
        y[flat % max(x.size, 1)] = source.reshape(-1)
    x[...] = y.reshape(x.shape)
    return x


defop("aten::index_reduce", "Tensor self, int dim, Tensor index, Tensor source, str reduce, "
      "bool include_self=True", _index_reduce, infer=infer_same)
defop("aten::put", "Tensor self, Tensor index, Tensor source, bool accumulate=False",
      lambda xp, x, *args: _put_into(xp, x.copy(), *args), infer=infer_same)
defop("aten::put_", "Tensor self, Tensor index, Tensor source, bool accumulate=False",
      _put_into, pure=False, foldable=False, infer=lambda node, types: [types[0]])
INPLACE_OF["aten::put_"] = "aten::put"

# -- max_unpool2d / max_unpool3d --------------------------------------------------------------


def _max_unpool(n):
    """Each value written at its flat index into its plane of ``output_size``; ``stride`` and
    ``padding`` (3-d only) are checked, not used, as ATen's."""
    name, dims = f"max_unpool{n}d", ("(height, width)", "(depth, height, width)")[n - 2]

    def impl(xp, x, indices, output_size, stride=(1, 1, 1), padding=(0, 0, 0)):
        def count(what, v, colon=""):
            if len(v) != n:
                raise RuntimeError(f"There should be exactly {('two', 'three')[n - 2]} elements "
                                   f"{dims} in {what}, but got{colon} {len(v)} elements.")
        if indices.dtype != np.int64:
            raise RuntimeError("elements in indices should be type int64" + (
                f" but got: {scalar_name(indices.dtype)}" if n == 2 else ""))
        if n == 2:
            count("output_size", output_size)
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d "
                               f"Tensor, but got a tensor with {x.ndim} dimensions.")
        if n == 3:
            count("output_size", output_size)
            count("stride", stride, ":")
            count("padding", padding, ":")
        if x.shape != indices.shape:
            raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                               f"({list(x.shape)}) but got indices tensor with shape: "
                               f"{list(indices.shape)}")
        for i in range(1, x.ndim):
            if x.shape[i] == 0:
                raise RuntimeError(f"max_unpooling{n}d_forward_out_cpu(): Expected input to have "
                                   f"non-zero size for non-batch dimensions, but got "
                                   f"{list(x.shape)} with dimension {i} being empty.")
        if n == 3 and min(stride) <= 0:
            raise RuntimeError(f"strides should be greater than zero, but got stride: "
                               f"{list(stride)}")
        if x.dtype.kind != "f":
            raise not_implemented(name, x.dtype)
        plane = math.prod(output_size)
        lead = x.shape[:x.ndim - n]
        idx = indices.reshape(math.prod(lead), math.prod(x.shape[x.ndim - n:]))
        bad = (idx < 0) | (idx >= plane)
        if bool(bad.any()):
            raise RuntimeError(f"Found an invalid max index: {int(idx[bad][0])} (output volumes "
                               f"are of size {'x'.join(map(str, output_size))})")
        out = xp.zeros((idx.shape[0], plane), x.dtype)
        out[xp.arange(idx.shape[0])[:, None], idx] = x.reshape(idx.shape)
        return out.reshape(lead + tuple(int(s) for s in output_size))
    return impl


def _infer_max_unpool(node, types):
    t, size = tensor_in(types), _shape_of(arg(node, 2))
    if not known_shape(t) or size is None or t.rank < len(size):
        return [like(t, shape=None)]
    return [like(t, shape=t.shape[:t.rank - len(size)] + tuple(size))]


defop("aten::max_unpool2d", "Tensor self, Tensor indices, int[2] output_size", _max_unpool(2),
      infer=_infer_max_unpool)
defop("aten::max_unpool3d", "Tensor self, Tensor indices, int[3] output_size, int[3] stride, "
      "int[3] padding", _max_unpool(3), infer=_infer_max_unpool)

# -- combinations, histogram ------------------------------------------------------------------


def _combinations(xp, x, r=2, with_replacement=False):
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return xp.zeros(0, x.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(range(x.shape[0]), r)), np.int64).reshape(-1, r)
    return x[xp.asarray(idx)]


_TYPE_META = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "int64": "long int", "int32": "int", "bool": "bool"}


def _upper_bound(edges, v):
    """std::upper_bound of each of ``v`` in ``edges`` (its comparisons: NaN or unsorted edges
    give ATen's bins)."""
    first, count = np.zeros(v.shape, np.int64), np.full(v.shape, edges.size, np.int64)
    while bool((count > 0).any()):
        step = count // 2
        mid = first + step
        go = (count > 0) & ~(v < edges[np.minimum(mid, edges.size - 1)])
        first, count = np.where(go, mid + 1, first), np.where(go, count - step - 1, step)
    return first


def _histogram(xp, x, bins, *args):
    """``histogram.bins_tensor(self, bins, weight, density)`` or ``histogram.bin_ct(self, bins,
    range, weight, density)``: (hist, bin_edges) in the input's dtype, ATen's checks first."""
    if hasattr(bins, "ndim") and len(args) <= 2:  # a graph's bins_tensor overload: no range
        args = (None,) + tuple(args)
    rng, weight, density = (tuple(args) + (None, None, False)[len(args):])[:3]
    name = f"input with dtype {_TYPE_META.get(str(x.dtype), str(x.dtype))}"
    if hasattr(bins, "ndim") and bins.dtype != x.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got {name} and bins for dimension 0 with dtype "
                           f"{_TYPE_META.get(str(bins.dtype), str(bins.dtype))}")
    if hasattr(bins, "ndim") and bins.ndim != 1:
        raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got "
                           f"{bins.ndim} dimensions in the bins tensor for dimension 0")
    if hasattr(bins, "ndim") and bins.size == 0:
        raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but "
                           "got 0 elements in the bins tensor for dimension 0")
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got input("
                           f"{_TYPE_META.get(str(x.dtype))}), and weight("
                           f"{_TYPE_META.get(str(weight.dtype))})")
    if weight is not None and weight.shape != (x.size,):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape [{x.size}, 1] and weight with shape "
                           f"{list(weight.shape)}")
    n = bins.size - 1 if hasattr(bins, "ndim") else int(bins)
    if n <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for dimension 0")
    if rng is not None and len(rng) != 2:
        raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range should have "
                           f"2 elements, but got {len(rng)}")
    if x.dtype not in (np.float32, np.float64):
        raise not_implemented("histogramdd", x.dtype)
    t, flat = x.dtype.type, x.reshape(-1)
    if hasattr(bins, "ndim"):
        edges = bins.copy()
    else:
        lo, hi = (float(v) for v in rng) if rng is not None else \
            (float(flat.min()), float(flat.max())) if flat.size else (0.0, 1.0)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not "
                               f"finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension 0")
        lo, hi = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
        i, start, end = np.arange(n + 1), t(lo), t(hi)  # ATen's linspace, in the input's dtype
        step = (end - start) / t(n)
        edges = xp.asarray(np.where(i < (n + 1) // 2, start + step * i.astype(t),
                                    end - step * (n - i).astype(t)).astype(t))
    e, v = host(edges), host(flat)  # bins are found on the host
    keep = (v >= e[0]) & (v <= e[-1])
    pos = np.minimum(_upper_bound(e, v[keep]) - 1, n - 1)
    w = None if weight is None else host(weight).reshape(-1)[keep]
    hist = np.zeros(n, x.dtype)
    np.add.at(hist, pos, t(1) if w is None else w)
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum() / np.diff(e)
    return xp.asarray(hist.astype(x.dtype)), edges


def _infer_histogram(node, types):
    t, b = tensor_in(types), arg(node, 1)
    n = b if isinstance(b, int) and not isinstance(b, bool) else None
    e = tensor_in(types, 1).shape if isinstance(types[1], TensorType) else (
        None if n is None else (n + 1,))
    h = None if e is None or e[0] is None else (e[0] - 1,)
    return [like(t, shape=h if n is None else (n,)), like(t, shape=e)]


defop("aten::combinations", "Tensor self, int r=2, bool with_replacement=False", _combinations,
      infer=lambda node, types: [like(tensor_in(types), shape=None)])
defop("aten::histogram", "Tensor self, Any bins=100, float[]? range=None, Tensor? weight=None, "
      "bool density=False", _histogram, num_outputs=2, infer=_infer_histogram)
