"""Splice the subgraphs of PyTorch's own fusion groups into the graph before torchlike fuses.

A graph printed after PyTorch's executor ran holds its fusers' groups
(``prim::TensorExprGroup_0(%41)`` with ``with prim::TensorExprGroup_0 = graph(...)``).  They
would run as written (the interpreter runs their subgraphs), but torchlike's partitioner makes
its own groups, so before fusion each such node is replaced by its subgraph's nodes, reading
the node's inputs; the group's outputs become the copies' outputs::

    %s : Float(5, 7) = prim::TensorExprGroup_0(%41)      # with ... = graph(%x): aten::sigmoid
->  %s.1 : Float(5, 7) = aten::sigmoid(%41)
"""
from __future__ import annotations

from typing import Dict

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Value
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
        count += 1
    return count
