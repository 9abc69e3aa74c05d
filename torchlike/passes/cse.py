"""Common subexpression elimination: a pure node identical to an earlier one is replaced by it.

Two nodes are identical when they have the same kind, the same input values, equal attributes
and the same output types.  Constants are compared by value *and* type (``1`` and ``1.`` and
``True`` stay distinct; so do ``0.`` and ``-0.``; a NaN matches a NaN).  Scoping follows
dominance: a node in an inner block may be replaced by an equal node from an enclosing block that
precedes it, never the reverse, and siblings (the two branches of an ``If``) never share.  Nodes
with blocks or subgraphs are left alone, and a node with side effects ends every pending match
(it might mutate an input), except for constants::

    %1 : Tensor = aten::mul(%x, %x)
    %2 : Tensor = aten::mul(%x, %x)      # replaced by %1
    %3 : Tensor = aten::add(%1, %2, %c)  # becomes aten::add(%1, %1, %c)
"""
from __future__ import annotations

import math
import struct
from typing import Any, Dict, List, Set

import numpy as np

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph
from .utils import is_pure, replace_all_uses, returned_values, subgraphs


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Merge duplicate pure nodes of ``graph`` in place (fusion subgraphs too); returns it."""
    _cse_block(graph, graph.block, [], [], {}, returned_values(graph))
    for sub in subgraphs(graph):
        eliminate_common_subexpressions(sub)
    return graph


def value_key(value: Any) -> Any:
    """A hashable key equal for two attribute values exactly when they are the same value of the
    same Python type (floats by bit pattern, with every NaN alike; arrays by dtype, shape, bytes)."""
    if isinstance(value, float):
        if math.isnan(value):
            return (float, "nan")
        return (float, struct.pack("<d", value))
    if isinstance(value, (bool, int, str)) or value is None:
        return (type(value), value)
    if isinstance(value, np.ndarray):
        return (np.ndarray, str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(value_key(v) for v in value))
    if isinstance(value, np.generic):
        return value_key(np.asarray(value))
    try:
        hash(value)
        return (type(value), value)
    except TypeError:
        return (type(value), id(value))  # unhashable and unknown: only equal to itself


def _node_key(node) -> Any:
    attrs = tuple(sorted((k, value_key(v)) for k, v in node.attrs.items()))
    return (node.kind, tuple(id(v) for v in node.inputs), attrs,
            tuple(o.type for o in node.outputs))


def _lookup(scopes: List[Dict], key):
    for table in reversed(scopes):
        hit = table.get(key)
        if hit is not None:
            return hit
    return None


def _cse_block(graph: Graph, block: Block, scopes: List[Dict], const_scopes: List[Dict],
               purity: Dict[int, bool], returned: Set[int]) -> None:
    scopes = scopes + [{}]
    const_scopes = const_scopes + [{}]
    for node in list(block.nodes):
        if node.blocks:
            for b in node.blocks:
                _cse_block(graph, b, scopes, const_scopes, purity, returned)
            if not is_pure(node, purity):
                for table in scopes:
                    table.clear()
            continue
        if SUBGRAPH_ATTR in node.attrs or not node.outputs:
            if not is_pure(node, purity):
                for table in scopes:
                    table.clear()
            continue
        if not is_pure(node, purity):
            # It may mutate what earlier nodes read: nothing before it may stand in for a later
            # node.  Constants cannot be mutated through the graph, so they stay.
            for table in scopes:
                table.clear()
            continue
        try:
            key = _node_key(node)
            hash(key)
        except TypeError:
            continue
        tables = const_scopes if node.kind == "prim::Constant" else scopes
        twin = _lookup(tables, key)
        if twin is None:
            tables[-1][key] = node
            continue
        for old, new in zip(node.outputs, twin.outputs):
            replace_all_uses(old, new, graph, returned)
        block.remove(node)
