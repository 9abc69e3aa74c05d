"""Tensor factories: ``aten::tensor``, ``ones``, ``zeros``, ``empty``, ``full``, ``arange``,
``rand``/``randn`` and their ``*_like`` random forms, with PyTorch's dtype inference (float32
by default; ``full`` and ``arange`` take the fill / bound values' kind: int -> int64, bool ->
bool; ``tensor`` its data's).  Layout, device and pin_memory arguments are accepted and ignored
(arrays live where the array module puts them)::

    %z : Tensor = aten::zeros(%size, %none, %none, %none, %none)
    %r : Tensor = aten::arange(%start, %end, %step, %none, %none, %none, %none)

Random factories draw from numpy's generator (``torch.manual_seed`` streams are not
reproduced): their shapes and dtypes are PyTorch's, their values are not.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from .registry import OpDef, defop, register
from .tensor_common import UNKNOWN, arg, dtype_arg

# factories whose input 0 is the output's size
_SIZED = frozenset({"aten::ones", "aten::zeros", "aten::empty", "aten::full", "aten::rand",
                    "aten::randn"})

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_RNG = np.random.default_rng()


def _size(size):
    if isinstance(size, (int, np.integer)):
        size = [size]
    out = tuple(int(s) for s in size)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(out)}")
    return out


def _kind_dtype(values, default="float32"):
    """PyTorch's dtype for Python scalars: all bool -> bool, all int -> int64, else float32."""
    flat = list(np.asarray(values, dtype=object).reshape(-1)) if not np.isscalar(values) \
        else [values]
    if flat and all(isinstance(v, (bool, np.bool_)) for v in flat):
        return "bool"
    if flat and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in flat):
        return "int64"
    return default


def _factory(fill):
    def impl(xp, size, dtype=None, layout=None, device=None, pin_memory=None,
             memory_format=None):
        return fill(xp, _size(size), dtype_arg(dtype) or "float32")
    return impl


def _tensor(xp, data, dtype=None, device=None, requires_grad=False):
    dt = dtype_arg(dtype) or _kind_dtype(data)
    return xp.asarray(np.asarray(data).astype(dt))


def _full(xp, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    return xp.full(_size(size), fill_value, dtype=dtype_arg(dtype) or _kind_dtype(fill_value))


def _arange(xp, *args):
    """arange(end, ...4 options), arange(start, end, ...4), arange(start, end, step, ...4); an
    eager call may leave the options out."""
    if len(args) <= 3:  # an eager call: arange(end), (start, end), (start, end, step)
        args = tuple(args) + (None,) * 4
    bounds, opts = args[:-4], args[-4:]
    if len(bounds) == 1:
        start, end, step = 0, bounds[0], 1
    elif len(bounds) == 2:
        (start, end), step = bounds, 1
    elif len(bounds) == 3:
        start, end, step = bounds
    else:
        raise RuntimeError(f"arange: expected 1 to 3 bounds, got {len(bounds)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dt = dtype_arg(opts[0]) or _kind_dtype([start, end, step])
    n = max(int(np.ceil((end - start) / step)), 0)
    return xp.asarray(start + step * np.arange(n, dtype=np.float64 if dt != "int64" else
                                                np.int64)).astype(dt)


def _random(kind):
    def impl(xp, x_or_size, dtype=None, layout=None, device=None, pin_memory=None,
             memory_format=None):
        if hasattr(x_or_size, "shape"):
            shape, dt = x_or_size.shape, dtype_arg(dtype) or str(x_or_size.dtype)
        else:
            shape, dt = _size(x_or_size), dtype_arg(dtype) or "float32"
        values = _RNG.random(shape) if kind == "rand" else _RNG.standard_normal(shape)
        return xp.asarray(values.astype(dt))
    return impl


def _infer_factory(node, types):
    """The declared type, with the shape a constant ``size`` list (``zeros([2, 3])``) or constant
    ``data`` (``tensor([1, 0])``) states; other arguments leave it as declared."""
    t = node.outputs[0].type
    t = t if isinstance(t, TensorType) else TensorType()
    first = arg(node, 0, None)
    if node.kind == "aten::tensor" and first is not UNKNOWN and first is not None:
        try:
            return [t.with_(shape=np.shape(first))]
        except ValueError:  # ragged data: PyTorch refuses it at run time
            return [t]
    if node.kind in _SIZED and isinstance(first, list) and \
            all(isinstance(d, int) and d >= 0 for d in first):
        return [t.with_(shape=tuple(first))]
    return [t]


for _name, _fill in (("ones", lambda xp, s, dt: xp.ones(s, dt)),
                     ("zeros", lambda xp, s, dt: xp.zeros(s, dt)),
                     ("empty", lambda xp, s, dt: xp.zeros(s, dt))):  # empty: zeros, never garbage
    defop(f"aten::{_name}", f"int[] size, {_OPTS}, MemoryFormat? memory_format=None",
          _factory(_fill), infer=_infer_factory, foldable=False)
defop("aten::tensor", "Any data, ScalarType? dtype=None, Device? device=None, "
      "bool requires_grad=False", _tensor, infer=_infer_factory, foldable=False)
defop("aten::full", f"int[] size, Scalar fill_value, {_OPTS}", _full, infer=_infer_factory,
      foldable=False)
register(OpDef("aten::arange", (), _arange, infer=_infer_factory, foldable=False,
               python_name="arange"))  # overloads told apart by their argument count
for _name in ("rand", "randn"):
    defop(f"aten::{_name}", f"int[] size, {_OPTS}", _random(_name), infer=_infer_factory,
          foldable=False, pure=False)
    defop(f"aten::{_name}_like", f"Tensor self, {_OPTS}, MemoryFormat? memory_format=None",
          _random(_name), infer=_infer_factory, foldable=False, pure=False)


def _new(fill):
    """``x.new_zeros(size)`` & co.: ``self``'s dtype unless one is given (and its device)."""
    def impl(xp, self, size, dtype=None, layout=None, device=None, pin_memory=None):
        return fill(xp, _size(size), dtype_arg(dtype) or str(self.dtype))
    return impl


def _new_full(xp, self, size, fill_value, dtype=None, layout=None, device=None,
              pin_memory=None):
    return xp.full(_size(size), fill_value, dtype=dtype_arg(dtype) or str(self.dtype))


for _name, _fill in (("new_ones", lambda xp, s, dt: xp.ones(s, dt)),
                     ("new_zeros", lambda xp, s, dt: xp.zeros(s, dt)),
                     ("new_empty", lambda xp, s, dt: xp.zeros(s, dt))):  # empty: zeros
    defop(f"aten::{_name}", f"Tensor self, int[] size, {_OPTS}", _new(_fill),
          infer=_infer_factory, foldable=False)
defop("aten::new_full", f"Tensor self, int[] size, Scalar fill_value, {_OPTS}", _new_full,
      infer=_infer_factory, foldable=False)


def _one_hot(xp, x, num_classes=-1):
    if x.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor")
    if x.size and int(x.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    n = int(num_classes)
    if n == -1:
        n = int(x.max()) + 1 if x.size else 0
    elif x.size and int(x.max()) >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (x[..., None] == xp.arange(n)).astype(np.int64)


# one_hot: int64 class indices -> int64 rows with a 1 at each index (num_classes -1: max + 1)
defop("aten::one_hot", "Tensor self, int num_classes=-1", _one_hot,
      infer=lambda node, types: [TensorType("int64")], foldable=False)
