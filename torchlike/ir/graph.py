"""The graph IR: ``Graph`` owns a top ``Block``; blocks hold ``Node``s; nodes produce ``Value``s.

Modeled on TorchScript (torch/csrc/jit/OVERVIEW.md).  Values are SSA and typed.  A node's
``kind`` is a namespaced string (``aten::mul``, ``prim::If``); its attributes are a dict; control
flow nodes own sub-blocks; a ``prim::FusionGroup`` keeps its body in ``attrs["Subgraph"]``.
Building a graph by hand::

    g = Graph()
    x = g.add_input("x", TensorType("float32", (2, 3)))
    two = g.insert_constant(2.0)
    y = g.create("aten::mul", [x, two], [x.type])
    g.set_outputs([y.output()])
    print(g)
    # graph(%x : Float(2, 3)):
    #   %1 : float = prim::Constant[value=2.]()
    #   %2 : Float(2, 3) = aten::mul(%x, %1)
    #   return (%2)
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Sequence

from .printer import print_graph
from .types import TENSOR, Type, type_of_python_value

_SUFFIX = re.compile(r"^(.*)\.(\d+)$")


class Value:
    """An SSA value: a node output or a block parameter."""

    __slots__ = ("name", "type", "node", "block", "uses")

    def __init__(self, name: str, type: Type, node: Optional["Node"] = None,
                 block: Optional["Block"] = None):
        self.name = name
        self.type = type
        self.node = node      # producing node, or None for a block parameter
        self.block = block    # owning block for a parameter
        self.uses: List["Node"] = []  # consumer nodes, one entry per use (block returns excluded)

    def __repr__(self) -> str:
        return f"%{self.name}"

    def replace_all_uses_with(self, other: "Value") -> None:
        graph = self.owning_graph()
        for node in self.uses:  # one entry per use, so a node using us twice is visited twice
            node.inputs[node.inputs.index(self)] = other
            other.uses.append(node)
        self.uses = []
        for block in graph.all_blocks():
            block.returns = [other if v is self else v for v in block.returns]

    def owning_graph(self) -> "Graph":
        block = self.node.owning_block if self.node is not None else self.block
        return block.graph

    def constant_value(self, default: Any = None) -> Any:
        """The value of a ``prim::Constant`` output, else ``default``."""
        if self.node is not None and self.node.kind == "prim::Constant":
            return self.node.attrs.get("value")
        return default

    def is_constant(self) -> bool:
        return self.node is not None and self.node.kind == "prim::Constant"


class Node:
    """One operation.  ``source`` is the trailing ``file.py:LINE:COL`` comment, if any."""

    __slots__ = ("kind", "inputs", "outputs", "attrs", "blocks", "owning_block", "source")

    def __init__(self, kind: str, inputs: Sequence[Value], attrs: Optional[Dict[str, Any]] = None,
                 source: Optional[str] = None):
        self.kind = kind
        self.inputs: List[Value] = list(inputs)
        self.outputs: List[Value] = []
        self.attrs: Dict[str, Any] = dict(attrs or {})
        self.blocks: List[Block] = []
        self.owning_block: Optional[Block] = None
        self.source = source
        for v in self.inputs:
            v.uses.append(self)

    def output(self) -> Value:
        assert len(self.outputs) == 1, f"{self.kind} has {len(self.outputs)} outputs"
        return self.outputs[0]

    @property
    def graph(self) -> "Graph":
        return self.owning_block.graph

    def add_block(self) -> "Block":
        block = Block(self.owning_block.graph if self.owning_block else None, self)
        self.blocks.append(block)
        return block

    def replace_input(self, index: int, value: Value) -> None:
        old = self.inputs[index]
        old.uses.remove(self)
        self.inputs[index] = value
        value.uses.append(self)

    def describe(self) -> str:
        """``aten::mul (%3) at make_corpus.py:12:0``: how errors name a node."""
        outs = ", ".join(repr(v) for v in self.outputs)
        where = f" at {self.source}" if self.source else ""
        return f"{self.kind}({outs}){where}"

    def __repr__(self) -> str:
        return f"<Node {self.describe()}>"


class Block:
    """An ordered list of nodes with parameters (block inputs) and returns (block outputs)."""

    def __init__(self, graph: Optional["Graph"], owning_node: Optional[Node] = None):
        self.graph = graph
        self.owning_node = owning_node
        self.params: List[Value] = []
        self.nodes: List[Node] = []
        self.returns: List[Value] = []

    def add_param(self, name: Optional[str] = None, type: Type = TENSOR) -> Value:
        value = Value(self.graph.fresh_name(name), type, block=self)
        self.params.append(value)
        return value

    def append(self, node: Node) -> Node:
        node.owning_block = self
        for b in node.blocks:
            b._set_graph(self.graph)
        self.nodes.append(node)
        return node

    def insert(self, index: int, node: Node) -> Node:
        node.owning_block = self
        for b in node.blocks:
            b._set_graph(self.graph)
        self.nodes.insert(index, node)
        return node

    def remove(self, node: Node) -> None:
        """Unlink ``node`` (its outputs must be unused)."""
        for v in node.inputs:
            v.uses.remove(node)
        self.nodes.remove(node)
        node.owning_block = None

    def _set_graph(self, graph: "Graph") -> None:
        self.graph = graph
        for n in self.nodes:
            for b in n.blocks:
                b._set_graph(graph)


class Graph:
    """A function: a top block whose params are the graph inputs and returns its outputs."""

    def __init__(self):
        self._names: set = set()
        self._next_id = 0
        self.block = Block(self)

    # -- naming ---------------------------------------------------------------------------
    def fresh_name(self, hint: Optional[str] = None) -> str:
        """A name unique in this graph: ``hint`` if free, else ``hint.N``; numbers if no hint."""
        if hint is not None and hint not in self._names and not hint.isdigit():
            self._names.add(hint)
            return hint
        if hint is None or hint.isdigit():
            while str(self._next_id) in self._names:
                self._next_id += 1
            name = str(self._next_id)
        else:
            m = _SUFFIX.match(hint)
            base = m.group(1) if m else hint
            i = 1
            while f"{base}.{i}" in self._names:
                i += 1
            name = f"{base}.{i}"
        self._names.add(name)
        return name

    def claim_name(self, name: str) -> None:
        self._names.add(name)

    # -- structure ------------------------------------------------------------------------
    @property
    def inputs(self) -> List[Value]:
        return self.block.params

    @property
    def outputs(self) -> List[Value]:
        return self.block.returns

    @property
    def nodes(self) -> List[Node]:
        return self.block.nodes

    def add_input(self, name: Optional[str] = None, type: Type = TENSOR) -> Value:
        return self.block.add_param(name, type)

    def set_outputs(self, values: Sequence[Value]) -> None:
        self.block.returns = list(values)

    def create(self, kind: str, inputs: Sequence[Value], output_types: Sequence[Type] = (TENSOR,),
               attrs: Optional[Dict[str, Any]] = None, block: Optional[Block] = None,
               names: Optional[Sequence[Optional[str]]] = None, source: Optional[str] = None,
               index: Optional[int] = None) -> Node:
        """Make a node with fresh outputs and append it to ``block`` (the top block by default),
        or insert it at ``index`` in that block."""
        node = Node(kind, inputs, attrs, source)
        names = list(names) if names is not None else [None] * len(output_types)
        for t, name in zip(output_types, names):
            node.outputs.append(Value(self.fresh_name(name), t, node=node))
        target = block if block is not None else self.block
        if index is None:
            target.append(node)
        else:
            target.insert(index, node)
        return node

    def insert_constant(self, value: Any, type: Optional[Type] = None,
                        block: Optional[Block] = None, index: Optional[int] = None) -> Value:
        """A ``prim::Constant`` output holding ``value`` (inserted at the start by default)."""
        attrs = {} if value is None else {"value": value}
        t = type if type is not None else type_of_python_value(value)
        return self.create("prim::Constant", [], [t], attrs, block=block,
                           index=0 if index is None else index).output()

    # -- traversal ------------------------------------------------------------------------
    def all_blocks(self) -> Iterator[Block]:
        """Every block, outer first (subgraphs of fusion groups are separate graphs)."""
        stack = [self.block]
        while stack:
            block = stack.pop()
            yield block
            for n in block.nodes:
                stack.extend(reversed(n.blocks))

    def all_nodes(self) -> Iterator[Node]:
        for block in self.all_blocks():
            yield from list(block.nodes)

    def copy(self) -> "Graph":
        """A deep copy (fusion subgraphs included), with the same value names."""
        return clone_graph(self)

    def __str__(self) -> str:
        return print_graph(self)

    def __repr__(self) -> str:
        return f"<Graph with {len(self.inputs)} inputs, {sum(1 for _ in self.all_nodes())} nodes>"


def clone_graph(graph: Graph) -> Graph:
    """Deep-copy ``graph``: nodes, blocks, types, names, attributes and fusion subgraphs."""
    new = Graph()
    new._names = set(graph._names)
    new._next_id = graph._next_id
    env: Dict[Value, Value] = {}

    def copy_block(src: Block, dst: Block) -> None:
        for p in src.params:
            v = Value(p.name, p.type, block=dst)
            dst.params.append(v)
            env[p] = v
        for n in src.nodes:
            attrs = {k: (clone_graph(a) if isinstance(a, Graph) else a) for k, a in n.attrs.items()}
            m = Node(n.kind, [env[v] for v in n.inputs], attrs, n.source)
            for o in n.outputs:
                nv = Value(o.name, o.type, node=m)
                m.outputs.append(nv)
                env[o] = nv
            dst.append(m)
            for b in n.blocks:
                nb = Block(new, m)
                m.blocks.append(nb)
                copy_block(b, nb)
        dst.returns = [env[v] for v in src.returns]

    copy_block(graph.block, new.block)
    return new
