"""``str(graph)``: PyTorch's graph text, byte for byte.

    graph(%x : Float(2, 3)):
      %1 : float = prim::Constant[value=2.]()
      %2 : Float(2, 3) = aten::mul(%x, %1) # f.py:3:0
      %3 : Float(2, 3) = prim::FusionGroup_0(%2)
      return (%3)
    with prim::FusionGroup_0 = graph(%4 : Float(2, 3)):
      ...

Fusion subgraphs live in ``node.attrs["Subgraph"]``; they are printed after the graph that
uses them, numbered in order of appearance, as PyTorch does.
"""
from __future__ import annotations

import math
from typing import Any, List

import numpy as np

from .types import Type

SUBGRAPH_ATTR = "Subgraph"


def format_float(x: float) -> str:
    """Doubles as PyTorch prints them: 17 significant digits, a trailing '.' for integers."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    s = "%.17g" % x
    if "." not in s and "e" not in s:
        s += "."
    return s


def format_attr_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            return "<Tensor>"
        v = value.item()
        if isinstance(v, bool):
            return "{%d}" % int(v)
        if isinstance(v, int):
            return "{%d}" % v
        return "{%g}" % v
    if isinstance(value, Type):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attr_value(v) for v in value) + "]"
    raise TypeError(f"cannot print attribute value {value!r}")


def _value_list(values) -> str:
    return ", ".join(f"%{v.name}" for v in values)


def _typed_list(values) -> str:
    return ", ".join(f"%{v.name} : {v.type}" for v in values)


class _Printer:
    def __init__(self):
        self.subgraphs: List[tuple] = []  # (name, graph)
        self.lines: List[str] = []

    def graph_header(self, graph) -> str:
        params = [f"%{v.name} : {v.type}" for v in graph.inputs]
        return "graph(" + ",\n      ".join(params) + "):"

    def node(self, node, indent: int) -> None:
        pad = " " * indent
        head = f"{pad}{_typed_list(node.outputs)} = " if node.outputs else f"{pad} = "
        kind = node.kind
        attrs = {k: v for k, v in node.attrs.items() if k != SUBGRAPH_ATTR}
        if SUBGRAPH_ATTR in node.attrs:
            kind = f"{kind}_{len(self.subgraphs)}"
            self.subgraphs.append((kind, node.attrs[SUBGRAPH_ATTR]))
        attr_text = ""
        if attrs:
            attr_text = "[" + ", ".join(f"{k}={format_attr_value(v)}" for k, v in attrs.items()) + "]"
        line = f"{head}{kind}{attr_text}({_value_list(node.inputs)})"
        if node.source:
            line += f" # {node.source}"
        self.lines.append(line)
        for i, block in enumerate(node.blocks):
            self.lines.append(f"{pad}  block{i}({_typed_list(block.params)}):")
            self.block_body(block, indent + 4)
            self.lines.append(f"{pad}    -> ({_value_list(block.returns)})")

    def block_body(self, block, indent: int) -> None:
        for n in block.nodes:
            self.node(n, indent)

    def graph(self, graph) -> None:
        self.lines.append(self.graph_header(graph))
        self.block_body(graph.block, 2)
        self.lines.append(f"  return ({_value_list(graph.outputs)})")


def print_graph(graph) -> str:
    p = _Printer()
    p.graph(graph)
    i = 0
    while i < len(p.subgraphs):  # subgraphs may hold subgraphs of their own
        name, sub = p.subgraphs[i]
        p.lines.append(f"with {name} = " + p.graph_header(sub))
        p.block_body(sub.block, 2)
        p.lines.append(f"  return ({_value_list(sub.outputs)})")
        i += 1
    return "\n".join(p.lines) + "\n"
