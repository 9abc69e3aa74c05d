"""The ``prim::FusionGroup`` node a partition's group of nodes becomes (``build_group``), and
the constants its members leave dead (``remove_dead_constants``).  Scalar constants and
constant int lists (a reduction's dims) are cloned into the subgraph; every other value read
from outside is an input of the group::

    %y : Float(4) = prim::FusionGroup_0(%x)
    with prim::FusionGroup_0 = graph(%x.1 : Float(4)):
      %1 : float = prim::Constant[value=2.]()
      %y.1 : Float(4) = aten::mul(%x.1, %1)
      return (%y.1)
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import numpy as np

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Graph, Node, Value

FUSION_GROUP = "prim::FusionGroup"
CONSTANT_CHUNK = "prim::ConstantChunk"
FUSED_CONCAT = "prim::FusedConcat"  # concat_outputs.py


def _foldable_constant(value: Value) -> bool:
    """Scalar (and 0-d tensor) constants are cloned into the subgraph; others are inputs."""
    if not value.is_constant():
        return False
    v = value.constant_value()
    return not (isinstance(v, np.ndarray) and v.ndim != 0)


def _constant_list(value: Value) -> bool:
    """``prim::ListConstruct`` of int constants (a reduction's dims): folded like a constant."""
    node = value.node
    return node is not None and node.kind == "prim::ListConstruct" and all(
        isinstance(i.constant_value(), int) for i in node.inputs)


def reads_only_constants(members: List[Node]) -> bool:
    """Whether ``members`` read nothing from outside but constants (one value, no array)."""
    inside = set(members)
    return all(v.node in inside or v.is_constant() or _constant_list(v)
               for m in members for v in m.inputs)


def build_group(members: List[Node], users: Dict[Value, List[Node]],
                 returned: Set[Value]) -> Node:
    """A ``prim::FusionGroup`` node for ``members`` (in topological order).  The members'
    outputs used outside become the group node's outputs (the same Value objects, so their
    outside uses stay as they are)."""
    member_set = set(members)
    sub = Graph()
    env: Dict[Value, Value] = {}
    inputs: List[Value] = []
    n_constants = 0

    def new_value(v: Value, node: Optional[Node] = None) -> Value:
        nv = Value(v.name, v.type, node=node, block=None if node is not None else sub.block)
        sub.claim_name(v.name)
        return nv

    def lookup(v: Value) -> Value:
        nonlocal n_constants
        if v in env:
            return env[v]
        if _foldable_constant(v) or _constant_list(v):
            const = v.node
            attrs = dict(const.attrs) if const.kind == "prim::Constant" else {
                "value": [i.constant_value() for i in const.inputs]}
            node = Node("prim::Constant", [], attrs, const.source)
            node.outputs.append(new_value(v, node))
            sub.block.insert(n_constants, node)  # constants first, as PyTorch prints them
            n_constants += 1
            env[v] = node.outputs[0]
        else:
            param = new_value(v)
            sub.block.params.append(param)
            inputs.append(v)
            env[v] = param
        return env[v]

    outputs: List[Value] = []
    for m in members:
        if m.kind == "prim::ListUnpack" and m.inputs[0].node in member_set:
            continue  # emitted with its chunk
        if m.kind == "aten::chunk":
            unpack = users[m.output()][0]
            attrs = {"chunks": m.inputs[1].constant_value(), "dim": m.inputs[2].constant_value()}
            node = Node(CONSTANT_CHUNK, [lookup(m.inputs[0])], attrs, m.source)
            produced = unpack.outputs
        else:
            node = Node(m.kind, [lookup(v) for v in m.inputs], dict(m.attrs), m.source)
            produced = m.outputs
        for out in produced:
            nv = new_value(out, node)
            node.outputs.append(nv)
            env[out] = nv
            if out in returned or any(u not in member_set for u in users[out]):
                outputs.append(out)
        sub.block.append(node)
    sub.set_outputs([env[v] for v in outputs])
    group = Node(FUSION_GROUP, inputs, {SUBGRAPH_ATTR: sub})
    for out in outputs:  # re-home the outer values: their outside uses stay valid
        out.node = group
        group.outputs.append(out)
    return group


def remove_dead_constants(graph: Graph, touched: Set[Value]) -> None:
    """Constants (and constant dim lists) whose every use was folded into groups are dead now."""
    lists = {v.node for v in touched if _constant_list(v) and not v.uses}
    for block in graph.all_blocks():
        for v in block.returns:
            lists.discard(v.node)
    for node in lists:
        for i in node.inputs:
            i.uses = [u for u in i.uses if u is not node]
            touched.add(i)
    dead = {v.node for v in touched if v.is_constant() and not v.uses} | lists
    if not dead:
        return
    for block in graph.all_blocks():
        for v in block.returns:
            dead.discard(v.node)
    for block in graph.all_blocks():
        block.nodes = [n for n in block.nodes if n not in dead]
