"""Order edges that keep reads and writes of a tensor in program order while the partitioner
moves nodes.

Data edges alone would let a group that reads ``%x`` move below an ``aten::add_(%x, ...)``
that ``passes/remove_mutation.py`` had to leave in place (``%x`` a graph input, or aliased)::

    %a : Tensor = aten::mul(%x, %c)          # reads x
    %x.1 : Tensor = aten::add_(%x, %one, %k)  # writes x: every node above stays above it,
    %b : Tensor = aten::mul(%a, %d)           #           every node below stays below it

The partitioner adds these edges to its successor relation, so a merge across the write is a
cycle and is refused.  A list's writers (``aten::append`` in a scripted loop) order the same
way: ``aten::stack(%ys)`` never moves above the loop that fills ``%ys``.
"""
from __future__ import annotations

from typing import Dict, List, Sequence

from ..ir.graph import Node
from ..ops import registry
from ..ops.inplace import mutates

__all__ = ["mutation_order", "writes"]


def writes(node: Node) -> bool:
    """True if ``node``, or a node in one of its blocks, writes into a tensor or a list."""
    if mutates(node.kind):
        return True
    op = registry.lookup(node.kind)
    if op is not None and op.mutates_list:
        return True
    return any(writes(n) for b in node.blocks for n in b.nodes)


def mutation_order(nodes: Sequence[Node]) -> Dict[Node, List[Node]]:
    """{node: the nodes that must come after it} for a block's ``nodes`` in program order:
    each node before a writer -> that writer, each writer -> the nodes up to and including the
    next writer (paths are transitive, so the nearest writer suffices)."""
    marks = [i for i, n in enumerate(nodes) if writes(n)]
    edges: Dict[Node, List[Node]] = {}
    start = 0
    for w in marks + [len(nodes)]:
        segment = list(nodes[start:w + 1])  # the nodes after the last writer, and this one
        if start > 0:
            edges.setdefault(nodes[start - 1], []).extend(segment)
        if w < len(nodes):
            for node in segment[:-1]:
                edges.setdefault(node, []).append(nodes[w])
        start = w + 1
    return edges
