"""``str(graph)``: PyTorch's graph text, byte for byte.

    graph(%x : Float(2, 3)):
      %1 : float = prim::Constant[value=2.]()
      %2 : Float(2, 3) = aten::mul(%x, %1) # f.py:3:0
      %3 : Float(2, 3) = prim::FusionGroup_0(%2)
      return (%3)
    with prim::FusionGroup_0 = graph(%4 : Float(2, 3)):
      ...

Fusion subgraphs live in ``node.attrs["Subgraph"]``; as in PyTorch, they are printed after the
graph that uses them, numbered from 0 in order of appearance, each graph numbering its own (a
subgraph's own ``with`` sections follow it directly).
"""
from __future__ import annotations

import math
from typing import Any, List

import numpy as np

from .attributes import SUBGRAPH_ATTR, UnknownTensorValue
from .types import Type


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


def _c_octal(byte: int) -> str:
    """printQuotedString's escape of a non-printable byte: 3 'octal' digits of a signed char."""
    c = byte - 256 if byte >= 128 else byte
    digits = []
    for _ in range(2):
        digits.append(int(math.fmod(c, 8)))
        c = int(c / 8)  # C++ division truncates toward zero
    digits.append(c)
    return "\\" + "".join(chr(48 + d) for d in reversed(digits))


_QUOTE_ESCAPES = {ord("\\"): "\\\\", ord("'"): "\\'", ord('"'): '\\"', 7: "\\a", 8: "\\b",
                  12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def format_string(value: str) -> str:
    """A string as c10::printQuotedString writes it (byte-wise, over UTF-8)."""
    out = ['"']
    for byte in value.encode("utf-8", "surrogateescape"):
        if byte in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[byte])
        elif 0x1F < byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(_c_octal(byte))
    out.append('"')
    return "".join(out)


def format_attr_value(value: Any, nested: bool = False) -> str:
    """An attribute value as PyTorch prints it.  Top-level bools are ints (``value=1``); inside
    lists and tuples (IValues) they print ``True``/``False``, and None prints ``None``."""
    if isinstance(value, bool):
        return ("True" if value else "False") if nested else str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, str):
        return format_string(value)
    if value is None and nested:
        return "None"
    if isinstance(value, UnknownTensorValue):
        return value.text
    if isinstance(value, np.ndarray):
        if value.size != 1:  # PyTorch prints any one-element tensor as {v}, whatever its rank
            return "<Tensor>"
        v = value.reshape(()).item()
        if isinstance(v, bool):
            return "{%d}" % int(v)
        if isinstance(v, int):
            return "{%d}" % v
        return "{%g}" % v
    if isinstance(value, Type):
        return str(value)
    if isinstance(value, tuple):
        inner = ", ".join(format_attr_value(v, True) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_attr_value(v, True) for v in value) + "]"
    raise TypeError(f"cannot print attribute value {value!r}")


_PYTHON_TYPE_NAMES = {"int": "int", "float": "float", "bool": "bool", "str": "str",
                      "Tensor": "Tensor"}


def _node_attr(node, name: str, value: Any) -> str:
    """An attribute as PyTorch prints it on ``node``: an empty list constant carries its type,
    ``annotate(List[int], [])``."""
    if name == "value" and isinstance(value, list) and not value and node.outputs:
        t = node.outputs[0].type
        elem = getattr(t, "elem", None)
        if elem is not None and str(elem) in _PYTHON_TYPE_NAMES:
            return f"annotate(List[{_PYTHON_TYPE_NAMES[str(elem)]}], [])"
    return format_attr_value(value)


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
            attr_text = "[" + ", ".join(f"{k}={_node_attr(node, k, v)}" for k, v in attrs.items()) + "]"
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

    def graph(self, graph, prefix: str = "") -> None:
        """Like torch's Graph::print: the body, then one ``with kind_N = graph(...)`` section per
        fusion group, each followed at once by its own sections (each graph numbers from 0)."""
        outer, self.subgraphs = self.subgraphs, []
        self.lines.append(prefix + self.graph_header(graph))
        self.block_body(graph.block, 2)
        self.lines.append(f"  return ({_value_list(graph.outputs)})")
        for name, sub in self.subgraphs:
            self.graph(sub, f"with {name} = ")
        self.subgraphs = outer


def print_graph(graph) -> str:
    p = _Printer()
    p.graph(graph)
    return "\n".join(p.lines) + "\n"
