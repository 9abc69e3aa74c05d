"""The importer's state: ``Importer``, which rules read ONNX nodes and build graphs through.

Only the protobuf is read (``onnx.load``, ``onnx.shape_inference`` for the dtypes and shapes
of intermediate values); nothing from the file is executed.  Each node of the default domain
is translated by its ``op_table.IMPORT`` rule into registry ops; initializers and ``Constant``
nodes become ``prim::Constant`` arrays; ``If``/``Loop`` become ``prim::If``/``prim::Loop`` with
the subgraphs as blocks (outer names resolve through the scopes, as in ONNX).  An op with no
rule, another domain, or an attribute form torchlike lacks raises ``UnsupportedOpError``
naming the node (its name and op type).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.graph import Block, Graph, Value
from ..ir.types import TENSOR, TensorType, tensor_type_of
from .dtypes import dtype_of_elem_type


class Importer:
    """The state of one import; rules call ``value``/``const``/``op``/``py``/``dtype``."""

    def __init__(self, model, rules: Dict[str, Any]):
        import onnx
        from onnx import helper, numpy_helper, shape_inference
        self.helper, self.numpy_helper = helper, numpy_helper
        self.rules = rules
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          onnx.defs.onnx_opset_version())
        try:
            model = shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - types then come from what the file declares
            pass
        self.model = model
        self.infos: Dict[str, Tuple[Optional[str], Optional[tuple]]] = {}
        self._collect_infos(model.graph)
        self.graph = Graph()
        self.scopes: List[Dict[str, Value]] = [{}]
        self.blocks: List[Block] = [self.graph.block]
        self.node = None  # the ONNX node being translated (for errors)
        self.shape_lists: Dict[str, Any] = {}  # name -> import_shapes.ShapeList

    def _collect_infos(self, g) -> None:
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            t = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                continue
            dtype = dtype_of_elem_type(t.elem_type) if t.elem_type in _KNOWN else None
            shape = tuple(d.dim_value if d.HasField("dim_value") else None
                          for d in t.shape.dim) if t.HasField("shape") else None
            self.infos[vi.name] = (dtype, shape)
        for init in g.initializer:
            self.infos[init.name] = (dtype_of_elem_type(init.data_type) if init.data_type in
                                     _KNOWN else None, tuple(init.dims))
        for n in g.node:
            for a in n.attribute:
                for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    self._collect_infos(sub)

    # -- values ---------------------------------------------------------------------------------
    @property
    def block(self) -> Block:
        return self.blocks[-1]

    def fail(self, why: str) -> UnsupportedOpError:
        n = self.node
        where = f"node '{n.name or n.output[0]}' (op type {n.op_type})" if n is not None else "the model"
        return UnsupportedOpError(f"ONNX import: {where}: {why}")

    def value(self, name: str) -> Optional[Value]:
        if name == "":
            return None
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise self.fail(f"input '{name}' is not defined")

    def bind(self, name: str, v: Value) -> None:
        self.scopes[-1][name] = v

    def input(self, k: int) -> Optional[Value]:
        """The node's k-th input (None: absent or empty)."""
        names = self.node.input
        return self.value(names[k]) if k < len(names) else None

    def const(self, v: Optional[Value]) -> Optional[np.ndarray]:
        """The array a value holds when it is a constant (initializer, Constant), else None."""
        if v is None or not v.is_constant():
            return None
        c = v.constant_value()
        return np.asarray(c) if c is not None else None

    def const_ints(self, k: int, what: str) -> Optional[List[int]]:
        """Input k as a list of ints (None: absent); it must be a constant."""
        v = self.input(k)
        if v is None:
            return None
        c = self.const(v)
        if c is None:
            raise self.fail(f"its {what} must be a constant (an initializer or a Constant) "
                            f"for torchlike")
        return [int(x) for x in c.reshape(-1)]

    def dtype(self, v: Optional[Value]) -> Optional[str]:
        if v is None:
            return None
        t = v.type
        if isinstance(t, TensorType) and t.dtype is not None:
            return t.dtype
        c = self.const(v)
        return str(c.dtype) if c is not None else None

    def shape(self, v: Value) -> Optional[tuple]:
        t = v.type
        return t.shape if isinstance(t, TensorType) else None

    def out_info(self, k: int = 0) -> Tuple[Optional[str], Optional[tuple]]:
        return self.infos.get(self.node.output[k], (None, None))

    def attrs(self) -> Dict[str, Any]:
        out = {}
        for a in self.node.attribute:
            value = self.helper.get_attribute_value(a)
            out[a.name] = value.decode() if isinstance(value, bytes) else value
        return out

    # -- building -----------------------------------------------------------------------------
    def py(self, value: Any) -> Value:
        """A ``prim::Constant`` (Python scalar, list, str, None or array) in the current block."""
        t = tensor_type_of(value) if isinstance(value, np.ndarray) else None
        return self.graph.insert_constant(value, t, block=self.block)

    def op(self, kind: str, inputs: Sequence[Any], n_out: int = 1,
           types: Optional[Sequence[Any]] = None) -> List[Value]:
        """Append ``kind(*inputs)`` (Python values become constants); its outputs."""
        values = [v if isinstance(v, Value) else self.py(v) for v in inputs]
        types = list(types) if types is not None else [TENSOR] * n_out
        return self.graph.create(kind, values, types, block=self.block).outputs

    def typed(self, k: int = 0) -> TensorType:
        """The type ONNX shape inference gives the node's k-th output."""
        dtype, shape = self.out_info(k)
        return TensorType(dtype, shape) if dtype is not None else TENSOR

    # -- graphs -----------------------------------------------------------------------------------
    def run_nodes(self, g) -> None:
        for init in g.initializer:
            self.bind(init.name, self.py(self.numpy_helper.to_array(init).copy()))
        for n in g.node:
            self.node = n
            if n.domain not in ("", "ai.onnx"):
                raise self.fail(f"ops of domain '{n.domain}' are not supported")
            rule = self.rules.get(n.op_type)
            if rule is None:
                raise self.fail("torchlike has no translation for this op type "
                                "(torchlike/onnx/op_table.py lists those it has)")
            outs = rule(self)
            wanted = [o for o in n.output]
            if len(outs) < len([o for o in wanted if o]):
                raise self.fail(f"only {len(outs)} of its {len(wanted)} outputs are supported")
            for name, v in zip(wanted, outs):
                if name:
                    self.bind(name, v)
            self.node = None

    def subgraph(self, g, params: Sequence[Value]) -> List[Value]:
        """Translate ``g``'s nodes into the current block (pushed by the caller) with its
        inputs bound to ``params``; returns the values of its outputs."""
        self.scopes.append({})
        for vi, p in zip(g.input, params):
            self.bind(vi.name, p)
        saved = self.node
        self.run_nodes(g)
        self.node = saved
        outs = [self.value(o.name) for o in g.output]
        self.scopes.pop()
        return outs


_KNOWN = set(range(1, 14)) - {8}
