"""Type and shape inference: propagate ``TensorType``s from the graph inputs through every node.

``infer_types(graph, input_types)`` overwrites the types of the graph inputs and recomputes every
node output from them.  A traced graph's recorded shapes describe the example inputs only; they
are not a contract, so they are replaced (non-tensor types such as ``int`` or ``bool`` are kept
when nothing better is known).

* elementwise ops: the output shape broadcasts the operands' shapes, the dtype follows the op's
  dtype rule (``signature_dtypes``) with PyTorch's operand priorities: a tensor with dimensions,
  a 0-d tensor, or a wrapped number (a Python scalar, or a 0-d tensor *constant*: traces record
  Python scalars that way); strides are contiguous.  Only scalar operands give a scalar
  (``int + int`` is ``int``).
* an op whose registry entry has ``infer(node, input_types)``: that rule (it takes precedence);
* ``prim::If``: each output joins the branches' types (equal: kept; else what agrees, e.g. the
  dtype, or the rank with unknown sizes); ``prim::Loop``: carried types iterate to a fixed point
  under the same join; fusion subgraphs are inferred from the group's inputs;
* anything else: ``Tensor`` (all unknown).

Example::

    graph(%x : Float(2, 1), %y : Int(3)):          graph(%x : Float(2, 1), %y : Int(3)):
      %2 : Tensor = aten::mul(%x, %y)        ==>     %2 : Float(2, 3, strides=[3, 1]) = ...
"""
from __future__ import annotations

import itertools
from typing import Any, List, Optional, Sequence

import numpy as np

from ..interpreter import WRAPPED_CONSTANT_DTYPES
from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import (
    ANY,
    BOOL,
    FLOAT,
    INT,
    NONE,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
    type_of_python_value,
)
from ..ops import registry
from ..ops.dtypes import Priority
from ..ops.elementwise_base import (
    normalize_args,
    scalar_dtype_of,
    scalar_signature_dtypes,
    signature_dtypes,
)

MAX_LOOP_ITERATIONS = 16
_SCALAR_DTYPE = {INT: "int64", FLOAT: "float64", BOOL: "bool"}
_UNKNOWN = False  # an operand whose dtype or priority is unknown
_UNKNOWN_DTYPE = object()  # a tensor attribute (type_as's other) of unknown dtype


def infer_types(graph: Graph, input_types: Sequence[Any]) -> Graph:
    """Set the types of ``graph``'s inputs to ``input_types`` (``Type``s, or runtime values whose
    types are taken) and recompute every value's type from them.  Mutates and returns ``graph``."""
    if len(input_types) != len(graph.inputs):
        raise TypeError(f"graph takes {len(graph.inputs)} inputs, got {len(input_types)} types")
    for p, t in zip(graph.inputs, input_types):
        if not isinstance(t, Type):
            t = type_of_python_value(t)
        if t == ANY and p.type != ANY:
            continue  # e.g. a module object for %self: its declared class type says more
        p.type = t
    _infer_block(graph.block)
    return graph


def _infer_block(block: Block) -> None:
    for node in block.nodes:
        _infer_node(node)


def _infer_node(node: Node) -> None:
    kind = node.kind
    if kind == "prim::Constant":
        node.output().type = _constant_type(node)
    elif kind == "prim::If":
        _infer_if(node)
    elif kind == "prim::Loop":
        _infer_loop(node)
    elif isinstance(node.attrs.get(SUBGRAPH_ATTR), Graph):
        sub = node.attrs[SUBGRAPH_ATTR]
        infer_types(sub, [v.type for v in node.inputs])
        for o, r in zip(node.outputs, sub.outputs):
            o.type = r.type
    else:
        op = registry.lookup(kind)
        types = None
        if op is not None and op.infer is not None:
            try:
                types = list(op.infer(node, [v.type for v in node.inputs]))
            except Exception:  # noqa: BLE001 - an incomplete rule must not break compilation
                types = None
        if types is None and op is not None and op.is_elementwise:
            try:
                types = [_infer_elementwise(node, op)]
            except Exception:  # noqa: BLE001 - e.g. an op that rejects these dtypes
                types = None
        if types is None:
            types = _infer_structural(node)
        if types is None or len(types) != len(node.outputs):
            types = [_unknown(o.type) for o in node.outputs]
        for o, t in zip(node.outputs, types):
            o.type = t if t is not None else _unknown(o.type)
        for b in node.blocks:
            _infer_block(b)


infer_node = _infer_node  # one node's output types, from its inputs' (remove_mutation uses it)


def _unknown(declared: Type) -> Type:
    """What an output of unknown type becomes: ``Tensor`` if it was a tensor, else as declared."""
    return TensorType() if declared is None or declared.is_tensor() else declared


def _constant_type(node: Node) -> Type:
    value = node.attrs.get("value")
    declared = node.output().type
    if isinstance(value, np.ndarray):
        device = declared.device if isinstance(declared, TensorType) else None
        strides = tuple(s // value.itemsize for s in value.strides) if value.itemsize else None
        return TensorType(str(value.dtype), tuple(value.shape), strides, device or "cpu", False)
    if "value" not in node.attrs:
        return declared if declared is not None else NONE
    if isinstance(value, (bool, int, float, str)):
        return type_of_python_value(value)
    return declared


def operand_info_of(v: Value):
    """``(dtype, Priority)`` of an operand from its type, None for an absent optional operand,
    ``False`` when unknown.  A rank-unknown tensor gives ``(dtype, None)``."""
    t = v.type
    if v.is_constant():
        value = v.constant_value()
        if isinstance(value, np.ndarray) and value.ndim == 0:
            return _probe_info(value)  # as the interpreter runs it
        if isinstance(value, (bool, int, float)):
            return _SCALAR_DTYPE[type_of_python_value(value)], Priority.WRAPPED
        if value is None and "value" not in v.node.attrs:
            return None
    if isinstance(t, TensorType):
        if t.dtype is None:
            return _UNKNOWN
        if t.rank is None:
            return t.dtype, None
        return t.dtype, Priority.DIM if t.rank > 0 else Priority.ZERO_DIM
    if t in _SCALAR_DTYPE:
        return _SCALAR_DTYPE[t], Priority.WRAPPED
    if t == NONE:
        return None
    return _UNKNOWN


def _out_dtype(op, infos, attrs) -> Optional[str]:
    if any(i is _UNKNOWN for i in infos):
        return None
    unknown_prio = [k for k, i in enumerate(infos) if i is not None and i[1] is None]
    if len(unknown_prio) > 4:
        return None
    results = set()
    # A rank-unknown operand is either a 0-d tensor or one with dims: the dtype is known when
    # both readings agree.
    for choice in itertools.product((Priority.DIM, Priority.ZERO_DIM), repeat=len(unknown_prio)):
        filled = list(infos)
        for k, prio in zip(unknown_prio, choice):
            filled[k] = (infos[k][0], prio)
        try:
            results.add(signature_dtypes(op, filled, attrs)[1])
        except Exception:  # noqa: BLE001 - a rule that cannot decide: dtype unknown
            return None
    return results.pop() if len(results) == 1 else None


def broadcast_shapes(shapes: List[Optional[tuple]]) -> Optional[tuple]:
    """Broadcast shapes whose dims may be None (unknown); None if any rank is unknown."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        known = [d for d in dims if d is not None and d != 1]
        if known:
            out.append(known[0])  # a valid program has at most one size other than 1 per dim
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def contiguous_strides(shape: Optional[tuple]) -> Optional[tuple]:
    if shape is None or any(d is None for d in shape):
        return None
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


def _probe(v: Value) -> Any:
    """What op argument normalization sees for an input: a constant's value, else the Value."""
    return v.constant_value() if v.is_constant() and "value" in v.node.attrs else \
        (None if v.is_constant() else v)


def _probe_info(p: Any):
    if isinstance(p, Value):
        return operand_info_of(p)
    if p is None:
        return None
    if isinstance(p, np.ndarray):
        return str(p.dtype), (Priority.DIM if p.ndim else Priority.WRAPPED if _runs_as_scalar(p)
                              else Priority.ZERO_DIM)
    if isinstance(p, (bool, int, float)):
        return _SCALAR_DTYPE[type_of_python_value(p)], Priority.WRAPPED
    return _UNKNOWN


def _probe_type(p: Any) -> Type:
    if isinstance(p, Value):
        return p.type
    if isinstance(p, np.ndarray):
        return TensorType(str(p.dtype), tuple(p.shape))
    return type_of_python_value(p)


def _scalar_probe_dtype(p: Any) -> str:
    """The TorchScript scalar dtype of an operand that runs as a Python scalar."""
    if isinstance(p, Value):
        return _SCALAR_DTYPE[p.type]
    if isinstance(p, np.ndarray):
        return "bool" if p.dtype.kind == "b" else "int64" if p.dtype.kind in "iu" else "float64"
    return scalar_dtype_of(p)


def _runs_as_scalar(p: Any) -> bool:
    """Python scalars at run time: scalar-typed values, scalar constants and the 0-d tensor
    constants the interpreter runs as scalars (``WRAPPED_CONSTANT_DTYPES``)."""
    if isinstance(p, Value):
        return p.type in _SCALAR_DTYPE
    return not isinstance(p, np.ndarray) or (p.ndim == 0 and p.dtype in WRAPPED_CONSTANT_DTYPES)


_DTYPE_PARAMS = ("Any", "ScalarType", "ScalarType?")  # where a tensor stands for its dtype


def _attr_probe(p: Any, param_type: str) -> Any:
    """A non-operand input as a dtype rule reads it: a constant as is; a tensor where a dtype
    is expected (``type_as``'s ``other``, ``to(self, other)`` normalized onto ``dtype``) as an
    empty array of its dtype, ``_UNKNOWN_DTYPE`` if that is not known; any other value None."""
    if not isinstance(p, Value):
        return p
    t = p.type
    if isinstance(t, TensorType) and param_type in _DTYPE_PARAMS:
        try:
            return np.empty(0, t.dtype) if t.dtype is not None else _UNKNOWN_DTYPE
        except TypeError:  # bfloat16: no numpy dtype
            return _UNKNOWN_DTYPE
    return None


def _infer_elementwise(node: Node, op) -> Type:
    # Overloaded ops (aten::to) map their inputs onto the one schema first, as the impl does.
    probes = normalize_args(op, [_probe(v) for v in node.inputs])
    operands = [probes[i] for i, p in enumerate(op.params) if p.is_operand and i < len(probes)]
    attrs = {p.name: _attr_probe(probes[i], p.type)
             for i, p in enumerate(op.params) if not p.is_operand and i < len(probes)}
    infos = [_probe_info(p) for p in operands]
    dtype = None if any(a is _UNKNOWN_DTYPE for a in attrs.values()) else \
        _out_dtype(op, infos, attrs)
    types = [_probe_type(p) for p in operands if p is not None]
    tensors = [t for t in types if isinstance(t, TensorType)]
    declared = node.output().type
    if all(_runs_as_scalar(p) for p in operands if p is not None):
        # TorchScript scalar arithmetic: the scripted graph's declared type is authoritative
        # (floor(float) is an int); otherwise int op int is an int, int / int a float.
        if declared in _SCALAR_DTYPE:
            return declared
        try:
            out = scalar_signature_dtypes(
                op, [None if p is None else _scalar_probe_dtype(p) for p in operands], attrs)[1]
        except Exception:  # noqa: BLE001 - the op refuses these operands: leave it unknown
            return _unknown(declared)
        return {"bool": BOOL, "int64": INT}.get(out, FLOAT)
    shape = broadcast_shapes([t.shape if isinstance(t, TensorType) else () for t in types
                              if t != NONE])
    devices = {t.device for t in tensors if t.rank != 0 or len(tensors) == 1}
    devices.discard(None)
    device = None
    if len(devices) == 1:
        device = devices.pop()
    elif devices:
        device = next((d for d in sorted(devices) if d != "cpu"), None)
    requires_grad = False if any(t.requires_grad is not None for t in tensors) else None
    return TensorType(dtype, shape, contiguous_strides(shape), device, requires_grad)


def _infer_structural(node: Node) -> Optional[List[Type]]:
    kind = node.kind
    ins = [v.type for v in node.inputs]
    if kind == "prim::TupleConstruct":
        return [TupleType(tuple(ins))]
    if kind == "prim::TupleUnpack" and isinstance(ins[0], TupleType):
        return list(ins[0].elems)
    if kind == "prim::ListConstruct" and ins:
        elem = ins[0]
        for t in ins[1:]:
            elem = join(elem, t)
        if elem is not None:
            return [ListType(elem)]
    if kind == "prim::ListUnpack" and isinstance(ins[0], ListType):
        return [ins[0].elem] * len(node.outputs)
    return None


def join(a: Type, b: Type) -> Optional[Type]:
    """The most precise type both ``a`` and ``b`` satisfy, or None when there is none to say."""
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        shape = strides = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(x if x == y else None for x, y in zip(a.shape, b.shape))
            if a.strides is not None and b.strides is not None:
                strides = tuple(x if x == y else None for x, y in zip(a.strides, b.strides))
        return TensorType(a.dtype if a.dtype == b.dtype else None, shape, strides,
                          a.device if a.device == b.device else None,
                          a.requires_grad if a.requires_grad == b.requires_grad else None)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [join(x, y) for x, y in zip(a.elems, b.elems)]
        return None if any(e is None for e in elems) else TupleType(tuple(elems))
    if isinstance(a, ListType) and isinstance(b, ListType):
        elem = join(a.elem, b.elem)
        return None if elem is None else ListType(elem)
    if a == NONE and b != NONE:
        return b if isinstance(b, OptionalType) else OptionalType(b)
    if b == NONE and a != NONE:
        return a if isinstance(a, OptionalType) else OptionalType(a)
    return None


def _join_or(a: Type, b: Type, declared: Type) -> Type:
    j = join(a, b)
    if j is not None:
        return j
    return _unknown(declared)


def _infer_if(node: Node) -> None:
    for b in node.blocks:
        _infer_block(b)
    then, other = node.blocks
    for j, o in enumerate(node.outputs):
        o.type = _join_or(then.returns[j].type, other.returns[j].type, o.type)


def _infer_loop(node: Node) -> None:
    body = node.blocks[0]
    carried = [v.type for v in node.inputs[2:]]
    body.params[0].type = INT
    for _ in range(MAX_LOOP_ITERATIONS):
        for p, t in zip(body.params[1:], carried):
            p.type = t
        _infer_block(body)
        new = [_join_or(c, r.type, c) for c, r in zip(carried, body.returns[1:])]
        if new == carried:
            break
        carried = new
    else:  # no fixed point (should not happen: joins only lose precision): assume nothing
        carried = [_unknown(t) for t in carried]
        for p, t in zip(body.params[1:], carried):
            p.type = t
        _infer_block(body)
    for o, t in zip(node.outputs, carried):
        o.type = t
