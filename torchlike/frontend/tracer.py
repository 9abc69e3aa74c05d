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

This module holds the recorder (``Tracer``) and ``trace_graph``; the proxy is traced_value.py,
binding and running ops calls.py, the numpy protocols numpy_map.py.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, ContextManager, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Graph, Value
from ..ir.types import (
    FLOAT,
    INT,
    NONE,
    TENSOR,
    ListType,
    TensorType,
    TupleType,
    Type,
    is_array,
    type_of_python_value,
)
from ..ops import registry
from ..passes.inline_functions import copy_nodes
from .calls import run_impl
from .diagnostics import TracerWarning, UnsupportedAttributeError, user_source
from .traced_value import TracedValue

__all__ = ["TracedValue", "Tracer", "TracerWarning", "UnsupportedAttributeError",
           "elementwise_strides", "trace_graph"]


# -- the types traced values carry ------------------------------------------------------------
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
    for i, (n, st) in enumerate(zip(t.shape, t.strides, strict=False)):
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


_is_array = is_array  # numpy and cupy arrays (numpy scalars are Python-like values here)


def _type_of(value) -> Type:
    """The traced type of an op's result: arrays, (nested) tuples, Python scalars."""
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


# -- the recorder ----------------------------------------------------------------------------
class Tracer:
    """Records ops into ``self.graph``; ``TracedValue``s point back at their tracer, and
    ``calls.call_op`` hands every op with a traced argument to its ``record``."""

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
        source = user_source()
        concrete = [_concrete(a) for a in bound]
        result = run_impl(op, concrete, source)
        # an op told apart by argument count (norm, arange) has no params: every argument
        params = list(op.params) + [None] * (len(bound) - len(op.params))
        inputs = [self.as_value(a, p, source) for a, p in zip(bound, params, strict=False)]
        if op.num_outputs == 1 and isinstance(result, (list, tuple)) and \
                all(_is_array(r) for r in result):
            # A Tensor[] result (chunk, unbind): PyTorch's tracer unpacks it right away.
            node = self.graph.create(op.name, inputs, [ListType(TENSOR)], source=source)
            unpack = self.graph.create("prim::ListUnpack", [node.output()],
                                       [_type_of(r) for r in result])
            return [TracedValue(self, v, r) for v, r in zip(unpack.outputs, result, strict=False)]
        if op.num_outputs != 1 and isinstance(result, (list, tuple)):
            results = list(result)
            node = self.graph.create(op.name, inputs, [_type_of(r) for r in results],
                                     source=source)
            return tuple(TracedValue(self, v, r)
                         for v, r in zip(node.outputs, results, strict=False))
        t = _type_of(result)
        if op.is_elementwise and isinstance(t, TensorType) and t.rank and result.size:
            # numpy lays results out its own way; the type records PyTorch's layout.
            t = t.with_(strides=elementwise_strides(t.shape, [v.type for v in inputs
                                                              if isinstance(v.type, TensorType)]))
        node = self.graph.create(op.name, inputs, [t], source=source)
        return TracedValue(self, node.output(), result)

    def traced_results(self, value: Value, result: Any) -> Any:
        """``result`` (an example output) as traced values backed by the graph value ``value``:
        a tuple result is unpacked with ``prim::TupleUnpack``, as PyTorch records it."""
        if isinstance(result, tuple):
            types = [_type_of(r) for r in result]
            unpack = self.graph.create("prim::TupleUnpack", [value], types)
            return tuple(self.traced_results(v, r)
                         for v, r in zip(unpack.outputs, result, strict=True))
        if isinstance(result, list) and all(_is_array(r) for r in result):
            unpack = self.graph.create("prim::ListUnpack", [value], [_type_of(r) for r in result])
            return [TracedValue(self, v, r) for v, r in zip(unpack.outputs, result, strict=True)]
        if _is_array(result):
            return TracedValue(self, value, result)
        return result  # a Python scalar or None: the example's value, as traced code sees it

    def record_graph_call(self, graph: Graph, args: Sequence[Any], result: Any) -> Any:
        """A compiled function called while tracing: ``graph``'s nodes are copied in at the
        call (its control flow kept, not evaluated on the example), bound to ``args``;
        ``result`` is what the call returned on the examples.  ``graph`` must not use inputs
        beyond ``len(args)`` (a frozen module method leaves ``%self`` unused)."""
        source = user_source()
        env = {p: self.as_value(a, None, source) for p, a in zip(graph.inputs, args)}
        copy_nodes(self.graph, graph.block, self.graph.block, len(self.graph.block.nodes), env)
        out = [env[v] for v in graph.outputs]
        value = out[0] if len(out) == 1 else self.graph.create(
            "prim::TupleConstruct", out, [TupleType(tuple(v.type for v in out))]).output()
        return self.traced_results(value, result)

    def record_method_call(self, module: Value, name: str, args: Sequence[Any],
                           result: Any) -> Any:
        """``prim::CallMethod[name=...](%module, *args)`` for a submodule called while a module
        is traced; ``result`` is the call's output on the examples."""
        source = user_source()
        inputs = [module] + [self.as_value(a, None, source) for a in args]
        node = self.graph.create("prim::CallMethod", inputs, [_type_of(result)], {"name": name},
                                 source=source)
        return self.traced_results(node.output(), result)

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
    """A recorded list's element type: Tensor if any item is one, else the items' common type
    (float if they differ); an empty list is typed by the parameter it is passed to."""
    if items:
        first = items[0].type
        if first.is_tensor() or any(v.type.is_tensor() for v in items):
            return TENSOR
        return first if all(v.type == first for v in items) else FLOAT
    if param is not None and param.type.startswith("int"):
        return INT
    return TENSOR



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


def trace_graph(fn, example_inputs, self_type: Optional[Type] = None,
                prepare: Optional[Callable[[Tracer, Value], ContextManager]] = None) -> Graph:
    """Run ``fn(*example_inputs)`` once on ``TracedValue`` proxies and return the recorded graph.

    ``example_inputs`` is a tuple (or list) of arrays and Python scalars, or one array.  Inputs
    are named after ``fn``'s parameters.  The outputs are one tensor or a (nested) tuple/list,
    recorded as ``prim::TupleConstruct``/``prim::ListConstruct`` as PyTorch does.

    For a module's ``forward`` (``torchlike.jit`` traces modules), ``self_type`` adds a first
    input ``%self`` of that class type and ``prepare(tracer, self_value)`` is entered around
    the call (it points the module's parameters at ``prim::GetAttr`` reads of ``%self``).
    """
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    tracer = Tracer()
    graph = tracer.graph
    self_value = graph.add_input("self", self_type) if self_type is not None else None
    proxies = []
    for name, example in zip(_input_names(fn, len(example_inputs)), example_inputs, strict=False):
        if isinstance(example, np.generic):
            example = np.asarray(example)
        if _is_array(example):
            t: Type = _tensor_type(example)
        elif isinstance(example, (bool, int, float)):
            t = type_of_python_value(example)
        else:
            hint = " (from a torch.Tensor: x.numpy())" if type(example).__module__.startswith(
                "torch") else ""
            raise UnsupportedOpError(f"cannot trace an input of type {type(example).__name__} "
                                     f"(parameter '{name}'): pass numpy or cupy arrays or "
                                     f"Python scalars{hint}")
        proxies.append(TracedValue(tracer, graph.add_input(name, t), example))
    for i in range(len(graph.inputs)):  # PyTorch numbers values after the inputs: %3 follows 3
        graph.claim_name(str(i))
    with (prepare(tracer, self_value) if prepare is not None else contextlib.nullcontext()):
        result = fn(*proxies)
        graph.set_outputs([tracer.output_value(result)])
    return graph
