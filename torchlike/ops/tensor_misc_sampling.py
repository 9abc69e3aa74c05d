"""Order statistics, counting and ``torch.unique``, interpreted (numpy or cupy), with PyTorch's
tie, NaN and dtype rules and errors::

    %u : Tensor, %inv : Tensor, %n : Tensor = aten::_unique2(%x, %sorted, %inverse, %counts)
    %u : (Tensor, Tensor) = prim::CallFunction(%_return_inverse, %x, %true, %true, %false, %none)

* ``kthvalue`` (ATen's quickselect) and ``mode`` (ATen's ``std::sort`` of each row, as
  ``std_sort`` reproduces it) return ATen's index among ties; NaN is the largest / equals nothing;
* ``bincount`` (int64, or float32 / float64 with weights), ``histc`` (min == max: the data's
  range; ATen's bin arithmetic in the input's dtype);
* ``_unique2`` / ``_unique`` (sorted, as on CPU whatever ``sorted`` says; each NaN its own
  value), ``unique_dim`` / ``unique_consecutive`` (inverse and counts always, as ATen's), and the
  ``torch.functional`` helpers a scripted ``torch.unique`` calls (``_return_output``, ...).

The spatial transformers' ops are in ``tensor_grid.py``.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.types import TensorType
from .functions import register_function
from .registry import defop
from .tensor_common import (
    arg,
    array_module_of,
    known_dim,
    known_shape,
    like,
    not_implemented,
    tensor_in,
    wrap_dim,
)
from .tensor_misc import host

__all__ = ["std_sort"]


# -- libstdc++'s std::sort and ATen's quickselect, which decide ATen's index among ties -------


def std_sort(items: list, less) -> list:
    """``items`` sorted as libstdc++'s ``std::sort`` sorts them with the comparison ``less``:
    introsort (median-of-three quicksort down to 16-element runs, heapsort below 2 log2(n)
    levels), then insertion sort -- the same order of equal items, and the same result for a
    comparison NaN breaks."""
    a = list(items)
    n = len(a)

    def linear_insert(i, lo=0):
        v, j = a[i], i - 1
        while j >= lo and less(v, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v

    def insertion(lo, hi):
        for i in range(lo + 1, hi):
            if less(a[i], a[lo]):
                a[lo:i + 1] = [a[i]] + a[lo:i]
            else:
                linear_insert(i, lo)

    def adjust_heap(lo, hole, length, value):
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[lo + child], a[lo + child - 1]):
                child -= 1
            a[lo + hole], hole = a[lo + child], child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[lo + hole], hole = a[lo + child - 1], child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[lo + parent], value):
            a[lo + hole], hole = a[lo + parent], parent
            parent = (hole - 1) // 2
        a[lo + hole] = value

    def heap_sort(lo, hi):
        length = hi - lo
        for parent in range((length - 2) // 2, -1, -1):
            adjust_heap(lo, parent, length, a[lo + parent])
        for last in range(hi - 1, lo, -1):
            value, a[last] = a[last], a[lo]
            adjust_heap(lo, 0, last - lo, value)

    def introsort(lo, hi, depth):
        while hi - lo > 16:
            if depth == 0:
                heap_sort(lo, hi)
                return
            depth -= 1
            mid, x, z = lo + (hi - lo) // 2, lo + 1, hi - 1  # the median of three to lo
            if less(a[x], a[mid]):
                m = mid if less(a[mid], a[z]) else (z if less(a[x], a[z]) else x)
            else:
                m = x if less(a[x], a[z]) else (z if less(a[mid], a[z]) else mid)
            a[lo], a[m] = a[m], a[lo]
            first, last = lo + 1, hi
            while True:  # the unguarded partition around a[lo]
                while first < hi - 1 and less(a[first], a[lo]):
                    first += 1
                last -= 1
                while last > lo and less(a[lo], a[last]):
                    last -= 1
                if not first < last:
                    break
                a[first], a[last] = a[last], a[first]
                first += 1
            introsort(first, hi, depth)
            hi = first

    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        insertion(0, min(n, 16))
        for i in range(16, n):
            linear_insert(i)
    return a


def _quickselect(values: list, k: int):
    """ATen's ``quick_select_template`` (median-of-three pivots, NaN the largest): (the k-th
    smallest value, its index), the index among equal values the one ATen returns."""
    idx = list(range(len(values)))
    v = values

    def gt(x, y):
        return (x != x and y == y) or x > y

    def swap(i, j):
        v[i], v[j] = v[j], v[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(v[lo], v[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(v[lo + 1], v[hi]):
            swap(lo + 1, hi)
        if gt(v[lo], v[hi]):
            swap(lo, hi)
        if gt(v[lo + 1], v[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, v[lo]
        while True:
            i += 1
            while gt(piv, v[i]):
                i += 1
            j -= 1
            while gt(v[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return v[k], idx[k]


# -- kthvalue, mode ---------------------------------------------------------------------------


def _rows(xp, x, d, fn, k=None):
    """``fn(row list)`` -> (value, index) for each 1-d slice of ``x`` along ``d``; with ``k``
    (kthvalue), rows whose k-th value occurs once, without NaN, by np.partition instead."""
    rows = np.moveaxis(host(x), d, -1)
    shape, flat = rows.shape[:-1], rows.reshape(-1, rows.shape[-1])
    values, indices = np.empty(len(flat), dtype=x.dtype), np.empty(len(flat), np.int64)
    slow = np.ones(len(flat), bool)
    if k is not None and flat.dtype.kind in "fiu" and flat.size:
        v = np.partition(flat, k - 1, axis=-1)[:, k - 1]
        eq = flat == v[:, None]
        slow = eq.sum(-1) != 1
        if flat.dtype.kind == "f":
            slow |= np.isnan(flat).any(-1)
        values[~slow], indices[~slow] = v[~slow], eq[~slow].argmax(-1)
    for i in np.flatnonzero(slow):
        values[i], indices[i] = fn(flat[i].tolist())
    return xp.asarray(values.reshape(shape)), xp.asarray(indices.reshape(shape))


def _select(name, fn):
    """kthvalue / mode: ``fn(row, *extra)`` per slice, with ATen's checks and keepdim."""
    def impl(xp, x, *args):
        extra, (dim, keepdim) = args[:-2], args[-2:]
        d = wrap_dim(dim, x.ndim)
        if x.size == 0 and x.ndim and x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        if name == "kthvalue" and not 1 <= extra[0] <= (x.shape[d] if x.ndim else 1):
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        if name == "kthvalue" and x.dtype == np.bool_:
            raise not_implemented("kthvalue_cpu", x.dtype)
        if x.ndim == 0:
            return x.copy(), xp.zeros((), np.int64)
        values, indices = _rows(xp, x, d, lambda r: fn(r, *extra),
                                k=extra[0] if name == "kthvalue" else None)
        if keepdim:
            values, indices = xp.expand_dims(values, d), xp.expand_dims(indices, d)
        return values, indices
    return impl


def _mode_row(row):
    """ATen's mode of one row: sorted by value with std::sort, the longest run (the first of
    equal lengths) and the index of its last element in that order."""
    pairs = std_sort(list(zip(row, range(len(row)))), lambda a, b: a[0] < b[0])
    best, run = None, 0
    for i, (v, j) in enumerate(pairs):
        run += 1
        if i == len(pairs) - 1 or v != pairs[i + 1][0]:
            if best is None or run > best[0]:
                best = (run, v, j)
            run = 0
    return best[1], best[2]


def _infer_select(node, types):
    t, keep = tensor_in(types), arg(node, len(node.inputs) - 1, False)
    d = known_dim(arg(node, len(node.inputs) - 2, -1), t.rank)
    shape = None
    if known_shape(t) and d is not None and isinstance(keep, bool):
        shape = t.shape[:d] + ((1,) if keep else ()) + t.shape[d + 1:] if t.rank else ()
    return [like(t, shape=shape), like(t, "int64", shape)]


defop("aten::kthvalue", "Tensor self, int k, int dim=-1, bool keepdim=False",
      _select("kthvalue", lambda r, k: _quickselect(r, k - 1)), num_outputs=2,
      category="reduction", infer=_infer_select)
defop("aten::mode", "Tensor self, int dim=-1, bool keepdim=False", _select("mode", _mode_row),
      num_outputs=2, category="reduction", infer=_infer_select)

# -- bincount, histc -------------------------------------------------------------------------


def _bincount(xp, x, weights=None, minlength=0):
    if x.dtype.kind not in "iu":
        raise not_implemented("bincount_cpu", x.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim == 1 and x.size == 0:
        return xp.zeros(int(minlength), np.int64)
    if x.ndim != 1 or int(x.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(x.max()) + 1, int(minlength))
    if weights is None:
        return xp.bincount(x.astype(np.int64), minlength=n).astype(np.int64)
    out = xp.zeros(n, np.float32 if weights.dtype == np.float32 else np.float64)
    xp.add.at(out, x.astype(np.int64), weights.astype(out.dtype))  # in order, as ATen adds
    return out


def _infer_bincount(node, types):
    w = types[1] if len(types) > 1 else None
    if not isinstance(w, TensorType):
        return [like(tensor_in(types), "int64", (None,))]
    return [like(tensor_in(types), None if w.dtype is None else
                 "float32" if w.dtype == "float32" else "float64", (None,))]


def _num(v: float, from_data: bool) -> str:
    """A double as C++'s ostream prints it (a NaN of the data's range: -nan, as x86 makes it)."""
    return "-nan" if from_data and v != v else f"{v:g}"


def _histc(xp, x, bins=100, lo=0, hi=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi, from_data = float(lo), float(hi), False
    if lo == hi and x.size:
        lo, hi, from_data = float(xp.min(x)), float(xp.max(x)), True
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_num(lo, from_data)}, "
                           f"{_num(hi, from_data)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if x.dtype.kind != "f":
        raise not_implemented("histogram_cpu", x.dtype)
    t = x.dtype.type
    left, right = t(lo), t(hi)
    flat = x.reshape(-1)
    v = flat[(flat >= left) & (flat <= right)]
    with np.errstate(all="ignore"):  # ATen's arithmetic, in the input's dtype
        pos = ((v - left) * t(bins) / (right - left)).astype(np.int64)
    return xp.bincount(xp.minimum(pos, bins - 1), minlength=bins).astype(x.dtype)


defop("aten::bincount", "Tensor self, Tensor? weights=None, int minlength=0", _bincount,
      infer=_infer_bincount)
defop("aten::histc", "Tensor self, int bins=100, Scalar min=0, Scalar max=0", _histc,
      infer=lambda node, types: [like(tensor_in(types), shape=(
          arg(node, 1, 100) if isinstance(arg(node, 1, 100), int) else None,))])


# -- unique ----------------------------------------------------------------------------------


def _unique_flat(xp, x, return_inverse, return_counts, consecutive=False):
    """(values, inverse, counts) over all elements: sorted (stably: of -0.0 and 0.0 the first
    stays) unless ``consecutive``; inverse and counts empty unless asked for."""
    flat = x.reshape(-1)
    order = None if consecutive else xp.argsort(flat, kind="stable")  # NaN last
    s = flat if order is None else flat[order]
    new = xp.ones(s.shape, bool)
    new[1:] = s[1:] != s[:-1]  # NaN != NaN: each NaN its own value
    inverse, counts = xp.zeros(0, np.int64), xp.zeros(0, np.int64)
    if return_inverse:
        group = xp.cumsum(new) - 1
        inverse = group if order is None else xp.empty_like(group)
        if order is not None:
            inverse[order] = group
        inverse = inverse.reshape(x.shape)
    if return_counts:
        counts = xp.diff(xp.append(xp.nonzero(new)[0], flat.size)).astype(np.int64)
    return s[new], inverse, counts


def _unique_slices(xp, x, dim, consecutive):
    """ATen's unique over the slices along ``dim``: (values, inverse, counts), always all three.
    Slices sort lexicographically with ATen's comparison (a NaN compares as neither less nor
    greater), by ``std_sort`` where a NaN makes the order matter."""
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    empty = xp.zeros(0, np.int64)
    if x.shape[d] == 0:
        if sum(s == 0 for s in x.shape) != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")
        return x.copy(), empty, empty
    if 0 in x.shape:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    moved = xp.moveaxis(x, d, 0)
    rows = moved.reshape(x.shape[d], -1)
    n = rows.shape[0]
    if consecutive:
        order = xp.arange(n)
    elif x.dtype.kind == "f" and bool(xp.isnan(rows).any()):
        data = host(rows).tolist()

        def less(a, b):
            for u, v in zip(data[a], data[b]):
                if u < v or u > v:
                    return u < v
            return False
        order = xp.asarray(std_sort(list(range(n)), less))
    else:
        order = xp.lexsort(rows.T[::-1])
    s = rows[order]
    new = xp.ones(n, bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    inverse = xp.empty(n, np.int64)
    inverse[order] = xp.cumsum(new) - 1
    counts = xp.diff(xp.append(xp.nonzero(new)[0], n)).astype(np.int64)
    values = s[new].reshape((-1,) + moved.shape[1:])
    return xp.ascontiguousarray(xp.moveaxis(values, 0, d)), inverse, counts


def _unique_consecutive(xp, x, return_inverse=False, return_counts=False, dim=None):
    if dim is None or (dim == 0 and x.ndim == 1):
        return _unique_flat(xp, x, return_inverse, return_counts, consecutive=True)
    return _unique_slices(xp, x, dim, True)


def _infer_unique(node, types):
    t, inverse, counts, dim = tensor_in(types), arg(node, 2), arg(node, 3), None
    if node.kind == "aten::unique_dim":
        dim = arg(node, 1)
    elif node.kind == "aten::unique_consecutive":
        inverse, counts, dim = arg(node, 1), arg(node, 2), arg(node, 3, None)
    if dim is not None:
        return [like(t, shape=None), like(t, "int64", (None,)), like(t, "int64", (None,))]
    inv = (0,) if inverse is False else t.shape if inverse is True else None
    outs = [like(t, shape=(None,)), like(t, "int64", inv),
            like(t, "int64", (0,) if counts is False else (None,))]
    return outs[:2] if node.kind == "aten::_unique" else outs


def _functional(consecutive: bool, picks):
    """The ``torch.functional`` helper a scripted ``torch.unique`` (``consecutive``: ``torch.
    unique_consecutive``) calls, with the function's arguments; it returns ``picks`` of (values,
    inverse, counts), or for a boolean dispatch on return_counts (``_return_inverse_false`` &
    co.) ``picks[return_counts]``."""
    def fn(input, *args):
        xp = array_module_of(input)
        if consecutive:
            inverse, counts, dim = (list(args) + [False, False, None][len(args):])[:3]
            res = _unique_consecutive(xp, input, inverse, counts, dim)
        else:
            _, inverse, counts, dim = (list(args) + [True, False, False, None][len(args):])[:4]
            res = _unique_flat(xp, input, inverse, counts) if dim is None else \
                _unique_slices(xp, input, dim, False)
        out = tuple(res[i] for i in (picks[bool(counts)] if isinstance(picks[0], tuple) else picks))
        return out[0] if len(out) == 1 else out
    return fn


defop("aten::_unique2", "Tensor self, bool sorted=True, bool return_inverse=False, "
      "bool return_counts=False", lambda xp, x, s=True, i=False, c=False: _unique_flat(xp, x, i, c),
      num_outputs=3, infer=_infer_unique)
defop("aten::_unique", "Tensor self, bool sorted=True, bool return_inverse=False",
      lambda xp, x, s=True, i=False: _unique_flat(xp, x, i, False)[:2], num_outputs=2,
      infer=_infer_unique)
defop("aten::unique_dim", "Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
      "bool return_counts=False", lambda xp, x, dim, *flags: _unique_slices(xp, x, dim, False),
      num_outputs=3, infer=_infer_unique)
defop("aten::unique_consecutive", "Tensor self, bool return_inverse=False, "
      "bool return_counts=False, int? dim=None", _unique_consecutive, num_outputs=3,
      infer=_infer_unique)
for _prefix, _consecutive in (("_", False), ("_consecutive_", True)):
    for _name, _picks in (("return_output", (0,)), ("return_inverse", (0, 1)),
                          ("return_counts", (0, 2)), ("return_inverse_and_counts", (0, 1, 2)),
                          ("return_inverse_false", ((0,), (0, 2))),
                          ("return_inverse_true", ((0, 1), (0, 1, 2)))):
        register_function(_prefix + _name, _functional(_consecutive, _picks))
register_function("_unique_impl", _functional(False, (0, 1, 2)))
register_function("_unique_consecutive_impl", _functional(True, (0, 1, 2)))
