"""Splice the subgraphs of PyTorch's own fusion groups into the graph before torchlike fuses.

A graph printed after PyTorch's executor ran holds its fusers' groups
(``prim::TensorExprGroup_0(%41)`` with ``with prim::TensorExprGroup_0 = graph(...)``).  They
would run as written (the interpreter runs their subgraphs), but torchlike's partitioner makes
its own groups, so before fusion each such node is replaced by its subgraph's nodes, reading
the node's inputs; the group's outputs become the copies' outputs::

    %s : Float(5, 7) = prim::TensorExprGroup_0(%41)      # with ... = graph(%x): aten::sigmoid
->  %s.1 : Float(5, 7) = aten::sigmoid(%41)

A ``prim::FusedConcat[dim=d](%a, %b)`` in such a subgraph (PyTorch's legacy fuser's, or
torchlike's own: ``fuser/concat_outputs.py``) becomes ``aten::cat([%a, %b], d)`` again, which
the partitioner absorbs into a group anew.
"""
from __future__ import annotations

from typing import Dict

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import TENSOR, ListType
from ..ops.executor_prims import SUBGRAPH_NODES
from .utils import clone_node


def inline_groups(graph: Graph) -> int:
    """Inline every ``SUBGRAPH_NODES`` node of ``graph`` (all blocks) in place; how many."""
    return sum(_inline_block(graph, b) for b in list(graph.all_blocks()))


def _inline_block(graph: Graph, block: Block) -> int:
    count = 0
    for node in list(block.nodes):
        if node.kind not in SUBGRAPH_NODES or SUBGRAPH_ATTR not in node.attrs:
            continue
        sub = node.attrs[SUBGRAPH_ATTR]
        env: Dict[Value, Value] = dict(zip(sub.inputs, node.inputs))
        index = block.nodes.index(node)
        copies = [clone_node(graph, inner, env) for inner in sub.nodes]
        for out, sub_out in zip(node.outputs, sub.outputs):
            out.replace_all_uses_with(env.get(sub_out, sub_out))
        block.remove(node)
        for i, copy in enumerate(copies):
            block.insert(index + i, copy)
        for copy in copies:
            if copy.kind == "prim::FusedConcat":
                fused_concat_as_cat(graph, copy)
        count += 1
    return count


def fused_concat_as_cat(graph: Graph, node: Node) -> None:
    """``prim::FusedConcat[dim=d](%a, %b)`` -> ``aten::cat(prim::ListConstruct(%a, %b), d)``,
    the same output value, in place (``node``'s block of ``graph``)."""
    block = node.owning_block
    pos = block.nodes.index(node)
    items = graph.create("prim::ListConstruct", node.inputs, [ListType(TENSOR)], block=block,
                         index=pos).output()
    dim = graph.insert_constant(int(node.attrs.get("dim", 0)), block=block, index=pos)
    cat = Node("aten::cat", [items, dim], {}, node.source)
    cat.outputs = node.outputs
    for out in cat.outputs:
        out.node = cat
    block.insert(block.nodes.index(node), cat)
    block.remove(node)
