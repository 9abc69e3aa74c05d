"""The tracer's proxy: ``TracedValue``, a tensor stand-in whose every op is recorded.

A ``TracedValue`` holds the IR value it stands for and the example's concrete array.  Its
Python operators are generated from ``python_names.OPERATORS`` (``x + 1`` records ``aten::add``,
``2 - x`` records ``aten::rsub``, as PyTorch's ``Tensor`` does); any registry op is a method by
its python name or alias (``x.sigmoid()``, ``x.clamp(min=0.0)``); indexing records
``select``/``slice``/``unsqueeze``; numpy ufuncs and array functions go through ``numpy_map``.
Conversions to Python values (``bool(x)``, ``x.shape``, ``len(x)``) return the example's and
warn with ``TracerWarning``: the trace bakes them in, as ``torch.jit.trace`` does.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Value
from ..ops.inplace import INPLACE_DUNDERS, inplace_name
from ..ops.python_names import OPERATORS, PythonOperator, find_op, is_registered
from .calls import Proxy, Recorder, call_op
from .diagnostics import UnsupportedAttributeError, user_source, warn_baked
from .numpy_map import map_function, map_ufunc

__all__ = ["INT64_MAX", "TracedValue"]

INT64_MAX = 9223372036854775807  # what PyTorch records for an open slice end


def _call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call op ``name`` (``aten::add``, or a python_name) on traced arguments."""
    op = find_op(name)
    if op is None:
        raise UnsupportedOpError(f"'{name}' on a traced value: no op with that name is "
                                 f"registered (at {user_source()})")
    return call_op(op, args, kwargs)


# -- operators, from the one table ------------------------------------------------------------
def _reflected_call(operator: PythonOperator, proxy: "TracedValue", other: Any) -> Any:
    """``other OP proxy``: PyTorch's ``Tensor.__rOP__`` form where the table gives one and its
    ops are registered, else the operator's op on the swapped operands."""
    form = operator.reflected
    if form is not None and all(is_registered(kind) for kind in form.kinds):
        if form.self_through is not None:
            proxy = _call(form.self_through, proxy)
        return _call(form.op, proxy, other)
    return _call(operator.kind, other, proxy)


def _operator_method(operator: PythonOperator, reflected: bool):
    """The dunder method recording ``operator`` (its reflected form if ``reflected``)."""
    if operator.is_identity:
        def method(self):
            return self
    elif operator.arity == 1:
        def method(self):
            return _call(operator.kind, self)
    elif reflected:
        def method(self, other):
            return _reflected_call(operator, self, other)
    else:
        def method(self, other):
            return _call(operator.kind, self, other)
    name = operator.reflected_dunder if reflected else operator.dunder
    method.__name__ = name
    method.__qualname__ = f"TracedValue.{name}"
    side = "reflected " if reflected else ""
    method.__doc__ = f"Record the {side}Python operator ``{operator.symbol}``."
    return method


def _inplace_method(operator: PythonOperator, name: str):
    """``x += y`` on a traced tensor: the in-place op (``aten::add_``), as PyTorch records it;
    ``x`` then stands for its result, so every alias of ``x`` sees the write.  On a traced
    Python number, the operator's op (numbers are immutable)."""
    def method(self, other):
        if not self.value.type.is_tensor():
            return _call(operator.kind, self, other)
        out = _call(inplace_name(operator.kind), self, other)
        self.value, self.concrete = out.value, out.concrete
        return self
    method.__name__ = name
    method.__qualname__ = f"TracedValue.{name}"
    method.__doc__ = f"Record the in-place Python operator ``{operator.symbol}=``."
    return method


def _with_operators(cls):
    """Give ``cls`` a dunder method for every operator of ``OPERATORS`` that has one, and an
    in-place one (``__iadd__``) where the op has an in-place twin."""
    for operator in OPERATORS:
        if operator.dunder is not None:
            setattr(cls, operator.dunder, _operator_method(operator, reflected=False))
            inplace = "__i" + operator.dunder[2:]
            if operator.arity == 2 and inplace in INPLACE_DUNDERS and operator.ops \
                    and is_registered(inplace_name(operator.kind)):
                setattr(cls, inplace, _inplace_method(operator, inplace))
        if operator.reflected_dunder is not None:
            setattr(cls, operator.reflected_dunder, _operator_method(operator, reflected=True))
    return cls


@_with_operators
class TracedValue(Proxy):
    """A proxy for a tensor (or Python scalar) input or intermediate during tracing.

    ``value`` is the IR value it stands for, ``concrete`` the example's array.  Operators,
    methods and numpy calls on it are recorded through the op registry."""

    __slots__ = ("tracer", "value", "concrete")
    __array_priority__ = 1000  # let our reflected operators win over ndarray's

    def __init__(self, tracer: Recorder, value: Value, concrete: Any):
        self.tracer = tracer
        self.value = value
        self.concrete = concrete

    def __repr__(self) -> str:
        return f"TracedValue(%{self.value.name} : {self.value.type})"

    __hash__ = object.__hash__  # __eq__ records aten::eq; hash by identity like torch.Tensor

    # -- conversions that bake the example into the trace ---------------------------------
    def __bool__(self) -> bool:
        warn_baked("Converting a traced value to a Python boolean: the trace records the "
                   "branch this example takes and might not generalize to other inputs.")
        return bool(self.concrete)

    def __int__(self) -> int:
        warn_baked("Converting a traced value to a Python int: the number is baked into the "
                   "trace.")
        return int(self.concrete)

    def __float__(self) -> float:
        warn_baked("Converting a traced value to a Python float: the number is baked into the "
                   "trace.")
        return float(self.concrete)

    def __index__(self) -> int:
        warn_baked("Using a traced value as an index: the number is baked into the trace.")
        return int(self.concrete)

    def __len__(self) -> int:
        warn_baked("len() of a traced value is baked into the trace as a constant.")
        return len(self.concrete)

    def __array__(self, *args, **kwargs):
        raise UnsupportedOpError(
            f"converting traced value %{self.value.name} to a numpy array (at {user_source()}) "
            "would bake the example into the trace; use torchlike functions or numpy ufuncs")

    def item(self):
        """The example's number (baked into the trace)."""
        warn_baked("item() on a traced value: the number is baked into the trace.")
        return self.concrete.item()

    def tolist(self):
        """The example's values as lists (baked into the trace)."""
        warn_baked("tolist() on a traced value: the values are baked into the trace.")
        return self.concrete.tolist()

    def numpy(self):
        """The example's array (baked into the trace)."""
        warn_baked("numpy() on a traced value: the values are baked into the trace.")
        return self.concrete

    # -- shape queries (concrete, as PyTorch's tracer bakes them) -------------------------
    @property
    def shape(self) -> tuple:
        """The example's sizes: later ops see them as constants."""
        warn_baked("x.shape on a traced value returns the example's sizes; the trace will not "
                   "generalize to inputs of other shapes if they are used.")
        return tuple(self.concrete.shape)

    def size(self, dim: Optional[int] = None):
        """``x.size()`` (the example's sizes, as ``x.shape``) or ``x.size(dim)``."""
        shape = self.shape
        return shape if dim is None else shape[dim]

    @property
    def ndim(self) -> int:
        """The example's rank (traces are specialized to it anyway: no warning)."""
        return self.concrete.ndim

    def dim(self) -> int:
        """The example's rank, as ``ndim``."""
        return self.concrete.ndim

    @property
    def dtype(self):
        """The example's numpy dtype (recorded types carry it anyway: no warning)."""
        return self.concrete.dtype

    def numel(self) -> int:
        """The example's element count (baked into the trace)."""
        warn_baked("numel() on a traced value is baked into the trace as a constant.")
        return int(self.concrete.size)

    # -- methods with Python conveniences ------------------------------------------------
    def t(self):
        """Records ``aten::t`` (the transpose of a matrix)."""
        return _call("aten::t", self)

    @property
    def T(self):
        """All dims reversed: ``aten::t`` for a matrix, else ``aten::permute``."""
        if self.ndim < 2:
            return self
        if self.ndim == 2 and is_registered("aten::t"):
            return _call("aten::t", self)
        return _call("aten::permute", self, list(range(self.ndim - 1, -1, -1)))

    def reshape(self, *shape):
        """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: records ``aten::reshape``."""
        return _call("aten::reshape", self, _shape_arg(shape))

    def view(self, *shape):
        """``aten::view`` as PyTorch spells it, ``reshape`` where the registry lacks it."""
        if not is_registered("aten::view"):
            return self.reshape(*shape)
        return _call("aten::view", self, _shape_arg(shape))

    def expand(self, *sizes):
        """``x.expand(4, 3)`` or ``x.expand((4, 3))``: records ``aten::expand``."""
        return _call("aten::expand", self, _shape_arg(sizes))

    def permute(self, *dims):
        """``x.permute(1, 0)`` or ``x.permute((1, 0))``: records ``aten::permute``."""
        return _call("aten::permute", self, _shape_arg(dims))

    def to(self, *args, **kwargs):
        """``x.to(dtype)``, ``x.to(device, dtype)``, ``x.to(other)``: records ``aten::to``
        for the dtype; devices are ignored and no dtype records nothing."""
        if args and _is_device(args[0]):
            args = args[1:]
        kwargs.pop("device", None)
        if args and isinstance(args[0], TracedValue):  # x.to(other): other's dtype
            args = (args[0].dtype,) + args[1:]
        if not args and "dtype" not in kwargs:
            return self
        return _call("aten::to", self, *args, **kwargs)

    def type_as(self, other: "TracedValue"):
        """``x.to(other.dtype)``."""
        return self.to(other.dtype)

    # PyTorch's dtype-named conversions: x.float() is x.to(torch.float32).
    def float(self): return self.to("float32")
    def double(self): return self.to("float64")
    def half(self): return self.to("float16")
    def int(self): return self.to("int32")
    def long(self): return self.to("int64")
    def bool(self): return self.to("bool")

    def detach(self):
        """Itself: traces carry no autograd state."""
        return self

    def contiguous(self, *args, **kwargs):
        """Records ``aten::contiguous`` (nothing where the registry lacks it)."""
        if not is_registered("aten::contiguous"):
            return self
        return _call("aten::contiguous", self, *args, **kwargs)

    def __getattr__(self, name: str):
        """Any registry op by python_name or alias is a method: ``x.sigmoid()``,
        ``x.clamp(min=0.0)``, ``x.chunk(4, 1)``."""
        if name.startswith("_"):
            raise AttributeError(name)
        op = find_op(name)
        if op is None:
            raise UnsupportedAttributeError(
                f"'{name}' on a traced value: no torchlike op is named '{name}' "
                f"(at {user_source()})")
        return lambda *args, **kwargs: call_op(op, (self,) + args, kwargs)

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, index):
        """``x[0]`` -> aten::select, ``x[:, 1:3]`` -> aten::slice, ``x[..., None]`` ->
        aten::unsqueeze; full ``:`` slices record nothing."""
        index = index if isinstance(index, tuple) else (index,)
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        if sum(1 for i in index if i is Ellipsis) > 1:
            raise UnsupportedOpError(f"index {index!r} has more than one '...' "
                                     f"(at {user_source()})")
        out, dim = self, 0
        for item in index:
            if item is Ellipsis:
                dim += self.ndim - used
            elif item is None:
                out = _call("aten::unsqueeze", out, dim)
                dim += 1
            elif isinstance(item, slice):
                if item.step is not None and item.step <= 0:
                    raise UnsupportedOpError(f"slice step must be positive, got {item.step} "
                                             f"(at {user_source()})")
                if item != slice(None):
                    start = 0 if item.start is None else item.start
                    end = INT64_MAX if item.stop is None else item.stop
                    step = 1 if item.step is None else item.step
                    out = _call("aten::slice", out, dim, start, end, step)
                dim += 1
            elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                out = _call("aten::select", out, dim, int(item))
            else:
                raise UnsupportedOpError(f"indexing a traced value with {type(item).__name__} "
                                         f"is not supported (at {user_source()})")
        return out

    def __setitem__(self, index, value):
        raise UnsupportedOpError(f"in-place assignment to a traced value is not supported "
                                 f"(at {user_source()})")

    def __iter__(self):
        if is_registered("aten::unbind"):
            return iter(_call("aten::unbind", self, 0))
        return iter([_call("aten::select", self, 0, i) for i in range(len(self.concrete))])

    # -- numpy protocols --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise UnsupportedOpError(f"np.{ufunc.__name__}.{method}(... {sorted(kwargs)}) on a "
                                     f"traced value is not supported (at {user_source()})")
        return map_ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        return map_function(func, args, kwargs)


def _shape_arg(shape: tuple):
    """``reshape(2, 3)`` and ``reshape((2, 3))`` both mean the list ``[2, 3]``."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        return list(shape[0])
    return list(shape)


def _is_device(value) -> bool:
    return isinstance(value, str) and (value in ("cpu", "cuda") or value.startswith("cuda:"))

