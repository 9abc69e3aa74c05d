"""Tuple peepholes: a tuple built and taken apart in the same graph is never built.

Inlined module methods return tuples that their callers unpack right away (``y, h =
self.cell(x, h)``); left in place, the pack and unpack sit between elementwise producers and
consumers.  As TorchScript's ``LowerSimpleTuples`` does, each unpack or constant index of a
``prim::TupleConstruct`` is replaced by the items themselves (dead-code elimination then drops
the construct if nothing else uses it)::

    %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
    %y : Tensor, %h : Tensor = prim::TupleUnpack(%t)      # uses of %y, %h become %a, %b
    %z : Tensor = prim::TupleIndex(%t, %one)              # becomes %b
"""
from __future__ import annotations

from ..ir.graph import Graph
from .utils import replace_all_uses, returned_values, subgraphs

__all__ = ["simplify_tuples"]


def simplify_tuples(graph: Graph) -> Graph:
    """Forward the items of constructed tuples to their unpacks and constant indexings, in
    place (fusion subgraphs too); returns ``graph``."""
    returned = returned_values(graph)
    for node in list(graph.all_nodes()):
        if node.kind not in ("prim::TupleUnpack", "prim::TupleIndex") or not node.inputs:
            continue
        src = node.inputs[0].node
        if src is None or src.kind != "prim::TupleConstruct":
            continue
        items = src.inputs
        if node.kind == "prim::TupleUnpack":
            if len(node.outputs) != len(items):
                continue
            pairs = list(zip(node.outputs, items))
        else:
            i = node.inputs[1].constant_value() if len(node.inputs) > 1 else None
            if not isinstance(i, int) or isinstance(i, bool) or not -len(items) <= i < len(items):
                continue
            pairs = [(node.outputs[0], items[i])]
        for old, new in pairs:
            if old.type != new.type and not (old.type.is_tensor() and new.type.is_tensor()):
                break
        else:
            for old, new in pairs:
                replace_all_uses(old, new, graph, returned)
    for sub in subgraphs(graph):
        simplify_tuples(sub)
    return graph
