"""``ScriptFunction.code``: a graph as readable Python-like source, in the style of PyTorch's
``.code``.  Constants are written inline, every other value gets a name (debug names when the
graph has them, ``_0``, ``_1``, ... otherwise), control flow becomes ``if``/``for``/``while``::

    def forward(x: Tensor,
        n: int) -> Tensor:
      x0 = x
      for _0 in range(n):
        _1 = torch.mul(x0, 2.)
        x0 = torch.sigmoid(_1)
      return x0

The text is for reading, not for running: ``torch.X`` names the registry op ``aten::X``.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

import numpy as np

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Node, Value
from ..ir.printer import format_float
from ..ir.types import NONE, ClassType, ListType, OptionalType, TensorType, TupleType, Type
from ..ops import registry

MAX_TRIPS = 9223372036854775807  # what TorchScript passes as the trip count of a while loop
_SUFFIX = re.compile(r"\.\d+$")


def type_annotation(t: Type) -> str:
    """A Python annotation for an IR type: ``Tensor``, ``int``, ``Tuple[Tensor, int]``, ..."""
    if isinstance(t, TensorType):
        return "Tensor"
    if isinstance(t, TupleType):
        return "Tuple[" + ", ".join(type_annotation(e) for e in t.elems) + "]"
    if isinstance(t, ListType):
        return f"List[{type_annotation(t.elem)}]"
    if isinstance(t, OptionalType):
        return f"Optional[{type_annotation(t.elem)}]"
    if isinstance(t, ClassType):
        return t.qualified_name
    if t == NONE:
        return "NoneType"
    return str(t)


def python_literal(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if value is None:
        return "None"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return f"torch.tensor({python_literal(value.item())})"
        return f"CONSTANTS.tensor{tuple(value.shape)}"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(python_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Type):
        return str(value)
    return repr(value)


class _CodeWriter:
    def __init__(self):
        self.names: Dict[int, str] = {}
        self.used: set = set()
        self.counter = 0
        self.lines: List[str] = []
        self.subgraphs: List[tuple] = []  # (function name, graph)

    # -- names --------------------------------------------------------------------------
    def fresh(self, hint: Optional[str] = None) -> str:
        if hint:
            base = _SUFFIX.sub("", hint)
            base = re.sub(r"\W", "_", base)
            if base and not base[0].isdigit():
                if base not in self.used:
                    self.used.add(base)
                    return base
                i = 0
                while f"{base}{i}" in self.used:
                    i += 1
                self.used.add(f"{base}{i}")
                return f"{base}{i}"
        while f"_{self.counter}" in self.used:
            self.counter += 1
        name = f"_{self.counter}"
        self.used.add(name)
        return name

    def bind(self, value: Value, name: Optional[str] = None) -> str:
        name = name or self.fresh(value.name)
        self.names[id(value)] = name
        return name

    def ref(self, value: Value) -> str:
        if value.is_constant():
            attrs = value.node.attrs
            if "value" not in attrs and "name" in attrs:  # a function constant (fallbacks)
                return str(attrs["name"])
            return python_literal(value.constant_value())
        return self.names.get(id(value), f"%{value.name}")

    # -- statements ---------------------------------------------------------------------
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text)

    def function(self, name: str, graph: Graph, param_names: Optional[List[str]] = None) -> None:
        params = []
        for i, p in enumerate(graph.inputs):
            hint = param_names[i] if param_names and i < len(param_names) else p.name
            if i == 0 and isinstance(p.type, ClassType):  # a method's self, as PyTorch prints it
                params.append(self.bind(p, self.fresh(hint)))
                continue
            params.append(f"{self.bind(p, self.fresh(hint))}: {type_annotation(p.type)}")
        outs = graph.outputs
        ret = type_annotation(outs[0].type) if len(outs) == 1 else \
            "Tuple[" + ", ".join(type_annotation(v.type) for v in outs) + "]"
        self.emit(0, f"def {name}(" + ",\n    ".join(params) + f") -> {ret}:")
        self.block(graph.block, 1)
        if len(outs) == 1:
            self.emit(1, f"return {self.ref(outs[0])}")
        else:
            self.emit(1, "return (" + ", ".join(self.ref(v) for v in outs) + ")")

    def block(self, block: Block, indent: int) -> None:
        start = len(self.lines)
        for node in block.nodes:
            self.node(node, indent)
        if len(self.lines) == start and not block.returns:
            self.emit(indent, "pass")

    def assign(self, indent: int, targets: List[str], sources: List[str]) -> None:
        pairs = [(t, s) for t, s in zip(targets, sources) if t != s]
        if pairs:
            self.emit(indent, ", ".join(t for t, _ in pairs) + " = " +
                      ", ".join(s for _, s in pairs))

    def node(self, node: Node, indent: int) -> None:
        kind = node.kind
        if kind == "prim::Constant":
            return  # written inline at each use
        if kind == "prim::If":
            return self.if_node(node, indent)
        if kind == "prim::Loop":
            return self.loop_node(node, indent)
        expr = self.expression(node)
        if not node.outputs:
            self.emit(indent, expr)
            return
        targets = [self.bind(o) for o in node.outputs]
        if len(targets) == 1 and kind in ("prim::TupleUnpack", "prim::ListUnpack"):
            targets[0] += ","  # unpacking a 1-element tuple
        self.emit(indent, ", ".join(targets) + " = " + expr)

    def expression(self, node: Node) -> str:
        kind = node.kind
        args = [self.ref(v) for v in node.inputs]
        attrs = {k: v for k, v in node.attrs.items() if k != SUBGRAPH_ATTR}
        if kind == "prim::TupleConstruct":
            return f"({args[0]},)" if len(args) == 1 else "(" + ", ".join(args) + ")"
        if kind == "prim::ListConstruct":
            return "[" + ", ".join(args) + "]"
        if kind in ("prim::TupleUnpack", "prim::ListUnpack"):
            return args[0]
        if kind == "prim::GetAttr":
            name = str(attrs.get("name"))
            return f"{args[0]}.{name}" if name.isidentifier() else \
                f'getattr({args[0]}, "{name}")'
        if kind == "prim::CallMethod":  # PyTorch's spelling: (linear).forward(x, )
            return f"({args[0]}).{attrs.get('name')}(" + "".join(a + ", " for a in args[1:]) + ")"
        op = registry.lookup(kind)
        if op is not None and op.code_name is not None:
            return f"{op.code_name}(" + ", ".join(args) + ")"
        if kind == "prim::RaiseException":
            return "raise Exception(" + ", ".join(args) + ")"
        namespace, _, name = kind.partition("::")
        prefix = "torch" if namespace == "aten" else namespace
        if isinstance(node.attrs.get(SUBGRAPH_ATTR), Graph):
            name = f"{name}_{len(self.subgraphs)}"
            self.subgraphs.append((name, node.attrs[SUBGRAPH_ATTR]))
        args += [f"{k}={python_literal(v)}" for k, v in attrs.items()]
        return f"{prefix}.{name}(" + ", ".join(args) + ")"

    def if_node(self, node: Node, indent: int) -> None:
        targets = [self.fresh(o.name) for o in node.outputs]
        self.emit(indent, f"if {self.ref(node.inputs[0])}:")
        for k, b in enumerate(node.blocks):
            if k == 1:
                self.emit(indent, "else:")
            before = len(self.lines)
            self.block(b, indent + 1)
            self.assign(indent + 1, targets, [self.ref(v) for v in b.returns])
            if len(self.lines) == before:
                self.emit(indent + 1, "pass")
        for o, t in zip(node.outputs, targets):
            self.names[id(o)] = t

    def loop_node(self, node: Node, indent: int) -> None:
        trips, cond, inits = node.inputs[0], node.inputs[1], node.inputs[2:]
        body = node.blocks[0]
        targets = [self.fresh(o.name) for o in node.outputs]
        self.assign(indent, targets, [self.ref(v) for v in inits])
        for p, t in zip(body.params[1:], targets):
            self.names[id(p)] = t
        counter = self.bind(body.params[0])
        always = (cond.is_constant() and cond.constant_value() is True
                  and body.returns[0].is_constant() and body.returns[0].constant_value() is True)
        if always:
            self.emit(indent, f"for {counter} in range({self.ref(trips)}):")
            self.block(body, indent + 1)
            self.assign(indent + 1, targets, [self.ref(v) for v in body.returns[1:]])
        else:
            flag = self.fresh("_cond")
            self.assign(indent, [flag, counter], [self.ref(cond), "0"])
            bound = "" if trips.is_constant() and trips.constant_value() == MAX_TRIPS \
                else f" and {counter} < {self.ref(trips)}"
            self.emit(indent, f"while {flag}{bound}:")
            self.block(body, indent + 1)
            self.assign(indent + 1, [flag] + targets,
                        [self.ref(v) for v in body.returns])
            self.emit(indent + 1, f"{counter} = {counter} + 1")
        if len(self.lines) and self.lines[-1].endswith(":"):
            self.emit(indent + 1, "pass")
        for o, t in zip(node.outputs, targets):
            self.names[id(o)] = t


def graph_to_code(graph: Graph, name: str = "forward",
                  param_names: Optional[List[str]] = None) -> str:
    """The Python-like source of ``graph`` (see the module docstring); fusion subgraphs follow
    as functions of their own, named as the printed graph names them."""
    w = _CodeWriter()
    w.function(name, graph, param_names)
    i = 0
    while i < len(w.subgraphs):
        sub_name, sub = w.subgraphs[i]
        w.lines.append("")
        inner = _CodeWriter()
        inner.subgraphs = w.subgraphs  # nested groups continue the numbering
        inner.function(sub_name, sub)
        w.lines.extend(inner.lines)
        i += 1
    return "\n".join(w.lines) + "\n"
