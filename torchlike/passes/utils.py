"""Small graph-editing helpers the passes share."""
from __future__ import annotations

from typing import Dict, Iterator, Optional, Set

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Block, Graph, Node, Value
from ..ops import registry

CONTROL_FLOW = ("prim::If", "prim::Loop")


def is_pure(node: Node, cache: Dict[int, bool] = None) -> bool:
    """True when ``node`` has no side effects: removable if unused, mergeable with a twin.

    Constants are pure; ``prim::If``/``prim::Loop`` are pure when every node inside is; a fusion
    group is pure when its subgraph is; a registry op says so in its entry; an unknown kind is
    assumed to have side effects."""
    if cache is not None and id(node) in cache:
        return cache[id(node)]
    kind = node.kind
    if kind == "prim::Constant":
        pure = True
    elif node.blocks:
        pure = kind in CONTROL_FLOW and all(is_pure(n, cache) for b in node.blocks
                                            for n in b.nodes)
    elif isinstance(node.attrs.get(SUBGRAPH_ATTR), Graph):
        pure = all(is_pure(n, cache) for n in node.attrs[SUBGRAPH_ATTR].all_nodes())
    else:
        op = registry.lookup(kind)
        pure = op is not None and op.pure
        # a list something appends to is a fresh object per evaluation: not a constant, not
        # merged with a twin
        if pure and node.outputs and _mutated(node.outputs[0]):
            pure = False
    if cache is not None:
        cache[id(node)] = pure
    return pure


def _mutated(v: Value) -> bool:
    for user in v.uses:
        op = registry.lookup(user.kind)
        if op is not None and op.mutates_list and user.inputs and user.inputs[0] is v:
            return True
    return False


def returned_values(graph: Graph) -> Set[int]:
    """Ids of the values some block of ``graph`` returns (for ``replace_all_uses``)."""
    return {id(v) for b in graph.all_blocks() for v in b.returns}


def replace_all_uses(old: Value, new: Value, graph: Graph,
                     returned: Optional[Set[int]] = None) -> None:
    """Make every use of ``old`` (node inputs and block returns) a use of ``new``, keeping
    ``uses`` lists exact (a node that uses ``old`` twice gains two uses of ``new``).
    ``returned`` (from ``returned_values``, kept up to date here) spares a walk over every
    block when ``old`` is returned by none."""
    seen = set()
    for node in old.uses:
        if id(node) in seen:
            continue
        seen.add(id(node))
        count = 0
        for i, v in enumerate(node.inputs):
            if v is old:
                node.inputs[i] = new
                count += 1
        new.uses.extend([node] * count)
    old.uses = []
    if returned is not None:
        if id(old) not in returned:
            return
        returned.add(id(new))
    for block in graph.all_blocks():
        if any(v is old for v in block.returns):
            block.returns = [new if v is old else v for v in block.returns]


def unlink_inputs(node: Node) -> None:
    """Drop ``node``'s inputs, removing it from their ``uses`` lists."""
    for v in node.inputs:
        v.uses.remove(node)
    node.inputs = []


def subgraphs(graph: Graph) -> Iterator[Graph]:
    """The fusion subgraphs held directly by ``graph``'s nodes (any block)."""
    for node in graph.all_nodes():
        sub = node.attrs.get(SUBGRAPH_ATTR)
        if isinstance(sub, Graph):
            yield sub


def block_index(block: Block, node: Node) -> int:
    for i, n in enumerate(block.nodes):
        if n is node:
            return i
    raise ValueError(f"{node.describe()} is not in its block")


def clone_node(graph: Graph, node: Node, env: Dict[Value, Value]) -> Node:
    """A copy of ``node`` (nested blocks too) reading ``env``'s values in place of its own."""
    new = Node(node.kind, [env.get(v, v) for v in node.inputs], dict(node.attrs), node.source)
    for out in node.outputs:
        env[out] = Value(graph.fresh_name(out.name), out.type, node=new)
        new.outputs.append(env[out])
    for b in node.blocks:
        nb = Block(graph, new)
        new.blocks.append(nb)
        for p in b.params:
            env[p] = Value(graph.fresh_name(p.name), p.type, block=nb)
            nb.params.append(env[p])
        for inner in b.nodes:
            nb.append(clone_node(graph, inner, env))
        nb.returns = [env.get(v, v) for v in b.returns]
    return new
