"""The tracer: run a Python function once on proxies and record every op it performs.

Like ``torch.jit.trace`` (and torch.fx's proxies), ``trace_graph`` hands ``fn`` a ``TracedValue``
per input.  A ``TracedValue`` holds both an IR ``Value`` and the concrete example array; every op
on it runs eagerly through the registry implementation *and* is recorded, so each recorded value
carries the example's dtype, shape and strides, exactly as PyTorch's traced graphs do::

    >>> g = trace_graph(lambda x: x * 2.0 + 1.0, (np.ones(3, np.float32),))
    >>> print(g)
    graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu)):
      %1 : float = prim::Constant[value=2.]() # example.py:1:0
      %2 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %1) # example.py:1:0
      %3 : float = prim::Constant[value=1.]() # example.py:1:0
      %4 : int = prim::Constant[value=1]() # example.py:1:0
      %5 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::add(%2, %3, %4) # ...
      return (%5)

Python control flow is evaluated on the example and baked in (``bool(traced)`` warns with a
``TracerWarning``); so are ``x.shape`` and ``len(x)``.  Operators, methods, indexing, numpy
ufuncs (``np.tanh(x)``) and numpy functions (``np.where``, ``np.sum``, ...) are all recorded;
anything that cannot be mapped to a registry op raises ``UnsupportedOpError`` naming the call.
"""
from __future__ import annotations

import inspect
import os
import sys
import warnings
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import ExecutionError, IntegerDivisionByZeroError, TorchlikeError, UnsupportedOpError
from ..interpreter import array_module
from ..ir.graph import Graph, Value
from ..ir.types import (FLOAT, INT, NONE, TENSOR, ListType, TensorType, TupleType,
                        Type, type_of_python_value)
from ..ops import registry

__all__ = ["TracedValue", "Tracer", "TracerWarning", "trace_graph"]

_TORCHLIKE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
INT64_MAX = 9223372036854775807  # what PyTorch records for an open slice end


class TracerWarning(UserWarning):
    """A Python-level decision (``if``, ``bool()``, ``x.shape``) was made on a traced value: the
    trace records the branch or the number the example produced and may not generalize."""


class UnsupportedAttributeError(UnsupportedOpError, AttributeError):
    """A method or attribute of a traced value that maps to no registry op (also an
    AttributeError, so ``hasattr`` keeps working)."""


def _user_source() -> Optional[str]:
    """``file.py:LINE:0`` of the innermost frame outside torchlike (and numpy's wrappers)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_TORCHLIKE_DIR) or filename.startswith(_NUMPY_DIR)):
            return f"{os.path.basename(filename)}:{frame.f_lineno}:0"
        frame = frame.f_back
    return None


def _tensor_type(array) -> TensorType:
    """The traced type of an array.  Size-0 arrays get PyTorch's contiguous strides (numpy
    reports 0 there, PyTorch ``max(size, 1)`` products)."""
    shape = tuple(int(d) for d in array.shape)
    if array.size == 0 or array.dtype.itemsize == 0:
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= max(d, 1)
        strides = tuple(reversed(strides))
    else:
        strides = tuple(s // array.dtype.itemsize for s in array.strides)
    device = "cpu" if type(array).__module__.startswith("numpy") else "cuda:0"
    return TensorType(str(array.dtype), shape, strides, device, False)


def _broadcast_strides(t: TensorType, shape: tuple) -> List[int]:
    """``t``'s strides seen from the broadcast ``shape`` (0 where it is broadcast)."""
    pad = len(shape) - len(t.shape)
    out = [0] * pad
    for i, (n, st) in enumerate(zip(t.shape, t.strides)):
        out.append(0 if n == 1 and shape[pad + i] != 1 else st)
    return out


def elementwise_strides(shape: tuple, operands: Sequence[TensorType]) -> Tuple[int, ...]:
    """The strides PyTorch's TensorIterator gives an elementwise result: dims ordered like the
    operands' (the first operand with a strict stride order decides; broadcast dims abstain),
    so ``a * b`` with a transposed ``a`` is transposed too.  Mirrors ``reorder_dimensions``."""
    ndim = len(shape)
    strides = [_broadcast_strides(t, shape) for t in operands
               if t.shape is not None and t.strides is not None and len(t.shape) <= ndim]

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # fastest-moving dim first
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, acc = [0] * ndim, 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _is_array(value) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(value, np.generic)


def _type_of(value) -> Type:
    if _is_array(value):
        return _tensor_type(value)
    if isinstance(value, tuple):
        return TupleType(tuple(_type_of(v) for v in value))
    return type_of_python_value(value)


def _concrete(value):
    """The example value behind an argument (lists and tuples unwrapped element by element)."""
    if isinstance(value, TracedValue):
        return value.concrete
    if isinstance(value, (list, tuple)):
        return type(value)(_concrete(v) for v in value)
    return value


def _warn(message: str) -> None:
    warnings.warn(message, TracerWarning, stacklevel=3)


class Tracer:
    """Records ops into ``self.graph``; ``TracedValue``s point back at their tracer."""

    def __init__(self):
        self.graph = Graph()

    # -- graph values for Python arguments ------------------------------------------------
    def constant(self, value: Any, source: Optional[str]) -> Value:
        """A fresh ``prim::Constant`` appended here, as PyTorch inserts one before each use.
        ``None`` constants carry no source comment (PyTorch prints none)."""
        if isinstance(value, np.generic):
            value = value.item()
        if value is None:
            return self.graph.create("prim::Constant", [], [NONE]).output()
        if _is_array(value):
            return self.graph.create("prim::Constant", [], [_tensor_type(value)], {"value": value},
                                     source=source).output()
        if isinstance(value, (bool, int, float, str)):
            return self.graph.create("prim::Constant", [], [type_of_python_value(value)],
                                     {"value": value}, source=source).output()
        raise UnsupportedOpError(f"cannot record {type(value).__name__} value {value!r} as a "
                                 f"graph constant (at {source})")

    def as_value(self, arg: Any, param: Optional[registry.Param], source: Optional[str]) -> Value:
        """The graph value for one op argument: traced values as they are, Python scalars and
        captured arrays as constants, lists as ``prim::ListConstruct`` (``int[]``, ``Tensor[]``)."""
        if isinstance(arg, TracedValue):
            if arg.tracer is not self:
                raise UnsupportedOpError(f"a traced value from another trace was used at {source}")
            return arg.value
        if isinstance(arg, (list, tuple)):
            items = [self.as_value(a, None, source) for a in arg]
            elem = _list_elem_type(items, param)
            return self.graph.create("prim::ListConstruct", items, [ListType(elem)]).output()
        return self.constant(arg, source)

    # -- recording ------------------------------------------------------------------------
    def record(self, op: registry.OpDef, bound: Sequence[Any]) -> Any:
        """Run ``op`` on the examples behind ``bound`` and record it; returns traced results."""
        source = _user_source()
        concrete = [_concrete(a) for a in bound]
        result = run_impl(op, concrete, source)
        inputs = [self.as_value(a, p, source) for a, p in zip(bound, op.params)]
        if op.num_outputs == 1 and isinstance(result, (list, tuple)) and \
                all(_is_array(r) for r in result):
            # A Tensor[] result (chunk, unbind): PyTorch's tracer unpacks it right away.
            node = self.graph.create(op.name, inputs, [ListType(TENSOR)], source=source)
            unpack = self.graph.create("prim::ListUnpack", [node.output()],
                                       [_type_of(r) for r in result])
            return [TracedValue(self, v, r) for v, r in zip(unpack.outputs, result)]
        if op.num_outputs != 1 and isinstance(result, (list, tuple)):
            results = list(result)
            node = self.graph.create(op.name, inputs, [_type_of(r) for r in results],
                                     source=source)
            return tuple(TracedValue(self, v, r) for v, r in zip(node.outputs, results))
        t = _type_of(result)
        if op.is_elementwise and isinstance(t, TensorType) and t.rank and result.size:
            # numpy lays results out its own way; the type records PyTorch's layout.
            t = t.with_(strides=elementwise_strides(t.shape, [v.type for v in inputs
                                                              if isinstance(v.type, TensorType)]))
        node = self.graph.create(op.name, inputs, [t], source=source)
        return TracedValue(self, node.output(), result)

    def output_value(self, result: Any) -> Value:
        """The graph value for what ``fn`` returned: tuples (nested too) become
        ``prim::TupleConstruct``, lists ``prim::ListConstruct``."""
        if isinstance(result, TracedValue):
            return self.as_value(result, None, None)
        if isinstance(result, tuple):
            items = [self.output_value(r) for r in result]
            return self.graph.create("prim::TupleConstruct", items,
                                     [TupleType(tuple(v.type for v in items))]).output()
        if isinstance(result, list):
            items = [self.output_value(r) for r in result]
            return self.graph.create("prim::ListConstruct", items,
                                     [ListType(_list_elem_type(items, None))]).output()
        if isinstance(result, dict):
            raise UnsupportedOpError("a traced function cannot return a dict")
        return self.constant(result, None)


def _list_elem_type(items: List[Value], param: Optional[registry.Param]) -> Type:
    if items:
        first = items[0].type
        if first.is_tensor() or any(v.type.is_tensor() for v in items):
            return TENSOR
        return first if all(v.type == first for v in items) else FLOAT
    if param is not None and param.type.startswith("int"):
        return INT
    return TENSOR


def run_impl(op: registry.OpDef, args: List[Any], source: Optional[str] = None) -> Any:
    """Run an op's reference implementation on concrete values (tracing, and eager
    ``torchlike.<op>`` calls), naming the op and, if known, the line on failure."""
    xp = array_module(args)
    where = f"{op.name} at {source}" if source else op.name
    try:
        result = op.impl(xp, *args)
    except TorchlikeError:
        raise
    except ZeroDivisionError as e:
        raise IntegerDivisionByZeroError(f"{where}: {e}") from e
    except Exception as e:
        raise ExecutionError(f"{where}: {type(e).__name__}: {e}") from e
    return _wrap_result(result)


def _wrap_result(result: Any) -> Any:
    """numpy scalars become 0-d arrays (runtime tensors are arrays, never numpy scalars)."""
    if isinstance(result, np.generic):
        return np.asarray(result)
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap_result(r) for r in result)
    return result


def _call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call op ``name`` (``aten::add``, or a python_name) on traced arguments."""
    from ..functional import call_op, find_op
    op = find_op(name)
    if op is None:
        raise UnsupportedOpError(f"'{name}' on a traced value: no op with that name is "
                                 f"registered (at {_user_source()})")
    return call_op(op, args, kwargs)


def _call_first(names: Sequence[str], *args: Any, **kwargs: Any) -> Any:
    """Call the first of ``names`` that is registered (``__and__`` before ``bitwise_and``)."""
    from ..functional import find_op
    for name in names:
        if find_op(name) is not None:
            return _call(name, *args, **kwargs)
    return _call(names[0], *args, **kwargs)


def _has(name: str) -> bool:
    from ..functional import find_op
    return find_op(name) is not None


# Python operator -> torchlike function name(s), first registered wins.
_AND = ("aten::__and__", "aten::bitwise_and")
_OR = ("aten::__or__", "aten::bitwise_or")
_XOR = ("aten::__xor__", "aten::bitwise_xor")


class TracedValue:
    """A proxy for a tensor (or Python scalar) input or intermediate during tracing.

    ``value`` is the IR value it stands for, ``concrete`` the example's array.  Operators,
    methods and numpy calls on it are recorded through the op registry."""

    __slots__ = ("tracer", "value", "concrete")
    __array_priority__ = 1000  # let our reflected operators win over ndarray's

    def __init__(self, tracer: Tracer, value: Value, concrete: Any):
        self.tracer = tracer
        self.value = value
        self.concrete = concrete

    def __repr__(self) -> str:
        return f"TracedValue(%{self.value.name} : {self.value.type})"

    __hash__ = object.__hash__  # __eq__ records aten::eq; hash by identity like torch.Tensor

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, other): return _call("aten::add", self, other)
    def __radd__(self, other): return _call("aten::add", self, other)
    def __sub__(self, other): return _call("aten::sub", self, other)

    def __rsub__(self, other):
        if _has("aten::rsub"):  # PyTorch records rsub(self, other, alpha)
            return _call("aten::rsub", self, other)
        return _call("aten::sub", other, self)

    def __mul__(self, other): return _call("aten::mul", self, other)
    def __rmul__(self, other): return _call("aten::mul", self, other)
    def __truediv__(self, other): return _call("aten::div", self, other)

    def __rtruediv__(self, other):
        # PyTorch's Tensor.__rtruediv__ is reciprocal(self) * other.
        if _has("aten::reciprocal"):
            return _call("aten::mul", _call("aten::reciprocal", self), other)
        return _call("aten::div", other, self)

    def __floordiv__(self, other): return _call("aten::floor_divide", self, other)
    def __rfloordiv__(self, other): return _call("aten::floor_divide", other, self)
    def __mod__(self, other): return _call("aten::remainder", self, other)
    def __rmod__(self, other): return _call("aten::remainder", other, self)
    def __pow__(self, other): return _call("aten::pow", self, other)
    def __rpow__(self, other): return _call("aten::pow", other, self)
    def __matmul__(self, other): return _call("aten::matmul", self, other)
    def __rmatmul__(self, other): return _call("aten::matmul", other, self)
    def __neg__(self): return _call("aten::neg", self)
    def __pos__(self): return self
    def __abs__(self): return _call("aten::abs", self)
    def __invert__(self): return _call_first(("aten::bitwise_not",), self)
    def __and__(self, other): return _call_first(_AND, self, other)
    def __rand__(self, other): return _call_first(_AND, other, self)
    def __or__(self, other): return _call_first(_OR, self, other)
    def __ror__(self, other): return _call_first(_OR, other, self)
    def __xor__(self, other): return _call_first(_XOR, self, other)
    def __rxor__(self, other): return _call_first(_XOR, other, self)
    def __eq__(self, other): return _call("aten::eq", self, other)  # type: ignore[override]
    def __ne__(self, other): return _call("aten::ne", self, other)  # type: ignore[override]
    def __lt__(self, other): return _call("aten::lt", self, other)
    def __le__(self, other): return _call("aten::le", self, other)
    def __gt__(self, other): return _call("aten::gt", self, other)
    def __ge__(self, other): return _call("aten::ge", self, other)

    # -- conversions that bake the example into the trace ---------------------------------
    def __bool__(self) -> bool:
        _warn("Converting a traced value to a Python boolean: the trace records the branch "
              "this example takes and might not generalize to other inputs.")
        return bool(self.concrete)

    def __int__(self) -> int:
        _warn("Converting a traced value to a Python int: the number is baked into the trace.")
        return int(self.concrete)

    def __float__(self) -> float:
        _warn("Converting a traced value to a Python float: the number is baked into the trace.")
        return float(self.concrete)

    def __index__(self) -> int:
        _warn("Using a traced value as an index: the number is baked into the trace.")
        return int(self.concrete)

    def __len__(self) -> int:
        _warn("len() of a traced value is baked into the trace as a constant.")
        return len(self.concrete)

    def __array__(self, *args, **kwargs):
        raise UnsupportedOpError(
            f"converting traced value %{self.value.name} to a numpy array (at {_user_source()}) "
            "would bake the example into the trace; use torchlike functions or numpy ufuncs")

    def item(self):
        _warn("item() on a traced value: the number is baked into the trace.")
        return self.concrete.item()

    def tolist(self):
        _warn("tolist() on a traced value: the values are baked into the trace.")
        return self.concrete.tolist()

    def numpy(self):
        _warn("numpy() on a traced value: the values are baked into the trace.")
        return self.concrete

    # -- shape queries (concrete, as PyTorch's tracer bakes them) -------------------------
    @property
    def shape(self) -> tuple:
        _warn("x.shape on a traced value returns the example's sizes; the trace will not "
              "generalize to inputs of other shapes if they are used.")
        return tuple(self.concrete.shape)

    def size(self, dim: Optional[int] = None):
        shape = self.shape
        return shape if dim is None else shape[dim]

    @property
    def ndim(self) -> int:
        return self.concrete.ndim

    def dim(self) -> int:
        return self.concrete.ndim

    @property
    def dtype(self):
        return self.concrete.dtype

    def numel(self) -> int:
        _warn("numel() on a traced value is baked into the trace as a constant.")
        return int(self.concrete.size)

    # -- methods with Python conveniences ------------------------------------------------
    def t(self):
        return _call("aten::t", self)

    @property
    def T(self):
        if self.ndim < 2:
            return self
        if self.ndim == 2 and _has("aten::t"):
            return _call("aten::t", self)
        return _call("aten::permute", self, list(range(self.ndim - 1, -1, -1)))

    def reshape(self, *shape):
        return _call("aten::reshape", self, _shape_arg(shape))

    def view(self, *shape):
        if not _has("aten::view"):
            return self.reshape(*shape)
        return _call("aten::view", self, _shape_arg(shape))

    def expand(self, *sizes):
        return _call("aten::expand", self, _shape_arg(sizes))

    def permute(self, *dims):
        return _call("aten::permute", self, _shape_arg(dims))

    def to(self, *args, **kwargs):
        if args and _is_device(args[0]):
            args = args[1:]
        kwargs.pop("device", None)
        if args and isinstance(args[0], TracedValue):  # x.to(other): other's dtype
            args = (args[0].dtype,) + args[1:]
        if not args and "dtype" not in kwargs:
            return self
        return _call("aten::to", self, *args, **kwargs)

    def type_as(self, other: "TracedValue"):
        return self.to(other.dtype)

    def float(self): return self.to("float32")
    def double(self): return self.to("float64")
    def half(self): return self.to("float16")
    def int(self): return self.to("int32")
    def long(self): return self.to("int64")
    def bool(self): return self.to("bool")

    def detach(self):
        return self

    def contiguous(self, *args, **kwargs):
        if not _has("aten::contiguous"):
            return self
        return _call("aten::contiguous", self, *args, **kwargs)

    def __getattr__(self, name: str):
        """Any registry op by python_name or alias is a method: ``x.sigmoid()``,
        ``x.clamp(min=0.0)``, ``x.chunk(4, 1)``."""
        if name.startswith("_"):
            raise AttributeError(name)
        from ..functional import call_op, find_op
        op = find_op(name)
        if op is None:
            raise UnsupportedAttributeError(
                f"'{name}' on a traced value: no torchlike op is named '{name}' "
                f"(at {_user_source()})")
        return lambda *args, **kwargs: call_op(op, (self,) + args, kwargs)

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, index):
        """``x[0]`` -> aten::select, ``x[:, 1:3]`` -> aten::slice, ``x[..., None]`` ->
        aten::unsqueeze; full ``:`` slices record nothing."""
        index = index if isinstance(index, tuple) else (index,)
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        if sum(1 for i in index if i is Ellipsis) > 1:
            raise UnsupportedOpError(f"index {index!r} has more than one '...' "
                                     f"(at {_user_source()})")
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
                                             f"(at {_user_source()})")
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
                                         f"is not supported (at {_user_source()})")
        return out

    def __setitem__(self, index, value):
        raise UnsupportedOpError(f"in-place assignment to a traced value is not supported "
                                 f"(at {_user_source()})")

    def __iter__(self):
        if _has("aten::unbind"):
            return iter(_call("aten::unbind", self, 0))
        return iter([_call("aten::select", self, 0, i) for i in range(len(self.concrete))])

    # -- numpy protocols --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .numpy_map import map_ufunc
        if method != "__call__" or kwargs:
            raise UnsupportedOpError(f"np.{ufunc.__name__}.{method}(... {sorted(kwargs)}) on a "
                                     f"traced value is not supported (at {_user_source()})")
        return map_ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        from .numpy_map import map_function
        return map_function(func, args, kwargs)


def _shape_arg(shape: tuple):
    """``reshape(2, 3)`` and ``reshape((2, 3))`` both mean the list ``[2, 3]``."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        return list(shape[0])
    return list(shape)


def _is_device(value) -> bool:
    return isinstance(value, str) and (value in ("cpu", "cuda") or value.startswith("cuda:"))


# -- trace_graph ------------------------------------------------------------------------------
def _input_names(fn, count: int) -> List[Optional[str]]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [None] * count
    names: List[Optional[str]] = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names.extend([p.name] * (count - len(names)))
    if len(names) < count:
        raise TypeError(f"{getattr(fn, '__name__', fn)} takes {len(names)} positional "
                        f"arguments but {count} example inputs were given")
    return names[:count]


def trace_graph(fn, example_inputs) -> Graph:
    """Run ``fn(*example_inputs)`` once on ``TracedValue`` proxies and return the recorded graph.

    ``example_inputs`` is a tuple (or list) of arrays and Python scalars, or one array.  Inputs
    are named after ``fn``'s parameters.  The outputs are one tensor or a (nested) tuple/list,
    recorded as ``prim::TupleConstruct``/``prim::ListConstruct`` as PyTorch does.
    """
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    tracer = Tracer()
    graph = tracer.graph
    proxies = []
    for name, example in zip(_input_names(fn, len(example_inputs)), example_inputs):
        if isinstance(example, np.generic):
            example = np.asarray(example)
        if _is_array(example):
            t: Type = _tensor_type(example)
        elif isinstance(example, (bool, int, float)):
            t = type_of_python_value(example)
        else:
            raise UnsupportedOpError(f"cannot trace an input of type {type(example).__name__} "
                                     f"(parameter '{name}'): pass arrays or Python scalars")
        proxies.append(TracedValue(tracer, graph.add_input(name, t), example))
    for i in range(len(proxies)):  # PyTorch numbers values after the inputs: %3 follows 3 inputs
        graph.claim_name(str(i))
    result = fn(*proxies)
    graph.set_outputs([tracer.output_value(result)])
    return graph
