"""The exporter's state: ``Emitter``, which rules write ONNX nodes through.

``export_graph.export_model(graph, opset)`` walks a typed graph (every value's dtype known: the graph is
specialized on example inputs first, ``torchlike.onnx.export``), asking ``op_table.EXPORT``
how to write each node.  A rule gets an ``Emitter`` (below) and the node, emits ONNX nodes and
binds the node's outputs to ONNX names.

* Constants are written where they are used, in the dtype the use needs (a Python ``0.5`` in a
  float32 ``mul`` becomes a float32 0-d ``Constant``, as PyTorch casts a wrapped number to the
  compute dtype); array constants of more than a few elements (a frozen module's parameters)
  become initializers of the top graph, one per array and dtype.
* Values of IR type int/float/bool are 0-d int64/float64/bool tensors.
* Lists and tuples (``aten::chunk``'s result, ``prim::TupleConstruct``) have no ONNX form: they
  are bound to the list of their items' names, and unpacking binds each output to one of them;
  a tuple output of the graph becomes one graph output per item.
* ``prim::If`` -> ``If`` and ``prim::Loop`` -> ``Loop``: each block becomes a subgraph (outer
  values are read by name, as ONNX allows); see ``export_control_flow``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ..errors import TorchlikeError, UnsupportedOpError
from ..ir.attributes import UnknownTensorValue
from ..ir.graph import Block, Value
from ..ir.types import ListType, TensorType, TupleType
from .dtypes import dtype_of_type, onnx_elem_type

_INITIALIZER_MIN_SIZE = 16   # array constants at least this big become initializers


class ExportError(TorchlikeError):
    """A graph that cannot be written as ONNX; the message names the node."""


class Emitter:
    """The state of one export: ONNX names of IR values, the subgraph scopes being filled,
    the initializers.  Rules call ``tensor``/``emit``/``cast``/``bind``."""

    def __init__(self, opset: int, rules: Dict[str, Any]):
        import onnx  # noqa: F401  (fail early, naming the missing extra)
        from onnx import helper, numpy_helper
        self.helper, self.numpy_helper = helper, numpy_helper
        self.opset = opset
        self.rules = rules
        self.names: Dict[Value, Any] = {}        # value -> name, or list of names (lists)
        self.scopes: List[Dict[str, Any]] = []   # innermost last: {"nodes", "consts"}
        self.initializers: list = []
        self._init_cache: Dict[Any, str] = {}
        self._used: set = set()

    # -- names and scopes -----------------------------------------------------------------
    def fresh(self, hint: str = "t") -> str:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in hint) or "t"
        name, i = base, 0
        while name in self._used:
            i += 1
            name = f"{base}_{i}"
        self._used.add(name)
        return name

    def push_scope(self) -> None:
        self.scopes.append({"nodes": [], "consts": {}})

    def pop_scope(self) -> list:
        return self.scopes.pop()["nodes"]

    # -- emitting -------------------------------------------------------------------------
    def emit(self, op_type: str, inputs: Sequence[str], outputs: Union[int, Sequence[str]] = 1,
             **attrs) -> Any:
        """Append an ONNX node; returns its output name (or the list, for several)."""
        outs = [self.fresh(op_type.lower()) for _ in range(outputs)] \
            if isinstance(outputs, int) else list(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.scopes[-1]["nodes"].append(self.helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if len(outs) == 1 and isinstance(outputs, int) else outs

    def constant(self, value: Any, dtype: Optional[str] = None, initializer: bool = False) -> str:
        """A tensor holding ``value`` (a Python scalar, list or array) as ``dtype``: an
        initializer when asked (the graph's array constants: a module's parameters) or big,
        else a ``Constant`` node of the current scope."""
        array = np.asarray(value)
        if dtype is not None and str(array.dtype) != dtype:
            with np.errstate(all="ignore"):
                array = array.astype(dtype)
        key = (str(array.dtype), array.shape, array.tobytes())
        if array.size >= _INITIALIZER_MIN_SIZE or (initializer and array.ndim > 0):
            name = self._init_cache.get(key)
            if name is None:
                name = self._init_cache[key] = self.fresh("init")
                self.initializers.append(self.numpy_helper.from_array(
                    np.ascontiguousarray(array), name))
            return name
        for scope in reversed(self.scopes):
            if key in scope["consts"]:
                return scope["consts"][key]
        name = self.fresh("const")
        self.scopes[-1]["nodes"].append(self.helper.make_node(
            "Constant", [], [name], value=self.numpy_helper.from_array(array, name)))
        self.scopes[-1]["consts"][key] = name
        return name

    def cast(self, name: str, src: Optional[str], dst: Optional[str]) -> str:
        if dst is None or src == dst:
            return name
        key = ("cast", name, dst)  # one Cast per value and dtype, visible in inner scopes
        for scope in reversed(self.scopes):
            if key in scope["consts"]:
                return scope["consts"][key]
        out = self.scopes[-1]["consts"][key] = self.emit("Cast", [name], to=onnx_elem_type(dst))
        return out

    def dtype(self, v: Value) -> Optional[str]:
        if v.is_constant():
            c = v.constant_value()
            if isinstance(c, np.ndarray):
                return str(c.dtype)
            if isinstance(c, (bool, np.bool_)):
                return "bool"
            if isinstance(c, (int, np.integer)):
                return "int64"
            if isinstance(c, (float, np.floating)):
                return "float64"
        return dtype_of_type(v.type)

    def shape(self, v: Value) -> Optional[tuple]:
        if v.is_constant() and isinstance(v.constant_value(), np.ndarray):
            return v.constant_value().shape
        return v.type.shape if isinstance(v.type, TensorType) else \
            (() if dtype_of_type(v.type) else None)

    def tensor(self, v: Value, dtype: Optional[str] = None) -> str:
        """``v`` as an ONNX tensor name, converted to ``dtype`` when given."""
        if v.is_constant():
            value = v.constant_value()
            if value is None or isinstance(value, (str, UnknownTensorValue)):
                raise ExportError(f"constant %{v.name} ({value!r}) has no tensor form")
            return self.constant(value, dtype, initializer=isinstance(value, np.ndarray))
        name = self.names.get(v)
        if name is None or isinstance(name, list):
            producer = v.node.describe() if v.node is not None else "a block parameter"
            raise ExportError(f"%{v.name} (from {producer}) has no ONNX tensor")
        return self.cast(name, self.dtype(v), dtype)

    def items(self, v: Value) -> List[str]:
        """The names of a list or tuple value's items."""
        if v.node is not None and v.node.kind in ("prim::ListConstruct", "prim::TupleConstruct") \
                and v not in self.names:
            return [self.tensor(x) for x in v.node.inputs]
        name = self.names.get(v)
        if not isinstance(name, list):
            raise ExportError(f"%{v.name} is not a list of tensors ONNX can hold")
        return name

    def ints(self, v: Value) -> Optional[List[int]]:
        """A constant int or int list argument as a list (None: not constant)."""
        if v.is_constant():
            c = v.constant_value()
            return None if c is None else [int(x) for x in np.atleast_1d(np.asarray(c))]
        if v.node is not None and v.node.kind == "prim::ListConstruct" and \
                all(x.is_constant() for x in v.node.inputs):
            return [int(x.constant_value()) for x in v.node.inputs]
        return None

    def int_vector(self, v: Value) -> str:
        """An int list argument (constant or built from scalars) as a 1-D int64 tensor."""
        known = self.ints(v)
        if known is not None:
            return self.constant(np.array(known, np.int64))
        if v.node is not None and v.node.kind == "prim::ListConstruct":
            parts = [self.emit("Unsqueeze", [self.tensor(x, "int64"), self.constant([0])])
                     for x in v.node.inputs]
            return self.emit("Concat", parts, axis=0)
        raise ExportError(f"%{v.name}: an int list ONNX cannot build")

    def bind(self, v: Value, name: Any) -> None:
        self.names[v] = name

    # -- blocks ------------------------------------------------------------------------------
    def export_block(self, block: Block) -> None:
        """Emit every node of ``block`` into the current scope (``self.rules``: kind -> rule)."""
        for node in block.nodes:
            if node.kind == "prim::Constant":
                continue  # written where used, in the dtype of the use
            rule = self.rules.get(node.kind)
            if rule is None:
                raise UnsupportedOpError(f"ONNX export: {node.describe()}: no ONNX form for "
                                         f"'{node.kind}' (torchlike/onnx/op_table.py lists those "
                                         f"that have one)")
            try:
                rule(self, node)
            except (ExportError, UnsupportedOpError) as e:
                if node.kind in str(e):
                    raise
                raise type(e)(f"ONNX export: {node.describe()}: {e}") from e

    # -- value infos ------------------------------------------------------------------------
    def value_info(self, name: str, v: Value, shape: bool = True):
        dtype = self.dtype(v)
        if dtype is None:
            raise ExportError(f"%{v.name}: its dtype is unknown (export needs typed graphs)")
        dims = self.shape(v) if shape else None
        return self.helper.make_tensor_value_info(
            name, onnx_elem_type(dtype), None if dims is None else [d for d in dims])


def output_names(em: Emitter, values: Sequence[Value], produced_here: bool) -> List[str]:
    """Names for a graph's (or subgraph's) outputs: tuples flattened; each output a fresh
    ``Identity`` where it is an input, a constant, an outer value or already an output."""
    flat: List[str] = []
    for v in values:
        if isinstance(v.type, (TupleType, ListType)) or isinstance(em.names.get(v), list):
            flat.extend(em.items(v))
        else:
            flat.append(em.tensor(v))
    out, seen = [], set()
    produced = {o for n in em.scopes[-1]["nodes"] for o in n.output} if produced_here else set()
    for name in flat:
        if name in seen or name not in produced:
            name = em.emit("Identity", [name])
        seen.add(name)
        out.append(name)
    return out


def flat_values(values: Sequence[Value]) -> List[Value]:
    """Outputs with tuples replaced by their items (for value infos)."""
    out: List[Value] = []
    for v in values:
        if v.node is not None and v.node.kind in ("prim::TupleConstruct", "prim::ListConstruct") \
                and isinstance(v.type, (TupleType, ListType)):
            out.extend(flat_values(v.node.inputs))
        else:
            out.append(v)
    return out
